"""Probe (not a test): which K/V tensors a Transformers training forward returns with use_cache on
are not saved by autograd, i.e. extra memory until the output is freed (planner.workload.releases,
the transformers entry, quotes its results for 4.35.2, 4.36.0 and 5.17.0 with torch 2.13 on CPU).

Run with torch and the Transformers release to probe installed: python kv_cache_training_probe.py
"""
import functools, sys, torch, transformers
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    apply_activation_checkpointing, checkpoint_wrapper, CheckpointImpl)

def run(kv_heads, mode, b=2, s=128):
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=kv_heads, vocab_size=1000, max_position_embeddings=512)
    m = LlamaForCausalLM(cfg).train()
    if mode == "wrapper":  # llama-recipes: policies.apply_fsdp_checkpointing (NO_REENTRANT checkpoint_wrapper)
        apply_activation_checkpointing(m, checkpoint_wrapper_fn=functools.partial(
            checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT),
            check_fn=lambda mod: isinstance(mod, LlamaDecoderLayer))
    elif mode == "hf":
        m.gradient_checkpointing_enable()
    saved = set()
    def pack(t):
        saved.add(t.untyped_storage().data_ptr()); return t
    ids = torch.randint(0, 1000, (b, s))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = m(input_ids=ids, labels=ids)  # use_cache left at the config default
    pkv = out.past_key_values
    if pkv is not None and not isinstance(pkv, tuple):
        pkv = pkv.to_legacy_cache() if hasattr(pkv, "to_legacy_cache") else [(l.keys, l.values) for l in pkv.layers]
    cache = [t for layer in (pkv or ()) for t in layer]
    total = sum(t.numel() * t.element_size() for t in cache)
    extra = sum(t.numel() * t.element_size() for t in cache if t.untyped_storage().data_ptr() not in saved)
    per = 2 * cfg.num_hidden_layers * b * s * kv_heads * (256 // 8) * 4  # K and V, fp32
    err = ""
    try:
        out.loss.backward()
    except Exception as e:  # noqa: BLE001
        err = f"backward failed: {type(e).__name__}: {str(e)[:120]}"
    print(f"transformers {transformers.__version__} kv_heads {kv_heads} ckpt {mode:7s}: cache {total:,} B "
          f"(2 x L x b x s x kv x d x 4 = {per:,}), not saved by autograd {extra:,} B {err}")

for kv in (8, 2):
    for mode in ("none", "wrapper", "hf"):
        run(kv, mode)
