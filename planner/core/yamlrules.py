"""Two YAML 1.1 readings the planner's reader (:mod:`planner.core.yamlio`) refuses, each with its message:
line breaks that editors do not show (:func:`hidden_break`), and keys that are read as no text
(:func:`key_problem`). Each gives (problem, line, hint), which the reader raises as its YamlProblem."""

from __future__ import annotations

import re
from typing import Any

import yaml

from planner.core.names import char_name, clip_text


#: NEXT LINE U+0085, LINE SEPARATOR U+2028 and PARAGRAPH SEPARATOR U+2029: line breaks in YAML 1.1
#: (yaml.org/spec/1.1, section 5.4 "Line Break Characters", which PyYAML and libyaml follow), but not in
#: YAML 1.2 (section 5.4: "treated as non-break characters") nor in editors, which count lines by
#: LF, CR LF and CR only: read as breaks, a comment's tail would become a live key and every later
#: line number would be off.
_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]")
_EDITOR_BREAK = re.compile("\r\n|\r|\n")


def hidden_break(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` cannot be read when it holds a :data:`_HIDDEN_BREAK` anywhere (comments and quoted texts
    included), as (problem, line, hint) at the first one, at the line and column an editor shows (lines counted
    by LF, CR LF and CR only); None when it holds none."""
    m = _HIDDEN_BREAK.search(text)
    if m is None:
        return None
    breaks = list(_EDITOR_BREAK.finditer(text, 0, m.start()))
    line = len(breaks) + 1
    column = m.start() - (breaks[-1].end() if breaks else 0) + 1
    return (f"holds {char_name(m.group())} at line {line} column {column}, which YAML 1.1 reads as a line break "
            "though editors show none (what follows it would be read as a new line)", line,
            "Remove it, or use a real line break.")


def key_problem(key: Any, key_node: yaml.ScalarNode, value_node: yaml.Node) -> tuple[str, int, str]:
    """A key YAML 1.1 reads as no text (``on`` as true, ``2026`` as a number, ``~`` as null, a date): every
    key of a planner file is a name, and the key as read ('True') would name nothing the user wrote. The
    hint quotes the key as written (YAML 1.1, "Boolean Language-Independent Type", yaml.org/type/bool.html:
    y, yes, on, off... are booleans; quoted, a scalar is a text). Returns (problem, the key's line, hint)."""
    written = key_node.value
    kind = ("a boolean (" + str(key).lower() + ")" if isinstance(key, bool) else "null" if key is None
            else "a number" if isinstance(key, (int, float)) else "a date" if hasattr(key, "year") else "no text")
    quoted = "'" + clip_text(written).replace("'", "''") + "'"
    value = value_node.value if isinstance(value_node, yaml.ScalarNode) and value_node.style is None else None
    shown = f"{quoted}: {clip_text(value)}" if isinstance(value, str) and value else f"{quoted}:"
    return (f"key {clip_text(written)} is read as {kind} in YAML 1.1, not as a text", key_node.start_mark.line + 1,
            f"Quote it: {shown} (every key planner reads is a text).")


#: A whole number, and the three digits of a thousands group, as plain scalars in a flow collection.
_WHOLE = re.compile(r"[-+]?[0-9]+")
_GROUP = re.compile(r"[0-9]{3}(?:\.[0-9]*)?")


def flow_thousands(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` cannot be read when a flow collection holds a number written with a thousands separator
    (``seq_len: [16,384, 8,192]``, ``{budget_usd: 12,500}``): YAML's flow syntax splits at each ',' (YAML 1.1,
    section 7.4 "Flow Collection Styles"), so the list would be read as [16, 384, 8, 192], silently. As
    (problem, line, hint) at the first one (a whole number, ',' and three digits, no space between);
    None when there is none, or the text is not YAML (the parser then says why)."""
    if not re.search(r"[0-9],[0-9]", text) or not re.search(r"[\[{]", text):
        return None
    loader = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
    tokens = []
    try:
        for token in yaml.scan(text, Loader=loader or yaml.SafeLoader):
            tokens.append(token)
    except yaml.YAMLError:
        return None
    depth = 0
    for i, token in enumerate(tokens):
        if isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
            depth += 1
        elif isinstance(token, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)):
            depth -= 1
        elif depth and isinstance(token, yaml.FlowEntryToken) and 0 < i < len(tokens) - 1:
            before, after = tokens[i - 1], tokens[i + 1]
            if (isinstance(before, yaml.ScalarToken) and isinstance(after, yaml.ScalarToken) and before.plain
                    and after.plain and _WHOLE.fullmatch(before.value) and _GROUP.fullmatch(after.value)
                    and before.end_mark.index == token.start_mark.index
                    and after.start_mark.index == token.end_mark.index):
                written = f"{before.value},{after.value}"
                return (f"{written} inside [...] or {{...}} is read by YAML as two items, {before.value} and "
                        f"{after.value} (a comma separates the items there)", token.start_mark.line + 1,
                        f"Write the number without the separator ({before.value}{after.value})"
                        + ("." if after.value.startswith("0") else
                           f", or put a space after the comma if two items are meant ({before.value}, {after.value})."))
    return None
