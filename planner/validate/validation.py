"""Compare the memory model's predictions with measured peaks, and write ``reports/validation.md``.

A measured run (``planner.validate.measure``) gives the peak of live tensor bytes in one training step
or one generation, as the CUDA caching allocator would count them (512-byte rounding). The
prediction compared with it is the estimate's *allocated* peak per GPU: tensors only, without
the CUDA context, library workspaces and allocator headroom, which are not tensors.

Run ``python -m planner.validate.validation`` to compare ``tests/data/validation/measured_cpu.json``
(or a fresh measurement with ``--measure``) and write the report.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from planner.model.architecture import from_hf_config
from planner.memory import estimate
from planner.validate.worker import call_in_worker
from planner.workload.spec import workload_from_mapping

#: Targets from issue 6: per mode, median absolute error and worst absolute error.
TARGET_MEDIAN = 0.05
TARGET_WORST = 0.15

MODE_TO_RECIPE = {"fp32": "fp32", "pure-bf16": "pure-bf16", "amp-bf16": "amp-bf16"}


def workload_for_run(run: Mapping[str, Any]):
    """The planner workload equivalent to one measured run.

    Train runs: ``mode`` -> recipe, torch AdamW, ``micro_batch``, ``seq_len``, ``attention``,
    ``checkpointing``, ``use_cache`` (False unless the run says), LoRA rank and targets (peft's fp32 adapters); ``method: qlora`` -> the
    planner's QLoRA (NF4 base) with ``double_quant`` and ``prepare_kbit_training``;
    ``load_in_8bit`` -> LoRA on an LLM.int8 base, with ``prepare_kbit_training``; ``loss_chunks``,
    ``optimizer_in_backward``, ``offload_activations`` and ``compile`` -> the same levers of framework
    transformers (the harness runs the Transformers model). Inference runs: ``dtype`` ->
    weights and KV dtype, ``batch`` -> concurrency, context = prompt + new tokens, the whole
    prompt prefilled at once.
    """
    arch = from_hf_config(run["config"], run.get("id"))
    s = run.get("settings", run)
    if run["kind"] == "train":
        keys: dict[str, Any] = {
            "task": "train", "recipe": MODE_TO_RECIPE[s["mode"]], "optimizer": s.get("optimizer", "adamw"),
            "micro_batch": s["micro_batch"], "seq_len": s["seq_len"], "attention": s["attention"],
            "checkpointing": "full" if s.get("checkpointing") else "none",
            # the harness passes use_cache=False unless told (planner.validate.measure)
            "use_cache": bool(s.get("use_cache", False)),
            **({"use_reentrant": True} if s.get("use_reentrant") else {}),
            **({"loss_chunks": int(s["loss_chunks"])} if s.get("loss_chunks") else {}),
            **({"optimizer_in_backward": True} if s.get("optimizer_in_backward") else {}),
            **({"offload_activations": True} if s.get("offload_activations") else {}),
            **({"compile": True} if s.get("compile") else {}),
        }
        if s.get("lora_rank"):
            method = s.get("method") or "lora"
            keys.update(method=method, lora_rank=s["lora_rank"], lora_targets=list(s["lora_targets"]),
                        lora_dropout=float(s.get("lora_dropout", 0.0)), use_dora=bool(s.get("use_dora", False)))
            if method == "qlora":
                keys.update(double_quant=bool(s.get("double_quant", True)),
                            prepare_kbit_training=bool(s.get("prepare_kbit_training", False)))
            elif s.get("load_in_8bit"):
                keys.update(load_in_8bit=True, prepare_kbit_training=bool(s.get("prepare_kbit_training", False)))
    else:
        keys = {"task": "infer", "weights": s["dtype"], "kv_dtype": s["dtype"], "concurrency": s["batch"],
                "context": s["prompt_len"] + s["new_tokens"], "attention": s["attention"],
                "max_num_batched_tokens": s["batch"] * s["prompt_len"]}
    return workload_from_mapping({"model": run.get("id", "m"), **keys}, lambda n, e: (n, "measured config", arch))


#: The summary row of the runs on mixture-of-experts models (any mode).
MOE_GROUP = "mixture of experts (any mode)"
#: The summary row of the runs with an optimizer other than torch's AdamW (any mode).
OPTIMIZER_GROUP = "optimizers other than AdamW (any mode)"


def mode_of(run: Mapping[str, Any]) -> str:
    """The validation mode a run belongs to (the issue's list of modes)."""
    s = run.get("settings", run)
    if run["kind"] != "train":
        return "inference"
    # the levers of other training stacks (issue 16), each its own group
    for key, name in (("compile", "torch.compile"), ("offload_activations", "activation offloading"),
                      ("optimizer_in_backward", "optimizer in backward"), ("loss_chunks", "chunked loss")):
        if s.get(key):
            return name
    if s.get("method") == "qlora":
        return "qlora"
    if s.get("load_in_8bit"):
        return "lora int8"
    if s.get("lora_rank"):
        return "lora"
    if s.get("checkpointing"):
        return "checkpointing"
    return {"fp32": "fp32", "pure-bf16": "pure bf16", "amp-bf16": "amp bf16"}[s["mode"]]


def compare_runs(runs: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per run: id, mode, attention, predicted and measured bytes, error (fraction)."""
    rows = []
    for run in runs:
        w = workload_for_run(run)
        est = estimate(w, device="cpu")  # CPU dropout keeps dtype-sized masks
        predicted = est.per_gpu_allocated_bytes
        measured = int(run["peak_bytes"])
        s = run.get("settings", run)
        rows.append({
            "id": run["id"], "mode": mode_of(run), "attention": s.get("attention", ""),
            "predicted_bytes": predicted, "measured_bytes": measured,
            "error": (predicted - measured) / measured,
            "predicted_phase": est.peak_phase or "always", "measured_phase": run.get("peak_phase", ""),
            "moe": w.architecture.is_moe, "optimizer": w.train.optimizer if w.train is not None else "",
        })
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per mode, mixture-of-experts models, optimizers other than AdamW, per attention kernel and
    overall: count, median and worst absolute error."""
    out = {}
    groups: dict[str, list[float]] = {}
    for r in rows:
        keys = [r["mode"], f"attention {r['attention']}", "all"] + ([MOE_GROUP] if r.get("moe") else [])
        keys += [OPTIMIZER_GROUP] if r.get("optimizer") not in (None, "", "adamw") else []
        for key in keys:
            groups.setdefault(key, []).append(abs(r["error"]))
    extra = (MOE_GROUP, OPTIMIZER_GROUP)
    modes = sorted(k for k in groups if k != "all" and k not in extra and not k.startswith("attention"))
    order = modes + [k for k in extra if k in groups] + sorted(
        k for k in groups if k.startswith("attention")) + ["all"]
    for key in order:
        errs = groups[key]
        out[key] = {"runs": len(errs), "median": statistics.median(errs), "worst": max(errs)}
    return out


def report_markdown(rows: list[dict[str, Any]], measured_doc: Mapping[str, Any]) -> str:
    """The validation report as Markdown."""
    summary = summarize(rows)
    v = measured_doc.get("versions", {})
    lines = [
        "# Memory model validation",
        "",
        "Predicted peak allocated bytes (tensors only: no CUDA context, workspaces or allocator headroom) "
        "against the peak of live tensor bytes measured by `planner.validate.measure` (PyTorch dispatch-level "
        "tracking, each storage rounded up to 512 bytes as the CUDA caching allocator rounds) on randomly "
        "initialised Hugging Face models. Method and limits: `docs/validation-method.md`.",
        "",
        "Measured with " + ", ".join(f"{k} {val}" for k, val in sorted(v.items())) + ".",
        f"Targets: median absolute error <= {TARGET_MEDIAN:.0%} and worst <= {TARGET_WORST:.0%} in every mode.",
        "",
        "## Summary",
        "",
        "| mode | runs | median abs. error | worst abs. error | meets target |",
        "|---|---|---|---|---|",
    ]
    for mode, s in summary.items():
        ok = s["median"] <= TARGET_MEDIAN and s["worst"] <= TARGET_WORST
        lines.append(f"| {mode} | {s['runs']} | {s['median']:.1%} | {s['worst']:.1%} | {'yes' if ok else 'NO'} |")
    lines += ["", "## Runs", "",
              "| run | mode | optimizer | attention | predicted (MiB) | measured (MiB) | error | predicted peak phase "
              "| measured peak phase |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['id']} | {r['mode']} | {r['optimizer'] or '-'} | {r['attention']} | "
                     f"{r['predicted_bytes'] / 2**20:,.2f} | "
                     f"{r['measured_bytes'] / 2**20:,.2f} | {r['error']:+.1%} | {r['predicted_phase']} | "
                     f"{r['measured_phase']} |")
    lines.append("")
    return "\n".join(lines)


#: The golden tests that hold the published runs of other training stacks (run from the repository root).
PUBLISHED = Path("tests/test_published.py")


def _published_framework_here(path: Path) -> str:
    """A Markdown section on the published runs of other training stacks, from the golden tests'
    table (``FRAMEWORK_RUNS``, ``FRAMEWORK_FITS`` and ``FRAMEWORK_NOT_EXPRESSIBLE`` of
    ``tests/test_published.py``): each run's error, the median per framework, and every miss above
    10 % with its explanation; '' when the file is not there."""
    import importlib.util

    if not path.is_file():
        return ""
    spec = importlib.util.spec_from_file_location("_published_runs", path)
    if spec is None or spec.loader is None:  # pragma: no cover
        return ""
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up while they are made
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
    lines = ["## Published runs on other training stacks", "",
             "Peaks of allocated memory published by torchtune and LitGPT (and Unsloth's fit outcomes), predicted "
             "with `framework` and the settings each config or command gives (`tests/test_published.py`, which also "
             "holds every source, setting and the reason for each tolerance). Each run is held to 10 %, each "
             "framework to a median absolute error of 5 %.", ""]
    by_fw: dict[str, list[float]] = {}
    rows = []
    for run in mod.FRAMEWORK_RUNS:
        predicted = mod.framework_predicted_bytes(run)
        err = predicted / run.measured_bytes - 1
        by_fw.setdefault(run.framework, []).append(abs(err))
        unit = {"GB": 1e9, "GiB": 2**30}[run.unit]
        rows.append((run, predicted / unit, err))
    lines += ["| framework | runs | median abs. error | worst abs. error | runs past 10 % |", "|---|---|---|---|---|"]
    for fw, errs in by_fw.items():
        lines.append(f"| {fw} | {len(errs)} | {statistics.median(errs):.1%} | {max(errs):.1%} | "
                     f"{sum(e > 0.10 for e in errs)} |")
    lines += ["", "| run | framework | predicted | published | error |", "|---|---|---|---|---|"]
    for run, pred, err in rows:
        lines.append(f"| {run.id} | {run.framework} | {pred:,.2f} {run.unit} | {run.value:,.2f} {run.unit} | {err:+.1%} |")
    misses = [(run, err) for run, _, err in rows if abs(err) > 0.10]
    lines += ["", "### Runs past 10 % and why", ""]
    for run, err in misses:
        lines.append(f"- **{run.id}** ({err:+.1%}): {run.xfail or 'no explanation recorded'}")
    if not misses:
        lines.append("None.")
    lines += ["", "### Fit outcomes", ""]
    for run in mod.FRAMEWORK_FITS:
        lines.append(f"- {run.id}: published {run.value} on {run.gpu} ({run.reason})")
    lines += ["", "### Published runs the model cannot express", ""]
    for entry, reason in sorted(mod.FRAMEWORK_NOT_EXPRESSIBLE.items()):
        lines.append(f"- {entry}: {reason}")
    lines.append("")
    return "\n".join(lines)


#: The tests that hold the framework releases' published runs (run from the repository root).
RELEASES = Path("tests/test_framework_releases.py")


def _framework_releases_here(path: Path) -> str:
    """A Markdown section on the training framework releases modelled (planner.workload.releases
    FRAMEWORK_RELEASES: the current and oldest release of each, every mechanism change with its source) and
    the published runs of a release (``RELEASE_RUNS`` of ``tests/test_framework_releases.py``, each with
    its predicted and published largest context), the published memory figures (``RELEASE_PEAKS``) and
    differences (``RELEASE_DIFFS``); '' when the file is not there."""
    import importlib.util

    from planner.workload.releases import FRAMEWORK_RELEASES

    if not path.is_file():
        return ""
    spec = importlib.util.spec_from_file_location("_release_runs", path)
    if spec is None or spec.loader is None:  # pragma: no cover
        return ""
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
        runs = [(run, mod.predicted_largest_context(run)) for run in mod.RELEASE_RUNS]
        peaks = [(peak, mod.predicted_peak_bytes(peak)) for peak in getattr(mod, "RELEASE_PEAKS", [])]
        diffs = [(d, mod.predicted_difference_bytes(d)) for d in getattr(mod, "RELEASE_DIFFS", [])]
    finally:
        sys.modules.pop(spec.name, None)
    lines = ["## Training framework releases", "",
             "The releases each training framework is modelled for (`framework_version`; deepspeed and fsdp follow "
             "the Transformers release) and the mechanisms that switch between them (planner/workload/releases.py, "
             "which cites each source). An older release than the oldest is refused.", "",
             "| framework | current (default) | oldest | change | from release | source |", "|---|---|---|---|---|---|"]
    for name, line in FRAMEWORK_RELEASES.items():
        if line.name != name:
            continue
        for change in line.changes or (None,):
            what, since, src = (change.what, change.release, change.source) if change else ("none modelled", "", "")
            lines.append(f"| {name} | {line.current} | {line.oldest} | {what} | {since} | {src} |")
    lines += ["", "Published runs by framework and release: the largest context that trained on a card (batch 1), "
              "against the largest the estimate fits in the card's CUDA total; each is held to 10 %.", "",
              "| run | framework | release | card | predicted | published | error |", "|---|---|---|---|---|---|---|"]
    for run, got in sorted(runs, key=lambda r: (r[0].framework, r[0].release, r[0].id)):
        err = got / run.published_tokens - 1
        lines.append(f"| {run.id} | {run.framework} | {run.release} | {run.gpu} | {got:,} tokens | "
                     f"{run.published_tokens:,} tokens | {err:+.1%} |")
    lines += ["", "Published memory figures by framework and release (GB = 1e9 B, GiB = 2^30 B; 'init': while the model "
              "is built and loaded; 'peak': the run's peak), against the prediction of what the publication measured "
              "(allocated bytes; for a reserved figure the allocated bytes plus the allocator headroom of "
              "planner.memory.overheads.allocator_component, and at least the pool a replayed model load "
              "leaves, planner.memory.load_peaks.load_pool: torchtune 0.1 and Unsloth 2024.8-2024.10.0 QLoRA); each is "
              "held to 10 %.", "",
              "| run | framework | release | quantity | predicted | published | error |", "|---|---|---|---|---|---|---|"]
    for peak, got in peaks:
        err = got / peak.published_bytes - 1
        unit = {"GB": 1e9, "GiB": 2**30}[peak.unit]
        lines.append(f"| {peak.id} | {peak.framework} | {peak.release} | {peak.quantity} | {got / unit:,.2f} "
                     f"{peak.unit} | {peak.published_gb:,} {peak.unit} ({peak.kind}) | {err:+.1%} |")
    if diffs:
        lines += ["", "Published memory differences by framework and release (GB = 1e9 B): the predicted bytes at the "
                  "named moment with the first setting minus those with the second; each is held to 10 %.", "",
                  "| run | framework | release | moment | settings | predicted | published | error |",
                  "|---|---|---|---|---|---|---|---|"]
        for d, got in diffs:
            change = ", ".join(f"{k}: {v}" for k, v in d.change.items())
            first = ", ".join(f"{k}: {d.workload[k]}" for k in d.change)
            lines.append(f"| {d.id} | {d.framework} | {d.release} | {d.phase} | {first} vs {change} | "
                         f"{got / 1e9:,.2f} GB | ~{d.published_gb:,} GB | {got / (d.published_gb * 1e9) - 1:+.1%} |")
    lines += ["", "### Release runs past 10 % and why", ""]
    misses = [(run.id, got / run.published_tokens - 1, run.xfail) for run, got in runs
              if abs(got / run.published_tokens - 1) > 0.10]
    misses += [(peak.id, got / peak.published_bytes - 1, peak.xfail) for peak, got in peaks
               if abs(got / peak.published_bytes - 1) > 0.10]
    misses += [(d.id, got / (d.published_gb * 1e9) - 1, d.xfail) for d, got in diffs
               if abs(got / (d.published_gb * 1e9) - 1) > 0.10]
    for run_id, err, why in misses:
        lines.append(f"- **{run_id}** ({err:+.1%}): {why or 'no explanation recorded'}")
    if not misses:
        lines.append("None.")
    lines += ["", "Sources:", ""]
    lines += [f"- {src}" for src in dict.fromkeys([r.source for r, _ in runs] + [p.source for p, _ in peaks]
                                                  + [d.source for d, _ in diffs])]
    lines.append("")
    return "\n".join(lines)


#: The tests that hold the public bug reports' cases (run from the repository root).
PUBLIC_CASES = Path("tests/test_public_cases.py")


def _report_rows(path: Path, name: str) -> list[list[str]] | None:
    """``report_rows()`` of the test file at ``path`` (imported as module ``name``); None when absent."""
    import importlib.util

    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover
        return None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    # the tests import their helpers (test_memory) from their own folder
    added = str(path.parent) not in sys.path
    if added:
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(mod)
        return mod.report_rows()
    finally:
        sys.modules.pop(spec.name, None)
        if added:
            sys.path.remove(str(path.parent))


#: The tests of the engine releases' published runs (tests/test_engine_releases.py).
ENGINE_RELEASES_TESTS = Path("tests/test_engine_releases.py")


def _engine_releases_here(path: Path) -> str:
    """A Markdown section on inference engines' releases: each published run of a release whose
    mechanism ``engine_version`` switches, predicted for that release beside the published figure,
    from ``report_rows()`` of ``tests/test_engine_releases.py`` (which quotes each source); '' when
    the file is not there."""
    rows = _report_rows(path, "_engine_releases")
    if rows is None:
        return ""
    lines = ["## Engine releases", "",
             "Published runs of older releases of the inference engines, predicted with `engine_version` set to "
             "the release that ran (planner.workload.engine_releases switches each mechanism at the release its "
             "source changed; `tests/test_engine_releases.py` quotes each run). The current releases' runs are in "
             "the sections above.", "",
             "| engine | release | run | source | quantity | predicted | published | error |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", VLLM_LORA_NOTE, ""]
    return "\n".join(lines)


#: The engine section's statement on vLLM LoRA serving, which has no published run with figures.
VLLM_LORA_NOTE = (
    "vLLM LoRA slots (`enable_lora`, `max_loras`, `max_lora_rank`): no published run with figures was found, so "
    "no row above. Searched (2026-12): vLLM issues and PRs for start-up logs with and without `--enable-lora` "
    "(`# GPU blocks`, `GPU KV cache size`, `model weights take` with LoRA; #14450, #15039, #16676, #19693, #20160, "
    "#22782), the pages, docs and code corpora (LoRA memory overhead, max_loras and KV cache); #15039 (0.8.0rc2, "
    "Llama-3.3-70B, tp 4) has a LoRA start-up log whose profiling lines could not be read in the stored thread. "
    "The slots are derived from vLLM's source (`vllm/lora/layers`, `tests/test_engine_releases.py`), and by release "
    "(`tests/test_vllm_lora_releases.py`): the ranks each release's LoRAConfig accepts, the extra-vocabulary rows "
    "before 0.12.0, and 0.7.x's KV budget that leaves the slots out, as vllm issue #14450 reported without "
    "figures (\"using different LoRa Rank and Max LoRas did not affect the number of kv cache blocks\"; checked: "
    "the predicted blocks do not move with the rank, and with max_loras only by the extra-vocabulary rows the model "
    "file builds, one 16-token block per slot for Llama-3.1-8B).")


def _public_cases_here(path: Path) -> str:
    """A Markdown section on memory cases from public bug reports of peer tools: each case's predicted
    figure beside the thread's, from ``report_rows()`` of ``tests/test_public_cases.py`` (which holds
    each source, quote and tolerance); '' when the file is not there."""
    rows = _report_rows(path, "_public_cases")
    if rows is None:
        return ""
    lines = ["## Public bug reports", "",
             "Memory cases from public issue threads of peer tools (PyTorch FSDP, LitGPT, llama.cpp and Ollama, "
             "Transformers), each with the figure the thread establishes (`tests/test_public_cases.py` quotes the "
             "thread beside each test).", "",
             "| case | source | quantity | predicted | thread | result |", "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    return "\n".join(lines)


# The sections below read test files, which are loaded as modules (in ``sys.modules`` while they run,
# their folder on ``sys.path``): they are read in a worker process (planner.validate.worker), so that a
# caller's import state stays as it was (issue 33). The ``_..._here`` functions run in the worker.
_HERE = "planner.validate.validation"


def published_framework_section(path: Path) -> str:
    """:func:`_published_framework_here` (the published runs of other training stacks), read in a worker."""
    return call_in_worker(f"{_HERE}:_published_framework_here", path)


def framework_releases_section(path: Path) -> str:
    """:func:`_framework_releases_here` (the training framework releases), read in a worker."""
    return call_in_worker(f"{_HERE}:_framework_releases_here", path)


def public_cases_section(path: Path) -> str:
    """:func:`_public_cases_here` (the public bug reports' cases), read in a worker."""
    return call_in_worker(f"{_HERE}:_public_cases_here", path)


def engine_releases_section(path: Path) -> str:
    """:func:`_engine_releases_here` (the engine releases' published runs), read in a worker."""
    return call_in_worker(f"{_HERE}:_engine_releases_here", path)


def _sections_here(published: Path | None, releases: Path | None, public: Path | None,
                   engines: Path | None) -> list[str]:
    """:func:`full_report`'s sections from the test files (those given), in one worker."""
    return [_published_framework_here(published) if published is not None else "",
            _framework_releases_here(releases) if releases is not None else "",
            _public_cases_here(public) if public is not None else "",
            _engine_releases_here(engines) if engines is not None else ""]


def full_report(rows: list[dict], doc: dict, published: Path | None = PUBLISHED,
                public: Path | None = PUBLIC_CASES, releases: Path | None = RELEASES,
                engines: Path | None = ENGINE_RELEASES_TESTS) -> str:
    """reports/validation.md: :func:`report_markdown` and, when ``published`` names the golden
    tests, their section on other training stacks (:func:`published_framework_section`), the training
    framework releases (:func:`framework_releases_section`) when ``releases`` names their tests, the public
    bug reports' cases (:func:`public_cases_section`) when ``public`` names theirs, then the engine releases'
    runs (:func:`engine_releases_section`) when ``engines`` names theirs."""
    text = report_markdown(rows, doc)
    sections = [] if (published, releases, public, engines) == (None,) * 4 else call_in_worker(
        f"{_HERE}:_sections_here", published, releases, public, engines)
    for section in sections:
        if section:
            text = text.rstrip("\n") + "\n\n" + section
    return text


#: The heading of reports/validation.md's speed section, which tests/test_speed_published.py keeps.
SPEED_HEADING = "\n## Speed: the speed model against published throughput\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m planner.validate.validation [--measured FILE | --measure] [--out FILE]``."""
    import json

    parser = argparse.ArgumentParser(prog="python -m planner.validate.validation",
                                     description="Compare the memory model with measured peaks.")
    parser.add_argument("--measured", type=Path, default=Path("tests/data/validation/measured_cpu.json"))
    parser.add_argument("--measure", action="store_true", help="measure the grid now (needs torch)")
    parser.add_argument("--grid", type=Path, default=Path("tests/data/validation/grid.yaml"))
    parser.add_argument("--out", type=Path, default=Path("reports/validation.md"))
    parser.add_argument("--published", type=Path, default=PUBLISHED,
                        help="the golden tests whose published framework runs get a section of their own")
    parser.add_argument("--engines", type=Path, default=ENGINE_RELEASES_TESTS,
                        help="the tests of the engine releases' published runs, which get a section of their own")
    parser.add_argument("--public", type=Path, default=PUBLIC_CASES,
                        help="the tests of the public bug reports' cases, which get a section of their own")
    parser.add_argument("--releases", type=Path, default=RELEASES,
                        help="the tests of the training framework releases' published runs (a section of their own)")
    args = parser.parse_args(argv)
    if args.measure:
        from planner.validate.measure import load_grid, run_grid

        doc = run_grid(load_grid(args.grid))
    else:
        doc = json.loads(args.measured.read_text(encoding="utf-8"))
    rows = compare_runs(doc["runs"])
    text = full_report(rows, doc, args.published, args.public, args.releases, args.engines)
    # the speed section (tests/test_speed_published.py writes and checks it) follows the memory report
    # and is kept as it is when the memory part is rewritten
    if args.out.is_file():
        old = args.out.read_text(encoding="utf-8")
        if SPEED_HEADING in old:
            text = text + SPEED_HEADING + old.split(SPEED_HEADING, 1)[1]
    from planner.core.atomic import write_text

    write_text(args.out, text)
    for mode, s in summarize(rows).items():
        print(f"{mode:14} runs {s['runs']:3}  median {s['median']:6.1%}  worst {s['worst']:6.1%}")
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
