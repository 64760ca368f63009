"""The "Cloud vs Local" sheet: structure, and its formulas recalculated by LibreOffice.

The recalculated break-even (months and busy hours, on-demand and spot), TCO and cloud cost
must equal the planner's own figures (scipy brentq) to 1e-9 relative, at the inputs as written
and after a buyer edits an input cell. The LibreOffice tests skip when soffice is not on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

openpyxl = pytest.importorskip("openpyxl")

from planner.compare import LocalRun, compare_machine  # noqa: E402
from planner.memory import estimate  # noqa: E402
from planner.tco import CostInputs  # noqa: E402
from planner.xlsx_cloud import NAMES, SHEET, add_cloud_sheet  # noqa: E402
from test_compare import SEED, run_compare, tiny, shipped  # noqa: E402,F401 - fixtures

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


def comparison(tiny, **costs):
    cat, w, machine = tiny
    return compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(**costs))


def workbook_for(comp):
    from openpyxl import Workbook
    from openpyxl.workbook.properties import CalcProperties

    wb = Workbook()
    wb.remove(wb.active)
    wb.calculation = CalcProperties(fullCalcOnLoad=True)
    cells = add_cloud_sheet(wb, comp)
    return wb, cells


def cell_of(wb, name):
    sheet, coord = next(iter(wb.defined_names[name].destinations))
    return wb[sheet][coord.replace("$", "")]


def recalc(src: Path, tmp_path: Path) -> Path:
    """LibreOffice Calc, headless, private profile: load (computing every formula) and save as .xlsx."""
    out = tmp_path / f"recalc-{src.stem}"
    out.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(tmp_path), SAL_USE_VCLPLUGIN="svp")
    cmd = [SOFFICE, f"-env:UserInstallation={(tmp_path / 'lo-profile').as_uri()}", "--headless", "--norestore",
           "--calc", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL)
    result = out / src.name
    assert proc.returncode == 0 and result.exists(), f"soffice failed: {proc.stdout}\n{proc.stderr}"
    return result


def computed(original: Path, recalculated: Path) -> dict[str, object]:
    src = openpyxl.load_workbook(original)
    got = openpyxl.load_workbook(recalculated, data_only=True)
    out = {}
    for key, name in NAMES.items():
        if name in src.defined_names:
            out[key] = got[SHEET][cell_of(src, name).coordinate].value
    return out


# ----- structure -----------------------------------------------------------------------------------

def test_sheet_inputs_formulas_names_and_chart(tiny):
    comp = comparison(tiny, utilization=0.5)
    wb, cells = workbook_for(comp)
    ws = wb[SHEET]
    for key in ("utilization", "usd_per_kwh", "pue", "years", "discount", "residual", "support", "capex"):
        cell = ws[cells[key]]
        assert cell.data_type == "n" and cell.fill.fgColor.rgb.endswith("FFF2CC"), key
    assert ws[cells["utilization"]].value == pytest.approx(0.5)
    for key in ("hours_per_month", "energy", "net_capex", "cloud_per_hour", "be_months", "be_hours", "tco",
                "spot_be_months"):
        assert str(ws[cells[key]].value).startswith("="), key
    assert ws[cells["be_months_any"]].value.startswith(f"=IF({cells['cloud_pm']}>{cells['local_pm']}")
    for name in ("CloudBreakEvenMonths", "CloudBreakEvenHours", "CloudUtilization", "CloudLocalTco"):
        assert name in wb.defined_names
    charts = ws._charts
    assert len(charts) == 1
    titles = [s.tx.strRef.f if s.tx.strRef is not None else s.tx.v for s in charts[0].series]
    assert titles[:3] == ["Local (USD)", "Cloud on-demand (USD)", "Cloud spot (USD)"]
    assert titles[3:] == ["Break-even (on-demand)", "Break-even (spot)"]


def test_user_text_is_never_a_formula(tiny):
    from dataclasses import replace

    comp = comparison(tiny, utilization=0.5)
    wc = replace(comp.workloads[0], name="=HYPERLINK(\"http://x\")")
    comp = replace(comp, workloads=(wc,))
    wb, _ = workbook_for(comp)
    ws = wb[SHEET]
    found = [c for row in ws.iter_rows() for c in row if c.value == wc.name]
    assert found and all(c.data_type == "s" for c in found)


# ----- LibreOffice ----------------------------------------------------------------------------------

@pytest.mark.libreoffice
@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_libreoffice_break_even_equals_planner(tiny, tmp_path):
    comp = comparison(tiny, utilization=0.5, support_usd_per_year=120.0)
    wb, cells = workbook_for(comp)
    src = tmp_path / "cloud.xlsx"
    wb.save(src)
    got = computed(src, recalc(src, tmp_path))
    # with $120/yr support: M* = (5,000 x 0.8) / (365 x (1.00 - 0.065) - 120 / 12) = 4,000 / 331.275 = 12.07
    assert comp.break_even_months.value == pytest.approx(4_000 / 331.275, rel=1e-9)
    assert got["be_months"] == pytest.approx(comp.break_even_months.value, rel=1e-9)
    assert got["be_hours"] == pytest.approx(comp.break_even_hours.value, rel=1e-9)
    assert got["spot_be_months"] == pytest.approx(comp.spot_break_even_months.value, rel=1e-9)
    assert got["spot_be_hours"] == pytest.approx(comp.spot_break_even_hours.value, rel=1e-9)
    assert got["tco"] == pytest.approx(comp.tco_usd, rel=1e-9)
    assert got["cloud_per_hour"] == pytest.approx(comp.cloud_usd_per_local_hour, rel=1e-12)
    assert got["energy"] == pytest.approx(comp.energy_usd_per_hour, rel=1e-12)


@pytest.mark.libreoffice
@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_libreoffice_follows_an_edited_input(tiny, tmp_path):
    # Write at 50 % utilization, then the buyer types 10 % into the utilization cell: the sheet must
    # then agree with the planner run at 10 % (cloud cheaper throughout the 3 years).
    wb, cells = workbook_for(comparison(tiny, utilization=0.5))
    wb[SHEET][cells["utilization"]].value = 0.1
    src = tmp_path / "edited.xlsx"
    wb.save(src)
    got = computed(src, recalc(src, tmp_path))
    low = comparison(tiny, utilization=0.1)
    assert low.break_even_months.value is None
    assert got["be_months"] == "none: cloud cheaper throughout"
    # the closed form still gives where the lines would cross: 4,000 / (73 x 0.935) = 58.6 months
    assert got["be_months_any"] == pytest.approx(4_000 / (73 * 0.935), rel=1e-9)
    assert got["be_hours"] == pytest.approx(low.break_even_hours.value, rel=1e-9)
    assert got["tco"] == pytest.approx(low.tco_usd, rel=1e-9)


@pytest.mark.libreoffice
@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_libreoffice_seed_workbook_equals_cli(tmp_path):
    result = run_compare(str(SEED), "--json", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    src = tmp_path / "compare-qlora-7b-12gb-compare.xlsx"
    wb = openpyxl.load_workbook(src)
    assert SHEET in wb.sheetnames and "Quote" in wb.sheetnames
    got = computed(src, recalc(src, tmp_path))
    on_demand = doc["break_even"]["on_demand"]
    assert got["be_months"] == pytest.approx(on_demand["months"]["value"], rel=1e-9)
    assert got["be_hours"] == pytest.approx(on_demand["hours"]["value"], rel=1e-9)
    assert got["tco"] == pytest.approx(doc["local"]["tco_usd"], rel=1e-9)
    spot = doc["break_even"]["spot"]
    if spot["months"]["value"] is None:
        assert got["spot_be_months"] == "none: cloud cheaper throughout"
    else:
        assert got["spot_be_months"] == pytest.approx(spot["months"]["value"], rel=1e-9)
