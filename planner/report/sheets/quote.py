"""The Quote sheet: a budgetary estimate from catalog prices, its totals as live formulas.

Rows 1-8 are the header block (reference, date, re-check date, customer, catalog, and the grand
total, repeated from the foot of the table so that it prints on the sheet's first page) with the
"not a vendor quote" banner and notes beside it; the line items follow from :data:`QUOTE_HEADER_ROW`,
then :data:`QUOTE_BLANK_ROWS` yellow input rows inside the subtotal's range, then subtotal,
discount, tax, shipping and grand total. The arithmetic, in order, every amount rounded to cents
(Excel's ``ROUND``, half away from zero)::

    line total      = round(unit price x quantity)
    subtotal        = round(sum of line totals)
    discount        = round(subtotal x discount rate)     (shown negative)
    after discount  = round(subtotal - discount)
    tax             = round(after discount x tax rate)    (shipping is not taxed)
    grand total     = round(after discount + tax + shipping)

:func:`planner.report.workbook_data.quote_totals` does the same arithmetic in Python, in the same
order. The key cells get workbook-level names (:func:`define_names`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from planner.core.units import GiB
from planner.report.cells import (
    BANNER_COLOR,
    DATE_FORMAT,
    FLAG_FILL,
    GIB_FORMAT,
    INT_FORMAT,
    PCT_FORMAT,
    USD_FORMAT,
    fit_columns,
    header,
    label,
    mark_input,
    put_as_of,
    put_formula,
    put_sentence,
    put_text,
    put_value,
    split_coord,
    style,
    styles,
    title,
)
from planner.report.sheets.sources import CitedSource, quote_source_cell
from planner.report.workbook_data import QuoteSettings, WorkbookData, is_flagged
from planner.solve.quote import INCLUDED, order_details

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

#: Workbook-level names of the quote's key cells (Formulas > Name Manager in Excel).
NAME_SUBTOTAL = "QuoteSubtotal"
NAME_DISCOUNT_RATE = "QuoteDiscountRate"
NAME_TAX_RATE = "QuoteTaxRate"
NAME_SHIPPING = "QuoteShipping"
NAME_GRAND_TOTAL = "QuoteGrandTotal"

#: Quote table columns.
QUOTE_HEADERS = ("#", "Description", "Category", "Unit price (USD)", "Quantity", "Line total (USD)",
                 "Price kind", "Price status", "Price source", "Price as of", "Catalog id",
                 "Memory per card: CUDA total (GiB)",
                 "Order details: MPN; seller; lead time; warranty; quote valid until")
#: The ordering column (:func:`order_details`): blank where the catalog and its overlays do not say.
ORDER_COLUMN = len(QUOTE_HEADERS)
QUOTE_HEADER_ROW = 9
#: Blank input rows under the items, inside the subtotal's range: an item typed there counts.
QUOTE_BLANK_ROWS = 4
QUOTE_TITLE = "Budgetary estimate for scenario {name}"
QUOTE_BANNER = ("BUDGETARY ESTIMATE, NOT A VENDOR QUOTE: prices come from the planner's catalog "
                "(list, street and estimated prices, each with its date and source), not from an offer.")
QUOTE_BANNER_QUOTED = ("SELLERS' QUOTES as the catalog overlay gives them (price kind quote, each within its validity): "
                       "check every line against the seller's offer document before ordering.")
QUOTE_BANNER_SOME = ("BUDGETARY ESTIMATE: {n} of {total} priced lines are sellers' quotes within their validity "
                     "(Price kind quote); the others come from the planner's catalog (list, street and estimated "
                     "prices), not from an offer.")
#: How a RAM rule note's sentence starts where the rule set the RAM (planner.solve.ramrule.RamRuleNote.lines).
RAM_RULE_SETS = "RAM set by"
#: What the memory line adds then.
RAM_RULE_LINE_NOTE = " (sized by the RAM rule of thumb, not the memory model: see the Summary's RAM section)"
QUOTE_BANNER_2 = ("Get dated quotes from vendors before ordering, first for the lines whose Price status "
                  "says EXPIRED, ESTIMATE or STALE.")
#: Column widths (characters): 190 in all, so the sheet prints one page wide at 70 % or more; the
#: category ('motherboard') and price kind ('estimate') fit whole on one line, the price status's
#: usual texts in three.
QUOTE_WIDTHS = (("A", 12), ("B", 24), ("C", 12), ("D", 13), ("E", 8), ("F", 14), ("G", 9), ("H", 20), ("I", 19),
                ("J", 12), ("K", 16), ("L", 11), ("M", 20))
_NOTE_LAST_COL = ORDER_COLUMN - 1  # the header block's notes wrap within D-L
QUOTE_SOURCES_NOTE = ("Price source: the REF:<id>s the line's source cites; each document, with its links, and "
                      "each line's price source in full are on the Sources sheet.")


def write_quote(ws: Worksheet, data: WorkbookData, cited: Sequence[CitedSource] = ()) -> dict[str, str]:
    """Write the Quote sheet; return the coordinates of its key cells ('subtotal', 'discount_rate',
    'discount', 'after_discount', 'tax_rate', 'tax', 'shipping', 'grand_total' -> 'F20').

    ``cited``: the Sources sheet's ids (:func:`planner.report.sheets.sources.cited_sources`), for
    the price sources' pointers.
    """
    statuses = data.price_statuses()
    _header_block(ws, data, statuses, bool(cited))
    first, last_item, last = _item_rows(ws, data, statuses, cited)
    cells = _total_rows(ws, data.quote, first, last)
    # the grand total in the header block too, so it prints on the sheet's first page however many
    # lines follow; only the table's header row repeats on the pages after it (print_title_rows)
    label(ws, 8, 1, "Grand total (USD)")
    put_formula(ws, 8, 2, f"={cells['grand_total']}", USD_FORMAT).font = style("bold")
    ws.freeze_panes = f"A{QUOTE_HEADER_ROW + 1}"
    ws.print_title_rows = f"{QUOTE_HEADER_ROW}:{QUOTE_HEADER_ROW}"
    # Fixed widths: the sheet prints one page wide at 70 % or more (planner.report.workbook.print_scale);
    # the banner and notes in D2:D8 wrap across D-L (merged), the labels in A2:A7 wrap in A.
    fit_columns(ws, fixed=dict(QUOTE_WIDTHS), wrap_cols=("A", "B", "H", "I", "M"), wrap_from=2, wrap_to=last_item)
    return cells


def _header_block(ws: Worksheet, data: WorkbookData, statuses: Sequence[str], cites: bool) -> None:
    """Rows 1-8: title, the estimate's reference and dates (B5 = B3 + B4 stays where other tools
    expect it), the banner and the notes in column D."""
    from openpyxl.styles import Font

    q = data.quote
    st = styles()
    title(ws, 1, QUOTE_TITLE.format(name=data.scenario_name))  # escaped once, by put_text (h17b #1)
    label(ws, 2, 1, "Reference")
    mark_input(put_text(ws, 2, 2, q.quote_number))
    label(ws, 3, 1, "Estimate date")
    date_cell = put_value(ws, 3, 2, q.quote_date, DATE_FORMAT)
    mark_input(date_cell)
    date_cell.alignment = st["top"]
    label(ws, 4, 1, "Re-check after (days)")
    mark_input(put_value(ws, 4, 2, q.validity_days, INT_FORMAT))
    label(ws, 5, 1, "Re-check prices by")
    # a seller's quote that lapses before date + days moves the re-check date to its last day
    from planner.solve.quote import valid_until

    held = [d for d in (valid_until(i) for i in data.line_items) if d is not None]
    # (never before the estimate's date: a quote that has lapsed already means re-check now, and says EXPIRED)
    put_formula(ws, 5, 2, f"=MAX(B3,MIN(B3+B4,DATE({min(held):%Y},{min(held).month},{min(held).day})))" if held
                else "=B3+B4", DATE_FORMAT)
    label(ws, 6, 1, "Customer")
    mark_input(put_text(ws, 6, 2, q.customer))
    label(ws, 7, 1, "Catalog")
    put_text(ws, 7, 2, data.catalog_label)
    banner = Font(bold=True, color=BANNER_COLOR)
    last = _NOTE_LAST_COL
    # the priced lines that are sellers' quotes within their validity: all, some or none of them
    priced = [(i, s) for i, s in zip(data.line_items, statuses) if i.price_kind != INCLUDED]
    n_quoted = sum(1 for i, s in priced if i.price_kind == "quote" and not s.startswith("EXPIRED"))
    text = QUOTE_BANNER if not n_quoted else QUOTE_BANNER_QUOTED if n_quoted == len(priced) else \
        QUOTE_BANNER_SOME.format(n=n_quoted, total=len(priced))
    put_sentence(ws, 2, 4, text, last, banner)
    put_sentence(ws, 3, 4, QUOTE_BANNER_2, last, banner)
    n_est = sum(1 for i in data.line_items if i.price_kind == "estimate")
    n_stale = sum(1 for s in statuses if "STALE" in s)
    n_expired = sum(1 for s in statuses if s.startswith("EXPIRED"))
    expired = f"{n_expired} with an EXPIRED seller's quote, " if n_expired else ""
    put_sentence(ws, 4, 4, f"Flagged lines: {expired}{n_est} with an estimated price, {n_stale} with a price dated more "
                           f"than {data.stale_price_months} months before the catalog's newest entry (see Price "
                           "status).", last)
    put_sentence(ws, 5, 4, "Yellow cells are inputs: change a unit price, a quantity or a rate and every total "
                           "follows; type added items into the yellow blank rows above the subtotal. Amounts in USD.",
                 last)
    put_sentence(ws, 6, 4, "Totals, in order, each rounded to cents: subtotal; discount on the subtotal; tax on the "
                           "subtotal after discount; shipping (not taxed); grand total.", last)
    put_sentence(ws, 7, 4, "Price as of: a date, or YYYY-MM text where the source gives only the month. "
                           "Price status: as the planner found the catalog price. MPN: manufacturer part number.", last)
    if cites:
        put_sentence(ws, 8, 4, QUOTE_SOURCES_NOTE, last)


def _item_rows(ws: Worksheet, data: WorkbookData, statuses: Sequence[str],
               cited: Sequence[CitedSource]) -> tuple[int, int, int]:
    """The header row, the line items and the blank input rows; return (first item row, last
    item row, last blank row)."""
    from openpyxl.styles import PatternFill

    st = styles()
    flag_fill = PatternFill("solid", fgColor=FLAG_FILL)
    by_id = {c.id: c for c in cited}
    header(ws, QUOTE_HEADER_ROW, QUOTE_HEADERS)
    first = QUOTE_HEADER_ROW + 1
    row = first
    # where the RAM rule of thumb, not the memory model, set the RAM (planner.solve.ramrule), the memory
    # line says so: the need-sized alternative and its price are on the Summary
    rule_set = any(x.startswith(RAM_RULE_SETS) for x in data.ram_rule)
    for n, (item, status) in enumerate(zip(data.line_items, statuses), start=1):
        put_value(ws, row, 1, n)
        put_text(ws, row, 2, item.description + (RAM_RULE_LINE_NOTE if rule_set and item.category == "memory"
                                                 else ""))
        put_text(ws, row, 3, item.category)
        mark_input(put_value(ws, row, 4, float(item.unit_price_usd), USD_FORMAT))
        mark_input(put_value(ws, row, 5, int(item.quantity), INT_FORMAT))
        put_formula(ws, row, 6, f"=ROUND(D{row}*E{row},2)", USD_FORMAT)
        put_text(ws, row, 7, item.price_kind)
        c = put_text(ws, row, 8, status)
        if is_flagged(status):
            c.fill = flag_fill
            c.font = st["bold"]
        put_text(ws, row, 9, quote_source_cell(item.source, by_id))
        put_as_of(ws, row, 10, item.as_of)
        put_text(ws, row, 11, item.catalog_id)
        cuda = data.gpu_cuda_total_bytes.get(item.catalog_id) if item.catalog_id else None
        if item.category == "gpu" and cuda:
            put_value(ws, row, 12, cuda / GiB, GIB_FORMAT)
        _order_cells(ws, row, item)
        row += 1
    last_item = row - 1
    for _ in range(QUOTE_BLANK_ROWS):
        for col in (2, 3, 7, 9, 10, ORDER_COLUMN):
            mark_input(ws.cell(row=row, column=col))
        for col, fmt in ((4, USD_FORMAT), (5, INT_FORMAT)):
            cell = ws.cell(row=row, column=col)
            cell.number_format = fmt
            mark_input(cell)
        put_formula(ws, row, 6, f"=ROUND(D{row}*E{row},2)", USD_FORMAT)
        row += 1
    return first, last_item, row - 1


def _order_cells(ws: Worksheet, row: int, item: object) -> None:
    """The line's ordering cell (:func:`order_details`), a yellow input, blank where unknown: one key a
    line, so a part number or a date wraps only where it is longer than the column."""
    text = order_details(item, sep="\n")
    mark_input(put_text(ws, row, ORDER_COLUMN, text) if text else ws.cell(row=row, column=ORDER_COLUMN))


def _total_rows(ws: Worksheet, q: QuoteSettings, first: int, last: int) -> dict[str, str]:
    """Subtotal over rows ``first``-``last`` of column F, discount, tax, shipping, grand total,
    from row ``last`` + 2; return the key cells' coordinates."""
    row = last + 2
    cells: dict[str, str] = {}
    bold = style("bold")

    def total_row(key: str, text: str, formula: str) -> int:
        nonlocal row
        label(ws, row, 2, text)
        c = put_formula(ws, row, 6, formula, USD_FORMAT)
        c.font = bold
        cells[key] = f"F{row}"
        row += 1
        return row - 1

    sub = total_row("subtotal", "Subtotal (USD)", f"=ROUND(SUM(F{first}:F{last}),2)")

    def rate_row(key: str, text: str, pct: float, amount: str) -> int:
        """An input rate in column D and its amount in F (``amount`` formats the rate cell in)."""
        nonlocal row
        r = row
        label(ws, r, 2, text)
        mark_input(put_value(ws, r, 4, pct / 100, PCT_FORMAT))
        cells[f"{key}_rate"] = f"D{r}"
        put_formula(ws, r, 6, amount.format(rate=f"D{r}"), USD_FORMAT)
        cells[key] = f"F{r}"
        row += 1
        return r

    r = rate_row("discount", "Discount (% of subtotal)", q.discount_pct, f"=-ROUND(F{sub}*{{rate}},2)")
    after = total_row("after_discount", "Subtotal after discount (USD)", f"=ROUND(F{sub}+F{r},2)")
    rate_row("tax", "Tax (% of subtotal after discount)", q.tax_pct, f"=ROUND(F{after}*{{rate}},2)")
    r = row
    label(ws, r, 2, "Shipping (USD, not taxed)")
    mark_input(put_value(ws, r, 6, float(q.shipping_usd), USD_FORMAT))
    cells["shipping"] = f"F{r}"
    row += 1
    total_row("grand_total", "Grand total (USD)", f"=ROUND(F{after}+{cells['tax']}+{cells['shipping']},2)")
    return cells


