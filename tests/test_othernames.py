"""Names from other tools (issue 19, item 7): a key or option spelled as HF TrainingArguments,
torchtune, LitGPT, DeepSpeed, vLLM or llama.cpp spell it is refused with the planner's name, not a
wrong close match; lora_targets as one comma-separated text is split with a warning; '8k' gets a
hint. Expected messages are written out beside each case; the table itself is checked against the
readers' keys and values, so a row cannot point at a key that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main
from planner.solve.scenario import CONSTRAINT_KEYS
from planner.workload.othernames import other_names
from planner.workload.recipes import OPTIMIZERS, RECIPES
from planner.workload.spec import (
    ATTENTION,
    CHECKPOINTING,
    COMMON_KEYS,
    HOST_KEYS,
    INFER_KEYS,
    KV_DTYPES,
    METHODS,
    TRAIN_KEYS,
    WEIGHT_FORMATS,
)

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


def _one_line(args: list[str]) -> str:
    result = _run(args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def _workload(tmp_path: Path, task: str, extra: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(f"model: llama-2-7b\ntask: {task}\n{extra}\n")
    return str(path)


# ----- the messages ---------------------------------------------------------------------------------------

def test_batch_size_in_a_training_workload_names_micro_batch(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "batch_size: 4")])
    # before: "Did you mean 'dataset_size'?" (difflib's closest key)
    assert "dataset_size" not in line
    assert line.startswith(f"Error: {tmp_path}/w.yaml:3: batch_size: unknown key 'batch_size' (the name in "
                           "torchtune's recipe configs); the planner's key is 'micro_batch'. Write micro_batch: 4.")


@pytest.mark.parametrize("key, whose, planner_key", [
    ("per_device_train_batch_size", "Hugging Face TrainingArguments", "micro_batch"),
    ("train_micro_batch_size_per_gpu", "DeepSpeed's config", "micro_batch"),
    ("micro_batch_size", "LitGPT and Axolotl", "micro_batch"),
    ("lora_r", "LitGPT and Axolotl", "lora_rank"),
    ("max_seq_length", "TRL's SFTConfig and LitGPT", "seq_len"),
    ("block_size", "Transformers' run_clm.py and nanoGPT", "seq_len"),
])
def test_training_names_of_other_tools(tmp_path: Path, key: str, whose: str, planner_key: str) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", f"{key}: 8")])
    assert f"unknown key {key!r} (the name in {whose}); the planner's key is {planner_key!r}. " \
           f"Write {planner_key}: 8." in line


@pytest.mark.parametrize("key, value, whose, planner_key, write", [
    ("max_model_len", "8192", "vLLM", "context", "context: 8192"),
    ("tensor_parallel_size", "2", "vLLM", "tp", "tp: 2"),
    ("dtype", "bfloat16", "vLLM", "weights", "weights: bf16"),
    ("quantization", "awq", "vLLM", "weights", "weights: int4-awq"),
    ("kv_cache_dtype", "fp8_e4m3", "vLLM", "kv_dtype", "kv_dtype: fp8"),
    ("n_gpu_layers", "20", "llama.cpp's --n-gpu-layers", "gpu_layers", "gpu_layers: 20"),
])
def test_inference_names_of_other_tools(tmp_path: Path, key: str, value: str, whose: str, planner_key: str,
                                        write: str) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "infer", f"{key}: {value}")])
    assert f"unknown key {key!r} (the name in {whose}); the planner's key is {planner_key!r}. Write {write}." in line


def test_precision_names_the_recipe_and_lists_the_recipes(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "precision: bf16-true")])
    # Lightning Fabric's bf16-true keeps weights, gradients and states in bf16: the planner's pure-bf16
    assert "the planner's key is 'recipe'. Write recipe: pure-bf16." in line
    assert all(name in line for name in RECIPES), "the message lists the recipe values"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_same_name_means_a_task_s_own_key(tmp_path: Path) -> None:
    """dtype is a training workload's load dtype (Transformers' spelling; torchtune's bf16 is named its
    recipe) and vLLM's weight dtype; batch_size torchtune's micro-batch and a pipeline's sequences at once."""
    train = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "dtype: bf16")])
    infer = _one_line(["estimate", "--workload", _workload(tmp_path, "infer", "dtype: bf16")])
    assert "'bf16' is not a dtype from_pretrained loads in" in train
    assert "torchtune's dtype: bf16 is the planner's recipe: Write recipe: pure-bf16." in train
    assert "the planner's key is 'weights'. Write weights: bf16." in infer
    served = _one_line(["estimate", "--workload", _workload(tmp_path, "infer", "batch_size: 8")])
    assert "the planner's key is 'concurrency'. Write concurrency: 8." in served


