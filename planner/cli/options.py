"""Shared option types and option groups: the workload options of estimate, fit and calibrate,
and reading them (with a --workload file) into a workload; the --catalog and --gpu options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from planner.cli.common import LineError


class Count(click.ParamType):
    """A whole number for --micro-batch, --seq-len, --context, --concurrency; 'max' points to 'planner fit'."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() == "max" and param is not None:
            opt = param.opts[0]
            command = ctx.command_path if ctx is not None else "planner"
            raise LineError(f"{opt}: '{command}' takes a whole number, not 'max'. 'planner fit' finds the largest "
                             f"{opt[2:].replace('-', ' ')} that fits a card: planner fit --gpu ID {opt} max (with the "
                             "same other options).", ctx)
        return click.INT.convert(value, param, ctx)


class GpuLayers(click.ParamType):
    """--gpu-layers: a whole number or 'all' (the workload reader checks the range); 'max' is passed on
    for 'planner fit', and the reader explains it elsewhere."""

    name = "N|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text in ("all", "max", "auto"):
            return text
        try:
            return int(text)
        except ValueError:
            self.fail(f"{value!r} is not a layer count: give a whole number, or 'all'", param, ctx)


def load_catalog_option(catalog_dir: str | None):
    from planner.catalog.loader import load_catalog

    return load_catalog(Path(catalog_dir) if catalog_dir else None)


def option_gpu(catalog: Any, gpu_id: str) -> Any:
    """The catalog GPU named by --gpu; an unknown id is an error located at the option."""
    from planner.core.errors import CatalogError
    from planner.workload.inputs import OptionError

    try:
        return catalog.gpu(gpu_id)
    except CatalogError as exc:
        raise OptionError(exc.problem, entry="gpu", hint=exc.hint) from None


ESTIMATE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("--model", dict(help="Catalog id, path to a config.json, or a hub id in the local HF cache.")),
    ("--task", dict(type=click.Choice(["train", "infer"]), help="train or infer.")),
    ("--method", dict(type=click.Choice(["full", "lora", "qlora"]), help="Training method (default full).")),
    ("--recipe", dict(help="Precision recipe: fp32, amp-bf16, amp-fp16, mixed-bf16, mixed-bf16-fp32-grads, "
                      "pure-bf16 and the fp16 variants (default mixed-bf16; pure-bf16 for LoRA/QLoRA).")),
    ("--optimizer", dict(help="adamw, adamw-8bit, sgd, sgd-momentum, adafactor, lion (default adamw).")),
    ("--micro-batch", dict(type=Count(), help="Sequences per GPU per forward pass.")),
    ("--seq-len", dict(type=Count(), help="Tokens per training sequence.")),
    ("--grad-accum", dict(type=int, help="Micro-batches per optimizer step (no activation memory; gradients stay "
                                                     "allocated between them).")),
    ("--gpus", dict(type=int, help="GPUs in total. Training: data parallel x tensor parallel. Inference: replicas "
                                   "x --tp (a multiple of --tp; without --tp, one replica on all of them).")),
    ("--gpus-per-node", dict(type=int, help="GPUs per machine (default: all).")),
    ("--tp", dict(type=int, help="Tensor-parallel degree.")),
    ("--zero", dict(type=int, help="ZeRO stage 0-3.")),
    ("--offload-optimizer/--no-offload-optimizer", dict(default=None, help="Optimizer states in host RAM.")),
    ("--offload-params/--no-offload-params", dict(default=None, help="Parameters in host RAM (ZeRO-3).")),
    ("--checkpointing", dict(type=click.Choice(["none", "full"]), help="Gradient checkpointing.")),
    ("--use-reentrant/--no-use-reentrant", dict(default=None, help="Checkpointing runs torch's reentrant variant "
                                                                   "(default: Transformers' non-reentrant one).")),
    ("--attention", dict(type=click.Choice(["eager", "sdpa", "flash"]), help="Attention kernel.")),
    ("--lora-rank", dict(type=int, help="LoRA rank r.")),
    ("--lora-targets", dict(help="Comma-separated module names, or all-linear.")),
    ("--lora-dropout", dict(type=float, help="peft lora_dropout (default 0.0).")),
    ("--use-dora/--no-use-dora", dict(default=None, help="peft DoRA (LoraConfig use_dora): a trainable magnitude "
                                                         "per output feature and the weight norms recomputed "
                                                         "every forward.")),
    ("--adapter-dtype", dict(type=click.Choice(["fp32", "bf16", "fp16"]),
                             help="LoRA adapters, their gradients and states (default fp32, peft's).")),
    ("--double-quant/--no-double-quant", dict(default=None, help="QLoRA double quantization.")),
    ("--load-in-8bit/--no-load-in-8bit", dict(default=None, help="LoRA on an LLM.int8 base (bitsandbytes "
                                                                 "load_in_8bit; default off).")),
    ("--prepare-kbit-training/--no-prepare-kbit-training",
     dict(default=None, help="QLoRA or --load-in-8bit: the script calls peft prepare_model_for_kbit_training "
                              "(fp32 non-quantized weights and activations; default off).")),
    ("--weights", dict(help="Inference weights: fp32, fp16, bf16, fp8, int8, int4-gptq, int4-awq, nf4, "
                                "mxfp4 (MXFP4 checkpoints such as gpt-oss); with --engine llama.cpp a GGUF preset "
                                "(Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q3_K_M, Q2_K, IQ4_XS, F16, ...; default Q4_K_M).")),
    ("--group-size", dict(type=int, help="GPTQ/AWQ group size.")),
    ("--kv-dtype", dict(help="KV cache dtype: fp32, fp16, bf16, fp8; llama.cpp: f16, q8_0, q4_0, ... "
                             "(--cache-type-k, and -v unless --kv-dtype-v).")),
    ("--kv-dtype-v", dict(help="llama.cpp: the V cache type when it differs from --kv-dtype (--cache-type-v).")),
    ("--context", dict(type=Count(), help="Tokens per sequence in the KV cache.")),
    ("--concurrency", dict(type=Count(), help="Sequences served at once (per replica).")),
    ("--engine", dict(type=click.Choice(["hf", "vllm", "llama.cpp"]),
                      help="Inference engine (llama.cpp: what Ollama runs, GGUF weights).")),
    ("--gpu-layers", dict(type=GpuLayers(), help="llama.cpp n_gpu_layers (-ngl): layers on the GPU counting the "
                                                 "output layer, or 'all' (default).")),
    ("--flash-attention/--no-flash-attention", dict(default=None, help="llama.cpp -fa (default on).")),
    ("--imatrix/--no-imatrix", dict(default=None, help="llama.cpp: the GGUF was quantized with an importance "
                                                       "matrix (default: only the IQ1/IQ2/IQ3_XXS presets).")),
    ("--gpu-memory-utilization", dict(type=float, help="vLLM's share of the card.")),
    ("--max-num-batched-tokens", dict(type=int, help="Tokens prefilled per forward pass (llama.cpp: n_ubatch, "
                                                     "-ub, default 512).")),
    ("--max-num-seqs", dict(type=int, help="vLLM's cap on sequences per step (default: vllm serve's).")),
    ("--dataloader-workers", dict(type=int, help="DataLoader num_workers per GPU process.")),
    ("--dataset-size", dict(help="Dataset size with unit, e.g. '20 GiB'.")),
    ("--dataset-format", dict(type=click.Choice(["arrow", "numpy", "mmap", "python"]), help="Dataset storage.")),
]


