"""Issue 28, hostile pass 34 (report h34a): same-user races on planner's private folders.

* h34a N1: a staged report swapped (renamed over) or edited in place by another program before the moves was
  moved into place, said "Wrote", and its hash recorded in the manifest as planner's (plan, compare and
  import-skypilot share :class:`planner.core.reportset.ReportSet`).
* h34a N2: the staging folder renamed away and a link or another folder put at its name mid-run: planner wrote
  its mark lines there (outside --out), even through a symlinked mark.
* h34a N3: import-skypilot's check copy folder swapped for a link: its clean-up removed the files in the target.
* h34a m9: a staged report removed by another program was said "was not written".
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from planner.core import checkcopy
from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.manifest import MANIFEST
from planner.core.reportset import STAGING_MARK, STAGING_PREFIX, ReportSet

USER = "USER swapped\n"


def _staging(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX)]


def _old_set(out: Path) -> None:
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.csv"), "old csv\n")
        write_text(rs.path("r.json"), "{}\n")
        rs.commit()


def _run(out: Path, meddle) -> OutputError:
    """Write a new set into ``out``; ``meddle(staged_csv)`` acts as another program once both reports are staged,
    before the commit. The error the commit raised."""
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.csv"), "new csv\n")
            write_text(rs.path("r.json"), "[]\n")
            meddle(rs._staging / "r.csv")
            rs.commit()
    return info.value


# -- N1: a staged report swapped or edited before the moves ----------------------------------------------------------

def _swap(staged: Path) -> None:  # another program renames its own file over the staged report
    other = staged.with_name("zz")
    other.write_text(USER)
    os.rename(other, staged)


def _edit(staged: Path) -> None:  # another program appends to the staged report in place (same inode)
    with open(staged, "a") as fh:
        fh.write("=cmd|' /C calc'!A0\n")


@pytest.mark.parametrize("meddle", [_swap, _edit], ids=["swap", "edit"])
def test_a_staged_report_changed_by_another_program_is_never_moved_or_adopted(tmp_path: Path, meddle) -> None:
    out = tmp_path / "o"
    _old_set(out)
    before = (out / MANIFEST).read_bytes()
    error = _run(out, meddle)
    (folder,) = _staging(out)
    assert str(error).startswith(f"{folder / 'r.csv'}: changed in the staging folder after planner wrote it, by "
                                 "another program; it was left there, and nothing was changed in")
    # nothing moved, the manifest untouched, the other program's file left where it is
    assert (out / "r.csv").read_text() == "old csv\n" and (out / "r.json").read_text() == "{}\n"
    assert (out / MANIFEST).read_bytes() == before
    assert (folder / "r.csv").exists()
    assert (folder / "r.csv").read_text() in (USER, "new csv\n=cmd|' /C calc'!A0\n")


def test_the_manifest_records_the_bytes_planner_wrote_not_a_re_read(tmp_path: Path, monkeypatch) -> None:
    # the hash recorded comes from the mark (the bytes written), not from sha256_file of the staged file:
    # a re-read that lies would otherwise reach the manifest
    import planner.core.reportset as reportset

    monkeypatch.setattr(reportset, "sha256_file", lambda p: "0" * 64)
    out = tmp_path / "o"
    with ReportSet(out, set_name="plan r") as rs:
        write_text(rs.path("r.csv"), "csv\n")
        rs.commit()
    entry = json.loads((out / MANIFEST).read_text())
    # expected: sha256 of the 4 bytes "csv\n", as written
    assert hashlib.sha256(b"csv\n").hexdigest() in json.dumps(entry)
    assert "0" * 64 not in json.dumps(entry)


# -- m9: a staged report removed by another program ----------------------------------------------------------------

def test_a_staged_report_removed_by_another_program_is_said_so(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _old_set(out)
    error = _run(out, os.unlink)
    assert str(error) == (f"{out / 'r.csv'}: planner wrote this report in its staging folder, but another program "
                          f"removed it there before it was moved into place; nothing was changed in {out}. Check "
                          "what writes there and run again.")
    assert "was not written" not in str(error)
    assert (out / "r.csv").read_text() == "old csv\n"


# -- N2: the staging folder swapped for a link or another folder mid-run ---------------------------------------------

def _swap_folder(out: Path, staging: Path, victim: Path, *, link: bool) -> None:
    """Another program renames the staging folder away and puts a link to ``victim`` (or a new folder) at its
    name."""
    os.rename(staging, out / "keep-staging")
    if link:
        os.symlink(victim, staging)
    else:
        staging.mkdir(mode=0o700)
        (staging / "notes.txt").write_text("mine\n")


@pytest.mark.parametrize("link", [True, False], ids=["link", "folder"])
def test_nothing_is_written_through_a_swapped_staging_folder(tmp_path: Path, link: bool) -> None:
    out, victim = tmp_path / "o", tmp_path / "victim"
    victim.mkdir()
    (victim / "target.txt").write_text("IMPORTANT\n")
    (victim / STAGING_MARK).symlink_to("target.txt")  # a mark that is a link to a user file
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.csv"), "csv\n")
            staging = rs._staging
            _swap_folder(out, staging, victim, link=link)
            write_text(rs.path("r.json"), "{}\n")  # the next report: never written there
            rs.commit()
    said = str(info.value)
    assert said.startswith(f"{staging}: is no longer the staging folder this run made (")
    assert "by another program)" in said and "nothing was changed in" in said
    # the link's target and the user's file are untouched; no report went outside --out
    assert sorted(p.name for p in victim.iterdir()) == [STAGING_MARK, "target.txt"]
    assert (victim / "target.txt").read_text() == "IMPORTANT\n"
    if not link:
        assert sorted(p.name for p in staging.iterdir()) == ["notes.txt"]
    assert not (out / "r.csv").exists() and not (out / "r.json").exists()


def test_a_staging_folder_swapped_before_a_name_is_listed_gets_no_mark_line(tmp_path: Path) -> None:
    # ReportSet.path() lists a name in the mark: through the folder and mark the run made, never by path
    out, victim = tmp_path / "o", tmp_path / "victim"
    victim.mkdir()
    (victim / "target.txt").write_text("IMPORTANT\n")
    (victim / STAGING_MARK).symlink_to("target.txt")
    with pytest.raises(OutputError) as info:
        with ReportSet(out, set_name="plan r") as rs:
            staging = rs._staging
            _swap_folder(out, staging, victim, link=True)
            rs.path("r.csv")
    assert str(info.value).startswith(f"{staging}: is no longer the staging folder this run made (")
    assert (victim / "target.txt").read_text() == "IMPORTANT\n"  # nothing appended through the link


def test_a_hand_made_mark_in_a_staging_named_folder_is_not_written_through(tmp_path: Path) -> None:
    # a folder named as a staging folder whose mark does not name it (copied from another): refused
    folder = tmp_path / (STAGING_PREFIX + "abcdefgh")
    folder.mkdir(mode=0o700)
    (folder / STAGING_MARK).write_text('planner staging folder 1\n{"folder": [1, 2]}\n')
    with pytest.raises(OutputError) as info:
        write_text(folder / "r.csv", "csv\n")
    assert "its staging mark does not name this folder" in str(info.value)
    assert sorted(p.name for p in folder.iterdir()) == [STAGING_MARK]


# -- N3: import-skypilot's check copy swapped for a link -------------------------------------------------------------

def _check_copy(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "td"))
    (tmp_path / "td").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again (restored by monkeypatch)
    copy = checkcopy.make_check_dir()
    checkcopy.write_check_file(copy, "cloud.yaml", b"x: 1\n")
    return copy


def test_a_check_copy_swapped_for_a_link_is_never_followed(tmp_path: Path, monkeypatch) -> None:
    copy = _check_copy(tmp_path, monkeypatch)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("precious\n")
    (victim / "cloud.yaml").write_text("mine\n")
    moved = tmp_path / "td" / "moved"
    os.rename(copy, moved)
    os.symlink(victim, copy)  # another program puts a link at the check copy's name
    left = checkcopy.remove_check_dir(copy)
    assert left is not None and left.startswith(f"Left {copy}: it is no longer the check copy folder this run made")
    assert sorted(p.name for p in victim.iterdir()) == ["cloud.yaml", "precious.txt"]
    assert copy.is_symlink() and (moved / "cloud.yaml").read_bytes() == b"x: 1\n"


def test_a_check_copy_swapped_for_another_folder_is_left(tmp_path: Path, monkeypatch) -> None:
    copy = _check_copy(tmp_path, monkeypatch)
    os.rename(copy, tmp_path / "td" / "moved")
    copy.mkdir(mode=0o700)  # another folder at its name, holding a file named as planner's
    (copy / "cloud.yaml").write_text("mine\n")
    left = checkcopy.remove_check_dir(copy)
    assert left is not None and "no longer the check copy folder this run made" in left
    assert (copy / "cloud.yaml").read_text() == "mine\n"


def test_a_file_another_program_put_in_the_check_copy_is_left(tmp_path: Path, monkeypatch) -> None:
    copy = _check_copy(tmp_path, monkeypatch)
    (copy / "user.txt").write_text("mine\n")
    (tmp_path / "zz").write_text("also mine\n")
    os.rename(tmp_path / "zz", copy / "cloud.yaml")  # another file (a new inode) renamed over planner's
    left = checkcopy.remove_check_dir(copy)
    assert left is not None and "it holds cloud.yaml, user.txt, which this run did not put there" in left
    assert (copy / "user.txt").read_text() == "mine\n" and (copy / "cloud.yaml").read_text() == "also mine\n"
    assert not (copy / checkcopy.MARK).exists()  # its own mark went


def test_a_check_copy_of_its_own_is_removed_whole(tmp_path: Path, monkeypatch) -> None:
    copy = _check_copy(tmp_path, monkeypatch)
    assert checkcopy.remove_check_dir(copy) is None
    assert not os.path.lexists(copy)


def test_nothing_is_written_into_a_link_put_at_the_check_copys_name(tmp_path: Path, monkeypatch) -> None:
    copy = _check_copy(tmp_path, monkeypatch)
    victim = tmp_path / "victim"
    victim.mkdir()
    os.rename(copy, tmp_path / "td" / "moved")
    os.symlink(victim, copy)
    with pytest.raises(OSError):
        checkcopy.write_check_file(copy, "gpus.yaml", b"gpus: []\n")
    assert list(victim.iterdir()) == []  # no mark, no file written through the link


def test_import_skypilot_says_a_check_copy_swapped_for_a_link_and_writes_nothing(tmp_path: Path,
                                                                                monkeypatch) -> None:
    from click.testing import CliRunner

    from planner.cli.main import main

    monkeypatch.setenv("TMPDIR", str(tmp_path / "td"))
    (tmp_path / "td").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("precious\n")
    real = checkcopy.make_check_dir

    def made_then_swapped():  # another program swaps the new check copy for a link to the victim at once
        copy = real()
        os.rename(copy, tmp_path / "td" / "moved")
        os.symlink(victim, copy)
        return copy

    monkeypatch.setattr(checkcopy, "make_check_dir", made_then_swapped)
    csv = tmp_path / "aws" / "vms.csv"
    csv.parent.mkdir()
    csv.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
                   "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.45,us-east-1,us-east-1a\n")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "ov")])
    assert r.exit_code == 2, r.output
    (copy,) = [p for p in (tmp_path / "td").iterdir() if p.is_symlink()]
    assert f"Left {copy}: it is no longer the check copy folder this run made" in " ".join(r.stderr.split())
    assert (f"Error: the overlay's check copy {copy} was replaced by a link or another folder during the run (by "
            "another program)") in " ".join(r.stderr.split())
    assert [p.name for p in victim.iterdir()] == ["precious.txt"]
    assert not (tmp_path / "ov" / "cloud.yaml").exists()


def test_import_skypilot_never_publishes_a_cloud_yaml_swapped_in_its_staging_folder(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    # N1 through import-skypilot (it shares ReportSet): the report's repro renamed a 13-byte file over the staged
    # cloud.yaml; the import then said "Wrote" and listed it in the manifest
    from click.testing import CliRunner

    from planner.cli.main import main

    real = ReportSet.commit

    def swapped_then_commit(self):
        _swap(self._staging / "cloud.yaml")
        return real(self)

    monkeypatch.setattr(ReportSet, "commit", swapped_then_commit)
    csv = tmp_path / "aws" / "vms.csv"
    csv.parent.mkdir()
    csv.write_text("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
                   "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.45,us-east-1,us-east-1a\n")
    out = tmp_path / "ov"
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(out)])
    assert r.exit_code == 2, r.output
    (folder,) = _staging(out)
    assert (f"Error: {folder / 'cloud.yaml'}: changed in the staging folder after planner wrote it, by another "
            "program") in " ".join(r.stderr.split())
    assert "Wrote" not in r.output
    assert not (out / "cloud.yaml").exists() and not (out / MANIFEST).exists()
    assert (folder / "cloud.yaml").read_text() == USER
