"""The Summary sheet: the plan at a glance, one row per workload.

Title, scenario, date, catalog version and the quote's grand total (a formula over the Quote
sheet), with the time and cost of one job beside it (planner.cost.objective); then per workload the chosen configuration and strategy, per-GPU memory need against the
card's CUDA total and the capacity left after the scenario's reserve (headroom, a formula), host
RAM, recipe, training stack (framework and lever settings) and warnings; then the plan-wide
warnings. Sizes in GiB (2**30 bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.report.cells import (
    DATE_FORMAT,
    GIB_FORMAT,
    INT_FORMAT,
    PCT_FORMAT,
    USD_FORMAT,
    clean_text,
    fit_columns,
    gib,
    header,
    label,
    put_formula,
    put_text,
    put_value,
    styles,
    title,
)
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

SUMMARY_HEADERS = ("Workload", "Task", "Model", "Configuration", "Strategy", "GPUs used", "Per-GPU need (GiB)",
                   "CUDA total per GPU (GiB)", "Capacity after reserve (GiB)", "Headroom per GPU (GiB)",
                   "Headroom (% of capacity)", "Host RAM need per machine (GiB)", "RAM installed per machine (GiB)",
                   "Recipe", "Training stack", "Warnings")
SUMMARY_HEADER_ROW = 8


def write_summary(ws: Worksheet, data: WorkbookData, quote_cells: dict[str, str]) -> None:
    """Write the Summary sheet; ``quote_cells``: the Quote sheet's key cells
    (:func:`planner.report.sheets.quote.write_quote`), for the grand total."""
    title(ws, 1, clean_text(data.title))
    label(ws, 2, 1, "Scenario")
    put_text(ws, 2, 2, data.scenario_name)
    label(ws, 3, 1, "Date")
    put_value(ws, 3, 2, data.created.date(), DATE_FORMAT).alignment = styles()["top"]
    label(ws, 4, 1, "Catalog version")
    put_text(ws, 4, 2, data.catalog_label)
    label(ws, 5, 1, "Total price (USD)")
    c = put_formula(ws, 5, 2, f"=Quote!{quote_cells['grand_total']}", USD_FORMAT)
    c.font = styles()["bold"]
    put_text(ws, 5, 3, "Grand total of the Quote sheet (follows its edits): a budgetary estimate from catalog "
                       "prices, not a vendor quote.")
    if data.planner_version:
        label(ws, 6, 1, "Planner version")
        put_text(ws, 6, 2, data.planner_version)
    # price, time per job and cost per job side by side (planner.cost.objective)
    label(ws, 7, 1, "Time per job (h)")
    if data.hours_per_job is not None:
        put_value(ws, 7, 2, data.hours_per_job, "#,##0.000")
        label(ws, 7, 3, "Cost per job (USD)")
        put_value(ws, 7, 4, data.usd_per_job, USD_FORMAT)
        put_text(ws, 7, 5, data.per_job_note)
    else:
        put_text(ws, 7, 2, "not computed")
        put_text(ws, 7, 3, data.per_job_note or "a workload gives no dataset_tokens / tokens_per_request")

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
        put_text(ws, row, 15, s.stack)
        put_text(ws, row, 16, "\n".join(s.warnings))
        row += 1
    if data.warnings:
        row += 1
        label(ws, row, 1, "Plan warnings")
        row += 1
        for w in data.warnings:
            put_text(ws, row, 1, w)
            row += 1
    ws.freeze_panes = f"B{SUMMARY_HEADER_ROW + 1}"
    widths = {"A": 20, "B": 13, "C": 18, "D": 34, "E": 40, "N": 14, "O": 44, "P": 44}
    widths.update({letter: 12 for letter in "FGHIJKLM"})
    fit_columns(ws, fixed=widths, wrap_cols=("C", "D", "E", "N", "O", "P"), wrap_from=SUMMARY_HEADER_ROW)
