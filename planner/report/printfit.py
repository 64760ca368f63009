"""What a sheet needs to print clean (issue 31, item 3): every number whole, every text inside its
cells and the page.

A spreadsheet program prints ``###`` for a number wider than its column and cuts a text where the
next cell holds a value or the print area ends. The sheets set their columns' widths for paper;
these helpers run last (:func:`planner.report.workbook._print_setup`), over what was written:

- :func:`widen_for_numbers`: each column at least as wide as the widest number it holds, as its
  number format shows it (:func:`shown_number`);
- :func:`wrap_cut_text`: a text cell that would be cut or run past the print area's last column
  wraps inside its cell, and its row grows to hold the lines.

Widths are in characters of Calibri 11's digit (7 px; ECMA-376 Part 1, 18.3.1.13, the unit of a
column's ``width``). A text's width is estimated from its characters: a character as wide as a
digit (Calibri's letters are narrower on average, so the estimate errs towards wrapping), bold
10 % wider, a monospaced font (Courier New, 11 pt: 0.6 em = 6.6 pt = 8.8 px) 8.8 / 7 of a digit.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

#: A monospaced character's width in digits: Courier New's advance width is 0.6 em (1229/2048 of
#: its em, the font's hmtx table); at 11 pt and 96 px an inch that is 8.8 px, Calibri's digit 7 px.
MONO_PER_DIGIT = 8.8 / 7
#: A column's character in pixels where Calibri is not installed: LibreOffice sizes the columns
#: with the font it substitutes, DejaVu Sans on a bare Linux, whose digits advance 1303/2048 em
#: (the font's hmtx table): 11 pt x 1303/2048 = 7.0 pt = 9.33 px at 96 px an inch, against
#: Calibri's 7 px. Pages then hold fewer columns; layouts that must end on a page use this.
FALLBACK_DIGIT_PX = 11 * 1303 / 2048 * 96 / 72
#: Bold text's width in plain text's (an estimate that errs towards wrapping).
BOLD_FACTOR = 1.1
#: Characters of a cell's padding and the margin against rounding: a text or number takes its
#: width plus this.
SLACK_CHARS = 1.0
#: An indent step in characters (Excel: 3 spaces of the default font; about a digit and a half).
INDENT_CHARS = 1.5
#: Points a wrapped line takes (Calibri 11's line height, as the sheets' :func:`fit_heights` uses).
LINE_PT = 15.0

_QUOTED = re.compile(r'"([^"]*)"')


def shown_number(value: float | int, number_format: str | None) -> str:
    """``value`` as ``number_format`` shows it, for the formats the workbooks use: literal text in
    quotes or a '$', a thousands separator (',' in the format), a fixed count of decimals ('0.00'),
    a percent ('%': the value times 100). 'General' or None: up to 10 significant digits, as
    spreadsheet programs show a number in a column wide enough. Only the positive section of a
    format with sections (';') is read; a negative value gets its '-'.

    >>> shown_number(1234567.891, '"$"#,##0.00;[Red]-"$"#,##0.00')
    '$1,234,567.89'
    >>> shown_number(0.125, "0.00%")
    '12.50%'
    """
    return _shown(value, _read_format(number_format))


def _read_format(number_format: str | None) -> tuple[str, bool, int, bool] | None:
    """What :func:`shown_number` reads of a number format: (literal text, percent, decimals,
    thousands separator), or None for 'General' (and '@', '')."""
    fmt = (number_format or "General").split(";")[0]
    if fmt in ("General", "@", ""):
        return None
    literal = "".join(_QUOTED.findall(fmt))
    core = _QUOTED.sub("", fmt)
    core = re.sub(r"\[[^\]]*\]", "", core)
    if "$" in core:
        literal += "$"
    m = re.search(r"\.([0#]+)", core)
    return literal, "%" in core, len(m.group(1)) if m else 0, "," in core


def _shown(value: float | int, fmt: tuple[str, bool, int, bool] | None) -> str:
    """:func:`shown_number` with the format already read (:func:`_read_format`)."""
    if fmt is None:
        return f"{value:.10g}" if isinstance(value, float) else str(value)
    literal, pct, decimals, comma = fmt
    x = abs(float(value)) * (100 if pct else 1)
    digits = f"{x:,.{decimals}f}" if comma else f"{x:.{decimals}f}"
    return ("-" if value < 0 else "") + literal + digits + ("%" if pct else "")


def _width(ws: Worksheet, col: int) -> float:
    from openpyxl.utils import get_column_letter

    return ws.column_dimensions[get_column_letter(col)].width or 8.43


class _Looks:
    """A sheet's cells' fonts, alignments and number formats read by style id, each id once, and its
    columns' widths, each once (the helpers below read them for every written cell; ``cell.font``
    and ``cell.alignment`` build a proxy on each read). Used within one helper's pass only: the
    widths are read before the helper changes any."""

    def __init__(self, ws: Worksheet) -> None:
        self.ws = ws
        self.fonts, self.alignments = ws.parent._fonts, ws.parent._alignments
        self._font: dict[int, tuple[bool, float, float]] = {}
        self._formats: dict[int, tuple[str, bool, int, bool] | None] = {}
        self._widths: dict[int, float] = {}

    def font(self, cell: Any) -> tuple[bool, float, float]:
        """(bold, the width factor of :func:`text_width_of` before the size, the size in pt or 11)."""
        st = cell._style
        i = st.fontId if st is not None else 0
        got = self._font.get(i)
        if got is None:
            font = self.fonts[i]
            factor = MONO_PER_DIGIT if (font.name or "").lower().startswith("courier") else 1.0
            if font.b:
                factor *= BOLD_FACTOR
            got = self._font[i] = (bool(font.b), factor, font.sz or 11)
        return got

    def alignment(self, cell: Any) -> Any:
        st = cell._style
        return self.alignments[st.alignmentId if st is not None else 0]

    def number_format(self, cell: Any) -> tuple[str, bool, int, bool] | None:
        """The cell's number format as :func:`_read_format` reads it."""
        st = cell._style
        i = st.numFmtId if st is not None else 0
        if i not in self._formats:
            self._formats[i] = _read_format(cell.number_format)
        return self._formats[i]

    def width(self, col: int) -> float:
        w = self._widths.get(col)
        if w is None:
            w = self._widths[col] = _width(self.ws, col)
        return w

    def text_width(self, cell: Any, text: str) -> float:
        """:func:`text_width_of` ``text`` in ``cell``'s font."""
        _, factor, size = self.font(cell)
        return len(text) * factor * size / 11


