"""vLLM's KV-cache budget on a card: the engine's own start-up arithmetic.

At start-up the vLLM V1 engine (``vllm serve``) measures, then sizes its KV cache as::

    budget = gpu_memory_utilization x CUDA total
             - weights (as loaded, with the rotary cos/sin cache)
             - peak of the profiling run (a forward pass of max_num_batched_tokens tokens, then the
               sampler on max_num_seqs rows of logits)
             - non-PyTorch memory that appeared after its start-up snapshot (cuBLAS workspaces,
               NCCL and all-reduce buffers)

and the KV cache gets ``budget // (bytes per token x 16)`` blocks of 16 tokens.

- "CUDA total" is what ``cudaMemGetInfo`` reports (``torch.cuda.mem_get_info()[1]``), which is the
  nvidia-smi total less the driver's reservation: an H100 80GB HBM3 shows 81,559 MiB in nvidia-smi
  and vLLM logs ``total_gpu_memory 79.22GiB`` (vLLM PR #10511, #12126), 0.43 GiB less; a 24 GB
  A10-class card with ECC shows 23,028 MiB and logs 22.07 GiB, 0.42 GiB less. The catalog's
  ``memory_cuda_total`` gives it per card; else :data:`planner.catalog.gpus.DRIVER_RESERVED_BYTES` is assumed.
- The CUDA context exists before vLLM's snapshot, so it is not subtracted from the budget: it
  lives in the remaining ``1 - gpu_memory_utilization`` of the card (vLLM issue #12059), as do
  CUDA graphs, captured after the KV cache is allocated.
- The profiling run: ``gpu_model_runner.profile_run`` runs ``_dummy_run(max_num_tokens)`` over
  ``min(max_num_tokens, max_num_seqs)`` requests and then ``_dummy_sampler_run`` on one row of
  hidden states per request, sampling with top_k = vocabulary - 1 and top_p = 0.9 (the 2025 V1
  runner's dummy metadata). Live at its peak: the logits in the model dtype (all-gathered to the
  full vocabulary on every tensor-parallel rank), the sampler's fp32 copy
  (``logits.to(torch.float32)``, vllm/v1/sample/sampler.py) and, in FlashInfer's
  ``top_k_top_p_sampling_from_logits`` (the V1 sampler's path whenever FlashInfer is importable and
  ``VLLM_USE_FLASHINFER_SAMPLER`` is unset, vllm/v1/sample/ops/topk_topp_sampler.py), the top-k
  masked logits and the softmax probabilities, fp32 each. The PyTorch-native fallback sorts the
  logits (fp32 values and int64 indices) and peaks near 28 B per vocabulary entry instead of 14;
  it is not modelled: the Qwen3-Coder TP 8 log (vLLM issue #22177, 12.22 GiB) is 0.6 GiB above
  what it would leave (11.5-11.6 GiB).
- Default ``max_num_batched_tokens`` / ``max_num_seqs`` of ``vllm serve``: 8192 / 1024 on cards with
  >= 70 GiB that are not A100s, else 2048 / 256 (vllm/engine/arg_utils.py, usage-context defaults).
- The rotary embedding keeps a cos/sin cache of ``max_position_embeddings x rotary_dim`` values in
  the model dtype (vllm/model_executor/layers/rotary_embedding.py), counted in "model weights take":
  Llama-3.1-8B logs 14.99 GiB = 16,060,522,496 B of parameters + 131,072 x 128 x 2 B.

KV cache per request (what a sequence of ``context`` tokens takes from the block pool): vLLM V1 allocates
whole blocks of 16 tokens per layer, ``cdiv(context, 16)`` for a full-attention layer, and for a
sliding-window layer ``cdiv(min(sliding_window - 1 + max_num_batched_tokens, context), 16) + 1``: the
window of already computed tokens plus one chunk of newly scheduled ones, and one block more because
the window need not start at a block boundary (vllm/v1/kv_cache_interface.py,
``FullAttentionSpec`` / ``SlidingWindowSpec.max_memory_usage_bytes``). The engine's logged
"Maximum concurrency for N tokens per request" is the pool's blocks over the sum of these per request
(vllm/v1/core/kv_cache_utils.py ``get_max_concurrency_for_kv_cache_config``); its start-up check
that ``max_model_len`` fits compares the same per-request bytes with the budget
(``check_enough_kv_cache_memory``). Assumption: the hybrid KV-cache manager is on (the V1 default);
with ``--disable-hybrid-kv-cache-manager`` a model that mixes sliding and full layers allocates all
of them as full attention. The figure is the worst case of a request in chunked prefill; a request
that is only decoding frees the blocks that fell out of its window.

Older engines counted differently (before vLLM PR #11809, January 2025, "non_torch_memory" also
held the caching allocator's cached blocks), so logs of those builds are not this arithmetic.

The V0 engine (the default before vLLM 0.8.0; ``engine_version`` below it,
planner.workload.engine_releases) profiles otherwise (``vllm/worker/model_runner.py``
``GPUModelRunnerBase.profile_run``): ``max_num_seqs`` prompts of ``max_num_batched_tokens //
max_num_seqs`` tokens each, every one sampled with ``SamplingParams(top_p=0.99, top_k=vocab - 1)``,
so the sampler (``vllm/model_executor/layers/sampler.py``) runs on ``max_num_seqs`` rows of logits:
``logits.to(torch.float)`` (4 B per entry beside the model-dtype logits the runner keeps), then
``_apply_top_k_top_p`` sorts them (``logits.sort``: 4 B values and 8 B int64 indices). For 128 or
more rows PyTorch's CUDA sort is ``segmented_sort_pairs`` (aten/src/ATen/native/cuda/SortStable.cu):
an int64 index buffer (8 B) and cub's radix sort, whose temporary storage holds the alternate key and
value buffers (4 + 8 B). At that peak each entry holds c + 4 + 4 + 8 + 8 + 12 = c + 36 B
(:data:`V0_SAMPLER_BYTES_PER_ENTRY`); the later top-p stage (softmax, cumsum, masks, the
scattered result) peaks at c + 30 B. (With fewer than 128 rows PyTorch sorts by another path,
``segmented_sort_pairs_by_full_sort``, whose buffers are not modelled; the defaults give 256.)
``vllm serve``'s V0 defaults do not depend on the card: 256
sequences, and ``max(max_model_len, 2048)`` batched tokens, 2,048 when chunked prefill is on, as it
is by default above 32K tokens (vllm/config.py ``SchedulerConfig.__post_init__``; vllm/engine/arg_utils.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.model.architecture import Architecture
from planner.catalog.gpus import Gpu
from planner.memory.breakdown import Estimate
from planner.memory.inference import KV_BYTES, VLLM_BLOCK_TOKENS, prefill_peak_bytes
from planner.core.units import GiB
from planner.memory.vllm_lora import OUTSIDE_NAME as LORA_OUTSIDE_NAME


#: vLLM ``vllm serve`` defaults by card (vllm/engine/arg_utils.py): (max_num_batched_tokens, max_num_seqs).
LARGE_CARD_DEFAULTS = (8192, 1024)
SMALL_CARD_DEFAULTS = (2048, 256)
LARGE_CARD_BYTES = 70 * GiB

#: Bytes per vocabulary entry per request in the profiling run's sampler, beyond the model-dtype
#: logits: the fp32 copy, FlashInfer's top-k masked logits and the probabilities, 4 B each.
SAMPLER_FP32_COPIES = 3

#: V0 (vLLM < 0.8.0) sampler bytes per vocabulary entry per row at its peak, beyond the model-dtype
#: logits: fp32 copy 4 + sorted values 4 + int64 indices 8 + the sort's index buffer 8 + cub's
#: alternate key/value buffers 4 + 8 (module docstring).
V0_SAMPLER_BYTES_PER_ENTRY = 4 + 4 + 8 + 8 + 12
#: vllm serve's V0 defaults: max_num_seqs (EngineArgs), the floor of max_num_batched_tokens and the
#: max_model_len above which chunked prefill is on by default (then 2,048 batched tokens).
V0_MAX_NUM_SEQS = 256
V0_MIN_BATCHED_TOKENS = 2048
V0_CHUNKED_ABOVE = 32 * 1024

VLLM_SRC = ("vLLM V1 start-up profile (vllm/v1/worker/gpu_worker.py determine_available_memory, "
            "gpu_model_runner.py profile_run)")


def cuda_total_bytes(gpu: Gpu) -> int:
    """What ``cudaMemGetInfo`` reports as total for ``gpu``: its catalog ``memory_cuda_total``,
    else the nvidia-smi total (``memory_usable``) less :data:`planner.catalog.gpus.DRIVER_RESERVED_BYTES`
    (:attr:`planner.catalog.gpus.Gpu.cuda_total_bytes`)."""
    return gpu.cuda_total_bytes


def engine_defaults(cuda_total: int, gpu_id: str) -> tuple[int, int]:
    """``vllm serve``'s default (max_num_batched_tokens, max_num_seqs) on a card.

    Cards with at least 70 GiB that are not A100s get 8192 / 1024, all others 2048 / 256
    (vllm/engine/arg_utils.py, defaults for the OpenAI API server usage context).
    """
    if cuda_total >= LARGE_CARD_BYTES and "a100" not in gpu_id.lower():
        return LARGE_CARD_DEFAULTS
    return SMALL_CARD_DEFAULTS


def v0_engine(workload: Any) -> bool:
    """Whether ``workload`` is served by vLLM's V0 engine (an ``engine_version`` before 0.8.0)."""
    from planner.workload.engine_releases import is_v0

    i = getattr(workload, "infer", None)
    return i is not None and i.engine == "vllm" and is_v0(getattr(i, "engine_version", None))


