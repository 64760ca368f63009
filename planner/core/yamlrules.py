"""YAML 1.1 readings the planner's reader (:mod:`planner.core.yamlio`) refuses, each with its message:
line breaks that editors do not show (:func:`hidden_break`) and keys that are read as no text
(:func:`key_problem`), each as (problem, line, hint), which the reader raises as its :class:`YamlProblem`;
and numbers that would read as another value (:func:`refuse_base_60`, :func:`refuse_separators`,
:func:`refuse_other_bases`), which raise it themselves."""

from __future__ import annotations

import re
from typing import Any

import yaml

from planner.core.infile import FileProblem
from planner.core.names import NONCHARACTER, NONCHARACTER_WHY, char_name, clip_text
from planner.core.shares import share_hint, share_key


#: NEXT LINE U+0085, LINE SEPARATOR U+2028 and PARAGRAPH SEPARATOR U+2029: line breaks in YAML 1.1
#: (yaml.org/spec/1.1, section 5.4 "Line Break Characters", which PyYAML and libyaml follow), but not in
#: YAML 1.2 (section 5.4: "treated as non-break characters") nor in editors; and a CARRIAGE RETURN not
#: followed by LF (an old Mac line end), a break in both YAML versions (section 5.4 lists CR alone) but
#: not in grep, awk, git diff or an editor on Unix, which end lines at LF only: read as breaks, a comment's
#: tail would become a live key and every later line number would be off. CR LF (Windows) is one break
#: to both, and stays.
_HIDDEN_BREAK = re.compile("[\x85\u2028\u2029]|\r(?!\n)")
_EDITOR_BREAK = re.compile("\n")


