"""YAML reading: merge keys add keys from one place only; written duplicates are refused."""

from __future__ import annotations

import pytest

from planner.core.yamlio import YamlProblem, parse_yaml

ANCHORED = """\
base: &card {id: rtx-5090, price_usd: 1999, tdp_w: 575}
extra: &extra {cooling: blower}
gpus:
- <<: *card
  note: oc
- <<: [*card, *extra]
  vendor: nvidia
"""


def test_merged_keys_are_added_when_each_comes_from_one_place():
    gpus = parse_yaml(ANCHORED)["gpus"]
    assert gpus[0] == {"id": "rtx-5090", "price_usd": 1999, "tdp_w": 575, "note": "oc"}
    assert gpus[1] == {"id": "rtx-5090", "price_usd": 1999, "tdp_w": 575, "cooling": "blower", "vendor": "nvidia"}


def test_a_key_written_beside_a_merge_overrides_the_merged_one():
    # yaml.org/type/merge.html: a key of the current mapping overrides the merged ones (a template, then its changes)
    assert parse_yaml("base: &card {id: a, tdp_w: 575}\ngpus:\n- <<: *card\n  id: b\n")["gpus"] == [
        {"id": "b", "tdp_w": 575}]
    # written, it also settles a key two merged mappings give
    assert parse_yaml("a: &a {x: 1, y: 1}\nb: &b {x: 2}\nc:\n  <<: [*a, *b]\n  x: 3\n")["c"] == {"x": 3, "y": 1}


def test_a_key_two_merged_mappings_give_is_refused_not_first_wins():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("a: &a {x: 1}\nb: &b {x: 2}\nc:\n  <<: [*a, *b]\n")
    assert str(info.value).startswith("key 'x' is given by two mappings that '<<' merges (lines 1 and 2)")
    assert info.value.line == 4


def test_two_written_keys_are_a_duplicate_even_beside_a_merge():
    with pytest.raises(YamlProblem) as info:
        parse_yaml("b: &q {x: 1}\nc:\n  <<: *q\n  y: 1\n  y: 2\n")
    msg = str(info.value)
    assert msg.startswith("duplicate key 'y' (first on line 4)")


# ----- the alias limit counts what aliases add; nesting; the C parser and the pure-Python one ---------------

import string  # noqa: E402

import yaml  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from planner.core import yamlio  # noqa: E402
from planner.core.yamlio import MAX_DEPTH, MAX_EXPANDED_NODES  # noqa: E402


def _problem(text: str, parse=parse_yaml) -> YamlProblem:
    with pytest.raises(YamlProblem) as info:
        parse(text)
    return info.value


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_long_file_without_aliases_is_not_an_alias_bomb():
    # 0.8 MB and 208,000 nodes written out, more than MAX_EXPANDED_NODES, and not one alias: each row is
    # 13 nodes (its mapping, 3 keys, 3 values of which one a list, and the list's 6 items); read without the
    # cap on values a scenario has (MAX_NODES), as the catalog loader reads its files
    rows = "".join(f"  - {{id: gpu-{i:06}, memory: {i:06} GiB, tags: [a, b, c, d, e, f]}}\n" for i in range(16_000))
    text = "gpus:\n" + rows
    assert len(text) > 800_000 and 16_000 * 13 > MAX_EXPANDED_NODES and "*" not in text
    doc = parse_yaml(text, max_nodes=None)
    assert len(doc["gpus"]) == 16_000 and doc["gpus"][15_999]["id"] == "gpu-015999"
    assert doc["gpus"].lines[15_999] == 16_001  # 'gpus:' is line 1


