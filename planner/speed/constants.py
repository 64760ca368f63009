"""The measured rates the speed model divides by, each with its source.

Every figure here is a kernel-level or link-level measurement (or, where marked ``assumed``, a
stated stand-in): what a GEMM, an attention kernel, a memory-bound kernel or a collective reaches
on a card of an architecture. None is fitted to an end-to-end run; the end-to-end times come out of
the mechanisms in planner.speed.training and planner.speed.inference. Importing this module does
no work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Figure:
    """A measured (or assumed) rate fraction and where it comes from.

    Attributes:
        value: the fraction of the datasheet peak reached (0..1), or a time in seconds where the
            name says so.
        source: the publication or code it is read from; for an assumption, what it borrows.
        assumed: True when no published measurement for this case was found (the console then
            says "assumed" beside a time that depends on it).
    """

    value: float
    source: str
    assumed: bool = False


# ----- dense GEMMs -----------------------------------------------------------------------------

#: Fraction of the dense datasheet tensor rate a large, well-shaped GEMM reaches (cuBLAS /
#: hipBLASLt / TPC kernels), by catalog ``architecture``. The GEMM time of every layer is its
#: FLOPs / (peak x this x the size factor of :func:`gemm_size_factor`).
GEMM_EFFICIENCY: dict[str, Figure] = {
    "ampere": Figure(0.85, "FlashAttention-2 paper (Dao 2023, section 4.2): GPT-style training reaches 225 TFLOPS "
                           "per A100 (72 % of 312) end to end with FlashAttention-2, so its GEMMs run at or above "
                           "that share; cuBLAS BF16 GEMMs of LLM shapes on A100 SXM measure about 250-270 TFLOPS "
                           "(80-87 %, stas00/ml-engineering 'Maximum Achievable Matmul FLOPS'); 0.85"),
    "ada": Figure(0.85, "assumption: Ampere's 0.85 (same tensor-core generation of cuBLAS kernels; no published "
                        "Ada GEMM sweep found)", assumed=True),
    "turing": Figure(0.70, "assumption: below Ampere's 0.85 (older tensor cores, FP16 only)", assumed=True),
    "hopper": Figure(0.70, "FlashAttention-3 paper (Shah et al. 2024, section 4): cuBLAS FP16/BF16 GEMMs on H100 SXM5 "
                           "reach about 700 TFLOPS of 989 in its comparison plots; Hopper's GEMMs run further below "
                           "the datasheet than Ampere's (power-capped clocks)"),
    "blackwell": Figure(0.70, "assumption: Hopper's 0.70 (no published B200 / RTX PRO 6000 GEMM sweep found)",
                        assumed=True),
    "cdna3": Figure(0.45, "SemiAnalysis, 'MI300X vs H100 vs H200 Benchmark' (December 2024): BF16 GEMMs of "
                          "training shapes on MI300X reach about 600 TFLOPS of 1,307 on the public ROCm stack "
                          "(~45 %); the catalog's mfu_scale is not applied on top"),
    "cdna4": Figure(0.45, "assumption: CDNA 3's 0.45 (SemiAnalysis, December 2024, MI300X BF16 GEMMs on ROCm): "
                          "the MI355X runs the same hipBLASLt stack; no published MI355X GEMM sweep was found (AMD's "
                          "'Measuring Max-Achievable FLOPs' blog, part 2, gives MI300X and MI325X only)",
                    assumed=True),
    "gaudi2": Figure(0.85, "assumption: Ampere's 0.85 (Habana publishes no GEMM sweep); Databricks measured 260 "
                           "TFLOPS end to end on MPT-7B (60 % of 432), so its GEMMs run at least that high",
                     assumed=True),
    "gaudi3": Figure(0.70, "assumption: below Gaudi 2's 0.85, as Hopper is below Ampere: no published Gaudi 3 "
                           "GEMM or end-to-end training figure found; never above a better-measured generation",
                     assumed=True),
}
#: An architecture the table lacks (a catalog overlay's new one): the lowest measured NVIDIA figure.
GEMM_EFFICIENCY_UNKNOWN = Figure(0.70, "assumption: no GEMM figure for this architecture; Hopper's 0.70, the "
                                       "lowest measured NVIDIA figure", assumed=True)

#: Tokens (GEMM rows) at which a GEMM reaches half its large-size rate: one 256-row output tile.
#: cuBLAS tiles each GEMM into 256 x 128 (or 128 x 128) output tiles spread over the SMs, so a
#: GEMM whose rows fill few tiles leaves tensor cores idle (tile and wave quantization: NVIDIA
#: Deep Learning Performance Guide, 'Matrix Multiplication Background', sections 'Tile
#: Quantization' and 'Wave Quantization'). factor = M / (M + 256).
GEMM_HALF_ROWS = 256

#: Columns (the model's hidden size) at which a GEMM reaches half its large-size rate, by the same
#: tiling argument: a narrow weight fills few tile columns per row block. factor = h / (h + 256).
GEMM_HALF_COLUMNS = 256


def gemm_size_factor(rows: float, columns: float) -> float:
    """Share of the large-GEMM rate a GEMM of ``rows`` tokens and ``columns`` (hidden size) reaches:
    rows / (rows + 256) x columns / (columns + 256) (tile quantization; :data:`GEMM_HALF_ROWS`).
    At 4,096 x 4,096 it is 0.89; at 840 tokens of a 3,072-wide model 0.71; one decode token 0.004."""
    return rows / (rows + GEMM_HALF_ROWS) * columns / (columns + GEMM_HALF_COLUMNS)


#: One harness's measurements per card: zzc0721/torch-performance-test-data database.md (commit 07858687),
#: the largest torch.matmul BF16 rate (FP32 accumulate) over square sizes 1,024-10,240, over the card's
#: dense datasheet rate. The harness reads the A100 SXM4 80GB at 264.53 of 312 TFLOPS (0.848), the
#: Ampere figure above (0.85), so its figures mean the same thing. Only cards whose architecture figure
#: is an assumption (Ada) take one: Ada cards run their tensor cores at very different shares of the
#: datasheet by power limit (a 450 W RTX 4090 at or above it, a 350 W L40S three quarters, a 72 W L4
#: about half), which no one architecture figure can carry. It covers the rate it measured, the 16-bit
#: GEMM with FP32 accumulation: FP8 GEMMs and llama.cpp's FP16-accumulate cuBLAS path keep the
#: architecture's figure.
CARD_GEMM_EFFICIENCY: dict[str, Figure] = {
    "rtx-4090": Figure(1.0, "zzc0721/torch-performance-test-data database.md (commit 07858687): RTX 4090 24GB torch.matmul "
                            "BF16 at 170.06, 173.31, 162.39 and 163.09 TFLOPS on four machines (median 166.6, 1.01 of "
                            "the 165.2 datasheet rate: GeForce cards boost past their rated 2.52 GHz); 1.0 taken"),
    "l40s": Figure(0.743, "zzc0721/torch-performance-test-data database.md (commit 07858687): L40S torch.matmul BF16 at "
                          "269.15 TFLOPS, 0.743 of the 362.05 datasheet rate (a 350 W card)"),
    "l4": Figure(0.586, "zzc0721/torch-performance-test-data database.md (commit 07858687): L4 torch.matmul BF16 at "
                        "70.89 TFLOPS (its best size, 2,048), 0.586 of the 121 datasheet rate (a 72 W card)"),
}

#: The rates a card's :data:`CARD_GEMM_EFFICIENCY` covers (the others keep the architecture's figure).
CARD_MEASURED_RATES = ("bf16",)


def gemm_efficiency(gpu: Any, rate: str = "bf16") -> Figure:
    """The share of ``gpu``'s datasheet ``rate`` ('bf16': 16-bit with FP32 accumulation; 'fp8'; 'fp16acc':
    FP16 with FP16 accumulation) a large GEMM reaches: the card's own measurement
    (:data:`CARD_GEMM_EFFICIENCY`) for the rate it measured, else the :data:`GEMM_EFFICIENCY` of its
    architecture (the unknown-architecture figure when absent). The catalog's ``mfu_scale`` (a card's
    software stack) multiplies it."""
    card = CARD_GEMM_EFFICIENCY.get(str(getattr(gpu, "id", "") or "")) if rate in CARD_MEASURED_RATES else None
    base = card or GEMM_EFFICIENCY.get(str(getattr(gpu, "architecture", "") or "").lower(), GEMM_EFFICIENCY_UNKNOWN)
    scale = float(getattr(gpu, "mfu_scale", 1.0) or 1.0)
    if scale == 1.0 or str(getattr(gpu, "architecture", "")).lower() in ("cdna3", "cdna4"):
        return base
    return Figure(base.value * scale, f"{base.source}; x {scale:g} catalog mfu_scale", base.assumed)


# ----- attention ---------------------------------------------------------------------------------

#: Fraction of the dense tensor rate FlashAttention-2 (PyTorch SDPA's flash backend, the
#: flash_attn package) reaches, forward and backward together, by architecture.
ATTENTION_EFFICIENCY: dict[str, Figure] = {
    "ampere": Figure(0.55, "FlashAttention-2 paper (Dao 2023, figures 4-6): forward up to 73 % and backward up to "
                           "63 % of A100 peak at head_dim 128, lower at short sequences; 0.55 for both at 2-8k"),
    "ada": Figure(0.55, "assumption: Ampere's 0.55 (same FlashAttention-2 kernels)", assumed=True),
    "turing": Figure(0.30, "assumption: FlashAttention-2 does not support Turing; SDPA's memory-efficient kernel "
                           "runs there, taken at about half of Ampere's 0.55", assumed=True),
    "hopper": Figure(0.35, "FlashAttention-3 paper (Shah et al. 2024, section 1): FlashAttention-2 reaches only 35 % "
                           "of H100 peak (FlashAttention-3 75 %, used by few training stacks)"),
    "blackwell": Figure(0.35, "assumption: Hopper's FlashAttention-2 0.35", assumed=True),
    "cdna3": Figure(0.30, "assumption: ROCm's FlashAttention-2 port, taken below Hopper's 0.35", assumed=True),
    "cdna4": Figure(0.30, "assumption: CDNA 3's 0.30 (the same ROCm FlashAttention-2 port; no MI355X attention "
                          "kernel measurement found)", assumed=True),
    "gaudi2": Figure(0.35, "assumption: Hopper's 0.35 (Habana's fused SDPA)", assumed=True),
    "gaudi3": Figure(0.35, "assumption: Hopper's 0.35 (Habana's fused SDPA)", assumed=True),
}


#: An architecture :data:`ATTENTION_EFFICIENCY` lacks.
ATTENTION_EFFICIENCY_UNKNOWN = Figure(0.35, "assumption: no attention figure for this architecture", True)


def attention_efficiency(gpu: Any) -> Figure:
    """The :data:`ATTENTION_EFFICIENCY` of ``gpu``'s architecture (0.35, assumed, when absent)."""
    return ATTENTION_EFFICIENCY.get(str(getattr(gpu, "architecture", "") or "").lower(), ATTENTION_EFFICIENCY_UNKNOWN)


