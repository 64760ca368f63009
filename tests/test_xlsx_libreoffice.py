"""The workbook recalculated by a real spreadsheet program (LibreOffice Calc, headless).

openpyxl writes formulas without cached results; LibreOffice computes every formula when it
loads the file and stores the results when it converts the file back to .xlsx, where openpyxl
reads them (``data_only=True``). The grand total must equal the planner's own arithmetic
(:func:`planner.report.workbook_data.quote_totals`) to the cent, before and after a buyer edits an input cell.

These tests skip when ``soffice`` is not on PATH, unless PLANNER_REQUIRE_SOFFICE=1 (set by
.ci/run, which installs libreoffice-calc): then a missing soffice fails them, so a CI without
LibreOffice cannot pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

openpyxl = pytest.importorskip("openpyxl")

from planner.core.units import GiB  # noqa: E402
from planner.report.sheets.quote import (  # noqa: E402
    NAME_DISCOUNT_RATE,
    NAME_GRAND_TOTAL,
    NAME_SHIPPING,
    NAME_SUBTOTAL,
    NAME_TAX_RATE,
)
from planner.report.sheets.memory import component_header_row  # noqa: E402
from planner.report.workbook import write_workbook  # noqa: E402
from planner.report.workbook_data import QuoteSettings, quote_totals  # noqa: E402
from test_xlsx import find, make_data  # noqa: E402

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
REQUIRED = os.environ.get("PLANNER_REQUIRE_SOFFICE") == "1"

pytestmark = [
    pytest.mark.libreoffice,
    pytest.mark.skipif(SOFFICE is None and not REQUIRED, reason="LibreOffice (soffice) is not installed"),
]


def recalc(src: Path, tmp_path: Path) -> Path:
    """Open ``src`` in LibreOffice Calc headless and save it as .xlsx with computed results.

    A private profile directory (``-env:UserInstallation``) keeps the test away from any
    running LibreOffice and from the user's settings.
    """
    if SOFFICE is None:
        pytest.fail("PLANNER_REQUIRE_SOFFICE=1 but soffice is not on PATH: apt-get install libreoffice-calc")
    out = tmp_path / f"recalc-{src.stem}"
    out.mkdir(exist_ok=True)
    profile = tmp_path / "lo-profile"
    env = dict(os.environ, HOME=str(tmp_path), SAL_USE_VCLPLUGIN="svp")
    cmd = [SOFFICE, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore", "--calc",
           "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL)
    result = out / src.name
    assert proc.returncode == 0 and result.exists(), f"soffice failed: {proc.stdout}\n{proc.stderr}"
    return result


def cell_of(wb, name: str):
    """The cell a workbook-level defined name points to (Quote!$F$20 -> that cell)."""
    sheet, coord = next(iter(wb.defined_names[name].destinations))
    return wb[sheet][coord.replace("$", "")]


def values_at(original: Path, computed: Path) -> dict[str, float]:
    """The computed values of the quote's named cells, located in the original workbook."""
    names = (NAME_SUBTOTAL, NAME_DISCOUNT_RATE, NAME_TAX_RATE, NAME_SHIPPING, NAME_GRAND_TOTAL)
    src = openpyxl.load_workbook(original)
    got = openpyxl.load_workbook(computed, data_only=True)
    return {n: got["Quote"][cell_of(src, n).coordinate].value for n in names}


def cents(x: float) -> float:
    return round(x, 2)


@pytest.fixture
def written(tmp_path):
    data = make_data()
    path = tmp_path / "seed-lab.xlsx"
    write_workbook(data, path)
    return data, path


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_recalculated_grand_total_equals_the_planners(written, tmp_path):
    data, path = written
    expected = quote_totals(data.line_items, data.quote)
    computed = recalc(path, tmp_path)
    got = values_at(path, computed)
    assert cents(got[NAME_SUBTOTAL]) == cents(expected.subtotal_usd)
    assert cents(got[NAME_GRAND_TOTAL]) == cents(expected.grand_total_usd)
    assert cents(got[NAME_GRAND_TOTAL]) == cents(data.totals().grand_total_usd)

    wb = openpyxl.load_workbook(computed, data_only=True)
    quote = wb["Quote"]
    # each line total, the discount and the tax, to the cent
    header = find(quote, "#", col=1).row
    for i, item in enumerate(data.line_items, start=1):
        assert cents(quote.cell(row=header + i, column=6).value) == cents(item.unit_price_usd * item.quantity)
    disc = find(quote, "Discount (% of subtotal)", col=2).row
    tax = find(quote, "Tax (% of subtotal after discount)", col=2).row
    assert cents(quote.cell(row=disc, column=6).value) == cents(-expected.discount_usd)
    assert cents(quote.cell(row=tax, column=6).value) == cents(expected.tax_usd)
    assert quote["B5"].value == datetime(2025, 4, 13)  # valid until = date + 30 days

    summary = wb["Summary"]
    assert cents(summary["B5"].value) == cents(expected.grand_total_usd)
    header = find(summary, "Workload", col=1).row
    for i, s in enumerate(data.summary, start=1):
        r = header + i
        assert summary.cell(row=r, column=10).value == pytest.approx((s.capacity_bytes - s.gpu_need_bytes) / GiB)
        assert summary.cell(row=r, column=11).value == pytest.approx(
            (s.capacity_bytes - s.gpu_need_bytes) / s.capacity_bytes)

    memory = wb["Memory"]
    total = find(memory, "Peak per GPU (GiB)", col=2).row
    for j, est in enumerate(data.estimates):
        assert memory.cell(row=total, column=3 + j).value == pytest.approx(est.per_gpu_total_bytes / GiB)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_grand_total_follows_an_edited_quantity_and_rate(written, tmp_path):
    data, path = written
    wb = openpyxl.load_workbook(path)
    quote = wb["Quote"]
    header = find(quote, "#", col=1).row
    gpu_row = header + 1
    assert quote.cell(row=gpu_row, column=3).value == "gpu"
    quote.cell(row=gpu_row, column=5).value = 3  # the buyer orders a third GPU
    cell_of(wb, NAME_TAX_RATE).value = 0.07  # and a different tax rate
    edited = tmp_path / "edited.xlsx"
    wb.save(edited)

    items = (replace(data.line_items[0], quantity=3),) + data.line_items[1:]
    by_hand = quote_totals(items, replace(data.quote, tax_pct=7.0))
    sub = 6799.0 * 3 + 3210.55 + 289.99 * 4 + 312.49 * 3
    assert cents(by_hand.grand_total_usd) == cents(sub * 0.95 * 1.07 + 150)

    got = values_at(edited, recalc(edited, tmp_path))
    assert cents(got[NAME_SUBTOTAL]) == cents(sub)
    assert cents(got[NAME_GRAND_TOTAL]) == cents(by_hand.grand_total_usd)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("quantity", [0, 1, 7, 250])
