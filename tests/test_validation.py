"""Issue 6: the memory model against measured peaks of real PyTorch/Transformers steps.

Targets per mode (and per attention kernel): median absolute error <= 5 %, worst <= 15 %, on at
least 40 configurations. The committed measurements (tests/data/validation/measured_cpu.json,
produced by ``python -m planner.validate.measure``) are always checked; with torch, transformers, peft
and bitsandbytes (QLoRA and 8-bit LoRA runs) installed at the recorded versions, a subset of the grid that
covers every model family, mode, attention kernel and run option is measured again here and checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.validate.validation import TARGET_MEDIAN, TARGET_WORST, compare_runs, full_report, summarize

ROOT = Path(__file__).resolve().parent.parent
MEASURED = ROOT / "tests" / "data" / "validation" / "measured_cpu.json"
GRID = ROOT / "tests" / "data" / "validation" / "grid.yaml"


#: Settings that size a run rather than choose what it exercises (not labels of the cover).
SIZE_SETTINGS = {"crosscheck", "micro_batch", "seq_len", "batch", "prompt_len", "new_tokens", "steps",
                 "lora_dropout", "lora_targets", "lora_rank", "mode", "dtype"}


def run_labels(run) -> set[str]:
    """What a grid run exercises: its model family, mode, kind, attention kernel and each option it sets."""
    from planner.validate.validation import mode_of

    s = run["settings"]
    labels = {f"family {run['config']['model_type']}", f"mode {mode_of(run)}", f"kind {run['kind']}",
              f"attention {s.get('attention')}"}
    labels |= {f"{k}={v}" if isinstance(v, (str, bool)) else k for k, v in s.items() if k not in SIZE_SETTINGS}
    return labels


def covering_runs(grid, seconds):
    """For each label of the grid (in sorted order) not yet covered, the run with that label that took the
    least recorded time: a deterministic cover of every family, mode, kernel and option."""
    every = sorted(set().union(*(run_labels(r) for r in grid)))
    chosen: list = []
    for label in every:
        if not any(label in run_labels(r) for r in chosen):
            chosen.append(min((r for r in grid if label in run_labels(r)), key=lambda r: seconds[r["id"]]))
    return chosen


def test_the_cover_holds_every_label_of_the_grid():
    from planner.validate.measure import load_grid

    grid = load_grid(GRID)
    seconds = {r["id"]: r["seconds"] for r in json.loads(MEASURED.read_text())["runs"]}
    cover = covering_runs(grid, seconds)
    labels = set().union(*(run_labels(r) for r in grid))
    assert set().union(*(run_labels(r) for r in cover)) == labels
    assert len({r["id"] for r in cover}) == len(cover) >= 40  # check_targets needs 40 runs
    assert {"family gpt_oss", "method=qlora", "load_in_8bit=True", "mode torch.compile"} <= labels


def check_targets(rows):
    summary = summarize(rows)
    assert summary["all"]["runs"] >= 40
    misses = {k: v for k, v in summary.items() if v["median"] > TARGET_MEDIAN or v["worst"] > TARGET_WORST}
    assert not misses, misses


def test_committed_measurements_meet_the_targets():
    doc = json.loads(MEASURED.read_text())
    check_targets(compare_runs(doc["runs"]))


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_committed_report_is_current():
    # reports/validation.md is what `python -m planner.validate.validation` writes from the committed data,
    # then the speed section (checked by tests/test_speed_published.py), which the command keeps as it is
    from planner.validate.validation import SPEED_HEADING

    doc = json.loads(MEASURED.read_text())
    expected = full_report(compare_runs(doc["runs"]), doc, ROOT / "tests" / "test_published.py",
                           ROOT / "tests" / "test_public_cases.py", ROOT / "tests" / "test_framework_releases.py")
    memory_part = (ROOT / "reports" / "validation.md").read_text().split(SPEED_HEADING)[0]
    assert memory_part == expected


def test_modes_cover_the_issue():
    doc = json.loads(MEASURED.read_text())
    keys = set(summarize(compare_runs(doc["runs"])))
    assert {"fp32", "pure bf16", "amp bf16", "checkpointing", "lora", "qlora", "lora int8", "inference",
            "optimizers other than AdamW (any mode)",
            "attention eager", "attention sdpa"} <= keys


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.longest  # about 4 minutes on 2 cores
def test_fresh_measurement_meets_the_targets():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    pytest.importorskip("bitsandbytes")
    from planner.validate.builders import versions
    from planner.validate.measure import load_grid, run_grid

    recorded = json.loads(MEASURED.read_text())["versions"]
    now = versions()
    if any(now.get(k) != recorded.get(k) for k in ("torch", "transformers", "peft", "bitsandbytes")):
        pytest.skip(f"installed versions {now} differ from the recorded {recorded}")
    # The cheapest runs (by their recorded time) that together cover every model family, mode, attention
    # kernel and run option of the grid (42 of 214 runs, about 2 minutes on 2 cores): the whole grid is
    # measured into the committed data, which the tests above check in full; this re-measures a cover of it
    # to show the measurements reproduce and still meet the targets, within CI's time. The profiler
    # cross-check (a second look at each run's last step through the CPU allocator) is recorded in the
    # committed data; the targets need only the tracked peaks.
    recorded_seconds = {r["id"]: r["seconds"] for r in json.loads(MEASURED.read_text())["runs"]}
    grid = covering_runs(load_grid(GRID), recorded_seconds)
    for run in grid:
        run["settings"]["crosscheck"] = False
    doc = run_grid(grid)
    check_targets(compare_runs(doc["runs"]))
