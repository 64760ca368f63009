"""Hostile pass 6A (issue 28): what a run did is said even when its own output is lost, and a failed run
leaves no empty folder it made.

1. Standard output that fails after the reports were moved into place (``> /dev/full``): the Error line
   names the reports written and the stale ones removed (the lost output would have said so).
2. A signal during the moves: the set completes, and the line names the stale report removed with it
   (docs/planning.md: a stale report "is removed with the new set, and the command says so").
3. A run that fails before its reports are in place removes the ``--out`` folders it created, when empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import _cli, _scenario
from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import ReportSet


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_stdout_failing_after_the_reports_names_what_was_written_and_removed(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "q"
    assert _cli("plan", str(s), "--out", str(out), "--format", "json,md").returncode == 0
    r = _cli(shell=f"python -m planner plan '{s}' --out '{out}' --format json > /dev/full")
    assert r.returncode == 2, r.stderr
    assert r.stderr.endswith(f" The reports were written, whole: {out / 's.json'}; removed the stale "
                             f"{out / 's.md'}.\n"), r.stderr
    assert r.stderr.startswith("Error: cannot write the output (No space left on device)."), r.stderr
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.json"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_signal_during_the_moves_names_the_stale_report_removed(tmp_path: Path) -> None:
    s = _scenario(tmp_path / "s.yaml", "s")
    out = tmp_path / "o"
    assert _cli("plan", str(s), "--out", str(out), "--format", "json,md").returncode == 0
    script = (
        "import os, signal\n"
        "from planner.core import renames\n"
        "real = renames.exchange\n"
        "def swap(a, b):\n"
        "    done = real(a, b)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)  # held until the set is in place\n"
        "    return done\n"
        "renames.exchange = swap\n"
        "from planner.cli.main import main\n"
        f"main(['plan', {str(s)!r}, '--out', {str(out)!r}, '--format', 'json'])\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert p.returncode == 143, p.stderr
    assert p.stderr == (f"Interrupted by SIGTERM after the reports were written: wrote {out / 's.json'} (complete); "
                        f"removed the stale {out / 's.md'}; stopped.\n"), p.stderr
    assert sorted(os.listdir(out)) == [".planner-reports.json", "s.json"]


def test_a_failed_run_removes_the_empty_folders_it_made_and_no_other(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper"
    with pytest.raises(OutputError):
        with ReportSet(out, set_name="s") as rs:
            write_text(rs.path("r.json"), "{}")
            raise OutputError("the workbook could not be written")
    assert not (tmp_path / "new").exists()  # both made by the run: gone
    kept = tmp_path / "kept"
    kept.mkdir()
    with pytest.raises(OutputError):
        with ReportSet(kept / "sub", set_name="s"):
            (kept / "sub" / "mine.txt").write_text("a file put there meanwhile")
            raise OutputError("failed")
    assert (kept / "sub" / "mine.txt").exists()  # not empty: left, with the file
    with ReportSet(tmp_path / "ok", set_name="s") as rs:
        write_text(rs.path("r.json"), "{}")
        rs.commit()
    assert (tmp_path / "ok" / "r.json").exists()
