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

Those whole-weight transients, freed between small persistent NF4 allocations, stay in PyTorch's
caching allocator pool: :func:`nf4_load_pool` replays torchtune 0.1's build and load through the
allocator's rules (planner.memory.nf4_replay) and :func:`load_pool_component` makes the pool they
leave the floor of the reserved bytes (the allocator releases nothing afterwards).
"""

from __future__ import annotations

from planner.memory.breakdown import GPU, Component
from planner.memory.nf4_replay import NF4_SRC, QLoRAShapes, ReplayResult, replay_init
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


#: torchtune 0.1's build order of one Llama-2 / Mistral decoder layer's projections
#: (lora_llama2_self_attention: q, k, v, output; lora_llama2_mlp: w1 gate, w2 down, w3 up), by the
#: names the Transformers code gives them.
TORCHTUNE_01_ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
TORCHTUNE_01_MLP = ("gate_proj", "down_proj", "up_proj")
LOAD_POOL_NAME = "allocator pool left by the NF4 load (replayed)"


def nf4_load_pool(arch: Architecture, train: Training) -> ReplayResult | None:
    """The caching allocator's state after torchtune 0.1's QLoRA build and load, replayed
    (planner.memory.nf4_replay), or None where the replay does not apply.

    It applies to torchtune before 0.2.0 (the release this module's whole-weight conversion belongs
    to), QLoRA on one GPU (the single-device recipe; no tensor parallelism), a dense Llama-style
    decoder with untied embeddings (torchtune 0.1's llama2 and mistral builders) whose layer has the
    seven projections of :data:`TORCHTUNE_01_ATTENTION` and :data:`TORCHTUNE_01_MLP`. Projections in
    ``train.lora_targets`` are quantized LoRALinears, the others bf16 ``nn.Linear``. The rotary cache
    is built for ``max_position_embeddings`` positions (torchtune's llama2_7b: max_seq_len 4096,
    mistral_7b: 32768, as Hugging Face's configs give).
    """
    if train.framework != "torchtune" or train.method != "qlora" or train.gpus != 1 or train.tp != 1:
        return None
    if framework_has("torchtune", train.framework_version, TORCHTUNE_CHUNKED_NF4):
        return None
    if (arch.model_type not in ("llama", "mistral") or arch.tie_word_embeddings or arch.num_local_experts != 1
            or not arch.gated_mlp):
        return None
    shapes = {m.name: (m.in_features, m.out_features) for m in arch.linear_modules() if m.count == 1}
    if not all(n in shapes for n in TORCHTUNE_01_ATTENTION + TORCHTUNE_01_MLP):
        return None

    def row(names):
        return tuple((*shapes[n], True if n in train.lora_targets else None) for n in names)

    return replay_init(QLoRAShapes(
        dim=arch.hidden_size, vocab=arch.vocab_size, layers=arch.num_hidden_layers, head_dim=arch.head_dim,
        max_seq_len=arch.max_position_embeddings, rank=train.lora_rank, attention=row(TORCHTUNE_01_ATTENTION),
        mlp=row(TORCHTUNE_01_MLP), checkpoint_is_bf16=(arch.torch_dtype or "").endswith("bfloat16")))


def load_pool_component(pool: ReplayResult | None, allocated_peak: int, headroom: int) -> list[Component]:
    """The reserved bytes the replayed load leaves beyond the estimate's own allocated peak and allocator
    headroom: the caching allocator releases nothing after loading (planner.memory.caching_allocator),
    so every later moment reserves at least ``pool.reserved``.

    Returns:
        [] when there is no replay or its pool is within ``allocated_peak + headroom``; else one
        'headroom' component of ``pool.reserved - allocated_peak - headroom`` bytes.
    """
    if pool is None or pool.reserved <= allocated_peak + headroom:
        return []
    extra = pool.reserved - allocated_peak - headroom
    return [Component(LOAD_POOL_NAME, GPU, extra,
                      f"{pool.reserved:,} B reserved after the replayed build and load ({pool.segments} segments, "
                      f"{pool.calls:,} allocator calls; peak allocated {pool.peak_allocated:,} B) less "
                      f"{allocated_peak:,} B peak allocated and {headroom:,} B headroom", NF4_SRC, kind="headroom")]
