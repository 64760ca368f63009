"""Issue 28, hostile pass 28: leftover staging folders, URLs and Windows paths as --out, owner hints, long paths.

Covers h28a N1 (a run from inside a killed run's ``.planner-staging-*`` folder with ``--out ..`` / ``out='..'``, or
with an ``--out`` written through that folder: the folder is the current folder, holds it, or lies on the output
folder's path as given, so it is left with a note saying why, and the run writes its set; before, planner removed
it and then failed with a false "No such file or directory"); m1 (any RFC 3986 ``scheme://`` as ``--out`` in plan,
compare, import-skypilot and calibrate, and as the API's ``out=``, refused as ``file://`` is, with a local path as the
hint; a Windows drive or network path, with the hint that planner takes a POSIX path); m3 (an --out, a folder above
it, calibrate's folder or TMPDIR that belongs to another user: the hint asks for a folder of the user's own, not for
a chmod the user cannot run and that would not help); m5 (a report path past PATH_MAX because of a long scenario
name: the same explanation and ``--out .`` hint as a deep ``--out``, naming the path's size).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import pytest

from planner.core.manifest import MANIFEST

_DEAD = ".planner-staging-abcd1234"
#: The note's words after why the folder is left (planner.core.inuse._LEFT), written out here.
_LEFT = ("so planner removed nothing there, though a stopped planner run may have left it; check it and remove it "
         "yourself from another folder.")


def _dead_staging(out: Path) -> Path:
    """A staging folder as a run killed after staging one report leaves it: mode 0700, its mark lists 'x.md'."""
    folder = out / _DEAD
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder, 0o700)
    line = json.dumps({"sha256": {"x.md": hashlib.sha256(b"staged\n").hexdigest()}, "bytes": {"x.md": 7}})
    (folder / ".planner-staging").write_text("planner staging folder 1\n" + json.dumps("x.md") + "\n" + line + "\n",
                                             encoding="utf-8")
    (folder / "x.md").write_text("staged\n", encoding="utf-8")
    return folder


def _write_set(out: Path | str, shown: Path | str | None = None) -> list[str]:
    """One report set 'plan x' (x.md) written into ``out``; returns the run's notes."""
    from planner.core.reportset import ReportSet

    with ReportSet(Path(out), set_name="plan x", shown=shown) as rs:
        rs.path("x.md").write_text("new\n", encoding="utf-8")
        rs.commit()
        return list(rs.notes)


def test_the_dead_staging_folder_that_is_the_current_folder_is_left_and_the_set_written(tmp_path, monkeypatch):
    out = tmp_path / "k2"
    folder = _dead_staging(out)
    monkeypatch.chdir(folder)
    notes = _write_set("..")
    assert folder.is_dir() and (folder / "x.md").read_text(encoding="utf-8") == "staged\n"  # nothing removed there
    assert (out / "x.md").read_text(encoding="utf-8") == "new\n" and (out / MANIFEST).is_file()
    assert notes == [f"Left ../{_DEAD}: it is the current folder, " + _LEFT]
    # from another folder, the next run removes it as a stopped run's leftover, as before
    monkeypatch.chdir(tmp_path)
    notes = _write_set("k2")
    assert not folder.exists() and notes[0].startswith(f"Removed k2/{_DEAD}, which a stopped planner run left")


def test_a_dead_staging_folder_holding_the_current_folder_is_left(tmp_path, monkeypatch):
    out = tmp_path / "k2"
    folder = _dead_staging(out)
    (folder / "sub").mkdir()
    monkeypatch.chdir(folder / "sub")
    notes = _write_set(out)  # an absolute --out: nothing of the path goes through the folder, the current folder does
    assert folder.is_dir() and (out / "x.md").read_text(encoding="utf-8") == "new\n"
    assert notes == [f"Left {folder}: it holds the current folder, " + _LEFT]


def test_a_dead_staging_folder_on_the_out_path_as_given_is_left(tmp_path, monkeypatch):
    out = tmp_path / "k2"
    folder = _dead_staging(out)
    monkeypatch.chdir(tmp_path)
    given = Path("k2") / _DEAD / ".."
    notes = _write_set(given)
    assert folder.is_dir() and (out / "x.md").read_text(encoding="utf-8") == "new\n"
    assert notes == [f"Left {given / _DEAD}: it is on the output folder's path as given, " + _LEFT]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_cli_run_from_inside_the_leftover_with_out_dotdot_writes_the_set(tmp_path, monkeypatch):
    from sky_helpers import run_cli

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "k2"
    folder = _dead_staging(out)
    monkeypatch.chdir(folder)
    rc, said = run_cli("plan", str(scenario), "--out", "..", "--format", "json")
    said = said.replace("\n  ", " ")
    assert rc == 0, said
    assert folder.is_dir() and (out / "qlora-7b-12gb.json").is_file()
    assert "Wrote ../qlora-7b-12gb.json" in said and "No such file" not in said
    assert f"Left ../{_DEAD}: it is the current folder, so planner removed nothing there" in said


