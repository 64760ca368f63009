"""Calibration on the user's own NVIDIA GPU: measured CUDA context and allocator overhead.

``planner calibrate`` runs a few real steps of a workload on the local GPU with a randomly
initialised model (no downloads), records ``torch.cuda.max_memory_allocated``,
``torch.cuda.max_memory_reserved`` and the device's used memory (``torch.cuda.mem_get_info``),
prints them against the estimate, and saves a calibration: the CUDA context size (device
memory in use before the first tensor) and the reserved/allocated ratio, per GPU model. Later
``planner estimate --gpu ID`` runs on that GPU model use it and say so.

Sources: PyTorch docs, "CUDA semantics - memory management" (allocated vs reserved) and
``torch.cuda.mem_get_info`` (cudaMemGetInfo).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.catalog.devices import TORCH_DEVICE_NAMES, catalog_id_for_device, device_key  # noqa: F401  (re-exported)
from planner.core.errors import InputError, PlannerError
from planner.core.names import OneLineNotes, is_blank_looking, name_problem
from planner.memory.overheads import RuntimeOverheads
from planner.core.clock import utc_today


class CalibrationUnavailable(PlannerError):
    """Calibration cannot run here (no torch, no CUDA GPU, or an unsupported workload)."""


@dataclass(frozen=True)
class Calibration:
    """Measured runtime overheads of one GPU model.

    Attributes:
        gpu_name: as ``torch.cuda.get_device_name`` reports it.
        cuda_context_bytes: device memory in use before the first tensor (context, kernels).
        allocator_fraction: max_memory_reserved / max_memory_allocated - 1 over the run.
        measured_on: ISO date.
        versions: torch and CUDA versions.
    """

    gpu_name: str
    cuda_context_bytes: int
    allocator_fraction: float
    measured_on: str
    versions: dict[str, str]

    def overheads(self, path: Path) -> RuntimeOverheads:
        """Runtime overheads for the memory model, citing this calibration."""
        base = RuntimeOverheads()
        return RuntimeOverheads(cuda_context_bytes=self.cuda_context_bytes, workspace_bytes=base.workspace_bytes,
                                nccl_bytes=base.nccl_bytes, allocator_fraction=max(0.0, self.allocator_fraction),
                                source=f"calibration {path} ({self.gpu_name}, {self.measured_on})")


def default_path(env: dict[str, str] | None = None) -> Path | None:
    """Where the calibration file is kept, or None when no place is known.

    ``$XDG_CONFIG_HOME/planner/calibration.yaml``; without it (unset, empty or relative, which the
    XDG Base Directory Specification 0.8 says to ignore), ``$HOME/.config/planner/calibration.yaml``;
    without HOME, the home directory the password database gives the user; None when there is
    none either (a container run under a user id with no entry, HOME unset): estimates then use no
    calibration, and ``planner calibrate`` asks for ``--out``.
    """
    env = dict(os.environ if env is None else env)
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "planner" / "calibration.yaml"
    home = env.get("HOME", "") or _password_home()
    if not home:
        return None
    return Path(home) / ".config" / "planner" / "calibration.yaml"


def refuse_relative_xdg(env: dict[str, str] | None = None, *, writing: bool = False) -> None:
    """Refuse an ``XDG_CONFIG_HOME`` that is set to a relative path: :func:`default_path` follows the XDG Base
    Directory Specification 0.8 and passes over it ("If an implementation encounters a relative path in any of
    these variables it should consider the path invalid and ignore it"), so the default calibration file would be
    read (``writing``: written) under ``~/.config`` without a word (h38a 13). Called only where the default file is
    used (no ``--calibration``, no ``calibrate --out``).

    Raises:
        InputError: one line naming the variable, its value and what to do.
    """
    from planner.core.errors import InputError
    from planner.core.names import escape_unsafe

    value = dict(os.environ if env is None else env).get("XDG_CONFIG_HOME", "")
    if not value or os.path.isabs(value):
        return
    where = default_path(env)
    instead = f" ({escape_unsafe(str(where))})" if where is not None else ""
    verb = "write the calibration into" if writing else "read"
    hinted = _xdg_hint(value)
    raise InputError(f"XDG_CONFIG_HOME is {escape_unsafe(repr(value))}, a relative path, which the XDG Base Directory "
                     f"Specification says to ignore, so planner would {verb} the default calibration file under "
                     f"~/.config{instead} instead, without a word. Set it to an absolute path"
                     + (f" (XDG_CONFIG_HOME={hinted})" if hinted else "") + ", or unset it.")


def _xdg_hint(value: str) -> str | None:
    """The absolute XDG_CONFIG_HOME a relative ``value`` may have meant, as a shell word to paste, or None where
    none is told or the calibration file it gives would be refused as a destination (planner.core.outhint.
    refused_destination: site-packages, the shipped catalog...; h41a N4): '~/cfg' as ``"$HOME"/cfg`` (a quoted
    '~' the shell left), a blank value none, anything else under the current folder, ``"$PWD"/rel``."""
    from planner.core.names import shell_word
    from planner.core.outhint import refused_destination

    if not value.strip() or value != value.strip():
        return None  # ' ': a folder named blank is no path meant
    if value == "~" or value.startswith("~/"):
        base, rest, shown = os.path.expanduser("~"), value[2:], '"$HOME"'
    elif value.startswith("~"):
        return None  # '~user/x': another user's home, not told here
    else:
        base, rest, shown = os.getcwd() if os.path.isdir(".") else "", value, '"$PWD"'
    if not base or not os.path.isabs(base):
        return None
    target = os.path.join(base, rest, "planner", "calibration.yaml")
    if refused_destination(target, file=True):
        return None
    return f"{shown}/{shell_word(rest)}" if rest else shown


def _password_home() -> str:
    """The user's home directory from the password database ('' when the user has no entry)."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir or ""
    except (ImportError, KeyError, OSError):
        return ""


#: Why :func:`save_path` has nowhere to save, with what to do.
NO_HOME = ("planner calibrate has nowhere to save the calibration: XDG_CONFIG_HOME and HOME are not set and the "
           "user has no home directory. Give --out FILE (e.g. --out ./calibration.yaml; 'planner estimate "
           "--calibration FILE' reads it), or set XDG_CONFIG_HOME")


def save_path(given: Path | None, env: dict[str, str] | None = None) -> Path:
    """The calibration file ``planner calibrate`` writes: ``given`` (--out), else :func:`default_path`.

    Raises:
        OutputError: neither is known (:data:`NO_HOME`); the path is relative and the current folder was removed,
            or a folder on it (or the file) is named as planner's bookkeeping files
            (planner.core.outpath.refuse_bookkeeping_name: a later report run into the folder above would take
            it for its own).
        InputError: no ``given`` and XDG_CONFIG_HOME set to a relative path (:func:`refuse_relative_xdg`).
    """
    from planner.core.errors import OutputError
    from planner.core.outpath import refuse_bookkeeping_name

    if given is None:
        refuse_relative_xdg(env, writing=True)
    path = given if given is not None else default_path(env)
    if path is None:
        raise OutputError(NO_HOME + ".")
    refuse_linked(path)  # a link to a file (another set's manifest too) said as a link, not a folder's name (h41a N6)
    refuse_bookkeeping_name(path.parent, file_name=path.name)
    return path


def refuse_dangling_default(path: Path) -> None:
    """Refuse an absent default calibration file (:func:`default_path`) whose absence is a symbolic link that leads
    nowhere: the file itself a link to a missing file, or a folder on its path a link to a missing folder. The user
    linked a calibration that is gone; the estimate would quietly use no calibration. Refused as the default
    file's other odd kinds (a FIFO, a device, a folder) are, and as a dangling ``--out`` link is
    (planner.core.atomic.dangling_line).

    Raises:
        OptionError: naming the link, where it points, and what to do (the hint names --calibration, or
            calibration= in the API's words).
    """
    import os

    from planner.core.names import escape_unsafe

    for p in (path, *path.parents):
        if not os.path.islink(p) or os.path.exists(p):
            continue
        try:
            target = escape_unsafe(os.readlink(p))
        except OSError:
            target = "?"
        why = ("so there is no default calibration to read" if p == path else
               f"so the default calibration file {escape_unsafe(str(path))} cannot be read")
        from planner.workload.inputs import OptionError  # the hint names --calibration, or the API's calibration=

        raise OptionError(f"{escape_unsafe(str(p))}: is a link to a {'file' if p == path else 'folder'} that does not "
                          f"exist ({escape_unsafe(str(p))} -> {target}), {why}",
                          hint="Point the link at what 'planner calibrate' wrote, or remove it (then "
                               "estimates use no calibration), or give --calibration FILE.")


def refuse_linked(path: Path) -> None:
    """Refuse a calibration file that is a symbolic link or one of several hard links: replacing it
    would put a regular file where the link was (or leave the other names with the old bytes), as
    planner refuses for its reports.

    Raises:
        OutputError: saying which, with what to do.
    """
    import os
    import stat

    from planner.core.atomic import is_loop, loop_line
    from planner.core.errors import OutputError

    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISLNK(st.st_mode) and is_loop(path):  # a link that leads nowhere but round: said so (h26a m4)
        raise OutputError(loop_line(path, "file"))
    if stat.S_ISLNK(st.st_mode):
        from planner.core.names import path_word
        from planner.core.outhint import refused_destination

        target = os.path.realpath(path)
        hint = (f"the file it points to (--out {path_word(target)}), or another name"
                if not refused_destination(target, file=True) and os.path.isfile(target) else "another name")
        # a target a run refuses in turn (a shipped catalog file, a .pth, /proc/self/fd/1) is not hinted (h38a 9)
        raise OutputError(f"{path}: is a symbolic link, and planner does not replace a link with a file. Give --out "
                          f"{hint}.")
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise OutputError(f"{path}: has {st.st_nlink} hard links, and replacing it would leave the other names with "
                          "the old calibration. Give --out another name.")


# ----- which GPU a calibration is of ---------------------------------------------------------------

def calibration_applies(device_name: str, gpu: Any) -> bool:
    """Whether a calibration measured on ``device_name`` applies to ``gpu``: a catalog GPU (its
    ``id`` and ``name``) or a GPU name.

    A name in :data:`TORCH_DEVICE_NAMES` applies to its catalog id only; any other name (a card
    an overlay adds) applies to a GPU of exactly that name (:func:`device_key`). Never by substring.
    """
    gpu_id = getattr(gpu, "id", None)
    name = getattr(gpu, "name", gpu)
    mapped = catalog_id_for_device(device_name)
    if mapped is not None and gpu_id is not None:
        return mapped == gpu_id
    if mapped is not None and catalog_id_for_device(str(name)) is not None:
        return mapped == catalog_id_for_device(str(name))
    return device_key(device_name) == device_key(str(name))


def load_calibrations(path: Path, *, given: bool = False, default: bool = False) -> dict[str, Calibration]:
    """Calibrations by :func:`device_key` of their GPU name; an absent file gives none, unless the user
    named it (``given``: ``--calibration``, ``calibration=``). ``default``: ``path`` is the default file an estimate
    reads (:func:`default_path`), so a folder or a pipe there is said to be that file (:func:`_refuse_default_file`).

    Raises:
        InputError: the file exists but is not a calibration written by ``planner calibrate`` (two entries of one
            GPU, as :func:`calibration_applies` compares names, included); or it was ``given`` and does not exist;
            or the default file is absent through a dangling link (:func:`refuse_dangling_default`); with
            ``default``, the default file is no readable file (an OptionError naming it as the default one).
    """
    from planner.core.fields import Entry
    from planner.core.yamlio import YamlProblem, load_mapping

    try:
        data = load_mapping(path)
    except YamlProblem as exc:
        if exc.problem == "no such file" and not given:
            refuse_dangling_default(path)  # a link made to a calibration that is gone: said, not "no calibration"
            return {}
        if default and exc.line is None:  # a folder, a FIFO, a device, unreadable: the user named no path
            _refuse_default_file(path, exc.problem)
        if exc.problem == "no such file" and not exc.hint:  # the hint names the option, or the API's keyword
            from planner.workload.inputs import OptionError

            raise OptionError(exc.problem, file=str(path), hint="Give the file 'planner calibrate' wrote, or leave "
                              "--calibration out (the default file is used when it exists).") from None
        raise InputError(exc.problem, file=str(path), line=exc.line, entry=exc.path, hint=exc.hint) from None
    root = Entry(data, file=str(path))
    root.check_keys(["schema_version", "gpus"], required=["gpus"])
    # the catalog files' rule (planner.catalog.loader): a file written for another layout is refused, not misread
    # ('planner calibrate' writes 1; a hand-written file without the key is read as version 1)
    if "schema_version" in data and root.int("schema_version") != 1:
        raise root.error(f"version {root.int('schema_version')} is not supported", "schema_version",
                         "This planner reads schema_version 1 (docs/memory-model.md).")
    out = {}
    seen: dict[str, tuple[str, str]] = {}  # lookup key -> (the entry's path, its gpu_name)
    for e in root.children("gpus"):
        e.check_keys(["gpu_name", "cuda_context", "allocator_fraction", "measured_on", "versions"],
                     required=["gpu_name", "cuda_context", "allocator_fraction", "measured_on"])
        name = e.str("gpu_name")
        told = name_problem(name)  # 'NVIDIA\u3000L4', 'NVIDIA  L4', 'NVIDIA L4 ': as names are (h15b #5)
        if told:
            plain = " ".join("".join(" " if is_blank_looking(ch) else ch for ch in name).split())
            hint = (f"Write gpu_name: {plain!r}, with single ordinary spaces, as torch.cuda.get_device_name() reports "
                    "it ('planner calibrate' writes it so)." if plain and plain != name else told[1])
            raise e.error(told[0].replace("the name", "the GPU name").replace("another name", "another GPU name"),
                          "gpu_name", hint)
        # compared as the lookup compares them (calibration_applies): by catalog id where TORCH_DEVICE_NAMES
        # maps the name, else by device_key (case, runs of spaces and a leading 'NVIDIA ' ignored)
        key = catalog_id_for_device(name) or device_key(name)
        if key in seen:
            where, other = seen[key]
            raise e.error(f"duplicate gpu_name {name!r} (also {where}, {other!r}: the lookup reads both as one GPU, "
                          "ignoring case, runs of spaces and a leading 'NVIDIA ')", "gpu_name",
                          "Keep one entry per GPU: remove the one no longer measured.")
        seen[key] = (e.path, name)
        context = e.size("cuda_context", max=2**36)
        if context == 0:
            # a CUDA context always holds device memory for its code and data (CUDA C Programming Guide,
            # "Lazy Loading" keeps it small, not empty): 0 B is a failed measurement, not a GPU
            raise e.error("must be more than 0 B: every CUDA context holds device memory (its kernels and data), so "
                          "0 is no measurement", "cuda_context",
                          "Run 'planner calibrate' again on the GPU, or remove the entry (the estimate then uses the "
                         "default CUDA context).")
        if context < MIN_CUDA_CONTEXT_BYTES:
            raise e.error(f"{e.raw('cuda_context')!r} is not a CUDA context size: one holds hundreds of MiB (about "
                          "274 MiB measured by PyTorch with lazy loading, pytorch/pytorch#86509), and planner reads "
                          "none under 1 MiB", "cuda_context",
                          "Write the size with its unit as 'planner calibrate' measured it (e.g. 500 MiB), or run "
                          "'planner calibrate' again on the GPU.")
        fraction = e.number("allocator_fraction", min=0, max=10)
        if fraction > _MAX_ALLOCATOR_FRACTION:
            raise e.error(f"{fraction:g} is no allocator overhead: the fraction is max_memory_reserved / "
                          "max_memory_allocated - 1 ('planner calibrate'), and above 1 the allocator would hold over "
                          "twice what the tensors use", "allocator_fraction",
                          "Write the fraction (0.05 for 5 %), or run 'planner calibrate' again.")
        cal = Calibration(name, context, fraction, e.date("measured_on", past=True), _versions(e))
        out[device_key(cal.gpu_name)] = cal
    return out


def _refuse_default_file(path: Path, problem: str) -> None:
    """Refuse the default calibration file (:func:`default_path`) that cannot be read as a file (``problem``: a
    folder, a named pipe, a device, no permission), saying that it is the default one (the user named no path) and
    what to do: move it away or name another file.

    Raises:
        OptionError: naming the file; the hint names ``--calibration`` (``calibration=`` in the API's words).
    """
    from planner.workload.inputs import OptionError

    problem = problem.rstrip(".")
    raise OptionError(f"{problem}; it is the default calibration file (from XDG_CONFIG_HOME, else HOME), which an "
                      "estimate on a card reads when no calibration file is named", file=str(path),
                      hint="Move it away (an estimate then uses no calibration), or give --calibration FILE to read "
                           "another.") from None


#: The smallest cuda_context read: 1 MiB. No published figure gives a floor that holds on every GPU, driver and
#: CUDA release, so this one only refuses what cannot be a context at all (a size written without its unit's
#: prefix, '500 B' for '500 MiB'). Published contexts are hundreds of MiB: 287,047,680 B (274 MiB) with lazy
#: loading and 666,632,192 B without, with one 6.4 MB tensor, measured by cudaMemGetInfo
#: (pytorch/pytorch#86509); "~300MB" with lazy loading and ">1000MB" before CUDA 11.7 (pytorch/pytorch#107667,
#: a PyTorch maintainer); 1,343 MiB on a V100 (transformers docs, "Model training anatomy").
MIN_CUDA_CONTEXT_BYTES = 2**20


def _versions(e: Any) -> dict[str, str]:
    """The ``versions`` mapping of a calibration entry: package names to version texts ({} when absent).

    Raises:
        InputError: not a mapping (``versions: 2.13``), a key that is not a text, or a value that is not a
            non-empty printable text (a number such as ``cuda: 12.1`` reads as a float in YAML: quote it).
    """
    from collections.abc import Mapping

    from planner.core.fields import _kind

    value = e.raw("versions", None)
    example = "versions: {torch: \"2.5.1\", cuda: \"12.4\"}"
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise e.error(f"must be a mapping of package names to version texts, not {_kind(value)}", "versions",
                      f"Write {example}, as 'planner calibrate' saves it, or leave versions out.")
    child = e.child("versions")
    out = {}
    for key in value:
        if not isinstance(key, str) or not key.strip():
            raise child.error(f"key {key!r} is not a package name", None, f"Write {example}.")
        if isinstance(value[key], (int, float)) and not isinstance(value[key], bool):
            raise child.error(f"must be a version text, not the number {value[key]!r}", key,
                              f"Quote it: {key}: \"{value[key]}\" (YAML reads 12.1 as a number, 12.10 as 12.1).")
        if not isinstance(value[key], str):
            raise child.error("must be a version text such as \"2.5.1\"", key, f"Write {example}.")
        if not _PACKAGE.fullmatch(key):  # h18b minor g: the names and versions as a package prints them
            raise child.error(f"key {key!r} is not a package name (letters, digits, '.', '_', '-')", None,
                              f"Write {example}.")
        text = child.str(key)
        if not _VERSION.fullmatch(text.strip()) and text.strip() != "None":
            raise child.error(f"{text[:64]!r} is not a version (digits first, then letters, digits, '.', '+', "
                              "'_' or '-', at most 64 characters)", key,
                              f"Write the version the package reports (torch.__version__, torch.version.cuda): "
                              f"{example}.")
        out[key] = text
    return out


#: A package name as PyPI spells one (PEP 508 names: letters, digits, '.', '_', '-'), and a version as packages
#: print theirs: torch.__version__ '2.5.1+cu124' or '2.6.0a0+git1b2c3d4' (PEP 440 with a local label),
#: torch.version.cuda '12.4' (and 'None' on a CPU build, which 'planner calibrate' saves as it reads it).
_PACKAGE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+_-]{0,63}")


