"""Moving a staged report set into place without losing a file saved meanwhile (ReportSet.commit).

Each staged report replaces the previous one by a swap (``renameat2`` ``RENAME_EXCHANGE``,
:func:`planner.core.renames.exchange`): the new file takes the name, and what the name held at that
very instant comes out into the staging folder, where it is hashed. If it is not the report planner
checked (an editor saved over it by renaming a file onto it, or edited it in place, after the check),
everything is swapped back, that save with it, and the run stops with one line. A name that held
nothing gets its file only if it still holds nothing (``RENAME_NOREPLACE``, or a hard link, which
never replaces). A stale report is taken away by renaming it into the staging folder (what moves is
what was there) and hashed the same way. Undoing a swap swaps again and checks that what came back
out is planner's new file; a save made after the swap is kept in the staging folder, and said.

Where the system cannot swap (not Linux, glibc < 2.28, a file system without the flag), a replaced
report is hard-linked into the staging folder and then replaced by ``os.replace``, and the kept link
is hashed again afterwards: an edit in place is found, but a save by rename landing between the link
and the rename is lost (a known limit of that fallback).

Sources: Linux man-pages ``rename(2)`` ("renameat2()", RENAME_EXCHANGE, RENAME_NOREPLACE) and
``link(2)`` (EEXIST: the new name exists; never replaced); POSIX ``rename()``.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any

from planner.core import renames
from planner.core.access import carry_back, recheck_after_swap, recheck_gained
from planner.core.atomic import KEPT_MODE_BITS, _acl_of, own_file_sha256 as _sha256
from planner.core.errors import OutputError
from planner.core.infile import what_it_is
from planner.core.names import path_word
from planner.core.stagerecord import open_here, unchanged


class Changed(Exception):
    """What a name held when planner moved it was not the report planner checked (or, ``created``, a name
    that held nothing when checked held a file when planner placed its own)."""

    def __init__(self, name: str, *, created: bool = False, what: str = "edit") -> None:
        super().__init__(name)
        self.name = name
        self.created = created
        #: what came out instead: "edit" (other bytes), "unreadable" (a chmod took planner's read permission),
        #: "kind" (a folder, a link or a pipe); after the moves also "late", "replaced", "gone" and "linked"
        #: (a second name made by another program, h41a N14)
        self.what = what


def _what_came_out(path: Path) -> str:
    """What :class:`Changed` says of ``path``, which is not the report planner checked."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return "edit"
    if not stat.S_ISREG(st.st_mode):
        return "kind"
    if st.st_uid == os.geteuid() and not os.access(path, os.R_OK):
        return "unreadable"
    return "edit"


@dataclass
class _Moves:
    """What has been moved so far, in order, to undo it: (how, name, where the previous file is kept)."""

    steps: list[tuple[str, str, Path | None]] = field(default_factory=list)
    #: the name being moved now, and what cannot be done when it fails, for the error line
    current: tuple[str, str] | None = None
    swap: bool | None = None  # None: not tried yet; False: this file system cannot swap
    #: a file someone saved meanwhile, kept in the staging folder when undoing found it there
    saved: list[tuple[str, Path]] = field(default_factory=list)
    #: name -> how planner left the new report it swapped in (mode, ACL, group) and the previous file's inode:
    #: a change the user makes on that name before the set is put back is carried onto the previous file
    left: dict[str, tuple[tuple[int, bytes | None, int], int]] = field(default_factory=dict)
    #: what putting the set back carried over or could not, one line each, for the error line
    notes: list[str] = field(default_factory=list)
    #: the names in :attr:`saved` where the file kept in the staging folder is the one planner moved away (a
    #: stale report taken) and the file at the name is the one saved meanwhile
    displaced: list[str] = field(default_factory=list)
    #: new reports changed after the check, through a descriptor opened on them before it (:func:`_recheck_new`):
    #: putting the set back keeps each in the staging folder, never at its name
    late: set[str] = field(default_factory=set)


def _noreplace(src: Path, dst: Path, moves: _Moves) -> None:
    """Rename ``src`` to ``dst`` unless ``dst`` exists (FileExistsError): :func:`planner.core.renames.place_new`,
    by a hard link at once where this file system was found unable to swap."""
    renames.place_new(src, dst, rename=moves.swap is not False)


