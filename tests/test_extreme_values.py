"""No internal error for any value the validation accepts (issue 20): hypothesis over the accepted range
of every numeric option of estimate and fit, every numeric key of a scenario and of its costs: block,
with the largest catalog models and the extreme utilizations.

Each run must exit 0, 1 or 2: never an exception, a traceback or "internal error", and on exit 2 one
line 'Error: ...'. The ranges are those planner.workload.spec, planner.solve.scenario and
planner.cost.tco accept (their min/max), drawn with their ends and values next to them more often
than the middle (st.integers/st.floats with the bounds, plus sampled ends). Examples are derandomized
(the same every run); PLANNER_FUZZ_SCALE=20 runs twenty times as many, fresh, for a deeper search by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import planner.cli.options
from planner.catalog.loader import load_catalog
from planner.cli.main import main
from planner.workload.spec import MAX_GPUS, MAX_MICRO_BATCH, MAX_SEQ_LEN

SHIPPED = load_catalog()
#: The largest models and some small ones (llama-3.1-405b is the catalog's largest: 405,853,388,800 parameters).
MODELS = ["llama-3.1-405b", "qwen3-235b-a22b", "gpt-oss-120b", "mixtral-8x7b", "llama-3.1-70b", "gpt2",
          "qwen2.5-0.5b", "gemma-3-27b-it"]
GPUS = [g.id for g in SHIPPED.gpus]
SCALE = float(os.environ.get("PLANNER_FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    return settings(max_examples=max(1, round(examples * SCALE)), deadline=None, derandomize=SCALE == 1,
                    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Whole numbers in [lo, hi], the ends and their neighbours often."""
    ends = sorted({lo, min(lo + 1, hi), max(hi - 1, lo), hi})
    return st.one_of(st.sampled_from(ends), st.integers(lo, hi))


def floats(lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False) -> st.SearchStrategy[float]:
    """Floats in the range, with the ends (or the next float inside an open end) often."""
    import math

    a = math.nextafter(lo, math.inf) if lo_open else lo
    b = math.nextafter(hi, -math.inf) if hi_open else hi
    return st.one_of(st.sampled_from([a, b]), st.floats(a, b, allow_nan=False, allow_infinity=False))


def _cached(catalog_dir: str | None) -> Any:
    return SHIPPED if catalog_dir is None else load_catalog(Path(catalog_dir))


def _check(result: Any, *, events: bool = True) -> None:
    if events:
        event(f"exit {result.exit_code}")
        if result.exit_code == 2:
            event("refused: " + result.stderr.split(": ", 2)[-1][:50])
    output = result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in (0, 1, 2), (result.exit_code, output)
    assert "Traceback" not in output and "internal error" not in output, output
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr


def _run(args: list[str]) -> Any:
    with mock.patch.object(planner.cli.options, "load_catalog_option", _cached):
        return CliRunner().invoke(main, args)


