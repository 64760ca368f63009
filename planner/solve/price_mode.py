"""``constraints.price``: which dated catalog price a plan pays (street or msrp)."""

from __future__ import annotations

from planner.core.fields import Entry

#: The price modes of ``constraints.price``: a part's newest dated street price, or its list price (msrp).
PRICE_MODES = ("street", "msrp")


def price_mode(e: Entry) -> str:
    """``constraints.price``: 'street' (the default) or 'msrp'.

    'list' (any case) is refused: the docs and the plan call the msrp the list price ("list price (msrp)";
    docs/catalog.md: "msrp: the vendor's list price"), but 'list' was once the name of the street default,
    so a file that writes it means one or the other, and neither is read without a word.

    Raises:
        ScenarioError: 'list', or another value than :data:`PRICE_MODES`.
    """
    raw = e.data.get("price")
    if isinstance(raw, str) and raw.strip().lower() in ("list", "list price", "list-price", "list_price"):
        raise e.error(f"{raw!r} is not one of the choices: the list price is the msrp here, and 'list' was once the "
                      "name of street", "price", "Write price: msrp for the vendor's list price, or price: street "
                      "(the default) for the newest dated street (retail) price.")
    return e.str("price", "street", choices=PRICE_MODES)


__all__ = ["PRICE_MODES", "price_mode"]
