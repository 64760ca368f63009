"""Quote line items: what a purchase consists of, each with its price's source and date.

The solver turns a chosen configuration into :class:`LineItem` rows; the report writers
turn them into a quote whose totals are live formulas. Money is USD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


#: A line item's price is called stale when dated this many months before the catalog's newest
#: entry (planner.solve.warnings.stale_items); the workbook flags those lines.
STALE_PRICE_MONTHS = 24

#: Where a platform line's description turns to the parts its price is made of (the console
#: prints that part below its table).
PARTS_SEPARATOR = "; priced as: "


@dataclass(frozen=True)
class LineItem:
    """One line of a quote.

    Attributes:
        description: what is bought, e.g. 'NVIDIA RTX 4090 24 GB'.
        category: 'gpu', 'platform', 'memory', 'network', 'extra'.
        catalog_id: the catalog entry id ('' for items the scenario lists).
        unit_price_usd: price of one unit, USD.
        quantity: units.
        price_kind: 'msrp', 'street', 'used', 'estimate', 'quote' or 'quote-range' (planner.catalog.prices).
        source: where the price comes from (URL or document).
        as_of: date of the price (YYYY-MM-DD or YYYY-MM).
        condition: 'new' or 'used' (a used unit's description says so too).
    """

    description: str
    category: str
    catalog_id: str
    unit_price_usd: float
    quantity: int
    price_kind: str
    source: str
    as_of: str
    condition: str = "new"

    @property
    def total_usd(self) -> float:
        return self.unit_price_usd * self.quantity


def price_of(record: Any) -> tuple[str, str, str, str]:
    """(kind, condition, source, as_of) of a catalog part's chosen price (planner.catalog.prices): the
    price's own source and date where the part carries several dated prices, else the entry's."""
    price = getattr(record, "price", None)
    if price is not None:
        return price.kind, price.condition, price.source, price.as_of
    return (getattr(record, "price_kind", None) or "", "new", record.source, record.as_of)


def subtotal_usd(items: list[LineItem]) -> float:
    """Sum of the line totals, USD."""
    return sum(i.total_usd for i in items)