# ----- memory-bound kernels ------------------------------------------------------------------------

#: Share of the datasheet memory bandwidth a streaming kernel (elementwise ops, norms, optimizer
#: steps, a 16-bit decode GEMV) reaches. gpt-fast (pytorch-labs/gpt-fast README) decodes
#: Llama-2-7B in bf16 at 1,397 GB/s on an A100 80GB (69 % of 2,039 GB/s) including its per-layer
#: costs; STREAM-style copies on HBM reach 85-92 %. 0.80 for the streaming part (the fixed costs
#: per kernel are counted apart: :data:`KERNEL_FLOOR_S`).
BANDWIDTH_EFFICIENCY = Figure(0.85, "gpt-fast README: Llama-2-7B bf16 decode at 1,397 GB/s of an A100 80GB's 2,039 "
                                    "(69 %) with its per-kernel costs included; streaming kernels alone reach "
                                    "85-92 % of HBM/GDDR peak")

#: Achieved share of the weight bytes' bandwidth by decode kernel, for quantized weights: the
#: dequantizing GEMV does more work per byte. From gpt-fast's A100 table (int8 weight-only 1,069
#: GB/s, int4 group 32 862 GB/s, against bf16's 1,397 GB/s): int8 x 0.77, int4 x 0.62 of the 16-bit
#: kernel. Marlin / Machete (vLLM's int4 kernels) and llama.cpp's MMVQ are counted the same way.
QUANT_DECODE_FACTOR: dict[str, Figure] = {
    "16bit": Figure(1.0, "the 16-bit GEMV itself"),
    "fp8": Figure(0.90, "assumption: FP8 weight-only GEMV dequantizes by a scale per tensor or channel, "
                        "between int8 (0.77) and 16-bit (1.0)", assumed=True),
    "int8": Figure(0.77, "gpt-fast README (A100 80GB): int8 weight-only decode at 1,069 GB/s vs bf16 at 1,397 GB/s"),
    "int4": Figure(0.62, "gpt-fast README (A100 80GB): int4 (group size 32) decode at 862 GB/s vs bf16 at 1,397 GB/s"),
}