# -- m1: any scheme:// URL, and a Windows path, as --out / out= --------------------------------------------------------

_ROOT = Path(__file__).resolve().parents[1]
_LOCAL_DIR = "Give --out a local folder's path, e.g. --out reports."


@pytest.mark.parametrize("url, scheme, folder", [("http://x/y", "http", "http:"), ("s3://bucket/x", "s3", "s3:"),
                                                 ("HTTPS://example.com/r", "HTTPS", "HTTPS:"),
                                                 ("git+ssh://h/r", "git+ssh", "git+ssh:")])
def test_a_url_of_any_scheme_is_refused_as_out_in_plan_and_the_api(tmp_path, monkeypatch, url, scheme, folder):
    from click.testing import CliRunner

    from planner import plan
    from planner.cli.main import main
    from planner.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", str(_ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--out", url,
                                  "--format", "md"])
    assert r.exit_code == 2, r.output
    problem = (f"is a URL ({scheme}://), but planner writes only local files, and a path is taken as written: it "
               f"would make a folder {folder!r} in the current folder")
    assert r.stderr == f"Error: --out: {url!r} {problem}. {_LOCAL_DIR}\n"
    with pytest.raises(InputError) as caught:
        plan(_ROOT / "scenarios" / "qlora-7b-12gb.yaml", out=url, format="md")
    assert str(caught.value).endswith(f"out={url!r} {problem}. Give out= a local folder's path, e.g. out='reports'.")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv", [["compare", "scenarios/compare-qlora-7b-12gb.yaml"],
                                  ["catalog", "import-skypilot", "nothing.csv"]])
def test_a_url_is_refused_as_out_in_compare_and_import_skypilot(tmp_path, monkeypatch, argv):
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(_ROOT)
    out = str(tmp_path / "x")  # never made: the refusal comes first
    r = CliRunner().invoke(main, [*argv, "--out", "ftp://h/c"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("Error: --out: 'ftp://h/c' is a URL (ftp://), but planner writes only local files")
    assert r.stderr.endswith(f" {_LOCAL_DIR}\n") and not os.path.lexists(out) and not os.path.lexists("ftp:")


def test_a_url_is_refused_as_calibrates_out_with_a_files_hint(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["calibrate", "--out", "http://x/cal.yaml"])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("Error: --out: 'http://x/cal.yaml' is a URL (http://), but planner writes only local files, "
                        "and a path is taken as written: it would make a folder 'http:' in the current folder. Give "
                        "--out a local file's path, e.g. --out ./calibration.yaml.\n")  # before the PyTorch check
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path, what, folder", [("C:\\reports", "a Windows path", "C:\\reports"),
                                                ("c:/reports", "a Windows path", "c:"),
                                                ("\\\\srv\\share\\r", "a Windows network path", "\\\\srv\\share\\r")])