def v0_defaults(context: int) -> tuple[int, int]:
    """``vllm serve``'s V0 (max_num_batched_tokens, max_num_seqs) for a ``max_model_len`` of ``context``:
    max(context, 2048) and 256, or 2048 and 256 above 32K tokens (chunked prefill on); module docstring."""
    tokens = V0_MIN_BATCHED_TOKENS if context > V0_CHUNKED_ABOVE else max(context, V0_MIN_BATCHED_TOKENS)
    return tokens, V0_MAX_NUM_SEQS


def sampler_bytes_per_entry(v0: bool, dtype_bytes: int = 2) -> int:
    """Bytes per vocabulary entry per sampled row at the profiling sampler's peak: V1 c + 12, V0 c + 36."""
    return dtype_bytes + (V0_SAMPLER_BYTES_PER_ENTRY if v0 else SAMPLER_FP32_COPIES * 4)


def default_settings(workload: Any, *, large_card: bool) -> tuple[int, int]:
    """The (max_num_batched_tokens, max_num_seqs) ``vllm serve`` gives ``workload`` when it sets none:
    V0's (:func:`v0_defaults`, any card) or V1's for a large or other card."""
    if v0_engine(workload):
        return v0_defaults(workload.infer.context)
    return LARGE_CARD_DEFAULTS if large_card else SMALL_CARD_DEFAULTS