#: The largest allocator_fraction read: reserved at most twice the allocated peak. ZeRO (Rajbhandari et al.,
#: SC 2020, arXiv:1910.02054, section 3.2 "Residual Memory Consumption", "Memory Fragmentation") reports out-of-
#: memory errors from fragmentation with over 30 % of memory still free, that is reserved-but-unused of
#: about 0.3 / 0.7 = 0.43 of what is allocated; 1 leaves more than twice that margin.
_MAX_ALLOCATOR_FRACTION = 1.0


def overheads_for_gpu(gpu: Any, path: Path | None, *, given: bool = False) -> RuntimeOverheads | None:
    """The calibrated overheads for ``gpu`` (a catalog GPU, or a GPU name), or None when that exact
    model was not calibrated (:func:`calibration_applies`) or there is no calibration file
    (``path`` None: :func:`default_path` knows no place; or the default file is absent).

    Args:
        given: the user named ``path`` (``--calibration``): its absence is an error, not "no calibration".

    Raises:
        InputError: as :func:`load_calibrations`; the entry's CUDA context is at least all the memory the card
            offers to processes (``Gpu.cuda_total_bytes``).
    """
    if path is None:
        return None
    for cal in load_calibrations(path, given=given, default=not given).values():
        if calibration_applies(cal.gpu_name, gpu):
            total = getattr(gpu, "cuda_total_bytes", None)
            if isinstance(total, int) and cal.cuda_context_bytes >= total:
                # a measured context is a few hundred MiB to about 1.3 GiB (the sources at the 1 MiB floor); one
                # as large as everything the card offers is a typo (GiB for MiB) or another card's entry
                from planner.core.errors import InputError
                from planner.core.units import GiB

                raise InputError(f"{path}: gpus ({cal.gpu_name}).cuda_context: {cal.cuda_context_bytes / GiB:,.2f} "
                                 f"GiB is as much as all the memory {getattr(gpu, 'id', gpu)} offers to processes "
                                 f"({total / GiB:,.2f} GiB), so it cannot be this card's CUDA context. Measure it "
                                 "again with 'planner calibrate', or correct the figure (MiB, not GiB?).")
            return cal.overheads(path)
    return None