def test_a_windows_path_as_out_gets_the_posix_hint(tmp_path, monkeypatch, path, what, folder):
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["plan", str(_ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--out", path,
                                  "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: --out: {path!r} looks like {what}, but planner takes a POSIX path here (folders "
                        "joined by '/'; a '\\' is part of a name; under WSL, drive C: is /mnt/c): it would make a "
                        f"folder {folder!r} in the current folder. {_LOCAL_DIR}\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path, expected", [("http:x", None), ("reports/http://x", None), ("1http://x", None),
                                            ("my-http+v2.0://x", "is a URL (my-http+v2.0://)"),
                                            ("a://b", "looks like a Windows path")])
def test_only_a_leading_rfc3986_scheme_or_a_drive_is_taken_for_a_url(path, expected):
    from planner.core.outpath import url_problem

    # a scheme is a letter, then letters, digits, '+', '-', '.' (RFC 3986 3.1); one letter and ':/' is a drive
    got = url_problem(path)
    assert got is None if expected is None else got[0].startswith(expected)


# -- m3: another user's --out, or a folder above it: a hint the user can follow ---------------------------------------

_SWAP = ("a folder or link swapped in there could make planner remove or overwrite files elsewhere, so it writes "
         "nothing there.")
_NOT_YOURS = "chmod cannot change another user's folder, and its sticky bit would not keep its owner out."


def _theirs(folder: Path, mode: int) -> Path:
    """``folder`` made, given uid 1 (daemon), with ``mode``; skips the test where this process cannot chown."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    folder.mkdir(parents=True)
    os.chown(folder, 1, 1)
    folder.chmod(mode)
    return folder


@pytest.mark.parametrize("mode", [0o755, 0o1777])  # sticky already, as /tmp: chmod +t would change nothing
def test_another_users_out_asks_for_a_folder_of_ones_own(tmp_path, mode):
    from click.testing import CliRunner

    from planner import plan
    from planner.cli.main import main
    from planner.core.errors import DestinationError

    out = _theirs(tmp_path / "theirs", mode)
    scenario = _ROOT / "scenarios" / "qlora-7b-12gb.yaml"
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "md"])
    assert r.exit_code == 2, r.output
    why = "it belongs to another user (uid 1), who can rename anything in it"
    assert r.stderr == (f"Error: {out}: is the output folder, but {why}; {_SWAP} Give --out a folder of your own "
                        f"instead: {_NOT_YOURS}\n")
    with pytest.raises(DestinationError) as caught:
        plan(scenario, out=out, format="md")
    assert str(caught.value).endswith(f"{_SWAP} Give out= a folder of your own instead: {_NOT_YOURS}")
    assert os.listdir(out) == []


def test_another_users_folder_above_out_and_calibrates_folder_ask_for_ones_own(tmp_path):
    from click.testing import CliRunner

    from planner.cli.main import main

    above = _theirs(tmp_path / "anc", 0o755)
    (above / "sub").mkdir()
    r = CliRunner().invoke(main, ["plan", str(_ROOT / "scenarios" / "qlora-7b-12gb.yaml"), "--out",
                                  str(above / "sub"), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {above}: is a folder above the output folder ({above / 'sub'}), but it belongs "
                               "to another user (uid 1)")
    assert r.stderr.endswith(f" Give --out a folder of your own instead: {_NOT_YOURS}\n") and "chmod +t" not in r.stderr
    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-2-7b", "--task", "train", "--recipe", "pure-bf16",
                                  "--out", str(above / "new" / "c.yaml")])  # refused before the PyTorch check
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"Error: {above}: is a folder above the calibration file's folder")
    assert r.stderr.endswith(f" Give --out a file in a folder of your own instead: {_NOT_YOURS}\n")
    assert sorted(os.listdir(above)) == ["sub"]


def test_another_users_tmpdir_asks_for_a_folder_of_ones_own(tmp_path, monkeypatch):
    from planner.core.errors import DestinationError
    from planner.core.tempdir import refuse_protected_temp

    theirs = _theirs(tmp_path / "tmp", 0o1777)
    monkeypatch.setenv("TMPDIR", str(theirs))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read from TMPDIR, as a fresh process does
    with pytest.raises(DestinationError) as caught:
        refuse_protected_temp()
    assert str(caught.value).endswith(f" Set TMPDIR to a folder of your own instead: {_NOT_YOURS}")


# -- m5: a report path past PATH_MAX because of a long scenario name -------------------------------------------------

def _deep(base: Path, size: int) -> Path:
    """A folder under ``base`` whose absolute path is ``size`` bytes (names of up to 200 bytes), made."""
    parts, n = [], len(os.fsencode(str(base)))
    while n < size:
        parts.append("d" * min(200, size - n - 1))
        n += len(parts[-1]) + 1
    deep = base.joinpath(*parts)
    deep.mkdir(parents=True)
    assert len(os.fsencode(str(deep))) == size
    return deep


def test_a_long_scenario_name_past_path_max_gets_the_whole_path_explanation(tmp_path):
    from click.testing import CliRunner

    from planner import plan
    from planner.cli.main import main
    from planner.core.errors import OutputError

    limit = os.pathconf(tmp_path, "PC_PATH_MAX")
    deep = _deep(tmp_path, limit - 56)  # room for a 13-byte report name, not for a 113-byte one
    text = (_ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_text(encoding="utf-8")
    name = "n" * 110
    scenario = tmp_path / "longn.yaml"
    scenario.write_text("\n".join(f"name: {name}" if line.startswith("name:") else line
                                  for line in text.splitlines()) + "\n", encoding="utf-8")
    report = deep / f"{name}.md"
    size = len(os.fsencode(str(report)))  # the deep folder's bytes, a '/', the name and '.md'
    assert size == limit - 56 + 1 + 110 + 3
    line = (f"{report}: cannot write (File name too long): the report's path is {size:,} bytes, over the system's "
            f"limit of {limit:,} bytes. Give a shorter path: cd into the folder and write there (--out .), or give the "
            "scenario a shorter name.")
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(deep), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"Error: {line}\n"
    with pytest.raises(OutputError) as caught:
        plan(scenario, out=deep, format="md")
    assert str(caught.value) == line
    assert os.listdir(deep) == []
