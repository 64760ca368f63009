"""Parameter counts from config.json (planner.model.architecture) and the model catalog's configs.

The catalog is read with yaml.safe_load directly, so these tests do not depend on the catalog
loader. Small cases carry their arithmetic beside them: h hidden, L layers, a heads, kv KV heads,
d head_dim, f intermediate, V vocab, E experts.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from planner.model.architecture import SUPPORTED_MODEL_TYPES, from_hf_config
from planner.core.errors import ModelConfigError
from tests.model_configs import TINY
from tests.catalog_yaml import catalog_doc

MODELS_YAML = Path(__file__).resolve().parents[1] / "catalog" / "models.yaml"


def _catalog() -> dict:
    return catalog_doc("models.yaml")


def _entries() -> list[dict]:
    return list(_catalog()["models"])


def _published() -> list[dict]:
    return [e for e in _entries() if "published_parameters" in e]


# ----- the catalog file itself ----------------------------------------------------------

def test_models_yaml_schema():
    doc = _catalog()
    assert doc["schema_version"] == 1
    ids = [e["id"] for e in doc["models"]]
    assert len(ids) == len(set(ids))
    for e in doc["models"]:
        assert set(e) >= {"id", "hf_id", "source", "as_of", "config"}, e["id"]
        assert set(e) <= {"id", "hf_id", "source", "as_of", "config", "published_parameters",
                          "parameters_source", "notes", "verification"}, e["id"]
        assert e["id"] == e["id"].lower() and all(c.isalnum() or c in "-." for c in e["id"])
        assert e["source"] == f"https://huggingface.co/{e['hf_id']}/blob/main/config.json"
        assert ("published_parameters" in e) == ("parameters_source" in e), e["id"]
        assert e.get("verification", "V") in {"V", "D", "K", "U"}


def test_models_yaml_has_the_required_models():
    ids = {e["id"] for e in _entries()}
    assert ids >= {
        "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
        "llama-3.2-1b", "llama-3.2-3b", "mistral-7b-v0.1", "mixtral-8x7b", "qwen2.5-0.5b", "qwen2.5-7b",
        "qwen2.5-72b", "qwen3-4b", "gemma-2-9b", "phi-3-mini", "gpt2", "pythia-1.4b",
        # issue 17
        "deepseek-v3", "deepseek-v2-lite", "deepseek-r1-distill-qwen-7b", "deepseek-r1-distill-qwen-32b",
        "deepseek-r1-distill-llama-70b", "phi-2", "falcon-7b", "falcon-40b", "gpt-j-6b", "bloom-7b1", "olmo-2-7b",
        "granite-3.1-8b", "starcoder2-15b", "command-r",
    }


def _walk(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)
    else:
        yield value


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["id"])
def test_config_values_keep_their_json_types(entry):
    # YAML 1.1 reads '1e-05' (no dot) as a string; config.json has a number there.
    for value in _walk(entry["config"]):
        if isinstance(value, str):
            with pytest.raises(ValueError):
                float(value)
    cfg = entry["config"]
    for key in ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "rope_theta", "initializer_range"):
        if key in cfg:
            assert isinstance(cfg[key], (int, float)) and not isinstance(cfg[key], bool), key
    assert cfg["model_type"] in SUPPORTED_MODEL_TYPES


# ----- published totals, reproduced exactly ---------------------------------------------

@pytest.mark.parametrize("entry", _published(), ids=lambda e: e["id"])
def test_catalog_parameter_count_equals_published(entry):
    arch = from_hf_config(entry["config"], entry["id"])
    assert arch.parameters == entry["published_parameters"]


def test_published_totals_cover_the_reference_set():
    # The published totals of the reference models, plus gpt2 and the PEFT benchmark's Llama-3.2-3B.
    expected = {
        "llama-2-7b": 6_738_415_616,
        "llama-2-13b": 13_015_864_320,
        "llama-2-70b": 68_976_648_192,
        "mistral-7b-v0.1": 7_241_732_096,
        "llama-3.1-8b": 8_030_261_248,
        "mixtral-8x7b": 46_702_792_704,
        "qwen2.5-7b": 7_615_616_512,
        "gpt2": 124_439_808,
        "llama-3.2-3b": 3_212_749_824,
        "phi-3-mini": 3_821_079_552,
    }
    published = {e["id"]: e["published_parameters"] for e in _published()}
    for model_id, total in expected.items():
        assert published[model_id] == total, model_id


def _catalog_arch(model_id):
    entry = next(e for e in _entries() if e["id"] == model_id)
    return from_hf_config(entry["config"], model_id)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_real_model_shapes():
    qwen3 = _catalog_arch("qwen3-4b")
    assert (qwen3.head_dim, qwen3.q_dim, qwen3.kv_dim) == (128, 32 * 128, 8 * 128)  # explicit head_dim, not 2560/32
    assert qwen3.qk_norm and qwen3.tie_word_embeddings
    assert _catalog_arch("llama-3.2-1b").param_counts().lm_head == 0  # tied
    assert _catalog_arch("llama-3.1-8b").param_counts().lm_head == 128256 * 4096
    gemma2 = _catalog_arch("gemma-2-9b")
    assert gemma2.norms_per_layer == 4 and gemma2.tie_word_embeddings  # Gemma2Config default
    assert (gemma2.sliding_window, gemma2.sliding_window_layers) == (4096, 21)  # even layers of 42
    assert _catalog_arch("qwen2.5-7b").sliding_window is None  # use_sliding_window false
    assert (_catalog_arch("mistral-7b-v0.1").sliding_window_layers) == 32
    gpt2 = _catalog_arch("gpt2")
    assert gpt2.intermediate_size == 3072 and gpt2.param_counts().position_embedding == 1024 * 768
    mixtral = _catalog_arch("mixtral-8x7b")
    assert mixtral.param_counts().router == 32 * 4096 * 8
    # 6 of 8 experts idle per token: 32 layers x 3 x 4096 x 14336 x 6
    assert mixtral.parameters - mixtral.active_parameters == 32 * 3 * 4096 * 14336 * 6


# ----- hand-derived small cases ---------------------------------------------------------

def _llama(**over):
    cfg = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
           "num_key_value_heads": 2, "intermediate_size": 160, "vocab_size": 100, "tie_word_embeddings": False}
    cfg.update(over)
    return cfg


def test_gqa_llama_counts():
    arch = from_hf_config(_llama())
    # d = 64/8 = 8; q 64x(8x8)=4096, k and v 64x(2x8)=1024 each, o 4096  -> 10,240 per layer
    assert (arch.head_dim, arch.q_dim, arch.kv_dim) == (8, 64, 16)
    pc = arch.param_counts()
    # MLP gate, up, down 3 x 64 x 160 = 30,720; per layer linear 10,240 + 30,720 = 40,960; x 2 layers
    assert pc.linear == 81_920
    # RMSNorm 64 each: 2 per layer x 2 layers + 1 final = 5 x 64
    assert pc.norms == 320
    assert pc.embedding == 6_400 and pc.lm_head == 6_400  # V x h = 100 x 64, untied
    assert pc.biases == 0 and pc.position_embedding == 0 and pc.router == 0
    assert arch.parameters == 95_040  # 81,920 + 320 + 6,400 + 6,400
    assert pc.not_quantized == 95_040 - 81_920


def test_tied_head_counts_the_embedding_once():
    untied = from_hf_config(_llama(tie_word_embeddings=False)).parameters
    tied = from_hf_config(_llama(tie_word_embeddings=True)).parameters
    assert untied - tied == 6_400  # one V x h matrix
    assert tied == 88_640


def test_num_key_value_heads_defaults_to_heads():
    cfg = _llama()
    del cfg["num_key_value_heads"]
    arch = from_hf_config(cfg)
    assert arch.num_key_value_heads == 8
    # q, k, v, o all 64x64 = 4 x 4096 = 16,384 per layer; + MLP 30,720 = 47,104; x 2 = 94,208
    assert arch.param_counts().linear == 94_208


def test_qwen2_has_qkv_biases_and_no_o_bias():
    arch = from_hf_config(_llama(model_type="qwen2"))
    pc = arch.param_counts()
    # q bias 64 + k bias 16 + v bias 16 = 96 per layer, x 2 layers
    assert pc.biases == 192
    assert arch.parameters == 95_040 + 192


def test_llama_attention_bias_adds_o_bias_too():
    pc = from_hf_config(_llama(attention_bias=True)).param_counts()
    assert pc.biases == (64 + 16 + 16 + 64) * 2  # q, k, v and o biases, 2 layers


def test_qwen3_explicit_head_dim_and_qk_norm():
    arch = from_hf_config(_llama(model_type="qwen3", head_dim=16, tie_word_embeddings=True))
    assert (arch.head_dim, arch.q_dim, arch.kv_dim) == (16, 128, 32)  # not 64/8 = 8
    pc = arch.param_counts()
    # q 64x128 = 8,192; k, v 64x32 = 2,048 each; o 128x64 = 8,192 -> 20,480; MLP 30,720 -> 51,200 x 2
    assert pc.linear == 102_400
    # RMSNorm 64: (2 x 2 + 1) x 64 = 320; q_norm and k_norm over head_dim: 2 x 16 x 2 layers = 64
    assert pc.norms == 384
    assert arch.parameters == 102_400 + 384 + 6_400  # tied: one V x h


def test_qwen3_attention_bias_covers_q_k_v_and_o():
    with_bias = from_hf_config(_llama(model_type="qwen3", head_dim=16, attention_bias=True)).param_counts()
    assert with_bias.biases == (128 + 32 + 32 + 64) * 2  # q, k, v (out widths) and o (h), 2 layers


def _gemma(model_type, **over):
    cfg = {"model_type": model_type, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 32, "intermediate_size": 128, "vocab_size": 100}
    cfg.update(over)
    return cfg


def test_gemma2_has_four_norms_per_layer():
    g1 = from_hf_config(_gemma("gemma"))
    g2 = from_hf_config(_gemma("gemma2"))
    # q 64x128 = 8,192; k, v 64x64 = 4,096 each; o 8,192 -> 24,576; MLP 3x64x128 = 24,576 -> 49,152 x 2
    assert g2.param_counts().linear == g1.param_counts().linear == 98_304
    assert g1.param_counts().norms == (2 * 2 + 1) * 64  # 320
    assert g2.param_counts().norms == (4 * 2 + 1) * 64  # 576
    assert g1.tie_word_embeddings and g2.tie_word_embeddings  # Gemma configs default to tied
    assert g2.parameters == 98_304 + 576 + 6_400
    assert g2.parameters - g1.parameters == 2 * 2 * 64  # two more norms in each of 2 layers


def test_gemma2_sliding_window_on_even_layers():
    arch = from_hf_config(_gemma("gemma2", num_hidden_layers=3, sliding_window=16))
    assert (arch.sliding_window, arch.sliding_window_layers) == (16, 2)  # layers 0 and 2


def test_mixtral_router_and_experts():
    cfg = _llama(model_type="mixtral", intermediate_size=96, num_local_experts=4, num_experts_per_tok=2)
    arch = from_hf_config(cfg)
    pc = arch.param_counts()
    # attention as the GQA case: 10,240 per layer; experts 4 x (w1, w2, w3) 3 x 64 x 96 = 73,728 per layer
    assert pc.linear == (10_240 + 73_728) * 2  # 167,936
    assert pc.router == 64 * 4 * 2  # gate Linear(h, E) without bias, 2 layers = 512
    assert pc.norms == 320
    assert arch.parameters == 167_936 + 512 + 320 + 6_400 + 6_400  # 181,568
    # 2 of 4 experts idle per token: 2 layers x 2 experts x 18,432
    assert arch.active_parameters == 181_568 - 73_728


def test_gpt2_learned_positions_and_layernorm_biases():
    cfg = {"model_type": "gpt2", "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 16, "vocab_size": 50}
    arch = from_hf_config(cfg)
    assert arch.intermediate_size == 128  # n_inner absent -> 4 x n_embd
    assert arch.tie_word_embeddings  # GPT-2 ties wte and lm_head
    pc = arch.param_counts()
    # c_attn 32x96, c_proj 32x32, c_fc 32x128, mlp c_proj 128x32 = 3,072 + 1,024 + 4,096 + 4,096 = 12,288 x 2
    assert pc.linear == 24_576
    assert pc.biases == (96 + 32 + 128 + 32) * 2  # 576
    assert pc.norms == (2 * 2 + 1) * 2 * 32  # LayerNorm weight and bias: 5 x 64 = 320
    assert pc.position_embedding == 16 * 32  # wpe 512
    assert pc.embedding == 50 * 32 and pc.lm_head == 0  # wte 1,600, tied head
    assert arch.parameters == 24_576 + 576 + 320 + 512 + 1_600  # 27,584


def test_gpt2_explicit_n_inner():
    cfg = {"model_type": "gpt2", "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 16, "vocab_size": 50,
           "n_inner": 64}
    pc = from_hf_config(cfg).param_counts()
    assert pc.linear == (3_072 + 1_024 + 32 * 64 + 64 * 32) * 2  # 16,384


def test_gpt_neox_untied_with_biases():
    cfg = {"model_type": "gpt_neox", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
           "intermediate_size": 128, "vocab_size": 50}
    arch = from_hf_config(cfg)
    # per layer: query_key_value 32x96+96, dense 32x32+32, h_to_4h 32x128+128, 4h_to_h 128x32+32, 2 LN x 64
    #          = 3,168 + 1,056 + 4,224 + 4,128 + 128 = 12,704; x 2 = 25,408; final LN 64; embed_in + embed_out 2 x 1,600
    assert arch.parameters == 25_408 + 64 + 3_200


def test_phi3_fused_projections_count_like_separate_ones():
    cfg = _llama(model_type="phi3")
    del cfg["num_key_value_heads"]
    arch = from_hf_config(cfg)
    names = [m.name for m in arch.linear_modules()]
    assert names == ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"]
    # qkv 64 x (64 + 2 x 64) = 12,288; o 4,096; gate_up 64 x 320 = 20,480; down 160 x 64 = 10,240 -> 47,104 x 2
    assert arch.param_counts().linear == 94_208


def test_float_sizes_are_refused_even_when_whole():
    # h14b minor e: Transformers reads 64.0 as a float, and nn.Linear(64.0, ...) raises TypeError: the config would
    # not load, so it is refused with the integer as the hint
    message = _error(_llama(hidden_size=64.0))
    assert "hidden_size must be a whole number written without a decimal point or exponent, not 64.0" in message
    assert message.endswith('Write the whole number: "hidden_size": 64.')


def test_unknown_keys_are_kept_in_extra():
    arch = from_hf_config(_llama(rope_theta=10000.0))
    assert arch.extra["rope_theta"] == 10000.0
    assert math.isclose(arch.extra["rope_theta"], 1e4)


# ----- config errors: the exact message -------------------------------------------------

SUPPORTED = ("bloom, cohere, deepseek_v2, deepseek_v3, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_bigcode, "
             "gpt_neox, gpt_oss, gptj, granite, llama, mistral, mixtral, olmo2, phi, phi3, qwen2, qwen2_moe, qwen3, "
             "qwen3_moe, starcoder2")
GENERIC = ("Any other architecture is read through Transformers, built on the meta device, when Transformers knows it "
           "(pip install 'planner[hf]').")


def _error(cfg, where="config.json") -> str:
    with pytest.raises(ModelConfigError) as info:
        from_hf_config(cfg, where)
    return str(info.value)


def _no_transformers(monkeypatch):
    """Size without the hf extra: the generic reader does not know any model_type."""
    from planner.model import generic

    monkeypatch.setattr(generic, "knows", lambda model_type: False)


def test_unsupported_model_type_lists_the_supported_ones(monkeypatch):
    _no_transformers(monkeypatch)
    msg = _error({"model_type": "rwkv", "hidden_size": 768})
    assert msg == (
        f"config.json: model_type: model_type 'rwkv' is not supported. Supported model_type values: {SUPPORTED}. "
        f"{GENERIC}"
    )


@pytest.mark.parametrize("model_type,kind,what", [
    ("bert", "an encoder", "bidirectional layers"),
    ("t5", "an encoder-decoder", "cross-attention, encoder activations and encoder-output cache"),
])
def test_encoders_and_encoder_decoders_are_refused(model_type, kind, what):
    # Whether or not Transformers is installed (it knows both): the planner sizes decoder-only models.
    msg = _error({"model_type": model_type, "hidden_size": 768})
    assert msg == (f"config.json: model_type: model_type {model_type!r} is {kind} model: the planner sizes "
                   f"decoder-only causal language models. Its {what} are not modelled. Supported model_type values: "
                   f"{SUPPORTED}.")


def test_is_encoder_decoder_config_is_refused():
    msg = _error({"model_type": "my_seq2seq", "is_encoder_decoder": True})
    assert "is an encoder-decoder model" in msg


def test_misspelled_model_type_gets_a_suggestion():
    # 'llamma' is known neither to the planner nor to Transformers.
    msg = _error(_llama(model_type="llamma"))
    assert msg == (
        "config.json: model_type: model_type 'llamma' is not supported. Did you mean 'llama'? "
        f"Supported model_type values: {SUPPORTED}. {GENERIC}"
    )


@pytest.mark.parametrize("model_type", ["llama4", "qwen3_next", "gemma3n", "olmoe"])
def test_another_architecture_gets_no_misleading_suggestion(model_type, monkeypatch):
    # Suggesting llama for llama4 or qwen3 for qwen3_next would size a different model.
    _no_transformers(monkeypatch)
    msg = _error({"model_type": model_type})
    assert msg == (f"config.json: model_type: model_type {model_type!r} is not supported. "
                   f"Supported model_type values: {SUPPORTED}. {GENERIC}")


def test_missing_model_type():
    msg = _error({"hidden_size": 64})
    assert msg == f"config.json: model_type: model_type missing. Supported model_type values: {SUPPORTED}."


def test_hidden_size_not_divisible_by_heads_without_head_dim():
    msg = _error(_llama(hidden_size=66))
    assert msg == (
        "config.json: hidden_size: hidden_size (66) is not divisible by num_attention_heads (8) and there is no "
        "head_dim. Add the model's head_dim to the config."
    )


def test_explicit_head_dim_allows_any_hidden_size():
    assert from_hf_config(_llama(hidden_size=66, head_dim=8)).q_dim == 64


def test_kv_heads_that_do_not_divide_heads():
    msg = _error(_llama(num_key_value_heads=3))
    assert msg == (
        "config.json: num_key_value_heads: num_key_value_heads (3) must divide num_attention_heads (8). "
        "Grouped-query attention shares each KV head among num_attention_heads / num_key_value_heads query heads; "
        "the nearest that divide 8: 2 or 4. Check the model's published config.json."  # 8's divisors: 1, 2, 4, 8
    )


def test_more_kv_heads_than_heads():
    msg = _error(_llama(num_key_value_heads=16))
    assert msg == (
        "config.json: num_key_value_heads: num_key_value_heads (16) must divide num_attention_heads (8). "
        "Grouped-query attention shares each KV head among num_attention_heads / num_key_value_heads query heads; "
        "the nearest that divide 8: 8. Check the model's published config.json."  # none above 16: the largest, 8
    )


def test_zero_layers():
    msg = _error(_llama(num_hidden_layers=0))
    assert msg == "config.json: num_hidden_layers: num_hidden_layers must be at least 1, not 0."


def test_missing_key():
    cfg = _llama()
    del cfg["vocab_size"]
    msg = _error(cfg)
    assert msg == "config.json: missing required key 'vocab_size'. A llama config.json has it; copy the full file."


def test_missing_gpt2_key():
    msg = _error({"model_type": "gpt2", "n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 50})
    assert msg == "config.json: missing required key 'n_positions'. A gpt2 config.json has it; copy the full file."


def test_non_integer_size():
    msg = _error(_llama(hidden_size=64.5))
    assert msg == "config.json: hidden_size: hidden_size must be a whole number, not 64.5."


def test_boolean_is_not_a_size():
    msg = _error(_llama(num_hidden_layers=True))
    assert msg == "config.json: num_hidden_layers: num_hidden_layers must be a whole number, not true."


def test_tie_word_embeddings_must_be_boolean():
    msg = _error(_llama(tie_word_embeddings="yes"))
    assert msg == ("config.json: tie_word_embeddings: tie_word_embeddings must be true or false, not \"yes\". Write a "
                   'JSON boolean (true or false, no quotes): "tie_word_embeddings": true.')
    msg = _error(_llama(tie_word_embeddings="false"))  # a text: Transformers' `if "false":` would tie the weights
    assert msg.endswith('not "false". Write a JSON boolean (true or false, no quotes): "tie_word_embeddings": '
                        'false.'), msg
    msg = _error(_llama(tie_word_embeddings=[1]))
    assert msg.endswith("not [1]. Write a JSON boolean: true or false, no quotes."), msg


def test_more_experts_per_token_than_experts():
    msg = _error(_llama(model_type="mixtral", num_local_experts=2, num_experts_per_tok=3))
    assert msg == "config.json: num_experts_per_tok: num_experts_per_tok (3) exceeds num_local_experts (2)."


def _qwen3_moe(**over):
    return _llama(**{"model_type": "qwen3_moe", "num_experts": 4, "num_experts_per_tok": 2,
                     "moe_intermediate_size": 48, **over})


def test_qwen3_moe_counts():
    # Transformers modeling_qwen3_moe.py: q/k/v/o as llama (d = 64/8 = 8): 4096 + 1024 + 1024 + 4096 = 10,240;
    # q_norm and k_norm of head_dim 8 each; router 64 x 4 = 256; 4 experts x 3 x 64 x 48 = 36,864 (the experts
    # are moe_intermediate_size wide; intermediate_size 160 sizes no layer). Per layer 10,240 + 36,864 + 256
    # + norms 2 x 64 + 2 x 8 = 47,504; x 2 layers = 95,008; + final norm 64 + embedding 6,400 + head 6,400.
    arch = from_hf_config(_qwen3_moe())
    assert (arch.intermediate_size, arch.num_local_experts, arch.num_experts_per_tok) == (48, 4, 2)
    assert arch.qk_norm
    assert arch.parameters == 95_008 + 64 + 6_400 + 6_400
    # Active: two of four experts, so half the expert weights (2 x 36,864 / 2 = 36,864) are inactive.
    assert arch.active_parameters == arch.parameters - 36_864
    names = {m.name for m in arch.linear_modules()}
    assert {"gate", "gate_proj", "up_proj", "down_proj"} <= names and "w1" not in names


def test_qwen3_moe_expert_count_key_and_dense_layers():
    assert _error(_qwen3_moe(num_experts_per_tok=5)) == (
        "config.json: num_experts_per_tok: num_experts_per_tok (5) exceeds num_experts (4).")
    msg = _error(_qwen3_moe(mlp_only_layers=[0]))
    assert msg == ("config.json: mlp_only_layers: mlp_only_layers gives some layers a dense MLP; mixed dense and MoE "
                   "layers are not modelled. Released Qwen3-MoE models use decoder_sparse_step 1 and mlp_only_layers [].")
    msg = _error(_qwen3_moe(decoder_sparse_step=2))
    assert msg.startswith("config.json: decoder_sparse_step: decoder_sparse_step gives some layers a dense MLP")
    # A layer index past the last layer (this config has 2: 0 and 1) matches no layer in Transformers (it tests
    # layer_idx in the list): refused as a likely typo, not silently ignored (h26b M1).
    msg = _error(_qwen3_moe(mlp_only_layers=[7]))
    assert msg.startswith("config.json: mlp_only_layers: mlp_only_layers holds 7, which is no layer of this model: "
                          "the layers are 0 to 1 (num_hidden_layers 2)."), msg
    assert from_hf_config(_qwen3_moe(mlp_only_layers=[])).num_local_experts == 4


def test_qwen3_moe_sliding_window_only_when_enabled():
    # Qwen3MoeConfig keeps sliding_window only with use_sliding_window (default false), then on every layer.
    assert from_hf_config(_qwen3_moe(sliding_window=4096)).sliding_window is None
    arch = from_hf_config(_qwen3_moe(sliding_window=4096, use_sliding_window=True))
    assert (arch.sliding_window, arch.sliding_window_layers) == (4096, 2)


def test_gemma3_text_counts_and_window_pattern():
    # Gemma3ForCausalLM (modeling_gemma3.py) on the llama test shape with head_dim 8 given (Gemma3TextConfig's
    # default would be 256): q/k/v/o 10,240, MLP 30,720, four RMSNorms of 64 and q/k norms of 8: 41,232 per
    # layer; x 2 = 82,464; final norm 64; tied embedding 6,400.
    arch = from_hf_config(_llama(model_type="gemma3_text", head_dim=8, tie_word_embeddings=True, sliding_window=16))
    assert arch.parameters == 82_464 + 64 + 6_400
    assert (arch.norms_per_layer, arch.qk_norm, arch.attn_logit_softcapping) == (4, True, None)
    # sliding_window_pattern 6 (the default): layers 0-4 local, 5 global; 12 layers -> 10 local.
    twelve = from_hf_config(_llama(model_type="gemma3_text", num_hidden_layers=12, sliding_window=16))
    assert (twelve.sliding_window, twelve.sliding_window_layers) == (16, 10)
    # layer_types, when given, decides.
    typed = from_hf_config(_llama(model_type="gemma3_text", sliding_window=16,
                                  layer_types=["full_attention", "sliding_attention"]))
    assert typed.sliding_window_layers == 1
    msg = _error(_llama(model_type="gemma3_text", layer_types=["sliding_attention"]))
    assert msg == ("config.json: layer_types: layer_types must list 2 entries of sliding_attention or "
                   "full_attention.")
    msg = _error(_llama(model_type="gemma3_text", use_bidirectional_attention=True))
    assert msg.startswith("config.json: use_bidirectional_attention: use_bidirectional_attention makes this an "
                          "embedding model")


def test_gemma3_text_takes_the_config_class_defaults():
    # A Gemma 3 text config may leave keys out: Gemma3TextConfig's defaults apply (vocab 262,208, 26 layers of
    # 2304, 8 heads of 256, 4 KV heads, MLP 9216, tied), as for the multimodal checkpoints' text_config.
    arch = from_hf_config({"model_type": "gemma3_text"})
    assert (arch.vocab_size, arch.num_hidden_layers, arch.hidden_size, arch.head_dim) == (262_208, 26, 2304, 256)
    assert (arch.num_attention_heads, arch.num_key_value_heads, arch.intermediate_size) == (8, 4, 9216)
    assert arch.tie_word_embeddings and arch.sliding_window == 4096


def test_gemma3_multimodal_counts_the_vision_tower():
    # google/gemma-3-4b-it's config.json (text_config and vision_config as published). The text model: embedding
    # 262,208 x 2560 = 671,252,480; per layer q 2560 x 2048 + k, v 2560 x 1024 + o 2048 x 2560 = 15,728,640,
    # MLP 3 x 2560 x 10240 = 78,643,200, norms 4 x 2560 + 2 x 256 = 10,752 -> 94,382,592 x 34 = 3,209,008,128;
    # final norm 2560. SigLIP (1152 wide, 27 layers, 4304 MLP, 14-pixel patches of 896-pixel images): patch
    # conv 3 x 14 x 14 x 1152 + 1152, positions 64^2 x 1152, per layer 4 x (1152^2 + 1152) + 4 x 1152 + MLP
    # (2 x 1152 x 4304 + 4304 + 1152) = 15,239,504, post norm 2 x 1152: 416,866,032. Projector 1152 x 2560 + 1152.
    # Total 4,300,079,472: the published sum(p.numel()) of Gemma3ForConditionalGeneration.
    cfg = {"model_type": "gemma3", "torch_dtype": "bfloat16",
           "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                           "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                           "sliding_window": 1024},
           "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                             "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                             "patch_size": 14, "vision_use_head": False}}
    arch = from_hf_config(cfg)
    assert arch.vision_parameters == 416_866_032 + 1152 * 2560 + 1152
    assert arch.parameters == 4_300_079_472
    assert (arch.model_type, arch.torch_dtype, arch.sliding_window_layers) == ("gemma3", "bfloat16", 29)


def test_gpt_oss_counts():
    # modeling_gpt_oss.py on the llama test shape (d = 8) with 4 experts of width 48, top-2: q/k/v/o with biases
    # 4096 + 64 + 2 x (1024 + 16) + 4096 + 64 = 10,400; 8 sinks; router 64 x 4 + 4 = 260; experts 4 x (64 x 96 + 96
    # + 48 x 64 + 64) = 37,504; norms 2 x 64 = 128: 48,300 per layer; x 2 = 96,600; final norm 64; untied 2 x 6,400.
    arch = from_hf_config(_llama(model_type="gpt_oss", head_dim=8, intermediate_size=48, num_local_experts=4,
                                 num_experts_per_tok=2, sliding_window=16))
    assert arch.parameters == 96_600 + 64 + 12_800
    assert (arch.attention_sinks, arch.sdpa_supported, arch.sliding_window_layers) == (True, False, 1)
    names = {m.name for m in arch.linear_modules()}
    assert {"router", "gate_up_proj", "down_proj"} <= names


def test_gpt_oss_published_totals():
    # GptOssConfig's defaults are gpt-oss-120b's shape; gpt-oss-20b has 24 layers and 32 experts. GGUF
    # general.parameter_count: 116,829,156,672 and 20,914,757,184.
    assert from_hf_config({"model_type": "gpt_oss"}).parameters == 116_829_156_672
    assert from_hf_config({"model_type": "gpt_oss", "num_hidden_layers": 24,
                           "num_local_experts": 32}).parameters == 20_914_757_184


def test_gemma3_keeps_its_top_level_quantization_config_and_explicit_nulls():
    from planner.workload.spec import checkpoint_format

    cfg = {"model_type": "gemma3", "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128},
           "text_config": _llama(model_type="gemma3_text", head_dim=8)}
    assert checkpoint_format(from_hf_config(cfg))[:2] == ("int4-gptq", 128)
    # An explicit null is the config's value, not a gap for the default (Gemma3TextConfig keeps sliding_window None).
    assert from_hf_config(_llama(model_type="gemma3_text", head_dim=8, sliding_window=None)).sliding_window is None
    assert from_hf_config(cfg).flash_supported is False  # Gemma3ForConditionalGeneration has no flash_attention_2


def test_qwen3_moe_reads_the_expert_count_as_transformers_5_writes_it():
    # Qwen3MoeConfig maps num_experts to num_local_experts, and save_pretrained writes that name.
    cfg = _qwen3_moe()
    cfg["num_local_experts"] = cfg.pop("num_experts")
    assert from_hf_config(cfg).num_local_experts == 4


def test_gemma2_softcapping_defaults():
    # Gemma2Config's defaults: attention scores capped at 50, logits at 30; null turns a cap off.
    arch = from_hf_config(_llama(model_type="gemma2"))
    assert (arch.attn_logit_softcapping, arch.final_logit_softcapping) == (50.0, 30.0)
    off = from_hf_config(_llama(model_type="gemma2", attn_logit_softcapping=None, final_logit_softcapping=None))
    assert (off.attn_logit_softcapping, off.final_logit_softcapping) == (None, None)
    msg = _error(_llama(model_type="gemma2", final_logit_softcapping="30"))
    assert msg == "config.json: final_logit_softcapping: final_logit_softcapping must be a positive number or null, not \"30\"."


def test_config_that_is_not_a_mapping():
    msg = _error([1, 2], where=None)
    assert msg == "a model config must be a mapping of config.json keys."


@pytest.mark.parametrize("model_type", sorted(SUPPORTED_MODEL_TYPES))
def test_only_gpt2_and_gpt_bigcode_have_a_hard_position_limit(model_type):
    # GPT-2 and GPTBigCode learn a position table (wpe); the others rotate q and k (RoPE; gpt_neox
    # on rotary_pct of each head) or add ALiBi biases (BLOOM).
    learned = model_type in ("gpt2", "gpt_bigcode")
    cfg = TINY[model_type] if model_type in TINY else _llama(model_type=model_type)
    if learned:
        cfg = {"model_type": model_type, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 16, "vocab_size": 50}
    elif model_type == "gpt_neox":
        cfg = {"model_type": "gpt_neox", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
               "intermediate_size": 128, "vocab_size": 50}
    elif model_type not in TINY:
        if model_type == "mixtral":
            cfg.update(num_local_experts=2, num_experts_per_tok=1)
        if model_type == "qwen3_moe":
            cfg.update(num_experts=2, num_experts_per_tok=1, moe_intermediate_size=32)
        if model_type == "gemma3":
            cfg = {"model_type": "gemma3", "text_config": _llama(model_type="gemma3_text")}
        if model_type == "gpt_oss":
            cfg.update(num_local_experts=2, num_experts_per_tok=1)
    arch = from_hf_config(cfg)
    assert arch.hard_position_limit is learned
    assert arch.position_encoding == ("learned absolute" if learned else "ALiBi" if model_type == "bloom" else "rotary")


# ----- GPTBigCode (StarCoder) -------------------------------------------------------------------

STARCODER = {"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48, "n_inner": 24576,
             "vocab_size": 49152, "n_positions": 8192, "multi_query": True}


def test_gpt_bigcode_multi_query_parameters_and_buffer():
    # StarCoder: wte 49,152 x 6,144 = 301,989,888 (the head is tied to it), wpe 8,192 x 6,144 =
    # 50,331,648; per layer c_attn 6,144 -> 6,144 + 2 x 128 (48 query heads, one shared K/V head of
    # 128) = 39,321,600 + 6,400 bias, c_proj 37,748,736 + 6,144, c_fc 150,994,944 + 24,576, c_proj
    # 150,994,944 + 6,144, two LayerNorms 24,576: 379,128,064 x 40; ln_f 12,288. Total
    # 15,517,456,384 (the 15.5B of the model card).
    arch = from_hf_config(STARCODER)
    assert (arch.num_key_value_heads, arch.head_dim, arch.kv_dim) == (1, 128, 128)
    c_attn = next(m for m in arch.linear_modules() if m.name == "c_attn")
    assert (c_attn.in_features, c_attn.out_features) == (6144, 6400)
    assert arch.parameters == 15_517_456_384
    assert arch.learned_positions == 8192 and arch.hard_position_limit
    # Transformers keeps an n_positions-square bool causal mask as a buffer: 64 MiB.
    assert arch.buffer_bytes == 8192 * 8192 == 64 * 2**20
    # KV cache per token: 2 (K, V) x 40 layers x 1 head x 128 x 2 B = 20,480 B.
    from planner.memory.inference import kv_bytes_per_token
    assert kv_bytes_per_token(arch, "bf16", 1) == 20_480


def test_gpt_bigcode_without_multi_query_is_multi_head():
    arch = from_hf_config({**STARCODER, "multi_query": False})
    assert arch.num_key_value_heads == 48
    c_attn = next(m for m in arch.linear_modules() if m.name == "c_attn")
    assert c_attn.out_features == 3 * 6144


def test_gpt_bigcode_defaults_follow_its_config_class():
    # GPTBigCodeConfig: n_positions 1024, multi_query true, gelu_pytorch_tanh, tied head, 4h MLP.
    arch = from_hf_config({"model_type": "gpt_bigcode", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100})
    assert (arch.max_position_embeddings, arch.num_key_value_heads, arch.hidden_act) == (1024, 1, "gelu_pytorch_tanh")
    assert arch.tie_word_embeddings and arch.intermediate_size == 256
    assert arch.extra["attn_pdrop"] == 0.1


@pytest.mark.parametrize("key", ["torch_dtype", "dtype"])
def test_checkpoint_dtype_is_read_under_either_name(key):
    # Transformers writes the checkpoint's dtype as "dtype" since 4.56 (earlier "torch_dtype").
    for cfg in (_llama(**{key: "float32"}), {**STARCODER, key: "float32"}):
        assert from_hf_config(cfg).torch_dtype == "float32"


def test_gpt_style_head_count_error_names_its_own_keys():
    msg = _error({**STARCODER, "n_embd": 6100})
    assert msg == ("config.json: n_embd: n_embd (6100) is not divisible by n_head (48). Check both against the "
                   "model's published config.json.")