#: llama.cpp's MMVQ decode kernels read quantized blocks with int8 dot products: ggml-org/llama.cpp
#: PR #4766 (RTX 4090, llama 7B, tg128) measures Q8_0 at 98.13 t/s (7.16 GB, 703 GB/s) against F16
#: at 61.03 t/s (13.5 GB, 823 GB/s): 0.85 of the 16-bit kernel's bandwidth; 4-bit types are taken
#: at the same share (assumption: no same-build Q4_0 tg figure was found).
LLAMACPP_DECODE_FACTOR: dict[str, Figure] = {
    "16bit": Figure(1.0, "the F16 GEMV itself"),
    "fp8": Figure(0.85, "as Q8_0", assumed=True),
    "int8": Figure(0.85, "ggml-org/llama.cpp PR #4766: RTX 4090 llama 7B Q8_0 tg128 98.13 t/s (703 GB/s) vs F16 "
                         "61.03 t/s (823 GB/s)"),
    "int4": Figure(0.85, "assumption: Q8_0's share (PR #4766) for the 4-bit MMVQ kernels", assumed=True),
}

#: FP8 GEMMs reach a lower share of their (doubled) datasheet rate than 16-bit ones: the FP8 speed-up
#: of large GEMMs over BF16 on H100 is about 1.6x, not 2x (pytorch/ao torchao/float8 README,
#: performance section: GEMM speed-ups of 1.4-1.8x at LLM shapes). 0.8 x the 16-bit efficiency.
FP8_GEMM_FACTOR = Figure(0.80, "pytorch/ao float8 README: FP8 GEMMs 1.4-1.8x faster than BF16 on H100 at LLM shapes "
                               "(0.8 x 2x)")

