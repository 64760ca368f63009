"""Scenario objectives beyond capex (planner.cost.objective): cost per job, time to result, TCO."""

from __future__ import annotations

import dataclasses
import math

import pytest

from planner.catalog.loader import load_catalog
from planner.cost.objective import plan as objective_plan
from planner.cost.tco import CostInputs
from planner.solve.scenario import scenario_from_mapping
from planner.solve.solver import plan as solver_plan
from tests.plan_helpers import dimm, gpu, platform, tiny_catalog, train_workload

TOKENS = 10**12


def _catalog():
    # Two cards of the same size and power on one platform: 'slow' (100 dense TFLOPS, $1,000) and
    # 'fast' (400 TFLOPS, $2,000), both 300 W; the platform $2,000 and 300 W.
    slow = gpu("slow", price_usd=1000.0)
    fast = dataclasses.replace(gpu("fast", price_usd=2000.0), bf16_tflops=400.0)
    cat = tiny_catalog(gpus=[slow, fast], platforms=[platform("box", platform_w=300)], dimms=[dimm(price_usd=100.0)])
    return dataclasses.replace(cat, pcie=load_catalog().pcie)  # the time model reads the host link's rate


def _scenario(cat, objective):
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the hand arithmetic below uses
    return scenario_from_mapping({"workloads": [train_workload(dataset_tokens=TOKENS, epochs=1)],
                                  "constraints": {"max_cards": 1}, "objective": objective,
                                  "costs": {"mfu": 0.40}}, cat)


def test_cost_per_job_picks_a_dearer_faster_machine_than_capex():
    cat = _catalog()
    capex = objective_plan(_scenario(cat, "capex"), cat)
    per_job = objective_plan(_scenario(cat, "cost_per_job"), cat)
    assert capex.choice["gpu_id"] == "slow" and per_job.choice["gpu_id"] == "fast"
    assert per_job.total_usd > capex.total_usd

    # The arithmetic (planner.cost.objective's docstring), with the default ownership inputs:
    #   capex: slow 1,000 + box 2,000 + 2 x 16 GiB DIMMs 200 (RAM >= 2 x 4 GiB of VRAM, a DIMM per
    #          channel) = $3,200; fast 2,000 + 2,000 + 200 = $4,200.
    #   time:  the tiny Llama has P = 95,040 parameters: 6 x P = 570,240 FLOPs per token x 1e12 tokens
    #          = 5.7024e17 FLOPs; at 100 TFLOPS x MFU 0.40 (mixed-fp16 default) 14,256 s = 3.96 h on
    #          'slow', a quarter of it, 0.99 h, on 'fast'.
    #   $/busy hour: h = 0.25 x 730 = 182.5 busy h/month, D = 3 years -> 6,570 busy hours;
    #          capex x (1 - 0.2 residual) / 6,570 + energy (300 W card + 300 W platform = 0.6 kW x
    #          $0.13/kWh = $0.078/h): slow 3,200 x 0.8 / 6,570 + 0.078 = $0.4676/h;
    #          fast 4,200 x 0.8 / 6,570 + 0.078 = $0.5894/h.
    #   $/job: slow 3.96 h x 0.4676 = $1.85; fast 0.99 h x 0.5894 = $0.58: the dearer card wins.
    flops = 6 * 95_040 * TOKENS
    hours = {"slow": flops / (100e12 * 0.40) / 3600, "fast": flops / (400e12 * 0.40) / 3600}
    capex_usd = {"slow": 3200.0, "fast": 4200.0}
    usd = {k: hours[k] * (capex_usd[k] * 0.8 / (182.5 * 12 * 3) + 0.6 * 0.13) for k in hours}
    assert hours["slow"] == pytest.approx(3.96) and usd["slow"] == pytest.approx(1.8518, rel=1e-3)
    assert usd["fast"] == pytest.approx(0.5835, rel=1e-3)
    c = per_job.choice
    assert (c["capex_usd"], c["hours_per_job"], c["usd_per_job"]) == pytest.approx(
        (capex_usd["fast"], hours["fast"], usd["fast"]))
    alt = per_job.alternatives.row(0)
    assert alt["gpu_id"] == "slow" and alt["usd_per_job"] == pytest.approx(usd["slow"])
    assert alt["why_lost"].startswith(f"costs ${usd['slow'] - usd['fast']:,.2f} more per job")
    assert per_job.assumptions["objective"].startswith("usd_per_job:")
    assert any("per job" in line for line in per_job.assumptions["objective_arithmetic"])
    # the capex plan shows the same figures beside the price, and ranks by price
    assert capex.choice["usd_per_job"] == pytest.approx(usd["slow"])
    assert capex.alternatives.row(0)["why_lost"] == "costs $1,000.00 more"


def test_time_to_result_and_tco():
    cat = _catalog()
    fast = objective_plan(_scenario(cat, "time_to_result"), cat)
    assert fast.choice["gpu_id"] == "fast"
    assert fast.alternatives.row(0)["why_lost"].startswith("takes 2.97 h longer per job")
    # TCO over the period: capex x 0.8 + energy x 6,570 busy hours (same power): the cheaper machine
    tco = objective_plan(_scenario(cat, "tco"), cat)
    assert tco.choice["gpu_id"] == "slow"
    assert tco.choice["tco_usd"] == pytest.approx(3200 * 0.8 + 0.078 * 6570)


