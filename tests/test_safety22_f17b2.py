"""Hostile pass h17b, findings fixed on branch f17b2.

- 2: a calibration file's allocator_fraction (0 to 1) written with a leading zero or '_' gets the fraction hint
  the scenario's shares get (planner.core.shares: '05' -> 0.5, '01' and '0_1' -> 0.1), not a plain number.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

EST_INFER = ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4"]


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _calibration(tmp_path: Path, fraction: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text("schema_version: 1\ngpus:\n  - gpu_name: NVIDIA L4\n    measured_on: 2026-11-01\n"
                 f"    cuda_context: 500 MiB\n    allocator_fraction: {fraction}\n")
    return p


# -- #2: allocator_fraction is a share ---------------------------------------------------------------------------

@pytest.mark.parametrize("written, meant", [
    # the digits after the leading zero as a fraction (planner.core.shares.share_reading): '05' -> 0.5,
    # '01' and '0_1' -> 0.1; each lies in allocator_fraction's range, 0 to 1 (planner.validate.calibrate)
    ("05", "0.5"), ("01", "0.1"), ("0_1", "0.1"),
])
def test_a_leading_zero_allocator_fraction_gets_the_fraction_hint(tmp_path: Path, written: str, meant: str) -> None:
    code, err = _run(*EST_INFER, "--calibration", str(_calibration(tmp_path, written)))
    assert code == 2
    assert (f"allocator_fraction is a fraction (from 0 to 1), and {written} most likely means {meant}: "
            f"write allocator_fraction: {meant}.") in err, err
    # the hint, followed, is read
    code, out = _run(*EST_INFER, "--calibration", str(_calibration(tmp_path, meant)))
    assert code == 0, out
