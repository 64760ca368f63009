"""Several dated prices per part, and the one a plan pays.

A GPU, DIMM or platform may carry a ``prices:`` list instead of the single ``price_usd`` (or
``base_price_usd``) + ``price_kind`` it carried before; each item is one observed price::

    prices:
      - {usd: 1599, kind: msrp, as_of: 2022-10-12, source: "REF:NV-GEFORCE-PAGES"}
      - {usd: 2749, kind: street, as_of: 2026-03, source: "REF:GPU-PRICES-2026", low_usd: 2200, high_usd: 2800}
      - {usd: 1000, kind: used, as_of: 2026-02, source: "REF:GPU-PRICES-2026", low_usd: 950, high_usd: 1100}

Keys: ``usd`` (one unit, USD), ``kind`` (:data:`PRICE_KINDS`: ``msrp`` the vendor's list price,
``street`` what retailers ask for a new unit, ``used`` what a used unit sells for, ``quote`` a
vendor's quote, ``quote-range`` the range published figures give for a part sold only on quotes
(datacenter GPUs and servers: ``low_usd`` / ``high_usd`` required; the Quote sheet says to ask for a
quote), ``estimate`` a figure inferred from other prices), ``condition`` (``new`` or
``used``; default ``used`` for kind used, else ``new``; a ``quote`` or ``estimate`` may be for a used
unit, an ``msrp`` never is, a ``street`` price of a used unit is kind ``used``), ``as_of`` (the
date it was observed, not after today), ``source`` (where), and optionally ``low_usd`` /
``high_usd`` (the range the sources give, which holds ``usd``), ``notes`` and ``exempt`` (a
mapping of a :mod:`planner.catalog.check` check name to the reason the shipped figure stands,
e.g. ``{stale: "out of production: no new unit is sold"}``). A single ``price_usd`` is read as
one item of its ``price_kind`` with the entry's ``source`` and ``as_of`` (backward compatible).

Which price a plan pays (:func:`select_price`, scenario ``constraints.price`` and ``used_ok``):

``street`` (the default): a new unit at the best-founded current price: a ``quote`` first, then
  ``street``, then ``quote-range``, then ``estimate``, then ``msrp`` (the only price some parts have), the newest of
  the first kind present. A part out of production (a GPU's ``discontinued``) is not sold new
  at its launch list price: its ``msrp`` is not paid, so without a dated ``street`` / ``quote`` /
  ``estimate`` of a new unit it has no new price (only ``used_ok: true`` buys it, used; the
  solver's ``price`` rule says why it is not bought).
``msrp``: the list price, where there is one (else as ``street``): for comparing machines at
  list prices.
``used_ok: true``: also the newest used price (a used ``quote`` before ``used`` before a used
  ``quote-range`` before a used ``estimate``); it is paid when it is below the new one (or when there is no new one).

:func:`priced_catalog` returns the catalog with every part's ``price_usd`` / ``price_kind`` (a
platform's ``base_price_usd``) and ``price`` set to that choice, so that the solver, the quote and
the reports see one price per part, with its own kind, condition, date and source.
"""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal
from fractions import Fraction
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planner.core.fields import Entry
from planner.core.units import binary_float_text, written_decimal
from planner.catalog.texts import free_text

#: Kinds of price (``prices[].kind`` and the legacy ``price_kind``).
PRICE_KINDS = ("msrp", "street", "used", "quote", "quote-range", "estimate")
#: Conditions of the unit a price is for.
CONDITIONS = ("new", "used")
#: Scenario ``constraints.price`` modes.
PRICE_MODES = ("street", "msrp")
#: Checks of ``planner catalog check`` a price item may be exempt from (planner.catalog.check).
EXEMPT_CHECKS = ("stale", "range")
#: Keys of one ``prices:`` item.
PRICE_ITEM_KEYS = ("usd", "kind", "condition", "as_of", "source", "low_usd", "high_usd", "notes", "exempt")

#: Preference among a new unit's prices per mode (lower first); the newest of the first kind wins.
NEW_ORDER: dict[str, dict[str, int]] = {
    "street": {"quote": 0, "street": 1, "quote-range": 2, "estimate": 3, "msrp": 4},
    "msrp": {"msrp": 0, "quote": 1, "street": 2, "quote-range": 3, "estimate": 4},
}
#: Preference among a used unit's prices.
USED_ORDER = {"quote": 0, "used": 1, "quote-range": 2, "estimate": 3}

_ZERO_HINT = ("A catalog price is what a plan pays for one unit; there is no price for hardware already owned. "
              "Leave the part out of the catalog's purchasable parts (excluded_gpus in the scenario) instead.")


