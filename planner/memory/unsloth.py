"""Activations of a layer run by Unsloth's fused LoRA kernels, and their backward working set."""

from __future__ import annotations

from planner.memory.saved import Regime, SavedTensor
from planner.model.architecture import Architecture


UNSLOTH_KERNEL_SRC = ("Unsloth unsloth/kernels/fast_lora.py LoRA_QKV, LoRA_W, LoRA_MLP; rms_layernorm.py "
                      "Fast_RMS_Layernorm; rope_embedding.py (commit e3162dc5)")


def unsloth_kernels_apply(arch: Architecture, *, full: bool, lora_targets: tuple[str, ...], lora_dropout: float,
                          attention: str) -> bool:
    """Whether Unsloth's fused LoRA kernels run the layer: LoRA (dropout 0) on every projection of a
    Llama-style layer (separate q/k/v and gate/up/down, RMSNorm), SDPA or flash attention (Unsloth
    patches only then: unsloth/models/llama.py ``patch_peft_model``)."""
    needed = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    names = {m.name for m in arch.linear_modules()}
    return (not full and lora_dropout == 0 and needed <= names and needed <= set(lora_targets) and not arch.is_moe
            and not arch.layer_norm and attention != "eager" and arch.gated_mlp)


def unsloth_layer_saved_tensors(arch: Architecture, regime: Regime, *, lora_rank: int) -> list[SavedTensor]:
    """What one Llama-style layer saves for backward under Unsloth's kernels, per token.

    ``Fast_RMS_Layernorm`` saves its input and an fp32 inverse RMS per row; ``LoRA_QKV`` saves its input
    (the norm's output) and recomputes the adapters' products in backward; RoPE is applied in place
    and saves only cos and sin; SDPA saves q, k, v, its output and log-sum-exp; ``LoRA_W`` (the output
    projection) saves its input, SDPA's output; ``LoRA_MLP`` saves its input and the gate and up
    outputs (``ctx.save_for_backward(..., X, e, g)``) and recomputes the activation in backward.

    Attention runs through xformers unless flash-attn is installed (``LlamaAttention_fast_forward``,
    unsloth/models/llama.py at e3162dc5: ``if not HAS_FLASH_ATTENTION``; Unsloth's install extras pull
    xformers, flash-attn is optional): with fewer KV heads than query heads and ``hidden_states``
    requiring grad, K and V are expanded and ``reshape``d to every head (a copy each), and those copies
    are what ``memory_efficient_attention`` keeps.
    """
    h, q, k, f = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size
    c = regime.compute
    a = arch.num_attention_heads
    gqa = arch.num_key_value_heads < a
    return [
        SavedTensor("attention norm input and fp32 inverse RMS (Fast_RMS_Layernorm)", c * h + 4),
        SavedTensor("LoRA_QKV input (the norm's output)", c * h),
        SavedTensor("LoRA q/k/v A outputs are recomputed (only the input is kept)", 0),
        SavedTensor("query, and key and value expanded to every head (xformers inputs)", c * 3 * q) if gqa else
        SavedTensor("query, key, value (xformers inputs)", c * (q + 2 * k)),
        SavedTensor("SDPA output (also LoRA_W's input)", c * q),
        SavedTensor("SDPA log-sum-exp (fp32)", 4 * a),
        SavedTensor("MLP norm input and fp32 inverse RMS", c * h + 4),
        SavedTensor("LoRA_MLP input (the norm's output)", c * h),
        SavedTensor("LoRA_MLP gate and up outputs (e, g)", 2 * c * f),
    ]


UNSLOTH_BACKWARD_SRC = ("unsloth/kernels/fast_lora.py LoRA_MLP.backward at e3162dc5 (DW = matmul_lora(dY, downW.t(), "
                        "...): a new tokens x f tensor; dX written into X); unsloth_zoo gradient_checkpointing.py "
                        "Unsloth_Offloaded_Gradient_Checkpointer.backward ((output,) = forward_function(hidden_states); "
                        "torch.autograd.backward(output, dY))")


def unsloth_backward_working_set(arch: Architecture, regime: Regime) -> tuple[int, str]:
    """Bytes per token that one layer's backward adds, under Unsloth's checkpointer and kernels, to the
    layer's saved tensors at its peak, the start of ``LoRA_MLP.backward`` (every saved tensor is still
    alive): the down projection's input gradient ``DW`` (tokens x f, c bytes; SwiGLU's backward then
    overwrites DW, e and g in place), the layer output's gradient ``dY`` and the recomputed ``output``,
    which the checkpointer holds through ``torch.autograd.backward(output, dY)`` (tokens x h each).
    The attention's backward comes later, after the MLP's saved tensors (X, e, g: h + 2f) are freed,
    and needs less. Returns (bytes per token, the formula in words)."""
    h, f, c = arch.hidden_size, arch.intermediate_size, regime.compute
    return c * (f + 2 * h), f"DW (f={f:,}) + dY and the recomputed layer output (2 x h={h:,}), x {c} B"
