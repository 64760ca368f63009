"""Workloads: what the user wants to run, validated, with every option named.

A workload is read from a mapping (a ``--workload`` file, a scenario's ``workloads`` entry,
or the ``planner estimate`` options, which use the same names with dashes). Keys use the
field's terms: micro_batch, seq_len, grad_accum, zero (ZeRO stage), tp (tensor parallel),
kv_dtype, context, concurrency. Unknown keys are refused with a did-you-mean hint.

Contradictions are errors when the workload cannot run as written (QLoRA on fp32 weights,
offload without ZeRO, a TP degree that does not divide the heads, a sequence longer than a
learned position table such as GPT-2's, a setting the chosen engine does not have) and warnings
when it runs but probably not as meant (ZeRO-3 on one GPU, a context longer than a rotary model
was trained for).

This module holds the :class:`Workload` and the entry point (:func:`workload_from_entry`): the task,
the keys of both tasks (name, notes, host RAM, gpus_per_node, tokens_per_month), and
:func:`check_gpu_support`. Each task's options are read by planner.workload.training and
planner.workload.inference, against planner.workload.options (the names, limits and option records)
and planner.workload.checks; this module re-exports their public names (``__all__``).
"""

from __future__ import annotations

import math

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from planner.model.architecture import Architecture
from planner.core.errors import InputError, ScenarioError
from planner.core.fields import Entry, shown_number
from planner.workload.othernames import explainer
from planner.workload.options import (  # noqa: F401  (re-exported: planner.workload.spec names them all)
    TOKEN_SUFFIXES,
    parse_token_count,
    read_token_count,
    ATTENTION,
    CHECKPOINT_DTYPES,
    CHECKPOINTING,
    COMMON_KEYS,
    DATASET_FORMATS,
    ENGINES,
    HOST_KEYS,
    INFER_KEYS,
    LOAD_DTYPE_KEYS,
    LOAD_DTYPES,
    KV_DTYPES,
    LLAMACPP_KEYS,
    LLAMACPP_KV_TYPES,
    LLAMACPP_SPLIT_MODES,
    LLAMACPP_UBATCH,
    LLAMACPP_WEIGHTS,
    MAX_GPUS,
    MAX_MICRO_BATCH,
    MAX_SEQ_LEN,
    METHODS,
    MIN_GPU_MEMORY_UTILIZATION,
    OFFLOAD_OPTIMIZERS,
    TASKS,
    TRAIN_KEYS,
    WEIGHT_FORMATS,
    HostOptions,
    Inference,
    Training,
)
from planner.workload.checks import (  # noqa: F401  (re-exported)
    architecture_warnings,
    check_positions,
    check_tp,
    checkpoint_format,
    eager_only_warning,
    flash_attention_2_gap,
    uses_flash_attention_2,
)
from planner.workload.training import (  # noqa: F401  (re-exported)
    _training,
    default_lora_targets,
    training_warnings,
    zero_one_rank_warning,
)
from planner.workload.inference import (  # noqa: F401  (re-exported)
    DTYPE_FEATURES,
    ENGINE_DEFAULT_NOTE,
    HF_ONLY_KEYS,
    LLAMACPP_BACKENDS,
    _inference,
    default_engine,
    dtype_feature,
    llamacpp_backend,
    unnamed_engine,
    weights_feature_dtype,
)


