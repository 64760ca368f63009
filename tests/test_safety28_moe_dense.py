"""Issue 28, hostile pass 26B N2: an MoE config.json with no MoE layer at all was sized as if every layer were MoE.

Transformers builds a Qwen2-MoE layer's sparse block only where ``layer_idx not in mlp_only_layers and
(layer_idx + 1) % decoder_sparse_step == 0`` (modeling_qwen2_moe.py, Qwen2MoeDecoderLayer), else a Qwen2MoeMLP of
``intermediate_size``; DeepSeek-V2/V3 layers below ``first_k_dense_replace`` are dense (modeling_deepseek_v3.py,
DeepseekV3DecoderLayer). With no sparse layer the model is all dense: planner counted 14.3 B parameters for the
config below, and now the dense 1.86 B.
"""

from __future__ import annotations

import pytest

from planner.model.architecture import from_hf_config
from tests.catalog_yaml import catalog_models

_QWEN2_MOE = {"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
              "shared_expert_intermediate_size": 5632, "num_attention_heads": 16, "num_hidden_layers": 24,
              "num_key_value_heads": 16, "vocab_size": 151936, "max_position_embeddings": 8192, "num_experts": 60,
              "num_experts_per_tok": 4, "decoder_sparse_step": 1, "mlp_only_layers": [], "torch_dtype": "bfloat16",
              "rms_norm_eps": 1e-6, "tie_word_embeddings": False}

# a sparse layer's MLP: 60 experts x 3 x 2048 x 1408 (519,045,120) + router 2048 x 60 (122,880) + shared expert
# 3 x 2048 x 5632 (34,603,008) + its gate 2048 = 553,773,056; a dense layer's MLP (Qwen2MoeMLP, intermediate_size
# 5632): 3 x 2048 x 5632 = 34,603,008; 519,170,048 more per sparse layer. All 24 dense: 14,315,784,192 (planner's
# all-sparse count, pinned below) - 24 x 519,170,048 = 1,855,703,040.
_ALL_SPARSE = 14_315_784_192
_ALL_DENSE = 1_855_703_040


def _params(cfg: dict) -> int:
    return from_hf_config(cfg, "m").parameters


def test_the_reference_config_is_all_sparse() -> None:
    assert _params(_QWEN2_MOE) == _ALL_SPARSE


@pytest.mark.parametrize("change", [{"mlp_only_layers": list(range(24))}, {"decoder_sparse_step": 25}])
def test_a_qwen2_moe_config_with_no_sparse_layer_is_all_dense(change: dict) -> None:
    arch = from_hf_config({**_QWEN2_MOE, **change}, "m")
    assert arch.parameters == _ALL_DENSE
    assert not arch.is_moe


def test_a_deepseek_config_with_every_layer_dense_is_its_dense_model() -> None:
    cfg = next(m["config"] for m in catalog_models().values() if m["config"].get("model_type") == "deepseek_v3")
    L = cfg["num_hidden_layers"]
    dense = {k: v for k, v in cfg.items() if k != "n_routed_experts"}  # the reader's dense DeepSeek (no experts)
    assert _params({**cfg, "first_k_dense_replace": L}) == _params({**dense, "first_k_dense_replace": L})
    assert _params({**cfg, "first_k_dense_replace": L}) < _params(cfg)
