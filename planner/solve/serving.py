"""How a served workload's machine is judged: the best split that meets its ``slo:``, and the
closest miss when none does.

**The best split.** On one machine several usages of a workload with an ``slo:`` may meet it: tensor
parallel degrees (each with replicas filling the machine, planner.solve.usages.fill) and precisions
the scenario leaves open. They cost the same (one machine) and serve the same load, so the cheapest
per million tokens is the one that serves the most tokens a second there. Under ``slo:
{concurrency: c}`` each user sends the next request when the last ends, so the machine serves c x
output_tokens / request_s tokens a second (Little's law, as planner.cost.slo_rent prices it): the
shortest request (TTFT + output_tokens x TPOT under the load) serves the most and costs the least per
million tokens. Under ``requests_per_s`` every split that keeps up serves the same rate; the
shortest request is then the lower latency. :func:`served_better` keeps that split, ties to the
lower TTFT, then to the scenario's order.

**The closest miss.** When no split or machine meets the SLO, the closest is the one with the least
:meth:`planner.solve.targets.SloFigures.excess`: how far over its targets, graded, when it falls
behind a ``requests_per_s`` load, by how much (its overload), never by its TTFT alone.
:func:`closest_slo_row` picks it among table rows; :func:`splits_of` lists the usages a machine
could run, for the largest rate it keeps up with (planner.solve.inflight.largest_rate) taken over
every split, not only the one judged.

Importing this module does no work.
"""

from __future__ import annotations

from typing import Any


def served_better(ok: Any, cur_ok: Any, request_s: Any, best_request_s: Any, ttft_s: Any, best_ttft_s: Any) -> Any:
    """Bool array: where a usage that meets the slo: (``ok``) replaces the one a row holds, which
    meets it too (``cur_ok``): a shorter request (relative 1e-9), or as short and a lower TTFT (module
    docstring). Arrays of one length (the rows the usage applies to)."""
    import numpy as np

    tol = 1e-9
    with np.errstate(invalid="ignore"):  # inf - inf where a row holds no timed usage yet (cur_ok False there)
        shorter = request_s < best_request_s * (1 - tol)
        same = np.abs(request_s - best_request_s) <= best_request_s * tol
    return ok & cur_ok & (shorter | (same & (ttft_s < best_ttft_s * (1 - tol))))


def slo_excess(cs: Any, w: int, rows: Any) -> Any:
    """Float array: the :meth:`~planner.solve.targets.SloFigures.excess` of workload ``w``'s usage on
    each table row of ``rows`` (inf where it was not timed: memory or another rule failed first),
    timed as the candidate check times it (planner.solve.targets.slo_figures, one figure per usage
    and GPU)."""
    import numpy as np

    from planner.solve.targets import slo_figures

    t = cs.table
    slo = cs.scenario.workloads[w].slo
    memo: dict[tuple, float] = {}
    out = np.full(len(rows), np.inf)
    for k, row in enumerate(np.asarray(rows).tolist()):
        if not np.isfinite(t["ttft_s"][row]) and not np.isfinite(t["tpot_s"][row]):
            continue
        ui = int(cs.best_usage[row, w])
        if ui < 0:
            continue
        u = cs.usages[w][ui]
        gpu = cs.hardware.gpu_by_id[t["gpu_id"][row]]
        if u.decode is not None and u.decode.host_blocks > 0:  # layers in host RAM: the row's link and RAM
            from planner.solve.rows import _hw_row

            a = cs.hardware.arrays
            hw_row = _hw_row(cs, t.row(row))
            per_lane, hbw = float(a["per_lane"][hw_row]), float(a["host_bw"][hw_row])
        else:
            per_lane, hbw = 0.0, None
        key = (ui, gpu.id, per_lane, hbw)
        if key not in memo:
            memo[key] = slo_figures(u, slo, gpu, per_lane=per_lane, host_bandwidth=hbw or None).excess(slo)
        out[k] = memo[key]
    return out


def closest_slo_row(cs: Any, w: int, rows: Any) -> int:
    """The table row of ``rows`` (indices, rank order) whose workload ``w`` comes closest to its
    ``slo:`` (the least :func:`slo_excess`; the first of equals, the cheaper in rank order)."""
    import numpy as np

    ex = slo_excess(cs, w, rows)
    return int(np.asarray(rows)[int(np.argmin(ex))])


def splits_of(cs: Any, w: int, row: int) -> list[Any]:
    """The usages of workload ``w`` that apply to table row ``row``'s machine: every tp degree and
    precision the scenario leaves open, with replicas filling it (planner.solve.usages.fill), on its
    card (its vLLM card class and, under requests_per_s, the GPUs a usage's sequence count is for)."""
    from planner.memory.vllm import is_large_card

    t = cs.table
    c, n = int(t["cards_per_node"][row]), int(t["nodes"][row])
    gpu = cs.hardware.gpu_by_id[t["gpu_id"][row]]
    out = []
    for u in cs.usages[w]:
        if u.exact and (u.gpus_per_node != c or u.gpus != c * n):
            continue
        if not u.exact and (u.gpus_per_node != u.gpus or u.gpus > c) and (u.gpus_per_node, u.gpus) != (c, c * n):
            continue
        if u.vllm_card is not None and (u.vllm_card == "large") != is_large_card(gpu):
            continue
        if u.gpu_ids is not None and gpu.id not in u.gpu_ids:
            continue
        out.append(u)
    return out




def largest_rate_over(cs: Any, usages: Any, gpu: Any, slo: Any, overheads: Any) -> tuple | None:
    """The largest ``requests_per_s`` any of ``usages`` (the splits of one machine, :func:`splits_of`)
    keeps up with and meets ``slo``'s targets at on ``gpu`` (planner.solve.inflight.largest_rate, each
    sized as the solver sizes it: vllm serve's settings for the card, the scenario's headroom):
    (rate, what one replica achieves there, its workload, the usage, the bytes one GPU offers it, its
    memoised memory model), the largest rate, ties to the scenario's order; None when none keeps up
    with any rate."""
    from planner.memory.vllm import for_gpu
    from planner.solve.inflight import estimate_by_sequences, largest_rate
    from planner.solve.usages import capacity_for

    best = None
    done: set[tuple] = set()
    for u in usages:
        wl = for_gpu(u.workload, gpu)
        i = wl.infer
        key = (u.variant_index, i.tp, i.replicas)
        if key in done:  # the same replicas at another sequence count: largest_rate sizes them itself
            continue
        done.add(key)
        est_of = estimate_by_sequences(overheads)

        cap = capacity_for(wl, gpu.cuda_total_bytes, cs.scenario.constraints.vram_headroom)
        found = largest_rate(wl, slo, gpu, cap, est_of)
        if found is not None and (best is None or found[0] > best[0]):
            best = (found[0], found[1], wl, u, cap, est_of)
    return None if best is None else best[:4] + (best[4], best[5])


__all__ = ["closest_slo_row", "largest_rate_over", "served_better", "slo_excess", "splits_of"]
