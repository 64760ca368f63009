"""Any decoder Transformers can build: the model built on the meta device, read for its shapes.

A ``model_type`` the planner has no reader for (:data:`planner.model.architecture.SUPPORTED_MODEL_TYPES`)
is built with ``AutoModelForCausalLM.from_config`` under ``torch.device("meta")``: every parameter
exists with its shape and dtype but no storage, so a 400B-parameter model builds in seconds. From it:

- the parameter count, exactly ``sum(p.numel() for p in model.parameters())``, split into
  embedding, head, the decoder layers' linear weights (``nn.Linear`` modules and the 3-D expert
  tensors of a mixture of experts), routers, biases and norms;
- each layer's ``nn.Linear`` modules with their shapes (identical layers grouped), so weights,
  quantization, tensor parallelism, LoRA adapters and optimizer states are sized on the real
  modules;
- the KV layout: the cache layers ``DynamicCache(config=...)`` creates (only layers with attention
  keep keys and values; sliding-window layers are ``DynamicSlidingWindowLayer``), and the K and V
  widths of one token from a forward pass of two tokens on the meta device (the shapes the
  attention really caches, MLA latents and shared KV included); where that forward cannot run on
  the meta device (data-dependent routing, custom kernels), ``2 x num_key_value_heads x head_dim``
  from the config, said in :data:`KV_FROM_CONFIG`.

Activations have no reader of their own: :func:`decoder_proxy` sizes them with the Llama-style
decoder rule of planner.memory.layer on the config's widths (h, a, kv, d, f, experts).
That rule is not validated for the architecture; the estimate says so with its stated
uncertainty (:data:`GENERIC_MEDIAN_ERROR`, :data:`GENERIC_UNCERTAINTY`, :data:`GENERIC_WORST_MATH_SDPA`).

Needs the ``hf`` extra (``pip install 'planner[hf]'``: transformers and torch); without it
:func:`knows` is False and the model_type is refused with that hint. Nothing is imported until a
generic model is read.

Sources: PyTorch docs, "Meta device" (torch.device("meta"): tensors without data, shapes
propagate through operators); Transformers ``AutoModelForCausalLM.from_config``, ``DynamicCache``
(cache_utils.py).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from planner.core.errors import ModelConfigError
from planner.model.layout import Architecture, LinearModule, ParamCounts

#: The stated uncertainty of the generic activation rule: the error of the peak it predicts when it
#: is applied, instead of their own readers, to the measured CPU grid runs of the families the
#: planner reads itself (full fine-tuning, LoRA and inference; tests/test_families.py computes it
#: again from tests/data/validation/measured_cpu.json). Median and worst where attention ran a fused
#: SDPA kernel or eager attention, and worst where SDPA fell back to its math path (a choice the
#: config does not show: DeepSeek's MLA on the CPU, Falcon's multi-query layout).
GENERIC_MEDIAN_ERROR = 0.03
GENERIC_UNCERTAINTY = 0.30
GENERIC_WORST_MATH_SDPA = 0.55

#: Said when the KV widths come from the config because the meta forward did not run.
KV_FROM_CONFIG = "2 x num_key_value_heads x head_dim from the config (the meta-device forward did not run)"


def hf_available() -> bool:
    """Whether transformers and torch are importable (the ``hf`` extra)."""
    return importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None


def knows(model_type: str) -> bool:
    """Whether the installed Transformers has a causal-LM class for ``model_type`` (False without the extra)."""
    if not hf_available():
        return False
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def _first(obj: Any, names: tuple[str, ...], default: Any = None) -> Any:
    for n in names:
        v = getattr(obj, n, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return default


def _part(name: str, module_path: str) -> str:
    path = module_path.lower()
    if any(w in path for w in ("attn", "attention", "q_proj", "k_proj", "v_proj", "o_proj", "qkv", "query", "key",
                               "value")):
        return "attention"
    if "router" in path or path.endswith(".gate") or path == "gate":
        return "router"
    return "mlp"


def _layer_signature(layer: Any, experts: int) -> tuple[tuple[LinearModule, ...], tuple[int, ...]]:
    """The linear modules (and 2-D / 3-D parameters outside them: a mixture of experts' stored
    experts, ``experts`` x out x in, and routers) and the 1-D norm sizes of one layer."""
    import torch

    mods: list[LinearModule] = []
    seen: set[int] = set()
    for path, module in layer.named_modules():
        if isinstance(module, torch.nn.Linear):
            name = path.rpartition(".")[2] or path
            mods.append(LinearModule(name, module.in_features, module.out_features, bias=module.bias is not None,
                                     part=_part(name, path)))
            seen.add(id(module.weight))
            if module.bias is not None:
                seen.add(id(module.bias))
    norms: list[int] = []
    for path, p in layer.named_parameters():
        if id(p) in seen:
            continue
        name = path.rpartition(".")[2]
        owner = path.rpartition(".")[0]
        if p.dim() == 3 and p.shape[0] == experts:  # a mixture of experts' stored experts: (experts, out, in)
            mods.append(LinearModule(f"{owner.rpartition('.')[2]}.{name}" if owner else name, p.shape[2], p.shape[1],
                                     count=p.shape[0], part="expert"))
        elif p.dim() >= 2:
            if p.dim() > 2:  # e.g. a convolution's weight (out, in / groups, kernel)
                mods.append(LinearModule(owner.rpartition(".")[2] or name, p[0].numel(), p.shape[0], part="mlp"))
                continue
            mods.append(LinearModule(owner.rpartition(".")[2] or name, p.shape[1], p.shape[0],
                                     part="router" if "gate" in owner or "router" in owner else _part(name, path)))
        else:
            norms.append(p.numel())
    return tuple(mods), tuple(norms)


def _decoder_layers(model: Any) -> Any:
    """The model's decoder layers: the largest ``nn.ModuleList`` by parameters."""
    import torch

    best, size = None, -1
    for _, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module):
            n = sum(p.numel() for p in module.parameters())
            if n > size:
                best, size = module, n
    return best


