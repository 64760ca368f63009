"""Issue 28, hostile pass 31: a stopped run's staging folder is cleared by recorded hashes only; out of inodes.

Covers (report h31a):
* N1: a run killed while it still writes its reports left a staging mark listing names without hashes, and the
  next run removed any file of a listed name there, whatever it held. Now each staged report's SHA-256 and size are
  recorded in the mark as soon as the file is complete (before it takes its name), and each temporary's exact name
  before it is made (planner.core.atomic.write_bytes, planner.core.stagemark); the cleanup removes a file of a listed
  name only when its hash is recorded (in the mark or the manifest), a temporary only when its exact name is; a mark
  of an earlier release (names, one hash line at the end) still works; a hand-made mark naming a path ('..', '/')
  is not planner's and its folder is left whole, said.
* m2: ENOSPC on a file system with free space but no free inodes is said as that (df -i), not as a full disk; the
  note for a manifest not rewritten after the moves speaks of previous reports only where there were some.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.core.reportset import STAGING_MARK, STAGING_PREFIX, ReportSet, _clear_staging

ROOT = Path(__file__).resolve().parents[1]

#: A run stopped (os._exit, as SIGKILL stops it: no cleanup) at the rename of its second report, x.md: x.csv is
#: staged whole, x.md's temporary is written whole and recorded.
_KILLED_AT_THE_MD = """
import os, sys
from pathlib import Path
from planner.core.atomic import write_text
from planner.core.reportset import ReportSet

rs = ReportSet(Path(sys.argv[1]), set_name="plan x").__enter__()
write_text(rs.path("x.csv"), "a,b\\n")
import planner.core.renames as renames
renames.place_staged = lambda *args, **kw: os._exit(9)  # the staged report's rename, which never replaces (h33a N1)
write_text(rs.path("x.md"), "# x\\n")
"""


def _killed_run(out: Path) -> Path:
    """Run :data:`_KILLED_AT_THE_MD` into ``out``; the staging folder it left."""
    r = subprocess.run([sys.executable, "-c", _KILLED_AT_THE_MD, str(out)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True)
    assert r.returncode == 9, r.stderr
    (folder,) = [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]
    return folder


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_mark_records_each_temporary_and_each_complete_report_as_written(tmp_path: Path) -> None:
    folder = _killed_run(tmp_path / "o")
    (tmp,) = [p.name for p in folder.iterdir() if p.name.startswith(".x.md.")]
    csv_tmp = json.loads(folder.joinpath(STAGING_MARK).read_text().splitlines()[3])["tmp"]
    lines = [json.loads(x) for x in folder.joinpath(STAGING_MARK).read_text().splitlines()[1:]]
    st = os.lstat(folder)
    assert lines.pop(0) == {"folder": [st.st_dev, st.st_ino]}  # the folder the run made (h34a N2)
    # the name, the temporary's name before it is made, the complete file's hash, size, device and inode (h33a N1)
    # before it takes its name: x.csv has its temporary's inode (renamed), x.md's temporary is still there
    made = {n: [os.lstat(folder / n).st_dev, os.lstat(folder / n).st_ino] for n in ("x.csv", tmp)}
    assert lines == ["x.csv", {"tmp": csv_tmp},
                     {"sha256": {"x.csv": _sha(b"a,b\n")}, "bytes": {"x.csv": 4}, "made": made["x.csv"]},
                     "x.md", {"tmp": tmp}, {"sha256": {"x.md": _sha(b"# x\n")}, "bytes": {"x.md": 4}, "made": made[tmp]}]
    assert sorted(p.name for p in folder.iterdir()) == sorted([STAGING_MARK, tmp, "x.csv"])


def test_a_killed_runs_files_go_and_a_users_file_under_a_listed_name_stays(tmp_path: Path) -> None:
    out = tmp_path / "o"
    folder = _killed_run(out)
    (folder / "x.csv").write_text("my own notes\n")  # not what planner wrote
    with ReportSet(out, set_name="plan x") as rs:
        notes = list(rs.notes)
    assert sorted(p.name for p in folder.iterdir()) == [STAGING_MARK, "x.csv"]  # the recorded temporary went
    assert (folder / "x.csv").read_text() == "my own notes\n"
    assert notes[0].startswith(f"Left {folder}: it holds x.csv (not a file planner wrote: no hash in "
                               ".planner-reports.json or in the run's staging mark matches, so it may be yours), "
                               "which planner cannot tell it wrote; check it and remove it yourself. Planner removed "
                               # the recorded temporary of x.md: said as one, not as a report (h33a m3)
                               "the 1 unfinished temporary file(s) that a stopped planner run left there"), notes
    # unchanged, the killed run's files are all recognised: the folder goes
    folder = _killed_run(tmp_path / "p")
    with ReportSet(tmp_path / "p", set_name="plan x") as rs:
        notes = list(rs.notes)
    assert not folder.exists()
    # x.csv, staged whole, and x.md's temporary, said as what each is (h33a m3); nothing was moved: no "may mix"
    assert notes[0] == (f"Removed {folder}, which a stopped planner run left, with 1 file(s) of its reports and 1 "
                        "unfinished temporary file(s).")


def _dead(out: Path, mark: list[object], files: dict[str, bytes]) -> Path:
    """A staging folder as planner makes one (mode 0700), its mark's entries ``mark``, holding ``files``."""
    folder = out / (STAGING_PREFIX + "dead1234")
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder, 0o700)
    (folder / STAGING_MARK).write_text("planner staging folder 1\n" + "".join(json.dumps(x) + "\n" for x in mark))
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_an_earlier_releases_mark_without_hashes_removes_nothing_by_name(tmp_path: Path) -> None:
    # a run of an earlier release killed while writing: the names only, a temporary not recorded
    folder = _dead(tmp_path, ["r.csv", "r.md"], {"r.csv": b"user precious csv\n", ".r.md.0123abcd.tmp": b"# r"})
    left = _clear_staging(folder)
    # the note adds "which planner cannot tell it wrote" once (h33a m5)
    assert left == [".r.md.0123abcd.tmp (an unfinished write whose name the run's staging mark does not record)",
                    "r.csv (not a file planner wrote: no hash in .planner-reports.json or in the run's staging mark "
                    "matches, so it may be yours)"]
    assert (folder / "r.csv").read_bytes() == b"user precious csv\n" and (folder / ".r.md.0123abcd.tmp").is_file()


