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

Unsloth 2024.8 to 2024.10.0 quantizes a 16-bit checkpoint with bitsandbytes as Transformers 4.44.2 loads
it and keeps one 16-bit RoPE cos/sin cache pair per attention layer on the GPU:
:func:`unsloth_rope_components` counts those caches (allocated for the whole run) and
:func:`unsloth_load_pool` replays the load through the allocator (planner.memory.bnb_load_replay), whose
peak reserved is the floor of every later moment's reserved bytes; :func:`load_pool` picks the replay
that applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.core.versions import release_key
from planner.memory.bnb_load_replay import BNB_LOAD_SRC, UNSLOTH_ROPE_START, UnslothLoadShapes, replay_unsloth_load
from planner.memory.breakdown import GPU, Component
from planner.memory.nf4_replay import NF4_SRC, QLoRAShapes, ReplayResult, replay_init
from planner.model.architecture import Architecture
from planner.workload.options import Training
from planner.workload.recipes import RECIPES
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


#: The Unsloth releases whose load planner.memory.bnb_load_replay replays (first, last): the code read at
#: e6159e0279 and 74c2141bb3 (2024.8), 89ada9ef0b (2024.9), b41c182296 (2024.9.post2), 248c27d205
#: (2024.9.post4) and d2a032e117 (2024.10.0) allocates the same (rotary classes, patch_llama_rope_scaling,
#: post_patch); 2024.10.7 changed the rotary classes and post_patch and was not replayed.
UNSLOTH_BNB_LOAD_RELEASES = ("2024.8", "2024.10.0")
#: Unsloth's rotary modules by model type (unsloth/models/llama.py and qwen2.py pre_patch at d2a032e117):
#: whether Transformers 4.44.2's model class adds a model-level cache on the GPU (``LlamaModel.rotary_emb``;
#: ``Qwen2Model`` has none).
_UNSLOTH_MODEL_ROPE = {"llama": True, "qwen2": False}
_ROPE_KINDS = (None, "linear", "llama3")  # Unsloth's patches raise for other rope types
_PROJ = {"q_proj": "self_attn", "k_proj": "self_attn", "v_proj": "self_attn", "o_proj": "self_attn",
         "gate_proj": "mlp", "up_proj": "mlp", "down_proj": "mlp"}


def _unsloth_load_shapes(arch: Architecture, train: Training) -> UnslothLoadShapes | None:
    """The shapes of :func:`replay_unsloth_load` for ``train``, or None where the replay does not apply: Unsloth
    QLoRA (``load_in_4bit``) of a release in :data:`UNSLOTH_BNB_LOAD_RELEASES`, one GPU, a dense Llama or
    Qwen2 decoder with the seven projections. The checkpoint on disk is cast to the load dtype on the
    CPU whatever its dtype; a pre-quantized (bnb-4bit) checkpoint, which loads its packed tensors as
    they are, cannot be expressed and is not replayed."""
    if train.framework != "unsloth" or train.method != "qlora" or train.gpus != 1 or train.tp != 1:
        return None
    first, last = (release_key(r) for r in UNSLOTH_BNB_LOAD_RELEASES)
    if not train.framework_version or not first <= release_key(train.framework_version) <= last:
        return None
    rope = dict(arch.extra).get("rope_scaling") or {}
    kind = rope.get("rope_type", rope.get("type")) if isinstance(rope, dict) else None
    if (arch.model_type not in _UNSLOTH_MODEL_ROPE or arch.num_local_experts != 1 or not arch.gated_mlp
            or kind not in _ROPE_KINDS or (kind == "llama3" and arch.model_type != "llama")):
        return None
    mods = [m for m in arch.linear_modules() if m.count == 1]
    if sorted(m.name for m in mods) != sorted(_PROJ):
        return None
    order = [m.name for m in mods]
    return UnslothLoadShapes(
        hidden=arch.hidden_size, vocab=arch.vocab_size, layers=arch.num_hidden_layers, head_dim=arch.head_dim,
        rope_positions=min(UNSLOTH_ROPE_START, max(train.seq_len, arch.max_position_embeddings)),
        model_rope=_UNSLOTH_MODEL_ROPE[arch.model_type], rope_inv_freq=kind == "llama3",
        tied=arch.tie_word_embeddings,
        linears=tuple((f"{_PROJ[m.name]}.{m.name}", m.in_features, m.out_features, m.bias) for m in mods),
        lora_rank=train.lora_rank, lora_targets=tuple(n for n in order if n in train.lora_targets),
        load_bytes=RECIPES[train.recipe].weight_bytes)


