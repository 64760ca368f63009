"""Memory model: published figures and hand-derived cases, with the reasoning beside each.

Sources of the expected values are named in each test; GB means 10**9 bytes, GiB 2**30.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.model.architecture import from_hf_config
from planner.memory import estimate
from planner.memory.activations import activation_bytes
from planner.memory.layer import LayerOptions, layer_saved_tensors
from planner.memory.saved import regime_for
from planner.memory.inference import kv_bytes_per_token, kv_cache_bytes, moe_block_bytes, prefill_peak_bytes
from planner.memory.quant import nf4_constant_bits, weight_bytes
from planner.memory.states import lora_parameters, model_state_components
from planner.core.units import GB, GiB
from planner.workload.spec import workload_from_mapping
from tests.catalog_yaml import catalog_model



def catalog_arch(model_id: str):
    return from_hf_config(catalog_model(model_id)["config"], model_id)


LLAMA_65B = {  # LLaMA-1 65B (Touvron et al. 2023, Table 2): d_model 8192, 80 layers, 64 heads, FFN 22016
    "model_type": "llama", "hidden_size": 8192, "intermediate_size": 22016, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 64, "vocab_size": 32000, "max_position_embeddings": 2048,
    "tie_word_embeddings": False, "torch_dtype": "float16",
}


def workload(arch, **keys):
    data = {"model": "m", **keys}
    return workload_from_mapping(data, lambda name, entry: (name, "test", arch))


# ----- KV cache -------------------------------------------------------------------------------

@pytest.mark.parametrize("model_id, expected", [
    # 2 (K,V) x 32 layers x 8 KV heads x 128 head_dim x 2 B = 131,072 (GQA, Ainslie et al. 2023)
    ("llama-3.1-8b", 131_072),
    # 2 x 80 layers x 8 KV heads x 128 x 2 B = 327,680
    ("llama-2-70b", 327_680),
    # Qwen3-4B has an explicit head_dim 128 (not 2560/32 = 80): 2 x 36 x 8 x 128 x 2 B = 147,456
    ("qwen3-4b", 147_456),
])
def test_kv_bytes_per_token_published(model_id, expected):
    assert kv_bytes_per_token(catalog_arch(model_id), "bf16") == expected


def test_kv_cache_llama2_7b_seed_figures():
    # Seed article: 7B fp16, 2048 tokens: ~1 GB at batch 1, 16+ GB at batch 16 (MHA).
    # 2 x 32 layers x 32 heads x 128 x 2 B x 2048 tokens = 1,073,741,824 B exactly (1 GiB).
    arch = catalog_arch("llama-2-7b")
    one, _ = kv_cache_bytes(arch, kv_dtype="fp16", context=2048, concurrency=1)
    sixteen, _ = kv_cache_bytes(arch, kv_dtype="fp16", context=2048, concurrency=16)
    assert one == 1_073_741_824
    assert sixteen == 16 * GiB


def test_kv_cache_tp_replicates_kv_heads_beyond_their_count():
    # Llama-3.1-8B has 8 KV heads: t=4 keeps 2 per GPU; t=16 would keep max(1, 8 // 16) = 1 (vLLM).
    arch = catalog_arch("llama-3.1-8b")
    assert kv_bytes_per_token(arch, "bf16", tp=4) == 131_072 // 4
    assert kv_bytes_per_token(arch, "bf16", tp=16) == 131_072 // 8


def test_kv_cache_sliding_window_layers_keep_only_the_window():
    # Gemma-2-9B: 42 layers, 21 of them with a 4096-token window; 8 KV heads x 256 head_dim.
    arch = catalog_arch("gemma-2-9b")
    per_layer_token = 2 * 8 * 256 * 2
    honoured, _ = kv_cache_bytes(arch, kv_dtype="bf16", context=8192, concurrency=1)
    ignored, _ = kv_cache_bytes(arch, kv_dtype="bf16", context=8192, concurrency=1, sliding_window=False)
    assert honoured == per_layer_token * (21 * 8192 + 21 * 4096)
    assert ignored == per_layer_token * 42 * 8192


def test_fp8_kv_cache_halves_bf16():
    arch = catalog_arch("llama-3.1-8b")
    assert kv_bytes_per_token(arch, "fp8") * 2 == kv_bytes_per_token(arch, "bf16")


# ----- ZeRO paper, model states of 7.5B parameters on 64 GPUs -----------------------------------

@pytest.mark.parametrize("stage, expected_gb", [
    # ZeRO paper (Rajbhandari et al. 2020), Figure 1 / sec. 5: Psi = 7.5B, N = 64, K = 12.
    (0, 120.0),  # (2 + 2 + 12) Psi = 120 GB
    (1, 31.4),   # 2 Psi + 2 Psi + 12 Psi / 64 = 31.4 GB
    (2, 16.6),   # 2 Psi + (2 + 12) Psi / 64 = 16.6 GB
    (3, 1.9),    # (2 + 2 + 12) Psi / 64 = 1.9 GB
])
def test_zero_paper_model_states_table(stage, expected_gb):
    # The paper's figure counts model states only (weights, gradients, master weights and Adam
    # moments), not buffers in flight; we take bytes per parameter from a real model's
    # components and scale them to Psi = 7.5e9.
    arch = catalog_arch("llama-2-7b")
    P = arch.parameters
    w = workload(arch, task="train", method="full", recipe="mixed-bf16", optimizer="adamw", gpus=64, zero=stage)
    states = {"weights", "gradients", "fp32 master weights", "optimizer states"}
    total = sum(c.bytes for c in model_state_components(arch, w.train) if c.name in states)
    assert round(total / P * 7.5e9 / GB, 1) == expected_gb


def test_recipes_bytes_per_param():
    # Bytes per parameter of model states, single GPU, AdamW (ZeRO paper, Rajbhandari et al. 2020, sec. 3.1, and recipes docstring):
    # fp32 4+4+8 = 16; mixed 2+2+4+8 = 16; mixed with fp32 grads 2+4+4+8 = 18; pure bf16 2+2+4 = 8;
    # AMP 4+4+8 = 16 (+2 B autocast copies, counted separately).
    arch = catalog_arch("llama-2-7b")
    P = arch.parameters
    names = {"weights", "gradients", "fp32 master weights", "optimizer states"}
    for recipe, per_param in [("fp32", 16), ("mixed-bf16", 16), ("mixed-bf16-fp32-grads", 18), ("pure-bf16", 8),
                              ("amp-bf16", 16)]:
        w = workload(arch, task="train", recipe=recipe)
        total = sum(c.bytes for c in model_state_components(arch, w.train) if c.name in names)
        assert total == per_param * P, recipe


@pytest.mark.parametrize("optimizer, state_bytes_per_param", [
    ("adamw", 8),          # two fp32 moments
    # two 1-byte moments + fp32 absmax per 256 values (bitsandbytes); the Trainer keeps the embedding's
    # 32,000 x 4,096 weights in 32 bits (two fp32 states, 8 B): (P - 131,072,000) x 2.03125 + 131,072,000 x 8
    ("adamw-8bit", ((6_738_415_616 - 131_072_000) * (2 + 8 / 256) + 131_072_000 * 8) / 6_738_415_616),
    ("sgd", 0),
    ("sgd-momentum", 4),   # one fp32 momentum buffer
    ("lion", 4),           # one fp32 momentum buffer
])
def test_optimizer_states(optimizer, state_bytes_per_param):
    arch = catalog_arch("llama-2-7b")
    w = workload(arch, task="train", recipe="mixed-bf16", optimizer=optimizer)
    got = sum(c.bytes for c in model_state_components(arch, w.train) if c.name == "optimizer states")
    assert got == pytest.approx(state_bytes_per_param * arch.parameters, rel=1e-9)


def test_adafactor_is_factored():
    # Adafactor keeps rows + columns per matrix: far below one value per parameter.
    arch = catalog_arch("llama-2-7b")
    w = workload(arch, task="train", recipe="mixed-bf16", optimizer="adafactor")
    got = sum(c.bytes for c in model_state_components(arch, w.train) if c.name == "optimizer states")
    # per layer: q,k,v,o (4096+4096) x 4 + gate,up (4096+11008) x 2 + down (11008+4096) = 78,080 values;
    # Transformers' Adafactor also keeps a 0-dim fp32 RMS per tensor: embedding, head, 7 x 32 linears
    # and 65 norms = 291 tensors, each in one 512 B allocator block
    layer = 4 * 8192 + 3 * 15104
    expected = 4 * (32 * layer + 2 * (32000 + 4096) + arch.param_counts().norms) + 291 * 512
    assert got == expected


def _states_and_step(arch, **keys):
    w = workload(arch, task="train", **keys)
    comps = model_state_components(arch, w.train)
    states = sum(c.bytes for c in comps if c.name == "optimizer states")
    step = sum(c.bytes for c in comps if c.name == "optimizer step temporaries")
    return states, step


def test_adafactor_keeps_fp32_states_and_fp32_copies_of_the_largest_tensor():
    # Transformers' Adafactor casts each 16-bit gradient to fp32 and builds its states from it: fp32
    # states whatever the recipe. Stepping one parameter at a time it holds the fp32 gradient and
    # parameter, grad**2 and grad**2 + eps: 4 fp32 copies of the largest tensor (the embedding or
    # head, 32,000 x 4,096); with fp32 parameters (fp32, AMP, and mixed recipes' masters) 2.
    arch = catalog_arch("llama-2-7b")
    fp32_states, fp32_step = _states_and_step(arch, recipe="fp32", optimizer="adafactor")
    bf16_states, bf16_step = _states_and_step(arch, recipe="pure-bf16", optimizer="adafactor")
    assert bf16_states == fp32_states
    assert bf16_step == 32000 * 4096 * 4 * 4
    assert fp32_step == 32000 * 4096 * 2 * 4
    assert _states_and_step(arch, recipe="mixed-bf16", optimizer="adafactor")[1] == fp32_step


def test_adafactor_steps_a_mixture_of_experts_by_its_fused_expert_tensors():
    # Transformers 5 stores Mixtral's experts as gate_up_proj (8 experts x 2 x 14,336 x 4,096 =
    # 939,524,096 values) and down_proj (8 x 4,096 x 14,336) per layer: the largest tensor, far
    # above the embedding (32,000 x 4,096); 4 fp32 copies of it with bf16 parameters.
    arch = catalog_arch("mixtral-8x7b")
    _, step = _states_and_step(arch, recipe="pure-bf16", optimizer="adafactor")
    assert step == 8 * 2 * 14336 * 4096 * 4 * 4


def test_under_zero_the_optimizer_steps_one_flat_partition():
    # DeepSpeed ZeRO hands the optimizer one flat 1-D fp32 partition (stage_1_and_2.py
    # single_partition_of_fp32_groups): Adafactor keeps a full second moment of it (nothing to factor)
    # and holds 2 fp32 copies of the partition in its step; AdamW8bit's per-tensor rules (the Trainer's
    # 32-bit embedding, min_8bit_size) no longer apply. llama-2-7b over 4 GPUs: P / 4 = 1,684,603,904.
    arch = catalog_arch("llama-2-7b")
    part = 6_738_415_616 // 4
    states, step = _states_and_step(arch, recipe="mixed-bf16", optimizer="adafactor", zero=2, gpus=4)
    assert states == part * 4 + 512
    assert step == part * 2 * 4
    states8, _ = _states_and_step(arch, recipe="mixed-bf16", optimizer="adamw-8bit", zero=1, gpus=4)
    assert states8 == round(part * (2 + 8 / 256))


@pytest.mark.parametrize("optimizer, runs", [("adamw", True), ("lion", True), ("adamw-8bit", False), ("sgd", False),
                                              ("sgd-momentum", False), ("adafactor", False)])
def test_zero_offload_steps_only_deepspeeds_cpu_optimizers(optimizer, runs):
    # DeepSpeed offloads with DeepSpeedCPUAdam / DeepSpeedCPULion and refuses a client optimizer
    from planner.core.errors import InputError

    arch = catalog_arch("llama-2-7b")
    keys = dict(task="train", recipe="mixed-bf16", optimizer=optimizer, zero=2, gpus=2, offload_optimizer=True)
    if runs:
        assert workload(arch, **keys).train.offload_optimizer
        return
    with pytest.raises(InputError) as e:
        workload(arch, **keys)
    assert e.value.entry == "optimizer"
    assert "DeepSpeedCPUAdam" in str(e.value)


def test_zero_step_casts_the_gradient_partition_to_fp32():
    # DeepSpeed's step: flatten this rank's 16-bit gradients (2 B) and cast them to fp32 (4 B) as the fp32
    # partition's grad. llama-2-7b over 2 ranks: 3,369,207,808 values x 6 B; ZeRO-3 one sub-group of
    # 1e9 values at a time (sub_group_size); fp32 gradient buffers (mixed-bf16-fp32-grads): the flat copy
    # is the fp32 tensor, 4 B.
    arch = catalog_arch("llama-2-7b")

    def step_grad(**keys):
        comps = model_state_components(arch, workload(arch, task="train", gpus=2, **keys).train)
        return sum(c.bytes for c in comps if c.name == "fp32 gradient partition for the step (ZeRO)")

    assert step_grad(recipe="mixed-bf16", zero=1) == 3_369_207_808 * 6
    assert step_grad(recipe="mixed-bf16", zero=3) == 1_000_000_000 * 6
    assert step_grad(recipe="mixed-bf16-fp32-grads", zero=2) == 3_369_207_808 * 4
    assert step_grad(recipe="mixed-bf16", zero=0) == 0
    assert step_grad(recipe="mixed-bf16", zero=2, offload_optimizer=True) == 0  # the host steps it


def test_gpt_oss_experts_are_stored_as_gate_up_and_down():
    # gpt-oss-20b: hidden 2,880 = intermediate 2,880, 32 experts; GptOssExperts stores gate_up_proj
    # (32 x 5,760 x 2,880 = 530,841,600) and down_proj (32 x 2,880 x 2,880 = 265,420,800) in each of 24
    # layers: down_proj is not fused into gate_up (both take 2,880 inputs). The largest tensor is the
    # embedding, 201,088 x 2,880 = 579,133,440.
    from planner.memory.states import trainable_shape

    arch = catalog_arch("gpt-oss-20b")
    w = workload(arch, task="train", recipe="pure-bf16", optimizer="adafactor")
    shape = trainable_shape(arch, w.train)
    assert (32 * 5760 * 2880, 24) in shape.tensor_sizes and (32 * 2880 * 2880, 24) in shape.tensor_sizes
    assert shape.largest_trainable_tensor == 201088 * 2880


def test_bitsandbytes_lion_keeps_an_fp32_momentum_and_no_step_temporary():
    # bitsandbytes' 32-bit Lion (the Trainer's lion_32bit): one fp32 state whatever the parameter
    # dtype, updated in one fused kernel.
    arch = catalog_arch("llama-2-7b")
    states, step = _states_and_step(arch, recipe="pure-bf16", optimizer="lion")
    assert (states, step) == (arch.parameters * 4, 0)


def test_adamw_8bit_keeps_32bit_states_for_small_tensors():
    # bitsandbytes' min_8bit_size 4,096: LoRA r=8 on q/v of a 4096-wide model has A = 8 x 4,096 and
    # B = 4,096 x 8 = 32,768 values each (8-bit states); on a 256-wide model 2,048 values (fp32 states,
    # 2 x 4 B each).
    big = catalog_arch("llama-2-7b")
    n_big = 32 * 2 * 2 * 8 * 4096
    assert _states_and_step(big, method="lora", lora_rank=8, optimizer="adamw-8bit")[0] == round(
        n_big * (2 + 8 / 256))
    small = from_hf_config({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
                            "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 688,
                            "vocab_size": 8000}, "small")
    # q: A 8 x 256, B 256 x 8; v: A 8 x 256, B 64 x 8 (two KV heads of 32): all under 4,096
    n_small = 4 * (8 * 256 + 256 * 8 + 8 * 256 + 64 * 8)
    assert _states_and_step(small, method="lora", lora_rank=8, optimizer="adamw-8bit")[0] == n_small * 2 * 4


def test_seed_full_finetune_7b_is_112_gb_before_activations():
    # Seed article: 7B with mixed-precision Adam = 16 B/param = 112 GB for 7e9 params.
    arch = catalog_arch("llama-2-7b")
    w = workload(arch, task="train", recipe="mixed-bf16")
    states = {"weights", "gradients", "fp32 master weights", "optimizer states"}
    total = sum(c.bytes for c in model_state_components(arch, w.train) if c.name in states)
    assert total / arch.parameters * 7e9 / GB == pytest.approx(112.0)


def test_seed_13b_zero2_on_two_24gb_cards_does_not_fit():
    # Seed article claims ~20 GB per card; ZeRO-2 does not shard parameters, so each card holds
    # all 13.0B x 2 B = 26 GB of 16-bit weights: more than a 24 GB card.
    arch = catalog_arch("llama-2-13b")
    w = workload(arch, task="train", recipe="mixed-bf16", optimizer="adamw-8bit", gpus=2, zero=2, micro_batch=1,
                 seq_len=512)
    est = estimate(w)
    weights = next(c for c in est.components if c.name == "weights")
    assert weights.bytes == arch.parameters * 2
    assert est.per_gpu_total_bytes > 24 * GiB


# ----- weights in each format -------------------------------------------------------------------

def test_seed_7b_weight_sizes():
    # Seed article: 7B weights fp32 28 GB, fp16 14 GB, int8 7 GB, int4 3.5 GB (bytes per value x 7e9).
    arch = catalog_arch("llama-2-7b")
    P = arch.parameters
    per_param = {fmt: weight_bytes(arch, fmt).total / P for fmt in ("fp32", "fp16", "int8", "int4-awq", "nf4")}
    assert per_param["fp32"] * 7e9 / GB == 28.0
    assert per_param["fp16"] * 7e9 / GB == 14.0
    # Quantized formats add constants and keep embeddings/head in 16-bit (~3.9% of Llama-2-7B):
    assert 7.0 < per_param["int8"] * 7e9 / GB < 7.8
    assert 3.5 < per_param["int4-awq"] * 7e9 / GB < 4.2
    assert 3.5 < per_param["nf4"] * 7e9 / GB < 4.2


def test_nf4_constants():
    # QLoRA paper sec. 3: 32/64 = 0.5 bits/param; double quantization 8/64 + 32/(64*256) = 0.127.
    assert nf4_constant_bits(False) == 0.5
    assert round(nf4_constant_bits(True), 3) == 0.127


def test_gptq_group_constants():
    # int4 with group size 128: fp16 scale + 4-bit zero per group = 20 bits / 128 = 0.156 bits/param
    # (rule of thumb: "roughly 0.15-0.25 extra bits/param"), plus g_idx for GPTQ only.
    arch = catalog_arch("llama-2-7b")
    awq = weight_bytes(arch, "int4-awq", group_size=128)
    lin = arch.param_counts().linear
    assert awq.constants * 8 / lin == pytest.approx(20 / 128, rel=1e-3)
    gptq = weight_bytes(arch, "int4-gptq", group_size=128)
    assert gptq.constants > awq.constants


# ----- QLoRA ----------------------------------------------------------------------------------------

def test_qlora_65b_fits_in_48_gb():
    # QLoRA paper (Dettmers et al. 2023), abstract and sec. 4: a 65B model fine-tunes on one
    # 48 GB GPU (an RTX A6000: 48 GiB) with NF4 + double quantization, LoRA r=64 on all linear
    # layers, bf16 adapters (qlora.py casts LoRA layers to bf16), gradient checkpointing,
    # micro-batch 1. The 4-bit base alone is ~34 GB. With peft's default fp32 adapters the same
    # job needs ~6 GB more: 16 B instead of 8 B per adapter parameter (800M of them).
    arch = from_hf_config(LLAMA_65B)
    w = workload(arch, task="train", method="qlora", recipe="pure-bf16", lora_rank=64, lora_targets=["all-linear"],
                 micro_batch=1, seq_len=512, checkpointing="full", double_quant=True, adapter_dtype="bf16")
    est = estimate(w)
    assert 30 * GB < est.per_gpu_total_bytes < 48 * GiB
    fp32 = estimate(workload(arch, task="train", method="qlora", recipe="pure-bf16", lora_rank=64,
                             lora_targets=["all-linear"], micro_batch=1, seq_len=512, checkpointing="full"))
    assert fp32.per_gpu_total_bytes > est.per_gpu_total_bytes + 6 * GB


def test_seed_qlora_7b_on_12gb_card():
    # Seed article: QLoRA 7B, micro-batch 1, gradient checkpointing: ~4 GB base, ~9 GB peak on a 12 GB card.
    arch = catalog_arch("llama-2-7b")
    w = workload(arch, task="train", method="qlora", micro_batch=1, seq_len=1024, grad_accum=16, checkpointing="full")
    est = estimate(w)
    base = next(c for c in est.components if c.name.startswith("weights"))
    # NF4 6,476,005,376 x 0.5 B + 0.127 bits/param constants = 3.34 GB, plus 262,410,240
    # embedding/head/norm parameters: x 2 B = 3.86 GB ("~4 GB"); x 4 B after peft's
    # prepare_model_for_kbit_training = 4.39 GB.
    assert 3.5 * GB < base.bytes < 4.2 * GB
    assert est.per_gpu_total_bytes < 12 * GB
    prep = estimate(workload(arch, task="train", method="qlora", micro_batch=1, seq_len=1024, grad_accum=16,
                             checkpointing="full", prepare_kbit_training=True))
    prep_base = next(c for c in prep.components if c.name.startswith("weights"))
    assert 3.5 * GB < prep_base.bytes < 4.5 * GB
    assert prep.per_gpu_total_bytes < 12 * GB


def test_prepare_kbit_training_upcasts_unquantized_weights_and_activations():
    # peft prepare_model_for_kbit_training casts every non-NF4 16-bit parameter to fp32
    # (embeddings 32,000 x 4,096, head 32,000 x 4,096, 65 norms of 4,096 = 262,410,240 params):
    # +2 B each. The fp32 embedding output makes the residual stream fp32: the layer checkpoints
    # go from 2 B to 4 B per value (b*s x h x L = 1,024 x 4,096 x 32).
    arch = catalog_arch("llama-2-7b")
    kw = dict(task="train", method="qlora", micro_batch=1, seq_len=1024, checkpointing="full")
    prep = estimate(workload(arch, **kw, prepare_kbit_training=True))
    bare = estimate(workload(arch, **kw))

    def comp(est, prefix):
        return next(c.bytes for c in est.components if c.name.startswith(prefix))

    assert comp(prep, "weights") - comp(bare, "weights") == 262_410_240 * 2
    head = 4 * 4096 * 1024  # the final norm's fp32 input, 16,777,216 B either way
    assert comp(prep, "activations (layer checkpoints)") - head == 1024 * 4096 * 32 * 4
    assert comp(bare, "activations (layer checkpoints)") - head == 1024 * 4096 * 32 * 2


def test_lora_parameter_count():
    # LoRA r=16 on q_proj and v_proj of Llama-2-7B: 32 layers x 2 x 16 x (4096 + 4096) = 8,388,608.
    arch = catalog_arch("llama-2-7b")
    assert lora_parameters(arch, 16, ("q_proj", "v_proj")) == 8_388_608


def test_peft_benchmark_lora_trainable_parameters():
    # PEFT MetaMathQA benchmark (github.com/huggingface/peft method_comparison/MetaMathQA/results/
    # lora--llama-3.2-3B-rank32.json): Llama-3.2-3B, r=32 on q_proj+v_proj:
    # 9,175,040 trainable parameters = 28 layers x 32 x ((3072 + 3072) + (3072 + 1024)).
    arch = catalog_arch("llama-3.2-3b")
    assert lora_parameters(arch, 32, ("q_proj", "v_proj")) == 9_175_040


# ----- activations --------------------------------------------------------------------------------

def test_activation_per_token_llama_pure_bf16_sdpa():
    # Derived per saved tensor (activations.py) for a Llama layer in pure bf16 with SDPA, full FT:
    # two RMSNorms x (4h fp32 input + 4 rsqrt + 2h normalised + 2h output) = 16h + 8
    # SDPA q,k,v 2(q + 2k) + output 2q + lse 4a; o_proj input 2q; MLP 2f x 4 (gate, act, up, down input).
    arch = catalog_arch("llama-2-7b")
    h, q, k, f, a = 4096, 4096, 4096, 11008, 32
    per_token = 16 * h + 8 + 2 * (q + 2 * k) + 2 * q + 4 * a + 2 * q + 8 * f
    got, _ = activation_bytes(arch, regime_for("pure-bf16"), micro_batch=1, seq_len=1, attention="sdpa", full=True,
                              checkpointing="none")
    head = (4 * h + 2 * h + 2 * h)  # final norm fp32 input + normalised + output head input
    assert got == 32 * per_token + head


def test_activations_linear_in_seq_len_with_sdpa_and_superlinear_with_eager():
    # Seed: 512 -> 2048 quadruples activation memory; with scores stored (eager) it grows faster.
    arch = catalog_arch("llama-2-7b")
    reg = regime_for("pure-bf16")

    def act(s, attention):
        return activation_bytes(arch, reg, micro_batch=1, seq_len=s, attention=attention, full=True,
                                checkpointing="none")[0]

    assert act(2048, "sdpa") == 4 * act(512, "sdpa")
    assert act(2048, "eager") > 4 * act(512, "eager")


def test_checkpointing_keeps_layer_inputs_plus_one_layer():
    arch = catalog_arch("llama-2-7b")
    reg = regime_for("pure-bf16")
    kw = dict(micro_batch=2, seq_len=1024, attention="sdpa", full=True)
    none, _ = activation_bytes(arch, reg, checkpointing="none", **kw)
    full, _ = activation_bytes(arch, reg, checkpointing="full", **kw)
    tokens = 2 * 1024
    one_layer_and_head = (none - 0) // 32  # not exact (head), bound below
    assert full >= tokens * 2 * 4096 * 32
    assert full < none / 8
    assert one_layer_and_head > 0


def test_gradient_accumulation_changes_no_activation_memory():
    arch = catalog_arch("llama-2-7b")
    a = estimate(workload(arch, task="train", recipe="mixed-bf16", grad_accum=1))
    b = estimate(workload(arch, task="train", recipe="mixed-bf16", grad_accum=64))
    act = lambda e: next(c.bytes for c in e.components if c.name == "activations")  # noqa: E731
    assert act(a) == act(b)
    assert any("Gradient accumulation adds no activation memory" in n for n in b.notes)
    # but the gradients live through every micro-batch's forward and backward
    grads = lambda e: next(c for c in e.components if c.name == "gradients")  # noqa: E731
    assert grads(b).phase == "" and grads(b).bytes == grads(a).bytes


def test_the_gradient_accumulation_note_only_when_there_is_accumulation():
    # grad_accum 1 (the default) accumulates nothing, so the note would explain a setting the user did not
    # make; with 2 or more micro-batches per step it is said (with ZeRO-Offload, its host-buffer variant).
    from planner.memory.estimate import GRAD_ACCUM_NOTE, GRAD_ACCUM_OFFLOAD_NOTE

    arch = catalog_arch("llama-2-7b")
    one = estimate(workload(arch, task="train", recipe="mixed-bf16"))  # grad_accum defaults to 1
    assert GRAD_ACCUM_NOTE not in one.notes and GRAD_ACCUM_OFFLOAD_NOTE not in one.notes
    two = estimate(workload(arch, task="train", recipe="mixed-bf16", grad_accum=2))
    assert GRAD_ACCUM_NOTE in two.notes
    off = dict(task="train", recipe="mixed-bf16", gpus=2, zero=2, offload_optimizer=True)
    assert not any("accumulation" in n for n in estimate(workload(arch, **off)).notes)
    offloaded = estimate(workload(arch, grad_accum=2, **off)).notes
    assert GRAD_ACCUM_OFFLOAD_NOTE in offloaded and GRAD_ACCUM_NOTE not in offloaded


def test_logits_and_loss_dominate_at_large_vocabulary():
    # Llama-3.1-8B, V = 128,256: b*s*V x 12 B (fp32 log-softmax, its gradient, the logits gradient)
    # at micro-batch 4 x 4096 tokens = 25.2 GB.
    arch = catalog_arch("llama-3.1-8b")
    est = estimate(workload(arch, task="train", recipe="pure-bf16", micro_batch=4, seq_len=4096))
    logits = next(c.bytes for c in est.components if c.name == "logits and loss")
    assert logits == 4 * 4096 * 128_256 * 12


# ----- inference ----------------------------------------------------------------------------------

def test_inference_estimate_components():
    arch = catalog_arch("llama-2-7b")
    est = estimate(workload(arch, task="infer", weights="fp16", context=2048, concurrency=1))
    kv = next(c for c in est.components if c.name == "KV cache")
    weights = next(c for c in est.components if c.name.startswith("weights"))
    assert kv.bytes == 1_073_741_824
    assert weights.bytes == 6_738_415_616 * 2
    assert est.parameters == 6_738_415_616


def test_tensor_parallel_splits_weights_and_needs_divisible_heads():
    arch = catalog_arch("llama-2-70b")
    one = estimate(workload(arch, task="infer", weights="bf16", tp=1))
    four = estimate(workload(arch, task="infer", weights="bf16", tp=4))
    w1 = next(c.bytes for c in one.components if c.name.startswith("weights"))
    w4 = next(c.bytes for c in four.components if c.name.startswith("weights"))
    assert w4 < w1 / 3.9
    from planner.core.errors import ScenarioError
    with pytest.raises(ScenarioError) as info:
        workload(arch, task="infer", tp=3)
    assert str(info.value) == "tp: tp=3 does not divide the 64 attention heads. Use one of 1, 2, 4, 8, 16, 32, 64."


# ----- host -------------------------------------------------------------------------------------

def test_host_offload_holds_states_for_every_gpu_on_the_machine():
    # ZeRO-Offload: fp32 master (4P/N) + Adam moments (8P/N) + fp32 gradients (4P/N) per GPU, times
    # the GPUs of one machine = 16P per machine when every rank is on it.
    arch = catalog_arch("llama-2-7b")
    est = estimate(workload(arch, task="train", recipe="mixed-bf16", gpus=4, zero=2, offload_optimizer=True))
    offloaded = sum(c.bytes for c in est.components if c.where == "host" and c.name in
                    ("fp32 master weights", "optimizer states", "fp32 gradients for the CPU optimizer"))
    P = arch.parameters
    assert offloaded == pytest.approx(16 * P, rel=1e-6)
    assert est.offload
    lo, hi = est.ram_rule_bytes()
    assert lo == 6 * est.per_gpu_total_bytes * 4


def test_python_datasets_are_copied_per_worker():
    arch = catalog_arch("gpt2")
    shared = estimate(workload(arch, task="train", recipe="fp32", dataloader_workers=4, dataset_size="10 GiB"))
    copied = estimate(workload(arch, task="train", recipe="fp32", dataloader_workers=4, dataset_size="10 GiB",
                               dataset_format="python"))
    ds = lambda e: next(c.bytes for c in e.components if c.name == "dataset in RAM")  # noqa: E731
    assert ds(shared) == 10 * GiB
    # the training process's own copy plus one per worker: 1 x (1 + 4) x 10 GiB
    assert ds(copied) == 50 * GiB
    # without workers the process still holds the dataset
    alone = estimate(workload(arch, task="train", recipe="fp32", dataloader_workers=0, dataset_size="10 GiB",
                              dataset_format="python"))
    assert ds(alone) == 10 * GiB


def test_estimate_is_deterministic_and_replace_safe():
    arch = catalog_arch("mistral-7b-v0.1")
    w = workload(arch, task="train", recipe="pure-bf16")
    w2 = replace(w, train=replace(w.train, micro_batch=2))
    assert estimate(w).per_gpu_total_bytes < estimate(w2).per_gpu_total_bytes
    assert estimate(w) == estimate(w)


def test_allocator_headroom_leaves_out_the_weights():
    # Weights are allocated once in blocks of their own size (bert-large: 1,278 MiB of fp32
    # weights show as 1,288 MiB over the CUDA context, Transformers' training-anatomy docs), so the
    # 10 % fragmentation headroom applies to the rest of the peak allocated only.
    arch = catalog_arch("llama-2-7b")
    est = estimate(workload(arch, task="infer", weights="fp16", kv_dtype="fp16", context=2048))
    comps = {c.name: c.bytes for c in est.components if c.where == "gpu"}
    weights = comps["weights (fp16)"]
    assert weights == 6_738_415_616 * 2
    allocated = est.per_gpu_allocated_bytes
    assert comps["allocator headroom (fragmentation)"] == round(0.10 * (allocated - weights))


def test_lora_saved_inputs_copy_share_or_dropout():
    # peft: lora_A(dropout(x.to(adapter dtype))). Llama-2-7B layer, pure bf16, SDPA, r=8 on all
    # seven linears (h=4096, q=4096, f=11008):
    from planner.memory.layer import LayerOptions, layer_saved_tensors

    arch = catalog_arch("llama-2-7b")
    targets = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    h, q, f, r = 4096, 4096, 11008, 8

    def lora_bytes(**kw):
        saved = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(attention="sdpa", full=False, lora_targets=targets,
                                    lora_rank=r, **kw))
        return sum(t.bytes_per_token for t in saved if t.name.startswith("LoRA"))

    # fp32 adapters on bf16 activations: each module keeps its own fp32 copy of its input.
    assert lora_bytes(adapter_bytes=4) == 4 * (5 * h + q + f) + 7 * 4 * r
    # bf16 adapters: the cast is a no-op, so q/k/v share the norm output and gate/up share theirs
    # (counted once each), o_proj's input is SDPA's output (saved already), down_proj keeps the
    # MLP product.
    assert lora_bytes(adapter_bytes=2) == 2 * (h + h + f) + 7 * 2 * r
    # lora_dropout > 0: every module keeps its dropout output and CUDA's 1-byte bool mask.
    assert lora_bytes(adapter_bytes=2, lora_dropout=0.1) == (2 + 1) * (5 * h + q + f) + 7 * 2 * r
    # on the CPU the mask has the masked tensor's dtype (validation harness only).
    assert lora_bytes(adapter_bytes=2, lora_dropout=0.1, cpu_dropout=True) == (2 + 2) * (5 * h + q + f) + 7 * 2 * r


# ----- quantized checkpoints declared in config.json ----------------------------------------------

_LLAMA2_7B_CFG = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                  "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
                  "max_position_embeddings": 4096}


@pytest.mark.parametrize("qcfg, fmt, group", [
    # Transformers' AwqConfig / GPTQConfig serialisations: quant_method, bits, group_size
    ({"quant_method": "awq", "bits": 4, "group_size": 64, "version": "gemm"}, "int4-awq", 64),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False}, "int4-gptq", 128),
    # BitsAndBytesConfig: load_in_4bit with NF4; load_in_8bit (LLM.int8)
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "nf4", 128),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "int8", 128),
    ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8", 128),
])
def test_inference_sizes_the_checkpoint_its_config_declares(qcfg, fmt, group):
    arch = from_hf_config({**_LLAMA2_7B_CFG, "quantization_config": qcfg}, "cfg")
    w = workload(arch, task="infer")
    assert (w.infer.weights, w.infer.group_size) == (fmt, group)
    assert w.warnings == ()
    # stating another format is kept, and the contradiction is said
    w2 = workload(arch, task="infer", weights="bf16")
    assert w2.infer.weights == "bf16"
    assert len(w2.warnings) == 1 and "declares a quantized checkpoint" in w2.warnings[0]


def test_an_unsized_quantization_config_is_not_dropped_silently():
    arch = from_hf_config({**_LLAMA2_7B_CFG, "quantization_config": {"quant_method": "hqq", "nbits": 3}}, "cfg")
    w = workload(arch, task="infer")
    assert w.infer.weights == "bf16"
    assert w.warnings == ("the model's config.json declares a quantized checkpoint (quant_method hqq) of a format "
                          "the memory model does not size; the weights are sized as bf16 (choose with the workload key "
                          "weights:, or --weights on the command line)",)
    t = workload(arch, task="train", method="lora")
    assert any("training sizes the base model as method lora loads it" in x for x in t.warnings)


def test_zero_offload_on_one_gpu_is_not_warned_as_sharding_nothing():
    # ZeRO-Offload on a single GPU (Ren et al. 2021) needs a ZeRO stage: the stage shards nothing
    # there, but offloading is the point, so only the stage without offload is warned about.
    arch = catalog_arch("llama-2-7b")
    plain = workload(arch, task="train", zero=1)
    off = workload(arch, task="train", zero=1, offload_optimizer=True)
    assert any("ZeRO stage 1 on one data-parallel rank shards nothing" in w for w in plain.warnings)
    assert not any("shards nothing" in w for w in off.warnings)


def test_host_loading_peak_streams_onto_the_gpu_only_where_weights_go_straight_there():
    # Llama-2-7B: 6,738,415,616 params x 2 B = 13.48 GB of bf16 checkpoint (> one 5 GB shard).
    arch = catalog_arch("llama-2-7b")

    def load(w):
        return next(c.bytes for c in estimate(w).host_components() if c.name == "model loading peak")

    ckpt = arch.parameters * 2
    # full fine-tune: the Trainer gets a model loaded in host memory: the whole checkpoint
    assert load(workload(arch, task="train")) == ckpt
    # QLoRA: bitsandbytes quantizes while moving weights to the GPU (device_map): one shard at a time
    assert load(workload(arch, task="train", method="qlora")) == 5 * 10**9
    # inference (device_map / vLLM's loader), one process per tensor-parallel rank, each one shard
    assert load(workload(arch, task="infer", tp=2)) == 2 * 5 * 10**9
    # without low_cpu_mem_usage a random model is built first in the load dtype (the checkpoint's by
    # default), beside the whole checkpoint; torch_dtype float32 (older Transformers' default) is 4 B/param
    assert load(workload(arch, task="train", method="qlora", low_cpu_mem_usage=False)) == 2 * ckpt
    assert load(workload(arch, task="train", method="qlora", low_cpu_mem_usage=False,
                         torch_dtype="float32")) == ckpt + arch.parameters * 4


def test_gptq_without_grouping_has_one_scale_per_output_column():
    # GPTQ group_size -1: one fp16 scale and one packed 4-bit zero per output column. Llama-2-7B's
    # linear outputs per layer: q, k, v, o 4 x 4,096 + gate, up 2 x 11,008 + down 4,096 = 42,496;
    # x 32 layers = 1,359,872 columns.
    from planner.memory.quant import weight_bytes

    arch = catalog_arch("llama-2-7b")
    wb = weight_bytes(arch, "int4-gptq", group_size=-1)
    cols = 42_496 * 32
    g_idx = (4 * 4096 + 2 * 4096 + 11008) * 32 * 4  # in_features per layer x 4 B (act-order index)
    assert wb.constants == cols * 2 + -(-cols // 2) + g_idx
    w = workload(arch, task="infer", weights="int4-gptq", group_size=-1)
    assert w.infer.group_size == -1


# ----- ZeRO-Offload: gradients leave the GPU bucket by bucket ---------------------------------

def test_zero_offload_13b_on_one_gpu_keeps_only_the_bucket_of_gradients():
    # ZeRO-Offload (Ren et al. 2021, sec. 4; DeepSpeed stage_1_and_2.py with cpu_offload): during
    # backward each gradient is copied into the reduce ("ipg") bucket and, bucket by bucket, to the
    # host's fp32 partition; param.grad is then freed. The GPU keeps no 2 B/param gradient copy.
    # Llama-2-13B, ZeRO-2 + offload on one GPU, bf16, micro-batch 1, 512 tokens, full checkpointing:
    #   weights            13,015,864,320 x 2 B                          = 26,031,728,640 B (always)
    #   staging buffer     largest tensor, the embedding 32,000 x 5,120
    #                      = 163,840,000 elements x 2 B                  =    327,680,000 B (always)
    #   reduce bucket      reduce_bucket_size 500,000,000 x 2 B          =  1,000,000,000 B (backward)
    #   layer checkpoints  512 x 2 B x 5,120 x 40 + head 20,971,520      =    230,686,720 B
    #   logits and loss    512 x 32,000 x 12 B                           =    196,608,000 B (loss)
    # peak allocated (loss phase) = 27,786,703,360 B = 25.88 GiB; before the fix the GPU also held
    # 26,031,728,640 B of bf16 gradients (52.13 GiB per GPU in all).
    arch = catalog_arch("llama-2-13b")
    P = 13_015_864_320
    w = workload(arch, task="train", recipe="mixed-bf16", gpus=1, zero=2, offload_optimizer=True,
                 checkpointing="full", micro_batch=1, seq_len=512)
    est = estimate(w)
    gpu = {c.name: c for c in est.gpu_components()}
    assert "gradients" not in gpu
    assert gpu["weights"].bytes == P * 2 == 26_031_728_640
    assert gpu["gradient staging buffer (ZeRO-Offload)"].bytes == 32_000 * 5_120 * 2 == 327_680_000
    assert gpu["ZeRO reduce bucket"].bytes == 500_000_000 * 2
    assert gpu["ZeRO reduce bucket"].phase == "loss, recompute"
    assert gpu["activations (layer checkpoints)"].bytes == 512 * 2 * 5_120 * 40 + 20_971_520 == 230_686_720
    assert gpu["logits and loss"].bytes == 512 * 32_000 * 12 == 196_608_000
    assert est.per_gpu_allocated_bytes == 26_031_728_640 + 327_680_000 + 1_000_000_000 + 230_686_720 + 196_608_000
    # The paper trains 13B on one 32 GB V100: the need (with CUDA context, workspaces and allocator
    # headroom) is below a 32 GiB card's ~31.6 GiB CUDA total.
    assert est.per_gpu_total_bytes < 31 * GiB
    # The host holds fp32 master weights (4 B), Adam moments (8 B) and fp32 gradients (4 B) per param.
    host = {c.name: c.bytes for c in est.host_components()}
    assert host["fp32 gradients for the CPU optimizer"] == P * 4
    assert host["fp32 master weights"] == P * 4 and host["optimizer states"] == P * 8
    # gradient accumulation 1: no accumulation buffers anywhere
    assert not any("accumulation" in name for name in host)


def test_zero_offload_multi_gpu_and_zero3_keep_gradients_off_the_gpu():
    # Llama-2-7B (P = 6,738,415,616), 4 GPUs in one machine.
    arch = catalog_arch("llama-2-7b")
    P = arch.parameters
    # ZeRO-2 + offload, gradient accumulation 4: stage_1_and_2.py keeps accumulated_grads_in_cpu,
    # each partition parameter in the parameter dtype: ceil(P x 2 B / 4) per GPU process, x 4 processes.
    z2 = estimate(workload(arch, task="train", recipe="mixed-bf16", gpus=4, zero=2, offload_optimizer=True,
                           grad_accum=4))
    names = {c.name for c in z2.gpu_components()}
    assert "gradients" not in names and "ZeRO reduce bucket" in names
    host = {c.name: c.bytes for c in z2.host_components()}
    assert host["gradient accumulation buffers in host RAM (ZeRO-Offload)"] == -(-P * 2 // 4) * 4
    assert host["fp32 gradients for the CPU optimizer"] == -(-P * 4 // 4) * 4
    assert any("gradient accumulation buffers in host RAM" in n for n in z2.notes)
    # Without offload ZeRO-2 keeps its gradient partition on the GPU: ceil(P x 2 B / 4).
    plain = estimate(workload(arch, task="train", recipe="mixed-bf16", gpus=4, zero=2, grad_accum=4))
    assert next(c.bytes for c in plain.gpu_components() if c.name == "gradients") == -(-P * 2 // 4)
    # The offloaded run saves at least that partition plus the 12 B/param of fp32 states on each GPU
    # (the staging buffer, 32,000 x 4,096 x 2 B = 262,144,000 B, is what it adds).
    saved = plain.per_gpu_allocated_bytes - z2.per_gpu_allocated_bytes
    assert saved >= -(-P * 2 // 4) + -(-P * 12 // 4) - 32_000 * 4_096 * 2
    # ZeRO-3 + offload: stage3.py puts grad_partitions_flat_buffer (P/N in the model dtype) on the
    # offload device; the GPU keeps the bucket only.
    z3 = estimate(workload(arch, task="train", recipe="mixed-bf16", gpus=4, zero=3, offload_optimizer=True))
    names3 = {c.name for c in z3.gpu_components()}
    assert "gradients" not in names3 and "gradient staging buffer (ZeRO-Offload)" not in names3
    host3 = {c.name: c.bytes for c in z3.host_components()}
    assert host3["gradient partitions in host RAM (ZeRO-3 offload)"] == -(-P * 2 // 4) * 4


# ----- weight formulas under tensor parallelism --------------------------------------------------

def _weight_formula_value(text: str) -> int:
    """Evaluate a weights formula: top-level ' + ' terms of 'N ... x B B', 'N groups ... x (a B scale +
    b B zero)', 'g_idx N B' or 'N B of constants'."""
    import re

    text = text.split(": ", 1)[1] if text.startswith("per tensor-parallel rank") else text
    terms, depth, cur = [], 0, ""
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith(" + ", i):
            terms.append(cur)
            cur = ""
        elif not (depth == 0 and cur == "" and ch in " +"):
            cur += ch
    terms.append(cur)

    def num(s: str) -> float:
        return float(s.replace(",", ""))

    total = 0.0
    for t in terms:
        if m := re.match(r"([\d,]+) .*? x \(([\d.]+) B scale \+ ([\d.]+) B zero\)", t):
            total += num(m[1]) * (num(m[2]) + num(m[3]))
        elif m := re.match(r"g_idx ([\d,]+) B", t) or re.match(r"([\d,]+) B of constants", t):
            total += num(m[1])
        elif m := re.match(r"([\d,]+) [^x]*x ([\d.]+) B", t):
            total += num(m[1]) * num(m[2])
        else:
            raise AssertionError(f"unparsed term {t!r}")
    return int(total)


