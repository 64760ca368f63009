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

from planner.core.names import ansi_c_word, escape_unsafe, shell_word
from planner.core.outpath import out_path_problem

#: A variable at the start of a path, as the shell would expand it: '$HOME', '${HOME}'.
_LEADING_VAR = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z_0-9]*\}|[A-Za-z_][A-Za-z_0-9]*)")
#: A tilde prefix bash expands (bash(1), Tilde Expansion): '~', '~user', '~+', '~-'.
_TILDE = re.compile(r"~(?:[A-Za-z0-9._][A-Za-z0-9._-]*|[+-])?")
#: How many times a hint is checked again (each pass takes away one kind of leftover: quotes, then a blank, ...).
_ROUNDS = 8


def expansion(head: str) -> str | None:
    """What bash expands ``head`` (a '~' start, or a '$VAR' one) to here, where that is a path the user can mean: a
    variable's value in this environment (an unset one expands to nothing), '~' as HOME (else the user's home in
    the password database), '~+' the current folder (PWD), '~-' OLDPWD, '~user' that user's home (bash(1), Tilde
    Expansion: an unknown one is left as written); None where it is unset, unknown, or empty (bash turns
    ``"$EMPTY"/x`` into '/x', h37a 6)."""
    import os

    if head.startswith("$"):
        value = os.environ.get(head.strip("${}"))
    else:
        name = head.rstrip("/")[1:]
        if name == "+":
            value = os.environ.get("PWD") or _cwd()
        elif name == "-":
            value = os.environ.get("OLDPWD")
        elif name == "" and "HOME" in os.environ:
            value = os.environ["HOME"]
        else:
            value = _home_of(name)
    return value if value else None


def _cwd() -> str | None:
    """The current folder, or None where it was removed."""
    import os

    try:
        return os.getcwd()
    except OSError:
        return None


def _home_of(name: str) -> str | None:
    """The home folder the password database gives user ``name`` ('' for this user), or None where unknown."""
    import os

    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir if not name else pwd.getpwnam(name).pw_dir
    except (ImportError, KeyError, ValueError, OSError):
        return None


def refused_destination(path: str, *, file: bool = False) -> bool:
    """Whether a run would refuse ``path`` as its destination, for a hint to offer only a path that passes (h37a 7):
    for an --out folder an existing file (or link to one), for ``calibrate --out`` (``file``) an existing folder,
    a link, or a report planner wrote (its folder's manifest lists it); for both a path below a file, inside the
    shipped catalog, the package or its metadata folder (planner.core.protected), on /proc or /sys
    (planner.core.pseudofs), or on or below one of planner's bookkeeping names (planner.core.outpath.bookkeeping_part:
    the manifest, a staging folder). Reads only; True where the path cannot be looked at."""
    import os
    from pathlib import Path

    from planner.core.errors import DestinationError
    from planner.core.outpath import bookkeeping_part
    from planner.core.protected import protected_folder_of
    from planner.core.pseudofs import PSEUDO_FILE_SYSTEMS, _nearest_existing, file_system_type

    try:
        if os.path.lexists(path):
            if file and (os.path.isdir(path) or os.path.islink(path)):
                return True
            if not file and not os.path.isdir(path):
                return True
        at = _nearest_existing(Path(path))
        if at is not None and at != Path(path) and not os.path.isdir(at):
            return True  # below a file: no folder can be made there
        if at is not None and file_system_type(at) in PSEUDO_FILE_SYSTEMS:
            return True
        if protected_folder_of(path) is not None or bookkeeping_part(path) is not None:
            return True
        if _refused_elsewhere(path, file=file):
            return True
        if file and os.path.isfile(path):
            from planner.core.destinations import written_set

            return written_set(Path(path)) is not None
    except (OSError, ValueError, DestinationError):
        return True
    return False


