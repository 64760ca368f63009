"""Standard output and standard error never written into an input of the run or a file of planner's own.

A shell redirection names its file before planner runs (``planner catalog gpus 1<> catalog/gpus.yaml``,
``planner estimate --workload w.yaml >> w.yaml``), so the ``--out`` checks never see it. Before a command
runs, :func:`refuse_streams_onto_inputs` compares each of the two streams that is a regular file, by
device and inode (a hard link or a bind mount of the file is the file), with the files the command's
options and arguments name (a file, or the files directly inside a folder: an overlay folder, a model
folder), the files a scenario or workload file reaches (a workload's model folder or config.json, a hub id's
cached config.json and the refs/main that names its revision, read from the file's YAML before the run:
planner.api.plans.named_files; the report writer's own list of a run's inputs is planner.api.plans.run_inputs,
which shares its model paths), the default calibration file (estimate reads it, calibrate adds to it), the
files directly inside ``--out`` that planner writes or removes there (reports, cloud.yaml, the manifest, its
temporary manifests, the files in a staging-named folder: said as such, not as inputs; a ``plan.txt`` there is
not one), and every file of the planner package and of the shipped catalog beside it
(planner.core.protected.protected_folders).
A match is refused before anything is written, as one ``Error:`` line on the other stream (on neither, when
both streams are such files) and exit status 2. :func:`refuse_streams_early` makes the same check before the
command line is read, against the package, the catalog, the files the command line names and those its defaults
name (plan's ``reports/``, the default calibration file), so that ``--help``, ``--version`` and a usage line never
go into them either; and until the full check has run, :func:`refuse_chatter` keeps such a text out of any regular
file named as a data file (``.yaml``, ``.json``, ...: a file a scenario names cannot be known before parsing).

Importing this module does no work.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from planner.core.importpath import startup_name
from planner.core.names import escape_unsafe

_STREAMS = ((1, "standard output"), (2, "standard error"))


def _ident(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _paths(value: Any) -> Iterator[Path]:
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
        try:
            yield Path(value)
        except TypeError:
            return
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _paths(v)


def _files(paths: Iterable[Path], walk: bool) -> Iterator[Path]:
    """The regular files ``paths`` name: each file, and the files inside each folder (directly, or with
    ``walk`` at any depth)."""
    for p in paths:
        try:
            if p.is_file():
                yield p
            elif p.is_dir():
                if walk:
                    for root, _dirs, names in os.walk(p):
                        for n in names:
                            yield Path(root) / n
                else:
                    yield from (c for c in p.iterdir() if c.is_file())
        except OSError:
            continue


def _reached(params: dict[str, Any]) -> list[Path]:
    """The files a run reads that no option or argument names: those a scenario or workload file reaches
    (each workload's model folder and config.json, a cached Hugging Face config.json:
    planner.api.plans.named_files), the cached config.json of a ``--model`` hub id and the refs/main that names
    its revision, and the default calibration file (planner.validate.calibrate.default_path: estimate reads it,
    calibrate adds to it)."""
    from planner.api.plans import model_files, named_files

    found: list[Path] = []
    for key in ("scenario_file", "workload_file"):
        if isinstance(params.get(key), str) and params[key]:
            found += named_files(params[key])
    if isinstance(params.get("model"), str) and params["model"].strip():
        found += model_files(params["model"].strip(), Path("."))
    if "calibration_file" in params and not params.get("calibration_file"):  # read by estimate, written by calibrate
        from planner.validate.calibrate import default_path

        path = default_path()
        if path is not None:
            found.append(path)
    return found


def _written_here(folders: Iterable[Path]) -> Iterator[Path]:
    """The files directly inside ``folders`` that planner writes, reads or removes there (reports, cloud.yaml,
    the manifest, its temporaries, the files in a staging-named folder: planner.core.protected.planners_files_in);
    another file there (``plan.txt``, a log) is no business of planner's."""
    from planner.core.protected import planners_files_in

    for folder in folders:
        for f in planners_files_in(folder):
            try:
                if f.is_file():
                    yield f
            except OSError:
                continue


