"""What every catalog list shares: the field readers, the record of one entry being read, the kind table.

A catalog list (``gpus``, ``dimms``, ...) is described by one :class:`Kind`, defined in the module of
its file (:mod:`planner.catalog.gpus`, :mod:`~planner.catalog.platforms`, ...): the frozen record an
entry becomes, its keys as :class:`Field` (a reader and whether the key is required), and the checks
between its keys and against other lists. The readers here take an
:class:`planner.core.fields.Entry` and a key, and return the parsed value or raise the entry's
:class:`~planner.core.errors.CatalogError` (file, line, entry path, problem, hint). Sizes come back as
``int`` bytes, rates as bytes per second, money as USD (:mod:`planner.core.units`).

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Protocol

from planner.core.frozenmap import FrozenMap
from planner.core.errors import CatalogError
from planner.core.fields import Entry
from planner.core.units import GB, MiB, TiB, format_size

from planner.catalog.texts import free_text, label
from planner.catalog.prices import PRICE_KINDS, legacy_price, price_fields, read_prices, select_price, whole_cents
VERIFICATION_LEVELS = ("V", "D", "K", "U")

#: Upper bounds beyond which a value is taken for a typo (a wrong unit, an extra digit).
MAX_PRICE_USD = 10_000_000
MAX_HOST_MEMORY_BYTES = 64 * TiB
MAX_SLOT_WIDTH = 5
#: Lower bound of every memory size (GPU, DIMM, host): smaller is a wrong unit ('80 B' for '80 GB').
MIN_MEMORY_BYTES = 256 * MiB
#: Most entries one list of a catalog file (or of a Catalog given in code) may hold (h23b N2). Every GPU is a
#: candidate on every platform at every card count, so the plan's work and its CSV grow with the list: 5,000 GPUs
#: in a 2.7 MB overlay took a minute, 1.1 GB and wrote a 515 MB CSV; 500 plan in seconds. The shipped lists hold
#: 14 to 47; a SkyPilot import of one cloud keeps one entry per instance type.
MAX_CATALOG_ENTRIES = 500
#: The hint of a list longer than :data:`MAX_CATALOG_ENTRIES`.
ENTRIES_HINT = (f"Keep the entries a plan may choose from, at most {MAX_CATALOG_ENTRIES} a list (each GPU is a "
                "candidate on every platform at every card count); keep the rest in another overlay folder.")


def check_entry_count(entries: Any, error: Any) -> None:
    """Refuse a list of more than :data:`MAX_CATALOG_ENTRIES` entries before any is read (h23b N2).

    Args:
        error: makes the CatalogError to raise from the problem ('lists 5,000 entries, more than the 500 ...').
    """
    if not isinstance(entries, (list, tuple)):
        return
    # the entries stored, counted by the base class: a subclass's __len__ may say 1 for 636 (h25b N1)
    count = list.__len__(entries) if isinstance(entries, list) else tuple.__len__(entries)
    if count > MAX_CATALOG_ENTRIES:
        raise error(f"lists {count:,} entries, more than the {MAX_CATALOG_ENTRIES} a catalog list may hold")

# Ids: lower-case letters and digits, words joined by '-' (or '.', as in model versions 'llama-3.1-8b').
ID_PATTERN = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")


class CatalogWarning(NamedTuple):
    """Something the catalog accepts but that is probably a mistake: (list, entry id, the sentence).

    ``text`` locates it as an error would ('<file>:<line>: <entry>: <problem>; <hint>'); the commands
    that use the entry print it (a cloud instance's: 'planner compare' and 'planner catalog cloud').
    """

    kind: str
    id: str
    text: str


# ----- field readers ------------------------------------------------------------------------
# A reader takes the Entry and the key and returns the parsed value or raises entry.error(...).

Reader = Callable[[Entry, str], Any]


@dataclass(frozen=True)
class Field:
    """One key of a list: its reader, whether an entry must give it, the record attribute it fills."""

    read: Reader
    required: bool = True
    attr: str | None = None  # attribute name in the record, when it differs from the key


def read_text(e: Entry, k: str) -> str:
    """A text: of characters UTF-8 can write (a lone surrogate, which no UTF-8 file holds but a value set
    in code can, is refused: no report could be written), at most
    :data:`planner.catalog.texts.MAX_FREE_TEXT_CHARS` characters (a source, notes)."""
    return _utf8_text(e, k, free_text(e, k, e.str(k)))


def _utf8_text(e: Entry, k: str, value: str) -> str:
    bad = re.search("[\ud800-\udfff]", value)
    if bad:
        raise e.error(f"holds {bad.group()!a}, a lone surrogate that UTF-8 (the reports, the terminal) cannot "
                      "write", k)
    return value


def read_label(e: Entry, k: str, *, edges: bool = True, scripts: bool = True) -> str:
    """A one-line label (a name, a CPU, a seller): a :func:`read_text` of at most
    :data:`planner.catalog.texts.MAX_LABEL_CHARS` characters (200, the name cap) and, with ``edges``, no blank at
    either end (a reader with a more telling message for blanks checks them itself)."""
    return _utf8_text(e, k, label(e, k, e.str(k), edges=edges, scripts=scripts))


def read_ascii_text(e: Entry, k: str) -> str:
    """A text of printable ASCII (a cloud's instance type or region, as the clouds name them and
    ``import-skypilot`` keeps them): a lookalike letter ('us-еast-1' with a Cyrillic е) or a no-break space
    would name another region or instance that no filter (``costs.regions``) matches."""
    value = read_label(e, k, edges=False, scripts=False)
    bad = next((ch for ch in value if not (ch.isascii() and ch.isprintable())), None)
    if bad is not None:
        from planner.core.names import char_name

        raise e.error(f"{value!a} holds {char_name(bad)}, not a printable ASCII character as the clouds' names "
                      "are", k, "Write it as the provider's pricing page does, in ASCII letters and digits.")
    return label(e, k, value)  # a blank at an end, said once the characters are known to be ASCII


def read_choice(choices: Iterable[str]) -> Reader:
    """One of ``choices`` (a value in another case gets a hint to write it in lower case)."""
    options = tuple(choices)

    def read(e: Entry, k: str) -> str:
        value = e.raw(k)
        if isinstance(value, str) and value not in options and value.lower() in options:
            raise e.error(f"{value!r} is not one of the choices", k, f"Write it in lower case: {value.lower()!r}.")
        return e.str(k, choices=options)

    return read


def read_int(lo: int, hi: int) -> Reader:
    """A whole number from ``lo`` to ``hi``."""

    def read(e: Entry, k: str) -> int:
        value = e.int(k)
        if not lo <= value <= hi:
            raise e.error(f"must be between {lo:,} and {hi:,}, not {value!r}", k)
        return value

    return read


def read_int_choice(choices: Iterable[int]) -> Reader:
    """A whole number out of ``choices`` (a lane count written 'x8' gets a hint)."""
    options = tuple(choices)

    def read(e: Entry, k: str) -> int:
        raw = e.raw(k)
        if isinstance(raw, str) and re.fullmatch(r"[xX]\d+", raw.strip()):  # 'x8': a lane count as boards print it
            raise e.error(f"must be a whole number, not {raw!r}", k, f"Write {raw.strip()[1:]} (the lane count).")
        value = e.int(k)
        if value not in options:
            raise e.error(f"must be one of {', '.join(map(str, options))}, not {value!r}", k)
        return value

    return read


def read_positive(hi: float, unit: str, what: str, *, integer: bool = False, lo: float = 0.0) -> Reader:
    """A number > 0, >= lo (a floor below any real figure, which its caller cites: 1e-300 TFLOPS would print
    times of 300 digits) and <= hi (floats allowed unless ``integer``)."""

    def read(e: Entry, k: str) -> float:
        value = e.int(k) if integer else e.number(k)
        shown = value if integer else e.raw(k)
        if value <= 0:
            raise e.error(f"must be more than 0, not {shown!r}", k)
        if value < lo:
            raise e.error(f"{shown!r} {unit} is less than any real {what} (at least {lo:g} {unit})", k,
                          "Check for a missing digit or a wrong unit.")
        if value > hi:
            raise e.error(f"{shown!r} {unit} is more than any real {what} ({hi:,.0f} {unit})", k,
                          "Check for an extra digit or a wrong unit.")
        return value

    return read


def read_positive_int(hi: int, unit: str, what: str) -> Reader:
    """A whole number > 0 and <= hi."""
    return read_positive(hi, unit, what, integer=True)


#: The hint of a purchase price of 0: the catalog has no way to mark hardware as already owned.
ZERO_PRICE_HINT = (
    "A catalog price is what a plan pays for one unit; there is no price for hardware already owned. "
    "To see what GPUs you own can run, use 'planner estimate --gpu ID --gpus N' or 'planner fit', which need "
    "no price; to plan a purchase, give the unit's price (a quote, street price or estimate)."
)


def read_price(e: Entry, k: str) -> float:
    """A purchase price, USD: more than 0 (0 gets :data:`ZERO_PRICE_HINT`), at most :data:`MAX_PRICE_USD`, in
    whole cents (planner.catalog.prices.whole_cents)."""
    value = e.raw(k)
    if not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0:
        raise e.error(f"must be more than 0, not {value!r}", k, ZERO_PRICE_HINT)
    return whole_cents(e, k, read_positive(MAX_PRICE_USD, "USD", "price")(e, k))


#: A size in decimal units (kB, MB, GB, TB: powers of 10): the number and the unit.
_DECIMAL_SIZE = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([kKMGT]B)\s*$")


def read_size(hi: int, what: str, *, allow_zero: bool = False, lo: int = 1, binary: str | None = None) -> Reader:
    """A size with its unit ('24 GiB'), as int bytes, >= lo (> 0) and <= hi.

    binary: for the sizes of memory products (DIMMs, a platform's maximum, an instance's RAM), which
        are whole multiples of 2^30 bytes whatever the vendor's label says ('64 GB' is 64 GiB): the
        hint for a value written in decimal units (kB, MB, GB, TB), which is then refused.
    """

    def read(e: Entry, k: str) -> int:
        value = e.raw(k)
        if isinstance(value, float) and not math.isfinite(value):
            raise e.error(f"must be a size such as '24 GiB', not {value!r}", k)
        n = e.size(k)
        if n == 0 and not allow_zero:
            raise e.error(f"must be more than 0 bytes, not {value!r}", k)
        if 0 < n < lo:
            raise e.error(f"{value!r} is less than any real {what} ({format_size(lo)})", k,
                          "Check for a missing digit or a wrong unit (MB, GB, TB, GiB...).")
        if n > hi:
            raise e.error(f"{value!r} is more than any real {what} ({format_size(hi)})", k,
                          "Check for an extra digit or a wrong unit (MB, GB, TB, GiB...).")
        m = _DECIMAL_SIZE.match(value) if binary is not None and isinstance(value, str) else None
        if m:
            number, unit = m.groups()
            power = "kMGT".index(unit[0].replace("K", "k")) * 3 + 3
            binary_unit = f"{unit[0].upper()}iB"
            raise e.error(f"{value!r} is {format_size(n)} ({unit} = 10^{power} bytes), but memory sizes are binary",
                          k, binary.format(number=number, unit=unit, binary_unit=binary_unit)
                          + f": write '{number} {binary_unit}'.")
        return n

    return read


def read_rate(hi: float, what: str, *, allow_zero: bool = False, lo: float = 0.0, bits: bool = False) -> Reader:
    """A rate with its unit ('900 GB/s', '400 Gb/s'), as bytes/s, > 0 (or >= 0), not below ``lo`` bytes/s
    unless 0 (a floor below any real figure, which its caller cites) and <= hi. ``bits``: the floor is said in
    Gb/s (network ports), else GB/s. A value under the floor in kB/s or MB/s (kb/s, Mb/s) gets the hint of the
    same number in GB/s (Gb/s) where that is a real figure: '2 MB/s' for '2 GB/s'."""

    def read(e: Entry, k: str) -> float:
        value = e.raw(k)
        r = e.rate(k)
        if r == 0 and not allow_zero:
            raise e.error(f"must be more than 0, not {value!r}", k)
        if 0 < r < lo:
            floor = f"{lo * 8 / 1e9:g} Gb/s" if bits else f"{lo / GB:g} GB/s"
            meant = _giga_meant(value, lo, hi)
            raise e.error(f"{value!r} is less than any real {what} (at least {floor})", k,
                          (f"Did you mean '{meant}'? " if meant else "")
                          + "Check the unit: GB/s is bytes, Gb/s is bits (8 Gb/s = 1 GB/s).")
        if r > hi:
            raise e.error(f"{value!r} is more than any real {what} ({hi / GB:,g} GB/s)", k,
                          "Check the unit: GB/s is bytes, Gb/s is bits (8 Gb/s = 1 GB/s).")
        return r

    return read


#: A rate as written: a number, a prefix (none, k, M, G, T) and B/s or b/s.
_RATE_TEXT = re.compile(r"\s*([0-9][0-9.]*(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)([bB])/s\s*\Z")


def _giga_meant(value: Any, lo: float, hi: float) -> str | None:
    """The same number with the G prefix ('2 GB/s' for '2 MB/s', '400 Gb/s' for '400 Mb/s') when ``value`` is
    written with a smaller prefix and that reading lies from ``lo`` to ``hi`` bytes/s; else None."""
    m = _RATE_TEXT.match(value) if isinstance(value, str) else None
    if m is None or m.group(2) not in ("", "k", "K", "m", "M"):
        return None
    number, unit = m.group(1), m.group(3)
    rate = float(number) * 1e9 / (8 if unit == "b" else 1)
    return f"{number} G{unit}/s" if lo <= rate <= hi else None


def read_fraction(e: Entry, k: str) -> float:
    """A number more than 0 and at most 1."""
    return e.number(k, min=0.0, max=1.0, min_exclusive=True)


def read_bool(e: Entry, k: str) -> bool:
    """true or false."""
    return e.bool(k)


def read_date(e: Entry, k: str) -> str:
    """A date 'YYYY-MM-DD' or 'YYYY-MM', not after today."""
    return e.date(k, past=True)


def read_id(e: Entry, k: str) -> str:
    """An entry id: lower-case letters and digits joined by '-' or '.' (:data:`ID_PATTERN`)."""
    value = e.str(k)
    from planner.core.names import length_problem

    told = length_problem(value, what="an id")
    if told:
        raise e.error(told[0], k, told[1])
    if not ID_PATTERN.match(value):
        import unicodedata

        # full-width 'ｒｔｘ-４０９０' and other compatibility forms as the ASCII they stand for, accents dropped
        # ('é' as 'e'; NFKD, Unicode Standard Annex #15, 1.1 "Compatibility Equivalence"): the hint names the
        # id meant, not a piece of it
        plain = "".join(c for c in unicodedata.normalize("NFKD", value) if not unicodedata.combining(c))
        slug = re.sub(r"[^a-z0-9.]+", "-", plain.lower()).strip("-.")
        slug = re.sub(r"\.{2,}", ".", slug)
        if not ID_PATTERN.match(slug):
            slug = "my-entry"
        raise e.error(f"id {value!r} must be lower-case letters and digits joined by '.' or '-'", k, f"For example {slug!r}.")
    converted = csv_converted(value)
    if converted:
        raise e.error(f"id {value!r} reads as {converted} in a CSV file: a spreadsheet or pandas.read_csv opening "
                      "a report's CSV shows that, not the id", k, f"Give an id with a word in it, e.g. {'my-' + value!r}.")
    return value


#: Month names and their abbreviations, which spreadsheets read as a date beside a day or year ('mar-1').
_MONTHS = ("jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|"
           "september|october|november|december")
_CSV_NUMBER = re.compile(r"^\d+(?:\.\d+)?(?:e-?\d+)?$")
_CSV_DATE = re.compile(rf"^(?:\d{{1,4}}[-.]\d{{1,2}}(?:[-.]\d{{1,4}})?|(?:{_MONTHS})[-.]\d{{1,4}}"
                       rf"|\d{{1,4}}[-.](?:{_MONTHS})(?:[-.]\d{{1,4}})?)$")
_CSV_WORDS = {"true": "the boolean TRUE", "false": "the boolean FALSE", "nan": "a missing value (NaN)",
              "null": "a missing value (NaN)", "inf": "the number infinity", "infinity": "the number infinity"}


def csv_converted(text: str) -> str:
    """What a CSV reader takes ``text`` (an id, lower case) for instead of text, or '': a number ('3060',
    '1e5', '1.5'), a boolean ('true', 'false'), a missing value or infinity ('nan', 'null', 'inf'), or a date
    ('1-2', '2026-01', '1.2.3', 'mar-1', '1-mar-2026'). Sources: pandas.read_csv's default ``na_values``
    and ``true_values`` (pandas 2.2 documentation, "pandas.read_csv"); LibreOffice Calc's and Excel's
    import, which read a day and month joined by '-' or '.' as a date in the locale's order (LibreOffice
    Help, "Text Import": "Detect special numbers"; Microsoft, "Stop automatically changing numbers to
    dates"). A report's CSV writes ids bare, so an id that reads as one of these would be another value
    in the sheet (h10b #18)."""
    if text in _CSV_WORDS:
        return _CSV_WORDS[text]
    if _CSV_NUMBER.match(text):
        return "a number"
    if _CSV_DATE.match(text):
        return "a date"
    return ""


def read_choice_list(choices: tuple[str, ...], what: str) -> Reader:
    """A non-empty list of distinct values out of ``choices`` (``what`` names one in messages)."""

    def read(e: Entry, k: str) -> tuple[str, ...]:
        values = e.str_list(k, choices=choices)
        if not values:
            raise e.error(f"must name at least one {what}", k, "Valid: " + ", ".join(choices) + ".")
        if len(set(values)) != len(values):
            raise e.error(f"names a {what} twice", k)
        return tuple(values)

    return read


#: The keys every entry of every list takes.
COMMON: dict[str, Field] = {
    "id": Field(read_id),
    "source": Field(read_text),
    "as_of": Field(read_date),
    "notes": Field(read_text, required=False),
    "verification": Field(read_choice(VERIFICATION_LEVELS), required=False),
}

def read_price_list(e: Entry, k: str) -> tuple[Any, ...]:
    """A ``prices:`` list (:func:`planner.catalog.prices.read_prices`), each at most :data:`MAX_PRICE_USD`."""
    return read_prices(e, k, max_usd=MAX_PRICE_USD)


def read_mpn(e: Entry, k: str) -> str:
    """A manufacturer part number: a text (a number such as 900123 is refused: quote it, as YAML would
    drop leading zeros), without spaces at either end, holding no character drawn like an ASCII one
    (:func:`planner.core.names.part_number_problem`: full-width, a dash lookalike, a UTS #39 confusable)."""
    value = e.raw(k)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        written = e.written(k)  # the file's text: '1.50' and '1.5e+5' read as 1.5 and 150000.0
        raise e.error(f"must be a quoted text, not the number {written or repr(value)}", k,
                      f"Quote it as the file writes it: mpn: \"{written or value}\" (YAML reads an unquoted part "
                      "number as a number, which drops leading and trailing zeros)." if written else
                      f"Quote it: mpn: \"{value}\" (YAML drops leading zeros from numbers).")
    value = label(e, k, e.str(k)).strip()
    from planner.core.names import part_number_problem

    told = part_number_problem(value, k)  # '１００', 'Ｗ', '100–1': a code, not prose (h16b #3)
    if told:
        raise e.error(told[0], k, told[1])
    return value


def read_valid_until(e: Entry, k: str) -> str:
    """The last day a vendor's quote holds: a date 'YYYY-MM-DD' (or 'YYYY-MM'); it may lie ahead."""
    return e.date(k)


#: What a purchasing office needs to order a part besides its price (docs/catalog.md, "Ordering keys"):
#: the manufacturer part number, the seller (vendor or reseller) the price is from, the lead time,
#: the warranty and the last day the seller's quote holds. All optional: the Quote sheet leaves a
#: cell blank where the catalog does not say (never a guessed value).
ORDER_FIELDS: dict[str, Field] = {
    "mpn": Field(read_mpn, required=False),
    "seller": Field(read_label, required=False),
    "lead_time_days": Field(read_int(0, 730), required=False),
    "warranty_months": Field(read_int(0, 240), required=False),
    "quote_valid_until": Field(read_valid_until, required=False),
}

#: The ordering keys as record attributes (each record of a purchasable part has them, default None).
ORDER_KEYS = tuple(ORDER_FIELDS)


#: A purchase price: a ``prices:`` list of dated prices, or (the older form of one item) ``price_usd``
#: and its ``price_kind`` with the entry's source and as_of (DIMMs, NICs, switches; GPUs and platforms
#: take the same through :func:`priced_fields`), and the ordering keys (:data:`ORDER_FIELDS`).
PRICED: dict[str, Field] = {
    "price_usd": Field(read_price, required=False),
    "price_kind": Field(read_choice(PRICE_KINDS), required=False),
    "prices": Field(read_price_list, required=False),
    **ORDER_FIELDS,
}


def priced_fields(attr: str = "price_usd") -> dict[str, Field]:
    """The price keys of a list whose one price is ``attr`` (a platform's ``base_price_usd``)."""
    return {attr: Field(read_price, required=False), "price_kind": Field(read_choice(PRICE_KINDS), required=False),
            "prices": Field(read_price_list, required=False), **ORDER_FIELDS}


def check_priced(p: "Parsed", attr: str = "price_usd", *, required: bool = True) -> None:
    """An entry gives ``prices`` or ``attr`` + ``price_kind``, not both; ``required``: one of them, with a
    price of a new unit (a GPU may have none, or only used prices: then only ``used_ok`` buys it)."""
    v = p.values
    if "prices" in v:
        legacy = [k for k in (attr, "price_kind") if k in v]
        if legacy:
            raise p.err(f"gives both prices and {legacy[0]}", legacy[0],
                        f"Write every price as an item of 'prices:' ({attr} + price_kind is the older form of one "
                        "item), or leave 'prices' out.")
        if required and select_price(v["prices"]) is None:
            raise p.err("lists no price of a new unit", "prices",
                        "Add the price of a new unit (kind msrp, street, quote or estimate): the plan pays it unless "
                        "the scenario sets used_ok.")
        return
    if (attr in v) != ("price_kind" in v):
        given, absent = (attr, "price_kind") if attr in v else ("price_kind", attr)
        raise p.err(f"{given} needs {absent}", given, "Give both, or neither when there is no purchase price.")
    if v.get("price_kind") == "quote-range":
        raise p.err("a quote-range price gives its range", "price_kind",
                    "Write it as a prices: item with low_usd and high_usd (docs/catalog.md).")
    if required and attr not in v:
        raise p.err(f"missing required key {attr!r}", None,
                    f"Give the price: 'prices:' (a list of dated prices) or {attr} and price_kind.")


def price_extra(attr: str = "price_usd") -> Callable[["Parsed"], dict[str, Any]]:
    """A :attr:`Kind.extra` that gives a priced record its ``prices`` (the legacy single price as one
    item), the one a plan pays by default (``price``: street mode, new units) and ``attr`` /
    ``price_kind`` set to it."""

    def extra(p: "Parsed") -> dict[str, Any]:
        v = p.values
        prices = v.get("prices") or legacy_price(v.get(attr), v.get("price_kind"), as_of=v["as_of"],
                                                 source=v["source"])
        return price_fields(tuple(prices), attr, discontinued=bool(v.get("discontinued")))

    return extra


# ----- one entry being read, and the kind table --------------------------------------------

@dataclass
class Parsed:
    """One entry being assembled: parsed values and the Entry that supplied each key."""

    kind: str
    id: str
    entry: Entry
    values: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, Entry] = field(default_factory=dict)

    def err(self, problem: str, key: str | None = None, hint: str | None = None) -> CatalogError:
        where = self.origin.get(key, self.entry) if key else self.entry
        return where.error(problem, key if key in self.origin else None, hint)  # type: ignore[return-value]


def later(p: Parsed, first: str, second: str) -> str:
    """Which of two keys a cross-field error names: the one the entry's latest source (an overlay)
    set, ``first`` when that set both or neither."""
    if p.origin.get(second) is p.entry and p.origin.get(first) is not p.entry:
        return second
    return first


class Merged(Protocol):
    """The catalog once every file is read and every entry's own checks passed: what a
    :attr:`Kind.check_merged` sees to check references to other lists."""

    @property
    def entries(self) -> Mapping[str, Mapping[str, Parsed]]:
        """list name -> entry id -> entry, shipped and overlay merged, in catalog order."""
        ...

    def file_rank(self, file: str | None) -> int:
        """Reading order of ``file`` (overlays after the base catalog); -1 when not read."""
        ...

    def gpu_ref_hint(self, gpu_id: str) -> str:
        """The hint for a reference to a GPU id the catalog lacks (a did-you-mean, or what else names
        a GPU an overlay removed)."""
        ...


@dataclass(frozen=True)
class Kind:
    """One entry list of the catalog (``gpus``, ``dimms``...): its record, its keys and its checks.

    The module of each catalog file defines its kinds (:data:`planner.catalog.gpus.GPUS`...);
    :mod:`planner.catalog.loader` reads every list through them, in file order. Each check raises
    :class:`~planner.core.errors.CatalogError` through :meth:`Parsed.err` or the entry's ``error``.

    Attributes:
        name: the list's key in its file (``gpus``).
        record: the frozen record class an entry becomes.
        fields: the list's own keys; :meth:`schema` adds :data:`COMMON`. Keys not in the schema are refused.
        check: rules between the keys of one entry, once the overlay is merged into it.
        check_overlay: rules for an overlay entry that changes a shipped one: (the overlay's entry,
            the shipped entry's values before the change), run after the overlay's keys are read.
        check_merged: references to other lists, run once for the list after every entry's ``check``.
        warnings: values of one entry that load but are probably typos.
        extra: record arguments that are not keys (a model's file and line).
    """

    name: str
    record: type
    fields: Mapping[str, Field]
    check: Callable[[Parsed], None] | None = None
    check_overlay: Callable[[Entry, Mapping[str, Any]], None] | None = None
    check_merged: Callable[[Merged], None] | None = None
    warnings: Callable[[Parsed], list[CatalogWarning]] | None = None
    extra: Callable[[Parsed], dict[str, Any]] | None = None

    def schema(self) -> Mapping[str, Field]:
        """Every key an entry of this list takes: ``id`` first, the list's own, then the common ones.

        One read-only mapping, made on first use (the loader asks for it for every entry).
        """
        return self._schema

    @cached_property
    def _schema(self) -> Mapping[str, Field]:
        return FrozenMap({"id": COMMON["id"], **self.fields, **COMMON})

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """The keys of :meth:`schema`, in its order (what ``Entry.check_keys`` allows)."""
        return tuple(self._schema)

    @cached_property
    def required(self) -> tuple[str, ...]:
        """The keys of :meth:`schema` an entry must give, in its order."""
        return tuple(k for k, f in self._schema.items() if f.required)

    @cached_property
    def _attrs(self) -> Mapping[str, str]:
        """key -> the record attribute it fills."""
        return FrozenMap({k: f.attr or k for k, f in self._schema.items()})

    def build(self, p: Parsed) -> Any:
        """The frozen record of a merged, checked entry."""
        attrs = self._attrs
        kwargs = {attrs[k]: value for k, value in p.values.items()}
        if self.extra is not None:
            kwargs.update(self.extra(p))
        return self.record(**kwargs)
