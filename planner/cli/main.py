"""Command-line interface: thin commands over the library.

Exit codes: 0 success; 1 no feasible plan (the explanation is printed); 2 bad input (one
line: ``Error: <file>:<line>: <entry>: <problem>. <hint>``). Tracebacks only with ``--debug``.
Heavy modules (pandas, openpyxl, scipy) are imported inside the commands that need them, so
``planner --help`` starts fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from planner.cli.common import _fail, handle_errors
from planner.core.errors import close_matches

EXIT_CODES_HELP = (
    "Exit codes: 0 success; 1 nothing feasible (the reasons are printed); 2 bad input, one line "
    "'Error: <file>:<line>: <entry>: <problem>. <hint>'. Add --debug for a traceback."
)


class _LineError(click.UsageError):
    """A usage error found while click parses the options, already in the one-line form
    ('--option: problem. hint'), which :func:`_usage_line` prints as it is."""

    def __init__(self, line: str, ctx: click.Context | None = None) -> None:
        super().__init__(line, ctx)
        self.line = line


#: Options a command does not take although a sibling does: (why not, what to do instead), so that
#: the refusal explains itself instead of guessing at a similar name ('--headroom' -> '--zero').
_NOT_TAKEN = {
    "calibrate": {
        "--gpu": ("it measures the GPU it runs on rather than a catalog card",
                  "Pick the card with CUDA_VISIBLE_DEVICES=N; 'planner estimate --gpu ID' then uses the saved "
                  "calibration for that GPU model."),
        "--headroom": ("it measures what the run uses; the planning headroom belongs to the fit check on a catalog "
                       "card",
                       "Give --headroom to 'planner estimate --gpu ID' or 'planner fit'."),
        "--calibration": ("it writes the calibration file rather than reading one", "Name the file with --out FILE."),
    },
}


def _usage_line(exc: click.UsageError) -> str:
    """A click usage error (unknown option, bad value, missing argument) as one line with a hint."""
    if isinstance(exc, _LineError):
        return exc.line
    problem = " ".join(exc.format_message().split())
    if not problem.endswith((".", "?", "!")):
        problem += "."
    path = exc.ctx.command_path if exc.ctx is not None else "planner"
    if isinstance(exc, click.NoSuchOption) and exc.option_name == "--debug":
        root = exc.ctx.find_root().command_path if exc.ctx is not None else "planner"
        return f"{problem} --debug goes before the command: '{root} --debug {path.split()[-1]} ...'."
    if isinstance(exc, click.NoSuchOption) and exc.ctx is not None:
        why = _NOT_TAKEN.get(exc.ctx.command.name or "", {}).get(exc.option_name)
        if why is not None:
            return f"{exc.option_name}: '{path}' takes no {exc.option_name}: {why[0]}. {why[1]}"
    return f"{problem} See '{path} --help'."


class _Count(click.ParamType):
    """A whole number for --micro-batch, --seq-len, --context, --concurrency; 'max' points to 'planner fit'."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() == "max" and param is not None:
            opt = param.opts[0]
            command = ctx.command_path if ctx is not None else "planner"
            raise _LineError(f"{opt}: '{command}' takes a whole number, not 'max'. 'planner fit' finds the largest "
                             f"{opt[2:].replace('-', ' ')} that fits a card: planner fit --gpu ID {opt} max (with the "
                             "same other options).", ctx)
        return click.INT.convert(value, param, ctx)


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(click.Group):
    """The command group; in standalone mode a usage error is one line 'Error: ...' and exit 2.

    Click would print the usage, a blank line and the error; the planner reports every bad input
    the same way, as one line (see EXIT_CODES_HELP).
    """

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS as exc:  # bare 'planner': the help, as click shows it
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            _fail(_usage_line(exc), exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(name="planner", cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="planner")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Size and price hardware for deep-learning work: memory model, catalog, solver, quotes."""
    ctx.obj = {"debug": debug}


def _load_catalog(catalog_dir: str | None):
    from planner.catalog.loader import load_catalog

    return load_catalog(Path(catalog_dir) if catalog_dir else None)


def _option_gpu(catalog: Any, gpu_id: str) -> Any:
    """The catalog GPU named by --gpu; an unknown id is an error located at the option."""
    from planner.core.errors import CatalogError
    from planner.workload.inputs import OptionError

    try:
        return catalog.gpu(gpu_id)
    except CatalogError as exc:
        raise OptionError(exc.problem, entry="gpu", hint=exc.hint) from None


# ----- estimate ---------------------------------------------------------------------------------

_ESTIMATE_OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("--model", dict(help="Catalog id, path to a config.json, or a hub id in the local HF cache.")),
    ("--task", dict(type=click.Choice(["train", "infer"]), help="train or infer.")),
    ("--method", dict(type=click.Choice(["full", "lora", "qlora"]), help="Training method (default full).")),
    ("--recipe", dict(help="Precision recipe: fp32, amp-bf16, amp-fp16, mixed-bf16, mixed-bf16-fp32-grads, "
                      "pure-bf16 and the fp16 variants (default mixed-bf16; pure-bf16 for LoRA/QLoRA).")),
    ("--optimizer", dict(help="adamw, adamw-8bit, sgd, sgd-momentum, adafactor, lion (default adamw).")),
    ("--micro-batch", dict(type=_Count(), help="Sequences per GPU per forward pass.")),
    ("--seq-len", dict(type=_Count(), help="Tokens per training sequence.")),
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
                                "mxfp4 (MXFP4 checkpoints such as gpt-oss).")),
    ("--group-size", dict(type=int, help="GPTQ/AWQ group size.")),
    ("--kv-dtype", dict(help="KV cache dtype: fp32, fp16, bf16, fp8.")),
    ("--context", dict(type=_Count(), help="Tokens per sequence in the KV cache.")),
    ("--concurrency", dict(type=_Count(), help="Sequences served at once (per replica).")),
    ("--engine", dict(type=click.Choice(["hf", "vllm"]), help="Inference engine.")),
    ("--gpu-memory-utilization", dict(type=float, help="vLLM's share of the card.")),
    ("--max-num-batched-tokens", dict(type=int, help="Tokens prefilled per forward pass.")),
    ("--max-num-seqs", dict(type=int, help="vLLM's cap on sequences per step (default: vllm serve's).")),
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


def _file_keys(workload_file: str | None) -> dict[str, Any]:
    """The keys of a --workload file as written; empty when there is none or it cannot be read
    (reading the workload then reports the problem where it is)."""
    if not workload_file:
        return {}
    from planner.core.yamlio import YamlProblem, load_mapping

    try:
        return load_mapping(Path(workload_file))  # a dict that knows each key's line (.lines)
    except (YamlProblem, OSError, ValueError):
        return {}


def _tp_from_gpus(given: dict[str, Any], written: dict[str, Any]) -> bool:
    """Whether an inference workload's tp comes from --gpus N: no tp was given (option or --workload file
    key), so the N GPUs are one replica at tp N (the workload reader, planner.workload.spec, reads gpus and tp
    and refuses a count that does not hold whole replicas; ``written``: the file's keys, if any)."""
    return (given.get("task", written.get("task")) == "infer" and "gpus" in given and "tp" not in given
            and "tp" not in written)


def _workload_from_cli(catalog: Any, workload_file: str | None, given: dict[str, Any], gpu: Any = None) -> Any:
    """The workload of --workload FILE (options override its keys) or of the options alone.

    ``given``: the options given (:func:`_collect`). With ``gpu`` (--gpu), dtypes that GPU has no
    support for are refused at the key that chose them. --gpus is read by the workload reader, as a
    file's gpus: key is (for inference N / tp replicas, without tp one replica at tp N).
    """
    from planner.workload.inputs import load_workload_file, workload_from_options

    if workload_file:
        return load_workload_file(Path(workload_file), catalog, given, shown=workload_file, gpu=gpu)
    if "model" not in given:
        raise click.UsageError("give --model (and --task), or --workload FILE")
    return workload_from_options(given, catalog, gpu=gpu)


def _vllm_context_note(workload: Any, context_given: bool, longest_fit: int | None = None) -> str | None:
    """For engine vllm with the context left at its default: the --max-model-len vllm serve needs.

    ``vllm serve`` sets max_model_len to the model's maximum unless told otherwise, and refuses to
    start when one sequence that long does not fit its KV cache; the plan sized the default context.
    ``longest_fit``: the longest max_model_len vLLM starts with on the card, when known
    (:meth:`planner.memory.vllm.VllmBudget.longest_model_len`).
    """
    i = workload.infer
    longest = workload.architecture.max_position_embeddings
    if i is None or i.engine != "vllm" or context_given or i.context >= longest:
        return None
    note = (f"vLLM: the plan assumes context {i.context:,} (the default); start vllm serve with --max-model-len "
            f"{i.context}: it defaults to the model's maximum, {longest:,} tokens")
    if longest_fit is not None and longest_fit < longest:
        note += (", and refuses to start when one sequence that long does not fit the KV cache ("
                 + (f"at most {longest_fit:,} tokens here)" if longest_fit else "no KV cache is left here)"))
    return note + "."


@main.command()
@click.option("--workload", "workload_file", type=click.Path(dir_okay=False), help="Workload YAML (same keys).")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--gpu", "gpu_id", help="A catalog GPU: also report whether the need fits it (and vLLM capacity).")
@click.option("--calibration", "calibration_file", type=click.Path(dir_okay=False),
              help="Calibration file from 'planner calibrate' (default ~/.config/planner/calibration.yaml); "
                   "used with --gpu when it holds that GPU.")
@click.option("--headroom", default=0.05, show_default=True, type=click.FloatRange(0, 0.95),
              help="With --gpu: fraction of the GPU's CUDA total kept free (as vram_headroom in scenarios).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_estimate_options
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
    catalog = _load_catalog(catalog_dir)
    gpu = _option_gpu(catalog, gpu_id) if gpu_id else None
    given = _collect(options)
    written = _file_keys(workload_file)
    workload = _workload_from_cli(catalog, workload_file, given, gpu)
    if gpu is not None:
        # vllm serve's defaults for max_num_batched_tokens / max_num_seqs depend on the card
        workload = for_gpu(workload, gpu)
        headroom = _vllm_headroom(workload, headroom, ctx)
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
        if workload.infer is not None:
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
    context_note = _vllm_context_note(workload, "context" in given or "context" in written,
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
            rest = f"short by {_size_text(-g['headroom_bytes'])}"
        elif takes_headroom(workload):
            rest = f"spare {_size_text(g['headroom_bytes'])}"
        else:  # vLLM takes its share of the card whatever the need and gives the rest to the KV cache
            rest = (f"{_size_text(g['headroom_bytes'])} beyond the need, which vLLM does not leave free: it takes "
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


def _size_text(n: int) -> str:
    """A margin in GiB, or in MiB when under 0.01 GiB (so 'short by 0.00 GiB' never reads as nothing)."""
    return f"{n / 2**30:,.2f} GiB" if n >= 2**30 // 100 else f"{n / 2**20:,.1f} MiB"


def _with_undefined_sources(result: Any, index: Any) -> Any:
    """The plan with a warning naming the REF ids its quote lines cite that ``index`` (the
    :class:`planner.catalog.sources.SourceIndex` of the catalog's SOURCES.md, :func:`planner.report.xlsx.plan_references`)
    does not define (the workbook's Sources sheet marks them too; the console and JSON say it here)."""
    import dataclasses

    from planner.catalog.sources import ref_ids

    missing: dict[str, list[str]] = {}
    for item in result.items:
        for ref in ref_ids(item.source):
            if ref not in index:
                missing.setdefault(ref, []).append(item.catalog_id or item.description)
    if not missing:
        return result
    text = "; ".join(f"REF:{ref} ({', '.join(dict.fromkeys(ids))})" for ref, ids in missing.items())
    return dataclasses.replace(result, warnings=tuple(result.warnings) + (
        f"price sources cited but defined in no SOURCES.md beside the catalog: {text}; add them to the overlay's "
        "SOURCES.md so the quote can be traced",))


def _vllm_headroom(workload: Any, headroom: float, ctx: click.Context) -> float:
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


# ----- plan ---------------------------------------------------------------------------------------

def _gib_text(n: float) -> str:
    return f"{n / 2**30:,.2f} GiB"


def _plan_text(plan: Any, width: int = 200) -> str:
    """The recommendation for the terminal: machine, price, per-GPU need vs capacity, recipe, quote."""
    import pandas as pd

    c = plan.choice
    lines = [f"Scenario {plan.scenario}: {len(plan.estimates)} workload(s); {len(plan.candidates):,} candidates, "
             f"{int(plan.candidates['feasible'].sum()):,} feasible.", ""]
    nodes = int(c["nodes"])
    machine = f"{int(c['cards_per_node'])} x {c['gpu_id']} on {c['platform_id']}"
    if c["dimm_id"]:
        machine += f", {int(c['dimm_count'])} x {c['dimm_id']} ({_gib_text(c['ram_bytes'])} RAM)"
    if nodes > 1:
        machine = (f"{nodes} nodes of [{machine}] + {int(c['nic_count'])} x {c['nic_id']}"
                   + (f" + {c['switch_id']}" if c["switch_id"] else " (back-to-back, no switch)"))
    lines.append(f"Recommendation: {machine}")
    lines.append(f"Total: ${plan.total_usd:,.2f} (capex, USD)")
    lines.append("")
    from planner.plan.candidates import takes_headroom

    for est, strat, w in zip(plan.estimates, plan.strategies, plan.workloads):
        lines.append(f"Workload {est.workload_name} ({est.task}, {est.model_id}): {strat}")
        of = (f"{_gib_text(c['gpu_capacity_bytes'])} ({_gib_text(c['gpu_cuda_total_bytes'])} CUDA total less headroom)"
              if takes_headroom(w) else
              f"{_gib_text(c['gpu_cuda_total_bytes'])} (CUDA total; vLLM's gpu_memory_utilization "
              f"{w.infer.gpu_memory_utilization:g} is the margin)")
        lines.append(f"  needs {_gib_text(est.per_gpu_total_bytes)} per GPU of {of}; host RAM peak "
                     f"{_gib_text(est.host_total_bytes)} of {_gib_text(c['ram_bytes'])}")
        lines.append(f"  recipe {est.recipe}: {est.recipe_description}")
    lines.append("")
    # a platform line's parts list goes below the table, which stays narrow
    from planner.plan.quote import PARTS_SEPARATOR

    parts = {i.catalog_id: i.description.split(PARTS_SEPARATOR, 1)[1] for i in plan.line_items()
             if PARTS_SEPARATOR in i.description}
    items = pd.DataFrame([{"item": i.description.split(PARTS_SEPARATOR, 1)[0], "catalog id": i.catalog_id,
                           "qty": i.quantity, "unit price (USD)": f"{i.unit_price_usd:,.2f}",
                           "total (USD)": f"{i.total_usd:,.2f}", "price kind": i.price_kind, "as of": i.as_of}
                          for i in plan.line_items()])
    with pd.option_context("display.width", width, "display.max_colwidth", 80, "display.max_columns", 20):
        lines.append("Line items:")
        wide = max((len(x) for x in items["item"]), default=4)
        lines.append(items.to_string(index=False,
                                     formatters={"item": lambda x: f"{x:<{wide}}"}))
        for cid, text in parts.items():
            lines.append(f"  {cid} priced as: {text}")
        if len(plan.alternatives):
            a = plan.alternatives
            alt = pd.DataFrame({
                "GPU": a["gpu_id"], "platform": a["platform_id"], "cards/node": a["cards_per_node"],
                "nodes": a["nodes"], "RAM (GiB)": (a["ram_bytes"] / 2**30).round(0).astype(int),
                "price (USD)": a["capex_usd"].map(lambda x: f"{x:,.2f}"),
                "need/GPU (GiB)": (a["per_gpu_need_bytes"] / 2**30).round(2),
                "capacity (GiB)": (a["gpu_capacity_bytes"] / 2**30).round(2), "why it lost": a["why_lost"]})
            lines.append("")
            lines.append("Alternatives:")
            lines.append(alt.to_string(index=False))
    if plan.warnings:
        lines.append("")
        lines.append("Warnings:")
        lines += [f"  - {w}" for w in plan.warnings]
    return "\n".join(lines)


#: Report formats `planner plan --format` writes.
PLAN_FORMATS = ("xlsx", "csv", "json", "md")


def _plan_formats(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    """'xlsx,csv' -> ('xlsx', 'csv'); unknown or empty names are a usage error (exit 2)."""
    from planner.core.errors import did_you_mean

    parts = [p.strip().lower() for p in value.split(",") if p.strip()]
    valid = f"give a comma-separated list of {', '.join(PLAN_FORMATS)}"
    if not parts:
        raise click.BadParameter(f"the list of report formats is empty; {valid}, e.g. --format xlsx,csv",
                                 ctx=ctx, param=param)
    bad = [p for p in parts if p not in PLAN_FORMATS]
    if bad:
        guess = did_you_mean(bad[0], PLAN_FORMATS) or ""
        what = f"{bad[0]!r} is not a report format" if len(bad) == 1 else \
            f"{', '.join(map(repr, bad))} are not report formats"
        raise click.BadParameter(f"{what}; {valid}" + (f". {guess}" if guess.startswith("Did you mean") else ""),
                                 ctx=ctx, param=param)
    return tuple(dict.fromkeys(parts))


def _joined(paths: list[Path]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    names = [str(p) for p in paths]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@main.command()
@click.argument("scenario_file", metavar="SCENARIO", type=click.Path(dir_okay=False))
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--out", "out_dir", default="reports", show_default=True, type=click.Path(),
              help="Directory for the reports, OUT/<scenario>.<format>.")
@click.option("--format", "formats", default="xlsx,csv,json", show_default=True, callback=_plan_formats,
              help="Reports to write, comma-separated: xlsx (workbook with a live quote), csv (every "
                   "candidate, ranked), json (the plan), md (the recommendation and memory breakdowns).")
@click.option("--top", "top_k", default=5, show_default=True, type=click.IntRange(0, 1000),
              help="Alternatives to keep.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as one JSON object.")
@handle_errors
def plan(scenario_file: str, catalog_dir: str | None, out_dir: str, formats: tuple[str, ...], top_k: int,
         as_json: bool) -> None:
    """Recommend the cheapest machine that runs every workload of SCENARIO.

    Prints the choice (GPU, count, platform, DIMMs, price, per-GPU need vs capacity, recipe),
    the quote's line items and the alternatives, and writes the reports --format names into
    OUT: <scenario>.xlsx (Summary, Quote with live totals, Memory with a chart, Alternatives,
    Assumptions, Sources), <scenario>.csv (every candidate, ranked, with why_not), <scenario>.json (the
    plan). Each file is written to a temporary file and renamed into place. Exits 1 with the
    reasons and what would fit when nothing does (the csv and json are still written when asked).

    \b
    Example:
      planner plan scenarios/qlora-7b-12gb.yaml
      planner plan scenarios/ft-70b-cluster.yaml --top 10 --out reports/cluster --format xlsx,csv,json
      planner plan scenarios/serve-7b-2k-16users.yaml --json --format json > plan.json
    """
    from planner.core.atomic import ensure_dir, write_text
    from planner.core.names import safe_stem
    from planner.report.export import candidates_csv, infeasible_to_dict, plan_to_dict
    from planner.plan.scenario import load_scenario
    from planner.plan.solver import NoFeasiblePlan
    from planner.plan.solver import plan as make_plan

    catalog = _load_catalog(catalog_dir)
    scenario = load_scenario(Path(scenario_file), catalog, shown=scenario_file)
    if scenario.costs is not None:
        from planner.cost.tco import read_costs

        # plan does not use the rent-or-buy inputs, but a mistake in them is still the user's to see
        read_costs(scenario.costs, catalog, scenario.workloads)

    def write(name: str, table: Any, document: dict[str, Any]) -> list[Path]:
        paths: list[Path] = []
        if "csv" not in formats and "json" not in formats:
            return paths  # nothing to write: do not even create the directory
        out = ensure_dir(Path(out_dir))
        stem = safe_stem(name)
        if "csv" in formats:
            paths.append(write_text(out / f"{stem}.csv", candidates_csv(table)))
        if "json" in formats:
            paths.append(write_text(out / f"{stem}.json", json.dumps(document, indent=2, allow_nan=False) + "\n"))
        return paths

    if safe_stem(scenario.name) != scenario.name:
        click.echo(f"Note: the reports are named {safe_stem(scenario.name)!r}: the scenario name {scenario.name!r} "
                   "holds characters a file name cannot (path separators, spaces, symbols).", err=True)
    try:
        result = make_plan(scenario, catalog, top_k=top_k)
    except NoFeasiblePlan as exc:
        doc = infeasible_to_dict(exc)
        paths = write(exc.scenario, exc.candidates, doc)
        # A quote or report from an earlier, feasible run of this scenario would now be stale.
        stale = [Path(out_dir) / f"{safe_stem(exc.scenario)}.{ext}" for ext in ("xlsx", "md")]
        removed = [p for p in stale if p.is_file()]
        for p in removed:
            p.unlink()
        if as_json:
            doc["outputs"] = {p.suffix[1:]: str(p) for p in paths}
            click.echo(json.dumps(doc, indent=2))
        if paths:
            click.echo(f"Wrote {_joined(paths)}", err=True)
        if removed:
            click.echo(f"Removed the stale {_joined(removed)} of an earlier plan: nothing fits now.", err=True)
        raise
    from planner.report.xlsx import plan_references

    # the catalog's SOURCES.md, read once: for the undefined-REF warning and the workbook's Sources sheet
    references = plan_references((result.assumptions or {}).get("catalog_files") or ())
    result = _with_undefined_sources(result, references)
    doc = plan_to_dict(result)
    paths = write(result.scenario, result.candidates, doc)
    if "xlsx" in formats:
        from planner.report.xlsx import workbook_data_from_plan, write_workbook

        text = Path(scenario_file).read_text(encoding="utf-8", errors="replace")
        data = workbook_data_from_plan(result, scenario_text=text, references=references)
        paths.append(write_workbook(data, ensure_dir(Path(out_dir)) / f"{safe_stem(result.scenario)}.xlsx"))
    if "md" in formats:
        from planner.report.render import plan_markdown

        md = plan_markdown(_plan_text(result), result.estimates)
        paths.append(write_text(ensure_dir(Path(out_dir)) / f"{safe_stem(result.scenario)}.md", md))
    if as_json:
        doc["outputs"] = {p.suffix[1:]: str(p) for p in paths}
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(_plan_text(result))
    click.echo("")
    click.echo(f"Wrote {_joined(paths)}")


# ----- calibrate ----------------------------------------------------------------------------------

@main.command()
@click.option("--workload", "workload_file", type=click.Path(dir_okay=False), help="Workload YAML (same keys).")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--steps", default=3, show_default=True, type=click.IntRange(2, 100), help="Steps to run.")
@click.option("--out", "calibration_file", type=click.Path(dir_okay=False),
              help="Calibration file to update (default ~/.config/planner/calibration.yaml).")
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as one JSON object (sizes in bytes).")
@_estimate_options
@handle_errors
def calibrate(workload_file: str | None, catalog_dir: str | None, steps: int, calibration_file: str | None,
              as_json: bool, **options: Any) -> None:
    """Measure a workload on this machine's NVIDIA GPU and save the runtime overheads.

    Runs a few real steps with a randomly initialised model (no downloads), prints
    max_memory_allocated, max_memory_reserved and the device's used memory against the
    estimate, and saves the CUDA context size and the reserved/allocated ratio for this GPU
    model; later 'planner estimate --gpu ID' on the same GPU model uses them. Needs PyTorch
    with CUDA ('pip install .[validate]' plus a CUDA build of torch).

    Takes the workload options of 'planner estimate' (and --workload, --json), not --gpu,
    --headroom or --calibration: it measures the GPU it runs on (pick one with
    CUDA_VISIBLE_DEVICES) and writes the file named by --out. The run is one process on one GPU:
    full or LoRA training with a torch recipe and AdamW, no ZeRO; or Transformers generate with
    16/32-bit weights. Other settings are refused; options that do not change GPU memory
    (grad_accum, host RAM and time inputs) are named in a note.

    \b
    Example:
      planner calibrate --model llama-3.2-1b --task train --recipe pure-bf16 --micro-batch 2 --seq-len 512
      planner calibrate --model qwen2.5-0.5b --task infer --weights bf16 --context 2048 --concurrency 4
    """
    from planner.validate.calibrate import Calibration, default_path, run_calibration, save_calibration
    from planner.memory import estimate as run_estimate
    from planner.core.units import GiB

    catalog = _load_catalog(catalog_dir)
    given = _collect(options)
    written = _file_keys(workload_file)
    workload = _workload_from_cli(catalog, workload_file, given, None)
    _check_calibration_run(workload, given, written, workload_file)
    unused = [k for k in _NOT_IN_CALIBRATION if k in given or k in written]
    est = run_estimate(workload)
    m = run_calibration(workload, steps=steps)
    path = Path(calibration_file) if calibration_file else default_path()
    cal = Calibration(m["gpu_name"], m["cuda_context_bytes"], m["allocator_fraction"], m["measured_on"],
                      m["versions"])
    save_calibration(cal, path)
    if as_json:
        click.echo(json.dumps({**m, "estimate": {"per_gpu_allocated_bytes": est.per_gpu_allocated_bytes,
                                                 "per_gpu_total_bytes": est.per_gpu_total_bytes},
                               "saved_to": str(path), "not_in_the_run": unused}, indent=2))
        return
    click.echo(f"GPU: {m['gpu_name']} ({m['device_total_bytes'] / GiB:,.2f} GiB)")
    click.echo(f"  max_memory_allocated {m['max_memory_allocated_bytes'] / GiB:,.3f} GiB"
               f"   estimate (tensors) {est.per_gpu_allocated_bytes / GiB:,.3f} GiB")
    click.echo(f"  max_memory_reserved  {m['max_memory_reserved_bytes'] / GiB:,.3f} GiB"
               f"   (allocator overhead {m['allocator_fraction']:.1%})")
    click.echo(f"  device used          {m['device_used_bytes'] / GiB:,.3f} GiB"
               f"   estimate (total) {est.per_gpu_total_bytes / GiB:,.3f} GiB")
    click.echo(f"  CUDA context         {m['cuda_context_bytes'] / GiB:,.3f} GiB")
    click.echo(f"Saved to {path}")
    if unused:
        click.echo(f"Note: {', '.join(unused)} do not change GPU memory (time, host RAM or cost inputs); the "
                   "calibration run does not use them.")


#: Workload keys that change time, host RAM or cost but not GPU memory: the calibration run leaves them out.
_NOT_IN_CALIBRATION = ("grad_accum", "dataloader_workers", "dataset_size", "dataset_format", "checkpoint_dtype",
                       "low_cpu_mem_usage", "pin_memory", "dataset_tokens", "epochs", "hours_per_month",
                       "tokens_per_request", "requests_per_hour")


def _check_calibration_run(workload: Any, given: dict[str, Any], written: dict[str, Any],
                           workload_file: str | None) -> None:
    """Refuse a workload the calibration run cannot reproduce, at the option or file key that chose it."""
    from planner.validate.calibrate import unsupported
    from planner.core.errors import ScenarioError
    from planner.workload.inputs import OptionError

    copies = workload.infer.replicas if workload.infer is not None else 1  # --gpus N is N / tp of them
    if workload.infer is not None and "gpus" in given and copies > 1:
        raise OptionError(f"planner calibrate runs one replica on one GPU, not {copies} replicas",
                          entry="gpus", hint="Leave --gpus out (the overheads it measures are per GPU).")
    why = unsupported(workload)
    if why is None:
        return
    key, problem, hint = why
    if key == "tp" and _tp_from_gpus(given, written):
        raise OptionError(problem, entry="gpus", hint="Leave --gpus out (the overheads it measures are per GPU).")
    if key in given or key not in written:
        # an option, or a default ('the default' then says why the user did not see it)
        default = "" if key in given else f"; that is the default, as --{key.replace('_', '-')} was not given"
        raise OptionError(problem + default, entry=key, hint=hint)
    raise ScenarioError(problem, file=workload_file, line=getattr(written, "lines", {}).get(key), entry=key,
                        hint=hint)


# ----- fit ----------------------------------------------------------------------------------------

#: The quantities `planner fit` can maximise: option -> (workload section, field).
_FIT_TARGETS = {"micro_batch": ("train", "micro_batch"), "seq_len": ("train", "seq_len"),
                "context": ("infer", "context"), "concurrency": ("infer", "concurrency")}


def _fit_options(fn):
    for decl, kw in reversed(_ESTIMATE_OPTIONS):
        name = decl.split("/")[0].lstrip("-").replace("-", "_")
        if name in _FIT_TARGETS:
            kw = dict(kw, type=str, help=kw["help"].rstrip(".") + "; 'max' to find the largest that fits.")
        elif name == "gpus":
            kw = dict(kw, help="GPUs of the given type. Training: data parallel x --tp (default: --tp). "
                      "Inference: replicas x --tp, a multiple of --tp (without --tp, one replica on all of them; "
                      "default: --tp).")
        fn = click.option(decl, **kw)(fn)
    return fn


@main.command()
@click.option("--gpu", "gpu_id", required=True, help="A catalog GPU id.")
@click.option("--workload", "workload_file", type=click.Path(dir_okay=False),
              help="Workload YAML (same keys; options override them). The target is still an option: "
                   "--micro-batch, --seq-len, --context or --concurrency max.")
@click.option("--headroom", type=click.FloatRange(0, 0.95), default=0.05, show_default=True,
              help="Fraction of the GPU's CUDA total kept free (as vram_headroom in scenarios).")
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_fit_options
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
    from planner.plan.solver import largest_fitting
    from planner.workload.spec import MAX_MICRO_BATCH

    catalog = _load_catalog(catalog_dir)
    gpu = _option_gpu(catalog, gpu_id)
    given = _collect(options)
    written = _file_keys(workload_file)
    if "model" not in given and not workload_file:
        raise click.UsageError("give --model (or --workload FILE)")
    for k in _FIT_TARGETS:
        v = given.get(k)
        if isinstance(v, str) and v != "max" and not v.strip().isdigit():
            raise OptionError(f"must be a whole number or 'max', not {v!r}", entry=k,
                              hint="Did you mean 'max'?" if close_matches(v.strip().lower(), ["max"]) else None)
    targets = [k for k in _FIT_TARGETS if given.get(k) == "max"]
    if len(targets) != 1:
        raise click.UsageError("give exactly one of --micro-batch, --seq-len, --context, --concurrency the value "
                               "'max'")
    target = targets[0]
    section, attr = _FIT_TARGETS[target]
    for k in _FIT_TARGETS:
        if k in given and k != target:
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
    base = for_gpu(_workload_from_cli(catalog, workload_file, given, gpu), gpu)
    copies = base.infer.replicas if base.infer is not None else 1  # --gpus N (or gpus: N) is N / tp replicas
    n = base.gpus  # every GPU the answer uses (all replicas)
    headroom = _vllm_headroom(base, headroom, click.get_current_context())
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
    note = _vllm_context_note(answer, "context" in given or "context" in written)
    if best is None:
        notes = list(answer_est.notes) + ([note] if note else [])
        laid_out = f"{count} ({words})" if words else count
        vllm = base.infer is not None and base.infer.engine == "vllm"
        margin = ("its CUDA total; vLLM's gpu_memory_utilization is the margin" if vllm else
                  f"{_gib_text(gpu.cuda_total_bytes)} CUDA total less {headroom:.0%} headroom")
        hint = ""
        if vllm:  # set too high or too low, gpu_memory_utilization alone can be what misses
            from planner.plan.solver import utilization_that_fits

            one = make(1)
            hit = utilization_that_fits(
                lambda u: dataclasses.replace(one, infer=dataclasses.replace(one.infer, gpu_memory_utilization=u)),
                base.infer.gpu_memory_utilization, cap, gpu=gpu)
            if hit:
                hint = (f" At --gpu-memory-utilization {hit[0]:g} it needs {_gib_text(hit[1])} and fits: vLLM keeps "
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
        raise InfeasibleError(f"Nothing fits: at {target}=1 the workload needs {_gib_text(need or 0)} per GPU; "
                              f"{laid_out} offers {_gib_text(cap)} per GPU ({margin}).{hint}{said}")
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

    margin = (f"{_gib_text(cap)} per GPU after {headroom:.0%} headroom" if takes_headroom(base) else
              f"{_gib_text(cap)} CUDA total; vLLM's gpu_memory_utilization {base.infer.gpu_memory_utilization:g} "
              "is the margin")
    value = f"{best:,}"
    if target == "concurrency" and copies > 1:
        value = f"{best:,} per replica, {best * copies:,} in total"
    click.echo(f"Largest {target.replace('_', ' ')} that fits {count} ({words + '; ' if words else ''}{margin}): "
               f"{value} (needs {_gib_text(need)} per GPU)")
    if next_need is not None:
        per = " per replica" if target == "concurrency" and copies > 1 else ""
        click.echo(f"At {best + 1:,}{per} it needs {_gib_text(next_need)} per GPU, {_size_text(next_need - cap)} more.")
    elif best == hi:
        click.echo(f"That is the limit searched ({result['limited_by']}).")
    if target != "concurrency" and answer.infer is not None and copies > 1:
        c = answer.infer.concurrency
        click.echo(f"Each of the {copies} replicas serves --concurrency {c:,} ({c * copies:,} sequences in total).")
    for n_ in result["notes"]:
        click.echo(f"Note: {n_}")
    for w in warnings:
        click.echo(f"Warning: {w}")


# ----- catalog ------------------------------------------------------------------------------------

_CATALOG_KINDS = ("gpus", "platforms", "ram", "models", "network", "cloud")


class _Kind(click.Choice):
    """A click.Choice whose refusal is one plain sentence with a did-you-mean ('gpu' -> 'gpus').

    Click's own message names the argument by its ``{a|b|...}`` metavar and lists every choice;
    with ``metavar`` set on the argument it reads "Invalid value for 'KIND': 'gpu' is not a
    catalog kind. Did you mean 'gpus'?".
    """

    def __init__(self, choices: tuple[str, ...], what: str) -> None:
        super().__init__(choices)
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        from planner.core.errors import close_matches

        close = close_matches(str(value), [str(c) for c in self.choices])
        hint = ("Did you mean " + " or ".join(map(repr, close)) + "?") if close else \
            "Valid: " + ", ".join(map(str, self.choices)) + "."
        self.fail(f"{value!r} is not a {self.what}. {hint}", param, ctx)


def _catalog_rows(catalog: Any, kind: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows for people with unit-bearing headers, records for --json with unit-suffixed keys)."""
    import dataclasses

    gib = 2**30
    human: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []

    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v):
            return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if hasattr(v, "items"):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    def rec(x: Any) -> dict[str, Any]:
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x) if f.name not in ("file", "where")}

    if kind == "gpus":
        for g in catalog.gpus:
            raw.append(rec(g))
            human.append({"id": g.id, "vendor": g.vendor, "arch": g.architecture,
                          "memory (GiB)": round(g.memory_bytes / gib, 2),
                          "usable (GiB)": round(g.memory_usable_bytes / gib, 2),
                          "CUDA total (GiB)": round(g.cuda_total_bytes / gib, 2),
                          "bandwidth (GB/s)": round(g.memory_bandwidth_bytes_per_s / 1e9),
                          "bf16 (TFLOPS)": g.bf16_tflops, "bf16": g.bf16, "fp8": g.fp8, "int8": g.int8, "form": g.form_factor,
                          "cooling": g.cooling or "", "slots": g.slot_width or 0, "TDP (W)": g.tdp_w,
                          "price (USD)": g.price_usd, "price kind": g.price_kind, "as of": g.as_of})
    elif kind == "platforms":
        for p in catalog.platforms:
            raw.append(rec(p))
            human.append({"id": p.id, "memory": p.memory_kind, "channels": p.memory_channels,
                          "DIMM slots": p.dimm_slots, "max memory (GiB)": round(p.max_memory_bytes / gib),
                          "GPU lanes": p.gpu_lanes,
                          "GPU slots": " or ".join(f"{s.count}x{s.width}-slot" for s in p.gpu_slots)
                          or f"{p.fixed_gpu_count} x {p.fixed_gpu}",
                          "max GPUs": p.max_gpus, "PSU (W)": p.psu_w, "platform (W)": p.platform_w,
                          "form factors": ",".join(p.form_factors),
                          "GPU cooling": ",".join(p.gpu_cooling or ()), "base price (USD)": p.base_price_usd,
                          "price kind": p.price_kind, "as of": p.as_of})
    elif kind == "ram":
        for d in catalog.dimms:
            raw.append(rec(d))
            human.append({"id": d.id, "kind": d.kind, "size (GiB)": round(d.size_bytes / gib, 2),
                          "speed (MT/s)": d.speed_mts, "price (USD)": d.price_usd,
                          "USD per GiB": round(d.price_usd / (d.size_bytes / gib), 2), "price kind": d.price_kind,
                          "as of": d.as_of})
    elif kind == "models":
        from planner.model.architecture import from_hf_config

        for m in catalog.models:
            arch = from_hf_config(m.config, m.where or None)
            r = rec(m)
            r["parameters"] = arch.parameters
            raw.append(r)
            human.append({"id": m.id, "hf_id": m.hf_id, "parameters (B)": round(arch.parameters / 1e9, 3),
                          "layers": arch.num_hidden_layers, "hidden": arch.hidden_size,
                          "heads": arch.num_attention_heads, "KV heads": arch.num_key_value_heads,
                          "vocab": arch.vocab_size, "max context (tokens)": arch.max_position_embeddings,
                          "as of": m.as_of})
    elif kind == "network":
        for n in catalog.nics:
            raw.append({"type": "nic", **rec(n)})
            human.append({"id": n.id, "type": "NIC", "kind": n.kind, "rate (Gb/s)": n.rate_bytes_per_s * 8 / 1e9,
                          "ports": 1, "price (USD)": n.price_usd, "cable (USD)": n.cable_price_usd,
                          "price kind": n.price_kind, "as of": n.as_of})
        for s in catalog.switches:
            raw.append({"type": "switch", **rec(s)})
            human.append({"id": s.id, "type": "switch", "kind": s.kind, "rate (Gb/s)": s.rate_bytes_per_s * 8 / 1e9,
                          "ports": s.ports, "price (USD)": s.price_usd, "cable (USD)": None,
                          "price kind": s.price_kind, "as of": s.as_of})
    else:
        for c in catalog.instances:
            raw.append(rec(c))
            human.append({"id": c.id, "provider": c.provider, "instance": c.instance, "GPU": c.gpu,
                          "GPUs": c.gpu_count,
                          # the provider's per-GPU figure where the catalog has one, else the GPU's own
                          "GPU memory, driver total (GiB)": round(
                              (c.gpu_memory_usable_bytes or catalog.gpu(c.gpu).memory_usable_bytes) / gib, 2),
                          "host memory (GiB)": round(c.memory_bytes / gib), "vCPUs": c.vcpus,
                          "price (USD/h)": c.usd_per_hour, "spot (USD/h)": c.spot_usd_per_hour,
                          # the zones' spot prices, lowest to highest, where cloud.yaml records them
                          "spot range (USD/h)": (f"{c.spot_usd_per_hour_range[0]:g}-{c.spot_usd_per_hour_range[1]:g}"
                                                 if c.spot_usd_per_hour_range else ""),
                          "region": c.region, "as of": c.as_of})
    return human, raw


@main.command(name="catalog")
@click.argument("kind", metavar="KIND", type=_Kind(_CATALOG_KINDS, "catalog kind"))
@click.option("--catalog", "catalog_dir", type=click.Path(file_okay=False), help="Catalog overlay directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON (sizes in bytes, money in USD).")
@handle_errors
def catalog_command(kind: str, catalog_dir: str | None, as_json: bool) -> None:
    """List catalog entries (gpus, platforms, ram, models, network, cloud) with units.

    Headers name their units ('memory (GiB)', 'price (USD)'); --json prints every field with
    unit-suffixed keys (bytes, bytes/s, USD, W) for scripts.

    \b
    Example:
      planner catalog gpus
      planner catalog platforms --catalog my-overlay/
      planner catalog ram --json
    """
    import pandas as pd

    catalog = _load_catalog(catalog_dir)
    human, raw = _catalog_rows(catalog, kind)
    # values that load but look like typos, for the entries listed (Catalog.warnings)
    lists = {"gpus": ("gpus",), "platforms": ("platforms",), "ram": ("dimms",), "models": ("models",),
             "network": ("nics", "switches"), "cloud": ("instances",)}[kind]
    warnings = [w.text for w in catalog.warnings if w.kind in lists]
    if as_json:
        click.echo(json.dumps(raw, indent=2, default=str))
        for w in warnings:  # stdout stays the JSON document
            click.echo(f"Warning: {w}", err=True)
        return
    if not human:
        click.echo(f"The catalog has no {kind} entries.")
        return
    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.max_rows", 1000):
        click.echo(pd.DataFrame(human).to_string(index=False, na_rep=""))
    for w in warnings:
        click.echo(f"Warning: {w}")


# ----- compare (defined in planner/cli/compare.py, which imports only click at load time) ------------

from planner.cli.compare import compare as _compare  # noqa: E402

main.add_command(_compare)

for _command in main.commands.values():  # every command's --help states the exit codes
    if not _command.epilog:
        _command.epilog = EXIT_CODES_HELP