def widen_for_numbers(ws: Worksheet, computed: Mapping[str, float] | None = None) -> None:
    """Widen every column of ``ws`` that holds a number (int or float, not a bool) to its widest
    shown value (:func:`shown_number`) plus :data:`SLACK_CHARS`: no ``###`` on screen or paper. A number
    in a merged range widens the range's last column by what the range lacks. Formulas are not
    evaluated here: ``computed`` gives the values of those a sheet can compute, by coordinate (the Quote's
    totals and the Summary's total: planner.report.sheets.quote.quote_values), so that a $19.8M total in a
    14-character column is no ``###`` either (h16b #2); other formulas' columns are sized by the sheets."""
    from openpyxl.utils import get_column_letter

    looks = _Looks(ws)
    need: dict[int, float] = {}
    merged = {(rng.min_row, rng.min_col): rng.max_col for rng in ws.merged_cells.ranges}
    computed = computed or {}
    for cell in list(ws._cells.values()):  # the written cells (cells.written_cells), in any order
        if cell.data_type == "f" and cell.coordinate in computed:
            value = computed[cell.coordinate]
        elif cell.data_type != "n":
            continue
        else:
            value = cell._value  # cell.value, without the property
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if value != value or value in (float("inf"), float("-inf")):
            continue
        n = len(_shown(value, looks.number_format(cell))) * (BOLD_FACTOR if looks.font(cell)[0] else 1.0) + SLACK_CHARS
        end = merged.get((cell.row, cell.column), cell.column)
        if end > cell.column:  # a merged range: its last column takes what the others lack
            n -= sum(looks.width(c) + 5 / 7 for c in range(cell.column, end))
        need[end] = max(need.get(end, 0.0), n)
    for col, n in need.items():
        if looks.width(col) < n:
            ws.column_dimensions[get_column_letter(col)].width = math.ceil(n)


