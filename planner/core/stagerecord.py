"""What a report set's staging folder records while a run writes into it (its mark), at the lowest level: the
writes of planner.core.atomic call these, and planner.core.stagemark reads the mark and clears what a stopped run
left by it. Nothing here imports another planner module, so atomic can use it without a cycle."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

#: The prefix of a report set's staging folders (planner.core.reportset).
STAGING_PREFIX = ".planner-staging-"
#: The file inside a staging folder that marks it as planner's (a folder without it is never removed).
STAGING_MARK = ".planner-staging"


class StagingMoved(OSError):
    """A report set's staging folder is no longer the folder the run made (renamed away, a link or another folder
    put at its name), or its mark is not the mark the run made there (h34a N2): nothing is written there."""


#: How the run names, in a staging folder's mark, the folder it made: the line after the header (h34a N2).
FOLDER_KEY = "folder"

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_MARK_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def open_folder(folder: Path, ident: tuple[int, int] | None = None) -> int:
    """A descriptor of the staging ``folder``, opened without following a link; with ``ident``, checked to be the
    folder of that device and inode (the one the run made).

    Raises:
        StagingMoved: a link, a file or another folder is at its name; OSError: it cannot be opened (ENOENT: gone).
    """
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise StagingMoved(exc.errno, "a link or a file is at its name") from None
        raise
    st = os.fstat(fd)
    if ident is not None and (st.st_dev, st.st_ino) != tuple(ident):
        os.close(fd)
        raise StagingMoved(errno.ESTALE, "another folder is at its name")
    return fd


def open_mark(folder_fd: int, ident: tuple[int, int] | None = None) -> int:
    """A descriptor of the mark in the staging folder open as ``folder_fd``, for appending, opened without following
    a link (never created here): with ``ident``, checked to be the mark of that device and inode (the one the run
    made); without, checked to be a regular file of this user whose line after the header names that folder
    (:data:`FOLDER_KEY`: its device and inode), as the run that made the folder wrote it.

    Raises:
        StagingMoved: no mark, or not the run's own; OSError: it cannot be read.
    """
    try:
        fd = os.open(STAGING_MARK, _MARK_FLAGS, dir_fd=folder_fd)
    except OSError as exc:
        raise StagingMoved(exc.errno, "its staging mark is missing or is a link") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise StagingMoved(errno.ESTALE, "its staging mark is not planner's")
        if ident is not None:
            if (st.st_dev, st.st_ino) != tuple(ident):
                raise StagingMoved(errno.ESTALE, "its staging mark is not the one this run made")
            return fd
        head = os.pread(fd, 4096, 0).split(b"\n")
        folder = os.fstat(folder_fd)
        try:
            named = json.loads(head[1]) if len(head) > 2 else None
        except ValueError:
            named = None
        if named != {FOLDER_KEY: [folder.st_dev, folder.st_ino]}:
            raise StagingMoved(errno.ESTALE, "its staging mark does not name this folder")
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_staging(directory: Path) -> tuple[int, int] | None:
    """(folder descriptor, mark descriptor) of ``directory`` when its name is a report set's staging folder's
    (:data:`STAGING_PREFIX`): the folder opened without following a link, its mark naming that very folder
    (:func:`open_mark`); every write there then goes through the folder's descriptor (``dir_fd``), never by a path
    another program could have pointed elsewhere (h34a N2). None for every other folder.

    Raises:
        StagingMoved: a link, a file, or a folder without the run's mark at its name; OSError: it cannot be opened.
    """
    if not Path(directory).name.startswith(STAGING_PREFIX):
        return None
    folder_fd = open_folder(Path(directory))
    try:
        return folder_fd, open_mark(folder_fd)
    except BaseException:
        os.close(folder_fd)
        raise


def record(mark: Path | int, item: object) -> None:
    """Append ``item`` to ``mark`` (a path, or a descriptor opened for appending: :func:`open_staging`) as one JSON
    line (closed, so flushed, before this returns).

    Raises:
        OSError: it cannot be written (a full disk, the folder removed meanwhile).
    """
    if isinstance(mark, int):
        data = (json.dumps(item) + "\n").encode("utf-8")
        while data:
            data = data[os.write(mark, data):]
        return
    fd = os.open(mark, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(item) + "\n")


def record_temp(mark: Path | int, tmp: str) -> None:
    """Record the temporary file ``tmp`` (a path; its name is recorded) before it is created. Raises OSError."""
    record(mark, {"tmp": os.path.basename(tmp)})


def record_file(mark: Path | int, name: str, digest: str, size: int, made: tuple[int, int] | None = None) -> None:
    """Record the complete staged report ``name`` (its SHA-256 ``digest`` and ``size`` in bytes) before it is
    renamed to that name; ``made``: the device and inode of the file written (the live run removes a staged
    report only while that name still holds that file: :func:`made_files`, :func:`unlink_same`). Raises OSError."""
    item: dict = {"sha256": {name: digest}, "bytes": {name: size}}
    if made is not None:
        item["made"] = list(made)
    record(mark, item)


def made_files(mark: Path, ident: tuple[int, int] | None) -> dict[str, tuple[int, int]]:
    """The staged reports this run wrote, read back from its own ``mark`` (whose device and inode, as made, are
    ``ident``: another file put at its name is not read): name -> the device and inode recorded by
    :func:`record_file` (the latest line of a name). {} when the mark is not that file or cannot be read."""
    made: dict[str, tuple[int, int]] = {}
    try:
        fd = os.open(mark, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return made
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident or not stat.S_ISREG(st.st_mode):
            return made
        with os.fdopen(os.dup(fd), "rb") as fh:
            lines = fh.read(1 << 24).split(b"\n")[1:]
    except OSError:
        return made
    finally:
        os.close(fd)
    for line in lines:
        try:
            item = json.loads(line)
            (name,) = item["sha256"]
            dev, ino = item["made"]
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            continue
        if isinstance(name, str) and type(dev) is int and type(ino) is int:
            made[name] = (dev, ino)
    return made


def staged_records(mark: Path, ident: tuple[int, int] | None) -> dict[str, tuple[str, int, tuple[int, int]]]:
    """What this run's own ``mark`` (device and inode as made: ``ident``; another file at its name is not read)
    records of each complete staged report (:func:`record_file`, the latest line of a name): name -> (its SHA-256
    as planner wrote it, its size in bytes, the device and inode of the file written). These are the bytes planner
    wrote, never read back from the staged file, which another program may have swapped or edited since (h34a N1).
    {} when the mark is not that file or cannot be read."""
    recorded: dict[str, tuple[str, int, tuple[int, int]]] = {}
    for item in _own_lines(mark, ident):
        try:
            (name, digest), = item["sha256"].items()
            size = item["bytes"][name]
            dev, ino = item["made"]
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        if isinstance(name, str) and isinstance(digest, str) and all(type(v) is int for v in (size, dev, ino)):
            recorded[name] = (digest, size, (dev, ino))
    return recorded


def _own_lines(mark: Path, ident: tuple[int, int] | None) -> list:
    """The JSON lines after the header of the mark ``mark`` while it is the file ``ident`` (device, inode), opened
    without following a link; [] otherwise."""
    try:
        fd = os.open(mark, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return []
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident or not stat.S_ISREG(st.st_mode):
            return []
        with os.fdopen(os.dup(fd), "rb") as fh:
            lines = fh.read(1 << 24).split(b"\n")[1:]
    except OSError:
        return []
    finally:
        os.close(fd)
    items = []
    for line in lines:
        try:
            items.append(json.loads(line))
        except (ValueError, RecursionError):
            continue
    return items


def unchanged(path: Path, digest: str, size: int, ident: tuple[int, int], *, alone: bool = True) -> str | None:
    """Whether the staged report ``path`` is still the file planner made and wrote (h34a N1): opened without
    following a link, it must be the file of device and inode ``ident``, ``size`` bytes long and of SHA-256
    ``digest`` (hashed again through that descriptor), with no other name (one hard link: a name elsewhere would let
    another program change it later, h36a 4) and, where ``alone``, open in no other descriptor (:func:`held_open`:
    one opened on it could write into it after this check, h36a N1). None when it is; else "removed" (no file of
    that name), "changed" (another file at that name, or other bytes in it), "linked" or "open".

    Raises:
        OSError: it cannot be opened or read for another reason.
    """
    import hashlib

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return "removed"
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symbolic link put at its name
            return "changed"
        raise
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != tuple(ident) or not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return "changed"
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        if h.hexdigest() != digest:
            return "changed"
        if os.fstat(fd).st_nlink != 1:
            return "linked"
        return "open" if alone and held_open(fd) else None
    finally:
        os.close(fd)


#: fcntl's F_SETLEASE (Linux, F_LINUX_SPECIFIC_BASE + 0) and F_SETSIG (10), for a Python whose fcntl module does
#: not name them (asm-generic/fcntl.h).
_F_SETLEASE = 1024
_F_SETSIG = 10
#: How often a write lease is tried before a staged report is said to be held open, and the first wait between
#: tries (seconds; each wait one step longer: 0.02 + 0.04 + ... + 0.1, 0.3 s in all).
_LEASE_TRIES = 6
_LEASE_WAIT_S = 0.02


def held_open(fd: int) -> bool:
    """Whether the file open as ``fd`` (this run's only descriptor on it) is open in another descriptor too, of this
    process or another: Linux grants a write lease only on a file no other descriptor holds open (fcntl(2),
    F_SETLEASE, F_WRLCK: EAGAIN otherwise), so the lease is taken and given back at once. False where leases cannot
    tell (another system, a file system without them, leases disabled, a file of another owner: EINVAL, ENOLCK,
    EACCES): the caller's other checks stand alone there."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        return False
    import signal

    import time

    setlease = getattr(fcntl, "F_SETLEASE", _F_SETLEASE)
    try:
        # another open() while the lease is held signals its holder, SIGIO unless this descriptor names another
        # signal (F_SETSIG, per descriptor: no process-wide setting): SIGURG, whose default action is to ignore it
        fcntl.fcntl(fd, getattr(fcntl, "F_SETSIG", _F_SETSIG), signal.SIGURG)
    except (OSError, AttributeError):
        return False  # no way to keep a lease break from stopping the program: not tried
    # a reader that opens a new file and closes it at once (a virus scanner, an indexer, a backup) is no holder:
    # tried again over about half a second before the file is said to be held (h37a 13)
    for attempt in range(_LEASE_TRIES):
        try:
            fcntl.fcntl(fd, setlease, fcntl.F_WRLCK)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EBUSY):
                return False
            if attempt < _LEASE_TRIES - 1:
                time.sleep(_LEASE_WAIT_S * (attempt + 1))
            continue
        try:
            fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
        except OSError:
            pass
        return False
    return True


