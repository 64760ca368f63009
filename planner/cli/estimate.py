"""The ``planner estimate`` command: GPU memory per card and host RAM for one workload."""

from __future__ import annotations

from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import (echo, given_on_command_line, handle_errors, input_file_option, one_catalog, size_text,
                                verbose_option)
from planner.cli.options import estimate_options
from planner.core.escape import json_text


@click.command(name="estimate", cls=opts.BoolSpellingCommand)
@click.option("--workload", "workload_file", type=opts.PathType(dir_okay=False), callback=input_file_option,
              help="Workload YAML (same keys).")
@click.option("--catalog", "catalog_dir", type=opts.PathType(file_okay=False), multiple=True,
              callback=one_catalog, help="Catalog overlay directory.")
@click.option("--gpu", "gpu_id", help="A catalog GPU: also report whether the need fits it (and vLLM capacity).")
@click.option("--calibration", "calibration_file", type=opts.PathType(dir_okay=False),
              help="Calibration file from 'planner calibrate' (default $XDG_CONFIG_HOME/planner/calibration.yaml, "
                   "else ~/.config/planner/calibration.yaml); "
                   "used with --gpu when it holds that GPU.")
@click.option("--headroom", default=0.05, show_default=True, type=opts.FloatRange(0, 0.95),
              help="With --gpu: fraction of the GPU's CUDA total kept free (as vram_headroom in scenarios).")
@click.option("--prompt-tokens", "prompt_tokens", type=opts.IntRange(min=1),
              help="With --gpu, inference: prompt tokens of the request the speed model times (default: the "
                   "context less the output).")
