"""Choose the machine to buy: the cheapest candidate that runs every workload of a scenario.

Objective and constraints (written out before the code, as SkyPilot's ``_optimize_by_ilp``
does)::

    minimise   capex_usd(r) = nodes x (cards x gpu.price + platform.base_price
                                       + dimm_count x dimm.price)
                              + network(r) + sum(extras)
    over       r in R = GPU x cards per node x platform x RAM configuration x nodes
                        (planner.plan.candidates; nodes <= max_nodes, cards <= max_cards)
    subject to hardware(r): the GPU has a price; the platform takes its form factor (a
                  baseboard carries exactly its own GPUs); cards <= slots at the card's width;
                  cards x pcie_lanes <= gpu_lanes; cards x tdp_w + platform_w <= psu_w;
                  several nodes have a NIC + switch pair with enough ports;
               for every workload w: there is a variant v of w (its strategy choices) and a
                  GPU count g it may use on r such that
                    need(v, g) <= cuda_total x (1 - vram_headroom)      (per GPU, bytes)
                    the GPU supports v's precision (bf16 / fp8 / int8)
                    tp(v) divides the heads and fits inside one node
                    RAM(r) >= max(host_need(v, g), 2 x installed VRAM, 6 x with offload)
                    RAM(r) <= the platform's max_memory (configurations above it are not built)
               capex_usd(r) <= budget_usd (when given).

Each part's price is the one the scenario's price mode picks among its dated catalog prices
(planner.catalog.prices: ``price: street`` / ``msrp``, ``used_ok``). Other objectives
(``cost_per_job``, ``time_to_result``, ``tco``) re-rank the same feasible rows by the time and
ownership models in planner.cost.objective, which calls :func:`choose`; :func:`plan` itself
minimises capex and refuses them.

Workloads run one at a time, so the machine must satisfy each of them, not their sum. The
candidate space is small (thousands of rows), so it is enumerated in full and sorted; the
answer is exact. Ties are broken by fewer cards, then more per-GPU headroom (capacity minus
the tightest workload's need), then GPU id, platform id, fewer nodes, more RAM, fewer DIMMs and
DIMM id, so the order is total and reports are diffable.

When nothing is feasible :func:`plan` raises :class:`NoFeasiblePlan` (an
:class:`planner.core.errors.InfeasibleError`, exit code 1) whose message gives, for every rule that
bound, the candidate that missed by the least and by how much, and concrete changes that would
fit, each one checked with the memory model (ZeRO-3 across >= N GPUs, offload, checkpointing,
QLoRA or LoRA, a smaller micro-batch, more tensor parallelism, quantized weights or KV cache, a
larger card, a larger budget...): planner.plan.suggest finds them.

The solver never prints and never reads files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from planner.plan.candidates import (
    RAM_VRAM_HIGH,
    RAM_VRAM_HIGH_OFFLOAD,
    RULES,
    CandidateSet,
    Hardware,
    Usage,
    build,
    capacity_for,
    explain_row,
    fill_why_not,
    ram_rule,
)
from planner.catalog.loader import Catalog
from planner.catalog.prices import priced_catalog, used_price
from planner.core.errors import InfeasibleError
from planner.core.table import Table
from planner.memory import Estimate, estimate
from planner.memory.overheads import RuntimeOverheads
from planner.plan.quote import PARTS_SEPARATOR, STALE_PRICE_MONTHS, LineItem, price_of, subtotal_usd
from planner.plan.scenario import Network, Scenario
from planner.plan.suggest import _fmt, _standing_warnings, _why_notes, suggest
from planner.core.units import GiB
from planner.workload.spec import Workload

# Moved to planner.plan.suggest; importable from here as before.
from planner.plan.suggest import (  # noqa: F401
    PRECISION_CHANGES, VLLM_UTILIZATIONS, fits, largest_fitting, largest_gpu_layers, utilization_that_fits)

#: Columns of :attr:`Plan.alternatives`.
ALTERNATIVE_COLUMNS = ("rank", "gpu_id", "platform_id", "cards_per_node", "nodes", "dimm_id", "dimm_count",
                       "ram_bytes", "capex_usd", "hours_per_job", "usd_per_job", "tco_usd", "per_gpu_need_bytes",
                       "gpu_capacity_bytes", "headroom_bytes", "strategy", "why_lost")
#: Objective -> (its candidate column, how a worse value reads, unit); capex is the solver's own order.
OBJECTIVE_COLUMNS = {
    "capex": ("capex_usd", "costs ${d:,.2f} more", "USD"),
    "cost_per_job": ("usd_per_job", "costs ${d:,.2f} more per job (${row:,.2f} vs ${choice:,.2f})", "USD"),
    "time_to_result": ("hours_per_job", "takes {d:,.2f} h longer per job ({row:,.2f} h vs {choice:,.2f} h)", "h"),
    "tco": ("tco_usd", "costs ${d:,.2f} more to own ({row:,.2f} vs {choice:,.2f} USD over the ownership period)",
            "USD"),
}
#: Columns of :attr:`Plan.infeasible` (and :attr:`NoFeasiblePlan.summary`).
SUMMARY_COLUMNS = ("binding", "candidates", "closest", "shortfall", "shortfall_unit", "why_not")


@dataclass(frozen=True)
class Plan:
    """The recommendation for a scenario.

    Attributes:
        scenario: the scenario's name.
        choice: the chosen candidate row (column -> value, see planner.plan.candidates.COLUMNS).
        estimates: the memory model's result for each workload on the chosen machine, in the
            scenario's order.
        workloads: each workload as it runs there (strategy and GPU count fixed).
        strategies: the strategy of each workload, in words.
        items: the quote's line items (GPUs, platform, DIMMs, network, extras).
        total_usd: sum of the line items, USD (equals ``choice['capex_usd']``).
        alternatives: up to top_k runners-up (the best row of each other GPU model, then the chosen
            GPU's other chassis and RAM configurations; :func:`alternatives`), with why each lost
            (:data:`ALTERNATIVE_COLUMNS`).
        infeasible: per binding rule, how many candidates it excluded and the closest miss
            (:data:`SUMMARY_COLUMNS`).
        candidates: the whole ranked candidate table.
        The three tables are :class:`planner.core.table.Table` (numpy columns; ``to_frame()`` gives
        a pandas DataFrame).
        assumptions: catalog files and the sources of the entries used, recipe definitions,
            rules and their constants, the scenario file's sha256.
        warnings: things to check before buying.
    """

    scenario: str
    choice: dict[str, Any]
    estimates: tuple[Estimate, ...]
    workloads: tuple[Workload, ...]
    strategies: tuple[str, ...]
    items: tuple[LineItem, ...]
    total_usd: float
    alternatives: Table
    infeasible: Table
    candidates: Table
    assumptions: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def line_items(self) -> list[LineItem]:
        """The quote's line items: GPUs, platform(s), DIMMs, NICs/cables/switch, extras."""
        return list(self.items)


class NoFeasiblePlan(InfeasibleError):
    """Nothing fits. ``reasons`` has one sentence per binding rule; ``suggestions`` what would fit.

    Attributes:
        summary: the per-rule closest-miss table (:data:`SUMMARY_COLUMNS`).
        candidates: the ranked candidate table (every row infeasible), why_not filled.
        Both are :class:`planner.core.table.Table` (``to_frame()``: a pandas DataFrame).
        suggestions: changes that would fit, each checked with the memory model.
        assumptions: as :attr:`Plan.assumptions`.
        warnings: the workloads' warnings that hold on every machine evaluated ('name: text').
        outputs: the reports written for it (format -> path; planner.api.plan with ``out`` fills it:
            the candidate table and the reasons); removed: the stale reports of an earlier, feasible
            plan it removed from the same directory. Both empty when nothing was written.
    """

    def __init__(self, message: str, reasons: Sequence[str], *, scenario: str, summary: Any, candidates: Any,
                 suggestions: Sequence[str], assumptions: dict[str, Any], warnings: Sequence[str] = ()) -> None:
        super().__init__(message, reasons)
        self.scenario = scenario
        self.summary = summary
        self.candidates = candidates
        self.suggestions = list(suggestions)
        self.assumptions = assumptions
        self.warnings = list(warnings)
        self.outputs: dict[str, Any] = {}
        self.removed: list[Any] = []


# ----- the entry point -------------------------------------------------------------------------

def plan(scenario: Scenario, catalog: Catalog, top_k: int = 5, *, overheads: RuntimeOverheads | None = None,
         hardware: Hardware | None = None, explain: bool = True) -> Plan:
    """The cheapest machine that runs every workload of ``scenario`` (see the module docstring).

    Args:
        scenario: a validated scenario (planner.plan.scenario).
        catalog: the catalog it was validated against.
        top_k: how many alternatives to keep.
        overheads: runtime overheads for the memory model (None: default assumptions).
        hardware: hardware rows from :func:`planner.plan.candidates.hardware` to reuse.
        explain: fill why_not for every infeasible candidate (the CSV shows it); False saves
            time when only the choice is wanted.

    Returns:
        A :class:`Plan`.

    Raises:
        NoFeasiblePlan: nothing fits; the message explains why per rule and what would.
    """
    if top_k < 0:
        raise ValueError("top_k must be >= 0")
    if scenario.objective != "capex":
        raise ValueError(f"objective {scenario.objective!r} ranks the candidates by the time model: plan it with "
                         "planner.cost.objective.plan (this solver minimises capex)")
    catalog = priced_catalog(catalog, scenario.constraints.price, scenario.constraints.used_ok)
    cs = build(scenario, catalog, overheads=overheads, explain=explain, hw=hardware)
    return choose(cs, catalog, top_k=top_k, overheads=overheads)


def choose(cs: CandidateSet, catalog: Catalog, *, top_k: int = 5, overheads: RuntimeOverheads | None = None) -> Plan:
    """Pick the first feasible row of a ranked candidate table and describe it (or raise)."""
    import numpy as np

    t = cs.table
    feasible = np.nonzero(t["feasible"])[0]
    summary = infeasible_summary(cs)
    if len(feasible) == 0:
        raise _no_plan(cs, catalog, summary, overheads)
    row = int(feasible[0])
    choice = t.row(row)
    usages = [u for u in cs.usages_of(row)]
    assert all(u is not None for u in usages)
    # each usage's workload is on its final GPU count already, and so are its warnings (Workload.warnings)
    workloads = [u.workload for u in usages if u is not None]
    estimates = [u.estimate for u in usages if u is not None]
    items = line_items(cs, row, catalog)
    total = round(subtotal_usd(items), 2)
    if abs(total - float(choice["capex_usd"])) > 0.01:  # pragma: no cover - internal invariant
        raise AssertionError(f"line items {total} != capex {choice['capex_usd']}")
    alts = alternatives(cs, row, top_k)
    warnings = _warnings(cs, catalog, choice, usages, workloads, estimates, items, overheads)
    return Plan(scenario=cs.scenario.name, choice=choice, estimates=tuple(estimates), workloads=tuple(workloads),
                strategies=tuple(u.label for u in usages if u is not None), items=tuple(items), total_usd=total,
                alternatives=alts, infeasible=summary, candidates=t,
                assumptions={**assumptions(cs, catalog, row, usages, overheads),
                             "stale_prices": {"catalog_ids": list(dict.fromkeys(i.catalog_id
                                                                               for i in stale_items(items, catalog))),
                                              "months": STALE_PRICE_MONTHS}},
                warnings=tuple(warnings))


# ----- line items ------------------------------------------------------------------------------

def _parts(platform: Any) -> str:
    """The parts a platform's price is made of, as its catalog notes list them ('Parts: A $x + B $y
    = $z'), for the quote line ('' when the notes list none)."""
    notes = platform.notes or ""
    # up to '= $<the platform's price>' (a part may itself show a sum: '2 x $3,420 = $6,840 + ...')
    total = re.escape(f"${platform.base_price_usd:,.0f}")
    m = (re.search(rf"Parts:\s*(.+?)\s*=\s*{total}(?![\d,])", notes, re.S)
         or re.search(r"Parts:\s*(.+?)\s*=\s*\$[\d,]+", notes, re.S))
    return f"{PARTS_SEPARATOR}{' '.join(m.group(1).split())}" if m else ""


def _gpu_form(gpu: Any, plat: Any) -> str:
    """What the quote line of a GPU must say for the machine to be built as planned: the slot width
    and cooling the plan assumed (a partner card of the same GPU may be wider or cooled otherwise),
    or that baseboard modules come with their server."""
    if plat.fixed_gpu is not None:
        return f" (on the {plat.id} baseboard: ordered with the server)"
    if gpu.form_factor != "pcie":
        return ""
    parts = [f"{gpu.slot_width}-slot" if gpu.slot_width else "", gpu.cooling or ""]
    text = " ".join(x for x in parts if x)
    if not text:
        return ""
    wider = "; partner cards are often wider" if gpu.segment == "consumer" else ""
    return f" ({text}, as planned{wider})"


def line_items(cs: CandidateSet, row: int, catalog: Catalog) -> list[LineItem]:
    """The quote of table row ``row``: GPUs, platform(s), DIMMs, NICs + cables + switch, extras."""
    r = cs.table.row(row)
    # the parts as the candidates priced them (the scenario's price mode: planner.catalog.prices)
    gpu = next(g for g in cs.hardware.gpus if g.id == r["gpu_id"])
    plat = next(p for p in cs.hardware.platforms if p.id == r["platform_id"])
    nodes = int(r["nodes"])
    gkind, gcond, gsource, gdate = price_of(gpu)
    pkind, pcond, psource, pdate = price_of(plat)
    items = [
        LineItem(gpu.name + (" (used)" if gcond == "used" else "") + _gpu_form(gpu, plat), "gpu", gpu.id,
                 float(gpu.price_usd or 0.0), int(r["cards_total"]), gkind, gsource, gdate, gcond),
        LineItem(f"{plat.name}" + (" (used)" if pcond == "used" else "") + ": CPU, board, case, PSU, boot storage "
                 "(no GPUs, no RAM)" + _parts(plat), "platform", plat.id, float(plat.base_price_usd), nodes, pkind,
                 psource, pdate, pcond),
    ]
    if r["dimm_id"]:
        d = next((x.dimm for x in cs.hardware.ram if x.dimm.id == r["dimm_id"]), None) or catalog.dimm(r["dimm_id"])
        per = int(r["dimms_per_channel"])
        dkind, dcond, dsource, ddate = price_of(d)
        # DIMMs are sold as '48GB' for 48 GiB; two per channel usually run below the rated speed
        items.append(LineItem(f"{d.size_bytes / GiB:g}GB {d.kind.upper()}-{d.speed_mts} module ({d.size_bytes / GiB:g} "
                              f"GiB; {per} per channel" + (", may run below its rated speed" if per > 1 else "") + ")"
                              + (" (used)" if dcond == "used" else ""),
                              "memory", d.id, float(d.price_usd), int(r["dimm_count"]) * nodes, dkind, dsource,
                              ddate, dcond))
    if r["nic_id"]:
        n = catalog.nic(r["nic_id"])
        count = int(r["nic_count"])
        items.append(LineItem(f"{n.id} {n.kind} NIC, {n.rate_bytes_per_s * 8 / 1e9:g} Gb/s", "network", n.id,
                              float(n.price_usd), count, n.price_kind, n.source, n.as_of))
        direct = not r["switch_id"]
        items.append(LineItem((f"node-to-node cable or optics for {n.id} (back-to-back, no switch)" if direct else
                               f"node-to-switch cable or optics for {n.id}"), "network", n.id,
                              float(n.cable_price_usd), int(r["cable_count"]), n.price_kind, n.source, n.as_of))
    if r["switch_id"]:
        s = catalog.switch(r["switch_id"])
        items.append(LineItem(f"{s.id} {s.kind} switch, {s.ports} x {s.rate_bytes_per_s * 8 / 1e9:g} Gb/s",
                              "network", s.id, float(s.price_usd), int(r["switch_count"]), s.price_kind, s.source,
                              s.as_of))
    for x in cs.scenario.extras:
        items.append(LineItem(x.description, x.category, "", float(x.unit_price_usd), x.quantity, x.price_kind,
                              x.source, x.as_of))
    return items


# ----- alternatives and the infeasible summary -------------------------------------------------

def why_lost(row: dict[str, Any], choice: dict[str, Any], objective: str = "capex") -> str:
    """Why a feasible row ranks below the choice: the objective's column, then the solver's order of keys."""
    if objective != "capex":
        col, text, _ = OBJECTIVE_COLUMNS[objective]
        a, b = float(row[col]), float(choice[col])
        if a - b > 1e-6 * max(abs(b), 1.0):
            return text.format(d=a - b, row=a, choice=b)
        lead = {"time_to_result": "as fast"}.get(objective, "same " + objective.replace("_", " "))
        d = float(row["capex_usd"]) - float(choice["capex_usd"])
        return (f"{lead}; " + why_lost(row, choice)) if d > 0.005 or d < -0.005 else why_lost(row, choice)
    d = float(row["capex_usd"]) - float(choice["capex_usd"])
    if d > 0.005:
        return f"costs ${d:,.2f} more"
    if row["cards_total"] > choice["cards_total"]:
        return f"same price, more cards ({row['cards_total']} vs {choice['cards_total']})"
    if row["headroom_bytes"] < choice["headroom_bytes"]:
        return (f"same price and cards, less headroom ({row['headroom_bytes'] / GiB:,.2f} GiB vs "
                f"{choice['headroom_bytes'] / GiB:,.2f} GiB)")
    return "same price, cards and headroom; ordered by GPU id, platform id, nodes, RAM, DIMMs"


def alternatives(cs: CandidateSet, row: int, top_k: int) -> Any:
    """Up to ``top_k`` runners-up, the other GPU models first, then variations of the choice.

    First the best feasible row (by the table's rank, i.e. the scenario's objective) of each GPU model
    other than the chosen one, best first, one row per model; then, while fewer than ``top_k`` are
    listed, the best row of each other chassis and RAM configuration of the chosen GPU (platform, cards
    per node, nodes, DIMM type and count), in rank order.
    """
    import numpy as np

    t = cs.table
    gpu = t["gpu_id"]
    config_cols = [t[k] for k in ("platform_id", "cards_per_node", "nodes", "dimm_id", "dimm_count")]
    feasible = np.nonzero(t["feasible"])[0]
    picked: list[int] = []
    models = {gpu[row]}
    for i in feasible:
        if len(picked) >= top_k:
            break
        if gpu[i] not in models:
            models.add(gpu[i])
            picked.append(int(i))
    seen = {tuple(c[row] for c in config_cols)}
    for i in feasible:
        if len(picked) >= top_k:
            break
        if gpu[i] != gpu[row]:
            continue
        k = tuple(c[i] for c in config_cols)
        if k in seen:
            continue
        seen.add(k)
        picked.append(int(i))
    if not picked:
        return Table.from_records([], ALTERNATIVE_COLUMNS)
    out = t.take(picked).select(list(ALTERNATIVE_COLUMNS[:-1]))
    cd = t.row(row)
    out["why_lost"] = [why_lost(t.row(i), cd, cs.objective) for i in picked]
    return out


_SHORTFALL = {
    "vram": (("per_gpu_need_bytes", "gpu_capacity_bytes"), "bytes"),
    "ram": (("ram_required_bytes", "ram_bytes"), "bytes"),
    "slots": (("cards_per_node", "cards_fit_count"), "cards"),
    "lanes": (("pcie_lanes_needed", "gpu_lanes"), "lanes"),
    "power": (("power_w", "psu_w"), "W"),
    "speed": None,  # min_decode_tokens_per_s - decode_tokens_per_s, tokens/s (infeasible_summary)
}


def infeasible_summary(cs: CandidateSet) -> Any:
    """Per binding rule: how many candidates it excluded and the one that missed by the least
    (a :class:`planner.core.table.Table` with :data:`SUMMARY_COLUMNS`, one row per rule that binds)."""
    import numpy as np

    t = cs.table
    binding = t["binding"]
    out = []
    budget = cs.scenario.constraints.budget_usd
    for rule in RULES:
        idx = np.nonzero(binding == rule)[0]
        if idx.size == 0:
            continue
        if rule == "speed":
            floor = cs.scenario.constraints.min_decode_tokens_per_s or 0.0
            short, unit = floor - t["decode_tokens_per_s"][idx], "tokens/s"
        elif rule in _SHORTFALL:
            (a, b), unit = _SHORTFALL[rule]
            short = t[a][idx] - t[b][idx]
            if rule == "ram":  # platforms without any RAM configuration: nothing to compare
                short = np.where(t["dimm_id"][idx] != "", short, 0)
        elif rule == "budget":
            short, unit = t["capex_usd"][idx] - (budget or 0.0), "USD"
        elif rule in ("cards", "tp"):  # cards the binding workload needs (in one node for tp) less those offered
            need = {sw.name: (min(sw.gpus) if rule == "cards" and sw.gpus else min(v.tp for v in sw.variants))
                    for sw in cs.scenario.workloads}
            wanted = np.array([need.get(w, 0) for w in t["binding_workload"][idx]], dtype=float)
            col = "cards_total" if rule == "cards" else "cards_per_node"
            short, unit = wanted - t[col][idx], "cards"
        else:
            short, unit = np.zeros(idx.size), ""
        j = int(np.argmin(short))  # the first of the smallest, in rank order
        r = int(idx[j])
        row = t.row(r)
        closest = f"{int(row['cards_per_node'])} x {row['gpu_id']} on {row['platform_id']}"
        if int(row["nodes"]) > 1:
            closest += f" x {int(row['nodes'])} nodes"
        if rule in ("ram", "budget") and row["dimm_id"]:
            closest += f", {int(row['dimm_count'])} x {row['dimm_id']}"
        out.append({"binding": rule, "candidates": int(idx.size), "closest": closest, "shortfall": float(short[j]),
                    "shortfall_unit": unit, "why_not": row["why_not"] or explain_row(cs, r)})
    return Table.from_records(out, SUMMARY_COLUMNS)


# ----- nothing fits (reasons and suggestions: planner.plan.suggest) ----------------------------

def _no_plan(cs: CandidateSet, catalog: Catalog, summary: Any, overheads: RuntimeOverheads | None) -> NoFeasiblePlan:
    import dataclasses

    sc = cs.scenario
    cs = dataclasses.replace(cs, table=cs.table.copy())  # explain every row without touching the caller's table
    t = cs.table
    fill_why_not(cs)
    lines = [f"No machine fits scenario {sc.name!r}: 0 of {len(t):,} candidates are feasible."]
    reasons = []
    if len(summary):
        lines.append("Closest miss per constraint:")
        for s in summary.records():
            reason = f"{s['binding']} ({s['candidates']:,} candidates): {s['closest']}: {s['why_not']}"
            reasons.append(reason)
            lines.append("  " + reason)
    notes = _why_notes(cs)
    if notes:
        lines.append("Why:")
        lines += ["  " + n for n in notes]
    suggestions = suggest(cs, catalog, overheads)
    if suggestions:
        lines.append("What would fit (each checked with the memory model):")
        lines += ["  - " + s for s in suggestions]
    else:
        lines.append("Nothing simple would fit; loosen the constraints above.")
    warnings = _standing_warnings(cs)
    if warnings:
        lines.append("Warnings:")
        lines += ["  - " + w for w in warnings]
    return NoFeasiblePlan("\n".join(lines), reasons, scenario=sc.name, summary=summary, candidates=t,
                          suggestions=suggestions, assumptions=assumptions(cs, catalog, None, [], overheads),
                          warnings=warnings)




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

# ----- warnings and assumptions ----------------------------------------------------------------

def _kbit_warnings(cs: CandidateSet, choice: dict[str, Any], workloads: Sequence[Workload],
                   overheads: RuntimeOverheads | None) -> list[str]:
    """QLoRA and 8-bit LoRA workloads that fit only because the plan assumes no
    prepare_model_for_kbit_training: peft's QLoRA and 8-bit guides call it, and it casts every
    non-quantized weight (embeddings, norms, LM head) to fp32
    (peft.utils.other.prepare_model_for_kbit_training)."""
    import dataclasses

    out: list[str] = []
    cuda_total = int(choice["gpu_cuda_total_bytes"])
    for sw, w in zip(cs.scenario.workloads, workloads):
        t = w.train
        if t is None or not t.quantized_base or t.prepare_kbit_training:
            continue
        need = estimate(dataclasses.replace(w, train=dataclasses.replace(t, prepare_kbit_training=True)),
                        overheads).per_gpu_total_bytes
        cap = capacity_for(w, cuda_total, cs.hardware.headroom)
        if need > cap:
            out.append(f"{sw.name}: fits only if the training script does not call peft's "
                       f"prepare_model_for_kbit_training (as peft's QLoRA and 8-bit guides do; it casts the non-quantized "
                       f"weights to fp32): with it the workload needs {_fmt(need)} per GPU of {_fmt(cap)}; set "
                       "prepare_kbit_training: true to plan for it")
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
    :func:`planner.plan.candidates.cheapest`, with only that pair's variants), or that none does."""
    from planner.plan.candidates import cheapest

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
        row, ck = cheapest(cs.scenario, cs.hardware, restricted)
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
    (tokens/s per sequence, the speed rule's figure, planner.memory.traffic) and how long their prompts
    take to prefill (2 x P FLOPs per token at MFU 0.4 on the card, plus the PCIe upload of the host
    blocks' weights for every ubatch), so that a machine holding a third of the model is not bought
    unawares."""
    from planner.memory.traffic import PCIE_EFFICIENCY, arch_mfu, llamacpp_prefill_upload
    from planner.plan.candidates import row_decode_tokens_per_s

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
        prompt = i.context - gen if gen is not None and gen < i.context else i.context
        mfu = arch_mfu(gpu).value
        compute_s = 2 * u.workload.architecture.active_parameters * prompt * i.concurrency / (
            float(gpu.bf16_tflops) * 1e12 * mfu)
        per_lane = min(catalog.pcie_gen(g).per_lane_bytes_per_s for g in (gpu.pcie_gen, plat.pcie_gen))
        n_ub, per_ub, _ = llamacpp_prefill_upload(u.estimate, u.workload.architecture, prompt * i.concurrency)
        upload_s = n_ub * per_ub / (per_lane * gpu.pcie_lanes * PCIE_EFFICIENCY)
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
    """What set the chosen RAM, when it is not simply the memory model's host peak: the RAM-to-VRAM
    rule of thumb (said with what it costs over the cheapest configuration that holds the host
    peak), and RAM far above the installed VRAM (said with its cause)."""
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
    nodes = int(choice["nodes"])
    per_node_usd = float(choice["ram_usd"]) / max(nodes, 1)
    configs = [cs.hardware.ram[i] for i in cs.hardware.ram_of.get(choice["platform_id"], ())]
    for_host = min((r for r in configs if r.bytes >= host), key=lambda r: (r.price_usd, r.bytes), default=None)
    rule_cost = by_rule > host and for_host is not None and for_host.price_usd < per_node_usd - 1e-9
    if rule_cost:
        assert for_host is not None
        out.append(f"RAM is sized by the {mult:g}x-installed-VRAM rule of thumb ({_fmt(by_rule)} per node), not the "
                   f"memory model's host peak ({_fmt(host)}): {_fmt(ram)} for ${per_node_usd:,.2f} per node where "
                   f"{for_host.count} x {for_host.dimm.id} ({_fmt(for_host.bytes)}, ${for_host.price_usd:,.2f}) would "
                   f"hold the host peak; constraints.{key} sets the rule (0: size by the host peak alone)")
    if vram and ram / vram > high:
        need = max(host, by_rule)
        if need / vram > high:
            why = ("the memory model's host peak" if host >= by_rule else
                   f"the scenario's {key} ({mult:g}x)")
        else:
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
    out += _ram_warnings(cs, choice)
    cons = cs.scenario.constraints
    if int(choice["nodes"]) == 1 and cons.network != Network():
        why = "max_nodes is 1" if cons.max_nodes == 1 else "the plan is one node"
        out.append(f"constraints.network is not used: {why} (NICs and switches are bought for several nodes only)")
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
    old = [f"{i.catalog_id} ({i.as_of})" for i in stale_items(items, catalog)]
    if old:
        out.append(f"prices dated more than {STALE_PRICE_MONTHS} months before the catalog's newest entry: "
                   + ", ".join(dict.fromkeys(old)) + "; launch or list prices of older parts are not what they sell for "
                   "now: overlay a dated street price or quote (--catalog DIR)")
    return out




def _unpriced_warnings(cs: CandidateSet) -> list[str]:
    """One warning naming the discontinued cards the plan did not consider for want of a price it
    pays, each with its used price and date (or none); the candidate table's ``price`` rows say
    it in full (planner.plan.candidates.unpriced_reason)."""
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


def assumptions(cs: CandidateSet, catalog: Catalog, row: int | None, usages: Sequence[Usage | None],
                overheads: RuntimeOverheads | None) -> dict[str, Any]:
    """What the plan rests on: files, sources, recipes, rules and their constants."""
    from planner import __version__

    sc = cs.scenario
    used: set[str] = set()
    if row is not None:
        r = cs.table.row(row)
        used = {x for x in (r["gpu_id"], r["platform_id"], r["dimm_id"], r["nic_id"], r["switch_id"]) if x}
    used |= {sw.model_id for sw in sc.workloads}
    sources = [s._asdict() for s in catalog.sources if s.id in used]
    recipes = []
    for sw, u in zip(sc.workloads, usages):
        if u is None:
            continue
        recipes.append({"workload": sw.name, "strategy": u.label, "recipe": u.estimate.recipe,
                        "definition": u.estimate.recipe_description})
    return {
        "planner_version": __version__,
        "scenario": sc.name,
        "scenario_file": sc.file,
        "scenario_sha256": sc.sha256,
        "objective": "capex_usd: purchase price of GPUs, platforms, DIMMs, network and extras (USD)",
        "catalog_schema_version": catalog.schema_version,
        "catalog_files": list(catalog.files),
        "catalog_sha256": catalog.sha256,
        "sources": sources,
        "recipes": recipes,
        "rules": {
            "vram": f"per-GPU need <= T - ceil(T x {cs.hardware.headroom}) (vram_headroom), T = CUDA total "
                    "(nvidia-smi total less the driver's reservation); engine: vllm workloads: need <= T "
                    "(gpu_memory_utilization is their margin)",
            "ram": (f"RAM per node >= max(host need, {sc.constraints.ram_vram_min:g}x installed VRAM, "
                    f"{sc.constraints.ram_vram_min_offload:g}x with "
                    f"offload); reported above {RAM_VRAM_HIGH}x ({RAM_VRAM_HIGH_OFFLOAD}x with offload); "
                    "equal DIMMs in every channel, 1 or 2 per channel"),
            "cooling": ("the platform's gpu_cooling lists the GPU's cooling (open-air, blower, passive): passive "
                        "cards only in servers with a fan wall; not checked where either field is unstated"),
            "lanes": ("cards x the lanes each card gets (+ NICs outside the platform's nic_slots x theirs) <= "
                      "gpu_lanes; a card gets its full pcie_lanes unless the slot arrangement holding the cards says "
                      "lanes (an x16 slot split x8/x8)"),
            "slots": ("cards <= the platform's slots at the card's width; several nodes: NICs beyond nic_slots take a "
                      "GPU slot each"),
            "power": "cards x tdp_w + platform_w (+ the node's NICs x their tdp_w) <= psu_w",
            "network": ("several nodes: one NIC per GPU (or nics_per_node) with one cable each, one switch with a "
                        "port per NIC; cheapest matching NIC and switch; two nodes: NICs cabled back-to-back in "
                        "pairs, no switch, unless network.switch is always"),
            "precision": "bf16 needs gpu.bf16; fp8 weights/KV need gpu.fp8; int8 weights and LoRA on an LLM.int8 base "
                         "need gpu.int8",
            "prices": (f"price: {sc.constraints.price}" + (", used_ok: true" if sc.constraints.used_ok else "")
                       + (" (a new unit's quote, else street price, else estimate, else list price, the newest of "
                          "its kind" if sc.constraints.price == "street" else
                          " (a new unit's list price where there is one, else as street")
                       + ("; a used unit's newest price where it is lower)" if sc.constraints.used_ok else ")")
                       + "; each line's price kind, condition and date are on the quote"),
        },
        "runtime_overheads": asdict(overheads or RuntimeOverheads()),
    }


__all__ = ["ALTERNATIVE_COLUMNS", "NoFeasiblePlan", "Plan", "SUMMARY_COLUMNS", "alternatives", "assumptions",
           "choose", "fits", "infeasible_summary", "largest_fitting", "line_items", "plan", "suggest", "why_lost"]