def _kv_layout(model: Any, config: Any) -> tuple[list[tuple[str, int]] | None, str]:
    """Per cache layer that keeps keys and values: (its class name, values it keeps per token for K
    and V); None when the meta forward could not run. With the text of where the widths come from.

    A mixture of experts' experts route tokens by value (data-dependent shapes the meta device cannot
    follow); they do not touch the cache, so their modules (classes named ``...Experts``) return
    zeros for this forward. Layers of another kind (state-space, linear attention) keep a state of
    fixed size instead of per-token keys and values: counted in the text, not in the KV cache."""
    import torch
    from transformers import DynamicCache

    patched = []
    for module in model.modules():
        if type(module).__name__.endswith("Experts"):
            patched.append(module)
            module.forward = lambda hidden_states, *a, **k: torch.zeros_like(hidden_states)
    try:
        cache = DynamicCache(config=config)
        with torch.no_grad():
            ids = torch.zeros((1, 2), dtype=torch.long, device="meta")
            model(input_ids=ids, cache=cache, use_cache=True)
    except Exception as exc:  # noqa: BLE001 - any failure of the meta forward falls back to the config
        return None, f"{KV_FROM_CONFIG}: {type(exc).__name__}"
    finally:
        for module in patched:
            del module.forward
    out, states = [], 0
    for layer in getattr(cache, "layers", []):
        k, v = getattr(layer, "keys", None), getattr(layer, "values", None)
        if isinstance(k, torch.Tensor) and isinstance(v, torch.Tensor) and k.dim() == 4 and k.shape[2] == 2:
            out.append((type(layer).__name__, int(k.shape[1] * k.shape[3] + v.shape[1] * v.shape[3])))
        else:
            states += 1
    text = "measured on the meta device: the K and V tensors a forward pass of two tokens puts in DynamicCache"
    if states:
        text += (f"; {states} layer(s) keep a fixed-size recurrent state instead of per-token keys and values, "
                 "not counted")
    return out, text


