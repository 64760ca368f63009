"""What a report set's staging folder records while a run writes into it (its mark), at the lowest level: the
writes of planner.core.atomic call these, and planner.core.stagemark reads the mark and clears what a stopped run
left by it. Nothing here imports another planner module, so atomic can use it without a cycle."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

#: The prefix of a report set's staging folders (planner.core.reportset).
STAGING_PREFIX = ".planner-staging-"
#: The file inside a staging folder that marks it as planner's (a folder without it is never removed).
STAGING_MARK = ".planner-staging"


def staging_mark(directory: Path) -> Path | None:
    """The mark of ``directory`` when it is a report set's staging folder (its name has :data:`STAGING_PREFIX` and
    it holds a mark that is a regular file of this user); None otherwise (every other folder)."""
    if not Path(directory).name.startswith(STAGING_PREFIX):
        return None
    mark = Path(directory) / STAGING_MARK
    try:
        st = os.lstat(mark)
    except OSError:
        return None
    return mark if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() else None


def record(mark: Path, item: object) -> None:
    """Append ``item`` to ``mark`` as one JSON line (closed, so flushed, before this returns).

    Raises:
        OSError: it cannot be written (a full disk, the folder removed meanwhile).
    """
    with open(mark, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(item) + "\n")


def record_temp(mark: Path, tmp: str) -> None:
    """Record the temporary file ``tmp`` (a path; its name is recorded) before it is created. Raises OSError."""
    record(mark, {"tmp": os.path.basename(tmp)})


def record_file(mark: Path, name: str, digest: str, size: int) -> None:
    """Record the complete staged report ``name`` (its SHA-256 ``digest`` and ``size`` in bytes) before it is
    renamed to that name. Raises OSError."""
    record(mark, {"sha256": {name: digest}, "bytes": {name: size}})
