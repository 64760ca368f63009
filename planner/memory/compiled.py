"""Activations one decoder layer saves under ``torch.compile`` (AOTAutograd's partitioner)."""

from __future__ import annotations

from planner.memory.saved import Regime, SavedTensor
from planner.model.architecture import Architecture


COMPILE_SRC = ("torch/_functorch/partitioners.py min_cut_rematerialization_partition (AOTAutograd's default, "
               "inductor's partition_fn); saved set read off its partition of a Llama decoder layer (torch 2.13), "
               "tests/data/validation (compiled runs)")


def compile_not_modelled(arch: Architecture, *, use_dora: bool, base_keeps_inputs: bool) -> str | None:
    """Why :func:`compiled_layer_saved_tensors` does not describe this layer under ``torch.compile``
    (the eager set is used then, an upper bound), or None when it does."""
    if arch.is_moe:
        return "a mixture of experts' routing (data-dependent shapes break the graph)"
    if use_dora:
        return "peft's DoRA (its identity-matrix weight norms)"
    if base_keeps_inputs:
        return "bitsandbytes' custom autograd Functions (a graph break at each quantized linear)"
    if arch.attention_sinks or arch.clamped_swiglu:
        return f"{arch.model_type}'s attention sinks and clamped SwiGLU"
    if arch.generic or arch.is_mla or arch.post_norm or arch.parallel_block or arch.model_type == "cohere":
        return f"{arch.model_type}'s layer layout (the compiled set is read off a Llama-style layer)"
    if arch.qk_norm and arch.qk_norm_kind != "head":
        return f"{arch.model_type}'s query/key norm layout"
    return None


def compiled_layer_saved_tensors(arch: Architecture, regime: Regime, *, attention: str, full: bool,
                                 lora_targets: tuple[str, ...] = (), lora_rank: int = 0, lora_dropout: float = 0.0,
                                 cpu_dropout: bool = False) -> list[SavedTensor]:
    """What one decoder layer saves for backward under ``torch.compile``, per token.

    AOTAutograd traces forward and backward into one joint graph, and its default partitioner
    (``min_cut_rematerialization_partition``, the one inductor uses) picks the cheapest set of forward
    values to save, in bytes, from which backward can recompute the rest: pointwise ops (casts, the
    norm's normalisation, RoPE, the activation function, the gated product) may be recomputed, matmuls
    and attention kernels not. Run on a Llama decoder layer (Transformers' and torchtune's layout alike;
    bf16, full fine-tune and frozen base, MHA and GQA; torch 2.13, identity compilers on the CPU), it
    saves, per token:

    - the layer input (to recompute the first norm) and each norm's rstd (fp32; LayerNorm: mean and
      rstd); a norm's output too when a matmul it feeds trains (full fine-tune, or LoRA's ``lora_A``);
    - the rotated query and key, the value, SDPA's output and its fp32 log-sum-exp (eager attention:
      the probabilities as well, heads x s per token, in the compute dtype);
    - the attention projection's output (with the layer input it recomputes the second norm's input);
    - the MLP's gate and up projection outputs (a plain MLP: its first projection's output), and their
      product when the down projection trains;
    - LoRA: each adapter's ``lora_A`` output (r values) and dropout's 1-byte mask (the dropped-out
      input is recomputed from it).

    Unlike eager code it keeps no fp32 copy of a norm's input, no activation output and no product
    whose weight is frozen. Everything in the compute dtype c, the residual stream in r.
    """
    h, q, k, f = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size
    a = arch.num_attention_heads
    c, r = regime.compute, regime.residual
    mods = {m.name: m for m in arch.linear_modules()}
    stats = 8 if arch.layer_norm else 4
    out = [SavedTensor("layer input (to recompute the norms)", r * h)]
    qkv = [n for n in ("c_attn", "query_key_value", "qkv_proj", "q_proj", "k_proj", "v_proj") if n in mods]
    o_name = next(n for n in ("o_proj", "out_proj", "c_proj", "dense") if n in mods)
    if arch.fused_gate_up or (arch.gated_mlp and "gate_up_proj" in mods):
        up = ["gate_up_proj"]
    elif arch.gated_mlp:
        up = ["gate_proj", "up_proj"]
    else:
        up = [n for n in ("c_fc", "dense_h_to_4h", "up_proj") if n in mods]
    down = next(n for n in ("down_proj", "w2", "c_proj", "dense_4h_to_h") if n in mods and (n != "c_proj" or arch.layer_norm))

    def norm(label: str, consumers: list[str]) -> None:
        out.append(SavedTensor(f"{label} statistics (fp32)", stats))
        if full or any(n in lora_targets for n in consumers):
            out.append(SavedTensor(f"{label} output (a trainable matmul's input)", c * h))

    def lora(names: list[str], width: int) -> None:
        for n in names:
            if n not in lora_targets:
                continue
            out.append(SavedTensor(f"LoRA {n} A output", c * lora_rank))
            if lora_dropout > 0:
                mb = c if cpu_dropout else 1
                out.append(SavedTensor(f"LoRA {n} dropout mask ({mb} B)", mb * width))

    norm("attention norm", qkv)
    lora(qkv, h)
    if arch.qk_norm:
        out.append(SavedTensor("query and key norm statistics (fp32, per head)", 4 * (a + arch.num_key_value_heads)))
    out.append(SavedTensor("query and key after RoPE, value", c * (q + 2 * k)))
    if attention == "eager":
        out.append(SavedTensor(f"attention probabilities ({c} B)", c * a, quadratic=True))
    else:
        out.append(SavedTensor("SDPA log-sum-exp (fp32)", 4 * a))
    out.append(SavedTensor("attention output (SDPA's, the projection's input)", c * q))
    lora([o_name], q)
    out.append(SavedTensor(f"{o_name} output (recomputes the MLP norm's input)", r * h))
    if arch.norms_per_layer == 4:
        out.append(SavedTensor("post-attention norm statistics (fp32)", stats))
    norm("MLP norm", up)
    lora(up, h)
    width = f * (2 if up == ["gate_up_proj"] else 1)
    if arch.gated_mlp:
        out.append(SavedTensor("MLP gate and up outputs", c * 2 * f if up != ["gate_up_proj"] else c * width))
    else:
        out.append(SavedTensor(f"MLP {up[0] if up else 'up'} output (the activation's input)", c * f))
    if full or down in lora_targets:
        out.append(SavedTensor(f"{down} input (the MLP product)", c * f))
    lora([down], f)
    if arch.norms_per_layer == 4:
        out.append(SavedTensor("post-feedforward norm statistics (fp32)", stats))
    return out
