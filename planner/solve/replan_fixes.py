"""Fixes checked by planning the scenario again with them applied (issue 29, items 1, 2 and 5).

The rule ``docs/planning.md`` promises: every fix "What would fit" offers is one a re-plan with it
applied accepts, and its figures are the re-plan's. The memory and time models alone cannot promise
that for a change of the machine itself (another card, more cards per node, more nodes): only the
solver's own build rules (slots, NICs, power, lanes, per-node GPU counts, ``budget_usd``) say
whether such a machine exists. So each candidate change here is applied to the scenario
(:func:`with_changes`) and planned again with the same catalog and overheads
(planner.solve.solver._no_plan passes the re-planning function); it is listed only when that re-plan
finds a machine, worded with the machine it buys and the figures it achieves there. The candidates,
cheapest first (a lever costs no hardware; then a looser limit on the machine; then another card),
at most :data:`MAX_REPLANS` re-plans per scenario:

- for a served workload that misses its ``slo:``: ``weights: fp8`` alone, ``kv_dtype: fp8`` alone,
  and both together when neither alone is accepted;
- for a deadline or SLO miss, or a machine refused by ``max_cards``: ``max_cards`` left out (the re-plan's cards per node is the value
  named), ``max_nodes`` raised (to twice the scenario's first, then to :data:`NODES_FACTOR` times
  it, at most planner.solve.scenario.MAX_NODES; the re-plan's node count is named), and both together when
  neither alone is accepted;
- for a deadline miss: the cheapest cards the GPU constraints leave out on which the workload's
  usages fit and finish in time (planner.solve.suggest.faster_cards), each as ``allowed_gpus:
  [card]``, and where that re-plan is refused, the same with ``max_cards`` and ``max_nodes`` left to
  the platforms (one combined fix), then with ``budget_usd`` left out ("and budget_usd >= $X").

A deadline or SLO fix of planner.solve.suggest that changes keys the scenario pins (``checkpointing:
none``, ``recipe: fp8``, a pinned ``tp``, ``gpus``; worded '...; tp: 2 (the scenario pins 1)') is
re-planned with those keys set (:func:`checked_pin_line`): dropped when the re-plan is refused, else
worded with the re-plan's machine and figures; more cards or replicas of the closest machine that
change no key are dropped (the re-plan of the scenario as written is the plan that refused them).
A "raise max_nodes" another suggestion names (planner.solve.shapes.Span.clause) is checked the same
way (:func:`checked_max_nodes`): when the re-plan with the nodes it names still finds nothing, the
line says so with the re-plan's closest miss (e.g. the NICs that do not fit the slots).

Re-plans made here do not check fixes of their own (:data:`_NESTED`). Never prints, never reads files.
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import replace
from typing import Any, Callable

#: The most re-plans one scenario's fixes may take (about a second each on the shipped catalog).
MAX_REPLANS = 8

#: A raised max_nodes is tried at twice the scenario's, then at this many times it (bounded plan time: a
#: rate-sized SLO re-planned over 64 nodes took 6 s against 0.6 s for the plan itself).
NODES_FACTOR = 8

#: Serving levers tried alone, in order; both together only when neither alone is accepted.
SERVE_LEVERS: tuple[dict[str, str], ...] = ({"weights": "fp8"}, {"kv_dtype": "fp8"})

#: Set while a re-plan made here runs: that re-plan lists no re-planned fixes of its own.
_NESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("replan_fixes_nested", default=False)


def nested() -> bool:
    """True inside a re-plan this module started (its own fixes are not re-planned again)."""
    return _NESTED.get()


def with_changes(sc: Any, catalog: Any, *, constraints: dict[str, Any] | None = None,
                 workload: dict[str, dict[str, Any]] | None = None) -> Any | None:
    """Scenario ``sc`` with ``constraints`` (Constraints field -> value) replaced and, per workload
    name in ``workload``, its keys set to the values given in every variant (validated again as the
    loader does: planner.workload.spec.workload_from_entry); None when some workload's variants are
    all invalid with them."""
    from planner.solve.suggest import _workload_from

    sws = []
    for sw in sc.workloads:
        updates = (workload or {}).get(sw.name)
        if not updates:
            sws.append(sw)
            continue
        variants, seen = [], set()
        for v in sw.variants:
            wl = _workload_from(sw, v, catalog, updates)
            if wl is None:
                continue
            if wl.infer is not None and v.workload.infer is not None:
                wl = replace(wl, infer=replace(wl.infer, prompt_tokens=v.workload.infer.prompt_tokens,
                                               engine_defaulted=v.workload.infer.engine_defaulted))
            if wl in seen:
                continue
            seen.add(wl)
            choices = tuple((k, updates.get(k, x)) for k, x in v.choices)
            variants.append(replace(v, workload=wl, choices=choices, data={**v.data, **updates}))
        if not variants:
            return None
        gpus = (int(updates["gpus"]),) if "gpus" in updates and sw.gpus is not None else sw.gpus
        sws.append(replace(sw, variants=tuple(variants), gpus=gpus))
    cons = replace(sc.constraints, **(constraints or {}))
    return replace(sc, workloads=tuple(sws), constraints=cons, objective="capex")


def bought(p: Any) -> str:
    """What a feasible re-plan buys and achieves, in words: '8 x a100-40gb-pcie on <platform> for
    $77,992.00 (lora-8b: 18.3 h per run)'."""
    from planner.core.units import duration_text

    ch = p.choice
    shape = f"{int(ch['cards_total'])} x {ch['gpu_id']} on {ch['platform_id']}"
    if int(ch["nodes"]) > 1:
        shape += f" ({int(ch['nodes'])} nodes of {int(ch['cards_per_node'])})"
    got = []
    for t in p.targets:
        if "deadline" in t:
            got.append(f"{duration_text(t['deadline']['hours'])} per run")
        if "slo" in t:
            s = t["slo"]
            got.append(f"TTFT {s['ttft_s']:.3g} s, TPOT {s['tpot_s'] * 1e3:.3g} ms as {s['replicas']} replica(s) of "
                       f"tp {s['tp']}")
    return f"{shape} for ${p.total_usd:,.2f}" + (f" ({'; '.join(got)})" if got else "")


