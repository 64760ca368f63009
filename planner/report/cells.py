"""Cells a workbook can hold safely, and the styles and layout helpers every sheet shares.

Text that comes from user files is always stored as a text cell (:func:`put_text`), so a value
starting with ``=``, ``+``, ``-`` or ``@`` never becomes a formula; control characters XML cannot
hold are removed and text is cut to Excel's 32,767 characters a cell (:func:`clean_text`).
Numbers, dates and formulas have their own writers (:func:`put_value`, :func:`put_formula`). The
layout helpers set column widths from the content (:func:`fit_columns`) and grow the rows of
wrapped text (:func:`fit_heights`); a sentence (a warning, a note, a source) goes into a wrapped
cell merged across the printed width of its table (:func:`put_sentence`), so it wraps on paper
instead of running past the page edge. openpyxl is imported inside the functions.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from planner.core.escape import XSTRING_ESCAPE
from planner.core.units import GiB

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

#: Number formats.
USD_FORMAT = '"$"#,##0.00;[Red]-"$"#,##0.00'
GIB_FORMAT = "#,##0.00"
PCT_FORMAT = "0.00%"
INT_FORMAT = "#,##0"
DATE_FORMAT = "yyyy-mm-dd"

#: Characters that make a spreadsheet read a typed value as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@")

_MAX_CELL_CHARS = 32_767  # Excel's limit for one cell
INPUT_FILL = "FFF2CC"  # light yellow: cells the buyer may edit
FLAG_FILL = "F8CBAD"  # light red: a price to get a vendor quote for
BANNER_COLOR = "C00000"  # dark red text: the Quote sheet's "not a vendor quote" banner
HEADER_FILL = "DDEBF7"
MAX_WIDTH = 60  # characters: the widest a column grows from its content


# ----- safe cells ---------------------------------------------------------------------------------

# A cell's text is an ST_Xstring (ECMA-376 Part 1, 22.9.2.19): a reader decodes ``_xHHHH_`` in it as
# the character U+HHHH (LibreOffice and Excel turn ``_x001b_`` into ESC; LibreOffice 7 also reads one to
# three digits, ``_x1_``, as a control character), and a literal ``_x`` before hex digits and ``_`` is
# written with its underscore escaped, ``_x005F_``, to be shown as typed.
_XSTRING_ESCAPE = XSTRING_ESCAPE  # planner.core.escape, which counts a cell's units the same way (cell_units)


def clean_text(value: object) -> str:
    """``value`` as text a workbook can hold: the characters XML 1.0 forbids shown as escapes (control
    characters, lone surrogates, U+FFFE, U+FFFF: planner.core.escape.xml_text), a literal ``_xHHHH_``
    kept literal (its underscore written ``_x005F_``, ECMA-376 Part 1, 22.9.2.19 ST_Xstring, so no
    reader decodes it into a control character), cut to Excel's 32,767 characters per cell, counted in
    UTF-16 units as Excel counts them."""
    from planner.core.escape import xml_text

    text = _XSTRING_ESCAPE.sub("_x005F_x", xml_text(value))
    if len(text) * 2 > _MAX_CELL_CHARS:  # at most 2 UTF-16 units per character: cut only a text that may be over
        units = text.encode("utf-16-le")
        if len(units) > 2 * _MAX_CELL_CHARS:
            # Excel counts a cell's characters in UTF-16 units (an emoji outside the BMP is a surrogate pair,
            # two of them: Excel specifications and limits, 'Total number of characters that a cell can
            # contain'); a pair cut in half is dropped (errors='ignore')
            text = units[: 2 * (_MAX_CELL_CHARS - 1)].decode("utf-16-le", errors="ignore") + "\u2026"
    return text


def property_text(value: object) -> str:
    """``value`` as a document property (docProps/core.xml: title, subject, description) holds it: the
    characters XML 1.0 forbids shown as escapes (planner.core.escape.xml_text) and nothing else. A
    property is plain XML text (ECMA-376 Part 2, 11 Core Properties: Dublin Core elements), not an
    ST_Xstring, so no reader decodes ``_xHHHH_`` in it and the cell escape (``_x005F_``, :func:`clean_text`)
    must not be applied: ``run_x2000_final`` is written as it is (h17b #1). openpyxl writes ``&`` and ``<``
    as entities."""
    from planner.core.escape import xml_text

    return xml_text(value)


def put_text(ws: Worksheet, row: int, col: int, value: object):
    """Write ``value`` as a text cell, never a formula, whatever its first character.

    openpyxl reads a str starting with '=' as a formula; forcing the cell's data type to 's'
    stores it as a shared string. Text starting with one of :data:`FORMULA_PREFIXES` also gets
    Excel's quote prefix, so editing the cell in Excel keeps it text.
    """
    text = clean_text(value)
    cell = ws.cell(row=row, column=col)
    # what ``cell.value = text`` stores for a str, without its checks: clean_text already removed
    # what openpyxl's check_string refuses (the same control characters) and cut to its length,
    # and the type is forced to text ('s') below anyway (openpyxl/cell/cell.py, _bind_value)
    cell._value = text
    cell.data_type = "s"
    if text.startswith(FORMULA_PREFIXES):
        cell.quotePrefix = True
    return cell


def put_value(ws: Worksheet, row: int, col: int, value: object, number_format: str | None = None):
    """Write a number, bool, date or text (text through :func:`put_text`); NaN and None stay empty."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return ws.cell(row=row, column=col)
    if isinstance(value, str):
        return put_text(ws, row, col, value)
    if isinstance(value, float) and not math.isfinite(value):
        return ws.cell(row=row, column=col)
    if isinstance(value, (bool, int, float, date, datetime)):
        cell = ws.cell(row=row, column=col, value=value)
    elif hasattr(value, "item") and not isinstance(value, (list, tuple)):  # numpy scalar
        return put_value(ws, row, col, value.item(), number_format)
    elif isinstance(value, (list, tuple, set, frozenset)):
        return put_text(ws, row, col, "; ".join(str(v) for v in value))
    else:
        return put_text(ws, row, col, value)
    if number_format:
        cell.number_format = number_format
    return cell


def put_formula(ws: Worksheet, row: int, col: int, formula: str, number_format: str | None = None):
    """Write a formula the planner built (never user text)."""
    if not formula.startswith("="):
        raise ValueError(f"not a formula: {formula!r}")
    cell = ws.cell(row=row, column=col, value=formula)
    if number_format:
        cell.number_format = number_format
    return cell


# ----- sheet helpers --------------------------------------------------------------------------

#: The roles :func:`style` knows, in the order :func:`styles` lists them.
STYLE_ROLES = ("title", "bold", "section", "header_fill", "input_fill", "wrap", "top", "mono")


def style(role: str):
    """The shared font, fill or alignment of one role of :data:`STYLE_ROLES` (a new object each call;
    only that one is built: the helpers below run once per cell or row)."""
    from openpyxl.styles import Alignment, Font, PatternFill

    if role == "title":
        return Font(bold=True, size=14)
    if role == "bold":
        return Font(bold=True)
    if role == "section":
        return Font(bold=True, size=12)
    if role == "header_fill":
        return PatternFill("solid", fgColor=HEADER_FILL)
    if role == "input_fill":
        return PatternFill("solid", fgColor=INPUT_FILL)
    if role == "wrap":
        return Alignment(wrap_text=True, vertical="top")
    if role == "top":
        return Alignment(vertical="top")
    if role == "mono":
        return Font(name="Courier New")
    raise KeyError(role)


def styles():
    """The shared fonts, fills and alignments by role ('title', 'bold', 'header_fill', ...): every
    role of :data:`STYLE_ROLES`, by :func:`style`."""
    return {role: style(role) for role in STYLE_ROLES}


def header(ws: Worksheet, row: int, headers: Sequence[str], col: int = 1) -> None:
    """A table's header row: bold, filled, wrapped, from column ``col`` on."""
    bold, fill, wrap = style("bold"), style("header_fill"), style("wrap")
    for i, h in enumerate(headers):
        cell = put_text(ws, row, col + i, h)
        cell.font = bold
        cell.fill = fill
        cell.alignment = wrap


def title(ws: Worksheet, row: int, text: str) -> None:
    """A sheet's or table's title in column A (14 pt bold)."""
    put_text(ws, row, 1, text).font = style("title")


def section(ws: Worksheet, row: int, text: str) -> None:
    """A section heading in column A (12 pt bold)."""
    put_text(ws, row, 1, text).font = style("section")


def label(ws: Worksheet, row: int, col: int, text: str) -> None:
    """A bold label."""
    put_text(ws, row, col, text).font = style("bold")


def mark_input(cell) -> None:
    """Fill ``cell`` yellow: a cell the buyer may edit."""
    cell.fill = style("input_fill")


def written_cells(ws: Worksheet) -> list:
    """The cells of ``ws`` that were written, by row then column.

    Unlike ``ws.iter_rows()`` and ``ws[row]``, which visit (and create) every cell of the used
    rectangle and compute ``max_column`` over the whole sheet on each call, this reads only the
    cells that exist, once: the layout helpers stay linear in the cells written. (openpyxl keeps
    them in ``Worksheet._cells``, keyed by (row, column); it has no public accessor for them.)
    """
    cells = ws._cells
    return [cells[key] for key in sorted(cells)]  # the keys alone sort about 4x faster than the items


class _Styles:
    """A workbook's fonts and alignments read by style id, each id once.

    ``cell.font`` and ``cell.alignment`` build a proxy object on every read, and assigning one
    hashes it to find its id; the layout helpers touch every written cell, so they read a cell's
    ids (``cell._style``, openpyxl's per-cell array of style ids) and assign ids directly, as
    openpyxl's own style descriptor does (``openpyxl/styles/styleable.py``, StyleDescriptor).
    """

    def __init__(self, wb: Any) -> None:
        self.fonts, self.alignments = wb._fonts, wb._alignments
        self._big: dict[int, bool] = {}
        self._bold: dict[int, bool] = {}
        self._wraps: dict[int, bool] = {}
        self._top: dict[int, int] = {}
        self._added: dict[int, int] = {}  # id(alignment) -> its index, for alignments the caller keeps

    @staticmethod
    def ids(cell: Any) -> Any:
        """The cell's style ids (created, all 0, for a cell without any, as openpyxl does on a read)."""
        if cell._style is None:
            from openpyxl.styles.cell_style import StyleArray

            cell._style = StyleArray()
        return cell._style

    def big(self, cell: Any) -> bool:
        """Whether the cell's font is larger than 11 pt (a title, which spills right)."""
        st = cell._style
        i = st.fontId if st is not None else 0  # no style array: every id 0
        got = self._big.get(i)
        if got is None:
            got = self._big[i] = (self.fonts[i].sz or 11) > 11
        return got

    def bold(self, cell: Any) -> bool:
        st = cell._style
        i = st.fontId if st is not None else 0
        got = self._bold.get(i)
        if got is None:
            got = self._bold[i] = bool(self.fonts[i].b)
        return got

    def wraps(self, cell: Any) -> bool:
        st = cell._style
        i = st.alignmentId if st is not None else 0
        got = self._wraps.get(i)
        if got is None:
            got = self._wraps[i] = bool(self.alignments[i].wrap_text)
        return got

    def set_alignment(self, cell: Any, alignment: Any) -> None:
        """``cell.alignment = alignment``; ``alignment`` is hashed once per helper, not per cell."""
        key = id(alignment)
        if key not in self._added:
            self._added[key] = self.alignments.add(alignment)
        self.ids(cell).alignmentId = self._added[key]

    def align_top(self, cell: Any) -> None:
        """The cell's horizontal alignment kept, vertical set to top (nothing else kept)."""
        from openpyxl.styles import Alignment

        i = self.ids(cell).alignmentId
        if i not in self._top:
            self._top[i] = self.alignments.add(Alignment(horizontal=self.alignments[i].horizontal, vertical="top"))
        cell._style.alignmentId = self._top[i]


def merge_across(ws: Worksheet, row: int, first_col: int, last_col: int) -> None:
    """Merge ``row``'s cells ``first_col``..``last_col`` (the value stays in the first).

    ``Worksheet.merge_cells`` checks the new range against every range merged before (openpyxl's
    ``MultiCellRange.add`` scans them all), which is quadratic in a sheet of one merged sentence a
    row; the sheets merge only rows they wrote themselves, never overlapping, so the range is
    added to the sheet's set directly and its other cells replaced as ``merge_cells`` does
    (``openpyxl/worksheet/worksheet.py``, ``merge_cells`` and ``_clean_merge_range``; the borders
    ``MergedCellRange.format`` would copy are left out: no sheet draws any).
    """
    from openpyxl.cell.cell import MergedCell
    from openpyxl.worksheet.merge import MergedCellRange

    if last_col <= first_col:
        return
    mcr = MergedCellRange(ws, f"{_letter(first_col)}{row}:{_letter(last_col)}{row}")
    ws.merged_cells.ranges.add(mcr)
    # the covered cells become MergedCells (no borders to copy: the sheets draw none)
    for col in range(first_col + 1, last_col + 1):
        ws._cells[(row, col)] = MergedCell(ws, row, col)


def put_sentence(ws: Worksheet, row: int, col: int, text: object, last_col: int, font: Any = None):
    """Write a sentence (a warning, a note, a source) as text wrapped in ``row``'s cells ``col`` to
    ``last_col``, merged: it wraps at the table's printed width instead of running past the page
    edge. :func:`fit_heights` (called by :func:`fit_columns`) sizes the row for it."""
    return _put_sentence(ws, row, col, text, last_col, *_sentence_ids(ws, font))


def put_sentences(ws: Worksheet, row: int, col: int, texts: Iterable[object], last_col: int, font: Any = None) -> int:
    """:func:`put_sentence` of each of ``texts`` on the rows from ``row`` down, the font and the
    wrapped alignment looked up once for all; returns the row after the last."""
    ids = None  # looked up at the first text: no text, no style added to the workbook
    for text in texts:
        ids = ids or _sentence_ids(ws, font)
        _put_sentence(ws, row, col, text, last_col, *ids)
        row += 1
    return row


def _sentence_ids(ws: Worksheet, font: Any) -> tuple[int, int | None]:
    """(alignment id of the wrapped, top-aligned alignment; font id of ``font`` or None) in ``ws``'s
    workbook: what ``cell.alignment = ...`` and ``cell.font = font`` would store
    (``openpyxl/styles/styleable.py``, StyleDescriptor), without building every shared style (styles())."""
    from openpyxl.styles import Alignment

    wb = ws.parent
    font_id = None if font is None else wb._fonts.add(font)  # the font first, as put_sentence always added them
    return wb._alignments.add(Alignment(wrap_text=True, vertical="top")), font_id


def _put_sentence(ws: Worksheet, row: int, col: int, text: object, last_col: int, alignment_id: int,
                  font_id: int | None):
    cell = put_text(ws, row, col, text)
    ids = _Styles.ids(cell)
    if font_id is not None:
        ids.fontId = font_id
    ids.alignmentId = alignment_id
    merge_across(ws, row, col, last_col)
    return cell


def _letter(col: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(col)


def merged_widths(ws: Worksheet) -> dict[tuple[int, int], float]:
    """(row, column) of the first cell of each one-row merge over several columns -> the merge's
    width in characters (the columns' widths, 8.43 where unset, and the cell padding between them,
    5 px of 7 px a character). Each column's width is read once (a sheet of merged sentences
    merges the same columns on every row)."""
    out: dict[tuple[int, int], float] = {}
    widths: dict[int, float] = {}

    def width(c: int) -> float:
        w = widths.get(c)
        if w is None:
            w = widths[c] = ws.column_dimensions[_letter(c)].width or 8.43
        return w

    for rng in ws.merged_cells.ranges:
        if rng.max_col > rng.min_col:
            out[(rng.min_row, rng.min_col)] = sum(
                width(c) for c in range(rng.min_col, rng.max_col + 1)) + (rng.max_col - rng.min_col) * 5 / 7
    return out


def _merge_starts(ws: Worksheet) -> set[tuple[int, int]]:
    """The keys of :func:`merged_widths` alone: (row, column) of each merge over several columns' first cell."""
    return {(rng.min_row, rng.min_col) for rng in ws.merged_cells.ranges if rng.max_col > rng.min_col}


def fit_columns(ws: Worksheet, fixed: dict[str, float] | None = None, wrap_cols: Iterable[str] = (),
                wrap_from: int = 1, cap: int = MAX_WIDTH, wrap_to: int | None = None) -> None:
    """Column widths from the longest value in each column (formulas count as 14), capped at 60;
    ``fixed`` overrides; text in ``wrap_cols`` from row ``wrap_from`` on wraps, and rows grow to fit.

    One pass over the written cells (:func:`written_cells`), then one over the wrapped columns'.
    A cell's font is read by its style id (``cell._style``), each id once (:class:`_Styles`).
    """
    from openpyxl.utils import get_column_letter

    looks = _Styles(ws.parent)
    fonts = looks.fonts
    big: dict[int, bool] = {}  # font id -> larger than 11 pt (a title, which spills right)
    wrap = set(wrap_cols)
    best: dict[int, int] = {}
    by_column: dict[int, list] = {}
    merged = _merge_starts(ws)
    cells = written_cells(ws)
    for cell in cells:
        value = cell._value  # cell.value, without the property
        if value is None:
            continue
        st = cell._style
        font_id = st.fontId if st is not None else 0  # no style array: every id 0
        is_big = big.get(font_id)
        if is_big is None:
            is_big = big[font_id] = (fonts[font_id].sz or 11) > 11
        if is_big:  # titles spill right
            continue
        col = cell.column
        if (cell.row, col) in merged:  # a sentence wrapped across its table's columns
            continue
        by_column.setdefault(col, []).append(cell)
        if cell.data_type == "f":
            n = 14
        elif isinstance(value, float):
            n = 14
        elif isinstance(value, (date, datetime)):
            n = 11
        else:
            text = value if isinstance(value, str) else str(value)
            n = (max(len(line) for line in text.split("\n")) if "\n" in text else len(text)) + 2
        if n > best.get(col, 0):
            best[col] = n
    wrapped = style("wrap")
    for col, n in best.items():
        letter = get_column_letter(col)
        ws.column_dimensions[letter].width = min(max(n, 8), cap)
        if letter in wrap:
            for cell in by_column[col]:
                if wrap_from <= cell.row <= (wrap_to or cell.row):
                    looks.set_alignment(cell, wrapped)
    for letter, width in (fixed or {}).items():
        ws.column_dimensions[letter].width = width
    _fit_heights(ws, 15.0, cells)  # the same cells: fitting the columns writes none


def fit_heights(ws: Worksheet, line_pt: float = 15.0) -> None:
    """Row heights for wrapped cells: lines needed at the column's width, 15 pt a line.

    Spreadsheet programs do not grow a row for wrapped text written by a library, so the height
    is set from an estimate: words wrapped at about the column width in characters (5 % more for
    plain text, 10 % fewer for bold; a merged sentence's width is its merge's, :func:`merged_widths`).
    Cells of a grown row are aligned to the top. One pass over the written cells
    (:func:`written_cells`): linear in them, however many rows grow.
    """
    _fit_heights(ws, line_pt, written_cells(ws))


def _fit_heights(ws: Worksheet, line_pt: float, cells: list) -> None:
    """:func:`fit_heights` over ``cells``, the written cells of ``ws`` by row then column; each
    style id's wrap and bold read once, each column's width once."""
    looks = _Styles(ws.parent)
    merged = merged_widths(ws)
    need: dict[int, int] = {}
    by_row: dict[int, list] = {}
    wrapped_lines: dict[tuple[str, int], int] = {}  # the same text wraps the same way at one width
    widths: dict[int, float] = {}  # column -> its width (the columns do not change here)
    for cell in cells:
        value = cell._value  # cell.value, without the property
        if value is None:
            continue
        by_row.setdefault(cell.row, []).append(cell)
        if not isinstance(value, str) or cell.data_type == "f" or not looks.wraps(cell):
            continue
        width = merged.get((cell.row, cell.column))
        if not width:
            width = widths.get(cell.column)
            if width is None:
                width = widths[cell.column] = ws.column_dimensions[cell.column_letter].width or 8.43
        per_line = max(1, int(width * (0.9 if looks.bold(cell) else 1.05)) - 1)
        lines = wrapped_lines.get((value, per_line))
        if lines is None:
            lines = wrapped_lines[(value, per_line)] = sum(
                max(1, len(textwrap.wrap(part, per_line, break_on_hyphens=False))) for part in value.split("\n"))
        if lines > need.get(cell.row, 1):
            need[cell.row] = lines
    for r, lines in need.items():
        if lines > 1:
            ws.row_dimensions[r].height = line_pt * lines
            for cell in by_row[r]:
                if not looks.wraps(cell):
                    looks.align_top(cell)


def indent_after_numbers(ws: Worksheet) -> None:
    """Indent (one step, about a character) every text cell whose left neighbour holds a number, a
    date or a formula: a right-aligned figure and left-aligned text would otherwise touch and read
    as one value ('96.00' + 'pure-bf16' as '96.00pure-bf16'). One pass over the written cells, in
    any order (no sort), each alignment looked up once."""
    from openpyxl.styles import Alignment

    looks = _Styles(ws.parent)
    indented: dict[int, int] = {}
    cells = ws._cells
    for cell in list(cells.values()):
        if cell.data_type != "s" or cell.value is None or cell.column == 1:
            continue
        left = cells.get((cell.row, cell.column - 1))
        if left is None or left.value is None or left.data_type not in ("n", "f", "d"):
            continue
        i = looks.ids(cell).alignmentId
        if i not in indented:
            a = looks.alignments[i]
            indented[i] = looks.alignments.add(Alignment(
                horizontal=a.horizontal if a.horizontal not in (None, "general") else "left", vertical=a.vertical,
                wrap_text=a.wrap_text, indent=max(1, int(a.indent or 0))))
        cell._style.alignmentId = indented[i]


def split_coord(coord: str) -> tuple[str, int]:
    """'F12' -> ('F', 12)."""
    m = re.fullmatch(r"([A-Z]+)([0-9]+)", coord)
    if not m:  # pragma: no cover - internal
        raise ValueError(coord)
    return m.group(1), int(m.group(2))


def gib(n_bytes: int | float | None) -> float | None:
    """Bytes in GiB (2**30 bytes); None stays None."""
    return None if n_bytes is None else n_bytes / GiB


# ----- dates --------------------------------------------------------------------------------------

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def as_of_value(text: str) -> date | str:
    """A price's or source's as-of text as a cell value: a full date 'YYYY-MM-DD' becomes a
    :class:`datetime.date` (an Excel date), anything else (a month 'YYYY-MM') stays text."""
    if isinstance(text, str) and _ISO_DATE.fullmatch(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            return text
    return text


def put_as_of(ws: Worksheet, row: int, col: int, text: str):
    """An as-of text as a date cell (:func:`as_of_value`) or as text."""
    value = as_of_value(text)
    if isinstance(value, date):
        return put_value(ws, row, col, value, DATE_FORMAT)
    return put_text(ws, row, col, value)

