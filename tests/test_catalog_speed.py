"""The shortcuts that make reading a catalog cheaper give what the longer way gives (yamlspeed)."""

from __future__ import annotations

import pytest

import sys
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.loader import KINDS
from planner.core.names import FILLERS, may_be_unsafe, unsafe_char
from planner.core.units import _SIZE_UNITS, _number, parse_rate


def test_every_unsafe_character_is_unprintable():
    # Entry.str and Entry.str_list search a text for unsafe characters only when may_be_unsafe() is
    # true (not str.isprintable(), or a Hangul filler): that is right only if no character unsafe_char
    # finds (with or without newlines) is printable but the fillers.
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if ch.isprintable() and ch not in FILLERS:
            assert unsafe_char(ch) is None and unsafe_char(ch, newlines=True) is None, hex(code)
    assert all(may_be_unsafe(f"a{ch}b") and unsafe_char(ch) == ch for ch in FILLERS)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.integers(min_value=0, max_value=10**30), st.sampled_from(sorted(_SIZE_UNITS)))
def test_a_whole_rate_is_the_float_of_its_exact_value(n, unit):
    # parse_rate divides ints for a whole number ('900 GB/s'); Fraction's float is the same rounding
    assert parse_rate(f"{n} {unit}/s") == float(Fraction(_number(str(n))) * _SIZE_UNITS[unit])


def test_a_kinds_keys_are_its_schemas():
    for kind in KINDS.values():
        schema = kind.schema()
        assert schema is kind.schema()  # made once
        assert kind.keys == tuple(schema)
        assert kind.required == tuple(k for k, f in schema.items() if f.required)
        assert list(schema) == ["id", *kind.fields, *(k for k in ("source", "as_of", "notes", "verification")
                                                      if k not in kind.fields)]
