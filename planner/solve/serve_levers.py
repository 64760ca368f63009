"""Serving levers for "What would fit" when a served workload needs more memory than the card has.

A 70B model served on 24 GB cards rarely fits by one change: the weights in 4 bits and the KV
cache sized to the request the service level names (not the context) may be needed together.
:func:`lever_sets` tries the levers alone, then in pairs, then all together, each at the fewest
GPUs of one node that hold it (the caller's ``first_fit``: the memory model), and names every
smallest set that fits (a set is not named when a smaller one it contains already fits); with an
``slo:`` block each is also timed under its load (planner.solve.targets.slo_figures) and says
whether it meets the targets. :func:`load_key` words a smaller load the way the workload writes its
load (``slo: {requests_per_s}``, ``slo: {concurrency}`` or ``concurrency``), as the scenario reader
refuses a load given twice.

Never prints and never reads files.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable

#: Most lever sets named (the smallest first).
MOST_SETS = 4


def levers(sw: Any, inf: Any, big: Any) -> list[tuple[dict[str, Any], str]]:
    """The serving levers that apply, as (workload keys, words): fp8 weights (a card with fp8),
    int4-awq weights, an fp8 KV cache (a card with fp8), and the context cut to the SLO's request
    (``prompt_tokens`` + ``output_tokens``) when the workload's context is longer."""
    out: list[tuple[dict[str, Any], str]] = []
    if inf.engine == "llama.cpp":
        return out
    for fmt in ("fp8", "int4-awq"):
        if inf.weights != fmt and (fmt != "fp8" or big.fp8):
            out.append(({"weights": fmt}, f"weights: {fmt}"))
    if inf.kv_dtype != "fp8" and big.fp8:
        out.append(({"kv_dtype": "fp8"}, "kv_dtype: fp8"))
    slo = getattr(sw, "slo", None)
    if slo is not None:
        request = slo.prompt_tokens + slo.output_tokens
        if request < inf.context:
            out.append(({"context": request}, f"context: {request} (the slo's request: {slo.prompt_tokens:,} prompt + "
                                              f"{slo.output_tokens:,} output tokens; the KV cache is sized for "
                                              f"{inf.context:,} per user)"))
    return out


def lever_sets(sw: Any, inf: Any, big: Any, where: str,
               first_fit: Callable[[dict[str, Any]], tuple[int, int] | None],
               timed: Callable[[dict[str, Any], int], str] | None = None) -> list[str]:
    """The smallest sets of :func:`levers` that fit (module docstring), one line each:
    'weights: int4-awq and context: 2304 (...) at tp 2 on <where>: 21.3 GiB per GPU'."""
    from planner.core.units import GiB

    opts = levers(sw, inf, big)
    found: list[frozenset[int]] = []
    out: list[str] = []
    for size in range(1, len(opts) + 1):
        for combo in itertools.combinations(range(len(opts)), size):
            key = frozenset(combo)
            if any(f <= key for f in found):
                continue
            if len({next(iter(opts[i][0])) for i in combo}) < size:
                continue  # two formats of the weights
            updates: dict[str, Any] = {}
            for i in combo:
                updates.update(opts[i][0])
            hit = first_fit(updates)
            if hit is None:
                continue
            found.append(key)
            words = " and ".join(opts[i][1] for i in combo)
            tail = timed(updates, hit[0]) if timed is not None else ""
            out.append(f"{words} at tp {hit[0]} on {where}: {hit[1] / GiB:,.2f} GiB per GPU{tail}")
            if len(out) >= MOST_SETS:
                return out
    return out


def slo_words(slo: Any, workload: Any, est: Any, gpu: Any) -> str:
    """'; meets the slo (TTFT 1.2 s, TPOT 45 ms)' or '; misses the slo: ...' for one replica of
    ``workload`` (its concurrency the SLO's users) on ``gpu`` by the speed model
    (planner.solve.targets.slo_figures, as the solver checks a machine)."""
    from types import SimpleNamespace

    from planner.solve.targets import slo_figures

    f = slo_figures(SimpleNamespace(workload=workload, estimate=est), slo, gpu)
    got = []
    if slo.ttft_s is not None:
        got.append(f"TTFT {f.ttft_s:.3g} s (target {slo.ttft_s:g} s)")
    if slo.tpot_s is not None:
        got.append(f"TPOT {f.tpot_s * 1e3:.3g} ms (target {slo.tpot_s * 1e3:.4g} ms)")
    figures = ", ".join(got) + ("" if f.keeps_up else "; does not keep up with the rate")
    if not math.isfinite(f.tpot_s):
        from planner.solve.targets import figures_text

        figures = figures_text(f, slo, f.in_flight)
    return (f"; one replica meets the slo for {slo.load_text()}: {figures}" if f.met(slo) else
            f"; but one replica misses the slo for {slo.load_text()}: {figures} (more replicas share the users)")


