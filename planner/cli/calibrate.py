"""The ``planner calibrate`` command: measure a workload on this machine's GPU, save the overheads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import echo, handle_errors, input_file_option, one_catalog
from planner.cli.outopt import out_dir_option
from planner.cli.options import estimate_options
from planner.core.escape import json_text


@click.command(name="calibrate", cls=opts.BoolSpellingCommand)
@click.option("--workload", "workload_file", type=opts.PathType(dir_okay=False), callback=input_file_option,
              help="Workload YAML (same keys).")
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--steps", default=3, show_default=True, type=opts.IntRange(2, 100), help="Steps to run.")
@click.option("--out", "calibration_file", type=opts.PathType(dir_okay=False), callback=out_dir_option,
              help="Calibration file to update (default $XDG_CONFIG_HOME/planner/calibration.yaml, else "
                   "~/.config/planner/calibration.yaml).")
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as one JSON object (sizes in bytes).")
@estimate_options
@handle_errors
def calibrate(workload_file: str | None, catalog_dir: str | None, steps: int, calibration_file: str | None,
              as_json: bool, **options: Any) -> None:
    """Measure a workload on this machine's NVIDIA GPU and save the runtime overheads.

    Runs a few real steps with a randomly initialised model (no downloads), prints
    max_memory_allocated, max_memory_reserved and the device's used memory against the
    estimate, and saves the CUDA context size and the reserved/allocated ratio for this GPU
    model; later 'planner estimate --gpu ID' on the same GPU model uses them. Needs PyTorch
    with CUDA ('pip install .[validate]' plus a CUDA build of torch).

    Takes the workload options of 'planner estimate' (and --workload, --json), not --gpu,
    --headroom or --calibration: it measures the GPU it runs on (pick one with
    CUDA_VISIBLE_DEVICES) and writes the file named by --out. The run is one process on one GPU:
    full or LoRA training with a torch recipe and AdamW, no ZeRO; or Transformers generate with
    16/32-bit weights. Other settings are refused; options that do not change GPU memory
    (grad_accum, host RAM and time inputs) are named in a note.

    \b
    Example:
      planner calibrate --model llama-3.2-1b --task train --recipe pure-bf16 --micro-batch 2 --seq-len 512
      planner calibrate --model qwen2.5-0.5b --task infer --weights bf16 --context 2048 --concurrency 4
    """
    from planner.validate.calibrate import Calibration, run_calibration, save_calibration, save_path
    from planner.memory import estimate as run_estimate
    from planner.core.units import GiB

    from planner.api.inputs import given_options, read_workload
    from planner.core.errors import DestinationError
    from planner.core.reportset import refuse_input, refuse_protected
    from planner.validate.calibrate import load_calibrations, refuse_linked

    catalog = opts.load_catalog_option(catalog_dir)
    given = given_options(options)
    workload, written = read_workload(catalog, workload_file, given, function="calibrate")
    check_calibration_run(workload, given, written, workload_file)
    unused = [k for k in NOT_IN_CALIBRATION if k in given or k in written]
    est = run_estimate(workload)
    # where the result goes, known before the measurement (no HOME and no --out: said now)
    path = save_path(Path(calibration_file) if calibration_file else None)
    # never into planner's own catalog or package: refused before the measurement, and before the input rule, so
    # that a shipped catalog file is said as planner's own, not as "an input" a report never replaces (h38a 10)
    try:
        refuse_protected(path.parent, file_name=path.name)
    except DestinationError as exc:
        if calibration_file:
            raise
        # no --out was given: the place came from XDG_CONFIG_HOME or HOME, and that is what to change
        raise DestinationError(exc.cli_line().split(" Give another --out", 1)[0] + " That is the default calibration "
                               "file, from XDG_CONFIG_HOME (else HOME): set it to a folder outside, or give --out "
                               "with a file outside.") from None
    refuse_input(path, calibration_inputs(workload_file, workload, catalog))
    refuse_linked(path)
    from planner.core.atomic import is_loop, loop_line

    if is_loop(path.parent):  # a symlink loop on the way: said as one, naming the link (h26a m4)
        raise DestinationError(loop_line(path))
    for folder in (path.parent, *path.parent.parents):  # a dangling link on the way: said now, not after measuring
        if os.path.islink(folder) and not os.path.exists(folder):
            from planner.core.atomic import dangling_line

            raise DestinationError(dangling_line(folder))
    try:
        refuse_unwritable_out(path)  # a read-only file system, /proc or /sys, a file as its folder: said now
    except DestinationError as exc:
        if calibration_file:
            raise
        # no --out was given: the place came from XDG_CONFIG_HOME or HOME, and that is what to change (h23a m3)
        fit = "on a disk" if "pseudo file system" in exc.cli_line() else "you can write"
        raise DestinationError(exc.cli_line().split(" Give --out", 1)[0] + " That is the default calibration file, "
                               f"from XDG_CONFIG_HOME (else HOME): set it to a folder {fit}, or give --out with a "
                               f"file {fit}.") from None
    from planner.core.sharing import OWN_WHY, refuse_shared_above, refuse_shared_folder

    hint = "Give --out a file in a folder only you can write, or set the folder's sticky bit (chmod +t)."
    own = f"Give --out a file in a folder of your own instead: {OWN_WHY}"  # another user's folder (h28a m3)
    if path.parent.is_dir():  # a folder (or a link on the way) another user can change: the file could land elsewhere
        refuse_shared_folder(path.parent, "the calibration file's folder", hint, own=own)
    else:  # a folder the save will make (a first ~/.config/planner): the folders above it, now (h21a m2)
        refuse_shared_above(path.parent, "the calibration file's folder", hint, own=own)
    if calibration_file:  # a device or a pipe as --out: said as the output it is, not as an input file
        refuse_odd_out(path)
        refuse_catalog_name(path, catalog_dir)
    if path.exists():  # a report or cloud.yaml planner wrote, as its folder's manifest lists it (h23a m5)
        from planner.core.destinations import written_set
        from planner.core.manifest import MANIFEST

        owner = written_set(path)
        if owner is not None:
            from planner.core.names import escape_unsafe

            raise DestinationError(f"{escape_unsafe(str(path))}: is a file planner wrote (set "
                                   f"'{escape_unsafe(owner)}', as {MANIFEST} beside it "
                                   "lists it), not a calibration file, and calibrate would replace it. Give --out "
                                   "another file, e.g. --out ./calibration.yaml.")
    if path.exists():  # the file the result is added to is read now, not after the measurement: one that is not a
        load_calibrations(path)  # calibration file (a report, a manifest, bad YAML) is refused before it starts
    m = run_calibration(workload, steps=steps)
    cal = Calibration(m["gpu_name"], m["cuda_context_bytes"], m["allocator_fraction"], m["measured_on"],
                      m["versions"])
    saved_notes = save_calibration(cal, path)
    if as_json:
        click.echo(json_text({**m, "estimate": {"per_gpu_allocated_bytes": est.per_gpu_allocated_bytes,
                                                 "per_gpu_total_bytes": est.per_gpu_total_bytes},
                               "saved_to": str(path), "not_in_the_run": unused}, indent=2))
        for note in saved_notes:
            echo(f"Note: {note}", err=True)
        return
    echo(f"GPU: {m['gpu_name']} ({m['device_total_bytes'] / GiB:,.2f} GiB)")
    echo(f"  max_memory_allocated {m['max_memory_allocated_bytes'] / GiB:,.3f} GiB"
               f"   estimate (tensors) {est.per_gpu_allocated_bytes / GiB:,.3f} GiB")
    echo(f"  max_memory_reserved  {m['max_memory_reserved_bytes'] / GiB:,.3f} GiB"
               f"   (allocator overhead {m['allocator_fraction']:.1%})")
    echo(f"  device used          {m['device_used_bytes'] / GiB:,.3f} GiB"
               f"   estimate (total) {est.per_gpu_total_bytes / GiB:,.3f} GiB")
    echo(f"  CUDA context         {m['cuda_context_bytes'] / GiB:,.3f} GiB")
    echo(f"Saved to {path}")
    for note in saved_notes:
        echo(f"Note: {note}")
    if unused:
        echo(f"Note: {', '.join(unused)} do not change GPU memory (time, host RAM or cost inputs); the "
                   "calibration run does not use them.")


#: Workload keys that change time, host RAM or cost but not GPU memory: the calibration run leaves them out.
NOT_IN_CALIBRATION = ("grad_accum", "dataloader_workers", "dataset_size", "dataset_format", "checkpoint_dtype",
                       "low_cpu_mem_usage", "pin_memory", "dataset_tokens", "epochs", "hours_per_month",
                       "tokens_per_month", "tokens_per_request", "requests_per_hour")


def check_calibration_run(workload: Any, given: dict[str, Any], written: dict[str, Any],
                           workload_file: str | None) -> None:
    """Refuse a workload the calibration run cannot reproduce, at the option or file key that chose it."""
    from planner.api.inputs import tp_from_gpus
    from planner.core.errors import ScenarioError
    from planner.validate.calibrate import unsupported
    from planner.workload.inputs import OptionError

    copies = workload.infer.replicas if workload.infer is not None else 1  # --gpus N is N / tp of them
    if workload.infer is not None and "gpus" in given and copies > 1:
        raise OptionError(f"planner calibrate runs one replica on one GPU, not {copies} replicas",
                          entry="gpus", hint="Leave --gpus out (the overheads it measures are per GPU).")
    why = unsupported(workload)
    if why is None:
        return
    key, problem, hint = why
    if key == "tp" and tp_from_gpus(given, written):
        raise OptionError(problem, entry="gpus", hint="Leave --gpus out (the overheads it measures are per GPU).")
    if key in given or key not in written:
        # an option, or a default ('the default' then says why the user did not see it)
        default = "" if key in given else f"; that is the default, as --{key.replace('_', '-')} was not given"
        raise OptionError(problem + default, entry=key, hint=hint)
    raise ScenarioError(problem, file=workload_file, line=getattr(written, "lines", {}).get(key), entry=key,
                        hint=hint)


def calibration_inputs(workload_file: str | None, workload: Any, catalog: Any) -> list[Path]:
    """The files a calibration run read (the workload file, the catalog's files and SOURCES.md, the
    model's config.json): the calibration file (--out) is never one of them
    (planner.api.plans.run_inputs)."""
    from types import SimpleNamespace

    from planner.api.plans import run_inputs

    one = SimpleNamespace(variants=[SimpleNamespace(workload=workload)])
    return run_inputs(SimpleNamespace(file=workload_file or "", workloads=[one]), catalog)


def refuse_catalog_name(path: Path, catalog_dir: str | None) -> None:
    """Refuse a ``calibrate --out`` YAML file in a catalog overlay folder: the ``--catalog`` folder of this run, or a
    folder that holds a catalog file (``gpus.yaml``, ``cloud.yaml``: planner.catalog.loader.CATALOG_FILES). Every
    later run given that folder as ``--catalog`` would read a catalog file's name as one and refuse any other
    ``*.yaml`` there (planner.catalog.loader.overlay_files), so it would fail (h40a N8), as a name of planner's
    bookkeeping there would mislead later report runs.

    Raises:
        DestinationError: naming the file, the folder and a file to give instead.
    """
    from planner.catalog.loader import CATALOG_FILES
    from planner.core.errors import DestinationError
    from planner.core.names import escape_unsafe

    if Path(path.name.strip()).suffix.lower() not in (".yaml", ".yml"):
        return
    folder = path.parent
    try:
        given = catalog_dir is not None and os.path.samefile(folder, catalog_dir)
        held = [n for n in CATALOG_FILES if n != path.name and (folder / n).is_file()]
        # the overlay's own catalog file (ram.yaml alone there): read as a calibration file it fails as a schema
        # error of that file, an invitation to edit the catalog (h41a N7)
        itself = path.name in CATALOG_FILES and (folder / path.name).is_file()
        here = os.path.samefile(folder, os.curdir)
    except (OSError, ValueError):
        return
    if not given and not held and not itself:
        return
    example = Path.home() / "calibration.yaml" if here else Path("calibration.yaml")
    if itself and not given:
        from planner.core.destinations import written_set

        if written_set(path) is not None:
            return  # a cloud.yaml planner wrote: said below with the set that wrote it
        raise DestinationError(f"{escape_unsafe(str(path))}: is a catalog file of an overlay folder, not a calibration "
                               "file: calibrate would read it as one and replace it, and every later run reading that "
                               f"folder as an overlay would fail. Give a file outside it, e.g. "
                               f"--out {escape_unsafe(str(example))}.")
    what = "the --catalog overlay folder of this run" if given else f"a catalog overlay folder (it holds {held[0]})"
    read_as = f"its {path.name}" if path.name in CATALOG_FILES else "a catalog file"
    raise DestinationError(f"{escape_unsafe(str(path))}: is a YAML file in {what}: every later run reading that "
                           f"folder as an overlay would read it as {read_as} and fail. Give a file outside it, e.g. "
                           f"--out {escape_unsafe(str(example))}.")


def refuse_odd_out(path: Path) -> None:
    """Refuse a ``calibrate --out`` that exists and is no regular file or folder (a device such as /dev/null, a
    named pipe, a socket): calibrate reads the file it adds its result to and replaces it, so the line names what
    the path is and asks for a file (planner.core.infile's words for the kind).

    Raises:
        DestinationError: naming the path, what it is and what to give.
    """
    import stat

    from planner.core.errors import DestinationError
    from planner.core.infile import _kind

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing (created), or unreadable: said by the checks that follow
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    raise DestinationError(f"{path}: is {_kind(mode)}, not a regular file: calibrate reads the calibration file it "
                           "adds its result to, then replaces it. Give --out the path of a calibration file (it is "
                           "created if missing), e.g. --out ./calibration.yaml.")


def refuse_unwritable_out(path: Path) -> None:
    """Refuse, before the measurement, a calibration file that could not be written when it ends (the checks
    ``plan --out`` makes before its work): on a pseudo file system (/proc, /sys: planner.core.pseudofs), below a
    regular file (or anything that is not a folder), or in a folder (the nearest one that exists, where the
    file's folder is still to be made) this user cannot write: a read-only file system, or no write permission.

    Raises:
        DestinationError: naming the file, the folder and why, with what to give instead.
    """
    import stat

    from planner.core.errors import DestinationError
    from planner.core.infile import _kind
    from planner.core.pseudofs import refuse_pseudo_fs

    hint = "Give --out a file in a folder you can write (it is created if missing), e.g. --out ./calibration.yaml."
    refuse_pseudo_fs(path, "--out", "a file on a disk (its folder is created if missing)")
    for folder in (path.parent, *path.parent.parents):
        try:
            st = os.stat(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue  # still to be made (or below a file: that file is found further up)
        except OSError:
            return  # cannot be looked at: said by the write itself
        if not stat.S_ISDIR(st.st_mode):
            kind = "a regular file" if stat.S_ISREG(st.st_mode) else (_kind(st.st_mode) or "not a folder")
            raise DestinationError(f"{path}: would be made in {folder}, which is {kind}, not a folder. " + hint)
        if not os.access(folder, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
            try:
                why = "Read-only file system" if os.statvfs(folder).f_flag & os.ST_RDONLY else "Permission denied"
            except OSError:
                why = "Permission denied"
            raise DestinationError(f"{path}: cannot be written: the folder {folder} is not writable ({why}), so the "
                                   "measurement's result could not be saved. " + hint)
        return
