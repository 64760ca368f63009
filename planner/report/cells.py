"""Cells a workbook can hold safely, and the styles and layout helpers every sheet shares.

Text that comes from user files is always stored as a text cell (:func:`put_text`), so a value
starting with ``=``, ``+``, ``-`` or ``@`` never becomes a formula; control characters XML cannot
hold are removed and text is cut to Excel's 32,767 characters a cell (:func:`clean_text`).
Numbers, dates and formulas have their own writers (:func:`put_value`, :func:`put_formula`). The
layout helpers set column widths from the content (:func:`fit_columns`) and grow the rows of
wrapped text (:func:`fit_heights`). openpyxl is imported inside the functions.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING

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
_ILLEGAL = re.compile(r"[\000-\010\013\014\016-\037]")  # control characters XML 1.0 cannot hold
INPUT_FILL = "FFF2CC"  # light yellow: cells the buyer may edit
FLAG_FILL = "F8CBAD"  # light red: a price to get a vendor quote for
BANNER_COLOR = "C00000"  # dark red text: the Quote sheet's "not a vendor quote" banner
HEADER_FILL = "DDEBF7"
MAX_WIDTH = 60  # characters: the widest a column grows from its content


# ----- safe cells ---------------------------------------------------------------------------------

def clean_text(value: object) -> str:
    """``value`` as text a workbook can hold: XML-illegal control characters removed, cut to Excel's
    32,767 characters per cell."""
    text = _ILLEGAL.sub("", str(value))
    if len(text) > _MAX_CELL_CHARS:
        text = text[: _MAX_CELL_CHARS - 1] + "\u2026"
    return text


def put_text(ws: Worksheet, row: int, col: int, value: object):
    """Write ``value`` as a text cell, never a formula, whatever its first character.

    openpyxl reads a str starting with '=' as a formula; forcing the cell's data type to 's'
    stores it as a shared string. Text starting with one of :data:`FORMULA_PREFIXES` also gets
    Excel's quote prefix, so editing the cell in Excel keeps it text.
    """
    text = clean_text(value)
    cell = ws.cell(row=row, column=col)
    cell.value = text
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

def styles():
    """The shared fonts, fills and alignments by role ('title', 'bold', 'header_fill', ...)."""
    from openpyxl.styles import Alignment, Font, PatternFill

    return {
        "title": Font(bold=True, size=14),
        "bold": Font(bold=True),
        "section": Font(bold=True, size=12),
        "header_fill": PatternFill("solid", fgColor=HEADER_FILL),
        "input_fill": PatternFill("solid", fgColor=INPUT_FILL),
        "wrap": Alignment(wrap_text=True, vertical="top"),
        "top": Alignment(vertical="top"),
        "mono": Font(name="Courier New"),
    }


def header(ws: Worksheet, row: int, headers: Sequence[str], col: int = 1) -> None:
    """A table's header row: bold, filled, wrapped, from column ``col`` on."""
    st = styles()
    for i, h in enumerate(headers):
        cell = put_text(ws, row, col + i, h)
        cell.font = st["bold"]
        cell.fill = st["header_fill"]
        cell.alignment = st["wrap"]


def title(ws: Worksheet, row: int, text: str) -> None:
    """A sheet's or table's title in column A (14 pt bold)."""
    put_text(ws, row, 1, text).font = styles()["title"]


def section(ws: Worksheet, row: int, text: str) -> None:
    """A section heading in column A (12 pt bold)."""
    put_text(ws, row, 1, text).font = styles()["section"]


def label(ws: Worksheet, row: int, col: int, text: str) -> None:
    """A bold label."""
    put_text(ws, row, col, text).font = styles()["bold"]


def mark_input(cell) -> None:
    """Fill ``cell`` yellow: a cell the buyer may edit."""
    cell.fill = styles()["input_fill"]


def fit_columns(ws: Worksheet, fixed: dict[str, float] | None = None, wrap_cols: Iterable[str] = (),
            wrap_from: int = 1, cap: int = MAX_WIDTH, wrap_to: int | None = None) -> None:
    """Column widths from the longest value in each column (formulas count as 14), capped at 60;
    ``fixed`` overrides; text in ``wrap_cols`` from row ``wrap_from`` on wraps, and rows grow to fit."""
    from openpyxl.utils import get_column_letter

    wrap = set(wrap_cols)
    best: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None or (cell.font.sz or 11) > 11:  # titles spill right
                continue
            if cell.data_type == "f":
                n = 14
            elif isinstance(cell.value, float):
                n = 14
            elif isinstance(cell.value, (date, datetime)):
                n = 11
            else:
                n = max((len(line) for line in str(cell.value).split("\n")), default=0) + 2
            best[cell.column] = max(best.get(cell.column, 0), n)
    st = styles()
    for col, n in best.items():
        letter = get_column_letter(col)
        ws.column_dimensions[letter].width = min(max(n, 8), cap)
        if letter in wrap:
            for cell in ws[letter]:
                if (cell.value is not None and wrap_from <= cell.row <= (wrap_to or cell.row)
                        and (cell.font.sz or 11) <= 11):
                    cell.alignment = st["wrap"]
    for letter, width in (fixed or {}).items():
        ws.column_dimensions[letter].width = width
    fit_heights(ws)


def fit_heights(ws: Worksheet, line_pt: float = 15.0) -> None:
    """Row heights for wrapped cells: lines needed at the column's width, 15 pt a line.

    Spreadsheet programs do not grow a row for wrapped text written by a library, so the height
    is set from an estimate: words wrapped at about the column width in characters (5 % more for
    plain text, 10 % fewer for bold). Cells of a grown row are aligned to the top.
    """
    from openpyxl.styles import Alignment

    need: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if not isinstance(cell.value, str) or cell.data_type == "f" or not cell.alignment.wrap_text:
                continue
            width = ws.column_dimensions[cell.column_letter].width or 8.43
            per_line = max(1, int(width * (0.9 if cell.font.b else 1.05)) - 1)
            lines = sum(max(1, len(textwrap.wrap(part, per_line, break_on_hyphens=False)))
                        for part in str(cell.value).split("\n"))
            need[cell.row] = max(need.get(cell.row, 1), lines)
    for r, lines in need.items():
        if lines > 1:
            ws.row_dimensions[r].height = line_pt * lines
            for cell in ws[r]:
                if cell.value is not None and not cell.alignment.wrap_text:
                    cell.alignment = Alignment(horizontal=cell.alignment.horizontal, vertical="top")


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

