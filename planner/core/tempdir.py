"""The temporary folder other libraries write into, checked against planner's own folders.

openpyxl writes each sheet to a temporary file first (``tempfile.NamedTemporaryFile`` with no ``dir=``),
and the importer checks its overlay in a ``tempfile.TemporaryDirectory``: both go where the ``TMPDIR``,
``TEMP`` or ``TMP`` environment variable points. Planner never writes into the shipped catalog or the
installed package (:func:`planner.core.protected.protected_folders`), so a temporary folder inside them
is refused before anything is written. The folder is found as :func:`tempfile.gettempdir` finds it
(``tempfile.tempdir`` if set, else the first of those variables naming a folder that can be written),
without calling it: it would set the process-wide ``tempfile.tempdir``.

Source: Python documentation, ``tempfile.gettempdir`` (the search order).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from planner.core.errors import DestinationError, OutputError
from planner.core.names import escape_unsafe


def _temp_folder() -> Path | None:
    return _temp_folder_and_source()[0]


def _temp_folder_and_source() -> tuple[Path | None, str]:
    """The temporary folder (as :func:`_temp_folder`) and what named it: 'TMPDIR', 'TEMP' or 'TMP' (the variable
    tempfile read), 'tempfile.tempdir' (set in code), or '' (the system's own, or the current folder)."""
    if tempfile.tempdir is not None:
        value = _tempdir_value()
        return (None if value is None else Path(value)), "tempfile.tempdir"
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if value and _usable(value):
            return Path(value), var
    return _system_temp_folder(), ""


def _tempdir_value() -> str | None:
    """``tempfile.tempdir`` as :func:`tempfile.gettempdir` returns it: a str (bytes or a path object decoded with
    :func:`os.fsdecode`), or None when it is unset or holds no path (an int: tempfile itself fails on it)."""
    try:
        return None if tempfile.tempdir is None else os.fsdecode(tempfile.tempdir)
    except (TypeError, ValueError):
        return None


def _usable(value: str) -> bool:
    """Whether tempfile would take the folder ``value`` (as it probes: a folder that can be written)."""
    try:
        return os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK)
    except (OSError, ValueError):  # a NUL in it
        return False


def _why_unusable(value: str) -> str:
    """Why tempfile passes over the folder ``value``: 'is not there', 'is not a folder' or 'cannot be written'."""
    try:
        if not os.path.exists(value):
            return "is not there"
        return "is not a folder" if not os.path.isdir(value) else "cannot be written"
    except (OSError, ValueError):
        return "is not there"


def _system_temp_folder() -> Path | None:
    # the system's own, in tempfile's order: /tmp, /var/tmp, /usr/tmp, and the current folder when none of those
    # can take a file (full, read-only): that last one may be the catalog or the package
    if _system_default() is not None:
        return None
    try:
        return Path(os.getcwd()) / _CWD_MARK
    except OSError:
        return None


#: A last path part that marks the folder :func:`_temp_folder` found as the current one (tempfile's fallback).
_CWD_MARK = "\0cwd"


def _takes_files(folder: str) -> bool:
    """Whether ``folder`` could take a new file, judged without writing one: a writable folder with free
    blocks and inodes (tempfile probes by writing; a full or read-only folder fails that probe)."""
    try:
        if not (os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)):
            return False
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return os.path.isdir(folder)
    return st.f_bavail > 0 and (st.f_favail > 0 or st.f_files == 0)