#: The rules a machine of more nodes misses on, named first when a "raise max_nodes" is checked.
NODE_MISSES = ("network", "slots", "lanes", "power")


def closest_miss(e: Any, first: tuple[str, ...] = ()) -> str:
    """A refused re-plan's closest miss in words: the rules ``first`` names, then the workload's own
    targets and memory (planner.solve.used_only.PREFERRED_MISSES)."""
    from planner.solve.used_only import PREFERRED_MISSES

    records = list(e.summary.records()) if len(e.summary) else []
    for rule in first + PREFERRED_MISSES:
        pick = next((r for r in records if r["binding"] == rule), None)
        if pick is not None:
            return f"{pick['binding']}: {pick['closest']}: {pick['why_not']}"
    return f"{records[0]['binding']}: {records[0]['closest']}: {records[0]['why_not']}" if records else "no candidates"


class _Replanner:
    """Re-plans changed scenarios, at most :data:`MAX_REPLANS`, remembering each answer."""

    def __init__(self, replan: Callable[[Any], Any]) -> None:
        self.replan, self.used, self.memo = replan, 0, {}

    def __call__(self, sc: Any | None) -> Any | None:
        """The Plan, the NoFeasiblePlan it raised, or None (no scenario, or no re-plans left)."""
        if sc is None:
            return None
        key = repr((sc.constraints, [[v.workload for v in sw.variants] for sw in sc.workloads]))
        if key in self.memo:
            return self.memo[key]
        if self.used >= MAX_REPLANS:
            return None
        self.used += 1
        token = _NESTED.set(True)
        try:
            got = self.replan(sc)
        finally:
            _NESTED.reset(token)
        self.memo[key] = got
        return got


def _ok(p: Any) -> bool:
    return p is not None and hasattr(p, "choice")


def replanned_fixes(cs: Any, catalog: Any, replan: Callable[[Any], Any], others: list[str]) -> list[str]:
    """The re-plan-checked fixes of the module docstring for a scenario nothing fits, one line each,
    and ``others`` (the other suggestions) with each "raise max_nodes" checked. Returns
    (the new lines) + (``others`` as checked)."""
    if nested():
        return others
    rp = _Replanner(replan)
    sc = cs.scenario
    bindings = set(cs.table["binding"].tolist())
    target_miss = bool(bindings & {"deadline", "slo"})
    checked = []
    for ln in others:
        if "raise max_nodes" in ln:
            checked.append(checked_max_nodes(ln, sc, catalog, rp))
        elif target_miss and (_PIN.search(ln) or _LEVER.match(ln)) and "left out (the scenario pins" not in ln:
            got = checked_pin_line(ln, sc, catalog, rp)
            if got and got not in checked:
                checked.append(got)
        elif target_miss and _SAME_KEYS.match(ln):
            continue  # more cards or replicas with no key changed: a re-plan of it is this plan, which refuses it
        else:
            checked.append(ln)
    # the suggestions' own fixes are checked first (they are few, and the re-plans are bounded), then the
    # machine changes and levers found here, listed first
    out: list[str] = []
    if target_miss:
        out += _lever_fixes(sc, catalog, rp)
    if target_miss or "max_cards" in bindings:  # (a baseboard of more cards than max_cards allows)
        out += _limit_fixes(sc, catalog, rp)
    if target_miss:
        if "deadline" in bindings:
            out += _card_fixes(cs, catalog, rp)
    return out + checked