def _place(rs: Any, i: int, name: str, manifest: dict[str, dict], moves: _Moves) -> None:
    staged, dst = rs._staging / name, rs.out / name
    if os.path.lexists(dst):
        if moves.swap is not False:
            try:
                swapped = renames.exchange(staged, dst)
            except FileNotFoundError:  # removed since the check: the name now holds nothing
                swapped = None
            if swapped:
                moves.swap = True
                moves.steps.append(("swapped", name, staged))  # the previous file is now under the staged name
                if _sha256(staged) not in manifest.get(name, {}).get("sha256", []):
                    # a name that held nothing when planner checked it (a report the set gains): created meanwhile
                    raise Changed(name, created=name not in getattr(rs, "copied", {name: None}),
                                  what=_what_came_out(staged))
                copied = getattr(rs, "copied", {}).get(name)
                if copied is not None:  # a chmod/setfacl/chgrp made since they were copied: not undone
                    note = recheck_after_swap(staged, dst, copied[:2], copied[2], copied[3])
                    if note is not None:
                        rs.notes.append(note)
                _remember(moves, name, dst, staged)
                return
            if swapped is False:
                moves.swap = False
        if moves.swap is False and os.path.lexists(dst):
            backup = rs._staging / f"{i}.old"
            rs._record(backup.name)  # listed first: a run killed from here on leaves it to clean
            try:
                os.link(dst, backup)  # never replaces: a file another program put at that name stops the moves
            except FileExistsError:
                raise _taken(backup) from None
            except OSError:
                _copy_new(dst, backup)  # a file system without hard links
            _made(rs, backup)
            os.replace(staged, dst)
            moves.steps.append(("replaced", name, backup))
            return
    try:
        _noreplace(staged, dst, moves)
    except FileExistsError:
        raise Changed(name, created=True) from None
    moves.steps.append(("placed", name, None))


def _take_away(rs: Any, i: int, name: str, manifest: dict[str, dict], moves: _Moves) -> None:
    backup = rs._staging / f"{i}.old"
    rs._record(backup.name)
    # what moves is what the name held at that instant (a rename); it lands on an empty file this run has just made
    # there exclusively, so a file another program put at that name first is never replaced (h33a N1); one swapped
    # onto that empty file in the instant before the rename is the known limit
    from planner.core.stagerecord import unlink_same

    try:
        fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        raise _taken(backup) from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    try:
        os.rename(rs.out / name, backup)
    except OSError:
        try:
            unlink_same(backup, (st.st_dev, st.st_ino))  # the empty file this run made, while it is that file
        except OSError:
            pass
        raise
    _made(rs, backup)
    moves.steps.append(("taken", name, backup))
    if _sha256(backup) not in manifest.get(name, {}).get("sha256", []):
        raise Changed(name, what=_what_came_out(backup))


def same_staging(rs: Any) -> None:
    """Refuse to go on when the staging folder is no longer the one this run made (device and inode as made:
    renamed away, a link or another folder put at its name, h34a N2).

    Raises:
        OutputError: saying so; nothing was changed in the output folder.
    """
    assert rs._staging is not None
    try:
        now = os.lstat(rs._staging)
        same = stat.S_ISDIR(now.st_mode) and (now.st_dev, now.st_ino) == rs._staging_id
    except OSError:
        same = False
    if not same:
        raise OutputError(f"{rs._staging}: is no longer the staging folder this run made (moved away, or "
                          "replaced by a link or another folder, by another program); nothing was changed in "
                          f"{rs.out}. Check what writes there and run again.")

