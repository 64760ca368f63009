"""Issue #30's done-criterion: at most a quarter of the prices a shipped scenario pays are estimates.

For each shipped scenario the plan's quote is read: every distinct catalog part it pays for (a
GPU, a platform, a DIMM, a NIC or switch) counts once, and a part counts as an estimate when the
price paid is of kind ``estimate`` (the compiler's figure inferred from other parts or reports,
planner.catalog.prices), not a listing, an article's street or used price, a list price or a
range of published quotes (``quote-range``). The share is estimates / parts.

Scenarios the catalog cannot yet price that way are marked xfail (strict: the mark must go when
the prices are sourced), each naming the parts still paid at an estimate. Every workstation and
server platform price is a sum of its parts' prices (catalog/platforms.yaml), and the server RDIMM
and the 48/64 GB DDR5 UDIMM prices are estimates from per-GB figures (catalog/ram.yaml): no dated
2026 listing of them was found for the current pass (2026-12), so no shipped plan meets the
criterion yet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.loader import load_catalog
from planner.solve.scenario import load_scenario
from planner.solve.solver import NoFeasiblePlan, plan

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))

#: The most of a plan's priced parts that may be paid at an estimate (issue #30).
MAX_ESTIMATE_SHARE = 0.25

#: Scenario -> the parts its plan still pays at an estimate (2026-12; see the module docstring).
NOT_YET_SOURCED = {
    "chat-50-users-slo": "am5-desktop, ddr5-udimm-48g",
    "compare-qlora-7b-12gb": "am5-desktop",
    "finetune-72h-deadline": "xeon-w3400, ddr5-rdimm-32g",
    "ft-70b-cluster": "hgx-h200-8gpu, ddr5-rdimm-96g, connectx-7-ndr",
    "ft-7b-workstation": "am5-desktop, ddr5-udimm-48g",
    "lab-workstation-mix": "am5-desktop, ddr5-udimm-48g",
    "qlora-70b-2x3090": "xeon-w2400, ddr5-rdimm-96g",
    "qlora-7b-12gb": "am5-desktop",
    "serve-405b-8k": "gaudi3-8gpu, ddr5-rdimm-64g",
    "serve-70b-32k-16users": "xeon-w3400, ddr5-rdimm-96g",
    "serve-7b-2k-16users": "xeon-w2400, ddr5-rdimm-32g",
    "serve-7b-2k-1user": "am5-desktop",
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def estimate_share(p) -> tuple[float, list[str], list[str]]:
    """(share, the parts paid at an estimate, every priced part) of plan ``p``'s quote."""
    kinds: dict[str, str] = {}
    for item in p.line_items():
        if item.catalog_id:
            kinds.setdefault(item.catalog_id, item.price_kind)
    est = [k for k, kind in kinds.items() if kind == "estimate"]
    return (len(est) / len(kinds) if kinds else 0.0), est, list(kinds)


def _param(path: Path):
    why = NOT_YET_SOURCED.get(path.stem)
    if why is None:
        return pytest.param(path, id=path.stem)
    return pytest.param(path, id=path.stem, marks=pytest.mark.xfail(
        strict=True, reason=f"paid at an estimate: {why} (no dated 2026 listing found)"))


@pytest.mark.parametrize("path", [_param(p) for p in SCENARIOS])
def test_at_most_a_quarter_of_a_scenarios_prices_are_estimates(path, catalog):
    try:
        p = plan(load_scenario(path, catalog), catalog, explain=False)
    except NoFeasiblePlan:
        pytest.skip("nothing fits: the plan buys nothing")
    share, est, parts = estimate_share(p)
    assert share <= MAX_ESTIMATE_SHARE, f"{len(est)} of {len(parts)} prices are estimates: {', '.join(est)}"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_not_yet_sourced_list_names_what_the_plans_pay_at_an_estimate(catalog):
    # the xfail reasons are the measurement: each names exactly the parts its plan pays at an estimate
    for path in SCENARIOS:
        if path.stem not in NOT_YET_SOURCED:
            continue
        share, est, _ = estimate_share(plan(load_scenario(path, catalog), catalog, explain=False))
        assert share > MAX_ESTIMATE_SHARE
        assert sorted(est) == sorted(NOT_YET_SOURCED[path.stem].split(", ")), path.stem


def test_the_share_counts_each_part_once():
    from types import SimpleNamespace

    items = [SimpleNamespace(catalog_id="g", price_kind="street"), SimpleNamespace(catalog_id="p", price_kind="estimate"),
             SimpleNamespace(catalog_id="n", price_kind="estimate"), SimpleNamespace(catalog_id="n", price_kind="estimate"),
             SimpleNamespace(catalog_id="", price_kind="estimate"), SimpleNamespace(catalog_id="q", price_kind="quote-range")]
    share, est, parts = estimate_share(SimpleNamespace(line_items=lambda: items))
    assert (share, est, parts) == (0.5, ["p", "n"], ["g", "p", "n", "q"])