def save_calibration(cal: Calibration, path: Path) -> list[str]:
    """Add or replace this GPU's entry in the calibration file (written atomically; the file is replaced only
    if it is still the one read, so an edit saved meanwhile is kept, and a chmod, setfacl or chgrp made on it
    meanwhile is carried over: planner.core.atomic.write_bytes). Returns the note lines to show (such a change).

    Raises:
        OutputError: ``path`` inside the shipped catalog or the planner package, or not writable; the file
            changed after it was read.
    """
    import yaml

    from planner.core.atomic import file_sha256, write_text
    from planner.core.reportset import refuse_protected

    # never into planner's own catalog or package folders
    refuse_protected(Path(path).parent, file_name=Path(path).name)
    refuse_linked(Path(path))
    # the file as read: replaced only if it still is that file when the new one takes its name (an edit saved
    # during the measurement is never lost; planner.core.atomic.write_bytes, expect)
    read = file_sha256(Path(path)) if os.path.lexists(path) else None
    existing = dict(load_calibrations(path))
    existing[device_key(cal.gpu_name)] = cal
    doc = {"schema_version": 1, "gpus": [
        {"gpu_name": c.gpu_name, "cuda_context": f"{c.cuda_context_bytes} B",
         "allocator_fraction": round(c.allocator_fraction, 4), "measured_on": c.measured_on,
         "versions": c.versions}
        for c in existing.values()]}
    notes: list[str] = OneLineNotes()  # each one line, the path's line feed or tab escaped
    write_text(path, yaml.safe_dump(doc, sort_keys=False), expect=read, notes=notes)
    return notes


