"""Measurement helper, not a test: a llama-architecture GGUF whose tensor data is a sparse hole (zeros).

Used to measure llama.cpp (llama-quantize --dry-run, llama-completion -v reservations) for
tests/test_llamacpp.py. Usage: make_shape_gguf.py GGUF_PY_DIR OUT.gguf n_layer n_embd n_head n_head_kv n_ff n_vocab [ftype f16|bf16|f32] [tied 0|1] [rope_freqs 0|1]
"""
import sys
sys.path.insert(0, sys.argv.pop(1))  # first argument: the gguf-py folder of a llama.cpp checkout
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

out, L, h, a, kv, f, V = sys.argv[1], *map(int, sys.argv[2:8])
ftype = sys.argv[8] if len(sys.argv) > 8 else "f16"
tied = len(sys.argv) > 9 and sys.argv[9] == "1"
rope_freqs = len(sys.argv) > 10 and sys.argv[10] == "1"
n_exp = int(sys.argv[11]) if len(sys.argv) > 11 else 0
n_exp_used = int(sys.argv[12]) if len(sys.argv) > 12 else 0
hd = h // a
WT = {"f16": Q.F16, "bf16": Q.BF16, "f32": Q.F32}[ftype]
w = gguf.GGUFWriter(out, "llama")
w.add_context_length(131072)
w.add_embedding_length(h)
w.add_block_count(L)
w.add_feed_forward_length(f)
w.add_head_count(a)
w.add_head_count_kv(kv)
w.add_rope_dimension_count(hd)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_freq_base(500000.0)
w.add_file_type({"f16": 1, "bf16": 32, "f32": 0}[ftype])
w.add_vocab_size(V)
if n_exp:
    w.add_expert_count(n_exp)
    w.add_expert_used_count(n_exp_used)
w.add_tokenizer_model("llama")
w.add_tokenizer_pre("default")
toks = [b"<unk>", b"<s>", b"</s>"] + [f"t{i}".encode() for i in range(3, V)]
w.add_token_list(toks)
w.add_token_scores([0.0] * V)
w.add_token_types([2, 3, 3] + [1] * (V - 3))
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
tensors = []
def t(name, shape, dt):  # shape in numpy order (rows, ..., ne0)
    tensors.append((name, shape, dt))
t("token_embd.weight", (V, h), WT)
if rope_freqs:
    t("rope_freqs.weight", (hd // 2,), Q.F32)
for i in range(L):
    p = f"blk.{i}."
    t(p + "attn_norm.weight", (h,), Q.F32)
    t(p + "attn_q.weight", (a * hd, h), WT)
    t(p + "attn_k.weight", (kv * hd, h), WT)
    t(p + "attn_v.weight", (kv * hd, h), WT)
    t(p + "attn_output.weight", (h, a * hd), WT)
    t(p + "ffn_norm.weight", (h,), Q.F32)
    if n_exp:
        t(p + "ffn_gate_inp.weight", (n_exp, h), Q.F32)
        t(p + "ffn_gate_exps.weight", (n_exp, f, h), WT)
        t(p + "ffn_up_exps.weight", (n_exp, f, h), WT)
        t(p + "ffn_down_exps.weight", (n_exp, h, f), WT)
    else:
        t(p + "ffn_gate.weight", (f, h), WT)
        t(p + "ffn_up.weight", (f, h), WT)
        t(p + "ffn_down.weight", (h, f), WT)
t("output_norm.weight", (h,), Q.F32)
if not tied:
    t("output.weight", (V, h), WT)
size = {Q.F16: 2, Q.BF16: 2, Q.F32: 4}
total = 0
for name, shape, dt in tensors:
    nb = int(np.prod(shape)) * size[dt]
    w.add_tensor_info(name, shape, np.float16 if dt == Q.F16 else np.float32, nb, raw_dtype=dt)
    total += -(-nb // 32) * 32
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_ti_data_to_file()
w.fout[0].flush()
fp = w.fout[0]
pos = fp.tell()
start = -(-pos // 32) * 32
fp.truncate(start + total)
fp.close()
print(out, start + total)
