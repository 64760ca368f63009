"""Safe reading of user YAML files (JSON configs: :mod:`planner.core.jsonio`), keeping line numbers for error messages.

Only PyYAML's safe constructors are used: tags that would construct Python objects are refused.
Mappings come back as :class:`LineDict` and sequences as :class:`LineList`, which remember
the 1-based line of each key or item. Documents whose aliases would add more than
``MAX_EXPANDED_NODES`` nodes when expanded ("billion laughs") are refused (a long file written
out without aliases is not), as are documents of more than ``MAX_NODES`` values (unless the caller lifts
that cap, as the catalog loader does), documents nested more than ``MAX_DEPTH`` levels, duplicate
keys, empty files, non-UTF-8 files and roots that are not mappings. Files are read through
:func:`planner.core.infile.read_input` (once, bounded, regular files and shell pipes only).

Speed: the document is parsed by libyaml's C parser (PyYAML's ``CSafeLoader``, about 7x faster
than the pure-Python one) when PyYAML was built with it. A plain document (no anchors, aliases,
tags, merge keys: every catalog file) is built straight from the parser's events
(:func:`_build_from_events`, no node objects); any other goes through libyaml's composer, whose
nodes carry the same line marks, and PyYAML's constructors. When the C parser refuses a
document, or anything fails after it, the document is read again with the pure-Python parser,
whose message is the one reported: the messages and line numbers are those of the pure-Python
loader, with or without libyaml. Without libyaml (``yaml.__with_libyaml__`` false) the
pure-Python loader is used throughout.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import yaml

from planner.core.bidi import bidi_problem
from planner.core.infile import MAX_FILE_BYTES, FileProblem, InputFile, read_input
from planner.core.names import clip_text
from planner.core.yamllookalike import lookalike_slip
from planner.core.yamlrules import (MERGE_TAG, Base60Problem, OtherBaseProblem, YamlProblem, comment_value,
                                    flow_comment, short_tag, tag_problem, written_tag, refuse_merge_clashes,
                                    flow_thousands, hidden_break, key_problem, noncharacter_problem, refuse_base_60,
                                    refuse_other_bases,
                                    refuse_separators, special_value, syntax_hint, syntax_slip)

__all__ = ["LineDict", "LineList", "YamlProblem", "MAX_EXPANDED_NODES", "MAX_NODES", "MAX_DEPTH", "MAX_FILE_BYTES", "read_text",
           "parse_yaml", "load_mapping", "read_mapping", "parse_mapping"]

#: Refuse documents whose aliases, expanded, would add more than this many nodes to those written.
MAX_EXPANDED_NODES = 200_000
#: Refuse a scenario, workload or calibration file of more than this many values (each mapping, list, key and
#: item counts one; an alias one), counted while the file is parsed, before any other work on it (h30b N5): a
#: shipped scenario holds a few hundred, so 100,000 leaves room for hundreds of workloads and a grid of pasted
#: configs, and bounds the work on a file far inside the 20 MiB input cap (a flow list of 2 M numbers took 34 s
#: and 1.2 GB before its refusal). Catalog files pass ``max_nodes=None``: an imported cloud.yaml holds tens of
#: values a row, over a million for a 40,000-row import.
MAX_NODES = 100_000
#: Refuse documents nested deeper than this many mappings or lists (no planner file nests ten).
MAX_DEPTH = 200
_TOO_DEEP = f"is nested too deeply (more than {MAX_DEPTH} mappings or lists one inside another)"
_TOO_DEEP_HINT = ("No planner file nests more than a few levels (a config.json's quantization_config, a "
                  "scenario's workloads): check for brackets that are never closed, or a file of another kind.")


class LineDict(dict):
    """A dict that remembers the line of each key (``lines``) and of itself (``line``), and the text of each
    plain scalar read as a number (``written``: ``mpn: 1.50`` -> '1.50', which reads as 1.5), for hints.

    ``merged``: each key a merge key brought in (``<<: *anchor``) rather than written here, with the line of that
    ``<<`` in this mapping and, when ``<<`` named an anchored list (``<<: *a_list``: YAML merges each mapping in it),
    the list's line (else None); ``lines`` gives where the key itself is written (the anchor's mapping). An error
    about such a key names the ``<<`` line too (planner.core.fields.Entry.error): the anchor's line belongs to
    another entry, and YAML cannot unset a merged key."""

    line: int | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines: dict[Any, int] = {}
        self.written: dict[Any, str] = {}
        self.merged: dict[Any, tuple[int, int | None]] = {}


class LineList(list):
    """A list that remembers the line of each item (``lines``) and of itself (``line``)."""

    line: int | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines: list[int] = []


class _Building(yaml.constructor.SafeConstructor):
    """Safe constructors that build LineDict/LineList and refuse duplicate keys (both parsers).

    A value PyYAML's safe constructors cannot build (``2026-13-45`` read as a date, ``!!int x``)
    becomes a :class:`YamlProblem` at that value's line instead of a bare Python exception.
    """

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        tag = getattr(node, "written_tag", None)  # set by _Loader.compose_node: a tag the file writes
        if tag is not None:
            raise tag_problem(node, tag)
        try:
            return super().construct_object(node, deep=deep)
        except (YamlProblem, yaml.YAMLError, RecursionError):
            raise
        except (ValueError, TypeError, LookupError, AttributeError, OverflowError) as exc:
            raise _unbuildable(node) from exc

    def construct_yaml_str(self, node: yaml.Node) -> str:
        value = super().construct_yaml_str(node)
        if _SURROGATE.search(value):
            raise surrogate_problem(value, node.start_mark.line + 1)
        return value


    def construct_yaml_bool(self, node: yaml.Node) -> bool:
        return super().construct_yaml_bool(node)

    def construct_yaml_int(self, node: yaml.Node) -> int:
        refuse_base_60(node)
        refuse_other_bases(node)
        refuse_separators(node)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: yaml.Node) -> float:
        refuse_base_60(node)
        refuse_separators(node)
        value = super().construct_yaml_float(node)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer() and isinstance(node.value, str):
            from decimal import Decimal, InvalidOperation

            from planner.core.units import exact_float  # '2.9999999999999999' is no whole number though its float is

            try:
                return exact_float(value, Decimal(node.value.replace("_", "")), node.value)
            except InvalidOperation:
                return value
        return value


_SURROGATE = re.compile("[\ud800-\udfff]")
#: A high surrogate then a low one: the two '\\u' escapes JSON and JavaScript write for a character beyond
#: U+FFFF ('\\ud83d\\ude00' for U+1F600), which YAML reads one by one, as two halves of no character.
_PAIR = re.compile("([\ud800-\udbff])([\udc00-\udfff])")


def surrogate_problem(value: str, line: int) -> YamlProblem:
    """The problem of a text ``value`` (at ``line``) holding a surrogate, which only an escape can write: a pair
    is named as the pair it is with the 32-bit escape of its character ('\\U0001F600'; the YAML specifications,
    "Escape Sequences", ns-esc-32-bit), a lone one as what the file writes ('\\ud800') (h26b M6)."""
    pair = _PAIR.search(value)
    first = _SURROGATE.search(value)
    if pair is not None and pair.start() == first.start():
        high, low = (ord(c) for c in pair.groups())
        code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)  # RFC 2781 section 2.2 (UTF-16 decoding)
        return YamlProblem(f"a text holds the escapes of a surrogate pair (\\u{high:04x}\\u{low:04x}, as JSON and "
                           f"JavaScript write U+{code:04X}), which YAML reads as two halves, not as "
                           "that character", line, f"Write the character itself, or its \\U{code:08X} escape.")
    return YamlProblem(f"a text holds an escape of a lone surrogate (\\u{ord(first.group()):04x}), which is not a "
                       "character", line, "Write the character itself, or its \\U0001xxxx escape.")


def _keeps_text(value: Any) -> bool:
    """Whether a value's text is kept as the file writes it (LineDict.written), for messages: a number ('1.50'
    reads as 1.5) or a date and time ('2026-11-01T00:00:00' reads as a datetime shown '2026-11-01 00:00:00')."""
    import datetime as _dt

    # a float subclass too: planner.core.units.NotWhole, the float of '249.999999999999999999' (h19b #1)
    return isinstance(value, (int, float, _dt.datetime)) and not isinstance(value, bool)


def _not_a_date_hint(value: str) -> str:
    """The hint of a YYYY-MM-DD that is no date ('2026-02-29', '2026-13-45'): what the month allows; quoting is
    hinted only for a text field (a date field such as as_of refuses the quoted text as well)."""
    import calendar

    m = re.match(r"\s*([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})", value)
    why = ""
    if m is not None:
        year, month = int(m.group(1)), int(m.group(2))
        if not 1 <= month <= 12:
            why = f" (the month is 01 to 12, not {m.group(2)})"
        else:
            last = calendar.monthrange(year, month)[1]
            why = f" ({year}-{month:02d} has {last} days: its last is {year}-{month:02d}-{last:02d})"
    return f"Write a real date as YYYY-MM-DD{why}; only where a text belongs (notes), quote it."


def _unbuildable(node: yaml.Node) -> YamlProblem:
    line = node.start_mark.line + 1
    value = node.value if isinstance(node, yaml.ScalarNode) else None
    tag = short_tag(node.tag or "")
    if tag == "!!timestamp" and isinstance(value, str):
        return YamlProblem(f"{value!r} looks like a date but is not one", line, _not_a_date_hint(value))
    if tag in ("!!int", "!!float") and isinstance(value, str) and _LONG_NUMBER.fullmatch(value):
        digits = sum(ch.isdigit() for ch in value)  # over Python's int() limit (sys.get_int_max_str_digits)
        return YamlProblem(f"the number {value.lstrip('+')[:20]}...({digits:,} digits) is too long to read", line,
                           "No count, size or price planner reads is that long: check the value, or quote it if it is a text.")
    shown = repr(value) if isinstance(value, str) else "the value"
    return YamlProblem(f"{clip_text(shown)} cannot be read as {tag}", line, "Remove the tag or correct the value.")


#: A plain decimal number (YAML 1.1 int or float, '_' allowed between digits) of more than 20 characters: one
#: that the int or float constructor refused for its length (Python's 4,300-digit limit, CVE-2020-10735).
_LONG_NUMBER = re.compile(r"[-+]?[0-9][0-9_]{20,}(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?")


_Building.add_constructor("tag:yaml.org,2002:str", _Building.construct_yaml_str)
_Building.add_constructor("tag:yaml.org,2002:int", _Building.construct_yaml_int)
_Building.add_constructor("tag:yaml.org,2002:float", _Building.construct_yaml_float)
_Building.add_constructor("tag:yaml.org,2002:bool", _Building.construct_yaml_bool)


def _construct_mapping(loader: _Building, node: yaml.MappingNode) -> LineDict:
    # Keys written in this mapping, as opposed to those a merge key (<<: *anchor) brings in. Each key comes
    # from one place: a key two merged mappings give, or one merged and written, is refused
    # (planner.core.yamlrules.refuse_merge_clashes), as two written keys are (a duplicate).
    # the mapping as written, kept before flatten_mapping adds merged keys to it (a mapping merged later, by an
    # alias, is read as written: which keys were its own is what tells a clash from a key reached twice)
    written_values = loader.__dict__.setdefault("_planner_written_values", {})
    written_values.setdefault(id(node), (node, list(node.value)))
    if any(k.tag == MERGE_TAG for k, _ in node.value):
        refuse_merge_clashes(node, {i: v for i, (_, v) in written_values.items()})
    written = {id(k) for k, _ in node.value if k.tag != MERGE_TAG}
    sources = _merge_sources(node)
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    merged: set[Any] = set()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise YamlProblem("a mapping key must be a plain value", key_node.start_mark.line + 1) from exc
        if not isinstance(key, str) and isinstance(key_node, yaml.ScalarNode):
            raise YamlProblem(*key_problem(key, key_node, value_node))
        from_merge = id(key_node) not in written
        if key in result and key in merged:
            if from_merge:
                continue  # an earlier merged mapping already gave it
            merged.discard(key)  # the written key overrides the merged one
        elif key in result:
            raise YamlProblem(
                f"duplicate key {key!r} (first on line {result.lines[key]})",
                key_node.start_mark.line + 1,
                "Remove one of them; a repeated key would silently replace the first.",
            )
        if from_merge:
            merged.add(key)
            result.merged[key] = next(((line, listed) for line, source, listed in sources
                                       if any(k is key_node for k, _ in source.value)), (result.line, None))
        else:
            result.merged.pop(key, None)  # written beside '<<': it overrides the merged one
        try:
            result[key] = loader.construct_object(value_node, deep=True)
        except YamlProblem as exc:
            if isinstance(exc, (Base60Problem, OtherBaseProblem)):
                exc.for_key(str(key))  # its own key, or its list's ('seq_len: [1:00]')
            raise exc.inside(str(key)) from None
        result.lines[key] = key_node.start_mark.line + 1
        if _keeps_text(result[key]) and isinstance(value_node, yaml.ScalarNode):
            result.written[key] = value_node.value  # '1.50', '1.5e+5': as the file writes it
    return result


def _merge_sources(node: yaml.MappingNode) -> list[tuple[int, yaml.MappingNode, int | None]]:
    """The mappings ``node``'s merge keys name, before flattening: (the line of its ``<<``, the mapping node, the
    line of the list that held it when ``<<`` names a list written before it, an anchored one: None for a mapping
    and for a list written at the ``<<`` itself, ``<<: [*a, *b]``). PyYAML flattens each named mapping in place, so
    after :meth:`flatten_mapping` each one's ``value`` holds every key it brings, its own merges included."""
    out: list[tuple[int, yaml.MappingNode, int | None]] = []
    for k, v in node.value:
        if k.tag != MERGE_TAG:
            continue
        line = k.start_mark.line + 1
        if isinstance(v, yaml.MappingNode):
            out.append((line, v, None))
        elif isinstance(v, yaml.SequenceNode):
            listed = v.start_mark.line + 1 if v.start_mark.index < k.start_mark.index else None
            out += [(line, sub, listed) for sub in v.value if isinstance(sub, yaml.MappingNode)]
    return out