def test_a_name_of_the_other_task_says_whose_option_it_is(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "n_gpu_layers: 8")])
    assert line.endswith("unknown key 'n_gpu_layers' (the name in llama.cpp's --n-gpu-layers); the planner's key "
                         "is 'gpu_layers', an option of task infer.")


def test_the_other_tasks_sequence_length_names_this_tasks_key(tmp_path: Path) -> None:
    # context (infer) and seq_len (train) are one quantity under two names: the hint gives the other name
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "context: 8192")])
    assert line == (f"Error: {tmp_path}/w.yaml:3: context: 'context' is an option of task infer, not train. "
                    "Write seq_len: 8192 (the sequence length of task train), or set task: infer.")
    line = _one_line(["estimate", "--model", "llama-2-7b", "--task", "infer", "--seq-len", "2048"])
    assert line == ("Error: --seq-len: --seq-len is an option of task train, not infer. "
                    "Write --context 2048 (the sequence length of task infer), or set --task train.")


def test_a_planner_key_of_the_other_task_keeps_its_message(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "concurrency: 8")])
    assert line == (f"Error: {tmp_path}/w.yaml:3: concurrency: 'concurrency' is an option of task infer, "
                    "not train. Remove it or set task: infer.")


def test_a_scenario_given_as_one_workload_says_plan_it(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("workloads:\n  - name: a\n    model: llama-2-7b\n    task: train\n")
    line = _one_line(["estimate", "--workload", str(path)])
    assert line == (f"Error: {path}:1: workloads: is a scenario (it has workloads:), not one workload. Plan it with "
                    "'planner plan FILE', or give one workload's keys (task:, model:, ...).")


def test_a_misspelling_still_gets_its_close_match(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "micro_bach: 2")])
    assert line.endswith("unknown key 'micro_bach'. Did you mean 'micro_batch'?")


def test_a_key_without_a_planner_key_says_so(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "method: lora\nlora_alpha: 32")])
    assert line.endswith("unknown key 'lora_alpha' (the name in peft, torchtune and LitGPT); the planner has no "
                         "key for it. lora_alpha scales the adapter's update (by alpha / r) and takes no memory: "
                         "remove it.")


