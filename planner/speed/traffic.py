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

The same bytes, over bandwidths, give the decode step's time (:class:`DecodeReads`), which both the
time model (planner.speed.timing) and the solver's speed constraint (planner.solve.candidates) use.

Importing this module does no work.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

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


def moe_expert_bytes(arch: Architecture, fmt: str, *, group_size: int = 128, tp: int = 1, engine: str = "hf",
                     scheme: Any = None, keep: Any = None) -> int:
    """Bytes of the routed experts in ``weight_bytes(arch, fmt)`` (per tensor-parallel rank).

    Taken as E x the bytes one more expert adds (``weight_bytes`` of the model with E + 1 experts
    less with E), so each format's own storage is used: bitsandbytes leaves experts in 16-bit,
    MXFP4 checkpoints store them in MXFP4. The router's row for that expert (hidden_size values)
    is counted with it: 0.002 % of Mixtral's expert bytes. 0 for a dense model.
    """
    if not arch.is_moe:
        return 0
    e = arch.num_local_experts
    kw = dict(group_size=group_size, tp=tp, engine=engine, scheme=scheme, keep=keep)
    one = (weight_bytes(replace(arch, num_local_experts=e + 1), fmt, **kw).total
           - weight_bytes(arch, fmt, **kw).total)
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


#: Default model bandwidth utilization in decode: assumption. Well-tuned engines (vLLM,
#: TensorRT-LLM) are commonly said to reach 60-85 % of peak bandwidth in decode; this is a rule
#: of thumb, not a published constant. Override with the scenario's ``costs.mbu``.
DEFAULT_MBU = 0.70
#: llama.cpp layers left in host RAM are read from the platform's memory at this share of its
#: channels' peak (channels x MT/s x 8 B): assumption (CPU decode is commonly quoted at 50-70 % of
#: the DRAM peak), and a desktop's dual-channel DDR5-4800 (76.8 GB/s) when the caller gives no
#: platform: assumption.
HOST_MBU = 0.60
DEFAULT_HOST_BANDWIDTH = 2 * 4800e6 * 8
#: Achieved share of the PCIe link rate (PCI-SIG base specifications, one direction after line
#: encoding) for host<->GPU copies: assumption. Realised DMA throughput is commonly quoted at
#: ~80-90 % of the link rate after TLP/DLLP overhead (a rule of thumb, not measured here).
PCIE_EFFICIENCY = 0.85
#: Default MFU of prefill and of decode's compute term: assumption, as 16-bit training (0.40);
#: planner.speed.timing.PREFILL_MFU gives the reason.
DEFAULT_MFU = 0.40


@dataclass(frozen=True)
class ArchMfu:
    """The 16-bit training MFU of one GPU architecture and where the figure comes from."""

    value: float
    source: str


#: 16-bit (BF16/FP16 tensor-core) training MFU by catalog ``architecture``: the share of the card's
#: dense datasheet TFLOPS that published end-to-end LLM training runs reached on it. It replaces
#: the one figure (DEFAULT_MFU) for every card in the time model (training, prefill, the decode
#: compute term); the recipe and method factors of planner.speed.timing apply on top, and the
#: catalog's ``mfu_scale`` (a card's software stack) still multiplies it. Figures of published runs
#: are cited; an architecture without one found is marked ``assumption`` and says which it borrows.
ARCH_MFU: dict[str, ArchMfu] = {
    "ampere": ArchMfu(0.44, "NVIDIA Megatron-LM README (GPT-3 175B example): 1,024 A100 GPUs at 138 TFLOPS per "
                            "GPU, '44% of the theoretical peak FLOPs' (312 TFLOPS dense BF16)"),
    "hopper": ArchMfu(0.41, "Llama Team, 'The Llama 3 Herd of Models' (arXiv 2407.21783, 2024), Table 4: 400 "
                            "TFLOPS per GPU in BF16 on 16,384 H100s, 41 % MFU (43 % on 8,192; 38 % with context "
                            "parallelism); MosaicML llm-foundry's benchmark table gives 46 % for a 7B model on 8 "
                            "H100s (scripts/train/benchmarking/README.md)"),
    "ada": ArchMfu(0.44, "assumption: Ampere's 0.44 (no published end-to-end training MFU found for Ada cards: "
                         "RTX 40xx, L4, L40S, RTX 6000 Ada)"),
    "turing": ArchMfu(0.44, "assumption: Ampere's 0.44 on the card's FP16 tensor rate (no published LLM training "
                            "MFU found for Turing; it has no BF16)"),
    "blackwell": ArchMfu(0.41, "assumption: Hopper's 0.41 (no published end-to-end BF16 training MFU found for "
                               "B200 / RTX PRO 6000 Blackwell)"),
    "cdna3": ArchMfu(0.41, "Hopper's 0.41 for the model on the datasheet TFLOPS; the catalog's mfu_scale (0.5, "
                           "SemiAnalysis MI300X training benchmark, December 2024) scales it for ROCm"),
    "cdna4": ArchMfu(0.41, "assumption: CDNA 3's figure (Hopper's 0.41 on the datasheet TFLOPS), the catalog's "
                           "mfu_scale scaling it for ROCm as for the MI300X; no published end-to-end training MFU "
                           "found for the MI355X"),
    "gaudi2": ArchMfu(0.60, "Databricks, 'LLM Training and Inference with Intel Gaudi 2 AI Accelerators' (2024): "
                            "over 260 TFLOP/s per device training MPT-7B on 8 Gaudi 2 (SynapseAI 1.12, BF16), "
                            "260 / 432 dense BF16 TFLOPS = 0.60"),
    "gaudi3": ArchMfu(0.60, "assumption: Gaudi 2's 0.60 (no published end-to-end training MFU found for Gaudi 3)"),
}


