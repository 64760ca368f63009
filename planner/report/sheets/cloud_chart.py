"""The Cloud vs Local sheet's cumulative cost by month, its break-even markers and its chart.

Local = capex + local per month x m, less the resale value at the sale at the end of the
ownership period; cloud = cloud per month x m (on-demand and spot); each break-even month within
the period is drawn as a vertical segment from 0 to the cost there, and said in words under the
markers when it falls outside (:mod:`planner.report.sheets.cloud` has the formulas). openpyxl is
imported inside the functions.
"""

from __future__ import annotations

import math
from typing import Any

from planner.report.cells import merge_across, put_formula, put_sentence, put_text, put_value
from planner.report.sheets.cloud_base import INT, MONTH_OR_NONE, NUM2, PAGE_LAST_COL, USD, CloudSheet

#: Rows the chart takes under the table (10 cm at 0.53 cm a 15 pt row, and a margin).
CHART_ROWS = 21


def cumulative_table(s: CloudSheet, comp: Any, r: int, has_od: bool, has_spot: bool) -> tuple[int, int]:
    """Cumulative cost by month over the ownership period from row ``r``, then the end of the
    period before and after the sale; return (header row, last row)."""
    ws, cells = s.ws, s.cells
    yrs, F, capex = cells["years"], cells["net_capex"], cells["capex"]
    put_sentence(ws, r, 1, "Cumulative cost over the ownership period (USD): local = capex + local per month x m, "
                 "less the resale value (capex x residual) at the sale at the end of the period; cloud = cloud per "
                 "month x m. Break-even markers: the break-even month within the period, from 0 to the cost there "
                 "('none', off the chart, when there is none; the sentences under the markers say so). The chart "
                 "is under the table. A row past 12 x D (after a shorter period is typed in) holds Excel's no-value "
                 "marker, which the chart skips.", PAGE_LAST_COL, s.bold)
    r += 1
    s.header(r, ["Month", "Local (USD)", "Cloud on-demand (USD)", "Cloud spot (USD)", "Point"])
    head = r
    local_pm = cells["local_pm"]
    end_months = 12 * comp.costs.depreciation_years
    whole = [m for m in range(int(math.ceil(end_months)))]  # the months before the end, as written
    within = f"A{{r}}<=12*{yrs}"
    for mo in whole:
        r += 1
        put_value(ws, r, 1, mo, INT)
        put_formula(ws, r, 2, f"=IF({within.format(r=r)},{capex}+{local_pm}*A{r},NA())", USD)
        if has_od:
            put_formula(ws, r, 3, f"=IF({within.format(r=r)},{cells['cloud_pm']}*A{r},NA())", USD)
        if has_spot:
            put_formula(ws, r, 4, f"=IF({within.format(r=r)},{cells['spot_pm']}*A{r},NA())", USD)
    # The end of the period (follows an edited D): just before the sale, and with the resale credited.
    for sold in (False, True):
        r += 1
        put_formula(ws, r, 1, f"=12*{yrs}", NUM2)
        upfront = F if sold else capex
        put_formula(ws, r, 2, f"={upfront}+{local_pm}*A{r}", USD)
        if has_od:
            put_formula(ws, r, 3, f"={cells['cloud_pm']}*A{r}", USD)
        if has_spot:
            put_formula(ws, r, 4, f"={cells['spot_pm']}*A{r}", USD)
        put_text(ws, r, 5, "end of the period, the machine sold (resale credited)" if sold else
                 "end of the period, before the sale")
    return head, r


