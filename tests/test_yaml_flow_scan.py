"""parse_yaml scans a text's tokens for a number split by a flow collection's ',' only where a digit, ',' and a
digit stand inside a flow collection that libyaml's events located (planner.core.yamlio._digit_comma_in).

The catalog's notes write prices such as '$1,000' in plain texts and comments, which made every catalog file take
the whole token scan (half of its load time); these tests pin that the shortcut misses no split number, wherever
the collection sits, and that the checks keep the order the pure-Python path gives them.
"""

from __future__ import annotations

import pytest

from planner.core.yamlio import _CLoader, _build_from_events, _digit_comma_in, parse_yaml
from planner.core.yamlrules import YamlProblem


def _problem(text: str) -> YamlProblem:
    with pytest.raises(YamlProblem) as caught:
        parse_yaml(text)
    return caught.value


@pytest.mark.parametrize("text", [
    "a: [16,384]\n",                      # a list in a mapping
    "a: [\n  16,384]\n",                  # split across lines
    "a: [[1], [2, [16,384]]]\n",          # nested
    "- {x: 1}\n- [8,192]\n",              # the second of two flow collections, in a block list
    "[16,384]\n",                         # the document itself
    "note: $1,000 [x]\nb: [16,384]\n",    # after a plain text holding '1,000' and a '['
])
def test_a_split_number_in_any_flow_collection_is_found(text: str) -> None:
    problem = _problem(text)
    assert "is read by YAML as two items, 16 and 384" in str(problem) or "8 and 192" in str(problem), str(problem)


@pytest.mark.parametrize("text, value", [
    ("note: costs $1,000 per card\nb: [1, 2]\n", {"note": "costs $1,000 per card", "b": [1, 2]}),
    ("# $2,500 in a comment\nb: [4, 8]\n", {"b": [4, 8]}),
    ("a: [1,2,4]\n", {"a": [1, 2, 4]}),  # no thousands group, no spaced list: three items, as before
])
def test_commas_outside_flow_collections_are_read_as_written(text: str, value: dict) -> None:
    assert parse_yaml(text) == value


def test_the_spans_cover_the_outermost_collections_only() -> None:
    text = "a: [1, [2, 3]]\nb: 4,000\nc: {d: 5}\n"
    # the spans a reader of this text would give: '[1, [2, 3]]' and '{d: 5}'
    spans = [(text.index("["), text.index("]]") + 2), (text.index("{"), text.index("}") + 1)]
    assert not _digit_comma_in(text, spans)  # '4,000' is a plain text outside both
    if _CLoader is not None:  # the spans the event builder records are those
        flows: list[tuple[int, int]] = []
        loader = _CLoader(text)
        try:
            _build_from_events(loader, flows)
        finally:
            loader.dispose()
        assert flows == spans
    assert _digit_comma_in("a: [4,000]\n", [(3, 10)])


def test_a_split_number_is_said_before_an_empty_value_as_on_the_pure_path() -> None:
    # both problems in one text: flow_thousands comes before comment_value (yamlio.parse_yaml's order)
    text = "a: [16,384]\ndescription: #1 choice\n"
    assert "16 and 384" in str(_problem(text))
    pure = "a: [16,384]\ndescription: #1 choice\nt: \"tab\tinside\"\n"  # a tab sends the text to the pure parser
    assert "16 and 384" in str(_problem(pure))
