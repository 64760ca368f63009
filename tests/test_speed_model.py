"""The speed model's mechanisms (planner.speed), each checked by the direction and size it must have.

The published runs it is measured against are in tests/test_speed_published.py; these tests check
that each mechanism of docs/speed-model.md acts as its derivation says.
"""

from __future__ import annotations

import math
from functools import cache

import pytest

from planner.core.errors import InputError


@cache
def _cat():
    from planner import load_catalog

    return load_catalog()


def _train(gpu="h100-sxm", **kw):
    from planner import estimate

    base = dict(model="llama-3.1-8b", task="train", micro_batch=2, seq_len=2048, recipe="mixed-bf16")
    return estimate(catalog=_cat(), gpu=gpu, **{**base, **kw}).speed


def _infer(gpu="h100-sxm", prompt_tokens=1000, output_tokens=200, **kw):
    from planner import estimate

    base = dict(model="llama-3.1-8b", task="infer", engine="vllm", weights="bf16")
    return estimate(catalog=_cat(), gpu=gpu, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                    **{**base, **kw}).speed


def _part(speed, name):
    return next(p.seconds for p in speed.parts if p.name == name)


def test_a_frozen_base_does_no_weight_gradient_gemms():
    # full: fwd 2W + dgrad 2W + wgrad 2W; LoRA: fwd 2W + dgrad 2W: the layer GEMMs take 4/6 of the time
    # (the head, 6 vs 4 x its weights, scales the same way)
    full, lora = _train(), _train(method="lora", recipe="pure-bf16")
    assert _part(lora, "gemm") / _part(full, "gemm") == pytest.approx(4 / 6, rel=1e-9)


def test_recomputation_runs_the_layers_forward_again():
    # none: 6 x W per token in the layers; full checkpointing: 8 x W (the head is not recomputed)
    none, full = _train(), _train(checkpointing="full")
    assert _part(full, "gemm") > _part(none, "gemm")
    from planner.speed.layers import token_costs
    from planner import estimate

    arch = estimate(catalog=_cat(), model="llama-3.1-8b", task="train").workload.architecture
    tc = token_costs(arch, seq_len=2048, attention="flash", fused=False)
    W, H = tc.gemm_weights, tc.head_weights
    assert _part(full, "gemm") / _part(none, "gemm") == pytest.approx((8 * W + 6 * H) / (6 * W + 6 * H), rel=1e-9)


def test_fp8_is_faster_than_bf16_on_hopper_but_not_twice():
    bf16, fp8 = _train(recipe="mixed-bf16"), _train(recipe="fp8")
    assert 1.0 < bf16.step_s / fp8.step_s < 2.0


def test_fp8_training_is_refused_on_a_card_without_fp8_and_names_a_training_fix():
    with pytest.raises(InputError) as e:
        _train(gpu="a100-80gb-sxm", recipe="fp8")
    text = str(e.value)
    assert "fp8 support" in text and "mixed-bf16" in text and "vllm" not in text


def test_qlora_dequantizes_per_micro_batch_not_per_token():
    # the NF4 weights are dequantized once per pass of a micro-batch: more tokens per micro-batch
    # spread the same bytes over more tokens, so tokens/s rises with the micro-batch
    small = _train(gpu="rtx-4090", model="llama-2-7b", method="qlora", recipe="pure-bf16", micro_batch=1, seq_len=256)
    large = _train(gpu="rtx-4090", model="llama-2-7b", method="qlora", recipe="pure-bf16", micro_batch=8, seq_len=256)
    assert large.tokens_per_s > small.tokens_per_s * 1.1


def test_the_optimizer_step_is_a_pass_over_the_trainable_parameters():
    # full fine-tuning reads and writes every parameter's states once a step; LoRA only the adapters'
    full, lora = _train(), _train(method="lora", recipe="pure-bf16")
    assert _part(full, "optimizer step") > 100 * _part(lora, "optimizer step")
    # and a step of more micro-batches spreads it over more tokens
    more = _train(grad_accum=8)
    assert more.tokens_per_s > full.tokens_per_s


def test_data_parallel_gradients_cross_pcie_slower_than_nvlink():
    ddp_pcie = _train(gpu="rtx-4090", gpus=2, model="llama-3.2-1b", recipe="pure-bf16", micro_batch=1, seq_len=512)
    ddp_nvl = _train(gpu="h100-sxm", gpus=2, model="llama-3.2-1b", recipe="pure-bf16", micro_batch=1, seq_len=512)
    assert _part(ddp_pcie, "data-parallel communication") > _part(ddp_nvl, "data-parallel communication")