def whole_cents(e: Entry, k: str, usd: float, *, quantity: int = 1) -> float:
    """``usd``, a purchase price read from key ``k`` of ``e``, as the whole number of cents it is.

    The quote adds its lines up in cents (the solver's capex is rounded to the cent and checked against
    the sum of the lines, planner.solve.solver.choose), so a price with a fraction of a cent (0.005,
    250.005) is refused rather than rounded one way in one sum and the other way in the other. A
    difference below 10^-6 USD is the float's own (0.1 + 0.2 from the API) and is not refused; but digits
    written beyond what a float holds (``249.999999999999999999``, whose float is 250.0; a Decimal or a
    ``numpy.longdouble`` from the API) are judged as written, and refused (h19b #1, h20b N3). A numpy binary
    float of another width is judged as the decimal it stands for, numpy's own shortest digits
    (:func:`planner.core.units.binary_float_text`: ``numpy.float32(19.99)`` is 19.99, ``numpy.float32(300.005)``
    has a fraction of a cent), and refused where its type holds no price to the cent (h22b M8).

    Args:
        quantity: the line's quantity (a scenario's extras): the hint then offers the price of the lot.

    Returns:
        the price in USD as its whole cents read back (0.3 for 0.1 + 0.2, 19.99 for ``numpy.float32(19.99)``):
        never the float's own error (0.30000000000000004, 19.989999771118164), which a report would write out.

    Raises:
        InputError (of the entry's kind): a fraction of a cent, with the cents below and above as the hint; a
            ``numpy.float16`` or ``float32`` that two whole cents read as (``numpy.float32(1234567.89)``: its
            float32 values are 0.125 apart there), with the hint to give a float, a Decimal or a str.
    """
    raw = e.data.get(k)  # as given: a Decimal from the API, a NotWhole keeping its text, a numpy float
    text = e.written(k) or (str(raw) if isinstance(raw, Decimal) else getattr(raw, "text", None)
                            or binary_float_text(raw))  # numpy.longdouble('10.004999999999999999'): as given (h20b N3)
    exact = written_decimal(text)  # the digits given ('249.999999999999999999', '2.5e2', '1_000.50'), or None
    if exact is not None and e.written(k) is None:
        _refuse_blurred_cents(e, k, raw, exact)
    if exact is not None and math.isfinite(usd) and exact == Decimal(repr(float(usd))):
        exact = None  # digits a float holds ('0.30000000000000004', 0.1 + 0.2 written out): the float's own error
    if exact is not None:  # the digits given, not the float they round to (h19b #1): 249.999999999999999999
        cents_exact = exact * 100
        if cents_exact == cents_exact.to_integral_value():
            return float(exact)
        shown = text.strip()  # type: ignore[union-attr]
        down, up = math.floor(cents_exact) / 100, math.ceil(cents_exact) / 100
        lot_exact = cents_exact * quantity
        lot = float(lot_exact) if lot_exact == lot_exact.to_integral_value() else 0.5  # 0.5: no whole lot
    else:
        cents = usd * 100
        if abs(cents - round(cents)) <= 1e-4:
            return round(cents) / 100  # an int over 100: the float nearest the whole cents, as '0.3' reads
        shown = f"{raw} ({usd!r})" if isinstance(raw, Fraction) else repr(usd)  # 1/3 as given (h32b M3)
        down, up = math.floor(cents) / 100, math.ceil(cents) / 100
        lot = usd * quantity * 100
    lot_hint = (f", or price the lot as one line (quantity: 1, {k}: {round(lot) / 100:.2f} for {quantity} x {shown})"
                if quantity > 1 and abs(lot - round(lot)) <= 1e-4 and round(lot) > 0 else "")
    raise e.error(f"{shown} USD has a fraction of a cent", k,
                  f"A quote adds prices up in whole cents: write {k}: " + (f"{down:.2f} or " if down > 0 else "")
                  + f"{up:.2f}{lot_hint}.")


