"""Hostile pass h17a, findings fixed on branch f17a1.

1. A late write's copy (``<N>.old.written``) cut short (``ulimit -f``) or empty (disk full) was said as "Kept" (a
   missing file named) and the run exited 0: now the copy is checked (each write's count, fsync, its size against
   the descriptor's) and a failure is an OutputError once the set is in place, naming the partial copy.
2. The cleanup of a killed run's staging folder removed an ``N.old`` a held descriptor wrote to: now one whose
   SHA-256 the manifest does not list is left, and said.
3. A closed standard error (``2>&-``) dropped every note and exited 0: now refused up front, as ``>&-`` is.
Minor: a put-back that met a second save said the two files the wrong way round.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core import moves, renames
from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import STAGING_PREFIX, ReportSet

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"


def _set(out: Path, files: dict[str, str], remove: tuple[str, ...] = ()) -> ReportSet:
    with ReportSet(out, set_name="s") as rs:
        for name, text in files.items():
            write_text(rs.path(name), text)
        for name in remove:
            rs.remove(name)
        rs.commit()
    return rs


def _staging(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]


def _late_write(monkeypatch, fd: int, text: bytes) -> None:
    """``text`` lands through ``fd`` just before planner unlinks the kept previous report ``1.old``: after its
    last hash, so that its bytes must be copied to ``1.old.written``."""
    real = os.unlink

    def unlink(path, *a, **k):
        if Path(path).name == "1.old":
            os.write(fd, text)
        return real(path, *a, **k)

    monkeypatch.setattr(moves.os, "unlink", unlink)


def _writes_to_copy(monkeypatch, allowed: int, err: int) -> None:
    """Writes into a ``.written`` file take at most ``allowed`` bytes in all (a short count, as under ``ulimit -f``,
    where Python ignores SIGXFSZ), then fail with ``err``; every other write is untouched."""
    real, left = os.write, [allowed]

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if not target.endswith(".written"):
            return real(fd, data)
        if left[0] <= 0:
            raise OSError(err, os.strerror(err))
        n = real(fd, bytes(data[:left[0]]))
        left[0] -= n
        return n

    monkeypatch.setattr(moves.os, "write", write)


# ---- 1. a copy cut short is an error, never "Kept" ----

def _run_with_late_write(tmp_path: Path, monkeypatch, allowed: int, err: int) -> tuple[Path, str, tuple]:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x" * 10})
    fd = os.open(out / "a.md", os.O_WRONLY | os.O_APPEND)
    _late_write(monkeypatch, fd, b"LATE")
    _writes_to_copy(monkeypatch, allowed, err)
    try:
        with pytest.raises(OutputError) as caught:
            _set(out, {"a.json": "2"}, remove=("a.md",))
    finally:
        os.close(fd)
        monkeypatch.undo()
    return out, str(caught.value), getattr(caught.value, "notes", None)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_copy_cut_short_is_an_error_naming_the_partial_copy(tmp_path: Path, monkeypatch) -> None:
    out, message, notes = _run_with_late_write(tmp_path, monkeypatch, 4, errno.EFBIG)
    (staging,) = _staging(out)
    # the previous a.md is 10 bytes of x, plus LATE: 14 bytes read through the descriptor; 4 of them saved
    assert (staging / "1.old.written").read_bytes() == b"xxxx"
    assert message == (f"{out / 'a.md'}: the stale report removed there was written to (by a program that held it "
                       "open) after planner moved it away, and planner could not save its bytes (File too large): "
                       f"only 4 of its 14 bytes are in {staging / '1.old.written'}, a partial copy; the rest of that "
                       f"report, with the write, is lost. Planner removes nothing in {staging}. The new reports are "
                       f"in place, whole: {out / 'a.json'}; removed the stale {out / 'a.md'}.")
    assert notes == ()
    assert (out / "a.json").read_text() == "2" and not (out / "a.md").exists()
    assert "Kept" not in message


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_an_empty_copy_on_a_full_disk_is_said_empty(tmp_path: Path, monkeypatch) -> None:
    out, message, _ = _run_with_late_write(tmp_path, monkeypatch, 0, errno.ENOSPC)
    (staging,) = _staging(out)
    assert (staging / "1.old.written").read_bytes() == b""  # made, then nothing written: said as empty
    assert (f"could not save its bytes (No space left on device): {staging / '1.old.written'} is empty; the rest of "
            "that report, with the write, is lost.") in message
    assert f"Kept {staging / '1.old'}" not in message and not (staging / "1.old").exists()


def test_no_copy_made_names_no_missing_file(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    fd = os.open(out / "a.md", os.O_WRONLY | os.O_APPEND)
    _late_write(monkeypatch, fd, b"LATE")
    real_open = os.open

    def no_copy(path, *a, **k):
        if str(path).endswith(".written"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, *a, **k)

    monkeypatch.setattr(moves.os, "open", no_copy)
    try:
        with pytest.raises(OutputError) as caught:
            _set(out, {"a.json": "2"}, remove=("a.md",))
    finally:
        os.close(fd)
        monkeypatch.undo()
    message = str(caught.value)
    (staging,) = _staging(out)
    assert f"(No space left on device): no copy could be made in {staging};" in message
    assert os.listdir(staging) == []  # nothing named as kept, and nothing there


def test_other_notes_come_with_the_error_and_go_before_its_line(tmp_path: Path, monkeypatch) -> None:
    """The CLI says the run's notes (on stderr), then the Error line, exit 2."""
    out = tmp_path / "o"
    real = moves.finish_removal

    def lost(rs, manifest, removed, mark):
        rs.notes.append("A NOTE")
        rs.lost.append("LOST LINE.")
        return real(rs, manifest, removed, mark)

    monkeypatch.setattr(moves, "finish_removal", lost)
    r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out), "--format", "json"])
    lines = r.stderr.splitlines()
    assert r.exit_code == 2, r.output
    assert lines[0] == "A NOTE"
    assert lines[-1] == f"Error: LOST LINE. The new reports are in place, whole: {out / 'qlora-7b-12gb.json'}."