def test_an_earlier_releases_mark_with_its_one_hash_line_still_works(tmp_path: Path) -> None:
    # killed during its moves: the names, then one line of every staged report's hash (no sizes)
    mark = ["r.csv", "r.json", {"sha256": {"r.csv": _sha(b"csv\n"), "r.json": _sha(b"{}\n")}}]
    folder = _dead(tmp_path, mark, {"r.csv": b"csv\n", "r.json": b"{\"user\": 1}\n"})
    left = _clear_staging(folder)
    assert left == [f"r.json (not a file planner wrote: no hash in .planner-reports.json or in the run's staging "
                    f"mark matches, so it may be yours, saved at {tmp_path / 'r.json'} while that run moved its "
                    "reports)"]
    assert sorted(p.name for p in folder.iterdir()) == [STAGING_MARK, "r.json"]
    (folder / "r.json").write_bytes(b"{}\n")  # the report planner staged: recognised, and the folder goes
    assert _clear_staging(folder) == [] and not folder.exists()


def test_a_hand_made_mark_naming_a_path_leaves_its_folder_whole(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("victim\n")
    for entry in ["../victim.txt", str(victim), {"tmp": "../victim.txt"}, ".."]:
        out = tmp_path / "o"
        folder = _dead(out, [entry, "r.json"], {"r.json": b"mine\n"})
        with ReportSet(out, set_name="plan r") as rs:
            notes = list(rs.notes)
        assert sorted(p.name for p in folder.iterdir()) == [STAGING_MARK, "r.json"], entry  # nothing removed
        assert victim.read_text() == "victim\n" and (folder / "r.json").read_bytes() == b"mine\n"
        name = entry["tmp"] if isinstance(entry, dict) else entry
        assert notes == [f"Left {folder}: it holds {STAGING_MARK} (not a mark planner wrote: its entry "
                         f"{json.dumps(name)} is not a file name in that folder), r.json, which planner cannot tell "
                         "it wrote; check it and remove it yourself."], notes
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def test_the_hash_is_recorded_before_the_report_takes_its_name_and_the_temporary_before_it_is_made(
        tmp_path: Path, monkeypatch) -> None:
    from planner.core import stagerecord
    from planner.core.atomic import write_text

    from planner.core import renames

    seen = []
    real_temp, real_place = stagerecord.record_temp, renames.place_staged

    def record_temp(mark: Path, tmp: str) -> None:
        seen.append(("temp", os.path.lexists(tmp)))  # not made yet
        real_temp(mark, tmp)

    def place(src, dst, **kw) -> None:  # the staged report's rename, which never replaces (h33a N1)
        if Path(dst).parent.name.startswith(STAGING_PREFIX):
            mark = (Path(dst).parent / STAGING_MARK).read_text()
            # the line's start: its device and inode ("made") follow (h33a N1)
            line = json.dumps({"sha256": {"a.md": _sha(b"hi\n")}, "bytes": {"a.md": 3}})[:-1] + ", \"made\": ["
            seen.append(("rename", line in mark))
        real_place(src, dst, **kw)

    monkeypatch.setattr(stagerecord, "record_temp", record_temp)
    monkeypatch.setattr(renames, "place_staged", place)
    with ReportSet(tmp_path / "o", set_name="plan a") as rs:
        write_text(rs.path("a.md"), "hi\n")
        rs.commit()
    assert seen == [("temp", False), ("rename", True)]
    assert (tmp_path / "o" / "a.md").read_text() == "hi\n"


# -- m2: out of inodes; the note for a manifest not rewritten after the moves ----------------------------------------

def _statvfs(files: int, favail: int, bavail: int) -> os.statvfs_result:
    """A statvfs result with ``files`` inodes, ``favail`` of them free, and ``bavail`` free blocks."""
    # f_bsize, f_frsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_favail, f_flag, f_namemax
    return os.statvfs_result((4096, 4096, 1000, bavail, bavail, files, favail, favail, 0, 255))


def test_enospc_with_free_space_but_no_free_inodes_is_said_as_that(tmp_path: Path, monkeypatch) -> None:
    from planner.core import atomic
    from planner.core.errors import OutputError

    full = OSError(errno.ENOSPC, "No space left on device")
    inodes = ("its file system has no free inodes (no more files can be made there, though 'df -h' may show free "
              "space; 'df -i' shows it)")
    monkeypatch.setattr(os, "statvfs", lambda p: _statvfs(files=20, favail=0, bavail=900))
    assert atomic.full_hint(full, tmp_path / "not" / "made") == (
        f"The folder can be written, but {inodes}: remove files there, or give --out a folder on another disk.")

    def no_inode(directory, name, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "_new_temp", no_inode)
    with pytest.raises(OutputError) as info:
        atomic.write_text(tmp_path / "a.md", "x")
    said = str(info.value)
    assert said == (f"{tmp_path / 'a.md'}: cannot write (No space left on device): {inodes}. Remove files there, or "
                    "write to another file system.")
    # free inodes (or none counted, f_files 0): a full disk, as before
    for files, favail, bavail in [(20, 3, 0), (0, 0, 900), (20, 0, 0)]:
        monkeypatch.setattr(os, "statvfs", lambda p: _statvfs(files, favail, bavail))
        assert atomic.full_hint(full, tmp_path) == ("The folder can be written, but its disk is full: free some "
                                                    "space, or give --out a folder on another disk.")
        with pytest.raises(OutputError) as info:
            atomic.write_text(tmp_path / "a.md", "x")
        said = str(info.value)
        assert said.endswith("Check that its directory is writable and the disk has room."), said


def _failing_second_manifest(monkeypatch) -> None:
    """The manifest written after the moves fails (a disk out of inodes then), as planner.core.reportset calls it."""
    from planner.core import reportset
    from planner.core.errors import OutputError

    real, calls = reportset.write_manifest, []

    def write_manifest(out_dir: Path, files: dict, notes: list | None = None) -> None:
        calls.append(files)
        if len(calls) == 2:
            raise OutputError(f"{out_dir / reportset.MANIFEST}: cannot write (No space left on device).")
        real(out_dir, files, notes)

    monkeypatch.setattr(reportset, "write_manifest", write_manifest)


def test_the_manifest_note_on_a_new_folder_speaks_of_no_previous_reports(tmp_path: Path, monkeypatch) -> None:
    from planner.core.atomic import write_text
    from planner.core.manifest import read_manifest

    out = tmp_path / "new"
    _failing_second_manifest(monkeypatch)
    with ReportSet(out, set_name="plan a") as rs:
        write_text(rs.path("a.md"), "# a\n")
        rs.commit()
    assert list(rs.notes) == [f"The reports are in place, and the manifest written before they were moved already "
                              f"lists them as they are; writing it again failed: {out / '.planner-reports.json'}: "
                              "cannot write (No space left on device)."]
    assert read_manifest(out)["a.md"]["sha256"] == [_sha(b"# a\n")]  # as it is: nothing previous in it


def test_the_manifest_note_names_a_removed_stale_report_it_still_lists(tmp_path: Path, monkeypatch) -> None:
    from planner.core.atomic import write_text

    out = tmp_path / "o"
    with ReportSet(out, set_name="plan a") as rs:
        write_text(rs.path("a.md"), "# a\n")
        rs.commit()
    _failing_second_manifest(monkeypatch)
    with ReportSet(out, set_name="plan a") as rs:
        write_text(rs.path("a.csv"), "x\n")
        rs.remove("a.md")
        rs.commit()
    assert list(rs.notes) == [f"The reports are in place, but the manifest was not brought up to date: "
                              f"{out / '.planner-reports.json'}: cannot write (No space left on device). It still "
                              "lists the stale report removed (a.md), which the next run into this folder clears."]
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", "a.csv"]
