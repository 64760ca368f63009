"""Issue 28, hostile pass 36 (tester A, report h36a): a staged report another program holds open or links.

N1: a program that opened a staged report before planner's pre-move check wrote into it after the check: the edited
report was moved into place, said "Wrote ..." and the run exited 0. Now the check refuses a staged report another
descriptor holds open (a write lease is granted only on a file no other descriptor holds: fcntl(2) F_SETLEASE), and
each new report is checked again once in place; a change found then puts the previous set back and keeps the changed
file in the staging folder. 4: a staged report given a hard link elsewhere was moved into place silently.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import ReportSet


def _commit(out: Path, text: str, before_commit=None) -> list[str]:
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.json"), text)
        if before_commit is not None:
            before_commit(rs)
        rs.commit()
    return list(rs.notes)


def _error(out: Path, text: str, before_commit) -> str:
    try:
        _commit(out, text, before_commit)
    except OutputError as exc:
        return str(exc)
    raise AssertionError("the run went on")


def test_a_staged_report_held_open_elsewhere_is_not_moved_into_place(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _commit(out, "{}\n")
    held = []

    sets = []

    def hold(rs) -> None:  # a descriptor another program could write through after the check
        sets.append((rs, rs._staging))
        held.append(os.open(rs._staging / "r.json", os.O_WRONLY | os.O_APPEND))

    said = _error(out, '{"new": 1}\n', hold)
    try:
        # held by this test's own process: said so (h37a 9), not blamed on another program
        assert ("r.json: is held open in this very process, outside planner (another thread, or a descriptor the "
                "program keeps), which could write into it after planner checked it") in said, said
        assert f"nothing was changed in {out}" in said
        assert (out / "r.json").read_text() == "{}\n"  # the previous report, as it was
        # the staged report is left, and said as this run's report another program held (h35a: it was said to be
        # a file "this run did not put there")
        rs, staging = sets[0]
        assert rs.notes == [f"Left {staging}: it holds its report r.json, which was "
                                 "changed, linked or held open there after this run wrote it, so planner removed "
                                 "only its own files; check it and remove it yourself."], rs.notes
    finally:
        for fd in held:
            os.close(fd)


def test_a_staged_report_with_another_hard_link_is_not_moved_into_place(tmp_path: Path) -> None:
    out = tmp_path / "o"
    outside = tmp_path / "outside.json"
    said = _error(out, "{}\n", lambda rs: os.link(rs._staging / "r.json", outside))
    assert "r.json: has another hard link, made by another program after planner wrote it" in said, said
    assert not (out / "r.json").exists()
    assert outside.read_text() == "{}\n"  # the other name is the user's: kept


def test_a_write_after_the_check_puts_the_previous_set_back(tmp_path: Path, monkeypatch) -> None:
    # the write lands after the pre-move check passed (a descriptor opened at that very moment): found once the
    # report is in place, the previous set goes back and the changed file stays in the staging folder
    from planner.core import reportset

    out = tmp_path / "o"
    _commit(out, "{}\n")
    real = reportset.check_staged

    def check_then_write(rs, recorded) -> None:
        real(rs, recorded)
        fd = os.open(rs._staging / "r.json", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"# EVIL\n")
        os.close(fd)

    monkeypatch.setattr(reportset, "check_staged", check_then_write)
    said = _error(out, '{"new": 1}\n', None)
    assert said.startswith(f"{out / 'r.json'}: planner's new report was changed by another program after planner "
                           "checked it"), said
    assert (out / "r.json").read_text() == "{}\n"
    kept = [p for p in out.glob(".planner-staging-*/r.json")]
    assert len(kept) == 1 and kept[0].read_text() == '{"new": 1}\n# EVIL\n'


@pytest.mark.parametrize("first", [False, True])
def test_a_write_after_the_check_into_a_new_name_is_not_left_in_place(tmp_path: Path, monkeypatch,
                                                                       first: bool) -> None:
    from planner.core import reportset

    out = tmp_path / "o"
    if first:
        out.mkdir()
    real = reportset.check_staged

    def check_then_write(rs, recorded) -> None:
        real(rs, recorded)
        with open(rs._staging / "r.json", "a") as fh:
            fh.write("# EVIL\n")

    monkeypatch.setattr(reportset, "check_staged", check_then_write)
    said = _error(out, "{}\n", None)
    assert "planner's new report was changed by another program" in said, said
    assert not (out / "r.json").exists()


def test_an_out_starting_with_a_dash_keeps_its_dot_slash_in_lines_and_hints(tmp_path: Path, monkeypatch) -> None:
    # h36a 2: Path('./-r') is '-r', so the hint 'chmod u+w -r/x.csv' read the path as options
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
    r = CliRunner().invoke(main, ["plan", scenario, "--out", "./-r", "--format", "csv"])
    assert r.exit_code == 0 and "Wrote ./-r/qlora-7b-12gb.csv" in r.output, r.output
    os.chmod(tmp_path / "-r" / "qlora-7b-12gb.csv", 0o444)
    r = CliRunner().invoke(main, ["plan", scenario, "--out", "./-r", "--format", "csv"])
    assert r.exit_code == 2
    assert r.output == ("Error: ./-r/qlora-7b-12gb.csv: is read-only, and planner does not replace a file that was "
                        "made read-only. Make it writable (chmod u+w ./-r/qlora-7b-12gb.csv) or write elsewhere.\n"), \
        r.output


def _dead(out: Path, name: str, folder_line: bool | tuple = True, old: bytes | None = None) -> Path:
    """A staging folder as a killed run leaves it: its mark, the folder line (this folder's device and inode, or
    the ones given), and '0.old' (listed) when ``old`` is given."""
    import json

    from planner.core.stagemark import MARK_HEADER
    from planner.core.stagerecord import FOLDER_KEY, STAGING_MARK, STAGING_PREFIX

    dead = out / (STAGING_PREFIX + name)
    dead.mkdir(mode=0o700)
    st = dead.stat()
    ident = [st.st_dev, st.st_ino] if folder_line is True else list(folder_line)
    lines = [json.dumps({FOLDER_KEY: ident})]
    if old is not None:
        (dead / "0.old").write_bytes(old)
        lines.append('"0.old"')
    (dead / STAGING_MARK).write_bytes(MARK_HEADER + "\n".join(lines).encode() + b"\n")
    return dead


def test_a_copied_staging_folder_is_not_cleaned_as_a_stopped_runs(tmp_path: Path) -> None:
    # h36a 6: 'cp -a' of a killed run's folder: its mark names the original folder, so its files are the copy's
    out = tmp_path / "o"
    _commit(out, "{}\n")
    dead = _dead(out, "copy0001", folder_line=(1, 2), old=b"{}\n")  # '{}\n' is a hash the manifest lists
    notes = _commit(out, "{}\n")
    assert (dead / "0.old").read_bytes() == b"{}\n"
    assert notes == [f"Left {dead}: it holds .planner-staging (it names another folder than this one (a copy of a "
                     "staging folder?), so planner does not go by it), 0.old, which planner cannot tell it wrote; "
                     "check it and remove it yourself."], notes


def test_a_stopped_runs_staging_folder_holding_only_its_mark_is_removed_and_said(tmp_path: Path) -> None:
    # h36a 7: removed without a line
    out = tmp_path / "o"
    _commit(out, "{}\n")
    dead = _dead(out, "mark0001")
    notes = _commit(out, "{}\n")
    assert not dead.exists()
    assert notes == [f"Removed {dead}, which a stopped planner run left holding only its mark."], notes


def test_calibrate_out_starting_with_a_dash_speaks_of_the_file() -> None:
    # h36a 9: "every command given the folder later ..." of a file
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["calibrate", "--out=-c.yaml"])
    assert r.exit_code == 2
    assert r.output == ("Error: --out: '-c.yaml' begins with '-', so every command given the file later would read its "
                        "name as options. Write --out './-c.yaml'.\n"), r.output


def _private_temp(tmp_path: Path, monkeypatch) -> None:
    """Point the temporary folder at one under ``tmp_path`` (0700), so that a check copy planner leaves there (it
    holds another program's file) does not stay in the system's /tmp after the test."""
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))


def test_a_file_another_program_adds_to_the_check_copy_is_not_named_as_in_out(tmp_path: Path, monkeypatch) -> None:
    # h36a 10: "ov/moved.yaml: 'moved.yaml' is not a catalog file name" named a file that was never in --out
    from planner.core import checkcopy
    from tests.sky_helpers import aws_csv, run_cli

    real = checkcopy.write_check_file

    def write_and_add(folder, name, data):
        real(folder, name, data)
        if name == "cloud.yaml":  # another program, a moment later
            (Path(folder) / "moved.yaml").write_text("x: 1\n")

    monkeypatch.setattr(checkcopy, "write_check_file", write_and_add)
    _private_temp(tmp_path, monkeypatch)  # the check copy planner leaves (another program's file in it) stays there
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,us-east-1a,x86_64")
    out = tmp_path / "ov"
    code, said = run_cli("catalog", "import-skypilot", str(path), "--out", str(out))
    assert code == 2
    said = " ".join(said.split())
    assert "holds moved.yaml, which this run did not put there (another program changed it during the run), so " \
           f"nothing was written to {out / 'cloud.yaml'}" in said, said
    assert str(out / "moved.yaml") not in said
    assert not (out / "cloud.yaml").exists()


@pytest.mark.parametrize("command", ["plan", "import"])
def test_a_tmpdir_set_to_no_usable_folder_is_refused_not_passed_over(tmp_path: Path, monkeypatch,
                                                                     command: str) -> None:
    # h36a 11: tempfile passed over it to /tmp (or the current folder) without a word
    import tempfile

    from click.testing import CliRunner

    from planner.cli.main import main
    from tests.sky_helpers import aws_csv

    monkeypatch.setattr(tempfile, "tempdir", None)
    for var in ("TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    missing = tmp_path / "nonexistent"
    monkeypatch.setenv("TMPDIR", str(missing))
    out = tmp_path / "o"
    if command == "plan":
        scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
        args = ["plan", scenario, "--out", str(out), "--format", "xlsx"]
    else:
        args = ["catalog", "import-skypilot", str(aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,"
                                                                    "us-east-1a,x86_64")), "--out", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert r.output.splitlines()[-1] + "\n" == (f"Error: the temporary folder {missing} (TMPDIR) is not there, so Python would put openpyxl's "
                        "and the importer's temporary files somewhere else without a word. Create it, set TMPDIR to a "
                        "folder of your own that can be written (e.g. TMPDIR=/tmp), or unset TMPDIR.\n"), r.output
    assert not out.exists() or not any(p.name.endswith((".xlsx", ".yaml")) for p in out.iterdir())


@pytest.mark.parametrize("kind, shown", [("fifo", "a named pipe"), ("folder", "a folder")])
def test_a_pipe_or_folder_put_at_a_staged_reports_name_is_said_as_a_change(tmp_path: Path, kind: str,
                                                                           shown: str) -> None:
    # h35a/h36a (known): said as "another program removed it there"
    def swap(rs) -> None:
        p = rs._staging / "r.json"
        os.unlink(p)
        os.mkfifo(p) if kind == "fifo" else p.mkdir()

    out = tmp_path / "o"
    said = _error(out, "{}\n", swap)
    assert said.endswith(f"r.json: changed in the staging folder after planner wrote it, by another program (it is "
                         f"now {shown}); it was left there, and nothing was changed in {out}. Check what writes there "
                         "and run again."), said
    assert not (out / "r.json").exists()


def test_a_read_only_hint_for_a_quote_bearing_out_pastes_safely(tmp_path: Path, monkeypatch) -> None:
    # h37b N6: "chmod u+w 'a'; touch PWNED; 'b/x.csv'" ran the planted command when pasted
    import re
    import subprocess

    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    out = "a'; touch PWNED; 'b"
    scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
    assert CliRunner().invoke(main, ["plan", scenario, "--out", out, "--format", "csv"]).exit_code == 0
    report = tmp_path / out / "qlora-7b-12gb.csv"
    os.chmod(report, 0o444)
    r = CliRunner().invoke(main, ["plan", scenario, "--out", out, "--format", "csv"])
    assert r.exit_code == 2
    m = re.search(r"Make it writable \((chmod u\+w .*)\) or write elsewhere\.$", r.output.strip())
    assert m is not None, r.output
    subprocess.run(["bash", "-c", m.group(1)], check=True, cwd=tmp_path)  # the hint, pasted
    assert not (tmp_path / "PWNED").exists()
    assert os.stat(report).st_mode & 0o200  # it made that very report writable


@pytest.mark.parametrize("given, meant", [(b"a\xff\tb", b"a\xffb"), (b"-a\xffb", b"./-a\xffb"),
                                          (b"a\xffb ", b"a\xffb")])
def test_an_out_hint_with_a_byte_that_is_not_utf8_pastes_as_those_bytes(tmp_path: Path, monkeypatch, given: bytes,
                                                                        meant: bytes) -> None:
    # h37b m1: "Write --out 'a\xffb'" named a folder of a backslash, 'x', 'f', 'f'
    import re
    import subprocess

    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    scenario = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
    r = CliRunner().invoke(main, ["plan", scenario, "--out", os.fsdecode(given), "--format", "csv"])
    assert r.exit_code == 2
    m = re.search(r"Write --out (.*?)(?: without it)?\.$", r.output.strip())
    assert m is not None, r.output
    got = subprocess.run(["bash", "-c", f"printf %s {m.group(1)}"], capture_output=True, check=True).stdout
    assert got == meant, (m.group(1), got)


def test_the_catalog_hint_is_never_wrapped_and_names_the_bytes_stdout_cannot_write(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    # h37b m9: a long path's hint was wrapped inside its quotes; m4: under an ASCII stdout 'é' was shown '\xe9'
    import subprocess

    from tests.sky_helpers import aws_csv, run_cli

    monkeypatch.setenv("COLUMNS", "60")
    csv = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64")
    out = tmp_path / "my imported cloud prices folder with a long name that goes well past the line width"
    code, said = run_cli("catalog", "import-skypilot", str(csv), "--out", str(out))
    assert code == 0, said
    last = said.strip().splitlines()[-1]
    pasted = subprocess.run(["bash", "-c", f"printf %s {last.strip()[len('--catalog '):]}"], capture_output=True,
                            check=True).stdout
    assert pasted == os.fsencode(str(out))

    from planner.cli.common import pasteable_word

    class Ascii:
        encoding = "ascii"

    word = pasteable_word("of8\u00e9", Ascii())
    assert word == "$'of8\\xc3\\xa9'"  # the UTF-8 bytes of 'é', which bash's $'...' names
    assert subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True,
                          check=True).stdout == "of8\u00e9".encode()


@pytest.mark.parametrize("name", ["zz-notes.pth", "sitecustomize.py", "sitecustomize/__init__.py", "usercustomize.pyc"])
def test_standard_output_onto_a_startup_file_is_refused(tmp_path: Path, name: str) -> None:
    # h37a 8: 'planner plan ... > site-packages/x.pth' was written, and a line of it starting with 'import' ran at
    # every later Python start; so was the installation's own .pth and __editable__ finder
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    site_dir = tmp_path / "site-packages"  # a folder Python imports packages from, on sys.path
    site_dir.mkdir()
    target = site_dir / name
    target.parent.mkdir(exist_ok=True)
    with open(target, "w") as fh:
        r = subprocess.run([sys.executable, "-m", "planner", "--version"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{site_dir}"})
    assert r.returncode == 2
    assert r.stderr.startswith(f"Error: standard output is {target}, a file of planner's installation or of the "
                               "Python it runs on"), r.stderr
    assert target.read_text() == ""


def test_a_reader_that_opens_and_closes_at_once_does_not_fail_the_run(tmp_path: Path, monkeypatch) -> None:
    # h37a 13: a scanner or indexer that opens each new file for a moment failed the run; the lease is now tried
    # again over about 0.3 s: here the file is held for the first two tries only
    from planner.core import stagerecord

    import fcntl

    calls = []
    real = fcntl.fcntl
    setlease = getattr(fcntl, "F_SETLEASE", stagerecord._F_SETLEASE)

    def flaky(fd, cmd, arg=0):
        if cmd == setlease and arg == fcntl.F_WRLCK:
            calls.append(cmd)
            if len(calls) <= 2:
                raise OSError(11, "Resource temporarily unavailable")
        return real(fd, cmd, arg)

    monkeypatch.setattr(fcntl, "fcntl", flaky)
    out = tmp_path / "o"
    assert _commit(out, "{}\n") == []
    assert (out / "r.json").read_text() == "{}\n"
    assert len(calls) == 3


def test_a_report_left_as_held_open_is_removed_by_a_later_run_when_unchanged(tmp_path: Path) -> None:
    # h37a 13: the folder left by a refused run was never cleaned ("cannot tell it wrote"): its mark now stays
    out = tmp_path / "o"
    held = []

    def hold(rs) -> None:
        held.append(os.open(rs._staging / "r.json", os.O_RDONLY))

    _error(out, "{}\n", hold)
    os.close(held[0])
    left = list(out.glob(".planner-staging-*"))
    assert len(left) == 1
    notes = _commit(out, "{}\n")
    assert not left[0].exists()
    assert len(notes) == 1 and notes[0].startswith(f"Removed {left[0]}, which a stopped planner run left"), notes


def test_a_scenario_from_a_pipe_records_no_file(tmp_path: Path) -> None:
    # h37a 12: '<(cat s.yaml)' was recorded as "/proc/PID/fd/pipe:[N]", and every rerun said it replaced reports
    # "planned from another scenario file"
    import json

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = tmp_path / "o"
    said = []
    for _ in range(2):
        with ReportSet(out, set_name="plan r", origin=fifo) as rs:
            write_text(rs.path("r.json"), "{}\n")
            rs.commit()
        said.append(list(rs.notes))
    assert said == [[], []]
    assert "from" not in json.loads((out / ".planner-reports.json").read_text())["files"]["r.json"]


def test_a_file_renamed_over_a_new_report_after_the_moves_is_said_as_another_file(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    # h37a 10: said as "planner's new report was changed ... kept in" staging, where the other file then lay
    from planner.core import moves

    out = tmp_path / "o"
    _commit(out, "{}\n")
    real = moves._recheck_new

    def rename_over_then_check(rs, mv) -> None:
        theirs = tmp_path / "theirs.json"
        theirs.write_text("THEIRS\n")
        os.rename(theirs, rs.out / "r.json")
        real(rs, mv)

    monkeypatch.setattr(moves, "_recheck_new", rename_over_then_check)
    said = _error(out, '{"new": 1}\n', None)
    assert said.startswith(f"{out / 'r.json'}: another program put another file at this name (renamed over planner's "
                           "new report) just after planner placed it; the previous set was put back as it was, and "
                           "that other file is now in "), said
    assert (out / "r.json").read_text() == "{}\n"
    assert [p.read_text() for p in out.glob(".planner-staging-*/r.json")] == ["THEIRS\n"]


def test_a_staged_report_held_open_by_another_process_is_said_so(tmp_path: Path) -> None:
    import subprocess
    import sys

    procs = []

    def hold(rs) -> None:  # another program: opens the staged report, says so, and keeps it open
        p = subprocess.Popen([sys.executable, "-c", "import os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); "
                              "print('open', flush=True); time.sleep(30)", str(rs._staging / "r.json")],
                             stdout=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stdout.readline().strip() == "open"

    try:
        said = _error(tmp_path / "o", "{}\n", hold)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert "r.json: is held open by another program, which could write into it after planner checked it" in said, said


@pytest.mark.parametrize("first", [False, True])
def test_a_new_report_removed_after_the_moves_is_said_as_removed(tmp_path: Path, monkeypatch, first: bool) -> None:
    # h38a 2: said to be "kept in" the staging folder, where it was not; first: a name that held nothing before
    from planner.core import moves

    out = tmp_path / "o"
    if not first:
        _commit(out, "{}\n")
    real = moves._recheck_new

    def remove_then_check(rs, mv) -> None:
        os.unlink(rs.out / "r.json")
        real(rs, mv)

    monkeypatch.setattr(moves, "_recheck_new", remove_then_check)
    said = _error(out, '{"new": 1}\n', None)
    # where the folder held no set, there is none to put back: the new reports are taken out again (h39a m4)
    back = ("the new reports were taken out again (the folder held no earlier set)" if first
            else "the previous set was put back as it was")
    assert said.startswith(f"{out / 'r.json'}: another program removed planner's new report just after planner "
                           f"placed it; {back}: nothing was replaced"), said
    assert (out / "r.json").read_text() == "{}\n" if not first else not (out / "r.json").exists()


def test_a_stream_onto_a_module_of_a_dependency_is_found(monkeypatch) -> None:
    # h37a 17, h38b N4: 'planner ... >> site-packages/click/__init__.py' was written, and every later run died.
    # Judged without writing: a read-only descriptor on click's module stands for standard output here
    import click

    from planner.cli import streams

    fd = os.open(click.__file__, os.O_RDONLY)
    try:
        monkeypatch.setattr(streams, "_STREAMS", ((fd, "standard output"),))
        found = list(streams._installation_streams())
    finally:
        os.close(fd)
    assert found == [Path(os.path.realpath(click.__file__))]


def test_a_lock_hint_names_a_folder_with_a_byte_that_is_not_utf8_as_its_bytes() -> None:
    # h38a 16: "fuser -v 'lk\\xffd'" named a folder of a backslash, 'x', 'f', 'f'
    from planner.core.reportset import lock_held

    line = lock_held(Path(os.fsdecode(b"lk\xffd")))
    assert "fuser -v $'lk\\xffd' or lsof $'lk\\xffd'" in line, line


def test_a_staging_folder_swapped_during_the_check_is_said_as_swapped(tmp_path: Path, monkeypatch) -> None:
    # h38a 15: said as "another program removed it there"
    from planner.core import moves

    out = tmp_path / "o"
    real = moves.unchanged

    def swap_then_check(path, *args, **kwargs):
        staging = Path(path).parent
        if not (tmp_path / "moved").exists():
            os.rename(staging, tmp_path / "moved")
            staging.mkdir()
        return real(path, *args, **kwargs)

    monkeypatch.setattr(moves, "unchanged", swap_then_check)
    said = _error(out, "{}\n", None)
    assert "is no longer the staging folder this run made (moved away, or replaced by a link or another folder" in said


def test_a_file_put_at_cloud_yaml_in_the_check_copy_is_said_as_such(tmp_path: Path, monkeypatch) -> None:
    # h38a 11: it got the "free space / ulimit -f" hint
    from planner.core import checkcopy
    from tests.sky_helpers import aws_csv, run_cli

    real = checkcopy.write_check_file

    def squat_then_write(folder, name, data):
        if name == "cloud.yaml":
            (Path(folder) / "cloud.yaml").write_text("theirs\n")  # another program, first
        return real(folder, name, data)

    _private_temp(tmp_path, monkeypatch)  # the check copy planner leaves (another program's file in it) stays there

    monkeypatch.setattr(checkcopy, "write_check_file", squat_then_write)
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,4,16,,1.0,,us-east-1,us-east-1a,x86_64")
    out = tmp_path / "ov"
    code, said = run_cli("catalog", "import-skypilot", str(path), "--out", str(out))
    assert code == 2
    said = " ".join(said.split())
    assert "that this run did not put there (another program wrote it during the run)" in said, said
    assert "Free space" not in said


def test_a_hard_link_to_a_startup_file_as_standard_output_is_refused(tmp_path: Path) -> None:
    # h39a N1: the path check alone let a hard link elsewhere write into the start-up module
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    site_dir = tmp_path / "pp"
    site_dir.mkdir()
    (site_dir / "sitecustomize.py").write_text("\n")
    link = tmp_path / "notes.txt"
    os.link(site_dir / "sitecustomize.py", link)
    with open(link, "a") as fh:
        r = subprocess.run([sys.executable, "-m", "planner", "--version"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{site_dir}"})
    assert r.returncode == 2, r.stderr
    assert (site_dir / "sitecustomize.py").read_text() == "\n"
    # a plain file with another link (no start-up file) is written as asked
    plain, other = tmp_path / "plain.txt", tmp_path / "other.txt"
    plain.write_text("")
    os.link(plain, other)
    with open(plain, "a") as fh:
        r = subprocess.run([sys.executable, "-m", "planner", "--version"], stdout=fh, stderr=subprocess.PIPE,
                           text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stderr
    assert "version" in plain.read_text()


@pytest.mark.parametrize("name", ["sitecustomize.py", "usercustomize.py", "x.pth"])
def test_calibrate_out_never_names_a_startup_file(tmp_path: Path, name: str) -> None:
    # h39a N2: such an --out passed every check (a sitecustomize.py on PYTHONPATH would run at every Python start)
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16",
                                  "--micro-batch", "2", "--seq-len", "512", "--out", str(tmp_path / name)])
    assert r.exit_code == 2
    assert f"{name!r} is a name Python runs at every start when its folder is on the module search path" in \
        " ".join(r.output.split()), r.output


@pytest.mark.parametrize("args, bad", [
    (["catalog", "import-skypilot", "aws/vms.csv", "--out", "o", "--region", "\uff55\uff53-east-1;touch PWN"],
     ";touch"),
    (["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--micro-batch", "1",
      "--seq-len", "\uff15\uff11\uff12 $(touch PWN)"], "$(touch"),
    (["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--micro-batch",
      "\uff11;id"], ";id"),
])
def test_a_lookalike_value_hint_never_echoes_shell_syntax(tmp_path: Path, monkeypatch, args: list, bad: str) -> None:
    # h39b 20: "Did you mean --region us-east-1;touch PWN?" ran the planted command when pasted
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.chdir(tmp_path)
    from tests.sky_helpers import G5, aws_csv

    aws_csv(tmp_path, G5)  # (the --region lookalike is judged once the file is read: h40a N6)
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    error = r.output[r.output.index("Error:"):]  # (the summary above it quotes the value as given)
    hint_part = error.split("'", 2)[-1]  # past the quoted value the problem names
    assert bad not in hint_part, r.output


def test_an_overlay_gpu_name_is_matched_case_blind_only_in_ascii() -> None:
    # h39b 18: an AcceleratorName holding KELVIN SIGN (lower-cases to 'k') was matched to an overlay GPU 'zk9'
    from planner.catalog.skypilot_rows import OverlayGpuNames

    names = OverlayGpuNames(ids={"zk9": "zk9"}, names={"ZK9": ("zk9",)}, lower={"zk9": ("zk9",)})
    assert names.match("ZK9") == ("zk9",) and names.match("zK9") == ("zk9",)
    assert names.match("Z\u212a9") == ()
