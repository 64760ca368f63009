"""Issue 28, hostile pass 24: findings of report h24b fixed on branch f24c.

- M6: a 30,000-character unknown name is echoed as its first 80 characters and its length (the shared
  planner.core.names.clip_text) for GPU and platform ids (a scenario's constraints, ``--gpu``, ``fit(gpu=)``),
  ``--format`` items and ``--tokens-per-month`` workload names, as it was for models and choices; so is an
  unknown key of a mapping given to the API (at its entry) and an unknown keyword.
- M4: an unknown model in a scenario or workload file (or a mapping the API is given) ends with "model: takes
  ...", and ``model=`` in the API with "model= takes ..."; ``--model`` keeps "--model takes ...".
- M1: import-skypilot's left-out summary says every reason on a line of its own with its count and first row
  (past six reasons one row each), never "N more for M other reason(s)" hiding all but one.
- M7: a fraction where a whole number of at least 1 belongs is hinted only with whole numbers the key takes
  (``concurrency: 0.5``: 'concurrency: 1', not 'or concurrency: 0'), and ``max_new_tokens: 0.5`` hints
  ``tokens_per_request: 1``, not 0.5.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner import fit
from planner.cli.main import main as cli_main
from planner.core.errors import InputError
from planner.core.names import MAX_ECHO_CHARS

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
LONG = "q" * 30_000


def _clipped(text: str) -> str:
    """The clip as the messages quote it: the first 80 characters and the length, in quotes."""
    return f"'{text[:MAX_ECHO_CHARS]}... ({len(text):,} characters)'"


def _cli_error(args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as got:
        cli_main(args)
    err = capsys.readouterr().err
    assert got.value.code == 2, err[:300]
    assert err.count("\n") == 1 and len(err) < 600, len(err)  # one line, not 30 KB
    return err


# ----- M6: every unknown name is clipped ----------------------------------------------------------------------------

@pytest.mark.parametrize(("key", "what", "listing"), [("allowed_gpus", "GPU", "gpus"),
                                                      ("allowed_platforms", "platform", "platforms")])
def test_a_long_unknown_id_in_constraints_is_clipped(tmp_path, capsys, key, what, listing):
    sc = tmp_path / "lg.yaml"
    sc.write_text("name: x\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n"
                  f"constraints:\n  {key}: [{LONG}]\n")
    err = _cli_error(["plan", str(sc), "--out", str(tmp_path / "o")], capsys)
    assert err == (f"Error: {sc}:7: constraints.{key}: unknown {what} {_clipped(LONG)}. 'planner catalog {listing}' "
                   "lists the valid ids.\n"), err[:300]


def test_a_long_unknown_gpu_option_is_clipped(capsys):
    err = _cli_error(["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", LONG], capsys)
    assert err == (f"Error: --gpu: unknown GPU {_clipped(LONG)}. 'planner catalog gpus' lists the valid "
                   "ids.\n"), err[:300]


def test_a_long_unknown_gpu_keyword_is_clipped():
    with pytest.raises(InputError) as got:
        fit(model="llama-2-7b", task="infer", gpu=LONG, context="max")
    said = str(got.value)
    assert said == f"gpu: unknown GPU {_clipped(LONG)}. 'planner catalog gpus' lists the valid ids.", said[:300]


def test_a_long_format_item_is_clipped(tmp_path, capsys):
    err = _cli_error(["plan", str(SCENARIOS / "serve-7b-2k-1user.yaml"), "--out", str(tmp_path / "o"),
                      "--format", f"md,{LONG}"], capsys)
    assert err == (f"Error: --format: {_clipped(LONG)} is not a report format; give a comma-separated list of "
                   "xlsx, csv, json, md.\n"), err[:300]


def test_a_long_tokens_per_month_workload_name_is_clipped(capsys):
    err = _cli_error(["compare", str(SCENARIOS / "serve-7b-2k-1user.yaml"), "--tokens-per-month", f"{LONG}=1M"],
                     capsys)
    # the scenario's one workload is chat-7b-1user (scenarios/serve-7b-2k-1user.yaml)
    assert err == (f"Error: --tokens-per-month: no workload {_clipped(LONG)} in the scenario. "
                   "Valid: chat-7b-1user.\n"), err[:300]



@pytest.mark.parametrize(("where", "entry"), [("top", ""), ("workload", "workloads[0]: "),
                                              ("constraints", "constraints: ")])
def test_a_long_unknown_key_is_clipped_at_its_entry(where, entry):
    from planner import plan

    w = {"name": "w", "model": "llama-2-7b", "task": "infer"}
    sc = {"name": "x", "workloads": [w]}
    if where == "top":
        sc[LONG] = 1
    elif where == "workload":
        sc["workloads"] = [{**w, LONG: 1}]
    else:
        sc["constraints"] = {LONG: 1}
    with pytest.raises(InputError) as got:
        plan(sc)
    said = str(got.value)
    assert said.startswith(f"{entry}unknown key {_clipped(LONG)}. Valid keys: "), said[:300]
    assert LONG[:MAX_ECHO_CHARS + 1] not in said and len(said) < 1000, len(said)


@pytest.mark.parametrize("function", ["estimate", "fit"])
def test_a_long_unknown_keyword_is_clipped(function):
    import planner

    with pytest.raises(InputError) as got:
        getattr(planner, function)(model="llama-2-7b", task="infer", gpu="rtx-4090", context="max", **{LONG: 1})
    said = str(got.value)
    assert said == (f"{function}() got an unexpected keyword argument {_clipped(LONG)}. See help(planner.{function}) "
                    "for the keywords it takes."), said[:300]


# ----- M4: an unknown model names the key the user wrote ------------------------------------------------------------

from planner import estimate, plan  # noqa: E402
from planner.model.models import ACCEPTED_FORMS  # noqa: E402

#: ACCEPTED_FORMS past its subject ('--model'): what every form of the hint goes on to say
TAKES = ACCEPTED_FORMS.split(" takes ", 1)[1]
CLOSE = "Did you mean 'llama-2-7b' or 'llama-2-70b' or 'llama-2-13b'?"


def test_an_unknown_model_in_a_scenario_file_names_model_key(tmp_path, capsys):
    sc = tmp_path / "m4.yaml"
    sc.write_text("name: x\nworkloads:\n  - name: w\n    model: llama-2-7x\n    task: infer\n")
    err = _cli_error(["plan", str(sc), "--out", str(tmp_path / "o")], capsys)
    assert err == (f"Error: {sc}:4: workloads[0].model: unknown model 'llama-2-7x'. {CLOSE} "
                   f"model: takes {TAKES}\n"), err


def test_an_unknown_model_in_a_workload_file_names_model_key_and_the_option_keeps_its_name(tmp_path, capsys):
    wl = tmp_path / "w4.yaml"
    wl.write_text("model: llama-2-7x\ntask: infer\n")
    err = _cli_error(["estimate", "--workload", str(wl)], capsys)
    assert err == f"Error: {wl}:1: model: unknown model 'llama-2-7x'. {CLOSE} model: takes {TAKES}\n", err
    # --model over the file's model: the option is what the user wrote
    err = _cli_error(["estimate", "--workload", str(wl), "--model", "llama-2-7x"], capsys)
    assert err == f"Error: --model: unknown model 'llama-2-7x'. {CLOSE} --model takes {TAKES}\n", err


def test_an_unknown_model_in_the_api_names_the_keyword_or_the_mapping_key():
    with pytest.raises(InputError) as got:
        estimate(model="llama-2-7x", task="infer")
    assert str(got.value) == f"model: unknown model 'llama-2-7x'. {CLOSE} model= takes {TAKES}", str(got.value)
    with pytest.raises(InputError) as got:
        plan({"name": "x", "workloads": [{"name": "w", "model": "llama-2-7x", "task": "infer"}]})
    said = str(got.value)
    assert said == f"workloads[0].model: unknown model 'llama-2-7x'. {CLOSE} model: takes {TAKES}", said
    assert "--model" not in said


def test_model_keyword_over_a_workload_file_names_the_keyword(tmp_path):
    wl = tmp_path / "w4.yaml"
    wl.write_text("model: llama-2-7b\ntask: infer\n")
    with pytest.raises(InputError) as got:
        estimate(workload=str(wl), model="llama-2-7x")
    said = str(got.value)
    assert said == f"model: unknown model 'llama-2-7x'. {CLOSE} model= takes {TAKES}", said  # never 'model=takes'


# ----- M7: a hint is a value the key takes -------------------------------------------------------------------------

def _infer_line(tmp_path, capsys, key_value: str, task: str = "infer") -> str:
    sc = tmp_path / "h.yaml"
    extra = "    method: lora\n" if task == "train" else ""
    sc.write_text("name: x\nworkloads:\n  - name: w\n    model: llama-2-7b\n"
                  f"    task: {task}\n{extra}    {key_value}\n")
    err = _cli_error(["plan", str(sc), "--out", str(tmp_path / "o")], capsys)
    return err.removeprefix(f"Error: {sc}:").rstrip("\n")


@pytest.mark.parametrize(("key_value", "task", "said"), [
    # every key here is at least 1 (planner.workload: entry.int(key, ..., min=1)): 0 is refused, 1 is the next up
    ("concurrency: 0.5", "infer", "6: workloads[0].concurrency: must be a whole number, not 0.5. Write a whole number: "
                                  "concurrency: 1 (rounded up)."),
    ("context: 0.5", "infer", "6: workloads[0].context: must be a whole number, not 0.5. Write a whole number: "
                              "context: 1 (rounded up)."),
    ("tokens_per_request: 0.4", "infer", "6: workloads[0].tokens_per_request: must be a whole number, not 0.4. Write a "
                                         "whole number: tokens_per_request: 1 (rounded up)."),
    ("tokens_per_request: 1.0e-300", "infer", "6: workloads[0].tokens_per_request: must be a whole number, not 1e-300. "
                                              "Write a whole number: tokens_per_request: 1 (rounded up)."),
    ("micro_batch: 0.5", "train", "7: workloads[0].micro_batch: must be a whole number, not 0.5. Write a whole number: "
                                  "micro_batch: 1 (rounded up)."),
    # above the floor both whole numbers around it are taken
    ("concurrency: 2.5", "infer", "6: workloads[0].concurrency: must be a whole number, not 2.5. Write a whole number: "
                                  "concurrency: 3 (rounded up) or concurrency: 2."),
])
def test_a_fraction_is_hinted_with_whole_numbers_in_range(tmp_path, capsys, key_value, task, said):
    assert _infer_line(tmp_path, capsys, key_value, task) == said


@pytest.mark.parametrize(("value", "write"), [("0.5", "1"), ("0", "1"), ("256", "256")])
def test_max_new_tokens_hints_a_tokens_per_request_it_takes(tmp_path, capsys, value, write):
    said = _infer_line(tmp_path, capsys, f"max_new_tokens: {value}")
    assert said.startswith("6: workloads[0].max_new_tokens: unknown key 'max_new_tokens' (the name in Transformers' "
                           f"generate); the planner's key is 'tokens_per_request'. Write tokens_per_request: {write}. "
                           ), said


def test_the_rounded_hints_are_taken(tmp_path):
    # what the hints above offer is a value the key accepts: the plan runs with it
    w = {"name": "w", "model": "llama-2-7b", "task": "infer"}
    for keys in ({"concurrency": 1}, {"context": 1}, {"tokens_per_request": 1}):
        assert plan({"name": "x", "workloads": [{**w, **keys}]}).total_usd > 0, keys


# ----- M1: every left-out reason is said ---------------------------------------------------------------------------

from planner.catalog.import_summary import left_out_lines  # noqa: E402
from planner.catalog.skypilot import import_file  # noqa: E402

from sky_helpers import G5, aws_csv  # noqa: E402


def test_every_left_out_reason_has_its_line(tmp_path):
    # G5 is line 2; then one row per reason, lines 3 to 10: eight reasons, more than the six shown with 3 rows each
    bad = ["g5.b,A10G,1,4,16,,1.5,nan,us-east-1,us-east-1a,x86_64",       # 3: spot nan
           "g5.c,A10G,1,4,16,,1.5,-inf,us-east-1,us-east-1a,x86_64",      # 4: spot -inf
           "g5.d,A10G,1,4,16",                                            # 5: 5 fields
           "g5.e,A10G,1,4,16,,1e308,,us-east-1,us-east-1a,x86_64",        # 6: price above the largest
           "g5.f,A10G,1,4,1e308,,1.5,0.5,us-east-1,us-east-1a,x86_64",    # 7: memory out of range
           "g5.g,A10G,1,4,16,,0,,us-east-1,us-east-1a,x86_64",            # 8: no on-demand price
           "g5.h,ZZZ,1,4,16,,1.5,,us-east-1,us-east-1a,x86_64",           # 9: unknown GPU
           "g5.i,A10G,1,4,16,,1.5,0.4,us-east-1,us-east-1a,x86_64,X,Y"]   # 10: 13 fields
    res = import_file(aws_csv(tmp_path, G5, *bad))
    assert [r.id for r in res.rows] == ["aws-g5-xlarge"]
    lines = left_out_lines(res.skipped)
    # one line per kind of reason: each row's reason is its own, but 'nan' and '-inf' not a finite number are one
    # kind (h30b N6), the second row named with its value
    assert len(res.skipped) == 8 and len(lines) == 7, lines
    assert lines[0] == ("left out 2: column SpotPrice: 'nan' is not a finite number, and the same reason with other "
                        "values in 1 row (line 3: g5.b, line 4: g5.c '-inf')"), lines
    for n, row in enumerate(bad, start=3):
        inst = row.split(",")[0]
        assert sum(f"line {n}: {inst}" in line for line in lines) == 1, (inst, lines)
    assert not any("other reason" in line for line in lines), lines


def test_past_six_reasons_each_names_its_first_row_only():
    # seven reasons of two rows each: the first six name both rows, the seventh its first and '...' (reasons that
    # differ by a letter: differing by a number they would be one kind, h30b N6)
    skipped = {f"i{r}{k}": f"line {10 * r + k}: reason {'abcdefg'[r]}" for r in range(7) for k in range(2)}
    lines = left_out_lines(skipped)
    assert lines[0] == "left out 2: reason a (line 0: i00, line 1: i01)"
    assert lines[5] == "left out 2: reason f (line 50: i50, line 51: i51)"
    assert lines[6] == "left out 2: reason g (line 60: i60, ...)"
    assert len(lines) == 7
