"""Measure the peak of live tensor memory of real PyTorch / Transformers runs on the CPU.

This is the measuring side of the memory-model validation (issue 6). It runs small, randomly
initialised Hugging Face models built from configs (nothing is downloaded) and counts the bytes
of live tensor storages the way the CUDA caching allocator's ``memory_allocated`` counts them:
each storage once, however many tensors view it, rounded up to a multiple of 512 bytes.

How it counts: planner.validate.tracker (a ``TorchDispatchMode`` over every ATen operator);
the models and optimizers: planner.validate.builders; the runs themselves: planner.validate.runs;
the limits: docs/validation-method.md.

Every run happens in a child Python process, the measuring worker (planner.validate.worker): a run
seeds torch's generator, sets torch's thread count and quiets Transformers' and bitsandbytes' loggers
and Python's warnings, which in the caller's interpreter would change its settings (issue 33). The
functions here check their arguments, hand the run to a worker and return what it measured.

Importing this module does not import torch, and the functions do not either (the worker does).

Command line::

    python -m planner.validate.measure --grid tests/data/validation/grid.yaml \
        --out tests/data/validation/measured_cpu.json

Runs added to the grid are measured alone and merged into the committed data (same versions) with
``--merge --only-new``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any, Mapping

from planner.validate.builders import versions
# the settings' values (TRAIN_MODES, ...) are named here too, where the functions that take them are
from planner.validate.runs import INFERENCE_DTYPES, PHASES, TRAIN_METHODS, TRAIN_MODES  # noqa: F401
from planner.validate.runs import _inference_checks, _train_method
from planner.validate.tracker import ALLOCATOR_ROUNDING
from planner.validate.worker import MeasureWorker

METHOD_NOTES = [
    "Peak of live tensor storage bytes, counted by a TorchDispatchMode after every ATen operator; "
    "each storage counted once (views and in-place ops add nothing) and rounded up to a multiple of "
    "512 bytes as the CUDA caching allocator rounds blocks; frees seen through weak-reference "
    "callbacks on the storages.",
    "Parameters and buffers that exist before tracking starts are counted from the start.",
    "Runs on the CPU build of torch: memory allocated inside one kernel and freed before it returns "
    "(kernel workspaces, cuBLAS/cuDNN workspaces, the CPU flash-attention kernel's scratch buffers) "
    "is not seen, and CPU and CUDA may pick different kernels (SDPA backend) with different saved "
    "tensors. No CUDA context, no allocator reserve/fragmentation, no 2 MiB segment rounding.",
    "AdamW is run with foreach=True, the default on CUDA. Its per-parameter 'step' counters are "
    "scalar CPU tensors even when training on CUDA, so they are excluded from the device count.",
    "Training forward passes use_cache=False (a config's default use_cache=True would also fill a "
    "KV cache during training). The model output object is dropped right after the loss is taken, "
    "as a training loop does, so the logits are freed unless autograd saved them.",
    "peak_bytes is the peak of the LAST training step; step 1 creates the optimizer state lazily and "
    "is reported as first_step.",
    "Inference mirrors generate(): a prefill forward with logits_to_keep=1 into a DynamicCache, "
    "then new_tokens-1 single-token decode forwards, under torch.no_grad().",
    "cpu_allocator_crosscheck compares the tracker's unrounded peak (above the window start) with "
    "the CPU allocator's running total recorded by torch.profiler in the same run; the difference "
    "is memory made below the dispatcher (kernel scratch) or outside it (checkpointing's saved "
    "RNG states, which are host memory on CUDA too).",
    "breakdown_at_peak splits the storages live at the peak into parameters (and buffers), "
    "gradients, optimizer state (or kv_cache), and the rest by the phase that created them.",
    "QLoRA runs (method qlora) load the bf16 model through Transformers' BitsAndBytesConfig (NF4, "
    "bf16 compute) on the CPU; the 4-bit weights' quantization constants (absmax, codes, offset) "
    "count as parameters. bitsandbytes' CPU gemm_4bit dequantizes each weight inside the operator, "
    "where the tracker does not see it (cpu_allocator_crosscheck does); on CUDA the same forward "
    "runs a fused kernel or the same dequantize-then-linear. Backward is the same Python code on both.",
    "8-bit LoRA runs (load_in_8bit) load the bf16 model through BitsAndBytesConfig(load_in_8bit=True) "
    "(LLM.int8, outlier threshold 6.0); the fp32 row scales (SCB) count as parameters. On the CPU "
    "bitsandbytes trains through MatMul8bitFp, which dequantizes the weight in the forward and keeps "
    "the input on its autograd ctx; CUDA's MatMul8bitLt keeps the same input (and a few outlier "
    "columns) but quantizes the input and runs an int8 matmul in the forward instead. Backward "
    "dequantizes the weight on both.",
    "Levers of other training stacks (runs that set them): loss_chunks runs torchtune's chunked "
    "cross-entropy on the Transformers model; optimizer_in_backward steps one optimizer per parameter from "
    "a post-accumulate-grad hook; offload_activations emulates torch.autograd.graph.save_on_cpu with "
    "saved-tensor hooks that keep the copies outside the count; compile partitions each decoder layer and "
    "the loss as AOTAutograd does for torch.compile (measure_train_step).",
]


def measure_train_step(
    config: Mapping[str, Any],
    *,
    mode: str,
    micro_batch: int,
    seq_len: int,
    attention: str,
    checkpointing: bool = False,
    lora_rank: int | None = None,
    lora_targets: list[str] | tuple[str, ...] | None = None,
    method: str | None = None,
    double_quant: bool = True,
    prepare_kbit_training: bool = False,
    lora_dropout: float = 0.0,
    use_dora: bool = False,
    load_in_8bit: bool = False,
    optimizer: str = "adamw",
    use_reentrant: bool = False,
    steps: int = 2,
    use_cache: bool = False,
    foreach: bool = True,
    seed: int = 0,
    threads: int = 2,
    crosscheck: bool = False,
    loss_chunks: int = 0,
    optimizer_in_backward: bool = False,
    offload_activations: bool = False,
    compile: bool = False,
    worker: MeasureWorker | None = None,
) -> dict[str, Any]:
    """Run ``steps`` full training steps and report the peak live bytes of the last one.

    ``mode``: "fp32" (fp32 weights and AdamW states), "pure-bf16" (bf16 weights, gradients and
    AdamW states), "amp-bf16" (fp32 weights, forward under ``torch.autocast`` to bf16).
    ``lora_rank``: wrap the model with peft LoRA on ``lora_targets`` (default q_proj, v_proj;
    GPT-2's c_attn) with peft's ``lora_dropout``; only adapter weights train. ``use_dora``: peft's
    DoRA (``LoraConfig(use_dora=True)``, Liu et al. 2024): a trainable magnitude per output feature.
    ``checkpointing``: full gradient checkpointing of every decoder layer, non-reentrant (Transformers'
    default) unless ``use_reentrant``.
    ``crosscheck``: also run the last step under torch.profiler and compare with the CPU
    allocator's own count (slower).
    ``method``: "full", "lora" (the default when ``lora_rank`` is given) or "qlora": the base is
    loaded in 4-bit NF4 by bitsandbytes (:func:`build_qlora_model`, ``double_quant``), bf16
    compute, mode "pure-bf16" only; ``prepare_kbit_training`` calls peft's
    ``prepare_model_for_kbit_training`` first (non-4-bit parameters to fp32; it also turns on the
    checkpointing when ``checkpointing`` is set). ``load_in_8bit`` (method "lora"): the base is
    loaded in LLM.int8 by bitsandbytes (:func:`build_int8_model`), mode "pure-bf16" only, with
    ``prepare_kbit_training`` as for QLoRA.

    The levers of other training stacks (issue 16):

    - ``loss_chunks`` N > 1: torchtune's ``CEWithChunkedOutputLoss`` on the Transformers model: the
      decoder's hidden states go through the output head in N chunks along the sequence
      (``tensor_split``), each chunk is upcast to fp32 for its cross-entropy (sum over tokens, labels
      shifted by appending -100), the chunks' losses are added and divided by the token count, and the
      logits are deleted before backward (torchtune's ``del logits``).
    - ``optimizer_in_backward``: torchtune's ``optimizer_in_bwd``: one optimizer per parameter, stepped
      from a post-accumulate-grad hook that also frees the gradient (no optimizer phase).
    - ``offload_activations``: ``torch.autograd.graph.save_on_cpu`` as it behaves on a GPU, emulated
      on the CPU by saved-tensor hooks around the model's forward: pack copies each saved tensor
      (not a parameter) into a host tensor the tracker does not count, unpack copies it back (counted
      while the backward node that needs it runs). The loss is computed outside the hooks
      (``model.loss_function`` on the logits), as torchtune computes it outside its offloading context.
    - ``compile``: each decoder layer runs as AOTAutograd compiles it for ``torch.compile``: its joint
      forward-backward graph, after inductor's decompositions (``select_decomp_table``), partitioned by
      ``min_cut_rematerialization_partition`` (inductor's partitioner), both halves run as traced graphs
      (identity compilers: the same saved tensors, without inductor's kernels, which keep no other
      saved state). The loss (Transformers' ``loss_function`` on the logits) is compiled the same way,
      and its two graphs run outside the tracker, which then registers only what they return: a fused
      kernel's intermediates never become tensors on a GPU. Checkpointing is not combined with it
      (``aot_module`` replaces the layers that Transformers' checkpointing wraps).

    The run happens in a measuring worker (:class:`planner.validate.worker.MeasureWorker`, a child
    process), which imports torch, seeds it with ``seed`` and runs on ``threads`` threads: the
    caller's interpreter is left as it was. ``worker``: the worker to run it in (it stays up for the
    next call); without one, a worker is started for this call and stopped after it.

    Raises:
        ValueError: a setting out of its range, or settings that do not go together (checked before a
            worker starts), or a config or attention Transformers refuses (raised by the worker).
        RuntimeError: the worker could not start or ended before it answered.
    """
    settings = {k: v for k, v in locals().items() if k not in ("config", "worker")}
    _train_method(mode, optimizer, method, lora_rank, use_dora, load_in_8bit, steps)
    return _in_worker("train", config, settings, worker)


def measure_inference(
    config: Mapping[str, Any],
    *,
    dtype: str,
    batch: int,
    prompt_len: int,
    new_tokens: int,
    attention: str,
    seed: int = 0,
    threads: int = 2,
    crosscheck: bool = False,
    worker: MeasureWorker | None = None,
) -> dict[str, Any]:
    """Prefill ``prompt_len`` tokens into a DynamicCache, then decode greedily one token at a time.

    Mirrors ``generate(max_new_tokens=new_tokens)``: the prefill yields the first new token
    (``logits_to_keep=1``), then ``new_tokens - 1`` decode forwards follow; the cache ends at
    ``prompt_len + new_tokens - 1`` tokens.

    The run happens in a measuring worker (:class:`planner.validate.worker.MeasureWorker`, a child
    process), which imports torch, seeds it with ``seed`` and runs on ``threads`` threads: the
    caller's interpreter is left as it was. ``worker``: the worker to run it in (it stays up for the
    next call); without one, a worker is started for this call and stopped after it.

    Raises:
        ValueError: a setting out of its range, or settings that do not go together (checked before a
            worker starts), or a config or attention Transformers refuses (raised by the worker).
        RuntimeError: the worker could not start or ended before it answered.
    """
    settings = {k: v for k, v in locals().items() if k not in ("config", "worker")}
    _inference_checks(dtype, new_tokens)
    return _in_worker("inference", config, settings, worker)


def _in_worker(kind: str, config: Mapping[str, Any], settings: dict[str, Any],
               worker: MeasureWorker | None) -> dict[str, Any]:
    """Run one ``kind`` run ("train", "inference") in ``worker``, or in a worker of its own."""
    if worker is not None:
        return worker.measure(kind, config, settings)
    with MeasureWorker() as own:
        return own.measure(kind, config, settings)


# --------------------------------------------------------------------------- grid

_TRAIN_KEYS = {"mode", "micro_batch", "seq_len", "attention", "checkpointing", "lora_rank",
               "lora_targets", "lora_dropout", "use_dora", "load_in_8bit", "optimizer", "use_reentrant", "method",
               "double_quant",
               "prepare_kbit_training", "steps",
               "use_cache", "loss_chunks", "optimizer_in_backward", "offload_activations", "compile",
               "foreach", "seed", "crosscheck"}
_INFER_KEYS = {"dtype", "batch", "prompt_len", "new_tokens", "attention", "seed", "crosscheck"}


def load_grid(path: Path) -> list[dict[str, Any]]:
    """Read a grid file: ``models`` (name -> HF config mapping), ``runs`` (a list of runs, each
    naming a ``model`` and a ``kind``: train or inference, plus that kind's settings) and optional
    ``defaults`` (settings applied to every run of a kind that takes them)."""
    from planner.core.yamlio import load_mapping

    data = load_mapping(Path(path))
    unknown_top = set(data) - {"models", "runs", "defaults"}
    if unknown_top:
        raise ValueError(f"{path}: unknown top-level keys {sorted(unknown_top)}")
    models = data.get("models") or {}
    runs = data.get("runs") or []
    defaults = dict(data.get("defaults") or {})
    out = []
    seen: set[str] = set()
    for i, run in enumerate(runs):
        kind0 = run.get("kind", "train")
        allowed0 = _TRAIN_KEYS if kind0 == "train" else _INFER_KEYS
        run = {**{k: v for k, v in defaults.items() if k in allowed0}, **run}
        model = run.pop("model", None)
        if model not in models:
            raise ValueError(f"{path}: run {i + 1} names unknown model {model!r}")
        kind = run.pop("kind", "train")
        allowed = _TRAIN_KEYS if kind == "train" else _INFER_KEYS if kind == "inference" else None
        if allowed is None:
            raise ValueError(f"{path}: run {i + 1}: kind must be train or inference, not {kind!r}")
        rid = run.pop("id", None) or f"{model}-{kind}-{i + 1}"
        if rid in seen:
            raise ValueError(f"{path}: run id {rid!r} appears twice")
        seen.add(rid)
        unknown = set(run) - allowed
        if unknown:
            raise ValueError(f"{path}: run {rid}: unknown keys {sorted(unknown)}")
        out.append({"id": rid, "model": model, "kind": kind,
                    "config": dict(models[model]), "settings": run})
    return out


def run_grid(grid: list[dict[str, Any]], *, progress: Any = None,
             worker: MeasureWorker | None = None) -> dict[str, Any]:
    """Measure every run of ``grid`` (:func:`load_grid`'s list) in one measuring worker, in order, and
    return the measurements' document: the versions the worker ran, the platform, the allocator
    rounding, the method notes, the wall time in seconds and one entry per run (its id, model name,
    config and settings, then what :func:`measure_train_step` or :func:`measure_inference` returned).

    ``progress``: called with each entry as it is measured. ``worker``: the worker to run the grid in;
    without one, a worker is started for the grid (torch and Transformers are imported once) and
    stopped after it. The caller's interpreter is left as it was.

    Raises:
        ValueError: a run's settings are unknown or do not go together.
        RuntimeError: the worker could not start or ended before it answered.
    """
    if worker is None:
        with MeasureWorker() as own:
            return run_grid(grid, progress=progress, worker=own)
    t0 = time.perf_counter()
    results = []
    for run in grid:
        fn = measure_train_step if run["kind"] == "train" else measure_inference
        res = fn(run["config"], **run["settings"], worker=worker)
        entry = {"id": run["id"], "model_name": run["model"], "config": run["config"],
                 "settings": dict(run["settings"]), **res}
        results.append(entry)
        if progress:
            progress(entry)
    return {
        "versions": worker.versions(),
        "platform": {"machine": platform.machine(), "system": platform.system(), "threads": 2},
        "allocator_rounding_bytes": ALLOCATOR_ROUNDING,
        "method": METHOD_NOTES,
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "runs": results,
    }


def merge_measurements(old: Mapping[str, Any], new: Mapping[str, Any], order: list[str]) -> dict[str, Any]:
    """``old`` with the runs of ``new`` added or replacing those of the same id, ordered as the grid
    (``order``: its run ids; runs no longer in the grid are dropped). The wall time is the sum;
    versions and platform stay the old document's (the caller checks the versions agree)."""
    runs = {r["id"]: r for r in old["runs"]}
    runs.update({r["id"]: r for r in new["runs"]})
    return {**old, "wall_seconds": round(float(old.get("wall_seconds", 0)) + float(new.get("wall_seconds", 0)), 1),
            "runs": [runs[i] for i in order if i in runs]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m planner.validate.measure",
                                     description="Measure peak live tensor memory over a grid.")
    parser.add_argument("--grid", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--only", action="append", default=[],
                        help="run only ids containing this text (repeatable)")
    parser.add_argument("--only-new", action="store_true",
                        help="with --merge: run only the grid's runs that the merged file does not hold yet")
    parser.add_argument("--merge", action="store_true",
                        help="merge the runs measured now into --out (by id, in grid order) instead of replacing it; "
                             "the recorded versions must be the installed ones")
    args = parser.parse_args(argv)
    grid = load_grid(args.grid)
    if args.only:
        grid = [r for r in grid if any(s in r["id"] for s in args.only)]
    old = None
    if args.merge:
        old = json.loads(args.out.read_text(encoding="utf-8"))
        now = versions()
        if any(old.get("versions", {}).get(k) != now.get(k) for k in ("torch", "transformers", "peft", "bitsandbytes")):
            print(f"cannot merge: {args.out} was measured with {old.get('versions')}, installed {now}", file=sys.stderr)
            return 2
        if args.only_new:
            have = {r["id"] for r in old["runs"]}
            grid = [r for r in grid if r["id"] not in have]

    def progress(entry: dict[str, Any]) -> None:
        print(f"{entry['id']:<40} peak {entry['peak_bytes'] / 2**20:9.2f} MiB "
              f"at {entry['peak_phase']:<9} ({entry['seconds']:.1f}s)", file=sys.stderr, flush=True)

    doc = run_grid(grid, progress=progress)
    if old is not None:
        doc = merge_measurements(old, doc, [r["id"] for r in load_grid(args.grid)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(doc['runs'])} runs in {doc['wall_seconds']} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
