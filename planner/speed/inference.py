"""Serving speed from mechanisms: prefill, one decode step, a request.

**Decode step** (Pope et al. 2022, "Efficiently Scaling Transformer Inference", section 2): every
weight the batch touches is read once (MoE: the routed experts some sequence uses,
planner.speed.traffic) and every sequence's KV cache, at the streaming bandwidth times the weight
format's kernel factor (quantized GEMVs dequantize as they read: planner.speed.constants); plus a
fixed cost per layer (kernel launches: from a CUDA graph in vLLM, TensorRT-LLM-like engines and
llama.cpp, host-launched PyTorch eager ops in Transformers' generate); plus, under tensor
parallelism, two all-reduces per layer (Shoeybi et al. 2019, section 3) at their latency. At large
batches the step is compute bound: 2 x P FLOPs per sequence at the GEMM rate; the step takes the
larger of the memory and the compute time (roofline).

**Prefill** of P prompt tokens: 2 x P x W FLOPs in GEMMs at the rate of the engine's kernels
(vLLM / Transformers: the 16-bit or, for FP8 checkpoints, the FP8 tensor rate; llama.cpp: cuBLAS
with FP16 accumulation for F16/BF16 GGUFs, its int8 MMQ kernels for quantized ones, in ubatches of
512 tokens), attention scores at FlashAttention-2's share, the per-layer costs and the TP
all-reduces of P x hidden activations.

**A request** at concurrency c: time to first token = its prefill plus one decode step of the
other sequences it joins (continuous batching); time per output token = the decode step at c
sequences with the KV at the prompt plus half the output; request time = TTFT + O x TPOT.

**Under arrivals** (:func:`under_arrivals`): a served sequence shares its GPUs with the prompts of
requests that arrive while it decodes. Both engines put those prompts into the same forward passes
as the running decodes: vLLM's v1 scheduler (vllm/v1/core/sched/scheduler.py ``schedule``) first
gives each RUNNING request its next token, then fills the step's token budget
(``max_num_batched_tokens``) with chunks of WAITING requests' prompts (chunked prefill), so a step
that carries a prompt chunk lasts its prefill time longer; llama.cpp's server
(tools/server/server.cpp ``update_slots``) first adds every generating slot's sampled token to the
batch, then prompt tokens of slots processing their prompt up to ``n_batch``, and decodes the batch
in ``n_ubatch`` pieces, so the generating slots wait for that prompt processing each iteration. Either
way the prefill of the arriving prompts takes a share rho = (their arrivals per second) x (one
prompt's prefill) of the replica's time and a decode token takes TPOT / (1 - rho) of wall time. The
arrivals are the OTHER requests': under a closed load of c users (each starting a new request when
the last ends) the c - 1 others, each once per STEADY request time (a closed queue: the slower the
requests, the fewer arrive, so a steady state always exists: :func:`under_arrivals` solves its
fixed point); under an open load (requests_per_s) the arrivals do not slow down and rho >= 1 cannot
keep up. Waiting prompts are served first come, first served (vLLM's ``waiting`` queue), so a
request's prompt also waits for the prompts ahead of it: :func:`prompt_wait`, the M/D/1 mean wait
(Pollaczek-Khinchine), is added to its TTFT and request time. A sequence's own prompt is prefilled before its decode starts (its TTFT), never during it,
so at c = 1 nothing stretches the step.

Importing this module does no work.
"""

from __future__ import annotations

import math
from typing import Any