def hidden_break(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` cannot be read when it holds a :data:`_HIDDEN_BREAK` anywhere (comments and quoted texts
    included), as (problem, line, hint) at the first one, at the line and column an editor shows (lines counted
    by LF, so CR LF counts once); None when it holds none. A file whose line ends are all lone CRs (no LF at
    all) is told so, with the hint to save it with LF line ends."""
    # of the hidden breaks, only CR is ASCII: an ASCII text without one holds none (a search costs ~2 ms a file)
    m = None if text.isascii() and "\r" not in text else _HIDDEN_BREAK.search(text)
    if m is None:
        return None
    breaks = list(_EDITOR_BREAK.finditer(text, 0, m.start()))
    line = len(breaks) + 1
    column = m.start() - (breaks[-1].end() if breaks else 0) + 1
    if m.group() == "\r":
        if "\n" not in text:
            return ("has old Mac line ends (CR alone, no LF), which YAML reads as line breaks but grep, git and "
                    "editors on Unix do not", line,
                    "Save the file with LF line ends (or CR LF), e.g. tr '\\r' '\\n' < old.yaml > new.yaml.")
        return (f"holds a CARRIAGE RETURN (CR, U+000D) not followed by LF at line {line} column {column}, which YAML "
                "reads as a line break though grep and editors show none (what follows it would be read as a new "
                "line)", line, "Remove it, or save the file with LF (or CR LF) line ends throughout.")
    return (f"holds {char_name(m.group())} at line {line} column {column}, which YAML 1.1 reads as a line break "
            "though editors show none (what follows it would be read as a new line)", line,
            "Remove it, or use a real line break.")


def noncharacter_problem(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` (a YAML file's) cannot be read when it holds one of the 66 Unicode noncharacters
    (:data:`planner.core.names.NONCHARACTER`) anywhere, comments included, as (problem, line, hint) at the first one,
    with its line and column; None when it holds none. PyYAML's reader refuses U+FFFE and U+FFFF alone (and would
    call them control characters), a name or text refuses all 66, and the Assumptions sheet copies the file's
    comments: refused here, all 66 are refused alike, with one reason (h39b 13)."""
    m = None if text.isascii() else NONCHARACTER.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    return (f"holds {char_name(m.group())} at line {line} column {column}, a Unicode noncharacter, {NONCHARACTER_WHY}",
            line, "Remove it; a planner file is plain text.")


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
    key = f"key {clip_text(written)}" if written else "an empty key"  # '? ' with nothing after it (h32b M2)
    return (f"{key} is read as {kind} in YAML 1.1, not as a text", key_node.start_mark.line + 1,
            f"Quote it: {shown} (every key planner reads is a text).")


#: A whole number, the three digits of a thousands group, and the digits after a decimal comma, as plain
#: scalars in a flow collection.
_WHOLE = re.compile(r"[-+]?[0-9]+")
_GROUP = re.compile(r"[0-9]{3}(?:\.[0-9]*)?")
#: The first group of a number with thousands separators: 1 to 3 digits, not a lone 0 ('0,5' is a decimal comma).
_LEAD = re.compile(r"[-+]?(?:[1-9][0-9]{0,2})")
_DIGITS = re.compile(r"[0-9]+")


def _tight_comma(tokens: list[Any], i: int) -> tuple[Any, Any] | None:
    """(the scalar before, the scalar after) when flow entry ``tokens[i]`` stands between two plain whole
    numbers with no blank on either side ('0,5'); None otherwise."""
    if not 0 < i < len(tokens) - 1:
        return None
    before, after = tokens[i - 1], tokens[i + 1]
    token = tokens[i]
    if (isinstance(before, yaml.ScalarToken) and isinstance(after, yaml.ScalarToken) and before.plain
            and after.plain and _WHOLE.fullmatch(before.value) and before.end_mark.index == token.start_mark.index
            and after.start_mark.index == token.end_mark.index):
        return before, after
    return None


def _decimal_comma(text: str, tokens: list[Any], opened: list[int], i: int) -> tuple[str, int, str]:
    """The (problem, line, hint) of a decimal comma at flow entry ``tokens[i]``: the hint rewrites the outermost
    open collection (``opened`` its start tokens' indexes) with decimal points, when it fits on one line."""
    before, after = tokens[i - 1], tokens[i + 1]
    written = f"{before.value},{after.value}"
    first, depth, last = tokens[opened[0]], 0, None
    for token in tokens[opened[0]:]:
        if isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
            depth += 1
        elif isinstance(token, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)):
            depth -= 1
            if depth == 0:
                last = token
                break
    whole = text[first.start_mark.index:last.end_mark.index] if last is not None else ""
    head = text[text.rfind("\n", 0, first.start_mark.index) + 1:first.start_mark.index]
    key = re.search(r"([^\s{,\[]+):[ \t]*$", head)
    fixed = (key.group(1) + ": " if key else "") + re.sub(r"(?<=[0-9]),(?=[0-9])", ".", whole)
    shown = (f": {clip_text(fixed)}" if whole and "\n" not in whole and len(fixed) <= 120
             else f" ({before.value}.{after.value})")
    return (f"{written} inside [...] or {{...}} is read by YAML as two items, {before.value} and {after.value} (a "
            "comma separates the items there), not as a decimal comma", tokens[i].start_mark.line + 1,
            f"Write the decimal with a point{shown}.")


def flow_thousands(text: str) -> tuple[str, int, str] | YamlProblem | None:
    """Why ``text`` cannot be read when a flow collection holds a number written with a thousands separator
    (``seq_len: [16,384, 8,192]``, ``{budget_usd: 12,500}``) or a decimal comma (``{utilization: 0,5}``,
    ``[0,25, 0,35]``): YAML's flow syntax splits at each ',' (YAML 1.1, section 7.4 "Flow Collection
    Styles"), so the list would be read as [16, 384, 8, 192], silently, and the mapping as {utilization: 0,
    5: null}. As (problem, line, hint) at the first one; None when there is none, or the text is not YAML
    (the parser then says why). A thousands separator is a whole number, ',' and three digits, no blank
    between (not after a lone 0); a decimal comma is two whole numbers joined by ',' in a flow mapping (where
    a key without a value is never meant), or in a list whose other items are parted by ', ' (so
    ``[1,2,4]`` stays a list of three)."""
    if not re.search(r"[0-9],[0-9]", text) or not re.search(r"[\[{]", text):
        return None
    loader = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
    tokens = []
    try:
        for token in yaml.scan(text, Loader=loader or yaml.SafeLoader):
            tokens.append(token)
    except yaml.YAMLError:
        return None
    opened: list[int] = []
    spaced: dict[int, bool] = {}  # each list's answer, found once: [1,1,...] was quadratic (h19b #2)
    for i, token in enumerate(tokens):
        if isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
            opened.append(i)
        elif isinstance(token, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)):
            if opened:
                opened.pop()
        elif opened and isinstance(token, yaml.FlowEntryToken) and (pair := _tight_comma(tokens, i)):
            before, after = pair
            # a thousands separator starts a number of 1 to 3 digits: '1024,512' and the '1024,512' of
            # '[2048,1024,512]' (its first number is 2048) are lists, not numbers (h19b #3)
            starts = not (i >= 2 and isinstance(tokens[i - 2], yaml.FlowEntryToken) and _tight_comma(tokens, i - 2))
            if _GROUP.fullmatch(after.value) and starts and _LEAD.fullmatch(before.value):
                told = _thousands(tokens, i)
                told.path = _entry_at(text, before.start_mark.index)  # 'constraints.budget_usd' (h15b minor d)
                return told
            if not _DIGITS.fullmatch(after.value):
                continue
            if opened[-1] not in spaced:
                spaced[opened[-1]] = _spaced_entry(tokens, opened[-1])
            if isinstance(tokens[opened[-1]], yaml.FlowMappingStartToken) or spaced[opened[-1]]:
                told = YamlProblem(*_decimal_comma(text, tokens, opened, i))
                told.path = _entry_at(text, before.start_mark.index)
                return told
    return None


