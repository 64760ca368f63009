"""The printed workbooks are clean (issue 31, item 3), as LibreOffice prints them to PDF.

For each workbook (``planner plan`` and ``planner compare`` of a scenario), recalculated and printed
by LibreOffice and read back with pdftotext (poppler-utils):

- no ``###`` (a number wider than its column);
- no word outside the page's margins (pdftotext ``-bbox``: every word's box within the page's width
  less the workbook's left and right margins, ``planner.report.workbook.MARGINS_IN``, 1.5 pt of
  slack for rounding);
- every text cell of every sheet printed whole: its text, whitespace removed, is in the PDF's text
  (``-raw``: the content stream's order, a cell's lines together), whitespace removed. A text cut by
  the next cell or the page's edge is not drawn past the cut, so an id or sentence cut fails here
  (checked against the workbooks of the commit before issue 31's changes: 10 and 21 cells cut in
  two of them);
- the Quote's grand total on the Quote's first printed page;
- with no feasible alternative, the Alternatives sheet on one page;
- the Assumptions sheet's copy of the scenario monospaced (Courier New), each line's leading spaces
  kept in its cell, and printed indented: a line indented deeper than the line before it starts to
  the right of it in ``pdftotext -layout``.

Printed length (:func:`page_problems`): the Quote on no more pages than its lines need, ceil(lines /
lines a page), counting each item at the lines its description takes in its column or
:data:`ITEM_LINES`, whichever is more; the Cloud vs Local sheet on no more pages than its columns
across (``planner.report.printfit.page_columns``) times its rows' lines down, each table row at most
:data:`TABLE_ROW_LINES` lines high (long texts are notes, not wrapped cells).

The default suite prints three representative workbooks (a cluster's plan and compare, where wide
figures printed ``###``; a plan with no alternative); every shipped scenario's plan and compare
workbooks run under the ``slow`` marker (CI's second step).
"""

from __future__ import annotations

import collections
import html
import math
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

openpyxl = pytest.importorskip("openpyxl")
from click.testing import CliRunner  # noqa: E402

from planner.cli.main import main  # noqa: E402
from planner.report.sheets.alternatives import NO_ALTERNATIVE  # noqa: E402
from planner.report.printfit import page_columns  # noqa: E402
from planner.report.sheets.quote import QUOTE_BLANK_ROWS, QUOTE_HEADER_ROW  # noqa: E402
from planner.report.workbook import MARGINS_IN, PAPERS_IN, fit_width_scale, printable_width_px  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
REQUIRED = os.environ.get("PLANNER_REQUIRE_SOFFICE") == "1"
_FOOTER = re.compile(r"(\S[^\n]*?) - page \d+ of \d+")
_WORD = re.compile(r'xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<')
SLACK_PT = 1.5
#: Lines a Quote item may take beside its description: the price status's longest usual text,
#: 'part of the platform line above, whose price includes it', wraps to 3 lines in its 20 characters.
ITEM_LINES = 3
#: Lines a row of the Cloud vs Local sheet's workload and instance tables may take (an id wrapped once).
TABLE_ROW_LINES = 2
LINE_PT = 15.0


def _tools() -> None:
    if SOFFICE is None:
        if REQUIRED:
            pytest.fail("PLANNER_REQUIRE_SOFFICE=1 but soffice is not on PATH: apt-get install libreoffice-calc")
        pytest.skip("LibreOffice (soffice) is not installed")
    if shutil.which("pdftotext") is None:
        if REQUIRED:
            pytest.fail("PLANNER_REQUIRE_SOFFICE=1 but pdftotext is not on PATH: apt-get install poppler-utils")
        pytest.skip("pdftotext (poppler-utils) is not installed")


def _books(out: Path, runs: list[list[str]]) -> list[Path]:
    for args in runs:
        result = CliRunner().invoke(main, args)
        # exit 1: nothing fits the scenario (no workbook is written)
        assert result.exit_code in (0, 1), result.output
    return sorted(out.rglob("*.xlsx"))


def _print(books: list[Path], out: Path) -> dict[Path, Path]:
    """Every workbook converted to PDF by LibreOffice in one call (a private profile); book -> PDF."""
    env = dict(os.environ, HOME=str(out), SAL_USE_VCLPLUGIN="svp")
    pdf_dir = out / "pdf"
    cmd = [SOFFICE, f"-env:UserInstallation={(out / 'lo-profile').as_uri()}", "--headless", "--norestore",
           "--convert-to", "pdf", "--outdir", str(pdf_dir), *[str(p) for p in books]]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    pdfs = {}
    for book in books:
        pdf = pdf_dir / f"{book.stem}.pdf"
        assert pdf.exists(), f"soffice wrote no {pdf.name}: {proc.stdout}\n{proc.stderr}"
        pdfs[book] = pdf
    return pdfs


