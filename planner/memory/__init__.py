"""Stage 4, memory: the memory model, every byte of a training or inference workload, per GPU and on the host.

One module per concern: ``states`` (weights, gradients,
optimizer states under ZeRO and offload), ``activations`` (tensors saved for backward),
``quant`` (quantized weights), ``inference`` (KV cache, prefill), ``overheads`` (CUDA context,
allocator), ``host`` (system RAM), ``vllm`` (vLLM's KV budget), assembled by ``estimate``. Imports
core, model, catalog and workload; importing this package does no work.
"""

from planner.memory.breakdown import Component, Estimate
from planner.memory.estimate import estimate
from planner.memory.vllm import cuda_total_bytes, sequence_kv, vllm_budget

__all__ = ["Component", "Estimate", "cuda_total_bytes", "estimate", "sequence_kv", "vllm_budget"]
