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
from planner.workload.training import (  # noqa: F401  (re-exported)
    _training,
    default_lora_targets,
    training_warnings,
    zero_one_rank_warning,
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
