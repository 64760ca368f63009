"""planner.memory.nf4_replay: torchtune 0.1's model build and load through the caching allocator.

Published figures: torchtune docs/source/tutorials/qlora_finetune.rst at v0.1.0 (commit 9e2c9c06f):
``LoRALinear(512, 512, rank=8, alpha=0.1, quantize_base=True)`` under ``torch.set_default_device("cuda")``
(default dtype fp32) then ``torch.cuda.memory_allocated()  # 177,152 bytes``; the LoRA recipe's log
'GPU peak memory allocation: 13.96 GB / GPU peak memory reserved: 13.98 GB' and the table's QLoRA
'Peak memory reserved, model init' 9.13 GB (Llama-2-7B, r 8; GB = 1e9 B).
"""

from __future__ import annotations

import sys
from pathlib import Path

from planner.memory import estimate
from planner.memory.caching_allocator import CachingAllocator
from planner.memory.load_peaks import LOAD_POOL_NAME, nf4_load_pool
from planner.memory.nf4_replay import QLoRAShapes, _Trace, from_tensor, replay_init

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_frameworks import workload  # noqa: E402

GB = 10**9
D, H = 4096, 11008  # Llama-2-7B: hidden_size, intermediate_size
_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _llama2_7b(attention, mlp) -> QLoRAShapes:
    # torchtune llama2_7b: vocab 32,000, 32 layers, head_dim 128, max_seq_len 4,096; r 8 (the tutorial configs)
    return QLoRAShapes(dim=D, vocab=32_000, layers=32, head_dim=128, max_seq_len=4096, rank=8,
                       attention=attention, mlp=mlp)


def test_the_tutorials_quantized_lora_linear_keeps_177152_bytes():
    # fp32 default dtype: nn.Linear(512, 512) 1 MiB, to_nf4's .to(bfloat16) 512 KiB, from_tensor, both
    # freed; lora_a (8, 512) and lora_b (512, 8) fp32: 16 KiB each. Kept: nf4 and mean (512 B blocks),
    # int8 scalers N/64 = 4,096, the factor's storage N/32 = 8,192, packed values N/2 = 131,072, with
    # the adapters 32,768: 177,152 B.
    n = 512 * 512
    t = _Trace(CachingAllocator())
    w, y = t.alloc(4 * n), t.alloc(2 * n)
    from_tensor(t, n)
    t.free(y, w)
    t.alloc(4 * 8 * 512)
    t.alloc(4 * 512 * 8)
    assert t.allocator.allocated == 512 + 512 + 4_096 + 8_192 + 131_072 + 32_768 == 177_152


def test_one_conversion_peaks_at_the_difference_and_its_abs():
    # N = 2^20: at abs(value - nf4) the live tensors are the kept nf4 and mean (512 B each), factor
    # N/32 and int8 scalers N/64, the block maxima N/32, the scaled values 2N and two (N, 16) bf16
    # tensors 32N each: 66N + N/16 + N/64 + 1,024 (plus the 2N input outside: load_peaks' 68 B/value).
    n = 2**20
    t = _Trace(CachingAllocator())
    kept = from_tensor(t, n)
    assert t.allocator.peak_allocated == 66 * n + n // 16 + n // 64 + 1024
    assert t.allocator.allocated == 512 + 512 + n // 32 + n // 64 + n // 2
    assert set(kept) == {"nf4", "mean", "qf", "qs", "qd"}


def test_the_lora_build_matches_the_tutorials_log():
    # q and v bf16 LoRALinears, the rest plain nn.Linear; the build keeps the original layer while it
    # is copied 32 times, and the load copies into existing storage: 13.96 GB allocated and 13.98 GB
    # reserved published.
    r = replay_init(_llama2_7b(((D, D, False), (D, D, None), (D, D, False), (D, D, None)),
                               ((D, H, None), (H, D, None), (D, H, None))))
    assert abs(r.peak_allocated / (13.96 * GB) - 1) < 0.005
    assert abs(r.reserved / (13.98 * GB) - 1) < 0.005


def test_the_qlora_build_and_load_reserve_the_tutorials_9_13_gb():
    r = replay_init(_llama2_7b(tuple((D, D, True) for _ in range(4)), ((D, H, True), (H, D, True), (D, H, True))))
    # the replay's own output, pinned (published 9.13 GB: +0.03 %); the build sets it, the load adds nothing
    assert r.reserved == r.build_reserved == 9_133_096_960
    assert r.segments == 116
    assert abs(r.reserved / (9.13 * GB) - 1) < 0.01


def _tt(**kw):
    base = {"framework": "torchtune", "method": "qlora", "framework_version": "0.1.0", "lora_rank": 8,
            "lora_targets": _ALL, "micro_batch": 2, "seq_len": 512}
    return workload("llama-2-7b", **{k: v for k, v in {**base, **kw}.items() if v is not None})


def test_the_pool_applies_to_torchtune_0_1_qlora_on_one_gpu_only():
    w = _tt()
    assert nf4_load_pool(w.architecture, w.train).reserved == 9_133_096_960
    for other in (_tt(framework_version="0.2.0"), _tt(method="lora"), _tt(framework="unsloth", framework_version=None)):
        assert nf4_load_pool(other.architecture, other.train) is None


def test_the_estimate_reserves_the_replayed_pool():
    est = estimate(_tt())
    (pool,) = [c for c in est.gpu_components() if c.name == LOAD_POOL_NAME]
    assert pool.kind == "headroom"
    allocated = sum(c.bytes for c in est.gpu_components() if c.kind == "allocated" and c.phase in ("", "load"))
    headroom = sum(c.bytes for c in est.gpu_components() if c.kind == "headroom")
    assert est.per_gpu_allocated_bytes + headroom == 9_133_096_960
    assert allocated <= est.per_gpu_allocated_bytes
    assert not [c for c in estimate(_tt(framework_version="0.2.0")).gpu_components() if c.name == LOAD_POOL_NAME]
