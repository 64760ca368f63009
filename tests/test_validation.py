"""Issue 6: the memory model against measured peaks of real PyTorch/Transformers steps.

Targets per mode (and per attention kernel): median absolute error <= 5 %, worst <= 15 %, on at
least 40 configurations. The committed measurements (tests/data/validation/measured_cpu.json,
produced by ``python -m planner.validate.measure``) are always checked; with torch, transformers, peft
and bitsandbytes (QLoRA and 8-bit LoRA runs) installed at the recorded versions every other run of the grid is
measured again here and checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.validate.validation import TARGET_MEDIAN, TARGET_WORST, compare_runs, full_report, summarize

ROOT = Path(__file__).resolve().parent.parent
MEASURED = ROOT / "tests" / "data" / "validation" / "measured_cpu.json"
GRID = ROOT / "tests" / "data" / "validation" / "grid.yaml"


def check_targets(rows):
    summary = summarize(rows)
    assert summary["all"]["runs"] >= 40
    misses = {k: v for k, v in summary.items() if v["median"] > TARGET_MEDIAN or v["worst"] > TARGET_WORST}
    assert not misses, misses


def test_committed_measurements_meet_the_targets():
    doc = json.loads(MEASURED.read_text())
    check_targets(compare_runs(doc["runs"]))


def test_committed_report_is_current():
    # reports/validation.md is what `python -m planner.validate.validation` writes from the committed data.
    doc = json.loads(MEASURED.read_text())
    expected = full_report(compare_runs(doc["runs"]), doc, ROOT / "tests" / "test_published.py")
    assert (ROOT / "reports" / "validation.md").read_text() == expected


def test_modes_cover_the_issue():
    doc = json.loads(MEASURED.read_text())
    keys = set(summarize(compare_runs(doc["runs"])))
    assert {"fp32", "pure bf16", "amp bf16", "checkpointing", "lora", "qlora", "lora int8", "inference",
            "optimizers other than AdamW (any mode)",
            "attention eager", "attention sdpa"} <= keys


@pytest.mark.slow
@pytest.mark.torch
def test_fresh_measurement_meets_the_targets():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    pytest.importorskip("bitsandbytes")
    from planner.validate.measure import load_grid, run_grid, versions

    recorded = json.loads(MEASURED.read_text())["versions"]
    now = versions()
    if any(now.get(k) != recorded.get(k) for k in ("torch", "transformers", "peft", "bitsandbytes")):
        pytest.skip(f"installed versions {now} differ from the recorded {recorded}")
    # Every other run of the grid (99 of 197, every family and mode): the whole grid is measured into
    # the committed data, which the tests above check in full; this re-measures a half to show the
    # measurements reproduce and still meet the targets, within CI's time. The profiler cross-check
    # (a second look at each run's last step through the CPU allocator) is recorded in the committed
    # data; the targets need only the tracked peaks.
    grid = load_grid(GRID)[::2]
    for run in grid:
        run["settings"]["crosscheck"] = False
    doc = run_grid(grid)
    check_targets(compare_runs(doc["runs"]))
