"""Standard output and standard error never written into an input of the run or a file of planner's own.

A shell redirection names its file before planner runs (``planner catalog gpus 1<> catalog/gpus.yaml``,
``planner estimate --workload w.yaml >> w.yaml``), so the ``--out`` checks never see it. Before a command
runs, :func:`refuse_streams_onto_inputs` compares each of the two streams that is a regular file, by
device and inode (a hard link or a bind mount of the file is the file), with the files the command's
options and arguments name (a file, or the files directly inside a folder: an overlay folder, a model
folder), the files a scenario or workload file reaches (a workload's model folder or config.json, read
from the file's YAML before the run: planner.api.plans.named_files; the report writer's own list of a
run's inputs is planner.api.plans.run_inputs, which shares its model paths), the default calibration
file an estimate reads, the files directly inside ``--out`` (reports the run may replace or remove: said as
such, not as inputs), and every file of the planner package and of the shipped catalog beside it
(planner.core.protected.protected_folders). A match is refused before anything is written, as one
``Error:`` line on the other stream and exit status 2.

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
    planner.api.plans.named_files), the cached config.json of a ``--model`` hub id, and the default
    calibration file an estimate with ``--gpu`` reads (planner.validate.calibrate.default_path)."""
    from planner.api.plans import model_files, named_files

    found: list[Path] = []
    for key in ("scenario_file", "workload_file"):
        if isinstance(params.get(key), str) and params[key]:
            found += named_files(params[key])
    if isinstance(params.get("model"), str) and params["model"].strip():
        found += model_files(params["model"].strip(), Path("."))
    if params.get("gpu_id") and "calibration_file" in params and not params.get("calibration_file"):
        from planner.validate.calibrate import default_path

        path = default_path()
        if path is not None:
            found.append(path)
    return found


def refuse_streams_onto_inputs(ctx: click.Context) -> None:
    """Exit 2 (one ``Error:`` line on the other stream) when standard output or standard error is a
    regular file that the command reads (its options' and arguments' files) or that planner ships
    (module docstring); return otherwise. Costs nothing when neither stream is a regular file."""
    targets = {ident: name for fd, name in _STREAMS if (ident := _ident(fd)) is not None}
    if not targets:
        return
    from planner.core.protected import protected_folders

    given = [p for k, v in ctx.params.items() if k != "out_dir" for p in _paths(v)] + _reached(ctx.params)
    for kind, files in (("an input of this run", _files(given, walk=False)),
                        ("a file in the output folder (--out), which this run may replace or remove",
                         _files(_paths(ctx.params.get("out_dir")), walk=False)),
                        ("a file of planner's own package or shipped catalog", _files(protected_folders(), walk=True))):
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            name = targets.get((st.st_dev, st.st_ino))
            if name is None:
                continue
            other = sys.stderr if name == "standard output" else sys.stdout
            line = escape_unsafe(f"Error: {name} is {f}, {kind}; planner does not write into it. Redirect "
                                 f"{name} to another file.")
            try:
                if other is not None:
                    other.write(line + "\n")
                    other.flush()
            except (OSError, ValueError):
                pass
            sys.exit(2)


__all__ = ["refuse_streams_onto_inputs"]