def arch_mfu(gpu: Any) -> ArchMfu:
    """The 16-bit MFU of ``gpu``'s architecture (:data:`ARCH_MFU`), times its catalog ``mfu_scale``;
    DEFAULT_MFU (an assumption) for an architecture the table lacks (a catalog overlay's new one)."""
    base = ARCH_MFU.get(str(getattr(gpu, "architecture", "") or "").lower())
    scale = float(getattr(gpu, "mfu_scale", 1.0) or 1.0)
    if base is None:
        base = ArchMfu(DEFAULT_MFU, f"assumption: no MFU figure for architecture {getattr(gpu, 'architecture', '?')!r} "
                                    f"(planner.speed.traffic.ARCH_MFU); {DEFAULT_MFU:g} as for 16-bit training")
    if scale == 1.0:
        return base
    return ArchMfu(base.value * scale, f"{base.source}; x {scale:g} catalog mfu_scale for {gpu.id}'s software stack")


def ram_bandwidth(channels: int, mts: int) -> float:
    """Peak DRAM bandwidth of a platform, bytes/s: channels x MT/s x 8 B (64-bit channels)."""
    return channels * mts * 1e6 * 8


@dataclass(frozen=True)
class DecodeReads:
    """What one decode step of a workload reads and computes (Pope et al. 2022, section 2).

    Attributes:
        weights: weight bytes on the GPU(s) (every GPU of a llama.cpp replica's layer split; the
            per-GPU share under tensor parallelism).
        weights_read: the part of them read per step (the routed experts x their share).
        experts: the routed experts' bytes within ``weights``; expert_share: 1 - (1 - k/E)^B.
        kv_per_token: KV cache bytes per token of one sequence on the GPU(s).
        host_weights, host_weights_read, host_kv_per_token, host_blocks: the same for llama.cpp
            blocks in host RAM (0 otherwise).
        mean_kv, mean_kv_text: tokens in each sequence's KV cache at the mean step, and how.
        params: parameters computed with per token on the GPU(s) (2 x params FLOPs).
        concurrency: sequences per step.
    """

    weights: float
    weights_read: float
    experts: float
    expert_share: float
    kv_per_token: float
    host_weights: float
    host_weights_read: float
    host_kv_per_token: float
    host_blocks: int
    mean_kv: float
    mean_kv_text: str
    params: float
    concurrency: int

    @property
    def gpu_bytes(self) -> float:
        return self.weights_read + self.concurrency * self.kv_per_token * self.mean_kv

    @property
    def host_bytes(self) -> float:
        return self.host_weights_read + self.concurrency * self.host_kv_per_token * self.mean_kv

    def seconds(self, *, gpu_bandwidth: float, host_bandwidth: float, tflops: float, mfu: float,
                mbu: float = DEFAULT_MBU, host_mbu: float = HOST_MBU) -> tuple[float, float, float]:
        """(GPU memory s, host memory s, compute s) of the step; it takes max(GPU + host, compute):
        a llama.cpp token reads its GPU layers, then its host blocks, one after the other."""
        gpu_s = self.gpu_bytes / (gpu_bandwidth * mbu)
        host_s = self.host_bytes / (host_bandwidth * host_mbu) if self.host_bytes else 0.0
        comp_s = 2.0 * self.params * self.concurrency / (tflops * 1e12 * mfu)
        return gpu_s, host_s, comp_s


def mean_kv_tokens(context: int, tokens_per_request: int | None) -> tuple[float, str]:
    """Tokens in a sequence's KV cache at the mean decode step: prompt + generated / 2 when
    ``tokens_per_request`` is given (the prompt is the rest of the context), else half the context."""
    if tokens_per_request is None:
        return context / 2, f"KV at half the context ({context:,} / 2 tokens)"
    prompt = max(context - tokens_per_request, 0)
    return prompt + tokens_per_request / 2, f"mean KV length = prompt {prompt:,} + {tokens_per_request:,} generated / 2"


