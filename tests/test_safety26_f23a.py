"""Issue 28, hostile pass 22: findings M1, M3, M5 and M9 of report h22b, all in planner catalog import-skypilot.

- M1: every reason a row or an instance type is left out for names its line in the summary: no on-demand price
  (0, empty, '-0'), no GPU (rows dropped as read too), an unknown GPU, a region that is not ASCII
  (planner.catalog.skypilot_rows._zones, skypilot.import_file, skypilot._pick); a GCP machine type none of whose
  zones has a GPU row is said so, with its line, rather than left out without a word.
- M3: a file of a header and no rows (blank lines aside) is said to be one, on its summary line and in the error,
  rather than "left out as listed above" with nothing listed (planner.cli.catalog._nothing_kept).
- M5: an empty or blank ``--as-of`` is refused, naming the option, rather than taken as today.
- M9: a control character in AvailabilityZone leaves the row out, with its line and column, as one in the region
  or instance type does (planner.catalog.skypilot_csv._row_problem).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog.import_summary import left_out_lines
from planner.catalog.skypilot import import_file
from planner.cli.main import main
from sky_helpers import G5, HEADER, aws_csv, run_cli


def _row(instance: str, price: str = "1.006", *, gpu: str = "A10G", count: str = "1", region: str = "us-east-1",
         zone: str = "us-east-1a") -> str:
    """An AWS vms.csv row (sky_helpers.HEADER's columns) of ``instance`` with these figures."""
    return f"{instance},{gpu},{count},4,16,,{price},0.4,{region},{zone},x86_64"


# -- M1: each left-out reason names its line -------------------------------------------------------------------

def test_no_on_demand_price_names_each_line(tmp_path: Path) -> None:
    # line 1 the header, G5 line 2: the three rows without a price are lines 3, 4 and 5
    path = aws_csv(tmp_path, G5, _row("g5.2xlarge", "0"), _row("g5.4xlarge", ""), _row("g5.9xlarge", "-0"))
    res = import_file(path)
    assert [r.id for r in res.rows] == ["aws-g5-xlarge"]
    assert res.skipped == {"g5.2xlarge": "line 3: no on-demand price (0 or empty)",
                           "g5.4xlarge": "line 4: no on-demand price (0 or empty)",
                           "g5.9xlarge": "line 5: no on-demand price (0 or empty)"}
    assert left_out_lines(res.skipped) == [
        "left out 3: no on-demand price (0 or empty) (line 3: g5.2xlarge, line 4: g5.4xlarge, line 5: g5.9xlarge)"]


def test_an_instance_type_of_several_rows_is_named_by_its_first(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5, _row("g5.2xlarge", "0"), _row("g5.2xlarge", "", zone="us-east-1b"))
    assert import_file(path).skipped == {"g5.2xlarge": "line 3: no on-demand price (0 or empty)"}


def test_no_gpu_and_an_unknown_gpu_name_their_lines(tmp_path: Path) -> None:
    # m5.large has no accelerator: dropped as read (skypilot_csv.read_rows), its first line (4) kept
    path = aws_csv(tmp_path, G5, _row("zz.xlarge", gpu="=1+1"),
                   "m5.large,,,2,8,,0.096,0.03,us-east-1,us-east-1a,x86_64",
                   "m5.large,,,2,8,,0.096,0.03,us-east-2,us-east-2a,x86_64")
    res = import_file(path)
    assert res.skipped == {"zz.xlarge": "line 3: GPU '=1+1' has no gpus.yaml entry", "m5.large": "line 4: no GPU"}
    assert sorted(left_out_lines(res.skipped)) == ["left out 1: GPU '=1+1' has no gpus.yaml entry (line 3: zz.xlarge)",
                                                   "left out 1: no GPU (line 4: m5.large)"]


def test_a_region_holding_a_c1_control_names_its_line(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5, _row("g5.12xlarge", region="us-\x9beast-1"))
    why = import_file(path).skipped["g5.12xlarge"]
    assert why.startswith("line 3: the region 'us-\x9beast-1' holds the control character U+009B"), why


def test_the_cli_summary_shows_the_lines(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5, _row("g5.2xlarge", "0"), _row("g5.4xlarge", ""))
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, out
    flat = " ".join(out.split())
    assert "left out 2: no on-demand price (0 or empty) (line 3: g5.2xlarge, line 4: g5.4xlarge)" in flat, out


GCP_HEADER = ("InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,"
              "SpotPrice")


def test_a_gcp_machine_type_with_no_gpu_row_in_its_zones_is_said(tmp_path: Path) -> None:
    # g2-standard-4 carries one L4 (planner.catalog.aliases); its VM row's zone has no L4 x1 GPU row, so it has no
    # price. Before, it was left out without a word.
    d = tmp_path / "gcp"
    d.mkdir()
    path = d / "vms.csv"
    path.write_text("\n".join((GCP_HEADER, ",,,L4,1,,us-central1,us-central1-a,0.56004,0.2231",
                               "g2-standard-4,4.0,16.0,,,,us-east4,us-east4-a,0.14679,0.05874")) + "\n",
                    encoding="utf-8")
    res = import_file(path)
    assert res.rows == []
    assert res.skipped == {"g2-standard-4": "line 3: no 'L4' x1 GPU row in its zone ('us-east4-a'), nor in its other "  # h37b m6: one form for a GPU and its count, 'A100' x1 (name quoted, count not)
                                            "rows' zones, to add to the VM row's price"}


def test_a_gcp_machine_type_priced_in_one_zone_is_kept(tmp_path: Path) -> None:
    # the control: one zone with the GPU row prices it; the other zone's row is dropped as before, unsaid
    d = tmp_path / "gcp"
    d.mkdir()
    path = d / "vms.csv"
    path.write_text("\n".join((GCP_HEADER, ",,,L4,1,,us-central1,us-central1-a,0.56004,0.2231",
                               "g2-standard-4,4.0,16.0,,,,us-east4,us-east4-a,0.14679,0.05874",
                               "g2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.14679,0.05874")) + "\n",
                    encoding="utf-8")
    res = import_file(path)
    # 0.14679 + 0.56004 = 0.70683
    assert [(r.id, r.usd_per_hour) for r in res.rows] == [("gcp-g2-standard-4", 0.70683)] and res.skipped == {}


# -- M3: a header and no rows ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("tail", ["", "\n\n"])  # trailing blank lines are no rows either
def test_a_header_alone_is_said_to_be_one(tmp_path: Path, tail: str) -> None:
    path = aws_csv(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + tail, encoding="utf-8")
    assert import_file(path).rows_read == 0
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert r.stderr.splitlines() == [
        f"{path}: 0 instance(s) (a header and no rows)",
        f"Error: {path} holds a header and no rows, so no instance was kept and nothing was written to "
        f"{tmp_path / 'o' / 'cloud.yaml'}. Give the provider's vms.csv with its rows (catalogs/v8/<provider>/vms.csv); "
        "a download cut short can hold the header alone."]
    assert "listed above" not in r.stderr
    assert not (tmp_path / "o" / "cloud.yaml").exists()


def test_a_header_alone_beside_a_file_that_left_rows_out(tmp_path: Path) -> None:
    empty = aws_csv(tmp_path)
    (tmp_path / "b").mkdir()
    other = aws_csv(tmp_path / "b", _row("zz.xlarge", gpu="Z10G"))
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(empty), str(other), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert (f"no instance was kept from {empty}, {other} (left out as listed above; {empty}: a header and no rows)"
            in r.stderr), r.stderr
    assert f"{other}: 0 instance(s)\n" in r.stderr and "(line 2: zz.xlarge)" in r.stderr, r.stderr


def test_a_file_with_rows_counts_them(tmp_path: Path) -> None:
    # the control: rows dropped as read (no GPU) and unreadable rows count too
    path = aws_csv(tmp_path, "m5.large,,,2,8,,0.096,0.03,us-east-1,us-east-1a,x86_64", _row("g5.2xlarge", "1_0"))
    res = import_file(path)
    assert res.rows_read == 2 and res.rows == []
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 2 and "(left out as listed above)" in out and "a header and no rows" not in out, out


# -- M5: an empty --as-of ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, said", [("", "is empty"), ("   ", "is blank (white space alone)")])
def test_an_empty_as_of_is_refused(tmp_path: Path, given: str, said: str) -> None:
    path = aws_csv(tmp_path, G5)
    r = CliRunner().invoke(main, ["catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"),
                                  "--as-of", given])
    assert r.exit_code == 2, r.output
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert r.stderr.startswith(f"Error: --as-of: {said}; give the date the file was read, YYYY-MM "
                               f"or YYYY-MM-DD (e.g. --as-of {today}), or leave --as-of out for today"), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "o" / "cloud.yaml").exists()


