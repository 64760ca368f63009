"""Atomic file writes: a reader sees the old file or the new one, never half of either.

The data goes to a temporary file in the destination's own directory (so the final rename
stays on one file system), is flushed and ``fsync``-ed, then ``os.replace`` moves it over the
destination in one step; the directory is ``fsync``-ed afterwards where the platform allows it.
On any failure the temporary file is removed and an :class:`planner.core.errors.OutputError` says, in
one line, which path could not be written and why. The temporary name is capped in UTF-8 bytes (a
file name may have at most 255 on most file systems, however long the destination's name is), and
a read-only destination is refused rather than replaced.

A set of files that must change together (a plan's reports) is written with
:class:`planner.core.reportset.ReportSet`, which stages them and moves them into place as one step.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from planner.core.aclxattr import ACL_XATTR, KEPT_MODE_BITS, _acl_of, keep_user_xattrs  # noqa: F401 (re-exported)
from planner.core.errors import DestinationError, OutputError
from planner.core.names import cut_utf8, path_word

from planner.core.stagerecord import STAGING_PREFIX  # noqa: E402,F401 (re-exported: planner.core.reportset)


#: The most UTF-8 bytes of the destination's name kept in a temporary file's name
#: ('.' + name + '.' + 8 random characters + '.tmp' stays under 255 bytes).
_TMP_NAME_BYTES = 200


def not_a_folder(path: Path, mode: int) -> DestinationError:
    """The refusal of an ``--out`` that exists and is no folder, saying what it is (a file, a named pipe, a
    device: planner.core.infile's words), with the hint to give a directory."""
    from planner.core.infile import _kind

    kind = _kind(mode) or "a file"
    return DestinationError(f"{path}: is {kind}, not a directory. Give --out a directory (it is created if missing).")


def ensure_dir(directory: Path, created: list[Path] | None = None) -> Path:
    """Create ``directory`` (and its parents) if needed; ``created``, if given, gets the folders made,
    outermost first (for the caller to remove again, when empty, if the run fails).

    Raises:
        OutputError: it exists as a file, or cannot be created.
    """
    d = Path(directory)
    try:
        if d.exists() and not d.is_dir():
            raise not_a_folder(d, os.stat(d).st_mode)
        # the missing folders, outermost first, made one by one: Path.mkdir(parents=True) and os.makedirs
        # recurse once per level, past Python's recursion limit for an --out 1,200 folders deep
        missing = []
        for p in (d, *d.parents):
            if os.path.isdir(p):
                break
            missing.append(p)
        for p in reversed(missing):
            try:
                # no group or others' write, whatever the umask (umask 000 or 020 would make a folder others could
                # rename entries in, which planner then refuses: planner.core.sharing); the umask still narrows it
                os.mkdir(p, 0o755)
                if created is not None:
                    created.append(p)
            except FileExistsError:
                if not os.path.isdir(p):
                    if os.path.islink(p) and not os.path.exists(p):
                        raise DestinationError(dangling_line(p)) from None
                    raise
    except OSError as exc:  # a name too long (ENAMETOOLONG) is raised by exists() itself
        if exc.errno == errno.ELOOP:
            raise DestinationError(loop_line(d)) from None
        if disk_full(exc):
            raise OutputError(f"{d}: cannot create the output directory ({exc.strerror or exc}). "
                              + full_hint(exc, d)) from None
        raise DestinationError(f"{d}: cannot create the output directory ({exc.strerror or exc}). "
                          "Give --out a directory that can be created and written.") from None
    return d


def loop_line(path: Path, what: str = "folder") -> str:
    """The one line for an output ``path`` that is, or has on its way, a symbolic link whose links lead round in a
    circle (``ln -s b a; ln -s a b``): ``mkdir`` and ``stat`` say only 'Too many levels of symbolic links' (ELOOP;
    also a chain of over 40 links, the kernel's limit). The link named is the first part of ``path`` that cannot
    be followed; ``what`` is what ``path`` itself should be ('folder', or 'file' for a calibration file; a link
    above it should lead to a folder). The hint is the one an input loop gets (planner.core.infile.SYMLINK_LOOP_HINT).
    """
    path = Path(path)
    link = path
    for p in reversed((path, *path.parents)):  # outermost first: the first that cannot be followed
        try:
            os.stat(p)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                link = p
                break
    where = "is" if link == path else f"has on its path {link}, which is"
    what = what if link == path else "folder"
    return (f"{path}: {where} a symlink loop (each link leads to another, never to a {what}). Point the link at the "
            f"{what} itself ('ls -l' shows where each link leads), or give another --out.")


def is_loop(path: Path) -> bool:
    """Whether following ``path``'s links fails with ELOOP (a symlink loop on it: :func:`loop_line`)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    except ValueError:  # a NUL in the path
        return False
    return False


def dangling_line(link: Path) -> str:
    """The one line for a link on an output path that leads nowhere (``dl -> missing/sub``): ``mkdir`` then says
    only 'File exists'. Where it points is given as ``os.readlink`` reads it (relative to the link's folder
    when relative), with a control, invisible or non-UTF-8 character in it as a visible escape ('\\x1b',
    planner.core.names.escape_unsafe), for the API's message too."""
    from planner.core.names import escape_unsafe

    if is_loop(link):  # not missing: its links lead round in a circle (h26a m4)
        return loop_line(link)
    try:
        target = escape_unsafe(os.readlink(link))
    except OSError:
        target = "?"
    return (f"{link}: is a link to a folder that does not exist ({link} -> {target}). Create that folder, or give "
            "--out a directory that exists or can be created.")


def disk_full(exc: OSError) -> bool:
    """Whether ``exc`` says the file system has no room: no block or inode left (ENOSPC), or the user's quota is
    used up (EDQUOT) (Linux man-pages ``mkdir(2)``, ``open(2)``, ``write(2)``: ERRORS)."""
    return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def full_hint(exc: OSError, folder: Path | None = None) -> str:
    """What to do about a full disk or quota (:func:`disk_full`), for an error line; ``folder``: where the write
    failed, whose file system may have free space but no free inodes (:func:`no_free_inodes`), said as that."""
    if folder is not None and no_free_inodes(exc, folder):
        return (f"The folder can be written, but {NO_INODES}: remove files there, or give --out a folder on another "
                "disk.")
    what = "your disk quota there is used up" if exc.errno == getattr(errno, "EDQUOT", None) else "its disk is full"
    return f"The folder can be written, but {what}: free some space, or give --out a folder on another disk."


#: What ENOSPC means where the file system has free space but no free inodes (:func:`no_free_inodes`).
NO_INODES = ("its file system has no free inodes (no more files can be made there, though 'df -h' may show free "
             "space; 'df -i' shows it)")


def no_free_inodes(exc: OSError, folder: Path) -> bool:
    """Whether ``exc`` is ENOSPC on a file system with free blocks but no free inodes (``os.statvfs`` of ``folder``,
    or of the nearest folder above it that exists: ``f_favail`` 0 of ``f_files`` over 0, ``f_bavail`` over 0); False
    where that cannot be told (statvfs(3): a file system that counts no inodes gives ``f_files`` 0)."""
    if exc.errno != errno.ENOSPC:
        return False
    for p in (Path(folder), *Path(folder).parents):
        try:
            st = os.statvfs(p)
        except (OSError, ValueError):
            continue
        return st.f_files > 0 and st.f_favail == 0 and st.f_bavail > 0
    return False


def gone_folder(shown: Path, exc: OSError) -> str:
    """The line for a file that cannot be written because its folder ``shown.parent`` (the output folder, for a
    report) no longer exists at that path: removed or moved away (``rm -rf``, ``mv`` from another shell) during
    the run (``exc``: ENOENT)."""
    return (f"{shown}: cannot write ({exc.strerror or exc}): the folder {shown.parent} is not there (removed or "
            "moved away during the run). Check where it went and run again.")


def sha256_file(path: Path) -> str:
    """The SHA-256 of the file ``path`` (hex), read in 1 MiB pieces.

    Raises:
        OSError: it cannot be read.
    """
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: Path, *, own: bool = False) -> str | None:
    """The SHA-256 of ``path`` when it is a regular file (a link is not followed) and, with ``own``, this
    user's; None when it is not, or cannot be read."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or (own and st.st_uid != os.geteuid()):
            return None
        return sha256_file(path)
    except OSError:
        return None


def own_file_sha256(path: Path) -> str | None:
    """The SHA-256 of ``path`` when it is a regular file of this user (a link is not followed); None when it
    is not, or cannot be read: another user's file, a link or a folder is never planner's."""
    return file_sha256(path, own=True)


def shown_path(path: Path) -> Path:
    """``path`` as a message names it: a report set's staged file by where it is going (the staging
    folder is removed when the run stops)."""
    path = Path(path)
    return path.parent.parent / path.name if path.parent.name.startswith(STAGING_PREFIX) else path


#: ``expect`` of :func:`write_bytes` when the caller read no previous file: any file is replaced.
ANY = "any"


def write_bytes(path: Path, data: bytes | Iterable[bytes], *, private: bool = False,
                expect: str | None = ANY, notes: list[str] | None = None) -> Path:
    """Write ``data`` (bytes, or pieces of bytes written in turn) to ``path`` atomically (temp file
    in the same directory, fsync, os.replace). A file replaced keeps its group, permission bits,
    POSIX ACL and ``user.*`` extended attributes (:func:`keep_access`; user attributes that cannot be copied
    are said in a line appended to ``notes``), set on the open temporary file before the rename: nothing is ever
    changed by path after it (a path another user swapped for a link in a shared folder). ``private``:
    the new file is made not writable by its group or others (``fchmod``, before the rename). In a report set's
    staging folder (:func:`planner.core.stagerecord.open_staging`: through descriptors of the folder and of its mark
    naming that folder, never by path; a folder no longer the run's is refused), its mark records the temporary file's name before
    it is made and the file's SHA-256 and size before the rename, so that a run killed at any instant leaves what
    the next run can tell it wrote.

    ``expect``: a file the caller read and rewrites (``planner calibrate`` adding its GPU to a calibration
    file). A SHA-256 (hex): the new file takes the name by a swap (:func:`planner.core.renames.exchange`)
    and what came out must hash so, or it is swapped back (a save made meanwhile is kept) and nothing
    is written; None: the name held no file, and gets the new one only while it still holds none
    (:func:`planner.core.renames.rename_noreplace`). Where the system cannot swap, the file is hashed once
    more just before a plain rename (an edit in the moment between is the fallback's known limit). After a
    swap, a ``chmod``, ``setfacl`` or ``chgrp`` made on the old file since its access was copied is carried
    over as :func:`planner.core.access.recheck_after_swap` does for reports; its note line goes to ``notes``.

    Raises:
        OutputError: the directory is missing or unwritable, the disk is full, or the
            destination is a directory; with ``expect``, the file changed (or appeared) meanwhile.
    """
    path = Path(path)
    directory = path.parent
    tmp_name = None
    tmp_id = None
    left: tuple[str, OSError] | None = None  # the temporary that could not be removed, and why
    staging = None  # (folder fd, mark fd) of a report set's staging folder: every step there goes through them
    try:
        try:
            from planner.core.stagerecord import StagingMoved, open_staging, record_file, record_temp

            try:
                staging = open_staging(directory)
            except StagingMoved as exc:  # swapped for a link or another folder mid-run (h34a N2): nothing written
                raise OutputError(f"{directory}: is no longer the staging folder this run made ({exc.strerror}: moved "
                                  "away, or replaced by a link or another folder, by another program); "
                                  f"{path.name} was not written there, and nothing was changed in "
                                  f"{directory.parent}. Check what writes there and run again.") from None
            dir_fd, mark = (None, None) if staging is None else staging
            try:
                st = os.stat(path.name, dir_fd=dir_fd) if dir_fd is not None else os.stat(path)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                raise DestinationError(f"{path}: is a directory, not a file. Move it away or write elsewhere.")
            if st is not None:
                refuse_read_only(path, st)
            # in a report set's staging folder, its mark records the temporary's name before it is made, and the
            # report's SHA-256, size, device and inode before it takes its name: what a killed run left is removed by
            # them alone, and what the live run removes is the file it made (h33a N1, N4); all of it through the
            # descriptors of the folder and the mark the run made (h34a N2)
            from planner.core.interrupt import held

            with held():  # the temporary and what it is known by, together: a stop signal between them left it, its
                # name not yet known here, for no run to remove (h42a N1)
                fd, tmp_name = _new_temp(directory, path.name, private=private, dir_fd=dir_fd,
                                         before=None if mark is None else (lambda t: record_temp(mark, t)))
                made = os.fstat(fd)
                tmp_id = (made.st_dev, made.st_ino)  # removed on failure only while it is that file
            copied = None
            try:
                if st is not None:  # a replaced file keeps its group, permission bits (0600 stays 0600) and ACL
                    acl = _acl_of(path)  # read first: a change after this is found after the swap
                    keep_access(fd, st, path, path, notes)
                    st_new = os.fstat(fd)
                    copied = (kept_mode(st), acl, st_new.st_ino, st_new.st_gid)
                if private and st is not None:  # as the file it replaces was (0600 stays 0600), less group and
                    # others' write; a new one keeps the mode it was made with (0o644 less the umask or the folder's
                    # default ACL: a chmod here would override the ACL's, h23a m2)
                    os.fchmod(fd, kept_mode(st) & ~0o022)
            except BaseException:
                os.close(fd)
                raise
            import hashlib

            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as fh:
                for piece in ([data] if isinstance(data, (bytes, bytearray, memoryview)) else data):
                    fh.write(piece)
                    digest.update(piece)
                fh.flush()
                os.fsync(fh.fileno())
                size = os.fstat(fh.fileno()).st_size
            if mark is not None:
                record_file(mark, path.name, digest.hexdigest(), size, tmp_id)
            if expect == ANY and mark is not None:
                # a staged report takes its name only while nothing holds it: a file another program dropped there
                # meanwhile is never replaced (h33a N1); the run stops with one line and leaves that file
                try:
                    from planner.core.renames import place_staged

                    place_staged(Path(tmp_name), path, dir_fd=dir_fd)
                except FileExistsError:
                    # named where it is (the staging folder stays, with it), not by where the report was going
                    raise OutputError(f"{path}: another program created a file of that name in planner's staging folder "
                                      "while planner was writing it; it was left as it is, and nothing was changed in "
                                      f"{directory.parent}. Check what writes there and run again.") from None
                tmp_name = None
            elif expect == ANY:
                os.replace(tmp_name, path)
                tmp_name = None
            else:
                tmp_id = None  # from here the temporary may hold the file swapped out: removed by name, as before
                tmp_name = _replace_expected(Path(tmp_name), path, expect, None if private else copied, notes)
            if dir_fd is not None:
                os.fsync(dir_fd)
            else:
                fsync_dir(directory)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # the temporary beside it is longer than the name: PATH_MAX or NAME_MAX
                raise path_too_long(shown_path(path), exc, directory) from None
            if exc.errno == errno.EFBIG:  # ulimit -f: Python ignores SIGXFSZ, so the write fails with EFBIG (write(2))
                raise OutputError(f"{shown_path(path)}: cannot write ({exc.strerror or exc}): the file-size limit "
                                  "('ulimit -f') stopped it. Raise the limit and run again.") from None
            if exc.errno == errno.ENOENT and not os.path.isdir(directory):  # rm -rf or mv of the folder meanwhile
                raise OutputError(gone_folder(shown_path(path), exc)) from None
            if exc.errno == errno.EPERM:  # not the mode: an attribute (chattr +i, +a) on the file or folder (h25a m1)
                raise OutputError(f"{shown_path(path)}: cannot write ({exc.strerror or exc}). Check that file and its "
                                  "directory (an immutable or append-only attribute: lsattr), and run again.") from None
            if no_free_inodes(exc, directory):  # ENOSPC with free space: said as what it is (h31a m2)
                raise OutputError(f"{shown_path(path)}: cannot write ({exc.strerror or exc}): {NO_INODES}. Remove files "
                                  "there, or write to another file system.") from None
            raise OutputError(f"{shown_path(path)}: cannot write ({exc.strerror or exc}). Check that its directory is writable "
                              "and the disk has room.") from None
        finally:
            if tmp_name is not None:
                try:
                    if tmp_id is None:
                        os.unlink(tmp_name)
                    else:  # only the file this call made: another program's at that name is left (h33a N4)
                        from planner.core.stagerecord import unlink_same

                        unlink_same(tmp_name, tmp_id)
                except OSError as exc:
                    left = (tmp_name, exc)
    except OutputError as failing:
        if left is not None:
            _say_left(failing, *left)
        raise
    finally:
        for held_fd in staging or ():
            os.close(held_fd)
    return path


def _say_left(failing: OutputError, tmp: str, exc: OSError) -> None:
    """Where a write fails (``failing``) and its temporary file ``tmp`` cannot be removed either (``chattr +a`` on
    the folder: EPERM, ``exc``), name that file in the error's ``notes``, said before its line, so that the run that
    left it says so (h33a m8)."""
    failing.notes = (*getattr(failing, "notes", ()),  # type: ignore[attr-defined]
                     f"Left {tmp}: planner's temporary file for {shown_path(Path(tmp)).parent / Path(tmp).name[1:-13]} "
                     f"could not be removed ({exc.strerror or exc}); remove it yourself once that is fixed.")


def _changed(path: Path) -> OutputError:
    return OutputError(f"{path}: changed while planner ran (saved by someone else); it is left as it is and "
                       "nothing was written. Run the command again.")


def _replace_expected(tmp: Path, path: Path, expect: str | None,
                      copied: tuple[int, bytes | None, int, int] | None = None,
                      notes: list[str] | None = None) -> str | None:
    """Move ``tmp`` to ``path`` if ``path`` still holds the file hashed ``expect`` (None: no file); the name
    left to remove afterwards (what came out of ``path``), or None. ``copied``: the mode, ACL, inode and group
    the new file was given from the old one; after a swap, a change made to the old file since is carried over
    (:func:`planner.core.access.recheck_after_swap`), its note appended to ``notes``.

    Raises:
        OutputError: ``path`` changed (or appeared) meanwhile; the save is in place and ``tmp`` is removed.
    """
    from planner.core import renames

    if expect is None:
        try:
            renames.place_new(tmp, path)
        except FileExistsError:
            raise _changed(path) from None
        return None
    if renames.exchange(tmp, path):  # what path held at that instant is now at tmp
        if file_sha256(tmp) != expect:
            renames.exchange(tmp, path)  # put the save back; planner's file returns to tmp, removed by the caller
            raise _changed(path)
        if copied is not None:
            from planner.core.access import recheck_after_swap

            note = recheck_after_swap(tmp, path, copied[:2], copied[2], copied[3], what="file")
            if note is not None and notes is not None:
                notes.append(note)
        return str(tmp)
    if file_sha256(path) != expect:
        raise _changed(path)
    os.replace(tmp, path)
    return None


def write_text(path: Path, text: str, *, private: bool = False, expect: str | None = ANY,
               notes: list[str] | None = None) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`write_bytes`)."""
    return write_bytes(path, text.encode("utf-8"), private=private, expect=expect, notes=notes)


def write_text_chunks(path: Path, chunks: Iterable[str]) -> Path:
    """Write the UTF-8 text of ``chunks``, one after the other, to ``path`` atomically (see
    :func:`write_bytes`): the whole text is never in memory at once."""
    return write_bytes(path, (c.encode("utf-8") for c in chunks))


def process_umask() -> int:
    """This process's umask, read without changing it (``os.umask`` sets it for every thread while it reads
    it): Linux's /proc/self/status 'Umask:' line (Linux 4.7, proc(5)); 0o022, the usual one, where there is
    none."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def path_too_long(shown: str | Path, exc: OSError, directory: Path) -> OutputError:
    """The error for writing ``shown`` when the system said ENAMETOOLONG: the report's own path fits, but the
    temporary one planner writes first (a staging folder and a random name: up to about 60 bytes longer) does
    not; or (a long scenario name, h28a m5) the report's own path, ``shown`` whole, is over the limit."""
    limit = _path_max_bytes(directory)
    size = len(os.fsencode(str(shown)))
    if size >= limit:
        return OutputError(f"{shown}: cannot write ({exc.strerror}): the report's path is {size:,} bytes, over the "
                           f"system's limit of {limit:,} bytes. Give a shorter path: cd into the folder and write "
                           "there (--out .), or give the scenario a shorter name.")
    return OutputError(f"{shown}: cannot write ({exc.strerror}): planner writes each report first under a temporary "
                       "path up to about 60 bytes longer (a staging folder and a random name), and that path is over "
                       f"the system's limit of {limit:,} bytes. Give a shorter path: cd into the "
                       "folder and write there (--out .).")


def _path_max_bytes(directory: Path) -> int:
    """The longest path, in bytes, the file system of ``directory`` takes (``pathconf(PC_PATH_MAX)``; Linux's
    PATH_MAX, 4096, where it cannot be asked)."""
    try:
        return os.pathconf(directory, "PC_PATH_MAX")
    except (OSError, ValueError):
        return 4096


def _new_temp(directory: Path, name: str, *, private: bool = False,
              before: Callable[[str], None] | None = None, dir_fd: int | None = None) -> tuple[int, str]:
    """Create a new, empty temporary file beside ``name`` in ``directory``: (open fd, path).

    Opened as a plain ``open()`` would create it (mode 0o666, which the kernel reduces by the
    process's umask), so the umask is never read by changing it (``os.umask`` sets it for every
    thread of the process); ``private``: created 0o644, so no other user can open it for writing
    before the caller sets its mode (an open descriptor keeps its access whatever the mode becomes:
    open(2)), and a new file is as wide as the folder makes a new file, less group and others' write: the
    kernel reduces 0o644 by the umask or, where the folder has a default ACL, by that ACL (acl(5), "Object
    creation and default ACLs"), as it does a report (h23a m2). The name is hidden and random, as
    :func:`tempfile.mkstemp` makes it. ``before``: called with each name before the file is created (a report
    set's staging mark records it: planner.core.stagemark). ``dir_fd``: a descriptor of ``directory``, through
    which the file is created (a report set's staging folder: never by a path another program redirected).

    Raises:
        OSError: the directory cannot be written (FileExistsError after 100 taken names); as ``before`` raises.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    stem = cut_utf8(name, _TMP_NAME_BYTES)
    for _ in range(100):
        tmp = os.path.join(directory, f".{stem}.{secrets.token_hex(4)}.tmp")
        if before is not None:
            before(tmp)
        try:
            if dir_fd is not None:
                # the moves name it by path: a path over PATH_MAX is refused here, as an open by path would be
                if len(os.fsencode(tmp)) >= _path_max_bytes(directory):
                    raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), tmp)
                return os.open(os.path.basename(tmp), flags, 0o644 if private else 0o666, dir_fd=dir_fd), tmp
            return os.open(tmp, flags, 0o644 if private else 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(directory))


def keep_group(target: int | str | Path, st: os.stat_result, shown: Path) -> None:
    """Give the new file ``target`` (an open fd or a path) the group of the file it replaces (``st``),
    so that a report replaced keeps who can read it (a file made group 'nogroup' in a setgid folder
    stays 'nogroup'); the mode is set after this (a chown can clear set-id bits).

    Raises:
        OutputError: the group cannot be kept (not a member of it): the file is not replaced.
    """
    new_gid = os.fstat(target).st_gid if isinstance(target, int) else os.stat(target).st_gid
    if new_gid == st.st_gid:
        return
    try:
        if isinstance(target, int):
            os.fchown(target, -1, st.st_gid)
        else:
            os.chown(target, -1, st.st_gid)
    except OSError as exc:
        raise OutputError(f"{shown}: cannot keep its group (gid {st.st_gid}: {exc.strerror or exc}), and replacing "
                          "it would change who can read it; nothing was replaced. Give another --out, or change "
                          f"its group to one of yours (chgrp).") from None




def kept_mode(st: os.stat_result) -> int:
    """The mode bits of ``st`` a file replacing it gets: its permission bits (0600 stays 0600), never set-user-ID
    or set-group-ID (:data:`KEPT_MODE_BITS`)."""
    return stat.S_IMODE(st.st_mode) & KEPT_MODE_BITS


def _dropped_id_bits(st: os.stat_result, shown: Path) -> str | None:
    """The note line for an old file ``st`` with set-user-ID or set-group-ID (S_ISUID 0o4000, S_ISGID 0o2000), which
    the new file does not get (:data:`KEPT_MODE_BITS`: a program would run the bytes planner wrote with another
    user's or group's rights); None when it had neither (h24a m2: dropped, and said, as a lost ``user.*`` attribute
    is)."""
    bits = [(stat.S_ISUID, "set-user-ID", "u+s"), (stat.S_ISGID, "set-group-ID", "g+s")]
    had = [(word, how) for bit, word, how in bits if st.st_mode & bit]
    if not had:
        return None
    from planner.core.names import escape_unsafe

    words = " and ".join(w for w, _ in had)
    how = ",".join(h for _, h in had)
    them, are = ("them", "they are") if len(had) > 1 else ("it", "it is")
    shown_text = escape_unsafe(str(shown))
    return (f"{shown_text}: the new file did not take its {words} bit{'s' if len(had) > 1 else ''} (planner never "
            "gives a file it wrote the right to run as another user or group); its other permission bits were "
            f"kept. Set {them} again (chmod {how} {path_word(str(shown))}) if {are} needed.")


def keep_access(fd: int, st: os.stat_result, old: str | Path, shown: Path, notes: list[str] | None = None) -> None:
    """Give the new file open as ``fd`` who-can-read-it of the file ``old`` it will replace (``st``, its
    stat): its group (:func:`keep_group`), its permission bits (``fchmod``, :func:`kept_mode`: never set-user-ID or
    set-group-ID) and its POSIX access ACL
    (the ``system.posix_acl_access`` extended attribute, copied with ``fsetxattr``; an ACL the new file
    inherited from its folder's default ACL is removed when the old file had none). All on the open
    file, before it is renamed into place. The old file's ``user.*`` extended attributes (tags, comments) are
    copied too, first, while the new file is still writable by its owner
    (:func:`planner.core.aclxattr.keep_user_xattrs`); one that cannot be is said in a line appended to ``notes``.

    Raises:
        OutputError: the group or the ACL cannot be kept: the file is not replaced.
    """
    note = keep_user_xattrs(fd, old, shown)
    if note is not None and notes is not None:
        notes.append(note)
    dropped = _dropped_id_bits(st, shown)
    if dropped is not None and notes is not None:
        notes.append(dropped)
    keep_group(fd, st, shown)
    os.fchmod(fd, kept_mode(st))
    try:
        acl = _acl_of(old)
        if acl is not None:
            os.setxattr(fd, ACL_XATTR, acl)
        elif _acl_of(fd) is not None:
            os.removexattr(fd, ACL_XATTR)
            os.fchmod(fd, kept_mode(st))
    except OSError as exc:
        raise OutputError(f"{shown}: cannot keep its access control list (POSIX ACL: {exc.strerror or exc}), and "
                          "replacing it would change who can read it; nothing was replaced. Give another --out, or "
                          f"remove the ACL (setfacl -b) if it is not needed.") from None


def refuse_read_only(path: Path, st: os.stat_result) -> None:
    """Refuse to replace a regular file without any write permission bit (made read-only).

    Raises:
        OutputError: saying so, with what to do.
    """
    if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o222:
        shown = f"./{path}" if str(path).startswith("-") else str(path)  # Path('./-r/x') is '-r/x' (h36a 2)
        raise OutputError(f"{shown}: is read-only, and planner does not replace a file that was made read-only. "
                          f"Make it writable (chmod u+w {path_word(path)}) or write elsewhere.")


def fsync_dir(directory: Path) -> None:
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
