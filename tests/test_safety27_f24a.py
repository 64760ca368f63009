"""Issue 28, hostile pass 24: h24a's findings.

- N1: a note built from a name on the file system (a leftover ``.planner-staging-*`` folder's, a file's inside
  one) is one line: its line feed and tab are shown as '\\n', '\\t', on the terminal and in the API's ``notes``
  (planner.core.names.OneLineNotes, the list ReportSet.notes is).
"""

from __future__ import annotations

import os
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

