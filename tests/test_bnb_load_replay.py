"""planner.memory.bnb_load_replay: Unsloth 2024.8-2024.10.0's 4-bit load of a 16-bit checkpoint, replayed.

Published figure: github.com/unslothai/notebooks nb/Llama3.2_(1B_and_3B)-Conversational.ipynb, outputs as
committed at c011de37 (2025-01-10) and bdda2efc: the load banner 'Unsloth 2024.10.0: Fast Llama patching.
Transformers = 4.44.2.', 'Pytorch: 2.4.1+cu121', 'GPU = Tesla T4', and '2.635 GB of memory reserved.'
(torch.cuda.max_memory_reserved() / 1024**3) before trainer.train(); held to 10 % in
tests/test_framework_releases.py (test_release_peak).
"""

from __future__ import annotations

import sys
from pathlib import Path

from planner.memory import estimate
from planner.memory.bnb_load_replay import UnslothLoadShapes, _Trace, quantize_4bit_nested, replay_unsloth_load
from planner.memory.caching_allocator import K_LARGE_BUFFER, CachingAllocator, round_size
from planner.memory.load_peaks import load_pool, unsloth_load_pool, unsloth_rope_components

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_frameworks import workload  # noqa: E402

MiB = 2**20
_ALL = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_NB = {"method": "qlora", "recipe": "pure-fp16", "lora_rank": 16, "micro_batch": 2, "optimizer": "adamw-8bit",
       "seq_len": 2048, "lora_targets": list(_ALL)}


def _llama_3_2_3b() -> UnslothLoadShapes:
    # Llama-3.2-3B config.json: hidden 3,072, intermediate 8,192, 8 KV heads of 128, 28 layers, vocab 128,256,
    # tied embeddings, rope_type llama3, max_position_embeddings 131,072 (Unsloth's cache: 32,768 rows)
    h, f, kv = 3072, 8192, 1024
    lin = (("self_attn.q_proj", h, h, False), ("self_attn.k_proj", h, kv, False), ("self_attn.v_proj", h, kv, False),
           ("self_attn.o_proj", h, h, False), ("mlp.gate_proj", h, f, False), ("mlp.up_proj", h, f, False),
           ("mlp.down_proj", f, h, False))
    return UnslothLoadShapes(hidden=h, vocab=128_256, layers=28, head_dim=128, rope_positions=32_768, model_rope=True,
                             rope_inv_freq=True, tied=True, linears=lin, lora_rank=16, lora_targets=_ALL)


def test_empty_cache_gives_back_whole_free_segments_only():
    # release_blocks frees the blocks with neither prev nor next: a 12 MiB request takes a 12 MiB segment
    # of its own (>= 10 MiB: rounded to 2 MiB); then a 2 MiB one a 20 MiB segment it splits (18 MiB cached)
    a = CachingAllocator()
    big = a.malloc(12 * MiB)
    small_seg = a.malloc(2 * MiB)
    assert a.reserved == K_LARGE_BUFFER + 12 * MiB
    a.free(big)
    assert a.empty_cache() == 12 * MiB          # the whole free segment goes
    assert a.reserved == K_LARGE_BUFFER          # the split one stays while 2 MiB of it is in use
    a.free(small_seg)
    assert a.empty_cache() == K_LARGE_BUFFER and a.reserved == 0 and a.segments == 0
    assert a.peak_reserved == K_LARGE_BUFFER + 12 * MiB   # max_memory_reserved is not reset


def test_a_nested_4bit_quantization_keeps_its_packed_values_and_statistics():
    # N = 2^20 values: the fp16 copy 2 MiB (large pool: a 20 MiB segment), absmax 16,384 fp32 = 64 KiB and the
    # packed values N/2 = 512 KiB (small pool: one 2 MiB segment); kept: N/2, the 16-level code and the offset
    # (512 B blocks each), the 'dynamic' map 1 KiB, the nested absmax 64 fp32 (a 512 B block), the quantized
    # absmax 16,384 B: 543,232 B. The peak comes before absmax and the copy are freed: those two and the kept
    # ones, 2,097,152 + 65,536 + 543,232 (the 16-value abs and max, freed earlier, are below it).
    n = 2**20
    t = _Trace(CachingAllocator())
    kept = quantize_4bit_nested(t, n, first=True)
    assert len(kept) == 6
    assert t.allocator.allocated == 524_288 + 512 + 512 + 1024 + 512 + 16_384 == 543_232
    assert t.allocator.peak_allocated == 2_097_152 + 65_536 + 543_232
    assert t.allocator.reserved == K_LARGE_BUFFER + 2 * MiB


