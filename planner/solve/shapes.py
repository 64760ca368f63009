"""How a GPU count splits into the identical nodes the solver builds, for "What would fit".

The solver builds a machine as ``nodes`` identical nodes of ``cards_per_node`` cards, every card of
each used (planner.solve.hardware); a suggestion that names a GPU count must name a split the
candidate table holds, or say why the constraints cannot build it (issue 29 item 3: never "3 GPUs,
that is 2 node(s) of 2"). :func:`span` reads the split from the evaluated candidate table: the
rows of that GPU whose build rules (planner.solve.hardware.BUILD_RULES: price, form factor,
cooling, slots, lanes, power, the network between nodes) pass.

Never prints and never reads files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.solve.hardware import BUILD_RULES


@dataclass(frozen=True)
class Span:
    """``total`` cards as ``nodes`` identical nodes of ``per_node``.

    Attributes:
        total, per_node, nodes: the split (total = per_node x nodes).
        buildable: the candidate table has a row of this GPU and split that passes every build rule.
        why_not: '' when buildable, else why the scenario's constraints cannot build it, in words.
    """

    total: int
    per_node: int
    nodes: int
    buildable: bool
    why_not: str = ""

    def text(self) -> str:
        """'' for one node, else '2 nodes of 2'."""
        return "" if self.nodes == 1 else f"{self.nodes} nodes of {self.per_node}"

    def clause(self) -> str:
        """What a suggestion appends: ' (2 nodes of 2)' when buildable, '; that is 2 nodes of 2, <why
        not>' when not, '' for one buildable node."""
        if self.buildable:
            return f" ({self.text()})" if self.nodes > 1 else ""
        return f"; that is {self.text() or f'one node of {self.per_node}'}, {self.why_not}"


def split(n: int, node_max: int, multiple: int = 1) -> tuple[int, int]:
    """(per_node, nodes): ``n`` cards as the fewest identical nodes of at most ``node_max`` cards,
    each a multiple of ``multiple`` (a replica or tp group stays in one node); (n, 1) when none
    divides (the caller then says so)."""
    for per in range(min(n, max(node_max, 1)), 0, -1):
        if n % per == 0 and per % multiple == 0:
            return per, n // per
    return n, 1


def span(cs: Any, gpu_id: str, n: int, node_max: int, multiple: int = 1) -> Span:
    """How ``n`` cards of ``gpu_id`` are built (module docstring): the buildable split with the fewest
    nodes, else the fewest identical nodes of at most ``node_max`` and why the constraints cannot
    build it (more nodes than max_nodes, or the build rule its row fails)."""
    import numpy as np

    t = cs.table
    per_col, nodes_col, binding = t["cards_per_node"], t["nodes"], t["binding"]
    mask = (t["gpu_id"] == gpu_id) & (per_col * nodes_col == n) & (per_col % multiple == 0)
    rows = np.nonzero(mask)[0].tolist()
    ok = [i for i in rows if binding[i] not in BUILD_RULES]
    if ok:
        i = min(ok, key=lambda j: (int(nodes_col[j]), j))
        return Span(n, int(per_col[i]), int(nodes_col[i]), True)
    per, nodes = split(n, node_max, multiple)
    cons = cs.scenario.constraints
    if nodes > cons.max_nodes or per > node_max:
        # max_cards helps only where it, not the platforms (an 8-GPU HGX board, the slots), caps a node
        cards_bind = cons.max_cards is not None and cons.max_cards <= node_max
        why = (f"more than the scenario allows (max_nodes {cons.max_nodes}"
               + (f", max_cards {cons.max_cards}" if cons.max_cards else "") + "): raise "
               + ("max_cards or max_nodes" if cards_bind else "max_nodes"))
        return Span(n, per, nodes, False, why)
    same = [i for i in rows if int(per_col[i]) == per and int(nodes_col[i]) == nodes]
    if same:
        i = same[0]
        reason = str(t["why_not"][i]) if "why_not" in t.columns and t["why_not"][i] else ""
        return Span(n, per, nodes, False, f"which the constraints cannot build ({binding[i]}"
                    + (f": {reason}" if reason else "") + ")")
    return Span(n, per, nodes, False, "which no platform the constraints allow builds")


