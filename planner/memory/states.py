"""Model states in training: weights, gradients, master weights, optimizer states.

Per GPU, under data parallelism over N ranks with ZeRO stage 0-3, tensor parallelism t,
and CPU offload. Sources:
- ZeRO (Rajbhandari et al. 2020, section 5.1 and Figure 1): stage 1 shards optimizer
  states (and fp32 master weights) over N, stage 2 also gradients, stage 3 also parameters.
- ZeRO-Offload (Ren et al. 2021, section 4): optimizer states, fp32 master weights and fp32
  gradients live in host memory. With ZeRO-2 or ZeRO-3 the gradients do not stay on the GPU:
  during backward they are copied into the reduce ("ipg") bucket, reduced bucket by bucket and
  copied to the host's fp32 gradient partition as each bucket fills (DeepSpeed
  ``deepspeed/runtime/zero/stage_1_and_2.py`` with ``cpu_offload``: ``reduce_ipg_grads`` ->
  ``copy_grads_in_partition`` -> ``async_inplace_copy_grad_to_fp32_buffer_from_gpu``, which sets
  ``param.grad = None``; no ``grads_in_partition`` buffer is made on the GPU). The GPU keeps the
  bucket (``reduce_bucket_size`` elements, ``ipg_buffer``, allocated in ``backward``) and, for
  stage 1/2, ``temp_grad_buffer_for_gpu_offload`` (the largest trainable tensor's elements, in the
  parameter dtype). With gradient accumulation > 1, stage 1/2 accumulate in host memory
  (``accumulated_grads_in_cpu``: each partition parameter's elements in the parameter dtype);
  ZeRO-3 keeps its 16-bit gradient partitions (``grad_partitions_flat_buffer``, in
  ``gradient_accumulation_dtype``, the model dtype under ZeRO) on the offload device
  (``deepspeed/runtime/zero/stage3.py`` ``_setup_for_real_optimizer``). This is how the paper
  trains a 13B model on one 32 GB V100 (abstract). ZeRO-1 (without ``overlap_comm``) reduces only
  after backward, so its full 16-bit gradients are on the GPU until then and stay in the model.
- ZeRO-Offload host side, for every recipe: DeepSpeed's CPU optimizer updates
  ``single_partition_of_fp32_groups`` (stage_1_and_2.py: each rank's partition cloned with
  ``.to('cpu').clone().float()``, even when the model is already fp32) or
  ``fp32_partitioned_groups_flat`` (stage3.py ``_create_fp32_partitions``, the same clone), with
  an fp32 gradient partition beside it, and the optimizer's states are created from that fp32
  partition, so they are fp32 too: host RAM holds 4 (fp32 parameters) + 4 (fp32 gradients) +
  4 x states bytes per parameter of the partition whatever the recipe (16 B with AdamW: the
  paper's fp32 parameters, momentum and variance on the CPU, Ren et al. 2021, sec. 4, with the
  gradients DeepSpeed keeps there in fp32).
  DeepSpeed has no pure 16-bit offload mode (its ``fp16_master_weights_and_gradients`` keeps fp32
  states), so pure-bf16/pure-fp16 full fine-tunes with offload are refused by the workload reader.
- ZeRO reduce bucket: DeepSpeed allocates ``reduce_bucket_size`` elements in the parameter dtype
  whatever the model size, whenever ``contiguous_gradients`` is on (DeepSpeed's default, and
  forced by ``cpu_offload``): stage_1_and_2.py ``backward`` (``ipg_buffer``:
  ``torch.empty(int(self.reduce_bucket_size), dtype=self.dtype)``, each backward, also on one
  GPU) and stage3.py ``__init__`` (``__ipg_bucket_flat_buffer``, for the whole run). The size is
  DeepSpeed's default ``reduce_bucket_size`` of 5e8 elements (a config that leaves it out);
  the Hugging Face Trainer / accelerate DeepSpeed integration writes hidden_size^2 for
  ``"auto"`` (transformers ``integrations/deepspeed.py`` ``trainer_config_finalize``), which this
  model does not assume. Assumption: ``overlap_comm`` false, DeepSpeed's default for stages 1
  and 2 (``DeepSpeedZeroConfig.overlap_comm_valid``: true only for stage 3); with it true,
  stage_1_and_2.py allocates a second bucket of the same size (double buffering), which this
  model does not count. Stage 3 keeps one bucket either way.
- ZeRO-Infinity (Rajbhandari et al. 2021): with stage 3 the parameters move to host memory too.
- DeepSpeed configuration docs (deepspeed.ai/docs/config-json): ``reduce_bucket_size`` and
  ``stage3_prefetch_bucket_size`` / ``stage3_max_live_parameters`` size the buffers in flight.
- PyTorch DDP (pytorch.org/docs, DistributedDataParallel ``gradient_as_bucket_view``): with
  the default False the all-reduce buckets are a second copy of the gradients.
- LoRA (Hu et al. 2021, section 4): adapters of rank r add r x (in + out) parameters per adapted
  matrix; peft keeps them in fp32 (``autocast_adapter_dtype=True``) on a 16-bit base.
- Megatron-LM tensor parallelism (Shoeybi et al. 2019, section 3): linear weights, embeddings
  and the output head are split t ways; norms are replicated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from planner.model.architecture import Architecture
from planner.model.layout import FUSED_QKV_MODULES
from planner.memory.breakdown import GPU, HOST, Component
from planner.memory.quant import frozen_base_weights
from planner.workload.frameworks import FRAMEWORK_SPECS
from planner.workload.recipes import OPTIMIZERS, PAGED_MIN_ELEMENTS, RECIPES, Optimizer, Recipe
from planner.workload.options import Training

#: ZeRO's sharding of a byte count: (bytes, stage) -> (bytes per GPU, the words saying so).
Shard = Callable[[int, int], tuple[int, str]]

ZERO_SRC = "ZeRO, Rajbhandari et al. 2020, sec. 5.1"
OFFLOAD_SRC = "ZeRO-Offload, Ren et al. 2021, sec. 4"
DS_CONFIG_SRC = "DeepSpeed config docs (deepspeed.ai/docs/config-json)"
DS_OFFLOAD_SRC = ("DeepSpeed deepspeed/runtime/zero/stage_1_and_2.py (cpu_offload: ipg_buffer, "
                  "temp_grad_buffer_for_gpu_offload, accumulated_grads_in_cpu); stage3.py "
                  "(grad_partitions_flat_buffer on the offload device)")
DS_FP32_PARTITION_SRC = ("DeepSpeed stage_1_and_2.py (single_partition_of_fp32_groups: .to(cpu).clone().float()); "
                         "stage3.py (_create_fp32_partitions)")
DS_BUCKET_SRC = ("DeepSpeed stage_1_and_2.py backward (ipg_buffer = torch.empty(int(reduce_bucket_size), "
                 "dtype=self.dtype)); stage3.py __init__ (__ipg_bucket_flat_buffer); " + DS_CONFIG_SRC
                 + " (reduce_bucket_size default 5e8, overlap_comm default false for stages 1-2)")
LORA_SRC = "LoRA, Hu et al. 2021, sec. 4; peft autocast_adapter_dtype"
TP_SRC = "Megatron-LM, Shoeybi et al. 2019, sec. 3"

#: DeepSpeed defaults, in elements (deepspeed.ai/docs/config-json). The reduce bucket is DeepSpeed's
#: own default; Hugging Face's "auto" would write hidden_size^2 instead (see the module docstring).
DS_REDUCE_BUCKET_ELEMENTS = 500_000_000
DS_STAGE3_PREFETCH_ELEMENTS = 50_000_000
DS_STAGE3_MAX_LIVE_PARAMETERS = 1_000_000_000
#: ZeRO-3 steps the optimizer over sub-groups of at most this many elements (sub_group_size).
DS_STAGE3_SUB_GROUP_ELEMENTS = 1_000_000_000
#: The phase of what exists only once backward has started, after the loss's own tensors are freed (a
#: gradient stepped inside backward, a layer's offloaded tensors brought back): the activations are
#: still there (planner.memory.estimate adds this phase to them), the logits and the loss are not.
BACKWARD = "backward"
#: The phase of a trainable output head's backward, the first thing backward does after the loss's:
#: its weight gradient forming while every activation is still saved (planner.memory.loss).
HEAD_BACKWARD = "head backward"
#: Frameworks whose optimizer the Hugging Face Trainer builds (it registers nn.Embedding weights with
#: bitsandbytes' optim_bits 32, transformers/trainer.py create_optimizer).
TRAINER_FRAMEWORKS = ("transformers", "deepspeed", "fsdp", "unsloth")


@dataclass(frozen=True)
class TrainableShape:
    """Counts that size the model states of one training workload on one GPU (before ZeRO).

    Attributes:
        total: all parameters of the model (int).
        per_gpu: parameters one tensor-parallel rank holds.
        trainable: parameters that get gradients, per tensor-parallel rank.
        adafactor_values: second-moment values Adafactor keeps for the trainable tensors.
        largest_layer: parameters of one transformer layer (or the embedding, if larger), per rank.
        largest_trainable_tensor: elements of the largest single trainable tensor, per rank (the
            embedding or output head for a full fine-tune, the largest adapter matrix for LoRA).
        tensor_sizes: (elements per rank, how many) of every trainable tensor, for the rules that
            go by tensor (bitsandbytes' ``min_8bit_size``, Adafactor's per-tensor RMS); a multimodal
            checkpoint's vision tower (Gemma 3) is not itemized.
    """

    total: int
    per_gpu: int
    trainable: int
    adafactor_values: int
    largest_layer: int
    largest_trainable_tensor: int = 0
    tensor_sizes: tuple[tuple[int, int], ...] = ()

    @property
    def tensors(self) -> int:
        """Trainable tensors (parameters) per rank."""
        return sum(n for _, n in self.tensor_sizes)

    def params_in_tensors_under(self, elements: int) -> int:
        """Trainable parameters in tensors of fewer than ``elements`` elements."""
        return sum(size * n for size, n in self.tensor_sizes if size < elements)


def lora_parameters(arch: Architecture, rank: int, targets: tuple[str, ...], *, use_dora: bool = False,
                    code: str = "transformers") -> int:
    """Adapter parameters: r x (in + out) per adapted matrix, summed over layers (LoRA, sec. 4);
    with DoRA, plus one magnitude per output feature of each adapted matrix (Liu et al. 2024,
    sec. 4; peft ``lora_magnitude_vector``).

    ``code='litgpt'``: LitGPT adapts a fused q/k/v projection named alone (``query_key_value``,
    ``qkv_proj``, ``c_attn``) with ``LoRAQKVLinear`` on its query and value parts (``lora_query``,
    ``lora_value``: litgpt/lora.py at 00af8b0d): ``lora_A`` is (2r, in) and ``lora_B`` (q + kv, r),
    i.e. r x (2 in + q + kv) rather than peft's r x (in + q + 2 kv). E.g. Falcon-40B (in 8192, q 8192,
    kv 8 x 64 = 512, 60 layers, r 8): 8 x (16384 + 8704) x 60 = 12,042,240, the trainable count of
    LitGPT's resource tables."""
    total = 0
    for m in arch.linear_modules():
        if m.name in targets:
            if code == "litgpt" and m.name in FUSED_QKV_MODULES and m.count == 1:
                n = rank * (2 * m.in_features + arch.q_dim + arch.kv_dim)
            else:
                n = rank * (m.in_features + m.out_features)
            total += (n + (m.out_features if use_dora else 0)) * m.count * m.layers
    return total


