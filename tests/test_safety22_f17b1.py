"""Hostile pass h17b, findings fixed on branch f17b1.

- 1: a name holding a literal ``_xHHHH_`` (``run_x2000_final``, a valid name) is escaped once in the workbook's title
  cells (Summary!A1, Quote!A1, plan and compare workbooks alike), as in every other cell; the document properties
  (docProps/core.xml title, subject) hold the text as it is, with no cell escape, since they are plain XML that no
  reader decodes (planner.report.cells.property_text). A Sources hyperlink's target is plain XML too.
- 5e: scenario names equal only in Unicode NFKC (``ﬁne``/``fine``, ``Ⅻ``/``XII``, ``ǅx``, ``a․b``) give one file name
  but are two report sets: the second is refused in the same ``--out`` (planner.core.names.same_spelling), and
  ``plan`` notes that the reports are named otherwise than the scenario, naming the characters NFKC changes.
- 5c: a name of only dots (``..``) gets a hint that names what a file name keeps (a letter, digit or ``_``), not
  ``'.'``, which is cut as well.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = "workloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"
NAME = "run_x2000_final"
# ECMA-376 Part 1, 22.9.2.19 ST_Xstring: the cell stores a literal '_x' before hex digits and '_' as '_x005F_x', so
# 'run_x2000_final' is stored 'run_x005F_x2000_final' (once), which a reader decodes back to 'run_x2000_final'
STORED = "run_x005F_x2000_final"


def _decode_once(text: str) -> str:
    """What a spreadsheet shows for a cell's stored text: each ``_xHHHH_`` decoded once (ST_Xstring)."""
    return re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), text)


def _plan_xlsx(tmp_path: Path) -> Path:
    s = tmp_path / "s.yaml"
    s.write_text(f"name: {NAME}\n{WORKLOADS}", encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "xlsx"])
    assert r.exit_code == 0, r.output
    return tmp_path / "o" / f"{NAME}.xlsx"


def _check_titles(book: Path, name: str, stored: str) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(book)  # openpyxl reads a cell's stored text without decoding it
    summary, quote = wb["Summary"]["A1"].value, wb["Quote"]["A1"].value
    assert summary == f"Hardware plan: {stored}", summary
    assert quote == f"Budgetary estimate for scenario {stored}", quote
    assert wb["Summary"]["B2"].value == stored  # the cell that was right before: the same escape as the titles
    assert _decode_once(summary) == f"Hardware plan: {name}"
    assert _decode_once(quote) == f"Budgetary estimate for scenario {name}"
    # the properties as typed: no reader decodes _xHHHH_ there
    assert wb.properties.title == f"Hardware plan: {name}"
    assert wb.properties.subject == f"Hardware plan for scenario {name}"
    core = zipfile.ZipFile(book).read("docProps/core.xml").decode("utf-8")
    assert "x005F" not in core and f"<dc:title>Hardware plan: {name}</dc:title>" in core, core


def test_plan_workbook_titles_escape_a_name_once_and_properties_not_at_all(tmp_path: Path) -> None:
    _check_titles(_plan_xlsx(tmp_path), NAME, STORED)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_compare_workbook_titles_escape_a_name_once(tmp_path: Path) -> None:
    text = (REPO / "scenarios" / "compare-qlora-7b-12gb.yaml").read_text(encoding="utf-8")
    s = tmp_path / "c.yaml"
    s.write_text(re.sub(r"(?m)^name: .*$", "name: cmp_x2000_final", text, count=1), encoding="utf-8")
    r = CliRunner().invoke(main, ["compare", str(s), "--out", str(tmp_path / "co")])
    assert r.exit_code == 0, r.output
    books = list((tmp_path / "co").glob("*.xlsx"))
    assert len(books) == 1, books
    _check_titles(books[0], "cmp_x2000_final", "cmp_x005F_x2000_final")


