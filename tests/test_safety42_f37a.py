"""Hostile pass 37 (tester A, report h37a), items 1-7 and 15: hints that hold when pasted, and encodings.

1: bash's $'...' reads \\NNN and \\xHH as bytes (bash(1), QUOTING), so "$'caf\\303\\251'" is 'café', not 'cafÃ©'.
2/3: a comma list given to --tokens-per-month is refused as a list before its counts are judged, and its hint (the
repeated options, the API's mapping) is offered only where it would pass. 4: the API fit's 'max' in a workload
mapping is told the keyword form. 5/6: a '~' or '$VAR' hint only where it expands to a path that passes.
7: a quoted --out's hint is checked as a destination too. 15: UTF-16/32 without a byte order mark holding CJK text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import planner
from planner.cli.main import main
from planner.core.errors import InputError
from planner.core.outpath import shell_unquoted

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
LAB = ROOT / "scenarios" / "lab-workstation-mix.yaml"  # workloads qlora-13b, chat-8b, ft-1b
CALIBRATE = ["calibrate", "--model", "llama-3.2-1b", "--task", "train", "--recipe", "pure-bf16", "--micro-batch",
             "2", "--seq-len", "512"]


def _cli(args: list[str]) -> str:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    return r.output.strip().splitlines()[-1]


def _api_error(call, *args, **kwargs) -> str:
    try:
        call(*args, **kwargs)
    except InputError as exc:
        return str(exc)
    raise AssertionError("not refused")


# -- 1. $'...' escapes are bytes ----------------------------------------------------------------------------------

# (the text as written, the bytes bash reads: bash(1) QUOTING; each row checked against bash below where it runs)
BYTE_ROWS = [
    (r"$'caf\303\251'", b"caf\xc3\xa9"),        # octal bytes c3 a9: the UTF-8 of é
    (r"'caf'$'\303\251'", b"caf\xc3\xa9"),      # what LC_ALL=C ls --quoting-style=shell-escape prints
    (r"$'\xc3\xa9'", b"\xc3\xa9"),              # hex bytes alike
    (r"$'\342\200\234a'", b"\xe2\x80\x9ca"),    # U+201C then 'a'
    (r"$'\xe9'", b"\xe9"),                      # a byte that is no UTF-8: kept as that byte
    (r"$'\cA'x", b"\x01x"),                     # \cA: 'A' & 0x1f
    (r"$'\c\\'q", b"\x1cq"),                    # \c\\: '\' & 0x1f, both backslashes read
    (r"$'\c?'", b"\x7f"),                       # \c?: DEL
    (r"$'\u00e9ab'", b"\xc3\xa9ab"),            # \u: a code point, written as UTF-8
]


@pytest.mark.parametrize("text, want", BYTE_ROWS)
def test_ansi_c_escapes_are_read_as_the_bytes_bash_reads(text: str, want: bytes) -> None:
    got = shell_unquoted(text)
    assert got is not None and got.encode("utf-8", "surrogateescape") == want, got
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-c", "printf %s " + text], capture_output=True).stdout == want


@pytest.mark.parametrize("text", [r"$'\x{41}'", r"$'a\400b'", r"$'\uD800'z", r"$'a\0b'"])
def test_what_bash_reads_otherwise_than_one_byte_gets_no_reading(text: str) -> None:
    # \x{41} (bash 5.2's braces), an octal above \377 (bash keeps its low byte: 'a\400b' is 'a' then a NUL, the end),
    # a \u surrogate (bash writes its three bytes), a NUL: none is read here, so none is hinted
    assert shell_unquoted(text) is None


def test_an_octal_escaped_name_is_hinted_as_the_utf8_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    line = _cli(["plan", str(SCENARIO), "--out", r"$'caf\303\251'"])
    assert line.endswith("Write --out 'café'."), line  # bytes 63 61 66 c3 a9, not 'cafÃ©'
    line = _cli(["plan", str(SCENARIO), "--out", r"$'\x{41}'"])
    assert line.endswith("Give --out a local folder's path, e.g. --out reports."), line
    said = _api_error(planner.plan, str(SCENARIO), out=r"$'caf\303\251'")
    assert said.endswith("Give out='café'."), said


# -- 2/3. a comma list of --tokens-per-month --------------------------------------------------------------------

def test_a_comma_list_is_refused_as_a_list_before_its_counts() -> None:
    line = _cli(["compare", str(LAB), "--tokens-per-month", "chat-8b=100M,ft-1b=-2M"])
    # -2M fails, so no repeated options are offered (they would be refused): the workloads are listed
    assert line == ("Error: --tokens-per-month: 'chat-8b=100M,ft-1b=-2M' is a list of 2 counts in one value, "
                    "separated by commas. A list is given as one --tokens-per-month NAME=COUNT per workload, e.g. "
                    "--tokens-per-month qlora-13b=200M. Valid: qlora-13b, chat-8b, ft-1b."), line
    assert "above 0" not in line
    said = _api_error(planner.compare, str(LAB), tokens_per_month="chat-8b=100M,ft-1b=-2M")
    assert said.endswith("Give a mapping, one key per workload, e.g. {'qlora-13b': '200M'}. "
                         "Valid: qlora-13b, chat-8b, ft-1b."), said


@pytest.mark.parametrize("given, hinted", [
    ("chat-8b=100M,ft-1b=200M", "--tokens-per-month chat-8b=100M --tokens-per-month ft-1b=200M."),
    ("chat-8b=100m,ft-1b=2M", "--tokens-per-month chat-8b=100M --tokens-per-month ft-1b=2M."),  # 100m: milli
    ("chat-8b=100M, ft-1b=2M", "--tokens-per-month chat-8b=100M --tokens-per-month ft-1b=2M."),  # blank dropped
    ("CHAT-8B=100M,ft-1b=2M", "--tokens-per-month chat-8b=100M --tokens-per-month ft-1b=2M."),  # the name's case
    ("chat-8b=100M ft-1b=2M", "--tokens-per-month chat-8b=100M --tokens-per-month ft-1b=2M."),  # blanks
])
def test_the_repeated_options_hint_is_one_that_passes(given: str, hinted: str) -> None:
    line = _cli(["compare", str(LAB), "--tokens-per-month", given])
    assert line.endswith("A list is given as one --tokens-per-month per workload: " + hinted), line
    pieces = hinted.rstrip(".").split()  # the hint pasted: accepted
    r = CliRunner().invoke(main, ["compare", str(LAB), *pieces])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("given", ["a=100M,b=200M", "chat-8b=100M,chat-8b=2M", "a=100M b=200M", "chat-8b=x,ft-1b=1M"])
def test_a_list_whose_split_would_be_refused_gets_the_workloads(given: str) -> None:
    # unknown names, a workload named twice, a count that is none: the split would be refused in turn
    line = _cli(["compare", str(LAB), "--tokens-per-month", given])
    assert line.endswith("Valid: qlora-13b, chat-8b, ft-1b."), line
    said = _api_error(planner.compare, str(LAB), tokens_per_month=given)
    assert said.endswith("Valid: qlora-13b, chat-8b, ft-1b."), said


def test_the_api_mapping_hint_has_no_blank_in_a_key() -> None:
    said = _api_error(planner.compare, str(LAB), tokens_per_month="chat-8b=100M, ft-1b=2M")
    assert said.endswith("Give a mapping, one key per workload: {'chat-8b': '100M', 'ft-1b': '2M'}."), said
    planner.compare(str(LAB), tokens_per_month={"chat-8b": "100M", "ft-1b": "2M"})  # the hint, followed


# -- 4. API fit: 'max' in a workload mapping ------------------------------------------------------------------------

def test_api_fit_max_in_a_mapping_is_told_the_keyword() -> None:
    workload = dict(model="llama-2-7b", task="train", method="qlora", micro_batch=1, seq_len="max", gpus=1)
    try:
        planner.fit(gpu="rtx-4090", workload=workload)
    except InputError as exc:
        said = str(exc)
    assert "fit(..., seq_len='max')" in said, said
    assert "command line" not in said and "file" not in said, said
    del workload["seq_len"]
    assert planner.fit(gpu="rtx-4090", workload=workload, seq_len="max") is not None  # the hint, followed


def test_cli_fit_max_in_a_file_keeps_its_words(tmp_path: Path) -> None:
    w = tmp_path / "w.yaml"
    w.write_text("model: llama-2-7b\ntask: train\nmethod: qlora\nmicro_batch: 1\nseq_len: max\ngpus: 1\n")
    line = _cli(["fit", "--gpu", "rtx-4090", "--workload", str(w)])
    assert "'max' is a value of planner fit's command line, not of a workload file" in line, line


# -- 5/6. '~' and '$VAR' hints only where they expand to a path that passes ----------------------------------------

@pytest.mark.parametrize("env, out", [
    ({"EMPTY": ""}, "$EMPTY/x"),         # bash: "$EMPTY"/x is /x
    ({"HOME": ""}, "~/x"),               # bash: ~/x is /x
    ({"SP": " lead"}, "$SP/x"),          # ' lead/x': begins with a blank
    ({"D": "-rf"}, "$D/x"),              # '-rf/x': begins with '-'
    ({"D": str(ROOT / "catalog")}, "$D/x"),    # inside the shipped catalog
    ({"HOME": str(ROOT / "planner")}, "~/x"),  # inside the package
])
def test_an_expansion_refused_in_turn_is_not_hinted(env: dict, out: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    line = _cli(["plan", str(SCENARIO), "--out", out])
    assert line.endswith("Give the path itself."), line
    said = _api_error(planner.plan, str(SCENARIO), out=out)
    assert "expanduser" not in said and "expandvars" not in said, said


def test_an_expansion_that_passes_is_still_hinted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("D", str(tmp_path / "r"))
    line = _cli(["plan", str(SCENARIO), "--out", "$D/x"])
    assert line.endswith('Write it unquoted (--out "$D"/x), or give the path itself.'), line
    said = _api_error(planner.plan, str(SCENARIO), out="$D/x")
    assert "os.path.expandvars('$D/x')" in said, said


@pytest.mark.parametrize("out", ["~nouserzz/x", "$NOPE_F37A/x"])
def test_api_no_expand_hint_for_an_unknown_user_or_unset_variable(out: str, monkeypatch) -> None:
    monkeypatch.delenv("NOPE_F37A", raising=False)
    said = _api_error(planner.plan, str(SCENARIO), out=out)
    # expanduser('~nouserzz/x') and expandvars('$NOPE_F37A/x') return the text unchanged: refused again
    assert "expanduser" not in said and "expandvars" not in said, said
    assert said.endswith("Give the folder's path itself, e.g. out='reports'."), said


def test_calibrate_empty_variable_gets_no_hint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EMPTY", "")
    line = _cli(CALIBRATE + ["--out", "$EMPTY/c.yaml"])  # bash: /c.yaml
    assert line.endswith("Give the path itself."), line


# -- 7. a quoted --out's hint is checked as a destination ----------------------------------------------------------

def _outs(tmp_path: Path) -> list[str]:
    (tmp_path / "f.yaml").write_text("x: 1\n")
    return ["'f.yaml'", f'"{ROOT / "catalog"}"', f"$'{ROOT / 'planner'}'", '"/proc/self"',
            "'.planner-reports.json'", "'o/.planner-staging-x'"]


def test_a_quoted_out_is_not_hinted_as_a_destination_a_run_refuses(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for out in _outs(tmp_path):  # a file, the catalog, the package, /proc, the manifest, a staging folder
        line = _cli(["plan", str(SCENARIO), "--out", out])
        assert line.endswith("Give --out a local folder's path, e.g. --out reports."), (out, line)
        said = _api_error(planner.plan, str(SCENARIO), out=out)
        assert said.endswith("Give out= a local folder's path, e.g. out='reports'."), (out, said)
    line = _cli(["plan", str(SCENARIO), "--out", "'new'"])  # one that passes: still hinted
    assert line.endswith("Write --out 'new'."), line


def test_calibrate_quoted_out_is_checked_as_a_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    for out in ["'d'", f"'{ROOT / 'catalog' / 'gpus.yaml'}'"]:  # a folder; a file of the shipped catalog
        line = _cli(CALIBRATE + ["--out", out])
        assert line.endswith("Give --out a local file's path, e.g. --out ./calibration.yaml."), (out, line)
    line = _cli(CALIBRATE + ["--out", "'d/c.yaml'"])
    assert line.endswith("Write --out 'd/c.yaml'."), line


# -- 15. UTF-16/32 without a byte order mark, CJK text ----------------------------------------------------------

@pytest.mark.parametrize("codec, iconv", [("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE"),
                                          ("utf-32-le", "UTF-32LE"), ("utf-32-be", "UTF-32BE")])
def test_utf16_and_utf32_cjk_text_without_a_bom_is_named(codec: str, iconv: str, tmp_path: Path) -> None:
    text = SCENARIO.read_text(encoding="utf-8").replace("description:", "description: " + "模型训练计划" * 30 + " #", 1)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("#")) + "\n"
    s = tmp_path / "s.yaml"
    s.write_bytes(text.encode(codec))  # no BOM: the -le/-be codecs write none; 180 CJK characters break the NUL lanes
    line = _cli(["plan", str(s), "--out", str(tmp_path / "o")])
    assert f"iconv -f {iconv} -t UTF-8" in line, line


def test_a_utf16_config_json_with_cjk_values_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_bytes(('{"_name_or_path":"' + "模型" * 40 + '","x":"' + "模型" * 10 + '"}').encode("utf-16-le"))
    text = SCENARIO.read_text(encoding="utf-8").replace("model: llama-2-7b", "model: ./cfg.json", 1)
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
    line = _cli(["plan", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o")])
    assert "cfg.json: is UTF-16 (little-endian) text" in line and "iconv -f UTF-16LE -t UTF-8" in line, line


def test_latin1_text_is_still_not_utf8_only(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_bytes(SCENARIO.read_text(encoding="utf-8").replace("description:", "description: café", 1)
                  .encode("latin-1"))  # one e9 byte: no UTF-16 reading gives text with ASCII in it
    line = _cli(["plan", str(s), "--out", str(tmp_path / "o")])
    assert "is not UTF-8 text (byte 0xe9)" in line and "iconv" not in line, line
    assert not os.path.exists(tmp_path / "o")
