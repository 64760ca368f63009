"""A config.json text holding a lone surrogate or a noncharacter is refused where it is read, in one line
naming the file and the key (issue 28): it reached the Markdown report (failing with a message blaming the
terminal's encoding) and the JSON report (a surrogate escape no JSON reader accepts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

# a tiny Llama, as tests/test_escaping.py builds it
_CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
           "quantization_config": {"quant_method": "QM", "load_in_4bit": True}}


@pytest.mark.parametrize("escaped, shown, what", [
    ("\\ud800\\ufffe", "U+D800", "a lone surrogate"),
    ("bnb\\ufffe", "U+FFFE", "a Unicode noncharacter"),
    ("\\udfff", "U+DFFF", "a lone surrogate"),
    ("\\udc80", "U+DC80", "a lone surrogate"),  # h21b M2: not '\x80', the byte a path's \udc80 stands for
])
def test_a_lone_surrogate_in_config_json_is_refused(tmp_path: Path, escaped: str, shown: str, what: str) -> None:
    (tmp_path / "tiny").mkdir()
    # json.dumps writes the surrogate as the escape the hostile file had ("\ud800")
    (tmp_path / "tiny" / "config.json").write_text(json.dumps(_CONFIG, indent=1).replace("QM", escaped))
    r = CliRunner().invoke(main, ["estimate", "--model", str(tmp_path / "tiny"), "--task", "train", "--method",
                                  "qlora", "--seq-len", "512"])
    assert r.exit_code == 2, r.output
    err = r.stderr
    assert err.count("\n") == 1 and "config.json" in err
    assert f"invalid text at key 'quant_method': it holds {shown}, {what}" in err
    assert "config.json:10:" in err  # "{" is line 1, the 8 keys before it lines 2-9, "quant_method" line 10
    assert "encoding" not in err