def _thousands(tokens: list[Any], i: int) -> YamlProblem:
    """The problem of a number written with thousands separators whose first ',' is flow entry ``tokens[i]``:
    the whole run of ',ddd' groups after it ('64,128,256'), as one number and as the items YAML reads."""
    parts = [tokens[i - 1].value]
    j = i
    while j < len(tokens) - 1 and isinstance(tokens[j], yaml.FlowEntryToken) and _tight_comma(tokens, j) \
            and _GROUP.fullmatch(tokens[j + 1].value):
        parts.append(tokens[j + 1].value)
        j += 2
    if len(parts) > 6:  # [100,100,...] of 20,000 items: the run is named by its start, not written out
        return YamlProblem(f"{','.join(parts[:4])},... inside [...] or {{...}} is read by YAML as {len(parts):,} items "
                           "(a comma separates the items there), though it reads as one number with thousands "
                           "separators", tokens[i].start_mark.line + 1,
                           f"Put a space after each comma if a list is meant ([{', '.join(parts[:3])}, ...]), or "
                           "write the number without separators.")
    written, number = ",".join(parts), "".join(parts)
    two = len(parts) == 2
    items = " and ".join(parts) if two else ", ".join(parts[:-1]) + " and " + parts[-1]
    many = "two" if two else str(len(parts))
    return YamlProblem(f"{written} inside [...] or {{...}} is read by YAML as {many} items, {items} (a comma separates "
                       "the items there)", tokens[i].start_mark.line + 1,
                       f"Write the number without the separator{'' if two else 's'} ({number})"
                       + ("." if parts[1].startswith("0") else f", or put a space after {'the' if two else 'each'} "
                          f"comma if {many} items are meant ({', '.join(parts)})."))


