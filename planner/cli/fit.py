"""The ``planner fit`` command: the largest micro-batch, sequence length, context or concurrency that fits a GPU."""

from __future__ import annotations

from typing import Any

import click

from planner.api.fits import FIT_TARGETS
from planner.cli import options as opts
from planner.cli.common import (echo, gib_text, given_on_command_line, handle_errors, input_file_option, one_catalog,
                                size_text)
from planner.cli.estimate import unknown_architecture_note
from planner.cli.options import ESTIMATE_OPTIONS
from planner.core.escape import json_text


def fit_options(fn):
    """The workload options of 'planner estimate' as click options of ``fn``; the targets also take 'max'."""
    for decl, kw in reversed(ESTIMATE_OPTIONS):
        name = decl.split("/")[0].lstrip("-").replace("-", "_")
        if name in FIT_TARGETS:
            kw = dict(kw, type=str, help=kw["help"].rstrip(".") + "; 'max' to find the largest that fits.")
        elif name == "gpus":
            kw = dict(kw, help="GPUs of the given type. Training: data parallel x --tp (default: --tp). "
                      "Inference: replicas x --tp, a multiple of --tp (without --tp, one replica on all of them; "
                      "default: --tp).")
        fn = click.option(decl, **kw)(fn)
    return fn


@click.command(name="fit", cls=opts.BoolSpellingCommand)
@click.option("--gpu", "gpu_id", required=True, help="A catalog GPU id.")
@click.option("--workload", "workload_file", type=opts.PathType(dir_okay=False), callback=input_file_option,
              help="Workload YAML (same keys; options override them). The target is still an option: "
                   "--micro-batch, --seq-len, --context or --concurrency max.")
@click.option("--headroom", type=opts.FloatRange(0, 0.95), default=0.05, show_default=True,
              help="Fraction of the GPU's CUDA total kept free (as vram_headroom in scenarios).")
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@fit_options
@handle_errors
def fit(gpu_id: str, workload_file: str | None, headroom: float, catalog_dir: str | None, as_json: bool,
        **options: Any) -> None:
    """Find the largest micro-batch, sequence length, context, concurrency or llama.cpp GPU-layer count that fits a GPU.

    Give exactly one of --micro-batch, --seq-len, --context, --concurrency, --gpu-layers the value 'max';
    the other workload options are as for 'planner estimate'. --gpus N runs the workload on
    N such GPUs, as in 'planner estimate': training, data parallel x --tp; inference, N / --tp
    replicas of --tp GPUs each (without --tp, one replica at tp N), the answer's concurrency being
    per replica (the total is printed too). The search is a bisection on the integer (an
    exponential search for a bracket, then binary search), which is exact because memory never
    decreases as these grow; sequence length and context stop at the model's
    max_position_embeddings. The notes and warnings 'planner estimate' gives for the answer are
    printed with it. Exits 1 when even 1 does not fit, with the notes and warnings estimate gives
    for the workload at 1. --workload FILE reads the other options from a
    workload file, as 'planner estimate --workload' does (options override its keys).

    \b
    Example:
      planner fit --model llama-2-7b --gpu rtx-4090 --task train --method qlora --micro-batch max
      planner fit --workload scenarios/workloads/qlora-7b.yaml --gpu rtx-4090 --micro-batch max
      planner fit --model llama-3.1-8b --gpu l4 --task infer --context 8192 --concurrency max
      planner fit --model llama-3.1-70b --gpu h100-sxm --gpus 8 --task infer --concurrency 16 --context max
      planner fit --model llama-3.1-70b --gpu rtx-4090 --task infer --engine llama.cpp --gpu-layers max

    With --gpu-layers max (llama.cpp), the answer also gives the host RAM the layers left on the CPU
    need, as 'planner estimate' counts it.
    """
    from planner.api import NoFit
    from planner.api import fit as run_fit

    try:
        cat = opts.load_catalog_option(catalog_dir)
        r = run_fit(gpu=gpu_id, workload=workload_file, catalog=cat,
                    headroom=headroom if given_on_command_line("headroom") else None, **options)
    except NoFit as exc:
        if as_json:  # scripts get a document either way, as with plan --json
            click.echo(json_text(exc.result.to_dict(), indent=2))
        raise
    if as_json:
        click.echo(json_text(r.to_dict(), indent=2))
        return
    best, cap, target, copies = r.max_value, r.capacity_bytes, r.target, r.replicas or 1
    margin = (f"{gib_text(cap)} per GPU after {r.headroom:.0%} headroom" if r.takes_headroom else
              f"{gib_text(cap)} CUDA total; vLLM's gpu_memory_utilization {r.workload.infer.gpu_memory_utilization:g} "
              "is the margin")
    value = f"{best:,}"
    if target == "concurrency" and copies > 1:
        value = f"{best:,} per replica, {best * copies:,} in total"
    words = r.layout
    echo(f"Largest {target.replace('_', ' ')} that fits {r.gpus} x {r.gpu} ({words + '; ' if words else ''}"
               f"{margin}): {value} (needs {gib_text(r.need_bytes)} per GPU)")
    if r.next_need_bytes is not None:
        per = " per replica" if target == "concurrency" and copies > 1 else ""
        echo(f"At {best + 1:,}{per} it needs {gib_text(r.next_need_bytes)} per GPU, "
                   f"{size_text(r.next_need_bytes - cap)} more.")
    elif best == r.limit:
        echo(f"That is the limit searched ({r.limited_by}).")
    if target == "gpu_layers":
        echo(f"Host RAM at {best}: {gib_text(r.estimate.host_total_bytes)} (the OS, the llama.cpp process, "
                   "token_embd and the host blocks with their KV cache; 'planner estimate' itemises it).")
    if target != "concurrency" and r.concurrency_per_replica is not None and copies > 1:
        c = r.concurrency_per_replica
        echo(f"Each of the {copies} replicas serves --concurrency {c:,} ({c * copies:,} sequences in total).")
    if r.speed is not None:
        s = r.speed
        if r.workload.train is not None:
            echo(f"Speed at {best:,} (planner.speed): {s.tokens_per_s:,.0f} training tokens/s, step {s.step_s:,.3f} s, "
                 f"MFU {s.mfu:.1%}" + (" (assumed rate)" if s.assumed else ""))
        else:
            echo(f"Speed at {best:,} (planner.speed): TPOT {s.tpot_s * 1e3:,.2f} ms, {s.output_tokens_per_s:,.0f} output "
                 f"tokens/s in all, TTFT {s.ttft_s:,.3f} s for a {s.prompt_tokens:,}-token prompt"
                 + (" (assumed rate)" if s.assumed else ""))
        told = unknown_architecture_note(cat, r.gpu)
        if told:
            echo(f"Note: {told}")
    for n in r.notes:
        echo(f"Note: {n}")
    for w in r.warnings:
        echo(f"Warning: {w}")
