"""The Memory sheet: every workload's memory breakdown, and a chart of the per-GPU peak.

One row per component (workload, component, phase, kind, GiB per GPU or host GiB per machine,
formula, source: :class:`planner.memory.breakdown.Component`); then the chart data, one row per
component live at a workload's peak and one column per workload, with the peak per GPU as a
``SUM`` formula; then a native stacked bar chart of that table on a page of its own. Sizes in GiB
(2**30 bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.core.units import GiB
from planner.memory.breakdown import GPU, HOST, Component, Estimate
from planner.report.cells import GIB_FORMAT, fit_columns, header, label, put_formula, put_text, put_value, styles
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

MEMORY_HEADERS = ("Workload", "Component", "When", "Kind", "Per-GPU (GiB)", "Host per machine (GiB)",
                  "Formula", "Source")
CHART_TITLE = "Per-GPU memory at the peak, by component (GiB)"
CHART_COMPONENT_HEADER = "Component (GiB per GPU at the peak)"


def peak_components(est: Estimate) -> list[Component]:
    """The GPU components live at the per-GPU peak: the always-live ones and the peak phase's."""
    return est.gpu_components_at_peak()


def write_memory(ws: Worksheet, data: WorkbookData) -> None:
    """Write the Memory sheet: the component table, the chart data and the chart."""
    row = _component_rows(ws, data)
    # Chart data: one row per component live at a peak, one column per workload.
    row += 1
    label(ws, row, 1, f"{CHART_TITLE}: chart data. A workload's peak is its always-live components plus "
                       "the components of its peak phase; components of other phases are left out.")
    hdr = row + 1
    names, end = _chart_data(ws, data, hdr)
    fit_columns(ws, fixed={"A": 20, "B": 30, "C": 18, "D": 14, "E": 14, "F": 14, "G": 60, "H": 50},
                wrap_cols=("B", "C", "D", "E", "F", "G", "H"))
    if data.estimates and names:
        _chart(ws, data, hdr, len(names), end)


def _component_rows(ws: Worksheet, data: WorkbookData) -> int:
    """The header and one row per component of every estimate; return the next free row."""
    header(ws, 1, MEMORY_HEADERS)
    row = 2
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
    ws.freeze_panes = "C2"
    if data.estimates:
        ws.auto_filter.ref = f"A1:H{row - 1}"
    return row


def _chart_data(ws: Worksheet, data: WorkbookData, hdr: int) -> tuple[list[str], int]:
    """The chart's table from row ``hdr``: the header, the peak phases, GiB per component and
    workload, the peak per GPU and host RAM; return (component names in order, last row)."""
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
    for j, est in enumerate(data.estimates):
        letter = get_column_letter(3 + j)
        if names:
            c = put_formula(ws, total_row, 3 + j, f"=SUM({letter}{first_comp}:{letter}{last_comp})", GIB_FORMAT)
        else:
            c = put_value(ws, total_row, 3 + j, 0.0, GIB_FORMAT)
        c.font = styles()["bold"]
        put_value(ws, total_row + 1, 3 + j, est.host_total_bytes / GiB, GIB_FORMAT)
    return names, total_row + 1


def _chart(ws: Worksheet, data: WorkbookData, hdr: int, n_components: int, end: int) -> None:
    """The stacked bar chart of the chart data (header row ``hdr``, last row ``end``), under it on
    a page of its own."""
    from openpyxl.chart import BarChart, Reference
    from openpyxl.worksheet.pagebreak import Break

    first_comp, last_comp = hdr + 2, hdr + 1 + n_components
    chart = BarChart()
    chart.type = "bar"
    chart.grouping = "stacked"
    chart.overlap = 100
    chart.title = CHART_TITLE
    chart.y_axis.title = "GiB per GPU"
    chart.x_axis.title = "Workload"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend.position = "b"
    values = Reference(ws, min_col=2, max_col=2 + len(data.estimates), min_row=first_comp, max_row=last_comp)
    chart.add_data(values, titles_from_data=True, from_rows=True)
    chart.set_categories(Reference(ws, min_col=3, max_col=2 + len(data.estimates), min_row=hdr, max_row=hdr))
    chart.height = max(7.5, 5.0 + 1.2 * len(data.estimates) + 0.4 * n_components)
    chart.width = 24
    ws.add_chart(chart, f"A{end + 2}")
    ws.row_breaks.append(Break(id=end))  # the chart prints on a page of its own