def _construct_sequence(loader: _Building, node: yaml.SequenceNode) -> LineList:
    result = LineList()
    result.line = node.start_mark.line + 1
    for i, child in enumerate(node.value):
        try:
            result.append(loader.construct_object(child, deep=True))
        except YamlProblem as exc:
            raise exc.inside(f"[{i}]") from None
        result.lines.append(child.start_mark.line + 1)
    return result


_Building.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Building.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


class _Loader(_Building, yaml.SafeLoader):
    """PyYAML's pure-Python reader, scanner, parser and composer with the planner's constructors. A node whose tag
    the file writes (the event's tag; '!' too) is marked ``written_tag`` (the tag as written), which
    :meth:`_Building.construct_object` refuses; ``tagged`` says the document has one (no fast build then)."""

    tagged = False

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        tag = getattr(event, "tag", None)  # an alias event has none
        node = super().compose_node(parent, index)
        if tag is not None and not isinstance(event, yaml.AliasEvent):
            node.written_tag = written_tag(node)
            self.tagged = True
        return node


class _ResolveOnce:
    """Implicit tags resolved once per distinct plain scalar of a document (its own cache).

    PyYAML's resolver matches a plain scalar against the implicit resolvers of its first
    character; with no path resolvers (the safe loaders add none) the tag depends on the text
    alone, so the same text gets the same tag: catalog files repeat many values (units, kinds,
    booleans). The nodes and tags are those of PyYAML's own ``resolve``.
    """

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is not yaml.ScalarNode or not implicit[0] or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)  # type: ignore[misc]
        try:
            cache = self._tags
        except AttributeError:
            cache = self._tags = {}
        tag = cache.get(value)
        if tag is None:
            tag = cache[value] = super().resolve(kind, value, implicit)  # type: ignore[misc]
        return tag


