"""The Alternatives sheet: the ranked runners-up and the infeasible candidates.

Both tables as the solver gives them (:class:`planner.solve.solver.Plan`'s ``alternatives`` and, per
rule, the closest misses of ``infeasible``), one column per table column, headed in words
(:func:`column_header`: 'gpu_id' -> 'GPU'; a unit suffix gives the header its unit, ``_bytes``
shown in GiB (2**30 bytes), ``_usd`` as money); a column without any figure is left out. A
shortfall is a number whose format carries its unit (``#,##0.00 "GiB"``), and the unit column
beside it states the unit per row in words as well (GiB, W, cards, lanes, h, % over target...), so a
reader of the bare values (a CSV export, a script) sees it too (issue 29, item 11). The shown alternatives are numbered ('#'), the solver's rank has a column of its own
and a note explains the ranks the sheet skips.

Printing: the alternatives' columns have fixed widths (:data:`WIDTHS`) so the sheet prints one
page wide at 70 % or more; the infeasible table, under it, spans each of its columns over as many
of those sheet columns as its text needs (merged cells), its long 'why not' over the rest. With no
feasible alternative the infeasible table stands alone, one sheet column each, the 'why not'
:data:`WHY_NOT_ALONE_WIDTH` characters wide (issue 31).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.core.table import Table, as_table
from planner.core.units import GiB
from planner.report.cells import (
    GIB_FORMAT,
    USD_FORMAT,
    fit_columns,
    header,
    merge_across,
    put_sentence,
    put_text,
    put_value,
    styles,
    title,
)
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

#: Words for the solver's column names (the unit suffix is handled by :func:`column_header`).
WORDS = {"gpu": "GPU", "gpus": "GPUs", "ram": "RAM", "dimm": "DIMM", "tco": "TCO", "cpu": "CPU", "nic": "NIC",
         "vram": "VRAM", "kv": "KV", "mfu": "MFU", "tp": "TP", "pp": "PP", "id": ""}
#: Whole headers for columns whose words alone read badly.
SPECIAL = {"hours_per_job": ("Time per job (h)", "#,##0.000", 1), "usd_per_job": ("Cost per job (USD)", USD_FORMAT, 1),
           "tco_usd": ("TCO over the ownership period (USD)", USD_FORMAT, 1),
           "dimm_count": ("DIMMs", "#,##0", 1), "why_lost": ("Why not chosen", None, 1),
           "per_gpu_need_bytes": ("Per-GPU need (GiB)", GIB_FORMAT, GiB),
           "seconds_per_request": ("Machine time per request (s)", "#,##0.000", 1),
           "usd_per_million_tokens": ("Cost per million generated tokens (USD)", "$#,##0.0000", 1),
           "seconds_per_request_at_load": ("Machine time per request at the slo: load (s)", "#,##0.000", 1),
           "usd_per_million_tokens_at_load": ("Cost per million generated tokens at the slo: load (USD)",
                                              "$#,##0.0000", 1),
           "deadline_hours": ("Deadline (h)", "#,##0.0", 1), "run_hours": ("Hours per run", "#,##0.0", 1),
           "target_ttft_s": ("TTFT target (s)", "#,##0.000", 1), "ttft_s": ("TTFT (s)", "#,##0.000", 1),
           "target_tpot_s": ("TPOT target (s)", "#,##0.0000", 1), "tpot_s": ("TPOT (s)", "#,##0.0000", 1),
           "targets": ("Each workload's target: achieved", None, 1)}
#: Column widths (characters) by header; other columns take their content's width, up to 30.
WIDTHS = {"#": 4, "Solver rank (1 = chosen)": 7, "GPU": 14, "Platform": 13, "Cards per node": 7, "Nodes": 6,
          "DIMM": 13, "DIMMs": 6, "RAM (GiB)": 8, "Capex (USD)": 11, "Time per job (h)": 9,
          "Cost per job (USD)": 10, "TCO over the ownership period (USD)": 11, "Per-GPU need (GiB)": 9,
          "GPU capacity (GiB)": 9, "Headroom (GiB)": 9, "Why not chosen": 15, "Strategy": 26,
          "Configuration": 20}
_DEFAULT_CAP = 30


def column_header(name: str) -> tuple[str, str | None, float]:
    """(header in words, number format, divisor) for a table column named with its unit suffix:
    'ram_bytes' -> ('RAM (GiB)', '#,##0.00', 2**30), 'capex_usd' -> ('Capex (USD)', USD, 1)."""
    base = str(name)
    if base in SPECIAL:
        return SPECIAL[base]
    for suffix, unit, fmt, div in (("_bytes", "GiB", GIB_FORMAT, GiB), ("_usd", "USD", USD_FORMAT, 1),
                                   ("_pct", "%", "0.00", 1)):
        if base.endswith(suffix):
            return f"{_words(base[: -len(suffix)])} ({unit})", fmt, div
    return _words(base), None, 1


def _words(name: str) -> str:
    """'gpu_id' -> 'GPU', 'cards_per_node' -> 'Cards per node'; a name with spaces keeps its words,
    its first letter capitalized."""
    if " " in name:
        return name[:1].upper() + name[1:]
    words = [WORDS.get(w, w) for w in name.split("_")]
    words = [w for w in words if w] or [name]
    first = words[0]
    return " ".join([first[:1].upper() + first[1:]] + words[1:])


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _with_figures(t: Table) -> Table:
    """``t`` without its columns that hold no figure at all (every value missing: None or NaN)."""
    empty = [c for c in t.columns if all(_missing(v) for v in t[c].tolist())]
    return t.without(empty) if empty and len(empty) < len(t.columns) else t


def _cells(df: Table) -> tuple[list[tuple[str, str | None, float]], list[list[tuple[Any, str | None]]]]:
    """The headers and, per row, (value, number format) of each shown column: 'shortfall' takes its
    row's 'shortfall_unit' into the number format, and the unit column is shown beside it."""
    cols = list(df.columns)
    unit_col = "shortfall_unit" if "shortfall" in cols and "shortfall_unit" in cols else None
    shown = cols
    specs = [column_header(c) for c in shown]
    rows = []
    for record in df.rows():
        values = dict(zip(cols, record))
        out = []
        for c, (_, fmt, div) in zip(shown, specs):
            value = values[c]
            if isinstance(value, float) and value != value:
                value = None  # a blank cell (NaN): no figure
            if div != 1 and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = value / div
            elif div != 1 and hasattr(value, "item"):
                value = value.item() / div
            if c == "shortfall" and unit_col and isinstance(values[unit_col], str) and values[unit_col]:
                unit = values[unit_col].replace('"', "")
                fmt = f'#,##0.00 "{unit}"'
            out.append((value, fmt))
        rows.append(out)
    return specs, rows