def estimate_options(fn):
    for decl, kw in reversed(ESTIMATE_OPTIONS):
        fn = click.option(decl, **kw)(fn)
    return fn


def collect_options(options: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in options.items():
        if value is None:
            continue
        if key == "lora_targets":
            value = [v.strip() for v in value.split(",") if v.strip()]
        out[key] = value
    return out


def file_keys(workload_file: str | None) -> dict[str, Any]:
    """The keys of a --workload file as written; empty when there is none or it cannot be read
    (reading the workload then reports the problem where it is)."""
    if not workload_file:
        return {}
    from planner.core.yamlio import YamlProblem, load_mapping

    try:
        return load_mapping(Path(workload_file))  # a dict that knows each key's line (.lines)
    except (YamlProblem, OSError, ValueError):
        return {}


def tp_from_gpus(given: dict[str, Any], written: dict[str, Any]) -> bool:
    """Whether an inference workload's tp comes from --gpus N: no tp was given (option or --workload file
    key), so the N GPUs are one replica at tp N (the workload reader, planner.workload.spec, reads gpus and tp
    and refuses a count that does not hold whole replicas; ``written``: the file's keys, if any)."""
    return (given.get("task", written.get("task")) == "infer" and "gpus" in given and "tp" not in given
            and "tp" not in written)


def workload_from_cli(catalog: Any, workload_file: str | None, given: dict[str, Any], gpu: Any = None) -> Any:
    """The workload of --workload FILE (options override its keys) or of the options alone.

    ``given``: the options given (:func:`collect_options`). With ``gpu`` (--gpu), dtypes that GPU has no
    support for are refused at the key that chose them. --gpus is read by the workload reader, as a
    file's gpus: key is (for inference N / tp replicas, without tp one replica at tp N).
    """
    from planner.workload.inputs import load_workload_file, workload_from_options

    if workload_file:
        return load_workload_file(Path(workload_file), catalog, given, shown=workload_file, gpu=gpu)
    if "model" not in given:
        raise click.UsageError("give --model (and --task), or --workload FILE")
    return workload_from_options(given, catalog, gpu=gpu)


def vllm_headroom(workload: Any, headroom: float, ctx: click.Context) -> float:
    """The planning headroom for a check on one card: none for an engine: vllm workload (its
    gpu_memory_utilization is the margin; a --headroom given for one is refused), else ``headroom``."""
    from planner.plan.candidates import takes_headroom
    from planner.workload.inputs import OptionError

    if takes_headroom(workload):
        return headroom
    if ctx.get_parameter_source("headroom") == click.core.ParameterSource.COMMANDLINE:
        raise OptionError("does not apply to engine vllm: vLLM keeps 1 - gpu_memory_utilization of the card free",
                          entry="headroom", hint="Lower --gpu-memory-utilization for a larger margin.")
    return 0.0
