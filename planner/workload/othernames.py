"""The names other tools give the planner's keys, for the message about an unknown key.

People bring their keys from the tool they run: ``per_device_train_batch_size`` from a Hugging Face
Trainer script, ``batch_size`` from a torchtune config, ``max_model_len`` from ``vllm serve``. The
close matches of a misspelling would guess wrong for these (``batch_size`` is closest to
``dataset_size``), so the readers consult this table first (``Entry.check_keys(explain=...)``,
planner.core.fields) and say whose name it is and what the planner calls it::

    workloads[0].batch_size: unknown key 'batch_size' (the name in torchtune's recipe configs); the
    planner's key is 'micro_batch'. Write micro_batch: 4. ...

Nothing is renamed silently: the key is still refused, with the planner's key (and the value
translated where the tool's values differ, ``precision: bf16-true`` -> ``recipe: pure-bf16``).

The names, each as the tool's own documentation or code spells it:

- Hugging Face Transformers ``TrainingArguments`` (per_device_train_batch_size,
  gradient_accumulation_steps, gradient_checkpointing, bf16, fp16, optim, num_train_epochs,
  dataloader_num_workers, dataloader_pin_memory, torch_compile), ``from_pretrained``
  (torch_dtype, attn_implementation), ``generate`` (max_length, max_new_tokens); peft
  ``LoraConfig`` (r, target_modules, lora_alpha); TRL ``SFTConfig`` (max_seq_length, later
  max_length); Accelerate (mixed_precision, zero_stage of its DeepSpeed plugin).
- torchtune recipe configs (batch_size, gradient_accumulation_steps,
  enable_activation_checkpointing, enable_activation_offloading, dtype, optimizer_in_bwd,
  tokenizer.max_seq_len, lora_attn_modules, apply_lora_to_mlp, lora_rank, lora_alpha;
  github.com/pytorch/torchtune ``recipes/configs/llama2/7B_lora_single_device.yaml``).
- LitGPT (``train.micro_batch_size``, ``train.global_batch_size``, ``train.max_seq_length``,
  ``precision`` as Lightning Fabric spells it: bf16-true, bf16-mixed, 16-mixed, 32-true;
  ``lora_r``, ``lora_query`` ... ``lora_head``, ``devices``, ``quantize`` bnb.nf4;
  github.com/Lightning-AI/litgpt ``tutorials/finetune_lora.md``, ``litgpt/args.py``).
- DeepSpeed's JSON config (train_micro_batch_size_per_gpu, train_batch_size =
  micro x accumulation x data-parallel ranks, gradient_accumulation_steps, zero_optimization.stage,
  offload_param; deepspeed.ai/docs/config-json).
- Axolotl (micro_batch_size, sequence_len, lora_r, lora_target_modules, num_epochs, adapter,
  base_model).
- vLLM engine arguments (max_model_len, tensor_parallel_size, pipeline_parallel_size, dtype,
  quantization, kv_cache_dtype, block_size: tokens per KV cache block;
  docs.vllm.ai, "Engine Arguments").
- llama.cpp's server options (``-c/--ctx-size``, the context of all ``-np/--parallel`` slots
  together; ``-ngl/--n-gpu-layers``; ``-fa/--flash-attn``; ``-ctk/--cache-type-k``,
  ``-ctv/--cache-type-v``; ``-b/--batch-size`` the logical batch, ``-ub/--ubatch-size`` the
  physical one; tools/server/README.md) and llama-cpp-python's ``Llama`` (n_ctx, n_gpu_layers,
  n_batch, n_ubatch, flash_attn).

Where a name means one thing for training and another for serving (``batch_size``: torchtune's
micro-batch, a pipeline's sequences at once), the table holds one row per task. ``torch_dtype`` and
``dtype`` are a training workload's own keys (the load dtype, Transformers' spelling; the reader
names the recipe for torchtune's values) and vLLM's or Transformers' weights for serving. A planner key given for the
wrong task (``context`` in a training workload) is not looked up here: the reader says whose
task it is (planner.workload.spec). This module keeps no state and does no work at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from planner.workload.recipes import OPTIMIZERS, RECIPES


@dataclass(frozen=True)
class OtherName:
    """One key as another tool names it.

    Attributes:
        name: the tool's name, as a file would spell it (dashes as underscores).
        where: 'train' or 'infer' (a workload of that task), 'workload' (either task) or
            'constraints' (a scenario's constraints).
        tools: whose name it is, for 'the name in ...' ('' for a name many tools use).
        key: the planner's key for it, or None where the planner has none.
        note: what differs, a sentence or two ('' when nothing does).
        values: the tool's values (lower-case text; booleans 'true'/'false') -> the planner's value of
            ``key``, for 'Write key: value.'.
        same_value: the value carries over as written (batch_size: 4 -> micro_batch: 4).
    """

    name: str
    where: str
    tools: str
    key: str | None
    note: str = ""
    values: Mapping[str, str] = field(default_factory=dict)
    same_value: bool = False


_ON_OFF = {"true": "full", "false": "none"}
_RECIPES = ", ".join(RECIPES)
_RECIPE_NOTE = f"The planner's recipes: {_RECIPES} (docs/memory-model.md, 'Precision recipes', says what each keeps)."
_WEIGHTS_NOTE = ("The planner's weights: fp32, fp16, bf16, fp8, int8, int4-gptq, int4-awq, nf4, mxfp4, "
                 "compressed-tensors (with engine llama.cpp a GGUF preset such as Q4_K_M).")
_TORCH_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16", "fp16": "fp16",
                 "float32": "fp32", "float": "fp32", "fp32": "fp32"}
_HF_OPTIM = {"adamw_torch": "adamw", "adamw_hf": "adamw", "adamw_torch_fused": "adamw-fused",
             "adamw_bnb_8bit": "adamw-8bit", "adamw_8bit": "adamw-8bit", "paged_adamw_32bit": "paged-adamw",
             "paged_adamw_8bit": "paged-adamw-8bit", "sgd": "sgd", "adafactor": "adafactor", "lion_32bit": "lion"}
_TARGETS_NOTE = ("lora_targets lists the modules by their Transformers names, e.g. [q_proj, v_proj], or "
                 "all-linear.")
_CONTEXT_SLOTS = ("llama.cpp's context is shared by its parallel slots (-np): the planner's context is one "
                  "slot's, its context size divided by the slots, and concurrency the slots.")
_SEQ = "seq_len is the tokens of one training sequence."
_CTX = "context is the tokens one sequence holds in the KV cache, prompt and generated."


def _rows() -> tuple[OtherName, ...]:
    return (*_training_rows(), *_inference_rows(), *_workload_and_constraint_rows())


def _training_rows() -> list[OtherName]:
    """Other tools' names of training keys."""
    t = "train"
    return [
        # ----- training: the batch -------------------------------------------------------------------
        OtherName("batch_size", t, "torchtune's recipe configs", "micro_batch", same_value=True,
                  note="micro_batch is the sequences one GPU takes in a forward and backward pass; grad_accum "
                       "of them make one optimizer step."),
        OtherName("per_device_train_batch_size", t, "Hugging Face TrainingArguments", "micro_batch", same_value=True),
        OtherName("train_micro_batch_size_per_gpu", t, "DeepSpeed's config", "micro_batch", same_value=True),
        OtherName("micro_batch_size", t, "LitGPT and Axolotl", "micro_batch", same_value=True),
        OtherName("train_batch_size", t, "DeepSpeed's config", "micro_batch",
                  note="DeepSpeed's train_batch_size is the global batch, micro_batch x grad_accum x data-parallel "
                       "GPUs: give micro_batch (per GPU) and grad_accum."),
        OtherName("global_batch_size", t, "LitGPT", "micro_batch",
                  note="LitGPT's global_batch_size is micro_batch x grad_accum x devices: give micro_batch (per "
                       "GPU) and grad_accum."),
        OtherName("gradient_accumulation_steps", t, "Hugging Face TrainingArguments, DeepSpeed and torchtune",
                  "grad_accum", same_value=True),
        # ----- training: precision, optimizer, memory savers -------------------------------------------
        OtherName("precision", t, "LitGPT and Lightning Fabric", "recipe", note=_RECIPE_NOTE,
                  values={"bf16-true": "pure-bf16", "bf16-mixed": "amp-bf16", "bf16": "amp-bf16",
                          "16-true": "pure-fp16", "16-mixed": "amp-fp16", "16": "amp-fp16", "32-true": "fp32",
                          "32": "fp32"}),
        OtherName("bf16", t, "Hugging Face TrainingArguments", "recipe",
                  note="The Trainer's bf16: true autocasts fp32 weights (amp-bf16); over a model loaded in bf16 it "
                       "is pure-bf16; DeepSpeed's bf16 section keeps fp32 master weights and gradients "
                       "(mixed-bf16-fp32-grads). " + _RECIPE_NOTE,
                  values={"true": "amp-bf16"}),
        OtherName("fp16", t, "Hugging Face TrainingArguments", "recipe",
                  note="The Trainer's fp16: true autocasts fp32 weights (amp-fp16). " + _RECIPE_NOTE,
                  values={"true": "amp-fp16"}),
        OtherName("mixed_precision", t, "Accelerate", "recipe", note=_RECIPE_NOTE,
                  values={"bf16": "amp-bf16", "fp16": "amp-fp16", "no": "fp32"}),
        OtherName("optim", t, "Hugging Face TrainingArguments", "optimizer", values=_HF_OPTIM,
                  note="The planner's optimizers: " + ", ".join(OPTIMIZERS) + "."),
        OtherName("gradient_checkpointing", t, "Hugging Face TrainingArguments and Axolotl", "checkpointing",
                  values=_ON_OFF),
        OtherName("enable_activation_checkpointing", t, "torchtune's recipe configs", "checkpointing",
                  values=_ON_OFF),
        OtherName("activation_checkpointing", t, "DeepSpeed's and FSDP's configs", "checkpointing", values=_ON_OFF,
                  note="checkpointing: full recomputes each layer in backward; none keeps every activation."),
        OtherName("enable_activation_offloading", t, "torchtune's recipe configs", "offload_activations",
                  same_value=True),
        OtherName("optimizer_in_bwd", t, "torchtune's recipe configs", "optimizer_in_backward", same_value=True),
        OtherName("num_output_chunks", t, "torchtune's models", "loss_chunks", same_value=True),
        OtherName("zero_stage", t, "Accelerate's DeepSpeed plugin", "zero", same_value=True),
        OtherName("zero_optimization", t, "DeepSpeed's config", "zero",
                  note="Write zero: N, its stage (0-3); offload_optimizer: true and offload_params: true put the "
                       "states or the weights in host RAM."),
        OtherName("offload_param", t, "DeepSpeed's config", "offload_params",
                  note="Write offload_params: true for DeepSpeed's offload_param device cpu."),
        OtherName("torch_compile", t, "Hugging Face TrainingArguments", "compile", same_value=True),
        OtherName("dataloader_num_workers", t, "Hugging Face TrainingArguments", "dataloader_workers",
                  same_value=True),
        OtherName("num_workers", t, "torch's DataLoader", "dataloader_workers", same_value=True),
        OtherName("dataloader_pin_memory", t, "Hugging Face TrainingArguments", "pin_memory", same_value=True),
        OtherName("num_train_epochs", t, "Hugging Face TrainingArguments", "epochs", same_value=True),
        OtherName("num_epochs", t, "Axolotl", "epochs", same_value=True),
        # ----- training: the sequence -------------------------------------------------------------------
        OtherName("max_seq_length", t, "TRL's SFTConfig and LitGPT", "seq_len", same_value=True, note=_SEQ),
        OtherName("max_length", t, "TRL's SFTConfig", "seq_len", same_value=True, note=_SEQ),
        OtherName("max_seq_len", t, "torchtune's tokenizer", "seq_len", same_value=True, note=_SEQ),
        OtherName("sequence_len", t, "Axolotl", "seq_len", same_value=True, note=_SEQ),
        OtherName("block_size", t, "Transformers' run_clm.py and nanoGPT", "seq_len", same_value=True, note=_SEQ),
        OtherName("seq_length", t, "Megatron-LM", "seq_len", same_value=True, note=_SEQ),
        OtherName("max_model_len", t, "vLLM", "seq_len", same_value=True, note=_SEQ),
        OtherName("context_length", t, "", "seq_len", same_value=True, note=_SEQ),
        # ----- training: LoRA and the method --------------------------------------------------------------
        OtherName("lora_r", t, "LitGPT and Axolotl", "lora_rank", same_value=True),
        OtherName("r", t, "peft's LoraConfig", "lora_rank", same_value=True),
        OtherName("target_modules", t, "peft's LoraConfig", "lora_targets", same_value=True),
        OtherName("lora_target_modules", t, "Axolotl", "lora_targets", same_value=True),
        OtherName("lora_attn_modules", t, "torchtune's models", "lora_targets", same_value=True,
                  note="torchtune's apply_lora_to_mlp adds the MLP projections: list them in lora_targets too."),
        OtherName("apply_lora_to_mlp", t, "torchtune's models", "lora_targets",
                  note="List the MLP projections (for llama gate_proj, up_proj, down_proj) in lora_targets."),
        *(OtherName(n, t, "LitGPT", "lora_targets", note=f"LitGPT's {n} switches on one projection. " + _TARGETS_NOTE)
          for n in ("lora_query", "lora_key", "lora_value", "lora_projection", "lora_mlp", "lora_head")),
        OtherName("lora_alpha", t, "peft, torchtune and LitGPT", None,
                  note="lora_alpha scales the adapter's update (by alpha / r) and takes no memory: remove it."),
        OtherName("quantize", t, "LitGPT", "method", values={"bnb.nf4": "qlora", "bnb.nf4-dq": "qlora"},
                  note="With LoRA, LitGPT's --quantize bnb.nf4 is method: qlora (bnb.nf4-dq: with double_quant: "
                       "true); with its adapter it is load_in_4bit: true."),
        OtherName("adapter", t, "Axolotl", "method", values={"lora": "lora", "qlora": "qlora"}),
        # ----- training: GPUs -------------------------------------------------------------------------------
        OtherName("devices", t, "LitGPT and Lightning Fabric", "gpus", same_value=True,
                  note="gpus counts every GPU of the job: data-parallel ranks x tp."),
        OtherName("num_gpus", t, "the DeepSpeed launcher", "gpus", same_value=True,
                  note="gpus counts every GPU of the job: data-parallel ranks x tp."),
        OtherName("world_size", t, "torch.distributed", "gpus", same_value=True),
        OtherName("nproc_per_node", t, "torchrun", "gpus_per_node", same_value=True,
                  note="torchrun starts one process per GPU of a machine; gpus counts every GPU of the job."),
        OtherName("tensor_parallel_size", t, "vLLM", "tp", same_value=True),
        OtherName("tensor_model_parallel_size", t, "Megatron-LM", "tp", same_value=True),
    ]


def _inference_rows() -> list[OtherName]:
    """Other tools' names of inference keys."""
    i = "infer"
    return [
        # ----- inference ------------------------------------------------------------------------------------
        OtherName("max_model_len", i, "vLLM", "context", same_value=True, note=_CTX),
        OtherName("max_seq_len", i, "", "context", same_value=True, note=_CTX),
        OtherName("max_seq_length", i, "", "context", same_value=True, note=_CTX),
        OtherName("context_length", i, "", "context", same_value=True, note=_CTX),
        OtherName("max_length", i, "Transformers' generate", "context", same_value=True,
                  note="generate's max_length counts the prompt and the new tokens, as context does."),
        OtherName("max_new_tokens", i, "Transformers' generate", "tokens_per_request", same_value=True,
                  note="tokens_per_request times a request; the KV cache holds context tokens (prompt and "
                       "generated)."),
        OtherName("n_ctx", i, "llama.cpp and llama-cpp-python", "context", note=_CONTEXT_SLOTS),
        OtherName("ctx_size", i, "llama.cpp's --ctx-size", "context", note=_CONTEXT_SLOTS),
        OtherName("block_size", i, "vLLM", None,
                  note="vLLM's block_size is the tokens in one KV cache block (16 by default), not the context "
                       "length; the context is context."),
        OtherName("tensor_parallel_size", i, "vLLM", "tp", same_value=True),
        OtherName("tp_size", i, "SGLang", "tp", same_value=True),
        OtherName("pipeline_parallel_size", i, "vLLM", None,
                  note="The planner sizes one replica on tp GPUs; pipeline parallelism is not modelled: use tp."),
        OtherName("dtype", i, "vLLM", "weights", values=_TORCH_DTYPES, note=_WEIGHTS_NOTE),
        OtherName("torch_dtype", i, "Transformers' from_pretrained", "weights", values=_TORCH_DTYPES,
                  note=_WEIGHTS_NOTE),
        OtherName("precision", i, "", "weights", values=_TORCH_DTYPES, note=_WEIGHTS_NOTE),
        OtherName("quantization", i, "vLLM", "weights",
                  values={"awq": "int4-awq", "gptq": "int4-gptq", "fp8": "fp8", "bitsandbytes": "nf4",
                          "compressed-tensors": "compressed-tensors", "mxfp4": "mxfp4"}, note=_WEIGHTS_NOTE),
        OtherName("kv_cache_dtype", i, "vLLM", "kv_dtype",
                  values={"fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "bfloat16": "bf16", "float16": "fp16"},
                  note="The planner's kv_dtype: fp32, fp16, bf16, fp8 (engine llama.cpp: its cache types)."),
        OtherName("cache_type_k", i, "llama.cpp's --cache-type-k", "kv_dtype", same_value=True),
        OtherName("cache_type_v", i, "llama.cpp's --cache-type-v", "kv_dtype_v", same_value=True),
        OtherName("n_gpu_layers", i, "llama.cpp's --n-gpu-layers", "gpu_layers", same_value=True),
        OtherName("ngl", i, "llama.cpp's -ngl", "gpu_layers", same_value=True),
        OtherName("flash_attn", i, "llama.cpp's --flash-attn", "flash_attention",
                  values={"on": "true", "off": "false", "true": "true", "false": "false"}),
        OtherName("parallel", i, "llama.cpp's --parallel", "concurrency", same_value=True,
                  note="concurrency is the sequences served at once, llama-server's slots."),
        OtherName("n_parallel", i, "llama.cpp", "concurrency", same_value=True,
                  note="concurrency is the sequences served at once, llama-server's slots."),
        OtherName("batch_size", i, "Transformers' pipelines", "concurrency", same_value=True,
                  note="concurrency is the sequences served at once; llama.cpp's --batch-size is the prompt "
                       "tokens per step (its physical batch --ubatch-size is max_num_batched_tokens)."),
        OtherName("n_ubatch", i, "llama.cpp and llama-cpp-python", "max_num_batched_tokens", same_value=True),
        OtherName("ubatch_size", i, "llama.cpp's --ubatch-size", "max_num_batched_tokens", same_value=True),
        OtherName("n_batch", i, "llama.cpp and llama-cpp-python", "max_num_batched_tokens",
                  note="With engine llama.cpp, max_num_batched_tokens is the physical batch n_ubatch (--ubatch-size, "
                       "default 512), which sizes its compute buffers."),
    ]


#: The ``tools`` of a row that is the planner's own name but no key of a ``--workload`` file (h14b minor d).
_NOT_A_FILE_KEY = "planner"


def _workload_and_constraint_rows() -> list[OtherName]:
    """Other tools' names of keys of either task and of a scenario's constraints."""
    w, c = "workload", "constraints"
    return [
        # ----- planner's own names that are no key of a --workload file ---------------------------------------
        OtherName("prompt_tokens", w, _NOT_A_FILE_KEY, None,
                  note="it is the command-line option --prompt-tokens of 'planner estimate' (with --gpu: the prompt "
                       "of the request the speed model times), which has no file key. Give it on the command line."),
        OtherName("output_tokens", w, _NOT_A_FILE_KEY, None,
                  note="it is the command-line option --output-tokens of 'planner estimate' (with --gpu: the tokens "
                       "the timed request generates), which has no file key; a scenario's tokens_per_request sizes "
                       "a request for 'planner compare'. Give it on the command line."),
        OtherName("slo", w, _NOT_A_FILE_KEY, None,
                  note="slo: is a key of a scenario's workload (planner plan), not of a --workload file. Write the "
                       "workload into a scenario's workloads: list, or size it with 'planner fit'."),
        # ----- either task ----------------------------------------------------------------------------------
        OtherName("attn_implementation", w, "Transformers' from_pretrained", "attention",
                  values={"eager": "eager", "sdpa": "sdpa", "flash_attention_2": "flash"}),
        OtherName("model_name_or_path", w, "Hugging Face's example scripts", "model", same_value=True),
        OtherName("pretrained_model_name_or_path", w, "Transformers' from_pretrained", "model", same_value=True),
        OtherName("base_model", w, "Axolotl", "model", same_value=True),
        OtherName("checkpoint_dir", w, "LitGPT", "model",
                  note="model takes a catalog id, a Hugging Face id in the local cache, or the path of a "
                       "config.json (or of the directory holding one)."),
        # ----- constraints -----------------------------------------------------------------------------------
        *(OtherName(n, c, "", "allowed_gpus", same_value=True,
                    note="allowed_gpus lists the catalog GPU ids the solver may buy ('planner catalog gpus'); the "
                         "solver picks how many.")
          for n in ("gpu", "gpus", "gpu_model", "gpu_models", "gpu_type", "gpu_types")),
        OtherName("accelerators", c, "SkyPilot", "allowed_gpus",
                  note="allowed_gpus lists catalog GPU ids ('planner catalog gpus'); the count is the solver's "
                       "choice, and max_cards caps the GPUs of one machine."),
        *(OtherName(n, c, "", "max_cards", same_value=True,
                    note="max_cards is the most GPUs in one machine; max_nodes the most machines.")
          for n in ("num_gpus", "gpu_count", "max_gpus")),
        *(OtherName(n, c, t, "max_nodes", same_value=True,
                    note="max_nodes is the most machines; the solver may buy fewer.")
          for n, t in (("num_nodes", "SkyPilot"), ("nodes", ""))),
        *(OtherName(n, c, "", "allowed_platforms", same_value=True,
                    note="allowed_platforms lists catalog platform ids ('planner catalog platforms').")
          for n in ("platform", "platforms", "chassis")),
        *(OtherName(n, c, "", "budget_usd", same_value=True) for n in ("max_budget", "max_price", "max_cost")),
    ]


def other_names() -> tuple[OtherName, ...]:
    """Every row of the table (built on each call: no state at import)."""
    return _rows()


def _shown(value: Any) -> str | None:
    """A value as a YAML file writes it ('4', 'true', '[q_proj, v_proj]'), or None for a mapping or
    something that has no short form."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float, str)) and len(str(value)) <= 60:
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, str)) and not isinstance(v, bool)
                                                for v in value) and len(value) <= 12:
        return "[" + ", ".join(map(str, value)) + "]"
    return None


#: The planner's whole-number keys another tool's name carries its value over to, with the least each takes
#: (planner.workload.inference, training and planner.solve.scenario: ``entry.int(key, ..., min=...)``).
_WHOLE_FLOORS = {**dict.fromkeys(("concurrency", "context", "gpus", "gpus_per_node", "grad_accum", "lora_rank",
                                  "max_cards", "max_nodes", "max_num_batched_tokens", "micro_batch", "seq_len",
                                  "tokens_per_request", "tp"), 1),
                 **dict.fromkeys(("dataloader_workers", "gpu_layers", "loss_chunks"), 0)}


def _in_range(key: str | None, value: Any, text: str) -> str | None:
    """``text``, the value as written, for the 'Write key: value' hint, or the whole number in ``key``'s range it
    rounds up to where the key refuses it as written (``max_new_tokens: 0.5``: 'tokens_per_request: 1', never
    0.5, which tokens_per_request refuses next; h24b M7); None for a number no key takes (.inf, .nan)."""
    floor = _WHOLE_FLOORS.get(key or "")
    if floor is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return text
    if isinstance(value, int):  # a whole number (any size: no float of it is taken)
        return text if value >= floor else str(floor)
    if not math.isfinite(value):
        return None
    if value.is_integer() and value >= floor:
        return text
    return str(max(floor, math.ceil(value)))


def describe(row: OtherName, value: Any, *, task_of_key: str | None = None,
             given: Mapping[str, Any] | None = None) -> tuple[str, str | None]:
    """(problem, hint) for ``row.name`` given with ``value``.

    Args:
        task_of_key: the task whose option ``row.key`` is, when it is not the entry's task.
        given: the entry's keys and values: where ``row.key`` is one of them, 'Write key: value'
            would make a duplicate key, so the hint says to remove ``row.name`` (h18b #6).
    """
    whose = f" (the name in {row.tools})" if row.tools else ""
    if row.key is None and row.tools == _NOT_A_FILE_KEY:  # a planner name that a --workload file does not take
        return f"unknown key {row.name!r}: {row.note}", None
    if row.key is None:
        return f"unknown key {row.name!r}{whose}; the planner has no key for it", row.note or None
    of_task = f", an option of task {task_of_key}" if task_of_key else ""
    problem = f"unknown key {row.name!r}{whose}; the planner's key is {row.key!r}{of_task}"
    write = None
    text = _shown(value)
    if text is not None and not isinstance(value, (list, tuple)) and text.lower() in row.values:
        write = row.values[text.lower()]
    elif row.same_value and text is not None:
        write = _in_range(row.key, value, text)
    if given is not None and row.key in given and not task_of_key:
        now = _shown(given[row.key])
        has = f"{row.key}: {now}" if now is not None else row.key
        change = (f"; change that to {row.key}: {write} if {write} is meant" if write is not None and write != now
                  else "")
        return problem, f"Remove {row.name}: the entry gives {has} already{change}."
    parts = [f"Write {row.key}: {write}." if write is not None and not task_of_key else ""]
    parts.append(row.note)
    hint = " ".join(p for p in parts if p)
    return problem, hint or None


def explainer(where: str, given: Mapping[str, Any] | None = None
              ) -> Callable[[str, Any], tuple[str, str | None] | None]:
    """The ``explain`` function of ``Entry.check_keys`` for an entry of ``where``: 'train' or
    'infer' (a workload of that task), 'constraints', or 'scenario' (a scenario's top level, where a
    workload's name belongs in a ``workloads:`` entry).

    A workload's name is looked up for its task, then for either task ('workload'), then for the
    other task (the message then says the planner's key is an option of that task).

    A name is looked up as a command line spells it too: vLLM's ``--max-model-len`` written
    ``max-model-len`` (or ``MAX_MODEL_LEN``) is the row of ``max_model_len`` (h18b #6). ``given``:
    the entry's keys and values, so that a hint never makes a duplicate key (see ``describe``).

    The table is built when the first unknown key is explained, not before: an entry without
    one (nearly every entry) costs nothing here.
    """
    table: dict[tuple[str, str], OtherName] = {}
    other = {"train": "infer", "infer": "train"}.get(where)
    if where == "scenario":
        return _top_level(table)

    def explain(name: str, value: Any) -> tuple[str, str | None] | None:
        _fill(table)
        looked = name.lower().replace("-", "_") if isinstance(name, str) else name
        row = table.get((where, looked)) or (table.get(("workload", looked)) if other else None)
        if row is not None:
            return describe(dataclasses.replace(row, name=name), value, given=given)
        if other and (other, looked) in table:
            return describe(dataclasses.replace(table[(other, looked)], name=name), value, task_of_key=other)
        return None

    return explain


def _fill(table: dict[tuple[str, str], OtherName]) -> None:
    """Fill an explainer's empty ``table`` with every row, by (where, name)."""
    if not table:
        table.update({(r.where, r.name): r for r in other_names()})


def _top_level(table: dict[tuple[str, str], OtherName]) -> Callable[[str, Any], tuple[str, str | None] | None]:
    """A workload's name from another tool at a scenario's top level: the planner's workload key, to
    indent under an entry of ``workloads:`` (``table`` is filled on the first call)."""

    def explain(name: str, value: Any) -> tuple[str, str | None] | None:
        _fill(table)
        row = next((table[(w, name)] for w in ("train", "infer", "workload") if (w, name) in table), None)
        if row is None or row.key is None:
            return None
        whose = f" (the name in {row.tools})" if row.tools else ""
        return (f"unknown key {name!r}{whose}; the planner's workload key is {row.key!r}",
                f"Write {row.key} in an entry of 'workloads:', indented under its '- ' (see scenarios/README.md).")

    return explain


def _planner_names(name: str, takes: Callable[[str], bool]) -> tuple[str, dict[str, list[OtherName]]]:
    """(' (the name in <tools>)' or '', the planner's keys for another tool's ``name`` -> the rows
    naming them) among the keys ``takes`` accepts (a workload's names, not a scenario's constraints)."""
    found: dict[str, list[OtherName]] = {}
    for r in other_names():
        if r.name == name and r.key is not None and r.where != "constraints" and takes(r.key):
            found.setdefault(r.key, []).append(r)
    tools = [r.tools for rs in found.values() for r in rs if r.tools]
    return (f" (the name in {' and '.join(dict.fromkeys(tools))})" if tools else ""), found


def _theirs(found: dict[str, list[OtherName]], spell: Callable[[str], str]) -> str:
    """The planner's names for ``found`` as a reader writes them: one, or each with its task."""
    if len(found) == 1:
        return spell(next(iter(found)))
    return " or ".join(f"{spell(k)} ({' or '.join(dict.fromkeys('task ' + r.where for r in rs))})"
                       for k, rs in found.items())


def option_hint(option: str, takes: Callable[[str], bool]) -> str | None:
    """For a command-line option the command does not take (``--batch-size``): whose name it is and
    the planner's option (``--micro-batch``), or None.

    Args:
        option: as typed, '--batch-size'.
        takes: whether the command has an option ('--micro-batch').
    """
    whose, found = _planner_names(option.lstrip("-").replace("-", "_"), lambda k: takes("--" + k.replace("_", "-")))
    if not found:
        return None
    return (f"No such option {option!r}{whose}; the planner's option is "
            + _theirs(found, lambda k: f"'--{k.replace('_', '-')}'") + ".")


def keyword_hint(name: str, takes: Callable[[str], bool]) -> str | None:
    """For a keyword argument a Python API function does not take (``batch_size=``): whose name it
    is and the planner's keyword (``micro_batch``), or None.

    Args:
        name: the keyword as given, 'batch_size'.
        takes: whether the function takes a keyword ('micro_batch').
    """
    whose, found = _planner_names(name, takes)
    if not found:
        return None
    return f"{name!r} is another tool's name{whose}; the planner's keyword is " + _theirs(found, repr) + "."


__all__ = ["OtherName", "describe", "explainer", "keyword_hint", "option_hint", "other_names"]
