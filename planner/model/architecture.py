"""Model architecture read from a Hugging Face ``config.json``, and its parameter count.

:func:`from_hf_config` reads the keys as they are spelled in ``config.json`` and returns a
frozen :class:`Architecture`. :meth:`Architecture.param_counts` counts parameters exactly as
PyTorch counts ``sum(p.numel() for p in model.parameters())`` for the Transformers
implementation of each ``model_type``: tied embeddings once, GQA k/v projections, head_dim
from the config when given, biases where the implementation creates them, MoE experts and
router, norms.

Sources: the Transformers modeling files for each model type (``modeling_llama.py``,
``modeling_mistral.py``, ``modeling_mixtral.py``, ``modeling_qwen2.py``, ``modeling_qwen3.py``,
``modeling_qwen3_moe.py``, ``modeling_gemma.py``, ``modeling_gemma2.py``, ``modeling_gemma3.py``
(with ``modeling_siglip.py`` for Gemma 3's vision tower), ``modeling_phi3.py``, ``modeling_gpt2.py``,
``modeling_gpt_neox.py``, ``modeling_gpt_oss.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from planner.core.errors import ModelConfigError, did_you_mean
from planner.model.config_keys import (  # noqa: F401  (re-exported for planner.model.families)
    MAX_CONFIG_VALUES,
    _check_heads,
    _checkpoint_dtype,
    _error,
    _shown,
    check_architectures,
    check_declared,
    layer_indices,
    _get,
    _Merged,
)
from planner.model.layout import Architecture, LinearModule, ParamCounts  # noqa: F401  (re-exported)

#: model_type values this module can read, with the family they follow ("llama", "gpt2" and
#: "gpt_neox" here; the others' readers are in planner.model.families).
SUPPORTED_MODEL_TYPES: dict[str, str] = {
    "llama": "llama",
    "mistral": "llama",
    "mixtral": "llama",
    "qwen2": "llama",
    "qwen3": "llama",
    "qwen3_moe": "llama",
    "gemma": "llama",
    "gemma2": "llama",
    "gemma3": "llama",
    "gemma3_text": "llama",
    "phi3": "llama",
    "gpt2": "gpt2",
    "gpt_bigcode": "gpt2",
    "gpt_neox": "gpt_neox",
    "gpt_oss": "llama",
    "deepseek_v2": "deepseek",
    "deepseek_v3": "deepseek",
    "phi": "phi",
    "falcon": "falcon",
    "gptj": "gptj",
    "bloom": "bloom",
    "olmo2": "olmo2",
    "granite": "granite",
    "starcoder2": "starcoder2",
    "cohere": "cohere",
    "qwen2_moe": "qwen2_moe",
}

#: Encoder-decoder and encoder-only model_type values: refused, the planner sizes decoder-only
#: causal language models (an encoder-decoder's cross-attention, encoder activations and
#: encoder-output cache are not modelled).
ENCODER_MODELS = frozenset({
    "t5", "mt5", "umt5", "longt5", "t5gemma", "switch_transformers", "bart", "mbart", "pegasus", "pegasus_x",
    "marian", "led", "blenderbot", "blenderbot-small", "plbart", "prophetnet", "fsmt", "m2m_100", "nllb-moe",
    "bigbird_pegasus", "whisper", "seamless_m4t", "encoder-decoder", "bert", "roberta", "xlm-roberta", "deberta",
    "deberta-v2", "distilbert", "albert", "electra", "modernbert", "camembert", "ernie", "xlm",
})


# ----- reading config.json ------------------------------------------------------------

def from_hf_config(cfg: Mapping[str, Any], where: str | None = None) -> Architecture:
    """Build an :class:`Architecture` from a ``config.json`` mapping.

    Args:
        cfg: the parsed config.json (keys as Hugging Face spells them).
        where: file name (or catalog entry) used in error messages.

    Raises:
        ModelConfigError: unsupported ``model_type`` (the message lists the supported ones),
            missing keys, non-integer or non-positive sizes, hidden size not divisible by the
            heads without an explicit head_dim, KV heads that do not divide the heads.
    """
    arch = _from_hf_config(cfg, where)
    check_architectures(cfg, where)  # a list of class names, as Transformers writes it (h19b M8)
    heads = cfg.get("architectures")
    for head in heads if isinstance(heads, list) else [heads]:
        if isinstance(head, str) and head.endswith(_NOT_LM_HEADS):  # a task head instead of the vocabulary's
            raise _error(cfg, where, f"architectures names {head}, a model with a task head in place of the "
                         "language-model output layer; the planner sizes causal language models (…ForCausalLM)",
                         "architectures", "Size the base model's own config.json (its architectures ends in "
                         "ForCausalLM).")
    q = cfg.get("quantization_config")
    if isinstance(q, Mapping) and str(q.get("quant_method", "")).lower() == "mxfp4" and not arch.expert_parameters:
        # MXFP4 as gpt-oss ships it quantizes the MoE experts' weights only (Transformers' Mxfp4HfQuantizer
        # replaces the experts' modules; integrations/mxfp4.py): a dense model has nothing it sizes
        raise _error(cfg, where, f"quantization_config declares quant_method 'mxfp4', which quantizes the MoE experts' "
                     f"weights (as gpt-oss ships them), but this {arch.model_type} model has no experts",
                     "quantization_config", "Copy the model's own config.json; a dense model's quantized checkpoint "
                     "declares another method (awq, gptq, bitsandbytes, fp8, compressed-tensors).")
    return arch


#: Transformers class-name endings of models whose output layer is a task head (num_labels wide), not the
#: vocabulary's: sized as a causal LM they would carry a vocabulary-wide head they do not have.
_NOT_LM_HEADS = ("ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")


def _from_hf_config(cfg: Mapping[str, Any], where: str | None) -> Architecture:
    if not isinstance(cfg, Mapping):
        raise ModelConfigError("a model config must be a mapping of config.json keys", file=where)
    check_declared(cfg, where)
    model_type = cfg.get("model_type")
    supported = ", ".join(sorted(SUPPORTED_MODEL_TYPES))
    if isinstance(model_type, str) and (model_type in ENCODER_MODELS or cfg.get("is_encoder_decoder") is True):
        kind = "an encoder-decoder" if cfg.get("is_encoder_decoder") is True or model_type in ENCODER_DECODERS \
            else "an encoder"
        raise _error(cfg, where, f"model_type {model_type!r} is {kind} model: the planner sizes decoder-only causal "
                     "language models", "model_type",
                     f"Its {'cross-attention, encoder activations and encoder-output cache' if 'decoder' in kind else 'bidirectional layers'} "
                     f"are not modelled. Supported model_type values: {supported}.")
    if not isinstance(model_type, str) or model_type not in SUPPORTED_MODEL_TYPES:
        if isinstance(model_type, str):
            from planner.model import generic

            if generic.knows(model_type):
                return generic.from_hf_config_generic(cfg, where)
        close = did_you_mean(str(model_type), SUPPORTED_MODEL_TYPES) if isinstance(model_type, str) else None
        if isinstance(model_type, str) and _another_architecture(model_type):
            close = None  # e.g. llama4 or qwen3_next: a different model, not a typo of llama or qwen3
        hint = ((close + " " if close and close.startswith("Did") else "") + f"Supported model_type values: {supported}."
                + (" " + GENERIC_HINT if model_type is not None else ""))
        shown = "missing" if model_type is None else f"{model_type!r} is not supported"
        raise _error(cfg, where, f"model_type {shown}", "model_type", hint)
    if model_type in ("gpt2", "gpt_bigcode"):
        return _gpt2(cfg, where, model_type)
    if model_type == "gpt_neox":
        return _gpt_neox(cfg, where)
    if model_type == "gemma3":
        return _gemma3(cfg, where)
    if SUPPORTED_MODEL_TYPES[model_type] != "llama":
        from planner.model.families import read_family

        return read_family(cfg, where, model_type)
    if model_type == "gemma3_text":
        cfg = _with_gemma3_text_defaults(cfg)
    if model_type == "gpt_oss":
        cfg = _Merged(GPT_OSS_DEFAULTS, cfg)
    return _llama_family(cfg, where, model_type)


#: The hint of an unsupported model_type: Transformers reads any architecture it implements.
GENERIC_HINT = ("Any other architecture is read through Transformers, built on the meta device, when Transformers "
                "knows it (pip install 'planner[hf]').")

#: The encoder-decoders among :data:`ENCODER_MODELS`.
ENCODER_DECODERS = frozenset({
    "t5", "mt5", "umt5", "longt5", "t5gemma", "switch_transformers", "bart", "mbart", "pegasus", "pegasus_x",
    "marian", "led", "blenderbot", "blenderbot-small", "plbart", "prophetnet", "fsmt", "m2m_100", "nllb-moe",
    "bigbird_pegasus", "whisper", "seamless_m4t", "encoder-decoder",
})


#: Hugging Face model_type values of architectures the planner does not read whose names are close
#: to a supported one: suggesting the supported name would size a different model.
OTHER_ARCHITECTURES = frozenset({
    "gpt_neo", "qwen3_next", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "llama4", "llama4_text",
    "mllama", "gemma3n", "gemma3n_text", "mistral3", "phimoe", "phi4_multimodal", "olmo", "olmoe", "olmo3",
    "granitemoe", "granitemoeshared", "granitemoehybrid", "cohere2", "falcon_h1", "falcon_mamba", "bloomz",
    "deepseek_vl", "deepseek_vl_hybrid", "qwen2_audio", "starcoder",
})


def _another_architecture(model_type: str) -> bool:
    """True for a model_type that names another architecture rather than misspelling a supported one:
    a known one, or a supported name followed by a version or variant (llama4, qwen2_moe)."""
    if model_type in OTHER_ARCHITECTURES:
        return True
    return any(model_type.startswith(s) and model_type[len(s):][:1] in tuple("_0123456789")
               for s in SUPPORTED_MODEL_TYPES if model_type != s)


#: model_type values whose Transformers config and attention have no sliding window: LlamaConfig and
#: GemmaConfig define no ``sliding_window`` and LlamaAttention / GemmaAttention attend to every earlier
#: token (transformers/models/llama/modeling_llama.py: no sliding_window is passed to the attention
#: function, the mask is ``create_causal_mask``), nor does llama.cpp's LLM_ARCH_LLAMA graph. A
#: ``sliding_window`` key in such a config.json is an attribute nothing reads: full attention on every layer.
WINDOW_NOT_READ = frozenset({"llama", "gemma"})


def _llama_family(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    h = _get(cfg, "hidden_size", where)
    L = _get(cfg, "num_hidden_layers", where)
    a = _get(cfg, "num_attention_heads", where)
    kv = _get(cfg, "num_key_value_heads", where, default=a)
    # Qwen3-MoE: every layer's MLP is the sparse block, whose experts are moe_intermediate_size
    # wide; intermediate_size only sizes the dense MLP of mlp_only_layers (none in the released models).
    f = _get(cfg, "moe_intermediate_size" if model_type == "qwen3_moe" else "intermediate_size", where)
    V = _get(cfg, "vocab_size", where)
    head_dim = _check_heads(cfg, h, a, kv, _get(cfg, "head_dim", where, default=None), where)
    max_pos = _get(cfg, "max_position_embeddings", where, default=4096)
    defaults_tied = {"gemma": True, "gemma2": True, "gemma3_text": True}
    tied = _get(cfg, "tie_word_embeddings", where, default=defaults_tied.get(model_type, False),
                kind=bool)
    act = _get(cfg, "hidden_act", where, default=_get(cfg, "hidden_activation", where, default="silu", kind=str),
               kind=str)
    attention_bias = _get(cfg, "attention_bias", where, default=False, kind=bool)
    if model_type == "gpt_oss":
        attention_bias = _get(cfg, "attention_bias", where, default=True, kind=bool)  # GptOssConfig's default
    qkv_bias = attention_bias or model_type == "qwen2"
    o_bias = attention_bias and model_type in ("llama", "mistral", "mixtral", "gemma", "gemma2", "gemma3_text", "qwen3",
                                               "qwen3_moe", "gpt_oss")
    mlp_bias = _get(cfg, "mlp_bias", where, default=False, kind=bool) if model_type == "llama" else False
    experts = 1
    per_tok = 1
    if model_type in ("mixtral", "qwen3_moe", "gpt_oss"):
        experts_key = "num_experts" if model_type == "qwen3_moe" else "num_local_experts"
        if model_type == "qwen3_moe" and "num_experts" not in cfg and "num_local_experts" in cfg:
            experts_key = "num_local_experts"  # as Transformers 5's Qwen3MoeConfig writes it (attribute_map)
        experts = _get(cfg, experts_key, where)
        per_tok = _get(cfg, "num_experts_per_tok", where)
        if per_tok > experts:
            raise _error(cfg, where, f"num_experts_per_tok ({per_tok}) exceeds {experts_key} ({experts})",
                         "num_experts_per_tok")
    if model_type == "qwen3_moe":
        _check_all_layers_sparse(cfg, where, L)
    if model_type == "gemma3_text" and cfg.get("use_bidirectional_attention"):
        raise _error(cfg, where, "use_bidirectional_attention makes this an embedding model (EmbeddingGemma); "
                     "only causal language models are modelled", "use_bidirectional_attention")
    window = cfg.get("sliding_window")
    use_window = cfg.get("use_sliding_window", True)
    if model_type == "qwen3_moe":
        use_window = cfg.get("use_sliding_window", False)  # Qwen3MoeConfig's default
    if model_type in ("qwen2", "qwen3", "qwen3_moe") and not use_window:
        window = None
    if window is not None:
        window = _get(cfg, "sliding_window", where)  # checked as a number even where nothing reads it
    if model_type in WINDOW_NOT_READ:
        window = None  # planner.workload.checks.architecture_warnings says so
    window_layers = 0
    if window:
        if model_type == "gemma2":
            window_layers = L // 2 + L % 2  # even-indexed layers (0, 2, ...) use the window
        elif model_type == "gemma3_text":
            window_layers = _window_layer_count(cfg, where, L)
        elif model_type == "gpt_oss":
            window_layers = _window_layer_count(cfg, where, L, pattern=2)  # alternate, layer 0 local
        elif model_type in ("qwen2", "qwen3"):
            max_window_layers = _get(cfg, "max_window_layers", where, default=L, min_value=0)
            window_layers = max(0, L - max_window_layers)
        else:
            window_layers = L
    if not window_layers:
        window = None
    return Architecture(
        model_type=model_type,
        hidden_size=h,
        num_hidden_layers=L,
        num_attention_heads=a,
        num_key_value_heads=kv,
        head_dim=head_dim,
        intermediate_size=f,
        vocab_size=V,
        max_position_embeddings=max_pos,
        tie_word_embeddings=tied,
        hidden_act=act,
        gated_mlp=True,
        norm="rms",
        norms_per_layer=4 if model_type in ("gemma2", "gemma3_text") else 2,
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        mlp_bias=mlp_bias,
        qk_norm=model_type in ("qwen3", "qwen3_moe", "gemma3_text"),
        attention_sinks=model_type == "gpt_oss",
        num_local_experts=experts,
        num_experts_per_tok=per_tok,
        sliding_window=window,
        sliding_window_layers=window_layers,
        fused_qkv=model_type == "phi3",
        fused_gate_up=model_type == "phi3",
        # Gemma2Config's defaults (50.0 and 30.0) apply when the keys are absent; null turns them off.
        attn_logit_softcapping=_softcap(cfg, where, "attn_logit_softcapping", 50.0) if model_type == "gemma2" else None,
        final_logit_softcapping=_softcap(cfg, where, "final_logit_softcapping", 30.0) if model_type == "gemma2" else None,
        torch_dtype=_checkpoint_dtype(cfg),
        extra=dict(cfg),
    )


#: Gemma3TextConfig's defaults (Transformers configuration_gemma3.py), which apply to every key a
#: Gemma 3 config leaves out: the multimodal checkpoints' text_config gives only what differs.
GEMMA3_TEXT_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "max_position_embeddings": 131_072, "tie_word_embeddings": True, "attention_bias": False,
    "attention_dropout": 0.0, "sliding_window": 4096, "query_pre_attn_scalar": 256,
}

#: GptOssConfig's defaults (configuration_gpt_oss.py) for keys a GPT-OSS config leaves out.
GPT_OSS_DEFAULTS: dict[str, Any] = {
    "num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201_088, "hidden_size": 2880,
    "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
    "sliding_window": 128, "tie_word_embeddings": False, "max_position_embeddings": 131_072,
    "num_experts_per_tok": 4, "attention_bias": True,
}

#: SiglipVisionConfig's defaults (configuration_siglip.py), for keys a vision_config leaves out.
SIGLIP_VISION_DEFAULTS: dict[str, Any] = {
    "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12,
    "num_channels": 3, "image_size": 224, "patch_size": 16, "vision_use_head": True,
}


def _with_gemma3_text_defaults(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    return _Merged(GEMMA3_TEXT_DEFAULTS, cfg)


def _window_layer_count(cfg: Mapping[str, Any], where: str | None, layers: int, pattern: int = 6) -> int:
    """How many layers use the sliding window: ``layer_types`` when given, else every layer but
    each ``sliding_window_pattern``-th (Gemma 3: default 6, five local layers per global one;
    GPT-OSS: 2, alternating). Source: Transformers configuration_gemma3.py and
    configuration_gpt_oss.py, ``__post_init__``."""
    types = cfg.get("layer_types")
    if types is not None:
        valid = ("sliding_attention", "full_attention")
        if not isinstance(types, (list, tuple)) or len(types) != layers or any(t not in valid for t in types):
            raise _error(cfg, where, f"layer_types must list {layers} entries of sliding_attention or "
                         "full_attention", "layer_types")
        return sum(t == "sliding_attention" for t in types)
    pattern = _get(cfg, "sliding_window_pattern", where, default=pattern)
    return sum(1 for i in range(layers) if (i + 1) % pattern)


def _siglip_vision_parameters(vision: Mapping[str, Any], where: str | None) -> tuple[int, int]:
    """Parameters of a SigLIP vision tower (``SiglipVisionModel``) and its hidden size.

    Patch embedding (a p x p convolution over the channels, with bias), learned positions (one per
    patch), per layer q/k/v/out projections with biases, two LayerNorms and a two-layer MLP with
    biases, a final LayerNorm, and the attention-pooling head when ``vision_use_head`` is true.
    Source: Transformers modeling_siglip.py (SiglipVisionEmbeddings, SiglipEncoderLayer,
    SiglipMultiheadAttentionPoolingHead).
    """
    v = _Merged(SIGLIP_VISION_DEFAULTS, vision)
    h = _get(v, "hidden_size", where)
    f = _get(v, "intermediate_size", where)
    L = _get(v, "num_hidden_layers", where)
    channels = _get(v, "num_channels", where)
    image, patch = _get(v, "image_size", where), _get(v, "patch_size", where)
    if image % patch:
        raise _error(v, where, f"vision_config image_size ({image}) is not a multiple of patch_size ({patch})",
                     "image_size")
    embeddings = channels * patch * patch * h + h + (image // patch) ** 2 * h
    mlp = h * f + f + f * h + h
    layer = 4 * (h * h + h) + 2 * 2 * h + mlp
    total = embeddings + L * layer + 2 * h
    if _get(v, "vision_use_head", where, kind=bool):
        total += h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h + mlp
    return total, h


def _gemma3(cfg: Mapping[str, Any], where: str | None) -> Architecture:
    """A multimodal Gemma 3 checkpoint (``Gemma3ForConditionalGeneration``): the text model from
    ``text_config`` (Gemma3TextConfig defaults for absent keys), plus the SigLIP vision tower and
    the projector (``mm_input_projection_weight`` vision hidden x text hidden, and an RMSNorm of the
    vision width), whose weights load with the model. Images add activations the planner does not
    model: workloads are text."""
    text = cfg.get("text_config")
    vision = cfg.get("vision_config") or {}
    if text is None or text == {}:
        # Transformers would build Gemma3TextConfig's defaults, which are no published Gemma 3 (hidden 2304,
        # 26 layers): a multimodal config without its text model is a cut copy, or a text-only model
        raise _error(cfg, where, "model_type gemma3 (the multimodal Gemma3ForConditionalGeneration) keeps its text "
                     "model's sizes in text_config, which this config " + ("leaves empty" if text == {} else "lacks"),
                     "text_config" if "text_config" in cfg else "model_type",
                     "Copy the checkpoint's full config.json; a text-only Gemma 3 (gemma-3-1b) has model_type "
                     "gemma3_text and its sizes at the top level.")
    for key, value in (("text_config", text), ("vision_config", vision)):
        if not isinstance(value, Mapping):
            raise _error(cfg, where, f"{key} must be a mapping of config keys", key)
    _check_nested_types(text, vision, where)
    check_declared(text, f"{where} (text_config)" if where else "text_config")
    text_where = f"{where} (text_config)" if where else "text_config"
    arch = _llama_family(_with_gemma3_text_defaults({"model_type": "gemma3_text", **text}), text_where, "gemma3_text")
    vision_params, vision_h = _siglip_vision_parameters(vision, f"{where} (vision_config)" if where else "vision_config")
    projector = vision_h * arch.hidden_size + vision_h
    dtype = _checkpoint_dtype(cfg)
    # A checkpoint's quantization_config sits at the top level, beside text_config.
    top = {k: cfg[k] for k in ("quantization_config",) if k in cfg}
    return replace(arch, model_type="gemma3", vision_parameters=vision_params + projector,
                   torch_dtype=dtype or arch.torch_dtype, extra={**arch.extra, **top})


#: The model_type each nested config of a gemma3 config holds (Transformers' Gemma3Config: sub_configs
#: Gemma3TextConfig, SiglipVisionConfig; configuration_gemma3.py).
GEMMA3_NESTED_TYPES = {"text_config": "gemma3_text", "vision_config": "siglip_vision_model"}


def _check_nested_types(text: Mapping[str, Any], vision: Mapping[str, Any], where: str | None) -> None:
    """Refuse a ``text_config`` or ``vision_config`` whose own ``model_type`` is not the one a gemma3 config's holds
    (:data:`GEMMA3_NESTED_TYPES`; absent: Transformers' default, taken), as the top-level model_type is checked: a
    'llama' text_config would be sized as gemma3_text without a word (h23b M3). The value is shown escaped
    (repr, cut to 60 characters)."""
    for key, nested in (("text_config", text), ("vision_config", vision)):
        if "model_type" not in nested or nested["model_type"] == GEMMA3_NESTED_TYPES[key]:
            continue
        value = nested["model_type"]
        shown = repr(value) if isinstance(value, str) else _shown(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise _error(nested, f"{where} ({key})" if where else key,
                     f"model_type {shown} is not the one a gemma3 config's {key} holds "
                     f"({GEMMA3_NESTED_TYPES[key]!r})", "model_type",
                     f"Copy the checkpoint's full config.json: a gemma3 config's {key} has model_type "
                     f"{GEMMA3_NESTED_TYPES[key]}, or leaves it out.")


def _softcap(cfg: Mapping[str, Any], where: str | None, key: str, default: float) -> float | None:
    """A tanh softcapping value (a positive number, or null for none); ``default`` when absent."""
    if key not in cfg:
        return default
    value = cfg[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _error(cfg, where, f"{key} must be a positive number or null, not {_shown(value)}", key)
    return float(value)


def _check_all_layers_sparse(cfg: Mapping[str, Any], where: str | None, layers: int) -> None:
    """Qwen3-MoE layers with a dense MLP (``mlp_only_layers``, or ``decoder_sparse_step`` > 1) are
    not modelled: every released Qwen3-MoE checkpoint has none (``decoder_sparse_step`` 1,
    ``mlp_only_layers`` []). Source: Transformers ``modeling_qwen3_moe.py``, ``Qwen3MoeDecoderLayer``.

    Raises:
        ModelConfigError: a layer would get the dense MLP.
    """
    step = _get(cfg, "decoder_sparse_step", where, default=1)
    dense = layer_indices(cfg, where, "mlp_only_layers", layers)
    if step != 1 or dense:
        key = "decoder_sparse_step" if step != 1 else "mlp_only_layers"
        raise _error(cfg, where, f"{key} gives some layers a dense MLP; mixed dense and MoE layers are not modelled",
                     key, "Released Qwen3-MoE models use decoder_sparse_step 1 and mlp_only_layers []. ")


def _gpt2(cfg: Mapping[str, Any], where: str | None, model_type: str = "gpt2") -> Architecture:
    """GPT-2's layout (LayerNorm, learned positions, c_attn/c_proj/c_fc with biases, tied head), and
    GPTBigCode's (SantaCoder, StarCoder, StarCoderBase, OctoCoder, WizardCoder): the same with
    multi-query attention, ``multi_query`` (default true) giving one key/value head shared by all
    query heads. Defaults where a config omits a key: Transformers ``configuration_gpt2.py`` and
    ``configuration_gpt_bigcode.py`` (dropout 0.1 each; GPTBigCode's 1,024 positions, 50,257 tokens
    and gelu_pytorch_tanh).
    """
    bigcode = model_type == "gpt_bigcode"
    h = _get(cfg, "n_embd", where)
    L = _get(cfg, "n_layer", where)
    a = _get(cfg, "n_head", where)
    V = _get(cfg, "vocab_size", where, **({"default": 50257} if bigcode else {}))
    n_pos = _get(cfg, "n_positions", where, **({"default": 1024} if bigcode else {}))
    kv = 1 if bigcode and _get(cfg, "multi_query", where, default=True, kind=bool) else a
    head_dim = _check_heads(cfg, h, a, kv, None, where, "n_embd")
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=L, num_attention_heads=a, num_key_value_heads=kv,
        head_dim=head_dim, intermediate_size=_get(cfg, "n_inner", where, default=4 * h), vocab_size=V,
        max_position_embeddings=n_pos,
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, default=True, kind=bool),
        hidden_act=_get(cfg, "activation_function", where, default="gelu_pytorch_tanh" if bigcode else "gelu_new",
                        kind=str),
        gated_mlp=False, norm="layer", norms_per_layer=2, qkv_bias=True, o_bias=True, mlp_bias=True,
        learned_positions=n_pos, fused_qkv=True,
        torch_dtype=_checkpoint_dtype(cfg),
        extra={"resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1, **cfg},
    )


def _gpt_neox(cfg: Mapping[str, Any], where: str | None) -> Architecture:
    h = _get(cfg, "hidden_size", where)
    L = _get(cfg, "num_hidden_layers", where)
    a = _get(cfg, "num_attention_heads", where)
    head_dim = _check_heads(cfg, h, a, a, None, where)
    return Architecture(
        model_type="gpt_neox", hidden_size=h, num_hidden_layers=L, num_attention_heads=a, num_key_value_heads=a,
        head_dim=head_dim, intermediate_size=_get(cfg, "intermediate_size", where),
        vocab_size=_get(cfg, "vocab_size", where),
        max_position_embeddings=_get(cfg, "max_position_embeddings", where, default=2048),
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, default=False, kind=bool),
        hidden_act=_get(cfg, "hidden_act", where, default="gelu", kind=str),
        gated_mlp=False, norm="layer", norms_per_layer=2, qkv_bias=True, o_bias=True, mlp_bias=True,
        fused_qkv=True,
        torch_dtype=_checkpoint_dtype(cfg),
        extra=dict(cfg),
    )
