"""The inference reader: a ``task: infer`` workload's options, validated, for each engine.

Which engine serves a workload that names none (:func:`default_engine`: vLLM for several sequences
at once, else Transformers); the Transformers and vLLM options (weights against the checkpoint's
declared format, KV cache, tensor parallelism and replicas, vLLM's budget and batching) and the
llama.cpp ones (GGUF presets, cache types, offloaded layers, the layer split); the GPU feature each
dtype needs (:func:`dtype_feature`) and the ggml backend llama.cpp runs a GPU with.
planner.workload.spec.workload_from_entry calls the reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.model.architecture import Architecture
from planner.model.quantization import kept_modules, weight_scheme
from planner.core.errors import InputError
from planner.core.fields import Entry
from planner.workload.options import (
    ATTENTION,
    ENGINES,
    KV_DTYPES,
    LAYER_WORDS,
    LLAMACPP_KEYS,
    LLAMACPP_KV_TYPES,
    LLAMACPP_SPLIT_MODES,
    LLAMACPP_UBATCH,
    LLAMACPP_WEIGHTS,
    MAX_GPUS,
    MAX_MICRO_BATCH,
    MAX_SEQ_LEN,
    MIN_GPU_MEMORY_UTILIZATION,
    MLA_KV_LAYOUTS,
    VLLM_LORA_KEYS,
    WEIGHT_FORMATS,
    Inference,
)
from planner.workload.engine_releases import ENGINE_RELEASES, engine_line, llamacpp_fa_default, vllm_lora_ranks
from planner.workload.releases import read_release
from planner.workload.checks import (
    _attention,
    _with_hint,
    architecture_warnings,
    check_positions,
    check_tp,
    checkpoint_double_quant,
    checkpoint_format,
    eager_only_warning,
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
    Transformers ('hf'). A workload that names an engine keeps it. In a scenario, a workload with an
    ``slo:`` block and no engine is served by vLLM at any user count (planner.solve.scenario: a
    latency target is a serving engine's).
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
ENGINE_DEFAULT_NOTE = ("engine vllm chosen by default: the workload serves several sequences at once (or has an slo: "
                       "latency target, in a scenario) and names no engine, so it is sized for vLLM's paged KV cache and continuous batching; pin it with "
                       "engine: hf (--engine hf) for Transformers generate")


#: Ollama, answered with the exact fix (issue 31). Ollama loads GGUF models with llama.cpp (its
#: "llama" runner) or, for the models it has ported, its own engine (ollama/ollama, runner/
#: ollamarunner), sizes the context from the VRAM when not told (docs/context-length.mdx: 4k under
#: 24 GiB, 32k from 24 to 48 GiB, 256k from 48 GiB), and reads flash attention, the KV cache type and
#: the parallel sequences from its server's environment (envconfig/config.go: OLLAMA_FLASH_ATTENTION,
#: OLLAMA_KV_CACHE_TYPE, OLLAMA_NUM_PARALLEL). The planner sizes llama.cpp with the settings given,
#: so an Ollama workload is llama.cpp with Ollama's settings written out, not a silent alias.
OLLAMA_FIX = ("Ollama runs GGUF models with llama.cpp (or its own engine for the models it has ported) and its "
              "own defaults: size it as engine: llama.cpp with the settings your Ollama runs with written out, "
              "context: N from the CONTEXT column of 'ollama ps' (Ollama picks 4k, 32k or 256k by VRAM unless "
              "num_ctx or OLLAMA_CONTEXT_LENGTH sets it), flash_attention: false (or flash_attention: true where "
              "its log shows OLLAMA_FLASH_ATTENTION:true), kv_dtype: as OLLAMA_KV_CACHE_TYPE (f16 when unset), "
              "concurrency: as OLLAMA_NUM_PARALLEL; 'ollama serve' logs them when it starts ('server config').")


def _engine_spelling(entry: Entry) -> None:
    """Refuse, with the exact fix, an engine the planner does not size under that name: ollama
    (:data:`OLLAMA_FIX`), or llama.cpp spelled otherwise ('llamacpp', 'llama-cpp', 'llama_cpp')."""
    raw = entry.data.get("engine")
    if not isinstance(raw, str):
        return
    word = raw.strip().lower()
    if word == "ollama":
        raise entry.error("Ollama is not an engine the planner sizes by that name", "engine", OLLAMA_FIX)
    if word != "llama.cpp" and word.replace("-", "").replace("_", "").replace(".", "") == "llamacpp":
        raise entry.error(f"{raw!r} is spelled llama.cpp here", "engine", "Write engine: llama.cpp.")


def _gguf_weights_elsewhere(entry: Entry, engine: str) -> None:
    """Refuse a GGUF weight type ('Q4_K_M') with an engine other than llama.cpp, naming the engine to
    add: the planner sizes GGUF files as llama.cpp lays them out (planner.model.gguf)."""
    raw = entry.data.get("weights")
    if not isinstance(raw, str) or raw.strip().lower() in WEIGHT_FORMATS:  # 'bf16' is both
        return
    from planner.model.gguf import preset_name

    preset = preset_name(raw)
    if preset is None:
        return
    given = "engine" in entry.data
    fix = f"Replace engine: {engine} by engine: llama.cpp" if given else "Add engine: llama.cpp"
    raise entry.error(f"{raw!r} is a GGUF weight type, which the planner sizes with engine llama.cpp, not "
                      f"{'with engine ' + engine if given else 'with the default engine ' + engine}", "weights",
                      f"{fix}; or keep engine {engine} with weights: bf16, fp16, fp8, int8, int4-awq, int4-gptq, "
                      "nf4, ...")


def _inference(entry: Entry, arch: Architecture, warnings: list[str]) -> Inference:
    _engine_spelling(entry)
    if "engine" in entry.data:  # 'LLAMA.CPP' is named as the engine it is not, before weights are paired with it
        entry.str("engine", None, choices=ENGINES)  # (h16b #8: not as a GGUF --weights blamed on the engine's case)
    if entry.data.get("engine") == "llama.cpp":
        return _llamacpp_inference(entry, arch, warnings)
    _gguf_weights_elsewhere(entry, str(entry.data.get("engine") or unnamed_engine(entry.data)))
    for key in LLAMACPP_KEYS:
        if key in entry.data:
            raise entry.error(f"{key} is a llama.cpp setting and does nothing with engine "
                              f"{entry.data.get('engine', 'hf')}", key, "Set engine: llama.cpp, or remove it.")
    weights, kv_dtype, group_size, ckpt_fmt = _weights(entry, arch, warnings)
    context = entry.int("context", min(4096, arch.max_position_embeddings), min=1, max=MAX_SEQ_LEN)
    concurrency = entry.int("concurrency", 1, min=1, max=MAX_MICRO_BATCH)
    tp, replicas = _replicas(entry, arch)
    # the default is a fresh string, never the written value: Entry.str returns its default unchecked
    engine = entry.str("engine", unnamed_engine(entry.data), choices=ENGINES)
    defaulted = "engine" not in entry.data and engine != "hf"
    if engine == "hf" and tp > 1 and not arch.transformers_tp_plan:
        raise entry.error(f"Transformers cannot run {arch.model_type} tensor parallel (tp {tp}): its config declares "
                          "no base_model_tp_plan", "tp" if "tp" in entry.data else "gpus",
                          "Use engine: vllm (which runs it tensor parallel), or tp: 1 (with gpus: N for N replicas).")
    util, mnbt, max_seqs = _budget_and_batching(entry, engine, concurrency, warnings)
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
    scheme = keep = None
    if weights == ckpt_fmt and isinstance(arch.extra.get("quantization_config"), Mapping):
        scheme, _ = weight_scheme(arch.extra["quantization_config"])
        keep = kept_modules(arch.extra["quantization_config"]) if scheme is None else None
    warnings.extend(architecture_warnings(arch))
    enable_lora, max_loras, lora_rank, cpu_loras = _vllm_lora(entry, engine, arch)
    double_quant, quantize_head = _bnb_options(entry, engine, weights, checkpoint_double_quant(arch)
                                               if ckpt_fmt == weights == "nf4" else None)
    return Inference(weights, group_size, kv_dtype, context, concurrency, tp, engine, util, mnbt, attention, sliding,
                     entry.int("tokens_per_request", None, min=1, max=MAX_SEQ_LEN),
                     entry.number("requests_per_hour", None, min=0, max=1e12), max_seqs, replicas, scheme=scheme, keep=keep,
                     engine_defaulted=defaulted, engine_version=engine_version(entry, engine),
                     enable_lora=enable_lora, max_loras=max_loras, max_lora_rank=lora_rank, max_cpu_loras=cpu_loras,
                     double_quant=double_quant, quantize_head=quantize_head)


def _bnb_options(entry: Entry, engine: str, weights: str, checkpoint_dq: bool | None) -> tuple[bool, bool]:
    """double_quant (weights nf4) and quantize_head (nf4, int8), engine hf: the bitsandbytes choices LitGPT's
    ``generate --quantize bnb.nf4 / bnb.nf4-dq / bnb.int8`` makes (Lightning's BitsandbytesPrecision:
    ``compress_statistics`` for the ``-dq`` modes, every ``nn.Linear`` converted, the output head included;
    lightning/fabric/plugins/precision/bitsandbytes.py). ``checkpoint_dq``: an NF4 checkpoint's own
    ``bnb_4bit_use_double_quant`` (:func:`planner.workload.checks.checkpoint_double_quant`), the default."""
    for key, formats in (("double_quant", ("nf4",)), ("quantize_head", ("nf4", "int8"))):
        if key in entry.data and weights not in formats:
            raise entry.error(f"{key} is a bitsandbytes choice for weights {' or '.join(formats)}, not {weights}",
                              key, f"Set weights: {formats[0]}, or remove it.")
        if key in entry.data and engine != "hf":
            raise entry.error(f"{key} is sized for bitsandbytes weights loaded by Transformers or LitGPT (engine hf), "
                              f"not engine {engine}", key, "Set engine: hf, or remove it.")
    return (entry.bool("double_quant", True if checkpoint_dq is None else checkpoint_dq),
            entry.bool("quantize_head", False))


def engine_version(entry: Entry, engine: str) -> str | None:
    """The workload's ``engine_version``, checked against the engine's release line
    (planner.workload.engine_releases); None when not given (the current release is modelled).

    Raises:
        InputError: engine hf (no release line), a number (planner.workload.releases.read_release: the
            same rule as framework_version), a string that is not a release, another scheme than the
            engine's (a build tag for vLLM), a release older than the oldest modelled (the message names
            it), or one past any release of the engine (naming the newest modelled).
    """
    if "engine_version" not in entry.data:
        return None
    line = engine_line(engine)
    if line is None:
        raise entry.error(f"engine {engine} has no releases to choose from: the planner sizes one Transformers "
                          "generate", "engine_version",
                          f"Remove it, or set engine: {' or '.join(ENGINE_RELEASES)}.")
    return read_release(entry, "engine_version", line, lines=ENGINE_RELEASES, key_name="engine")


#: vLLM's accepted max_lora_rank values in the current release (vllm/config/lora.py MaxLoRARanks at v0.14.1);
#: older releases accept fewer (planner.workload.engine_releases.vllm_lora_ranks).
VLLM_LORA_RANKS = vllm_lora_ranks(None)


def _vllm_lora(entry: Entry, engine: str, arch: Architecture) -> tuple[bool, int, int, int | None]:
    """enable_lora, max_loras, max_lora_rank and max_cpu_loras, checked as vLLM's LoRAConfig checks them
    (vllm/config/lora.py): a rank vLLM offers, at least one slot, max_cpu_loras >= max_loras."""
    given = [k for k in VLLM_LORA_KEYS if k in entry.data]
    if given and engine != "vllm":
        raise entry.error(f"{given[0]} is vLLM's LoRA serving (--enable-lora) and does nothing with engine {engine}",
                          given[0], "Set engine: vllm, or remove it.")
    enable = entry.bool("enable_lora", False)
    others = [k for k in given if k != "enable_lora"]
    if others and not enable:
        raise entry.error(f"{others[0]} sizes vLLM's LoRA slots, which exist only with enable_lora: true "
                          "(vllm serve --enable-lora)", others[0], "Add enable_lora: true, or remove it.")
    max_loras = entry.int("max_loras", 1, min=1, max=4096)
    rank = entry.int("max_lora_rank", 16, min=1, max=4096)
    release = engine_version(entry, engine) if engine == "vllm" else None
    ranks = vllm_lora_ranks(release)
    if rank not in ranks:
        which = f"vLLM {release}" if release else "vLLM"
        raise entry.error(f"{which} accepts a max_lora_rank of {', '.join(map(str, ranks))}, not {rank}",
                          "max_lora_rank", "Give the largest rank of the adapters served, rounded up to one of these"
                          + ("; or a newer engine_version." if rank not in ranks and rank in VLLM_LORA_RANKS
                             else "."))
    cpu = entry.int("max_cpu_loras", None, min=1, max=1_000_000)
    if cpu is not None and cpu < max_loras:
        raise entry.error(f"max_cpu_loras ({cpu}) must be at least max_loras ({max_loras}), as vLLM requires",
                          "max_cpu_loras", f"Give max_cpu_loras: {max_loras} or more, or leave it out (= max_loras).")
    if enable and arch.is_moe:
        raise entry.error(f"LoRA slots on a mixture-of-experts model ({arch.model_type}) are not modelled (vLLM's "
                          "fused-MoE LoRA stacks adapters per expert)", "enable_lora",
                          "Size a dense model, or remove enable_lora.")
    return enable, max_loras, rank, cpu


#: vLLM's ``--kv-cache-dtype`` values (docs.vllm.ai, "Engine Arguments"; 'fp8' is its alias of fp8_e4m3) and the
#: torch dtype names, to planner's kv_dtype: both fp8 formats store one byte per value, so they are sized alike.
_KV_SPELLINGS = {"fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
                 "float32": "fp32", "float": "fp32"}


def _kv_spelling(entry: Entry, kv_default: str) -> None:
    """Refuse, with planner's spelling as the hint, a ``kv_dtype`` written as vLLM's ``--kv-cache-dtype`` writes it:
    'fp8_e4m3', 'fp8_e5m2' (planner's fp8), 'bfloat16', 'auto' (the dtype the model runs in; planner's default,
    ``kv_default``, is said) (h26b M4).

    Raises:
        OptionError / ScenarioError (``entry.error``): one of those spellings.
    """
    raw = entry.data.get("kv_dtype")
    word = raw.strip().lower() if isinstance(raw, str) else None
    if word in _KV_SPELLINGS:
        to = _KV_SPELLINGS[word]
        why = " (one byte per value, as e4m3 and e5m2 both store)" if to == "fp8" else ""
        raise entry.error(f"{raw!r} is not one of the choices: planner spells it {to}{why}", "kv_dtype",
                          f"Write kv_dtype: {to}.")
    if word == "auto":
        raise entry.error(f"{raw!r} is not one of the choices: vLLM's auto is the dtype the model runs in; planner's "
                          f"default, with kv_dtype left out, is {kv_default} here", "kv_dtype",
                          "Remove kv_dtype, or write the dtype the model runs in: kv_dtype: bf16 or kv_dtype: fp16.")


def _weights_reversed(entry: Entry) -> None:
    """Refuse ``weights`` written with its two words reversed ('gptq-int4', 'awq_int4') with planner's spelling
    as the hint: planner writes the bit width first, int4-gptq (h26b M4).

    Raises:
        OptionError / ScenarioError (``entry.error``): such a spelling.
    """
    raw = entry.data.get("weights")
    parts = [p for p in raw.strip().lower().replace("_", "-").split("-")] if isinstance(raw, str) else []
    turned = "-".join(reversed(parts))
    if len(parts) == 2 and turned in WEIGHT_FORMATS:
        raise entry.error(f"{raw!r} is not one of the choices", "weights",
                          f"Did you mean {turned!r}? planner writes the bit width first.")


def _weights(entry: Entry, arch: Architecture, warnings: list[str]) -> tuple[str, str, int, str | None]:
    """weights, kv_dtype and group_size, read against the quantized format the checkpoint declares; also
    returns that format (:func:`planner.workload.checks.checkpoint_format`)."""
    ckpt_fmt, ckpt_group, ckpt_words = checkpoint_format(arch)
    _weights_reversed(entry)
    weights = entry.str("weights", ckpt_fmt or "bf16", choices=WEIGHT_FORMATS)
    if ckpt_words and "weights" in entry.data and weights != ckpt_fmt:
        warnings.append(f"the model's config.json declares a quantized checkpoint ({ckpt_words}); the weights are "
                        f"sized as weights: {weights}, as given")
    elif ckpt_words and ckpt_fmt is None:
        warnings.append(f"the model's config.json declares a quantized checkpoint ({ckpt_words}) of a format the "
                        f"memory model does not size; the weights are sized as {weights} (choose with the workload key "
                        "weights:, or --weights on the command line)")
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
    _kv_spelling(entry, kv_default)
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
    return weights, kv_dtype, group_size, ckpt_fmt


def _replicas(entry: Entry, arch: Architecture) -> tuple[int, int]:
    """tp and the replicas of tp GPUs that gpus holds (gpus without tp: one replica at tp gpus)."""
    # (hints name keys as 'key: value', which planner.workload.inputs.option_form turns into '--key value' for options)
    gpus = _with_hint(lambda: entry.int("gpus", None, min=1, max=MAX_GPUS), entry, "gpus",
                      f"Give a count from 1 to {MAX_GPUS}: the GPUs the inference replicas run on, tp: N each "
                      "(without tp: N, one replica on all of them).")
    if gpus is not None and "tp" not in entry.data:
        # gpus: N without tp is one replica on all N GPUs, as --gpus N without --tp
        try:
            check_tp(arch, gpus, entry, "gpus")
        except InputError as exc:
            raise entry.error(f"an inference replica on {gpus} GPUs runs at tp {gpus}: "
                              f"{getattr(exc, 'raw_problem', exc.problem)}", "gpus",
                              getattr(exc, "raw_hint", exc.hint)) from None  # raw: an OptionError's, unconverted
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
    return tp, replicas


def _budget_and_batching(entry: Entry, engine: str, concurrency: int,
                         warnings: list[str]) -> tuple[float, int | None, int | None]:
    """gpu_memory_utilization, max_num_batched_tokens and max_num_seqs, checked against the engine and
    each other."""
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
    return util, mnbt, max_seqs


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
    for key in VLLM_LORA_KEYS:
        if key in entry.data:
            raise entry.error(f"{key} is vLLM's LoRA serving and does nothing with engine llama.cpp", key,
                              "Remove it (llama-server takes adapters with --lora, which is not sized).")
    for key, why, hint in (("group_size", "GPTQ/AWQ's group size; a GGUF preset fixes its blocks", "Remove it."),
                           ("gpu_memory_utilization", "vLLM's budget", "Remove it."),
                           ("max_num_seqs", "a vLLM setting", "Remove it."),
                           ("attention", "the Transformers attention kernel",
                            "Remove it; llama.cpp's flash attention is flash_attention: true (the default) or "
                            "flash_attention: false.")):
        if key in entry.data:
            raise entry.error(f"{key} does nothing with engine llama.cpp: it is {why}", key, hint)
    weights = _llamacpp_weights(entry, arch)
    release = engine_version(entry, "llama.cpp")
    kv_k, kv_v, fa = _llamacpp_cache(entry, release)
    gpu_layers = _gpu_layers(entry, arch)
    context = entry.int("context", min(4096, arch.max_position_embeddings), min=1, max=MAX_SEQ_LEN)
    concurrency = entry.int("concurrency", 1, min=1, max=256)
    devices = _llamacpp_devices(entry, arch)
    ubatch = entry.int("max_num_batched_tokens", LLAMACPP_UBATCH, min=1, max=MAX_SEQ_LEN)
    sliding = entry.bool("sliding_window", True)
    imatrix = _imatrix(entry, arch, weights)
    mla = None
    if "mla_kv_layout" in entry.data:
        if not arch.is_mla:
            raise entry.error(f"mla_kv_layout is for multi-head latent attention models (DeepSeek-V2/V3); "
                              f"{arch.model_type} caches keys and values per head", "mla_kv_layout", "Remove it.")
        mla = entry.str("mla_kv_layout", "latent", choices=MLA_KV_LAYOUTS)
    if context > arch.max_position_embeddings:
        check_positions(arch, context, entry, "context")
        warnings.append(f"context {context} exceeds the model's max_position_embeddings "
                        f"({arch.max_position_embeddings}); quality beyond it is not guaranteed.")
    return Inference(weights, 128, kv_k, context, concurrency, devices, "llama.cpp", 0.9, ubatch,
                     "flash" if fa else "eager",
                     sliding, entry.int("tokens_per_request", None, min=1, max=MAX_SEQ_LEN),
                     entry.number("requests_per_hour", None, min=0, max=1e12), None, 1,
                     gpu_layers=gpu_layers, flash_attention=fa, kv_dtype_v=kv_v if kv_v != kv_k else None,
                     imatrix=imatrix, mla_kv_layout=mla, engine_version=release)


def _llamacpp_weights(entry: Entry, arch: Architecture) -> str:
    """The GGUF weight type, a llama-quantize preset (default Q4_K_M; MXFP4_MOE for an MXFP4 checkpoint)."""
    # an MXFP4 checkpoint (gpt-oss) converts with MXFP4 experts: MXFP4_MOE is the file ggml-org ships
    raw = entry.str("weights", "MXFP4_MOE" if checkpoint_format(arch)[0] == "mxfp4" else "Q4_K_M")
    weights = raw.strip().upper()
    if weights not in LLAMACPP_WEIGHTS:
        from planner.core.errors import did_you_mean

        hint = did_you_mean(weights, LLAMACPP_WEIGHTS) or ""
        raise entry.error(f"{raw!r} is not a GGUF weight type llama.cpp makes", "weights",
                          (hint + " " if hint.startswith("Did you mean") else "")
                          + "Use a llama-quantize preset: Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q3_K_M, Q2_K, IQ4_XS, F16, ...")
    return weights


def _kv_type(entry: Entry, key: str, raw: str) -> str:
    """The llama.cpp cache type ``raw`` names (fp16 and fp32 read as f16 and f32), refused when it is none or is
    written in another case: llama.cpp's --cache-type-k/-v compare the name exactly (common/arg.cpp,
    kv_cache_type_from_str), so ``-ctk Q8_0`` fails there; 'Q8_0' gets "Did you mean 'q8_0'?" (h17b #5a)."""
    value = raw.strip()
    value = {"fp16": "f16", "fp32": "f32"}.get(value, value)
    if value not in LLAMACPP_KV_TYPES:
        lower = {"fp16": "f16", "fp32": "f32"}.get(value.lower(), value.lower())
        if lower in LLAMACPP_KV_TYPES:
            raise entry.error(f"{value!r} is not a llama.cpp KV cache type", key,
                              f"Did you mean {lower!r}? The cache types are written in lower case, as llama.cpp's "
                              "--cache-type-k / --cache-type-v take them.")
        raise entry.error(f"{value!r} is not a llama.cpp KV cache type", key,
                          f"Use one of {', '.join(LLAMACPP_KV_TYPES)} (--cache-type-k / --cache-type-v).")
    return value


def _llamacpp_cache(entry: Entry, release: str | None) -> tuple[str, str, bool]:
    """The K and V cache types (llama.cpp's spelling, fp16 read as f16) and flash_attention (its default
    as llama.cpp build ``release`` has it, None: the current one), checked against each other (a
    quantized V cache needs flash attention)."""
    kv_k = _kv_type(entry, "kv_dtype", entry.str("kv_dtype", "f16"))
    kv_v = _kv_type(entry, "kv_dtype_v", entry.str("kv_dtype_v", kv_k))
    # before build b6327 llama.cpp ran without flash attention unless -fa was given
    fa = entry.bool("flash_attention", llamacpp_fa_default(release))
    if not fa and kv_v not in ("f32", "f16", "bf16"):
        raise entry.error(f"a {kv_v} V cache needs flash attention, and llama.cpp refuses it without ('quantized V "
                          "cache was requested, but this requires Flash Attention')",
                          "kv_dtype_v" if "kv_dtype_v" in entry.data else "kv_dtype",
                          "Set flash_attention: true, or a 16-bit V cache (kv_dtype_v: f16).")
    return kv_k, kv_v, fa


def _gpu_layers(entry: Entry, arch: Architecture) -> int | None:
    """gpu_layers: the layers on the GPU, counting the output layer (None: all of them)."""
    L = arch.num_hidden_layers
    entry.refuse_empty("gpu_layers", "a whole number or 'all'")
    layers = entry.data.get("gpu_layers")
    if isinstance(layers, str) and layers != layers.strip().lower() in LAYER_WORDS:  # 'ALL': as --concurrency MAX
        raise entry.error(f"{layers!r} is not a layer count", "gpu_layers", f"Did you mean {layers.strip().lower()!r}? "
                          "The words (all, max, auto) are written in lower case.")
    if layers is None or (isinstance(layers, str) and layers.strip().lower() == "all"):
        gpu_layers = None
    elif isinstance(layers, str) and layers.strip().lower() in ("max", "auto"):
        raise entry.error(f"{layers!r} asks for the most layers that fit a card, which needs a card",
                          "gpu_layers", f"Give a number from 0 to {L + 1} or 'all' here; 'planner fit --gpu ID "
                          "--gpu-layers max' finds the most that fit, and a scenario may write gpu_layers: max.")
    else:
        if isinstance(layers, str) and not any(c.isdigit() for c in layers):  # 'alll': the word meant (h21b M3)
            from planner.core.fieldhints import _not_a_choice

            problem, hint = _not_a_choice(layers, LAYER_WORDS, "is not a layer count")
            if hint is not None and hint.startswith("Did you mean"):
                raise entry.error(problem, "gpu_layers", f"{hint} Or give a whole number of layers.")
        gpu_layers = entry.int("gpu_layers", None, min=0, max=10_000)
        if gpu_layers is not None and gpu_layers >= L + 1:
            gpu_layers = None  # every layer: llama.cpp clamps -ngl 999 to n_layer + 1
    return gpu_layers


def _llamacpp_devices(entry: Entry, arch: Architecture) -> int:
    """The GPUs one replica splits its layers over (gpus, default 1), with tp and split_mode checked."""
    L = arch.num_hidden_layers
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
    return devices


def _imatrix(entry: Entry, arch: Architecture, weights: str) -> bool | None:
    """imatrix (None: not given), refused as false for a preset llama-quantize makes only with one."""
    imatrix = entry.bool("imatrix", None) if "imatrix" in entry.data else None
    if imatrix is False:
        from planner.model.gguf import imatrix_required

        needs = imatrix_required(arch, weights)
        if needs is not None:
            raise entry.error(f"{weights} cannot be made without an importance matrix: llama-quantize stops at "
                              f"{needs[0]} ({needs[1]}) with 'this quantization requires an importance matrix!'",
                              "imatrix", "Set imatrix: true (the published IQ1/IQ2/IQ3_XXS/IQ3_XS and Q2_K_S files are "
                              "made with one), or choose Q2_K, Q3_K_S, IQ3_S or a larger preset.")
    return imatrix


#: The GPU feature (a :class:`planner.catalog.gpus.Gpu` attribute) each dtype needs; fp16 and fp32 run everywhere.
#: MXFP4 checkpoints (gpt-oss) keep everything but the experts in bf16 and compute in bf16.
#: The same rule as the solver's precision filter (planner.solve.candidates.precision_needs).
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