@pytest.mark.parametrize("weights", ["bf16", "fp32", "fp8", "int8", "int4-awq", "int4-gptq", "nf4"])
def test_tensor_parallel_weight_formula_reproduces_the_bytes(weights):
    # Llama-3.1-70B at t=2: the counts in the formula are already per rank (35,277,512,704 params
    # for bf16 = 70,553,706,496 / 2 plus the replicated norms), so 35,277,512,704 x 2 B is the value;
    # the text must not divide by t again.
    arch = catalog_arch("llama-3.1-70b")
    est = estimate(workload(arch, task="infer", weights=weights, tp=2))
    c = next(c for c in est.gpu_components() if c.name.startswith("weights"))
    assert "/ t=" not in c.formula
    assert "per tensor-parallel rank (t=2)" in c.formula
    assert _weight_formula_value(c.formula) == c.bytes
    if weights == "bf16":
        assert c.formula == "35,277,512,704 params per tensor-parallel rank (t=2) x 2 B (bf16)"
        assert c.bytes == 35_277_512_704 * 2


def test_weight_formula_without_tensor_parallelism_is_unchanged_in_kind():
    # t=1: no per-rank wording; the numbers still reproduce the value (Llama-2-7B fp16: 6,738,415,616 x 2 B).
    arch = catalog_arch("llama-2-7b")
    for weights in ("fp16", "fp8", "int4-gptq"):
        c = next(c for c in estimate(workload(arch, task="infer", weights=weights)).gpu_components()
                 if c.name.startswith("weights"))
        assert "tensor-parallel" not in c.formula
        assert _weight_formula_value(c.formula) == c.bytes


