"""Inference: KV cache, the prefill activation peak, and vLLM's KV capacity on a card.

Sources:
- KV cache: 2 (K and V) x layers x KV heads x head_dim x bytes x tokens x sequences
  (Pope et al. 2022, "Efficiently Scaling Transformer Inference", section 2.2); grouped-query
  attention stores kv < a heads (Ainslie et al. 2023, GQA, section 2). Layers with a sliding
  window keep at most ``sliding_window`` tokens (Mistral 7B paper, Jiang et al. 2023, section 2).
- Tensor parallelism splits the KV heads over t GPUs; with t > kv each GPU keeps one
  replicated KV head (vLLM ``ModelConfig.get_num_kv_heads``: ``max(1, kv // t)``).
- vLLM (Kwon et al. 2023, PagedAttention; docs "Engine arguments"): the engine may use
  ``gpu_memory_utilization`` of the card's total memory; after the weights and a profiled
  activation peak, the rest becomes KV blocks of 16 tokens. How many blocks one request takes
  (whole blocks per layer; sliding-window layers hold the window plus one chunk of batched tokens)
  is :class:`planner.memory.vllm.SequenceKv`, which an ``engine: vllm`` estimate uses for its KV cache.
"""

from __future__ import annotations

from planner.model.architecture import Architecture

KV_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}
VLLM_BLOCK_TOKENS = 16
KV_SRC = "Pope et al. 2022, sec. 2.2; GQA, Ainslie et al. 2023"


