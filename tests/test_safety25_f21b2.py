"""Issue 28, hostile pass 21B: findings N2, N4, M1, M4, M5 and M8 of report h21b, all in planner catalog
import-skypilot.

- N2: an AcceleratorCount or vCPUs that is not whole by its digits, though the float it rounds to is
  ('0.9999999999999999999' GPUs, '3.9999999999999999999' vCPUs), is left out, quoted as written
  (planner.catalog.skypilot_csv.is_whole; skypilot._zones, skypilot_csv._row_problem).
- N4: a NUL anywhere in the file is refused before parsing, at its line and column, named U+0000 (NUL)
  (skypilot_csv.read_rows).
- M1: the "region in upper case written in lower case" line counts only the rows whose region is written
  (skypilot._keep_region_lines).
- M4: an empty vCPUs or MemoryGiB cell is said to be empty, not '0'; a count or memory out of range is quoted as
  written, not rounded (skypilot._imported_problem's ``written``).
- M5: a header name that differs from a required column only in case is pointed at; Excel's 'sep=,' first line
  is named with a hint to remove it (skypilot_csv._header_hint).
- M8: a '"' left open on the file's last row is said to run to the end of the file, not blamed on a comma
  (skypilot_csv._read_csv).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.skypilot import ImportProblem, import_file
from planner.catalog.skypilot_csv import is_whole
from sky_helpers import G5, HEADER, aws_csv, run_cli

#: Another instance type, kept beside the row a test leaves out (1 x A10G, 8 vCPUs, 32 GiB).
G5_2X = "g5.2xlarge,A10G,1,8,32,,1.2,0.5,us-east-1,us-east-1a,x86_64"


# -- N2: whole numbers judged by their digits ------------------------------------------------------------------

@pytest.mark.parametrize("raw, whole", [("1", True), ("1.0", True), ("1e2", True), ("4.000", True), ("0.5", False),
                                        ("0.9999999999999999999", False), ("1.0000000000000000001", False),
                                        ("3.9999999999999999999", False), ("1e-400", False)])
def test_is_whole_reads_digits_not_the_float(raw: str, whole: bool) -> None:
    # float() reads each of the 19-digit fractions as a whole number; their digits say otherwise
    assert is_whole(raw) is whole


@pytest.mark.parametrize("count", ["0.9999999999999999999", "1.0000000000000000001"])
def test_a_gpu_count_that_is_not_whole_by_its_digits_is_left_out(tmp_path: Path, count: str) -> None:
    path = aws_csv(tmp_path, f"g5.xlarge,A10G,{count},4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64", G5_2X)
    result = import_file(path)
    assert [r.instance for r in result.rows] == ["g5.2xlarge"]
    # h40b m9: a value above one (by its digits) is worded as a count, one below one as a fraction of one GPU
    want = (f"a count ('{count}') of A10G GPUs that is not a whole number" if count.startswith("1.") else
            f"a fraction ('{count}') of one A10G, not a whole GPU")
    assert result.skipped["g5.xlarge"] == f"line 2: {want}"


def test_vcpus_not_whole_by_their_digits_are_left_out(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1,3.9999999999999999999,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
                   G5_2X)
    result = import_file(path)
    assert [r.instance for r in result.rows] == ["g5.2xlarge"]
    assert result.skipped["g5.xlarge"] == "line 2, column vCPUs: 3.9999999999999999999 is not a whole number of vCPUs"


def test_whole_counts_written_with_a_fraction_part_are_still_read(tmp_path: Path) -> None:
    # the control: '1.0' GPUs and '4.00' vCPUs are whole
    path = aws_csv(tmp_path, "g5.xlarge,A10G,1.0,4.00,16,,1.006,0.4,us-east-1,us-east-1a,x86_64")
    (row,) = import_file(path).rows
    assert (row.gpu_count, row.vcpus) == (1, 4)


# -- N4: a NUL is refused at its line and column -----------------------------------------------------------------

@pytest.mark.parametrize("line2, column", [
    (G5 + "\x00,extra,=1+1", len(G5) + 1),                 # after the last value: the row's width was never checked
    ("g5.xlarge,A10G,1,4,16,x\x00,1.006,0.4,us-east-1,us-east-1a,x86_64", 24),  # inside GpuInfo
])
def test_a_nul_is_refused_at_its_line_and_column(tmp_path: Path, line2: str, column: int) -> None:
    path = aws_csv(tmp_path, line2)
    with pytest.raises(ImportProblem) as exc:
        import_file(path)
    message = str(exc.value)
    assert message.startswith(f"{path}: line 2 column {column}: holds U+0000 (NUL)")
    assert "comma" not in message
    assert exc.value.hint is not None and "Remove it from line 2" in exc.value.hint


def test_a_nul_is_named_by_the_cli_with_exit_2(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5, "g5.2xlarge,A10G,1,8,32,\x00,1.2,0.5,us-east-1,us-east-1a,x86_64")
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    assert code == 2, out
    assert "line 3 column 24: holds U+0000 (NUL)" in out and "Traceback" not in out
    assert not (tmp_path / "o" / "cloud.yaml").exists()


# -- M1: the region case line counts rows written ----------------------------------------------------------------

def test_the_region_case_line_counts_only_rows_written(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5, "G5.2XLARGE,A10G,1,8,32,,1.212,0.5,US-WEST-2,us-west-2a,x86_64",
                   "g5.4xlarge,A10G,1,16,64,,1.6,0.6,US-EAST-1,us-east-1a,x86_64")
    result = import_file(path, region="us-east-1")
    assert sorted(r.instance for r in result.rows) == ["g5.4xlarge", "g5.xlarge"]
    assert result.skipped["G5.2XLARGE"] == "line 3: not offered in region 'us-east-1'"  # its row (h31b M2)
    # line 3 (G5.2XLARGE in US-WEST-2) is left out, so only line 4's region is written in lower case
    assert result.region_case_lines == ["4"]


def test_the_region_case_line_leaves_out_a_region_not_chosen(tmp_path: Path) -> None:
    # g5.xlarge is kept in us-east-1 (cheaper); its US-WEST-2 row's region is not written
    path = aws_csv(tmp_path, G5, "g5.xlarge,A10G,1,4,16,,1.5,0.6,US-WEST-2,us-west-2a,x86_64")
    result = import_file(path)
    assert [(r.instance, r.region) for r in result.rows] == [("g5.xlarge", "us-east-1")]
    assert result.region_case_lines == []


# -- M4: empty cells and long numbers as written -----------------------------------------------------------------

@pytest.mark.parametrize("cells, why", [
    (",", "columns vCPUs and MemoryGiB are empty"),
    ("4,", "column MemoryGiB is empty"),
    (",16", "column vCPUs is empty"),
])
def test_an_empty_vcpus_or_memory_cell_is_said_to_be_empty(tmp_path: Path, cells: str, why: str) -> None:
    path = aws_csv(tmp_path, f"g5.xlarge,A10G,1,{cells},,1.006,0.4,us-east-1,us-east-1a,x86_64", G5_2X)
    result = import_file(path)
    assert [r.instance for r in result.rows] == ["g5.2xlarge"]
    assert result.skipped["g5.xlarge"] == f"line 2: {why} (the catalog needs an instance's vCPUs and memory)"


@pytest.mark.parametrize("row, why", [
    ("g5.xlarge,A10G,99999999999999999999,4,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
     "99999999999999999999 GPUs, outside the catalog's 1 to 64"),
    ("g5.xlarge,A10G,1,99999999999999999999,16,,1.006,0.4,us-east-1,us-east-1a,x86_64",
     "99999999999999999999 vCPUs, outside the catalog's 1 to 4096"),
    ("g5.xlarge,A10G,1,4,99999999999999999999,,1.006,0.4,us-east-1,us-east-1a,x86_64",
     "memory 99999999999999999999 GiB, outside the catalog's 0.25 to 65536 GiB"),  # 2**-2 to 2**16 GiB
])
def test_a_count_or_memory_out_of_range_is_quoted_as_written(tmp_path: Path, row: str, why: str) -> None:
    result = import_file(aws_csv(tmp_path, row, G5_2X))
    assert result.skipped["g5.xlarge"] == f"line 2: {why}"


# -- M5: header hints ----------------------------------------------------------------------------------------------

def test_a_lower_case_header_name_is_pointed_at(tmp_path: Path) -> None:
    d = tmp_path / "aws"
    d.mkdir()
    path = d / "vms.csv"
    path.write_text(HEADER.replace(",Price,", ",price,") + "\n" + G5 + "\n", encoding="utf-8")
    with pytest.raises(ImportProblem) as exc:
        import_file(path)
    message = str(exc.value)
    # price is the 7th column of the AWS header
    assert "no column Price (header:" in message
    assert message.endswith("; column 7 is 'price': SkyPilot writes 'Price'")


def test_excels_sep_line_is_named_with_a_hint_to_remove_it(tmp_path: Path) -> None:
    d = tmp_path / "aws"
    d.mkdir()
    path = d / "vms.csv"
    path.write_text("sep=,\n" + HEADER + "\n" + G5 + "\n", encoding="utf-8")
    with pytest.raises(ImportProblem) as exc:
        import_file(path)
    message, hint = str(exc.value), exc.value.hint
    assert message.endswith("(header: sep=,); its first line, 'sep=,', is Excel's line naming the separator, "
                            "not the header")
    assert hint is not None and hint.startswith("Remove the first line, 'sep=,'")


def test_a_header_without_a_close_name_gets_no_hint(tmp_path: Path) -> None:
    # the control: nothing in the header is near 'Price', so nothing is pointed at
    d = tmp_path / "aws"
    d.mkdir()
    path = d / "vms.csv"
    path.write_text(HEADER.replace(",Price,", ",Zzz,") + "\n" + G5 + "\n", encoding="utf-8")
    with pytest.raises(ImportProblem) as exc:
        import_file(path)
    assert str(exc.value).endswith("Arch)") and exc.value.hint is None


# -- M8: a quote left open on the last row ---------------------------------------------------------------------------

def test_a_quote_open_on_the_last_row_is_named(tmp_path: Path) -> None:
    path = aws_csv(tmp_path, G5_2X, 'g5.xlarge,A10G,1,4,16,"{""a"":1,1.006,0.4,us-east-1,us-east-1a,x86_64')
    result = import_file(path)
    assert [r.instance for r in result.rows] == ["g5.2xlarge"]
    why = result.skipped["g5.xlarge"]
    # the quoted value swallows the rest of the line: GpuInfo is the 6th field, the last read
    assert why == ("line 3: a '\"' opens a quoted value that is not closed before the end of the file, so the row "
                   "has 6 fields where the header has 11")
    assert "comma" not in why


def test_a_stray_quote_inside_a_value_keeps_the_comma_hint(tmp_path: Path) -> None:
    # the control: a '"' inside an unquoted value is a plain character; the row is too wide by one comma
    path = aws_csv(tmp_path, G5_2X, 'g5.xlarge,A10G,1,4,16,x"y,1.006,0.4,us-east-1,us-east-1a,x86_64,extra')
    why = import_file(path).skipped["g5.xlarge"]
    assert why.startswith("line 3: 12 fields where the header has 11") and "a comma inside a value" in why