def _text(pdf: Path, *mode: str) -> str:
    return subprocess.run(["pdftotext", *mode, str(pdf), "-"], capture_output=True, text=True, check=True).stdout


def _squash(text: str) -> str:
    """Text without whitespace or soft hyphens: a wrapped cell may break a line anywhere."""
    return re.sub(r"\s+", "", text).replace("\u00ad", "")


def _sheet_pages(layout: str) -> list[tuple[str, str]]:
    """(sheet, the page's text) per page: the footer '<sheet> - page n of m' names the sheet."""
    out = []
    for page in layout.split("\f"):
        found = _FOOTER.findall(page)
        if found:
            # the sheet's name: after a run of spaces where a cell's text shares the footer's line
            out.append((re.split(r"\s{2,}", found[-1].strip())[-1], page))
    return out


def print_problems(book: Path, pdf: Path) -> list[str]:
    """What prints wrong in ``pdf``, the print of ``book``: one line per problem (see the module)."""
    name = book.stem
    problems = []
    layout, raw, boxes = _text(pdf, "-layout"), _squash(_text(pdf, "-raw")), _text(pdf, "-bbox")
    if "###" in layout:
        problems.append(f"{name}: '###' printed (a number wider than its column)")
    left, right = MARGINS_IN["left"] * 72, MARGINS_IN["right"] * 72
    for n, page in enumerate(boxes.split("<page ")[1:], start=1):
        width = float(re.search(r'width="([\d.]+)"', page).group(1))
        for x0, x1, word in _WORD.findall(page):
            if float(x0) < left - SLACK_PT or float(x1) > width - right + SLACK_PT:
                problems.append(f"{name}: page {n}: {html.unescape(word)!r} past the margin")
                break
    wb = openpyxl.load_workbook(book)
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.data_type == "s" and cell.value.strip():
                    if _squash(cell.value) not in raw:
                        problems.append(f"{name}: {ws.title}!{cell.coordinate} not printed whole: {cell.value[:60]!r}")
    pages = _sheet_pages(layout)
    quote = [p for s, p in pages if s == "Quote"]
    if not quote or "Grand total" not in quote[0]:
        problems.append(f"{name}: the Quote's grand total is not on its first page")
    if wb["Alternatives"]["A2"].value == NO_ALTERNATIVE and sum(s == "Alternatives" for s, _ in pages) > 1:
        problems.append(f"{name}: no feasible alternative, yet the Alternatives sheet takes "
                        f"{sum(s == 'Alternatives' for s, _ in pages)} pages")
    problems += _scenario_copy_problems(name, wb["Assumptions"], layout)
    return problems


def _scenario_copy_problems(name: str, ws, layout: str) -> list[str]:
    start = next((c.row for c in ws["A"] if isinstance(c.value, str) and c.value.startswith("Scenario as given")), None)
    if start is None:
        return [f"{name}: no 'Scenario as given' on the Assumptions sheet"]
    cells = [ws.cell(row=r, column=1) for r in range(start + 1, ws.max_row + 1)]
    lines = [c for c in cells if isinstance(c.value, str) and c.value.strip()]
    out = [f"{name}: Assumptions!{c.coordinate} not monospaced" for c in lines if c.font.name != "Courier New"]
    printed = [ln for ln in layout.split("\n") if ln.strip()]
    for a, b in zip(lines, lines[1:]):
        ia, ib = len(a.value) - len(a.value.lstrip(" ")), len(b.value) - len(b.value.lstrip(" "))
        if ib <= ia or b.row != a.row + 1:
            continue
        # the first such pair printed on consecutive lines: b starts to the right of a
        for i, ln in enumerate(printed[:-1]):
            if ln.strip() == a.value.strip() and printed[i + 1].strip() == b.value.strip():
                pa = len(ln) - len(ln.lstrip())
                pb = len(printed[i + 1]) - len(printed[i + 1].lstrip())
                if pb <= pa:
                    out.append(f"{name}: the scenario's line {b.value.strip()!r} prints without its indentation")
                return out
    return out


