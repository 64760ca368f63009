"""Every deadline and SLO of a scenario with what one candidate row achieves, named by workload.

Read by the Alternatives (their ``targets`` column: planner.solve.solver.alternatives) and by the
assumed-rate warning (planner.cost.objective). Each figure is timed as the solver checks it
(planner.solve.targets: :func:`run_hours`, :func:`slo_figures`). Never prints and never reads files.
"""

from __future__ import annotations

import math
from typing import Any

from planner.solve.candidates import _hw_row
from planner.solve.targets import pinned_rates, run_hours, slo_figures


def targets_text(cs: Any, row: int, only: Any = None) -> str:
    """Every deadline and SLO of the scenario with what candidate ``row`` achieves, the closest to
    (or furthest past) its target first (:func:`closeness`): 'c: TTFT 0.22 s of 1 s, TPOT 46.5 ms of
    50 ms; a: 40.1 h of 100 h; b: 1.3 h of 5 h'; each named by its workload when the scenario has several ('' when none
    has a target); ``only``: the workload names to include (None: all). Deadlines by :func:`run_hours`, SLOs by :func:`slo_figures`, as the solver checks
    them."""
    from planner.core.units import duration_text

    r = cs.table.row(row)
    gpu = cs.hardware.gpu_by_id[r["gpu_id"]]
    a = cs.hardware.arrays
    hr = _hw_row(cs, r)
    per_lane = float(a["per_lane"][hr])
    many = len(cs.scenario.workloads) > 1
    items: list[tuple[float, str]] = []
    for sw, u in zip(cs.scenario.workloads, cs.usages_of(row)):
        if u is None or (only is not None and sw.name not in only):
            continue
        who = f"{sw.name}: " if many else ""
        if sw.task == "train" and sw.deadline_hours:
            h = run_hours(u, gpu, per_lane, pinned_rates(cs.scenario, sw.name))
            if h == h:
                items.append((h / sw.deadline_hours, f"{who}{duration_text(h)} of {sw.deadline_hours:g} h"))
        elif sw.task == "infer" and sw.slo is not None:
            slo = sw.slo
            host = u.decode is not None and u.decode.host_blocks
            f = slo_figures(u, slo, gpu, per_lane=per_lane if host else 0.0,
                            host_bandwidth=float(a["host_bw"][hr]) if host else None)
            got = []
            if slo.ttft_s is not None:
                got.append(f"TTFT {f.ttft_s:.3g} s of {slo.ttft_s:g} s")
            if slo.tpot_s is not None:
                got.append("TPOT " + (f"{f.tpot_s * 1e3:.3g} ms" if math.isfinite(f.tpot_s) else "cannot keep up")
                           + f" of {slo.tpot_s * 1e3:.4g} ms")
            items.append((closeness(f, slo), who + ", ".join(got)))
    items.sort(key=lambda x: -x[0])
    return "; ".join(text for _, text in items)


def closeness(f: Any, slo: Any) -> float:
    """How near its limit a served workload is, as a deadline's hours / limit: the largest of TTFT /
    ttft_s and TPOT / tpot_s (below 1 when met, above when missed), infinite when it does not keep
    up with its load. :func:`targets_text` puts the largest first (the nearest its limit, or the
    furthest over it)."""
    if not f.keeps_up or not math.isfinite(f.tpot_s):
        return math.inf
    ratios = [f.ttft_s / slo.ttft_s] if slo.ttft_s is not None else []
    if slo.tpot_s is not None:
        ratios.append(f.tpot_s / slo.tpot_s)
    return max(ratios, default=0.0)


__all__ = ["closeness", "targets_text"]
