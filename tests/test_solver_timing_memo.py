"""The solver times each usage on each GPU once per plan (planner.solve.candidates.CandidateSet.timing):
a second check of the same usages under other constraints (the RAM rule's note, planner.solve.ramrule;
the quality warnings, planner.solve.warnings) reuses the deadline and SLO figures of the first, and
gets the same answer as a check that times every row afresh."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from planner.catalog.loader import load_catalog
from planner.solve import candidates, targets
from planner.solve.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _counting(monkeypatch, name: str) -> list:
    calls: list = []
    real = getattr(targets, name)

    def counted(*args, **kwargs):
        calls.append(args[:2])
        return real(*args, **kwargs)

    monkeypatch.setattr(targets, name, counted)
    return calls


@pytest.mark.parametrize("scenario, timer", [("finetune-72h-deadline.yaml", "run_hours"),
                                             ("chat-50-users-slo.yaml", "slo_figures")])
def test_a_second_check_of_the_same_usages_times_nothing_again(catalog, monkeypatch, scenario, timer):
    s = load_scenario(ROOT / "scenarios" / scenario, catalog)
    calls = _counting(monkeypatch, timer)
    cs = candidates.build(s, catalog, explain=False)
    first = len(calls)
    assert first > 0  # the scenario is timed (a deadline / an slo)
    # the same check again: every figure is in the memo
    candidates.evaluate(s, cs.hardware, cs.usages, explain=False, timing=cs.timing)
    assert len(calls) == first
    # without the RAM rule (what planner.solve.ramrule checks), rows that failed on RAM are timed too:
    # only the usage-and-GPU pairs the first check did not time are timed now
    free = dataclasses.replace(s, constraints=dataclasses.replace(s.constraints, ram_vram_min=0.0,
                                                                 ram_vram_min_offload=0.0))
    again = candidates.evaluate(free, cs.hardware, cs.usages, explain=False, timing=cs.timing)
    reused = len(calls) - first
    fresh = candidates.evaluate(free, cs.hardware, cs.usages, explain=False)
    afresh = len(calls) - first - reused
    assert reused < afresh
    # and the answer is the one a check without the memo gives, column for column
    for col in ("gpu_id", "platform_id", "feasible", "binding", "capex_usd", "strategy", "decode_tokens_per_s",
                "run_hours", "ttft_s", "tpot_s"):
        a, b = np.asarray(again.table[col]), np.asarray(fresh.table[col])
        if a.dtype.kind == "f":
            assert np.array_equal(a, b, equal_nan=True), col
        else:
            assert (a == b).all(), col


def test_a_memo_entry_is_never_taken_for_another_usage_of_the_same_identity():
    # the memo holds the usage itself: an id() that Python reuses after the usage is gone finds the
    # entry's usage is not the one asked about, and starts a new memo
    timing: dict = {}
    u1 = object()
    m1 = targets.timing_memo(timing, u1, 10.0, None, (None, 0.0))
    m1["x"] = 1
    assert targets.timing_memo(timing, u1, 10.0, None, (None, 0.0)) is m1
    assert targets.timing_memo(timing, u1, 20.0, None, (None, 0.0)) is not m1  # another deadline
    key = next(iter(timing))
    timing[key] = (object(), {"x": 2})  # as if u1 had gone and its id had been reused
    assert targets.timing_memo(timing, u1, 10.0, None, (None, 0.0)) == {}
    assert targets.timing_memo(None, u1, 10.0, None, (None, 0.0)) == {}
