"""llama.cpp (and Ollama, which runs it): where a GGUF model's bytes live, in VRAM and in host RAM.

Sources: ggml-org/llama.cpp as vendored by llama-cpp-python 0.3.36 (llama.cpp commit 0c1e5709;
src/llama-model.cpp ``load_tensors``, src/llama-context.cpp, src/llama-kv-cache.cpp,
src/llama-kv-cache-iswa.cpp, src/llama-graph.cpp, ggml/src/ggml-alloc.c).

Several GPUs (``--split-mode layer``, the default): the GPU layers are spread over the devices by
``--tensor-split`` (default: in proportion to each device's free memory, equal for identical cards):
layer il of the offloaded range goes to the first device whose cumulative split exceeds
(il - i_gpu_start) / act_gpu_layers (``std::upper_bound``), so the output layer, the last, lands on
the last device (src/llama-model.cpp ``load_tensors``, ``get_layer_buft_list``, ggml-org/llama.cpp
commit 00342301). Each layer's KV cache lives on its layer's device; each device reserves its own
compute buffer for the graph splits it runs; a host weight's matrix product is offloaded to the
first device. With every layer on the GPUs and more than one device, llama.cpp enables pipeline
parallelism (src/llama-context.cpp: ``n_devices() > 1 && n_gpu_layers > n_layer && split_mode ==
LAYER && offload_kqv``), and ggml_backend_sched keeps ``GGML_SCHED_MAX_COPIES`` = 4 copies of every
split's inputs (``n_copies``). ``--split-mode row`` (each matrix's rows over the devices) is not
modelled and is refused by the workload reader.

Layers (``-ngl`` / ``--gpu-layers`` N, ``n_gpu_layers``): llama.cpp numbers the offloadable layers
0..n_layer, the blocks and then the output layer (output norm and ``output.weight``), and puts
layer il on the GPU when il >= max(n_layer + 1 - N, 0) (``i_gpu_start``). So N counts the output
layer, which is offloaded first: N = 1 puts only the output layer on the GPU, N = n_layer + 1 (or
more) everything. The input layer (``token_embd``) always stays in host memory ("very little
benefit to offloading the input layer"). Older builds (2024) computed i_gpu_start = n_layer - N
and offloaded the output layer last, when N > n_layer; with every layer offloaded both agree.

KV cache (``llama_kv_cache``): one K and one V tensor per layer, on the device of its layer
(``offload_kqv``, the default), of ``ggml_row_size(type, n_embd_k_gqa)`` bytes per cell; the
types are ``--cache-type-k`` / ``--cache-type-v`` (f16 default; a quantized V cache needs flash
attention). Cells: the context ``n_ctx`` is padded to 256, split over ``n_seq_max`` streams
(llama-server ``-np``; the KV cache is not unified by default) of ``n_ctx_seq = pad(n_ctx /
n_seq_max, 256)`` cells each. A sliding-window layer (``llama_kv_cache_iswa``) keeps
``pad(min(n_ctx_seq, n_swa + n_ubatch), 256)`` cells per stream unless ``--swa-full``.

Compute buffer: ``ggml_backend_sched`` reserves, per backend, the peak of ggml-alloc's placement
of the worst-case graph (``sched_reserve``: a ubatch of min(n_ctx, n_ubatch) tokens, all of them
outputs). That peak depends on the order ggml-alloc frees and reuses tensors, which this module
does not replay; it is modelled from the graph's largest live tensors (see :func:`compute_buffers`)
and checked against llama.cpp's own reservations (tests/test_llamacpp.py).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

from planner.model.gguf import GGML_TYPES, GgufWeights, gguf_weights
from planner.model.architecture import Architecture

if TYPE_CHECKING:  # pragma: no cover
    from planner.memory.breakdown import Estimate

#: Cells are allocated in multiples of 256 (llama-context.cpp: ``cparams.n_ctx = GGML_PAD(n_ctx, 256)``).
N_CTX_PAD = 256
#: ggml-cuda's buffer alignment (``ggml_backend_cuda_buffer_type_get_alignment``: 128 B); every tensor
#: of a backend buffer is padded to it.
CUDA_ALIGNMENT = 128
#: KV cache types llama.cpp accepts for --cache-type-k/-v (common/arg.cpp ``kv_cache_types``).
KV_CACHE_TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "IQ4_NL", "Q5_0", "Q5_1")


def _pad(x: int, n: int) -> int:
    return -(-x // n) * n


def kv_cache_type(value: str) -> str | None:
    """The ggml type a KV cache dtype names ('f16', 'q8_0', 'fp16', 'bf16' -> 'F16', ...); None if none."""
    v = value.strip().upper()
    v = {"FP16": "F16", "FP32": "F32"}.get(v, v)
    return v if v in KV_CACHE_TYPES else None


def context_cells(context: int, sequences: int) -> tuple[int, int]:
    """(n_ctx, n_ctx_seq): KV cells in all and per stream for ``sequences`` slots of ``context`` tokens.

    llama-server ``-c C -np S`` gives each slot C / S; here the workload states the per-slot context,
    so C = context x sequences. n_ctx = pad(C, 256); n_ctx_seq = pad(n_ctx / S, 256); n_ctx = n_ctx_seq x S.
    """
    n_ctx = _pad(context * sequences, N_CTX_PAD)
    seq = _pad(n_ctx // sequences, N_CTX_PAD)
    return seq * sequences, seq


def swa_layers(arch: Architecture) -> list[bool]:
    """Which blocks use a sliding window, as llama.cpp lays them out (``hparams.is_swa``).

    Gemma 2 alternates (even blocks windowed), Gemma 3 windows five of every six (the sixth is
    global), GPT-OSS alternates starting with a windowed block; a model whose every layer has the
    window (Mistral 7B v0.1) windows all. Other counts are taken as the last blocks.
    """
    L, n = arch.num_hidden_layers, arch.sliding_window_layers if arch.sliding_window else 0
    if n <= 0:
        return [False] * L
    if n >= L:
        return [True] * L
    if arch.model_type in ("gemma2", "gpt_oss"):
        return [i % 2 == 0 for i in range(L)]
    if arch.model_type.startswith("gemma3"):
        return [(i + 1) % 6 != 0 for i in range(L)]
    return [i >= L - n for i in range(L)]


@dataclass(frozen=True)
class Placement:
    """Which of the model's offloadable layers run on which GPU.

    Attributes:
        n_layer: blocks of the model.
        gpu_layers: ``n_gpu_layers`` as given, clamped to 0..n_layer + 1.
        devices: GPUs the layers are split over (``--split-mode layer``); 1: one GPU.
        splits: cumulative split points, one per device, the last 1 (``--tensor-split`` normalised);
            empty: an equal split (llama.cpp's default on identical cards, by free memory).
    """

    n_layer: int
    gpu_layers: int
    devices: int = 1
    splits: tuple[Fraction, ...] = ()

    @property
    def first_gpu_block(self) -> int:
        return max(self.n_layer + 1 - self.gpu_layers, 0)

    @property
    def points(self) -> tuple[Fraction, ...]:
        return self.splits or tuple(Fraction(d + 1, self.devices) for d in range(self.devices))

    @cached_property
    def layer_devices(self) -> tuple[int | None, ...]:
        """The device of each offloadable layer 0..n_layer (None: host memory), computed once: the
        first device whose cumulative split exceeds (il - i_gpu_start) / act_gpu_layers
        (``std::upper_bound``); with an equal split that is floor((il - i_gpu_start) x devices / act)."""
        start, act = self.first_gpu_block, min(self.gpu_layers, self.n_layer + 1)
        out: list[int | None] = []
        for il in range(self.n_layer + 1):
            if il < start or il - start >= act:
                out.append(None)
            elif not self.splits:
                out.append((il - start) * self.devices // act)
            else:
                out.append(bisect.bisect_right(self.points, Fraction(il - start, act)))
        return tuple(out)

    def device_of(self, il: int) -> int | None:
        """The GPU of offloadable layer ``il`` (0..n_layer - 1 the blocks, n_layer the output
        layer), or None for host memory: llama.cpp's ``get_layer_buft_list``."""
        return self.layer_devices[il]

    @property
    def output_on_gpu(self) -> bool:
        return self.device_of(self.n_layer) is not None

    @property
    def output_device(self) -> int | None:
        return self.device_of(self.n_layer)

    @property
    def gpu_blocks(self) -> int:
        return self.n_layer - min(self.first_gpu_block, self.n_layer)

    def block_on_gpu(self, i: int) -> bool:
        return i >= self.first_gpu_block

    def blocks_on(self, device: int) -> list[int]:
        """The blocks on GPU ``device``."""
        return [i for i in range(self.first_gpu_block, self.n_layer) if self.layer_devices[i] == device]

    @property
    def pipeline_parallel(self) -> bool:
        """llama.cpp enables pipeline parallelism (4 copies of split inputs): several devices and
        every layer, the output layer included, on them."""
        return self.devices > 1 and self.gpu_layers > self.n_layer

    def text(self) -> str:
        """'all 33 layers on the GPU' or '20 of 32 blocks and the output layer on the GPU', and the
        split over several GPUs."""
        where = "the GPU" if self.devices == 1 else f"the {self.devices} GPUs"
        if self.gpu_layers >= self.n_layer + 1:
            out = f"all {self.n_layer + 1} layers (the {self.n_layer} blocks and the output layer) on {where}"
        elif self.gpu_layers == 0:
            return "no layer on the GPU (the GPU holds only the compute buffer)"
        else:
            out = (f"{self.gpu_blocks} of {self.n_layer} blocks and the output layer on {where}, "
                   f"{self.n_layer - self.gpu_blocks} blocks in host RAM")
        if self.devices > 1:
            parts = []
            for d in range(self.devices):
                b = self.blocks_on(d)
                span = f"blocks {b[0]}-{b[-1]}" if len(b) > 1 else (f"block {b[0]}" if b else "no block")
                parts.append(f"GPU {d}: {span}" + (" and the output layer" if self.output_device == d else ""))
            out += " (split by layer: " + "; ".join(parts) + ")"
        return out


def placement(arch: Architecture, gpu_layers: int, devices: int = 1,
              splits: tuple[Fraction, ...] = ()) -> Placement:
    """:class:`Placement` of ``gpu_layers`` (any value above n_layer + 1 means all) over ``devices`` GPUs."""
    L = arch.num_hidden_layers
    return Placement(L, max(0, min(gpu_layers, L + 1)), max(devices, 1), splits)


#: The two KV layouts llama.cpp has for DeepSeek-V2/V3's multi-head latent attention (MLA), chosen by
#: the GGUF's metadata (src/models/deepseek2.cpp ``is_mla = hparams.is_mla()``: the GGUF gives
#: ``deepseek2.attention.key_length_mla`` and ``value_length_mla``, written by convert_hf_to_gguf.py
#: since ggml-org/llama.cpp PR 12801, 2025):
#: 'latent' caches K only, one head of kv_lora_rank + qk_rope_head_dim values per cell (the
#: compressed latent and the rotary key; V is a view of its first kv_lora_rank values,
#: ``build_attn_inp_k``); 'per_head' (GGUFs converted before, such as Ollama's deepseek-v2 of 2024)
#: caches every head's K at qk_nope + qk_rope (192) and V at v_head_dim (128) values.
MLA_KV_LAYOUTS = ("latent", "per_head")
MLA_SRC = ("llama.cpp src/models/deepseek2.cpp (is_mla: build_attn_inp_k, K-only latent cache; else per-head K "
           "n_embd_head_k, V n_embd_head_v), src/llama-hparams.cpp n_embd_k_gqa / n_embd_v_gqa")


def kv_widths(arch: Architecture, *, mla_layout: str = "latent") -> tuple[int, int]:
    """Values one layer's cell keeps for K and for V (``n_embd_k_gqa``, ``n_embd_v_gqa``).

    MLA (DeepSeek-V2/V3): 'latent' K kv_lora_rank + qk_rope_head_dim and no V; 'per_head' K
    heads x (qk_nope + qk_rope), V heads x v_head_dim (:data:`MLA_KV_LAYOUTS`). A generic model:
    the K+V values Transformers caches per layer, half each. Others: kv heads x head_dim each.
    """
    if arch.is_mla:
        if mla_layout == "latent":
            return arch.kv_lora_rank + arch.qk_rope_head_dim, 0
        a = arch.num_attention_heads
        return a * (arch.qk_nope_head_dim + arch.qk_rope_head_dim), a * arch.v_head_dim
    if arch.generic:
        half = int(arch.extra["_kv_values"]) // 2
        return half, half
    d = arch.num_key_value_heads * arch.head_dim
    return d, d


def kv_layer_bytes(arch: Architecture, *, type_k: str, type_v: str, cells: int, mla_layout: str = "latent") -> int:
    """K and V of one layer for ``cells`` cells: cells x (row_size(K type, n_embd_k_gqa) + row_size(V type,
    n_embd_v_gqa)) (:func:`kv_widths`)."""
    dk, dv = kv_widths(arch, mla_layout=mla_layout)
    return cells * (GGML_TYPES[type_k].row_bytes(dk) + (GGML_TYPES[type_v].row_bytes(dv) if dv else 0))


def _config(arch: Architecture, *keys: str):
    for k in keys:
        v = arch.extra.get(k)
        if v is not None:
            return v
    return None


def kv_layers(arch: Architecture) -> list[bool]:
    """Which blocks keep a KV cache: all of them, but for a hybrid model whose other layers are
    recurrent (linear attention, state-space), where llama.cpp's ``llama_memory_hybrid`` gives the KV
    cache only the attention layers (its layer filter ``!hparams.is_recurrent(il)``) and the
    recurrent layers a fixed-size state (:func:`recurrent_state_bytes`).

    The attention layers: the config's ``layer_types`` (entries naming attention but not linear
    attention), else ``full_attention_interval`` k (Qwen3-Next, Qwen3.5: every k-th layer, il % k ==
    k - 1), else the count of layers Transformers caches keys for (planner.model.generic), spread
    evenly. Only a generic model (read on the meta device) can be hybrid here.
    """
    L = arch.num_hidden_layers
    n = arch.kv_cache_layers
    if not arch.generic or n >= L:
        return [True] * L
    types = arch.extra.get("layer_types")
    if isinstance(types, (list, tuple)) and len(types) == L:
        return [("attention" in str(t) and "linear" not in str(t)) for t in types]
    k = _config(arch, "full_attention_interval")
    if isinstance(k, int) and k > 0:
        return [i % k == k - 1 for i in range(L)]
    step = max(L // max(n, 1), 1)
    return [i % step == step - 1 and i // step < n for i in range(L)]


def recurrent_state_bytes(arch: Architecture) -> tuple[int, str]:
    """Bytes of one recurrent layer's state for one sequence in llama.cpp's ``llama_memory_recurrent``
    (r_l: the convolution state, ``n_embd_r``; s_l: the SSM / delta-rule state, ``n_embd_s``; both F32,
    one cell per sequence: src/llama-hparams.cpp, src/llama-model.cpp ``create_memory``), with the
    arithmetic; (0, '') for a model without recurrent layers or whose state sizes the config does not
    give.

    Gated DeltaNet (Qwen3-Next, Qwen3.5: ``linear_conv_kernel_dim`` c, ``linear_num_key_heads`` g,
    ``linear_key_head_dim`` dk, ``linear_num_value_heads`` hv, ``linear_value_head_dim`` dv; llama.cpp's
    ssm_d_conv c, ssm_d_state dk, ssm_n_group g, ssm_d_inner hv x dv): r = (c - 1) x (hv x dv + 2 x g x dk),
    s = dk x hv x dv. Mamba (``conv_kernel``, ``state_size``, ``n_groups``: none for Mamba-1, ``expand``):
    d_inner = expand x hidden, r = (conv - 1) x (d_inner + 2 x n_groups x state), s = state x d_inner.
    """
    if not any(not x for x in kv_layers(arch)):
        return 0, ""
    c = _config(arch, "linear_conv_kernel_dim")
    if c is not None:
        g, dk = _config(arch, "linear_num_key_heads"), _config(arch, "linear_key_head_dim")
        hv, dv = _config(arch, "linear_num_value_heads"), _config(arch, "linear_value_head_dim")
        if None in (g, dk, hv, dv):
            return 0, ""
        inner = hv * dv
        r, st = (c - 1) * (inner + 2 * g * dk), dk * inner
        return (r + st) * 4, (f"F32 conv state ({c} - 1) x ({hv} x {dv} + 2 x {g} x {dk}) + delta-rule state "
                              f"{dk} x {hv} x {dv}")
    conv, state = _config(arch, "conv_kernel", "d_conv"), _config(arch, "state_size", "d_state")
    if conv is None or state is None:
        return 0, ""
    # Mamba-1 has no groups (llama.cpp's ssm_n_group 0); Mamba-2's default is one
    groups = _config(arch, "n_groups") or (0 if arch.model_type in ("mamba", "falcon_mamba") else 1)
    inner = int((_config(arch, "expand") or 2) * arch.hidden_size)
    r, st = (conv - 1) * (inner + 2 * groups * state), state * inner
    return (r + st) * 4, f"F32 conv state ({conv} - 1) x ({inner} + 2 x {groups} x {state}) + SSM state {state} x {inner}"


@dataclass(frozen=True)
class KvSplit:
    """KV cache bytes on the GPU and in host memory, with the cells per layer kind.

    ``gpu``, ``host`` and ``per_device`` include the recurrent state of a hybrid model's recurrent
    layers (``recurrent`` of it in all; on each recurrent layer's device, as its KV would be)."""

    gpu: int
    host: int
    full_cells: int
    swa_cells: int
    swa_layers: int
    seq_cells: int = 0  # cells per stream (n_ctx_seq)
    per_device: tuple[int, ...] = ()  # GPU bytes of each device (sums to gpu)
    kv_layers: int = 0  # layers that keep K and V (all but a hybrid model's recurrent layers)
    recurrent: int = 0  # bytes of the recurrent layers' state (within gpu + host)

    @property
    def total(self) -> int:
        return self.gpu + self.host


def kv_split(arch: Architecture, place: Placement, *, type_k: str, type_v: str, context: int, sequences: int,
             n_ubatch: int, swa_full: bool = False, mla_layout: str = "latent") -> KvSplit:
    """The KV cache of ``sequences`` slots of ``context`` tokens, split by the device of each layer;
    a hybrid model's recurrent layers keep :func:`recurrent_state_bytes` per sequence instead."""
    n_ctx, n_seq_ctx = context_cells(context, sequences)
    swa = swa_layers(arch)
    has_kv = kv_layers(arch)
    window = int(arch.sliding_window or 0)
    swa_cells = n_ctx if swa_full else sequences * _pad(min(n_seq_ctx, window + n_ubatch), N_CTX_PAD)
    state, _ = recurrent_state_bytes(arch)
    host = 0
    dev = [0] * place.devices
    rec = 0
    for i, w in enumerate(swa):
        if has_kv[i]:
            b = kv_layer_bytes(arch, type_k=type_k, type_v=type_v, cells=swa_cells if w else n_ctx,
                               mla_layout=mla_layout)
        else:
            b = state * max(sequences, 1)
            rec += b
        d = place.device_of(i)
        if d is not None:
            dev[d] += b
        else:
            host += b
    return KvSplit(sum(dev), host, n_ctx, swa_cells if any(swa) else 0, sum(swa), n_seq_ctx, tuple(dev),
                   kv_layers=sum(has_kv), recurrent=rec)


@dataclass(frozen=True)
class WeightSplit:
    """GGUF weight bytes on the GPU and in host memory (the host part includes ``token_embd``)."""

    gpu: int
    host: int
    token_embd: int
    weights: GgufWeights
    per_device: tuple[int, ...] = ()  # GPU bytes of each device (sums to gpu)

    @property
    def total(self) -> int:
        return self.weights.total


def weight_split(arch: Architecture, preset: str, place: Placement, *, imatrix: bool | None = None,
                 alignment: int = CUDA_ALIGNMENT, legacy_q2k: bool = False) -> WeightSplit:
    """Where each GGUF tensor lives: blocks and the output layer by :class:`Placement` (device by
    device), token and position embeddings in host memory. The rotary factors (``rope_freqs``) are
    created with block 0 and, as ``TENSOR_DUPLICATED``, once more in every other buffer that holds
    a block: one copy per GPU with blocks and one in host memory with a host block. GPU tensors are
    padded to the buffer alignment. ``legacy_q2k``: a Q2_K file of a build before b1828
    (planner.model.gguf.tensor_types)."""
    w = gguf_weights(arch, preset, imatrix=imatrix, legacy_q2k=legacy_q2k)
    host = 0
    dev = [0] * place.devices
    holders = {place.device_of(i) for i in range(place.n_layer)}  # None: host memory
    for layer, blk in w.blocks.items():
        d = place.device_of(layer)
        if d is not None:
            dev[d] += sum(_pad(b, alignment) for b in blk.sizes)
        else:
            host += blk.total
    for t, _, b in w.tensors:
        if t.layer >= 0:
            continue  # summed by block above
        if t.role == "rope":
            for d in holders:
                if d is None:
                    host += b
                else:
                    dev[d] += _pad(b, alignment)
            continue
        if t.role in ("output", "norm"):
            d = place.output_device
        else:  # token_embd, position_embd: the input layer
            d = None
        if d is not None:
            dev[d] += _pad(b, alignment)
        else:
            host += b
    if arch.tie_word_embeddings and place.output_device is not None:
        # tied: the output layer uses token_embd, which llama.cpp duplicates onto the output device
        dev[place.output_device] += _pad(w.role_bytes("token_embd"), alignment)
    return WeightSplit(sum(dev), host, w.role_bytes("token_embd"), w, tuple(dev))


#: Activations of a llama.cpp graph are F32 (ggml computes in F32 between matmuls).
ACT_BYTES = 4
#: Rows of F32 values per token that live at each phase's peak beside its big tensor, measured with
#: llama.cpp 0c1e5709's CPU backend (one buffer for everything; tests/test_llamacpp.py lists the
#: reservations): attention, the KQ mask and the scores with 5 rows of n_embd and 2 of n_embd_k_gqa
#: (the new K and V); the MLP, the mask and 3 outputs of n_ff (k experts' for MoE) with 4 rows of
#: n_embd; the output layer, the logits with 2 rows of n_embd. On a GPU the token embeddings (one
#: row of n_embd) are an input in the host buffer, so the GPU buffer has one row fewer: Llama-3.1-8B
#: logs 258.50 MiB (the logits, n_ctx 512) exactly and 560.00 MiB at n_ctx 8192 without flash
#: attention, 4 MiB (0.7 %) under this rule's 564 MiB (a 2024 build).
ATTN_ROWS, ATTN_KV_ROWS, MLP_FF_ROWS, MLP_ROWS, OUT_ROWS = 5, 2, 3, 4, 2
#: A llama.cpp process's own host memory beside its buffers (CUDA runtime and cuBLAS libraries,
#: the ggml context metadata): assumption, not measured.
LLAMACPP_PROCESS_BYTES = 1 * 2**30
#: Copies of each split's inputs ggml_backend_sched keeps with pipeline parallelism
#: (ggml/include/ggml-backend.h ``GGML_SCHED_MAX_COPIES`` 4; llama.cpp logs "pipeline parallelism
#: enabled (n_copies=4)").
PIPELINE_COPIES = 4
#: ggml-cuda offloads an op whose weights are in host memory to the GPU when its batch has at
#: least this many tokens (ggml-cuda.cu ``ggml_backend_cuda_device_offload_op``: min_batch_size 32).
OP_OFFLOAD_MIN_BATCH = 32


@dataclass(frozen=True)
class ComputeBuffers:
    """llama.cpp's compute buffers (bytes) and how they were formed."""

    gpu: int
    host: int
    gpu_text: str
    host_text: str
    tokens: int
    per_device: tuple[int, ...] = ()  # each GPU's buffer (gpu is the largest)
    device_texts: tuple[str, ...] = ()


def compute_buffers(arch: Architecture, place: Placement, weights: WeightSplit, kv: KvSplit, *, n_ubatch: int,
                    flash_attention: bool, type_k: str, type_v: str, mla_layout: str = "latent",
                    v_untransposed: bool = False) -> ComputeBuffers:
    """The GPU and host compute buffers ``ggml_backend_sched`` reserves for the worst-case graph.

    The worst case is a ubatch of T = min(n_ctx, n_ubatch) tokens, every one an output
    (llama-context.cpp ``sched_reserve``). Activations are F32. Per stream of n_kv = n_ctx_seq cells:

    - host (``CUDA_Host`` / CPU) buffer: the graph inputs built on the CPU: the token embeddings
      (``get_rows`` of ``token_embd``, which stays in host memory), T x n_embd; the KQ mask,
      n_kv x T (F32, F16 with flash attention); token ids, positions and output ids (int32 x T).
      Llama-3.1-8B logs 9.01 MiB at n_ctx 512 and 24.01 MiB at 8192 (8 + 1 and 8 + 16 MiB + ids).
    - GPU buffer: the largest of (a) attention: the mask, the scores n_kv x T x heads (not with flash
      attention, whose kernel keeps no score matrix) and the rows of :data:`ATTN_ROWS`; (b) the MLP:
      the mask and :data:`MLP_FF_ROWS` outputs of n_ff x T (an MoE block's k experts per token);
      (c) the output layer: the logits n_vocab x T. The row counts are measured (their docstring).
    - With blocks in host memory, ggml-cuda runs their matrix products on the GPU anyway when the
      batch has >= 32 tokens (``offload_op``), and the scheduler copies each such op's host weight
      into the GPU compute buffer as an input of its split. It starts a new split at every weight on
      another backend, "by starting a new split, the memory of the previously offloaded weights can
      be reused" (ggml/src/ggml-backend.cpp ``ggml_backend_sched_split_graph``), and ggml-alloc frees
      a split input once its one consumer has run, so one host weight is live at a time, beside that
      phase's activations: the largest host attention weight is added to the attention phase, the
      largest host MLP weight (an MoE layer's whole expert tensor, as the copy is allocated whole) to
      the MLP phase, and the K and V of one host layer, which a GPU cannot read from a CPU buffer, to
      the attention phase (assumed copied in with it). With the output layer on the CPU, its weight
      is added to the logits phase. Checked against one published partial-offload log
      (tests/test_llamacpp.py: Qwen3-Coder-30B-A3B, -ngl 26, 163 MiB logged against 150 MiB here).
    - Several GPUs (layer split): each device's buffer holds the phases of the splits it runs: the
      attention and MLP of its blocks, the logits on the output layer's device, and the host blocks'
      offloaded products (and a CPU output layer's) on the first device. With pipeline parallelism
      each device also keeps 3 more copies (n_copies = 4) of its splits' inputs, the KQ mask and the
      n_embd x T hidden state, and the host buffer 4 copies of the graph inputs (ggml-backend.cpp
      ``ggml_backend_sched_split_graph``: "add input copies as leafs so that they are allocated first").
      Checked against a published 2-GPU log (tests/test_llamacpp.py: Command-R, 672 MiB on CUDA0).
    - MLA (DeepSeek-V2/V3, src/models/deepseek2.cpp): the new K and V rows are the layout's widths
      (:func:`kv_widths`: per head 192 and 128 values a head; latent 576 and none); the scores are
      n_kv x T x n_head either way. The latent layout also makes a contiguous copy of V, a view of the
      cache's first kv_lora_rank values of every cell (``build_attn_mha``: not ``v_trans``, so
      ``ggml_cont(ggml_transpose(v))``: n_kv x kv_lora_rank in the K type), and keeps the absorbed
      query and the latent attention output (each kv_lora_rank x n_head x T, F32) before ``wv_b``
      decompresses it.
    - ``v_untransposed`` (flash attention ``auto`` resolved off after the cache was laid out for it,
      :func:`settings`): without flash attention the graph needs V transposed and copies it,
      ``ggml_cont(ggml_transpose(v))`` (src/llama-graph.cpp ``build_attn_mha``: ``if (!v_trans)``),
      n_kv x n_embd_v_gqa in the V type, beside the scores. On llama.cpp's CPU backend (build of
      llama-cpp-python 0.3.36 made to keep V untransposed without flash attention) the DeepSeek-V2-Lite
      per-head graph at 32K reserves 1,256.28 MiB against 1,136.27 MiB with V transposed: +120 MiB,
      this copy's 128 MiB less the allocator's placement.
    """
    h, f, V = arch.hidden_size, arch.intermediate_size, arch.vocab_size
    n_ctx, n_kv = kv.full_cells, kv.seq_cells or kv.full_cells
    T = min(n_ctx, n_ubatch)
    a = arch.num_attention_heads
    mask_bytes = 2 if flash_attention else 4
    mask = n_kv * T * mask_bytes
    row = h * T * ACT_BYTES
    dk, dv = kv_widths(arch, mla_layout=mla_layout)
    kv_row = (dk + dv) * T * ACT_BYTES // 2  # ATTN_KV_ROWS (2) rows: the new K and V
    ids = 3 * T * 4
    host = row + mask + ids
    host_text = (f"inputs: token embeddings {T:,} tokens x n_embd {h:,} x 4 B + KQ mask {n_kv:,} cells x {T:,} x "
                 f"{mask_bytes} B + token ids, positions, output ids 3 x {T:,} x 4 B")
    # on the GPU: the phases' rows less the token embeddings, which stay in the host buffer
    attn = mask + (ATTN_ROWS - 1) * row + ATTN_KV_ROWS * kv_row + (0 if flash_attention else n_kv * T * a * ACT_BYTES)
    mla_extra = 0
    if arch.is_mla and mla_layout == "latent":
        mla_extra = (n_kv * GGML_TYPES[type_k].row_bytes(arch.kv_lora_rank)
                     + 2 * arch.kv_lora_rank * a * T * ACT_BYTES)
        attn += mla_extra
    v_copy = n_kv * GGML_TYPES[type_v].row_bytes(dv) if v_untransposed and dv and not flash_attention else 0
    attn += v_copy
    mla_extra += v_copy  # the phase's extras beyond the rows (base_attn below)
    k = arch.num_experts_per_tok if arch.is_moe else 1
    mlp = mask + MLP_FF_ROWS * k * f * T * ACT_BYTES + (MLP_ROWS - 1) * row
    mlp_text = (f"MLP: mask + {MLP_FF_ROWS} x {f'{k} experts x ' if arch.is_moe else ''}n_ff {f:,} x {T:,} x 4 B "
                f"+ {MLP_ROWS - 1} rows")
    out = V * T * ACT_BYTES + (OUT_ROWS - 1) * row
    attn_text = (f"attention (mask + {ATTN_ROWS - 1} rows of n_embd and the new K and V ({dk:,} + {dv:,} values) x "
                 f"{T:,} tokens x 4 B" + ("" if flash_attention else f" + scores {n_kv:,} cells x {T:,} x {a} heads x 4 B")
                 + (f" + MLA latent: V copy {n_kv:,} cells x kv_lora_rank {arch.kv_lora_rank} in {type_k} and the "
                    f"absorbed query and output 2 x {arch.kv_lora_rank} x {a} heads x {T:,} x 4 B"
                    if mla_extra - v_copy else "")
                 + (f" + V copied transposed {n_kv:,} cells x n_embd_v_gqa {dv:,} in {type_v} (flash attention auto "
                    f"resolved off: no CUDA kernel for this head shape)" if v_copy else ""))
    out_text = f"output: logits n_vocab {V:,} x {T:,} x 4 B + {OUT_ROWS - 1} row"
    host_blocks = [i for i in range(place.n_layer) if not place.block_on_gpu(i)]
    if host_blocks and T >= OP_OFFLOAD_MIN_BATCH:
        # one host weight at a time in its own split (ggml_backend_sched_split_graph), beside its phase
        blocks = weights.weights.blocks
        attn_w = max((blocks[i].largest_attn for i in host_blocks if i in blocks), default=0)
        mlp_w = max((blocks[i].largest_other for i in host_blocks if i in blocks), default=0)
        kv_host = kv_layer_bytes(arch, type_k=type_k, type_v=type_v, cells=n_ctx, mla_layout=mla_layout)
        attn += max(attn_w, 0) + kv_host
        mlp += mlp_w
        attn_text += (f" + the largest host attention weight {attn_w / 2**20:,.2f} MiB and one host layer's K and V "
                      f"{kv_host / 2**20:,.2f} MiB copied in")
        mlp_text += f" + the largest host MLP weight {mlp_w / 2**20:,.2f} MiB copied in"
    if not place.output_on_gpu and T >= OP_OFFLOAD_MIN_BATCH:
        head = weights.weights.role_bytes("output") or weights.weights.role_bytes("token_embd")
        out += head
        out_text += f" + output.weight {head / 2**20:,.2f} MiB copied in"
    offload = bool(host_blocks) and T >= OP_OFFLOAD_MIN_BATCH
    attn_base_text, mlp_base_text = attn_text.split(" + the largest")[0] + ")", mlp_text.split(" + the largest")[0]
    attn_text += ")"
    base_attn = (mask + (ATTN_ROWS - 1) * row + ATTN_KV_ROWS * kv_row + (0 if flash_attention else n_kv * T * a * ACT_BYTES)
                 + mla_extra)
    base_mlp = mask + MLP_FF_ROWS * k * f * T * ACT_BYTES + (MLP_ROWS - 1) * row
    base_out = V * T * ACT_BYTES + (OUT_ROWS - 1) * row
    copies = PIPELINE_COPIES if place.pipeline_parallel else 1
    per_device: list[int] = []
    texts: list[str] = []
    for d in range(place.devices):
        has_blocks = bool(place.blocks_on(d))
        first = d == 0
        phases: dict[str, tuple[int, str]] = {}
        if has_blocks or (first and offload):
            a_ = attn if first else base_attn
            m_ = mlp if first else base_mlp
            phases["attention"] = (a_, attn_text if first else attn_base_text)
            phases["mlp"] = (m_, mlp_text if first else mlp_base_text)
        if place.output_device == d or (first and not place.output_on_gpu and T >= OP_OFFLOAD_MIN_BATCH):
            phases["output"] = (out if first or place.output_device == d else base_out, out_text)
        if not phases:
            phases["attention"] = (base_attn, attn_base_text)
        peak = max(v for v, _ in phases.values())
        text = "max(" + ", ".join(f"{t} {v / 2**20:,.2f} MiB" for v, t in phases.values()) + ")"
        if copies > 1:
            extra = (copies - 1) * (mask + row)
            peak += extra
            text += (f" + {copies - 1} more copies of the split inputs (KQ mask and the n_embd x {T:,} hidden state, "
                     f"{extra / 2**20:,.2f} MiB; pipeline parallelism, n_copies {copies})")
        if first and offload:
            text += (f"; host blocks' matrix products run on this GPU for batches of >= {OP_OFFLOAD_MIN_BATCH} tokens "
                     "(ggml-cuda offload_op), one weight copied in at a time")
        per_device.append(peak)
        texts.append(text)
    if copies > 1:
        host *= copies
        host_text = f"{copies} copies (pipeline parallelism) of: " + host_text
    gpu = max(per_device)
    return ComputeBuffers(gpu, host, texts[per_device.index(gpu)], host_text, T, tuple(per_device), tuple(texts))


def fa_f16_copy_bytes(arch: Architecture, kv: KvSplit, place: Placement, *, flash_attention: bool, type_k: str,
                      type_v: str, mla_layout: str = "latent") -> int:
    """Bytes of the F16 copy of a quantized K/V cache that ggml-cuda's flash attention makes in its
    memory pool for prompt batches.

    ``launch_fattn`` (ggml/src/ggml-cuda/fattn-common.cuh, ggml-org/llama.cpp commit 7c95e797)
    allocates ``K_f16`` / ``V_f16`` of ``ggml_nelements(K)`` halves from the device's pool and
    converts the layer's K (and V) to F16 when the kernel needs F16 (``need_f16_K``/``_V``: the tile,
    WMMA and MMA kernels that prompt batches use; the vector kernel of single-token decode reads
    q8_0/q4_0 directly). The view spans every cell a batch attends to, at worst all n_ctx cells of
    a full-attention layer, so the pool grows to n_ctx x n_embd_k_gqa x 2 B for K plus the same
    for V, for each of the two that is quantized; the pool keeps its peak (it is not returned). 0
    without flash attention, with 16/32-bit caches, or with no layer on the GPU.
    """
    if not flash_attention or place.gpu_blocks == 0:
        return 0
    dk, dv = kv_widths(arch, mla_layout=mla_layout)
    return sum(kv.full_cells * d * 2 for t, d in ((type_k, dk), (type_v, dv)) if d and GGML_TYPES[t].block > 1)


LLAMACPP_SRC = "llama.cpp src/llama-model.cpp load_tensors (i_gpu_start), commit 0c1e5709"
KV_SRC = "llama.cpp src/llama-kv-cache.cpp (per-layer K/V, ggml_row_size x cells), src/llama-context.cpp (n_ctx pad 256)"
COMPUTE_SRC = ("llama.cpp src/llama-context.cpp sched_reserve (worst-case ubatch); ggml-backend.c scheduler; "
               "derived from the graph's largest tensors, checked against llama.cpp's logged reservations")


def cuda_fa_supported(arch: Architecture, *, mla_layout: str = "latent") -> bool:
    """Whether ggml-cuda's flash attention has a kernel for the model's attention shape.

    Only the shape this module knows to be missing is refused: K 192 / V 128 values a head (MLA's
    per-head layout, DeepSeek-V2/V3 GGUFs without key_length_mla) needs the GQA-grouped MMA kernel,
    which requires n_head / n_head_kv to be a multiple of 8 (ggml/src/ggml-cuda/fattn.cu
    ``ggml_cuda_get_best_fattn_kernel``: ``case 192: if (V->ne[0] != 128 || !gqa_opt_applies) ...
    if (gqa_ratio % 8 != 0) return BEST_FATTN_KERNEL_NONE``, llama.cpp as vendored by
    llama-cpp-python 0.3.36); the per-head layout caches every head (ratio 1). Every other shape is
    taken as supported.
    """
    return not (arch.is_mla and mla_layout == "per_head")


def settings(w) -> dict:
    """The llama.cpp settings of an ``engine: llama.cpp`` workload, resolved (ggml type names).

    ``flash_attention: true`` is llama.cpp's default ``--flash-attn auto`` (what llama-server and
    Ollama pass on CUDA, ollama llm/llama_server.go ``appendFlashAttentionArgs``). With 16-bit K and
    V, ``auto`` keeps flash attention only where the GPU backend runs it for the layer
    (src/llama-context.cpp ``resolve_fused_ops``: the FA probe graph's op on another device than the
    layer sets ``cparams.flash_attn = false``); :func:`cuda_fa_supported` says where it does not.
    The KV cache was made before that probe, with ``cparams.flash_attn`` still true (llama-context.cpp:
    ``cparams.flash_attn = params.flash_attn_type != LLAMA_FLASH_ATTN_TYPE_DISABLED``; llama-model.cpp
    ``attn_v_trans = !cparams.flash_attn``), so V stays untransposed: ``fa_auto_off``. A quantized K
    or V cache forces flash attention on instead (llama-context.cpp "enabling flash_attn since it is
    required for quantized V cache"), so it is not resolved off there.
    """
    from planner.workload.engine_releases import legacy_q2k

    i = w.infer
    arch = w.architecture
    k = kv_cache_type(i.kv_dtype)
    v = kv_cache_type(i.kv_dtype_v or i.kv_dtype)
    layers = arch.num_hidden_layers + 1 if i.gpu_layers is None else i.gpu_layers
    mla = i.mla_kv_layout or "latent"
    fa = i.flash_attention
    auto_off = (fa and layers > 0 and not cuda_fa_supported(arch, mla_layout=mla)
                and GGML_TYPES[k].block == 1 and GGML_TYPES[v].block == 1)
    return {"preset": i.weights, "type_k": k, "type_v": v, "gpu_layers": layers, "n_ubatch": i.max_num_batched_tokens
            or 512, "flash_attention": fa and not auto_off, "fa_auto_off": auto_off, "imatrix": i.imatrix,
            "swa_full": not i.sliding_window, "devices": i.tp, "mla_layout": mla,
            "legacy_q2k": legacy_q2k(getattr(i, "engine_version", None))}


def layout(w) -> tuple[Placement, WeightSplit, KvSplit, ComputeBuffers]:
    """Placement, weights, KV cache and compute buffers of an ``engine: llama.cpp`` workload."""
    s = settings(w)
    arch, i = w.architecture, w.infer
    place = placement(arch, s["gpu_layers"], s["devices"])
    ws = weight_split(arch, s["preset"], place, imatrix=s["imatrix"], legacy_q2k=s["legacy_q2k"])
    kv = kv_split(arch, place, type_k=s["type_k"], type_v=s["type_v"], context=i.context, sequences=i.concurrency,
                  n_ubatch=s["n_ubatch"], swa_full=s["swa_full"], mla_layout=s["mla_layout"])
    cb = compute_buffers(arch, place, ws, kv, n_ubatch=s["n_ubatch"], flash_attention=s["flash_attention"],
                         type_k=s["type_k"], type_v=s["type_v"], mla_layout=s["mla_layout"],
                         v_untransposed=s["fa_auto_off"])
    return place, ws, kv, cb


def estimate_llamacpp(w, overheads) -> "Estimate":
    """The memory of an ``engine: llama.cpp`` workload: one GPU's VRAM and one machine's host RAM.

    With the layers split over several GPUs (``tp`` of the workload: the GPUs of one replica, by
    ``--split-mode layer``), the GPU components are those of the GPU that needs the most; a note
    gives every GPU's need.

    GPU: the GGUF tensors of the layers on the GPU (padded to 128 B), their KV cache, the compute
    buffer, and the runtime (CUDA context, cuBLAS workspace). llama.cpp allocates its buffers once,
    at start-up, so no caching-allocator headroom is added; ggml-cuda's memory pool for temporaries
    (dequantized weights, quantized activations) grows while it runs and is not modelled.

    Host, per machine: the OS baseline, one llama.cpp process per replica, the host-resident GGUF
    tensors (``token_embd``, the blocks left on the CPU; memory-mapped from the file, so replicas
    on one machine share them), the host blocks' KV cache, the host compute buffer and the output
    buffer (logits of every slot, ``n_seq_max x n_vocab`` F32). Assumption: llama.cpp's default mmap;
    while it loads, the kernel also pages in the GPU layers' part of the file, clean page cache it
    reclaims, which is not counted as a need (with --no-mmap the host tensors are read into
    anonymous memory of the same size).
    """
    from planner.memory.breakdown import GPU, HOST, Component, Estimate
    from planner.memory.host import OS_BASELINE_BYTES
    from planner.memory.overheads import runtime_components

    arch, i = w.architecture, w.infer
    s = settings(w)
    place, ws, kv, cb = layout(w)
    gib = 2**30
    preset = s["preset"]
    G = place.devices
    dk, dv = kv_widths(arch, mla_layout=s["mla_layout"])
    fa16 = fa_f16_copy_bytes(arch, kv, place, flash_attention=s["flash_attention"], type_k=s["type_k"],
                             type_v=s["type_v"], mla_layout=s["mla_layout"])
    # each GPU's need; the components below describe the one that needs the most (llama.cpp splits
    # the layers by the cards' free memory, equal for identical cards, so that card binds)
    fa_dev = [fa16 if (place.blocks_on(d) or G == 1) else 0 for d in range(G)]
    need = [ws.per_device[d] + kv.per_device[d] + cb.per_device[d] + fa_dev[d] for d in range(G)]
    bind = need.index(max(need))
    on = "the GPU" if G == 1 else f"GPU {bind} of {G}"
    comps = [
        Component(f"weights (GGUF {preset}, GPU layers)", GPU, ws.per_device[bind],
                  f"{place.text()}: {ws.weights.mix_text()} in all"
                  + ("" if G == 1 else f"; {on} holds {ws.per_device[bind]:,} B of them")
                  + f"; GPU tensors padded to {CUDA_ALIGNMENT} B",
                  "planner.model.gguf (ggml type_traits; llama-quant.cpp llama_tensor_get_type); " + LLAMACPP_SRC),
    ]
    full, swa = kv.full_cells, kv.swa_cells
    widths = (f"x 2 x n_embd_k_gqa {dk:,}" if dk == dv else
              f"x (n_embd_k_gqa {dk:,} + n_embd_v_gqa {dv:,})" if dv else f"x n_embd_k_gqa {dk:,} (K only)")
    kv_text = (f"{kv.kv_layers} layers x {full:,} cells (n_ctx = pad({i.context:,} x {i.concurrency} slot(s), "
               f"256)) {widths} in {s['type_k']}/{s['type_v']}")
    if arch.is_mla:
        kv_text += (f"; MLA {s['mla_layout'].replace('_', '-')} layout (" + (
            f"the latent kv_lora_rank {arch.kv_lora_rank} + qk_rope_head_dim {arch.qk_rope_head_dim}, V a view of it: "
            "GGUFs with deepseek2.attention.key_length_mla" if s["mla_layout"] == "latent" else
            f"K {arch.num_attention_heads} heads x {arch.qk_nope_head_dim + arch.qk_rope_head_dim}, V x v_head_dim "
            f"{arch.v_head_dim}: GGUFs without key_length_mla") + ")")
    if kv.swa_layers:
        kv_text += f"; {kv.swa_layers} sliding-window layers keep {swa:,} cells"
    if kv.kv_layers < arch.num_hidden_layers:
        state, state_text = recurrent_state_bytes(arch)
        rec_layers = arch.num_hidden_layers - kv.kv_layers
        kv_text += (f"; the other {rec_layers} layers are recurrent (llama_memory_hybrid): "
                    + (f"{state:,} B of state per sequence each ({state_text}), {kv.recurrent:,} B in all"
                       if state else "their fixed-size state is not counted (the config gives no sizes)"))
    held = place.gpu_blocks if G == 1 else len(place.blocks_on(bind))
    comps.append(Component("KV cache (GPU layers)", GPU, kv.per_device[bind],
                           kv_text + f"; {held} layers on {on}",
                           KV_SRC + ("; " + MLA_SRC if arch.is_mla else "")
                           + ("; llama.cpp src/llama-memory-hybrid.cpp, src/llama-memory-recurrent.cpp"
                              if kv.kv_layers < arch.num_hidden_layers else "")))
    comps.append(Component("compute buffer (llama.cpp graph)", GPU, cb.per_device[bind], cb.device_texts[bind],
                           COMPUTE_SRC))
    if fa_dev[bind]:
        which = " and ".join(n for n, t in (("K", s["type_k"]), ("V", s["type_v"])) if GGML_TYPES[t].block > 1)
        comps.append(Component("flash-attention F16 copy of the quantized KV (ggml-cuda pool)", GPU, fa_dev[bind],
                               f"{which} of one layer converted to F16 for prompt batches: n_ctx {kv.full_cells:,} "
                               f"cells x n_embd_k_gqa {dk:,} / n_embd_v_gqa {dv:,} x 2 B each",
                               "ggml/src/ggml-cuda/fattn-common.cuh launch_fattn (K_f16/V_f16 from the pool), "
                               "commit 7c95e797"))
    comps += runtime_components(overheads, gpus=1)
    node = max(w.node_gpus // G, 1)  # replicas (llama.cpp processes) on one machine
    comps.append(Component("OS baseline", HOST, OS_BASELINE_BYTES, "4 GiB (assumption)",
                           "assumption from DL workstation sizing guides"))
    comps.append(Component("llama.cpp processes", HOST, LLAMACPP_PROCESS_BYTES * node,
                           f"{node} process(es) x 1 GiB (CUDA runtime and libraries, assumption)", "assumption"))
    comps.append(Component(f"weights (GGUF {preset}, host layers)", HOST, ws.host,
                           f"token_embd {ws.token_embd:,} B" + (f" + {place.n_layer - place.gpu_blocks} blocks in host RAM"
                                                                if place.gpu_blocks < place.n_layer else "")
                           + (" (memory-mapped, shared by the replicas on this machine)" if node > 1 else
                              " (memory-mapped from the GGUF file)"),
                           LLAMACPP_SRC + " (dev_input on the CPU)"))
    if kv.host:
        comps.append(Component("KV cache (host layers)", HOST, kv.host * node,
                               f"{place.n_layer - place.gpu_blocks} layers' KV in host RAM"
                               + (f" x {node} replicas" if node > 1 else ""), KV_SRC))
    comps.append(Component("compute buffer (host)", HOST, cb.host * node,
                           cb.host_text + (f" x {node} replicas" if node > 1 else ""), COMPUTE_SRC))
    out_buf = i.concurrency * arch.vocab_size * 4
    comps.append(Component("output buffer (logits)", HOST, out_buf * node,
                           f"n_seq_max {i.concurrency} x n_vocab {arch.vocab_size:,} x 4 B"
                           + (f" x {node} replicas" if node > 1 else ""),
                           "llama.cpp src/llama-context.cpp output_reserve"))
    kv_tok = kv_layer_bytes(arch, type_k=s["type_k"], type_v=s["type_v"], cells=1,
                            mla_layout=s["mla_layout"]) * kv.kv_layers
    # routed-expert tensors (ffn_*_exps) by device: a decode step reads only the experts its tokens use
    experts_gpu = sum(blk.experts for layer, blk in ws.weights.blocks.items() if place.block_on_gpu(layer))
    experts_host = sum(blk.experts for layer, blk in ws.weights.blocks.items() if not place.block_on_gpu(layer))
    extra = {"kv_bytes_per_token": kv_tok, "llamacpp_gpu_layers": place.gpu_layers,
             "llamacpp_gpu_blocks": place.gpu_blocks, "llamacpp_max_gpu_layers": place.n_layer + 1,
             "llamacpp_file_bytes": ws.total, "llamacpp_weights_gpu_bytes": ws.gpu,
             "llamacpp_weights_host_bytes": ws.host, "llamacpp_kv_gpu_bytes": kv.gpu,
             "llamacpp_kv_host_bytes": kv.host, "llamacpp_n_ctx": kv.full_cells, "llamacpp_n_ubatch": cb.tokens,
             "llamacpp_expert_gpu_bytes": experts_gpu, "llamacpp_expert_host_bytes": experts_host,
             "llamacpp_devices": G, "llamacpp_binding_device": bind,
             "llamacpp_host_block_bytes": ws.host - ws.weights.role_bytes("token_embd")
             - ws.weights.role_bytes("position")}
    notes = [f"llama.cpp: {place.text()} (n_gpu_layers {place.gpu_layers}; the output layer is offloaded first, "
             f"token_embd stays in host RAM). The GGUF {preset} file holds {ws.total / gib:,.2f} GiB of tensors "
             f"({ws.weights.bits_per_weight:.2f} bits per weight).",
             "While loading with mmap (the default) the kernel also pages in the GPU layers' part of the file "
             f"({(ws.total - ws.host) / gib:,.2f} GiB of page cache it can reclaim; not counted as a need)."]
    if preset != "MXFP4_MOE" and any(t.source == "MXFP4" for t, _, _ in ws.weights.tensors):
        notes.append(f"The checkpoint's MoE experts are MXFP4 and stay MXFP4 in the GGUF (as convert_hf_to_gguf.py "
                     f"writes them); {preset} applies to the other tensors, as in the published gpt-oss files "
                     "(llama-quantize itself refuses to requantize MXFP4 without --allow-requantize).")
    if G > 1:
        notes.append(f"llama.cpp --split-mode layer over {G} GPUs (an equal --tensor-split, its default for "
                     "identical cards): " + ", ".join(f"GPU {d} {need[d] / gib:,.2f} GiB + runtime"
                                                            for d in range(G))
                     + f"; the breakdown is GPU {bind}'s, the largest"
                     + ("; pipeline parallelism on (4 copies of each split's inputs)" if place.pipeline_parallel
                        else "") + ".")
    if s["fa_auto_off"]:
        notes.append("Flash attention (llama.cpp's default auto) resolves off here: ggml-cuda has no flash-attention "
                     "kernel for K 192 / V 128 values a head with a GQA ratio that is not a multiple of 8 (MLA's "
                     "per-head layout), so the graph keeps the score matrices and copies V transposed, as the "
                     "cache was laid out for flash attention before the check.")
    if place.gpu_blocks < place.n_layer:
        notes.append("Blocks in host RAM: decode reads them from RAM at the platform's memory bandwidth; prompt "
                     "batches of >= 32 tokens copy their weights to the GPU for the matrix products.")
    fa = "on" if s["flash_attention"] else "off"
    desc = (f"llama.cpp with GGUF {preset} weights, a {s['type_k'].lower()}/{s['type_v'].lower()} KV cache, "
            f"flash attention {fa}, n_ubatch {cb.tokens}, {i.concurrency} slot(s) of {i.context:,} tokens.")
    return Estimate(workload_name=w.name, model_id=w.model_id, task=w.task, parameters=arch.parameters,
                    trainable_parameters=0, recipe=preset, recipe_description=desc, components=tuple(comps),
                    gpus=w.gpus, gpus_per_node=w.node_gpus, warnings=w.warnings, notes=tuple(notes), extra=extra)
