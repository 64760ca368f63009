"""Issue 28, hostile pass 21B: findings of report h21b fixed on branch f21b3.

- M9: a raw control character inside a config.json text is named (U+0000 (NULL)) without json's doubled
  "at at", with a hint that fits it (a line break as \\n, a tab as \\t, another as its \\u escape).
- M7: a bitsandbytes 4-bit checkpoint whose ``bnb_4bit_quant_type`` planner does not size (fp4, a typo, an
  ESC) is warned about naming ``quantization_config.bnb_4bit_quant_type`` and its value as written (escaped).
- M6: a number written as text whose value lies outside the key's range (``seq_len: 1e9``,
  ``unit_price_usd: 1.7e308``) gets the range as its hint, not a spelling the range then refuses.
- M3: ``--gpu-layers`` is refused in planner's ``--gpu-layers: ...`` line (a close match for ``alll``, the digits
  for ``1e3``), ``gpu_layers: alll`` in a file gets "Did you mean 'all'?", ``gpu_layers: max`` names the key once;
  ``--format`` is refused in the ``--format: ...`` line, not click's "Invalid value".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

# a tiny Llama, as tests/test_config_text.py builds it
_CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100}


def _estimate(model: Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["estimate", "--model", str(model), "--task", "infer", "--context", "256"])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("raw, named, hint", [
    ("\x00", "U+0000 (NULL)", "Remove it, or write it escaped as \\u0000"),
    ("\x1b", "U+001B (ESCAPE)", "Remove it, or write it escaped as \\u001b"),
    ("\n", "U+000A (LINE FEED)", "Write a line break inside a text as \\n."),
    ("\t", "U+0009 (CHARACTER TABULATION)", "Write a tab inside a text as \\t."),
])
def test_m9_a_raw_control_character_in_a_config_text_is_named(tmp_path: Path, raw: str, named: str,
                                                              hint: str) -> None:
    (tmp_path / "m").mkdir()
    text = json.dumps(_CONFIG)[:-1] + ', "x": "a' + raw + 'b"}'
    (tmp_path / "m" / "config.json").write_text(text)
    code, _, err = _estimate(tmp_path / "m")
    col = text.index(raw) + 1  # one line (unless the raw byte is a line feed, which json meets first anyway)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"config.json:1: invalid JSON: a raw control character {named} inside a text at line 1 column {col}." \
        in err
    assert hint in err
    assert "at at" not in err


@pytest.mark.parametrize("kind, shown", [
    ("fp4", "'fp4'"),
    ("nf5", "'nf5'"),
    ("nf4\x1b[2J", "'nf4\\x1b[2J'"),
])
def test_m7_an_unsized_bnb_4bit_quant_type_is_named(tmp_path: Path, kind: str, shown: str) -> None:
    (tmp_path / "m").mkdir()
    cfg = dict(_CONFIG, quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True,
                                             "bnb_4bit_quant_type": kind})
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    code, out, err = _estimate(tmp_path / "m")
    assert code == 0, err
    text = " ".join((out + err).split())  # the warning is wrapped
    assert f"quantization_config.bnb_4bit_quant_type {shown}) of a format the memory model does not size" in text
    assert "\x1b" not in out + err
    assert "Recipe: bf16" in out


def test_m7_nf4_is_still_sized(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    cfg = dict(_CONFIG, quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True,
                                             "bnb_4bit_quant_type": "NF4"})
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    code, out, err = _estimate(tmp_path / "m")
    assert code == 0, err
    assert "Recipe: nf4" in out
    assert "bnb_4bit_quant_type" not in out + err


_TRAIN = "name: w\nmodel: llama-2-7b\ntask: train\nmethod: qlora\nmicro_batch: 1\n"


def _estimate_file(tmp_path: Path, text: str) -> tuple[int, str]:
    (tmp_path / "w.yaml").write_text(text)
    r = CliRunner().invoke(main, ["estimate", "--workload", str(tmp_path / "w.yaml")])
    return r.exit_code, r.stderr


@pytest.mark.parametrize("written, hint", [
    # seq_len takes 1 to 16777216 (2^24): 1e9 is above it, -1e3 below it
    ("1e9", "1e9 is more than this field takes: give a whole number from 1 to 16777216."),
    ("-1e3", "-1e3 is less than this field takes: give a whole number from 1 to 16777216."),
    ("1e3", "Write the whole number in digits: seq_len: 1000."),  # inside the range: its digits, as before
])
def test_m6_a_whole_number_hint_lies_inside_the_range(tmp_path: Path, written: str, hint: str) -> None:
    code, err = _estimate_file(tmp_path, _TRAIN + f"seq_len: {written}\n")
    assert code == 2
    assert err.count("\n") == 1
    assert f"seq_len: must be a whole number, not '{written}'. {hint}" in err


def test_m6_a_number_hint_lies_inside_the_range(tmp_path: Path) -> None:
    # extras' unit_price_usd takes 0 to 100000000 (1e8): 1.7e308 is above it, so 1.7e+308 is never hinted
    (tmp_path / "p.yaml").write_text(
        "name: ov\nworkloads:\n  - {name: w, model: llama-2-7b, task: train, method: qlora, micro_batch: 1, "
        "seq_len: 512}\nextras:\n  - {description: d, unit_price_usd: 1.7e308, quantity: 1, source: s, "
        "as_of: 2026-01-15}\n")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "p.yaml"), "--out", str(tmp_path / "o"), "--format",
                                  "json"])
    assert r.exit_code == 2
    assert ("extras[0].unit_price_usd: must be a number, not '1.7e308'. 1.7e308 is more than this field takes: "
            "give a number from 0 to 100000000.") in r.stderr
    assert "1.7e+308" not in r.stderr


_LLAMA = ["estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "512", "--engine", "llama.cpp",
          "--weights", "Q4_K_M"]


@pytest.mark.parametrize("given, line", [
    ("alll", "Error: --gpu-layers: 'alll' is not a layer count. Did you mean 'all'? Or give a whole number of layers."),
    ("1e3", "Error: --gpu-layers: '1e3' is not a whole number. Write the whole number in digits: --gpu-layers 1000."),
    ("", "Error: --gpu-layers: '' is not a layer count. --gpu-layers takes a whole number of layers, or 'all'."),
    ("ALL", "Error: --gpu-layers: 'ALL' is not a layer count. Did you mean 'all'? The words (all, max, auto) are "
            "written in lower case."),
])
def test_m3_gpu_layers_option_is_refused_in_planners_line(given: str, line: str) -> None:
    r = CliRunner().invoke(main, _LLAMA + ["--gpu-layers", given])
    assert r.exit_code == 2
    assert r.stderr == line + "\n"
    assert "Invalid value" not in r.stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_m3_gpu_layers_hinted_values_are_taken() -> None:
    for fixed in ("all", "1000", "20"):  # 1000 layers is every layer (llama.cpp clamps -ngl to n_layer + 1)
        r = CliRunner().invoke(main, _LLAMA + ["--gpu-layers", fixed])
        assert r.exit_code == 0, r.output


@pytest.mark.parametrize("written, want", [
    ("alll", "gpu_layers: 'alll' is not a layer count. Did you mean 'all'? Or give a whole number of layers."),
    ("max", "gpu_layers: 'max' asks for the most layers that fit a card, which needs a card."),
])
def test_m3_gpu_layers_in_a_file(tmp_path: Path, written: str, want: str) -> None:
    code, err = _estimate_file(tmp_path, "name: w\nmodel: llama-2-7b\ntask: infer\ncontext: 512\nengine: llama.cpp\n"
                                         f"weights: Q4_K_M\ngpu_layers: {written}\n")
    assert code == 2
    assert f"w.yaml:7: {want}" in err
    assert err.count("gpu_layers:") == 1 + ("gpu_layers: max" in err)  # the key once (the hint may name 'max')


@pytest.mark.parametrize("given, line", [
    ("JSON", "Error: --format: 'JSON' is not written in lower case; format names are written as listed (xlsx, csv, "
             "json, md). Write --format json."),
    ("jsn", "Error: --format: 'jsn' is not a report format; give a comma-separated list of xlsx, csv, json, md. "
            "Did you mean 'json'?"),
])
def test_m3_format_is_refused_in_planners_line(tmp_path: Path, given: str, line: str) -> None:
    (tmp_path / "s.yaml").write_text("name: fm\nworkloads:\n  - {name: w, model: llama-2-7b, task: infer, "
                                     "context: 1024}\n")
    r = CliRunner().invoke(main, ["plan", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o"), "--format", given])
    assert r.exit_code == 2
    assert r.stderr == line + "\n"