def check_staged(rs: Any, recorded: dict[str, tuple[str, int, tuple[int, int]]]) -> None:
    """Check, just before the moves, that each staged report is the file planner made (device and inode as its
    mark records) and holds the bytes planner wrote (size, then SHA-256 through a descriptor opened without
    following a link): a file another program swapped in or edited there is never moved into place, said as
    planner's, or recorded in the manifest (h34a N1). A report no writer of planner's recorded is not judged.

    Raises:
        OutputError: one line naming the file, which is left where it is; nothing was changed in the output
            folder.
    """
    assert rs._staging is not None
    same_staging(rs)
    rs.checked = dict(recorded)  # for the check after the moves (:func:`move_into_place`)
    for name in rs._names:
        if name not in recorded:
            continue
        digest, size, ident = recorded[name]
        try:
            what = unchanged(rs._staging / name, digest, size, ident)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symbolic link put at its name (h35a N1): changed, not unreadable
                raise OutputError(swapped_line(rs._staging / name, rs.out, " (it is now a symbolic link)")) from None
            raise OutputError(f"{rs._staging / name}: cannot be read to check it is the report planner wrote "
                              f"({exc.strerror or exc}); nothing was changed in {rs.out}.") from None
        if what == "removed":
            same_staging(rs)  # the folder itself replaced or moved away: said as that (h38a 15)
            raise OutputError(f"{rs.out / name}: planner wrote this report in its staging folder, but another "
                              "program removed it there before it was moved into place; nothing was changed in "
                              f"{rs.out}. Check what writes there and run again.")
        if what in ("linked", "open"):  # h36a 4, N1: either could change the report after this check
            rs.made[name] = None  # type: ignore[assignment]  (left for the user: its other name or holder)
            here = what == "open" and open_here(rs._staging / name)  # the calling program's own (h37a 9)
            how = ("has another hard link, made by another program after planner wrote it (through that name the "
                   "report could be changed once in place)" if what == "linked" else
                   "is held open in this very process, outside planner (another thread, or a descriptor the "
                   "program keeps), which could write into it after planner checked it" if here else
                   "is held open by another program, which could write into it after planner checked it")
            raise OutputError(f"{rs._staging / name}: {how}; it was left there, and nothing was changed in {rs.out}. "
                              "Check what opens or links files there (fuser -v, lsof) and run again.")
        if what is not None:
            rs.made[name] = None  # type: ignore[assignment]  (not planner's file now: left, never removed)
            try:  # what it is now, where not a regular file: a link, a pipe, a folder (h38a 4)
                mode = os.lstat(rs._staging / name).st_mode
                kind = "" if stat.S_ISREG(mode) else f" (it is now {what_it_is(mode)})"
            except OSError:
                kind = ""
            raise OutputError(swapped_line(rs._staging / name, rs.out, kind))


def swapped_line(staged: Path, out: Path, how: str = "") -> str:
    """The error line of a staged report another program changed (``how``: ' (it is now a symbolic link)')."""
    return (f"{staged}: changed in the staging folder after planner wrote it, by another program{how}; it was left "
            f"there, and nothing was changed in {out}. Check what writes there and run again.")


def _taken(backup: Path) -> OutputError:
    """The failure of a move whose ``<i>.old`` name in the staging folder another program took first (h33a N1)."""
    return OutputError(f"{backup} was created by another program in planner's staging folder, where planner keeps "
                       "the previous report it moves away; it was left as it is")


def _copy_new(src: Path, dst: Path) -> None:
    """Copy ``src`` to a new file ``dst`` (its bytes, mode and times), created exclusively: a file of that name is
    never written over (FileExistsError)."""
    with open(src, "rb") as fin, open(dst, "xb") as fout:
        shutil.copyfileobj(fin, fout)
    shutil.copystat(src, dst)


def _made(rs: Any, path: Path) -> None:
    """Note the device and inode of ``path``, a file the moves just made in the staging folder (``<i>.old``): the
    run's clean-up removes that name only while it holds that file (:meth:`ReportSet._remove_staging`)."""
    made = getattr(rs, "made", None)
    if made is None:
        return
    try:
        st = os.lstat(path)
    except OSError:
        return
    made[path.name] = (st.st_dev, st.st_ino)


