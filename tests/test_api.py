"""The Python API (planner.api, reached as ``from planner import ...``).

Each function is checked against the command it is the Python form of: for the same inputs,
``to_dict()`` equals the document ``planner <command> --json`` prints (the CLI is a layer over the
API, so this pins that the layer adds nothing and loses nothing), and a bad input raises the
error whose one line the command prints. Message checks sit after the ``pytest.raises`` blocks.
"""

from __future__ import annotations

import doctest
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner.cli.options
from planner.catalog.loader import load_catalog as read_catalog
from planner.cli.main import main
from planner.core.errors import InfeasibleError, InputError, ScenarioError, UnknownKeywordError, UsageError

ROOT = Path(__file__).resolve().parents[1]
QLORA = dict(model="llama-2-7b", task="train", method="qlora", micro_batch=2, seq_len=1024)
QLORA_ARGS = ["--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--micro-batch", "2", "--seq-len",
              "1024"]


@functools.lru_cache(maxsize=1)
def _shipped() -> Any:
    return read_catalog()


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):
    """Run `planner ARGS` in-process with the shipped catalog read once; (exit code, stdout, stderr)."""
    monkeypatch.setattr(planner.cli.options, "load_catalog_option",
                        lambda d: _shipped() if d is None else read_catalog(Path(d)))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(ROOT / "tests" / "data" / "no-such-config"))  # no calibration file

    def run(*args: Any) -> tuple[int, str, str]:
        r = CliRunner().invoke(main, [str(a) for a in args])
        return r.exit_code, r.stdout, r.stderr

    return run


def _cli_json(cli, *args: Any) -> dict[str, Any]:
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


# ----- import ----------------------------------------------------------------------------------

def _python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip()


def test_import_planner_is_light():
    heavy = ("pandas", "numpy", "scipy", "openpyxl", "click", "yaml", "planner.api")
    out = _python(f"import sys, planner; print([m for m in {heavy!r} if m in sys.modules])")
    assert out == "[]"


def test_importing_the_api_itself_imports_no_pandas_openpyxl_or_scipy():
    out = _python("import sys; from planner import estimate, fit, plan, compare, load_catalog; "
                  "print([m for m in ('pandas', 'scipy', 'openpyxl', 'click') if m in sys.modules])")
    assert out == "[]"


def test_plan_is_the_function_and_the_stage_is_solve():
    # planner.plan is only the API function; the stage that chooses a machine is planner.solve, so
    # importing the stage first changes nothing about the name 'plan'
    out = _python("import planner.solve.solver as s; import planner; from planner import plan; "
                  "import inspect; print(inspect.isfunction(plan), plan.__module__, planner.solve.solver is s, "
                  "hasattr(plan, 'solver'))")
    assert out == "True planner.api.plans True False"


# ----- estimate ----------------------------------------------------------------------------------

def test_estimate_is_what_the_command_prints_as_json(cli):
    from planner import estimate

    r = estimate(**QLORA, catalog=_shipped())
    assert r.to_dict() == _cli_json(cli, "estimate", *QLORA_ARGS)
    assert r.per_gpu_total_bytes == r.estimate.per_gpu_total_bytes == r.to_dict()["per_gpu_total_bytes"]
    assert r.gpu is None and r.fits is None


def test_estimate_on_a_gpu_with_vllm_is_what_the_command_prints(cli):
    from planner import estimate

    r = estimate(model="llama-3.1-8b", task="infer", engine="vllm", gpu="h100-sxm", catalog=_shipped())
    doc = _cli_json(cli, "estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--gpu",
                    "h100-sxm")
    assert r.to_dict() == doc
    assert r.gpu.fits is doc["gpu"]["fits"] and r.gpu.vllm["kv_tokens"] == doc["gpu"]["vllm"]["kv_tokens"] > 0
    # vLLM's gpu_memory_utilization is the margin: no headroom is kept (planner.solve.candidates.takes_headroom)
    assert r.gpu.headroom_fraction == 0.0 and not r.takes_headroom
    assert r.context_note is not None and r.context_note in r.notes


