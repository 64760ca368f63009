"""Training speed from mechanisms: one optimizer step, part by part.

A step runs ``grad_accum`` micro-batches on every data-parallel rank, then the optimizer. Per
micro-batch and GPU (``micro_batch x seq_len`` tokens, a 1/tp share of every weight):

- **GEMMs**: 2 x W FLOPs per token forward, 2 x W for input gradients, 2 x W for weight
  gradients (W: linear weights, planner.speed.layers); a frozen base (LoRA, QLoRA, LLaMA-Adapter)
  computes no weight gradient for its frozen weights (4 x W) and the adapters cost little FLOPs
  but memory traffic. Full recomputation (activation checkpointing) runs the forward again
  (Korthikanti et al. 2022, section 5). Rate: the recipe's dense peak (bf16; ``recipe: fp8``: the
  FP8 rate for the linear layers only, Micikevicius et al. 2022, 'FP8 Formats for Deep
  Learning') x the architecture's GEMM efficiency x the size factor of the micro-batch's rows
  and the hidden size (planner.speed.constants).
- **Attention scores** at FlashAttention-2's measured share of peak (eager: GEMM rate plus the
  score matrix's memory traffic).
- **Memory-bound kernels**: norms, rotary, activations, residuals and the loss over the vocabulary,
  eager or fused by stack (planner.speed.layers), at the streaming bandwidth; QLoRA dequantizes
  every NF4 weight to 16 bits before each matmul, forward and backward (bitsandbytes
  ``dequantize_4bit``: reads 0.5 B and writes 2 B per weight, per pass); FP8 casts.
- **Host overhead**: PyTorch eager launches ~100 operators per layer per micro-batch, ~10 us of host
  work each; the GPU waits when its kernels are shorter (the micro-batch takes the longer of the
  two). torch.compile and Unsloth's fused kernels launch far fewer.

Per step: the **optimizer** reads and writes every trainable parameter's states once (fused
kernels) or about three times (torch's foreach AdamW), at the memory bandwidth, or on the host at
its RAM bandwidth under ZeRO-Offload; **gradient clipping** (Transformers, Lightning) reads the
gradients once more; **communication** over the machine's links (NCCL ring: all-reduce 2(n-1)/n,
all-gather and reduce-scatter (n-1)/n of the bytes, nccl-tests PERFORMANCE.md): DDP all-reduces
gradients once per step behind the last backward, ZeRO-2 reduce-scatters every micro-batch,
ZeRO-3 / FSDP all-gather parameters twice and reduce-scatter gradients every micro-batch with
prefetch overlap, tensor parallelism all-reduces activations twice per layer forward and backward
(Shoeybi et al. 2019, section 3) with no overlap; **offload** transfers cross PCIe.

Importing this module does no work.
"""

from __future__ import annotations

from typing import Any

from planner.memory.quant import frozen_base_weights
from planner.speed.constants import (
    BANDWIDTH_EFFICIENCY,
    COLLECTIVE_EFFICIENCY,
    DEFAULT_NODE_LINK_BYTES_PER_S,
    EAGER_OP_S,
    FP8_GEMM_FACTOR,
    KERNEL_FLOOR_S,
    attention_efficiency,
    gemm_efficiency,
    gemm_size_factor,
)
from planner.speed.layers import token_costs
from planner.speed.result import Part, TrainingSpeed
from planner.speed.traffic import DEFAULT_HOST_BANDWIDTH, HOST_MBU, PCIE_EFFICIENCY
from planner.workload.recipes import OPTIMIZERS, RECIPES