# ---- 2. a killed run's changed N.old is left ----

def _killed_after_the_take(tmp_path: Path, monkeypatch, text: bytes) -> Path:
    """A run that took a.md away as stale (``1.old``), killed before removing it; ``text`` appended to it
    meanwhile (through a descriptor held open)."""
    out = tmp_path / "o"
    _set(out, {"a.json": "1", "a.md": "x"})
    fd = os.open(out / "a.md", os.O_WRONLY | os.O_APPEND)

    class Killed(BaseException):
        pass

    real = ReportSet._move

    def kill(self, *a):  # killed once the moves are done: the manifest is still the one written before them
        real(self, *a)
        os.write(fd, text)
        raise Killed  # SIGKILL: nothing after it runs (the staging folder, its mark and 1.old stay)

    monkeypatch.setattr(ReportSet, "_move", kill)
    monkeypatch.setattr(ReportSet, "__exit__", lambda self, *a: self._unlock())  # the kill frees only the lock
    try:
        with pytest.raises(Killed):
            _set(out, {"a.json": "2"}, remove=("a.md",))
    finally:
        os.close(fd)
        monkeypatch.undo()
    return out


def test_a_killed_runs_changed_previous_report_is_left_and_said(tmp_path: Path, monkeypatch) -> None:
    out = _killed_after_the_take(tmp_path, monkeypatch, b"MY NOTE")
    (staging,) = _staging(out)
    rs = _set(out, {"a.json": "3"})
    # the manifest lists a.md's 'x' and a.json's '1' and '2'; none is the hash of 'xMY NOTE'
    assert (staging / "1.old").read_bytes() == b"xMY NOTE"
    # the staged a.json removed (1 file); the note goes on to say the set may be mixed (killed in its moves)
    assert len(rs.notes) == 1
    assert rs.notes[0].startswith(f"Left {staging}: it holds 1.old (a previous report that no hash in "
                                  ".planner-reports.json matches: it may have been written to after planner moved it "
                                  "away), which planner cannot tell it wrote; check it and remove it yourself. Planner "
                                  "removed the 1 file(s) of reports that a planner run stopped during its moves left "
                                  "there"), rs.notes


def test_a_killed_runs_unchanged_previous_report_is_removed(tmp_path: Path, monkeypatch) -> None:
    out = _killed_after_the_take(tmp_path, monkeypatch, b"")
    (staging,) = _staging(out)
    rs = _set(out, {"a.json": "3"})
    # 1.old is 'x', whose hash the manifest written before the moves lists beside a.md: planner's, removed
    assert not staging.exists()
    assert len(rs.notes) == 1 and rs.notes[0].startswith(f"Removed {staging}, which ")


# ---- 3. a closed standard error is refused up front ----

@pytest.mark.parametrize("args", [["plan", str(SCENARIO), "--out", "o"], ["--version"]])
def test_a_closed_standard_error_is_refused_on_standard_output(tmp_path: Path, args: list[str]) -> None:
    r = subprocess.run([sys.executable, "-c", "from planner.cli.main import main; main()", *args], cwd=tmp_path,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=lambda: os.close(2),
                       text=True, timeout=120)
    assert r.returncode == 2
    assert r.stdout == ("Error: standard error is closed, so the notes and errors planner gives there could not be "
                        "read. Send it to a file or to /dev/null ('2> /dev/null') instead of closing it.\n")
    assert not (tmp_path / "o").exists()  # refused before anything was written


# ---- minor: a put-back that meets a second save says where each file is ----

@pytest.mark.skipif(renames._renameat2() is None, reason="no renameat2 in this C library")
def test_a_second_save_during_the_put_back_is_said_the_right_way_round(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.json": "old json", "r.md": "old md"})
    real_rename, real_place = os.rename, renames.place_new

    def save_then_take(src, dst, *a, **k):  # save 1, as planner takes the stale r.md away
        if Path(src) == out / "r.md":
            (out / ".s1").write_text("SAVE 1")
            os.replace(out / ".s1", out / "r.md")
        return real_rename(src, dst, *a, **k)

    def save_then_put_back(src, dst, *a, **k):  # save 2, as planner puts save 1 back
        if Path(dst) == out / "r.md":
            (out / ".s2").write_text("SAVE 2")
            os.replace(out / ".s2", out / "r.md")
        return real_place(src, dst, *a, **k)

    monkeypatch.setattr(os, "rename", save_then_take)
    monkeypatch.setattr(renames, "place_new", save_then_put_back)
    with pytest.raises(OutputError) as caught:
        _set(out, {"r.json": "new json"}, remove=("r.md",))
    monkeypatch.undo()
    message = str(caught.value)
    (staging,) = _staging(out)
    assert (out / "r.md").read_text() == "SAVE 2" and (staging / "1.old").read_text() == "SAVE 1"
    assert (staging / "r.json").read_text() == "new json" and (out / "r.json").read_text() == "old json"
    assert message == (f"{out / 'r.md'}: was changed while planner was replacing it (an edit saved meanwhile), and "
                       "could not be put back: another file took the name first; the rest of the previous set was "
                       f"put back as it was: nothing was replaced. Another file took the name {out / 'r.md'} "
                       f"meanwhile and was left at it; the file you changed there is kept in {staging / '1.old'}. "
                       f"Planner's new r.json of this run is in {staging} too. Planner removes nothing in {staging}. "
                       "Check those files, move the one you do not want away, and run again.")
