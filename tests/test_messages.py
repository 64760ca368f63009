"""Hints of input errors: close-match ranking, option spelling, and what to write instead.

Each test checks the exact message (the line a user reads), outside the pytest.raises block.
"""

from __future__ import annotations

import pytest

from planner.core.errors import ScenarioError, close_matches, did_you_mean
from planner.core.fields import Entry
from planner.workload.inputs import OptionError, option_form
from planner.core.yamlio import LineDict, LineList

GPU_IDS = ["rtx-3090", "rtx-3060-12gb", "rtx-5090", "rtx-4090", "rtx-4080", "h100-sxm", "h100-nvl", "h100-pcie"]


# ----- did_you_mean / close_matches -------------------------------------------------------------

def test_prefix_matches_come_before_difflib_order():
    # difflib alone ranks 'rtx-3090' (ratio 0.875) above 'rtx-3060-12gb' (0.76); the prefix match wins.
    assert close_matches("rtx-3060", GPU_IDS) == ["rtx-3060-12gb", "rtx-3090", "rtx-5090"]
    assert did_you_mean("rtx-3060", GPU_IDS) == "Did you mean 'rtx-3060-12gb' or 'rtx-3090' or 'rtx-5090'?"


def test_prefix_matches_keep_difflib_order_among_themselves():
    # ratios: h100-sxm 0.667, h100-nvl 0.667 (ties: name descending, as difflib), h100-pcie 0.615
    assert close_matches("h100", GPU_IDS) == ["h100-sxm", "h100-nvl", "h100-pcie"]


def test_contained_text_is_matched():
    # difflib finds nothing for '3060' (best ratio 0.5, 'rtx-3090'; 'rtx-3060-12gb' 0.47); containment does.
    assert close_matches("3060", GPU_IDS) == ["rtx-3060-12gb"]


def test_typo_without_prefix_still_uses_difflib():
    assert did_you_mean("rtx-4900", GPU_IDS) == "Did you mean 'rtx-4090' or 'rtx-4080' or 'rtx-5090'?"


def test_short_text_is_not_a_prefix_hint():
    # one or two characters prefix too much to be a suggestion: only difflib, which finds nothing here
    assert close_matches("h1", GPU_IDS) == []


def test_nothing_close_lists_the_valid_names():
    assert did_you_mean("zzz", ["b", "a"]) == "Valid: a, b."
    assert did_you_mean("zzz", []) is None


# ----- option_form: hints of command-line errors name options -------------------------------------

def test_option_form_rewrites_file_keys():
    assert option_form("Set method: qlora, or remove prepare_kbit_training.") == \
        "Set --method qlora, or remove --prepare-kbit-training."
    assert option_form("'dataset_size' sizes the training DataLoader") == "--dataset-size sizes the training DataLoader"
    # a boolean key's value is the flag's form (--load-in-8bit/--no-load-in-8bit)
    assert option_form("Set load_in_8bit: true, or use_dora: false.") == "Set --load-in-8bit, or --no-use-dora."


def test_option_form_leaves_plain_words_and_paths():
    text = "gpus counts every GPU; see ./prepare_kbit_training/config.json and tp=3 (model llama)."
    assert option_form(text) == text


def test_option_error_names_options_in_problem_and_hint():
    err = OptionError("prepare_kbit_training is set but method is full", entry="prepare_kbit_training",
                      hint="Set method: qlora, or remove prepare_kbit_training.")
    # the command line prints the options; the exception (the API's) names the keywords as passed
    assert err.cli_line() == ("--prepare-kbit-training: --prepare-kbit-training is set but method is full. "
                              "Set --method qlora, or remove --prepare-kbit-training.")
    assert str(err) == ("prepare_kbit_training: prepare_kbit_training is set but method is full. "
                        "Set method=qlora, or remove prepare_kbit_training.")
    assert err.entry == "prepare_kbit_training"


# ----- Entry: the bad value is named and the hint says what to write ------------------------------

