"""Issue 28, hostile pass 20X: findings of report h20b fixed on branch f20b2.

N3. A ``numpy.longdouble`` (a float wider than a float64) that its float64 does not hold is judged as a Decimal
    is: ``np.longdouble('512.0000000000000001')`` for ``seq_len`` or ``micro_batch`` is refused as no whole
    number (InputError naming the keyword), not rounded to 512; a longdouble price with a fraction of a cent is
    quoted as given (``10.004999999999999999``), not as its float (``10.005``); a longdouble a float64 holds
    reads as before.
M4. A number in digits of another script written with a separator of its own ('٠٫٠٥' with U+066B ARABIC DECIMAL
    SEPARATOR, '٢٬٠٤٨' with U+066C ARABIC THOUSANDS SEPARATOR, fullwidth '２，０４８' and '０．０５'): the "Write
    ASCII digits" hint writes the separator in ASCII too, and a comma then gets the hint the ASCII comma gets
    (2048; both readings for '٢٬٠٠٠'), on the command line and in files; the value hinted is accepted when
    followed.
"""

from __future__ import annotations

from decimal import Decimal

import re

import pytest
from click.testing import CliRunner

from planner import estimate, plan
from planner.cli.main import main
from planner.core.errors import InputError
from planner.core.fields import ascii_digits, plain_number
from planner.core.units import NotWhole, wide_float_text

np = pytest.importorskip("numpy")
#: the platforms where numpy.longdouble is a float64 (Windows, Apple silicon) have no wider float to test
WIDE = pytest.mark.skipif(np.finfo(np.longdouble).nmant <= np.finfo(np.float64).nmant,
                          reason="numpy.longdouble is a float64 here")


def _train(**kw):
    args = dict(model="llama-2-7b", task="train", method="qlora", micro_batch=1, seq_len=512)
    args.update(kw)
    return estimate(**args)


@WIDE
@pytest.mark.parametrize("key,text,shown_as", [
    ("seq_len", "512.0000000000000001", "512"),
    ("micro_batch", "2.0000000000000000005", "2"),
])
def test_longdouble_not_whole_refused(key, text, shown_as):
    value = np.longdouble(text)
    assert value != int(shown_as)  # numpy itself: not the whole number its float64 rounds to
    assert float(value) == int(shown_as)
    with pytest.raises(InputError) as info:
        _train(**{key: value})
    said = str(info.value)
    assert said.startswith(f"{key}: must be a whole number, not {value}")  # numpy's own digits, as given
    assert f"(it would read as {shown_as})" in said
    assert "Traceback" not in said


@WIDE
def test_longdouble_text_is_its_own_digits():
    value = np.longdouble("512.0000000000000001")
    text = wide_float_text(value)
    assert text is not None and np.longdouble(text) == value and Decimal(text) != 512
    made = plain_number(value)
    assert isinstance(made, NotWhole) and made == 512.0 and made.text == text
    # held by a float64 (or not a number): read as before, no text
    for held in (np.longdouble(512), np.longdouble("0.5"), np.longdouble("nan"), np.float32(0.1), np.float64(0.1)):
        assert wide_float_text(held) is None
    assert plain_number(np.longdouble(512)) == 512 and not isinstance(plain_number(np.longdouble(512)), NotWhole)
    assert wide_float_text(Decimal("512.0000000000000001")) is None  # a Decimal reads its own way
    assert wide_float_text("512.0000000000000001") is None


@WIDE
def test_longdouble_whole_accepted():
    got = _train(seq_len=np.longdouble(512), micro_batch=np.longdouble(1))
    want = _train()
    assert got == want


def _scenario(price):
    return {"name": "s",
            "workloads": [{"name": "w", "model": "llama-2-7b", "task": "train", "method": "qlora", "micro_batch": 1,
                           "seq_len": 512}],
            "extras": [{"description": "d", "unit_price_usd": price, "source": "s", "as_of": "2026-01-15"}]}