@dataclass(frozen=True)
class Workload:
    """A model and what to do with it.

    Attributes:
        name: label used in reports.
        model_id: the catalog id, path or hub id the model was resolved from.
        model_source: where the architecture came from (catalog, file, HF cache).
        architecture: the parsed config.
        task: 'train' or 'infer'.
        train / infer: the task's options (the other is None).
        host: host-RAM options.
        gpus_per_node: GPUs in one machine (default: all of them).
        entry_warnings: the warnings the reader made of the entry as written, which the options do
            not keep (inference: weights given against the checkpoint's format, a concurrency above
            an explicit max_num_seqs, a context past the model's positions; training: lora_targets
            written as one comma-separated text); a training workload's other warnings
            :func:`training_warnings` derives from its options.
        hours_per_month: expected use, for cost comparisons (None: derive from the job).
        tokens_per_month: tokens the workload must process a month (training: tokens trained, every
            epoch counted; inference: tokens generated), for cost comparisons: ``planner compare``
            derives its busy hours from it (tokens / the machine's tokens per second). None: not given.
        head_untied: the framework keeps a separate output head although the checkpoint ties it to the
            embedding (LitGPT copies it at conversion): ``architecture`` is then the untied one.
    """

    name: str
    model_id: str
    model_source: str
    architecture: Architecture
    task: str
    train: Training | None = None
    infer: Inference | None = None
    host: HostOptions = field(default_factory=HostOptions)
    gpus_per_node: int | None = None
    entry_warnings: tuple[str, ...] = ()
    notes: str | None = None
    hours_per_month: float | None = None
    head_untied: bool = False
    tokens_per_month: float | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """Contradictions that do not stop the workload, as sentences: :attr:`entry_warnings`, then
        (training) :func:`training_warnings` of the options as they are now, so a workload put on
        another GPU count (``dataclasses.replace``, planner.solve.candidates.with_gpus) says its own."""
        if self.train is not None:
            return self.entry_warnings + training_warnings(self.architecture, self.train)
        return self.entry_warnings

    @property
    def gpus(self) -> int:
        """Total GPUs the workload runs on (training: data parallel x tensor parallel; inference:
        replicas x tensor parallel)."""
        if self.train is not None:
            return self.train.gpus
        assert self.infer is not None
        return self.infer.tp * self.infer.replicas

    @property
    def group_gpus(self) -> int:
        """GPUs that work on one copy of the model together (and so need NCCL between them): every
        GPU of a training job, the tp GPUs of one inference replica."""
        return self.train.gpus if self.train is not None else self.infer.tp  # type: ignore[union-attr]

    @property
    def tp(self) -> int:
        return self.train.tp if self.train is not None else self.infer.tp  # type: ignore[union-attr]

    @property
    def node_gpus(self) -> int:
        """GPUs per machine."""
        return min(self.gpus_per_node or self.gpus, self.gpus)


def _shadowed_model_path(given: str, file: str | None) -> Path | None:
    """A folder holding a config.json (or a .json file) named ``given`` beside the current directory or the
    workload's file, which a catalog id of that name wins over (planner.model.models.resolve_model tries
    catalog ids first); None when there is none."""
    bases = [Path(".")] + ([Path(file).parent] if file else [])
    for base in bases:
        candidate = base / given
        try:
            if (candidate / "config.json").is_file() or (candidate.suffix == ".json" and candidate.is_file()):
                return candidate
        except (OSError, ValueError):
            continue
    return None


def check_derived_name(entry: Entry, name: str, what: str) -> None:
    """Refuse a ``what`` ('workload', 'scenario') name the entry does not write, taken from its model
    (``--model``, ``model=``: when ``name`` is the model as given) or its file's name, for what
    :func:`planner.core.names.name_problem` refuses in a written ``name:`` (a blank start or end, a character
    with no glyph, a word mixing Latin and Cyrillic or Greek letters), so that a name looks like no other
    whatever its source. The problem is reported at ``model``, or at the file (no line).

    Raises:
        InputError (of the entry's kind): as above.
    """
    from planner.core.names import name_problem, unsafe_problem

    unsafe = unsafe_problem(name)  # an invisible or control character, as a written name: is refused
    from_model = "model" in entry.data and name == str(entry.data["model"])
    # a scenario file name's byte that is not UTF-8 (PEP 383): its escape is a name another file may have, and two
    # scenarios' reports would then share a set (h16b #5). A workload named after its model keeps the escape: two
    # workloads of one scenario that read alike are refused as a clash, and estimate writes no report set.
    byte = None if from_model else next((c for c in name if "\udc80" <= c <= "\udcff"), None)
    told = ((f"its name {unsafe}", "Remove the character.") if unsafe else
            (f"its name holds the byte \\x{ord(byte) - 0xDC00:02x}, which is not UTF-8, so no name can hold it (its "
             "escape is a name another file may have)", "") if byte else name_problem(name))
    if told is None:
        return
    if from_model:
        path = "/" in name or "\\" in name  # a path: the hint is about the file, not a name to type
        raise entry.error(f"the {what} is named after the model, and {told[0]}", "model",
                          _path_hint(entry, told) if path else told[1])
    from planner.core.lookalike import glyph_reason

    # the path at the line's start shown as the name in the message is: a character with no glyph (U+F022, which
    # the CLI's escape of unsafe characters keeps) as its escape (h16b #5)
    shown = entry.file and "".join(c if not glyph_reason(c) else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else
                                   f"\\U{ord(c):08x}" for c in entry.file)
    raise entry.error_cls(f"the {what} is named after its file, and {told[0]}", file=shown,
                          entry=entry.path or None,
                          hint=f"{told[1]} Give the name in the file (name: ...), or rename the file.")


