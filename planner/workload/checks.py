"""Checks against the model that both workload readers make.

A tensor-parallel degree the attention heads allow (:func:`check_tp`), a sequence a learned position
table holds (:func:`check_positions`), the Transformers attention kernel a model has, the quantized
format its ``config.json`` declares (:func:`checkpoint_format`) and the warnings every estimate of
an architecture carries. planner.workload.training and planner.workload.inference call them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from planner.model.architecture import SUPPORTED_MODEL_TYPES, WINDOW_NOT_READ, Architecture
from planner.model.quantization import weight_scheme
from planner.core.errors import InputError
from planner.core.names import clip_text
from planner.core.fields import Entry
from planner.workload.options import ATTENTION


def _with_hint(read: Callable[[], Any], entry: Entry, key: str, hint: str) -> Any:
    """``read()``, with ``hint`` added to an error at ``key`` that has none (e.g. 'must be at least 1, not 0')."""
    try:
        return read()
    except InputError as exc:
        if exc.hint is None and exc.entry in (entry.key_path(key), "--" + key.replace("_", "-")):
            raise entry.error(getattr(exc, "raw_problem", exc.problem), key, hint) from None  # an OptionError's raw
        raise


def check_tp(arch: Architecture, tp: int, where: Entry, key: str = "tp") -> None:
    """Refuse a tensor-parallel degree that does not divide the attention heads.

    With t > KV heads each GPU keeps one replicated KV head (as vLLM does), so t must
    then be a multiple of the KV heads; with t <= KV heads, t must divide them.
    """
    a, kv = arch.num_attention_heads, arch.num_key_value_heads
    if a % tp:
        divisors = [d for d in range(1, a + 1) if a % d == 0 and d <= 64]
        raise where.error(f"tp={tp} does not divide the {a} attention heads", key,
                          f"Use one of {', '.join(map(str, divisors))}.")
    if (tp <= kv and kv % tp) or (tp > kv and tp % kv):
        raise where.error(f"tp={tp} does not split the {kv} KV heads evenly", key,
                          "Use a degree that divides the KV heads or is a multiple of them.")


def check_positions(arch: Architecture, tokens: int, where: Entry, key: str) -> None:
    """Refuse a sequence longer than a learned absolute position embedding has rows.

    GPT-2 learns one embedding per position (``wpe``, ``n_positions`` rows): position
    ``n_positions`` and later index past the table (IndexError, or a device-side assert on CUDA).
    Rotary models run past their maximum and only get a warning (the caller's).
    """
    if not arch.hard_position_limit or tokens <= arch.max_position_embeddings:
        return
    n = arch.max_position_embeddings
    raise where.error(f"{tokens:,} tokens are more than the {n:,} positions a {arch.model_type} model has: its learned "
                      f"position embedding (wpe) holds n_positions = {n} rows, and position {n:,} and later index "
                      "past it (IndexError; a device-side assert on CUDA)", key,
                      f"Use {key}: {n} or less, or a model with rotary position embeddings (llama, qwen2, ...).")


def eager_only_warning(arch: Architecture) -> str:
    """The note for a model Transformers runs without SDPA (:attr:`Architecture.sdpa_supported`)."""
    return (f"Transformers has no SDPA attention for {arch.model_type}: it runs eager attention, whose "
            "score matrices (heads x sequence^2 per layer) are counted; attention: flash (flash_attention_2) "
            "avoids them.")


def _attention(entry: Entry, arch: Architecture) -> str:
    """The Transformers attention kernel: the entry's, else sdpa (eager for models without SDPA).

    Raises:
        InputError (of the entry's kind): sdpa given for a model Transformers cannot run with it.
    """
    attention = entry.str("attention", "sdpa" if arch.sdpa_supported else "eager", choices=ATTENTION)
    if attention == "flash" and not arch.flash_supported:
        raise entry.error(f"Transformers has no flash_attention_2 for {arch.model_type} (the multimodal "
                          "Gemma3ForConditionalGeneration: _supports_flash_attn is False)", "attention",
                          "Use attention: sdpa, or eager.")
    if attention == "sdpa" and not arch.sdpa_supported:
        raise entry.error(f"Transformers has no SDPA attention for {arch.model_type} (_supports_sdpa is False: "
                          f"{'its score softcapping' if arch.model_type == 'gemma2' else 'its attention sinks'})",
                          "attention", "Use attention: eager, or flash (flash_attention_2).")
    return attention


#: FlashAttention-2 (``attention: flash``, Transformers' ``attn_implementation="flash_attention_2"``) runs
#: on NVIDIA GPUs of compute capability 8.0 or more: Dao-AILab/flash-attention at 0251105a,
#: csrc/flash_attn/flash_api.cpp ``bool is_sm8x_min = cc_major >= 8; TORCH_CHECK(is_sm8x_min,
#: "FlashAttention only supports Ampere GPUs or newer.")``; its README.md, "FlashAttention-2 with CUDA
#: currently supports: Ampere, Ada, or Hopper GPUs (e.g., A100, RTX 3090, RTX 4090, H100). For Turing GPUs
#: (T4, RTX 2080), see the separate flash-attention-turing repo"; setup.py also builds sm_100 and sm_120
#: (Blackwell) with CUDA 12.8 or later.
FLASH_ATTENTION_2_MIN_CC = 8
#: NVIDIA architectures below compute capability 8.0, for a catalog GPU that gives no compute_capability.
FLASH_ATTENTION_2_OLD_NVIDIA = ("turing", "volta", "pascal", "maxwell", "kepler")
#: The vendors flash-attn builds for: CUDA, and ROCm (README.md at 0251105a, "AMD ROCm Support": the CK
#: backend "supports: MI200x, MI250x, MI300x, MI355x, and RDNA 3/4 GPUs"; setup.py's ROCm archs gfx90a,
#: gfx942, gfx950, gfx11xx, gfx12xx). Nothing else: no Intel Gaudi build (optimum-habana has its own
#: fused SDPA, which is not flash_attention_2).
FLASH_ATTENTION_2_VENDORS = ("nvidia", "amd")


def flash_attention_2_gap(gpu: Any) -> str | None:
    """Why FlashAttention-2 (``attention: flash``) cannot run on ``gpu``, or None when it can.

    Rule (:data:`FLASH_ATTENTION_2_MIN_CC`, :data:`FLASH_ATTENTION_2_VENDORS`): an NVIDIA GPU needs
    compute capability 8.0 or more (its ``compute_capability``; without one, an architecture of
    :data:`FLASH_ATTENTION_2_OLD_NVIDIA` is below it); an AMD GPU runs it (ROCm build); any other vendor
    (Intel Gaudi) has no flash-attn build. llama.cpp's own flash attention (``flash_attention: true``) is
    another kernel (ggml's, on CUDA, HIP, SYCL...) and is not judged here.

    Args:
        gpu: anything with ``id``, ``vendor``, ``architecture`` and ``compute_capability`` (a
            :class:`planner.catalog.gpus.Gpu`).

    Returns:
        The card and the reason, such as 't4 (turing, compute capability 7.5): flash-attn needs compute
        capability 8.0 or more (Ampere or newer)', or None.
    """
    vendor = str(getattr(gpu, "vendor", "")).lower()
    arch = str(getattr(gpu, "architecture", ""))
    cc = getattr(gpu, "compute_capability", None)
    if vendor not in FLASH_ATTENTION_2_VENDORS:
        return f"{gpu.id} ({vendor} {arch}): flash-attn builds for NVIDIA (CUDA) and AMD (ROCm) GPUs only"
    if vendor != "nvidia":
        return None
    if cc:
        try:
            major = int(str(cc).split(".")[0])
        except ValueError:
            return None
        if major >= FLASH_ATTENTION_2_MIN_CC:
            return None
        return (f"{gpu.id} ({arch}, compute capability {cc}): flash-attn needs compute capability "
                f"{FLASH_ATTENTION_2_MIN_CC}.0 or more (Ampere or newer)")
    if arch.lower() in FLASH_ATTENTION_2_OLD_NVIDIA:
        return (f"{gpu.id} ({arch}): flash-attn needs compute capability {FLASH_ATTENTION_2_MIN_CC}.0 or more "
                "(Ampere or newer)")
    return None


def uses_flash_attention_2(attention: str, engine: str | None) -> bool:
    """Whether a workload runs FlashAttention-2: ``attention: flash`` in training (any framework) or with
    engine hf. llama.cpp's ``flash_attention`` is ggml's kernel, and vLLM picks its own backend."""
    return attention == "flash" and engine in (None, "hf")


def checkpoint_format(arch: Architecture) -> tuple[str | None, int | None, str]:
    """The weight format a model's ``config.json`` ``quantization_config`` declares.

    Returns (format of :data:`WEIGHT_FORMATS` or None, group size or None, the config in words;
    '' when the config has no ``quantization_config``). Read as Transformers spells it: AWQ and
    GPTQ give ``quant_method`` 'awq'/'gptq' with ``bits`` and ``group_size`` (AWQ may say
    ``q_group_size``); bitsandbytes gives ``load_in_4bit`` (``bnb_4bit_quant_type`` 'nf4') or
    ``load_in_8bit``; FP8 checkpoints give ``quant_method`` 'fp8', gpt-oss's ``quant_method``
    'mxfp4'; compressed-tensors checkpoints (llm-compressor) ``quant_method`` 'compressed-tensors'
    with their ``config_groups`` (:func:`planner.model.quantization.weight_scheme`: FP8 W8A8,
    INT8 W8A8, W4A16/W8A16 are sized, other schemes are named and not sized).
    """
    q = arch.extra.get("quantization_config")
    if not isinstance(q, Mapping):
        return None, None, ""
    method = str(q.get("quant_method", "")).lower()
    if method == "compressed-tensors":
        scheme, words = weight_scheme(q)
        return (scheme.weight_format if scheme else None), (scheme.group_size if scheme else None), words
    bits = q.get("bits", q.get("w_bit"))
    given = q.get("quant_method")  # quoted as the config writes it, not lower-cased (h20b minor 3)
    named = ("?" if not isinstance(given, str) or not given.strip() else clip_text(given)
             if re.fullmatch(r"[A-Za-z0-9._-]+", given) else repr(clip_text(given)))
    words = f"quant_method {named}" + (f", bits {bits}" if bits is not None else "")
    group = q.get("group_size", q.get("q_group_size"))
    # whole numbers only (planner.model.config_keys.check_declared refuses others): 4096.0 is 4096
    group = int(group) if isinstance(group, (int, float)) and not isinstance(group, bool) else None
    if method in ("awq", "gptq") and bits == 4:
        return f"int4-{method}", group, words
    if method == "fp8":
        scheme, fp8_words = weight_scheme(q)
        return "fp8", None, fp8_words if scheme else words
    if method == "mxfp4":
        return "mxfp4", None, words
    if method == "bitsandbytes":
        kind = q.get("bnb_4bit_quant_type", "nf4")
        if q.get("load_in_4bit") and str(kind).lower() == "nf4":
            return "nf4", None, words + ", load_in_4bit nf4"
        if q.get("load_in_8bit"):
            return "int8", None, words + ", load_in_8bit"
        if q.get("load_in_4bit"):  # fp4 or a typo: the field and its value as written (h21b M7)
            shown = repr(clip_text(kind)) if isinstance(kind, str) else clip_text(str(kind))
            return None, group, words + f", load_in_4bit, quantization_config.bnb_4bit_quant_type {shown}"
    return None, group, words


def checkpoint_double_quant(arch: Architecture) -> bool | None:
    """Whether a bitsandbytes 4-bit checkpoint's constants are double-quantized, as its config.json's
    ``quantization_config.bnb_4bit_use_double_quant`` says (Transformers' BitsAndBytesConfig; the saved
    quant_state is nested exactly then, bitsandbytes functional.QuantState); None when it does not say."""
    q = arch.extra.get("quantization_config")
    if not isinstance(q, Mapping) or str(q.get("quant_method", "")).lower() != "bitsandbytes":
        return None
    flag = q.get("bnb_4bit_use_double_quant")
    return flag if q.get("load_in_4bit") is True and isinstance(flag, bool) else None


def architecture_warnings(arch: Architecture) -> list[str]:
    """What every estimate of this architecture should say: a generic model's activations follow a
    rule not validated for it (planner.model.generic)."""
    unknown = _unknown_activation(arch)
    if arch.generic:
        from planner.model.generic import describe

        return [describe(arch)] + unknown
    return ([text] if (text := _class_disagrees(arch)) else []) + _unread_window(arch) + unknown


def _unread_window(arch: Architecture) -> list[str]:
    """The warning for a ``sliding_window`` in the config.json of a model_type whose attention has none
    (planner.model.architecture.WINDOW_NOT_READ: Llama, Gemma), else an empty list: the key is kept
    as an attribute and nothing reads it, so every layer attends to the whole context (h29b M1)."""
    extra = arch.extra if isinstance(arch.extra, Mapping) else {}
    window = extra.get("sliding_window")
    if arch.model_type not in WINDOW_NOT_READ or window is None:
        return []
    return [f"config.json's sliding_window {clip_text(repr(window))} is not read for model_type {arch.model_type}: "
            f"its attention in Transformers (and llama.cpp) has no sliding window, so every layer is sized "
            "attending to the whole context"]


def _unknown_activation(arch: Architecture) -> list[str]:
    """The warning for a config whose activation key (planner.model.config_keys.ACTIVATION_KEYS; Falcon's
    ``activation``) names none Transformers builds (``ACTIVATIONS``: it would fail at ``ACT2FN[name]``), with the
    close matches and what planner assumes: the activation saves its input alone (planner.memory.saved
    ACTIVATION_SAVES' default, as silu); else an empty list. A name that is no name is refused before
    (config_keys._check_names)."""
    from planner.core.errors import did_you_mean
    from planner.model.config_keys import ACTIVATION_KEYS, ACTIVATIONS

    extra = arch.extra if isinstance(arch.extra, Mapping) else {}
    keys = ACTIVATION_KEYS + (("activation",) if arch.model_type == "falcon" else ())
    for key in keys:
        act = extra.get(key)
        if isinstance(act, str) and act not in ACTIVATIONS and act == arch.hidden_act:
            guess = did_you_mean(act, ACTIVATIONS, name_lookalike=False) or ""
            return [f"config.json's {key} {clip_text(act)!r} is no activation Transformers builds (activations.py "
                    "ACT2FN), so Transformers cannot load the model; planner sizes its MLP as if the activation "
                    "saved its input alone (as silu does)"
                    + (f". {guess}" if guess.startswith("Did you mean") else "")]
    return []


#: Transformers class-name endings of a causal LM's classes (LlamaForCausalLM, GPT2LMHeadModel,
#: Gemma3ForConditionalGeneration).
_CLASS_ENDINGS = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")


def _class_disagrees(arch: Architecture) -> str | None:
    """The warning for a config whose ``architectures`` names the class of another supported model_type than
    its ``model_type`` (LlamaForCausalLM with model_type mistral), or None. Transformers' AutoModelForCausalLM
    builds the class registered for ``model_type`` (transformers/models/auto/auto_factory.py,
    ``_BaseAutoModelClass.from_config``: ``type(config)`` picks the class), so planner sizes that one; the
    disagreement usually means a hand-edited config (h18b minor d)."""
    heads = arch.extra.get("architectures") if isinstance(arch.extra, Mapping) else None
    head = heads[0] if isinstance(heads, list) and heads and isinstance(heads[0], str) else None
    ending = next((e for e in _CLASS_ENDINGS if head and head.endswith(e)), None)
    if not head or not ending:
        return None
    named = head[:-len(ending)].lower()
    own = arch.model_type.lower().replace("_", "").replace("-", "")
    known = {t.replace("_", "").replace("-", ""): t for t in SUPPORTED_MODEL_TYPES}
    if named not in known or own.startswith(named) or named.startswith(own):
        return None  # an unknown class, or one of this model_type (Gemma3ForCausalLM for gemma3_text)
    return (f"config.json's architectures names {head}, the class of model_type {known[named]}, but its model_type "
            f"is {arch.model_type}: Transformers builds the class of model_type, so the model is sized as "
            f"{arch.model_type}; check that the config was not edited")
