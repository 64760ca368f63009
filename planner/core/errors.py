"""One error hierarchy for the whole package.

The CLI turns any :class:`PlannerError` into one line on stderr and the error's
``exit_code``: 2 for bad input (:class:`InputError` and its kinds), 1 for an
infeasible plan (:class:`InfeasibleError`). Tracebacks appear only with ``--debug``.

The one-line form of an input error is::

    Error: <file>:<line>: <entry path>: <problem>. <hint>

where the parts that are unknown are left out.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable


def escaped_char(ch: str) -> str:
    """One character as its visible escape: '\\n', '\\x1b', '\\u202e', '\\U000e0041'; a byte that was not UTF-8
    (held as U+DC80-U+DCFF, PEP 383) as the byte, '\\xff'. (planner.core.names.escape_unsafe picks which characters
    are escaped in names and texts; an error's file path escapes every character Python does not print.)"""
    special = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch)
    if special:
        return special
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def unreadable_problem(exc: BaseException, what: str) -> str:
    """The problem for a caller's object whose own method (``__fspath__``, ``__float__``, ``items()``, ``__iter__``)
    raised ``exc`` as planner read it: 'could not be read as {what}: RuntimeError: boom', the exception's text on
    one line, each character Python does not print escaped, clipped to 80 characters; its type alone when its own
    ``__str__`` raises. The one wording of every guarded read of a caller's object: a path
    (planner.api.inputs.path_arg), a number (planner.core.fieldhints.plain_number), a mapping or list
    (planner.api.inputs, planner.core.fields).

    Args:
        what: what the object was read as, with its article: 'a path', 'a number', 'a mapping', 'a list'.
    """
    try:
        said = "".join(c if c.isprintable() else escaped_char(c) for c in " ".join(str(exc).split()))
    except Exception:  # an exception whose own __str__ (or its text's methods) raise: its type alone
        said = ""
    if len(said) > 80:  # as planner.core.names.clip_text cuts it (which imports this module)
        said = f"{said[:80]}... ({len(said):,} characters)"
    return f"could not be read as {what}: {type(exc).__name__}" + (f": {said}" if said else "")


class PlannerError(Exception):
    """Base class of every error the planner raises on purpose."""

    exit_code = 2

    def one_line(self) -> str:
        """The message as one line, without the 'Error: ' prefix: a line break in it (one in a path as typed,
        'nl\\ndir') written as its escape, never folded to a blank, which would show another path (h16b #10)."""
        return str(self).replace("\r", "\\r").replace("\n", "\\n")


    def cli_line(self) -> str:
        """The message as the command line prints it (:meth:`one_line`; an error of the API's keywords names
        the options instead: planner.workload.inputs.OptionError)."""
        return self.one_line()


