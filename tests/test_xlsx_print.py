"""The shipped scenarios' workbooks print: issue 19, item 4.

Every sheet of every workbook the shipped scenarios give (``planner plan SCEN --out DIR``, and
``planner compare`` for the scenarios with ``costs:``, which adds the "Cloud vs Local" sheet) is
set up for paper (Letter, landscape) and prints at 70 % or more on A4 and on Letter; no cell holds
an error value; and, recalculated and printed to PDF by LibreOffice (marked ``libreoffice``), the
PDF holds every warning of the plan in full and no error value.

The scale is derived here from the column widths, not read from the planner: a sheet fitted to
one page wide prints at (printable width) / (width of its print area's columns), where a column of
width w characters is 7 w + 5 px (Calibri 11's 7 px digit and 5 px of padding: the rule of
ECMA-376 Part 1, 18.3.1.13) and the printable width is the narrower page, Letter's 11 in, less the
margins, at 96 px an inch; a sheet with an explicit scale prints at that scale.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

openpyxl = pytest.importorskip("openpyxl")
from click.testing import CliRunner  # noqa: E402
from openpyxl.utils import get_column_letter, range_boundaries  # noqa: E402

from planner.cli.main import main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
REQUIRED = os.environ.get("PLANNER_REQUIRE_SOFFICE") == "1"
ERRORS = ("#N/A", "#DIV/0", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#NULL!", "Err:")
#: Landscape page widths in inches: Letter 11, A4 297 mm.
PAGE_WIDTHS_IN = {"Letter": 11.0, "A4": 297 / 25.4}


def _run(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    # exit 1: nothing fits the scenario (no workbook is written; the scenario is left out)
    assert result.exit_code in (0, 1), result.output


@pytest.fixture(scope="module")
def workbooks(tmp_path_factory) -> dict[str, Path]:
    """Each shipped scenario's workbook (plan), and the compare workbook of those with ``costs:``."""
    out = tmp_path_factory.mktemp("print")
    for scenario in SCENARIOS:
        _run(["plan", str(scenario), "--out", str(out), "--format", "xlsx"])
        if "\ncosts:" in scenario.read_text():
            _run(["compare", str(scenario), "--out", str(out)])
    books = {p.stem: p for p in sorted(out.glob("*.xlsx"))}
    assert len(books) >= len(SCENARIOS) - 2, sorted(books)  # all but a scenario nothing fits
    assert any(p.stem.endswith("-compare") for p in books.values())
    return books


def _area(ws) -> tuple[int, int, int, int]:
    area = ws.print_area
    area = area[0] if isinstance(area, (list, tuple)) else area
    return range_boundaries(area.split("!")[-1].replace("$", ""))


def _scale(ws, page_in: float) -> float:
    """The percentage ``ws`` prints at on a landscape page ``page_in`` inches wide."""
    if not ws.sheet_properties.pageSetUpPr.fitToPage:
        return float(ws.page_setup.scale)
    assert ws.page_setup.fitToWidth == 1 and ws.page_setup.fitToHeight == 0
    c1, _, c2, _ = _area(ws)
    columns_px = sum((ws.column_dimensions[get_column_letter(c)].width or 8.43) * 7 + 5 for c in range(c1, c2 + 1))
    printable_px = (page_in - ws.page_margins.left - ws.page_margins.right) * 96
    return min(100.0, math.floor(100 * printable_px / columns_px))


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_every_sheet_prints_at_70_percent_or_more_on_a4_and_letter(workbooks):
    for name, path in workbooks.items():
        wb = openpyxl.load_workbook(path)
        for ws in wb.worksheets:
            where = f"{name}: {ws.title}"
            assert ws.page_setup.orientation == "landscape", where
            assert ws.page_setup.paperSize == int(ws.PAPERSIZE_LETTER), where
            assert ws.print_title_rows, where  # a header row repeated on every page
            for paper, width in PAGE_WIDTHS_IN.items():
                assert _scale(ws, width) >= 70, f"{where} prints at {_scale(ws, width)} % on {paper}"
            if not ws.sheet_properties.pageSetUpPr.fitToPage:
                # pages across: no column wider than a page at that scale, the labels repeated
                scale = ws.page_setup.scale / 100
                printable = (min(PAGE_WIDTHS_IN.values()) - ws.page_margins.left - ws.page_margins.right) * 96
                c1, _, c2, _ = _area(ws)
                for c in range(c1, c2 + 1):
                    assert ((ws.column_dimensions[get_column_letter(c)].width or 8.43) * 7 + 5) * scale < printable
                assert ws.print_title_cols, where


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_no_cell_holds_an_error_value(workbooks):
    for name, path in workbooks.items():
        wb = openpyxl.load_workbook(path)
        for ws in wb.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    v = cell.value
                    if isinstance(v, str):
                        assert not v.startswith(ERRORS), f"{name}: {ws.title}!{cell.coordinate}: {v}"
                        if cell.data_type == "f":
                            assert "NA()" not in v or "<=12*" in v, (
                                f"{name}: {ws.title}!{cell.coordinate}: {v}")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_memory_chart_is_on_the_first_page_with_distinct_colours_and_the_capacity(workbooks):
    for name, path in workbooks.items():
        ws = openpyxl.load_workbook(path)["Memory"]
        (chart,) = ws._charts
        # the chart ends within the first printed page: the rows above it and its height (cm -> pt)
        # fit the page's printable height (A4's 8.27 in, the lower of A4 and Letter, less the
        # margins) at the sheet's scale
        anchor = chart.anchor._from.row + 1
        above_pt = sum(ws.row_dimensions[r].height or 15 for r in range(1, anchor))
        page_pt = (210 / 25.4 - ws.page_margins.top - ws.page_margins.bottom) * 72 / (_scale(ws, 11.0) / 100)
        height_cm = chart.anchor.ext.height / 360_000  # EMU (ECMA-376: 360,000 a cm)
        assert height_cm >= 7.5 and above_pt + height_cm / 2.54 * 72 <= page_pt, name
        head = int(str(ws.print_title_rows).split(":")[0].replace("$", ""))
        breaks = [b.id for b in ws.row_breaks.brk]
        assert head - 1 in breaks and min(breaks) >= chart.anchor._from.row + 1, name
        bars = chart.series
        fills = [s.graphicalProperties.solidFill for s in bars]
        colours = [getattr(f.srgbClr, "val", f.srgbClr) for f in fills]
        assert all(colours) and len(set(colours)) == len(colours), (name, colours)
        lines = [c for c in chart._charts if type(c).__name__ == "LineChart"]
        assert len(lines) == 1 and lines[0].series[0].tx.strRef.f.replace("$", "").endswith(f"B{_capacity_row(ws)}"), name