def _refuse_blurred_cents(e: Entry, k: str, raw: object, exact: Decimal) -> None:
    """Refuse a price given as a ``numpy.float16`` or ``float32`` whose whole cents ``exact`` (numpy's shortest
    digits of it) are not the only ones that read as it: above 131,072 USD a float32's values are 2^-6 USD or
    more apart, above 8 USD a float16's are, so 131072.01 and 131072.02 are one float32, and taking it as either
    would be a guess (h22b M8). A longdouble, a Decimal or a NotWhole holds every cent of a price: not checked.

    Raises:
        InputError: naming both cents, with the hint to give a float, a Decimal or a str.
    """
    dtype = getattr(raw, "dtype", None)
    cents = exact * 100
    if getattr(dtype, "kind", None) != "f" or getattr(dtype, "itemsize", 8) >= 8 or cents != cents.to_integral_value():
        return
    kind = type(raw)
    for step in (-1, 1):
        other = (cents + step) / 100
        if kind(f"{other:f}") == raw:  # type: ignore[call-arg]
            low, high = sorted((exact, other))
            raise e.error(f"numpy.{kind.__name__}({float(raw)!r}) holds no price to the cent: {low:.2f} and "  # type: ignore[arg-type]
                          f"{high:.2f} USD are the same {kind.__name__}", k,
                          f"Give {k} as a float, a Decimal or a str, which hold every cent of a price.")


def given_usd(e: Entry, k: str, usd: float | None) -> float | None:
    """``usd`` read from key ``k`` of ``e``, or, given as a numpy binary float of another width, the float of the
    decimal it stands for (:func:`planner.core.units.binary_float_text`: 19.99 for ``numpy.float32(19.99)``, not
    19.989999771118164): a price's range (``low_usd``, ``high_usd``) read as its ``usd`` is."""
    text = binary_float_text(e.data.get(k)) if usd is not None else None
    return usd if text is None else float(Decimal(text))


@dataclass(frozen=True, slots=True)
class Price:
    """One observed price of one unit (see the module docstring).

    Attributes:
        usd: the price, USD.
        kind: :data:`PRICE_KINDS`.
        as_of: when it was observed (YYYY-MM-DD or YYYY-MM).
        source: where (a REF: id of SOURCES.md, a URL, a vendor's quote).
        condition: ``new`` or ``used``.
        low_usd, high_usd: the range the sources give, when given.
        notes: what the figure is (which listing, which retailer).
        exempt: (check name, why the shipped figure stands) pairs (:mod:`planner.catalog.check`).
    """

    usd: float
    kind: str
    as_of: str
    source: str
    condition: str = "new"
    low_usd: float | None = None
    high_usd: float | None = None
    notes: str | None = None
    exempt: tuple[tuple[str, str], ...] = ()

    @property
    def used(self) -> bool:
        return self.condition == "used"

    def exemption(self, check: str) -> str:
        """Why the figure stands despite ``check`` ('' when the catalog states no exception)."""
        return dict(self.exempt).get(check, "")

    def label(self) -> str:
        """'street price (new) of 2026-05-16' / 'used price of 2026-02' / 'list price (msrp) of 2022-10-12'."""
        return f"{price_words(self.kind, self.condition)} of {self.as_of}"


def price_words(kind: str, condition: str = "new") -> str:
    """A price's kind and condition in words: 'street price (new)', 'used price', 'list price (msrp)',
    'quote (used)'."""
    words = {"msrp": "list price (msrp)", "used": "used price", "quote": "quote",
             "quote-range": "quote range"}.get(kind, f"{kind} price")
    return words if kind in ("used", "msrp") else f"{words} ({condition})"


def default_condition(kind: str) -> str:
    return "used" if kind == "used" else "new"


def legacy_price(usd: float | None, kind: str | None, *, as_of: str, source: str) -> tuple[Price, ...]:
    """The ``prices`` of an entry written with one ``price_usd`` + ``price_kind`` (none without)."""
    if usd is None or kind is None:
        return ()
    return (Price(float(usd), kind, as_of, source, default_condition(kind)),)


#: The keys a ``prices:`` item must give, and the hint for each one's absence (made once, not per item).
_REQUIRED_ITEM_KEYS = ("usd", "kind", "as_of", "source")
_REQUIRED_ITEM_HINTS = {
    "usd": "Add usd: the price of one unit in US dollars.",
    "kind": "Add kind: " + ", ".join(PRICE_KINDS) + ".",
    "as_of": "Add as_of: the date the price was observed, YYYY-MM-DD or YYYY-MM.",
    "source": "Add source: where the price comes from (a REF: id of SOURCES.md or a URL).",
}


