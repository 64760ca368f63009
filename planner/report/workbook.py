"""The Excel report: a plan as a workbook a buyer can read, print, and edit.

:func:`write_workbook` turns a :class:`planner.report.workbook_data.WorkbookData` into an
``.xlsx`` file with six sheets, each written by its module in :mod:`planner.report.sheets`:

- **Summary** (:mod:`~planner.report.sheets.summary`): per workload the chosen configuration and
  strategy, per-GPU memory need against the card's CUDA total and the capacity left after the
  scenario's reserve (headroom), host RAM and recipe, then each workload's training stack and
  warnings in a table under it; the quote's grand total (a
  formula over the Quote sheet); date and catalog version (schema and a SHA-256 of the catalog
  files' content, :func:`planner.report.workbook_data.catalog_sha256`).
- **Quote** (:mod:`~planner.report.sheets.quote`): a *budgetary estimate* from catalog prices,
  not a vendor's quote (a banner says so and asks for dated vendor quotes before ordering): the
  line items with their price status (:func:`planner.report.workbook_data.price_status`:
  estimated and stale prices are flagged on the line), source and as-of date, blank input rows,
  then subtotal, discount, tax, shipping and grand total, every total a live formula over the
  input cells (:func:`planner.report.workbook_data.quote_totals` does the same arithmetic in
  Python, in the same order).
- **Memory** (:mod:`~planner.report.sheets.memory`): a native chart of the per-GPU components
  live at the peak (stacked columns in distinct colours, the capacity per GPU as a line) on the
  first page, its data, then every workload's breakdown (component, GiB per GPU, host GiB,
  formula, source).
- **Alternatives** (:mod:`~planner.report.sheets.alternatives`): the ranked runners-up and the
  infeasible candidates with the binding constraint, as the solver's tables give them.
- **Assumptions** (:mod:`~planner.report.sheets.assumptions`): per workload the bytes per value
  the memory model used (:class:`planner.report.workbook_data.RecipeRow`), the catalog entries
  used with their sources and dates, the workloads' notes, and the scenario file as given.
- **Sources** (:mod:`~planner.report.sheets.sources`): every ``REF:<id>`` the quote's lines and
  the catalog entries used cite, with the document as the catalog's ``SOURCES.md`` gives it, so
  the workbook traces every price without the planner's files.

Sizes are written in GiB (2**30 bytes) and every such header says "(GiB)"; money is USD with a
currency number format. Full dates (YYYY-MM-DD) are stored as dates; a month-only 'YYYY-MM'
stays text (the header says so). Every sheet has a print area (:func:`print_area`) and prints on
A4 and Letter at :data:`MIN_PRINT_SCALE` % or more (:func:`print_scale`, :func:`_print_setup`). Text that
comes from user files (names, notes, the scenario) is always stored as a text cell, so a value
starting with ``=``, ``+``, ``-`` or ``@`` never becomes a formula (:mod:`planner.report.cells`).
The file is written with :mod:`planner.core.atomic` (a temporary file in the target directory,
renamed into place), so an interrupted run never leaves a broken report and an existing report
is replaced whole. The quote's key cells have workbook-level names
(:data:`planner.report.sheets.quote.NAME_GRAND_TOTAL` ...), so other sheets (``extra_sheets``, e.g.
:func:`planner.report.sheets.cloud.add_cloud_sheet`) and buyers can refer to them.

This module does not import the solver: :func:`planner.report.from_plan.workbook_data_from_plan`
reads a plan by its documented attributes. openpyxl is imported inside the functions.
"""

from __future__ import annotations

import errno
import io
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.report.cells import indent_after_numbers, property_text, split_coord
from planner.report.printfit import fit_merges_to_page, page_columns, widen_for_numbers, wrap_cut_text
from planner.report.sheets.alternatives import write_alternatives
from planner.report.sheets.assumptions import write_assumptions
from planner.report.sheets.memory import write_memory
from planner.report.sheets.quote import define_names, quote_values, write_quote
from planner.report.sheets.sources import cited_sources, write_sources
from planner.report.sheets.summary import write_summary
from planner.report.workbook_data import WorkbookData

if TYPE_CHECKING:  # pragma: no cover
    from openpyxl.worksheet.worksheet import Worksheet

SHEETS = ("Summary", "Quote", "Memory", "Alternatives", "Assumptions", "Sources")

#: Held while a workbook is saved: openpyxl's save sets the process-wide ``tempfile.tempdir`` (below), and two
#: saves in threads of one process that put it back in overlapping order would leave it set; one at a time,
#: each puts back what it found.
_SAVE_LOCK = threading.Lock()


# ----- writing ------------------------------------------------------------------------------------