def needs_serve_defaults(workload: Any) -> bool:
    """True for an ``engine: vllm`` inference workload that leaves ``max_num_batched_tokens`` or
    ``max_num_seqs`` to ``vllm serve``, whose defaults depend on the card (:func:`engine_defaults`)."""
    i = getattr(workload, "infer", None)
    return i is not None and i.engine == "vllm" and (i.max_num_batched_tokens is None or i.max_num_seqs is None)


def with_serve_defaults(workload: Any, *, large_card: bool) -> Any:
    """``workload`` with the settings it leaves open set to ``vllm serve``'s defaults for a large
    card (>= 70 GiB, not an A100: 8,192 tokens, 1,024 sequences) or any other card (2,048 / 256).

    Settings the workload gives are kept; a workload that does not need defaults is returned as is.
    """
    if not needs_serve_defaults(workload):
        return workload
    import dataclasses

    tokens, seqs = default_settings(workload, large_card=large_card)
    i = workload.infer
    return dataclasses.replace(workload, infer=dataclasses.replace(
        i, max_num_batched_tokens=i.max_num_batched_tokens or tokens, max_num_seqs=i.max_num_seqs or seqs))


def is_large_card(gpu: Gpu) -> bool:
    """Whether ``vllm serve`` gives ``gpu`` its large-card defaults (:func:`engine_defaults`)."""
    return engine_defaults(gpu.cuda_total_bytes, gpu.id) == LARGE_CARD_DEFAULTS


