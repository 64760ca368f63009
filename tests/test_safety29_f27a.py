"""Issue 28, hostile pass 26: config.json layer indices and expert groups, close matches for --gpu, --lora-targets
and other options.

Covers h26b M1 (qwen2_moe / qwen3_moe ``mlp_only_layers`` with an index outside 0..num_hidden_layers-1 or listed
twice, deepseek ``n_group`` that does not divide ``n_routed_experts`` (or, in V3, leaves one expert per group) and
``topk_group`` above ``n_group``: refused at the key, one line naming the file, the key and the allowed range);
M2 (a GPU given by the name nvidia-smi and torch print, ``NVIDIA H100 80GB HBM3``, in --gpu and a scenario's GPU
lists: the catalog id the driver-name table maps it to as the hint); M3 (LoRA targets joined by ';', '|', '/' or
':' get the "N names in one text" hint the blank-separated form gets, in the CLI and in a scenario); M4 (vLLM's
--kv-cache-dtype spellings fp8_e4m3, fp8_e5m2, bfloat16 and auto given to --kv-dtype, and --weights gptq-int4:
planner's spelling as the hint).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.cli.main import main as cli_main
from planner.core.errors import ModelConfigError
from planner.model.architecture import from_hf_config

# Qwen1.5-MoE-A2.7B's shape (24 layers: indices 0..23), as the h26b report gives it
_QWEN2_MOE = {"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
              "shared_expert_intermediate_size": 5632, "num_attention_heads": 16, "num_hidden_layers": 24,
              "num_key_value_heads": 16, "vocab_size": 151936, "max_position_embeddings": 8192, "num_experts": 60,
              "num_experts_per_tok": 4, "decoder_sparse_step": 1, "mlp_only_layers": [], "torch_dtype": "bfloat16",
              "rms_norm_eps": 1e-6, "tie_word_embeddings": False}

# DeepSeek-V3's shape: 256 routed experts in n_group 8 groups of 32, the best topk_group 4 groups kept
_DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
                "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128,
                "num_hidden_layers": 61, "num_key_value_heads": 128, "vocab_size": 129280,
                "max_position_embeddings": 163840, "n_routed_experts": 256, "n_shared_experts": 1,
                "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "kv_lora_rank": 512,
                "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_group": 8,
                "topk_group": 4, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-6, "tie_word_embeddings": False}


def _refusal(cfg: dict) -> ModelConfigError:
    with pytest.raises(ModelConfigError) as got:
        from_hf_config(cfg, "m")
    return got.value


# ----- M1: mlp_only_layers indices, DeepSeek expert groups ----------------------------------------------------------

@pytest.mark.parametrize("index", [24, 999, -1])
def test_an_mlp_only_layer_outside_the_model_is_refused(index: int) -> None:
    err = _refusal({**_QWEN2_MOE, "mlp_only_layers": [3, index]})
    assert err.entry == "mlp_only_layers"
    assert f"holds {index}, which is no layer of this model: the layers are 0 to 23 (num_hidden_layers 24)" in str(err)


def test_an_mlp_only_layer_listed_twice_is_refused() -> None:
    err = _refusal({**_QWEN2_MOE, "mlp_only_layers": [5, 0, 5]})
    assert err.entry == "mlp_only_layers"
    assert "lists layer 5 more than once" in str(err) and "List each layer once: [0, 5]." in str(err)


def test_the_qwen3_moe_reader_reads_mlp_only_layers_the_same_way() -> None:
    cfg = {**_QWEN2_MOE, "model_type": "qwen3_moe", "head_dim": 128, "mlp_only_layers": [999]}
    err = _refusal(cfg)
    assert err.entry == "mlp_only_layers" and "the layers are 0 to 23" in str(err)


def test_the_last_layer_and_the_first_are_real_layers() -> None:
    # 22 dense layers (1..22), two sparse (0 and 23): fewer parameters than all sparse, more than one sparse
    two = from_hf_config({**_QWEN2_MOE, "mlp_only_layers": list(range(1, 23))}, "m").parameters
    one = from_hf_config({**_QWEN2_MOE, "mlp_only_layers": list(range(23))}, "m").parameters
    # a sparse layer holds 519,170,048 parameters more than a dense one (tests/test_safety28_moe_dense.py)
    assert two - one == 519_170_048


def test_topk_group_above_n_group_is_refused() -> None:
    err = _refusal({**_DEEPSEEK_V3, "topk_group": 9})
    assert err.entry == "topk_group"
    assert "topk_group (9) is above n_group (8)" in str(err) and "from 1 to 8" in str(err)


def test_topk_group_above_the_v3_default_n_group_is_refused() -> None:
    cfg = {k: v for k, v in _DEEPSEEK_V3.items() if k != "n_group"}  # DeepseekV3Config's default: 8
    assert "above n_group (8)" in str(_refusal({**cfg, "topk_group": 9}))
    assert from_hf_config({**cfg, "topk_group": 8}, "m").parameters == from_hf_config(_DEEPSEEK_V3, "m").parameters


def test_n_group_that_does_not_divide_the_experts_is_refused() -> None:
    err = _refusal({**_DEEPSEEK_V3, "n_group": 7})
    assert err.entry == "n_group"
    # the divisors of 256 beside 7: 4 and 8
    assert "n_group (7) does not divide n_routed_experts (256)" in str(err) and "4 or 8" in str(err)


def test_valid_groups_are_accepted_and_size_nothing() -> None:
    base = from_hf_config(_DEEPSEEK_V3, "m").parameters
    assert from_hf_config({**_DEEPSEEK_V3, "n_group": 1, "topk_group": 1}, "m").parameters == base
    assert from_hf_config({**_DEEPSEEK_V3, "n_group": 128, "topk_group": 128}, "m").parameters == base


def test_a_v3_group_of_one_expert_is_refused() -> None:
    err = _refusal({**_DEEPSEEK_V3, "n_group": 256, "topk_group": 4})
    assert err.entry == "n_group"
    # 256 experts / 256 groups = 1 per group; at most 256 // 2 = 128 groups of two
    assert "leaves 1 expert per group" in str(err) and "at most 128" in str(err)


@pytest.mark.parametrize(("change", "key"), [({"mlp_only_layers": [999]}, "mlp_only_layers"),
                                             ({"topk_group": 9}, "topk_group")])
def test_the_cli_names_the_file_line_and_key(tmp_path: Path, capsys, monkeypatch, change: dict, key: str) -> None:
    cfg = {**(_QWEN2_MOE if key == "mlp_only_layers" else _DEEPSEEK_V3), **change}
    (tmp_path / "m").mkdir()
    text = json.dumps(cfg, indent=2)
    (tmp_path / "m" / "config.json").write_text(text)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip().startswith(f'"{key}"'))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as got:
        cli_main(["estimate", "--model", "./m", "--task", "infer"])
    err = capsys.readouterr().err
    assert got.value.code == 2
    assert err.startswith(f"Error: m/config.json:{line}: {key}: "), err
    assert err.count("\n") == 1 and "Traceback" not in err


# ----- M2: --gpu given the name nvidia-smi and torch print ----------------------------------------------------------

@pytest.mark.parametrize(("name", "gpu_id"), [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"),       # catalog.devices.TORCH_DEVICE_NAMES: PCI id 2330, the SXM5 card
    ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("GeForce RTX 4090", "rtx-4090"),            # drivers before R470 leave out 'NVIDIA '
    ("nvidia  h100 80gb hbm3", "h100-sxm"),      # case and runs of blanks as catalog.devices.device_key ignores them
])
def test_a_driver_name_gets_its_catalog_id(capsys, name: str, gpu_id: str) -> None:
    with pytest.raises(SystemExit) as got:
        cli_main(["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", name])
    err = capsys.readouterr().err
    assert got.value.code == 2
    assert err == (f"Error: --gpu: unknown GPU {name!r}. Did you mean {gpu_id!r}? That is planner's id for the GPU "
                   "nvidia-smi and torch call by that name.\n")


def test_the_start_of_a_driver_name_gets_the_ids_it_begins() -> None:
    from planner.catalog.loader import load_catalog
    from planner.core.errors import CatalogError

    cat = load_catalog()
    with pytest.raises(CatalogError) as got:
        cat.gpu("H100 80GB")  # begins 'NVIDIA H100 80GB HBM3' only
    assert "Did you mean 'h100-sxm'? That is planner's id for the GPU whose nvidia-smi" in str(got.value)
    with pytest.raises(CatalogError) as got:
        cat.gpu("NVIDIA H100")  # begins 'NVIDIA H100 PCIe', '... 80GB HBM3', '... NVL', in the table's order
    assert "Did you mean 'h100-pcie' or 'h100-sxm' or 'h100-nvl'? Those are planner's ids" in str(got.value)


def test_a_name_without_a_blank_keeps_the_usual_close_matches() -> None:
    from planner.catalog.devices import device_name_hint

    assert device_name_hint("H100", ["h100-sxm", "h100-pcie"]) is None
    assert device_name_hint("NVIDIA RTX", ["rtx-4090"]) is None  # no digit: every card would match
    assert device_name_hint("NVIDIA H100 80GB HBM3", ["rtx-4090"]) is None  # an overlay without the card


def test_a_scenario_gpu_list_gets_the_same_hint(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: g\nconstraints:\n  allowed_gpus: [NVIDIA GeForce RTX 4090]\n"
                    "workloads:\n  - name: w1\n    model: llama-2-7b\n    task: infer\n")
    with pytest.raises(SystemExit) as got:
        cli_main(["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    err = capsys.readouterr().err
    assert got.value.code == 2
    assert err == (f"Error: {path}:3: constraints.allowed_gpus: unknown GPU 'NVIDIA GeForce RTX 4090'. Did you mean "
                   "'rtx-4090'? That is planner's id for the GPU nvidia-smi and torch call by that name.\n")


# ----- M3: --lora-targets joined by another separator ---------------------------------------------------------------

@pytest.mark.parametrize("sep", [";", "|", "/", ":", "; ", " "])
def test_lora_targets_joined_by_a_separator_get_the_comma_hint(capsys, sep: str) -> None:
    given = f"q_proj{sep}v_proj"
    with pytest.raises(SystemExit) as got:
        cli_main(["estimate", "--model", "llama-2-7b", "--task", "train", "--method", "lora", "--lora-targets", given])
    err = capsys.readouterr().err
    assert got.value.code == 2
    assert err == (f"Error: --lora-targets: LoRA target {given!r} is not a linear module of llama. That is 2 names in "
                   "one text: separate them with commas, --lora-targets q_proj,v_proj.\n")


def test_a_scenario_lora_targets_text_gets_the_list_hint(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: l\nworkloads:\n  - name: w1\n    model: llama-2-7b\n    task: train\n    method: lora\n"
                    "    lora_targets: q_proj|k_proj;v_proj\n")
    with pytest.raises(SystemExit) as got:
        cli_main(["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    err = capsys.readouterr().err
    assert got.value.code == 2
    assert err == (f"Error: {path}:7: workloads[0].lora_targets: LoRA target 'q_proj|k_proj;v_proj' is not a linear "
                   "module of llama. That is 3 names in one text: write the list in brackets, "
                   "lora_targets: [q_proj, k_proj, v_proj].\n")


def test_a_separator_between_names_that_are_not_all_known_keeps_the_close_match() -> None:
    from planner.core.list_hints import bracket_hint

    assert bracket_hint("lora_targets", "q_proj;vv_proj", ["q_proj", "v_proj"]) is None
    assert bracket_hint("allowed_gpus", "rtx-4090/l40s", ["rtx-4090", "l40s"]) == (
        "That is 2 names in one text: write the list in brackets, allowed_gpus: [rtx-4090, l40s].")


# ----- M4: vLLM's --kv-cache-dtype spellings, weights with the words reversed ---------------------------------------

def _cli_error(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as got:
        cli_main(["estimate", "--model", "llama-2-7b", "--task", "infer", "--engine", "vllm", *args])
    err = capsys.readouterr().err
    assert got.value.code == 2 and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("given", ["fp8_e4m3", "fp8_e5m2", "FP8_E4M3"])
def test_vllm_fp8_kv_cache_dtypes_point_at_fp8(capsys, given: str) -> None:
    assert _cli_error(capsys, "--kv-dtype", given) == (
        f"Error: --kv-dtype: {given!r} is not one of the choices: planner spells it fp8 (one byte per value, as e4m3 "
        "and e5m2 both store). Write --kv-dtype fp8.\n")


def test_vllm_auto_kv_cache_dtype_points_at_the_default(capsys) -> None:
    # the default kv_dtype is the weights' dtype where they are 16- or 32-bit: fp16 with --weights fp16
    err = _cli_error(capsys, "--weights", "fp16", "--kv-dtype", "auto")
    assert err.startswith("Error: --kv-dtype: 'auto' is not one of the choices: vLLM's auto is the dtype the model runs "
                          "in; planner's default, with --kv-dtype left out, is fp16 here. Remove --kv-dtype"), err
    # and bf16 for quantized weights
    assert "is bf16 here" in _cli_error(capsys, "--weights", "int4-awq", "--kv-dtype", "auto")


def test_the_fp8_the_hint_names_is_taken() -> None:
    from planner import estimate

    a = estimate(model="llama-2-7b", task="infer", engine="vllm", kv_dtype="fp8")
    b = estimate(model="llama-2-7b", task="infer", engine="vllm")
    assert a.per_gpu_total_bytes < b.per_gpu_total_bytes  # a 1-byte KV cache, smaller than the bf16 default


@pytest.mark.parametrize(("given", "meant"), [("gptq-int4", "int4-gptq"), ("awq_int4", "int4-awq"),
                                              ("AWQ-INT4", "int4-awq")])
def test_weights_with_the_words_reversed_get_the_planner_spelling(capsys, given: str, meant: str) -> None:
    assert _cli_error(capsys, "--weights", given) == (
        f"Error: --weights: {given!r} is not one of the choices. Did you mean {meant!r}? planner writes the bit width "
        "first.\n")


def test_a_scenario_kv_dtype_auto_is_still_plan_s_choice(tmp_path: Path, capsys) -> None:
    # in a scenario, kv_dtype: auto asks plan to try every KV dtype (docs/scenarios.md): not vLLM's auto
    path = tmp_path / "s.yaml"
    path.write_text("name: k\nworkloads:\n  - name: w1\n    model: llama-2-7b\n    task: infer\n    engine: vllm\n"
                    "    kv_dtype: auto\n")
    with pytest.raises(SystemExit) as got:
        cli_main(["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    assert got.value.code == 0
    assert json.loads((tmp_path / "o" / "k.json").read_text())