def _path_hint(entry: Entry, told: tuple[str, str], *, named: bool = False) -> str:
    """The hint for a model path that cannot label a workload (``told``: name_problem's problem and hint): rename
    the folder, or name the workload. Options have no --name: a name of its own is the name key of a --workload
    file (option_form would turn 'name: ' into an option that does not exist)."""
    own = "write its name key in a --workload file" if entry.file is None else "write name: NAME beside model:"
    fix = (("Rename the folder to a shorter name" if named else "Give a shorter path (move or link the folder)")
           if "characters long" in told[0] else "Rename the folder or file without that character")
    return f"{fix}." if named else f"{fix}, or give the workload a name of its own ({own})."


def check_model_label(entry: Entry, label: str) -> None:
    """Refuse a model that is no catalog id (a local folder or config.json) whose ``label`` (the folder's name,
    planner.model.models: what every report line that names the model shows, ``Workload w1 (infer, LABEL)``) is
    what :func:`planner.core.names.name_problem` refuses in a name (over 200 characters, a no-break space, a blank
    at an end, a character with no glyph), named workload or not: the command line refused such a folder as the
    workload's name while a scenario showed it as the label (h14b #8). Naming the workload does not change the
    label, so the hint is to rename the folder.

    Raises:
        InputError (of the entry's kind): at ``model``.
    """
    from planner.core.names import name_problem

    told = name_problem(label)
    if told is not None:
        raise entry.error(f"the model's folder name labels the workload in every report line, and {told[0]}",
                          "model", _path_hint(entry, told, named=True))


