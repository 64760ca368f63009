"""The GPU allocations of torchtune 0.1's QLoRA model build and checkpoint load, replayed.

torchtune v0.1.0 (commit 9e2c9c06f; torchao==0.1 pinned in pyproject.toml) makes the GPU memory of a
QLoRA Llama-2 model in this order (recipes/lora_finetune_single_device.py ``_setup_model``: the model
is built under ``with utils.set_default_dtype(self._dtype), self._device`` and then
``model.load_state_dict(base_model_state_dict, strict=False)`` copies the CPU checkpoint in):

1. ``lora_llama2`` (torchtune/models/llama2/_component_builders.py) builds ONE decoder layer: q, k, v,
   output projections, RotaryPositionalEmbeddings (theta, then a (max_seq_len, head_dim/2, 2) fp32
   cache from cos and sin of a 1 MiB outer product), the MLP's w1 (gate), w2 (down), w3 (up), two
   RMSNorms; each quantized ``LoRALinear`` (torchtune/modules/peft/lora.py ``_create_weight_and_bias``)
   allocates a bf16 ``nn.Linear`` weight, converts it with ``to_nf4`` and drops it, then its
   lora_a and lora_b.
2. tok_embeddings (bf16, vocab x dim), the bf16 output projection, the final RMSNorm.
3. ``TransformerDecoder`` (torchtune/modules/transformer.py ``_get_clones``) deep-copies that layer
   ``num_layers`` times. torch's ``Tensor.__deepcopy__`` (torch/_tensor.py, v2.2-v2.3) copies a
   wrapper subclass with ``self.clone()`` (``data_ptr() == 0``) then ``new_tensor.__dict__ =
   deepcopy(self.__dict__, memo)``; torchtune's NF4 ``clone`` (torchtune/utils/
   _register_nf4_dispatch_ops.py) is ``to_nf4(get_original_weight())``. So each NF4 weight of each
   copy is dequantized, quantized again, its inner tensors copied from the original, and the
   re-quantized ones dropped. Plain parameters (``nn.Parameter.__deepcopy__``) are cloned; buffers
   get a storage copy and a one-element ``new_empty([])`` that ``set_`` drops.
4. The builder returns: the original layer is freed.
5. ``load_state_dict``: for each NF4 weight in module order, torchtune's ``inplace_copy`` runs
   ``to_nf4(src.to(device))``: the checkpoint tensor is copied to the GPU, converted to bf16 when it
   is not (Llama-2-7b-hf's .bin shards are float16: its config.json 'torch_dtype': 'float16'),
   quantized, and the destination's inner tensors are replaced (the old ones freed). Plain
   parameters are copied into their storage (``copy_`` converts the dtype on the CPU): no GPU
   allocation.

torchao 0.1's ``NF4Tensor.from_tensor`` (torchao/dtypes/nf4tensor.py at tag v0.1, commit ff2889540),
for a bf16 weight of N values (block 64, scaler block 256), allocates in this order (B = bytes):
``nf4`` (16 bf16 levels, 32 B, kept); ``double_quantize_scalers``: ``abs`` 2N, ``max(dim=1)``
values N/32 and int64 indices N/8 (abs and indices freed), ``mean`` 2 B (kept), ``scalers - mean``
N/32, the scaler blocks' ``abs`` N/32 and ``max`` (N/8192, N/2048), ``2 * absmax`` expanded N/32,
``256 / that`` N/32 (kept: the quantization factor is a strided view of it), ``* factor``,
``round``, ``clamp`` N/32 each, ``to(int8)`` N/64 (kept); ``convert_to_norm_float_weight``: the
block ``abs`` 2N and ``max`` (N/32, N/8), ``blocks / scales`` 2N, ``(value - nf4)`` 32N, its
``abs`` 32N, ``min(dim=-1)`` values 2N and int64 indices 8N, ``q[::2] << 4`` 4N, ``| q[1::2]``
4N, ``to(uint8)`` N/2 (kept). ``get_original_weight`` allocates ``(qd >> 4)`` N/2, ``to(long)``
4N, the same for ``& 0b1111``, two ``nf4[index]`` lookups N each, the scalers (N/32 twice), two
``repeated.flatten()`` copies N and products N, and ``torch.stack`` 2N (the result).

The persistent part (32 + 2 B, N/64, N/32, N/2 in 512 B blocks) matches the tutorial's
``LoRALinear(512, 512, rank=8, quantize_base=True)``: 177,152 B allocated (tests).

Not replayed: CUDA reduction workspaces (global-reduce buffers of a few KiB for the full ``mean``),
which live in the small pool, and anything the recipe allocates before the model (nothing on the GPU).
No work at import time and no module state.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.memory.caching_allocator import AllocationTrace as _Trace, CachingAllocator

NF4_SRC = ("torchtune v0.1.0 (9e2c9c06f) recipes/lora_finetune_single_device.py _setup_model, modules/peft/"
           "lora.py, modules/transformer.py _get_clones, utils/_register_nf4_dispatch_ops.py; torchao v0.1 "
           "(ff2889540) dtypes/nf4tensor.py; torch/_tensor.py Tensor.__deepcopy__; c10/cuda/CUDACachingAllocator.cpp")


@dataclass(frozen=True)
class QLoRAShapes:
    """The shapes torchtune 0.1's Llama-2 LoRA/QLoRA builder allocates (counts of values, not bytes).

    attention: (in, out, kind) of the q, k, v and output projections in build order; mlp: the same
    for w1 (gate), w2 (down), w3 (up). kind: True, a quantized LoRALinear (NF4 base); False, a bf16
    LoRALinear; None, a bf16 ``nn.Linear`` without LoRA. rank: the LoRA rank. checkpoint_bytes:
    bytes per value of the checkpoint tensor copied to the GPU at load; checkpoint_is_bf16: no
    ``.to(bfloat16)`` copy is made then.
    """

    dim: int
    vocab: int
    layers: int
    head_dim: int
    max_seq_len: int
    rank: int
    attention: tuple  # ((in, out, quantized) for q, k, v, output)
    mlp: tuple  # ((in, out, quantized) for w1, w2, w3)
    checkpoint_bytes: int = 2
    checkpoint_is_bf16: bool = False


def from_tensor(t: _Trace, n: int) -> dict[str, int]:
    """torchao 0.1 ``NF4Tensor.from_tensor`` of a bf16 tensor of ``n`` values already on the GPU.

    Returns the ids of the tensors the NF4Tensor keeps: nf4, mean, qf (the factor's whole storage),
    qs (int8 scalers), qd (packed values).
    """
    nf4 = t.alloc(32)
    # double_quantize_scalers
    a = t.alloc(2 * n)
    v1, i1 = t.alloc(n // 32), t.alloc(n // 8)
    t.free(a, i1)
    mean = t.alloc(2)
    s1 = t.alloc(n // 32)
    t.free(v1)
    a = t.alloc(n // 32)
    sa, i2 = t.alloc(n // 8192), t.alloc(n // 2048)
    t.free(a, i2)
    two = t.alloc(n // 32)
    qf = t.alloc(n // 32)
    t.free(two)
    q1 = t.alloc(n // 32)
    q2 = t.alloc(n // 32)
    t.free(q1)
    q3 = t.alloc(n // 32)
    t.free(q2)
    qs = t.alloc(n // 64)
    t.free(q3, sa, s1)
    # convert_to_norm_float_weight
    a = t.alloc(2 * n)
    v3, i3 = t.alloc(n // 32), t.alloc(n // 8)
    t.free(a, i3)
    scaled = t.alloc(2 * n)
    diff = t.alloc(32 * n)
    absd = t.alloc(32 * n)
    t.free(diff)
    mv, mi = t.alloc(2 * n), t.alloc(8 * n)
    t.free(mv, absd)
    hi = t.alloc(4 * n)
    comb = t.alloc(4 * n)
    t.free(hi)
    qd = t.alloc(n // 2)
    t.free(comb, mi, scaled, v3)
    return {"nf4": nf4, "mean": mean, "qf": qf, "qs": qs, "qd": qd}


def get_original_weight(t: _Trace, n: int) -> int:
    """torchao 0.1 ``NF4Tensor.get_original_weight`` of ``n`` values; returns the id of the bf16 result."""
    x = t.alloc(n // 2)
    fe = t.alloc(4 * n)
    t.free(x)
    x = t.alloc(n // 2)
    se = t.alloc(4 * n)
    t.free(x)
    df = t.alloc(n)
    ds = t.alloc(n)
    d1 = t.alloc(n // 32)
    scalers = t.alloc(n // 32)
    t.free(d1)
    r = t.alloc(n)
    sf = t.alloc(n)
    t.free(r)
    r = t.alloc(n)
    ss = t.alloc(n)
    t.free(r)
    out = t.alloc(2 * n)
    t.free(fe, se, df, ds, scalers, sf, ss)
    return out


_NF4_PARTS = ("qs", "qf", "mean", "qd", "nf4")  # NF4Tensor.__init__ / __dict__ order


def _nf4_sizes(n: int) -> dict[str, int]:
    return {"qs": n // 64, "qf": n // 32, "mean": 2, "qd": n // 2, "nf4": 32}


def _deepcopy_plain(t: _Trace, nbytes: int) -> int:
    """Tensor.__deepcopy__ of a plain tensor: the storage copy, then ``new_empty([])`` dropped by ``set_``."""
    new = t.alloc(nbytes)
    t.free(t.alloc(1))
    return new


def _deepcopy_nf4(t: _Trace, n: int) -> dict[str, int]:
    """Tensor.__deepcopy__ of an NF4 parameter: clone (torchtune: to_nf4(get_original_weight())), then
    the original's __dict__ deep-copied and the clone's own inner tensors dropped."""
    g = get_original_weight(t, n)
    cloned = from_tensor(t, n)
    t.free(g)
    sizes = _nf4_sizes(n)
    new = {k: _deepcopy_plain(t, sizes[k]) for k in _NF4_PARTS}
    t.free(*(cloned[k] for k in _NF4_PARTS))
    return new


def _lora_linear(t: _Trace, d_in: int, d_out: int, rank: int, quantized: bool) -> list[int]:
    """One LoRALinear (a plain bf16 nn.Linear with rank 0) as built; returns the ids it keeps."""
    w = t.alloc(2 * d_in * d_out)
    if quantized:
        kept = list(from_tensor(t, d_in * d_out).values())
        t.free(w)
    else:
        kept = [w]
    if rank:
        kept += [t.alloc(2 * rank * d_in), t.alloc(2 * d_out * rank)]
    return kept


def _rope(t: _Trace, head_dim: int, max_seq_len: int) -> list[int]:
    """RotaryPositionalEmbeddings._rope_init (torchtune v0.1.0 modules/position_embeddings.py)."""
    half = head_dim // 2
    ar = t.alloc(8 * half)        # arange(0, dim, 2): int64
    f = t.alloc(4 * half)         # .float()
    t.free(ar)
    d = t.alloc(4 * half)         # / dim
    t.free(f)
    p = t.alloc(4 * half)         # base ** (...)
    t.free(d)
    theta = t.alloc(4 * half)     # 1.0 / (...)
    t.free(p)
    seq = t.alloc(4 * max_seq_len)
    outer = t.alloc(4 * max_seq_len * half)
    cos, sin = t.alloc(4 * max_seq_len * half), t.alloc(4 * max_seq_len * half)
    cache = t.alloc(8 * max_seq_len * half)
    t.free(cos, sin, outer, seq)
    return [theta, cache]


@dataclass(frozen=True)
class _Layer:
    """Ids of one built layer: per projection (n values or None for a plain weight, ids)."""

    projections: list  # [(quantized n or None, rank, d_in, d_out, {part: id} or [ids])]
    rope: list
    norms: list


def _build_layer(t: _Trace, s: QLoRAShapes) -> _Layer:
    projections = []

    def proj(d_in, d_out, q):
        kept = _lora_linear(t, d_in, d_out, s.rank if q is not None else 0, bool(q))
        projections.append((d_in * d_out if q else None, s.rank if q is not None else 0, d_in, d_out, kept))

    for d_in, d_out, q in s.attention:
        proj(d_in, d_out, q)
    rope = _rope(t, s.head_dim, s.max_seq_len)
    for d_in, d_out, q in s.mlp:
        proj(d_in, d_out, q)
    norms = [t.alloc(2 * s.dim), t.alloc(2 * s.dim)]
    return _Layer(projections, rope, norms)


def _copy_layer(t: _Trace, layer: _Layer, s: QLoRAShapes) -> list:
    """deepcopy of a TransformerDecoderLayer in __dict__/_modules order: sa_norm, attn (q, k, v, output,
    pos_embeddings), mlp_norm, mlp (w1, w2, w3); returns [(n or None, {part: id} or None)] per projection."""
    out = []
    new_norm = t.alloc(2 * s.dim)  # sa_norm: Parameter.__deepcopy__ clones
    kept = [new_norm]

    def copy_proj(p):
        n, rank, d_in, d_out, _ = p
        if n is not None:
            parts = _deepcopy_nf4(t, n)
            out.append((n, parts))
            kept.extend(parts.values())
        else:
            w = t.alloc(2 * d_in * d_out)
            out.append((None, None))
            kept.append(w)
        if rank:
            kept.extend([t.alloc(2 * rank * d_in), t.alloc(2 * d_out * rank)])

    for p in layer.projections[:len(s.attention)]:
        copy_proj(p)
    kept.append(_deepcopy_plain(t, 4 * (s.head_dim // 2)))                 # theta
    kept.append(_deepcopy_plain(t, 8 * s.max_seq_len * (s.head_dim // 2)))  # cache
    kept.append(t.alloc(2 * s.dim))                                        # mlp_norm
    for p in layer.projections[len(s.attention):]:
        copy_proj(p)
    return out


@dataclass(frozen=True)
class ReplayResult:
    """Bytes (integers) after torchtune 0.1's QLoRA build and load: ``reserved`` (memory_reserved,
    the peak: nothing is released), ``peak_allocated`` (max_memory_allocated), ``allocated`` at the
    end, the number of segments and of allocator calls replayed."""

    reserved: int
    peak_allocated: int
    allocated: int
    segments: int
    calls: int
    build_reserved: int
    build_peak_allocated: int


def replay_init(s: QLoRAShapes) -> ReplayResult:
    """Replay the build and the checkpoint load of torchtune 0.1's LoRA or QLoRA model (module docstring).

    Returns:
        :class:`ReplayResult`, bytes on one GPU.
    """
    alloc = CachingAllocator()
    t = _Trace(alloc)
    layer = _build_layer(t, s)
    t.alloc(2 * s.vocab * s.dim)   # tok_embeddings
    t.alloc(2 * s.dim * s.vocab)   # output projection (bf16 nn.Linear)
    t.alloc(2 * s.dim)             # final RMSNorm
    copies = [_copy_layer(t, layer, s) for _ in range(s.layers)]
    for _, _, _, _, kept in layer.projections:
        t.free(*kept)
    t.free(*layer.rope, *layer.norms)
    build = (alloc.peak_reserved, alloc.peak_allocated)
    for projs in copies:           # load_state_dict: module order = build order
        for n, parts in projs:
            if n is None:
                continue
            x = t.alloc(s.checkpoint_bytes * n)                      # src.to(device)
            y = None if s.checkpoint_is_bf16 else t.alloc(2 * n)     # to_nf4: .to(bfloat16)
            new = from_tensor(t, n)
            if y is not None:
                t.free(y)
            t.free(x)
            for k in _NF4_PARTS:   # inplace_copy's attribute assignments drop the old inner tensors
                t.free(parts[k])
                parts[k] = new[k]
    return ReplayResult(alloc.reserved, alloc.peak_allocated, alloc.allocated, alloc.segments, t.calls, *build)