from planner.speed.constants import (
    allreduce_latency,
    DEFAULT_NODE_LINK_BYTES_PER_S,
    BANDWIDTH_EFFICIENCY,
    COLLECTIVE_EFFICIENCY,
    EAGER_OP_S,
    FP8_GEMM_FACTOR,
    KERNEL_FLOOR_S,
    LLAMACPP_DECODE_FACTOR,
    MMQ_EFFICIENCY,
    QUANT_DECODE_FACTOR,
    attention_efficiency,
    gemm_efficiency,
    gemm_size_factor,
)
from planner.speed.collectives import GENERIC_PCIE_CARD, TpLink, tp_link
from planner.speed.layers import (
    gemm_weights,
    ggml_activation_bytes,
    ggml_kernel_scale,
    token_costs,
    vllm_moe_extra_kernels,
)
from planner.speed.result import InferenceSpeed, Part
from planner.speed.traffic import DEFAULT_HOST_BANDWIDTH, HOST_MBU, PCIE_EFFICIENCY, decode_reads, llamacpp_prefill_upload

#: Kernels one decoder layer launches per step: vLLM's fused CUDA-graph decode (fused add+RMSNorm,
#: QKV GEMM, rotary, KV-cache write, attention, output GEMM, fused add+RMSNorm, gate-up GEMM,
#: SiLU-and-mul, down GEMM: vllm/model_executor/models/llama.py) and llama.cpp's graph
#: (ggml-org/llama.cpp src/llama-graph.cpp: norm, q/k/v matmuls, rope, cache copy, attention,
#: output, norm, ffn matmuls, glu, adds; several fused since 2025) about 10; Transformers' eager
#: LlamaDecoderLayer about 40 PyTorch ops (its RMSNorm alone is seven).
LAYER_KERNELS = {"vllm": 10, "llama.cpp": 12, "hf": 40}
#: Rows of the output tiles batched decode GEMMs use (CUTLASS / cuBLAS heuristics pick 64-row tiles
#: for few tokens): a step of c > 64 sequences reaches c / (c + 64) of the GEMM rate; below that the
#: engines run GEMV / split-K kernels bound by the weight reads, and the roofline's plain compute
#: time applies.
DECODE_TILE_ROWS = 64
#: llama.cpp's default physical batch (``n_ubatch``, ggml-org/llama.cpp common/common.h).
LLAMACPP_UBATCH = 512


def layer_kernels(w) -> float:
    """Kernels one decoder layer launches per step for ``w``'s engine (:data:`LAYER_KERNELS`).

    llama.cpp: the Llama layer's count scaled by the model's ggml graph nodes per layer over a Llama
    layer's (planner.speed.layers.ggml_kernel_scale): an MoE block adds the router product, its
    soft_max, argsort and get_rows, the expert sum's adds and the shared experts, an MLA attention
    the latent products, norms and concats; DeepSeek-V2-Lite's layers average 1.88 Llama layers.
    vLLM: the dense count plus an MoE block's extra kernels on the Triton fused_moe path (router,
    top-k softmax, block alignment, two grouped GEMMs, the expert sum:
    planner.speed.layers.vllm_moe_extra_kernels; Qwen3-30B-A3B: 10 + 5). Transformers: the dense
    count (its MoE ops are not counted apart yet).
    """
    i = w.infer
    if i.engine == "llama.cpp":
        return LAYER_KERNELS["llama.cpp"] * ggml_kernel_scale(w.architecture)
    if i.engine == "vllm":
        return LAYER_KERNELS["vllm"] + vllm_moe_extra_kernels(w.architecture)
    return float(LAYER_KERNELS[i.engine])


def weight_format(w) -> str:
    """The decode kernel family of ``w``'s weights: '16bit', 'fp8', 'int8' or 'int4'."""
    i = w.infer
    fmt = (i.weights or "bf16").lower()
    if i.engine == "llama.cpp":
        if fmt.startswith(("f16", "bf16", "fp16", "f32")):
            return "16bit"
        if fmt.startswith(("q8", "int8")):
            return "int8"
        return "int4"
    if fmt in ("fp32", "fp16", "bf16"):
        return "16bit"
    if fmt == "fp8":
        return "fp8"
    if fmt == "int8":
        return "int8"
    return "int4"