def _plain(value: Any) -> Any:
    """A config value as plain dicts and lists (the catalog freezes nested mappings, which
    Transformers' config cannot deep-copy)."""
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


#: Recipes the calibration runs with plain torch (no fp32 master copy beside 16-bit weights).
TORCH_RECIPES = ("fp32", "amp-bf16", "amp-fp16", "pure-bf16", "pure-fp16")


def unsupported(workload: Any) -> tuple[str, str, str] | None:
    """The first setting of ``workload`` the calibration run cannot reproduce, or None.

    The run is one process on one GPU: Transformers with a random model, torch AdamW for training
    (full or LoRA, the torch recipes, no ZeRO), ``generate`` for inference (16/32-bit weights, the
    KV cache in the model dtype). Anything else would be measured as something it is not.

    Returns:
        (workload key, problem, hint) for the first setting it cannot run.
    """
    if workload.tp != 1:
        return ("tp", f"planner calibrate runs on one GPU, not tensor parallel over {workload.tp}",
                "Give tp: 1 (the overheads it measures are per GPU and apply to every tp).")
    if workload.gpus != 1:
        return ("gpus", f"planner calibrate runs on one GPU, not {workload.gpus}",
                "Give gpus: 1 (the overheads it measures are per GPU and apply to any count).")
    t, i = workload.train, workload.infer
    if t is not None:
        if t.framework != "transformers":
            return ("framework", f"planner calibrate runs a Transformers model with torch AdamW, not {t.framework}'s "
                    "stack", "Leave framework out (the CUDA context and allocator overhead it measures apply to every "
                    "framework on that GPU).")
        for key, on, what in (("loss_chunks", t.loss_chunks > 1, "a chunked loss"),
                              ("fused_linear_loss", t.fused_linear_loss, "a fused linear cross-entropy"),
                              ("offload_activations", t.offload_activations, "activation offloading"),
                              ("optimizer_in_backward", t.optimizer_in_backward, "an optimizer step in backward"),
                              ("compile", t.compile, "torch.compile")):
            if on:
                return (key, f"the calibration run is eager Transformers with its own loss and step, without {what}",
                        f"Leave {key} out; the overheads it measures apply to estimates with it on that GPU too.")
        if t.method == "qlora":
            return ("method", "planner calibrate runs full or LoRA training, not QLoRA (bitsandbytes)",
                    "Give method: full or lora; the CUDA context and allocator overhead it measures apply to QLoRA "
                    "estimates on that GPU too.")
        if t.load_in_8bit:
            return ("load_in_8bit", "planner calibrate runs LoRA on a 16-bit base, not an LLM.int8 one (bitsandbytes)",
                    "Leave load_in_8bit out; the CUDA context and allocator overhead it measures apply to 8-bit "
                    "estimates on that GPU too.")
        if t.zero:
            return ("zero", f"planner calibrate runs one process without DeepSpeed, not ZeRO stage {t.zero}",
                    "Give zero: 0.")
        if t.recipe not in TORCH_RECIPES:
            return ("recipe", f"recipe {t.recipe} keeps fp32 master weights beside 16-bit ones, which the calibration "
                    "run does not", f"Use recipe: {', '.join(TORCH_RECIPES[:-1])} or {TORCH_RECIPES[-1]}.")
        if t.optimizer != "adamw":
            return ("optimizer", f"the calibration run steps torch.optim.AdamW, not {t.optimizer}",
                    "Give optimizer: adamw (the runtime overheads it measures apply to every optimizer).")
        if t.method == "lora" and t.adapter_dtype != "fp32":
            return ("adapter_dtype", f"the calibration run keeps peft's fp32 adapters, not {t.adapter_dtype}",
                    "Give adapter_dtype: fp32 (peft's default).")
        attention = t.attention
    else:
        assert i is not None
        if i.engine != "hf":
            return ("engine", f"planner calibrate runs Transformers generate, not {i.engine}",
                    "Give engine: hf; vLLM's budget is its own start-up arithmetic ('planner estimate --engine vllm "
                    "--gpu ID').")
        if i.weights not in ("fp32", "fp16", "bf16"):
            return ("weights", f"planner calibrate runs inference with fp32, fp16 or bf16 weights, not {i.weights}",
                    "Give weights: bf16, fp16 or fp32.")
        if i.kv_dtype != i.weights:
            return ("kv_dtype", f"Transformers generate keeps the KV cache in the model dtype ({i.weights}), not "
                    f"{i.kv_dtype}", f"Give kv_dtype: {i.weights}, or leave it out.")
        if i.max_num_batched_tokens is not None:
            return ("max_num_batched_tokens", "the calibration run prefills each prompt whole, not in chunks",
                    "Leave max_num_batched_tokens out.")
        attention = i.attention
    if attention == "flash":
        return ("attention", "the calibration run uses Transformers' sdpa or eager kernel, not flash "
                "(flash_attention_2 needs the flash-attn package)",
                ("Give attention: sdpa; the memory model sizes sdpa and flash alike (neither stores the scores)."
                 if workload.architecture.sdpa_supported else
                 f"Give attention: eager ({workload.architecture.model_type} has no sdpa in Transformers); "
                 "eager keeps the score matrices, which flash would not."))
    return None