def test_estimate_reads_a_workload_file_or_the_same_mapping(cli):
    import yaml

    from planner import estimate

    path = ROOT / "scenarios" / "workloads" / "qlora-7b.yaml"
    from_file = estimate(workload=path, catalog=_shipped(), gpu="rtx-3060-12gb", headroom=0.1)
    assert from_file.to_dict() == _cli_json(cli, "estimate", "--workload", path, "--gpu", "rtx-3060-12gb",
                                            "--headroom", "0.1")
    mapping = yaml.safe_load(path.read_text())
    assert estimate(workload=mapping, catalog=_shipped(), gpu="rtx-3060-12gb", headroom=0.1).to_dict() == \
        from_file.to_dict()
    # keyword options replace the workload's keys, as options replace a --workload file's
    assert estimate(workload=mapping, micro_batch=2, catalog=_shipped()).workload.train.micro_batch == 2
    assert mapping["micro_batch"] == 1  # the caller's mapping is not changed


def test_estimate_frame_is_the_breakdown_in_bytes():
    from planner import estimate

    r = estimate(**QLORA, catalog=_shipped())
    frame = r.to_frame()
    assert list(frame.columns) == ["component", "where", "when", "kind", "bytes", "GiB", "formula", "source"]
    assert frame.to_dict("records") == [
        {"component": c["name"], "where": c["where"], "when": c["phase"], "kind": c["kind"], "bytes": c["bytes"],
         "GiB": round(c["bytes"] / 2**30, 3), "formula": c["formula"], "source": c["source"]}
        for c in r.to_dict()["components"]]


def test_estimate_lora_targets_as_a_comma_separated_string_or_a_list():
    from planner import estimate

    a = estimate(**QLORA, lora_targets="q_proj, k_proj,v_proj", catalog=_shipped())
    b = estimate(**QLORA, lora_targets=["q_proj", "k_proj", "v_proj"], catalog=_shipped())
    assert a.to_dict() == b.to_dict()
    assert a.workload.train.lora_targets == ("q_proj", "k_proj", "v_proj")


def test_estimate_catalog_may_be_an_overlay_directory(tmp_path):
    from planner import estimate

    (tmp_path / "gpus.yaml").write_text("schema_version: 1\ngpus: []\n", encoding="utf-8")
    r = estimate(**QLORA, catalog=tmp_path, gpu="rtx-4090")
    assert r.to_dict() == estimate(**QLORA, catalog=_shipped(), gpu="rtx-4090").to_dict()


def test_an_unknown_keyword_is_a_type_error_naming_the_close_match():
    from planner import estimate

    with pytest.raises(UnknownKeywordError) as info:
        estimate(model="llama-2-7b", task="train", micro_bach=2, catalog=_shipped())
    err = info.value
    assert isinstance(err, TypeError) and isinstance(err, InputError)
    assert str(err) == "estimate() got an unexpected keyword argument 'micro_bach'. Did you mean 'micro_batch'?"


def test_another_tools_keyword_names_the_planners_as_the_command_does(cli):
    # per_device_train_batch_size is Hugging Face TrainingArguments' name (planner.workload.othernames);
    # close matches alone suggested nothing useful (batch_size read as 'dataset_size')
    from planner import estimate, fit

    with pytest.raises(UnknownKeywordError) as info:
        estimate(model="llama-2-7b", task="train", per_device_train_batch_size=2, catalog=_shipped())
    with pytest.raises(UnknownKeywordError) as fit_info:
        fit(model="llama-2-7b", task="train", gpu="rtx-4090", gradient_accumulation_steps=8, catalog=_shipped())
    assert str(info.value) == ("estimate() got an unexpected keyword argument 'per_device_train_batch_size'. "
                               "'per_device_train_batch_size' is another tool's name (the name in Hugging Face "
                               "TrainingArguments); the planner's keyword is 'micro_batch'.")
    assert "the planner's keyword is 'grad_accum'" in str(fit_info.value)
    # the command says the same of its option
    code, _, err = cli("estimate", "--model", "llama-2-7b", "--per-device-train-batch-size", "2")
    assert code == 2 and "the planner's option is '--micro-batch'" in err


