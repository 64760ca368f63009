"""Issue 29, fourth new-user trial (items 3, 4, 6, 7): how a serving machine is composed and judged.

- 3: independent replicas never exchange tensors, so several nodes serving them need no RDMA NIC,
  switch or slot (vLLM "Data Parallel Deployment": replicated weights, independent batches, each rank
  talking to the front end over ZMQ sockets; planner.solve.fabric);
- 7: of the splits that meet the SLO on one machine, the one with the shortest request (the most
  tokens served, the least per million) is chosen, not the first in tp-descending order;
- 6: replicas fill the machine (floor(cards / tp) of them), and idle cards are stated;
- 4: under requests_per_s the closest machine and the rate offered consider every replica/tp split.

Expected values come from the tool's own independent checks written beside them: the same scenario
planned with the split pinned, and "a fix is one a re-plan accepts" checked by planning again.
"""

from __future__ import annotations

import copy
import re

import pytest

from planner import load_catalog, plan
from planner.solve.solver import NoFeasiblePlan


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _chat(gpu: str, slo: dict, **cons) -> dict:
    """An 8B chat service (bf16 weights and KV, 3,584 prompt + 512 output tokens) on ``gpu`` only."""
    return {"name": "chat", "workloads": [{
        "name": "chat", "model": "llama-3.1-8b", "task": "infer", "weights": "bf16", "kv_dtype": "bf16",
        "context": 4096, "slo": {"ttft_s": 1.0, "tpot_s": 0.05, "output_tokens": 512, **slo}}],
        "constraints": {"vendors": ["nvidia"], "allowed_gpus": [gpu], **cons}}


def _pinned(data: dict, **keys) -> dict:
    out = copy.deepcopy(data)
    out["workloads"][0].update(keys)
    return out


# ----- 3. independent replicas over several nodes need no fabric -------------------------------------------------

def test_two_nodes_of_two_rtx_4090_serve_replicas_without_rdma_nics(catalog):
    # trial: max_cards 4, max_nodes 2: "2 x connectx NICs per node do not fit ... take a GPU slot", every
    # 2-node candidate refused on slots. Replicas of tp <= 2 stay in a node and never talk to each other.
    data = _chat("rtx-4090", {"concurrency": 50}, max_cards=4, max_nodes=2)
    data["constraints"]["allowed_platforms"] = ["xeon-w2400"]  # a workstation that takes 2 cards (and not 4)
    p = plan(data, catalog=catalog).plan
    c = p.choice
    assert (int(c["nodes"]), int(c["cards_per_node"])) == (2, 2)
    assert c["nic_id"] == "" and c["switch_id"] == "" and int(c["nic_count"]) == 0
    assert float(c["network_usd"]) == 0.0 and not [i for i in p.items if i.category == "network"]
    t = p.candidates
    two = t["nodes"] == 2
    assert two.any() and not (t["binding"][two] == "network").any() and (t["nic_count"][two] == 0).all()
    # the capex is the two nodes' parts alone: the line items sum to it with no network line
    assert p.total_usd == pytest.approx(sum(i.unit_price_usd * i.quantity for i in p.items))
    from planner.report.render import plan_text

    text = plan_text(p)
    assert "onboard Ethernet" in text and "0 x" not in text.split("Recommendation:")[1].split("\n")[0]
    assert any("onboard Ethernet" in w for w in p.warnings)


def test_training_on_two_nodes_still_buys_the_fabric(catalog):
    # data parallel training all-reduces gradients across the nodes: every 2-node row of 2 cards keeps one
    # NIC per GPU (network.nics_per_node default), 2 x 2 = 4, and their slot (here none is left: slots binds)
    data = {"name": "ft", "workloads": [{"name": "ft", "model": "llama-3.1-8b", "task": "train", "method": "lora",
                                          "micro_batch": 1, "seq_len": 2048, "gpus": 4}],
            "constraints": {"vendors": ["nvidia"], "allowed_gpus": ["rtx-4090"], "max_cards": 2, "max_nodes": 2}}
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    t = e.value.candidates
    rows = (t["nodes"] == 2) & (t["cards_per_node"] == 2)
    assert rows.any() and (t["nic_count"][rows] == 4).all() and (t["binding"][rows] == "slots").all()


# ----- 7. the best split that meets the SLO on one machine -----------------------------------------------------------