def unlink_same(path: str | Path, ident: tuple[int, int] | None) -> bool:
    """Unlink ``path`` only while it is the file whose device and inode are ``ident`` (the file this run made
    there): opened without following a link (``O_PATH``, where Linux has it, so a file without read permission
    or a pipe opens too) and compared through ``fstat`` just before the unlink, so a file another program put at
    that name since is never removed. True when it was unlinked or is gone; False when the name holds another
    file (or ``ident`` is None).

    Raises:
        OSError: the name cannot be opened or unlinked for another reason than being gone.
    """
    if ident is None:
        return False
    flags = getattr(os, "O_PATH", os.O_RDONLY | os.O_NONBLOCK) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symbolic link (O_NOFOLLOW): never the file planner made
            return False
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != tuple(ident):
            return False  # a link, pipe or folder is never a file planner made, whatever inode it reuses (h35a N1)
        os.unlink(path)
        return True
    finally:
        os.close(fd)


def clear_own(folder: Path, mark_id: tuple[int, int] | None,
              made: dict[str, tuple[int, int]]) -> tuple[list[str], list[str]]:
    """Remove from a live run's staging ``folder`` the files that run made there, known by what it made, never by
    a name's pattern (h33a N1, N4): its staged reports (the device and inode its mark records for each,
    :func:`made_files`), the files in ``made`` (name -> device and inode: the ``<i>.old`` its moves made), each
    only while the name still holds that file (:func:`unlink_same`); then its mark (``mark_id``) once none of its
    files is left. Returns (the names of files it did not make, sorted: another program's, left; the names of
    its own files that could not be removed, sorted); the folder itself is the caller's to remove."""
    mark = folder / STAGING_MARK
    own = {**made_files(mark, mark_id), **made}
    try:
        names = [e.name for e in os.scandir(folder) if e.name != STAGING_MARK]
    except OSError:  # no descriptor for the listing (ulimit -n): this run's own names, by path
        names = list(own)
    foreign, stuck = [], []
    for name in names:
        try:
            gone = unlink_same(folder / name, own.get(name))
        except OSError:
            stuck.append(name)
            continue
        if not gone:
            foreign.append(name)
    # a staged report this run found held open or linked (``made`` maps it to None) keeps the mark, which records
    # its hash: a later run removes it if it is still the file planner wrote (h37a 13: "cannot tell it wrote")
    flagged = any(made.get(n, ()) is None for n in foreign)
    if not stuck and not flagged:
        try:
            unlink_same(mark, mark_id)
        except OSError:
            pass
    return sorted(foreign), sorted(stuck)


def open_here(path: Path) -> bool:
    """Whether this very process holds ``path`` open in a descriptor (Linux's /proc/self/fd, compared by device and
    inode): a staged report found held open by this process's own thread, or a descriptor the calling program
    keeps, is said so, not blamed on another program (h37a 9). False where it cannot be told."""
    try:
        st = os.lstat(path)
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            other = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False
