"""`planner plan` prices a served workload with an slo: at its load, as `planner compare` does (issue
29): one definition of USD per million tokens and of a request's time and cost everywhere (text,
CSV, workbook, JSON).

The derivation each expected figure comes from is written beside it:

- the load's rate (planner.cost.slo_rent.served_requests_per_s): under ``concurrency`` each of the
  users has one request in flight lasting request_s = TTFT + output_tokens x TPOT as achieved, so by
  Little's law (Little 1961, L = lambda x W) requests/s = users / request_s; under ``requests_per_s``
  it is the arrivals;
- a request's machine time = 1 / requests/s; its cost = cost per busy hour / (requests/s x 3,600);
- USD per million tokens = cost per request / output_tokens x 1e6 = cost per busy hour / (requests/s
  x output_tokens x 3,600) x 1e6;
- cost per busy hour (planner.cost.tco.local_usd_per_busy_hour) = capex x (1 - residual) / (busy
  h/month x 12 x years) + energy, energy = (cards x TDP x GPU power fraction + platform W) / 1000 x
  $/kWh x PUE, with the defaults the plan prints for chat-50-users-slo.yaml: residual 0.2, support
  $0, 3 years, 0.25 x 730 = 182.5 busy h/month, $0.13/kWh, PUE 1, power fraction 1.
"""

from __future__ import annotations

import json
import math

import pytest

from planner import compare, load_catalog, plan
from planner.report.export import plan_to_dict
from planner.report.render import plan_text
from tests.plan_helpers import shipped_scenario

OUTPUT_TOKENS = 512  # chat-50-users-slo.yaml: slo.output_tokens
USERS = 50  # chat-50-users-slo.yaml: slo.concurrency


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def chat(catalog):
    return plan(shipped_scenario("chat-50-users-slo.yaml"), catalog=catalog)