# ----- inference prefill ---------------------------------------------------------------------------

def test_hf_prefill_of_every_prompt_at_once_is_warned_about():
    # Llama-3.1-70B, t=8, 64 users x 8,192 tokens, engine hf, no chunking: one forward pass over
    # 524,288 tokens. Per token: residual 3 x 2 B x 8,192 = 49,152 B + MLP 3 x 2 B x 28,672/8 =
    # 21,504 B (larger than q/k/v 2 x 2 B x (8,192 + 2 x 1,024) / 8 = 5,120 B) = 70,656 B;
    # x 524,288 = 37,044,092,928 B = 34.50 GiB, over a quarter of the per-GPU need.
    arch = catalog_arch("llama-3.1-70b")
    # engine hf pinned: with concurrency above 1 and no engine, the reader sizes for vLLM (default_engine)
    est = estimate(workload(arch, task="infer", weights="bf16", context=8192, concurrency=64, tp=8, engine="hf"))
    act = next(c.bytes for c in est.gpu_components() if c.name == "prefill activations")
    assert act == 524_288 * 70_656 == 37_044_092_928
    assert act * 4 > est.per_gpu_total_bytes
    (warning,) = [w for w in est.warnings if w.startswith("prefill activations")]
    assert "524,288 tokens = 64 sequence(s) x 8,192" in warning
    assert "max_num_batched_tokens" in warning and "engine: vllm" in warning
    # 8,192 batched tokens: 128 per sequence x 64 = 8,192 tokens per pass; no warning.
    chunked = estimate(workload(arch, task="infer", weights="bf16", context=8192, concurrency=64, tp=8,
                                max_num_batched_tokens=8192, engine="hf"))
    assert not any(w.startswith("prefill activations") for w in chunked.warnings)