def from_hf_config_generic(cfg: Mapping[str, Any], where: str | None) -> Architecture:
    """The :class:`Architecture` of a config whose model_type Transformers knows and the planner has no
    reader for, from the model built on the meta device (module docstring).

    Raises:
        ModelConfigError: Transformers refuses the config, or cannot build the model, or the model
            has no decoder layers the planner can find (the message names Transformers' error).
    """
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    model_type = str(cfg["model_type"])
    kwargs = {k: v for k, v in cfg.items() if k != "model_type"}
    try:
        config = AutoConfig.for_model(model_type, **kwargs)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    except Exception as exc:  # noqa: BLE001 - Transformers' own message is the useful part
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelConfigError(f"Transformers {transformers.__version__} could not build {model_type} from this "
                               f"config: {first}", file=where, entry="model_type",
                               hint="Check the config against the model's published config.json.") from None
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    emb = model.get_input_embeddings()
    out = model.get_output_embeddings()
    embedding = emb.weight.numel() if emb is not None else 0
    lm_head = lm_bias = 0
    if out is not None and getattr(out, "weight", None) is not None and (emb is None or out.weight is not emb.weight):
        lm_head = out.weight.numel()
    if out is not None and getattr(out, "bias", None) is not None:
        lm_bias = out.bias.numel()
    layers = _decoder_layers(model)
    if layers is None:
        raise ModelConfigError(f"Transformers' {type(model).__name__} has no list of decoder layers the planner can "
                               "read", file=where, entry="model_type")
    groups: dict[tuple, int] = {}
    order: list[tuple] = []
    n_experts = _first(text, ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"), 0)
    for layer in layers:
        sig = _layer_signature(layer, n_experts)
        if sig not in groups:
            order.append(sig)
            groups[sig] = 0
        groups[sig] += 1
    modules: list[LinearModule] = []
    norm_values = 0
    norm_sizes: dict[int, int] = {}
    largest = max(sum(m.weight_params + m.bias_params for m in sig[0]) + sum(sig[1]) for sig in order)
    for sig in order:
        n = groups[sig]
        mods, norms = sig
        from dataclasses import replace

        modules += [replace(m, layers=n) for m in mods]
        norm_values += sum(norms) * n
        for size in norms:
            norm_sizes[size] = norm_sizes.get(size, 0) + n
    linear = sum(m.total_weight_params for m in modules if m.part != "router")
    router = sum(m.total_weight_params for m in modules if m.part == "router")
    biases = sum(m.total_bias_params for m in modules) + lm_bias
    in_layers = sum(p.numel() for p in layers.parameters())
    outside = total - in_layers - embedding - lm_head - lm_bias
    # Outside the layers and the embeddings: the final norm (1-D) and anything else (position
    # tables, a multimodal checkpoint's towers), kept in 16-bit like the embeddings.
    outside_norms = 0
    seen_layer = {id(p) for p in layers.parameters()}
    skip = {id(emb.weight)} if emb is not None else set()
    if out is not None:
        skip |= {id(p) for p in out.parameters()}
    for p in params:
        if id(p) in seen_layer or id(p) in skip:
            continue
        if p.dim() == 1:
            outside_norms += p.numel()
            norm_sizes[p.numel()] = norm_sizes.get(p.numel(), 0) + 1
    counts = ParamCounts(embedding=embedding, position_embedding=0, lm_head=lm_head, linear=linear, biases=biases,
                         norms=norm_values + outside_norms, router=router, vision=outside - outside_norms)
    if counts.total != total:  # the split must account for every parameter once
        raise ModelConfigError(f"the parameters of Transformers' {type(model).__name__} do not split into layers, "
                               f"embeddings and head ({counts.total:,} of {total:,})", file=where, entry="model_type")
    h = _first(text, ("hidden_size", "d_model", "n_embd"), emb.weight.shape[1] if emb is not None else 0)
    L = len(layers)
    a = _first(text, ("num_attention_heads", "n_head", "num_heads"), 1)
    kv = _first(text, ("num_key_value_heads", "num_kv_heads", "n_head_kv"), a)
    d = _first(text, ("head_dim",), h // a if a else h)
    experts = max([m.count for m in modules if m.part == "expert"] or [1])
    f = _first(text, ("moe_intermediate_size",) if experts > 1 else (), None) or _first(
        text, ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"), 4 * h)
    V = emb.weight.shape[0] if emb is not None else _first(text, ("vocab_size",), 0)
    per_tok = _first(text, ("num_experts_per_tok", "moe_topk", "top_k", "num_selected_experts"), 1) if experts > 1 else 1
    kv_layout, kv_source = _kv_layout(model, config)
    window = _first(text, ("sliding_window",), None)
    if kv_layout is not None:
        kv_values = max([v for _, v in kv_layout] or [0])
        kv_layers = len(kv_layout)
        window_layers = sum(1 for name, _ in kv_layout if "Sliding" in name)
        if len({v for _, v in kv_layout}) > 1:
            kv_source += "; layers cache different widths, the widest is taken for all"
    else:
        kv_values, kv_layers = 2 * kv * d, L
        types = getattr(text, "layer_types", None)
        window_layers = sum(1 for t in types if t == "sliding_attention") if isinstance(types, (list, tuple)) else 0
    if not window:
        window_layers = 0
    dtype = getattr(text, "dtype", None) or cfg.get("torch_dtype") or cfg.get("dtype")
    return Architecture(
        model_type=model_type, hidden_size=h, num_hidden_layers=L, num_attention_heads=a, num_key_value_heads=kv,
        head_dim=d, intermediate_size=f, vocab_size=V,
        max_position_embeddings=_first(text, ("max_position_embeddings", "n_positions", "seq_length"), 2048),
        tie_word_embeddings=lm_head == 0, hidden_act=str(getattr(text, "hidden_act", "silu") or "silu"),
        num_local_experts=experts, num_experts_per_tok=min(per_tok, experts),
        sliding_window=window if window_layers else None, sliding_window_layers=window_layers,
        torch_dtype=str(dtype).replace("torch.", "") if dtype is not None else None, generic=True,
        extra={**dict(cfg), "_generic_modules": tuple(modules), "_generic_counts": counts,
               "_kv_values": kv_values, "_kv_layers": kv_layers, "_kv_source": kv_source,
               "_model_class": type(model).__name__, "_generic_largest_layer": largest,
               "_generic_norm_tensors": tuple(sorted(norm_sizes.items())), "_transformers_version": transformers.__version__,
               "_base_model_tp_plan": bool(getattr(config, "base_model_tp_plan", None))},
    )


def generic_layer_modules(arch: Architecture) -> list[LinearModule]:
    """The generic model's modules as read from its layers (with their layer counts)."""
    return list(arch.extra["_generic_modules"])


def generic_param_counts(arch: Architecture) -> ParamCounts:
    """The generic model's parameter split, read from the meta-device model."""
    return arch.extra["_generic_counts"]


def decoder_proxy(arch: Architecture) -> Architecture:
    """A Llama-style architecture of the generic model's widths, for the generic activation rule:
    q/k/v/o projections of a x d and kv x d, a gated MLP of f (or the experts, top-k), RMSNorm."""
    from dataclasses import replace

    return replace(arch, model_type="llama" if not arch.is_moe else "qwen3_moe", generic=False, extra={})


def describe(arch: Architecture) -> str:
    """One sentence saying how a generic model was read and what its activation terms are worth."""
    return (f"model_type {arch.model_type} is read through Transformers {arch.extra.get('_transformers_version', '')} "
            f"({arch.extra.get('_model_class', '')} built on the meta device): parameters, weights, optimizer states "
            f"and KV cache ({arch.extra.get('_kv_source', '')}) are exact; its activations follow a generic "
            f"Llama-style decoder rule not validated for {arch.model_type} (stated uncertainty: on the measured "
            f"runs of the families the planner reads itself that rule's peak is within {GENERIC_MEDIAN_ERROR:.0%} "
            f"median and {GENERIC_UNCERTAINTY:.0%} worst, {GENERIC_WORST_MATH_SDPA:.0%} where SDPA runs its math "
            "path).")