def _scenario(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("key", ["gpu", "gpus", "gpu_model"])
def test_gpus_in_constraints_names_allowed_gpus(tmp_path: Path, key: str) -> None:
    path = _scenario(tmp_path, f"workloads:\n  - model: llama-2-7b\n    task: train\nconstraints:\n  {key}: [rtx-4090]\n")
    line = _one_line(["plan", path, "--out", str(tmp_path / "out")])
    assert line.startswith(f"Error: {path}:5: constraints.{key}: unknown key {key!r}; the planner's key is "
                           "'allowed_gpus'. Write allowed_gpus: [rtx-4090].")
    assert not (tmp_path / "out").exists()


def test_a_workload_name_at_the_top_level_belongs_in_a_workload(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "batch_size: 4\nworkloads:\n  - model: llama-2-7b\n    task: train\n")
    line = _one_line(["plan", path, "--out", str(tmp_path / "out")])
    assert line == (f"Error: {path}:1: batch_size: unknown key 'batch_size' (the name in torchtune's recipe "
                    "configs); the planner's workload key is 'micro_batch'. Write micro_batch in an entry of "
                    "'workloads:', indented under its '- ' (see scenarios/README.md).")


def test_a_scenario_workload_gets_the_same_message(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "workloads:\n  - model: llama-2-7b\n    task: train\n"
                               "    gradient_checkpointing: true\n")
    line = _one_line(["plan", path, "--out", str(tmp_path / "out")])
    assert line.startswith(f"Error: {path}:4: workloads[0].gradient_checkpointing: unknown key "
                           "'gradient_checkpointing' (the name in Hugging Face TrainingArguments and Axolotl); the "
                           "planner's key is 'checkpointing'. Write checkpointing: full.")


@pytest.mark.parametrize("option, says", [
    ("--batch-size", "the planner's option is '--micro-batch' (task train) or '--concurrency' (task infer)"),
    ("--tensor-parallel-size", "(the name in vLLM); the planner's option is '--tp'"),
    ("--lora-r", "(the name in LitGPT and Axolotl); the planner's option is '--lora-rank'"),
])
def test_command_line_options_of_other_tools(option: str, says: str) -> None:
    line = _one_line(["estimate", "--model", "llama-2-7b", option, "4"])
    assert line.startswith(f"Error: No such option {option!r} (the name in ")
    assert says in line
    assert "Did you mean" not in line


def test_an_unknown_option_keeps_click_s_close_matches() -> None:
    line = _one_line(["estimate", "--model", "llama-2-7b", "--micro-bach", "4"])
    assert "Did you mean" in line and "--micro-batch" in line


# ----- lora_targets as one text --------------------------------------------------------------------------

def test_lora_targets_as_one_comma_separated_text_is_split_and_said(tmp_path: Path) -> None:
    text = _run(["estimate", "--workload", _workload(tmp_path, "train", "method: lora\nlora_rank: 8\nlora_targets: q_proj,v_proj"),
                 "--json"])
    listed = _run(["estimate", "--workload", _workload(tmp_path, "train", "method: lora\nlora_rank: 8\nlora_targets: [q_proj, v_proj]"),
                   "--json"])
    assert text.exit_code == 0 and listed.exit_code == 0, text.output + listed.output
    import json

    a, b = json.loads(text.stdout), json.loads(listed.stdout)
    # the same two modules: the same trainable parameters (2 x 32 layers x r x (4096 + 4096) for r = 8)
    assert a["trainable_parameters"] == b["trainable_parameters"] == 2 * 32 * 8 * (4096 + 4096)
    warned = [w for w in a["warnings"] if w.startswith("lora_targets")]
    assert warned == ["lora_targets 'q_proj,v_proj' is one text: read as the list [q_proj, v_proj], as "
                      "--lora-targets reads it (write lora_targets: [q_proj, v_proj] to say so)"]
    assert not [w for w in b["warnings"] if w.startswith("lora_targets")]


def test_lora_targets_split_in_a_scenario_reaches_the_plan_warnings(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "workloads:\n  - model: llama-2-7b\n    task: train\n    method: qlora\n"
                               "    lora_targets: 'q_proj, v_proj'\nconstraints:\n  allowed_gpus: [rtx-4090]\n")
    result = _run(["plan", path, "--out", str(tmp_path / "out"), "--format", "json"])
    assert result.exit_code == 0, result.output
    import json

    doc = json.loads((tmp_path / "out" / "s.json").read_text())
    assert any(w.startswith("workload-1: lora_targets 'q_proj, v_proj' is one text: read as the list [q_proj, v_proj]")
               for w in doc["warnings"]), doc["warnings"]


# ----- counts with a suffix -------------------------------------------------------------------------------

@pytest.mark.parametrize("task, key, value, binary, decimal", [
    ("infer", "context", "8k", 8192, 8000),
    ("train", "seq_len", "8k", 8192, 8000),
    ("infer", "context", "32K", 32768, 32000),
])
def test_a_count_with_a_suffix_gets_the_number_to_write(tmp_path: Path, task: str, key: str, value: str,
                                                         binary: int, decimal: int) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, task, f"{key}: {value}")])
    assert line == (f"Error: {tmp_path}/w.yaml:3: {key}: must be a whole number, not {value!r}. Write the whole "
                    f"number, without a suffix: {key}: {binary} ({value[:-1]} x 1024) or {key}: {decimal}; the "
                    "planner reads no k or M, which may mean 1024 or 1000.")


