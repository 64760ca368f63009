"""vLLM's LoRA serving: the GPU slots ``--enable-lora`` allocates and the adapters cached in host RAM.

With ``enable_lora`` vLLM replaces every supported linear layer of the model by a LoRA-wrapped one when
it loads the model, and each wrapped layer allocates its stacked adapter buffers at once, whatever
adapters are later served (vllm/lora/layers/base_linear.py ``BaseLinearLayerWithLoRA.create_lora_weights``,
column_parallel_linear.py ``MergedColumnParallelLinearWithLoRA`` / ``MergedQKVParallelLinearWithLoRA``):
for each slice of the layer (q, k, v of a fused qkv_proj; gate and up of gate_up_proj)

    lora_a_stacked: (max_loras, 1, max_lora_rank, input_size)
    lora_b_stacked: (max_loras, 1, output_size, max_lora_rank)

in ``lora_dtype``, which defaults to the model dtype. A column-parallel layer (q, k, v, gate, up) keeps the
whole input and its output shard (K and V at least one head when KV heads are fewer than the
tensor-parallel GPUs, as QKVParallelLinear replicates them); a row-parallel one (o_proj, down_proj)
its input shard and the whole output (``fully_sharded_loras`` off, the default). So one slot takes, per
layer and GPU, r x (in_gpu + out_gpu) values summed over the wrapped linears, and ``max_loras`` slots
that many times. The buffers are created inside the model load that vLLM measures as "model weights
take" (vllm/v1/worker/gpu_model_runner.py ``load_model``), so they come out of the KV cache budget.

Extra vocabulary (releases before vLLM 0.12.0, planner.workload.engine_releases.vllm_lora_extra_vocab):
with LoRA on, the Llama-family models of vLLM (``vllm/model_executor/models/llama.py``, which also serves
Mistral; ``granite.py``) build ``embed_tokens`` with ``lora_extra_vocab_size x max_loras`` rows beyond the
vocabulary and ``lm_head`` with ``lora_extra_vocab_size`` more rows, padded to ``lora_vocab_padding_size``
(256) instead of 64 (``ParallelLMHead(unpadded_vocab_size, ..., padding_size=lora_vocab_padding_size)``;
a tied head shares the embedding's rows), both split over the tensor-parallel GPUs; and each slot of the
wrapped embedding and of the wrapped logits processor holds ``embeddings_tensors`` of (max_loras,
lora_extra_vocab_size, hidden) in the model dtype (``vllm/lora/layers.py`` at v0.7.3:
``VocabParallelEmbeddingWithLoRA`` and ``LogitsProcessorWithLoRA.create_lora_weights``). Other model
families add no rows (their model files do not read ``lora_extra_vocab_size``).

Not counted: the vocabulary-sized A/B buffers of ``embed_tokens`` / ``lm_head`` where vLLM wraps them
(r x V per slot, 4 MiB at rank 16 for a 128K vocabulary in bf16), the punica kernels' metadata and the
profiling run's shrink buffers (slices x tokens x r fp32, 1.5 MiB for 8,192 tokens at rank 16).

Host RAM: vLLM keeps up to ``max_cpu_loras`` adapters (default ``max_loras``) in an LRU cache in CPU
memory as loaded (vllm/lora/worker_manager.py ``LRUCacheWorkerLoRAManager``); each is sized here at
``max_lora_rank`` on every wrapped linear, unsharded, in the model dtype: an upper bound, since an
adapter holds only its own targets and rank.
"""

from __future__ import annotations

from planner.memory.breakdown import GPU, Component
from planner.model.architecture import Architecture

#: Linear layers vLLM runs row-parallel (input sharded, whole output): attention and MLP output
#: projections under their Transformers names (vllm/model_executor/layers/linear.py RowParallelLinear
#: in each model's attention ``o_proj``/``dense``/``c_proj`` and MLP ``down_proj``/``fc2``/``c_proj``).
ROW_PARALLEL = frozenset({"o_proj", "down_proj", "dense", "out_proj", "fc2", "c_proj", "dense_4h_to_h", "wo",
                          "w2"})
