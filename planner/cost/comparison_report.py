"""A rent-or-buy comparison as a JSON document and as text (``planner compare``): the output side of
planner.cost.compare, which builds the :class:`planner.cost.compare.Comparison`.

Importing this module does no work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from planner.core.units import years_text
from planner.cost.cloud import STALE_CLOUD_MONTHS, stale_as_of
from planner.cost.compare import CloudOption, Comparison
from planner.cost.flip import comparison_flips
from planner.cost.tco import HOURS_PER_MONTH, BreakEven
from planner.speed.timing import SECONDS_PER_HOUR, JobTime

def _be_dict(be: BreakEven | None) -> dict[str, Any] | None:
    if be is None:
        return None
    return {"value": be.value, "unit": be.unit, "horizon": be.horizon, "cheaper_before": be.cheaper_before,
            "beyond": be.beyond, "at_sale": be.at_sale, "text": be.text}


def _time_dict(t: JobTime | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"job": t.job, "job_tokens": t.job_tokens, "seconds_per_job": t.seconds_per_job,
            "hours_per_job": t.hours_per_job, "tokens_per_s": t.tokens_per_s, "mfu": t.mfu,
            "mfu_reason": t.mfu_reason, "requests_per_hour_capacity": t.requests_per_hour_capacity,
            "lines": list(t.lines)}


def comparison_to_dict(comp: Comparison) -> dict[str, Any]:
    """A JSON-ready dict: money in USD, time in hours / months / seconds as the keys say."""
    c = comp.costs
    m = comp.machine
    return {
        "costs": {
            "usd_per_kwh": c.usd_per_kwh, "pue": c.pue, "utilization": comp.utilization,
            "hours_per_month": comp.hours_per_month, "hours_source": comp.hours_source,
            "gpu_power_fraction": c.gpu_power_fraction, "depreciation_years": c.depreciation_years,
            "residual_fraction": c.residual_fraction, "support_usd_per_year": c.support_usd_per_year,
            "cloud_discount": c.cloud_discount, "providers": list(c.providers), "instances": list(c.instances),
            "regions": list(c.regions),
            "spot": c.spot, "batch_inference": list(c.batch_inference),
            "busy_hours_in_period": comp.busy_hours,
            "resale": "capex x residual_fraction, credited at the end of the ownership period (the sale)",
            "sources": {k: c.source_of(k) for k in ("usd_per_kwh", "pue", "gpu_power_fraction", "depreciation_years",
                                                    "residual_fraction", "support_usd_per_year", "cloud_discount",
                                                    "batch_inference")},
        },
        "local": {
            "description": m.description, "gpu": m.gpu.id, "gpus_per_node": m.gpus_per_node, "nodes": m.nodes,
            "gpu_tdp_w": m.gpu.tdp_w, "platform_w": m.platform_w, "copies": comp.copies,
            "copies_busy_on_average": comp.copies_busy, "capex_usd_per_copy": m.capex_usd,
            "capex_usd": comp.capex_usd,
            "capex_items": [{"description": i.description, "category": i.category, "catalog_id": i.catalog_id,
                             "quantity": i.quantity, "unit_price_usd": i.unit_price_usd, "price_kind": i.price_kind,
                             "as_of": i.as_of, "source": i.source, "mpn": getattr(i, "mpn", None)}
                            for i in m.capex_items],
            "usd_per_copy_hour": comp.local_usd_per_copy_hour,
            "net_capex_usd": comp.net_capex_usd, "energy_usd_per_hour": comp.energy_usd_per_hour,
            "usd_per_busy_hour": comp.local_usd_per_hour, "tco_usd": comp.tco_usd,
        },
        "cloud": {
            "usd_per_local_hour": comp.cloud_usd_per_local_hour, "spot_usd_per_local_hour": comp.spot_usd_per_local_hour,
            "cost_over_period_usd": comp.cloud_cost_usd, "spot_cost_over_period_usd": comp.spot_cost_usd,
        },
        "break_even": {
            "on_demand": {"hours": _be_dict(comp.break_even_hours), "months": _be_dict(comp.break_even_months)},
            "spot": {"hours": _be_dict(comp.spot_break_even_hours), "months": _be_dict(comp.spot_break_even_months)},
        },
        "workloads": [
            {
                "name": wc.name, "task": wc.task, "share": wc.share, "service": wc.service,
                "pricing": wc.pricing, "pricing_assumed": wc.pricing_assumed,
                "local": _time_dict(wc.local), "local_cost_per_job_usd": wc.local_cost_per_job_usd,
                "local_usd_per_million_tokens": wc.local_usd_per_million_tokens,
                "requests_per_hour": wc.requests_per_hour, "local_copies": wc.copies,
                "best_on_demand": wc.best_on_demand, "best_spot": wc.best_spot, "notes": list(wc.notes),
                "strategy": wc.strategy, "deadline_hours": wc.deadline_hours,
                # a service to an slo:: the output tokens/s its load receives locally, the rate both sides'
                # usd_per_million_tokens are at (planner.cost.slo_rent); None without an slo:
                "slo_served_tokens_per_s": wc.slo_served_tokens_per_s, "slo_priced_at": wc.slo_basis or None,
                "cloud": [
                    {"instance_id": o.instance_id, "provider": o.provider, "instance": o.instance, "gpu": o.gpu_id,
                     "gpu_count": o.gpu_count, "region": o.region, "as_of": o.as_of, "source": o.source,
                     "usd_per_hour": o.usd_per_hour, "spot_usd_per_hour": o.spot_usd_per_hour,
                     "spot_range_usd_per_hour": (None if o.spot_range_usd_per_hour is None
                                                 else list(o.spot_range_usd_per_hour)),
                     "spot_basis": o.spot_basis, "feasible": o.feasible, "why_not": o.why_not,
                     "hours_over_deadline": o.hours_over_deadline,
                     "strategy": o.strategy, "differs_from_local": o.differs_from_local,
                     "time": _time_dict(o.time), "copies": o.copies,
                     "hours_per_local_hour": o.hours_per_local_hour, "usd_per_local_hour": o.usd_per_local_hour,
                     "spot_usd_per_local_hour": o.spot_usd_per_local_hour, "cost_per_job_usd": o.cost_per_job_usd,
                     "spot_cost_per_job_usd": o.spot_cost_per_job_usd,
                     "usd_per_million_tokens": o.usd_per_million_tokens,
                     "spot_usd_per_million_tokens": o.spot_usd_per_million_tokens,
                     # the instances an slo: rents (== copies) and what they achieve at its load
                     "slo": None if o.slo is None else o.slo.to_dict()}
                    for o in wc.cloud
                ],
            }
            for wc in comp.workloads
        ],
        "rent_or_buy_flip": [x.to_dict() for x in comparison_flips(comp)],
        "lines": list(comp.lines),
        "notes": list(comp.notes),
        "warnings": list(comp.warnings),
    }


def _usd(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    if 0 < abs(x) < 0.01:
        return f"${x:.3g}"
    return f"${x:,.2f}"


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.3g} s"
    return f"{seconds / SECONDS_PER_HOUR:,.2f} h"


def _dates(items: Sequence[Any]) -> str:
    """'2025-01-30 to 2026-11': the span of the quote lines' price dates (one date when all agree)."""
    ds = sorted({str(i.as_of) for i in items})
    return ds[0] if len(ds) == 1 else f"{ds[0]} to {ds[-1]}"