def workload_from_entry(
    entry: Entry,
    resolve_model: Callable[[str, Entry], tuple[str, str, Architecture]],
    *,
    default_name: str = "workload",
) -> Workload:
    """Read and validate one workload mapping.

    Args:
        entry: the mapping, with its file and path for error messages.
        resolve_model: turns the ``model`` value into (id, source, Architecture); raises
            InputError for unknown names.
        default_name: name used when the entry has none.

    Raises:
        InputError (of the entry's kind): unknown keys, wrong types, out-of-range values,
            options that contradict each other.
    """
    if "model" in entry.data:
        # the model first: an unknown one (with its close matches) is the first thing to fix, and the rest is
        # read against its architecture
        given = entry.str("model")
        if given != given.strip() and ("/" in given or "\\" in given or given.strip().startswith(".")):
            # a path: './sp ' names the folder 'sp ', which the trimmed './sp' is not; said at the key, not guessed
            raise entry.error(f"the path {given!r} begins or ends with a blank, which would be part of a file or "
                              "folder name", "model", f"Write it without the blank ({given.strip()!r}) and rename the "
                              "folder, or give an absolute path.")
        model_id, model_source, arch = resolve_model(given, entry)
    task = _task_and_keys(entry)
    if "model" in entry.data and not str(model_source).startswith("catalog:"):
        check_model_label(entry, model_id)  # the label of every line, named workload or not
    if "name" not in entry.data:  # before entry.name reads it: a path too long is said at model, not at name
        check_derived_name(entry, default_name, "workload")
    name = entry.name("name", default_name)
    warnings: list[str] = []
    if "model" in entry.data and str(model_source).startswith("catalog:"):
        shadowed = _shadowed_model_path(str(entry.data["model"]).strip(), entry.file)
        if shadowed is not None:  # a fine-tuned checkpoint saved under its base model's name, say
            warnings.append(f"{shadowed} holds a model config too, but '{entry.data['model']}' is a catalog id, so the "
                            f"catalog model was sized; give ./{entry.data['model']} (a path) to size the folder's")
    if task == "infer":
        for key in ("dataloader_workers", "dataset_size", "dataset_format", "pin_memory"):
            if key in entry.data:
                raise entry.error(f"{key!r} sizes the training DataLoader and does nothing for task infer", key,
                                  "Remove it, or set task: train.")
    host = _host(entry)
    if "dataset_format" in entry.data and not host.dataset_size:
        raise entry.error("dataset_format says how the dataset is held, but there is no dataset_size to hold",
                          "dataset_format", "Give dataset_size too (e.g. dataset_size: 10 GiB), or remove it.")
    gpus_per_node = entry.int("gpus_per_node", None, min=1, max=MAX_GPUS)
    if task == "train":
        train = _training(entry, arch, warnings)
        if gpus_per_node is not None and train.gpus % gpus_per_node:
            raise entry.error(f"gpus ({train.gpus}) is not a multiple of gpus_per_node ({gpus_per_node})",
                              "gpus_per_node")
        # LitGPT's checkpoint conversion copies a tied embedding into a head of its own (only its pretraining
        # ties them, litgpt/pretrain.py): the model it trains has both.
        untied = train.framework == "litgpt" and arch.tie_word_embeddings
        if untied:
            arch = replace(arch, tie_word_embeddings=False)
        # its warnings follow from its options (Workload.warnings, training_warnings)
        return Workload(name, model_id, model_source, arch, task, train=train, host=host,
                        gpus_per_node=gpus_per_node, entry_warnings=tuple(warnings),
                        notes=entry.str("notes", None, multiline=True),
                        hours_per_month=_hours_per_month(entry), head_untied=untied,
                        tokens_per_month=tokens_per_month(entry))
    infer = _inference(entry, arch, warnings)
    if infer.weights in ("fp32", "fp16", "bf16"):
        # from_pretrained(torch_dtype=...) of a Transformers server: the weights' dtype is the load dtype
        host = replace(host, load_dtype=infer.weights)
    if gpus_per_node is not None:
        _check_replica_machines(entry, infer, gpus_per_node)
    # a quantized head of a tied checkpoint is LitGPT's own head (its conversion copies the tied weight into
    # lm_head, which Lightning's bitsandbytes plugin then quantizes); Transformers cannot quantize a tied head
    untied = infer.quantize_head and arch.tie_word_embeddings
    if untied:
        arch = replace(arch, tie_word_embeddings=False)
    return Workload(name, model_id, model_source, arch, task, infer=infer, host=host, gpus_per_node=gpus_per_node,
                    entry_warnings=tuple(warnings), notes=entry.str("notes", None, multiline=True),
                    hours_per_month=_hours_per_month(entry), tokens_per_month=tokens_per_month(entry),
                    head_untied=untied)


def _task_and_keys(entry: Entry) -> str:
    """The task (train when the entry gives method or micro_batch), with every key checked against it: an
    option of the other task, an unknown key or a missing model is refused."""
    task = entry.str("task", "train" if entry.has("method") or entry.has("micro_batch") else None, choices=TASKS)
    if task is None:
        if "workloads" in entry.data and not entry.path:  # a scenario given where one workload goes
            raise entry.error("is a scenario (it has workloads:), not one workload", "workloads",
                              "Plan it with 'planner plan FILE', or give one workload's keys (task:, model:, ...).")
        # a key no task takes first: 'tsak: infer' is that key, with 'task' its close match, not a missing task
        entry.check_keys(COMMON_KEYS + HOST_KEYS + TRAIN_KEYS + INFER_KEYS + ("gpus",),
                         explain=_command_line_only(explainer("infer")))
        raise entry.error("missing required key 'task'", None, "Write task: train or task: infer.")
    allowed = COMMON_KEYS + HOST_KEYS + (TRAIN_KEYS if task == "train" else INFER_KEYS)
    if task == "infer" and (not entry.path or entry.data.get("engine") == "llama.cpp"):
        # A workload of its own (a --workload file, the options) may give gpus: N, N / tp replicas, as
        # --gpus does. A scenario's workloads entry may not: the solver sizes one replica and picks tp;
        # but with engine llama.cpp gpus: N is that one replica's GPUs (its layer split).
        allowed += ("gpus",)
    other = INFER_KEYS if task == "train" else TRAIN_KEYS
    for key in entry.data:
        if key in other and key not in allowed and key not in LOAD_DTYPE_KEYS:  # vLLM's dtype: othernames
            hint = f"Remove it or set task: {'infer' if task == 'train' else 'train'}."
            if key in ("context", "seq_len"):  # the same quantity under the other task's name
                ours, theirs = ("seq_len", "infer") if key == "context" else ("context", "train")
                hint = f"Write {ours}: {entry.data[key]} (the sequence length of task {task}), or set task: {theirs}."
            if key == "gpus":  # a scenario's inference workload is one replica on tp GPUs
                hint = ("A scenario's inference workload is one replica on tp GPUs, which the solver counts: set "
                        "tp: N, or task: train.")
            raise entry.error(f"{key!r} is an option of task {'infer' if task == 'train' else 'train'}, not {task}",
                              key, hint, overridable=False)
    # a name from another tool: say whose (and never hint a key the file writes already: the keys it has a line of
    # their own for, not those a scenario's strategy search sets, which get the entry's line: solve.choices._with;
    # the first key shares the entry's '- ' line)
    lines = getattr(entry.data, "lines", None)
    first = next(iter(entry.data), None)
    written = ({k: v for k, v in entry.data.items() if k in lines and (k == first or lines[k] != entry.line_of(None))}
               if lines else entry.data)
    entry.check_keys(allowed, explain=_command_line_only(explainer(task, written)))
    if "model" not in entry.data:
        raise entry.error("missing required key 'model'", None,
                          "Add model: a catalog id ('planner catalog models' lists them), a path to a config.json, "
                          "or a Hugging Face id whose config.json is in the local cache.")
    return task


