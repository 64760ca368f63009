"""engine: llama.cpp: GGUF weight bytes, layer placement, KV cache, compute buffers, fit and options.

Expected values come from llama.cpp itself:
- "llama-quantize --dry-run" of llama.cpp commit 0c1e5709 (vendored by llama-cpp-python 0.3.36),
  run on F16 GGUFs of the models' shapes whose tensor data is a sparse hole
  (tests/data/llamacpp/make_shape_gguf.py): its "quant size = X MiB" line, to 0.01 MiB. Every
  tensor's type also matched the tool's (checked when the table was made, not here).
- the same build's CPU-backend reservations, "CPU compute buffer size" with -v
  (tests/data/llamacpp/cpu_compute_buffers.txt: model shape, flash attention, -c, -ub, -np).
- published llama.cpp / Ollama logs (tests/test_published.py, llama.cpp cases).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from planner.memory import estimate
from planner.model.gguf import GGML_TYPES, PRESETS, gguf_weights, use_more_bits
from planner.memory.llamacpp import compute_buffers, context_cells, kv_split, placement, weight_split
from planner.model.architecture import from_hf_config
from planner.workload.spec import LLAMACPP_WEIGHTS, workload_from_mapping
from planner.core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
MiB = 2**20

_models = {m["id"]: m for m in yaml.safe_load((ROOT / "catalog" / "models.yaml").read_text())["models"]}
LLAMA31_8B = from_hf_config(_models["llama-3.1-8b"]["config"])


def _cfg(L, h, a, kv, f, V, tied=False, experts=0, used=0, rope=False, model_type=None):
    c = dict(model_type=model_type or ("mixtral" if experts else "llama"), hidden_size=h, num_hidden_layers=L,
             num_attention_heads=a, num_key_value_heads=kv, intermediate_size=f, vocab_size=V,
             max_position_embeddings=131072, tie_word_embeddings=tied)
    if experts:
        c.update(num_local_experts=experts, num_experts_per_tok=used)
    if rope:
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0}
    return c


def _workload(arch, **keys):
    return workload_from_mapping({"model": "m", "task": "infer", "engine": "llama.cpp", **keys},
                                 lambda name, entry: (name, "test", arch))


def _part(jt, name):
    """The speed model's part ``name`` in a JobTime's lines ('name: 1,234.567 ms = formula'): (ms, formula),
    or None when the lines have no such part."""
    for line in jt.lines:
        m = re.match(re.escape(name) + r": ([\d,.]+) ms = (.*)", line)
        if m:
            return float(m[1].replace(",", "")), m[2]
    return None


def _bytes_read(formula):
    """The bytes a 'decode: weights read' formula starts with ('4,617,396,736 B / (...)', or for a mixture
    of experts '4,617,396,736 B (of ... B: routed experts ...) / (...)')."""
    return int(re.match(r"([\d,]+) B[ /(]", formula)[1].replace(",", ""))


# ----- the type table ------------------------------------------------------------------------

def test_ggml_block_sizes_are_the_block_structs():
    # ggml-common.h: block_q4_K = 2 halves + 12 scale bytes + 128 nibble bytes per 256 values;
    # block_q6_K = 128 + 64 + 16 + 2; block_q8_0 = half + 32 int8; block_iq4_xs = 2 + 2 + 4 + 128.
    assert (GGML_TYPES["Q4_K"].block, GGML_TYPES["Q4_K"].type_size) == (256, 144)
    assert GGML_TYPES["Q4_K"].bits_per_weight == 4.5
    assert GGML_TYPES["Q6_K"].type_size == 210 and GGML_TYPES["Q6_K"].bits_per_weight == 6.5625
    assert (GGML_TYPES["Q8_0"].block, GGML_TYPES["Q8_0"].type_size) == (32, 34)
    assert GGML_TYPES["IQ4_XS"].bits_per_weight == 4.25
    assert GGML_TYPES["IQ2_XXS"].bits_per_weight == 2.0625
    with pytest.raises(ValueError):
        GGML_TYPES["Q4_K"].row_bytes(896)


def test_workload_reader_and_memory_model_list_the_same_presets():
    assert set(LLAMACPP_WEIGHTS) == set(PRESETS)


def test_use_more_bits_on_32_layers():
    # i < 4, i >= 28, and (i - 4) % 3 == 2 between: 16 of 32 layers
    assert [i for i in range(32) if use_more_bits(i, 32)] == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]


# ----- Done when: Llama-3.1-8B Q4_K_M is the file llama.cpp reports -----------------------------

def test_llama31_8b_q4_k_m_is_the_size_llama_cpp_prints():
    # llama.cpp prints "model size = 4.58 GiB (4.89 BPW)" and "model params = 8.03 B" loading
    # Meta-Llama-3.1-8B-Instruct Q4_K_M, with "type f32: 66 tensors, type q4_K: 193, type q6_K: 33";
    # "CPU model buffer size = 281.81 MiB" (token_embd) and "CUDA0 model buffer size = 4403.49 MiB"
    # with all 33 layers offloaded (Ollama 0.5.4 log, RTX 4090; the llama-cpp-python log of
    # Llama-3-8B Q4_K_M prints the same two buffers; cited in tests/test_published.py).
    w = gguf_weights(LLAMA31_8B, "Q4_K_M")
    assert w.total == 4_912_898_304
    assert round(w.total / 2**30, 2) == 4.58
    assert round(w.bits_per_weight, 2) == 4.89
    assert round(w.values / 1e9, 2) == 8.03
    assert w.type_counts() == {"F32": 66, "Q4_K": 193, "Q6_K": 33}
    ws = weight_split(LLAMA31_8B, "Q4_K_M", placement(LLAMA31_8B, 33))
    assert round(ws.host / MiB, 2) == 281.81
    assert round(ws.gpu / MiB, 2) == 4403.49


# llama-quantize --dry-run (llama.cpp 0c1e5709): "quant size" in MiB, per preset, without an imatrix
LLAMA31_8B_DRY_RUN = {
    "Q8_0": 8137.64, "Q4_0": 4437.80, "Q4_1": 4885.12, "Q5_0": 5332.43, "Q5_1": 5779.74, "Q2_K": 3024.38,
    "Q2_K_S": 2842.88, "Q3_K_S": 3487.27, "Q3_K_M": 3825.27, "Q3_K_L": 4114.27, "Q4_K_S": 4467.80,
    "Q4_K_M": 4685.30, "Q5_K_S": 5332.43, "Q5_K_M": 5459.93, "Q6_K": 6282.97, "IQ1_S": 1918.59, "IQ1_M": 2054.34,
    "IQ2_XXS": 2280.59, "IQ2_XS": 2477.59, "IQ2_S": 2623.23, "IQ2_M": 2804.23, "IQ3_XXS": 3229.48,
    "IQ3_XS": 3348.27, "IQ3_S": 3504.27, "IQ3_M": 3602.02, "IQ4_NL": 4481.80, "IQ4_XS": 4269.15,
    "TQ1_0": 2097.80, "TQ2_0": 2409.80, "MXFP4_MOE": 8137.64,
}
OTHER_DRY_RUNS = [
    # Qwen2.5-0.5B's shape as llama (896-wide rows fall back from 256-blocks; tied embeddings)
    (_cfg(24, 896, 14, 2, 4864, 151936, tied=True), {"Q4_K_M": 373.60, "Q3_K_M": 333.22, "Q2_K": 317.14,
                                                     "IQ4_XS": 329.39, "Q6_K": 476.53, "IQ2_XS": 303.60,
                                                     "Q5_K_S": 387.81}),
    # Mixtral's shape, 8 of its 32 layers (the 8-expert rules)
    (_cfg(8, 4096, 32, 8, 14336, 32000, experts=8, used=2), {"Q4_K_M": 6912.12, "Q3_K_M": 5464.52, "Q2_K": 4234.82,
                                                             "IQ3_M": 5226.52, "Q5_K_M": 8063.74, "IQ2_XS": 3414.72}),
    # Llama-3.1-70B (the LLM_TYPE_70B rule for attn_v)
    (_cfg(80, 8192, 64, 8, 28672, 128256, rope=True), {"Q4_K_M": 40543.11, "Q3_K_M": 32672.53, "Q4_K_S": 38470.61,
                                                       "Q2_K": 25145.77}),
]


@pytest.mark.parametrize("preset, mib", sorted(LLAMA31_8B_DRY_RUN.items()))
def test_every_preset_matches_llama_quantize_on_llama31_8b(preset, mib):
    assert round(gguf_weights(LLAMA31_8B, preset, imatrix=False).total / MiB, 2) == mib


@pytest.mark.parametrize("cfg, sizes", OTHER_DRY_RUNS, ids=["qwen2.5-0.5b-shape", "mixtral-8-layers", "llama-70b"])
def test_presets_match_llama_quantize_on_other_shapes(cfg, sizes):
    arch = from_hf_config(cfg)
    for preset, mib in sizes.items():
        assert round(gguf_weights(arch, preset, imatrix=False).total / MiB, 2) == mib, preset


def test_row_fallback_and_the_tied_output_rule():
    # 896 values per row: Q4_K (256-block) falls back to Q5_0, Q6_K to Q8_0; the tied token
    # embeddings double as output.weight, so they take the output rule (Q8_0: 896 % 256 != 0)
    arch = from_hf_config(_cfg(24, 896, 14, 2, 4864, 151936, tied=True))
    types = {t.name: ty for t, ty, _ in gguf_weights(arch, "Q4_K_M").tensors}
    assert types["token_embd.weight"] == "Q8_0"
    assert types["blk.5.attn_q.weight"] == "Q5_0"
    assert types["blk.0.attn_v.weight"] == "Q8_0"  # Q6_K (use_more_bits) -> Q8_0
    assert types["blk.4.ffn_down.weight"] == "Q4_K"  # rows of 4864 = 19 x 256; layer 4 of 24 gets no more bits
    assert types["blk.5.ffn_down.weight"] == "Q6_K"  # (5 - 24/8) % 3 == 2


# ----- placement, KV cache, compute buffers ------------------------------------------------------

def test_gpu_layers_count_the_output_layer_first():
    p = placement(LLAMA31_8B, 1)
    assert p.output_on_gpu and p.gpu_blocks == 0
    p = placement(LLAMA31_8B, 20)
    assert p.first_gpu_block == 13 and p.gpu_blocks == 19 and p.output_on_gpu
    assert placement(LLAMA31_8B, 999).gpu_layers == 33
    assert not placement(LLAMA31_8B, 0).output_on_gpu


def test_context_cells_pad_to_256_per_stream():
    assert context_cells(8192, 1) == (8192, 8192)
    assert context_cells(2048, 4) == (8192, 2048)
    assert context_cells(1000, 3) == (3072, 1024)  # pad(3000) = 3072, 3072 / 3 = 1024


def test_kv_cache_types_use_ggml_row_sizes():
    # q8_0: 1024 values per row = 32 blocks x 34 B = 1,088 B per cell for K and for V
    pl = placement(LLAMA31_8B, 33)
    f16 = kv_split(LLAMA31_8B, pl, type_k="F16", type_v="F16", context=8192, sequences=1, n_ubatch=512)
    q8 = kv_split(LLAMA31_8B, pl, type_k="Q8_0", type_v="Q8_0", context=8192, sequences=1, n_ubatch=512)
    assert f16.gpu == 1024 * MiB  # "KV self size = 1024.00 MiB" at n_ctx 8192
    assert q8.gpu == 32 * 8192 * 2 * 1088


def _grid():
    shapes = {"l8b2.gguf": (4096, 32, 8, 14336, 128256, False, 0, 0), "l70x2.gguf": (8192, 64, 8, 28672, 128256, False, 0, 0),
              "q05x2.gguf": (896, 14, 2, 4864, 151936, True, 0, 0), "ffn.gguf": (4096, 32, 8, 28672, 32000, False, 0, 0),
              "mix2.gguf": (4096, 32, 8, 14336, 32000, False, 8, 2)}
    for line in (ROOT / "tests" / "data" / "llamacpp" / "cpu_compute_buffers.txt").read_text().splitlines():
        m = re.match(r"(\S+) fa=(\S+) c=(\d+) ub=(\d+)(?: np=(\d+))? ([\d.]+) MiB", line)
        if m:
            h, a, kv, f, V, tied, e, k = shapes[m.group(1)]
            yield pytest.param(_cfg(2, h, a, kv, f, V, tied=tied, experts=e, used=k), m.group(2) == "on",
                               int(m.group(3)), int(m.group(4)), int(m.group(5) or 1), float(m.group(6)), id=line)


@pytest.mark.parametrize("cfg, fa, n_ctx, ubatch, slots, measured_mib", list(_grid()))
def test_compute_buffer_rule_matches_llama_cpp_cpu_reservations(cfg, fa, n_ctx, ubatch, slots, measured_mib):
    # On the CPU backend everything shares one buffer: the GPU rule plus the host inputs' row of
    # token embeddings and ids (the mask is counted once). Tolerance 0.6 %: two of the 58
    # reservations sit 1.7 and 7.0 MiB (0.58 %) above the rule where two phases are close (the
    # allocator's placement, not replayed); the other 56 agree within 0.03 MiB.
    arch = from_hf_config(cfg)
    pl = placement(arch, 3)
    kv = kv_split(arch, pl, type_k="F16", type_v="F16", context=n_ctx // slots, sequences=slots, n_ubatch=ubatch)
    cb = compute_buffers(arch, pl, weight_split(arch, "F16", pl), kv, n_ubatch=ubatch, flash_attention=fa,
                         type_k="F16", type_v="F16")
    T = min(n_ctx, ubatch)
    cpu_only = cb.gpu + arch.hidden_size * T * 4 + 3 * T * 4
    assert abs(cpu_only / MiB - measured_mib) <= 0.006 * measured_mib + 0.03


# ----- VRAM and host RAM follow gpu_layers ----------------------------------------------------------

def _split(est):
    gpu_w = sum(c.bytes for c in est.components if c.where == "gpu" and c.name.startswith("weights"))
    host_w = sum(c.bytes for c in est.components if c.where == "host" and c.name.startswith("weights"))
    return gpu_w, host_w


def test_vram_and_host_ram_follow_gpu_layers():
    file = gguf_weights(LLAMA31_8B, "Q4_K_M").total
    prev_vram, prev_host = None, None
    for n in (33, 32, 24, 16, 8, 1):
        est = estimate(_workload(LLAMA31_8B, gpu_layers=n, context=8192))
        gpu_w, host_w = _split(est)
        assert abs(gpu_w + host_w - file) <= 128 * 300  # every tensor once (GPU ones padded to 128 B)
        if prev_vram is not None:
            assert est.per_gpu_total_bytes < prev_vram
            assert est.host_total_bytes > prev_host
        prev_vram, prev_host = est.per_gpu_total_bytes, est.host_total_bytes
    # 16 layers: blocks 17..31 and the output layer on the GPU, blocks 0..16 and token_embd in RAM
    est = estimate(_workload(LLAMA31_8B, gpu_layers=16, context=8192))
    layer = gguf_weights(LLAMA31_8B, "Q4_K_M").layer_bytes
    host = sum(layer(i) for i in range(17)) + 295_501_824 + 64 * 4  # + rope_freqs, created with block 0
    assert _split(est)[1] == host
    kv_host = next(c.bytes for c in est.components if c.name == "KV cache (host layers)")
    assert kv_host == 17 * 8192 * 2 * 1024 * 2


def test_all_layers_is_the_default_and_output_buffer_counts_slots():
    est = estimate(_workload(LLAMA31_8B, context=2048, concurrency=4))
    assert est.extra["llamacpp_gpu_layers"] == 33
    out = next(c.bytes for c in est.components if c.name == "output buffer (logits)")
    assert out == 4 * 128256 * 4


# ----- workload options ---------------------------------------------------------------------------------

def _error(**keys) -> InputError:
    with pytest.raises(InputError) as info:
        _workload(LLAMA31_8B, **keys)
    return info.value


def test_bad_llamacpp_options_are_refused_at_their_key():
    e = _error(weights="Q4_K_X")
    msg = str(e)
    assert "weights" in msg and "Q4_K_M" in msg
    e = _error(kv_dtype="q4_0", flash_attention=False)
    assert "needs flash attention" in str(e)
    e = _error(tp=2)
    assert "whole layers (--split-mode layer)" in str(e) and "gpus: 2" in str(e)
    e = _error(gpu_layers="max")
    assert "planner fit" in str(e)
    e = _error(attention="eager")
    assert "flash_attention" in str(e)


def test_llamacpp_keys_are_refused_for_other_engines():
    with pytest.raises(InputError) as info:
        workload_from_mapping({"model": "m", "task": "infer", "gpu_layers": 10},
                              lambda name, entry: (name, "test", LLAMA31_8B))
    assert "llama.cpp setting" in str(info.value)


def test_lowercase_presets_and_fp16_alias():
    w = _workload(LLAMA31_8B, weights="q5_k_m", kv_dtype="fp16")
    assert w.infer.weights == "Q5_K_M" and w.infer.kv_dtype == "f16"


# ----- planner fit --gpu-layers max --------------------------------------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_fit_gpu_layers_max_finds_the_most_that_fit(tmp_path):
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["fit", "--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--task", "infer",
                                  "--engine", "llama.cpp", "--weights", "Q4_K_M", "--context", "8192",
                                  "--gpu-layers", "max", "--json"])
    assert r.exit_code == 0, r.output
    import json

    out = json.loads(r.output)
    best = out["max_value"]
    assert 0 < best < 81
    assert out["need_bytes"] <= out["capacity_bytes"] < out["next_need_bytes"]


def test_decode_is_bounded_by_both_bandwidths():
    # A token reads the GPU layers at the card's bandwidth and the host blocks at the platform's, one after
    # the other: the speed model's decode parts (planner.speed.inference) read the GPU layers' weights
    # ('decode: weights read') and the host blocks with their share of the KV cache at host bandwidth x
    # HOST_MBU ('decode: host RAM layers'), and the step is the sum of its decode parts.
    from planner.catalog.loader import load_catalog
    from planner.speed.timing import HOST_MBU, time_workload

    gpu = load_catalog().gpu("rtx-4090")
    full = _workload(LLAMA31_8B, context=4096)
    part = _workload(LLAMA31_8B, context=4096, gpu_layers=17)
    t_full = time_workload(workload=full, estimate=estimate(full), gpu=gpu, gpu_count=1, pcie_per_lane_bytes_per_s=2e9)
    est = estimate(part)
    t_part = time_workload(workload=part, estimate=est, gpu=gpu, gpu_count=1, pcie_per_lane_bytes_per_s=2e9,
                           host_bandwidth_bytes_per_s=100e9)
    assert t_part.tokens_per_s < t_full.tokens_per_s
    kv_tok = est.extra["kv_bytes_per_token"]
    share = 1 - est.extra["llamacpp_gpu_blocks"] / 32
    # no tokens_per_request: a prompt of half the context, 2,048 tokens, and one output token: mean KV 2,048.5
    assert _bytes_read(_part(t_part, "decode: weights read")[1]) == est.extra["llamacpp_weights_gpu_bytes"]
    assert f"x {kv_tok * (1 - share):,.0f} B/token" in _part(t_part, "decode: KV cache read")[1]
    host_bytes = est.extra["llamacpp_host_block_bytes"] + kv_tok * share * 2048.5
    assert _part(t_part, "decode: host RAM layers")[0] == pytest.approx(host_bytes / (100e9 * HOST_MBU) * 1e3,
                                                                       abs=1e-3)
    assert _part(t_full, "decode: host RAM layers") is None
    parts = (re.match(r"decode: [^:]+: ([\d,.]+) ms", x) for x in t_part.lines)
    step_ms = sum(float(m[1].replace(",", "")) for m in parts if m)
    assert t_part.tokens_per_s == pytest.approx(1e3 / step_ms, rel=1e-4)  # the parts are printed to 1 us


def test_estimate_on_a_card_says_whether_it_fits():
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp",
                                  "--gpu", "rtx-4090", "--gpu-layers", "20"])
    assert r.exit_code == 0, r.output
    assert "On rtx-4090" in r.output and "fits" in r.output
    assert "vLLM:" not in r.output


# ----- llama-quantize's importance-matrix rule ------------------------------------------------------

@pytest.mark.parametrize("preset", ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS",
                                    "Q2_K_S"])
def test_presets_llama_quantize_refuses_without_an_imatrix_are_refused(preset):
    # llama-quant.cpp tensor_requires_imatrix (007dbbf3): IQ1_S/M, IQ2_XXS/XS/S and IQ3_XXS tensors,
    # and Q2_K in a Q2_K_S file, stop a real run without --imatrix; IQ3_XS puts attn_q/attn_k in IQ3_XXS
    with pytest.raises(InputError) as info:
        _workload(LLAMA31_8B, weights=preset, imatrix=False)
    msg = str(info.value)
    assert "importance matrix" in msg and "imatrix" in msg and "blk.0.attn_q.weight" in msg


@pytest.mark.parametrize("preset", ["Q2_K", "Q3_K_S", "IQ3_S", "IQ3_M", "IQ4_XS", "Q4_K_M"])
def test_presets_that_need_no_imatrix_are_accepted_without_one(preset):
    assert _workload(LLAMA31_8B, weights=preset, imatrix=False).infer.imatrix is False


def test_option_messages_read_as_options():
    # review F15: the file wording 'flash attention: llama.cpp ...' and 'flash_attention: true/false'
    # came out of option_form as '--attention llama.cpp' and '--flash-attention/false'
    from click.testing import CliRunner

    from planner.cli.main import main

    base = ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp"]
    r = CliRunner().invoke(main, base + ["--kv-dtype", "q8_0", "--no-flash-attention"])
    assert r.exit_code == 2
    assert "needs flash attention, and llama.cpp refuses it" in r.output
    assert "--attention llama.cpp" not in r.output
    r = CliRunner().invoke(main, base + ["--attention", "flash"])
    assert r.exit_code == 2
    assert "--attention does nothing with engine llama.cpp" in r.output or "attention does nothing" in r.output
    assert "--flash-attention (the default) or --no-flash-attention" in r.output
    assert "/false" not in r.output


# ----- GPUs llama.cpp has a backend for -------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_gaudi_is_refused_for_llamacpp_and_amd_is_not():
    # ggml has CUDA, HIP (ROCm) and SYCL backends; Intel Gaudi (an HPU) has none (review F14)
    from click.testing import CliRunner

    from planner.catalog.loader import load_catalog
    from planner.cli.main import main
    from planner.solve.candidates import has_feature, precision_needs

    cat = load_catalog()
    w = _workload(LLAMA31_8B)
    assert "llamacpp" in precision_needs(w)
    assert not has_feature(cat.gpu("gaudi-2"), "llamacpp") and not has_feature(cat.gpu("gaudi-3"), "llamacpp")
    assert has_feature(cat.gpu("mi300x"), "llamacpp") and has_feature(cat.gpu("rtx-4090"), "llamacpp")
    for cmd in (["estimate"], ["fit", "--gpu-layers", "max"]):
        r = CliRunner().invoke(main, cmd + ["--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp",
                                            "--gpu", "gaudi-2"])
        assert r.exit_code == 2, r.output
        assert "llama.cpp has no backend for gaudi-2" in r.output
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp",
                                  "--gpu", "mi300x"])
    assert r.exit_code == 0 and "fits" in r.output


# ----- scenarios: gpu_layers lists ----------------------------------------------------------------------

def _scenario(tmp_path, workload: dict, constraints: dict | None = None):
    from planner.catalog.loader import load_catalog
    from planner.solve.scenario import load_scenario

    doc = {"name": "t", "workloads": [{"name": "w", "task": "infer", "engine": "llama.cpp", **workload}]}
    if constraints:
        doc["constraints"] = constraints
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc))
    return load_scenario(p, load_catalog())


def test_gpu_layers_list_in_a_scenario_is_honoured(tmp_path):
    # scenarios/README.md documents 'gpu_layers: max (or auto, or a list)' (review F4)
    sc = _scenario(tmp_path, {"model": "llama-3.1-70b", "weights": "Q4_K_M", "gpu_layers": [81, 60, "all", 40]})
    layers = [v.workload.infer.gpu_layers for v in sc.workloads[0].variants if v.workload.tp == 1]
    assert layers == [None, 60, 40]  # 81 = n_layer + 1 and 'all' are the same variant (every layer)


def test_gpu_layers_list_with_max_is_refused(tmp_path):
    from planner.core.errors import ScenarioError

    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, {"model": "llama-3.1-70b", "gpu_layers": ["max", 40]})
    assert "cannot hold 'max'" in str(info.value)
    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, {"model": "llama-3.1-70b", "gpu_layers": []})
    assert "empty list" in str(info.value)


# ----- scenarios: weights and kv_dtype auto with llama.cpp ------------------------------------------------

def test_weights_and_kv_auto_expand_to_gguf_presets_and_cache_types(tmp_path):
    from planner.solve.choices import LLAMACPP_AUTO_VALUES

    sc = _scenario(tmp_path, {"model": "llama-3.1-8b", "weights": "auto", "kv_dtype": "auto"})
    pairs = [(v.workload.infer.weights, v.workload.infer.kv_dtype) for v in sc.workloads[0].variants
             if v.workload.tp == 1]
    assert pairs[0] == ("Q8_0", "f16")
    assert {w for w, _ in pairs} == set(LLAMACPP_AUTO_VALUES["weights"])
    assert {k for _, k in pairs} == {"f16", "q8_0", "q4_0"}
    # a quantized V cache needs flash attention: without it only f16 remains
    sc = _scenario(tmp_path, {"model": "llama-3.1-8b", "kv_dtype": "auto", "flash_attention": False})
    assert {v.workload.infer.kv_dtype for v in sc.workloads[0].variants} == {"f16"}


def test_weights_auto_finds_the_quant_that_fits_and_says_it_is_not_the_first(tmp_path):
    # review F2 scenario B: BF16 only, 'No machine fits', although Q4_K_M (41.3 GiB) fits an A6000
    from planner.catalog.loader import load_catalog
    from planner.solve.solver import plan

    sc = _scenario(tmp_path, {"model": "llama-3.1-70b", "weights": "auto"}, {"price": "msrp", "allowed_gpus": ["rtx-a6000"]})
    p = plan(sc, load_catalog(), explain=False)
    assert p.workloads[0].infer.weights == "Q4_K_M"  # Q5_K_M is 46.5 GiB of weights alone
    assert "weights Q4_K_M" in p.strategies[0]
    warn = [w for w in p.warnings if "not the first listed" in w]
    # Q8_0 (69.8 GiB) needs two A6000s with the layers split over them: the warning prices that machine
    assert len(warn) == 1 and "weights Q8_0" in warn[0] and "need 2 x rtx-a6000" in warn[0]


def test_kv_auto_tries_the_quantized_caches(tmp_path):
    # review F3: 70B Q4_K_M at 32k on an A6000 fits with q4_0 KV (42.90 GiB), not with f16 (50.08 GiB)
    from planner.catalog.loader import load_catalog
    from planner.solve.solver import plan

    sc = _scenario(tmp_path, {"model": "llama-3.1-70b", "weights": "Q4_K_M", "context": 32768, "kv_dtype": "auto"},
                   {"price": "msrp", "allowed_gpus": ["rtx-a6000"]})
    p = plan(sc, load_catalog(), explain=False)
    assert p.workloads[0].infer.kv_dtype == "q4_0"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_gpu_layers_max_prefers_every_layer_on_the_gpu(tmp_path):
    # on an A6000, 70B Q4_K_M fits whole and Q8_0 only in part: the whole model on the GPU is
    # reported, although Q8_0 is listed first (its host blocks would be read at RAM bandwidth)
    from planner.catalog.loader import load_catalog
    from planner.solve.solver import plan

    sc = _scenario(tmp_path, {"model": "llama-3.1-70b", "weights": ["Q8_0", "Q4_K_M"], "gpu_layers": "max"},
                   {"price": "msrp", "allowed_gpus": ["rtx-a6000"], "max_cards": 1})
    v = [x for x in sc.workloads[0].variants if x.workload.tp == 1]  # one GPU (the split over more: tp 2..8)
    assert [x.workload.infer.gpu_layers for x in v[:2]] == [None, None]
    assert [x.workload.infer.weights for x in v[:2]] == ["Q8_0", "Q4_K_M"]
    p = plan(sc, load_catalog(), explain=False)
    assert (p.workloads[0].infer.weights, p.workloads[0].infer.gpu_layers) == ("Q4_K_M", None)
    assert any("not the first listed" in w and "weights Q8_0" in w for w in p.warnings)


# ----- MoE decode reads the routed experts its batch uses ---------------------------------------------

def test_expert_read_fraction_is_the_uniform_routing_expectation():
    from planner.speed.traffic import expert_read_fraction

    assert expert_read_fraction(experts=8, per_token=2, tokens=1) == 0.25  # k / E
    assert expert_read_fraction(experts=8, per_token=2, tokens=4) == 1 - 0.75 ** 4  # 0.68359375
    assert expert_read_fraction(experts=128, per_token=8, tokens=256) > 0.99999
    assert expert_read_fraction(experts=1, per_token=1, tokens=3) == 1.0


def _moe(mid):
    return from_hf_config(_models[mid]["config"])


def test_llamacpp_moe_decode_reads_two_of_eight_experts():
    # review F1: Mixtral Q4_K_M decode read all 8 experts' weights per token (3-5x too slow)
    from planner.catalog.loader import load_catalog
    from planner.speed.timing import time_workload

    arch = _moe("mixtral-8x7b")
    gpu = load_catalog().gpu("rtx-a6000")
    w = _workload(arch, context=4096, tokens_per_request=500)
    est = estimate(w)
    jt = time_workload(workload=w, estimate=est, gpu=gpu, gpu_count=1, pcie_per_lane_bytes_per_s=2e9)
    gguf = gguf_weights(arch, "Q4_K_M")
    experts = sum(b for t, _, b in gguf.tensors if t.experts > 1)
    gpu_weights = est.extra["llamacpp_weights_gpu_bytes"]
    read = gpu_weights - experts + experts * 2 / 8
    assert 0.25 * gpu_weights < read < 0.4 * gpu_weights  # experts are ~96 % of Mixtral's bytes
    # the speed model's decode step reads those bytes (planner.speed.inference, 'decode: weights read'), and
    # each token's KV cache at its mean length: prompt 3,596 + 500 / 2 = 3,846 tokens
    assert _bytes_read(_part(jt, "decode: weights read")[1]) == pytest.approx(read, rel=1e-9)
    kv_line = _part(jt, "decode: KV cache read")[1]
    assert f"1 seq x {est.extra['kv_bytes_per_token']:,} B/token x 3,846 tokens" in kv_line


@pytest.mark.parametrize("engine", ["vllm", "hf"])
def test_other_engines_moe_decode_reads_the_active_experts(engine):
    # the same shared cost model: Qwen3-30B-A3B runs 8 of 128 experts per token
    from planner.catalog.loader import load_catalog
    from planner.speed.timing import time_workload
    from planner.memory.quant import weight_bytes
    from planner.workload.spec import workload_from_mapping

    arch = _moe("qwen3-30b-a3b")
    gpu = load_catalog().gpu("h100-sxm")
    w = workload_from_mapping({"model": "m", "task": "infer", "engine": engine, "weights": "bf16", "context": 4096,
                               "concurrency": 4}, lambda name, entry: (name, "test", arch))
    est = estimate(w)
    jt = time_workload(workload=w, estimate=est, gpu=gpu, gpu_count=1, pcie_per_lane_bytes_per_s=2e9)
    total = weight_bytes(arch, "bf16").total
    experts = 2 * arch.expert_parameters  # bf16 experts
    share = 1 - (1 - 8 / 128) ** 4
    read = total - experts + experts * share
    # the speed model's decode step reads those bytes (planner.speed.inference, 'decode: weights read');
    # 0.2 %: the planner counts each expert's router row (2,048 values per layer) with the expert
    assert _bytes_read(_part(jt, "decode: weights read")[1]) == pytest.approx(read, rel=2e-3)
    # and 4 sequences' KV cache at half the context (no tokens_per_request: a 2,048-token prompt)
    kv_line = _part(jt, "decode: KV cache read")[1]
    assert f"4 seq x {est.extra['kv_bytes_per_token']:,} B/token x 2,048 tokens" in kv_line


# ----- partial offload: one host weight copied in at a time --------------------------------------------

def test_partial_offload_compute_buffer_matches_a_published_log():
    # review F7, row 8: Qwen3-Coder-30B-A3B (Qwen3-30B-A3B's shape) UD-Q2_K_XL, -c 65536 -ngl 26 (26/49)
    # -ctk q4_0 -ctv q4_0 -ub 256 on an RTX 4070 Ti SUPER logs "CUDA0 KV buffer 900 MiB" and "CUDA0 compute
    # buffer 163 MiB" (the lltop design document quotes the log). The old rule (a whole host block's
    # weights and KV added to the peak) gave 402.8 MiB. Here: the logits phase, 150.38 MiB; the
    # remaining 12.6 MiB (-7.7 %) are not explained, hence the 10 % tolerance. Q2_K stands in for
    # the UD-Q2_K_XL mix (the KV cache does not depend on it; the largest host weight does, a little).
    arch = _moe("qwen3-30b-a3b")
    est = estimate(_workload(arch, weights="Q2_K", gpu_layers=26, kv_dtype="q4_0", context=65536,
                             max_num_batched_tokens=256))
    kv = next(c.bytes for c in est.components if c.name == "KV cache (GPU layers)")
    cb = next(c.bytes for c in est.components if c.name == "compute buffer (llama.cpp graph)")
    assert kv == 900 * MiB
    assert abs(cb / MiB - 163) <= 0.10 * 163


def test_partial_offload_adds_one_host_weight_not_a_block():
    # Llama-3.1-8B at 16 GPU layers: the peak stays the logits' (258.50 MiB, as with every layer on
    # the GPU): the largest host weight (ffn_down, 45.94 MiB) on the MLP phase stays below it
    full = estimate(_workload(LLAMA31_8B, context=4096))
    part = estimate(_workload(LLAMA31_8B, context=4096, gpu_layers=16))
    cb = {e: next(c.bytes for c in x.components if c.name == "compute buffer (llama.cpp graph)")
          for e, x in (("full", full), ("part", part))}
    assert cb["full"] == cb["part"] == round(258.50 * MiB)


def test_quantized_kv_with_flash_attention_counts_the_f16_copy_in_the_cuda_pool():
    # review F8: launch_fattn (fattn-common.cuh) converts a quantized layer's K and V to F16 in the
    # ggml-cuda pool for prompt batches: 131,072 cells x 1,024 values x 2 B x 2 = 512 MiB for 8B
    name = "flash-attention F16 copy of the quantized KV (ggml-cuda pool)"

    def copy(**keys):
        est = estimate(_workload(LLAMA31_8B, context=131072, **keys))
        return sum(c.bytes for c in est.components if c.name == name)

    assert copy(kv_dtype="q8_0") == copy(kv_dtype="q4_0") == 512 * MiB
    assert copy(kv_dtype="q8_0", kv_dtype_v="f16") == 256 * MiB  # only K is converted
    assert copy(kv_dtype="f16") == 0
    assert copy(kv_dtype="q8_0", gpu_layers=0) == 0  # no attention on the GPU


def test_partial_offload_prefill_uploads_the_host_blocks_for_every_ubatch():
    # review F9: 70B Q4_K_M, 40 GPU layers on an RTX 4090, a 7,692-token prompt: each of the
    # ceil(7,692 / 512) = 16 ubatches copies the 41 host blocks' weights over PCIe before their matmuls
    from planner.catalog.loader import load_catalog
    from planner.speed.timing import PCIE_EFFICIENCY, time_workload

    arch = from_hf_config(_models["llama-3.1-70b"]["config"])
    gpu = load_catalog().gpu("rtx-4090")
    w = _workload(arch, context=8192, gpu_layers=40, tokens_per_request=500)
    est = estimate(w)
    per_lane = 1.969e9  # PCIe 4.0, one direction
    jt = time_workload(workload=w, estimate=est, gpu=gpu, gpu_count=1, pcie_per_lane_bytes_per_s=per_lane)
    upload = 16 * est.extra["llamacpp_host_block_bytes"] / (per_lane * gpu.pcie_lanes * PCIE_EFFICIENCY)
    assert 10 < upload < 16  # about 0.8 s per ubatch
    # the speed model's prefill (planner.speed.inference) adds it as its own part, run in 16 ubatches
    assert _part(jt, "prefill: host-block uploads")[0] == pytest.approx(upload * 1e3, abs=1e-3)
    assert "x 16 batch(es)" in _part(jt, "prefill: per-layer fixed cost")[1]
    # every layer on the GPU: nothing to upload
    full = _workload(arch, context=8192, tokens_per_request=500)
    jt = time_workload(workload=full, estimate=estimate(full), gpu=load_catalog().gpu("h100-sxm"), gpu_count=1,
                       pcie_per_lane_bytes_per_s=per_lane)
    assert _part(jt, "prefill: gemm") is not None and _part(jt, "prefill: host-block uploads") is None


# ----- gpt-oss: the experts stay MXFP4 ------------------------------------------------------------------

def test_gpt_oss_ggufs_keep_mxfp4_experts_as_the_published_files_do():
    # review F12: ggml-org's gpt-oss-20b MXFP4_MOE GGUF 12.1 GB; unsloth's F16 13.8 GB and Q4_K_M 11.6 GB
    # (Hugging Face file sizes, GB = 1e9 B); a bf16 conversion is 13.8G (danbev/learning-ai
    # notes/llama.cpp/gpt-oss.md). Before, F16 came to 41.8 GB and Q4_K_M to 15.8 GB (experts requantized).
    arch = _moe("gpt-oss-20b")
    for preset, gb in (("MXFP4_MOE", 12.1), ("F16", 13.8), ("BF16", 13.8), ("Q4_K_M", 11.6)):
        assert round(gguf_weights(arch, preset).total / 1e9, 1) == gb, preset
    w = _workload(arch)
    assert w.infer.weights == "MXFP4_MOE"  # the default for an MXFP4 checkpoint
    est = estimate(_workload(arch, weights="Q4_K_M"))
    assert any("stay MXFP4" in n for n in est.notes)


# ----- several GPUs: --split-mode layer -----------------------------------------------------------------

COMMAND_R = _cfg(40, 8192, 64, 64, 22528, 256000, tied=True)


def test_layer_split_matches_a_published_two_gpu_log():
    # review F5. llama.cpp PR 6122 (comment log; tests/test_published.py llamacpp-command-r-ctx4096-2gpu):
    # Command-R v01 on an RTX 4070 Ti 12 GB + 3090 Ti 24 GB, -c 4096, all 41 layers, the split by free
    # memory putting 12 blocks on CUDA0: "CPU buffer 1640.62 MiB, CUDA0 buffer 5434.38 MiB, CUDA1
    # buffer 13989.53 MiB", KV "CUDA0 1536 MiB, CUDA1 3584 MiB", "pipeline parallelism enabled
    # (n_copies=4)", "CUDA0 compute buffer 672.01 MiB". The file is a Q4_K_S (its per-device bytes
    # match); Command-R's parallel block has one norm per layer, the llama stand-in two (8,192 x 4 B
    # more per block). The compute buffer comes to 688 MiB (+2.4 %: 616 MiB of attention without
    # flash attention, 2024, plus 3 more copies of the mask and hidden state, 72 MiB).
    from fractions import Fraction

    arch = from_hf_config(COMMAND_R)
    pl = placement(arch, 41, 2, (Fraction(12, 41), Fraction(1)))
    assert pl.blocks_on(0) == list(range(12)) and pl.output_device == 1 and pl.pipeline_parallel
    ws = weight_split(arch, "Q4_K_S", pl)
    norm = 8192 * 4
    assert round((ws.per_device[0] - 12 * norm) / MiB, 2) == 5434.38
    assert round((ws.per_device[1] - 28 * norm) / MiB, 2) == 13989.53
    assert round(ws.host / MiB, 2) == 1640.62
    kv = kv_split(arch, pl, type_k="F16", type_v="F16", context=4096, sequences=1, n_ubatch=512)
    assert kv.per_device == (1536 * MiB, 3584 * MiB)
    cb = compute_buffers(arch, pl, ws, kv, n_ubatch=512, flash_attention=False, type_k="F16", type_v="F16")
    assert abs(cb.per_device[0] / MiB - 672.01) <= 0.03 * 672.01


def test_mixtral_q4_k_m_fits_two_3090s():
    # review Q3: 'Mixtral Q4_K_M on two 3090s' was "does NOT fit" (two replicas of the whole model)
    from click.testing import CliRunner

    from planner.cli.main import main

    arch = _moe("mixtral-8x7b")
    est = estimate(_workload(arch, gpus=2))
    one = estimate(_workload(arch))
    assert est.extra["llamacpp_devices"] == 2
    assert est.per_gpu_total_bytes < 0.6 * one.per_gpu_total_bytes
    r = CliRunner().invoke(main, ["estimate", "--model", "mixtral-8x7b", "--task", "infer", "--engine", "llama.cpp",
                                  "--gpus", "2", "--gpu", "rtx-3090"])
    assert r.exit_code == 0, r.output
    assert "fits" in r.output and "does NOT fit" not in r.output and "split by layer" in r.output


def test_row_split_is_refused():
    e = _error(gpus=2, split_mode="row")
    assert "not modelled" in str(e) and "split_mode: layer" in str(e)
    e = _error(gpus=2, split_mode="none")
    assert "one GPU" in str(e)


def test_layer_split_decode_reads_every_gpus_layers_one_after_the_other():
    # a token runs through GPU 0's layers, then GPU 1's: the step reads both GPUs' bytes, each at one
    # card's bandwidth, so it takes as long as on one card holding every layer (no faster)
    from planner.catalog.loader import load_catalog
    from planner.speed.timing import time_workload

    gpu = load_catalog().gpu("rtx-3090")
    w = _workload(LLAMA31_8B, context=4096, gpus=2)
    est = estimate(w)
    jt = time_workload(workload=w, estimate=est, gpu=gpu, gpu_count=2, pcie_per_lane_bytes_per_s=2e9)
    assert est.extra["llamacpp_devices"] == 2
    weights = _part(jt, "decode: weights read")
    assert _bytes_read(weights[1]) == est.extra["llamacpp_weights_gpu_bytes"]  # both GPUs' layers
    assert f"1 seq x {est.extra['kv_bytes_per_token']:,} B/token" in _part(jt, "decode: KV cache read")[1]
    one = _workload(LLAMA31_8B, context=4096)
    jt1 = time_workload(workload=one, estimate=estimate(one), gpu=gpu, gpu_count=1, pcie_per_lane_bytes_per_s=2e9)
    # one card's copy differs by a few hundred bytes of placement (the output layer's device)
    assert weights[0] == pytest.approx(_part(jt1, "decode: weights read")[0], abs=1e-3)
    assert jt.tokens_per_s == pytest.approx(jt1.tokens_per_s, rel=1e-4)


def test_scenario_buys_two_cards_for_one_gguf(tmp_path):
    # review F5: the solver could never buy 2 smaller cards for one GGUF. Mixtral Q4_K_M needs 28.4 GiB
    # on one card; with only 24 GB cards allowed, 2 x RTX 3090 with the layers split is the plan
    from planner.catalog.loader import load_catalog
    from planner.solve.solver import plan

    sc = _scenario(tmp_path, {"model": "mixtral-8x7b", "weights": "Q4_K_M", "context": 8192},
                   {"price": "msrp", "allowed_gpus": ["rtx-3090"]})
    p = plan(sc, load_catalog(), explain=False)
    assert p.choice["cards_per_node"] == 2 and p.workloads[0].tp == 2
    assert "layers split over 2 GPUs" in p.strategies[0]


# ----- speed: what a partly offloaded plan decodes at, and a floor on it -------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_warns_how_fast_a_partly_offloaded_model_decodes(tmp_path):
    # review F6: gpu_layers: max with the capex objective bought a card holding a third of the model
    # and said nothing about speed
    from planner.catalog.loader import load_catalog
    from planner.solve.rows import row_decode_tokens_per_s
    from planner.solve.solver import plan

    cat = load_catalog()
    sc = _scenario(tmp_path, {"model": "llama-3.1-70b", "weights": "Q4_K_M", "context": 8192, "gpu_layers": "max",
                              "tokens_per_request": 500}, {"allowed_gpus": ["rtx-4090"], "max_cards": 1})
    p = plan(sc, cat, explain=False)
    warn = [w for w in p.warnings if "blocks in host RAM on this machine" in w]
    assert len(warn) == 1 and "tokens/s per sequence" in warn[0] and "to prefill 1 x 7,692 prompt tokens" in warn[0]
    # the figure is the speed rule's (the table's decode_tokens_per_s for the chosen row, planner.speed.inference.
    # decode_step): GPU bytes over the card's bandwidth plus ~20 GB of host blocks over dual-channel DDR5 per token
    assert p.workloads[0].infer.gpu_layers is not None
    speed = float(p.candidates["decode_tokens_per_s"][0])
    assert f"decode about {speed:,.1f} tokens/s" in warn[0]
    assert 0.5 < speed < 5
    ch = p.choice
    gpu, plat, dimm = cat.gpu(ch["gpu_id"]), cat.platform(ch["platform_id"]), cat.dimm(ch["dimm_id"])
    est = p.estimates[0]
    from planner.speed.traffic import decode_reads

    from planner.speed.constants import BANDWIDTH_EFFICIENCY, KERNEL_FLOOR_S, LLAMACPP_DECODE_FACTOR
    from planner.speed.inference import LAYER_KERNELS, weight_format
    from planner.speed.traffic import HOST_MBU

    dr = decode_reads(p.workloads[0], est)
    host_bw = plat.memory_channels * dimm.speed_mts * 1e6 * 8
    # the speed model at one sequence: weights at bandwidth x 0.85 x the quant kernel's factor, the KV cache at
    # bandwidth x 0.85, the host blocks and their KV at host bandwidth x 0.6, one after the other, plus 12
    # kernels x 80 layers x 3 us; compute (2 x P FLOPs, ~1 ms) stays below the ~0.5 s of memory
    bw = gpu.memory_bandwidth_bytes_per_s * BANDWIDTH_EFFICIENCY.value
    qf = LLAMACPP_DECODE_FACTOR[weight_format(p.workloads[0])].value
    memory_s = dr.weights_read / (bw * qf) + dr.kv_per_token * dr.mean_kv / bw + dr.host_bytes / (host_bw * HOST_MBU)
    expect = 1 / (memory_s + LAYER_KERNELS["llama.cpp"] * 80 * KERNEL_FLOOR_S.value)
    assert speed == pytest.approx(expect, rel=1e-9)
    assert row_decode_tokens_per_s


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_min_decode_tokens_per_s_is_a_floor_the_solver_honours(tmp_path):
    from planner.catalog.loader import load_catalog
    from planner.core.errors import ScenarioError
    from planner.solve.solver import NoFeasiblePlan, plan

    cat = load_catalog()
    work = {"model": "llama-3.1-70b", "weights": "Q4_K_M", "context": 8192, "gpu_layers": "max"}
    cheap = plan(_scenario(tmp_path, work, {"price": "msrp", "allowed_gpus": ["rtx-4090", "rtx-a6000"]}), cat, explain=False)
    assert cheap.workloads[0].infer.gpu_layers is not None  # a 4090 with blocks in host RAM is cheapest
    fast = plan(_scenario(tmp_path, work, {"price": "msrp", "allowed_gpus": ["rtx-4090", "rtx-a6000"], "min_decode_tokens_per_s": 10}),
                cat, explain=False)
    assert fast.workloads[0].infer.gpu_layers is None  # every layer on the GPU(s)
    assert float(fast.candidates["decode_tokens_per_s"][0]) >= 10
    assert fast.total_usd > cheap.total_usd
    with pytest.raises(NoFeasiblePlan) as info:
        plan(_scenario(tmp_path, work, {"allowed_gpus": ["rtx-4090"], "max_cards": 1, "min_decode_tokens_per_s": 50}),
             cat)
    msg = str(info.value)
    assert "speed (" in msg and "min_decode_tokens_per_s asks for 50" in msg
    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, work, {"min_decode_tokens_per_s": -1})
    assert "min_decode_tokens_per_s" in str(info.value)


# ----- defaults, fit and no-fit hints ---------------------------------------------------------------------

def _cli(*args):
    from click.testing import CliRunner

    from planner.cli.main import main

    return CliRunner().invoke(main, list(args))


def test_default_context_note_says_how_to_start_llama_server():
    # review F10: llama-server without -c takes n_ctx_train (131,072 for Llama-3.1), not 4,096
    r = _cli("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp", "--concurrency", "2")
    assert r.exit_code == 0
    assert "start it with -c 8192 -np 2" in r.output and "--fit on" in r.output
    r = _cli("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp", "--context", "4096")
    assert "start it with -c" not in r.output


def test_fit_gpu_layers_reports_the_host_ram_and_help_names_it():
    # review F16: 'fit --gpu-layers max' gave no host RAM; its help omitted --gpu-layers
    r = _cli("fit", "--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--task", "infer", "--engine", "llama.cpp",
             "--context", "8192", "--gpu-layers", "max", "--json")
    import json

    out = json.loads(r.output)
    est = estimate(_workload(from_hf_config(_models["llama-3.1-70b"]["config"]), context=8192,
                             gpu_layers=out["max_value"]))
    assert out["host_need_bytes"] == est.host_total_bytes
    r = _cli("fit", "--help")
    text = " ".join(r.output.split()).replace("- ", "-")  # click may break '--gpu-layers' at its hyphen
    assert "--concurrency, --gpu-layers the value 'max'" in text


def test_no_fit_hints_point_to_gpu_layers():
    r = _cli("fit", "--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--task", "infer", "--engine", "llama.cpp",
             "--context", "max")
    assert r.exit_code == 1 and "--gpu-layers max" in r.output


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_suggests_gpu_layers_max_when_nothing_fits(tmp_path):
    from planner.catalog.loader import load_catalog
    from planner.solve.solver import NoFeasiblePlan, plan

    sc = _scenario(tmp_path, {"model": "llama-3.1-405b", "weights": "Q4_K_M", "context": 8192},
                   {"allowed_gpus": ["rtx-4090"], "max_cards": 2})
    with pytest.raises(NoFeasiblePlan) as info:
        plan(sc, load_catalog())
    assert any(s.startswith("gpu_layers: max") and "of RAM" in s for s in info.value.suggestions)