@click.option("--output-tokens", "output_tokens", type=opts.IntRange(min=1),
              help="With --gpu, inference: generated tokens of that request (default 256, at most half the context).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@verbose_option
@estimate_options
@handle_errors
def estimate(workload_file: str | None, catalog_dir: str | None, gpu_id: str | None, calibration_file: str | None,
             headroom: float, prompt_tokens: int | None, output_tokens: int | None, as_json: bool, verbose: bool,
             **options: Any) -> None:
    """Estimate GPU memory per card and host RAM for one workload, component by component.

    The text fits the terminal (COLUMNS, else 100 when unknown); --verbose adds each component's
    formula and source, which --json always holds.

    \b
    Example:
      planner estimate --model llama-2-7b --task train --method full --recipe mixed-bf16 \\
        --optimizer adamw --micro-batch 4 --seq-len 2048 --gpus 1 --zero 0 --checkpointing none
      planner estimate --model llama-3.1-8b --task infer --weights bf16 --context 4096 --concurrency 8
      planner estimate --workload scenarios/workloads/qlora-7b.yaml --json
    """
    from planner.api import estimate as run_estimate
    from planner.report.render import estimate_text

    cat = opts.load_catalog_option(catalog_dir)
    r = run_estimate(workload=workload_file, catalog=cat, gpu=gpu_id,
                     calibration=calibration_file if given_on_command_line("calibration_file") else None,
                     headroom=headroom if given_on_command_line("headroom") else None, prompt_tokens=prompt_tokens,
                     output_tokens=output_tokens, **options)
    if as_json:
        click.echo(json_text(r.to_dict(), indent=2))
        return
    workload, copies = r.workload, r.replicas
    from planner.core.textfit import terminal_width

    echo(estimate_text(r.estimate, width=terminal_width(), verbose=verbose))
    if copies > 1:
        echo(f"Replicas: --gpus {workload.infer.tp * copies} at --tp {workload.infer.tp} hold {copies} replicas; "
                   f"the need is per GPU of each, and each serves --concurrency {workload.infer.concurrency:,} "
                   f"({workload.infer.concurrency * copies:,} sequences in total).")
    if r.notes_for_compare:
        echo(f"Note: {', '.join(r.notes_for_compare)} feed 'planner compare' (job time and cost), not the memory "
                   "estimate.")
    if r.gpu is not None:
        _gpu_lines(r)
    if r.speed is not None:
        _speed_lines(r, verbose)
        told = unknown_architecture_note(cat, r.gpu.id) if r.gpu is not None else None
        if told:
            echo(f"Note: {told}")
    if r.context_note:
        echo(f"Note: {r.context_note}")
    if r.layers_note:
        echo(f"Note: {r.layers_note}")


def unknown_architecture_note(cat: Any, gpu_id: str) -> str | None:
    """What the speed model assumed for a GPU whose catalog ``architecture`` is none it has figures for
    (planner.catalog.gpus.KNOWN_ARCHITECTURES: an overlay's new generation), or None: its GEMM and attention
    efficiencies are the unknown-architecture assumptions (planner.speed.constants GEMM_EFFICIENCY_UNKNOWN,
    ATTENTION_EFFICIENCY_UNKNOWN), and a per-architecture rule (CDNA's own mfu_scale handling) does not apply."""
    from planner.catalog.gpus import KNOWN_ARCHITECTURES

    gpu = cat.gpu(gpu_id)
    arch = str(getattr(gpu, "architecture", "") or "")
    if arch.lower() in KNOWN_ARCHITECTURES:
        return None
    return (f"GPU {gpu_id!r} has the architecture {arch!r}, none the speed model has figures for "
            f"({', '.join(KNOWN_ARCHITECTURES)}): its GEMM and attention efficiencies are the assumed ones for an "
            "unknown architecture, and no per-architecture rule applies.")


def _speed_lines(r: Any, verbose: bool) -> None:
    """The short Speed section: the speed model's figures on the card (planner.speed)."""
    s = r.speed
    mark = " (assumed: rests on a rate with no published measurement for this card)" if s.assumed else ""
    echo("")
    echo("Speed (planner.speed; --json lists every part with its formula and source):")
    if r.workload.train is not None:
        echo(f"  {s.tokens_per_s:,.0f} training tokens/s on {r.workload.train.gpus} GPU(s){mark}; one optimizer step "
             f"of {s.tokens_per_step:,.0f} tokens = {s.step_s:,.3f} s; MFU {s.mfu:.1%}")
    else:
        echo(f"  request of {s.prompt_tokens:,} prompt + {s.output_tokens:,} output tokens at concurrency "
             f"{s.concurrency:,}{mark}: TTFT {s.ttft_s:,.3f} s, TPOT {s.tpot_s * 1e3:,.2f} ms, request "
             f"{s.request_s:,.2f} s")
        echo(f"  prefill {s.prefill_tokens_per_s:,.0f} tokens/s; decode {s.output_tokens_per_s:,.0f} output tokens/s "
             f"over {s.concurrency * s.replicas:,} sequence(s)")
        if s.concurrency > 1:
            import math

            steady = (f"TTFT {s.steady_ttft_s:,.3f} s ({s.prompt_wait_s:,.3f} s of it waiting for the prompts queued "
                      f"ahead, M/D/1), TPOT {s.steady_tpot_s * 1e3:,.2f} ms, request {s.steady_request_s:,.2f} s"
                      if math.isfinite(s.steady_tpot_s) else "the replica cannot keep up (prefill takes all its time)")
            echo(f"  under load (plan's slo: check): the other {s.concurrency - 1:,} users' prompts are prefilled between "
                 f"decode steps, {s.prefill_share:.0%} of the time: {steady}")
            echo(f"  static batch of {s.concurrency:,} (plan's cost per request): {s.batch_prefill_s:,.3f} s prefill + "
                 f"{s.output_tokens:,} steps = {s.batch_tokens_per_s:,.0f} output tokens/s")
    top = sorted(s.parts, key=lambda p: -p.seconds)[: (len(s.parts) if verbose else 3)]
    echo("  largest parts: " + "; ".join(f"{p.name} {p.seconds * 1e3:,.2f} ms" for p in top if p.seconds > 0))


def _gpu_lines(r: Any) -> None:
    """The fit check on the card (and vLLM's KV budget there), as printed under the breakdown."""
    g, workload = r.gpu, r.workload
    verdict = "fits" if g.fits else "does NOT fit"
    why = f" ({g.id} has no {' or '.join(g.unsupported_precision)} support)" if g.unsupported_precision else ""
    margin = (f"{g.capacity_bytes / 2**30:,.2f} GiB after {g.headroom_fraction:.0%} headroom" if r.takes_headroom else
              f"vLLM's gpu_memory_utilization {workload.infer.gpu_memory_utilization:g} is the margin")
    if g.headroom_bytes < 0:
        rest = f"short by {size_text(-g.headroom_bytes)}"
    elif r.takes_headroom:
        rest = f"spare {size_text(g.headroom_bytes)}"
    else:  # vLLM takes its share of the card whatever the need and gives the rest to the KV cache
        rest = (f"{size_text(g.headroom_bytes)} beyond the need, which vLLM does not leave free: it takes "
                f"gpu_memory_utilization of the card and gives what weights and peak leave to the KV cache")
    echo(f"On {g.id} ({g.cuda_total_bytes / 2**30:,.2f} GiB CUDA total, {margin}): {verdict}{why}, {rest}")
    if g.fragmentation_risk:
        echo(f"Warning: {g.fragmentation_risk}.")
    if not g.fits and not g.unsupported_precision:
        # the levers planner.api.fits.what_would_fit tries, per task
        target, levers = (("--micro-batch max", "checkpointing, ZeRO, offload, LoRA/QLoRA, more GPUs")
                          if workload.train is not None else
                          ("--concurrency max", "vLLM, an fp8 KV cache, fp8 or int4 weights, tensor parallel"))
        echo(f"Hint: 'planner fit' with these options and {target} names the settings that would fit "
             f"{g.id} ({levers}), each checked with the memory model.")
    if g.vllm is None:
        return
    v = g.vllm
    gib = 2**30
    echo(f"vLLM: {workload.infer.gpu_memory_utilization:g} x CUDA total {v['cuda_total_bytes'] / gib:,.2f}"
               f" GiB = {v['usable_bytes'] / gib:,.2f} GiB; weights {v['weights_bytes'] / gib:,.2f} GiB, "
               f"profile peak {v['profile_peak_bytes'] / gib:,.2f} GiB (max_num_batched_tokens "
               f"{v['max_num_batched_tokens']:,}, max_num_seqs {v['max_num_seqs']:,}), non-torch "
               f"{v['non_torch_bytes'] / gib:,.2f} GiB; KV cache {v['budget_bytes'] / gib:,.2f} GiB")
    seqs = v["sequences_at_context"]  # by vLLM's KV bytes per request (planner.memory.vllm.SequenceKv)
    cap = f"; vLLM runs at most max_num_seqs {v['max_num_seqs']:,} at once" if seqs > v["max_num_seqs"] else ""
    win = (f", sliding-window layers holding {v['kv_window_tokens_per_sequence']:,} tokens"
           if v["kv_window_tokens_per_sequence"] else "")
    echo(f"vLLM: {v['kv_tokens']:,} KV tokens fit ({v['kv_blocks']:,} blocks of 16), "
               f"{seqs:,} sequence{'' if seqs == 1 else 's'} of {workload.infer.context:,} tokens "
               f"({v['kv_bytes_per_sequence'] / gib:,.2f} GiB of KV each{win}){cap}")
    for problem in v["problems"]:
        echo(f"Warning: vLLM: {problem}.")