def _undo(rs: Any, digests: dict[str, str], moves: _Moves) -> None:
    """Put every file back as it was, last step first; a file saved to a name after planner moved it is
    kept in the staging folder (:attr:`_Moves.saved`), never removed.

    Raises:
        OSError: a step could not be undone.
    """
    while moves.steps:  # each step dropped once undone: what is left says what could not be (_where_now)
        how, name, kept = moves.steps[-1]
        dst = rs.out / name
        if how == "swapped":
            try:
                renames.exchange(kept, dst)
            except FileNotFoundError:  # the name was removed meanwhile: the previous file goes back alone
                _noreplace(kept, dst, moves)
                moves.steps.pop()
                continue
            if name in moves.late:  # planner's new file, written to by another program: kept in staging, said
                pass
            elif _sha256(kept) != digests.get(name):  # what came out is not planner's new file: a later save
                moves.saved.append((name, kept))
            elif name in moves.left:  # a chmod/setfacl/chgrp the user made on the new report is not undone
                try:
                    note = carry_back(kept, dst, *moves.left[name])
                except OSError as exc:
                    note = (f"{dst}: planner could not tell whether its permissions were changed while it was being "
                            f"replaced ({exc.strerror or exc}); check them.")
                if note is not None:
                    moves.notes.append(note)
        elif how == "replaced":
            os.replace(kept, dst)
        elif how == "placed":
            away = rs._staging / name
            if name in moves.late and not os.path.lexists(dst):  # removed by another program after the moves
                moves.steps.pop()
                continue
            os.rename(dst, away)  # taken away by rename: a save made meanwhile is not deleted
            if _sha256(away) != digests.get(name) and name not in moves.late:
                _noreplace(away, dst, moves)
        elif how == "taken":
            try:
                _noreplace(kept, dst, moves)
            except FileExistsError:
                moves.saved.append((name, kept))  # a new file took the name meanwhile: both kept
                moves.displaced.append(name)  # the file at the name is that new one; the one moved away is in kept
        moves.steps.pop()