def for_gpu(workload: Any, gpu: Gpu) -> Any:
    """``workload`` as ``vllm serve`` would run it on ``gpu``: :func:`with_serve_defaults` for that card."""
    return with_serve_defaults(workload, large_card=is_large_card(gpu))


def rope_cache_bytes(arch: Architecture, dtype_bytes: int = 2) -> int:
    """vLLM's rotary cos/sin cache: max_position_embeddings x rotary_dim x dtype bytes (0 without RoPE).

    rotary_dim is head_dim times ``partial_rotary_factor`` (phi3, phi, qwen3 variants) or ``rotary_pct``
    (gpt_neox), GPT-J's ``rotary_dim``, MLA's ``qk_rope_head_dim``; GPT-2 and GPTBigCode have learned
    positions and BLOOM ALiBi, and no cache.
    """
    if arch.learned_positions or arch.alibi:
        return 0
    if arch.rotary_dim:
        rotary_dim = arch.rotary_dim
    else:
        fraction = float(arch.extra.get("partial_rotary_factor", arch.extra.get("rotary_pct", 1.0)) or 1.0)
        rotary_dim = int(arch.head_dim * fraction)
    return arch.max_position_embeddings * rotary_dim * dtype_bytes


def sampler_peak_bytes(arch: Architecture, *, requests: int, dtype_bytes: int = 2, v0: bool = False) -> int:
    """Logits and sampler tensors of the profiling run's dummy sampling, per GPU.

    requests x V x (c B logits, all-gathered to the full vocabulary on every tensor-parallel rank
    + 3 x 4 B: the fp32 copy, the top-k masked logits and the probabilities of FlashInfer's
    top-k/top-p sampling; see the module docstring for the path and its source). With ``v0`` (the V0
    engine) + 36 B instead: the fp32 copy and the sort (:data:`V0_SAMPLER_BYTES_PER_ENTRY`).
    """
    V = arch.vocab_size
    return requests * V * sampler_bytes_per_entry(v0, dtype_bytes)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class SequenceKv:
    """How vLLM V1 sizes the KV cache of one request, per GPU (module docstring, "KV cache per request").

    Attributes:
        layer_token_bytes: K and V of one token in one layer on this GPU: 2 x KV heads x head_dim x bytes
            (MLA: the kv_lora_rank + qk_rope_head_dim latent, whole on every GPU).
        full_layers: layers that keep every token, as vLLM lays them out (:func:`hybrid_group_layers`).
        window_layers: layers with a sliding window (0 when the window is absent or not honoured),
            likewise padded to whole groups.
        sliding_window: the window in tokens (0 when none).
        max_num_batched_tokens: the engine's chunk of newly scheduled tokens.
    """

    layer_token_bytes: int
    full_layers: int
    window_layers: int
    sliding_window: int
    max_num_batched_tokens: int
    padded_from: tuple[int, int] | None = None  # the model's (full, window) layers before vLLM's group padding

    def full_tokens(self, context: int) -> int:
        """Token slots of one full-attention layer: cdiv(context, 16) blocks of 16."""
        return _cdiv(context, VLLM_BLOCK_TOKENS) * VLLM_BLOCK_TOKENS

    def window_tokens(self, context: int) -> int:
        """Token slots of one sliding-window layer: (cdiv(min(window - 1 + max_num_batched_tokens,
        context), 16) + 1) blocks of 16 (``SlidingWindowSpec.max_memory_usage_bytes``); 0 without a window."""
        if not self.window_layers:
            return 0
        n = min(self.sliding_window - 1 + self.max_num_batched_tokens, context)
        return (_cdiv(n, VLLM_BLOCK_TOKENS) + 1) * VLLM_BLOCK_TOKENS

    def bytes(self, context: int) -> int:
        """KV bytes one request of ``context`` tokens takes, per GPU."""
        return self.layer_token_bytes * (self.full_layers * self.full_tokens(context)
                                         + self.window_layers * self.window_tokens(context))

    def slot_layers(self) -> int:
        """Layers' worth of KV pages per token slot: all layers, vLLM's group padding included."""
        return self.full_layers + self.window_layers

    def formula(self, context: int) -> str:
        """The arithmetic of :meth:`bytes`, with the numbers."""
        parts = []
        if self.full_layers:
            parts.append(f"{self.full_layers} layers x {self.full_tokens(context):,} tokens (cdiv({context:,}, 16) "
                         "blocks of 16)")
        if self.window_layers:
            parts.append(f"{self.window_layers} sliding-window layers x {self.window_tokens(context):,} tokens "
                         f"((cdiv(min({self.sliding_window:,} - 1 + {self.max_num_batched_tokens:,} batched tokens, "
                         f"{context:,}), 16) + 1) blocks of 16)")
        text = f"{self.layer_token_bytes:,} B per layer and token x (" + " + ".join(parts) + ")"
        if self.padded_from:
            text += (f"; vLLM's hybrid KV groups pad the model's {self.padded_from[0]} full and "
                     f"{self.padded_from[1]} sliding-window layers to whole groups")
        return text

    def longest_context(self, budget: int, upper: int) -> int:
        """The longest context (<= ``upper``) one request may have within ``budget`` bytes; 0 when none.

        vLLM's ``estimate_max_model_len`` bisects the same per-request bytes."""
        lo, hi = 0, upper
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.bytes(mid) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return lo


