"""LoRA on an LLM.int8 base (``load_in_8bit``): the int8 weights, the inputs bitsandbytes' 8-bit
matmul keeps on its autograd ctx (through checkpointing too), its working buffers, and the
options that cannot run.

Each expected value is derived beside it from the shapes. The whole-step accuracy is in
reports/validation.md (the grid's 'lora int8' runs, measured with bitsandbytes 0.50.2 on the CPU)
and tests/test_published.py (the bitsandbytes blog's LLaMA-7B int8 row).
"""

from __future__ import annotations


import pytest
from click.testing import CliRunner

from planner.model.architecture import from_hf_config
from planner.catalog.loader import load_catalog
from planner.cli.main import main
from planner.core.errors import InputError
from planner.memory import estimate
from planner.memory.activations import activation_parts
from planner.memory.layer import LayerOptions, layer_saved_tensors
from planner.memory.saved import regime_for
from planner.memory.quant import int8_training_buffer_bytes
from planner.speed.timing import default_mfu
from planner.workload.spec import check_gpu_support, workload_from_mapping
from tests.catalog_yaml import catalog_models


#: h 256, q 256 (8 heads of 32), kv 64, f 704, 3 layers.
TOY = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 3, "num_attention_heads": 8,
       "num_key_value_heads": 2, "intermediate_size": 704, "vocab_size": 8000}


def catalog_arch(model_id: str):
    models = catalog_models()
    return from_hf_config(models[model_id]["config"], model_id)


def workload(arch, **keys):
    return workload_from_mapping({"model": "m", "task": "train", **keys}, lambda name, entry: (name, "test", arch))


def component(est, name: str) -> int:
    found = [c.bytes for c in est.gpu_components() if c.name == name]
    assert len(found) == 1, name
    return found[0]


def test_int8_base_weights_of_llama_2_7b():
    # 32 layers x (4 x 4096^2 attention + 3 x 4096 x 11008 MLP) = 6,476,005,376 int8 params;
    # one fp32 scale per output row: 32 x (4 x 4096 + 2 x 11008 + 4096) = 1,359,872 rows;
    # embeddings and head 2 x 32,000 x 4,096 + 65 norms x 4,096 = 262,410,240 params in bf16.
    est = estimate(workload(catalog_arch("llama-2-7b"), method="lora", load_in_8bit=True))
    assert component(est, "weights (frozen INT8 base)") == 6_476_005_376 + 1_359_872 * 4 + 262_410_240 * 2
    # prepare_kbit_training casts what stays unquantized to fp32
    prep = estimate(workload(catalog_arch("llama-2-7b"), method="lora", load_in_8bit=True, prepare_kbit_training=True))
    assert component(prep, "weights (frozen INT8 base)") == 6_476_005_376 + 1_359_872 * 4 + 262_410_240 * 4


def _layer_bytes(arch, **kw):
    return sum(t.bytes_per_token for t in layer_saved_tensors(arch, regime_for("pure-bf16"), LayerOptions(full=False,
                                                              lora_targets=("q_proj", "v_proj"), lora_rank=8, **kw)))


@pytest.mark.parametrize("attention, extra", [
    # the attention norm output (h, shared by q/k/v), the MLP norm output (h, shared by gate/up) and
    # down_proj's input (f), 2 B each; SDPA already keeps its output, o_proj's input
    ("sdpa", 2 * (256 + 256 + 704)),
    # eager's attention output is a new contiguous tensor: o_proj's 8-bit layer keeps it too (q = 256)
    ("eager", 2 * (256 + 256 + 256 + 704)),
])
def test_8bit_linears_keep_their_inputs(attention, extra):
    arch = from_hf_config(TOY, "toy")
    base = _layer_bytes(arch, attention=attention)
    int8 = _layer_bytes(arch, attention=attention, base_keeps_inputs=True)
    assert int8 - base == extra


