"""One escaping layer per output medium (planner.core.escape, issue 28): CSV, Markdown, terminal, XML.

Each medium's rule is checked on its own, then on a whole run whose scenario and model config.json carry
the hostile texts of the issue's trial: a CSV formula after ';', HTML and a javascript: link in names, an
escape sequence in a config.json's quant_method, U+FFFE and U+FFFF in a name.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import openpyxl
import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.escape import csv_text, md_fence, md_text, terminal_text, xml_text

# ----- each medium's rule -------------------------------------------------------------------------

# OWASP "CSV Injection": =, +, -, @, tab and CR start a formula; a ';' (or ',', '|', tab) locale splits the
# cell there, so a trigger after a separator starts a formula too
@pytest.mark.parametrize("text, escaped", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=x", "'\t'=x"),
    ("\r=x", "'\r'=x"),
    ("chat;=cmd|' /C calc'!A0;end", "chat;'=cmd|' /C calc'!A0;end"),
    ("a,=b", "a,'=b"), ("a|+b", "a|'+b"), ("a; =b", "a; '=b"), ('a;"=b', "a;\"'=b"), ("a\n@b", "a\n'@b"),
    # a space is a separator too (LibreOffice's CSV import: "Separated by: Space")
    ("qlora-7b", "qlora-7b"), ("a = b", "a '= b"), ("x-1;y", "x-1;y"),
])
def test_csv_text_puts_a_quote_before_every_formula_trigger_that_starts_a_field(text: str, escaped: str) -> None:
    assert csv_text(text) == escaped


def test_csv_text_leaves_numbers_alone() -> None:
    assert csv_text(-1.5) == -1.5 and csv_text(None) is None


def test_md_text_escapes_html_and_link_syntax() -> None:
    assert md_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert\\(1\\)&gt;"
    assert md_text("[x](javascript:alert(1))") == "\\[x\\]\\(javascript:alert\\(1\\)\\)"
    assert md_text("a|b *c* _d_ `e` # f & <https://x>") == \
        "a\\|b \\*c\\* \\_d\\_ \\`e\\` \\# f &amp; &lt;https\\://x&gt;"
    assert md_text("two\nlines\x1b[31m") == "two lines\\\\x1b\\[31m"


def test_md_text_breaks_gfm_autolinks() -> None:
    # GFM 0.29, 6.9 "Autolinks (extension)" links www., http://, https:// and e-mail addresses in plain
    # text (hostile pass 5B item 8): their ':', '.' and '@' are backslash-escaped (CommonMark 2.4: a
    # backslash before ASCII punctuation shows it as is), other dots are left alone
    assert md_text("https://evil.example/x www.evil.example a@evil.example 1.5 GiB") == \
        "https\\://evil.example/x www\\.evil.example a\\@evil.example 1.5 GiB"


def test_md_fence_is_longer_than_any_backtick_run_inside() -> None:
    assert md_fence("plain") == ["```text", "plain", "```"]
    assert md_fence("a ```` b\n```") == ["`````text", "a ```` b\n```", "`````"]
    assert md_fence("bell\x07") == ["```text", "bell\\x07", "```"]


def test_terminal_text_shows_control_characters_as_escapes() -> None:
    assert terminal_text("a\x1b]0;title\x07b\x1b]52;c;eA==\x07") == "a\\x1b]0;title\\x07b\\x1b]52;c;eA==\\x07"
    assert terminal_text("r\u202eeverse\rx") == "r\\u202eeverse\\rx"
    assert terminal_text("two\nlines\tand tab", newlines=True) == "two\nlines\tand tab"


def test_xml_text_shows_what_xml_1_0_forbids_as_escapes() -> None:
    # XML 1.0, 2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]; what it
    # forbids is shown as the terminal shows it (issue 28: nothing dropped without a trace), CR included
    assert (xml_text("a\ufffeb\uffffc\x00d\x1be\ud800f\tg\nh\ri\U0001f600")
            == "a\\ufffeb\\uffffc\\x00d\\x1be\\ud800f\tg\nh\\ri\U0001f600")


# ----- a whole run ----------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
# a tiny Llama (tests/model_configs.py) whose quantization_config carries OSC sequences: a window title
# and a clipboard write (xterm's OSC 0 and OSC 52)
_CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
           "quantization_config": {"quant_method": "bitsandbytes\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07",
                                   "load_in_4bit": True}}
_WORKLOAD = """    task: train
    method: qlora
    recipe: pure-bf16
    optimizer: adamw
    lora_rank: 16
    micro_batch: 1
    seq_len: 512
    grad_accum: 16
    gpus: 1
    checkpointing: full
