"""A card filled to the brim: when the caching allocator's fragmentation can fail a request.

PyTorch's CUDA caching allocator keeps freed blocks cached and splits them to serve smaller
requests; a later request larger than every free block then fails although the free total would
hold it ("CUDA out of memory ... reserved but unallocated", pytorch/pytorch#35901). A transient
tensor (one allocated and freed within every step: the fp32 logits, an MLP's intermediate output,
eager attention scores, the grown KV tensor of a Transformers DynamicCache) is requested again every
step, so once the cache is split it needs one contiguous free block of its size. The planner's need
already holds an allowance for the allocator (planner.memory.overheads.allocator_component); what the
card leaves beyond the planned headroom (the "spare" of a fit check) is the slack for the rest.

Rule (derived, not measured): a plan is at risk when its spare is smaller than the workload's
largest transient allocation, :func:`largest_transient`: then a single split of the cache can leave
no block that large. With ``expandable_segments:True`` in ``PYTORCH_CUDA_ALLOC_CONF`` the allocator
maps more pages onto one segment instead of carving fixed segments (PyTorch docs, CUDA semantics,
"Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF"), which removes most of this fragmentation.
The rule applies to stacks on PyTorch's allocator: not to llama.cpp (its buffers are allocated once,
at start-up) nor to vLLM (its KV pool takes what the card leaves, by gpu_memory_utilization).

No work at import time and no state.
"""

from __future__ import annotations

from planner.model.architecture import Architecture

#: The setting that removes most of the caching allocator's fragmentation (PyTorch >= 2.1).
EXPANDABLE_SEGMENTS = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
FRAGMENTATION_SRC = ("pytorch/pytorch#35901 (OOM with memory reserved but unallocated); PyTorch docs, CUDA semantics: "
                     "PYTORCH_CUDA_ALLOC_CONF expandable_segments")


def largest_transient(arch: Architecture, *, tokens: int, sequences: int, keys: int, compute_bytes: int,
                      attention: str, logits_tokens: int, tp: int = 1, kv_layer_bytes: int = 0) -> tuple[int, str]:
    """The largest single tensor a step allocates and frees again, in bytes, with its name.

    Candidates (per GPU, under tensor parallelism the sharded widths):

    - fp32 logits: ``logits_tokens`` x V x 4 B (Transformers' loss upcasts the whole logits with
      ``logits.float()``; a chunked loss upcasts one chunk; 0 tokens: no logits tensor of note);
    - an MLP's intermediate output: ``tokens`` x n_ff x ``compute_bytes`` (a MoE block's routed
      experts are smaller: the dense width n_ff is taken);
    - eager attention scores: ``sequences`` x heads x (tokens / sequences) x ``keys`` x ``compute_bytes``
      (SDPA and flash attention keep no score matrix);
    - ``kv_layer_bytes``: one layer's K (or V) tensor that Transformers' DynamicCache re-allocates
      with ``torch.cat`` as it grows (inference; 0 for training).

    Args:
        tokens: tokens of one forward pass on this GPU.
        sequences: sequences among them.
        keys: keys each query attends to (the sequence length; the context for inference).
        compute_bytes: bytes per activation value.
        attention: 'eager', 'sdpa' or 'flash'.
        logits_tokens: tokens whose logits are upcast to fp32 at once.
        tp: tensor-parallel degree (the head, the MLP and the heads are split).
        kv_layer_bytes: one layer's K tensor at the full context.

    Returns:
        (bytes, 'what it is: the arithmetic').
    """
    V, f, a = arch.vocab_size, arch.intermediate_size, arch.num_attention_heads
    cands = [
        (logits_tokens * -(-V // tp) * 4, f"fp32 logits {logits_tokens:,} tokens x V {V:,}{f' / tp {tp}' if tp > 1 else ''} x 4 B"),
        (tokens * -(-f // tp) * compute_bytes, f"MLP intermediate {tokens:,} tokens x n_ff {f:,}"
         f"{f' / tp {tp}' if tp > 1 else ''} x {compute_bytes} B"),
    ]
    if attention == "eager":
        per_seq = max(tokens // max(sequences, 1), 1)
        heads = max(a // tp, 1)
        cands.append((sequences * heads * per_seq * keys * compute_bytes,
                      f"eager attention scores {sequences:,} seq x {heads} heads x {per_seq:,} x {keys:,} x "
                      f"{compute_bytes} B"))
    if kv_layer_bytes:
        cands.append((kv_layer_bytes, f"one layer's K tensor re-allocated as the DynamicCache grows ({kv_layer_bytes:,} B)"))
    return max(cands)


def fragmentation_risk(*, need: int, spare: int, transient: int, transient_text: str = "") -> str | None:
    """The risk line for a plan that fits with ``spare`` bytes left (beyond the planned headroom) when
    that is less than the largest transient allocation; None otherwise (or when it does not fit).

    Args:
        need: the per-GPU need, bytes.
        spare: the card's capacity (after headroom) less the need, bytes (negative: it does not fit).
        transient: the largest transient allocation, bytes (:func:`largest_transient`).
        transient_text: what that allocation is, for the message.
    """
    if spare < 0 or transient <= 0 or spare >= transient:
        return None
    what = f" ({transient_text})" if transient_text else ""
    return (f"fragmentation risk: the card is nearly full ({spare / 2**20:,.0f} MiB spare beyond the headroom for a "
            f"{need / 2**30:,.2f} GiB need), less than the largest tensor a step allocates and frees again, "
            f"{transient / 2**20:,.0f} MiB{what}; once PyTorch's caching allocator has split its cache such a request "
            f"can fail with memory free (pytorch/pytorch#35901): set {EXPANDABLE_SEGMENTS}, or plan a smaller batch")
