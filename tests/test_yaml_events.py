"""planner.core.yamlio._build_from_events: values and line marks built from libyaml's events are
those of PyYAML's constructors on the composed nodes, and anything else is left to the node path."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.core import yamlio
from tests.test_yamlio import _PIECES, _same_with_lines

pytestmark = pytest.mark.skipif(yamlio._CLoader is None, reason="PyYAML without libyaml")

ROOT = Path(__file__).resolve().parents[1]


def _reference(text: str):
    """PyYAML's construct_document with the planner's constructors on libyaml's nodes."""
    loader = yamlio._CLoader(text)
    try:
        return loader.construct_document(loader.get_single_node())
    finally:
        loader.dispose()


def _from_events(text: str):
    loader = yamlio._CLoader(text)
    try:
        return yamlio._build_from_events(loader)
    finally:
        loader.dispose()


def test_shipped_files_and_every_scalar_kind_read_as_the_constructors_read_them():
    texts = [p.read_text(encoding="utf-8") for p in
             sorted(ROOT.glob("catalog/*.yaml")) + sorted(ROOT.glob("scenarios/**/*.yaml"))]
    texts += [
        "a: [1, -2, 31, 1000, 1.5, .inf, -.nan, true, No, ~, '', 2026-02-01, 2026-02-01 10:00:00]\n"
        "b: {'3': x, '2.5': y, 'null': z}\nc:\n- - [deep]\n",
        "k:\n  - a\n  -\n    - 1\n    - {x: 'q', y: \"r\\n\"}\n  - |\n    block\n  - >\n    folded\n    text\n",
        "same: 1\nagain: 1\nthird: '1'\nlist: [1, 1, '1', \"1\"]\n",  # one text, cached once, quoted apart
        "---\nroot: 1\n...\n", "just a text\n", "- 1\n- 2\n", "[" * yamlio.MAX_DEPTH + "]" * yamlio.MAX_DEPTH,
    ]
    for text in texts:
        assert _same_with_lines(_from_events(text), _reference(text)), text


@pytest.mark.parametrize("text", [
    "a: 0x1f\n",  # a number the constructors refuse (planner.core.yamlrules.refuse_other_bases)
    "a: &x 1\nb: *x\n",  # an alias
    "a: &x 1\n",  # an anchor (the composer refuses a duplicate one)
    "a: &x {b: 1}\nc: {<<: *x}\n",  # a merge key
    "a: {<<: {b: 1}}\n",  # a merge key without an alias
    "a: {=: 1}\n",  # a value key
    "a: !!str 1\n", "a: !!set {x}\n", "a: !x [1]\n", "!!map {a: 1}\n",  # tags
    "a: 1\na: 2\n", "1: a\ntrue: b\n",  # duplicate keys (1 == True)
    "? [a]\n: 1\n", "? {a: 1}\n: 1\n",  # keys that are not scalars
    "b: {3: x}\n", "on: 1\n", "~: 1\n", "2026-01-01: x\n",  # keys YAML 1.1 reads as no text (yamlrules.key_problem)
    "[" * (yamlio.MAX_DEPTH + 1) + "]" * (yamlio.MAX_DEPTH + 1),  # too deep
    "", "# only a comment\n",  # no document
    "a: 1\n---\nb: 2\n",  # two documents
    "a: 2026-13-45\n", "a: !\n",  # a value its constructor refuses; a non-specific tag
])
def test_anything_else_is_left_to_the_node_path(text):
    with pytest.raises(yamlio._NotPlain):
        _from_events(text)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=25).map("".join))
def test_what_the_event_builder_builds_is_what_the_node_path_builds(text):
    if yamlio._PURE_ONLY.search(text):
        return  # parse_yaml gives such a text to the pure-Python parser
    try:
        built = _from_events(text)
    except Exception:  # noqa: BLE001 - left to the node path (or a syntax error, the node path's too)
        return
    assert _same_with_lines(built, _reference(text)), text
