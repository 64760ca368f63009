"""Whether a report set may go into an output folder, checked before any work and without creating
anything (:func:`check_destinations`), and the per-name checks :class:`planner.core.reportset.ReportSet`
repeats under the folder's lock: a file in the way that planner did not write, another set's report, an
input of the run, a read-only report, a name that clashes with another in case or drawing.

Sources: as :mod:`planner.core.reportset` (the manifest, by what planner wrote rather than by name); UTS #39
"Unicode Security Mechanisms" section 4 (confusable skeletons) for names drawn alike.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from planner.core.atomic import (_path_max_bytes, loop_line, not_a_folder, own_file_sha256, path_too_long,
                                  refuse_read_only)
from planner.core.denied import denied_problem
from planner.core.errors import DestinationError, OutputError
from planner.core.infile import what_it_is  # noqa: F401  (re-exported: it was defined here)
from planner.core.manifest import MANIFEST, fs_encoding, read_manifest
from planner.core.protected import refuse_protected
from planner.core.outpath import refuse_bookkeeping_name, refuse_gone_cwd, refuse_owner_umask, refuse_unwritable_out
from planner.core.pseudofs import refuse_pseudo_fs
from planner.core.sharing import OWN_WHY, refuse_shared_folder
from planner.core.names import clash_key, lookalike_note, path_word, same_spelling

#: The most UTF-8 bytes one file name may have (Linux NAME_MAX; most file systems allow 255).
NAME_MAX_BYTES = 255

_SHARED_HINT = ("Give a folder only you can write (chmod go-w), set its sticky bit (chmod +t) so that no one "
                "else can rename your files in it, or give another --out.")
#: The hint where that folder is another user's (planner.core.sharing._fitting, h28a m3).
_OWN_HINT = f"Give --out a folder of your own instead: {OWN_WHY}"



def check_destinations(out_dir: Path, names: list[str] | tuple[str, ...], *, set_name: str = "reports",
                       writes: Iterable[str] | None = None, inputs: Iterable[str | Path] = ()) -> None:
    """Refuse, before any work and without creating anything, a set that could not go into
    ``out_dir``: ``out_dir`` a file, the shipped catalog or the package, a name over 255 bytes, a
    read-only report or a directory where a report would go, a file planner did not write (or
    another set's, or changed since) or an input of the run where a report would be written, a folder of a
    pseudo file system (/proc, /sys: planner.core.pseudofs).

    Args:
        names: every name of the set (written or removed as stale).
        writes: the names that will be written (default: all of ``names``); the others are only
            removed when they are this set's.
        set_name, inputs: as for :class:`ReportSet`.

    Raises:
        OutputError: as :meth:`ReportSet.commit` and :func:`planner.core.atomic.ensure_dir`.
    """
    out = Path(out_dir)
    refuse_gone_cwd(out)
    refuse_protected(out)
    refuse_pseudo_fs(out)  # /proc/self: 'No such file or directory' at staging otherwise
    refuse_bookkeeping_name(out)
    refuse_owner_umask()
    inputs = tuple(inputs)
    written = set(names if writes is None else writes)
    try:
        st = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # said as the loop it is, as an input loop is (h26a m4)
            raise DestinationError(loop_line(out)) from None
        raise DestinationError(f"{out}: cannot create the output directory ({exc.strerror or exc}). "
                          "Give --out a directory that can be created and written.") from None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise not_a_folder(out, st.st_mode)
    if st is None:
        _new_folder_clash(out)
    if st is not None:
        refuse_shared_folder(out, "the output folder", _SHARED_HINT, st=st, own=_OWN_HINT)
        denied = denied_problem(out, "--out", lead=False)
        if denied:  # before the manifest is read, which would name a file that cannot be reached (h21a m1)
            raise DestinationError(denied)
    refuse_unwritable_out(out)  # a read-only or unwritable folder, a default ACL taking the owner's write (h24a)
    manifest = read_manifest(out) if st is not None else {}
    for name in sorted(names, key=lambda n: n not in written):  # a name this run writes is the one named first
        check_name(name)
        if st is None:
            continue
        if name in written:
            _owned_or_refused(out, name, manifest, set_name, inputs)
            _replaceable(out / name)
        elif _lexists(out / name):
            _not_another_sets(out, name, manifest, set_name)
            if _owns(out, name, manifest, set_name) and not _made_read_only(out / name):  # read-only: kept, said
                _replaceable(out / name)


def check_name(name: str) -> None:
    """Refuse a report name that is not one plain file name of at most 255 UTF-8 bytes.

    Raises:
        OutputError: a separator, '.' or '..', or too long.
    """
    if not name or "/" in name or "\0" in name or name in (".", "..") or os.sep in name:
        raise DestinationError(f"{name!r} is not a file name a report can have.")
    try:
        os.fsencode(name)
    except UnicodeEncodeError as exc:  # LC_ALL=C with PYTHONUTF8=0: the file system's encoding is ASCII
        raise DestinationError(f"the report name {name!a} cannot be written in the file system's encoding "
                               f"({sys.getfilesystemencoding()}): {exc.object[exc.start:exc.end]!a}. Set "
                               "LC_ALL=C.UTF-8 (or another UTF-8 locale), or name the scenario in ASCII.") from None
    size = len(name.encode("utf-8", errors="surrogateescape"))
    if size > NAME_MAX_BYTES:
        raise DestinationError(f"the report name {name[:40]!r}... is {size} bytes, more than the {NAME_MAX_BYTES} a "
                          "file name may have. Give the scenario a shorter name.")


def _made_read_only(path: Path) -> bool:
    """Whether ``path`` is a regular file without any write permission bit (made read-only), links not followed."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and not st.st_mode & 0o222


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
        if exc.errno == errno.ENAMETOOLONG and len(os.fsencode(str(path))) >= _path_max_bytes(path.parent):
            # the report's path whole over PATH_MAX (a long scenario name), not one name over 255 bytes (h28a m5)
            raise path_too_long(path, exc, path.parent) from None
        raise OutputError(f"{path}: cannot be written ({exc.strerror or exc}).") from None
    if stat.S_ISDIR(st.st_mode):
        raise DestinationError(f"{path}: is a directory, where a report would go. Move it away or give another --out.")
    refuse_read_only(path, st)


# ----- what planner wrote ---------------------------------------------------------------------

def _owner(out: Path, name: str, manifest: dict[str, dict]) -> str | None:
    """The set that wrote ``out/name``, as it is now; None when planner did not write it or it changed."""
    entry = manifest.get(name)
    if entry is None:
        return None
    sizes = entry.get("bytes")  # a size none of those planner wrote: changed, known without reading it
    if isinstance(sizes, list) and len(sizes) == len(entry["sha256"]) and all(type(b) is int for b in sizes):
        try:
            if os.lstat(out / name).st_size not in sizes:
                return None
        except OSError:
            return None
    digest = own_file_sha256(out / name)  # another user's file, or a link, is never planner's
    return entry["set"] if digest is not None and digest in entry["sha256"] else None


def written_set(path: Path) -> str | None:
    """The report set ('plan qlora-7b-12gb', 'import-skypilot') that wrote the file ``path``, as its folder's
    manifest lists it and unchanged since (its SHA-256 one the manifest holds); None when planner did not write
    it, it changed, or the folder has no manifest planner trusts (planner.core.manifest.read_manifest)."""
    path = Path(path)
    try:
        manifest = read_manifest(path.parent)
    except (DestinationError, OSError):
        return None
    return _owner(path.parent, path.name, manifest)


def _owns(out: Path, name: str, manifest: dict[str, dict], set_name: str) -> bool:
    return _same_set(_owner(out, name, manifest), set_name)


def _same_set(owner: str | None, set_name: str) -> bool:
    """Whether a manifest's set ``owner`` is the set ``set_name`` ('plan café'): the same text up to canonical
    equivalence (planner.core.names.same_spelling: a scenario named 'café' composed and decomposed is one
    scenario, whose second run replaces the first's reports). Names equal only in Unicode NFKC ('plan ﬁne' and
    'plan fine', 'plan Ⅻ' and 'plan XII') give one file name but are two sets: the second is refused as any other
    set writing the same file is (h17b #5e)."""
    return owner is not None and same_spelling(owner, set_name)


def _is_input(path: Path, inputs: Iterable[str | Path]) -> bool:
    for given in inputs:
        try:
            if os.path.samefile(path, given):
                return True
        except OSError:
            continue
    return False


def refuse_input(path: Path, inputs: Iterable[str | Path], *, hint: str = "Give another --out.") -> None:
    """Refuse ``path`` as an output when it is one of the run's ``inputs`` (the same file).

    Raises:
        OutputError: naming the file.
    """
    if _lexists(Path(path)) and _is_input(Path(path), inputs):
        raise DestinationError(f"{path}: is an input of this run, and a report never replaces its input. {hint}")
    if not _lexists(Path(path)) and _names_input(Path(path), inputs):
        # a name the run reads when it is there (an overlay's SOURCES.md): a report there would become an input
        raise DestinationError(f"{path}: is a file this run would read as an input (it is not there now), so a "
                               f"report is never written there. {hint}")


def _names_input(path: Path, inputs: Iterable[str | Path]) -> bool:
    """Whether ``path`` (absent) names the same place as one of ``inputs`` (also absent): its folder the same
    folder and its name the same name."""
    try:
        here = (os.path.realpath(path.parent), path.name)
        return any((os.path.realpath(Path(g).parent), Path(g).name) == here for g in inputs)
    except (OSError, ValueError):
        return False


def _owned_or_refused(out: Path, name: str, manifest: dict[str, dict], set_name: str,
                      inputs: Iterable[str | Path]) -> None:
    """Refuse to write ``out/name`` when a file is there that this report set did not write.

    Raises:
        OutputError: naming the file and what to do.
    """
    path = out / name
    refuse_input(path, inputs)  # also a name the run reads when it is there
    _case_clash(out, name, manifest, set_name)
    _foreign_case_clash(out, name, manifest)
    if not _lexists(path) or _same_set(_owner(out, name, manifest), set_name):
        _drawn_alike(out, manifest, set_name)
        return
    _not_another_sets(out, name, manifest, set_name)
    why = "changed since planner wrote it" if name in manifest else "not a file planner wrote there"
    hint = ""
    try:
        st = os.lstat(path)
        if st.st_uid != os.geteuid():
            why = "another user's file"
        elif not stat.S_ISREG(st.st_mode):  # a link (even to a copy), a folder, a pipe: planner writes none
            why = f"not a regular file ({what_it_is(st.st_mode)}), which planner never writes"
        elif name in manifest and not os.access(path, os.R_OK):
            why = "a file planner cannot read (no read permission), so it cannot tell it is the report it wrote"
            hint = f" Give it read permission again (chmod u+r {path_word(path)}),"
    except OSError:
        pass
    listed = (f" (see {out / MANIFEST})" if (out / MANIFEST).is_file() else
              f" ({out} has no {MANIFEST}, the list of files planner wrote there)")
    raise DestinationError(f"{path}: is {why}{listed}, and planner never replaces or removes such a "
                      f"file.{hint or ''} {'move' if hint else 'Move'} it away or give another --out.")


def _not_another_sets(out: Path, name: str, manifest: dict[str, dict], set_name: str) -> None:
    """Refuse a set whose file ``name`` is already a report of another set (another scenario, or another
    command, whose name gives the same file name): neither replaced nor removed.

    Raises:
        OutputError: naming both sets.
    """
    owner = _owner(out, name, manifest)
    if owner is not None and not _same_set(owner, set_name):
        raise DestinationError(f"{out / name}: is a report of {owner!r}, and {set_name!r} would write a file of the same "
                          f"name{_differ(owner, set_name)}; planner never replaces or removes another set's report. "
                          "Give another --out, or give the scenario another name.")


def _case_clash(out: Path, name: str, manifest: dict[str, dict], set_name: str) -> None:
    """Refuse (OutputError) to write ``out/name`` beside another set's report whose name differs from it only in
    case ('chat.json', 'Chat.json'): a case-insensitive file system (macOS, Windows, SMB shares, exFAT) stores the
    two as one file, so the folder, copied or synced there, would lose one (planner.core.names.clash_key)."""
    for other in manifest:
        owner = _owner(out, other, manifest) if other != name and clash_key(other) == clash_key(name) else None
        if owner is None or _same_set(owner, set_name):
            continue
        raise DestinationError(f"{out / name}: would sit beside {other!r}, a report of {owner!r}, and the two names "
                               "differ only in upper and lower case, which a case-insensitive file system (macOS, "
                               "Windows) stores as one file. Give another --out, or give the scenario another name.")


def _one_file_key(name: str) -> str:
    """``name`` as a case-insensitive, normalising file system (APFS, HFS+, NTFS, exFAT, SMB shares) stores it:
    Unicode NFC (composed and decomposed spellings one name) and default case folding."""
    import unicodedata

    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _foreign_case_clash(out: Path, name: str, manifest: dict[str, dict]) -> None:
    """Refuse (DestinationError) to write ``out/name`` beside a file planner did not write there (not in the
    manifest) whose name differs from it only in case or Unicode normalisation ('QLORA.json', 'cafe' + U+0301
    beside 'café' composed): the folder copied to macOS, Windows or a USB stick (exFAT) would keep one of the two,
    and the user's file is the one to keep. Another set's such report is :func:`_case_clash`'s."""
    key = _one_file_key(name)
    try:
        names = [e.name for e in os.scandir(out)]
    except OSError:
        return
    from planner.core.outpath import utf8_reading

    for other in names:
        utf = utf8_reading(other) if other != name and other not in manifest and not other.isascii() else None
        if utf is not None and _one_file_key(utf) == key:  # h25a N2: b'caf\xc3\xa9.md' beside b'caf\xe9.md'
            raise DestinationError(f"{out / name}: would sit beside {out / other}, a file planner did not write, whose "
                                   f"name's bytes are UTF-8 for {utf!a}: a UTF-8 locale would show the two as one "
                                   f"name. This run's file-system encoding is {fs_encoding()}: run again under a "
                                   "UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1, move that file away, or give "
                                   "another --out.")
        if other == name or other in manifest or _one_file_key(other) != key:
            continue
        both = f"{other!r} and {name!r}" if other.isascii() and name.isascii() else f"{other!a} and {name!a}"
        raise DestinationError(f"{out / name}: would sit beside {out / other}, a file planner did not write, and the "
                               f"two names ({both}) differ only in upper and lower case or in Unicode form "
                               "(composed or decomposed), which macOS and Windows store as one file. Move that file "
                               "away or give another --out.")


def _new_folder_clash(out: Path) -> None:
    """Refuse (DestinationError) an ``out`` still to be made whose first folder to be made would sit beside an
    entry whose name differs from it only in case or Unicode normalisation ('Café' or 'cafe' + U+0301 beside 'café'
    composed), as a report beside such a file is refused (:func:`_foreign_case_clash`): Linux keeps the two apart,
    so the reports would land in a second folder that lists as the first, and macOS, Windows or a USB stick
    (exFAT) would merge them (h23a m4). A folder that exists is written into whatever lies beside it."""
    made, above = Path(out), Path(out).parent
    while not os.path.lexists(above) and above != above.parent:
        made, above = above, above.parent
    if made.name in ("", ".", "..") or not os.path.isdir(above):
        return  # nothing to make beside anything, or a path that is said to be wrong elsewhere
    key = _one_file_key(made.name)
    try:
        names = sorted(e.name for e in os.scandir(above))
    except OSError:
        return
    other = next((n for n in names if n != made.name and _one_file_key(n) == key), None)
    if other is None:
        return
    from planner.core.names import escape_unsafe, line_path, shell_word

    both = f"{other!r} and {made.name!r}" if other.isascii() and made.name.isascii() else \
        f"{other!a} and {made.name!a}"
    there = escape_unsafe(str(above / other))
    is_dir = os.path.isdir(above / other)
    hint = f"Give --out {shell_word(there + escape_unsafe(str(out)[len(str(made)):]))} to write into that folder, or a name of its own." \
        if is_dir else "Give --out a name of its own."
    raise DestinationError(f"{line_path(out)}: would make the folder {line_path(made)} beside "
                           f"the {'folder' if is_dir else 'file'} {there}, and the two names ({both}) differ "
                           "only in upper and lower case or in Unicode form (composed or decomposed), which macOS "
                           f"and Windows store as one. {hint}")


def _drawn_alike(out: Path, manifest: dict[str, dict], set_name: str) -> None:
    """Refuse (OutputError) a set beside another set's reports in ``out`` whose name is drawn alike ('plan chɑt' with
    U+0251 beside 'plan chat'): one UTS #39 skeleton, not one name (planner.core.names.lookalike_note; a name in
    another case is :func:`_case_clash`'s, in another Unicode form the same set)."""
    for other in dict.fromkeys(e["set"] for e in manifest.values()):
        note = "" if _same_set(other, set_name) else lookalike_note(other, set_name)
        if note and any(e["set"] == other and _owner(out, n, manifest) == other for n, e in manifest.items()):
            raise DestinationError(f"{out}: holds the reports of {other!r}, and {set_name!r} would sit beside them"
                                   f"{note}. Give another --out, or give the scenario a name that looks unlike it.")


def _differ(a: str, b: str) -> str:
    """Where two set names that may look alike differ (' (the names differ only at character 8: U+2010
    (HYPHEN) and U+002D (HYPHEN-MINUS))'); '' when they differ in length or in more than one character. The
    position counts in the scenario's name: a set name's leading kind ('plan ', 'compare '), when both share
    it, is not counted. Two names equal in Unicode NFKC ('ﬁne', 'fine') are said to be, with the characters NFKC
    writes otherwise (' (the file name is made of a name in Unicode NFKC, where the two are one: U+FB01 (LATIN
    SMALL LIGATURE FI) as 'fi')')."""
    from planner.core.names import char_name, compatibility_forms, name_key

    kind = a.split(" ", 1)[0] + " "
    if " " in a and b.startswith(kind):
        a, b = a[len(kind):], b[len(kind):]
    if name_key(a) == name_key(b):
        forms = ", ".join(f for f in (compatibility_forms(a), compatibility_forms(b)) if f)
        return f" (the file name is made of a name in Unicode NFKC, where the two are one: {forms})"
    diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b), 1) if x != y]
    if len(a) != len(b) or len(diff) != 1:
        return ""
    at, x, y = diff[0]
    return f" (the names differ only at character {at}: {char_name(x)} and {char_name(y)})"