def text_width(cell: Any) -> float:
    """The width ``cell``'s text takes on one line, in digit widths: its longest line's characters
    (x :data:`BOLD_FACTOR` bold, x :data:`MONO_PER_DIGIT` monospaced), its indent, :data:`SLACK_CHARS`."""
    longest = max(str(cell.value).split("\n"), key=len)
    return text_width_of(longest, cell) + (cell.alignment.indent or 0) * INDENT_CHARS + SLACK_CHARS


def wrap_cut_text(ws: Worksheet, last_col: int, page_ends: tuple[int, ...] = ()) -> list[str]:
    """Wrap each text cell of ``ws`` that would be cut on paper: one not wrapped whose text is wider
    than its column (or its merged range) and the empty cells right of it up to ``last_col`` (the
    print area's last column, or the last column of its page, ``page_ends``, for a sheet printed
    several pages wide): the next value or the page's edge would cut it. Titles (a font
    over 11 pt) in column A are left to spill over their empty row. The row grows to the lines the
    text takes (:data:`LINE_PT` a line) and its other cells align to the top. Returns the changed
    cells' coordinates. One pass over the written cells, each style id and column width read once
    (:class:`_Looks`)."""
    looks = _Looks(ws)
    merged = {(rng.min_row, rng.min_col): rng.max_col for rng in ws.merged_cells.ranges}
    cells = ws._cells
    changed = []
    # the text cells, by row then column (what the loop below changes never makes or unmakes one)
    texts = sorted(key for key, cell in cells.items() if cell.data_type == "s" and isinstance(cell._value, str)
                   and cell._value and type(cell).__name__ != "MergedCell")
    for key in texts:
        cell = cells[key]
        value = cell.value
        alignment = looks.alignment(cell)
        if alignment.wrap_text or alignment.shrink_to_fit:
            continue
        row, col = key
        if col == 1 and looks.font(cell)[2] > 11 and "\n" not in value:
            continue  # a title: spills over its empty row
        end = merged.get(key, col)
        width = sum(looks.width(c) for c in range(col, end + 1)) + (end - col) * 5 / 7
        longest = max(value.split("\n"), key=len) if "\n" in value else value
        need = looks.text_width(cell, longest) + (alignment.indent or 0) * INDENT_CHARS + SLACK_CHARS  # text_width
        if need <= width:
            continue
        _wrap_cut(ws, looks, cell, value, width, need, end, min([e for e in page_ends if e >= end] + [last_col]))
        changed.append(cell.coordinate)
    return changed