#: GPU time of the smallest kernel, launched from a CUDA graph or back to back: launch latency plus
#: the ramp and tail of a kernel that cannot fill the card. NVIDIA's CUDA Graphs blog ('Getting
#: Started with CUDA Graphs', 2019) measures 3.4 us per short kernel in a stream and about 2 us
#: inside a graph; llama.cpp's CUDA graphs PR (ggml-org/llama.cpp #6766) reports decode kernels
#: of a 7B model at a few us each. 3 us per kernel.
KERNEL_FLOOR_S = Figure(3e-6, "NVIDIA technical blog 'Getting Started with CUDA Graphs' (2019): ~3.4 us per short "
                              "kernel launched in a stream, ~2 us from a graph; 3 us taken per kernel")

#: Host time PyTorch eager spends per operator (Python, dispatcher, autograd, launch): the GPU
#: waits when the kernels are shorter. Horace He, 'Making Deep Learning Go Brrrr From First
#: Principles' (2022), 'Overhead': PyTorch eager runs on the order of 10 us of host work per op;
#: module hooks (PEFT, Accelerate) add to it. torch.compile with CUDA graphs removes it.
EAGER_OP_S = Figure(10e-6, "Horace He, 'Making Deep Learning Go Brrrr From First Principles' (2022), section "
                           "'Overhead': about 10 us of host overhead per PyTorch eager operator")

# ----- links ---------------------------------------------------------------------------------------

#: Bus bandwidth NCCL's ring all-reduce reaches as a share of one direction of the link
#: (nccl-tests PERFORMANCE.md defines bus bandwidth; DGX A100 all_reduce reaches ~230 GB/s of
#: NVLink 3's 300 GB/s per direction, 0.77). Used for NVLink and PCIe alike.
COLLECTIVE_EFFICIENCY = Figure(0.75, "NVIDIA nccl-tests doc/PERFORMANCE.md (bus bandwidth); DGX A100 all_reduce "
                                     "busbw ~230 GB/s of NVLink3's 300 GB/s per direction (0.77)")

#: Latency of one small all-reduce within a node over NVLink (NCCL ring/LL protocol or a custom
#: all-reduce), per call.
ALLREDUCE_LATENCY_S = Figure(8e-6, "TensorRT-LLM / NCCL all-reduce of a decode step's activations (a few KB) takes "
                                   "5-10 us over NVLink (NVIDIA TensorRT-LLM blog on custom all-reduce, 2024); "
                                   "8 us taken")

