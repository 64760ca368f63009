"""The line for an output folder whose lock (``flock`` on the folder itself, planner.core.reportset) is held, and
whether this very process holds it. Importing this module does no work."""

from __future__ import annotations

import os
from pathlib import Path

from planner.core.names import line_path, path_word


def held_here(fd: int) -> bool:
    """Whether the ``flock`` on the folder open as ``fd`` is held by this process (another thread's call into the same
    folder, or a lock the program took itself): Linux's /proc/locks lists each lock's process id (the process's, for
    any of its threads) and the device and inode it is on. False where that cannot be told (no /proc/locks)."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return False
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        words = line.split()
        # '1: FLOCK  ADVISORY  WRITE 24313 fe:00:2418597 0 EOF'; a waiter's line has '->' after the number
        if len(words) >= 6 and words[1] == "FLOCK" and words[5] == where:
            return words[4] == str(os.getpid())
    return False


def lock_held(out: Path, *, here: bool = False) -> str:
    """The line for an output folder whose lock another process holds: most often another planner run, but any
    process that can open the folder (another user's, where others can read it) can take a ``flock`` on it, so
    the line says what is known and how to find the holder (fuser, lsof: they list processes that have it open).
    ``here``: this process holds it (:func:`held_here`: another thread's ``plan(out=)`` or ``compare(out=)`` into the
    same folder), said as that; the set is still refused, so that the folder holds one set, whole."""
    shown = line_path(out)
    if here:
        return (f"{shown}: this process already holds this directory's lock (another call writing reports into it, "
                "such as plan(out=) or compare(out=) in another thread, or a lock the program took on the folder). "
                "Let that call finish first (one call at a time per folder), or give another out=.")
    return (f"{shown}: another process holds this directory's lock (another planner run writing reports into it, "
            "or any program of any user who can read the folder). Wait for it to finish, find it with "
            f"fuser -v {path_word(str(out))} or lsof {path_word(str(out))}, or give another --out (a private one: "
            "chmod 700).")  # the path's bytes in $'...' where the terminal shows them escaped (h38a 16)
