"""The folders planner never writes into: its own package, the shipped catalog beside it, and the installed
distribution's metadata folder (``planner-*.dist-info``).

:func:`refuse_protected` refuses one of them (or a folder inside one) as an output folder, by path and by
device and inode (of every folder in them: a bind mount of ``planner/core`` is known too), with a hint that
names a path it would accept (never the path just refused: run from inside ``planner/``, ``--out reports`` is
inside it too); for a file option (``calibrate --out FILE``) the file is named and a file hinted.
planner.core.reportset re-exports refuse_protected.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from planner.core.errors import DestinationError


def _protected() -> list[Path]:
    """The shipped catalog (where it is beside the package: a source checkout), the planner package, and the
    installed distribution's metadata folder (``planner-*.dist-info``: :func:`_metadata_folder`) and the
    checkout's ``planner.egg-info`` beside the package (setuptools' build metadata), where found."""
    package = Path(__file__).resolve().parent.parent  # planner/
    found = [package, package.parent / "catalog"] if (package.parent / "catalog").is_dir() else [package]
    # the checkout's build metadata (``pip install -e .`` makes ``planner.egg-info`` beside the package), where it
    # is: importlib.metadata reads it when the checkout is on sys.path, whichever one the installer registered
    checkout = package.parent / "planner.egg-info"
    for meta in (_metadata_folder(), checkout.resolve() if checkout.is_dir() else None):
        if meta is not None and meta not in found:
            found = [*found, meta]
    return found


def _metadata_folder() -> Path | None:
    """The installed distribution's own metadata folder (``planner-<version>.dist-info``, or an ``.egg-info``), as
    importlib.metadata finds the distribution ``planner``; None where it is not installed or its folder is not
    found. Links resolved. Source: Python documentation, ``importlib.metadata.distribution``."""
    from importlib import metadata

    try:
        dist = metadata.distribution("planner")
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None
    folder = getattr(dist, "_path", None)  # a PathDistribution's folder (no public name for it)
    if folder is None:  # another finder's distribution: the folder its files list names
        try:
            files = dist.files or []
        except (OSError, ValueError):
            return None
        top = next((f.parts[0] for f in files if f.parts and f.parts[0].endswith((".dist-info", ".egg-info"))),
                   None)
        folder = dist.locate_file(top) if top is not None else None
    try:
        where = Path(os.path.realpath(str(folder))) if folder is not None else None
    except (OSError, ValueError, TypeError):
        return None
    if where is None or not where.name.endswith((".dist-info", ".egg-info")) or not where.is_dir():
        return None
    return where


def protected_folders() -> list[Path]:
    """The folders planner never writes into: the planner package, the shipped catalog beside it in a source
    checkout, and the installed distribution's metadata folder (``planner-*.dist-info``)."""
    return _protected()


def kind_of(p: Path) -> str:
    """What the protected folder ``p`` is, for a message: 'catalog', 'package' or 'package metadata'."""
    if p.name == "catalog":
        return "catalog"
    return "package metadata" if p.name.endswith((".dist-info", ".egg-info")) else "package"


def _refusal(out_dir: Path | str, p: Path, file_name: str | None = None) -> DestinationError:
    what = kind_of(p)
    if file_name:  # a file option (calibrate --out FILE): the file named, a file hinted
        return DestinationError(f"{Path(out_dir) / file_name}: is inside planner's own {what} folder ({p}), and "
                                "planner does not write into it. Give another --out, a file outside it, e.g. "
                                f"--out {_accepted_example(file_name)}.")
    return DestinationError(f"{out_dir}: is planner's own {what} folder ({p}), or a folder inside it, and planner "
                            "does not write into it. Give another --out, a folder outside it, e.g. --out "
                            f"{_accepted_example('my-catalog' if p.name == 'catalog' else 'reports')}.")