def test_first_layer_q_k_v_keep_no_input_below_a_frozen_embedding():
    # Layer 0's input does not require grad (frozen embedding, no checkpointing): its q/k/v 8-bit
    # layers build no graph and keep nothing; past the q/v adapters everything requires grad.
    arch = from_hf_config(TOY, "toy")
    first = _layer_bytes(arch, attention="sdpa", base_keeps_inputs=True, input_requires_grad=False)
    later = _layer_bytes(arch, attention="sdpa", base_keeps_inputs=True)
    assert later - first == 2 * 256
    kw = dict(micro_batch=2, seq_len=128, attention="sdpa", full=False, checkpointing="none",
              lora_targets=("q_proj", "v_proj"), lora_rank=8)
    plain = activation_parts(arch, regime_for("pure-bf16"), **kw)
    int8 = activation_parts(arch, regime_for("pure-bf16"), base_keeps_inputs=True, **kw)
    tokens = 2 * 128
    assert int8.saved - plain.saved == tokens * (3 * 2 * (256 + 256 + 704) - 2 * 256)


def test_checkpointing_does_not_drop_what_the_8bit_matmul_keeps_on_its_ctx():
    # bitsandbytes stores the input as ctx.tensors, not through save_for_backward, so non-reentrant
    # checkpointing's saved-tensor hooks cannot drop it: every layer keeps 2 x (h + q + h + f) B per
    # token beside its checkpoint (o_proj's input too: the SDPA output, whose own saved copy
    # checkpointing drops, stays on o_proj's ctx); the recomputed layer keeps them again, o_proj's
    # input there once, shared with SDPA.
    arch = from_hf_config(TOY, "toy")
    kw = dict(micro_batch=2, seq_len=128, attention="sdpa", full=False, checkpointing="full",
              lora_targets=("q_proj", "v_proj"), lora_rank=8)
    plain = activation_parts(arch, regime_for("pure-bf16"), **kw)
    int8 = activation_parts(arch, regime_for("pure-bf16"), base_keeps_inputs=True, **kw)
    tokens = 2 * 128
    assert int8.saved - plain.saved == tokens * 2 * (256 + 256 + 256 + 704) * 3
    assert int8.recompute - plain.recompute == tokens * 2 * (256 + 256 + 704)
    assert "checkpointing does not drop" in int8.saved_formula


def test_8bit_matmul_buffers_cuda_and_cpu():
    arch = from_hf_config(TOY, "toy")
    T = 2048
    # CUDA, bf16 activations: quantizing down_proj's input (in 704): T x 704 x (2 fp16 copy + 1 int8
    # + 2 |A| + 1 mask) + 4T = 8,658,944; the int8 matmul of gate/up (256 -> 704): T x (256 + 704 x
    # (4 int32 + 2 fp16 before the bf16 cast)) + 4T = 9,183,232; the dequantized largest weight,
    # 704 x 256 x 2 = 360,448. The largest: the matmul.
    cuda, text = int8_training_buffer_bytes(arch, tokens=T, act_bytes=2, act_fp16=False)
    assert cuda == T * (256 + 704 * 6) + 4 * T == 9_183_232
    assert "int32" in text
    # fp16 activations need neither the copy nor the cast: T x 704 x 4 + 4T = 5,775,360 quantizing,
    # T x (256 + 704 x 4) + 4T = 6,299,648 in the matmul
    assert int8_training_buffer_bytes(arch, tokens=T, act_bytes=2, act_fp16=True)[0] == T * (256 + 704 * 4) + 4 * T
    # the CPU path (MatMul8bitFp) dequantizes the weight in the forward and backward and quantizes nothing
    assert int8_training_buffer_bytes(arch, tokens=T, act_bytes=2, act_fp16=False, cpu=True)[0] == 704 * 256 * 2


def test_estimate_of_8bit_lora_names_its_parts():
    est = estimate(workload(from_hf_config(TOY, "toy"), method="lora", load_in_8bit=True, micro_batch=2,
                            seq_len=1024))
    assert component(est, "8-bit matmul buffers") == 1024 * 2 * (256 + 704 * 6) + 4 * 2048
    assert "LLM.int8" in est.recipe_description
    assert any("keeps its input for backward" in n for n in est.notes)


@pytest.mark.parametrize("keys, field, words", [
    ({"method": "qlora", "load_in_8bit": True}, "load_in_8bit", "QLoRA's base is 4-bit NF4"),
    ({"method": "full", "load_in_8bit": True}, "load_in_8bit", "int8 weights cannot train"),
    ({"method": "lora", "load_in_8bit": True, "recipe": "amp-bf16"}, "recipe", "keeps fp32 weights"),
    ({"method": "lora", "load_in_8bit": True, "gpus": 2, "tp": 2}, "tp", "does not run tensor parallel"),
    ({"method": "lora", "load_in_8bit": True, "gpus": 2, "zero": 3}, "zero", "no quant-storage option"),
    ({"method": "lora", "prepare_kbit_training": True}, "prepare_kbit_training", "without load_in_8bit"),
    ({"method": "lora", "load_in_8bit": True, "double_quant": False}, "double_quant", "method is lora"),
])
def test_8bit_lora_refuses_what_cannot_run(keys, field, words):
    with pytest.raises(InputError) as e:
        workload(from_hf_config(TOY, "toy"), **keys)
    assert e.value.entry == field
    assert words in str(e.value)


