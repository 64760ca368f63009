"""Atomic file writes: a reader sees the old file or the new one, never half of either.

The data goes to a temporary file in the destination's own directory (so the final rename
stays on one file system), is flushed and ``fsync``-ed, then ``os.replace`` moves it over the
destination in one step; the directory is ``fsync``-ed afterwards where the platform allows it.
On any failure the temporary file is removed and an :class:`planner.core.errors.OutputError` says, in
one line, which path could not be written and why.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from planner.core.errors import OutputError


def ensure_dir(directory: Path) -> Path:
    """Create ``directory`` (and its parents) if needed.

    Raises:
        OutputError: it exists as a file, or cannot be created.
    """
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise OutputError(f"{d}: is a file, not a directory. Give --out a directory (it is created if missing).")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{d}: cannot create the output directory ({exc.strerror or exc}). "
                          "Give --out a directory that can be created and written.") from None
    return d


def write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same directory, fsync, os.replace).

    Raises:
        OutputError: the directory is missing or unwritable, the disk is full, or the
            destination is a directory.
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path}: is a directory, not a file. Move it away or write elsewhere.")
    directory = path.parent
    tmp_name = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        os.chmod(tmp_name, _mode_for(path))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
        tmp_name = None
        _fsync_dir(directory)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc}). Check that its directory is writable "
                          "and the disk has room.") from None
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
    return path


def write_text(path: Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`write_bytes`)."""
    return write_bytes(path, text.encode("utf-8"))


def _mode_for(path: Path) -> int:
    """The permissions the file would get from a plain open(): the old file's, else 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
