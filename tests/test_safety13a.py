"""Issue 28, hostile pass 10 (report h10b): names, texts, ids and YAML spellings.

- #2: a run of blanks inside a name is refused; the terminal wrapper squeezes a run of blanks in a text it
  wraps (an extras description), so that no text from a file starts a line of its own.
- #5: blank-looking characters other than one ordinary space (U+2800, U+1680, the other Zs) anywhere in a name,
  and the same combining mark twice in a row (UTS #39, 5.4), are refused.
- #17: the clash messages show letters as they are.
- #18: catalog ids that a CSV reader converts (numbers, booleans, NaN, dates) are refused.
- #4: an overlay's SOURCES.md is split at line feeds only; VT, FF, U+2028, U+0085 and controls are refused.
- #11-#14: YAML spellings that read as something else get the hint that fixes them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.textfit import fit_table, fit_text

WORKLOAD = "    model: llama-2-7b\n    task: infer\n"


def _error(tmp_path: Path, text: str, *args: str) -> str:
    """The stderr of planning the scenario ``text`` (written to s.yaml): exit 2 required."""
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "out"), "--format", "json", *args])
    assert r.exit_code == 2, r.output
    return r.stderr


def _named(name: str) -> str:
    """A scenario whose one workload is called ``name`` (a YAML double-quoted text, escapes allowed)."""
    return f'name: s\nworkloads:\n  - name: "{name}"\n{WORKLOAD}constraints: {{allowed_gpus: [rtx-4090]}}\n'


# -- #2: runs of blanks --------------------------------------------------------------------------------------

def test_a_run_of_blanks_inside_a_name_is_refused(tmp_path: Path) -> None:
    err = _error(tmp_path, _named("chat" + " " * 6 + "Total: $99.00"))
    assert err == (f"Error: {tmp_path / 's.yaml'}:3: workloads[0].name: 'chat      Total: $99.00' holds a run of 6 "
                   "blanks at character 5: a name may hold single spaces only, since a run of them looks like one "
                   "and lets the terminal start a line with the text after it. Write one space: "
                   "'chat Total: $99.00'.\n"), err


def test_one_ordinary_space_inside_a_name_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(_named("team a"), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "Workload team a (infer, llama-2-7b)" in r.stdout, r.stdout


def test_the_wrapper_squeezes_a_run_of_blanks_so_no_text_starts_a_line_of_its_own() -> None:
    # a 150-space run in a wrapped line would put 'Total:' at the start of the next line (h10b #2)
    line = "  - estimated prices: SSD" + " " * 150 + "Total: $99.00 (capex, USD)"
    assert fit_text(line, 60) == "  - estimated prices: SSD Total: $99.00 (capex, USD)"
    # a table cell: squeezed too, so the column is as wide as the words and nothing wraps to a line start
    table = fit_table(["item", "qty"], [["SSD" + " " * 150 + "Total: $99.00", "1"]], 60)
    assert table == "item              qty\n----------------- ---\nSSD Total: $99.00   1", table  # 17 + 1 + 3
    # a line that fits is left as it is (aligned columns stay aligned); the indent is kept
    assert fit_text("a    b", 60) == "a    b"
    assert fit_text("    a" + " " * 80 + "b", 60) == "    a b"


def test_an_extras_description_with_a_run_of_blanks_prints_on_its_line(tmp_path: Path) -> None:
    desc = "SSD" + " " * 150 + "Total: $99.00 (capex, USD)"
    text = ("name: e\nworkloads:\n  - {model: llama-2-7b, task: infer}\nconstraints: {allowed_gpus: [rtx-4090]}\n"
            f'extras:\n  - {{description: "{desc}", unit_price_usd: 1, source: s, as_of: 2026-01-15}}\n')
    (tmp_path / "e.yaml").write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "e.yaml"), "--out", str(tmp_path / "o"), "--format", "json"],
                           env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    starts = [line for line in r.stdout.splitlines() if line.lstrip().startswith("Total: $99.00")]
    assert starts == [], starts
    assert "SSD Total: $99.00 (capex, USD)" in r.stdout, r.stdout


# -- #5: blank-looking characters and repeated marks -----------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_blank_looking_character_inside_a_name_is_refused(tmp_path: Path) -> None:
    braille = _error(tmp_path, _named("team\\u2800a"))
    ogham = _error(tmp_path, _named("team\\u1680a"))
    nbsp = _error(tmp_path, _named("team\\u00a0a"))
    path = tmp_path / "s.yaml"
    assert braille == (f"Error: {path}:3: workloads[0].name: 'team\u2800a' holds U+2800 (BRAILLE PATTERN BLANK) at "
                       "character 5, drawn as blank space like an ordinary space, so the name looks like another. "
                       "Write an ordinary space or '-' instead: 'team a'.\n"), braille
    assert ogham == (f"Error: {path}:3: workloads[0].name: 'team\\u1680a' holds U+1680 (OGHAM SPACE MARK) at "
                     "character 5, drawn as blank space like an ordinary space, so the name looks like another. "
                     "Write an ordinary space or '-' instead: 'team a'.\n"), ogham
    assert nbsp == (f"Error: {path}:3: workloads[0].name: 'team\\xa0a' holds U+00A0 (NO-BREAK SPACE) at "
                    "character 5, drawn as blank space like an ordinary space, so the name looks like another. "
                    "Write an ordinary space or '-' instead: 'team a'.\n"), nbsp


def test_a_scenario_name_with_a_blank_looking_character_inside_is_refused(tmp_path: Path) -> None:
    err = _error(tmp_path, 'name: "team\\u3000a"\nworkloads:\n  - {model: llama-2-7b, task: infer}\n')
    assert err == (f"Error: {tmp_path / 's.yaml'}:1: name: 'team\\u3000a' holds U+3000 (IDEOGRAPHIC SPACE) at "
                   "character 5, drawn as blank space like an ordinary space, so the name looks like another. "
                   "Write an ordinary space or '-' instead: 'team a'.\n"), err


def test_the_same_combining_mark_twice_in_a_row_is_refused(tmp_path: Path) -> None:
    doubled = _error(tmp_path, _named("cafe\\u0301\\u0301"))
    # 'é' composed and one more U+0301: in NFD (where the check is made) the accent is doubled too
    composed = _error(tmp_path, _named("caf\\u00e9\\u0301"))
    expected = ("workloads[0].name: 'cafe\\u0301\\u0301' holds U+0301 (COMBINING ACUTE ACCENT) twice in a row, a "
                "combining mark drawn on the same letter, where twice looks like once, so the name looks like "
                "another. Write the mark once: 'caf\u00e9'.\n")
    assert doubled == f"Error: {tmp_path / 's.yaml'}:3: " + expected, doubled
    assert composed == (f"Error: {tmp_path / 's.yaml'}:3: workloads[0].name: 'caf\u00e9\\u0301' holds U+0301 "
                        "(COMBINING ACUTE ACCENT) twice in a row, a combining mark drawn on the same letter, where "
                        "twice looks like once, so the name looks like another. Write the mark once: "
                        "'caf\u00e9'.\n"), composed


def test_two_different_marks_on_one_letter_are_allowed(tmp_path: Path) -> None:
    # Vietnamese 'ệ' is e + U+0323 (dot below) + U+0302 (circumflex): two marks, each once
    (tmp_path / "s.yaml").write_text(_named("vi\\u1ec7t"), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output


# -- #17: clash messages show letters as they are ----------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_case_clash_message_shows_accented_and_greek_letters_as_they_are(tmp_path: Path) -> None:
    cafe = _error(tmp_path, "name: m\nworkloads:\n  - {name: \"caf\u00e9\", model: llama-2-7b, task: infer}\n"
                            "  - {name: \"CAF\u00c9\", model: llama-2-7b, task: infer, context: 1024}\n")
    greek = _error(tmp_path, "name: m\nworkloads:\n  - {name: \"\u03c3\u03bf\u03c6\u03bf\u03c2\", model: llama-2-7b, "
                             "task: infer}\n  - {name: \"\u03a3\u039f\u03a6\u039f\u03a3\", model: llama-2-7b, "
                             "task: infer, context: 1024}\n")
    assert cafe == (f"Error: {tmp_path / 's.yaml'}:4: workloads[1].name: duplicate workload name 'CAF\u00c9' (also "
                    "workloads[0], the same name in another case: 'CAF\u00c9' and 'caf\u00e9' differ only in upper and "
                    "lower case, so they read as one name). Give each workload its own name.\n"), cafe
    assert greek == (f"Error: {tmp_path / 's.yaml'}:4: workloads[1].name: duplicate workload name "
                     "'\u03a3\u039f\u03a6\u039f\u03a3' (also workloads[0], the same name in another case: "
                     "'\u03a3\u039f\u03a6\u039f\u03a3' and '\u03c3\u03bf\u03c6\u03bf\u03c2' differ only in upper "
                     "and lower case, so they read as one name). Give each workload its own name.\n"), greek


def test_the_spelling_clash_message_shows_full_width_letters_as_they_are(tmp_path: Path) -> None:
    err = _error(tmp_path, "name: m\nworkloads:\n  - {name: chat, model: llama-2-7b, task: infer}\n"
                           "  - {name: \"\uff43hat\", model: llama-2-7b, task: infer, context: 1024}\n")
    assert err == (f"Error: {tmp_path / 's.yaml'}:4: workloads[1].name: duplicate workload name '\uff43hat' (also "
                   "workloads[0], the same name: '\uff43hat' and 'chat' are two Unicode spellings of it (composed and "
                   "decomposed accents, or full-width and ordinary letters), which look alike). Give each workload "
                   "its own name.\n"), err


# -- #18: ids that a CSV reader converts ---------------------------------------------------------------------------

GPU = """  - id: {id}
    name: My GPU
    vendor: nvidia
    segment: consumer
    architecture: ada
    compute_capability: "8.9"
    memory: 24 GiB
    memory_usable: 24564 MiB
    memory_bandwidth: 1008 GB/s
    bf16_tflops: 165
    bf16: true
    fp8: true
    int8: true
    pcie_gen: 4
    pcie_lanes: 16
    tdp_w: 450
    slot_width: 3
    form_factor: pcie
    price_usd: 1599
    price_kind: msrp
    source: "me"
    as_of: 2026-01-01