def _entry_at(text: str, index: int) -> str | None:
    """The entry ('constraints.budget_usd', 'constraints.allowed_gpus') whose value holds character ``index`` of
    the YAML ``text``, from the node tree (PyYAML's compose: no values built); a list's item is named by its list,
    since the number there was split into two items. None at the top level or when the text is not YAML."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except Exception:  # noqa: BLE001 - the parser says what is wrong when the file is read
        return None
    steps: list[str] = []
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        pairs = (node.value if isinstance(node, yaml.MappingNode) else
                 [(f"[{i}]", item) for i, item in enumerate(node.value)])
        found = next(((k, v) for k, v in pairs if v.start_mark.index <= index < v.end_mark.index), None)
        if found is None:
            break
        key, node = found
        steps.append(key if isinstance(key, str) else str(key.value))
    while steps and steps[-1].startswith("["):
        steps.pop()
    path = "".join(step if step.startswith("[") or i == 0 else "." + step for i, step in enumerate(steps))
    return path or None


def _spaced_entry(tokens: list[Any], start: int) -> bool:
    """Whether the flow list opened at ``tokens[start]`` has an item separator followed by a blank."""
    depth = 0
    for j in range(start, len(tokens)):
        token = tokens[j]
        if isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
            depth += 1
        elif isinstance(token, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)):
            depth -= 1
            if depth == 0:
                return False
        elif depth == 1 and isinstance(token, yaml.FlowEntryToken) and j + 1 < len(tokens) \
                and tokens[j + 1].start_mark.index > token.end_mark.index:
            return True
    return False


class YamlProblem(FileProblem):
    """A file cannot be read as the expected document; carries the 1-based ``line`` and the
    ``path`` of the value inside the document (e.g. 'extras[0].as_of'; None at the top level)."""

    @classmethod
    def of(cls, exc: FileProblem) -> YamlProblem:
        """``exc`` (a problem of :func:`planner.core.infile.read_input`) as a YamlProblem."""
        if isinstance(exc, YamlProblem):
            return exc
        out = cls(exc.problem, exc.line, exc.hint)
        out.path = exc.path
        return out


class Base60Problem(YamlProblem):
    """A base-60 number (:func:`refuse_base_60`), whose hint gives the reading the field's unit suggests once
    its key is known (:meth:`for_key`)."""

    def __init__(self, text: str, sign: int, parts: list[float], line: int) -> None:
        value: float = 0
        for part in parts:
            value = value * 60 + part
        self.text, self.sign, self.parts, self.key = text, sign, parts, None
        self.shown = f"{sign * value:g}" if isinstance(value, float) else str(sign * value)
        super().__init__(f"{text} is a base-60 number in YAML 1.1 (it reads as {self.shown}), not what it looks like",
                         line, self._hint(""))

    def _hint(self, key: str) -> str:
        text, shown, parts = self.text, self.shown, self.parts
        quote = f", or quote it if it is a text ('{text}')."
        if len(parts) == 2 and re.search(r"(^|_)hours?(_|$)", key):  # hours and minutes, as one decimal number of hours
            hours = self.sign * (parts[0] + parts[1] / 60)
            return f"Write the hours as one plain number ({text} as hours and minutes is {hours:.4g}){quote}"
        if re.search(r"(^|_)(s|seconds?)$", key):  # minutes and seconds (h:mm:ss) in seconds: the base-60 value
            clock = "minutes and seconds" if len(parts) == 2 else "hours, minutes and seconds"
            return f"Write the seconds as one plain number ({text} as {clock} is {shown} s){quote}"
        return f"Write the value as one plain number, without ':'{quote}"

    def for_key(self, key: str) -> None:
        """Give the hint for the field ``key`` (its unit read from its suffix: '_hours', '_s'), the first key
        named: the value's own, or its list's; a key further out is not its field."""
        if self.key is None:
            self.key = key
            self.hint = (f"Quote it: {key}: '{self.text}' ({key} is a text, not a number)." if key in TEXT_KEYS
                         else self._hint(key))


def refuse_base_60(node: yaml.Node) -> None:
    """Refuse a YAML 1.1 base-60 number (``1:30``, which PyYAML reads as 90; ``1:30.5`` as 90.5): a time or
    a ratio written that way would become another number without a word. YAML 1.1, "Integer Language-
    Independent Type" and "Floating-Point" (yaml.org/type/int.html, yaml.org/type/float.html: the
    sexagesimal forms); YAML 1.2 dropped them.

    Raises:
        YamlProblem: with the hint of its field once the mapping that holds it names the key
            (:class:`Base60Problem`)."""
    text = node.value if isinstance(node, yaml.ScalarNode) else None
    if not isinstance(text, str) or ":" not in text:
        return
    sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text.lstrip("+"))
    parts: list[float] = [float(p) if "." in p else int(p) for p in digits.replace("_", "").split(":")]
    raise Base60Problem(text, sign, parts, node.start_mark.line + 1)


def refuse_separators(node: yaml.Node) -> None:
    """Refuse a YAML 1.1 number written with '_' separators (``5_12``, which PyYAML reads as 512; ``1_6`` as
    16): a typo would become another number without a word, and the command line refuses them too (YAML
    1.1, "Integer Language-Independent Type", yaml.org/type/int.html: '_' is ignored; YAML 1.2's core
    schema reads ``1_6`` as a text)."""
    text = node.value if isinstance(node, yaml.ScalarNode) else None
    if not isinstance(text, str) or "_" not in text:
        return
    plain = text.replace("_", "")
    exc = SeparatorProblem(f"{text} is a number with '_' separators in YAML 1.1 (it reads as {plain.lstrip('+')}), "
                           "which may not be what was meant", node.start_mark.line + 1,
                           f"Write the number without separators ({plain.lstrip('+')}), or quote it if it is a text "
                           f"('{text}').")
    exc.written = text
    raise exc


_OTHER_BASES = (("0b", 2, "a binary"), ("0x", 16, "a hexadecimal"), ("0", 8, "an octal"))


def refuse_other_bases(node: yaml.Node) -> None:
    """Refuse a YAML 1.1 integer in another base: ``016`` (octal, which PyYAML reads as 14), ``0b11``
    (binary, 3), ``0x10`` (hexadecimal, 16). A count or a price written with a leading zero would become
    another number without a word (YAML 1.1, "Integer Language-Independent Type",
    yaml.org/type/int.html; YAML 1.2's core schema reads ``016`` as 16 and drops ``0b``)."""
    text = node.value if isinstance(node, yaml.ScalarNode) else None
    if not isinstance(text, str):
        return
    digits = text.lstrip("+-").replace("_", "")
    for prefix, base, word in _OTHER_BASES:
        if digits.startswith(prefix) and len(digits) > len(prefix) and digits != "0":
            body = digits[len(prefix):]
            try:
                value = int(body, base)
            except ValueError:
                return
            sign = "-" if text.startswith("-") else ""
            meant = (f"{sign}{int(body)}" if base == 8 else f"{sign}{value}")
            hint = (f"Write it without the leading zero ({meant}), or quote it if it is a text ('{text}')."
                    if base == 8 else f"Write the value in decimal ({meant}), or quote it if it is a text ('{text}').")
            exc = OtherBaseProblem(f"{text} is {word} number in YAML 1.1 (it reads as {sign}{value}), not what it "
                                   "looks like", node.start_mark.line + 1, hint)
            exc.written = text
            raise exc


#: Keys whose value is always a text (catalog/README.md, docs/scenarios.md): a part number, an id, a name, a
#: note or source, a cloud instance or region name. Their leading-zero value is quoted, never written as a number.
TEXT_KEYS = frozenset({"mpn", "id", "name", "description", "notes", "source", "instance", "region", "seller"})


class OtherBaseProblem(YamlProblem):
    """:func:`refuse_other_bases`'s problem; :meth:`for_key` makes its hint quote-only for a text key."""

    written = ""

    def for_key(self, key: str) -> None:
        """Under ``key`` in :data:`TEXT_KEYS` (``mpn: 0123``) the hint only quotes the value: the number
        without its leading zero would be refused as no text."""
        if key in TEXT_KEYS and self.path is None:
            self.hint = f"Quote it: {key}: '{self.written}' ({key} is a text, not a number)."
        elif share_key(key) and self.path is None:  # a fraction: 01 most likely means 0.1, never 1
            self.hint = share_hint(key, self.written, lambda n: f"{key}: {n}")


class SeparatorProblem(OtherBaseProblem):
    """:func:`refuse_separators`' problem; :meth:`for_key` as :class:`OtherBaseProblem`'s (``mpn: 1_000`` is
    only quoted; ``lora_dropout: 0_1`` gets 0.1, planner.core.shares)."""


#: A value that may have been cut by a comment: ': ' or '- ' and then ' #' and a character other than a blank
#: ('description: #1 choice'); a comment written '# like this', with a blank after '#', is taken for one.
_HASH_VALUE = re.compile(r"[:-][ \t]+#[^ \t\r\n#]")


def _quoted(text: str) -> str:
    """``text`` in YAML single quotes (a quote inside doubled)."""
    return "'" + clip_text(text).replace("'", "''") + "'"


def comment_value(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` cannot be read when a value is empty because ' #' right after 'key: ' started a comment
    (``description: #1 choice for the lab`` reads as an empty description: YAML 1.1, section 4.3.3
    "Comments": a '#' after white space starts a comment, so the text after it is dropped without a word);
    as (problem, line, hint), the hint the value quoted. Only a '#' followed by a character other than a
    blank counts: 'key: # a comment' stays a comment. None when there is no such value, or the text is not
    YAML (the parser then says why)."""
    if not _HASH_VALUE.search(text):
        return None
    loader = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
    before = None
    try:
        for event in yaml.parse(text, Loader=loader or yaml.SafeLoader):
            if isinstance(event, yaml.ScalarEvent) and event.value == "" and event.implicit[0]:
                start = event.start_mark.index
                rest = text[start:text.find("\n", start) if "\n" in text[start:] else len(text)].strip(" \t\r")
                if rest.startswith("#") and len(rest) > 1 and rest[1] not in " \t#":
                    key = before.value if isinstance(before, yaml.ScalarEvent) else None
                    what = f"{clip_text(key)} is empty" if key else "the item is empty"
                    return (f"{what}: YAML reads {_quoted(rest)} after it as a comment (' #' starts one), not as "
                            "the value", event.start_mark.line + 1,
                            f"Quote the text: {clip_text(key) + ': ' if key else '- '}{_quoted(rest)}.")
            before = event
    except yaml.YAMLError:
        return None
    return None


def _comment_in(text: str, start: int, end: int) -> int | None:
    """The index of the first '#' that starts a comment in ``text[start:end]`` (after a blank or at a line's
    start, outside quotes), or None."""
    quote = None
    i = start
    while i < end:
        ch = text[i]
        if quote == "'":
            if ch == "'" and text[i + 1:i + 2] == "'":
                i += 1
            elif ch == "'":
                quote = None
        elif quote == '"':
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = None
        elif ch in "'\"" and (i == 0 or text[i - 1] in " \t\n[{,:"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n"):
            return i
        i += 1
    return None


def flow_comment(text: str) -> tuple[str, int, str] | None:
    """Why ``text`` cannot be read when a flow collection ('{...}', '[...]') is left open because a ' #'
    inside it started a comment, which hides the rest of that line and its closing bracket
    (``{source: #quote 12, as_of: 2026-01-15}``); as (problem, line of the '#', hint), the hint the text
    after '#' quoted. None when no flow collection is left open, or none holds such a '#'."""
    opened: list[Any] = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)):
                opened.append(token)
            elif isinstance(token, (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)) and opened:
                opened.pop()
    except yaml.YAMLError:
        pass
    if not opened:
        return None
    mark = opened[0].start_mark
    at = _comment_in(text, mark.index, len(text))
    if at is None:
        return None
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    m = re.match(r"#[^,}\]\n]*", text[at:])
    meant = m.group(0).rstrip(" \t\r") if m else "#"
    head = text[text.rfind("\n", 0, at) + 1:at]
    key = re.search(r"([^\s{,\[]+):[ \t]*$", head)
    bracket = "{" if isinstance(opened[0], yaml.FlowMappingStartToken) else "["
    return (f"a ' #' at line {line} column {column} starts a comment, which hides the rest of the line, so the "
            f"'{bracket}' opened at line {mark.line + 1} column {mark.column + 1} is never closed", line,
            f"Quote the text that starts with '#': {key.group(1) + ': ' if key else ''}{_quoted(meant)}.")


#: A block key glued to its value ('model:llama-2-7b', '- name:w'): a key, ':' and a character that is neither a
#: blank, ':' nor '/' (so 'https://...' and '10:30' are not taken for one).
_GLUED = re.compile(r"^([ \t]*(?:-[ \t]+)?)([A-Za-z_][A-Za-z0-9_.-]*):([^\s:/#].*)$")
#: A block value that starts with a quote or bracket and has text after its close ('"QLoRA" on one card').
_PART_QUOTED = re.compile(r"^([ \t]*(?:-[ \t]+)?[A-Za-z_][A-Za-z0-9_.-]*:[ \t]+)([\"'\[{].*?)[ \t]*$")
#: A block value that starts with a YAML indicator no plain text may start with (YAML 1.1, section 4.1.2:
#: '@' and '`' are reserved, '%' starts a directive, '|' and '>' a block text).
_INDICATOR = re.compile(r"^([ \t]*(?:-[ \t]+)?[A-Za-z_][A-Za-z0-9_.-]*:[ \t]+)([@`%|>].*?)[ \t]*$")


def _as_text(raw: str) -> str:
    """``raw`` (a value as written) as one single-quoted YAML text: a value wrapped in one kind of quotes
    ('it's fine') loses them, a quote inside is doubled."""
    inner = raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"" else raw
    return "'" + clip_text(inner).replace("'", "''") + "'"


def syntax_slip(exc: yaml.MarkedYAMLError, text: str) -> tuple[int, str] | None:
    """(line, hint) for three common slips PyYAML reports elsewhere or without a fix: a key glued to its value
    ('model:llama-2-7b', which YAML reads as one text, so the error comes a line later), a value that starts
    with a quote or bracket and goes on after its close ('"QLoRA" on one card', 'it's fine'), and a value that
    starts with a reserved indicator ('@team', '`make`', '%50', '| two'). None for any other error."""
    lines = text.split("\n")
    marks = [m.line for m in (exc.context_mark, exc.problem_mark) if m is not None]
    if not marks:
        return None
    first, last = min(marks), max(marks)
    for n in range(max(0, first - 1), min(last, len(lines) - 1) + 1):
        m = _GLUED.match(lines[n].rstrip("\r"))
        if m:
            return (n + 1, f"Write a space after ':': {clip_text(m.group(2))}: {clip_text(m.group(3).strip())}.")
    line = lines[exc.problem_mark.line].rstrip("\r") if exc.problem_mark and exc.problem_mark.line < len(lines) else ""
    m = _INDICATOR.match(line)
    if m and ("cannot start any token" in (exc.problem or "") or "block scalar" in (exc.context or "")):
        return (exc.problem_mark.line + 1, f"A value cannot start with {m.group(2)[0]!r} unquoted (YAML reserves it): "
                                           f"quote the text: {clip_text(m.group(1).strip())} {_as_text(m.group(2))}.")
    m = _PART_QUOTED.match(line)
    if m and "expected <block end>" in (exc.context or "") + (exc.problem or "") \
            and exc.problem_mark.column > len(m.group(1)):
        return (exc.problem_mark.line + 1, "The value starts with a quote or bracket and text goes on after its "
                                           f"close: quote the whole text: {clip_text(m.group(1).strip())} "
                                           f"{_as_text(m.group(2))}.")
    return None


def syntax_hint(exc: yaml.MarkedYAMLError, text: str) -> str | None:
    """What to change for the common YAML syntax errors (the opening bracket or quote, tabs, a backslash
    in double quotes...) of ``text``."""
    context, problem = exc.context or "", exc.problem or ""
    mark = exc.context_mark
    where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "above"
    if "'\\t'" in problem:
        at = exc.problem_mark
        lines = text.split("\n")
        before = lines[at.line][:at.column].rstrip("\t") if at is not None and at.line < len(lines) else ""
        if before.strip(" "):  # text before the tab on its line: the tab is not indentation
            key = re.match(r"[ ]*(?:-[ ]+)*([A-Za-z_][A-Za-z0-9_.-]*):$", before)
            rest = lines[at.line][at.column:].strip(" \t\r")
            if key and rest:
                return f"Write a space after ':', not a tab: {clip_text(key.group(1))}: {clip_text(rest)}."
            return "Write a space there, not a tab; YAML does not allow a tab there."
        return "Indent with spaces; YAML does not allow tabs there."
    if "mapping values are not allowed" in problem:
        return "Quote a value that contains ': ', or put a nested mapping on its own indented lines."
    if "double-quoted" in context and "escape" in problem:
        # YAML 1.1, section 5.6 "Escape Sequences": in double quotes '\' starts an escape ('\n', '\u00e9'),
        # and 'D:\models' holds the unknown '\m'; in single quotes a backslash is a backslash
        start = mark.index if mark else 0
        end = text.find('"', start + 1)
        inside = text[start + 1:end] if mark and 0 < end and "\n" not in text[start:end] else None
        example = f" ({_quoted(inside)})" if inside is not None and "'" not in inside else ""
        return ("Inside double quotes a backslash starts an escape (\\n, \\t, \\u00e9): write the text in single "
                f"quotes{example}, where a backslash is itself, or write each backslash as \\\\.")
    if "flow sequence" in context:
        return f"Close the '[' opened at {where} with ']'."
    if "flow mapping" in context:
        return f"Close the '{{' opened at {where} with '}}'."
    if "quoted scalar" in context:
        return f"Close the quote opened at {where}."
    if "block mapping" in context or "block collection" in context:
        return f"Check the indentation: the entries of the mapping or list that starts at {where} must line up."
    if "undefined alias" in problem:
        return "Define the anchor (&name) before the alias (*name) that uses it."
    if "another document" in problem:
        return "A planner file holds one YAML document; remove the second '---'."
    return None


def special_value(tag: str, mark: Any) -> tuple[str, int | None, str] | None:
    """Why a plain ``=`` or ``<<`` value cannot be read, as (problem, line, hint): YAML 1.1 resolves a lone
    '=' to its value type (yaml.org/type/value.html) and '<<' to its merge key (yaml.org/type/merge.html),
    which no planner field takes, so the message would otherwise name a tag the user never wrote. None for
    another tag."""
    written = {"tag:yaml.org,2002:value": "=", "tag:yaml.org,2002:merge": "<<"}.get(tag)
    if written is None:
        return None
    kind = "the value key !!value" if written == "=" else "the merge key !!merge"
    return (f"YAML 1.1 reads a lone {written!r} as a special value ({kind}), not as a text",
            mark.line + 1 if mark else None, f"Quote it: '{written}'.")


# ----- merge keys ('<<') ----------------------------------------------------------------

MERGE_TAG = "tag:yaml.org,2002:merge"
_MERGE_HINT = ("A merge key '<<' adds the keys of the mappings it names; a key two of them give is ambiguous, as a key "
               "written twice is.")


def _merged_keys(node: yaml.MappingNode, inside: frozenset[int] = frozenset(),
                 written: dict[int, list] | None = None) -> dict[str, yaml.Node]:
    """The keys ``node`` gives to the key node each value comes from: its own keys, and those its merge keys bring
    in where it does not write them (its own win, yaml.org/type/merge.html). A mapping that merges itself is left to
    PyYAML's flatten_mapping, which refuses it."""
    out: dict[str, yaml.Node] = {}
    pairs = (written or {}).get(id(node), node.value)  # as written, before flatten_mapping merged into it
    for key_node, _ in pairs:
        if key_node.tag != MERGE_TAG and isinstance(key_node, yaml.ScalarNode):
            out.setdefault(key_node.value, key_node)
    for key_node, value_node in pairs:
        if key_node.tag == MERGE_TAG:
            subs = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for sub in subs:
                if isinstance(sub, yaml.MappingNode) and id(sub) not in inside:
                    for key, origin in _merged_keys(sub, inside | {id(node)}, written).items():
                        out.setdefault(key, origin)
    return out


def refuse_merge_clashes(node: yaml.MappingNode, written_values: dict[int, list] | None = None) -> None:
    """Refuse a key that two mappings merged by '<<' both give while the mapping does not write it itself: YAML keeps
    the first without a word. A key written beside '<<' overrides the merged ones, as the merge key's
    specification says (yaml.org/type/merge.html: "keys ... in the current mapping ... override" those merged), the
    usual way to reuse a template: that is read, and documented.

    ``written_values``: each mapping's key-value pairs as written (by ``id``), for mappings PyYAML has flattened
    already (a merged mapping whose own '<<' was expanded in place).

    Raises:
        YamlProblem: at the merge key's line, naming the lines the two merged keys come from.
    """
    written = {k.value for k, _ in node.value if k.tag != MERGE_TAG and isinstance(k, yaml.ScalarNode)}
    from_merge: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        if key_node.tag != MERGE_TAG:
            continue
        subs = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for sub in subs:
            if not isinstance(sub, yaml.MappingNode):
                continue  # flatten_mapping refuses it
            for key, origin in _merged_keys(sub, frozenset({id(node)}), written_values).items():
                # the same key of the same mapping reached twice (b merges a, and '<<: [*b, *a]') is no clash
                if key in from_merge and key not in written and from_merge[key] is not origin:
                    first, second = (n.start_mark.line + 1 for n in (from_merge[key], origin))
                    raise YamlProblem(f"key {key!r} is given by two mappings that '<<' merges (lines "
                                      f"{first} and {second}), and YAML would keep the first without a word",
                                      key_node.start_mark.line + 1,
                                      f"Remove {key!r} from one of them, or write it beside '<<' (a key written "
                                      "there overrides the merged ones). " + _MERGE_HINT)
                from_merge.setdefault(key, origin)


def written_tag(node: yaml.Node) -> str:
    """The tag of ``node`` as the file writes it ('!e!int' under '%TAG !e! tag:yaml.org,2002:', a verbatim
    '!<tag:yaml.org,2002:int>'): the text at the node's start, where the parser puts a tagged node's mark;
    :func:`short_tag` of the resolved tag when the mark holds no text (libyaml's marks hold none)."""
    mark = node.start_mark
    buffer = getattr(mark, "buffer", None)
    if isinstance(buffer, str) and isinstance(mark.pointer, int):
        written = re.match(r"(?:&[^\s,\[\]{}]+\s+)?(!<[^>\s]*>|![^\s,\[\]{}]*)",
                           buffer[mark.pointer:mark.pointer + 1000])  # an anchor may come first: '&a !!int'
        if written:
            return written.group(1)
    return short_tag(node.tag or "")


def short_tag(tag: str) -> str:
    """'tag:yaml.org,2002:python/object' -> '!!python/object' (as the user wrote it)."""
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix):] if tag.startswith(prefix) else tag


def tag_problem(node: yaml.Node, tag: str) -> YamlProblem:
    """Every tag a file writes is refused alike (h15b #4: '!!float 4096' was refused, '!!int 4096', '!!str x' and
    '!!bool yes' read, '!!binary' told "not bytes"): a planner file is plain YAML, and a tag would make of a text a
    value its plain reading does not give (the number rules: ASCII digits, no '1e1'), build an object, or change
    nothing."""
    what = (clip_text(repr(node.value)) if isinstance(node, yaml.ScalarNode) else
            "a mapping" if isinstance(node, yaml.MappingNode) else "a list")
    return YamlProblem(f"the YAML tag {tag!r} on {what} is not read (a planner file is plain YAML, no tags)",
                       node.start_mark.line + 1, "Remove the tag and write the value plainly (a number in ASCII "
                       "digits, a boolean as true or false), or quote it if it is a text.")
