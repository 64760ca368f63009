"""Findings of hostile pass h16a fixed on branch f16a1.

2. A set made private while a run that gains a format moves it: the gained report is narrowed, after the moves, to
   the set's reports as they are then (not only as they were when it was staged), with a note. When the set is put
   back (an edit saved meanwhile), a chmod made on a new report in the window is carried onto the previous report
   put back, and said in the error line.
4. A previous report written to (through a descriptor held open) after the moves hashed it is kept, not unlinked:
   a stale report put back at its name, a replaced one kept in the staging folder, with a note; a write landing
   between the last hash and the unlink is saved from the same descriptor (``<name>.written``).

Races are staged by wrapping :func:`planner.core.renames.exchange` (the change lands just before the swap, as a
user's command in that window would) or :meth:`ReportSet._move` (just after the moves hashed what they took).
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

import pytest

from planner.core import moves, renames
from planner.core.access import USER, parse_acl
from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import ReportSet

ACL = "system.posix_acl_access"
NOBODY = 65534  # a uid the ACL names; no account of it is needed
NO_ID = 0xFFFFFFFF
needs_swap = pytest.mark.skipif(renames._renameat2() is None, reason="no renameat2 in this C library")


def _set(out: Path, files: dict[str, str], remove: tuple[str, ...] = ()) -> ReportSet:
    with ReportSet(out, set_name="s") as rs:
        for name, text in files.items():
            write_text(rs.path(name), text)
        for name in remove:
            rs.remove(name)
        rs.commit()
    return rs


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _swap_hook(monkeypatch, change) -> None:
    """Call ``change(n, dst)`` just before the n-th swap (n from 1) of the run."""
    real, count = renames.exchange, [0]

    def late(a: Path, b: Path) -> bool:
        count[0] += 1
        change(count[0], Path(b))
        return real(a, b)

    monkeypatch.setattr(renames, "exchange", late)


# ---- 2. a set made private during the moves ----

@needs_swap
def test_a_gained_report_follows_a_chmod_made_during_the_moves(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    os.chmod(out / "a.json", 0o644)
    # the user makes the set private just before a.json is swapped: the new a.json gets 0644 & 0600 = 0600 (the
    # swap's recheck); a.md, staged with the set's 0644 before that, must end no wider: 0644 & 0600 = 0600
    _swap_hook(monkeypatch, lambda n, p: os.chmod(p, 0o600) if n == 1 else None)
    rs = _set(out, {"a.json": "2", "a.md": "3"})
    assert (_mode(out / "a.json"), _mode(out / "a.md")) == (0o600, 0o600)
    note = rs.notes[-1]
    assert note == (f"{out / 'a.md'}: the set's other reports were made more private (permissions, ACL or group) "
                    "while planner moved them into place; the new report, which the set gained, has the narrowest of "
                    "their settings (mode 0600).")


@needs_swap
def test_a_gained_report_follows_a_setfacl_made_during_the_moves(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    os.chmod(out / "a.json", 0o644)
    # u::rw-, u:nobody:---, g::r--, m::r--, o::r-- (what `setfacl -m u:nobody:--- a.json` makes of a 0644 file)
    deny = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in [
        (0x01, 6, NO_ID), (0x02, 0, NOBODY), (0x04, 4, NO_ID), (0x10, 4, NO_ID), (0x20, 4, NO_ID)])
    try:
        probe = tmp_path / "probe"
        probe.write_text("p")
        os.setxattr(probe, ACL, deny)
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no POSIX ACLs here ({exc})")
    _swap_hook(monkeypatch, lambda n, p: os.setxattr(p, ACL, deny) if n == 1 else None)
    _set(out, {"a.json": "2", "a.md": "3"})
    acl = parse_acl(os.getxattr(out / "a.md", ACL), 0)
    assert acl[(USER, NOBODY)] == 0  # nobody, kept out of a.json in the window, is kept out of the gained a.md


@needs_swap
def test_nothing_changed_during_the_moves_gives_a_gained_report_no_note(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    os.chmod(out / "a.json", 0o640)
    rs = _set(out, {"a.json": "2", "a.md": "3"})
    assert _mode(out / "a.md") == 0o640 and rs.notes == []


@needs_swap
def test_a_chmod_made_before_the_set_is_put_back_is_kept(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    os.chmod(out / "a.json", 0o644)
    os.chmod(out / "a.md", 0o644)

    def user(n: int, p: Path) -> None:
        if n == 2:  # a.json already holds the new report: chmod it; then save an edit to a.md (set put back)
            os.chmod(out / "a.json", 0o600)
            with open(out / "a.md", "a") as fh:
                fh.write("my note\n")

    _swap_hook(monkeypatch, user)
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.json": "2", "a.md": "y"})
    msg = str(caught.value)
    # the previous a.json is back (its bytes "1") with the user's 0600 (0644 & 0600), and that is said
    assert (out / "a.json").read_text() == "1" and _mode(out / "a.json") == 0o600
    assert msg.endswith(f" {out / 'a.json'}: its permissions, ACL or group were changed while planner was replacing "
                        "it; the previous report put back has that change too (mode 0600).")
    assert (out / "a.md").read_text() == "xmy note\n"


@needs_swap
def test_a_widening_chmod_before_the_set_is_put_back_is_not_carried(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    os.chmod(out / "a.json", 0o600)

    def user(n: int, p: Path) -> None:
        if n == 2:
            os.chmod(out / "a.json", 0o644)
            with open(out / "a.md", "a") as fh:
                fh.write("my note\n")

    _swap_hook(monkeypatch, user)
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.json": "2", "a.md": "y"})
    msg = str(caught.value)
    assert _mode(out / "a.json") == 0o600  # 0600 & 0644: the put-back file is never widened
    assert msg.endswith(f" {out / 'a.json'}: its permissions or ACL were changed while planner was replacing it, to "
                        "let more users read it; the previous report put back keeps its own setting (mode 0600). "
                        "Change it again if that was meant.")


# ---- 4. a write through a descriptor held open, after the moves hashed the file ----

def _write_after_moves(monkeypatch, fd: int, text: bytes) -> None:
    real = ReportSet._move

    def late(self, removed, manifest, digests):
        done = real(self, removed, manifest, digests)
        os.write(fd, text)  # lands in the previous file, now in the staging folder, already hashed
        return done

    monkeypatch.setattr(ReportSet, "_move", late)


def test_a_stale_report_written_to_after_the_moves_is_put_back(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    fd = os.open(out / "a.md", os.O_WRONLY | os.O_APPEND)
    try:
        _write_after_moves(monkeypatch, fd, b"MY NOTE\n")
        rs = _set(out, {"a.json": "2"}, remove=("a.md",))
    finally:
        os.close(fd)
    assert (out / "a.md").read_text() == "xMY NOTE\n" and rs.removed == []
    assert rs.notes == [f"Kept {out / 'a.md'}: it was written to (by a program that held it open) after planner took "
                        "it away as a stale report, so it was put back with that change; planner no longer lists it "
                        "as its report."]
    assert sorted(os.listdir(out)) == [".planner-reports.json", "a.json", "a.md"]
    monkeypatch.undo()
    rs = _set(out, {"a.json": "2"}, remove=("a.md",))  # no longer planner's: the next run keeps it
    assert (out / "a.md").exists() and rs.removed == []


@needs_swap
def test_a_replaced_report_written_to_after_the_moves_is_kept(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    fd = os.open(out / "a.json", os.O_WRONLY | os.O_APPEND)
    try:
        _write_after_moves(monkeypatch, fd, b"MY NOTE")
        rs = _set(out, {"a.json": "2"})
    finally:
        os.close(fd)
    assert (out / "a.json").read_text() == "2"
    staging = [p for p in out.iterdir() if p.name.startswith(".planner-staging-")]
    assert len(staging) == 1 and (staging[0] / "a.json").read_text() == "1MY NOTE"
    assert rs.notes == [f"Kept {staging[0] / 'a.json'}: the previous report replaced at {out / 'a.json'} was written "
                        f"to (by a program that held it open) after planner moved it away; planner removes nothing in "
                        f"{staging[0]}. Check it and remove it yourself."]


def test_a_write_between_the_last_hash_and_the_unlink_is_saved(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    fd = os.open(out / "a.md", os.O_WRONLY | os.O_APPEND)
    real = os.unlink

    def unlink(path, *a, **k):  # the write lands just before planner's unlink of the kept a.md ("1.old")
        if Path(path).name == "1.old":
            os.write(fd, b"LATE")
        return real(path, *a, **k)

    monkeypatch.setattr(moves.os, "unlink", unlink)
    try:
        rs = _set(out, {"a.json": "2"}, remove=("a.md",))
    finally:
        os.close(fd)
        monkeypatch.undo()
    staging = [p for p in out.iterdir() if p.name.startswith(".planner-staging-")]
    assert len(staging) == 1 and (staging[0] / "1.old.written").read_text() == "xLATE"
    assert rs.notes[-1].startswith(f"Kept {staging[0] / '1.old.written'}: the stale report removed at {out / 'a.md'}")


def test_unchanged_previous_files_are_removed_with_no_note(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    rs = _set(out, {"a.json": "2"}, remove=("a.md",))
    assert rs.removed == [out / "a.md"] and rs.notes == []
    assert sorted(os.listdir(out)) == [".planner-reports.json", "a.json"]


# ---- minor: say what a report is, not "changed"; no whole hash of a file of another size ----

def test_a_listed_report_replaced_by_a_link_is_said_to_be_a_link(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    (out / "a.md").rename(tmp_path / "keep.md")
    (out / "a.md").symlink_to(tmp_path / "keep.md")  # a link to a copy of planner's own report
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.json": "1", "a.md": "x"})
    msg = caught.value.cli_line()  # as the command line says it (str() names out=, the API's keyword: h19a M1)
    assert msg == (f"{out / 'a.md'}: is not a regular file (a symbolic link), which planner never writes "
                   f"(see {out / '.planner-reports.json'}), and planner never replaces or removes such a file. Move "
                   "it away or give another --out.")


def test_an_unreadable_listed_report_is_said_to_be_unreadable(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.md": "x"})
    os.chmod(out / "a.md", 0)
    if os.access(out / "a.md", os.R_OK):  # root reads it anyway: stand in for a user who cannot
        from planner.core import destinations

        real_access = os.access  # the report alone: the folder stays writable (f24a refuses an unwritable one first)
        monkeypatch.setattr(destinations, "own_file_sha256", lambda p: None)
        monkeypatch.setattr(destinations.os, "access",
                            lambda p, m, **k: False if os.fspath(p) == os.fspath(out / "a.md") else real_access(p, m, **k))
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.md": "y"})
    monkeypatch.undo()
    msg = caught.value.cli_line()  # as the command line says it (str() names out=, the API's keyword: h19a M1)
    assert msg == (f"{out / 'a.md'}: is a file planner cannot read (no read permission), so it cannot tell it is the "
                   f"report it wrote (see {out / '.planner-reports.json'}), and planner never replaces or removes "
                   f"such a file. Give it read permission again (chmod u+r {out / 'a.md'}), move it away or give "
                   "another --out.")


@needs_swap
def test_a_chmod_000_during_the_swap_is_said_as_a_permission_change(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    real_access = os.access
    if os.geteuid() == 0:  # root reads a 000 file: stand in for a user who cannot (the hash too)
        real_sha = moves._sha256
        monkeypatch.setattr(moves, "_sha256", lambda p: None if stat.S_IMODE(os.lstat(p).st_mode) == 0 else real_sha(p))
        monkeypatch.setattr(moves.os, "access", lambda p, m, **k: stat.S_IMODE(os.lstat(p).st_mode) & 0o400 != 0)
    _swap_hook(monkeypatch, lambda n, p: os.chmod(p, 0) if n == 1 else None)
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.json": "2"})
    monkeypatch.undo()
    assert real_access is os.access
    msg = str(caught.value)
    assert msg == (f"{out / 'a.json'}: its permissions were changed while planner was replacing it, so that planner "
                   "cannot read it to check it is the report it wrote; it was put back as it is, and the rest of the "
                   f"previous set as it was: nothing was replaced. Give it read permission again (chmod u+r "
                   f"{out / 'a.json'}) and run again.")
    os.chmod(out / "a.json", 0o600)
    assert (out / "a.json").read_text() == "1"


@needs_swap
def test_a_link_swapped_in_during_the_moves_is_said_to_be_a_link(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    (tmp_path / "copy.json").write_text("1")

    def user(n: int, p: Path) -> None:
        if n == 1:  # the first swap (the second puts the set back)
            p.unlink()
            p.symlink_to(tmp_path / "copy.json")

    _swap_hook(monkeypatch, user)
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.json": "2"})
    msg = str(caught.value)
    assert msg == (f"{out / 'a.json'}: was replaced by a folder, a link or a pipe while planner was replacing it; that "
                   "was put back as it is, and the rest of the previous set as it was: nothing was replaced. Move it "
                   "away and run again.")
    assert (out / "a.json").is_symlink()


@needs_swap
def test_a_file_saved_at_a_gained_name_during_the_moves_is_said_to_be_created(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1"})
    _swap_hook(monkeypatch, lambda n, p: (out / "a.md").write_text("my own md") if n == 1 else None)
    with pytest.raises(OutputError) as caught:
        _set(out, {"a.json": "2", "a.md": "3"})
    msg = str(caught.value)
    assert msg.startswith(f"{out / 'a.md'}: was created while planner was writing the reports (by another program)")
    assert (out / "a.md").read_text() == "my own md" and (out / "a.json").read_text() == "1"


def test_a_listed_report_of_another_size_is_not_hashed(tmp_path: Path, monkeypatch) -> None:
    from planner.core import destinations

    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    with open(out / "a.md", "ab") as fh:
        fh.truncate(2**20)  # sparse; any size but 1 byte, the one the manifest lists
    hashed = []
    real = destinations.own_file_sha256
    monkeypatch.setattr(destinations, "own_file_sha256", lambda p: hashed.append(Path(p).name) or real(p))
    rs = _set(out, {"a.json": "2"}, remove=("a.md",))
    assert "a.md" not in hashed and (out / "a.md").exists()
    assert rs.notes == [f"Kept {out / 'a.md'}, a name of this report set not written this time: it changed since "
                        "planner wrote it."]


def test_manifest_sizes_are_kept_only_beside_every_hash() -> None:
    from planner.core.reportset import _entry

    # a new entry: its hash and size; during the moves the previous file's follow, sizes only where it had one
    assert _entry("s", "aa", 3) == {"sha256": ["aa"], "set": "s", "bytes": [3]}
    assert _entry("s", "aa", 3, {"sha256": ["bb"], "set": "s", "bytes": [5]}) == {
        "sha256": ["aa", "bb"], "set": "s", "bytes": [3, 5]}
    assert _entry("s", "aa", 3, {"sha256": ["bb"], "set": "s"}) == {"sha256": ["aa", "bb"], "set": "s"}
