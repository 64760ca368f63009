"""Plan to a deadline and a service level (issue 29): the solver keeps only the machines that meet
them, the choice moves when they tighten, and every output states the target and the figure.

Expected figures are the tool's own time and speed models (planner.speed) read back from the plan,
or derivations written beside each assertion (Little's law, unit conversions)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from planner import load_catalog, plan
from planner.core.errors import ScenarioError
from planner.report.export import plan_to_dict
from planner.report.render import cost_cell, time_cell
from planner.solve.scenario import Slo, scenario_from_mapping
from planner.solve.solver import NoFeasiblePlan
from tests.plan_helpers import shipped_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


_mapping = shipped_scenario


def _with_workload(data: dict, **changes) -> dict:
    out = json.loads(json.dumps(data))
    out["workloads"][0].update(changes)
    return out


@pytest.fixture(scope="module")
def deadline_plans(catalog):
    """The shipped 72 h fine-tune, and the same workload with 1,000 h and 24 h deadlines."""
    base = _mapping("finetune-72h-deadline.yaml")
    return {h: plan(_with_workload(base, deadline_hours=h), catalog=catalog) for h in (1000, 72, 24)}


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_every_feasible_machine_meets_the_deadline_and_every_deadline_miss_misses(deadline_plans):
    t = deadline_plans[72].plan.candidates
    feasible = t["feasible"]
    assert (t["run_hours"][feasible] <= 72 + 1e-9).all()
    late = t["binding"] == "deadline"
    assert late.any(), "a 72 h deadline rules some machine out"
    assert (t["run_hours"][late] > 72).all()
    # the text of a miss says the hours over
    row = int(np.nonzero(late)[0][0])
    over = t["run_hours"][row] - 72
    assert f"{over:,.1f} h over its 72 h deadline_hours" in t["why_not"][row]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_choice_changes_as_the_deadline_tightens(deadline_plans):
    loose, mid, tight = (deadline_plans[h] for h in (1000, 72, 24))
    # each choice meets its deadline (the plan's own figure, from the time model)
    for h, p in deadline_plans.items():
        d = p.plan.targets[0]["deadline"]
        assert d["limit_hours"] == h and d["met"] and d["hours"] <= h
    # a tighter deadline buys a faster, dearer machine: the cheaper ones take longer than it allows
    assert loose.plan.targets[0]["deadline"]["hours"] > 72
    assert mid.plan.targets[0]["deadline"]["hours"] > 24
    assert loose.total_usd < mid.total_usd < tight.total_usd
    assert len({p.choice["gpu_id"] for p in (loose, mid, tight)}) == 3


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_json_gives_each_workload_its_deadline(deadline_plans):
    doc = plan_to_dict(deadline_plans[72].plan)
    d = doc["workloads"][0]["deadline"]
    assert set(d) == {"limit_hours", "hours", "met"}
    assert d["limit_hours"] == 72 and d["met"] is True
    # the same hours as the candidate table's run_hours of the choice
    assert d["hours"] == pytest.approx(deadline_plans[72].choice["run_hours"])
    assert "slo" not in doc["workloads"][0]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_deadline_no_machine_meets_says_how_far_and_what_would(catalog):
    data = _with_workload(_mapping("finetune-72h-deadline.yaml"), deadline_hours=0.5)
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    err = e.value
    assert any(r.startswith("deadline (") and "over its 0.5 h deadline_hours" in r for r in err.reasons)
    assert any(s.startswith("raise deadline_hours to >= ") for s in err.suggestions)
    # no memory change is suggested when memory is not what misses
    assert not any("QLoRA" in s for s in err.suggestions)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_max_hours_per_job_is_the_deadline_of_every_training_workload(catalog):
    data = _mapping("finetune-72h-deadline.yaml")
    del data["workloads"][0]["deadline_hours"]
    data["constraints"]["max_hours_per_job"] = 72
    p = plan(data, catalog=catalog)
    assert p.plan.targets[0]["deadline"]["limit_hours"] == 72
    assert p.choice["gpu_id"] == plan(_mapping("finetune-72h-deadline.yaml"), catalog=catalog).choice["gpu_id"]


@pytest.fixture(scope="module")
def slo_plans(catalog):
    base = _mapping("chat-50-users-slo.yaml")
    out = {}
    for tpot in (0.05, 0.015):
        data = json.loads(json.dumps(base))
        data["workloads"][0]["slo"]["tpot_s"] = tpot
        out[tpot] = plan(data, catalog=catalog)
    return out


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_chat_service_meets_its_slo_and_the_choice_changes_when_it_tightens(slo_plans):
    for tpot, p in slo_plans.items():
        s = p.plan.targets[0]["slo"]
        assert s["met"] and s["tpot_s"] <= tpot and s["ttft_s"] <= 1.0
        assert s["target_tpot_s"] == tpot and s["target_ttft_s"] == 1.0
        assert s["replicas"] * s["tp"] <= p.choice["cards_total"]
    loose, tight = slo_plans[0.05], slo_plans[0.015]
    assert (loose.choice["gpu_id"], loose.choice["cards_total"]) != (tight.choice["gpu_id"], tight.choice["cards_total"])
    assert loose.total_usd < tight.total_usd
    # the loose choice is too slow for the tight target: that is why it lost
    assert loose.plan.targets[0]["slo"]["tpot_s"] > 0.015
    t = tight.plan.candidates
    missed = t["binding"] == "slo"
    assert missed.any() and (t["tpot_s"][missed] > 0.015).any()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_json_gives_the_slo_target_and_achieved_figures(slo_plans):
    doc = plan_to_dict(slo_plans[0.05].plan)
    s = doc["workloads"][0]["slo"]
    for key in ("target_ttft_s", "ttft_s", "target_tpot_s", "tpot_s", "met"):
        assert key in s
    assert s["met"] is True and "deadline" not in doc["workloads"][0]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_text_states_targets_and_inference_times_in_seconds(slo_plans, deadline_plans):
    from planner.report.render import plan_text

    text = plan_text(slo_plans[0.05].plan)
    assert "target: SLO for 50 concurrent users: TTFT" in text and "(met)" in text
    assert "machine time/request" in text and "USD/M tokens" in text
    assert "0.000 h" not in text and "$0.00 " not in text
    assert "target: deadline 72 h per run" in plan_text(deadline_plans[72].plan)


def test_serving_cells_never_read_zero():
    # 0.5 s of machine time is 0.5 / 3600 h = 0.000139 h: shown in seconds
    assert time_cell(0.5 / 3600) == "0.5 s"
    assert time_cell(7.0) == "7.000 h"
    # $0.000384 per request of 256 tokens = 0.000384 / 256 x 1e6 = $1.5 per million tokens
    assert cost_cell(0.000384, 256) == "1.5"
    assert cost_cell(0.0001712) == "0.0001712"


def test_littles_law_sizes_the_users_of_a_request_rate():
    # L = lambda x W: 2 requests/s x (1 s + 512 x 0.05 s = 26.6 s) = 53.2 -> 54 users in flight
    s = Slo(ttft_s=1.0, tpot_s=0.05, output_tokens_per_s=None, concurrency=None, requests_per_s=2.0,
            prompt_tokens=1024, output_tokens=512)
    assert s.request_bound_s == pytest.approx(26.6)
    assert s.users == math.ceil(2.0 * 26.6) == 54


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_request_rate_plans_with_littles_law(catalog):
    data = _mapping("chat-50-users-slo.yaml")
    slo = data["workloads"][0]["slo"]
    del slo["concurrency"]
    slo["requests_per_s"] = 1.0
    p = plan(data, catalog=catalog)
    s = p.plan.targets[0]["slo"]
    assert s["met"]
    # in flight per replica: ceil(1 / replicas x request_s) by Little's law
    assert s["sequences_per_replica"] == math.ceil(1.0 / s["replicas"] * s["request_s"] - 1e-9)


def test_qlora_70b_on_two_used_3090s_plans(catalog):
    p = plan(SCENARIOS / "qlora-70b-2x3090.yaml", catalog=catalog)
    assert (p.choice["cards_total"], p.choice["gpu_id"]) == (2, "rtx-3090")
    assert p.plan.targets[0]["deadline"]["met"]


@pytest.mark.parametrize("workload, key, words", [
    ({"task": "infer", "deadline_hours": 5}, "deadline_hours", "not training"),
    ({"task": "train", "method": "lora", "dataset_tokens": 10**8, "slo": {"ttft_s": 1}}, "slo", "not inference"),
    ({"task": "infer", "slo": {"tpot_s": 0.05, "output_tokens_per_s": 20, "output_tokens": 64}},
     "output_tokens_per_s", "one target twice"),
    ({"task": "infer", "slo": {"tpot_s": 0.05, "requests_per_s": 2, "output_tokens": 64}}, "requests_per_s",
     "needs ttft_s"),
    ({"task": "infer", "slo": {"ttft_s": 1, "output_tokens": 64, "latency": 2}}, "latency", "unknown key"),
    ({"task": "train", "method": "lora", "deadline_hours": 5}, None, "no dataset_tokens"),
])
def test_bad_targets_are_refused_with_the_key(catalog, workload, key, words):
    data = {"workloads": [{"name": "w", "model": "llama-3.1-8b", **workload}]}
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping(data, catalog, file="s.yaml")
    text = str(e.value)
    assert words in text
    if key is not None:
        assert key in text


# ----- levers as choice keys, and what "What would fit" tries (issue 29, items 3 and 4) ------------

def _q70(**changes) -> dict:
    w = {"name": "qlora-70b", "model": "llama-2-70b", "task": "train", "method": "qlora", "recipe": "pure-bf16",
         "optimizer": "adamw", "lora_rank": 8, "micro_batch": 1, "seq_len": 4096, "grad_accum": 8, "gpus": 2,
         "zero": 3, "checkpointing": "full", "dataset_tokens": 20_000_000}
    w.update(changes)
    return {"name": "q70", "workloads": [w], "constraints": {"allowed_gpus": ["rtx-4090"], "max_nodes": 1}}


def test_offload_params_framework_and_seq_len_are_choice_keys(catalog):
    data = _q70(framework=["transformers", "fsdp"], offload_params="auto", seq_len=[4096, 2048])
    sc = scenario_from_mapping(data, catalog)
    choices = [dict(v.choices) for v in sc.workloads[0].variants]
    assert {c["framework"] for c in choices} == {"transformers", "fsdp"}
    assert {c["offload_params"] for c in choices} == {False, True}
    # seq_len varies slowest: every 4096-token variant before the first 2048-token one
    lengths = [c["seq_len"] for c in choices]
    assert lengths == sorted(lengths, reverse=True)
    # the cheapest machine the levers allow: 2 x rtx-4090 holds it with the parameters offloaded
    p = plan(data, catalog=catalog)
    assert p.choice["cards_total"] == 2 and "offload params" in p.plan.strategies[0]


def test_seq_len_auto_is_refused_with_a_hint(catalog):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping(_q70(seq_len="auto"), catalog, file="s.yaml")
    assert "seq_len" in str(e.value) and "List the lengths" in str(e.value)


def test_what_would_fit_tries_offloading_the_parameters_and_shorter_sequences(catalog):
    with pytest.raises(NoFeasiblePlan) as e:
        plan(_q70(), catalog=catalog)
    s = e.value.suggestions
    assert any(x.startswith("ZeRO-3 with offload_params on 2 x rtx-4090") for x in s), s
    short = [x for x in s if x.startswith("seq_len: ")]
    assert short and int(short[0].split()[1]) % 128 == 0 and int(short[0].split()[1]) < 4096
    # a count past one node is whole nodes: never "3 GPUs, that is 2 node(s) of 2"
    spans = [re.search(r" at (\d+); that is (\d+) nodes of (\d+),", x) for x in s if "that is" in x]
    assert spans, s
    for m in spans:
        assert m and int(m.group(1)) == int(m.group(2)) * int(m.group(3)), m


def test_a_used_only_card_gets_its_memory_verdict_and_no_nothing_simple(catalog):
    data = _mapping("qlora-70b-2x3090.yaml")
    del data["constraints"]["used_ok"]
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    text = str(e.value)
    assert "Nothing simple would fit" not in text
    line = next(x for x in e.value.suggestions if x.startswith("set used_ok: true: rtx-3090 is sold used only"))
    assert "qlora-70b fits 2 x rtx-3090" in line


def test_a_used_card_over_the_budget_is_not_suggested(catalog):
    # A new-user trial: with budget_usd 100 the budget decides, yet "What would fit" offered used cards of
    # $400-$2,800. 2 used rtx-3090 cost 2 x $850 alone: over $100, so buying them used is no way out.
    data = _mapping("qlora-70b-2x3090.yaml")
    del data["constraints"]["used_ok"]
    data["constraints"]["budget_usd"] = 100
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    suggestions = e.value.suggestions
    assert not any(x.startswith("set used_ok: true") for x in suggestions), suggestions


def test_compare_rents_only_instances_that_meet_the_same_slo(catalog):
    from planner import compare

    data = _mapping("chat-50-users-slo.yaml")
    data["workloads"][0]["slo"]["tpot_s"] = 0.015
    r = compare(data, catalog=catalog)
    cloud = r.comparison.workloads[0].cloud
    missed = [o for o in cloud if not o.feasible and o.why_not.startswith("misses the slo")]
    assert missed, "a tight TPOT rules out some instance that holds the model"
    assert all("target 15 ms" in o.why_not for o in missed)
    # the instances rented meet it: their replicas were timed at the same load (planner.solve.targets)
    assert any(o.feasible for o in cloud)
    assert r.plan.targets[0]["slo"]["met"]


def _sheet_text(ws) -> str:
    return "\n".join(str(c.value) for row in ws.iter_rows() for c in row if c.value is not None)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_workbook_states_the_targets_and_serving_figures(catalog, tmp_path):
    import openpyxl

    r = plan(SCENARIOS / "chat-50-users-slo.yaml", catalog=catalog, out=tmp_path / "chat", format="xlsx")
    wb = openpyxl.load_workbook(r.outputs["xlsx"])
    summary = _sheet_text(wb["Summary"])
    assert "Targets (deadline, service level): target and achieved on this machine" in summary
    assert "chat-8b-50-users: SLO for 50 concurrent users: TTFT" in summary
    # a request's time and cost: seconds and USD per million tokens, never 0.000 h or $0.00
    # priced at the slo: load (planner.cost.slo_rent.at_load), and saying so
    assert ("Machine time per request at the slo: load (s)" in summary
            and "Cost per million tokens at the slo: load (USD)" in summary)
    alts = _sheet_text(wb["Alternatives"])
    for header in ("TTFT target (s)", "TTFT (s)", "TPOT target (s)", "TPOT (s)",
                   "Machine time per request at the slo: load (s)",
                   "Cost per million generated tokens at the slo: load (USD)"):
        assert header in alts
    r = plan(SCENARIOS / "finetune-72h-deadline.yaml", catalog=catalog, out=tmp_path / "ft", format="xlsx")
    wb = openpyxl.load_workbook(r.outputs["xlsx"])
    assert "lora-8b-2b-tokens: deadline 72 h per run; this machine takes" in _sheet_text(wb["Summary"])
    alts = _sheet_text(wb["Alternatives"])
    assert "Deadline (h)" in alts and "Hours per run" in alts and "TTFT (s)" not in alts


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_deadline_miss_names_more_cards_and_another_card(catalog):
    data = _with_workload(_mapping("finetune-72h-deadline.yaml"), deadline_hours=40)
    data["constraints"] = {"allowed_gpus": ["rtx-5090"], "max_cards": 4}
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    s = e.value.suggestions
    # more rtx-5090 than the 4 a node may hold (max_cards) on one node (max_nodes 1) is no fix: a re-plan would
    # refuse it, so it is not offered (trial 3); the fixes name no machine the constraints do not build
    assert not any(re.match(r"\d+ x rtx-5090", x) for x in s), s
    assert not any("more than the scenario allows" in x or "cannot build" in x for x in s), s
    other = next(x for x in s if x.startswith("another card: "))
    # worded with the re-plan's machine and hours (planner.solve.replan_fixes): the re-plan meets 40 h
    hours = float(re.search(r"\(([\d.]+) h per run\)", other).group(1))
    assert hours <= 40 and "allowed_gpus: [rtx-5090]" not in other and "re-planned with" in other


def test_an_slo_miss_names_more_replicas_and_the_target_the_closest_machine_meets(catalog):
    data = _mapping("chat-50-users-slo.yaml")
    data["workloads"][0]["slo"]["tpot_s"] = 0.018
    # 24 users: 50 on two 4090s would spend all their time prefilling arriving prompts (no target helps)
    data["workloads"][0]["slo"]["concurrency"] = 24
    data["workloads"][0]["weights"] = ["bf16", "fp8"]  # fp8 reads half the bytes per decode step
    data["constraints"] = {"allowed_gpus": ["rtx-4090"]}
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    assert any(r.startswith("slo (") and "(target 18 ms)" in r for r in e.value.reasons)
    s = e.value.suggestions
    # more replicas would meet it on 3 nodes of 2, which max_nodes 1 does not build (and a node holds one
    # rtx-4090 beside a NIC): trial 3, a fix a re-plan refuses is not offered
    assert not any(re.match(r"\d+ replicas of tp \d+ \(\d+ x rtx-4090\)", x) for x in s), s
    loosen = next(x for x in s if x.startswith("loosen the slo: to tpot_s >= "))
    assert "ttft_s" not in loosen  # the TTFT target is met: only the missed one is named
    # the loosened target is rounded up, so a re-plan with it is feasible
    data["workloads"][0]["slo"]["tpot_s"] = float(re.search(r"tpot_s >= ([\d.]+)", loosen).group(1))
    assert plan(data, catalog=catalog).plan.targets[0]["slo"]["met"] is True