def load_key(sw: Any, users: int) -> str:
    """A load of at most ``users`` sequences at once, in the key the workload gives its load by: with
    ``slo: {requests_per_s}`` the rate whose users by Little's law (requests_per_s x (ttft_s +
    output_tokens x tpot_s), rounded up) are at most ``users``; with ``slo: {concurrency}`` that key;
    else the workload's ``concurrency``."""
    slo = getattr(sw, "slo", None)
    if slo is None:
        return f"concurrency: {users}"
    if slo.requests_per_s is not None and slo.request_bound_s:
        bound = slo.request_bound_s
        rate = users / bound
        digits = max(0, 2 - math.floor(math.log10(rate))) if rate > 0 else 0
        rate = math.floor(rate * 10 ** digits) / 10 ** digits  # three significant figures, rounded down
        held = math.ceil(rate * bound - 1e-9)
        return (f"slo: requests_per_s: {rate:g} (by Little's law {rate:g} x {bound:g} s, the ttft_s + output_tokens x "
                f"tpot_s the targets allow, = {held:,} in flight; one replica holds {users:,})")
    return f"slo: concurrency: {users}"


def pinned_tp_fixes(cs: Any, w: int, sw: Any, v: Any, u: Any, gpu: Any, node_cards: int, overheads: Any,
                    make: Callable[[dict[str, Any]], Any], weights: tuple[str, ...]) -> list[str]:
    """When the scenario pins ``tp`` and the SLO misses: the fewest cards of ``gpu`` that meet it at a
    larger tp (replicas of it sharing the users), as written and with each of ``weights``; each
    flagged with the pinned key it changes ('tp: 4 (the scenario pins 1)',
    planner.solve.shapes.pin_changes). ``make``: updates -> the variant's workload with them (None
    when not valid). Empty when tp is not pinned (the solver tried every tp already)."""
    from dataclasses import replace

    from planner.memory import estimate as mem_estimate
    from planner.solve.choices import valid_tp_degrees
    from planner.solve.shapes import pin_changes, pinned_keys, span
    from planner.solve.targets import slo_figures
    from planner.solve.usages import Usage, capacity_for, with_replicas

    i = u.workload.infer
    slo = sw.slo
    if "tp" not in pinned_keys(v) or i.engine == "llama.cpp" or slo is None:
        return []
    cons = cs.scenario.constraints
    out: list[str] = []
    for fmt in (None,) + tuple(x for x in weights if x != i.weights):
        base = u.workload if fmt is None else make({"weights": fmt})
        if base is None:
            continue
        base = replace(base, infer=replace(base.infer, concurrency=slo.users, replicas=1))
        best = None
        for tp in valid_tp_degrees(u.workload.architecture):
            if tp <= i.tp or tp > node_cards:
                continue
            for reps in range(1, min(4 * node_cards // tp, slo.users) + 1):  # up to 4 nodes' cards, as span words
                if best is not None and tp * reps >= best[0]:
                    break
                wl = with_replicas(base, tp, reps, node_cards)
                est = mem_estimate(wl, overheads)
                if est.per_gpu_total_bytes > capacity_for(wl, gpu.cuda_total_bytes, cons.vram_headroom):
                    continue
                f = slo_figures(Usage(w, u.variant_index, tp * reps, node_cards, tp, wl, est), slo, gpu)
                if f.met(slo):
                    best = (tp * reps, tp, reps, f)
                    break
        if best is None:
            continue
        n, tp, reps, f = best
        what = f"{reps} replica{'s' if reps > 1 else ''} of tp {tp}" + (f" with weights: {fmt}" if fmt else "")
        updates = {"tp": tp, **({"weights": fmt} if fmt else {})}
        out.append(f"{what} ({n} x {gpu.id}): TTFT {f.ttft_s:.3g} s, TPOT {f.tpot_s * 1e3:.3g} ms at {f.in_flight} "
                   f"sequences each{span(cs, gpu.id, n, node_cards, tp).clause()}{pin_changes(sw, v, updates)}")
    return out


__all__ = ["MOST_SETS", "lever_sets", "levers", "load_key", "pinned_tp_fixes", "slo_words"]