def refuse_protected_temp() -> None:
    """Refuse a temporary folder (``TMPDIR``) inside the shipped catalog or the planner package (by path, or
    by device and inode: a bind mount of either), or one in which another user can rename files
    (:func:`planner.core.sharing.refuse_shared_folder`: openpyxl reopens its temporary files by path, so a
    link swapped in would be truncated or copied into the workbook).

    Raises:
        DestinationError: (an InputError and an OutputError, as every destination refused before the work, h40a N5)
            naming the folder and the variable to change.
    """
    from planner.core.protected import kind_of, protected_by_id, protected_folder_of

    where, var = _temp_folder_and_source()
    if where is None:
        return
    var = var or "TMPDIR"  # (only the current folder has no variable: said as that below)
    cwd = where.name == _CWD_MARK
    where = where.parent if cwd else where
    try:
        p = protected_folder_of(where) or protected_by_id(where)  # by path, then as a bind mount of one
    except (OSError, ValueError):
        return
    if p is None and not cwd:  # openpyxl reopens its temporaries by path: no one else may rename them
        from planner.core.sharing import OWN_WHY, refuse_shared_folder

        refuse_shared_folder(where, f"the temporary folder ({var}) that openpyxl and the importer write into",
                             f"Set {_set(var)} to a folder only you can write, or one with the sticky bit as /tmp has.",
                             own=f"Set {_set(var)} to a folder of your own instead: {OWN_WHY}")
    if p is not None:
        what = kind_of(p)
        if cwd:
            raise DestinationError(f"the temporary folder would be the current folder {escape_unsafe(str(where))}, as "
                              "/tmp and /var/tmp cannot take files (full or read-only), and it is inside planner's "
                              f"own {what} folder ({escape_unsafe(str(p))}), where planner writes nothing, not even "
                              "temporary files. Set TMPDIR to a folder with room, or run from another folder.")
        instead = ("to another folder, or to None (then TMPDIR or /tmp is used)" if var == "tempfile.tempdir"
                   else "to another folder, e.g. TMPDIR=/tmp")  # TMPDIR is not read while tempfile.tempdir is set
        raise DestinationError(f"the temporary folder {escape_unsafe(str(where))} ({var}) is inside planner's own "
                               f"{what} folder ({escape_unsafe(str(p))}), where planner writes nothing, not even "
                               f"temporary files. Set {_set(var)} {instead}.")


def refuse_unusable_temp() -> None:
    """Refuse a TMPDIR (TEMP, TMP) that is set but names no folder that can be written (missing, a file, read-only):
    tempfile would pass over it to the next one, /tmp or the current folder, without a word (h36a 11). Called where
    temporary files are about to be made (openpyxl's, the importer's check copy), after the checks of the output
    folder, which say more (a TMPDIR that is the new --out).

    Raises:
        OutputError: naming the folder, the variable and what to do.
    """
    if tempfile.tempdir is not None:  # set in code: judged as tempfile.tempdir (refuse_temp_in)
        return
    for name in ("TMPDIR", "TEMP", "TMP"):  # one set but unusable: refused, not passed over (h36a 11)
        value = os.environ.get(name)
        if not value:
            continue
        if _usable(value):
            break
        shown = escape_unsafe(value if value == value.strip() else repr(value))  # '   ' seen (h38a 6)
        why = _why_unusable(value)
        create = "Create it, set" if why == "is not there" else "Set"  # not for a file or a folder that is there (h39a m3)
        raise OutputError(f"the temporary folder {shown} ({name}) {why}, so Python "
                          "would put openpyxl's and the importer's temporary files somewhere else without a word. "
                          f"{create} {_set(name)} to a folder of your own that can be written "
                          f"(e.g. {name}=/tmp), or unset {name}.")


def temp_within(where: Path, folder: Path) -> bool | None:
    """Whether the temporary folder ``where`` is ``folder`` (False), or inside it (True: ``folder`` is one of the
    folders above it, each compared by device and inode, so a link or a bind mount of ``folder`` counts), or
    neither (None; also when either cannot be read)."""
    try:
        if not os.path.isdir(folder):
            return None
        here = Path(os.path.realpath(where))
    except (OSError, ValueError):
        return None
    for i, above in enumerate([here, *here.parents]):
        try:
            if os.path.samefile(above, folder):
                return i > 0
        except (OSError, ValueError):
            continue
    return None


def temp_folder() -> Path | None:
    """The temporary folder tempfile would use (``tempfile.tempdir``, ``TMPDIR``, ``TEMP``, ``TMP``), None for the
    system's own (/tmp, /var/tmp, /usr/tmp); found without calling :func:`tempfile.gettempdir`."""
    where = _temp_folder()
    return where.parent if where is not None and where.name == _CWD_MARK else where


