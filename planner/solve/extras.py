"""The ``extras`` lines of a scenario: quote lines it adds to every plan (storage, support, installation),
each with a price in USD, its date (``as_of``, not after today), its source and its kind (msrp, street, quote or
estimate, the default: a price nobody labelled is not a vendor's quote); see scenarios/README.md."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from planner.catalog.schema import PRICE_KINDS
from planner.catalog.prices import whole_cents
from planner.core.fields import Entry
from planner.core.names import escape_unsafe, label_problem, length_problem

EXTRA_KEYS = ("description", "unit_price_usd", "quantity", "source", "as_of", "category", "price_kind")
#: What to write for each required key of an ``extras`` entry that lacks it.
EXTRA_HINTS = {
    "description": "Add description: what the line buys, e.g. 'NVMe SSD 4 TB'.",
    "unit_price_usd": "Add unit_price_usd: the price of one unit in US dollars, e.g. 450.",
    "source": "Add source: where the price came from, e.g. a vendor quote URL or 'quote from ACME, 2025-03-01'.",
    "as_of": "Add as_of: the date of the price, YYYY-MM-DD.",
}

@dataclass(frozen=True)
class Extra:
    """A quote line the scenario adds (storage, support, installation...). Money is USD."""

    description: str
    unit_price_usd: float
    quantity: int
    source: str
    as_of: str
    category: str = "extra"
    price_kind: str = "estimate"


#: The quote-line categories of planner's own lines (planner.solve.quote.LineItem), each with a catalog id; an
#: extras line is none of them (its JSON line item would read as a GPU without a catalog_id).
_OWN_CATEGORIES = ("gpu", "platform", "memory", "network")
#: Other words for two of those lines (compared NFKC and case folded, as :func:`_category` does): the
#: ``memory`` line buys the host's RAM, as DIMMs (planner.catalog.ram.DIMM_KINDS: DDR4/DDR5 UDIMM and RDIMM;
#: an LRDIMM is RAM too), and the ``network`` line its NICs and switches (planner.catalog.network). 'gpus' is
#: the plural of 'gpu', which :func:`_category` refuses already.
_OWN_SYNONYMS = {
    **{w + s: "memory" for w in ("ram", "dimm", "udimm", "rdimm", "lrdimm") for s in ("", "s")},
    "memories": "memory",
    **{w: "network" for w in ("nic", "nics")},
}


def _category(e: Entry) -> str:
    """An extras line's ``category``, a word compared as choices are (Unicode NFKC, case folded): refused when it
    is one of planner's own (:data:`_OWN_CATEGORIES`), in any spelling ('ｇｐｕ', 'GPUs'), or when written with
    blanks at its ends or in full-width letters ('Storage ', 'ｓｔｏｒａｇｅ'), which the JSON would keep as written, or
    when a word mixes Latin and Cyrillic or Greek letters ('st\u043erage'; :func:`planner.core.names.label_problem`)."""
    category = e.str("category", "extra")
    told = length_problem(category, what="a category") or label_problem(category, "category", edges=False)
    if told:
        raise e.error(told[0], "category", told[1])
    plain = unicodedata.normalize("NFKC", category)
    key = plain.strip().casefold()
    own = next((c for c in _OWN_CATEGORIES if key in (c, c + "s", c + "es")), None)
    if own is None:
        own = _OWN_SYNONYMS.get(key)
    if own is not None and category.strip().lower() != own:  # 'gpu', 'GPU ': the caller's line, as before
        raise e.error(f"category {category!r} is one of planner's own quote lines ({own!r}; they are "
                      f"{', '.join(_OWN_CATEGORIES)}), each priced from the catalog", "category",
                      "Use another word for what this line buys, e.g. category: storage; a GPU, platform, memory or "
                      "NIC to plan with belongs in a catalog overlay.")
    if own is None and plain != plain.strip():
        raise e.error(f"category {escape_unsafe(repr(category))} begins or ends with a blank, which the reports would keep",
                      "category", f"Write category: {plain.strip()!r}.")
    if own is None and plain != category:
        raise e.error(f"category {category!r} is written in full-width or other compatibility letters, which the "
                      "reports would keep as written", "category", f"Write category: {plain.strip()!r}.")
    return category


def _extra(e: Entry) -> Extra:
    e.check_keys(EXTRA_KEYS, required=("description", "unit_price_usd", "source", "as_of"), hints=EXTRA_HINTS,
                 explain=lambda k, v: ("an extras line has no condition: a used part is priced as used",
                                       "Write price_kind: used (and say so in the description).")
                 if k == "condition" else None)
    category = _category(e)
    description = e.str("description")
    told = length_problem(description, what="an extras description") or label_problem(description, "description")
    if told:
        raise e.error(told[0], "description", told[1].replace("the blank: ", "the blank: description: "))
    if category.strip().lower() in _OWN_CATEGORIES:
        raise e.error(f"category {category!r} is one of planner's own quote lines ({', '.join(_OWN_CATEGORIES)}), "
                      "each priced from the catalog", "category",
                      "Use another word for what this line buys, e.g. category: storage; a GPU, platform, memory or "
                      "NIC to plan with belongs in a catalog overlay.")
    if e.raw("price_kind", None) == "quote-range":
        raise e.error("price_kind quote-range needs a range, which an extras line has no keys for", "price_kind",
                      "Write price_kind: quote with the price quoted, or estimate.")
    quantity = e.int("quantity", 1, min=1, max=1_000_000)
    return Extra(description=description,
                 unit_price_usd=whole_cents(e, "unit_price_usd", e.number("unit_price_usd", min=0, max=100_000_000),
                                            quantity=quantity),
                 quantity=quantity,
                 source=e.str("source"), as_of=e.date("as_of", past=True),
                 category=category,
                 price_kind=e.str("price_kind", "estimate", choices=tuple(k for k in PRICE_KINDS if k != "quote-range")))