class InputError(PlannerError, ValueError):
    """Something the user gave (a file, an option, a config.json) is wrong.

    Args:
        problem: what is wrong, as a sentence without a final period.
        file: path of the file as the user named it, or None for command-line options.
        line: 1-based line in ``file`` where the entry starts, when known.
        entry: path of the entry inside the document, e.g. ``workloads[0].micro_batch``; catalog entries
            also name their id, ``gpus[3] (rtx-4090).memory``.
        hint: what to change, e.g. ``Did you mean 'rtx-4090'?``.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        line: int | None = None,
        entry: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.line = line
        self.entry = entry
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.file:  # a line break, a tab or an ESC in a path shown escaped ('nl\\ndir'), never folded to a blank
            file = "".join(c if c.isprintable() or c == " " else escaped_char(c) for c in str(self.file))
            parts.append(f"{file}:{self.line}" if self.line else file)
        if self.entry:  # a key as written may hold a blank an editor shows as a space ('\u2003context')
            parts.append("".join(c if c.isprintable() else ascii(c)[1:-1] for c in self.entry))
        text = self.problem.rstrip(".")
        parts.append(text + ".")
        msg = ": ".join(parts)
        if self.hint:
            msg += " " + self.hint.strip()
        return msg


class CatalogError(InputError):
    """A hardware or model catalog file is malformed or inconsistent."""


class ScenarioError(InputError):
    """A scenario or workload file (or the equivalent options) is malformed."""


class ModelConfigError(InputError):
    """A Hugging Face ``config.json`` cannot be read as a supported architecture."""


class UnknownKeywordError(InputError, TypeError):
    """A Python API function (planner.api) got a keyword argument it does not take.

    Also a TypeError, as Python's own unexpected-keyword error is; the hint names the close matches.
    """


class UsageError(InputError, TypeError):
    """A call lacks what it needs or combines what it cannot (neither a model nor a workload; not
    exactly one 'max' target for fit).

    Args:
        problem, hint: as for :class:`InputError`, in the Python API's words (keyword arguments).
        usage: the same problem in the command line's words ('give --model ...'), which the
            commands print as their usage error.
    """

    def __init__(self, problem: str, *, usage: str, hint: str | None = None) -> None:
        self.usage = usage
        super().__init__(problem, hint=hint)


class OutputError(PlannerError):
    """A report cannot be written (unwritable directory, unsafe name)."""


class DestinationError(OutputError, InputError):
    """The destination given (``--out``, ``out=``) is refused before any work: planner's own catalog or
    package, an input of the run, a file planner did not write where a report would go, a file where a
    directory belongs, a name the file system cannot hold. An :class:`InputError` (the Python API's
    rule: every bad argument is one) and an :class:`OutputError`; the message is the one line as given.
    """

    def __init__(self, message: str) -> None:
        self.command_line = message  # as the command line says it: '--out'
        said = keyword_words(message)  # as a Python caller passed it: 'out='
        self.problem, self.file, self.line, self.entry, self.hint = said, None, None, None, None
        Exception.__init__(self, said)

    def cli_line(self) -> str:
        """The error as the command line prints it (naming ``--out``, not ``out=``), on one line."""
        return self.command_line.replace("\r", "\\r").replace("\n", "\\n")


#: A destination option as a message names it ('--out', '--catalog'), with the value after it where one follows
#: ('e.g. --out my-catalog', '(--out .)'); a word of prose after it ('Give --out a directory') is no value.
_DEST_OPTION = re.compile(r"(?<![\w-])--(out|catalog)(?![\w-])(?: (?!(?:a|an|the|another|folder|directory|file|"
                          r"overlay|to|and|or|is|with)\b)([^\s()]+?)(?=[.,;:)]*(?:\s|$)))?")


def keyword_words(text: str) -> str:
    """A message that names a destination option as the command line spells it, in the Python API's words:
    '--out' is ``out=``, '--out my-catalog' ``out='my-catalog'``, '--catalog DIR' ``catalog='DIR'`` (the API names
    keywords, the command line options: :class:`DestinationError`; planner.workload.inputs.keyword_form does the
    same for the workload options)."""
    return _DEST_OPTION.sub(lambda m: f"{m.group(1)}={m.group(2)!r}" if m.group(2) else f"{m.group(1)}=", text)


class InfeasibleError(PlannerError):
    """No candidate satisfies the workload; carries the reasons per constraint.

    Args:
        message: the explanation, one or more lines.
        reasons: one entry per binding constraint, each a sentence.
    """

    exit_code = 1

    def __init__(self, message: str, reasons: Iterable[str] = ()) -> None:
        self.reasons = list(reasons)
        super().__init__(message)


def close_matches(name: str, choices: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` choices close to ``name``, best first.

    Choices that start with what the user typed come first (``rtx-3060`` -> ``rtx-3060-12gb``),
    then choices that contain it (``3060`` -> ``rtx-3060-12gb``), then choices of the same family
    (the first ``-`` part, where it holds a digit: ``h100-80gb`` -> ``h100-sxm``), then difflib's close matches
    (similarity ratio at least ``cutoff``); within each group, difflib's order (most similar
    first). A choice that differs from the name only in case comes before all of them ('L4' -> 'l4'). Case is
    ignored for the prefix and substring groups, which need at least 3 typed characters. The name is compared in
    Unicode NFKC, as names are (full-width 'ｌ４' is 'l4', 'ｇｐｕｓ' is 'gpus'; h15b minor b).
    """
    text = unicodedata.normalize("NFKC", str(name))
    low = text.lower()
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(text)
    scored = []
    for option in sorted(set(choices)):
        matcher.set_seq1(option)
        scored.append((matcher.ratio(), option))
    scored.sort(reverse=True)  # difflib.get_close_matches' order: score, then name, both descending
    ranked = [x for _, x in scored]
    same = [x for x in ranked if x.lower() == low and x != text]  # 'L4' -> 'l4': the name in another case, first
    prefix = [x for x in ranked if len(low) >= 3 and x.lower().startswith(low)]
    inside = [x for x in ranked if len(low) >= 3 and low in x.lower()]
    # the same family: the typed name's first '-' part, where it holds a digit (h100-80gb -> h100-sxm,
    # h100-pcie; not rtx- or llama- alone, which every card or model of the maker shares)
    stem = low.split("-", 1)[0]
    family = [x for x in ranked if "-" in low and any(ch.isdigit() for ch in stem) and len(stem) >= 3
              and x.lower().split("-", 1)[0] == stem]
    close = [x for score, x in scored if score >= cutoff]
    return list(dict.fromkeys(same + prefix + inside + family + close))[:n]