def sequence_kv(arch: Architecture, *, kv_dtype: str, tp: int, max_num_batched_tokens: int,
                sliding_window: bool = True) -> SequenceKv:
    """vLLM's per-request KV sizing for ``arch`` (see :class:`SequenceKv`).

    Args:
        sliding_window: honour the model's sliding window (the workload's ``sliding_window``; vLLM's
            ``--disable-sliding-window`` is False).
    """
    L = arch.kv_cache_layers
    wl = min(arch.sliding_window_layers, L) if (sliding_window and arch.sliding_window) else 0
    full = L - wl
    pf, pw = hybrid_group_layers(full, wl)
    return SequenceKv(arch.kv_values_per_token_layer("vllm", tp) * KV_BYTES[kv_dtype], pf, pw,
                      int(arch.sliding_window or 0) if wl else 0, max_num_batched_tokens,
                      (full, wl) if (pf, pw) != (full, wl) else None)


def hybrid_group_layers(full: int, window: int) -> tuple[int, int]:
    """Full-attention and sliding-window layers as vLLM V1's hybrid KV cache manager lays them out.

    With both kinds, layers go in groups of one size: the smaller count, or the larger when it
    is below 1.5 x the smaller; each kind is padded up to whole groups, and every group draws
    pages of that many layers from one pool (vllm/v1/core/kv_cache_utils.py,
    ``_get_kv_cache_groups_uniform_page_size``). Gemma 3 27B (10 full, 52 window layers): groups
    of 10, 60 window slots. gpt-oss (18 and 18): no padding.
    """
    if not full or not window:
        return full, window
    size = min(full, window)
    if max(full, window) < 1.5 * size:
        size = max(full, window)
    return _cdiv(full, size) * size, _cdiv(window, size) * size


