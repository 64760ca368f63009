"""Choose the machine to buy: the cheapest candidate that runs every workload of a scenario.

Objective and constraints (written out before the code, as SkyPilot's ``_optimize_by_ilp``
does)::

    minimise   capex_usd(r) = nodes x (cards x gpu.price + platform.base_price
                                       + dimm_count x dimm.price)
                              + network(r) + sum(extras)
    over       r in R = GPU x cards per node x platform x RAM configuration x nodes
                        (planner.solve.candidates; nodes <= max_nodes, cards <= max_cards)
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
               for a training workload with a deadline: hours(v, g on r) <= deadline_hours;
               for a served workload with an slo: its r replicas meet TTFT and TPOT under the
                  load (planner.solve.targets);
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
larger card, a larger budget...): planner.solve.suggest finds them. The plan's warnings (what to
check before buying) are planner.solve.warnings'.

The solver never prints and never reads files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from planner.solve.candidates import (
    RAM_VRAM_HIGH,
    RAM_VRAM_HIGH_OFFLOAD,
    RULES,
    CandidateSet,
    Hardware,
    Usage,
    build,
    explain_row,
    fill_why_not,
)
from planner.catalog.loader import Catalog
from planner.catalog.prices import priced_catalog
from planner.core.errors import InfeasibleError
from planner.core.table import Table
from planner.memory import Estimate
from planner.memory.overheads import RuntimeOverheads
from planner.solve.quote import (PARTS_SEPARATOR, STALE_PRICE_MONTHS, LineItem, order_of, platform_lines, price_of,
                                 subtotal_usd)
from planner.solve.ramrule import RamRuleNote, ram_rule_note
from planner.solve.scenario import Scenario
from planner.solve.sensitivity import PriceSensitivity, no_plan_lines, price_sensitivity
from planner.solve.warnings import _warnings, stale_items
from planner.core.units import GiB, duration_text
from planner.workload.spec import Workload

# Moved to planner.solve.suggest and planner.solve.warnings; importable from here as before (those of
# planner.solve.suggest through __getattr__ below: a plan that fits imports none of it).
from planner.solve.warnings import (  # noqa: F401
    OPEN_AIR_HOT_W, PSU_EFFICIENCY_PCT, WALL_CIRCUIT_20A_W, WALL_CIRCUIT_240V_30A_W, WALL_CIRCUIT_W, _months)

#: The names planner.solve.suggest gives this module, imported on first use (PEP 562).
_FROM_SUGGEST = ("PRECISION_CHANGES", "VLLM_UTILIZATIONS", "fits", "largest_fitting", "largest_gpu_layers",
                 "utilization_that_fits")


def __getattr__(name: str) -> Any:
    if name in _FROM_SUGGEST:
        from planner.solve import suggest

        return getattr(suggest, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Columns of :attr:`Plan.alternatives`.
ALTERNATIVE_COLUMNS = ("rank", "gpu_id", "platform_id", "cards_per_node", "nodes", "dimm_id", "dimm_count",
                       "ram_bytes", "capex_usd", "hours_per_job", "usd_per_job", "tco_usd", "deadline_hours",
                       "run_hours", "target_ttft_s", "ttft_s", "target_tpot_s", "tpot_s", "per_gpu_need_bytes",
                       "gpu_capacity_bytes", "headroom_bytes", "strategy", "targets", "why_lost")
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
        choice: the chosen candidate row (column -> value, see planner.solve.candidates.COLUMNS).
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
        targets: per workload, in the scenario's order, what it was held to on the chosen machine:
            ``deadline`` (``limit_hours``, ``hours``, ``met``) for a training workload with a deadline,
            ``slo`` (``target_ttft_s``, ``ttft_s``, ``target_tpot_s``, ``tpot_s``, ``met``, the load, the
            replicas and their tp, the machine's ``gpus`` and the ``idle_gpus`` no replica uses) for an
            inference workload with an ``slo:`` block; an empty mapping for neither
            (:func:`targets_of`).
        The three tables are :class:`planner.core.table.Table` (numpy columns; ``to_frame()`` gives
        a pandas DataFrame).
        assumptions: catalog files and the sources of the entries used, recipe definitions,
            rules and their constants, the scenario file's sha256.
        warnings: things to check before buying.
        price_sensitivity: which prices decide the choice, their break-even prices and whether the
            choice holds across the price ranges (:class:`planner.solve.sensitivity.PriceSensitivity`;
            None for a plan built by hand).
        ram_rule: where the RAM rule of thumb (2x installed VRAM, 6x with offload), not the memory
            model, sets the RAM or excludes a cheaper machine: the need-sized alternative and its price
            (:class:`planner.solve.ramrule.RamRuleNote`); None where the rule costs nothing.
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
    price_sensitivity: PriceSensitivity | None = None
    targets: tuple[dict[str, Any], ...] = ()
    ram_rule: RamRuleNote | None = None

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
            plan it removed from the same directory. Both empty when nothing was written. notes: what
            writing them left alone, and why (planner.api.PlanResult.notes).
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
        self.notes: tuple[str, ...] = ()  # what writing the reports left alone, and why


# ----- the entry point -------------------------------------------------------------------------

def plan(scenario: Scenario, catalog: Catalog, top_k: int = 5, *, overheads: RuntimeOverheads | None = None,
         hardware: Hardware | None = None, explain: bool = True) -> Plan:
    """The cheapest machine that runs every workload of ``scenario`` (see the module docstring).

    Args:
        scenario: a validated scenario (planner.solve.scenario).
        catalog: the catalog it was validated against.
        top_k: how many alternatives to keep.
        overheads: runtime overheads for the memory model (None: default assumptions).
        hardware: hardware rows from :func:`planner.solve.candidates.hardware` to reuse.
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
    # The two sums add the same whole-cent prices (planner.catalog.prices.whole_cents) in other orders: they may
    # differ by a cent where each rounds the other way, and by the floats' own error, at most (terms + 2) x 2^-53
    # of the sum each (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 4.2), which
    # passes a cent from about 10^13 USD on (1,000,000 extras of $99,999,999.99 each are allowed).
    tolerance = 0.01 + 2 * (len(items) + 2) * abs(total) * 2**-53
    if abs(total - float(choice["capex_usd"])) > tolerance:  # pragma: no cover - internal invariant
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
                warnings=tuple(warnings), price_sensitivity=price_sensitivity(cs, catalog, row),
                targets=targets_of(cs, row, usages), ram_rule=ram_rule_note(cs, row))


