"""Issue 28, hostile pass 22: the exact-decimal reader and prices given as narrow binary floats (f23c).

Covers: planner.core.units.written_decimal, the one reader behind the checks that judge a number by its
digits (a price's cents, planner.catalog.prices.whole_cents; a vms.csv count,
planner.catalog.skypilot_csv.is_whole; a wide float's digits, planner.core.units.wide_float_text).
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