def test_hf_chunked_prefill_names_the_tokens_it_really_prefills():
    # max_num_batched_tokens 100 over 8 sequences: Transformers' prefill_chunk_size is per sequence,
    # 100 // 8 = 12, so a forward pass holds 12 x 8 = 96 tokens, not 100.
    arch = catalog_arch("llama-3.1-8b")
    est = estimate(workload(arch, task="infer", weights="bf16", context=4096, concurrency=8,
                            max_num_batched_tokens=100, engine="hf"))  # hf pinned (8 sequences default to vLLM)
    assert ("chunked prefill of 96 tokens per forward pass (Transformers: GenerationConfig(prefill_chunk_size=12) "
            "for 8 sequence(s))") in est.recipe_description
    act = next(c for c in est.gpu_components() if c.name == "prefill activations")
    assert act.formula.startswith("96 tokens x ")
    # 96 tokens x (3 x 2 B x 4,096 + max(MLP 3 x 2 B x 14,336, q/k/v)) = 96 x 110,592 B
    assert act.bytes == 96 * (3 * 2 * 4096 + 3 * 2 * 14336)


# ----- ZeRO-3 with offload_param on one GPU ------------------------------------------------------

def test_zero3_offload_params_fetches_parameters_onto_one_gpu_as_onto_many():
    # With offload_param the GPU owns no parameters: DeepSpeed's partitioned_param_coordinator fetches
    # each module's parameters (and the prefetch bucket) from the host partition into GPU memory, on
    # one GPU as on many. Llama-2-7B, bf16, ZeRO-3 + offload_param + offload_optimizer:
    #   largest layer  4 x 4,096^2 (attention) + 3 x 4,096 x 11,008 (MLP) + 2 x 4,096 (two RMSNorm
    #                  weights) = 67,108,864 + 135,266,304 + 8,192 = 202,383,360 params
    #   in flight      min(2 x 202,383,360 + 50,000,000 prefetch, 1e9 max live) = 454,766,720 params
    #                  x 2 B = 909,533,440 B (forward-backward), whatever the number of GPUs
    arch = catalog_arch("llama-2-7b")
    keys = dict(task="train", recipe="mixed-bf16", zero=3, offload_params=True, offload_optimizer=True)
    one = estimate(workload(arch, **keys, gpus=1))
    two = estimate(workload(arch, **keys, gpus=2))
    g1 = {c.name: c for c in one.gpu_components()}
    g2 = {c.name: c for c in two.gpu_components()}
    assert "weights" not in g1  # on the host
    assert g1["gathered parameters in flight (ZeRO-3)"].bytes == (2 * 202_383_360 + 50_000_000) * 2 == 909_533_440
    assert g2["gathered parameters in flight (ZeRO-3)"].bytes == 909_533_440
    # the same tensors on the GPU; two GPUs add only the NCCL buffers (256 MiB, planner.memory.overheads)
    assert one.per_gpu_allocated_bytes == two.per_gpu_allocated_bytes
    assert two.per_gpu_total_bytes - one.per_gpu_total_bytes == 256 * 2**20
    # without offload_param one GPU owns every parameter: nothing to gather
    own = estimate(workload(arch, task="train", zero=3, offload_optimizer=True, gpus=1))
    assert not any(c.name.startswith("gathered") for c in own.gpu_components())