def _max_nodes(cons: Any) -> int:
    """The most nodes a fix tries: :data:`NODES_FACTOR` x the scenario's ``max_nodes``, at most
    planner.solve.scenario.MAX_NODES (a re-plan over more nodes has more candidates to size)."""
    from planner.solve.scenario import MAX_NODES

    return min(MAX_NODES, NODES_FACTOR * cons.max_nodes)


def _lever_fixes(sc: Any, catalog: Any, rp: _Replanner) -> list[str]:
    out = []
    for sw in sc.workloads:
        if sw.task != "infer" or sw.slo is None or any(v.workload.infer.engine == "llama.cpp" for v in sw.variants):
            continue
        pre = f"{sw.name}: " if len(sc.workloads) > 1 else ""

        def tried(upd: dict[str, str]) -> bool:  # some variant the solver planned already has these values
            return any(all(getattr(v.workload.infer, k) == x for k, x in upd.items()) for v in sw.variants)

        alone = [u for u in SERVE_LEVERS if not tried(u)]
        accepted = False
        for upd in alone:
            p = rp(with_changes(sc, catalog, workload={sw.name: upd}))
            if _ok(p):
                accepted = True
                out.append(f"{pre}{_words(sw, upd)}: re-planned with it, the solver buys {bought(p)}")
        both = {k: x for u in SERVE_LEVERS for k, x in u.items()}
        if not accepted and not tried(both):
            p = rp(with_changes(sc, catalog, workload={sw.name: both}))
            if _ok(p):
                out.append(f"{pre}{_words(sw, both)} together: re-planned with them, the solver buys {bought(p)}")
    return out


def _words(sw: Any, upd: dict[str, Any]) -> str:
    """'weights: fp8 (the scenario pins bf16) and kv_dtype: fp8': each key in the one wording of a
    pinned key (planner.solve.shapes.pin_changes) where the scenario pins it."""
    from planner.solve.shapes import pin_changes

    return " and ".join(pin_changes(sw, sw.variants[0], {k: x}).removeprefix("; ") or f"{k}: {x}"
                        for k, x in upd.items())


def _limit_fixes(sc: Any, catalog: Any, rp: _Replanner) -> list[str]:
    """max_cards left out, max_nodes raised, or both, each named with the re-plan's value."""
    cons = sc.constraints
    out = []
    tries = []
    if cons.max_cards is not None:
        tries.append({"max_cards": None})
    if cons.max_nodes < _max_nodes(cons):
        tries.append({"max_nodes": _max_nodes(cons)})
    for ch in tries:
        p = None
        if "max_nodes" in ch and 2 * cons.max_nodes < _max_nodes(cons):
            # the smallest raise first (twice the nodes), then as many nodes as a scenario may allow
            p = rp(with_changes(sc, catalog, constraints={"max_nodes": 2 * cons.max_nodes}))
        if not _ok(p):
            p = rp(with_changes(sc, catalog, constraints=ch))
        if _ok(p):
            out.append(f"{_limit_words(p, cons, ch)}: re-planned with it, the solver buys {bought(p)}")
    if not out and len(tries) == 2:
        ch = {**tries[0], **tries[1]}
        p = rp(with_changes(sc, catalog, constraints=ch))
        if _ok(p):
            out.append(f"{_limit_words(p, cons, ch)} together: re-planned with them, the solver buys {bought(p)}")
    return out


def _limit_words(p: Any, cons: Any, ch: dict[str, Any]) -> str:
    """'max_cards: 8 (the scenario sets 2)' / 'max_nodes: 2 (the scenario sets 1)', the re-plan's values."""
    parts = []
    if "max_cards" in ch:
        parts.append(f"max_cards: {max(int(p.choice['cards_per_node']), 1)} (the scenario sets {cons.max_cards})")
    if "max_nodes" in ch:
        parts.append(f"max_nodes: {int(p.choice['nodes'])} (the scenario sets {cons.max_nodes})")
    return " and ".join(parts)


