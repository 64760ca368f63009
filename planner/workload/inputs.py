"""Reading what the user gives: workload files and model names, against a loaded catalog.

This is the one place that ties a workload's ``model`` value to the catalog, a
``config.json`` path or the local Hugging Face cache, so that ``planner estimate``, scenario
files and ``planner fit`` resolve models the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from planner.model.architecture import Architecture
from planner.catalog.loader import Catalog, removal_hint
from planner.core.errors import InputError, ModelConfigError, ScenarioError
from planner.core.fields import Entry
from planner.model.models import ACCEPTED_FORMS, KEY_ACCEPTED_FORMS, resolve_model
from planner.workload.options import COMMON_KEYS, HOST_KEYS, INFER_KEYS, TRAIN_KEYS
from planner.workload.spec import (
    Workload,
    check_gpu_support,
    workload_from_entry,
)
from planner.core.yamlio import LineDict, YamlProblem, load_mapping

Resolver = Callable[[str, Entry], tuple[str, str, Architecture]]

#: planner.model.models problems about a --model path that leads nowhere, as said at the key that named it.
_NAME_PROBLEMS = {
    "no such file or directory": "no such file or directory: {name!r}",
    "the directory holds no config.json": "the directory {name!r} holds no config.json",
    "is a symlink loop (each link leads to another, never to a file)":
        "the path {name!r} is a symlink loop (each link leads to another, never to a file)",
}


def catalog_models(catalog: Catalog) -> dict[str, Any]:
    """Catalog models by id, in the shape :func:`planner.model.models.resolve_model` takes."""
    return {m.id: m for m in catalog.models}


def _keyed(hint: str | None, entry: Entry) -> str | None:
    """``hint`` naming the key the user wrote: a file's (or a mapping's) ``model:`` where it says '--model takes'
    (planner.model.models.ACCEPTED_FORMS); an option's or keyword's entry (OptionError) keeps '--model', which its
    API form writes ``model=`` (:func:`keyword_form`). h24b M4."""
    if hint is None or getattr(entry.error_cls, "options", False) or ACCEPTED_FORMS not in hint:
        return hint
    return hint.replace(ACCEPTED_FORMS, KEY_ACCEPTED_FORMS)


def make_resolver(catalog: Catalog, *, hf_cache: Path | None = None) -> Resolver:
    """A function that resolves a workload's ``model`` value, locating errors at the entry.

    The resolver returns (model id, where the architecture came from, Architecture).
    """
    models = catalog_models(catalog)
    cache: dict[str, tuple[str, str, Architecture]] = {}

    def resolve(name: str, entry: Entry) -> tuple[str, str, Architecture]:
        if name in cache:
            return cache[name]
        try:
            rm = resolve_model(name, models, hf_cache=hf_cache)
        except ModelConfigError as exc:
            if exc.file is None:  # an id the overlay removed: said so, not "Did you mean" another (h19b M7)
                removal = removal_hint(catalog.removed, name.strip(), "models.yaml") if name.strip() not in models \
                    else None
                raise entry.error(exc.problem, "model", removal or _keyed(exc.hint, entry)) from None
            if exc.file == name and exc.problem in _NAME_PROBLEMS:
                # The name itself is wrong (no such path): say so at the entry that gave it.
                raise entry.error(_NAME_PROBLEMS[exc.problem].format(name=name), "model",
                                  _keyed(exc.hint, entry)) from None
            raise
        cache[name] = (rm.id, rm.source, rm.architecture)
        return cache[name]

    return resolve


def read_workload_file(path: Path, *, shown: str | None = None) -> LineDict:
    """A ``--workload`` YAML file's mapping as written (a LineDict that knows each key's line).

    Raises:
        ScenarioError: unreadable file, YAML problems, a top level that is not a mapping; named as
            ``shown`` (default ``str(path)``).
    """
    shown = shown or str(path)
    try:
        return load_mapping(path, hint="A workload file is a mapping of workload keys, at least 'model:' and "
                                       "'task:' (the options of 'planner estimate', with '_' for '-').")
    except YamlProblem as exc:
        hint = exc.hint or ("Check the path; an example workload file is scenarios/workloads/qlora-7b.yaml."
                            if exc.problem == "no such file" else None)
        raise ScenarioError(exc.problem, file=shown, line=exc.line, entry=exc.path, hint=hint) from None


def load_workload_mapping(data: Mapping[str, Any], catalog: Catalog, overrides: Mapping[str, Any] | None = None,
                          *, file: str | None = None, default_name: str = "workload", gpu: Any = None) -> Workload:
    """A workload from a mapping of workload keys (a file's, or one a script gives); ``overrides``
    (command-line options, or keyword arguments of the Python API) replace its keys. A relative
    ``model`` path in ``file`` is read from that file's directory, as a scenario's is
    (:func:`planner.workload.relative.relative_model_resolver`); one given as an override, from the current one.

    ``data`` is not changed. Problems with an override's value are reported at the option
    (:class:`OptionError`), the others at the key of ``file`` (None: a mapping with no file).

    Args:
        gpu: as for :func:`load_workload_file`.

    Raises:
        ScenarioError: invalid workload keys or values (OptionError for an override's).
    """
    merged = LineDict(data)
    merged.lines = dict(getattr(data, "lines", {}) or {})
    merged.line = getattr(data, "line", None)
    overrides = dict(overrides or {})
    merged.update(overrides)
    # the numbers as the file writes them ('8.000'), for messages and the dotted-thousands check (h17b #4)
    merged.written = {k: v for k, v in (getattr(data, "written", None) or {}).items() if k not in overrides}
    entry = Entry(merged, file=file, error=ScenarioError)
    resolver = make_resolver(catalog)
    if file is not None and "model" not in overrides:  # the file's own model: read from the file's directory
        from planner.workload.relative import relative_model_resolver

        resolver = relative_model_resolver(resolver, catalog, Path(file).parent, kind="workload")
    try:
        workload = workload_from_entry(entry, resolver, default_name=default_name)
        if gpu is not None:
            check_gpu_support(workload, gpu, entry)
    except ScenarioError as exc:
        if exc.file == file and exc.entry in overrides:
            # The value came from the command line (an option overrides the file's key): say so.
            raise OptionError(getattr(exc, "raw_problem", exc.problem), entry=exc.entry,
                              hint=getattr(exc, "raw_hint", exc.hint)) from None
        overridden = _task_overridden(exc, data, overrides, file)
        if overridden is not None:
            raise overridden from None
        raise
    return workload


#: Keys that size the training DataLoader (task train only; HOST_KEYS' others apply to both tasks).
_TRAIN_HOST_KEYS = ("dataloader_workers", "dataset_size", "dataset_format", "pin_memory")


def _task_overridden(exc: ScenarioError, data: Mapping[str, Any], overrides: Mapping[str, Any],
                     file: str | None) -> ScenarioError | None:
    """The error to raise instead of ``exc`` when ``--task`` (``task=``) replaces the task of a workload file
    whose key ``exc`` names belongs to the file's own task (``method`` in a training file estimated with
    ``--task infer``): the reader's hint, "set task: train", would name what the file already says, so this
    one names the option as the cause. None for any other error."""
    task, key = overrides.get("task"), exc.entry
    if task not in ("train", "infer") or file is None or exc.file != file or key not in data or key in overrides:
        return None
    theirs = (TRAIN_KEYS + _TRAIN_HOST_KEYS) if task == "infer" else INFER_KEYS
    ours = (INFER_KEYS if task == "infer" else TRAIN_KEYS + _TRAIN_HOST_KEYS) + COMMON_KEYS + ("gpus",)
    other = [k for k in data if k in theirs and k not in ours and k not in overrides]
    if key not in other:
        return None
    given = data.get("task")
    if given is None and task == "infer":  # the reader takes a file with method or micro_batch as training
        given = "train" if "method" in data or "micro_batch" in data else None
    if given == task:
        return None
    lines = getattr(data, "lines", {}) or {}
    named = ", ".join(f"{k} (line {lines[k]})" if lines.get(k) else k for k in other)
    said = f"task {given}" if given else f"task {'train' if task == 'infer' else 'infer'}'s keys"
    problem = (f"{task} replaces the task of {file}" + (f" ({given})" if given else "") +
               f", whose {named} {'is an option' if len(other) == 1 else 'are options'} of task "
               f"{'train' if task == 'infer' else 'infer'}, not {task}")
    hint = (f"Leave out --task {task} to estimate the file's {said}, or remove {', '.join(other)} from {file} "
            f"for task {task}.")
    return ScenarioError(problem, entry="--task", hint=hint)


def load_workload_file(path: Path, catalog: Catalog, overrides: dict[str, Any] | None = None,
                       *, shown: str | None = None, gpu: Any = None) -> Workload:
    """Read a ``--workload`` YAML file; command-line ``overrides`` replace its keys.

    Args:
        gpu: a catalog GPU the workload must run on (``planner estimate --gpu``): dtypes it has
            no support for are refused (:func:`planner.workload.spec.check_gpu_support`).

    Raises:
        ScenarioError: unreadable file, YAML problems, invalid workload keys or values.
    """
    shown = shown or str(path)
    data = read_workload_file(path, shown=shown)
    return load_workload_mapping(data, catalog, overrides, file=shown, default_name=default_workload_name(path), gpu=gpu)


def default_workload_name(path: Path | str) -> str:
    """The workload name when the file gives none: the file's stem as it is (a control or invisible
    character in it is refused by planner.workload.spec.check_derived_name, as in a written name);
    'workload' for a shell pipe (process substitution passes /dev/fd/63, whose stem names nothing)."""
    text = str(path)
    if text.startswith(("/dev/fd/", "/proc/")) or text == "/dev/stdin":
        return "workload"
    return Path(path).stem


def workload_from_options(options: dict[str, Any], catalog: Catalog, *, gpu: Any = None) -> Workload:
    """A workload from command-line options (names with underscores, as in workload files).

    Args:
        gpu: as for :func:`load_workload_file`.

    Raises:
        InputError: as :func:`planner.workload.spec.workload_from_entry`, located at the option.
    """
    entry = Entry(options, file=None, path="", error=OptionError)
    workload = workload_from_entry(entry, make_resolver(catalog), default_name=str(options.get("model", "workload")))
    if gpu is not None:
        check_gpu_support(workload, gpu, entry)
    return workload


#: Every workload key as files write it; the command line spells each ``--key-with-dashes``.
_WORKLOAD_KEYS = sorted(set(COMMON_KEYS + TRAIN_KEYS + INFER_KEYS + HOST_KEYS), key=len, reverse=True)
#: 'key: value' as a file writes it ('Set method: qlora'), for any workload key.
_KEY_VALUE = re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, _WORKLOAD_KEYS)) + r"): ")
_KEY_BOOL = re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, _WORKLOAD_KEYS)) + r"): (true|false)\b")
#: A key with an underscore, bare or quoted ('remove prepare_kbit_training', "'dataset_size' sizes");
#: keys without one (gpus, model, zero) are also plain words and stay as they are.
_UNDERSCORE_KEY = re.compile(r"(?<![\w./'-])('?)(" + "|".join(re.escape(k) for k in _WORKLOAD_KEYS if "_" in k)
                             + r")\1(?![\w/'-])")


def option_form(text: str) -> str:
    """A message written for workload files, with its keys spelled as command-line options.

    The workload reader (planner.workload.spec) words problems and hints for files; when the values
    came from options, 'Set method: qlora, or remove prepare_kbit_training.' should read 'Set
    --method qlora, or remove --prepare-kbit-training.'.
    """
    # a boolean key's 'key: true' / 'key: false' is the flag '--key' / '--no-key'
    text = _KEY_BOOL.sub(lambda m: f"--{'no-' if m.group(2) == 'false' else ''}{m.group(1).replace('_', '-')}", text)
    text = _KEY_VALUE.sub(lambda m: f"--{m.group(1).replace('_', '-')} ", text)
    return _UNDERSCORE_KEY.sub(lambda m: "--" + m.group(2).replace("_", "-"), text)


#: An option as the command line spells it ('--micro-batch', '--no-pin-memory', '--gpu ID'), for :func:`keyword_form`.
#: A value after it is a placeholder ('ID') or a word holding a digit ('512', '4,096', 'h100-sxm'): prose has none.
_FLAG = re.compile(r"(?<![\w-])--(no-)?([a-z][a-z0-9]*(?:-[a-z0-9]+)*)( (?:[A-Z]+\b|[\w-]*\d(?:[\w.,-]*\w)?))?")


#: An option named as what it takes ('--model takes a catalog id'), which :func:`keyword_form` writes ``model=``.
_TAKES = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*) takes\b|(?<![\w./-])([a-z][a-z0-9_]*): takes\b")


def keyword_form(text: str) -> str:
    """A message that names options as the command line spells them, in the API's words: '--micro-batch' is
    ``micro_batch``, '--no-pin-memory' ``pin_memory=False``, '--gpu ID' ``gpu=ID``, '--context 4096'
    ``context=4096`` (h16b audit: an API caller passed keywords, not options)."""
    def said(m: re.Match[str]) -> str:
        key = m.group(2).replace("-", "_")
        if m.group(1):
            return f"{key}=False"
        return f"{key}={m.group(3).strip()}" if m.group(3) else key
    # a file's 'key: value' (the workload reader words its hints for files) as the keyword's 'key=value'
    text = _KEY_BOOL.sub(lambda m: f"{m.group(1)}={m.group(2).capitalize()}", text)
    # '--model takes a catalog id ...' (or a file's 'model: takes'): the keyword as a caller writes it, model= (h24b M4)
    text = _TAKES.sub(lambda m: f"{(m.group(1) or m.group(2)).replace('-', '_')}= takes", text)
    text = _KEY_VALUE.sub(lambda m: f"{m.group(1)}=", text)
    return _FLAG.sub(said, text)


class OptionError(ScenarioError):
    """An option or an API keyword is wrong.

    As an exception (``str(exc)``, :attr:`entry`, :attr:`problem`, :attr:`hint`) it is in the Python API's
    words: the entry is the keyword (``micro_batch``), and the problem and hint name keywords
    (:func:`keyword_form`). :meth:`cli_line` is the same error as the command line prints it: the entry is
    the option's name and the problem and hint name workload keys as options (:func:`option_form`).
    """

    #: An option (or an API keyword) takes a list comma-separated ('--lora-targets q_proj,v_proj'), not in brackets.
    options = True

    def __init__(self, problem: str, *, file: str | None = None, line: int | None = None,
                 entry: str | None = None, hint: str | None = None) -> None:
        flag = "--" + entry.replace("_", "-") if entry and not entry.startswith("--") else entry
        super().__init__(option_form(problem), file=file, line=line, entry=flag,
                         hint=option_form(hint) if hint else hint)
        self.command_line = str(self)  # as the command line says it
        # as the workload reader wrote them: a reader that re-raises the problem under another key (check_tp's
        # under gpus) passes these on, which each form then converts (keyword_form's output does not convert back)
        self.raw_problem, self.raw_hint = problem, hint
        keyword = entry[2:].replace("-", "_") if entry and entry.startswith("--") else entry
        self.problem, self.entry = keyword_form(problem), keyword
        self.hint = keyword_form(hint) if hint else hint
        self.args = (self._format(),)

    def __str__(self) -> str:
        return self._format()

    def cli_line(self) -> str:
        """The error as the command line prints it (options, not keywords), on one line."""
        return self.command_line.replace("\r", "\\r").replace("\n", "\\n")


__all__ = ["InputError", "Resolver", "catalog_models", "make_resolver", "load_workload_file", "read_workload_file",
           "default_workload_name", "load_workload_mapping", "workload_from_options", "OptionError", "option_form"]