def targets_of(cs: CandidateSet, row: int, usages: Sequence[Usage | None]) -> tuple[dict[str, Any], ...]:
    """What each workload was held to on table row ``row`` and what it achieves there (see
    :attr:`Plan.targets`; planner.solve.targets times it as the candidate check did)."""
    from planner.solve.candidates import _hw_row
    from planner.solve.targets import pinned_rates, run_hours, slo_figures

    r = cs.table.row(row)
    gpu = cs.hardware.gpu_by_id[r["gpu_id"]]
    hw_row = _hw_row(cs, r)
    per_lane = float(cs.hardware.arrays["per_lane"][hw_row])
    out: list[dict[str, Any]] = []
    for sw, u in zip(cs.scenario.workloads, usages):
        item: dict[str, Any] = {}
        if u is not None and sw.task == "train" and sw.deadline_hours is not None:
            hours = run_hours(u, gpu, per_lane, pinned_rates(cs.scenario, sw.name))
            item["deadline"] = {"limit_hours": sw.deadline_hours, "hours": hours,
                                "met": bool(hours <= sw.deadline_hours * (1 + 1e-9))}
        if u is not None and sw.task == "infer" and sw.slo is not None:
            slo = sw.slo
            host = u.decode is not None and u.decode.host_blocks > 0
            f = slo_figures(u, slo, gpu, per_lane=per_lane if host else 0.0,
                            host_bandwidth=float(cs.hardware.arrays["host_bw"][hw_row]) if host else None)
            i = u.workload.infer
            item["slo"] = {"target_ttft_s": slo.ttft_s, "ttft_s": f.ttft_s, "target_tpot_s": slo.tpot_s,
                           "tpot_s": f.tpot_s, "met": f.met(slo), "load": slo.load_text(),
                           "concurrency": slo.concurrency, "requests_per_s": slo.requests_per_s,
                           "prompt_tokens": slo.prompt_tokens, "output_tokens": slo.output_tokens,
                           "replicas": i.replicas, "tp": i.tp, "gpus": int(r["cards_total"]),
                           "idle_gpus": int(r["cards_total"]) - i.tp * i.replicas, "sequences_per_replica": f.in_flight,
                           "request_s": f.request_s, "decode_step_s": f.step_s, "wait_s": f.wait_s}
        out.append(item)
    return tuple(out)


