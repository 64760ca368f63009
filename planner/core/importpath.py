"""Output folders that would change which code Python imports (h25a N1).

A folder without ``__init__.py`` directly in a folder Python searches for modules (an entry of ``sys.path``) is a
namespace-package portion: Python's path finder returns it before any finder placed after it in
``sys.meta_path``, such as the one ``pip install -e .`` installs for planner, so a plain ``planner`` folder made
in site-packages (``--out .venv/lib/python3.11/site-packages/planner``) hides planner itself from every later
run and ``import``. Source: Python's import system reference (namespace packages, PEP 420) and setuptools'
editable installs (``__editable___*_finder``).

:func:`refuse_import_shadow` refuses, by the path with links resolved:

* an output folder that is, or lies inside, a ``site-packages`` or ``dist-packages`` folder (where installers put
  packages: any folder made there is a top-level import name for the interpreter that owns it);
* an output folder that would make, or write into, a folder ``N`` (no ``__init__.py``) directly inside an entry of
  the running interpreter's ``sys.path`` or the current folder (the first entry for ``python -c`` and for a script
  run there), where ``N`` is ``planner`` or a top-level module that only a finder after Python's path finder
  finds (an editable install): such a folder would hide it. A folder named like a module the path finder finds
  (``json``, ``numpy``) hides nothing, and neither does the default ``reports``, so they are accepted.

Nothing here runs at import time; each call reads ``sys.path`` and the file system afresh.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from planner.core.errors import DestinationError

#: Folder names installers put packages into (pip, Debian's Python)
_INSTALL_FOLDERS = ("site-packages", "dist-packages")


def _real(path: str | Path) -> Path | None:
    """``path`` made absolute with links resolved; None where it cannot be."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError, TypeError):
        return None


def _search_folders() -> list[tuple[Path, str]]:
    """The folders Python searches for top-level modules, each with words for a message: the entries of
    ``sys.path`` that are folders ('' is the current folder), then the current folder itself."""
    found: list[tuple[Path, str]] = []
    for entry in list(sys.path):
        if not isinstance(entry, str):
            continue
        if entry and not os.path.isabs(entry) and not os.path.lexists(entry):
            continue  # not a folder: a path hook's marker ('__editable__.planner-0.1.0.finder.__path_hook__', h41a N17)
        where = _real(entry or os.curdir)
        # a folder not made yet counts too: a run may make it (h41a N16: PYTHONPATH=new, --out new/planner/...)
        if where is not None and (where.is_dir() or not os.path.lexists(where)) and all(where != f for f, _ in found):
            found.append((where, "a folder on Python's module search path (sys.path)"))
    here = _real(os.curdir)
    if here is not None and all(here != f for f, _ in found):
        found.append((here, "the current folder, which Python searches first for a script run there"))
    return found


def _hidden_by_folder(name: str) -> bool:
    """Whether a plain folder ``name`` on ``sys.path`` would hide the top-level module ``name``: ``planner``
    always; another only where Python's path finder finds no regular module of that name (origin set) but a later
    finder does (an editable install's). Built-in and frozen modules are found before the path finder."""
    if name == "planner":
        return True
    if not name.isidentifier():
        return False
    from importlib.machinery import PathFinder
    from importlib.util import find_spec

    try:
        regular = PathFinder.find_spec(name)
        if regular is not None and regular.origin is not None:
            return False  # a regular module on the path wins over a namespace folder
        spec = find_spec(name)
    except (ImportError, ValueError, AttributeError, OSError):
        return False
    return spec is not None and spec.origin not in (None, "built-in", "frozen")


def _example() -> str:
    """A folder name for a hint that this check accepts: ``reports`` in the current folder, else in the home
    folder."""
    here = _real(os.curdir)
    if here is not None and _shadow_of(here / "reports") is None:
        return "reports"
    return str(Path(os.path.expanduser("~")) / "reports")


