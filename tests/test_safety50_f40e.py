"""Hostile pass 40 (tester B, report h40b): the minor findings m5, m6, m10, m11 and m12, on texts in messages.

m5: a hint's example ('e.g. instance: g6.xlarge.') was glued to its full stop and then to the import summary's
', and the same reason ...'. m6: a KELVIN SIGN in allowed_gpus was not named (it lower-cases to ASCII 'k'), and an
ASCII capital beside a full-width letter was named as a lookalike. m10: a long CSV header and column name were
echoed whole. m11: a Cyrillic letter in a header's column name was not named. m12: a cut value's '(N characters)'
was the cut text's length (45), and the first row's cut value had none.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.sky_helpers import G5, HEADER, run_cli, vms_csv

from planner.catalog.import_summary import left_out_lines
from planner.catalog.skypilot import ImportProblem, import_file
from planner.core.errors import did_you_mean

KELVIN = "\u212a"
BLACKWELL = "rtx-pro-6000-blackwell"  # a shipped GPU id holding a 'k' (catalog/gpus.yaml)


def _flat(text: str) -> str:
    return " ".join(text.split())  # the CLI wraps the summary's lines


def _aws_rows(tmp_path: Path, rows: list[list[str]]) -> Path:
    """An AWS vms.csv of ``rows`` written by Python's csv module (quoting what needs it), then G5."""
    d = tmp_path / "aws"
    d.mkdir(exist_ok=True)
    path = d / "vms.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER.split(","))
        w.writerows(rows)
        f.write(G5 + "\n")
    return path


def _row(inst: str, price: str = "1.006", info: str = "") -> list[str]:
    return [inst, "A10G", "1", "4", "16", info, price, "", "us-east-1", "us-east-1a", "x86_64"]


# --- m5: an example never glued to a full stop or to the next clause ---------------------------------------------

def test_a_hint_example_is_not_glued_to_the_summarys_same_reason(tmp_path: Path) -> None:
    path = _aws_rows(tmp_path, [_row("g5.9x=1+1large"), _row("g5.8x<1large"), _row("g5.7x[1large")])
    code, out = run_cli("catalog", "import-skypilot", str(path), "--out", str(tmp_path / "o"))
    said = _flat(out)
    assert code == 0, out
    # three rows refused by the loader's instance check alike: the first row's reason whole (its hint's example in
    # parentheses, then the hint's full stop), then the other two rows (2) as a sentence of their own
    assert ("vms.csv does (e.g. instance: g6.xlarge). The same reason with other values in 2 rows (line 2: "
            "g5.9x=1+1large, line 3: g5.8x<1large '<', line 4: g5.7x[1large '[')") in said, said
    assert "g6.xlarge.," not in said and "g6.xlarge. " not in said, said  # the example never against a stop
    assert ", and the same reason" not in said, said


def test_a_reason_ending_in_a_question_starts_the_same_reason_as_a_sentence() -> None:
    skipped = {"a": "line 2: did the file mean 'us-east-1'?", "b": "line 3: did the file mean 'us-west-2'?"}
    lines = left_out_lines(skipped)
    # 2 rows, one kind (their quoted values differ): the first reason whole, 1 row with another value after it
    assert lines == ["left out 2: did the file mean 'us-east-1'? The same reason with other values in 1 row "
                     "(line 2: a, line 3: b 'us-west-2')"], lines


def test_a_reason_ending_in_no_stop_keeps_the_clause() -> None:
    # guard: the usual join is kept where the reason ends no sentence
    skipped = {"a": "line 2: column Price: '$0.5' is not a number", "b": "line 3: column Price: '$1.5' is not a number"}
    assert left_out_lines(skipped) == ["left out 2: column Price: '$0.5' is not a number, and the same reason with "
                                       "other values in 1 row (line 2: a, line 3: b '$1.5')"]


# --- m6: a KELVIN SIGN named; an ASCII case difference never called a lookalike ------------------------------------

