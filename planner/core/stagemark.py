"""A report set's staging mark (``OUT/.planner-staging-XXXXXXXX/.planner-staging``), and the cleanup of a staging
folder a killed run left, which goes by it (:class:`planner.core.reportset.ReportSet`).

The mark is one line ``planner staging folder 1``, then one JSON value a line, each appended (and the file closed,
so flushed) before the step it records:

* ``"NAME"``: a name the run writes or keeps there (a report, a previous report ``<i>.old``), listed when the run
  first asks for it;
* ``{"folder": [DEV, INO]}``: the device and inode of the folder the run made, the line after the header: a
  write into the folder goes through its descriptor only while the mark there names that folder (h34a N2);
* ``{"encoding": ENC}``: the file-system encoding of a run not under UTF-8;
* ``{"tmp": ".NAME.XXXXXXXX.tmp"}``: the exact temporary file :func:`planner.core.atomic.write_bytes` is about to
  create there (recorded before it is created: :func:`record_temp`);
* ``{"sha256": {NAME: HEX}, "bytes": {NAME: SIZE}}``: a staged report, complete and synced, recorded before it is
  renamed to its name (:func:`record_file`), so that at any instant every complete staged file's hash is there;
* ``{"sha256": {NAME: HEX, ...}}`` (no ``"bytes"``): every staged report, written just before the moves
  (``ReportSet._record_digests``; an earlier release's mark has only this one).

A later run removes a file there only when planner can tell it wrote it (:func:`clear_staging`): a listed name
whose SHA-256 the mark or the manifest records, a temporary file whose exact name the mark records, a previous
report ``<i>.old`` whose SHA-256 the manifest records. Anything else (a user's file saved under a listed name, a
report edited there, a temporary the mark does not name) is left, and said. A mark whose entries are not plain
file names ('/', '..': a hand-made one), or not names planner gives reports (:func:`report_name`: ``notes.txt``), or
that others can write (it, or its folder without the sticky bit: the manifest's rule), is not planner's: its folder
is left whole.

Sources: Linux ``open(2)`` O_APPEND (each write goes to the end); SIGKILL keeps what was written before it
(the page cache), so a killed run's mark holds every line written before the kill.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from planner.core.atomic import own_file_sha256
from planner.core.stagerecord import FOLDER_KEY, STAGING_MARK, STAGING_PREFIX
from planner.core.errors import OutputError
from planner.core.manifest import (DEFAULT_NAME_ENCODING, MANIFEST, MANIFEST_MAX_BYTES, fs_encoding, name_encoding,
                                   read_manifest)

#: The first line of a staging folder's mark; the entries follow, one JSON value a line.
MARK_HEADER = b"planner staging folder 1\n"
#: What a staging folder without that mark (an empty one) is said to hold.
NO_MARK = "no planner mark"
#: What an empty staging folder without a mark, made as mkdtemp makes planner's (mode 0700, eight random
#: characters), is said to hold: a run stopped just after making its folder, or just after removing its mark,
#: leaves one, and so can a user; planner removes no folder it cannot tell it made (h35a m12).
EMPTY = "no planner mark (empty)"
#: What :func:`clear_staging` returns (with the reason after it) when it emptied a folder that would not go.
NOT_REMOVED = "(could not be removed: "
#: A temporary file beside a staged report: '.' + name + '.' + 8 hex digits + '.tmp' (planner.core.atomic).
TMP = re.compile(r"\.(?P<stem>.+)\.[0-9a-f]{8}\.tmp", re.S)
#: A previous report the moves kept in the staging folder (planner.core.moves: '<i>.old').
OLD = re.compile(r"[0-9]+\.old")


def own_stream(path: str | Path) -> bool:
    """Whether ``path`` is this process's standard output or standard error (file descriptor 1 or 2, compared by
    device and inode): a redirection onto a name like planner's bookkeeping (``>> OUT/..planner-reports.json.
    XXXXXXXX.tmp``), which the cleanup of a dead run must never take for a leftover and remove."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return False
    for fd in (1, 2):
        try:
            s = os.fstat(fd)
        except OSError:
            continue
        if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def made_by_mkdtemp(folder: Path) -> bool:
    """Whether ``folder`` is as ``tempfile.mkdtemp`` makes planner's staging folders: this user's, mode 0o700,
    the prefix and 8 random characters (tempfile's _RandomNameSequence: a-z, 0-9 and '_'); a folder the user
    made by hand under such a name is not removed."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
            and re.fullmatch(re.escape(STAGING_PREFIX) + r"[a-z0-9_]{8}", folder.name) is not None)


def named_here(names: set[str], enc: str) -> set[str]:
    """``names``, written under the file-system encoding ``enc``, as this run names those files: their bytes in
    ``enc`` decoded with this run's file-system encoding (``os.fsdecode``, surrogate escapes for bytes it cannot
    decode)."""
    if enc == fs_encoding():
        return set(names)
    return {os.fsdecode(n.encode(enc, "surrogateescape")) for n in names}


#: The suffixes of the names planner gives reports: '<stem>.xlsx/.csv/.json/.md' (planner.api.plans), and
#: '<stem>-compare.json/.xlsx' (planner.api.comparisons) among them.
REPORT_SUFFIXES = ("xlsx", "csv", "json", "md")
#: The one other name a report of planner's has: import-skypilot's (planner.cli.catalog).
CLOUD_REPORT = "cloud.yaml"


def report_name(name: str) -> bool:
    """Whether ``name`` is one planner gives a report in a staging folder: '<stem>.<format>' with ``<stem>`` as
    :func:`planner.core.names.safe_stem` makes one (the '-compare' sets' too), ``cloud.yaml``, or a previous report
    its moves keep (``<i>.old``). A hand-made mark that lists any other name (``notes.txt``) is not planner's
    (h33a N2)."""
    from planner.core.errors import PlannerError
    from planner.core.names import safe_stem

    if name == CLOUD_REPORT or OLD.fullmatch(name):
        return True
    stem, dot, ext = name.rpartition(".")
    if not dot or ext not in REPORT_SUFFIXES:
        return False
    try:
        return safe_stem(stem, None, check_reserved=False) == stem
    except PlannerError:
        return False


def temp_of(name: str, reports: Iterable[str]) -> bool:
    """Whether ``name`` is a temporary file planner.core.atomic makes for one of ``reports``
    ('.NAME.XXXXXXXX.tmp', NAME cut to fit: :data:`TMP`)."""
    m = TMP.fullmatch(name)
    return m is not None and any(r.startswith(m.group("stem")) for r in reports)


class _NotAName(ValueError):
    """A mark entry that is not a plain file name (a path, '..'): the mark is not one planner wrote."""


def _plain(name: object) -> str:
    """``name`` when it is a plain file name in the folder; raises :class:`_NotAName` (a path: '/', '.', '..',
    a NUL), TypeError (not a string)."""
    if not isinstance(name, str):
        raise TypeError
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise _NotAName(name)
    return name


def _read_mark(data: bytes) -> tuple[set[str], set[str], set[str], bool, str]:
    """The mark's listed names, recorded temporaries, recorded SHA-256s, whether its moves began (a line of every
    staged report's hash) and the names' encoding. A mark without the header lists nothing.

    Raises:
        _NotAName: an entry names a path, or a temporary that is no planner temporary of a listed report; ValueError, TypeError, KeyError, AttributeError, RecursionError: an entry
            planner does not write (the mark is not planner's).
    """
    lines = data.split(b"\n")
    items = [json.loads(x) for x in lines[1:] if x.strip()] if lines[0] + b"\n" == MARK_HEADER else []
    listed = {_plain(x) for x in items if isinstance(x, str)}
    for name in sorted(listed):  # only the names planner gives reports (h33a N2: "notes.txt" is never one)
        if not report_name(name):
            raise _NotAName(name, "is no name planner gives a report")
    tmps: set[str] = set()
    hashes: set[str] = set()
    moved = False
    enc: str | None = DEFAULT_NAME_ENCODING
    for x in items:
        if isinstance(x, dict) and set(x) == {"encoding"}:  # the file-system encoding of a run not under UTF-8
            enc = name_encoding(x["encoding"], listed)
            if enc is None:
                raise ValueError
        elif isinstance(x, dict) and set(x) == {FOLDER_KEY}:  # the folder the run made (h34a N2): nothing listed
            continue
        elif isinstance(x, dict) and set(x) == {"tmp"}:
            # only a name as planner.core.atomic makes one for a listed report ('.NAME.XXXXXXXX.tmp', NAME cut to
            # fit), never any other name a hand-made mark lists (h32a N1: {"tmp": "my-notes.txt"})
            tmp = _plain(x["tmp"])
            if not temp_of(tmp, listed):
                raise _NotAName(tmp, "is no temporary file planner makes for a report the mark lists")
            tmps.add(tmp)
        elif isinstance(x, dict):
            hashes |= {h for h in x["sha256"].values() if isinstance(h, str)}
            moved = moved or "bytes" not in x  # the line ReportSet._record_digests writes before the moves
        elif not isinstance(x, str):
            raise TypeError
    return listed, tmps, hashes, moved, enc


def _other_folder(folder: Path, data: bytes) -> str | None:
    """Why a mark (its bytes ``data``) is not the mark of ``folder``: its folder line (the device and inode of the
    folder the run made, h34a N2) names another folder, as in a copy of a staging folder ('cp -a'), whose files
    no planner run made (h36a 6); None when it names this one, or has no such line (an earlier release's)."""
    lines = data.split(b"\n")
    if len(lines) < 2 or lines[0] + b"\n" != MARK_HEADER:
        return None
    try:
        entry = json.loads(lines[1])
        named = tuple(entry[FOLDER_KEY]) if isinstance(entry, dict) and set(entry) == {FOLDER_KEY} else None
        st = os.lstat(folder)
    except (ValueError, TypeError, KeyError, OSError, RecursionError):
        return None
    if named is None or named == (st.st_dev, st.st_ino):
        return None
    return "it names another folder than this one (a copy of a staging folder?), so planner does not go by it"


def _shared(folder: Path, mark: Path, st: os.stat_result) -> str | None:
    """Why the mark ``mark`` (of stat ``st``) of ``folder`` is not trusted though it is this user's: it, or its
    folder (without the sticky bit), can be written by others, as the manifest is judged
    (:func:`planner.core.sharing.writable_by_others`, h33a m2); None when neither can."""
    from planner.core.sharing import writable_by_others

    if writable_by_others(st, mark):
        return "others can write it, so planner does not go by it"
    try:
        fst = os.lstat(folder)
    except OSError:
        return None
    if writable_by_others(fst, folder) and not fst.st_mode & stat.S_ISVTX:
        return "others can write its folder, so planner does not go by it"
    return None


def clear_staging(folder: Path, hashes: set[str] | frozenset[str] = frozenset(),
                  found: dict | None = None) -> list[str]:
    """Remove from a dead staging folder the files planner can tell it wrote there (module docstring: regular files
    of this user), then the mark and the folder if nothing else is left. Returns the names left, each with why
    where it is not plain (sorted); [] when the folder is gone. A folder without planner's mark, or whose mark is
    not this user's, not one planner wrote, or writable by others (it or the folder: :func:`_shared`), is left
    whole. ``hashes``: every SHA-256 the output folder's manifest lists (any name): a previous report
    (``<i>.old``) is removed only when its hash is one of them. ``found``, if given, gets ``"temps"`` (how many
    of the files removed were temporaries, not reports) and ``"moved"`` (whether the stopped run's mark says its
    moves began: only then can the reports in the output folder mix two runs' files), h33a m3."""
    from planner.core.names import cut_utf8

    mark = folder / STAGING_MARK
    bad = None
    try:
        st = os.lstat(mark)
        if own_stream(mark):  # this run's standard output or error, made by the shell: not a mark of planner's
            return [STAGING_MARK]
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > MANIFEST_MAX_BYTES:
            raise OSError
        if (shared := _shared(folder, mark, st)) is not None:
            raise _NotAName(None, shared)
        data = mark.read_bytes()
        if (other := _other_folder(folder, data)) is not None:  # a copy ('cp -a') of a staging folder (h36a 6)
            raise _NotAName(None, other)
        listed, tmps, staged, moved, enc = _read_mark(data)
    except _NotAName as exc:
        listed, bad = None, exc.args[0]
        why = exc.args[1] if len(exc.args) > 1 else "is not a file name in that folder"
    except (OSError, ValueError, TypeError, RecursionError, KeyError, AttributeError):
        listed, why = None, None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ["(unreadable)"]
    if listed is None:
        if not entries:  # empty: planner cannot tell it made it, even when made as mkdtemp makes one (h35a m12)
            return [EMPTY if made_by_mkdtemp(folder) else NO_MARK]
        names = sorted(e.name for e in entries if why is None or e.name != STAGING_MARK)
        if bad is not None:  # a hand-made mark that names a path: nothing in that folder is judged by it
            names.insert(0, f"{STAGING_MARK} (not a mark planner wrote: its entry {json.dumps(bad)} {why})")
        elif why is not None:  # a mark others can write (h33a m2)
            names.insert(0, f"{STAGING_MARK} ({why})")
        return names
    # the names as this run reads them: the bytes the stopped run wrote, under its encoding, decoded with this
    # run's (a UTF-8 run's '计划.md' is 'è®¡å\x88\x92.md' under Latin-1), so every locale gives one verdict
    stems = named_here({cut_utf8(str(n), 200) for n in listed}, enc)
    listed, tmps = named_here(listed, enc), named_here(tmps, enc)
    left = []
    if found is not None:
        # its moves began: the line before them, or a previous report '<i>.old' listed (made only by the moves)
        found.update(temps=0, moved=moved or any(OLD.fullmatch(n) for n in listed))
    for e in entries:
        if e.name == STAGING_MARK:
            continue
        why = _why_kept(e, folder, listed, tmps, stems, staged, hashes, moved)
        if why is None:
            try:
                if e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_uid == os.geteuid():
                    os.unlink(e.path)
                    if found is not None and e.name in tmps:  # a temporary, not a report (h33a m3)
                        found["temps"] += 1
                    continue
            except OSError:
                pass
            why = e.name
        left.append(why)
    if not left:
        try:
            os.unlink(mark)
            os.rmdir(folder)
        except OSError as exc:
            return [f"{NOT_REMOVED}{exc.strerror or exc})"]
    return sorted(left)


def _why_kept(e: os.DirEntry, folder: Path, listed: set[str], tmps: set[str], stems: set[str], staged: set[str],
              hashes: set[str] | frozenset[str], moved: bool) -> str | None:
    """None when the entry ``e`` of a dead staging folder is a file planner can tell it wrote (to remove, if it is
    a regular file of this user); else what is said of it (its name, and why where it is not plain)."""
    if own_stream(e.path):
        return e.name
    if e.name in tmps:  # the exact temporary name recorded before it was created (random: never a user's)
        return None
    tmp = TMP.fullmatch(e.name)
    if e.name not in listed:
        if tmp is not None and tmp.group("stem") in stems:
            # the note adds "which planner cannot tell it wrote" (h33a m5: not said twice)
            return f"{e.name} (an unfinished write whose name the run's staging mark does not record)"
        return e.name
    digest = own_file_sha256(Path(e.path))
    if digest is None:  # not a regular file of this user: never planner's
        return e.name
    if OLD.fullmatch(e.name):
        return None if digest in hashes else (
            f"{e.name} (a previous report that no hash in {MANIFEST} matches: it may have been written to after "
            "planner moved it away)")
    if digest in staged or digest in hashes:
        return None
    if moved:  # the moves began: a file under a report's name may be one the user saved that they swapped in
        return (f"{e.name} (not a file planner wrote: no hash in {MANIFEST} or in the run's staging mark matches, "
                f"so it may be yours, saved at {folder.parent / e.name} while that run moved its reports)")
    return (f"{e.name} (not a file planner wrote: no hash in {MANIFEST} or in the run's staging mark matches, so it "
            "may be yours)")


#: The most lines a run says about the leftovers of earlier runs in --out of one kind (left for the user to check;
#: removed): past it, one line counts the rest.
MAX_LEFTOVER_NOTES = 10


def capped_leftovers(notes: list[str], out: Path) -> list[str]:
    """A run's notes about the leftovers of earlier runs in ``out`` (staging folders, temporary manifests), as said:
    all of them up to :data:`MAX_LEFTOVER_NOTES`; past it, what was left for the user to check first ('Left ...',
    'Kept ...'), then what planner removed, each kind past its room counted in one line in name order, so that a
    folder left with the user's file in it is never hidden among removals (h33a m4: 3,000 leftover folders were 6,000
    lines on every run; h34a m4)."""
    if len(notes) <= MAX_LEFTOVER_NOTES:
        return notes
    left = [n for n in notes if not n.startswith("Removed ")]
    gone = [n for n in notes if n.startswith("Removed ")]
    said: list[str] = []
    for lines, what, room in ((left, "left as they are (check them)", MAX_LEFTOVER_NOTES),
                              (gone, "removed", max(MAX_LEFTOVER_NOTES - len(left), 1))):
        said.extend(lines[:room])
        rest = lines[room:]
        if rest:
            said.append(f"... and {len(rest):,} more of {out}'s leftovers of earlier runs {what}, from "
                        f"{_leftover_name(rest[0])} to {_leftover_name(rest[-1])} (in name order).")
    return said


def _leftover_name(note: str) -> str:
    """The file or folder a leftover note names: its path's last part (after 'Removed ', 'Left ', 'Kept ')."""
    path = note.split(" ", 1)[-1].split(":", 1)[0].split(",", 1)[0]
    return os.path.basename(path.rstrip("/")) or path


def dead_staging_note(out: Path, folder: Path, held: int, left: list[str], *, temps: int = 0,
                      moved: bool = True) -> str:
    """What clearing a dead run's staging ``folder`` did, in one line: it held ``held`` files; ``left``: those
    kept (not the run's own); ``temps``: how many of those removed were temporaries (half-written, said as such,
    never counted as reports: h33a m3); ``moved``: whether that run's mark says its moves began. Only such a run
    may have left a set that mixes new and older reports: the manifest names them (:func:`mixed_names`); without
    one, the names cannot be told."""
    gone = [n for n in left if n.startswith(NOT_REMOVED)]  # emptied, but the folder itself would not go
    left = [n for n in left if not n.startswith(NOT_REMOVED)]
    removed = held - len(left) - temps
    could_mix = removed > 0 and moved
    mixed = mixed_names(out) if could_mix else []  # the manifest read only when it matters
    if could_mix and mixed:
        why = (f"the reports of that run in {out} ({', '.join(mixed[:3])}{', ...' if len(mixed) > 3 else ''}) may "
               "mix its new files with older ones; run it again to rewrite them whole")
    elif could_mix and not (out / MANIFEST).is_file():
        why = (f"{out} has no {MANIFEST} to tell whether that run was stopped during its moves, so its reports "
               "there may mix new files with older ones; run it again to rewrite them whole")
    else:
        why = ""
    temp_text = f"{temps} unfinished temporary file(s)"
    said = (" and ".join(([f"{removed} file(s) of its reports"] if removed > 0 or not temps else [])
                         + ([temp_text] if temps else [])) + (f": {why}" if why else ""))
    what_went = " and ".join(([f"the {removed} file(s) of reports"] if removed > 0 else [])
                             + ([f"{'the ' if removed <= 0 else ''}{temp_text}"] if temps else []))
    removed += temps
    run = "a planner run stopped during its moves" if mixed else "a stopped planner run"
    if not left and gone:
        said = (f" Planner removed {what_went} that {run} left there" +
                (f"; {why}" if why else "") + ".") if removed > 0 else ""
        return (f"Left {folder}: it could not be removed ({gone[0][len(NOT_REMOVED):-1]}); check it and remove it "
                f"yourself.{said}")
    if not left and held <= 0:  # its mark alone: a run stopped before it staged anything (h36a 7: unsaid)
        return f"Removed {folder}, which {run} left holding only its mark."
    if not left:
        return f"Removed {folder}, which {run} left, with {said}."
    shown = ", ".join(left[:3]) + (", ..." if len(left) > 3 else "")
    removed_from = (f" planner removed {what_went} that {run} left there" +
                    (f"; {why}" if why else "") + ".") if removed > 0 else ""
    what = {(NO_MARK,): "no planner mark, so planner cannot tell it made it",
            (EMPTY,): "nothing, not even planner's mark, so planner cannot tell it made it (a run stopped just "
                      "after making its folder, or just after removing its mark, leaves one so)"}.get(
        tuple(left), f"{shown}, which planner cannot tell it wrote")  # h27a m4, h35a m12
    return f"Left {folder}: it holds {what}; check it and remove it yourself.{removed_from.replace(' planner', ' Planner', 1)}"


def mixed_names(out: Path) -> list[str]:
    """The reports whose manifest entry still lists two hashes (the new and the previous report): the
    manifest a run writes before its moves, never replaced by the one after them, so the run was stopped
    during its moves and each such name may hold either file; [] when the manifest is the one after (or
    none, or not planner's)."""
    try:
        manifest = read_manifest(out)
    except OutputError:
        return []
    return sorted(n for n, e in manifest.items() if len(e.get("sha256") or []) > 1 and os.path.lexists(out / n))