"""
_SCENARIO = (
    "name: evil\n"
    "workloads:\n"
    "  - name: \"chat;=cmd|' /C calc'!A0;end\"\n"
    "    model: ./tiny\n" + _WORKLOAD
    + "  - name: \"<img src=x onerror=alert(1)>[x](javascript:alert(1))\"\n"
    "    model: llama-2-7b\n" + _WORKLOAD)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    (d / "tiny").mkdir()
    (d / "tiny" / "config.json").write_text(json.dumps(_CONFIG))
    (d / "evil.yaml").write_text(_SCENARIO)
    r = CliRunner().invoke(main, ["plan", str(d / "evil.yaml"), "--out", str(d / "out"), "--format",
                                  "xlsx,csv,json,md"])
    assert r.exit_code == 0, r.output
    return d / "out", r


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_no_escape_sequence_reaches_the_terminal(run) -> None:
    _, r = run
    assert "\x1b" not in r.output and "\x07" not in r.output
    assert "bitsandbytes\\x1b]0;pwned\\x07" in r.output


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_no_csv_cell_starts_a_formula_after_a_separator(run) -> None:
    out, _ = run
    text = (out / "evil.csv").read_text()
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            for sep in ",;|\t":
                for part in cell.split(sep):
                    assert not part.lstrip(' "').startswith(("=", "+", "@")), (cell, part)
    assert "chat;'=cmd|' /C calc'!A0;end" in text


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_markdown_report_holds_no_html_no_link_and_no_escape(run) -> None:
    out, _ = run
    md = (out / "evil.md").read_text()
    assert "\x1b" not in md and "\x07" not in md
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert "## Memory: &lt;img src=x onerror=alert\\(1\\)&gt;\\[x\\]\\(javascript:alert\\(1\\)\\) " \
           "(llama-2-7b, train)" in headings
    outside_fence = md.split("```", 2)[2]
    assert "<img" not in outside_fence and "](javascript:" not in outside_fence


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_workbook_is_valid_xml_without_ufffe_or_uffff(run) -> None:
    out, _ = run
    with zipfile.ZipFile(out / "evil.xlsx") as z:
        for name in z.namelist():
            if name.endswith((".xml", ".rels")):
                data = z.read(name)
                ElementTree.fromstring(data)  # a strict parser: raises on a character XML forbids
                assert "\ufffe".encode() not in data and "\uffff".encode() not in data, name
    book = openpyxl.load_workbook(out / "evil.xlsx")
    texts = [c.value for ws in book.worksheets for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    assert any("<img src=x onerror=alert(1)>[x](javascript:alert(1))" in t for t in texts)
    assert not any("\x1b" in t for t in texts)


def test_a_noncharacter_in_a_name_is_refused(tmp_path) -> None:
    # U+FFFE / U+FFFF cannot be written into a workbook (XML 1.0 forbids them): two names differing by
    # one would read the same there, so the reader refuses them as it refuses control characters
    from click.testing import CliRunner

    from planner.cli.main import main

    (tmp_path / "nc.yaml").write_text('name: nc\nworkloads:\n  - name: "a\\uFFFEb"\n    model: llama-2-7b\n'
                                      "    task: infer\n")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "nc.yaml"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert "holds U+FFFE, a Unicode noncharacter" in r.output
    assert not (tmp_path / "out").exists()
