"""YAML 1.1 integers in other bases are refused, with the decimal as the hint (issue 28, hostile pass 5B
item 2): PyYAML reads ``016`` as octal 14, ``0b11`` as 3 and ``0x10`` as 16 (YAML 1.1, "Integer
Language-Independent Type", yaml.org/type/int.html), so ``lora_rank: 016`` planned rank 14 and an
overlay ``price_usd: 0250`` priced a card at $168 without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.core.yamlio import load_mapping
from tests.test_safety5b import ROOT, _cli


@pytest.mark.parametrize("text,word,reads,hint", [
    ("016", "an octal", "14", "Write it without the leading zero (16)"),
    ("-016", "an octal", "-14", "Write it without the leading zero (-16)"),
    ("0b11", "a binary", "3", "Write the value in decimal (3)"),
    ("0x10", "a hexadecimal", "16", "Write the value in decimal (16)"),
])
def test_other_bases_are_refused_with_the_decimal(tmp_path: Path, text, word, reads, hint):
    (tmp_path / "a.yaml").write_text(f"a: {text}\n")
    with pytest.raises(Exception) as info:
        load_mapping(tmp_path / "a.yaml")
    msg = f"{info.value} {getattr(info.value, 'hint', '')}"
    assert f"{text} is {word} number in YAML 1.1 (it reads as {reads}), not what it looks like" in msg, msg
    assert hint in msg, msg


def test_plain_numbers_still_read(tmp_path: Path):
    (tmp_path / "a.yaml").write_text("a: 0\nb: 10\nc: -3\nd: '1_000'\ne: 0.5\nf: '016'\n")
    data = load_mapping(tmp_path / "a.yaml")
    data = data[0] if isinstance(data, tuple) else data
    # '1_000' quoted is a text; unquoted, YAML 1.1 drops the '_' (1000) and planner refuses it (test_safety8b)
    assert dict(data) == {"a": 0, "b": 10, "c": -3, "d": "1_000", "e": 0.5, "f": "016"}


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_leading_zero_in_a_scenario_and_an_overlay_is_refused(tmp_path: Path):
    text = (ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_text()
    assert "lora_rank: 16" in text
    (tmp_path / "s.yaml").write_text(text.replace("lora_rank: 16", "lora_rank: 016", 1))
    r = _cli("plan", "s.yaml", "--out", "o", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "lora_rank: 016 is an octal number in YAML 1.1 (it reads as 14)" in err, err
    (tmp_path / "ov").mkdir()
    (tmp_path / "ov" / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4060-ti-16gb\n    price_usd: 0250\n"
                                               "    price_kind: quote\n    source: \"quote Q-1\"\n    as_of: 2026-11-20\n")
    r = _cli("catalog", "gpus", "--catalog", "ov", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "gpus.yaml:4: gpus[0] (rtx-4060-ti-16gb).price_usd: 0250 is an octal number in YAML 1.1 (it reads as 168)" in err, err


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_quoted_leading_zero_number_gets_a_hint_that_works(tmp_path: Path):
    # 02048 is no octal number (8 is no octal digit), so YAML 1.1 reads it as text; the hint used to say
    # "Write the number without quotes: 02048", which is what the user wrote
    text = (ROOT / "scenarios" / "serve-7b-2k-1user.yaml").read_text()
    assert "context: 2048" in text
    (tmp_path / "s.yaml").write_text(text.replace("context: 2048", "context: 02048", 1))
    r = _cli("plan", "s.yaml", "--out", "o", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "Write the number without the leading zero: context: 2048." in err, err
