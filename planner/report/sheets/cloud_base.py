"""The Cloud vs Local sheet's number formats and its row writer.

:class:`CloudSheet` writes the sheet's labels, table headers and its input and result lines (label
in A, value or formula in B, note in C) and keeps the coordinates of the key cells the formulas
and the workbook-level names refer to. :mod:`planner.report.sheets.cloud` and
:mod:`planner.report.sheets.cloud_chart` write the sheet with it. openpyxl is imported inside.
"""

from __future__ import annotations

from typing import Any

from planner.report.cells import put_formula, put_sentence, put_text, put_value

USD = '"$"#,##0.00;[Red]-"$"#,##0.00'
USD4 = '"$"#,##0.0000'
PCT = "0.00%"
NUM2 = "#,##0.00"
NUM4 = "0.0000"
INT = "#,##0"
#: Marker cells hold -1 where there is no break-even (off the chart, whose month axis starts at 0);
#: this format shows it as 'none' (its negative section), so no cell holds an error value.
MONTH_OR_NONE = '#,##0.00;"none"'
#: The last column sentences wrap within (A-G: 1,029 px, the first printed page at 70 % holds
#: 1,398 px, with room for a spreadsheet program whose default font is up to 35 % wider).
PAGE_LAST_COL = 7
#: Column widths (characters). The tables' long texts (why not, strategies, spot basis) are notes
#: (:meth:`CloudSheet.short`), so their columns stay narrow and every table row one line high; the
#: instance columns C and E hold the shipped catalog's longest id (28 characters) on one line.
WIDTHS = {"A": 40, "B": 24, "C": 30, "D": 14, "E": 30, "F": 14, "G": 14, "H": 12,
          **{c: 14 for c in "IJKLMNOP"}, "Q": 12, "R": 14, "S": 16, "T": 12, "U": 12, "V": 12, "W": 12}
#: The word before a note's number: a cell showing 'note 3' points at the notes under the instance table.
NOTE_WORD = "note"


class CloudSheet:
    """The sheet being written, the coordinates of its key cells (``cells``, key -> 'B20') and the
    styles its rows share."""

    def __init__(self, ws: Any) -> None:
        from openpyxl.styles import Alignment, Font, PatternFill

        self.ws = ws
        self.cells: dict[str, str] = {}
        self.bold = Font(bold=True)
        self.input_fill = PatternFill("solid", fgColor="FFF2CC")
        self.header_fill = PatternFill("solid", fgColor="DDEBF7")
        self.wrap = Alignment(wrap_text=True, vertical="top")
        self._listed: set[str] | None = None  # the REF: ids the Sources sheet lists (short_source)
        self.notes: dict[str, int] = {}  # a long text -> its note's number (short)

    def short(self, text: str, col: int) -> str:
        """``text`` as a table cell in column ``col`` shows it: the text itself where it fits the
        column's width (:data:`WIDTHS`) on one line, else 'note <n>', the text given once in full
        in the notes under the instance table (the same text, the same note). A note, not a cell
        wrapped over many lines: the tables print one line a row."""
        from openpyxl.utils import get_column_letter

        if not text or len(text) + 1 <= WIDTHS.get(get_column_letter(col), 8.43):
            return text
        n = self.notes.setdefault(text, len(self.notes) + 1)
        return f"{NOTE_WORD} {n}"

    def short_source(self, text: str) -> str:
        """A price source as the instance table shows it: its ``REF:`` ids alone ('REF:SKY-AWS-v8')
        where the workbook's Sources sheet lists every one of them (the document, where to find it
        and its links in full there: a footnote, not a paragraph on every row); else ``text``."""
        from planner.catalog.sources import ref_ids

        refs = ref_ids(text or "")
        if not refs or "Sources" not in self.ws.parent.sheetnames:
            return text
        if self._listed is None:
            self._listed = {str(c.value) for c in self.ws.parent["Sources"]["A"] if isinstance(c.value, str)}
        if all(f"REF:{r}" in self._listed for r in refs):
            return "; ".join(f"REF:{r}" for r in refs)
        return text

    def label(self, row: int, text: str, col: int = 1) -> None:
        """A bold label."""
        put_text(self.ws, row, col, text).font = self.bold

    def header(self, row: int, texts: list[str], col: int = 1) -> None:
        """A table's header row from column ``col``: bold, filled, wrapped, 48 pt high."""
        for j, t in enumerate(texts, start=col):
            cell = put_text(self.ws, row, j, t)
            cell.font = self.bold
            cell.fill = self.header_fill
            cell.alignment = self.wrap
        self.ws.row_dimensions[row].height = 48

    def line(self, row: int, key: str | None, text: str, value: Any, fmt: str | None, note: str, *,
             editable: bool = False, formula: bool = False) -> None:
        """One input or result: label in A, value (or formula) in B, note in C (wrapped across C-I,
        merged, so it stays on the first printed page); B is ``cells[key]``."""
        self.label(row, text)
        self.ws.cell(row=row, column=1).alignment = self.wrap
        if formula:
            cell = put_formula(self.ws, row, 2, value, fmt)
        else:
            cell = put_value(self.ws, row, 2, value, fmt)
        if editable:
            cell.fill = self.input_fill
        put_sentence(self.ws, row, 3, note, PAGE_LAST_COL)
        if key:
            self.cells[key] = f"B{row}"

    def absolute(self, key: str) -> str:
        """The absolute reference of a key cell: '$B$12'."""
        ref = self.cells[key]
        return f"${ref[0]}${ref[1:]}"