def _entry(data: dict, lines: dict | None = None) -> Entry:
    d = LineDict(data)
    d.lines = lines or {k: i + 2 for i, k in enumerate(data)}
    d.line = 1
    return Entry(d, file="s.yaml", path="constraints", error=ScenarioError)


def test_list_item_that_is_a_number_is_named_with_close_names():
    items = LineList([3060])
    items.lines = [7]
    e = _entry({"allowed_gpus": items})
    with pytest.raises(ScenarioError) as info:
        e.str_list("allowed_gpus", names=GPU_IDS)
    assert str(info.value) == ("s.yaml:7: constraints.allowed_gpus[0]: must be a name (text), not the number 3060. "
                               "Did you mean 'rtx-3060-12gb'?")


def test_list_item_that_is_empty_or_a_boolean():
    e = _entry({"vendors": ["nvidia", True], "targets": ["q_proj", ""]})
    with pytest.raises(ScenarioError) as info:
        e.str_list("vendors", choices=["nvidia", "amd", "intel"])
    with pytest.raises(ScenarioError) as info2:
        e.str_list("targets")
    assert str(info.value) == ("s.yaml:2: constraints.vendors[1]: must be a name (text), not true. "
                               "Valid: amd, intel, nvidia.")
    assert str(info2.value) == "s.yaml:3: constraints.targets[1]: must be a name (text), not an empty text."


def test_scalar_number_instead_of_a_list():
    e = _entry({"allowed_gpus": 4090})
    with pytest.raises(ScenarioError) as info:
        e.str_list("allowed_gpus", names=GPU_IDS)
    assert str(info.value) == ("s.yaml:2: constraints.allowed_gpus: must be a name (text) or a list of names, "
                               "not the number 4090. Did you mean 'rtx-4090'?")


@pytest.mark.parametrize("value, expected", [
    ("no", "not 'no'. Write true or false (YAML booleans, no quotes): pin: false."),
    (0, "not 0. Write true or false (YAML booleans, no quotes): pin: false."),
    ("yes", "not 'yes'. Write true or false (YAML booleans, no quotes): pin: true."),
    ("maybe", "not 'maybe'. Write true or false (YAML booleans, no quotes)."),
])
def test_bool_hint(value, expected):
    e = _entry({"pin": value})
    with pytest.raises(ScenarioError) as info:
        e.bool("pin")
    assert str(info.value) == "s.yaml:2: constraints.pin: must be true or false, " + expected


def test_choice_given_a_non_text_lists_the_choices():
    e = _entry({"checkpointing": True})
    with pytest.raises(ScenarioError) as info:
        e.str("checkpointing", choices=("none", "full"))
    # read from a file, a boolean also gets why YAML made it one (planner.core.fields._choice_note); no
    # choice is a yes/no word, so quoting would not help: the note says to write a choice
    assert str(info.value) == ("s.yaml:2: constraints.checkpointing: must be one of the choices, not true. "
                               "Valid: none, full. YAML reads an unquoted yes, no, on, off, true or false as a "
                               "boolean: write one of the choices.")


@pytest.mark.parametrize("key, value, hint", [
    ("budget_usd", "5000 USD", "Write a plain number of US dollars, without quotes or currency: budget_usd: 5000."),
    # a comma may be a decimal comma ($5) or group thousands ($5000): the hint gives both (issue 28, h7b 1), the
    # decimal one without its zeros (5.000 would read as 5 or 5000 again: h17b #4)
    ("budget_usd", "$5,000", "Write budget_usd: 5 if the comma is a decimal comma, or budget_usd: 5000 if it "
                             "separates thousands."),
    ("budget_usd", "five grand", "Write a plain number of US dollars, e.g. budget_usd: 5000."),
    ("vram_headroom", "0.1", "Write the number without quotes: vram_headroom: 0.1."),
    ("vram_headroom", "10 %", "Write a plain number, without quotes or unit."),
])
def test_number_given_as_text(key, value, hint):
    e = _entry({key: value})
    with pytest.raises(ScenarioError) as info:
        e.number(key)
    assert str(info.value) == f"s.yaml:2: constraints.{key}: must be a number, not {value!r}. {hint}"


