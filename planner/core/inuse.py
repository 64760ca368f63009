"""A staging-named folder a run must not remove as a stopped run's leftover, because something of this run goes
through it: the temporary folder (``TMPDIR``), the current folder, or the output folder's path as given.

A killed run leaves ``OUT/.planner-staging-XXXXXXXX/`` and the next run that holds the output folder's lock removes
it (planner.core.reportset). But a user may ``cd`` into that folder to look at what it holds, and run planner from
there with ``--out ..``: the folder is then the process's current folder and lies on the output folder's path
(``OUT/.planner-staging-XXXXXXXX/..``). Removing it would leave the user's shell in a removed folder, and every
later step of the run that goes by that path would fail with ENOENT, read as "cannot write into the output
directory" (h28a N1). Such a folder is left, and said; the run goes on.

Every folder is compared by device and inode (``os.stat``), so a link to the folder, or a path through it written
with ``..``, counts.
"""

from __future__ import annotations

import os
from pathlib import Path


def _ident(path: Path | str) -> tuple[int, int] | None:
    """The device and inode of ``path`` (links followed); None where it cannot be read."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


#: What the note says after why a folder this run goes through is left.
_LEFT = ("so planner removed nothing there, though a stopped planner run may have left it; check it and remove it "
         "yourself from another folder.")


def in_use(folder: Path, out: Path) -> str | None:
    """Why the staging-named ``folder`` (inside the output folder ``out``) must not be removed, as the words after
    "Left <folder>: " (a sentence), or None when nothing of this run goes through it.

    Args:
        folder: a staging-named folder found in the output folder.
        out: the output folder's path as the run goes by it (planner.core.resolved.absolute_out: a relative
            ``--out`` joined to the current folder, '..' kept), each of whose leading parts is checked.

    Returns:
        'it is the temporary folder (TMPDIR), or holds it, so it is not a folder a stopped planner run left.';
        'it is the current folder', 'it holds the current folder' or 'it is on the output folder's path as given',
        then ', so planner removed nothing there ...' (:data:`_LEFT`); or None (also when ``folder`` cannot be read).
    """
    from planner.core.tempdir import temp_folder, temp_within

    me = _ident(folder)
    if me is None:
        return None
    temp = temp_folder()  # a TMPDIR named like a staging folder is the user's, never removed
    if temp is not None and temp_within(temp, folder) is not None:
        return "it is the temporary folder (TMPDIR), or holds it, so it is not a folder a stopped planner run left."
    try:
        here = Path(os.getcwd())
    except OSError:  # a removed current folder: nothing of it can be in the output folder
        here = None
    if here is not None:
        for i, above in enumerate([here, *here.parents]):
            if _ident(above) == me:
                return ("it is the current folder, " if i == 0 else "it holds the current folder, ") + _LEFT
    parts = Path(out).parts
    for n in range(1, len(parts)):  # 'OUT/.planner-staging-x/..' goes through it; OUT itself is not it
        if _ident(Path(*parts[:n])) == me:
            return "it is on the output folder's path as given, " + _LEFT
    return None
