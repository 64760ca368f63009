"""Issue 28, hostile pass 30: h30b N5 (a scenario far inside the 20 MiB input cap took minutes: the workbook's
Assumptions sheet copied every comment line, one row each, and a flow list of 2 M numbers was read whole before its
refusal), N6 (import-skypilot's summary of left-out rows gave one line per row when the rows' bad values differ)
and M1 (the 'copy that gpus.yaml into OUT' hint printed its folders unquoted). Covered: the sheet copies the first
COPY_MAX_LINES lines and says how many more the file has; a scenario, workload or calibration file of more than
MAX_NODES values is refused at the line where the count passes the cap, by both parsers, quickly, while a catalog
file has no such cap; the summary groups reasons by kind, in the file's order, in a bounded number of lines; the
hint quotes the paths a user would paste."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.core.yamlio import MAX_NODES, YamlProblem, parse_yaml

_SCENARIO = ("name: b\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"
             "    concurrency: 1\n")
_CAP_HINT = ("A scenario, workload or calibration file holds a few hundred: look for a long list pasted in by "
             "mistake, or a file of another kind (a catalog file goes under --catalog).")


# ----- N5 (a): the scenario's copy on the Assumptions sheet -----

def test_the_copy_keeps_the_first_lines_and_says_how_many_more_there_are():
    from planner.report.sheets.assumptions import COPY_MAX_LINES, _copied_lines

    assert COPY_MAX_LINES == 2_000
    lines = [f"# line {n}" for n in range(1, COPY_MAX_LINES + 6)]  # 2,005 lines: 5 beyond the cap
    got = _copied_lines("\n".join(lines) + "\n")
    assert len(got) == COPY_MAX_LINES + 1
    assert got[:COPY_MAX_LINES] == lines[:COPY_MAX_LINES]
    assert got[-1] == ("\u2026 [the file's other 5 lines (from line 2,001) are not copied: the sheet copies the first "
                       "2,000 lines, and the scenario file holds them all]")
    one_more = _copied_lines("\n".join(lines[:COPY_MAX_LINES + 1]))
    assert one_more[-1] == ("\u2026 [the file's other line (2,001) is not copied: the sheet copies the first 2,000 "
                            "lines, and the scenario file holds them all]")
    # a file of exactly the cap is copied whole, with no note
    assert _copied_lines("\n".join(lines[:COPY_MAX_LINES])) == lines[:COPY_MAX_LINES]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_scenario_of_64k_comment_lines_plans_in_seconds(tmp_path):
    import openpyxl

    from planner.cli.main import main

    path = tmp_path / "b.yaml"
    path.write_text(_SCENARIO + "#x\n" * (64 * 1024))  # 65,536 comment lines after the 7 of the scenario
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o"), "--format", "xlsx"])
    took = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    assert took < 30, took  # 20 s on 2 cores before the cap; about 1 s of it now
    ws = openpyxl.load_workbook(tmp_path / "o" / "b.xlsx")["Assumptions"]
    last = ws.cell(row=ws.max_row, column=1)
    # 7 + 65,536 lines, 2,000 copied: 63,543 are not
    assert last.value == ("\u2026 [the file's other 63,543 lines (from line 2,001) are not copied: the sheet copies "
                          "the first 2,000 lines, and the scenario file holds them all]")
    assert ws.cell(row=ws.max_row - 1, column=1).value == "#x"
    assert last.font.name == "Courier New"


# ----- N5 (b): the cap on values while parsing -----

def _flow_list(items: int) -> str:
    return _SCENARIO + "    zzz: [" + "1," * (items - 1) + "1]\n"  # the list on line 8


def _refusal(text: str, **kw) -> YamlProblem:
    with pytest.raises(YamlProblem) as info:
        parse_yaml(text, **kw)
    return info.value


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_file_of_more_values_than_the_cap_is_refused_at_the_line_that_passes_it():
    assert MAX_NODES == 100_000
    text = _flow_list(300_000)
    start = time.perf_counter()
    exc = _refusal(text)
    took = time.perf_counter() - start
    assert (str(exc), exc.line, exc.hint) == (
        "holds more than 100,000 values (mappings, lists, keys and items); the count passes 100,000 here", 8,
        _CAP_HINT)
    assert took < 10, took  # under 1 s: the count stops at the cap; reading it whole took 12 s
    # the pure-Python parser (a tab in a comment sends the text to it) stops at the same line
    exc = _refusal(text.replace("name: b\n", "name: b #\tx\n"))
    assert (str(exc), exc.line) == (
        "holds more than 100,000 values (mappings, lists, keys and items); the count passes 100,000 here", 8)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_cap_counts_values_not_lines():
    # block lines: the mapping, 'name', 'b', 'workloads', the list, the workload's mapping, 5 keys and 5 values:
    # 16 values; then 'zzz' and the list (2), then its items: 16 + 2 + n. At the cap it is read, one more is not.
    at_cap = MAX_NODES - 18
    assert len(parse_yaml(_flow_list(at_cap))["workloads"][0]["zzz"]) == at_cap
    assert _refusal(_flow_list(at_cap + 1)).line == 8
    # a catalog file is read without the cap (max_nodes=None, as the catalog loader reads)
    assert len(parse_yaml(_flow_list(at_cap + 1), max_nodes=None)["workloads"][0]["zzz"]) == at_cap + 1


@pytest.mark.slow  # over 1 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_cli_refuses_a_long_flow_list_in_one_line(tmp_path):
    from planner.cli.main import main

    path = tmp_path / "b.yaml"
    path.write_text(_flow_list(2 * 1024 * 1024))  # 4 MB, far inside the 20 MiB input cap
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o")])
    took = time.perf_counter() - start
    assert result.exit_code == 2
    assert result.output == (f"Error: {path}:8: holds more than 100,000 values (mappings, lists, keys and items); "
                             f"the count passes 100,000 here. {_CAP_HINT}\n")
    assert took < 15, took  # 34 s and 1.2 GB before the cap; about a second now
    assert not (tmp_path / "o").exists()


# ----- N6: the summary of left-out rows, by kind of reason -----

def test_reasons_that_differ_in_their_values_are_one_line():
    from planner.catalog.import_summary import left_out_lines

    skipped = {f"g5.x{i}": f"line {i + 3}, column Price: '${i}.5' is not a number" for i in range(5000)}
    skipped |= {f"g6.x{i}": f"line {i + 5003}, column AvailabilityZone: 'us-east-1a\\x1f{i}' holds the control "
                            "character U+001F" for i in range(3000)}
    got = left_out_lines(skipped)
    assert got == [
        "left out 5000: column Price: '$0.5' is not a number, and the same reason with other values in 4,999 rows "
        "(line 3: g5.x0, line 4: g5.x1 '$1.5', line 5: g5.x2 '$2.5', ...)",
        "left out 3000: column AvailabilityZone: 'us-east-1a\\x1f0' holds the control character U+001F, and the "
        "same reason with other values in 2,999 rows (line 5003: g6.x0, line 5004: g6.x1 'us-east-1a\\x1f1', line "
        "5005: g6.x2 'us-east-1a\\x1f2', ...)"]


def test_kinds_of_the_same_count_come_in_the_file_s_order_and_rows_by_line():
    from planner.catalog.import_summary import left_out_lines

    # 'GPU ...' sorts before 'a fraction ...' as text, but comes later in the file; line 10 before line 9 in
    # the mapping, shown by line
    skipped = {"g7.x": "line 12: GPU 'Z10G' has no gpus.yaml entry", "g9.x": "line 10: a fraction (1.5) of one "
               "A10G, not a whole GPU", "g8.x": "line 9: a fraction (2.5) of one A10G, not a whole GPU"}
    assert left_out_lines(skipped) == [
        "left out 2: a fraction (2.5) of one A10G, not a whole GPU, and the same reason with other values in 1 row "
        "(line 9: g8.x, line 10: g9.x 1.5)",
        "left out 1: GPU 'Z10G' has no gpus.yaml entry (line 12: g7.x)"]
    # a reason given alike by several rows reads as before: no 'other values'
    same = {f"g{i}.x": f"line {i}: no on-demand price (0 or empty)" for i in (5, 3, 4)}
    assert left_out_lines(same) == ["left out 3: no on-demand price (0 or empty) (line 3: g3.x, line 4: g4.x, "
                                    "line 5: g5.x)"]


def test_the_summary_is_bounded_whatever_the_file():
    from planner.catalog.import_summary import left_out_lines

    # a GPU name is written unquoted, so each name is its own kind: 200 kinds, one row each
    skipped = {f"g{i}.x": f"line {i + 2}: a fraction (1.5) of one ZZ{chr(65 + i % 26)}{chr(65 + i // 26)}, not a "
                          "whole GPU" for i in range(200)}
    got = left_out_lines(skipped)
    assert len(got) == 25  # 24 kinds, then one line for the other 176
    assert got[0] == "left out 1: a fraction (1.5) of one ZZAA, not a whole GPU (line 2: g0.x)"
    assert got[23] == "left out 1: a fraction (1.5) of one ZZXA, not a whole GPU (line 25: g23.x)"
    assert got[24] == (
        "left out 176 more rows for 176 other kinds of reason, the first row of each: a fraction (1.5) of one ZZYA, "
        "not a whole GPU (line 26: g24.x); a fraction (1.5) of one ZZZA, not a whole GPU (line 27: g25.x); a "
        "fraction (1.5) of one ZZAB, not a whole GPU (line 28: g26.x); and 173 more")


def test_the_cli_summary_of_distinct_bad_values_is_a_few_lines(tmp_path):
    from sky_helpers import G5, aws_csv, run_cli

    rows = [f"g5.x{i},A10G,1,4,16,,${i}.5,0.4,us-east-1,us-east-1a,x86_64" for i in range(300)]
    rows += [f"g6.x{i},A10G,1,4,16,,1.0,0.4,us-east-1,us-east-1a\x1f{i},x86_64" for i in range(200)]
    code, out = run_cli("catalog", "import-skypilot", str(aws_csv(tmp_path, G5, *rows)), "--out", str(tmp_path / "o"),
                        "--as-of", "2026-01")
    assert code == 0, out
    flat = " ".join(out.split())
    assert ("left out 300: column Price: '$0.5' is not a number, and the same reason with other values in 299 rows "
            "(line 3: g5.x0, line 4: g5.x1 '$1.5', line 5: g5.x2 '$2.5', ...)") in flat, out
    assert flat.count("left out ") == 2, out  # 500 rows left out, two kinds: two counted lines (500 before)
    assert len(out.splitlines()) < 15, out


# ----- M1: the hint to copy the overlay's gpus.yaml -----

def copy_hint_run(tmp_path: Path, folder: str, catalog: str, out: str) -> tuple[int, str]:
    """import-skypilot of a row naming GPU 'zz9', which only the overlay ``tmp_path/folder`` (given as ``catalog``)
    defines, into ``out``: (exit code, the output on one line), whose hint says to copy that gpus.yaml over."""
    import yaml

    from sky_helpers import G5, aws_csv, run_cli

    shipped = yaml.safe_load((Path(__file__).parents[1] / "catalog" / "gpus.yaml").read_text(encoding="utf-8"))
    entry = dict(next(g for g in shipped["gpus"] if g["id"] == "a10g"), id="zz9", name="NVIDIA ZZ9")
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "gpus.yaml").write_text(yaml.safe_dump({"schema_version": 1, "gpus": [entry]}))
    csv = aws_csv(tmp_path, G5, "zz.xlarge,zz9,1,4,16,,0.9,0.3,us-east-1,us-east-1a,x86_64")
    code, said = run_cli("catalog", "import-skypilot", str(csv), "--catalog", catalog, "--out", out)
    return code, " ".join(said.split())


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_copy_hint_quotes_its_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, flat = copy_hint_run(tmp_path, "ov;x", "ov;x", "o y")
    assert code == 2
    # what the hint says to run is pasted as it is (shlex.quote of each path; '--' before the paths since h33b m4),
    # and no closeness is claimed
    assert flat.endswith("unknown GPU 'zz9'. The rows name zz9 of 'ov;x/gpus.yaml', which 'o y' lacks: copy it "
                         "there (mkdir -p -- 'o y' && cp -- 'ov;x/gpus.yaml' 'o y/gpus.yaml') and import again, then give "
                         "--catalog 'o y' alone."), flat
    assert not (tmp_path / "o y" / "cloud.yaml").exists()


def test_a_long_file_the_parser_refuses_is_refused_for_what_it_holds():
    # past the size where values are counted (MAX_NODES / 2 characters), a control character is still named, not
    # an exception of the count (the pure reader refuses it as it is made)
    text = _SCENARIO + "    notes: a\x01b\n" + "#x\n" * MAX_NODES
    exc = _refusal(text)
    assert (str(exc), exc.line) == ("holds the control character U+0001, which YAML does not allow", 8)
