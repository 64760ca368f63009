"""Price sensitivity (planner.solve.sensitivity) and the rent-or-buy flip (planner.cost.flip).

The break-even prices are checked against the solver itself: re-pricing one part a cent below
its flip price keeps the choice, a cent above hands it to the runner-up the item names. The
range check is checked the same way: every price put at the worst case for the choice (its parts
at their highs, the worst rival's at their lows) changes the choice exactly when
``holds_across_ranges`` is False.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from planner.catalog.loader import load_catalog
from planner.cost.flip import verdict_flip
from planner.solve.scenario import load_scenario
from planner.solve.sensitivity import machine_text
from planner.solve.solver import plan

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(p for p in (ROOT / "scenarios").glob("*.yaml"))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(None)


def _repriced(catalog, category: str, part_id: str, usd: float):
    """The catalog with one part's chosen price set to ``usd`` (the priced record's own fields)."""
    lists = {"gpu": ("gpus", "price_usd"), "platform": ("platforms", "base_price_usd"),
             "memory": ("dimms", "price_usd"), "network": ("nics", "price_usd")}
    name, attr = lists[category]
    recs = tuple(dataclasses.replace(r, **{attr: usd}) if r.id == part_id else r for r in getattr(catalog, name))
    return dataclasses.replace(catalog, **{name: recs})


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_shipped_scenario_has_its_price_sensitivity(path, catalog):
    # the done-criterion of issue #30: every shipped scenario prints its price sensitivity
    from planner.solve.solver import NoFeasiblePlan

    sc = load_scenario(path, catalog)
    if sc.objective != "capex":
        pytest.skip("planner.cost.objective plans it")
    try:
        p = plan(sc, catalog, explain=False)
    except NoFeasiblePlan as e:
        # nothing fits: the message still says whether a price would change that
        assert "\nPrice sensitivity:\n  " in str(e)
        return
    s = p.price_sensitivity
    assert s is not None and s.items
    assert isinstance(s.holds_across_ranges, bool)
    # the choice's own parts come first, one per quote line with a catalog price
    ids = {i.catalog_id for i in p.line_items() if i.catalog_id and i.category != "network"}
    assert ids <= {i.catalog_id for i in s.items if i.direction == "above"}


def test_flip_prices_hand_the_choice_to_the_runner_up(catalog):
    # serve-7b-2k-16users: several feasible GPU models, so each deciding price has a rival
    sc = load_scenario(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog)
    p = plan(sc, catalog, explain=False)
    base = machine_text(p.choice)
    checked = 0
    for item in p.price_sensitivity.items:
        if item.flip_price_usd is None or item.category == "network":
            continue
        # a cent on the choice's side of the flip keeps it; a cent past it hands it to the runner-up
        keep = item.flip_price_usd - 0.01 if item.direction == "above" else item.flip_price_usd + 0.01
        lose = item.flip_price_usd + 0.01 if item.direction == "above" else item.flip_price_usd - 0.01
        if keep <= 0 or lose <= 0:
            continue
        kept = plan(sc, _repriced(catalog, item.category, item.catalog_id, keep), explain=False)
        lost = plan(sc, _repriced(catalog, item.category, item.catalog_id, lose), explain=False)
        assert machine_text(kept.choice) == base, item
        assert machine_text(lost.choice) == item.runner_up, item
        checked += 1
    assert checked >= 2


def test_break_even_is_the_price_difference_over_the_units(catalog):
    # the formula of the module docstring on the choice's GPU: x0 + (capex(r) - capex(c)) / (q(c) - q(r))
    sc = load_scenario(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog)
    p = plan(sc, catalog, explain=False)
    gpu = next(i for i in p.price_sensitivity.items if i.category == "gpu" and i.direction == "above")
    t = p.candidates
    rival = next(r for r in t.records() if r["feasible"] and machine_text(r) == gpu.runner_up)
    q_c = int(p.choice["cards_total"])
    q_r = int(rival["cards_total"]) if rival["gpu_id"] == gpu.catalog_id else 0
    expected = gpu.unit_price_usd + (rival["capex_usd"] - p.choice["capex_usd"]) / (q_c - q_r)
    assert gpu.flip_price_usd == pytest.approx(expected, abs=0.005)


def test_holds_across_ranges_agrees_with_re_solving_at_the_worst_case(catalog):
    sc = load_scenario(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog)
    p = plan(sc, catalog, explain=False)
    s = p.price_sensitivity
    if s.holds_across_ranges:
        pytest.skip("the choice holds: no worst rival to re-solve for")
    rival = next(r for r in p.candidates.records() if r["feasible"] and machine_text(r) == s.worst_rival)
    c = p.choice
    cat = catalog
    # the choice's parts at their highs, the rival's (the ones the choice does not buy) at their lows
    chosen = {("gpu", c["gpu_id"]), ("platform", c["platform_id"]), ("memory", c["dimm_id"])}
    for key, at in ((("gpu", rival["gpu_id"]), "low"), (("platform", rival["platform_id"]), "low"),
                    (("memory", rival["dimm_id"]), "low"), (("gpu", c["gpu_id"]), "high"),
                    (("platform", c["platform_id"]), "high"), (("memory", c["dimm_id"]), "high")):
        if at == "low" and key in chosen:
            continue
        rec = {"gpu": cat.gpu, "platform": cat.platform, "memory": cat.dimm}[key[0]](key[1])
        price = rec.price
        if price is None or price.low_usd is None:
            continue
        cat = _repriced(cat, key[0], key[1], price.high_usd if at == "high" else price.low_usd)
    worst = plan(sc, cat, explain=False)
    assert machine_text(worst.choice) != machine_text(c)


def test_time_to_result_does_not_depend_on_prices():
    from types import SimpleNamespace

    from planner.solve.sensitivity import price_sensitivity

    s = price_sensitivity(SimpleNamespace(objective="time_to_result"), None, 0)
    assert s.holds_across_ranges is True and not s.items
    t = price_sensitivity(SimpleNamespace(objective="tco"), None, 0)
    assert t.holds_across_ranges is None
    assert "capex objective" in t.note


def test_verdict_flip_arithmetic():
    # L = $6/h locally, c = $3 per local busy hour: renting is cheaper; every cloud price x 2 flips it,
    # so a $1.50/h instance breaks even at $3.00/h
    x = verdict_flip(basis="on-demand", local_usd_per_busy_hour=6.0, cloud_usd_per_local_hour=3.0,
                     cheapest=[("w", "inst", 1.5)])
    assert x is not None
    assert (x.factor, x.verdict, x.instances) == (2.0, "cloud", (("w", "inst", 1.5, 3.0),))
    assert "up 100.0 %" in x.sentence()
    y = verdict_flip(basis="spot", local_usd_per_busy_hour=6.0, cloud_usd_per_local_hour=12.0, cheapest=[])
    assert y is not None and y.verdict == "local" and y.factor == 0.5
    assert verdict_flip(basis="spot", local_usd_per_busy_hour=6.0, cloud_usd_per_local_hour=None, cheapest=[]) is None


def test_compare_reports_the_flip_at_the_local_cost_per_busy_hour(catalog):
    from planner.api.comparisons import compare
    from planner.cost.comparison_report import comparison_to_dict

    comp = compare(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml", catalog=catalog).comparison
    flips = comparison_to_dict(comp)["rent_or_buy_flip"]
    assert flips, "the comparison has an on-demand verdict"
    od = flips[0]
    # the verdict turns where renting costs what owning does per busy hour: TCO / busy hours
    assert od["flip_usd_per_local_hour"] == pytest.approx(comp.tco_usd / comp.busy_hours)
    assert od["factor"] == pytest.approx(od["flip_usd_per_local_hour"] / comp.cloud_usd_per_local_hour)


def test_compare_marks_cloud_rows_over_a_year_old_where_they_are_ranked(tmp_path):
    # no shipped row is a year old (the Azure rows of 2024-01 were retired): an overlay dates the
    # cheapest row serve-70b ranks 2024-01, more than 12 months before any date this runs on
    from planner.api.comparisons import compare
    from planner.cost.cloud import stale_as_of
    from planner.cost.comparison_report import comparison_text

    assert stale_as_of("2024-01") and not stale_as_of("2026-08", __import__("datetime").date(2027, 8, 31))
    assert stale_as_of("2026-07", __import__("datetime").date(2027, 8, 1))  # 13 months
    (tmp_path / "cloud.yaml").write_text('schema_version: 1\ninstances:\n'
                                         '  - id: lambda-gpu-8x-a100-80gb-sxm4\n    usd_per_hour: 22.32\n'
                                         '    as_of: "2024-01"\n    source: "test fixture: the shipped row re-dated"\n')
    comp = compare(ROOT / "scenarios" / "serve-70b-32k-16users.yaml",
                   catalog=load_catalog(tmp_path)).comparison
    text = comparison_text(comp, verbose=False)
    ranked = [ln for ln in text.splitlines() if "as of 2024-01" in ln]
    assert ranked, "the re-dated row is listed"
    assert all("as of 2024-01, STALE: over 12 months old" in ln for ln in ranked)


def test_the_workbook_summary_lists_the_price_sensitivity(tmp_path, catalog):
    import openpyxl

    from planner.api import plan as api_plan
    from planner.report.sheets.summary import PRICE_SENSITIVITY_TITLE

    res = api_plan(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog=catalog, out=tmp_path)
    sens = res.plan.price_sensitivity
    ws = openpyxl.load_workbook(res.outputs["xlsx"])["Summary"]
    texts = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    assert PRICE_SENSITIVITY_TITLE in texts
    start = texts.index(PRICE_SENSITIVITY_TITLE)
    assert texts[start + 1:start + 1 + len(sens.lines())] == sens.lines()
    # and the JSON report carries the object issue #30 asks for
    import json

    doc = json.loads(res.outputs["json"].read_text())["price_sensitivity"]
    assert set(doc["items"][0]) >= {"catalog_id", "unit_price_usd", "low_usd", "high_usd", "flip_price_usd",
                                    "runner_up"}
    assert isinstance(doc["holds_across_ranges"], bool)


def _with_budget(sc, usd):
    return dataclasses.replace(sc, constraints=dataclasses.replace(sc.constraints, budget_usd=usd))


def test_a_flip_past_the_budget_says_the_choice_goes_over_it_first(catalog):
    # serve-7b-2k-16users with a budget half-way between the choice's capex and its capex at the GPU's
    # flip price: the choice reaches the budget at x_B = x0 + (B - capex(c)) / q(c) (module docstring),
    # before the flip, and re-solving a cent either side of x_B agrees with the item
    from planner.solve.solver import NoFeasiblePlan

    sc = load_scenario(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog)
    p = plan(sc, catalog, explain=False)
    gpu = next(i for i in p.price_sensitivity.items if i.category == "gpu" and i.direction == "above")
    assert gpu.flip_price_usd is not None and gpu.over_budget_above_usd is None  # no budget: no clause
    q_c = int(p.choice["cards_total"])
    capex = float(p.choice["capex_usd"])
    budget = round(capex + q_c * (gpu.flip_price_usd - gpu.unit_price_usd) / 2, 2)
    tight = _with_budget(sc, budget)
    pb = plan(tight, catalog, explain=False)
    assert machine_text(pb.choice) == machine_text(p.choice)
    item = next(i for i in pb.price_sensitivity.items if i.catalog_id == gpu.catalog_id and i.direction == "above")
    x_b = gpu.unit_price_usd + (budget - capex) / q_c
    assert item.over_budget_above_usd == pytest.approx(x_b, abs=0.01)
    # the budget leaves out the rivals dearer than it, so the flip, if any remains, lies beyond x_B
    assert item.flip_price_usd is None or item.over_budget_above_usd < item.flip_price_usd
    sentence = item.sentence()
    assert f"above ${item.over_budget_above_usd:,.2f} the choice is over the budget" in sentence
    kept = plan(tight, _repriced(catalog, "gpu", gpu.catalog_id, item.over_budget_above_usd - 0.01), explain=False)
    assert machine_text(kept.choice) == machine_text(p.choice)
    try:
        moved = plan(tight, _repriced(catalog, "gpu", gpu.catalog_id, item.over_budget_above_usd + 0.02), explain=False)
    except NoFeasiblePlan:
        assert item.over_budget_pick == "" and "no feasible machine is within it" in sentence
    else:
        assert machine_text(moved.choice) == item.over_budget_pick
        assert f"then {item.over_budget_pick}" in sentence
    # JSON carries the fields and the budget
    doc = pb.price_sensitivity.to_dict()
    assert doc["budget_usd"] == budget and "over_budget_above_usd" in doc["items"][0]


def test_the_choice_at_its_highs_is_checked_against_the_budget(catalog):
    sc = load_scenario(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog)
    p = plan(sc, catalog, explain=False)
    capex = float(p.choice["capex_usd"])
    s = plan(_with_budget(sc, capex), catalog, explain=False).price_sensitivity
    ranged = [i for i in s.items if i.direction == "above" and i.high_usd is not None and i.high_usd > i.unit_price_usd]
    if not ranged:
        pytest.skip("no part of the choice has a high above its price")
    # capex(c) + sum over the choice's parts of q x (high - price): over a budget of exactly capex(c)
    expected = capex + sum(i.quantity * (i.high_usd - i.unit_price_usd) for i in s.items
                           if i.direction == "above" and i.high_usd is not None)
    assert s.over_budget_at_highs_usd == pytest.approx(expected, abs=0.01)
    assert f"over the ${capex:,.2f} budget" in " ".join(s.lines())
    assert plan(sc, catalog, explain=False).price_sensitivity.over_budget_at_highs_usd is None


def test_a_scenario_nothing_fits_says_whether_a_price_would_change_that(catalog):
    from planner.solve.solver import NoFeasiblePlan

    # ft-13b-2x24gb-zero2 sets no budget: only memory rules bind, no price changes the answer
    with pytest.raises(NoFeasiblePlan) as e:
        plan(load_scenario(ROOT / "scenarios" / "ft-13b-2x24gb-zero2.yaml", catalog), catalog, explain=False)
    text = str(e.value)
    assert "Price sensitivity:\n  No price changes this answer: the scenario sets no budget" in text
    # serve-7b-2k-16users with a budget $100 below its choice: the choice is the cheapest machine that
    # misses on the budget alone, and the message says by how much its prices would have to fall
    sc = load_scenario(ROOT / "scenarios" / "serve-7b-2k-16users.yaml", catalog)
    p = plan(sc, catalog, explain=False)
    capex = float(p.choice["capex_usd"])
    with pytest.raises(NoFeasiblePlan) as e2:
        plan(_with_budget(sc, capex - 100.0), catalog, explain=False)
    line = f"{machine_text(p.choice)} misses only on the budget: it costs ${capex:,.2f}, $100.00 over the "
    assert line in str(e2.value)
