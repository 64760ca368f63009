"""Runtime memory outside the model's tensors: CUDA context, library workspaces, NCCL, allocator.

These are assumptions, not derivations, and each says so. ``planner calibrate`` replaces
them with figures measured on the user's GPU.

Sources:
- CUDA context: "a few hundred MB to about 1 GB, by GPU, driver and libraries"
  (a rule of thumb from DL workstation sizing guides); CUDA 11.7+ lazy module loading
  (``CUDA_MODULE_LOADING=LAZY``, CUDA C Programming Guide, "Lazy Loading") keeps it near the
  low end. The HF performance docs measured about 1.3 GiB before any tensor on older stacks.
- cuBLAS workspace: PyTorch reserves ``CUBLAS_WORKSPACE_CONFIG`` ``:4096:8`` (8 x 4 MiB) per
  stream on Hopper, less on older GPUs (PyTorch docs, "Reproducibility" / cuBLAS workspaces).
- NCCL: ``NCCL_BUFFSIZE`` 4 MiB per channel and peer (NCCL docs, "Environment Variables").
- PyTorch caching allocator: ``memory_reserved`` >= ``memory_allocated``; freed blocks are
  cached and fragmentation wastes part of them (PyTorch docs, "CUDA semantics - memory
  management").
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.memory.breakdown import GPU, Component
from planner.core.units import MiB


@dataclass(frozen=True)
class RuntimeOverheads:
    """Per-GPU runtime overheads, in bytes, and the allocator's headroom as a fraction.

    Attributes:
        cuda_context_bytes: CUDA context, kernels and module images.
        workspace_bytes: cuBLAS/cuDNN workspaces.
        nccl_bytes: NCCL communication buffers when more than one GPU works together.
        allocator_fraction: reserved-minus-allocated as a fraction of the peak allocated.
        source: where the figures came from ('default assumption' or a calibration file).
    """

    cuda_context_bytes: int = 768 * MiB
    workspace_bytes: int = 32 * MiB
    nccl_bytes: int = 256 * MiB
    allocator_fraction: float = 0.10
    source: str = "default assumption"


def runtime_components(overheads: RuntimeOverheads, *, gpus: int) -> list[Component]:
    """CUDA context, workspaces and NCCL buffers, as GPU components of kind 'runtime'."""
    src = overheads.source
    out = [
        Component("CUDA context", GPU, overheads.cuda_context_bytes,
                  f"{overheads.cuda_context_bytes / MiB:,.0f} MiB ({src})",
                  "CUDA C Programming Guide, Lazy Loading (a few hundred MB to ~1 GB by GPU and driver)", kind="runtime"),
        Component("library workspaces (cuBLAS/cuDNN)", GPU, overheads.workspace_bytes,
                  f"{overheads.workspace_bytes / MiB:,.0f} MiB ({src})", "PyTorch docs, cuBLAS workspaces",
                  kind="runtime"),
    ]
    if gpus > 1:
        out.append(Component("NCCL buffers", GPU, overheads.nccl_bytes,
                             f"{overheads.nccl_bytes / MiB:,.0f} MiB ({src})", "NCCL docs, NCCL_BUFFSIZE",
                             kind="runtime"))
    return out


def allocator_component(overheads: RuntimeOverheads, allocated_peak: int, weights: int = 0,
                        what: str = "weights") -> Component:
    """Headroom for the caching allocator's fragmentation: a fraction of the peak allocated,
    leaving out the model weights.

    Weights are allocated once, at load, in blocks of their own size, and are never freed, so the
    allocator caches nothing around them (ZeRO-3's gathered layers, the same parameter-sized blocks
    every layer, reuse their cached blocks likewise): Transformers' "Model training anatomy" measures
    bert-large's 1,278 MiB of fp32 weights at 1,288 MiB over the CUDA context in nvidia-smi
    (0.8 %). The churn of activations, gradients, optimizer temporaries and a growing KV cache is
    what leaves cached blocks behind.

    Args:
        allocated_peak: peak allocated bytes on one GPU.
        weights: bytes of the weight components within it (0: apply the fraction to all).
        what: how the formula names those bytes ('weights', or 'weights and gathered parameters'
            under ZeRO-3).
    """
    base = max(allocated_peak - weights, 0)
    b = int(round(base * overheads.allocator_fraction))
    text = f"{allocated_peak:,} B peak allocated" + (f" less {weights:,} B of {what}" if weights else "")
    return Component("allocator headroom (fragmentation)", GPU, b,
                     f"{overheads.allocator_fraction:.0%} x ({text}) ({overheads.source})",
                     "PyTorch docs, CUDA semantics: memory management; Transformers docs, model training "
                     "anatomy (weights: 0.8 % over their size)", kind="headroom")
