"""A literal ``_xHHHH_`` in user text stays literal in the workbook (issue 28, hostile pass 5B item 1).

A cell's text is an ST_Xstring (ECMA-376 Part 1, 22.9.2.19): readers decode ``_xHHHH_`` into the
character U+HHHH, so a name made of allowed characters, ``b_x001b_c``, would show an ESC in
LibreOffice or Excel. planner writes the underscore of such a run as ``_x005F_`` (the standard's escape
of ``_``), which readers decode back to the text as typed."""

from __future__ import annotations

import os
import subprocess
import zipfile

import pytest

from planner.report.cells import clean_text, put_text
from tests.test_xlsx_cloud import SOFFICE

HOSTILE = "b_x001b_]0;PWN_x0007_ c_x0000_ e_xFFFF_ f_x12_ g_X0041_"


def test_a_literal_xstring_escape_gets_its_underscore_escaped():
    # every "_x" before hex digits and "_" becomes "_x005F_x" (LibreOffice reads "_x12_", two digits, as
    # U+0012 too); "_X0041_" (capital X, not the escape's form) is left as it is
    assert clean_text(HOSTILE) == ("b_x005F_x001b_]0;PWN_x005F_x0007_ c_x005F_x0000_ e_x005F_xFFFF_ "
                                   "f_x005F_x12_ g_X0041_")
    assert clean_text("plain_text x_1234") == "plain_text x_1234"


def _workbook(path):
    import openpyxl

    wb = openpyxl.Workbook()
    put_text(wb.active, 1, 1, HOSTILE)
    wb.save(path)
    return path


def test_the_cell_xml_holds_the_escaped_form(tmp_path):
    xml = zipfile.ZipFile(_workbook(tmp_path / "x.xlsx")).read("xl/worksheets/sheet1.xml").decode()
    assert "b_x005F_x001b_" in xml and "b_x001b_" not in xml


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.libreoffice
def test_libreoffice_shows_the_text_as_typed(tmp_path):
    if SOFFICE is None:
        pytest.skip("LibreOffice not installed")
    src = _workbook(tmp_path / "x.xlsx")
    env = dict(os.environ, HOME=str(tmp_path), SAL_USE_VCLPLUGIN="svp")
    cmd = [SOFFICE, f"-env:UserInstallation={(tmp_path / 'lo-profile').as_uri()}", "--headless", "--norestore",
           "--convert-to", "csv", "--outdir", str(tmp_path / "out"), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, stdin=subprocess.DEVNULL)
    out = tmp_path / "out" / "x.csv"
    assert proc.returncode == 0 and out.exists(), proc.stderr
    text = out.read_bytes().decode("utf-8")
    assert "\x1b" not in text and "\x07" not in text and "\x00" not in text and "\uffff" not in text
    assert HOSTILE in text
