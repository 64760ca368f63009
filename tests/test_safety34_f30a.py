"""Issue 28, hostile pass 30: h30a N1 (a TMPDIR that resolves to an --out folder not made yet is refused: a dangling
link to it, /proc/self/cwd/<new>, a link to a nested new --out; compare too), h30a N3 (the API judges the temporary
folder tempfile.gettempdir() will really use: tempfile.tempdir, set in code, against an out= not made yet, as an
absolute, relative or trailing-slash str, a Path, bytes (os.fsdecode) or a dangling link, and inside it), h30a m1 (a
TMPDIR naming a folder that is not there is said as what tempfile falls back past), h30a m3 (a tempfile.tempdir that
is missing, not a folder or no path at all is refused before the work naming tempfile.tempdir; a failed save with
tempfile.tempdir set names it, not TMPDIR).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner
from planner.cli.main import main
from planner.core.errors import DestinationError

ROOT = Path(__file__).resolve().parents[1]
QLORA = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")
COMPARE = str(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml")

_TAIL = ("temporary files (openpyxl's, the importer's check copy) would be made there, beside the reports. Set TMPDIR "
         "to a private folder of your own elsewhere (one made with mkdir -m 700), or unset it (then /tmp is used).")
_API_TAIL = ("temporary files (openpyxl's, the importer's check copy) would be made there, beside the reports. Set "
             "tempfile.tempdir to a private folder of your own elsewhere (one made with mkdir -m 700), or set it to "
             "None (then TMPDIR or /tmp is used).")


def _tmpdir(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    """TMPDIR=value (unset for None), TEMP and TMP unset, for an in-process run (tempfile.tempdir cleared)."""
    monkeypatch.setattr(tempfile, "tempdir", None)
    for var in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    if value is not None:
        monkeypatch.setenv("TMPDIR", value)


# ---- N1: TMPDIR reaching a new --out through a link ----

@pytest.mark.parametrize("setup, tmpdir, out", [
    ("dangling", "lnk3", "n3"),  # lnk3 -> n3, not made yet
    ("none", "/proc/self/cwd/n8", "n8"),  # a link on the way, not the last part
    ("nested", "l11", "real11/n11"),  # l11 -> real11/n11, n11 not made yet
])
def test_a_tmpdir_that_resolves_to_a_new_out_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         setup: str, tmpdir: str, out: str) -> None:
    monkeypatch.chdir(tmp_path)
    if setup == "dangling":
        os.symlink("n3", "lnk3")
    elif setup == "nested":
        os.mkdir("real11")
        os.symlink("real11/n11", "l11")
    _tmpdir(monkeypatch, tmpdir)
    r = CliRunner().invoke(main, ["plan", QLORA, "--out", out, "--format", "xlsx"])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"Error: the temporary folder {tmpdir} (TMPDIR) is the --out folder {out}: {_TAIL}\n"
    assert not os.path.lexists(tmp_path / out)  # refused before anything is made


def test_compare_refuses_a_tmpdir_link_to_its_new_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    os.symlink("n10", "l10")
    _tmpdir(monkeypatch, "l10")
    r = CliRunner().invoke(main, ["compare", COMPARE, "--out", "n10"])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"Error: the temporary folder l10 (TMPDIR) is the --out folder n10: {_TAIL}\n"
    assert not os.path.lexists(tmp_path / "n10")


def test_a_tmpdir_link_elsewhere_is_not_taken_for_the_new_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from planner.core import tempdir

    monkeypatch.chdir(tmp_path)
    os.mkdir("mine")
    os.symlink("mine", "lm")  # resolves to a folder beside the new --out, not to it
    os.symlink("n4/sub", "ls")  # into the new --out: not there once it is made, so tempfile would pass over it
    for value in ("lm", str(tmp_path / "n4x")):
        _tmpdir(monkeypatch, value)
        tempdir.refuse_temp_in(Path("n4"))  # no error
    # h39a m3: one resolving inside the new --out is said as inside it (the unusable-TMPDIR check after it said
    # "is not there ... Create it", and a folder made there is refused in turn)
    _tmpdir(monkeypatch, "ls")
    with pytest.raises(DestinationError) as err:
        tempdir.refuse_temp_in(Path("n4"))
    assert str(err.value).startswith("the temporary folder ls (TMPDIR) is inside the out= folder n4: "), err.value
    assert not os.path.lexists(tmp_path / "n4")


# ---- N3: tempfile.tempdir against an out= not made yet ----

def _refused_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, td: object, out: object) -> str:
    monkeypatch.chdir(tmp_path)
    _tmpdir(monkeypatch, None)
    monkeypatch.setattr(tempfile, "tempdir", td)
    said = None
    try:
        planner.plan(QLORA, out=out, format="xlsx")
    except DestinationError as exc:
        said = str(exc)
    assert tempfile.tempdir is td  # left as the caller set it
    assert said is not None
    return said


@pytest.mark.parametrize("td, out, shown_td, shown_out", [
    ("{abs}/ap4", "{abs}/ap4", "{abs}/ap4", "{abs}/ap4"),
    ("ap5", "ap5", "ap5", "ap5"),
    ("{abs}/ap6", Path("ap6"), "{abs}/ap6", "ap6"),
    ("ap7/", "ap7", "ap7", "ap7"),  # Path('ap7/') is shown as ap7
    (b"{abs}/ap9", "{abs}/ap9", "{abs}/ap9", "{abs}/ap9"),  # tempfile.gettempdir() fsdecodes bytes
    (Path("ap16"), "ap16", "ap16", "ap16"),
])
def test_the_api_refuses_tempfile_tempdir_naming_a_new_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          td: object, out: object, shown_td: str,
                                                          shown_out: str) -> None:
    base = str(tmp_path)
    if isinstance(td, str):
        td = td.format(abs=base)
    elif isinstance(td, bytes):
        td = td.replace(b"{abs}", os.fsencode(base))
    if isinstance(out, str):
        out = out.format(abs=base)
    said = _refused_api(tmp_path, monkeypatch, td, out)
    assert said == (f"the temporary folder {shown_td.format(abs=base)} (tempfile.tempdir) is the out= folder "
                    f"{shown_out.format(abs=base)}: {_API_TAIL}")
    assert os.listdir(tmp_path) == []  # nothing made


def test_the_api_refuses_tempfile_tempdir_linked_to_or_inside_a_new_out(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    os.symlink("n12", tmp_path / "l12")  # dangling until out= is made
    said = _refused_api(tmp_path, monkeypatch, "l12", "n12")
    assert said == f"the temporary folder l12 (tempfile.tempdir) is the out= folder n12: {_API_TAIL}"
    said = _refused_api(tmp_path, monkeypatch, "ap13/sub", "ap13")
    assert said.startswith("the temporary folder ap13/sub (tempfile.tempdir) is inside the out= folder ap13: ")
    assert sorted(os.listdir(tmp_path)) == ["l12"]


# ---- m1: a TMPDIR that names no folder ----

@pytest.mark.parametrize("kind, why", [("missing", "is not there"), ("file", "is not a folder")])
def test_the_systems_folder_says_which_tmpdir_it_falls_back_past(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 kind: str, why: str) -> None:
    from planner.core import tempdir

    system = tmp_path / "systmp"
    system.mkdir()
    given = tmp_path / "nonexist"
    if kind == "file":
        given.write_text("")
    _tmpdir(monkeypatch, str(given))
    monkeypatch.setattr(tempdir, "refuse_protected_temp", lambda: None)
    monkeypatch.setattr(tempdir, "_system_default", lambda: system)  # the system's own is this folder
    said = None
    try:
        tempdir.refuse_temp_in(system)
    except DestinationError as exc:
        said = str(exc)
    assert said is not None
    assert said.startswith(f"the temporary folder {system} (the system's: TMPDIR names {given}, which {why}) is the "
                           f"out= folder {system}: ")


# ---- m3: a tempfile.tempdir tempfile cannot use ----

@pytest.mark.parametrize("kind, why", [("missing", "is not there"), ("file", "is not a folder")])
def test_an_unusable_tempfile_tempdir_is_refused_before_the_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  kind: str, why: str) -> None:
    td = tmp_path / "td"
    if kind == "file":
        td.write_text("")
    said = _refused_api(tmp_path, monkeypatch, str(td), "ap10")
    assert said == (f"the temporary folder {td} (tempfile.tempdir) {why}: openpyxl's temporary files could not be made "
                    "there. Set tempfile.tempdir to a folder of your own that can be written, or to None (then TMPDIR "
                    "or /tmp is used).")
    assert not (tmp_path / "ap10").exists()  # before the work: out= not made


def test_a_tempfile_tempdir_holding_no_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said = _refused_api(tmp_path, monkeypatch, 3, "ap15")
    assert said == ("tempfile.tempdir holds a int, not a folder path: openpyxl's temporary files could not be made. "
                    "Set tempfile.tempdir to a folder path of your own, or to None (then TMPDIR or /tmp is used).")
    assert not (tmp_path / "ap15").exists()


def test_a_failed_save_names_tempfile_tempdir_when_that_was_set(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import openpyxl

    from planner.core.errors import OutputError

    td = tmp_path / "td"
    td.mkdir(mode=0o700)
    _tmpdir(monkeypatch, None)
    monkeypatch.setattr(tempfile, "tempdir", str(td))

    def save(self, target) -> None:  # the sheet writer's temporary file fails
        raise OSError(5, os.strerror(5))

    monkeypatch.setattr(openpyxl.Workbook, "save", save)
    out = tmp_path / "o"
    said = None
    try:
        planner.plan(QLORA, out=out, format="xlsx")
    except OutputError as exc:
        said = str(exc)
    assert said == (f"{out / 'qlora-7b-12gb.xlsx'}: cannot write the workbook ({os.strerror(5)}): openpyxl writes each "
                    f"sheet to a temporary file in {td} (the temporary folder, tempfile.tempdir) first, and that "
                    f"failed. Check {td}, or set tempfile.tempdir to another folder, and run again.")
