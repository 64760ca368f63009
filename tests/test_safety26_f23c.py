"""Issue 28, hostile pass 22: the exact-decimal reader and prices given as narrow binary floats (f23c).

Covers: planner.core.units.written_decimal, the one reader behind the checks that judge a number by its
digits (a price's cents, planner.catalog.prices.whole_cents; a vms.csv count,
planner.catalog.skypilot_csv.is_whole; a wide float's digits, planner.core.units.wide_float_text).
M8 (h22b): a price given as a numpy float16 / float32 / longdouble is judged as the decimal numpy shows for it
(planner.core.units.binary_float_text): taken as that decimal (19.99, not 19.989999771118164), refused for a
fraction of a cent as a float64 is, or refused where two whole cents are the one value (float32 above
131,072 USD); a price range (low_usd / high_usd) read the same way; a price taken as its whole cents (0.1 + 0.2
is 0.3) and written so in a plan's JSON.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner.catalog.skypilot_csv import is_whole
from planner.core.units import written_decimal


@pytest.mark.parametrize("text, want", [
    ("249.999999999999999999", Decimal("249.999999999999999999")),  # its float is 250.0: the digits are kept
    ("2.5e2", Decimal("250")), ("1_000.50", Decimal("1000.50")), (" 7 ", Decimal("7")),
])
def test_written_decimal_reads_the_digits(text: str, want: Decimal) -> None:
    got = written_decimal(text)
    assert got == want
    assert isinstance(got, Decimal)


@pytest.mark.parametrize("text", [None, "", "0x10", "1:30", "inf", "nan", "-Infinity", "1e-99999999999999999999"])
def test_written_decimal_reads_no_decimal_from_other_texts(text: str | None) -> None:
    assert written_decimal(text) is None


def test_is_whole_falls_back_to_the_float_where_decimal_reads_nothing() -> None:
    # '1e-99999999999999999999' has an exponent beyond Decimal's: judged by its float, 0.0, which is whole
    assert written_decimal("1e-99999999999999999999") is None
    assert is_whole("1e-99999999999999999999") is True
    assert is_whole("1.0000000000000000001") is False  # by its digits, though float() reads 1.0


# -- M8: a price given as a numpy binary float of another width ---------------------------------------------------

np = pytest.importorskip("numpy")


def _cents(value: object, key: str = "unit_price_usd") -> float:
    """whole_cents on a price given through the API (no file text), as a scenario's extras line reads it."""
    from planner.catalog.prices import whole_cents
    from planner.core.fields import Entry

    e = Entry({key: value}, file=None, path="extras[0]")
    return whole_cents(e, key, e.number(key, min=0, max=100_000_000))


def _refusal(value: object) -> str:
    from planner.core.errors import InputError

    with pytest.raises(InputError) as info:
        _cents(value)
    return str(info.value)


@pytest.mark.parametrize("value", [np.float32(19.99), np.float32(0.1), np.float32(300.1), np.float16(1.1),
                                   np.float16(9.99), np.float32(100000.01), np.float32(1e-2)])
def test_a_narrow_float_price_is_the_decimal_numpy_shows(value: object) -> None:
    shown = str(value)  # numpy's shortest digits that read back as the value in its own type: '19.99'
    want = float(Decimal(shown))
    assert float(value) != want  # the float64 of the float32 carries its noise (19.989999771118164)
    got = _cents(value)
    assert got == want and repr(got) == repr(want)


@pytest.mark.parametrize("value, want", [(0.1 + 0.2, 0.3), (np.float64(0.1) + np.float64(0.2), 0.3),
                                         (np.float32(2048), 2048.0), (np.longdouble(19.99), 19.99),
                                         (np.longdouble("19.99"), 19.99), (Decimal("19.99"), 19.99)])
def test_a_price_is_taken_as_its_whole_cents(value: object, want: float) -> None:
    assert _cents(value) == want  # 0.3, never 0.30000000000000004


@pytest.mark.parametrize("value, shown", [(np.float32(300.005), "300.005"), (np.float16(0.005), "0.005"),
                                          (np.longdouble("10.004999999999999999"), "10.004999999999999999")])
def test_a_narrow_float_with_a_fraction_of_a_cent_is_refused_as_numpy_shows_it(value: object, shown: str) -> None:
    assert str(value) == shown
    said = _refusal(value)
    assert f"{shown} USD has a fraction of a cent" in said
    cents = Decimal(shown) * 100
    down, up = int(cents), int(cents) + 1  # the whole cents either side, as the hint offers them
    assert f"{up / 100:.2f}" in said and (down == 0 or f"{down / 100:.2f}" in said)


@pytest.mark.parametrize("value", [np.float32(131072.01), np.float32(1234567.89), np.float16(65504)])
def test_a_narrow_float_that_holds_no_cents_is_refused(value: object) -> None:
    # two whole cents read as the one value: taking it as either would be a guess
    kind = type(value)
    said = _refusal(value)
    assert said.startswith(f"extras[0].unit_price_usd: numpy.{kind.__name__}({float(value)!r}) holds no price "
                           "to the cent: ")
    low, high = said.split("to the cent: ")[1].split(" USD are the same")[0].split(" and ")
    assert Decimal(high) - Decimal(low) == Decimal("0.01")
    assert kind(low) == value and kind(high) == value  # numpy itself: both cents are this value
    assert "Give unit_price_usd as a float, a Decimal or a str" in said
    assert "\n" not in said and "Traceback" not in said


def test_binary_float_text_is_for_numpy_floats_of_another_width_only() -> None:
    from planner.core.units import binary_float_text

    assert binary_float_text(np.float32(19.99)) == "19.99"
    assert binary_float_text(np.float16(1.1)) == "1.1"
    assert binary_float_text(np.longdouble("19.99")) == str(np.longdouble("19.99"))
    for other in (19.99, np.float64(19.99), np.longdouble(19.99), np.int32(7), 7, Decimal("19.99"), "19.99",
                  np.float32("nan"), np.float32("inf"), np.complex64(1), None):
        assert binary_float_text(other) is None, other


def test_a_price_range_given_as_float32_is_read_as_its_price_is() -> None:
    from planner.catalog.prices import read_prices
    from planner.core.fields import Entry

    price = np.float32(19.99)
    item = {"usd": price, "kind": "quote-range", "as_of": "2026-01-15", "source": "q",
            "low_usd": price, "high_usd": price}
    (got,) = read_prices(Entry({"prices": [item]}, file=None, path="gpus[0]"), "prices", max_usd=1e9)
    # high_usd's float64 (19.989999771118164) is below the price taken (19.99): both read as numpy shows them
    assert (got.usd, got.low_usd, got.high_usd) == (19.99, 19.99, 19.99)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_plan_writes_a_float32_extras_price_as_given() -> None:
    import copy
    import json

    import yaml

    from planner import load_catalog, plan

    with open("scenarios/serve-7b-2k-1user.yaml", encoding="utf-8") as f:
        base = yaml.safe_load(f)
    d = copy.deepcopy(base)
    d["extras"] = [{"description": "SSD", "unit_price_usd": np.float32(19.99), "quantity": 3, "source": "q",
                    "as_of": "2026-01-15", "price_kind": "street"}]
    out = plan(d, catalog=load_catalog()).to_dict()
    text = json.dumps(out, default=str)
    at = text.find('"unit_price_usd"', text.find('"SSD"'))
    assert text[at:at + 40].startswith('"unit_price_usd": 19.99,')
    assert "19.98999977" not in text
