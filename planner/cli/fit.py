"""The ``planner fit`` command: the largest micro-batch, sequence length, context or concurrency that fits a GPU."""

from __future__ import annotations

import json
from typing import Any

import click

from planner.cli import options as opts
from planner.cli.common import gib_text, handle_errors, size_text, vllm_context_note
from planner.cli.options import ESTIMATE_OPTIONS, collect_options, file_keys, option_gpu, vllm_headroom, workload_from_cli
from planner.core.errors import close_matches


#: The quantities `planner fit` can maximise: option -> (workload section, field).
FIT_TARGETS = {"micro_batch": ("train", "micro_batch"), "seq_len": ("train", "seq_len"),
                "context": ("infer", "context"), "concurrency": ("infer", "concurrency"),
                "gpu_layers": ("infer", "gpu_layers")}


def fit_options(fn):
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


@click.command(name="fit")
@click.option("--gpu", "gpu_id", required=True, help="A catalog GPU id.")
@click.option("--workload", "workload_file", type=click.Path(dir_okay=False),
              help="Workload YAML (same keys; options override them). The target is still an option: "
                   "--micro-batch, --seq-len, --context or --concurrency max.")
@click.option("--headroom", type=click.FloatRange(0, 0.95), default=0.05, show_default=True,
              help="Fraction of the GPU's CUDA total kept free (as vram_headroom in scenarios).")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@fit_options
