"""Issue 28, hostile pass 28: a quantized checkpoint's lists of unquantized modules, and quantization_config junk.

Covers h28b N2 (AWQ and FP8 ``modules_to_not_convert``, bitsandbytes ``llm_int8_skip_modules``, GPTQ
``modules_in_block_to_quantize`` and gpt-oss MXFP4 ``modules_to_not_convert`` are sized: the modules they keep
out of the quantization count as 16-bit weights, as compressed-tensors' ``ignore`` already did) and N3 (an fp8
``weight_block_size`` that is not two whole numbers of at least 1, a compressed-tensors ``ignore`` entry ``re:...``
that is no regular expression, ``ignore`` / ``targets`` / the module lists that are no lists of names: refused at
config.json's ``quantization_config`` with one line, exit 2, ModelConfigError in the API) and M7 (a 4-bit AWQ / GPTQ
``group_size`` that does not divide hidden_size: told at config.json's key, not blamed on ``--group-size``) and M3
(AWQ ``version`` / ``zero_point``, GPTQ ``desc_act`` / ``sym`` / ``checkpoint_format`` of the wrong kind: refused there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.cli.main import main as cli_main
from planner.core.errors import InputError, ModelConfigError
from planner.memory import estimate as estimate_workload
from planner.memory.quant import nf4_constant_bits, weight_bytes
from planner.model.architecture import from_hf_config
from planner.model.quantization import KeptModules, kept_modules
from planner.workload.spec import workload_from_mapping

# A small Llama: 2 layers, width 512, MLP 1,536, 8 heads (no GQA), vocabulary 1,000, untied head.
L, H, I, V = 2, 512, 1536, 1000
_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": H, "num_hidden_layers": L,
          "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": I, "vocab_size": V,
          "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "hidden_act": "silu", "torch_dtype": "bfloat16",
          "tie_word_embeddings": False}
ATTN = L * 4 * H * H  # q, k, v, o projections: 2,097,152 values
MLP = L * 3 * H * I  # gate, up, down: 4,718,592 values
REST = 2 * V * H + (2 * L + 1) * H  # embedding and head, 2 RMSNorms a layer and the final one
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
BNB = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
       "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "bfloat16"}
FP8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128]}


def _weights(q: dict, **extra) -> int:
    """Bytes of the weights component of an inference estimate of the small Llama with ``q``."""
    arch = from_hf_config(dict(_LLAMA, quantization_config=q), "m")
    w = workload_from_mapping({"model": "m", "task": "infer", "context": 1024, **extra}, lambda n, e: (n, "test", arch))
    est = estimate_workload(w)
    return next(c.bytes for c in est.gpu_components() if c.name.startswith("weights ("))


# ----- N2: the lists are sized ---------------------------------------------------------------------------------------

def test_awq_modules_to_not_convert_keeps_the_mlp_16_bit() -> None:
    groups = ATTN // 128  # one fp16 scale and one packed 4-bit zero per 128 inputs of a row
    expected = ATTN // 2 + groups * 2 + groups // 2 + (MLP + REST) * 2
    assert _weights(dict(AWQ, modules_to_not_convert=["mlp"])) == expected
    every = (ATTN + MLP) // 2 + (ATTN + MLP) // 128 * 2 + (ATTN + MLP) // 256 + REST * 2
    assert _weights(AWQ) == every  # without the list every projection is 4-bit


def test_gptq_modules_in_block_to_quantize_lists_the_quantized_ones() -> None:
    q = dict(GPTQ, modules_in_block_to_quantize=[["self_attn.k_proj", "self_attn.v_proj", "self_attn.q_proj"],
                                                 ["self_attn.o_proj"]])
    groups = ATTN // 128
    g_idx = L * 4 * H * 4  # one int32 per input feature of each quantized projection
    assert _weights(q) == ATTN // 2 + groups * 2 + groups // 2 + g_idx + (MLP + REST) * 2


def test_bitsandbytes_skip_modules_keep_the_mlp_16_bit() -> None:
    consts = round(ATTN * nf4_constant_bits(True) / 8)
    assert _weights(dict(BNB, llm_int8_skip_modules=["mlp"]), weights="nf4") == ATTN // 2 + consts + (MLP + REST) * 2


def test_fp8_modules_to_not_convert_keeps_the_mlp_16_bit() -> None:
    blocks = L * 4 * (H // 128) * (H // 128)  # one fp32 scale per 128 x 128 block of each attention projection
    assert _weights(dict(FP8, modules_to_not_convert=["mlp"])) == ATTN + blocks * 4 + (MLP + REST) * 2
    per_tensor = {k: v for k, v in FP8.items() if k != "weight_block_size"}
    expected = ATTN + L * 4 * 4 + (MLP + REST) * 2  # one fp32 scale per quantized tensor
    assert _weights(dict(per_tensor, modules_to_not_convert=["mlp"])) == expected


def test_gpt_oss_experts_listed_stay_bf16() -> None:
    from tests.catalog_yaml import catalog_models

    cfg = dict(catalog_models()["gpt-oss-20b"]["config"])
    q = dict(cfg["quantization_config"])
    plain = from_hf_config(cfg, "gpt-oss-20b")
    mx = weight_bytes(plain, "mxfp4")
    q["modules_to_not_convert"] = [*q["modules_to_not_convert"], "model.layers.*.mlp.experts"]
    kept = weight_bytes(plain, "mxfp4", keep=kept_modules(q))
    experts = plain.expert_parameters  # 4.25 bits a value become 16
    assert kept.total == mx.total - experts // 2 - experts // 32 + experts * 2
    assert "left bf16 by quantization_config.modules_to_not_convert" in kept.formula
    # the shipped list names attention, router, embedding and head: the experts stay MXFP4
    assert weight_bytes(plain, "mxfp4", keep=kept_modules(cfg["quantization_config"])).total == mx.total


@pytest.mark.parametrize("entry, path, kept", [
    ("mlp", "model.layers.3.mlp.up_proj", True),  # a part of the path (Transformers 4: key in name)
    ("model.layers.*.self_attn", "model.layers.7.self_attn.q_proj", True),  # a regex from the start (Transformers 5)
    ("model.layers.1.mlp", "model.layers.2.mlp.up_proj", False),
    ("lm_head", "model.layers.0.mlp.down_proj", False),
    ("re:[", "model.layers.0.mlp.down_proj", False),  # no regular expression: read as text
])
def test_transformers_skip_rule(entry: str, path: str, kept: bool) -> None:
    assert KeptModules("modules_to_not_convert", (entry,)).keeps(path) is kept


def test_gptq_names_are_suffixes_of_the_quantized_modules() -> None:
    keep = KeptModules("modules_in_block_to_quantize", ("self_attn.q_proj",), only=True)
    assert not keep.keeps("model.layers.0.self_attn.q_proj")
    assert keep.keeps("model.layers.0.self_attn.k_proj")


# ----- N3: junk in quantization_config refused at its key -----------------------------------------------------------

def _ct(ignore, targets=("Linear",)) -> dict:
    w = {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 128, "dynamic": False}
    return {"quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
            "config_groups": {"group_0": {"targets": list(targets) if isinstance(targets, tuple) else targets,
                                          "weights": w, "input_activations": None}}, "ignore": ignore}


CASES = {
    "w_01": (dict(FP8, weight_block_size=[0, 128]), "quantization_config.weight_block_size must be two whole numbers"),
    "w_bool": (dict(FP8, weight_block_size=[True, True]), "not [true, true]"),
    "w_one": (dict(FP8, weight_block_size=[128]), "not [128]"),
    "w_text": (dict(FP8, weight_block_size="=1+1"), 'not "=1+1"'),
    "ct_re": (_ct(["re:["]), 'quantization_config.ignore[0]: "re:[" is not a regular expression'),
    "ct_star": (_ct(["re:*"]), "(nothing to repeat)"),
    "ct_true": (_ct(True), "quantization_config.ignore must be a list of names"),
    "ct_text": (_ct("lm_head"), 'not "lm_head"'),
    "ct_ints": (_ct([1, 2]), "quantization_config.ignore[0] must be a name"),
    "ct_targets": (_ct(["lm_head"], 7), "quantization_config.config_groups.group_0.targets must be a list of names"),
    "awq_text": (dict(AWQ, modules_to_not_convert="mlp"), "quantization_config.modules_to_not_convert must be a list"),
    "mx_map": ({"quant_method": "mxfp4", "modules_to_not_convert": {"a": 1}}, 'not {"a": 1}'),
    "bnb_num": (dict(BNB, llm_int8_skip_modules=[1]), "quantization_config.llm_int8_skip_modules[0] must be a name"),
    "gptq_num": (dict(GPTQ, modules_in_block_to_quantize=[[1]]), "modules_in_block_to_quantize[0][0] must be a name"),
    # M7: a checkpoint's group size that does not divide the width is told at config.json's key, not --group-size
    "gptq_g7": (dict(GPTQ, group_size=7), "quantization_config.group_size 7 does not divide the model's width "
                "(hidden_size 512)"),
    "awq_g1e5": (dict(AWQ, group_size=100000), "quantization_config.group_size 100000 does not divide"),
    # M3: AWQ / GPTQ settings of the wrong kind
    "awq_version": (dict(AWQ, version="=1+1"), 'quantization_config.version must be one of gemm, gemv, exllama, ipex'),
    "awq_zero": (dict(AWQ, zero_point="<img src=x>"), 'quantization_config.zero_point must be true or false'),
    "gptq_desc": (dict(GPTQ, desc_act="=1+1"), 'quantization_config.desc_act must be true or false, not "=1+1"'),
    "gptq_sym": (dict(GPTQ, sym=[1]), "quantization_config.sym must be true or false, not [1]"),
    "gptq_format": (dict(GPTQ, checkpoint_format='=HYPERLINK("x")'), "quantization_config.checkpoint_format must be"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_junk_is_refused_at_quantization_config(tmp_path: Path, monkeypatch, capsys, name: str) -> None:
    q, words = CASES[name]
    cfg = dict(_LLAMA, quantization_config=q)
    if q.get("quant_method") == "mxfp4":  # mxfp4 needs a mixture of experts: a tiny gpt-oss shape
        cfg = dict(cfg, model_type="gpt_oss", architectures=["GptOssForCausalLM"], num_local_experts=4,
                   num_experts_per_tok=2, head_dim=64)
    code, err = estimate_refused(tmp_path, monkeypatch, capsys, cfg)
    assert code == 2
    assert err.startswith("Error: m/config.json:1: quantization_config: "), err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    with pytest.raises(ModelConfigError) as api:
        from_hf_config(cfg, "m/config.json")
    assert isinstance(api.value, InputError)
    assert words in str(api.value)


def test_good_lists_are_taken() -> None:
    for q in (dict(FP8, weight_block_size=[128, 128]), _ct(["lm_head", "re:.*mlp.*"]),
              dict(GPTQ, modules_in_block_to_quantize=[["self_attn.q_proj"]]), dict(BNB, llm_int8_skip_modules=None),
              dict(AWQ, version="GEMM"), dict(GPTQ, checkpoint_format="gptq_v2")):  # AutoAWQ writes GEMM
        from_hf_config(dict(_LLAMA, quantization_config=q), "m/config.json")


def estimate_refused(tmp_path: Path, monkeypatch, capsys, cfg: dict) -> tuple[object, str]:
    """``planner estimate`` of the model ``cfg`` (written to tmp_path/m/config.json), run in process from tmp_path:
    its exit code and standard error (a run that exits 0 fails the test)."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as got:
        cli_main(["estimate", "--model", "./m", "--task", "infer", "--context", "1024", "--gpu", "h100-sxm"])
    return got.value.code, capsys.readouterr().err