def _prefill_rate(w, gpu: Any, tokens: float) -> tuple[float, Any, str, bool]:
    """(FLOP/s of the prefill GEMMs, a function writing it in words, source, assumed) for ``tokens`` rows."""
    i = w.infer
    arch = w.architecture
    fmt = weight_format(w)
    if i.engine == "llama.cpp":
        ge = gemm_efficiency(gpu, "fp16acc")
        rows = min(tokens, LLAMACPP_UBATCH)
        size = gemm_size_factor(rows, arch.hidden_size)
        if fmt != "16bit" and getattr(gpu, "int8_tops", None):
            rate = float(gpu.int8_tops) * 1e12 * MMQ_EFFICIENCY.value * size
            return rate, lambda: (f"llama.cpp MMQ: {float(gpu.int8_tops):g} int8 TOPS x {MMQ_EFFICIENCY.value:g} x size "
                          f"{size:.3f} (ubatch {rows:,.0f})"), MMQ_EFFICIENCY.source, MMQ_EFFICIENCY.assumed
        peak = float(getattr(gpu, "fp16_fp16acc_tflops", None) or gpu.bf16_tflops)
        return (peak * 1e12 * ge.value * size, lambda: f"llama.cpp cuBLAS FP16 (FP16 accumulate): {peak:g} TFLOPS x "
                f"{ge.value:g} x size {size:.3f} (ubatch {rows:,.0f})",
                "ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_op_mul_mat_cublas: CUBLAS_COMPUTE_16F "
                f"for F16 on NVIDIA; {ge.source}", ge.assumed)
    rows = tokens * (arch.num_experts_per_tok / arch.num_local_experts if arch.is_moe else 1.0)
    size = gemm_size_factor(rows, arch.hidden_size)
    fp8 = fmt == "fp8" and getattr(gpu, "fp8", False) and getattr(gpu, "fp8_tflops", None)
    ge = gemm_efficiency(gpu, "fp8" if fp8 else "bf16")
    peak = float(gpu.fp8_tflops if fp8 else gpu.bf16_tflops)
    f8 = FP8_GEMM_FACTOR.value if fp8 else 1.0
    return (peak * 1e12 * ge.value * f8 * size, lambda: f"{peak:g}{' FP8' if fp8 else ''} TFLOPS x {ge.value:g}"
            f"{f' x {f8:g} FP8 factor' if fp8 else ''} x size {size:.3f}", ge.source, ge.assumed)


def decode_gemm_efficiency(gemm_eff: Any, fp8: bool, sequences: int) -> Any:
    """The share of the dense peak a decode step's GEMMs reach: the architecture's GEMM efficiency,
    x :data:`planner.speed.constants.FP8_GEMM_FACTOR` for FP8 weights, x the tile waste
    c / (c + :data:`DECODE_TILE_ROWS`) for batched GEMMs of c > 64 rows (GEMV below)."""
    fp8_factor = FP8_GEMM_FACTOR.value if fp8 else 1.0
    tile = sequences / (sequences + DECODE_TILE_ROWS) if sequences > DECODE_TILE_ROWS else 1.0
    return gemm_eff * fp8_factor * tile


def _spans_machines(w, shard: int) -> bool:
    """A tensor-parallel group wider than the workload's machines (``gpus_per_node``): its all-reduces
    cross the inter-node link (planner.speed.constants.DEFAULT_NODE_LINK_BYTES_PER_S, assumed)."""
    per = getattr(w, "gpus_per_node", None)
    return bool(per) and shard > per


