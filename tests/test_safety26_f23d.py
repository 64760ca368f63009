"""Issue 28, hostile pass 22: A minor m1.

A minor m1: a replaced report, and the manifest rewritten beside it, lost its ``user.*`` extended attributes
(desktop tags and comments) while its mode, group and ACL were kept. They are copied onto the new file now,
before the rename; an attribute that cannot be copied is said in one note line naming it, and the report is
replaced without it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _user_xattrs_or_skip(path: Path) -> None:
    """Skip where this file system takes no ``user.*`` attribute (tmpfs before Linux 6.6, some overlays)."""
    try:
        os.setxattr(path, "user.probe", b"1")
        os.removexattr(path, "user.probe")
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no user extended attributes here ({exc})")


def _plan(out: Path, *extra: str):
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md,csv", *extra])
    assert r.exit_code == 0, r.output
    return r


# ---- A m1: user.* extended attributes survive a replacement

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_replaced_report_and_the_manifest_keep_their_user_xattrs(tmp_path: Path) -> None:
    out = tmp_path / "x"
    _plan(out)
    md, manifest = out / "qlora-7b-12gb.md", out / ".planner-reports.json"
    _user_xattrs_or_skip(md)
    os.setxattr(md, "user.xdg.tags", b"keep")
    os.setxattr(md, "user.xdg.comment", b"reviewed \xff")  # any bytes: copied as they are
    os.setxattr(manifest, "user.note", b"mine")
    inode = os.stat(md).st_ino
    r = _plan(out)
    assert os.stat(md).st_ino != inode  # a new file took the name (the test would pass trivially otherwise)
    assert sorted(os.listxattr(md)) == ["user.xdg.comment", "user.xdg.tags"]
    assert os.getxattr(md, "user.xdg.tags") == b"keep" and os.getxattr(md, "user.xdg.comment") == b"reviewed \xff"
    assert os.listxattr(manifest) == ["user.note"] and os.getxattr(manifest, "user.note") == b"mine"
    assert os.listxattr(out / "qlora-7b-12gb.csv") == []  # none set: none given
    assert "extended attribute" not in r.stderr


def test_an_atomic_write_keeps_user_xattrs(tmp_path: Path) -> None:
    from planner.core.atomic import write_text

    f = tmp_path / "calibration.yaml"
    f.write_text("a\n")
    _user_xattrs_or_skip(f)
    os.setxattr(f, "user.tag", b"t")
    notes: list[str] = []
    write_text(f, "b\n", notes=notes)
    assert f.read_text() == "b\n" and os.getxattr(f, "user.tag") == b"t" and notes == []


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_xattr_that_cannot_be_copied_is_said_in_one_note(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "x"
    _plan(out)
    md = out / "qlora-7b-12gb.md"
    _user_xattrs_or_skip(md)
    os.setxattr(md, "user.a", b"1")
    os.setxattr(md, "user.b\x1b[31m", b"2")  # a name holding ESC: named escaped
    real = os.setxattr

    def refuse_user(target, name, *args, **kwargs):
        if str(name).startswith("user."):
            raise OSError(errno.ENOTSUP, "Operation not supported")
        return real(target, name, *args, **kwargs)

    monkeypatch.setattr(os, "setxattr", refuse_user)
    before = md.read_bytes()
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "md,csv"])
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if "extended attribute" in line]
    assert len(said) == 1, r.stderr  # one line for the report (the manifest has none)
    note = " ".join(r.stderr.split())
    assert f"{md}: its extended attributes " in note
    assert "user.a" in note and "user.b\\x1b[31m" in note and "\x1b" not in r.stderr
    assert ("could not be copied (Operation not supported), so the new file replaced it without them (tags or "
            "comments set on the old file); set them again if they are needed.") in note
    # the report was replaced all the same (a new plan, same bytes here), without the attributes
    assert md.read_bytes() == before and os.listxattr(md) == []


def test_the_note_names_at_most_five_attributes(tmp_path: Path, monkeypatch) -> None:
    from planner.core.aclxattr import keep_user_xattrs

    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("a")
    new.write_text("b")
    _user_xattrs_or_skip(old)
    names = [f"user.n{i}" for i in range(7)]
    for n in names:
        os.setxattr(old, n, b"v")
    fd = os.open(new, os.O_RDONLY)
    try:
        assert keep_user_xattrs(fd, old, old) is None  # copied, nothing said
        assert sorted(os.listxattr(new)) == names
        for n in names:
            os.removexattr(new, n)

        def refuse(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(os, "setxattr", refuse)
        note = keep_user_xattrs(fd, old, old)
    finally:
        os.close(fd)
    assert note is not None and " and 2 more could not be copied (Permission denied)" in note, note
    assert note.startswith(f"{old}: its extended attributes ")
    assert note.count("user.n") == 5
