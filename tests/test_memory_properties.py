"""Property tests (hypothesis): monotonicity the memory model must respect.

- More micro-batch or a longer sequence never needs less memory.
- A higher ZeRO stage (from 1 up), or more data-parallel GPUs (from 2 up), never needs more per GPU.
  (Going from 1 GPU to 2 adds communication buffers: DDP buckets and NCCL; that is real. Going from
  ZeRO-0 to ZeRO-1 swaps DDP's buckets, the size of the gradients, for DeepSpeed's reduce bucket of
  reduce_bucket_size elements whatever the model: on a model under 5e8 parameters, like the small
  ones drawn here, ZeRO-1 can need more; tests/test_memory.py checks both sides of that.)
- Gradient checkpointing never increases activations (models with at least 2 layers).
- ZeRO-Offload with stage 2 or 3 keeps the optimizer and the gradients off the GPU: the per-GPU
  need does not depend on the optimizer, and no full gradient copy is on the GPU.
- vLLM: the sequences ``vllm_budget`` says fit at a context are exactly the largest concurrency whose
  need fits the card (what ``fit`` searches), sliding-window models included.
"""

from __future__ import annotations

import pytest

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planner.model.architecture import from_hf_config
from planner.memory import estimate
from planner.memory.activations import activation_bytes
from planner.memory.saved import regime_for
from planner.workload.recipes import OPTIMIZERS, RECIPES
from planner.workload.spec import OFFLOAD_OPTIMIZERS, workload_from_mapping


@st.composite
def archs(draw):
    heads = draw(st.sampled_from([2, 4, 8, 16]))
    kv = draw(st.sampled_from([d for d in (1, 2, 4, 8, 16) if heads % d == 0]))
    head_dim = draw(st.sampled_from([16, 32, 64, 128]))
    family = draw(st.sampled_from(["llama", "qwen2", "gpt2", "mixtral"]))
    layers = draw(st.integers(2, 8))
    vocab = draw(st.integers(1000, 64000))
    h = heads * head_dim
    if family == "gpt2":
        cfg = {"model_type": "gpt2", "n_embd": h, "n_layer": layers, "n_head": heads, "vocab_size": vocab,
               "n_positions": 4096}
    else:
        cfg = {"model_type": family, "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": heads,
               "num_key_value_heads": kv, "intermediate_size": draw(st.integers(1, 8)) * h // 2 + 8,
               "vocab_size": vocab, "max_position_embeddings": 4096}
        if family == "mixtral":
            cfg.update(num_local_experts=4, num_experts_per_tok=2)
    return from_hf_config(cfg)


train_options = st.fixed_dictionaries({
    "method": st.sampled_from(["full", "lora", "qlora"]),
    "recipe": st.sampled_from(sorted(RECIPES)),
    "optimizer": st.sampled_from(sorted(OPTIMIZERS)),
    "attention": st.sampled_from(["eager", "sdpa"]),
    "checkpointing": st.sampled_from(["none", "full"]),
    "micro_batch": st.integers(1, 8),
    "seq_len": st.integers(16, 2048),
})


def make(arch, **keys):
    if keys.get("method") == "qlora" and RECIPES[keys["recipe"]].weight_bytes == 4:
        keys["recipe"] = "pure-bf16"
    return workload_from_mapping({"model": "m", "task": "train", **keys}, lambda n, e: (n, "test", arch))


def total(arch, **keys):
    return estimate(make(arch, **keys)).per_gpu_total_bytes


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=150, deadline=None)
@given(archs(), train_options, st.integers(1, 8))
def test_more_micro_batch_never_needs_less(arch, opts, extra):
    base = total(arch, **opts)
    bigger = total(arch, **{**opts, "micro_batch": opts["micro_batch"] + extra})
    assert bigger >= base


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=150, deadline=None)
@given(archs(), train_options, st.integers(1, 2048))
def test_longer_sequence_never_needs_less(arch, opts, extra):
    base = total(arch, **opts)
    longer = total(arch, **{**opts, "seq_len": opts["seq_len"] + extra})
    assert longer >= base


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=150, deadline=None)
@given(archs(), train_options, st.integers(2, 64), st.integers(1, 2))
def test_higher_zero_stage_never_needs_more(arch, opts, gpus, stage):
    low = total(arch, **opts, gpus=gpus, zero=stage)
    high_est = estimate(make(arch, **opts, gpus=gpus, zero=stage + 1))
    # ZeRO-3 allocates its reduce bucket at start-up and keeps it through the optimizer step, where
    # stages 1-2 have freed theirs: with a step heavier than the sharding saves (a tiny model, a
    # step with temporaries), stage 3 may need up to that bucket more, and never more than that.
    kept_bucket = sum(c.bytes for c in high_est.gpu_components() if c.name == "ZeRO reduce bucket"
                      and c.phase == "") if stage == 2 else 0
    assert high_est.per_gpu_total_bytes <= low + kept_bucket


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=150, deadline=None)
@given(archs(), train_options, st.integers(2, 32), st.integers(1, 32), st.integers(0, 3))
def test_more_gpus_never_need_more_per_gpu(arch, opts, gpus, extra, stage):
    fewer = total(arch, **opts, gpus=gpus, zero=stage)
    more = total(arch, **opts, gpus=gpus + extra, zero=stage)
    assert more <= fewer


