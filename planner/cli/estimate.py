"""The ``planner estimate`` command: GPU memory per card and host RAM for one workload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import handle_errors, size_text, vllm_context_note
from planner.cli.options import collect_options, estimate_options, file_keys, option_gpu, vllm_headroom, workload_from_cli


@click.command(name="estimate")
@click.option("--workload", "workload_file", type=click.Path(dir_okay=False), help="Workload YAML (same keys).")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--gpu", "gpu_id", help="A catalog GPU: also report whether the need fits it (and vLLM capacity).")
@click.option("--calibration", "calibration_file", type=click.Path(dir_okay=False),
              help="Calibration file from 'planner calibrate' (default ~/.config/planner/calibration.yaml); "
                   "used with --gpu when it holds that GPU.")
@click.option("--headroom", default=0.05, show_default=True, type=click.FloatRange(0, 0.95),
              help="With --gpu: fraction of the GPU's CUDA total kept free (as vram_headroom in scenarios).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@estimate_options
@handle_errors
def estimate(workload_file: str | None, catalog_dir: str | None, gpu_id: str | None, calibration_file: str | None,
             headroom: float, as_json: bool, **options: Any) -> None:
    """Estimate GPU memory per card and host RAM for one workload, component by component.

    \b
    Example:
      planner estimate --model llama-2-7b --task train --method full --recipe mixed-bf16 \\
        --optimizer adamw --micro-batch 4 --seq-len 2048 --gpus 1 --zero 0 --checkpointing none
      planner estimate --model llama-3.1-8b --task infer --weights bf16 --context 4096 --concurrency 8
      planner estimate --workload scenarios/workloads/qlora-7b.yaml --json
    """
    from planner.memory import estimate as run_estimate
    from planner.memory.vllm import cuda_total_bytes, for_gpu, vllm_budget
    from planner.report.render import estimate_text, estimate_to_dict

    from planner.workload.inputs import OptionError

    ctx = click.get_current_context()
    if gpu_id is None:
        for name in ("headroom", "calibration_file"):
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
                flag = "--headroom" if name == "headroom" else "--calibration"
                raise OptionError(f"{flag} applies to the fit check on a card: give --gpu ID with it", entry=flag,
                                  hint=f"For example --gpu h100-sxm ('planner catalog gpus' lists the ids), or leave "
                                       f"{flag} out.")
    catalog = opts.load_catalog_option(catalog_dir)
    gpu = option_gpu(catalog, gpu_id) if gpu_id else None
    given = collect_options(options)
    written = file_keys(workload_file)
    workload = workload_from_cli(catalog, workload_file, given, gpu)
    if gpu is not None:
        # vllm serve's defaults for max_num_batched_tokens / max_num_seqs depend on the card
        workload = for_gpu(workload, gpu)
        headroom = vllm_headroom(workload, headroom, ctx)
    overheads = None
    if gpu is not None:
        from planner.validate.calibrate import default_path, overheads_for_gpu

        overheads = overheads_for_gpu(gpu.name, Path(calibration_file) if calibration_file else default_path())
    est = run_estimate(workload, overheads)
    result = estimate_to_dict(est)
    if gpu is not None:
        from planner.plan.candidates import capacity_bytes, precision_needs, takes_headroom

        need = est.per_gpu_total_bytes
        capacity = capacity_bytes(gpu.cuda_total_bytes, headroom)
        missing = [f for f in precision_needs(workload) if not getattr(gpu, f)]
        result["gpu"] = {"id": gpu.id, "memory_usable_bytes": gpu.memory_usable_bytes,
                         "cuda_total_bytes": gpu.cuda_total_bytes,
                         "headroom_fraction": headroom, "capacity_bytes": capacity,
                         "fits": need <= capacity and not missing,
                         "unsupported_precision": missing,
                         "headroom_bytes": capacity - need}
        if workload.infer is not None and workload.infer.engine != "llama.cpp":  # vLLM's budget has no llama.cpp meaning
            vb = vllm_budget(workload, est, cuda_total=cuda_total_bytes(gpu), gpu_id=gpu.id)
            result["gpu"]["vllm"] = vb.as_dict()
            result["gpu"]["vllm"]["longest_max_model_len"] = vb.longest_model_len(
                workload.architecture.max_position_embeddings)
            result["gpu"]["vllm"]["problems"] = vb.problems(
                context=workload.infer.context, kv_bytes_per_token=est.extra.get("kv_bytes_per_token", 0))
            # sequences of the full context the KV budget holds, by vLLM's per-request KV (sliding-window
            # layers keep a window, not the context: planner.memory.vllm.sequence_kv)
            result["gpu"]["vllm"]["max_concurrency_at_context"] = result["gpu"]["vllm"]["sequences_at_context"]
    # keys that feed `planner compare` (time and cost), not the memory estimate: said, not dropped
    timing = [k for k, v in (("dataset_tokens", workload.train and workload.train.dataset_tokens),
                             ("epochs", workload.train and workload.train.epochs != 1.0),
                             ("hours_per_month", workload.hours_per_month),
                             ("tokens_per_request", workload.infer and workload.infer.tokens_per_request),
                             ("requests_per_hour", workload.infer and workload.infer.requests_per_hour is not None))
              if v]
    if timing:
        result["notes_for_compare"] = timing
    # the workload's replicas: --gpus N (or a file's gpus: N) holds N / tp of them
    copies = workload.infer.replicas if workload.infer is not None else 1
    if workload.infer is not None:
        # the per-GPU need is one replica's (tp GPUs: 'gpus' in JSON); host RAM counts every replica on a
        # machine ('gpus_per_node' is the machine's GPUs)
        result.update(gpus=workload.infer.tp, replicas=copies, gpus_total=workload.infer.tp * copies,
                      concurrency_total=workload.infer.concurrency * copies)
    context_note = vllm_context_note(workload, "context" in given or "context" in written,
                                      result.get("gpu", {}).get("vllm", {}).get("longest_max_model_len"))
    if context_note:
        result["notes"].append(context_note)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(estimate_text(est))
    if copies > 1:
        click.echo(f"Replicas: --gpus {workload.infer.tp * copies} at --tp {workload.infer.tp} hold {copies} replicas; "
                   f"the need is per GPU of each, and each serves --concurrency {workload.infer.concurrency:,} "
                   f"({workload.infer.concurrency * copies:,} sequences in total).")
    if timing:
        click.echo(f"Note: {', '.join(timing)} feed 'planner compare' (job time and cost), not the memory estimate.")
    if gpu_id:
        g = result["gpu"]
        verdict = "fits" if g["fits"] else "does NOT fit"
        why = f" ({g['id']} has no {' or '.join(g['unsupported_precision'])} support)" if g["unsupported_precision"] \
            else ""
        margin = (f"{g['capacity_bytes'] / 2**30:,.2f} GiB after {g['headroom_fraction']:.0%} headroom"
                  if takes_headroom(workload) else
                  f"vLLM's gpu_memory_utilization {workload.infer.gpu_memory_utilization:g} is the margin")
        if g["headroom_bytes"] < 0:
            rest = f"short by {size_text(-g['headroom_bytes'])}"
        elif takes_headroom(workload):
            rest = f"spare {size_text(g['headroom_bytes'])}"
        else:  # vLLM takes its share of the card whatever the need and gives the rest to the KV cache
            rest = (f"{size_text(g['headroom_bytes'])} beyond the need, which vLLM does not leave free: it takes "
                    f"gpu_memory_utilization of the card and gives what weights and peak leave to the KV cache")
        click.echo(f"On {g['id']} ({g['cuda_total_bytes'] / 2**30:,.2f} GiB CUDA total, {margin}): "
                   f"{verdict}{why}, {rest}")
        if "vllm" in g:
            v = g["vllm"]
            gib = 2**30
            click.echo(f"vLLM: {workload.infer.gpu_memory_utilization:g} x CUDA total {v['cuda_total_bytes'] / gib:,.2f}"
                       f" GiB = {v['usable_bytes'] / gib:,.2f} GiB; weights {v['weights_bytes'] / gib:,.2f} GiB, "
                       f"profile peak {v['profile_peak_bytes'] / gib:,.2f} GiB (max_num_batched_tokens "
                       f"{v['max_num_batched_tokens']:,}, max_num_seqs {v['max_num_seqs']:,}), non-torch "
                       f"{v['non_torch_bytes'] / gib:,.2f} GiB; KV cache {v['budget_bytes'] / gib:,.2f} GiB")
            seqs = v["sequences_at_context"]  # by vLLM's KV bytes per request (planner.memory.vllm.SequenceKv)
            cap = (f"; vLLM runs at most max_num_seqs {v['max_num_seqs']:,} at once" if seqs > v["max_num_seqs"]
                   else "")
            win = (f", sliding-window layers holding {v['kv_window_tokens_per_sequence']:,} tokens"
                   if v["kv_window_tokens_per_sequence"] else "")
            click.echo(f"vLLM: {v['kv_tokens']:,} KV tokens fit ({v['kv_blocks']:,} blocks of 16), "
                       f"{seqs:,} sequence{'' if seqs == 1 else 's'} of {workload.infer.context:,} tokens "
                       f"({v['kv_bytes_per_sequence'] / gib:,.2f} GiB of KV each{win}){cap}")
            for p in v["problems"]:
                click.echo(f"Warning: vLLM: {p}.")
    if context_note:
        click.echo(f"Note: {context_note}")
