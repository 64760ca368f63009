"""Command-line interface: thin commands over the library.

Exit codes: 0 success; 1 no feasible plan (the explanation is printed); 2 bad input (one
line: ``Error: <file>:<line>: <entry>: <problem>. <hint>``). Tracebacks only with ``--debug``.
Heavy modules (pandas, openpyxl, scipy) are imported inside the commands that need them, so
``planner --help`` starts fast.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

import click

from planner.errors import PlannerError

EXIT_CODES_HELP = (
    "Exit codes: 0 success; 1 nothing feasible (the reasons are printed); 2 bad input, one line "
    "'Error: <file>:<line>: <entry>: <problem>. <hint>'. Add --debug for a traceback."
)


def _fail(message: str, code: int) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def handle_errors(fn):
    """Turn PlannerError (and unexpected exceptions) into one line and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool((ctx.find_root().obj or {}).get("debug"))
        try:
            return fn(*args, **kwargs)
        except PlannerError as exc:
            if debug:
                raise
            if exc.exit_code == 1:
                click.echo(str(exc), err=True)
                sys.exit(1)
            _fail(exc.one_line(), exc.exit_code)
        except (KeyboardInterrupt, click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence, no traceback for users
            if debug:
                raise
            _fail(f"internal error ({type(exc).__name__}: {exc}). This is a bug in planner; "
                  f"rerun with --debug and report the traceback.", 2)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="planner")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Size and price hardware for deep-learning work: memory model, catalog, solver, quotes."""
    ctx.obj = {"debug": debug}


def _load_catalog(catalog_dir: str | None):
    from planner.catalog import load_catalog

    return load_catalog(Path(catalog_dir) if catalog_dir else None)


# ----- estimate ---------------------------------------------------------------------------------

_ESTIMATE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("--model", dict(help="Catalog id, path to a config.json, or a hub id in the local HF cache.")),
    ("--task", dict(type=click.Choice(["train", "infer"]), help="train or infer.")),
    ("--method", dict(type=click.Choice(["full", "lora", "qlora"]), help="Training method (default full).")),
    ("--recipe", dict(help="Precision recipe: fp32, amp-bf16, amp-fp16, mixed-bf16, mixed-bf16-fp32-grads, "
                      "pure-bf16 and the fp16 variants (default mixed-bf16; pure-bf16 for LoRA/QLoRA).")),
    ("--optimizer", dict(help="adamw, adamw-8bit, sgd, sgd-momentum, adafactor, lion (default adamw).")),
    ("--micro-batch", dict(type=int, help="Sequences per GPU per forward pass.")),
    ("--seq-len", dict(type=int, help="Tokens per training sequence.")),
    ("--grad-accum", dict(type=int, help="Micro-batches per optimizer step (time, not memory).")),
    ("--gpus", dict(type=int, help="GPUs in total (data parallel x tensor parallel).")),
    ("--gpus-per-node", dict(type=int, help="GPUs per machine (default: all).")),
    ("--tp", dict(type=int, help="Tensor-parallel degree.")),
    ("--zero", dict(type=int, help="ZeRO stage 0-3.")),
    ("--offload-optimizer/--no-offload-optimizer", dict(default=None, help="Optimizer states in host RAM.")),
    ("--offload-params/--no-offload-params", dict(default=None, help="Parameters in host RAM (ZeRO-3).")),
    ("--checkpointing", dict(type=click.Choice(["none", "full"]), help="Gradient checkpointing.")),
    ("--attention", dict(type=click.Choice(["eager", "sdpa", "flash"]), help="Attention kernel.")),
    ("--lora-rank", dict(type=int, help="LoRA rank r.")),
    ("--lora-targets", dict(help="Comma-separated module names, or all-linear.")),
    ("--double-quant/--no-double-quant", dict(default=None, help="QLoRA double quantization.")),
    ("--weights", dict(help="Inference weights: fp32, fp16, bf16, fp8, int8, int4-gptq, int4-awq, nf4.")),
    ("--group-size", dict(type=int, help="GPTQ/AWQ group size.")),
    ("--kv-dtype", dict(help="KV cache dtype: fp32, fp16, bf16, fp8.")),
    ("--context", dict(type=int, help="Tokens per sequence in the KV cache.")),
    ("--concurrency", dict(type=int, help="Sequences served at once.")),
    ("--engine", dict(type=click.Choice(["hf", "vllm"]), help="Inference engine.")),
    ("--gpu-memory-utilization", dict(type=float, help="vLLM's share of the card.")),
    ("--max-num-batched-tokens", dict(type=int, help="Tokens prefilled per forward pass.")),
    ("--dataloader-workers", dict(type=int, help="DataLoader num_workers per GPU process.")),
    ("--dataset-size", dict(help="Dataset size with unit, e.g. '20 GiB'.")),
    ("--dataset-format", dict(type=click.Choice(["arrow", "numpy", "mmap", "python"]), help="Dataset storage.")),
]


def _estimate_options(fn):
    for decl, kw in reversed(_ESTIMATE_OPTIONS):
        fn = click.option(decl, **kw)(fn)
    return fn


def _collect(options: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in options.items():
        if value is None:
            continue
        if key == "lora_targets":
            value = [v.strip() for v in value.split(",") if v.strip()]
        out[key] = value
    return out


@main.command()
@click.option("--workload", "workload_file", type=click.Path(dir_okay=False), help="Workload YAML (same keys).")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--gpu", "gpu_id", help="A catalog GPU: also report whether the need fits it (and vLLM capacity).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_estimate_options
@handle_errors
def estimate(workload_file: str | None, catalog_dir: str | None, gpu_id: str | None, as_json: bool,
             **options: Any) -> None:
    """Estimate GPU memory per card and host RAM for one workload, component by component.

    \b
    Example:
      planner estimate --model llama-2-7b --task train --method full --recipe mixed-bf16 \\
        --optimizer adamw --micro-batch 4 --seq-len 2048 --gpus 1 --zero 0 --checkpointing none
      planner estimate --model llama-3.1-8b --task infer --weights bf16 --context 4096 --concurrency 8
      planner estimate --workload scenarios/workloads/qlora-7b.yaml --json
    """
    from planner.inputs import load_workload_file, workload_from_options
    from planner.memory import estimate as run_estimate
    from planner.memory import vllm_capacity
    from planner.render import estimate_text, estimate_to_dict

    catalog = _load_catalog(catalog_dir)
    given = _collect(options)
    if workload_file:
        workload = load_workload_file(Path(workload_file), catalog, given)
    else:
        if "model" not in given:
            raise click.UsageError("give --model (and --task), or --workload FILE")
        workload = workload_from_options(given, catalog)
    est = run_estimate(workload)
    result = estimate_to_dict(est)
    if gpu_id:
        gpu = catalog.gpu(gpu_id)
        need = est.per_gpu_total_bytes
        result["gpu"] = {"id": gpu.id, "memory_usable_bytes": gpu.memory_usable_bytes,
                         "fits": need <= gpu.memory_usable_bytes,
                         "headroom_bytes": gpu.memory_usable_bytes - need}
        if workload.infer is not None:
            result["gpu"]["vllm"] = vllm_capacity(est, card_bytes=gpu.memory_usable_bytes,
                                                  gpu_memory_utilization=workload.infer.gpu_memory_utilization)
            result["gpu"]["vllm"]["max_concurrency_at_context"] = (
                result["gpu"]["vllm"]["kv_tokens"] // workload.infer.context)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(estimate_text(est))
    if gpu_id:
        g = result["gpu"]
        verdict = "fits" if g["fits"] else "does NOT fit"
        click.echo(f"On {g['id']} ({g['memory_usable_bytes'] / 2**30:,.2f} GiB usable): {verdict}, headroom "
                   f"{g['headroom_bytes'] / 2**30:,.2f} GiB")
        if "vllm" in g:
            v = g["vllm"]
            click.echo(f"vLLM: {v['kv_tokens']:,} KV tokens fit ({v['kv_blocks']:,} blocks of 16), "
                       f"{v['max_concurrency_at_context']:,} sequences of {workload.infer.context:,} tokens")
