"""Memory cases from public bug reports of peer tools (issue 34): each test states the thread, the
figure it establishes and where the planner's number comes from. reports/validation.md lists them
("Public bug reports") with the predicted figure beside the thread's.

Units: GB = 1e9 B, GiB = 2^30 B, as each thread writes them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.core.errors import InputError
from planner.memory import estimate
from planner.model.architecture import from_hf_config
from planner.workload.spec import workload_from_mapping

ROOT = Path(__file__).resolve().parent.parent
GB, GiB, MiB = 10**9, 2**30, 2**20


def _catalog(model_id: str):
    models = {m["id"]: m for m in yaml.safe_load((ROOT / "catalog" / "models.yaml").read_text())["models"]}
    return from_hf_config(models[model_id]["config"], model_id)


def _workload(arch, **keys):
    return workload_from_mapping({"model": "m", **keys}, lambda name, entry: (name, "test", arch))


def _component(est, name: str) -> int:
    return next(c.bytes for c in est.components if c.name == name)


# ----- 5. host RAM while loading: the load dtype ----------------------------------------------------
# huggingface/transformers#13466 (GPT-J-6B loading): from_pretrained without low_cpu_mem_usage builds
# the model with random weights in the load dtype and then loads the state dict beside it. The
# Transformers GPT-J docs of the time (PR 13795): "To load GPT-J in float32 one would need at least 2x
# model size RAM: 1x for initial weights and another 1x to load the checkpoint. So for GPT-J it would
# take at least 48GB RAM to just load the model." In fp16 (the float16 revision, torch_dtype
# float16) the same two copies are 2 x 6.05 B x 2 B = 24.2 GB.
GPTJ_FP16_LOAD_GB = 24.2   # thread: ~24 GB (2 x the fp16 model)
GPTJ_FP32_LOAD_GB = 48.0   # docs: "at least 48GB RAM" (2 x 6.05 B x 4 B = 48.4 GB)


def _gptj_load(**keys) -> int:
    w = _workload(_catalog("gpt-j-6b"), task="infer", engine="hf", weights="fp16", context=2048,
                  low_cpu_mem_usage=False, **keys)
    return next(c.bytes for c in estimate(w).host_components() if c.name == "model loading peak")


def test_gptj_fp16_load_without_low_cpu_mem_usage_is_twice_the_model():
    load = _gptj_load(checkpoint_dtype="fp16", torch_dtype="float16")
    assert load == 2 * 6_050_882_784 * 2
    assert load / GB == pytest.approx(GPTJ_FP16_LOAD_GB, rel=0.01)
    # the newer spelling of the same argument (Transformers 4.56+: dtype=)
    assert _gptj_load(checkpoint_dtype="fp16", dtype="torch.float16") == load


def test_gptj_fp32_load_is_the_docs_48_gb():
    # the main branch is an fp32 checkpoint (config torch_dtype float32): the default load dtype is
    # the checkpoint's, as dtype="auto"
    load = _gptj_load()
    assert load / GB == pytest.approx(GPTJ_FP32_LOAD_GB, rel=0.01)
    assert _gptj_load(torch_dtype="auto") == load
    # an fp16 load of that fp32 checkpoint: fp16 random init + the fp32 state dict = 6 B/param
    assert _gptj_load(torch_dtype="float16") == 6_050_882_784 * 6


def test_load_dtype_with_low_cpu_mem_usage_is_one_model_in_that_dtype():
    arch = _catalog("llama-2-7b")
    w = _workload(arch, task="train", torch_dtype="float32")
    load = next(c.bytes for c in estimate(w).host_components() if c.name == "model loading peak")
    assert load == arch.parameters * 4


def test_load_dtype_keys_are_checked():
    arch = _catalog("llama-2-7b")
    try:
        _workload(arch, task="train", torch_dtype="fp16")
    except InputError as exc:
        err = exc
    else:  # pragma: no cover - the test fails here
        raise AssertionError("torch_dtype fp16 was accepted")
    assert "torch_dtype" in str(err) and "float16" in str(err)
    try:
        _workload(arch, task="train", torch_dtype="float16", dtype="float16")
    except InputError as exc:
        err = exc
    else:  # pragma: no cover
        raise AssertionError("both keys were accepted")
    assert "not both" in str(err)