def target_lines(targets: Sequence[dict[str, Any]], names: Sequence[str]) -> list[str]:
    """The targets as sentences, one per workload with one ('ft: deadline 72 h; this machine takes
    51.3 h (met)')."""
    lines = []
    for name, t in zip(names, targets):
        d = t.get("deadline")
        if d:
            lines.append(f"{name}: deadline {d['limit_hours']:g} h per run; this machine takes "
                         f"{duration_text(d['hours'])} ({'met' if d['met'] else 'MISSED'})")
        s = t.get("slo")
        if s:
            got = []
            if s["target_ttft_s"] is not None:
                wait = s.get("wait_s", 0.0)
                queued = (f"; {wait:.3g} s of it waiting for the prompts queued ahead, M/D/1: planner estimate's "
                          "prompt_wait_s" if wait and math.isfinite(wait) and wait >= 5e-4 else "")
                got.append(f"TTFT {s['ttft_s']:.3g} s (target {s['target_ttft_s']:g} s{queued})")
            if s["target_tpot_s"] is not None:
                step = s.get("decode_step_s")
                stretched = (f"; the {step * 1e3:.3g} ms decode step with the other requests' prompts prefilled "
                             f"between steps, {1 - step / s['tpot_s']:.0%} of the time: planner estimate's "
                             "steady_tpot_s" if step and math.isfinite(s["tpot_s"])
                             and s["tpot_s"] > step * (1 + 1e-6) else "")
                got.append(f"TPOT {s['tpot_s'] * 1e3:.3g} ms = {1 / s['tpot_s']:,.1f} tokens/s per user (target "
                           f"{s['target_tpot_s'] * 1e3:.4g} ms{stretched})")
            if math.isfinite(s.get("request_s", math.nan)):
                # what a user waits (the steady request time), beside the machine's seconds per request
                got.append(f"a user's request {s['request_s']:.3g} s (TTFT + {s['output_tokens']:,} x TPOT)")
            lines.append(f"{name}: SLO for {s['load']}: " + ", ".join(got) + f" with {s['replicas']} replica"
                         f"{'s' if s['replicas'] > 1 else ''} of tp {s['tp']} at {s['sequences_per_replica']:,} "
                         f"sequence(s) each" + _idle_words(s)
                         + f" ({'met' if s['met'] else 'MISSED'})")
    return lines


def _idle_words(s: dict[str, Any]) -> str:
    """', 3 of 8 GPUs idle (...)' for an slo: target whose replicas leave cards of the machine unused
    (planner.solve.usages.fill), with why; '' when every card serves."""
    idle = s.get("idle_gpus") or 0
    if idle <= 0:
        return ""
    users = s.get("concurrency")
    why = (f"one replica per user: {users} users" if users and s["replicas"] >= users else
           f"too few in a node for another replica of tp {s['tp']}")
    return f", {idle} of {s['gpus']} GPUs idle ({why})"


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
    pcond = price_of(plat)[1]
    items = [
        LineItem(gpu.name + (" (used)" if gcond == "used" else "") + _gpu_form(gpu, plat), "gpu", gpu.id,
                 float(gpu.price_usd or 0.0), int(r["cards_total"]), gkind, gsource, gdate, gcond, **order_of(gpu)),
        *platform_lines(plat, nodes, f"{plat.name}" + (" (used)" if pcond == "used" else "") + ": CPU, board, case, "
                        "PSU, boot storage (no GPUs, no RAM)" + _parts(plat), used=pcond == "used"),
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
                              ddate, dcond, **order_of(d)))
    if r["nic_id"]:
        n = catalog.nic(r["nic_id"])
        count = int(r["nic_count"])
        items.append(LineItem(f"{n.id} {n.kind} NIC, {n.rate_bytes_per_s * 8 / 1e9:g} Gb/s", "network", n.id,
                              float(n.price_usd), count, n.price_kind, n.source, n.as_of, **order_of(n)))
        direct = not r["switch_id"]
        items.append(LineItem((f"node-to-node cable or optics for {n.id} (back-to-back, no switch)" if direct else
                               f"node-to-switch cable or optics for {n.id}"), "network", n.id,
                              float(n.cable_price_usd), int(r["cable_count"]), n.price_kind, n.source, n.as_of))
    if r["switch_id"]:
        s = catalog.switch(r["switch_id"])
        items.append(LineItem(f"{s.id} {s.kind} switch, {s.ports} x {s.rate_bytes_per_s * 8 / 1e9:g} Gb/s",
                              "network", s.id, float(s.price_usd), int(r["switch_count"]), s.price_kind, s.source,
                              s.as_of, **order_of(s)))
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
    out = t.take(picked).select(list(ALTERNATIVE_COLUMNS[:-2]))
    from planner.solve.achieved import targets_text

    out["targets"] = [targets_text(cs, i) for i in picked]  # every workload's target, by name
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
    "deadline": None,  # run_hours - deadline_hours, h
    "slo": None,  # the larger of TTFT / target and TPOT / target, less 1, in percent
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
        elif rule == "deadline":
            short, unit = np.nan_to_num(t["run_hours"][idx] - t["deadline_hours"][idx], nan=np.inf), "h"
        elif rule == "slo":  # the excess over the targets, a replica that falls behind graded by its overload
            from planner.solve.serving import slo_excess

            short = np.full(idx.size, np.inf)
            for name in set(t["binding_workload"][idx].tolist()):
                mine = t["binding_workload"][idx] == name
                short[mine] = slo_excess(cs, cs.workload_index[name], idx[mine]) * 100
            unit = "% over target"
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
        out.append({"binding": rule, "candidates": int(t["represents_count"][idx].sum()), "closest": closest,
                    "shortfall": float(short[j]),
                    "shortfall_unit": unit, "why_not": row["why_not"] or explain_row(cs, r)})
    return Table.from_records(out, SUMMARY_COLUMNS)


