"""Serving levers for "What would fit" when a served workload needs more memory than the card has.

A 70B model served on 24 GB cards rarely fits by one change: the weights in 4 bits and the KV
cache sized to the request the service level names (not the context) may be needed together.
:func:`lever_sets` tries the levers alone, then in pairs, then all together, each at the fewest
GPUs of one node that hold it (the caller's ``first_fit``: the memory model), and names every
smallest set that fits (a set is not named when a smaller one it contains already fits); with an
``slo:`` block each is also timed under its load (:func:`slo_words`, planner.solve.inflight.at_load)
and named only where one replica, or the caller's replicas of it (``timed`` returns None otherwise),
meets the targets: a set that holds the workload but misses its SLO is no fix. :func:`load_key`
words a smaller load the way the workload writes its load (``slo: {concurrency}`` or
``concurrency``), as the scenario reader refuses a load given twice.

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
               timed: Callable[[dict[str, Any], int], str | None] | None = None) -> list[str]:
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
            tail = timed(updates, hit[0]) if timed is not None else ""
            if tail is None:
                continue  # it holds the workload but misses its slo: no fix (a larger set may meet it)
            found.append(key)
            words = " and ".join(opts[i][1] for i in combo)
            out.append(f"{words} at tp {hit[0]} on {where}: {hit[1] / GiB:,.2f} GiB per GPU{tail}")
            if len(out) >= MOST_SETS:
                return out
    return out


def slo_words(slo: Any, workload: Any, est_of: Callable[[Any], Any], gpu: Any, cap: int) -> tuple[bool, str]:
    """(met, '; one replica meets the slo for ...: TTFT 1.2 s ..., TPOT 45 ms ...' or '; but one replica
    misses ...') for one replica of ``workload`` on ``gpu`` (``cap`` bytes per GPU), sized and timed as
    the solver checks a machine (planner.solve.inflight.at_load: under ``requests_per_s`` the sequences
    in flight on the card)."""
    from planner.solve.inflight import at_load
    from planner.solve.targets import figures_text

    s = at_load(workload, slo, gpu, cap, est_of)
    f = s.figures
    got = []
    if slo.ttft_s is not None:
        got.append(f"TTFT {f.ttft_s:.3g} s (target {slo.ttft_s:g} s)")
    if slo.tpot_s is not None:
        got.append(f"TPOT {f.tpot_s * 1e3:.3g} ms (target {slo.tpot_s * 1e3:.4g} ms)")
    figures = ", ".join(got) + ("" if f.keeps_up else "; does not keep up with the rate")
    if not math.isfinite(f.tpot_s) or (slo.requests_per_s is not None and not f.keeps_up):
        figures = figures_text(f, slo, s.workload.infer.concurrency)
    return s.met(slo), (f"; one replica meets the slo for {slo.load_text()}: {figures}" if s.met(slo) else
                        f"; but one replica misses the slo for {slo.load_text()}: {figures} (more replicas share "
                        "the users)")


def load_key(sw: Any, users: int) -> str:
    """A load of at most ``users`` sequences at once, in the key the workload gives its load by:
    ``slo: {concurrency}`` with an ``slo:`` block, else the workload's ``concurrency``. (Under
    ``slo: {requests_per_s}`` the sequences follow the card: planner.solve.slo_fixes offers the
    largest rate it keeps up with instead.)"""
    return f"slo: concurrency: {users}" if getattr(sw, "slo", None) is not None else f"concurrency: {users}"


__all__ = ["MOST_SETS", "lever_sets", "levers", "load_key", "slo_words"]