def test_each_layers_rope_pair_takes_a_20_mib_segment():
    # cos and sin of 32,768 x 128 fp16 values are 8 MiB each (< 10 MiB: a 20 MiB segment, split): the sin
    # takes 8 of the 12 MiB left, and the next layer's cos finds only 4 MiB blocks: 20 MiB per layer
    a = CachingAllocator()
    for _ in range(3):
        for _ in range(2):
            a.malloc(2 * 32_768 * 128)
            a.empty_cache()
    assert a.reserved == 3 * K_LARGE_BUFFER and a.allocated == 3 * 16 * MiB


def test_the_3b_load_allocates_its_tensors():
    # What stays allocated, block by block (round_size): the embedding; per quantized weight of N values the
    # packed N/2, the code and offset, the nested absmax (4 x ceil(N/64/256)) and the quantized absmax
    # (ceil(N/64)); the 'dynamic' map once; 57 fp16 norms; 29 RoPE pairs of 8 MiB; 28 fp32 inv_freq of 64
    # values; the fp32 LoRA A (r x in) and B (out x r) of the seven projections per layer. A large-pool block
    # whose remainder is <= 1 MiB is not split (should_split) and counts whole, so the replay may exceed that
    # sum by at most 1 MiB per large kept block (the embedding, 196 packed weights, 58 caches).
    s = _llama_3_2_3b()
    r = replay_unsloth_load(s)

    def kept(n):
        b = -(-n // 64)
        return round_size((n + 1) // 2) + 512 + 512 + round_size(4 * -(-b // 256)) + round_size(b)

    tensors = (round_size(2 * 128_256 * 3072) + 28 * sum(kept(i * o) for _, i, o, _ in s.linears) + 1024
               + 57 * round_size(2 * 3072) + 58 * 8 * MiB + 28 * 512
               + 28 * sum(round_size(4 * 16 * i) + round_size(4 * 16 * o) for _, i, o, _ in s.linears))
    assert tensors <= r.allocated <= tensors + (1 + 196 + 58) * MiB
    assert r.rope_bytes == 29 * 2 * 8 * MiB == 486_539_264
    # the replay's max_memory_reserved (regression pin; 2.768 GiB, +5.0 % on the notebook's 2.635 GiB)
    assert r.peak_reserved == 2_971_664_384


def test_the_replay_applies_to_the_releases_read_only():
    on = workload("llama-3.2-3b", framework="unsloth", framework_version="2024.10.0", **_NB)
    assert unsloth_load_pool(on.architecture, on.train).reserved == 2_971_664_384
    assert load_pool(on.architecture, on.train).reserved == 2_971_664_384
    for release in ("2024.5", "2024.10.7", None):     # before 2024.8, after 2024.10.0, the default (2025.1.5)
        given = {"framework_version": release} if release else {}
        off = workload("llama-3.2-3b", framework="unsloth", **given, **_NB)
        assert unsloth_load_pool(off.architecture, off.train) is None
        assert unsloth_rope_components(off.architecture, off.train) == []
    lora = workload("llama-3.2-3b", framework="unsloth", framework_version="2024.10.0", **{**_NB, "method": "lora"})
    assert unsloth_load_pool(lora.architecture, lora.train) is None


def test_the_estimate_counts_the_rope_caches_for_the_whole_run():
    # 28 layers + LlamaModel's pair, 2 x 32,768 x 128 x 2 B each: no phase ('': held from load to the end)
    w = workload("llama-3.2-3b", framework="unsloth", framework_version="2024.10.0", **_NB)
    comps = [c for c in estimate(w).components if c.name.startswith("model buffers (RoPE cos/sin caches, Unsloth")]
    assert [(c.bytes, c.phase, c.kind) for c in comps] == [(486_539_264, "", "allocated")]
    # Qwen2 (Transformers 4.44.2's Qwen2Model has no model-level rotary module): 28 pairs
    q = workload("qwen2.5-7b", framework="unsloth", framework_version="2024.9", **_NB)
    (c,) = unsloth_rope_components(q.architecture, q.train)
    assert c.bytes == 28 * 2 * 8 * MiB
