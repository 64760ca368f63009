"""The plan's workbook for a comparison that needs several copies of the planned machine.

When a request rate needs N > 1 copies (:attr:`planner.cost.compare.Comparison.copies`), the
comparison's capex is N x the plan's quote and the purchase must match it:
:func:`workbook_data_for_copies` scales the Quote to every copy and says so in the title, the
Summary, the warnings and the assumptions; :func:`mark_copies` states the copies beside the
Summary's total and in the Quote's title of the built workbook. The "Cloud vs Local" sheet
(:func:`planner.report.sheets.cloud.add_cloud_sheet` with ``quote_copies=N``) then takes the capex
from the Quote's grand total.
"""

from __future__ import annotations

from typing import Any

from planner.report.cells import fit_heights, put_text


def _copies_reason(comparison: Any) -> str:
    """Which workloads' request rates need the copies, e.g. "chat (2,000 requests/h)"."""
    need = [wc for wc in comparison.workloads if wc.copies == comparison.copies and wc.requests_per_hour]
    return ", ".join(f"{wc.name} ({wc.requests_per_hour:,.0f} requests/h)" for wc in need) or "the request rates"


def copies_description(description: str, quantity: int, copies: int) -> str:
    """A Quote line's description for ``copies`` copies of the planned machine, ``quantity`` units in each."""
    return f"{description} [{quantity} per copy x {copies} copies of the planned machine]"


def workbook_data_for_copies(data: Any, comparison: Any) -> Any:
    """The plan's workbook data (:class:`planner.report.workbook_data.WorkbookData`) scaled to the comparison's copies.

    With one copy, ``data`` unchanged. With N > 1: every Quote line's quantity is one copy's x N
    (GPUs, platform, memory, network and the scenario's extras alike: the comparison's capex is N
    x the plan's quote, no volume discount), and its description says so; the title, each
    Summary row's configuration, a first plan warning and an assumption line say that the
    purchase is N copies, that the Quote's grand total is the comparison's capex, and that the
    memory figures and the Alternatives sheet are for one copy.
    """
    import dataclasses

    n = int(comparison.copies)
    if n <= 1:
        return data
    items = tuple(dataclasses.replace(i, quantity=int(i.quantity) * n,
                                      description=copies_description(i.description, int(i.quantity), n))
                  for i in data.line_items)
    summary = tuple(dataclasses.replace(row, configuration=f"{n} copies of the planned machine, each: "
                                                           f"{row.configuration}") for row in data.summary)
    total, one = comparison.capex_usd, comparison.machine.capex_usd
    purchase = (f"Purchase: {n} copies of the planned machine, so that the local side keeps up with "
                f"{_copies_reason(comparison)}; the Quote lists them all (each quantity is one copy's x {n}, extras "
                f"included) and its grand total, ${total:,.2f} as planned ({n} x ${one:,.2f}), "
                "is the capex the 'Cloud vs Local' break-even rests on. The solver planned one machine: the memory "
                "figures and the Alternatives sheet's prices are for one copy.")
    return dataclasses.replace(
        data, title=f"{data.title} ({n} copies of the planned machine)", line_items=items, summary=summary,
        warnings=(purchase,) + tuple(data.warnings), assumptions=(purchase,) + tuple(data.assumptions))


def mark_copies(workbook: Any, comparison: Any) -> None:
    """State the copies beside the Summary's total price and in the Quote's title (several copies only).

    For a workbook built from :func:`workbook_data_for_copies`: the plan's sheets are found by
    their labels ("Total price (USD)" in the Summary's column A, the Quote's title in A1);
    a sheet or label that is not there is left alone.
    """
    n = int(comparison.copies)
    if n <= 1:
        return
    if "Summary" in workbook.sheetnames:
        ws = workbook["Summary"]
        row = next((c.row for c in ws["A"] if c.value == "Total price (USD)"), None)
        if row is not None:
            put_text(ws, row, 3, f"Grand total of the Quote sheet (follows its edits): {n} copies of the planned "
                                 f"machine, each Quote quantity one copy's x {n}, the capex of the 'Cloud vs Local' "
                                 "sheet; a budgetary estimate from catalog prices, not a vendor quote.")
            fit_heights(ws)  # the longer sentence (wrapped in its merged cell) may need another line
    if "Quote" in workbook.sheetnames:
        ws = workbook["Quote"]
        if isinstance(ws["A1"].value, str) and ws["A1"].value:
            put_text(ws, 1, 1, f"{ws['A1'].value}: {n} copies of the planned machine (each quantity is one copy's "
                               f"x {n})")