def _shadow_of(out: Path) -> str | None:
    """Why the output folder ``out`` (absolute, links resolved) would change what Python imports; None when it
    would not."""
    for part in (out, *out.parents):
        if part.name in _INSTALL_FOLDERS:
            return (f"is, or is inside, {part}, a folder Python imports installed packages from: a folder made "
                    "there can hide an installed package (a 'planner' folder there hides planner itself)")
    for folder, words in _search_folders():
        if folder not in out.parents:
            continue
        top = out.relative_to(folder).parts[0]
        made = folder / top
        if os.path.isfile(made / "__init__.py") or not _hidden_by_folder(top):
            continue  # a regular package already (nothing new to import) or a name nothing imports from there
        return (f"would make or write into the folder {made}, in {folder}, {words}: a plain folder named "
                f"'{top}' there hides the installed '{top}' package from later imports")
    return None


def installation_roots() -> list[str]:
    """The folders of the Python installation planner runs on, absolute with links resolved: those it imports
    installed packages and the standard library from and its scripts folder (sysconfig's purelib, platlib, stdlib,
    platstdlib, scripts), and the site folders (``site.getsitepackages``, the user's). A file written there can
    break, or run in, every later start of planner or of Python (a dependency's module, a module of the standard
    library: h38b N4, h40a N2)."""
    import site
    import sysconfig

    roots: list[str] = []
    try:
        paths = sysconfig.get_paths()
        roots += [paths[k] for k in ("purelib", "platlib", "stdlib", "platstdlib", "scripts") if k in paths]
        roots += list(site.getsitepackages()) + [site.getusersitepackages()]
    except (AttributeError, OSError, ValueError, KeyError):
        pass
    return [os.path.realpath(r) for r in dict.fromkeys(roots) if isinstance(r, str) and os.path.isdir(r)]


def interpreter_files() -> list[str]:
    """The files of the interpreter planner runs on, absolute with links resolved: its executable (the
    environment's and the base one: ``sys.executable``, ``sys._base_executable``) and its shared library
    (sysconfig's LIBDIR with LDLIBRARY and INSTSONAME, ``libpython3.11.so``): written into, every later start of
    that Python fails (h40b m4). Those that are there."""
    import sysconfig

    names = [sys.executable, getattr(sys, "_base_executable", None)]
    try:
        libdir = sysconfig.get_config_var("LIBDIR")
        names += [os.path.join(libdir, sysconfig.get_config_var(k) or "") for k in ("LDLIBRARY", "INSTSONAME")
                  if isinstance(libdir, str) and sysconfig.get_config_var(k)]
    except (OSError, ValueError, TypeError):
        pass
    names += mapped_libpython()
    found = []
    for name in names:
        if isinstance(name, str) and name:
            real = os.path.realpath(name)
            if os.path.isfile(real) and real not in found:
                found.append(real)
    return found