#: LitGPT's adapter (litgpt/adapter.py) and why only its gates get gradients.
ADAPTER_SRC = ("LitGPT litgpt/adapter.py CausalSelfAttention (adapter_wte: Embedding(adapter_prompt_length, n_embd), "
               "gating_factor (1, 1, n_head, 1), the prefix keys and values cached in adapter_kv_cache); "
               "litgpt/finetune/adapter.py (the no_grad validation before training fills that cache)")


def adapter_parameters(arch: Architecture) -> tuple[int, int]:
    """LitGPT's LLaMA-Adapter (Zhang et al. 2023, "LLaMA-Adapter: Efficient Fine-tuning of Language
    Models with Zero-init Attention", sec. 3): (parameters it adds, parameters that get gradients).

    Every layer from ``adapter_start_layer`` (2) on adds a prefix of ``adapter_prompt_length`` (10)
    learned tokens of width h and a gate per attention head: (L - 2) x (10 x h + heads) (Llama 2 7B:
    30 x 40,992 = 1,229,760, as LitGPT's resource table counts). Only the gates get gradients:
    the layer caches the prefix's keys and values (``adapter_kv_cache``) the first time it runs,
    which is the finetune script's sanity-check validation under ``torch.no_grad``, so the cached
    tensors carry no graph back to the prefix (litgpt/finetune/adapter.py, litgpt/adapter.py at
    05401183; lit_gpt at 0f021f3a alike).
    """
    from planner.workload.frameworks import LITGPT_ADAPTER_PROMPT_LENGTH, LITGPT_ADAPTER_START_LAYER

    layers = arch.num_hidden_layers - LITGPT_ADAPTER_START_LAYER
    heads = arch.num_attention_heads
    return layers * (LITGPT_ADAPTER_PROMPT_LENGTH * arch.hidden_size + heads), layers * heads