#: The same over PCIe only (no NVLink), by GPU count. vLLM's custom all-reduce is disabled for more
#: than two PCIe-only GPUs (vllm/distributed/device_communicators/custom_all_reduce.py: "not
#: supported on more than two PCIe-only GPUs"), so NCCL runs there. nccl-tests all_reduce_perf of
#: 8 B on 8 PCIe GPUs: 42.14 us out-of-place, 40.06 us in-place on 8 x RTX 4090 (NVIDIA/nccl issue
#: #1530), 54.18 us on 8 x RTX 3090 (NVIDIA/nccl issue #1439): 40 us taken for 3-8 GPUs (measured at
#: 8; for fewer GPUs, whose ring has fewer hops, an upper bound: no per-count measurement found).
#: Two PCIe GPUs: nccl-tests alltoall_perf of 8-64 B between 2 x RTX 4090 over PCIe, 11.3-12.3 us
#: with or without P2P (tinygrad/open-gpu-kernel-modules issue #17), one exchange as a 2-GPU
#: all-reduce is: 12 us taken.
PCIE_ALLREDUCE_LATENCY_S = {
    2: Figure(12e-6, "nccl-tests alltoall_perf 8-64 B on 2 x RTX 4090 over PCIe: 11.3-12.3 us (tinygrad/"
                     "open-gpu-kernel-modules issue #17); a 2-GPU all-reduce is one such exchange"),
    8: Figure(40e-6, "nccl-tests all_reduce_perf 8 B on 8 x RTX 4090 over PCIe: 40.06-42.14 us (NVIDIA/nccl issue "
                     "#1530; 8 x RTX 3090: 54.18 us, NVIDIA/nccl issue #1439); vLLM disables its custom all-reduce "
                     "above 2 PCIe-only GPUs (custom_all_reduce.py), so NCCL runs; 3-7 GPUs: the 8-GPU figure"),
}


def allreduce_latency(nvlink: bool, gpus: int) -> Figure:
    """One small all-reduce's latency among ``gpus`` GPUs of a node: :data:`ALLREDUCE_LATENCY_S` over
    NVLink, :data:`PCIE_ALLREDUCE_LATENCY_S` (2 GPUs, else the 8-GPU figure) over PCIe only."""
    if nvlink:
        return ALLREDUCE_LATENCY_S
    return PCIE_ALLREDUCE_LATENCY_S[2 if gpus <= 2 else 8]


#: Inter-node bandwidth per GPU when the scenario names no network: one 400 Gb/s NIC per GPU (DGX
#: H100 reference architecture: 8 ConnectX-7 NDR per 8 GPUs), at the collective efficiency.
DEFAULT_NODE_LINK_BYTES_PER_S = Figure(50e9, "assumption: DGX H100 reference design, one 400 Gb/s InfiniBand NDR "
                                             "NIC per GPU (50 GB/s)", assumed=True)

#: llama.cpp's quantized matrix multiplication (MMQ, int8 tensor cores since ggml-org/llama.cpp PR
#: #7676, June 2024) as a share of the card's dense int8 rate at large size. PR #7676 measures an
#: RTX 3090 at 3,654.78 t/s on llama 8B Q5_0 pp512 (ubatch 512): 140.1 ms for 512 tokens, of which
#: the model gives 20.6 ms to ggml's F32 activations, 1.8 ms to attention and 1.2 ms to kernel
#: floors, leaving 116.6 ms for 2 x 6.98e9 x 512 int8 operations: 61.3 TOPS, 21.6 % of the card's 284
#: int8 TOPS at a GEMM size factor of 0.63, so 0.34 at large size. Q4_0 on an RTX 4090 runs faster
#: ("q4_0 on an RTX 4090 seems to be the best case scenario", PR #7860): the figure is the typical
#: type's, not the best case.
MMQ_EFFICIENCY = Figure(0.34, "ggml-org/llama.cpp PR #7676 ('CUDA: use tensor cores for MMQ'): RTX 3090, llama 8B "
                              "Q5_0, pp512 at 3,654.78 t/s: 61.3 int8 TOPS in the MMQ kernels, 21.6 % of 284 at "
                              "size factor 0.63")