def decode_step(dr, w, *, gpu_bandwidth: Any, host_bandwidth: Any, peak_flops: Any, gemm_eff: Any,
                interconnect: Any = 0.0, kv_tokens: float | None = None, link: TpLink | None = None) -> tuple[Any, ...]:
    """The parts of one decode step, in seconds: (weights read, KV read, host-RAM layers, compute,
    per-layer fixed cost, TP all-reduces); the step is max(first three summed, compute) + the last two.

    Works on floats or numpy arrays of per-row rates (the solver's speed rule times every hardware row
    with it).

    Args:
        dr: the step's bytes (planner.speed.traffic.DecodeReads).
        w: the inference workload (engine, weights, tp, concurrency).
        gpu_bandwidth, host_bandwidth: datasheet bytes/s of the card and of the host RAM.
        peak_flops: the card's dense rate for the weights' compute dtype, FLOP/s.
        gemm_eff: the architecture's GEMM efficiency (planner.speed.constants.gemm_efficiency).
        interconnect: the card's NVLink bandwidth, bytes/s both directions (0: PCIe), used when ``link``
            is not given: NVLink rows at that bandwidth, PCIe rows as PCIe 4.0 x16 through host memory
            (planner.speed.collectives.GENERIC_PCIE_CARD, the slowest common case).
        kv_tokens: tokens in each sequence's cache (default: the workload's mean, ``dr.mean_kv``).
        link: the tensor-parallel link of one card (planner.speed.collectives.tp_link): its PCIe
            generation, lanes and peer-to-peer path; all-reduce = latency + 2 (n-1)/n x bytes / busbw.
    """
    i = w.infer
    arch = w.architecture
    llama = i.engine == "llama.cpp"
    c = max(i.concurrency, 1)
    fmt = weight_format(w)
    qf = (LLAMACPP_DECODE_FACTOR if llama else QUANT_DECODE_FACTOR)[fmt].value
    kv = dr.mean_kv if kv_tokens is None else kv_tokens
    bw = gpu_bandwidth * BANDWIDTH_EFFICIENCY.value
    w_s = dr.weights_read / (bw * qf)
    kv_s = c * dr.kv_per_token * kv / bw
    host_s = 0.0
    if dr.host_blocks:
        host_s = (dr.host_weights_read + c * dr.host_kv_per_token * kv) / (host_bandwidth * HOST_MBU)
    comp_s = 2.0 * dr.params * c / (peak_flops * decode_gemm_efficiency(gemm_eff, fmt == "fp8", c))
    per_kernel = EAGER_OP_S if i.engine == "hf" else KERNEL_FLOOR_S
    fixed_s = layer_kernels(w) * arch.num_hidden_layers * per_kernel.value
    ar_s = 0.0
    shard = 1 if llama else max(i.tp, 1)
    if shard > 1:
        msg = c * arch.hidden_size * 2  # one all-reduce: the step's c tokens x hidden x 2 B (16-bit activations)
        spans = _spans_machines(w, shard)
        if link is not None:
            ar_s = 2 * arch.num_hidden_layers * link.allreduce_s(msg, shard)
        else:
            import numpy as np

            nv = np.asarray(interconnect, dtype=float)
            pcie = tp_link(GENERIC_PCIE_CARD, shard, i.engine, spans_machines=spans).allreduce_s(msg, shard)
            nvl = np.where(nv > 0, nv, 1.0) / 2
            if spans:
                nvl = np.minimum(nvl, DEFAULT_NODE_LINK_BYTES_PER_S.value)
            nvl_s = allreduce_latency(True, shard).value + 2 * (shard - 1) / shard * msg / (nvl * COLLECTIVE_EFFICIENCY.value)
            ar = 2 * arch.num_hidden_layers * np.where(nv > 0, nvl_s, pcie)
            ar_s = float(ar) if np.ndim(ar) == 0 else ar
    return w_s, kv_s, host_s, comp_s, fixed_s, ar_s


def _allreduce_part(phase: str, seconds: float, layers: int, tokens: float, hidden: int, tpl: TpLink,
                    shard: int) -> Part:
    """The console/JSON part of a phase's tensor-parallel all-reduces: 2 per layer of ``tokens`` x
    ``hidden`` x 2 B each over ``tpl`` (planner.speed.collectives)."""
    msg = tokens * hidden * 2
    custom = tpl.custom(msg)
    lat = tpl.custom_latency_s if custom else tpl.latency_s
    return Part(f"{phase}: tensor-parallel all-reduces", seconds, lambda: f"2 x {layers} all-reduces of {tokens:,.0f} x "
                f"{hidden} x 2 B = {msg:,.0f} B, each {lat * 1e6:g} us"
                f"{' (vLLM custom all-reduce)' if custom else ' (NCCL)'} + 2({shard}-1)/{shard} x bytes / "
                f"{tpl.busbw / 1e9:,.1f} GB/s ({tpl.text})", tpl.source, tpl.assumed_for(msg))


