"""What one token costs a transformer layer: GEMM weights, attention FLOPs and memory-bound bytes.

The counts follow the modules of planner.model.layout (the same modules the memory model sizes)
and the kernels each training stack runs:

- GEMM weights per token: every linear weight a token multiplies (MoE: its k routed experts,
  the shared experts, the router), plus the output head. A matmul of a token with a weight of W
  values costs 2 x W FLOPs forward, 2 x W for the input gradient and 2 x W for the weight gradient
  (Kaplan et al. 2020, section 2.1; Narayanan et al. 2021, section 5.1).
- Attention scores: QK^T and AV cost 2 x 2 x s x d FLOPs per token and layer forward at s keys
  (d = heads x head_dim); a causal FlashAttention kernel skips the masked half (s/2 keys on
  average); eager attention computes the full s x s matrix. Backward: FlashAttention-2 runs five
  matmuls to the forward's two (it recomputes the scores: Dao 2023, algorithm 2), 2.5 x the
  forward; eager autograd 2 x.
- Memory-bound bytes: the elementwise kernels (norms, rotary embedding, activation, residual adds,
  layout copies) read and write activations. Counted per op from the code the stack runs: PyTorch
  eager (Transformers' LlamaRMSNorm casts to fp32, squares, means, scales, casts back and
  multiplies by the weight: seven kernels; apply_rotary_pos_emb: rotate_half's neg and cat, two
  multiplies and an add; the SiLU-gate product: two kernels), or fused (torch.compile, Unsloth's
  Triton kernels, Transformer Engine: one kernel per norm, rotary, gate product, reading inputs and
  writing outputs once). Autograd's backward of each runs about twice the forward's traffic.

Importing this module does no work.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenCosts:
    """Per-token costs of a model's layers (all layers and the head, one GPU's share is not applied).

    Attributes:
        gemm_weights: linear weights a token multiplies in the layers (MoE: active experts).
        head_weights: the output head's weights (vocab x hidden).
        attn_flops_fwd: attention-score FLOPs per token forward at the workload's sequence length
            (causal kernels: half the keys).
        elementwise_bytes_fwd, elementwise_bytes_bwd: memory-bound bytes per token, forward and
            backward, all layers.
        loss_bytes: bytes per token of the loss over the vocabulary (forward and backward).
        ops_fwd, ops_bwd: host-launched operators per micro-batch, all layers (eager counts).
        expert_rows_share: MoE: share of a micro-batch's tokens each routed expert's GEMM gets
            (k / E); 1 for a dense model.
    """

    gemm_weights: float
    head_weights: float
    attn_flops_fwd: float
    elementwise_bytes_fwd: float
    elementwise_bytes_bwd: float
    loss_bytes: float
    ops_fwd: int
    ops_bwd: int
    expert_rows_share: float = 1.0


def gemm_weights(arch) -> float:
    """Linear weights one token multiplies in the layers: dense modules in full, routed experts at
    k of E (``num_experts_per_tok`` / ``num_local_experts``)."""
    total = 0.0
    for m in arch.linear_modules():
        w = m.weight_params * m.layers
        if m.part == "expert":
            w *= arch.num_experts_per_tok / max(arch.num_local_experts, 1)
        total += w
    return total


def token_costs(arch, *, seq_len: int, attention: str, fused: bool, act_bytes: int = 2) -> TokenCosts:
    """The per-token costs of ``arch`` at ``seq_len`` tokens per sequence.

    Args:
        arch: a planner.model.layout.Architecture.
        seq_len: tokens per sequence (training) or the context attended (prefill: the prompt).
        attention: 'eager' (full score matrix) or 'sdpa' / 'flash' (causal FlashAttention).
        fused: the stack fuses elementwise ops (torch.compile, Unsloth, Transformer Engine).
        act_bytes: bytes per activation value (2 for 16-bit).

    Returns:
        :class:`TokenCosts`.
    """
    h = arch.hidden_size
    L = arch.num_hidden_layers
    qd = arch.num_attention_heads * arch.head_dim
    kd = max(1, arch.num_key_value_heads) * arch.head_dim
    f = arch.intermediate_size
    if arch.is_moe:
        f = arch.intermediate_size * arch.num_experts_per_tok + arch.shared_expert_intermediate_size
    causal_keys = seq_len if attention == "eager" else (seq_len + 1) / 2
    window = arch.sliding_window
    # score FLOPs of every layer; sliding-window layers attend at most their window
    full_layers = L - (arch.sliding_window_layers if window else 0)
    win_keys = min(causal_keys, window or causal_keys)
    attn = 4.0 * qd * (full_layers * causal_keys + (L - full_layers) * win_keys)
    b = act_bytes
    if fused:
        norm = (2 * b) * h  # read and write once
        rope = 2 * b * (qd + kd)
        act = (3 * b) * f if arch.gated_mlp else 2 * b * f
        resid = 0.0  # fused into the norms
        copies = 2 * b * qd
        ops_fwd_layer, ops_bwd_layer = 12, 20
    else:
        # eager RMSNorm: to(fp32) r b w 4, pow r4 w4, mean r4, mul r4 w4, to(dtype) r4 wb, weight mul rb wb
        norm = (b + 4 + 8 + 4 + 8 + 4 + b + 2 * b) * h
        rope = 10 * b * (qd + kd)  # neg, cat, two muls, add on q and k
        act = (5 * b) * f if arch.gated_mlp else 2 * b * f  # silu r w; mul r2 w
        resid = 3 * b * h  # read two, write one
        copies = 2 * b * qd  # attention output transpose(1, 2).contiguous()
        ops_fwd_layer, ops_bwd_layer = 36, 64
    per_layer_fwd = arch.norms_per_layer * norm + rope + act + 2 * resid + copies
    vocab = arch.vocab_size
    loss = (8 if fused else 28) * vocab  # logits upcast, log_softmax, its backward, cast back (bytes/token)
    head = float(vocab * h)
    share = arch.num_experts_per_tok / arch.num_local_experts if arch.is_moe else 1.0
    return TokenCosts(gemm_weights=gemm_weights(arch), head_weights=head, attn_flops_fwd=attn,
                      elementwise_bytes_fwd=per_layer_fwd * L, elementwise_bytes_bwd=2.0 * per_layer_fwd * L,
                      loss_bytes=float(loss), ops_fwd=ops_fwd_layer * L, ops_bwd=ops_bwd_layer * L,
                      expert_rows_share=share)


def ggml_activation_bytes(arch, *, quantized: bool) -> float:
    """Memory-bound bytes per prompt token of llama.cpp's layers, all layers: ggml keeps activations
    in F32 (4 B) between its kernels (ggml-org/llama.cpp src/llama-graph.cpp builds the graph of
    F32 tensors; ggml-cuda's matrix products write F32 results).

    Per layer and token, in F32 values: two RMS norms and their weight multiplies (read and write h
    each: 8 h), rotary on q and k (2 (q + k)), the KV-cache copy (read 2 k, write 2 k in F16), two
    residual adds (6 h), the gated activation (3 f), every matrix product's output written and read
    back by the next op (2 x outputs), and for quantized weights each product's input converted to
    q8_1 for MMQ (read F32, write about 1.1 B per value).
    """
    h = arch.hidden_size
    qd = arch.num_attention_heads * arch.head_dim
    kd = max(1, arch.num_key_value_heads) * arch.head_dim
    f = arch.intermediate_size * (arch.num_experts_per_tok if arch.is_moe else 1)
    outs = qd + 2 * kd + h + (2 * f if arch.gated_mlp else f) + h
    values = 8 * h + 2 * (qd + kd) + 3 * kd + 6 * h + (3 * f if arch.gated_mlp else 2 * f) + 2 * outs
    per_layer = 4.0 * values
    if quantized:
        inputs = 3 * h + qd + (2 * h if arch.gated_mlp else h) + f
        per_layer += (4.0 + 1.125) * inputs
    return per_layer * arch.num_hidden_layers


#: Compute nodes (kernels before any backend fusion) of one decoder layer in llama.cpp's ggml graph
#: at decode, read from the graph llama.cpp builds (GGML_SCHED_DEBUG=2 listing of the reserve graph,
#: llama.cpp as vendored by llama-cpp-python 0.3.36; views, reshapes and permutes launch nothing and
#: are not counted). A Llama layer: attention 15 (RMS norm and its weight multiply, the q, k and v
#: products, two ropes, two KV-cache set_rows, KQ, soft_max, KQV, the cont of its permute, the output
#: product, the residual add) and MLP 7 (norm and multiply, gate and up products, swiglu, down, add).
#: An MLA layer (src/models/deepseek2.cpp, the per-head path, counted on the DeepSeek-V2-Lite shape):
#: attention 20 (the q and kv_a products, two norms, kv_b, the V cont, two concats, the k_pe repeat
#: beside the ropes, cache writes and attention). An MoE block (src/llama-graph.cpp ``build_moe_ffn``):
#: norm and multiply, the router product, its soft_max (or sigmoid), argsort, get_rows of the weights,
#: the up, gate and down ``mul_mat_id``, swiglu, the weights' multiply, k - 1 adds summing the k
#: experts' views and the residual add: 12 + (k - 1); renormalised top-k weights (norm_topk_prob) add
#: sum_rows, clamp and div (3); shared experts add gate, up, swiglu, down and their add (5). The
#: DeepSeek-V2-Lite listing has 42 nodes in an MoE layer (20 + 12 + 5 + 5) and 27 in its dense one.
GGML_ATTN_NODES, GGML_MLA_ATTN_NODES, GGML_MLP_NODES = 15, 20, 7


def ggml_moe_block_nodes(arch) -> int:
    """Compute nodes of one MoE block of llama.cpp's graph (:data:`GGML_ATTN_NODES` says which)."""
    k = arch.num_experts_per_tok
    renorm = bool(arch.extra.get("norm_topk_prob", arch.model_type == "mixtral"))
    return 12 + (k - 1) + (3 if renorm else 0) + (5 if arch.shared_expert_intermediate_size else 0)


def ggml_kernel_scale(arch) -> float:
    """Compute nodes of the model's llama.cpp decode graph over a Llama layer's, per layer on average.

    The engine's per-layer kernel count (planner.speed.inference.LAYER_KERNELS, a Llama layer after
    ggml-cuda's fusions) is scaled by it, taking fusion to remove the same share of every layer's
    nodes. 1 for a dense model with standard attention; DeepSeek-V2-Lite: (27 + 26 x 42) / 27 / 22
    = 1.88.
    """
    attn = GGML_MLA_ATTN_NODES if arch.is_mla else GGML_ATTN_NODES
    L = arch.num_hidden_layers
    if not arch.is_moe:
        return (attn + GGML_MLP_NODES) / (GGML_ATTN_NODES + GGML_MLP_NODES)
    dense = min(arch.dense_layers, L)
    nodes = dense * (attn + GGML_MLP_NODES) + (L - dense) * (attn + ggml_moe_block_nodes(arch))
    return nodes / L / (GGML_ATTN_NODES + GGML_MLP_NODES)


#: Kernels vLLM's decode step launches for one MoE block on the Triton fused_moe path, in place of
#: the dense MLP's 3 (gate-up GEMM, SiLU-and-mul, down GEMM; planner.speed.inference.LAYER_KERNELS).
#: Read from vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py (commit 000d1458):
#: the router GEMM (the model's ``gate`` ReplicatedLinear), ``fused_topk``'s cast of the router
#: logits to float and its ``topk_softmax`` kernel, ``moe_align_block_size`` (at least its align
#: kernel), then ``fused_experts_impl``: the grouped w13 GEMM (``invoke_fused_moe_kernel``),
#: ``silu_and_mul``, the grouped w2 GEMM and ``ops.moe_sum``: 8. Shared experts (DeepSeek-V2/V3,
#: Qwen2-MoE) run as a dense MLP beside them (gate-up GEMM, SiLU-and-mul, down GEMM) and their
#: output's add: 4 more. Buffer fills the align step may add are not counted.
VLLM_MLP_KERNELS, VLLM_MOE_BLOCK_KERNELS, VLLM_SHARED_EXPERT_KERNELS = 3, 8, 4


def vllm_moe_extra_kernels(arch) -> float:
    """Kernels an average decoder layer of ``arch`` launches in vLLM beyond a dense Llama layer's
    (:data:`VLLM_MOE_BLOCK_KERNELS`): 0 for a dense model; for an MoE model the MoE block's count
    (plus the shared experts') less the dense MLP's, over the MoE layers' share of the layers (the
    first ``dense_layers`` of DeepSeek-V2/V3 are dense). Qwen3-30B-A3B (48 MoE layers, no shared
    experts): 8 - 3 = 5 per layer.
    """
    if not arch.is_moe:
        return 0.0
    L = arch.num_hidden_layers
    moe_layers = L - min(arch.dense_layers, L)
    block = VLLM_MOE_BLOCK_KERNELS + (VLLM_SHARED_EXPERT_KERNELS if arch.shared_expert_intermediate_size else 0)
    return (block - VLLM_MLP_KERNELS) * moe_layers / L
