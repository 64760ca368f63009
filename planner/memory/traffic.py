"""Bytes a decode step reads from memory: the weights its batch touches.

A decode step is memory bound at small batches: its time is the bytes it reads over the memory
bandwidth (Pope et al. 2022, "Efficiently Scaling Transformer Inference", section 2). A dense model
reads every weight once per step, whatever the batch. A mixture-of-experts layer runs each token
through ``k = num_experts_per_tok`` of its ``E = num_local_experts`` routed experts, and the kernels
read only the experts some token of the batch was routed to: vLLM's fused_moe kernel walks the
token-expert pairs sorted by expert (vllm/model_executor/layers/fused_moe/fused_moe.py), Transformers
5's default ``grouped_mm`` experts (transformers/integrations/moe.py) and its eager loop over
``expert_hit`` (modeling_mixtral.py) compute only experts with tokens, and ggml's ``MUL_MAT_ID``
multiplies each row by the expert matrices its ids name (ggml/src/ggml-cuda/ggml-cuda.cu
``ggml_cuda_mul_mat_id``; the CPU backend's ``ggml_compute_forward_mul_mat_id``). Attention, norms, the router, shared experts (modules with one copy
per layer), the embeddings and the output layer are read in full.

Expected distinct experts per step (:func:`expert_read_fraction`): a step of B tokens (decode: one
token per sequence, B = concurrency) with each token choosing k distinct experts uniformly and
independently misses a given expert with probability (1 - k/E)^B, so it reads
E x (1 - (1 - k/E)^B) experts: k at B = 1, all E as B grows. Uniform routing is an assumption; a
router that favours some experts touches fewer distinct ones for the same B (the expected count,
sum over experts of 1 - (1 - p_e)^B with the p_e summing to k, is largest when every p_e = k/E), so
the uniform figure is an upper bound on the bytes read.

Importing this module does no work.
"""

from __future__ import annotations

from dataclasses import replace

from planner.memory.quant import weight_bytes
from planner.model.architecture import Architecture


def expert_read_fraction(*, experts: int, per_token: int, tokens: int) -> float:
    """Expected share of a layer's routed experts that a step of ``tokens`` tokens reads:
    1 - (1 - k/E)^B under uniform, independent routing (module docstring).

    Args:
        experts: E, routed experts per layer (``num_local_experts``); 1 or less for a dense model.
        per_token: k, experts each token runs (``num_experts_per_tok``).
        tokens: B, tokens in the step (decode: sequences in the batch); at least 1.

    Returns:
        A fraction in (0, 1]; 1.0 for a dense model.

    Raises:
        ValueError: ``per_token`` outside 1..E, or ``tokens`` < 1.
    """
    if experts <= 1:
        return 1.0
    if not 1 <= per_token <= experts or tokens < 1:
        raise ValueError(f"need 1 <= per_token <= experts and tokens >= 1 (got {per_token}, {experts}, {tokens})")
    return 1.0 - (1.0 - per_token / experts) ** tokens


def moe_expert_bytes(arch: Architecture, fmt: str, *, group_size: int = 128, tp: int = 1) -> int:
    """Bytes of the routed experts in ``weight_bytes(arch, fmt)`` (per tensor-parallel rank).

    Taken as E x the bytes one more expert adds (``weight_bytes`` of the model with E + 1 experts
    less with E), so each format's own storage is used: bitsandbytes leaves experts in 16-bit,
    MXFP4 checkpoints store them in MXFP4. The router's row for that expert (hidden_size values)
    is counted with it: 0.002 % of Mixtral's expert bytes. 0 for a dense model.
    """
    if not arch.is_moe:
        return 0
    e = arch.num_local_experts
    one = (weight_bytes(replace(arch, num_local_experts=e + 1), fmt, group_size=group_size, tp=tp).total
           - weight_bytes(arch, fmt, group_size=group_size, tp=tp).total)
    return e * one


def decode_weight_read(*, weight_bytes: int | float, expert_bytes: int | float, experts: int, per_token: int,
                       tokens: int) -> float:
    """Weight bytes one decode step reads: the non-expert bytes in full and the routed experts'
    bytes x :func:`expert_read_fraction`.

    Args:
        weight_bytes: every weight byte on the device (experts included).
        expert_bytes: the routed experts' part of ``weight_bytes``.
        experts, per_token, tokens: as for :func:`expert_read_fraction`.
    """
    if expert_bytes > weight_bytes:
        raise ValueError("expert_bytes is part of weight_bytes and cannot exceed it")
    f = expert_read_fraction(experts=experts, per_token=per_token, tokens=tokens)
    return (weight_bytes - expert_bytes) + expert_bytes * f


__all__ = ["decode_weight_read", "expert_read_fraction", "moe_expert_bytes"]