KV_PROJ = frozenset({"k_proj", "v_proj"})

LORA_SRC = ("vLLM vllm/lora/layers/base_linear.py create_lora_weights, column_parallel_linear.py "
            "(stacked A/B per slice per slot, lora_dtype = model dtype)")


def lora_slot_values(arch: Architecture, *, rank: int, tp: int = 1) -> int:
    """Values one LoRA slot of rank ``rank`` takes on one GPU, over every layer (module docstring).

    Sum over the decoder's attention and MLP linears (not MoE experts or routers) of layers x count x
    rank x (in_gpu + out_gpu), with the column/row-parallel shards of tensor parallelism ``tp``.

    Raises:
        ValueError: ``rank`` or ``tp`` below 1.
    """
    if rank < 1 or tp < 1:
        raise ValueError(f"rank and tp must be at least 1, not {rank} and {tp}")
    total = 0
    for m in arch.linear_modules():
        if m.part not in ("attention", "mlp"):
            continue
        if m.name in ROW_PARALLEL:
            n_in, n_out = -(-m.in_features // tp), m.out_features
        else:
            n_in, n_out = m.in_features, -(-m.out_features // tp)
            if m.name in KV_PROJ:
                n_out = max(n_out, arch.head_dim)
        total += m.layers * m.count * rank * (n_in + n_out)
    return total


def lora_gpu_bytes(arch: Architecture, *, max_loras: int, rank: int, tp: int, dtype_bytes: int) -> tuple[int, str]:
    """GPU bytes of ``max_loras`` slots of rank ``rank`` on one GPU, and the formula in words."""
    per_slot = lora_slot_values(arch, rank=rank, tp=tp)
    text = (f"max_loras {max_loras} x max_lora_rank {rank} x sum over the {arch.num_hidden_layers} layers' linears "
            f"of (in + out features per GPU) = {per_slot:,} values per slot x {dtype_bytes} B"
            + (f" (t={tp}: column-parallel outputs and row-parallel inputs sharded)" if tp > 1 else ""))
    return max_loras * per_slot * dtype_bytes, text


def lora_host_bytes(arch: Architecture, *, adapters: int, rank: int, dtype_bytes: int) -> tuple[int, str]:
    """Host bytes of ``adapters`` adapters of rank ``rank`` on every wrapped linear, unsharded (an upper bound)."""
    per = lora_slot_values(arch, rank=rank, tp=1)
    return adapters * per * dtype_bytes, (f"max_cpu_loras {adapters} x {per:,} values (rank {rank} on every linear, "
                                          f"an upper bound) x {dtype_bytes} B")


#: Model types whose vLLM model file adds LoRA extra-vocabulary rows (llama.py, which serves Llama and
#: Mistral, and granite.py read ``lora_extra_vocab_size`` at v0.6.0, v0.8.0 and v0.11.1).
EXTRA_VOCAB_TYPES = frozenset({"llama", "mistral", "granite"})
EXTRA_VOCAB_SRC = ("vLLM v0.6.0-v0.11.1 vllm/model_executor/models/llama.py (lora_vocab = lora_extra_vocab_size x "
                   "max_loras; lm_head padding_size = lora_vocab_padding_size 256) and vllm/lora/layers.py "
                   "(embeddings_tensors (max_loras, lora_extra_vocab_size, hidden) in the embedding and logits wrappers)")


def _pad(n: int, to: int) -> int:
    return -(-n // to) * to


def lora_extra_vocab_rows(arch: Architecture, *, max_loras: int, extra: int, tp: int) -> tuple[int, int, str]:
    """LoRA extra-vocabulary rows on one GPU (module docstring): those the model file builds into
    embed_tokens and lm_head (``extra x max_loras``; an untied head ``extra`` plus its padding to 256 beyond
    the 64 it has without LoRA; both over ``tp`` GPUs), those the LoRA wrappers allocate
    (``2 x max_loras x extra``, unsharded), and the formula in words; (0, 0, '') when ``extra`` is 0 (vLLM
    0.12.0 on) or the model family adds none.

    Raises:
        ValueError: ``max_loras``, ``tp`` below 1 or ``extra`` below 0.
    """
    if max_loras < 1 or tp < 1 or extra < 0:
        raise ValueError(f"max_loras and tp must be at least 1 and extra at least 0, not {max_loras}, {tp}, {extra}")
    if extra == 0 or arch.model_type not in EXTRA_VOCAB_TYPES:
        return 0, 0, ""
    v = arch.vocab_size
    head = 0 if arch.tie_word_embeddings else extra + _pad(v, 256) - _pad(v, 64)
    model_rows = -(-(extra * max_loras + head) // tp)
    slot_rows = 2 * max_loras * extra
    text = (f"model rows ({extra} x {max_loras} embedding" + (f" + {head} lm_head" if head else "")
            + (f", over t={tp}" if tp > 1 else "") + f") = {model_rows:,}, LoRA wrappers' rows 2 x {max_loras} slots "
            f"x {extra} = {slot_rows:,}; each hidden {arch.hidden_size:,} x dtype (lora_extra_vocab_size {extra})")
    return model_rows, slot_rows, text


def lora_extra_vocab_bytes(arch: Architecture, *, max_loras: int, extra: int, tp: int,
                           dtype_bytes: int) -> tuple[int, str]:
    """GPU bytes on one GPU of all the LoRA extra-vocabulary rows (:func:`lora_extra_vocab_rows`, each row
    ``hidden_size x dtype_bytes``) and the formula in words; (0, '') when there are none.

    Raises:
        ValueError: as :func:`lora_extra_vocab_rows`.
    """
    model_rows, slot_rows, text = lora_extra_vocab_rows(arch, max_loras=max_loras, extra=extra, tp=tp)
    return (model_rows + slot_rows) * arch.hidden_size * dtype_bytes, text


#: The component of the slots a release sizes its KV cache without (vLLM 0.7.x): not named 'weights', so
#: planner.memory.vllm.vllm_budget leaves it out of the budget as vLLM does, and counts it outside.
OUTSIDE_NAME = "vLLM LoRA slots outside the KV budget (--enable-lora, vLLM 0.7.x)"
OUTSIDE_SRC = ("vLLM v0.7.0-v0.7.3 worker/model_runner.py load_model (create_lora_manager after the measured load) "
               "and vllm/utils.py memory_profiling (MemorySnapshot); vllm issue #14450 ('using different LoRa Rank "
               "and Max LoRas did not affect the number of kv cache blocks')")


def lora_gpu_components(arch: Architecture, *, max_loras: int, rank: int, tp: int, dtype_bytes: int,
                        release: str | None) -> list[Component]:
    """The GPU components of ``max_loras`` LoRA slots of rank ``rank`` in vLLM ``release`` (None: current):
    the slots with their wrappers' extra-vocabulary rows, and the rows the model file adds (weights), as
    planner.workload.engine_releases switches them (extra vocabulary before 0.12.0; the slots outside the
    KV budget in 0.7.x)."""
    from planner.workload.engine_releases import vllm_lora_extra_vocab, vllm_lora_outside_budget

    n, text = lora_gpu_bytes(arch, max_loras=max_loras, rank=rank, tp=tp, dtype_bytes=dtype_bytes)
    model_rows, slot_rows, rows_text = lora_extra_vocab_rows(arch, max_loras=max_loras,
                                                             extra=vllm_lora_extra_vocab(release), tp=tp)
    row = arch.hidden_size * dtype_bytes
    if slot_rows:
        n += slot_rows * row
        text += f"; + the wrappers' extra-vocabulary rows {slot_rows:,} x {row:,} B"
    outside = vllm_lora_outside_budget(release)
    name = OUTSIDE_NAME if outside else "weights: vLLM LoRA slots (--enable-lora)"
    out = [Component(name, GPU, n, text, LORA_SRC + ("; " + OUTSIDE_SRC if outside else ""))]
    if model_rows:
        out.append(Component("weights: vLLM LoRA extra-vocabulary rows (lora_extra_vocab_size)", GPU,
                             model_rows * row, rows_text, EXTRA_VOCAB_SRC))
    return out