# ----- nothing fits (reasons and suggestions: planner.solve.suggest) ----------------------------

def _no_plan(cs: CandidateSet, catalog: Catalog, summary: Any, overheads: RuntimeOverheads | None) -> NoFeasiblePlan:
    import dataclasses

    from planner.solve.suggest import UNCHECKED, _standing_warnings, _why_notes, suggest

    sc = cs.scenario
    cs = dataclasses.replace(cs, table=cs.table.copy())  # explain every row without touching the caller's table
    t = cs.table
    fill_why_not(cs)
    lines = [f"No machine fits scenario {sc.name!r}: 0 of {int(t['represents_count'].sum()):,} candidates are "
             "feasible."]
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
    lines.append("Price sensitivity:")  # issue #30: every plan says whether a price would change it
    lines += ["  " + x for x in no_plan_lines(cs)]
    from planner.solve.used_only import used_only_suggestions

    def replan(scenario: Scenario) -> Plan | NoFeasiblePlan:
        try:
            return plan(scenario, catalog, top_k=0, overheads=overheads, explain=False)
        except NoFeasiblePlan as e:
            return e

    # cards sold used only: what used_ok: true does, as the solver finds it; then what would fit
    suggestions = used_only_suggestions(cs, catalog, replan) + suggest(cs, catalog, overheads)
    # machine changes (another card, max_cards, max_nodes) and serving levers: offered only as a re-plan
    # with them applied accepts them, with its figures (planner.solve.replan_fixes)
    from planner.solve.replan_fixes import replanned_fixes

    suggestions = replanned_fixes(cs, catalog, replan, suggestions)
    # the changes the memory model checked, then (under their own heading) those it could not: a GPU
    # lacking a feature has no figure to check (planner.solve.suggest._precision_suggestions)
    checked = [s for s in suggestions if not s.startswith(UNCHECKED)]
    unchecked = [s[len(UNCHECKED):] for s in suggestions if s.startswith(UNCHECKED)]
    if checked:
        lines.append("What would fit (each checked with the memory model):")
        lines += ["  - " + s for s in checked]
    if unchecked:
        lines.append("What else may fit (not checked with the memory model):")
        lines += ["  - " + s for s in unchecked]
    if not suggestions:
        lines.append("Nothing simple would fit; loosen the constraints above.")
    warnings = _standing_warnings(cs)
    if warnings:
        lines.append("Warnings:")
        lines += ["  - " + w for w in warnings]
    return NoFeasiblePlan("\n".join(lines), reasons, scenario=sc.name, summary=summary, candidates=t,
                          suggestions=suggestions, assumptions=assumptions(cs, catalog, None, [], overheads),
                          warnings=warnings)


# ----- assumptions -----------------------------------------------------------------------------

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
                        "pairs, no switch, unless network.switch is always" if cs.hardware.fabric else
                        "several nodes serve independent replicas, which never exchange tensors: no NIC, switch or "
                        "slot, the onboard Ethernet (planner.solve.fabric)"),
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
           "choose", "fits", "infeasible_summary", "target_lines", "targets_of", "largest_fitting", "line_items", "plan", "suggest", "why_lost"]
