"""The Memory sheet: a chart of every workload's per-GPU peak against the card's capacity, then
the memory breakdown.

First, under the title and a note, a native chart (rows 4 to 24, so that it prints on the sheet's
first page whatever the number of components): the components as stacked columns, each in a
colour of its own (:data:`SERIES_COLORS`), and the capacity as a black line with markers and its
value. Under it the chart data, one row per component live at a workload's peak and one column
per workload, with the peak per GPU as a ``SUM`` formula, the host RAM peak and the capacity per
GPU after the scenario's reserve (the Summary's 'Capacity after reserve'). Then, from a
page of its own, one row per component (workload, component, phase, kind, GiB per GPU or host
GiB per machine, formula, source: :class:`planner.memory.breakdown.Component`), its header
repeated on every printed page. Sizes in GiB (2**30 bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.core.units import GiB
from planner.memory.breakdown import GPU, HOST, Component, Estimate
from planner.report.cells import (
    GIB_FORMAT,
    fit_columns,
    gib,
    header,
    label,
    put_formula,
    put_sentence,
    put_text,
    put_value,
    style,
    title,
)
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

MEMORY_HEADERS = ("Workload", "Component", "When", "Kind", "Per-GPU (GiB)", "Host per machine (GiB)",
                  "Formula", "Source")
CHART_TITLE = "Per-GPU memory at the peak, by component (GiB)"
CHART_COMPONENT_HEADER = "Component (GiB per GPU at the peak)"
CAPACITY_LABEL = "GPU capacity after reserve (GiB)"
CHART_NOTE = ("A workload's peak is its always-live components plus the components of its peak phase; components "
              "of other phases are left out. The chart stacks them per workload; the black line marks the "
              "capacity per GPU the plan allows (the card's CUDA total less the scenario's reserve). The full "
              "breakdown, with each formula and source, follows the chart.")
#: Distinct fills for the chart's component series, in order (Tableau 10, then its light tints):
#: no two series share a colour up to 20 components; more repeat the cycle.
SERIES_COLORS = ("1F77B4", "FF7F0E", "2CA02C", "D62728", "9467BD", "8C564B", "E377C2", "7F7F7F", "BCBD22",
                 "17BECF", "AEC7E8", "FFBB78", "98DF8A", "FF9896", "C5B0D5", "C49C94", "F7B6D2", "C7C7C7",
                 "DBDB8D", "9EDAE5")
#: The capacity line's colour (black: no component series uses it).
CAPACITY_COLOR = "000000"
#: Column widths (characters): 172 in all, so the sheet prints one page wide at 70 % or more.
MEMORY_WIDTHS = {"A": 18, "B": 26, "C": 12, "D": 10, "E": 11, "F": 11, "G": 44, "H": 40}
#: Rows kept for the chart (at the default 15 pt a row, 0.53 cm: 21 rows hold its 10 cm).
CHART_ROWS = 21
_CHART_MAX_CM = 10.0


def peak_components(est: Estimate) -> list[Component]:
    """The GPU components live at the per-GPU peak: the always-live ones and the peak phase's."""
    return est.gpu_components_at_peak()


def write_memory(ws: Worksheet, data: WorkbookData) -> None:
    """Write the Memory sheet: the chart data, the chart, then the component table on a page of its own."""
    from openpyxl.worksheet.pagebreak import Break

    title(ws, 1, CHART_TITLE)
    put_sentence(ws, 2, 1, CHART_NOTE, len(MEMORY_HEADERS))
    chart_at = 4
    hdr = chart_at + CHART_ROWS
    names, end = _chart_data(ws, data, hdr)
    charted = bool(data.estimates and names)
    head = end + 2
    ws.row_breaks.append(Break(id=head - 1))  # the breakdown starts a page, its header repeated on each
    last = _component_rows(ws, data, head)
    ws.print_title_rows = f"{head}:{head}"
    if data.estimates:
        ws.auto_filter.ref = f"A{head}:H{last}"
    fit_columns(ws, fixed=dict(MEMORY_WIDTHS), wrap_cols=("B", "C", "D", "E", "F", "G", "H"), wrap_from=hdr)
    if charted:
        _chart(ws, data, hdr, len(names), chart_at)


def component_header_row(ws: Worksheet) -> int:
    """The row of the component table's header (the sheet's print title row)."""
    return int(str(ws.print_title_rows).split(":")[0].replace("$", ""))


def _component_rows(ws: Worksheet, data: WorkbookData, head: int) -> int:
    """The header at row ``head`` and one row per component of every estimate; return the last row."""
    header(ws, head, MEMORY_HEADERS)
    row = head + 1
    for est in data.estimates:
        for c in est.components:
            put_text(ws, row, 1, est.workload_name)
            put_text(ws, row, 2, c.name)
            put_text(ws, row, 3, c.phase or "always")
            put_text(ws, row, 4, c.kind)
            if c.where == GPU:
                put_value(ws, row, 5, c.bytes / GiB, GIB_FORMAT)
            elif c.where == HOST:
                put_value(ws, row, 6, c.bytes / GiB, GIB_FORMAT)
            put_text(ws, row, 7, c.formula)
            put_text(ws, row, 8, c.source)
            row += 1
    return row - 1