def protected_folder_of(path: Path | str, folders: list[Path] | None = None) -> Path | None:
    """The protected folder (:func:`protected_folders`) that ``path`` (made absolute, links resolved) is or
    lies inside; None when none.

    Raises:
        OSError, ValueError: ``path`` cannot be resolved.
    """
    where = Path(os.path.realpath(path))
    return next((p for p in (_protected() if folders is None else folders) if where == p or p in where.parents), None)


def _inside_protected(path: Path) -> bool:
    """Whether ``path`` is a protected folder or lies inside one (a path that cannot be resolved counts)."""
    try:
        return protected_folder_of(path) is not None
    except (OSError, ValueError):
        return True


def _accepted_example(name: str) -> str:
    """A path for ``name`` (a folder or a file) that :func:`refuse_protected` accepts, for a hint: ``name``
    itself when the current directory lies outside the protected folders, else ``name`` in the home folder,
    else beside the outermost protected folder (never the path just refused)."""
    try:
        here = Path.cwd()
    except OSError:
        here = None
    if here is not None and not _inside_protected(here / name):
        return name
    home = os.path.expanduser("~")
    if home and home != "~" and not _inside_protected(Path(home) / name):
        return str(Path(home) / name)
    return str(_protected()[0].parent / name)  # the folder holding the package: outside it and the catalog


def _protected_ids(folders: list[Path] | None = None) -> dict[tuple[int, int], Path]:
    """The device and inode of every folder of the protected folders (each, and every folder under it, links not
    followed), each mapped to the protected folder it is or lies in: a bind mount of any of them (``mount --bind
    planner/core b``) is known by them, though nothing on its path leads into the package. Walked afresh on each
    call (a few dozen folders); folders that cannot be read are left out."""
    ids: dict[tuple[int, int], Path] = {}
    for p in _protected() if folders is None else folders:
        for root, _dirs, _names in os.walk(p):
            try:
                st = os.stat(root)
            except OSError:
                continue
            ids.setdefault((st.st_dev, st.st_ino), p)
    return ids


def protected_by_id(path: Path | str, ids: dict[tuple[int, int], Path] | None = None) -> Path | None:
    """The protected folder that ``path`` or a folder above it is or lies in, known by device and inode (a bind
    mount or a link of the catalog, or of any folder inside the package, is that folder); None when none.
    ``ids``: :func:`_protected_ids`, when the caller has them."""
    ids = _protected_ids() if ids is None else ids
    try:
        here = Path(os.path.abspath(path))
    except (OSError, ValueError):
        return None
    for q in (here, *here.parents):
        try:
            st = os.stat(q)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) in ids:
            return ids[(st.st_dev, st.st_ino)]
    return None


def is_protected_file(fd: int) -> bool:
    """Whether the open descriptor ``fd`` is a regular file of planner's package or of the shipped catalog,
    by device and inode (a hard link or a bind mount of one is that file); False when it cannot be told."""
    try:
        st = os.fstat(fd)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    return file_of_id([str(f) for f in _protected()], (st.st_dev, st.st_ino)) is not None


def file_of_id(roots: list[str], ident: tuple[int, int]) -> str | None:
    """The path of a file under one of ``roots`` whose device and inode (links followed) are ``ident``, else None;
    a root on another device is not walked (no file there can have that device)."""
    for root in roots:
        try:
            if os.stat(root).st_dev != ident[0]:
                continue
        except OSError:
            continue
        for folder, _dirs, names in os.walk(root):
            for n in names:
                try:
                    other = os.stat(os.path.join(folder, n))
                except OSError:
                    continue
                if (other.st_dev, other.st_ino) == ident:
                    return os.path.join(folder, n)
    return None


#: The files planner writes or reads in an output folder, by suffix (reports, cloud.yaml), and its own (``.planner-``)
_SET_SUFFIXES = (".xlsx", ".csv", ".json", ".md", ".yaml", ".yml")


