"""A scenario workload's choice keys: which values each may take (a list, or ``auto``), and what
``auto`` means for each (planner.solve.scenario expands a workload into its variants with them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from planner.core.errors import ScenarioError, close_matches
from planner.core.fields import Entry
from planner.core.yamlio import LineDict
from planner.model.architecture import Architecture
from planner.workload.checks import check_tp
from planner.workload.frameworks import FRAMEWORKS
from planner.workload.inference import default_engine
from planner.workload.options import LAYER_WORDS

#: Keys a scenario workload may give as a list of allowed values (or ``auto``), per task,
#: in expansion order (the first varies slowest).
CHOICE_KEYS: dict[str, tuple[str, ...]] = {
    "train": ("seq_len", "framework", "offload_optimizer", "offload_params", "offload_activations", "checkpointing",
              "optimizer_in_backward", "loss_chunks", "fused_linear_loss", "fsdp_version", "zero", "tp", "gpus"),
    "infer": ("weights", "kv_dtype", "tp", "gpu_layers"),
}


#: Training keys a scenario workload that leaves them out (and names no ``framework``, whose recipes
#: set them) lets the solver choose, as ``auto``: ZeRO stage, optimizer offload and checkpointing.
#: auto's order starts at the reader's default (ZeRO-0, no offload, no checkpointing), so a machine
#: where the default fits reports it; a cheaper one may need the others, and the plan names them.
UNPINNED_AUTO_KEYS = ("zero", "offload_optimizer", "checkpointing")


#: What ``auto`` means for each choice key (``tp`` and ``gpus`` depend on the model and machine).
AUTO_VALUES: dict[str, tuple[Any, ...]] = {
    "zero": (0, 1, 2, 3),
    "offload_optimizer": (False, True),
    "offload_params": (False, True),
    "framework": FRAMEWORKS,
    "checkpointing": ("none", "full"),
    "offload_activations": (False, True),
    "optimizer_in_backward": (False, True),
    "loss_chunks": (0, 8),
    "fused_linear_loss": (False, True),
    "fsdp_version": (1, 2),
    "weights": ("bf16", "fp16", "fp8", "int8", "int4-awq", "int4-gptq", "nf4"),
    "kv_dtype": ("bf16", "fp16", "fp8"),
}


#: What ``auto`` means for ``engine: llama.cpp`` (GGUF presets and llama.cpp KV cache types), in order
#: of preference. Weights, best first by llama-quantize's own perplexity table (tools/quantize/quantize.cpp
#: QUANT_OPTIONS, Llama-3-8B: Q8_0 +0.0026, Q6_K +0.0217, Q5_K_M +0.0569, Q4_K_M +0.1754, Q3_K_M +0.6569
#: ppl; IQ4_XS, 4.25 bits per weight, between Q4_K_M and Q3_K_M): no F16/BF16 (Q8_0 is within 0.003 ppl
#: at half the bytes) and nothing below Q3_K_M (Q2_K costs +3.5 ppl; list it to allow it). KV cache:
#: f16 (llama.cpp's default), then q8_0 and q4_0 (a quantized V cache needs flash attention: with
#: ``flash_attention: false`` those variants are not generated).
LLAMACPP_AUTO_VALUES: dict[str, tuple[Any, ...]] = {
    "weights": ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M"),
    "kv_dtype": ("f16", "q8_0", "q4_0"),
}


#: Most GPUs a llama.cpp replica's layers are split over when the scenario leaves the count free.
MAX_LLAMACPP_SPLIT = 8


#: Largest tensor-parallel degree ``tp: auto`` considers.
MAX_AUTO_TP = 64

#: Most values a choice list may hold (``seq_len: [...]``, ``weights: [...]``): llama.cpp's 33 weight presets fit;
#: the scenario's total of combinations is bounded as well (planner.solve.scenario.MAX_COMBINATIONS; h23b N2).
MAX_CHOICE_VALUES = 64


# ----- workloads and their variants -----------------------------------------------------------

def _with(data: Mapping[str, Any], updates: Mapping[str, Any]) -> LineDict:
    """A copy of ``data`` (keeping line numbers) with ``updates`` applied."""
    out = LineDict(data)
    out.lines = dict(getattr(data, "lines", {}))
    out.line = getattr(data, "line", None)
    out.written = {k: t for k, t in getattr(data, "written", {}).items() if k not in updates}
    # a key a merge key brought in (<<: *anchor) stays merged unless updated: its errors name the '<<' line
    out.merged = {k: m for k, m in getattr(data, "merged", {}).items() if k not in updates}
    for k, v in updates.items():
        out[k] = v
        if k not in out.lines and out.line is not None:
            out.lines[k] = out.line
    return out


def valid_tp_degrees(arch: Architecture, limit: int = MAX_AUTO_TP) -> tuple[int, ...]:
    """Tensor-parallel degrees up to ``limit`` that split the model's heads evenly.

    Uses :func:`planner.workload.checks.check_tp` itself, so the rule is the one workload files follow.
    """
    out = []
    for tp in range(1, limit + 1):
        if tp_problem(arch, tp) is None:
            out.append(tp)
    return tuple(out)


def tp_problem(arch: Architecture, tp: int) -> str | None:
    """Why ``tp`` cannot split the model's heads (the check_tp message), or None when it can."""
    try:
        check_tp(arch, tp, Entry({}, file=None, error=ScenarioError))
    except ScenarioError as exc:
        return exc.problem
    return None