def test_missing_required_key_hint():
    e = _entry({"a": 1})
    with pytest.raises(ScenarioError) as info:
        e.check_keys(["a", "source"], required=["source"], hints={"source": "Add source: where it came from."})
    assert str(info.value) == "s.yaml:1: constraints: missing required key 'source'. Add source: where it came from."


# ----- values that look close to what was meant -------------------------------------------------

def test_yaml_exponent_without_dot_is_text_and_the_hint_says_how_to_write_it():
    # YAML 1.1 (PyYAML) needs a dot and a signed exponent for a float: '1e300' stays text.
    e = Entry(LineDict({"unit_price_usd": "1e300"}), file="s.yaml", error=ScenarioError)
    with pytest.raises(ScenarioError) as err:
        e.number("unit_price_usd")
    msg = str(err.value)
    assert msg == "s.yaml: unit_price_usd: must be a number, not '1e300'. YAML reads 1e300 as text; write unit_price_usd: 1.0e+300."


def test_choice_key_close_to_auto_is_named():
    from planner.catalog.loader import load_catalog
    from planner.solve.scenario import scenario_from_mapping

    data = {"workloads": [{"name": "w", "model": "qwen2.5-0.5b", "task": "train", "zero": "autoo"}]}
    with pytest.raises(ScenarioError) as err:
        scenario_from_mapping(data, load_catalog(), file="s.yaml")
    msg = str(err.value)
    assert msg == ("s.yaml:1: workloads[0].zero: 'autoo' is not a value of zero. Did you mean 'auto'? Write zero: auto "
                   "(every valid value), one value or a list of them.")


def test_fit_target_close_to_max_is_named():
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["fit", "--model", "llama-2-7b", "--gpu", "rtx-4090", "--task", "train",
                                  "--micro-batch", "maxx"])
    assert r.exit_code == 2
    assert r.output.strip() == "Error: --micro-batch: must be a whole number or 'max', not 'maxx'. Did you mean 'max'?"


def test_options_that_would_do_nothing_are_refused():
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--group-size", "128"])
    assert r.exit_code == 2
    assert r.output.strip() == ("Error: --group-size: --group-size applies to int4-gptq and int4-awq weights, not bf16. "
                                "Remove it, or set --weights int4-gptq or int4-awq.")
    r = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "train", "--dataset-format", "python"])
    assert r.exit_code == 2
    assert r.output.strip() == ("Error: --dataset-format: --dataset-format says how the dataset is held, but there is "
                                "no --dataset-size to hold. Give --dataset-size too (e.g. --dataset-size 10 GiB), or "
                                "remove it.")


def test_fit_errors_name_the_option_the_user_typed():
    from click.testing import CliRunner

    from planner.cli.main import main

    run = lambda *a: CliRunner().invoke(main, [str(x) for x in a])  # noqa: E731
    r = run("fit", "--model", "llama-3.1-8b", "--task", "infer", "--gpu", "rtx-4090", "--gpus", 3, "--concurrency",
            "max")
    assert r.exit_code == 2
    assert r.output.strip() == ("Error: --gpus: an inference replica on 3 GPUs runs at tp 3: tp=3 does not divide the "
                                "32 attention heads. Use one of 1, 2, 4, 8, 16, 32.")
    r = run("fit", "--model", "llama-3.1-8b", "--task", "infer", "--gpu", "rtx-4090", "--micro-batch", "max")
    assert r.exit_code == 2
    assert r.output.strip() == ("Error: --micro-batch: is an option of task train, not infer. Give --task train, or "
                                "another target for task infer.")
    r = run("plan", "--debug", "scenarios/qlora-7b-12gb.yaml")
    assert r.exit_code == 2
    assert "--debug goes before the command: " in r.output and "--debug plan ...'" in r.output


# ----- estimate: values for another command, options without the one they need ---------------------

