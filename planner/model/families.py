"""Reading the config.json of the families beyond the Llama, GPT-2 and GPT-NeoX layouts.

One reader per ``model_type``, each returning an :class:`~planner.model.architecture.Architecture`
whose parameter count equals ``sum(p.numel() for p in model.parameters())`` of the Transformers 5.24
implementation built from the same config (``tests/test_meta_parameters.py`` checks it on the meta
device). A key the config leaves out takes the default of the model's Transformers config class,
as Transformers itself would; those defaults are copied below with the file they come from.

Sources (Transformers 5.24, ``transformers/models/<type>/``): ``modeling_deepseek_v2.py``,
``modeling_deepseek_v3.py`` (multi-head latent attention, DeepSeek-V2 paper, DeepSeek-AI 2024,
sec. 2.1; shared and routed experts, sec. 2.2), ``modeling_phi.py``, ``modeling_falcon.py``,
``modeling_gptj.py``, ``modeling_bloom.py``, ``modeling_olmo2.py``, ``modeling_granite.py``,
``modeling_starcoder2.py``, ``modeling_cohere.py``, ``modeling_qwen2_moe.py``, and each one's
``configuration_<type>.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from planner.model.config_keys import _check_heads, _checkpoint_dtype, _error, _get, _Merged, _shown, layer_indices
from planner.model.layout import Architecture

#: DeepseekV3Config's defaults (configuration_deepseek_v3.py); ``num_nextn_predict_layers`` is its
#: ``num_mtp_layers`` (attribute_map), ``n_routed_experts`` its ``num_local_experts``.
DEEPSEEK_V3_DEFAULTS: dict[str, Any] = {
    "vocab_size": 129_280, "hidden_size": 7168, "intermediate_size": 18_432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "hidden_act": "silu", "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "attention_bias": False, "attention_dropout": 0.0, "num_nextn_predict_layers": 1,
}

#: DeepseekV2Config's defaults (configuration_deepseek_v2.py); ``num_experts_per_tok`` has none (None).
DEEPSEEK_V2_DEFAULTS: dict[str, Any] = {
    "vocab_size": 102_400, "hidden_size": 4096, "intermediate_size": 11_008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False, "first_k_dense_replace": 0,
    "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 64, "n_shared_experts": 2,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "moe_intermediate_size": 1407,
}

#: PhiConfig's defaults (configuration_phi.py; ``partial_rotary_factor`` 0.5 is set in __post_init__).
PHI_DEFAULTS: dict[str, Any] = {
    "vocab_size": 51_200, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
    "num_attention_heads": 32, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attention_dropout": 0.0,
    "hidden_act": "gelu_new", "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "qk_layernorm": False, "partial_rotary_factor": 0.5,
}

#: FalconConfig's defaults (configuration_falcon.py).
FALCON_DEFAULTS: dict[str, Any] = {
    "vocab_size": 65_024, "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
    "hidden_dropout": 0.0, "attention_dropout": 0.0, "alibi": False, "new_decoder_architecture": False,
    "multi_query": True, "parallel_attn": True, "bias": False, "max_position_embeddings": 2048,
    "activation": "gelu", "tie_word_embeddings": True,
}

#: GPTJConfig's defaults (configuration_gptj.py).
GPTJ_DEFAULTS: dict[str, Any] = {
    "vocab_size": 50_400, "n_positions": 2048, "n_embd": 4096, "n_layer": 28, "n_head": 16, "rotary_dim": 64,
    "activation_function": "gelu_new", "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
    "tie_word_embeddings": False,
}

#: BloomConfig's defaults (configuration_bloom.py).
BLOOM_DEFAULTS: dict[str, Any] = {
    "vocab_size": 250_880, "hidden_size": 64, "n_layer": 2, "n_head": 8, "hidden_dropout": 0.0,
    "attention_dropout": 0.0, "tie_word_embeddings": True, "apply_residual_connection_post_layernorm": False,
    "pretraining_tp": 1, "slow_but_exact": False,
}

#: BLOOM has no position limit of its own (ALiBi); vLLM takes 2,048 tokens when a config names no
#: maximum (vllm/config ``_get_and_verify_max_len``'s default), the length BLOOM was trained at
#: (BigScience 2022, "BLOOM", sec. 3.5: sequence length 2048).
BLOOM_MAX_POSITIONS = 2048

#: Olmo2Config's defaults (configuration_olmo2.py).
OLMO2_DEFAULTS: dict[str, Any] = {
    "vocab_size": 50_304, "hidden_size": 4096, "intermediate_size": 11_008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "attention_dropout": 0.0,
}

#: GraniteConfig's defaults (configuration_granite.py).
GRANITE_DEFAULTS: dict[str, Any] = {
    "vocab_size": 32_000, "hidden_size": 4096, "intermediate_size": 11_008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "max_position_embeddings": 2048, "tie_word_embeddings": False,
    "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False, "embedding_multiplier": 1.0,
    "logits_scaling": 1.0, "residual_multiplier": 1.0, "attention_multiplier": 1.0,
}

#: Starcoder2Config's defaults (configuration_starcoder2.py).
STARCODER2_DEFAULTS: dict[str, Any] = {
    "vocab_size": 49_152, "hidden_size": 3072, "intermediate_size": 12_288, "num_hidden_layers": 30,
    "num_attention_heads": 24, "num_key_value_heads": 2, "hidden_act": "gelu_pytorch_tanh",
    "max_position_embeddings": 4096, "sliding_window": None, "attention_dropout": 0.0, "residual_dropout": 0.0,
    "embedding_dropout": 0.0, "use_bias": True, "tie_word_embeddings": True,
}

#: CohereConfig's defaults (configuration_cohere.py).
COHERE_DEFAULTS: dict[str, Any] = {
    "vocab_size": 256_000, "hidden_size": 8192, "intermediate_size": 22_528, "logit_scale": 0.0625,
    "num_hidden_layers": 40, "num_attention_heads": 64, "hidden_act": "silu", "max_position_embeddings": 8192,
    "tie_word_embeddings": True, "attention_bias": False, "attention_dropout": 0.0, "use_qk_norm": False,
}

#: Qwen2MoeConfig's defaults (configuration_qwen2_moe.py).
QWEN2_MOE_DEFAULTS: dict[str, Any] = {
    "vocab_size": 151_936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16, "hidden_act": "silu", "max_position_embeddings": 32_768,
    "tie_word_embeddings": False, "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28,
    "attention_dropout": 0.0, "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4, "num_experts": 60, "qkv_bias": True,
}


def _float(cfg: Mapping[str, Any], key: str, where: str | None, default: float) -> float:
    """A number key (a multiplier, a dropout rate); ``default`` when absent or null."""
    value = cfg.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _error(cfg, where, f"{key} must be a number, not {_shown(value)}", key)
    return float(value)


def _dtype(cfg: Mapping[str, Any]) -> str | None:
    return _checkpoint_dtype(cfg)


def _moe_counts(cfg: Mapping[str, Any], where: str | None, experts_key: str) -> tuple[int, int]:
    experts = _get(cfg, experts_key, where)
    per_tok = _get(cfg, "num_experts_per_tok", where)
    if per_tok > experts:
        raise _error(cfg, where, f"num_experts_per_tok ({per_tok}) exceeds {experts_key} ({experts})",
                     "num_experts_per_tok")
    return experts, per_tok


# ----- DeepSeek-V2 / V3 -----------------------------------------------------------------

def _check_groups(cfg: Mapping[str, Any], where: str | None, experts: int, v3: bool) -> None:
    """DeepSeek's group-limited routing: the router splits the ``n_routed_experts`` scores into ``n_group``
    groups (``view(-1, n_group, n_routed_experts // n_group)``) and keeps the best ``topk_group`` of them
    (``torch.topk(group_scores, k=topk_group)``). Source: Transformers ``modeling_deepseek_v3.py``
    (``DeepseekV3MoE.route_tokens_to_experts``) and ``modeling_deepseek_v2.py`` (``group_limited_greedy``).
    Checked where the config gives the key; a V3 config that omits ``n_group`` gets DeepseekV3Config's 8.

    Raises:
        ModelConfigError: ``n_group`` that does not divide ``n_routed_experts`` (the reshape fails) or, in V3,
            leaves one expert per group (V3 scores a group by its best 2 experts: ``.topk(2)`` fails), or
            ``topk_group`` above ``n_group`` (topk over fewer groups fails) (h26b M1).
    """
    groups = None
    if cfg.get("n_group") is not None:
        groups = _get(cfg, "n_group", where)
        if experts % groups:
            near = [d for d in range(1, experts + 1) if experts % d == 0]
            below = max((d for d in near if d < groups), default=1)
            above = min((d for d in near if d > groups), default=experts)
            raise _error(cfg, where, f"n_group ({groups}) does not divide n_routed_experts ({experts}): the router "
                         f"splits the expert scores into n_group equal groups", "n_group",
                         f"The nearest that divide {experts}: {below} or {above}. Check the model's published "
                         "config.json.")
        if v3 and experts // groups < 2:  # group_scores: .topk(2) of each group's scores
            raise _error(cfg, where, f"n_group ({groups}) leaves {experts // groups} expert per group: DeepSeek-V3's "
                         "router scores each group by the sum of its best 2 experts", "n_group",
                         f"Give n_group at most {experts // 2}; check it against the model's published config.json.")
    elif v3:
        groups = 8  # DeepseekV3Config's default
    if cfg.get("topk_group") is not None:
        top = _get(cfg, "topk_group", where)
        if groups is not None and top > groups:
            raise _error(cfg, where, f"topk_group ({top}) is above n_group ({groups}): the router keeps the best "
                         "topk_group of the n_group expert groups", "topk_group",
                         f"Give topk_group from 1 to {groups}; check it against the model's published config.json.")



def _deepseek(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """DeepSeek-V2 / V3 (and R1, V2-Lite, V2.5): multi-head latent attention and a mixture of experts.

    Attention (DeepseekV3Attention): ``q_a_proj`` h -> q_lora_rank, an RMSNorm, ``q_b_proj`` ->
    a x (qk_nope + qk_rope) (or one ``q_proj`` when q_lora_rank is null, DeepSeek-V2-Lite);
    ``kv_a_proj_with_mqa`` h -> kv_lora_rank + qk_rope, an RMSNorm over the latent, ``kv_b_proj``
    kv_lora_rank -> a x (qk_nope + v_head_dim); ``o_proj`` a x v_head_dim -> h. ``attention_bias``
    gives q_a_proj, kv_a_proj_with_mqa and o_proj biases. Layers below ``first_k_dense_replace`` have
    a dense MLP of ``intermediate_size``; the others a router (``gate``, E x h, kept fp32 by
    ``_keep_in_fp32_modules_strict``), ``n_routed_experts`` experts of ``moe_intermediate_size`` and
    a shared MLP of ``moe_intermediate_size x n_shared_experts``. V3's router adds
    ``e_score_correction_bias`` (a buffer, not a parameter). ``mlp_bias`` (V2 only) gives every MLP
    and shared expert biases. V3 checkpoints also ship ``num_nextn_predict_layers`` MTP modules,
    which the model does not load (:attr:`Architecture.mtp_parameters`).

    Raises:
        ModelConfigError: ``moe_layer_freq`` other than 1 (DeepSeek's own code puts MoE layers only at
            multiples of it; Transformers 5 ignores the key and makes every layer past the dense ones
            MoE, so the checkpoint would not load), ``n_group`` / ``topk_group`` the router cannot use
            (:func:`_check_groups`), or the usual size errors.
    """
    v3 = model_type == "deepseek_v3"
    cfg = _Merged(DEEPSEEK_V3_DEFAULTS if v3 else DEEPSEEK_V2_DEFAULTS, cfg)
    h = _get(cfg, "hidden_size", where)
    L = _get(cfg, "num_hidden_layers", where)
    a = _get(cfg, "num_attention_heads", where)
    V = _get(cfg, "vocab_size", where)
    kv = _get(cfg, "num_key_value_heads", where, default=a)
    if kv != a:
        raise _error(cfg, where, f"num_key_value_heads ({kv}) differs from num_attention_heads ({a}): Transformers' "
                     "MLA expands the latent to every head and then repeats it num_attention_heads // "
                     "num_key_value_heads times, which only works when they are equal", "num_key_value_heads",
                     "DeepSeek-V2/V3 configs give num_key_value_heads equal to num_attention_heads.")
    freq = cfg.get("moe_layer_freq", 1)
    if freq != 1:
        raise _error(cfg, where, f"moe_layer_freq {freq!r}: Transformers builds a mixture-of-experts block in every "
                     "layer from first_k_dense_replace on, so a checkpoint with MoE layers only every "
                     f"{freq!r} layers does not load into it", "moe_layer_freq",
                     "Released DeepSeek-V2/V3 checkpoints use moe_layer_freq 1.")
    q_lora = cfg.get("q_lora_rank")
    if q_lora is not None:
        q_lora = _get(cfg, "q_lora_rank", where)
    kv_lora = _get(cfg, "kv_lora_rank", where)
    nope = _get(cfg, "qk_nope_head_dim", where)
    rope = _get(cfg, "qk_rope_head_dim", where)
    v_dim = _get(cfg, "v_head_dim", where)
    k_dense = _get(cfg, "first_k_dense_replace", where, default=0, min_value=0)
    routed = cfg.get("n_routed_experts")
    experts, per_tok, shared, moe_f = 1, 1, 0, 0
    if routed is not None:
        experts, per_tok = _moe_counts(cfg, where, "n_routed_experts")
        moe_f = _get(cfg, "moe_intermediate_size", where)
        shared = _get(cfg, "n_shared_experts", where, default=0, min_value=0) * moe_f
    dense_f = _get(cfg, "intermediate_size", where)
    if experts > 1:
        _check_groups(cfg, where, experts, v3)
    if experts > 1 and k_dense >= L:  # no MoE layer at all: every layer's MLP is dense (h26b N2)
        experts, per_tok, shared, moe_f = 1, 1, 0, 0
    dense_layers = min(k_dense, L) if experts > 1 else 0
    bias = _get(cfg, "attention_bias", where, default=False, kind=bool)
    mlp_bias = _get(cfg, "mlp_bias", where, default=False, kind=bool) if not v3 else False
    mtp = _get(cfg, "num_nextn_predict_layers", where, default=0, min_value=0) if v3 else 0
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=L, num_attention_heads=a,
        # Transformers expands the latent to every head (kv_b_proj); num_key_value_heads is not used.
        num_key_value_heads=a, head_dim=nope + rope,
        intermediate_size=moe_f if experts > 1 else dense_f, vocab_size=V,
        max_position_embeddings=_get(cfg, "max_position_embeddings", where),
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, kind=bool),
        hidden_act=_get(cfg, "hidden_act", where, kind=str), gated_mlp=True, norm="rms", norms_per_layer=2,
        qkv_bias=bias, o_bias=bias, mlp_bias=mlp_bias,
        num_local_experts=experts, num_experts_per_tok=per_tok,
        rotary_dim=rope, q_lora_rank=q_lora, kv_lora_rank=kv_lora, qk_nope_head_dim=nope, qk_rope_head_dim=rope,
        v_head_dim=v_dim, shared_expert_intermediate_size=shared if experts > 1 else 0,
        dense_layers=dense_layers, dense_intermediate_size=dense_f if dense_layers else 0,
        router_fp32=experts > 1, router_bias_buffer=v3 and experts > 1, mtp_layers=mtp,
        torch_dtype=_dtype(cfg), extra=dict(cfg),
    )


# ----- phi (phi-1, phi-1.5, phi-2) --------------------------------------------------------

def _phi(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """phi-1, phi-1.5 and phi-2 (PhiForCausalLM): one LayerNorm per layer whose output feeds the
    attention and the MLP in parallel (``attn + mlp + residual``, both through ``resid_dropout``);
    q/k/v and ``dense`` with biases, a 2-layer MLP ``fc1``/``fc2`` with biases, partial rotary
    (``partial_rotary_factor`` of each head), optional ``qk_layernorm`` (a LayerNorm over
    head_dim for the queries and one for the keys), ``final_layernorm`` and an ``lm_head`` with a bias."""
    cfg = _Merged(PHI_DEFAULTS, cfg)
    h = _get(cfg, "hidden_size", where)
    a = _get(cfg, "num_attention_heads", where)
    kv = _get(cfg, "num_key_value_heads", where, default=a)
    head_dim = _check_heads(cfg, h, a, kv, _get(cfg, "head_dim", where, default=None), where)
    fraction = _float(cfg, "partial_rotary_factor", where, 0.5)
    qk_ln = _get(cfg, "qk_layernorm", where, kind=bool)
    if qk_ln and head_dim != h // a:
        raise _error(cfg, where, "qk_layernorm with a head_dim other than hidden_size / num_attention_heads: phi's "
                     "q_layernorm and k_layernorm are hidden_size / num_attention_heads wide and would not apply",
                     "head_dim")
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=_get(cfg, "num_hidden_layers", where),
        num_attention_heads=a, num_key_value_heads=kv, head_dim=head_dim,
        intermediate_size=_get(cfg, "intermediate_size", where), vocab_size=_get(cfg, "vocab_size", where),
        max_position_embeddings=_get(cfg, "max_position_embeddings", where),
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, kind=bool),
        hidden_act=_get(cfg, "hidden_act", where, kind=str), gated_mlp=False, norm="layer", norms_per_layer=1,
        qkv_bias=True, o_bias=True, mlp_bias=True, qk_norm=qk_ln, qk_norm_kind="head_layer",
        parallel_block=True, lm_head_bias=True, rotary_dim=int(head_dim * fraction),
        torch_dtype=_dtype(cfg),
        extra={**dict(cfg), "resid_pdrop": _float(cfg, "resid_pdrop", where, 0.0),
               "attention_dropout": _float(cfg, "attention_dropout", where, 0.0)},
    )


# ----- Falcon ----------------------------------------------------------------------------

def _falcon(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """Falcon (FalconForCausalLM), in both decoder layouts.

    ``new_decoder_architecture`` (Falcon-40B, -180B): ``num_kv_heads`` key/value heads (GQA) in one
    ``query_key_value`` of (a + 2 kv) x d, and ``num_ln_in_parallel_attn`` (default 2) LayerNorms,
    ``ln_attn`` and ``ln_mlp``, on the layer input, attention and MLP in parallel. The original layout
    (Falcon-7B, -1B): ``multi_query`` (one key/value head: h + 2d outputs) or 3h, ``parallel_attn`` with
    one ``input_layernorm`` shared by both, or sequential with ``post_attention_layernorm`` too.
    ``bias`` gives every linear a bias; the MLP is ``ffn_hidden_size`` (default 4h) wide; the head is
    tied by default. Transformers caches every query head's K and V in the new layout (it broadcasts
    the kv heads before the cache), vLLM the kv heads.

    Raises:
        ModelConfigError: ``alibi`` true (Falcon-RW's ALiBi attention is not modelled), or
            ``new_decoder_architecture`` with ``parallel_attn`` false (Transformers builds norms its
            forward does not use and fails).
    """
    cfg = _Merged(FALCON_DEFAULTS, cfg)
    if _get(cfg, "alibi", where, kind=bool):
        raise _error(cfg, where, "alibi true (Falcon-RW's ALiBi attention) is not modelled", "alibi",
                     "Falcon-7B, -40B and -180B use rotary embeddings (alibi false).")
    h = _get(cfg, "hidden_size", where)
    a = _get(cfg, "num_attention_heads", where)
    new = _get(cfg, "new_decoder_architecture", where, kind=bool)
    parallel = _get(cfg, "parallel_attn", where, kind=bool)
    if new and not parallel:
        raise _error(cfg, where, "new_decoder_architecture with parallel_attn false: Transformers' Falcon builds "
                     "input_layernorm and post_attention_layernorm, then its forward calls ln_attn and fails",
                     "parallel_attn", "Falcon's new decoder architecture runs attention and MLP in parallel: "
                     "parallel_attn true.")
    if new:
        kv = _get(cfg, "num_kv_heads", where, default=a)
        norms = _get(cfg, "num_ln_in_parallel_attn", where, default=2)
        if norms not in (1, 2):
            raise _error(cfg, where, f"num_ln_in_parallel_attn must be 1 or 2, not {norms}", "num_ln_in_parallel_attn")
    else:
        kv = 1 if _get(cfg, "multi_query", where, kind=bool) else a
        norms = 1 if parallel else 2
    head_dim = _check_heads(cfg, h, a, kv, None, where)
    bias = _get(cfg, "bias", where, kind=bool)
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=_get(cfg, "num_hidden_layers", where),
        num_attention_heads=a, num_key_value_heads=kv, head_dim=head_dim,
        intermediate_size=_get(cfg, "ffn_hidden_size", where, default=4 * h),
        vocab_size=_get(cfg, "vocab_size", where),
        max_position_embeddings=_get(cfg, "max_position_embeddings", where),
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, kind=bool),
        hidden_act=_get(cfg, "activation", where, kind=str), gated_mlp=False, norm="layer", norms_per_layer=norms,
        qkv_bias=bias, o_bias=bias, mlp_bias=bias, fused_qkv=True, parallel_block=parallel or new,
        hf_kv_heads=a if new and kv != a else None,
        torch_dtype=_dtype(cfg),
        extra={**dict(cfg), "hidden_dropout": _float(cfg, "hidden_dropout", where, 0.0),
               "attention_dropout": _float(cfg, "attention_dropout", where, 0.0),
               "new_decoder_architecture": new},
    )


# ----- GPT-J -----------------------------------------------------------------------------

def _gptj(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """GPT-J (GPTJForCausalLM): ``ln_1`` feeds attention and MLP in parallel; q/k/v and ``out_proj``
    without biases, ``fc_in``/``fc_out`` with biases (``n_inner``, default 4h), rotary embedding on the
    first ``rotary_dim`` dims of each head, ``ln_f`` and an untied ``lm_head`` with a bias."""
    cfg = _Merged(GPTJ_DEFAULTS, cfg)
    h = _get(cfg, "n_embd", where)
    a = _get(cfg, "n_head", where)
    head_dim = _check_heads(cfg, h, a, a, None, where, "n_embd")
    rotary = cfg.get("rotary_dim")
    rotary = _get(cfg, "rotary_dim", where) if rotary is not None else None
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=_get(cfg, "n_layer", where), num_attention_heads=a,
        num_key_value_heads=a, head_dim=head_dim, intermediate_size=_get(cfg, "n_inner", where, default=4 * h),
        vocab_size=_get(cfg, "vocab_size", where), max_position_embeddings=_get(cfg, "n_positions", where),
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, kind=bool),
        hidden_act=_get(cfg, "activation_function", where, kind=str), gated_mlp=False, norm="layer",
        norms_per_layer=1, mlp_bias=True, parallel_block=True, lm_head_bias=True,
        rotary_dim=rotary if rotary is not None and rotary < head_dim else None,
        torch_dtype=_dtype(cfg),
        extra={**dict(cfg), "resid_pdrop": _float(cfg, "resid_pdrop", where, 0.0),
               "attn_pdrop": _float(cfg, "attn_pdrop", where, 0.0),
               "embd_pdrop": _float(cfg, "embd_pdrop", where, 0.0)},
    )


# ----- BLOOM -----------------------------------------------------------------------------

def _bloom(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """BLOOM (BloomForCausalLM): ALiBi attention (no position embedding), ``word_embeddings_layernorm``
    after the embedding, pre-norm layers of LayerNorms with ``query_key_value`` (3h) and ``dense`` with
    biases, a 4h GeLU MLP with biases, ``ln_f`` and a tied head. The attention is written out
    (``baddbmm`` with the ALiBi bias, fp32 softmax): Transformers has no SDPA or flash path for it."""
    cfg = _Merged(BLOOM_DEFAULTS, cfg)
    hidden_key = "hidden_size" if "hidden_size" in cfg and "n_embed" not in cfg else (
        "n_embed" if "n_embed" in cfg else "hidden_size")
    h = _get(cfg, hidden_key, where)
    a = _get(cfg, "n_head", where)
    head_dim = _check_heads(cfg, h, a, a, None, where, hidden_key)
    tp_slow = _get(cfg, "pretraining_tp", where, default=1) > 1 and _get(cfg, "slow_but_exact", where, kind=bool)
    if tp_slow:
        raise _error(cfg, where, "slow_but_exact with pretraining_tp > 1 (BLOOM's sliced matmuls) is not modelled",
                     "slow_but_exact", "Released BLOOM configs set slow_but_exact false.")
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=_get(cfg, "n_layer", where), num_attention_heads=a,
        num_key_value_heads=a, head_dim=head_dim, intermediate_size=4 * h,
        vocab_size=_get(cfg, "vocab_size", where), max_position_embeddings=BLOOM_MAX_POSITIONS,
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, kind=bool), hidden_act="bloom_gelu",
        gated_mlp=False, norm="layer", norms_per_layer=2, qkv_bias=True, o_bias=True, mlp_bias=True, fused_qkv=True,
        embedding_norm=True, alibi=True,
        torch_dtype=_dtype(cfg),
        extra={**dict(cfg), "hidden_dropout": _float(cfg, "hidden_dropout", where, 0.0),
               "attention_dropout": _float(cfg, "attention_dropout", where, 0.0)},
    )


# ----- Llama-like families: OLMo 2, Granite, StarCoder2, Cohere --------------------------

def _llama_keys(cfg: Mapping[str, Any], where: str | None) -> dict[str, Any]:
    h = _get(cfg, "hidden_size", where)
    a = _get(cfg, "num_attention_heads", where)
    kv = _get(cfg, "num_key_value_heads", where, default=a)
    return dict(
        hidden_size=h, num_hidden_layers=_get(cfg, "num_hidden_layers", where), num_attention_heads=a,
        num_key_value_heads=kv, head_dim=_check_heads(cfg, h, a, kv, _get(cfg, "head_dim", where, default=None),
                                                      where),
        intermediate_size=_get(cfg, "intermediate_size", where), vocab_size=_get(cfg, "vocab_size", where),
        max_position_embeddings=_get(cfg, "max_position_embeddings", where),
        tie_word_embeddings=_get(cfg, "tie_word_embeddings", where, kind=bool),
        hidden_act=_get(cfg, "hidden_act", where, kind=str),
    )


def _olmo2(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """OLMo 2 (Olmo2ForCausalLM): Llama's modules with norms after each sublayer instead of before
    (``post_attention_layernorm``, ``post_feedforward_layernorm``), and ``q_norm``/``k_norm``, RMSNorms
    over the whole query (a x d) and key (kv x d) projection outputs. ``attention_bias`` gives
    q/k/v/o biases."""
    cfg = _Merged(OLMO2_DEFAULTS, cfg)
    bias = _get(cfg, "attention_bias", where, kind=bool)
    return Architecture(model_type=model_type, **_llama_keys(cfg, where), qkv_bias=bias, o_bias=bias,
                        qk_norm=True, qk_norm_kind="full", post_norm=True, torch_dtype=_dtype(cfg),
                        extra=dict(cfg))


def _granite(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """Granite 3 (GraniteForCausalLM): Llama's modules (``attention_bias`` on q/k/v/o, ``mlp_bias``)
    with scalar multipliers: the embeddings x ``embedding_multiplier``, each sublayer output x
    ``residual_multiplier`` before its residual add, the scores x ``attention_multiplier`` and the
    logits / ``logits_scaling`` (a new logits-sized tensor)."""
    cfg = _Merged(GRANITE_DEFAULTS, cfg)
    bias = _get(cfg, "attention_bias", where, kind=bool)
    scaling = _float(cfg, "logits_scaling", where, 1.0)
    if scaling == 0:
        raise _error(cfg, where, "logits_scaling must not be 0 (Granite divides the logits by it)", "logits_scaling")
    return Architecture(model_type=model_type, **_llama_keys(cfg, where), qkv_bias=bias, o_bias=bias,
                        mlp_bias=_get(cfg, "mlp_bias", where, kind=bool), logits_scale=1 / scaling,
                        residual_multiplier=_float(cfg, "residual_multiplier", where, 1.0),
                        embedding_multiplier=_float(cfg, "embedding_multiplier", where, 1.0),
                        torch_dtype=_dtype(cfg), extra=dict(cfg))


def _starcoder2(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """StarCoder2 (Starcoder2ForCausalLM): GQA q/k/v/o and a 2-layer MLP ``c_fc``/``c_proj`` (GeLU),
    all with biases when ``use_bias``; LayerNorms with biases (``norm_epsilon``); a tied head;
    ``sliding_window`` (when set) on every layer; ``residual_dropout`` on each sublayer output and
    ``embedding_dropout`` on the embeddings."""
    cfg = _Merged(STARCODER2_DEFAULTS, cfg)
    bias = _get(cfg, "use_bias", where, kind=bool)
    keys = _llama_keys(cfg, where)
    window = cfg.get("sliding_window")
    if window is not None:
        window = _get(cfg, "sliding_window", where)
    return Architecture(model_type=model_type, **keys, gated_mlp=False, norm="layer", qkv_bias=bias, o_bias=bias,
                        mlp_bias=bias, sliding_window=window, sliding_window_layers=keys["num_hidden_layers"] if window
                        else 0, torch_dtype=_dtype(cfg),
                        extra={**dict(cfg), "resid_pdrop": _float(cfg, "residual_dropout", where, 0.0),
                               "attention_dropout": _float(cfg, "attention_dropout", where, 0.0),
                               "embd_pdrop": _float(cfg, "embedding_dropout", where, 0.0)})


def _cohere(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """Command-R (CohereForCausalLM): one norm per layer feeding attention and the gated MLP in
    parallel; CohereLayerNorm subtracts the mean (a LayerNorm) but has a weight and no bias;
    ``use_qk_norm`` adds query and key LayerNorms with a weight per head (a x d and kv x d); a tied
    head whose logits are multiplied by ``logit_scale`` (a new logits-sized tensor)."""
    cfg = _Merged(COHERE_DEFAULTS, cfg)
    bias = _get(cfg, "attention_bias", where, kind=bool)
    return Architecture(model_type=model_type, **_llama_keys(cfg, where), norm="layer", norm_bias=False,
                        norms_per_layer=1, qkv_bias=bias, o_bias=bias, parallel_block=True,
                        qk_norm=_get(cfg, "use_qk_norm", where, kind=bool), qk_norm_kind="per_head",
                        logits_scale=_float(cfg, "logit_scale", where, 0.0625), torch_dtype=_dtype(cfg),
                        extra=dict(cfg))


# ----- Qwen2-MoE -------------------------------------------------------------------------

def _qwen2_moe(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """Qwen1.5-MoE / Qwen2-MoE (Qwen2MoeForCausalLM): Qwen2's attention (q/k/v biases when
    ``qkv_bias``), and in each sparse layer a router (``gate``, E x h), ``num_experts`` experts of
    ``moe_intermediate_size`` and a shared expert MLP of ``shared_expert_intermediate_size`` whose
    output is scaled by ``sigmoid(shared_expert_gate(x))`` (an nn.Linear h -> 1). Layers in
    ``mlp_only_layers``, or not at a multiple of ``decoder_sparse_step``, have a dense MLP of
    ``intermediate_size``. With ``use_sliding_window``, the layers ``layer_types`` names (default: the
    even-indexed ones below ``max_window_layers``) use the window."""
    cfg = _Merged(QWEN2_MOE_DEFAULTS, cfg)
    keys = _llama_keys(cfg, where)
    L = keys["num_hidden_layers"]
    experts, per_tok = _moe_counts(cfg, where, "num_experts")
    step = _get(cfg, "decoder_sparse_step", where)
    only = layer_indices(cfg, where, "mlp_only_layers", L)
    dense = sum(1 for i in range(L) if i in only or (i + 1) % step)
    if dense >= L:  # no sparse layer at all: Transformers builds every layer with the dense MLP (h26b N2)
        experts, per_tok = 1, 1
    window, window_layers = None, 0
    if _get(cfg, "use_sliding_window", where, kind=bool) and cfg.get("sliding_window"):
        window = _get(cfg, "sliding_window", where)
        types = cfg.get("layer_types")
        if isinstance(types, (list, tuple)) and len(types) == L:
            window_layers = sum(t == "sliding_attention" for t in types)
        else:
            max_window = _get(cfg, "max_window_layers", where, min_value=0)
            window_layers = sum(1 for i in range(L) if (i + 1) % 2 and i < max_window)
        if not window_layers:
            window = None
    moe_f = _get(cfg, "moe_intermediate_size", where)
    shared_f = _get(cfg, "shared_expert_intermediate_size", where, min_value=0)
    if experts == 1:  # all dense (above): Qwen2MoeMLP of intermediate_size in every layer, no router, no experts
        moe_f, shared_f, dense = keys["intermediate_size"], 0, 0
    return Architecture(
        model_type=model_type, **{**keys, "intermediate_size": moe_f},
        qkv_bias=_get(cfg, "qkv_bias", where, kind=bool), num_local_experts=experts, num_experts_per_tok=per_tok,
        shared_expert_intermediate_size=shared_f, shared_expert_gate=experts > 1, dense_layers=dense,
        dense_intermediate_size=keys["intermediate_size"] if dense else 0,
        sliding_window=window, sliding_window_layers=window_layers, torch_dtype=_dtype(cfg), extra=dict(cfg),
    )


#: The reader of each model_type this module handles.
READERS: dict[str, Callable[[Mapping[str, Any], str | None, str], Architecture]] = {
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "phi": _phi, "falcon": _falcon, "gptj": _gptj,
    "bloom": _bloom, "olmo2": _olmo2, "granite": _granite, "starcoder2": _starcoder2, "cohere": _cohere,
    "qwen2_moe": _qwen2_moe,
}


def read_family(cfg: Mapping[str, Any], where: str | None, model_type: str) -> Architecture:
    """The :class:`Architecture` of a config whose ``model_type`` is one of :data:`READERS`.

    Raises:
        ModelConfigError: missing or malformed keys, or a variant the family reader refuses.
    """
    return READERS[model_type](cfg, where, model_type)
