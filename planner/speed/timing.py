"""Job times: how long a training run or a served request takes on given GPUs, as a :class:`JobTime`.

:func:`time_workload` times a workload with the speed model (planner.speed.training,
planner.speed.inference; docs/speed-model.md) and writes its parts as ``lines``. A scenario that
pins ``costs.mfu`` or ``costs.mbu`` gets the one-factor rule below instead (pure functions of
keyword arguments: seconds, FLOPs, bytes, bytes/s, TFLOPS), kept so that a user can reproduce a
figure measured on their own machine.

Training (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1):
a dense transformer costs about 2 x P FLOPs per token forward and 4 x P backward, so
C = 6 x P x T for T tokens. Full activation recomputation (gradient checkpointing) runs the
forward pass again: 8 x P x T (Korthikanti et al. 2022, section 5).
Kaplan's P excludes embeddings and the count leaves out attention-score FLOPs; this module uses
the model's parameters used per token (MoE: active experts only), which includes the
embedding and output head (about 4 % of a 7B Llama), and leaves attention scores out, which
under-counts at long sequences (Kaplan: 2 x L x s x d per token forward, 4 % of 6P at s=2048
for a 7B model).

LoRA / QLoRA: the frozen base still runs forward (2 x P x T) and backward through the inputs
of every layer (input gradients, 2 x P x T), but computes no weight gradients for frozen
weights (the other 2 x P x T of the 6). The A adapter parameters cost the full 6 x A x T. So
C = 4 x P x T + 6 x A x T (about 4PT, since A << P); with full recomputation add the extra
forward 2 x (P + A) x T.

Achieved compute = cards x dense bf16 TFLOPS x MFU. Model FLOPs utilization (MFU, Chowdhery
et al. 2022, PaLM, appendix B) is the share of peak that the model's FLOPs reach; PaLM reached
46 % on TPU v4; 30-50 % on large runs is a commonly quoted rule of thumb. PaLM counts
recomputation only in its hardware FLOPs utilization (HFU); since the FLOPs above include the
recomputed forward, the same default is applied to them, i.e. it is used as an HFU (the two
differ by the 8/6 factor only when checkpointing). The 16-bit figure is the GPU architecture's
(planner.speed.traffic.ARCH_MFU: Ampere 0.44, Hopper 0.41, Gaudi 2 0.60 from published runs, each
cited there; the others borrowed and marked as assumptions), times the catalog's ``mfu_scale``;
recipes keep their ratio to it (:data:`MFU_DEFAULTS`, each with its reasoning), methods their factor.
Decode's bandwidth share (MBU, :data:`DEFAULT_MBU`) is one figure for every card.

Inference (Pope et al. 2022, "Efficiently Scaling Transformer Inference", section 2): a decode
step reads every weight once for the whole batch and each sequence's KV cache, so at small
batches its time is bytes read / memory bandwidth; it also needs 2 x P FLOPs per generated
token, which bounds it at large batches. A mixture of experts reads only the routed experts its
batch uses: of a layer's E experts, a step of B sequences reads E x (1 - (1 - k/E)^B) on average
under uniform routing (planner.speed.traffic), k at B = 1, so Mixtral at batch 1 reads 2 of its 8
experts per layer and the rest of the model in full. A step takes the larger of the two times. Prefill
costs 2 x P FLOPs per prompt token and is compute bound. Bandwidth achieved is peak x MBU
(model bandwidth utilization): :data:`DEFAULT_MBU`.

A request (inference with ``tokens_per_request``): ``tokens_per_request`` is the tokens generated
per request, and the prompt is a scenario ``slo:`` block's ``prompt_tokens`` where it gives one
(``Inference.prompt_tokens``: the request its targets are checked with is the one priced), else
the rest of the context, context - tokens_per_request tokens. That split is an assumption (a
workload alone gives no prompt length): every request fills its
context, the longest prefill and KV cache the workload's memory plan was sized for. A request
needs at least one prompt token (vLLM refuses an empty prompt; Transformers' generate starts from
at least the BOS token), so tokens_per_request must be below the context: the readers refuse more
(planner.cli.compare), and :func:`time_workload` raises ValueError rather than shorten a request.

Offload: bytes moved between host and GPU each step cross the card's PCIe link at
per-lane rate x lanes x :data:`PCIE_EFFICIENCY`; this time is added to compute (no overlap
assumed, so it is an upper bound). llama.cpp with blocks in host RAM uploads those blocks'
weights for every prompt ubatch (:func:`llamacpp_prefill_upload`), added to the prefill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from planner.speed.traffic import (
    DEFAULT_HOST_BANDWIDTH,
    DEFAULT_MBU,
    DEFAULT_MFU,
    HOST_MBU,
    PCIE_EFFICIENCY,
    arch_mfu,
    decode_reads,
    llamacpp_prefill_upload,
)
from planner.speed.training import stored_weight_bytes
from planner.workload.recipes import RECIPES

SECONDS_PER_HOUR = 3600.0

# PCIE_EFFICIENCY, DEFAULT_MBU, HOST_MBU and DEFAULT_HOST_BANDWIDTH (their reasons are there) live in
# planner.speed.traffic, which the solver's speed constraint shares.


@dataclass(frozen=True)
class MfuDefault:
    """A default MFU and why."""

    value: float
    reason: str


#: Default MFU by precision recipe (see planner.workload.recipes). Values are relative to the card's
#: dense BF16 tensor rate (``bf16_tflops`` in the catalog) and are ASSUMPTIONS unless a source
#: is named. Override with the scenario's ``costs.mfu``.
MFU_DEFAULTS: dict[str, MfuDefault] = {
    **{r: MfuDefault(0.40, "assumption: 16-bit tensor-core training; within the 30-50 % commonly quoted "
                           "for large runs (a rule of thumb) and below PaLM's 46 % (Chowdhery et al. 2022, "
                           "app. B), since single-node fine-tuning uses small batches")
       for r in ("mixed-bf16", "mixed-fp16", "mixed-bf16-fp32-grads", "mixed-fp16-fp32-grads",
                 "pure-bf16", "pure-fp16")},
    **{r: MfuDefault(0.35, "assumption: torch AMP adds a cast of every weight per use (autocast) to 16-bit "
                           "training's 0.40")
       for r in ("amp-bf16", "amp-fp16")},
    "fp32": MfuDefault(0.20, "assumption: TF32 matmuls run at half the BF16 tensor rate on Ampere/Hopper "
                             "(A100 156 vs 312 TFLOPS dense, NVIDIA A100 datasheet), so 0.40 x 0.5; with TF32 "
                             "off (PyTorch's default for matmuls) fp32 runs on CUDA cores and MFU is far lower"),
}

#: Multipliers on the recipe's MFU for adapter methods: assumptions.
METHOD_MFU_FACTOR: dict[str, MfuDefault] = {
    "full": MfuDefault(1.0, ""),
    "lora": MfuDefault(0.9, "assumption: LoRA's small adapter matmuls run far below peak (x0.9)"),
    "qlora": MfuDefault(0.7, "assumption: QLoRA dequantizes each NF4 weight to 16-bit before every matmul, "
                             "forward and backward (bitsandbytes matmul_4bit), costing roughly a third of the "
                             "step (x0.7)"),
    "adapter": MfuDefault(0.9, "assumption: as LoRA, LLaMA-Adapter's prefix attention is small next to the frozen "
                               "base's matmuls (x0.9)"),
    "lora-int8": MfuDefault(0.5, "assumption, not measured for training: LoRA on an LLM.int8 base quantizes every "
                                 "linear's input, splits off its outlier columns and dequantizes the int8 result in "
                                 "the forward, and dequantizes the weight for the input gradient (bitsandbytes "
                                 "MatMul8bitLt); for inference Petals found bitsandbytes 0.40's NF4 about 2x faster "
                                 "than its int8 (bigscience-workshop/petals PR 340); taken below QLoRA's x0.7 (x0.5)"),
}

#: Default MFU of prefill (inference): assumption, the same as 16-bit training.
PREFILL_MFU = MfuDefault(DEFAULT_MFU, "assumption: prefill is large 16-bit matmuls, as in training (0.40)")


def default_mfu(*, recipe: str, method: str = "full", gpu: Any = None) -> MfuDefault:
    """The default MFU of a training workload: recipe default x method factor.

    ``method`` is a key of :data:`METHOD_MFU_FACTOR`: a training method, or 'lora-int8' for LoRA
    with ``load_in_8bit``. With ``gpu``, the 16-bit figure is its architecture's
    (planner.speed.traffic.arch_mfu: published runs per architecture, times the catalog's
    ``mfu_scale``) in place of the one 0.40, and the recipe's default keeps its ratio to 0.40 (AMP
    x 0.875, fp32 x 0.5); without it, :data:`MFU_DEFAULTS` as they are.

    Raises:
        KeyError: unknown recipe or method (callers pass validated names).
    """
    base = MFU_DEFAULTS[recipe]
    if gpu is not None:
        arch = arch_mfu(gpu)
        ratio = base.value / DEFAULT_MFU
        words = f"{getattr(gpu, 'architecture', '?')} 16-bit training MFU {arch.value:.3g} ({arch.source})"
        if abs(ratio - 1.0) > 1e-9:
            words += f"; x {ratio:g} for recipe {recipe} ({base.reason})"
        base = MfuDefault(round(arch.value * ratio, 6), words)
    factor = METHOD_MFU_FACTOR[method]
    if factor.value == 1.0:
        return base
    return MfuDefault(round(base.value * factor.value, 6), f"{base.reason}; {factor.reason}")


# ----- training ---------------------------------------------------------------------------------

def training_flops(*, params: float, tokens: float, method: str = "full", adapter_params: float = 0,
                   checkpointing: str = "none", recomputed_base_params: float = 0) -> float:
    """Model FLOPs of one training run (see the module docstring for the derivation).

    full: 6 x P x T (8 x P x T with full recomputation).
    lora / qlora: 4 x P x T + 6 x A x T (+ 2 x (P + A) x T with full recomputation), + 4 x D x T
    (+ 2 x D x T with full recomputation) where DoRA with lora_dropout runs each adapted module's
    base linear again on the dropped-out input: a forward (2 x D) and its input gradient (2 x D)
    (peft tuners/lora/dora.py, ``base_result`` None under dropout).

    Args:
        params: P, parameters used per token (MoE: active).
        tokens: T, tokens processed (dataset tokens x epochs).
        method: 'full', or a frozen base: 'lora', 'qlora' or 'adapter' (LitGPT's LLaMA-Adapter).
        adapter_params: A, trainable adapter parameters (LoRA/QLoRA, the adapter's).
        checkpointing: 'none' or 'full'.
        recomputed_base_params: D, weights of the adapted modules whose base output DoRA computes
            a second time (0 without DoRA or without lora_dropout).
    """
    if method == "full":
        flops = 6.0 * params * tokens
        if checkpointing == "full":
            flops += 2.0 * params * tokens
        return flops
    flops = 4.0 * params * tokens + 6.0 * adapter_params * tokens + 4.0 * recomputed_base_params * tokens
    if checkpointing == "full":
        flops += 2.0 * (params + adapter_params + recomputed_base_params) * tokens
    return flops


def compute_seconds(*, flops: float, gpus: int, tflops_per_gpu: float, mfu: float) -> float:
    """Seconds to do ``flops`` on ``gpus`` cards: FLOPs / (cards x TFLOPS x 1e12 x MFU)."""
    if gpus <= 0 or tflops_per_gpu <= 0 or mfu <= 0:
        raise ValueError("gpus, tflops_per_gpu and mfu must be positive")
    return flops / (gpus * tflops_per_gpu * 1e12 * mfu)


def pcie_bytes_per_s(*, per_lane_bytes_per_s: float, lanes: int, efficiency: float = PCIE_EFFICIENCY) -> float:
    """Achieved host<->GPU rate, one direction: per-lane rate x lanes x efficiency."""
    return per_lane_bytes_per_s * lanes * efficiency


def transfer_seconds(*, bytes_moved: float, bytes_per_s: float) -> float:
    """Seconds to move ``bytes_moved`` at ``bytes_per_s``."""
    if bytes_moved == 0:
        return 0.0
    if bytes_per_s <= 0:
        raise ValueError("bytes_per_s must be positive")
    return bytes_moved / bytes_per_s


def offload_bytes_per_gpu(*, params: float, trainable_params: float, data_parallel: int, micro_batches: float,
                          optimizer_steps: float, offload_optimizer: bool, offload_params: bool,
                          weight_bytes: float = 2.0, grad_bytes: float = 2.0, checkpointing: str = "none") -> float:
    """Bytes crossing one GPU's PCIe link in a run, for ZeRO-Offload / ZeRO-Infinity.

    - offload_optimizer (ZeRO-Offload, Ren et al. 2021, section 4): every optimizer step each
      rank sends its 1/N share of the gradients to the host and receives its updated 16-bit
      parameters: (grad_bytes + weight_bytes) x trainable / N per step.
    - offload_params (ZeRO-Infinity, Rajbhandari et al. 2021): parameters live in host RAM and
      every forward and backward pass (and the recomputed forward) brings all of them to each
      GPU, from the host or from peers over the same PCIe fabric: passes x weight_bytes x P per
      micro-batch (an upper bound: peers over NVLink would not use PCIe).
    """
    total = 0.0
    if offload_optimizer:
        total += (grad_bytes + weight_bytes) * trainable_params / data_parallel * optimizer_steps
    if offload_params:
        passes = 3 if checkpointing == "full" else 2
        total += passes * weight_bytes * params * micro_batches
    return total


# ----- inference --------------------------------------------------------------------------------

def decode_step_seconds(*, weight_bytes: float, kv_bytes_per_token: float, kv_tokens: float, concurrency: int,
                        bandwidth_bytes_per_s: float, mbu: float, params: float, tflops: float,
                        mfu: float) -> tuple[float, float]:
    """One decode step for ``concurrency`` sequences on one GPU (its share under tensor parallel).

    Memory time = (weights + concurrency x KV bytes per token x KV tokens per sequence) /
    (bandwidth x MBU); compute time = 2 x P x concurrency / (TFLOPS x 1e12 x MFU). The step takes
    the larger (Pope et al. 2022, section 2).

    Args:
        weight_bytes: weight bytes on this GPU (read once per step for the whole batch).
        kv_bytes_per_token: KV cache bytes per token of one sequence on this GPU.
        kv_tokens: tokens in each sequence's KV cache at this step (use the mean over a request).
        params: parameters this GPU computes with per token (P / tp).

    Returns:
        (memory seconds, compute seconds); the step time is the max.
    """
    read = weight_bytes + concurrency * kv_bytes_per_token * kv_tokens
    mem_s = read / (bandwidth_bytes_per_s * mbu)
    comp_s = 2.0 * params * concurrency / (tflops * 1e12 * mfu)
    return mem_s, comp_s


def prefill_seconds(*, params: float, tokens: float, tflops: float, mfu: float) -> float:
    """Prefill of ``tokens`` prompt tokens: 2 x P x tokens / (TFLOPS x 1e12 x MFU) (Kaplan et al. 2020, section 2.1)."""
    return 2.0 * params * tokens / (tflops * 1e12 * mfu)


# ----- assembling one workload on one kind of GPU -------------------------------------------------

@dataclass(frozen=True)
class JobTime:
    """How fast a workload runs on a given set of GPUs.

    Attributes:
        job: what one job is, in words ('one training run of 1.0e8 tokens', 'one request ...').
        job_tokens: tokens per job (training: tokens processed; inference: generated), or None.
        seconds_per_job: machine seconds per job (inference: amortized over the batch), or None
            when the job size is unknown.
        tokens_per_s: training: tokens processed per second; inference: tokens generated per second.
        compute_s, transfer_s: the parts of ``seconds_per_job`` (transfer: PCIe offload).
        mfu, mfu_reason: the MFU used and why.
        flops_per_token: training only: the FLOPs one trained token costs (planner.speed.timing's
            training_flops at one token), or None.
        requests_per_hour_capacity: inference only: requests the GPUs serve per hour.
        lines: the arithmetic, one step per line.
        assumed: the time rests on an assumed rate (no published measurement for this card's
            architecture): the console says "assumed" beside it.
    """

    job: str
    job_tokens: float | None
    seconds_per_job: float | None
    tokens_per_s: float
    compute_s: float | None = None
    transfer_s: float | None = None
    mfu: float = 0.0
    mfu_reason: str = ""
    requests_per_hour_capacity: float | None = None
    lines: tuple[str, ...] = field(default=())
    flops_per_token: float | None = None
    assumed: bool = False

    @property
    def hours_per_job(self) -> float | None:
        return None if self.seconds_per_job is None else self.seconds_per_job / SECONDS_PER_HOUR


def _tflops_for(gpu, dtype: str) -> float:
    if dtype == "fp8" and getattr(gpu, "fp8_tflops", None):
        return float(gpu.fp8_tflops)
    return float(gpu.bf16_tflops)


def time_workload(*, workload, estimate, gpu, gpu_count: int, pcie_per_lane_bytes_per_s: float,
                  pcie_lanes: int | None = None, mfu: float | None = None, mbu: float = DEFAULT_MBU,
                  host_bandwidth_bytes_per_s: float | None = None, node_link_bytes_per_s: float | None = None) -> JobTime:
    """Time one workload on ``gpu_count`` cards of ``gpu``.

    Training runs data-parallel over the cards (the workload's tensor-parallel degree kept);
    inference runs ``gpu_count // tp`` independent replicas of tp cards each. The speed model
    (planner.speed.training, planner.speed.inference) times every mechanism; a scenario that pins
    ``costs.mfu`` or ``costs.mbu`` gets the one-factor rule of this module's docstring instead.

    Args:
        workload: a :class:`planner.workload.spec.Workload` (its gpus already equal to ``gpu_count``
            for training).
        estimate: the workload's :class:`planner.memory.Estimate` on these cards.
        gpu: a :class:`planner.catalog.gpus.Gpu`.
        gpu_count: cards used.
        pcie_per_lane_bytes_per_s: the host link's per-lane rate (the slower of card and host).
        pcie_lanes: lanes of the link (default: the card's).
        mfu: a pinned MFU (``costs.mfu``): the one-factor rule for training and prefill.
        mbu: a pinned bandwidth utilization for decode (``costs.mbu``; the default keeps the model).
        host_bandwidth_bytes_per_s: the platform's RAM peak (channels x MT/s x 8 B), for llama.cpp
            layers left in host RAM and the offloaded optimizer step (None: dual-channel DDR5-4800).
        node_link_bytes_per_s: inter-node bandwidth per GPU when the run spans machines (None:
            planner.speed.constants.DEFAULT_NODE_LINK_BYTES_PER_S, assumed).
    """
    lanes = pcie_lanes or gpu.pcie_lanes
    pinned = mfu is not None or mbu != DEFAULT_MBU
    if workload.task == "train":
        if pinned:
            return _time_training(workload, estimate, gpu, gpu_count, pcie_per_lane_bytes_per_s, lanes, mfu)
        return _model_training(workload, estimate, gpu, gpu_count, pcie_per_lane_bytes_per_s, lanes,
                               host_bandwidth_bytes_per_s, node_link_bytes_per_s)
    if pinned:
        return _time_inference(workload, estimate, gpu, gpu_count, mfu, mbu, host_bandwidth_bytes_per_s,
                               pcie_bytes_per_s(per_lane_bytes_per_s=pcie_per_lane_bytes_per_s, lanes=lanes))
    return _model_inference(workload, estimate, gpu, gpu_count, pcie_per_lane_bytes_per_s, lanes,
                            host_bandwidth_bytes_per_s)


def _request_line(i, gen: int, prompt: int) -> str:
    """The request timed, and where its prompt length comes from."""
    if i.prompt_tokens:
        return (f"request = {prompt:,} prompt + {gen:,} generated tokens (the slo: block's prompt_tokens and "
                f"output_tokens), in a context of {i.context:,}")
    return (f"request = context {i.context:,} tokens = {gen:,} generated (tokens_per_request) + {prompt:,} "
            "prompt (assumed: the rest of the context; the workload gives no prompt length)")


def _part_lines(parts) -> list[str]:
    return [f"{p.name}: {p.seconds * 1e3:,.3f} ms = {p.formula}" + (" (assumed rate)" if p.assumed else "")
            for p in parts if p.seconds > 0]


def _model_training(w, est, gpu, n: int, per_lane: float, lanes: int, host_bw: float | None,
                    node_link: float | None) -> JobTime:
    from planner.speed.training import training_speed

    ts = training_speed(w, est, gpu, n, per_lane=per_lane, lanes=lanes, node_link=node_link, host_bandwidth=host_bw)
    t = w.train
    scale = float(getattr(gpu, "mfu_scale", 1.0) or 1.0)
    reason = ("modelled (planner.speed.training): GEMMs, attention, memory-bound kernels, optimizer step and "
              "communication" + ("; rests on an assumed rate" if ts.assumed else "")
              + (f"; GEMM efficiency x {scale:g} catalog mfu_scale for {gpu.id}'s software stack" if scale != 1.0 else ""))
    lines = [f"step of {ts.tokens_per_step:,.0f} tokens = {ts.step_s:,.4f} s on {n} GPU(s) -> "
             f"{ts.tokens_per_s:,.1f} tokens/s (MFU {ts.mfu:.3f})", *_part_lines(ts.parts)]
    transfer_share = sum(p.seconds for p in ts.parts if p.name == "offload transfers") / ts.step_s
    if t.dataset_tokens is None:
        return JobTime(job="training (no dataset_tokens: no job to time)", job_tokens=None, seconds_per_job=None,
                       tokens_per_s=ts.tokens_per_s, mfu=ts.mfu, mfu_reason=reason, lines=tuple(lines),
                       flops_per_token=ts.model_flops_per_token, assumed=ts.assumed)
    tokens = t.dataset_tokens * t.epochs
    total = tokens / ts.tokens_per_s
    lines.insert(0, f"tokens = {t.dataset_tokens:,} dataset tokens x {t.epochs:g} epoch(s) = {tokens:,.0f}")
    lines.append(f"time = {tokens:,.0f} tokens / {ts.tokens_per_s:,.1f} tokens/s = {total:,.0f} s = {total / 3600:,.2f} h")
    return JobTime(job=f"one training run of {tokens:,.0f} tokens", job_tokens=tokens, seconds_per_job=total,
                   tokens_per_s=ts.tokens_per_s, compute_s=total * (1 - transfer_share),
                   transfer_s=total * transfer_share, mfu=ts.mfu, mfu_reason=reason, lines=tuple(lines),
                   flops_per_token=ts.model_flops_per_token, assumed=ts.assumed)


def _model_inference(w, est, gpu, n: int, per_lane: float, lanes: int, host_bw: float | None) -> JobTime:
    from planner.speed.inference import inference_speed

    i = w.infer
    replicas = max(n // i.tp, 1)
    gen = i.tokens_per_request
    if gen is not None and gen >= i.context:
        # never shortened to fit: the scenario readers refuse it (planner.cli.compare)
        raise ValueError(f"tokens_per_request {gen} leaves no prompt token in the context of {i.context} "
                         "tokens (it must be below the context)")
    prompt = i.context // 2 if gen is None else (i.prompt_tokens or i.context - gen)
    sp = inference_speed(w, est, gpu, prompt_tokens=max(prompt, 1), output_tokens=gen or 1, per_lane=per_lane,
                         lanes=lanes, host_bandwidth=host_bw)
    reason = ("modelled (planner.speed.inference): prefill at the engine's kernel rate, decode bytes over bandwidth "
              "plus per-layer costs" + ("; rests on an assumed rate" if sp.assumed else ""))
    c = sp.concurrency
    lines = [f"decode step at {c} sequence(s) = {sp.tpot_s * 1e3:.3f} ms; TTFT of a {sp.prompt_tokens:,}-token prompt "
             f"= {sp.ttft_s:.3f} s", *_part_lines(sp.parts)]
    decode_tps = replicas * c / sp.tpot_s
    if gen is None:
        lines.append(f"throughput = {replicas} replica(s) x {c} seq / {sp.tpot_s * 1e3:.3f} ms = {decode_tps:,.1f} tokens/s")
        return JobTime(job="serving (no tokens_per_request: no request to time)", job_tokens=None,
                       seconds_per_job=None, tokens_per_s=decode_tps, mfu=0.0, mfu_reason=reason, lines=tuple(lines),
                       assumed=sp.assumed)
    lines.insert(0, _request_line(i, gen, prompt))
    batch_s = sp.batch_prefill_s + gen * sp.tpot_s
    per_request = batch_s / (c * replicas)
    capacity = SECONDS_PER_HOUR / per_request
    tps = gen / per_request
    lines.append(f"batch of {c} requests = {sp.batch_prefill_s:.3f} s prefill + {gen:,} steps x {sp.tpot_s * 1e3:.3f} ms "
                 f"= {batch_s:.3f} s; {replicas} replica(s) -> {per_request:.4f} machine-s per request, "
                 f"{capacity:,.0f} requests/h, {tps:,.1f} generated tokens/s")
    return JobTime(job=f"one request ({prompt:,} prompt + {gen:,} generated tokens)", job_tokens=float(gen),
                   seconds_per_job=per_request, tokens_per_s=tps, compute_s=per_request, transfer_s=0.0, mfu=0.0,
                   mfu_reason=reason, requests_per_hour_capacity=capacity, lines=tuple(lines), assumed=sp.assumed)


def _time_training(w, est, gpu, n: int, per_lane: float, lanes: int, mfu_override: float | None) -> JobTime:
    t = w.train
    arch = w.architecture
    params = float(arch.active_parameters)
    adapters = float(est.trainable_parameters) if t.method != "full" else 0.0
    if mfu_override is not None:
        mfu, reason = mfu_override, "given in the scenario (costs.mfu)"
    else:
        d = default_mfu(recipe=t.recipe, method="lora-int8" if t.load_in_8bit else "qlora" if t.load_in_4bit
                        else t.method, gpu=gpu)
        mfu, reason = d.value, d.reason
    recipe = RECIPES[t.recipe]
    tflops = float(gpu.bf16_tflops)
    recomputed = 0.0
    if t.method != "full" and t.use_dora and t.lora_dropout > 0:
        recomputed = float(sum(m.weight_params for m in arch.linear_modules() if m.name in t.lora_targets)
                           * arch.num_hidden_layers)
    per_token = training_flops(params=params, tokens=1.0, method=t.method, adapter_params=adapters,
                               checkpointing=t.checkpointing, recomputed_base_params=recomputed)
    if t.method == "full":
        ftext = f"{8 if t.checkpointing == 'full' else 6} x P"
    else:
        ftext = "4 x P + 6 x A" + (" + 4 x D" if recomputed else "")
        if t.checkpointing == "full":
            ftext += " + 2 x (P + A" + (" + D" if recomputed else "") + ") (recomputation)"
    lines = [f"FLOPs per token = {ftext} = {per_token:,.4g} (P = {params:,.0f}"
             + (f", A = {adapters:,.0f} adapter params" if adapters else "")
             + (f", D = {recomputed:,.0f} adapted weights whose base output DoRA recomputes under lora_dropout"
                if recomputed else "") + ")",
             f"achieved compute = {n} GPU(s) x {tflops:g} TFLOPS ({gpu.id} dense bf16) x MFU {mfu:g} = "
             f"{n * tflops * mfu:,.4g} TFLOPS",
             f"MFU {mfu:g}: {reason}"]
    compute_per_token = per_token / (n * tflops * 1e12 * mfu)
    dp = max(n // t.tp, 1)
    tokens_per_micro = t.micro_batch * t.seq_len
    bw = pcie_bytes_per_s(per_lane_bytes_per_s=per_lane, lanes=lanes)
    offloaded = t.offload_optimizer or t.offload_params
    transfer_per_token = 0.0
    if offloaded:
        micro_per_token = 1.0 / (tokens_per_micro * dp)
        steps_per_token = micro_per_token / t.grad_accum
        moved = offload_bytes_per_gpu(params=params, trainable_params=est.trainable_parameters, data_parallel=dp,
                                      micro_batches=micro_per_token, optimizer_steps=steps_per_token,
                                      offload_optimizer=t.offload_optimizer, offload_params=t.offload_params,
                                      weight_bytes=stored_weight_bytes(w, est, recipe) / float(est.parameters),
                                      grad_bytes=float(recipe.grad_bytes),
                                      checkpointing=t.checkpointing)
        transfer_per_token = transfer_seconds(bytes_moved=moved, bytes_per_s=bw)
        lines.append(f"PCIe per GPU = {per_lane / 1e9:.3f} GB/s x {lanes} lanes x {PCIE_EFFICIENCY:g} = "
                     f"{bw / 1e9:.2f} GB/s; offload moves {moved:,.4g} B per token per GPU "
                     f"(added, no overlap assumed)")
    seconds_per_token = compute_per_token + transfer_per_token
    tokens_per_s = 1.0 / seconds_per_token
    lines.append(f"throughput = {tokens_per_s:,.1f} tokens/s")
    if t.dataset_tokens is None:
        return JobTime(job="training (no dataset_tokens: no job to time)", job_tokens=None,
                       seconds_per_job=None, tokens_per_s=tokens_per_s, mfu=mfu, mfu_reason=reason,
                       lines=tuple(lines))
    tokens = t.dataset_tokens * t.epochs
    compute_s = compute_per_token * tokens
    transfer_s = transfer_per_token * tokens
    lines.insert(0, f"tokens = {t.dataset_tokens:,} dataset tokens x {t.epochs:g} epoch(s) = {tokens:,.0f}")
    lines.append(f"time = {per_token * tokens:,.4g} FLOPs / {n * tflops * mfu:,.4g} TFLOPS"
                 + (f" + {transfer_s:,.0f} s PCIe" if transfer_s else "")
                 + f" = {compute_s + transfer_s:,.0f} s = {(compute_s + transfer_s) / 3600:,.2f} h")
    return JobTime(job=f"one training run of {tokens:,.0f} tokens", job_tokens=tokens,
                   seconds_per_job=compute_s + transfer_s, tokens_per_s=tokens_per_s, compute_s=compute_s,
                   transfer_s=transfer_s, mfu=mfu, mfu_reason=reason, lines=tuple(lines),
                   flops_per_token=per_token)


def _time_inference(w, est, gpu, n: int, mfu_override: float | None, mbu: float,
                    host_bw: float | None = None, pcie_bw: float | None = None) -> JobTime:
    i = w.infer
    arch = w.architecture
    tp = i.tp
    replicas = max(n // tp, 1)
    # llama.cpp's layer split runs a token through its GPUs one after the other: each step reads
    # every GPU's layers and computes every layer, so the replica's times add up over its GPUs
    split = i.engine == "llama.cpp"
    params_gpu = float(arch.active_parameters) / (1 if split else tp)
    if mfu_override is not None:
        mfu, reason = mfu_override, "given in the scenario (costs.mfu)"
    else:
        a = arch_mfu(gpu)
        mfu, reason = a.value, f"prefill: large 16-bit matmuls, as in training: {a.source}"
    fp8 = i.weights == "fp8" or (i.scheme is not None and i.scheme.activations == "fp8")
    tflops = _tflops_for(gpu, "fp8" if fp8 else "bf16")
    c = i.concurrency
    gen = i.tokens_per_request
    if gen is not None and gen >= i.context:
        # never shortened to fit: the scenario readers refuse it (planner.cli.compare)
        raise ValueError(f"tokens_per_request {gen} leaves no prompt token in the context of {i.context} "
                         "tokens (it must be below the context)")
    prompt = 0 if gen is None else (i.prompt_tokens or i.context - gen)
    dr = decode_reads(w, est)  # planner.speed.traffic: weights (routed experts at their share) and KV read
    bw = gpu.memory_bandwidth_bytes_per_s
    hbw = host_bw or DEFAULT_HOST_BANDWIDTH
    gpu_s, host_s, comp_s = dr.seconds(gpu_bandwidth=bw, host_bandwidth=hbw, tflops=tflops, mfu=mfu, mbu=mbu)
    mem_s = gpu_s + host_s
    E, k = arch.num_local_experts, arch.num_experts_per_tok
    read_text = (f"{dr.weights:,.0f} B weights" if not arch.is_moe else
                 f"{dr.weights_read:,.0f} B of the {dr.weights:,.0f} B weights (routed experts {dr.experts:,.0f} B x "
                 f"{dr.expert_share:.4f} = 1 - (1 - {k}/{E})^{c}, the expected share {c} token(s) use)")
    host_line = ""
    if dr.host_blocks:
        # llama.cpp: blocks left in host RAM run on the CPU after the GPU's; a token reads the GPU
        # layers at the card's bandwidth and the host blocks at the platform's (Pope et al. 2022,
        # sec. 2: decode time = bytes read / bandwidth), one after the other
        host_line = (f"; + host RAM: {dr.host_bytes:,.0f} B of the {dr.host_blocks} blocks in RAM "
                     f"and their KV / ({hbw / 1e9:,.1f} GB/s{'' if host_bw else ' (assumed dual-channel DDR5-4800)'} "
                     f"x {HOST_MBU:g}) = {host_s * 1e3:.3f} ms, added")
    step = max(mem_s, comp_s)
    where = f"per replica, its {tp} GPUs one after the other" if split and tp > 1 else "per GPU"
    lines = [f"decode step ({where}) = max(memory {read_text} + {c} seq x {dr.kv_per_token:,.0f} B/token x "
             f"{dr.mean_kv:,.0f} tokens ({dr.mean_kv_text}) / ({bw / 1e9:,.0f} GB/s x MBU {mbu:g}){host_line} = "
             f"{mem_s * 1e3:.3f} ms, compute 2 x {params_gpu:,.0f} x {c} / ({tflops:g} TFLOPS x MFU {mfu:g}) = "
             f"{comp_s * 1e3:.3f} ms) = {step * 1e3:.3f} ms ({'memory' if mem_s >= comp_s else 'compute'} bound)"]
    decode_tps = replicas * c / step
    if gen is None:
        lines.append(f"throughput = {replicas} replica(s) x {c} seq / {step * 1e3:.3f} ms = {decode_tps:,.1f} tokens/s")
        return JobTime(job="serving (no tokens_per_request: no request to time)", job_tokens=None,
                       seconds_per_job=None, tokens_per_s=decode_tps, mfu=mfu, mfu_reason=reason, lines=tuple(lines))
    lines.insert(0, _request_line(i, gen, prompt))
    pre_s = prefill_seconds(params=params_gpu, tokens=prompt * c, tflops=tflops, mfu=mfu)
    upload_line = ""
    if i.engine == "llama.cpp" and pcie_bw:
        n_ub, per_ub, T = llamacpp_prefill_upload(est, arch, prompt * c)
        if n_ub:
            up_s = n_ub * per_ub / pcie_bw
            upload_line = (f"; + PCIe upload of the host blocks' weights for each of the {n_ub:,} ubatches of "
                           f"{T:,} tokens: {n_ub:,} x {per_ub:,.0f} B / {pcie_bw / 1e9:,.2f} GB/s = {up_s:.3f} s "
                           "(copies and compute serialized)")
            pre_s += up_s
    batch_s = pre_s + gen * step
    per_request = batch_s / (c * replicas)
    tps = gen / per_request
    capacity = SECONDS_PER_HOUR / per_request
    lines.append(f"prefill of {c} x {prompt:,} prompt tokens = 2 x {params_gpu:,.0f} x {c * prompt:,} / "
                 f"({tflops:g} TFLOPS x MFU {mfu:g}){upload_line} = {pre_s:.3f} s")
    lines.append(f"batch of {c} requests = {pre_s:.3f} s + {gen:,} steps x {step * 1e3:.3f} ms = {batch_s:.3f} s; "
                 f"{replicas} replica(s) -> {per_request:.4f} machine-s per request, {capacity:,.0f} requests/h, "
                 f"{tps:,.1f} generated tokens/s")
    return JobTime(job=f"one request ({prompt:,} prompt + {gen:,} generated tokens)", job_tokens=float(gen),
                   seconds_per_job=per_request, tokens_per_s=tps, compute_s=per_request, transfer_s=0.0, mfu=mfu,
                   mfu_reason=reason, requests_per_hour_capacity=capacity, lines=tuple(lines))
