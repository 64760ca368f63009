"""``used_ok: true`` as a suggestion, checked by the solver (issue 29, item 4).

When every card a scenario allows is out of production and sold used only (gpus.yaml
``discontinued`` with a dated used price) and the scenario does not set ``used_ok``, no machine
can be priced, so the memory and time checks never run on those cards. :func:`used_only_suggestions`
plans the same scenario again with ``used_ok: true`` (the capex solver, planner.solve.solver.plan,
which calls it with a re-planning function; feasibility does not depend on the objective) and says what that re-plan finds:

- it is feasible: one line naming the used card and price and the machine the solver then buys,
  with each workload's memory verdict on it;
- it is not: one line saying the card is sold used only and ``used_ok: true`` buys it, but the
  re-plan still misses (its closest miss), followed by the re-plan's own "What would fit", each
  prefixed ``used_ok: true and``: what else the scenario still needs. A used card is never offered
  as a fix on the memory model alone.

Never prints and never reads files.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from planner.core.units import GiB

#: The re-plan's rules named first as "what still misses", in order: the workload's own targets and
#: memory before the build rules (form factor, slots...) that merely rule out other platforms.
PREFERRED_MISSES = ("deadline", "slo", "vram", "ram", "speed", "budget", "cards", "tp", "precision")

#: Suggestions of the re-plan that replace the card altogether (used_ok does not come into them).
OTHER_CARDS = ("a larger card", "another card")
#: How a suggestion the memory model could not check begins (planner.solve.suggest.UNCHECKED).
_UNCHECKED = "not checked with the memory model: "


def used_only_cards(cs: Any) -> list[tuple[Any, Any]]:
    """(gpu, used price) for each card the price rule refused that is out of production and has a
    dated used price (planner.catalog.prices.used_price), in the table's order."""
    from planner.catalog.prices import used_price

    t = cs.table
    out = []
    for gid in dict.fromkeys(t["gpu_id"][t["binding"] == "price"].tolist()):
        gpu = cs.hardware.gpu_by_id[gid]
        used = used_price(gpu.prices) if gpu.discontinued else None
        if used is not None:
            out.append((gpu, used))
    return out


def used_only_suggestions(cs: Any, catalog: Any, replan: Callable[[Any], Any]) -> list[str]:
    """What ``used_ok: true`` changes, as the solver finds it (module docstring); [] when the scenario
    sets ``used_ok``, some allowed card can be bought, or no card is sold used only.

    Args:
        cs: the candidate set of a plan in which nothing is feasible (planner.solve.candidates).
        catalog: the catalog it was planned with.
        replan: plans a scenario with the same catalog and overheads (planner.solve.solver passes it):
            returns the Plan, or the NoFeasiblePlan it raised (``summary``, ``suggestions``).

    Returns:
        Suggestion lines, the first naming the used cards and what the re-plan found.
    """
    from planner.solve.candidates import capacity_for
    from planner.solve.suggest import _hw_ok_gpus

    sc = cs.scenario
    if sc.constraints.used_ok or "price" not in set(cs.table["binding"].tolist()) or _hw_ok_gpus(cs):
        return []
    cards = used_only_cards(cs)
    if not cards:
        return []
    names = (f"{cards[0][1].label()}, ${cards[0][1].usd:,.2f}" if len(cards) == 1 else
             ", ".join(f"{g.id}: {u.label()}, ${u.usd:,.2f}" for g, u in cards))
    head = (f"{' and '.join(g.id for g, _ in cards)} {'is' if len(cards) == 1 else 'are'} sold used only (out of "
            f"production; {names})")
    again = replace(sc, constraints=replace(sc.constraints, used_ok=True), objective="capex")
    p = replan(again)
    if not hasattr(p, "choice"):
        return _still_missing(head, p)
    ch = p.choice
    gpu = catalog.gpu(str(ch["gpu_id"]))
    shape = f"{int(ch['cards_total'])} x {gpu.id} on {ch['platform_id']}"
    if int(ch["nodes"]) > 1:
        shape += f" ({int(ch['nodes'])} nodes of {int(ch['cards_per_node'])})"
    h = sc.constraints.vram_headroom
    verdicts = []
    for sw, wl, est, label in zip(sc.workloads, p.workloads, p.estimates, p.strategies):
        cap = capacity_for(wl, gpu.cuda_total_bytes, h)
        verdicts.append(f"{sw.name} fits {wl.gpus} x {gpu.id} at {est.per_gpu_total_bytes / GiB:,.2f} GiB per GPU "
                        f"of {cap / GiB:,.2f} GiB ({label})")
    return [f"set used_ok: true: {head}; re-planned with it, the solver buys {shape} for ${p.total_usd:,.2f}, and "
            + "; ".join(verdicts)]


def _still_missing(head: str, e: Any) -> list[str]:
    """The line for a re-plan with ``used_ok: true`` that still finds nothing, then the re-plan's own
    suggestions as what the scenario also needs."""
    records = list(e.summary.records()) if len(e.summary) else []
    pick = None
    for rule in PREFERRED_MISSES:
        pick = next((r for r in records if r["binding"] == rule), None)
        if pick is not None:
            break
    if pick is None and records:
        pick = records[0]
    miss = f" (closest miss, {pick['binding']}: {pick['closest']}: {pick['why_not']})" if pick else ""
    more = [s for s in e.suggestions]
    tail = ("; with it the scenario also needs one of the changes listed next" if more else
            "; nothing simple would fit with it either: loosen the constraints that miss")
    out = [f"{head}: used_ok: true buys it, but re-planned with it no machine fits either{miss}{tail}"]
    for s in more:
        if s.startswith(OTHER_CARDS):
            out.append(s)  # another card needs no used one
        elif s.startswith(_UNCHECKED):
            out.append(f"{_UNCHECKED}used_ok: true and {s[len(_UNCHECKED):]}")
        else:
            out.append(f"used_ok: true and {s}")
    return out


__all__ = ["OTHER_CARDS", "PREFERRED_MISSES", "used_only_cards", "used_only_suggestions"]