def refuse_streams_onto_inputs(ctx: click.Context) -> None:
    """Exit 2 (one ``Error:`` line on the other stream) when standard output or standard error is a
    regular file that the command reads (its options' and arguments' files), that it may replace in its
    output folder, or that planner ships (module docstring); return otherwise. Costs nothing when neither
    stream is a regular file."""
    targets = _targets()
    if targets:
        from planner.core.protected import protected_folders

        given = [p for k, v in ctx.params.items() if k != "out_dir" for p in _paths(v)] + _reached(ctx.params)
        _refuse(targets, (("an input of this run", _files(given, walk=False)),
                          ("a file in the output folder (--out), which this run may replace or remove",
                           _written_here(_paths(ctx.params.get("out_dir")))),
                          ("a file of planner's own package or shipped catalog",
                           _files(protected_folders(), walk=True)),
                          (_STARTUP, _startup_files()), (_STARTUP, _installation_streams()),
                          (_STARTUP, _interpreter_files()), (_OTHER_SET, _other_sets())))
    root = ctx.find_root()
    if isinstance(root.obj, dict):
        root.obj[CHECKED] = True  # from here on a usage line goes where the streams point (refuse_chatter)


def refuse_streams_early(argv: Iterable[str]) -> None:
    """The same check before the command line is read (``--help``, ``--version`` and a usage error print before
    :func:`refuse_streams_onto_inputs` can run): a stream onto a file of planner's package or shipped catalog, or
    onto a file the command line names (a word of it, or the value of ``--option=value``; for a folder, the files
    planner writes or reads there: :func:`_written_here`; the folder after ``--out`` is the output folder), or onto
    a file an option's default names (the report folder ``reports/`` of ``plan`` without ``--out``; the default
    calibration file of ``estimate`` without ``--calibration`` and of ``calibrate`` without ``--out``) exits 2
    before anything is printed, in the later check's words. With ``-h``, ``--help`` or ``--version`` on the command
    line, a standard output that is a data file (:func:`refuse_chatter`) is refused too: the files a scenario or
    workload file names cannot be known before the command line is read."""
    argv = [w for w in argv if isinstance(w, str)]
    words_before_dashes = argv[:argv.index("--")] if "--" in argv else argv
    targets = _targets()
    if not targets:
        return
    from planner.core.protected import protected_folders

    words: list[tuple[bool, str]] = []  # (follows --out, word)
    after_out = False
    for word in argv:
        if not isinstance(word, str) or not word:
            after_out = False
            continue
        if word.startswith("--out="):
            words.append((True, word.split("=", 1)[1]))
        elif word.startswith("--") and "=" in word:
            words.append((False, word.split("=", 1)[1]))
        elif word != "--out":
            words.append((after_out, word))
        after_out = word == "--out"
    inputs, written = [], []
    for out, word in words:
        try:
            p = Path(word)
            if p.is_file():
                inputs.append(p)  # a scenario, an overlay file, calibrate's --out file: as the later check says it
            elif p.is_dir():
                (written if out else inputs).extend(_written_here([p]))
        except (OSError, ValueError):
            continue
    out, read = _defaults(words_before_dashes)
    written += list(_written_here([out] if out is not None else []))
    inputs += read
    _refuse(targets, (("a file of planner's own package or shipped catalog", _files(protected_folders(), walk=True)),
                      ("a file in the output folder (--out), which this run may replace or remove", iter(written)),
                      ("an input of this run", iter(inputs)),
                      (_STARTUP, _startup_files()), (_STARTUP, _installation_streams()),
                      (_STARTUP, _interpreter_files()), (_OTHER_SET, _other_sets())))
    if any(w in ("-h", "--help", "--version") for w in words_before_dashes):
        refuse_chatter((1,))  # help and the version go to standard output


def _defaults(argv: list[str]) -> tuple[Path | None, list[Path]]:
    """The output folder (None when there is none) and the input files that the command of ``argv`` takes from its
    options' defaults, for the check before parsing (:func:`refuse_streams_early`). ``plan`` without ``--out``
    writes into ``reports/`` (planner.cli.plan); ``estimate`` without ``--calibration`` reads, and ``calibrate``
    without ``--out`` adds to, the default calibration file (planner.validate.calibrate.default_path). The
    command is the first word that is not an option (the root options, ``--debug``, ``--version`` and ``--help``,
    take no value)."""
    command = next((w for w in argv if not w.startswith("-")), None)
    given = {w.split("=", 1)[0] for w in argv if w.startswith("--")}
    out = Path("reports") if command == "plan" and "--out" not in given else None
    found: list[Path] = []
    option = {"estimate": "--calibration", "calibrate": "--out"}.get(command or "")
    if option is not None and option not in given:
        from planner.validate.calibrate import default_path

        path = default_path()
        if path is not None:
            found.append(path)
    return out, found


