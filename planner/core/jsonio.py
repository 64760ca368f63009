"""Safe reading of a Hugging Face ``config.json``: one JSON object, its top-level keys' lines kept for error
messages (:class:`planner.core.yamlio.LineDict`), NaN, Infinity, numbers beyond a float, integers of more than
100 digits, duplicate keys, lone surrogates and noncharacters refused, each with its line.

Sources: RFC 8259 (section 4: duplicate names leave an object's meaning undefined; section 6: numbers; section 8.2:
strings with lone surrogates); Unicode 15.0 section 23.7 "Noncharacters".
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from planner.core.bidi import bidi_problem
from planner.core.infile import FileProblem, InputFile, read_input
from planner.core.names import NONCHARACTER, NONCHARACTER_WHY, char_name
from planner.core.yamlio import _TOO_DEEP, _TOO_DEEP_HINT, LineDict
from planner.core.yamlrules import YamlProblem


def load_json_mapping(path: Path) -> LineDict:
    """Read a JSON file (a Hugging Face ``config.json``) whose root must be an object.

    The result is a :class:`LineDict` that knows the line of each top-level key.

    Raises:
        YamlProblem: unreadable, not UTF-8, invalid JSON (with line and column), NaN or
            Infinity, not an object.
    """
    return read_json_mapping(path)[0]


def read_json_mapping(path: Path) -> tuple[LineDict, InputFile]:
    """:func:`load_json_mapping`, with the bytes read (once, for both).

    Raises:
        YamlProblem: as :func:`load_json_mapping`.
    """
    try:
        source = read_input(path)
        text = source.text()
    except FileProblem as exc:
        exc = YamlProblem.of(exc)
        if exc.problem == "is empty":
            exc.hint = 'A config.json is one object of keys and values: {"model_type": "llama", ...}.'
        raise exc from None
    hidden = bidi_problem(text)  # a raw RLO in a string reorders what an editor shows; an escape ("\u202e") does not
    if hidden is not None:
        raise YamlProblem(*hidden)
    from planner.core.yamlio import MAX_DEPTH

    if text.count("[") + text.count("{") > MAX_DEPTH and (deep := _deep_line(text)) is not None:
        # the cap the message states, as YAML's: json itself goes on to about 1,000 levels (h36b 4)
        raise YamlProblem(_TOO_DEEP, deep, _TOO_DEEP_HINT)
    try:
        data = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates,
                          parse_float=_finite_float, parse_int=_bounded_int)
    except _TooLong as exc:
        line = _line_of(text, r"(?<![\w.])" + re.escape(exc.name))
        raise YamlProblem(f"invalid JSON: the number {exc.name}... has more than {_MAX_JSON_INT_DIGITS} digits, more "
                          "than any config value", line, "Write the value as the model publishes it.") from exc
    except _Infinite as exc:
        line = _line_of(text, r"(?<![\w.])" + re.escape(exc.name) + r"(?![\w.])")
        raise YamlProblem(f"invalid JSON: {exc.name} is beyond the largest number a config may hold (it reads as "
                          "infinity)", line, "Write the value as the model publishes it (no number reaches 1.8e308).") \
            from exc
    except _Underflow as exc:
        line = _line_of(text, r"(?<![\w.])" + re.escape(exc.name) + r"(?![\w.])")
        raise YamlProblem(f"invalid JSON: {exc.name} is below the smallest number a float holds (about 4.9e-324; it "
                          "reads as 0)", line, "Write the value as the model publishes it.") from exc
    except _BadText as exc:
        line = _line_of(text, r'"' + re.escape(json.dumps(exc.name)[1:-1]) + r'"\s*:')
        # the character as U+DC80, not '\udc80': the CLI shows a quoted '\udcXX' as the byte '\xXX' it stands for in a
        # path (planner.core.names.byte_escapes), but a file decoded as UTF-8 holds no such byte, only the JSON escape
        why = ("which no text planner reads may hold (it cannot be written as UTF-8)" if exc.what == "a lone "
               "surrogate" else NONCHARACTER_WHY)  # h36b 5: a noncharacter is valid UTF-8; h39b 13: one reason
        raise YamlProblem(f"invalid text at key {exc.name!a}: it holds U+{ord(exc.char):04X}, {exc.what}, {why}", line,
                          "Copy the config.json as the model publishes it.") from exc
    except _Duplicate as exc:
        line = _line_of(text, r'"' + re.escape(exc.name) + r'"\s*:', occurrence=2)
        raise YamlProblem(f"invalid JSON: key {exc.name!r} appears twice in one object", line,
                          "Keep one of the two values; JSON readers differ on which one wins.") from exc
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Invalid control character") and 0 <= exc.pos < len(exc.doc):
            ch = exc.doc[exc.pos]  # json says 'Invalid control character at' (h21b M9: 'at at', no name)
            raise YamlProblem(f"invalid JSON: a raw control character {char_name(ch)} inside a text at line "
                              f"{exc.lineno} column {exc.colno}", exc.lineno, _control_hint(ch)) from exc
        hint = next((h for start, h in _JSON_HINTS if exc.msg.startswith(start)), None)
        raise YamlProblem(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", exc.lineno,
                          hint) from exc
    except _Constant as exc:
        line = _line_of(text, r"(?<![\w\"])" + re.escape(exc.name) + r"(?![\w\"])")
        raise YamlProblem(f"invalid JSON: {exc.name} is not a number a config may hold", line,
                          "Write a number, or null where the value is unknown.") from exc
    except ValueError as exc:
        raise YamlProblem(f"invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise YamlProblem(_TOO_DEEP, _deep_line(text), _TOO_DEEP_HINT) from exc
    if not isinstance(data, dict):
        raise YamlProblem("the top level is not a JSON object", 1,
                          'A config.json is one object of keys and values: {"model_type": "llama", ...}.')
    return _with_key_lines(data, text), source


#: What to change for the usual JSON mistakes, by the start of json's message.
_JSON_HINTS = (
    ("Expecting ',' delimiter", "Put a ',' after each value but the last (one is missing before this point)."),
    ("Expecting property name", "Keys are in double quotes, and the last value has no ',' after it."),
    ("Expecting value", "A value is missing or not JSON (texts in double quotes; true, false, null in lower case)."),
    ("Invalid control character", "Write a line break inside a text as \\n."),
    ("Extra data", "A config.json holds one object; remove what follows its closing '}'."),
)


def _control_hint(ch: str) -> str:
    """What to write instead of a raw control character inside a JSON text: its JSON escape."""
    if ch in "\n\r":
        return "Write a line break inside a text as \\n."
    if ch == "\t":
        return "Write a tab inside a text as \\t."
    return f"Remove it, or write it escaped as \\u{ord(ch):04x} if the model publishes it so."


class _Constant(ValueError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(name)


def _refuse_constant(name: str) -> None:
    raise _Constant(name)


class _Infinite(_Constant):
    """A JSON number too large for a float (1e400): json reads it as infinity, which no config value is."""


class _Underflow(_Constant):
    """A JSON number not 0 but too small for a float (1e-400): json reads it as 0.0, which was never written."""


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Infinite(text)
    if value == 0 and re.search(r"[1-9]", text.lower().partition("e")[0]):
        raise _Underflow(text)  # h17b #3: '1e-400' is no 0
    return value


class _Duplicate(_Constant):
    """A key given twice in one JSON object (``name`` is the key)."""


class _TooLong(_Constant):
    """A JSON whole number of more digits than any config value has (``name``: its first digits)."""


#: The most digits a config.json whole number is read with (Python reads at most 4,300 into an int:
#: sys.get_int_max_str_digits; a vocabulary or a context has at most 7 or 8).
_MAX_JSON_INT_DIGITS = 100


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_JSON_INT_DIGITS:
        raise _TooLong(text[:20])
    return int(text)


def _line_of(text: str, pattern: str, occurrence: int = 1) -> int | None:
    """The 1-based line of the ``occurrence``-th match of ``pattern`` in ``text``; None if fewer."""
    for k, m in enumerate(re.finditer(pattern, text), 1):
        if k == occurrence:
            return text.count("\n", 0, m.start()) + 1
    return None


class _BadText(_Constant):
    """A JSON text (key or value) holding a lone surrogate or a noncharacter (``name``: its key)."""

    def __init__(self, name: str, char: str, what: str) -> None:
        super().__init__(name)
        self.char, self.what = char, what


#: A lone surrogate (JSON's "\\ud800" escape decodes to one) or a Unicode noncharacter (U+FDD0..U+FDEF, and
#: the last two code points of each plane): Unicode 15.0 section 23.7 "Noncharacters"; RFC 8259 section 8.2
#: leaves strings with lone surrogates' behaviour unpredictable.
_BAD_CHAR = re.compile(f"[\ud800-\udfff{NONCHARACTER.pattern[1:-1]}]")


def _check_text(key: str, value: Any) -> None:
    """Raise _BadText when ``value`` (a text, or a list holding texts) or ``key`` holds a :data:`_BAD_CHAR`."""
    for text in ([key, value] if not isinstance(value, list) else [key, *value]):
        if isinstance(text, list):
            _check_text(key, text)
        elif isinstance(text, str):
            m = _BAD_CHAR.search(text)
            if m:
                what = "a lone surrogate" if "\ud800" <= m.group() <= "\udfff" else "a Unicode noncharacter"
                raise _BadText(key, m.group(), what)


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object from its ``pairs``; raises _Duplicate for a key given twice (RFC 8259 section 4
    leaves duplicate names' meaning undefined, so a config that has them is ambiguous), _BadText for a
    text holding a lone surrogate or a noncharacter (:data:`_BAD_CHAR`)."""
    out: dict = {}
    for k, v in pairs:
        _check_text(k, v)
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _with_key_lines(data: dict, text: str) -> LineDict:
    """``data`` as a LineDict with the 1-based line of each top-level key of the JSON ``text``."""
    out = LineDict(data)
    out.line = 1
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    try:
        i = ws.match(text, 0).end() + 1  # after '{'
        while True:
            i = ws.match(text, i).end()
            if text[i] == "}":
                break
            start = i
            key, i = json.decoder.scanstring(text, i + 1)
            out.lines[key] = text.count("\n", 0, start) + 1
            i = ws.match(text, i).end() + 1  # after ':'
            _, i = decoder.raw_decode(text, ws.match(text, i).end())
            i = ws.match(text, i).end()
            if text[i] == ",":
                i += 1
    except (ValueError, IndexError, RecursionError):
        pass  # lines are a courtesy; the data is already valid
    return out


def _deep_line(text: str) -> int | None:
    """The 1-based line of ``text`` (JSON) where its objects and arrays, one inside another, first pass
    planner.core.yamlio.MAX_DEPTH: '[' and '{' counted outside strings (h34b m14: said with no line)."""
    from planner.core.yamlio import MAX_DEPTH

    depth, in_text, escaped, line = 0, False, False, 1
    for ch in text:
        if ch == "\n":
            line += 1
        if in_text:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_text = False
        elif ch == '"':
            in_text = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif ch in "]}":
            depth -= 1
    return None
