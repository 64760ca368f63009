"""Issue 28, hostile pass 32: N1 of tester A (a hand-made staging mark's {"tmp": NAME} removed any file of that name;
now only a temporary named as planner names one for a report the mark lists is taken) and N1 of tester B (an input file's path holding 'REF:<id>' made the default source of
every imported row cite a reference, so 'planner catalog check --catalog OUT' failed the overlay the import had
written with exit 0). The default source is refused then, before anything is written; --source is the way out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

_AWS = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
        "AvailabilityZone\ng5.xlarge,A10G,1,4,16,,1.006,0.4,us-east-1,us-east-1a\n")


def _csv(tmp_path: Path, folder: str) -> Path:
    path = tmp_path / "g" / folder / "aws" / "vms.csv"
    path.parent.mkdir(parents=True)
    path.write_text(_AWS)
    return path


def test_a_path_citing_a_reference_is_no_default_source(tmp_path: Path) -> None:
    csv = _csv(tmp_path, "REF:SKY-AWS-v8x")
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(tmp_path / "o"),
                                  "--as-of", "2026-11-01"])
    assert r.exit_code == 2, r.output
    assert r.output == (f"Error: {csv}: the default source of its rows names the file's path, which holds "
                        "'REF:SKY-AWS-v8x': 'planner catalog check' would read it as a citation of a reference. Give "
                        "the rows a source of your own, e.g. --source 'SkyPilot catalog, 2026-11-01'.\n")
    assert not (tmp_path / "o").exists()


def test_with_a_source_of_its_own_the_import_passes_catalog_check(tmp_path: Path) -> None:
    csv = _csv(tmp_path, "REF:NOPE")
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(csv), "--out", str(out), "--source",
                                  "SkyPilot catalog v8, aws"])
    assert r.exit_code == 0, r.output
    check = CliRunner().invoke(main, ["catalog", "check", "--catalog", str(out)])
    assert check.exit_code == 0, check.output


# -- h32a N1: a hand-made mark's {"tmp": NAME} is taken only for a temporary planner makes for a listed report -------

@pytest.mark.parametrize("tmp", ["my-notes.txt", ".r.json.0123abcd.tmp.bak", ".other.json.0123abcd.tmp",
                                 ".r.json.XYZ12345.tmp"])
def test_a_hand_made_mark_naming_another_file_as_a_temporary_leaves_its_folder_whole(tmp_path: Path, tmp: str) -> None:
    from planner.core.reportset import ReportSet
    from tests.test_safety35_f31a import STAGING_MARK, _dead

    out = tmp_path / "o"
    folder = _dead(out, ["r.json", {"tmp": tmp}], {tmp: b"my notes\n"})
    with ReportSet(out, set_name="plan r") as rs:
        notes = list(rs.notes)
    assert (folder / tmp).read_bytes() == b"my notes\n"  # kept: nothing in the folder is judged by that mark
    assert notes == [f"Left {folder}: it holds {STAGING_MARK} (not a mark planner wrote: its entry {json.dumps(tmp)} "
                     f"is no temporary file planner makes for a report the mark lists), {tmp}, which planner cannot "
                     "tell it wrote; check it and remove it yourself."], notes


def test_planners_own_temporary_of_a_listed_report_is_still_cleared(tmp_path: Path) -> None:
    from planner.core.reportset import _clear_staging
    from tests.test_safety35_f31a import _dead

    tmp = ".r.json.0123abcd.tmp"  # as planner.core.atomic names one: '.' + name + '.' + 8 hex digits + '.tmp'
    folder = _dead(tmp_path / "o", ["r.json", {"tmp": tmp}], {tmp: b"{\"half"})
    assert _clear_staging(folder) == [] and not folder.exists()


# -- h32a N2: a run's own staging folder: only what the run put there is removed ---------------------------------------

@pytest.mark.parametrize("fail", [False, True])
def test_a_file_another_program_puts_into_the_live_staging_folder_is_left(tmp_path: Path, fail: bool) -> None:
    from planner.core.atomic import write_text
    from planner.core.reportset import ReportSet

    out = tmp_path / "o"
    try:
        with ReportSet(out, set_name="plan r") as rs:
            write_text(rs.path("r.md"), "# r\n")
            staging = rs.path("r.md").parent
            (staging / "theirs.txt").write_text("theirs\n")  # another program, during the run
            (staging / "sub").mkdir()
            if fail:
                raise KeyboardInterrupt
            rs.commit()
    except KeyboardInterrupt:
        pass
    assert (staging / "theirs.txt").read_text() == "theirs\n" and (staging / "sub").is_dir()
    assert (out / "r.md").exists() != fail
    assert not (staging / "r.md").exists()
    assert f"Left {staging}: it holds sub, theirs.txt, which this run did not put there, so planner removed only " \
           "its own files; check it and remove it yourself." in rs.notes, rs.notes