def test_two_rtx_5090_at_40_users_serve_two_replicas_of_tp_1(catalog):
    # trial: 1 replica of tp 2 (TPOT 43.4 ms, $0.509/M) chosen over 2 replicas of tp 1 (TPOT 34.1 ms,
    # $0.401/M) on the same machine, as "tp descending, first that meets" put tp 2 first
    data = _chat("rtx-5090", {"concurrency": 40}, max_nodes=1)
    auto = plan(data, catalog=catalog).plan
    s = auto.targets[0]["slo"]
    assert int(auto.choice["cards_total"]) == 2 and (s["tp"], s["replicas"]) == (1, 2) and s["met"]
    # the independent check: each split pinned on the same machine
    one = plan(_pinned(data, tp=1), catalog=catalog).plan
    two = plan(_pinned(data, tp=2), catalog=catalog).plan
    assert one.choice["platform_id"] == two.choice["platform_id"] == auto.choice["platform_id"]
    assert two.targets[0]["slo"]["met"] and two.targets[0]["slo"]["replicas"] == 1
    # the chosen split is the pinned tp 1's, with the shorter request, so more tokens served and fewer USD
    # per million (Little's law: 40 users x 512 tokens / request_s; the same machine costs the same per hour)
    assert s["request_s"] == pytest.approx(one.targets[0]["slo"]["request_s"])
    assert s["request_s"] < two.targets[0]["slo"]["request_s"]
    assert float(auto.choice["usd_per_job"]) < float(two.choice["usd_per_job"])
    assert float(auto.choice["usd_per_job"]) == pytest.approx(float(one.choice["usd_per_job"]))


# ----- 6. replicas fill the machine; idle cards are stated ---------------------------------------------------------

def test_an_eight_gpu_machine_with_tp_1_runs_eight_replicas(catalog):
    # trial tppin1: 5 replicas on the 8-GPU HGX (3 bought H100s idle, TPOT 7.45 ms); floor(8 / 1) = 8 <= 50 users
    data = _chat("h100-sxm", {"concurrency": 50, "tpot_s": 0.008})
    data["workloads"][0].update(tp=1, weights="fp8")
    p = plan(data, catalog=catalog).plan
    s = p.targets[0]["slo"]
    assert int(p.choice["cards_total"]) == 8
    assert (s["tp"], s["replicas"]) == (1, 8)
    assert s["idle_gpus"] == 0
    assert s["sequences_per_replica"] == 7  # ceil(50 users / 8 replicas)
    assert "idle" not in p.strategies[0]


def test_idle_cards_are_stated_in_the_text_and_json(catalog):
    # 5 users on the only machine of h100-sxm (8 GPUs): one replica per user at most, 8 - 5 = 3 idle
    data = _chat("h100-sxm", {"concurrency": 5})
    data["workloads"][0]["tp"] = 1
    p = plan(data, catalog=catalog).plan
    s = p.targets[0]["slo"]
    assert (s["replicas"], s["gpus"], s["idle_gpus"]) == (5, 8, 3)
    assert "3 of 8 GPUs idle" in p.strategies[0]
    from planner.solve.solver import target_lines

    assert "3 of 8 GPUs idle (one replica per user: 5 users)" in target_lines(p.targets, ["chat"])[0]


# ----- 4. the closest machine and the rate offered under requests_per_s ----------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_rate_offered_is_what_two_replicas_of_tp_1_keep_up_with(catalog):
    # trial rps30 (max_cards 2, 30 req/s): offered "4.55 (the most 1 x h100-nvl keep up with)", while 9.1 req/s
    # plans feasible on 2 x h100-nvl as 2 replicas of tp 1
    data = _chat("h100-nvl", {"requests_per_s": 30}, max_cards=2)
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    line = next(x for x in e.value.suggestions if x.startswith("slo: requests_per_s: "))
    rate = float(re.match(r"slo: requests_per_s: ([\d.]+) ", line).group(1))
    assert "2 x h100-nvl" in line and "2 replicas of tp 1" in line
    # the independent check: the largest rate one replica on one card keeps up with (the same bisection)
    one = _chat("h100-nvl", {"requests_per_s": 30}, max_cards=1)
    with pytest.raises(NoFeasiblePlan) as e1:
        plan(one, catalog=catalog)
    single = float(re.match(r"slo: requests_per_s: ([\d.]+) ", next(
        x for x in e1.value.suggestions if x.startswith("slo: requests_per_s: "))).group(1))
    # two independent replicas take twice one replica's arrivals (each rounded down to 3 figures)
    assert rate == pytest.approx(2 * single, rel=0.01)
    # and the re-plan at the rate offered is feasible with those 2 replicas of tp 1
    again = plan(_chat("h100-nvl", {"requests_per_s": rate}, max_cards=2), catalog=catalog).plan
    s = again.targets[0]["slo"]
    assert int(again.choice["cards_total"]) == 2 and (s["tp"], s["replicas"]) == (1, 2) and s["met"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_closest_slo_miss_is_graded_by_how_far_it_falls_behind(catalog):
    # a replica that cannot keep up is never "closest" because its TTFT alone looks good (the trial's 1 x
    # h100-nvl at 0.115 s while it needed 346% of the GPU for prefill): 2 replicas need half that share
    data = _chat("h100-nvl", {"requests_per_s": 30}, max_cards=2)
    with pytest.raises(NoFeasiblePlan) as e:
        plan(data, catalog=catalog)
    row = next(r for r in e.value.summary.to_frame().to_dict("records") if r["binding"] == "slo")
    assert row["closest"].startswith("2 x h100-nvl") and "2 replicas" in row["why_not"]
    assert row["shortfall"] > 100  # it falls behind: more than 100 % over, never negative
