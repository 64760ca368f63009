"""Regular expressions from a checkpoint's config.json, matched in linear time with RE2 (h30b N1, N3).

A ``quantization_config`` names the modules it leaves unquantized with regular expressions (AWQ / FP8 / MXFP4
``modules_to_not_convert`` and bitsandbytes ``llm_int8_skip_modules`` as Transformers 5 reads them, with
``re.match``; compressed-tensors ``re:`` entries). Python's backtracking ``re`` can take time exponential in a
path's length on such a pattern (``(a+)+``, ``.?`` thirty times) and entries x paths x path length squared on
many ``.*.*`` entries, so planner matches them with RE2 (the ``google-re2`` package, module ``re2``), which
has no backtracking: the time is linear in the path's length for one compiled pattern, and the entries of a
list are joined into one pattern (``(?:p1)|(?:p2)``: RE2 has no back-references, and its inline flags
hold inside their group only, so the join keeps each entry's meaning).

Matching keeps Python's ``re.match``: anchored at the path's start, not at its end. RE2 takes the same
syntax for what module patterns use (``.``, classes, ``*``, ``+``, ``?``, ``{m,n}``, groups, ``|``, ``^``,
``$``, ``(?i)``); module paths are ASCII and hold no newline, where the two differ (Unicode ``\\d``, ``$``
before a last newline). What only Python reads is refused by :func:`unsupported`, in words.

No work at import: ``re2`` is imported by the functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: RE2's memory budget for a list's patterns joined into one, in bytes (the compiled program takes up to about
#: two thirds, the matching cache the rest): a list that needs more is refused (planner.model.quant_checks), not
#: grown. A module pattern takes a few hundred bytes; 1,000 entries such as ``model.layers.[0-9]+.mlp.gate_proj``
#: well under 1 MiB.
MAX_MEM = 16 << 20
#: The most pieces (characters, classes, anchors) config.json's patterns may stand for, all lists and
#: ``config_groups`` together (h31b N1: the budget was per list), once their counted repeats are written out, as
#: RE2 writes them before it compiles (``.{999}`` is 999; :func:`pieces`). Matching costs paths x the compiled
#: pattern, and past RE2's automaton cache the cost jumps (measured on 10,000 layers, 2 loaded cores: 10 entries
#: of ``.{0,990}``, 100 of ``.{0,99}`` or 990 of ``.{0,9}``, each some 10,000 pieces: 1 to 2 s; 20 of
#: ``.{0,990}``: 7.5 s; 195 of ``.{0,99}``: 81 s), so the budget stays at the measured 10,000; 250 module paths
#: written with dots (each dot a piece) stand for some 10,000, and a compressed-tensors name without ``re:``
#: counts nothing.
MAX_PIECES = 10_000


def _options(max_mem: int) -> Any:
    import re2

    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False  # RE2 writes its parse errors to stderr otherwise
    options.never_capture = True  # match or not: groups are read as (?:...), so two entries' names cannot clash
    return options


def compile_linear(pattern: str, max_mem: int = MAX_MEM) -> Any:
    """``pattern`` compiled by RE2 (its ``match`` anchors at the start, as Python's ``re.match``).

    Raises:
        re2.error: RE2 cannot compile it (Python-only syntax, a repeat over 1,000, more than ``max_mem``).
    """
    import re2

    return re2.compile(pattern, _options(max_mem))


def _error_text(exc: Exception) -> str:
    return exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)


#: RE2's error text, by its start, and the Python-only syntax it stands for.
_WHAT = (("invalid escape sequence: \\Z", "uses \\Z (a module path ends at $ the same)"),
         ("invalid perl operator: (?P", "uses a back-reference"),
         ("invalid perl operator: (?=", "uses a look-ahead"),
         ("invalid perl operator: (?!", "uses a look-ahead"),
         ("invalid perl operator: (?<=", "uses a look-behind"),
         ("invalid perl operator: (?<!", "uses a look-behind"),
         ("invalid perl operator: (?>", "uses an atomic group"),
         ("invalid perl operator: (?(", "uses a conditional group"),
         ("invalid perl operator: (?#", "uses a comment group"),
         ("invalid perl operator: (?", "uses an inline flag other than i, m or s"),
         ("bad repetition operator", "uses a possessive repeat"),
         ("invalid repetition size", "repeats more than 1,000 times (nested repeats multiplied)"),
         ("pattern too large", "compiles larger than the matcher's budget"))


def posix_class(pattern: str) -> str | None:
    """Why a pattern holding a POSIX class (``[[:alpha:]]``) is refused, or None: RE2 reads it as a class, Python's
    ``re`` as the characters it lists (and warns "Possible nested set"), so the check runs before Python compiles
    the pattern."""
    if re.search(r"\[:[A-Za-z]+:\]", pattern):
        return ("writes a POSIX class such as [:alpha:], which planner's linear-time matcher (RE2) reads as a class "
                "and Python's re as the characters it lists (write the characters, e.g. [A-Za-z]); Transformers "
                "reads it with Python's re")
    return None


#: What Python's ``re`` (3.11-3.13, ``re._parser``) warns about inside a class, by the characters: each is read as
#: the characters listed today and as a set operation in future releases (FutureWarning).
_SET_OPS = {"[": "a '[' first inside a class (a nested set)", "&": "'&&' inside a class (a set intersection)",
            "|": "'||' inside a class (a set union)", "~": "'~~' inside a class (a symmetric difference)",
            "-": "'--' inside a class (a set difference)"}


def _parser() -> Any:
    try:
        from re import _parser as parser  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser  # type: ignore[no-redef]
    return parser


def set_operation(pattern: str) -> str | None:
    """Why a pattern holding what Python's ``re`` warns about inside a class (``[[a]``, ``[a&&b]``, ``[a||b]``,
    ``[a~~b]``, ``[a--b]``: FutureWarning "Possible nested set" / "Possible set ...", which prints a raw line, and
    under ``-W error`` stops the run) or a conditional group ``(?(1)...)`` (a DeprecationWarning for some group
    names; RE2 has none) is refused, or None (h31b N2). The pattern is read token by token as ``re._parser``
    reads it (its own tokenizer and class escapes), so the check runs before Python compiles the pattern and
    changes no warning filter; a pattern Python refuses for another reason first gives None (the caller's
    ``re.compile`` tells it). Time linear in the pattern's length."""
    parser = _parser()
    try:
        src = parser.Tokenizer(pattern)
        while src.next is not None:
            this = src.get()
            if this == "(" and src.match("?"):
                if src.match("#"):  # a comment: Python skips to ')'
                    while src.get() not in (")", None):
                        pass
                elif src.next == "(":
                    return ("uses a conditional group, which planner's linear-time matcher (RE2) does not support; "
                            "Transformers reads it with Python's re")
            elif this == "[":
                op = _set_operation(src, parser)
                if op:
                    return (f"writes {_SET_OPS[op]}, which Python's re reads as the characters listed today and "
                            "warns it will read differently in future releases (write the characters escaped, e.g. "
                            "\\[ or \\&); Transformers reads it with Python's re")
    except (parser.error, ValueError, IndexError):  # Python refuses the pattern before any warning
        return None
    return None


