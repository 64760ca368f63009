"""The check copy of ``catalog import-skypilot``: a temporary folder (``planner-overlay-XXXXXXXX`` in the temporary
folder, TMPDIR else /tmp) holding the overlay as it would be written, loaded before anything goes into ``--out``
(planner.cli.catalog.check_overlay).

It is made and removed with the stop signals held (planner.core.interrupt.held), so SIGINT, SIGTERM or SIGHUP
landing there does not leave it half removed (h26a m1). A SIGKILL (or a power cut) still can: each check copy holds
a mark, :data:`MARK`, naming planner and the process that made it, and a later import removes a check copy that it
can prove is a stopped run's own (:func:`sweep_stale`): a folder of this user, mode 0700 as ``mkdtemp`` makes it,
named as planner names it, holding the mark and nothing but the catalog files planner copies there (regular files
of this user, one link each, each of the size and SHA-256 the mark records for it: one edited after planner wrote
it may be the user's, h29a N3), none changed in the last :data:`STALE_SECONDS`, whose process is gone. Anything
else is left as it is.

The mark records a file's size and hash before the file is written (:func:`write_check_file`), so a SIGKILL at
any instant leaves either a file the mark does not name or one whose bytes do not match it: both are kept.

Sources: Python documentation, ``tempfile.mkdtemp`` (mode 0700, the 8 random characters of its names); Linux
man-pages ``kill(2)`` (signal 0 checks whether a process exists: ESRCH when none has that id).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

#: The prefix of a check copy's folder name (tempfile adds 8 characters of a-z, 0-9 and '_').
PREFIX = "planner-overlay-"
_NAME = re.compile(re.escape(PREFIX) + r"[a-z0-9_]{8}")
#: The mark planner writes first into each check copy, and removes last.
MARK = ".planner-check-copy"
#: What the mark holds: this format tag, the id of the process that made the copy and, under "files", each file
#: planner writes there: {"size": bytes, "sha256": hex digest}.
MARK_FORMAT = "planner overlay check copy 1"
#: How long a check copy must have been left unchanged before a later run may remove it (the check itself takes
#: seconds; a run stopped with Ctrl-Z for longer keeps its copy while its process lives).
STALE_SECONDS = 10 * 60


class CheckDir(type(Path())):  # type: ignore[misc]
    """The path of a check copy this run made, with what it made there (h34a N3): :attr:`ident`, the folder's
    device and inode as made, and :attr:`made`, name -> device and inode of each file it created there (the
    mark among them). Its clean-up (:func:`remove_check_dir`) removes only those, through a descriptor of that
    folder."""

    ident: tuple[int, int] | None = None
    made: dict[str, tuple[int, int]]


def make_check_dir() -> CheckDir:
    """A new check copy folder (mode 0700) holding the mark (:data:`MARK`), in the temporary folder; its device
    and inode, and its mark's, are kept on the path given back (:class:`CheckDir`).

    Raises:
        OSError: the folder or its mark cannot be made (the folder is removed again where it was made).
    """
    path = CheckDir(tempfile.mkdtemp(prefix=PREFIX))
    path.made = {}
    try:
        fd = _open_own(path)  # a link put at its name at once is never taken for it
        st = os.fstat(fd)
        os.close(fd)
        path.ident = (st.st_dev, st.st_ino)
        _write_mark(path, {}, os.O_CREAT | os.O_EXCL)
    except OSError:
        remove_check_dir(path)
        raise
    return path


def _write_mark(path: Path, files: dict[str, dict[str, object]], flags: int) -> None:
    """Write the mark of the check copy ``path``: this process and ``files``. Raises OSError."""
    doc = {"format": MARK_FORMAT, "pid": os.getpid(), "files": files}
    folder = _open_own(path)
    try:
        fd = os.open(MARK, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | flags, 0o600, dir_fd=folder)
    finally:
        os.close(folder)
    _note_made(path, MARK, fd)
    try:
        data = json.dumps(doc, sort_keys=True).encode("ascii") + b"\n"
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def write_check_file(path: Path, name: str, data: bytes) -> None:
    """Write ``data`` as the file ``name`` (a new one) in the check copy ``path``, its size and SHA-256 recorded
    in the mark first (a stop at any instant leaves a file the sweep keeps or one it can prove is planner's).

    Raises:
        OSError: the mark or the file cannot be written (a full temporary folder, ulimit -f).
    """
    files = _mark_doc_files(path)
    files[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    _write_mark(path, files, 0)
    folder = _open_own(path)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder)
    finally:
        os.close(folder)
    _note_made(path, name, fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _mark_doc_files(path: Path) -> dict[str, dict[str, object]]:
    """The files this run's mark in ``path`` records so far (a copy)."""
    folder = _open_own(path)
    try:
        fd = os.open(MARK, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as f:
        doc = json.loads(f.read())
    return dict(doc.get("files") or {})


def _open_own(path: Path) -> int:
    """A descriptor of the check copy folder ``path``, opened without following a link and, for a
    :class:`CheckDir` whose folder is known, checked to be the folder this run made (device and inode): every file
    planner writes there goes through it, never into a folder another program put at that name (h34a N3).

    Raises:
        OSError: a link or a file is at its name (ELOOP, ENOTDIR), another folder (ESTALE), or it cannot be opened.
    """
    import errno

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    ident = getattr(path, "ident", None)
    st = os.fstat(fd)
    if ident is not None and (st.st_dev, st.st_ino) != ident:
        os.close(fd)
        raise OSError(errno.ESTALE, "another folder was put at the check copy's name", str(path))
    return fd


def _note_made(path: Path, name: str, fd: int) -> None:
    """Note the device and inode of the file ``name`` this run just made (open as ``fd``) in its check copy
    ``path`` (a :class:`CheckDir`; another path notes nothing)."""
    made = getattr(path, "made", None)
    if made is not None:
        st = os.fstat(fd)
        made[name] = (st.st_dev, st.st_ino)


def remove_check_dir(path: Path) -> str | None:
    """Remove this run's check copy ``path`` (a :class:`CheckDir`): the files it made there, then its mark, then
    the folder (the mark goes last, so a copy that a SIGKILL cut short keeps the mark that lets a later run remove
    it). All through a descriptor of the folder opened without following a link and checked to be the folder it
    made (device and inode), each file unlinked only while it is the file this run made (device and inode): a
    link or another folder put at its name, or a file another program put in it, is never followed or removed
    (h34a N3). Returns None when the copy is gone, else the line saying what was left and why.
    """
    from planner.core.names import escape_unsafe

    ident, made = getattr(path, "ident", None), getattr(path, "made", None)
    shown = escape_unsafe(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError:
        return (f"Left {shown}: it is no longer the check copy folder this run made (a link or another file was "
                "put at its name), so planner removed nothing there; check it and remove it yourself.")
    left: list[str] = []
    try:
        st = os.fstat(fd)
        if ident is not None and (st.st_dev, st.st_ino) != ident:
            return (f"Left {shown}: it is no longer the check copy folder this run made (replaced or moved by "
                    "another program), so planner removed nothing there; check it and remove it yourself.")
        names = os.listdir(fd)
        for name in sorted(names, key=lambda n: n == MARK):  # the mark last
            try:
                f = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if made is not None and made.get(name) != (f.st_dev, f.st_ino):
                    left.append(name)  # not a file this run made there
                    continue
                os.unlink(name, dir_fd=fd)
            except OSError:
                left.append(name)
    except OSError:
        return f"Left {shown}: it could not be read, so planner removed nothing more there."
    finally:
        os.close(fd)
    if left:
        return (f"Left {shown}: it holds {', '.join(escape_unsafe(n) for n in sorted(left)[:5])}, which this run did "
                "not put there (or could not remove), so planner removed only its own files; check it and remove "
                "it yourself.")
    try:
        now = os.lstat(path)
        if ident is None or (now.st_dev, now.st_ino) == ident:
            os.rmdir(path)  # only ever an empty folder
    except OSError:
        pass
    return None


def sweep_stale(folder: Path, allowed: Iterable[str], *, keep: Path | None = None,
                now: float | None = None) -> list[Path]:
    """Remove the check copies in ``folder`` (the temporary folder) that stopped runs left: those
    :func:`_stale` proves are planner's, of this user and of a process that is gone; ``allowed``: the file names
    planner copies into one (the catalog files), besides the mark; ``keep``: this run's own copy. Nothing else is
    touched, and nothing that cannot be removed is said. Returns the folders removed."""
    allowed = frozenset(allowed)
    now = time.time() if now is None else now
    removed = []
    try:
        entries = sorted(n for n in os.listdir(folder) if _NAME.fullmatch(n))
    except OSError:
        return []
    for name in entries:
        path = Path(folder) / name
        if keep is not None and path == keep:
            continue
        if _remove_if_stale(path, allowed, now):
            removed.append(path)
    return removed


def _remove_if_stale(path: Path, allowed: frozenset[str], now: float) -> bool:
    """Remove the check copy ``path`` when :func:`_stale`; by descriptor of the folder opened without following a
    link, so the files removed are those judged. Whether it was removed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        names = _stale(fd, allowed, now)
        if names is None:
            return False
        for name in sorted(names, key=lambda n: n == MARK):  # the mark last
            os.unlink(name, dir_fd=fd)
        os.rmdir(path)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _stale(fd: int, allowed: frozenset[str], now: float) -> list[str] | None:
    """The names in the folder open as ``fd`` when it is a stopped run's check copy (see the module's docstring),
    else None."""
    me = os.geteuid()
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != me or stat.S_IMODE(st.st_mode) != 0o700:
        return None
    names = os.listdir(fd)
    if MARK not in names or not set(names) <= allowed | {MARK}:
        return None
    newest = st.st_mtime
    for name in names:
        f = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(f.st_mode) or f.st_uid != me or f.st_nlink != 1:
            return None
        newest = max(newest, f.st_mtime, f.st_ctime)
    if now - newest < STALE_SECONDS:
        return None
    doc = _read_mark(fd)
    pid = doc.get("pid") if doc is not None else None
    if type(pid) is not int or pid <= 0 or _alive(pid):
        return None
    files = doc.get("files")
    if not isinstance(files, dict):
        return None
    for name in names:
        if name != MARK and not _as_written(fd, name, files.get(name)):
            return None  # changed since planner wrote it, or not recorded: perhaps the user's (h29a N3)
    return names


def _read_mark(fd: int) -> dict | None:
    """The mark in the folder open as ``fd``, or None when it is not planner's mark."""
    try:
        mfd = os.open(MARK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        return None
    try:
        data = os.read(mfd, 65537)
    finally:
        os.close(mfd)
    try:
        doc = json.loads(data) if len(data) <= 65536 else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == MARK_FORMAT else None


def _as_written(fd: int, name: str, record: object) -> bool:
    """Whether the file ``name`` in the folder open as ``fd`` holds the bytes ``record`` (the mark's
    {"size", "sha256"} for it) says planner wrote."""
    if not isinstance(record, dict) or type(record.get("size")) is not int or not isinstance(record.get("sha256"),
                                                                                         str):
        return False
    try:
        ffd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        return False
    try:
        st = os.fstat(ffd)
        if not stat.S_ISREG(st.st_mode) or st.st_size != record["size"]:
            return False
        digest = hashlib.sha256()
        while True:
            chunk = os.read(ffd, 1 << 20)
            if not chunk:
                break
            digest.update(chunk)
    finally:
        os.close(ffd)
    return digest.hexdigest() == record["sha256"]


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts: EPERM)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
