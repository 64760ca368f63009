"""Hostile pass 39A's minors: hints that a run refuses when pasted (m2), TMPDIR advice that leads to another refusal
(m3), "the previous set was put back" where the folder held none (m4), standard output onto another folder's
manifest or report (m6)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import ReportSet

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _planner(args: list[str], cwd: Path, env: dict[str, str] | None = None, stdout=subprocess.PIPE):
    """Run ``python -m planner ARGS`` in ``cwd`` with this tree first on the module search path."""
    full = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "planner", *args], cwd=cwd, env=full, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120)


# -- m2: a hint is offered only for a path the run would take ------------------------------------------------------

def test_a_quoted_out_in_site_packages_gets_no_hint() -> None:
    # "'<site-packages>/x'" was hinted as --out '<site-packages>/x', which the run then refuses: a folder made in
    # site-packages can hide an installed package (planner.core.importpath)
    from planner.core.outhint import settled

    purelib = sysconfig.get_paths()["purelib"]
    assert settled(f"'{purelib}/x'") is None


def test_a_tilde_expanding_into_site_packages_gets_no_hint(monkeypatch) -> None:
    from planner.core.outhint import settled

    monkeypatch.setenv("HOME", sysconfig.get_paths()["purelib"])
    assert settled("~/x") is None
    monkeypatch.setenv("HOME", "/tmp")  # the same start where HOME is a folder a run takes: hinted, unquoted
    assert settled("~/x") == "~/x"


def test_a_calibration_file_hint_is_never_a_start_up_name(tmp_path: Path) -> None:
    # calibrate --out "'<dir>/sitecustomize.py'": the run refuses that name (h39a N2), so no hint names it
    from planner.core.outhint import settled

    assert settled(f"'{tmp_path}/sitecustomize.py'", file=True) is None
    assert settled(f"'{tmp_path}/cal.yaml'", file=True) == f"'{tmp_path}/cal.yaml'"


def test_an_out_hint_is_withheld_where_tmpdir_lies_inside_it(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    from planner.core.outhint import settled

    monkeypatch.setattr(tempfile, "tempdir", None)
    for var in ("TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "x" / "t"))
    assert settled(f"'{tmp_path / 'x'}'") is None  # the run would refuse: TMPDIR inside the --out to be made
    assert settled(f"'{tmp_path / 'y'}'") == f"'{tmp_path / 'y'}'"


def test_a_quoted_out_hint_on_the_command_line_is_withheld_for_site_packages(tmp_path: Path) -> None:
    purelib = sysconfig.get_paths()["purelib"]
    r = _planner(["plan", str(SCENARIO), "--out", f"'{purelib}/x'"], tmp_path)
    assert r.returncode == 2
    assert "Write --out" not in r.stderr, r.stderr
    assert r.stderr.startswith("Error: --out: ") and "is wrapped in single quotes" in r.stderr, r.stderr


# -- m3: TMPDIR advice -----------------------------------------------------------------------------------------------

def test_a_tmpdir_inside_an_out_not_made_yet_is_said_as_inside_it(tmp_path: Path) -> None:
    # it was "is not there ... Create it", and once created: refused as inside --out
    r = _planner(["plan", str(SCENARIO), "--out", "o9", "--format", "xlsx"], tmp_path,
                 env={"TMPDIR": str(tmp_path / "o9" / "t")})
    assert r.returncode == 2
    assert r.stderr.startswith(f"Error: the temporary folder {tmp_path / 'o9' / 't'} (TMPDIR) is inside the --out "
                               "folder o9: "), r.stderr
    assert "Create it" not in r.stderr
    assert not (tmp_path / "o9").exists()


def test_a_tmpdir_that_exists_but_cannot_be_written_is_not_told_to_be_created(tmp_path: Path,
                                                                             monkeypatch) -> None:
    import tempfile

    from planner.core.tempdir import refuse_unusable_temp

    monkeypatch.setattr(tempfile, "tempdir", None)
    for var in ("TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    a_file = tmp_path / "f"
    a_file.write_text("x")
    monkeypatch.setenv("TMPDIR", str(a_file))
    with pytest.raises(OutputError) as err:
        refuse_unusable_temp()
    said = str(err.value)
    assert said.startswith(f"the temporary folder {a_file} (TMPDIR) is not a folder, so Python would put "), said
    assert "Create it" not in said and "Set TMPDIR to a folder of your own" in said
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))  # a missing one still is
    with pytest.raises(OutputError) as err:
        refuse_unusable_temp()
    assert "is not there" in str(err.value) and "Create it, set TMPDIR" in str(err.value)


# -- m4: no previous set to put back ---------------------------------------------------------------------------------

def _error_after_moves(out: Path, change, monkeypatch) -> str:
    from planner.core import moves

    real = moves._recheck_new

    def change_then_check(rs, mv) -> None:
        change(rs.out / "r.json")
        real(rs, mv)

    monkeypatch.setattr(moves, "_recheck_new", change_then_check)
    try:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.json"), '{"new": 1}\n')
            rs.commit()
    except OutputError as exc:
        return str(exc)
    raise AssertionError("the run went on")


def test_a_report_written_into_after_placing_in_a_new_folder_says_no_set_was_there(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    out = tmp_path / "o"

    def append(path: Path) -> None:  # an edit through the report's own name, just after it was placed
        with open(path, "a") as f:
            f.write("EDIT\n")

    said = _error_after_moves(out, append, monkeypatch)
    assert said.startswith(f"{out / 'r.json'}: planner's new report was changed by another program after planner "
                           "checked it (written into at this name just after planner placed it, through a descriptor "
                           "opened on it before, or given another name); it is kept in "), said
    assert "the new reports were taken out again (the folder held no earlier set): nothing was replaced" in said
    assert "previous set" not in said
    assert not (out / "r.json").exists()


def test_a_report_written_into_after_placing_over_a_set_puts_that_set_back(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()

    def append(path: Path) -> None:
        with open(path, "a") as f:
            f.write("EDIT\n")

    said = _error_after_moves(out, append, monkeypatch)
    assert "and the previous set was put back as it was: nothing was replaced" in said, said
    assert (out / "r.json").read_text() == "{}\n"


# -- m6: standard output onto another folder's manifest or report -----------------------------------------------------

ESTIMATE = ["estimate", "--model", "llama-2-7b", "--task", "infer", "--weights", "bf16", "--context", "4096"]


@pytest.mark.slow
@pytest.mark.parametrize("target", [".planner-reports.json", "qlora-7b-12gb.csv"])
def test_standard_output_onto_another_folders_set_is_refused(tmp_path: Path, target: str) -> None:
    r = _planner(["plan", str(SCENARIO), "--out", "oQ", "--format", "csv"], tmp_path)
    assert r.returncode == 0, r.stderr
    path = tmp_path / "oQ" / target
    before = path.read_bytes()
    with open(path, "a") as stream:
        r = _planner(ESTIMATE, tmp_path, stdout=stream)
    assert r.returncode == 2
    assert r.stderr == (f"Error: standard output is {path}, a report set's manifest or a report it lists, or a file "
                        "of a staging folder (planner's own files in a folder it writes reports into: written into, "
                        "the next run there takes the set as changed or the folder as not planner's); planner does "
                        "not write into it. Redirect standard output to another file.\n")
    assert path.read_bytes() == before


@pytest.mark.slow
def test_standard_output_onto_a_file_beside_a_set_that_it_does_not_list_is_written(tmp_path: Path) -> None:
    # a file of the user's beside a set (not listed in its manifest, not named as planner's own) takes the output
    r = _planner(["plan", str(SCENARIO), "--out", "oQ", "--format", "csv"], tmp_path)
    assert r.returncode == 0, r.stderr
    notes = tmp_path / "oQ" / "notes.txt"
    with open(notes, "w") as stream:
        r = _planner(ESTIMATE, tmp_path, stdout=stream)
    assert r.returncode == 0, r.stderr
    assert notes.read_text().strip()


# -- pass 38A's open minors: 9, 10, 12, 13 ------------------------------------------------------------------------------

CALIBRATE = ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch", "2",
             "--seq-len", "512"]


def test_calibrate_out_a_link_to_a_shipped_file_is_not_hinted_to_its_target(tmp_path: Path) -> None:
    # h38a 9: "Give --out the file it points to", which is then refused as planner's own catalog
    from planner.core.errors import OutputError
    from planner.validate.calibrate import refuse_linked

    shipped = ROOT / "catalog" / "ram.yaml"
    (tmp_path / "sl.yaml").symlink_to(shipped)
    with pytest.raises(OutputError) as err:
        refuse_linked(tmp_path / "sl.yaml")
    assert str(err.value) == (f"{tmp_path / 'sl.yaml'}: is a symbolic link, and planner does not replace a link with "
                              "a file. Give --out another name.")
    (tmp_path / "real.yaml").write_text("schema_version: 1\n")  # a target a run takes: hinted, by its path
    (tmp_path / "ok.yaml").symlink_to(tmp_path / "real.yaml")
    with pytest.raises(OutputError) as err:
        refuse_linked(tmp_path / "ok.yaml")
    assert str(err.value).endswith(f"Give --out the file it points to (--out {tmp_path / 'real.yaml'}), or another "
                                   "name."), str(err.value)


def test_calibrate_out_onto_a_shipped_catalog_file_is_said_as_planners_own(tmp_path: Path) -> None:
    # h38a 10: "is an input of this run, and a report never replaces its input"
    shipped = ROOT / "catalog" / "ram.yaml"
    r = _planner([*CALIBRATE, "--out", str(shipped)], tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith(f"Error: {shipped}: is inside planner's own catalog folder ({ROOT / 'catalog'}), and "
                               "planner does not write into it."), r.stderr


@pytest.mark.parametrize("given, rest", [("/dev/fd/{fd}", ""), ("/proc/self/fd/{fd}/x", "/x")])
def test_an_out_through_a_file_descriptor_is_refused_with_the_folder_it_names(tmp_path: Path, given: str,
                                                                               rest: str) -> None:
    # h38a 12: taken, and every line (the import's --catalog hint too) named a descriptor of the exited process
    from planner.core.outpath import out_path_problem

    folder = tmp_path / "fdk"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    try:
        found = out_path_problem(given.format(fd=fd))
    finally:
        os.close(fd)
    assert found == ("names a file descriptor of a process, which no later command can use: the lines and hints "
                     "would name a path that is gone once planner exits", f"{folder}{rest}")
    assert out_path_problem("/dev/fdx/a") is None  # only the descriptor folders themselves


def test_a_relative_xdg_config_home_is_refused_not_passed_over(tmp_path: Path) -> None:
    # h38a 13: the XDG spec says to ignore it, and the ~/.config file was read (or none) without a word
    from planner.core.errors import InputError
    from planner.validate.calibrate import refuse_relative_xdg, save_path

    env = {"XDG_CONFIG_HOME": "relx", "HOME": str(tmp_path)}
    with pytest.raises(InputError) as err:
        refuse_relative_xdg(env)
    assert str(err.value) == ("XDG_CONFIG_HOME is 'relx', a relative path, which the XDG Base Directory Specification "
                              "says to ignore, so planner would read the default calibration file under ~/.config "
                              f"({tmp_path}/.config/planner/calibration.yaml) instead, without a word. Set it to an "
                              'absolute path (XDG_CONFIG_HOME="$PWD"/relx), or unset it.')
    with pytest.raises(InputError):
        save_path(None, env)
    assert save_path(tmp_path / "c.yaml", env) == tmp_path / "c.yaml"  # --out given: the variable is not used
    refuse_relative_xdg({"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)})  # absolute: fine


def test_estimate_with_a_relative_xdg_config_home_exits_2(tmp_path: Path) -> None:
    r = _planner(["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--micro-batch", "1",
                  "--seq-len", "512", "--gpu", "rtx-4090"], tmp_path, env={"XDG_CONFIG_HOME": "relx"})
    assert r.returncode == 2
    assert r.stderr.startswith("Error: XDG_CONFIG_HOME is 'relx', a relative path"), r.stderr


def test_a_dash_folder_keeps_its_dot_slash_in_destination_lines(tmp_path: Path, monkeypatch) -> None:
    # h38a 5: '--out ./-dash' was said as '-dash: cannot write ...', a word every command reads as options
    from planner.core.errors import DestinationError
    from planner.core.outpath import refuse_unwritable_out

    monkeypatch.chdir(tmp_path)
    Path("-dash").mkdir()
    monkeypatch.setattr(os, "access", lambda *a, **k: False)  # no write permission, as for another user's folder
    with pytest.raises(DestinationError) as err:
        refuse_unwritable_out(Path("./-dash"))
    assert str(err.value).startswith("./-dash: cannot write into the output directory (Permission denied)."), err.value
