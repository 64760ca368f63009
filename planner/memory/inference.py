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
                       compute_bytes: int = 2, tp: int = 1, engine: str = "hf") -> tuple[int, str]:
    """Transient activations of one forward pass over ``tokens`` prompt tokens, per GPU.

    Nothing is saved for backward at inference, so the peak is one layer's working set: the
    residual stream and its normalised copy, then the larger of the MLP intermediates and the
    attention working set. Eager attention materialises the scores (c bytes), converts them to
    fp32 for the softmax (4 bytes, unless they are fp32 already) and writes the fp32 softmax
    output (4 bytes): (c + 4 + 4) bytes per score for 16-bit, 8 for fp32 (ATen ``softmax`` with a
    dtype argument converts its input first). The attention masks live through the whole forward:
    eager's additive mask(s) of c bytes per score, SDPA's boolean mask (1 B) when a sliding window is
    shorter than the keys. An MoE block's working set is
    :func:`moe_block_bytes` for the engine.

    Args:
        tokens: tokens processed in one forward pass (all sequences' prompts, or a chunk of each).
        sequences: how many sequences share those tokens (each has tokens / sequences queries).
        keys: keys each query attends to (the sequence so far); eager attention's score matrices
            are sequences x heads x (tokens / sequences) x keys.
        engine: 'hf' (Transformers) or 'vllm' (its fused MoE kernel; dense models are the same).
    """
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
    if arch.is_moe:
        mlp, mlp_text = moe_block_bytes(arch, tokens=tokens, compute_bytes=c, tp=tp, engine=engine)
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
                seqs_ = max(1, sequences)
                mlp += a_tp * seqs_ * -(-tokens // seqs_) * keys * c
                mlp_text += f" + the returned attention probabilities {c} B per score"
    attn = c * (arch.q_dim + 2 * arch.kv_dim) // tp * tokens * 2
    # GPT-OSS's softmax (with its sink column) stays in the scores' dtype: the scores, the scores
    # with the sink appended and the softmax output are live at once, 3 c bytes per score.
    # GPT-2's softmax runs in the scores' dtype (modeling_gpt2.py eager_attention_forward): its
    # input and output, 2 c bytes per score.
    per_score = 3 * c if arch.attention_sinks else 2 * c if arch.softmax_in_score_dtype else (c + 4 + 4 if c != 4 else 8)
    seqs = max(1, sequences)
    scores = seqs * -(-tokens // seqs) * keys
    masks = 0
    if attention == "eager":
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
    peak = resid + masks + max(mlp, attn)
    if arch.is_moe:
        text = (f"{tokens:,} tokens x 3 x {c} B x h={h:,} residual + max(MoE: {mlp_text}, "
                f"attention q/k/v{f' + scores {per_score} B x {sequences} seq x heads x queries x {keys:,} keys' if attention == 'eager' else ''})")
    else:
        text = (f"{tokens:,} tokens x (3 x {c} B x h={h:,} residual + max({mlp_text}, "
                f"attention q/k/v{f' + scores {per_score} B x {sequences} seq x heads x queries x {keys:,} keys' if attention == 'eager' else ''}))")
    return peak, text


def logits_inference_bytes(arch: Architecture, *, sequences: int) -> int:
    """fp32 logits of the last token of each sequence (generate keeps only the last position)."""
    return sequences * arch.vocab_size * 4
