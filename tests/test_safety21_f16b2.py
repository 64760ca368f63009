"""Hostile pass h16b, findings fixed on branch f16b2.

- 13n: a name holding a combining overline (U+0305, U+033F) or an overlay mark (Canonical_Combining_Class 1, such as
  U+0334-U+0338) is refused as a combining low line is (planner.core.names._drawn_mark_problem).
- 13j: so is a calibration gpu_name holding one, before any note shows it.
- 5: a scenario named after its file whose stem holds an invisible character (or a byte that is not UTF-8) is
  refused, not named after the escape (which a file literally named so would share); the path at the line's start
  shows a private-use character as its escape.
- 3: a part number (mpn) holding a character drawn like an ASCII one (full-width, a dash lookalike, a UTS #39
  confusable) is refused with its ASCII form as the hint; a label shown as a purchase item (a catalog name, an
  extras description) holding a full-width or mathematical letter or digit is refused too; free texts (a source,
  notes) are prose and keep their en dashes and full-width forms.
- 2: the workbook's totals (formulas: the Summary's total, the Quote's subtotal and grand total) are sized by the
  values they compute, so that no total prints as '###' (planner.report.printfit.widen_for_numbers).
- 6: the 32,000-character text cap counts as the workbook cell stores the text (UTF-16 units after the '_x005F_'
  escape: planner.core.escape.cell_units), and the Assumptions sheet's copy of the scenario says where a line too
  long for a cell is cut.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.lookalike import width_problem
from planner.core.names import part_number_problem
from planner.core.names import name_problem

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = "workloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"


@pytest.mark.parametrize("mark, why", [
    ("\u0305", "drawn as a line over"), ("\u033f", "drawn as a line over"),
    ("\u0334", "an overlay mark"), ("\u0335", "an overlay mark"), ("\u0336", "an overlay mark"),
    ("\u0337", "an overlay mark"), ("\u0338", "an overlay mark"), ("\u20d2", "an overlay mark"),
])
def test_an_overline_or_overlay_mark_in_a_name_is_refused(mark: str, why: str) -> None:
    told = name_problem(f"a{mark}b")
    assert told is not None
    # the message shows the mark as its escape, and the hint the name without it
    assert f"'a\\u{ord(mark):04x}b' holds U+{ord(mark):04X}" in told[0] and why in told[0], told
    assert told[1] == "Remove it: 'ab'."


def test_a_macron_and_an_acute_accent_are_still_names() -> None:
    # U+0304 COMBINING MACRON ('ā') and U+0301 are drawn over their own letter: not lines joining two
    assert name_problem("a\u0304b") is None and name_problem("cafe\u0301") is None


def test_a_workload_name_with_a_long_stroke_overlay_is_refused(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text(WORKLOADS.replace("name: w", 'name: "a\\u0336b"'), encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert "U+0336 (COMBINING LONG STROKE OVERLAY)" in r.stderr and "Remove it: 'ab'." in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_a_calibration_gpu_name_with_an_overlay_is_refused(tmp_path: Path) -> None:
    cal = tmp_path / "c.yaml"
    cal.write_text('schema_version: 1\ngpus:\n  - gpu_name: "NVIDIA L\\u0334"\n    cuda_context: 2000 MiB\n'
                   "    allocator_fraction: 0.5\n    measured_on: 2026-12-01\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4",
                                  "--calibration", str(cal)])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\u0334" not in line and "gpus[0].gpu_name: 'NVIDIA L\\u0334' holds U+0334 (COMBINING TILDE OVERLAY)" in line
    assert "Remove it: 'NVIDIA L'." in line


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u200e", "\U000e0041",
                                  "\u3164"])
def test_a_scenario_named_after_a_stem_with_an_invisible_character_is_refused(tmp_path: Path, char: str) -> None:
    s = tmp_path / f"x{char}y.yaml"
    s.write_text(WORKLOADS, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "the scenario is named after its file, and its name holds U+" in line and char not in line, line
    assert line.endswith("Give the name in the file (name: ...), or rename the file."), line
    assert not (tmp_path / "o").exists()


def test_the_escape_of_an_invisible_stem_is_no_longer_a_scenario_name_another_file_shares(tmp_path: Path) -> None:
    # before: 'x' U+200B 'y.yaml' planned as scenario 'x\u200by', the name of a file literally named 'x\u200by.yaml'
    # too, whose reports then replaced the first's; the literal one still plans (a backslash is a safe character)
    (tmp_path / "x\u200by.yaml").write_text(WORKLOADS, encoding="utf-8")
    literal = tmp_path / "x\\u200by.yaml"
    literal.write_text(WORKLOADS, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "x\u200by.yaml"), "--out", str(tmp_path / "o"), "--format",
                                  "json"])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["plan", str(literal), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "Scenario x\\u200by:" in r.stdout


def test_a_stem_byte_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    name = b"a\xffb.yaml".decode("utf-8", "surrogateescape")  # as os.listdir gives it (PEP 383)
    s = tmp_path / name
    try:
        s.write_text(WORKLOADS, encoding="utf-8")
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system takes UTF-8 names only")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    assert "its name holds the byte \\xff, which is not UTF-8" in r.stderr, r.stderr


def test_a_private_use_stem_is_escaped_at_the_start_of_the_line(tmp_path: Path) -> None:
    s = tmp_path / "p\uf022x.yaml"
    s.write_text(WORKLOADS, encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\uf022" not in line and line.startswith(f"Error: {tmp_path}/p\\uf022x.yaml: the scenario is named after"), line


def _shipped_entry(file: str, entry_id: str) -> str:
    text = (REPO / "catalog" / file).read_text(encoding="utf-8")
    return re.search(rf"  - id: {re.escape(entry_id)}\n.*?(?=\n  - id:|\n\n|\n#|\Z)", text, re.S).group(0) + "\n"


def _plan_error(tmp_path: Path, *args: str) -> str:
    r = CliRunner().invoke(main, ["plan", str(REPO / "scenarios" / "qlora-7b-12gb.yaml"), *args, "--out",
                                  str(tmp_path / "o"), "--format", "md"])
    assert r.exit_code == 2, r.output
    assert not (tmp_path / "o").exists()
    return r.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("mpn, said", [
    # U+2013 EN DASH and U+2010 HYPHEN: dash lookalikes (confusables.txt maps both to '-')
    ("100\u2013100001277WOF", "'100\\u2013100001277WOF' holds U+2013 (EN DASH) for '-': not the ASCII character it "
                              "looks like"),
    ("100\u2010100001277WOF", "'100\\u2010100001277WOF' holds U+2010 (HYPHEN) for '-'"),
    # U+2015 HORIZONTAL BAR: drawn as a dash (confusables.txt maps it to U+30FC, not '-')
    ("100\u2015100001277WOF", "holds U+2015 (HORIZONTAL BAR) for '-'"),
    ("100\u2212100001277WOF", "holds U+2212 (MINUS SIGN) for '-'"),
    # full-width: Unicode NFKC folds U+FF11 to '1', U+FF37 to 'W'
    ("\uff11\uff10\uff10-100001277WOF", "holds U+FF11 (FULLWIDTH DIGIT ONE) for '1', U+FF10 (FULLWIDTH DIGIT ZERO) "
                                       "for '0': not the ASCII characters they look like"),
    ("100-100001277\uff37OF", "holds U+FF37 (FULLWIDTH LATIN CAPITAL LETTER W) for 'W'"),
])
def test_an_mpn_drawn_like_ascii_is_refused_with_its_ascii_form(tmp_path: Path, mpn: str, said: str) -> None:
    entry = _shipped_entry("platforms.yaml", "am5-desktop")
    assert "mpn: 100-100001277WOF" in entry
    cat = tmp_path / "pl"
    cat.mkdir()
    (cat / "platforms.yaml").write_text("schema_version: 1\nplatforms:\n" + entry.replace(
        "mpn: 100-100001277WOF", f'mpn: "{mpn}"', 1), encoding="utf-8")
    err = _plan_error(tmp_path, "--catalog", str(cat))
    assert "(am5-desktop).parts[0].mpn: " in err and said in err, err
    assert err.endswith("mpn: '100-100001277WOF'."), err  # the hint: the ASCII form


def test_part_number_rule_spares_plain_and_accented_text() -> None:
    assert part_number_problem("900-2G133-0080-000") is None  # ASCII: NVIDIA's form, nothing to look at
    assert part_number_problem("caf\u00e9-1") is None  # 'é' is no ASCII lookalike (no confusables.txt line to ASCII)
    # Cyrillic 'О' U+041E: confusables.txt "041E ; 004F" ('O')
    assert part_number_problem("W\u041eF")[1] == "Write it in ASCII as the part's label or datasheet does: mpn: 'WOF'."


def test_a_gpu_name_with_a_full_width_digit_is_refused(tmp_path: Path) -> None:
    entry = _shipped_entry("gpus.yaml", "rtx-3060-12gb")
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "gpus.yaml").write_text("schema_version: 1\ngpus:\n" + entry.replace(
        "name: GeForce RTX 3060 12GB\n", "name: GeForce RTX 3060 \uff11\uff12GB\n", 1), encoding="utf-8")
    err = _plan_error(tmp_path, "--catalog", str(cat))
    assert "(rtx-3060-12gb).name: 'GeForce RTX 3060 \\uff11\\uff12GB' holds U+FF11 (FULLWIDTH DIGIT ONE), U+FF12 " \
           "(FULLWIDTH DIGIT TWO), a letter or digit in a compatibility form that Unicode NFKC reads as ASCII '12'" in err
    assert err.endswith("Write it with ASCII letters and digits: name: 'GeForce RTX 3060 12GB'."), err


def _extras_plan(tmp_path: Path, description: str, source: str) -> object:
    s = tmp_path / "e.yaml"
    s.write_text(f"name: e\n{WORKLOADS}extras:\n  - description: \"{description}\"\n    unit_price_usd: 300\n"
                 f"    source: \"{source}\"\n    as_of: 2026-01-15\n", encoding="utf-8")
    return CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "md"])


def test_an_extras_description_with_full_width_letters_is_refused(tmp_path: Path) -> None:
    r = _extras_plan(tmp_path, "NVMe SSD \uff14 \uff34B", "quote ACME-123")
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "extras[0].description: 'NVMe SSD \\uff14 \\uff34B' holds U+FF14 (FULLWIDTH DIGIT FOUR), U+FF34" in line
    assert line.endswith("Write it with ASCII letters and digits: description: 'NVMe SSD 4 TB'."), line


def test_prose_keeps_en_dashes_and_full_width_punctuation(tmp_path: Path) -> None:
    # an en dash in a source ('quote ACME\u2013123') or a range in a description (4800\u20135600) is prose, and so
    # is CJK full-width punctuation ('\uff08' for '('); the Quote shows them as written
    r = _extras_plan(tmp_path, "DDR5 4800\u20135600 kit \uff08spare\uff09", "quote ACME\u2013123, \uff11\uff12\u6708")
    assert r.exit_code == 0, r.output
    text = (tmp_path / "o" / "e.md").read_text(encoding="utf-8")
    assert "DDR5 4800\u20135600 kit \uff08spare\uff09" in text


def test_width_rule_spares_symbols_and_katakana() -> None:
    # '\u00b2' (<super>), '\u2122' (<compat>) and half-width katakana (NFKC: full-width katakana, not ASCII) pass
    assert width_problem("mm\u00b2") is None and width_problem("RTX\u2122") is None
    assert width_problem("\uff83\uff7d\uff84") is None


def _big_extras_plan(tmp_path: Path) -> Path:
    # 1,000,000 x $9,999,999.99 = $9,999,999,990,000.00 of extras on top of the plan's own $2,339.00 (1 x
    # rtx-4060-ti-16gb $450 + am5-desktop $1,499 + 2 x ddr5-udimm-16g $195, as the terminal's Line items show)
    s = tmp_path / "big.yaml"
    s.write_text(f"name: big\n{WORKLOADS}extras:\n  - description: Rack of storage\n    unit_price_usd: 9999999.99\n"
                 "    quantity: 1000000\n    source: quote ACME-123\n    as_of: 2026-01-15\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "xlsx"])
    assert r.exit_code == 0, r.output
    assert "Total: $9,999,999,992,339.00 (capex, USD)" in r.stdout
    return tmp_path / "o" / "big.xlsx"


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_totals_columns_are_as_wide_as_the_totals(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(_big_extras_plan(tmp_path))
    # '$9,999,999,992,339.00' is 21 characters; bold (x 1.1) plus a character's slack: ceil(21 x 1.1 + 1) = 25
    need = math.ceil(len("$9,999,999,992,339.00") * 1.1 + 1)
    assert wb["Summary"]["B5"].value.startswith("=Quote!")
    assert wb["Summary"].column_dimensions["B"].width >= need
    assert wb["Quote"].column_dimensions["F"].width >= need  # the line total, the subtotal and the grand total
    assert wb["Quote"].column_dimensions["B"].width >= need  # the header's grand total (B8)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.libreoffice
def test_libreoffice_prints_no_total_as_hashes(tmp_path: Path) -> None:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None or shutil.which("pdftotext") is None:
        if os.environ.get("PLANNER_REQUIRE_SOFFICE") == "1":
            pytest.fail("PLANNER_REQUIRE_SOFFICE=1 but soffice or pdftotext is not on PATH")
        pytest.skip("LibreOffice (soffice) or pdftotext is not installed")
    book = _big_extras_plan(tmp_path)
    env = dict(os.environ, HOME=str(tmp_path), SAL_USE_VCLPLUGIN="svp")
    proc = subprocess.run([soffice, f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}", "--headless",
                           "--norestore", "--convert-to", "pdf", "--outdir", str(tmp_path / "pdf"), str(book)],
                          capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "pdf" / "big.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert "###" not in text
    # the Summary's total, and the Quote's line total, subtotal, subtotal after discount and grand total
    assert text.count("$9,999,999,992,339.00") >= 4 and "$9,999,999,990,000.00" in text


def test_cell_units_count_as_the_cell_stores_the_text() -> None:
    from planner.core.escape import cell_units

    assert cell_units("quote ") == 6
    assert cell_units("\U0001f600") == 2  # a surrogate pair in UTF-16
    assert cell_units("_x0041_") == 13  # stored as '_x005F_x0041_'
    assert cell_units("quote " + "\U0001f600" * 20_000) == 40_006  # 6 + 2 x 20,000
    assert cell_units("_x0041_" * 4_500) == 58_500  # 13 x 4,500


def _source_plan(tmp_path: Path, source: str, fmt: str = "json"):
    s = tmp_path / "s.yaml"
    s.write_text(f"name: s\n{WORKLOADS}extras:\n  - description: NVMe SSD 4 TB\n    unit_price_usd: 300\n"
                 f"    source: \"{source}\"\n    as_of: 2026-01-15\n", encoding="utf-8")
    return CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", fmt])


@pytest.mark.parametrize("source, said", [
    # 'quote ' + 20,000 emoji: 20,006 code points, 6 + 2 x 20,000 = 40,006 UTF-16 units
    ("quote " + "\U0001f600" * 20_000, "is 40,006 characters long as the workbook stores it (20,006 as written: a "
                                       "character beyond U+FFFF, such as an emoji, counts 2)"),
    # 'quote ' + 4,500 x '_x0041_': 6 + 7 x 4,500 = 31,506 as written, 6 + 13 x 4,500 = 58,506 stored
    ("quote " + "_x0041_" * 4_500, "is 58,506 characters long as the workbook stores it (31,506 as written: a literal "
                                   "'_xHHHH_' is stored as '_x005F_xHHHH_')"),
])
def test_a_text_over_the_cap_as_the_cell_stores_it_is_refused(tmp_path: Path, source: str, said: str) -> None:
    r = _source_plan(tmp_path, source)
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert f"extras[0].source: {said}; a text is at most 32,000 characters, since the workbook holds it in one cell " \
           "(at most 32,767)." in line, line[:600]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_text_at_the_cap_as_the_cell_stores_it_is_kept_whole(tmp_path: Path) -> None:
    import openpyxl

    source = "quote " + "\U0001f600" * 15_997  # 6 + 2 x 15,997 = 32,000 units: the most a text may store
    r = _source_plan(tmp_path, source, "xlsx")
    assert r.exit_code == 0, r.output
    wb = openpyxl.load_workbook(tmp_path / "o" / "s.xlsx")
    held = [c.value for row in wb["Sources"].iter_rows() for c in row if str(c.value).startswith("quote ")]
    assert held and all(v == source for v in held)  # whole, no '\u2026'
    assert _source_plan(tmp_path, source + "\U0001f600").exit_code == 2  # 32,002 units


def test_the_scenario_copy_says_where_a_long_line_is_cut(tmp_path: Path) -> None:
    import openpyxl

    from planner.report.sheets.assumptions import _COPY_CELL_UNITS

    s = tmp_path / "c.yaml"
    # line 1 a comment of '# ' + 39,998 'x' = 40,000 characters; line 2 one of 30,000, which a cell holds whole
    s.write_text("# " + "x" * 39_998 + "\n# " + "y" * 29_998 + "\n" + f"name: c\n{WORKLOADS}", encoding="utf-8")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "o"), "--format", "xlsx"])
    assert r.exit_code == 0, r.output
    ws = openpyxl.load_workbook(tmp_path / "o" / "c.xlsx")["Assumptions"]
    texts = [c.value for row in ws.iter_rows(max_col=1) for c in row if isinstance(c.value, str)]
    first = next(t for t in texts if t.startswith("# x"))
    # the cell keeps _COPY_CELL_UNITS (32,567) characters of the line, then the note: 40,000 - 32,567 = 7,433 not shown
    assert _COPY_CELL_UNITS == 32_567
    assert first == ("# " + "x" * 32_565 + "\u2026 [line 1 is cut here: 40,000 characters, 7,433 not shown; a workbook "
                     "cell holds 32,767, and the scenario file holds the line whole]")
    assert len(first) <= 32_767
    assert "# " + "y" * 29_998 in texts  # whole, no note