def _set_operation(src: Any, parser: Any) -> str | None:
    """The character of :data:`_SET_OPS` Python would warn about in the class whose '[' ``src`` just read (its
    loop in ``re._parser._parse``), or None; ``src`` is left after the class."""
    if src.next == "[":
        return "["
    src.match("^")
    items = 0
    while True:
        this = src.get()
        if this is None or (this == "]" and items):
            return None
        if this[0] == "\\":
            code1 = parser._class_escape(src, this)
        elif items and this in "-&~|" and src.next == this:
            return this
        else:
            code1 = (parser.LITERAL, ord(this))
        if src.match("-"):
            that = src.get()
            if that is None or that == "]":
                return None
            if that == "-":
                return "-"
            code2 = parser._class_escape(src, that) if that[0] == "\\" else (parser.LITERAL, ord(that))
            if code1[0] != parser.LITERAL or code2[0] != parser.LITERAL or code2[1] < code1[1]:
                return None  # Python's "bad character range", before anything further
        items += 1


def unsupported(pattern: str) -> str | None:
    """Why RE2 cannot match ``pattern`` (one Python's ``re`` compiles) as Python does, in words ending in
    "...; Transformers reads it with Python's re", or None when it can. A back-reference (``\\1``,
    ``(?P=x)``) or a look-around is read by Python alone; ``{,n}`` (Python 3.11's ``{0,n}``) RE2 reads
    as text, and ``[:alpha:]`` inside a class as a POSIX class (Python: the characters listed), so both are
    refused too. Only RE2's parser runs (a budget of no memory stops it before it
    compiles), so this takes time linear in the pattern's length; its size is told by :func:`joined`."""
    import re2

    posix = posix_class(pattern) or set_operation(pattern)
    if posix:
        return posix
    if re.search(r"\{,[0-9]*\}", pattern):
        return ("writes a repeat as {,n}, which planner's linear-time matcher (RE2) reads as text (write {0,n}); "
                "Transformers reads it with Python's re")
    try:
        compile_linear(pattern, 1)
    except re2.error as exc:
        text = _error_text(exc)
        if text.startswith("pattern too large"):
            return None
        what = next((w for start, w in _WHAT if text.startswith(start)), f"uses syntax ({text})")
        if text.startswith("invalid escape sequence: \\") and not text.startswith("invalid escape sequence: \\Z"):
            what = "uses a back-reference" if text[26:27].isdigit() else f"uses the escape {text[25:]}"
        return f"{what}, which planner's linear-time matcher (RE2) does not support; Transformers reads it with " \
               "Python's re"
    return None  # pragma: no cover - RE2 compiles nothing in no memory