#: Rows of one attention tile: FlashAttention-2 computes the scores in tiles of 128 queries (Dao 2023, section
#: 3.1; flash-attn csrc/flash_attn/src/flash_fwd_launch_template.h, run_mha_fwd_hdim128: kBlockM 128) and
#: masks inside the tiles a causal diagonal cuts; FlexAttention's BlockMask works in 128 x 128 blocks
#: (torch/nn/attention/flex_attention.py _DEFAULT_SPARSE_BLOCK_SIZE = 128). Along a short packed document
#: the cut tiles add about half a tile of keys a query: the span is timed as document_tokens + 128.
ATTENTION_TILE = 128
#: Stacks whose model code is eager PyTorch unless ``compile`` is set: per-op kernels and host overhead.
EAGER_STACKS = ("transformers", "deepspeed", "fsdp", "litgpt", "torchtune")
#: Optimizer implementations the stacks build for ``optimizer: adamw``: DeepSpeed's FusedAdam; the
#: others torch.optim.AdamW with its default foreach path (torchtune's configs ask fused: True).
FUSED_ADAMW_STACKS = ("deepspeed", "torchtune")
#: Stacks that clip gradients by default (Transformers' Trainer max_grad_norm 1.0, DeepSpeed's
#: gradient_clipping as the Trainer sets it, LitGPT's fabric.clip_gradients); torchtune's
#: clip_grad_norm is None by default.
CLIPPING_STACKS = ("transformers", "deepspeed", "fsdp", "litgpt", "unsloth")


def link_bytes_per_s(gpu: Any, group: int, gpus_per_node: int, *, per_lane: float, lanes: int,
                     node_link: float | None = None) -> tuple[float, str]:
    """One direction of the link a collective over ``group`` GPUs runs at, bytes/s, and its name.

    NVLink (SXM/OAM modules: Gpu.quoted_link_bytes_per_s; no quote includes a PCIe card's bridge):
    half the bidirectional ``interconnect``; otherwise PCIe (per-lane rate x lanes x PCIE_EFFICIENCY); a group larger than
    a machine runs at the slower of that and the inter-node link per GPU.
    """
    nvlink = float(getattr(gpu, "quoted_link_bytes_per_s", 0) or 0)
    sxm = str(getattr(gpu, "form_factor", "")).lower() in ("sxm", "oam")
    if nvlink > 0 and (sxm or group <= 2):
        bw, name = nvlink / 2, f"NVLink {nvlink / 2 / 1e9:,.0f} GB/s per direction"
    else:
        bw, name = per_lane * lanes * PCIE_EFFICIENCY, f"PCIe {per_lane * lanes * PCIE_EFFICIENCY / 1e9:,.1f} GB/s"
    if group > gpus_per_node:
        node = node_link or DEFAULT_NODE_LINK_BYTES_PER_S.value
        if node < bw:
            bw, name = node, f"inter-node {node / 1e9:,.0f} GB/s per GPU" + (
                "" if node_link else " (assumed: one 400 Gb/s NIC per GPU)")
    return bw, name


def _optimizer_bytes_per_param(t, recipe, framework: str) -> tuple[float, str]:
    """Bytes one optimizer step reads and writes per trainable parameter, and the implementation."""
    opt = OPTIMIZERS[t.optimizer]
    sb = opt.state_value_bytes or recipe.state_bytes
    if opt.fixed_state_bytes:
        sb = opt.fixed_state_bytes / max(opt.states, 1)
    pb = recipe.master_bytes or recipe.weight_bytes
    gb = recipe.grad_bytes
    copy = (recipe.master_bytes + recipe.weight_bytes) if recipe.master_bytes else 0  # master -> 16-bit weights
    if opt.name == "adafactor":
        return 2 * pb + 3 * gb + 40.0 + copy, "Transformers' Adafactor (a dozen fp32 ops per tensor)"
    foreach = opt.name == "adamw" and framework not in FUSED_ADAMW_STACKS
    if foreach:
        # lerp m; mul, addcmul v; sqrt, div, add on a temporary; addcdiv and weight decay on p
        return 4 * pb + 14 * sb + 3 * gb + copy, "torch AdamW, foreach (about ten passes over the states)"
    return 2 * pb + gb + 2 * opt.states * sb + copy, "one fused kernel (reads and writes each state once)"


