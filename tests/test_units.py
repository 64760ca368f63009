"""planner.core.units.parse_size: whole numbers (the fast path) and the rest give the same bytes."""

from __future__ import annotations

import pytest

from planner.core.units import GB, MB, TB, GiB, KiB, UnitError, parse_size


@pytest.mark.parametrize(("text", "expected"), [
    ("24 GiB", 24 * GiB),          # 24 * 2**30 (IEC)
    ("80 GB", 80 * GB),            # 80 * 10**9 (SI)
    ("0 B", 0),
    ("007 KiB", 7 * KiB),          # leading zeros are the same number
    ("12 TB", 12 * TB),
    ("1 Gb", GB // 8),             # bits: 10**9 / 8 bytes
    ("3 kb", 375),                 # 3000 bits / 8 = 375 bytes
    ("0.004 kb", 0),               # 4 bits, half a byte: round() to even, 0
    ("0.012 kb", 2),               # 12 bits, 1.5 bytes: round() to even, 2
    ("1.5 GiB", 3 * GiB // 2),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(("text", "hint"), [
    # '1_000' and '1,024' were read as 1000 and 1024 before; a ',' may be a decimal comma (1,024 = 1.024)
    ("1_000 MB", "Write the number without separators: '1000 MB'."),
    ("1,024 KiB", "Write '1.024 KiB' if the comma is a decimal comma, or '1024 KiB' if it separates thousands."),
])
def test_parse_size_refuses_separators(text, hint):
    with pytest.raises(UnitError) as info:
        parse_size(text)
    assert info.value.hint == hint


def test_parse_size_refuses_an_exponent_as_whole_numbers_do():
    # '1e3 MB' was read as 1000 MB while micro_batch: 1e1 is refused: a number is written in digits
    with pytest.raises(UnitError) as info:
        parse_size("1e3 MB")
    assert str(info.value) == "'1e3 MB' writes its number with an exponent (1e3)"
    assert info.value.hint == "Write the number in digits: '1000 MB'."
    assert parse_size("1000 MB") == 1000 * MB  # the hint, followed


def test_parse_size_of_a_bare_number_names_the_unit():
    with pytest.raises(UnitError) as info:
        parse_size("24")
    assert "has no unit" in str(info.value)


def test_years_text_is_singular_for_one_year():
    from planner.core.units import years_text

    assert [years_text(y) for y in (1, 3, 1.5, 0.5)] == ["1 year", "3 years", "1.5 years", "0.5 years"]