def joined(patterns: Iterable[str], max_mem: int = MAX_MEM) -> list[Any]:
    """``patterns`` (those Python's ``re`` compiles and :func:`unsupported` passes, up to :data:`MAX_PIECES`
    pieces in all; others are left out) as few compiled RE2 patterns as
    fit ``max_mem`` each: one ``(?:p1)|(?:p2)|...`` when it fits (the list config.json's checks take), else
    halves of the list, down to one each, a pattern that does not fit alone left out (whose ``match``
    tells whether any of them matches a text from its start)."""
    import re2

    good: list[str] = []
    total = 0
    for p in patterns:  # what config.json's checks take; past MAX_PIECES pieces the rest is left out
        if _python_re(p):
            total += pieces(p)
            if total <= MAX_PIECES and unsupported(p) is None:
                good.append(p)

    def parts(items: list[str]) -> list[Any]:
        if not items:
            return []
        try:
            return [compile_linear("|".join(f"(?:{p})" for p in items), max_mem)]
        except re2.error:
            if len(items) == 1:
                return []
            half = len(items) // 2
            return parts(items[:half]) + parts(items[half:])
    return parts(good)


def pieces(pattern: str) -> int:
    """How many pieces ``pattern`` (one Python's ``re`` compiles) stands for with each counted repeat written
    out (``x{2,5}``: five ``x``; ``x{3,}``: four; ``x*``: one), read with Python's own parser; at least 1."""
    parser = _parser()
    repeats = {parser.MAX_REPEAT, parser.MIN_REPEAT} | ({parser.POSSESSIVE_REPEAT}
                                                         if hasattr(parser, "POSSESSIVE_REPEAT") else set())

    def size(items: Any) -> int:
        total = 0
        for op, av in items:
            if op in repeats:
                lo, hi, sub = av
                total += size(sub) * max(1, hi if hi != parser.MAXREPEAT else lo + 1)
                continue
            inner = [sub for part in (av if isinstance(av, (tuple, list)) else ())
                     for sub in (part if isinstance(part, list) else [part]) if isinstance(sub, parser.SubPattern)]
            total += sum(size(sub) for sub in inner) if inner else 1
        return total

    return max(1, size(parser.parse(pattern)))


def _python_re(pattern: str) -> bool:
    """Whether Python's ``re`` compiles ``pattern`` (what Transformers and compressed-tensors read)."""
    if posix_class(pattern) or set_operation(pattern):  # Python would warn (FutureWarning): read as refused
        return False
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def fits(patterns: list[str], max_mem: int = MAX_MEM) -> bool:
    """Whether ``patterns`` (each one :func:`unsupported` passes, of at most :data:`MAX_PIECES` pieces in all)
    joined into one compile within ``max_mem``."""
    import re2

    try:
        compile_linear("|".join(f"(?:{p})" for p in patterns), max_mem)
    except re2.error:
        return False
    return True


def any_part(names: Iterable[str]) -> Any:
    """A compiled RE2 whose ``search`` tells whether any of ``names`` is a part of a text (as written), or
    None for no names."""
    import re2

    texts = sorted(set(names))
    return compile_linear("|".join(re2.escape(n) for n in texts), 4 * MAX_MEM) if texts else None
