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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from planner.model.architecture import Architecture
from planner.model.quantization import weight_scheme
from planner.core.errors import InputError, ScenarioError
from planner.core.fields import Entry
from planner.workload.frameworks import (
    FRAMEWORK_SPECS,
    FRAMEWORKS,
    FSDP_VERSIONS,
    CURRENT_BNB_VERSION,
    defaults as framework_defaults,
    parse_version,
)
from planner.workload.recipes import OPTIMIZERS, RECIPES
from planner.workload.othernames import explainer
from planner.workload.options import (  # noqa: F401  (re-exported: planner.workload.spec names them all)
    ATTENTION,
    CHECKPOINT_DTYPES,
    CHECKPOINTING,
    COMMON_KEYS,
    DATASET_FORMATS,
    ENGINES,
    HOST_KEYS,
    INFER_KEYS,
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
    _attention,
    _with_hint,
    architecture_warnings,
    check_positions,
    check_tp,
    checkpoint_format,
    eager_only_warning,
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
        another GPU count (``dataclasses.replace``, planner.plan.candidates.with_gpus) says its own."""
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


def default_lora_targets(arch: Architecture, framework: str = "transformers") -> tuple[str, ...]:
    """The LoRA targets ``framework`` adapts by default on ``arch`` (peft's mapping for Transformers,
    torchtune's and LitGPT's recipe defaults; planner.workload.frameworks.default_lora_targets, which
    cites each). Raises planner.workload.frameworks.NoDefaultTargets where the framework has none."""
    from planner.workload.frameworks import default_lora_targets as rule

    return rule(framework, arch.model_type, [m.name for m in arch.linear_modules()])


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
        model_id, model_source, arch = resolve_model(entry.str("model"), entry)
    task = entry.str("task", "train" if entry.has("method") or entry.has("micro_batch") else None, choices=TASKS)
    if task is None:
        if "workloads" in entry.data and not entry.path:  # a scenario given where one workload goes
            raise entry.error("is a scenario (it has workloads:), not one workload", "workloads",
                              "Plan it with 'planner plan FILE', or give one workload's keys (task:, model:, ...).")
        raise entry.error("missing required key 'task'", None, "Write task: train or task: infer.")
    allowed = COMMON_KEYS + HOST_KEYS + (TRAIN_KEYS if task == "train" else INFER_KEYS)
    if task == "infer" and (not entry.path or entry.data.get("engine") == "llama.cpp"):
        # A workload of its own (a --workload file, the options) may give gpus: N, N / tp replicas, as
        # --gpus does. A scenario's workloads entry may not: the solver sizes one replica and picks tp;
        # but with engine llama.cpp gpus: N is that one replica's GPUs (its layer split).
        allowed += ("gpus",)
    other = INFER_KEYS if task == "train" else TRAIN_KEYS
    for key in entry.data:
        if key in other and key not in allowed:
            hint = f"Remove it or set task: {'infer' if task == 'train' else 'train'}."
            if key in ("context", "seq_len"):  # the same quantity under the other task's name
                ours, theirs = ("seq_len", "infer") if key == "context" else ("context", "train")
                hint = f"Write {ours}: {entry.data[key]} (the sequence length of task {task}), or set task: {theirs}."
            if key == "gpus":  # a scenario's inference workload is one replica on tp GPUs
                hint = ("A scenario's inference workload is one replica on tp GPUs, which the solver counts: set "
                        "tp: N, or task: train.")
            raise entry.error(f"{key!r} is an option of task {'infer' if task == 'train' else 'train'}, not {task}",
                              key, hint)
    entry.check_keys(allowed, explain=explainer(task))  # a name from another tool: say whose, and the planner's
    if "model" not in entry.data:
        raise entry.error("missing required key 'model'", None,
                          "Add model: a catalog id ('planner catalog models' lists them), a path to a config.json, "
                          "or a Hugging Face id whose config.json is in the local cache.")
    name = entry.str("name", default_name)
    warnings: list[str] = []
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
    if gpus_per_node is not None:
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
    return Workload(name, model_id, model_source, arch, task, infer=infer, host=host, gpus_per_node=gpus_per_node,
                    entry_warnings=tuple(warnings), notes=entry.str("notes", None, multiline=True),
                    hours_per_month=_hours_per_month(entry), tokens_per_month=tokens_per_month(entry))


#: Suffixes a token count may carry ("200M tokens a month"): SI multiples, as token counts are written.
TOKEN_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
#: Most tokens a month a workload may give (a trillion a day for 31 days; beyond any machine this plans).
MAX_TOKENS_PER_MONTH = 31e12


def parse_token_count(value: Any) -> float | None:
    """A token count written as a number (200000000, 2e8) or with a suffix ('200M', '1.5B', '200 M
    tokens', '50k'); None when ``value`` is neither. Suffixes are SI (k 1e3, M 1e6, B/G 1e9, T 1e12)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip().lower().replace(",", "").replace("_", "")
    for tail in (" tokens a month", " tokens per month", " tokens/month", " tokens", "tokens"):
        if text.endswith(tail):
            text = text[: -len(tail)].strip()
            break
    mult = 1.0
    if text and text[-1] in TOKEN_SUFFIXES:
        mult = TOKEN_SUFFIXES[text[-1]]
        text = text[:-1].strip()
    try:
        number = float(text)
    except ValueError:
        return None
    return number * mult


def tokens_per_month(entry: Entry) -> float | None:
    """The ``tokens_per_month`` key (:func:`parse_token_count`), above 0; None when absent.

    Raises:
        InputError: not a count, not above 0, above :data:`MAX_TOKENS_PER_MONTH`, or given with
            ``hours_per_month`` (two ways to say how busy the workload is).
    """
    if "tokens_per_month" not in entry.data:
        return None
    raw = entry.raw("tokens_per_month")
    count = parse_token_count(raw)
    if count is None or count != count:
        raise entry.error(f"{raw!r} is not a token count", "tokens_per_month",
                          "Write a number of tokens, e.g. tokens_per_month: 200M (or 200000000, 2e8; k, M, B, T).")
    if count <= 0 or count > MAX_TOKENS_PER_MONTH:
        raise entry.error(f"must be above 0 and at most {MAX_TOKENS_PER_MONTH:.0e}, not {raw!r}", "tokens_per_month",
                          "The tokens the workload processes a month: trained (training) or generated (inference).")
    if "hours_per_month" in entry.data:
        raise entry.error("give hours_per_month or tokens_per_month, not both", "tokens_per_month",
                          "planner compare derives the busy hours from tokens_per_month (tokens / tokens per second).")
    return count


def _hours_per_month(entry: Entry) -> float | None:
    return entry.number("hours_per_month", None, min=0, max=744)


def _host(entry: Entry) -> HostOptions:
    return HostOptions(
        dataloader_workers=entry.int("dataloader_workers", 2, min=0, max=256),
        dataset_size=entry.size("dataset_size", 0, max=2**50),
        dataset_format=entry.str("dataset_format", "arrow", choices=DATASET_FORMATS),
        checkpoint_dtype=entry.str("checkpoint_dtype", None, choices=CHECKPOINT_DTYPES),
        low_cpu_mem_usage=entry.bool("low_cpu_mem_usage", True),
        pin_memory=entry.bool("pin_memory", True),
    )


def zero_one_rank_warning(zero: int, data_parallel: int, offload: bool) -> str | None:
    """The warning for a ZeRO stage that shards over one data-parallel rank (None when there is
    nothing to warn about: no ZeRO, several ranks, or ZeRO-Offload, which needs the stage on one GPU)."""
    if zero > 0 and data_parallel == 1 and not offload:
        return f"ZeRO stage {zero} on one data-parallel rank shards nothing; it saves no GPU memory."
    return None


def training_warnings(arch: Architecture, train: Training) -> tuple[str, ...]:
    """The warnings of a training workload, from its options and model alone.

    In this order: a quantized checkpoint the method loads as a base model; a bitsandbytes base's
    (QLoRA's or 8-bit LoRA's) prepare_model_for_kbit_training without checkpointing; a bitsandbytes
    base on a mixture of experts (its experts stay 16-bit); QLoRA with ZeRO-3; a ZeRO stage over one
    data-parallel rank (:func:`zero_one_rank_warning`, which depends on ``train.gpus``); a recipe
    without fp32 masters under ZeRO (DeepSpeed clones partitions to fp32); a
    ``seq_len`` past ``max_position_embeddings``. Being derived, they hold for the options as they
    are: the same workload on another GPU count gets that count's warnings.

    Args:
        arch: the model.
        train: the validated options (:func:`workload_from_entry` refuses those that cannot run).

    Returns:
        The warnings as sentences; () when there is nothing to warn about.
    """
    out: list[str] = architecture_warnings(arch)
    _, _, ckpt_words = checkpoint_format(arch)
    if ckpt_words:
        out.append(f"the model's config.json declares a quantized checkpoint ({ckpt_words}); training sizes "
                   f"the base model as method {train.method} loads it, not as that checkpoint")
    if train.quantized_base and train.prepare_kbit_training and train.checkpointing == "none":
        out.append("prepare_model_for_kbit_training turns gradient checkpointing on unless the script passes "
                   "use_gradient_checkpointing=False; if yours does not, set checkpointing: full.")
    if train.quantized_base and arch.is_moe:
        pc = arch.param_counts()
        experts = arch.expert_parameters
        what, bits = ("QLoRA", "4-bit") if train.quantized_base == "nf4" else ("LoRA on an LLM.int8 base", "8-bit")
        out.append(f"{what} on {arch.model_type}: bitsandbytes quantizes nn.Linear modules only, and Transformers 5 "
                   f"keeps the MoE experts and router as parameters of their own, so they stay "
                   f"{'fp32 (prepare_kbit_training)' if train.prepare_kbit_training else '16-bit'} "
                   f"({experts + pc.router:,} of {pc.total:,} parameters): {bits} saves memory on the attention "
                   "projections alone.")
    if train.method == "qlora" and train.zero == 3 and train.framework != "torchtune":
        out.append(f"QLoRA with {'FSDP' if train.fsdp else 'ZeRO-3'} needs bitsandbytes quant-storage support "
                   "(bnb_4bit_quant_storage); the estimate assumes it.")
    one_rank = zero_one_rank_warning(train.zero, train.data_parallel, train.offload_optimizer or train.offload_params)
    if one_rank:
        out.append(one_rank)
    fw = FRAMEWORK_SPECS[train.framework]
    if fw.fsdp and train.zero < 2 and train.fsdp_version != fw.fsdp_version:
        out.append(f"fsdp_version {train.fsdp_version} shards nothing here (zero {train.zero} on {train.data_parallel} "
                   "data-parallel rank(s)); it applies when FSDP shards over several GPUs (zero 2 or 3).")
    rec = RECIPES[train.recipe]
    if train.zero and train.method == "full" and not rec.master_bytes and not train.offload_optimizer and not train.fsdp:
        # DeepSpeed stage_1_and_2.py / stage3.py clone every partition to fp32
        # (single_partition_of_fp32_groups, fp32_partitioned_groups_flat) and build the optimizer on it.
        if rec.weight_bytes == 4:
            out.append(f"recipe {train.recipe} under ZeRO: DeepSpeed clones each rank's fp32 partition once more for "
                       "its optimizer (+4 B per parameter / data-parallel ranks, not counted here); PyTorch FSDP, "
                       "which this estimate matches, does not.")
        else:
            out.append(f"recipe {train.recipe} keeps no fp32 master copy: under ZeRO that is PyTorch FSDP sharding "
                       f"{rec.dtype} parameters, gradients and optimizer states. DeepSpeed ZeRO clones every partition "
                       f"to fp32 and keeps fp32 optimizer states whatever the model's dtype: for DeepSpeed plan recipe "
                       f"mixed-{rec.dtype}.")
    if train.seq_len > arch.max_position_embeddings:
        out.append(f"seq_len {train.seq_len} exceeds the model's max_position_embeddings "
                   f"({arch.max_position_embeddings}); quality beyond it is not guaranteed.")
    if train.attention == "eager" and not arch.sdpa_supported:
        out.append(eager_only_warning(arch))
    return tuple(out)


def _training(entry: Entry, arch: Architecture, warnings: list[str]) -> Training:
    fw_name = entry.str("framework", "transformers", choices=FRAMEWORKS)
    fw = FRAMEWORK_SPECS[fw_name]
    method = entry.str("method", "full", choices=METHODS)
    micro_batch = entry.int("micro_batch", 1, min=1, max=MAX_MICRO_BATCH)
    seq_len = entry.int("seq_len", min(2048, arch.max_position_embeddings), min=1, max=MAX_SEQ_LEN)
    grad_accum = entry.int("grad_accum", 1, min=1, max=1_000_000)
    tp = entry.int("tp", 1, min=1, max=1024)
    gpus = _with_hint(lambda: entry.int("gpus", tp, min=1, max=MAX_GPUS), entry, "gpus",
                      f"Give a count from 1 to {MAX_GPUS}: every GPU the job runs on (data-parallel ranks x "
                      "tensor-parallel degree).")
    if gpus % tp:
        raise entry.error(f"gpus ({gpus}) is not a multiple of tp ({tp})", "gpus",
                          "gpus counts every GPU: data-parallel ranks x tensor-parallel degree.")
    check_tp(arch, tp, entry)
    load_in_4bit = entry.bool("load_in_4bit", False)
    if load_in_4bit and method != "adapter":
        raise entry.error(f"load_in_4bit is set but method is {method}", "load_in_4bit",
                          "For LoRA on an NF4 base set method: qlora; load_in_4bit is for method: adapter (LitGPT's "
                          "--quantize bnb.nf4).")
    if method == "adapter":
        _check_adapter(entry, arch, fw_name, gpus // tp)
    # the framework's recipes decide what a key left out means (planner.workload.frameworks.defaults)
    d = framework_defaults(fw_name, method=method, data_parallel=gpus // tp, seq_len=seq_len,
                           quantized=load_in_4bit)
    recipe = entry.str("recipe", d.recipe, choices=RECIPES)
    optimizer = entry.str("optimizer", d.optimizer, choices=OPTIMIZERS)
    zero = entry.int("zero", d.zero, min=0, max=3)
    offload_optimizer = entry.bool("offload_optimizer", False)
    offload_params = entry.bool("offload_params", False)
    checkpointing = entry.str("checkpointing", d.checkpointing, choices=CHECKPOINTING)
    use_reentrant = entry.bool("use_reentrant", False)
    if method == "adapter" and checkpointing == "full":
        raise entry.error("LitGPT's adapter fine-tune on one GPU does not checkpoint activations (it does only under "
                          "FSDP, activation_checkpointing_policy)", "checkpointing", "Set checkpointing: none.")
    if "use_reentrant" in entry.data and checkpointing != "full":
        raise entry.error(f"use_reentrant is set but checkpointing is {checkpointing}", "use_reentrant",
                          "Set checkpointing: full, or remove use_reentrant.")
    attention = _attention(entry, arch)
    lora_rank = entry.int("lora_rank", d.lora_rank, min=1, max=65_536)
    targets = _comma_split(entry, entry.str_list("lora_targets", None), warnings)
    double_quant = entry.bool("double_quant", True)
    prepare_kbit = entry.bool("prepare_kbit_training", False)
    rec0 = RECIPES[recipe]
    adapter_default = d.adapter_dtype or ("fp32" if rec0.weight_bytes == 4 and rec0.compute_bytes == 4 else rec0.dtype)
    adapter_dtype = entry.str("adapter_dtype", adapter_default, choices=("fp32", "bf16", "fp16"))
    lora_dropout = entry.number("lora_dropout", d.lora_dropout, min=0, max=1, min_exclusive=False)
    use_dora = entry.bool("use_dora", False)
    dataset_tokens = entry.int("dataset_tokens", None, min=1, max=10**16)
    epochs = entry.number("epochs", 1.0, min=0, max=10_000, min_exclusive=True)
    load_in_8bit = entry.bool("load_in_8bit", False)
    rec = RECIPES[recipe]
    if load_in_8bit and method != "lora":
        raise entry.error(f"load_in_8bit is set but method is {method}", "load_in_8bit",
                          "QLoRA's base is 4-bit NF4; for LoRA on an LLM.int8 base set method: lora, or remove "
                          "load_in_8bit." if method == "qlora" else
                          "int8 weights cannot train: set method: lora for LoRA on an LLM.int8 base, or remove "
                          "load_in_8bit.")
    # A bitsandbytes base: QLoRA's NF4, LoRA's LLM.int8, or an adapter's NF4.
    kbit = method == "qlora" or load_in_8bit or load_in_4bit
    for key in ("lora_rank", "adapter_dtype", "lora_dropout", "use_dora", "double_quant", "prepare_kbit_training"):
        if key not in entry.data:
            continue
        if key == "double_quant" and method == "adapter" and load_in_4bit:
            continue
        if key == "double_quant" and method != "qlora":
            raise entry.error(f"{key} is set but method is {method}", key,
                              "Set load_in_4bit: true (an NF4 base), or remove double_quant." if method == "adapter"
                              else f"Set method: qlora, or remove {key}.")
        if method == "adapter":
            raise entry.error(f"{key} is set but method is adapter (LitGPT's LLaMA-Adapter has no LoRA settings"
                              + (", and LitGPT does not call peft's prepare_model_for_kbit_training"
                                 if key == "prepare_kbit_training" else "") + ")", key,
                              f"Remove {key}, or set method: lora or qlora.")
        if key == "prepare_kbit_training" and not kbit:
            hint = (f"Set method: qlora, or load_in_8bit: true, or remove {key}." if method == "lora" else
                    f"Set method: qlora, or remove {key}.")
            raise entry.error(f"{key} is set but method is {method}" + (" without load_in_8bit" if method == "lora"
                                                                         else ""), key, hint)
        if method == "full":
            raise entry.error(f"{key} is set but method is {method}", key, f"Set method: lora or qlora, or remove {key}.")
    if kbit and rec.weight_bytes == 4:
        what = ("QLoRA" if method == "qlora" else "An adapter on an NF4 base" if load_in_4bit else
                "LoRA on an LLM.int8 base")
        raise entry.error(f"{what} computes with a 16-bit base, but recipe {recipe!r} keeps fp32 weights", "recipe",
                          "Use recipe pure-bf16 (or pure-fp16 on GPUs without bf16).")
    if method in ("lora", "qlora"):
        valid = sorted({m.name for m in arch.linear_modules()})
        if targets is not None and not targets:
            # peft's LoraConfig(target_modules=[]) adapts nothing: nothing would train
            raise entry.error("lists no module: LoRA with no target module has nothing to train", "lora_targets",
                              "Name the modules to adapt, e.g. q_proj and v_proj, or all-linear; or remove "
                              "lora_targets for the default of this model type.")
        if arch.is_moe:
            # Transformers 5 keeps the experts and the router as parameters, not nn.Linear modules:
            # peft adapts them, if at all, with adapters of its own (target_parameters, fused
            # gate_up), which the memory model does not size. Shared experts and dense layers'
            # MLPs (DeepSeek, Qwen2-MoE) are nn.Linear modules and can be adapted.
            linear = {m.name for m in arch.linear_modules() if m.part in ("attention", "mlp")}
            moe = sorted({m.name for m in arch.linear_modules()} - linear)
            attn_modules = sorted(linear)
            asked = targets or []
            if asked == ["all-linear"] or any(t in moe for t in asked):
                shown = "all-linear" if asked == ["all-linear"] else ", ".join(t for t in asked if t in moe)
                raise entry.error(f"LoRA on {arch.model_type}'s experts or router ({shown}) is not modelled: "
                                  "Transformers 5 keeps them as fused parameters, not nn.Linear modules, and peft "
                                  "adapts them with adapters of its own", "lora_targets",
                                  ("Target the attention projections: " if all(
                                      m.part != "mlp" for m in arch.linear_modules()) else
                                   "Target the nn.Linear modules (attention, and the shared experts' and dense "
                                   "layers' MLPs): ") + f"{', '.join(attn_modules)}.")
            valid = attn_modules
        if targets is None:
            from planner.workload.frameworks import NoDefaultTargets

            try:
                targets = list(default_lora_targets(arch, fw_name))
            except NoDefaultTargets as exc:
                raise entry.error(str(exc), "lora_targets",
                                  ("Set lora_targets: " if arch.is_moe else "Set lora_targets: all-linear, or ")
                                  + f"some of {', '.join(valid)}."
                                  ) from None
        if targets == ["all-linear"]:
            targets = valid
        elif "all-linear" in targets:
            raise entry.error("all-linear is given beside other LoRA targets", "lora_targets",
                              "all-linear stands alone (it adapts every linear module): give it alone, "
                              "or list the modules without it.")
        for t in targets:
            if t not in valid:
                from planner.core.errors import did_you_mean
                raise entry.error(f"LoRA target {t!r} is not a linear module of {arch.model_type}", "lora_targets",
                                  did_you_mean(t, valid + ["all-linear"]))
    elif targets is not None:
        raise entry.error(f"lora_targets is set but method is {method}", "lora_targets",
                          "Set method: lora or qlora, or remove lora_targets.")
    if offload_optimizer and zero == 0:
        raise entry.error("offload_optimizer needs ZeRO stage 1, 2 or 3 (ZeRO-Offload)", "offload_optimizer",
                          "Set zero: 1 or higher.")
    if offload_params and zero != 3:
        if fw.fsdp:
            raise entry.error("offload_params needs FSDP's FULL_SHARD (zero 3): FSDP's CPUOffload(offload_params=True) "
                              "keeps each rank's parameter and gradient shards in host RAM", "offload_params",
                              "Set zero: 3.")
        raise entry.error("offload_params needs ZeRO stage 3 (ZeRO-Infinity)", "offload_params", "Set zero: 3.")
    if offload_optimizer and fw.fsdp and zero >= 2:
        # FSDP has one CPU offload, CPUOffload(offload_params=True), which moves the parameter and gradient
        # shards to host RAM and so steps the optimizer there (torch.distributed.fsdp.CPUOffload docs).
        raise entry.error(f"offload_optimizer is DeepSpeed's ZeRO-Offload; framework {fw_name} shards with PyTorch FSDP, "
                          "whose CPU offload moves parameters, gradients and the optimizer step to the host together",
                          "offload_optimizer", "Set offload_params: true (FSDP CPUOffload), or framework: deepspeed.")
    if offload_optimizer and optimizer not in OFFLOAD_OPTIMIZERS:
        # DeepSpeed runs an offloaded optimizer on the CPU with its own kernels; a client optimizer
        # (bitsandbytes', Transformers' Adafactor, torch's SGD) is refused unless the config sets
        # zero_force_ds_cpu_optimizer: false, and then steps CUDA-only code on CPU tensors.
        raise entry.error(f"ZeRO-Offload steps the optimizer on the CPU with DeepSpeed's own optimizers "
                          f"(DeepSpeedCPUAdam, DeepSpeedCPULion), and {optimizer} is not one of them (DeepSpeed "
                          "refuses a client optimizer with offload_optimizer)", "optimizer",
                          f"Use optimizer: {' or '.join(OFFLOAD_OPTIMIZERS)} with offload_optimizer, or leave "
                          "offload_optimizer out.")
    if offload_optimizer and method == "full" and rec.weight_bytes == 2 and not rec.master_bytes:
        # DeepSpeed's CPU optimizer always updates an fp32 partition with fp32 states
        # (stage_1_and_2.py single_partition_of_fp32_groups; stage3.py _create_fp32_partitions);
        # its only 16-bit variant, fp16_master_weights_and_gradients, still keeps fp32 states.
        raise entry.error(f"recipe {recipe} keeps no fp32 master copy, but ZeRO-Offload has no pure 16-bit mode: "
                          "DeepSpeed's CPU optimizer updates an fp32 copy of the parameters with fp32 states",
                          "recipe", f"Use recipe: mixed-{rec.dtype} (what DeepSpeed runs with {rec.dtype} enabled: "
                          "the same GPU side, fp32 master weights and states in host RAM), or leave "
                          "offload_optimizer out.")
    if use_dora and tp > 1:
        raise entry.error(f"DoRA does not run tensor parallel (tp {tp}): peft's tensor-parallel LoRA layer refuses "
                          "use_dora (peft tuners/lora/tp_layer.py)", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N) or sharded (zero: 3), or leave DoRA "
                          "out (plain LoRA runs tensor parallel).")
    if method == "qlora" and tp > 1:
        raise entry.error(f"QLoRA does not run tensor parallel (tp {tp}): Transformers and peft training do not shard "
                          "bitsandbytes 4-bit layers across GPUs", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N) or sharded (zero: 3 with "
                          "bnb_4bit_quant_storage, as FSDP-QLoRA does).")
    if load_in_8bit and tp > 1:
        raise entry.error(f"LoRA on an LLM.int8 base does not run tensor parallel (tp {tp}): Transformers and peft "
                          "training do not shard bitsandbytes 8-bit layers across GPUs", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N).")
    if load_in_8bit and zero == 3:
        # ZeRO-3 and FSDP partition parameters as flat float buffers; bitsandbytes' 8-bit layers keep
        # their int8 weight and fp32 row scales (Int8Params.SCB) outside any such storage, and
        # bnb_4bit_quant_storage, the hook FSDP-QLoRA uses, exists for 4-bit layers only (FSDP on an
        # 8-bit model: "Must flatten tensors with uniform dtype but got torch.float16 and torch.int8",
        # bitsandbytes issue 1709; LLaMA-Factory issue 3543: FSDP+QLoRA supports 4-bit only).
        raise entry.error("LoRA on an LLM.int8 base cannot shard its parameters (zero 3): bitsandbytes' 8-bit layers "
                          "have no quant-storage option for ZeRO-3 or FSDP (bnb_4bit_quant_storage is 4-bit only)",
                          "zero", "Use zero: 0, 1 or 2 (only the adapters' states are sharded), or method: qlora "
                          "with zero: 3.")
    # past a learned position table: refused; past a rotary model's maximum: warned (training_warnings)
    check_positions(arch, seq_len, entry, "seq_len")
    levers = _framework_levers(entry, fw_name, d, method=method, zero=zero, tp=tp, gpus=gpus, seq_len=seq_len,
                               grad_accum=grad_accum, checkpointing=checkpointing, optimizer=optimizer,
                               offload_optimizer=offload_optimizer, load_in_8bit=load_in_8bit,
                               load_in_4bit=load_in_4bit)
    return Training(method, recipe, optimizer, micro_batch, seq_len, grad_accum, gpus, tp, zero, offload_optimizer,
                    offload_params, checkpointing, attention, lora_rank, tuple(targets or ()), double_quant,
                    adapter_dtype, dataset_tokens, epochs, prepare_kbit, lora_dropout, use_dora, load_in_8bit,
                    use_reentrant, load_in_4bit=load_in_4bit, **levers)


def _comma_split(entry: Entry, targets: list[str] | None, warnings: list[str]) -> list[str] | None:
    """``lora_targets: q_proj,v_proj`` (one text) as the list it means, as ``--lora-targets`` reads it,
    with a warning that says so (nothing the user wrote is changed without a word)."""
    raw = entry.data.get("lora_targets")
    if not isinstance(raw, str) or "," not in raw or targets is None:
        return targets
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    warnings.append(f"lora_targets {raw!r} is one text: read as the list [{', '.join(parts)}], as --lora-targets "
                    f"reads it (write lora_targets: [{', '.join(parts)}] to say so)")
    return parts


def _check_adapter(entry: Entry, arch: Architecture, fw_name: str, data_parallel: int) -> None:
    """Refuse an adapter workload the model does not describe: LitGPT's LLaMA-Adapter on its own model
    code, one GPU, a model with layers past the adapter's start layer."""
    from planner.workload.frameworks import LITGPT_ADAPTER_START_LAYER

    if fw_name != "litgpt":
        raise entry.error(f"method adapter is LitGPT's LLaMA-Adapter (litgpt/adapter.py), not a {fw_name} method",
                          "method", "Set framework: litgpt, or method: lora.")
    if arch.generic or arch.is_mla or arch.is_moe:
        raise entry.error(f"LitGPT's adapter is modelled on LitGPT's fused-projection attention; {arch.model_type}'s "
                          "attention is not that", "method", "Use method: lora.")
    if arch.num_hidden_layers <= LITGPT_ADAPTER_START_LAYER:
        raise entry.error(f"{arch.model_type} has {arch.num_hidden_layers} layers; LitGPT's adapter starts at layer "
                          f"{LITGPT_ADAPTER_START_LAYER} (adapter_start_layer), so nothing would train", "method",
                          "Use method: lora.")
    if data_parallel > 1:
        raise entry.error(f"LitGPT's adapter on {data_parallel} GPUs (FSDP) is not modelled", "gpus",
                          "Use gpus: 1, or method: lora.")


def _check_framework_sharding(entry: Entry, fw_name: str, *, zero: int, dp: int, fsdp_version: int) -> None:
    """Refuse sharding settings a framework's own scripts cannot run (one line, naming the framework).

    - torchtune (recipes at 1814feb17): one GPU runs a ``*_single_device`` recipe (no sharding);
      several run a ``*_distributed`` recipe, which always wraps the model with FSDP2 ``fully_shard``
      (``fsdp_reshard_after_forward`` True: zero 3, False: zero 2); no DDP, no FSDP1.
    - litgpt (litgpt/finetune/lora.py, full.py, adapter.py ``setup`` at 00af8b0d): ``devices > 1``
      builds ``FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block},
      cpu_offload=False)`` (FSDP1, FULL_SHARD: zero 3, no CPU offload); one device runs no strategy.
    - unsloth is not refused here: its documentation runs several GPUs through accelerate (DDP) or
      DeepSpeed (unsloth.ai docs, "Multi-GPU Fine-tuning with Unsloth").
    """
    given = entry.data
    if fw_name == "torchtune":
        if dp > 1 and zero < 2:
            raise entry.error(f"torchtune's distributed recipes always shard with FSDP2 fully_shard, so {dp} GPUs "
                              f"cannot run zero {zero}", "zero",
                              "Use zero: 3 (fsdp_reshard_after_forward: True) or zero: 2 (False), or gpus: 1.")
        if "fsdp_version" in given and fsdp_version != 2:
            raise entry.error("torchtune shards with FSDP2 (fully_shard) only, not FSDP1", "fsdp_version",
                              "Use fsdp_version: 2, or framework: fsdp for FSDP1.")
    elif fw_name == "litgpt":
        if dp > 1 and zero != 3:
            raise entry.error(f"LitGPT runs {dp} GPUs with Lightning's FSDPStrategy (FULL_SHARD), not zero {zero}",
                              "zero", "Use zero: 3 (or leave zero out), or framework: fsdp / deepspeed.")
        if dp == 1 and zero > 0 and "zero" in given:
            raise entry.error(f"LitGPT on one GPU runs no sharding strategy (zero {zero} shards nothing there)",
                              "zero", "Use zero: 0 (or leave zero out), or gpus: 2 or more.")
        if "fsdp_version" in given and fsdp_version != 1:
            raise entry.error("LitGPT's finetune scripts shard with Lightning's FSDPStrategy, which is FSDP1",
                              "fsdp_version", "Use fsdp_version: 1, or framework: torchtune / fsdp for FSDP2.")
        if given.get("offload_params"):
            raise entry.error("LitGPT's finetune scripts build FSDPStrategy(cpu_offload=False): no parameter offload",
                              "offload_params", "Remove offload_params, or use framework: fsdp / deepspeed.")
        for key in ("offload_activations", "optimizer_in_backward"):
            if given.get(key) is True:
                raise entry.error(f"LitGPT's finetune scripts have no {key.replace('_', ' ')} (a torchtune lever)",
                                  key, f"Remove {key}, or use framework: torchtune.")


def _framework_levers(entry: Entry, fw_name: str, d: Any, *, method: str, zero: int, tp: int, gpus: int, seq_len: int,
                      grad_accum: int, checkpointing: str, optimizer: str, offload_optimizer: bool,
                      load_in_8bit: bool, load_in_4bit: bool = False) -> dict[str, Any]:
    """Read and check the framework and its levers (planner.workload.frameworks); the keyword arguments
    are the options read before them. Returns the :class:`Training` fields they set."""
    fw = FRAMEWORK_SPECS[fw_name]
    fsdp_names = ", ".join(n for n in FRAMEWORKS if FRAMEWORK_SPECS[n].fsdp)
    fsdp_version = entry.int("fsdp_version", d.fsdp_version or 1, min=1, max=2) if fw.fsdp else 0
    if "fsdp_version" in entry.data:
        if not fw.fsdp:
            raise entry.error(f"fsdp_version is set but framework {fw_name} does not shard with PyTorch FSDP "
                              f"({'DeepSpeed ZeRO shards its parameters' if fw_name != 'unsloth' else 'it runs without FSDP'})",
                              "fsdp_version", f"Set framework: to one of {fsdp_names}, or remove fsdp_version.")
        if fsdp_version not in FSDP_VERSIONS:  # pragma: no cover - min/max above
            raise entry.error(f"must be 1 or 2, not {fsdp_version}", "fsdp_version")
        if zero < 2 and "zero" in entry.data:
            # (with zero left out, one data-parallel rank defaults to 0: the version applies once the job runs
            # on more GPUs, as a scenario's may; training_warnings says it shards nothing meanwhile)
            raise entry.error(f"fsdp_version is set but zero is {zero}: FSDP shards with zero 2 (SHARD_GRAD_OP) or "
                              "3 (FULL_SHARD)", "fsdp_version", "Set zero: 3 (or 2), or remove fsdp_version.")
    if fw.fsdp and zero == 1:
        raise entry.error(f"framework {fw_name} shards with PyTorch FSDP, which has no stage that shards the optimizer "
                          "states alone (ZeRO-1)", "zero",
                          "Use zero: 2 (SHARD_GRAD_OP), 3 (FULL_SHARD) or 0 (no sharding), or framework: deepspeed.")
    _check_framework_sharding(entry, fw_name, zero=zero, dp=gpus // tp, fsdp_version=fsdp_version)
    if fw_name in ("litgpt", "unsloth") and tp > 1:
        raise entry.error(f"framework {fw_name} has no tensor parallelism for fine-tuning (tp {tp})", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N).")
    if fw_name == "litgpt" and (method == "qlora" or load_in_8bit) and gpus > 1:
        raise entry.error(f"LitGPT refuses a quantized base on {gpus} GPUs ('Quantization is currently not supported "
                          "for multi-GPU training', litgpt/finetune/lora.py)", "gpus",
                          "Use gpus: 1, or method: lora (a 16-bit base, sharded by FSDP).")
    if fw_name == "torchtune" and load_in_8bit:
        raise entry.error("torchtune has no LLM.int8 base (its QLoRA base is torchao's NF4)", "load_in_8bit",
                          "Use method: qlora, or framework: transformers.")
    loss_chunks = entry.int("loss_chunks", d.loss_chunks, min=0, max=MAX_SEQ_LEN)
    if loss_chunks > seq_len:
        raise entry.error(f"{loss_chunks:,} loss chunks are more than the {seq_len:,} tokens of a sequence (chunks "
                          "split the sequence)", "loss_chunks", f"Use loss_chunks: {min(8, seq_len)} or another "
                          f"count up to {seq_len:,}.")
    fused = entry.bool("fused_linear_loss", False)
    if fused and loss_chunks > 1 and "loss_chunks" in entry.data:
        raise entry.error("fused_linear_loss chunks the head and the loss itself; loss_chunks is a different loss",
                          "loss_chunks", "Remove loss_chunks, or set fused_linear_loss: false.")
    if fused:
        loss_chunks = 0
    offload = entry.bool("offload_activations", d.offload_activations)
    if offload and fw_name == "torchtune" and checkpointing != "full":
        raise entry.error("torchtune offloads activations only with activation checkpointing "
                          "('enable_activation_offloading should only be True when enable_activation_checkpointing "
                          "is True', recipes/*_single_device.py)", "offload_activations",
                          "Set checkpointing: full, or offload_activations: false.")
    in_bwd = entry.bool("optimizer_in_backward", d.optimizer_in_backward)
    if in_bwd:
        if grad_accum > 1:
            raise entry.error(f"optimizer_in_backward steps each parameter as its gradient completes, so there are no "
                              f"gradients to accumulate over {grad_accum} micro-batches (torchtune: 'Gradient "
                              "accumulation is not supported with optimizer in bwd')", "optimizer_in_backward",
                              "Set grad_accum: 1, or optimizer_in_backward: false.")
        if offload_optimizer:
            raise entry.error("optimizer_in_backward cannot run with ZeRO-Offload, which steps DeepSpeed's CPU "
                              "optimizer after backward", "optimizer_in_backward",
                              "Set offload_optimizer: false, or optimizer_in_backward: false.")
        if zero >= 1 and not fw.fsdp:
            raise entry.error(f"optimizer_in_backward is not a DeepSpeed ZeRO mode (zero {zero}): DeepSpeed steps its "
                              "optimizer on the flat partitions after backward", "optimizer_in_backward",
                              f"Set zero: 0, or framework: to one of {fsdp_names} (FSDP steps per parameter).")
        if zero < 2 and gpus // tp > 1:
            raise entry.error(f"optimizer_in_backward over {gpus // tp} data-parallel ranks without FSDP: DDP all-reduces "
                              "gradients in buckets after they complete, so a parameter cannot be stepped as its own "
                              "gradient completes", "optimizer_in_backward",
                              f"Set zero: 3 with framework: one of {fsdp_names}, or gpus: {tp}.")
    bnb_version = entry.str("bnb_version", CURRENT_BNB_VERSION)
    if parse_version(bnb_version) is None:
        raise entry.error(f"{bnb_version!r} is not a bitsandbytes release number", "bnb_version",
                          "Write it as X.Y.Z, e.g. bnb_version: '0.42.0'.")
    if "bnb_version" in entry.data:
        uses_bnb = ((method == "qlora" and fw_name != "torchtune") or load_in_8bit or load_in_4bit
                    or OPTIMIZERS[optimizer].bitsandbytes)
        if not uses_bnb:
            raise entry.error("bnb_version is set but nothing in this workload runs bitsandbytes (no bitsandbytes "
                              "base, no bitsandbytes optimizer" + ("; torchtune's QLoRA base is torchao's NF4"
                                                                  if fw_name == "torchtune" else "") + ")",
                              "bnb_version", "Remove bnb_version.")
    compile_ = entry.bool("compile", False)
    return dict(framework=fw_name, fsdp_version=fsdp_version, loss_chunks=loss_chunks,
                fused_linear_loss=fused, offload_activations=offload, optimizer_in_backward=in_bwd,
                bnb_version=bnb_version, compile=compile_)


#: Keys only engine hf reads: a workload that gives one and names no engine stays on Transformers.
HF_ONLY_KEYS = ("attention",)


def default_engine(data: Mapping[str, Any]) -> str:
    """The engine of an inference workload mapping that names none (``engine`` absent).

    Serving several sequences at once (``concurrency`` above 1) defaults to vLLM: its paged KV cache
    allocates blocks as sequences grow and its scheduler batches them continuously (the vLLM paper,
    Kwon et al., SOSP 2023, section 4), where Transformers ``generate`` pads one static batch;
    issue #19 measured Qwen2.5-72B for 50 users at 8k context at $50,301 with Transformers and $16,869
    with vLLM. One sequence, or a workload setting an hf-only key (:data:`HF_ONLY_KEYS`), stays on
    Transformers ('hf'). A workload that names an engine keeps it.
    """
    engine = data.get("engine")
    if engine is not None:
        return engine
    return unnamed_engine(data)


def unnamed_engine(data: Mapping[str, Any]) -> str:
    """The engine :func:`default_engine` gives a workload mapping whatever its ``engine`` key says:
    'vllm' for ``concurrency`` above 1 without an hf-only key, else 'hf'. The reader passes it as
    the default of ``engine``, so a written engine is still checked against the choices."""
    concurrency = data.get("concurrency", 1)
    many = isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency > 1
    return "vllm" if many and not any(k in data for k in HF_ONLY_KEYS) else "hf"


#: What a defaulted engine's note says (estimate, fit and plan print it).
ENGINE_DEFAULT_NOTE = ("engine vllm chosen by default: the workload serves several sequences at once and names no "
                       "engine, so it is sized for vLLM's paged KV cache and continuous batching; pin it with "
                       "engine: hf (--engine hf) for Transformers generate")


def _inference(entry: Entry, arch: Architecture, warnings: list[str]) -> Inference:
    if entry.data.get("engine") == "llama.cpp":
        return _llamacpp_inference(entry, arch, warnings)
    for key in LLAMACPP_KEYS:
        if key in entry.data:
            raise entry.error(f"{key} is a llama.cpp setting and does nothing with engine "
                              f"{entry.data.get('engine', 'hf')}", key, "Set engine: llama.cpp, or remove it.")
    ckpt_fmt, ckpt_group, ckpt_words = checkpoint_format(arch)
    weights = entry.str("weights", ckpt_fmt or "bf16", choices=WEIGHT_FORMATS)
    if ckpt_words and "weights" in entry.data and weights != ckpt_fmt:
        warnings.append(f"the model's config.json declares a quantized checkpoint ({ckpt_words}); the weights are "
                        f"sized as weights: {weights}, as given")
    elif ckpt_words and ckpt_fmt is None:
        warnings.append(f"the model's config.json declares a quantized checkpoint ({ckpt_words}) of a format the "
                        f"memory model does not size; the weights are sized as {weights} (give weights: to choose)")
    if weights == "compressed-tensors" and ckpt_fmt != "compressed-tensors":
        raise entry.error("compressed-tensors weights need a compressed-tensors checkpoint of a sized scheme (config.json "
                          "quantization_config with quant_method compressed-tensors: FP8 W8A8, INT8 W8A8 or W4A16/W8A16)"
                          + (f"; this config declares {ckpt_words}" if ckpt_words else ""), "weights",
                          "Use weights: bf16, fp8, int8, int4-awq, int4-gptq or nf4.")
    if weights == "mxfp4" and ckpt_fmt != "mxfp4":
        raise entry.error("mxfp4 weights need an MXFP4 checkpoint (config.json quantization_config with quant_method "
                          "mxfp4, as gpt-oss ships); engines do not convert other checkpoints to it", "weights",
                          "Use weights: bf16, fp8, int8, int4-awq, int4-gptq or nf4.")
    kv_default = weights if weights in ("fp32", "fp16", "bf16") else "bf16"
    kv_dtype = entry.str("kv_dtype", kv_default, choices=KV_DTYPES)
    group_default = ckpt_group if (ckpt_group and weights == ckpt_fmt) else 128
    group_size = entry.int("group_size", group_default, min=-1, max=1_000_000)
    if group_size in (0,):
        raise entry.error("must be a positive number of values per scale, or -1 (one scale per output column)",
                          "group_size")
    if "group_size" in entry.data and not weights.startswith("int4"):
        raise entry.error(f"group_size applies to int4-gptq and int4-awq weights, not {weights}", "group_size",
                          "Remove it, or set weights: int4-gptq or int4-awq.")
    if weights.startswith("int4") and arch.hidden_size % group_size and group_size != -1:
        fits = [g for g in (32, 64, 128, 256) if arch.hidden_size % g == 0]
        raise entry.error(f"group_size {group_size} does not divide hidden_size {arch.hidden_size}", "group_size",
                          f"Use {' or '.join(map(str, fits))} (GPTQ and AWQ models usually use 128)." if fits else None)
    context = entry.int("context", min(4096, arch.max_position_embeddings), min=1, max=MAX_SEQ_LEN)
    concurrency = entry.int("concurrency", 1, min=1, max=MAX_MICRO_BATCH)
    # (hints name keys as 'key: value', which planner.workload.inputs.option_form turns into '--key value' for options)
    gpus = _with_hint(lambda: entry.int("gpus", None, min=1, max=MAX_GPUS), entry, "gpus",
                      f"Give a count from 1 to {MAX_GPUS}: the GPUs the inference replicas run on, tp: N each "
                      "(without tp: N, one replica on all of them).")
    if gpus is not None and "tp" not in entry.data:
        # gpus: N without tp is one replica on all N GPUs, as --gpus N without --tp
        try:
            check_tp(arch, gpus, entry, "gpus")
        except InputError as exc:
            raise entry.error(f"an inference replica on {gpus} GPUs runs at tp {gpus}: {exc.problem}", "gpus",
                              exc.hint) from None
    tp = entry.int("tp", gpus or 1, min=1, max=1024)
    check_tp(arch, tp, entry)
    replicas = 1
    if gpus is not None:
        if gpus % tp:
            raise entry.error(f"{gpus} GPUs do not hold whole replicas of tp {tp}", "gpus",
                              f"An inference replica runs on tp: {tp} GPUs: give gpus: "
                              f"{', '.join(str(tp * k) for k in range(1, 4))} or another multiple of {tp}, or leave "
                              "it out for one replica.")
        replicas = gpus // tp
    # the default is a fresh string, never the written value: Entry.str returns its default unchecked
    engine = entry.str("engine", unnamed_engine(entry.data), choices=ENGINES)
    defaulted = "engine" not in entry.data and engine != "hf"
    if engine == "hf" and tp > 1 and not arch.transformers_tp_plan:
        raise entry.error(f"Transformers cannot run {arch.model_type} tensor parallel (tp {tp}): its config declares "
                          "no base_model_tp_plan", "tp" if "tp" in entry.data else "gpus",
                          "Use engine: vllm (which runs it tensor parallel), or tp: 1 (with gpus: N for N replicas).")
    util = entry.number("gpu_memory_utilization", 0.9, min=0, max=1, min_exclusive=True)
    if util < MIN_GPU_MEMORY_UTILIZATION:
        raise entry.error(f"must be at least {MIN_GPU_MEMORY_UTILIZATION:g}, not {util!r}", "gpu_memory_utilization",
                          "vLLM's share of the card: below a billionth, it is less than a byte of a 1 GiB card.")
    if util >= 1:
        raise entry.error("must be below 1: vLLM starts only when the memory free after the CUDA context is at "
                          "least gpu_memory_utilization x the card", "gpu_memory_utilization",
                          "Use 0.9 (vLLM's default) or up to about 0.95 on large cards.")
    if engine != "vllm" and "gpu_memory_utilization" in entry.data:
        raise entry.error("gpu_memory_utilization is vLLM's budget and does nothing with engine hf",
                          "gpu_memory_utilization", "Set engine: vllm, or remove it.")
    mnbt = entry.int("max_num_batched_tokens", None, min=1, max=MAX_SEQ_LEN * 64)
    if engine == "hf" and mnbt is not None and mnbt < concurrency:
        # Transformers prefills the whole batch in each forward pass, GenerationConfig(prefill_chunk_size)
        # tokens of every sequence, and a chunk is at least one token (planner.memory.estimate._infer).
        raise entry.error(f"{mnbt:,} tokens per forward pass are fewer than the {concurrency:,} sequences of the "
                          "batch: Transformers prefills every sequence of the batch in each pass, at least one token "
                          "each (prefill_chunk_size >= 1)",
                          "max_num_batched_tokens",
                          f"Give max_num_batched_tokens: {concurrency} or more, or engine: vllm (which schedules "
                          "at most max_num_batched_tokens tokens per step).")
    max_seqs = entry.int("max_num_seqs", None, min=1, max=MAX_MICRO_BATCH)
    if engine != "vllm" and "max_num_seqs" in entry.data:
        raise entry.error("max_num_seqs is a vLLM setting and does nothing with engine hf", "max_num_seqs",
                          "Set engine: vllm, or remove it.")
    if engine == "vllm" and mnbt is not None and max_seqs is not None and mnbt < max_seqs:
        # vLLM's SchedulerConfig refuses this at start-up (vllm/config/scheduler.py, _verify_args:
        # "max_num_batched_tokens (...) must be greater than or equal to max_num_seqs (...)"): every
        # scheduled sequence takes at least one token of the step's budget
        raise entry.error(f"max_num_batched_tokens {mnbt:,} is below max_num_seqs {max_seqs:,}: vllm serve refuses "
                          "to start (each sequence of a step takes at least one of its batched tokens)",
                          "max_num_batched_tokens",
                          f"Give max_num_batched_tokens: {max_seqs} or more, or max_num_seqs: {mnbt} or fewer.")
    if max_seqs is not None and concurrency > max_seqs:
        warnings.append(f"concurrency {concurrency} is more than max_num_seqs {max_seqs}: vLLM runs at most "
                        f"{max_seqs} sequences at once and queues the rest (their KV cache is still sized here)")
    sliding = entry.bool("sliding_window", True)
    if engine == "vllm" and "attention" in entry.data:
        raise entry.error("sets the Transformers attention kernel (eager, sdpa, flash) and does nothing with engine "
                          "vllm: vLLM picks its own attention backend, and its start-up profile sizes it", "attention",
                          "Remove it, or set engine: hf.")
    attention = _attention(entry, arch) if engine != "vllm" else entry.str("attention", "sdpa", choices=ATTENTION)
    if engine != "vllm" and attention == "eager" and not arch.sdpa_supported:
        warnings.append(eager_only_warning(arch))
    if engine == "vllm" and arch.model_type == "gpt_oss":
        warnings.append("vLLM's start-up logs of gpt-oss-120b on one H100 show 4.7-4.8 GiB of memory the model "
                        "does not attribute (vllm#23278, #27508); the estimate counts 4.84 GiB for it as a term, "
                        "for every gpt-oss model (only the 120b on an H100 was measured).")
    if engine != "vllm" and weights == "mxfp4":
        warnings.append("Transformers keeps MXFP4 weights only with its triton kernels (triton >= 3.4 and the kernels "
                        "package); otherwise it dequantizes them to bf16 on load: size weights: bf16 then. The rest of "
                        "the checkpoint is bf16, so the planner asks for a GPU with bf16 (Ampere or newer).")
    if context > arch.max_position_embeddings:
        check_positions(arch, context, entry, "context")
        warnings.append(f"context {context} exceeds the model's max_position_embeddings "
                        f"({arch.max_position_embeddings}); quality beyond it is not guaranteed.")
        if engine == "vllm":
            warnings.append(f"vLLM refuses a max_model_len ({context:,}) above the model's maximum "
                            f"(max_position_embeddings {arch.max_position_embeddings:,}) unless the environment of "
                            "vllm serve sets VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.")
    scheme = None
    if weights == ckpt_fmt and isinstance(arch.extra.get("quantization_config"), Mapping):
        scheme, _ = weight_scheme(arch.extra["quantization_config"])
    warnings.extend(architecture_warnings(arch))
    return Inference(weights, group_size, kv_dtype, context, concurrency, tp, engine, util, mnbt, attention, sliding,
                     entry.int("tokens_per_request", None, min=1, max=MAX_SEQ_LEN),
                     entry.number("requests_per_hour", None, min=0, max=1e12), max_seqs, replicas, scheme=scheme,
                     engine_defaulted=defaulted)


def weights_feature_dtype(i: Inference) -> str:
    """The dtype whose hardware support the weights need (for :func:`dtype_feature`): a
    compressed-tensors checkpoint's activation scheme (FP8 W8A8: fp8, INT8 W8A8: int8, weight-only
    schemes: bf16, the 16-bit GPUs Marlin kernels run on), else the weight format itself."""
    if i.weights == "compressed-tensors" and i.scheme is not None:
        return {"fp8": "fp8", "int8": "int8"}.get(i.scheme.activations, "bf16")
    return i.weights


def _llamacpp_inference(entry: Entry, arch: Architecture, warnings: list[str]) -> Inference:
    """The options of an ``engine: llama.cpp`` workload (what llama-server and Ollama run).

    ``weights`` names a GGUF preset (default Q4_K_M, what Ollama's library tags serve; MXFP4_MOE for an
    MXFP4 checkpoint such as gpt-oss, whose experts every GGUF keeps in MXFP4), ``kv_dtype``
    the K cache type and ``kv_dtype_v`` the V cache type (default f16 both), ``gpu_layers`` the
    layers on the GPU (an integer, or 'all'; default all), ``max_num_batched_tokens`` the physical
    batch n_ubatch (default 512). ``gpus: N`` runs one replica with its layers split over N GPUs
    (llama.cpp's default ``--split-mode layer``); the result's ``tp`` holds N (the GPUs of one
    replica, not a tensor-parallel degree). ``tp`` other than 1 and ``split_mode: row`` are refused.
    """
    for key, why, hint in (("group_size", "GPTQ/AWQ's group size; a GGUF preset fixes its blocks", "Remove it."),
                           ("gpu_memory_utilization", "vLLM's budget", "Remove it."),
                           ("max_num_seqs", "a vLLM setting", "Remove it."),
                           ("attention", "the Transformers attention kernel",
                            "Remove it; llama.cpp's flash attention is flash_attention: true (the default) or "
                            "flash_attention: false.")):
        if key in entry.data:
            raise entry.error(f"{key} does nothing with engine llama.cpp: it is {why}", key, hint)
    # an MXFP4 checkpoint (gpt-oss) converts with MXFP4 experts: MXFP4_MOE is the file ggml-org ships
    raw = entry.str("weights", "MXFP4_MOE" if checkpoint_format(arch)[0] == "mxfp4" else "Q4_K_M")
    weights = raw.strip().upper()
    if weights not in LLAMACPP_WEIGHTS:
        from planner.core.errors import did_you_mean

        hint = did_you_mean(weights, LLAMACPP_WEIGHTS) or ""
        raise entry.error(f"{raw!r} is not a GGUF weight type llama.cpp makes", "weights",
                          (hint + " " if hint.startswith("Did you mean") else "")
                          + "Use a llama-quantize preset: Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q3_K_M, Q2_K, IQ4_XS, F16, ...")
    kv_k = entry.str("kv_dtype", "f16").strip().lower()
    kv_k = {"fp16": "f16", "fp32": "f32"}.get(kv_k, kv_k)
    kv_v = entry.str("kv_dtype_v", kv_k).strip().lower()
    kv_v = {"fp16": "f16", "fp32": "f32"}.get(kv_v, kv_v)
    for key, value in (("kv_dtype", kv_k), ("kv_dtype_v", kv_v)):
        if value not in LLAMACPP_KV_TYPES:
            raise entry.error(f"{value!r} is not a llama.cpp KV cache type", key,
                              f"Use one of {', '.join(LLAMACPP_KV_TYPES)} (--cache-type-k / --cache-type-v).")
    fa = entry.bool("flash_attention", True)
    if not fa and kv_v not in ("f32", "f16", "bf16"):
        raise entry.error(f"a {kv_v} V cache needs flash attention, and llama.cpp refuses it without ('quantized V "
                          "cache was requested, but this requires Flash Attention')",
                          "kv_dtype_v" if "kv_dtype_v" in entry.data else "kv_dtype",
                          "Set flash_attention: true, or a 16-bit V cache (kv_dtype_v: f16).")
    L = arch.num_hidden_layers
    layers = entry.data.get("gpu_layers")
    if layers is None or (isinstance(layers, str) and layers.strip().lower() == "all"):
        gpu_layers = None
    elif isinstance(layers, str) and layers.strip().lower() in ("max", "auto"):
        raise entry.error(f"gpu_layers: {layers} asks for the most layers that fit a card, which needs a card",
                          "gpu_layers", f"Give a number from 0 to {L + 1} or 'all' here; 'planner fit --gpu ID "
                          "--gpu-layers max' finds the most that fit, and a scenario may write gpu_layers: max.")
    else:
        gpu_layers = entry.int("gpu_layers", None, min=0, max=10_000)
        if gpu_layers is not None and gpu_layers >= L + 1:
            gpu_layers = None  # every layer: llama.cpp clamps -ngl 999 to n_layer + 1
    context = entry.int("context", min(4096, arch.max_position_embeddings), min=1, max=MAX_SEQ_LEN)
    concurrency = entry.int("concurrency", 1, min=1, max=256)
    gpus = _with_hint(lambda: entry.int("gpus", None, min=1, max=MAX_GPUS), entry, "gpus",
                      f"Give a count from 1 to {MAX_GPUS}: the GPUs one llama.cpp replica splits its layers over.")
    if "tp" in entry.data and entry.data.get("tp") != 1:
        tp_raw = entry.int("tp", 1, min=1, max=1024)
        raise entry.error(f"tp {tp_raw}: llama.cpp splits a model over GPUs by whole layers (--split-mode layer), "
                          "not by tensor parallelism", "tp",
                          f"Give gpus: {tp_raw} for one replica with its layers split over {tp_raw} GPUs.")
    split = entry.str("split_mode", "layer", choices=LLAMACPP_SPLIT_MODES)
    if split == "row":
        raise entry.error("split_mode: row (each matrix's rows spread over the GPUs, ggml-cuda's split buffers) is "
                          "not modelled", "split_mode",
                          "Use split_mode: layer (llama.cpp's default: whole layers per GPU), which the planner models.")
    devices = gpus or 1
    if split == "none" and devices > 1:
        raise entry.error(f"split_mode: none runs on one GPU (--main-gpu), not the {devices} of gpus: {devices}",
                          "split_mode", "Remove gpus, or use split_mode: layer.")
    if devices > L + 1:
        raise entry.error(f"{devices} GPUs for {L + 1} layers: llama.cpp's layer split gives each GPU whole layers",
                          "gpus", f"Give gpus: {L + 1} or fewer.")
    ubatch = entry.int("max_num_batched_tokens", LLAMACPP_UBATCH, min=1, max=MAX_SEQ_LEN)
    sliding = entry.bool("sliding_window", True)
    imatrix = entry.bool("imatrix", None) if "imatrix" in entry.data else None
    if imatrix is False:
        from planner.model.gguf import imatrix_required

        needs = imatrix_required(arch, weights)
        if needs is not None:
            raise entry.error(f"{weights} cannot be made without an importance matrix: llama-quantize stops at "
                              f"{needs[0]} ({needs[1]}) with 'this quantization requires an importance matrix!'",
                              "imatrix", "Set imatrix: true (the published IQ1/IQ2/IQ3_XXS/IQ3_XS and Q2_K_S files are "
                              "made with one), or choose Q2_K, Q3_K_S, IQ3_S or a larger preset.")
    if context > arch.max_position_embeddings:
        check_positions(arch, context, entry, "context")
        warnings.append(f"context {context} exceeds the model's max_position_embeddings "
                        f"({arch.max_position_embeddings}); quality beyond it is not guaranteed.")
    return Inference(weights, 128, kv_k, context, concurrency, devices, "llama.cpp", 0.9, ubatch,
                     "flash" if fa else "eager",
                     sliding, entry.int("tokens_per_request", None, min=1, max=MAX_SEQ_LEN),
                     entry.number("requests_per_hour", None, min=0, max=1e12), None, 1,
                     gpu_layers=gpu_layers, flash_attention=fa, kv_dtype_v=kv_v if kv_v != kv_k else None,
                     imatrix=imatrix)


#: The GPU feature (a :class:`planner.catalog.gpus.Gpu` attribute) each dtype needs; fp16 and fp32 run everywhere.
#: MXFP4 checkpoints (gpt-oss) keep everything but the experts in bf16 and compute in bf16.
#: The same rule as the solver's precision filter (planner.plan.candidates.precision_needs).
DTYPE_FEATURES = {"bf16": "bf16", "fp8": "fp8", "int8": "int8", "mxfp4": "bf16"}


def dtype_feature(dtype: str, engine: str = "hf") -> str | None:
    """The GPU feature ``dtype`` needs (None: runs everywhere). vLLM runs fp8 weights and an fp8 KV
    cache on GPUs without fp8 tensor cores too: weight-only FP8 through its Marlin kernels
    (W8A16, Ampere and newer) and an fp8 KV cache read back to 16-bit in its attention kernels
    (vLLM docs, "FP8 W8A8": "Ampere GPUs are supported for W8A16 (weight-only FP8) utilizing
    Marlin kernels"; "Quantized KV Cache"). Those need a 16-bit (bf16) GPU, Ampere or newer."""
    if dtype == "fp8" and engine == "vllm":
        return "bf16"
    if engine == "llama.cpp":
        return None  # ggml's CUDA kernels read every GGUF and KV type on any card it supports
    return DTYPE_FEATURES.get(dtype)


#: The ggml backend llama.cpp runs on each GPU vendor of the catalog: ggml-cuda for NVIDIA, the same
#: sources built with HIP for AMD ROCm GPUs (GGML_HIP), ggml-sycl for Intel GPUs (Arc, Data Center GPU
#: Max) (ggml-org/llama.cpp docs/build.md, "CUDA", "HIP", "SYCL"). Intel's Gaudi accelerators are
#: HPUs with no ggml backend (:func:`llamacpp_backend`).
LLAMACPP_BACKENDS = {"nvidia": "CUDA", "amd": "HIP (ROCm)", "intel": "SYCL"}


def llamacpp_backend(gpu: Any) -> str | None:
    """The ggml backend llama.cpp would run ``gpu`` with ('CUDA', 'HIP (ROCm)', 'SYCL'), or None when
    it has none: Intel Gaudi (catalog ``architecture`` gaudi2, gaudi3) and vendors without one."""
    if str(getattr(gpu, "architecture", "")).lower().startswith("gaudi"):
        return None
    return LLAMACPP_BACKENDS.get(str(getattr(gpu, "vendor", "")).lower())


def check_gpu_support(workload: Workload, gpu: Any, where: Entry) -> None:
    """Refuse a dtype the user chose that ``gpu`` has no hardware support for, located at its key.

    Training checks the recipe's 16-bit dtype (bf16 recipes need ``gpu.bf16``) and an 8-bit base
    (``load_in_8bit`` needs ``gpu.int8``, for bitsandbytes' int8 matmul); inference checks
    the weights and the KV cache (bf16, fp8 and int8 need ``gpu.bf16``, ``gpu.fp8``, ``gpu.int8``).
    Only keys the entry gives are checked: a default the GPU cannot run is not a contradiction in
    what the user wrote (``planner estimate --gpu`` reports it in its verdict instead).

    An ``engine: llama.cpp`` workload is refused on a GPU llama.cpp has no backend for
    (:func:`llamacpp_backend`), at the ``engine`` key.

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
        checks = [("recipe", recipe, RECIPES[recipe].dtype, [recipe.replace("bf16", "fp16")])]
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
    for key, value, dtype, instead in checks:
        feature = dtype_feature(dtype, engine)
        if feature is None or getattr(gpu, feature) or key not in where.data:
            continue
        name = f"--{key.replace('_', '-')}" if where.file is None else f"{key}:"  # an option or a file's key
        vllm = (f" or {'--engine vllm' if where.file is None else 'engine: vllm'} (vLLM runs fp8 weights and KV "
                "cache on 16-bit GPUs)" if dtype == "fp8" and engine != "vllm" and gpu.bf16 else "")
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
    "COMMON_KEYS",
    "Training",
    "Inference",
    "HostOptions",
    "Workload",
    "default_lora_targets",
    "workload_from_entry",
    "TOKEN_SUFFIXES",
    "MAX_TOKENS_PER_MONTH",
    "parse_token_count",
    "tokens_per_month",
    "check_tp",
    "check_positions",
    "zero_one_rank_warning",
    "training_warnings",
    "eager_only_warning",
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