def test_grand_total_to_the_cent_for_awkward_prices(tmp_path, quantity):
    """Prices with cents, a fractional tax rate and a discount: no rounding drift."""
    data = make_data()
    items = tuple(replace(i, unit_price_usd=p, quantity=q) for i, p, q in zip(
        data.line_items, (1999.99, 0.01, 333.33, 12.345), (quantity, 3, 7, 11)))
    data = replace(data, line_items=items,
                   quote=QuoteSettings("Q-2", data.quote.quote_date, discount_pct=12.5, tax_pct=7.375,
                                       shipping_usd=49.95))
    path = tmp_path / "awkward.xlsx"
    write_workbook(data, path)
    got = values_at(path, recalc(path, tmp_path))
    assert cents(got[NAME_GRAND_TOTAL]) == cents(data.totals().grand_total_usd)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("text", ["=1+1", "+1+2", "-2+3", "@SUM(A1:A3)", "=HYPERLINK(\"http://x.example\",\"x\")"])
def test_user_text_stays_text_after_libreoffice(tmp_path, text):
    data = make_data(text=text)
    path = tmp_path / "inject.xlsx"
    write_workbook(data, path)
    computed = recalc(path, tmp_path)
    formulas = openpyxl.load_workbook(computed)
    values = openpyxl.load_workbook(computed, data_only=True)
    memory_first = f"A{component_header_row(formulas['Memory']) + 1}"  # the breakdown's first row
    for sheet, coord in (("Summary", "B2"), ("Quote", "B2"), ("Memory", memory_first)):
        for wb in (formulas, values):
            cell = wb[sheet][coord]
            assert (cell.value, cell.data_type) == (text, "s"), (sheet, coord)
    # the totals still compute (no user text leaked into a formula)
    got = values_at(path, computed)
    assert cents(got[NAME_GRAND_TOTAL]) == cents(data.totals().grand_total_usd)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_report_total_equals_the_solvers_to_the_cent(tmp_path):
    """A real plan: LibreOffice's grand total is the solver's total_usd, before and after an edit."""
    from planner.catalog.loader import load_catalog
    from planner.solve.scenario import load_scenario
    from planner.solve.solver import plan
    from planner.report.from_plan import workbook_data_from_plan
    from test_xlsx import _EVIL_SCENARIO

    catalog = load_catalog(None)
    scenario_path = tmp_path / "scenario.yaml"
    scenario_path.write_text(_EVIL_SCENARIO)
    result = plan(load_scenario(scenario_path, catalog), catalog)
    data = workbook_data_from_plan(result, scenario_text=scenario_path.read_text())
    path = tmp_path / "plan.xlsx"
    write_workbook(data, path)

    got = values_at(path, recalc(path, tmp_path))
    assert cents(got[NAME_GRAND_TOTAL]) == cents(result.total_usd)

    wb = openpyxl.load_workbook(path)
    quote = wb["Quote"]
    header = find(quote, "#", col=1).row
    gpu = next(i for i, item in enumerate(result.line_items()) if item.category == "gpu")
    qty = quote.cell(row=header + 1 + gpu, column=5)
    qty.value = qty.value + 2
    edited = tmp_path / "plan-edited.xlsx"
    wb.save(edited)
    item = result.line_items()[gpu]
    got = values_at(edited, recalc(edited, tmp_path))
    assert cents(got[NAME_GRAND_TOTAL]) == cents(result.total_usd + 2 * item.unit_price_usd)