def test_ownership_inputs_change_the_answer():
    # at a tenth of the use, the fixed cost per busy hour is ten times higher; the faster card still wins
    # per job (hours shrink 4x, the price grows 1.31x), while a residual of 0.99 makes owning nearly free
    cat = _catalog()
    costs = CostInputs(utilization=0.025, mfu=0.40)  # mfu: the one-factor rule, as in _scenario
    assert objective_plan(_scenario(cat, "cost_per_job"), cat, costs=costs).choice["gpu_id"] == "fast"


def test_the_solver_alone_refuses_a_timed_objective():
    cat = _catalog()
    with pytest.raises(ValueError, match="plan it with planner.cost.objective.plan"):
        solver_plan(_scenario(cat, "cost_per_job"), cat)


def test_without_job_sizes_the_columns_stay_blank():
    cat = _catalog()
    s = scenario_from_mapping({"workloads": [train_workload()], "constraints": {"max_cards": 1}}, cat)
    p = objective_plan(s, cat)
    assert math.isnan(p.choice["usd_per_job"]) and not math.isnan(p.choice["tco_usd"])
    assert "not computed" in p.assumptions["objective_arithmetic"][-1]


# ----- how time and cost per job were computed (assumptions['job_arithmetic'], the text's brief lines) -----

def test_the_plan_states_how_time_and_cost_per_job_were_computed(tmp_path):
    from pathlib import Path

    import yaml

    from planner.solve.scenario import load_scenario

    cat = load_catalog()
    doc = yaml.safe_load((Path(__file__).resolve().parents[1] / "scenarios" / "compare-qlora-7b-12gb.yaml").read_text())
    # costs.mfu pins the one-factor time rule (planner.speed.timing) at the value the arithmetic below uses
    doc["costs"]["mfu"] = 0.308
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    sc = load_scenario(tmp_path / "s.yaml", cat)
    p = objective_plan(sc, cat)
    job = p.assumptions["job_arithmetic"]
    w = job["workloads"][0]
    # 1 x rtx-3060-12gb: 25.5 dense bf16 TFLOPS (gpus.yaml), QLoRA MFU 0.308 = Ampere's 16-bit 0.44
    # (planner.speed.traffic.ARCH_MFU) x QLoRA's 0.7 (planner.speed.timing.METHOD_MFU_FACTOR), pinned above;
    # time = 1e8 dataset tokens x FLOPs/token / (1 x 25.5e12 x 0.308), no offload
    assert (w["job_tokens"], w["mfu"]) == (1e8, 0.308)
    hours = 1e8 * w["flops_per_token"] / (25.5e12 * 0.308) / 3600
    assert w["hours_per_job"] == pytest.approx(hours, rel=1e-9)
    # QLoRA with full checkpointing: 4P + 6A + 2(P + A) = 6P + 8A FLOPs per token, P = llama-2-7b's
    # 6,738,415,616 parameters; A (the r=16 adapters) is below 1 % of P
    assert 6 * 6_738_415_616 <= w["flops_per_token"] <= 6.1 * 6_738_415_616
    # per busy hour: (capex x (1 - 0.2) + 0) / (0.5 x 730 h x 12 x 3 years) + (170 W + 300 W) / 1000 x $0.13/kWh
    capex = float(p.choice["capex_usd"])
    per_hour = capex * 0.8 / (365 * 12 * 3) + 470 / 1000 * 0.13
    assert job["cost_per_busy_hour"]["usd"] == pytest.approx(per_hour, rel=1e-12)
    assert job["usd_per_job"] == pytest.approx(hours * per_hour, rel=1e-9)
    brief = p.assumptions["objective_arithmetic"]
    assert any(x.startswith("time per job, qlora-7b: 100,000,000 tokens / ") and "on 1 x rtx-3060-12gb" in x
               and "MFU 0.308" in x for x in brief), brief
    assert any(x.startswith("cost per busy hour (depreciation): (capex $") for x in brief)
    assert any(s.startswith("FLOPs per token = ") for s in w["steps"])  # the full steps, for the JSON / workbook


def test_inference_cost_per_job_is_per_request_and_per_million_tokens(tmp_path):
    from planner.solve.scenario import load_scenario

    (tmp_path / "s.yaml").write_text(
        "name: chat\nworkloads:\n  - name: chat\n    model: llama-3.1-8b\n    task: infer\n    engine: vllm\n"
        "    weights: bf16\n    context: 4096\n    concurrency: 16\n    tokens_per_request: 500\n"
        "constraints:\n  allowed_gpus: [rtx-5090]\n  max_cards: 1\ncosts:\n  utilization: 0.5\n")
    cat = load_catalog()
    p = objective_plan(load_scenario(tmp_path / "s.yaml", cat), cat)
    job = p.assumptions["job_arithmetic"]
    w = job["workloads"][0]
    per_request = w["hours_per_job"] * job["cost_per_busy_hour"]["usd"]
    assert w["usd_per_request"] == pytest.approx(per_request, rel=1e-12)
    # per million generated tokens = per request / 500 generated tokens x 1e6 (linear in the requests served)
    assert w["usd_per_million_generated_tokens"] == pytest.approx(per_request / 500 * 1e6, rel=1e-12)
    assert w["unit"].startswith("USD per request") and w["scaling"].startswith("linear: N requests cost N x")
    line = next(x for x in p.assumptions["objective_arithmetic"] if x.startswith("cost per job, chat: "))
    assert f"${w['usd_per_million_generated_tokens']:,.4f} per million generated tokens" in line
