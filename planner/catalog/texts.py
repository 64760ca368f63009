"""How long a catalog text may be: one-line labels (a name, a part number, a seller) and free texts (a source,
notes), capped at load with one error naming the file, the entry, the key and the limit (h14b #7: 40,000
characters loaded, the terminal printed 2,688 lines and the workbook cut the Quote's item and order cells to a
cell's 32,767 characters without a word).

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

from planner.core.fields import Entry
from planner.core.names import MAX_NAME_CHARS, composed_length, edge_blank_problem, escape_unsafe, label_problem

#: The longest one-line label of a catalog entry (a GPU's or platform's ``name``, ``cpu``, a part's ``name``,
#: ``mpn``, ``seller``, a cloud row's ``gpu``): the name cap (:data:`planner.core.names.MAX_NAME_CHARS`, 200),
#: since the terminal, the Line items and the Quote repeat it on every line that names the part. The longest
#: shipped one is 116 characters (a platform's name); manufacturer part numbers are a few dozen (NVIDIA
#: 900-2G133-0080-000, 18 characters; the shipped catalog's longest mpn is 18).
MAX_LABEL_CHARS = MAX_NAME_CHARS

#: The longest free text of a catalog entry (``source``, ``notes``, ``discontinued``, ``parameters_source``, a
#: price's ``source``, ``notes`` and ``exempt`` reasons): well below a workbook cell's 32,767 characters
#: (Microsoft, "Excel specifications and limits": "Total number of characters that a cell can contain: 32,767
#: characters"), which the Sources and Assumptions sheets copy each text into, and about 3.5 times the longest
#: shipped one (a GPU's notes, 1,143 characters). A longer text belongs in SOURCES.md, named by its REF: id.
MAX_FREE_TEXT_CHARS = 4_000


#: The labels the Quote prints as what to buy (a GPU's, platform's or part's ``name``, a platform's ``cpu``, a
#: ``seller``), which refuse a letter or digit in a full-width, half-width or mathematical form
#: (:func:`planner.core.lookalike.width_problem`); an ``mpn`` says more (planner.catalog.schema.read_mpn), and an
#: ``architecture`` names the spelling meant (planner.catalog.gpus).
PURCHASE_LABELS = frozenset({"name", "cpu", "seller"})


def check_length(e: Entry, k: str, value: str, limit: int, what: str) -> str:
    """``value`` (the text of key ``k``) when at most ``limit`` characters (counted in Unicode NFC, as names
    are: a decomposed accent is one character); ``what`` names the kind of text in the message ('a label').

    Raises:
        CatalogError (the entry's kind): naming the key, the length and the limit.
    """
    count = composed_length(value, limit)
    if count <= limit:
        return value
    shown = escape_unsafe(value[:40]) + "..."
    if limit == MAX_LABEL_CHARS:
        why = "since the terminal, the Line items and the Quote repeat it on every line that names the part"
        hint = f"Shorten it to at most {limit} characters; a longer description belongs in notes."
    else:
        why = "since the terminal and the workbook show it whole (a workbook cell holds at most 32,767)"
        hint = (f"Shorten it to at most {limit:,} characters; a longer text belongs in SOURCES.md, named here by its "
                "REF: id.")
    raise e.error(f"'{shown}' is {count:,} characters long; {what} is at most {limit:,} characters, {why}", k, hint)


def label(e: Entry, k: str, value: str, *, edges: bool = True, scripts: bool = True) -> str:
    """``value`` checked as a one-line label: at most :data:`MAX_LABEL_CHARS` characters and, with ``edges``, no
    blank at either end (:func:`planner.core.names.edge_blank_problem`: ``seller: "ACME "`` is refused with 'ACME'
    as the hint), and, with ``scripts`` (a reader that takes ASCII only says more), no word mixing Latin, Cyrillic,
    Greek, Armenian and Lisu letters (:func:`planner.core.names.label_problem`: a GPU name 'RTX 3060 12G\u0412' with a Cyrillic Ve, or an mpn
    with a Cyrillic O, would print in the Quote as the part and find nothing at a distributor; h15b #8), and, for
    the :data:`PURCHASE_LABELS`, no full-width or mathematical letter or digit ('NVIDIA L\uff14'; h16b #3).

    Raises:
        CatalogError (the entry's kind): naming the key."""
    check_length(e, k, value, MAX_LABEL_CHARS, f"a catalog {k}")
    told = edge_blank_problem(value) if edges else None
    if told:
        raise e.error(told[0], k, told[1].replace("the blank: ", f"the blank: {k}: "))
    told = label_problem(value, k, edges=False) if scripts else None
    if told is None and k in PURCHASE_LABELS:
        from planner.core.lookalike import width_problem

        told = width_problem(value, k)  # 'NVIDIA L\uff14' on the Quote's item line (h16b #3)
    if told:
        raise e.error(told[0], k, told[1])
    return value


def free_text(e: Entry, k: str, value: str) -> str:
    """``value`` checked as a free text (:data:`MAX_FREE_TEXT_CHARS`)."""
    return check_length(e, k, value, MAX_FREE_TEXT_CHARS, f"a catalog {k}")