def _write_frame(ws: Worksheet, row: int, df: Table | None, empty_text: str) -> int:
    """Write a table with headers in words from ``row``, one sheet column per table column;
    return the next free row."""
    if df is None or len(df) == 0:
        put_text(ws, row, 1, empty_text)
        return row + 1
    specs, rows = _cells(_with_figures(df))
    header(ws, row, [s[0] for s in specs])
    for values in rows:
        row += 1
        for j, (value, fmt) in enumerate(values, start=1):
            put_value(ws, row, j, value, fmt)
    return row + 1


def _spans(ws: Worksheet, wanted: list[float], last_col: int) -> list[tuple[int, int]]:
    """(first, last) sheet column of each of the table's columns: each takes sheet columns from the
    left until they are as wide as ``wanted``, the last one all the rest up to ``last_col``."""
    from openpyxl.utils import get_column_letter

    spans, col = [], 1
    for i, want in enumerate(wanted):
        first, width = col, 0.0
        while True:
            width += ws.column_dimensions[get_column_letter(col)].width or 8.43
            if width >= want or col >= last_col - (len(wanted) - 1 - i):
                break
            col += 1
        spans.append((first, col))
        col += 1
    if spans:
        spans[-1] = (spans[-1][0], max(spans[-1][1], last_col))
    return spans