def _task_of(e: Entry) -> str | None:
    value = e.data.get("task")
    if value is None and ("method" in e.data or "micro_batch" in e.data):
        return "train"
    return value if isinstance(value, str) else None


def _choice_values(e: Entry, key: str, task: str, arch: Architecture) -> tuple[tuple[Any, ...], bool] | None:
    """The values of a choice key: (values, is_auto), or None when the key is fixed or absent."""
    if key == "tp" and task == "infer" and e.data.get("engine") == "llama.cpp":
        # llama.cpp splits a replica's layers over its GPUs (--split-mode layer): the GPU count is free
        # (most first, as tp: auto) unless gpus fixes it; a tp key is the workload reader's to refuse
        if "gpus" in e.data or "tp" in e.data:
            return None
        return tuple(range(min(MAX_LLAMACPP_SPLIT, arch.num_hidden_layers + 1), 0, -1)), True
    hf_without_tp = (key == "tp" and task == "infer" and default_engine(e.data) == "hf"
                     and not arch.transformers_tp_plan)  # Transformers has no tp_plan for it: one GPU per replica
    if key not in e.data:
        if key == "gpus" and task == "train":
            return None  # free: the machine decides (handled by the caller)
        if task == "train" and key in UNPINNED_AUTO_KEYS and "framework" not in e.data:
            # left out: the solver chooses, in auto's order (the reader's default first)
            return AUTO_VALUES[key], True
        if key == "tp" and task == "infer":
            return ((1,), True) if hf_without_tp else (_auto(key, task, arch, e.data.get("engine")), True)
        return None
    value = e.data[key]
    if isinstance(value, str) and value != "auto" and close_matches(value.strip().lower(), ["auto"]):
        raise e.error(f"{value!r} is not a value of {key}", key,
                      f"Did you mean 'auto'? Write {key}: auto (every valid value), one value or a list of them.")
    for v in value if isinstance(value, list) else [value]:  # 'MAX', ' all': the words are lower case, as for --gpu-layers
        if key == "gpu_layers" and isinstance(v, str) and v != v.strip().lower() in LAYER_WORDS:
            raise e.error(f"{v!r} is not a value of {key}", key, f"Did you mean {v.strip().lower()!r}? The words "
                          "(all, max, auto) are written in lower case.")
    if key == "gpu_layers" and isinstance(value, str) and value.strip().lower() in ("max", "auto"):
        # llama.cpp: every n_gpu_layers from all (n_layer + 1) down to 0, most first: on each card the
        # solver keeps the most layers that fit, and the machine's RAM must hold the rest
        return tuple(range(arch.num_hidden_layers + 1, -1, -1)), True
    if key == "gpu_layers":
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            for v in value:
                if isinstance(v, str) and v.strip().lower() in ("max", "auto"):
                    raise e.error(f"a gpu_layers list cannot hold {v!r}: {v} already means every count from "
                                  f"{arch.num_hidden_layers + 1} down to 0", key,
                                  f"Write gpu_layers: {v} alone, or list counts (and 'all').")
        else:
            return None  # one count: validated by the workload reader
    if isinstance(value, str) and value == "auto":
        if key == "seq_len":
            raise e.error("seq_len: auto would shorten the training sequences to any length", key,
                          "List the lengths you accept, longest first, e.g. seq_len: [4096, 2048, 1024].")
        if key == "tp" and task == "train" and (e.data.get("method") == "qlora" or e.data.get("use_dora") is True
                                                or e.data.get("load_in_8bit") is True):
            # QLoRA, 8-bit LoRA and DoRA train data-parallel or sharded (zero: 3), not tensor-parallel
            return (1,), True
        if hf_without_tp:
            return (1,), True
        return _auto(key, task, arch, e.data.get("engine")), True
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if not value:
            raise e.error("an empty list allows nothing", key, f"List at least one value, or write {key}: auto.")
        if len(value) > MAX_CHOICE_VALUES:  # before the pairwise check of repeats below (h23b N2)
            raise e.error(f"lists {len(value):,} values, more than the {MAX_CHOICE_VALUES} a choice list may hold",
                          key, f"List the values you would accept, at most {MAX_CHOICE_VALUES}"
                          + (", longest first." if key == "seq_len" else f", or write {key}: auto."))
        seen: list[Any] = []
        for v in value:
            if isinstance(v, (Mapping, list)):
                raise e.error(f"list items must be plain values, not {type(v).__name__}", key)
            if any(v == s and type(v) is type(s) for s in seen):
                raise e.error(f"lists {v!r} twice", key, "Give each value once.")
            seen.append(v)
        if key == "seq_len":
            _longest_first(e, value)
        return tuple(value), False
    return None