# ----- ZeRO-Offload: DeepSpeed's host side for every recipe ---------------------------------------

@pytest.mark.parametrize("recipe, gpu_weight_bytes", [
    ("mixed-bf16", 2), ("mixed-bf16-fp32-grads", 2), ("fp32", 4), ("amp-bf16", 4), ("amp-fp16", 4)])
def test_zero_offload_host_keeps_an_fp32_partition_and_fp32_states_whatever_the_recipe(recipe, gpu_weight_bytes):
    # DeepSpeed stage_1_and_2.py: single_partition_of_fp32_groups = partition.to('cpu').clone().float()
    # (a separate fp32 copy even when the model is fp32), an fp32 gradient partition beside it, and the
    # CPU optimizer's states created from it. Llama-2-7B (P = 6,738,415,616), ZeRO-2 + offload, 1 GPU:
    #   fp32 parameters 4P + AdamW exp_avg, exp_avg_sq 2 x 4P + fp32 gradients 4P = 16P on the host.
    arch = catalog_arch("llama-2-7b")
    P = arch.parameters
    est = estimate(workload(arch, task="train", recipe=recipe, zero=2, offload_optimizer=True))
    host = {c.name: c.bytes for c in est.host_components()}
    assert host["fp32 master weights"] == 4 * P
    assert host["optimizer states"] == 2 * 4 * P
    assert host["fp32 gradients for the CPU optimizer"] == 4 * P
    assert next(c.bytes for c in est.gpu_components() if c.name == "weights") == gpu_weight_bytes * P