@dataclass(frozen=True)
class VllmBudget:
    """vLLM's KV budget on one GPU, term by term (bytes), as the engine logs it.

    Attributes:
        cuda_total: what CUDA reports as the card's total.
        usable: gpu_memory_utilization x cuda_total ("the current vLLM instance can use").
        weights: "model weights take" (weights component + rotary cache).
        profile_peak: "PyTorch activation peak memory" (the larger of the forward pass and
            hidden states + sampler).
        non_torch: "non_torch_memory" (library workspaces, NCCL buffers).
        budget: "Available KV cache memory" (0 when nothing is left).
        kv_tokens, kv_blocks: tokens and 16-token blocks that fit.
        max_num_batched_tokens, max_num_seqs: the engine settings used.
        context_outside: CUDA context bytes that must fit in the (1 - utilization) remainder.
        lora_outside: LoRA slot bytes vLLM 0.7.x leaves out of the budget, which must fit in that
            remainder too (planner.memory.vllm_lora OUTSIDE_NAME; 0 otherwise).
        sequence: how one request's KV cache is sized (None: by tokens alone, 16-token blocks).
        context: the workload's context (max_model_len), for :attr:`sequences`.
    """

    cuda_total: int
    usable: int
    weights: int
    profile_peak: int
    non_torch: int
    budget: int
    kv_tokens: int
    kv_blocks: int
    max_num_batched_tokens: int
    max_num_seqs: int
    context_outside: int
    sequence: SequenceKv | None = None
    context: int = 0
    lora_outside: int = 0

    def kv_bytes_per_sequence(self, context: int | None = None) -> int:
        """KV bytes one request of ``context`` tokens (default: the workload's) takes from the budget."""
        context = self.context if context is None else context
        return self.sequence.bytes(context) if self.sequence is not None else 0

    @property
    def sequences(self) -> int:
        """Requests of the workload's context the KV budget holds at once (vLLM's 'maximum
        concurrency', rounded down), before the max_num_seqs cap."""
        per_seq = self.kv_bytes_per_sequence()
        if per_seq <= 0:
            return self.kv_tokens // self.context if self.context else 0
        return self.budget // per_seq

    @property
    def shortfall(self) -> int:
        """Bytes the budget is short of holding a single KV block (0 when it holds one)."""
        return max(self.weights + self.profile_peak + self.non_torch - self.usable, 0)

    def longest_model_len(self, upper: int) -> int:
        """The longest ``--max-model-len`` (<= ``upper``) vLLM starts with: one request of it must fit the
        KV cache, by bytes per request for models with sliding-window layers (as vLLM checks it)."""
        seq = self.sequence
        if seq is not None and seq.window_layers:
            return seq.longest_context(self.budget, upper)
        return min(self.kv_tokens, upper)

    def problems(self, *, context: int, kv_bytes_per_token: int) -> list[str]:
        """Why ``vllm serve`` would refuse to start with these terms, one sentence each.

        vLLM raises when no KV block fits ("No available memory for the cache blocks"), when one
        request of ``max_model_len`` tokens does not fit in the KV cache (for a model with sliding-window
        layers, by its bytes per request: :class:`SequenceKv`), and when the free memory at start-up
        is below ``gpu_memory_utilization`` x total, which it is when the CUDA context does not fit
        in the rest of the card.
        """
        gib = 2**30
        out = []
        seq = self.sequence
        if self.kv_blocks == 0:
            out.append(f"no KV block fits: weights, profile peak and non-torch memory exceed the "
                       f"{self.usable / gib:,.2f} GiB vLLM may use by {self.shortfall / gib:,.2f} GiB; vLLM stops with "
                       "'No available memory for the cache blocks'")
        elif seq is not None and seq.window_layers:
            # sliding-window layers do not grow with the context: vLLM checks bytes per request
            if seq.bytes(context) > self.budget:
                longest = seq.longest_context(self.budget, context)
                out.append(f"max_model_len {context:,} needs {seq.bytes(context) / gib:,.2f} GiB of KV cache per "
                           f"request, more than the {self.budget / gib:,.2f} GiB that fit; vLLM refuses to start "
                           f"unless --max-model-len is at most {longest:,}")
        elif self.kv_tokens < context:
            out.append(f"max_model_len {context:,} is more than the {self.kv_tokens:,} KV tokens that fit; vLLM refuses "
                       f"to start unless --max-model-len is at most {self.kv_tokens:,}")
        if self.lora_outside and self.context_outside + self.lora_outside > self.cuda_total - self.usable:
            out.append(f"the CUDA context and the LoRA slots ({self.lora_outside / gib:,.2f} GiB), which this vLLM "
                       "release leaves out of its KV budget (vllm#14450), do not fit in the "
                       f"{(self.cuda_total - self.usable) / gib:,.2f} GiB left outside gpu_memory_utilization; "
                       "the KV cache allocation runs out of memory (lower gpu_memory_utilization)")
        elif self.context_outside > self.cuda_total - self.usable:
            out.append(f"the CUDA context ({self.context_outside / gib:,.2f} GiB) does not fit in the "
                       f"{(self.cuda_total - self.usable) / gib:,.2f} GiB left outside gpu_memory_utilization; vLLM's "
                       "start-up check on free memory fails (lower gpu_memory_utilization)")
        return out

    def as_dict(self) -> dict[str, int]:
        """The terms with byte-unit names (for JSON), plus the token counts and the requests of the
        workload's context that fit (``sequences_at_context``, with ``kv_bytes_per_sequence`` each)."""
        return {"cuda_total_bytes": self.cuda_total, "usable_bytes": self.usable, "weights_bytes": self.weights,
                "profile_peak_bytes": self.profile_peak, "non_torch_bytes": self.non_torch,
                "budget_bytes": self.budget, "kv_tokens": self.kv_tokens, "kv_blocks": self.kv_blocks,
                "max_num_batched_tokens": self.max_num_batched_tokens, "max_num_seqs": self.max_num_seqs,
                "cuda_context_outside_budget_bytes": self.context_outside,
                "lora_outside_budget_bytes": self.lora_outside,
                "kv_bytes_per_sequence": self.kv_bytes_per_sequence(),
                "kv_window_tokens_per_sequence": (self.sequence.window_tokens(self.context)
                                                  if self.sequence is not None else 0),
                "sequences_at_context": self.sequences}


