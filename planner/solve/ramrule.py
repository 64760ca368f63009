"""What the RAM rule of thumb costs a plan, and the machine sized to the memory model's need instead.

The solver's RAM rule (planner.solve.candidates, rule ``ram``) asks each node for at least
``max(host peak, ram_vram_min x installed VRAM)``, or ``ram_vram_min_offload`` x with offload (2 and
6 by default: the rule DL workstation sizing guides give, planner.solve.scenario.RAM_VRAM_MIN). It
stays the default: it is what buyers expect. But where the rule, not the memory model, sets the RAM
of the chosen machine or rules out a cheaper machine, the plan says so with the need-sized
alternative: :func:`ram_rule_note` checks the same candidates again with both multiples at 0, so that
RAM need only hold the memory model's host peak (planner.memory.host: the OS and framework baseline,
the loading copy, DataLoader workers, pinned buffers: the headroom the need is sized with), and
compares the cheapest machine that passes every other rule with the plan.

Money is USD, sizes are bytes. Never prints and never reads files.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from planner.core.units import GiB
from planner.solve.candidates import CandidateSet, evaluate, ram_rule

#: The columns that describe a machine in :class:`RamRuleNote` (a row of the candidate table).
MACHINE_KEYS = ("gpu_id", "platform_id", "cards_per_node", "nodes", "dimm_id", "dimm_count", "ram_bytes",
                "ram_usd", "capex_usd", "host_need_bytes", "vram_node_bytes")


def _machine(row: dict[str, Any]) -> dict[str, Any]:
    """A candidate row's machine, as plain values (:data:`MACHINE_KEYS`)."""
    out: dict[str, Any] = {}
    for k in MACHINE_KEYS:
        v = row[k]
        out[k] = v if isinstance(v, str) else (float(v) if k.endswith("_usd") else int(v))
    return out


def _gib(n: int) -> str:
    return f"{n / GiB:,.2f} GiB"


def _ram(m: dict[str, Any]) -> str:
    """'8 x ddr5-rdimm-16g (128.00 GiB per node, $1,792.00)'."""
    nodes = max(int(m["nodes"]), 1)
    return (f"{m['dimm_count']} x {m['dimm_id']} ({_gib(m['ram_bytes'])} per node, "
            f"${m['ram_usd'] / nodes:,.2f}{' per node' if nodes > 1 else ''})")


def _shape(m: dict[str, Any]) -> str:
    text = f"{m['cards_per_node']} x {m['gpu_id']} on {m['platform_id']}"
    return f"{m['nodes']} nodes of {text}" if m["nodes"] > 1 else text