def test_property_text_keeps_the_escape_and_removes_what_xml_forbids() -> None:
    from planner.report.cells import clean_text, property_text

    assert property_text("a_x0041_b") == "a_x0041_b"  # plain XML: as typed
    assert clean_text("a_x0041_b") == "a_x005F_x0041_b"  # a cell: escaped once
    # an ESC (XML 1.0 forbids it) is shown as its visible escape, as in a cell (planner.core.escape.xml_text)
    assert property_text("a\x1bb") == "a\\x1bb"


def test_a_sources_link_target_is_the_url_as_written() -> None:
    import openpyxl

    from planner.catalog.loader import default_catalog_dir
    from planner.report.sheets.sources import _put_link

    ws = openpyxl.Workbook().active
    url = "https://example.com/a_x0041_b"
    cell = _put_link(ws, 1, 1, url, 200.0, str(default_catalog_dir() / "SOURCES.md"))
    assert cell.value == "https://example.com/a_x005F_x0041_b"  # the cell's text: escaped once
    assert cell.hyperlink is not None and cell.hyperlink.target == url  # a relationship's Target: plain XML


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.libreoffice
def test_libreoffice_shows_the_titles_and_the_pdf_title_as_typed(tmp_path: Path) -> None:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None or shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None:
        if os.environ.get("PLANNER_REQUIRE_SOFFICE") == "1":
            pytest.fail("PLANNER_REQUIRE_SOFFICE=1 but soffice, pdftotext or pdfinfo is not on PATH")
        pytest.skip("LibreOffice (soffice), pdftotext or pdfinfo is not installed")
    book = _plan_xlsx(tmp_path)
    env = dict(os.environ, HOME=str(tmp_path), SAL_USE_VCLPLUGIN="svp")
    proc = subprocess.run([soffice, f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}", "--headless",
                           "--norestore", "--convert-to", "pdf", "--outdir", str(tmp_path / "pdf"), str(book)],
                          capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    pdf = tmp_path / "pdf" / f"{NAME}.pdf"
    assert proc.returncode == 0 and pdf.exists(), proc.stderr
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "x005F" not in text and "x005F" not in info
    assert f"Hardware plan: {NAME}" in text and f"Budgetary estimate for scenario {NAME}" in text
    assert re.search(rf"(?m)^Title:\s+Hardware plan: {NAME}$", info), info


# ----- 5e: names equal only in NFKC ---------------------------------------------------------------------------


def _plan(tmp_path: Path, file: str, name: str, out: Path):
    s = tmp_path / file
    s.write_text(f'name: "{name}"\n{WORKLOADS}', encoding="utf-8")
    return CliRunner().invoke(main, ["plan", str(s), "--out", str(out), "--format", "json"])


