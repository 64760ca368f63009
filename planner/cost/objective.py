"""The scenario objectives beyond capex: time per job, cost per job and total cost of ownership.

The solver (planner.solve.solver) ranks the feasible machines by purchase price. This module
times every feasible machine with the time model (:mod:`planner.speed.timing`) and prices its
use with the ownership model (:mod:`planner.cost.tco`), fills the candidate table's
``hours_per_job``, ``usd_per_job`` and ``tco_usd`` columns and, for an objective other than
``capex``, re-ranks the feasible rows by it (ties: the solver's order, so capex next). One *job*
is one run of every workload of the scenario, one after the other (training: ``dataset_tokens`` x
``epochs`` tokens; inference: one request of ``tokens_per_request`` generated tokens, amortised
over the batch and replicas the machine runs; a served workload with an ``slo:``: one request at
its load, 1 / the requests per second the load brings, planner.cost.slo_rent.at_load, as
``planner compare`` prices it)::

    hours_per_job(r) = sum over workloads w of time_workload(w on r).seconds_per_job / 3600
    usd_per_busy_hour(r) = (capex(r) x (1 - residual) + support x D) / (h x 12 x D) + energy(r)
    usd_per_job(r)   = hours_per_job(r) x usd_per_busy_hour(r)
    tco_usd(r)       = capex(r) x (1 - residual) + support x D + energy(r) x h x 12 x D
    energy(r)        = (cards x TDP x gpu_power_fraction + nodes x platform_w) / 1000 x $/kWh x PUE

with h the busy hours per month (``costs.hours_per_month``, or ``costs.utilization`` x 730, or
the workloads' ``hours_per_month``, or the default utilization 0.25 x 730) and D the ownership
(depreciation) period, all from the scenario's ``costs:`` (planner.cost.tco defaults otherwise).
A dearer machine can win on cost per job: when it runs the job k times faster and costs less than
k times as much per busy hour.

:func:`plan` is what ``planner plan`` and ``planner compare`` call: the solver's plan for every
objective, with the columns filled (blank where a workload gives no size).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from planner.catalog.prices import priced_catalog
from planner.core.units import years_text
from planner.cost.slo_rent import at_load, load_basis_text, local_slo_figures
from planner.cost.tco import (
    HOURS_PER_MONTH,
    CostInputs,
    energy_usd_per_hour,
    local_tco_usd,
    local_usd_per_busy_hour,
    read_costs,
)
from planner.speed.timing import DEFAULT_MBU, time_workload
from planner.solve.candidates import CandidateSet, build
from planner.solve.solver import OBJECTIVE_COLUMNS, Plan, choose

#: What each objective minimises, in words (the plan's assumptions and reports).
OBJECTIVE_TEXT = {
    "capex": "capex_usd: purchase price of GPUs, platforms, DIMMs, network and extras (USD)",
    "cost_per_job": ("usd_per_job: one run of every workload = hours_per_job (time model) x the machine's cost per "
                     "busy hour over the ownership period (capex less resale, plus support, over the busy hours; plus "
                     "energy) (USD)"),
    "time_to_result": "hours_per_job: one run of every workload by the time model (hours)",
    "tco": ("tco_usd: owning the machine over the ownership period: capex less resale + support + energy for the "
            "busy hours (USD)"),
}


def _usd(x: float) -> str:
    """Dollars with cents, or with 4 significant digits below a cent (a request's cost)."""
    return f"${x:,.2f}" if abs(x) >= 0.01 else f"${x:.4g}"


def _hours(h: float) -> str:
    """Hours to 3 decimals, or seconds below 0.01 h (an inference request)."""
    return f"{h:,.3f} h" if h >= 0.01 else f"{h:.4g} h ({h * 3600:,.4g} s)"


def busy_hours_per_month(costs: CostInputs, workloads: Sequence[Any]) -> tuple[float, str]:
    """Busy hours per month h and where the figure comes from (as planner.cost.compare reads it)."""
    if costs.hours_per_month is not None:
        return float(costs.hours_per_month), "costs.hours_per_month"
    if costs.utilization is not None:
        return costs.utilization * HOURS_PER_MONTH, f"costs.utilization {costs.utilization:g} x {HOURS_PER_MONTH:g} h"
    given = [getattr(w, "hours_per_month", None) for w in workloads]
    if given and all(g is not None for g in given) and sum(given) > 0:
        return float(sum(given)), "sum of the workloads' hours_per_month"
    u = CostInputs.DEFAULT_UTILIZATION
    return u * HOURS_PER_MONTH, f"default utilization {u:g} x {HOURS_PER_MONTH:g} h (assumption)"


def plan(scenario: Any, catalog: Any, top_k: int = 5, *, costs: CostInputs | None = None, overheads: Any = None,
         explain: bool = True) -> Plan:
    """The plan for ``scenario`` by its objective, with time and cost per job beside the price.

    Args:
        costs: the scenario's cost inputs (default: :func:`planner.cost.tco.read_costs` of its ``costs:``).
        Others as :func:`planner.solve.solver.plan`.

    Raises:
        planner.solve.solver.NoFeasiblePlan: nothing fits.
    """
    if top_k < 0:
        raise ValueError("top_k must be >= 0")
    if costs is None:
        costs = read_costs(scenario.costs, catalog, scenario.workloads)
    catalog = priced_catalog(catalog, scenario.constraints.price, scenario.constraints.used_ok)
    cs = build(scenario, catalog, overheads=overheads, explain=explain)
    cs = ranked(cs, catalog, costs, scenario.objective)
    result = choose(cs, catalog, top_k=top_k, overheads=overheads)
    return dataclasses.replace(result, assumptions={**result.assumptions,
                                                    **objective_assumptions(cs, result, costs, catalog)})


def ranked(cs: CandidateSet, catalog: Any, costs: CostInputs, objective: str) -> CandidateSet:
    """``cs`` with the objective columns filled for every feasible row and, unless the objective
    is capex, the feasible rows re-ranked by it (stable: ties keep the solver's order)."""
    import numpy as np

    t = cs.table.copy()
    feasible = np.nonzero(t["feasible"])[0]
    hours, usd, tco = metrics(cs, catalog, costs, feasible)
    for col, values in (("hours_per_job", hours), ("usd_per_job", usd), ("tco_usd", tco)):
        t[col][feasible] = values
    if objective == "capex" or len(feasible) == 0:
        return dataclasses.replace(cs, table=t, objective="capex")
    col = OBJECTIVE_COLUMNS[objective][0]
    value = t[col]
    if np.isnan(value[feasible]).any():  # pragma: no cover - the scenario reader requires the job sizes
        raise ValueError(f"objective {objective}: a feasible machine has no {col}")
    rest = np.setdiff1d(np.arange(len(t)), feasible, assume_unique=True)
    order = np.concatenate([feasible[np.argsort(value[feasible], kind="stable")], rest])
    t = t.take(order)
    t["rank"] = np.arange(1, len(t) + 1)
    return CandidateSet(t, cs.usages, cs.best_usage[order], cs.scenario, cs.hardware, objective=objective,
                        timing=cs.timing)


def metrics(cs: CandidateSet, catalog: Any, costs: CostInputs, rows: Sequence[int]) -> tuple[Any, Any, Any]:
    """(hours_per_job, usd_per_job, tco_usd) of table rows ``rows`` (NaN where a workload has no size)."""
    import numpy as np

    t = cs.table
    gpus = {g.id: g for g in cs.hardware.gpus}
    plats = {p.id: p for p in cs.hardware.platforms}
    h, _ = busy_hours_per_month(costs, [sw.variants[0].workload for sw in cs.scenario.workloads])
    years = costs.depreciation_years
    gid = t["gpu_id"]
    pid = t["platform_id"]
    cards = t["cards_total"]
    nodes = t["nodes"]
    capex = t["capex_usd"]
    cache: dict[tuple, float] = {}
    n = len(rows)
    hours, usd, tco = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    for k, row in enumerate(rows):
        gpu, plat = gpus[gid[row]], plats[pid[row]]
        per_lane = min(catalog.pcie_gen(gpu.pcie_gen).per_lane_bytes_per_s,
                       catalog.pcie_gen(plat.pcie_gen).per_lane_bytes_per_s)
        usage_ids = tuple(int(u) for u in cs.best_usage[row])
        hbw = slo_host_bandwidth(cs, row, usage_ids)
        key = (gpu.id, per_lane, usage_ids, hbw)
        if key not in cache:
            cache[key] = job_hours(cs, gpu, per_lane, usage_ids, costs, hbw)
        energy = energy_usd_per_hour(gpu_count=int(cards[row]), gpu_tdp_w=gpu.tdp_w,
                                     platform_w=float(plat.platform_w) * int(nodes[row]), usd_per_kwh=costs.usd_per_kwh,
                                     pue=costs.pue, gpu_power_fraction=costs.gpu_power_fraction)
        per_hour = local_usd_per_busy_hour(hours_per_month=h, capex_usd=float(capex[row]),
                                           residual_fraction=costs.residual_fraction, years=years,
                                           support_usd_per_year=costs.support_usd_per_year, energy_usd_per_hour=energy)
        hours[k] = cache[key]
        usd[k] = cache[key] * per_hour
        tco[k] = local_tco_usd(hours=h * 12.0 * years, capex_usd=float(capex[row]),
                               residual_fraction=costs.residual_fraction, years=years,
                               support_usd_per_year=costs.support_usd_per_year, energy_usd_per_hour=energy)
    return hours, usd, tco


def slo_host_bandwidth(cs: CandidateSet, row: int, usage_ids: Sequence[int]) -> float | None:
    """The RAM bandwidth of table row ``row``'s platform (bytes/s, ``host_bw`` of the hardware
    arrays) when a workload with an ``slo:`` keeps llama.cpp blocks in host RAM there (its SLO
    figures then read it, as the solver's check does: planner.solve.solver.targets_of), else None."""
    for w, (sw, u) in enumerate(zip(cs.scenario.workloads, usage_ids)):
        if u < 0 or sw.task != "infer" or getattr(sw, "slo", None) is None:
            continue
        d = cs.usages[w][u].decode
        if d is not None and d.host_blocks > 0:
            from planner.solve.candidates import _hw_row

            return float(cs.hardware.arrays["host_bw"][_hw_row(cs, cs.table.row(row))])
    return None


def job_hours(cs: CandidateSet, gpu: Any, per_lane: float, usage_ids: Sequence[int], costs: CostInputs,
              host_bw: float | None = None) -> float:
    """Hours of one run of every workload with the given usages on ``gpu`` (NaN when one has no size)."""
    times = job_times(cs, gpu, per_lane, usage_ids, costs, host_bw)
    if any(jt is None or jt.hours_per_job is None for _, jt in times):
        return math.nan
    return sum(jt.hours_per_job for _, jt in times)  # type: ignore[misc]


def job_times(cs: CandidateSet, gpu: Any, per_lane: float, usage_ids: Sequence[int],
              costs: CostInputs, host_bw: float | None = None) -> list[tuple[Any, Any]]:
    """(workload, :class:`planner.speed.timing.JobTime` or None when it has no usage) per workload.

    A served workload with an ``slo:`` is timed at its load (planner.cost.slo_rent.at_load, as
    ``planner compare`` prices it): one request takes 1 / the requests per second the load brings
    machine-seconds (requests_per_s, or users / the achieved request time by Little's law), the
    achieved request time from planner.cost.slo_rent.local_slo_figures on ``gpu`` with the row's
    host link ``per_lane`` and RAM bandwidth ``host_bw`` (:func:`slo_host_bandwidth`; read only
    where llama.cpp keeps blocks in host RAM)."""
    out: list[tuple[Any, Any]] = []
    for w, u in enumerate(usage_ids):
        if u < 0:
            out.append((cs.scenario.workloads[w], None))
            continue
        usage = cs.usages[w][u]
        wl = usage.workload
        mfu, mbu = costs.mfu_for(wl.name), costs.mbu or DEFAULT_MBU
        # the speed model reads neither the workload's name nor its estimate's: a workload repeated
        # under other names (the same usages_for key) is timed once
        key = ((w, u) if usage.key is None else usage.key, gpu.id, per_lane, gpu.pcie_lanes, mfu, mbu)
        jt = cs.job_time_memo.get(key)
        if jt is None:
            jt = cs.job_time_memo[key] = time_workload(
                workload=wl, estimate=usage.estimate, gpu=gpu, gpu_count=wl.gpus, pcie_per_lane_bytes_per_s=per_lane,
                pcie_lanes=gpu.pcie_lanes, mfu=mfu, mbu=mbu)
        slo = getattr(cs.scenario.workloads[w], "slo", None)
        if slo is not None and wl.infer is not None and jt.seconds_per_job is not None:
            load_key = ("slo load", key, host_bw)
            loaded = cs.job_time_memo.get(load_key)
            if loaded is None:
                f = local_slo_figures(wl, usage.estimate, slo, gpu, per_lane=per_lane, host_bandwidth=host_bw)
                loaded = cs.job_time_memo[load_key] = at_load(jt, slo, f.request_s)
            jt = loaded
        out.append((wl, jt))
    return out


def job_arithmetic(cs: CandidateSet, catalog: Any, costs: CostInputs, row: int) -> dict[str, Any]:
    """How table row ``row``'s time per job and cost per job were computed, in full.

    Returns a mapping: ``workloads`` (per workload: what one job is, its tokens, the time model's
    throughput, MFU and why, hours, and every step of the time model's arithmetic, planner.speed.timing;
    for inference also the cost per request and per million generated tokens), ``cost_per_busy_hour``
    (the depreciation arithmetic of planner.cost.tco.local_usd_per_busy_hour with its inputs),
    ``usd_per_job`` and its ``formula``; ``brief``: the same in a few lines for the text output.
    """
    r = cs.table.row(row)
    gpu = next(g for g in cs.hardware.gpus if g.id == r["gpu_id"])
    plat = next(p for p in cs.hardware.platforms if p.id == r["platform_id"])
    per_lane = min(catalog.pcie_gen(gpu.pcie_gen).per_lane_bytes_per_s,
                   catalog.pcie_gen(plat.pcie_gen).per_lane_bytes_per_s)
    cards, nodes = int(r["cards_total"]), int(r["nodes"])
    capex = float(r["capex_usd"])
    h, h_source = busy_hours_per_month(costs, [sw.variants[0].workload for sw in cs.scenario.workloads])
    years = costs.depreciation_years
    energy = energy_usd_per_hour(gpu_count=cards, gpu_tdp_w=gpu.tdp_w, platform_w=float(plat.platform_w) * nodes,
                                 usd_per_kwh=costs.usd_per_kwh, pue=costs.pue,
                                 gpu_power_fraction=costs.gpu_power_fraction)
    per_hour = local_usd_per_busy_hour(hours_per_month=h, capex_usd=capex, residual_fraction=costs.residual_fraction,
                                       years=years, support_usd_per_year=costs.support_usd_per_year,
                                       energy_usd_per_hour=energy)
    fixed = capex * (1 - costs.residual_fraction) + costs.support_usd_per_year * years
    busy = h * 12 * years
    hour_formula = (f"(capex ${capex:,.2f} x (1 - residual {costs.residual_fraction:g}) + support "
                    f"${costs.support_usd_per_year:,.0f}/year x {years_text(years)}) / ({h:,.1f} busy h/month ({h_source}) x 12 "
                    f"x {years_text(years)} = {busy:,.0f} h) + energy ${energy:,.4f}/h ((GPUs {cards} x {gpu.tdp_w} W x "
                    f"{costs.gpu_power_fraction:g} + platforms {float(plat.platform_w) * nodes:,.0f} W) / 1000 x "
                    f"${costs.usd_per_kwh:g}/kWh x PUE {costs.pue:g}) = ${fixed:,.2f} / {busy:,.0f} h + ${energy:,.4f} "
                    f"= ${per_hour:,.4f} per busy hour")
    works: list[dict[str, Any]] = []
    brief: list[str] = []
    total_h = 0.0
    complete = True
    usage_ids = [int(u) for u in cs.best_usage[row]]
    timed = job_times(cs, gpu, per_lane, usage_ids, costs, slo_host_bandwidth(cs, row, usage_ids))
    for sw, (wl, jt) in zip(cs.scenario.workloads, timed):
        if jt is None or jt.hours_per_job is None:
            complete = False
            works.append({"workload": wl.name, "job": jt.job if jt else "not timed", "hours_per_job": None,
                          "steps": list(jt.lines) if jt else []})
            continue
        total_h += jt.hours_per_job
        item: dict[str, Any] = {"workload": wl.name, "task": wl.task, "job": jt.job, "job_tokens": jt.job_tokens,
                                "tokens_per_s": jt.tokens_per_s, "mfu": jt.mfu, "mfu_reason": jt.mfu_reason,
                                "hours_per_job": jt.hours_per_job, "steps": list(jt.lines)}
        if wl.task == "train":
            fpt = float(jt.flops_per_token)
            item["flops_per_token"] = fpt
            # a share of the rate's time (tokens_per_s already counts the transfers), never added again
            offload = f", of which PCIe offload {jt.transfer_s / 3600:,.3f} h" if jt.transfer_s else ""
            assumed = " (assumed: rests on a rate with no published measurement for this card)" if jt.assumed else ""
            how = ("speed model" if jt.mfu_reason.startswith("modelled") else
                   "one-factor rule pinned by costs.mfu / costs.mbu")
            brief.append(f"time per job, {wl.name}: {jt.job_tokens:,.0f} tokens / {jt.tokens_per_s:,.1f} tokens/s on "
                         f"{wl.gpus} x {gpu.id} ({how}: MFU {jt.mfu:.3g} at {fpt:,.4g} FLOPs/token) = "
                         f"{_hours(jt.hours_per_job)}{offload}{assumed}")
        elif getattr(sw, "slo", None) is not None:
            _served_item(item, brief, wl, jt, sw.slo, gpu, per_hour)
        else:
            usd_req = jt.hours_per_job * per_hour
            per_m = usd_req / float(jt.job_tokens) * 1e6
            item.update({"usd_per_request": usd_req, "usd_per_million_generated_tokens": per_m,
                         "unit": "USD per request; per million generated tokens = per request / tokens_per_request x 1e6",
                         "scaling": "linear: N requests cost N x the per-request figure at this busy-hour rate "
                                    "(the machine's requests/h capacity caps the rate it serves)"})
            assumed = " (assumed: rests on a rate with no published measurement for this card)" if jt.assumed else ""
            brief.append(f"time per job, {wl.name}: {jt.job} at {jt.tokens_per_s:,.1f} generated tokens/s "
                         f"(speed model: prefill and decode steps on {wl.gpus} x {gpu.id}) = "
                         f"{jt.seconds_per_job:,.4f} machine-s per request{assumed}")
            brief.append(f"cost per job, {wl.name}: {_usd(usd_req)} per request (USD per request of "
                         f"{jt.job_tokens:,.0f} generated tokens) = {_usd(usd_req)} / {jt.job_tokens:,.0f} x 1e6 = "
                         f"${per_m:,.4f} per million generated tokens; N requests cost N x {_usd(usd_req)}")
        works.append(item)
    brief.append(f"cost per busy hour (depreciation): {hour_formula}")
    out: dict[str, Any] = {"workloads": works, "cost_per_busy_hour": {
        "usd": per_hour, "formula": hour_formula, "capex_usd": capex, "residual_fraction": costs.residual_fraction,
        "support_usd_per_year": costs.support_usd_per_year, "depreciation_years": years,
        "busy_hours_per_month": h, "busy_hours_source": h_source, "energy_usd_per_hour": energy}}
    if complete:
        out["hours_per_job"] = total_h
        out["usd_per_job"] = total_h * per_hour
        out["formula"] = (f"cost per job = hours per job {total_h:,.6g} h (sum over workloads) x ${per_hour:,.4f} per "
                          f"busy hour = {_usd(total_h * per_hour)}")
    out["brief"] = brief
    return out


def _served_item(item: dict[str, Any], brief: list[str], wl: Any, jt: Any, slo: Any, gpu: Any,
                 per_hour: float) -> None:
    """:func:`job_arithmetic`'s figures of a served workload with an ``slo:``, priced at its load
    (``jt`` from planner.cost.slo_rent.at_load: seconds_per_job = 1 / the requests per second the
    load brings): cost per request = cost per busy hour / requests served per hour, and per million
    generated tokens = that / output_tokens x 1e6 = cost per busy hour / (tokens/s served x 3600)
    x 1e6, as ``planner compare`` prices it (planner.cost.slo_rent.served_tokens_per_s)."""
    rps = 1.0 / jt.seconds_per_job
    per_hour_requests = rps * 3600.0
    request_s = None if slo.requests_per_s is not None else slo.users / rps
    basis = load_basis_text(slo, jt.tokens_per_s, request_s)
    usd_req = per_hour / per_hour_requests
    per_m = usd_req / float(jt.job_tokens) * 1e6
    full_s = 3600.0 / jt.requests_per_hour_capacity if jt.requests_per_hour_capacity else None
    item.update({"usd_per_request": usd_req, "usd_per_million_generated_tokens": per_m,
                 "priced_at": {"load": slo.load_text(), "requests_per_s_served": rps,
                               "requests_per_hour_served": per_hour_requests, "served_tokens_per_s": jt.tokens_per_s,
                               "request_s": request_s, "basis": basis,
                               "full_throughput_seconds_per_request": full_s,
                               "full_throughput_requests_per_hour": jt.requests_per_hour_capacity},
                 "unit": "USD per request at the slo: load = cost per busy hour / requests served per hour; per "
                         "million generated tokens = per request / output_tokens x 1e6",
                 "scaling": "the slo: load: the machine serves its requests and nothing else, so each busy hour "
                            "buys the requests of one hour at that load (planner compare prices it alike)"})
    assumed = " (assumed: rests on a rate with no published measurement for this card)" if jt.assumed else ""
    full = (f"; saturated it would take {full_s:,.4f} s" if full_s else "")
    brief.append(f"time per job, {wl.name}: {jt.job}: {basis}: 1 / {rps:,.4g} requests/s served = "
                 f"{jt.seconds_per_job:,.4f} machine-s per request (speed model under the load on {wl.gpus} x "
                 f"{gpu.id}{full}){assumed}")
    brief.append(f"cost per job, {wl.name}: ${per_hour:,.4f} per busy hour / {per_hour_requests:,.0f} requests served "
                 f"per hour at the slo: load = {_usd(usd_req)} per request of {jt.job_tokens:,.0f} generated tokens "
                 f"= {_usd(usd_req)} / {jt.job_tokens:,.0f} x 1e6 = ${per_m:,.4f} per million generated tokens at "
                 "the slo: load")


def objective_assumptions(cs: CandidateSet, result: Plan, costs: CostInputs, catalog: Any = None) -> dict[str, Any]:
    """The plan's ``objective`` (what it minimised), ``objective_arithmetic`` (the choice's figures,
    a few lines) and, given the ``catalog``, ``job_arithmetic`` (:func:`job_arithmetic` of the choice)."""
    c = result.choice
    h, h_source = busy_hours_per_month(costs, [sw.variants[0].workload for sw in cs.scenario.workloads])
    out: dict[str, Any] = {"objective": OBJECTIVE_TEXT[cs.objective]}
    hours, usd, tco = c.get("hours_per_job"), c.get("usd_per_job"), c.get("tco_usd")
    years = costs.depreciation_years
    lines = [f"capex ${float(c['capex_usd']):,.2f}"]
    if tco is not None and not math.isnan(tco):
        lines.append(f"owned {years_text(years)} at {h:,.1f} busy h/month ({h_source}), residual "
                     f"{costs.residual_fraction:g}, support ${costs.support_usd_per_year:,.0f}/year, "
                     f"${costs.usd_per_kwh:g}/kWh x PUE {costs.pue:g}: TCO ${tco:,.2f}")
    timed = hours is not None and not math.isnan(hours)
    if timed:
        per_hour = usd / hours if hours else float("nan")
        lines.append(f"one job (one run of every workload) {_hours(hours)} x ${per_hour:,.4f} per busy hour = "
                     f"{_usd(usd)} per job")
    else:
        lines.append("time and cost per job: not computed (a workload gives no dataset_tokens / tokens_per_request)")
    if timed and catalog is not None:
        import numpy as np

        feasible = np.nonzero(cs.table["feasible"])[0]
        if len(feasible):
            full = job_arithmetic(cs, catalog, costs, int(feasible[0]))
            out["job_arithmetic"] = full
            lines += full["brief"]
            note = _assumed_win(cs, catalog, costs, [int(x) for x in feasible])
            if note:
                out["assumed_speed_warning"] = note
                lines.append(f"Warning: {note}")
    out["objective_arithmetic"] = lines
    return out


#: Most GPU models :func:`_assumed_win` times while it looks for a machine timed on measured rates only.
MAX_MEASURED_SEARCH = 24


def _assumed_win(cs: CandidateSet, catalog: Any, costs: CostInputs, feasible: list[int]) -> str | None:
    """A sentence when the choice rests on an assumed speed (planner.speed.constants: no published
    measurement for its architecture) where that matters, for every objective: (1) a workload with a
    deadline or an ``slo:`` meets it on the chosen machine only through an assumed figure; (2) under a
    time objective (``cost_per_job``, ``time_to_result``, ``tco``) the choice ranks above a machine
    timed on measured rates only. Names the best such measured machine (the first feasible row, in
    rank order, of another GPU model whose every workload is timed on measured rates) and what it
    costs or takes more. None when the choice is timed on measured rates only."""
    if not feasible:
        return None

    def timed(row: int) -> tuple[list[str], str]:
        r = cs.table.row(row)
        gpu = next(g for g in cs.hardware.gpus if g.id == r["gpu_id"])
        plat = next(p for p in cs.hardware.platforms if p.id == r["platform_id"])
        per_lane = min(catalog.pcie_gen(gpu.pcie_gen).per_lane_bytes_per_s,
                       catalog.pcie_gen(plat.pcie_gen).per_lane_bytes_per_s)
        usage_ids = [int(u) for u in cs.best_usage[row]]
        times = job_times(cs, gpu, per_lane, usage_ids, costs, slo_host_bandwidth(cs, row, usage_ids))
        return [sw.name for sw, (_, jt) in zip(cs.scenario.workloads, times) if jt is not None and jt.assumed], \
            str(r["gpu_id"])

    chosen, gpu_id = timed(feasible[0])
    if not chosen:
        return None
    targeted = [sw.name for sw in cs.scenario.workloads if sw.name in chosen and (
        (sw.task == "train" and sw.deadline_hours is not None) or (sw.task == "infer" and sw.slo is not None))]
    # TCO (capex, energy and support over the years owned) does not depend on the speed: a card never
    # wins that ranking on an assumed rate; only a target met on it is worth the warning there
    time_objective = cs.objective in ("cost_per_job", "time_to_result")
    if not targeted and not time_objective:
        return None
    measured, seen = None, {gpu_id}
    for row in feasible[1:]:
        other_id = str(cs.table["gpu_id"][row])
        if other_id in seen:
            continue
        seen.add(other_id)
        if len(seen) > MAX_MEASURED_SEARCH:
            break
        if not timed(row)[0]:
            measured = row
            break
    alt = ""
    if measured is not None:
        c, m = cs.table.row(feasible[0]), cs.table.row(measured)
        what = f"{int(m['cards_total'])} x {m['gpu_id']} on {m['platform_id']}"
        metric = {"cost_per_job": ("usd_per_job", "per job", _usd), "time_to_result": ("hours_per_job", "per job", _hours),
                  "tco": ("tco_usd", "in TCO", _usd)}.get(cs.objective, ("capex_usd", "", _usd))
        key, unit, fmt = metric
        diff = float(m[key]) - float(c[key])
        alt = (f"; the best machine timed on measured rates only, {what}, "
               + (f"{'costs' if key != 'hours_per_job' else 'takes'} {fmt(diff)} more{' ' + unit if unit else ''}"
                  if diff == diff and diff > 0 else "ranks below it"))
    elif time_objective and not targeted:
        return None  # nothing measured to compare with: the choice does not win over a measured machine
    why = []
    if targeted:
        c = cs.table.row(feasible[0])
        got = []
        if len(cs.scenario.workloads) > 1:
            from planner.solve.achieved import targets_text

            got = [targets_text(cs, int(feasible[0]), set(targeted))]  # each target, named by its workload
        else:
            if c.get("deadline_hours") == c.get("deadline_hours") and c.get("deadline_hours") is not None:
                got.append(f"{_hours(float(c['run_hours']))} of a {float(c['deadline_hours']):g} h deadline")
            if c.get("target_tpot_s") == c.get("target_tpot_s") and c.get("target_tpot_s") is not None:
                got.append(f"TPOT {float(c['tpot_s']) * 1e3:.3g} ms of {float(c['target_tpot_s']) * 1e3:.4g} ms")
            if c.get("target_ttft_s") == c.get("target_ttft_s") and c.get("target_ttft_s") is not None:
                got.append(f"TTFT {float(c['ttft_s']):.3g} s of {float(c['target_ttft_s']):g} s")
        why.append(f"{', '.join(targeted)} meet{'s' if len(targeted) == 1 else ''} "
                   f"{'its target' if len(targeted) == 1 else 'their targets'} on that figure"
                   + (f" ({', '.join(x for x in got if x)})" if any(got) else ""))
    if time_objective and measured is not None:
        why.append(f"it wins the {cs.objective} ranking on it")
    return (f"{gpu_id}'s speed rests on an assumed rate (no published measurement for its architecture: "
            f"planner.speed.constants): {' and '.join(why)}{alt}. Check a published benchmark of the card before "
            "buying on time.")


__all__ = ["OBJECTIVE_TEXT", "busy_hours_per_month", "job_arithmetic", "job_hours", "job_times", "metrics", "objective_assumptions", "plan",
           "ranked"]
