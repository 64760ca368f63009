"""Issue 28, hostile pass 24: h24a's findings.

- N1: a note built from a name on the file system (a leftover ``.planner-staging-*`` folder's, a file's inside
  one) is one line: its line feed and tab are shown as '\\n', '\\t', on the terminal and in the API's ``notes``
  (planner.core.names.OneLineNotes, the list ReportSet.notes is).
- m2: a replaced report's set-user-ID / set-group-ID bits are still dropped (the other bits kept), now with a note
  line naming the file, the bits and the chmod that sets them again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from planner.core.atomic import write_text
from planner.core.names import OneLineNotes
from planner.core.reportset import STAGING_PREFIX, ReportSet

from cli_helpers import QLORA, _cli


def _forged(out: Path) -> tuple[Path, Path]:
    """Two foreign staging folders in ``out``: one whose own name holds a line feed, one holding a file whose name
    holds a line feed and a tab (as another user may make them in a shared sticky folder)."""
    named = out / f"{STAGING_PREFIX}ab\nWrote x"
    named.mkdir()
    (named / "f").write_text("x\n")
    holder = out / f"{STAGING_PREFIX}zzzzzzzz"
    holder.mkdir()
    (holder / "f\nError: forged\tline").write_text("x\n")
    return named, holder


def test_a_staging_folder_name_with_a_line_feed_is_one_escaped_note_line(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    named, holder = _forged(out)
    with ReportSet(out) as rs:
        write_text(rs.path("r.csv"), "a\n")
        rs.commit()
    assert (out / "r.csv").read_text() == "a\n"
    assert (named / "f").exists() and (holder / "f\nError: forged\tline").exists()  # left alone
    for note in rs.notes:
        assert "\n" not in note and "\t" not in note, note
    shown_named = str(named).replace("\n", "\\n")
    expected = {f"Left {shown_named}: it holds f, which planner cannot tell it wrote; check it and remove it "
                "yourself.",
                f"Left {holder}: it holds f\\nError: forged\\tline, which planner cannot tell it wrote; check it "
                "and remove it yourself."}
    assert set(rs.notes) == expected


def test_one_line_notes_escape_once_whichever_way_a_note_is_added() -> None:
    notes = OneLineNotes()
    notes.append("a\nb")
    notes.extend(["c\td"])
    notes.insert(0, "e\x1bf")
    notes += ["g\rh"]
    notes.append("a\\nb")  # already escaped: written as it is, not escaped twice
    assert list(notes) == ["e\\x1bf", "a\\nb", "c\\td", "g\\rh", "a\\nb"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_cli_says_the_left_note_on_one_line_each(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    _forged(out)
    r = _cli("plan", str(QLORA), "--out", str(out), "--format", "md")
    assert r.returncode == 0, r.stderr
    starts = [line.split(" ", 1)[0] for line in r.stderr.splitlines() if not line.startswith(" ")]
    assert starts.count("Left") == 2, r.stderr
    assert not any(s in ("Wrote", "Error:") for s in starts), r.stderr  # no line the names forged
    flat = " ".join(r.stderr.split())
    assert "it holds f\\nError: forged\\tline, which planner cannot tell it wrote" in flat, r.stderr
    assert f"{STAGING_PREFIX}ab\\nWrote x: it holds f" in flat, r.stderr
    assert os.path.isdir(out / f"{STAGING_PREFIX}ab\nWrote x")


def _replace(out: Path, mode: int) -> tuple[int, list[str]]:
    """Write r.csv into ``out``, give it ``mode``, replace it; the new file's mode and the run's notes."""
    with ReportSet(out, set_name="s") as rs:
        write_text(rs.path("r.csv"), "a\n")
        rs.commit()
    os.chmod(out / "r.csv", mode)
    with ReportSet(out, set_name="s") as rs:
        write_text(rs.path("r.csv"), "b\n")
        rs.commit()
    assert (out / "r.csv").read_text() == "b\n"
    return stat.S_IMODE(os.stat(out / "r.csv").st_mode), list(rs.notes)


def test_a_replaced_reports_setuid_and_setgid_bits_are_dropped_with_a_note(tmp_path: Path) -> None:
    f = tmp_path / "o" / "r.csv"
    mode, notes = _replace(tmp_path / "o", 0o6754)
    assert mode == 0o754  # the S bits gone, the rest kept
    assert notes == [f"{f}: the new file did not take its set-user-ID and set-group-ID bits (planner never gives a "
                     "file it wrote the right to run as another user or group); its other permission bits were "
                     f"kept. Set them again (chmod u+s,g+s '{f}') if they are needed."]
    mode, notes = _replace(tmp_path / "p", 0o4644)
    g = tmp_path / "p" / "r.csv"
    assert mode == 0o644
    assert notes == [f"{g}: the new file did not take its set-user-ID bit (planner never gives a file it wrote the "
                     "right to run as another user or group); its other permission bits were kept. Set it again "
                     f"(chmod u+s '{g}') if it is needed."]


def test_a_replaced_report_without_those_bits_gets_no_note(tmp_path: Path) -> None:
    mode, notes = _replace(tmp_path / "o", 0o1640)  # sticky: kept, nothing to say
    assert (mode, notes) == (0o1640, [])