def write_workbook(data: WorkbookData, path: Path,
                   extra_sheets: Sequence[Callable[[Any], object]] = ()) -> Path:
    """Write the report to ``path`` (``.xlsx``), atomically; return ``path``.

    The workbook is serialized in memory and handed to :func:`planner.core.atomic.write_bytes`, which
    writes a temporary file in ``path``'s directory, flushes it and renames it over ``path``:
    readers see the old report whole or the new one whole, never a part.

    Args:
        data: what the workbook shows.
        path: the ``.xlsx`` file to create or replace; its directory must exist.
        extra_sheets: callables given the :class:`openpyxl.Workbook` after the six standard
            sheets are built (e.g. ``lambda wb: add_cloud_sheet(wb, comparison)``); the sheets
            they add get the same print setup. The quote's key cells are reachable by the
            workbook-level names :data:`planner.report.sheets.quote.NAME_GRAND_TOTAL` etc.

    Raises:
        OutputError: the directory does not exist or cannot be written, ``path`` is a directory, or
            openpyxl's temporary files cannot be written (disk full, file-size limit).
    """
    from planner.core.atomic import write_bytes

    from planner.core.errors import OutputError

    import tempfile

    from planner.core.tempdir import refuse_protected_temp, refuse_unusable_temp

    refuse_protected_temp()  # openpyxl's temporary files never go into the shipped catalog or the package
    refuse_unusable_temp()  # a TMPDIR set but unusable: said, not passed over
    wb = build_workbook(data, extra_sheets)
    buffer = io.BytesIO()
    # openpyxl's sheet writer makes its temporary files with tempfile.NamedTemporaryFile (no dir=), whose
    # tempfile.gettempdir() caches the directory in the caller's process-wide tempfile.tempdir: put back
    with _SAVE_LOCK:
        previous_tempdir = tempfile.tempdir
        try:
            # openpyxl writes each sheet to a temporary file first: a full disk or a file-size limit
            # (ulimit -f; Python ignores SIGXFSZ, so the write fails with EFBIG) shows here
            wb.save(buffer)
        except OSError as exc:
            from planner.core.atomic import shown_path

            _close_sheet_writers(exc.__traceback__)
            var = "tempfile.tempdir" if previous_tempdir is not None else "TMPDIR"
            raise OutputError(_temp_failed(shown_path(path), exc, tempfile.gettempdir(), var)) from None
        except BaseException as exc:  # a stop signal while openpyxl writes (Interrupted): its archive closed now, not
            _close_sheet_writers(exc.__traceback__)  # by the garbage collector at exit, which printed a traceback
            raise  # ('Exception ignored in: <function ZipFile.__del__ ...>', h42a N2)
        finally:
            tempfile.tempdir = previous_tempdir
    return write_bytes(Path(path), buffer.getvalue())


def _temp_failed(shown: str, exc: OSError, tmp: str, var: str = "TMPDIR") -> str:
    """The error line for a workbook whose save failed: openpyxl writes each sheet to a temporary file in ``tmp``
    (tempfile.gettempdir(): ``tempfile.tempdir`` if the caller set it, else TMPDIR, else /tmp) before the workbook
    is put together in memory, so the failure is that folder's (its disk full, a file-size limit), not the report
    folder's. ``var``: what to change, 'TMPDIR' or 'tempfile.tempdir' (set in the API caller's code)."""
    why = exc.strerror or str(exc)
    where = f"openpyxl writes each sheet to a temporary file in {tmp} (the temporary folder, {var}) first"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"{shown}: cannot write the workbook ({why}): {where}, and the disk of {tmp} is full. Free space "
                f"there, or set {var} to a folder on a disk with room, and run again.")
    if exc.errno == errno.EFBIG:
        return (f"{shown}: cannot write the workbook ({why}): {where}, and the file-size limit ('ulimit -f') stopped "
                "that file. Raise the limit and run again.")
    return f"{shown}: cannot write the workbook ({why}): {where}, and that failed. Check {tmp}, or set {var} to " \
           "another folder, and run again."


def _close_sheet_writers(tb: Any) -> None:
    """Close the sheet writers and the zip archive a failed ``Workbook.save`` left open (openpyxl's
    WorksheetWriter keeps a generator, ``xf``, that writes its temporary file when closed): closed here, where the write failing
    again (a full disk, ``ulimit -f``) is caught, rather than when the garbage collector finalizes it and
    Python prints that failure as 'Exception ignored in: <generator ...>' after the run's Error line."""
    import inspect
    import zipfile

    archives = []
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            stream = getattr(value, "xf", None)
            if inspect.isgenerator(stream):
                try:
                    stream.close()
                except Exception:  # noqa: BLE001 - the write that failed already made the Error line
                    pass
            if isinstance(value, zipfile.ZipFile):
                archives.append(value)
        tb = tb.tb_next
    for archive in archives:  # the archive in memory, closed while its buffer is open (else at __del__, failing)
        try:
            archive.close()
        except Exception:  # noqa: BLE001 - as above
            pass


