"""What would fit when nothing does: the reasons behind a miss and changes checked with the memory model.

When no candidate is feasible, :func:`planner.solve.solver.plan` raises
:class:`planner.solve.solver.NoFeasiblePlan`; its message takes from here the plain-language causes
(the budget, what a vram miss is made of: :func:`_why_notes`), the warnings that hold whatever the
machine (:func:`_standing_warnings`) and :func:`suggest`'s concrete changes, each one checked with the
memory model on the largest buildable card: ZeRO-3 across >= N GPUs, offload, checkpointing, QLoRA or
LoRA, a smaller micro-batch, more tensor parallelism, quantized weights or KV cache, another vLLM
``gpu_memory_utilization``, llama.cpp layers in host RAM, a larger card, a larger budget... The
searches it runs (:func:`fits`, :func:`largest_fitting`, :func:`largest_gpu_layers`,
:func:`utilization_that_fits`) serve ``planner fit`` too (planner.api.fits).

Never prints and never reads files.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from planner.solve.candidates import (
    BUILD_RULES,
    NODE_RULES,
    CandidateSet,
    allowed_gpus,
    capacity_bytes,
    capacity_for,
    takes_headroom,
    with_gpus,
)
from planner.catalog.loader import Catalog
from planner.catalog.platforms import cools, max_cards
from planner.core.errors import InputError
from planner.core.fields import Entry
from planner.memory import estimate
from planner.memory.overheads import RuntimeOverheads
from planner.memory.vllm import for_gpu, is_large_card
from planner.solve.choices import _with
from planner.solve.scenario import MAX_NODES, ScenarioWorkload, Variant
from planner.core.units import GiB, duration_text
from planner.workload.spec import Workload, workload_from_entry


def _standing_warnings(cs: CandidateSet) -> list[str]:
    """Warnings that hold for a workload whatever the machine: those of the workload and its memory
    estimate that every evaluated usage of it carries (e.g. a sequence beyond the model's positions)."""
    out: list[str] = []
    for sw, usages in zip(cs.scenario.workloads, cs.usages):
        common: dict[str, None] | None = None
        for u in usages:
            # the usage's workload is on the usage's GPU count, and so are its warnings (Workload.warnings)
            msgs = dict.fromkeys(list(u.workload.warnings) + list(u.estimate.warnings))
            common = msgs if common is None else {m: None for m in common if m in msgs}
        out += [f"{sw.name}: {m}" for m in (common or {})]
    return out


def _hw_ok_gpus(cs: CandidateSet) -> list[Any]:
    """GPUs (allowed by the scenario) that have at least one buildable row, largest capacity first."""
    t = cs.table
    ok = ~_among(t["binding"], BUILD_RULES)
    budget = cs.scenario.constraints.budget_usd
    if budget is not None:
        # suggestions are for machines the budget allows: none when no buildable machine is within it
        ok &= t["capex_usd"] <= budget + 1e-9
    ids = set(t["gpu_id"][ok].tolist())
    gpus = [g for g in cs.hardware.gpus if g.id in ids]
    h = cs.hardware.headroom
    return sorted(gpus, key=lambda g: (-capacity_bytes(g.cuda_total_bytes, h), g.id))


def _why_notes(cs: CandidateSet) -> list[str]:
    """Plain-language causes: the budget when it is what rules out the machines that fit
    everything else, then the causes behind a vram miss (e.g. ZeRO-2 does not shard parameters)."""
    import numpy as np

    t = cs.table
    notes = []
    budget = cs.scenario.constraints.budget_usd
    binding, capex = t["binding"], t["capex_usd"]
    over = binding == "budget"
    if budget is not None and over.any():
        cheapest = float(capex[over].min())
        built = ~_among(binding, BUILD_RULES)  # the budget rows among them: never empty here
        within = built & (capex <= budget + 1e-9)
        tail = ("the machines within it miss as listed above" if within.any() else
                f"no buildable machine is within it (the cheapest costs ${float(capex[built].min()):,.2f})")
        notes.append(f"The budget decides: the cheapest machine that meets every other constraint costs "
                     f"${cheapest:,.2f}, ${cheapest - budget:,.2f} over budget_usd ${budget:,.2f}; {tail}.")
    sub = np.nonzero(binding == "vram")[0]
    if sub.size == 0 or np.isin(binding, ("speed", "deadline", "slo")).any():
        # some machine holds every workload in memory and misses only on time: memory is not the reason
        return notes
    i = int((t["per_gpu_need_bytes"][sub] - t["gpu_capacity_bytes"][sub]).argmin())
    row = int(sub[i])
    for w, u in enumerate(cs.usages_of(row)):
        if u is None or cs.scenario.workloads[w].name != t["binding_workload"][row]:
            continue
        est = u.estimate
        comps = sorted(est.gpu_components(), key=lambda c: -c.bytes)[:4]
        notes.append(f"{cs.scenario.workloads[w].name} needs {est.per_gpu_total_bytes / GiB:,.2f} GiB per GPU; "
                     "largest parts: " + ", ".join(f"{c.name} {c.bytes / GiB:,.2f} GiB" for c in comps) + ".")
        tr = u.workload.train
        if tr is not None and tr.method == "full" and tr.zero < 3:
            wts = next((c for c in est.gpu_components() if c.name == "weights"), None)
            sharded = {0: "nothing", 1: "only the optimizer states and master weights",
                       2: "the gradients, optimizer states and master weights"}[tr.zero]
            dp = tr.data_parallel
            if wts is not None:
                notes.append(f"ZeRO-{tr.zero} shards {sharded} over the {dp} data-parallel GPU(s), not the "
                             f"parameters: each GPU holds all {wts.bytes / GiB:,.2f} GiB of 16-bit weights "
                             f"({wts.formula}).")
    return notes


def _workload_from(sw: ScenarioWorkload, v: Variant, catalog: Catalog, updates: dict[str, Any],
                   drop: Sequence[str] = ()) -> Workload | None:
    data = _with(v.data, updates)
    for k in drop:
        data.pop(k, None)
    try:
        return workload_from_entry(Entry(data, file=None, error=InputError), lambda *_: (
            v.workload.model_id, v.workload.model_source, v.workload.architecture), default_name=sw.name)
    except InputError:
        return None


def fits(workload: Workload, capacity: int, overheads: RuntimeOverheads | None = None,
         gpu: Any = None) -> tuple[bool, int]:
    """Whether the workload's per-GPU need is at most ``capacity`` bytes, and the need; on ``gpu``
    (when given) with the settings ``vllm serve`` would take there (planner.memory.vllm.for_gpu)."""
    need = estimate(for_gpu(workload, gpu) if gpu is not None else workload, overheads).per_gpu_total_bytes
    return need <= capacity, need


def utilization_that_fits(make: Any, current: float, capacity: int, overheads: RuntimeOverheads | None = None,
                          gpu: Any = None) -> tuple[float, int] | None:
    """A vLLM ``gpu_memory_utilization`` other than ``current`` at which the workload fits, and its
    need in bytes per GPU: :data:`VLLM_UTILIZATIONS` in order (vLLM's default 0.9 first). Set too
    high, the CUDA context does not fit the card's remaining 1 - utilization; set too low, weights
    and KV cache do not fit its share (planner.memory.vllm).

    Args:
        make: utilization -> Workload (or None when not valid).
        current: the workload's own utilization (not tried).
        capacity, overheads, gpu: as for :func:`fits`.
    """
    for util in VLLM_UTILIZATIONS:
        if util == current:
            continue
        w = make(util)
        if w is None:
            continue
        ok, need = fits(w, capacity, overheads, gpu=gpu)
        if ok:
            return util, need
    return None


def largest_gpu_layers(make: Any, capacity: int, hi: int,
                       overheads: RuntimeOverheads | None = None) -> tuple[int | None, int | None, int | None]:
    """The most llama.cpp GPU layers (``n_gpu_layers`` in [0, hi]) whose per-GPU need fits ``capacity``.

    Scans from ``hi`` down (at most n_layer + 2 estimates): a layer moved to the GPU adds its
    weights and KV cache but removes the copy of a host block from the compute buffer, so the need
    is not assumed monotone.

    Returns:
        (layers, need there, need at layers + 1 or None at hi); (None, need at 0, None) when even 0
        does not fit.
    """
    above = None
    for x in range(hi, -1, -1):
        n = estimate(make(x), overheads).per_gpu_total_bytes
        if n <= capacity:
            return x, n, above
        above = n
    return None, above, None


def largest_fitting(make: Any, capacity: int, lo: int, hi: int, overheads: RuntimeOverheads | None = None,
                    gpu: Any = None) -> tuple[int | None, int | None, int | None]:
    """The largest integer x in [lo, hi] with need(make(x)) <= capacity, by bisection.

    Memory is non-decreasing in micro-batch, sequence length, context and concurrency, so an
    exponential search finds a bracket [fits, does not fit] and a binary search closes it:
    O(log(hi)) estimates.

    Args:
        make: x -> Workload (or None when x is not a valid value).
        capacity: bytes per GPU.
        lo, hi: the range searched.
        gpu: the card, for the settings ``vllm serve`` takes there (None: the workload as made).

    Returns:
        (x, need at x, need at x + 1 or None when x == hi); (None, need at lo, None) when even lo
        does not fit.
    """
    def need(x: int) -> int | None:
        w = make(x)
        if w is not None and gpu is not None:
            w = for_gpu(w, gpu)
        return None if w is None else estimate(w, overheads).per_gpu_total_bytes

    n_lo = need(lo)
    if n_lo is None or n_lo > capacity:
        return None, n_lo, None
    good, good_need = lo, n_lo
    step = 1
    bad, bad_need = None, None
    while True:
        x = min(good + step, hi)
        if x == good:
            return good, good_need, None
        n = need(x)
        if n is not None and n <= capacity:
            good, good_need = x, n
            if x == hi:
                return good, good_need, None
            step *= 2
        else:
            bad, bad_need = x, n
            break
    while bad - good > 1:
        mid = (good + bad) // 2
        n = need(mid)
        if n is not None and n <= capacity:
            good, good_need = mid, n
        else:
            bad, bad_need = mid, n
    return good, good_need, bad_need if bad == good + 1 else None


_ZERO3_COUNTS = (2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512)


def suggest(cs: CandidateSet, catalog: Catalog, overheads: RuntimeOverheads | None = None) -> list[str]:
    """Concrete changes that would make the scenario fit, each checked with the memory model."""
    sc = cs.scenario
    t = cs.table
    out: list[str] = []
    gpus = _hw_ok_gpus(cs)
    cons = sc.constraints
    h = cons.vram_headroom
    rules = set(t["binding"].tolist())
    # cards sold used only without used_ok: planner.solve.used_only, from the solver (it re-plans)
    if gpus:
        big = gpus[0]
        node_max = _node_max(cs, big.id)
        many = len(sc.workloads) > 1
        for w, sw in enumerate(sc.workloads):
            mine = t["binding_workload"] == sw.name
            if "vram" not in set(t["binding"][mine].tolist()):
                continue
            if {"deadline", "slo"} & set(t["binding"][mine].tolist()):
                continue  # memory fits somewhere: what misses is the time target (_suggest_targets)
            cap = capacity_for(sw.variants[0].workload, big.cuda_total_bytes, h)
            # of several workloads, one that fits the largest buildable card on some usage already is not
            # what misses: its changes would not make the scenario fit
            if many and any(u.need_bytes <= cap and u.gpus_per_node <= node_max for u in cs.usages[w]):
                continue
            out += [f"{sw.name}: {x}" if many else x
                    for x in _suggest_vram(sw, catalog, big, cap, node_max, cons, overheads, cs=cs)]
    if rules & {"cards", "tp"} and not rules & {"precision", "vram", "ram", "budget"}:
        import numpy as np

        ok = np.nonzero(~_among(t["binding"], BUILD_RULES))[0]
        split_lines: list[str] = []
        if len(ok):
            # the last of the most cards per node, then in all (a stable sort, as the table's rank breaks ties)
            most = t.row(int(ok[np.lexsort((t["cards_total"][ok], t["cards_per_node"][ok]))[-1]]))
            from planner.solve.shapes import pinned_split_lines

            split_lines = pinned_split_lines(cs, str(most["gpu_id"]), _node_max(cs, str(most["gpu_id"])))
            out += split_lines
        if len(ok) and not split_lines:
            out.append(f"allow more GPUs: the largest machine the constraints allow has {int(most['cards_per_node'])} "
                       f"x {most['gpu_id']} per node and {int(t['nodes'][ok].max())} node(s) (raise max_cards or "
                       "max_nodes, allow a platform with more slots, or lower gpus / tp)")
    if rules & {"deadline", "slo"}:
        out += _suggest_targets(cs, catalog, overheads)
    if "precision" in rules:
        out += _precision_suggestions(cs, catalog)
    if "budget" in rules:
        cheapest = float(t["capex_usd"][t["binding"] == "budget"].min())
        out.append(f"raise budget_usd to >= ${cheapest:,.2f} (the cheapest candidate that fits everything else)")
    return out


#: How a suggestion the memory model could not check begins (the text says why; the plan lists
#: these under their own heading).
UNCHECKED = "not checked with the memory model: "
#: What to change when GPUs lack a hardware feature the workloads' dtypes need.
PRECISION_CHANGES = {
    "bf16": "use recipe mixed-fp16 / pure-fp16, or weights and kv_dtype fp16 for inference",
    "fp8": "use weights int8 or bf16 and kv_dtype bf16, or engine: vllm (it runs fp8 weights and KV cache on "
           "16-bit GPUs, Ampere and newer)",
    "int8": "use weights bf16, fp16 or int4-awq",
    "llamacpp": "llama.cpp has no backend for them (Intel Gaudi): choose NVIDIA or AMD GPUs, or another engine",
    "flash_attention_2": "use attention: sdpa (flash-attn needs NVIDIA compute capability 8.0 or more, or AMD ROCm)",
}


def _precision_suggestions(cs: CandidateSet, catalog: Catalog) -> list[str]:
    """For each feature (bf16, fp8, int8, llamacpp) the workloads need and some refused GPU lacks: the change."""
    from planner.solve.usages import has_feature, precision_needs

    refused = sorted({str(x) for x in cs.table["gpu_id"][cs.table["binding"] == "precision"].tolist()})
    needs = sorted({f for sw in cs.scenario.workloads for v in sw.variants for f in precision_needs(v.workload)})
    out = []
    for feature in needs:
        lacking = [g for g in refused if not has_feature(catalog.gpu(g), feature)]
        if lacking:
            out.append(f"{UNCHECKED}on GPUs without {feature} ({', '.join(lacking)}), "
                       f"{PRECISION_CHANGES.get(feature, 'use a dtype they support')}")
    return out


#: Training levers a deadline miss tries on the closest machine (each checked with the memory and time
#: models): no recomputation (a third fewer FLOPs than checkpointing full), FP8 linear layers.
DEADLINE_LEVERS = ({"checkpointing": "none"}, {"recipe": "fp8"})
#: Weights a serving miss tries on the closest machine: fewer bytes read per decode step.
SLO_WEIGHTS = ("fp8", "int4-awq")


def _suggest_targets(cs: CandidateSet, catalog: Catalog, overheads: RuntimeOverheads | None) -> list[str]:
    """For a workload whose machines all hold it but miss its deadline or SLO: how far the closest
    is, how many more cards of it would make it (checked with the memory and time models), the
    levers that would (checkpointing none, fp8 for training; quantized weights for serving) and
    the loosest target the buildable machines meet."""
    import math

    import numpy as np

    from planner.memory import estimate as mem_estimate
    from planner.solve.candidates import _hw_row
    from planner.solve.shapes import pin_changes, pinned_clause, span, split
    from planner.solve.slo_fixes import built_within_budget
    from planner.solve.targets import pinned_rates, run_hours
    from planner.solve.usages import Usage

    t = cs.table
    out: list[str] = []
    cons = cs.scenario.constraints
    many = len(cs.scenario.workloads) > 1
    for w, sw in enumerate(cs.scenario.workloads):
        rule = "deadline" if sw.task == "train" else "slo"
        idx = np.nonzero((t["binding"] == rule) & (t["binding_workload"] == sw.name))[0]
        if idx.size == 0:
            continue
        pre = f"{sw.name}: " if many else ""
        budget = cons.budget_usd
        if budget is not None and (t["capex_usd"][idx] <= budget + 1e-9).any():
            idx = idx[t["capex_usd"][idx] <= budget + 1e-9]  # the closest machine the budget buys
        if rule == "deadline":
            limit = float(sw.deadline_hours or 0.0)
            hours = t["run_hours"][idx]
            row = int(idx[int(np.nanargmin(hours))])
        else:
            from planner.solve.serving import closest_slo_row

            row = closest_slo_row(cs, w, idx)  # graded, a split that falls behind by its overload
        u = cs.usages_of(row)[w]
        if u is None:
            continue
        r = t.row(row)
        gpu = cs.hardware.gpu_by_id[r["gpu_id"]]
        a = cs.hardware.arrays
        per_lane = float(a["per_lane"][_hw_row(cs, r)])
        cap = capacity_for(u.workload, gpu.cuda_total_bytes, cons.vram_headroom)
        node_cards = _node_max(cs, gpu.id)  # the most of this card a buildable node of the scenario holds
        v = sw.variants[u.variant_index]
        if rule == "deadline":
            got = float(r["run_hours"])
            pins = pinned_rates(cs.scenario, sw.name)
            n0 = u.gpus
            # more cards of the closest machine's GPU: data parallel speeds a run up about linearly; check it
            for n in sorted({math.ceil(n0 * got / limit), math.ceil(n0 * got / limit) + 1}):
                gpn = min(n, node_cards)
                n = -(-n // gpn) * gpn
                gpn, _ = split(n, node_cards, u.tp)
                wl = with_gpus(u.workload, n, gpn)
                est = mem_estimate(wl, overheads)
                if est.per_gpu_total_bytes > cap:
                    continue
                sp = span(cs, gpu.id, n, node_cards, u.tp)
                if sp.nodes > MAX_NODES:  # past the most nodes a scenario may allow: no fix to offer
                    break
                if built_within_budget(cs, gpu.id, n, node_cards, u.tp) is None:
                    continue  # a machine the constraints do not build (or the budget does not buy): no fix
                h = run_hours(Usage(w, u.variant_index, n, gpn, u.tp, wl, est), gpu, per_lane, pins)
                if h <= limit:
                    out.append(f"{pre}{n} x {gpu.id}: {duration_text(h)} per run, within the {limit:g} h deadline ("
                               f"{est.per_gpu_total_bytes / GiB:,.2f} GiB per GPU){sp.clause()}"
                               f"{pinned_clause(sw, n)}")
                    break
            for lever in DEADLINE_LEVERS:
                if budget is not None and float(r["capex_usd"]) > budget + 1e-9:
                    break  # a lever on a machine the budget does not buy is no fix
                key, value = next(iter(lever.items()))
                tr = u.workload.train
                if getattr(tr, key) == value or (key == "recipe" and not getattr(gpu, "fp8", False)):
                    continue
                wl = _workload_from(sw, v, catalog, {**lever, "gpus": u.gpus})
                if wl is None:
                    continue
                wl = with_gpus(wl, u.gpus, u.gpus_per_node)
                est = mem_estimate(wl, overheads)
                if est.per_gpu_total_bytes > cap:
                    continue
                h = run_hours(Usage(w, u.variant_index, u.gpus, u.gpus_per_node, u.tp, wl, est), gpu, per_lane, pins)
                if h <= limit:
                    out.append(f"{pre}{key}: {value} on {u.gpus} x {gpu.id}: {duration_text(h)} per run "
                               f"({est.per_gpu_total_bytes / GiB:,.2f} GiB per GPU){pin_changes(sw, v, lever)}")
            fastest = float(np.nanmin(t["run_hours"][idx]))
            within = budget is None or float(r["capex_usd"]) <= budget + 1e-9
            which = ("the constraints allow" if budget is None else f"within budget_usd ${budget:,.2f}" if within else
                     f"the other constraints allow (${float(r['capex_usd']):,.2f}, over budget_usd ${budget:,.2f}: "
                     "raise it too)")
            out.append(f"{pre}raise deadline_hours to >= {math.ceil(fastest * 10) / 10:g} h: the fastest machine "
                       f"{which} ({r['cards_total']} x {r['gpu_id']}) takes {duration_text(fastest)}")
            continue
        from planner.solve.slo_fixes import slo_fixes

        out += slo_fixes(cs, w, sw, v, u, row, node_cards, overheads, lambda upd: _workload_from(sw, v, catalog, upd),
                         SLO_WEIGHTS, pre)
    return out


def faster_cards(cs: CandidateSet, catalog: Catalog) -> list[str]:
    """Ids of the cards of the catalog the scenario's GPU constraints leave out on which a usage of
    every training workload with a deadline (as evaluated: the same strategies and GPU counts) fits
    memory and finishes one run within its deadline (its own PCIe link), cheapest first by the price
    of the fewest such cards (then the faster, then the id). Candidates only: planner.solve.replan_fixes
    re-plans each before it is offered (a platform's slots, power, lanes and count decide there)."""
    from planner.solve.targets import pinned_rates, run_hours

    cons = cs.scenario.constraints
    evaluated = {g.id for g in cs.hardware.gpus}
    timed = [(w, sw) for w, sw in enumerate(cs.scenario.workloads) if sw.task == "train" and sw.deadline_hours]
    ranked: list[tuple[float, float, str]] = []
    for g in catalog.gpus:
        if g.id in evaluated or g.price_usd is None or not any(_takes(p, g) for p in catalog.platforms):
            continue
        try:
            per_lane = catalog.pcie_gen(g.pcie_gen).per_lane_bytes_per_s
        except Exception:  # noqa: BLE001 - a card without a PCIe generation in the catalog: not timed
            continue
        worst: tuple[float, float] | None = (0.0, 0.0)
        for w, sw in timed:
            best: tuple[float, float] | None = None
            for u in cs.usages[w]:
                if u.gpus_per_node != u.gpus or any(not getattr(g, f, True) for f in u.needs
                                                    if f in ("bf16", "fp8", "int8")):
                    continue
                if u.need_bytes > capacity_for(u.workload, g.cuda_total_bytes, cons.vram_headroom):
                    continue
                h = run_hours(u, g, per_lane, pinned_rates(cs.scenario, sw.name))
                if h <= float(sw.deadline_hours) and (best is None or (u.gpus * g.price_usd, h) < best):
                    best = (u.gpus * g.price_usd, h)
            if best is None or worst is None:
                worst = None
                break
            worst = (max(worst[0], best[0]), max(worst[1], best[1]))
        if worst is not None and timed:
            ranked.append((worst[0], worst[1], g.id))
    return [gid for _, _, gid in sorted(ranked)]


def _node_max(cs: CandidateSet, gpu_id: str) -> int:
    t = cs.table
    sub = (t["gpu_id"] == gpu_id) & ~_among(t["binding"], NODE_RULES)
    return int(t["cards_per_node"][sub].max()) if sub.any() else 1


def _among(values: Any, names: Sequence[str]) -> Any:
    """A bool array: which of ``values`` (a text column) are one of ``names``."""
    import numpy as np

    wanted = set(names)
    return np.fromiter((v in wanted for v in values.tolist()), dtype=bool, count=len(values))


def _fmt(n: int | None) -> str:
    return "?" if n is None else f"{n / GiB:,.2f} GiB"


def _suggest_llamacpp(sw: ScenarioWorkload, v: Variant, catalog: Catalog, big: Any, cap: int, node_max: int,
                      where: str, overheads: RuntimeOverheads | None) -> list[str]:
    """What would fit an ``engine: llama.cpp`` workload on the largest card: leaving layers in host
    RAM (gpu_layers: max, with the RAM that takes), splitting the layers over more cards, a smaller
    GGUF preset or a quantized KV cache; each checked with the memory model."""
    from planner.solve.shapes import pin_changes

    out: list[str] = []
    inf = v.workload.infer
    assert inf is not None
    L = v.workload.architecture.num_hidden_layers
    if inf.gpu_layers is None:
        def make_l(x: int) -> Workload:
            w = _workload_from(sw, v, catalog, {"gpu_layers": x})
            assert w is not None  # every count 0..n_layer + 1 is valid
            return w
        best, need, _ = largest_gpu_layers(make_l, cap, L + 1, overheads)
        if best is not None:
            host = estimate(make_l(best), overheads).host_total_bytes
            on = where if inf.tp == 1 else f"{inf.tp} x {where}"
            out.append(f"gpu_layers: max (here {best} of {L + 1} layers on {on}, {_fmt(need)} per GPU; the rest "
                       f"in host RAM: {_fmt(host)} of RAM; decode then reads them at RAM speed)")
    for n in range(max(inf.tp, 1) + 1, node_max + 1):
        wn = _workload_from(sw, v, catalog, {"gpus": n})
        if wn is not None and fits(wn, cap, overheads)[0]:
            out.append(f"gpus: {n} (the layers split over {n} x {where}): "
                       f"{_fmt(fits(wn, cap, overheads)[1])} per GPU{pin_changes(sw, v, {'gpus': n})}")
            break
    for preset in ("Q4_K_M", "IQ3_M", "IQ2_M"):
        if preset == inf.weights:
            break
        wq = _workload_from(sw, v, catalog, {"weights": preset})
        if wq is not None and fits(wq, cap, overheads)[0]:
            out.append(f"weights: {preset} on {where}: {_fmt(fits(wq, cap, overheads)[1])} per GPU (lower quality)"
                       f"{pin_changes(sw, v, {'weights': preset})}")
            break
    if inf.kv_dtype == "f16":
        wk = _workload_from(sw, v, catalog, {"kv_dtype": "q8_0"})
        if wk is not None and fits(wk, cap, overheads)[0]:
            out.append(f"kv_dtype: q8_0 on {where}: {_fmt(fits(wk, cap, overheads)[1])} per GPU"
                       f"{pin_changes(sw, v, {'kv_dtype': 'q8_0'})}")
    return out


def _suggest_vram(sw: ScenarioWorkload, catalog: Catalog, big: Any, cap: int, node_max: int, cons: Any,
                  overheads: RuntimeOverheads | None, *, cs: CandidateSet) -> list[str]:
    """What would hold workload ``sw`` when it needs more VRAM than card ``big`` offers (``cap``
    bytes): changes on that card (training or inference levers), then a larger card."""
    out: list[str] = []
    v = sw.variants[0]
    w0 = v.workload
    where = (f"{big.id} ({_fmt(cap)} after {cons.vram_headroom:.0%} headroom)" if takes_headroom(w0) else
             f"{big.id} ({_fmt(cap)} CUDA total; vLLM's gpu_memory_utilization is the margin)")
    allowed_cards = (cons.max_cards or node_max) * cons.max_nodes
    if sw.task == "train":
        out += _suggest_vram_train(sw, v, catalog, big, cap, node_max, cons, overheads, where=where,
                                   allowed_cards=allowed_cards, cs=cs)
    else:
        out += _suggest_vram_infer(sw, v, catalog, big, cap, node_max, cons, overheads, where=where, cs=cs)
    out += _suggest_larger_card(sw, catalog, node_max, cons, overheads)
    return out


def _suggest_vram_train(sw: ScenarioWorkload, v: Variant, catalog: Catalog, big: Any, cap: int, node_max: int,
                        cons: Any, overheads: RuntimeOverheads | None, *, where: str,
                        allowed_cards: int, cs: CandidateSet) -> list[str]:
    """What would hold a training workload on ``big``: ZeRO-3 across more GPUs (the optimizer
    offloaded too; each count as the identical nodes the solver builds, planner.solve.shapes),
    checkpointing, a smaller micro-batch, QLoRA or LoRA."""
    from planner.solve.shapes import pin_changes, span, split

    out: list[str] = []
    w0 = v.workload
    fits_big = functools.partial(fits, gpu=big)  # vllm serve's settings on this card
    tr = w0.train
    assert tr is not None
    fixed = sw.gpus[0] if sw.gpus else None
    count = fixed or min(node_max, allowed_cards)
    gpn = min(count, node_max)
    # ZeRO-3 across more GPUs, without and with the optimizer offloaded
    plain_n = None
    for label, extra in (("ZeRO-3", {}), ("ZeRO-3 with offload_optimizer", {"offload_optimizer": True})):
        found = None
        for n in _ZERO3_COUNTS:
            per, _ = split(n, node_max, tr.tp)
            if n % tr.tp or per % tr.tp or per > node_max or (per == 1 < n and node_max > 1):
                # several nodes are identical, every card of each is used, a tp group in one node; one
                # card per node where a node holds more is left to the next count that fills them
                continue
            wz = _workload_from(sw, v, catalog, {"zero": 3, "gpus": n, **extra}, drop=("gpus_per_node",))
            if wz is None:
                continue
            wz = with_gpus(wz, n, per)
            ok, need = fits_big(wz, cap, overheads)
            if ok:
                found = (n, need)
                break
        if found and (plain_n is None or found[0] < plain_n):
            n, need = found
            if not extra:
                plain_n = n
            text = (f"{label} across >= {n} GPUs of {where}: {_fmt(need)} per GPU at {n}"
                    f"{span(cs, big.id, n, node_max, tr.tp).clause()}"
                    f"{pin_changes(sw, v, {'zero': 3, 'gpus': n, **extra}, drop=('gpus_per_node',))}")
            out.append(text)
    if tr.checkpointing == "none":
        wc = _workload_from(sw, v, catalog, {"checkpointing": "full", "gpus": count})
        if wc is not None:
            ok, need = fits_big(with_gpus(wc, count, gpn), cap, overheads)
            if ok:
                out.append(f"checkpointing: full on {count} x {where}: {_fmt(need)} per GPU"
                           f"{pin_changes(sw, v, {'checkpointing': 'full', 'gpus': count})}")
    # the levers that hold the parameters elsewhere: ZeRO-3 / FSDP with the parameters in host RAM
    # (ZeRO-Infinity; FSDP CPUOffload, the fsdp_qlora recipe for 70B on 2 x 24 GB)
    if not tr.offload_params:
        for label, extra in (("ZeRO-3 with offload_params", {"zero": 3, "offload_params": True,
                                                              "offload_optimizer": True}),
                             ("framework: fsdp with offload_params (FSDP CPU offload)",
                              {"framework": "fsdp", "zero": 3, "offload_params": True})):
            if tr.framework == "fsdp" and label.startswith("ZeRO"):
                continue
            wo = _workload_from(sw, v, catalog, {**extra, "gpus": count})
            if wo is None:
                continue
            ok, need = fits_big(with_gpus(wo, count, gpn), cap, overheads)
            if ok:
                out.append(f"{label} on {count} x {where}: {_fmt(need)} per GPU (the parameters cross PCIe "
                           f"every pass: slow){pin_changes(sw, v, {**extra, 'gpus': count})}")
                break
    if tr.seq_len > 256:
        # in steps of 128 tokens (the lengths people pack to)
        def make_sl(k: int, c: int = count) -> Workload | None:
            ww = _workload_from(sw, v, catalog, {"seq_len": 128 * k, "gpus": c})
            return None if ww is None else with_gpus(ww, c, min(c, node_max))
        best_k, need_sl, _ = largest_fitting(make_sl, cap, 1, (tr.seq_len - 1) // 128, overheads, gpu=big)
        if best_k:
            out.append(f"seq_len: {128 * best_k} (shorter sequences) on {count} x {where}: {_fmt(need_sl)} per GPU"
                       f"{pin_changes(sw, v, {'seq_len': 128 * best_k, 'gpus': count})}")
    if tr.micro_batch > 1:
        def make_mb(x: int, c: int = count) -> Workload | None:
            ww = _workload_from(sw, v, catalog, {"micro_batch": x, "gpus": c})
            return None if ww is None else with_gpus(ww, c, min(c, node_max))
        best, need, _ = largest_fitting(make_mb, cap, 1, tr.micro_batch - 1, overheads, gpu=big)
        if best:
            out.append(f"micro_batch: {best} (with grad_accum to keep the batch) on {count} x {where}: "
                       f"{_fmt(need)} per GPU{pin_changes(sw, v, {'micro_batch': best, 'gpus': count})}")
    methods = {"full": ("qlora", "lora"), "lora": ("qlora",)}.get(tr.method, ())
    for method in methods:
        name = "QLoRA" if method == "qlora" else "LoRA"
        for ckpt in dict.fromkeys((tr.checkpointing, "full")):
            wm = _workload_from(sw, v, catalog, {"method": method, "gpus": 1, "zero": 0,
                                                 "offload_optimizer": False, "checkpointing": ckpt},
                                drop=("recipe", "gpus_per_node", "offload_params"))
            if wm is None:
                continue
            ok, need = fits_big(wm, cap, overheads)
            if ok:
                how = " with checkpointing: full" if ckpt != tr.checkpointing else ""
                out.append(f"{name} (method: {method}){how} on 1 x {where}: {_fmt(need)} per GPU" + pin_changes(
                    sw, v, {"method": method, "gpus": 1, "zero": 0, "offload_optimizer": False, "checkpointing": ckpt},
                    drop=("recipe", "offload_params")))
                break
    return out


def _suggest_vram_infer(sw: ScenarioWorkload, v: Variant, catalog: Catalog, big: Any, cap: int, node_max: int,
                        cons: Any, overheads: RuntimeOverheads | None, *, where: str, cs: Any = None) -> list[str]:
    """What would hold an inference workload on ``big``: vLLM's gpu_memory_utilization, a larger tp,
    smaller weights or KV cache, chunked prefill, fewer sequences; llama.cpp's own levers. With an
    ``slo:`` a lever set is named only where replicas of it on a machine the constraints build
    (``cs``'s table) meet the slo (planner.solve.slo_fixes)."""
    from planner.solve.shapes import pin_changes, pinned_keys

    out: list[str] = []
    fits_big = functools.partial(fits, gpu=big)  # vllm serve's settings on this card
    from planner.solve.choices import valid_tp_degrees

    # the most the hardware can do as written: the largest allowed tp that fits a node
    v = max((x for x in sw.variants if x.tp <= node_max), key=lambda x: x.tp, default=v)
    w0 = v.workload
    inf = w0.infer
    assert inf is not None
    tried = {x.tp for x in sw.variants}
    if inf.engine == "vllm":
        # vLLM leaves 1 - gpu_memory_utilization of the card for the CUDA context and graphs; set
        # too high, that share is smaller than the context and vLLM does not start; set too low,
        # the weights and KV cache do not fit its share: try other values (at the scenario's
        # smallest tp)
        v1 = min(sw.variants, key=lambda x: x.tp)
        tp1 = v1.tp

        def make_u(util: float) -> Workload | None:
            wu = _workload_from(sw, v1, catalog, {"gpu_memory_utilization": util, "tp": tp1})
            return None if wu is None else with_gpus(wu, tp1, tp1)

        hit_u = utilization_that_fits(make_u, inf.gpu_memory_utilization, cap, overheads, gpu=big)
        if hit_u:
            was = ("the scenario pins" if "gpu_memory_utilization" in pinned_keys(v1) else "was")
            out.append(f"gpu_memory_utilization: {hit_u[0]:g} ({was} {inf.gpu_memory_utilization:g}) at tp {tp1} "
                       f"on {where}: {_fmt(hit_u[1])} per GPU")
    if inf.engine == "llama.cpp":
        out += _suggest_llamacpp(sw, v, catalog, big, cap, node_max, where, overheads)
    else:
        for tp in valid_tp_degrees(w0.architecture):
            ok, need = fits_big(with_gpus(w0, tp, tp), cap, overheads)
            if not ok:
                continue
            if tp in tried and tp <= node_max:
                break  # the scenario already allows it; something else binds
            text = f"tp: {tp} (one replica on {tp} x {where}): {_fmt(need)} per GPU{pin_changes(sw, v, {'tp': tp})}"
            if tp <= node_max:  # (a replica stays in one node: a tp past what a node holds is no fix)
                out.append(text)
            break
        # smaller formats at the fewest cards that hold them (tp up to the largest the node allows)
        tps = [x for x in valid_tp_degrees(w0.architecture) if x <= max(inf.tp, 1)]

        def first_fit(updates: dict[str, Any]) -> tuple[int, int] | None:
            for tp in tps:
                wq = _workload_from(sw, v, catalog, {**updates, "tp": tp})
                if wq is None:
                    continue
                ok, need = fits_big(with_gpus(wq, tp, tp), cap, overheads)
                if ok:
                    return tp, need
            return None

        from planner.solve.serve_levers import lever_sets, slo_words

        def timed(updates: dict[str, Any], tp: int) -> str:
            wq = _workload_from(sw, v, catalog, {**updates, "tp": tp})
            flags = pin_changes(sw, v, {**updates, "tp": tp})
            if wq is None or sw.slo is None:
                return flags
            wq = for_gpu(with_gpus(wq, tp, tp), big)
            met, words = slo_words(sw.slo, wq, lambda x: estimate(x, overheads), big, cap)
            if met:
                return words + flags
            if cs is not None:  # replicas share the users, as the solver would build them
                from planner.solve.slo_fixes import more_replicas

                more = more_replicas(cs, wq, sw.slo, big, node_max, overheads)
                if more:
                    return more + flags
            return None  # a set that still misses the slo is no fix

        out += lever_sets(sw, inf, big, where, first_fit, timed)
        if inf.max_num_batched_tokens is None and inf.context * inf.concurrency > 8192:
            wp = _workload_from(sw, v, catalog, {"max_num_batched_tokens": 8192, "tp": inf.tp})
            if wp is not None:
                ok, need = fits_big(wp, cap, overheads)
                if ok:
                    out.append(f"max_num_batched_tokens: 8192 (chunked prefill, as vLLM does) at tp {inf.tp} on "
                               f"{where}: {_fmt(need)} per GPU{pin_changes(sw, v, {'max_num_batched_tokens': 8192})}")
        if inf.concurrency > 1 and (sw.slo is None or sw.slo.requests_per_s is None):
            # (under requests_per_s the sequences follow the card, planner.solve.inflight: memory binds only
            # where one sequence does not fit, and a smaller rate is offered by planner.solve.slo_fixes)
            def make_c(x: int) -> Workload | None:
                return _workload_from(sw, v, catalog, {"concurrency": x, "tp": inf.tp})
            best, need, _ = largest_fitting(make_c, cap, 1, inf.concurrency - 1, overheads, gpu=big)
            if best and sw.slo is not None:
                # a smaller load is a fix only where one replica also meets the slo there: the most users
                # that do (the figures worsen with the users), each sized and timed as the solver checks it
                best, need = _most_users_meeting(sw.slo, make_c, best, big, cap, overheads)
            if best:
                from planner.solve.serve_levers import load_key

                out.append(f"{load_key(sw, best)} at context {inf.context:,} and tp {inf.tp} on {where}: "
                           f"{_fmt(need)} per GPU{pin_changes(sw, v, {'concurrency': best})}")
    return out


def _most_users_meeting(slo: Any, make_c: Any, hi: int, big: Any, cap: int,
                        overheads: RuntimeOverheads | None) -> tuple[int | None, int | None]:
    """The most users (at most ``hi``, which fit ``cap``) one replica of ``make_c(users)`` on ``big``
    serves while meeting ``slo`` (planner.solve.inflight.at_load at that concurrency), by bisection,
    and its need per GPU; (None, None) when not even one user meets it."""
    from dataclasses import replace

    from planner.solve.inflight import at_load

    def sized(x: int) -> Any:
        w = make_c(x)
        if w is None:
            return None
        s2 = replace(slo, concurrency=x)
        s = at_load(for_gpu(w, big), s2, big, cap, lambda z: estimate(z, overheads))
        return s if s.met(s2) else None

    top = sized(hi)
    if top is not None:
        return hi, top.estimate.per_gpu_total_bytes
    good, bad, at = 0, hi, None
    while bad - good > 1:
        mid = (good + bad) // 2
        s = sized(mid)
        good, bad, at = (mid, bad, s) if s is not None else (good, mid, at)
    if good == 0 or at is None:
        return None, None
    return good, at.estimate.per_gpu_total_bytes


def _suggest_larger_card(sw: ScenarioWorkload, catalog: Catalog, node_max: int, cons: Any,
                         overheads: RuntimeOverheads | None) -> list[str]:
    """The cheapest larger card of the catalog that holds the workload as written (and a platform
    takes), or nothing. For a workload with an ``slo:``, the cheapest such card whose one replica also
    meets the SLO (planner.solve.targets.slo_figures); when none does, the cheapest, said to miss."""
    out: list[str] = []
    v = sw.variants[0]
    # a larger card, as written (any GPU of the catalog that some platform takes): inference at the
    # scenario's smallest tensor-parallel degree, training at its first GPU count
    if sw.task != "train":
        v = min(sw.variants, key=lambda x: x.tp)
        w_written = with_gpus(v.workload, v.tp, v.tp)
    else:
        n0 = (sw.gpus or (1,))[0]
        w_written = with_gpus(v.workload, n0, min(n0, node_max))
    ests: dict[Any, Any] = {}  # by the card's vllm serve defaults (the need differs only there)

    def est_on(g: Any) -> Any:
        key = is_large_card(g)
        if key not in ests:
            ests[key] = estimate(for_gpu(w_written, g), overheads)
        return ests[key]

    def need_on(g: Any) -> int:
        return est_on(g).per_gpu_total_bytes

    placeable = []
    for g in catalog.gpus:
        if g.price_usd is None or capacity_for(w_written, g.cuda_total_bytes, cons.vram_headroom) < need_on(g):
            continue
        if any(_takes(p, g) for p in catalog.platforms):
            placeable.append(g)
    slo = getattr(sw, "slo", None)
    misses = ""
    if placeable and slo is not None:
        # a served workload with an slo: the cheapest larger card whose one replica meets it, timed as
        # the solver times a machine (planner.solve.targets.slo_figures); else the cheapest, said to miss
        from dataclasses import replace
        from types import SimpleNamespace

        from planner.solve.targets import figures_text, slo_figures

        def figures(g: Any) -> Any:
            if slo.requests_per_s is not None:  # the sequences in flight on this card (planner.solve.inflight)
                from planner.solve.inflight import at_load

                cap = capacity_for(w_written, g.cuda_total_bytes, cons.vram_headroom)
                s = at_load(for_gpu(w_written, g), slo, g, cap, lambda x: estimate(x, overheads))
                return s.figures if s.fits else replace(s.figures, keeps_up=False)
            return slo_figures(SimpleNamespace(workload=for_gpu(w_written, g), estimate=est_on(g)), slo, g)

        placeable.sort(key=lambda x: (x.price_usd, x.id))
        meeting = next((g for g in placeable if figures(g).met(slo)), None)
        if meeting is not None:
            placeable = [meeting]
        else:
            f = figures(placeable[0])
            misses = (f"; but one replica still misses the slo for {slo.load_text()}: "
                      f"{figures_text(f, slo, f.in_flight)}")
    if placeable:
        g = min(placeable, key=lambda x: (x.price_usd, x.id))
        allowed = {x.id for x in allowed_gpus(catalog, cons)}
        note = "" if g.id in allowed else " (not allowed by the scenario's GPU constraints)"
        at = f" at tp {v.tp}" if sw.task != "train" else ""
        after = "after headroom" if takes_headroom(w_written) else "(CUDA total)"
        out.append(f"a larger card as written: {g.id}, {_fmt(capacity_for(w_written, g.cuda_total_bytes, cons.vram_headroom))}"
                   f" {after} for {_fmt(need_on(g))} per GPU{at}, ${g.price_usd:,.0f} each{note}{misses}")
    return out


def _takes(p: Any, g: Any) -> bool:
    if g.form_factor not in p.form_factors or not cools(p, g):
        return False
    if p.fixed_gpu is not None:
        return p.fixed_gpu == g.id
    if g.form_factor == "pcie":
        return max_cards(p, g.slot_width or 1) >= 1
    return p.max_gpus >= 1


#: gpu_memory_utilization values tried, in this order, when a vLLM workload misses: vLLM's default
#: 0.9 first, then the nearest values either side (set too high, the CUDA context does not fit the
#: rest of the card; set too low, the weights and KV cache do not fit the share).
VLLM_UTILIZATIONS = (0.9, 0.85, 0.95, 0.8)


__all__ = ["PRECISION_CHANGES", "UNCHECKED", "VLLM_UTILIZATIONS", "fits", "largest_fitting", "largest_gpu_layers", "suggest",
           "utilization_that_fits"]