"""


def _overlay_error(tmp_path: Path, gpu_id: str) -> str:
    """The stderr of planning s.yaml with an overlay holding one GPU of id ``gpu_id``: exit 2 required."""
    overlay = tmp_path / "ov"
    overlay.mkdir(exist_ok=True)
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n" + GPU.format(id=gpu_id), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "s.yaml"), "--catalog", str(overlay), "--out",
                                  str(tmp_path / "o"), "--format", "csv"])
    assert r.exit_code == 2, r.output
    return r.stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_catalog_ids_that_a_csv_reader_converts_are_refused(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: s\nworkloads:\n  - {model: llama-2-7b, task: infer}\n", encoding="utf-8")
    got = {gpu_id: _overlay_error(tmp_path, gpu_id) for gpu_id in ('"1-2"', '"1e5"', '"true"', '"nan"', "mar-1")}
    where = f"Error: {tmp_path / 'ov' / 'gpus.yaml'}:3: gpus[0] "
    expected = {
        '"1-2"': where + "(1-2).id: id '1-2' reads as a date in a CSV file: a spreadsheet or pandas.read_csv opening "
                         "a report's CSV shows that, not the id. Give an id with a word in it, e.g. 'my-1-2'.\n",
        '"1e5"': where + "(1e5).id: id '1e5' reads as a number in a CSV file: a spreadsheet or pandas.read_csv "
                         "opening a report's CSV shows that, not the id. Give an id with a word in it, e.g. "
                         "'my-1e5'.\n",
        '"true"': where + "(true).id: id 'true' reads as the boolean TRUE in a CSV file: a spreadsheet or "
                          "pandas.read_csv opening a report's CSV shows that, not the id. Give an id with a word in "
                          "it, e.g. 'my-true'.\n",
        '"nan"': where + "(nan).id: id 'nan' reads as a missing value (NaN) in a CSV file: a spreadsheet or "
                         "pandas.read_csv opening a report's CSV shows that, not the id. Give an id with a word in "
                         "it, e.g. 'my-nan'.\n",
        "mar-1": where + "(mar-1).id: id 'mar-1' reads as a date in a CSV file: a spreadsheet or pandas.read_csv "
                         "opening a report's CSV shows that, not the id. Give an id with a word in it, e.g. "
                         "'my-mar-1'.\n",
    }
    for gpu_id in expected:
        assert got[gpu_id] == expected[gpu_id], got[gpu_id]


def test_which_texts_a_csv_reader_converts() -> None:
    from planner.catalog.schema import csv_converted

    # numbers, booleans and missing values: pandas.read_csv's defaults; dates: day-month, year-month, month names
    converted = {"4090": "a number", "1.5": "a number", "1e5": "a number", "1e-5": "a number",
                 "true": "the boolean TRUE", "false": "the boolean FALSE", "nan": "a missing value (NaN)",
                 "null": "a missing value (NaN)", "inf": "the number infinity", "1-2": "a date", "2026-01": "a date",
                 "1.2.3": "a date", "mar-1": "a date", "1-mar-2026": "a date", "sept.2026": "a date"}
    assert {t: csv_converted(t) for t in converted} == converted
    # every shipped id shape stays an id: letters make it a word
    kept = ["rtx-4090", "a100-80gb", "h100-sxm", "l40s", "p4d.24xlarge", "m5.2xlarge", "llama-3.1-8b", "2x-a100",
            "gpu-1-2", "march", "infinite"]
    assert [t for t in kept if csv_converted(t)] == []


# -- #4: SOURCES.md lines as an editor counts them -------------------------------------------------------------

def test_sources_md_is_split_at_line_feeds_and_refuses_breaks_editors_do_not_show() -> None:
    from planner.catalog.sources import parse_sources

    rows = [("ID-VT", "doc\x0bmore", "https://e.com/x"), ("ID-FF", "doc\x0cmore", "https://e.com/y"),
            ("ID-LS", "doc\u2028more", "https://e.com/w"), ("ID-NEL", "doc\x85more", "https://e.com/v"),
            ("ID-ESC", "doc\x1b[31m", "https://e.com/u"), ("ID-RLO", "doc\u202emore", "https://e.com/t"),
            ("ID-TAB", "doc\tmore", "https://e.com/s"), ("ID-AFTER", "doc", "https://e.com/z")]
    text = "| id | document | where |\r\n|---|---|---|\r\n" + "".join(f"| {a} | {b} | {c} |\r\n" for a, b, c in rows)
    index = parse_sources(text, "ov/SOURCES.md")
    # the file has 10 lines (a CR LF ends each): the rows are lines 3 to 10, and each refused one is named
    # with the column of its character ('| ID-VT | doc' is 13 characters, so the VT is column 14)
    assert index.problems == (
        "ov/SOURCES.md:3:14: holds U+000B (LINE TABULATION), a line break to Python but not to editors; the line "
        "is skipped: remove the character (or write a space)",
        "ov/SOURCES.md:4:14: holds U+000C (FORM FEED), a line break to Python but not to editors; the line is "
        "skipped: remove the character (or write a space)",
        "ov/SOURCES.md:5:14: holds U+2028 (LINE SEPARATOR), a line break to Python but not to editors; the line "
        "is skipped: remove the character (or write a space)",
        "ov/SOURCES.md:6:15: holds U+0085 (NEXT LINE), a line break to Python but not to editors; the line is "
        "skipped: remove the character (or write a space)",
        "ov/SOURCES.md:7:15: holds U+001B (ESCAPE), which a report would show escaped, not as written; the line "
        "is skipped: remove the character (or write a space)",
        "ov/SOURCES.md:8:15: holds U+202E (RIGHT-TO-LEFT OVERRIDE), which a report would show escaped, not as "
        "written; the line is skipped: remove the character (or write a space)",
    ), index.problems
    assert sorted(index.docs) == ["ID-AFTER", "ID-TAB"]
    after = index.docs["ID-AFTER"]
    assert (after.line, after.urls) == (10, ("https://e.com/z",))  # not line 14, as splitlines() counted it
    assert (index.docs["ID-TAB"].line, index.docs["ID-TAB"].text) == (9, "doc more")


# -- #11: ' #' right after 'key: ' --------------------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_value_cut_by_a_comment_is_refused_with_the_quoted_form(tmp_path: Path) -> None:
    # YAML 1.1, 4.3.3: a '#' after white space starts a comment, so 'description:' would be empty
    optional = _error(tmp_path, "name: m\ndescription: #1 choice for the lab\nworkloads:\n  - name: w\n" + WORKLOAD)
    required = _error(tmp_path, "name: #chat\nworkloads:\n  - name: w\n" + WORKLOAD)
    nested = _error(tmp_path, "name: m\nworkloads:\n  - name: w\n" + WORKLOAD + "    notes:   #nightly\n")
    path = tmp_path / "s.yaml"
    assert optional == (f"Error: {path}:2: description is empty: YAML reads '#1 choice for the lab' after it as a "
                        "comment (' #' starts one), not as the value. Quote the text: description: '#1 choice for "
                        "the lab'.\n"), optional
    assert required == (f"Error: {path}:1: name is empty: YAML reads '#chat' after it as a comment (' #' starts one), "
                        "not as the value. Quote the text: name: '#chat'.\n"), required
    assert nested == (f"Error: {path}:6: notes is empty: YAML reads '#nightly' after it as a comment (' #' starts "
                      "one), not as the value. Quote the text: notes: '#nightly'.\n"), nested


def test_a_comment_with_a_blank_after_the_hash_stays_a_comment(tmp_path: Path) -> None:
    text = ("name: m  # the lab's plan\nworkloads:  #the list\n  - name: w\n" + WORKLOAD
            + "constraints: {allowed_gpus: [rtx-4090]}\n")
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output


def test_a_comment_inside_a_flow_mapping_is_named_at_its_line(tmp_path: Path) -> None:
    err = _error(tmp_path, "name: m\nworkloads:\n  - name: w\n" + WORKLOAD
                 + "extras:\n  - {description: SSD, unit_price_usd: 1, source: #quote 12, as_of: 2026-01-15}\n")
    # the file has 7 lines; the '#' is on line 7, column 51; the '{' at column 5
    assert err == (f"Error: {tmp_path / 's.yaml'}:7: YAML syntax error: a ' #' at line 7 column 51 starts a comment, "
                   "which hides the rest of the line, so the '{' opened at line 7 column 5 is never closed. Quote the "
                   "text that starts with '#': source: '#quote 12'.\n"), err


# -- #12: a backslash in double quotes --------------------------------------------------------------------------

def test_a_backslash_in_double_quotes_gets_the_single_quote_hint(tmp_path: Path) -> None:
    err = _error(tmp_path, 'name: m\nworkloads:\n  - name: w\n    model: "D:\\models\\llama"\n    task: infer\n')
    users = _error(tmp_path, 'name: m\ndescription: "see C:\\Users\\me"\nworkloads:\n  - name: w\n' + WORKLOAD)
    path = tmp_path / "s.yaml"
    hint = ("Inside double quotes a backslash starts an escape (\\n, \\t, \\u00e9): write the text in single quotes "
            "({}), where a backslash is itself, or write each backslash as \\\\.\n")
    assert err == (f"Error: {path}:4: YAML syntax error: found unknown escape character 'm' at line 4 column 16. "
                   + hint.format("'D:\\models\\llama'")), err
    # PyYAML's mark is column 23, the escape letter U after the backslash
    assert users == (f"Error: {path}:2: YAML syntax error: expected escape sequence of 8 hexadecimal numbers, but "
                     "found 's' at line 2 column 23. " + hint.format("'see C:\\Users\\me'")), users


# -- #13: a lone '=' or '<<' -------------------------------------------------------------------------------------

def test_a_lone_equals_or_merge_sign_is_said_to_be_a_special_value(tmp_path: Path) -> None:
    equals = _error(tmp_path, "name: m\ndescription: =\nworkloads:\n  - name: w\n" + WORKLOAD)
    merge = _error(tmp_path, "name: m\nworkloads:\n  - name: w\n" + WORKLOAD + "    notes: <<\n")
    path = tmp_path / "s.yaml"
    assert equals == (f"Error: {path}:2: YAML 1.1 reads a lone '=' as a special value (the value key !!value), not "
                      "as a text. Quote it: '='.\n"), equals
    assert merge == (f"Error: {path}:6: YAML 1.1 reads a lone '<<' as a special value (the merge key !!merge), not "
                     "as a text. Quote it: '<<'.\n"), merge


# -- #14: lists written without brackets -----------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_lists_written_without_brackets_get_the_bracketed_form(tmp_path: Path) -> None:
    infer = "  - {model: llama-2-7b, task: infer}\n"
    block = _error(tmp_path, f"name: m\nworkloads:\n{infer}constraints:\n  allowed_gpus: rtx-4090, l40s\n")
    flow = _error(tmp_path, f"name: m\nworkloads:\n{infer}constraints: {{allowed_gpus: rtx-4090, l40s, a100-80gb}}\n")
    lora = _error(tmp_path, "name: m\nworkloads:\n  - {model: llama-2-7b, task: train, method: lora, "
                            "lora_targets: q_proj, v_proj}\n")
    spaced = _error(tmp_path, "name: m\nworkloads:\n  - model: llama-2-7b\n    task: train\n    method: lora\n"
                              "    lora_targets: q_proj v_proj\n")
    path = tmp_path / "s.yaml"
    assert block == (f"Error: {path}:5: constraints.allowed_gpus: unknown GPU 'rtx-4090, l40s'. That is 2 names in "
                     "one text: write the list in brackets, allowed_gpus: [rtx-4090, l40s].\n"), block
    assert flow == (f"Error: {path}:4: constraints.l40s: unknown key 'l40s': inside {{...}} a ',' separates keys, so "
                    "'l40s' after 'allowed_gpus: rtx-4090,' is read as a key of its own. Write the list in brackets: "
                    "allowed_gpus: [rtx-4090, l40s, a100-80gb].\n"), flow
    assert lora == (f"Error: {path}:3: workloads[0].v_proj: unknown key 'v_proj': inside {{...}} a ',' separates "
                    "keys, so 'v_proj' after 'lora_targets: q_proj,' is read as a key of its own. Write the list in "
                    "brackets: lora_targets: [q_proj, v_proj].\n"), lora
    assert spaced == (f"Error: {path}:6: workloads[0].lora_targets: LoRA target 'q_proj v_proj' is not a linear module "
                      "of llama. That is 2 names in one text: write the list in brackets, lora_targets: [q_proj, "
                      "v_proj].\n"), spaced


def test_duplicate_lora_targets_are_refused(tmp_path: Path) -> None:
    err = _error(tmp_path, "name: m\nworkloads:\n  - model: llama-2-7b\n    task: train\n    method: lora\n"
                           "    lora_targets: [q_proj, v_proj, q_proj]\n")
    assert err == (f"Error: {tmp_path / 's.yaml'}:6: workloads[0].lora_targets: lists 'q_proj' twice. Give each "
                   "module once.\n"), err


# -- minor: blank options, full-width model ids ------------------------------------------------------------------

def test_blank_out_source_and_catalog_say_blank_not_empty(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(_named("w"), encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(main, ["plan", str(scenario), "--out", " "])
    catalog = runner.invoke(main, ["plan", str(scenario), "--catalog", "  "])
    (tmp_path / "sky.csv").write_text("InstanceType\n", encoding="utf-8")
    source = runner.invoke(main, ["catalog", "import-skypilot", str(tmp_path / "sky.csv"), "--out", str(tmp_path / "o"),
                                  "--source", " ", "--as-of", "2026-01"])
    assert (out.exit_code, catalog.exit_code, source.exit_code) == (2, 2, 2), (out.output, source.output)
    assert out.stderr == ("Error: --out: is blank (white space alone); give a directory for the reports, e.g. --out "
                          "reports (or --out . for the current directory).\n"), out.stderr
    assert catalog.stderr == ("Error: --catalog: is blank (white space alone). Give the overlay directory, e.g. "
                              "--catalog my-catalog, or leave --catalog out for the shipped catalog.\n"), catalog.stderr
    assert source.stderr == ("Error: Invalid value for --source: is blank (white space alone); give one line of text, "
                             "e.g. --source 'SkyPilot catalog, 2026-01'. See 'planner catalog import-skypilot "
                             "--help'.\n"), source.stderr


def test_a_full_width_model_id_gets_the_ascii_id_as_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text("model: \uff4c\uff4c\uff41\uff4d\uff41-2-7b\ntask: infer\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["estimate", "--workload", str(tmp_path / "w.yaml")])
    assert r.exit_code == 2, r.output
    first = r.stderr.split(" model: takes")[0]
    assert first == (f"Error: {tmp_path / 'w.yaml'}:1: model: unknown model '\uff4c\uff4c\uff41\uff4d\uff41-2-7b'. "
                     "Did you mean 'llama-2-7b' or 'llama-2-70b' or 'llama-2-13b'?"), r.stderr
