"""Common spellings accepted, or answered with the exact fix (issue 31, item 4).

- an on/off flag given a value, as a scenario's key takes it: ``--flash-attention false`` is
  ``--no-flash-attention`` (planner.cli.options.bool_spellings);
- ``dataset_tokens: 2B`` read as ``tokens_per_month: 200M`` is (parse_token_count);
- ``engine: ollama`` refused with the llama.cpp settings to write out (Ollama's defaults differ
  from llama.cpp's, so it is not a silent alias); llama.cpp spelled without its dot refused with
  the spelling;
- a GGUF weight type (``Q4_K_M``) without engine llama.cpp refused, naming the engine to add;
- the model ids users type: Llama-3.3-70B (Meta released only the instruction-tuned 70B), the
  instruction-tuned Llama 3.1 8B and Qwen2.5 7B.
"""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.cli.options import bool_spellings

LLAMA_8B = ["--model", "llama-3.1-8b", "--task", "infer"]


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


def _estimate_json(args: list[str]) -> dict:
    result = _run(["estimate", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# ----- on/off flags with a value ----------------------------------------------------------------------


def test_bool_spellings_rewrite_a_flag_given_a_boolean_word():
    @click.command()
    @click.option("--flash-attention/--no-flash-attention", default=None)
    @click.argument("rest", nargs=-1)
    def cmd(flash_attention, rest):  # pragma: no cover - only its parameters are read
        pass

    assert bool_spellings(cmd, ["--flash-attention", "false"]) == ["--no-flash-attention"]
    assert bool_spellings(cmd, ["--flash-attention=off"]) == ["--no-flash-attention"]
    assert bool_spellings(cmd, ["--flash-attention", "Yes"]) == ["--flash-attention"]
    assert bool_spellings(cmd, ["--no-flash-attention", "false"]) == ["--flash-attention"]  # not not
    assert bool_spellings(cmd, ["--flash-attention", "x.yaml"]) == ["--flash-attention", "x.yaml"]
    assert bool_spellings(cmd, ["--", "--flash-attention", "false"]) == ["--", "--flash-attention", "false"]


@pytest.mark.parametrize("spelling", [["--flash-attention", "false"], ["--flash-attention=off"],
                                      ["--flash-attention", "no"], ["--flash-attention", "0"]])
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_flash_attention_false_is_no_flash_attention(spelling):
    args = LLAMA_8B + ["--engine", "llama.cpp"]
    expected = _estimate_json(args + ["--no-flash-attention"])
    assert _estimate_json(args + spelling) == expected
    assert _estimate_json(args + ["--flash-attention", "true"]) == _estimate_json(args + ["--flash-attention"])
    assert expected != _estimate_json(args + ["--flash-attention"])  # the setting does change the estimate


def test_a_flag_given_a_word_that_is_no_boolean_names_the_spellings():
    result = _run(["estimate", *LLAMA_8B, "--engine", "llama.cpp", "--flash-attention", "maybe"])
    assert result.exit_code == 2
    assert ("Error: --flash-attention: 'maybe' is not on or off. Give --flash-attention or --no-flash-attention "
            "alone, or --flash-attention true/false (also yes/no, on/off, 1/0).") in result.output


# ----- dataset_tokens with a suffix --------------------------------------------------------------------


def _workload(tmp_path, value: str):
    path = tmp_path / "w.yaml"
    path.write_text(f"name: w\nmodel: llama-3.1-8b\ntask: train\nmethod: qlora\ndataset_tokens: {value}\n")
    return _run(["estimate", "--workload", str(path), "--gpu", "rtx-4090", "--json"])


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_dataset_tokens_takes_the_token_suffixes(tmp_path):
    plain = _workload(tmp_path, "2000000000")
    assert plain.exit_code == 0, plain.output
    for spelling in ("2B", "2B tokens", "2000M"):  # '2b tokens' refused since h15b #3
        result = _workload(tmp_path, spelling)
        assert result.exit_code == 0, (spelling, result.output)
        assert json.loads(result.output) == json.loads(plain.output), spelling
    # an exponent is refused in token counts as in sizes (docs/scenarios.md), with the suffix form as the hint
    exponent = _workload(tmp_path, "2e9")
    assert exponent.exit_code == 2
    assert "writes its number with an exponent (2e9)" in exponent.output and "dataset_tokens: 2B." in exponent.output


def test_dataset_tokens_not_a_whole_count_names_the_fix(tmp_path):
    fraction = _workload(tmp_path, "2.5")
    words = _workload(tmp_path, "lots")
    assert fraction.exit_code == 2 and words.exit_code == 2
    assert "dataset_tokens: 2.5 is not a whole number of tokens" in fraction.output
    assert "Write dataset_tokens: 2." in fraction.output
    assert "'lots' is not a token count" in words.output and "dataset_tokens: 2B" in words.output


# ----- engines and GGUF weights ---------------------------------------------------------------------------


def test_engine_ollama_is_answered_with_the_llama_cpp_settings_to_give():
    result = _run(["estimate", *LLAMA_8B, "--engine", "ollama"])
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.startswith("Error: --engine: Ollama is not an engine the planner sizes by that name.")
    for part in ("--engine llama.cpp", "--context N from the CONTEXT column of 'ollama ps'", "--no-flash-attention",
                 "OLLAMA_FLASH_ATTENTION", "--kv-dtype as OLLAMA_KV_CACHE_TYPE (f16 when unset)",
                 "--concurrency as OLLAMA_NUM_PARALLEL"):
        assert part in line, part
    assert "Traceback" not in result.output


def test_engine_ollama_in_a_scenario_names_file_line_and_key(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("workloads:\n  - name: chat\n    model: llama-3.1-8b\n    task: infer\n    engine: Ollama\n")
    result = _run(["plan", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"{path}:5: workloads[0].engine: Ollama is not an engine" in result.output
    assert "engine: llama.cpp with the settings your Ollama runs with written out, context: N" in result.output


def test_llama_cpp_without_its_dot_is_answered_with_the_spelling():
    result = _run(["estimate", *LLAMA_8B, "--engine", "llamacpp"])
    assert result.exit_code == 2
    assert "Error: --engine: 'llamacpp' is spelled llama.cpp here. Write --engine llama.cpp." in result.output


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_gguf_weights_without_llama_cpp_name_the_engine_to_add():
    default = _run(["estimate", *LLAMA_8B, "--weights", "Q4_K_M"])
    vllm = _run(["estimate", *LLAMA_8B, "--engine", "vllm", "--weights", "q4_k_m"])
    assert default.exit_code == 2 and vllm.exit_code == 2
    assert ("Error: --weights: 'Q4_K_M' is a GGUF weight type, which the planner sizes with engine llama.cpp, not "
            "with the default engine hf. Add --engine llama.cpp;") in default.output
    assert "Replace --engine vllm by --engine llama.cpp;" in vllm.output
    # and with the engine added it is sized
    assert _run(["estimate", *LLAMA_8B, "--engine", "llama.cpp", "--weights", "Q4_K_M"]).exit_code == 0
    assert _run(["estimate", *LLAMA_8B, "--weights", "bf16"]).exit_code == 0  # a GGUF type's name too, and hf's


# ----- model ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Llama-3.3-70B", "llama-3.3-70b", "Llama-3.3-70B-Instruct",
                                  "meta-llama/Llama-3.3-70B-Instruct"])
def test_llama_3_3_70b_names_the_instruct_model(name):
    out = _estimate_json(["--model", name, "--task", "infer", "--gpu", "h100-sxm"])
    assert out["model"] == "llama-3.3-70b-instruct"
    # Hugging Face's safetensors total for meta-llama/Llama-3.3-70B-Instruct: 70,553,706,496
    assert out["parameters"] == 70_553_706_496


def test_llama_3_1_8b_instruct_is_the_base_architecture():
    instruct = _estimate_json(["--model", "llama-3.1-8b-instruct", "--task", "infer", "--gpu", "rtx-4090"])
    base = _estimate_json(["--model", "llama-3.1-8b", "--task", "infer", "--gpu", "rtx-4090"])
    assert instruct["model"] == "llama-3.1-8b-instruct"
    assert instruct["parameters"] == base["parameters"] == 8_030_261_248
    assert instruct["per_gpu_total_bytes"] == base["per_gpu_total_bytes"]


def test_qwen2_5_7b_instruct_has_its_own_context_limit():
    # the -Instruct config.json: max_position_embeddings 32768 (the base's is 131072), the base's parameters
    instruct = _estimate_json(["--model", "Qwen2.5-7B-Instruct", "--task", "infer", "--gpu", "rtx-4090"])
    assert instruct["model"] == "qwen2.5-7b-instruct" and instruct["parameters"] == 7_615_616_512
    long = _run(["estimate", "--model", "qwen2.5-7b-instruct", "--task", "infer", "--context", "65536"])
    assert "exceeds the model's max_position_embeddings (32768)" in long.output
