"""An output folder's path as written, checked for what would name a folder other than the one meant.

A path reaches planner as written: a shell expands ``~``, ``$HOME``, ``$(pwd)`` and backticks only when they are
not quoted, and Python expands none of them (``os.path.expanduser``, ``os.path.expandvars`` exist for that), so an
unexpanded one becomes part of a folder's name. A folder name that begins or ends with a blank, or holds an
invisible or control character, looks like another name in every listing (:func:`planner.core.names.unsafe_char`).
The command line (``--out``) and the API (``out=``) refuse the same paths, each in its own words.
"""

from __future__ import annotations

import os
import re

from pathlib import Path

from planner.core.atomic import STAGING_PREFIX, process_umask
from planner.core.errors import DestinationError, OutputError
from planner.core.names import char_name, escape_unsafe, is_blank_looking, strip_blank_looking, unsafe_char

#: A shell substitution left unexpanded inside a path: '$NAME', '${NAME}', '$(command)' or a backtick.
UNEXPANDED = re.compile(r"\$\{?[A-Za-z_][A-Za-z_0-9]*\}?|\$\(|`")


def out_path_problem(text: str) -> tuple[str, str] | None:
    """(problem, the path as it may have been meant) for an output path ``text`` that would name another folder
    than the one meant, or None: an unexpanded substitution ('$HOME/r', 'x/$(pwd)'), an invisible or control
    character (a tab, a line feed, a zero-width space), a folder name that begins or ends with a blank-looking
    character (' o', 'a /b', 'o' + U+2800 BRAILLE PATTERN BLANK: the names' rule, planner.core.names.is_blank_looking),
    or a character with no glyph of its own (U+1D159, private use: planner.core.lookalike.no_glyph_char). A
    leading '~' is the caller's to say (the API and the command line say it differently)."""
    m = UNEXPANDED.search(text)
    if m is not None:
        return (f"holds {m.group()!r}, which was not expanded (Python expands no '$' or '`'), so it would be part of "
                "a folder's name", text)
    bad = unsafe_char(text)
    if bad is not None:
        return (f"holds {char_name(bad)}, which no listing shows, so the folder's name would look like another",
                escape_unsafe(text.replace(bad, "")))
    parts = re.split(r"[/\\]" if os.sep == "\\" else "/", text)
    edged = next((p for p in parts if p and (is_blank_looking(p[0]) or is_blank_looking(p[-1]))), None)
    if edged is not None:
        ch = edged[0] if is_blank_looking(edged[0]) else edged[-1]
        where = "begins" if is_blank_looking(edged[0]) else "ends"
        shown = "a blank" if ch == " " else f"{char_name(ch)}, drawn as blank space,"
        return (f"has the folder name {escape_unsafe(repr(edged))}, which {where} with {shown} that no listing shows",
                "/".join(strip_blank_looking(p) for p in parts))
    from planner.core.lookalike import no_glyph_char

    ch = no_glyph_char(text)
    if ch is not None:
        return (f"holds {char_name(ch)}, a character with no glyph of its own, so the folder's name would look like "
                "another", text.replace(ch, ""))
    return None


def refuse_staging_name(out: Path) -> None:
    """Refuse an output folder named as planner names its staging folders: a later run into the folder above would
    take it for a stopped run's.

    Raises:
        DestinationError: naming the folder.
    """
    name = Path(os.path.abspath(out)).name
    if name.startswith(STAGING_PREFIX):
        raise DestinationError(f"{out}: is named as planner names its staging folders ({STAGING_PREFIX}...), which a "
                               "later run into the folder above takes for one a stopped run left. Give the folder "
                               "another name.")


def refuse_owner_umask() -> None:
    """Refuse to write a report set under a umask that takes a permission from the user's own new files and
    folders (any of the bits 0o700: umask 277, 477, 777): planner makes its staging folder (mode 0o700 less the
    umask, tempfile.mkdtemp) and writes and reads back its reports there, so such a umask would stop it midway,
    with a message that blames a writable output folder. The umask's other bits are the user's to choose
    (umask 077 keeps reports private); the hint keeps them.

    Raises:
        OutputError: naming the umask and the one to set.
    """
    mask = process_umask()
    if mask & 0o700:
        taken = [what for bit, what in ((0o400, "read"), (0o200, "write"), (0o100, "search")) if mask & bit]
        raise OutputError(f"the umask {mask:04o} takes {'/'.join(taken)} permission from your own new files and "
                          "folders, so planner could not write its reports and check them. Run `umask "
                          f"{mask & 0o077:04o}` (it keeps what the umask takes from group and others) and try again.")