def buildable_totals(cs: Any, gpu_id: str) -> list[int]:
    """The GPU counts of ``gpu_id`` the candidate table builds (rows passing every build rule), ascending."""
    t = cs.table
    rows = (t["gpu_id"] == gpu_id).nonzero()[0].tolist()
    return sorted({int(t["cards_total"][i]) for i in rows if t["binding"][i] not in BUILD_RULES})


def pinned_split_lines(cs: Any, gpu_id: str, node_max: int) -> list[str]:
    """For each workload whose pinned ``gpus`` no buildable machine of ``gpu_id`` has: why (the count
    does not split into identical nodes the constraints build) and the counts they do build."""
    out = []
    many = len(cs.scenario.workloads) > 1
    built = buildable_totals(cs, gpu_id)
    for sw in cs.scenario.workloads:
        fixed = getattr(sw, "gpus", None)
        if not fixed:
            continue
        spans = [span(cs, gpu_id, n, node_max) for n in fixed]
        if any(x.buildable for x in spans):
            continue
        x = spans[0]
        counts = (", ".join(str(n) for n in built[:-1]) + f" or {built[-1]}" if len(built) > 1
                  else str(built[0]) if built else "none")
        shape = x.text() or f"one node of {x.per_node}"
        out.append(f"{sw.name + ': ' if many else ''}gpus: {x.total} (fixed by the scenario) does not split into "
                   f"identical nodes the constraints build: a node holds at most {node_max} x {gpu_id}, so {x.total} "
                   f"GPUs are {shape}, {x.why_not}; the machines the constraints build have {counts} GPU(s): pin "
                   "gpus to one of those")
    return out


def pinned_clause(sw: Any, n: int) -> str:
    """'' or, when the scenario pins the workload's ``gpus`` and ``n`` is not among them, the clause
    saying the suggestion changes it: '; gpus: 10 (the scenario pins 2)'."""
    fixed = getattr(sw, "gpus", None)
    if not fixed or n in fixed:
        return ""
    return f"; gpus: {n} (the scenario pins {' or '.join(str(x) for x in fixed)})"


def _yaml(value: Any) -> str:
    """A key's value as the scenario writes it: true/false, numbers and words plain."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml(x) for x in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def pinned_keys(v: Any) -> dict[str, Any]:
    """The keys variant ``v``'s workload entry pins (written with one value), with their values: the
    entry's keys less the choice keys the solver fills (auto, lists, or left out: ``v.choices``)."""
    chosen = {k for k, _ in getattr(v, "choices", ())}
    return {k: x for k, x in (getattr(v, "data", None) or {}).items() if k not in chosen}


def pin_changes(sw: Any, v: Any, updates: dict[str, Any], drop: tuple[str, ...] = ()) -> str:
    """'' or the clause a fix appends for each key the scenario pins that the fix changes, one
    wording everywhere (as :func:`pinned_clause`): '; zero: 3 (the scenario pins 2); method: qlora
    (the scenario pins full)'. ``updates``: the keys the fix sets; ``drop``: keys it leaves out."""
    pins = pinned_keys(v)
    if getattr(sw, "slo", None) is not None:
        # an slo: load sets concurrency and replicas (planner.solve.usages); load_key words a smaller load
        pins = {k: x for k, x in pins.items() if k not in ("concurrency", "replicas")}
    out = []
    for key, new in updates.items():
        if key == "gpus":
            out.append(pinned_clause(sw, int(new)))
            continue
        if key in pins and _yaml(pins[key]) != _yaml(new):
            out.append(f"; {key}: {_yaml(new)} (the scenario pins {_yaml(pins[key])})")
    for key in drop:
        if key in pins and key not in updates:
            out.append(f"; {key}: left out (the scenario pins {_yaml(pins[key])})")
    return "".join(out)


__all__ = ["Span", "buildable_totals", "pin_changes", "pinned_clause", "pinned_keys", "pinned_split_lines", "span",
           "split"]
