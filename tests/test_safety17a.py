"""Issue 28, hostile pass 12A (report h12a).

3. A replaced report keeps its permission bits but never set-user-ID or set-group-ID.
4. A full disk (ENOSPC) or quota (EDQUOT) when planner makes its first file says so.
5. A temporary folder refused names the variable that named it (TEMP, TMP), not TMPDIR.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

import pytest

from planner.core.atomic import ensure_dir, write_text
from planner.core.errors import DestinationError, OutputError
from planner.core.reportset import ReportSet

ROOT = Path(__file__).resolve().parents[1]


def _previous_set(out: Path) -> None:
    """A set of s.csv, s.json and s.md, for a set of s.csv and s.json to replace (s.md then stale)."""
    with ReportSet(out, set_name="plan s") as rs:
        for ext in ("csv", "json", "md"):
            write_text(rs.path(f"s.{ext}"), f"old {ext}")
        rs.commit()


def _new_set(out: Path) -> None:
    with ReportSet(out, set_name="plan s") as rs:
        write_text(rs.path("s.csv"), "new csv")
        write_text(rs.path("s.json"), "new json")
        rs.remove("s.md")
        rs.commit()


def test_a_replaced_report_never_keeps_setuid_or_setgid(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _previous_set(out)
    os.chmod(out / "s.json", 0o4755)
    os.chmod(out / "s.csv", 0o2640)
    _new_set(out)
    # the permission bits are kept (0o755, 0o640); S_ISUID (0o4000) and S_ISGID (0o2000) are not
    assert stat.S_IMODE(os.stat(out / "s.json").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(out / "s.csv").st_mode) == 0o640
    f = tmp_path / "f.txt"
    f.write_text("old")
    os.chmod(f, 0o6700)
    write_text(f, "new")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o700
    write_text(f, "private", private=True)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o700


@pytest.mark.parametrize("err, said", [
    (errno.ENOSPC, "The folder can be written, but its disk is full: free some space, or give --out a folder on "
                   "another disk."),
    (errno.EDQUOT, "The folder can be written, but your disk quota there is used up: free some space, or give --out "
                   "a folder on another disk."),
])
def test_a_full_disk_at_the_first_file_is_said(tmp_path: Path, monkeypatch, err: int, said: str) -> None:
    def full(*a, **kw):
        raise OSError(err, os.strerror(err))

    out = tmp_path / "o"
    monkeypatch.setattr(tempfile, "mkdtemp", full)  # the staging folder
    raised = None
    try:
        with ReportSet(out, set_name="plan s"):
            pass
    except OutputError as exc:
        raised = str(exc)
    assert raised == f"{out}: cannot write into the output directory ({os.strerror(err)}). {said}"
    assert not out.exists()  # the folder it made is removed again
    monkeypatch.undo()
    monkeypatch.setattr(os, "mkdir", full)  # --out itself
    raised = None
    try:
        ensure_dir(out)
    except OutputError as exc:
        raised = exc
    assert raised is not None and not isinstance(raised, DestinationError)  # a write that failed, not a refusal
    assert str(raised) == f"{out}: cannot create the output directory ({os.strerror(err)}). {said}"


@pytest.mark.parametrize("var", ["TEMP", "TMP"])
def test_a_temporary_folder_refused_names_its_variable(monkeypatch, var: str) -> None:
    from planner.core.tempdir import refuse_protected_temp

    catalog = ROOT / "catalog"
    for v in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, str(catalog))
    monkeypatch.setattr(tempfile, "tempdir", None)
    raised = None
    try:
        refuse_protected_temp()
    except OutputError as exc:
        raised = str(exc)
    assert raised == (f"the temporary folder {catalog} ({var}) is inside planner's own catalog folder ({catalog}), "
                      f"where planner writes nothing, not even temporary files. Set {var} (or TMPDIR, which is read "
                      "first) to another folder, e.g. TMPDIR=/tmp.")