def test_decode_at_batch_one_is_bytes_over_bandwidth_plus_a_fixed_cost():
    s = _infer(concurrency=1)
    weights = _part(s, "decode: weights read")
    fixed = _part(s, "decode: per-layer fixed cost")
    # 16 GB of bf16 weights over 3.35 TB/s x 0.85: about 5.6 ms; 10 kernels x 32 layers x 3 us = 0.96 ms
    assert weights == pytest.approx(16.06e9 / (3350e9 * 0.85), rel=0.01)
    assert fixed == pytest.approx(10 * 32 * 3e-6, rel=1e-9)
    assert s.tpot_s == pytest.approx(weights + _part(s, "decode: KV cache read") + fixed, rel=1e-9)


def test_transformers_generate_is_host_bound_at_batch_one():
    hf, vllm = _infer(engine="hf", concurrency=1), _infer(engine="vllm", concurrency=1)
    assert hf.tpot_s > 1.5 * vllm.tpot_s


def test_tensor_parallel_decode_pays_two_all_reduces_per_layer():
    s = _infer(tp=2, gpus=2, concurrency=1)
    assert _part(s, "decode: tensor-parallel all-reduces") >= 2 * 32 * 8e-6


def test_large_batches_become_compute_bound():
    one, many = _infer(concurrency=1), _infer(concurrency=256, prompt_tokens=100, output_tokens=100)
    assert many.output_tokens_per_s > 50 * one.output_tokens_per_s
    assert many.tpot_s > one.tpot_s


def test_request_time_is_ttft_plus_output_steps():
    s = _infer(concurrency=4)
    assert s.request_s == pytest.approx(s.ttft_s + 200 * s.tpot_s, rel=1e-12)
    assert s.output_tokens_per_s == pytest.approx(4 / s.tpot_s, rel=1e-12)


def test_llamacpp_quantized_prefill_runs_mmq_and_f16_runs_cublas():
    q4 = _infer(gpu="rtx-4090", engine="llama.cpp", weights="Q4_0", model="llama-2-7b", prompt_tokens=512,
                output_tokens=1, context=513)
    f16 = _infer(gpu="rtx-4090", engine="llama.cpp", weights="F16", model="llama-2-7b", prompt_tokens=512,
                 output_tokens=1, context=513)
    q4_words = next(p.formula for p in q4.parts if p.name == "prefill: gemm")
    f16_words = next(p.formula for p in f16.parts if p.name == "prefill: gemm")
    assert "MMQ" in q4_words and "cuBLAS FP16" in f16_words
    # decode reads 4-bit blocks: far fewer bytes than F16
    assert q4.tpot_s < 0.5 * f16.tpot_s


def test_an_assumed_rate_is_said():
    # Ada's GEMM efficiency borrows Ampere's measurement: assumed, except on a card measured itself
    # (planner.speed.constants.CARD_GEMM_EFFICIENCY: the RTX 4090); Hopper's is measured
    assert _train(gpu="rtx-4080", model="llama-3.2-1b").assumed is True
    assert _train(gpu="rtx-4090", model="llama-3.2-1b").assumed is False
    assert _train(gpu="h100-sxm").assumed is False


def test_the_request_must_fit_the_context():
    with pytest.raises(InputError) as e:
        _infer(prompt_tokens=4000, output_tokens=200, context=4096)
    assert "a request of 4,000 prompt + 200 output tokens does not fit context=4,096" in str(e.value)  # API keyword


def test_prompt_tokens_need_a_card():
    from planner import estimate

    with pytest.raises(InputError) as e:
        estimate(catalog=_cat(), model="llama-3.1-8b", task="infer", prompt_tokens=100)
    assert "give gpu=ID" in str(e.value)  # the API's keyword (the command line says --gpu ID)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "x", math.inf])
def test_token_counts_are_whole_and_positive(bad):
    with pytest.raises(InputError) as e:
        _infer(prompt_tokens=bad)
    assert "prompt_tokens must be a whole number of tokens" in str(e.value)


def test_prompt_and_output_alone_set_the_context():
    from planner import estimate

    r = estimate(catalog=_cat(), gpu="h100-sxm", model="llama-3.1-8b", task="infer", engine="vllm",
                 prompt_tokens=3000, output_tokens=500)
    assert r.workload.infer.context == 3500
    assert r.speed.prompt_tokens == 3000 and r.speed.output_tokens == 500


def test_the_speed_object_names_every_key_the_issue_lists():
    train = _train().to_dict()
    assert {"tokens_per_s", "step_s", "mfu", "parts"} <= set(train)
    infer = _infer().to_dict()
    assert {"prefill_tokens_per_s", "ttft_s", "tpot_s", "output_tokens_per_s", "request_s", "parts"} <= set(infer)
    for p in train["parts"] + infer["parts"]:
        assert p["formula"] and p["source"] and p["seconds"] >= 0