def move_into_place(rs: Any, removed: list[str], manifest: dict[str, dict], digests: dict[str, str], *,
                    mark: str, restore: Callable[[], None]) -> list[Path]:
    """Move the staged files of ``rs`` (a :class:`planner.core.reportset.ReportSet`) into place and take
    ``removed`` away, as the module docstring says; on any failure put every file back and restore
    ``manifest``.

    Args:
        removed: the stale reports to take away.
        manifest: the manifest read before the moves (name -> {"sha256": [...], "set": ...}).
        digests: the SHA-256 of each staged file.
        mark: the staging folder's mark file (removed when the folder must be kept).
        restore: writes ``manifest`` back (called when the previous set is put back).

    Returns:
        The final paths of the files moved, in order.

    Raises:
        OutputError: a move failed, or a file was changed or created meanwhile (the previous set put back,
            or where that failed too, or a save made meanwhile is kept in the staging folder, said so).
    """
    moves = _Moves()
    try:
        for i, name in enumerate(rs._names):
            moves.current = (name, "the new report cannot be moved into place")
            _place(rs, i, name, manifest, moves)
        for i, name in enumerate(removed, start=len(rs._names)):
            moves.current = (name, "the stale report cannot be moved away")
            _take_away(rs, i, name, manifest, moves)
        moves.current = None
        # the fallback's kept links: an edit in place after the check lives on in them
        for how, name, kept in moves.steps:
            if how == "replaced" and _sha256(kept) not in manifest.get(name, {}).get("sha256", []):
                raise Changed(name)
        _recheck_new(rs, moves)
    except (OSError, OutputError, Changed) as exc:
        why = exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)
        try:
            _undo(rs, digests, moves)
            restore()
        except (OSError, OutputError) as again:
            _keep(rs, mark)
            raise OutputError(f"{rs.out}: cannot move the reports into place ({why}), and putting the previous "
                              f"set back failed too ({getattr(again, 'strerror', None) or again}); "
                              f"{_where_now(rs, moves)} Check the directory and run again.") from None
        if isinstance(exc, Changed) and exc.what in ("replaced", "late", "linked"):  # in staging now, said as it is
            kind = _late_kind(rs, exc.name)  # (h38a 1, 2: a file renamed over it, or one removed)
            exc.what = "linked" if kind == "late" and exc.what == "linked" else kind
        kept = ""
        if moves.saved or moves.late:  # a save made meanwhile, or a new report another program wrote into: kept
            _keep(rs, mark)
            # the report the line names as kept is not listed again among the new ones (h41a N14)
            named = exc.name if isinstance(exc, Changed) and exc.what in ("late", "linked") else None
            kept = _saved_text(rs, moves, digests, exc.name if isinstance(exc, Changed) else None, named)
        kept += "".join(f" {note}" for note in moves.notes)  # a permission change carried onto the set put back
        back = _put_back(manifest, getattr(rs, "set_name", None))
        if isinstance(exc, Changed) and exc.what == "gone":
            raise OutputError(f"{rs.out / exc.name}: another program removed planner's new report just after planner "
                              f"placed it; {back}: nothing was replaced. Check what writes there and run again."
                              + kept) from None
        if isinstance(exc, Changed) and exc.what == "replaced":
            raise OutputError(f"{rs.out / exc.name}: another program put another file at this name (renamed over "
                              f"planner's new report) just after planner placed it; {back}, and that other file is "
                              f"now in {rs._staging}: nothing was replaced. Check what writes there and run again."
                              + kept) from None
        if isinstance(exc, Changed) and exc.what == "linked":  # same bytes, a second name made by another program
            raise OutputError(f"{rs.out / exc.name}: planner's new report was given a second name (a hard link) by "
                              "another program just after planner placed it, through which that program could "
                              f"change it later; it is kept in {rs._staging}, and {back}: nothing was replaced. "
                              "Check what links files there and run again." + kept) from None
        if isinstance(exc, Changed) and exc.what == "late":
            raise OutputError(f"{rs.out / exc.name}: planner's new report was changed by another program after planner "
                              "checked it (written into at this name just after planner placed it, through a "
                              "descriptor opened on it before, or given another name); it is kept in "
                              f"{rs._staging}, and {back}: nothing was replaced. Check what opens files there "
                              "(fuser -v, lsof) and run again." + kept) from None
        if isinstance(exc, Changed) and exc.created:
            was = "the previous set as it was" if back.startswith("the previous") else back
            raise OutputError(f"{rs.out / exc.name}: was created while planner was writing the reports (by another "
                              f"program); it was left as it is, and {was}: nothing was "
                              "replaced. Move the file away (or give another --out) and run again." + kept) from None
        if isinstance(exc, Changed) and exc.what == "unreadable":
            raise OutputError(f"{rs.out / exc.name}: its permissions were changed while planner was replacing it, so "
                              "that planner cannot read it to check it is the report it wrote; it was put back as it "
                              "is, and the rest of the previous set as it was: nothing was replaced. Give it read "
                              f"permission again (chmod u+r {path_word(rs.out / exc.name)}) and run again." + kept) from None
        if isinstance(exc, Changed) and exc.what == "kind":
            raise OutputError(f"{rs.out / exc.name}: was replaced by a folder, a link or a pipe while planner was "
                              "replacing it; that was put back as it is, and the rest of the previous set as it was: "
                              "nothing was replaced. Move it away and run again." + kept) from None
        if isinstance(exc, Changed) and exc.name in moves.displaced:  # another save took the name first
            raise OutputError(f"{rs.out / exc.name}: was changed while planner was replacing it (an edit saved "
                              "meanwhile), and could not be put back: another file took the name first; the rest "
                              "of the previous set was put back as it was: nothing was replaced." + kept + " Check those "
                              "files, move the one you do not want away, and run again.") from None
        if isinstance(exc, Changed):
            raise OutputError(f"{rs.out / exc.name}: was changed while planner was replacing it (an edit saved "
                              "meanwhile); it was put back with that change, and the rest of the previous set as "
                              "it was: nothing was replaced. Save your edit under another name (or move the "
                              "file away) and run again." + kept) from None
        if isinstance(exc, OSError) and moves.current is not None:  # the file that could not move, named
            name, what = moves.current
            hint = " (an immutable or append-only attribute: lsattr)" if exc.errno == errno.EPERM else ""
            raise OutputError(f"{rs.out / name}: {what} ({why}); {back}. Check "
                              f"that file{hint} and the directory, and run again." + kept) from None
        raise OutputError(f"{rs.out}: cannot move the reports into place ({why}); {back}. Check the "
                          "directory and run again." + kept) from None
    _recheck_gained(rs, removed, moves)
    rs.previous = [step for step in moves.steps if step[2] is not None]  # for finish_removal
    return [rs.out / how_name[1] for how_name in moves.steps if how_name[0] != "taken"]


