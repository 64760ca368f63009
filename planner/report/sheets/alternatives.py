"""The Alternatives sheet: the ranked runners-up and the infeasible candidates.

Both tables as the solver gives them (:class:`planner.plan.solver.Plan`'s ``alternatives`` and, per
rule, the closest misses of ``infeasible``), one column per frame column: a column named with a
unit suffix gets a header with the unit, ``_bytes`` shown in GiB (2**30 bytes), ``_usd`` as money.
The shown alternatives are numbered ('#'), the solver's rank has a column of its own and a note
explains the ranks the sheet skips.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.core.units import GiB
from planner.report.cells import GIB_FORMAT, USD_FORMAT, fit_columns, header, put_text, put_value, title
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

def _column_header(name: str) -> tuple[str, str | None, float]:
    """(header, number format, divisor) for a DataFrame column named with its unit suffix."""
    base = str(name)
    special = {"hours_per_job": ("time per job (h)", "#,##0.000", 1), "usd_per_job": ("cost per job (USD)", USD_FORMAT, 1),
               "tco_usd": ("TCO over the ownership period (USD)", USD_FORMAT, 1)}
    if base in special:
        return special[base]
    if base.endswith("_bytes"):
        return base[: -len("_bytes")].replace("_", " ") + " (GiB)", GIB_FORMAT, GiB
    if base.endswith("_usd"):
        return base[: -len("_usd")].replace("_", " ") + " (USD)", USD_FORMAT, 1
    if base.endswith("_pct"):
        return base[: -len("_pct")].replace("_", " ") + " (%)", "0.00", 1
    return base.replace("_", " "), None, 1


def _write_frame(ws: Worksheet, row: int, df, empty_text: str) -> int:
    """Write a DataFrame with unit-bearing headers from ``row``; return the next free row."""
    if df is None or len(df) == 0:
        put_text(ws, row, 1, empty_text)
        return row + 1
    specs = [_column_header(c) for c in df.columns]
    header(ws, row, [s[0] for s in specs])
    for values in df.itertuples(index=False, name=None):
        row += 1
        for j, (value, (_, fmt, div)) in enumerate(zip(values, specs), start=1):
            if isinstance(value, float) and value != value:
                value = None  # a blank column (NaN): no figure
            if div != 1 and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = value / div
            elif div != 1 and hasattr(value, "item"):
                value = value.item() / div
            put_value(ws, row, j, value, fmt)
    return row + 1


#: Header of the solver's rank on the Alternatives sheet (the shown rows are numbered in '#').
SOLVER_RANK_HEADER = "solver rank (1 = chosen)"
ALTERNATIVES_NOTE = (
    "#: the row's place on this sheet. Solver rank: the candidate's place among all candidates, cheapest "
    "feasible first (1 = the chosen machine). The sheet shows first the best machine of each other GPU model "
    "that fits, then other chassis and RAM configurations (platform, cards, nodes, DIMMs) of the chosen GPU; "
    "the ranks it skips are costlier variants of a GPU model already shown.")


def _numbered_alternatives(df: Any) -> Any:
    """The alternatives with a '#' column (1, 2, ...) first and 'rank' renamed to
    :data:`SOLVER_RANK_HEADER`; unchanged when there is no 'rank' column."""
    if df is None or len(df) == 0 or "rank" not in df.columns:
        return df
    out = df.rename(columns={"rank": SOLVER_RANK_HEADER})
    out.insert(0, "#", list(range(1, len(out) + 1)))
    return out


def write_alternatives(ws: Worksheet, data: WorkbookData) -> None:
    """Write the Alternatives sheet: ``data.alternatives``, then ``data.infeasible``."""
    from openpyxl.utils import get_column_letter

    title(ws, 1, "Ranked alternatives (feasible, not chosen)")
    alts = _numbered_alternatives(data.alternatives)
    numbered = alts is not data.alternatives
    header_row = 3 if numbered else 2
    if numbered:
        put_text(ws, 2, 1, ALTERNATIVES_NOTE)
    end = _write_frame(ws, header_row, alts, "No feasible alternative: the chosen configuration is the only one.")
    ws.freeze_panes = f"A{header_row + 1}"
    row = end + 1
    title(ws, row, "Infeasible candidates, with the binding constraint")
    _write_frame(ws, row + 1, data.infeasible, "No infeasible candidate.")
    # the note in A2 spills right and must not widen column A ('#', the binding constraint)
    fit_columns(ws, cap=40, wrap_cols=[get_column_letter(c) for c in range(1, ws.max_column + 1)],
                wrap_from=header_row, fixed={"A": 13} if numbered else None)