def test_8bit_lora_with_prepare_kbit_training_is_accepted():
    w = workload(from_hf_config(TOY, "toy"), method="lora", load_in_8bit=True, prepare_kbit_training=True)
    assert w.train.quantized_base == "int8" and w.train.method_label == "lora (LLM.int8 base)"


def test_8bit_lora_needs_int8_hardware():
    from planner.core.fields import Entry

    gaudi = load_catalog().gpu("gaudi-3")
    assert not gaudi.int8
    data = {"model": "m", "task": "train", "method": "lora", "load_in_8bit": True, "recipe": "pure-fp16"}
    arch = from_hf_config(TOY, "toy")
    w = workload_from_mapping(data, lambda name, entry: (name, "test", arch))
    with pytest.raises(InputError) as e:
        check_gpu_support(w, gaudi, Entry(data, file="s.yaml", path="workloads[0]"))
    assert e.value.entry.endswith("load_in_8bit")
    assert "method: qlora" in str(e.value)
    from planner.solve.candidates import precision_needs
    assert "int8" in precision_needs(w)


def test_8bit_lora_default_mfu_is_below_qlora():
    # pure-bf16's default x the method factor: 8-bit below QLoRA's 0.7 (assumptions, said in the reason)
    int8, qlora = default_mfu(recipe="pure-bf16", method="lora-int8"), default_mfu(recipe="pure-bf16", method="qlora")
    assert int8.value < qlora.value
    assert "MatMul8bitLt" in int8.reason


def test_cli_load_in_8bit_flag():
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "lora",
                                  "--load-in-8bit", "--checkpointing", "full", "--seq-len", "1024"])
    assert r.exit_code == 0, r.output
    assert "weights (frozen INT8 base)" in r.output
    assert "8-bit matmul buffers" in r.output
    bad = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "train", "--load-in-8bit"])
    assert bad.exit_code == 2
    assert "--load-in-8bit is set but method is full" in bad.output


def test_reentrant_checkpointing_keeps_no_8bit_inputs():
    # torch's reentrant checkpoint runs the forward under no_grad: no autograd graph, so no ctx holds
    # the 8-bit inputs; the layer checkpoints alone remain (measured: the grid's -reentrant run)
    arch = from_hf_config(TOY, "toy")
    kw = dict(micro_batch=2, seq_len=128, attention="sdpa", full=False, checkpointing="full",
              lora_targets=("q_proj", "v_proj"), lora_rank=8)
    plain = activation_parts(arch, regime_for("pure-bf16"), **kw)
    reentrant = activation_parts(arch, regime_for("pure-bf16"), base_keeps_inputs=True, reentrant=True, **kw)
    assert reentrant.saved == plain.saved and reentrant.ctx_kept == 0
    non = activation_parts(arch, regime_for("pure-bf16"), base_keeps_inputs=True, **kw)
    assert non.ctx_kept == 2 * 128 * 2 * (256 + 256 + 256 + 704) * 3


def test_the_estimate_says_what_non_reentrant_checkpointing_keeps_and_how_peft_differs():
    arch = from_hf_config(TOY, "toy")
    keys = dict(method="lora", load_in_8bit=True, checkpointing="full", micro_batch=2, seq_len=128)
    est = estimate(workload(arch, **keys, prepare_kbit_training=True))
    said = [n for n in est.notes if n.startswith("Non-reentrant checkpointing")]
    assert len(said) == 1 and "set use_reentrant: true" in said[0]
    assert not any(n.startswith("Non-reentrant") for n in estimate(workload(arch, **keys, use_reentrant=True)).notes)
    with pytest.raises(InputError) as e:
        workload(arch, method="lora", load_in_8bit=True, use_reentrant=True)
    assert e.value.entry == "use_reentrant"
    assert "checkpointing is none" in str(e.value)