def build_workbook(data: WorkbookData, extra_sheets: Sequence[Callable[[Any], object]] = ()):
    """The :class:`openpyxl.Workbook` for ``data``, not yet saved (see :func:`write_workbook`)."""
    from openpyxl import Workbook
    from openpyxl.workbook.properties import CalcProperties

    wb = Workbook()
    wb.remove(wb.active)
    sheets = {name: wb.create_sheet(name) for name in SHEETS}
    cited = cited_sources(data)
    quote_cells = write_quote(sheets["Quote"], data, cited)
    write_summary(sheets["Summary"], data, quote_cells)
    write_memory(sheets["Memory"], data)
    write_alternatives(sheets["Alternatives"], data)
    write_assumptions(sheets["Assumptions"], data, cited)
    write_sources(sheets["Sources"], data, cited)
    define_names(wb, quote_cells)
    for add in extra_sheets:
        add(wb)
    # no number shows '###': the columns are widened for the widest written, and the totals' formulas are sized
    # by the values they compute (h16b #2)
    computed = {"Quote": quote_values(data, quote_cells), "Summary": {"B5": data.totals().grand_total_usd}}
    for ws in wb.worksheets:
        _print_setup(ws, computed.get(ws.title))
    wb.active = 0
    wb.calculation = CalcProperties(fullCalcOnLoad=True)
    props = wb.properties
    # properties are plain XML, not cells: no _xHHHH_ escape (h17b #1)
    props.title = property_text(data.title)
    props.subject = property_text(f"Hardware plan for scenario {data.scenario_name}")
    props.creator = "planner" + (f" {data.planner_version}" if data.planner_version else "")
    props.lastModifiedBy = props.creator
    created = data.created.replace(tzinfo=None) if data.created.tzinfo else data.created
    props.created = created
    props.modified = created
    props.keywords = "hardware plan; quote; GPU memory"
    props.description = property_text(f"Catalog {data.catalog_label}")
    return wb


# ----- print setup --------------------------------------------------------------------------------

def _chart_extent(ws: Worksheet, chart) -> tuple[int, int]:
    """(last row, last column) a chart anchored at a cell ('F12') covers, estimated from its size in
    cm: rows of the sheet's default 15 pt (0.53 cm), columns from their widths (7 px a character
    + 5 px, 96 px an inch)."""
    from openpyxl.utils import column_index_from_string, get_column_letter

    anchor = chart.anchor if isinstance(chart.anchor, str) else "A1"
    col_letters, row0 = split_coord(anchor)
    row_cm = 15 / 72 * 2.54
    last_row = row0 + math.ceil((chart.height or 7.5) / row_cm)
    col = column_index_from_string(col_letters)
    covered = 0.0
    while covered < (chart.width or 15):
        width = ws.column_dimensions[get_column_letter(col)].width or 8.43
        covered += (width * 7 + 5) / 96 * 2.54
        col += 1
    return last_row, col - 1


def print_area(ws: Worksheet) -> str:
    """The range that holds every value of ``ws`` and its charts, e.g. 'A1:L24'."""
    from openpyxl.utils import get_column_letter

    last_row, last_col = max(ws.max_row, 1), max(ws.max_column, 1)
    for chart in getattr(ws, "_charts", ()):
        r, c = _chart_extent(ws, chart)
        last_row, last_col = max(last_row, r), max(last_col, c)
    return f"A1:{get_column_letter(last_col)}{last_row}"


#: The paper the workbook is set up for (openpyxl's ``PAPERSIZE_LETTER``, 1; A4 is 9). Every sheet is
#: laid out for the narrower page of A4 and Letter in landscape (Letter: 11 in wide; A4: 8.27 in
#: tall), so it prints on either at the same scale (:func:`print_scale`).
PAPER_SIZE = 1
#: Landscape page size in inches, (width, height), of the two papers a workbook must print on.
PAPERS_IN = {"Letter": (11.0, 8.5), "A4": (297 / 25.4, 210 / 25.4)}
#: Page margins in inches: left and right, top, bottom, and the header's and footer's distance.
MARGINS_IN = {"left": 0.4, "right": 0.4, "top": 0.55, "bottom": 0.6, "header": 0.25, "footer": 0.3}
#: The smallest print scale (percent) a sheet may print at: 11 pt text at 70 % is 7.7 pt.
MIN_PRINT_SCALE = 70
#: Pixels of a column ``w`` characters wide: 7 px a character (Calibri 11's digit) and 5 px of
#: padding (the rule openpyxl's and Excel's column width uses; ECMA-376 Part 1, 18.3.1.13 ``width``).
PX_PER_CHAR, PX_PADDING, PX_PER_INCH = 7, 5, 96


