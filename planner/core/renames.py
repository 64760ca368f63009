"""Renames that cannot lose a file saved meanwhile: Linux ``renameat2(2)`` with ``RENAME_EXCHANGE`` and
``RENAME_NOREPLACE``.

A plain ``rename(new, name)`` replaces whatever ``name`` is at that instant: an editor that saves by
writing a temporary file and renaming it over ``name`` just before planner's rename loses that save,
however often planner checked ``name`` before. ``RENAME_EXCHANGE`` swaps the two names in one step, so
what was at ``name`` at that instant comes out under the other name, where planner can check it and
swap it back; ``RENAME_NOREPLACE`` fails with ``EEXIST`` rather than replace a file created meanwhile.

Where the call is missing (not Linux, a C library without ``renameat2``, glibc < 2.28) or the file
system does not support the flag (``EINVAL``, ``ENOSYS``, ``EOPNOTSUPP``), the functions return False
and the caller falls back to plain renames. The C function is looked up at each call (importing this
module does no work).

Sources: Linux man-pages ``rename(2)``, section "renameat2()" (RENAME_EXCHANGE and RENAME_NOREPLACE,
Linux 3.15; glibc wrapper 2.28).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

#: ``AT_FDCWD`` (fcntl.h): a path relative to the current directory.
_AT_FDCWD = -100
#: renameat2 flags (linux/fs.h).
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
#: errno values that mean "this file system or kernel cannot do that", not "that failed".
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, getattr(errno, "EOPNOTSUPP", errno.ENOSYS),
                          getattr(errno, "ENOTSUP", errno.ENOSYS)})


def _renameat2():
    """The C library's ``renameat2``, or None where there is none (looked up at each call: dlopen of the
    running program is cheap, and no module keeps a cache)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError, ImportError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def _call(src: Path, dst: Path, flags: int, dir_fd: int | None = None) -> bool:
    """``renameat2`` of ``src`` to ``dst`` with ``flags``; with ``dir_fd``, both are names in the folder open as
    that descriptor."""
    fn = _renameat2()
    if fn is None:
        return False
    import ctypes

    at = _AT_FDCWD if dir_fd is None else dir_fd
    if dir_fd is not None:
        src, dst = Path(os.path.basename(src)), Path(os.path.basename(dst))
    if fn(at, os.fsencode(src), at, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(src), None, str(dst))


def exchange(a: Path, b: Path) -> bool:
    """Swap the files (or folders, or links) named ``a`` and ``b`` in one step; both must exist, on one file
    system.

    Returns:
        True when swapped; False when this system or file system cannot (nothing was changed).

    Raises:
        OSError: the swap failed (ENOENT: one of them is missing; EXDEV; EACCES...).
    """
    return _call(a, b, RENAME_EXCHANGE)


def rename_noreplace(src: Path, dst: Path) -> bool:
    """Rename ``src`` to ``dst`` only if nothing is named ``dst``.

    Returns:
        True when renamed; False when this system or file system cannot (nothing was changed).

    Raises:
        FileExistsError: ``dst`` exists (created meanwhile); OSError: the rename failed otherwise.
    """
    return _call(src, dst, RENAME_NOREPLACE)


def place_new(src: Path, dst: Path, *, rename: bool = True) -> None:
    """Give ``src`` the name ``dst`` only while nothing is named ``dst``: :func:`rename_noreplace`, else (the
    system cannot, or ``rename`` is False) a hard link, which never replaces (link(2): EEXIST), and the
    removal of ``src``.

    Raises:
        FileExistsError: ``dst`` exists (created meanwhile); OSError: the rename or link failed otherwise.
    """
    if rename and rename_noreplace(src, dst):
        return
    os.link(src, dst)
    os.unlink(src)


def place_staged(src: Path, dst: Path, *, dir_fd: int | None = None) -> None:
    """Give the staged file ``src`` the name ``dst`` without replacing a file there (:func:`place_new`); on a
    file system that can neither rename without replacing nor make hard links (link(2): EPERM, ENOTSUP), a plain
    rename once ``dst`` is found free (a file made in the instant between is that fallback's known limit).
    ``dir_fd``: a descriptor of the staging folder both are in, through which every step goes (h34a N2).

    Raises:
        FileExistsError: ``dst`` exists; OSError: the rename failed otherwise.
    """
    if dir_fd is not None:
        a, b = os.path.basename(src), os.path.basename(dst)
        if _call(Path(a), Path(b), RENAME_NOREPLACE, dir_fd):
            return
        try:
            os.link(a, b, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            os.unlink(a, dir_fd=dir_fd)
            return
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
                raise
        try:
            os.stat(b, dir_fd=dir_fd, follow_symlinks=False)
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
        except FileNotFoundError:
            os.replace(a, b, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    try:
        place_new(src, dst)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
            raise
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst)) from None
        os.replace(src, dst)