def prompt_wait(rho: float, prefill_s: float) -> float:
    """Mean seconds a prompt waits for the prompts ahead of it before its own prefill starts.

    vLLM's scheduler serves WAITING requests first come, first served, their prompt chunks filling
    the step's token budget after the running decodes (module docstring, "Under arrivals"), so the
    prompts form one queue whose server is busy a share ``rho`` of the time, each prompt holding it
    for ``prefill_s`` (one prompt's prefill stretched by the decode step it shares: the model's TTFT
    at nothing queued). With Poisson arrivals and a fixed service time this is the M/D/1 queue, whose
    mean wait is the Pollaczek-Khinchine formula with a deterministic service time (Kleinrock,
    Queueing Systems vol. 1 (1975), sections 5.6-5.7): W = rho x S / (2 (1 - rho)). Under a closed
    load of finitely many users the arrivals are not Poisson (a user who waits sends nothing), so
    there it is an upper-bound approximation.

    Args:
        rho: the prompts' share of the replica's time, in [0, 1).
        prefill_s: S, one prompt's stretched prefill, seconds.

    Returns:
        W in seconds (0 at rho = 0; math.inf at rho >= 1).
    """
    if rho <= 0.0:
        return 0.0
    if rho >= 1.0:
        return math.inf
    return rho * prefill_s / (2.0 * (1.0 - rho))


def under_arrivals(*, tpot_s: float, ttft_s: float, prefill_s: float, output_tokens: int, in_flight: int,
                   arrivals_per_s: float | None = None) -> tuple[float, float, float, bool, float]:
    """(TPOT, request seconds, prefill share rho, keeps up, prompt wait) of one sequence of a replica
    that serves ``in_flight`` sequences in a steady state, other requests' prompts prefilled between
    (vLLM: inside) its decode steps (module docstring, "Under arrivals"), each prompt first waiting
    W = :func:`prompt_wait` (rho, ``ttft_s``) for the prompts queued ahead of it.

    **Open load** (``arrivals_per_s`` given: requests arrive whatever the service's speed): rho =
    arrivals/s x ``prefill_s``; rho >= 1 means the prompts alone need more than all of the replica's
    time: it cannot keep up (TPOT, the wait and the request time are infinite).

    **Closed load** (``arrivals_per_s`` None: ``in_flight`` users, each sending the next request when
    the last one ends): the c - 1 others arrive once per STEADY request time R each, and R grows as
    their prompts slow the decode and queue ahead of each other, so fewer arrive: with
    K = (c - 1) x ``prefill_s``, T = ``ttft_s``, D = ``output_tokens`` x ``tpot_s``,

        rho = K / R,  R(rho) = T + W(rho) + D / (1 - rho),  W(rho) = rho T / (2 (1 - rho)).

    g(rho) = rho R(rho) - K rises strictly from -K at rho = 0 to +infinity as rho -> 1, so exactly
    one root lies in [0, 1): found by bisection to 1e-12. A closed load always keeps up (a slower
    replica just receives fewer requests); it is the open-load rule that can fail.

    Args:
        tpot_s: one decode step at ``in_flight`` sequences, seconds (nothing else on the GPUs).
        ttft_s: time to first token of a request with no prompt queued ahead, seconds.
        prefill_s: one arriving prompt's prefill, seconds.
        output_tokens: tokens a request generates (>= 1).
        in_flight: sequences the replica holds (>= 1).
        arrivals_per_s: an open load's arrivals per second at this replica (requests_per_s / replicas;
            every arrival during a sequence's decode is another request's). None: a closed load.

    Returns:
        TPOT = tpot_s / (1 - rho), the request time ttft_s + W + output_tokens x TPOT, rho, whether
        rho < 1 (open load; else TPOT, the request time and W are math.inf), and W in seconds.
    """
    if arrivals_per_s is not None:
        rho = arrivals_per_s * prefill_s
        if rho >= 1.0:
            return math.inf, math.inf, rho, False, math.inf
    else:
        k = max(in_flight - 1, 0) * prefill_s
        d = output_tokens * tpot_s

        def g(r: float) -> float:
            return r * (ttft_s + prompt_wait(r, ttft_s) + d / (1.0 - r)) - k

        lo, hi = 0.0, 1.0
        if k > 0:
            for _ in range(200):
                mid = 0.5 * (lo + hi)
                if g(mid) < 0.0:
                    lo = mid
                else:
                    hi = mid
                if hi - lo < 1e-12:
                    break
        rho = lo if k > 0 else 0.0
    wait = prompt_wait(rho, ttft_s)
    tpot = tpot_s / (1.0 - rho)
    return tpot, ttft_s + wait + output_tokens * tpot, rho, True, wait


