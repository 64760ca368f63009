"""Issue 28, hostile pass 20X: findings of report h20b fixed on branch f20b2.

N3. A ``numpy.longdouble`` (a float wider than a float64) that its float64 does not hold is judged as a Decimal
    is: ``np.longdouble('512.0000000000000001')`` for ``seq_len`` or ``micro_batch`` is refused as no whole
    number (InputError naming the keyword), not rounded to 512; a longdouble price with a fraction of a cent is
    quoted as given (``10.004999999999999999``), not as its float (``10.005``); a longdouble a float64 holds
    reads as before.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner import estimate, plan
from planner.core.errors import InputError
from planner.core.fields import plain_number
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
