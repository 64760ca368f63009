"""Hints for a list written without brackets: one text holding several names ('rtx-4090, l40s'), and a
flow mapping whose ',' split a list into keys ('{allowed_gpus: rtx-4090, l40s}'); and the hint for a key
that is not a text.

Moved out of planner.core.fields to keep that module small.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any


def bracket_hint(key: str, value: Any, names: Iterable[str], *, commas: bool = False) -> str | None:
    """'Write the list in brackets: key: [a, b].' when ``value`` is one text holding two or more of ``names``
    separated by commas, blanks or another list separator, ';', '|', '/' or ':' (a list written without
    brackets: 'rtx-4090, l40s', 'q_proj v_proj', 'q_proj;v_proj'; h26b M3), so that the hint keeps every item;
    None otherwise. ``commas``: the value is a command-line option's (or an API keyword's), which takes the
    names comma-separated ('--lora-targets q_proj,v_proj'), not in brackets."""
    if not isinstance(value, str):
        return None
    parts = [p for p in re.split(r"[,;|/:\s]+", value.strip()) if p]
    known = set(names)
    if len(parts) < 2 or not all(p in known for p in parts):
        return None
    if commas:
        return f"That is {len(parts)} names in one text: separate them with commas, {key}: {','.join(parts)}."
    return f"That is {len(parts)} names in one text: write the list in brackets, {key}: [{', '.join(parts)}]."


def flow_list(data: Any, key: str) -> tuple[str, str] | None:
    """(problem, hint) for the unknown ``key`` of ``data`` when it is an item of a list written without brackets
    in a flow mapping: in ``{allowed_gpus: rtx-4090, l40s}`` the ',' separates keys (YAML 1.1, section 7.4
    "Flow Collection Styles"), so 'l40s' is read as a key with no value on the line of 'allowed_gpus'; None
    otherwise."""
    from planner.core.yamllookalike import COLONS

    if any(c == ":" or c in COLONS for c in key):
        return None  # '"task:<U+00A0>infer"': a key glued to its value, not a list item
    lines = getattr(data, "lines", None)
    keys = list(data)
    i = keys.index(key)
    if not lines or data[key] is not None or i == 0 or lines.get(key) is None:
        return None
    same = [k for k in keys if lines.get(k) == lines[key]]
    j = same.index(key)
    start = j - 1
    while start >= 0 and data[same[start]] is None:
        start -= 1
    if start < 0 or not isinstance(data[same[start]], str):
        return None
    head = same[start]
    items = [data[head]]
    for k in same[start + 1:]:
        if data[k] is not None:
            break
        items.append(str(k))
    return (f"unknown key {key!r}: inside {{...}} a ',' separates keys, so {key!r} after '{head}: {data[head]},' is "
            "read as a key of its own", f"Write the list in brackets: {head}: [{', '.join(items)}].")


def key_hint(allowed: Iterable[str]) -> str:
    """The hint for a mapping key that is not a text (a tuple or number given through the API): the section's own
    keys, so the example works where it is followed (a key valid elsewhere would be refused there as unknown)."""
    keys = list(allowed)
    if not keys:
        return "Keys are names (texts)."
    if len(keys) <= 8:
        return "Keys are names: " + ", ".join(repr(k) for k in keys) + "."
    return f"Keys are names such as {keys[0]!r} or {keys[1]!r}."