def _lines_a_page(scale: float) -> int:
    """Lines of 15 pt a landscape page holds at ``scale`` percent: the shorter paper's height (A4)
    less the top and bottom margins and a footer line."""
    body_pt = (min(h for _, h in PAPERS_IN.values()) - MARGINS_IN["top"] - MARGINS_IN["bottom"]) * 72 - LINE_PT
    return int(body_pt * 100 / scale // LINE_PT)


def _pages_for(lines: int, per_page: int, repeated: int) -> int:
    """Pages ``lines`` take at ``per_page`` lines a page, ``repeated`` of them repeated on each page after the first."""
    pages = 1
    while lines + (pages - 1) * repeated > pages * per_page:
        pages += 1
    return pages


def _rows(ws, first: int, last: int) -> int:
    """Lines rows ``first``..``last`` take at their heights (15 pt where unset)."""
    return sum(math.ceil((ws.row_dimensions[r].height or LINE_PT) / LINE_PT - 0.01) for r in range(first, last + 1))


def quote_page_bound(ws) -> int:
    """The pages the Quote's content needs (see the module)."""
    from openpyxl.utils import get_column_letter

    items = 0
    r = QUOTE_HEADER_ROW + 1
    while isinstance(ws.cell(row=r, column=1).value, int):
        description = str(ws.cell(row=r, column=2).value or "")
        per_line = int(ws.column_dimensions[get_column_letter(2)].width or 8.43) - 1
        items += max(ITEM_LINES, len(textwrap.wrap(description, per_line)))
        r += 1
    lines = _rows(ws, 1, QUOTE_HEADER_ROW) + items + QUOTE_BLANK_ROWS + 1 + 6  # a blank row, six total rows
    return _pages_for(lines, _lines_a_page(fit_width_scale(ws)), _rows(ws, QUOTE_HEADER_ROW, QUOTE_HEADER_ROW))


def cloud_page_bound(ws) -> tuple[int, list[str]]:
    """The pages the Cloud vs Local sheet's grid needs, and its table rows taller than
    :data:`TABLE_ROW_LINES` lines."""
    tall = []
    for cell in ws["A"]:
        if cell.value == "Workload":  # a table's header: its rows follow while column A is filled
            r = cell.row + 1
            while ws.cell(row=r, column=1).value is not None:
                if (ws.row_dimensions[r].height or LINE_PT) > TABLE_ROW_LINES * LINE_PT:
                    tall.append(f"row {r} is {ws.row_dimensions[r].height} pt high")
                r += 1
    last_row = int(re.sub(r"[^0-9]", "", str(ws.print_area).split(":")[-1]))
    scale = ws.page_setup.scale or fit_width_scale(ws)
    # columns at Calibri's digit (7 px), as the workbook sizes them
    across = len(page_columns(ws, printable_width_px() * 100 / scale, ws.max_column, digit_px=7, repeated=1))
    down = _pages_for(_rows(ws, 1, last_row), _lines_a_page(scale), 1)
    return across * down, tall


def page_problems(book: Path, pdf: Path) -> list[str]:
    """Sheets printed on more pages than their content needs (see the module)."""
    pages = collections.Counter(s for s, _ in _sheet_pages(_text(pdf, "-layout")))
    wb = openpyxl.load_workbook(book)
    problems = []
    bound = quote_page_bound(wb["Quote"])
    if pages["Quote"] > bound:
        problems.append(f"{book.stem}: the Quote takes {pages['Quote']} pages, its lines need {bound}")
    if "Cloud vs Local" in wb.sheetnames:
        bound, tall = cloud_page_bound(wb["Cloud vs Local"])
        problems += [f"{book.stem}: Cloud vs Local: a table's {t}" for t in tall]
        if pages["Cloud vs Local"] > bound:
            problems.append(f"{book.stem}: Cloud vs Local takes {pages['Cloud vs Local']} pages, its grid needs {bound}")
    return problems


# ----- the default suite: three representative workbooks ------------------------------------------------


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.libreoffice
def test_representative_workbooks_print_clean(tmp_path):
    _tools()
    cluster = str(ROOT / "scenarios" / "ft-70b-cluster.yaml")
    chat = str(ROOT / "scenarios" / "chat-50-users-slo.yaml")
    books = _books(tmp_path, [
        ["plan", cluster, "--out", str(tmp_path / "a"), "--format", "xlsx"],
        ["compare", cluster, "--out", str(tmp_path / "a")],
        ["plan", chat, "--top", "0", "--out", str(tmp_path / "b"), "--format", "xlsx"],
    ])
    assert len(books) == 3, books
    problems = [p for book, pdf in _print(books, tmp_path).items()
                for p in print_problems(book, pdf) + page_problems(book, pdf)]
    assert problems == []
    no_alternative = openpyxl.load_workbook(tmp_path / "b" / "chat-50-users-slo.xlsx")["Alternatives"]
    assert no_alternative["A2"].value == NO_ALTERNATIVE  # the compact case was printed


# ----- every shipped scenario (slow) -----------------------------------------------------------------------


@pytest.mark.libreoffice
@pytest.mark.slow  # 13 scenarios, plan and compare: about a minute on 2 cores
@pytest.mark.longest
def test_every_shipped_scenario_prints_clean(tmp_path):
    _tools()
    runs = []
    for scenario in SCENARIOS:
        runs.append(["plan", str(scenario), "--out", str(tmp_path / "books"), "--format", "xlsx"])
        runs.append(["compare", str(scenario), "--out", str(tmp_path / "books")])
    books = _books(tmp_path, runs)
    assert len(books) >= 2 * len(SCENARIOS) - 2, books  # all but a scenario nothing fits
    problems = [p for book, pdf in _print(books, tmp_path).items()
                for p in print_problems(book, pdf) + page_problems(book, pdf)]
    assert problems == []
