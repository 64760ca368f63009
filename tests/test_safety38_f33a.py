"""Issue 28, hostile pass 33 (reports h33a, h33b): the staging folders' clean-ups.

* h33a N1 = h33b N2: a live run removed from its own staging folder, by name pattern, a ``<digits>.old`` or a
  temporary-like file another program put there; a staged report's rename replaced a file put at its name.
* h33a N4: the same names were unlinked twice more unchecked after the checked removal, and a file another program
  created at the temporary name planner was about to open was removed at the end.
* h33a m1: the run that left another program's file in its staging folder said nothing (only the next run did).
* h33a N2 = h33b N3: a hand-made mark listing ``notes.txt`` (with its hash, or a ``{"tmp": ...}`` entry) got a user
  file removed.
* h33a m2: a mark (or staging folder) others can write was trusted, unlike the manifest.
* h33a m3 = h33b m6: a stopped run's half-written temporary was counted as a report, with a "may mix" warning.
* h33a m5: "which planner cannot tell it wrote" said twice in one note.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from planner.core import renames, stagerecord
from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import STAGING_MARK, STAGING_PREFIX, ReportSet, _clear_staging
from planner.core.stagemark import report_name

USER = "user data\n"


def _set(out: Path, files: dict[str, str], drop: tuple[str, ...] = ()) -> ReportSet:
    """Write ``files`` as one report set into ``out``; ``drop``: files another program puts into the live staging
    folder before the commit. The ReportSet, after its with block (its notes complete)."""
    with ReportSet(out, set_name="plan r") as rs:
        for name, text in files.items():
            write_text(rs.path(name), text)
        for name in drop:
            (rs._staging / name).write_text(USER)
        rs.commit()
    return rs


def _staging(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]


# -- N1, m1: another program's file in the live staging folder --------------------------------------------------------

@pytest.mark.parametrize("previous", [False, True])
def test_files_another_program_puts_in_the_live_staging_folder_are_left_and_said(tmp_path: Path,
                                                                                  previous: bool) -> None:
    out = tmp_path / "o"
    if previous:  # a set to replace: the moves swap (or keep <i>.old) in the staging folder
        _set(out, {"r.csv": "old csv\n", "r.json": "{}\n"})
    dropped = ("7.old", "0.old", "99999999999999999999.old", ".r.json.12345678.tmp", "user.txt")
    rs = _set(out, {"r.csv": "new csv\n", "r.json": "[]\n"}, drop=dropped)
    (folder,) = _staging(out)
    # every dropped file is still there, unchanged; nothing of planner's is left beside them
    assert sorted(p.name for p in folder.iterdir()) == sorted(dropped)
    assert all((folder / n).read_text() == USER for n in dropped)
    assert (out / "r.csv").read_text() == "new csv\n"
    # said by this run (m1), its names sorted: '.' < '0' < '7' < '9' < 'u'
    assert list(rs.notes) == [f"Left {folder}: it holds .r.json.12345678.tmp, 0.old, 7.old, "
                              "99999999999999999999.old, user.txt, which this run did not put there, so planner "
                              "removed only its own files; check it and remove it yourself."]


def test_the_api_gives_the_left_line_of_the_same_run(tmp_path: Path, monkeypatch) -> None:
    import planner
    from planner.core import reportset

    real = reportset.ReportSet.commit

    def commit(self):  # another program writes into the live staging folder
        (self._staging / "user.txt").write_text(USER)
        return real(self)

    monkeypatch.setattr(reportset.ReportSet, "commit", commit)
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    result = planner.plan(str(scenario), out=str(tmp_path / "o"), format="json")
    (folder,) = _staging(tmp_path / "o")
    assert [n for n in result.notes if n.startswith("Left ")] == [
        f"Left {folder}: it holds user.txt, which this run did not put there, so planner removed only its own files; "
        "check it and remove it yourself."]
    assert (folder / "user.txt").read_text() == USER


def test_a_file_put_at_a_staged_reports_name_is_not_replaced(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.csv": "old csv\n"})
    real = renames.place_staged

    def drop_then_place(src, dst, **kw):  # another program saves at the name the staged report is about to take
        Path(dst).write_text(USER)
        return real(src, dst, **kw)

    monkeypatch.setattr(renames, "place_staged", drop_then_place)
    with pytest.raises(OutputError) as info:
        _set(out, {"r.csv": "new csv\n"})
    (folder,) = _staging(out)
    assert str(info.value) == (f"{folder / 'r.csv'}: another program created a file of that name in planner's "
                               f"staging folder while planner was writing it; it was left as it is, and nothing was "
                               f"changed in {out}. Check what writes there and run again.")
    assert (folder / "r.csv").read_text() == USER  # kept, unchanged
    assert (out / "r.csv").read_text() == "old csv\n"  # the previous set as it was
    # planner's own temporary went (by its inode); the mark and that file stay
    assert sorted(p.name for p in folder.iterdir()) == ["r.csv"]


def test_a_file_at_an_old_name_the_moves_want_stops_them_and_is_kept(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.csv": "old csv\n"})
    monkeypatch.setattr(renames, "exchange", lambda a, b: False)  # a file system that cannot swap: '<i>.old' kept
    with pytest.raises(OutputError) as info:
        _set(out, {"r.csv": "new csv\n"}, drop=("0.old",))
    (folder,) = _staging(out)
    said = str(info.value)
    assert f"{folder / '0.old'} was created by another program in planner's staging folder" in said, said
    assert (folder / "0.old").read_text() == USER
    assert (out / "r.csv").read_text() == "old csv\n"


def test_a_stale_reports_old_name_taken_first_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _set(out, {"r.csv": "old csv\n", "r.md": "old md\n"})
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.csv"), "new csv\n")
            rs.remove("r.md")  # taken away to '1.old' (index after the one staged report)
            (rs._staging / "1.old").write_text(USER)
            rs.commit()
    (folder,) = _staging(out)
    assert f"{folder / '1.old'} was created by another program" in str(info.value)
    assert (folder / "1.old").read_text() == USER
    assert (out / "r.md").read_text() == "old md\n" and (out / "r.csv").read_text() == "old csv\n"


# -- N4: a file written at a name planner has just removed; a temporary's name taken before planner's open ----------

def test_a_file_written_where_planner_just_removed_one_is_left(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    _set(out, {"r.csv": "old csv\n", "r.json": "{}\n"})
    real, seen = os.unlink, set()

    def unlink_then_write(path, *args, **kwargs):  # another program saves at each staging name once it goes
        real(path, *args, **kwargs)
        p = Path(path)
        if p.parent.name.startswith(STAGING_PREFIX) and not p.name.startswith(".") and p not in seen:
            seen.add(p)
            p.write_text(USER)

    monkeypatch.setattr(os, "unlink", unlink_then_write)
    rs = _set(out, {"r.csv": "new csv\n", "r.json": "[]\n"})
    monkeypatch.undo()
    (folder,) = _staging(out)
    # the previous reports (swapped into the staging names) went once each; what was written after stays
    assert sorted(p.name for p in folder.iterdir()) == ["r.csv", "r.json"]
    assert all(p.read_text() == USER for p in folder.iterdir())
    assert any(n.startswith(f"Left {folder}:") for n in rs.notes), rs.notes


def test_a_temporary_name_another_program_took_first_is_left(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "o"
    real, taken = os.open, []

    def take_first(path, flags, *args, **kwargs):  # another program creates the name planner is about to open
        p = str(path)
        if kwargs.get("dir_fd") is not None:  # a name in the staging folder, through its descriptor (h34a N2)
            p = os.path.join(os.readlink(f"/proc/self/fd/{kwargs['dir_fd']}"), p)
        if p.endswith(".tmp") and STAGING_PREFIX in p and not taken:
            taken.append(Path(p))
            Path(p).write_text(USER)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", take_first)
    rs = _set(out, {"r.csv": "csv\n"})
    monkeypatch.undo()
    assert (out / "r.csv").read_text() == "csv\n"  # planner retried under another name
    (folder,) = _staging(out)
    assert [p.name for p in folder.iterdir()] == [taken[0].name] and taken[0].read_text() == USER
    assert list(rs.notes) == [f"Left {folder}: it holds {taken[0].name}, which this run did not put there, so planner "
                              "removed only its own files; check it and remove it yourself."]


def test_unlink_same_removes_only_the_file_it_made(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.write_text("planner's")
    st = os.lstat(a)
    made = (st.st_dev, st.st_ino)
    a.unlink()
    a.write_text(USER)  # another file at the name now (a new inode while the old one... is gone)
    b = tmp_path / "b"
    b.write_text("keep")  # hold an inode so the one above is not reused for a link
    if os.lstat(a).st_ino != made[1]:
        assert stagerecord.unlink_same(a, made) is False and a.read_text() == USER
    link = tmp_path / "l"
    link.symlink_to(b)
    st = os.stat(b)
    assert stagerecord.unlink_same(link, (st.st_dev, st.st_ino)) is False  # a link to the file is not the file
    assert link.is_symlink()
    assert stagerecord.unlink_same(b, (st.st_dev, st.st_ino)) is True and not b.exists()
    assert stagerecord.unlink_same(tmp_path / "gone", made) is True  # nothing there: nothing to remove


# -- N2: a hand-made mark listing a name planner gives no report ------------------------------------------------------

def _dead(out: Path, mark: list[object], files: dict[str, bytes], mode: int = 0o700) -> Path:
    folder = out / (STAGING_PREFIX + "aaaaaaaa")
    folder.mkdir(parents=True)
    os.chmod(folder, mode)
    (folder / STAGING_MARK).write_text("planner staging folder 1\n" + "".join(json.dumps(x) + "\n" for x in mark))
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_a_mark_listing_a_non_report_name_leaves_its_folder_whole(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"mine\n").hexdigest()
    folder = _dead(tmp_path / "o", ["notes.txt", {"sha256": {"notes.txt": digest}, "bytes": {"notes.txt": 5}}],
                   {"notes.txt": b"mine\n"})
    left = _clear_staging(folder)
    assert left == [f'{STAGING_MARK} (not a mark planner wrote: its entry "notes.txt" is no name planner gives a '
                    'report)', "notes.txt"]
    assert (folder / "notes.txt").read_bytes() == b"mine\n"


def test_a_mark_naming_a_temporary_of_a_non_report_name_removes_nothing(tmp_path: Path) -> None:
    folder = _dead(tmp_path / "o", ["notes.txt", {"tmp": ".notes.txt.12345678.tmp"}],
                   {".notes.txt.12345678.tmp": b"my draft\n"})
    left = _clear_staging(folder)
    assert left[1:] == [".notes.txt.12345678.tmp"] and left[0].startswith(f"{STAGING_MARK} (not a mark planner wrote")
    assert (folder / ".notes.txt.12345678.tmp").read_bytes() == b"my draft\n"


@pytest.mark.parametrize(("name", "ok"), [
    ("qlora-7b-12gb.csv", True), ("qlora-7b-12gb.xlsx", True), ("s-compare.json", True), ("cloud.yaml", True),
    ("3.old", True), ("café.md", True),
    ("notes.txt", False), ("keep.txt", False), (".x.csv", False), ("x.yaml", False), ("a b.csv", False),
    ("x..csv", False), (".csv", False), ("0.OLD", False),
])
def test_report_names_are_the_names_planner_gives_reports(name: str, ok: bool) -> None:
    # safe_stem keeps letters, digits, '.', '_' and '-' of a stem, with no leading or doubled dots: 'a b' has a
    # blank, 'x.' (of 'x..csv') ends in a dot, '' is empty; '.x' begins with one
    assert report_name(name) is ok


# -- m2: a mark or staging folder others can write --------------------------------------------------------------------

def _dead_report(out: Path, mode: int = 0o700) -> Path:
    data = b"a,b\n"
    return _dead(out, ["r.csv", {"sha256": {"r.csv": hashlib.sha256(data).hexdigest()}, "bytes": {"r.csv": 4}}],
                 {"r.csv": data}, mode)


def test_a_mark_others_can_write_is_not_gone_by(tmp_path: Path) -> None:
    folder = _dead_report(tmp_path / "o")
    os.chmod(folder / STAGING_MARK, 0o666)
    assert _clear_staging(folder) == [f"{STAGING_MARK} (others can write it, so planner does not go by it)", "r.csv"]
    assert (folder / "r.csv").exists()


def test_a_staging_folder_others_can_write_is_not_gone_by_unless_sticky(tmp_path: Path) -> None:
    folder = _dead_report(tmp_path / "o", 0o777)
    assert _clear_staging(folder) == [f"{STAGING_MARK} (others can write its folder, so planner does not go by it)",
                                      "r.csv"]
    sticky = _dead_report(tmp_path / "p", 0o1777)  # others cannot remove or rename the owner's files there
    assert _clear_staging(sticky) == [] and not sticky.exists()


# -- m3, m5: what the next run says ------------------------------------------------------------------------------------

def test_a_leftover_temporary_is_said_as_one_without_a_mixed_set(tmp_path: Path) -> None:
    out = tmp_path / "o"
    folder = _dead(out, ["r.csv", {"tmp": ".r.csv.0a1b2c3d.tmp"}], {".r.csv.0a1b2c3d.tmp": b"data\n"})
    with ReportSet(out, set_name="plan x") as rs:
        notes = list(rs.notes)
    assert notes == [f"Removed {folder}, which a stopped planner run left, with 1 unfinished temporary file(s)."]


def test_an_unrecorded_temporary_is_said_to_be_unknown_once(tmp_path: Path) -> None:
    out = tmp_path / "o"
    folder = _dead(out, ["r.csv", {"tmp": ".r.csv.9853af19.tmp"}],
                   {".r.csv.9853af19.tmp": b"partial", ".r.csv.deadbeef.tmp": b"mine"})
    with ReportSet(out, set_name="plan x") as rs:
        notes = list(rs.notes)
    assert notes == [f"Left {folder}: it holds .r.csv.deadbeef.tmp (an unfinished write whose name the run's staging "
                     "mark does not record), which planner cannot tell it wrote; check it and remove it yourself. "
                     "Planner removed the 1 unfinished temporary file(s) that a stopped planner run left there."]
    assert notes[0].count("cannot tell it wrote") == 1


# -- m8: what a failed run could not remove (an append-only --out: chattr +a) is named with its error ---------------

def test_a_temporary_that_cannot_be_removed_is_named_with_the_error(tmp_path: Path, monkeypatch) -> None:
    def refused(*args, **kwargs):  # what an append-only folder answers a rename or unlink there (EPERM)
        raise PermissionError(1, "Operation not permitted")

    target = tmp_path / ".planner-reports.json"
    monkeypatch.setattr(os, "replace", refused)
    monkeypatch.setattr(os, "unlink", refused)
    with pytest.raises(OutputError) as info:
        write_text(target, "{}\n")
    monkeypatch.undo()
    (tmp,) = tmp_path.iterdir()
    assert info.value.notes == (f"Left {tmp}: planner's temporary file for {target} could not be removed (Operation "
                                "not permitted); remove it yourself once that is fixed.",)


def test_a_staging_folder_a_failed_run_cannot_remove_is_named_with_the_error(tmp_path: Path, monkeypatch) -> None:
    def refused(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    out = tmp_path / "o"
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.csv"), "csv\n")
            monkeypatch.setattr(os, "rmdir", refused)
            raise OutputError("a writer failed.")
    monkeypatch.undo()
    (folder,) = _staging(out)
    assert info.value.notes == (f"Left {folder}: it could not be removed (Operation not permitted); check it and "
                                "remove it yourself.",)
    assert list(folder.iterdir()) == []  # its own files went, by inode


def test_a_stopped_run_says_what_it_left_in_its_staging_folder(tmp_path: Path, monkeypatch) -> None:
    import signal

    from click.testing import CliRunner

    from planner.cli.main import main
    from planner.core import reportset
    from planner.core.interrupt import Interrupted

    def commit(self):  # another program writes into the live staging folder, then SIGTERM comes
        for name in ("user.txt", "0.old"):
            (self._staging / name).write_text(USER)
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(reportset.ReportSet, "commit", commit)
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "qlora-7b-12gb.yaml"
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["plan", str(scenario), "--out", str(out), "--format", "json"])
    assert r.exit_code == 143, r.output  # 128 + SIGTERM's 15
    (folder,) = _staging(out)
    said = " ".join(r.output.split())
    assert (f"Left {folder}: it holds 0.old, user.txt, which this run did not put there, so planner removed only its "
            "own files; check it and remove it yourself. Interrupted by SIGTERM; stopped.") in said, said
    assert sorted(p.name for p in folder.iterdir()) == ["0.old", "user.txt"]