def test_aliases_that_add_more_than_the_limit_are_refused():
    # each level doubles: 2^18 = 262,144 leaf references of *l0, more than 200,000 added nodes
    levels = ["l0: &l0 [x]"] + [f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]" for i in range(1, 19)]
    exc = _problem("\n".join(levels) + "\n")
    assert str(exc) == f"expands to more than {MAX_EXPANDED_NODES} values through aliases"
    assert exc.line == 1
    # a few aliases are fine
    assert parse_yaml("a: &a [1, 2]\nb: [*a, *a]\n")["b"] == [[1, 2], [1, 2]]


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_nesting_deeper_than_the_limit_is_refused_the_same_by_both_parsers():
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_yaml(ok) is not None
    for deep in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 5000 + "]" * 5000):
        said = f"is nested too deeply (more than {MAX_DEPTH} mappings or lists one inside another)"
        assert str(_problem(deep)) == said
        assert str(_problem(deep, yamlio._parse_pure)) == said
        assert _problem(deep).hint.startswith("No planner file nests more than a few levels")


def test_without_libyaml_the_pure_python_parser_reads_the_same(monkeypatch):
    doc = "a: &x {b: 1}\nc:\n  <<: *x\n  d: [1, 2]\n"
    with_c = parse_yaml(doc)
    monkeypatch.setattr(yamlio, "_CLoader", None)
    assert parse_yaml(doc) == with_c
    assert str(_problem("a: [1, 2\n")).startswith("YAML syntax error")


def _same(a, b) -> None:
    """Equal values, types and line marks, all the way down."""
    assert type(a) is type(b) and a == b, (a, b)
    if isinstance(a, dict):
        assert (a.line, a.lines) == (b.line, b.lines)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list):
        assert (a.line, a.lines) == (b.line, b.lines)
        for x, y in zip(a, b):
            _same(x, y)


def _outcome(parse, text: str):
    try:
        return "value", parse(text)
    except YamlProblem as exc:
        return "problem", (str(exc), exc.line, exc.hint, exc.path)


#: Pieces of YAML, valid and not, that the two parsers might read differently.
_PIECES = st.sampled_from([
    "a", "b", "key", "x y", "1", "-1", "0x1f", "1e3", "1_000", "true", "no", "~", "null", "2026-01-02",
    "2026-13-45", "'q'", '"d\\n"', '"\\ud800"', "'it''s'", ": ", ":", "- ", "-", "? ", "[", "]", "{", "}", ", ",
    "&a ", "*a", "&b ", "*b", "<<: *a", "!!str ", "!!int ", "!!python/object ", "!x ", "# c", "\n", "\n  ",
    "\n    ", "\n- ", "\t", " ", "|\n  t\n", ">\n  f\n", "---\n", "...\n", "%YAML 1.1\n", "\u2028", "\x85", "é",
    "\u202e", "a: 1\na: 2\n",
])


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=25).map("".join))
def test_the_c_parser_and_the_pure_python_one_agree(text):
    # parse_yaml tries libyaml first and falls back to the pure-Python parser on any problem, so
    # the only possible difference is libyaml accepting (or reading differently) what the pure
    # parser refuses or reads otherwise: values, types, lines and messages must all be the same.
    c_kind, c_value = _outcome(parse_yaml, text)
    p_kind, p_value = _outcome(yamlio._parse_pure, text)
    assert c_kind == p_kind, (text, c_value, p_value)
    if c_kind == "value":
        _same(c_value, p_value)
    else:
        assert c_value == p_value


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.recursive(
    st.one_of(st.integers(), st.floats(allow_nan=False), st.text(string.printable + "é\u2028", max_size=8),
              st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=6), inner, max_size=4)),
    max_leaves=30), st.sampled_from([False, True]), st.sampled_from([None, 2, 4]))
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_dumped_documents_read_the_same_by_both_parsers(doc, flow, indent):
    text = yaml.safe_dump({"root": doc}, default_flow_style=flow, indent=indent, allow_unicode=True)
    c_kind, c_value = _outcome(parse_yaml, text)
    p_kind, p_value = _outcome(yamlio._parse_pure, text)
    assert c_kind == p_kind, (text, c_value, p_value)
    if c_kind == "value":
        _same(c_value, p_value)
    else:
        assert c_value == p_value