def _write_spanned(ws: Worksheet, row: int, df: Table | None, empty_text: str, last_col: int) -> int:
    """Write a table from ``row`` with each column merged over the sheet columns
    :func:`_spans` gives it (the columns already have their widths); return the last row."""
    if df is None or len(df) == 0:
        put_text(ws, row, 1, empty_text)
        return row
    shown = _with_figures(df)
    specs, rows = _cells(shown)
    if "shortfall" in shown.columns and "shortfall_unit" in shown.columns:
        # merged over the alternatives' columns, the unit rides in the shortfall's number format alone
        # (``12.50 GiB``): one column fewer keeps 'why not' on the printed page
        k = list(shown.columns).index("shortfall_unit")
        specs, rows = specs[:k] + specs[k + 1:], [r[:k] + r[k + 1:] for r in rows]
    if len(specs) > last_col:  # more columns than the sheet has: one each
        header(ws, row, [s[0] for s in specs])
        for values in rows:
            row += 1
            for j, (value, fmt) in enumerate(values, start=1):
                put_value(ws, row, j, value, fmt)
        return row
    wanted = []
    for j, (head, _, _) in enumerate(specs):
        longest = max([len(str(v[j][0])) for v in rows if v[j][0] is not None] + [len(head) // 2, 6])
        wanted.append(min(longest + 2, 24))
    spans = _spans(ws, wanted, last_col)
    st = styles()
    for (first, last), (head, _, _) in zip(spans, specs):
        cell = put_text(ws, row, first, head)
        cell.font, cell.fill, cell.alignment = st["bold"], st["header_fill"], st["wrap"]
        merge_across(ws, row, first, last)
    for values in rows:
        row += 1
        for (first, last), (value, fmt) in zip(spans, values):
            if isinstance(value, str):
                put_sentence(ws, row, first, value, last)
            else:
                put_value(ws, row, first, value, fmt).alignment = st["top"]
                merge_across(ws, row, first, last)
    return row


#: Header of the solver's rank on the Alternatives sheet (the shown rows are numbered in '#').
SOLVER_RANK_HEADER = "Solver rank (1 = chosen)"
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
    return df.renamed({"rank": SOLVER_RANK_HEADER}).with_first("#", list(range(1, len(df) + 1)))


#: The 'why not' column's width (characters) when the infeasible table is the sheet's only table.
WHY_NOT_ALONE_WIDTH = 80
NO_ALTERNATIVE = "No feasible alternative: the chosen configuration is the only one."


def write_alternatives(ws: Worksheet, data: WorkbookData) -> None:
    """Write the Alternatives sheet: ``data.alternatives``, then ``data.infeasible``. With no
    alternative the infeasible table is laid out on its own (:func:`_write_infeasible_alone`)."""
    from openpyxl.utils import get_column_letter

    title(ws, 1, "Ranked alternatives (feasible, not chosen)")
    given = as_table(data.alternatives)
    if given is None or len(given) == 0:
        _write_infeasible_alone(ws, data)
        return
    alts = _numbered_alternatives(given)
    numbered = alts is not given
    header_row = 3 if numbered else 2
    end = _write_frame(ws, header_row, alts, NO_ALTERNATIVE)
    ws.freeze_panes = f"A{header_row + 1}"
    # printed over several pages wide (more columns than one page holds at 70 %): '#' to the GPU on each
    ws.print_title_cols = "A:C" if numbered else "A:A"
    n_cols = max(ws.max_column, 6)
    # widths: by header where known, else the content's, up to 30
    fit_columns(ws, cap=_DEFAULT_CAP, wrap_cols=[get_column_letter(c) for c in range(1, n_cols + 1)],
                wrap_from=header_row)
    for c in range(1, n_cols + 1):
        head = ws.cell(row=header_row, column=c).value
        if head in WIDTHS:
            ws.column_dimensions[get_column_letter(c)].width = WIDTHS[head]
    if numbered:
        put_sentence(ws, 2, 1, ALTERNATIVES_NOTE, n_cols)
    row = end + 1
    title(ws, row, "Infeasible candidates, with the binding constraint")
    _write_spanned(ws, row + 1, as_table(data.infeasible), "No infeasible candidate.", n_cols)
    fit_columns(ws, cap=_DEFAULT_CAP, wrap_cols=[get_column_letter(c) for c in range(1, n_cols + 1)],
                wrap_from=header_row,
                fixed={get_column_letter(c): ws.column_dimensions[get_column_letter(c)].width
                       for c in range(1, n_cols + 1)})


def _write_infeasible_alone(ws: Worksheet, data: WorkbookData) -> None:
    """The sheet when nothing else is feasible: the sentence saying so, then the infeasible table
    one sheet column per table column, each as wide as its content (up to 30 characters) and the
    'why not' :data:`WHY_NOT_ALONE_WIDTH` wide, wrapped: one page wide, not an empty table's
    columns with the reasons squeezed into the last."""
    from openpyxl.utils import get_column_letter

    infeasible = as_table(data.infeasible)
    put_text(ws, 2, 1, NO_ALTERNATIVE)
    title(ws, 4, "Infeasible candidates, with the binding constraint")
    _write_frame(ws, 5, infeasible, "No infeasible candidate.")
    ws.freeze_panes = "A6"
    n_cols = max(ws.max_column, 1)
    wrap = [get_column_letter(c) for c in range(1, n_cols + 1)]
    fixed = {get_column_letter(c): WHY_NOT_ALONE_WIDTH for c in range(1, n_cols + 1)
             if ws.cell(row=5, column=c).value in ("Why not", SPECIAL["why_lost"][0])}
    fit_columns(ws, cap=_DEFAULT_CAP, wrap_cols=wrap, wrap_from=5, fixed=fixed)