def test_as_of_left_out_is_still_today(tmp_path: Path) -> None:
    # the control: no --as-of dates the rows today (UTC)
    path = aws_csv(tmp_path, G5)
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, out
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert f'as_of: "{today}"' in (tmp_path / "o" / "cloud.yaml").read_text(encoding="utf-8")


# -- M9: a control character in the availability zone --------------------------------------------------------------

@pytest.mark.parametrize("zone, char", [("us-east-1a\x1b", "U+001B (ESCAPE)"), ("us-east-1a\x9b", "U+009B")])
def test_a_control_character_in_the_zone_leaves_the_instance_type_out(tmp_path: Path, zone: str, char: str) -> None:
    # g5.16xlarge's second row (a good zone) is not priced alone: an unreadable row leaves its instance type out
    path = aws_csv(tmp_path, G5, _row("g5.16xlarge", zone=zone), _row("g5.16xlarge", zone="us-east-1b"))
    res = import_file(path)
    assert [r.id for r in res.rows] == ["aws-g5-xlarge"]
    why = res.skipped["g5.16xlarge"]
    assert why.startswith(f"line 3, column AvailabilityZone: '{zone}' holds the control character {char}"), why


def test_the_zone_is_escaped_in_the_summary(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5, _row("g5.16xlarge", zone="us-east-1a\x1b]0;T\x07"))
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, out
    assert "\x1b" not in out and "\x07" not in out, repr(out)
    flat = " ".join(out.split())
    assert "column AvailabilityZone: 'us-east-1a\\x1b]0;T\\x07' holds the control character" in flat, out
    assert "(line 3: g5.16xlarge)" in flat, out


def test_a_plain_zone_still_imports(tmp_path: Path) -> None:
    # the control: the same row with its zone written plainly is kept
    res = import_file(aws_csv(tmp_path, _row("g5.16xlarge", zone="us-east-1a")))
    assert [r.id for r in res.rows] == ["aws-g5-16xlarge"] and res.skipped == {}


def test_header_constant_is_the_one_the_rows_use() -> None:
    # _row writes sky_helpers.HEADER's 11 columns
    assert len(_row("x").split(",")) == len(HEADER.split(",")) == 11