@settings(max_examples=150, deadline=None)
@given(archs(), st.sampled_from(sorted(RECIPES)), st.sampled_from(["eager", "sdpa"]), st.booleans(),
       st.integers(1, 8), st.integers(16, 4096))
def test_checkpointing_never_increases_activations(arch, recipe, attention, full, b, s):
    reg = regime_for(recipe)
    kw = dict(micro_batch=b, seq_len=s, attention=attention, full=full,
              lora_targets=() if full else ("q_proj", "v_proj", "c_attn"), lora_rank=8)
    none, _ = activation_bytes(arch, reg, checkpointing="none", **kw)
    ckpt, _ = activation_bytes(arch, reg, checkpointing="full", **kw)
    assert ckpt <= none


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=100, deadline=None)
@given(archs(), st.sampled_from(["full", "lora"]), st.sampled_from(OFFLOAD_OPTIMIZERS),
       st.sampled_from(OFFLOAD_OPTIMIZERS), st.integers(1, 8), st.sampled_from([2, 3]), st.integers(1, 4))
def test_zero_offload_gpu_need_holds_no_optimizer_and_no_gradient_copy(arch, method, opt_a, opt_b, gpus, stage,
                                                                       grad_accum):
    keys = dict(method=method, recipe="mixed-bf16", gpus=gpus, zero=stage, offload_optimizer=True,
                grad_accum=grad_accum, micro_batch=1, seq_len=128)
    a = estimate(make(arch, **keys, optimizer=opt_a))
    b = estimate(make(arch, **keys, optimizer=opt_b))
    assert a.per_gpu_total_bytes == b.per_gpu_total_bytes
    assert not any(c.name == "gradients" for c in a.gpu_components())


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=100, deadline=None)
@given(archs(), st.sampled_from(["mixed-bf16", "mixed-fp16", "fp32", "amp-bf16"]), st.integers(2, 16))
def test_zero3_with_offloaded_parameters_holds_the_same_tensors_on_one_gpu_as_on_many(arch, recipe, gpus):
    # offload_param + offload_optimizer: the GPU owns no parameters, gradients or states, so what it
    # holds (the fetched parameters in flight, the reduce bucket, activations) does not depend on how
    # many GPUs share the partitions; one GPU gathers its parameters as every rank of many does.
    keys = dict(method="full", recipe=recipe, zero=3, offload_params=True, offload_optimizer=True, micro_batch=1,
                seq_len=128)
    one = estimate(make(arch, **keys, gpus=1))
    many = estimate(make(arch, **keys, gpus=gpus))
    assert any(c.name == "gathered parameters in flight (ZeRO-3)" for c in one.gpu_components())
    assert one.per_gpu_allocated_bytes == many.per_gpu_allocated_bytes
    # more GPUs only add the NCCL buffers (planner.memory.overheads)
    assert many.per_gpu_total_bytes - one.per_gpu_total_bytes == 256 * 2**20


@st.composite
def serving_archs(draw):
    heads = draw(st.sampled_from([4, 8, 16]))
    kv = draw(st.sampled_from([d for d in (1, 2, 4, 8) if heads % d == 0]))
    head_dim = draw(st.sampled_from([32, 64, 128]))
    family = draw(st.sampled_from(["llama", "mistral", "gemma2"]))
    cfg = {"model_type": family, "hidden_size": heads * head_dim, "num_hidden_layers": draw(st.integers(2, 8)),
           "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": head_dim,
           "intermediate_size": 2 * heads * head_dim, "vocab_size": draw(st.integers(1000, 64000)),
           "max_position_embeddings": 32768}
    if family != "llama":
        cfg["sliding_window"] = draw(st.sampled_from([16, 100, 1024, 4096]))
    return from_hf_config(cfg)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@settings(max_examples=100, deadline=None)
@given(serving_archs(), st.integers(1, 32768), st.sampled_from([16, 100, 512, 2048, 8192]),
       st.integers(2, 40), st.booleans())
def test_vllm_sequences_are_the_largest_concurrency_that_fits(arch, context, batched, gib, window):
    from planner.memory import vllm_budget
    from planner.core.units import GiB

    def need(concurrency):
        # gpu_memory_utilization 0.5: vLLM's usable share is exact in integers (no float rounding).
        w = workload_from_mapping({"model": "m", "task": "infer", "engine": "vllm", "context": context,
                                   "concurrency": concurrency, "max_num_batched_tokens": batched,
                                   # vllm serve refuses fewer batched tokens than sequences
                                   "max_num_seqs": min(1024, batched), "gpu_memory_utilization": 0.5,
                                   "sliding_window": window},
                                  lambda n, e: (n, "test", arch))
        return w, estimate(w)

    total = gib * GiB
    w, est = need(1)
    b = vllm_budget(w, est, cuda_total=total)
    seqs = b.sequences
    assume(seqs < 65536)  # the workload's concurrency limit
    if seqs >= 1:
        assert need(seqs)[1].per_gpu_total_bytes <= total
    assert need(seqs + 1)[1].per_gpu_total_bytes > total
