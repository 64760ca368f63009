"""The Assumptions sheet: what the plan rests on, and the scenario as given.

The plan-wide assumptions; per workload the bytes per value the memory model used
(:class:`planner.report.workbook_data.RecipeRow`: frozen base weights in their format, LoRA
adapters with their gradients and optimizer states); the catalog entries used with their sources
(pointers to the Sources sheet for ``REF:`` ids) and dates; the workloads' notes, warnings and
figures; and the scenario file line by line, as text (its first :data:`COPY_MAX_LINES` lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from planner.core.names import path_text
from planner.report.cells import (
    fit_columns,
    header,
    put_as_of,
    put_sentence,
    put_sentences,
    put_text,
    put_value,
    section,
    style,
    title,
)
from planner.report.sheets.sources import CitedSource, put_source
from planner.report.workbook_data import RecipeRow, WorkbookData, recipe_row

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

RECIPE_HEADERS = ("Recipe", "Definition", "Workload", "Method", "Weights (B/param)", "LoRA adapters (B/param)",
                  "Gradients (B/trainable param)", "Master weights (B/trainable param)", "Optimizer",
                  "Optimizer state (B/value)", "Activations (B/value)", "Autocast copy (B/param)")
RECIPE_NOTE = ("Bytes per value as the memory model used them, per workload (the Memory sheet has the formulas). "
               "A recipe's own bytes describe a full fine-tune; LoRA and QLoRA keep the base frozen in its format "
               "(NF4 for QLoRA) and the adapters, their gradients and optimizer states in the adapter dtype "
               "(fp32 by default), without a master copy.")
SOURCE_HEADERS = ("Entry id", "Source", "As of (date, or YYYY-MM text)", "Catalog file")
NOTE_HEADERS = ("Workload", "Text", "Kind")
#: Column widths (characters): 163 in all, so the sheet prints one page wide at 70 % or more; the
#: sentences (assumptions, notes, the scenario's lines) wrap across A-L (merged).
WIDTHS = {"A": 18, "B": 40, "C": 14, "D": 12, "E": 16, **{letter: 9 for letter in "FGHIJKL"}}
_LAST_COL = len(RECIPE_HEADERS)


def _recipe_rows(data: WorkbookData) -> list[RecipeRow]:
    """The Assumptions sheet's recipe table: ``data.recipe_rows``, else one row per estimate, then
    any recipe definition no row names (without bytes: its method is not known)."""
    rows = list(data.recipe_rows) or [recipe_row(est) for est in data.estimates]
    named = {r.recipe for r in rows}
    for name, description in data.recipe_definitions:
        if name not in named:
            rows.append(RecipeRow(name, description))
            named.add(name)
    return rows


def write_assumptions(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource] = ()) -> None:
    """Write the Assumptions sheet. ``cited``: the Sources sheet's ids
    (:func:`planner.report.sheets.sources.cited_sources`), for the sources' pointers."""
    title(ws, 1, "Assumptions and inputs")
    row = 3
    if data.assumptions:
        section(ws, row, "Assumptions")
        row = put_sentences(ws, row + 1, 1, data.assumptions, _LAST_COL) + 1
    row = _recipes(ws, data, row)
    row = _catalog_entries(ws, data, cited, row)
    row = _workload_notes(ws, data, row)
    section(ws, row, "Scenario as given" + (f" ({path_text(data.scenario_file)})" if data.scenario_file else ""))
    # monospaced, its leading spaces kept (YAML's indentation), wrapped across A-L (163 characters)
    put_sentences(ws, row + 1, 1, _copied_lines(data.scenario_text), _LAST_COL, style("mono"))
    ws.freeze_panes = "A2"
    # QLoRA's weights (E) are text: NF4 linears, 16-bit rest
    fit_columns(ws, fixed=dict(WIDTHS), wrap_cols=("A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L"),
                wrap_from=2)


def _recipes(ws: Worksheet, data: WorkbookData, row: int) -> int:
    """The recipe table from ``row`` (:func:`_recipe_rows`); return the next section's row."""
    section(ws, row, "Recipes")
    row += 1
    put_sentence(ws, row, 1, RECIPE_NOTE, _LAST_COL)
    row += 1
    header(ws, row, RECIPE_HEADERS)
    for r in _recipe_rows(data):
        row += 1
        for j, v in enumerate((r.recipe, r.definition, r.workload, r.method), start=1):
            put_text(ws, row, j, v)
        for j, v in enumerate((r.weights, r.adapters, r.gradients, r.master_weights), start=5):
            put_value(ws, row, j, v)
        put_text(ws, row, 9, r.optimizer)
        for j, v in enumerate((r.optimizer_state, r.activations, r.autocast_copy), start=10):
            put_value(ws, row, j, v)
    return row + 2


