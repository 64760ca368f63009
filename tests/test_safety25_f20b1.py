"""Issue 28, hostile pass 20X: findings N1, N2, M1, M2, M5 and M6 of report h20b, all in planner catalog
import-skypilot.

- N1: two rows of one instance type and zone that differ in AcceleratorName or AcceleratorCount (and price) are
  refused, naming both lines and the column, as rows differing in vCPUs were; GCP's GPU rows (no instance type) of
  one zone with different accelerators or counts are still read (planner.catalog.skypilot_rows._check_duplicates).
- N2: a row left out beside a kept row of its instance type (another zone) is counted in the summary by itself
  ('line 3 of g5.xlarge'), a row without a GPU among them (planner.catalog.skypilot.import_file,
  skypilot_csv.read_rows, import_summary.left_out_lines).
- M1: numbers are compared by value: '1.006' and '1.0060', '0.4' and '0.40', '1' and '1.0' are one figure, so the
  rows count once; the re-download advice is the problem's hint, said once (skypilot_rows._as_read).
- M2: a GPU name that is a catalog GPU in NFKC (full-width 'ａ10g') is still left out, its reason naming the
  character and the GPU it would be (skypilot._unknown_gpu).
- M5: a fraction of a GPU and an on-demand price below the floor name their line in the summary.
- M6: a long --region is clipped (its first 80 characters and its length) and its note said once
  (import_summary.region_note, planner.cli.catalog._import_overlay).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.import_summary import left_out_lines
from planner.catalog.skypilot import ImportProblem, import_file
from sky_helpers import G5 as _G5, HEADER as _HEADER, aws_csv as _aws, run_cli as _run


# -- N1: the accelerator and its count are figures of a zone's row ----------------------------------------------

@pytest.mark.parametrize("second, column, first_value, second_value", [
    ("g5.xlarge,H100,1,4,16,,0.5,0.3,us-east-1,us-east-1a,x86_64", "AcceleratorName", "A10G", "H100"),
    ("g5.xlarge,A100,1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64", "AcceleratorName", "A10G", "A100"),
    ("g5.xlarge,A10G,2,4,16,,0.5,0.3,us-east-1,us-east-1a,x86_64", "AcceleratorCount", "1", "2"),
    # '1.0' is the count 1, so the first figure that differs is the price
    ("g5.xlarge,A10G,1.0,4,16,,0.5,0.3,us-east-1,us-east-1a,x86_64", "Price", "1.006", "0.5"),
    ("g5.xlarge,A10G,1,8,64,,0.5,0.3,us-east-1,us-east-1a,x86_64", "vCPUs", "4", "8"),  # the control (refused before)
])
def test_two_rows_of_one_zone_with_another_gpu_or_count_are_refused(tmp_path: Path, second: str, column: str,
                                                                     first_value: str, second_value: str) -> None:
    path = _aws(tmp_path, _G5, second)
    with pytest.raises(ImportProblem) as e:
        import_file(path)
    assert str(e.value) == (f"{path}: lines 2 and 3, column {column}: two rows for g5.xlarge in us-east-1 zone "
                            f"us-east-1a give '{first_value}' and '{second_value}'; a vms.csv lists one row per "
                            "instance type and zone, so neither can be trusted")
    assert e.value.hint == "Re-download the file (catalogs/v8/<provider>/vms.csv), then import it again."


def test_the_cli_says_the_conflict_and_its_hint_once(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5, "g5.xlarge,H100,1,4,16,,0.5,0.3,us-east-1,us-east-1a,x86_64")
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    flat = " ".join(text.split())
    assert code == 2 and "Traceback" not in text, text
    assert "column AcceleratorName" in flat and flat.count("Re-download the file") == 1, text
    assert "Give a SkyPilot vms.csv" not in flat, text  # the default hint is not added beside it (h20b M1)
    assert not (tmp_path / "o" / "cloud.yaml").exists()


def test_gcp_gpu_rows_of_one_zone_with_other_counts_are_still_read(tmp_path: Path) -> None:
    # GCP's GPU rows have no instance type: they are placed by accelerator and count, so an L4 x1 and an L4 x2 row
    # of one zone are two rows, not a conflict; g2-standard-4 carries one L4: VM 0.2 + GPU 0.5 = 0.7 USD/h
    d = tmp_path / "gcp"
    d.mkdir()
    path = d / "vms.csv"
    path.write_text("InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,"
                    "Price,SpotPrice\n"
                    "g2-standard-4,4,16,,,,us-central1,us-central1-a,0.2,0.1\n"
                    ",,,L4,1,,us-central1,us-central1-a,0.5,0.2\n"
                    ",,,L4,2,,us-central1,us-central1-a,1.0,0.4\n", encoding="utf-8")
    res = import_file(path)
    assert [(r.instance, r.gpu, r.gpu_count, r.usd_per_hour) for r in res.rows] == [("g2-standard-4", "l4", 1, 0.7)]


# -- M1: numbers compared by value ----------------------------------------------------------------------------------

@pytest.mark.parametrize("second", [
    "g5.xlarge,A10G,1,4,16,,1.0060,0.40,us-east-1,us-east-1a,x86_64",   # the prices (refused as text before)
    "g5.xlarge,A10G,1.0,4.0,16.00,,1.0060,0.40,us-east-1,us-east-1a,x86_64",  # every number
])
def test_the_same_numbers_written_otherwise_count_once(tmp_path: Path, second: str) -> None:
    res = import_file(_aws(tmp_path, _G5, second))
    assert [(r.id, r.usd_per_hour, r.spot_usd_per_hour) for r in res.rows] == [("aws-g5-xlarge", 1.006, 0.4)]
    assert res.skipped == {}


def test_a_number_beyond_decimals_exponents_is_compared_as_written(tmp_path: Path) -> None:
    # Decimal refuses an exponent of 20 digits; float reads it as 0 (no spot offer): the repeat still counts once
    row = _G5.replace(",0.4,", ",1e-99999999999999999999,")
    res = import_file(_aws(tmp_path, row, row))
    assert [(r.id, r.spot_usd_per_hour) for r in res.rows] == [("aws-g5-xlarge", None)]


# -- N2 and M5: every row left out is counted, by line ------------------------------------------------------------

def test_a_row_left_out_beside_a_kept_one_is_counted(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5, "g5.xlarge,Z10G,1,4,16,,0.5,0.3,us-east-1,us-east-1b,x86_64",
                "g5.xlarge,A10G,1.5,4,16,,0.5,0.3,us-east-1,us-east-1c,x86_64")
    res = import_file(path)
    assert [r.id for r in res.rows] == ["aws-g5-xlarge"]
    assert res.skipped == {"the row on line 3 of g5.xlarge": "line 3: GPU 'Z10G' has no gpus.yaml entry",
                           # h40b m9: a value above one is no fraction of one GPU, so it is worded as a count
                           "the row on line 4 of g5.xlarge": "line 4: a count (1.5) of A10G GPUs that is not a whole number"}
    assert left_out_lines(res.skipped) == [
        "left out 1: GPU 'Z10G' has no gpus.yaml entry (line 3 of g5.xlarge)",
        # h40b m9: above one, worded as a count, not as a fraction of one GPU
        "left out 1: a count (1.5) of A10G GPUs that is not a whole number (line 4 of g5.xlarge)"]


def test_a_row_without_a_gpu_beside_a_kept_one_is_counted(tmp_path: Path) -> None:
    # rows without an accelerator are dropped as they are read (planner.catalog.skypilot_csv), their lines kept
    path = _aws(tmp_path, _G5, "g5.xlarge,,,4,16,,0.5,0.3,us-east-1,us-east-1b,x86_64",
                "c5.xlarge,,,4,16,,0.5,0.3,us-east-1,us-east-1b,x86_64")
    res = import_file(path)
    assert [r.id for r in res.rows] == ["aws-g5-xlarge"]
    assert res.skipped == {"c5.xlarge": "line 4: no GPU", "the row on line 3 of g5.xlarge": "line 3: no GPU"}
    assert left_out_lines(res.skipped) == ["left out 2: no GPU (line 3 of g5.xlarge, line 4: c5.xlarge)"]


def test_left_out_reasons_name_their_lines(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5, "g5.48xlarge,A10G,8,192,768,,1e-400,0.5,us-east-1,us-east-1a,x86_64",
                "g6.2xlarge,L4,1.5,8,32,,0.9,0.3,us-east-1,us-east-1a,x86_64")
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    flat = " ".join(text.split())
    assert code == 0, text
    # h40b m9: above one, a count not whole is worded as a count, not as a fraction of one GPU
    assert "left out 1: a count (1.5) of L4 GPUs that is not a whole number (line 4: g6.2xlarge)" in flat, text
    assert ("left out 1: an on-demand price of '1e-400' USD/h, less than any real hourly price (at least 0.001 USD/h) "
            "(line 3: g5.48xlarge)") in flat, text


def test_a_row_of_no_instance_type_is_still_shown_by_its_line() -> None:
    assert left_out_lines({"the row on line 7": "line 7: no InstanceType (empty), so no instance to name"}) == \
        ["left out 1: no InstanceType (empty), so no instance to name (line 7)"]


# -- M2: a full-width GPU name -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, reason", [
    ("ａ10g", "GPU 'ａ10g' has no gpus.yaml entry; it holds U+FF41 FULLWIDTH LATIN SMALL LETTER A: written 'a10g', "
              "it would be GPU a10g"),
    ("Z10G", "GPU 'Z10G' has no gpus.yaml entry"),  # the control: no NFKC form to offer
    # full width, but no catalog GPU in plain letters either; h39b 8: the character outside ASCII is now named
    ("ｚ10g", "GPU 'ｚ10g' has no gpus.yaml entry; it holds U+FF5A FULLWIDTH LATIN SMALL LETTER Z, not ASCII as "
              "SkyPilot's GPU names are"),
])
def test_a_gpu_name_in_full_width_letters_gets_its_plain_form(tmp_path: Path, name: str, reason: str) -> None:
    res = import_file(_aws(tmp_path, f"g5.xlarge,{name},1,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64"))
    assert res.rows == [] and res.skipped == {"g5.xlarge": f"line 2: {reason}"}, res.skipped  # h22b M1: its line


# -- M6: a long --region --------------------------------------------------------------------------------------------

def test_a_long_region_is_clipped_and_said_once(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5, "g5.xlarge,A10G,1,4,16,,1.106,0.4,eu-west-1,eu-west-1a,x86_64")
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"), "--region", "x" * 5000)
    flat = " ".join(text.split())
    assert code == 2, text
    assert len(text) < 1000, len(text)  # was 10,668 bytes: the region twice in full
    assert f"--region '{'x' * 80}... (5,000 characters)' is no region of the file" in flat, text
    assert flat.count("is no region of the file") == 1, text


def test_a_region_note_is_said_once_when_nothing_is_kept(tmp_path: Path) -> None:
    path = _aws(tmp_path, _G5)
    code, text = _run("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"), "--region", "us-est-1")
    flat = " ".join(text.split())
    assert code == 2, text
    assert flat.count("--region 'us-est-1' is no region of the file; did you mean --region us-east-1?") == 1, text


def test_a_region_note_of_a_file_that_kept_nothing_is_said_when_another_kept_rows(tmp_path: Path) -> None:
    first = _aws(tmp_path, _G5)
    other = tmp_path / "b" / "aws"
    other.mkdir(parents=True)
    (other / "vms.csv").write_text(_HEADER + "\ng6.xlarge,L4,1,4,16,,0.8,0.3,us-est-1,us-est-1a,x86_64\n",
                                   encoding="utf-8")
    code, text = _run("catalog", "import-skypilot", str(first), str(other / "vms.csv"), "--out", str(tmp_path / "o"),
                      "--region", "us-est-1")
    flat = " ".join(text.split())
    assert code == 0, text
    assert flat.count(f"{first}: --region 'us-est-1' is no region of the file; did you mean --region us-east-1?") \
        == 1, text