def test_zero_offload_refuses_a_pure_16_bit_full_fine_tune_and_sizes_lora_adapters_in_fp32():
    from planner.core.errors import ScenarioError

    arch = catalog_arch("llama-2-7b")
    with pytest.raises(ScenarioError) as err:
        workload(arch, task="train", recipe="pure-bf16", zero=2, offload_optimizer=True)
    assert str(err.value) == (
        "recipe: recipe pure-bf16 keeps no fp32 master copy, but ZeRO-Offload has no pure 16-bit mode: DeepSpeed's "
        "CPU optimizer updates an fp32 copy of the parameters with fp32 states. Use recipe: mixed-bf16 (what "
        "DeepSpeed runs with bf16 enabled: the same GPU side, fp32 master weights and states in host RAM), or leave "
        "offload_optimizer out.")
    # LoRA (recipe pure-bf16 sizes the frozen base) with bf16 adapters: DeepSpeed still keeps the
    # adapters' partition in fp32 with fp32 states. r=16 on q_proj, v_proj of Llama-3.1-8B:
    #   16 x ((4,096 + 4,096) + (4,096 + 1,024)) x 32 layers = 6,815,744 adapter params
    #   host: 4 B fp32 copy + 2 x 4 B AdamW states + 4 B fp32 gradients = 16 B each
    lora = estimate(workload(catalog_arch("llama-3.1-8b"), task="train", method="lora", zero=2,
                             offload_optimizer=True, adapter_dtype="bf16"))
    n = 16 * ((4_096 + 4_096) + (4_096 + 1_024)) * 32
    assert lora.trainable_parameters == n == 6_815_744
    host = {c.name: c.bytes for c in lora.host_components()}
    assert (host["fp32 master weights"], host["optimizer states"], host["fp32 gradients for the CPU optimizer"]) == (
        4 * n, 8 * n, 4 * n)


# ----- the ZeRO reduce bucket is what DeepSpeed allocates -------------------------------------------

def test_zero_reduce_bucket_is_reduce_bucket_size_elements_whatever_the_model():
    # DeepSpeed allocates torch.empty(int(reduce_bucket_size), dtype=self.dtype): stage_1_and_2.py in
    # every backward, stage3.py once in __init__, with contiguous_gradients on (its default). Default
    # reduce_bucket_size 5e8 elements; the dtype is the parameters' (self.dtype), not the gradients'.
    gpt2 = catalog_arch("gpt2")  # 124,439,808 params: the bucket is larger than its gradients
    assert gpt2.parameters == 124_439_808

    def bucket(arch, **keys):
        est = estimate(workload(arch, task="train", **keys))
        return next(c for c in est.gpu_components() if c.name == "ZeRO reduce bucket")

    z2 = bucket(gpt2, recipe="mixed-bf16", zero=2, gpus=2)
    assert z2.bytes == 500_000_000 * 2 and z2.phase == "forward-backward"  # allocated in backward
    # ZeRO-3 allocates it at start-up and keeps it
    z3 = bucket(gpt2, recipe="mixed-bf16", zero=3, gpus=2)
    assert z3.bytes == 500_000_000 * 2 and z3.phase == ""
    # fp32 gradient buffers do not change it: the bucket is in the 2 B parameter dtype
    assert bucket(gpt2, recipe="mixed-bf16-fp32-grads", zero=2, gpus=2).bytes == 500_000_000 * 2
    # an fp32 model's bucket is fp32
    assert bucket(gpt2, recipe="fp32", zero=1, gpus=2).bytes == 500_000_000 * 4
    # one GPU without offload: DeepSpeed still allocates it (ZeRO there shards nothing and costs the bucket)
    assert bucket(gpt2, recipe="mixed-bf16", zero=1).bytes == 500_000_000 * 2


def test_zero1_trades_ddp_buckets_for_the_reduce_bucket():
    # DDP's buckets are a second copy of the gradients (P x 2 B); ZeRO-1 drops them and shards the
    # 12 B/param of fp32 master weights and Adam states over N but adds the 5e8-element bucket (1e9 B).
    # Llama-2-7B on 8 GPUs: saves 6,738,415,616 x (2 + 12 x 7/8) B - 1e9 B, so ZeRO-1 needs far less.
    # GPT-2 (124,439,808 params) on 2 GPUs: saves 124,439,808 x (2 + 6) B = 995,518,464 B < 1e9 B of
    # bucket, so ZeRO-1 needs more there (allocated: 1e9 - 995,518,464 = 4,481,536 B more).
    big = catalog_arch("llama-2-7b")
    a0 = estimate(workload(big, task="train", gpus=8, zero=0)).per_gpu_allocated_bytes
    a1 = estimate(workload(big, task="train", gpus=8, zero=1)).per_gpu_allocated_bytes
    P = big.parameters
    assert a0 - a1 == P * 2 + (P * 12 - -(-P * 4 // 8) - -(-P * 8 // 8)) - 1_000_000_000
    small = catalog_arch("gpt2")
    s0 = estimate(workload(small, task="train", gpus=2, zero=0)).per_gpu_allocated_bytes
    s1 = estimate(workload(small, task="train", gpus=2, zero=1)).per_gpu_allocated_bytes
    assert s1 - s0 == 1_000_000_000 - 124_439_808 * (2 + 6) == 4_481_536


# ----- inference replicas: --gpus N / gpus: N ---------------------------------------------------------

def test_inference_replicas_count_every_replica_on_the_machine_in_host_ram():
    # gpus: 4, tp: 1 is four replicas of Llama-3.1-8B, one GPU process each (3 GiB of torch + CUDA,
    # planner.memory.host), each loading its checkpoint shard by shard (<= 5 GB at a time) onto its GPU.
    arch = catalog_arch("llama-3.1-8b")
    one = estimate(workload(arch, task="infer", context=8192, concurrency=8))
    four = estimate(workload(arch, task="infer", context=8192, concurrency=8, gpus=4, tp=1))
    assert four.per_gpu_total_bytes == one.per_gpu_total_bytes  # the need is per GPU of one replica
    host = {c.name: c.bytes for c in four.host_components()}
    assert host["framework per GPU process"] == 4 * 3 * GiB
    assert host["model loading peak"] == 4 * 5 * GB
    # host RAM: 4 GiB OS + 12 GiB of processes + the 20 GB loading peak
    assert four.host_total_bytes == 4 * GiB + 12 * GiB + 20 * GB
    # the rule of thumb is by the machine's VRAM: 2-4 x the per-GPU need x 4 GPUs
    assert four.ram_rule_bytes() == (2 * 4 * four.per_gpu_total_bytes, 4 * 4 * four.per_gpu_total_bytes)
    # 8 GPUs at tp 2 (4 replicas): a machine of 2, 4 or 8 GPUs holds 1, 2 or 4 of them
    for per_node in (2, 4, 8):
        w = workload(arch, task="infer", gpus=8, tp=2, gpus_per_node=per_node)
        est = estimate(w)
        assert w.infer.replicas == 4 and w.gpus == 8 and w.node_gpus == per_node
        assert next(c.bytes for c in est.host_components() if c.name == "framework per GPU process") == (
            per_node * 3 * GiB)
        # tp 2 ranks talk over NCCL within a replica; replicas do not
        assert any(c.name == "NCCL buffers" for c in est.gpu_components())
    solo = estimate(workload(arch, task="infer", gpus=4, tp=1))
    assert not any(c.name == "NCCL buffers" for c in solo.gpu_components())


def test_inference_gpus_per_node_holds_whole_replicas():
    from planner.core.errors import ScenarioError

    arch = catalog_arch("llama-3.1-8b")
    with pytest.raises(ScenarioError) as err:
        workload(arch, task="infer", gpus=4, tp=2, gpus_per_node=3)
    assert str(err.value) == ("gpus_per_node: 3 GPUs per machine do not hold whole replicas of tp 2. A replica runs "
                              "in one machine: give a multiple of 2 (2, 4, ...).")
    with pytest.raises(ScenarioError) as err:
        workload(arch, task="infer", gpus=4, tp=2, gpus_per_node=8)
    assert str(err.value) == ("gpus_per_node: gpus (4) is not a multiple of gpus_per_node (8). Every machine holds "
                              "the same number of replicas: give a divisor of gpus.")
    with pytest.raises(ScenarioError) as err:
        workload(arch, task="infer", gpus=6, tp=4)
    assert str(err.value) == ("gpus: 6 GPUs do not hold whole replicas of tp 4. An inference replica runs on tp: 4 "
                              "GPUs: give gpus: 4, 8, 12 or another multiple of 4, or leave it out for one replica.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_gpus_in_an_inference_workload_file_means_what_the_option_means():
    from click.testing import CliRunner

    from planner.cli.main import main
    from planner.core.errors import ScenarioError
    from planner.core.fields import Entry

    arch = catalog_arch("llama-3.1-8b")
    # gpus: N without tp is one replica at tp N, as --gpus N without --tp
    w = workload(arch, task="infer", gpus=2)
    assert (w.infer.tp, w.infer.replicas, w.gpus) == (2, 1, 2)
    w = workload(arch, task="infer", gpus=8, tp=2)
    assert (w.infer.tp, w.infer.replicas, w.gpus) == (2, 4, 8)
    with pytest.raises(ScenarioError) as err:
        workload(arch, task="infer", gpus=6)
    assert str(err.value) == ("gpus: an inference replica on 6 GPUs runs at tp 6: tp=6 does not divide the 32 "
                              "attention heads. Use one of 1, 2, 4, 8, 16, 32.")
    # a scenario's inference workload is one replica the solver counts: gpus stays refused there
    from planner.workload.spec import workload_from_entry

    entry = Entry({"model": "m", "task": "infer", "gpus": 2}, file="s.yaml", path="workloads[0]",
                  error=ScenarioError)
    with pytest.raises(ScenarioError) as err:
        workload_from_entry(entry, lambda name, e: (name, "test", arch))
    assert str(err.value) == ("s.yaml: workloads[0].gpus: 'gpus' is an option of task train, not infer. A scenario's "
                              "inference workload is one replica on tp GPUs, which the solver counts: set tp: N, or "
                              "task: train.")
    # the file key and the option give the same estimate
    import json
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "serve.yaml"
        f.write_text("model: llama-3.1-8b\ntask: infer\ngpus: 4\ntp: 2\ncontext: 8192\nconcurrency: 8\n")
        runner = CliRunner()
        by_file = json.loads(runner.invoke(main, ["estimate", "--workload", str(f), "--json"]).output)
        by_option = json.loads(runner.invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--gpus",
                                                    "4", "--tp", "2", "--context", "8192", "--concurrency", "8",
                                                    "--json"]).output)
        for key in ("per_gpu_total_bytes", "host_total_bytes", "gpus", "replicas", "gpus_total", "concurrency_total"):
            assert by_file[key] == by_option[key], key
        assert (by_file["gpus"], by_file["replicas"], by_file["gpus_total"]) == (2, 2, 4)
        # fit reads the file too; its target is still an option
        fit = runner.invoke(main, ["fit", "--workload", str(f), "--gpu", "l4", "--concurrency", "max", "--json"])
        assert fit.exit_code == 0, fit.output
        doc = json.loads(fit.output)
        assert (doc["gpus"], doc["tp"], doc["replicas"]) == (4, 2, 2)
        same = json.loads(runner.invoke(main, ["fit", "--model", "llama-3.1-8b", "--task", "infer", "--gpus", "4",
                                               "--tp", "2", "--context", "8192", "--gpu", "l4", "--concurrency", "max",
                                               "--json"]).output)
        assert doc["max_value"] == same["max_value"] and doc["need_bytes"] == same["need_bytes"]
        wrong = runner.invoke(main, ["fit", "--workload", str(f), "--gpu", "l4", "--micro-batch", "max"])
        assert wrong.exit_code == 2
    assert wrong.output == ("Error: --micro-batch: is an option of task train, not infer. Give --task train, or "
                            "another target for task infer.\n")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_hf_prefill_bound_below_the_concurrency_is_refused():
    # Transformers prefills every sequence of the batch in each pass, at least one token each
    # (GenerationConfig(prefill_chunk_size >= 1)): 16 tokens per pass cannot hold 32 sequences.
    from click.testing import CliRunner

    from planner.cli.main import main

    arch = catalog_arch("llama-3.1-8b")
    # engine hf pinned: 32 sequences and no engine would be sized for vLLM (default_engine)
    ok = workload(arch, task="infer", context=8192, concurrency=32, max_num_batched_tokens=32, engine="hf")
    assert ok.infer.max_num_batched_tokens == 32
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--context", "8192",
                                  "--concurrency", "32", "--max-num-batched-tokens", "16", "--engine", "hf"])
    assert r.exit_code == 2
    assert r.output == (
        "Error: --max-num-batched-tokens: 16 tokens per forward pass are fewer than the 32 sequences of the batch: "
        "Transformers prefills every sequence of the batch in each pass, at least one token each "
        "(prefill_chunk_size >= 1). Give --max-num-batched-tokens 32 or more, or --engine vllm (which schedules at "
        "most --max-num-batched-tokens tokens per step).\n")
    # fit searches the concurrency no higher than that bound (GPT-2 at 64 tokens would fit far more on an H100)
    import json

    args = ["fit", "--model", "gpt2", "--task", "infer", "--context", "64", "--gpu", "h100-sxm",
            "--max-num-batched-tokens", "16", "--concurrency", "max", "--engine", "hf"]
    f = CliRunner().invoke(main, [*args, "--json"])
    assert f.exit_code == 0, f.output
    doc = json.loads(f.output)
    assert (doc["max_value"], doc["limit"]) == (16, 16)
    assert doc["limited_by"] == ("max_num_batched_tokens (16): Transformers prefills at least one token of every "
                                 "sequence per pass")
    assert ("That is the limit searched (max_num_batched_tokens (16): Transformers prefills at least one token of "
            "every sequence per pass).") in CliRunner().invoke(main, args).output.splitlines()


