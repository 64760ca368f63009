"""A report set (``OUT/<stem>.xlsx``, ``.csv``, ``.json``, ``.md``) written as one unit.

Every file of the set is written into a staging folder inside the output folder
(``OUT/.planner-staging-XXXXXXXX/``, on the same file system, so that moving is a rename), and only
when all of them are written are they moved into place, one swap or rename each
(:mod:`planner.core.moves`), with SIGINT, SIGTERM, SIGHUP and the other fatal signals held for those few moves
(:func:`planner.core.interrupt.held`; from the Python API too: :meth:`ReportSet._end_deferred`). A run that
fails or is interrupted before that leaves the previous set as it was and removes its staging
folder; files of the set that the new run does not write can be removed in the same step
(:meth:`ReportSet.remove`: a quote left from an earlier feasible plan).

Two runs on one output folder would interleave their files: a run holds an exclusive
``flock`` on the output folder itself (``fcntl.flock`` on the directory's descriptor: no lock file
to leave behind) while it writes (the with block, not the work before it), and a second run fails at once.
What a killed run (SIGKILL, power loss) left is cleaned by the next run that holds the lock, but only
what planner can tell it wrote: in a staging folder, the files its mark (:data:`STAGING_MARK`, written
by the run that made it) records, owned by this user: a file under a listed name only when its SHA-256 is one the
mark (each staged report's, recorded as soon as it is complete, before it takes its name) or the manifest records,
a temporary file only when the mark recorded its exact name before it was made (:mod:`planner.core.stagemark`: a
user's file saved there, or one the moves swapped in, is never removed); the folder goes only once
that empties it, else it is left and said (:attr:`ReportSet.notes`); the previous files a commit keeps
there (``N.old``) are listed in the mark before they are made. The live run's own staging folder is cleared
of the files that run made alone, each known by its device and inode as made and checked just before the unlink
(:func:`planner.core.stagerecord.clear_own`), never by a name's pattern: another program's file there is left, and
said by that run (h33a N1, N4). Every write there goes through descriptors of the folder and mark the run made,
and just before the moves each staged report is checked to be the file planner made, holding the bytes it wrote
(the hash the manifest records: h34a N1, N2). Planner's own temporary manifests
(``..planner-reports.json.XXXXXXXX.tmp``: this user's, not writable by others, a report manifest or the
start of one: :func:`planner.core.manifest.is_manifest_tmp`) are removed and said; another file of that name is kept and said.
Never removed as a leftover: a file that is this run's own standard output or error (by device and inode: a
redirection onto such a name, :func:`_own_stream`), and a staging-named folder that is, or holds, the temporary
folder (``TMPDIR``), or that this run goes through (the current folder, a folder on the output folder's path as
given: planner.core.inuse); each is left and said.

A report that exists and is read-only (no write permission bit) is not replaced or removed: the
set is refused with one line before anything is moved.

Only files planner wrote are replaced or removed, known by what planner wrote rather than by their
names: the manifest ``OUT/.planner-reports.json`` (:data:`MANIFEST`) lists each report planner moved
into the folder, its SHA-256, its size in bytes and the report set it belongs to (``plan <stem>``, ``compare <stem>``).
A file in the way that the manifest does not list, or whose bytes changed since (edited, or written by
another program), or that belongs to another report set, is never replaced: the set is refused with one
line naming it; a stale report that is not planner's is left where it is, and said. A report set is
the command and the exact scenario name (``plan team a``): two scenarios whose names give one file
name (``team a``, ``team-a``) are two sets, and the second is refused rather than replacing the first's
files. The manifest is trusted only when it is a regular file of this user that its group and others
cannot write (:func:`writable_by_others`: a group that is the user's private group, umask 002, counts as
the user's; planner writes it so, whatever the umask), and a file it lists only when that file is
this user's; otherwise nothing is replaced or removed (one line says why). A manifest of the same
user that lists a file's true SHA-256 cannot be told from planner's own: that user can always remove
their own files. The run's input files
(the scenario, a model's config.json, catalog overlays) are never outputs, and the shipped catalog
and the installed package are never output folders (:func:`refuse_protected`, by path and by device and
inode; checked again through the locked folder's descriptor). A replaced report keeps its group,
permission bits (0600 stays 0600; never setuid or setgid) and POSIX ACL, set on the staged file's descriptor before the rename.
A save to a report between planner's hash check and its move (an edit in place, or an editor's save
by rename) is never lost: each report is swapped into place (``renameat2`` RENAME_EXCHANGE) and what
came out is hashed; if it is not the report planner checked, the previous set is put back, the save
with it (:mod:`planner.core.moves`, which also says the fallback where the system cannot swap).

The moves are one swap or rename per file, not one for the set: the files they replace or remove are
kept in the staging folder until the whole set is in place, and a move that fails part-way puts every
file back as it was, with its manifest. Known limit: SIGKILL or a crash during those few
renames can leave a set of old and new files (the staging folder then remains, with the previous
files, and the next run leaves it and says so).

Sources: POSIX ``rename()`` (atomic replacement of the destination within a file system); Linux
``flock(2)`` (locks on any open file descriptor, directories included; released when the process
exits, whatever killed it).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from planner.core.atomic import (STAGING_PREFIX, disk_full, ensure_dir, fsync_dir, full_hint,
                                  _acl_of, keep_access, kept_mode, path_too_long, sha256_file)
from planner.core.access import give_set_access
from planner.core.errors import DestinationError, OutputError
from planner.core.manifest import (MANIFEST, MANIFEST_TMP, is_manifest_tmp, read_manifest, recorded_encoding,
                                    write_manifest)
from planner.core.protected import refuse_protected, stream_into_planners_files  # refuse_protected: re-exported
from planner.core.outpath import refuse_bookkeeping_name, refuse_gone_cwd, refuse_owner_umask, refuse_unwritable_out
from planner.core.sharing import private_group, refuse_shared_folder  # noqa: F401 (private_group: re-exported)
from planner.core.folderlock import held_here, lock_held  # noqa: F401 (lock_held: re-exported)
from planner.core.inuse import in_use
from planner.core.interrupt import Interrupted, SignalGuard, active_guard, held, release
from planner.core.names import OneLineNotes, clip_text, escape_unsafe, path_word
from planner.core.pseudofs import is_mount_point
from planner.core.destinations import (_SHARED_HINT, _is_input, _lexists, _made_read_only, _not_another_sets,
                                       _OWN_HINT, _owned_or_refused, _owns, _replaceable, _same_set, check_name)
from planner.core.destinations import check_destinations, refuse_input  # noqa: F401 (re-exported)
from planner.core.destinations import what_it_is
from planner.core.resolved import absolute_out, show_error, show_path, show_text
from planner.core.stagemark import (EMPTY, MARK_HEADER, NO_MARK, NOT_REMOVED, OLD, STAGING_MARK, TMP,
                                    capped_leftovers, clear_staging, dead_staging_note, made_by_mkdtemp,
                                    named_here, own_stream)
from planner.core.stagerecord import (FOLDER_KEY, StagingMoved, clear_own, open_folder, open_mark, record,
                                      staged_records)
from planner.core.moves import check_staged, same_staging

# the staging mark and the cleanup that goes by it (planner.core.stagemark), under the names tests and modules use
_NO_MARK, _NOT_REMOVED, _MARK_HEADER, _TMP, _OLD = NO_MARK, NOT_REMOVED, MARK_HEADER, TMP, OLD
_own_stream, _named_here, _made_by_mkdtemp, _clear_staging = own_stream, named_here, made_by_mkdtemp, clear_staging
_dead_staging_note = dead_staging_note  # moved to planner.core.stagemark


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
        set_name: the report set's name in the manifest ('plan <stem>'); only files the manifest
            lists under this name, unchanged since planner wrote them, are replaced or removed.
        inputs: the run's input files; none of them is ever replaced or removed.
        origin: the scenario file the set is planned from (made absolute here), recorded in the manifest beside
            each report (its "from"): a set of the same name from another file replaces it with a note, as
            reports are named by the scenario's ``name``, not by its file (h29a m1); None (a scenario given
            as a mapping in Python) records nothing.
        guard: the command's :class:`planner.core.interrupt.SignalGuard`, which holds signals while
            the set is moved into place; None: the guard whose handlers are installed, if any
            (:func:`planner.core.interrupt.active_guard`), else the signals are only masked.

    Raises:
        OutputError: (on entry) the folder cannot be created or written, or another run holds it;
            (on :meth:`path`) a name that is not a plain file name or is over 255 bytes; (on
            :meth:`commit`) a destination that is read-only, a directory, a file planner did not
            write (or another report set's, or changed since), or an input of the run; (on entry)
            the shipped catalog or the planner package as ``out_dir``.
    """

    def __init__(self, out_dir: Path, *, guard: SignalGuard | None = None, set_name: str = "reports",
                 inputs: Iterable[str | Path] = (), shown: Path | str | None = None,
                 origin: str | Path | None = None) -> None:
        # a relative out_dir joined to the current folder now, once: every step goes by that absolute path, so an
        # os.chdir of another thread during the run changes nothing (planner.core.resolved); the lines, the
        # notes and the paths given back show it as ``shown`` (default: out_dir as given)
        self.shown = Path(shown if shown is not None else out_dir)
        self.out = absolute_out(out_dir)
        self.guard = guard
        self.set_name = set_name
        self.inputs = tuple(inputs)
        self.origin = _resolved(absolute_out(origin)) if origin else None  # as given where the cwd is gone
        self._names: list[str] = []
        self._stale: list[str] = []
        self._lock_fd: int | None = None
        self._staging: Path | None = None
        self._staging_id: tuple[int, int] | None = None  # its device and inode as made: removed only while it is that
        self._mark_id: tuple[int, int] | None = None  # its mark's, as made
        #: name -> device and inode of each ``<i>.old`` the moves made in the staging folder (planner.core.moves)
        self.made: dict[str, tuple[int, int]] = {}
        self._committed = False
        self._keep_staging = False
        #: the reports a stopped run's manifest says may mix two runs' files (read before this run's moves), or None
        self._mixed: list[str] | None = None
        self._templates: list[Path] = []  # the set's reports now there, whose group and ACLs a gained one gets
        self.copied: dict[str, tuple[int, bytes | None, int, int]] = {}  # name -> mode, ACL, inode, gid when staged
        self.gained: dict[str, int] = {}  # name -> inode of a staged report the set gains (rechecked after the moves)
        self.previous: list[tuple[str, str, Path | None]] = []  # the moves' steps that kept a previous file
        self._recorded: list[str] = []
        self._made: list[Path] = []  # the folders this run created for --out (removed again if left empty)
        #: the stale files :meth:`commit` removed
        self.removed: list[Path] = []
        #: what the run left alone and why, one line each (a stale report changed since, a foreign staging
        #: folder, planner's own dead temporaries removed): for the command to say; each kept as one line, a
        #: name from the file system in it escaped ('\\n', '\\t': planner.core.names.OneLineNotes)
        self.notes: list[str] = OneLineNotes()
        #: a previous report written to after its unlink whose bytes could not all be saved, one line each
        #: (planner.core.moves.finish_removal): :meth:`commit` raises OutputError once the set is in place
        self.lost: list[str] = []

    # -- entering and leaving --
    def __enter__(self) -> ReportSet:
        # signals held while the folder is locked and the staging folder made; one that came meanwhile
        # is raised at the end of the hold, and then (as for any failure here) what was made is undone
        # here: __exit__ runs only once __enter__ has returned
        # planner's own modules the moves and the lines after them use, imported before the folder is locked:
        # one that cannot be read (no descriptors left, the package replaced during a long run) fails here,
        # as what it is, and never between the moves
        import planner.core.moves  # noqa: F401
        import planner.core.renames  # noqa: F401
        import planner.core.textfit  # noqa: F401

        try:
            with held(self.guard):
                refuse_gone_cwd(self.out)
                refuse_protected(self.out)
                refuse_bookkeeping_name(self.out)
                refuse_owner_umask()
                refuse_unwritable_out(self.out)
                ensure_dir(self.out, self._made)
                self._lock()
                self._clear_dead_staging()
                try:
                    self._staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.out))
                    enc = recorded_encoding()  # the names' encoding, where it is not UTF-8 (h25a m2)
                    folder_fd = open_folder(self._staging)  # the mark made through the folder's descriptor (h34a N2)
                    try:
                        made = os.fstat(folder_fd)
                        self._staging_id = (made.st_dev, made.st_ino)
                        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
                        with os.fdopen(os.open(STAGING_MARK, flags, 0o666, dir_fd=folder_fd), "wb") as fh:
                            made = os.fstat(fh.fileno())  # known before the write: a mark the write failed on
                            self._mark_id = (made.st_dev, made.st_ino)  # is this run's, removed (h41b 10)
                            fh.write(_MARK_HEADER + json.dumps({FOLDER_KEY: list(self._staging_id)}).encode("ascii")
                                     + b"\n" + (json.dumps(enc).encode("ascii") + b"\n" if enc else b""))
                    finally:
                        os.close(folder_fd)
                except OSError as exc:
                    if exc.errno == errno.ENAMETOOLONG:
                        raise path_too_long(self.out, exc, self.out) from None
                    line = f"{self.out}: cannot write into the output directory ({exc.strerror or exc}). "
                    if disk_full(exc):
                        raise OutputError(line + full_hint(exc, self.out)) from None
                    if exc.errno == errno.EFBIG:  # 'ulimit -f': the folder can be written (h41b 10)
                        raise OutputError(line + "The folder can be written, but the file-size limit ('ulimit -f') "
                                          "stopped it. Raise the limit (ulimit -f unlimited) and run again.") from None
                    # the API's words name out= (DestinationError), as ensure_dir's line does
                    raise DestinationError(line + "Give --out a directory that can be written.") from None
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for _ in range(8):
            try:
                return self._exit_once(exc)
            except Interrupted as again:  # a second signal before the clean-up's hold began (h42a N1): it runs now
                if self._staging is None or self._keep_staging:
                    raise
                again.__context__ = exc
                exc = again
        return self._exit_once(exc)

    def _exit_once(self, exc: BaseException | None) -> None:
        """The clean-up of :meth:`__exit__`: the staging folder removed (its files known by what this run made), the
        lock given back, the folders a run that wrote nothing made removed, with the stop signals held."""
        stop = exc
        said = len(self.notes)
        try:
            with held(self.guard):
                try:
                    if self._staging is not None and not self._keep_staging:
                        self._remove_staging()
                        self._staging = None
                finally:
                    self._unlock()
                    if not self._committed:  # a run that wrote nothing leaves no empty folder it made
                        for folder in reversed(self._made):
                            try:
                                os.rmdir(folder)  # only ever an empty folder
                            except OSError:
                                break
        except Interrupted as late:  # came during the cleanup (held until it ended)
            if not late.blocked or self.guard is not None or active_guard() is not None:
                raise
            stop = late if not isinstance(exc, Interrupted) else exc
            stop.blocked = tuple(dict.fromkeys(stop.blocked + late.blocked))
        finally:
            self._shown_as_given(stop)
            guard = self.guard if self.guard is not None else active_guard()
            if guard is not None and hasattr(guard, "left"):  # for an error about standard output (h34a m5): every
                guard.left.extend(self.notes)  # note, "Removed ..." of a stopped run's leftovers too (h35a m7)
            if isinstance(exc, (OutputError, Interrupted)):  # the clean-up's notes, said with the error or stop
                notes = (*getattr(exc, "notes", ()), *self.notes[said:])  # (h33a m8)
                if notes:
                    exc.notes = tuple(show_text(n, self.out, self.shown) for n in notes)  # type: ignore[attr-defined]
            self._end_deferred(stop)

    def _shown_as_given(self, exc: BaseException | None) -> None:
        """Show the folder as given (:attr:`shown`) in ``exc`` and :attr:`notes` (planner.core.resolved)."""
        show_error(exc, self.out, self.shown)
        self.notes[:] = [show_text(n, self.out, self.shown) for n in self.notes]

    def _end_deferred(self, exc: BaseException | None) -> None:
        """Without a guard (the Python API, its caller's handlers at their defaults), a signal that came during the
        moves was deferred (:func:`planner.core.interrupt.held`: ``exc`` is its
        :class:`planner.core.interrupt.Interrupted`, the signal still blocked): now that the staging folder is gone,
        say what the run did in one line on standard error, as the command line does (after the notes it would
        have given back), and let the signal take its default action (:func:`planner.core.interrupt.release`)."""
        if not isinstance(exc, Interrupted) or not exc.blocked or self.guard is not None or active_guard() is not None:
            return
        name = Interrupted(exc.blocked[0]).name
        written, removed = list(exc.written), list(exc.removed) if exc.written else []
        if written:
            gone = f"; removed the stale {_listed(removed)}" if removed else ""
            line = f"Interrupted by {name} after the reports were written: wrote {_listed(written)} (complete){gone}"
        elif isinstance(exc.__context__, Exception):  # a failure the signal came during
            line = f"Interrupted by {name} after this error: {exc.__context__}"
        else:
            line = f"Interrupted by {name}"
        line = show_text(line, self.out, self.shown)
        try:
            if not stream_into_planners_files(sys.stderr, self.out, self.inputs):
                for note in self.notes:
                    sys.stderr.write(f"planner: {escape_unsafe(note)}\n")
                sys.stderr.write(f"planner: {line}; stopped.\n")
        except (OSError, ValueError, AttributeError):
            pass  # no standard error to say it on: the signal still ends the run
        release(exc.blocked)

    def _remove_staging(self) -> None:
        """Remove the files this run made in its staging folder, known by what it made and checked to be the same
        files just before each unlink (:func:`planner.core.stagerecord.clear_own`: never by a name's pattern), then
        the folder. Another program's file there is left, with the folder, and said in :attr:`notes` in this
        run (h33a N1, N4, m1); so is a file of its own that cannot go (its mark is then kept: the next run into the
        folder removes what the mark records)."""
        assert self._staging is not None
        try:
            now = os.lstat(self._staging)
        except OSError:
            now = None
        if now is None or not stat.S_ISDIR(now.st_mode) or (now.st_dev, now.st_ino) != self._staging_id:
            self.notes.append(f"Left {self._staging}: it is no longer the folder this run made (replaced or moved by "
                              "someone else), so planner removed nothing there.")
            return
        foreign, stuck = clear_own(self._staging, self._mark_id, self.made)
        if foreign:
            # a report this run staged that another program then changed, linked or held open: said so, not as a
            # file this run did not put there (h35a, h36a)
            ours = [n for n in foreign if n in self._names]
            other = [n for n in foreign if n not in self._names]
            said = []
            if ours:
                said.append(f"its report {', '.join(ours[:5])}{' and more' if len(ours) > 5 else ''}, which was "
                            "changed, linked or held open there after this run wrote it")  # by whom: the error says
            if other:
                said.append(f"{', '.join(other[:5])}{f' and {len(other) - 5} more' if len(other) > 5 else ''}, which "
                            "this run did not put there")
            self.notes.append(f"Left {self._staging}: it holds {'; and '.join(said)}, so planner removed only its own "
                              "files; check it and remove it yourself.")
            return
        try:
            os.rmdir(self._staging)
        except OSError as exc:
            later = (f"it still holds {', '.join(stuck[:3])}{', ...' if len(stuck) > 3 else ''}, which this run made "
                     "and could not remove; its mark stays, so a later planner run into this folder can remove them"
                     if stuck else "check it and remove it yourself")
            self.notes.append(f"Left {self._staging}: it could not be removed ({exc.strerror or exc}); {later}.")

    # -- the files --
    def path(self, name: str) -> Path:
        """Where to write the set's file ``name`` now (inside the staging folder); it is moved to
        ``out_dir / name`` by :meth:`commit`."""
        check_name(name)
        if self._staging is None:
            raise RuntimeError("ReportSet.path() outside its with block")
        if name not in self._names:
            self._names.append(name)
            self._record(name)
        return self._staging / name

    def _record(self, name: str) -> None:
        """List ``name`` in the staging folder's mark: a later run removes only the files listed there."""
        assert self._staging is not None
        try:
            self._append(name)
            self._recorded.append(name)
        except OSError as exc:
            if exc.errno == errno.ENOENT and not os.path.isdir(self._staging):  # rm -rf or mv from another shell
                gone = self.out if not os.path.isdir(self.out) else self._staging
                raise OutputError(f"{gone}: was removed or moved away during the run ({exc.strerror or exc}), so "
                                  "planner could not write there. Check where it went and run again.") from None
            hint = f" {full_hint(exc, self.out)}" if disk_full(exc) else ""
            raise OutputError(f"{self.out}: cannot write into the output directory ({exc.strerror or exc}).{hint}") from None

    def _append(self, item: object) -> None:
        """Append ``item`` to this run's mark, through a descriptor of the folder it made and of the mark it made
        there (device and inode checked; no link followed, nothing created): never to a file at those names that
        another program put there (h34a N2).

        Raises:
            OutputError: the folder or mark is no longer the run's; OSError: the write failed.
        """
        assert self._staging is not None
        try:
            folder_fd = open_folder(self._staging, self._staging_id)
            try:
                mark_fd = open_mark(folder_fd, self._mark_id)
            finally:
                os.close(folder_fd)
        except StagingMoved as exc:
            raise OutputError(f"{self._staging}: is no longer the staging folder this run made ({exc.strerror}: moved "
                              "away, or replaced by a link or another folder, by another program); nothing was "
                              f"changed in {self.out}. Check what writes there and run again.") from None
        try:
            record(mark_fd, item)
        finally:
            os.close(mark_fd)

    def _record_digests(self, digests: dict[str, str]) -> None:
        """List the SHA-256 of each staged file in the staging folder's mark (one JSON object line,
        ``{"sha256": {name: hex}}``), before the moves: a run killed during them may leave a user's file, swapped
        in by the moves, under a report's name there; the next run removes a file there only when its hash is
        one planner recorded (:func:`_clear_staging`). Raises OutputError (nothing moved) when it cannot."""
        assert self._staging is not None
        try:
            self._append({"sha256": digests})
        except OSError as exc:
            hint = f" {full_hint(exc, self.out)}" if disk_full(exc) else ""
            raise OutputError(f"{self.out}: cannot write into the output directory ({exc.strerror or exc}); "
                              f"nothing was changed there.{hint}") from None

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
        manifest = read_manifest(self.out)
        for name in names:
            check_name(name)
            _owned_or_refused(self.out, name, manifest, self.set_name, self.inputs)
            _replaceable(self.out / name)

    def commit(self) -> list[Path]:
        """Move every staged file into place and remove the stale ones, as one step.

        Returns:
            The final paths of the files written, in the order :meth:`path` was first called.

        Raises:
            OutputError: a staged file is missing (a writer did not write it), a destination is
                read-only or a directory, or a rename fails; nothing is moved then, except when a
                rename fails part-way (an error of the file system). Also once the set is in place, when a
                previous report a program wrote to after planner unlinked it could not be saved whole
                (:attr:`lost`; ``notes`` on the error: the run's :attr:`notes`).
        """
        if self._staging is None or self._committed:
            raise RuntimeError("ReportSet.commit() outside its with block, or twice")
        self._same_folder()
        same_staging(self)
        # what planner wrote, as its mark recorded it when each report was complete: never re-read (h34a N1)
        recorded = staged_records(self._staging / STAGING_MARK, self._mark_id)
        odd = [n for n in self._names if n in recorded and _lexists(self._staging / n)
               and not (self._staging / n).is_file()]
        if odd:  # a pipe, folder or link put at its name: changed, not removed (h35a, h36a)
            from planner.core.moves import swapped_line

            kind = what_it_is(os.lstat(self._staging / odd[0]).st_mode)
            self.made[odd[0]] = None  # type: ignore[assignment]  (not planner's file now: left, never removed)
            raise OutputError(swapped_line(self._staging / odd[0], self.out, f" (it is now {kind})"))
        missing = [n for n in self._names if not (self._staging / n).is_file()]
        if missing and missing[0] in recorded:  # written, then removed there by another program (h34a m9)
            raise OutputError(f"{self.out / missing[0]}: planner wrote this report in its staging folder, but another "
                              "program removed it there before it was moved into place; nothing was changed in "
                              f"{self.out}. Check what writes there and run again.")
        if missing:
            raise OutputError(f"{self.out / missing[0]}: was not written; nothing was changed in {self.out}.")
        manifest = read_manifest(self.out)
        for name in self._names:
            _owned_or_refused(self.out, name, manifest, self.set_name, self.inputs)
            _replaceable(self.out / name)
        self._other_origins(manifest)
        for name in self._stale:
            if name not in self._names:
                _not_another_sets(self.out, name, manifest, self.set_name)
        # a stale report goes only when it is this set's and unchanged; another's file stays where it is
        removed = [n for n in self._stale if n not in self._names and _lexists(self.out / n)
                   and _owns(self.out, n, manifest, self.set_name) and not _is_input(self.out / n, self.inputs)]
        # a stale report made read-only is kept and said (as an edited one is), not a reason to stop the run
        read_only = [n for n in removed if _made_read_only(self.out / n)]
        removed = [n for n in removed if n not in read_only]
        for name in removed:
            _replaceable(self.out / name)
        for name in self._stale:
            if name not in self._names and name not in removed and _lexists(self.out / name):
                why = ("it changed since planner wrote it" if _same_set((manifest.get(name) or {}).get("set"), self.set_name)
                       else "planner did not write it")
                try:
                    st = os.lstat(self.out / name)
                    if st.st_uid != os.geteuid():  # never planner's, whatever its bytes
                        why = "it belongs to another user"
                    elif not stat.S_ISREG(st.st_mode):  # a folder, a link, a pipe where a report was
                        why = f"it is not a regular file ({what_it_is(st.st_mode)}), which planner never writes"
                    elif why.startswith("it changed") and not os.access(self.out / name, os.R_OK):
                        why = "it cannot be read, so planner cannot tell it is the report it wrote"
                except OSError:
                    pass
                if name in read_only:
                    why = ("it was made read-only, and planner does not remove a file that was made read-only "
                           f"(make it writable, chmod u+w {path_word(self.out / name)}, to let the next "
                           "run remove it, or remove it yourself)")
                if _is_input(self.out / name, self.inputs):  # kept because this run reads it, whatever its bytes
                    why = "this run reads it as an input"
                self.notes.append(f"Kept {self.out / name}, a name of this report set not written this time: {why}.")
        digests = {n: recorded[n][0] if n in recorded else sha256_file(self._staging / n) for n in self._names}
        narrow = self._set_mode(manifest)
        for name in self._names:  # a replaced report keeps its group, permission bits and ACL
            self._keep_access(name, narrow)
        files = {n: e for n, e in manifest.items() if _lexists(self.out / n)}
        # before the moves, the manifest knows the new files as well as the old (a crash part-way leaves
        # files planner still recognises); after them, only what is there
        sizes = {n: recorded[n][1] if n in recorded else os.lstat(self._staging / n).st_size for n in self._names}
        during = {**files, **{n: _entry(self.set_name, digests[n], sizes[n], files.get(n), self.origin) for n in self._names}}
        from planner.core.moves import finish_removal

        done: list[Path] = []
        try:
            with held(self.guard):
                check_staged(self, recorded)  # just before the moves: each the file planner made, unchanged
                self._record_digests(digests)  # the mark's "moves begin" line: after the check (h38a 3)
                write_manifest(self.out, during, self.notes)
                done = self._move(removed, manifest, digests)
                self._committed = True  # the new set is in place, whole: nothing below undoes that
                self._rewritten_whole()
                after = {n: e for n, e in during.items() if n not in removed}
                after.update({n: _entry(self.set_name, digests[n], sizes[n], origin=self.origin) for n in self._names})
                try:
                    write_manifest(self.out, after, self.notes)
                except OutputError as exc:
                    # the manifest written before the moves knows every new report (and the previous hashes
                    # beside them): planner still recognises the set, and the next run writes the manifest
                    self.notes.append(_manifest_note(exc, during, after, removed))
                removed = finish_removal(self, manifest, removed, STAGING_MARK)  # what changed since is kept
                fsync_dir(self.out)
        except Interrupted as exc:  # a signal held during the moves: the set is in place, and that is said
            if self._committed:
                exc.written = [show_path(p, self.out, self.shown) for p in done]
                exc.removed = [self.shown / n for n in removed]
            raise
        done = [show_path(p, self.out, self.shown) for p in done]  # as the user gave the folder (__init__)
        self.removed = [self.shown / n for n in removed]
        self._shown_as_given(None)
        guard = self.guard if self.guard is not None else active_guard()
        if guard is not None:  # a signal after this run's last commit still says the reports are whole
            guard.written.extend(done)
            guard.removed.extend(self.removed)
        if self.lost:  # the set is in place, but bytes a program wrote were lost: not a run that went well
            gone = f"; removed the stale {_listed(self.removed)}" if self.removed else ""
            error = OutputError(show_text(" ".join(self.lost), self.out, self.shown)
                                + f" The new reports are in place, whole: {_listed(done)}{gone}.")
            error.notes = tuple(self.notes)  # type: ignore[attr-defined]  (said before the error line)
            raise error
        return done

    def _other_origins(self, manifest: dict[str, dict]) -> None:
        """Say which reports of this set's name the manifest records as planned from another scenario file than
        :attr:`origin`: this run replaces them (two scenario files of one ``name``), h29a m1."""
        if self.origin is None:
            return
        others: dict[str, list[str]] = {}
        for name in self._names:
            entry = manifest.get(name) or {}
            was = entry.get("from")
            if isinstance(was, str) and was != self.origin and _same_set(entry.get("set"), self.set_name) \
                    and _lexists(self.out / name) and not _same_file(was, self.origin):
                others.setdefault(was, []).append(name)
        for was, names in others.items():
            self.notes.append(f"Replaced {', '.join(str(self.out / n) for n in names)}, planned from another scenario "
                              f"file, {clip_text(was, 200)}, of the same name ({self.set_name.split(' ', 1)[-1]}): "
                              "reports are named by the scenario's name, so give one of the two files another "
                              "'name:' to keep both sets.")

    def _set_mode(self, manifest: dict[str, dict]) -> int | None:
        """The permission bits every report of this set now in the folder allows (their modes ANDed), or None
        when none is there: a report the set gains (a new --format) is given no more than that, so a set the user
        made private (chmod 600) stays private. The owner's bits are left out of it (always allowed): a report the
        owner made read-only (chmod 444) says nothing about who else may read the set (h26a N1). Those reports are kept as the templates whose group and narrowest
        ACL a gained report gets (:func:`planner.core.access.give_set_access`)."""
        bits, self._templates = None, []
        for name, entry in manifest.items():
            if not _same_set((entry or {}).get("set"), self.set_name):
                continue
            try:
                st = os.lstat(self.out / name)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
                mode = stat.S_IMODE(st.st_mode) | 0o700  # the owner's own bits on one file narrow no other (h26a N1)
                bits = mode if bits is None else bits & mode
                self._templates.append(self.out / name)
        return bits

    def _keep_access(self, name: str, narrow: int | None = None) -> None:
        """Give the staged ``name`` the group, permission bits, POSIX ACL and ``user.*`` extended attributes of the
        report it replaces (:func:`planner.core.atomic.keep_access`; attributes not copied are said in
        :attr:`notes`), on the staged file's open descriptor: nothing is changed
        by path. A new name of the set gets no permission bit outside ``narrow`` (:meth:`_set_mode`).

        Raises:
            OutputError: the report cannot be read, or its group or ACL cannot be kept.
        """
        assert self._staging is not None
        try:
            old = os.lstat(self.out / name)
        except FileNotFoundError:
            old = None
            if narrow is None:
                return
        except OSError as exc:
            raise OutputError(f"{self.out / name}: cannot be read ({exc.strerror or exc}).") from None
        try:
            fd = os.open(self._staging / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symbolic link another program put at its name (h35a N1)
                from planner.core.moves import swapped_line

                raise OutputError(swapped_line(self._staging / name, self.out, " (it is now a symbolic link)")) \
                    from None
            raise OutputError(f"{self._staging / name}: cannot be read ({exc.strerror or exc}).") from None
        try:
            if old is None:
                assert narrow is not None and self._templates
                give_set_access(fd, self._templates, narrow, self.out / name)
                self.gained[name] = os.fstat(fd).st_ino
                return
            acl = _acl_of(self.out / name)  # read first: a change after this is found after the swap (moves)
            if stat.S_ISREG(old.st_mode) and old.st_nlink > 1:  # said, as calibrate refuses such a file (h32a m2)
                self.notes.append(f"{self.out / name} had {old.st_nlink - 1} other hard link(s): the new report is a "
                                  "new file, so the other names keep the earlier report.")
            keep_access(fd, old, self.out / name, self.out / name, self.notes)
            st_new = os.fstat(fd)
            self.copied[name] = (kept_mode(old), acl, st_new.st_ino, st_new.st_gid)
        except OSError as exc:
            raise OutputError(f"{self.out / name}: cannot keep its permissions ({exc.strerror or exc}).") from None
        finally:
            os.close(fd)

    def _move(self, removed: list[str], manifest: dict[str, dict], digests: dict[str, str]) -> list[Path]:
        """Move the staged files into place and take ``removed`` away (:func:`planner.core.moves.move_into_place`:
        by swaps that cannot lose a file saved meanwhile); on a failure part-way, put every file back as it
        was and restore ``manifest``.

        Raises:
            OutputError: a move failed, or a report was changed or created meanwhile (the previous set put back).
        """
        from planner.core.moves import move_into_place

        return move_into_place(self, removed, manifest, digests, mark=STAGING_MARK,
                               restore=lambda: write_manifest(self.out, manifest))

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
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                here = held_here(fd)
                os.close(fd)
                raise OutputError(lock_held(self.out, here=here)) from None
            # a file system without flock on directories: run unlocked rather than not at all
        self._lock_fd = fd
        self._same_folder()
        refuse_shared_folder(self.out, "the output folder", _SHARED_HINT, st=os.fstat(fd), own=_OWN_HINT)

    def _same_folder(self) -> None:
        """Check the folder locked (its open descriptor) again: not the shipped catalog or the package (by
        device and inode, walking up its own '..'), and still the folder ``out_dir`` names (not swapped for
        another folder or a link since the checks).

        Raises:
            OutputError: saying which.
        """
        if self._lock_fd is None:
            return
        refuse_protected(self.out, fd=self._lock_fd)
        try:
            a, b = os.fstat(self._lock_fd), os.stat(self.out)
        except OSError as exc:
            raise OutputError(f"{self.out}: cannot be read ({exc.strerror or exc}).") from None
        if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
            raise DestinationError(f"{self.out}: was replaced by another folder or a link while planner was opening it; "
                                   "nothing was written. Check the folder and run again.")

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def _out_device(self) -> int | None:
        """The device (``st_dev``) of the output folder this run holds locked; None when it cannot be told."""
        try:
            return os.fstat(self._lock_fd).st_dev if self._lock_fd is not None else os.stat(self.out).st_dev
        except OSError:
            return None

    def _rewritten_whole(self) -> None:
        """Once this run's set is in place: a note of the clean-up that said a stopped run's reports here "may mix"
        new and older files, when every report it named is one this run has just rewritten, says so instead of
        asking for another run (h37a 11)."""
        mixed = self._mixed
        if not mixed or not set(mixed) <= set(self._names):
            return
        for i, note in enumerate(self.notes):
            if "may mix" in note and "; run it again to rewrite them whole" in note:
                self.notes[i] = note.replace("may mix its new files with older ones; run it again to rewrite them "
                                             "whole", "may have mixed its new files with older ones; this run has "
                                             "rewritten them whole")

    def _clear_dead_staging(self) -> None:
        """Clean what a killed run left (no live run is writing: this run holds the lock): in each staging
        folder, only the files its mark lists (and their temporaries), owned by this user, then the folder
        if that empties it; planner's own temporary manifests (``..planner-reports.json.XXXXXXXX.tmp``,
        owned by this user). A folder of that name holding anything else is left, and said."""
        try:
            entries = sorted(os.scandir(self.out), key=lambda e: e.name)  # said in the order ls lists them (h33a m4)
        except OSError:
            return
        hashes: set[str] | None = None
        said = len(self.notes)
        for e in entries:
            try:
                if MANIFEST_TMP.fullmatch(e.name) and _own_stream(e.path):
                    self.notes.append(f"Kept {e.path}: it is this run's standard output or error, not a file an "
                                      "earlier planner run left.")
                elif MANIFEST_TMP.fullmatch(e.name):
                    if is_manifest_tmp(Path(e.path)):
                        os.unlink(e.path)
                        self.notes.append(f"Removed {e.path}, a temporary file an earlier planner run left (stopped, "
                                          "or unable to remove it).")
                    else:
                        self.notes.append(f"Kept {e.path}: it has the name of planner's temporary manifest but "
                                          "is not one planner wrote (not this user's, or not a report manifest); "
                                          "check it and remove it yourself.")
                elif e.name.startswith(STAGING_PREFIX) and e.is_dir(follow_symlinks=False):
                    if (why := in_use(Path(e.path), self.out)) is not None:  # TMPDIR, the current folder (h28a N1)
                        self.notes.append(f"Left {e.path}: {why}")
                        continue
                    if is_mount_point(e.path, self._out_device()):
                        self.notes.append(f"Left {e.path}: it is a mount point or on another file system than "
                                          f"{self.out}, so not a folder a planner run made; planner removed "
                                          "nothing there.")
                        continue
                    held = _files_in(Path(e.path))
                    if hashes is None:  # every hash the manifest lists, read once: what a previous report may be
                        hashes = _listed_hashes(self.out)
                    found: dict = {}
                    left = _clear_staging(Path(e.path), hashes, found)
                    if found.get("moved") and self._mixed is None:
                        from planner.core.stagemark import mixed_names

                        self._mixed = mixed_names(self.out)  # read before this run's moves (h37a 11)
                    if held or left or not os.path.lexists(e.path):  # its mark alone removed: said (h36a 7)
                        self.notes.append(_dead_staging_note(self.out, Path(e.path), held, left,
                                                             temps=found.get("temps", 0),
                                                             moved=found.get("moved", True)))
                elif e.name.startswith(STAGING_PREFIX):  # a link or file of that name: never planner's (h35a)
                    kind = "a file" if e.is_file(follow_symlinks=False) else what_it_is(os.lstat(e.path).st_mode)
                    self.notes.append(f"Kept {e.path}: it is named like planner's staging folders but is {kind}, "
                                      "which planner never makes there; planner leaves it.")
            except OSError:
                continue
        self.notes[said:] = capped_leftovers(self.notes[said:], self.out)  # h33a m4, h34a m4


def _manifest_note(exc: OutputError, during: dict[str, dict], after: dict[str, dict], removed: list[str]) -> str:
    """The note for a manifest that could not be written after the moves (``exc``): the one written before them
    (``during``) is left, and the note says how it differs from the one that should be there (``after``): the
    previous reports' hashes beside the new ones, the stale reports removed; where it does not (a new folder),
    that it already lists the reports as they are (h31a m2)."""
    if during == after:
        return (f"The reports are in place, and the manifest written before they were moved already lists them as "
                f"they are; writing it again failed: {exc}")
    what = []
    if any(len(e.get("sha256") or []) > 1 for n, e in during.items() if n in after):
        what.append("the previous reports' hashes beside the new ones")
    gone = [n for n in removed if n in during]
    if gone:
        what.append(f"the stale report{'s' if len(gone) > 1 else ''} removed ({', '.join(gone)})")
    return (f"The reports are in place, but the manifest was not brought up to date: {exc} It still lists "
            f"{' and '.join(what) or 'entries planner did not mean to keep'}, which the next run into this folder "
            "clears.")


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same device and inode (a folder reached through a link,
    '//tmp/x', a hard link: h34a m6); False when either cannot be read (a file moved or removed since)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _resolved(path: Path) -> str | None:
    """An absolute ``path`` with every link on it followed (``os.path.realpath``): the file a scenario given through
    a link is, so that the link retargeted later names another file (h35a m4: the link's path was recorded). None
    for what is no regular file (a pipe, ``<(...)`` or /dev/stdin: '/proc/PID/fd/pipe:[N]' names no file, and two
    runs of one pipeline are no two files, h37a 12)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        return os.path.realpath(path) if path.is_absolute() else str(path)
    except (OSError, ValueError):
        return str(path)


def _entry(set_name: str, digest: str, size: int, old: dict | None = None, origin: str | None = None) -> dict:
    """The manifest entry of a report planner moves into place: its SHA-256 and size in bytes first, then (in the
    manifest written before the moves) the previous file's, from ``old``, its entry. The sizes (``bytes``) are
    listed only where every hash has one (an entry of an earlier version has none): a file whose size is none of
    them is changed, which planner then knows without hashing it (:func:`planner.core.destinations._owner`)."""
    old = old or {}
    hashes = [digest, *old.get("sha256", [])][:2]
    entry: dict = {"sha256": hashes, "set": set_name}
    if origin is not None:  # the scenario file the set was planned from (ReportSet origin)
        entry["from"] = origin
    before = old.get("bytes")
    if len(hashes) == 1:
        entry["bytes"] = [size]
    elif isinstance(before, list) and len(before) == len(old.get("sha256", [])) \
            and all(type(b) is int for b in before):
        entry["bytes"] = [size, *before][:2]
    return entry


def _listed(paths: list[Path]) -> str:
    """'a', 'a and b', 'a, b and c' (as the command line lists files), unsafe characters escaped."""
    names = [escape_unsafe(str(p)) for p in paths]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _files_in(folder: Path) -> int:
    """How many files a dead staging folder holds besides its mark (staged or previous reports)."""
    try:
        return sum(1 for e in os.scandir(folder) if e.name != STAGING_MARK)
    except OSError:
        return 0


def _listed_hashes(out: Path) -> set[str]:
    """Every SHA-256 the manifest of ``out`` lists, under any name (set() when it has none or cannot be read)."""
    try:
        manifest = read_manifest(out)
    except OutputError:
        return set()
    return {h for e in manifest.values() for h in (e.get("sha256") or []) if isinstance(h, str)}