def read_prices(e: Entry, k: str, *, max_usd: float) -> tuple[Price, ...]:
    """The ``prices:`` list of entry ``e`` (key ``k``), validated (see the module docstring)."""
    items = e.children(k)
    if not items:
        raise e.error("lists no price", k, "Give at least one price ({usd, kind, as_of, source}), or leave "
                                           "'prices' out when the part has no purchase price.")
    out: list[Price] = []
    seen: dict[tuple[str, str, str], int] = {}
    for i, it in enumerate(items):
        it.check_keys(PRICE_ITEM_KEYS, required=_REQUIRED_ITEM_KEYS, hints=_REQUIRED_ITEM_HINTS)
        if it.raw("usd") == 0:
            raise it.error("is 0", "usd", _ZERO_HINT)
        usd = whole_cents(it, "usd", it.number("usd", min=0, max=max_usd, min_exclusive=True))
        kind = it.str("kind", choices=PRICE_KINDS)
        cond = it.str("condition", default_condition(kind), choices=CONDITIONS)
        if kind == "msrp" and cond == "used":
            raise it.error("an msrp is the list price of a new unit, not of a used one", "condition",
                           "Write kind: used (a used unit's street price), or quote / estimate with condition: used.")
        if kind == "used" and cond == "new":
            raise it.error("kind used is the price of a used unit", "condition",
                           "Leave condition out (kind used is condition used), or use kind street for a new unit.")
        if kind == "street" and cond == "used":
            raise it.error("a used unit's street price is kind used", "kind", "Write kind: used.")
        low = given_usd(it, "low_usd", it.number("low_usd", None, min=0, max=max_usd, min_exclusive=True))
        high = given_usd(it, "high_usd", it.number("high_usd", None, min=0, max=max_usd, min_exclusive=True))
        if (low is None) != (high is None):
            key = "low_usd" if low is not None else "high_usd"
            raise it.error(f"{key} needs {'high_usd' if key == 'low_usd' else 'low_usd'}", key,
                           "Give the range as both ends (low_usd and high_usd), or neither.")
        if kind == "quote-range" and low is None:
            raise it.error("a quote-range price gives its range", "low_usd",
                           "Give low_usd and high_usd: what the published figures for the part span.")
        if low is not None and not low <= usd <= high:  # type: ignore[operator]
            raise it.error(f"usd {usd:,.2f} is outside its range [{low:,.2f}, {high:,.2f}]", "usd",
                           "The range is what the sources give; the price is one figure within it.")
        exempt = it.child("exempt", None)
        reasons: dict[str, str] = {}
        if exempt is not None:
            exempt.check_keys(EXEMPT_CHECKS)
            for name in exempt.data:
                reasons[str(name)] = free_text(exempt, name, exempt.str(name))
        as_of = it.date("as_of", past=True)
        source = free_text(it, "source", it.str("source"))
        key = (kind, cond, as_of)
        if key in seen:
            raise it.error(f"repeats the {kind} price ({cond}) of {as_of} (prices[{seen[key]}])", "as_of",
                           "Keep one price per kind, condition and date: the newest is the one a plan uses.")
        seen[key] = i
        out.append(Price(usd, kind, as_of, source.strip(), cond, low, high,
                         _notes(it), tuple(reasons.items())))
    return tuple(out)


def exempt_data(value: Any, where: str) -> dict[Any, Any]:
    """A Price object's ``exempt`` (from a Catalog given to the API) as a file's ``exempt:`` mapping, for
    the field reader to check: (check name, reason) pairs, a tuple or list of them.

    Raises:
        CatalogError: ``value`` is no tuple of pairs ('stale', 5, None, a mapping, (('stale',),)) or
            names a check twice, at ``where`` (the entry and field).
    """
    from planner.core.errors import CatalogError
    from planner.core.held import held_list

    pairs = held_list(value) if isinstance(value, (tuple, list)) else None
    if pairs is not None:
        pairs = [held_list(p) for p in pairs if isinstance(p, (tuple, list))]
    if pairs is None or len(pairs) != len(held_list(value)) or any(len(p) != 2 for p in pairs):
        text = ascii(value)
        raise CatalogError(f"must be a tuple of (check name, reason) pairs, not {text[:117] + '...' if len(text) > 120 else text}",
                           entry=where, hint=f"Give it as load_catalog() builds it: (('stale', 'why the figure stands'),); "
                           f"check names: {', '.join(EXEMPT_CHECKS)}.")
    out: dict[Any, Any] = {}
    for name, reason in pairs:
        if not isinstance(name, str):
            raise CatalogError(f"check name {ascii(name)[:40]} is not a name", entry=where,
                               hint=f"Check names: {', '.join(EXEMPT_CHECKS)}.")
        name = str.__str__(name)  # the text itself: a str subclass's __hash__ and __eq__ are not asked
        if name in out:
            raise CatalogError(f"names the check {ascii(name)[:40]} twice", entry=where, hint="Give each check one reason.")
        out[name] = reason
    return out


