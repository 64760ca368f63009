"""Engine releases (planner.workload.engine_releases): each mechanism switched by ``engine_version``,
tested against a published run of that release (source and quote beside each case).

``report_rows()`` gives the rows of reports/validation.md's section "Engine releases"
(planner.validate.validation.engine_releases_section); ``python tests/test_engine_releases.py`` prints them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from planner.core.units import GiB, MiB
from planner.memory import estimate
from planner.memory.vllm import vllm_budget
from planner.model.architecture import from_hf_config
from planner.model.gguf import gguf_weights
from planner.workload.engine_releases import ENGINE_RELEASES, version_note
from planner.workload.spec import workload_from_mapping

# ----- published runs ----------------------------------------------------------------------------

#: meta-llama/Meta-Llama-3-8B config.json (the shapes shared/reference/published-measurements.yaml
#: lists for vllm-llama3-8b-80gb-tp1-profile: hidden 4096, 32 layers, 32 heads, 8 KV heads, vocab 128,256,
#: intermediate 14,336, untied).
LLAMA3_8B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
             "max_position_embeddings": 8192, "rope_theta": 500000.0, "rms_norm_eps": 1e-5,
             "tie_word_embeddings": False, "torch_dtype": "bfloat16", "architectures": ["LlamaForCausalLM"]}

#: openlm-research/open_llama_7b_v2 config.json (the LLaMA-7B shapes the ggml-org/ci log prints:
#: n_embd 4096, n_head 32, n_layer 32, n_ff 11008, n_vocab 32000, n_ctx_train 2048).
OPEN_LLAMA_7B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
                 "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
                 "torch_dtype": "float16", "architectures": ["LlamaForCausalLM"]}

#: vLLM PR #10511, comment by youkaichao, 2024-12-14 ("Some sanity checks"), a build of December 2024
#: (V0; released in 0.6.5): `vllm serve meta-llama/Meta-Llama-3-8B` on an 80 GB card:
#:   "total_gpu_memory 79.22GiB ... model weights take 14.96GiB ... non_torch_memory 1.79GiB
#:    PyTorch activation peak memory 1.26GiB available_kv_cache_memory 53.29GiB"
#: and with -tp 2: "model weights take 7.48GiB ... non_torch_memory 3.58GiB ... PyTorch activation peak
#: memory 1.26GiB". max_model_len 8192 (the model's), V0 defaults 256 sequences, 8,192 batched tokens.
#: The non_torch figure of that build also held the caching allocator's cached blocks (fixed by
#: PR #11809), so the budget itself is not compared; the two terms the release's mechanism sets are.
V0_RUNS = [("vllm-0.6.5-llama3-8b-tp1", 1, 1.26, 14.96), ("vllm-0.6.5-llama3-8b-tp2", 2, 1.26, 7.48)]
V0_RELEASE = "0.6.5"
V0_SOURCE = "vllm-project/vllm PR #10511 (youkaichao, 2024-12-14)"

#: vllm-project/vllm issue #13882 (sancelot, 2025-02-26), an 8 GB RTX 4060:
#:   "Initializing a V0 LLM engine (v0.7.3.dev233+gad5a35c2) with config: model='/home/sancelot/Qwen2.5-7B-
#:    Instruct-bnb-4bit', ... dtype=torch.bfloat16, max_seq_len=4096, ... quantization=bitsandbytes"
#:   "the current vLLM instance can use total_gpu_memory (8.00GiB) x gpu_memory_utilization (0.70) = 5.60GiB"
#:   "model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch activation peak memory takes 1.42GiB;
#:    the rest of the memory reserved for KV Cache is -1.05GiB." ... "# cuda blocks: 0"
V0_BNB_RUN = {"release": "0.7.3.dev233+gad5a35c2", "peak": 1.42, "weights": 5.20, "kv": -1.05}
V0_BNB_SOURCE = "vllm-project/vllm issue #13882 (2025-02-26)"

#: ggml-org/ci llama.cpp/ba/c66994cf356cf488078c056831396eb4ce31d5/ggml-4-x86-cuda-v100/open_llama_7b_v2-tg-q2_k.log:
#:   "main: build = 1022 (bac6699)" ... "Device 0: Tesla V100-PCIE-16GB"
#:   "llama_model_loader: - type  f32:   65 tensors / - type q2_K:   65 tensors / - type q3_K:  160 tensors /
#:    - type q6_K:    1 tensors" ... "offloading 32 repeating layers to GPU / offloading non-repeating layers
#:    to GPU / offloading v cache to GPU / offloading k cache to GPU / offloaded 35/35 layers to GPU /
#:    VRAM used: 2910 MB" ... "kv self size  =  256.00 MB" (n_ctx 512; MB in that log are MiB).
#: VRAM used is the offloaded tensors plus the K and V cache (both offloaded).
Q2K_GPU_RUN = {"build": "b1022", "vram_mib": 2910, "kv_mib": 256, "context": 512,
               "types": {"F32": 65, "Q2_K": 65, "Q3_K": 160, "Q6_K": 1}}
Q2K_GPU_SOURCE = "ggml-org/ci llama.cpp bac66994 ggml-4-x86-cuda-v100 open_llama_7b_v2-tg-q2_k.log (build 1022)"

#: ggml-org/llama.cpp PR #5060 (ikawrakow, 2024-01-21), LLaMA-v2-70B: "| Old Q2_K | 27.11 | 3.8164 |" and
#: "Q2_K ... has a LLaMA-v-70B model size of 23.71 GiB" (model size in GiB).
Q2K_70B = {"old": 27.11, "new": 23.71}
#: ggml-org/llama.cpp PR #2707 (commit bac66994, 2023-08-22), commit message: "Q2_K improvement ... 7B: file
#: size = 2.632G" (LLaMA-2-7B; quantize prints sizes in MiB, so G is GiB).
Q2K_7B_OLD = 2.632


def _workload(config: dict[str, Any] | str, **keys: Any):
    if isinstance(config, str):
        from test_memory import catalog_arch

        arch = catalog_arch(config)
    else:
        arch = from_hf_config(dict(config), "test config")
    return workload_from_mapping({"model": "m", "task": "infer", **keys}, lambda n, e: (n, "test", arch))


def _v0_budget(tp: int, release: str | None = V0_RELEASE):
    keys = {"engine": "vllm", "weights": "bf16", "context": 8192, "tp": tp}
    if release:
        keys["engine_version"] = release
    w = _workload(LLAMA3_8B, **keys)
    return vllm_budget(w, estimate(w), cuda_total=int(79.22 * GiB), gpu_id="h100-sxm")


def _err(pred: float, pub: float) -> float:
    return pred / pub - 1


# ----- vLLM V0 (releases before 0.8.0) -----------------------------------------------------------

@pytest.mark.parametrize("case,tp,peak_gib,weights_gib", V0_RUNS)
def test_v0_profile_peak_matches_the_published_v0_log(case, tp, peak_gib, weights_gib):
    # V0 defaults for max_model_len 8192: 256 sequences of 32 tokens (8,192 batched). Sampler peak: 256 rows x
    # 128,256 x (2 + 36) B = 1,247,674,368 B beside the 8,192 x 4,096 x 2 B hidden states = 67,108,864 B:
    # 1,314,783,232 B = 1.2245 GiB against the logged 1.26 GiB (-2.8 %); the forward pass is smaller.
    b = _v0_budget(tp)
    assert (b.max_num_batched_tokens, b.max_num_seqs) == (8192, 256)
    assert b.profile_peak == 256 * 128_256 * 38 + 8192 * 4096 * 2 == 1_314_783_232
    assert abs(_err(b.profile_peak / GiB, peak_gib)) < 0.05
    # "model weights take": 8,030,261,248 parameters x 2 B / tp (+ the rotary cache, 8,192 x 128 x 2 B)
    assert abs(_err(b.weights / GiB, weights_gib)) < 0.01


def _v0_bnb_budget(release: str | None = V0_BNB_RUN["release"]):
    keys = {"engine": "vllm", "weights": "nf4", "context": 4096, "gpu_memory_utilization": 0.7}
    if release:
        keys["engine_version"] = release
    w = _workload("qwen2.5-7b", **keys)
    return vllm_budget(w, estimate(w), cuda_total=8 * GiB, gpu_id="rtx-4060")


def test_v0_bnb_run_on_an_8gb_card_matches_and_does_not_start():
    # V0 defaults for max_model_len 4096: 256 sequences, 4,096 batched tokens. Sampler 256 x 152,064 x 38 B
    # + hidden 4,096 x 3,584 x 2 B = 1,508,638,720 B = 1.405 GiB against 1.42 GiB (-1.1 %); NF4 weights
    # (double-quantized constants, 16-bit embedding and head) 5.197 against 5.20 GiB.
    b = _v0_bnb_budget()
    assert (b.max_num_batched_tokens, b.max_num_seqs) == (4096, 256)
    assert b.profile_peak == 256 * 152_064 * 38 + 4096 * 3584 * 2
    assert abs(_err(b.profile_peak / GiB, V0_BNB_RUN["peak"])) < 0.05
    assert abs(_err(b.weights / GiB, V0_BNB_RUN["weights"])) < 0.01
    # vLLM logged -1.05 GiB for the KV cache and no blocks: the planner says it would not start
    assert b.kv_blocks == 0 and "No available memory for the cache blocks" in " ".join(
        b.problems(context=4096, kv_bytes_per_token=57_344))
    assert abs((b.usable - b.weights - b.profile_peak - b.non_torch) / GiB - V0_BNB_RUN["kv"]) < 0.05
    # sized as the current release (V1 defaults for a small card, 2,048 tokens and 256 rows of 14 B) the peak
    # would be 0.52 GiB, 63 % below the log
    assert _err(_v0_bnb_budget(release=None).profile_peak / GiB, V0_BNB_RUN["peak"]) < -0.6


def test_v0_budget_with_the_logged_non_torch_term():
    # The KV budget of PR #10511's tp 1 run: 71.29 GiB usable - weights - profile peak - non_torch. That
    # build's non_torch_memory (1.79 GiB) also held the caching allocator's cached blocks (PR #11809), which
    # no workload quantity gives; with the logged term in place of the planner's, the budget is the log's
    # 53.29 GiB to 0.1 %.
    b = _v0_budget(1)
    budget = (b.usable - b.weights - b.profile_peak) / GiB - 1.79
    assert abs(_err(budget, 53.29)) < 0.005


def test_current_arithmetic_misses_the_v0_run():
    # The same run sized as the current release (V1: one 14 B row per request, 1,024 on an H100) is not
    # what a V0 server reserves: the V0 terms differ by the sampler's sort (the 24-41 % budget miss
    # comes from sizing V0 servers with V1's sampler).
    v1 = _v0_budget(1, release=None)
    v0 = _v0_budget(1)
    assert v1.max_num_seqs == 1024 and v0.max_num_seqs == 256
    assert v1.profile_peak != v0.profile_peak
    # V1's sampler on V0's 256 rows would leave 0.49 GiB: 61 % below the logged 1.26 GiB
    from planner.memory.vllm import sampler_peak_bytes

    v1_rows = sampler_peak_bytes(from_hf_config(dict(LLAMA3_8B)), requests=256) + 8192 * 4096 * 2
    assert _err(v1_rows / GiB, 1.26) < -0.55


def test_v0_defaults_follow_max_model_len():
    # vllm/config.py SchedulerConfig.__post_init__ (V0): max(max_model_len, 2048) without chunked prefill;
    # chunked prefill is on by default above 32K tokens, then 2,048. max_num_seqs 256 on every card.
    from planner.memory.vllm import v0_defaults

    assert v0_defaults(1024) == (2048, 256)
    assert v0_defaults(8192) == (8192, 256)
    assert v0_defaults(131_072) == (2048, 256)


# ----- llama.cpp Q2_K before build 1828 ----------------------------------------------------------

def test_q2k_of_build_1022_matches_its_gpu_log():
    run = Q2K_GPU_RUN
    w = _workload(OPEN_LLAMA_7B, engine="llama.cpp", weights="Q2_K", context=run["context"],
                  engine_version=run["build"])
    est = estimate(w)
    arch = w.architecture
    assert gguf_weights(arch, "Q2_K", legacy_q2k=True).type_counts() == run["types"]
    kv = est.extra["llamacpp_kv_gpu_bytes"]
    assert kv == run["kv_mib"] * MiB  # 2 x 32 layers x 512 cells x 4,096 x 2 B
    vram = (est.extra["llamacpp_weights_gpu_bytes"] + kv) / MiB
    assert abs(_err(vram, run["vram_mib"])) < 0.01
    # today's Q2_K of the same model is 11 % smaller on the GPU
    now = estimate(_workload(OPEN_LLAMA_7B, engine="llama.cpp", weights="Q2_K", context=run["context"]))
    assert now.extra["llamacpp_weights_gpu_bytes"] < 0.92 * est.extra["llamacpp_weights_gpu_bytes"]


def test_q2k_sizes_before_and_after_the_change_match_pr_5060_and_2707():
    old70 = gguf_weights(_workload("llama-2-70b").architecture, "Q2_K", legacy_q2k=True).total / GiB
    new70 = gguf_weights(_workload("llama-2-70b").architecture, "Q2_K").total / GiB
    assert round(old70, 2) == Q2K_70B["old"] and round(new70, 2) == Q2K_70B["new"]
    old7 = gguf_weights(_workload("llama-2-7b").architecture, "Q2_K", legacy_q2k=True).total / GiB
    assert abs(old7 - Q2K_7B_OLD) < 0.002
    # the "12 % larger": Llama-2-7B 2.631 / 2.358 GiB
    new7 = gguf_weights(_workload("llama-2-7b").architecture, "Q2_K").total / GiB
    assert 1.11 < old7 / new7 < 1.13


def test_q2k_builds_switch_at_1828_and_other_presets_do_not_change():
    from planner.workload.engine_releases import legacy_q2k

    assert legacy_q2k("b1792") and not legacy_q2k("b1828") and not legacy_q2k(None)
    arch = _workload("llama-2-7b").architecture
    assert gguf_weights(arch, "Q4_K_M", legacy_q2k=True).total == gguf_weights(arch, "Q4_K_M").total


# ----- vLLM LoRA slots ----------------------------------------------------------------------------

def test_lora_slots_are_stacked_a_and_b_per_linear_and_come_out_of_the_kv_budget():
    # Derived from vllm/lora/layers/base_linear.py create_lora_weights (A: max_loras x r x in, B: max_loras x
    # out x r per slice, model dtype). Llama-3.1-8B, rank 16, one layer: q 16 x (4096 + 4096), k and v
    # 16 x (4096 + 1024), o 16 x (4096 + 4096), gate and up 16 x (4096 + 14336), down 16 x (14336 + 4096)
    # = 16 x 81,920 = 1,310,720 values; 32 layers x 2 B = 83,886,080 B (80 MiB) per slot.
    from planner.memory.vllm_lora import lora_slot_values

    arch = _workload("llama-3.1-8b").architecture
    assert lora_slot_values(arch, rank=16) == 32 * 16 * 81_920
    # tp 2: column-parallel outputs and row-parallel inputs halve; A of q/k/v/gate/up and B of o/down do not
    assert lora_slot_values(arch, rank=16, tp=2) == 32 * 16 * (4096 + 2048 + 2 * (4096 + 512) + 2048 + 4096
                                                                + 2 * (4096 + 7168) + 7168 + 4096)
    base = {"engine": "vllm", "weights": "bf16", "context": 8192}
    plain = _workload("llama-3.1-8b", **base)
    lora = _workload("llama-3.1-8b", **base, enable_lora=True, max_loras=4, max_lora_rank=64)
    total = int(79.22 * GiB)
    b0 = vllm_budget(plain, estimate(plain), cuda_total=total, gpu_id="h100-sxm")
    e1 = estimate(lora)
    b1 = vllm_budget(lora, e1, cuda_total=total, gpu_id="h100-sxm")
    slots = 4 * 32 * 64 * 81_920 * 2  # 1,342,177,280 B = 1.25 GiB
    assert b1.weights - b0.weights == slots
    assert b0.budget - b1.budget == slots
    host = [c for c in e1.host_components() if c.name.startswith("vLLM LoRA adapters")]
    assert host and host[0].bytes == 4 * 32 * 64 * 81_920 * 2  # max_cpu_loras defaults to max_loras


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_lora_keys_are_checked_as_vllm_checks_them():
    from planner.core.errors import InputError

    cases = [({"engine": "vllm", "max_loras": 2}, "exist only with enable_lora: true"),
             ({"engine": "vllm", "enable_lora": True, "max_lora_rank": 48}, "vLLM accepts a max_lora_rank of 1, 8, 16"),
             ({"engine": "vllm", "enable_lora": True, "max_loras": 4, "max_cpu_loras": 2},
              "max_cpu_loras (2) must be at least max_loras (4)"),
             ({"engine": "llama.cpp", "enable_lora": True}, "does nothing with engine llama.cpp"),
             ({"engine": "hf", "enable_lora": True}, "does nothing with engine hf")]
    for keys, words in cases:
        with pytest.raises(InputError) as err:
            _workload("llama-3.1-8b", **keys)
        text = str(err.value)
        assert words in text, (keys, text)
    r = _cli("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--enable-lora",
             "--max-loras", "2", "--max-lora-rank", "32", "--json")
    assert r.exit_code == 0, r.output
    names = [c["name"] for c in json.loads(r.output)["components"]]
    assert "weights: vLLM LoRA slots (--enable-lora)" in names


# ----- LitGPT 4-bit inference: single or double quantization, the head quantized ------------------

#: Lightning-AI/litgpt tutorials/quantize.md (commit 49c7e079, Lit-GPT of late 2023): "All the examples below
#: were run on an A100 40GB GPU with CUDA 12.1." `python generate/base.py --quantize bnb.nf4 --checkpoint_dir
#: checkpoints/tiiuae/falcon-7b --precision bf16-true --max_new_tokens 256` ... "Memory used: 5.72 GB";
#: `--quantize bnb.nf4-dq` ... "Memory used: 5.38 GB"; `--quantize bnb.int8 ... --precision 16-true` ...
#: "Memory used: 8.70 GB". Memory used is torch.cuda.max_memory_allocated() in GB. The figures were last
#: measured in commit 982abcbc ("Use Fabric's quantization (#596)", 2023-10-05: it rewrote the timings and
#: nf4-dq 5.37 -> 5.38 GB), with requirements.txt pinning Lightning 71aed751; 49c7e079 carries them
#: unchanged. That Lightning's BitsandbytesPrecision converts every nn.Linear (the head too), sets
#: compress_statistics for the -dq modes and quantizes each weight from fp16 (_Linear4bit._quantize_weight:
#: weight.to(dtype=torch.half)). The prompt is LitGPT's default (a few tokens): context = 8 + 256 tokens.
LITGPT_RUNS = [("bnb.nf4", "nf4", {"double_quant": False}, 5.72), ("bnb.nf4-dq", "nf4", {"double_quant": True}, 5.38),
               ("bnb.int8", "int8", {}, 8.70)]
LITGPT_SOURCE = "Lightning-AI/litgpt tutorials/quantize.md (commit 49c7e079; measured at 982abcbc)"


def _litgpt(weights: str, **keys: Any):
    w = _workload("falcon-7b", engine="hf", weights=weights, context=264, quantize_head=True, **keys)
    return estimate(w)


@pytest.mark.parametrize("mode,weights,keys,published_gb", LITGPT_RUNS)
def test_litgpt_quantized_generation_matches_its_published_peaks(mode, weights, keys, published_gb):
    est = _litgpt(weights, **keys)
    # the tied falcon checkpoint gets LitGPT's own quantized head (295,469,056 parameters)
    assert any("a head of its own (295,469,056 parameters" in n for n in est.notes)
    # held to 10 %, as the training runs. The peak is the prefill's matmul through the head (decode steps of
    # one token use gemv_4bit and dequantize nothing): bitsandbytes 0.41.1 MatMul4Bit runs
    # linear(A, dequantize_4bit(B, state).to(A.dtype).t()) (autograd/_functions.py L516); the state records
    # the dtype the weight was quantized from (functional.py quantize_4bit: A.dtype; dequantize_4bit L898-908
    # allocates the output in it), fp16 under Lightning, and --precision bf16-true computes in bf16, so the
    # nf4 rows hold the head twice at once: 295,469,056 x (2 B fp16 + 2 B bf16) = 1.1819 GB. int8
    # (--precision 16-true) casts nothing. The load is lower: the weights plus one fp16 copy of the head
    # being re-quantized (load_state_dict's _quantize_on_load_hook) and its new 4-bit data, 5.24 GB for nf4.
    assert abs(_err(est.per_gpu_allocated_bytes / 1e9, published_gb)) < 0.10
    head = 65_024 * 4_544  # falcon-7b padded_vocab_size x n_embd (Lit-GPT config.py)
    buffer = [c for c in est.components if c.name == "dequantized weight buffer"][0]
    assert buffer.bytes == head * (4 if weights == "nf4" else 2)


def test_litgpt_dequantized_head_is_cast_only_when_the_compute_dtype_is_not_fp16():
    # --precision 16-true: the fp16 dequantized weight is already the compute dtype (one copy); 32-true
    # casts it to fp32 (2 + 4 B a value); Transformers (no quantize_head) quantizes from the load dtype
    # (bitsandbytes >= 0.43 Params4bit.cuda), one copy
    head = 65_024 * 4_544

    def buffer(**keys: Any) -> int:
        est = estimate(_workload("falcon-7b", engine="hf", weights="nf4", context=264, double_quant=False, **keys))
        return [c.bytes for c in est.components if c.name == "dequantized weight buffer"][0]

    assert buffer(quantize_head=True, kv_dtype="fp16") == head * 2
    assert buffer(quantize_head=True, kv_dtype="fp32") == head * (2 + 4)
    assert buffer(quantize_head=True) == head * (2 + 2)  # kv_dtype bf16 by default for nf4
    largest_linear = 4_544 * 18_176  # falcon-7b's MLP fc (4 x n_embd)
    assert buffer() == largest_linear * 2


def test_double_quantization_saves_what_the_two_published_runs_differ_by():
    # nf4 - nf4-dq: (6,625,951,744 linear + 295,469,056 head) parameters x (32/64 - 8/64 - 32/16384) bits / 8
    # = 0.3228 GB against 5.72 - 5.38 = 0.34 GB published (both rounded to 0.01 GB)
    single = _litgpt("nf4", double_quant=False).per_gpu_allocated_bytes
    double = _litgpt("nf4", double_quant=True).per_gpu_allocated_bytes
    assert abs((single - double) / 1e9 - 0.3228) < 0.001
    assert abs(_err((single - double) / 1e9, 5.72 - 5.38)) < 0.10
    # and the head: quantized, the tied checkpoint's 16-bit embedding stays (Transformers' default: no head)
    plain = estimate(_workload("falcon-7b", engine="hf", weights="nf4", context=264, double_quant=False))
    assert plain.per_gpu_allocated_bytes < single


def test_bitsandbytes_choices_are_checked():
    from planner.core.errors import InputError

    for keys, words in (({"weights": "bf16", "double_quant": False}, "for weights nf4, not bf16"),
                        ({"weights": "fp8", "quantize_head": True}, "for weights nf4 or int8, not fp8"),
                        ({"weights": "nf4", "engine": "vllm", "quantize_head": True}, "not engine vllm")):
        with pytest.raises(InputError) as err:
            _workload("falcon-7b", **keys)
        text = str(err.value)
        assert words in text, (keys, text)


# ----- the key: default, statement, refusal ------------------------------------------------------

def _cli(*args: str):
    from click.testing import CliRunner

    from planner.cli.main import main

    return CliRunner().invoke(main, list(args))


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_default_release_is_stated_in_text_and_json():
    base = ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm"]
    r = _cli(*base, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    current = ENGINE_RELEASES["vllm"].current
    assert doc["engine_version"] == current
    assert version_note("vllm", None, False) in doc["notes"]
    text = _cli(*base).output
    assert f"Note: vllm {current}: the current release modelled" in text
    given = json.loads(_cli(*base, "--engine-version", "0.7.3", "--json").output)
    assert given["engine_version"] == "0.7.3"
    assert any(n.startswith("vllm 0.7.3: as given") and "it predates 0.8.0" in n for n in given["notes"])


def test_a_release_older_than_modelled_is_refused_naming_the_oldest():
    r = _cli("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
             "--engine-version", "0.5.4")
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1
    assert "vllm 0.5.4 is older than the oldest release planner models (0.6.0)" in lines[0]
    assert "--engine-version" in lines[0]
    r = _cli("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "llama.cpp",
             "--engine-version", "b900")
    assert r.exit_code == 2 and "older than the oldest release planner models (b1022)" in r.output


def test_wrong_scheme_and_engine_hf_are_refused():
    from planner.core.errors import InputError

    with pytest.raises(InputError) as err:
        _workload("llama-3.1-8b", engine="vllm", engine_version="b4567")
    text = str(err.value)
    assert "vllm releases are written as a dotted release" in text
    with pytest.raises(InputError) as err:
        _workload("llama-3.1-8b", engine="hf", engine_version="4.46.0")
    text = str(err.value)
    assert "engine hf has no releases to choose from" in text
    with pytest.raises(InputError) as err:
        _workload("llama-3.1-8b", engine="vllm", engine_version=0.10)
    text = str(err.value)
    # a mapping with no file (the Python API): the number is refused, as framework_version's is; a YAML
    # file's wording is tests/test_release_statements.py's
    assert "engine_version is the number 0.1" in text and "Pass the release as a string" in text


def test_scenario_key_reaches_the_plan():
    w = _workload("llama-3.1-8b", engine="llama.cpp", weights="Q2_K", engine_version="b1500")
    assert w.infer.engine_version == "b1500"
    assert estimate(w).engine_version == "b1500"


# ----- the report ---------------------------------------------------------------------------------

def report_rows() -> list[list[str]]:
    """Rows of reports/validation.md's "Engine releases" table: engine, release, run, source, quantity,
    predicted, published, error."""
    rows = []
    for case, tp, peak, weights in V0_RUNS:
        b = _v0_budget(tp)
        rows.append(["vLLM", V0_RELEASE + " (V0)", f"Meta-Llama-3-8B bf16, tp {tp}, 80 GB card", V0_SOURCE,
                     "PyTorch activation peak (profiling run)", f"{b.profile_peak / GiB:.2f} GiB", f"{peak:.2f} GiB",
                     f"{_err(b.profile_peak / GiB, peak):+.1%}"])
        rows.append(["vLLM", V0_RELEASE + " (V0)", f"Meta-Llama-3-8B bf16, tp {tp}, 80 GB card", V0_SOURCE,
                     "model weights take", f"{b.weights / GiB:.2f} GiB", f"{weights:.2f} GiB",
                     f"{_err(b.weights / GiB, weights):+.1%}"])
        if tp == 1:
            kv = (b.usable - b.weights - b.profile_peak) / GiB - 1.79
            rows.append(["vLLM", V0_RELEASE + " (V0)", "Meta-Llama-3-8B bf16, tp 1, 80 GB card", V0_SOURCE,
                         "available KV cache memory (with the log's non_torch 1.79 GiB)", f"{kv:.2f} GiB",
                         "53.29 GiB", f"{_err(kv, 53.29):+.1%}"])
    b = _v0_bnb_budget()
    for quantity, got, pub in (("PyTorch activation peak (profiling run)", b.profile_peak / GiB, V0_BNB_RUN["peak"]),
                               ("model weights take", b.weights / GiB, V0_BNB_RUN["weights"])):
        rows.append(["vLLM", "0.7.3.dev233 (V0)", "Qwen2.5-7B-Instruct bnb-4bit, 8 GB RTX 4060, util 0.7",
                     V0_BNB_SOURCE, quantity, f"{got:.2f} GiB", f"{pub:.2f} GiB", f"{_err(got, pub):+.1%}"])
    run = Q2K_GPU_RUN
    w = _workload(OPEN_LLAMA_7B, engine="llama.cpp", weights="Q2_K", context=run["context"],
                  engine_version=run["build"])
    est = estimate(w)
    vram = (est.extra["llamacpp_weights_gpu_bytes"] + est.extra["llamacpp_kv_gpu_bytes"]) / MiB
    rows.append(["llama.cpp", run["build"], "open_llama_7b_v2 Q2_K, all layers on a V100, n_ctx 512", Q2K_GPU_SOURCE,
                 "VRAM used (weights + KV cache)", f"{vram:,.0f} MiB", f"{run['vram_mib']:,} MiB",
                 f"{_err(vram, run['vram_mib']):+.1%}"])
    for label, legacy, build, pub in (("old", True, "b1792", Q2K_70B["old"]), ("new", False, "b1828+", Q2K_70B["new"])):
        size = gguf_weights(_workload("llama-2-70b").architecture, "Q2_K", legacy_q2k=legacy).total / GiB
        rows.append(["llama.cpp", build, f"Llama-2-70B Q2_K ({label} mix)", "ggml-org/llama.cpp PR #5060",
                     "model size", f"{size:.2f} GiB", f"{pub:.2f} GiB", f"{_err(size, pub):+.1%}"])
    for mode, weights, keys, pub in LITGPT_RUNS:
        est = _litgpt(weights, **keys)
        got = est.per_gpu_allocated_bytes / 1e9
        rows.append(["LitGPT generate", "Lit-GPT 982abcbc", f"falcon-7b --quantize {mode}, A100 40GB", LITGPT_SOURCE,
                     "peak allocated (Memory used)", f"{got:.2f} GB", f"{pub:.2f} GB", f"{_err(got, pub):+.1%}"])
    size = gguf_weights(_workload("llama-2-7b").architecture, "Q2_K", legacy_q2k=True).total / GiB
    rows.append(["llama.cpp", "b1022", "Llama-2-7B Q2_K", "ggml-org/llama.cpp PR #2707 (commit bac66994)",
                 "file size", f"{size:.3f} GiB", f"{Q2K_7B_OLD:.3f} GiB", f"{_err(size, Q2K_7B_OLD):+.1%}"])
    return rows


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_report_section_is_current():
    # reports/validation.md carries this file's table (python -m planner.validate.validation rewrites it)
    from pathlib import Path

    from planner.validate.validation import engine_releases_section

    here = Path(__file__).parent
    section = engine_releases_section(here / "test_engine_releases.py")
    assert section and section in (here.parent / "reports" / "validation.md").read_text(encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.path.insert(0, "tests")
    for row in report_rows():
        print(" | ".join(row))


def test_llamacpp_builds_before_the_auto_default_run_without_flash_attention():
    # b6327 (2025-08-31) made flash attention 'auto' (flash_attn_type); before it -fa was off unless given
    # (planner.workload.engine_releases.LLAMACPP_FA_AUTO, sources there)
    from planner.workload.engine_releases import llamacpp_fa_default, version_note

    assert llamacpp_fa_default(None) and llamacpp_fa_default("b6327") and not llamacpp_fa_default("b6326")
    assert not llamacpp_fa_default("b1792")
    note = version_note("llama.cpp", "b1792", True)
    assert "it predates b2797, where builds are known to have flash attention" in note
    assert "it predates b6327, where flash attention became 'auto' by default" in note
    assert "newer than the newest release modelled (b11312), sized as that one" in version_note("llama.cpp", "b999999",
                                                                                                  True)