def planners_files_in(out: Path | str) -> list[Path]:
    """The files directly in the output folder ``out`` that a run may write, replace or remove: reports and
    cloud.yaml (by suffix), the manifest and every name of planner's own (``.planner-*``, its temporary manifests
    ``..planner-*``), and the files directly inside a staging-named folder there (``.planner-staging-*``: a dead
    run's, whose listed files and mark the next run removes). [] when ``out`` cannot be read."""
    try:
        names = os.listdir(out)
    except (OSError, ValueError, TypeError):
        return []
    found = []
    for n in names:
        path = Path(out) / n
        if n.startswith((".planner-", "..planner-")) or n.lower().endswith(_SET_SUFFIXES):
            found.append(path)
        if n.startswith(".planner-staging"):
            try:
                if stat.S_ISDIR(os.lstat(path).st_mode):  # a folder there, not a link to one elsewhere
                    found += [path / c for c in os.listdir(path)]
            except (OSError, ValueError):
                continue
    return found


def stream_into_planners_files(stream: Any, out: Path, inputs: Iterable[str | Path] = ()) -> bool:
    """Whether ``stream`` (the Python API caller's standard error) writes into a file planner must not write into:
    a file of its package or shipped catalog (:func:`is_protected_file`), one of the run's ``inputs``, or a file in
    ``out`` that the run may write or remove (:func:`planners_files_in`; by device and inode). The command line
    refuses such a stream before it starts (planner.cli.streams); the API has no say over its caller's streams, so
    a line it would print there
    (planner.core.reportset.ReportSet: "Interrupted by SIGTERM ...") is not printed at all. False for a stream that
    is no regular file of the system's (a terminal, a pipe, a test's buffer)."""
    import io

    try:
        fd = stream.fileno()
        st = os.fstat(fd)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    if is_protected_file(fd):
        return True
    for path in [*map(Path, inputs), *planners_files_in(out)]:
        try:
            other = os.stat(path)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def refuse_protected(out_dir: Path, *, fd: int | None = None, file_name: str | None = None) -> None:
    """Refuse the shipped catalog and the planner package (or a folder inside them) as an output folder,
    known by path and by device and inode (a bind mount, or a link, of the catalog is the catalog): the
    folder and every folder above it are compared. ``fd``: an open descriptor of the folder (the one
    locked), checked the same way by walking up its own '..' entries (what the path names may have been
    swapped meanwhile). ``file_name``: the file to be written in ``out_dir`` (a file option such as
    ``calibrate --out FILE``), named in the message, whose hint is then a file outside.

    A folder that would change which code Python imports (a plain ``planner`` folder in site-packages) is
    refused too: planner.core.importpath.refuse_import_shadow.

    Raises:
        OutputError: naming the folder (or the file), with a path outside as the hint.
    """
    folders = _protected()  # found once (the package, the catalog, the dist-info: importlib.metadata scans sys.path)
    try:
        inside = protected_folder_of(out_dir, folders)
    except (OSError, ValueError):
        inside = None
    if inside is not None:
        raise _refusal(out_dir, inside, file_name)
    ids = _protected_ids(folders)
    found = protected_by_id(out_dir, ids)
    if found is not None:
        raise _refusal(out_dir, found, file_name)
    from planner.core.importpath import refuse_import_shadow

    refuse_import_shadow(out_dir, file_name)  # a folder that would hide planner (or another module) from Python
    if fd is None:
        return
    up = "."
    seen = None
    for _ in range(4096):  # '..' of the root is the root: the walk ends there
        try:
            st = os.stat(up, dir_fd=fd)
        except OSError:
            return
        if (st.st_dev, st.st_ino) in ids:
            raise _refusal(out_dir, ids[(st.st_dev, st.st_ino)], file_name)
        if (st.st_dev, st.st_ino) == seen:
            return
        seen = (st.st_dev, st.st_ino)
        up = ".." if up == "." else up + "/.."


__all__ = ["kind_of", "protected_folders", "refuse_protected"]