def test_a_bad_value_is_the_error_the_command_prints(cli):
    from planner import estimate

    with pytest.raises(ScenarioError) as info:
        estimate(model="llama-2-7b", task="train", micro_batch=0, catalog=_shipped())
    code, _, err = cli("estimate", "--model", "llama-2-7b", "--task", "train", "--micro-batch", "0")
    assert code == info.value.exit_code == 2
    assert err == f"Error: {info.value.cli_line()}\n"  # the same error, which the command says with its option
    assert info.value.entry == "micro_batch"  # the API's: the keyword passed
    assert str(info.value) == "micro_batch: must be at least 1, not 0."


def test_headroom_without_a_gpu_is_refused_as_the_command_refuses_it(cli):
    from planner import estimate

    with pytest.raises(InputError) as info:
        estimate(**QLORA, headroom=0.1, catalog=_shipped())
    _, _, err = cli("estimate", *QLORA_ARGS, "--headroom", "0.1")
    assert err == f"Error: {info.value.cli_line()}\n"
    assert str(info.value).startswith("headroom: headroom applies to the fit check on a card: give gpu=ID with it.")


def test_neither_model_nor_workload_is_a_usage_error():
    from planner import estimate

    with pytest.raises(UsageError) as info:
        estimate(task="train", catalog=_shipped())
    assert str(info.value) == "estimate() needs model= (and task=), or workload= (a workload file or mapping)."
    assert info.value.usage == "give --model (and --task), or --workload FILE"


# ----- fit ------------------------------------------------------------------------------------------

def test_fit_is_what_the_command_prints_as_json(cli):
    from planner import fit

    r = fit(model="llama-3.1-70b", gpu="h100-sxm", gpus=8, task="infer", concurrency=16, context="max",
            catalog=_shipped())
    doc = _cli_json(cli, "fit", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "8", "--task", "infer",
                    "--concurrency", "16", "--context", "max")
    assert r.to_dict() == doc
    assert r.max_value == doc["max_value"] and r.fits and r.layout == "one replica at tp 8"
    # the answer fits and one more does not: the need at each, as the search found them
    assert r.need_bytes <= r.capacity_bytes and (r.next_need_bytes is None or r.next_need_bytes > r.capacity_bytes)


def test_fit_when_nothing_fits_raises_with_the_document_the_command_prints(cli):
    from planner import fit
    from planner.api import NoFit

    with pytest.raises(NoFit) as info:
        fit(model="llama-3.1-70b", gpu="rtx-3060-12gb", task="train", micro_batch="max", catalog=_shipped())
    code, out, err = cli("fit", "--model", "llama-3.1-70b", "--gpu", "rtx-3060-12gb", "--task", "train",
                         "--micro-batch", "max", "--json")
    assert isinstance(info.value, InfeasibleError) and code == info.value.exit_code == 1
    assert info.value.result.to_dict() == json.loads(out)
    assert info.value.result.max_value is None and info.value.result.to_dict()["fits"] is False
    assert err == str(info.value) + "\n"


def test_fit_gpu_layers_is_what_the_command_prints(cli):
    from planner import fit

    # a 70B Q4_K_M GGUF (about 40 GiB) on a 24 GB card: some layers on the GPU, the rest in host RAM
    r = fit(model="llama-3.1-70b", gpu="rtx-4090", task="infer", engine="llama.cpp", context=8192,
            gpu_layers="max", catalog=_shipped())
    doc = _cli_json(cli, "fit", "--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--task", "infer", "--engine",
                    "llama.cpp", "--context", "8192", "--gpu-layers", "max")
    assert r.to_dict() == doc
    assert r.workload.infer.gpu_layers == r.max_value and 0 < r.max_value < r.limit == 81
    assert r.need_bytes <= r.capacity_bytes < r.next_need_bytes


