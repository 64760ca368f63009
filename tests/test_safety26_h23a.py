"""Issue 28, hostile pass 23A: a stop (SIGINT, SIGTERM, SIGHUP) whose line standard error cannot take.

N1: the "Interrupted by SIGTERM; stopped." line written to a full standard error raised an OSError nothing
caught, so Python's last resort exited 1 (planner's "nothing feasible") and nothing was said anywhere. The
line now goes to standard output with a note, and the exit status stays the signal's (128 + 15 = 143).
m6: the same line named a non-ASCII report path raw on an ASCII standard error; it is escaped like every
other line there.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli.common import say_last

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"

# a child that runs `planner plan` and sends itself SIGTERM once the reports are in place (the text is
# rendered after the moves), so the stop lands at a known point, not at a moment a timer picks
_CHILD = """
import os, signal, sys
import planner.report.render as render
def late(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    return "plan text"
render.plan_text = late
from planner.cli.main import main
sys.argv = ["planner", "plan", {scenario!r}, "--out", {out!r}, "--format", "json"]
main()
"""


def _run(tmp_path: Path, out: Path, *, stdout, stderr, env: dict[str, str] | None = None) -> int:
    code = _CHILD.format(scenario=str(QLORA), out=str(out))
    return subprocess.run([sys.executable, "-c", code], stdout=stdout, stderr=stderr, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=120).returncode


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_stop_with_a_full_standard_error_says_it_on_standard_output(tmp_path: Path) -> None:
    out = tmp_path / "d"
    with open("/dev/full", "w") as full, open(tmp_path / "stdout.txt", "w") as so:
        rc = _run(tmp_path, out, stdout=so, stderr=full)
    said = (tmp_path / "stdout.txt").read_text()
    assert rc == 143, said  # 128 + SIGTERM's 15, as with a working standard error; was 1
    report = out / "qlora-7b-12gb.json"
    assert said.strip() == (f"Interrupted by SIGTERM after the reports were written: wrote {report} (complete); "
                            "stopped. (Standard error cannot be written: No space left on device; this line is given "
                            "here instead.)"), said
    assert report.is_file()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_stop_with_both_streams_full_keeps_the_signals_status(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        rc = _run(tmp_path, tmp_path / "d", stdout=full, stderr=full)
    assert rc == 143  # the line is lost (no stream takes it); the status still says what happened


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_stop_line_escapes_a_path_an_ascii_stream_cannot_hold(tmp_path: Path) -> None:
    out = tmp_path / "\u0440\u4e2d"
    err = tmp_path / "stderr.txt"
    with open(err, "w") as se:
        rc = _run(tmp_path, out, stdout=subprocess.DEVNULL, stderr=se, env={"PYTHONIOENCODING": "ascii:strict"})
    said = err.read_bytes()
    assert rc == 143, said
    report = str(out / "qlora-7b-12gb.json").replace("\u0440\u4e2d", "\\u0440\\u4e2d")
    assert said.decode("ascii").strip() == (f"Interrupted by SIGTERM after the reports were written: wrote {report} "
                                            "(complete); stopped."), said


class _Full(io.StringIO):
    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


def test_say_last_falls_back_to_standard_output(monkeypatch) -> None:
    stdout = io.StringIO()
    monkeypatch.setattr(sys, "stderr", _Full())
    monkeypatch.setattr(sys, "stdout", stdout)
    with pytest.raises(SystemExit) as stop:
        say_last("Interrupted by SIGHUP; stopped.", 129)
    assert stop.value.code == 129
    assert stdout.getvalue() == ("Interrupted by SIGHUP; stopped. (Standard error cannot be written: No space left "
                                 "on device; this line is given here instead.)\n")
