"""Issue 28, hostile pass 11B (reports/h11b.md): options, names, numbers and API arguments.

2. An option of one value given twice ('--model a --model b') is refused in one line, as --catalog is
   (planner.cli.common.SingleValueCommand); so is --tokens-per-month given twice without a workload name.
15. Two workload names that differ only by a dash lookalike (U+2010 ... U+FF0D) clash (planner.core.names.clash_key).
16. The long-name clash refusal counts "differ at character N" in the scenario's name, not in 'plan <name>'.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize("args, expected", [
    (["estimate", "--model", "llama-2-7b", "--model", "llama-2-13b", "--task", "infer"],
     "Error: --model: given 2 times (--model llama-2-7b --model llama-2-13b); a run takes one. Give --model once."),
    (["estimate", "--model", "llama-2-7b", "--task", "train", "--task=infer"],
     "Error: --task: given 2 times (--task train --task infer); a run takes one. Give --task once."),
    (["fit", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4", "--gpu", "h100-sxm"],
     "Error: --gpu: given 2 times (--gpu l4 --gpu h100-sxm); a run takes one. Give --gpu once."),
    (["estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "4096", "--context", "2048", "--context", "1"],
     "Error: --context: given 3 times (--context 4096 --context 2048 --context 1); a run takes one. Give --context "
     "once."),
    (["plan", str(SCENARIO), "--out", "oa", "--out", "ob"],
     "Error: --out: given 2 times (--out oa --out ob); a run takes one. Give --out once."),
    (["plan", str(SCENARIO), "--format", "md", "--format", "csv"],
     "Error: --format: given 2 times (--format md --format csv); a run takes one. Give the formats as one "
     "comma-separated list: --format md,csv."),
    (["compare", str(COMPARE), "--top", "3", "--top", "4"],
     "Error: --top: given 2 times (--top 3 --top 4); a run takes one. Give --top once."),
    (["estimate", "--workload", "a.yaml", "--workload", "b.yaml"],
     "Error: --workload: given 2 times (--workload a.yaml --workload b.yaml); a run takes one. Give --workload once."),
    (["compare", str(COMPARE), "--tokens-per-month", "1M", "--tokens-per-month", "2M"],
     "Error: --tokens-per-month: given 2 times without a workload name (--tokens-per-month 1M --tokens-per-month 2M); "
     "a count without a name is for every workload, so give it once, or once per workload as NAME=COUNT."),
    (["catalog", "check", "--today", "2026-01-01", "--today", "2026-01-02"],
     "Error: --today: given 2 times (--today 2026-01-01 --today 2026-01-02); a run takes one. Give --today once."),
])
def test_an_option_of_one_value_given_twice_is_refused(args: list[str], expected: str) -> None:
    r = _run(args)
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == expected


def test_an_option_value_that_looks_like_the_option_is_not_a_repeat() -> None:
    # '--model' after '--' is an argument, and a value that equals an option's name is the option's value
    from planner.cli.common import repeated_option
    from planner.cli.estimate import estimate

    assert repeated_option(estimate, ["--model", "a", "--", "--model", "b"]) is None
    assert repeated_option(estimate, ["--model", "a", "--task", "infer"]) is None


def _named(tmp_path: Path, name: str, stem: str) -> Path:
    text = SCENARIO.read_text()
    assert "name: qlora-7b-12gb" in text
    p = tmp_path / f"{stem}.yaml"
    p.write_text(text.replace("name: qlora-7b-12gb", f"name: {name}", 1), encoding="utf-8")
    return p


@pytest.mark.parametrize("dash", ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe58", "\ufe63",
                                  "\uff0d", "\u02d7", "\u2043", "\u058a", "\u1806"])
def test_two_workload_names_differing_only_by_a_dash_lookalike_clash(tmp_path: Path, dash: str) -> None:
    s = tmp_path / "s.yaml"
    s.write_text('name: d\nworkloads:\n  - {name: "chat-7b", model: llama-2-7b, task: infer}\n'
                 f'  - {{name: "chat{dash}7b", model: llama-2-13b, task: infer}}\n', encoding="utf-8")
    r = _run(["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    from planner.core.names import char_name

    told = (f"differ only in a dash ({char_name(dash)}), which looks like '-'; write '-' in both)"
            if dash not in "\uff0d\ufe63" else "are two Unicode spellings of it")  # NFKC: already "-"
    assert r.stderr.startswith(f"Error: {s}:4: workloads[1].name: duplicate workload name 'chat{dash}7b' (also "
                               f"workloads[0], the same name: 'chat{dash}7b' and 'chat-7b' "), r.stderr
    assert told in r.stderr and r.stderr.rstrip().endswith("Give each workload its own name."), r.stderr


def test_the_long_name_clash_counts_the_position_in_the_name(tmp_path: Path) -> None:
    # h11b #16: 125 'y' then 'a' or 'b' (126 characters each), cut to one 120-byte file name: they differ at 126
    out = tmp_path / "o"
    r = _run(["plan", str(_named(tmp_path, "y" * 125 + "a", "s1")), "--out", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    r = _run(["plan", str(_named(tmp_path, "y" * 125 + "b", "s2")), "--out", str(out), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert "(the names differ only at character 126: U+0061 (LATIN SMALL LETTER A) and U+0062 (LATIN SMALL LETTER B))" \
        in r.stderr, r.stderr