def _per_busy_hour(choice: dict, catalog) -> float:
    """Cost per busy hour of the chosen machine, from the derivation in the module docstring."""
    gpu = next(g for g in catalog.gpus if g.id == choice["gpu_id"])
    plat = next(p for p in catalog.platforms if p.id == choice["platform_id"])
    busy_hours = 0.25 * 730 * 12 * 3  # 6,570 h over 3 years at the default utilization
    energy = (int(choice["cards_total"]) * gpu.tdp_w * 1.0 + float(plat.platform_w) * int(choice["nodes"])) \
        / 1000 * 0.13 * 1.0
    return float(choice["capex_usd"]) * (1 - 0.2) / busy_hours + energy


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_plan_and_compare_agree_on_usd_per_million_tokens_at_the_load(chat, catalog):
    c = chat.plan.choice
    s = chat.plan.targets[0]["slo"]
    request_s = s["ttft_s"] + OUTPUT_TOKENS * s["tpot_s"]  # TTFT + 512 x TPOT, achieved under the load
    assert s["request_s"] == pytest.approx(request_s, rel=1e-12)
    per_hour = _per_busy_hour(c, catalog)
    # USD per million tokens = per busy hour / (50 users / request_s x 512 tokens x 3,600 s) x 1e6
    expected = per_hour / (USERS / request_s * OUTPUT_TOKENS * 3600) * 1e6
    doc = plan_to_dict(chat.plan)
    job = doc["assumptions"]["job_arithmetic"]["workloads"][0]
    assert job["usd_per_million_generated_tokens"] == pytest.approx(expected, rel=1e-9)
    priced = doc["workloads"][0]["slo"]["priced_at_load"]
    assert priced["usd_per_million_generated_tokens"] == pytest.approx(expected, rel=1e-9)
    assert priced["served_tokens_per_s"] == pytest.approx(USERS * OUTPUT_TOKENS / request_s, rel=1e-9)
    # compare prices the same machine at the same load: the same figure
    wc = compare(shipped_scenario("chat-50-users-slo.yaml"), catalog=catalog).comparison.workloads[0]
    assert wc.local_usd_per_million_tokens == pytest.approx(expected, rel=1e-9)
    assert wc.local_cost_per_job_usd == pytest.approx(job["usd_per_request"], rel=1e-9)
    # what the text prints: $0.4004 for 1 x rtx-pro-6000-blackwell ($11,627): (11,627 x 0.8 / 6,570 +
    # (600 + 300) / 1000 x 0.13) / (50 / 24.07 x 512 x 3,600) x 1e6; it was $0.3909 at full throughput
    text = " ".join(plan_text(chat.plan).split())
    assert f"${expected:,.4f} per million generated tokens at the slo: load" in text
    assert "50 users x 512 output tokens / 24.1 s per request (Little's law) = 1,063.4 tokens/s served" in text


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_requests_time_and_cost_are_at_the_load_in_every_output(chat, catalog, tmp_path):
    import openpyxl

    c = chat.plan.choice
    s = chat.plan.targets[0]["slo"]
    request_s = s["ttft_s"] + OUTPUT_TOKENS * s["tpot_s"]
    per_hour = _per_busy_hour(c, catalog)
    seconds = request_s / USERS  # 1 / (50 users / request_s)
    usd = per_hour / (USERS / request_s * 3600)  # per busy hour / requests served per hour
    assert float(c["hours_per_job"]) * 3600 == pytest.approx(seconds, rel=1e-9)
    assert float(c["usd_per_job"]) == pytest.approx(usd, rel=1e-9)
    doc = plan_to_dict(chat.plan)
    assert doc["workloads"][0]["slo"]["priced_at_load"]["usd_per_request"] == pytest.approx(usd, rel=1e-9)
    assert doc["workloads"][0]["slo"]["priced_at_load"]["seconds_per_request"] == pytest.approx(seconds, rel=1e-9)
    # every feasible row of the candidate table (the CSV) on the same basis: its own request time / 50
    t = chat.plan.candidates
    for i in [i for i in range(len(t)) if t["feasible"][i]][:40]:
        assert t["hours_per_job"][i] * 3600 == pytest.approx((t["ttft_s"][i] + OUTPUT_TOKENS * t["tpot_s"][i]) / USERS,
                                                            rel=1e-9)
    r = plan(shipped_scenario("chat-50-users-slo.yaml"), catalog=catalog, out=tmp_path, format="xlsx,csv")
    import csv

    rows = list(csv.DictReader(open(r.outputs["csv"], newline="")))
    assert float(rows[0]["usd_per_job"]) == pytest.approx(usd, rel=1e-9)
    ws = openpyxl.load_workbook(r.outputs["xlsx"])["Summary"]
    assert ws["A7"].value == "Machine time per request at the slo: load (s)"
    assert ws["B7"].value == pytest.approx(seconds, rel=1e-9)
    assert ws["A8"].value == "Cost per million tokens at the slo: load (USD)"
    assert ws["B8"].value == pytest.approx(usd / OUTPUT_TOKENS * 1e6, rel=1e-9)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_under_requests_per_s_a_request_takes_one_over_the_arrivals(catalog):
    data = json.loads(json.dumps(shipped_scenario("chat-50-users-slo.yaml")))
    slo = data["workloads"][0]["slo"]
    del slo["concurrency"]
    slo["requests_per_s"] = 2
    r = plan(data, catalog=catalog)
    c = r.plan.choice
    # 2 requests/s arrive whatever the machine: 0.5 machine-s a request on every feasible machine, and
    # per busy hour / (2 x 512 x 3,600) x 1e6 per million tokens
    t = r.plan.candidates
    for i in [i for i in range(len(t)) if t["feasible"][i]][:40]:
        assert t["hours_per_job"][i] * 3600 == pytest.approx(0.5, rel=1e-12)
    expected = _per_busy_hour(c, catalog) / (2 * OUTPUT_TOKENS * 3600) * 1e6
    job = plan_to_dict(r.plan)["assumptions"]["job_arithmetic"]["workloads"][0]
    assert job["usd_per_million_generated_tokens"] == pytest.approx(expected, rel=1e-9)
    assert job["priced_at"]["basis"] == "2 requests/s x 512 output tokens = 1,024.0 tokens/s served"
    wc = compare(data, catalog=catalog).comparison.workloads[0]
    assert wc.local_usd_per_million_tokens == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_workload_without_an_slo_keeps_the_saturated_figures(catalog):
    from planner.speed.timing import time_workload

    # the same chat without its slo: block: 50 sequences of 4,096 tokens, 512 generated a request
    data = json.loads(json.dumps(shipped_scenario("chat-50-users-slo.yaml")))
    w0 = data["workloads"][0]
    del w0["slo"]
    w0.update({"concurrency": USERS, "tokens_per_request": OUTPUT_TOKENS})
    r = plan(data, catalog=catalog)
    assert not any(t.get("slo") for t in r.plan.targets)
    job = plan_to_dict(r.plan)["assumptions"]["job_arithmetic"]["workloads"][0]
    assert "priced_at" not in job and not job["job"].endswith("at the slo: load")
    # one request's machine time is the time model's, a saturated batch over the replicas
    w, e = r.plan.workloads[0], r.plan.estimates[0]
    c = r.plan.choice
    gpu = next(g for g in catalog.gpus if g.id == c["gpu_id"])
    plat = next(p for p in catalog.platforms if p.id == c["platform_id"])
    per_lane = min(catalog.pcie_gen(gpu.pcie_gen).per_lane_bytes_per_s,
                   catalog.pcie_gen(plat.pcie_gen).per_lane_bytes_per_s)
    jt = time_workload(workload=w, estimate=e, gpu=gpu, gpu_count=w.gpus, pcie_per_lane_bytes_per_s=per_lane,
                       pcie_lanes=gpu.pcie_lanes)
    assert float(c["hours_per_job"]) * 3600 == pytest.approx(jt.seconds_per_job, rel=1e-9)
    assert job["tokens_per_s"] == pytest.approx(jt.tokens_per_s, rel=1e-9)
    assert "at the slo: load" not in plan_text(r.plan)