def test_llamacpp_kernels_per_layer_follow_the_ggml_graph():
    # planner.speed.layers.GGML_*: a Llama layer has 22 compute nodes (scale 1, the dense count of 12
    # kept); DeepSeek-V2-Lite's MoE layers 42 (20 MLA attention + 12 + (6 - 1) + 5 shared experts) and
    # its one dense layer 27, as llama.cpp's graph listing of that shape has them.
    from planner import estimate
    from planner.speed.layers import ggml_kernel_scale, ggml_moe_block_nodes

    llama = estimate(catalog=_cat(), model="llama-2-7b", task="infer").workload.architecture
    ds = estimate(catalog=_cat(), model="deepseek-v2-lite", task="infer").workload.architecture
    assert ggml_kernel_scale(llama) == 1.0
    assert ggml_moe_block_nodes(ds) == 22
    assert ds.dense_layers == 1
    assert ggml_kernel_scale(ds) == pytest.approx((27 + 26 * 42) / 27 / 22)


def test_packed_documents_attend_one_by_one():
    # llama-3.1-8b's attention FLOPs per token are proportional to the keys a query sees: (s + 1) / 2 under a
    # causal kernel. Packed documents of 256 tokens attended alone span 256 + 128 (half a 128-row tile of the
    # cut diagonal tiles a query: planner.speed.training.ATTENTION_TILE): (384 + 1) / (4096 + 1) of the whole
    # sequence's attention; the GEMMs do not change
    whole, packed = _train(seq_len=4096), _train(seq_len=4096, document_tokens=256)
    assert _part(packed, "attention") / _part(whole, "attention") == pytest.approx(385 / 4097, rel=1e-9)
    assert _part(packed, "gemm") == _part(whole, "gemm")
    # eager attention computes the whole masked matrix: no change
    eager = _train(seq_len=4096, attention="eager")
    assert _part(_train(seq_len=4096, attention="eager", document_tokens=256), "attention") == _part(eager, "attention")


def test_a_document_longer_than_the_sequence_is_refused():
    with pytest.raises(InputError) as e:
        _train(seq_len=2048, document_tokens=4096)
    msg = str(e.value)
    # named by the API's keywords (the command line says --document-tokens and --seq-len)
    assert msg.startswith("document_tokens: a document of 4,096 tokens is longer than a sequence (seq_len 2,048)")
    assert "at most seq_len" in msg


def test_dora_costs_more_than_lora():
    # peft's DoRA rebuilds each adapted weight and its row norms every forward and scales the output three
    # times (planner.speed.training._dora_bytes): memory-bound bytes only, the GEMMs the same without dropout
    lora = _train(method="lora", recipe="pure-bf16", lora_targets=["q_proj", "v_proj"])
    dora = _train(method="lora", recipe="pure-bf16", lora_targets=["q_proj", "v_proj"], use_dora=True)
    assert _part(dora, "memory-bound ops") > _part(lora, "memory-bound ops")
    assert _part(dora, "gemm") == _part(lora, "gemm")
    # under lora_dropout the adapted modules' base linear runs a second time: forward and input gradient
    drop = _train(method="lora", recipe="pure-bf16", lora_targets=["q_proj", "v_proj"], use_dora=True,
                  lora_dropout=0.1)
    assert _part(drop, "gemm") > _part(dora, "gemm")


def test_paged_states_that_do_not_fit_cross_pcie_twice_a_step():
    # bitsandbytes' paged states beyond the card's free memory are paged out and back in by every step:
    # 2 x (unified bytes - (usable memory - the estimate's GPU total)) over the PCIe link (planner.speed.training
    # ._paged_spill_part); on a card where they fit, no such part
    from planner import estimate

    kw = dict(model="llama-3.1-8b", task="train", micro_batch=2, seq_len=2048, framework="torchtune", compile=True,
              optimizer_in_backward=True, optimizer="paged-adamw-8bit")
    r = estimate(catalog=_cat(), gpu="rtx-4090", **kw)
    gpu = next(g for g in _cat().gpus if g.id == "rtx-4090")
    spill = r.estimate.per_gpu_unified_bytes - (gpu.memory_usable_bytes - r.estimate.per_gpu_total_bytes)
    part = next(p for p in r.speed.parts if p.name == "paged optimizer states")
    assert spill > 0
    # the 4090 sits on PCIe 4.0 x16: 1.969e9 B/s a lane x 16 lanes x 0.85 (planner.speed.traffic.PCIE_EFFICIENCY)
    assert part.seconds == pytest.approx(2 * spill / (1.969e9 * 16 * 0.85), rel=0.01)
    big = estimate(catalog=_cat(), gpu="h100-sxm", **kw).speed
    assert not any(p.name == "paged optimizer states" for p in big.parts)