def _put_back(manifest: dict[str, dict], set_name: str | None = None) -> str:
    """How the folder was left once the moves were undone, for an error line: "the previous set was put back as it
    was" where the folder held an earlier set of this run's scenario (``manifest``, read before the moves, lists
    files of ``set_name``; None: any set counts), else "the new reports were taken out again" with why there was no
    set to put back: the folder held none (h39a m4), or only other scenarios' sets, left as they were (h41a N11)."""
    from planner.core.names import same_spelling

    sets = [entry.get("set") for entry in manifest.values() if isinstance(entry, dict)]
    if manifest and (set_name is None or any(isinstance(s, str) and same_spelling(s, set_name) for s in sets)):
        return "the previous set was put back as it was"
    if manifest:
        return ("the new reports were taken out again (the folder held no earlier set of this scenario; the other "
                "scenarios' reports there were left as they were)")
    return "the new reports were taken out again (the folder held no earlier set)"


def _late_kind(rs: Any, name: str) -> str:
    """What a new report changed after the moves (:func:`_recheck_new`) is, once the set is put back and the file is
    in the staging folder: "gone" (nothing there: removed), "late" (planner's own file, of other bytes) or "replaced"
    (another file: renamed over it, a link)."""
    checked = getattr(rs, "checked", None) or {}
    try:
        st = os.lstat(rs._staging / name)
    except OSError:
        return "gone"
    ident = checked.get(name, (None, None, None))[2]
    return "late" if ident is not None and (st.st_dev, st.st_ino) == tuple(ident) else "replaced"


def _recheck_new(rs: Any, moves: _Moves) -> None:
    """Check each new report again now that it is in place: still the file planner made, of the bytes it wrote and
    no other name (:func:`planner.core.stagerecord.unchanged`; not whether it is open: a file manager may look at
    a new file at once). A write through a descriptor another program opened on it in the staging folder before
    the check (h36a N1) lands here, as an edit in place would: :class:`Changed` (``what="late"``), and the set is
    put back with that file kept in the staging folder, never left in place."""
    checked = getattr(rs, "checked", None) or {}
    for how, name, _ in moves.steps:
        if how == "taken" or name not in checked:
            continue
        try:
            st = os.lstat(rs.out / name)
            replaced = (st.st_dev, st.st_ino) != tuple(checked[name][2])  # another file renamed over it (h37a 10)
            what = "replaced" if replaced else unchanged(rs.out / name, *checked[name], alone=False)
        except OSError:
            what = "changed"
        if what is not None:
            moves.late.add(name)
            raise Changed(name, what=what if what in ("replaced", "linked") else "late")


def _saved_text(rs: Any, moves: _Moves, digests: dict[str, str], changed: str | None,
                named: str | None = None) -> str:
    """Where each file is when undoing the moves met a file saved meanwhile (:attr:`_Moves.saved`: the staging
    folder is kept), for the error line: the saved one and the one planner moved, and planner's new reports left
    in the staging folder. ``changed``: the name whose change stopped the moves (None: another failure);
    ``named``: a new report the line already names as kept in the staging folder, not listed again."""
    said = []
    for name, where in moves.saved:
        if name in moves.displaced:
            what = "the file you changed there" if name == changed else "the previous report planner moved from there"
            said.append(f"Another file took the name {rs.out / name} meanwhile and was left at it; {what} is kept "
                        f"in {where}.")
        else:
            said.append(f"Another file that took the name {name} meanwhile is kept in {where}.")
    new = [n for n in rs._names if n != named and _sha256(rs._staging / n) == digests.get(n)]
    if new:
        said.append(f"Planner's new {', '.join(new)} of this run {'is' if len(new) == 1 else 'are'} in "
                    f"{rs._staging} too.")
    return " " + " ".join(said) + f" Planner removes nothing in {rs._staging}."


def _remember(moves: _Moves, name: str, dst: Path, staged: Path) -> None:
    """Note how planner left the new report it swapped in at ``dst`` (mode, ACL, group) and the inode of the
    previous file now at ``staged``, for :func:`planner.core.access.carry_back` if the set is put back."""
    try:
        st, old = os.lstat(dst), os.lstat(staged)
    except OSError:
        return
    moves.left[name] = ((st.st_mode & KEPT_MODE_BITS, _acl_of(dst), st.st_gid), old.st_ino)


