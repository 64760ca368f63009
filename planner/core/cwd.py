"""A relative path when the current folder has been removed (another shell ran ``rm -rf`` on it, a ``git
checkout`` dropped it).

The process keeps its current folder as an inode even once the folder is removed, so nothing can be made in it
and nothing found through it: Linux's ``getcwd(2)`` then fails with ENOENT (man 2 getcwd: "The current working
directory has been unlinked"), opening or making a relative path fails with ENOENT too, and ``..`` from it
cannot be looked up. Without this check that ENOENT reads as a missing input or an unwritable standard output;
with it the run says what happened, naming the path, and what to do. An absolute path is never affected.
"""

from __future__ import annotations

import os
from pathlib import Path

#: What happened, as the messages say it.
CWD_GONE = "the current folder no longer exists (it was removed)"
#: What to do about it.
CWD_HINT = "cd to a folder and run again"


def cwd_gone() -> bool:
    """Whether the current folder has been removed (``os.getcwd()`` fails with FileNotFoundError: ENOENT,
    man 2 getcwd). Any other failure of ``getcwd`` is not this one: False."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def lost_relative(path: Path | str) -> bool:
    """Whether ``path`` is relative and the current folder it is relative to has been removed
    (:func:`cwd_gone`): then it cannot be found or made, whatever it names."""
    try:
        relative = not os.path.isabs(os.fspath(path))
    except TypeError:
        return False
    return relative and cwd_gone()


def gone_line(path: Path | str) -> str:
    """The one line for a relative ``path`` under a removed current folder: '<path>: the current folder no
    longer exists (it was removed); cd to a folder and run again.'"""
    return f"{path}: {CWD_GONE}; {CWD_HINT}."