def mapped_libpython(maps: str = "/proc/self/maps") -> list[str]:
    """The Python shared libraries (``libpython3.11.so.1.0``) mapped into this process, as the kernel lists
    them in ``/proc/self/maps`` (proc(5): the path is the sixth field, after the address, permissions,
    offset, device and inode; a file removed since it was mapped ends in `` (deleted)`` and is left out). The
    library actually loaded can differ from sysconfig's build-time LIBDIR (``LD_LIBRARY_PATH``, a relocated
    interpreter: h41a N2). An empty list where the file cannot be read (not Linux, a statically linked
    interpreter); raises nothing."""
    try:
        with open(maps, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except (OSError, ValueError):
        return []
    found: list[str] = []
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or not fields[5].startswith("/") or fields[5].endswith(" (deleted)"):
            continue
        name = fields[5]
        if re.match(r"libpython\d[\d.]*[a-z]*\.so", os.path.basename(name)) and name not in found:
            found.append(name)
    return found


#: The suffixes of files Python imports as modules (importlib.machinery's SOURCE, BYTECODE and EXTENSION suffixes,
#: as they are on every platform) and of the ``.pth`` files site reads.
_MODULE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pyd", ".so", ".pth")


def _installation_file_problem(path: Path) -> str | None:
    """Why a file planner would write at ``path`` (``calibrate --out``) could change what Python runs: inside a
    folder of the Python installation (:func:`installation_roots`), or named as a module (``yaml.py``,
    ``click.so``) directly in a folder on the module search path, where it would hide the real one (the standard
    library's folder comes before site-packages on sys.path: h40a N2); None otherwise."""
    folder = _real(path.parent)
    if folder is None:
        return None
    if _real(path) == _real(Path(sys.prefix) / "pyvenv.cfg"):
        return "is the pyvenv.cfg of the Python environment planner runs in, which Python reads at every start"
    for root in installation_roots():
        if folder == Path(root) or Path(root) in folder.parents:
            return (f"its folder is, or is inside, {root}, a folder of the Python installation planner runs on "
                    "(its standard library, installed packages or scripts): a file written there can break or run in "
                    "every later start of planner or of Python")
    if path.name.lower().endswith(_MODULE_SUFFIXES):
        for where, words in _search_folders():
            if folder == where:
                return (f"is named as a Python module, in {where}, {words}: it would hide a module of that name "
                        "from later imports")
    return None


def _not_yaml_named(path: Path) -> bool:
    """Whether ``path``, a calibration file to make, is not named ``*.yaml``/``*.yml`` (any case). One that exists
    is judged by the checks that follow, which say more (an input, a report planner wrote, a device, a file whose
    bytes are no calibration file's: read before the measurement)."""
    try:
        if os.path.lexists(path):
            return False
    except (OSError, ValueError):
        return False
    return not path.name.lower().endswith((".yaml", ".yml"))


def startup_name(name: str) -> bool:
    """Whether a file or folder named ``name`` in a folder on the module search path is one Python runs or reads at
    every start (Python documentation, ``site``): a ``.pth`` file, or a ``sitecustomize``/``usercustomize`` module
    or package (any suffix: .py, .pyc, a folder)."""
    if name.endswith(".pth"):
        return True
    stem, dot, _rest = name.partition(".")
    if stem not in ("sitecustomize", "usercustomize"):
        return False
    # a module or package only: 'sitecustomize.py', '.pyc', '.cpython-311-x86_64-linux-gnu.so', the folder; not a
    # 'sitecustomize.yaml', which no import reads (h42a m3)
    return not dot or ("." + name.rsplit(".", 1)[-1].lower()) in _MODULE_SUFFIXES


def refuse_import_shadow(out_dir: Path | str, file_name: str | None = None) -> None:
    """Refuse an output folder that would change which code Python imports (see the module's docstring).
    ``file_name``: the file to be written there (``calibrate --out FILE``), named in the message.

    Raises:
        DestinationError: one line naming the folder (or the file), why, and a folder to give instead.
    """
    if file_name and startup_name(file_name):
        # a name Python runs at every start where its folder is on the module search path (PYTHONPATH's, the
        # standard library's): never a calibration file's (h39a N2)
        raise DestinationError(f"{Path(out_dir) / file_name}: {file_name!r} is a name Python runs at every start when "
                               "its folder is on the module search path (site: .pth files, sitecustomize, "
                               "usercustomize). Give the file another name, e.g. --out "
                               f"{Path(out_dir) / 'calibration.yaml'}.")
    if file_name:
        why = _installation_file_problem(Path(out_dir) / file_name)
        if why is not None:  # (the example judged only when a line needs it: it walks the installation's folders)
            here = Path("calibration.yaml")
            example = here if _installation_file_problem(here) is None else Path.home() / "calibration.yaml"
            raise DestinationError(f"{Path(out_dir) / file_name}: {why}. Give another --out, a file outside it, "
                                   f"e.g. --out {example}.")
        if _not_yaml_named(Path(out_dir) / file_name):
            raise DestinationError(f"{Path(out_dir) / file_name}: is not named as a YAML file (.yaml or .yml), and a "
                                   "calibration file is YAML; a file of another name can be taken for something else "
                                   "where it lands (a package's __init__.py, a shared library such as libm.so.6 in the "
                                   "interpreter's library folder). Give it a .yaml name, e.g. --out "
                                   f"{Path(out_dir) / 'calibration.yaml'}.")
    out = _real(out_dir)
    if out is None:
        return  # said by the checks that follow, as what it is
    why = _shadow_of(out)
    if why is None:
        return
    if file_name:
        raise DestinationError(f"{Path(out_dir) / file_name}: its folder {why}. Give another --out, a file "
                               f"outside it, e.g. --out {Path(_example()) / file_name}.")
    raise DestinationError(f"{out_dir}: {why}. Give another --out, a folder outside it, e.g. --out {_example()}.")


__all__ = ["refuse_import_shadow"]