def decode_reads(w, est) -> DecodeReads:
    """The bytes one decode step of inference workload ``w`` reads, from its memory estimate ``est``.

    GPU weights: the estimate's weight components (llama.cpp: every GPU of the replica's layer
    split, ``llamacpp_weights_gpu_bytes``), of which the routed experts are read at their share
    (:func:`expert_read_fraction`, B = concurrency); the KV cache of each sequence at the mean
    length (:func:`mean_kv_tokens`); llama.cpp's host blocks likewise from host RAM.
    """
    i = w.infer
    arch = w.architecture
    c = i.concurrency
    llama = i.engine == "llama.cpp"
    weights = float(sum(x.bytes for x in est.gpu_components() if x.name.startswith("weights")))
    if llama:
        weights = float(est.extra.get("llamacpp_weights_gpu_bytes", weights))
        experts = float(est.extra.get("llamacpp_expert_gpu_bytes", 0))
    else:
        experts = float(moe_expert_bytes(arch, i.weights, group_size=i.group_size, tp=i.tp, engine=i.engine,
                                         scheme=i.scheme, keep=i.keep))
    experts = min(experts, weights)
    E, k = arch.num_local_experts, arch.num_experts_per_tok
    share = expert_read_fraction(experts=E, per_token=k, tokens=c) if arch.is_moe else 1.0
    read = decode_weight_read(weight_bytes=weights, expert_bytes=experts, experts=E, per_token=k, tokens=c)
    kv_tok = float(est.extra.get("kv_bytes_per_token", 0))
    mean_kv, text = mean_kv_tokens(i.context, i.tokens_per_request)
    host_w = host_read = host_kv = 0.0
    host_blocks = 0
    if llama and est.extra.get("llamacpp_host_block_bytes"):
        L = arch.num_hidden_layers
        host_blocks = L - int(est.extra["llamacpp_gpu_blocks"])
        host_kv = kv_tok * host_blocks / L
        kv_tok -= host_kv
        host_w = float(est.extra["llamacpp_host_block_bytes"])
        host_read = decode_weight_read(weight_bytes=host_w,
                                       expert_bytes=min(float(est.extra.get("llamacpp_expert_host_bytes", 0)), host_w),
                                       experts=E, per_token=k, tokens=c)
    params = float(arch.active_parameters) / (1 if llama else i.tp)
    return DecodeReads(weights, read, experts, share, kv_tok, host_w, host_read, host_kv, host_blocks, mean_kv, text,
                       params, c)


def llamacpp_prefill_upload(est, arch: Architecture, prompt_tokens: int) -> tuple[int, float, int]:
    """PCIe bytes a llama.cpp prefill uploads for its host blocks: (ubatches, bytes per ubatch, tokens
    per ubatch).

    A prompt is processed in ubatches of n_ubatch tokens; for each ubatch of >= 32 tokens ggml-cuda
    runs the host blocks' matrix products on the GPU (``offload_op``), and the scheduler copies each
    host weight to the GPU before its split runs (ggml/src/ggml-backend.cpp
    ``ggml_backend_sched_compute_splits``), waiting for the GPU to finish with the previous copy, so
    copies and compute do not overlap. For ``MUL_MAT_ID`` it copies only the experts the ubatch's
    tokens use ("copying only the experts that are used"): the expert tensors x the expected share
    (B = the ubatch's tokens). (0, 0, T) without host blocks or below 32 tokens.
    """
    host = float(est.extra.get("llamacpp_host_block_bytes", 0) or 0)
    T = int(est.extra.get("llamacpp_n_ubatch", 512) or 512)
    if not host or T < 32 or prompt_tokens <= 0:
        return 0, 0.0, T
    experts = min(float(est.extra.get("llamacpp_expert_host_bytes", 0)), host)
    per = decode_weight_read(weight_bytes=host, expert_bytes=experts, experts=arch.num_local_experts,
                             per_token=arch.num_experts_per_tok, tokens=T)
    return -(-prompt_tokens // T), per, T


__all__ = ["ARCH_MFU", "ArchMfu", "arch_mfu", "DEFAULT_HOST_BANDWIDTH", "DEFAULT_MBU", "DEFAULT_MFU", "DecodeReads", "HOST_MBU", "PCIE_EFFICIENCY",
           "decode_reads", "decode_weight_read", "expert_read_fraction", "llamacpp_prefill_upload", "mean_kv_tokens",
           "moe_expert_bytes", "ram_bandwidth"]