def training_speed(w, est, gpu: Any, n: int, *, per_lane: float, lanes: int,
                   node_link: float | None = None, host_bandwidth: float | None = None) -> TrainingSpeed:
    """Seconds per optimizer step of training workload ``w`` on ``n`` GPUs of ``gpu``, by mechanism.

    Args:
        w: a planner.workload.spec.Workload with ``train`` options (its ``gpus`` is ``n``).
        est: its memory estimate (planner.memory.Estimate): trainable parameters.
        gpu: a catalog GPU (peak rates, bandwidth, architecture, links).
        n: GPUs used.
        per_lane, lanes: the host PCIe link (bytes/s per lane, lanes).
        node_link: inter-node bandwidth per GPU, bytes/s (None: assumed 50 GB/s when the run spans
            machines).
        host_bandwidth: host RAM bandwidth, bytes/s, for the offloaded optimizer step (None: dual
            channel DDR5-4800).

    Returns:
        :class:`TrainingSpeed`; tokens_per_s covers all GPUs.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    t = w.train
    arch = w.architecture
    recipe = RECIPES[t.recipe]
    fw = t.framework
    tp = max(t.tp, 1)
    dp = max(n // tp, 1)
    per_node = w.gpus_per_node or n
    fused = bool(t.compile) or fw == "unsloth"
    attention = "eager" if t.attention == "eager" else "flash"
    # packed documents attended one by one (Training.document_tokens): the scores span a document, plus half
    # a tile a query (:data:`ATTENTION_TILE`: the tiles the document's diagonal cuts are computed whole)
    span = (min(t.document_tokens + ATTENTION_TILE, t.seq_len) if t.document_tokens and attention != "eager"
            else t.seq_len)
    tc = token_costs(arch, seq_len=span, attention=attention, fused=fused)
    T = float(t.micro_batch * t.seq_len)  # tokens per micro-batch per data-parallel rank
    frozen = t.method != "full"
    recompute = t.checkpointing == "full"
    parts: list[Part] = []
    notes: list[str] = []

    # ----- GEMMs
    fp8 = t.recipe == "fp8"
    ge16 = gemm_efficiency(gpu)  # 16-bit GEMMs (the head; every linear outside recipe fp8)
    ge = gemm_efficiency(gpu, "fp8") if fp8 and getattr(gpu, "fp8_tflops", None) else ge16  # the linear layers
    size = gemm_size_factor(T * tc.expert_rows_share if arch.is_moe else T, arch.hidden_size)
    peak16 = float(gpu.bf16_tflops) * 1e12
    if recipe.dtype == "fp32":
        peak16 /= 2  # TF32 tensor cores: half the 16-bit rate (NVIDIA A100 datasheet: 156 vs 312)
    peak_lin = float(gpu.fp8_tflops) * 1e12 if fp8 and getattr(gpu, "fp8_tflops", None) else peak16
    W = tc.gemm_weights / tp
    head = tc.head_weights / tp
    passes_w = (2 if frozen else 4) + (2 if recompute else 0) + 2  # fwd 2 + dgrad 2 (+ wgrad 2) (+ recompute 2)
    # DoRA under lora_dropout runs each adapted module's base linear again on the dropped-out input (peft
    # tuners/lora/dora.py DoraLinearLayer.forward: base_result None), a forward and its input gradient
    dora_w = 0.0
    if frozen and t.use_dora and t.lora_dropout > 0 and t.lora_targets:
        dora_w = sum(m.weight_params * m.layers for m in arch.linear_modules() if m.name in t.lora_targets) / tp
    dora_passes = 4 + (2 if recompute else 0)
    lin_flops = passes_w * W * T + dora_passes * dora_w * T
    head_flops = (4 if frozen else 6) * head * T  # the head is never recomputed
    rate_lin = peak_lin * ge.value * size * (FP8_GEMM_FACTOR.value if fp8 else 1.0)
    rate_head = peak16 * ge16.value * size
    gemm_s = lin_flops / rate_lin + head_flops / rate_head
    parts.append(Part("gemm", gemm_s,
                      lambda: f"({passes_w} x {W:,.0f} layer weights + {(4 if frozen else 6)} x {head:,.0f} head"
                      + (f" + {dora_passes} x {dora_w:,.0f} DoRA's second base pass" if dora_w else "") + f") x {T:,.0f} "
                      f"tokens / ({peak_lin / 1e12:,.0f}{' FP8' if fp8 else ''} TFLOPS x {ge.value:g} GEMM efficiency x "
                      f"{size:.3f} size factor)", ge.source, ge.assumed))

    # ----- attention scores
    ae = attention_efficiency(gpu)
    heads_share = 1.0 / tp
    af = tc.attn_flops_fwd * T * heads_share
    if attention == "eager":
        a_fwd = af / (peak16 * ge16.value * size)
        attn_s = a_fwd * (3 + (1 if recompute else 0))
        score_bytes = 16.0 * arch.num_attention_heads * heads_share * t.seq_len * T * arch.num_hidden_layers
        attn_s += score_bytes * (3 + (1 if recompute else 0)) / (gpu.memory_bandwidth_bytes_per_s
                                                                  * BANDWIDTH_EFFICIENCY.value)
        a_text = "eager: score matmuls at the GEMM rate, 2 x backward, and the s x s scores' traffic"
    else:
        a_fwd = af / (peak16 * ae.value)
        attn_s = a_fwd * (1 + 2.5 + (1 if recompute else 0))
        a_text = (f"FlashAttention-2: forward + 2.5 x backward{' + recomputed forward' if recompute else ''}"
                  + (f"; packed documents of {t.document_tokens:,} tokens attended alone, + {ATTENTION_TILE} keys of "
                     "cut tiles" if span != t.seq_len else ""))
    parts.append(Part("attention", attn_s, lambda: f"{tc.attn_flops_fwd * heads_share:,.4g} FLOPs/token forward x {T:,.0f} "
                      f"tokens at {peak16 / 1e12:,.0f} TFLOPS x {ae.value if attention != 'eager' else ge16.value:g}; "
                      f"{a_text}", ae.source, ae.assumed))

    # ----- memory-bound kernels
    bw = gpu.memory_bandwidth_bytes_per_s * BANDWIDTH_EFFICIENCY.value
    elem = (tc.elementwise_bytes_fwd * (2 if recompute else 1) + tc.elementwise_bytes_bwd) / tp + tc.loss_bytes / tp
    mem_bytes = elem * T
    words = [lambda: f"{elem:,.0f} B/token ({'fused' if fused else 'eager'} norms, rotary, activation, residuals, "
                     f"loss) x {T:,.0f} tokens"]
    extra, extra_words = _adapter_and_cast_bytes(t, arch, tc, T=T, tp=tp, fused=fused, recompute=recompute, fp8=fp8)
    mem_bytes += extra
    words += extra_words
    mem_s = mem_bytes / bw
    parts.append(Part("memory-bound ops", mem_s, lambda: f"{''.join(x() for x in words)} / ({gpu.memory_bandwidth_bytes_per_s / 1e9:,.0f} GB/s x "
                      f"{BANDWIDTH_EFFICIENCY.value:g})", BANDWIDTH_EFFICIENCY.source))

    gpu_mb = gemm_s + attn_s + mem_s
    # ----- host overhead (eager launches)
    lora_ops = 0
    if frozen and t.lora_targets:
        # DoRA adds about 18 operators forward (eye, A, B, transpose, casts, the weight rebuild and its norm, the
        # magnitude's division and the output's scale-and-sums) and 6 backward per module (peft dora.py)
        lora_ops = (13 + (24 if t.use_dora else 0)) * sum(m.layers for m in arch.linear_modules()
                                                         if m.name in t.lora_targets)
    ops = tc.ops_fwd * (2 if recompute else 1) + tc.ops_bwd + lora_ops
    per_op = EAGER_OP_S if fw in EAGER_STACKS and not t.compile else KERNEL_FLOOR_S
    host_mb = ops * per_op.value
    stall = max(0.0, host_mb - gpu_mb)
    parts.append(Part("host overhead", stall * t.grad_accum,
                      f"{ops:,} operators x {per_op.value * 1e6:g} us = {host_mb * 1e3:.2f} ms per micro-batch against "
                      f"{gpu_mb * 1e3:.2f} ms of GPU work: the excess, x {t.grad_accum} micro-batches",
                      per_op.source, per_op.assumed))
    mb_s = max(gpu_mb, host_mb)

    opt_part, opt_s = _optimizer_part(t, recipe, fw, est, tp=tp, dp=dp, bw=bw, host_bandwidth=host_bandwidth)
    parts.append(opt_part)
    comm_parts, comm_s, off_s = _communication_parts(
        w, est, gpu, recipe, tp=tp, dp=dp, T=T, per_node=per_node, per_lane=per_lane, lanes=lanes,
        node_link=node_link, gpu_mb=gpu_mb, bwd_s=(gemm_s + attn_s + mem_s) * 2 / 3, recompute=recompute)
    parts += comm_parts

    step_s = mb_s * t.grad_accum + opt_s + comm_s + off_s
    tokens_step = T * t.grad_accum * dp
    tok_s = tokens_step / step_s
    model_flops = (4 if frozen else 6) * (tc.gemm_weights + tc.head_weights) + tc.attn_flops_fwd * (1 + 2)
    mfu = model_flops * tok_s / (n * float(gpu.bf16_tflops) * 1e12)
    assumed = any(p.assumed and p.seconds > 0.05 * step_s for p in parts)
    if fused:
        notes.append("fused elementwise kernels (torch.compile or Unsloth's Triton kernels)")
    return TrainingSpeed(tokens_per_s=tok_s, step_s=step_s, tokens_per_step=tokens_step, mfu=mfu,
                         model_flops_per_token=model_flops, parts=tuple(parts), assumed=assumed, notes=tuple(notes))


def _adapter_and_cast_bytes(t, arch, tc, *, T: float, tp: int, fused: bool, recompute: bool,
                            fp8: bool) -> tuple[float, list]:
    """Memory-bound bytes of one micro-batch beyond the layers' own ops (module docstring): LoRA
    adapters' dropout, A, B, scale and add; NF4 / int8 dequantization; FP8 casts. Returns (bytes,
    functions writing each term in words)."""
    frozen = t.method != "full"
    total = 0.0
    words: list = []
    if frozen and t.lora_targets:
        # each adapted module: dropout, A, B, scale, add on its input and output, forward and backward
        adapted = [m for m in arch.linear_modules() if m.name in t.lora_targets]
        # forward: dropout (r/w the input), A (reads the input), B (writes the output), scale and add (eager: two
        # kernels, 10 B per output value; fused: one, 6 B); backward about twice the forward
        out_b = 6 if fused else 10
        lora_b = sum(3 * (2 * m.in_features * (2 if t.lora_dropout > 0 else 1) + (2 + out_b) * m.out_features)
                     * m.layers for m in adapted) / tp
        total += lora_b * T
        words.append(lambda: f" + LoRA adapters {lora_b:,.0f} B/token")
        if t.use_dora:
            total_d, word = _dora_bytes(t, adapted, T=T, tp=tp, recompute=recompute)
            total += total_d
            words.append(word)
    quant_w = 0.0
    if t.load_in_4bit or t.method == "qlora":
        quant_w = 2.5  # NF4 read (0.5 B) + bf16 written (2 B), per weight and pass
    elif t.load_in_8bit:
        quant_w = 3.0  # int8 read (1 B) + bf16 written (2 B)
    if quant_w:
        dq_passes = 2 + (1 if recompute else 0)
        dq = dq_passes * quant_w * tc.gemm_weights / tp
        total += dq
        words.append(lambda: f" + dequantization {dq_passes} passes x {quant_w:g} B x {tc.gemm_weights / tp:,.0f} weights")
    if fp8:
        # per micro-batch: each weight read in 16 bits and written in FP8 with its transpose (3 B); per token and
        # linear: the input's amax and cast (read 2 x 2 B, write 1 B) and, for a weight that gets a gradient, its
        # transposed copy for the weight-gradient GEMM (3 B); the output gradient's amax and cast (5 B). A frozen
        # base weight (LoRA) has no weight-gradient GEMM, so its input needs no transposed copy (Transformer
        # Engine transformer_engine/pytorch/module/linear.py, _Linear.forward: backward_needs_input =
        # is_grad_enabled and weight.requires_grad).
        in_b = 5 if frozen else 8
        act_cast = sum((in_b * m.in_features + 5 * m.out_features) * m.layers for m in arch.linear_modules()
                       if m.part != "expert") / tp
        cast = 3.0 * tc.gemm_weights / tp + act_cast * T
        total += cast
        words.append(lambda: f" + FP8 casts {cast:,.0f} B (weights 3 B each, activations {act_cast:,.0f} B/token)")
    return total, words


def _dora_bytes(t, adapted, *, T: float, tp: int, recompute: bool) -> tuple[float, Any]:
    """Memory-bound bytes DoRA adds to a micro-batch (peft tuners/lora/dora.py, DoraLinearLayer.forward), and
    a function writing them in words. Every forward (and its recomputation) rebuilds each adapted weight:
    lora_B(lora_A(eye(in))) writes an in x out product in the adapters' dtype (the eye written and read, per
    in^2), cast to the input's dtype, then get_weight_norm reads the frozen weight, scales and adds the product
    and takes each row's norm (the norm is detached: no backward). Per token and adapted output value:
    (mag_norm_scale - 1) x base_result, mag_norm_scale x lora_result x scaling and their sum, added to the
    layer's result: 24 B forward, backward about twice that."""
    ab = 4 if t.adapter_dtype == "fp32" else 2
    cast = ab + 2 if ab != 2 else 0  # .to(x.dtype) of the product: a copy only when the dtypes differ
    per_weight = ab + cast + 4 + 6 + 2  # product written; cast; scale r2 w2; add r2 r2 w2; norm r2
    weights = sum((per_weight * m.in_features * m.out_features + 2 * ab * m.in_features ** 2) * m.layers
                  for m in adapted) / tp
    passes = 2 if recompute else 1
    per_token = sum(3 * 24 * m.out_features * m.layers for m in adapted) / tp
    total = passes * weights + per_token * T
    return total, (lambda: f" + DoRA {passes} x {weights:,.0f} B of weight rebuild and norm + {per_token:,.0f} B/token")