def run_calibration(workload: Any, *, steps: int = 3) -> dict[str, Any]:
    """Run ``steps`` steps of ``workload`` on the local CUDA GPU and measure its memory.

    Supported: training with method full or lora, the torch recipes (fp32, amp-*, pure-*) and
    AdamW, and inference with Transformers generate and fp32/fp16/bf16 weights (:func:`unsupported`).
    The run happens in a worker process (:func:`_run_calibration_here`); the caller's process does not
    import torch or make a CUDA context.

    Raises:
        CalibrationUnavailable: the workload needs something the calibration does not run
            (:func:`unsupported`), or torch or a CUDA GPU is missing.
    """
    why = unsupported(workload)
    if why is not None:
        key, problem, hint = why
        raise CalibrationUnavailable(f"{key}: {problem}. {hint}")
    import importlib.util

    for module, what in (("torch", "PyTorch with CUDA"), ("transformers", "Hugging Face Transformers")):
        if not _installed(importlib.util, module):
            raise CalibrationUnavailable(f"planner calibrate needs {what} (the Python package {module!r} is not "
                                         f"installed); install it with: {_install_hint()}")
    from planner.validate.worker import call_in_worker

    return call_in_worker("planner.validate.calibrate:_run_calibration_here", _run_spec(workload), steps=steps)


