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


def _gptj_load(task: str = "train", **keys) -> int:
    shape = dict(weights="fp16", context=2048, engine="hf") if task == "infer" else {}
    w = _workload(_catalog("gpt-j-6b"), task=task, low_cpu_mem_usage=False, **shape, **keys)
    return next(c.bytes for c in estimate(w).host_components() if c.name == "model loading peak")


def test_gptj_fp16_load_without_low_cpu_mem_usage_is_twice_the_model():
    load = _gptj_load(checkpoint_dtype="fp16", torch_dtype="float16")
    assert load == 2 * 6_050_882_784 * 2
    assert load / GB == pytest.approx(GPTJ_FP16_LOAD_GB, rel=0.01)
    # the newer spelling of the same argument (Transformers 4.56+: dtype=)
    assert _gptj_load(checkpoint_dtype="fp16", dtype="torch.float16") == load
    # serving with Transformers: the weights' dtype is the load dtype
    assert _gptj_load("infer", checkpoint_dtype="fp16") == load


def test_gptj_fp32_load_is_the_docs_48_gb():
    # the main branch is an fp32 checkpoint (config torch_dtype float32): the default load dtype is
    # the checkpoint's, as dtype="auto"
    load = _gptj_load()
    assert load / GB == pytest.approx(GPTJ_FP32_LOAD_GB, rel=0.01)
    assert _gptj_load(torch_dtype="auto") == load
    # an fp16 load of that fp32 checkpoint: fp16 random init + the fp32 state dict = 6 B/param (36.3 GB)
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


# ----- 4. a card filled to the brim: fragmentation risk --------------------------------------------
# pytorch/pytorch#35901 ("CUDA out of memory" with memory reserved but unallocated): once the caching
# allocator has split its cache, a request larger than every free block fails though the free total
# would hold it; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True removes most of it. Threshold
# (planner.memory.fragmentation): the spare a fit leaves beyond the headroom against the workload's
# largest transient allocation. Llama-3.2-1B LoRA at micro-batch 1: the fp32 logits of the loss
# (Transformers' ForCausalLMLoss upcasts them) are that allocation: seq_len x 128,256 x 4 B.
LLAMA32_1B_LORA = dict(model="llama-3.2-1b", task="train", method="lora", micro_batch=1)


def test_estimate_flags_a_card_left_with_less_spare_than_the_largest_transient():
    from planner.api import estimate as api_estimate
    from planner.memory.fragmentation import EXPANDABLE_SEGMENTS

    full = api_estimate(gpu="rtx-4090", seq_len=6208, **LLAMA32_1B_LORA)
    g = full.gpu
    transient = full.estimate.extra["largest_transient_bytes"]
    assert transient == 6208 * 128_256 * 4  # the fp32 logits, 3.0 GiB
    assert g.fits and 0 <= g.headroom_bytes < 64 * MiB  # "fits, spare 42 MiB"
    assert g.fragmentation_risk is not None
    assert EXPANDABLE_SEGMENTS in g.fragmentation_risk and "pytorch/pytorch#35901" in g.fragmentation_risk
    assert g.to_dict()["fragmentation_risk"] == g.fragmentation_risk
    # half the context leaves more spare than its logits: no flag
    roomy = api_estimate(gpu="rtx-4090", seq_len=2048, **LLAMA32_1B_LORA).gpu
    assert roomy.fits and roomy.headroom_bytes > 2048 * 128_256 * 4 and roomy.fragmentation_risk is None


def test_fit_answer_carries_the_risk_and_llamacpp_does_not():
    from planner.api import fit

    r = fit(gpu="rtx-4090", seq_len="max", **LLAMA32_1B_LORA)
    assert r.capacity_bytes - r.need_bytes < r.estimate.extra["largest_transient_bytes"]
    assert any(w.startswith("fragmentation risk: ") for w in r.warnings)
    # llama.cpp allocates its buffers once, at start-up: no caching allocator to fragment
    g = fit(gpu="rtx-4090", model="llama-3.1-8b", task="infer", engine="llama.cpp", weights="Q4_K_M",
            context="max")
    assert not any("fragmentation" in w for w in g.warnings)


def test_plan_warns_when_the_chosen_card_is_filled_past_the_largest_transient():
    from planner.memory import estimate as mem_estimate
    from planner.solve.solver import plan
    from tests.plan_helpers import gpu, platform, scen, tiny_catalog, train_workload

    base = tiny_catalog(gpus=[gpu()], platforms=[platform()])
    w = train_workload(recipe="pure-bf16", seq_len=2048)
    est = mem_estimate(scen(base, w).workloads[0].variants[0].workload)
    need, transient = est.per_gpu_total_bytes, est.extra["largest_transient_bytes"]
    assert transient > 0
    for spare, warned in ((transient // 2, True), (2 * transient, False)):
        cat = tiny_catalog(gpus=[gpu(usable=need + spare)], platforms=[platform()])
        p = plan(scen(cat, w, vram_headroom=0), cat)
        said = [x for x in p.warnings if "fragmentation risk" in x]
        assert bool(said) == warned
        if warned:
            assert said[0].startswith("train: fragmentation risk: ")
            assert "expandable_segments:True" in said[0]