def _optimizer_part(t, recipe, fw: str, est, *, tp: int, dp: int, bw: float,
                    host_bandwidth: float | None) -> tuple[Part, float]:
    """The optimizer step of one training step (module docstring): (its part, seconds)."""
    parts: list[Part] = []
    # ----- optimizer step
    trainable = float(est.trainable_parameters)
    sharded = t.zero >= 1
    local = trainable / tp / (dp if sharded else 1)
    bpp, impl = _optimizer_bytes_per_param(t, recipe, fw)
    if t.offload_optimizer:
        hbw = (host_bandwidth or DEFAULT_HOST_BANDWIDTH) * HOST_MBU
        opt_bytes = local * (28.0 + recipe.weight_bytes)  # DeepSpeed CPU Adam on fp32 p, g, m, v
        opt_s = opt_bytes / hbw
        parts.append(Part("optimizer step", opt_s, lambda: f"{local:,.0f} params x {28 + recipe.weight_bytes} B on the host / "
                          f"({hbw / 1e9:,.1f} GB/s achieved host RAM bandwidth)",
                          "ZeRO-Offload (Ren et al. 2021, section 4.1): the Adam update runs on the CPU; DeepSpeed "
                          "CPUAdam streams fp32 parameters, gradients and both moments"))
    else:
        opt_bytes = local * bpp
        if fw in CLIPPING_STACKS:
            opt_bytes += local * recipe.grad_bytes * 3  # norm (read) and scale (read, write)
        opt_s = opt_bytes / bw
        parts.append(Part("optimizer step", opt_s, lambda: f"{local:,.0f} trainable params x {bpp:g} B ({impl})"
                          + (" + gradient clipping 3 x grad bytes" if fw in CLIPPING_STACKS else "")
                          + f" / {bw / 1e9:,.0f} GB/s", "PyTorch torch.optim.AdamW (foreach / fused implementations); "
                          "the bytes each pass reads and writes"))
    return parts[0], opt_s