@dataclass(frozen=True)
class RamRuleNote:
    """Where the RAM rule of thumb, not the memory model, sets the plan's RAM or excludes a cheaper machine.

    Attributes:
        multiple: the rule's RAM-to-installed-VRAM multiple on the chosen machine (2, or 6 with offload).
        constraint: the scenario key that sets it ('ram_vram_min' or 'ram_vram_min_offload').
        offload: whether the chosen machine's workloads offload to the CPU (the 6x rule).
        rule_bytes: RAM per node the rule asks of the chosen machine: ceil(multiple x installed VRAM).
        host_peak_bytes: the memory model's host RAM peak per node on the chosen machine (largest
            over the workloads; planner.memory.host).
        sets_ram: the rule sets the chosen machine's RAM (a smaller configuration holds the host peak
            and costs less).
        planned: the chosen machine (:data:`MACHINE_KEYS`: ids, counts, bytes, USD). ``dimm_count``,
            ``ram_bytes``, ``host_need_bytes`` and ``vram_node_bytes`` are per node; ``ram_usd`` and
            ``capex_usd`` are the whole plan's, every node's (the sentences divide by ``nodes``).
        same_machine: the chosen GPUs and platform with the cheapest RAM that holds the host peak
            (and passes every other rule), None when ``sets_ram`` is False.
        excluded: the cheapest machine that passes every rule but the RAM rule, when it is another
            machine than the chosen one and cheaper (capex objective only): the rule excludes it.
            None otherwise.
    """

    multiple: float
    constraint: str
    offload: bool
    rule_bytes: int
    host_peak_bytes: int
    sets_ram: bool
    planned: dict[str, Any]
    same_machine: dict[str, Any] | None
    excluded: dict[str, Any] | None

    def lines(self) -> list[str]:
        """The note in sentences, for the console, the Summary sheet and the JSON."""
        p = self.planned
        rule = (f"the {self.multiple:g}x-installed-VRAM rule of thumb (constraints.{self.constraint}"
                + (", with CPU offload" if self.offload else "") + ")")
        out = []
        if self.sets_ram:
            out.append(f"RAM set by {rule}, not by the memory model: {_gib(self.rule_bytes)} per node asked, "
                       f"{_ram(p)} planned; the memory model's host RAM peak is {_gib(self.host_peak_bytes)}.")
        if self.same_machine is not None:
            s = self.same_machine
            out.append(f"Sized to the need (the host peak, its OS and framework baseline included): {_ram(s)} on "
                       f"the same machine, total ${s['capex_usd']:,.2f}, ${p['capex_usd'] - s['capex_usd']:,.2f} "
                       f"less than the plan's ${p['capex_usd']:,.2f}.")
        if self.excluded is not None:
            x = self.excluded
            out.append(f"The rule excludes a cheaper machine: {_shape(x)} with {_ram(x)}, total "
                       f"${x['capex_usd']:,.2f}, ${p['capex_usd'] - x['capex_usd']:,.2f} less than the plan; its RAM "
                       f"holds the memory model's host peak ({_gib(x['host_need_bytes'])}) but not the rule's "
                       f"multiple of its {_gib(x['vram_node_bytes'])} of VRAM.")
        out.append(f"The plan keeps the rule (the default buyers expect); constraints.{self.constraint}: 0 in the "
                   "scenario plans by the memory model's need alone.")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The note as JSON values (``plan --json``'s ``ram_rule``)."""
        return {**dataclasses.asdict(self), "lines": self.lines()}


def ram_rule_note(cs: CandidateSet, row: int) -> RamRuleNote | None:
    """What the RAM rule costs the plan of table row ``row`` of ``cs``, or None when it costs nothing.

    The candidates are checked again (:func:`planner.solve.candidates.evaluate`, the same hardware
    rows and workload usages) with ``ram_vram_min`` and ``ram_vram_min_offload`` at 0: RAM then
    need only hold the memory model's host peak. The rule costs something when a feasible row of
    that check is cheaper than the choice: on the same GPUs and platform (``same_machine``: the rule
    set the RAM), or on another machine (``excluded``; under the capex objective only, where the
    choice is the cheapest feasible row, so a cheaper row feasible without the rule is one the rule
    excluded).

    Raises:
        nothing of its own (the solver's invariants).
    """
    import numpy as np

    cons = cs.scenario.constraints
    if not cons.ram_vram_min and not cons.ram_vram_min_offload:
        return None
    t = cs.table
    choice = t.row(row)
    capex = float(choice["capex_usd"])
    offload = bool(choice["offload"])
    mult = ram_rule(cons, offload)
    rule_bytes = math.ceil(mult * int(choice["vram_node_bytes"]))
    host = int(choice["host_need_bytes"])
    # the check again only where the rule may cost something: it asks more than the host peak of
    # the choice, or a cheaper row failed on RAM while holding its own host peak
    cheaper_ram_miss = (t["binding"] == "ram") & (t["ram_bytes"] >= t["host_need_bytes"]) & (t["capex_usd"] < capex)
    if rule_bytes <= host and not (cs.objective == "capex" and bool(cheaper_ram_miss.any())):
        return None
    free = dataclasses.replace(cons, ram_vram_min=0.0, ram_vram_min_offload=0.0)
    cs2 = evaluate(dataclasses.replace(cs.scenario, constraints=free), cs.hardware, cs.usages, explain=False,
                   timing=cs.timing)
    t2 = cs2.table
    ok = np.nonzero(t2["feasible"] & (t2["capex_usd"] < capex - 0.005))[0]
    if not ok.size:
        return None
    same_rows = [int(i) for i in ok if t2["gpu_id"][i] == choice["gpu_id"]
                 and t2["platform_id"][i] == choice["platform_id"]
                 and int(t2["cards_per_node"][i]) == int(choice["cards_per_node"])
                 and int(t2["nodes"][i]) == int(choice["nodes"])]
    same = _machine(t2.row(min(same_rows, key=lambda i: float(t2["capex_usd"][i])))) if same_rows else None
    excluded = None
    if cs.objective == "capex":
        first = _machine(t2.row(int(min(ok, key=lambda i: (float(t2["capex_usd"][i]), int(i))))))
        if same is None or first["capex_usd"] < same["capex_usd"] - 0.005:
            excluded = first
    if same is None and excluded is None:
        return None
    return RamRuleNote(multiple=mult, constraint="ram_vram_min_offload" if offload else "ram_vram_min",
                       offload=offload, rule_bytes=rule_bytes, host_peak_bytes=host, sets_ram=same is not None,
                       planned=_machine(choice), same_machine=same, excluded=excluded)
