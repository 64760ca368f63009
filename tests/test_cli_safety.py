"""Output failures the command line says (issue 28, second hostile pass)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BASE = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_closed_output_pipe_is_an_error_line_and_exit_2() -> None:
    code = f"import sys; from planner.cli.main import main; sys.argv = ['planner', 'plan', {BASE!r}]; main()"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # the reader is gone before a byte is read (as `| (exec 0<&-; ...)`)
    err = p.stderr.read()
    p.stderr.close()
    assert p.wait(timeout=120) == 2
    assert err.count("Error:") == 1 and err.count("\n") == 1
    assert "cannot write the output: the program reading it closed it (broken pipe)" in err
    assert "Traceback" not in err


def _compare_with(tmp_path: Path, old: str, new: str) -> Path:
    text = (Path(BASE).parent / "compare-qlora-7b-12gb.yaml").read_text()
    assert old in text
    path = tmp_path / "c.yaml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("old, new, message", [
    # 1.0e-300 of the hours busy priced each busy hour at ~10^300 dollars (issue 28)
    ("utilization: 0.5 ", "utilization: 1.0e-300 ",
     "costs.utilization: must be at least 0.000114 (1/8760 to three digits: one busy hour a year), not 1e-300"),
    ("depreciation_years: 3", "depreciation_years: 1.0e-300",
     "costs.depreciation_years: must be at least 0.0833 (1/12 to three digits: one month), not 1e-300"),
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_absurd_cost_inputs_are_refused_in_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["compare", str(_compare_with(tmp_path, old, new))])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr
    # the smallest accepted values still plan (one busy hour a year; a month's ownership)
    edge = "utilization: 0.000114156 " if "utilization" in old else "depreciation_years: 0.0833334"
    r = CliRunner().invoke(main, ["compare", str(_compare_with(tmp_path, old, edge))])
    assert r.exit_code == 0, r.output


def test_an_empty_scenario_path_is_named() -> None:
    from click.testing import CliRunner

    from planner.cli.main import main

    for command in ("plan", "compare"):
        r = CliRunner().invoke(main, [command, ""])
        assert r.exit_code == 2
        assert r.stderr == ("Error: scenario: is empty: no scenario file is named. Give a scenario file, e.g. "
                            "scenarios/qlora-7b-12gb.yaml.\n")


def test_a_huge_quant_method_is_echoed_cut(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    (tmp_path / "tq").mkdir()
    (tmp_path / "tq" / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
        "quantization_config": {"quant_method": "q" * 100_000, "load_in_4bit": True}}))
    r = CliRunner().invoke(main, ["estimate", "--model", str(tmp_path / "tq"), "--task", "train", "--method", "qlora",
                                  "--seq-len", "512"])
    assert r.exit_code == 0, r.output[:2000]
    assert len(r.output) < 10_000
    assert "q" * 80 + "... (100,000 characters)" in " ".join(r.output.split()).replace("q q", "qq")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_assumptions_sheet_shows_unsafe_path_characters_escaped(tmp_path: Path) -> None:
    import os

    from openpyxl import load_workbook

    from planner import plan

    folder = tmp_path / os.fsdecode(b"a\x1bb\xffc")
    folder.mkdir()
    scenario = folder / "s.yaml"
    scenario.write_text(Path(BASE).read_text())
    r = plan(str(scenario), out=str(tmp_path / "o"), format="xlsx")
    ws = load_workbook(r.outputs["xlsx"])["Assumptions"]
    texts = [c for row in ws.iter_rows(values_only=True) for c in row if isinstance(c, str)]
    assert any("a\\x1bb\\xffc" in t and "Scenario as given" in t for t in texts)