def _communication_parts(w, est, gpu: Any, recipe, *, tp: int, dp: int, T: float, per_node: int, per_lane: float,
                         lanes: int, node_link: float | None, gpu_mb: float, bwd_s: float,
                         recompute: bool) -> tuple[list[Part], float, float]:
    """Data-parallel and tensor-parallel collectives and offload transfers of one step (module
    docstring): (their parts, exposed communication seconds, offload seconds)."""
    t = w.train
    arch = w.architecture
    fw = t.framework
    trainable = float(est.trainable_parameters)
    parts: list[Part] = []
    # ----- communication
    comm_s = 0.0
    if dp > 1:
        link, lname = link_bytes_per_s(gpu, dp, per_node, per_lane=per_lane, lanes=lanes, node_link=node_link)
        bus = link * COLLECTIVE_EFFICIENCY.value
        gbytes = trainable / tp * recipe.grad_bytes
        wbytes = stored_weight_bytes(w, est, recipe) / tp
        ring = (dp - 1) / dp
        if t.zero >= 3:
            per_mb = (2 * wbytes + gbytes) * ring / bus
            exposed = max(0.0, per_mb - gpu_mb) * t.grad_accum
            what = (f"ZeRO-3/FSDP: 2 all-gathers of {wbytes:,.0f} B + reduce-scatter of {gbytes:,.0f} B per micro-batch "
                    f"= {per_mb * 1e3:.2f} ms, overlapped with {gpu_mb * 1e3:.2f} ms of compute")
        elif t.zero >= 1:
            per_mb = gbytes * ring / bus
            gather = wbytes * ring / bus
            overlap = fw == "fsdp"
            exposed = (max(0.0, per_mb - gpu_mb) if overlap else per_mb) * t.grad_accum + gather
            what = (f"ZeRO-{t.zero}: reduce-scatter {gbytes:,.0f} B per micro-batch ({per_mb * 1e3:.2f} ms"
                    f"{', overlapped' if overlap else ', DeepSpeed overlap_comm off by default'}) + all-gather of the "
                    f"updated {wbytes:,.0f} B ({gather * 1e3:.2f} ms)")
        else:
            per_step = 2 * gbytes * ring / bus
            bwd_last = bwd_s
            exposed = max(0.0, per_step - bwd_last)
            what = (f"DDP: all-reduce of {gbytes:,.0f} B gradients once per step = {per_step * 1e3:.2f} ms, behind the "
                    f"last backward ({bwd_last * 1e3:.2f} ms)")
        comm_s += exposed
        parts.append(Part("data-parallel communication", exposed, lambda: f"{what}; {lname} x {COLLECTIVE_EFFICIENCY.value:g}",
                          COLLECTIVE_EFFICIENCY.source))
    if tp > 1:
        link, lname = link_bytes_per_s(gpu, tp, per_node, per_lane=per_lane, lanes=lanes, node_link=node_link)
        bus = link * COLLECTIVE_EFFICIENCY.value
        act = T * arch.hidden_size * recipe.compute_bytes
        calls = 4 * arch.num_hidden_layers * (1.5 if recompute else 1)
        tp_s = calls * (2 * (tp - 1) / tp * act / bus) * t.grad_accum
        comm_s += tp_s
        parts.append(Part("tensor-parallel all-reduces", tp_s, lambda: f"{calls:g} all-reduces of {act:,.0f} B per micro-batch "
                          f"x {t.grad_accum} over {lname} x {COLLECTIVE_EFFICIENCY.value:g}, not overlapped",
                          "Shoeybi et al. 2019 (Megatron-LM), section 3: two all-reduces per layer forward and two "
                          "backward"))
    off_s = 0.0
    if t.offload_optimizer or t.offload_params:
        pcie = per_lane * lanes * PCIE_EFFICIENCY
        moved = 0.0
        if t.offload_optimizer:
            moved += (recipe.grad_bytes + recipe.weight_bytes) * trainable / dp
        if t.offload_params:
            moved += (3 if recompute else 2) * stored_weight_bytes(w, est, recipe) * t.grad_accum
        off_s = moved / pcie
        parts.append(Part("offload transfers", off_s, lambda: f"{moved:,.0f} B per step over PCIe {pcie / 1e9:,.1f} GB/s "
                          "(not overlapped)", "ZeRO-Offload / ZeRO-Infinity (Ren et al. 2021; Rajbhandari et al. "
                          "2021): gradients down and updated 16-bit weights up each step; parameters each pass"))
    off_s += _paged_spill_part(est, gpu, parts, pcie=per_lane * lanes * PCIE_EFFICIENCY)
    return parts, comm_s, off_s


