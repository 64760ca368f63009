"""Frameworks and memory levers (issue 16): each lever's terms, derived by hand beside the expected value.

Sizes: B bytes, GiB 2**30. The small Llama below keeps the arithmetic readable:
h = 64 (hidden), 4 heads of 16 (q_dim 64), 2 KV heads (kv_dim 32), f = 128 (MLP), V = 1000, L = 2,
untied head. Parameters: embedding 64,000 + head 64,000 + per layer (q 4,096 + k 2,048 + v 2,048 +
o 4,096 + gate/up/down 3 x 8,192 + 2 norms x 64 = 36,992) x 2 + final norm 64 = 202,048.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner.cli.main import main as cli
from planner.core.errors import InputError
from planner.model.architecture import from_hf_config
from planner.memory import estimate
from planner.memory.compiled import compiled_layer_saved_tensors
from planner.memory.layer import LayerOptions, layer_saved_tensors
from planner.memory.saved import regime_for
from planner.memory.unsloth import unsloth_layer_saved_tensors
from planner.memory.loss import LossSpec, loss_bytes, loss_spec
from planner.workload.frameworks import bnb_keeps_4bit_inputs, defaults, parse_version
from planner.workload.spec import workload_from_mapping
from tests.catalog_yaml import catalog_model

TINY = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 4096,
        "tie_word_embeddings": False}


def arch_of(config=TINY):
    if isinstance(config, str):
        return from_hf_config(catalog_model(config)["config"], config)
    return from_hf_config(config, "tiny")


def workload(config=TINY, **keys):
    arch = arch_of(config)
    data = {"model": config if isinstance(config, str) else "tiny", "task": "train", **keys}
    return workload_from_mapping(data, lambda name, entry: (name, "test", arch))


def comp(est, name):
    found = [c for c in est.components if c.name == name]
    assert len(found) == 1, f"{name!r}: {[c.name for c in est.components]}"
    return found[0]


def names(est):
    return {c.name for c in est.components}


def test_tiny_parameter_count():
    assert arch_of().parameters == 202_048


# ----- framework defaults -----------------------------------------------------------------------

def test_torchtune_defaults_follow_its_configs():
    # recipes/configs/llama3_2/3B_full_single_device.yaml: PagedAdamW8bit, optimizer_in_bwd; the LoRA configs:
    # fused AdamW; every config: bf16, activation checkpointing, CEWithChunkedOutputLoss (8 chunks)
    full = workload(framework="torchtune", method="full").train
    assert (full.recipe, full.optimizer, full.optimizer_in_backward, full.checkpointing, full.loss_chunks) == (
        "pure-bf16", "paged-adamw-8bit", True, "full", 8)
    lora = workload(framework="torchtune", method="lora").train
    assert (lora.optimizer, lora.optimizer_in_backward, lora.adapter_dtype, lora.lora_dropout) == (
        "adamw-fused", False, "bf16", 0.0)
    dist = workload(framework="torchtune", method="full", gpus=8).train
    # full_finetune_distributed: FSDP2 FULL_SHARD, fused AdamW
    assert (dist.zero, dist.fsdp, dist.optimizer, dist.optimizer_in_backward) == (3, 2, "adamw-fused", False)


def test_litgpt_defaults_follow_its_scripts():
    # litgpt/finetune/lora.py: r 8, dropout 0.05, query and value; bf16-true; PagedAdamW over a quantized
    # base; no checkpointing on one GPU, FSDP1 with checkpointing of Block on several; 128-token head chunks
    t = workload(framework="litgpt", method="qlora", seq_len=512).train
    assert (t.lora_rank, t.lora_dropout, t.lora_targets, t.optimizer, t.adapter_dtype) == (
        8, 0.05, ("q_proj", "v_proj"), "paged-adamw", "bf16")
    assert (t.checkpointing, t.loss_chunks) == ("none", 512 // 128)
    d = workload(framework="litgpt", method="lora", gpus=4, seq_len=300).train
    assert (d.zero, d.fsdp, d.checkpointing, d.loss_chunks) == (3, 1, "full", 3)  # ceil(300 / 128) = 3


def test_unsloth_defaults_follow_get_peft_model():
    t = workload(framework="unsloth", method="lora").train
    assert (t.lora_rank, t.lora_dropout, t.offload_activations, t.checkpointing, t.optimizer) == (
        16, 0.0, True, "full", "adamw-8bit")
    assert set(t.lora_targets) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}


def test_every_lever_can_be_set_against_the_framework_default():
    t = workload(framework="torchtune", method="full", optimizer="adamw", optimizer_in_backward=False,
                 loss_chunks=0, checkpointing="none").train
    assert (t.optimizer, t.optimizer_in_backward, t.loss_chunks, t.checkpointing) == ("adamw", False, 0, "none")


def test_defaults_function_matches_the_reader():
    d = defaults("transformers", method="full", data_parallel=1, seq_len=2048)
    assert (d.recipe, d.optimizer, d.loss_chunks, d.zero) == ("mixed-bf16", "adamw", 0, 0)


def test_bnb_version_parsing():
    assert parse_version("0.42.0") == (0, 42, 0)
    assert parse_version("0.43") == (0, 43, 0)
    assert parse_version("0.43.2.dev0") == (0, 43, 2)
    assert parse_version("latest") is None
    assert bnb_keeps_4bit_inputs("0.43.1") and not bnb_keeps_4bit_inputs("0.43.2")


@pytest.mark.parametrize("keys, key, words", [
    ({"framework": "transformers", "fsdp_version": 2}, "fsdp_version", "does not shard with PyTorch FSDP"),
    ({"framework": "fsdp", "gpus": 2, "zero": 1}, "zero", "no stage that shards the optimizer states alone"),
    ({"framework": "fsdp", "gpus": 2, "zero": 0, "fsdp_version": 2}, "fsdp_version", "zero is 0"),
    ({"optimizer_in_backward": True, "grad_accum": 4}, "optimizer_in_backward", "no gradients to accumulate"),
    ({"optimizer_in_backward": True, "gpus": 2}, "optimizer_in_backward", "DDP all-reduces"),
    ({"optimizer_in_backward": True, "gpus": 2, "zero": 2}, "optimizer_in_backward", "not a DeepSpeed ZeRO mode"),
    ({"framework": "torchtune", "offload_activations": True, "checkpointing": "none"}, "offload_activations",
     "only with activation checkpointing"),
    ({"bnb_version": "0.42.0"}, "bnb_version", "nothing in this workload runs bitsandbytes"),
    ({"bnb_version": "new"}, "bnb_version", "not a bitsandbytes release number"),
    ({"loss_chunks": 5000, "seq_len": 4096}, "loss_chunks", "more than the 4,096 tokens"),
    ({"loss_chunks": 8, "fused_linear_loss": True}, "loss_chunks", "a different loss"),
    ({"framework": "litgpt", "method": "qlora", "gpus": 2}, "gpus", "Quantization is currently not supported"),
    ({"framework": "litgpt", "tp": 2, "gpus": 2}, "tp", "no tensor parallelism"),
    ({"framework": "fsdp", "gpus": 2, "offload_optimizer": True}, "offload_optimizer", "ZeRO-Offload"),
    ({"framework": "torchtune", "method": "lora", "load_in_8bit": True}, "load_in_8bit", "no LLM.int8 base"),
])
def test_contradictions_are_refused_at_their_key(keys, key, words):
    with pytest.raises(InputError) as info:
        workload(**{"method": "full", **keys})
    exc = info.value
    assert exc.entry == key
    assert words in exc.problem


def test_fsdp_version_on_one_gpu_is_kept_and_warned():
    # (torchtune refuses FSDP1: its recipes shard with fully_shard only)
    w = workload(framework="fsdp", method="full", fsdp_version=2)
    assert w.train.fsdp_version == 2 and w.train.fsdp == 0
    assert any("fsdp_version 2 shards nothing" in x for x in w.warnings)


# ----- the loss implementations ---------------------------------------------------------------

REG = regime_for("pure-bf16")


def test_chunked_loss_derivation():
    # torchtune CEWithChunkedOutputLoss, N = 8, c = 2: per token V x max(c + 4 + 4/8, 4 + 8/8) = V x 6.5 B
    # (loss end: bf16 logits 2 + every chunk's fp32 log-softmax 4 + one chunk's fp32 copy 0.5); 8 tokens:
    # 1000 x 6.5 x 8 = 52,000 B
    b, _, _ = loss_bytes(arch_of(), REG, LossSpec("chunked", 8), tokens=8)
    assert b == 52_000
    # whole (Transformers): V x max(2 + 8, 12) = 12 B per token: 96,000 B
    assert loss_bytes(arch_of(), REG, LossSpec("transformers", 1), tokens=8)[0] == 96_000


def test_litgpt_loss_derivation():
    # LoRA: head in 4 chunks, no upcast, logits held: V x 2c x (1 + 1/4) = 1000 x 5 = 5,000 B per token
    assert loss_bytes(arch_of(), REG, LossSpec("litgpt", 4), tokens=8)[0] == 40_000
    # full fine-tune: V x 3c = 6,000 B per token
    assert loss_bytes(arch_of(), REG, LossSpec("litgpt", 4), tokens=8, full=True)[0] == 48_000


def test_unsloth_cut_and_fused_linear_loss_derivations():
    # Unsloth's kernel: V x c + 8 = 2,008 B per token
    assert loss_bytes(arch_of(), REG, LossSpec("unsloth", 1), tokens=8)[0] == 8 * 2_008
    # cut cross-entropy: h x c + 8 = 136 B per token
    assert loss_bytes(arch_of(), REG, LossSpec("cut", 1), tokens=8)[0] == 8 * 136
    # Liger: chunk = next_pow2(ceil(T / ceil(V / h))) = next_pow2(ceil(64 / 16)) = 4 rows of V x c,
    # + T x h x c input gradient + T x 4 B loss: 4 x 1000 x 2 + 64 x 64 x 2 + 64 x 4 = 16,448
    assert loss_bytes(arch_of(), REG, LossSpec("fused-linear", 1), tokens=64)[0] == 16_448
    # a trainable head adds its weight gradient, made in the forward: + V x h x c = 128,000
    assert loss_bytes(arch_of(), REG, LossSpec("fused-linear", 1), tokens=64, full=True)[0] == 16_448 + 128_000


def test_compiled_loss_derivations():
    # compiled chunked: V x c x (1 + 1/8) + 8 B (fp32 row max and log-sum) per token = 2,250 + 8 = 2,258 B
    assert loss_bytes(arch_of(), REG, LossSpec("chunked", 8), tokens=8, compiled=True)[0] == 8 * 2_258
    # compiled torchtune whole (model upcasts outside the compiled layers): V x (8 + c) + 8 = 10,008 B
    assert loss_bytes(arch_of(), REG, LossSpec("model-upcast", 1), tokens=8, compiled=True)[0] == 8 * 10_008
    # compiled Transformers (the loss inside the compiled model): V x 2c + 8 = 4,008 B
    assert loss_bytes(arch_of(), REG, LossSpec("transformers", 1), tokens=8, compiled=True)[0] == 8 * 4_008


def test_loss_spec_choice():
    assert loss_spec(workload(framework="torchtune").train) == LossSpec("chunked", 8)
    assert loss_spec(workload(framework="torchtune", loss_chunks=0).train) == LossSpec("model-upcast", 1)
    assert loss_spec(workload(loss_chunks=4).train) == LossSpec("chunked", 4)  # Transformers with a chunked loss
    assert loss_spec(workload(fused_linear_loss=True).train) == LossSpec("fused-linear", 1)
    # Unsloth: its kernel up to 1,024 tokens per micro-batch, cut cross-entropy above
    assert loss_spec(workload(framework="unsloth", method="lora", seq_len=1024).train).impl == "unsloth"
    assert loss_spec(workload(framework="unsloth", method="lora", seq_len=1025).train).impl == "cut"


def test_chunked_loss_is_smaller_in_the_estimate():
    # llama-3.2-1b, 4,096 tokens: V = 128,256; whole 12 B, 8 chunks 6.5 B per token
    whole = comp(estimate(workload("llama-3.2-1b", seq_len=4096)), "logits and loss").bytes
    chunked = comp(estimate(workload("llama-3.2-1b", seq_len=4096, loss_chunks=8)), "logits and loss").bytes
    assert whole == 4096 * 128_256 * 12
    assert chunked == 4096 * 128_256 * 13 // 2


# ----- the layer implementations ----------------------------------------------------------------

def _per_token(saved):
    return sum(t.bytes_per_token for t in saved if not t.quadratic)


def test_torchtune_expands_kv_before_sdpa():
    # torchtune attention.py: k/v expanded to all 4 heads before SDPA: c x 3 x q_dim = 384 B, vs c x (q + 2k) = 256 B
    tt = layer_saved_tensors(arch_of(), REG, LayerOptions(attention="sdpa", full=True, code="torchtune"))
    hf = layer_saved_tensors(arch_of(), REG, LayerOptions(attention="sdpa", full=True))
    assert _per_token(tt) - _per_token(hf) == 384 - 256


def test_litgpt_layer_saved_set():
    # LitGPT LoRA on q and v of the fused attn, dropout 0.05, GQA (2 KV heads of 4): per token, c = 2:
    # norm 1: fp32 input 256 + rsqrt 4; dropout output 128 + mask 64; A output 2 x r(8) x 2 = 32;
    # zero_pad source (q 64 + v 32 widths) x 2 = 192; q and k at every head 2 x 2 x 64 = 256; v expanded 128;
    # SDPA output 128 + lse 16; norm 2: 256 + 4; MLP gate 256, act and up 512 -> 2,232
    saved = layer_saved_tensors(arch_of(), REG, LayerOptions(attention="sdpa", full=False, lora_targets=("q_proj", "v_proj"),
                                lora_rank=8, adapter_bytes=2, lora_dropout=0.05, code="litgpt"))
    assert _per_token(saved) == 2_232


def test_litgpt_keeps_the_fused_output_for_multi_head_attention():
    mha = {**TINY, "num_key_value_heads": 4}
    saved = layer_saved_tensors(arch_of(mha), REG, LayerOptions(attention="sdpa", full=False, code="litgpt"))
    fused = [t for t in saved if t.name.startswith("fused q/k/v output")]
    assert fused and fused[0].bytes_per_token == 2 * (64 + 2 * 64)  # the whole attn output, c x 3h


def test_litgpt_untied_head():
    # LitGPT copies a tied embedding into its own head: +V x h parameters, said in a note
    tied = {**TINY, "tie_word_embeddings": True}
    assert arch_of(tied).parameters == 202_048 - 64_000
    w = workload(tied, framework="litgpt", method="lora")
    assert w.head_untied and w.architecture.parameters == 202_048
    assert any("output head as a parameter of its own" in n for n in estimate(w).notes)


def test_compiled_layer_saved_set():
    # min-cut partition of a Llama layer (full fine-tune), c = 2: layer input 128 + 2 norms x (rstd 4 + output 128)
    # = 264 + q, k, v 2 x (64 + 2 x 32) = 256 + SDPA output 128 + lse 16 + o_proj output 128 + gate and up 512 +
    # down_proj input 256 = 1,688
    saved = compiled_layer_saved_tensors(arch_of(), REG, attention="sdpa", full=True)
    assert _per_token(saved) == 1_688
    # frozen base: no norm outputs, no down_proj input: 1,688 - 256 - 256 = 1,176
    assert _per_token(compiled_layer_saved_tensors(arch_of(), REG, attention="sdpa", full=False)) == 1_176


def test_unsloth_kernel_saved_set():
    # Fast_RMS_Layernorm x 2 (input 128 + 4 = 264), LoRA_QKV input 128, q and K/V expanded to all 4 heads for
    # xformers 3 x 64 x 2 = 384, SDPA out 128 + lse 16, LoRA_MLP input 128, gate and up 512: 1,560
    assert _per_token(unsloth_layer_saved_tensors(arch_of(), REG, lora_rank=16)) == 1_560


# ----- offloading, optimizer in backward, paged optimizers ----------------------------------------

def test_offloading_moves_the_checkpoints_to_host():
    base = dict(framework="torchtune", method="lora", seq_len=512, micro_batch=2)
    on = estimate(workload(**base, offload_activations=True))
    off = estimate(workload(**base))
    ckpt = comp(off, "activations (layer checkpoints)")
    host = comp(on, "offloaded activations (pinned host RAM)")
    # the layer inputs, 1,024 tokens x 2 B x h 64 x L 2 = 262,144 B, go to the host; the head stays
    head = comp(on, "activations kept on the GPU (head)").bytes
    assert host.bytes == 262_144 and ckpt.bytes == 262_144 + head
    # torchtune's forward stash keeps min(L, 5) = 2 checkpoints on the GPU; backward brings 2 back
    assert comp(on, "offloaded activations in flight (forward stash)").bytes == 2 * 1024 * 2 * 64
    assert comp(on, "offloaded activations brought back").bytes == 2 * 1024 * 2 * 64
    assert on.host_total_bytes > off.host_total_bytes


def test_save_on_cpu_without_checkpointing_keeps_one_layer():
    on = estimate(workload(method="lora", seq_len=512, offload_activations=True))
    off = estimate(workload(method="lora", seq_len=512))
    back = comp(on, "offloaded activations brought back")
    # brought back inside backward, once the loss's tensors are gone; the head's saved tensors stay on the GPU
    # only under torchtune (its output layer runs outside the offloading context)
    assert back.phase == "backward"
    assert "activations kept on the GPU (head)" not in names(on)
    assert comp(on, "offloaded activations (pinned host RAM)").bytes + back.bytes >= 0
    assert on.per_gpu_allocated_bytes < off.per_gpu_allocated_bytes


def test_optimizer_in_backward_keeps_one_gradient():
    # full fine-tune: no set of gradients, the largest tensor's (embedding/head 64,000 x 2 B) while it is stepped
    est = estimate(workload(framework="torchtune", method="full", optimizer="adamw", seq_len=256))
    g = comp(est, "gradient being stepped (optimizer in backward)")
    # stepped inside backward, after the loss's own tensors are freed (phase 'backward', which the
    # checkpoints and the recomputed layer share)
    assert g.bytes == 64_000 * 2 and g.phase == "backward"
    assert "backward" in comp(est, "activations (layer checkpoints)").phase.split(", ")
    assert "backward" in comp(est, "activations (layer being recomputed)").phase.split(", ")
    assert "gradients" not in names(est)
    # foreach AdamW steps one parameter at a time: its sqrt copy is one tensor's, inside backward
    temp = [c for c in est.components if c.name == "optimizer step temporaries"]
    assert temp[0].bytes == 64_000 * 2 and "optimizer step" not in temp[0].phase


def test_paged_optimizer_states_are_unified_memory_outside_the_total():
    # paged-adamw (32-bit): tensors of >= 1e5 values page their two fp32 states. llama-3.2-1b's embedding
    # (128,256 x 2,048) and linears are paged; its norms (2,048 values) are not: 2 x 4 B x the norm params.
    est = estimate(workload("llama-3.2-1b", method="full", recipe="pure-bf16", optimizer="paged-adamw", seq_len=256))
    paged = comp(est, "optimizer states (paged, CUDA unified memory)")
    alloc = comp(est, "optimizer states")
    pc = arch_of("llama-3.2-1b").param_counts()
    assert alloc.bytes == pc.norms * 2 * 4
    assert paged.bytes == (arch_of("llama-3.2-1b").parameters - pc.norms) * 2 * 4
    assert paged.kind == "unified"
    assert est.per_gpu_unified_bytes == paged.bytes
    gpu_total = sum(c.bytes for c in est.gpu_components_at_peak() if c.kind != "unified")
    assert est.per_gpu_total_bytes == gpu_total
    assert comp(est, "paged optimizer states evicted to host RAM (worst case)").bytes == paged.bytes
    assert any("CUDA unified memory" in n for n in est.notes)


def test_paged_8bit_keeps_absmax_allocated():
    # paged-adamw-8bit, a LoRA run on llama-3.2-1b with r 64 on q_proj: lora_A 64 x 2,048 = 131,072 values
    # (paged), lora_B 2,048 x 64 = 131,072 (paged); absmax: 4 x 2 / 256 B per value stays allocated
    est = estimate(workload("llama-3.2-1b", method="lora", lora_rank=64, lora_targets=["q_proj"],
                            optimizer="paged-adamw-8bit", seq_len=256))
    n = 16 * 2 * 131_072
    assert comp(est, "optimizer states (paged, CUDA unified memory)").bytes == 2 * n
    assert comp(est, "optimizer states").bytes == round(n * 8 / 256)


# ----- sharding: FSDP1 / FSDP2 / ZeRO-3 and the frozen base ----------------------------------------

def _stack(est):
    return dict(est.stack)


def test_lora_base_sharding_is_said():
    fsdp1 = estimate(workload(framework="litgpt", method="lora", gpus=4))
    fsdp2 = estimate(workload(framework="torchtune", method="lora", gpus=4))
    zero3 = estimate(workload(method="lora", gpus=4, zero=3))
    zero2 = estimate(workload(method="lora", gpus=4, zero=2))
    assert _stack(fsdp1)["frozen base"].startswith("16-bit, sharded by FSDP1 over 4 GPUs (its blocks mix")
    assert _stack(fsdp2)["frozen base"] == "16-bit, sharded by FSDP2 over 4 GPUs"
    assert _stack(zero3)["frozen base"] == "16-bit, sharded by DeepSpeed ZeRO-3 over 4 GPUs"
    assert _stack(zero2)["frozen base"].startswith("16-bit, whole on every GPU (ZeRO-2 shards only")


def test_fsdp1_mixed_blocks_give_the_whole_base_a_gradient():
    # LitGPT (FSDP1, whole blocks as units): every block's flat parameter gets a gradient: the layers'
    # 2 x 36,992 base params + the adapters, bf16, / 4 GPUs. FSDP2 (torchtune): the adapters' only.
    lit = estimate(workload(framework="litgpt", method="lora", lora_rank=8, gpus=4, seq_len=256))
    tt = estimate(workload(framework="torchtune", method="lora", lora_rank=8, gpus=4, seq_len=256,
                           lora_targets=["q_proj", "v_proj"], optimizer="adamw"))
    adapters = 2 * (8 * (64 + 64) + 8 * (64 + 32))  # q and v, 2 layers: 3,584
    assert comp(lit, "gradients").bytes == -(-(2 * 36_992 + adapters) * 2 // 4)
    assert comp(tt, "gradients").bytes == -(-adapters * 2 // 4)


def test_no_sync_accumulates_unsharded_gradients():
    # LitGPT with gradient accumulation: no_backward_sync -> the blocks' full flat gradients on every GPU
    est = estimate(workload(framework="litgpt", method="lora", lora_rank=8, gpus=4, grad_accum=4, seq_len=256))
    g = comp(est, "gradients (unsharded under no_sync)")
    assert g.bytes == (2 * 36_992 + 3_584) * 2 and g.phase == ""


def test_fsdp_shards_weights_and_gathers_two_layers_and_the_root():
    est = estimate(workload(framework="fsdp", method="full", recipe="pure-bf16", gpus=4, seq_len=256))
    assert comp(est, "weights").bytes == -(-202_048 * 2 // 4)
    # root: embedding 64,000 + head 64,000 + final norm 64; 2 layers x 36,992; bf16
    assert comp(est, "gathered parameters in flight (FSDP1)").bytes == (2 * 36_992 + 128_064) * 2
    assert "ZeRO reduce bucket" not in names(est)


def test_fsdp_cpu_offload_keeps_shards_in_host_ram():
    est = estimate(workload(framework="torchtune", method="full", gpus=4, offload_params=True, seq_len=256))
    assert comp(est, "weights").where == "host" and comp(est, "optimizer states").where == "host"


def test_qlora_zero3_offload_params_moves_the_nf4_weights_to_host():
    on = estimate(workload("llama-3.2-1b", method="qlora", gpus=2, zero=3, offload_params=True, seq_len=256))
    off = estimate(workload("llama-3.2-1b", method="qlora", gpus=2, zero=3, seq_len=256))
    w_on, w_off = comp(on, "weights (frozen NF4 base)"), comp(off, "weights (frozen NF4 base)")
    # the host holds both processes' partitions (1/2 each); the GPU gathers each module's NF4 storage for use
    assert w_on.where == "host" and w_off.where == "gpu" and w_on.bytes == 2 * w_off.bytes

    def run_phase(est):
        return sum(c.bytes for c in est.host_components() if c.phase == "run")

    assert run_phase(on) - run_phase(off) == w_on.bytes
    assert on.per_gpu_total_bytes < off.per_gpu_total_bytes


# ----- bitsandbytes version, compile ---------------------------------------------------------------

def test_bnb_before_0_43_2_keeps_the_4bit_inputs():
    # each 4-bit linear keeps its input: per layer the two norms' outputs (c x h, shared by q/k/v and gate/up)
    # and down_proj's input (c x f), on the ctx: 2 x 128 + 256 = 512 B per token; o_proj's input is SDPA's
    # output, saved already. In layer 0 the attention norm's output needs no gradient (frozen embedding, and
    # q_proj's adapter comes after it): 512 - 128 = 384. 256 tokens x (384 + 512) = 229,376 B.
    old = estimate(workload(method="qlora", seq_len=256, bnb_version="0.42.0"))
    new = estimate(workload(method="qlora", seq_len=256))
    diff = comp(old, "activations").bytes - comp(new, "activations").bytes
    assert diff == 256 * (384 + 512)
    assert "before 0.43.2" in _stack(old)["bitsandbytes"]


def test_compile_is_noted_and_lowers_the_activations():
    eager = estimate(workload(method="full", recipe="pure-bf16", seq_len=256))
    comp_ = estimate(workload(method="full", recipe="pure-bf16", seq_len=256, compile=True))
    assert comp(comp_, "activations").bytes < comp(eager, "activations").bytes
    assert any(n.startswith("torch.compile: AOTAutograd") for n in comp_.notes)
    moe = estimate(workload("qwen3-30b-a3b", method="lora", lora_targets=["q_proj", "v_proj"], seq_len=128,
                            compile=True))
    assert any("not modelled for a mixture of experts" in n for n in moe.notes)


# ----- every result names its stack ----------------------------------------------------------------

def test_stack_names_the_framework_and_every_lever():
    est = estimate(workload(framework="torchtune", method="lora", gpus=2))
    keys = [k for k, _ in est.stack]
    assert keys[:8] == ["framework", "framework release", "sharding", "loss", "activation checkpointing",
                        "activation offloading", "optimizer step", "optimizer"]
    assert "torch.compile" in keys and "frozen base" in keys
    assert _stack(est)["framework"].startswith("torchtune (")


def test_cli_json_and_text_name_the_stack():
    runner = CliRunner()
    res = runner.invoke(cli, ["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework", "torchtune",
                              "--method", "lora", "--loss-chunks", "4", "--offload-activations", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["stack"]["framework"].startswith("torchtune")
    assert data["stack"]["loss"].startswith("cross-entropy in 4 chunks")
    assert data["stack"]["activation offloading"] == "on"
    text = runner.invoke(cli, ["estimate", "--model", "llama-3.2-1b", "--task", "train", "--framework", "litgpt",
                               "--method", "qlora", "--bnb-version", "0.42.0"])
    assert text.exit_code == 0, text.output
    assert "Stack: framework: litgpt" in text.output
    assert "bitsandbytes: 0.42.0 (4-bit linears keep their inputs" in text.output


def test_cli_refuses_a_contradiction_with_exit_2():
    res = CliRunner().invoke(cli, ["estimate", "--model", "llama-3.2-1b", "--task", "train", "--optimizer-in-backward",
                                   "--grad-accum", "4"])
    assert res.exit_code == 2
    assert "--optimizer-in-backward" in res.output and "--grad-accum 1" in res.output


def test_scenario_lever_choices(tmp_path):
    from planner.catalog.loader import load_catalog
    from planner.solve.scenario import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("workloads:\n  - model: llama-3.2-1b\n    task: train\n    framework: torchtune\n"
                    "    method: full\n    optimizer: adamw-fused\n    offload_activations: auto\n"
                    "    loss_chunks: [0, 8]\n")
    sc = load_scenario(path, load_catalog())
    variants = sc.workloads[0].variants
    got = [(dict(v.choices)["offload_activations"], dict(v.choices)["loss_chunks"]) for v in variants]
    assert got == [(False, 0), (False, 8), (True, 0), (True, 8)]
    assert "offload activations" in variants[2].label() and "loss in 8 chunks" in variants[1].label()


def test_head_backward_moment_chunked_loss():
    # torchtune's chunked loss (8 chunks), full fine-tune, pure bf16, b*s = 256 tokens, V = 1000, h = 64:
    # every chunk's cross-entropy backward runs before the head's (autograd's ready queue takes the newest
    # node first), so the first head chunk's backward sees all logit gradients 256 x 1000 x 2 B = 512,000 B
    # and one weight gradient (64,000 x 2 B = 128,000); the later ones 7/8 of them (448,000 B) with the
    # running sum and the next contribution (2 x 128,000): 448,000 + 256,000 > 512,000 + 128,000.
    est = estimate(workload(framework="torchtune", method="full", seq_len=256, recipe="pure-bf16"))
    held = comp(est, "logits and loss at the head's backward")
    grad = comp(est, "head weight gradient forming")
    assert held.bytes == 448_000 and grad.bytes == 2 * 64_000 * 2
    assert held.phase == grad.phase == "head backward"
    assert "head backward" in comp(est, "activations (layer checkpoints)").phase.split(", ")
    assert "head backward" not in comp(est, "logits and loss").phase
    assert "head backward" not in comp(est, "activations (layer being recomputed)").phase


def test_head_backward_moment_unchunked_and_lora():
    # Transformers' loss: the fp32 gradient is cast back to bf16 before the head's backward: 256 x 1000 x 2 B
    # = 512,000 B with one weight gradient 128,000 B; LoRA trains no head, Liger made its gradient in the forward
    est = estimate(workload(method="full", seq_len=256, recipe="pure-bf16"))
    assert comp(est, "logits and loss at the head's backward").bytes == 512_000
    assert comp(est, "head weight gradient forming").bytes == 64_000 * 2
    for keys in ({"method": "lora"}, {"method": "full", "fused_linear_loss": True}):
        assert "head weight gradient forming" not in names(estimate(workload(seq_len=256, **keys)))


def test_head_backward_moment_sets_the_peak_when_logits_are_small():
    # With chunked logits (c(1 + 1/8) per token, compiled) the loss's own peak is below the head's moment:
    # 1000 x 256 x 2 x 9/8 = 576,000 + 8 x 256 = 578,048 B against 448,000 + 256,000 = 704,000 B, so the
    # allocated peak is the 'head backward' phase.
    est = estimate(workload(framework="torchtune", method="full", seq_len=256, recipe="pure-bf16", compile=True))
    assert comp(est, "logits and loss").bytes == 578_048
    from planner.memory.breakdown import phase_total
    total, phase = phase_total(list(est.components), "gpu", kinds=("allocated",))
    assert phase == "head backward"


# ----- LitGPT's LLaMA-Adapter (method adapter) -------------------------------------------------------------

TINY4 = {**TINY, "num_hidden_layers": 4, "num_key_value_heads": 4}


def test_adapter_parameters_match_litgpt_counts():
    # (L - 2) x (10 x h + heads): Llama 2 7B 30 x (40,960 + 32) = 1,229,760 and StableLM-3B-alpha
    # 14 x (40,960 + 32) = 573,888, as LitGPT's resource table prints; the gates alone 30 x 32 = 960
    from planner.memory.states import adapter_parameters

    assert adapter_parameters(arch_of("llama-2-7b")) == (1_229_760, 960)
    stablelm = from_hf_config({"model_type": "gpt_neox", "hidden_size": 4096, "intermediate_size": 16384,
                               "num_hidden_layers": 16, "num_attention_heads": 32, "vocab_size": 50688,
                               "max_position_embeddings": 4096, "rotary_pct": 0.25, "use_parallel_residual": True},
                              "stablelm")
    assert adapter_parameters(stablelm) == (573_888, 448)


def test_adapter_states_are_the_gates():
    # TINY4: 2 adapted layers x (10 x 64 + 4) = 1,288 params x 2 B (bf16-true) = 2,576 B; gradients and
    # AdamW states for the 2 x 4 = 8 gate values only (2 B each; states 2 x 2 B)
    est = estimate(workload(TINY4, framework="litgpt", method="adapter", seq_len=64))
    assert comp(est, "adapter weights (LLaMA-Adapter prefixes and gates)").bytes == 1_288 * 2
    assert comp(est, "gradients").bytes == 8 * 2
    assert comp(est, "optimizer states").bytes == 8 * 2 * 2
    assert est.trainable_parameters == 1_288


def test_adapter_layer_saved_tensors_by_hand():
    # TINY4 (h 64, 4 heads of 16, q 64, f 128, bf16, SDPA), LitGPT code:
    # first adapted layer: the gate's operand ay 64 x 2 = 128 B, then the frozen MLP half: MLP norm fp32 input
    # 256 + rsqrt 4, gate output 256, silu output and up output 2 x 256: 1,156 B per token; plus the cached
    # prefix keys and values 2 x 10 x 64 x 2 = 2,560 B per layer.
    # later layers: the frozen LitGPT layer (norm 256 + 4, rotated q and k 2 x 128, the fused qkv kept by V's
    # view 3 x 128, SDPA output 128 and lse 4 x 4, MLP 1,028) = 2,072 B, plus the adapter SDPA's output 128,
    # its lse 16 and the mask as a bf16 bias padded from 10 to 16 columns 32 B: 2,248 B per token.
    from planner.memory.litgpt_adapter import adapter_layer_saved_tensors
    from planner.memory.saved import regime_for

    a, r = arch_of(TINY4), regime_for("pure-bf16")
    first = adapter_layer_saved_tensors(a, r, attention="sdpa", first=True)
    later = adapter_layer_saved_tensors(a, r, attention="sdpa", first=False)
    assert sum(t.bytes_per_token for t in first if not t.per_layer) == 1_156
    assert sum(t.bytes_per_token for t in later if not t.per_layer) == 2_248
    assert [t.bytes_per_token for t in first + later if t.per_layer] == [2_560, 2_560]
    # the model: layers 0 and 1 save nothing; 256 tokens x (1,156 + 2,248) + 2 x 2,560 + the final norm's
    # fp32 input 256 x 256 (the head is frozen: its input is not kept)
    est = estimate(workload(TINY4, framework="litgpt", method="adapter", seq_len=256))
    assert comp(est, "activations").bytes == 256 * (1_156 + 2_248) + 2 * 2_560 + 256 * 256


def test_adapter_nf4_base_before_bnb_0_43_2_keeps_the_proj_input():
    # load_in_4bit (LitGPT --quantize bnb.nf4) with bitsandbytes 0.41.1: every 4-bit linear whose input requires
    # grad keeps it on its ctx. The first adapted layer's attention input needs none; its proj input (the sum
    # with the gated adapter output, 64 x 2 B) and the MLP inputs do
    from planner.memory.litgpt_adapter import adapter_layer_saved_tensors
    from planner.memory.saved import regime_for

    a, r = arch_of(TINY4), regime_for("pure-bf16")
    old = adapter_layer_saved_tensors(a, r, attention="sdpa", first=True, base_keeps_inputs=True)
    assert any(t.name.startswith("proj input") and t.ctx_bytes_per_token == 128 for t in old)
    w = workload(TINY4, framework="litgpt", method="adapter", load_in_4bit=True, bnb_version="0.41.1", seq_len=64)
    assert w.train.quantized_base == "nf4" and w.train.bnb_keeps_4bit_inputs
    assert w.train.optimizer == "paged-adamw"  # LitGPT's optimizer over a quantized base
    new = workload(TINY4, framework="litgpt", method="adapter", load_in_4bit=True, seq_len=64)
    assert estimate(w).per_gpu_allocated_bytes > estimate(new).per_gpu_allocated_bytes
    assert "weights (frozen NF4 base)" in names(estimate(new))


@pytest.mark.parametrize("keys, entry", [
    ({"framework": "transformers", "method": "adapter"}, "method"),
    ({"framework": "litgpt", "method": "adapter", "lora_rank": 8}, "lora_rank"),
    ({"framework": "litgpt", "method": "adapter", "lora_targets": ["q_proj"]}, "lora_targets"),
    ({"framework": "litgpt", "method": "adapter", "double_quant": False}, "double_quant"),
    ({"framework": "litgpt", "method": "adapter", "checkpointing": "full"}, "checkpointing"),
    ({"framework": "litgpt", "method": "adapter", "gpus": 2}, "gpus"),
    ({"framework": "litgpt", "method": "lora", "load_in_4bit": True}, "load_in_4bit"),
])
def test_adapter_refusals(keys, entry):
    with pytest.raises(InputError) as e:
        workload(TINY4, **keys)
    assert e.value.entry == entry


def test_adapter_needs_layers_past_the_start():
    with pytest.raises(InputError, match="adapter_start_layer"):
        workload(TINY, framework="litgpt", method="adapter")


# ----- default LoRA targets: one rule per framework (planner.workload.frameworks.default_lora_targets) -------

FALCON_7B = {"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
             "multi_query": True, "parallel_attn": True, "bias": False, "vocab_size": 65024,
             "new_decoder_architecture": False}
FALCON_40B = {"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128,
              "num_kv_heads": 8, "new_decoder_architecture": True, "parallel_attn": True, "bias": False,
              "vocab_size": 65024}
PHI_1_5 = {"model_type": "phi", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
           "num_attention_heads": 32, "partial_rotary_factor": 0.5, "vocab_size": 51200, "hidden_act": "gelu_new",
           "resid_pdrop": 0.1, "tie_word_embeddings": False}
BLOOM = {"model_type": "bloom", "hidden_size": 128, "n_layer": 2, "n_head": 4, "vocab_size": 4096}
GPTJ = {"model_type": "gptj", "n_embd": 128, "n_layer": 2, "n_head": 4, "rotary_dim": 16, "vocab_size": 4096}


@pytest.mark.parametrize("config, framework, expected", [
    # peft's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (src/peft/utils/constants.py, 00073fe)
    (FALCON_7B, "transformers", ["query_key_value"]),
    (BLOOM, "transformers", ["query_key_value"]),
    (PHI_1_5, "transformers", ["q_proj", "v_proj", "fc1", "fc2"]),
    (GPTJ, "deepspeed", ["q_proj", "v_proj"]),
    (TINY, "fsdp", ["q_proj", "v_proj"]),
    # LitGPT finetune/lora.py: lora_query and lora_value (LoRAQKVLinear on the fused attn)
    (FALCON_7B, "litgpt", ["query_key_value"]),
    (PHI_1_5, "litgpt", ["q_proj", "v_proj"]),
    # torchtune configs: lora_attn_modules [q_proj, v_proj, output_proj], apply_lora_to_mlp True
    (TINY, "torchtune", ["q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
    # Unsloth get_peft_model: q/k/v/o and the MLP
    (TINY, "unsloth", ["down_proj", "gate_proj", "k_proj", "o_proj", "q_proj", "up_proj", "v_proj"]),
])
def test_default_lora_targets_per_framework(config, framework, expected):
    w = workload(config, framework=framework, method="lora", seq_len=64)
    got = list(w.train.lora_targets)
    assert (sorted(got) if framework == "unsloth" else got) == expected


def test_peft_has_no_default_for_an_unmapped_model_type():
    # peft raises "Please specify `target_modules` in `peft_config`" for a model type outside its mapping
    with pytest.raises(InputError) as e:
        workload("deepseek-v3", method="lora", seq_len=64)
    message = str(e.value)
    assert "lora_targets" in message and "deepseek_v3" in message and "Please specify" in message
    assert "all-linear" not in message  # a mixture of experts' all-linear is refused (experts are not nn.Linear)


def test_measurement_harness_uses_the_same_default_rule():
    from planner.validate.runs import _default_lora_targets

    for config in (FALCON_7B, BLOOM, PHI_1_5, GPTJ, TINY):
        w = workload(config, method="lora", seq_len=64)
        assert _default_lora_targets(config) == list(w.train.lora_targets)


# ----- LitGPT's own model: LoRAQKVLinear parameters, no dropout, one-op GeLU ---------------------------------

@pytest.mark.parametrize("config, layers, expected", [
    # LitGPT tutorials/resource-tables.md 'Trainable parameters', r 8 on query and value:
    # Falcon-40B: A (2r, 8192) + B (8192 + 8 x 64, r) = 8 x (16,384 + 8,704) = 200,704 per layer x 60
    (FALCON_40B, 60, 12_042_240),
    # phi-1.5: 8 x (2 x 2048 + 2048 + 2048) = 65,536 per layer x 24
    (PHI_1_5, 24, 1_572_864),
])
def test_litgpt_lora_parameters_match_its_resource_tables(config, layers, expected):
    w = workload(config, framework="litgpt", method="lora", lora_rank=8, seq_len=64)
    assert w.train.lora_targets  # the default: query and value
    est = estimate(w)
    assert comp(est, "LoRA adapter weights").bytes == expected * 2  # bf16 adapters (bf16-true)


def test_litgpt_falcon_lora_count_differs_from_peft_on_the_fused_projection():
    # peft adapts query_key_value whole: r x (in + q + 2 kv) = 8 x (8192 + 8192 + 1024) per layer
    w = workload(FALCON_40B, method="lora", lora_rank=8, seq_len=64, recipe="pure-bf16", adapter_dtype="bf16")
    assert comp(estimate(w), "LoRA adapter weights").bytes == 8 * (8192 + 8192 + 1024) * 60 * 2


def test_litgpt_phi_layer_has_no_dropout_and_a_one_op_gelu():
    # Per token, LoRA r 8 on q and v (dropout 0.05), bf16, SDPA, h 2048, f 8192 (litgpt/model.py at 00af8b0d):
    # LayerNorm input 2h + mean/rstd 8, LoRA dropout output 2h + mask h, A output 2 x 8 x 2 = 32, zero_pad source
    # (q and v adapter outputs) 2 x 2h, q and k after RoPE/cat 2 x 2h, fused qkv kept by the value view 3 x 2h,
    # SDPA output 2h + lse 4 x 32 heads, GeLU input 2f: 2h x (1 + 1 + 2 + 2 + 3 + 1) + h + 8 + 32 + 128 + 2f.
    arch, h, f = arch_of(PHI_1_5), 2048, 8192
    kw = dict(attention="sdpa", full=False, lora_targets=("q_proj", "v_proj"), lora_rank=8, adapter_bytes=2,
              lora_dropout=0.05)
    lit = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(code="litgpt", **kw))
    assert sum(t.bytes_per_token for t in lit) == 2 * h * 10 + h + 8 + 32 + 128 + 2 * f
    assert not any("dropout mask (attention)" in t.name or "residual dropout" in t.name for t in lit)
    hf = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(code="transformers", **kw))
    # Transformers' phi: gelu_new keeps 4 tensors of f and resid_pdrop 0.1 keeps a 1-byte mask per sublayer
    assert any(t.name == "MLP gelu_new intermediates" and t.bytes_per_token == 4 * 2 * f for t in hf)
    assert any(t.name.startswith("residual dropout mask") for t in hf)


def test_litgpt_falcon_multi_query_takes_a_fused_kernel():
    # LitGPT expands K and V to every head before SDPA (flash takes them); Transformers' Falcon-7B passes one
    # K/V head without enable_gqa and takes the math path (fp32 q, k, v and probabilities)
    arch = arch_of(FALCON_7B)
    lit = layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(attention="sdpa", full=False,
                              lora_targets=("query_key_value",), lora_rank=8, code="litgpt"))
    assert not any("math path" in t.name or t.quadratic for t in lit)
    assert any(t.name == "value expanded to every head" and t.bytes_per_token == 2 * 4544 for t in lit)


# ----- combinations a framework refuses -----------------------------------------------------------------------

@pytest.mark.parametrize("keys, field, words", [
    ({"framework": "litgpt", "gpus": 2, "zero": 2}, "zero", "LitGPT"),
    ({"framework": "litgpt", "zero": 3}, "zero", "LitGPT"),
    ({"framework": "litgpt", "gpus": 2, "fsdp_version": 2}, "fsdp_version", "LitGPT"),
    ({"framework": "litgpt", "gpus": 2, "offload_params": True}, "offload_params", "LitGPT"),
    ({"framework": "litgpt", "offload_activations": True}, "offload_activations", "LitGPT"),
    ({"framework": "torchtune", "gpus": 2, "zero": 0}, "zero", "torchtune"),
    ({"framework": "torchtune", "gpus": 2, "fsdp_version": 1}, "fsdp_version", "torchtune"),
])
def test_framework_refuses_what_its_scripts_cannot_run(keys, field, words):
    with pytest.raises(InputError) as e:
        workload(method="lora", seq_len=64, **keys)
    message = str(e.value)
    assert message.startswith(f"{field}:") and words in message and "\n" not in message
    assert any(w in message for w in ("Use ", "Remove ", "Set "))  # a hint


def test_refusal_exits_2_with_one_line():
    result = CliRunner().invoke(cli, ["estimate", "--model", "llama-3.1-8b", "--task", "train", "--framework",
                                      "litgpt", "--method", "lora", "--gpus", "2", "--zero", "2"])
    assert result.exit_code == 2
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "LitGPT" in lines[0] and "--zero" in lines[0]


def test_unsloth_layer_backward_working_set():
    # Llama-3.1-8B-like layer, bf16: LoRA_MLP.backward's DW (f = 14,336) + dY and the recomputed output
    # (2 x h = 8,192), 2 B each; xformers keeps K and V expanded to all 32 heads (3 x q = 12,288 values)
    from planner.memory.unsloth import unsloth_backward_working_set

    cfg = {**TINY, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8}
    arch = arch_of(cfg)
    per, _ = unsloth_backward_working_set(arch, regime_for("pure-bf16"))
    assert per == 2 * (14336 + 2 * 4096)
    saved = unsloth_layer_saved_tensors(arch, regime_for("pure-bf16"), lora_rank=16)
    assert any(t.name.startswith("query, and key and value expanded") and t.bytes_per_token == 2 * 3 * 4096
               for t in saved)
