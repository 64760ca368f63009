"""A report set moved into place never loses a file saved meanwhile (issue 28, hostile pass 5A items 3 and 7).

An editor that saves by writing a temporary file and renaming it over the report, between planner's hash
check and its move, used to be overwritten (the kept link held the old report, which hashed as planner's).
Now each report is swapped into place (renameat2 RENAME_EXCHANGE) and what came out is hashed; a name
that held nothing is only filled if it still holds nothing (RENAME_NOREPLACE); a stale report is taken
away by a rename and hashed. Sources: Linux man-pages rename(2), "renameat2()".
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from planner.core import renames
from planner.core.atomic import shown_path, write_text
from planner.core.errors import OutputError
from planner.core.reportset import STAGING_MARK, STAGING_PREFIX, ReportSet

needs_swap = pytest.mark.skipif(renames._renameat2() is None, reason="no renameat2 in this C library")


def _save_by_rename(path: Path, text: str) -> None:
    """What an editor does on save: write a temporary file beside, then rename it over the file."""
    tmp = path.with_name(f".{path.name}.swp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _set(out: Path, files: dict[str, str], remove: tuple[str, ...] = ()) -> list[Path]:
    with ReportSet(out, set_name="s") as rs:
        for name, text in files.items():
            write_text(rs.path(name), text)
        for name in remove:
            rs.remove(name)
        return rs.commit()


def _staging(out: Path) -> list[str]:
    return [p for p in os.listdir(out) if p.startswith(STAGING_PREFIX)]


@needs_swap
def test_exchange_swaps_and_noreplace_refuses_an_existing_name(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("A")
    b.write_text("B")
    assert renames.exchange(a, b) is True
    assert (a.read_text(), b.read_text()) == ("B", "A")
    with pytest.raises(FileExistsError):
        renames.rename_noreplace(a, b)
    assert renames.rename_noreplace(a, tmp_path / "c") is True
    assert not a.exists() and (tmp_path / "c").read_text() == "B"


def test_without_renameat2_the_functions_say_so_and_change_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(renames, "_renameat2", lambda: None)
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("A")
    b.write_text("B")
    assert renames.exchange(a, b) is False and renames.rename_noreplace(a, tmp_path / "c") is False
    assert (a.read_text(), b.read_text()) == ("A", "B") and not (tmp_path / "c").exists()


@needs_swap
def test_a_save_by_rename_just_before_the_swap_is_put_back(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.json": "old json", "r.md": "old md"})
    real = renames.exchange
    saved: list = []

    def save_then_swap(a, b):
        if Path(b).name == "r.md" and not saved:
            saved.append(b)
            _save_by_rename(Path(b), "old md + MY NOTES")  # the hash check passed on "old md"
        return real(a, b)

    monkeypatch.setattr(renames, "exchange", save_then_swap)
    with pytest.raises(OutputError) as err:
        _set(out, {"r.json": "new json", "r.md": "new md"})
    message = str(err.value)
    assert message == (f"{out / 'r.md'}: was changed while planner was replacing it (an edit saved meanwhile); it "
                       "was put back with that change, and the rest of the previous set as it was: nothing was "
                       "replaced. Save your edit under another name (or move the file away) and run again.")
    assert (out / "r.md").read_text() == "old md + MY NOTES"
    assert (out / "r.json").read_text() == "old json"
    assert _staging(out) == []


@needs_swap
def test_a_file_created_under_a_new_reports_name_meanwhile_is_left(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.json": "old json"})
    real = renames.rename_noreplace

    def create_then_place(src, dst):
        if Path(dst) == out / "r.md":  # in --out, not in the staging folder (whose own rename never replaces: h33a N1)
            Path(dst).write_text("someone else's notes")
        return real(src, dst)

    monkeypatch.setattr(renames, "rename_noreplace", create_then_place)
    with pytest.raises(OutputError) as err:
        _set(out, {"r.json": "new json", "r.md": "new md"})
    message = str(err.value)
    assert message.startswith(f"{out / 'r.md'}: was created while planner was writing the reports (by another "
                              "program); it was left as it is"), message
    assert (out / "r.md").read_text() == "someone else's notes"
    assert (out / "r.json").read_text() == "old json"
    assert _staging(out) == []


def test_a_stale_report_saved_over_before_its_removal_is_put_back(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.csv": "old csv", "r.md": "old md"})
    real = os.rename

    def save_then_take(src, dst, *a, **k):
        if Path(src) == out / "r.md":
            _save_by_rename(out / "r.md", "MY md")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "rename", save_then_take)
    with pytest.raises(OutputError) as err:
        _set(out, {"r.csv": "new csv"}, remove=("r.md",))
    monkeypatch.setattr(os, "rename", real)
    assert "r.md: was changed while planner was replacing it" in str(err.value)
    assert (out / "r.md").read_text() == "MY md" and (out / "r.csv").read_text() == "old csv"
    assert _staging(out) == []


@needs_swap
def test_a_save_after_the_swap_is_kept_when_the_set_is_put_back(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "old a", "b.json": "old b"})
    real = renames.exchange
    calls: list = []

    def swap(a, b):
        calls.append(b)
        if len(calls) == 2:  # b cannot be moved; meanwhile someone saved over the new a.json
            _save_by_rename(out / "a.json", "MY a")
            raise OSError(errno.EIO, "Input/output error")
        return real(a, b)

    monkeypatch.setattr(renames, "exchange", swap)
    with pytest.raises(OutputError) as err:
        _set(out, {"a.json": "new a", "b.json": "new b"})
    message = str(err.value)
    staging = _staging(out)
    assert len(staging) == 1
    # the saved file, then planner's new b.json (staged, never moved: b.json failed), then the folder kept
    folder = out / staging[0]
    assert message.endswith(f"Another file that took the name a.json meanwhile is kept in {folder / 'a.json'}. "
                            f"Planner's new b.json of this run is in {folder} too. Planner removes nothing in "
                            f"{folder}."), message
    assert (out / "a.json").read_text() == "old a" and (out / "b.json").read_text() == "old b"
    assert (out / staging[0] / "a.json").read_text() == "MY a"
    assert not (out / staging[0] / STAGING_MARK).exists()  # never cleaned by a later run


def test_the_staging_folder_goes_even_when_the_tree_walk_cannot(tmp_path: Path, monkeypatch) -> None:
    import shutil

    out = tmp_path / "o"
    monkeypatch.setattr(shutil, "rmtree", lambda *a, **k: None)  # as under `ulimit -n 5` (EMFILE, errors ignored)
    _set(out, {"r.json": "one"})
    _set(out, {"r.json": "two"})
    assert _staging(out) == [] and (out / "r.json").read_text() == "two"


def test_a_staged_files_error_names_where_it_was_going() -> None:
    staged = Path("out") / f"{STAGING_PREFIX}abcd1234" / "r.csv"
    assert shown_path(staged) == Path("out/r.csv")
    assert shown_path(Path("out/r.csv")) == Path("out/r.csv")


# -- pass 5A item 9: openpyxl's temporary files never go into the shipped catalog ----------------------------

def test_a_tmpdir_inside_the_catalog_is_refused_before_openpyxl_writes(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    from click.testing import CliRunner

    from planner.cli.main import main
    from planner.core.protected import protected_folders

    catalog = [p for p in protected_folders() if p.name == "catalog"]
    if not catalog:
        pytest.skip("no shipped catalog beside the package (an installed wheel)")
    before = sorted(os.listdir(catalog[0]))
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    monkeypatch.setattr(tempfile, "tempdir", None)  # as in a fresh process: TMPDIR decides
    monkeypatch.setenv("TMPDIR", str(catalog[0]))
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(tmp_path / "o"), "--format", "xlsx"])
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: the temporary folder {catalog[0]} (TMPDIR) is inside planner's own catalog folder "
                        f"({catalog[0]}), where planner writes nothing, not even temporary files. Set TMPDIR to "
                        "another folder, e.g. TMPDIR=/tmp.\n"), r.stderr
    assert sorted(os.listdir(catalog[0])) == before
    assert not (tmp_path / "o" / "qlora-7b-12gb.xlsx").exists()