def _capacity_row(ws) -> int:
    return next(c.row for c in ws["B"] if c.value == "GPU capacity after reserve (GiB)")


# ----- printed by LibreOffice -----------------------------------------------------------------------


def _normal(text: str) -> str:
    """Text as a PDF gives it back, comparable: hyphens at line ends joined, whitespace one space."""
    text = re.sub(r"-\s*\n\s*", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def _squash(text: str) -> str:
    """Text without any whitespace (a line may break anywhere inside a long word or an id)."""
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def pdfs(workbooks, tmp_path_factory) -> dict[str, str]:
    """Every workbook converted to PDF in one soffice call; name -> the PDF's text (pdftotext)."""
    if SOFFICE is None:
        if REQUIRED:
            pytest.fail("PLANNER_REQUIRE_SOFFICE=1 but soffice is not on PATH: apt-get install libreoffice-calc")
        pytest.skip("LibreOffice (soffice) is not installed")
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    out = tmp_path_factory.mktemp("pdf")
    env = dict(os.environ, HOME=str(out), SAL_USE_VCLPLUGIN="svp")
    cmd = [SOFFICE, f"-env:UserInstallation={(out / 'lo-profile').as_uri()}", "--headless", "--norestore",
           "--convert-to", "pdf", "--outdir", str(out), *[str(p) for p in workbooks.values()]]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    texts = {}
    for name in workbooks:
        pdf = out / f"{name}.pdf"
        assert pdf.exists(), f"soffice wrote no {pdf.name}: {proc.stdout}\n{proc.stderr}"
        texts[name] = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                                     check=True).stdout
    return texts


def _warnings(path: Path) -> list[str]:
    """The plan's warnings as the workbook states them: the Summary's plan warnings and per-workload
    warnings, and the Cloud vs Local sheet's 'Warning: ...' lines."""
    wb = openpyxl.load_workbook(path)
    ws = wb["Summary"]
    out = []
    plan_row = next((c.row for c in ws["A"] if c.value == "Plan warnings"), None)
    if plan_row is not None:
        r = plan_row + 1
        while ws.cell(r, 1).value:
            out.append(ws.cell(r, 1).value)
            r += 1
    detail = next((c.row for c in ws["A"] if c.value == "Training stack or engine release, and warnings, per workload"), None)
    r = detail + 2
    while ws.cell(r, 1).value:
        out += [w for w in str(ws.cell(r, 6).value or "").split("\n") if w and w != "none"]
        r += 1
    if "Cloud vs Local" in wb.sheetnames:
        out += [c.value for c in wb["Cloud vs Local"]["A"] if isinstance(c.value, str) and c.value.startswith("Warning: ")]
    return out


@pytest.mark.libreoffice
@pytest.mark.slow  # one soffice call for all workbooks: about 20 s on 2 cores
def test_the_printed_workbooks_hold_every_warning_in_full_and_no_error(workbooks, pdfs):
    n = 0
    for name, path in workbooks.items():
        text = pdfs[name]
        for bad in ("#N/A", "#DIV/0", "Err:", "#VALUE!"):
            assert bad not in text, f"{name}.pdf shows {bad}"
        printed, squashed = _normal(text), _squash(text)
        for warning in _warnings(path):
            n += 1
            assert _normal(warning) in printed or _squash(warning) in squashed, (
                f"{name}.pdf cuts the warning: {warning}")
    assert n > 0  # the shipped scenarios do warn