@WIDE
def test_longdouble_price_quoted_as_given(tmp_path):
    value = np.longdouble("10.004999999999999999")
    assert float(value) == 10.005  # the float the old message quoted, a value never given
    with pytest.raises(InputError) as info:
        plan(_scenario(value), out=tmp_path / "o")
    said = str(info.value)
    assert "extras[0].unit_price_usd: 10.004999999999999999 USD has a fraction of a cent" in said
    assert "10.005 USD" not in said
    assert "write unit_price_usd: 10.00 or 10.01" in said
    # the Decimal of the same digits says the same
    with pytest.raises(InputError) as dec:
        plan(_scenario(Decimal("10.004999999999999999")), out=tmp_path / "d")
    assert str(dec.value) == said


# ----- M4: separators of other scripts in the ASCII-digits hint -------------------------------------------------

def _cli(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(main, args)
    return res.exit_code, res.output


_INFER = ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "rtx-4090"]


def test_ascii_digits_maps_separators():
    assert ascii_digits("\u0660\u066b\u0660\u0665") == "0.05"  # ٠٫٠٥: Arabic decimal separator
    assert ascii_digits("\u0662\u066c\u0660\u0664\u0668") == "2,048"  # ٢٬٠٤٨: Arabic thousands separator
    assert ascii_digits("\uff12\uff0c\uff10\uff14\uff18") == "2,048"  # ２，０４８: fullwidth comma
    assert ascii_digits("\uff10\uff0e\uff10\uff15") == "0.05"  # ０．０５: fullwidth full stop
    assert ascii_digits("\uff0d\uff11") == "-1"  # －１: fullwidth hyphen-minus
    assert ascii_digits("2048") is None and ascii_digits("\u066b") is None  # no digit of another script


@pytest.mark.parametrize("opt,value,base,hinted", [
    ("--headroom", "\u0660\u066b\u0660\u0665", ["--context", "2048"], "0.05"),
    ("--headroom", "\uff10\uff0e\uff10\uff15", ["--context", "2048"], "0.05"),
    ("--headroom", "\u0660\u066c\u0660\u0665", ["--context", "2048"], "0.05"),  # 0,05: a decimal comma
    ("--context", "\u0662\u066c\u0660\u0664\u0668", [], "2048"),
    ("--context", "\uff12\uff0c\uff10\uff14\uff18", [], "2048"),
    ("--context", "\u0662\u066c\u0660\u0664\u0668\u066b\u0660", [], "2048"),  # ٢٬٠٤٨٫٠
])
def test_cli_hint_followed_is_accepted(opt, value, base, hinted):
    code, out = _cli(_INFER + base + [opt, value])
    assert code == 2
    assert f"{opt}: {value!r} is not written in ASCII digits." in out
    assert "Traceback" not in out
    said = re.findall(re.escape(opt) + r" (\S+?)\.?$", out.strip())
    assert said == [hinted]  # the hint ends with the ASCII value, separator mapped
    for ch in "\u066b\u066c\uff0c\uff0e":
        assert ch not in out.split("ASCII digits.", 1)[1]
    code, out = _cli(_INFER + base + [opt, hinted])
    assert code == 0, out


def test_cli_thousands_separator_asks_as_ascii_comma():
    code, arabic = _cli(_INFER + ["--context", "\u0662\u066c\u0660\u0660\u0660"])  # ٢٬٠٠٠
    assert code == 2
    code_ascii, ascii_out = _cli(_INFER + ["--context", "2,000"])
    assert code_ascii == 2
    question = "Write --context 2 if the comma is a decimal comma, or --context 2000 if it separates thousands."
    assert question in ascii_out
    assert arabic.strip().endswith(question)
    assert "In ASCII digits it is '2,000'" in arabic


@pytest.mark.parametrize("value", ["\u0662\u066c\u0660\u0664\u0668", "\uff12\uff0c\uff10\uff14\uff18"])
def test_file_hint_followed_is_accepted(tmp_path, value):
    wl = tmp_path / "w.yaml"
    wl.write_text(f"name: w\nmodel: llama-2-7b\ntask: infer\ncontext: {value}\n", encoding="utf-8")
    code, out = _cli(["estimate", "--workload", str(wl), "--gpu", "rtx-4090"])
    assert code == 2
    assert f"context: must be a whole number, not {value!r}" in out
    assert out.strip().endswith("Write the number without separators: context: 2048.")
    wl.write_text("name: w\nmodel: llama-2-7b\ntask: infer\ncontext: 2048\n", encoding="utf-8")
    code, out = _cli(["estimate", "--workload", str(wl), "--gpu", "rtx-4090"])
    assert code == 0, out