def comparison_text(comp: Comparison, top: int = 5, verbose: bool = True) -> str:
    """The comparison for the terminal: per workload the local line and the cheapest instances,
    then the cost model's arithmetic and the break-even. Each cloud price carries its region and
    date and a footnote number for its source (listed at the end); spot prices say which of the
    zones' prices the catalog keeps.

    ``verbose`` False (``planner compare`` without --verbose) leaves out the long formulas (the
    local time's arithmetic, the cost model's) and the source footnotes, saying where they are;
    the lines are as long as their text (the CLI wraps them to the terminal).
    """
    out: list[str] = []
    m = comp.machine
    refs: dict[str, int] = {}

    def price(o: CloudOption) -> str:
        # a row ranked here whose price is over a year old says so where it is ranked
        old = f", STALE: over {STALE_CLOUD_MONTHS} months old" if stale_as_of(o.as_of) else ""
        if not verbose:
            return f"${o.usd_per_hour:g}/h ({o.region}, as of {o.as_of}{old})"
        n = refs.setdefault(o.source, len(refs) + 1)
        return f"${o.usd_per_hour:g}/h ({o.region}, as of {o.as_of}{old}) [{n}]"

    basis = (f"the plan's quote, prices dated {_dates(m.capex_items)}; line items under 'Cost model'"
             + ("" if verbose else " (--verbose)")
             if m.capex_items else "as given, no quote line items")
    if comp.copies > 1:
        out.append(f"Local: {comp.copies} copies of [{m.description}] to keep up with requests_per_hour (capex "
                   f"{comp.copies} x {_usd(m.capex_usd)} = {_usd(comp.capex_usd)}; {basis})")
    else:
        out.append(f"Local: {m.description} (capex {_usd(m.capex_usd)}; {basis})")
    for wc in comp.workloads:
        out.append("")
        priced = "service, k = 1" if wc.service else "batch work, k = local / cloud tokens/s"
        if wc.service and wc.requests_per_hour is not None and wc.local.requests_per_hour_capacity is not None:
            priced = (f"service at {wc.requests_per_hour:,.0f} requests/h, k = the instance copies that keep up; "
                      f"local: {wc.copies} cop{'y' if wc.copies == 1 else 'ies'}")
        if wc.slo_served_tokens_per_s is not None and wc.service:
            priced = "service to its slo:, k = the instances that meet it at its load"
        if wc.pricing_assumed:
            priced += ", assumed (see the notes)"
        out.append(f"Workload {wc.name} ({wc.task}; priced as {priced}): {wc.local.job}")
        if wc.strategy:
            out.append(f"  local: runs {wc.strategy}")
        for line in (wc.local.lines if verbose else ()):
            out.append(f"  local: {line}")
        # Without a job size (no dataset_tokens / tokens_per_request) there is no time or cost per job.
        has_job = wc.local.seconds_per_job is not None
        at_load = " at the slo: load" if wc.slo_served_tokens_per_s is not None else ""
        served = " served" if at_load and wc.service else ""
        per_job = (f"{_hours(wc.local.seconds_per_job)} per job{at_load if served else ''}, " if has_job else
                   f"per job: n/a (no {'dataset_tokens' if wc.task == 'train' else 'tokens_per_request'}), ")
        cost_per_job = f"{_usd(wc.local_cost_per_job_usd)} per job, " if has_job else ""
        per_copy = " per copy" if comp.copies > 1 else ""
        if getattr(wc.local, "assumed", False):
            per_copy += " (assumed: the speed rests on a rate with no published measurement for this card)"
        out.append(f"  local: {per_job}{wc.local.tokens_per_s:,.1f} tokens/s{served}{per_copy}, {cost_per_job}"
                   f"{_usd(wc.local_usd_per_million_tokens)} per M tokens{at_load} (at {comp.utilization:.0%} "
                   "utilization)")
        if wc.slo_served_tokens_per_s is not None:
            out.append(f"  slo: per M tokens priced at the load, local and cloud alike: {wc.slo_basis} locally; "
                       "each instance type is rented in the fewest identical instances whose replicas meet the "
                       "targets at that load (tensor parallelism within an instance)")
        if wc.deadline_hours is not None:
            out.append(f"  deadline: one run within {wc.deadline_hours:g} h (the scenario's), which the local machine "
                       "meets; only instances that meet it are rented, the rest say how many hours over")
        rated = wc.service and wc.requests_per_hour is not None
        feas = [o for o in wc.cloud if o.feasible]
        if feas:
            out.append(f"  cloud (cheapest {min(top, len(feas))} of {len(feas)} that fit; {len(wc.cloud) - len(feas)} "
                       "do not):")
            shown = feas[:top]
            sp = wc.option(wc.best_spot)
            if sp is not None and sp not in shown:
                shown = shown + [sp]
            for o in shown:
                parts = [f"{o.gpu_count} x {o.gpu_id}", price(o)]
                cap = o.time.requests_per_hour_capacity if o.time is not None else None
                if rated and cap is not None:
                    parts.append(f"serves {cap:,.0f} requests/h" + (
                        f", {o.copies} copies for {wc.requests_per_hour:,.0f}: ${o.copies * o.usd_per_hour:,.4g}/h"
                        if o.copies > 1 else ""))
                if has_job:
                    assumed = " (assumed speed)" if o.time is not None and o.time.assumed else ""
                    per = ("" if o.slo is None or not wc.service else " at the slo: load" + (
                        f" (instance-seconds over the {o.slo.instances} instances)" if o.slo.instances > 1 else ""))
                    parts += [f"{_hours(o.time.seconds_per_job if o.time else None)} per job{per}{assumed}",
                              f"{_usd(o.cost_per_job_usd)} per job"]
                if o.slo is not None:
                    parts.append(f"{o.slo.instances} instance{'s' if o.slo.instances != 1 else ''} for the slo: "
                                 f"${o.copies * o.usd_per_hour:,.4g}/h ({o.slo.text(count=False)}; "
                                 f"{o.slo.served_tokens_per_s:,.1f} tokens/s served)")
                parts.append(f"{_usd(o.usd_per_million_tokens)}/M tokens" + (" at the slo: load" if o.slo else ""))
                if o.strategy:
                    parts.append(f"runs {o.strategy}" + (f" (NOT like-for-like: {o.differs_from_local})"
                                                         if o.differs_from_local else ""))
                if o.time is not None and "mfu_scale" in (o.time.mfu_reason or ""):
                    parts.append(f"MFU {o.time.mfu:.3g} (x catalog mfu_scale for its software stack)")
                spot = ""
                if o.spot_usd_per_local_hour is not None:
                    spot = (f"; spot ${o.spot_usd_per_hour:g}/h ({o.spot_basis}): "
                            + ", ".join(([f"{_usd(o.spot_cost_per_job_usd)} per job"]
                                         if o.spot_cost_per_job_usd is not None else [])
                                        + [f"{_usd(o.spot_usd_per_million_tokens)}/M tokens"]))
                tag = " (cheapest spot)" if o is sp and o not in feas[:top] else ""
                out.append(f"    {o.instance_id}{tag}: {', '.join(parts)}{spot}")
        misses = [o for o in wc.cloud if not o.feasible]
        for o in misses[:2 * top]:
            out.append(f"    does not fit: {o.instance_id} ({o.gpu_count} x {o.gpu_id}, {price(o)}): {o.why_not}")
        if len(misses) > 2 * top:
            out.append(f"    ... and {len(misses) - 2 * top} more that do not fit (--json lists them all)")
        for n in wc.notes:
            out.append(f"  note: {n}")
    out.append("")
    if verbose:
        out.append("Cost model:")
        out.extend(f"  {line}" for line in comp.lines)
    else:
        out.append("The time and cost model's arithmetic and each price's source: --verbose (or --json, --out).")
    out.append("")
    if comp.break_even_months is not None:
        out.append(f"Break-even (on-demand): {_be_sentence(comp.break_even_hours, comp.break_even_months, comp)}")
    if comp.spot_break_even_months is not None:
        out.append(f"Break-even (spot): {_be_sentence(comp.spot_break_even_hours, comp.spot_break_even_months, comp)}")
    for x in comparison_flips(comp):
        out.append(f"Rent-or-buy flip, {x.sentence()}")
    for n in comp.notes:
        out.append(f"Note: {n}")
    for w in comp.warnings:
        out.append(f"Warning: {w}")
    if refs:
        out.append("")
        out.append("Cloud price sources (catalog cloud.yaml; list USD per instance-hour, the region and date beside "
                   "each price):")
        out.extend(f"  [{n}] {src}" for src, n in refs.items())
    return "\n".join(out)


