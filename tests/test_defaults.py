"""Defaults that follow the question (issue 19, item 2): serving several sequences defaults to vLLM and
says so; training keys a scenario leaves out are the solver's to choose, and the plan names what it
chose; fit names the settings that would fit, each checked again here with estimate."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from planner.catalog.loader import load_catalog
from planner.core.errors import InputError
from planner.workload.inputs import make_resolver
from planner.workload.spec import default_engine, workload_from_mapping
from planner.cli.main import main
from tests.plan_helpers import gpu, platform, scen, tiny_catalog, train_workload

SERVE = {"model": "llama-3.1-8b", "task": "infer", "context": 2048}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def resolver():
    return make_resolver(load_catalog())


@pytest.mark.parametrize("keys, engine", [({"concurrency": 1}, "hf"), ({}, "hf"), ({"concurrency": 4}, "vllm"),
                                          ({"concurrency": 4, "engine": "hf"}, "hf"),
                                          ({"concurrency": 4, "attention": "sdpa"}, "hf")])
def test_the_engine_follows_the_concurrency_unless_named(resolver, keys, engine):
    w = workload_from_mapping({**SERVE, **keys}, resolver)
    assert w.infer.engine == engine == default_engine({**SERVE, **keys})
    # only a defaulted vLLM is flagged, and its estimate says how to pin the engine
    assert w.infer.engine_defaulted == (engine == "vllm" and "engine" not in keys)


def test_a_written_engine_is_still_checked(resolver):
    with pytest.raises(InputError) as bad:
        workload_from_mapping({**SERVE, "concurrency": 4, "engine": "vlm"}, resolver)
    assert "vllm" in (bad.value.hint or "")
    with pytest.raises(InputError):
        workload_from_mapping({**SERVE, "concurrency": 4, "engine": []}, resolver)


def test_estimate_and_plan_say_the_engine_was_defaulted(tmp_path):
    e = run("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--concurrency", 4)
    assert e.exit_code == 0, e.output
    assert "engine vllm chosen by default" in e.output and "engine: hf (--engine hf)" in e.output
    sc = tmp_path / "s.yaml"
    sc.write_text("workloads:\n  - {name: chat, model: llama-3.1-8b, task: infer, context: 2048, concurrency: 4}\n")
    doc = json.loads(run("plan", sc, "--out", tmp_path, "--format", "json", "--json").output)
    assert "engine: vllm is the default for an slo: or concurrency > 1; pin engine: hf" in doc["choice"]["strategy"]


def test_left_out_training_keys_are_the_solvers_and_the_plan_names_them():
    from planner.solve.solver import plan

    # a 4 GiB card; 64 x 4,096 tokens of fp32 activations do not fit as the reader's defaults write them
    # (ZeRO-0, no offload, no checkpointing: infeasible), so the solver picks others when they are left out
    cat = tiny_catalog(gpus=[gpu(memory_gib=4)], platforms=[platform()])
    big = dict(micro_batch=64, seq_len=4096, recipe="fp32")
    from planner.solve.solver import NoFeasiblePlan

    with pytest.raises(NoFeasiblePlan):
        plan(scen(cat, train_workload(**big, zero=0, offload_optimizer=False, checkpointing="none")), cat)
    p = plan(scen(cat, train_workload(**big)), cat)
    (strategy,) = p.strategies
    m = re.search(r"solver chose zero: (\d), offload_optimizer: (true|false), checkpointing: (\w+) \(left out of "
                  r"the scenario; write them to pin\)", strategy)
    assert m, strategy
    # what it names is the strategy it planned, and not the defaults that did not fit
    assert f"ZeRO-{m.group(1)}" in strategy and f"checkpointing {m.group(3)}" in strategy
    assert ("offload optimizer" in strategy) == (m.group(2) == "true")
    assert m.groups() != ("0", "false", "none")
    # a framework's recipes set these keys: nothing is left to the solver then
    sw = scen(cat, train_workload(**big, framework="deepspeed", zero=2)).workloads[0]
    assert all(not v.solver_keys for v in sw.variants)


def test_a_left_out_key_with_one_valid_value_is_not_called_the_solvers_choice():
    # ZeRO-Offload runs only adamw and lion on the CPU (planner.workload.spec): with adafactor only
    # offload_optimizer: false is valid, so the solver chose nothing there; zero and checkpointing it did
    cat = tiny_catalog(gpus=[gpu(memory_gib=24)], platforms=[platform()])
    (sw,) = scen(cat, train_workload(optimizer="adafactor")).workloads
    assert {dict(v.choices)["offload_optimizer"] for v in sw.variants} == {False}
    assert all(v.solver_keys == ("zero", "checkpointing") for v in sw.variants)
    note = sw.variants[0].solver_note()
    assert note.startswith("; solver chose zero: ") and "offload_optimizer" not in note
    # with adamw both offload values run: the key stays the solver's
    (sw2,) = scen(cat, train_workload(optimizer="adamw")).workloads
    assert "offload_optimizer" in sw2.variants[0].solver_keys


def test_fit_names_settings_that_estimate_confirms_fit():
    # QLoRA of Llama-2-70B at ZeRO-3 on one RTX 4090 does not fit; each suggestion names its GPU count and
    # keys: estimate with those keys must give the need the suggestion states, within the card's capacity
    args = ("--model", "llama-2-70b", "--task", "train", "--method", "qlora", "--zero", 3)
    d = json.loads(run("fit", "--gpu", "rtx-4090", *args, "--micro-batch", "max", "--json").stdout)
    assert d["fits"] is False and d["suggestions"]
    first = d["suggestions"][0]
    m = re.match(r"checkpointing: full on (\d+) x rtx-4090 \(gpus: \d+\): ([\d.]+) GiB per GPU", first)
    assert m, first
    e = json.loads(run("estimate", *args, "--micro-batch", 1, "--checkpointing", "full", "--gpus", m.group(1),
                       "--json").output)
    assert f"{e['per_gpu_total_bytes'] / 2**30:.2f}" == m.group(2)
    assert e["per_gpu_total_bytes"] <= d["capacity_bytes"]