def vllm_budget(workload: Any, est: Estimate, *, cuda_total: int, gpu_id: str = "",
                gpu_memory_utilization: float | None = None, max_num_seqs: int | None = None,
                max_num_batched_tokens: int | None = None) -> VllmBudget:
    """vLLM's KV-cache budget for an inference workload on a card whose CUDA total is ``cuda_total``.

    Args:
        workload: a :class:`planner.workload.spec.Workload` with ``infer`` set.
        est: its :func:`planner.memory.estimate` (weights, workspaces, NCCL and context components).
        cuda_total: bytes CUDA reports as the card's total (:func:`cuda_total_bytes`).
        gpu_id: catalog id, for the engine's card-dependent defaults (A100s get the small ones).
        gpu_memory_utilization, max_num_seqs, max_num_batched_tokens: override the workload's
            values (None: the workload's, then ``vllm serve``'s defaults for the card).

    Returns:
        :class:`VllmBudget`, each term as vLLM's start-up log names it. Formula and sources in the
        module docstring.

    Raises:
        ValueError: the workload is not an inference workload.
    """
    i = workload.infer
    if i is None:
        raise ValueError("vllm_budget needs an inference workload")
    arch = workload.architecture
    util = i.gpu_memory_utilization if gpu_memory_utilization is None else gpu_memory_utilization
    v0 = v0_engine(workload)
    d_tokens, d_seqs = v0_defaults(i.context) if v0 else engine_defaults(cuda_total, gpu_id)
    tokens = max_num_batched_tokens or i.max_num_batched_tokens or d_tokens
    seqs = max_num_seqs or getattr(i, "max_num_seqs", None) or d_seqs
    c = 4 if i.weights == "fp32" else 2
    gpu = est.gpu_components()
    weights = sum(x.bytes for x in gpu if x.name.startswith("weights")) + rope_cache_bytes(arch, c)
    # V1 samples one row per scheduled request (at most one request per token); V0 one per dummy prompt
    requests = seqs if v0 else min(tokens, seqs)
    forward, _ = prefill_peak_bytes(arch, tokens=tokens, sequences=requests, keys=-(-tokens // requests),
                                    attention="flash", compute_bytes=c, tp=i.tp, engine="vllm")
    hidden = tokens * arch.hidden_size * c
    peak = max(forward, hidden + sampler_peak_bytes(arch, requests=requests, dtype_bytes=c, v0=v0))
    non_torch = sum(x.bytes for x in gpu if x.kind == "runtime"
                    and not x.name.startswith("CUDA context"))
    context = sum(x.bytes for x in gpu if x.name.startswith("CUDA context"))
    usable = int(cuda_total * util)
    budget = usable - weights - peak - non_torch
    seq_kv = sequence_kv(arch, kv_dtype=i.kv_dtype, tp=i.tp, max_num_batched_tokens=tokens,
                         sliding_window=getattr(i, "sliding_window", True))
    # vLLM's "GPU KV cache size" in tokens: the pool's blocks over its groups, a page for every
    # layer slot (the padded layout) per token.
    per_tok = seq_kv.layer_token_bytes * seq_kv.slot_layers()
    if budget <= 0 or per_tok <= 0:
        blocks = 0
    else:
        blocks = budget // (per_tok * VLLM_BLOCK_TOKENS)
    lora_outside = sum(x.bytes for x in gpu if x.name == LORA_OUTSIDE_NAME)
    return VllmBudget(cuda_total, usable, weights, peak, non_torch, max(budget, 0), blocks * VLLM_BLOCK_TOKENS,
                      blocks, tokens, seqs, context, seq_kv, i.context, lora_outside)