@handle_errors
def fit(gpu_id: str, workload_file: str | None, headroom: float, catalog_dir: str | None, as_json: bool,
        **options: Any) -> None:
    """Find the largest micro-batch, sequence length, context or concurrency that fits a GPU.

    Give exactly one of --micro-batch, --seq-len, --context, --concurrency the value 'max';
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
    """
    import dataclasses

    from planner.plan.candidates import capacity_bytes, precision_needs
    from planner.core.errors import InfeasibleError
    from planner.workload.inputs import OptionError
    from planner.plan.solver import largest_fitting, largest_gpu_layers
    from planner.workload.spec import MAX_MICRO_BATCH

    catalog = opts.load_catalog_option(catalog_dir)
    gpu = option_gpu(catalog, gpu_id)
    given = collect_options(options)
    written = file_keys(workload_file)
    if "model" not in given and not workload_file:
        raise click.UsageError("give --model (or --workload FILE)")
    for k in FIT_TARGETS:
        v = given.get(k)
        if isinstance(v, str) and v != "max" and not v.strip().isdigit() and not (k == "gpu_layers" and v == "all"):
            raise OptionError(f"must be a whole number or 'max', not {v!r}", entry=k,
                              hint="Did you mean 'max'?" if close_matches(v.strip().lower(), ["max"]) else None)
    targets = [k for k in FIT_TARGETS if given.get(k) == "max"]
    if len(targets) != 1:
        raise click.UsageError("give exactly one of --micro-batch, --seq-len, --context, --concurrency, --gpu-layers "
                               "the value 'max'")
    target = targets[0]
    section, attr = FIT_TARGETS[target]
    for k in FIT_TARGETS:
        if k in given and k != target and not (k == "gpu_layers" and given[k] == "all"):
            try:
                given[k] = int(given[k])
            except ValueError:
                raise OptionError(f"must be a whole number or 'max', not {given[k]!r}", entry=k) from None
    given[target] = 1
    task = given.get("task", written.get("task"))
    if task is None:
        task = given["task"] = section
    if task != section:
        raise OptionError(f"is an option of task {section}, not {task}", entry=target,
                          hint=f"Give --task {section}, or another target for task {task}.")
    from planner.memory.vllm import cuda_total_bytes, for_gpu, vllm_budget

    # vllm serve's card defaults; the workload reader reads --gpus (training: data parallel x tp; inference:
    # N / tp replicas)
    base = for_gpu(workload_from_cli(catalog, workload_file, given, gpu), gpu)
    copies = base.infer.replicas if base.infer is not None else 1  # --gpus N (or gpus: N) is N / tp replicas
    n = base.gpus  # every GPU the answer uses (all replicas)
    headroom = vllm_headroom(base, headroom, click.get_current_context())
    missing = [f for f in precision_needs(base) if not getattr(gpu, f)]
    if missing:
        # only defaults reach here: a dtype the options or the file chose is refused at its key above
        raise InfeasibleError(f"{gpu.id} ({gpu.architecture}) has no {' or '.join(missing)} support, which this "
                              "workload's precision needs by default; use fp16 (recipe mixed-fp16 or pure-fp16; "
                              "weights and kv-dtype fp16) or another GPU.")
    cap = capacity_bytes(gpu.cuda_total_bytes, headroom)
    arch = base.architecture
    hi = arch.max_position_embeddings if attr in ("seq_len", "context") else MAX_MICRO_BATCH
    seqs_cap = (base.infer.max_num_seqs if attr == "concurrency" and base.infer is not None
                and base.infer.engine == "vllm" and base.infer.max_num_seqs else None)
    if seqs_cap:
        hi = min(hi, seqs_cap)  # vLLM runs at most max_num_seqs sequences at once
    # Transformers prefills at least one token of every sequence per pass: max_num_batched_tokens bounds
    # the concurrency (the workload reader refuses more)
    tokens_cap = (base.infer.max_num_batched_tokens if attr == "concurrency" and base.infer is not None
                  and base.infer.engine == "hf" and base.infer.max_num_batched_tokens else None)
    if tokens_cap:
        hi = min(hi, tokens_cap)

    def make(x: int):
        if section == "train":
            return dataclasses.replace(base, train=dataclasses.replace(base.train, **{attr: x}))
        return dataclasses.replace(base, infer=dataclasses.replace(base.infer, **{attr: x}))

    if attr == "gpu_layers":
        # llama.cpp: n_gpu_layers from 0 (nothing on the GPU but the compute buffer) to n_layer + 1;
        # scanned from the top, so the answer is exact whatever the shape of the need
        hi = arch.num_hidden_layers + 1
        best, need, next_need = largest_gpu_layers(make, cap, hi)
    else:
        best, need, next_need = largest_fitting(make, cap, 1, hi)
    from planner.memory import estimate as run_estimate

    count = f"{n} x {gpu.id}"
    layout = {"tp": base.tp}  # how the answer's GPUs are used, for JSON
    words = ""  # and in words
    if base.infer is not None:
        words = (f"{copies} replicas at tp {base.tp}" if copies > 1 else
                 f"one replica at tp {base.tp}" if base.tp > 1 else "")
        layout["replicas"] = copies
    elif base.tp > 1:
        ranks = base.gpus // base.tp
        words = f"tp {base.tp} x {ranks} data-parallel rank{'' if ranks == 1 else 's'}"
    # the estimate of the answer (or, when nothing fits, of the smallest value tried), as 'planner estimate'
    # would make it: its warnings are the answer's (the workload's warnings follow from its options,
    # Workload.warnings; the search stops below those the reader would refuse or warn about,
    # max_position_embeddings and max_num_seqs)
    answer = make(1 if best is None else best)
    answer_est = run_estimate(answer)
    warnings = list(answer_est.warnings)
    note = vllm_context_note(answer, "context" in given or "context" in written)
    if best is None:
        notes = list(answer_est.notes) + ([note] if note else [])
        laid_out = f"{count} ({words})" if words else count
        vllm = base.infer is not None and base.infer.engine == "vllm"
        margin = ("its CUDA total; vLLM's gpu_memory_utilization is the margin" if vllm else
                  f"{gib_text(gpu.cuda_total_bytes)} CUDA total less {headroom:.0%} headroom")
        hint = ""
        if vllm:  # set too high or too low, gpu_memory_utilization alone can be what misses
            from planner.plan.solver import utilization_that_fits

            one = make(1)
            hit = utilization_that_fits(
                lambda u: dataclasses.replace(one, infer=dataclasses.replace(one.infer, gpu_memory_utilization=u)),
                base.infer.gpu_memory_utilization, cap, gpu=gpu)
            if hit:
                hint = (f" At --gpu-memory-utilization {hit[0]:g} it needs {gib_text(hit[1])} and fits: vLLM keeps "
                        f"1 - gpu_memory_utilization of the card for the CUDA context and graphs.")
            else:
                hint = " No --gpu-memory-utilization makes it fit."
            # why vllm serve would refuse to start at 1, as 'planner estimate --gpu' says it
            one_est = run_estimate(one)
            budget = vllm_budget(one, one_est, cuda_total=cuda_total_bytes(gpu), gpu_id=gpu.id)
            warnings += [w for w in budget.problems(context=one.infer.context,
                                                    kv_bytes_per_token=one_est.extra.get("kv_bytes_per_token", 0))
                         if w not in warnings]
        if as_json:  # scripts get a document either way, as with plan --json
            click.echo(json.dumps({"gpu": gpu.id, "gpus": n, **layout, "target": target, "max_value": None,
                                   "fits": False, "need_bytes": need, "capacity_bytes": cap,
                                   "cuda_total_bytes": gpu.cuda_total_bytes, "headroom": headroom,
                                   "notes": notes, "warnings": warnings}, indent=2))
        # what estimate says of the workload at 1, as the answer's notes and warnings are printed when it fits
        said = "".join(f"\nNote: {x}" for x in notes) + "".join(f"\nWarning: {w}" for w in warnings)
        raise InfeasibleError(f"Nothing fits: at {target}=1 the workload needs {gib_text(need or 0)} per GPU; "
                              f"{laid_out} offers {gib_text(cap)} per GPU ({margin}).{hint}{said}")
    longest = arch.max_position_embeddings
    if target == "context" and answer.infer is not None and answer.infer.engine == "vllm" and best < longest:
        # the answer is the context: vllm serve must be told it, or it takes the model's maximum
        fit = vllm_budget(answer, answer_est, cuda_total=cuda_total_bytes(gpu),
                          gpu_id=gpu.id).longest_model_len(longest)
        note = (f"vLLM: start vllm serve with --max-model-len {best} (the answer): it defaults to the model's "
                f"maximum, {longest:,} tokens"
                + (f", and refuses to start when one sequence that long does not fit the KV cache (at most "
                   f"{fit:,} tokens here)" if fit < longest else "") + ".")
    result = {"gpu": gpu.id, "gpus": n, **layout, "target": target, "max_value": best, "need_bytes": need,
              "capacity_bytes": cap, "cuda_total_bytes": gpu.cuda_total_bytes, "headroom": headroom,
              "next_need_bytes": next_need, "limit": hi,
              "limited_by": (f"vLLM's max_num_seqs ({seqs_cap:,})" if seqs_cap and hi == seqs_cap else
                             f"max_num_batched_tokens ({tokens_cap:,}): Transformers prefills at least one token "
                             "of every sequence per pass" if tokens_cap and hi == tokens_cap else
                             "the model's max_position_embeddings" if attr in ("seq_len", "context")
                             else "the planner's largest batch") if best == hi else "memory",
              "notes": list(answer_est.notes) + ([note] if note else []), "warnings": warnings}
    if answer.infer is not None:
        # concurrency is per replica (the workload as sized); the machine serves copies x that
        result.update(concurrency_per_replica=answer.infer.concurrency,
                      concurrency_total=answer.infer.concurrency * copies)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from planner.plan.candidates import takes_headroom

    margin = (f"{gib_text(cap)} per GPU after {headroom:.0%} headroom" if takes_headroom(base) else
              f"{gib_text(cap)} CUDA total; vLLM's gpu_memory_utilization {base.infer.gpu_memory_utilization:g} "
              "is the margin")
    value = f"{best:,}"
    if target == "concurrency" and copies > 1:
        value = f"{best:,} per replica, {best * copies:,} in total"
    click.echo(f"Largest {target.replace('_', ' ')} that fits {count} ({words + '; ' if words else ''}{margin}): "
               f"{value} (needs {gib_text(need)} per GPU)")
    if next_need is not None:
        per = " per replica" if target == "concurrency" and copies > 1 else ""
        click.echo(f"At {best + 1:,}{per} it needs {gib_text(next_need)} per GPU, {size_text(next_need - cap)} more.")
    elif best == hi:
        click.echo(f"That is the limit searched ({result['limited_by']}).")
    if target != "concurrency" and answer.infer is not None and copies > 1:
        c = answer.infer.concurrency
        click.echo(f"Each of the {copies} replicas serves --concurrency {c:,} ({c * copies:,} sequences in total).")
    for n_ in result["notes"]:
        click.echo(f"Note: {n_}")
    for w in warnings:
        click.echo(f"Warning: {w}")