# ----- mixture of experts and q/k norms ------------------------------------------------------------

TINY_QWEN3_MOE = {"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
                  "num_key_value_heads": 2, "intermediate_size": 160, "moe_intermediate_size": 48,
                  "vocab_size": 100, "num_experts": 4, "num_experts_per_tok": 2}


def test_moe_block_working_set_per_engine():
    arch = from_hf_config(TINY_QWEN3_MOE)
    # 10 tokens, k = 2: S = 20 routed rows, h = 64, f = 48, c = 2 B, 4 experts.
    # Router: 10 x 4 x (2 + 4) B logits and fp32 probabilities + 3 x 8 B x 20 int64 ids, sort order, inverse = 720.
    # Transformers (grouped): gathered 2 x 20 x 64 = 2,560 + max(4 x 2 x 20 x 48 = 7,680, 2 x 20 x (48 + 64) = 4,480,
    # 3 x 2 x 20 x 64 = 7,680) = 10,240; vLLM fused caches 2 x 20 x (3 x 48 + 64) = 8,320.
    hf, _ = moe_block_bytes(arch, tokens=10, compute_bytes=2)
    vllm, _ = moe_block_bytes(arch, tokens=10, compute_bytes=2, engine="vllm")
    assert (hf, vllm) == (10_240 + 720, 8_320 + 720)
    # Prefill: residual 3 x 2 x 64 x 10 = 3,840 plus the larger of the MoE block and q/k/v (SDPA):
    # 2 x (64 + 2 x 16) x 10 x 2 = 3,840 < 10,960.
    peak, text = prefill_peak_bytes(arch, tokens=10, sequences=1, keys=10, attention="sdpa")
    assert peak == 3_840 + 10_960
    assert "grouped experts" in text


def test_moe_layer_keeps_the_gathered_inputs_and_expert_outputs_when_training():
    # Full fine-tune in pure bf16: the up projection's saved input is the k-fold gathered copy (2 x 64 x 2 B per
    # token) and the routing-weight product keeps each expert's output row (2 x 64 x 2 B).
    arch = from_hf_config(TINY_QWEN3_MOE)
    saved = {t.name: t.bytes_per_token for t in layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(attention="sdpa", full=True))}
    assert saved["expert inputs: normalised tokens gathered k=2 times"] == 2 * 64 * 2
    assert saved["expert outputs kept for the routing-weight product (k=2)"] == 2 * 64 * 2
    # With a frozen base (LoRA on attention), no expert weight trains, so the gathered inputs are not kept; the
    # routing weights still need a gradient (the layer's input does), so the expert outputs are.
    lora = {t.name for t in layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(attention="sdpa", full=False,
                                                lora_targets=("q_proj", "v_proj"), lora_rank=8))}
    assert [n for n in lora if n.startswith("expert")] == ["expert outputs kept for the routing-weight product (k=2)"]


def test_qk_norm_saves_fp32_inputs_and_one_rsqrt_per_head():
    # Qwen3's q_norm / k_norm: fp32 copies of q (8 heads x 8 = 64 wide) and k (2 x 8 = 16), one fp32 rsqrt per head,
    # and (full fine-tune) the normalised outputs in the compute dtype.
    arch = from_hf_config(TINY_QWEN3_MOE)
    saved = {t.name: t.bytes_per_token for t in layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(attention="sdpa", full=True))}
    assert saved["query norm input (fp32)"] == 4 * 64 and saved["key norm input (fp32)"] == 4 * 16
    assert saved["query norm rsqrt (per head)"] == 4 * 8 and saved["key norm rsqrt (per head)"] == 4 * 2
    assert saved["query norm normalised (for the weight gradient)"] == 2 * 64
    llama = from_hf_config({**TINY_QWEN3_MOE, "model_type": "llama", "intermediate_size": 48})
    names = {t.name for t in layer_saved_tensors(llama, regime_for("pure-bf16"), LayerOptions(attention="sdpa", full=True))}
    assert not any("norm rsqrt (per head)" in n for n in names)


# ----- Gemma 2 softcapping, post-norms, masks and the sliding-window cache ---------------------------

TINY_GEMMA2 = {"model_type": "gemma2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
               "head_dim": 16, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100,
               "sliding_window": 8}


def test_gemma2_softcapping_keeps_tanh_outputs():
    from planner.memory.activations import logits_bytes_per_token

    arch = from_hf_config(TINY_GEMMA2)
    bf16 = regime_for("pure-bf16")
    saved = {t.name: t for t in layer_saved_tensors(arch, bf16, LayerOptions(attention="eager", full=True))}
    # tanh(scores / 50) keeps its output: 2 B x 4 heads per key, quadratic in the sequence.
    tanh = saved["score softcapping tanh output (2 B)"]
    assert (tanh.bytes_per_token, tanh.quadratic) == (2 * 4, True)
    # Four RMSNorms per layer: the post-attention and post-feedforward norms keep an fp32 input copy, the
    # rsqrt and (Gemma's (1 + w) product in fp32) an fp32 normalised output: 4 x 64 + 4 + 4 x 64 each.
    for label in ("post-attention norm", "post-feedforward norm"):
        assert saved[f"{label} input (fp32)"].bytes_per_token == 4 * 64
        assert saved[f"{label} normalised (for the weight gradient)"].bytes_per_token == 4 * 64
    # Logits: without the cap V x max(2 + 8, 12) = 1,200 B per token; the cap's tanh output adds V x 2 B.
    per, text = logits_bytes_per_token(arch, bf16)
    assert per == 100 * (12 + 2) and "softcapping" in text
    uncapped = from_hf_config({**TINY_GEMMA2, "final_logit_softcapping": None})
    assert logits_bytes_per_token(uncapped, bf16)[0] == 100 * 12


def test_eager_prefill_counts_every_sequence_and_its_masks():
    # Two sequences of 10 prompt tokens attending to 12 keys (context 12), 4 heads, bf16: scores
    # 2 x 10 x 12 = 240 per head; their working set 4 x 240 x (2 + 4 + 4) B = 9,600 B, beside q/k/v and their
    # rotated copies 2 x (64 + 2 x 32) x 20 x 2 B = 10,240 B: 19,840 B, more than the MLP's 3 x 2 x 96 x 20 =
    # 11,520 B. Gemma 2 has local and global layers: two additive masks of 240 x 2 B = 960 B, alive throughout.
    # Residual, normalised input and layer output: 3 x 2 x 64 x 20 = 7,680 B.
    arch = from_hf_config(TINY_GEMMA2)
    peak, _ = prefill_peak_bytes(arch, tokens=20, sequences=2, keys=12, attention="eager")
    assert peak == 7_680 + 960 + 19_840


def test_sdpa_prefill_keeps_a_boolean_mask_only_for_a_short_window():
    # The window (8) is shorter than the 12 keys: SDPA gets a 1-byte mask per score (240); with 6 keys no mask.
    arch = from_hf_config(TINY_GEMMA2)
    masked, _ = prefill_peak_bytes(arch, tokens=20, sequences=2, keys=12, attention="sdpa")
    plain, _ = prefill_peak_bytes(arch, tokens=20, sequences=2, keys=6, attention="sdpa")
    assert masked - plain == 240