def break_even_markers(s: CloudSheet, head: int, last: int) -> list[tuple[str, int]]:
    """Beside the cumulative table (header row ``head``): per break-even a vertical segment from 0
    to the cost at the break-even month (month -1, shown 'none' and off the chart's axis, which
    starts at 0, when there is none within the period: no error value), and a sentence saying where
    it falls; return (name, first column) of each segment."""
    ws, cells = s.ws, s.cells
    yrs = cells["years"]
    markers = []
    col = 6
    words = []
    for kind, name in (("", "on-demand"), ("spot_", "spot")):
        be = cells.get(f"{kind}be_months")
        if not be:
            continue
        pm = cells["cloud_pm" if not kind else "spot_pm"]
        any_m = cells[f"{kind}be_months_any"]
        s.header(head, [f"Break-even {name}: month", "USD"], col)
        for k, top in enumerate((False, True)):
            rr = head + 1 + k
            put_formula(ws, rr, col, f"=IF(ISNUMBER({be}),{be},-1)", MONTH_OR_NONE)
            put_formula(ws, rr, col + 1, f"=IF(ISNUMBER({be}),{pm}*{be},0)" if top else "=0", USD)
        words.append(
            f'="Break-even, {name}: "&IF(ISNUMBER({be}),IF({be}>=12*{yrs},"local breaks even only at the sale at '
            f'the end of month "&TEXT({be},"0.0"),"local breaks even at month "&TEXT({be},"0.0")),"none within the "'
            f'&TEXT(12*{yrs},"0")&" months of ownership: cloud is cheaper throughout"&IF(ISNUMBER({any_m}),'
            f'" (the lines would cross at month "&TEXT({any_m},"0.0")&", after the period; not drawn)",""))')
        markers.append((name, col))
        col += 3
    for k, formula in enumerate(words):
        cell = put_formula(ws, last + 2 + k, 1, formula)
        cell.alignment = s.wrap
        merge_across(ws, last + 2 + k, 1, PAGE_LAST_COL)
        ws.row_dimensions[last + 2 + k].height = 32  # up to about 250 characters in A-G's 142: two lines
    return markers


def cost_chart(s: CloudSheet, comp: Any, head: int, last: int, has_od: bool, has_spot: bool,
               markers: list[tuple[str, int]]) -> int:
    """The line chart of the cumulative costs (rows ``head`` + 1 to ``last``) with the break-even
    markers, anchored in column A under the table and the markers' sentences (within the first printed page's width); return
    the first row under it."""
    from openpyxl.chart import Reference, ScatterChart, Series
    from openpyxl.chart.marker import Marker
    from openpyxl.chart.shapes import GraphicalProperties

    ws = s.ws
    end_months = 12 * comp.costs.depreciation_years
    chart = ScatterChart()
    chart.title = "Cumulative cost: local vs cloud, with the break-even month(s) marked"
    chart.style = 13
    chart.scatterStyle = "line"
    chart.y_axis.title = "USD"
    chart.x_axis.title = "Month"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.x_axis.scaling.min = 0
    chart.x_axis.scaling.max = end_months
    chart.x_axis.majorUnit = 6 if end_months > 24 else 3
    chart.legend.position = "b"
    xs = Reference(ws, min_col=1, min_row=head + 1, max_row=last)
    colors = {2: "1F77B4", 3: "D62728", 4: "2CA02C"}
    for cidx in (2, 3, 4):
        if (cidx == 3 and not has_od) or (cidx == 4 and not has_spot):
            continue
        ser = Series(Reference(ws, min_col=cidx, min_row=head + 1, max_row=last), xs,
                     title_from_data=False, title=ws.cell(head, cidx).value)
        ser.marker = Marker(symbol="none")
        ser.graphicalProperties.line.solidFill = colors[cidx]
        ser.graphicalProperties.line.width = 28575
        ser.smooth = False
        chart.series.append(ser)
    for name, mcol in markers:
        ser = Series(Reference(ws, min_col=mcol + 1, min_row=head + 1, max_row=head + 2),
                     Reference(ws, min_col=mcol, min_row=head + 1, max_row=head + 2),
                     title_from_data=False, title=f"Break-even ({name})")
        ser.marker = Marker(symbol="diamond", size=9)
        fill = "000000" if name == "on-demand" else "7F7F7F"
        ser.marker.graphicalProperties = GraphicalProperties(solidFill=fill)
        ser.marker.graphicalProperties.line.solidFill = fill
        ser.graphicalProperties.line.solidFill = fill
        ser.graphicalProperties.line.dashStyle = "dash"
        ser.smooth = False
        chart.series.append(ser)
    chart.height = 10
    chart.width = 22
    ws.add_chart(chart, f"A{last + 5}")
    return last + 5 + CHART_ROWS
