"""Training stacks: the defaults each framework's own recipes use for the memory levers.

A *framework* names the code that runs the training step: whose model implementation (which
tensors each layer saves for backward), whose loss, how parameters are sharded over GPUs, and the
defaults its recipes set for the levers the planner models (loss chunking, activation offloading,
optimizer step in backward, paged optimizers, FSDP's version). Every lever can also be set on its
own (a workload key, a ``planner estimate`` option, a scenario list or ``auto``); the framework only
supplies the value a key left out takes. Every estimate names the framework and the lever settings
it assumed (:func:`stack_settings`).

Sources, per framework (each default below cites its file):

- ``transformers``: Hugging Face Transformers' modeling code and ``Trainer`` with peft, the stack
  the planner has always sized (``planner/memory``). ZeRO stages 1-3 are DeepSpeed's.
- ``deepspeed``: the same Transformers model under DeepSpeed's engine (``deepspeed.initialize`` or
  the Trainer's ``deepspeed=`` config); ``zero`` is DeepSpeed's ZeRO stage.
- ``fsdp``: PyTorch FSDP over a Transformers model, as accelerate / the Trainer set it up
  (``FullyShardedDataParallelPlugin``: ``fsdp_version`` 1, ``FULL_SHARD``, ``use_orig_params=True``,
  decoder layers as units; gradient accumulation under ``no_sync``). ``zero: 3`` is ``FULL_SHARD``,
  ``zero: 2`` ``SHARD_GRAD_OP``, ``zero: 0`` ``NO_SHARD``; PyTorch FSDP docs
  (pytorch.org/docs/stable/fsdp.html) and FSDP2 ``fully_shard`` docs.
- ``torchtune``: torchtune's recipes and models (github.com/pytorch/torchtune, commit 1814feb17 of
  2024-11-18, the README's memory table): ``dtype: bf16`` (weights, gradients, optimizer states in
  bf16), ``torch.optim.AdamW`` with ``fused: True``, ``enable_activation_checkpointing: True``,
  ``CEWithChunkedOutputLoss`` (8 chunks), LoRA adapters in the model dtype, FSDP2 ``fully_shard`` in
  the distributed recipes; the single-device full fine-tune configs
  (``recipes/configs/llama3_2/3B_full_single_device.yaml``, ``llama3_1/8B_full_single_device.yaml``)
  use ``bitsandbytes.optim.PagedAdamW8bit`` with ``optimizer_in_bwd: True``.
- ``litgpt``: LitGPT's finetune scripts and model (github.com/Lightning-AI/litgpt, commit 00af8b0d of
  2024-09-27, ``litgpt/finetune/lora.py``, ``full.py``, ``litgpt/model.py``, ``litgpt/lora.py``):
  ``precision: bf16-true`` (everything bf16), ``torch.optim.AdamW`` (``bnb.optim.PagedAdamW`` with a
  quantized base, ``instantiate_bnb_optimizer``), the output head computed in chunks of 128 tokens
  and cross-entropy per chunk in bf16 (``lm_head_chunk_size=128``, ``chunked_cross_entropy``), no
  activation checkpointing on one GPU, Lightning's ``FSDPStrategy`` (FSDP1, ``use_orig_params=True``,
  decoder blocks as units with ``activation_checkpointing_policy={Block}``, gradient accumulation
  under ``no_backward_sync``) on several, bitsandbytes 0.42.0 (``pyproject.toml``), LoRA defaults
  r 8, alpha 16, dropout 0.05 on the query and value projections; ``quantize`` converts every
  ``nn.Linear``, the output head included (Lightning's ``BitsandbytesPrecision``).
- ``unsloth``: Unsloth's patched Transformers models (github.com/unslothai/unsloth, commit 015bdef,
  ``unsloth/models/llama.py`` ``get_peft_model``: r 16, alpha 16, dropout 0 on q/k/v/o and the MLP,
  ``use_gradient_checkpointing="unsloth"``: checkpointed layer inputs offloaded to host RAM;
  ``unsloth/kernels/cross_entropy_loss.py`` ``Fast_CrossEntropyLoss``: logits and an fp32
  log-sum-exp saved, the gradient written into the logits in place), ``optim="adamw_8bit"`` in its
  notebooks.

This module keeps no state and does no work at import time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planner.model.layout import FUSED_QKV_MODULES
from planner.workload.releases import TORCHTUNE_FSDP2, framework_has

FRAMEWORKS = ("transformers", "deepspeed", "fsdp", "torchtune", "litgpt", "unsloth")
#: FSDP versions: 1 (``FullyShardedDataParallel``, flat parameters) and 2 (``fully_shard``,
#: per-parameter DTensor shards).
FSDP_VERSIONS = (1, 2)

#: The bitsandbytes release assumed when a workload names none (the one the validation grid runs).
CURRENT_BNB_VERSION = "0.50.2"
#: bitsandbytes PR 1270 (commit 9e75374, 2024-07-16, released in 0.43.2): ``MatMul4Bit.forward``
#: kept ``ctx.tensors = (A, B)``, the 4-bit linear's input on its autograd ctx, although only the
#: input gradient is computed; from 0.43.2 on it keeps ``(None, B)`` (bitsandbytes CHANGELOG.md,
#: 0.43.2: "activations being unnecessary for frozen parameters, yet the memory for them was still
#: erroneously allocated").
BNB_4BIT_INPUT_FIX = (0, 43, 2)
#: The first bitsandbytes release with 4-bit layers (Linear4bit, NF4 and FP4, for QLoRA): 0.39.0, May 2023
#: (bitsandbytes CHANGELOG.md 0.39.0, "4-bit matrix multiplication for Float4 and NormalFloat4 data types";
#: the Hugging Face blog "Making LLMs even more accessible with bitsandbytes, 4-bit quantization and QLoRA",
#: 2023-05-24, asks for bitsandbytes 0.39.0 or later).
BNB_FIRST_4BIT = (0, 39, 0)

#: LitGPT computes the output head in chunks of this many tokens per sequence while fine-tuning
#: with adapters (``model(input_ids, lm_head_chunk_size=128)``, litgpt/finetune/lora.py).
LITGPT_LM_HEAD_CHUNK = 128
#: torchtune's ``CEWithChunkedOutputLoss(num_output_chunks=8)`` (torchtune/modules/loss/
#: ce_chunked_output_loss.py).
TORCHTUNE_LOSS_CHUNKS = 8
#: torchtune's ``OffloadActivations(max_fwd_stash_size=5)``: the most recent offloaded activations
#: stay on the GPU until their copy to host completes (torchtune/training/_activation_offloading.py).
TORCHTUNE_OFFLOAD_STASH = 5
#: LitGPT's LLaMA-Adapter (litgpt/adapter.py ``Config``, commit 05401183; the same in lit_gpt/adapter.py of
#: 0f021f3a, 2024-01-18, whose resource tables give its memory): a prefix of this many learned
#: tokens (``adapter_prompt_length``) ...
LITGPT_ADAPTER_PROMPT_LENGTH = 10
#: ... in the attention of every layer from this index on (``adapter_start_layer``).
LITGPT_ADAPTER_START_LAYER = 2

#: peft's ``TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`` (src/peft/utils/constants.py, commit 00073fe),
#: for the model types the planner reads: the modules ``LoraConfig(target_modules=None)`` adapts. A model
#: type missing here has no peft default: ``_prepare_adapter_config`` raises "Please specify
#: `target_modules` in `peft_config`" (peft tuners/lora/model.py), and so does the planner.
PEFT_LORA_TARGETS: dict[str, tuple[str, ...]] = {
    "gpt2": ("c_attn",), "gpt_bigcode": ("c_attn",), "bloom": ("query_key_value",),
    "gpt_neox": ("query_key_value",), "falcon": ("query_key_value",), "gptj": ("q_proj", "v_proj"),
    "llama": ("q_proj", "v_proj"), "mistral": ("q_proj", "v_proj"), "mixtral": ("q_proj", "v_proj"),
    "phi": ("q_proj", "v_proj", "fc1", "fc2"), "gemma": ("q_proj", "v_proj"), "gemma2": ("q_proj", "v_proj"),
    "gemma3_text": ("q_proj", "v_proj"), "qwen2": ("q_proj", "v_proj"), "qwen3": ("q_proj", "v_proj"),
}
#: torchtune's LoRA configs (recipes/configs/llama3_2/3B_lora_single_device.yaml, llama3_1/8B_lora*.yaml,
#: 70B_lora.yaml at 1814feb17): ``lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']``,
#: ``apply_lora_to_mlp: True`` (w1, w2, w3: gate, down, up), ``apply_lora_to_output: False``.
TORCHTUNE_LORA_RULE = "torchtune: q, v, output projection and the MLP"
#: LitGPT's finetune/lora.py defaults (litgpt/finetune/lora.py ``setup`` at 00af8b0d; lit-gpt finetune/lora.py
#: at 8641822): ``lora_query=True, lora_key=False, lora_value=True, lora_projection=False, lora_mlp=False,
#: lora_head=False``: the query and value parts of the fused ``attn`` projection (``LoRAQKVLinear``).
LITGPT_LORA_RULE = "litgpt: query and value"


class NoDefaultTargets(ValueError):
    """The framework has no default LoRA targets for the model type (peft raises)."""


def default_lora_targets(name: str, model_type: str, modules: list[str]) -> tuple[str, ...]:
    """The LoRA target modules framework ``name`` adapts when none are given, for a model of
    ``model_type`` whose linear modules (Transformers names) are ``modules``.

    - transformers, deepspeed, fsdp: peft's mapping (:data:`PEFT_LORA_TARGETS`); Falcon and BLOOM
      adapt their fused ``query_key_value``, phi q, v and its MLP's fc1 and fc2.
    - torchtune: its configs' q, v and output projections and the MLP (:data:`TORCHTUNE_LORA_RULE`).
    - litgpt: the query and value of the attention (:data:`LITGPT_LORA_RULE`): ``q_proj`` and
      ``v_proj`` where the Transformers code splits them, else the fused projection, whose adapter
      LitGPT's ``LoRAQKVLinear`` restricts to the query and value parts (planner.memory).
    - unsloth: every linear module (its ``get_peft_model`` default, q/k/v/o and the MLP): 'all-linear'.

    Raises:
        NoDefaultTargets: peft has no default for the model type (transformers, deepspeed, fsdp), or
            the model has no query and value projection the rule could name.
    """
    fw = FRAMEWORK_SPECS[name]
    if fw.lora_targets is not None:
        return fw.lora_targets
    present = set(modules)
    if name == "torchtune":
        want = ("q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
        if all(m in present for m in want):
            return want
        raise NoDefaultTargets(f"torchtune's LoRA configs adapt q_proj, v_proj, output_proj and the MLP, which "
                               f"{model_type} does not have as such")
    if name == "litgpt":
        if "q_proj" in present and "v_proj" in present:
            return ("q_proj", "v_proj")
        fused = [m for m in FUSED_QKV_MODULES if m in present]
        if fused:
            return (fused[0],)
        raise NoDefaultTargets(f"LitGPT's default adapts the query and value of a fused attn projection, which "
                               f"{model_type} does not have")
    if model_type not in PEFT_LORA_TARGETS:
        raise NoDefaultTargets(f"peft has no default LoRA target modules for model type {model_type} (LoraConfig "
                               "without target_modules raises 'Please specify `target_modules` in `peft_config`')")
    return PEFT_LORA_TARGETS[model_type]


#: ASCII digits only (Python's \d and int() read other scripts' digits: '０.43.1' is no release number), no blank
#: around it, and a suffix such as '.dev0', 'rc1' or '+cu121' that is more than its separator.
_VERSION = re.compile(r"^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:[.+-]?[A-Za-z0-9](?:[A-Za-z0-9.+-]*[A-Za-z0-9])?)?$")


@dataclass(frozen=True)
class Framework:
    """What a training framework fixes and what it defaults.

    Attributes:
        name: as workloads spell it.
        what: the stack in words, for reports.
        model_code: whose layer implementation saves the activations: 'transformers', 'torchtune',
            'litgpt' or 'unsloth' (Transformers' layers, with Unsloth's fused LoRA kernels where they
            apply; planner.memory.layer, planner.memory.unsloth).
        loss: whose loss implementation: 'transformers' (``ForCausalLMLoss``: fp32 upcast of the
            whole logits), 'torchtune' (the model's output in ``loss_chunks`` chunks, each upcast to
            fp32 for its cross-entropy; ``del logits`` before backward), 'litgpt' (the head in
            128-token chunks, cross-entropy in the compute dtype, the logits held by the loop
            through backward) or 'unsloth' (a fused kernel over the compute-dtype logits).
        adapter_dtype_is_model: LoRA adapters are created in the model's dtype (torchtune and
            LitGPT cast the whole module) rather than peft's fp32 (``autocast_adapter_dtype``).
        fsdp: parameters are sharded by PyTorch FSDP (not DeepSpeed) when ``zero`` is 2 or 3.
        fsdp_version: the FSDP version its distributed recipes use (0 when it shards with DeepSpeed).
        no_sync_accumulation: gradient accumulation runs the non-final micro-batches under FSDP's
            ``no_sync`` (accelerate's ``accumulate``, Lightning's ``no_backward_sync``), so FSDP keeps
            unsharded gradients between micro-batches (PyTorch FSDP docs, ``no_sync``).
        quantizes_head: a bitsandbytes base quantizes the output head too (Lightning's
            ``BitsandbytesPrecision`` converts every ``nn.Linear``).
        embedding_units_full: a full fine-tune shards the token embedding and the output head as FSDP
            units of their own (torchtune's ``full_finetune_distributed`` configs:
            ``custom_sharded_layers: ['tok_embeddings', 'output']``) instead of in the root unit.
        checkpoint_on_gpus: the default ``checkpointing`` for (one GPU, several GPUs).
        lora_rank, lora_dropout, lora_targets: LoRA defaults of its recipes (lora_targets None: the
            per-model-type rule of :func:`default_lora_targets`, peft's mapping or the framework's
            recipe defaults; ``("all-linear",)``: every linear module).
        source: where these defaults come from.
    """

    name: str
    what: str
    model_code: str
    loss: str
    adapter_dtype_is_model: bool = False
    fsdp: bool = False
    fsdp_version: int = 0
    no_sync_accumulation: bool = False
    quantizes_head: bool = False
    embedding_units_full: bool = False
    checkpoint_on_gpus: tuple[str, str] = ("none", "none")
    lora_rank: int | None = None
    lora_dropout: float | None = None
    lora_targets: tuple[str, ...] | None = None
    source: str = ""


FRAMEWORK_SPECS: dict[str, Framework] = {
    "transformers": Framework(
        "transformers", "Hugging Face Transformers model, Trainer and peft (ZeRO by DeepSpeed)",
        "transformers", "transformers",
        source="transformers modeling_*.py, loss_utils.py ForCausalLMLoss; peft; DeepSpeed ZeRO"),
    "deepspeed": Framework(
        "deepspeed", "Hugging Face Transformers model under DeepSpeed's engine (ZeRO stage as given)",
        "transformers", "transformers",
        source="DeepSpeed deepspeed/runtime/zero (stage_1_and_2.py, stage3.py); transformers integrations/deepspeed.py"),
    "fsdp": Framework(
        "fsdp", "Hugging Face Transformers model under PyTorch FSDP (accelerate's FullyShardedDataParallelPlugin)",
        "transformers", "transformers", fsdp=True, fsdp_version=1, no_sync_accumulation=True,
        source="PyTorch FSDP docs (use_orig_params, no_sync); accelerate FullyShardedDataParallelPlugin "
               "(fsdp_version 1, FULL_SHARD, use_orig_params True, transformer-layer auto wrap)"),
    "torchtune": Framework(
        "torchtune", "torchtune recipes and models (bf16, chunked cross-entropy, activation checkpointing, FSDP2)",
        "torchtune", "torchtune", adapter_dtype_is_model=True, fsdp=True, fsdp_version=2,
        embedding_units_full=True, checkpoint_on_gpus=("full", "full"), lora_dropout=0.0,
        source="torchtune 1814feb17: recipes/*_finetune_*.py, recipes/configs/llama3_2/*.yaml, "
               "torchtune/modules/loss/ce_chunked_output_loss.py, torchtune/training/_activation_offloading.py"),
    "litgpt": Framework(
        "litgpt", "LitGPT finetune scripts and model (bf16-true, 128-token head chunks, FSDP1 on several GPUs)",
        "litgpt", "litgpt", adapter_dtype_is_model=True, fsdp=True, fsdp_version=1, no_sync_accumulation=True,
        quantizes_head=True, checkpoint_on_gpus=("none", "full"), lora_rank=8, lora_dropout=0.05,
        source="litgpt 00af8b0d: litgpt/finetune/lora.py, full.py, litgpt/model.py, litgpt/lora.py, litgpt/utils.py "
               "chunked_cross_entropy; Lightning fabric FSDPStrategy (use_orig_params=True)"),
    "unsloth": Framework(
        "unsloth", "Unsloth (patched Transformers models, offloaded gradient checkpointing, fused cross-entropy)",
        "unsloth", "unsloth", checkpoint_on_gpus=("full", "full"), lora_rank=16, lora_dropout=0.0,
        lora_targets=("all-linear",),
        source="unsloth 015bdef: unsloth/models/llama.py get_peft_model (use_gradient_checkpointing='unsloth'), "
               "unsloth/kernels/cross_entropy_loss.py Fast_CrossEntropyLoss"),
}


def framework(name: str) -> Framework:
    """The :class:`Framework` of a name in :data:`FRAMEWORKS` (KeyError otherwise)."""
    return FRAMEWORK_SPECS[name]


def parse_version(text: str) -> tuple[int, int, int] | None:
    """A release number 'X.Y' or 'X.Y.Z' (a suffix such as '.dev0' or '+cu121' is ignored) as a tuple;
    None when the text is not one, or when its numbers have more digits than any release
    (planner.core.versions.long_release_problem: Python's int() refuses 4,300 and more)."""
    from planner.core.versions import long_release_problem

    if long_release_problem(text) is not None:
        return None
    m = _VERSION.match(str(text))
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def bnb_keeps_4bit_inputs(version: str) -> bool:
    """Whether bitsandbytes ``version`` keeps each 4-bit linear's input for backward
    (before 0.43.2, :data:`BNB_4BIT_INPUT_FIX`)."""
    v = parse_version(version)
    return v is not None and v < BNB_4BIT_INPUT_FIX


@dataclass(frozen=True)
class Defaults:
    """The values a training workload's keys take when left out, for one framework, method and
    GPU count (planner.workload.spec reads every key with these as its default)."""

    recipe: str
    optimizer: str
    checkpointing: str
    zero: int
    fsdp_version: int
    loss_chunks: int
    offload_activations: bool
    optimizer_in_backward: bool
    adapter_dtype: str | None  # None: the recipe's dtype
    lora_rank: int
    lora_dropout: float
    lora_targets: tuple[str, ...] | None  # None: per model type, default_lora_targets


def release_fsdp_version(name: str, release: str | None) -> int:
    """The FSDP version framework ``name``'s own recipes shard with at ``release`` (None: the current one):
    1 for torchtune before 0.3.0 (planner.workload.releases.TORCHTUNE_FSDP2), else the framework's
    :attr:`Framework.fsdp_version` (0 for a framework that does not shard with FSDP)."""
    if name == "torchtune" and not framework_has(name, release, TORCHTUNE_FSDP2):
        return 1
    return FRAMEWORK_SPECS[name].fsdp_version


#: torchtune's stack before 0.3.0 (planner.workload.releases.TORCHTUNE_FSDP2): the distributed recipes
#: wrap the model with FSDP1 and the configs' loss is torch.nn.CrossEntropyLoss over the whole fp32 output
#: (torchtune v0.2.1 recipes/lora_finetune_distributed.py, torchtune/modules/transformer.py).
TORCHTUNE_BEFORE_FSDP2_WHAT = ("torchtune recipes and models (bf16, cross-entropy over the whole fp32 output, "
                               "activation checkpointing, FSDP1)")


def release_what(name: str, release: str | None) -> str:
    """The stack of framework ``name`` at ``release`` (None: the current one), in words:
    :attr:`Framework.what`, except torchtune before 0.3.0 (:data:`TORCHTUNE_BEFORE_FSDP2_WHAT`), whose
    recipes shard with FSDP1 and keep the whole logits."""
    if name == "torchtune" and not framework_has(name, release, TORCHTUNE_FSDP2):
        return TORCHTUNE_BEFORE_FSDP2_WHAT
    return FRAMEWORK_SPECS[name].what


def defaults(name: str, *, method: str, data_parallel: int, seq_len: int, quantized: bool = False,
             release: str | None = None) -> Defaults:
    """The defaults of framework ``name`` at ``release`` (None: the current one modelled,
    planner.workload.releases) for a ``method`` run on ``data_parallel`` ranks (``quantized``: an
    adapter over an NF4 base, LitGPT's ``--quantize``).

    torchtune before 0.3.0 (planner.workload.releases.TORCHTUNE_FSDP2) shards with FSDP1 and its
    configs' loss is ``torch.nn.CrossEntropyLoss`` over the whole output (no loss chunks).

    Sources as in the module docstring: torchtune's single-device full fine-tune configs step a
    paged 8-bit AdamW inside backward, its other configs a fused AdamW; LitGPT steps a paged AdamW
    over a quantized base; Unsloth's notebooks use ``optim="adamw_8bit"``; LitGPT's ``loss_chunks``
    are its 128-token head chunks (``ceil(seq_len / 128)``).
    """
    fw = FRAMEWORK_SPECS[name]
    many = data_parallel > 1
    pure = "pure-bf16"
    recipe = "mixed-bf16" if method == "full" else pure
    optimizer = "adamw"
    opt_in_bwd = False
    chunks = 0
    offload = False
    adapter_dtype = "fp32"
    if name == "torchtune":
        recipe = pure
        optimizer = "adamw-fused"
        chunks = TORCHTUNE_LOSS_CHUNKS
        if method == "full" and not many:
            optimizer, opt_in_bwd = "paged-adamw-8bit", True
    elif name == "litgpt":
        recipe = pure
        optimizer = "paged-adamw" if method == "qlora" or quantized else "adamw"
        chunks = 0 if method == "full" else -(-seq_len // LITGPT_LM_HEAD_CHUNK)
    elif name == "unsloth":
        recipe = pure
        optimizer = "adamw-8bit"
        offload = True
    fsdp_version = release_fsdp_version(name, release)
    if name == "torchtune" and not framework_has(name, release, TORCHTUNE_FSDP2):
        chunks = 0
    if fw.adapter_dtype_is_model:
        adapter_dtype = None
    zero = 3 if fw.fsdp and name != "fsdp" and many else 0
    if name == "fsdp" and many:
        zero = 3
    return Defaults(recipe=recipe, optimizer=optimizer, checkpointing=fw.checkpoint_on_gpus[1 if many else 0],
                    zero=zero, fsdp_version=fsdp_version, loss_chunks=chunks, offload_activations=offload,
                    optimizer_in_backward=opt_in_bwd, adapter_dtype=adapter_dtype,
                    lora_rank=fw.lora_rank or 16, lora_dropout=fw.lora_dropout if fw.lora_dropout is not None else 0.0,
                    lora_targets=fw.lora_targets)