def _be_sentence(h: BreakEven | None, mo: BreakEven | None, comp: Comparison) -> str:
    """Months and busy hours in one sentence; they agree (planner.cost.tco), so both are said together."""
    assert h is not None and mo is not None
    D = comp.costs.depreciation_years
    busy = f"{comp.busy_hours:,.0f} busy hours in {years_text(D)} at {comp.hours_per_month:,.1f} h/month"
    need = h.value if h.value is not None else h.beyond
    needs = (f"over the whole period, resale included, owning pays off beyond {need:,.0f} busy hours"
             if need is not None else "")
    if mo.value is not None and mo.at_sale:
        return (f"local pays off only when the machine is sold for its residual value at the end of the "
                f"{mo.value:,.0f} months ({needs}; the scenario gives {busy})")
    if mo.value is not None and mo.cheaper_before == "cloud":
        return (f"local pays off after {mo.value:,.1f} months at {comp.hours_per_month:,.0f} busy h/month, the full "
                f"price paid at month 0 and the resale credited at the end" + (f"; {needs}" if needs else ""))
    if mo.cheaper_before == "cloud":
        if need is None:
            return (f"cloud is cheaper throughout the {mo.horizon:g} months at any utilization (it costs less per busy "
                    "hour than the local energy)")
        if need > HOURS_PER_MONTH * 12 * D:
            return (f"cloud is cheaper throughout the {mo.horizon:g} months: owning would need {need:,.0f} busy hours, "
                    f"more than the {HOURS_PER_MONTH * 12 * D:,.0f} hours in {years_text(D)}")
        return (f"cloud is cheaper throughout the {mo.horizon:g} months at this utilization (owning would need "
                f"{need:,.0f} busy hours in {years_text(D)}, {need / (12 * D):,.0f} h/month; the scenario gives {busy})")
    return mo.text
