"""Issue 28, hostile pass 18B minors (a-h): inputs said back as written, and hints that point somewhere.

a. A config.json value is shown in the config's own syntax (``true``, ``null``, ``[null, false]``), not as Python
   prints it (``True``, ``None``).
b. A terminal line is wrapped at the width of the text as shown, control characters as their escapes: a warning
   holding ``\\x07`` x 20 is not cut into a line of just "a" (the escape made it 60 characters longer).
c. num_key_value_heads that does not divide the heads names the nearest divisors.
d. ``architectures`` naming another supported model_type's class is warned about (Transformers builds the
   class of model_type).
e. ``lm_head`` / ``embed_tokens`` as LoRA targets are called the output layer and an embedding; a fused
   ``qkv_proj`` / ``gate_up_proj`` names the separate modules of this model.
f. A Hugging Face page address as ``model`` names the hub id it holds (and the catalog id whose hf_id it is).
g. A calibration's ``versions`` keys and values are package names and versions.
h. ``model: ~`` says that ``~`` is YAML's null.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

# Llama-2-7B's published config.json (meta-llama/Llama-2-7b-hf), the keys planner reads
_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
          "vocab_size": 32000, "max_position_embeddings": 4096, "torch_dtype": "float16"}


def _config(tmp_path: Path, **changes: object) -> Path:
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**_LLAMA, **changes}))
    return p


def _estimate(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["estimate", *args], env=env)


# ---- a

@pytest.mark.parametrize("value, shown", [(True, "true"), ([None, False], "[null, false]"), ({"a": None}, '{"a": null}')])
def test_a_config_value_is_shown_as_json_writes_it(tmp_path: Path, value: object, shown: str) -> None:
    c = _config(tmp_path, num_hidden_layers=value)
    r = _estimate("--model", str(c), "--task", "infer")
    assert r.exit_code == 2
    assert f"num_hidden_layers must be a whole number, not {shown}." in r.stderr, r.stderr
    assert "True" not in r.stderr and "None" not in r.stderr


# ---- b

def test_a_warning_is_wrapped_as_the_terminal_shows_it(tmp_path: Path) -> None:
    c = _config(tmp_path, quantization_config={"quant_method": "h" + "\x07" * 22 + "qq", "bits": 3})
    r = _estimate("--model", str(c), "--task", "infer", env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Warning: the model's config.json declares"))
    block = []
    for line in lines[start:]:
        if block and not line.startswith("  "):
            break
        block.append(line)
    # every line within the width; escaping after the wrap made lines of 120 characters and a line of "3)"
    assert all(len(line) <= 100 for line in block), block
    assert "h" + "\\x07" * 22 + "qq" in " ".join(block)
    assert all(len(line.strip()) > 10 for line in block), block
    # the hint names both places a choice is written (the CLI has --weights, a file weights:)
    assert "--weights" in " ".join(block)


# ---- c

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("kv, near", [(5, "4 or 8"), (48, "32"), (3, "2 or 4")])
def test_kv_heads_that_do_not_divide_name_the_nearest_divisors(tmp_path: Path, kv: int, near: str) -> None:
    c = _config(tmp_path, num_key_value_heads=kv)
    r = _estimate("--model", str(c), "--task", "infer")
    assert r.exit_code == 2
    # the divisors of 32 are 1, 2, 4, 8, 16, 32: the nearest below and above kv
    assert f"the nearest that divide 32: {near}." in r.stderr, r.stderr


# ---- d

def test_architectures_of_another_model_type_is_warned_about(tmp_path: Path) -> None:
    c = _config(tmp_path, model_type="mistral")
    r = _estimate("--model", str(c), "--task", "infer", env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert ("Warning: config.json's architectures names LlamaForCausalLM, the class of model_type llama, but its "
            "model_type is mistral") in r.stdout, r.stdout


@pytest.mark.parametrize("changes", [{}, {"architectures": ["SomethingElseForCausalLM"]},
                                     {"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"],
                                      "head_dim": 128}])
def test_matching_or_unknown_architectures_give_no_warning(tmp_path: Path, changes: dict) -> None:
    c = _config(tmp_path, **changes)
    r = _estimate("--model", str(c), "--task", "infer")
    assert r.exit_code == 0, r.output
    assert "architectures names" not in r.stdout


# ---- e

def test_lm_head_as_a_lora_target_is_called_the_output_layer() -> None:
    r = _estimate("--model", "llama-2-7b", "--task", "train", "--method", "lora", "--lora-targets", "q_proj,lm_head")
    assert r.exit_code == 2
    assert "LoRA target 'lm_head' is the output layer, which planner does not size adapters on" in r.stderr
    assert "not a linear module" not in r.stderr


@pytest.mark.parametrize("target, parts", [("qkv_proj", "q_proj,k_proj,v_proj"), ("gate_up_proj", "gate_proj,up_proj")])
def test_a_fused_lora_target_names_the_separate_modules(target: str, parts: str) -> None:
    r = _estimate("--model", "llama-2-7b", "--task", "train", "--method", "lora", "--lora-targets", target)
    assert r.exit_code == 2
    assert f"LoRA target '{target}' names a fused module" in r.stderr
    assert r.stderr.rstrip().endswith(f"Give them all: {parts}."), r.stderr


def test_a_mistyped_lora_target_still_gets_close_matches() -> None:
    r = _estimate("--model", "llama-2-7b", "--task", "train", "--method", "lora", "--lora-targets", "q_porj")
    assert r.exit_code == 2
    assert "Did you mean 'q_proj'" in r.stderr


# ---- f

def test_a_hugging_face_page_names_the_hub_id_and_the_catalog_id() -> None:
    r = _estimate("--model", "https://huggingface.co/meta-llama/Llama-2-7b-hf/tree/main", "--task", "infer")
    assert r.exit_code == 2
    # catalog/models.yaml: llama-2-7b has hf_id meta-llama/Llama-2-7b-hf
    assert "the page names the hub id meta-llama/Llama-2-7b-hf" in r.stderr
    assert "give its id llama-2-7b" in r.stderr


def test_a_web_address_in_a_scenario_is_said_to_be_one(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text("name: s\nworkloads:\n  - name: a\n    model: https://hf.co/org/unknown-model\n    task: infer\n")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "r")])
    assert r.exit_code == 2
    assert f"Error: {s}:4: workloads[0].model: 'https://hf.co/org/unknown-model' is a web address" in r.stderr
    assert "huggingface-cli download org/unknown-model config.json" in r.stderr
    assert "looked for" not in r.stderr


# ---- g

_CAL = ("schema_version: 1\ngpus:\n  - gpu_name: NVIDIA L4\n    cuda_context: 500 MiB\n    allocator_fraction: 0.05\n"
        "    measured_on: 2026-11-01\n    versions: {versions}\n")
_EST_L4 = ["--model", "llama-2-7b", "--task", "infer", "--context", "1024", "--gpu", "l4"]


@pytest.mark.parametrize("versions, problem", [
    ('{torch: "banana"}', "gpus[0].versions.torch: 'banana' is not a version"),
    ('{"tor ch": "2.5.1"}', "gpus[0].versions: key 'tor ch' is not a package name"),
])
def test_calibration_versions_are_package_names_and_versions(tmp_path: Path, versions: str, problem: str) -> None:
    c = tmp_path / "cal.yaml"
    c.write_text(_CAL.format(versions=versions))
    r = _estimate(*_EST_L4, "--calibration", str(c))
    assert r.exit_code == 2
    assert f"Error: {c}:7: {problem}" in r.stderr, r.stderr


@pytest.mark.parametrize("versions", ['{torch: "2.5.1+cu124", cuda: "12.4"}', '{torch: "2.6.0a0+git1b2c3d4"}',
                                      '{cuda: "None"}'])
def test_versions_as_torch_reports_them_are_read(tmp_path: Path, versions: str) -> None:
    c = tmp_path / "cal.yaml"
    c.write_text(_CAL.format(versions=versions))
    r = _estimate(*_EST_L4, "--calibration", str(c))
    assert r.exit_code == 0, r.output


# ---- h

def test_a_null_model_is_said_to_be_yamls_null(tmp_path: Path) -> None:
    s = tmp_path / "s.yaml"
    s.write_text("name: s\nworkloads:\n  - name: a\n    model: ~\n    task: infer\n")
    r = CliRunner().invoke(main, ["plan", str(s), "--out", str(tmp_path / "r")])
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {s}:4: workloads[0].model: must be a non-empty text, not empty. Write a text after "
                        "'model:' (nothing there, or ~, is YAML's null).\n")