#: libyaml's C parser and composer with the planner's constructors (None when PyYAML has no libyaml).
_CLoader = type("_CLoader", (_ResolveOnce, _Building, yaml.CSafeLoader), {
    "__doc__": "libyaml's C parser and composer (CSafeLoader) with the planner's constructors."}) \
    if getattr(yaml, "__with_libyaml__", False) and hasattr(yaml, "CSafeLoader") else None


def _node_counts(root: yaml.Node) -> tuple[int, int, int]:
    """(nodes written, nodes after alias expansion, deepest nesting) of a composed document.

    An alias is the anchored node object itself in PyYAML's (and libyaml's) node graph, so a node
    met again is an alias: its expanded size counts again. Sizes are memoised per node (a
    recursive alias counts its node once); the walk is iterative, so depth costs no stack.
    """
    size: dict[int, int] = {}
    depth = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, level, done = stack.pop()
        key = id(node)
        children = ([c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else
                    node.value if isinstance(node, yaml.SequenceNode) else ())
        if done:
            size[key] = 1 + sum(size.get(id(c), 1) for c in children)
            continue
        if key in size:
            continue  # met before: an alias (or still open: a recursive one, counted as 1)
        size[key] = 1
        depth = max(depth, level)
        if children:
            stack.append((node, level, True))
            stack.extend((c, level + 1, False) for c in reversed(children))
    return len(size), size[id(root)], depth


def read_text(path: Path) -> str:
    """Read a user file as UTF-8 text (once, bounded: :func:`planner.core.infile.read_input`).

    Raises:
        YamlProblem: the file is missing, a directory, a device or named pipe, too large, not
            UTF-8, or empty.
    """
    try:
        return read_input(path).text()
    except FileProblem as exc:
        raise YamlProblem.of(exc) from None


def parse_yaml(text: str, *, max_nodes: int | None = MAX_NODES) -> Any:
    """Parse one YAML document safely; see the module docstring for what is refused.

    The C parser is tried first when PyYAML has libyaml; on any problem the pure-Python parser
    reads the document again and its outcome (value or message) is the one given.

    Args:
        text: the document.
        max_nodes: the most values the document may hold (:data:`MAX_NODES`, counted by
            :func:`_refuse_many_nodes` before any other work); None for no cap (catalog files).

    Raises:
        YamlProblem: syntax errors (with line and column), unsafe tags, alias bombs, nesting
            deeper than :data:`MAX_DEPTH`, more than ``max_nodes`` values, duplicate keys, several
            documents in one file.
    """
    # a lone CR or U+2028 hides a line break, an RLO reorders what an editor shows; a noncharacter is refused
    # anywhere, comments included (h39b 13); 'model:<U+00A0>x' reads as one text; "[16,384]" reads as two items; "key: #1" as empty
    early = hidden_break(text) or bidi_problem(text) or noncharacter_problem(text) or lookalike_slip(text)
    if early is not None:
        raise YamlProblem(*early)
    if max_nodes is not None:
        _refuse_many_nodes(text, max_nodes)
    try:
        return _parse_text(text)
    except YamlProblem as exc:
        if exc.problem == _TOO_DEEP and exc.line is None:  # said at the line where the depth passes the cap
            exc.line = _too_deep_line(text)  # (h34b m14)
        raise


def _too_deep_line(text: str) -> int | None:
    """The 1-based line where ``text``'s mappings and lists, one inside another, first pass :data:`MAX_DEPTH`
    (read by the pure-Python parser's events, which nest no Python calls; libyaml's scanner stops at its own
    nesting limit without a line); None when the parser stops before it."""
    depth = 0
    for event in _events(text, fast=False):
        if isinstance(event, (_EVENT.MappingStartEvent, _EVENT.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                return event.start_mark.line + 1
        elif isinstance(event, (_EVENT.MappingEndEvent, _EVENT.SequenceEndEvent)):
            depth -= 1
    return None


def _events(text: str, *, fast: bool) -> Iterator[Any]:
    """The parser's events of ``text`` (libyaml's C parser with ``fast``, else the pure-Python one), until the end
    or the first place the parser refuses (which :func:`parse_yaml` then says); the loader is disposed of when the
    events end or the caller stops reading them."""
    try:  # the pure reader refuses a control character as it is made
        loader = yaml.CSafeLoader(text) if fast else yaml.SafeLoader(text)
    except yaml.YAMLError:
        return
    try:
        while loader.check_event():
            yield loader.get_event()
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()


def _parse_text(text: str) -> Any:
    """:func:`parse_yaml`'s parse, after its checks of the text."""
    if _CLoader is not None and not _PURE_ONLY.search(text) and "!" not in text:
        flows: list[tuple[int, int]] | None = []
        value: Any = _NO_KEY
        try:
            loader = _CLoader(text)
            try:
                value = _build_from_events(loader, flows)
            except _NotPlain:
                flows = None  # the node path below builds it; the flow collections were not all seen
            finally:
                loader.dispose()
            if value is _NO_KEY:
                loader = _CLoader(text)
                try:
                    value = _compose_and_build(loader)
                finally:
                    loader.dispose()
        except Exception:  # noqa: BLE001 - the pure-Python parser says what is wrong, in its words
            value = _NO_KEY
        if value is not _NO_KEY:  # read; the checks below come in the order the pure path takes them
            late = ((flow_thousands(text) if flows is None or _digit_comma_in(text, flows) else None)
                    or comment_value(text) or _yaml_directive(text))
            if late is not None:
                raise late if isinstance(late, YamlProblem) else YamlProblem(*late)
            return value
    late = flow_thousands(text) or comment_value(text) or _yaml_directive(text)
    if late is not None:
        raise late if isinstance(late, YamlProblem) else YamlProblem(*late)
    return _parse_pure(text)


def _refuse_many_nodes(text: str, limit: int) -> None:
    """Refuse ``text`` when it holds more than ``limit`` values, at the line where the count passes it: the
    parser's events are counted (a scalar, a mapping or list, an alias: one each), by libyaml's C parser when
    PyYAML has it and the text is one it reads as the pure parser does (:data:`_PURE_ONLY`), else the pure one;
    counting stops at ``limit`` + 1, so the cost is bounded whatever the file. A text the parser refuses is left
    to :func:`parse_yaml`, which says why.

    Raises:
        YamlProblem: more than ``limit`` values.
    """
    if len(text) * 2 < limit:  # no text holds more values than 1.5 a character ('[?,?]': 7 in 5)
        return
    fast = _CLoader is not None and not _PURE_ONLY.search(text)
    counted = (_EVENT.ScalarEvent, _EVENT.MappingStartEvent, _EVENT.SequenceStartEvent, _EVENT.AliasEvent)
    n = 0
    for event in _events(text, fast=fast):  # a text the parser refuses: parse_yaml reads it again and says why
        if isinstance(event, counted):
            n += 1
            if n > limit:
                raise YamlProblem(
                    f"holds more than {limit:,} values (mappings, lists, keys and items); the count passes "
                    f"{limit:,} here", event.start_mark.line + 1,
                    "A scenario, workload or calibration file holds a few hundred: look for a long list pasted "
                    "in by mistake, or a file of another kind (a catalog file goes under --catalog).")


_DIGIT_COMMA = re.compile(r"[0-9],[0-9]")


def _digit_comma_in(text: str, flows: list[tuple[int, int]]) -> bool:
    """Whether a digit, ',' and a digit stand inside one of the flow collections ``flows`` (the character spans of
    the outermost ``[...]`` and ``{...}`` of ``text``, :func:`_build_from_events`): only there can ',' split a
    number (:func:`planner.core.yamlrules.flow_thousands`, whose token scan of the whole text is then skipped for a
    text whose only such commas are in comments and plain texts: '$1,000' in a catalog's notes)."""
    return any(_DIGIT_COMMA.search(text, start, end) for start, end in flows)


#: Texts the pure-Python parser reads, because libyaml reads them otherwise: characters YAML does
#: not allow (the pure reader names them), tabs (libyaml takes a tab after a plain scalar as
#: white space where PyYAML refuses it: 'a\t'), and the line breaks editors do not show
#: (:func:`planner.core.yamlrules.hidden_break`, which the pure path checks first).
_PURE_ONLY = re.compile(yaml.reader.Reader.NON_PRINTABLE.pattern + "|[\t\x85\u2028\u2029]|\r(?!\n)")

#: A '%YAML' directive in a document's prologue (before '---': only blank, comment and directive lines before it).
_DIRECTIVE = re.compile(r"\A(?:(?:[ \t]*(?:#[^\n]*)?|%[^\n]*)\n)*?%YAML[ \t]+([^\s#]*)")


def _yaml_directive(text: str) -> tuple[str, int, str] | None:
    """(problem, line, hint) for a '%YAML' directive other than 1.1 (h15b #4): PyYAML reads YAML 1.1 whatever the
    file declares, so under '%YAML 1.2' 010 would still read as octal 8 and 'yes' as true; None otherwise."""
    m = _DIRECTIVE.match(text.removeprefix("\ufeff"))
    if m is None or m.group(1) == "1.1":
        return None
    return (f"declares '%YAML {m.group(1)}', but planner reads every file as YAML 1.1 (PyYAML: 010 is octal 8, yes "
            "is true)", text[:m.end()].count("\n") + 1, "Remove the %YAML line and write the values as YAML 1.1 "
            "reads them (docs/scenarios.md).")


# A text holding a '!' (where a tag may be written: '!!int 4', '&a !!str x', '[1, !!int 2]') is read by the
# pure-Python parser alone (parse_yaml), whose composer marks the nodes the file tags (libyaml's composer gives a
# written tag and a resolved one alike). Catalog files hold none; a '!' inside a text ('Hello!') costs only speed.


class _NotPlain(Exception):
    """The fast builder met something it leaves to PyYAML's constructors (see :func:`_build_plain`)."""


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
_SEQ_TAG = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG


def _build_plain(loader: Any, root: yaml.Node) -> Any:
    """The value of a plain document built directly from its nodes: the same LineDict/LineList
    values and lines as PyYAML's construct_document with the planner's constructors, about 3x
    faster (no generator per node, no object cache for aliases, which a plain document has none
    of). Plain: no alias, mappings and lists with the default tags, scalar keys other than merge
    ('<<') and value ('=') keys, nesting within :data:`MAX_DEPTH` as :func:`_node_counts`
    counts it; scalars are built by the loader's own constructor for their tag.

    Raises:
        _NotPlain: anything else (also a duplicate key, an unhashable key, a value its constructor
            refuses), for PyYAML's path to build or to report in its words.
    """
    constructors = loader.yaml_constructors
    surrogate = _SURROGATE.search
    scalar, mapping = yaml.ScalarNode, yaml.MappingNode
    seen: set[int] = set()
    special_keys = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")

    def value_of(node: yaml.Node, level: int) -> Any:
        if level > MAX_DEPTH or id(node) in seen:
            raise _NotPlain  # too deep, or an alias
        seen.add(id(node))
        cls = type(node)
        if cls is scalar:
            tag = node.tag
            if tag == _STR_TAG:
                v = node.value
                if surrogate(v):
                    raise _NotPlain
                return v
            make = constructors.get(tag)
            if make is None or tag in special_keys:
                raise _NotPlain
            try:
                return make(loader, node)
            except Exception as exc:  # noqa: BLE001 - PyYAML's path says what is wrong
                raise _NotPlain from exc
        if cls is mapping:
            if node.tag != _MAP_TAG:
                raise _NotPlain
            out = LineDict()
            out.line = node.start_mark.line + 1
            lines = out.lines
            for k, v in node.value:
                if type(k) is not scalar:
                    raise _NotPlain
                key = value_of(k, level + 1)
                if type(key) is not str:
                    raise _NotPlain  # a key YAML 1.1 reads as no text: planner.core.yamlrules.key_problem says so
                try:
                    if key in out:
                        raise _NotPlain  # a duplicate key
                except TypeError:
                    raise _NotPlain from None  # an unhashable key
                out[key] = value_of(v, level + 1)
                lines[key] = k.start_mark.line + 1
                if type(v) is scalar and _keeps_text(out[key]):
                    out.written[key] = v.value  # as the file writes it (LineDict.written)
            return out
        if node.tag != _SEQ_TAG:
            raise _NotPlain
        seq = LineList()
        seq.line = node.start_mark.line + 1
        append, lines = seq.append, seq.lines
        for c in node.value:  # a loop, not a generator: one stack frame per level of nesting
            append(value_of(c, level + 1))
            lines.append(c.start_mark.line + 1)
        return seq

    return value_of(root, 1)


_EVENT = yaml.events
_NO_KEY: Any = object()  # the mapping being built waits for a key, not for a value


def _build_from_events(loader: Any, flows: list[tuple[int, int]] | None = None) -> Any:
    """The value of a plain document built directly from libyaml's parser events (``loader`` a
    :data:`_CLoader`): the same LineDict/LineList values and line marks as :func:`_build_plain` on
    the composed nodes, about twice as fast, because no node objects are made (libyaml's C
    composer calls back into Python to make a node and resolve a tag for every scalar, and the
    builder then walks them again).

    Each node's line is its first event's ``start_mark``, which is the mark the C composer gives
    the node. A plain scalar's value depends on its text alone (the safe loaders have no path
    resolvers), so it is resolved and constructed once per distinct text of the document by the
    loader's own resolver and constructor; quoted and block scalars are texts. A surrogate can
    come only from an escape in a double-quoted scalar (a text holding one goes to the
    pure-Python parser, :data:`_PURE_ONLY`), so only those are searched for one.

    Plain is what :func:`_build_plain` takes, and stricter: no anchor (the composer refuses a
    duplicate anchor) and no alias, no tag, scalar keys other than merge ('<<') and value ('=')
    keys, no duplicate key, nesting within :data:`MAX_DEPTH` counted as :func:`_build_plain` counts
    it, one document.

    ``flows``, when given, receives the character span (start, end) of each outermost flow collection
    (``[...]``, ``{...}``) as it is read.

    Raises:
        _NotPlain: anything else (also an empty stream), for the node path to build or refuse.
            A syntax error is libyaml's exception, as the node path would raise it.
    """
    get_event = loader.get_event
    in_flow, flow_start = 0, 0  # how deep inside a flow collection; where the outermost one began
    resolve, constructors = loader.resolve, loader.yaml_constructors
    surrogate = _SURROGATE.search
    scalar_event, mapping_start, sequence_start = _EVENT.ScalarEvent, _EVENT.MappingStartEvent, _EVENT.SequenceStartEvent
    mapping_end, sequence_end = _EVENT.MappingEndEvent, _EVENT.SequenceEndEvent
    plain: dict[str, Any] = {}  # plain scalar text -> its value, for this document

    def plain_value(text: str, mark: Any) -> Any:
        tag = resolve(yaml.ScalarNode, text, (True, False))
        if tag == _STR_TAG:
            return text
        make = constructors.get(tag)
        if make is None or tag in ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"):
            raise _NotPlain
        try:
            return make(loader, yaml.ScalarNode(tag, text, mark, mark))
        except Exception as exc:  # noqa: BLE001 - PyYAML's path says what is wrong
            raise _NotPlain from exc

    if type(get_event()) is not _EVENT.StreamStartEvent or type(get_event()) is not _EVENT.DocumentStartEvent:
        raise _NotPlain
    # the open mappings and lists, outermost first, each with the key it waits to fill (and that
    # key's line); ``into`` is the innermost one (None before the root), ``key`` its pending key
    stack: list[tuple[Any, Any, int]] = []
    into: Any = None
    key: Any = _NO_KEY
    key_line = 0
    root: Any = _NO_KEY
    while True:
        event = get_event()
        cls = type(event)
        if cls is scalar_event:
            if event.tag is not None or event.anchor is not None or len(stack) >= MAX_DEPTH:
                raise _NotPlain
            text = event.value
            if event.implicit[0]:
                value = plain.get(text, _NO_KEY)
                if value is _NO_KEY:
                    value = plain[text] = plain_value(text, event.start_mark)
            elif event.style == '"' and surrogate(text):
                raise _NotPlain
            else:
                value = text
            line = event.start_mark.line + 1
        elif cls is mapping_start or cls is sequence_start:
            if (event.tag is not None or event.anchor is not None or len(stack) >= MAX_DEPTH
                    or (key is _NO_KEY and type(into) is LineDict)):
                raise _NotPlain  # tagged or anchored, too deep, or a mapping or list as a key
            if in_flow or event.flow_style:  # a flow collection holds flow collections only
                if not in_flow:
                    flow_start = event.start_mark.index
                in_flow += 1
            stack.append((into, key, key_line))
            into = LineDict() if cls is mapping_start else LineList()
            into.line = event.start_mark.line + 1
            key = _NO_KEY
            continue
        elif cls is mapping_end or cls is sequence_end:
            value, line = into, into.line
            into, key, key_line = stack.pop()
            if in_flow:
                in_flow -= 1
                if not in_flow and flows is not None:
                    flows.append((flow_start, event.end_mark.index))
        else:
            raise _NotPlain  # an alias (or the end of the document: the root is complete by then)
        # ``value`` is complete: the root, an item of a list, a key or a value of a mapping
        if into is None:
            root = value
            break
        if type(into) is LineList:
            into.append(value)
            into.lines.append(line)
        elif key is _NO_KEY:
            if type(value) is not str:
                raise _NotPlain  # a key YAML 1.1 reads as no text: planner.core.yamlrules.key_problem says so
            try:
                if value in into:
                    raise _NotPlain  # a duplicate key
            except TypeError:
                raise _NotPlain from None  # an unhashable key
            key, key_line = value, line
        else:
            into[key] = value
            into.lines[key] = key_line
            if cls is scalar_event and _keeps_text(value):
                into.written[key] = text  # as the file writes it (LineDict.written)
            key = _NO_KEY
    if type(get_event()) is not _EVENT.DocumentEndEvent or type(get_event()) is not _EVENT.StreamEndEvent:
        raise _NotPlain  # another document follows
    return root


def _compose_and_build(loader: Any) -> Any:
    node = loader.get_single_node()
    if node is None:
        raise YamlProblem("is empty")
    try:
        if not getattr(loader, "tagged", False):  # a written tag: construct_object refuses it
            return _build_plain(loader, node)
    except _NotPlain:
        pass  # PyYAML's constructors below give the value or the message
    written, expanded, depth = _node_counts(node)
    if depth > MAX_DEPTH:
        raise YamlProblem(_TOO_DEEP, None, _TOO_DEEP_HINT)
    if expanded - written > MAX_EXPANDED_NODES:
        raise YamlProblem(
            f"expands to more than {MAX_EXPANDED_NODES} values through aliases",
            node.start_mark.line + 1,
            "Write the entries out instead of nesting aliases.",
        )
    return loader.construct_document(node)


def _parse_pure(text: str) -> Any:
    """:func:`parse_yaml` with PyYAML's pure-Python parser (the messages the planner gives)."""
    hidden = hidden_break(text) or bidi_problem(text) or noncharacter_problem(text) or lookalike_slip(text)
    if hidden is not None:
        raise YamlProblem(*hidden)
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        if char == "\0":  # ASCII in UTF-16 or UTF-32: NUL bytes in a pattern (h36b 3: UTF-32 was called UTF-16)
            from planner.core.infile import resave_problem

            other = resave_problem(text.encode("utf-8", "surrogateescape"))
            if other is not None:
                raise YamlProblem(*other) from exc
        raise YamlProblem(f"holds the control character U+{ord(char):04X}, which YAML does not allow", line,
                          "Remove it; a planner file is plain text.") from exc
    try:
        return _compose_and_build(loader)
    except YamlProblem:
        raise
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        problem = (exc.problem or "").strip()
        tag = re.match(r"could not determine a constructor for the tag '(.*)'$", problem)
        special = special_value(tag.group(1), mark) if tag else None  # a plain '=' or '<<': no tag was written
        if special:
            raise YamlProblem(*special) from exc
        if tag:
            raise YamlProblem(
                f"the YAML tag {short_tag(tag.group(1))!r} is not allowed",
                mark.line + 1 if mark else None,
                "Only plain YAML is read (mappings, lists, texts, numbers, booleans, dates); tags that would "
                "build objects are refused. Remove the tag.",
            ) from exc
        hint = ("An alias cannot stand for the mapping or list that contains it." if "recursive" in problem
                else "A merge key '<<' takes a mapping (&anchor) or a list of them." if "merg" in problem else None)
        raise YamlProblem(f"YAML {problem}" if problem else "YAML value cannot be read safely",
                          mark.line + 1 if mark else None, hint) from exc
    except yaml.MarkedYAMLError as exc:
        slip = lookalike_slip(text, exc)  # 'model:<U+00A0>x' is one text: the error comes a line or more later
        if slip is not None:
            raise YamlProblem(*slip) from exc
        hidden = flow_comment(text)  # a ' #' inside '{...}' hid the closing bracket: the error is past it
        if hidden is not None:
            raise YamlProblem(f"YAML syntax error: {hidden[0]}", *hidden[1:]) from exc
        mark = exc.problem_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        lead = f"{exc.context}, " if exc.context and exc.context.startswith("expected") else ""
        problem = f"YAML syntax error: {lead}{exc.problem}" + (f" at {where}" if where else "")
        slip = syntax_slip(exc, text)  # 'key:value', '"x" and more', '@x': the line and the fix
        if slip is not None:
            raise YamlProblem(problem, *slip) from exc
        raise YamlProblem(problem, mark.line + 1 if mark else None, syntax_hint(exc, text)) from exc
    except yaml.YAMLError as exc:
        raise YamlProblem(f"YAML error: {exc}") from exc
    except RecursionError as exc:
        raise YamlProblem(_TOO_DEEP, None, _TOO_DEEP_HINT) from exc
    finally:
        loader.dispose()


def load_mapping(path: Path, *, hint: str | None = None, max_nodes: int | None = MAX_NODES) -> LineDict:
    """Read a YAML (or JSON, which is YAML) file whose root must be a mapping.

    Args:
        path: the file.
        hint: what the file should hold, given with the problem when it is empty or its top
            level is not a mapping (e.g. "A scenario holds 'name:' and 'workloads:'.").

    Raises:
        YamlProblem: as :func:`read_text` and :func:`parse_yaml`, or a root that is not a mapping.
    """
    return read_mapping(path, hint=hint, max_nodes=max_nodes)[0]


def read_mapping(path: Path, *, hint: str | None = None, max_nodes: int | None = MAX_NODES,
                 source: InputFile | None = None) -> tuple[LineDict, InputFile]:
    """:func:`load_mapping`, with the bytes read (:class:`planner.core.infile.InputFile`: for the
    file's SHA-256, or its text): the file is read once, for both; ``source``, when given, is those bytes
    already read (by :func:`planner.core.infile.read_input` of ``path``).

    Raises:
        YamlProblem: as :func:`load_mapping`.
    """
    if source is None:
        try:
            source = read_input(path)
        except FileProblem as exc:
            raise YamlProblem.of(exc) from None
    return parse_mapping(source, hint=hint, max_nodes=max_nodes), source


def parse_mapping(source: InputFile, *, hint: str | None = None, max_nodes: int | None = MAX_NODES) -> LineDict:
    """The YAML mapping of bytes already read (see :func:`load_mapping`).

    Raises:
        YamlProblem: as :func:`load_mapping`.
    """
    try:
        data = parse_yaml(source.text(), max_nodes=max_nodes)
    except FileProblem as exc:
        exc = YamlProblem.of(exc)
        if exc.problem == "is empty" and exc.hint is None:
            exc.hint = hint
        raise exc from None
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value" if data is not None else "empty"
        raise YamlProblem(f"the top level is {kind}, not a mapping of keys to values", 1, hint)
    return data