def _chart_data(ws: Worksheet, data: WorkbookData, hdr: int) -> tuple[list[str], int]:
    """The chart's table from row ``hdr``: the header, the peak phases, GiB per component and
    workload, the peak per GPU, host RAM and the GPU capacity after the reserve; return (component
    names in order, last row)."""
    from openpyxl.utils import get_column_letter

    names: list[str] = []
    per_workload: list[dict[str, float]] = []
    for est in data.estimates:
        sums: dict[str, float] = {}
        for c in peak_components(est):
            if c.name not in names:
                names.append(c.name)
            sums[c.name] = sums.get(c.name, 0.0) + c.bytes / GiB
        per_workload.append(sums)
    capacity = {s.workload: s.capacity_bytes for s in data.summary}
    header(ws, hdr, ["Chart data", CHART_COMPONENT_HEADER] + [est.workload_name for est in data.estimates])
    put_text(ws, hdr + 1, 2, "Peak phase")
    for j, est in enumerate(data.estimates):
        put_text(ws, hdr + 1, 3 + j, est.peak_phase or "always")
    first_comp = hdr + 2
    for i, n in enumerate(names):
        put_text(ws, first_comp + i, 2, n)
        for j, sums in enumerate(per_workload):
            put_value(ws, first_comp + i, 3 + j, sums.get(n, 0.0), GIB_FORMAT)
    last_comp = first_comp + len(names) - 1
    total_row = last_comp + 1
    label(ws, total_row, 2, "Peak per GPU (GiB)")
    label(ws, total_row + 1, 2, "Host RAM peak per machine (GiB)")
    label(ws, total_row + 2, 2, CAPACITY_LABEL)
    for j, est in enumerate(data.estimates):
        letter = get_column_letter(3 + j)
        if names:
            c = put_formula(ws, total_row, 3 + j, f"=SUM({letter}{first_comp}:{letter}{last_comp})", GIB_FORMAT)
        else:
            c = put_value(ws, total_row, 3 + j, 0.0, GIB_FORMAT)
        c.font = style("bold")
        put_value(ws, total_row + 1, 3 + j, est.host_total_bytes / GiB, GIB_FORMAT)
        put_value(ws, total_row + 2, 3 + j, gib(capacity.get(est.workload_name)), GIB_FORMAT)
    return names, total_row + 2


def _chart(ws: Worksheet, data: WorkbookData, hdr: int, n_components: int, anchor_row: int) -> None:
    """The chart of the chart data (header row ``hdr``) at ``A<anchor_row>``, above it: the components as
    stacked columns, each series filled with its own colour, and the capacity per GPU as a black
    line with markers over the same axes."""
    from openpyxl.chart import BarChart, LineChart, Reference
    from openpyxl.chart.label import DataLabelList
    from openpyxl.chart.marker import Marker
    from openpyxl.chart.shapes import GraphicalProperties

    first_comp, last_comp = hdr + 2, hdr + 1 + n_components
    capacity_row = last_comp + 3
    n = len(data.estimates)
    chart = BarChart()
    chart.type = "col"
    chart.grouping = "stacked"
    chart.overlap = 100
    chart.title = CHART_TITLE
    chart.y_axis.title = "GiB per GPU"
    chart.x_axis.title = "Workload"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend.position = "r"
    values = Reference(ws, min_col=2, max_col=2 + n, min_row=first_comp, max_row=last_comp)
    chart.add_data(values, titles_from_data=True, from_rows=True)
    categories = Reference(ws, min_col=3, max_col=2 + n, min_row=hdr, max_row=hdr)
    chart.set_categories(categories)
    for i, series in enumerate(chart.series):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        series.graphicalProperties.solidFill = color
        series.graphicalProperties.line.solidFill = color
    line = LineChart()
    line.add_data(Reference(ws, min_col=2, max_col=2 + n, min_row=capacity_row, max_row=capacity_row),
                  titles_from_data=True, from_rows=True)
    line.set_categories(categories)
    cap = line.series[0]
    cap.marker = Marker(symbol="dash", size=14)
    cap.marker.graphicalProperties = GraphicalProperties(solidFill=CAPACITY_COLOR)
    cap.marker.graphicalProperties.line.solidFill = CAPACITY_COLOR
    cap.dLbls = DataLabelList()  # the capacity's value beside each marker
    cap.dLbls.showVal = True
    for flag in ("showSerName", "showCatName", "showLegendKey", "showPercent"):
        setattr(cap.dLbls, flag, False)
    cap.dLbls.position = "t"
    cap.graphicalProperties.line.solidFill = CAPACITY_COLOR
    cap.graphicalProperties.line.width = 28575  # 2.25 pt
    cap.smooth = False
    chart += line
    chart.height = _CHART_MAX_CM
    chart.width = 28
    ws.add_chart(chart, f"A{anchor_row}")