def test_a_count_option_with_a_suffix_gets_the_number_to_write() -> None:
    line = _one_line(["estimate", "--model", "llama-2-7b", "--task", "infer", "--context", "8k"])
    assert line == ("Error: --context: '8k' is not a whole number. Write the whole number, without a suffix: "
                    "--context 8192 (8 x 1024) or --context 8000; the planner reads no k or M, which may mean "
                    "1024 or 1000.")


def test_a_count_with_separators(tmp_path: Path) -> None:
    line = _one_line(["estimate", "--workload", _workload(tmp_path, "train", "seq_len: 1,024")])
    assert line.endswith("seq_len: must be a whole number, not '1,024'. Write the number without separators: "
                         "seq_len: 1024.")


# ----- the table ------------------------------------------------------------------------------------------

_KEYS = {
    "train": set(COMMON_KEYS + HOST_KEYS + TRAIN_KEYS),
    "infer": set(COMMON_KEYS + HOST_KEYS + INFER_KEYS),
    "workload": set(COMMON_KEYS + HOST_KEYS + TRAIN_KEYS) & set(COMMON_KEYS + HOST_KEYS + INFER_KEYS),
    "constraints": set(CONSTRAINT_KEYS),
}
_VALUES = {"recipe": set(RECIPES), "optimizer": set(OPTIMIZERS), "weights": set(WEIGHT_FORMATS),
           "kv_dtype": set(KV_DTYPES), "checkpointing": set(CHECKPOINTING), "attention": set(ATTENTION),
           "method": set(METHODS), "flash_attention": {"true", "false"}}


def test_every_row_names_a_key_of_its_reader_and_is_no_key_itself() -> None:
    rows = other_names()
    assert len({(r.where, r.name) for r in rows}) == len(rows), "one row per name and place"
    for r in rows:
        assert r.name not in _KEYS[r.where], f"{r.name} is a planner key of {r.where}: the row is never read"
        if r.key is not None:
            # a train/infer row's key may be the other task's (gpu_layers for train is not in the table)
            assert r.key in _KEYS[r.where] or r.key == "gpus", f"{r.name} -> {r.key}: no such key in {r.where}"
        else:
            assert r.note, f"{r.name}: a name without a planner key says why"


def test_every_translated_value_is_one_the_reader_takes() -> None:
    for r in other_names():
        for theirs, ours in r.values.items():
            assert theirs == theirs.lower()
            assert ours in _VALUES[r.key], f"{r.name}: {theirs} -> {ours} is no {r.key} value"


def test_the_docs_list_every_row() -> None:
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    section = text[text.index("## Names from other tools"):]
    listed = re.findall(r"^\| `([a-z_0-9]+)` \| ([^|]+) \|", section, re.MULTILINE)
    where = {"training workload": "train", "inference workload": "infer", "any workload": "workload",
             "`constraints`": "constraints"}
    assert sorted((where[w.strip()], n) for n, w in listed) == sorted((r.where, r.name) for r in other_names())


def test_an_unknown_card_of_a_known_family_gets_that_family() -> None:
    # 'h100-80gb' is how vendors and clouds name the card; the catalog's ids are h100-sxm, h100-pcie, h100-nvl.
    # difflib alone ranks a100-80gb-* closer (more shared characters); the first '-' part is the family.
    from planner.core.errors import close_matches

    gpus = ["a100-80gb-sxm", "a100-80gb-pcie", "a100-40gb-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "rtx-4090"]
    assert set(close_matches("h100-80gb", gpus)) == {"h100-sxm", "h100-pcie", "h100-nvl"}
    # a maker's prefix without a digit (rtx-, llama-) is no family: difflib's order stands
    assert close_matches("rtx-4900", ["rtx-4090", "rtx-3060-12gb", "rtx-a4000"])[0] == "rtx-4090"
    line = _one_line(["estimate", "--model", "llama-2-7b", "--task", "train", "--gpu", "h100-80gb"])
    assert line == "Error: --gpu: unknown GPU 'h100-80gb'. Did you mean 'h100-sxm' or 'h100-nvl' or 'h100-pcie'?"
