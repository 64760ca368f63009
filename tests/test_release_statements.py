"""Issue 32 follow-ups: every output states the release it sized (``planner plan`` text, the xlsx Summary and
``planner fit`` for training), the torchtune stack text follows the release, and the version keys are read alike
(numbers, pre-releases, releases far past the newest modelled)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main as cli
from planner.memory import estimate
from planner.workload.engine_releases import ENGINE_RELEASES
from planner.workload.releases import FRAMEWORK_RELEASES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_frameworks import workload  # noqa: E402


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


# ----- planner plan: the engine release of an inference workload ------------------------------------------

SCENARIO = """name: rel
workloads:
  - name: old-vllm
    model: llama-3.1-8b
    task: infer
    engine: vllm
    engine_version: "0.6.5"
    context: 8192
  - name: new-vllm
    model: llama-3.1-8b
    task: infer
    engine: vllm
    context: 8192
  - name: ft
    model: llama-3.2-1b
    task: train
    method: qlora
    framework: unsloth
    framework_version: "2024.8"
constraints:
  allowed_gpus: [rtx-4090]
"""


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[str, Path]:
    d = tmp_path_factory.mktemp("plan")
    (d / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    res = _run("plan", str(d / "s.yaml"), "--out", str(d / "out"), "--format", "xlsx")
    assert res.exit_code == 0, res.output
    return res.output, d / "out" / "rel.xlsx"


def test_plan_text_states_each_inference_workloads_engine_release(planned):
    text = " ".join(planned[0].split())  # the printed block wraps its lines
    # given: as given, and the change it predates (V1 the default from 0.8.0)
    assert "engine release: vllm 0.6.5: as given (engine_version); it predates 0.8.0, where V1 became" in text
    # left out: the current release modelled, said to be the default
    current = ENGINE_RELEASES["vllm"].current
    assert f"engine release: vllm {current}: the current release modelled (default;" in text
    # the training workload keeps its stack's framework release, once
    assert text.count("framework release: unsloth 2024.8;") == 1


def test_xlsx_summary_states_the_engine_release_beside_the_training_stack(planned):
    from openpyxl import load_workbook

    ws = load_workbook(planned[1])["Summary"]
    cells = [str(c.value) for row in ws.iter_rows() for c in row if c.value is not None]
    assert "Training stack or engine release, and warnings, per workload" in cells
    assert any(c.startswith("engine release: vllm 0.6.5: as given (engine_version)") for c in cells)
    assert any(c.startswith(f"engine release: vllm {ENGINE_RELEASES['vllm'].current}: the current release")
               for c in cells)
    assert any("framework release: unsloth 2024.8;" in c for c in cells)


# ----- planner fit: the framework release of a training workload ------------------------------------------

FIT = ["fit", "--gpu", "rtx-4090", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--seq-len", "max"]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_fit_states_the_framework_release_in_text_and_json():
    res = _run(*FIT, "--framework", "unsloth", "--framework-version", "2024.8")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "Note: Framework release: unsloth 2024.8; predates 2024.11.8: cut cross-entropy" in text
    res = _run(*FIT, "--framework", "unsloth", "--framework-version", "2024.8", "--json")
    doc = json.loads(res.output)
    assert doc["framework_version"] == "2024.8"
    assert any(n.startswith("Framework release: unsloth 2024.8;") for n in doc["notes"])


def test_fit_states_the_default_framework_release():
    res = _run(*FIT, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    current = FRAMEWORK_RELEASES["transformers"].current
    assert doc["framework_version"] == current
    assert f"Framework release: transformers {current} (default: the newest release modelled; set " \
           "framework_version for another)." in doc["notes"]


def test_fit_that_finds_nothing_still_states_the_release():
    res = _run("fit", "--gpu", "rtx-4090", "--model", "llama-2-70b", "--task", "train", "--method", "lora",
               "--seq-len", "max", "--framework-version", "4.40.0")
    assert res.exit_code != 0
    assert "Note: Framework release: transformers 4.40.0" in res.output


def test_inference_fit_json_names_the_engine_release():
    res = _run("fit", "--gpu", "rtx-4090", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
               "--engine-version", "0.6.5", "--context", "max", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["engine_version"] == "0.6.5" and "framework_version" not in doc


# ----- torchtune's stack text follows the release ---------------------------------------------------------

def test_torchtune_before_0_3_is_described_as_fsdp1_and_whole_logits():
    # torchtune v0.2.1: FSDP1 in the distributed recipes and torch.nn.CrossEntropyLoss over the whole fp32
    # output (planner.workload.releases.TORCHTUNE_FSDP2); v0.3.0 on: FSDP2 and CEWithChunkedOutputLoss
    old = dict(estimate(workload(framework="torchtune", method="lora", gpus=2, framework_version="0.2.1")).stack)
    assert "FSDP1" in old["framework"] and "whole fp32 output" in old["framework"]
    assert "FSDP2" not in old["framework"] and "chunked" not in old["framework"]
    assert old["sharding"].startswith("PyTorch FSDP1")
    new = dict(estimate(workload(framework="torchtune", method="lora", gpus=2, framework_version="0.3.0")).stack)
    assert "FSDP2" in new["framework"] and "chunked cross-entropy" in new["framework"]
    assert new["sharding"].startswith("PyTorch FSDP2")


# ----- the version keys: one rule for both ---------------------------------------------------------------

def _error_line(*args: str) -> str:
    res = _run(*args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and res.stdout == "", res.output
    return lines[0]


@pytest.mark.parametrize("keys, key, shown, example", [
    ({"task": "train", "method": "qlora", "framework": "unsloth", "framework_version": 2024.8}, "framework_version",
     "2024.8", "'2025.1.5'"),
    ({"task": "infer", "engine": "vllm", "engine_version": 0.7}, "engine_version", "0.7", "'0.14.1'"),
    ({"task": "infer", "engine": "vllm", "engine_version": 0.10}, "engine_version", "0.1", "'0.14.1'"),
])
def test_the_api_refuses_a_number_for_either_key_without_speaking_of_yaml(keys, key, shown, example):
    # a Python float drops trailing zeros (0.10 is 0.1): refused for both keys alike, the hint asks for a string
    import planner
    from planner.core.errors import InputError

    with pytest.raises(InputError) as err:
        planner.estimate(model="llama-3.1-8b", **keys)
    text = str(err.value)
    assert f"{key} is the number {shown}, and a number drops a release's trailing zeros" in text, text
    assert f"Pass the release as a string, as its project writes it, e.g. {example}." in text, text
    assert "YAML" not in text and "Quote" not in text, text
    assert text.startswith(f"{key}: ") and "--" not in text, text  # the keyword passed, not the option (h16b)


def test_a_yaml_number_for_engine_version_speaks_of_yaml(tmp_path):
    f = tmp_path / "w.yaml"
    f.write_text("model: llama-3.1-8b\ntask: infer\nengine: vllm\nengine_version: 0.10\n")
    line = _error_line("estimate", "--workload", str(f))
    assert "YAML read the unquoted engine_version as the number 0.1" in line
    assert "Quote it as its project writes it, e.g. engine_version: '0.14.1'." in line


def test_a_whole_number_is_read_as_written():
    # YAML 2024 or a Python int has no trailing zeros to lose: read as the text it is
    w = workload(framework="unsloth", method="qlora", framework_version=2025)
    assert w.train.framework_version == "2025"


TRAIN = ("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "lora")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_another_projects_release_is_refused_naming_the_newest_and_whose_it_reads_as():
    # torchtune's newest modelled is 0.5.0: a major number of 4 is more than one past it (a Transformers release)
    line = _error_line(*TRAIN, "--framework", "torchtune", "--framework-version", "4.46.0")
    assert "torchtune 4.46.0 is past any torchtune release: the newest modelled is 0.5.0" in line
    assert "4.46.0 reads as a release of transformers (--framework transformers)" in line
    # transformers 2024.11: the user forgot --framework unsloth (Unsloth's releases are dated)
    line = _error_line(*TRAIN, "--framework-version", "2024.11")
    assert "transformers 2024.11 is past any transformers release: the newest modelled is 5.24.0" in line
    assert "2024.11 reads as a release of unsloth (--framework unsloth)" in line
    line = _error_line("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                       "--engine-version", "9.9.9")
    assert "vllm 9.9.9 is past any vllm release: the newest modelled is 0.14.1" in line


def test_a_plausible_newer_release_is_still_modelled_as_the_newest():
    # one major step past the newest modelled may exist: modelled as the newest, and said so
    from planner.workload.releases import release_text

    assert release_text("transformers", "6.0.0").startswith("transformers 6.0.0 (newer than the newest release "
                                                            "modelled: modelled as 5.24.0)")
    assert release_text("torchtune", "1.0.0").startswith("torchtune 1.0.0 (newer than the newest release")


def test_a_dated_release_after_this_year_or_of_no_month_is_refused():
    import datetime as dt

    line = FRAMEWORK_RELEASES["unsloth"]
    this_year = dt.date(2026, 12, 7)
    assert line.implausible("2026.12.1", today=this_year) is None
    why = line.implausible("2027.1", today=this_year)
    assert why is not None and "2027 is after this year (2026)" in why and "newest modelled is 2025.1.5" in why
    why = line.implausible("2025.13", today=this_year)
    assert why is not None and "13 is no month" in why
    # llama.cpp builds have no bound: b999999 is modelled as the newest build
    assert ENGINE_RELEASES["llama.cpp"].implausible("b999999") is None


@pytest.mark.parametrize("framework", ["deepspeed", "fsdp"])
def test_deepspeed_and_fsdp_say_the_key_is_the_transformers_release(framework):
    line = _error_line("estimate", "--model", "llama-2-7b", "--task", "train", "--framework", framework,
                       "--zero", "2" if framework == "deepspeed" else "3", "--gpus", "2",
                       "--framework-version", "0.15.4")
    assert (f"with framework {framework}, --framework-version names the Transformers release (its model code, loss "
            "and Trainer are Transformers'), and transformers 0.15.4 is older than the oldest release planner models "
            "(4.31.0)") in line


def test_pre_releases_come_before_their_final_release():
    # PEP 440: 4.36.0.dev0 < 4.36.0rc1 < 4.36.0 < 4.36.0.post1; SDPA came with 4.36.0, so its rc lacks it
    from planner.core.versions import release_key

    assert release_key("4.36.0.dev0") < release_key("4.36.0rc1") < release_key("4.36.0") < release_key("4.36.0.post1")
    assert release_key("4.36.0") == release_key("4.36")
    line = _error_line(*TRAIN, "--framework-version", "4.36.0rc1", "--attention", "sdpa")
    assert "Transformers 4.36.0rc1 has no SDPA attention (LlamaSdpaAttention came with 4.36.0)" in line
    stack = dict(estimate(workload(framework="transformers", method="lora", framework_version="4.36.0rc1")).stack)
    assert stack["framework release"].startswith("transformers 4.36.0rc1 (a pre-release, read as older than the final "
                                                 "release of its numbers, as PEP 440 orders them); predates 4.36.0: ")
    # vLLM 0.8.0rc1 is read as before 0.8.0: the V0 engine
    res = _run("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--engine-version",
               "0.8.0rc1", "--json")
    assert res.exit_code == 0, res.output
    note = [n for n in json.loads(res.output)["notes"] if n.startswith("vllm 0.8.0rc1")][0]
    assert "(a pre-release, read as older than the final release" in note and "it predates 0.8.0" in note


def test_not_a_release_names_the_frameworks_own_form_not_a_llama_cpp_build():
    line = _error_line(*TRAIN, "--framework", "unsloth", "--framework-version", "latest")
    assert "'latest' is not a release of unsloth" in line and "e.g. '2025.1.5'" in line and "b4567" not in line


def test_an_older_vllm_release_hint_does_not_cap_the_release_at_the_newest_modelled():
    line = _error_line("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                       "--engine-version", "0.5.4")
    assert "older than the oldest release planner models (0.6.0)" in line
    assert "from 0.6.0 to 0.14.1" not in line and "Leave --engine-version out for the newest release modelled" in line


def test_flash_attention_help_says_old_builds_default_off():
    # engine_releases.LLAMACPP_FA_AUTO: -fa defaulted off before b6327
    res = _run("estimate", "--help")
    assert "off for an --engine-version before b6327" in " ".join(res.output.split())


# ----- reports/validation.md: the training releases' section is the generator's ---------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_training_release_section_is_current():
    # reports/validation.md carries tests/test_framework_releases.py's tables (python -m planner.validate.validation)
    from planner.validate.validation import framework_releases_section

    here = Path(__file__).parent
    section = framework_releases_section(here / "test_framework_releases.py")
    assert section.startswith("## Training framework releases")
    assert section in (here.parent / "reports" / "validation.md").read_text(encoding="utf-8")
