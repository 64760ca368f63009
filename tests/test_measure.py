"""Checks of planner.validate.measure, the storage-counting tracker behind the validation data.

The tracker tests need torch (skipped without it); the grid and import checks do not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.validate.measure import load_grid
from planner.validate.tracker import ALLOCATOR_ROUNDING, round_alloc

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "tests" / "data" / "validation" / "grid.yaml"
MEASURED = ROOT / "tests" / "data" / "validation" / "measured_cpu.json"


def _torch():
    return pytest.importorskip("torch")


# --------------------------------------------------------------------------- no torch needed


def test_round_alloc_matches_allocator_granularity():
    assert ALLOCATOR_ROUNDING == 512
    assert round_alloc(0) == 0
    assert round_alloc(1) == 512
    assert round_alloc(512) == 512
    assert round_alloc(513) == 1024
    assert round_alloc(4000) == 4096


def test_importing_measure_does_not_import_torch():
    code = "import sys, planner.validate.measure; sys.exit(1 if 'torch' in sys.modules else 0)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_grid_covers_the_issue():
    runs = load_grid(GRID)
    assert len(runs) >= 45
    types = {r["config"]["model_type"] for r in runs}
    # The issue's Llama-, Qwen2- and GPT-2-style families, and every other model_type the planner reads
    # (gemma3, the multimodal checkpoint, runs the gemma3_text model for text).
    from planner.model.architecture import SUPPORTED_MODEL_TYPES
    assert types == set(SUPPORTED_MODEL_TYPES) - {"gemma3"}
    train = [r["settings"] for r in runs if r["kind"] == "train"]
    infer = [r["settings"] for r in runs if r["kind"] == "inference"]
    assert {s["mode"] for s in train} == {"fp32", "pure-bf16", "amp-bf16"}
    assert {s["attention"] for s in train} == {"eager", "sdpa"}
    assert any(s.get("checkpointing") for s in train)
    assert any(s.get("lora_rank") for s in train)
    # every optimizer the planner sizes is stepped by its implementation in some run, but the paged ones:
    # bitsandbytes pages their states in CUDA unified memory (cudaMallocManaged), which a CPU run has not;
    # tests/test_frameworks.py derives their split instead
    from planner.workload.recipes import OPTIMIZERS
    paged = {name for name, opt in OPTIMIZERS.items() if opt.paged}
    assert paged == {"paged-adamw", "paged-adamw-8bit"}
    assert {s.get("optimizer", "adamw") for s in train} == set(OPTIMIZERS) - paged
    # and each lever of issue 16 the harness can run on a CPU
    for lever in ("loss_chunks", "optimizer_in_backward", "offload_activations", "compile"):
        assert any(s.get(lever) for s in train), lever
    assert any(s.get("load_in_8bit") for s in train) and any(s.get("method") == "qlora" for s in train)
    assert len(infer) >= 8
    for r in runs:
        cfg, s = r["config"], r["settings"]
        h = cfg.get("hidden_size", cfg.get("n_embd"))
        assert 64 <= h <= 512
        assert 2 <= cfg.get("num_hidden_layers", cfg.get("n_layer")) <= 6
        assert 1000 <= cfg["vocab_size"] <= 32000
        if r["kind"] == "train":
            assert 1 <= s["micro_batch"] <= 4 and 32 <= s["seq_len"] <= 512
            if s.get("lora_rank"):
                assert 4 <= s["lora_rank"] <= 16


def test_measured_file_matches_grid():
    if not MEASURED.exists():
        pytest.skip("measured_cpu.json not generated yet")
    doc = json.loads(MEASURED.read_text(encoding="utf-8"))
    assert {"torch", "transformers", "peft", "python"} <= set(doc["versions"])
    grid = load_grid(GRID)
    assert [r["id"] for r in doc["runs"]] == [r["id"] for r in grid]
    for run, spec in zip(doc["runs"], grid):
        assert run["kind"] == spec["kind"]
        assert run["config"] == spec["config"] and run["settings"] == spec["settings"]
        assert run["peak_bytes"] % ALLOCATOR_ROUNDING == 0
        assert run["peak_bytes"] >= run["start_bytes"] > 0
        assert run["peak_phase"] in run["phases"]
        assert run["breakdown_at_peak"]["total"] == run["peak_bytes"]
        for stats in run["phases"].values():
            assert stats["start_bytes"] <= stats["peak_bytes"] <= run["peak_bytes"]


# --------------------------------------------------------------------------- tracker


@pytest.mark.torch
def test_new_tensor_counts_rounded_bytes():
    torch = _torch()
    from planner.validate.tracker import make_tracker

    tracker = make_tracker()
    with tracker:
        for n in (1, 100, 128, 129, 1000, 4096):
            before = tracker.live_bytes
            t = torch.empty(n, dtype=torch.float32)
            assert tracker.live_bytes - before == -(-4 * n // 512) * 512
            del t
            assert tracker.live_bytes == before


@pytest.mark.torch
def test_views_and_in_place_ops_add_nothing():
    torch = _torch()
    from planner.validate.tracker import make_tracker

    tracker = make_tracker()
    with tracker:
        t = torch.zeros(64, 64)
        live = tracker.live_bytes
        assert live == 64 * 64 * 4
        views = [t.view(-1), t[::2], t.t(), t[3], t.transpose(0, 1).unsqueeze(0), t.as_strided((8,), (1,))]
        t.add_(1.0)
        t.mul_(2.0)
        assert tracker.live_bytes == live
        del t  # the views keep the storage alive
        assert tracker.live_bytes == live
        del views
        assert tracker.live_bytes == 0


@pytest.mark.torch
def test_frees_lower_the_count_and_the_peak_stays():
    torch = _torch()
    from planner.validate.tracker import make_tracker

    tracker = make_tracker()
    with tracker:
        window = tracker.begin_window()
        with tracker.phase("forward"):
            a = torch.ones(1000)   # 4000 -> 4096
            b = torch.ones(3000)   # 12000 -> 12288
            del a
            c = torch.ones(10)     # 40 -> 512
        assert tracker.live_bytes == 12288 + 512
        window = tracker.end_window()
    assert window.peak == 4096 + 12288
    assert window.peak_phase == "forward"
    assert window.phases["forward"].peak == 4096 + 12288
    assert window.phases["forward"].end == 12288 + 512
    del b, c


@pytest.mark.torch
def test_resize_and_outside_dispatch_storages():
    torch = _torch()
    from planner.validate.tracker import make_tracker

    outside = torch.ones(256)  # 1024 bytes, made before tracking and not registered
    tracker = make_tracker()
    with tracker:
        t = torch.empty(10)
        assert tracker.live_bytes == 512
        t.resize_(1000)  # in place, the storage grows
        assert tracker.live_bytes == 4096
        # a storage the tracker has not seen is counted at its first use, as "external"
        window = tracker.begin_window()
        x = outside
        del outside
        y = x + 1
        assert window.external_bytes == 1024
        assert tracker.live_bytes == 4096 + 1024 + 1024
        tracker.end_window()
        del t, x, y


@pytest.mark.torch
def test_linear_training_step_matches_hand_computation():
    """One AdamW (foreach) step of a bias-free Linear(256 -> 128) on an (8, 256) batch, fp32.

    Hand count (every size below is already a multiple of 512):
      W = 128*256*4 = 131072; AdamW exp_avg and exp_avg_sq: 131072 each (step 2: they exist).
      start     W + m + v                                        = 393216
      forward   + x (8*256*4 = 8192) + y (8*128*4 = 4096) + loss (4 B -> 512)
                peak 393216 + 8192 + 4096 + 512                  = 406016
                y is not saved by sum() nor by mm (which keeps x and W): freed -> 401920
      backward  + ones_like(loss) 512 + dW = mm(dy^T, x) 131072  peak 533504
                after del loss, x: W + m + v + dW                = 524288
      optimizer foreach AdamW: lerp_/mul_/addcmul_/addcdiv_ are in place; _foreach_sqrt makes
                a temporary the size of v: 524288 + 131072       = 655360  (the step's peak)
                then zero_grad(set_to_none) frees dW             -> 393216
    The 'step' counter is a CPU scalar even on CUDA and is excluded, as measure_train_step does.
    """
    torch = _torch()
    from planner.validate.tracker import make_tracker

    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 128, bias=False)
    opt = torch.optim.AdamW(lin.parameters(), foreach=True)
    lin(torch.randn(8, 256)).sum().backward()
    opt.step()  # step 1 creates the optimizer state
    opt.zero_grad(set_to_none=True)
    state = [v for s in opt.state.values() for k, v in s.items() if k != "step"]
    steps = [s["step"] for s in opt.state.values()]

    tracker = make_tracker()
    with tracker:
        tracker.exclude(steps)
        tracker.track_existing(list(lin.parameters()) + state)
        window = tracker.begin_window()
        with tracker.phase("forward"):
            x = torch.randn(8, 256)
            loss = lin(x).sum()
        with tracker.phase("backward"):
            loss.backward()
            del loss, x
        with tracker.phase("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        window = tracker.end_window()

    w = 128 * 256 * 4
    phases = window.phase_dict()
    assert window.start == 3 * w == 393216
    assert phases["forward"]["peak_bytes"] == 3 * w + 8192 + 4096 + 512 == 406016
    assert phases["forward"]["end_bytes"] == 3 * w + 8192 + 512
    assert phases["backward"]["peak_bytes"] == 3 * w + 8192 + 512 + 512 + w == 533504
    assert phases["backward"]["end_bytes"] == 4 * w
    assert phases["optimizer"]["peak_bytes"] == 5 * w == 655360
    assert window.peak == 655360 and window.peak_phase == "optimizer"
    assert window.peak_op == "aten._foreach_sqrt.default"
    assert window.end == 3 * w
    assert sum(nb for nb, _, _ in window.snapshot.values()) == window.peak


# --------------------------------------------------------------------------- Transformers runs

@pytest.mark.torch
def test_measuring_does_not_import_torch_here():
    """The runs happen in the measuring worker: the caller's process imports neither torch nor Transformers,
    not even to read the results or an error raised there."""
    _torch()
    pytest.importorskip("transformers")
    code = ("import sys, json\n"
            "from planner.validate.measure import measure_inference\n"
            f"config = json.loads({json.dumps(json.dumps(TINY_LLAMA))})\n"
            "res = measure_inference(config, dtype='bf16', batch=1, prompt_len=8, new_tokens=2, attention='sdpa')\n"
            "assert res['peak_bytes'] > 0\n"
            "try:\n"
            "    measure_inference(config, dtype='bf16', batch=1, prompt_len=8, new_tokens=2, attention='flash')\n"
            "except ValueError as exc:\n"
            "    assert 'attention must be one of' in str(exc), exc\n"
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[]\n"


@pytest.fixture(scope="module")
def worker():
    """One measuring worker for this module's runs (torch and Transformers are imported once)."""
    from planner.validate.worker import MeasureWorker

    with MeasureWorker() as w:
        yield w


TINY_LLAMA = {
    "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
}


@pytest.mark.torch
def test_train_step_accounting_is_consistent(worker):
    _torch()
    pytest.importorskip("transformers")
    from planner.validate.measure import measure_train_step

    res = measure_train_step(TINY_LLAMA, mode="fp32", micro_batch=2, seq_len=32, attention="sdpa",
                             worker=worker)
    params = res["model"]["parameter_bytes_counted"]
    # fp32 AdamW: two states the size of the (rounded) parameters; the foreach step's
    # temporary is one more parameter-sized list (sqrt of exp_avg_sq)
    assert res["optimizer_state_bytes"] == 2 * params
    assert res["gradient_bytes"] == params
    assert res["optimizer_step_extra_bytes"] == params
    assert res["start_bytes"] == 3 * params + res["model"]["buffer_bytes_counted"]
    assert res["breakdown_at_peak"]["total"] == res["peak_bytes"]
    assert res["first_step"]["start_bytes"] == params + res["model"]["buffer_bytes_counted"]
    assert res["external_bytes"] == 0
    assert res["sdpa_backend"] is not None


def test_qlora_needs_bf16_and_a_rank():
    # checked before torch is imported
    from planner.validate.measure import measure_train_step

    with pytest.raises(ValueError, match="pure-bf16"):
        measure_train_step(TINY_LLAMA, mode="fp32", micro_batch=1, seq_len=32, attention="sdpa",
                           method="qlora", lora_rank=4)
    with pytest.raises(ValueError, match="lora_rank"):
        measure_train_step(TINY_LLAMA, mode="pure-bf16", micro_batch=1, seq_len=32, attention="sdpa",
                           method="qlora")


TINY_LLAMA_NF4 = {
    "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2,
    "num_key_value_heads": 1, "intermediate_size": 256, "vocab_size": 1000,
}


@pytest.mark.torch
@pytest.mark.parametrize("prepare", [False, True])
def test_qlora_step_holds_a_packed_4bit_base(prepare, worker):
    _torch()
    for lib in ("transformers", "peft", "bitsandbytes"):
        pytest.importorskip(lib)
    from planner.validate.measure import measure_train_step

    res = measure_train_step(TINY_LLAMA_NF4, mode="pure-bf16", micro_batch=1, seq_len=32, attention="sdpa",
                             method="qlora", lora_rank=4, lora_targets=["q_proj", "v_proj"],
                             double_quant=True, prepare_kbit_training=prepare, worker=worker)
    m = res["model"]
    h, kv, f = 128, 64, 256
    linear = h * h + 2 * h * kv + h * h + 3 * h * f
    # Params4bit: two NF4 values per byte; nothing else is uint8
    assert m["parameter_bytes_by_dtype"]["uint8"] == linear // 2
    # per 4-bit weight: absmax (8-bit), NF4 code, offset, and the second level's absmax and code
    assert m["quant_state_tensors"] == 5 * 7
    assert m["quant_state_bytes_counted"] >= 5 * 7 * ALLOCATOR_ROUNDING
    adapters = 4 * ((h + h) + (h + kv)) * 4  # r (in + out) on q and v, fp32
    assert res["model"]["trainable_bytes_by_dtype"] == {"float32": adapters}
    rest = (2 * 1000 * h + 3 * h) * (4 if prepare else 2)  # embedding, head, norms
    assert m["parameter_bytes_by_dtype"]["float32" if prepare else "bfloat16"] == rest + (
        0 if not prepare else adapters)
    assert res["workload"]["method"] == "qlora" and res["workload"]["prepare_kbit_training"] is prepare
    assert res["external_bytes"] == 0
    assert res["breakdown_at_peak"]["total"] == res["peak_bytes"]
    assert any("gemm_4bit" in note for note in res["cpu_cuda_differences"])


@pytest.mark.torch
def test_inference_kv_cache_matches_formula(worker):
    _torch()
    pytest.importorskip("transformers")
    from planner.validate.measure import measure_inference

    res = measure_inference(TINY_LLAMA, dtype="bf16", batch=2, prompt_len=40, new_tokens=3,
                            attention="sdpa", worker=worker)
    layers, kv, head_dim = 2, 2, 64 // 4
    assert res["kv_cache_tokens_final"] == 40 + 3 - 1
    per_tensor = 2 * kv * (40 + 3 - 1) * head_dim * 2  # batch * kv heads * tokens * d * bf16
    assert res["kv_cache_bytes_final"] == 2 * layers * round_alloc(per_tensor)
    assert res["peak_phase"] == "prefill"
    assert res["breakdown_at_peak"]["total"] == res["peak_bytes"]


@pytest.mark.torch
def test_recorded_peaks_reproduce(worker):
    """The committed measurements are exact: re-measuring a run gives the same bytes."""
    _torch()
    pytest.importorskip("transformers")
    if not MEASURED.exists():
        pytest.skip("measured_cpu.json not generated yet")
    from planner.validate.builders import versions
    from planner.validate.measure import measure_inference, measure_train_step

    doc = json.loads(MEASURED.read_text(encoding="utf-8"))
    now = versions()
    for lib in ("torch", "transformers", "peft"):
        if now[lib] != doc["versions"][lib]:
            pytest.skip(f"recorded with {lib} {doc['versions'][lib]}, installed {now[lib]}")
    recorded = {r["id"]: r for r in doc["runs"]}
    grid = {r["id"]: r for r in load_grid(GRID)}
    for rid in ("llama64-fp32-eager-b1s32", "gpt2-128-bf16-sdpa-b2s128-ckpt",
                "llama128-inf-bf16-sdpa-b2p128"):
        run = grid[rid]
        settings = {k: v for k, v in run["settings"].items() if k != "crosscheck"}
        fn = measure_train_step if run["kind"] == "train" else measure_inference
        res = fn(run["config"], **settings, worker=worker)
        assert res["peak_bytes"] == recorded[rid]["peak_bytes"], rid
        assert res["peak_phase"] == recorded[rid]["peak_phase"], rid
