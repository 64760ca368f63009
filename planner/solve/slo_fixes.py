"""What would make a served workload meet its ``slo:``, for "What would fit" (planner.solve.suggest).

Every fix offered here is one a re-plan accepts: each is sized and timed as the solver checks a
machine (planner.solve.inflight.at_load: ``vllm serve``'s settings on the card, the sequences in
flight a ``requests_per_s`` load keeps on it, the memory for them, then the targets), and a fix that
names a machine names one the scenario's constraints build (planner.solve.shapes.span: a row of the
candidate table that passes every build rule) within its ``budget_usd``; one that is not built, or
that still misses, is not offered. The fixes, on the closest machine's card:

- more replicas of its tp (the fewest that meet the SLO);
- quantized weights on the same machine;
- a larger ``tp`` when the scenario pins it (:func:`pinned_tp_fixes`);
- under ``requests_per_s``, the largest rate the closest machine keeps up with and meets the targets at,
  over every replica/tp split of it (planner.solve.serving.largest_rate_over), in the key the
  scenario writes its load with;
- the loosest targets the closest machine meets, rounded up (a target loosened to a figure rounded
  down would still be missed).

Never prints and never reads files.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable

from planner.solve.inflight import Sized, at_load, estimate_by_sequences, holds, round_up


def sized_on(cs: Any, wl: Any, slo: Any, gpu: Any, overheads: Any) -> Sized:
    """One replica of ``wl`` (tp and replicas set) on ``gpu`` under ``slo``'s load, as the solver sizes
    and times it: vllm serve's settings for the card (planner.memory.vllm.for_gpu), the scenario's
    headroom, the sequences in flight (planner.solve.inflight.at_load)."""
    from planner.memory.vllm import for_gpu
    from planner.solve.usages import capacity_for

    wl = for_gpu(wl, gpu)
    est_of = estimate_by_sequences(overheads)

    cap = capacity_for(wl, gpu.cuda_total_bytes, cs.scenario.constraints.vram_headroom)
    return at_load(wl, slo, gpu, cap, est_of)


def built_within_budget(cs: Any, gpu_id: str, n: int, node_cards: int, tp: int) -> Any:
    """The :class:`planner.solve.shapes.Span` of ``n`` cards of ``gpu_id`` when the constraints build it
    and, under ``budget_usd``, some such machine is within it; else None."""
    import numpy as np

    from planner.solve.hardware import BUILD_RULES
    from planner.solve.shapes import span

    sp = span(cs, gpu_id, n, node_cards, tp)
    if not sp.buildable:
        return None
    budget = cs.scenario.constraints.budget_usd
    if budget is None:
        return sp
    t = cs.table
    rows = np.nonzero((t["gpu_id"] == gpu_id) & (t["cards_total"] == n))[0].tolist()
    ok = [i for i in rows if t["binding"][i] not in BUILD_RULES and float(t["capex_usd"][i]) <= budget + 1e-9]
    return sp if ok else None


def more_replicas(cs: Any, wl: Any, slo: Any, gpu: Any, node_cards: int, overheads: Any) -> str:
    """'' or '; 2 replicas of tp 2 (4 x gpu) meet the slo for ...: TTFT ..., TPOT ...': the fewest
    replicas of ``wl``'s tp (one node, a machine the constraints build within the budget) that share
    ``slo``'s load and meet it, sized and timed as the solver checks a machine (:func:`sized_on`)."""
    from planner.solve.usages import with_replicas

    i = wl.infer
    every = replace(wl, infer=replace(i, concurrency=slo.users, replicas=1))
    top = node_cards // max(i.tp, 1)
    for reps in range(2, (top if slo.requests_per_s is not None else min(top, slo.users)) + 1):
        n = i.tp * reps
        sp = built_within_budget(cs, gpu.id, n, node_cards, i.tp)
        if sp is None:
            continue
        s = sized_on(cs, with_replicas(every, i.tp, reps, sp.per_node), slo, gpu, overheads)
        if s.met(slo):
            f = s.figures
            return (f"; {reps} replicas of tp {i.tp} ({n} x {gpu.id}{sp.clause()}) meet the slo for {slo.load_text()}: "
                    f"TTFT {f.ttft_s:.3g} s, TPOT {f.tpot_s * 1e3:.3g} ms at {f.in_flight:,} sequences each")
    return ""