def _same_with_lines(a, b) -> bool:
    """Equal values of equal types, with equal ``line``/``lines`` on every mapping and list."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return ((a.line, a.lines) == (b.line, b.lines) and list(a) == list(b)
                and all(_same_with_lines(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return (a.line, a.lines) == (b.line, b.lines) and len(a) == len(b) and all(map(_same_with_lines, a, b))
    return a == b or (a != a and b != b)  # NaN


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_fast_builder_gives_what_pyyamls_constructors_give():
    # planner.core.yamlio._build_plain builds alias-free documents directly from the nodes; PyYAML's
    # construct_document with the planner's constructors is the reference it must equal, lines
    # included, on every shipped catalog file and scenario and on values of each scalar kind.
    from pathlib import Path

    import yaml

    from planner.core import yamlio

    root = Path(__file__).resolve().parents[1]
    texts = [p.read_text(encoding="utf-8") for p in
             sorted(root.glob("catalog/*.yaml")) + sorted(root.glob("scenarios/**/*.yaml"))]
    texts.append("a: [1, -2, 31, 1000, 1.5, .inf, -.nan, true, No, ~, '', 2026-02-01, 2026-02-01 10:00:00]\n"
                 "b: {'3': x, '2.5': y, 'null': z}\nc:\n- - [deep]\n")
    loader_class = yamlio._CLoader or yamlio._Loader
    for text in texts:
        fast, slow = loader_class(text), loader_class(text)
        built = yamlio._build_plain(fast, fast.get_single_node())
        assert _same_with_lines(built, slow.construct_document(slow.get_single_node()))
    # anything else goes PyYAML's way: aliases, merge keys, tags other than the default ones, depth, and
    # a value the planner's constructors refuse (0x1f: planner.core.yamlrules.refuse_other_bases), and a key that
    # YAML 1.1 reads as no text (planner.core.yamlio._key_problem)
    for text in ("a: 0x1f\n", "b: {3: x}\n", "b: {2.5: y}\n", "b: {null: z}\n", "on: 1\n", "a: &x 1\nb: *x\n", "a: &x {b: 1}\nc: {<<: *x}\n", "a: !!set {x}\n", "a: !!omap [b: 1]\n",
                 "[" * (yamlio.MAX_DEPTH + 1) + "]" * (yamlio.MAX_DEPTH + 1)):
        loader = yamlio._Loader(text)
        with pytest.raises(yamlio._NotPlain):
            yamlio._build_plain(loader, loader.get_single_node())
    # a duplicate key leaves the fast builder; the message is PyYAML's path's
    with pytest.raises(YamlProblem, match="duplicate key 'a'"):
        parse_yaml("a: 1\na: 2\n")


def test_a_merge_clash_names_each_values_line_and_a_mapping_reached_twice_is_none():
    # h13b #3: b merges a and sets its own context; '<<: [*b, *a]' then gets context from b (line 4) and from a
    # (line 2): a clash, named at both lines (it said "lines 2 and 2": b had been flattened before it was read)
    text = ("w:\n- &a {name: w1, context: 1024}\n- &b\n  context: 4096\n  <<: *a\n  name: w2\n- <<: [*b, *a]\n"
            "  name: w3\n")
    with pytest.raises(YamlProblem) as info:
        parse_yaml(text)
    said, line = str(info.value), info.value.line
    assert said.startswith("key 'context' is given by two mappings that '<<' merges (lines 4 and 2)"), said
    assert line == 7
    # without b's own context, b's and a's context are one key of one mapping, reached twice: no clash
    same = parse_yaml("w:\n- &a {name: w1, context: 1024}\n- &b\n  <<: *a\n  name: w2\n- <<: [*b, *a]\n  name: w3\n")
    assert same["w"][2] == {"name": "w3", "context": 1024}