def test_fit_needs_exactly_one_max():
    from planner import fit

    with pytest.raises(UsageError) as info:
        fit(model="llama-2-7b", gpu="rtx-4090", micro_batch=4, catalog=_shipped())
    assert str(info.value) == ("fit() needs exactly one of micro_batch, seq_len, context, concurrency, gpu_layers "
                               "set to 'max'.")
    assert isinstance(info.value, TypeError)


# ----- plan -----------------------------------------------------------------------------------------

def test_plan_is_what_the_command_prints_as_json_and_writes_nothing_by_default(cli, tmp_path, monkeypatch):
    from planner import plan

    scenario = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
    monkeypatch.chdir(tmp_path)
    r = plan(scenario, catalog=_shipped())
    assert list(tmp_path.iterdir()) == []  # no reports/ directory, no file
    doc = _cli_json(cli, "plan", scenario, "--out", tmp_path / "cli", "--format", "json")
    assert doc.pop("outputs") == {"json": str(tmp_path / "cli" / "qlora-7b-12gb.json")}
    assert r.to_dict() == {**doc, "outputs": {}}
    assert (r.choice["gpu_id"], r.total_usd) == (doc["choice"]["gpu_id"], doc["total_usd"])


def test_plan_with_out_writes_the_reports_the_command_writes(cli, tmp_path):
    from planner import plan

    scenario = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
    r = plan(scenario, catalog=_shipped(), out=tmp_path / "api", format="csv,json,md")
    assert {k: p.name for k, p in r.outputs.items()} == {"csv": "qlora-7b-12gb.csv", "json": "qlora-7b-12gb.json",
                                                        "md": "qlora-7b-12gb.md"}
    code, _, _ = cli("plan", scenario, "--out", tmp_path / "cli", "--format", "csv,json,md")
    assert code == 0
    for name in ("qlora-7b-12gb.csv", "qlora-7b-12gb.json", "qlora-7b-12gb.md"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name


def test_plan_frames_are_the_plan_tables():
    from planner import plan

    r = plan(ROOT / "scenarios" / "qlora-7b-12gb.yaml", catalog=_shipped(), top=3)
    assert r.to_frame().equals(r.plan.candidates.to_frame())
    alternatives = r.to_frame("alternatives")
    assert len(alternatives) == 3 and list(alternatives["gpu_id"]) == list(r.plan.alternatives["gpu_id"])
    items = r.to_frame("line_items")
    assert items["total_usd"].sum() == pytest.approx(r.total_usd)
    with pytest.raises(InputError) as info:
        r.to_frame("alternative")
    assert str(info.value) == "table: no table 'alternative' in a plan. Did you mean 'alternatives'?"


def test_plan_of_a_mapping_is_the_plan_of_the_file():
    import yaml

    from planner import plan

    path = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
    a = plan(path, catalog=_shipped()).to_dict()
    b = plan(yaml.safe_load(path.read_text()), catalog=_shipped()).to_dict()
    # the file's path and digest are the file's; everything planned is the same
    for doc in (a, b):
        doc["assumptions"].pop("scenario_file", None)
        doc["assumptions"].pop("scenario_sha256", None)
    assert a == b


def test_plan_when_nothing_fits_writes_what_was_asked_and_raises(cli, tmp_path):
    from planner import plan
    from planner.solve.solver import NoFeasiblePlan

    scenario = ROOT / "tests" / "data" / "bad" / "scenario" / "fp8-on-ampere.yaml"
    with pytest.raises(NoFeasiblePlan) as info:
        plan(scenario, catalog=_shipped(), out=tmp_path / "api", format="json")
    code, out, _ = cli("plan", scenario, "--out", tmp_path / "cli", "--format", "json", "--json")
    assert code == info.value.exit_code == 1
    assert set(info.value.outputs) == {"json"}
    assert json.loads(info.value.outputs["json"].read_text()) == {
        k: v for k, v in json.loads(out).items() if k != "outputs"}


def test_plan_format_without_out_is_refused():
    from planner import plan

    with pytest.raises(InputError) as info:
        plan(ROOT / "scenarios" / "qlora-7b-12gb.yaml", format="csv", catalog=_shipped())
    assert str(info.value).startswith("format: format= names the reports to write into out=, and no out= is given.")


# ----- compare --------------------------------------------------------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_compare_is_what_the_command_prints_as_json(cli, tmp_path):
    from planner import compare

    scenario = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"
    r = compare(scenario, catalog=_shipped())
    assert r.to_dict() == _cli_json(cli, "compare", scenario)
    frame = r.to_frame()
    assert len(frame) == sum(len(w.cloud) for w in r.comparison.workloads)
    assert list(frame["instance_id"]) == [o.instance_id for w in r.comparison.workloads for o in w.cloud]
    written = compare(scenario, catalog=_shipped(), out=tmp_path)
    assert sorted(p.name for p in written.outputs.values()) == ["compare-qlora-7b-12gb-compare.json",
                                                                  "compare-qlora-7b-12gb-compare.xlsx"]
    assert json.loads(written.outputs["json"].read_text()) == r.to_dict()


# ----- load_catalog ---------------------------------------------------------------------------------

def test_load_catalog_is_the_catalog_the_commands_list(cli):
    from planner import load_catalog

    catalog = load_catalog()
    listed = _cli_json(cli, "catalog", "gpus")
    assert [g.id for g in catalog.gpus] == [g["id"] for g in listed]


def test_load_catalog_reads_an_overlay(tmp_path):
    from planner import load_catalog
    from planner.core.errors import CatalogError

    (tmp_path / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: x\n", encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path)
    assert str(tmp_path / "gpus.yaml") in str(info.value)


# ----- the docstrings' examples --------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_examples_in_the_docstrings_hold(monkeypatch):
    import planner.api
    from planner.api import comparisons, estimates, fits, plans

    monkeypatch.chdir(ROOT)  # the examples name the shipped scenarios by relative path
    failed = 0
    for module in (planner.api, estimates, fits, plans, comparisons):
        failed += doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed
    assert failed == 0


def test_cli_workload_options_are_api_keywords():
    from planner.api.inputs import workload_keys
    from planner.cli.options import ESTIMATE_OPTIONS

    options = [d.split("/")[0].lstrip("-").replace("-", "_") for d, _ in ESTIMATE_OPTIONS]
    assert [o for o in options if o not in workload_keys()] == []


def test_no_file_is_written_outside_out(tmp_path, monkeypatch):
    from planner import compare, estimate, fit, plan

    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    estimate(**QLORA, catalog=_shipped())
    fit(model="llama-2-7b", gpu="rtx-4090", task="train", method="qlora", seq_len=1024, micro_batch="max",
        catalog=_shipped())
    plan(ROOT / "scenarios" / "qlora-7b-12gb.yaml", catalog=_shipped())
    compare(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml", catalog=_shipped())
    assert set(os.listdir(tmp_path)) == before


def test_plan_and_compare_refuse_unknown_keywords_too():
    from planner import compare, plan

    with pytest.raises(UnknownKeywordError) as p_info:
        plan(ROOT / "scenarios" / "qlora-7b-12gb.yaml", tpo=3)
    with pytest.raises(UnknownKeywordError) as c_info:
        compare(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml", outt="x")
    assert str(p_info.value) == "plan() got an unexpected keyword argument 'tpo'. Did you mean 'top'?"
    assert str(c_info.value) == "compare() got an unexpected keyword argument 'outt'. Did you mean 'out'?"
    assert isinstance(p_info.value, TypeError) and isinstance(c_info.value, TypeError)
