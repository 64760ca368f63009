"""The plan's warnings: what to check before buying the machine the solver chose.

:func:`_warnings` gathers, for the chosen row (planner.solve.solver.choose): the workloads' and memory
estimates' own warnings, a quantization other than the first listed deciding the purchase, llama.cpp
layers left in host RAM (decode and prefill speed), QLoRA that fits only without
prepare_model_for_kbit_training, a card filled past its largest transient allocation
(fragmentation), RAM far above the VRAM (RAM set by the rule of thumb is the plan's
ram_rule note, planner.solve.ramrule), the network, the power at the
wall against common circuits, open-air cards side by side, unstated cooling, cards not bought for
want of a price, estimated and stale prices (:func:`stale_items`).

Never prints and never reads files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from planner.solve.candidates import (
    RAM_VRAM_HIGH,
    RAM_VRAM_HIGH_OFFLOAD,
    CandidateSet,
    Usage,
    capacity_for,
    ram_rule,
)
from planner.catalog.loader import Catalog
from planner.catalog.prices import used_price
from planner.memory import Estimate, estimate
from planner.memory.overheads import RuntimeOverheads
from planner.solve.quote import STALE_PRICE_MONTHS, LineItem
from planner.solve.scenario import Network
from planner.workload.spec import Workload

#: Board power from which several open-air cards side by side are warned about (their exhaust is
#: the next card's intake; an assumption from workstation builders' practice).
OPEN_AIR_HOT_W = 250

#: Continuous load a 120 V / 15 A branch circuit carries: 80 % of 1,800 W (US National Electrical
#: Code 210.19(A) and 210.20(A): continuous loads at 125 %, i.e. 80 % of the breaker rating).
WALL_CIRCUIT_W = 1440
#: Power supply efficiency assumed between the wall and the components, percent: 80 PLUS Gold
#: requires 90 % at half load on 115 V (80 PLUS program, CLEAResult); Platinum 92 %, Titanium 94 %.
PSU_EFFICIENCY_PCT = 90
#: The same for a 120 V / 20 A circuit: 80 % of 2,400 W.
WALL_CIRCUIT_20A_W = 1920
#: The same for a 240 V / 30 A circuit: 80 % of 7,200 W.
WALL_CIRCUIT_240V_30A_W = 5760


def _kbit_warnings(cs: CandidateSet, choice: dict[str, Any], workloads: Sequence[Workload],
                   overheads: RuntimeOverheads | None) -> list[str]:
    """QLoRA and 8-bit LoRA workloads that fit only because the plan assumes no
    prepare_model_for_kbit_training: peft's QLoRA and 8-bit guides call it, and it casts every
    non-quantized weight (embeddings, norms, LM head) to fp32
    (peft.utils.other.prepare_model_for_kbit_training)."""
    import dataclasses

    out: list[str] = []
    cuda_total = int(choice["gpu_cuda_total_bytes"])
    needs: dict[Workload, int] = {}  # the workload less its name -> its need: a repeated workload estimated once
    for sw, w in zip(cs.scenario.workloads, workloads):
        t = w.train
        if t is None or not t.quantized_base or t.prepare_kbit_training:
            continue
        kbit = dataclasses.replace(w, train=dataclasses.replace(t, prepare_kbit_training=True))
        nameless = dataclasses.replace(kbit, name="")
        need = needs.get(nameless)
        if need is None:
            need = needs[nameless] = estimate(kbit, overheads).per_gpu_total_bytes
        cap = capacity_for(w, cuda_total, cs.hardware.headroom)
        if need > cap:
            from planner.solve.suggest import _fmt  # here: a plan that fits imports suggest only to say this

            out.append(f"{sw.name}: fits only if the training script does not call peft's "
                       f"prepare_model_for_kbit_training (as peft's QLoRA and 8-bit guides do; it casts the non-quantized "
                       f"weights to fp32): with it the workload needs {_fmt(need)} per GPU of {_fmt(cap)}; set "
                       "prepare_kbit_training: true to plan for it")
    return out


def _fragmentation_warnings(cs: CandidateSet, choice: dict[str, Any], workloads: Sequence[Workload],
                            estimates: Sequence[Estimate]) -> list[str]:
    """Workloads the chosen card holds with less spare (beyond the headroom) than their largest
    transient allocation: the caching allocator's fragmentation can then fail a step although the
    plan fits (planner.memory.fragmentation; pytorch/pytorch#35901), with the expandable_segments
    hint. Only estimates that carry ``largest_transient_bytes`` (PyTorch's allocator: training and
    Transformers inference; not vLLM or llama.cpp)."""
    from planner.memory.fragmentation import fragmentation_risk

    out: list[str] = []
    cuda_total = int(choice["gpu_cuda_total_bytes"])
    for sw, w, est in zip(cs.scenario.workloads, workloads, estimates):
        need = est.per_gpu_total_bytes
        risk = fragmentation_risk(need=need, spare=capacity_for(w, cuda_total, cs.hardware.headroom) - need,
                                  transient=est.extra.get("largest_transient_bytes", 0))
        if risk:
            out.append(f"{sw.name}: {risk}")
    return out


def _precision_of(w: Workload) -> tuple[str, str] | None:
    """(weights, KV cache type) of an inference workload (KV as 'K/V' when they differ), else None."""
    i = w.infer
    if i is None:
        return None
    kv = i.kv_dtype if not i.kv_dtype_v else f"{i.kv_dtype}/{i.kv_dtype_v}"
    return i.weights, kv


def _quality_warnings(cs: CandidateSet, choice: dict[str, Any], usages: Sequence[Usage | None]) -> list[str]:
    """Inference workloads that run weights or a KV cache type other than the first their scenario
    lists: the capex objective buys the cheapest machine on which any listed variant fits, so a
    list (or ``auto``) lets a smaller quantization decide the purchase. Each warning names what
    runs, the first-listed pair, and the cheapest machine on which that pair fits (the same check,
    :func:`planner.solve.candidates.cheapest`, with only that pair's variants), or that none does."""
    from planner.solve.candidates import cheapest

    out: list[str] = []
    for w, (sw, u) in enumerate(zip(cs.scenario.workloads, usages)):
        if u is None or sw.task != "infer":
            continue
        first = _precision_of(sw.variants[0].workload)
        got = _precision_of(u.workload)
        if first is None or got == first:
            continue
        restricted = [list(us) if k != w else [x for x in us if _precision_of(x.workload) == first]
                      for k, us in enumerate(cs.usages)]
        row, ck = cheapest(cs.scenario, cs.hardware, restricted, cs.timing)
        objective = cs.objective
        how = ("the capex objective buys the cheapest machine any listed variant fits" if objective == "capex" else
               f"the {objective} objective buys the best machine by it that some listed variant fits")
        head = (f"{sw.name}: runs weights {got[0]} with a {got[1]} KV cache, not the first listed (weights "
                f"{first[0]}, KV {first[1]}): {how} and reports the first that fits there")
        if row is None:
            out.append(head + f"; weights {first[0]} with KV {first[1]} fit no allowed machine")
            continue
        a, hw = cs.hardware.arrays, cs.hardware
        gpu = hw.gpus[int(a["gpu_i"][row])].id
        plat = hw.platforms[int(a["plat_i"][row])].id
        usd = float(ck.capex[row])
        out.append(head + f"; weights {first[0]} with KV {first[1]} need {int(a['cards'][row])} x {gpu} on {plat} "
                          f"at ${usd:,.2f} ({usd - float(choice['capex_usd']):+,.2f} USD capex); list only the types "
                          "whose quality you accept, or set a budget")
    return out


def _speed_warnings(cs: CandidateSet, catalog: Catalog, choice: dict[str, Any],
                    usages: Sequence[Usage | None]) -> list[str]:
    """llama.cpp workloads that leave blocks in host RAM on the chosen machine: how fast they decode
    (tokens/s per sequence, the speed rule's figure, planner.speed.traffic) and how long their prompts
    take to prefill (the speed model's prefill, planner.speed.inference: the engine's GEMM rate, plus
    the PCIe upload of the host blocks' weights for every ubatch), so that a machine holding a third of
    the model is not bought unawares."""
    from planner.solve.rows import row_decode_tokens_per_s
    from planner.speed.inference import inference_speed
    from planner.speed.traffic import PCIE_EFFICIENCY, llamacpp_prefill_upload, ram_bandwidth

    out: list[str] = []
    gpu = catalog.gpu(choice["gpu_id"])
    plat = catalog.platform(choice["platform_id"])
    dimm = catalog.dimm(choice["dimm_id"]) if choice.get("dimm_id") else None
    floor = cs.scenario.constraints.min_decode_tokens_per_s
    for sw, u in zip(cs.scenario.workloads, usages):
        if u is None or u.decode is None or not u.decode.host_blocks:
            continue
        i = u.workload.infer
        assert i is not None
        tps = row_decode_tokens_per_s(u, gpu, plat, dimm) or 0.0
        gen = i.tokens_per_request
        prompt = i.prompt_tokens or (i.context - gen if gen is not None and gen < i.context else i.context)
        per_lane = min(catalog.pcie_gen(g).per_lane_bytes_per_s for g in (gpu.pcie_gen, plat.pcie_gen))
        n_ub, per_ub, _ = llamacpp_prefill_upload(u.estimate, u.workload.architecture, prompt * i.concurrency)
        upload_s = n_ub * per_ub / (per_lane * gpu.pcie_lanes * PCIE_EFFICIENCY)
        host_bw = ram_bandwidth(plat.memory_channels, dimm.speed_mts) if dimm is not None else None
        sp = inference_speed(u.workload, u.estimate, gpu, prompt_tokens=max(prompt, 1), output_tokens=max(gen or 1, 1),
                             per_lane=per_lane, lanes=gpu.pcie_lanes, host_bandwidth=host_bw)
        if sw.slo is not None:  # the rate the decode floor holds it to: 1 / the TPOT under its slo: load
            from planner.solve.targets import slo_figures

            tps = 1.0 / slo_figures(u, sw.slo, gpu, per_lane=per_lane, host_bandwidth=host_bw).tpot_s
        compute_s = sp.batch_prefill_s - upload_s
        L = u.workload.architecture.num_hidden_layers
        both = f" ({tps * i.concurrency:,.1f} for the {i.concurrency} together)" if i.concurrency > 1 else ""
        out.append(f"{sw.name}: {u.decode.host_blocks} of {L} blocks in host RAM on this machine: decode about "
                   f"{tps:,.1f} tokens/s per sequence{both}, and about {compute_s + upload_s:,.0f} s to prefill "
                   f"{i.concurrency} x {prompt:,} prompt tokens ({upload_s:,.0f} s of it the PCIe upload of the host "
                   "blocks' weights); "
                   + (f"constraints.min_decode_tokens_per_s {floor:g} holds" if floor else
                      "constraints.min_decode_tokens_per_s sets a floor on it")
                   + " ('planner compare' shows the arithmetic)")
    return out


def _ram_warnings(cs: CandidateSet, choice: dict[str, Any]) -> list[str]:
    """RAM far above the installed VRAM, said with its cause. (What the RAM-to-VRAM rule of thumb costs
    over RAM sized to the host peak is the plan's ``ram_rule`` note: planner.solve.ramrule.)"""
    out: list[str] = []
    if not choice.get("dimm_id"):
        return out
    offload = bool(choice["offload"])
    high = RAM_VRAM_HIGH_OFFLOAD if offload else RAM_VRAM_HIGH
    mult = ram_rule(cs.scenario.constraints, offload)
    key = "ram_vram_min_offload" if offload else "ram_vram_min"
    vram = int(choice["vram_node_bytes"])
    by_rule = math.ceil(mult * vram)
    host = int(choice["host_need_bytes"])
    ram = int(choice["ram_bytes"])
    if vram and ram / vram > high:
        need = max(host, by_rule)
        if need / vram > high:
            why = ("the memory model's host peak" if host >= by_rule else
                   f"the scenario's {key} ({mult:g}x)")
        else:
            from planner.solve.suggest import _fmt  # here: a plan that fits imports suggest only to say this

            why = (f"the smallest equal-DIMM configuration that holds {_fmt(need)} (the "
                   + ("host peak" if host >= by_rule else f"{mult:g}x rule") + ")")
        out.append(f"RAM is {ram / vram:.1f}x the installed VRAM (above the {high}x rule of thumb"
                   f"{' with offload' if offload else ''}), set by {why}")
    return out


def _warnings(cs: CandidateSet, catalog: Catalog, choice: dict[str, Any], usages: Sequence[Usage | None],
              workloads: Sequence[Workload], estimates: Sequence[Estimate], items: Sequence[LineItem],
              overheads: RuntimeOverheads | None = None) -> list[str]:
    out: list[str] = []
    for sw, w, est in zip(cs.scenario.workloads, workloads, estimates):
        for msg in dict.fromkeys(list(w.warnings) + list(est.warnings)):
            out.append(f"{sw.name}: {msg}")
        if w.infer is not None and w.infer.requests_per_hour:
            out.append(f"{sw.name}: requests_per_hour does not size this plan (memory only: it holds one replica); "
                       "'planner compare' times the workload and prices the copies of this machine the rate needs")
    out += _quality_warnings(cs, choice, usages)
    out += _speed_warnings(cs, catalog, choice, usages)
    out += _kbit_warnings(cs, choice, workloads, overheads)
    out += _fragmentation_warnings(cs, choice, workloads, estimates)
    out += _ram_warnings(cs, choice)
    cons = cs.scenario.constraints
    if int(choice["nodes"]) == 1 and cons.network != Network():
        why = "max_nodes is 1" if cons.max_nodes == 1 else "the plan is one node"
        out.append(f"constraints.network is not used: {why} (NICs and switches are bought for several nodes only)")
    out += unused_constraints(cs.scenario)
    if int(choice["nodes"]) > 1 and not choice["nic_id"]:
        from planner.solve.fabric import ONBOARD_WORDS

        unused = "; constraints.network is not used" if cons.network != Network() else ""
        out.append(f"{int(choice['nodes'])} nodes serve {ONBOARD_WORDS}: a load balancer spreads the requests over "
                   f"them (vLLM data parallel deployment){unused}")
    if int(choice["nodes"]) == 2 and choice["nic_id"] and not choice["switch_id"]:
        n = next((x for x in catalog.nics if x.id == choice["nic_id"]), None)
        ib = n is not None and n.kind == "infiniband"
        out.append("two nodes cabled back-to-back (NIC i of one node to NIC i of the other), no switch"
                   + ("; InfiniBand runs a subnet manager (opensm) on one of them" if ib else "")
                   + "; a third node needs a switch (network.switch: always prices one now)")
    dc = int(choice["power_w"])
    watts = -(-dc * 100 // PSU_EFFICIENCY_PCT)  # at the wall: the components' draw over the PSU's efficiency
    if watts > WALL_CIRCUIT_W:
        head = (f"each node draws up to {watts:,} W at the wall ({dc:,} W of GPUs at TDP, platform and NICs over a "
                f"{PSU_EFFICIENCY_PCT} % efficient supply): more than a 120 V / 15 A "
                f"outlet supplies continuously ({WALL_CIRCUIT_W:,} W, 80 % of 1,800 W)")
        if watts <= WALL_CIRCUIT_20A_W:
            tail = f"; plan a 120 V / 20 A ({WALL_CIRCUIT_20A_W:,} W) or 208-240 V circuit per node"
        elif watts <= WALL_CIRCUIT_240V_30A_W:
            tail = (f" or a 120 V / 20 A one ({WALL_CIRCUIT_20A_W:,} W); plan a 208-240 V circuit per node "
                    f"(240 V / 30 A carries {WALL_CIRCUIT_240V_30A_W:,} W)")
        else:
            tail = (f" or a 240 V / 30 A one ({WALL_CIRCUIT_240V_30A_W:,} W); plan a data-centre rack feed "
                    "(several 208-240 V circuits or a three-phase PDU) per node")
        out.append(head + tail)
    gpu = next(g for g in cs.hardware.gpus if g.id == choice["gpu_id"])
    plat = next(p for p in cs.hardware.platforms if p.id == choice["platform_id"])
    cards = int(choice["cards_per_node"])
    if gpu.cooling == "open-air" and cards >= 2 and gpu.tdp_w >= OPEN_AIR_HOT_W:
        out.append(f"{cards} open-air {gpu.id} cards of {gpu.tdp_w} W side by side: each blows its heat into the case "
                   "and onto its neighbour's intake; plan a case with strong front-to-back airflow, "
                   "or blower or liquid-cooled variants of the card")
    unstated = ([f"{gpu.id} states no cooling"] if gpu.cooling is None else []) + (
        [f"{plat.id} states no gpu_cooling"] if plat.gpu_cooling is None else [])
    if unstated:
        out.append(f"cooling not checked: {' and '.join(unstated)} (catalog fields cooling / gpu_cooling: a passive "
                   "data-centre card needs a server's airflow)")
    out += _unpriced_warnings(cs)
    est_items = [i.catalog_id or i.description for i in items if i.price_kind == "estimate"]
    if est_items:
        out.append("estimated prices (price_kind estimate; get a quote): " + ", ".join(dict.fromkeys(est_items)))
    ranged = [i.catalog_id or i.description for i in items if i.price_kind == "quote-range"]
    if ranged:
        out.append("sold on quotes only (price_kind quote-range: one figure within the range published figures give; "
                   "ask for a quote): " + ", ".join(dict.fromkeys(ranged)))
    old = [f"{i.catalog_id} ({i.as_of})" for i in stale_items(items, catalog)]
    if old:
        out.append(f"prices dated more than {STALE_PRICE_MONTHS} months before the catalog's newest entry: "
                   + ", ".join(dict.fromkeys(old)) + "; launch or list prices of older parts are not what they sell for "
                   "now: overlay a dated street price or quote (--catalog DIR)")
    return out


def _names(names: Sequence[str], most: int = 5) -> str:
    """Workload names for a warning: the first ``most``, then how many more."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most:,} more" if len(names) > most else "")


def unused_constraints(scenario: Any) -> list[str]:
    """The scenario-level constraints no workload is subject to, each a warning in the words of the unused
    ``constraints.network`` one: ``min_decode_tokens_per_s`` floors the decode speed of each inference workload
    (planner.solve.candidates), so it is unused when no workload serves; ``max_hours_per_job`` times one run of
    each training workload without ``deadline_hours`` of its own (planner.solve.scenario.load: those take it as
    their deadline), so it is unused when no workload trains or every training workload has a deadline of its
    own. A workload whose own deadline_hours equals max_hours_per_job counts as covered (the reader copies the
    constraint into the workloads it covers, so the two cannot be told apart; the deadline is the same). The
    workload-level counterparts are refused instead (planner.solve.slo: ``slo:`` on a training workload,
    ``deadline_hours`` on an inference one), as they name the workload they are written in."""
    cons = scenario.constraints
    out: list[str] = []
    serve = [sw.name for sw in scenario.workloads if sw.task == "infer"]
    train = [sw.name for sw in scenario.workloads if sw.task == "train"]
    if cons.min_decode_tokens_per_s is not None and not serve:
        out.append(f"constraints.min_decode_tokens_per_s is not used: no workload serves (it would cover the "
                   f"inference workloads; {_names(train)} {'trains' if len(train) == 1 else 'train'}, and a training "
                   "workload's time is deadline_hours or constraints.max_hours_per_job)")
    hours = cons.max_hours_per_job
    if hours is not None and not any(sw.task == "train" and sw.deadline_hours == hours for sw in scenario.workloads):
        if train:
            why = (f"each training workload ({_names(train)}) gives deadline_hours of its own (it would cover "
                   "the training workloads without one)")
        else:
            why = (f"no workload trains (it would cover the training workloads; {_names(serve)} "
                   f"{'serves' if len(serve) == 1 else 'serve'}, and a serving workload's speed is its slo: or "
                   "constraints.min_decode_tokens_per_s)")
        out.append(f"constraints.max_hours_per_job is not used: {why}")
    return out


def _unpriced_warnings(cs: CandidateSet) -> list[str]:
    """One warning naming the discontinued cards the plan did not consider for want of a price it
    pays, each with its used price and date (or none); the candidate table's ``price`` rows say
    it in full (planner.solve.rows.unpriced_reason)."""
    cons = cs.scenario.constraints
    out = [g for g in cs.hardware.gpus if g.price_usd is None and g.discontinued]
    if not out:
        return []
    parts = []
    for g in out:
        used = used_price(g.prices)
        parts.append(f"{g.id} (used_ok: true buys it used: {used.label()}, ${used.usd:,.2f})" if used and not cons.used_ok
                     else f"{g.id} (no used price either: overlay a dated quote)")
    return ["not bought: out of production, and price: street pays no launch list price (msrp) for a card no "
            "seller offers new (gpus.yaml discontinued): " + ", ".join(parts)]


def stale_items(items: Sequence[LineItem], catalog: Catalog) -> list[LineItem]:
    """Catalog line items whose price is dated more than :data:`STALE_PRICE_MONTHS` before the
    catalog's newest entry (launch prices of older cards are not what they sell for now)."""
    newest = max((_months(x.as_of) for x in catalog.sources), default=0)
    return [i for i in items if i.catalog_id and newest - _months(i.as_of) > STALE_PRICE_MONTHS]


def _months(as_of: str) -> int:
    """'YYYY-MM[-DD]' as a month count (0 when unreadable)."""
    try:
        y, m = as_of.split("-")[:2]
        return int(y) * 12 + int(m)
    except ValueError:
        return 0


__all__ = ["OPEN_AIR_HOT_W", "PSU_EFFICIENCY_PCT", "WALL_CIRCUIT_20A_W", "WALL_CIRCUIT_240V_30A_W", "WALL_CIRCUIT_W",
           "stale_items"]
