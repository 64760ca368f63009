"""The Summary sheet: the plan at a glance, one row per workload.

Title, scenario, date, catalog version and the quote's grand total (a formula over the Quote
sheet), with the time and cost of one job beside it (planner.cost.objective); then per workload the chosen configuration and strategy, per-GPU memory need against the
card's CUDA total and the capacity left after the scenario's reserve (headroom, a formula), host
RAM and recipe; under it, per workload, the training stack (framework, its release and lever settings) or
the inference engine's release, and the
warnings in wrapped cells as wide as the table; then, where the RAM rule of thumb sets the RAM or
excludes a cheaper machine, the RAM planned and the need-sized alternative with their prices; then
the price sensitivity (which prices decide
the choice, their break-even prices, whether it holds across the price ranges) and the plan-wide warnings, one wrapped sentence
a row. The sheet prints one page wide at 70 % or more (planner.report.workbook.print_scale). Sizes
in GiB (2**30 bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.report.cells import (
    DATE_FORMAT,
    GIB_FORMAT,
    INT_FORMAT,
    PCT_FORMAT,
    USD_FORMAT,
    fit_columns,
    merge_across,
    gib,
    header,
    label,
    put_formula,
    put_text,
    put_sentence,
    put_value,
    style,
    styles,
    title,
)
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

SUMMARY_HEADERS = ("Workload", "Task", "Model", "Configuration", "Strategy", "GPUs used", "Per-GPU need (GiB)",
                   "CUDA total per GPU (GiB)", "Capacity after reserve (GiB)", "Headroom per GPU (GiB)",
                   "Headroom (% of capacity)", "Host RAM need per machine (GiB)", "RAM installed per machine (GiB)",
                   "Recipe")
#: The per-workload table under the main one: the workload, then two wide wrapped cells (columns
#: B-E and F-N, merged), so the long texts wrap at the printed width.
SUMMARY_DETAIL_HEADERS = ("Workload", "Training stack or engine release", "Warnings")
SUMMARY_DETAIL_TITLE = "Training stack or engine release, and warnings, per workload"
SUMMARY_HEADER_ROW = 9
#: The label above the RAM rule's sentences (planner.solve.ramrule): the RAM planned by the rule and
#: the RAM sized to the memory model's need, each with its price.
RAM_RULE_TITLE = "RAM: planned by the rule of thumb, and sized to the memory model's need"
#: The label above the price sensitivity's sentences (planner.solve.sensitivity).
PRICE_SENSITIVITY_TITLE = "Price sensitivity (break-even prices; does the choice hold across the price ranges?)"
_LAST_COL = len(SUMMARY_HEADERS)  # N: the sentences wrap within A-N, the table's printed width
_STACK_COLS = (2, 5)  # B-E
_WARNING_COLS = (6, _LAST_COL)  # F-N


def write_summary(ws: Worksheet, data: WorkbookData, quote_cells: dict[str, str]) -> None:
    """Write the Summary sheet; ``quote_cells``: the Quote sheet's key cells
    (:func:`planner.report.sheets.quote.write_quote`), for the grand total."""
    title(ws, 1, data.title)  # escaped once, by put_text (h17b #1)
    label(ws, 2, 1, "Scenario")
    put_text(ws, 2, 2, data.scenario_name)
    label(ws, 3, 1, "Date")
    put_value(ws, 3, 2, data.created.date(), DATE_FORMAT).alignment = style("top")
    label(ws, 4, 1, "Catalog version")
    put_text(ws, 4, 2, data.catalog_label)
    label(ws, 5, 1, "Total price (USD)")
    c = put_formula(ws, 5, 2, f"=Quote!{quote_cells['grand_total']}", USD_FORMAT)
    c.font = style("bold")
    put_sentence(ws, 5, 3, "Grand total of the Quote sheet (follows its edits): a budgetary estimate from catalog "
                           "prices, not a vendor quote.", _LAST_COL)
    if data.planner_version:
        label(ws, 6, 1, "Planner version")
        put_text(ws, 6, 2, data.planner_version)
    # price, time per job and cost per job side by side (planner.cost.objective)
    serving = data.serving_tokens and data.hours_per_job is not None and data.usd_per_job is not None
    at = " at the slo: load" if data.serving_load else ""
    label(ws, 7, 1, f"Machine time per request{at} (s)" if serving else "Time per job (h)")
    if data.hours_per_job is not None:
        # a request's hours and cents would read 0.000 h and $0.00: seconds and USD per million tokens
        put_value(ws, 7, 2, data.hours_per_job * 3600 if serving else data.hours_per_job, "#,##0.000")
        label(ws, 8, 1, f"Cost per million tokens{at} (USD)" if serving else "Cost per job (USD)")
        put_value(ws, 8, 2, data.usd_per_job / data.serving_tokens * 1e6 if serving else data.usd_per_job,
                  "$#,##0.0000" if serving else USD_FORMAT)
        put_sentence(ws, 7, 3, data.per_job_note, _LAST_COL)
    else:
        put_text(ws, 7, 2, "not computed")
        put_sentence(ws, 7, 3, data.per_job_note or "a workload gives no dataset_tokens / tokens_per_request",
                     _LAST_COL)

    header(ws, SUMMARY_HEADER_ROW, SUMMARY_HEADERS)
    row = SUMMARY_HEADER_ROW + 1
    for s in data.summary:
        put_text(ws, row, 1, s.workload)
        put_text(ws, row, 2, s.task)
        put_text(ws, row, 3, s.model)
        put_text(ws, row, 4, s.configuration)
        put_text(ws, row, 5, s.strategy)
        put_value(ws, row, 6, s.gpus, INT_FORMAT)
        put_value(ws, row, 7, gib(s.gpu_need_bytes), GIB_FORMAT)
        put_value(ws, row, 8, gib(s.gpu_cuda_total_bytes), GIB_FORMAT)
        put_value(ws, row, 9, gib(s.capacity_bytes), GIB_FORMAT)
        put_formula(ws, row, 10, f"=I{row}-G{row}", GIB_FORMAT)
        put_formula(ws, row, 11, f'=IF(I{row}>0,J{row}/I{row},"")', PCT_FORMAT)
        put_value(ws, row, 12, gib(s.host_need_bytes), GIB_FORMAT)
        put_value(ws, row, 13, gib(s.host_ram_bytes), GIB_FORMAT)
        put_text(ws, row, 14, s.recipe)
        row += 1
    main_end = row - 1
    row = _details(ws, data, row + 1)
    row = _sentences(ws, row, RAM_RULE_TITLE, data.ram_rule)
    row = _sentences(ws, row, PRICE_SENSITIVITY_TITLE, data.price_sensitivity)
    row = _sentences(ws, row, "Targets (deadline, service level): target and achieved on this machine", data.targets)
    if data.warnings:
        label(ws, row, 1, "Plan warnings")
        row += 1
        for w in data.warnings:
            put_sentence(ws, row, 1, w, _LAST_COL)
            row += 1
    ws.freeze_panes = f"B{SUMMARY_HEADER_ROW + 1}"
    # 183 characters in all: one page wide at 70 % or more; B holds the header block's money too
    widths = {"A": 18, "B": 14, "C": 15, "D": 22, "E": 26, "N": 12}
    widths.update({letter: 9.5 for letter in "FGHIJKLM"})
    fit_columns(ws, fixed=widths, wrap_cols=("A", "B", "C", "D", "E", "N"), wrap_from=SUMMARY_HEADER_ROW,
                wrap_to=main_end)


def _details(ws: Worksheet, data: WorkbookData, row: int) -> int:
    """From ``row``: per workload its training stack (B-E) and warnings (F-N), merged and wrapped;
    return the next free row after a blank one."""
    st = styles()
    label(ws, row, 1, SUMMARY_DETAIL_TITLE)
    row += 1
    for text, (first, last) in zip(SUMMARY_DETAIL_HEADERS, ((1, 1), _STACK_COLS, _WARNING_COLS)):
        cell = put_text(ws, row, first, text)
        cell.font, cell.fill, cell.alignment = st["bold"], st["header_fill"], st["wrap"]
        merge_across(ws, row, first, last)
    for s in data.summary:
        row += 1
        put_text(ws, row, 1, s.workload).alignment = st["wrap"]
        put_sentence(ws, row, _STACK_COLS[0], s.stack, _STACK_COLS[1])
        put_sentence(ws, row, _WARNING_COLS[0], "\n".join(s.warnings) or "none", _WARNING_COLS[1])
    return row + 2


def _sentences(ws: Worksheet, row: int, title: str, texts: tuple[str, ...]) -> int:
    """A titled block of sentences from ``row`` (nothing when ``texts`` is empty), a blank row after it;
    returns the next free row."""
    if not texts:
        return row
    label(ws, row, 1, title)
    row += 1
    for text in texts:
        put_sentence(ws, row, 1, text, _LAST_COL)
        row += 1
    return row + 1
