"""GPU memory peaks at model load that depend on the framework's release (planner.workload.releases).

torchtune before 0.2.0 (torchao 0.1 pinned) quantizes each QLoRA base weight to NF4 on the GPU as the
checkpoint is loaded, the whole weight at once. ``load_state_dict`` copies each bf16 checkpoint tensor
into its ``NF4Tensor`` parameter; torchtune's ``inplace_copy`` (torchtune/utils/_register_nf4_dispatch_ops.py
at v0.1.0) runs ``to_nf4(args[0][1].to(dest_tensor.device))``, and torchao 0.1's
``NF4Tensor.convert_to_norm_float_weight`` / ``quantize_tensor_nearest`` (torchao/dtypes/nf4tensor.py at
tag v0.1) compute, per value of that weight:

- the bf16 copy on the GPU: 2 B;
- ``scaled_blocks = blocks / scales`` (bf16): 2 B;
- ``(value - nf4)`` with ``value`` of shape (numel, 1) against the 16 NF4 levels in bf16: a
  (numel, 16) bf16 tensor, 32 B, live while its ``.abs()`` (another 32 B) is computed;

so 68 B per value of the weight being converted (the following ``.min(dim=-1)`` holds 32 + 2 + 8 B
with the two inputs: less). Every NF4 weight already converted is resident then, and the optimizer
has no states yet; the largest quantized weight (the MLP's, the output head stays bf16 in torchtune's
QLoRA builders) sets the peak. From torchao 0.2 (PR 196, commit 6081796bc) the values are quantized in
chunks of 1024**2, a transient of about 68 MiB, not modelled.
"""

from __future__ import annotations

from planner.memory.breakdown import GPU, Component
from planner.model.architecture import Architecture
from planner.workload.options import Training
from planner.workload.releases import TORCHTUNE_CHUNKED_NF4, framework_has

#: Bytes per value of the weight being quantized by torchao 0.1's whole-tensor NF4 conversion (module
#: docstring): 2 (bf16 copy) + 2 (scaled) + 32 (value - nf4, 16 bf16 levels) + 32 (its abs).
TORCHAO_01_NF4_BYTES_PER_VALUE = 2 + 2 + 16 * 2 + 16 * 2
LOAD_SRC = ("torchtune v0.1.0 utils/_register_nf4_dispatch_ops.py inplace_copy (to_nf4 on the GPU); torchao v0.1 "
            "dtypes/nf4tensor.py quantize_tensor_nearest ((value - nf4).abs()); torchtune pyproject.toml torchao==0.1")


def load_peak_components(arch: Architecture, train: Training) -> list[Component]:
    """The GPU components live only while the model loads (phase ``'load'``), for the framework's release.

    Returns:
        [] except for torchtune QLoRA before 0.2.0: one component of
        :data:`TORCHAO_01_NF4_BYTES_PER_VALUE` x the value count of the largest linear weight of a layer
        (per tensor-parallel shard).
    """
    if train.framework != "torchtune" or train.method != "qlora":
        return []
    if framework_has("torchtune", train.framework_version, TORCHTUNE_CHUNKED_NF4):
        return []
    largest = max(m.in_features * m.out_features for m in arch.linear_modules() if m.part in ("attention", "mlp"))
    per_gpu = -(-largest // train.tp)
    return [Component("NF4 conversion at load (torchao 0.1: the whole weight at once)", GPU,
                      TORCHAO_01_NF4_BYTES_PER_VALUE * per_gpu,
                      f"{TORCHAO_01_NF4_BYTES_PER_VALUE} B x {per_gpu:,} values of the largest weight (bf16 copy, "
                      "scaled values, the 16-level difference and its abs)", LOAD_SRC, phase="load")]
