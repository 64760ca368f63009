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