def _check_replica_machines(entry: Entry, infer: Inference, gpus_per_node: int) -> None:
    """Refuse a machine size that does not hold whole inference replicas, or all of them evenly."""
    # A replica runs in one machine (tensor parallelism over NVLink/PCIe, not the network), and a
    # machine holds whole replicas; with gpus given, the machines hold them all.
    if gpus_per_node % infer.tp:
        raise entry.error(f"{gpus_per_node} GPUs per machine do not hold whole replicas of tp {infer.tp}",
                          "gpus_per_node", f"A replica runs in one machine: give a multiple of {infer.tp} "
                          f"({infer.tp}, {2 * infer.tp}, ...).")
    if "gpus" in entry.data and (infer.tp * infer.replicas) % gpus_per_node:
        raise entry.error(f"gpus ({infer.tp * infer.replicas}) is not a multiple of gpus_per_node "
                          f"({gpus_per_node})", "gpus_per_node",
                          "Every machine holds the same number of replicas: give a divisor of gpus.")


#: Most tokens a month a workload may give (a trillion a day for 31 days; beyond any machine this plans).
MAX_TOKENS_PER_MONTH = 31e12
#: :data:`MAX_TOKENS_PER_MONTH` as errors write it: in a spelling a count takes (31T), and in digits.
TOKENS_PER_MONTH_LIMIT = f"{MAX_TOKENS_PER_MONTH / 1e12:g}T ({MAX_TOKENS_PER_MONTH:,.0f})"


def tokens_per_month(entry: Entry) -> float | None:
    """The ``tokens_per_month`` key (:func:`parse_token_count`), above 0; None when absent.

    Raises:
        InputError: not a count, not above 0, above :data:`MAX_TOKENS_PER_MONTH`, or given with
            ``hours_per_month`` (two ways to say how busy the workload is).
    """
    if "tokens_per_month" not in entry.data:
        return None
    raw = entry.raw("tokens_per_month")
    count = read_token_count(entry, "tokens_per_month", "200M (or 200000000")
    if count <= 0 or count > MAX_TOKENS_PER_MONTH:
        raise entry.error(f"must be above 0 and at most {TOKENS_PER_MONTH_LIMIT}, not {shown_number(raw)}",
                          "tokens_per_month",
                          "The tokens the workload processes a month: trained (training) or generated (inference).")
    if "hours_per_month" in entry.data:
        raise entry.error("give hours_per_month or tokens_per_month, not both", "tokens_per_month",
                          "planner compare derives the busy hours from tokens_per_month (tokens / tokens per second).")
    return count


#: The fewest busy hours a year a workload's ``hours_per_month`` (and the scenario's ``costs.hours_per_month``
#: and ``costs.utilization``, planner.cost.tco) may give: not a published figure but the bound of the
#: quantity's meaning (a machine used for less than an hour a year is a typo: 1.0e-300 printed 300-digit costs).
MIN_BUSY_HOURS_PER_YEAR = 1.0
#: The hint of an ``hours_per_month`` below :data:`MIN_HOURS_PER_MONTH`.
BUSY_HOURS_FLOOR_HINT = "Below one busy hour a year the cost per busy hour runs to absurd sums."