def stored_weight_bytes(w, est, recipe) -> float:
    """Bytes of the whole model's weights as the memory model stores them, which FSDP / ZeRO-3 gather
    and offload_params moves: a QLoRA / LLM.int8 base at its packed bytes (planner.memory.quant
    .frozen_base_weights, the function the memory model sizes it with: NF4 is about 0.5 B per
    parameter plus the quantization constants), otherwise the parameters x the recipe's weight bytes."""
    t = w.train
    if t.quantized_base:
        # the adapters (trainable, at the recipe's bytes) are gathered beside the packed base
        return float(frozen_base_weights(w.architecture, t, tp=1).total) + float(est.trainable_parameters) \
            * recipe.weight_bytes
    return float(est.parameters) * recipe.weight_bytes


def _paged_spill_part(est, gpu: Any, parts: list, *, pcie: float) -> float:
    """Seconds a step spends paging a paged optimizer's states through host RAM, appended to ``parts``.

    bitsandbytes' paged optimizers keep their states in CUDA unified memory (QLoRA, Dettmers et al. 2023,
    section 3, 'Paged Optimizers': the driver pages them to host RAM when the GPU is full). The states that
    do not fit beside the allocated peak (the card's usable memory less the estimate's GPU total) are
    evicted; every step's update reads and writes all of them, so those pages cross PCIe in and out again.
    bitsandbytes prefetches each parameter's states before its update and synchronizes after it
    (bitsandbytes optim/optimizer.py, Optimizer8bit.step: prefetch_state, then sync_gpu): no overlap.
    """
    unified = float(getattr(est, "per_gpu_unified_bytes", 0) or 0)
    usable = float(getattr(gpu, "memory_usable_bytes", 0) or getattr(gpu, "memory_bytes", 0) or 0)
    if not unified or not usable:
        return 0.0
    room = max(0.0, usable - float(est.per_gpu_total_bytes))
    spill = max(0.0, unified - room)
    if not spill:
        return 0.0
    s = 2 * spill / pcie
    parts.append(Part("paged optimizer states", s, lambda: f"{unified:,.0f} B of paged states, {room:,.0f} B free beside the "
                      f"{float(est.per_gpu_total_bytes):,.0f} B peak on a {usable:,.0f} B card: {spill:,.0f} B paged in and "
                      f"out each step over PCIe {pcie / 1e9:,.1f} GB/s (not overlapped)",
                      "Dettmers et al. 2023 (QLoRA), section 3 'Paged Optimizers'; bitsandbytes optim/optimizer.py "
                      "Optimizer8bit.step (prefetch_state before each update, sync_gpu after)"))
    return s
