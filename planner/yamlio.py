"""Safe reading of user YAML and JSON files, keeping line numbers for error messages.

Only PyYAML's safe loader is used: tags that would construct Python objects are refused.
Mappings come back as :class:`LineDict` and sequences as :class:`LineList`, which remember
the 1-based line of each key or item. Documents whose aliases would expand past
``MAX_EXPANDED_NODES`` nodes ("billion laughs") are refused, as are duplicate keys,
empty files, non-UTF-8 files and roots that are not mappings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

#: Refuse documents whose alias expansion would exceed this many nodes.
MAX_EXPANDED_NODES = 200_000
#: Refuse files larger than this many bytes (a catalog is a few hundred KiB).
MAX_FILE_BYTES = 20 * 2**20


class LineDict(dict):
    """A dict that remembers the line of each key (``lines``) and of itself (``line``)."""

    line: int | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines: dict[Any, int] = {}


class LineList(list):
    """A list that remembers the line of each item (``lines``) and of itself (``line``)."""

    line: int | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines: list[int] = []


class YamlProblem(ValueError):
    """A file cannot be read as the expected document; carries the 1-based ``line``."""

    def __init__(self, problem: str, line: int | None = None, hint: str | None = None) -> None:
        self.problem = problem
        self.line = line
        self.hint = hint
        super().__init__(problem)


class _Loader(yaml.SafeLoader):
    """SafeLoader that builds LineDict/LineList and refuses duplicate keys."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise YamlProblem("a mapping key must be a plain value", key_node.start_mark.line + 1) from exc
        if key in result:
            raise YamlProblem(
                f"duplicate key {key!r} (first on line {result.lines[key]})",
                key_node.start_mark.line + 1,
                "Remove one of them; a repeated key would silently replace the first.",
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    result = LineList()
    result.line = node.start_mark.line + 1
    for child in node.value:
        result.append(loader.construct_object(child, deep=True))
        result.lines.append(child.start_mark.line + 1)
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Number of nodes after alias expansion, memoised per node identity."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # guards against recursive aliases
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(c, memo) for c in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    memo[key] = size
    return size


def read_text(path: Path) -> str:
    """Read a user file as UTF-8 text.

    Raises:
        YamlProblem: the file is missing, a directory, too large, not UTF-8, or empty.
    """
    try:
        if path.is_dir():
            raise YamlProblem("is a directory, not a file")
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise YamlProblem("no such file") from exc
    except PermissionError as exc:
        raise YamlProblem("cannot be read (permission denied)") from exc
    except OSError as exc:
        raise YamlProblem(f"cannot be read ({exc.strerror or exc})") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise YamlProblem(f"is {len(raw)} bytes, more than the {MAX_FILE_BYTES} a planner input may be")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlProblem(f"is not UTF-8 text (byte 0x{raw[exc.start]:02x})", line, "Save it as UTF-8.") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise YamlProblem("is empty")
    return text


def parse_yaml(text: str) -> Any:
    """Parse one YAML document safely; see the module docstring for what is refused.

    Raises:
        YamlProblem: syntax errors (with line and column), unsafe tags, alias bombs,
            duplicate keys, several documents in one file.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise YamlProblem("is empty")
        if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
            raise YamlProblem(
                f"expands to more than {MAX_EXPANDED_NODES} values through aliases",
                node.start_mark.line + 1,
                "Write the entries out instead of nesting aliases.",
            )
        return loader.construct_document(node)
    except YamlProblem:
        raise
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        tag = (exc.problem or "").strip()
        raise YamlProblem(
            f"YAML {tag}" if tag else "YAML value cannot be read safely",
            mark.line + 1 if mark else None,
            "Only plain YAML (mappings, lists, strings, numbers, booleans, dates) is read; remove the tag.",
        ) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = f"YAML syntax error: {exc.problem}" + (f" at {where}" if where else "")
        raise YamlProblem(problem, mark.line + 1 if mark else None) from exc
    except yaml.YAMLError as exc:
        raise YamlProblem(f"YAML error: {exc}") from exc
    except RecursionError as exc:
        raise YamlProblem("is nested too deeply") from exc
    finally:
        loader.dispose()


def load_mapping(path: Path) -> LineDict:
    """Read a YAML (or JSON, which is YAML) file whose root must be a mapping.

    Raises:
        YamlProblem: as :func:`read_text` and :func:`parse_yaml`, or a root that is not a mapping.
    """
    data = parse_yaml(read_text(path))
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise YamlProblem(f"the top level is {kind}, not a mapping of keys to values", 1)
    return data


def load_json_mapping(path: Path) -> dict:
    """Read a JSON file (a Hugging Face ``config.json``) whose root must be an object.

    Raises:
        YamlProblem: unreadable, not UTF-8, invalid JSON (with line and column), not an object.
    """
    text = read_text(path)
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise YamlProblem(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", exc.lineno) from exc
    except ValueError as exc:
        raise YamlProblem(f"invalid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise YamlProblem("the top level is not a JSON object", 1)
    return data


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a config may hold")