def inference_speed(w, est, gpu: Any, *, prompt_tokens: int, output_tokens: int, per_lane: float = 0.0,
                    lanes: int = 16, host_bandwidth: float | None = None) -> InferenceSpeed:
    """Prefill, decode and request times of inference workload ``w`` on its GPUs.

    Args:
        w: a planner.workload.spec.Workload with ``infer`` options: engine, weights, tp,
            concurrency (sequences decoded together per replica), replicas.
        est: its memory estimate (weights on each GPU, KV bytes per token, llama.cpp's split).
        gpu: a catalog GPU.
        prompt_tokens, output_tokens: the request timed (>= 1 each).
        per_lane, lanes: the host PCIe link (llama.cpp layers in host RAM upload per ubatch).
        host_bandwidth: host RAM bandwidth, bytes/s (llama.cpp layers left in RAM).

    Returns:
        :class:`InferenceSpeed`.

    Raises:
        ValueError: prompt_tokens or output_tokens below 1.
    """
    if prompt_tokens < 1 or output_tokens < 1:
        raise ValueError("prompt_tokens and output_tokens must be at least 1")
    i = w.infer
    arch = w.architecture
    tp = max(i.tp, 1)
    c = max(i.concurrency, 1)
    llama = i.engine == "llama.cpp"
    # llama.cpp's layer split runs a token through its GPUs one after another: the whole model's work at one
    # card's rate (dr.weights and W already cover every GPU's layers)
    shard = 1 if llama else tp
    L = arch.num_hidden_layers
    parts: list[Part] = []
    notes: list[str] = []
    fmt = weight_format(w)
    qf = (LLAMACPP_DECODE_FACTOR if llama else QUANT_DECODE_FACTOR)[fmt]
    bw = gpu.memory_bandwidth_bytes_per_s * BANDWIDTH_EFFICIENCY.value
    kv_mean = prompt_tokens + output_tokens / 2

    # ----- decode step
    dr = decode_reads(w, est)
    fp8 = fmt == "fp8" and getattr(gpu, "fp8_tflops", None)
    ge = gemm_efficiency(gpu, "fp8" if fp8 else "bf16")
    peak = float(gpu.fp8_tflops if fp8 else gpu.bf16_tflops) * 1e12
    hbw = host_bandwidth or DEFAULT_HOST_BANDWIDTH
    tpl = tp_link(gpu, shard, i.engine, per_lane=per_lane, lanes=lanes, spans_machines=_spans_machines(w, shard))
    ds = decode_step(dr, w, gpu_bandwidth=gpu.memory_bandwidth_bytes_per_s, host_bandwidth=hbw, peak_flops=peak,
                     gemm_eff=ge.value, interconnect=float(getattr(gpu, "quoted_link_bytes_per_s", 0) or 0),
                     kv_tokens=kv_mean, link=tpl)
    w_s, kv_s, host_s, comp_s, fixed_s, ar_s = ds
    mem_s = w_s + kv_s + host_s
    step = max(mem_s, comp_s) + fixed_s + ar_s
    eff = decode_gemm_efficiency(ge.value, fmt == "fp8", c)
    per_kernel = EAGER_OP_S if i.engine == "hf" else KERNEL_FLOOR_S
    n_k = layer_kernels(w)
    kernels_text = (f"{n_k:.1f} (Llama layer's {LAYER_KERNELS['llama.cpp']} x {ggml_kernel_scale(arch):.3f}, the "
                    "ggml graph's compute nodes per layer over a Llama layer's)" if i.engine == "llama.cpp"
                    and n_k != LAYER_KERNELS["llama.cpp"] else f"{n_k:g}")
    parts += [
        Part("decode: weights read", w_s, lambda: f"{dr.weights_read:,.0f} B"
             + (f" (of {dr.weights:,.0f} B: routed experts {dr.experts:,.0f} B x {dr.expert_share:.4f} = "
                f"1 - (1 - {arch.num_experts_per_tok}/{arch.num_local_experts})^{c}, the share {c} token(s) use)"
                if arch.is_moe else "")
             + f" / ({gpu.memory_bandwidth_bytes_per_s / 1e9:,.0f} GB/s x {BANDWIDTH_EFFICIENCY.value:g} x {qf.value:g} "
             f"{fmt} kernel factor)", qf.source, qf.assumed),
        Part("decode: KV cache read", kv_s, lambda: f"{c} seq x {dr.kv_per_token:,.0f} B/token x {kv_mean:,.0f} tokens "
             f"(prompt + output / 2) / {bw / 1e9:,.0f} GB/s", BANDWIDTH_EFFICIENCY.source),
        Part("decode: compute bound", max(0.0, comp_s - mem_s), lambda: f"2 x {dr.params:,.0f} x {c} FLOPs / "
             f"({peak / 1e12:,.0f} TFLOPS x {eff:.3f}, GEMM efficiency x {c} / ({c} + {DECODE_TILE_ROWS}) rows) = "
             f"{comp_s * 1e3:.3f} ms: "
             "its excess over memory",
             ge.source, ge.assumed),
        Part("decode: per-layer fixed cost", fixed_s, lambda: f"{kernels_text} kernels x {L} layers x "
             f"{per_kernel.value * 1e6:g} us ({'host-launched eager ops' if i.engine == 'hf' else 'CUDA graph'})",
             per_kernel.source, per_kernel.assumed),
    ]
    if host_s:
        parts.append(Part("decode: host RAM layers", host_s, lambda: f"{dr.host_blocks} blocks in RAM read at the host's "
                          "bandwidth x 0.6", "llama.cpp CPU backend: the blocks left in RAM run on the CPU"))
    if ar_s:
        parts.append(_allreduce_part("decode", ar_s, L, c, arch.hidden_size, tpl, shard))

    # ----- prefill of one prompt, and of the whole batch of c prompts
    W = gemm_weights(arch) / shard

    def prefill(tokens: float) -> tuple[float, list[Part]]:
        rate, rtext, rsrc, rassumed = _prefill_rate(w, gpu, tokens)
        g_s = 2.0 * W * tokens / rate + 2.0 * arch.vocab_size * arch.hidden_size / shard * min(tokens, c) / rate
        ae = attention_efficiency(gpu)
        qd = arch.num_attention_heads * arch.head_dim / shard
        a_s = 4.0 * qd * (prompt_tokens + 1) / 2 * tokens * L / (float(gpu.bf16_tflops) * 1e12 * ae.value)
        ubatches = int(-(-tokens // LLAMACPP_UBATCH)) if llama else 1
        f_s = layer_kernels(w) * L * per_kernel.value * ubatches
        # memory-bound activation traffic: llama.cpp's F32 tensors, vLLM's fused bf16 kernels, Transformers' eager ops
        if llama:
            act_b = ggml_activation_bytes(arch, quantized=fmt != "16bit") / shard
        else:
            act_b = token_costs(arch, seq_len=prompt_tokens, attention="flash",
                                fused=i.engine == "vllm").elementwise_bytes_fwd / shard
        m_s = act_b * tokens / (gpu.memory_bandwidth_bytes_per_s * BANDWIDTH_EFFICIENCY.value)
        t_ar = 2 * L * tpl.allreduce_s(tokens * arch.hidden_size * 2, shard) if shard > 1 else 0.0
        up_s = 0.0
        if llama and dr.host_blocks and per_lane:
            n_ub, per_ub, _ = llamacpp_prefill_upload(est, arch, int(tokens))
            up_s = n_ub * per_ub / (per_lane * lanes * PCIE_EFFICIENCY)
        total = g_s + a_s + m_s + f_s + t_ar + up_s
        ps = [Part("prefill: gemm", g_s, lambda: f"2 x {W:,.0f} weights x {tokens:,.0f} tokens / ({rtext()})"
                   + (f", its {tp} GPUs' layers in turn" if llama and tp > 1 else ""), rsrc, rassumed),
              Part("prefill: attention", a_s, lambda: f"FlashAttention-2 causal scores at {ae.value:g} of "
                   f"{float(gpu.bf16_tflops):g} TFLOPS", ae.source, ae.assumed),
              Part("prefill: memory-bound ops", m_s, lambda: f"{act_b:,.0f} B/token x {tokens:,.0f} tokens "
                   f"({'ggml F32 activations' if llama else 'norms, rotary, activation, residuals'}) / "
                   f"({gpu.memory_bandwidth_bytes_per_s / 1e9:,.0f} GB/s x {BANDWIDTH_EFFICIENCY.value:g})",
                   BANDWIDTH_EFFICIENCY.source),
              Part("prefill: per-layer fixed cost", f_s, lambda: f"{kernels_text} kernels x {L} layers x "
                   f"{ubatches} batch(es)", per_kernel.source, per_kernel.assumed)]
        if t_ar:
            ps.append(_allreduce_part("prefill", t_ar, L, tokens, arch.hidden_size, tpl, shard))
        if up_s:
            ps.append(Part("prefill: host-block uploads", up_s, "llama.cpp copies host blocks' weights per ubatch",
                           "ggml-backend scheduler (planner.speed.traffic.llamacpp_prefill_upload)"))
        return total, ps

    one_s, one_parts = prefill(float(prompt_tokens))
    batch_s, _ = prefill(float(prompt_tokens * c))
    parts += one_parts
    ttft = one_s + (step if c > 1 else 0.0)
    replicas = max(int(getattr(i, "replicas", 1) or 1), 1)
    out_tps = replicas * c / step
    request = ttft + output_tokens * step
    # assumed when any part that takes time rests on an assumed rate: the JSON's parts and the flag agree
    # (a llama.cpp decode whose assumed weight read is a tenth of its step once host layers dominate
    # it stays marked, whatever the prefill's length)
    assumed = any(p.assumed and p.seconds > 0 for p in parts)
    if i.engine == "hf":
        notes.append("Transformers generate: eager PyTorch, host-bound at small batches")
    s_tpot, s_request, rho, _, wait = under_arrivals(tpot_s=step, ttft_s=ttft, prefill_s=one_s,
                                               output_tokens=output_tokens, in_flight=c)
    return InferenceSpeed(prefill_tokens_per_s=prompt_tokens / one_s, ttft_s=ttft, tpot_s=step,
                          output_tokens_per_s=out_tps, request_s=request, prompt_tokens=prompt_tokens,
                          output_tokens=output_tokens, concurrency=c, replicas=replicas, parts=tuple(parts),
                          assumed=assumed, notes=tuple(notes), batch_prefill_s=batch_s, steady_tpot_s=s_tpot,
                          steady_request_s=s_request, prefill_share=rho, prompt_wait_s=wait)