def slo_fixes(cs: Any, w: int, sw: Any, v: Any, u: Any, row: int, node_cards: int, overheads: Any,
              make: Callable[[dict[str, Any]], Any], weights: tuple[str, ...], pre: str) -> list[str]:
    """The fixes of the module docstring for workload ``w`` (``sw``, its variant ``v``, its usage ``u``
    on candidate row ``row``, the closest miss), one line each, prefixed ``pre``. ``make``: updates ->
    the variant's workload with them (None when not valid); ``weights``: the formats tried."""
    from planner.solve.shapes import pinned_clause
    from planner.solve.targets import slo_figures
    from planner.solve.usages import with_replicas

    t = cs.table
    r = t.row(row)
    gpu = cs.hardware.gpu_by_id[r["gpu_id"]]
    slo = sw.slo
    i = u.workload.infer
    out: list[str] = []
    fig = slo_figures(u, slo, gpu)
    budget = cs.scenario.constraints.budget_usd
    here = budget is None or float(r["capex_usd"]) <= budget + 1e-9  # fixes on this machine stay within budget
    # more replicas of the closest machine's replica: fewer users (or arrivals) each
    every = replace(u.workload, infer=replace(i, concurrency=slo.users, replicas=1))
    top = 4 * i.replicas if slo.requests_per_s is not None else min(4 * i.replicas, slo.users)
    for reps in range(i.replicas + 1, top + 1):
        n = i.tp * reps
        sp = built_within_budget(cs, gpu.id, n, node_cards, i.tp)
        if sp is None:
            continue
        s = sized_on(cs, with_replicas(every, i.tp, reps, sp.per_node), slo, gpu, overheads)
        if s.met(slo):
            out.append(f"{pre}{reps} replicas of tp {i.tp} ({n} x {gpu.id}): TTFT {s.figures.ttft_s:.3g} s, TPOT "
                       f"{s.figures.tpot_s * 1e3:.3g} ms at {s.figures.in_flight} sequences each{sp.clause()}"
                       f"{pinned_clause(sw, n)}")
            break
    # quantized weights and an fp8 KV cache: planner.solve.replan_fixes re-plans them (and lists them)
    out += [pre + x for x in pinned_tp_fixes(cs, w, sw, v, u, gpu, node_cards, overheads, make, weights)]
    if slo.requests_per_s is not None and here:
        from planner.solve.serving import splits_of

        out += [pre + x for x in _rate_fix(cs, splits_of(cs, w, row) or [u], gpu, slo, overheads)]
    got = []
    if slo.ttft_s is not None and fig.ttft_s > slo.ttft_s:
        got.append(f"ttft_s >= {round_up(fig.ttft_s):g}")
    if slo.tpot_s is not None and fig.tpot_s > slo.tpot_s:
        # in the key the scenario writes: a per-user rate is 1 / TPOT (rounded down to stay reachable)
        got.append(f"output_tokens_per_s <= {math.floor(1 / fig.tpot_s * 10) / 10:g}"
                   if slo.output_tokens_per_s is not None else f"tpot_s >= {round_up(fig.tpot_s):g}")
    if got and fig.keeps_up and here:
        # (when it meets both, or cannot keep up at all, what misses is keeping up with the load)
        out.append(f"{pre}loosen the slo: to {' and '.join(got)}: what the closest machine ({r['cards_total']} x "
                   f"{r['gpu_id']}) achieves for {slo.load_text()}")
    return out