def _card_fixes(cs: Any, catalog: Any, rp: _Replanner) -> list[str]:
    """Other cards for a deadline miss, each re-planned as the only card allowed (module docstring)."""
    from planner.solve.suggest import faster_cards

    sc = cs.scenario
    cons = sc.constraints
    out = []
    for gid in faster_cards(cs, catalog)[:2]:
        base = {"allowed_gpus": (gid,), "vendors": None, "excluded_gpus": ()}
        p = rp(with_changes(sc, catalog, constraints=base))
        if not _ok(p) and (cons.max_cards is not None or cons.max_nodes < _max_nodes(cons)):
            p = rp(with_changes(sc, catalog, constraints={**base, "max_cards": None, "max_nodes": _max_nodes(cons)}))
        budget = ""
        if not _ok(p) and cons.budget_usd is not None:
            p = rp(with_changes(sc, catalog, constraints={**base, "max_cards": None, "max_nodes": _max_nodes(cons),
                                                          "budget_usd": None}))
            if _ok(p):
                budget = f" and budget_usd >= ${p.total_usd:,.2f} (the scenario sets ${cons.budget_usd:,.2f})"
        if not _ok(p):
            continue
        limits = {k: None for k, over in (
            ("max_cards", cons.max_cards is not None and int(p.choice["cards_per_node"]) > cons.max_cards),
            ("max_nodes", int(p.choice["nodes"]) > cons.max_nodes)) if over}
        also = (" and " + _limit_words(p, cons, limits)) if limits else ""
        out.append(f"another card: allowed_gpus: [{gid}]{also}{budget}: re-planned with "
                   f"{'them' if also or budget else 'it'}, the solver buys {bought(p)}")
    return out


#: A deadline or SLO fix of more cards or replicas of the closest machine ('3 replicas of tp 1 (3 x
#: rtx-4090): ...', '4 x h100-pcie: 9.1 h per run, within ...'): with no pinned key changed, the scenario it
#: needs is the scenario as written, so a re-plan of it is the plan that found nothing.
_SAME_KEYS = re.compile(r"^(?:\S+: )?(?:\d+ replicas? of tp \d+ |\d+ x [\w.-]+: )")
#: A training lever of planner.solve.suggest.DEADLINE_LEVERS on the closest machine ('checkpointing: none on 1 x ...').
_LEVER = re.compile(r"^(?:\S+: )?(checkpointing|recipe): (\S+) on \d+ x ")
_PIN = re.compile(r"; (\w+): (.+?) \(the scenario pins [^)]*\)")


def checked_pin_line(line: str, sc: Any, catalog: Any, rp: _Replanner) -> str:
    """A deadline or SLO fix that changes keys the scenario pins ('...; tp: 2 (the scenario pins 1)'),
    re-planned with those keys set: '' when the re-plan is refused or no re-plan is left (the fix is
    dropped), else the changes worded with the re-plan's machine and
    figures (its own figures, not the closest machine's)."""
    import yaml

    many = len(sc.workloads) > 1
    name = next((sw.name for sw in sc.workloads if line.startswith(f"{sw.name}: ")), None) if many else \
        sc.workloads[0].name
    if name is None:
        return line
    updates: dict[str, Any] = {}
    lever = _LEVER.match(line)
    if lever:
        updates[lever.group(1)] = yaml.safe_load(lever.group(2))
    for key, value in _PIN.findall(line):
        try:
            updates[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            return line
    p = rp(with_changes(sc, catalog, workload={name: updates}))
    if not _ok(p):
        return ""  # refused, or no re-plan left to check it: not offered
    pinned = [m.group(0)[2:] for m in _PIN.finditer(line)]
    words = " and ".join(([f"{lever.group(1)}: {lever.group(2)}"] if lever and not any(
        w.startswith(f"{lever.group(1)}: ") for w in pinned) else []) + pinned)
    pre = f"{name}: " if many else ""
    return f"{pre}{words}: re-planned with {'them' if len(updates) > 1 else 'it'}, the solver buys {bought(p)}"


_NODES = re.compile(r"(\d+) GPUs are (\d+) nodes of|that is (\d+) nodes of")
_GPUS_PIN = re.compile(r"gpus: (\d+) \(the scenario pins")


def checked_max_nodes(line: str, sc: Any, catalog: Any, rp: _Replanner) -> str:
    """Suggestion ``line`` (it says "raise max_nodes") with that change re-planned: unchanged when the
    re-plan with the nodes it names (and the ``gpus`` it names) finds a machine, else with the
    re-plan's closest miss, e.g. NICs that do not fit the slots."""
    m = _NODES.search(line)
    if m is None:
        return line
    nodes = int(m.group(2) or m.group(3))
    g = _GPUS_PIN.search(line)
    wl = {sw.name: {"gpus": int(g.group(1))} for sw in sc.workloads if sw.task == "train"} if g else None
    p = rp(with_changes(sc, catalog, constraints={"max_nodes": max(nodes, sc.constraints.max_nodes)}, workload=wl))
    if p is None or _ok(p):
        return line
    also = f" and gpus: {g.group(1)}" if g else ""
    return line.replace("raise max_nodes", f"raising max_nodes is not enough: re-planned with max_nodes: {nodes}{also} "
                        f"nothing fits either ({closest_miss(p, NODE_MISSES)})", 1)


__all__ = ["MAX_REPLANS", "NODES_FACTOR", "NODE_MISSES", "SERVE_LEVERS", "bought", "checked_max_nodes", "checked_pin_line", "closest_miss", "nested", "replanned_fixes",
           "with_changes"]