def _notes(it: Entry) -> str | None:
    """A price item's ``notes``: a free text (:data:`planner.catalog.texts.MAX_FREE_TEXT_CHARS`), or None."""
    notes = it.str("notes", None)
    return None if notes is None else free_text(it, "notes", notes)


def _newest(prices: Iterable[Price], order: Mapping[str, int]) -> Price | None:
    ranked = [p for p in prices if p.kind in order]
    if not ranked:
        return None
    # the first kind in the order, then the newest date ('2026-05' sorts before '2026-05-16'), then the lower price
    return min(ranked, key=lambda p: (order[p.kind], _negated(p.as_of), p.usd))


def _negated(as_of: str) -> tuple[int, ...]:
    parts = [int(x) for x in as_of.split("-") if x.isdigit()]
    return tuple(-x for x in parts + [0] * (3 - len(parts)))


def select_price(prices: Sequence[Price], mode: str = "street", used_ok: bool = False, *,
                 discontinued: bool = False) -> Price | None:
    """The price a plan pays for one unit (see the module docstring); None when there is none.

    ``discontinued``: the part is out of production; in ``street`` mode its ``msrp`` (a launch list
    price no seller asks any more) is not a price of a new unit it can be bought at."""
    if mode not in NEW_ORDER:
        raise ValueError(f"unknown price mode {mode!r}; one of {', '.join(PRICE_MODES)}")
    order = NEW_ORDER[mode]
    if discontinued and mode == "street":
        order = {k: v for k, v in order.items() if k != "msrp"}
    new = _newest((p for p in prices if p.condition == "new"), order)
    if not used_ok:
        return new
    used = used_price(prices)
    if used is not None and (new is None or used.usd < new.usd):
        return used
    return new


#: Catalog lists whose entries may carry ``prices`` and the attribute of their one price.
PRICED_LISTS = {"gpus": "price_usd", "dimms": "price_usd", "platforms": "base_price_usd"}


def priced(record: Any, mode: str, used_ok: bool, attr: str = "price_usd") -> Any:
    """``record`` (a GPU, DIMM or platform) with its price set to :func:`select_price`'s choice."""
    chosen = select_price(record.prices, mode, used_ok, discontinued=bool(getattr(record, "discontinued", None)))
    if chosen is record.price:
        return record
    if chosen is None:
        if attr != "price_usd":  # a platform or DIMM always has a price: keep it (never reached with prices)
            return record
        return dataclasses.replace(record, price=None, price_usd=None, price_kind=None)
    return dataclasses.replace(record, price=chosen, price_kind=chosen.kind, **{attr: chosen.usd})


def priced_catalog(catalog: Any, mode: str = "street", used_ok: bool = False) -> Any:
    """The catalog with every GPU's, DIMM's and platform's price chosen by ``mode`` / ``used_ok``."""
    if mode == "street" and not used_ok:
        return catalog  # the loader's choice already
    changes = {name: tuple(priced(r, mode, used_ok, attr) for r in getattr(catalog, name))
               for name, attr in PRICED_LISTS.items()}
    return dataclasses.replace(catalog, **changes)


def price_fields(prices: tuple[Price, ...], attr: str = "price_usd", *, discontinued: bool = False) -> dict[str, Any]:
    """The record fields of the loader's default choice (``price: street``, new units only;
    ``discontinued``: the part is out of production, see :func:`select_price`)."""
    chosen = select_price(prices, discontinued=discontinued)
    if chosen is None:
        return {"prices": prices, "price": None, attr: None, "price_kind": None}
    return {"prices": prices, "price": chosen, attr: chosen.usd, "price_kind": chosen.kind}


def used_price(prices: Sequence[Price]) -> Price | None:
    """The used price ``used_ok: true`` would pay (the newest of the first used kind, as
    :func:`select_price` orders them), or None when the part has no used price."""
    return _newest((p for p in prices if p.condition == "used"), USED_ORDER)


def unbought_new(prices: Sequence[Price]) -> Price | None:
    """The newest list price (msrp) of a discontinued part that ``price: street`` does not pay
    (None when it has a dated new street / quote / estimate price, or no msrp)."""
    if select_price(prices, discontinued=True) is not None:
        return None
    return _newest((p for p in prices if p.condition == "new"), {"msrp": 0})


__all__ = ["CONDITIONS", "PRICE_ITEM_KEYS", "PRICE_KINDS", "PRICE_MODES", "PRICED_LISTS", "Price",
           "default_condition", "legacy_price", "price_words", "price_fields", "priced", "priced_catalog", "read_prices",
           "select_price", "unbought_new", "used_price"]