def _set(var: str) -> str:
    """What to change, for the hint: the variable that named the folder, and TMPDIR (read first) beside TEMP or TMP."""
    return var if var in ("TMPDIR", "tempfile.tempdir") else f"{var} (or TMPDIR, which is read first)"


def refuse_temp_in(out: Path | None, overlays: Iterable[Path] = ()) -> None:
    """Refuse, before the work, a temporary folder (``TMPDIR``) that is, or is inside, the output folder ``out`` or
    one of the ``--catalog`` overlay folders the run reads (the same folder by device and inode: a link or a bind
    mount of it too; :func:`temp_within`), and one :func:`refuse_protected_temp` refuses. openpyxl's temporary files and the importer's check copy
    would be made there: beside the reports, or among an input's files, where a run stopped by SIGKILL leaves them
    (an overlay's catalog files are read by name, so they would stay litter in an input folder).

    Args:
        out: the output folder (``--out``, ``out=``), or None.
        overlays: the ``--catalog`` overlay folders.

    The folder judged is the one :func:`tempfile.gettempdir` will return once ``out`` is made
    (:func:`_temp_once_made`: paths fully resolved); a ``tempfile.tempdir`` set in code that tempfile cannot use
    (not there, not a folder, not writable, no path at all) is refused here too, before the work, naming it.

    Raises:
        OutputError: (a DestinationError) naming the folder, the variable and what to do.
    """
    refuse_protected_temp()
    if tempfile.tempdir is not None and _tempdir_value() is None:  # an int: tempfile.gettempdir() fails on it
        raise DestinationError(f"tempfile.tempdir holds a {type(tempfile.tempdir).__name__}, not a folder path: "
                               "openpyxl's temporary files could not be made. Set tempfile.tempdir to a folder path "
                               "of your own, or to None (then TMPDIR or /tmp is used).")
    where, var = _temp_folder_and_source()
    pending = _temp_once_made(out)
    if pending is not None:  # it resolves into --out, which tempfile takes once planner makes it (h29a N2, h40a N9)
        where, var, pending_inside = pending
    elif where is None:  # the system's own (/tmp): judged as well (h29a N2)
        where, var = _system_default(), "default"
        if where is None:
            return
    var = var or "TMPDIR"
    cwd = where.name == _CWD_MARK
    where = where.parent if cwd else where
    named = [(out, "the --out folder {}", "beside the reports")] if out is not None else []
    named += [(f, "the --catalog overlay folder {}, an input of this run", "among the overlay's catalog files")
              for f in overlays]
    for folder, what, landing in named:
        inside = pending_inside if pending is not None and folder is out else temp_within(where, folder)
        if inside is None:
            continue
        shown = escape_unsafe(str(where))
        how = "is" if not inside else "is inside"
        if inside:  # a folder in --out named like a staging folder is taken for one a stopped run left
            landing = "under that folder, where planner cleans up what its stopped runs left"
        if cwd:  # no variable named it: /tmp and /var/tmp failed, so unsetting one cannot help
            raise DestinationError(f"the temporary folder would be the current folder {shown}, as /tmp and /var/tmp "
                                   f"cannot take files (full or read-only), and it {how} "
                                   f"{what.format(escape_unsafe(str(folder)))}: temporary files (openpyxl's, the "
                                   f"importer's check copy) would be made there, {landing}. Set TMPDIR to a private "
                                   "folder of your own elsewhere with room (one made with mkdir -m 700), or run from "
                                   "another folder.")
        if var == "default":  # no variable named it: setting TMPDIR moves the temporary files
            raise DestinationError(f"the temporary folder {shown} ({_why_system()}) {how} "
                                   f"{what.format(escape_unsafe(str(folder)))}: temporary files (openpyxl's, the "
                                   f"importer's check copy) would be made there, {landing}. Give another output "
                                   "folder, or set TMPDIR to a private folder of your own elsewhere (one made with "
                                   "mkdir -m 700).")
        default = _system_default()
        unset = ("" if default is not None and os.path.abspath(where) == str(default)
                 else ", or set it to None (then TMPDIR or /tmp is used)" if var == "tempfile.tempdir"
                 else ", or unset it (then /tmp is used)")
        raise DestinationError(f"the temporary folder {shown} ({var}) {how} {what.format(escape_unsafe(str(folder)))}: "
                               "temporary files (openpyxl's, the importer's check copy) would be made there, "
                               f"{landing}. Set {_set(var)} to a private folder of your own elsewhere (one made with "
                               f"mkdir -m 700){unset}.")
    if var == "tempfile.tempdir" and not cwd and not _usable(str(where)):  # used as set: the save would fail
        raise DestinationError(f"the temporary folder {escape_unsafe(str(where))} (tempfile.tempdir) "
                               f"{_why_unusable(str(where))}: openpyxl's temporary files could not be made there. "
                               "Set tempfile.tempdir to a folder of your own that can be written, or to None (then "
                               "TMPDIR or /tmp is used).")


