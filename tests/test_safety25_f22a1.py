"""Issue 28, hostile pass 22A: the cleanup of a stopped run's staging folder keeps a user's file.

Covers (report h22a N1): a run killed during its moves may leave, under a report's name in its staging folder, a
file the user saved at that name (or an edit saved into a report) that the moves swapped in; the next run removes
a file there only when its SHA-256 is one the manifest lists or one the stopped run recorded in its staging mark
for the file it staged (ReportSet._record_digests), and otherwise leaves the folder with a line naming the file.
A staging folder whose mark holds no hash for a file (an earlier release's run killed before its moves) is no
longer cleared by name: that file is left too (pass 31, h31a N1: tests/test_safety35_f31a.py).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cli_helpers import QLORA, _cli


def _dead(out: Path, content: bytes, recorded: bytes | None) -> Path:
    """A staging folder as a run killed during its moves leaves it: its mark lists ``qlora-7b-12gb.md`` and, when
    ``recorded`` is given, the SHA-256 of those bytes as the hash of the file it staged; the folder holds
    ``content`` under that name."""
    from planner.core import reportset

    dead = out / (reportset.STAGING_PREFIX + "dead5678")
    dead.mkdir(mode=0o700)
    mark = reportset._MARK_HEADER + b'"qlora-7b-12gb.md"\n'
    if recorded is not None:
        line = {"sha256": {"qlora-7b-12gb.md": hashlib.sha256(recorded).hexdigest()}}
        mark += json.dumps(line).encode() + b"\n"
    (dead / reportset.STAGING_MARK).write_bytes(mark)
    (dead / "qlora-7b-12gb.md").write_bytes(content)
    return dead


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_leaves_a_users_file_the_stopped_runs_moves_swapped_in(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert _cli("plan", str(QLORA), "--out", str(out), "--format", "csv").returncode == 0
    dead = _dead(out, b"USER FILE\n", recorded=b"the report planner staged\n")
    r = _cli("plan", str(QLORA), "--out", str(out), "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert (dead / "qlora-7b-12gb.md").read_bytes() == b"USER FILE\n"  # the user's file is where it was
    said = " ".join(r.stderr.split())
    assert f"Left {dead}: it holds qlora-7b-12gb.md (not a file planner wrote" in said, r.stderr
    assert f"so it may be yours, saved at {out / 'qlora-7b-12gb.md'} while that run moved its reports" in said


def test_a_staged_file_whose_hash_the_mark_records_is_removed(tmp_path: Path) -> None:
    from planner.core.reportset import _clear_staging

    dead = _dead(tmp_path, b"the report planner staged\n", recorded=b"the report planner staged\n")
    assert _clear_staging(dead) == []
    assert not dead.exists()


def test_a_staged_file_whose_hash_the_manifest_lists_is_removed(tmp_path: Path) -> None:
    from planner.core.reportset import _clear_staging

    old = b"an old report swapped out\n"
    dead = _dead(tmp_path, old, recorded=b"the report planner staged\n")
    assert _clear_staging(dead, {hashlib.sha256(old).hexdigest()}) == []
    assert not dead.exists()


def test_a_users_edit_under_a_report_name_is_left(tmp_path: Path) -> None:
    from planner.core.reportset import _clear_staging

    staged = b"the report planner staged\n"
    dead = _dead(tmp_path, staged + b"USER EDIT\n", recorded=staged)
    left = _clear_staging(dead, {hashlib.sha256(b"an old report\n").hexdigest()})
    assert [n.split(" ")[0] for n in left] == ["qlora-7b-12gb.md"]
    assert (dead / "qlora-7b-12gb.md").read_bytes() == staged + b"USER EDIT\n"


def test_without_recorded_hashes_a_file_under_a_listed_name_is_left(tmp_path: Path) -> None:
    from planner.core.reportset import _clear_staging

    # an earlier release's run killed while writing its reports: its mark lists the name only, and the file there
    # may be one the user saved (h31a N1): planner cannot tell it wrote it, so it is left
    dead = _dead(tmp_path, b"a report half a run wrote\n", recorded=None)
    assert _clear_staging(dead) == ["qlora-7b-12gb.md (not a file planner wrote: no hash in .planner-reports.json or "
                                    "in the run's staging mark matches, so it may be yours)"]
    assert (dead / "qlora-7b-12gb.md").read_bytes() == b"a report half a run wrote\n"