def _longest_first(e: Entry, lengths: Sequence[Any]) -> None:
    """Refuse a ``seq_len`` list that is not longest first (``[512, 2048]``): the variants of a workload are
    tried in the list's order (seq_len varying slowest), and memory grows with the length, so wherever a
    longer length fits a shorter one does too: every length after a shorter one would never be used, and
    the plan would train at the first (shortest) length without a word. Items that are not whole numbers are
    left to the workload reader.

    Raises:
        InputError (of the entry's kind): naming the first length listed after a shorter one, with the list
            sorted longest first as the hint.
    """
    if not all(type(v) is int for v in lengths):
        return
    for before, after in zip(lengths, lengths[1:]):
        if after > before:
            ordered = ", ".join(str(v) for v in sorted(lengths, reverse=True))
            raise e.error(f"lists {after} after the shorter {before}: a shorter length fits wherever a longer one "
                          f"does and is tried first, so {after} would never be used", "seq_len",
                          f"List the lengths longest first: seq_len: [{ordered}].")


def _auto(key: str, task: str, arch: Architecture, engine: Any = None) -> tuple[Any, ...]:
    if engine == "llama.cpp" and key in LLAMACPP_AUTO_VALUES:
        return LLAMACPP_AUTO_VALUES[key]
    if key == "tp":
        degrees = valid_tp_degrees(arch)
        return degrees if task == "train" else tuple(reversed(degrees))
    if key == "gpus":
        return ()
    return AUTO_VALUES[key]


__all__ = ["AUTO_VALUES", "CHOICE_KEYS", "LLAMACPP_AUTO_VALUES", "MAX_AUTO_TP", "MAX_CHOICE_VALUES", "MAX_LLAMACPP_SPLIT", "UNPINNED_AUTO_KEYS",
           "tp_problem", "valid_tp_degrees"]