@st.composite
def train_options(draw) -> dict[str, Any]:
    """Training options over their accepted ranges, consistent with each other (LoRA keys with a LoRA
    method, gpus a multiple of tp), so that most runs reach the memory model."""
    method = draw(st.sampled_from(["full", "lora", "qlora"]))
    opts: dict[str, Any] = {"--method": method}
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    table = {
        "--micro-batch": ints(1, MAX_MICRO_BATCH),
        "--seq-len": ints(1, MAX_SEQ_LEN),
        "--grad-accum": ints(1, 1_000_000),
        "--gpus": ints(1, MAX_GPUS // tp).map(lambda k: k * tp),
        "--tp": st.just(tp),
        "--dataloader-workers": ints(0, 256),
        "--dataset-size": st.sampled_from(["0 B", "1 B", "1024 TiB", "1125899906842624 B"]),
        "--checkpointing": st.sampled_from(["none", "full"]),
    }
    if method == "full":
        table["--zero"] = ints(0, 3)
        table["--recipe"] = st.sampled_from(["fp32", "amp-bf16", "mixed-bf16", "pure-bf16", "pure-fp16"])
        table["--optimizer"] = st.sampled_from(["adamw", "adamw-8bit", "sgd", "adafactor", "lion"])
    else:
        table["--lora-rank"] = ints(1, 65_536)
        table["--lora-dropout"] = floats(0, 1)
    for opt, strategy in table.items():
        if draw(st.integers(0, 2)) > 0:  # about two options in three
            opts[opt] = draw(strategy)
    if "--gpus" in opts:
        opts["--tp"] = tp
    return opts


@st.composite
def infer_options(draw) -> dict[str, Any]:
    """Inference options over their accepted ranges, consistent with each other (vLLM keys with engine
    vllm, a group size with int4 weights, gpus a multiple of tp)."""
    engine = draw(st.sampled_from(["hf", "vllm"]))
    weights = draw(st.sampled_from(["fp32", "bf16", "fp8", "int8", "int4-awq", "nf4"] if engine == "hf"
                                   else ["bf16", "fp8", "int4-awq"]))
    opts: dict[str, Any] = {"--engine": engine, "--weights": weights}
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    table = {
        "--context": ints(1, MAX_SEQ_LEN),
        "--concurrency": ints(1, MAX_MICRO_BATCH),
        "--gpus": ints(1, MAX_GPUS // tp).map(lambda k: k * tp),
        "--kv-dtype": st.sampled_from(["bf16", "fp8"] + (["fp32"] if engine == "hf" else [])),
    }
    if weights.startswith("int4"):
        table["--group-size"] = st.sampled_from([-1, 32, 128, 1_000_000])
    if engine == "vllm":
        table["--gpu-memory-utilization"] = floats(1e-9, 1, hi_open=True)
        table["--max-num-seqs"] = ints(1, MAX_MICRO_BATCH)
        table["--max-num-batched-tokens"] = ints(1, MAX_SEQ_LEN * 64)
    for opt, strategy in table.items():
        if draw(st.integers(0, 2)) > 0:
            opts[opt] = draw(strategy)
    opts["--tp"] = tp
    if engine == "hf" and "--concurrency" in opts and draw(st.booleans()):
        opts["--max-num-batched-tokens"] = draw(ints(opts["--concurrency"], MAX_SEQ_LEN * 64))
    return opts


def _flat(opts: dict[str, Any]) -> list[str]:
    return [x for k, v in opts.items() for x in (k, str(v))]


@fuzz(120)
@given(model=st.sampled_from(MODELS), task=st.sampled_from(["train", "infer"]), data=st.data(),
       gpu=st.one_of(st.none(), st.sampled_from(GPUS)), as_json=st.booleans())
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_estimate_over_the_accepted_ranges(model: str, task: str, data: st.DataObject, gpu: str | None,
                                           as_json: bool) -> None:
    opts = data.draw(train_options() if task == "train" else infer_options())
    card = ["--gpu", gpu] if gpu else []
    if gpu and data.draw(st.booleans()) and not (task == "infer" and opts.get("--engine") == "vllm"):
        card += ["--headroom", str(data.draw(floats(0, 0.95)))]
    args = ["estimate", "--model", model, "--task", task, *_flat(opts)] + card + (["--json"] if as_json else [])
    result = _run(args)
    _check(result)
    if result.exit_code == 0 and as_json:
        json.loads(result.output)  # a document, however large the figures


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@fuzz(40)
@given(model=st.sampled_from(MODELS), task=st.sampled_from(["train", "infer"]), data=st.data(),
       gpu=st.sampled_from(GPUS))
def test_fit_over_the_accepted_ranges(model: str, task: str, data: st.DataObject, gpu: str) -> None:
    opts = data.draw(train_options() if task == "train" else infer_options())
    target = data.draw(st.sampled_from(["--micro-batch", "--seq-len"] if task == "train"
                                       else ["--context", "--concurrency"]))
    opts[target] = "max"
    if task == "infer" and target == "--concurrency":
        opts.pop("--max-num-batched-tokens", None)
    if data.draw(st.booleans()) and not (task == "infer" and opts.get("--engine") == "vllm"):
        opts["--headroom"] = data.draw(floats(0, 0.95))
    _check(_run(["fit", "--model", model, "--task", task, "--gpu", gpu, *_flat(opts)]))


def test_the_issue_cases_are_answers_or_one_line() -> None:
    """The values the issue names: 1e-9 and the largest utilization below 1, a 405B model."""
    import math

    for util in ("1e-9", repr(math.nextafter(1, 0)), "0.5"):
        for gpu in ([], ["--gpu", "h100-sxm"]):
            r = _run(["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                      "--gpu-memory-utilization", util, *gpu])
            _check(r, events=False)
            assert r.exit_code == 0, r.output
    below = _run(["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                  "--gpu-memory-utilization", "1e-10"])
    assert below.exit_code == 2
    assert below.stderr == ("Error: --gpu-memory-utilization: must be at least 1e-09, not 1e-10. vLLM's share of the "
                            "card: below a billionth, it is less than a byte of a 1 GiB card.\n")
    for args in (["estimate", "--model", "llama-3.1-405b", "--task", "train", "--micro-batch", str(MAX_MICRO_BATCH),
                  "--seq-len", str(MAX_SEQ_LEN), "--gpu", "b200", "--gpus", str(MAX_GPUS), "--tp", "8"],
                 ["fit", "--model", "llama-3.1-405b", "--task", "infer", "--gpu", "h200-sxm", "--gpus", "8",
                  "--tp", "8", "--context", "max", "--concurrency", str(MAX_MICRO_BATCH)]):
        _check(_run(args), events=False)


# ----- scenarios and costs: every numeric key ---------------------------------------------------------

@st.composite
def scenario_docs(draw) -> dict[str, Any]:
    task = draw(st.sampled_from(["train", "infer"]))
    w: dict[str, Any] = {"name": "w", "model": draw(st.sampled_from(MODELS)), "task": task}
    if task == "train":
        for key, strategy in (("micro_batch", ints(1, MAX_MICRO_BATCH)), ("seq_len", ints(1, MAX_SEQ_LEN)),
                              ("grad_accum", ints(1, 1_000_000)), ("dataset_tokens", ints(1, 10**16)),
                              ("epochs", floats(0, 10_000, lo_open=True)), ("hours_per_month", floats(0, 744))):
            if draw(st.booleans()):
                w[key] = draw(strategy)
        w["method"] = draw(st.sampled_from(["full", "qlora"]))
    else:
        for key, strategy in (("context", ints(1, MAX_SEQ_LEN)), ("concurrency", ints(1, MAX_MICRO_BATCH)),
                              ("tokens_per_request", ints(1, 4096)), ("requests_per_hour", floats(0, 1e12)),
                              ("gpu_memory_utilization", floats(1e-9, 1, hi_open=True))):
            if draw(st.booleans()):
                w[key] = draw(strategy)
        if "gpu_memory_utilization" in w:
            w["engine"] = "vllm"
        if "tokens_per_request" in w:
            w["context"] = max(w.get("context", 4096), w["tokens_per_request"] + 1)
    constraints: dict[str, Any] = {"allowed_gpus": draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3,
                                                               unique=True))}
    if draw(st.booleans()):
        constraints["network"] = {"kind": draw(st.sampled_from(["infiniband", "roce"])),
                                  "min_rate": draw(st.sampled_from(["0 Gb/s", "1 Gb/s", "400 Gb/s", "3200 Gb/s"])),
                                  "nics_per_node": draw(ints(1, 64))}
    for key, strategy in (("max_cards", ints(1, MAX_GPUS)), ("max_nodes", ints(1, 64)),
                          ("budget_usd", st.one_of(floats(0, 1e308, lo_open=True), st.just(10**400))),
                          ("vram_headroom", floats(0, 0.95)), ("ram_vram_min", floats(0, 16)),
                          ("ram_vram_min_offload", floats(0, 16))):
        if draw(st.booleans()):
            constraints[key] = draw(strategy)
    doc: dict[str, Any] = {"name": "extreme", "workloads": [w], "constraints": constraints}
    if draw(st.booleans()):
        doc["extras"] = [{"description": "support", "unit_price_usd": draw(floats(0, 100_000_000)),
                          "quantity": draw(ints(1, 1_000_000)), "source": "quote", "as_of": "2026-01-01"}]
    costs: dict[str, Any] = {}
    for key, strategy in (("usd_per_kwh", floats(0, 5)), ("pue", floats(1, 3)),
                          ("gpu_power_fraction", floats(0, 1, lo_open=True)),
                          ("depreciation_years", floats(0, 20, lo_open=True)), ("residual_fraction", floats(0, 0.99)),
                          ("support_usd_per_year", floats(0, 10_000_000)), ("cloud_discount", floats(0, 0.99)),
                          ("mbu", floats(0, 1, lo_open=True))):
        if draw(st.booleans()):
            costs[key] = draw(strategy)
    if draw(st.booleans()):
        costs["utilization"] = draw(floats(0, 1, lo_open=True))
    else:
        costs["hours_per_month"] = draw(floats(0, 744, lo_open=True))
    doc["costs"] = costs
    return doc


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@fuzz(30)
@given(doc=scenario_docs(), command=st.sampled_from(["plan", "compare"]))
def test_plan_and_compare_over_the_accepted_ranges(doc: dict[str, Any], command: str, tmp_path_factory) -> None:
    d = tmp_path_factory.mktemp("extreme")
    path = d / "s.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    args = [command, str(path)] + (["--out", str(d / "out"), "--format", "json,csv"] if command == "plan" else [])
    _check(_run(args))
