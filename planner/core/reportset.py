"""A report set (``OUT/<stem>.xlsx``, ``.csv``, ``.json``, ``.md``) written as one unit.

Every file of the set is written into a staging folder inside the output folder
(``OUT/.planner-staging-XXXXXXXX/``, on the same file system, so that moving is a rename), and only
when all of them are written are they moved into place, one ``os.replace`` each, with SIGINT,
SIGTERM and SIGHUP held for those few renames (:func:`planner.core.interrupt.held`). A run that
fails or is interrupted before that leaves the previous set as it was and removes its staging
folder; files of the set that the new run does not write can be removed in the same step
(:meth:`ReportSet.remove`: a quote left from an earlier feasible plan).

Two runs on one output folder would interleave their files: a run holds an exclusive
``flock`` on the output folder itself (``fcntl.flock`` on the directory's descriptor: no lock file
to leave behind) from start to end, and a second run fails at once with one line saying so.
Staging folders that a killed run (SIGKILL, power loss) left are removed by the next run that
holds the lock.

A report that exists and is read-only (no write permission bit) is not replaced or removed: the
set is refused with one line before anything is moved.

Known limit: the moves are one rename per file, not one for the set; only SIGKILL or a crash
during those few renames can leave a set of old and new files (the staging folder then remains
and the next run removes it).

Sources: POSIX ``rename()`` (atomic replacement of the destination within a file system); Linux
``flock(2)`` (locks on any open file descriptor, directories included; released when the process
exits, whatever killed it).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from types import TracebackType

from planner.core.atomic import ensure_dir, fsync_dir, refuse_read_only
from planner.core.errors import OutputError
from planner.core.interrupt import SignalGuard, held

#: The prefix of staging folders (removed again by the next run if a run was killed).
STAGING_PREFIX = ".planner-staging-"
#: The most UTF-8 bytes one file name may have (Linux NAME_MAX; most file systems allow 255).
NAME_MAX_BYTES = 255


class ReportSet:
    """The files of one report set, staged and then moved into ``out_dir`` together.

    Usage::

        with ReportSet(Path("reports"), guard=guard) as rs:
            write_text(rs.path("plan.csv"), csv_text)
            write_workbook(data, rs.path("plan.xlsx"))
            rs.remove("plan.md")          # stale: not part of the new set
            written = rs.commit()         # [reports/plan.csv, reports/plan.xlsx]

    Leaving the ``with`` block without :meth:`commit` (an error, :class:`planner.core.interrupt.Interrupted`)
    discards the staged files; the output folder keeps its previous set.

    Args:
        out_dir: the output folder (created if missing).
        guard: the command's :class:`planner.core.interrupt.SignalGuard`, which holds signals while
            the set is moved into place; None: the guard whose handlers are installed, if any
            (:func:`planner.core.interrupt.active_guard`), else the signals are only masked.

    Raises:
        OutputError: (on entry) the folder cannot be created or written, or another run holds it;
            (on :meth:`path`) a name that is not a plain file name or is over 255 bytes; (on
            :meth:`commit`) a destination that is read-only or a directory.
    """

    def __init__(self, out_dir: Path, *, guard: SignalGuard | None = None) -> None:
        self.out = Path(out_dir)
        self.guard = guard
        self._names: list[str] = []
        self._stale: list[str] = []
        self._lock_fd: int | None = None
        self._staging: Path | None = None
        self._committed = False
        #: the stale files :meth:`commit` removed
        self.removed: list[Path] = []

    # -- entering and leaving --
    def __enter__(self) -> ReportSet:
        # signals held while the folder is locked and the staging folder made; one that came meanwhile
        # is raised at the end of the hold, and then (as for any failure here) what was made is undone
        # here: __exit__ runs only once __enter__ has returned
        try:
            with held(self.guard):
                ensure_dir(self.out)
                self._lock()
                self._clear_dead_staging()
                try:
                    self._staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.out))
                except OSError as exc:
                    raise OutputError(f"{self.out}: cannot write into the output directory ({exc.strerror or exc}). "
                                      "Give --out a directory that can be written.") from None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with held(self.guard):
            try:
                if self._staging is not None:
                    shutil.rmtree(self._staging, ignore_errors=True)
                    self._staging = None
            finally:
                self._unlock()

    # -- the files --
    def path(self, name: str) -> Path:
        """Where to write the set's file ``name`` now (inside the staging folder); it is moved to
        ``out_dir / name`` by :meth:`commit`."""
        check_name(name)
        if self._staging is None:
            raise RuntimeError("ReportSet.path() outside its with block")
        if name not in self._names:
            self._names.append(name)
        return self._staging / name

    def remove(self, name: str) -> None:
        """Remove ``out_dir / name``, if it exists, when the set is committed (a stale report)."""
        check_name(name)
        if name not in self._stale:
            self._stale.append(name)

    def final(self, name: str) -> Path:
        """``out_dir / name``: where the file will be once committed."""
        return self.out / name

    def check(self, names: list[str] | tuple[str, ...]) -> None:
        """Refuse now (before the work) a set whose destinations could not be replaced: read-only
        files or directories in the way.

        Raises:
            OutputError: as :meth:`commit`.
        """
        for name in names:
            check_name(name)
            _replaceable(self.out / name)

    def commit(self) -> list[Path]:
        """Move every staged file into place and remove the stale ones, as one step.

        Returns:
            The final paths of the files written, in the order :meth:`path` was first called.

        Raises:
            OutputError: a staged file is missing (a writer did not write it), a destination is
                read-only or a directory, or a rename fails; nothing is moved then, except when a
                rename fails part-way (an error of the file system).
        """
        if self._staging is None or self._committed:
            raise RuntimeError("ReportSet.commit() outside its with block, or twice")
        missing = [n for n in self._names if not (self._staging / n).is_file()]
        if missing:
            raise OutputError(f"{self.out / missing[0]}: was not written; nothing was changed in {self.out}.")
        removed = [n for n in self._stale if n not in self._names and _lexists(self.out / n)]
        for name in self._names + removed:
            _replaceable(self.out / name)
        done: list[Path] = []
        with held(self.guard):
            try:
                for name in self._names:
                    os.replace(self._staging / name, self.out / name)
                    done.append(self.out / name)
                for name in removed:
                    os.unlink(self.out / name)
            except OSError as exc:
                raise OutputError(f"{self.out}: cannot move the reports into place ({exc.strerror or exc}); "
                                  f"moved {len(done)} of {len(self._names)}. Check the directory and run again.") \
                    from None
            fsync_dir(self.out)
            self._committed = True
        self.removed = [self.out / n for n in removed]
        return done

    # -- the lock --
    def _lock(self) -> None:
        import fcntl

        try:
            fd = os.open(self.out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise OutputError(f"{self.out}: cannot open the output directory ({exc.strerror or exc}).") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputError(f"{self.out}: another planner run is writing reports into this directory (it holds "
                                  "the directory's lock). Wait for it to finish, or give another --out.") from None
            return  # a file system without flock on directories: run unlocked rather than not at all
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def _clear_dead_staging(self) -> None:
        """Remove staging folders a killed run left (no live run has one: this run holds the lock)."""
        try:
            entries = list(os.scandir(self.out))
        except OSError:
            return
        for e in entries:
            if e.name.startswith(STAGING_PREFIX) and e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)


def check_destinations(out_dir: Path, names: list[str] | tuple[str, ...]) -> None:
    """Refuse, before any work and without creating anything, a set that could not go into
    ``out_dir``: ``out_dir`` a file, a name over 255 bytes, a read-only report or a directory where
    a report would go.

    Raises:
        OutputError: as :meth:`ReportSet.commit` and :func:`planner.core.atomic.ensure_dir`.
    """
    out = Path(out_dir)
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{out}: cannot create the output directory ({exc.strerror or exc}). "
                          "Give --out a directory that can be created and written.") from None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{out}: is a file, not a directory. Give --out a directory (it is created if missing).")
    for name in names:
        check_name(name)
        if st is not None:
            _replaceable(out / name)


def check_name(name: str) -> None:
    """Refuse a report name that is not one plain file name of at most 255 UTF-8 bytes.

    Raises:
        OutputError: a separator, '.' or '..', or too long.
    """
    if not name or "/" in name or "\0" in name or name in (".", "..") or os.sep in name:
        raise OutputError(f"{name!r} is not a file name a report can have.")
    size = len(name.encode("utf-8", errors="surrogateescape"))
    if size > NAME_MAX_BYTES:
        raise OutputError(f"the report name {name[:40]!r}... is {size} bytes, more than the {NAME_MAX_BYTES} a "
                          "file name may have. Give the scenario a shorter name.")


def _lexists(path: Path) -> bool:
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def _replaceable(path: Path) -> None:
    """Refuse to replace ``path`` when it is a directory or a read-only file.

    Raises:
        OutputError: with what to do.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{path}: cannot be written ({exc.strerror or exc}).") from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{path}: is a directory, where a report would go. Move it away or give another --out.")
    refuse_read_only(path, st)
