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

from planner.core.names import ansi_c_word, escape_unsafe
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
    if escape_unsafe(path) != path:  # a byte that is not UTF-8, or a character shown escaped: bash's $'...' names
        return ansi_c_word(path)      # the same bytes, where '\xff' in single quotes would not (h37b m1)
    if "'" not in path and "\\" not in path:
        return f"'{path}'"
    return shlex.quote(path)


def _expandable_start(head: str) -> bool:
    """Whether bash expands ``head`` (a '~' start, or a '$VAR' one) to what the user means here: a variable set in
    this environment (an unset one expands to nothing), '~' and '~+' always, '~-' where OLDPWD is set, and '~user'
    for a user this system knows (bash(1), Tilde Expansion: an unknown one is left as written)."""
    import os

    if head.startswith("$"):
        return head.strip("${}") in os.environ
    name = head.rstrip("/")[1:]
    if name in ("", "+"):
        return True
    if name == "-":
        return "OLDPWD" in os.environ
    try:
        import pwd

        pwd.getpwnam(name)
        return True
    except (ImportError, KeyError, ValueError, OSError):
        return False


def settled(meant: str | None) -> str | None:
    """The path ``meant`` after every rule that refuses --out has had its say (planner.core.outpath.out_path_problem:
    quotes left in, blanks at a folder's edge, invisible characters, a first name beginning with '-'), as a hint
    to paste: quoted (:func:`pasteable`), or for a ``~`` or ``$VAR`` start, which the shell is to expand, that start
    unquoted (a variable in double quotes, which expand it without splitting it) and the rest quoted ('~/x y' ->
    ``~/'x y'``, '$HOME/a b' -> ``"$HOME"'/a b'``); None where no path can be told (a URL, a pattern, '~' or a
    variable inside the path, an empty path, an unset variable or unknown user at the start)."""
    found = _settle(meant, leading=True)
    if found is None:
        return None
    head, rest = found
    if not head:
        return pasteable(rest)
    start = f'"{head}"' if head.startswith("$") else head
    if not rest:
        return escape_unsafe(start)
    return escape_unsafe(start) + (ansi_c_word(rest) if escape_unsafe(rest) != rest else shlex.quote(rest))


def _settle(cand: str | None, *, leading: bool) -> tuple[str, str] | None:
    """(the start for the shell to expand, '' for none: '~/', '~user/', '$HOME'; the path after it) that
    :func:`settled` arrives at, or None. ``leading``: whether such a start is the shell's to expand (the whole
    path) rather than a folder's name (the rest after it)."""
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
            if not _expandable_start(head):
                return None  # '$a' unset, '~nosuchuser': bash would not give the path meant
            if not rest.strip("/"):
                return head, rest
            after = _settle(rest, leading=False)
            return None if after is None else (head, after[1])
        problem = out_path_problem(cand)
        if problem is None:
            return "", cand
        if problem[1] is None or problem[1] == cand:
            return None
        cand = problem[1]
    return None


def settled_path(meant: str | None) -> str | None:
    """The path ``meant`` after every rule of planner.core.outpath.out_path_problem has had its say, as a plain
    path (the Python API's ``out=`` hint, given as a repr; a '~' start stays, for the API to offer expanded), or
    None where no path can be told."""
    found = _settle(meant, leading=False)
    return None if found is None else found[1]