def char_name(ch: str) -> str:
    """'U+202E (RIGHT-TO-LEFT OVERRIDE)'; control characters by their usual names ('U+000D (CARRIAGE
    RETURN)'), which unicodedata does not know."""
    name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


_CONTROL_NAMES = {"\0": "NULL", "\t": "CHARACTER TABULATION", "\n": "LINE FEED", "\r": "CARRIAGE RETURN",
                  "\x1b": "ESCAPE", "\x7f": "DELETE", "\x85": "NEXT LINE", "\x08": "BACKSPACE",
                  "\x0b": "LINE TABULATION", "\x0c": "FORM FEED"}


def _drawn_alike(name: str, choice: str) -> str | None:
    """'Did you mean 'rtx-4090'? ...' naming the characters where ``name`` differs from ``choice``, when the two
    have one UTS #39 skeleton up to case (:func:`planner.core.lookalike.skeleton`)
    and the same length, and differ at one to three places not only in case; else None. The message otherwise
    echoes a name that prints as the suggestion does ('rtx‐4090' with U+2010 HYPHEN, 'qlоra-7b' with U+043E
    CYRILLIC SMALL LETTER O), as --region names its character (planner.cli.catalog)."""
    from planner.core.lookalike import skeleton  # (not planner.core.names, which imports this module)

    if unicodedata.normalize("NFKC", name) == choice or len(name) != len(choice):
        return None  # full-width 'ｌ４' is 'l4' in NFKC, as close_matches reads it; the usual hint
    if skeleton(name).casefold() != skeleton(choice).casefold():
        return None
    # a difference in case alone is no lookalike: 'K' for 'k' is not named, while U+212A KELVIN SIGN, which
    # lower-cases to ASCII 'k' but is another character, is (h40b m6: the KELVIN SIGN went unnamed as a case
    # difference, and an ASCII 'K' beside a full-width one was named as a lookalike)
    diff = [(i, x, y) for i, (x, y) in enumerate(zip(name, choice), 1)
            if x != y and not (x.lower() == y.lower() and x.isascii() == y.isascii())]
    if not diff or len(diff) > 3:
        return None
    where = "; ".join(f"{char_name(x)} at character {i} where {choice!r} has {y!r}" for i, x, y in diff)
    return f"Did you mean {choice!r}? The name given holds {where}, which look alike."


def did_you_mean(name: str, choices: Iterable[str], n: int = 3, listing: str | None = None, *,
                 name_lookalike: bool = True) -> str | None:
    """A "Did you mean ...?" hint from close matches (:func:`close_matches`), or a list of valid names.

    ``listing``: the ``planner catalog`` list that shows the choices ('gpus'), named when there are too many to
    give here ('planner catalog' alone needs one). Returns None when there is nothing to choose from.
    ``name_lookalike``: name the character where the name is drawn alike with a choice (:func:`_drawn_alike`);
    False where the caller's problem names it already.
    """
    options = sorted(set(choices))
    if not options:
        return None
    close = close_matches(name, options, n=n)
    drawn = name_lookalike and next((note for c in close if (note := _drawn_alike(str(name), c))), None)
    if drawn:  # 'rtx‐4090' (U+2010) and 'rtx-4090' print alike: name the character, offer that one (h18b #3)
        return drawn
    if close:
        return "Did you mean " + " or ".join(repr(c) for c in close) + "?"
    if len(options) <= 12:
        return "Valid: " + ", ".join(options) + "."
    if listing is not None:
        return f"'planner catalog {listing}' lists the valid ids."
    return f"None of the {len(options)} valid names is close."  # 'planner catalog' alone lists nothing (h14b #11)