def quote_values(data: WorkbookData, cells: dict[str, str]) -> dict[str, float]:
    """The values the Quote sheet's formulas compute, by coordinate, as the workbook computes them
    (:func:`planner.report.workbook_data.quote_totals`): each line's total in F, the totals' cells (``cells`` as
    :func:`write_quote` returns them; the discount negative, as its formula is) and the header's grand total (B8),
    for sizing the columns that show them (:func:`planner.report.printfit.widen_for_numbers`)."""
    from planner.report.workbook_data import cents

    out = {f"F{row}": cents(float(item.unit_price_usd) * int(item.quantity))
           for row, item in enumerate(data.line_items, start=QUOTE_HEADER_ROW + 1)}
    t = data.totals()
    for key, value in (("subtotal", t.subtotal_usd), ("discount", -t.discount_usd),
                       ("after_discount", t.after_discount_usd), ("tax", t.tax_usd),
                       ("grand_total", t.grand_total_usd)):
        out[cells[key]] = value
    out["B8"] = t.grand_total_usd
    return out


def define_names(wb, cells: dict[str, str]) -> None:
    """The workbook-level names (:data:`NAME_SUBTOTAL` ... :data:`NAME_GRAND_TOTAL`) of the Quote
    sheet's key cells, ``cells`` as :func:`write_quote` returns them."""
    from openpyxl.workbook.defined_name import DefinedName

    for name, key in ((NAME_SUBTOTAL, "subtotal"), (NAME_DISCOUNT_RATE, "discount_rate"),
                      (NAME_TAX_RATE, "tax_rate"), (NAME_SHIPPING, "shipping"),
                      (NAME_GRAND_TOTAL, "grand_total")):
        col, row = split_coord(cells[key])
        wb.defined_names[name] = DefinedName(name, attr_text=f"Quote!${col}${row}")