def written_floor(x: float) -> float:
    """``x`` cut (down) to three significant digits, as a file can write it: 1/12 is 0.0833, 1/8760 0.000114.
    A floor given as 1/12 could not be written (0.0833, 0.083333333 and '1/12' were all refused, h14b #9); this
    one, 0.04% lower at most, is the bound a message states and a file may give exactly."""
    exp = math.floor(math.log10(x)) - 2
    return float(f"{math.floor(x / 10.0 ** exp + 1e-9)}e{exp}")


#: The fewest busy hours a month ``hours_per_month`` may give: one busy hour a year
#: (:data:`MIN_BUSY_HOURS_PER_YEAR` / 12 = 0.08333...) as written, 0.0833 (:func:`written_floor`).
MIN_HOURS_PER_MONTH = written_floor(MIN_BUSY_HOURS_PER_YEAR / 12)
#: The bound a message states for :data:`MIN_HOURS_PER_MONTH`.
HOURS_FLOOR_TEXT = f"{MIN_HOURS_PER_MONTH:g} (1/12 to three digits: one busy hour a year)"


def _hours_per_month(entry: Entry) -> float | None:
    """The workload's ``hours_per_month``, checked as ``costs.hours_per_month`` is (planner.cost.tco.read_costs):
    more than 0 (0 was taken and then ignored: the default utilization priced the workload), at most 744 (31 days
    of 24 h), at least 0.0833 (1/12, one busy hour a year, to three digits: :data:`MIN_HOURS_PER_MONTH`); None
    when absent.

    Raises:
        InputError (of the entry's kind): not a number, or outside those bounds.
    """
    hours = entry.number("hours_per_month", None, min=0, max=744, min_exclusive=True)
    if hours is not None and hours < MIN_HOURS_PER_MONTH:
        raise entry.error(f"must be at least {HOURS_FLOOR_TEXT}, not {hours!r}", "hours_per_month",
                          BUSY_HOURS_FLOOR_HINT)
    return hours


def _load_dtype(entry: Entry) -> str | None:
    """The ``torch_dtype`` or ``dtype`` key (Transformers' spelling: float32, float16, bfloat16, auto;
    a leading 'torch.' is read too) as the planner's dtype; None when absent or 'auto'.

    Raises:
        InputError: both keys given, or a name Transformers would not take here.
    """
    given = [k for k in ("torch_dtype", "dtype") if k in entry.data]
    if not given:
        return None
    if len(given) > 1:
        raise entry.error("give torch_dtype or dtype, not both", "dtype",
                          "They are one from_pretrained argument: dtype is its name in Transformers 4.56 and later.")
    key = given[0]
    entry.refuse_empty(key, "a dtype such as bfloat16")
    raw = entry.raw(key)
    name = str(raw).strip().removeprefix("torch.")
    name = {"float": "float32", "half": "float16"}.get(name, name)
    if name not in LOAD_DTYPES:
        recipe = {"bf16": "pure-bf16", "fp16": "pure-fp16", "fp32": "fp32"}.get(name.lower())
        also = (f" torchtune's dtype: {name} is the planner's recipe: Write recipe: {recipe}." if recipe else "")
        raise entry.error(f"{raw!r} is not a dtype from_pretrained loads in", key,
                          f"{key} is the load dtype (host RAM while loading): one of {', '.join(LOAD_DTYPES)}, as "
                          f"Transformers spells it.{also}")
    value = LOAD_DTYPES[name]
    return None if value == "auto" else value


def _host(entry: Entry) -> HostOptions:
    return HostOptions(
        load_dtype=_load_dtype(entry),
        dataloader_workers=entry.int("dataloader_workers", 2, min=0, max=256),
        dataset_size=entry.size("dataset_size", 0, max=2**50),
        dataset_format=entry.str("dataset_format", "arrow", choices=DATASET_FORMATS),
        checkpoint_dtype=entry.str("checkpoint_dtype", None, choices=CHECKPOINT_DTYPES),
        low_cpu_mem_usage=entry.bool("low_cpu_mem_usage", True),
        pin_memory=entry.bool("pin_memory", True),
    )


