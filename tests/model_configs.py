"""Tiny config.json mappings, one per model_type the planner reads, for tests that build models.

Each sets the keys that shape the parameters (and leaves the rest to the Transformers config class's
defaults, as a real config.json would); widths are small so a model builds on the CPU in
milliseconds. Used by tests/test_architecture.py and tests/test_families.py.
"""

from __future__ import annotations

_LLAMA = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
          "intermediate_size": 96, "vocab_size": 100}

TINY: dict[str, dict] = {
    "llama": {"model_type": "llama", **_LLAMA},
    "mistral": {"model_type": "mistral", **_LLAMA, "sliding_window": 16},
    "mixtral": {"model_type": "mixtral", **_LLAMA, "num_local_experts": 4, "num_experts_per_tok": 2},
    "qwen2": {"model_type": "qwen2", **_LLAMA},
    "qwen3": {"model_type": "qwen3", **_LLAMA, "head_dim": 32},
    "qwen3_moe": {"model_type": "qwen3_moe", **_LLAMA, "head_dim": 16, "num_experts": 4, "num_experts_per_tok": 2,
                  "moe_intermediate_size": 32},
    "gemma": {"model_type": "gemma", **_LLAMA, "head_dim": 16},
    "gemma2": {"model_type": "gemma2", **_LLAMA, "head_dim": 16, "sliding_window": 16},
    "gemma3_text": {"model_type": "gemma3_text", **_LLAMA, "head_dim": 16, "sliding_window": 16},
    "gemma3": {"model_type": "gemma3", "text_config": {**_LLAMA, "head_dim": 16, "sliding_window": 16},
               "vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                                 "num_attention_heads": 2, "image_size": 32, "patch_size": 16}},
    "phi3": {"model_type": "phi3", **_LLAMA, "pad_token_id": 0},
    "gpt2": {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 32, "vocab_size": 100},
    "gpt_bigcode": {"model_type": "gpt_bigcode", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 32,
                    "vocab_size": 100},
    "gpt_neox": {"model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "intermediate_size": 96, "vocab_size": 100},
    "gpt_oss": {"model_type": "gpt_oss", **_LLAMA, "head_dim": 16, "num_local_experts": 4, "num_experts_per_tok": 2},
    # DeepSeek-V3 layout: q_lora_rank, one dense layer, then MoE layers with a shared expert
    "deepseek_v3": {"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
                    "num_key_value_heads": 4, "intermediate_size": 96, "moe_intermediate_size": 16,
                    "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
                    "n_group": 2, "topk_group": 1, "q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
                    "qk_rope_head_dim": 4, "v_head_dim": 8, "vocab_size": 100},
    # DeepSeek-V2-Lite layout: no query LoRA (q_proj), two shared experts, MLP biases
    "deepseek_v2": {"model_type": "deepseek_v2", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
                    "num_key_value_heads": 4, "intermediate_size": 96, "moe_intermediate_size": 16,
                    "n_routed_experts": 8, "n_shared_experts": 2, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
                    "q_lora_rank": None, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4,
                    "v_head_dim": 8, "vocab_size": 100, "mlp_bias": True},
    "phi": {"model_type": "phi", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 96, "vocab_size": 100, "partial_rotary_factor": 0.5},
    # Falcon-40B layout (the Falcon-7B layout is the config class's default)
    "falcon": {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
               "num_kv_heads": 2, "new_decoder_architecture": True, "vocab_size": 100},
    "gptj": {"model_type": "gptj", "n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8, "vocab_size": 100},
    "bloom": {"model_type": "bloom", "hidden_size": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100},
    "olmo2": {"model_type": "olmo2", **_LLAMA},
    "granite": {"model_type": "granite", **_LLAMA, "attention_bias": True, "logits_scaling": 8.0},
    "starcoder2": {"model_type": "starcoder2", **_LLAMA},
    "cohere": {"model_type": "cohere", **_LLAMA, "use_qk_norm": True},
    "qwen2_moe": {"model_type": "qwen2_moe", **_LLAMA, "num_hidden_layers": 3, "moe_intermediate_size": 16,
                  "shared_expert_intermediate_size": 48, "num_experts": 8, "num_experts_per_tok": 2,
                  "mlp_only_layers": [2]},
}

#: Variants of the same model_types that take other code paths.
VARIANTS: dict[str, dict] = {
    "falcon-7b-layout": {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                         "vocab_size": 100},
    "falcon-sequential": {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                          "vocab_size": 100, "parallel_attn": False, "multi_query": False, "ffn_hidden_size": 100,
                          "bias": True, "tie_word_embeddings": False},
    "falcon-one-ln": {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
                      "num_kv_heads": 2, "new_decoder_architecture": True, "num_ln_in_parallel_attn": 1,
                      "vocab_size": 100},
    "phi-qk-layernorm": {"model_type": "phi", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                         "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100, "qk_layernorm": True,
                         "tie_word_embeddings": True},
    "deepseek-v3-no-q-lora-biases": {"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2,
                                     "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 96,
                                     "moe_intermediate_size": 16, "n_routed_experts": 8, "num_experts_per_tok": 2,
                                     "first_k_dense_replace": 0, "q_lora_rank": None, "kv_lora_rank": 16,
                                     "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 12, "n_group": 2,
                                     "topk_group": 1, "attention_bias": True, "vocab_size": 100},
    "starcoder2-no-bias-untied": {"model_type": "starcoder2", **_LLAMA, "use_bias": False,
                                  "tie_word_embeddings": False},
    "olmo2-attention-bias": {"model_type": "olmo2", **_LLAMA, "attention_bias": True},
    "granite-mlp-bias-tied": {"model_type": "granite", **_LLAMA, "mlp_bias": True, "tie_word_embeddings": True},
    "qwen2-moe-sparse-step": {"model_type": "qwen2_moe", **_LLAMA, "num_hidden_layers": 4, "moe_intermediate_size": 16,
                              "shared_expert_intermediate_size": 48, "num_experts": 8, "num_experts_per_tok": 2,
                              "decoder_sparse_step": 2},
    "cohere-plain": {"model_type": "cohere", **_LLAMA, "attention_bias": True},
}