@pytest.mark.parametrize("first, second, stem, said", [
    # UnicodeData.txt compatibility decompositions: FB01 <compat> 0066 0069; 216B <compat> 0058 0049 0049
    ("\ufb01ne", "fine", "fine", "U+FB01 (LATIN SMALL LIGATURE FI) as 'fi'"),
    ("fine", "\ufb01ne", "fine", "U+FB01 (LATIN SMALL LIGATURE FI) as 'fi'"),
    ("\u216b", "XII", "XII", "U+216B (ROMAN NUMERAL TWELVE) as 'XII'"),
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_second_set_whose_name_is_equal_only_in_nfkc_is_refused(tmp_path: Path, first: str, second: str,
                                                                  stem: str, said: str) -> None:
    out = tmp_path / "o"
    assert _plan(tmp_path, "a.yaml", first, out).exit_code == 0
    before = (out / f"{stem}.json").read_bytes()
    r = _plan(tmp_path, "b.yaml", second, out)
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert (f"{out / stem}.json: is a report of 'plan {first}', and 'plan {second}' would write a file of the same "
            f"name (the file name is made of a name in Unicode NFKC, where the two are one: {said}); planner never "
            "replaces or removes another set's report.") in line, line
    assert (out / f"{stem}.json").read_bytes() == before  # the first set's report is kept
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", f"{stem}.json"]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_name_composed_or_decomposed_is_still_one_set(tmp_path: Path) -> None:
    # 'café' with U+00E9 and with 'e' + U+0301 are canonically equivalent (UAX #15, 1.1): one set, replaced
    out = tmp_path / "o"
    assert _plan(tmp_path, "a.yaml", "caf\u00e9", out).exit_code == 0
    r = _plan(tmp_path, "b.yaml", "cafe\u0301", out)
    assert r.exit_code == 0, r.output
    assert "Note: the reports are named" not in r.stderr  # the file name holds it composed, drawn the same
    # b.yaml replaces the set a.yaml planned (two scenario files of one name: h29a m1), and says so
    assert "planned from another scenario file" in " ".join(r.stderr.split()), r.stderr
    assert sorted(p.name for p in out.iterdir()) == [".planner-reports.json", "caf\u00e9.json"]


@pytest.mark.parametrize("name, stem, said", [
    ("\ufb01ne", "fine", "U+FB01 (LATIN SMALL LIGATURE FI) as 'fi'"),
    ("\u216b", "XII", "U+216B (ROMAN NUMERAL TWELVE) as 'XII'"),
    # UnicodeData.txt: 01C5 <compat> 0044 017E; 2024 <compat> 002E
    ("\u01c5x", "D\u017ex", "U+01C5 (LATIN CAPITAL LETTER D WITH SMALL LETTER Z WITH CARON) as 'D\u017e'"),
    ("a\u2024b", "a.b", "U+2024 (ONE DOT LEADER) as '.'"),
])
def test_a_name_written_with_compatibility_characters_gets_the_note(tmp_path: Path, name: str, stem: str,
                                                                    said: str) -> None:
    r = _plan(tmp_path, "s.yaml", name, tmp_path / "o")
    assert r.exit_code == 0, r.output
    note = " ".join(r.stderr.split())  # the note is wrapped to the terminal's width
    assert (f"Note: the reports are named {stem!r}: the scenario name {name!r} is written with characters the file "
            f"name holds in their plain form (Unicode NFKC: {said}).") in note, note
    assert (tmp_path / "o" / f"{stem}.json").is_file()


def test_a_name_with_a_ligature_and_a_symbol_gets_both_reasons(tmp_path: Path) -> None:
    # 'ﬁ x': NFKC 'fi x', then the space becomes '-' (planner.core.names.safe_stem): 'fi-x'
    r = _plan(tmp_path, "s.yaml", "\ufb01 x", tmp_path / "o")
    assert r.exit_code == 0, r.output
    note = " ".join(r.stderr.split())
    assert ("the scenario name '\ufb01 x' is written with characters the file name holds in their plain form (Unicode "
            "NFKC: U+FB01 (LATIN SMALL LIGATURE FI) as 'fi') and holds characters a file name cannot") in note, note


# ----- 5c: a name of only dots -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["..", ".", "-.-"])
def test_a_name_of_dots_and_dashes_gets_a_hint_that_works(tmp_path: Path, name: str) -> None:
    r = _plan(tmp_path, "s.yaml", name, tmp_path / "o")
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert f"name: name {name!r} leaves nothing to name the report files with. Give it a letter, a digit or '_' (a " \
           "file name drops the dots and dashes at its ends and makes other symbols and spaces dashes), e.g. " \
           "name: ft-7b-workstation." in line, line
    assert "'.'" not in line.split("Give it", 1)[1]  # no longer offered: a name of dots is cut to nothing
    assert not (tmp_path / "o").exists()


def test_the_hint_s_underscore_is_a_name(tmp_path: Path) -> None:
    r = _plan(tmp_path, "s.yaml", "_", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o" / "_.json").is_file()
