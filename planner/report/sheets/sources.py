"""The Sources sheet: the documents behind the ``REF:<id>`` citations, so the workbook traces
every price without the planner's files.

Every ``REF:<id>`` the quote's lines and the catalog entries used cite (:func:`cited_sources`),
with the document as the catalog's ``SOURCES.md`` gives it (:mod:`planner.catalog.sources`), where
to find it, its links (hyperlinks), the quote lines and entries that cite it and the file and
line that define it; an id that no ``SOURCES.md`` defines, or a ``SOURCES.md`` that could not be
read, is said so there. A source text that cites ids keeps its text on the Assumptions sheet,
followed by one line per id: the document's short title and its row here (:func:`source_text`,
:func:`put_source`); the Quote shows the ids alone (:func:`quote_source_cell`) and this sheet
gives the line's source in full, with the same lines, under the ids. Free text without ``REF:`` is
shown unchanged (on the Quote, where it is short).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.catalog.sources import SourceDoc, SourceIndex, ref_ids
from planner.core.escape import xml_text
from planner.report.cells import (
    FLAG_FILL,
    clean_text,
    fit_columns,
    header,
    label,
    merge_across,
    put_sentence,
    put_text,
    styles,
    title,
)
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

SOURCES_HEADERS = ("REF id", "Document (as the catalog's SOURCES.md gives it)", "Where (as given)", "Link",
                   "Cited by", "Defined in")
SOURCES_HEADER_ROW = 4
SOURCES_TITLE = "Sources: the documents behind the REF: ids this workbook cites"
SOURCES_ABOUT = ("Catalog prices and figures cite documents as REF:<id> (Quote: Price source; Assumptions: "
                 "Catalog entries used). Every id cited there is listed below with the document as the catalog's "
                 "SOURCES.md describes it, where to find it and a link where one is given, so each price can be "
                 "traced from this workbook alone. Other source texts are given in full where they appear.")
SOURCES_NONE = "No REF: id is cited: every price source is given in full on the Quote and Assumptions sheets."
SOURCES_MORE_LINKS = "(another link of the document above)"
#: A Quote price source citing no id is shown whole up to this many characters (two lines of the
#: Price source column, 21 characters wide); a longer one, and every one citing ids, is shown short
#: (:func:`quote_source_cell`) and given in full under :data:`QUOTE_SOURCES_TITLE`.
QUOTE_SOURCE_CHARS = 40
QUOTE_SOURCE_IN_FULL = "in full on the Sources sheet"
QUOTE_SOURCES_TITLE = ("Price sources of the Quote's lines in full, as the catalog gives them (the Quote's Price "
                       "source column shows their REF: ids)")
QUOTE_SOURCES_HEADERS = ("Quote line", "Price source (with the REF: ids' documents and rows above)")
_LINK_COLOR = "0563C1"
_MAX_LINK_CHARS = 2000  # Excel refuses hyperlinks longer than 2,079 characters


@dataclass(frozen=True)
class CitedSource:
    """One ``REF:`` id the workbook cites, as the Sources sheet lists it.

    Attributes:
        id: the id, without 'REF:'.
        doc: its definition, or None when no ``SOURCES.md`` read defines it.
        quote_lines: the Quote's line numbers ('#') whose price source cites it.
        entries: the ids of the catalog entries (Assumptions) whose source cites it.
        row: its (first) row on the Sources sheet; a document with several links takes a row per link.
    """

    id: str
    doc: SourceDoc | None
    quote_lines: tuple[int, ...] = ()
    entries: tuple[str, ...] = ()
    row: int = 0

    @property
    def cited_by(self) -> str:
        """'Quote lines 1, 3; catalog entries a, b' (the Sources sheet's 'Cited by')."""
        parts = []
        if self.quote_lines:
            parts.append(("Quote line " if len(self.quote_lines) == 1 else "Quote lines ")
                         + ", ".join(str(n) for n in self.quote_lines))
        if self.entries:
            parts.append(("catalog entry " if len(self.entries) == 1 else "catalog entries ")
                         + ", ".join(self.entries))
        return "; ".join(parts)


def cited_sources(data: WorkbookData) -> tuple[CitedSource, ...]:
    """The ``REF:`` ids cited by ``data``'s line items, then by its catalog entries' sources, in
    order of first mention, each with its document (``data.references``) and Sources sheet row."""
    order: list[str] = []
    quote: dict[str, list[int]] = {}
    entries: dict[str, list[str]] = {}
    for n, item in enumerate(data.line_items, start=1):
        for ref in ref_ids(item.source):
            order += [ref] if ref not in order else []
            quote.setdefault(ref, []).append(n)
    for s in data.sources:
        for ref in ref_ids(s.source):
            order += [ref] if ref not in order else []
            ids = entries.setdefault(ref, [])
            ids += [s.id] if s.id not in ids else []
    out = []
    row = SOURCES_HEADER_ROW + 1
    for ref in order:
        doc = data.references.get(ref) if data.references is not None else None
        out.append(CitedSource(ref, doc, tuple(quote.get(ref, ())), tuple(entries.get(ref, ())), row))
        row += max(1, len(doc.urls)) if doc is not None else 1
    return tuple(out)


def source_text(text: str, cited: Mapping[str, CitedSource], references: SourceIndex | None = None) -> str:
    """A source text as the Quote and Assumptions sheets show it: ``text`` unchanged, then one line
    per ``REF:`` id it cites: 'REF:<id> = <document's short title> (Sources sheet, row <n>)', or that
    the id is not defined or no ``SOURCES.md`` was read. Text citing no id is returned unchanged.

    Args:
        text: the entry's or line's source, as the catalog gives it.
        cited: :func:`cited_sources` by id.
        references: the index the documents came from (its files are named for an undefined id).
    """
    refs = [r for r in ref_ids(text) if r in cited]
    if not refs:
        return text
    lines = [text]
    read = references.files if references is not None else ()
    for ref in refs:
        c = cited[ref]
        where = f"Sources sheet, row {c.row}"
        if c.doc is not None:
            lines.append(f"REF:{ref} = {c.doc.title} ({where})")
        elif read:
            lines.append(f"REF:{ref}: not defined in {', '.join(read)} ({where})")
        else:
            lines.append(f"REF:{ref}: document not available, no SOURCES.md was read ({where})")
    return "\n".join(lines)


def quote_source_cell(text: str, cited: Mapping[str, CitedSource]) -> str:
    """A Quote line's price source as its cell shows it: the ``REF:`` ids it cites ('REF:A; REF:B')
    where it cites any (``cited``: :func:`cited_sources` by id), else the text itself where it has
    :data:`QUOTE_SOURCE_CHARS` characters or fewer, else :data:`QUOTE_SOURCE_IN_FULL`. A text shown
    other than whole is given in full on the Sources sheet (:func:`write_sources`): a footnote, not
    a paragraph on the Quote's line."""
    refs = [r for r in ref_ids(text) if r in cited]
    if refs:
        return "; ".join(f"REF:{r}" for r in refs)
    return text if len(text) <= QUOTE_SOURCE_CHARS else QUOTE_SOURCE_IN_FULL


def put_source(ws: Worksheet, row: int, col: int, text: str, cited: Mapping[str, CitedSource],
               references: SourceIndex | None):
    """Write a source text with its ids' pointers (:func:`source_text`). The pointer is text, not
    a hyperlink: LibreOffice shows a hyperlinked cell on one line, cutting the wrapped text."""
    return put_text(ws, row, col, source_text(text, cited, references))


def linkable(url: str, file: str) -> bool:
    """Whether ``url`` (from the ``SOURCES.md`` ``file``) becomes a hyperlink: only the shipped catalog's
    sources (catalog/SOURCES.md, reviewed with the code) are links; an overlay's URL is shown as text
    (a link's visible text and target can be told apart only by opening it). Never a URL with a user
    name or password (``https://user:pass@host``) or a host that is not plain ASCII or is punycode
    (``xn--``: a look-alike of another name, IDNA)."""
    import os
    from urllib.parse import urlsplit

    from planner.catalog.loader import default_catalog_dir

    # the file as the Sources sheet names it (planner.catalog.sources.shown_catalog_path): relative to the
    # current directory when it is there, else 'catalog/SOURCES.md' for the shipped one
    where = file if os.path.exists(file) else str(default_catalog_dir().parent / file)
    try:
        shipped = os.path.samefile(where, default_catalog_dir() / "SOURCES.md")
        parts = urlsplit(url)
        host = parts.hostname or ""
    except (OSError, ValueError):
        return False
    if not shipped or parts.scheme not in ("http", "https") or "@" in parts.netloc or not host:
        return False
    return host.isascii() and not any(label.startswith("xn--") for label in host.split("."))


def _put_link(ws: Worksheet, row: int, col: int, url: str, width: float, file: str = ""):
    """A URL as text: a hyperlink to it where it fits ``width`` characters on one line, else plain
    text wrapped in its cell (LibreOffice shows a hyperlinked cell on one line, so a long link would
    run past the page's margin or be cut; the wrapped text prints whole), and text only where
    Excel could not hold the link."""
    from openpyxl.styles import Alignment, Font

    cell = put_text(ws, row, col, url)
    # a link's target is a relationship's Target attribute, plain XML, not an ST_Xstring: no _x005F_ escape
    target = xml_text(url)
    if len(target) + 2 > width:
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    elif len(target) <= _MAX_LINK_CHARS and target.startswith(("http://", "https://")) and linkable(target, file):
        cell.hyperlink = target
        cell.font = Font(color=_LINK_COLOR, underline="single")
    return cell


def _sources_read(index: SourceIndex | None, cited: Sequence[CitedSource]) -> tuple[str, bool]:
    """What the Sources sheet says about the SOURCES.md files read, and whether it is a problem
    (a file missing or unreadable, an id defined twice or not at all)."""
    if index is None:
        return ("No SOURCES.md was read for this workbook: the documents of the ids below are not available.",
                bool(cited))
    parts = []
    for f in index.files:
        n = sum(1 for d in index.docs.values() if d.file == f)
        parts.append(f"{f} ({n} id{'' if n == 1 else 's'} defined)")
    for m in index.missing:
        if not any(p.startswith(f"{m}:") for p in index.problems):
            parts.append(f"no {m} (an overlay without one cites the shipped ids only)")
    text = "; ".join(parts) or "no SOURCES.md could be read"
    undefined = [f"REF:{c.id}" for c in cited if c.doc is None]
    if index.problems:
        text += ". Problems: " + "; ".join(index.problems)
    if undefined:
        text += ". Not defined in any SOURCES.md read: " + ", ".join(undefined)
    return text + ("" if text.endswith(".") else "."), bool(index.problems or undefined)


def write_sources(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource]) -> None:
    """Write the Sources sheet for ``cited`` (:func:`cited_sources` of ``data``)."""
    from openpyxl.styles import PatternFill

    st = styles()
    flag_fill = PatternFill("solid", fgColor=FLAG_FILL)
    title(ws, 1, SOURCES_TITLE)
    label(ws, 2, 1, "About")
    put_sentence(ws, 2, 2, SOURCES_ABOUT, len(SOURCES_HEADERS))
    label(ws, 3, 1, "SOURCES.md read")
    text, bad = _sources_read(data.references, cited)
    cell = put_sentence(ws, 3, 2, text, len(SOURCES_HEADERS))
    if bad:
        cell.fill = flag_fill
        cell.font = st["bold"]
    header(ws, SOURCES_HEADER_ROW, SOURCES_HEADERS)
    row = SOURCES_HEADER_ROW + 1
    if not cited:
        put_text(ws, row, 1, SOURCES_NONE)
    read = data.references.files if data.references is not None else ()
    # Widths: 186 characters in all at most, so the sheet prints one page wide at 70 % or more; a
    # link longer than its column is wrapped text (_put_link), its hyperlink left out.
    urls = [u for c in cited if c.doc is not None for u in c.doc.urls]
    link_width = min(48, max([len(u) + 2 for u in urls] + [len(SOURCES_HEADERS[3]) + 4]))
    for c in cited:
        put_text(ws, row, 1, f"REF:{c.id}")
        put_text(ws, row, 5, c.cited_by)
        if c.doc is None:
            missing = (f"NOT DEFINED in {', '.join(read)}" if read else
                       "NOT AVAILABLE: no SOURCES.md could be read (see row 3)")
            cell = put_text(ws, row, 2, f"{missing}; ask the catalog's maintainer for this document.")
            cell.fill = flag_fill
            cell.font = st["bold"]
            row += 1
            continue
        put_text(ws, row, 2, c.doc.text)
        put_text(ws, row, 3, c.doc.where)
        put_text(ws, row, 6, f"{c.doc.file}, line {c.doc.line}" if c.doc.line else c.doc.file)
        for i, url in enumerate(c.doc.urls):
            if i:
                row += 1
                put_text(ws, row, 1, f"REF:{c.id}")
                put_text(ws, row, 2, SOURCES_MORE_LINKS)
            _put_link(ws, row, 4, url, link_width, c.doc.file)
        row += 1
    _quote_sources(ws, data, cited, row + 1)
    ws.freeze_panes = f"A{SOURCES_HEADER_ROW + 1}"
    # the id column holds the longest cited 'REF:<id>' on one line (searchable in print), at B's expense
    id_width = min(26, max([17] + [len(c.id) + 6 for c in cited]))
    fit_columns(ws, fixed={"A": id_width, "B": 50 - (id_width - 17), "C": 30, "D": link_width, "E": 22, "F": 19},
                wrap_cols=("A", "B", "C", "E", "F"), wrap_from=2)


def _quote_sources(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource], row: int) -> None:
    """From row ``row``: each Quote line whose price source the Quote shows short
    (:func:`quote_source_cell`), its source in full with its ids' pointers (:func:`source_text`),
    wrapped across B-F."""
    by_id = {c.id: c for c in cited}
    lines = [(n, item.source) for n, item in enumerate(data.line_items, start=1)
             if item.source and quote_source_cell(item.source, by_id) != item.source]
    if not lines:
        return
    label(ws, row, 1, QUOTE_SOURCES_TITLE)
    header(ws, row + 1, QUOTE_SOURCES_HEADERS)
    merge_across(ws, row + 1, 2, len(SOURCES_HEADERS))
    for r, (n, text) in enumerate(lines, start=row + 2):
        put_text(ws, r, 1, f"Quote line {n}")
        put_sentence(ws, r, 2, source_text(text, by_id, data.references), len(SOURCES_HEADERS))