#: The settings of a workload the calibration run reads (its train or infer record's), by record.
_RUN_FIELDS = {"train": ("recipe", "attention", "checkpointing", "method", "lora_rank", "lora_targets", "lora_dropout",
                         "use_dora", "micro_batch", "seq_len", "use_cache"),
               "infer": ("weights", "attention", "concurrency", "context")}


def _run_spec(workload: Any) -> dict[str, Any]:
    """What :func:`_run_calibration_here` reads of ``workload``, as plain values (the worker gets a copy):
    the model's Transformers config, its vocabulary size, and the train or infer settings."""
    from types import SimpleNamespace

    spec: dict[str, Any] = {"config": _plain(workload.architecture.extra),
                            "vocab_size": workload.architecture.vocab_size}
    for record, names in _RUN_FIELDS.items():
        given = getattr(workload, record)
        spec[record] = None if given is None else SimpleNamespace(**{n: _plain(getattr(given, n)) for n in names})
    return spec


def _installed(util: Any, module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (``util``: importlib.util); a module
    already imported without a spec counts as there."""
    try:
        return util.find_spec(module) is not None
    except ValueError:  # in sys.modules with no __spec__
        return True


def _no_torch() -> CalibrationUnavailable:
    return CalibrationUnavailable(f"planner calibrate needs PyTorch with CUDA; install it with: {_install_hint()}")


def _install_hint() -> str:
    """The command that installs planner's validate extra (PyTorch, Transformers, PEFT, bitsandbytes): from the
    source folder planner runs from where it has one (its pyproject.toml beside the package), named by its path,
    so it can be pasted in any folder (h36a 8: '.[validate]' installed whatever project the current folder held);
    else the packages by name, at the versions the extra pins."""
    from pathlib import Path

    from planner.core.names import shell_word

    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "planner" / "__init__.py").is_file():
        # this very interpreter's pip (the first pip on PATH may be another Python's), and -e where planner runs from
        # its source folder, so the install stays editable (h38a 8)
        import sys

        return f"{shell_word(sys.executable)} -m pip install -e {shell_word(f'{root}[validate]')}"
    try:  # an installed wheel: the extra's requirements as its metadata lists them
        from importlib.metadata import requires

        wanted = [r.split(";")[0].strip() for r in requires("planner") or [] if "extra == \"validate\"" in r
                  or "extra == 'validate'" in r]
    except Exception:  # noqa: BLE001 - no metadata to read: the packages by name
        wanted = []
    import sys

    return (f"{shell_word(sys.executable)} -m pip install "  # this interpreter's pip (h39a m1)
            + " ".join(shell_word(w) for w in (wanted or ["torch", "transformers"])))


def _run_calibration_here(spec: dict[str, Any], *, steps: int) -> dict[str, Any]:
    """:func:`run_calibration`'s run of ``spec`` (:func:`_run_spec`), in the process that calls it: the
    measuring worker's (planner.validate.worker), never a caller's, because it makes a CUDA context,
    resets the CUDA allocator's peak statistics and draws from torch's generator, all state of the whole
    process (issue 33); in a fresh process the CUDA context's bytes are those of this run alone."""
    try:
        import torch
    except ImportError:
        raise _no_torch() from None
    if not torch.cuda.is_available():
        raise CalibrationUnavailable("planner calibrate needs an NVIDIA GPU, and PyTorch sees none "
                                     f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
    t = spec["train"]
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model(**spec["config"])
    dev = torch.device("cuda")
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    context = total - free0
    torch.cuda.reset_peak_memory_stats()
    if t is not None:
        half = {"bf16": torch.bfloat16, "fp16": torch.float16}
        dtype = half.get(t.recipe.split("-")[-1], torch.float32) if t.recipe.startswith("pure") else torch.float32
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype,
                                                 attn_implementation="eager" if t.attention == "eager" else "sdpa")
        model.to(dev).train()
        if t.checkpointing == "full":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if t.method == "lora":
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(model, LoraConfig(r=t.lora_rank, target_modules=list(t.lora_targets),
                                                     lora_dropout=t.lora_dropout, use_dora=t.use_dora))
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        amp = t.recipe.startswith("amp")
        amp_dtype = torch.bfloat16 if t.recipe.endswith("bf16") else torch.float16
        for _ in range(steps):
            ids = torch.randint(0, spec["vocab_size"], (t.micro_batch, t.seq_len), device=dev)
            with torch.autocast("cuda", dtype=amp_dtype, enabled=amp):
                loss = model(input_ids=ids, labels=ids, use_cache=t.use_cache).loss  # as the estimate counts it
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss, ids
    else:
        i = spec["infer"]
        dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[i.weights]
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, attn_implementation=i.attention)
        model.to(dev).eval()
        with torch.no_grad():
            ids = torch.randint(0, spec["vocab_size"], (i.concurrency, max(1, i.context - 8)), device=dev)
            model.generate(input_ids=ids, max_new_tokens=8, min_new_tokens=8, do_sample=False)
    torch.cuda.synchronize()
    allocated = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    free1, _ = torch.cuda.mem_get_info()
    return {
        "gpu_name": torch.cuda.get_device_name(),
        "device_total_bytes": total,
        "cuda_context_bytes": context,
        "max_memory_allocated_bytes": allocated,
        "max_memory_reserved_bytes": reserved,
        "device_used_bytes": total - free1,
        "allocator_fraction": (reserved / allocated - 1) if allocated else 0.0,
        "versions": {"torch": torch.__version__, "cuda": str(torch.version.cuda)},
        "measured_on": utc_today().isoformat(),
    }