def pinned_tp_fixes(cs: Any, w: int, sw: Any, v: Any, u: Any, gpu: Any, node_cards: int, overheads: Any,
                    make: Callable[[dict[str, Any]], Any], weights: tuple[str, ...]) -> list[str]:
    """When the scenario pins ``tp`` and the SLO misses: the fewest cards of ``gpu`` that meet it at a
    larger tp (replicas of it sharing the load), as written and with each of ``weights``; each
    flagged with the pinned key it changes ('tp: 4 (the scenario pins 1)',
    planner.solve.shapes.pin_changes). Each is sized and timed as the solver checks a machine
    (:func:`sized_on`) and offered only on a machine the constraints build within the budget
    (:func:`built_within_budget`): a re-plan with it accepts it. ``make``:
    updates -> the variant's workload with them (None when not valid). Empty when tp is not pinned
    (the solver tried every tp already)."""
    from dataclasses import replace

    from planner.solve.choices import valid_tp_degrees
    from planner.solve.shapes import pin_changes, pinned_keys
    from planner.solve.usages import with_replicas

    i = u.workload.infer
    slo = sw.slo
    if "tp" not in pinned_keys(v) or i.engine == "llama.cpp" or slo is None:
        return []
    out: list[str] = []
    for fmt in (None,) + tuple(x for x in weights if x != i.weights):
        base = u.workload if fmt is None else make({"weights": fmt})
        if base is None:
            continue
        base = replace(base, infer=replace(base.infer, concurrency=slo.users, replicas=1))
        top = 4 * node_cards if slo.requests_per_s is not None else slo.users
        best = None
        for tp in valid_tp_degrees(u.workload.architecture):
            if tp <= i.tp or tp > node_cards:
                continue
            for reps in range(1, min(4 * node_cards // tp, top) + 1):  # up to 4 nodes' cards, as span words
                if best is not None and tp * reps >= best[0]:
                    break
                sp = built_within_budget(cs, gpu.id, tp * reps, node_cards, tp)
                if sp is None:
                    continue
                s = sized_on(cs, with_replicas(base, tp, reps, sp.per_node), slo, gpu, overheads)
                if s.met(slo):
                    best = (tp * reps, tp, reps, s.figures, sp)
                    break
        if best is None:
            continue
        n, tp, reps, f, sp = best
        what = f"{reps} replica{'s' if reps > 1 else ''} of tp {tp}" + (f" with weights: {fmt}" if fmt else "")
        updates = {"tp": tp, **({"weights": fmt} if fmt else {})}
        out.append(f"{what} ({n} x {gpu.id}): TTFT {f.ttft_s:.3g} s, TPOT {f.tpot_s * 1e3:.3g} ms at {f.in_flight} "
                   f"sequences each{sp.clause()}{pin_changes(sw, v, updates)}")
    return out


def _rate_fix(cs: Any, usages: Any, gpu: Any, slo: Any, overheads: Any) -> list[str]:
    """Under ``requests_per_s``: the largest rate the closest machine keeps up with and meets the
    targets at, over every replica/tp split of it (``usages``, planner.solve.serving.splits_of;
    planner.solve.inflight.largest_rate), in the key the scenario writes, with the split, the
    sequences in flight it keeps and the most one replica's memory holds."""
    from planner.solve.serving import largest_rate_over

    found = largest_rate_over(cs, usages, gpu, slo, overheads)
    if found is None:
        return []
    rate, s, wl, u, cap, est_of = found
    i = wl.infer
    f = s.figures
    each = rate / i.replicas
    return [f"slo: requests_per_s: {rate:g} (the most {u.gpus} x {gpu.id} keep up with, as {i.replicas} "
            f"replica{'s' if i.replicas > 1 else ''} of tp {i.tp}: by Little's law {each:.4g} requests/s x "
            f"{f.request_s:.3g} s per request = {each * f.request_s:.3g} in flight, {f.in_flight:,} sequence(s) "
            f"held per replica; one replica holds {holds(wl, cap, est_of):,}; TTFT {f.ttft_s:.3g} s, TPOT "
            f"{f.tpot_s * 1e3:.3g} ms)"]


__all__ = ["built_within_budget", "more_replicas", "pinned_tp_fixes", "sized_on", "slo_fixes"]
