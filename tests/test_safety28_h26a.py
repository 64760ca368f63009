"""Issue 28, hostile pass 26A N1: a report the owner made read-only (chmod 444, or 000) narrowed the next report
the set gained to the same mode, so the following run refused that new report as "made read-only".

The rule a gained report follows (planner.core.reportset.ReportSet._set_mode, planner.core.access._narrow_to_set)
keeps a set the user made private private: no group, other or ACL permission that a report of the set lacks. The
owner's own bits on one file say nothing about who else may read the set, so they narrow nothing now.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from planner import plan

ROOT = Path(__file__).resolve().parents[1]
QLORA = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("owner_mode", [0o444, 0o000])
def test_a_read_only_report_leaves_the_next_report_writable(tmp_path: Path, owner_mode: int) -> None:
    out = tmp_path / "o"
    plan(QLORA, out=out, format="md")
    md = out / "qlora-7b-12gb.md"
    os.chmod(md, owner_mode)
    plan(QLORA, out=out, format="json")
    new = out / "qlora-7b-12gb.json"
    umask = os.umask(0o022)  # read it (a test may: the library never does)
    os.umask(umask)
    made = 0o666 & ~umask  # what a new report is made with; the set's md then takes group and other bits only
    assert _mode(new) == made & (owner_mode | 0o700), (oct(_mode(new)), oct(made))
    plan(QLORA, out=out, format="json")  # was refused: "is read-only, and planner does not replace ..."
    os.chmod(md, 0o644)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_private_set_still_makes_its_new_report_private(tmp_path: Path) -> None:
    out = tmp_path / "o"
    plan(QLORA, out=out, format="json")
    os.chmod(out / "qlora-7b-12gb.json", 0o600)
    plan(QLORA, out=out, format="json,csv")
    assert _mode(out / "qlora-7b-12gb.csv") == 0o600  # group and other take nothing the set's json keeps out