def printable_width_px() -> float:
    """The printable width of the narrower landscape page (Letter, 11 in) less the side margins,
    in pixels at 96 a inch: (11 - 0.4 - 0.4) x 96 = 979.2."""
    width = min(w for w, _ in PAPERS_IN.values())
    return (width - MARGINS_IN["left"] - MARGINS_IN["right"]) * PX_PER_INCH


def columns_px(ws: Worksheet, first_col: int, last_col: int) -> float:
    """The width in pixels of columns ``first_col``..``last_col`` (8.43 characters where unset)."""
    from openpyxl.utils import get_column_letter

    return sum((ws.column_dimensions[get_column_letter(c)].width or 8.43) * PX_PER_CHAR + PX_PADDING
               for c in range(first_col, last_col + 1))


def _area_columns(ws: Worksheet) -> tuple[int, int]:
    """(first, last) column of the sheet's print area."""
    from openpyxl.utils import range_boundaries

    area = ws.print_area
    area = area[0] if isinstance(area, (list, tuple)) else area
    c1, _, c2, _ = range_boundaries(str(area).split("!")[-1].replace("$", ""))
    return c1, c2


def fit_width_scale(ws: Worksheet) -> int:
    """The scale (percent, at most 100) at which the print area's columns fit the printable width
    (:func:`printable_width_px`): what 'fit to 1 page wide' prints at, rounded down."""
    c1, c2 = _area_columns(ws)
    return min(100, math.floor(100 * printable_width_px() / columns_px(ws, c1, c2)))


def print_scale(ws: Worksheet) -> int:
    """The scale (percent) the sheet prints at on A4 and Letter: the implied scale of its fit to
    one page wide (:func:`fit_width_scale`), or its explicit ``page_setup.scale``."""
    if ws.sheet_properties.pageSetUpPr is not None and ws.sheet_properties.pageSetUpPr.fitToPage:
        return fit_width_scale(ws)
    return int(ws.page_setup.scale or 100)


def _print_setup(ws: Worksheet, computed: Mapping[str, float] | None = None) -> None:
    """Landscape on Letter (laid out for A4 too), margins, header rows repeated, text right of a
    figure indented (:func:`planner.report.cells.indent_after_numbers`), a print area over
    the sheet's content and charts (:func:`print_area`), and the scale: fit to one page wide where
    that prints at :data:`MIN_PRINT_SCALE` or more, else that scale exactly, the pages read across
    then down, with the columns the sheet repeats (``print_title_cols``, set by its module) on each.
    Every number is shown whole and every text inside its cells and page (issue 31:
    :mod:`planner.report.printfit`); ``computed``: the values of the sheet's formulas that size a column (the
    totals: :func:`planner.report.printfit.widen_for_numbers`).
    """
    from openpyxl.utils import column_index_from_string

    widen_for_numbers(ws, computed)
    ws.print_area = print_area(ws)
    indent_after_numbers(ws)
    setup = ws.page_setup
    setup.orientation = "landscape"
    setup.paperSize = PAPER_SIZE
    last_col = _area_columns(ws)[1]
    if fit_width_scale(ws) >= MIN_PRINT_SCALE:
        setup.fitToWidth = 1
        setup.fitToHeight = 0
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        wrap_cut_text(ws, last_col)
    else:
        ws.sheet_properties.pageSetUpPr.fitToPage = False
        setup.scale = MIN_PRINT_SCALE
        setup.pageOrder = "overThenDown"
        if not ws.print_title_cols:
            ws.print_title_cols = "A:A"
        # nothing merged across a page's edge, no text spilling over it; the columns every page repeats
        repeated = column_index_from_string(str(ws.print_title_cols).split(":")[-1].replace("$", ""))
        page_px = printable_width_px() * 100 / MIN_PRINT_SCALE
        fit_merges_to_page(ws, page_px, last_col, repeated=repeated)
        wrap_cut_text(ws, last_col, tuple(b for _, b in page_columns(ws, page_px, last_col, repeated=repeated)))
    ws.print_options.gridLines = False
    for side, inches in MARGINS_IN.items():
        setattr(ws.page_margins, side, inches)
    ws.oddFooter.center.text = "&A - page &P of &N"
    if ws.freeze_panes and not ws.print_title_rows:
        first_data_row = int(re.sub(r"[A-Z]+", "", ws.freeze_panes))
        if first_data_row > 1:
            ws.print_title_rows = f"1:{first_data_row - 1}"
