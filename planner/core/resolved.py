"""An output folder resolved once, at the start of a run, and shown as the user wrote it.

A relative ``--out`` / ``out=`` names a folder under the current folder, and the current folder is the
process's: another thread of a program that calls :func:`planner.plan` (a web server, a notebook) may change it
with ``os.chdir`` while the call runs. Each step that went by the relative path would then reach another folder:
the staging folder made in one, the workbook written or the manifest read in the other (h27a N1). So a run joins
a relative path to the current folder once, at its start (:func:`absolute_out`), and every later step (the checks,
the lock, the staging folder, the writes, the moves, the manifest, a failed run's clean-up) goes by that absolute
path only; a change of the current folder after that instant changes nothing of the run.

The run's lines, built with the absolute path, still show the path as the user wrote it (:func:`show_text`,
:func:`show_path`, :func:`show_error`): the same lines as before, relative to the folder that was current at the
start. A path written absolute is used and shown as written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The bytes a report's path may add to its output folder's: '/.planner-staging-XXXXXXXX/', a name of up to 255
#: bytes and a temporary's suffix (planner.core.atomic).
_ROOM = 320
#: What may stand just before a path in a line: its start, a blank, a quote, a parenthesis, '=' or a comma.
_BEFORE = r"(?<![^\s'\"(\[=,])"
#: What may follow a path's last name in a line: a '/', a blank, ':', ',', ';', a quote, a closing parenthesis,
#: a sentence's full stop (then a blank or the end), or the end.
_AFTER = r"(?=[/\s:,;'\")\]]|\.(?:\s|$)|$)"
#: A path that is a variable's value, as the lines show one ('/abs/out/t (TMPDIR)'): shown as set, never rewritten
#: under the --out as written (h40a N9: an absolute TMPDIR was shown as 'tq/sub/..').
_NOT_A_VALUE = r"(?![^\s]*\s\((?:TMPDIR|TEMP|TMP|tempfile\.tempdir)\))"


def absolute_out(out: Path | str) -> Path:
    """``out`` as an absolute path: a relative one joined to the current folder (``os.getcwd()``), read now, once.

    Nothing is resolved: no link is followed and a '..' is kept (the kernel resolves it when the path is used,
    as it would have in the relative path), so the path names what the relative one named at this instant.
    Where the current folder was removed (``getcwd`` fails), ``out`` is returned as given: the run then refuses
    it (planner.core.outpath.refuse_gone_cwd). So it is where the absolute path, with room for a staging folder
    and a report's name (:data:`_ROOM` bytes), would pass the system's limit (``PATH_MAX``, 4,096 bytes on Linux)
    that the relative path keeps within: a current folder some 3,700 bytes deep (the known limit: for such a
    path a change of the current folder during the call still moves the later steps).
    """
    from planner.core.atomic import _path_max_bytes

    path = Path(out)
    if path.is_absolute():
        return path
    try:
        full = Path(os.getcwd()) / path
    except OSError:
        return path
    if len(os.fsencode(str(full))) + _ROOM > _path_max_bytes(Path(".")):  # too long whole: kept relative
        return path
    return full


def show_text(text: str, at: Path, shown: Path) -> str:
    """``text`` with the absolute output folder ``at`` written as the user gave it, ``shown`` (where ``at`` is
    :func:`absolute_out` of ``shown``), also in its escaped form (planner.core.names.escape_unsafe), and only
    where the whole path stands (not a longer name that begins the same)."""
    from planner.core.names import escape_unsafe

    if at == shown or not isinstance(text, str):
        return text
    plain = str(shown)
    if plain.startswith("-"):  # Path('./-o') is '-o', which a hint's command would read as options (h36a 2)
        plain = "./" + plain
    for a, s in ((str(at), plain), (escape_unsafe(str(at)), escape_unsafe(plain))):
        if a in text and s == ".":  # Path('.') / 'x' is 'x': a path inside the current folder is shown bare
            text = re.sub(_BEFORE + re.escape(a + "/") + _NOT_A_VALUE, "", text)
        if a in text:
            text = re.sub(_BEFORE + re.escape(a) + _AFTER + _NOT_A_VALUE, lambda _m, s=s: s, text)
    return text


def show_path(path: Path, at: Path, shown: Path) -> Path:
    """``path`` (the folder ``at`` or a path inside it) as the user would name it: under ``shown``; any other
    path as it is."""
    if at == shown:
        return path
    try:
        rest = Path(path).relative_to(at)
    except ValueError:
        return path
    return shown / rest


def show_error(exc: BaseException | None, at: Path, shown: Path) -> None:
    """Show ``at`` as ``shown`` in a planner error's message (planner.core.errors.PlannerError: its one argument)
    and in the paths it carries (``written``, ``removed``: planner.core.interrupt.Interrupted and the failed
    commit's), changing ``exc`` in place; any other exception is left as it is."""
    from planner.core.errors import PlannerError
    from planner.core.interrupt import Interrupted

    if at == shown or not isinstance(exc, (PlannerError, Interrupted)):
        return
    if isinstance(exc, PlannerError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        exc.args = (show_text(exc.args[0], at, shown),)
    for attr in ("problem", "file", "hint", "command_line"):  # its parts, and its CLI words (DestinationError)
        if isinstance(getattr(exc, attr, None), str):
            setattr(exc, attr, show_text(getattr(exc, attr), at, shown))
    for attr in ("written", "removed"):
        paths = getattr(exc, attr, None)
        if isinstance(paths, (list, tuple)) and all(isinstance(p, Path) for p in paths):
            try:
                setattr(exc, attr, type(paths)(show_path(p, at, shown) for p in paths))
            except (AttributeError, TypeError):
                pass


@contextmanager
def shown_as(at: Path, shown: Path) -> Iterator[None]:
    """A block whose planner errors show the absolute output folder ``at`` as the user wrote it (:func:`show_error`):
    for the checks a run makes by the path it resolved."""
    try:
        yield
    except BaseException as exc:
        show_error(exc, at, shown)
        raise


def resolved_out(out: Path | str | None) -> tuple[Path | None, Path | None]:
    """``out`` resolved now (:func:`absolute_out`) and as given (a Path), for a call to go by the one and show
    the other; (None, None) for no ``out``."""
    return (None, None) if out is None else (absolute_out(out), Path(out))
