"""Issue 28, hostile pass 19X: findings N4, M4, M5 and M6 of report h19b, all in planner catalog import-skypilot.

- N4: two rows of one instance type and zone whose Region, AcceleratorName or AvailabilityZone differ only in case
  ('US-EAST-1' and 'us-east-1', 'a10g' and 'A10G', 'US-EAST-1A') and whose prices differ are refused as two rows of
  one key are, rather than the cheaper written; with the same figures they count once
  (planner.catalog.skypilot._check_duplicates, _as_read).
- M4: a --region that names no region of the file gets a close match among the file's regions, is told it is an
  availability zone (with its region), or that --region takes one region, not a list
  (planner.catalog.import_summary.region_note); a --region of the file gets no such line.
- M5: an instance type left out is quoted as the file writes it ('=HYPERLINK("X")', 'g5.\\x1b[2Jx'), not lower-cased,
  and only rows kept count in "instance type in upper case written in lower case"
  (planner.catalog.skypilot.instance_key, _row_refused, _case_lines).
- M6: a region holding U+009B is told it holds a control character (no "U+009B a character ... a lookalike"); a
  character without a Unicode name is named by its kind; a file over 32 MiB gets one hint; a file starting with a
  UTF-16 or UTF-32 byte order mark is told so, with a hint to save it as UTF-8
  (planner.catalog.skypilot_csv._check_utf16).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.import_summary import region_note
from planner.catalog.skypilot import ImportProblem, _first_foreign, import_file
from planner.catalog.skypilot_csv import MAX_CSV_BYTES
from sky_helpers import G5 as _G5, HEADER as _HEADER, aws_csv as _aws, run_cli as _run


# -- N4: rows compared as the import reads them ------------------------------------------------------------------

@pytest.mark.parametrize("second", [
    "g5.xlarge,A10G,1,4,16,,0.5,0.3,US-EAST-1,us-east-1a,x86_64",   # the region in upper case
    "g5.xlarge,a10g,1,4,16,,0.5,0.3,us-east-1,us-east-1a,x86_64",   # the accelerator in lower case
    "g5.xlarge,A10G,1,4,16,,0.5,0.3,us-east-1,US-EAST-1A,x86_64",   # the zone in upper case
    "G5.XLARGE,A10G,1,4,16,,0.5,0.3,us-east-1,us-east-1a,x86_64",   # the instance type (refused before, the control)
])
def test_two_rows_of_one_zone_differing_in_case_and_price_are_refused(tmp_path: Path, second: str) -> None:
    path = _aws(tmp_path, _G5, second)
    out = tmp_path / "o"
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(out))
    assert code == 2, text
    # the rows are one instance type in one zone, as the import reads them: the first column that differs then
    # is Price (line 2 gives 1.006, line 3 gives 0.5), so neither is taken
    assert (f"{path}: lines 2 and 3, column Price: two rows for g5.xlarge in us-east-1 zone us-east-1a give '1.006' "
            "and '0.5'") in text, text
    assert not (out / "cloud.yaml").exists()


def test_the_api_refuses_them_too(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5, "g5.xlarge,a10g,1,4,16,,0.5,0.3,US-EAST-1,us-east-1a,x86_64")
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    message = str(e.value)
    assert "column Price: two rows for g5.xlarge in us-east-1 zone us-east-1a" in message, message


def test_two_rows_differing_only_in_case_of_region_and_gpu_count_once(tmp_path: Path) -> None:
    # the same figures (1.006, spot 0.4): one row as the import reads it, so nothing to choose between
    res = import_file(_aws(tmp_path, _G5, "g5.xlarge,a10g,1,4,16,,1.006,0.4,US-EAST-1,US-EAST-1A,x86_64"))
    assert [(r.id, r.usd_per_hour, r.spot_usd_per_hour, r.region) for r in res.rows] == [
        ("aws-g5-xlarge", 1.006, 0.4, "us-east-1")]


def test_rows_of_one_instance_in_two_zones_are_still_read(tmp_path: Path) -> None:
    # another zone is another key: the region's on-demand price is the lower, 0.9 (us-east-1b)
    res = import_file(_aws(tmp_path, _G5, "g5.xlarge,A10G,1,4,16,,0.9,0.3,US-EAST-1,us-east-1b,x86_64"))
    assert [(r.usd_per_hour, r.spot_usd_per_hour) for r in res.rows] == [(0.9, 0.3)]


# -- M5: an instance type left out, as written -------------------------------------------------------------------

def test_an_instance_left_out_is_quoted_as_written_and_not_counted_as_lowered(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5, '"=HYPERLINK(""X"")",A10G,1,8,32,x,1.212,0.5,us-east-1,us-east-1a,x86_64')
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, text
    assert "'=HYPERLINK(\"X\")' holds '='" in text and "(line 3: =HYPERLINK(\"X\"))" in text, text
    assert '=hyperlink("x")' not in text, text  # never lower-cased (the id, aws-hyperlink-x, is an id)
    # the row was left out, so nothing was written in lower case
    assert "instance type in upper case written in lower case" not in text, text


def test_an_instance_with_an_escape_is_shown_as_written(tmp_path: Path) -> None:
    res = import_file(_aws(tmp_path, _G5, "g5.\x1b[2Jx,A10G,1,8,32,x,1.212,0.5,us-east-1,us-east-1a,x86_64"))
    assert [r.id for r in res.rows] == ["aws-g5-xlarge"]
    assert "g5.\x1b[2Jx" in res.skipped and "g5.\x1b[2jx" not in res.skipped, res.skipped
    assert res.instance_case_lines == []


def test_an_upper_case_instance_kept_is_still_counted(tmp_path: Path) -> None:
    # the control: G5.XLARGE on line 2 is kept as g5.xlarge, so its line is counted; the left-out one on line 3 not
    res = import_file(_aws(tmp_path, _G5.replace("g5.xlarge", "G5.XLARGE"),
                           "G6.=X,L4,1,8,32,x,1.212,0.5,us-east-1,us-east-1a,x86_64"))
    assert [r.instance for r in res.rows] == ["g5.xlarge"]
    assert res.instance_case_lines == ["2"]
    assert "G6.=X" in res.skipped and "'G6.=X'" in res.skipped["G6.=X"], res.skipped


# -- M4: --region naming no region of the file --------------------------------------------------------------------

@pytest.mark.parametrize("given, said", [
    ("us-est-1", "--region 'us-est-1' is no region of the file; did you mean --region us-east-1?"),
    ("us-east-1a", "--region 'us-east-1a' is no region of the file: it is an availability zone of region us-east-1, "
                   "and --region takes a region; give --region us-east-1."),
    ("us-east-1,us-west-2", "--region 'us-east-1,us-west-2' is no region of the file: --region takes one region, not "
                            "a list; import once per region (e.g. --region us-east-1)."),
])
def test_a_region_of_no_row_gets_a_hint(tmp_path: Path, given: str, said: str) -> None:
    path = _aws(tmp_path, _G5)
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"), "--region", given)
    assert code == 2, text
    flat = " ".join(text.split())  # the summary lines are wrapped to the terminal's width
    assert said in flat, text
    assert f"cloud.yaml. {path}: {said}" in flat, text  # the error's hint: the same, naming the file


def test_region_note_lists_the_regions_when_none_is_close() -> None:
    zones = {f"{r}a": r for r in ("us-east-1", "us-west-2")}
    assert region_note("eu-central-1", "eu-central-1", zones) == \
        "--region 'eu-central-1' is no region of the file (its regions: us-east-1, us-west-2)."
    assert region_note("us-west-2", "us-west-2", zones) is None  # a region of the file: nothing to say
    assert region_note("x", "x", {}) is None  # a file with no rows: the import says so itself


def test_a_region_of_the_file_gets_no_note(tmp_path: Path) -> None:
    res = import_file(_aws(tmp_path, _G5), region="US-EAST-1")  # matched as written: us-east-1
    assert [r.region for r in res.rows] == ["us-east-1"] and res.region_note is None


# -- M6: wording -------------------------------------------------------------------------------------------------

def test_a_c1_control_in_a_region_is_named_as_a_control(tmp_path: Path) -> None:
    res = import_file(_aws(tmp_path, _G5, "g6.xlarge,L4,1,4,16,,0.8,0.4,us-east-1\x9b,us-east-1a,x86_64"))
    why = res.skipped["g6.xlarge"]
    assert "holds the control character U+009B" in why, why
    assert "a character, not ASCII" not in why and "lookalike" not in why, why


def test_a_character_without_a_name_is_named_by_its_kind() -> None:
    assert _first_foreign("us-east-1\x9b") == "U+009B (a C1 control character)"
    assert _first_foreign("us-east-1\ue000") == "U+E000 (a private-use character)"
    assert _first_foreign("us-\uff45ast-1") == "U+FF45 FULLWIDTH LATIN SMALL LETTER E"  # named ones as before
    assert _first_foreign("us-east-1") is None


def test_a_file_over_the_cap_gets_one_hint(tmp_path: Path) -> None:
    path = _aws(tmp_path)
    with open(path, "r+b") as fh:  # sparse: one byte past the cap (8 MiB since h33b N5/N6) without writing it
        fh.truncate(MAX_CSV_BYTES + 1)
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 2, text
    assert "is larger than 8 MiB" in text, text
    assert text.count("vms.csv itself") + text.count("Give a SkyPilot vms.csv") == 1, text


@pytest.mark.parametrize("encoding, bom, name", [
    ("utf-16-le", b"\xff\xfe", "UTF-16 (little-endian)"),
    ("utf-16-be", b"\xfe\xff", "UTF-16 (big-endian)"),
    ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
])
def test_a_utf16_file_is_told_its_byte_order_mark(tmp_path: Path, encoding: str, bom: bytes, name: str) -> None:
    path = _aws(tmp_path)
    path.write_bytes(bom + f"{_HEADER}\n{_G5}\n".encode(encoding))
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    shown = " ".join(f"0x{b:02x}" for b in bom)
    assert str(e.value) == (f"{path}: line 1: not UTF-8: it starts with the {name} byte order mark ({shown}), so it "
                            f"is a {name.split(' ')[0]} text file")
    assert e.value.hint is not None and e.value.hint.startswith("Save it as UTF-8"), e.value.hint


def test_other_bytes_that_are_not_utf8_are_told_as_before(tmp_path: Path) -> None:
    path = _aws(tmp_path)
    path.write_bytes(f"{_HEADER}\n".encode() + b"g5.xlarge\xff,A10G\n")
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    assert str(e.value) == f"{path}: line 2: not UTF-8 (byte 0xff); save it as UTF-8"
