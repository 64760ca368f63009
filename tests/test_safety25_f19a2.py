"""Issue 28, hostile pass 19X: the exit status when both standard streams are a pipe whose reader is gone (N2); a
bare ``planner`` (and ``planner --debug``) whose standard error fails (N3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
PLANNER = [sys.executable, "-c", "from planner.cli.main import main; main()"]
COMMANDS = "calibrate, catalog, compare, estimate, fit, plan"


def _run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(PLANNER + args, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL, **kw)


# ----- N2: both streams a pipe whose reader is gone ----------------------------------------------------------------

def _both_broken(args: list[str], cwd: Path) -> int:
    rd, wr = os.pipe()
    os.close(rd)  # the reader is gone before the run: every write fails with EPIPE
    try:
        return _run(args, cwd, stdout=wr, stderr=wr).returncode
    finally:
        os.close(wr)


def test_bad_input_with_both_streams_broken_exits_2_not_the_interpreters_120(tmp_path: Path) -> None:
    # 120 is CPython's status for a failed flush of sys.stdout at shutdown; planner's for bad input is 2
    assert _both_broken(["plan", "nonexist.yaml"], tmp_path) == 2
    assert _both_broken(["estimate", "--model", "nope-model"], tmp_path) == 2
    assert _both_broken([], tmp_path) == 2


# ----- N3: a bare 'planner' whose standard error fails --------------------------------------------------------------

def test_a_bare_planner_with_a_full_standard_error_says_so_on_standard_output(tmp_path: Path) -> None:
    with open("/dev/full", "w", encoding="utf-8") as full:
        r = _run([], tmp_path, stdout=subprocess.PIPE, stderr=full, text=True)
        d = _run(["--debug"], tmp_path, stdout=subprocess.PIPE, stderr=full, text=True)
    assert (r.returncode, d.returncode) == (2, 2)  # a usage error, not 1 ("nothing feasible")
    path = "-c"  # click's program name for 'python -c ...'
    want = (f"Error: no command given; give one of {COMMANDS}. See '{path} --help'. (Standard error cannot be "
            "written: No space left on device; this line is given here instead.)\n")
    assert r.stdout == want
    assert d.stdout == want


def test_planner_debug_alone_says_what_a_bare_planner_says(tmp_path: Path) -> None:
    r = _run([], tmp_path, capture_output=True, text=True)
    d = _run(["--debug"], tmp_path, capture_output=True, text=True)
    assert (r.returncode, d.returncode) == (2, 2)
    first = f"Error: no command given; give one of {COMMANDS} (the usage follows)."
    assert r.stderr.splitlines()[0] == first
    assert d.stderr == r.stderr  # the same line, then the same usage
    assert "Usage:" in d.stderr.splitlines()[1]
