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
        return Path(tempfile.tempdir), "tempfile.tempdir"
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if value and os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
            return Path(value), var
    return _system_temp_folder(), ""


def _system_temp_folder() -> Path | None:
    # the system's own, in tempfile's order: /tmp, /var/tmp, /usr/tmp, and the current folder when none of those
    # can take a file (full, read-only): that last one may be the catalog or the package
    for folder in ("/tmp", "/var/tmp", "/usr/tmp"):
        if _takes_files(folder):
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
        OutputError: naming the folder and the variable to change.
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
            raise OutputError(f"the temporary folder would be the current folder {escape_unsafe(str(where))}, as "
                              "/tmp and /var/tmp cannot take files (full or read-only), and it is inside planner's "
                              f"own {what} folder ({escape_unsafe(str(p))}), where planner writes nothing, not even "
                              "temporary files. Set TMPDIR to a folder with room, or run from another folder.")
        raise OutputError(f"the temporary folder {escape_unsafe(str(where))} ({var}) is inside planner's own "
                          f"{what} folder ({escape_unsafe(str(p))}), where planner writes nothing, not even "
                          f"temporary files. Set {_set(var)} to another folder, e.g. TMPDIR=/tmp.")


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

    Raises:
        OutputError: (a DestinationError) naming the folder, the variable and what to do.
    """
    refuse_protected_temp()
    where, var = _temp_folder_and_source()
    pending = _temp_once_made(out)
    if pending is not None:  # TMPDIR names --out, not made yet: tempfile takes it once planner makes it (h29a N2)
        where, var = pending
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
        inside = False if pending is not None and folder is out else temp_within(where, folder)
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
            raise DestinationError(f"the temporary folder {shown} (the system's, as TMPDIR is not set) {how} "
                                   f"{what.format(escape_unsafe(str(folder)))}: temporary files (openpyxl's, the "
                                   f"importer's check copy) would be made there, {landing}. Give another output "
                                   "folder, or set TMPDIR to a private folder of your own elsewhere (one made with "
                                   "mkdir -m 700).")
        unset = ("" if _system_default() is not None and os.path.abspath(where) == str(_system_default())
                 else ", or unset it (then /tmp is used)")
        raise DestinationError(f"the temporary folder {shown} ({var}) {how} {what.format(escape_unsafe(str(folder)))}: "
                               "temporary files (openpyxl's, the importer's check copy) would be made there, "
                               f"{landing}. Set {_set(var)} to a private folder of your own elsewhere (one made with "
                               f"mkdir -m 700){unset}.")


def _system_default() -> Path | None:
    """The system's temporary folder tempfile takes when no variable names one: the first of /tmp, /var/tmp and
    /usr/tmp that can take files, or None."""
    for folder in ("/tmp", "/var/tmp", "/usr/tmp"):
        if _takes_files(folder):
            return Path(folder)
    return None


def _temp_once_made(out: Path | None) -> tuple[Path, str] | None:
    """The temporary folder and its variable when ``out`` is not there yet and the variable tempfile would read
    first once planner has made ``out`` (TMPDIR, TEMP, TMP: the first naming a usable folder) names ``out`` itself
    (compared as absolute, normalised paths), else None. tempfile picks its folder at its first use, after
    planner makes ``out``."""
    if out is None or tempfile.tempdir is not None or os.path.lexists(out):
        return None
    target = os.path.abspath(out)
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if not value:
            continue
        try:
            if os.path.abspath(value) == target:
                return Path(value), var
        except ValueError:  # a NUL in it
            continue
        if os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
            return None  # this one is used, as it is now
    return None