#: The suffixes of the files planner reads or writes as data (scenarios, workloads, catalogs and calibration files in
#: YAML; reports in JSON, CSV, Markdown and xlsx; a model's config.json) and of its manifest: before the full check
#: (:func:`refuse_streams_onto_inputs`) has run, a help, version or usage text goes into no such file
#: (:func:`refuse_chatter`).
_DATA_SUFFIXES = (".yaml", ".yml", ".json", ".csv", ".md", ".xlsx")

#: The key of the root context's ``obj`` that :func:`refuse_streams_onto_inputs` sets once it has passed: from then
#: on the streams are known to point into none of the run's files (:func:`refuse_chatter` passes).
CHECKED = "streams_checked"


def _stream_name(fd: int) -> str | None:
    """The path ``fd`` was opened by when it is a regular file (Linux's ``/proc/self/fd``; None elsewhere or when
    it cannot be read)."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)")
    except (OSError, ValueError):
        return None


def _data_file(fd: int) -> str | None:
    """The path of ``fd`` when it is a regular file with a data suffix (:data:`_DATA_SUFFIXES`) or named as
    planner's own files (``.planner-*``: the manifest, a staging folder's files); else None."""
    name = _stream_name(fd)
    if name is None:
        return None
    base = os.path.basename(name)
    return name if base.lower().endswith(_DATA_SUFFIXES) or base.startswith(".planner-") else None


def refuse_chatter(fds: Iterable[int] = (1, 2), *, checked: bool = False) -> None:
    """Exit 2 before a help, version or usage text is printed, when one of the streams ``fds`` (1: standard output,
    2: standard error) is a regular file named as a data file (:func:`_data_file`: ``.yaml``, ``.yml``, ``.json``,
    ``.csv``, ``.md``, ``.xlsx``, ``.planner-*``), unless the full check has run (``checked``: the root context's
    ``obj[CHECKED]``, set by :func:`refuse_streams_onto_inputs`).
    Such a text comes before the command line is read, so the files it could land in (a model's config.json that
    only the scenario names, a cached hub config.json, a report of the default output folder) are not known yet;
    no help or usage line belongs in a data file, and a ``.txt`` or ``.log`` file still takes it. The refusal is
    one ``Error:`` line on the other stream, or nothing where that stream is such a file too."""
    if checked:
        return
    named = {fd: _data_file(fd) for fd, _ in _STREAMS}
    hit = next((fd for fd in fds if named.get(fd)), None)
    if hit is None:
        return
    name = dict(_STREAMS)[hit]
    other_fd = 2 if hit == 1 else 1
    if not named.get(other_fd):
        other = sys.stderr if hit == 1 else sys.stdout
        line = escape_unsafe(f"Error: {name} is {named[hit]}, a data file (a report, a manifest, an input such as a "
                             f"scenario or a model's config.json); planner writes no help, version or usage text into "
                             f"one. Redirect {name} to another file (a .txt or .log file).")
        _say(other, line)
    sys.exit(2)


def _say(stream: Any, line: str) -> None:
    """Write ``line`` to ``stream`` (the standard stream that is no protected file), if it is open and takes it."""
    try:
        if stream is not None:
            stream.write(line + "\n")
            stream.flush()
    except (OSError, ValueError):
        pass


#: What :func:`_startup_files` are, for the refusal.
_STARTUP = ("a file of planner's installation or of the Python it runs on (site-packages, the standard library, the "
            "environment's scripts or pyvenv.cfg, the interpreter and its shared library), or one Python runs at "
            "start-up (a .pth, sitecustomize or usercustomize file of a folder on its module search path)")


def _installation_streams() -> Iterator[Path]:
    """The standard streams that are files of the Python installation planner runs on: any file under a folder
    Python imports installed packages or the standard library from, or its scripts folder (sysconfig's purelib,
    platlib, stdlib, platstdlib, scripts; the site folders), the environment's pyvenv.cfg, and a sitecustomize or
    usercustomize module or package, or a .pth, in any folder on sys.path (PYTHONPATH's too): written into, every
    later start of planner (a dependency such as click) or of Python fails or runs what was written (h37a 14, 17;
    h38b N4). Judged by the stream's path (Linux's /proc/self/fd), links resolved."""
    from planner.core.importpath import installation_roots

    roots = installation_roots()
    search = [os.path.realpath(p) for p in sys.path if isinstance(p, str) and p and os.path.isdir(p)]
    cfg = os.path.realpath(os.path.join(sys.prefix, "pyvenv.cfg"))
    for fd, _name in _STREAMS:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                continue
            where = os.path.realpath(os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)"))
        except (OSError, ValueError):
            continue
        if where == cfg or any(where.startswith(r.rstrip("/") + "/") for r in roots):
            yield Path(where)
            continue
        if st.st_nlink > 1 or (st.st_nlink == 1 and not _names_it(where, st)):
            # a hard link elsewhere to such a file (h39a N1), or one whose name was removed after the shell opened it
            # (h40a N1: `exec 3>>link; rm link`, the file left with one link, its own): found by device and inode.
            # A file with no link left (a removed temporary file, pytest's capture file) is none of the installation's
            other = _linked_in(roots, cfg, (st.st_dev, st.st_ino)) or _linked_startup(search, (st.st_dev, st.st_ino))
            if other is not None:
                yield Path(where) if _names_it(where, st) else Path(other)  # a name the refusal can stat and show
                continue
        for folder in search:
            if where.startswith(folder.rstrip("/") + "/"):
                first = where[len(folder.rstrip("/")) + 1:].split("/")[0]
                if startup_name(first):
                    yield Path(where)
                    break


#: What :func:`_other_sets` are, for the refusal.
_OTHER_SET = ("a report set's manifest or a report it lists, or a file of a staging folder (planner's own files in "
              "a folder it writes reports into: written into, the next run there takes the set as changed or the "
              "folder as not planner's)")


def _other_sets() -> Iterator[Path]:
    """The standard streams that are a report folder's bookkeeping, whatever folder it is in (h39a m6: the checks
    of the run's own --out do not see another folder's): a file named as planner names its own there (the manifest
    ``.planner-reports.json``, its temporaries, a staging folder's files: planner.core.protected.planners_files_in
    without the report suffixes), or a report the manifest beside it lists (planner.core.manifest.read_manifest; a
    folder whose manifest cannot be read is judged by names only), and a manifest by its first bytes, whatever its
    name (a hard link, a removed name). Judged by the stream's path (Linux's /proc/self/fd), links resolved. A hard
    link elsewhere to a report (not a manifest) is not found: no index of every manifest exists (a known limit)."""
    from planner.core.errors import OutputError
    from planner.core.manifest import read_manifest

    for fd, _name in _STREAMS:
        name = _stream_name(fd)
        if name is None:
            continue
        where = Path(os.path.realpath(name))
        parts = (where.name, where.parent.name)
        if any(p.startswith((".planner-", "..planner-")) for p in parts):
            yield where
            continue
        if _is_manifest(fd):  # by its bytes: another name of a set's manifest, a hard link or one removed (h41a N1)
            yield where if os.path.exists(where) else Path(f"/proc/self/fd/{fd}")
            continue
        try:
            listed = read_manifest(where.parent)
        except (OutputError, OSError, ValueError):
            continue
        if where.name in listed:
            yield where


def _is_manifest(fd: int) -> bool:
    """Whether the regular file open as ``fd`` begins as every manifest planner writes does
    (planner.core.manifest.is_manifest_head), read through a descriptor of its own (the stream may be write-only)."""
    from planner.core.manifest import is_manifest_head

    try:
        with open(f"/proc/self/fd/{fd}", "rb") as fh:
            return is_manifest_head(fh.read(64))
    except (OSError, ValueError):
        return False


def _interpreter_files() -> Iterator[Path]:
    """The interpreter's executable and shared library (planner.core.importpath.interpreter_files), compared with
    the streams by device and inode (:func:`_refuse`): a hard link to them anywhere is the file."""
    from planner.core.importpath import interpreter_files

    yield from (Path(f) for f in interpreter_files())


def _startup_files() -> Iterator[Path]:
    """Files whose lines Python runs or reads at every start, or that the installed distribution ``planner`` is
    made of: each ``*.pth``, ``sitecustomize.py`` and ``usercustomize.py`` in the folders Python imports installed
    packages from (``site.getsitepackages``, the user's, and the ``site-packages``/``dist-packages`` folders on
    ``sys.path``: a ``.pth`` line that starts with ``import`` is run, Python documentation, ``site``), and the files
    the distribution's RECORD lists (its ``.pth`` and ``__editable__`` finder among them: written into, every
    Python start in that environment fails, h37a 8)."""
    import site

    folders: list[str] = []
    try:
        folders += list(site.getsitepackages()) + [site.getusersitepackages()]
    except (AttributeError, OSError, ValueError):
        pass
    folders += [p for p in sys.path if isinstance(p, str) and os.path.basename(p.rstrip("/")) in
                ("site-packages", "dist-packages")]
    for folder in dict.fromkeys(folders):
        try:
            entries = list(os.scandir(folder))
        except (OSError, ValueError, TypeError):
            continue
        for e in entries:
            if startup_name(e.name):
                yield Path(e.path)
    from importlib import metadata

    try:
        dist = metadata.distribution("planner")
        files = dist.files or []
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return
    for f in files:
        try:
            yield Path(os.path.normpath(dist.locate_file(f)))  # 'site-packages/../../../bin/planner' shown plain (h38a 7)
        except (OSError, ValueError, TypeError):
            continue


def _names_it(path: str, st: os.stat_result) -> bool:
    """Whether ``path`` names the file of ``st`` now (False where the name was removed or now names another file:
    the stream's file then has another name, or none, and is looked up by device and inode)."""
    try:
        other = os.stat(path)
    except (OSError, ValueError):
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _linked_in(roots: list[str], cfg: str, ident: tuple[int, int]) -> str | None:
    """The path of a file of device and inode ``ident`` under one of ``roots`` (walked only on that device: a hard
    link cannot cross file systems), or ``cfg``; None when there is none. Walked only for a stream with more than one
    link, so a plain redirection costs nothing."""
    try:
        st = os.stat(cfg)
        if (st.st_dev, st.st_ino) == ident:
            return cfg
    except OSError:
        pass
    from planner.core.protected import file_of_id

    return file_of_id(roots, ident)


def _linked_startup(search: list[str], ident: tuple[int, int]) -> str | None:
    """The path of a start-up file (a .pth, or a sitecustomize/usercustomize module or package's file) directly in a
    folder of ``search`` (sys.path) that is the file of device and inode ``ident``; None when there is none. Only
    those names: the current folder on sys.path (``python -m``) holds the stream's own file."""
    for folder in search:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if not startup_name(e.name):
                continue
            paths = [e.path]
            if e.is_dir(follow_symlinks=False):
                try:
                    paths = [os.path.join(e.path, n) for n in os.listdir(e.path)]
                except OSError:
                    continue
            for path in paths:
                try:
                    other = os.stat(path)
                except OSError:
                    continue
                if (other.st_dev, other.st_ino) == ident:
                    return path
    return None


def _targets() -> dict[str, tuple[int, int]]:
    """Each standard stream that is a regular file, by name, to its device and inode (both may be one file)."""
    return {name: ident for fd, name in _STREAMS if (ident := _ident(fd)) is not None}


def _refuse(targets: dict[str, tuple[int, int]], kinds: Iterable[tuple[str, Iterable[Path]]]) -> None:
    """Exit 2 when a stream of ``targets`` is one of the files of ``kinds`` ((what they are, files)), saying so on
    the other stream, unless that stream is such a file too (then nothing is written anywhere)."""
    found: dict[str, tuple[Path, str]] = {}
    for kind, files in kinds:
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            for name, ident in targets.items():
                if ident == (st.st_dev, st.st_ino) and name not in found:
                    found[name] = (f, kind)
        if len(found) == len(targets):
            break
    if not found:
        return
    name, (f, kind) = next(iter(found.items()))
    other_name = "standard error" if name == "standard output" else "standard output"
    other = sys.stderr if name == "standard output" else sys.stdout
    if other_name not in found:  # both streams onto such files: the refusal would go into one of them
        line = escape_unsafe(f"Error: {name} is {f}, {kind}; planner does not write into it. Redirect "
                             f"{name} to another file.")
        _say(other, line)
    sys.exit(2)


__all__ = ["refuse_chatter", "refuse_streams_early", "refuse_streams_onto_inputs"]