def _refused_elsewhere(path: str, *, file: bool) -> bool:
    """Whether a run would refuse ``path`` for what it would do to Python's imports (a folder in site-packages, one
    hiding a module on sys.path, a start-up name for calibrate's file: planner.core.importpath.refuse_import_shadow)
    or to the temporary folder (TMPDIR naming it or a folder inside it, for an --out folder:
    planner.core.tempdir.refuse_temp_in, judged against the same check without an --out, so that a TMPDIR refused
    for another reason does not keep every hint back). h39a m2: such hints were refused when pasted."""
    from pathlib import Path

    from planner.core.errors import OutputError
    from planner.core.importpath import refuse_import_shadow
    from planner.core.tempdir import refuse_temp_in

    try:
        if file:
            refuse_import_shadow(Path(path).parent, Path(path).name)
        else:
            refuse_import_shadow(Path(path))
    except OutputError:
        return True
    if file:
        return False
    try:
        refuse_temp_in(None)
    except OutputError:
        return False  # refused whatever the --out: said by the run itself
    try:
        refuse_temp_in(Path(path))
    except OutputError:
        return True
    return False


def settled(meant: str | None, *, file: bool = False) -> str | None:
    """The path ``meant`` after every rule that refuses --out has had its say (planner.core.outpath.out_path_problem:
    quotes left in, blanks at a folder's edge, invisible characters, a first name beginning with '-'), as a hint
    to paste: quoted (planner.core.names.shell_word, ``quoted``), or for a ``~`` or ``$VAR`` start, which the shell is to expand, that start
    unquoted (a variable in double quotes, which expand it without splitting it) and the rest quoted ('~/x y' ->
    ``~/'x y'``, '$HOME/a b' -> ``"$HOME"'/a b'``); None where no path can be told (a URL, a pattern, '~' or a
    variable inside the path, an empty path, an unset or empty variable or unknown user at the start, a path a run
    would refuse as its destination: :func:`refused_destination`, ``file`` for ``calibrate --out``)."""
    found = _settle(meant, leading=True, file=file)
    if found is None:
        return None
    head, rest = found
    if not head:
        return shell_word(rest, quoted=True)
    start = f'"{head}"' if head.startswith("$") else head
    if not rest:
        return escape_unsafe(start)
    return escape_unsafe(start) + (ansi_c_word(rest) if escape_unsafe(rest) != rest else shlex.quote(rest))


def _settle(cand: str | None, *, leading: bool, file: bool = False) -> tuple[str, str] | None:
    """(the start for the shell to expand, '' for none: '~/', '~user/', '$HOME'; the path after it) that
    :func:`settled` arrives at, or None. ``leading``: whether such a start is the shell's to expand (the whole
    path) rather than a folder's name (the rest after it). The path offered passes the checks again, with the
    start expanded as bash would (:func:`expansion`), and :func:`refused_destination` (``file``: calibrate's)."""
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
            value = expansion(head)
            if value is None:
                return None  # '$a' unset or empty, '~nosuchuser': bash would not give the path meant
            after = ("", rest) if not rest.strip("/") else _settle(rest, leading=False)
            if after is None:
                return None
            full = value + ("/" if head.endswith("/") else "") + after[1]
            if out_path_problem(full) is not None or refused_destination(full, file=file):
                return None  # what the shell makes of it is refused in turn ('$SP' = ' lead', '~' in the package)
            return head, after[1]
        problem = out_path_problem(cand)
        if problem is None:
            return None if leading and refused_destination(cand, file=file) else ("", cand)
        if problem[1] is None or problem[1] == cand:
            return None
        cand = problem[1]
    return None


def settled_path(meant: str | None, *, file: bool = False) -> str | None:
    """The path ``meant`` after every rule of planner.core.outpath.out_path_problem has had its say, as a plain
    path (the Python API's ``out=`` hint, given as a repr; a '~' start stays, for the API to offer expanded), or
    None where no path can be told."""
    found = _settle(meant, leading=False, file=file)
    if found is None or refused_destination(found[1], file=file):
        return None
    return found[1]
