"""Every shipped scenario (scenarios/*.yaml) loads against the shipped catalog and plans.

The one that reproduces a wrong seed-article figure (13B on 2 x 24 GB with ZeRO-2) must come out
infeasible, with the ZeRO-2-does-not-shard-parameters explanation and what would fit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.loader import load_catalog
from planner.solve.scenario import load_scenario
from planner.solve.solver import NoFeasiblePlan, plan

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted(SCENARIOS.glob("*.yaml"))
INFEASIBLE = {"ft-13b-2x24gb-zero2.yaml"}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_the_seed_scenarios_are_shipped():
    names = {p.name for p in FILES}
    assert {"qlora-7b-12gb.yaml", "ft-13b-2x24gb-zero2.yaml", "serve-7b-2k-1user.yaml", "serve-7b-2k-16users.yaml",
            "serve-70b-32k-16users.yaml", "ft-7b-workstation.yaml", "lab-workstation-mix.yaml",
            "ft-70b-cluster.yaml"} <= names


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario_plans(path, catalog):
    text = path.read_text()
    assert text.startswith("# "), "each scenario starts with a comment naming the seed figure it reproduces"
    lead = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert "seed article" in lead.lower()
    scenario = load_scenario(path, catalog)
    assert scenario.name == path.stem
    if path.name in INFEASIBLE:
        with pytest.raises(NoFeasiblePlan) as e:
            plan(scenario, catalog)
        err = e.value
        msg = str(err)
        assert msg.startswith(f"No machine fits scenario '{scenario.name}'")
        assert "ZeRO-2 shards the gradients, optimizer states and master weights over the 2 data-parallel GPU(s), " \
               "not the parameters: each GPU holds all 24.24 GiB of 16-bit weights" in msg
        assert any(s.startswith("QLoRA (method: qlora) on 1 x ") for s in err.suggestions)
        assert any(s.startswith("ZeRO-3") for s in err.suggestions)
        assert any(r.startswith("vram (") for r in err.reasons)
        return
    p = plan(scenario, catalog)
    c = p.choice
    assert c["feasible"] and c["per_gpu_need_bytes"] <= c["gpu_capacity_bytes"]
    assert p.total_usd == pytest.approx(c["capex_usd"], abs=0.01)
    assert p.total_usd == pytest.approx(sum(i.total_usd for i in p.line_items()), abs=0.01)
    assert len(p.estimates) == len(scenario.workloads)
    for est in p.estimates:
        assert est.per_gpu_total_bytes <= c["gpu_capacity_bytes"]
        assert est.host_total_bytes <= c["ram_bytes"]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_shipped_choices(catalog):
    """The recommended machine of each feasible scenario (reviewed by hand; see scenarios/README.md)."""
    got = {}
    for path in FILES:
        if path.name in INFEASIBLE:
            continue
        c = plan(load_scenario(path, catalog), catalog).choice
        got[path.stem] = (c["gpu_id"], int(c["cards_per_node"]), int(c["nodes"]), c["platform_id"])
    assert got["qlora-7b-12gb"] == ("rtx-3060-12gb", 1, 1, "am5-desktop")
    assert got["serve-70b-32k-16users"][0] not in ("rtx-3060-12gb",) and got["serve-70b-32k-16users"][1] >= 2
    assert got["ft-70b-cluster"][2] >= 2 and got["ft-70b-cluster"][3].startswith("hgx-")
    # an 8-accelerator baseboard server (the cheapest is Gaudi 3's since the catalog has its server)
    assert catalog.platform(got["serve-405b-8k"][3]).fixed_gpu_count == 8 and got["serve-405b-8k"][1] == 8