def check_gpu_support(workload: Workload, gpu: Any, where: Entry) -> None:
    """Refuse a dtype the user chose that ``gpu`` has no hardware support for, located at its key.

    Training checks the recipe's 16-bit dtype (bf16 recipes need ``gpu.bf16``) and an 8-bit base
    (``load_in_8bit`` needs ``gpu.int8``, for bitsandbytes' int8 matmul); inference checks
    the weights and the KV cache (bf16, fp8 and int8 need ``gpu.bf16``, ``gpu.fp8``, ``gpu.int8``).
    Only keys the entry gives are checked: a default the GPU cannot run is not a contradiction in
    what the user wrote (``planner estimate --gpu`` reports it in its verdict instead).

    An ``engine: llama.cpp`` workload is refused on a GPU llama.cpp has no backend for
    (:func:`llamacpp_backend`), at the ``engine`` key; ``attention: flash`` (FlashAttention-2, training or
    engine hf) on a GPU flash-attn does not run on (:func:`flash_attention_2_gap`: NVIDIA below compute
    capability 8.0, Intel Gaudi), at the ``attention`` key.

    Args:
        workload: the validated workload.
        gpu: a :class:`planner.catalog.gpus.Gpu` (anything with ``id``, ``vendor``, ``architecture``,
            ``bf16``, ``fp8`` and ``int8``).
        where: the entry the workload was read from (its keys say what the user wrote).

    Raises:
        InputError (of the entry's kind): a dtype the GPU lacks, with what to use instead.
    """
    from planner.workload.recipes import RECIPES

    half = "bf16" if gpu.bf16 else "fp16"
    if workload.train is not None:
        recipe = workload.train.recipe
        checks = [("recipe", recipe, RECIPES[recipe].dtype,
                   [recipe.replace("bf16", "fp16")] if recipe != "fp8" else ["mixed-bf16"])]
        if workload.train.load_in_8bit and not gpu.int8 and "load_in_8bit" in where.data:
            raise where.error(f"load_in_8bit needs a GPU with int8 support (bitsandbytes' int8 matmul); {gpu.id} "
                              f"({gpu.architecture}) has none", "load_in_8bit",
                              "Use method: qlora (a 4-bit base, dequantized to 16-bit for each matmul), or a GPU "
                              "with int8 ('planner catalog gpus' shows which have it).")
    else:
        i = workload.infer
        assert i is not None
        checks = [("weights", i.weights, weights_feature_dtype(i), (["int8"] if i.weights == "fp8" and gpu.int8 else [])
                   + (["fp8"] if i.weights == "int8" and gpu.fp8 else []) + [half]),
                  ("kv_dtype", i.kv_dtype, i.kv_dtype, [half])]
    engine = workload.infer.engine if workload.infer is not None else "hf"
    if engine == "llama.cpp" and llamacpp_backend(gpu) is None:
        raise where.error(f"llama.cpp has no backend for {gpu.id} ({gpu.vendor} {gpu.architecture}): ggml runs on "
                          "NVIDIA GPUs (CUDA), AMD GPUs (HIP/ROCm), Intel GPUs (SYCL) and CPUs, not on Gaudi",
                          "engine", "Choose an NVIDIA or AMD GPU for engine: llama.cpp, or another engine.")
    attention = workload.train.attention if workload.train is not None else workload.infer.attention
    gap = (flash_attention_2_gap(gpu) if "attention" in where.data and uses_flash_attention_2(
        attention, None if workload.train is not None else engine) else None)
    if gap:
        other = "sdpa" if workload.architecture.sdpa_supported else "eager"
        raise where.error(f"flash (FlashAttention-2, flash_attention_2) cannot run on {gap}", "attention",
                          f"Use attention: {other}, or an NVIDIA GPU "
                          "of compute capability 8.0 or more or an AMD one ('planner catalog gpus' lists them).")
    for key, value, dtype, instead in checks:
        feature = dtype_feature(dtype, engine)
        if feature is None or getattr(gpu, feature) or key not in where.data:
            continue
        name = f"{key}:"  # a file's key: an option's error (OptionError) says it as the option, an API's as keyword
        vllm = (" or engine: vllm (vLLM runs fp8 weights and KV "
                "cache on 16-bit GPUs)" if dtype == "fp8" and engine != "vllm" and gpu.bf16
                and workload.infer is not None else "")
        raise where.error(
            f"{value} needs a GPU with {feature} support; {gpu.id} ({gpu.architecture}) has none", key,
            f"Use {name} {' or '.join(instead)}{vllm}, or a GPU with {feature} ('planner catalog gpus' shows which "
            "have it).")