@pytest.mark.parametrize("args, output", [
    # 'max' belongs to planner fit: the error says so
    (["--task", "infer", "--concurrency", "max"],
     "Error: --concurrency: 'planner estimate' takes a whole number, not 'max'. 'planner fit' finds the largest "
     "concurrency that fits a card: planner fit --gpu ID --concurrency max (with the same other options).\n"),
    # other values: planner's line, naming what the option takes (h19b M1)
    (["--task", "train", "--micro-batch", "four"],
     "Error: --micro-batch: 'four' is not a whole number. --micro-batch takes a whole number written in ASCII "
     "digits.\n"),
    # --headroom without a card names the option
    (["--task", "train", "--headroom", "0.1"],
     "Error: --headroom: --headroom applies to the fit check on a card: give --gpu ID with it. For example --gpu "
     "h100-sxm ('planner catalog gpus' lists the ids), or leave --headroom out.\n"),
    # --gpus below one has a hint, worded for training and for inference replicas
    (["--task", "train", "--gpus", "0"],
     "Error: --gpus: must be at least 1, not 0. Give a count from 1 to 65536: every GPU the job runs on "
     "(data-parallel ranks x tensor-parallel degree).\n"),
    (["--task", "infer", "--gpus", "0"],
     "Error: --gpus: must be at least 1, not 0. Give a count from 1 to 65536: the GPUs the inference replicas run "
     "on, --tp N each (without --tp N, one replica on all of them).\n"),
])
def test_estimate_option_errors_are_one_line_with_a_hint(args, output):
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["estimate", "--model", "gpt2", *args])
    assert r.exit_code == 2
    assert r.output == output


def test_gpus_in_a_scenarios_inference_workload_says_what_to_write():
    # A standalone workload file's gpus: N means what --gpus N means (N / tp replicas); in a scenario the
    # solver sizes one replica, so the key is refused there with what to write instead.
    e = Entry({"model": "gpt2", "task": "infer", "gpus": 2}, file="s.yaml", path="workloads[0]", error=ScenarioError)
    from planner.catalog.loader import load_catalog
    from planner.workload.inputs import make_resolver
    from planner.workload.spec import workload_from_entry

    with pytest.raises(ScenarioError) as err:
        workload_from_entry(e, make_resolver(load_catalog()))
    assert str(err.value) == ("s.yaml: workloads[0].gpus: 'gpus' is an option of task train, not infer. A scenario's "
                              "inference workload is one replica on tp GPUs, which the solver counts: set tp: N, or "
                              "task: train.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_vllm_with_the_default_context_names_the_max_model_len_to_start_with():
    # vllm serve defaults max_model_len to the model's maximum (131,072 for Llama 3.1) and refuses to start
    # when one sequence that long does not fit its KV cache; the plan sized 4,096 tokens.
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    args = ["estimate", "--model", "llama-3.1-70b", "--task", "infer", "--engine", "vllm", "--gpu", "h100-sxm",
            "--tp", "2"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    note = ("vLLM: the plan assumes context 4,096 (the default); start vllm serve with --max-model-len 4096: it "
            "defaults to the model's maximum, 131,072 tokens, and refuses to start when one sequence that long does "
            "not fit the KV cache (at most 22,496 tokens here).")
    assert r.output.splitlines()[-1] == "Note: " + note
    assert note in json.loads(CliRunner().invoke(main, [*args, "--json"]).output)["notes"]
    given = CliRunner().invoke(main, [*args, "--context", "4096"])
    assert "--max-model-len" not in given.output


def test_vllm_past_the_models_maximum_names_the_environment_variable():
    from click.testing import CliRunner

    from planner.cli.main import main

    r = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                                  "--context", "200000"])
    assert r.exit_code == 0, r.output
    assert ("Warning: vLLM refuses a max_model_len (200,000) above the model's maximum (max_position_embeddings "
            "131,072) unless the environment of vllm serve sets VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.") in r.output.splitlines()
