"""A path the user may not read, said in planner's one line with what to change (h21a m1).

``os.access`` answers for the real user and group ids, as the kernel's check of an open or a listing would for a
process that changed neither (access(2)); root passes every read and search check.
"""

from __future__ import annotations

import os

from planner.core.names import path_text, path_word


def denied_problem(path: str | bytes | os.PathLike, name: str, *, lead: bool = True) -> str | None:
    """Planner's line for ``path`` (an option or argument named ``name``, '--out' or 'scenario') that exists but
    cannot be read: a file without read permission, a folder without read or search (x) permission, with a
    ``chmod`` hint and another path; None when it can be read, or is missing (said elsewhere). ``lead``: the line
    starts with ``name`` ("--out: 'o3' cannot be read ..."), else with the path ("o3: cannot be read ...", as a
    DestinationError words it for the API, which names ``out=`` in the hint).

    Errors: none raised; a path whose status cannot be taken is None."""
    try:
        is_dir = os.path.isdir(path)
        if not os.path.exists(path):  # missing, or a dangling link: said elsewhere as what it is
            return None
        lacks = [w for w, bit in (("read", os.R_OK), ("search (x)", os.X_OK))
                 if (bit == os.R_OK or is_dir) and not os.access(path, bit)]
    except (OSError, ValueError):
        return None
    if not lacks:
        return None
    shown = path_text(os.fsdecode(path))
    mode = "u+rx" if is_dir else "u+r"
    other = f"another {name}" if name.startswith("-") else "another file"
    said = f"{name}: '{shown}'" if lead else f"{shown}:"
    return (f"{said} cannot be read (permission denied: you lack its {' and '.join(lacks)} permission). "
            f"Give {other}, or let yourself in: chmod {mode} {path_word(os.fsdecode(path))}.")


__all__ = ["denied_problem"]
