"""Activations of LitGPT's LLaMA-Adapter layers (litgpt/adapter.py) over a frozen LitGPT layer."""

from __future__ import annotations

from planner.memory.layer import MLP_MARKER, LayerOptions, layer_saved_tensors
from planner.memory.saved import Regime, SavedTensor
from planner.model.architecture import Architecture


ADAPTER_ACT_SRC = ("LitGPT litgpt/adapter.py CausalSelfAttention.scaled_dot_product_attention (commit 05401183; "
                   "lit_gpt 0f021f3a alike): ay = SDPA(q, ak, av, amask); y + gating_factor * ay")


def adapter_layer_saved_tensors(arch: Architecture, regime: Regime, *, attention: str, first: bool,
                                base_keeps_inputs: bool = False, cpu_kernels: bool = False) -> list[SavedTensor]:
    """What one layer of LitGPT's LLaMA-Adapter saves for backward, per token (litgpt/adapter.py).

    Over a frozen LitGPT layer (:func:`layer_saved_tensors` with ``code='litgpt'``, no adapters), each
    adapted layer attends from its queries to the prefix's cached keys and values (``ak``, ``av``:
    ``adapter_prompt_length`` tokens, made once under ``no_grad``, so they carry no graph;
    planner.memory.states.adapter_parameters) through SDPA with a boolean mask, and adds the output
    scaled by a per-head gate: ``y + gating_factor * ay``. With a mask SDPA runs the memory-efficient
    kernel, which saves its output and an fp32 log-sum-exp per head and the mask converted to an
    additive bias in the query dtype (``convert_boolean_attn_mask``), its last dimension padded to a
    multiple of 8 (aten/src/ATen/native/transformers/attention.cpp ``preprocess_mask``,
    ``mem_eff_alignment = 8``: 10 columns become 16; one mask for the micro-batch, counted per token,
    exact for micro-batch 1); the query it saves is the base attention's. The
    gate's product keeps ``ay`` (the same storage). The cached keys and values (prefix x q each) stay
    on the layer for the whole run.

    The first adapted layer (``first``) is different: below it nothing requires grad (the embedding
    and the earlier layers are frozen, and the prefix has no graph), so its attention saves nothing
    but the gate's operand ``ay``; what follows the attention output does require grad and saves what
    a frozen layer saves there (``MLP_MARKER``), except in a parallel block, whose MLP reads the layer
    input. Layers before ``adapter_start_layer`` save nothing at all (the caller).

    ``base_keeps_inputs``: an NF4 base on bitsandbytes before 0.43.2: the output projection's input,
    the reshaped sum (a new tensor, not SDPA's output), stays on its ctx.
    """
    from planner.workload.frameworks import LITGPT_ADAPTER_PROMPT_LENGTH

    aT = LITGPT_ADAPTER_PROMPT_LENGTH
    c = regime.compute
    q, a, o = arch.q_dim, arch.num_attention_heads, arch.o_dim
    frozen = layer_saved_tensors(arch, regime, LayerOptions(attention=attention, full=False,
                                                            base_keeps_inputs=base_keeps_inputs, cpu_kernels=cpu_kernels,
                                                            code="litgpt", mlp_marker=True))
    cut = next(i for i, t in enumerate(frozen) if t.name == MLP_MARKER)
    cache = SavedTensor(f"adapter prefix keys and values (cached: {aT} tokens x q x 2)", 2 * aT * q * c, per_layer=True)
    kept_proj = ([SavedTensor("proj input: the sum with the gated adapter output (kept by the 4-bit linear's ctx)",
                              c * o, ctx_bytes_per_token=c * o)] if base_keeps_inputs else [])
    if first:
        tail = [] if arch.parallel_block else [t for t in frozen[cut + 1:]]
        return [SavedTensor("adapter attention output (kept by the gate's product)", c * q), cache] + kept_proj + tail
    width = -(-aT // 8) * 8
    body = [t for t in frozen if t.name != MLP_MARKER and not t.name.startswith("8-bit linear input: attention output")]
    return body + [
        SavedTensor("adapter SDPA output (also the gate product's operand)", c * q),
        SavedTensor("adapter SDPA log-sum-exp (fp32)", 4 * a),
        SavedTensor(f"adapter mask as an additive bias ({aT} prefix columns padded to {width})", c * width),
        cache] + kept_proj