def unsloth_rope_components(arch: Architecture, train: Training) -> list[Component]:
    """The RoPE caches Unsloth 2024.8-2024.10.0 keeps on the GPU for the whole run (planner.memory.bnb_load_replay
    step 1): a cos and a sin cache of ``min(32768, max_position_embeddings)`` x head_dim values in the load
    dtype per attention layer, and one more pair for Llama's model-level rotary module.

    Returns:
        [] where :func:`_unsloth_load_shapes` does not apply; else one allocated component.
    """
    s = _unsloth_load_shapes(arch, train)
    if s is None:
        return []
    pairs = s.layers + int(s.model_rope)
    nbytes = pairs * 2 * s.rope_positions * s.head_dim * s.load_bytes
    return [Component("model buffers (RoPE cos/sin caches, Unsloth: one pair per layer)", GPU, nbytes,
                      f"{pairs} pairs ({s.layers} layers" + (" + the model's" if s.model_rope else "") +
                      f") x 2 x {s.rope_positions:,} positions x head_dim {s.head_dim} x {s.load_bytes} B",
                      BNB_LOAD_SRC)]


@dataclass(frozen=True)
class LoadPool:
    """The reserved bytes a replayed load leaves as the floor of the run's (``reserved``), with what the
    replay counted (``segments``, allocator ``calls``, ``peak_allocated``), which replay (``what``) and its
    sources."""

    reserved: int
    segments: int
    calls: int
    peak_allocated: int
    what: str
    source: str


def unsloth_load_pool(arch: Architecture, train: Training) -> LoadPool | None:
    """:func:`replay_unsloth_load` for ``train`` as a :class:`LoadPool` (its ``peak_reserved``, what
    ``torch.cuda.max_memory_reserved`` reports after loading and ``get_peft_model``), or None where it
    does not apply (:func:`_unsloth_load_shapes`)."""
    s = _unsloth_load_shapes(arch, train)
    if s is None:
        return None
    r = replay_unsloth_load(s)
    return LoadPool(r.peak_reserved, r.segments, r.calls, r.peak_allocated,
                    "the replayed 4-bit load, RoPE caches and LoRA adapters (Unsloth)", BNB_LOAD_SRC)


def load_pool(arch: Architecture, train: Training) -> LoadPool | None:
    """The replayed load that applies to ``train`` (torchtune 0.1 QLoRA, :func:`nf4_load_pool`; Unsloth
    2024.8-2024.10.0 QLoRA, :func:`unsloth_load_pool`), or None."""
    tt = nf4_load_pool(arch, train)
    if tt is not None:
        return LoadPool(tt.reserved, tt.segments, tt.calls, tt.peak_allocated, "the replayed build and load",
                        NF4_SRC)
    return unsloth_load_pool(arch, train)


def load_pool_component(pool: ReplayResult | LoadPool | None, allocated_peak: int, headroom: int) -> list[Component]:
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
    what, src = (pool.what, pool.source) if isinstance(pool, LoadPool) else ("the replayed build and load", NF4_SRC)
    return [Component(LOAD_POOL_NAME, GPU, extra,
                      f"{pool.reserved:,} B reserved after {what} ({pool.segments} segments, "
                      f"{pool.calls:,} allocator calls; peak allocated {pool.peak_allocated:,} B) less "
                      f"{allocated_peak:,} B peak allocated and {headroom:,} B headroom", src, kind="headroom")]
