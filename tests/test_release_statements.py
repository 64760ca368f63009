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