def _recheck_gained(rs: Any, removed: list[str], moves: _Moves) -> None:
    """Narrow each report the set gained to the set's reports as they are now that every move is done
    (:func:`planner.core.access.recheck_gained`: the user may have made the set private meanwhile); a note says so."""
    gained = getattr(rs, "gained", {})
    templates = [t for t in getattr(rs, "_templates", []) if t.name not in removed]
    for how, name, _ in moves.steps:
        if how != "placed" or name not in gained or not templates:
            continue
        try:
            note = recheck_gained(rs.out / name, gained[name], templates)
        except OSError as exc:
            note = (f"{rs.out / name}: planner could not check it against the set's other reports after the moves "
                    f"({exc.strerror or exc}); check who can read it.")
        if note is not None:
            rs.notes.append(note)


def _where_now(rs: Any, moves: _Moves) -> str:
    """Where each report is after an undo that stopped part-way (the steps in ``moves`` not undone), for the
    error line: which names in the folder hold a new report, where the previous file of each is kept; or that
    every file is back and only the manifest was not written back."""
    if not moves.steps:
        return (f"every report in {rs.out} is back as it was (the new ones are in {rs._staging}), but its "
                f"manifest of planner's reports may still list the new ones, so the next run may say the set is mixed.")
    said = []
    for how, name, kept in moves.steps:
        if how == "taken":
            said.append(f"{name} (removed as stale) is in {kept}")
        elif kept is not None:
            said.append(f"{rs.out / name} holds the new report and the previous one is in {kept}")
        else:
            said.append(f"{rs.out / name} holds the new report (there was none before)")
    return "now " + "; ".join(said) + f"; every other report in {rs.out} is as it was."


def _keep(rs: Any, mark: str) -> None:
    """Keep the staging folder: never removed, by this run or a later one (its mark goes)."""
    from planner.core.stagerecord import unlink_same

    rs._keep_staging = True
    ident = getattr(rs, "_mark_id", None)
    try:  # a folder without planner's mark is left whole; only the mark this run made goes
        if ident is None:
            os.unlink(rs._staging / mark)
        else:
            unlink_same(rs._staging / mark, ident)
    except OSError:
        pass


def finish_removal(rs: Any, manifest: dict[str, dict], removed: list[str], mark: str) -> list[str]:
    """Once the set is in place, remove the previous files the moves kept in the staging folder
    (``rs.previous``: the replaced reports that came out of a swap, the stale ones taken away), each only after
    hashing it again, through the descriptor that then unlinks it: a program that held one open (``tee -a``, an
    editor writing in place) may have written to it since the moves hashed it. One that changed is kept: a stale
    report put back at its name (no longer listed as planner's), another left in the staging folder, which is
    then kept; a note says which. A write that lands between that hash and the unlink is found by the file's size
    and modification time, read again through the same descriptor, and its bytes are saved beside it (kept the
    same way). A write made after the unlink goes to a removed file, as after ``rm``: a known limit.

    Args:
        manifest: the manifest read before the moves (the previous files' SHA-256).
        removed: the stale reports taken away.
        mark: the staging folder's mark file (removed when the folder must be kept).

    Returns:
        ``removed`` less the stale reports put back because they changed.
    """
    put_back: list[str] = []
    for how, name, kept in rs.previous:
        assert kept is not None
        what = "the stale report removed" if how == "taken" else "the previous report replaced"
        try:
            left = _unlink_if_unchanged(kept, manifest.get(name, {}).get("sha256", []))
        except Unsaved as exc:
            _keep(rs, mark)
            rs.lost.append(_unsaved_line(rs.out / name, what, kept.parent, exc))
            continue
        except OSError as exc:
            left = kept
            why = f" ({exc.strerror or exc})"
        else:
            why = ""
        if left is None:
            continue
        if how == "taken" and left == kept:
            try:
                renames.place_new(kept, rs.out / name)
                put_back.append(name)
                rs.notes.append(f"Kept {rs.out / name}: it was written to (by a program that held it open) after "
                                "planner took it away as a stale report, so it was put back with that change; planner "
                                "no longer lists it as its report.")
                continue
            except OSError:
                pass
        _keep(rs, mark)
        rs.notes.append(f"Kept {left}: {what} at {rs.out / name} was written to (by a program that held it open) "
                        f"after planner moved it away{why}; planner removes nothing in {left.parent}. Check it and "
                        "remove it yourself.")
    return [n for n in removed if n not in put_back]


