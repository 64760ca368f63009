"""Issue 28, hostile pass 24: h24a's findings.

- N1: a note built from a name on the file system (a leftover ``.planner-staging-*`` folder's, a file's inside
  one) is one line: its line feed and tab are shown as '\\n', '\\t', on the terminal and in the API's ``notes``
  (planner.core.names.OneLineNotes, the list ReportSet.notes is).
- m2: a replaced report's set-user-ID / set-group-ID bits are still dropped (the other bits kept), now with a note
  line naming the file, the bits and the chmod that sets them again.
- m1: an existing ``out=`` folder on a read-only file system (or one this user cannot write) is refused before any
  work, as a DestinationError whose API line names ``out=`` (the CLI's ``--out``), as a folder still to be made
  below it is; a staging folder that cannot be made later is a DestinationError too.
- m3: a folder (or, for one still to be made, the folder above it) whose default ACL takes read, write or search
  from the owner's new files is refused up front with a line naming the default ACL and the setfacl that fixes it,
  not "cannot write into the output directory".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import planner
from planner.core.atomic import write_text
from planner.core.errors import DestinationError, InputError
from planner.core.names import OneLineNotes
from planner.core.reportset import STAGING_PREFIX, ReportSet, check_destinations

from cli_helpers import QLORA, _cli
from planner.core.names import path_word  # hints name paths as shell words (h37b N6)


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
                     f"kept. Set them again (chmod u+s,g+s {path_word(f)}) if they are needed."]
    mode, notes = _replace(tmp_path / "p", 0o4644)
    g = tmp_path / "p" / "r.csv"
    assert mode == 0o644
    assert notes == [f"{g}: the new file did not take its set-user-ID bit (planner never gives a file it wrote the "
                     "right to run as another user or group); its other permission bits were kept. Set it again "
                     f"(chmod u+s {path_word(g)}) if it is needed."]


def test_a_replaced_report_without_those_bits_gets_no_note(tmp_path: Path) -> None:
    mode, notes = _replace(tmp_path / "o", 0o1640)  # sticky: kept, nothing to say
    assert (mode, notes) == (0o1640, [])


class _ReadOnlyFs:
    """What os.statvfs gives for a folder on a read-only file system (the flag alone is read)."""
    f_flag = os.ST_RDONLY


def _read_only_fs(monkeypatch, folder: Path) -> None:
    real = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda p: _ReadOnlyFs() if Path(p) == folder else real(p))


def test_a_read_only_out_is_refused_up_front_naming_out_in_the_api(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "ro"
    out.mkdir()
    _read_only_fs(monkeypatch, out)
    said = f"{out}: cannot write into the output directory (Read-only file system). Give out= a directory that " \
        "can be written."
    with pytest.raises(DestinationError) as caught:
        check_destinations(out, ["s.csv"], set_name="s")  # before any work: the planning is after this check
    assert str(caught.value) == said
    assert isinstance(caught.value, InputError)
    assert caught.value.cli_line() == said.replace("Give out=", "Give --out")
    with pytest.raises(DestinationError) as caught:
        planner.plan(str(QLORA), out=out, format="csv")
    assert str(caught.value) == said
    assert os.listdir(out) == []


def test_an_out_this_user_cannot_write_is_refused_up_front(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "no"
    out.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == out and mode & os.W_OK
                        else real(p, mode, **kw))  # as a folder without write for a user who is not root
    with pytest.raises(DestinationError) as caught:
        check_destinations(out, ["s.csv"], set_name="s")
    assert str(caught.value) == (f"{out}: cannot write into the output directory (Permission denied). Give out= a "
                                 "directory that can be written.")


def test_a_staging_folder_that_cannot_be_made_is_said_in_the_apis_words(tmp_path: Path, monkeypatch) -> None:
    import errno
    import tempfile

    def refused(*a, **kw):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    out = tmp_path / "o"
    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    with pytest.raises(DestinationError) as caught:
        with ReportSet(out, set_name="s"):
            pass
    said = f"{out}: cannot write into the output directory ({os.strerror(errno.EACCES)}). Give --out a directory " \
        "that can be written."
    assert caught.value.cli_line() == said
    assert str(caught.value) == said.replace("Give --out", "Give out=")


def _default_acl(folder: Path, owner: int) -> None:
    """setfacl -d -m u::<owner>,g::r-x,o::r-x ``folder`` (the xattr as the kernel holds it), or skip."""
    import struct

    entries = [(0x01, owner), (0x04, 5), (0x20, 5)]  # ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_OTHER
    raw = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xFFFFFFFF) for tag, perm in entries)
    try:
        os.setxattr(folder, "system.posix_acl_default", raw)
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no POSIX ACLs here: {exc}")


def test_a_default_acl_taking_the_owners_write_is_said_as_what_it_is(tmp_path: Path) -> None:
    out = tmp_path / "acl"
    out.mkdir()
    _default_acl(out, 0o5)  # u::r-x
    fix = (f"so planner could not write its reports and check them. Give the owner rwx there (setfacl -d -m u::rwx "
           f"{path_word(out)}) or remove that default ACL (setfacl -k {path_word(out)}), and try again.")
    with pytest.raises(DestinationError) as caught:
        check_destinations(out, ["s.csv"], set_name="s")
    assert str(caught.value) == (f"{out}: its default ACL takes write permission from your own new files and folders "
                                 f"(user::r-x, as getfacl -d {path_word(out)} shows), {fix}")
    new = out / "new" / "deeper"
    with pytest.raises(DestinationError) as caught:
        check_destinations(new, ["s.csv"], set_name="s")
    assert str(caught.value) == (f"{new}: the folder {out} it would be made in has a default ACL that takes write "
                                 f"permission from your own new files and folders (user::r-x, as getfacl -d {path_word(out)} "
                                 f"shows), {fix}")
    assert os.listdir(out) == []  # nothing made
    _default_acl(out, 0o3)  # u::-wx: read taken
    with pytest.raises(DestinationError) as caught:
        with ReportSet(out, set_name="s"):
            pass
    assert "its default ACL takes read permission from your own new files and folders (user::-wx," in str(caught.value)
    assert os.listdir(out) == []


def test_a_default_acl_that_gives_the_owner_rwx_is_written_into(tmp_path: Path) -> None:
    out = tmp_path / "acl"
    out.mkdir()
    _default_acl(out, 0o7)
    with ReportSet(out, set_name="s") as rs:
        write_text(rs.path("s.csv"), "a\n")
        rs.commit()
    assert (out / "s.csv").read_text() == "a\n"