def workload_from_mapping(data: dict[str, Any], resolve_model: Callable[[str, Entry], tuple[str, str, Architecture]],
                          *, file: str | None = None, path: str = "", error: type[InputError] = ScenarioError,
                          default_name: str = "workload") -> Workload:
    """Convenience wrapper of :func:`workload_from_entry` for a plain mapping."""
    return workload_from_entry(Entry(data, file=file, path=path, error=error), resolve_model,
                               default_name=default_name)


__all__ = [
    "TASKS",
    "METHODS",
    "CHECKPOINTING",
    "ATTENTION",
    "WEIGHT_FORMATS",
    "KV_DTYPES",
    "ENGINES",
    "LLAMACPP_WEIGHTS",
    "LLAMACPP_KV_TYPES",
    "LLAMACPP_UBATCH",
    "DATASET_FORMATS",
    "CHECKPOINT_DTYPES",
    "MAX_MICRO_BATCH",
    "MAX_SEQ_LEN",
    "MAX_GPUS",
    "MIN_GPU_MEMORY_UTILIZATION",
    "OFFLOAD_OPTIMIZERS",
    "TRAIN_KEYS",
    "INFER_KEYS",
    "LLAMACPP_KEYS",
    "LLAMACPP_SPLIT_MODES",
    "HOST_KEYS",
    "LOAD_DTYPE_KEYS",
    "LOAD_DTYPES",
    "COMMON_KEYS",
    "Training",
    "Inference",
    "HostOptions",
    "Workload",
    "default_lora_targets",
    "workload_from_entry",
    "TOKEN_SUFFIXES",
    "MAX_TOKENS_PER_MONTH",
    "TOKENS_PER_MONTH_LIMIT",
    "MIN_BUSY_HOURS_PER_YEAR",
    "MIN_HOURS_PER_MONTH",
    "HOURS_FLOOR_TEXT",
    "written_floor",
    "BUSY_HOURS_FLOOR_HINT",
    "parse_token_count",
    "tokens_per_month",
    "check_tp",
    "check_positions",
    "zero_one_rank_warning",
    "training_warnings",
    "eager_only_warning",
    "flash_attention_2_gap",
    "uses_flash_attention_2",
    "checkpoint_format",
    "HF_ONLY_KEYS",
    "default_engine",
    "unnamed_engine",
    "ENGINE_DEFAULT_NOTE",
    "architecture_warnings",
    "weights_feature_dtype",
    "DTYPE_FEATURES",
    "dtype_feature",
    "LLAMACPP_BACKENDS",
    "llamacpp_backend",
    "check_gpu_support",
    "workload_from_mapping",
]


#: The options of ``planner estimate`` / ``fit`` that belong to the run, not to the workload: no workload-file
#: key holds them (README, "Workload options have file keys"), so a file's ``gpu:`` is said to be one of them
#: rather than hinted as 'gpus'.
COMMAND_LINE_ONLY = {
    "gpu": ("--gpu ID", "planner estimate --workload FILE --gpu rtx-4090 ('planner catalog gpus' lists the ids); "
                        "a scenario picks GPUs itself (constraints.allowed_gpus limits them)"),
    "headroom": ("--headroom FRACTION", "planner estimate --workload FILE --gpu ID --headroom 0.1"),
    "calibration": ("--calibration FILE", "planner estimate --workload FILE --gpu ID --calibration calibration.yaml"),
}


def _command_line_only(explain: Callable[[str, Any], tuple[str, str | None] | None]
                       ) -> Callable[[str, Any], tuple[str, str | None] | None]:
    """``explain`` (Entry.check_keys) that first says a key of :data:`COMMAND_LINE_ONLY` is an option of the
    command line only."""

    def told(key: str, value: Any) -> tuple[str, str | None] | None:
        if key in COMMAND_LINE_ONLY:
            option, example = COMMAND_LINE_ONLY[key]
            return (f"{option.split()[0]} is a command-line option only, not a workload-file key",
                    f"Remove it and give it on the command line: {example}.")
        return explain(key, value)

    return told
