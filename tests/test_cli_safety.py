"""Output failures the command line says (issue 28, second hostile pass)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BASE = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")


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


import pytest  # noqa: E402


@pytest.mark.parametrize("old, new, message", [
    # 1.0e-300 of the hours busy priced each busy hour at ~10^300 dollars (issue 28)
    ("utilization: 0.5 ", "utilization: 1.0e-300 ",
     "costs.utilization: must be at least 1/8760, one busy hour a year, not 1e-300"),
    ("depreciation_years: 3", "depreciation_years: 1.0e-300",
     "costs.depreciation_years: must be at least 1/12, one month, not 1e-300"),
])
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