def test_sliding_window_cache_holds_the_last_chunk_beyond_the_window():
    # Transformers keeps a view of the last window - 1 tokens of cat(past, new): after a prefill chunk of 100
    # tokens a window layer (window 8) holds min(400, 7 + 100) = 107 tokens; while decoding (chunk 1), 8.
    arch = from_hf_config(TINY_GEMMA2)
    per_layer_token = 2 * 2 * 16 * 2  # K and V, 2 KV heads of 16, bf16
    decode, _ = kv_cache_bytes(arch, kv_dtype="bf16", context=400, concurrency=1)
    prefill, _ = kv_cache_bytes(arch, kv_dtype="bf16", context=400, concurrency=1, chunk=100)
    # gemma2: layer 0 local, layer 1 global.
    assert decode == per_layer_token * (400 + 8)
    assert prefill == per_layer_token * (400 + 107)


# ----- GPT-OSS: MXFP4 experts, sinks, no SDPA ---------------------------------------------------------

def test_mxfp4_packs_only_the_experts():
    # gpt-oss-20b: experts 24 layers x 32 x (2880 x 5760 + 2880 x 2880) = 19,110,297,600 weights at 0.5 B plus one
    # E8M0 byte per 32 (597,196,800 B); the other 1,804,459,584 parameters (attention, router, biases, sinks,
    # norms, embedding, head) in bf16: 13,761,264,768 B = 12.82 GiB, the model card's 12.8 GiB.
    arch = from_hf_config({"model_type": "gpt_oss", "num_hidden_layers": 24, "num_local_experts": 32})
    wb = weight_bytes(arch, "mxfp4")
    assert (wb.packed, wb.constants, wb.unquantized) == (9_555_148_800, 597_196_800, 3_608_919_168)
    assert wb.total == 13_761_264_768
    with pytest.raises(ValueError):
        weight_bytes(from_hf_config({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
                                     "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 10}), "mxfp4")


def test_mxfp4_is_the_checkpoints_format_and_only_its(tmp_path):
    from planner.core.errors import ScenarioError

    oss = from_hf_config({"model_type": "gpt_oss", "num_hidden_layers": 2, "num_local_experts": 4,
                          "quantization_config": {"quant_method": "mxfp4"}})
    w = workload_from_mapping({"model": "oss", "task": "infer"}, lambda n, e: (n, "test", oss))
    assert w.infer.weights == "mxfp4"
    assert any("dequantizes them to bf16" in x for x in w.warnings)  # engine hf: Transformers' condition
    llama = from_hf_config({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
                            "intermediate_size": 96, "vocab_size": 10})
    with pytest.raises(ScenarioError) as info:
        workload_from_mapping({"model": "l", "task": "infer", "weights": "mxfp4"}, lambda n, e: (n, "test", llama))
    assert "mxfp4 weights need an MXFP4 checkpoint" in str(info.value)


@pytest.mark.parametrize("model_type", ["gemma2", "gpt_oss"])
def test_models_without_sdpa_default_to_eager_and_refuse_sdpa(model_type):
    from planner.core.errors import ScenarioError

    cfg = {"model_type": model_type, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "head_dim": 16, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100}
    if model_type == "gpt_oss":
        cfg.update(num_local_experts=4, num_experts_per_tok=2)
    arch = from_hf_config(cfg)
    w = workload_from_mapping({"model": "m", "task": "train"}, lambda n, e: (n, "test", arch))
    assert w.train.attention == "eager"
    assert any(x.startswith(f"Transformers has no SDPA attention for {model_type}") for x in w.warnings)
    flash = workload_from_mapping({"model": "m", "task": "train", "attention": "flash"}, lambda n, e: (n, "test", arch))
    assert not any("SDPA" in x for x in flash.warnings)
    with pytest.raises(ScenarioError) as info:
        workload_from_mapping({"model": "m", "task": "infer", "attention": "sdpa"}, lambda n, e: (n, "test", arch))
    msg = str(info.value)
    assert f"Transformers has no SDPA attention for {model_type}" in msg and "attention: eager" in msg


def test_lora_on_moe_adapts_attention_only():
    from planner.core.errors import ScenarioError

    arch = from_hf_config(TINY_QWEN3_MOE)
    w = workload_from_mapping({"model": "m", "task": "train", "method": "lora", "lora_targets": ["q_proj", "o_proj"]},
                              lambda n, e: (n, "test", arch))
    assert (w.train.lora_targets, w.train.attention) == (("q_proj", "o_proj"), "sdpa")
    for targets in (["all-linear"], ["q_proj", "gate_proj"], ["gate"]):
        with pytest.raises(ScenarioError) as info:
            workload_from_mapping({"model": "m", "task": "train", "method": "lora", "lora_targets": targets},
                                  lambda n, e: (n, "test", arch))
        msg = str(info.value)
        assert "is not modelled" in msg and "Target the attention projections: k_proj, o_proj, q_proj, v_proj." in msg


def test_weights_count_a_multimodal_vision_tower():
    # gemma3 with a small SigLIP tower: every parameter, the tower's included, is a bf16 weight (2 B each).
    cfg = {"model_type": "gemma3",
           "text_config": {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
                           "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 300, "sliding_window": 8},
           "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                             "num_attention_heads": 2, "image_size": 28, "patch_size": 7, "vision_use_head": False}}
    arch = from_hf_config(cfg)
    assert arch.vision_parameters > 0
    assert weight_bytes(arch, "bf16").total == 2 * arch.parameters


def test_vllm_mxfp4_adds_the_measured_expert_relayout():
    # 9.16 % of the MXFP4 experts' bytes (gpt-oss-120b on an H100: 65.97 GiB loaded for 60.77 GiB of weights).
    from planner.memory.estimate import VLLM_MXFP4_RELAYOUT_FRACTION

    oss = from_hf_config({"model_type": "gpt_oss", "num_hidden_layers": 2, "num_local_experts": 4,
                          "quantization_config": {"quant_method": "mxfp4"}})
    wb = weight_bytes(oss, "mxfp4")
    vllm = workload_from_mapping({"model": "oss", "task": "infer", "engine": "vllm"}, lambda n, e: (n, "test", oss))
    hf = workload_from_mapping({"model": "oss", "task": "infer"}, lambda n, e: (n, "test", oss))
    extra = [c for c in estimate(vllm).gpu_components() if c.name == "weights: vLLM MXFP4 expert re-layout"]
    assert [c.bytes for c in extra] == [round((wb.packed + wb.constants) * VLLM_MXFP4_RELAYOUT_FRACTION)]
    assert not [c for c in estimate(hf).gpu_components() if "re-layout" in c.name]


def test_qlora_on_moe_says_the_experts_stay_16_bit():
    arch = from_hf_config(TINY_QWEN3_MOE)
    w = workload_from_mapping({"model": "m", "task": "train", "method": "qlora",
                               "lora_targets": ["q_proj", "v_proj"]}, lambda n, e: (n, "test", arch))
    # experts 2 layers x 4 x 3 x 64 x 48 = 73,728 and routers 2 x 64 x 4 = 512 of the model's parameters
    assert any(x.startswith("QLoRA on qwen3_moe: bitsandbytes quantizes nn.Linear modules only")
               and f"(74,240 of {arch.parameters:,} parameters)" in x for x in w.warnings)


def test_vllm_gpt_oss_counts_the_memory_its_logs_show():
    # vllm#23278 / #27508: gpt-oss-120b on one H100 leaves 4.7-4.8 GiB less KV than the terms; 4.84 GiB is a term.
    from planner.memory.estimate import VLLM_GPT_OSS_UNEXPLAINED_BYTES

    oss = from_hf_config({"model_type": "gpt_oss", "num_hidden_layers": 2, "num_local_experts": 4,
                          "quantization_config": {"quant_method": "mxfp4"}})
    w = workload_from_mapping({"model": "oss", "task": "infer", "engine": "vllm"}, lambda n, e: (n, "test", oss))
    terms = [c for c in estimate(w).gpu_components() if c.name.startswith("vLLM start-up memory beyond")]
    assert [(c.bytes, c.kind) for c in terms] == [(VLLM_GPT_OSS_UNEXPLAINED_BYTES, "runtime")]
    assert VLLM_GPT_OSS_UNEXPLAINED_BYTES == int(4.84 * GiB)


def test_tensor_parallel_weights_keep_whole_kv_heads_position_table_and_row_biases():
    # StarCoder (GPTBigCode, one shared K/V head) at tp 8, as vLLM lays it out: the tied word
    # embedding 49,152 x 6,144 / 8 = 37,748,736; the position table 8,192 x 6,144 = 50,331,648
    # whole; per layer c_attn 6,144 x (6,144 / 8 + 2 x 128) = 6,291,456 + 1,024 bias, c_proj
    # (row-parallel) 768 x 6,144 = 4,718,592 + 6,144 bias whole, c_fc 6,144 x 3,072 = 18,874,368
    # + 3,072, c_proj 3,072 x 6,144 = 18,874,368 + 6,144, LayerNorms 24,576: 48,799,744 x 40;
    # ln_f 12,288. Total 2,040,082,432 per rank (15,517,456,384 / 8 would be 1,939,682,048).
    from planner.memory.quant import tp_linear_split

    starcoder = from_hf_config({"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48,
                                "n_inner": 24576, "vocab_size": 49152, "n_positions": 8192})
    assert weight_bytes(starcoder, "bf16", tp=8).total == 2_040_082_432 * 2
    assert weight_bytes(starcoder, "bf16", tp=1).total == 15_517_456_384 * 2
    # Llama-3.1-8B at tp 2 (8 KV heads, no biases): every linear splits evenly, as before.
    llama = catalog_arch("llama-3.1-8b")
    w, router, biases = tp_linear_split(llama, 2)
    assert (w, router, biases) == (llama.param_counts().linear // 2, 0, 0)


def test_transformers_tensor_parallel_needs_a_tp_plan():
    # GPT-2's and GPTBigCode's config classes declare no base_model_tp_plan (Transformers 5.24), so
    # tp_plan="auto" cannot shard them: engine hf at tp > 1 is refused; vLLM runs them tensor parallel.
    from planner.core.errors import InputError

    gpt2 = catalog_arch("gpt2")
    with pytest.raises(InputError) as e:
        workload(gpt2, task="infer", tp=2, context=512)
    assert "Transformers cannot run gpt2 tensor parallel (tp 2): its config declares no base_model_tp_plan" in str(e.value)
    assert "Use engine: vllm" in str(e.value)
    assert workload(gpt2, task="infer", tp=2, context=512, engine="vllm").infer.tp == 2
    assert workload(gpt2, task="infer", gpus=2, tp=1, context=512).infer.replicas == 2
    assert workload(catalog_arch("llama-3.1-8b"), task="infer", tp=2).infer.tp == 2