def _why_system() -> str:
    """Why the system's temporary folder is used, for the line: no variable set, or the ones set name no usable
    folder (tempfile passes over them: 'the system's: TMPDIR names /nonexist, which is not there')."""
    passed = []
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if value:
            passed.append(f"{var} names {escape_unsafe(value)}, which {_why_unusable(value)}")
    return "the system's: " + "; ".join(passed) if passed else "the system's, as TMPDIR is not set"


def _system_default() -> Path | None:
    """The system's temporary folder tempfile takes when no variable names one: the first of /tmp, /var/tmp and
    /usr/tmp that can take files, or None."""
    for folder in ("/tmp", "/var/tmp", "/usr/tmp"):
        if _takes_files(folder):
            return Path(folder)
    return None


def _temp_once_made(out: Path | None) -> tuple[Path, str, bool] | None:
    """The temporary folder, what named it and whether it lies inside ``out`` (True) or is ``out`` (False), when
    ``out`` is not there yet and the folder tempfile will use once planner has made ``out`` resolves to it:
    ``tempfile.tempdir`` when set (used as set, so inside ``out`` counts too), else the first of TMPDIR, TEMP and
    TMP naming ``out`` or a folder inside it (one inside is not there yet, so tempfile would pass over it: said as
    inside ``out``, not as missing, since making it there is refused in turn: h39a m3) before one naming a usable
    folder; else None. tempfile picks its folder at its first use, after planner makes
    ``out``; where ``out`` is there already, the first variable naming a folder inside it that tempfile would pass
    over (not there yet: "Create it" would lead to this refusal). The paths are compared fully resolved (:func:`os.path.realpath` of each: '..', links on the way,
    /proc/self/cwd, and a link whose target is not there yet, as it will resolve once ``out`` is made)."""
    if out is None:
        return None
    try:
        target = os.path.realpath(out)
        made = os.path.lexists(out)
    except (OSError, ValueError):
        return None
    if tempfile.tempdir is not None:
        value = _tempdir_value()
        if value is None or made:
            return None  # (an existing out: judged as it is, temp_within)
        inside = _resolves_into(value, target)
        return None if inside is None else (Path(value), "tempfile.tempdir", inside)
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if not value:
            continue
        if made:  # an existing out: a variable naming a folder inside it that is not there yet (h40a N9), which
            if _usable(value):  # tempfile would pass over, is said as inside it; a usable one is judged as it is
                return None
            inside = _resolves_into(value, target)
            if inside is not None:  # ('out/sub/..' is out itself once sub is made)
                return Path(value), var, inside
            continue
        inside = _resolves_into(value, target)
        if inside is not None:  # --out itself, or a folder inside it: to be made there, refused (h39a m3)
            return Path(value), var, inside
        if _usable(value):
            return None  # this one is used, as it is now
    return None


def _resolves_into(value: str, target: str) -> bool | None:
    """Whether the path ``value``, fully resolved, is the resolved path ``target`` (False), lies inside it (True),
    or neither (None; also when it cannot be resolved: a NUL in it)."""
    try:
        real = os.path.realpath(value)
    except (OSError, ValueError):
        return None
    if real == target:
        return False
    return True if real.startswith(target.rstrip(os.sep) + os.sep) else None