def _wrap_cut(ws: Worksheet, looks: _Looks, cell: Any, value: str, width: float, need: float, end: int,
              stop: int) -> None:
    """:func:`wrap_cut_text` for one cell wider than its ``width``: wrapped unless it spills over
    empty cells up to column ``stop`` (one line, left-aligned); its row grown to the lines."""
    from openpyxl.styles import Alignment

    row = cell.row
    alignment = cell.alignment
    spill = width
    c = end + 1
    while c <= stop and spill < need:
        nxt = ws._cells.get((row, c))
        if nxt is not None and nxt.value is not None:
            break
        spill += looks.width(c) + 5 / 7
        c += 1
    if spill >= need and "\n" not in value and alignment.horizontal in (None, "general", "left"):
        return
    cell.alignment = Alignment(horizontal=alignment.horizontal, vertical="top", wrap_text=True,
                               indent=alignment.indent)
    per_line = max(1.0, width - SLACK_CHARS - (alignment.indent or 0) * INDENT_CHARS)
    chars = max(1, int(per_line / (text_width_of("x", cell) or 1)))  # characters a line holds
    lines = sum(max(1, len(textwrap.wrap(part, chars))) for part in value.split("\n"))
    height = ws.row_dimensions[row].height or LINE_PT
    if lines * LINE_PT > height:
        ws.row_dimensions[row].height = lines * LINE_PT
        for other in ws[row]:
            if other.value is not None and not other.alignment.wrap_text and other.alignment.vertical != "top":
                a = other.alignment
                other.alignment = Alignment(horizontal=a.horizontal, vertical="top", indent=a.indent)


def text_width_of(text: str, cell: Any) -> float:
    """The width ``text`` takes in ``cell``'s font, in digit widths (:func:`text_width` without the
    indent and the slack), one line."""
    font = cell.font
    factor = MONO_PER_DIGIT if (font.name or "").lower().startswith("courier") else 1.0
    if font.b:
        factor *= BOLD_FACTOR
    return len(text) * factor * (font.sz or 11) / 11


def page_columns(ws: Worksheet, page_px: float, last_col: int, digit_px: float = FALLBACK_DIGIT_PX,
                 repeated: int = 0) -> list[tuple[int, int]]:
    """(first, last) column of each page across, for a sheet printed several pages wide: a page
    holds the columns whose widths (``w * digit_px + 5`` px each) add up to ``page_px`` or less,
    after the ``repeated`` first columns (``print_title_cols``) that every page after the first
    repeats; at least one column a page."""
    def px(c: int) -> float:
        return _width(ws, c) * digit_px + 5

    title_px = sum(px(c) for c in range(1, repeated + 1))
    pages, col = [], 1
    while col <= last_col:
        used = title_px if pages else 0.0
        first = col
        while col <= last_col and (col == first or used + px(col) <= page_px):
            used += px(col)
            col += 1
        pages.append((first, col - 1))
    return pages


def fit_merges_to_page(ws: Worksheet, page_px: float, last_col: int, digit_px: float = FALLBACK_DIGIT_PX,
                       repeated: int = 0) -> list[str]:
    """Shrink each one-row merged range that runs over a page's last column (:func:`page_columns`)
    to end on that page: a sentence merged across a sheet printed several pages wide would
    otherwise be cut at the page's edge. ``digit_px`` defaults to the widest digit a spreadsheet
    program may size the columns with (:data:`FALLBACK_DIGIT_PX`). The row grows to the lines the
    text then takes (:data:`LINE_PT` a line). Returns the new ranges."""
    from openpyxl.utils import get_column_letter

    ends = [b for _, b in page_columns(ws, page_px, last_col, digit_px, repeated)]
    changed = []
    for rng in list(ws.merged_cells.ranges):
        if rng.min_row != rng.max_row:
            continue
        end = next((b for b in ends if b >= rng.min_col), rng.max_col)
        if rng.max_col <= end:
            continue
        row, first = rng.min_row, rng.min_col
        ws.unmerge_cells(str(rng))
        new = f"{get_column_letter(first)}{row}:{get_column_letter(end)}{row}"
        if end > first:
            ws.merge_cells(new)
        cell = ws.cell(row=row, column=first)
        width = sum(_width(ws, c) for c in range(first, end + 1)) + (end - first) * 5 / 7
        per_line = max(1, int((width - SLACK_CHARS) / (text_width_of("x", cell) or 1)))
        lines = sum(max(1, len(textwrap.wrap(part, per_line))) for part in str(cell.value or "").split("\n"))
        if lines * LINE_PT > (ws.row_dimensions[row].height or LINE_PT):
            ws.row_dimensions[row].height = lines * LINE_PT
        changed.append(new)
    return changed