def _scenario(tmp_path: Path, gpu: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(f"name: cs\nconstraints:\n  allowed_gpus: [\"{gpu}\"]\nworkloads:\n  - name: a\n"
                 "    model: llama-2-7b\n    task: infer\n", encoding="utf-8")
    return p


def test_a_kelvin_sign_in_allowed_gpus_is_named(tmp_path: Path) -> None:
    gpu = BLACKWELL.replace("k", KELVIN)  # 'rtx-pro-6000-blac' is 17 characters: the KELVIN SIGN is the 18th
    code, out = run_cli("plan", str(_scenario(tmp_path, gpu)), "--out", str(tmp_path / "o"))
    said = _flat(out)
    assert code == 2, out
    assert (f"Did you mean '{BLACKWELL}'? The name given holds U+212A (KELVIN SIGN) at character 18 where "
            f"'{BLACKWELL}' has 'k', which look alike.") in said, said


def test_an_ascii_capital_beside_a_full_width_letter_is_not_named(tmp_path: Path) -> None:
    gpu = "\uff52TX" + BLACKWELL[3:]  # full-width 'r' (U+FF52), then ASCII 'TX' in upper case
    code, out = run_cli("plan", str(_scenario(tmp_path, gpu)), "--out", str(tmp_path / "o"))
    said = _flat(out)
    assert code == 2, out
    # the full-width letter alone is named: 'T' and 'X' differ from 't' and 'x' in case only
    assert (f"holds U+FF52 (FULLWIDTH LATIN SMALL LETTER R) at character 1 where '{BLACKWELL}' has 'r', which look "
            "alike.") in said, said
    assert "U+0054" not in said and "U+0058" not in said, said


def test_a_plain_case_difference_is_no_lookalike() -> None:
    hint = did_you_mean("RTX-PRO-6000-BLACKWELL", [BLACKWELL, "l4"])
    assert hint == f"Did you mean '{BLACKWELL}'?", hint


# --- m10: a long header and column name cut, with their length ------------------------------------------------------

def test_a_long_header_column_is_cut_with_its_length(tmp_path: Path) -> None:
    head = "X" * 130_000 + HEADER[len("InstanceType"):]
    path = vms_csv(tmp_path, "aws", head, G5)
    with pytest.raises(ImportProblem) as info:
        import_file(path)
    text = str(info.value)
    # the column's first 40 characters, '...', and its length, 130,000; the message stays short
    assert f"(header: '{'X' * 40}...' (130,000 characters),AcceleratorName," in text, text[:400]
    assert "X" * 41 not in text and len(text) < 1_000, len(text)


def test_a_long_near_miss_column_is_cut_in_the_hint(tmp_path: Path) -> None:
    head = "InstanceType" + "Y" * 300 + HEADER[len("InstanceType"):]
    path = vms_csv(tmp_path, "aws", head, G5)
    with pytest.raises(ImportProblem) as info:
        import_file(path)
    text = str(info.value)
    # 12 + 300 = 312 characters: 'InstanceType' and 28 Ys shown (40), then its length
    assert f"column 1 is 'InstanceType{'Y' * 28}...' (312 characters): SkyPilot writes 'InstanceType'" in text, text
    assert "Y" * 29 not in text, text


def test_a_wide_header_shows_its_first_16_columns(tmp_path: Path) -> None:
    head = ",".join(f"c{i}" for i in range(40))  # no required column; 40 columns, 16 shown, 24 counted
    path = vms_csv(tmp_path, "aws", head, "1")
    with pytest.raises(ImportProblem) as info:
        import_file(path)
    text = str(info.value)
    assert "(header: c0,c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12,c13,c14,c15,... (24 more columns))" in text, text


# --- m11: a lookalike in a header's column name named --------------------------------------------------------------

def test_a_cyrillic_letter_in_a_required_column_is_named(tmp_path: Path) -> None:
    path = vms_csv(tmp_path, "aws", "Instance\u0422ype" + HEADER[len("InstanceType"):], G5)
    with pytest.raises(ImportProblem) as info:
        import_file(path)
    text = str(info.value)
    # 'Instance' is 8 characters: the Cyrillic TE is the 9th, where SkyPilot writes 'T'
    assert ("column 1 'Instance\u0422ype' holds U+0422 (CYRILLIC CAPITAL LETTER TE) at character 9 where SkyPilot "
            "writes 'T' ('InstanceType')") in text, text


def test_a_cyrillic_letter_in_an_optional_column_is_named(tmp_path: Path) -> None:
    path = vms_csv(tmp_path, "aws", HEADER.replace("AvailabilityZone", "Availability\u0417one"), G5)
    with pytest.raises(ImportProblem) as info:
        import_file(path)
    text = str(info.value)
    # 'AvailabilityZone' is column 10; 'Availability' is 12 characters, so the Cyrillic ZE is the 13th
    assert ("column 10 'Availability\u0417one' holds U+0417 (CYRILLIC CAPITAL LETTER ZE) at character 13 where "
            "SkyPilot writes 'Z' ('AvailabilityZone')") in text, text


def test_an_ascii_case_slip_in_a_column_is_said_as_before(tmp_path: Path) -> None:
    path = vms_csv(tmp_path, "aws", HEADER.replace("Price,", "price,", 1), G5)
    with pytest.raises(ImportProblem) as info:
        import_file(path)
    text = str(info.value)
    assert "column 7 is 'price': SkyPilot writes 'Price'" in text and "U+" not in text, text


# --- m12: a cut value's count is the value's own, on every row -----------------------------------------------------

def test_cut_prices_carry_their_own_length_on_every_row(tmp_path: Path) -> None:
    rows = [_row("a1.xlarge", "$" + "1" * 100), _row("a2.xlarge", "$" + "2" * 300), _row("a3.xlarge", "$" + "3" * 50)]
    code, out = run_cli("catalog", "import-skypilot", str(_aws_rows(tmp_path, rows)), "--out", str(tmp_path / "o"))
    said = _flat(out)
    assert code == 0, out
    # '$' and 100, 300 and 50 digits: 101, 301 and 51 characters, each cut after its first 40
    assert f"column Price: '${'1' * 39}...' (101 characters) is not a number" in said, said
    assert f"line 3: a2.xlarge '${'2' * 39}...' (301 characters)" in said, said
    assert f"line 4: a3.xlarge '${'3' * 39}...' (51 characters)" in said, said
    assert "(45 characters)" not in said, said


def test_cut_gpuinfo_values_carry_their_own_length(tmp_path: Path) -> None:
    info = "{'Gpus': [{'Name': 'A10G', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576"
    rows = [_row(f"a{n}.xlarge", "1.0", info + " " * (20 * n) + "x") for n in (1, 2)]
    path = _aws_rows(tmp_path, rows)
    said = _flat(" ".join(left_out_lines(import_file(path).skipped)))
    # the unclosed dict: 105 characters, then 20 or 40 blanks and 'x': 126 and 146 characters
    assert len(info) == 105
    assert f'its GpuInfo "{info[:40]}..." (126 characters) is not the dict' in said, said
    assert f'line 3: a2.xlarge "{info[:40]}..." (146 characters)' in said, said


def test_a_long_value_a_reason_gives_whole_is_cut_inside_its_quotes() -> None:
    value = "z" * 60
    skipped = {"a": "line 2: odd 'y'", "b": f"line 3: odd {value!r}"}
    # the second row's value, whole in its reason, is cut beside its line at 40 with its own length, 60
    assert left_out_lines(skipped) == [f"left out 2: odd 'y', and the same reason with other values in 1 row (line 2: "
                                       f"a, line 3: b '{'z' * 40}...' (60 characters))"]
