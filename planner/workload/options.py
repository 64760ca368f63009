"""Workload options: the choices and limits the readers accept, and the option records.

The names every reader checks against (tasks, methods, weight formats, engines, the keys of each
task) and the largest values it accepts; :class:`Training`, :class:`Inference` and
:class:`HostOptions`, the validated options of a workload (planner.workload.spec.Workload holds
them). The readers that build them are planner.workload.training and planner.workload.inference.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from planner.core.fields import ascii_digits_hint, shown_number
from planner.core.units import dotted_thousands, separator_problem
from planner.model.quantization import KeptModules, WeightScheme
from planner.workload.frameworks import CURRENT_BNB_VERSION, bnb_keeps_4bit_inputs

TASKS = ("train", "infer")
METHODS = ("full", "lora", "qlora", "adapter")
CHECKPOINTING = ("none", "full")
ATTENTION = ("eager", "sdpa", "flash")
WEIGHT_FORMATS = ("fp32", "fp16", "bf16", "fp8", "int8", "int4-gptq", "int4-awq", "nf4", "mxfp4", "compressed-tensors")
KV_DTYPES = ("fp32", "fp16", "bf16", "fp8")
ENGINES = ("hf", "vllm", "llama.cpp")
#: llama.cpp weights: llama-quantize's presets and convert_hf_to_gguf's float types (the table and the
#: per-tensor rules are planner.model.gguf.PRESETS; tests check the two lists agree).
LLAMACPP_WEIGHTS = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q2_K_S", "Q3_K_S",
                    "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ1_S", "IQ1_M", "IQ2_XXS",
                    "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M", "IQ4_NL", "IQ4_XS", "TQ1_0",
                    "TQ2_0", "MXFP4_MOE")
#: llama.cpp KV cache types (--cache-type-k / --cache-type-v, common/arg.cpp), as llama.cpp spells them.
LLAMACPP_KV_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
#: llama.cpp's physical batch (-ub / n_ubatch) default (common/common.h).
LLAMACPP_UBATCH = 512
DATASET_FORMATS = ("arrow", "numpy", "mmap", "python")
CHECKPOINT_DTYPES = ("fp32", "fp16", "bf16")

#: Largest values accepted; anything above is a typo, not a workload.
MAX_MICRO_BATCH = 65_536
MAX_SEQ_LEN = 16 * 2**20
MAX_GPUS = 65_536
#: The smallest gpu_memory_utilization read: a billionth (under one byte of a 1 GiB card below it), which
#: keeps vLLM's need, budget / utilization, a size floats can hold.
MIN_GPU_MEMORY_UTILIZATION = 1e-9

#: Optimizers DeepSpeed can run offloaded to the CPU (deepspeed.ops.adam.DeepSpeedCPUAdam,
#: deepspeed.ops.lion.DeepSpeedCPULion; DeepSpeed ZeRO-Offload docs).
OFFLOAD_OPTIMIZERS = ("adamw", "lion")

TRAIN_KEYS = (
    "method", "recipe", "optimizer", "micro_batch", "seq_len", "grad_accum", "gpus", "gpus_per_node", "tp",
    "zero", "offload_optimizer", "offload_params", "checkpointing", "attention", "lora_rank", "lora_targets",
    "double_quant", "prepare_kbit_training", "adapter_dtype", "lora_dropout", "use_dora", "load_in_8bit",
    "use_reentrant", "dataset_tokens", "epochs", "framework", "fsdp_version", "loss_chunks", "fused_linear_loss",
    "offload_activations", "optimizer_in_backward", "bnb_version", "compile", "load_in_4bit", "torch_dtype", "dtype",
    "fsdp_wrap",
    "framework_version", "use_cache", "checkpoint_wrapper", "document_tokens",
)
#: How PyTorch FSDP wraps a LoRA / QLoRA model into units: 'blocks' (each decoder block one unit, its
#: frozen base and its adapters together: LitGPT's ``auto_wrap_policy={Block}``, a plain
#: ``transformer_auto_wrap_policy``) or 'separate' (the adapters in units of their own: peft's
#: ``fsdp_auto_wrap_policy``, which the Transformers Trainer applies to a peft model).
FSDP_WRAPS = ("blocks", "separate")
INFER_KEYS = (
    "weights", "group_size", "kv_dtype", "context", "concurrency", "tp", "engine", "gpu_memory_utilization",
    "max_num_batched_tokens", "max_num_seqs", "attention", "sliding_window", "gpus_per_node", "tokens_per_request",
    "requests_per_hour", "gpu_layers", "flash_attention", "kv_dtype_v", "imatrix", "split_mode", "mla_kv_layout",
    "engine_version", "enable_lora", "max_loras", "max_lora_rank", "max_cpu_loras", "double_quant", "quantize_head",
)
#: Inference keys only engine vllm reads: its LoRA serving (``vllm serve --enable-lora --max-loras N
#: --max-lora-rank R --max-cpu-loras M``; planner.memory.vllm_lora).
VLLM_LORA_KEYS = ("enable_lora", "max_loras", "max_lora_rank", "max_cpu_loras")
#: Inference keys only engine llama.cpp reads.
LLAMACPP_KEYS = ("gpu_layers", "flash_attention", "kv_dtype_v", "imatrix", "split_mode", "mla_kv_layout")
#: llama.cpp's two KV layouts of an MLA model (DeepSeek-V2/V3), by the GGUF's metadata: 'latent' (the
#: GGUF has deepseek2.attention.key_length_mla: llama.cpp's MLA path caches kv_lora_rank +
#: qk_rope_head_dim values) or 'per_head' (an older GGUF: K and V per head); planner.memory.llamacpp.
MLA_KV_LAYOUTS = ("latent", "per_head")
#: llama.cpp's --split-mode values: 'layer' (the default: whole layers per GPU), 'row' (each
#: matrix's rows over the GPUs; not modelled, refused), 'none' (one GPU).
LLAMACPP_SPLIT_MODES = ("layer", "row", "none")
HOST_KEYS = ("dataloader_workers", "dataset_size", "dataset_format", "checkpoint_dtype", "low_cpu_mem_usage",
             "pin_memory")
#: The load dtype's keys (training; an inference workload's ``weights`` is its load dtype).
LOAD_DTYPE_KEYS = ("torch_dtype", "dtype")
#: The dtype ``from_pretrained`` loads the model in, spelled as Transformers spells it (its
#: ``torch_dtype`` argument, renamed ``dtype`` in Transformers 4.56 and 5): the name -> the planner's
#: dtype. "auto" takes the checkpoint's dtype (the config's ``torch_dtype``).
LOAD_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "auto": "auto"}
COMMON_KEYS = ("name", "model", "task", "notes", "hours_per_month", "tokens_per_month")


@dataclass(frozen=True)
class Training:
    """Options of a training workload.

    Attributes:
        method: 'full' fine-tune, 'lora' (16-bit frozen base, or LLM.int8 with ``load_in_8bit``),
            'qlora' (NF4 frozen base) or 'adapter' (LitGPT's LLaMA-Adapter: a learned prefix and a
            gate per head in the attention of every layer from the third on, over a frozen base,
            NF4 with ``load_in_4bit``; planner.memory.litgpt_adapter.adapter_layer_saved_tensors).
        recipe: a name in :data:`planner.workload.recipes.RECIPES`.
        optimizer: a name in :data:`planner.workload.recipes.OPTIMIZERS`.
        micro_batch: sequences per GPU per forward pass (b).
        seq_len: tokens per sequence (s).
        grad_accum: micro-batches per optimizer step (time; memory only through the gradients kept between them).
        gpus: data-parallel GPUs (N) times tensor-parallel GPUs (t) in total.
        tp: tensor-parallel degree t (Megatron-style, with sequence parallelism).
        zero: ZeRO stage 0-3 over the N = gpus / tp data-parallel ranks.
        offload_optimizer: optimizer states and fp32 master weights in host RAM (ZeRO-Offload).
        offload_params: parameters in host RAM (ZeRO-Infinity; stage 3 only).
        checkpointing: 'none' or 'full' activation recomputation.
        use_reentrant: full checkpointing runs torch's reentrant variant (``use_reentrant=True``: the
            forward under ``no_grad``, no autograd graph kept) rather than Transformers' default
            non-reentrant one (saved-tensor hooks over a kept graph). The memory model differs only
            where a custom autograd Function keeps tensors on its ctx (an 8-bit base's inputs), which
            non-reentrant checkpointing cannot drop. peft's ``prepare_model_for_kbit_training``,
            called without ``gradient_checkpointing_kwargs``, passes none to Transformers, and torch
            then falls back to reentrant (torch/utils/checkpoint.py, ``use_reentrant=None``).
        attention: 'eager' stores the score matrices; 'sdpa'/'flash' do not.
        lora_rank: r for LoRA/QLoRA adapters.
        lora_targets: module names adapted, as the Transformers code names them, or 'all-linear'.
        double_quant: QLoRA double quantization of the NF4 constants.
        load_in_8bit: LoRA only: the frozen base is loaded by bitsandbytes in LLM.int8 (Transformers
            ``BitsAndBytesConfig(load_in_8bit=True)``; Dettmers et al. 2022, "LLM.int8(): 8-bit
            Matrix Multiplication for Transformers at Scale", sec. 3): int8 linear weights with one
            fp32 scale per output row, the rest 16-bit. Each 8-bit linear keeps its input for
            backward (bitsandbytes ``MatMul8bitLt``), unlike a frozen ``nn.Linear``.
        prepare_kbit_training: QLoRA and 8-bit LoRA only: the training script calls peft's
            ``prepare_model_for_kbit_training`` (the peft QLoRA guide, the QLoRA paper's qlora.py and
            TRL's SFTTrainer of 2023 do; TRL's current SFTTrainer does not, hence default False).
            It casts every 16-bit parameter that is
            not NF4 (embeddings, output head, norms, biases) to fp32, so the embedding output, the
            residual stream and the outputs of the 4-bit linears (bitsandbytes casts them back to
            the input dtype) are fp32 as well. Source: peft ``utils/other.py``
            (``prepare_model_for_kbit_training``: "cast all non INT8 parameters to fp32");
            bitsandbytes ``Linear4bit.forward`` (``.to(inp_dtype)``).
        lora_dropout: peft's ``lora_dropout`` (default 0.0, peft's): above 0 each adapted module
            keeps its own dropout output and mask for backward.
        use_dora: peft's ``LoraConfig(use_dora=True)``: DoRA (Liu et al. 2024, "DoRA:
            Weight-Decomposed Low-Rank Adaptation", sec. 4) adds a trainable magnitude per output
            feature of each adapted module and recomputes the adapted weight's column norms in every
            forward (planner.memory.dora.dora_saved_tensors, dora_temporaries).
        adapter_dtype: dtype of LoRA adapters, their gradients and (torch optimizers) their
            states: 'fp32' is peft's default (``autocast_adapter_dtype=True``); the QLoRA
            paper's qlora.py casts adapters to 'bf16'.
        dataset_tokens, epochs: for time and cost estimates (tokens seen = dataset_tokens x epochs).
        framework: the training stack, one of :data:`planner.workload.frameworks.FRAMEWORKS`: whose
            model code, loss and sharding run the step, and the defaults of the levers below.
        fsdp_version: 1 or 2 for a framework that shards with PyTorch FSDP (its default, or the one
            asked), 0 for the others (DeepSpeed ZeRO, or DDP only). It shards only with ``zero`` 2 or 3
            (``SHARD_GRAD_OP``, ``FULL_SHARD``; the :attr:`fsdp` property). FSDP1 keeps flat parameters
            per wrapped unit (``FullyShardedDataParallel``), FSDP2 per-parameter DTensor shards
            (``fully_shard``).
        loss_chunks: the logits and the fp32 loss terms are computed in this many chunks along the
            sequence (torchtune's ``CEWithChunkedOutputLoss``; LitGPT's 128-token head chunks); 0 or 1:
            unchunked.
        fused_linear_loss: the output head and the cross-entropy run as one fused, chunked kernel
            that never materialises the full logits (Liger's ``LigerFusedLinearCrossEntropyLoss``).
        offload_activations: the tensors saved for backward move to pinned host RAM during forward
            and come back during backward (torchtune ``enable_activation_offloading``; PyTorch
            ``torch.autograd.graph.save_on_cpu``; Unsloth's offloaded gradient checkpointing).
        optimizer_in_backward: each parameter is stepped and its gradient freed as soon as the
            gradient is complete (torchtune ``optimizer_in_bwd``: a post-accumulate-grad hook per
            parameter); no full set of gradients exists at once.
        bnb_version: the bitsandbytes release (before 0.43.2 each 4-bit linear keeps its input for
            backward, bitsandbytes PR 1270).
        compile: the model runs under ``torch.compile``, whose partitioner may save less for backward
            than eager code does; the estimate then is an upper bound of the activations (a note).
        load_in_4bit: method 'adapter' only: LitGPT's ``--quantize bnb.nf4`` (``bnb.nf4-dq`` with
            ``double_quant``): the frozen base in bitsandbytes NF4, as QLoRA's.
        fsdp_wrap: :data:`FSDP_WRAPS`: how FSDP's units hold a LoRA model's frozen base and adapters
            (framework litgpt: 'blocks', else 'separate'). Under FSDP1 with ``use_orig_params=True`` a unit
            that mixes them makes one FlatParameter that requires grad, and its whole flat gradient
            exists (planner.memory.states.fsdp_state_components).
        framework_version: the framework's release (for deepspeed and fsdp the Transformers release),
            as written; None: the current release modelled (planner.workload.releases.FRAMEWORK_RELEASES,
            whose changes switch the mechanisms that changed between releases).
        use_cache: the Transformers model returns every layer's K and V from its training forward (its
            config's ``use_cache``, True for Llama, unless the script passes ``use_cache=False``);
            frameworks transformers, deepspeed and fsdp only. Where that is memory of its own, by release,
            attention and checkpointing: planner.memory.train_cache.
        checkpoint_wrapper: ``checkpointing: full`` is applied by wrapping each decoder layer (torch's
            ``checkpoint_wrapper``, e.g. FSDP's ``apply_activation_checkpointing`` as llama-recipes does),
            not by Transformers' ``gradient_checkpointing_enable``: the model does not know of it and keeps
            ``use_cache`` on.
        document_tokens: each sequence is packed from documents of this many tokens on average, and the
            attention kernel attends within each document only (Megatron / NeMo packed SFT and PEFT with
            cu_seqlens; flash-attn's varlen kernel, as Transformers' DataCollatorWithFlattening feeds it;
            torchtune's block mask under FlexAttention): attention spans a document, not ``seq_len``. Time
            only (planner.speed.training); None: one document per sequence. Eager attention computes the
            whole masked matrix, so it is timed at ``seq_len`` whatever this says.
    """

    method: str = "full"
    recipe: str = "mixed-bf16"
    optimizer: str = "adamw"
    micro_batch: int = 1
    seq_len: int = 2048
    grad_accum: int = 1
    gpus: int = 1
    tp: int = 1
    zero: int = 0
    offload_optimizer: bool = False
    offload_params: bool = False
    checkpointing: str = "none"
    attention: str = "sdpa"
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = ()
    double_quant: bool = True
    adapter_dtype: str = "fp32"
    dataset_tokens: int | None = None
    epochs: float = 1.0
    prepare_kbit_training: bool = False
    lora_dropout: float = 0.0
    use_dora: bool = False
    load_in_8bit: bool = False
    use_reentrant: bool = False
    framework: str = "transformers"
    fsdp_version: int = 0
    loss_chunks: int = 0
    fused_linear_loss: bool = False
    offload_activations: bool = False
    optimizer_in_backward: bool = False
    bnb_version: str = CURRENT_BNB_VERSION
    compile: bool = False
    load_in_4bit: bool = False
    fsdp_wrap: str = "separate"
    framework_version: str | None = None
    use_cache: bool = False
    checkpoint_wrapper: bool = False
    document_tokens: int | None = None

    @property
    def fsdp(self) -> int:
        """The FSDP version sharding the parameters (1 or 2), or 0 (DeepSpeed ZeRO, or no sharding)."""
        return self.fsdp_version if self.zero >= 2 else 0

    @property
    def bnb_base(self) -> bool:
        """The frozen base is a bitsandbytes 4-bit or 8-bit model (torchtune's QLoRA is torchao's NF4)."""
        return bool(self.quantized_base) and self.framework != "torchtune"

    @property
    def bnb_keeps_4bit_inputs(self) -> bool:
        """bitsandbytes 4-bit linears keep their inputs for backward (bitsandbytes before 0.43.2)."""
        return self.quantized_base == "nf4" and self.bnb_base and bnb_keeps_4bit_inputs(self.bnb_version)

    @property
    def data_parallel(self) -> int:
        """N: data-parallel ranks (gpus / tp)."""
        return self.gpus // self.tp

    @property
    def method_label(self) -> str:
        """The method as reports name it: 'full', 'lora', 'lora (LLM.int8 base)' or 'qlora', with
        ' + DoRA' for peft's DoRA."""
        m = ("lora (LLM.int8 base)" if self.load_in_8bit else "adapter (NF4 base)" if self.load_in_4bit else
             self.method)
        return m + (" + DoRA" if self.use_dora else "")

    @property
    def quantized_base(self) -> str:
        """The bitsandbytes format of the frozen base: 'nf4' (QLoRA), 'int8' (LoRA with
        ``load_in_8bit``), or '' (a 16/32-bit base, or full fine-tuning)."""
        if self.method == "qlora" or self.load_in_4bit:
            return "nf4"
        return "int8" if self.load_in_8bit else ""


@dataclass(frozen=True)
class Inference:
    """Options of an inference (serving) workload.

    Attributes:
        weights: weight format, one of :data:`WEIGHT_FORMATS`.
        group_size: quantization group size for int4 GPTQ/AWQ (values per scale).
        kv_dtype: KV cache dtype.
        context: tokens per sequence held in the KV cache (prompt + generated).
        concurrency: sequences served at the same time.
        tp: tensor-parallel degree t (must divide the attention heads); engine llama.cpp: the GPUs one
            replica splits its layers over (--split-mode layer), not tensor parallelism.
        engine: 'hf' (Transformers generate) or 'vllm' (PagedAttention engine). A workload that
            names none is served by vLLM when its concurrency is above 1, else by Transformers
            (:func:`default_engine`).
        engine_defaulted: the reader chose ``engine`` (the workload names none); outputs say so
            and how to pin it.
        gpu_memory_utilization: vLLM's fraction of the card it may use (default 0.9).
        max_num_batched_tokens: tokens the engine prefills in one forward pass (chunked prefill);
            None means the whole prompt of every sequence at once (vLLM's KV budget then uses
            ``vllm serve``'s default for the card, planner.memory.vllm). With engine hf it is
            Transformers' ``GenerationConfig(prefill_chunk_size=max_num_batched_tokens / concurrency)``.
        max_num_seqs: vLLM's cap on sequences per step; its start-up profile samples that many
            rows of logits (None: ``vllm serve``'s default for the card).
        attention: 'eager' materialises the score matrices during prefill.
        sliding_window: honour the model's sliding window in the KV cache.
        replicas: copies of the workload, each on its own tp GPUs and serving ``concurrency``
            sequences (``gpus: N`` is N / tp replicas). The per-GPU need is one replica's; host RAM
            counts the replicas on each machine.
        scheme: how the checkpoint stores its quantized weights (planner.model.quantization) when the
            weights are sized as the checkpoint declares them: compressed-tensors, or fp8 with
            block scales (DeepSeek-V3); None otherwise.
        keep: the modules the checkpoint's quantization_config leaves 16-bit (AWQ, FP8, MXFP4
            ``modules_to_not_convert``, bitsandbytes ``llm_int8_skip_modules``, GPTQ
            ``modules_in_block_to_quantize``) when the weights are sized as it declares them; None otherwise.
        gpu_layers: engine llama.cpp: ``n_gpu_layers`` (``-ngl``), layers on the GPU counting the
            output layer, 0 to n_layer + 1 (None: all of them). planner.memory.llamacpp.
        flash_attention: engine llama.cpp: ``-fa on`` (the default ``auto`` turns it on on CUDA).
        kv_dtype_v: engine llama.cpp: the V cache type when it differs from ``kv_dtype`` (K).
        engine_version: the engine release sized (planner.workload.engine_releases); None: the current
            release modelled, which the outputs state.
        double_quant: weights nf4: bitsandbytes double quantization of the constants (default true;
            LitGPT's ``--quantize bnb.nf4-dq``, false for ``bnb.nf4``).
        quantize_head: weights nf4 or int8: the output head is quantized too (LitGPT generate:
            Lightning's BitsandbytesPrecision converts every ``nn.Linear``; Transformers keeps it 16-bit).
        enable_lora, max_loras, max_lora_rank, max_cpu_loras: engine vllm: LoRA serving (vLLM's
            defaults 1 slot, rank 16, max_cpu_loras = max_loras); planner.memory.vllm_lora.
        prompt_tokens: the prompt of the request the cost stage times and prices, set from a
            scenario workload's ``slo: {prompt_tokens}`` (planner.solve.slo); None: the rest of the
            context after ``tokens_per_request`` (not a workload-file key).
        imatrix: engine llama.cpp: the GGUF was quantized with an importance matrix (None: the
            presets that need one, planner.model.gguf.IMATRIX_REQUIRED); False is refused for a preset
            llama-quantize makes only with one (planner.model.gguf.imatrix_required).

    With engine llama.cpp, ``weights`` is a GGUF preset (Q4_K_M, ...), ``kv_dtype`` a llama.cpp
    cache type (f16, q8_0, ...), ``max_num_batched_tokens`` the physical batch ``n_ubatch`` and
    ``concurrency`` the server's slots (``-np``).
    """

    weights: str = "bf16"
    group_size: int = 128
    kv_dtype: str = "bf16"
    context: int = 4096
    concurrency: int = 1
    tp: int = 1
    engine: str = "hf"
    gpu_memory_utilization: float = 0.9
    max_num_batched_tokens: int | None = None
    attention: str = "sdpa"
    sliding_window: bool = True
    tokens_per_request: int | None = None
    requests_per_hour: float | None = None
    max_num_seqs: int | None = None
    replicas: int = 1
    gpu_layers: int | None = None
    flash_attention: bool = True
    kv_dtype_v: str | None = None
    imatrix: bool | None = None
    mla_kv_layout: str | None = None  # engine llama.cpp, MLA models: 'latent' or 'per_head' (None: latent)
    scheme: WeightScheme | None = None  # the checkpoint's storage scheme (compressed-tensors, block fp8)
    keep: KeptModules | None = None  # the modules the checkpoint leaves 16-bit (AWQ, GPTQ, bnb, fp8, mxfp4)
    engine_defaulted: bool = False
    engine_version: str | None = None
    enable_lora: bool = False
    max_loras: int = 1
    max_lora_rank: int = 16
    max_cpu_loras: int | None = None
    double_quant: bool = True
    quantize_head: bool = False
    prompt_tokens: int | None = None  # a scenario's slo: prompt_tokens: the request priced (None: the rest of the context)


@dataclass(frozen=True)
class HostOptions:
    """Options that only change host RAM.

    Attributes:
        dataloader_workers: DataLoader ``num_workers`` per GPU process.
        dataset_size: bytes of the dataset object each worker would hold if copied.
        dataset_format: 'arrow', 'numpy', 'mmap' (shared between workers through the page
            cache) or 'python' (Python objects, copied into every worker).
        checkpoint_dtype: dtype of the checkpoint on disk (default: the config's torch_dtype).
        low_cpu_mem_usage: Transformers loads weights straight into the model (default true
            in current releases) instead of building a randomly initialised model first.
        pin_memory: DataLoader pinned host buffers.
        load_dtype: the dtype ``from_pretrained`` builds the model in (planner spelling 'fp32',
            'fp16', 'bf16'): a training workload's ``torch_dtype`` or ``dtype`` key, an inference
            workload's 16/32-bit ``weights``; None: the checkpoint's (the config's ``torch_dtype``,
            as ``dtype="auto"``).
    """

    dataloader_workers: int = 2
    dataset_size: int = 0
    dataset_format: str = "arrow"
    checkpoint_dtype: str | None = None
    low_cpu_mem_usage: bool = True
    pin_memory: bool = True
    load_dtype: str | None = None


#: The words gpu_layers (--gpu-layers) takes besides a count, in lower case only ('ALL' is refused with a hint, as
#: 'fit --concurrency MAX' is): all layers, the most that fit a card (max; auto in a scenario lists every count).
LAYER_WORDS = ("all", "max", "auto")

#: Suffixes a token count may carry ("200M tokens a month"): SI multiples, as token counts are written, keyed in
#: lower case (the exponent hint reads any case). A count is read only with the suffix as :data:`TOKEN_SUFFIX_SPELLING`
#: writes it, right after the digits ('200M'); '200m', '2b', '200 M' and '2G' are refused with that spelling
#: (h15b #3: a size unit in the wrong case, '10 gib', is refused the same way; m is milli in SI).
TOKEN_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}

#: The one spelling of each suffix (docs/scenarios.md: k, M, B, T); G is written B.
TOKEN_SUFFIX_SPELLING = {"k": "k", "m": "M", "b": "B", "g": "B", "t": "T"}

def parse_token_count(value: Any) -> float | None:
    """A token count written as a number (200000000; a float 2e8 from the API or a YAML number) or with a suffix
    right after the digits ('200M', '1.5B', '200M tokens', '50k'); None when ``value`` is neither, or is written with
    ',' or '_' ('1,5M', which may mean 1.5M or 15M: :func:`read_token_count` says so), a blank at an end or before
    the suffix ('200 M') or a suffix in another case ('200m', '2b': :func:`token_text_problem` says so). Suffixes
    are SI, as docs/scenarios.md writes them: k 1e3, M 1e6, B 1e9, T 1e12."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and abs(value) > 2**1023:  # no float holds it (10**309): beyond every range
        return math.inf if value > 0 else -math.inf
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str) or not value.isascii():  # float() would read '１０' (digits of other scripts)
        return None
    if "," in value or "_" in value:  # '1,5M' (a decimal comma?), '200_000_000': read_token_count's hint
        return None
    if value != value.strip():  # ' 200M': token_text_problem says where the blank is
        return None
    text = value
    for tail in (" tokens a month", " tokens per month", " tokens/month", " tokens", "tokens"):
        if text.lower().endswith(tail):
            text = text[: -len(tail)]
            break
    # digits and a point, as in a size (no '1e8', '.1', '+5'), then a suffix as written in TOKEN_SUFFIX_SPELLING
    m = re.fullmatch(r"(-?[0-9]+(?:\.[0-9]+)?)([kMBT]?)", text)
    if not m:
        return None
    return float(m[1]) * (TOKEN_SUFFIXES[m[2].lower()] if m[2] else 1.0)


def token_text_problem(value: Any, spell: Any) -> tuple[str, str] | None:
    """Why a text token count that :func:`parse_token_count` does not read is written unlike a size's number
    (planner.core.units.parse_size: '1e1 GiB', '.5 GiB', '24. GiB', '+24 GiB' are refused): an exponent
    ('1e8', '1e2M', '1e-3B'; the hint in digits with a suffix, '100M'), no digit before or after the point
    ('.1B', '5.M') or a leading '+'; as (problem, hint), ``spell`` writing the key with a value; None otherwise."""
    from decimal import Decimal, InvalidOperation

    if not isinstance(value, str) or not value.isascii():
        return None
    m = re.fullmatch(r"\s*([-+]?)([0-9]*\.?[0-9]*)(?:[eE]([-+]?[0-9]{1,4}))?\s*([kKmMbBgGtT]?)(\s*tokens.*)?",
                     value, re.S)
    if not m or not any(c.isdigit() for c in m.group(2)):
        return _token_spelling_problem(value, spell)
    sign, number, exponent, suffix, tail = m.groups()
    if exponent is not None:
        try:
            count = Decimal(f"{number}e{exponent}") * Decimal(f"{TOKEN_SUFFIXES.get(suffix.lower(), 1):.0f}")
        except InvalidOperation:
            return None
        shown = token_spelling(count) if Decimal(1) <= count <= Decimal(10) ** 16 else None
        return (f"{value.strip()!r} writes its number with an exponent ({number}e{exponent})", f"Write it in digits, with k, M, B or T: {spell(shown)}." if shown else
                f"Write it in digits, with k, M, B or T, e.g. {spell('200M')}.")
    fixed = f"{'0' if number.startswith('.') else ''}{number.rstrip('.')}{suffix}"
    if number.startswith(".") or number.endswith("."):
        return (f"{value.strip()!r} has no digit {'before' if number.startswith('.') else 'after'} the point",
                f"Write a digit on both sides of the point, or none: {spell(fixed)}.")
    if sign == "+":
        return f"{value.strip()!r} starts with '+'", f"Write the count without it: {spell(fixed)}."
    return _token_spelling_problem(value, spell)


def _token_spelling_problem(value: str, spell: Any) -> tuple[str, str] | None:
    """A count :func:`parse_token_count` would read but for its spelling: a blank at either end (' 200M'), a blank
    between the number and its suffix ('200 M') or a suffix not written as :data:`TOKEN_SUFFIX_SPELLING` writes it
    ('200m', '2b', '1t', '2G'); as (problem, hint), the hint the count as it is read ('200M'); None otherwise."""
    m = re.fullmatch(r"(\s*)(-?[0-9]+(?:\.[0-9]+)?)(\s*)([kKmMbBgGtT]?)((?:\s*tokens.*)?)(\s*)", value, re.S | re.I)
    if not m:
        return None
    lead, number, gap, suffix, _tail, end = m.groups()
    fixed = number + (TOKEN_SUFFIX_SPELLING[suffix.lower()] if suffix else "")
    if lead or end:
        return (f"{value!r} has a blank at its {'start' if lead else 'end'}",
                f"Write the count without blanks: {spell(fixed)}.")
    if gap and suffix:
        return (f"{value!r} has a blank between the number and {suffix!r}",
                f"Write the suffix right after the digits: {spell(fixed)} (k, M, B, T).")
    if suffix and suffix != TOKEN_SUFFIX_SPELLING[suffix.lower()]:
        return (f"{value!r} writes the suffix {suffix!r}, not {TOKEN_SUFFIX_SPELLING[suffix.lower()]!r}"
                + (" (m is milli in SI)" if suffix == "m" else ""),
                f"Token counts write k, M, B or T: {spell(fixed)}.")
    return None


def token_spelling(count: Any) -> str:
    """A token count (a decimal.Decimal) in digits with the largest SI suffix that keeps at most three decimals
    (100000000 -> '100M', 1.5e9 -> '1.5B', 123456789 -> '123456789')."""
    from decimal import Decimal

    for suffix, mult in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("k", 10**3)):
        q = count / mult
        if q >= 1 and q == q.quantize(Decimal("0.001")):
            return f"{q.normalize():f}{suffix}"
    return f"{count.normalize():f}"


def read_token_count(entry: Any, key: str, example: str) -> float:
    """The token count of key ``key`` of a workload entry (:func:`parse_token_count`), present.

    Args:
        entry: a planner.core.fields.Entry holding ``key``.
        example: how the hint writes a value, e.g. '2B (or 2000000000, 2e9'.

    Raises:
        InputError: neither a number nor a number with an SI suffix (or NaN); a number written with ',' or
            '_' (planner.core.units.separator_problem: the hint gives the readings).
    """
    entry.refuse_empty(key, "a token count")
    raw = entry.raw(key)
    count = parse_token_count(raw)
    # a bare number ('100,000') is a whole count: its readings are 100 and 100000, never '100.000' (h17b #4)
    bare = isinstance(raw, str) and re.fullmatch(r"\s*[0-9][0-9,]*\s*", raw) is not None
    separated = separator_problem(raw, lambda t: f"{key}: {t}", whole=bare)
    if separated is not None:  # '1,5M': 1.5M or 15M? planner reads neither
        raise entry.error(separated[0], key, separated[1])
    dotted = dotted_thousands(entry.written(key) if isinstance(raw, float) else raw, lambda t: f"{key}: {t}",
                              whole=True)
    if dotted is not None:  # 'dataset_tokens: 100.000': 100, or 100000 with a dot separating thousands
        raise entry.error(dotted[0], key, dotted[1])
    problem = token_text_problem(raw, lambda t: f"{key}: {t}") if count is None else None
    if problem is not None:  # '1e8', '.1B', '+100M': written as no size's number is
        raise entry.error(problem[0], key, problem[1])
    if count is None or count != count:
        raise entry.error(f"{shown_number(raw)} is not a token count", key,
                          ascii_digits_hint(raw, lambda n: f"{key}: {n}")
                          or f"Write a number of tokens, e.g. {key}: {example}; k, M, B, T).")
    return count
