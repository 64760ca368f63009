"""Measurement helper, not a test: a deepseek2-architecture GGUF (DeepSeek-V2-Lite's shape) whose tensor
data is a sparse hole (zeros), to read llama.cpp's compute-buffer reservations for the MLA model.

The per-head ("legacy") layout: no attention.key_length_mla, one attn_kv_b per layer, so llama.cpp's
deepseek2 graph decompresses K (192 values a head) and V (128) and runs multi-head attention
(src/models/deepseek2.cpp, ``!is_mla``). q_lora_rank is written as 0 so that a file of fewer than 27
layers takes the "lite" attn_q path, as the 27-layer model does.

Usage: make_deepseek2_gguf.py OUT.gguf n_layer [n_expert] [n_expert_used]   (needs the gguf package)
Shape (DeepSeek-V2-Lite config.json): hidden 2048, 16 heads, qk_nope 128 + qk_rope 64, v 128,
kv_lora_rank 512, intermediate 10944 (first_k_dense_replace 1), 64 experts of 1408, 6 used, 2 shared,
vocab 102400.
"""
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

out, L = sys.argv[1], int(sys.argv[2])
E = int(sys.argv[3]) if len(sys.argv) > 3 else 64
K = int(sys.argv[4]) if len(sys.argv) > 4 else 6
h, a, nope, rope, dv, r, f, fe, shared, V = 2048, 16, 128, 64, 128, 512, 10944, 1408, 2, 102400
w = gguf.GGUFWriter(out, "deepseek2")
arch = "deepseek2"
w.add_context_length(163840)
w.add_embedding_length(h)
w.add_block_count(L)
w.add_feed_forward_length(f)
w.add_head_count(a)
w.add_head_count_kv(a)
w.add_rope_dimension_count(rope)
w.add_rope_freq_base(10000.0)
w.add_layer_norm_rms_eps(1e-6)
w.add_uint32(f"{arch}.leading_dense_block_count", 1)
w.add_uint32(f"{arch}.attention.q_lora_rank", 0)
w.add_uint32(f"{arch}.attention.kv_lora_rank", r)
w.add_uint32(f"{arch}.attention.key_length", nope + rope)
w.add_uint32(f"{arch}.attention.value_length", dv)
w.add_uint32(f"{arch}.expert_feed_forward_length", fe)
w.add_uint32(f"{arch}.expert_count", E)
w.add_uint32(f"{arch}.expert_used_count", K)
w.add_uint32(f"{arch}.expert_shared_count", shared)
w.add_float32(f"{arch}.expert_weights_scale", 1.0)
w.add_file_type(1)
w.add_vocab_size(V)
w.add_tokenizer_model("llama")
w.add_tokenizer_pre("default")
w.add_token_list([b"<unk>", b"<s>", b"</s>"] + [f"t{i}".encode() for i in range(3, V)])
w.add_token_scores([0.0] * V)
w.add_token_types([2, 3, 3] + [1] * (V - 3))
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
tensors = []


def t(name, shape, dt=Q.F16):  # numpy order (rows, ..., ne0)
    tensors.append((name, shape, dt))


t("token_embd.weight", (V, h))
for i in range(L):
    p = f"blk.{i}."
    t(p + "attn_norm.weight", (h,), Q.F32)
    t(p + "attn_q.weight", (a * (nope + rope), h))
    t(p + "attn_kv_a_mqa.weight", (r + rope, h))
    t(p + "attn_kv_a_norm.weight", (r,), Q.F32)
    t(p + "attn_kv_b.weight", (a * (nope + dv), r))
    t(p + "attn_output.weight", (h, a * dv))
    t(p + "ffn_norm.weight", (h,), Q.F32)
    if i < 1:
        t(p + "ffn_gate.weight", (f, h))
        t(p + "ffn_up.weight", (f, h))
        t(p + "ffn_down.weight", (h, f))
    else:
        t(p + "ffn_gate_inp.weight", (E, h), Q.F32)
        t(p + "ffn_gate_exps.weight", (E, fe, h))
        t(p + "ffn_up_exps.weight", (E, fe, h))
        t(p + "ffn_down_exps.weight", (E, h, fe))
        t(p + "ffn_gate_shexp.weight", (fe * shared, h))
        t(p + "ffn_up_shexp.weight", (fe * shared, h))
        t(p + "ffn_down_shexp.weight", (h, fe * shared))
t("output_norm.weight", (h,), Q.F32)
t("output.weight", (V, h))
size = {Q.F16: 2, Q.F32: 4}
total = 0
for name, shape, dt in tensors:
    nb = int(np.prod(shape)) * size[dt]
    w.add_tensor_info(name, shape, np.float16 if dt == Q.F16 else np.float32, nb, raw_dtype=dt)
    total += -(-nb // 32) * 32
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_ti_data_to_file()
fp = w.fout[0]
fp.flush()
start = -(-fp.tell() // 32) * 32
fp.truncate(start + total)
fp.close()
print(out, start + total)