def _catalog_entries(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource], row: int) -> int:
    """The catalog's version and digest, then its entries used with source and date, from ``row``;
    return the next section's row."""
    section(ws, row, "Catalog entries used")
    row += 1
    put_sentence(ws, row, 1, f"Catalog version: {data.catalog_label}; files: {', '.join(data.catalog_files)}", _LAST_COL)
    row += 1
    if data.catalog_sha256:
        put_sentence(ws, row, 1, f"Catalog content sha256: {data.catalog_sha256} (the sha256 of what sha256sum "
                                 "prints for the files above in that order, each named without its directory)",
                     _LAST_COL)
        row += 1
    if cited:
        put_sentence(ws, row, 1, "Source: REF:<id> cites a document given in full on the Sources sheet (the lines "
                                 "under the source name it and its row).", _LAST_COL)
        row += 1
    header(ws, row, SOURCE_HEADERS)
    by_id = {c.id: c for c in cited}
    # entries with the same source, date and file (the cloud instances of one SkyPilot snapshot) share a row:
    # their ids, in order, then the source once
    groups: dict[tuple[str, str, str], list] = {}
    for ref in data.sources:
        groups.setdefault((ref.source, str(ref.as_of), ref.file), []).append(ref)
    for refs in groups.values():
        row += 1
        put_text(ws, row, 1, ", ".join(r.id for r in refs))
        put_source(ws, row, 2, refs[0].source, by_id, data.references)
        put_as_of(ws, row, 3, refs[0].as_of)
        put_text(ws, row, 4, refs[0].file)
    return row + 2


def _workload_notes(ws: Worksheet, data: WorkbookData, row: int) -> int:
    """Every estimate's notes, warnings and extra figures from ``row``; return the next section's row."""
    notes = [(est.workload_name, f"Training stack assumed: {est.stack_text}", "stack")
             for est in data.estimates if est.stack]
    notes += [(est.workload_name, n, "note") for est in data.estimates for n in est.notes]
    notes += [(est.workload_name, w, "warning") for est in data.estimates for w in est.warnings]
    notes += [(est.workload_name, f"{k.replace('_', ' ')}: {v:,}", "figure")
              for est in data.estimates for k, v in est.extra.items()]
    section(ws, row, "Workload notes")
    row += 1
    header(ws, row, NOTE_HEADERS)
    for values in notes:
        row += 1
        for j, v in enumerate(values, start=1):
            put_text(ws, row, j, v)
    return row + 2


#: The most a line of the scenario's copy keeps in its cell: Excel's 32,767 characters per cell less room for the
#: note that says the line was cut (:func:`_copied_line`).
_COPY_CELL_UNITS = 32_767 - 200


#: The most lines of the scenario file the Assumptions sheet copies, one row each: a scenario is tens of lines
#: (the shipped ones at most 44), and a file of comments alone (a comment has no cap) would otherwise take a row a
#: line, about 10 M rows for a 20 MiB file, past a sheet's 1,048,576 rows and minutes of work (h30b N5). 2,000
#: lines is 45 times the longest shipped scenario and about 40 printed pages; the file itself holds the rest.
COPY_MAX_LINES = 2_000


def _copied_lines(text: str) -> list[str]:
    """The scenario file's lines as the sheet copies them (:func:`_copied_line`): the first
    :data:`COPY_MAX_LINES`, then, when the file has more, one line that says how many are not copied."""
    lines = text.splitlines()
    out = [_copied_line(n, line) for n, line in enumerate(lines[:COPY_MAX_LINES], 1)]
    if len(lines) > COPY_MAX_LINES:
        more = len(lines) - COPY_MAX_LINES
        lines_are = f"{more:,} lines (from line {COPY_MAX_LINES + 1:,}) are" if more > 1 else \
            f"line ({COPY_MAX_LINES + 1:,}) is"
        out.append(f"\u2026 [the file's other {lines_are} not copied: the sheet copies the first "
                   f"{COPY_MAX_LINES:,} lines, and the scenario file holds them all]")
    return out


def _copied_line(number: int, line: str) -> str:
    """Line ``number`` of the scenario file as its cell holds it: whole when it fits a cell (counted as the cell
    stores it, :func:`planner.core.escape.cell_units`), else its start and a note that says where and why it was
    cut, so a cut line never reads as the whole line (a comment has no length cap; h16b #6)."""
    from planner.core.escape import cell_units

    if len(line) * 8 <= _COPY_CELL_UNITS * 3 or cell_units(line) <= _COPY_CELL_UNITS:  # 8/3: the most a character grows
        return line
    lo, hi = 0, len(line)  # the longest start that fits: cell_units grows with the start's length
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cell_units(line[:mid]) <= _COPY_CELL_UNITS:
            lo = mid
        else:
            hi = mid - 1
    return (f"{line[:lo]}\u2026 [line {number} is cut here: {len(line):,} characters, {len(line) - lo:,} not shown; "
            "a workbook cell holds 32,767, and the scenario file holds the line whole]")
