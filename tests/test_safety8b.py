"""Hostile pass 6B (issue 28): numbers, names and dates read one way everywhere.

1. '_' separators: YAML 1.1 reads ``1_6`` as 16 and Python's int() too; refused in files and on the
   command line alike, the plain number as the hint (yaml.org/type/int.html).
2. Names compare in Unicode NFKC (UAX #15, 1.1): a full-width 'ｗ' (U+FF57) and 'w' are one workload name.
3. A scenario name in decomposed form ('e' + U+0301) keeps its accent in the file name (NFC), as 'é'.
4. An overlay restating a shipped GPU's memory as shipped changes nothing and needs no other figure.
5. A date in a loose spelling ('2026-1-5') is refused with the padded one as the hint.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli_helpers import QLORA
from planner.catalog.loader import load_catalog
from planner.cli.main import main
from planner.core.errors import CatalogError
from planner.core.names import name_key, safe_stem


def _scenario(tmp_path: Path, edit) -> Path:
    doc = yaml.safe_load(QLORA.read_text())
    edit(doc)
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return p


def _plan_edited(tmp_path: Path, old: str, new: str):
    """Plan the shipped QLoRA scenario with ``old`` replaced by ``new``: (the file, the line of ``new``, the
    click result)."""
    s = tmp_path / "s.yaml"
    text = QLORA.read_text()
    assert old in text
    s.write_text(text.replace(old, new, 1))
    line = next(i for i, t in enumerate(s.read_text().splitlines(), 1) if new in t)
    return s, line, CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o")])


def test_underscore_separators_are_refused_in_files_and_options(tmp_path: Path) -> None:
    s, line, r = _plan_edited(tmp_path, "lora_rank: 16", "lora_rank: 1_6")
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {s}:{line}: workloads[0].lora_rank: 1_6 is a number with '_' separators in YAML 1.1 "
                        "(it reads as 16), which may not be what was meant. Write the number without separators "
                        "(16), or quote it if it is a text ('1_6').\n"), r.stderr
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora",
                                  "--micro-batch", "1_6"])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("Error: --micro-batch: '1_6' is written with '_' separators. Write the number without "
                        "separators: --micro-batch 16.\n"), r.stderr


def test_full_width_and_ordinary_spellings_are_one_workload_name(tmp_path: Path) -> None:
    assert name_key("\uff57") == name_key("w")  # FULLWIDTH LATIN SMALL LETTER W: compatibility equivalent

    def two(doc):
        second = dict(doc["workloads"][0])
        doc["workloads"][0]["name"] = "w"
        second["name"] = "\uff57"
        doc["workloads"].append(second)

    s = _scenario(tmp_path, two)
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert "workloads[1].name: duplicate workload name" in r.stderr and "full-width" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1


def test_a_decomposed_accent_stays_in_the_file_name() -> None:
    assert safe_stem("cafe\u0301") == "caf\u00e9"
    assert safe_stem("e\u0301") != safe_stem("e")


def test_restating_a_shipped_gpus_memory_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    memory: 12 GiB\n")
    cat = load_catalog(tmp_path)
    assert cat.gpu("rtx-3060-12gb").memory_bytes == 12 * 2**30
    (tmp_path / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    memory: 16 GiB\n")
    try:
        load_catalog(tmp_path)
        raised = None
    except CatalogError as exc:
        raised = str(exc)
    assert raised is not None and "changes memory but not memory_usable" in raised, raised


def test_a_loosely_written_date_is_refused_with_the_padded_one(tmp_path: Path) -> None:
    (tmp_path / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-3060-12gb\n    price_usd: 300\n    price_kind: street\n"
                                        "    as_of: 2026-1-5\n    source: a shop's listing\n")
    try:
        load_catalog(tmp_path)
        raised = None
    except CatalogError as exc:
        raised = str(exc)
    assert raised is not None, "2026-1-5 was accepted"
    assert "must be a date written YYYY-MM-DD or YYYY-MM, not '2026-1-5'" in raised, raised
    assert "Write it with two-digit months and days: as_of: 2026-01-05." in raised, raised


# -- 6 and 8: hints that name the fix, and the command line reads 010 as files do -----------------------------


@pytest.mark.parametrize("written, hint", [
    ("0o1000", "Write the number in decimal: seq_len: 512."),  # 0o1000 = 8^3 = 512
    ("5.12e2", "Write the whole number in digits: seq_len: 512."),  # 5.12 x 10^2 = 512
    ("512 tokens", "Write the number alone, without 'tokens': seq_len: 512."),
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_whole_number_written_otherwise_gets_a_hint_that_works(tmp_path: Path, written: str, hint: str) -> None:
    _s, _line, r = _plan_edited(tmp_path, "seq_len: 512", f"seq_len: {written}")
    assert r.exit_code == 2, r.output
    assert r.stderr.rstrip("\n").endswith(f"workloads[0].seq_len: must be a whole number, not '{written}'. {hint}"), \
        r.stderr
    followed = hint.split(": ", 1)[1].rstrip(".")  # what the hint says to write: 'seq_len: 512'
    _s, _line, r = _plan_edited(tmp_path, "seq_len: 512", followed)  # the hint followed: the plan runs
    assert r.exit_code == 0, r.output


def test_the_command_line_refuses_a_leading_zero_as_files_do() -> None:
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora",
                                  "--micro-batch", "010"])
    assert r.exit_code == 2, r.output
    assert r.stderr == ("Error: --micro-batch: '010' starts with a zero, which files refuse (YAML 1.1 reads 010 as 8). "
                        "Write the number without the leading zero: --micro-batch 10.\n"), r.stderr


def test_an_empty_count_says_what_to_write(tmp_path: Path) -> None:
    s, line, r = _plan_edited(tmp_path, "micro_batch: 1", "micro_batch: ~")
    assert r.exit_code == 2, r.output
    assert r.stderr == (f"Error: {s}:{line}: workloads[0].micro_batch: must be a whole number, not empty. Write a "
                        "whole number after 'micro_batch:' (nothing there, or ~, is YAML's null).\n"), r.stderr