def _unsaved_line(at: Path, what: str, folder: Path, exc: Unsaved) -> str:
    """The line for a late write whose bytes could not all be saved (:class:`Unsaved`): what was lost, and where
    the partial copy is in the staging ``folder`` (kept), or that none could be made."""
    if exc.copy is None:
        where = f"no copy could be made in {folder}"  # never a path that does not exist
    elif exc.saved == 0:
        where = f"{exc.copy} is empty"
    else:
        where = f"only {exc.saved} of its {exc.size} bytes are in {exc.copy}, a partial copy"
    return (f"{at}: {what} there was written to (by a program that held it open) after planner moved it away, "
            f"and planner could not save its bytes ({exc.why}): {where}; the rest of that report, with the write, "
            f"is lost. Planner removes nothing in {folder}.")


class Unsaved(Exception):
    """The bytes of a previous report written to after planner unlinked it could not all be saved
    (:func:`_unlink_if_unchanged`): a file-size limit (``ulimit -f``: the write comes back short), a full disk, a
    failed ``fsync``. ``copy``: the partial copy left (None: none could be made); ``saved``: the bytes in it;
    ``size``: the file's size in bytes read through the descriptor it was copied from; ``why``: the error."""

    def __init__(self, copy: Path | None, saved: int, size: int, why: str) -> None:
        super().__init__(why)
        self.copy, self.saved, self.size, self.why = copy, saved, size, why


def _unlink_if_unchanged(path: Path, expected: list[str]) -> Path | None:
    """Unlink ``path`` if its SHA-256 (read through one descriptor) is still one of ``expected``: None. Else the
    path of what is kept: ``path`` itself (changed before the unlink), or a copy of its bytes saved beside it
    (``<path>.written``: a write that landed between the hash and the unlink, seen by the size and
    modification time read again through the same descriptor). A file already gone: None.

    Raises:
        OSError: the file cannot be read or unlinked (it is still at ``path``).
        Unsaved: it was unlinked, and its copy is not whole: the bytes written (each write checked for a short
            count), then ``fsync`` and ``close``, must all succeed and add up to the size ``fstat`` gives through
            the descriptor copied from.
    """
    import hashlib

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        if digest.hexdigest() not in expected:
            return path
        os.unlink(path)
        now = os.fstat(fd)
        if (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
            return None
        copy = path.with_name(path.name[:200] + ".written")
        try:
            out = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            raise Unsaved(None, 0, now.st_size, exc.strerror or str(exc)) from None
        _copy_whole(fd, out, copy)
        return copy
    finally:
        os.close(fd)


def _copy_whole(fd: int, out: int, copy: Path) -> int:
    """Copy every byte of ``fd`` into ``out`` (closed here), checking each write's count, then ``fsync``; the
    bytes copied, which equal ``fstat(fd).st_size`` read after the copy.

    Raises:
        Unsaved: a write failed or came back short, ``fsync`` or ``close`` failed, or the count is not the size.
    """
    saved, why = 0, ""
    try:
        while chunk := os.pread(fd, 1 << 20, saved):
            view = memoryview(chunk)
            while view:
                n = os.write(out, view)  # short under a file-size limit (Python ignores SIGXFSZ): written again
                if n <= 0:
                    raise OSError(errno.EIO, "a write saved nothing")
                view, saved = view[n:], saved + n
        os.fsync(out)
    except OSError as exc:
        why = exc.strerror or str(exc)
    finally:
        try:
            os.close(out)
        except OSError as exc:
            why = why or exc.strerror or str(exc)
    try:
        size = os.fstat(fd).st_size
    except OSError:
        size = saved
    if not why and saved != size:
        why = "the file changed size while it was copied"
    if why:
        raise Unsaved(copy, saved, max(size, saved), why)
    return saved
