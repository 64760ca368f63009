"""h18a findings: a standard error that cannot be written (read-only, a gone pipe, a full disk), a file-size
limit on a report, a socket at a report's name, a scenario name with a leading dot."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.destinations import what_it_is

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
PLANNER = [sys.executable, "-c", "from planner.cli.main import main; main()"]


def _run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(PLANNER + args, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL, **kw)


def _edited_set(tmp_path: Path) -> None:
    """A set of json and md whose md was edited: the next json-only run keeps it with a 'Kept ...' note."""
    r = _run(["plan", str(SCENARIO), "--out", "o", "--format", "json,md"], tmp_path, capture_output=True)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "o" / "qlora-7b-12gb.md", "a", encoding="utf-8") as fh:
        fh.write("my edit\n")


# ----- #1: standard error that cannot be written -----------------------------------------------------------------

def test_a_read_only_standard_error_is_refused_before_anything_is_done(tmp_path: Path) -> None:
    (tmp_path / "ro.txt").write_text("hi\n")
    with open(tmp_path / "ro.txt", encoding="utf-8") as ro:  # '2< ro.txt': O_RDONLY
        r = _run(["plan", str(SCENARIO), "--out", "o", "--format", "json"], tmp_path, stdout=subprocess.PIPE,
                 stderr=ro, text=True)
    assert r.returncode == 2
    assert not (tmp_path / "o").exists()  # nothing written
    assert r.stdout == ("Error: standard error is open read-only ('2< file'), so the notes and errors planner gives "
                        "there could not be written. Send it to a file or to /dev/null ('2> /dev/null').\n")


def _stdout_kept(out: str) -> None:
    # the plan and 'Wrote' line stay; then the lost note and the Error line, both on standard output
    lines = " ".join(out.split())
    assert lines.startswith("Scenario qlora-7b-12gb")
    assert "Wrote o/qlora-7b-12gb.json Kept o/qlora-7b-12gb.md, a name of this report set not written this time: " \
           "it changed since planner wrote it." in lines


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_standard_error_pipe_whose_reader_is_gone_keeps_standard_output(tmp_path: Path) -> None:
    _edited_set(tmp_path)
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as out:
        p = subprocess.Popen(PLANNER + ["plan", str(SCENARIO), "--out", "o", "--format", "json"], cwd=tmp_path,
                             stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        p.stderr.close()  # the reader is gone: the note's write gets EPIPE (Python ignores SIGPIPE)
        rc = p.wait(timeout=300)
    text = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert rc == 2
    _stdout_kept(text)
    last = text.splitlines()[-1]
    assert last == ("Error: standard error cannot be written (Broken pipe), so the note above, meant for it, is given "
                    "on standard output, and the run stopped there. The reports were written, whole: "
                    "o/qlora-7b-12gb.json. Send standard error to a file or a terminal (or '2> /dev/null') and run "
                    "again.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_error_keeps_standard_output(tmp_path: Path) -> None:
    _edited_set(tmp_path)
    with open("/dev/full", "w", encoding="utf-8") as full:
        r = _run(["plan", str(SCENARIO), "--out", "o", "--format", "json"], tmp_path, stdout=subprocess.PIPE,
                 stderr=full, text=True)
    assert r.returncode == 2
    _stdout_kept(r.stdout)
    last = r.stdout.splitlines()[-1]
    assert last.startswith("Error: standard error cannot be written (No space left on device), so the note above")


# ----- minor 3: a file-size limit on the report itself -----------------------------------------------------------

def test_a_file_size_limit_on_a_report_names_the_limit(tmp_path: Path) -> None:
    # RLIMIT_FSIZE 1024 bytes (ulimit -f 1) and 4096 bytes to write: write(2) fails with EFBIG (SIGXFSZ ignored)
    code = ("import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
            "from planner.core.atomic import write_text\nfrom planner.core.errors import OutputError\n"
            "try:\n    write_text('r.json', 'x' * 4096)\nexcept OutputError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == ("r.json: cannot write (File too large): the file-size limit ('ulimit -f') stopped it. "
                                "Raise the limit and run again."), r.stderr
    assert sorted(os.listdir(tmp_path)) == []  # the temporary was removed


# ----- minor 4: a socket at a report's name ------------------------------------------------------------------------

def test_a_socket_at_a_reports_name_is_called_a_socket(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    try:
        os.chdir(tmp_path)  # a short relative path: AF_UNIX names are at most 107 bytes
        sock.bind("o/qlora-7b-12gb.md")
    finally:
        os.chdir(here)
    try:
        r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(tmp_path / "o"), "--format", "json,md"])
    finally:
        sock.close()
    assert r.exit_code == 2
    out = tmp_path / "o"
    assert r.stderr.strip() == (f"Error: {out / 'qlora-7b-12gb.md'}: is not a regular file (a socket), which planner "
                                f"never writes (see {out / '.planner-reports.json'}), and planner never replaces or "
                                "removes such a file. Move it away or give another --out.")


def test_what_it_is_names_each_kind(tmp_path: Path) -> None:
    import stat

    assert what_it_is(stat.S_IFSOCK | 0o755) == "a socket"
    assert what_it_is(stat.S_IFIFO | 0o644) == "a named pipe"
    assert what_it_is(stat.S_IFLNK | 0o777) == "a symbolic link"
    assert what_it_is(stat.S_IFDIR | 0o755) == "a folder"


# ----- minor 5: a leading dot in a scenario name ------------------------------------------------------------------

@pytest.mark.parametrize("name, said", [
    # safe_stem('.abc') == 'abc': only the dot is dropped
    (".abc", "the scenario name '.abc' starts with a dot, which is dropped (a file name that starts with a dot is "
             "hidden)."),
    # '.a b': the dot dropped and the space made '-' ('a-b'): both reasons
    (".a b", "the scenario name '.a b' starts with a dot, which is dropped (a file name that starts with a dot is "
             "hidden) and holds characters a file name cannot (path separators, spaces, symbols)."),
])
def test_a_leading_dot_is_said_to_be_dropped(tmp_path: Path, name: str, said: str) -> None:
    s = tmp_path / "s.yaml"
    s.write_text(SCENARIO.read_text(encoding="utf-8").replace("name: qlora-7b-12gb", f'name: "{name}"', 1),
                 encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    note = " ".join(r.stderr.split())
    assert said in note, note
