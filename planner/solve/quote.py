"""Quote line items: what a purchase consists of, each with its price's source and date.

The solver turns a chosen configuration into :class:`LineItem` rows; the report writers
turn them into a quote whose totals are live formulas. Money is USD.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date
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
        mpn: the manufacturer part number of a product that matches the line (None where the catalog
            does not give one: never guessed; ``price_kind`` says whether the price is that product's).
        seller, lead_time_days, warranty_months, quote_valid_until: the ordering keys of the catalog
            entry or overlay the line comes from (planner.catalog.schema.ORDER_FIELDS), None where
            not known.

    Categories: 'gpu', 'memory', 'network', extras' own; a platform is either its parts, one line
    each ('cpu', 'motherboard', 'chassis', 'psu', 'cooler', 'storage': planner.catalog.platforms.
    PART_CATEGORIES), when the catalog prices every part and they sum to the platform's price, or
    one priced 'platform' line followed by its parts as unpriced lines (price kind
    :data:`INCLUDED`, unit price 0): :func:`platform_lines`.
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
    mpn: str | None = None
    seller: str | None = None
    lead_time_days: int | None = None
    warranty_months: int | None = None
    quote_valid_until: str | None = None

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


#: The price kind of a part's line whose price is in its platform's line (unit price 0).
INCLUDED = "included"


def order_of(record: Any) -> dict[str, Any]:
    """The ordering keys of a catalog record (mpn, seller, lead time, warranty, quote validity) as
    :class:`LineItem` arguments; None for each one the record does not carry."""
    return {k: getattr(record, k, None) for k in ("mpn", "seller", "lead_time_days", "warranty_months",
                                                   "quote_valid_until")}


def valid_until(item: object) -> date | None:
    """The last day a line's vendor quote holds (its ``quote_valid_until``), as a date; None when the
    line carries none or it is unreadable. 'YYYY-MM' means the month's last day."""
    text = getattr(item, "quote_valid_until", None)
    if not text:
        return None
    try:
        if len(str(text)) == 7:
            y, m = (int(x) for x in str(text).split("-"))
            return date(y, m, calendar.monthrange(y, m)[1])
        return date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


def expired(item: object, on: date) -> bool:
    """Whether the line's vendor quote (``quote_valid_until``) lapsed before ``on``."""
    last = valid_until(item)
    return last is not None and last < on


def lapsed_quotes_warning(items: Any, on: date) -> str | None:
    """The warning naming the lines whose seller's quote lapsed before ``on`` (:func:`expired`), or None."""
    lapsed = [i for i in items if expired(i, on)]
    if not lapsed:
        return None
    return (f"EXPIRED sellers' quotes (their last day is before {on.isoformat()}): "
            + ", ".join(f"{i.catalog_id or i.description} (valid until {i.quote_valid_until})" for i in lapsed)
            + "; get new quotes before ordering")


def order_details(item: object, sep: str = "; ") -> str:
    """A line's ordering keys in words, as the Quote sheet's last column and the console show them: 'MPN 100-100001277WOF;
    seller ...; lead time 14 days; warranty 36 months; quote valid until 2027-01-31', each part left out
    where the line does not carry it (never guessed); '' when it carries none."""
    parts = []
    for key, text in (("mpn", "MPN {}"), ("seller", "seller {}"), ("lead_time_days", "lead time {} days"),
                      ("warranty_months", "warranty {} months"), ("quote_valid_until", "quote valid until {}")):
        value = getattr(item, key, None)
        if value is not None:
            parts.append(text.format(value))
    return sep.join(parts)


def platform_lines(plat: Any, nodes: int, description: str, *, used: bool = False) -> list[LineItem]:
    """The quote lines of ``nodes`` machines of platform ``plat`` (its price as the plan pays it:
    ``plat.base_price_usd`` and :func:`price_of`).

    Split into its parts (``plat.parts``, planner.catalog.platforms.PlatformPart), one line per part
    at its own price, kind, source and date, when every part is priced and they sum to the price paid
    (to the cent) and the unit is new; else one priced line (``description``, category 'platform')
    and, where parts are listed, one unpriced line per part (price kind :data:`INCLUDED`, unit price
    0, the platform line's source and date): the parts are named for ordering without inventing a
    split of a bundle price the sources do not give. The lines' total is ``nodes`` x the price.

    Args:
        plat: a planner.catalog.platforms.Platform (priced: planner.catalog.prices.priced_catalog).
        nodes: machines, >= 1.
        description: the bundle line's text.
        used: the unit is bought used (its parts are never split).
    """
    kind, cond, source, as_of = price_of(plat)
    price = float(plat.base_price_usd)
    parts = tuple(getattr(plat, "parts", ()) or ())
    whole = order_of(plat)
    seller = {k: v for k, v in whole.items() if k != "mpn"}
    suffix = " (used)" if used else ""
    total = plat.parts_usd if parts else None
    if total is not None and not used and abs(total - price) < 0.005:
        return [LineItem(f"{x.name}{suffix} ({x.quantity} per {plat.id} machine)" if x.quantity > 1 else
                         f"{x.name}{suffix} (for {plat.id})", x.category, plat.id, float(x.usd),
                         x.quantity * nodes, x.kind, x.source, x.as_of, cond, mpn=x.mpn, **seller)
                for x in parts]
    items = [LineItem(description, "platform", plat.id, price, nodes, kind, source, as_of, cond, **whole)]
    for x in parts:
        items.append(LineItem(f"{x.name}{suffix}: part of the {plat.id} line, priced there" +
                              (f" ({x.quantity} per machine)" if x.quantity > 1 else ""),
                              x.category, plat.id, 0.0, x.quantity * nodes, INCLUDED,
                              f"the {plat.id} line's price and source", as_of, cond, mpn=x.mpn, **seller))
    return items


def subtotal_usd(items: list[LineItem]) -> float:
    """Sum of the line totals, USD."""
    return sum(i.total_usd for i in items)
