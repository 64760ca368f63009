"""The ``--out`` a refusal hints at: the path meant, checked by the same rules until one passes, written so that
pasting it into bash gives exactly that path.

A hint that planner would refuse in turn (``$'~'/x`` hinted as ``'~/x'``, ``$' lead'`` as ``' lead'``, ``$'-'`` as
``'-'``) sends the user round in circles (hostile pass 35A m2-m12), and one that bash reads otherwise than printed
(``--out ~/x y``: two words) writes somewhere else. Sources: bash(1), QUOTING and Tilde Expansion (a ``~`` is
expanded only unquoted at a word's start; ``"$HOME"`` expands inside double quotes and is not split there).
"""

from __future__ import annotations

import re
import shlex

from planner.core.names import escape_unsafe
from planner.core.outpath import out_path_problem

#: A variable at the start of a path, as the shell would expand it: '$HOME', '${HOME}'.
_LEADING_VAR = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z_0-9]*\}|[A-Za-z_][A-Za-z_0-9]*)")
#: A tilde prefix bash expands (bash(1), Tilde Expansion): '~', '~user', '~+', '~-'.
_TILDE = re.compile(r"~(?:[A-Za-z0-9._][A-Za-z0-9._-]*|[+-])?")
#: How many times a hint is checked again (each pass takes away one kind of leftover: quotes, then a blank, ...).
_ROUNDS = 8


def pasteable(path: str) -> str:
    """``path`` as an --out hint writes it: in single quotes as it is where that is what the shell reads ('x/a/b'),
    else quoted for the shell (shlex.quote: a backslash stays one backslash); a character no listing shows written
    as its escape (such a path is refused before any hint offers it)."""
    if "'" not in path and "\\" not in path:
        return escape_unsafe(f"'{path}'")
    return escape_unsafe(shlex.quote(path))


def expandable(path: str) -> str:
    """A path that begins with ``~``, ``~user`` or ``$VAR`` as bash must read it for the shell to expand that start
    and take the rest as written: the start unquoted (a variable in double quotes, which expand it without
    splitting it), the rest quoted ('~/x y' -> ``~/'x y'``, '$HOME/a b' -> ``"$HOME"'/a b'``)."""
    m = _LEADING_VAR.match(path)
    if m is not None:
        head, rest = f'"{m.group()}"', path[m.end():]
    else:
        head, sep, rest = path.partition("/")
        head += sep
    return escape_unsafe(head + (shlex.quote(rest) if rest else ""))


def settled(meant: str | None) -> str | None:
    """The path ``meant`` after every rule that refuses --out has had its say (planner.core.outpath.out_path_problem:
    quotes left in, blanks at a folder's edge, invisible characters, a first name beginning with '-'), as a hint
    to paste (:func:`pasteable`, or :func:`expandable` for a ``~`` or ``$VAR`` start, which the shell is to expand),
    or None where no path can be told (a URL, a pattern, '~' or a variable inside the path, an empty path)."""
    found = _settle(meant, leading=True)
    if found is None:
        return None
    return expandable(found[0]) if found[1] else pasteable(found[0])


def _settle(cand: str | None, *, leading: bool) -> tuple[str, bool] | None:
    """(the path :func:`settled` arrives at, as a str; whether its start is a '~' or '$VAR' for the shell to
    expand), or None. ``leading``: whether such a start is the shell's to expand (the whole path) rather than a
    folder's name (the rest after it)."""
    for _ in range(_ROUNDS):
        if cand is None or not cand.strip("/"):
            return None
        if cand == "-":  # standard output by convention: a folder named '-' is written './-'
            cand = "./-"
            continue
        var = _LEADING_VAR.match(cand) if leading else None
        if leading and (cand.startswith("~") or var is not None):
            if var is not None:
                head, rest = var.group(), cand[var.end():]
            else:
                head, sep, rest = cand.partition("/")
                if not _TILDE.fullmatch(head):
                    return None  # "~'": no start bash expands, nor a name to write (a quote left in)
                head += sep
            if not rest.strip("/"):
                return cand, True
            after = _settle(rest, leading=False)
            return None if after is None else (head + after[0], True)
        problem = out_path_problem(cand)
        if problem is None:
            return cand, False
        if problem[1] is None or problem[1] == cand:
            return None
        cand = problem[1]
    return None


def settled_path(meant: str | None) -> str | None:
    """The path ``meant`` after every rule of planner.core.outpath.out_path_problem has had its say, as a plain
    path (the Python API's ``out=`` hint, given as a repr; a '~' start stays, for the API to offer expanded), or
    None where no path can be told."""
    found = _settle(meant, leading=False)
    return None if found is None else found[0]
