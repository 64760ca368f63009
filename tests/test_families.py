"""Issue 17: DeepSeek (MLA + MoE), phi, Falcon, GPT-J, BLOOM, OLMo 2, Granite, StarCoder2, Cohere, Qwen2-MoE,
compressed-tensors checkpoints and any other architecture through Transformers on the meta device.

The parameter counts are held against ``sum(p.numel() for p in model.parameters())`` of the Transformers
5.24 model built on the meta device from the same config (tests marked ``torch`` skip without it); the KV
cache against the tensors Transformers' DynamicCache really allocates. Small hand-derived cases carry their
arithmetic beside them: h hidden, L layers, a heads, kv KV heads, d head_dim, f intermediate, V vocab.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from planner.core.errors import ModelConfigError
from planner.memory.inference import kv_bytes_per_token, kv_cache_bytes
from planner.memory.quant import weight_bytes
from planner.model.architecture import SUPPORTED_MODEL_TYPES, from_hf_config
from planner.model.quantization import weight_scheme
from tests.model_configs import TINY, VARIANTS
from tests.catalog_yaml import catalog_models

ROOT = Path(__file__).resolve().parents[1]
NEW_FAMILIES = {"deepseek_v2", "deepseek_v3", "phi", "falcon", "gptj", "bloom", "olmo2", "granite", "starcoder2",
                "cohere", "qwen2_moe"}


def _catalog() -> dict[str, dict]:
    return catalog_models()


def _meta_model(cfg: dict):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    from transformers import AutoConfig, AutoModelForCausalLM

    kwargs = {k: v for k, v in cfg.items() if k not in ("model_type", "auto_map", "architectures")}
    config = AutoConfig.for_model(cfg["model_type"], **kwargs)
    with torch.device("meta"):
        cls = AutoModelForCausalLM if cfg["model_type"] != "gemma3" else None
        if cls is None:
            from transformers import Gemma3ForConditionalGeneration

            return Gemma3ForConditionalGeneration(config)
        return cls.from_config(config)


def _real_linear_shapes(model) -> Counter:
    """(in, out) of every nn.Linear / Conv1D / 3-D expert tensor inside the decoder layers, by instances."""
    import torch

    layers = max((m for m in model.modules() if isinstance(m, torch.nn.ModuleList)),
                 key=lambda m: sum(p.numel() for p in m.parameters()))
    out: Counter = Counter()
    for layer in layers:
        seen = set()
        for _, mod in layer.named_modules():
            if isinstance(mod, torch.nn.Linear):
                out[(mod.in_features, mod.out_features)] += 1
                seen.add(id(mod.weight))
            elif type(mod).__name__ == "Conv1D":
                out[tuple(mod.weight.shape)] += 1
                seen.add(id(mod.weight))
        for name, p in layer.named_parameters():
            if id(p) not in seen and p.dim() == 3:
                out[(p.shape[2], p.shape[1])] += p.shape[0]
            elif id(p) not in seen and p.dim() == 2 and ("gate" in name or "router" in name):
                out[(p.shape[1], p.shape[0])] += 1  # a router kept as a parameter: (experts, hidden)
    return out


CASES = {**{f"tiny-{k}": v for k, v in TINY.items()}, **VARIANTS}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_parameter_count_equals_the_transformers_model_on_the_meta_device(name):
    cfg = CASES[name]
    model = _meta_model(cfg)
    arch = from_hf_config(cfg, name)
    assert arch.parameters == sum(p.numel() for p in model.parameters())
    if cfg["model_type"] not in ("gemma3", "gpt_oss"):  # gpt-oss stores its experts (experts, in, out)
        # the same linear shapes, layer by layer (MoE experts fused gate/up as Transformers 5 stores them)
        from planner.memory.states import _stored_modules

        planner = Counter()
        for m in _stored_modules(arch):
            planner[(m.in_features, m.out_features)] += m.count * m.layers
        assert planner == _real_linear_shapes(model)


def test_every_supported_model_type_has_a_tiny_config():
    assert set(TINY) == set(SUPPORTED_MODEL_TYPES)


@pytest.mark.torch
@pytest.mark.parametrize("model_id", sorted(i for i, e in _catalog().items()
                                            if e["config"]["model_type"] in NEW_FAMILIES))
def test_catalog_models_of_the_new_families_count_as_transformers_does(model_id):
    cfg = _catalog()[model_id]["config"]
    model = _meta_model(cfg)
    assert from_hf_config(cfg, model_id).parameters == sum(p.numel() for p in model.parameters())


# ----- hand-derived counts -----------------------------------------------------------------------

def test_deepseek_v3_tiny_count_by_hand():
    arch = from_hf_config(TINY["deepseek_v3"])
    # h=64, L=3 (1 dense, 2 MoE), a=4, q_lora 32, kv_lora 16, nope 8, rope 4, v 8, V=100.
    # attention per layer: q_a 64x32 + q_b 32x(4x12) + kv_a 64x(16+4) + kv_b 16x(4x(8+8)) + o (4x8)x64
    attn = 64 * 32 + 32 * 48 + 64 * 20 + 16 * 64 + 32 * 64  # = 2,048 + 1,536 + 1,280 + 1,024 + 2,048 = 7,936
    norms_layer = 2 * 64 + 32 + 16  # input and post-attention RMSNorm, q_a_layernorm, kv_a_layernorm
    dense_mlp = 3 * 64 * 96  # gate, up, down of intermediate_size 96
    moe = 8 * 64 + 8 * (2 * 16 * 64 + 64 * 16) + 3 * 64 * 16  # router, 8 experts (gate_up + down), shared expert
    # attn 7,936 and norms 176 in each of 3 layers; dense MLP 18,432; MoE 512 + 8 x 3,072 + 3,072 = 28,160 in 2
    total = 3 * (attn + norms_layer) + dense_mlp + 2 * moe + 64 + 2 * 100 * 64  # final norm, embedding, head
    assert total == 111_952
    assert arch.parameters == 111_952
    assert arch.dense_layers == 1 and arch.is_moe and arch.router_fp32 and arch.router_bias_buffer
    assert arch.buffer_bytes == 2 * 8 * 4  # e_score_correction_bias: 8 experts x fp32 in each of 2 MoE layers
    # 2 MoE layers x 8 experts x (gate_up 2 x 16 x 64 + down 64 x 16)
    assert arch.expert_parameters == 2 * 8 * 3 * 16 * 64
    assert arch.active_parameters == arch.parameters - arch.expert_parameters * 6 // 8  # 6 of 8 experts idle


def test_falcon_layouts_by_hand():
    old = from_hf_config(VARIANTS["falcon-7b-layout"])
    # h=64, a=4 -> d=16; multi-query: query_key_value 64 x (64 + 2 x 16), dense 64 x 64, MLP 64 x 256 x 2;
    # one LayerNorm (weight + bias) per layer, ln_f, tied head, V=100
    layer = 64 * 96 + 64 * 64 + 2 * 64 * 256 + 2 * 64  # = 6,144 + 4,096 + 32,768 + 128 = 43,136
    assert old.parameters == 2 * layer + 2 * 64 + 100 * 64 == 92_800
    assert old.num_key_value_heads == 1 and old.kv_values_per_token_layer("hf") == 2 * 16
    new = from_hf_config(TINY["falcon"])
    # a=8 -> d=8, kv=2: query_key_value 64 x (8 + 2 x 2) x 8 = 64 x 96; two LayerNorms (ln_attn, ln_mlp)
    layer = 64 * 96 + 64 * 64 + 2 * 64 * 256 + 2 * 2 * 64  # = 43,264
    assert new.parameters == 2 * layer + 2 * 64 + 100 * 64 == 93_056
    # Transformers caches K and V of all 8 heads (broadcast before the cache); vLLM the 2 KV heads
    assert (new.kv_values_per_token_layer("hf"), new.kv_values_per_token_layer("vllm")) == (2 * 8 * 8, 2 * 2 * 8)


def test_bloom_and_phi_by_hand():
    bloom = from_hf_config(TINY["bloom"])
    # h=64: query_key_value 64x192 + 192 bias, dense 64x64 + 64, MLP 64x256 + 256 and 256x64 + 64, two LayerNorms
    layer = 64 * 192 + 192 + 64 * 64 + 64 + 64 * 256 + 256 + 256 * 64 + 64 + 2 * 128
    # + embedding LayerNorm and ln_f (128 each) + the tied embedding 100 x 64
    assert bloom.parameters == 2 * layer + 2 * 128 + 100 * 64 == 106_624
    assert bloom.position_encoding == "ALiBi" and not bloom.sdpa_supported
    phi = from_hf_config(TINY["phi"])
    # q, k, v, dense 64x64 + 64 each; fc1 64x96 + 96, fc2 96x64 + 64; one LayerNorm; final LayerNorm;
    # untied head with a bias (100 x 64 + 100)
    layer = 4 * (64 * 64 + 64) + 64 * 96 + 96 + 96 * 64 + 64 + 128
    assert phi.parameters == 2 * layer + 128 + 100 * 64 + 100 * 64 + 100 == 71_460
    assert phi.rotary_dim == 8  # partial_rotary_factor 0.5 of head_dim 16


def test_deepseek_configs_the_model_cannot_load_are_refused():
    cfg = {**TINY["deepseek_v3"], "moe_layer_freq": 2}
    with pytest.raises(ModelConfigError) as info:
        from_hf_config(cfg, "config.json")
    msg = str(info.value)
    assert msg.startswith("config.json: moe_layer_freq: moe_layer_freq 2: Transformers builds a mixture-of-experts")
    cfg = {**TINY["deepseek_v3"], "num_key_value_heads": 2}
    with pytest.raises(ModelConfigError) as info:
        from_hf_config(cfg, "config.json")
    assert "num_key_value_heads (2) differs from num_attention_heads (4)" in str(info.value)


def test_falcon_rw_alibi_is_refused():
    with pytest.raises(ModelConfigError) as info:
        from_hf_config({**VARIANTS["falcon-7b-layout"], "alibi": True}, "config.json")
    msg = str(info.value)
    assert msg == ("config.json: alibi: alibi true (Falcon-RW's ALiBi attention) is not modelled. Falcon-7B, -40B "
                   "and -180B use rotary embeddings (alibi false).")


# ----- DeepSeek's KV cache and MTP module --------------------------------------------------------

def test_deepseek_v3_kv_cache_is_the_latent():
    arch = from_hf_config(_catalog()["deepseek-v3"]["config"], "deepseek-v3")
    # vLLM and SGLang cache kv_lora_rank 512 + qk_rope_head_dim 64 values per layer: 61 x 576 x 2 B in bf16
    assert kv_bytes_per_token(arch, "bf16", engine="vllm") == 61 * 576 * 2 == 70_272
    # whole on every tensor-parallel rank (one latent "head")
    assert kv_bytes_per_token(arch, "bf16", tp=8, engine="vllm") == 70_272
    # Transformers 5 caches the same latent (DeepseekV3Attention updates the cache before expand_kv)
    assert kv_bytes_per_token(arch, "bf16", engine="hf") == 70_272
    assert kv_bytes_per_token(arch, "fp8", engine="vllm") == 61 * 576


def test_deepseek_v3_mtp_module_is_counted_apart():
    arch = from_hf_config(_catalog()["deepseek-v3"]["config"], "deepseek-v3")
    assert arch.mtp_layers == 1
    h = 7168
    moe_layer = arch.layer_groups()[1][1].layer_parameters()
    assert arch.mtp_parameters == moe_layer + 3 * h + 2 * h * h  # enorm, hnorm, post norm; eh_proj 2h -> h
    # DeepSeek's README_WEIGHTS.md: "11.5B unique parameters" in the MTP module
    assert 11.5e9 <= arch.mtp_parameters < 11.7e9
    assert arch.mtp_checkpoint_copies == 2 * 129_280 * h  # the embedding and head copies in layers.61


@pytest.mark.torch
@pytest.mark.parametrize("name,dtype", [("tiny-deepseek_v3", "bf16"), ("tiny-deepseek_v2", "fp32"),
                                        ("tiny-falcon", "bf16"), ("falcon-7b-layout", "bf16"),
                                        ("tiny-bloom", "fp32"), ("tiny-qwen2_moe", "bf16"), ("tiny-olmo2", "bf16")])
def test_kv_cache_bytes_are_what_transformers_allocates(name, dtype):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from planner.validate.builders import build_model
    from planner.validate.runs import _cache_tensors
    from transformers import DynamicCache

    cfg = CASES[name]
    model = build_model(cfg, attention="eager", dtype=torch.bfloat16 if dtype == "bf16" else torch.float32).eval()
    cache = DynamicCache(config=model.config)
    batch, tokens = 2, 16
    with torch.no_grad():
        model(input_ids=torch.randint(0, 100, (batch, tokens)), cache=cache, use_cache=True)
    allocated = sum(t.untyped_storage().nbytes() for t in _cache_tensors(cache))
    arch = from_hf_config(cfg, name)
    predicted, _ = kv_cache_bytes(arch, kv_dtype=dtype, context=tokens, concurrency=batch, engine="hf")
    assert predicted == allocated


# ----- compressed-tensors and block-fp8 checkpoints ---------------------------------------------

def _ct(weights: dict, activations: dict | None, fmt: str, ignore=("lm_head",)) -> dict:
    return {"quant_method": "compressed-tensors", "format": fmt, "ignore": list(ignore),
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": activations}}}


#: neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8's quantization_config (static per-tensor FP8 W8A8).
FP8_TENSOR = _ct({"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": True, "dynamic": False},
                 {"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": True, "dynamic": False},
                 "float-quantized")
INT8_CHANNEL = _ct({"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True, "dynamic": False},
                   {"num_bits": 8, "type": "int", "strategy": "token", "symmetric": True, "dynamic": True},
                   "int-quantized")
W4A16_G128 = _ct({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True,
                  "dynamic": False}, None, "pack-quantized")


def _llama8b(q: dict | None = None):
    cfg = dict(_catalog()["llama-3.1-8b"]["config"])
    if q is not None:
        cfg["quantization_config"] = q
    return from_hf_config(cfg, "llama-3.1-8b")


def test_compressed_tensors_schemes_are_read():
    s, words = weight_scheme(FP8_TENSOR)
    assert (s.name, s.strategy, s.static_input_scale, s.activations) == ("FP8 W8A8", "tensor", True, "fp8")
    assert words == "quant_method compressed-tensors, format float-quantized, FP8 W8A8"
    s, _ = weight_scheme(INT8_CHANNEL)
    assert (s.name, s.strategy, s.static_input_scale, s.activations) == ("INT8 W8A8", "channel", False, "int8")
    s, _ = weight_scheme(W4A16_G128)
    assert (s.name, s.bits, s.group_size, s.packed, s.scale_bytes) == ("W4A16", 4, 128, True, 2)
    nvfp4 = _ct({"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}, None,
                "nvfp4-pack-quantized")
    s, words = weight_scheme(nvfp4)
    assert s is None and words.endswith("4-bit float weights, strategy tensor_group")


def test_fp8_w8a8_bytes():
    arch = _llama8b(FP8_TENSOR)
    wb = weight_bytes(arch, "compressed-tensors", scheme=weight_scheme(FP8_TENSOR)[0])
    # 32 layers x (4,096 x (4,096 + 2 x 1,024 + 4,096) + 3 x 4,096 x 14,336) = 6,979,321,856 fp8 values; 7 modules
    # x 32 layers, each with one fp32 weight scale and one fp32 static input scale; embedding and head (2 x
    # 128,256 x 4,096) and 65 RMSNorms of 4,096 stay bf16.
    linear = 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336)
    assert wb.packed == linear == 6_979_321_856
    assert wb.constants == 7 * 32 * (4 + 4)
    assert wb.unquantized == (2 * 128_256 * 4096 + 65 * 4096) * 2


def test_int8_w8a8_and_w4a16_bytes():
    arch = _llama8b(INT8_CHANNEL)
    wb = weight_bytes(arch, "compressed-tensors", scheme=weight_scheme(INT8_CHANNEL)[0])
    rows = 32 * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096)  # one fp32 scale per output row
    assert (wb.packed, wb.constants) == (6_979_321_856, rows * 4)
    wb = weight_bytes(arch, "compressed-tensors", scheme=weight_scheme(W4A16_G128)[0])
    # 4-bit values packed 8 per int32; a bf16 scale per 128 inputs of every row; a 2 x int64 weight_shape per module
    groups = 32 * (4096 // 128 * (4096 + 1024 + 1024 + 4096 + 14336 + 14336) + 14336 // 128 * 4096)
    assert wb.packed == 6_979_321_856 // 2
    assert wb.constants == groups * 2 + 7 * 32 * 16


def test_ignore_list_keeps_modules_16_bit():
    q = _ct({"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True},
            {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}, "float-quantized",
            ignore=("lm_head", "re:.*self_attn.*"))
    arch = _llama8b(q)
    wb = weight_bytes(arch, "compressed-tensors", scheme=weight_scheme(q)[0])
    attn = 32 * 4096 * (4096 + 2 * 1024 + 4096)
    assert wb.packed == 32 * 3 * 4096 * 14336  # only the MLP is fp8
    assert wb.unquantized == (2 * 128_256 * 4096 + 65 * 4096 + attn) * 2


def test_deepseek_v3_fp8_block_scales():
    arch = from_hf_config(_catalog()["deepseek-v3"]["config"], "deepseek-v3")
    scheme = weight_scheme(arch.extra["quantization_config"])[0]
    assert (scheme.strategy, scheme.block) == ("block", (128, 128))
    wb = weight_bytes(arch, "fp8", scheme=scheme, engine="vllm")
    blocks = 0
    for m in arch.linear_modules():
        if m.part != "router":
            blocks += -(-m.out_features // 128) * -(-m.in_features // 128) * m.count * m.layers
    assert wb.constants == blocks * 4  # one fp32 weight_scale_inv per 128 x 128 block
    pc = arch.param_counts()
    assert wb.packed == pc.linear  # every linear of the layers, experts included, in fp8
    # the router (58 MoE layers x 256 x 7,168) stays 16-bit in vLLM, fp32 in Transformers
    router = 58 * 256 * 7168
    hf = weight_bytes(arch, "fp8", scheme=scheme, engine="hf")
    assert hf.unquantized - wb.unquantized == router * 2


def test_compressed_tensors_workload_defaults_to_the_checkpoint():
    from planner.memory import estimate
    from planner.workload.spec import weights_feature_dtype, workload_from_mapping

    arch = _llama8b(FP8_TENSOR)
    w = workload_from_mapping({"model": "m", "task": "infer", "engine": "vllm"}, lambda n, e: (n, "test", arch))
    assert w.infer.weights == "compressed-tensors" and w.infer.scheme.name == "FP8 W8A8"
    assert weights_feature_dtype(w.infer) == "fp8"
    est = estimate(w)
    weights = next(c for c in est.gpu_components() if c.name == "weights (compressed-tensors)")
    assert weights.formula.startswith("compressed-tensors FP8 W8A8 (per-tensor scales)")
    # a checkpoint of a scheme the planner does not size: sized as the weights given, with a warning
    nv = _llama8b(_ct({"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}, None,
                      "nvfp4-pack-quantized"))
    w = workload_from_mapping({"model": "m", "task": "infer"}, lambda n, e: (n, "test", nv))
    assert w.infer.weights == "bf16"
    assert any("of a format the memory model does not size" in x for x in w.warnings)


def test_compressed_tensors_weights_need_such_a_checkpoint():
    from planner.core.errors import ScenarioError
    from planner.workload.spec import workload_from_mapping

    arch = _llama8b()
    with pytest.raises(ScenarioError) as info:
        workload_from_mapping({"model": "m", "task": "infer", "weights": "compressed-tensors"},
                              lambda n, e: (n, "test", arch))
    assert "compressed-tensors weights need a compressed-tensors checkpoint" in str(info.value)


# ----- any other architecture, through Transformers ---------------------------------------------

@pytest.mark.torch
def test_generic_architecture_counts_and_caches_exactly():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from planner.validate.builders import build_model
    from planner.validate.runs import _cache_tensors
    from transformers import DynamicCache

    cfg = {"model_type": "olmo", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100}
    arch = from_hf_config(cfg, "config.json")
    assert arch.generic and "olmo" not in SUPPORTED_MODEL_TYPES
    assert arch.parameters == sum(p.numel() for p in _meta_model(cfg).parameters())
    assert {m.name for m in arch.linear_modules()} >= {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj"}
    model = build_model(cfg, attention="sdpa", dtype=torch.bfloat16).eval()
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=torch.randint(0, 100, (2, 8)), cache=cache, use_cache=True)
    allocated = sum(t.untyped_storage().nbytes() for t in _cache_tensors(cache))
    assert kv_cache_bytes(arch, kv_dtype="bf16", context=8, concurrency=2)[0] == allocated


@pytest.mark.torch
def test_generic_estimate_says_it_is_generic():
    pytest.importorskip("transformers")
    from planner.memory import estimate
    from planner.workload.spec import workload_from_mapping

    cfg = {"model_type": "olmoe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 4, "intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
           "vocab_size": 100}
    arch = from_hf_config(cfg, "config.json")
    assert arch.is_moe and arch.num_local_experts == 4
    for keys in ({"task": "infer"}, {"task": "train", "method": "lora", "lora_targets": ["q_proj"]}):
        w = workload_from_mapping({"model": "m", **keys}, lambda n, e: (n, "test", arch))
        est = estimate(w)
        assert est.per_gpu_total_bytes > 0
        assert any(x.startswith("model_type olmoe is read through Transformers") and "not validated for olmoe" in x
                   for x in est.warnings)


@pytest.mark.torch
def test_state_space_layers_keep_no_kv_cache():
    pytest.importorskip("transformers")
    arch = from_hf_config({"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100,
                           "state_size": 8}, "config.json")
    assert arch.kv_cache_layers == 0
    assert kv_bytes_per_token(arch, "bf16") == 0
    assert "fixed-size recurrent state" in arch.extra["_kv_source"]


def test_without_the_hf_extra_the_error_names_it(monkeypatch):
    from planner.model import generic

    monkeypatch.setattr(generic, "hf_available", lambda: False)
    with pytest.raises(ModelConfigError) as info:
        from_hf_config({"model_type": "olmo"}, "config.json")
    assert str(info.value).endswith("when Transformers knows it (pip install 'planner[hf]').")


@pytest.mark.slow
@pytest.mark.torch
def test_generic_rule_stays_within_its_stated_uncertainty():
    # The generic reader applied to the measured grid runs of the families the planner reads itself
    # (full fine-tuning, LoRA and inference with AdamW), as if it knew none of them.
    import dataclasses
    import json
    import statistics

    pytest.importorskip("transformers")
    from planner.memory import estimate
    from planner.model.generic import (GENERIC_MEDIAN_ERROR, GENERIC_UNCERTAINTY, GENERIC_WORST_MATH_SDPA,
                                       from_hf_config_generic)
    from planner.validate.validation import workload_for_run

    doc = json.loads((ROOT / "tests" / "data" / "validation" / "measured_cpu.json").read_text())
    built, fused, math = {}, [], []
    for run in doc["runs"]:
        s = run["settings"]
        if (s.get("method") == "qlora" or s.get("load_in_8bit") or s.get("use_dora")
                or s.get("optimizer", "adamw") != "adamw" or run["config"]["model_type"] == "gemma3"):
            continue
        key = json.dumps(run["config"], sort_keys=True)
        if key not in built:
            built[key] = from_hf_config_generic(run["config"], run["id"])
        w = dataclasses.replace(workload_for_run(run), architecture=built[key])
        err = abs(estimate(w, device="cpu").per_gpu_allocated_bytes - run["peak_bytes"]) / run["peak_bytes"]
        (math if run.get("sdpa_backend") == "math" else fused).append(err)
    assert statistics.median(fused + math) <= GENERIC_MEDIAN_ERROR
    assert max(fused) <= GENERIC_UNCERTAINTY
    assert max(math) <= GENERIC_WORST_MATH_SDPA


def test_vllm_keeps_16_bit_copies_of_the_mla_up_projections():
    from planner.memory import estimate
    from planner.workload.spec import workload_from_mapping

    arch = from_hf_config(_catalog()["deepseek-v3"]["config"], "deepseek-v3")
    w = workload_from_mapping({"model": "m", "task": "infer", "engine": "vllm", "gpus": 8, "context": 4096},
                              lambda n, e: (n, "test", arch))
    est = estimate(w)
    comps = {c.name: c for c in est.gpu_components()}
    absorbed = comps["weights: vLLM MLA W_UK_T and W_UV (16-bit copies of kv_b_proj)"]
    # 61 layers x 128 / 8 heads x kv_lora_rank 512 x (qk_nope 128 + v_head_dim 128) x 2 B
    assert absorbed.bytes == 61 * 16 * 512 * 256 * 2 == 255_852_544
    # the KV cache is the latent, whole on each GPU: 61 x 576 x 2 B per token, 4,096 tokens
    assert comps["KV cache"].bytes == 70_272 * 4096
    assert any("multi-token-prediction" in n for n in est.notes)
    hf = estimate(workload_from_mapping({"model": "m", "task": "infer", "context": 4096},
                                        lambda n, e: (n, "test", arch)))
    assert "weights: vLLM MLA W_UK_T and W_UV (16-bit copies of kv_b_proj)" not in {c.name for c in hf.gpu_components()}
