"""How much the chosen machine depends on its prices: break-even prices and the price ranges.

The candidate table holds every feasible machine with its purchase price. A machine's price is
linear in the unit prices of its parts::

    capex(r) = sum over parts p of q(r, p) x price(p) + network cables + extras

with q(r, p) the units of part p machine r buys: cards_total GPUs, ``nodes`` platforms,
``dimm_count x nodes`` DIMMs, ``nic_count`` NICs, ``switch_count`` switches (cables and the
scenario's extras do not change with the parts' prices). Re-pricing one part p from its price x0
to x moves every row by q(r, p) x (x - x0), so the chosen row c stays first against a rival r as
long as::

    capex(c) + q(c, p) (x - x0) <= capex(r) + q(r, p) (x - x0)
    <=>  x <= x0 + (capex(r) - capex(c)) / (q(c, p) - q(r, p))     when q(c, p) > q(r, p)

The *flip price* of a part of the choice is the least of these over the feasible rivals (the
rival reaching it is the *runner-up* for that price); a part of the runner-up that the choice
does not buy flips the choice when it falls below ``x0 - (capex(r) - capex(c)) / q(r, p)``.
Exact arithmetic on the solver's own table: nothing is re-solved and no step search is made.

Across ranges: every price lies within its ``low_usd``..``high_usd`` (planner.catalog.prices; a
price without a range is taken as exact). The choice holds when, for every feasible rival r, the
worst case for c still leaves it no dearer: the largest of ``capex(c) - capex(r)`` over the box of
prices puts each part at its high where c buys more of it than r, at its low where r buys more
(c's own parts at their highs, r's at their lows when they share none), so the check is::

    capex(c) - capex(r) + sum_p (q(c,p) - q(r,p)) x (bound(p) - x0(p)) <= 0   for every r

The budget (``constraints.budget_usd``, capex extras included): raising a part of the choice can
put the choice itself over the budget before any rival wins. The choice reaches the budget B at::

    x_B = x0 + (B - capex(c)) / q(c, p)

and when ``x_B`` lies below the flip price the item says so (``over_budget_above_usd``): above it
the choice is excluded by the budget, and so is the runner-up at the flip price (both cost the same
there, above B). The machine that would then be chosen is the cheapest rival still within the
budget at ``x_B`` (``over_budget_pick``; '' when none is). Across the ranges, the choice with its
parts at their highs is checked against the budget too (``over_budget_at_highs_usd``).

Only the ``capex`` objective is a price ranking; ``time_to_result`` does not depend on prices,
and ``cost_per_job`` / ``tco`` weigh capex against time and energy (planner.cost.objective): for
those the sensitivity is not computed (``holds_across_ranges`` None, a note says so). A machine
that only the budget rule excludes is not a rival here (it is not among the feasible rows).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: Part categories re-priced, in the quote's order.
CATEGORIES = ("gpu", "platform", "memory", "network")

#: Money below this (USD) is a tie (the table's prices are rounded to cents).
_CENT = 0.005


@dataclass(frozen=True)
class SensitivityItem:
    """One price that decides the choice.

    Attributes:
        catalog_id: the part's catalog id.
        category: ``gpu``, ``platform``, ``memory`` or ``network`` (as the quote's lines).
        unit_price_usd: the price the plan pays for one unit, USD.
        low_usd, high_usd: the range the price's sources give (None: the catalog gives none).
        quantity: units the chosen machine buys (0 for a part of the runner-up only).
        flip_price_usd: the break-even unit price, USD: above it (``direction`` ``above``, a part
            of the choice) or below it (``below``, a part only the runner-up buys) a rival is
            cheaper; None when no feasible rival gains from any change of this price.
        direction: ``above`` or ``below``.
        runner_up: the rival that wins past the flip price, as a machine ('' when none).
        within_range: the flip price lies within low..high (the price's own range reaches it).
        over_budget_above_usd: the unit price above which the choice costs more than the scenario's
            ``budget_usd``, USD, when that comes before the flip price (None: no budget, or the flip
            comes first).
        over_budget_pick: the machine the budget leaves cheapest above ``over_budget_above_usd``
            ('' when no feasible machine is within the budget there, or no budget applies).
    """

    catalog_id: str
    category: str
    unit_price_usd: float
    low_usd: float | None
    high_usd: float | None
    quantity: int
    flip_price_usd: float | None
    direction: str
    runner_up: str
    within_range: bool
    over_budget_above_usd: float | None = None
    over_budget_pick: str = ""

    def sentence(self) -> str:
        """'rtx-5090 $3,650.00 (range $3,200-$3,900): stays the pick up to $4,120.00; above it, 2 x ...'."""
        rng = (f" (range ${self.low_usd:,.2f}-${self.high_usd:,.2f})" if self.low_usd is not None
               else " (no range given)")
        head = f"{self.catalog_id} ${self.unit_price_usd:,.2f}{rng}"
        if self.flip_price_usd is None:
            return f"{head}: no rival gains from a change of this price" + self.budget_clause()
        mark = " (within its range)" if self.within_range else ""
        if self.direction == "above":
            text = (f"{head}: the choice stays the pick up to ${self.flip_price_usd:,.2f}{mark}; above it, "
                    f"{self.runner_up}")
            return text + self.budget_clause()
        return f"{head}, runner-up's part: below ${self.flip_price_usd:,.2f}{mark}, {self.runner_up} wins"

    def budget_clause(self) -> str:
        """'; but above $X the choice is over the budget (so is the runner-up at the flip): then M' ('' without one)."""
        if self.over_budget_above_usd is None:
            return ""
        then = (f"then {self.over_budget_pick}" if self.over_budget_pick
                else "then no feasible machine is within it")
        rival = " (and so is the runner-up at the flip price)" if self.flip_price_usd is not None else ""
        return (f"; but above ${self.over_budget_above_usd:,.2f} the choice is over the budget{rival}: {then}")


@dataclass(frozen=True)
class PriceSensitivity:
    """The price sensitivity of a plan (see the module docstring).

    Attributes:
        objective: the objective the plan ranks by.
        items: the deciding prices: every priced part of the choice (direction ``above``), then the
            runner-up's parts the choice does not buy (``below``).
        holds_across_ranges: the choice stays first with every price anywhere in its range (None:
            not computed for this objective).
        rivals: feasible machines checked (the feasible rows less the choice).
        worst_rival: the rival that beats the choice by the most at the ranges' worst case ('' when
            the choice holds).
        worst_margin_usd: at that worst case, how much cheaper (> 0) the worst rival is, USD
            (<= 0: the choice holds, by ``-worst_margin_usd`` at least).
        unranged: catalog ids of deciding prices the catalog gives no range for (taken as exact).
        note: why the sensitivity was not computed ('' when it was).
        budget_usd: the scenario's ``budget_usd`` (None: no budget).
        over_budget_at_highs_usd: with every part of the choice at its high, what the choice costs
            when that is over ``budget_usd``, USD (None: within it, or no budget).
    """

    objective: str
    items: tuple[SensitivityItem, ...]
    holds_across_ranges: bool | None
    rivals: int = 0
    worst_rival: str = ""
    worst_margin_usd: float = 0.0
    unranged: tuple[str, ...] = ()
    note: str = ""
    budget_usd: float | None = None
    over_budget_at_highs_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``plan --json``'s ``price_sensitivity``)."""
        d = asdict(self)
        d["items"] = [asdict(i) for i in self.items]
        d["unranged"] = list(self.unranged)
        return d

    def lines(self) -> list[str]:
        """The text report's lines (no heading)."""
        if self.note:
            return [self.note]
        out = [i.sentence() for i in self.items]
        if not self.rivals:
            out.append("No other machine is feasible: the prices do not change the choice.")
        elif self.holds_across_ranges:
            out.append(f"Across every price's low-high range the choice holds against all {self.rivals:,} feasible "
                       f"rivals (worst case: still ${-self.worst_margin_usd:,.2f} cheaper).")
        else:
            out.append(f"Across the price ranges the choice does not hold: with its parts at their highs and the "
                       f"rival's at their lows, {self.worst_rival} costs ${self.worst_margin_usd:,.2f} less.")
        if self.over_budget_at_highs_usd is not None and self.budget_usd is not None:
            out.append(f"With its parts at their highs the choice costs ${self.over_budget_at_highs_usd:,.2f}, over "
                       f"the ${self.budget_usd:,.2f} budget.")
        if self.unranged:
            out.append("No range given (taken as exact): " + ", ".join(self.unranged) + ".")
        return out


def machine_text(row: dict[str, Any]) -> str:
    """A candidate row as a machine: '2 x rtx-4090 on xeon-w2400, 4 x ddr5-rdimm-32g' (x N nodes)."""
    text = f"{int(row['cards_per_node'])} x {row['gpu_id']} on {row['platform_id']}"
    if row["dimm_id"]:
        text += f", {int(row['dimm_count'])} x {row['dimm_id']}"
    if int(row["nodes"]) > 1:
        text = f"{int(row['nodes'])} nodes of [{text}]"
    return text


def _price_range(record: Any) -> tuple[float | None, float | None]:
    price = getattr(record, "price", None)
    if price is None or price.low_usd is None:
        return None, None
    return float(price.low_usd), float(price.high_usd)


class _RowQuantity:
    """A part's quantity per table row, held sparsely: only the rows that buy the part (``rows``,
    ascending) and their quantities. Indexed like the dense array it stands for (an int row, or an
    integer array of rows: 0 where the row does not buy the part), so memory grows with the table, not
    with the table times the number of parts (issue 33's 64x catalog)."""

    __slots__ = ("rows", "qty")

    def __init__(self, rows: Any, qty: Any) -> None:
        self.rows, self.qty = rows, qty

    def __getitem__(self, at: Any) -> Any:
        import numpy as np

        pos = np.searchsorted(self.rows, at)
        hit = (pos < self.rows.size) & (self.rows[np.minimum(pos, self.rows.size - 1)] == at)
        if np.ndim(at) == 0:
            return self.qty[pos] if hit else self.qty.dtype.type(0)
        out = np.zeros(np.shape(at), dtype=self.qty.dtype)
        out[hit] = self.qty[pos[hit]]
        return out


def _parts(cs: Any, catalog: Any) -> dict[tuple[str, str], tuple[Any, Any, float, tuple[float | None, float | None]]]:
    """(category, id) -> (quantity per row, unit price, (low, high)) for every priced part of the
    table (the quantity is a :class:`_RowQuantity` over all rows: 0 where a row does not buy it)."""
    import numpy as np

    t = cs.table
    out: dict[tuple[str, str], Any] = {}
    gpus = {g.id: g for g in cs.hardware.gpus}
    plats = {p.id: p for p in cs.hardware.platforms}
    dimms = {r.dimm.id: r.dimm for r in cs.hardware.ram}
    nodes = t["nodes"].astype(np.int64)
    specs = (("gpu", "gpu_id", t["cards_total"].astype(np.int64), lambda i: gpus.get(i), "price_usd"),
             ("platform", "platform_id", nodes, lambda i: plats.get(i), "base_price_usd"),
             ("memory", "dimm_id", t["dimm_count"].astype(np.int64) * nodes,
              lambda i: dimms.get(i) or catalog.dimm(i), "price_usd"),
             ("network", "nic_id", t["nic_count"].astype(np.int64), catalog.nic, "price_usd"),
             ("network", "switch_id", t["switch_count"].astype(np.int64), catalog.switch, "price_usd"))
    for cat, col, qty, find, attr in specs:
        rows_of: dict[Any, list[int]] = {}
        for i, pid in enumerate(t[col].tolist()):
            if pid:
                rows_of.setdefault(pid, []).append(i)
        for pid, rows in rows_of.items():
            rec = find(pid)
            if rec is None or getattr(rec, attr, None) is None:
                continue
            at = np.asarray(rows, dtype=np.int64)
            out[(cat, pid)] = (_RowQuantity(at, qty[at]), float(getattr(rec, attr)), _price_range(rec))
    return out


def price_sensitivity(cs: Any, catalog: Any, row: int) -> PriceSensitivity:
    """The price sensitivity of choosing table row ``row`` of candidate set ``cs`` (module docstring).

    Args:
        cs: a :class:`planner.solve.candidates.CandidateSet`, ranked.
        catalog: the priced catalog the candidates were built from (NICs and switches are looked up).
        row: the chosen row (the first feasible one).

    Returns:
        A :class:`PriceSensitivity`.
    """
    import numpy as np

    objective = cs.objective
    if objective == "time_to_result":
        return PriceSensitivity(objective, (), True, note="The objective time_to_result does not depend on prices: "
                                                          "no price changes the choice.")
    if objective != "capex":
        return PriceSensitivity(objective, (), None,
                                note=f"Price sensitivity is computed for the capex objective; this plan ranks by "
                                     f"{objective}, which weighs the price against time and energy (not computed).")
    t = cs.table
    feasible = np.nonzero(t["feasible"])[0]
    rivals = feasible[feasible != row]
    capex = t["capex_usd"].astype(float)
    d = capex[rivals] - capex[row]  # how much dearer each rival is (>= 0 in capex order)
    parts = _parts(cs, catalog)
    items: list[SensitivityItem] = []
    texts: dict[int, str] = {}

    def text(i: int) -> str:
        if i not in texts:
            texts[i] = machine_text(t.row(i))
        return texts[i]

    budget = getattr(getattr(cs.scenario, "constraints", None), "budget_usd", None)

    def item(key: tuple[str, str], flip: float | None, direction: str, rival: int | None, qty_c: int) -> SensitivityItem:
        q, x0, (lo, hi) = parts[key]
        flip = None if flip is None else round(max(flip, 0.0), 2)
        inside = flip is not None and lo is not None and lo <= flip <= hi  # type: ignore[operator]
        over, pick = None, ""
        if budget is not None and direction == "above" and qty_c > 0:
            x_b = x0 + (float(budget) - capex[row]) / qty_c  # the choice reaches the budget here
            if flip is None or x_b < flip:
                over = round(x_b, 2)
                # the rivals' capex a cent above that price (a rival tied with the choice goes over with it)
                at = capex[rivals] + q[rivals] * (x_b + 0.01 - x0)
                ok = np.nonzero(at <= float(budget) + 1e-9)[0]
                if ok.size:
                    pick = text(int(rivals[ok[int(np.argmin(at[ok]))]]))
        return SensitivityItem(key[1], key[0], x0, lo, hi, qty_c, flip, direction,
                               text(rival) if rival is not None else "", bool(inside), over, pick)

    chosen = [k for k, (q, _, _) in parts.items() if q[row] > 0]
    for key in chosen:
        q = parts[key][0]
        k = (q[row] - q[rivals]).astype(float)
        up = k > 0
        if rivals.size and up.any():
            flips = parts[key][1] + d[up] / k[up]
            j = int(np.argmin(flips))
            items.append(item(key, float(flips[j]), "above", int(rivals[up][j]), int(q[row])))
        else:
            items.append(item(key, None, "above", None, int(q[row])))
    if rivals.size:
        second = int(rivals[0])
        for key, (q, x0, _) in parts.items():
            if q[row] > 0 or q[second] == 0:
                continue
            has = q[rivals] > 0
            flips = x0 - d[has] / q[rivals][has]
            j = int(np.argmax(flips))
            if flips[j] <= 0:
                items.append(item(key, None, "below", None, 0))
            else:
                items.append(item(key, float(flips[j]), "below", int(rivals[has][j]), 0))
    # across the ranges: the largest capex(c) - capex(r) over the box of prices, per rival
    worst = -d.copy()
    for key, (q, x0, (lo, hi)) in parts.items():
        if lo is None:
            continue
        k = (q[row] - q[rivals]).astype(float)
        worst += np.where(k > 0, k * (hi - x0), k * (lo - x0))
    holds = bool(rivals.size == 0 or worst.max() <= _CENT)
    w = int(np.argmax(worst)) if rivals.size else -1
    unranged = tuple(k[1] for k in chosen if parts[k][2][0] is None)
    at_highs = capex[row] + sum(float(q[row]) * (hi - x0) for q, x0, (lo, hi) in (parts[k] for k in chosen)
                                if hi is not None)
    over_highs = round(at_highs, 2) if budget is not None and at_highs > float(budget) + _CENT else None
    return PriceSensitivity(objective, tuple(items), holds, int(rivals.size),
                            "" if holds or w < 0 else text(int(rivals[w])),
                            round(float(worst[w]), 2) if w >= 0 else 0.0, unranged,
                            budget_usd=None if budget is None else float(budget), over_budget_at_highs_usd=over_highs)


def no_plan_lines(cs: Any) -> list[str]:
    """The price sensitivity of a scenario nothing fits (the no-plan message's lines, no heading).

    Only the budget rule depends on prices: a candidate whose one failing rule is the budget
    (``binding == 'budget'``, planner.solve.candidates) would fit if its capex fell to
    ``budget_usd``. The cheapest such machine says by how much its parts' prices would have to fall
    in all; without such a candidate (or without a budget) no price changes the answer.

    Args:
        cs: the ranked :class:`planner.solve.candidates.CandidateSet`, every row infeasible.
    """
    import numpy as np

    t = cs.table
    budget = getattr(getattr(cs.scenario, "constraints", None), "budget_usd", None)
    if budget is None:
        return ["No price changes this answer: the scenario sets no budget, and no other rule depends on prices."]
    only = np.nonzero(t["binding"] == "budget")[0]
    if not only.size:
        return [f"No price changes this answer: no machine misses on the ${float(budget):,.2f} budget alone."]
    capex = t["capex_usd"].astype(float)
    i = int(only[int(np.argmin(capex[only]))])
    over = capex[i] - float(budget)
    return [f"{machine_text(t.row(i))} misses only on the budget: it costs ${capex[i]:,.2f}, ${over:,.2f} over the "
            f"${float(budget):,.2f} budget; its parts' prices would have to fall by that much in all "
            f"({over / capex[i]:.1%}) for it to fit."]


__all__ = ["CATEGORIES", "PriceSensitivity", "SensitivityItem", "machine_text", "no_plan_lines", "price_sensitivity"]