def _tp_split(n: int, tp: int) -> int:
    return -(-n // tp)


#: The names of a mixture of experts' gate and up projections (Transformers 4.x module names, as
#: planner.model.architecture lists them), which Transformers 5 stores fused as one gate_up_proj.
_EXPERT_GATE_UP = ("w1", "w3", "gate_proj", "up_proj")


def _stored_modules(arch: Architecture) -> list:
    """The linear weights of one layer as the model stores them: one tensor per module, except a
    mixture of experts' experts, which Transformers 5 keeps as one 3-D parameter per projection,
    gate and up fused (MixtralExperts / Qwen3MoeExperts: gate_up_proj experts x 2f x h, down_proj
    experts x h x f; GptOssExperts lists gate_up_proj already)."""
    mods = arch.linear_modules()
    if not arch.is_moe:
        return mods
    gate_up = [m for m in mods if m.part == "expert" and m.name in _EXPERT_GATE_UP]
    if len(gate_up) < 2:
        return mods
    fused = replace(gate_up[0], name="gate_up_proj", out_features=sum(m.out_features for m in gate_up))
    return [m for m in mods if m not in gate_up] + [fused]


def trainable_shape(arch: Architecture, train: Training) -> TrainableShape:
    """Parameter counts per tensor-parallel rank for the workload's method."""
    pc = arch.param_counts()
    t = train.tp
    per_gpu = _tp_split(pc.total - pc.norms, t) + pc.norms
    mods = arch.linear_modules()
    layer = arch.largest_layer_parameters
    largest = _tp_split(max(layer, pc.embedding, pc.lm_head), t)
    sizes: list[tuple[int, int]] = []
    if train.method == "full":
        trainable = per_gpu
        sizes += [(_tp_split(n, t), 1) for n in (pc.embedding, pc.lm_head) if n]
        if pc.position_embedding:
            sizes.append((pc.position_embedding, 1))
        stored = _stored_modules(arch)
        for m in stored:
            sizes.append((_tp_split(m.weight_params, t), m.layers))
            if m.bias:
                sizes.append((_tp_split(m.bias_params, t), m.layers))
        if arch.lm_head_bias:
            sizes.append((_tp_split(arch.vocab_size, t), 1))
        # the norms (LayerNorm: weight and bias), query/key norms, MLA latent norms, GPT-OSS's sinks
        sizes += arch.norm_tensors()
        # Adafactor: factored second moment for matrices, full for vectors. A tensor of shape
        # (..., out, in) keeps a row vector (..., out) and a column vector (..., in): for a 3-D
        # expert tensor (experts, out, in) that is experts x (out + in).
        factored = sum((m.in_features + m.out_features) * m.count * m.layers for m in stored)
        factored += arch.vocab_size + arch.hidden_size  # embedding
        if pc.lm_head:
            factored += arch.vocab_size + arch.hidden_size
        factored += pc.norms + pc.biases + pc.position_embedding
        ada = _tp_split(factored, t)
        biggest = _tp_split(max([pc.embedding, pc.lm_head] + [m.weight_params for m in stored]), t)
    elif train.method == "adapter":
        from planner.workload.frameworks import LITGPT_ADAPTER_START_LAYER
        # the gates (one tensor of n_head values per adapted layer) get gradients; the prefixes do not
        _, trainable = adapter_parameters(arch)
        heads = arch.num_attention_heads
        sizes = [(heads, arch.num_hidden_layers - LITGPT_ADAPTER_START_LAYER)]
        ada, biggest = trainable, heads
    else:
        trainable = _tp_split(lora_parameters(arch, train.lora_rank, train.lora_targets, use_dora=train.use_dora,
                                              code=FRAMEWORK_SPECS[train.framework].model_code), t)
        ada = 0
        for m in mods:
            if m.name in train.lora_targets:
                r = train.lora_rank
                ada += ((m.in_features + r + r + m.out_features + (m.out_features if train.use_dora else 0)) * m.count
                        * m.layers)
                n = m.count * m.layers
                sizes += [(_tp_split(r * m.in_features, t), n), (_tp_split(m.out_features * r, t), n)]
                if train.use_dora:
                    sizes.append((_tp_split(m.out_features, t), n))
        ada = _tp_split(ada, t)
        biggest = _tp_split(max([train.lora_rank * max(m.in_features, m.out_features) for m in mods
                                 if m.name in train.lora_targets] or [0]), t)
    return TrainableShape(pc.total, per_gpu, trainable, ada, largest, biggest, tuple(sizes))


#: Bytes the CUDA caching allocator gives the smallest tensor (a 0-dim one): one 512-byte block
#: (PyTorch docs, CUDA semantics: memory management).
SMALLEST_BLOCK_BYTES = 512


def _state_bytes(opt: Optimizer, recipe_state_bytes: int, shape: TrainableShape, *, flat: bool = False,
                 ranks: int = 1, fp32_embedding_params: int = 0) -> tuple[int, str]:
    """Bytes of the optimizer's states for the trainable tensors of ``shape``, with the formula.

    Args:
        flat: ZeRO (stages 1-3) hands the optimizer one flat 1-D fp32 partition per parameter group
            instead of the model's tensors (DeepSpeed stage_1_and_2.py: ``param_group['params'] =
            [single_partition_of_fp32_groups[i]]``; stage3.py sub-groups of ``sub_group_size``):
            Adafactor cannot factor a vector, and bitsandbytes' per-tensor rules do not apply.
        fp32_embedding_params: parameters whose 8-bit optimizer states the Hugging Face Trainer keeps
            in 32 bits (it registers every ``nn.Embedding`` weight with ``optim_bits: 32``,
            transformers/trainer.py ``create_optimizer``).
        ranks: the data-parallel ranks the states are sharded over afterwards (each rank's flat
            partition has its own per-tensor state).
    """
    n = shape.trainable
    vb = opt.state_value_bytes or recipe_state_bytes
    if opt.factored and flat:
        return n * vb + ranks * SMALLEST_BLOCK_BYTES, (
            f"{n:,} trainable params x {vb} B (ZeRO's flat 1-D partition: a vector's second moment is not "
            f"factored) + one {SMALLEST_BLOCK_BYTES} B block (RMS) per partition")
    if opt.factored:
        # Transformers' Adafactor also keeps a 0-dim fp32 RMS per tensor (state["RMS"]).
        k = shape.tensors
        return shape.adafactor_values * vb + k * SMALLEST_BLOCK_BYTES, (
            f"{shape.adafactor_values:,} factored second-moment values x {vb} B + {k:,} tensors x "
            f"{SMALLEST_BLOCK_BYTES} B (a 0-dim RMS each)")
    if opt.fixed_state_bytes:
        small = shape.params_in_tensors_under(opt.min_8bit_size) if opt.min_8bit_size and not flat else 0
        emb = 0 if flat else min(fp32_embedding_params, n - small)
        b = int(round((n - small - emb) * opt.fixed_state_bytes)) + (small + emb) * opt.states * 4
        text = f"{n - small - emb:,} trainable params x {opt.fixed_state_bytes:g} B"
        if small:
            text += (f" + {small:,} in tensors under {opt.min_8bit_size:,} values x {opt.states} fp32 states x 4 B "
                     "(min_8bit_size)")
        if emb:
            text += (f" + {emb:,} embedding params x {opt.states} fp32 states x 4 B (the Trainer keeps nn.Embedding "
                     "weights in 32 bits)")
        return b, text
    return n * opt.states * vb, f"{n:,} trainable params x {opt.states} states x {vb} B"


PAGED_SRC = ("bitsandbytes optim/optimizer.py get_state_buffer (F.get_paged: cudaMallocManaged for tensors of at "
             "least 1e5 values); CUDA unified memory, outside PyTorch's caching allocator")


def _paged_split(opt: Optimizer, shape: TrainableShape, *, flat: bool, fp32_embedding_params: int = 0,
                 embedding_tensors: tuple[int, ...] = ()) -> tuple[int, int, str]:
    """A paged optimizer's states: (bytes PyTorch allocates, bytes in CUDA unified memory, formula).

    bitsandbytes pages ``state1``/``state2`` of every tensor of at least :data:`PAGED_MIN_ELEMENTS`
    values (under ZeRO: the flat partition, one tensor); the 8-bit absmax vectors (fp32 per block of
    256) and the states of smaller tensors come from ``torch.zeros``. The Trainer's 32-bit embedding
    states (``fp32_embedding_params``, in the tensors ``embedding_tensors``) are paged like the rest.
    """
    big_min = PAGED_MIN_ELEMENTS
    sizes = [(shape.trainable, 1)] if flat else list(shape.tensor_sizes)
    if not sizes:
        sizes = [(shape.trainable, 1)]
    emb_left = 0 if flat else fp32_embedding_params
    emb_sizes = list(embedding_tensors)
    paged = alloc = 0
    fixed = opt.fixed_state_bytes
    for size, count in sizes:
        for _ in range(count):
            is_emb = emb_left > 0 and size in emb_sizes
            if is_emb:
                emb_sizes.remove(size)
                emb_left -= size
            if fixed and not is_emb and size >= opt.min_8bit_size:
                states = 2 * size  # two 1-byte states
                absmax = int(round(size * (fixed - 2)))
                if size >= big_min:
                    paged += states
                else:
                    alloc += states
                alloc += absmax
            else:
                b = size * opt.states * 4  # fp32 states (32-bit optimizer, small tensors, 32-bit embeddings)
                if size >= big_min:
                    paged += b
                else:
                    alloc += b
    text = (f"{shape.trainable:,} trainable params: states of tensors of at least {big_min:,} values in CUDA unified "
            f"memory ({paged:,} B), the rest and the 8-bit absmax vectors allocated ({alloc:,} B)")
    return alloc, paged, text


def model_state_components(arch: Architecture, train: Training, *, fwd_phase: str = "forward-backward"
                           ) -> list[Component]:
    """Weights, gradients, master weights, optimizer states and their step temporaries.

    Returns GPU components (bytes per GPU) and host components (bytes per machine, for
    offloaded states: the shards of the GPUs in one machine are added by the caller's
    ``gpus_per_node``; here they are per GPU process and marked 'host').

    The per-GPU figures follow the ZeRO paper's accounting: with N data-parallel ranks,
    stage >= 1 divides master weights and optimizer states by N, stage >= 2 gradients,
    stage 3 parameters.

    Args:
        fwd_phase: the phase name(s) of forward and backward, for buffers in flight.
    """
    recipe: Recipe = RECIPES[train.recipe]
    opt = OPTIMIZERS[train.optimizer]
    shape = trainable_shape(arch, train)
    if train.fsdp:
        return fsdp_state_components(arch, train, shape, fwd_phase=fwd_phase)
    N = train.data_parallel
    z = train.zero
    out: list[Component] = []

    def shard(n: int, stage: int) -> tuple[int, str]:
        if z >= stage and N > 1:
            return -(-n // N), f" / {N} GPUs (ZeRO-{z})"
        return n, ""

    tp_note = f" (per tensor-parallel rank, t={train.tp})" if train.tp > 1 else ""
    src_tp = f"; {TP_SRC}" if train.tp > 1 else ""

    out += _weight_components(arch, train, shape, recipe, shard, src_tp=src_tp, tp_note=tp_note,
                              fwd_phase=fwd_phase)

    # ---- trainable states: LoRA adapters or the full model -------------------------------
    nt = shape.trainable
    if train.method == "adapter":
        # LitGPT keeps its adapter in the model dtype (bf16-true); gradients and torch optimizer states
        # exist for the gates only (adapter_parameters)
        ab = 4 if train.adapter_dtype == "fp32" else 2
        added, _ = adapter_parameters(arch)
        out.append(Component("adapter weights (LLaMA-Adapter prefixes and gates)", GPU, added * ab,
                             f"{added:,} adapter params (L - 2 layers x (10 prefix tokens x h + one gate per head)) x "
                             f"{ab} B ({train.adapter_dtype}); {nt:,} of them (the gates) get gradients", ADAPTER_SRC))
        grad_b, master_b, state_b = ab, 0, ab
    elif train.method != "full":
        # Adapters, their gradients and torch optimizer states share the adapter dtype
        # (fp32 under peft's default autocast_adapter_dtype=True).
        ab = 4 if train.adapter_dtype == "fp32" else 2
        out.append(Component("LoRA adapter weights", GPU, shard(nt * ab, 3)[0],
                             f"{nt:,} adapter params (r={train.lora_rank} on {', '.join(train.lora_targets)}) x {ab} B"
                             f" ({train.adapter_dtype})" + shard(0, 3)[1], LORA_SRC))
        grad_b, master_b, state_b = ab, 0, ab
    else:
        grad_b, master_b, state_b = recipe.grad_bytes, recipe.master_bytes, recipe.state_bytes

    # Bytes per value of the trainable parameters themselves (DeepSpeed's offload buffers use it).
    param_b = recipe.weight_bytes if train.method == "full" else grad_b
    # ZeRO-Offload with stage 2 or 3: gradients leave the GPU bucket by bucket during backward
    # (see the module docstring); only the reduce bucket and a staging buffer stay on the GPU.
    grads_offloaded = train.offload_optimizer and z >= 2
    grads_persistent = recipe.persistent_grads or train.grad_accum > 1 or z >= 1 or N > 1
    # With tied embeddings the output head's gradient waits for the embedding's, and the two
    # are added into a new tensor at the end of backward: three vocab x hidden gradients at once.
    tied_moment = (arch.tie_word_embeddings and train.method == "full" and not grads_persistent)
    in_bwd = train.optimizer_in_backward
    if in_bwd:
        # torchtune's optimizer_in_bwd (training/memory.py register_optim_in_bwd_hooks): a post-accumulate-grad
        # hook steps each parameter's own optimizer and sets its .grad to None as soon as it is complete, so
        # at most the gradient being stepped exists; the largest (the head's, right at the start of backward)
        # sets the moment.
        big = shape.largest_trainable_tensor
        out.append(Component("gradient being stepped (optimizer in backward)", GPU, big * grad_b,
                             f"largest trainable tensor {big:,} values x {grad_b} B (each gradient is stepped and "
                             "freed as it completes)",
                             "torchtune training/memory.py register_optim_in_bwd_hooks "
                             "(Tensor.register_post_accumulate_grad_hook)", phase=BACKWARD))
    elif not grads_offloaded:
        grads, gnote = shard(nt * grad_b, 2)
        gphase = "" if grads_persistent else ("optimizer step, end of backward" if tied_moment else "optimizer step")
        why = ("" if not grads_persistent else
               " (kept between micro-batches)" if train.grad_accum > 1 else " (persistent buffers)")
        out.append(Component("gradients", GPU, grads, f"{nt:,} trainable params x {grad_b} B{gnote}{why}",
                             (ZERO_SRC if gnote else recipe_source(recipe)), phase=gphase))
    if tied_moment:
        vh = -(-arch.vocab_size * arch.hidden_size // train.tp)
        out.append(Component("tied embedding gradients being summed", GPU, 2 * vh * grad_b,
                             f"2 x V*h = 2 x {vh:,} x {grad_b} B (head and embedding gradients before their sum)",
                             "PyTorch autograd accumulation of a shared parameter's gradients",
                             phase="end of backward"))
    states, master_b, state_b = _state_components(arch, train, shape, recipe, opt, shard, nt=nt, grad_b=grad_b,
                                                  master_b=master_b, state_b=state_b, param_b=param_b)
    out += states
    out += _step_components(train, shape, recipe, opt, nt=nt, grad_b=grad_b, master_b=master_b, state_b=state_b,
                            param_b=param_b, in_bwd=in_bwd, grads_offloaded=grads_offloaded, fwd_phase=fwd_phase)
    return out


def _weight_components(arch: Architecture, train: Training, shape: TrainableShape, recipe: Recipe, shard: Shard, *,
                       src_tp: str, tp_note: str, fwd_phase: str) -> list[Component]:
    """:func:`model_state_components`' weights: the frozen quantized base or the model's weights
    (sharded by ZeRO-3, or offloaded), and ZeRO-3's gathered parameters in flight."""
    N, z = train.data_parallel, train.zero
    out: list[Component] = []
    # ---- weights -----------------------------------------------------------------------
    if train.quantized_base:
        fmt = train.quantized_base
        wb = frozen_base_weights(arch, train)
        full_weights = wb.total
        w, note = shard(full_weights, 3)
        src = ("QLoRA, Dettmers et al. 2023, sec. 3" if fmt == "nf4" else
               "LLM.int8(), Dettmers et al. 2022, sec. 3; bitsandbytes Int8Params (int8 weight, fp32 SCB per row)")
        src += ("; peft prepare_model_for_kbit_training" if train.prepare_kbit_training else "") + src_tp
        if train.framework == "torchtune" and fmt == "nf4":
            src += "; torchao NF4Tensor (torchtune's QLoRA base: blocks of 64, 8-bit scales per 256 blocks)"
        if train.offload_params:
            # ZeRO-Infinity's offload_param moves every partition, the packed NF4 storage too
            # (bnb_4bit_quant_storage), to host RAM; each module's is gathered onto the GPU for use.
            out.append(Component(f"weights (frozen {fmt.upper()} base)", HOST, w,
                                 wb.formula + note + ", offloaded to host (ZeRO-Infinity offload_param)",
                                 src + "; ZeRO-Infinity, Rajbhandari et al. 2021"))
        else:
            out.append(Component(f"weights (frozen {fmt.upper()} base)", GPU, w, wb.formula + note,  # per rank
                                 src))
    else:
        n = shape.per_gpu
        full_weights = n * recipe.weight_bytes
        w, note = shard(full_weights, 3)
        label = "weights" if train.method == "full" else "weights (frozen base)"
        if train.offload_params:
            out.append(Component(label, HOST, w,
                                 f"{n:,} params x {recipe.weight_bytes} B{note}, offloaded to host (ZeRO-Infinity)",
                                 "ZeRO-Infinity, Rajbhandari et al. 2021"))
        else:
            out.append(Component(label, GPU, w, f"{n:,} params x {recipe.weight_bytes} B{note}{tp_note}",
                                 (ZERO_SRC if note else recipe_source(recipe)) + src_tp))
    if z == 3 and (N > 1 or train.offload_params):
        # Layers gathered for compute, at the stored bytes per parameter; never more than the
        # part of the model this rank does not own (ZeRO-3 holds at most the whole model). With
        # offload_param the GPU owns none of them, so the fetched working set is on the GPU on one
        # GPU as well: partitioned_param_coordinator.py fetches each module's parameters (and the
        # prefetch bucket) from the host partition into GPU buffers, bounded by max_live_parameters.
        live = min(2 * shape.largest_layer + DS_STAGE3_PREFETCH_ELEMENTS, DS_STAGE3_MAX_LIVE_PARAMETERS)
        per_param = full_weights / shape.per_gpu
        unowned = full_weights - w if not train.offload_params else full_weights
        gathered = min(int(live * per_param), unowned)
        out.append(Component("gathered parameters in flight (ZeRO-3)", GPU, gathered,
                             f"min(2 x {shape.largest_layer:,} largest-layer params + {DS_STAGE3_PREFETCH_ELEMENTS:,} "
                             f"prefetch, {DS_STAGE3_MAX_LIVE_PARAMETERS:,} max live) x {per_param:.3g} B"
                             f", at most the {unowned:,} B this GPU does not own"
                             + (" (offload_param: the GPU owns no parameters)" if train.offload_params else ""),
                             DS_CONFIG_SRC + "; DeepSpeed partitioned_param_coordinator.py (fetch, prefetch bucket, "
                             "max live parameters)", phase=fwd_phase))
    return out


def _state_components(arch: Architecture, train: Training, shape: TrainableShape, recipe: Recipe, opt: Optimizer,
                      shard: Shard, *,
                      nt: int, grad_b: int, master_b: int, state_b: int, param_b: int
                      ) -> tuple[list[Component], int, int]:
    """:func:`model_state_components`' fp32 master weights, optimizer states (paged or offloaded) and
    ZeRO-Offload's host buffers; with the master and state bytes per value they settled on (4 and 4
    when the optimizer is offloaded)."""
    N, z = train.data_parallel, train.zero
    out: list[Component] = []
    where_states = HOST if train.offload_optimizer else GPU
    off = ", in host RAM (ZeRO-Offload)" if train.offload_optimizer else ""
    if train.offload_optimizer:
        # DeepSpeed's host side is the same for every recipe: the CPU optimizer updates an fp32
        # clone of this rank's partition (also for fp32 or AMP models, whose weights are fp32
        # already), and its states are created from that fp32 partition (module docstring).
        why_master = "" if master_b == 4 else (
            f" (DeepSpeed's fp32 partition for the CPU optimizer, kept beside the GPU's {param_b} B "
            "weights whatever the recipe)")
        master_b, state_b = 4, 4
        m, mnote = shard(nt * master_b, 1)
        out.append(Component("fp32 master weights", HOST, m, f"{nt:,} params x 4 B{mnote}{off}{why_master}",
                             OFFLOAD_SRC + "; " + DS_FP32_PARTITION_SRC))
    elif master_b:
        m, mnote = shard(nt * master_b, 1)
        out.append(Component("fp32 master weights", GPU, m, f"{nt:,} params x {master_b} B{mnote}", ZERO_SRC))
    pc = arch.param_counts()
    # The Hugging Face Trainer keeps nn.Embedding weights' 8-bit states in 32 bits; torchtune and LitGPT
    # hand bitsandbytes the parameters as they are.
    trainer = train.framework in TRAINER_FRAMEWORKS
    embeddings = (_tp_split(pc.embedding, train.tp) + pc.position_embedding) if train.method == "full" and trainer else 0
    sb, sformula = _state_bytes(opt, state_b, shape, flat=z >= 1, ranks=N, fp32_embedding_params=embeddings)
    s, snote = shard(sb, 1)
    if s and opt.paged and not train.offload_optimizer:
        emb_tensors = tuple(n for n in (_tp_split(pc.embedding, train.tp), pc.position_embedding) if n)
        alloc, paged, ptext = _paged_split(opt, shape, flat=z >= 1, fp32_embedding_params=embeddings,
                                           embedding_tensors=emb_tensors)
        alloc, _ = shard(alloc, 1)
        paged, _ = shard(paged, 1)
        if alloc:
            out.append(Component("optimizer states", GPU, alloc,
                                 f"{ptext}: the allocated part{snote} ({opt.name})", opt.source))
        if paged:
            out.append(Component("optimizer states (paged, CUDA unified memory)", GPU, paged,
                                 f"{ptext}: the paged part{snote} ({opt.name}); outside the allocated total: the driver "
                                 "keeps these pages on the GPU while it has room and evicts them to host RAM "
                                 "otherwise", PAGED_SRC, kind="unified"))
            out.append(Component("paged optimizer states evicted to host RAM (worst case)", HOST, paged,
                                 f"{paged:,} B of CUDA unified memory per GPU process, when the GPU has no room for them",
                                 PAGED_SRC, phase="run"))
    elif s:
        out.append(Component("optimizer states", where_states, s,
                             f"{sformula}{snote}{off}{' (created from the fp32 partition)' if off else ''} "
                             f"({opt.name})",
                             (OFFLOAD_SRC + "; " + DS_FP32_PARTITION_SRC + "; " if off else "") + opt.source))
    if train.offload_optimizer:
        # The fp32 gradient partition (single_partition_of_fp32_groups[i].grad in DeepSpeed) is
        # the same partition as the fp32 master weights: sharded from stage 1 on.
        g32, g32note = shard(nt * 4, 1)
        out.append(Component("fp32 gradients for the CPU optimizer", HOST, g32,
                             f"{nt:,} params x 4 B{g32note}", OFFLOAD_SRC))
        if z == 3:
            gp, gpnote = shard(nt * grad_b, 2)
            out.append(Component("gradient partitions in host RAM (ZeRO-3 offload)", HOST, gp,
                                 f"{nt:,} params x {grad_b} B{gpnote} (grad_partitions_flat_buffer on the offload "
                                 "device; accumulates across micro-batches)", OFFLOAD_SRC + "; " + DS_OFFLOAD_SRC))
        elif train.grad_accum > 1:  # stages 1 and 2 (stage_1_and_2.py)
            ga, ganote = shard(nt * param_b, 1)  # the parameters of this rank's partition
            out.append(Component("gradient accumulation buffers in host RAM (ZeRO-Offload)", HOST, ga,
                                 f"{nt:,} params x {param_b} B{ganote} (accumulated_grads_in_cpu, "
                                 f"grad_accum {train.grad_accum})", OFFLOAD_SRC + "; " + DS_OFFLOAD_SRC))
        if z < 3:  # stage_1_and_2.py allocates it whenever cpu_offload is on
            big = shape.largest_trainable_tensor
            out.append(Component("gradient staging buffer (ZeRO-Offload)", GPU, big * param_b,
                                 f"largest trainable tensor {big:,} elements x {param_b} B "
                                 "(temp_grad_buffer_for_gpu_offload)", OFFLOAD_SRC + "; " + DS_OFFLOAD_SRC))
    return out, master_b, state_b


def _step_components(train: Training, shape: TrainableShape, recipe: Recipe, opt: Optimizer, *, nt: int, grad_b: int, master_b: int,
                     state_b: int, param_b: int, in_bwd: bool, grads_offloaded: bool,
                     fwd_phase: str) -> list[Component]:
    """:func:`model_state_components`' optimizer step buffers and temporaries and the communication
    buffers (DDP's gradient buckets, ZeRO's reduce bucket)."""
    N, z = train.data_parallel, train.zero
    out: list[Component] = []
    def step_partition() -> tuple[int, str]:
        """The flat fp32 tensor DeepSpeed's step works on: this rank's partition, at stage 3 one
        sub-group of it at a time (sub_group_size); values and words."""
        part = -(-nt // N)
        if z == 3 and part > DS_STAGE3_SUB_GROUP_ELEMENTS:
            return DS_STAGE3_SUB_GROUP_ELEMENTS, f"one ZeRO-3 sub-group (sub_group_size) of the {part:,}-value partition"
        return part, f"ZeRO's flat fp32 partition of {part:,} values"

    if z >= 1 and master_b and not train.offload_optimizer:
        # DeepSpeed's step flattens this rank's averaged 16-bit gradients and casts them to fp32 as the
        # fp32 partition's .grad (stage_1_and_2.py step: single_grad_partition = flatten(...).to(fp32);
        # stage3.py _prepare_fp32_grad_for_sub_group, one sub-group at a time); the 16-bit gradients are
        # freed right after, the fp32 one lives through the optimizer step.
        part, what = step_partition()
        flat = grad_b if grad_b != 4 else 0  # a 16-bit flat copy before the cast (fp32 gradients: the copy is it)
        out.append(Component("fp32 gradient partition for the step (ZeRO)", GPU, part * (4 + flat),
                             f"{what} x (4 B fp32" + (f" + {flat} B flat copy being cast" if flat else "") + ")",
                             "DeepSpeed stage_1_and_2.py step (single_grad_partition); stage3.py "
                             "_prepare_fp32_grad_for_sub_group", phase="optimizer step"))
    # ---- step temporaries ---------------------------------------------------------------
    # torch.optim's foreach step allocates temporaries; the mixed recipes (DeepSpeed, Megatron,
    # apex) and any ZeRO stage use fused optimizers that update in place.
    fused = z >= 1 or recipe.name.startswith("mixed")
    if opt.step_temp_values and not train.offload_optimizer and not fused:
        if in_bwd:
            # one optimizer per parameter, stepped inside backward: one parameter's temporaries at a time
            big = shape.largest_trainable_tensor
            out.append(Component("optimizer step temporaries", GPU, big * opt.step_temp_values * state_b,
                                 f"largest trainable tensor {big:,} values x {opt.step_temp_values} x {state_b} B "
                                 "(one parameter's step at a time, in backward)", opt.source, phase=BACKWARD))
        else:
            tb = nt * opt.step_temp_values * state_b
            out.append(Component("optimizer step temporaries", GPU, tb,
                                 f"{nt:,} params x {opt.step_temp_values} x {state_b} B", opt.source,
                                 phase="optimizer step"))
    if any(opt.largest_tensor_fp32_copies) and not train.offload_optimizer:
        # One parameter at a time: the fp32 casts of a 16-bit gradient and parameter, and the
        # update's temporaries (grad**2 and + eps; the factored estimate beside the old update;
        # -update), for the largest tensor the optimizer steps: the largest trainable tensor, or
        # under ZeRO the flat fp32 partition (stage 3: at most one sub-group).
        step_param_b = 4 if z >= 1 else (master_b or param_b)  # fp32 masters (ZeRO's partition), or these
        copies = opt.largest_tensor_fp32_copies[0 if step_param_b == 2 else 1]
        if z >= 1:
            big, what = step_partition()
        else:
            big = shape.largest_trainable_tensor
            what = f"largest trainable tensor {big:,} values"
        out.append(Component("optimizer step temporaries", GPU, big * copies * 4,
                             f"{what} x {copies} fp32 copies x 4 B "
                             f"({'16-bit' if step_param_b == 2 else 'fp32'} parameters)", opt.source,
                             phase=BACKWARD if in_bwd else "optimizer step"))
    # ---- communication buffers ------------------------------------------------------------
    if N > 1 and z == 0:
        out.append(Component("DDP gradient buckets", GPU, nt * grad_b,
                             f"{nt:,} params x {grad_b} B (gradient_as_bucket_view=False)",
                             "PyTorch DistributedDataParallel docs, gradient_as_bucket_view"))
    elif z >= 1:
        # DeepSpeed allocates reduce_bucket_size elements in the dtype of the parameters it
        # optimises (self.dtype), whatever the model size and the number of GPUs, whenever
        # contiguous_gradients is on (its default; cpu_offload forces it): stages 1-2 in every
        # backward, stage 3 once at start-up (see the module docstring). One bucket: overlap_comm
        # is assumed off for stages 1-2 (DeepSpeed's default there; on, they allocate two).
        formula = (f"reduce_bucket_size {DS_REDUCE_BUCKET_ELEMENTS:,} elements (DeepSpeed's default) x {param_b} B "
                   "(parameter dtype)")
        if grads_offloaded:
            formula += ("; the only gradient copy on the GPU: each full bucket is reduced and copied to the "
                        "host's fp32 gradient partition (ZeRO-Offload)")
        if z == 3:
            formula += "; allocated at start-up and kept (stage3.py)"
        out.append(Component("ZeRO reduce bucket", GPU, DS_REDUCE_BUCKET_ELEMENTS * param_b, formula,
                             DS_BUCKET_SRC + ("; " + OFFLOAD_SRC + "; " + DS_OFFLOAD_SRC if train.offload_optimizer
                                              else ""),
                             phase="" if z == 3 else fwd_phase))
    return out


def recipe_source(recipe: Recipe) -> str:
    """The citation behind a recipe's bytes per parameter."""
    if recipe.name.startswith("mixed") and recipe.name.endswith("fp32-grads"):
        return "DeepSpeed/Megatron-LM fp32 gradient accumulation; ZeRO paper sec. 3.1"
    if recipe.name.startswith("mixed"):
        return "ZeRO, Rajbhandari et al. 2020, sec. 3.1 (mixed-precision Adam, 16 B/param)"
    if recipe.name.startswith("amp"):
        return "PyTorch AMP docs (pytorch.org/docs/stable/amp.html)"
    if recipe.name.startswith("pure"):
        return "torch.optim docs: states are created with zeros_like(param)"
    return "IEEE 754 fp32: 4 B per value"


FSDP_SRC = "PyTorch FSDP docs (pytorch.org/docs/stable/fsdp.html: FULL_SHARD, SHARD_GRAD_OP, use_orig_params, no_sync)"
FSDP2_SRC = "PyTorch FSDP2 docs (torch.distributed.fsdp.fully_shard: per-parameter DTensor shards)"


def root_parameters(arch: Architecture, tp: int = 1) -> int:
    """Parameters outside the decoder layers, per tensor-parallel rank: embeddings, the output head,
    the final norm (and a vision tower): the root FSDP unit's."""
    pc = arch.param_counts()
    final_norm = arch.hidden_size * (2 if arch.norm == "layer" else 1)
    return _tp_split(pc.embedding + pc.lm_head + pc.vision, tp) + pc.position_embedding + final_norm


def fsdp_state_components(arch: Architecture, train: Training, shape: TrainableShape, *,
                          fwd_phase: str = "forward-backward") -> list[Component]:
    """Model states per GPU when PyTorch FSDP shards the model over the N data-parallel ranks.

    Units: each decoder layer, and the root (embeddings, head, final norm). With ``zero`` 3
    (``FULL_SHARD``) every unit's parameters are sharded 1/N at rest and gathered for its forward and
    backward: at most two layers at once (the one running and the one prefetched: FSDP1's
    ``limit_all_gathers``, FSDP2's one-module prefetch), and the root stays gathered from its forward
    to its backward (FSDP1 and FSDP2 do not reshard the root after forward). With ``zero`` 2
    (``SHARD_GRAD_OP``) gathered parameters stay unsharded from forward to backward. Gradients are
    reduce-scattered to 1/N per unit during backward (the unit's unsharded gradient exists meanwhile)
    and kept until the optimizer step (``zero_grad(set_to_none=True)`` frees them after it); under
    ``no_sync`` (gradient accumulation in accelerate and Lightning) FSDP accumulates the unsharded
    gradients instead ("FSDP will accumulate the full model gradients (instead of gradient shards)
    until the eventual sync", FSDP docs, ``no_sync``). Optimizer states and the step work on the shards.

    A LoRA or QLoRA base is sharded like every other parameter. FSDP1 flattens each unit into one
    ``FlatParameter``; with ``use_orig_params=True`` (Lightning, accelerate) a unit may mix frozen and
    trainable parameters, and then the whole flat parameter gets a gradient ("the gradient memory
    usage will be higher than expected (namely, equivalent to not freezing those parameters)", FSDP
    docs; pytorch issue 91165, litgpt issue 1417): torch/distributed/fsdp/_flat_param.py makes the
    FlatParameter require grad when any original parameter does (pytorch PR 98221 for
    ``use_orig_params=True``), autograd then gives the unsharded flat parameter a gradient of its full
    numel in its dtype (_wrap_utils.py warns "1451376640 numel instead of 106496 numel before sharding
    via reduce-scatter", litgpt PR 1538), the reduce-scatter keeps a 1/N shard of it, and under
    ``no_sync`` the unsharded one accumulates. ``fsdp_wrap: blocks`` (LitGPT's default:
    ``auto_wrap_policy={Block}``, every block mixes its base and its adapters; a plain
    ``transformer_auto_wrap_policy``) models that; ``separate`` (the Transformers Trainer wraps peft's
    adapters in units of their own, ``_fsdp_qlora_plugin_updates``: peft ``fsdp_auto_wrap_policy``)
    gives only the adapters gradients. torchtune's distributed recipes use FSDP2, which keeps
    gradients per parameter: there only the adapters get gradients whatever the wrap.

    With ``offload_params`` (``CPUOffload(offload_params=True)``; torchtune ``fsdp_cpu_offload``) the
    parameter and gradient shards live in host RAM and the optimizer steps there (its states too);
    the GPU holds the gathered units and the unit gradient being reduced.

    Mixed recipes (``mixed-*``) are FSDP's ``MixedPrecision(param_dtype=16-bit)``: the sharded
    parameters are fp32 (the optimizer's), gathered and computed in 16-bit, gradients sharded in fp32.
    """
    recipe: Recipe = RECIPES[train.recipe]
    opt = OPTIMIZERS[train.optimizer]
    fw = FRAMEWORK_SPECS[train.framework]
    N, z, v = train.data_parallel, train.zero, train.fsdp
    src = FSDP_SRC if v == 1 else FSDP2_SRC
    L = arch.num_hidden_layers
    out: list[Component] = []
    full = train.method == "full"
    offload = train.offload_params
    shard_where = HOST if offload else GPU
    off = ", in host RAM (CPUOffload)" if offload else ""

    def sh(n: int) -> int:
        return -(-n // N)

    # ---- parameters ------------------------------------------------------------------------
    P = shape.per_gpu
    root = root_parameters(arch, train.tp)
    if train.quantized_base:
        wb = frozen_base_weights(arch, train)
        stored = wb.total
        per_param = stored / P
        label, what = f"weights (frozen {train.quantized_base.upper()} base)", wb.formula
        gathered_b = per_param
    else:
        stored_b = 4 if recipe.master_bytes else recipe.weight_bytes
        stored = P * stored_b
        per_param = stored_b
        label = "weights" if full else "weights (frozen base)"
        what = f"{P:,} params x {stored_b} B" + (" (fp32: MixedPrecision's sharded parameters)" if recipe.master_bytes
                                                 else "")
        gathered_b = recipe.weight_bytes
    out.append(Component(label, shard_where, sh(stored), f"{what} / {N} GPUs (FSDP{v} {'FULL_SHARD' if z == 3 else 'SHARD_GRAD_OP'}){off}",
                         src))
    nt = shape.trainable
    ab = 4 if train.adapter_dtype == "fp32" else 2
    if not full:
        out.append(Component("LoRA adapter weights", shard_where, sh(nt * ab),
                             f"{nt:,} adapter params (r={train.lora_rank}) x {ab} B / {N} GPUs{off}", LORA_SRC + "; " + src))
    layer = -(-(P - root) // L)
    pc = arch.param_counts()
    own_units = full and fw.embedding_units_full
    if own_units:
        # the embedding and the head are units of their own: the head is gathered at the loss (and the
        # embedding at the two ends of the step), the root keeps the final norm only
        biggest_end = max(_tp_split(pc.embedding, train.tp), _tp_split(pc.lm_head, train.tp))
        root_live, root_what = biggest_end + arch.hidden_size, (
            "the larger of the embedding and the head (units of their own: custom_sharded_layers)")
    else:
        root_live, root_what = root, "the root (embeddings, head, final norm), gathered from its forward to its backward"
    if z == 3:
        gathered = int((2 * layer + root_live) * gathered_b)
        text = (f"(2 layers x {layer:,} + {root_live:,} params) x {gathered_b:.3g} B: the layer running and the "
                f"one prefetched, and {root_what}")
    else:
        gathered = int(P * gathered_b)
        text = f"{P:,} params x {gathered_b:.3g} B: SHARD_GRAD_OP keeps gathered parameters from forward to backward"
    out.append(Component(f"gathered parameters in flight (FSDP{v})", GPU, gathered, text, src, phase=fwd_phase))

    # ---- gradients ---------------------------------------------------------------------------
    grad_b = 4 if (full and recipe.master_bytes) else (recipe.grad_bytes if full else ab)
    mixed_units = v == 1 and not full and train.fsdp_wrap == "blocks"
    if mixed_units:
        # every block holds adapters: its whole flat parameter (base included) gets a gradient, in the
        # flat parameter's dtype (the base's)
        grad_params = P - root + nt
        grad_b = 2 if train.quantized_base else recipe.weight_bytes
        who = "LitGPT wraps" if fw.name == "litgpt" else "fsdp_wrap: blocks wraps"
        gwhat = (f"{grad_params:,} params of the blocks' flat parameters ({who} whole blocks: each mixes its "
                 f"frozen base and its adapters, and FSDP1 gives the whole FlatParameter a gradient) x {grad_b} B")
    else:
        grad_params = nt
        gwhat = f"{nt:,} trainable params x {grad_b} B"
    no_sync = fw.no_sync_accumulation and train.grad_accum > 1
    if train.optimizer_in_backward:
        unit = max(shape.largest_trainable_tensor, 1)
        out.append(Component("gradient being stepped (optimizer in backward)", GPU, unit * grad_b,
                             f"largest trainable tensor {unit:,} values x {grad_b} B (unsharded, before its "
                             "reduce-scatter; stepped and freed right after)",
                             "torchtune training/memory.py register_optim_in_bwd_hooks; " + src, phase=BACKWARD))
    elif no_sync:
        out.append(Component("gradients (unsharded under no_sync)", shard_where if offload else GPU, grad_params * grad_b,
                             f"{gwhat}, not sharded: grad_accum {train.grad_accum} runs the first micro-batches under "
                             "no_sync, which accumulates full gradients", src))
    else:
        out.append(Component("gradients", shard_where, sh(grad_params * grad_b), f"{gwhat} / {N} GPUs{off}", src,
                             phase="" if train.grad_accum > 1 else "optimizer step"))
    if not train.optimizer_in_backward:
        # the unit whose backward runs: its new unsharded gradient, before it is reduce-scattered (or, under
        # no_sync, added into the accumulated one); the root's, when it trains, waits for the embedding's
        unit_grad = (grad_params // L if mixed_units or full else -(-nt // L)) * grad_b
        if full:
            unit_grad = max(unit_grad, (root_live if own_units else root) * grad_b)
        what = "added into the accumulated gradient (no_sync)" if no_sync else "reduce-scattered"
        out.append(Component("unsharded gradient of the unit in backward (FSDP)", GPU, unit_grad,
                             f"one unit's new gradient before it is {what} ({unit_grad:,} B)", src, phase=fwd_phase))

    out += _fsdp_optimizer_components(train, shape, recipe, opt, nt=nt, ab=ab)
    return out


def _fsdp_optimizer_components(train: Training, shape: TrainableShape, recipe: Recipe, opt: Optimizer, *, nt: int,
                               ab: int) -> list[Component]:
    """:func:`fsdp_state_components`' optimizer states (sharded, paged or offloaded with the
    parameters) and step temporaries; ``ab``: the adapters' bytes per value."""
    N = train.data_parallel
    full = train.method == "full"
    offload = train.offload_params
    shard_where = HOST if offload else GPU
    off = ", in host RAM (CPUOffload)" if offload else ""
    out: list[Component] = []

    def sh(n: int) -> int:
        return -(-n // N)

    # ---- optimizer states and step ---------------------------------------------------------
    state_b = recipe.state_bytes if full else ab
    sb, sformula = _state_bytes(opt, state_b, shape)
    if sb:
        if opt.paged and not offload:
            alloc, paged, ptext = _paged_split(opt, shape, flat=False)
            if alloc:
                out.append(Component("optimizer states", GPU, sh(alloc), f"{ptext}: the allocated part / {N} GPUs "
                                     f"({opt.name})", opt.source))
            if paged:
                out.append(Component("optimizer states (paged, CUDA unified memory)", GPU, sh(paged),
                                     f"{ptext}: the paged part / {N} GPUs ({opt.name}); outside the allocated total",
                                     PAGED_SRC, kind="unified"))
                out.append(Component("paged optimizer states evicted to host RAM (worst case)", HOST, sh(paged),
                                     f"{sh(paged):,} B of CUDA unified memory per GPU process", PAGED_SRC, phase="run"))
        else:
            out.append(Component("optimizer states", shard_where, sh(sb), f"{sformula} / {N} GPUs{off} ({opt.name})",
                                 opt.source))
    if opt.step_temp_values and not offload:
        if train.optimizer_in_backward:
            big = shape.largest_trainable_tensor
            out.append(Component("optimizer step temporaries", GPU, sh(big) * opt.step_temp_values * state_b,
                                 f"one parameter's shard {sh(big):,} values x {opt.step_temp_values} x {state_b} B",
                                 opt.source, phase=BACKWARD))
        else:
            out.append(Component("optimizer step temporaries", GPU, sh(nt) * opt.step_temp_values * state_b,
                                 f"{sh(nt):,} params (this rank's shards) x {opt.step_temp_values} x {state_b} B",
                                 opt.source, phase="optimizer step"))
    if any(opt.largest_tensor_fp32_copies) and not offload:
        copies = opt.largest_tensor_fp32_copies[0 if state_b == 2 else 1]
        big = sh(shape.largest_trainable_tensor)
        out.append(Component("optimizer step temporaries", GPU, big * copies * 4,
                             f"largest shard {big:,} values x {copies} fp32 copies x 4 B", opt.source,
                             phase=BACKWARD if train.optimizer_in_backward else "optimizer step"))
    return out