def kv_heads_per_gpu(arch: Architecture, tp: int) -> int:
    """KV heads one GPU stores under tensor parallelism t (replicated when t > kv, as vLLM does)."""
    return max(1, arch.num_key_value_heads // tp)


def kv_bytes_per_token(arch: Architecture, kv_dtype: str, tp: int = 1, engine: str = "hf") -> int:
    """KV cache bytes per token of one sequence, all layers, per GPU: 2 x L x kv x d x bytes, or
    what each layer caches instead (:meth:`Architecture.kv_values_per_token_layer`: MLA's latent,
    Falcon-40B's broadcast heads under Transformers).

    Llama-3.1-8B in bf16: 2 x 32 x 8 x 128 x 2 = 131,072 B. DeepSeek-V3 (MLA): 61 x (512 + 64) x
    2 = 70,272 B.
    """
    return arch.kv_cache_layers * arch.kv_values_per_token_layer(engine, tp) * KV_BYTES[kv_dtype]


def kv_layout_text(arch: Architecture, engine: str = "hf", tp: int = 1) -> str:
    """What one layer caches per token, in words with the numbers (for formulas)."""
    if arch.is_mla:
        return (f"MLA latent (kv_lora_rank {arch.kv_lora_rank} + qk_rope_head_dim {arch.qk_rope_head_dim}, "
                f"whole on every GPU)")
    if arch.generic:
        return f"{arch.kv_values_per_token_layer(engine, tp):,} K and V values ({arch.extra.get('_kv_source', '')})"
    kvh = max(1, (arch.hf_kv_heads if engine == "hf" and arch.hf_kv_heads else arch.num_key_value_heads) // tp)
    text = f"2 x kv_heads {kvh} x head_dim {arch.head_dim}"
    if engine == "hf" and arch.hf_kv_heads:
        text += " (Transformers' Falcon caches every query head's K and V)"
    return text


def kv_cache_bytes(arch: Architecture, *, kv_dtype: str, context: int, concurrency: int, tp: int = 1,
                   sliding_window: bool = True, chunk: int = 1, engine: str = "hf") -> tuple[int, str]:
    """KV cache bytes per GPU for ``concurrency`` sequences of ``context`` tokens each.

    Args:
        sliding_window: honour the model's sliding window (layers with a window keep at most
            ``arch.sliding_window`` tokens).
        chunk: the most tokens one forward pass adds to a sequence (the prefill chunk). Transformers'
            sliding-window cache layer (cache_utils.py ``DynamicSlidingWindowLayer.update``) keeps
            a view of the last window - 1 tokens of the concatenation of its past and the new
            tokens, so the storage it holds is min(context, window - 1 + chunk) tokens: the whole
            prompt after an unchunked prefill, the window during decoding (chunk 1).

        engine: 'hf' (what Transformers caches) or 'vllm'.

    Returns:
        (bytes, formula text).
    """
    per_layer_token = arch.kv_values_per_token_layer(engine, tp) * KV_BYTES[kv_dtype]
    L = arch.kv_cache_layers
    wl = min(arch.sliding_window_layers, L) if (sliding_window and arch.sliding_window) else 0
    full_layers = L - wl
    window_tokens = min(context, (arch.sliding_window - 1 + max(chunk, 1)) if arch.sliding_window else context)
    total = per_layer_token * concurrency * (full_layers * context + wl * window_tokens)
    text = f"{kv_layout_text(arch, engine, tp)} x {KV_BYTES[kv_dtype]} B ({kv_dtype}) x {concurrency} seq x "
    if wl:
        text += f"({full_layers} layers x {context:,} + {wl} window layers x {window_tokens:,}) tokens"
    else:
        text += f"{L} layers x {context:,} tokens"
    if tp > 1:
        text += f" (per GPU, t={tp})"
    return total, text


#: Live MLP-width tensors at the peak of one MLP forward without autograd, by activation:
#: gated MLPs hold act(gate), up and their product; Transformers' gelu_new formula holds its
#: input, 0.5 x input and two temporaries of the tanh chain, then the product.
MLP_INFERENCE_TENSORS = {"gelu_new": 4, "gelu_fast": 4}


def moe_block_bytes(arch: Architecture, *, tokens: int, compute_bytes: int, tp: int = 1,
                    engine: str = "hf") -> tuple[int, str]:
    """Peak working set of one MoE block's forward over ``tokens`` tokens, without autograd, per GPU.

    With k = ``num_experts_per_tok``, S = k x tokens routed rows, f the expert width per GPU
    (f / tp) and c the compute bytes:

    - ``hf``: Transformers 5's grouped-matmul experts (``integrations/moe.py``,
      ``grouped_mm_experts_forward``, the default ``experts_implementation``) gather the tokens into
      S rows (c.S.h, alive to the end), then hold the gate/up output (2f), act(gate) and the product
      (4.c.S.f at once; GPT-OSS's clamped SwiGLU adds the clamped gate and up, and up + 1: 7.c.S.f),
      then the down output and the product with the routing weights and its unsorted copy
      (3.c.S.h): c.S.h + max(4.c.S.f, c.S.(f + h), 3.c.S.h).
    - ``vllm``: vLLM's ``fused_experts`` keeps intermediate caches of T x k x 2f, T x k x f and
      T x k x h (``fused_moe.py``): c.S.(3f + h).

    Both add the router's logits (c) and fp32 probabilities per token and expert, and the int64
    expert ids, sort order and its inverse per routed row.
    """
    h, e, k = arch.hidden_size, arch.num_local_experts, arch.num_experts_per_tok
    c = compute_bytes
    f = -(-arch.intermediate_size // tp)
    S = k * tokens
    router = tokens * e * (c + 4) + 3 * 8 * S
    if engine == "vllm":
        body = c * S * (3 * f + h)
        text = f"{c} B x k={k} x {tokens:,} tokens x (3 x f={f:,} + h={h:,}) fused-MoE caches"
    else:
        n_f = 7 if arch.clamped_swiglu else 4
        body = c * S * h + max(n_f * c * S * f, c * S * (f + h), 3 * c * S * h)
        text = (f"{c} B x k={k} x {tokens:,} tokens x (h={h:,} gathered + max({n_f} x f={f:,}, f + h, 3 x h)) "
                "grouped experts")
    return body + router, text + f" + router {tokens:,} x {e} experts"


def prefill_peak_bytes(arch: Architecture, *, tokens: int, sequences: int, keys: int, attention: str,
                       compute_bytes: int = 2, tp: int = 1, engine: str = "hf",
                       cpu_kernels: bool = False) -> tuple[int, str]:
    """Transient activations of one forward pass over ``tokens`` prompt tokens, per GPU.

    Nothing is saved for backward at inference, so the peak is one layer's working set: the
    residual stream and its normalised copy, then the larger of the MLP intermediates and the
    attention working set. Eager attention materialises the scores (c bytes), converts them to
    fp32 for the softmax (4 bytes, unless they are fp32 already) and writes the fp32 softmax
    output (4 bytes): (c + 4 + 4) bytes per score for 16-bit, 8 for fp32 (ATen ``softmax`` with a
    dtype argument converts its input first). The attention masks live through the whole forward:
    eager's additive mask(s) of c bytes per score, SDPA's boolean mask (1 B) when a sliding window is
    shorter than the keys. An MoE block's working set is
    :func:`moe_block_bytes` for the engine. A model with dense and MoE layers takes the larger of
    its two kinds of layer.

    Layouts with more (Transformers 5.24 modeling files): a parallel block (phi, GPT-J, Cohere,
    Falcon) keeps the attention output through its MLP, and Falcon-40B's second LayerNorm output
    through both; BLOOM keeps its ALiBi scores beside the masked scores and the previous layer's
    returned probabilities; Falcon materialises a boolean s x s mask for SDPA; MLA (DeepSeek)
    keeps the query latent's output, the rotated query part, the query, the compressed KV, the
    kv_b_proj output and the key (:func:`mla_attention_bytes`); SDPA's math path (Falcon's
    multi-query layout on any device, MLA on the CPU) runs in fp32 (:func:`math_sdpa_bytes`).

    Args:
        tokens: tokens processed in one forward pass (all sequences' prompts, or a chunk of each).
        sequences: how many sequences share those tokens (each has tokens / sequences queries).
        keys: keys each query attends to (the sequence so far); eager attention's score matrices
            are sequences x heads x (tokens / sequences) x keys.
        engine: 'hf' (Transformers) or 'vllm' (its fused MoE kernel; dense models are the same).
        cpu_kernels: size the kernels the CPU runs (the validation's CPU runs): MLA's SDPA takes
            the math path there.
    """
    if arch.generic:
        from planner.model.generic import decoder_proxy

        arch = decoder_proxy(arch)
    best: tuple[int, str] | None = None
    for _, g in arch.layer_groups():
        one = _prefill_layer(g, tokens=tokens, sequences=sequences, keys=keys, attention=attention,
                             compute_bytes=compute_bytes, tp=tp, engine=engine, cpu_kernels=cpu_kernels)
        if best is None or one[0] > best[0]:
            best = one
    assert best is not None
    return best


def math_sdpa_bytes(arch: Architecture, *, tokens: int, scores: int, compute_bytes: int, tp: int = 1) -> int:
    """Working set of SDPA's math path (ATen ``_scaled_dot_product_attention_math``) over ``tokens``
    queries with ``scores`` (query, key) pairs per head, per GPU: it upcasts 16-bit inputs to fp32
    (PyTorch keeps math-path attention in fp32 unless ``allow_fp16_bf16_reduction_math_sdp``) and
    holds the fp32 query, the scaled query, the key and the value (the key and value expanded to
    every head for Falcon's multi-query layout, which passes one key/value head for all), an fp32
    causal bias of s x s, the fp32 scores and the masked scores or softmax output: 8 B per score."""
    a_tp = -(-arch.num_attention_heads // tp)
    q = arch.q_dim // tp
    k = q if arch.is_mla else -(-arch.num_key_value_heads // tp) * arch.head_dim
    v = arch.o_dim // tp if arch.is_mla else k
    return 4 * tokens * (2 * q + k + v) + 8 * a_tp * scores


def mla_attention_bytes(arch: Architecture, *, tokens: int, compute_bytes: int, tp: int = 1) -> int:
    """Tensors Transformers' MLA (DeepseekV3Attention.forward) holds while it attends, per GPU:
    the query projection's output and the rotated query part and the query they are joined into
    (a x (qk_nope + qk_rope), a x qk_rope), the compressed KV (kv_lora_rank + qk_rope), kv_b_proj's
    output (a x (qk_nope + v_head_dim); the value is a view of it) and the key (new_empty, a x
    (qk_nope + qk_rope)), and the attention output (a x v_head_dim)."""
    c = compute_bytes
    a = -(-arch.num_attention_heads // tp)
    nope, rope, v = arch.qk_nope_head_dim, arch.qk_rope_head_dim, arch.v_head_dim
    qd = a * (nope + rope)
    return c * tokens * (3 * qd + a * rope + arch.kv_lora_rank + rope + a * (nope + v) + a * v)


def _prefill_layer(arch: Architecture, *, tokens: int, sequences: int, keys: int, attention: str,
                   compute_bytes: int, tp: int, engine: str, cpu_kernels: bool) -> tuple[int, str]:
    """:func:`prefill_peak_bytes` for a uniform architecture (one kind of layer)."""
    h, f, a = arch.hidden_size, arch.intermediate_size, arch.num_attention_heads
    c = compute_bytes
    f_tp = -(-f // tp)
    a_tp = -(-a // tp)
    resid = 3 * c * h * tokens  # residual, normalised input, layer output
    gpt_block = arch.learned_positions > 0
    if gpt_block:
        # GPT-2-style models (modeling_gpt2.py, modeling_gpt_bigcode.py): the model keeps the
        # token embeddings through the forward (the residual stream starts as their sum with the
        # position embeddings, one row per query position).
        resid += c * h * tokens + c * h * -(-tokens // max(1, sequences))
    if arch.parallel_block and arch.norms_per_layer == 2:
        resid += c * h * tokens  # Falcon-40B: ln_mlp's output, computed with ln_attn's before attention
    seqs = max(1, sequences)
    scores = seqs * -(-tokens // seqs) * keys
    if arch.is_moe:
        mlp, mlp_text = moe_block_bytes(arch, tokens=tokens, compute_bytes=c, tp=tp, engine=engine)
        sf = -(-arch.shared_expert_intermediate_size // tp)
        if sf:
            # A shared expert: Qwen2-MoE runs it first and keeps its output through the routed
            # experts; DeepSeek runs it after them, beside the experts' output.
            shared = 3 * c * sf * tokens
            mlp = max(mlp + c * h * tokens, c * h * tokens + shared)
            mlp_text += f" + shared expert (3 x {c} B x {sf:,}, its output or the experts' {c} B x h)"
    else:
        # A fused gate_up projection (phi3) keeps its 2f output while act(gate) and the product
        # are written: 4f; separate gate and up projections hold act(gate), up and the product: 3f.
        n_mlp = (4 if arch.fused_gate_up else 3) if arch.gated_mlp else MLP_INFERENCE_TENSORS.get(arch.hidden_act, 2)
        mlp = n_mlp * c * f_tp * tokens
        mlp_text = f"MLP {n_mlp} x {c} B x f={f_tp:,}"
        if gpt_block:
            # ... and the block keeps the attention output in a local through its MLP, with eager
            # attention's returned probabilities (heads x queries x keys, in the compute dtype).
            mlp += c * h * tokens
            mlp_text += f" + the attention output {c} B x h"
            if attention == "eager":
                mlp += a_tp * scores * c
                mlp_text += f" + the returned attention probabilities {c} B per score"
    if arch.parallel_block:
        mlp += c * h * tokens  # the attention output, added to the MLP's after it
        mlp_text += f" + the attention output {c} B x h (parallel block)"
    # BLOOM and Falcon (eager) return each layer's probabilities from its block, and the model's
    # loop holds them until the next block returns (modeling_bloom.py BloomModel.forward,
    # modeling_falcon.py FalconModel.forward): through the MLP, and through the next layer's attention.
    keeps_probs = attention == "eager" and (arch.alibi or arch.model_type == "falcon")
    if keeps_probs:
        mlp += a_tp * scores * c
        mlp_text += f" + the layer's returned probabilities {c} B per score"
    # GPT-OSS's softmax (with its sink column) stays in the scores' dtype: the scores, the scores
    # with the sink appended and the softmax output are live at once, 3 c bytes per score.
    # GPT-2's softmax runs in the scores' dtype (modeling_gpt2.py eager_attention_forward): its
    # input and output, 2 c bytes per score.
    per_score = 3 * c if arch.attention_sinks else 2 * c if arch.softmax_in_score_dtype else (c + 4 + 4 if c != 4 else 8)
    if keeps_probs:
        # BLOOM (BloomAttention) keeps its baddbmm scores (with the ALiBi bias) referenced beside the
        # masked scores, Falcon its scores beside the masked scores; and the previous layer's
        # probabilities are alive: 2 c more per score.
        per_score += 2 * c
    falcon_mq = arch.model_type == "falcon" and arch.num_key_value_heads < a and not arch.hf_kv_heads
    math_path = attention == "sdpa" and (falcon_mq or (arch.is_mla and cpu_kernels))
    if arch.is_mla:
        attn = mla_attention_bytes(arch, tokens=tokens, compute_bytes=c, tp=tp)
    elif arch.alibi:
        # BLOOM: the fused query_key_value output and the query's reshape copy (the key and value are
        # reshaped views of the cache's tensors).
        attn = c * (2 * arch.q_dim + 2 * arch.kv_dim) // tp * tokens
    else:
        attn = c * (arch.q_dim + 2 * arch.kv_dim) // tp * tokens * 2
    masks = 0
    if math_path:
        attn += math_sdpa_bytes(arch, tokens=tokens, scores=scores, compute_bytes=c, tp=tp)
        masks = 4 * -(-tokens // seqs) * keys  # the math path's fp32 causal bias, one per (query, key)
    elif attention == "eager":
        attn += a_tp * scores * per_score
        # Eager attention takes an additive 4-D mask in the compute dtype (Transformers
        # masking_utils, eager_mask), alive through the forward: one for full attention and one
        # for sliding-window layers when the model has both.
        n_masks = 2 if arch.sliding_window and arch.sliding_window_layers < arch.num_hidden_layers else 1
        masks = n_masks * scores * c
    elif attention == "sdpa" and arch.sliding_window and arch.sliding_window_layers and keys > arch.sliding_window:
        # SDPA runs full-attention layers with is_causal and no mask, but a window shorter than
        # the keys needs a boolean 4-D mask (masking_utils, sdpa_mask): 1 B per score.
        masks = scores
    if arch.model_type == "falcon" and attention == "sdpa":
        # FalconModel always materialises its causal mask (for ALiBi's sake): a boolean query x key mask.
        masks += -(-tokens // seqs) * keys
    peak = resid + masks + max(mlp, attn)
    what = "MLA tensors" if arch.is_mla else "attention q/k/v"
    if math_path:
        what += " + SDPA math path (fp32)"
    elif attention == "eager":
        what += f" + scores {per_score} B x {sequences} seq x heads x queries x {keys:,} keys"
    if arch.is_moe:
        text = f"{tokens:,} tokens x 3 x {c} B x h={h:,} residual + max(MoE: {mlp_text}, {what})"
    else:
        text = f"{tokens:,} tokens x (3 x {c} B x h={h:,} residual + max({mlp_text}, {what}))"
    return peak, text


def logits_inference_bytes(arch: Architecture, *, sequences: int) -> int:
    """fp32 logits of the last token of each sequence (generate keeps only the last position)."""
    return sequences * arch.vocab_size * 4
