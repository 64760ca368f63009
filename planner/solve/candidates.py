"""Candidate machines for a scenario: every hardware configuration, its cost, and whether it fits.

One row per candidate: GPU type x cards per node x platform x RAM configuration x nodes, for
the strategy variants the scenario's workloads leave open. The memory model is run once per
(variant, GPU count), because memory depends on the strategy and the number of GPUs, not on
the GPU model or platform (those usages are planner.solve.usages'; the hardware rows and their
build checks, planner.solve.hardware's); everything else is vectorised
over the rows with numpy and handed over as one :class:`planner.core.table.Table` (numpy columns,
no pandas) whose columns are declared in :data:`COLUMNS`.

Feasibility rules, checked in this order; the first that fails is the row's ``binding``
constraint and ``why_not`` says it as a sentence with numbers:

=============  ==============================================================================
price          the GPU has a purchase price in the catalog the scenario's price mode pays (a
               discontinued card's launch list price is none under ``price: street``:
               :func:`unpriced_reason`)
form_factor    the platform takes the GPU's form factor (SXM/OAM modules only on platforms
               that list them); a baseboard with ``fixed_gpu`` carries exactly
               ``fixed_gpu_count`` of that GPU and nothing else
cooling        the platform's chassis cools the GPU's kind (``gpu_cooling`` lists the card's
               ``cooling``, :func:`planner.catalog.platforms.cools`): passive cards only in servers
max_cards      cards per node <= the scenario's ``max_cards`` (only binding for baseboards,
               whose count is fixed; other counts are not enumerated past ``max_cards``)
slots          cards <= what the platform's slots take at the card's width
               (:func:`planner.catalog.platforms.max_cards`; non-PCIe modules: ``max_gpus``); with
               several nodes, the node's NICs beyond the platform's ``nic_slots`` take a GPU
               slot each: cards + those NICs <= :func:`planner.catalog.platforms.slots_at`
lanes          cards x the lanes each card gets (+ the NICs outside ``nic_slots`` x their
               ``pcie_lanes``) <= the platform's ``gpu_lanes``: a card gets its full link unless
               the slot arrangement holding that many cards says ``lanes`` (an x16 slot split
               x8/x8, :func:`planner.catalog.platforms.card_lanes`)
power          cards x ``tdp_w`` + ``platform_w`` (+ the node's NICs x their ``tdp_w``) <= ``psu_w``
network        (several nodes, a training workload: planner.solve.fabric; served replicas need
               none) a NIC and a switch of the same kind, switch rate >= NIC rate,
               with enough ports for every NIC on one switch (multi-switch fabrics are not
               modelled); two nodes are cabled back-to-back without a switch unless the
               scenario's ``network.switch`` is ``always``
ram            the platform has a RAM configuration (below); per workload: RAM >= max(host
               RAM need of the workload, ``ram_vram_min`` x the node's installed VRAM, or
               ``ram_vram_min_offload`` x with offload; 2 and 6 by default, :func:`ram_rule`)
cards / tp     (per workload) the workload's GPU count fits the machine: a fixed ``gpus`` needs
               that many cards (several nodes only with every card of every node); a tensor-
               parallel group stays inside one node
precision      bf16 recipes, weights or KV cache need ``gpu.bf16``; fp8 weights or KV need
               ``gpu.fp8`` (with vLLM ``gpu.bf16``: Marlin W8A16); int8 weights need ``gpu.int8``;
               mxfp4 (gpt-oss) needs ``gpu.bf16``; fp16 and fp32 run everywhere; an ``engine:
               llama.cpp`` workload needs a GPU llama.cpp has a backend for (not Intel Gaudi)
speed          (with ``min_decode_tokens_per_s``) each inference workload decodes at least that
               many tokens per second per sequence on the row's GPU and RAM: 1 / the speed model's
               decode step (planner.speed.inference.decode_step, llama.cpp host blocks at the row's
               RAM bandwidth), or, with an ``slo:``, 1 / the TPOT the SLO is checked with
               (planner.solve.targets.slo_figures, the same figure the ``decode_tokens_per_s``
               column then shows); checked once VRAM and RAM fit
deadline       (a training workload with ``deadline_hours`` or ``constraints.max_hours_per_job``)
               one run takes at most that many hours on the row by the time model
               (planner.solve.targets.run_hours); checked once VRAM, RAM and speed hold
slo            (an inference workload with ``slo:``) its replicas meet TTFT and TPOT under the
               load on the row's GPU (planner.solve.targets.slo_figures); checked likewise
vram           per-GPU need (memory model, runtime overheads included) <= CUDA total x
               (1 - ``vram_headroom``), computed exactly as ``total - ceil(total x headroom)``; the
               CUDA total is nvidia-smi's less the driver's reservation (``Gpu.cuda_total_bytes``)
budget         capex (extras included) <= ``budget_usd``
=============  ==============================================================================

A workload fits a row when at least one of its variants does; the row reports the first
variant, in the scenario's order of preference, that fits (a served workload with an slo: the one
that meets it with the shortest request, the most tokens served: planner.solve.serving), or, when
none does, the one that came closest: the furthest down the list above, then the smallest shortfall. A scenario with
several workloads needs every workload to fit the same row (run one at a time).

RAM configurations: equal DIMMs of the platform's ``memory_kind``, filling every channel with one
or two DIMMs per channel, within ``dimm_slots`` and ``max_memory`` (configurations above the
platform's maximum are not built). "Installed VRAM" is cards per node x the GPU's marketed
``memory``. RAM above 4x the installed VRAM (8x with offload) is reported in ``ram_vram_ratio``.

Rows that fail a hardware rule (max cards, slots, lanes, power, network, no RAM configuration) are
listed once per (GPU, platform, cards[, nodes]) with the cheapest RAM configuration, not once per RAM
configuration: the RAM cannot make them buildable. GPU x platform pairs that can never combine are
summarised (issue 33), so that the table grows with the catalog, not with its square: a GPU without
a price is one row for every platform, and the GPUs a platform refuses by form factor or cooling one
row per platform and rule (its first GPU named, ``represents_count`` the pairs it stands for).

Multi-node rows (``max_nodes`` > 1): N identical nodes, plus, when a workload spans them (training;
served replicas never do, planner.solve.fabric), per node ``nics_per_node`` NICs
(default one per GPU) with one cable each, and one switch; the cheapest NIC and switch pair
(ties by ids) is chosen per (cards, nodes). Two nodes are cabled back-to-back instead (NIC i to
NIC i, one cable per pair, no switch) unless the scenario's ``network.switch`` is ``always``. Training shards over every card of every node;
inference runs a replica (tensor parallel inside one node) on one node; with an ``slo:``, replicas
fill every node (planner.solve.usages.fill).

Money is USD, sizes are bytes, power is watts. Importing this module does no work; numpy and
pandas are imported inside the functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from planner.catalog.loader import Catalog
from planner.catalog.platforms import card_lanes, slots_at
from planner.core.table import Table
from planner.core.units import duration_text
from planner.memory.overheads import RuntimeOverheads
from planner.solve.hardware import (  # noqa: F401  (re-exported: they were defined here)
    SUMMARY_NAMES,
    _HW_CODE,
    _HW_RULES,
    BUILD_RULES,
    NODE_RULES,
    RULES,
    Hardware,
    NetworkChoice,
    RamConfig,
    allowed_gpus,
    allowed_platforms,
    hardware,
    network_choice,
    nic_lanes,
    nic_load,
    ram_configs,
)
from planner.solve.fabric import needs_fabric
from planner.solve.serving import served_better
from planner.solve.rows import _hw_row, _target_columns, rows_decode_tokens_per_s, _fp8_compute, _gib, _never_reason, _slowest, _summary_tail, row_decode_tokens_per_s
from planner.solve.scenario import Scenario
from planner.workload.checks import flash_attention_2_gap
from planner.solve.targets import deadline_rows, pinned_rates, run_hours, slo_figures, slo_rows, timing_memo
from planner.solve.usages import (
    FLASH_FEATURE,
    LLAMACPP_FEATURE,
    TABLE_MAX_BYTES,
    Usage,
    capacity_bytes,
    capacity_for,
    has_feature,
    precision_needs,
    takes_headroom,
    usages_for,
    with_gpus,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pandas as pd

#: Column name -> unit and meaning. Names end in their unit.
COLUMNS: dict[str, str] = {
    "rank": "1-based position in the ranked table (feasible first, then by the solver's order)",
    "feasible": "bool: every rule holds for every workload",
    "binding": "the first rule that fails ('' when feasible); see the module docstring",
    "why_not": "that rule as a sentence with numbers ('' when feasible)",
    "binding_workload": "name of the workload the binding rule is about ('' for hardware rules)",
    "represents_count": ("count: GPU x platform pairs the row stands for: 1, or on a summary of pairs that can "
                         "never combine (binding price: one row per GPU for every platform; form_factor or "
                         "cooling: one row per platform for every GPU it refuses so)"),
    "gpu_id": "catalog GPU id",
    "gpu_vendor": "nvidia, amd or intel",
    "platform_id": "catalog platform id",
    "cards_per_node": "count: GPUs in each node",
    "nodes": "count: identical nodes",
    "cards_total": "count: cards_per_node x nodes",
    "gpu_memory_bytes": "bytes: memory of one GPU as marketed",
    "gpu_cuda_total_bytes": "bytes: memory one GPU offers to processes (CUDA's total: nvidia-smi's less the driver's reservation)",
    "gpu_capacity_bytes": ("bytes: what the tightest workload may use per GPU: the CUDA total less the scenario's "
                           "vram_headroom (engine: vllm workloads: the whole CUDA total, gpu_memory_utilization is "
                           "their margin)"),
    "per_gpu_need_bytes": "bytes: the memory model's per-GPU peak of the tightest workload's reported variant (held "
                          "at most 2^62, 4 EiB, more than any card: the table's int64 limit)",
    "decode_tokens_per_s": ("tokens/s per sequence: the slowest inference workload's decode on this row's GPU and "
                            "RAM (planner.speed.traffic; NaN without inference workloads)"),
    "deadline_hours": ("hours: the deadline of the training workload that comes closest to (or goes furthest past) "
                       "its deadline_hours or constraints.max_hours_per_job (blank: no deadline)"),
    "run_hours": ("hours: one run (dataset_tokens x epochs) of that workload on this row by the time model "
                  "(planner.solve.targets; blank where memory does not fit or no deadline)"),
    "target_ttft_s": "seconds: the first slo: workload's time-to-first-token target (blank: none)",
    "ttft_s": ("seconds: its time to first token on this row under the slo: load (planner.solve.targets; blank "
               "where memory does not fit or no slo:)"),
    "target_tpot_s": "seconds: its time-per-output-token target (1 / output_tokens_per_s; blank: none)",
    "tpot_s": "seconds: its time per output token on this row under the load (blank: not timed, or cannot keep up)",
    "headroom_bytes": "bytes: gpu_capacity_bytes - per_gpu_need_bytes, the least over the workloads (negative: "
                      "does not fit)",
    "strategy": "the variant each workload uses on this machine (or came closest with)",
    "offload": "bool: a reported variant keeps states or parameters in host RAM",
    "slot_width_slots": "slots: width of one card (0 for SXM/OAM modules)",
    "cards_fit_count": "count: most cards of this width the platform takes",
    "pcie_lanes_needed": ("lanes: cards_per_node x the lanes each card gets (its pcie_lanes, or its slots' narrower "
                          "link), plus the lanes of the NICs a node holds "
                          "beyond the platform's nic_slots"),
    "gpu_lanes": "lanes: the platform's CPU PCIe lanes for GPUs",
    "power_w": "watts: cards_per_node x tdp_w + platform_w + the node's NICs x their tdp_w",
    "psu_w": "watts: the platform's usable supply",
    "dimm_id": "catalog DIMM id ('' when the platform has no RAM configuration)",
    "dimms_per_channel": "count: 1 or 2",
    "dimm_count": "count: DIMMs per node",
    "ram_bytes": "bytes: RAM per node",
    "ram_max_bytes": "bytes: the platform's max_memory",
    "ram_required_bytes": "bytes: RAM per node the workloads need (largest over workloads)",
    "host_need_bytes": "bytes: the memory model's host RAM peak per node (largest over workloads)",
    "vram_node_bytes": "bytes: installed VRAM per node (cards_per_node x gpu_memory_bytes)",
    "ram_vram_ratio": "ratio: ram_bytes / vram_node_bytes (reported above 4, or 8 with offload)",
    "nic_id": "catalog NIC id ('' for one node)",
    "nic_count": "count: NICs in all nodes",
    "switch_id": "catalog switch id ('' for one node)",
    "switch_count": "count: switches (0 for two nodes cabled back-to-back)",
    "cable_count": "count: cables (one per NIC to the switch, or one per NIC pair between two nodes)",
    "gpu_price_usd": "USD: one GPU",
    "gpus_usd": "USD: every GPU of every node",
    "platform_usd": "USD: every node's platform (base price)",
    "ram_usd": "USD: every node's DIMMs",
    "network_usd": "USD: NICs, cables and switch",
    "extras_usd": "USD: the scenario's extras",
    "capex_usd": "USD: the purchase (gpus + platform + ram + network + extras)",
    "hours_per_job": ("hours: one run of every workload on this machine by the time model (planner.speed.timing; "
                      "a workload with an slo: counts one request at its load, 1 / the requests per second it "
                      "brings: planner.cost.slo_rent.at_load; blank where a workload gives no size or the plan was "
                      "not timed)"),
    "usd_per_job": ("USD: hours_per_job x the machine's cost per busy hour over the ownership period "
                    "(planner.cost.objective; blank where not timed)"),
    "tco_usd": ("USD: owning the machine over the ownership period: capex less resale, support, energy for the "
                "busy hours (planner.cost.objective; blank where not computed)"),
}


#: RAM per node at least planner.solve.scenario.RAM_VRAM_MIN (RAM_VRAM_MIN_OFFLOAD with offload) times the
#: installed VRAM by default (a scenario's ``ram_vram_min`` overrides them); above these figures is reported.
RAM_VRAM_HIGH = 4
RAM_VRAM_HIGH_OFFLOAD = 8

# Stages of a workload's check on a row (a higher stage got further).
_ST_ARRANGE, _ST_PRECISION, _ST_VRAM, _ST_RAM, _ST_SPEED, _ST_TIME, _ST_OK = 0, 1, 2, 3, 4, 5, 6


def ram_rule(constraints: Any, offload: bool) -> float:
    """The RAM-to-installed-VRAM multiple a node must reach: the scenario's ``ram_vram_min`` (or
    ``ram_vram_min_offload`` when a workload offloads to the CPU); defaults
    :data:`planner.solve.scenario.RAM_VRAM_MIN` and :data:`planner.solve.scenario.RAM_VRAM_MIN_OFFLOAD`, a rule of thumb from DL workstation sizing guides."""
    return float(constraints.ram_vram_min_offload if offload else constraints.ram_vram_min)


# ----- evaluation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class CandidateSet:
    """The candidate table of a scenario and what the solver needs to explain a row.

    Attributes:
        table: one row per candidate (:class:`planner.core.table.Table`, ``to_frame()`` for a
            pandas DataFrame), columns :data:`COLUMNS`, ranked (feasible first, then by capex,
            fewer cards, more headroom, ids), rows 0..n-1.
        usages: per workload, the usages evaluated (indices in ``best_usage`` refer to them).
        best_usage: int array (rows x workloads): the usage each workload uses on the row (the
            closest one when it does not fit), -1 when none can run on the row's card count.
        scenario: the scenario evaluated.
        hardware: the hardware rows.
        objective: what the feasible rows are ranked by: ``capex`` (this module's order) or the
            scenario objective planner.cost.objective re-ranked them by (its column first, then
            this module's order).
        timing: the deadline and SLO figures :func:`check` computed, per usage and GPU (its
            ``timing`` memo): a check of the same usages under other constraints (the RAM rule's
            note, the quality warnings) reuses them instead of timing every row again.
    """

    table: Table
    usages: tuple[tuple[Usage, ...], ...]
    best_usage: Any
    scenario: Scenario
    hardware: Hardware
    objective: str = "capex"
    timing: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def workload_index(self) -> dict[str, int]:
        """Workload name -> its index in the scenario (the first, as ``list.index`` finds it)."""
        out: dict[str, int] = {}
        for i, sw in enumerate(self.scenario.workloads):
            out.setdefault(sw.name, i)
        return out

    @cached_property
    def too_small(self) -> dict[str, str]:
        """GPU id -> :func:`too_small_text` of it, filled as rows are explained (a cache: the
        answer depends on the GPU alone)."""
        return {}

    @cached_property
    def job_time_memo(self) -> dict[tuple, Any]:
        """(the usage's key, GPU id, PCIe per-lane rate, lanes, pinned MFU, MBU) -> the speed model's
        JobTime (planner.cost.objective.job_times fills it: the answer depends on those alone, and
        the table repeats each GPU over many platforms and RAM sizes; the key is
        :attr:`planner.solve.usages.Usage.key`, or (workload index, usage index) without one)."""
        return {}

    def usages_of(self, row: int) -> list[Usage | None]:
        """The usage of each workload on table row ``row`` (None where none can run)."""
        return [self.usages[w][int(u)] if u >= 0 else None for w, u in enumerate(self.best_usage[row])]


def build(scenario: Scenario, catalog: Catalog, *, overheads: RuntimeOverheads | None = None,
          explain: bool = True, hw: Hardware | None = None) -> CandidateSet:
    """Enumerate and check every candidate for ``scenario``.

    Args:
        scenario: the validated scenario.
        catalog: the catalog it was validated against.
        overheads: runtime overheads for the memory model (None: default assumptions).
        explain: fill ``why_not`` (about 3 us per infeasible row); the solver explains only the
            rows it reports when False.
        hw: hardware rows from :func:`hardware` for the same constraints, to reuse.

    Returns:
        A :class:`CandidateSet`.
    """
    hw = hw or hardware(catalog, scenario.constraints, fabric=needs_fabric(scenario))
    cache: dict = {}
    shapes = hw.node_shapes()
    usages = tuple(tuple(usages_for(sw, i, node_shapes=shapes, max_cards_per_node=hw.max_cards_per_node,
                                    overheads=overheads, cache=cache, gpus=hw.gpus,
                                    headroom=scenario.constraints.vram_headroom))
                   for i, sw in enumerate(scenario.workloads))
    return evaluate(scenario, hw, usages, explain=explain)


@dataclass(frozen=True)
class _Checked:
    """The result of checking every workload's usages on every row (numpy arrays)."""

    best: Any        # (R, W) usage index per workload, -1 when none runs
    stage: Any       # (R, W) furthest stage reached
    need: Any        # (R, W) per-GPU need of the reported usage
    ram_req: Any     # (R, W) RAM the reported usage needs
    host: Any        # (R, W) host need of the reported usage
    offload: Any     # (R, W) reported usage offloads
    feasible: Any    # (R,)
    capex: Any       # (R,)
    headroom: Any    # (R,) the least capacity - need over the workloads
    cap_w: Any = None  # (R, W) capacity each workload is held against (no headroom for vLLM)
    tps: Any = None    # (R, W) decode tokens/s per sequence of the reported usage (NaN: not inference)
    hours: Any = None  # (R, W) hours of one run of a training workload with a deadline (NaN: not timed)
    ttft: Any = None   # (R, W) TTFT of an inference workload with an slo: under its load (NaN: not timed)
    tpot: Any = None   # (R, W) its time per output token (NaN: not timed)


def _usage_signature(us: Sequence[Usage]) -> tuple:
    """Everything :func:`check` reads of a workload's usages, in order: two workloads with the same
    signature (the same workload under two names) get the same columns. The decode figures are
    keyed by identity (:func:`usages_for` shares them between such workloads)."""
    return (bool(us) and takes_headroom(us[0].workload),
            tuple((u.gpus, u.gpus_per_node, u.vllm_card, u.need_bytes, u.host_bytes, u.offload, u.needs,
                   None if u.decode is None else id(u.decode), u.decode is not None and _fp8_compute(u.workload),
                   u.gpu_ids, u.exact, u.key)
                  for u in us))


def check(scenario: Scenario, hw: Hardware, usages: Sequence[Sequence[Usage]],
          timing: dict | None = None) -> _Checked:
    """Check every workload's usages against every hardware row (numpy, no DataFrame).

    A workload whose usages match an earlier one's (:func:`_usage_signature`) gets that one's
    columns, copied: the check is linear in the distinct workloads, then in the workloads.
    ``timing`` (:attr:`CandidateSet.timing`) keeps the deadline and SLO figures of each usage
    per GPU across checks of the same usages; None times afresh."""
    import numpy as np

    a = hw.arrays
    R = hw.rows
    cards, nodes = a["cards"], a["nodes"]
    cap, has_ram, ram_bytes, vram_node = a["cap"], a["has_ram"], a["ram_bytes"], a["vram_node"]
    W = len(usages)
    best = np.full((R, W), -1, dtype=np.int64)
    stage = np.zeros((R, W), dtype=np.int64)
    need = np.zeros((R, W), dtype=np.int64)
    ram_req = np.zeros((R, W), dtype=np.int64)
    host = np.zeros((R, W), dtype=np.int64)
    offl = np.zeros((R, W), dtype=bool)
    tps = np.full((R, W), np.nan)
    hours, ttft, tpot = np.full((R, W), np.nan), np.full((R, W), np.nan), np.full((R, W), np.nan)
    min_tps = scenario.constraints.min_decode_tokens_per_s
    single_rows, shape_rows = a["single_rows"], a["shape_rows"]
    empty = np.zeros(0, dtype=np.int64)
    # per workload: the capacity it is held against (vLLM workloads take no planning headroom)
    cap_w = np.zeros((R, W), dtype=np.int64)
    for w, us in enumerate(usages):
        cap_w[:, w] = cap if (not us or takes_headroom(us[0].workload)) else a["cuda_total"]
    done: dict[tuple, int] = {}  # usage signature -> the first workload column with it
    for w, us in enumerate(usages):
        sw = scenario.workloads[w]
        deadline = sw.deadline_hours if sw.task == "train" else None
        slo = sw.slo if sw.task == "infer" else None
        pins = pinned_rates(scenario, sw.name) if deadline is not None else (None, 0.0)
        first = done.setdefault((_usage_signature(us), deadline, slo, pins), w)
        if first != w:
            for arr in (best, stage, need, ram_req, host, offl, tps, hours, ttft, tpot):
                arr[:, w] = arr[:, first]
            continue
        capw = cap_w[:, w]
        b_stage = np.full(R, -1, dtype=np.int64)
        b_metric = np.full(R, np.iinfo(np.int64).max, dtype=np.int64)
        b_u = np.full(R, -1, dtype=np.int64)
        b_need, b_req, b_host = np.zeros(R, dtype=np.int64), np.zeros(R, dtype=np.int64), np.zeros(R, dtype=np.int64)
        b_off = np.zeros(R, dtype=bool)
        b_tps = np.full(R, np.nan)
        b_hours, b_ttft, b_tpot = np.full(R, np.nan), np.full(R, np.nan), np.full(R, np.nan)
        b_rs = np.full(R, np.inf)  # request seconds of the usage chosen where it meets the slo:
        for ui, u in enumerate(us):
            if u.gpus == u.gpus_per_node and not u.exact:
                idx = single_rows.get(u.gpus, empty)
            else:
                key = (u.gpus_per_node, u.gpus // u.gpus_per_node)
                idx = shape_rows.get(key)
                if idx is None:
                    idx = shape_rows[key] = np.nonzero((cards == key[0]) & (nodes == key[1]))[0]
            if u.vllm_card is not None:
                idx = idx[a["vllm_large"][idx] == (u.vllm_card == "large")]
            if u.gpu_ids is not None:  # a requests_per_s load: the GPUs that hold this usage's sequences
                idx = idx[np.isin(a["gpu_i"][idx], [k for k, g in enumerate(hw.gpus) if g.id in u.gpu_ids])]
            if idx.size == 0:
                continue
            cap_i = capw[idx]
            # the table is int64: a need past TABLE_MAX_BYTES (4 EiB, no card's) is held as that bound,
            # which fits nowhere either (the explanations give the exact figure from the Usage)
            need_u, host_u = min(u.need_bytes, TABLE_MAX_BYTES), min(u.host_bytes, TABLE_MAX_BYTES)
            vram_ok = need_u <= cap_i
            mult = ram_rule(scenario.constraints, u.offload)
            req = np.maximum(host_u, np.ceil(np.minimum(mult * vram_node[idx], TABLE_MAX_BYTES)).astype(np.int64))
            ram_i = ram_bytes[idx]
            ram_ok = vram_ok & has_ram[idx] & (ram_i >= req)
            # decode speed on each row's GPU and RAM (planner.speed.inference.decode_step), for the speed rule
            tps_i = rows_decode_tokens_per_s(u, a, idx)
            prec = np.ones(idx.size, dtype=bool)
            if u.needs:
                prec = a[u.needs[0]][idx]
                for feat in u.needs[1:]:
                    prec = prec & a[feat][idx]
            memo = timing_memo(timing, u, deadline, slo, pins)
            if slo is not None:
                # a workload with an slo: decodes, per user, at 1 / the TPOT its SLO is checked with (the
                # decode step stretched by the other users' prefills): one rate for the floor and the SLO
                sel = np.nonzero(ram_ok & prec)[0]
                tps_i[sel] = [1.0 / f.tpot_s if f.tpot_s > 0 else math.inf
                              for f in slo_rows(u, slo, hw, idx[sel], memo)]
            speed_ok = np.ones(idx.size, dtype=bool) if (min_tps is None or u.decode is None) else tps_i >= min_tps
            # the deadline or the service level (planner.solve.targets), timed where everything else holds
            time_ok = np.ones(idx.size, dtype=bool)
            late = np.zeros(idx.size, dtype=np.int64)
            hours_i, ttft_i, tpot_i = np.full(idx.size, np.nan), np.full(idx.size, np.nan), np.full(idx.size, np.nan)
            rs_i = np.full(idx.size, np.inf)
            if deadline is not None or slo is not None:
                timed = np.nonzero(ram_ok & speed_ok & prec)[0]
                if deadline is not None:
                    h = deadline_rows(u, hw, idx[timed], pins, memo)
                    hours_i[timed] = h
                    ok = ~np.isnan(h) & (h <= deadline * (1 + 1e-9))
                    time_ok[timed] = ok
                    # milli-hours past the deadline (no size to time it: the most)
                    over = np.nan_to_num(np.minimum((h - deadline) * 1000, 2**62), nan=2**62)
                    late[timed] = np.where(ok, 0, over.astype(np.int64))
                else:
                    figs = slo_rows(u, slo, hw, idx[timed], memo)
                    ttft_i[timed] = [f.ttft_s for f in figs]
                    tpot_i[timed] = [f.tpot_s for f in figs]
                    rs_i[timed] = [f.request_s for f in figs]
                    graded = {k: (f.met(slo), f.excess(slo)) for k, f in {id(f): f for f in figs}.items()}
                    ok = np.array([graded[id(f)][0] for f in figs], dtype=bool)
                    time_ok[timed] = ok
                    late[timed] = [0 if m else int(min(x * 1e6, 2**62)) for m, x in (graded[id(f)] for f in figs)]
            # stage: 2 (vram fails), 3 (ram fails), 4 (speed fails), 5 (deadline or slo fails) or 6 (fits);
            # 1 where the precision fails
            st = _ST_VRAM + vram_ok + ram_ok + (ram_ok & speed_ok) + (ram_ok & speed_ok & time_ok)
            st = np.where(prec, st, _ST_PRECISION)
            # how far off: bytes of GPU memory missing, else bytes of RAM missing, else milli-tokens/s
            # of decode speed missing, else milli-hours past the deadline or millionths over the SLO
            # (unused when it fits)
            # (without a speed rule every row passes it, and the metric never reads ``slow``)
            slow = late if min_tps is None else (np.nan_to_num(min_tps - tps_i) * 1000).astype(np.int64)
            metric = np.where(vram_ok, np.where(ram_ok, np.where(speed_ok, late, slow), req - ram_i), need_u - cap_i)
            cur = b_stage[idx]
            better = (cur < _ST_OK) & ((st > cur) | ((st == cur) & (metric < b_metric[idx])))
            if slo is not None:  # of the usages that meet the slo: on a row, the best (planner.solve.serving)
                better |= served_better(st == _ST_OK, cur == _ST_OK, rs_i, b_rs[idx], ttft_i, b_ttft[idx])
            if not better.any():
                continue
            sel = idx[better]
            b_stage[sel] = st[better]
            b_metric[sel] = metric[better]
            b_u[sel] = ui
            b_need[sel], b_req[sel], b_host[sel], b_off[sel] = need_u, req[better], host_u, u.offload
            b_tps[sel] = tps_i[better]
            b_hours[sel], b_ttft[sel], b_tpot[sel] = hours_i[better], ttft_i[better], tpot_i[better]
            b_rs[sel] = rs_i[better]
        best[:, w] = b_u
        stage[:, w] = np.maximum(b_stage, _ST_ARRANGE)
        need[:, w], ram_req[:, w], host[:, w], offl[:, w] = b_need, b_req, b_host, b_off
        tps[:, w] = b_tps
        hours[:, w], ttft[:, w], tpot[:, w] = b_hours, b_ttft, b_tpot
    wl_ok = (stage == _ST_OK).all(axis=1)
    extras_usd = float(sum(x.unit_price_usd * x.quantity for x in scenario.extras))
    capex = np.round(a["hw_usd"] + extras_usd, 2)
    budget = scenario.constraints.budget_usd
    feasible = (a["hw_code"] == 0) & wl_ok
    if budget is not None:
        feasible &= capex <= budget + 1e-9
    headroom = (cap_w - need).min(axis=1) if W else cap
    return _Checked(best, stage, need, ram_req, host, offl, feasible, capex, headroom, cap_w, tps, hours, ttft, tpot)


def rank_order(hw: Hardware, ck: _Checked, rows: Any = None) -> Any:
    """Row order: feasible first; then capex, fewer cards, more headroom, GPU id, platform id,
    fewer nodes, more RAM, fewer DIMMs (one per channel before two: faster and upgradable), DIMM
    id. This is a total order, so reports are diffable. ``rows`` restricts the sort to those row
    indices (returned in order)."""
    import numpy as np

    a = hw.arrays
    sel = slice(None) if rows is None else rows
    keys = [a["dimm_rank"][sel], a["dimm_count"][sel], -a["ram_bytes"][sel], a["nodes"][sel], a["plat_rank"][sel],
            a["gpu_rank"][sel], -ck.headroom[sel], (a["cards"] * a["nodes"])[sel], ck.capex[sel],
            ~ck.feasible[sel]]
    order = np.lexsort(keys)
    return order if rows is None else np.asarray(rows)[order]


def cheapest(scenario: Scenario, hw: Hardware, usages: Sequence[Sequence[Usage]],
             timing: dict | None = None) -> tuple[int | None, _Checked]:
    """The index of the best feasible hardware row (None when none), without building a table
    (``timing``: as :func:`check`'s)."""
    import numpy as np

    ck = check(scenario, hw, usages, timing)
    rows = np.nonzero(ck.feasible)[0]
    if rows.size == 0:
        return None, ck
    capex = ck.capex[rows]
    rows = rows[capex == capex.min()]  # the rest of the order only breaks ties
    return int(rank_order(hw, ck, rows)[0]), ck



def evaluate(scenario: Scenario, hw: Hardware, usages: Sequence[Sequence[Usage]], *,
             explain: bool = True, timing: dict | None = None) -> CandidateSet:
    """Check the usages of every workload against the hardware rows and build the ranked table.

    ``usages`` come from :func:`usages_for` (one sequence per workload, in order of preference);
    ``timing``: the :attr:`CandidateSet.timing` of an earlier check of the same usages, to reuse
    (None: a new memo, which the result keeps).
    """
    import numpy as np

    a = hw.arrays
    R = hw.rows
    timing = {} if timing is None else timing
    ck = check(scenario, hw, usages, timing)
    W = len(usages)
    gi, pi, ri, net_i = a["gpu_i"], a["plat_i"], a["ram_i"], a["net_i"]
    cards, nodes = a["cards"], a["nodes"]
    stage, best = ck.stage, ck.best
    hw_code = a["hw_code"]
    hw_ok = hw_code == 0
    wl_ok = (stage == _ST_OK).all(axis=1)
    budget_ok = ~(hw_ok & wl_ok) | ck.feasible
    # the binding workload: the first one that does not fit
    bind_w = np.where(wl_ok, -1, np.argmax(stage < _ST_OK, axis=1))
    bstage = np.where(bind_w >= 0, stage[np.arange(R), np.maximum(bind_w, 0)], _ST_OK)
    binding = np.full(R, "", dtype=object)
    hw_names = np.array([""] + list(_HW_RULES), dtype=object)
    binding[~hw_ok] = hw_names[hw_code[~hw_ok]]
    wl_names = np.array(["cards", "precision", "vram", "ram", "speed", "deadline", ""], dtype=object)
    m = hw_ok & ~wl_ok
    binding[m] = wl_names[bstage[m]]
    infer_w = np.array([sw.task == "infer" for sw in scenario.workloads] + [False], dtype=bool)
    binding[m & (bstage == _ST_TIME) & infer_w[bind_w]] = "slo"  # a serving workload's time target is its SLO
    min_tp = np.array([min(v.tp for v in sw.variants) for sw in scenario.workloads], dtype=np.int64)
    tp_fail = m & (bstage == _ST_ARRANGE) & (min_tp[np.maximum(bind_w, 0)] > cards)
    binding[tp_fail] = "tp"
    binding[~budget_ok] = "budget"
    names = [sw.name for sw in scenario.workloads]
    binding_workload = np.where(m, np.array([""] + names, dtype=object)[bind_w + 1], "")
    # strategy text: one label per distinct combination of usages
    codes = np.zeros(R, dtype=np.int64)
    for w in range(W):
        codes = codes * (len(usages[w]) + 1) + (best[:, w] + 1)
    uniq, inverse = np.unique(codes, return_inverse=True)
    texts = []
    for code in uniq:
        parts = []
        for w in reversed(range(W)):
            u = int(code % (len(usages[w]) + 1)) - 1
            code //= len(usages[w]) + 1
            lab = usages[w][u].label if u >= 0 else "no variant runs on this card count"
            parts.append(lab if W == 1 else f"{names[w]}: {lab}")
        texts.append("; ".join(reversed(parts)))
    strategy = np.array(texts, dtype=object)[np.asarray(inverse).reshape(-1)]
    # the tightest workload of each row: its need and the capacity it is held against
    if W:
        tight = (ck.cap_w - ck.need).argmin(axis=1)
        rows = np.arange(R)
        need_row, cap_row = ck.need[rows, tight], ck.cap_w[rows, tight]
    else:
        need_row, cap_row = np.zeros(R, dtype=np.int64), a["cap"]
    extras_usd = float(sum(x.unit_price_usd * x.quantity for x in scenario.extras))
    plat = hw.platforms

    def per_plat(attr: str) -> Any:
        return np.array([getattr(p, attr) for p in plat], dtype=np.int64)[pi]

    def ids(values: list[str]) -> Any:
        return np.array(values + [""], dtype=object)

    cols = {
        "rank": np.zeros(R, dtype=np.int64),
        "feasible": ck.feasible,
        "binding": binding,
        "why_not": np.full(R, "", dtype=object),
        "binding_workload": binding_workload,
        "represents_count": a["represents"],
        "gpu_id": ids([g.id for g in hw.gpus])[gi],
        "gpu_vendor": ids([g.vendor for g in hw.gpus])[gi],
        "platform_id": ids([p.id for p in plat])[pi],
        "cards_per_node": cards,
        "nodes": nodes,
        "cards_total": cards * nodes,
        "gpu_memory_bytes": a["mem"],
        "gpu_cuda_total_bytes": a["cuda_total"],
        "gpu_capacity_bytes": cap_row,
        "per_gpu_need_bytes": need_row,
        "decode_tokens_per_s": _slowest(ck.tps, R),
        **_target_columns(scenario, ck, R),
        "headroom_bytes": ck.headroom,
        "strategy": strategy,
        "offload": ck.offload.any(axis=1),
        "slot_width_slots": a["width"],
        "cards_fit_count": a["fit"],
        "pcie_lanes_needed": cards * a["lanes"] + a["nic_lanes"],
        "gpu_lanes": per_plat("gpu_lanes"),
        "power_w": cards * a["tdp"] + per_plat("platform_w") + a["nic_w"],
        "psu_w": per_plat("psu_w"),
        "dimm_id": ids([r.dimm.id for r in hw.ram])[ri],
        "dimms_per_channel": np.array([r.per_channel for r in hw.ram] + [0], dtype=np.int64)[ri],
        "dimm_count": a["dimm_count"],
        "ram_bytes": a["ram_bytes"],
        "ram_max_bytes": per_plat("max_memory_bytes"),
        "ram_required_bytes": ck.ram_req.max(axis=1),
        "host_need_bytes": ck.host.max(axis=1),
        "vram_node_bytes": a["vram_node"],
        "ram_vram_ratio": np.round(a["ram_bytes"] / np.maximum(a["vram_node"], 1), 3),
        "nic_id": ids([n.nic.id if n.nic else "" for n in hw.networks])[net_i],
        "nic_count": np.array([n.nic_count if n.nic else 0 for n in hw.networks] + [0], dtype=np.int64)[net_i],
        "switch_id": ids([n.switch.id if n.switch else "" for n in hw.networks])[net_i],
        "switch_count": np.array([n.switch_count for n in hw.networks] + [0], dtype=np.int64)[net_i],
        "cable_count": np.array([n.cables if n.nic else 0 for n in hw.networks] + [0], dtype=np.int64)[net_i],
        "gpu_price_usd": a["gpu_price"],
        "gpus_usd": a["gpus_usd"],
        "platform_usd": a["platform_usd"],
        "ram_usd": a["ram_usd"],
        "network_usd": a["network_usd"],
        "extras_usd": np.full(R, extras_usd),
        "capex_usd": ck.capex,
        # filled by planner.cost.objective (the time model lives in the cost stage)
        "hours_per_job": np.full(R, np.nan),
        "usd_per_job": np.full(R, np.nan),
        "tco_usd": np.full(R, np.nan),
    }
    order = rank_order(hw, ck)
    table = Table({k: v[order] for k, v in cols.items()}, length=R)
    table["rank"] = np.arange(1, R + 1)
    cs = CandidateSet(table, tuple(tuple(u) for u in usages), best[order], scenario, hw, timing=timing)
    if explain:
        fill_why_not(cs)
    return cs


# ----- explanations ----------------------------------------------------------------------------

class _Row:
    """Read access to one table row through its column arrays (no dict of the whole row)."""

    __slots__ = ("cols", "i")

    def __init__(self, cols: dict[str, Any], i: int) -> None:
        self.cols, self.i = cols, i

    def __getitem__(self, key: str) -> Any:
        return self.cols[key][self.i]


def _row_network(cs: CandidateSet, r: Any) -> NetworkChoice | None:
    """The network choice of a several-node row (None for one node)."""
    n = int(r["nodes"])
    if n <= 1:
        return None
    nics = (cs.scenario.constraints.network.nics_per_node or int(r["cards_per_node"])) * n
    return cs.hardware.network_by_shape.get((nics, n == 2))



def _columns(t: Table) -> dict[str, Any]:
    return {k: t[k] for k in t.columns}



def explain_row(cs: CandidateSet, row: int, cols: dict[str, Any] | None = None) -> str:
    """The why_not sentence of table row ``row`` ('' when feasible).

    Args:
        cs: the candidate set.
        row: a table index.
        cols: the table's columns as arrays (pass them when explaining many rows).
    """
    r = _Row(cols if cols is not None else _columns(cs.table), row)
    b = r["binding"]
    if not b:
        return ""
    hw = cs.hardware
    gpu = hw.gpu_by_id[r["gpu_id"]]
    plat = hw.platform_by_id[r["platform_id"]]
    c, n = int(r["cards_per_node"]), int(r["nodes"])
    gname = f"{c} x {gpu.id}"
    if b in ("price", "form_factor", "cooling"):
        return _never_reason(cs, b, gpu, plat) + _summary_tail(cs, b, gpu, plat, int(r["represents_count"]))
    if b == "max_cards":
        return (f"{plat.id} carries {c} GPUs; the scenario allows at most {cs.scenario.constraints.max_cards} "
                "per node")
    net = _row_network(cs, r)
    per_node, extra, nic_lane_total, nic_w = nic_load(gpu, plat, c, net, n) if net else (0, 0, 0, 0)
    in_slots = (f"{plat.id} has {plat.nic_slots} NIC slot{'s' if plat.nic_slots != 1 else ''}"
                if plat.nic_slots else f"{plat.id} has no slots for NICs besides the GPU slots")
    if b == "slots":
        width = f"{gpu.slot_width}-slot " if gpu.form_factor == "pcie" else ""
        if extra and net is not None and net.nic is not None:
            room = slots_at(plat, gpu.slot_width or 1) if gpu.form_factor == "pcie" else 0
            return (f"{gname} and {per_node} x {net.nic.id} NIC{'s' if per_node != 1 else ''} per node do not fit: "
                    f"{in_slots}, so {extra} NIC{'s take' if extra != 1 else ' takes'} a GPU slot, and its slots "
                    f"take at most {room} {width}card{'s' if room != 1 else ''} in all")
        n_fit = int(r["cards_fit_count"])
        return f"{gname} do not fit: {plat.id} takes at most {n_fit} {width}card{'s' if n_fit != 1 else ''}"
    if b == "lanes":
        link = card_lanes(plat, gpu, c, c + extra)
        each = f"{link}" + (f" (x{link} slots)" if link < gpu.pcie_lanes else "")
        if nic_lane_total and net is not None and net.nic is not None:
            return (f"{gname} need {c} x {each} PCIe lanes and the {extra} NIC{'s' if extra != 1 else ''} "
                    f"outside NIC slots {extra} x {nic_lane_total // extra} ({net.nic.id}): "
                    f"{int(r['pcie_lanes_needed'])} lanes; {plat.id} has {plat.gpu_lanes} for GPUs")
        return (f"{gname} need {c} x {each} = {int(r['pcie_lanes_needed'])} PCIe lanes; "
                f"{plat.id} has {plat.gpu_lanes} for GPUs")
    if b == "power":
        nics = (f" + {per_node} x {net.nic.tdp_w} W NICs" if nic_w and net is not None and net.nic is not None
                else "")
        return (f"{c} x {gpu.tdp_w} W + {plat.platform_w} W platform{nics} = {int(r['power_w']):,} W exceeds the "
                f"{plat.psu_w:,} W supply of {plat.id}")
    if b == "network":
        return f"{n} nodes: " + (net.problem if net is not None and net.nic is None else "no network fits")
    if b == "ram" and not r["dimm_id"]:
        return (f"{plat.id} has no RAM configuration: no {plat.memory_kind} DIMM fills its "
                f"{plat.memory_channels} channels within {plat.dimm_slots} slots and {_gib(plat.max_memory_bytes)}")
    if b == "budget":
        budget = cs.scenario.constraints.budget_usd or 0.0
        return (f"costs ${r['capex_usd']:,.2f}, ${r['capex_usd'] - budget:,.2f} over the "
                f"${budget:,.2f} budget")
    # workload rules
    w = cs.workload_index[r["binding_workload"]]
    sw = cs.scenario.workloads[w]
    u_i = int(cs.best_usage[row, w])
    u = cs.usages[w][u_i] if u_i >= 0 else None
    who = f"workload {sw.name}"
    if b == "tp":
        tp = min(v.tp for v in sw.variants)
        return f"{who}: tp={tp} needs {tp} GPUs in one node; the node has {c}"
    if b == "cards":
        has = f"{c}" if n == 1 else f"{c * n} ({n} nodes of {c})"
        if sw.gpus is not None:
            return (f"{who} runs on {' or '.join(map(str, sw.gpus))} GPUs (fixed by the scenario); the machine "
                    f"has {has}" + ("" if n == 1 or c * n not in sw.gpus else
                                    ", and its tensor-parallel group does not fit a node"))
        return f"{who} has no variant that runs on a machine of {has} GPUs"
    assert u is not None
    if b == "precision":
        missing = [f for f in u.needs if not has_feature(gpu, f)]
        if LLAMACPP_FEATURE in missing:
            return (f"{who} ({u.label}) runs on llama.cpp, which has no backend for {gpu.id} ({gpu.vendor} "
                    f"{gpu.architecture}; ggml runs on CUDA, HIP/ROCm and SYCL GPUs)")
        gap = flash_attention_2_gap(gpu) if FLASH_FEATURE in missing else None
        if gap and missing == [FLASH_FEATURE]:
            return f"{who} ({u.label}) uses attention: flash (FlashAttention-2), which cannot run on {gap}"
        return (f"{who} ({u.label}) needs {' and '.join(missing)} support; {gpu.id} ({gpu.architecture}) "
                "has none" + (f" (FlashAttention-2 cannot run on {gap})" if gap else ""))
    if b == "vram":
        if not takes_headroom(u.workload):
            cap = int(r["gpu_cuda_total_bytes"])
            return (f"{who} ({u.label}) needs {_gib(u.need_bytes)} per GPU; {gpu.id} offers {_gib(cap)} (its CUDA "
                    f"total; vLLM's gpu_memory_utilization is the margin), short by {_gib(u.need_bytes - cap)}")
        return (f"{who} ({u.label}) needs {_gib(u.need_bytes)} per GPU; {gpu.id} offers "
                f"{_gib(int(r['gpu_capacity_bytes']))} ({_gib(gpu.cuda_total_bytes)} CUDA total less "
                f"{cs.hardware.headroom:.0%} headroom), short by {_gib(u.need_bytes - int(r['gpu_capacity_bytes']))}")
    if b == "speed":
        floor = cs.scenario.constraints.min_decode_tokens_per_s
        host = (f" ({u.decode.host_blocks} blocks read from host RAM)" if u.decode is not None and u.decode.host_blocks
                else "")
        if sw.slo is not None:  # the rate the floor was held to: 1 / the TPOT under the slo: load
            hbw = float(cs.hardware.arrays["host_bw"][_hw_row(cs, r)]) if host else None
            f = slo_figures(u, sw.slo, gpu, per_lane=float(cs.hardware.arrays["per_lane"][_hw_row(cs, r)]) if hbw
                            else 0.0, host_bandwidth=hbw)
            return (f"{who} ({u.label}) decodes {1 / f.tpot_s:,.1f} tokens/s per user on {gpu.id}{host} (TPOT "
                    f"{f.tpot_s * 1e3:.3g} ms under its slo: load); constraints.min_decode_tokens_per_s asks for "
                    f"{floor:g}")
        dimm = next((rc.dimm for rc in hw.ram if rc.dimm.id == r["dimm_id"]), None)
        got = row_decode_tokens_per_s(u, gpu, plat, dimm) or 0.0
        return (f"{who} ({u.label}) decodes about {got:,.1f} tokens/s per sequence on {gpu.id}{host}; "
                f"constraints.min_decode_tokens_per_s asks for {floor:g}")
    if b == "deadline":
        hours = run_hours(u, gpu, float(cs.hardware.arrays["per_lane"][_hw_row(cs, r)]), pinned_rates(cs.scenario, sw.name))
        limit = float(sw.deadline_hours or 0.0)
        where = "deadline_hours" if cs.scenario.constraints.max_hours_per_job != limit else "max_hours_per_job"
        return (f"{who} ({u.label}) takes {duration_text(hours)} per run on {u.gpus} x {gpu.id}, {duration_text(hours - limit)} over "
                f"its {limit:g} h {where}")
    if b == "slo":
        slo = sw.slo
        assert slo is not None
        hbw = float(cs.hardware.arrays["host_bw"][_hw_row(cs, r)]) if u.decode is not None and u.decode.host_blocks \
            else None
        f = slo_figures(u, slo, gpu, per_lane=float(cs.hardware.arrays["per_lane"][_hw_row(cs, r)]) if hbw else 0.0,
                        host_bandwidth=hbw)
        from planner.solve.targets import figures_text

        return f"{who} ({u.label}) on {gpu.id}: {figures_text(f, slo, u.workload.infer.concurrency)}"
    if b == "ram":
        mult = ram_rule(cs.scenario.constraints, u.offload)
        vram = int(r["vram_node_bytes"])
        req = max(u.host_bytes, math.ceil(mult * vram))
        why = (f"{mult:g}x the {_gib(vram)} of installed VRAM" + (" with offload" if u.offload else "")
               if math.ceil(mult * vram) >= u.host_bytes else "the memory model's host peak")
        text = (f"{who} ({u.label}) needs {_gib(req)} of RAM per node ({why}); this configuration has "
                f"{_gib(int(r['ram_bytes']))}")
        largest = hw.largest_ram_bytes[plat.id]
        if req > plat.max_memory_bytes:
            text += f"; {plat.id} takes at most {_gib(plat.max_memory_bytes)}"
        elif req > largest:
            text += (f"; the largest equal-DIMM configuration of {plat.id} has {_gib(largest)} "
                     f"(max_memory {_gib(plat.max_memory_bytes)})")
        return text
    return b  # pragma: no cover


def fill_why_not(cs: CandidateSet, rows: Sequence[int] | None = None) -> None:
    """Write the why_not sentence of ``rows`` (default every infeasible row) into ``cs.table``."""
    import numpy as np

    t = cs.table
    if rows is None:
        rows = np.nonzero(~t["feasible"])[0].tolist()
    if not len(rows):
        return
    cols = _columns(t)
    why = t["why_not"]
    for i in rows:
        why[int(i)] = explain_row(cs, int(i), cols)


__all__ = ["COLUMNS", "RULES", "CandidateSet", "Hardware", "NetworkChoice", "RamConfig", "Usage", "build", "check",
           "cheapest", "rank_order",
           "capacity_bytes", "evaluate", "explain_row", "fill_why_not", "hardware", "network_choice",
           "has_feature", "precision_needs", "ram_configs", "usages_for", "with_gpus", "allowed_gpus", "allowed_platforms"]
