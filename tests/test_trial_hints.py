"""Hints a new-user trial (this session's helper, README and docs only) found wrong or missing: each
now says what to write. Messages are checked outside the pytest.raises blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.core.errors import InputError, ScenarioError

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = "  - {name: a, model: llama-3.2-1b, task: train, method: full, micro_batch: 1, seq_len: 1024%s}\n"


def _plan_error(tmp_path: Path, text: str) -> str:
    from planner import plan

    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as err:
        plan(str(path))
    return str(err.value)


def test_yes_and_no_read_as_booleans_say_so(tmp_path):
    # YAML 1.1 (PyYAML) reads an unquoted no as false: 'checkpointing: no' was "not false" and nothing more
    choice = _plan_error(tmp_path, "name: s\nworkloads:\n" + WORKLOAD % ", checkpointing: no")
    assert "checkpointing: must be one of the choices, not false. Valid: none, full." in choice
    # the choice meant by no is none, which the hint names (hostile pass 11B item 12)
    assert "YAML reads an unquoted no or off as false: for none, write checkpointing: none." in choice
    number = _plan_error(tmp_path, "name: s\nworkloads:\n" + (WORKLOAD % "").replace("micro_batch: 1", "micro_batch: yes"))
    assert "micro_batch: must be a whole number, not true." in number and "YAML reads an unquoted" in number


def test_a_boolean_from_python_gets_no_yaml_note():
    from planner import estimate

    with pytest.raises(InputError) as err:
        estimate(model="llama-2-7b", task="train", micro_batch=True)
    assert str(err.value) == "micro_batch: must be a whole number, not true."


def test_a_number_past_any_float_is_not_told_to_be_written_as_one(tmp_path):
    # '1e400' is text to YAML 1.1; the hint said "write 1.0e+400", which then read as inf and was refused
    text = _plan_error(tmp_path, "name: s\nworkloads:\n" + WORKLOAD % "" + "constraints:\n  budget_usd: 1e400\n")
    assert "budget_usd: must be a number" in text
    assert "1e400 is beyond the largest number a float holds (about 1.8e+308): give the real value." in text
    assert "1.0e+400" not in text
    # a finite one still gets the spelling YAML reads as a number
    text = _plan_error(tmp_path, "name: s\nworkloads:\n" + WORKLOAD % "" + "constraints:\n  budget_usd: 1e11\n")
    assert "YAML reads 1e11 as text; write budget_usd: 1.0e+11." in text
    # one past budget_usd's ceiling (1.0e+12, h28b N4) gets the range instead of a spelling that is refused too
    text = _plan_error(tmp_path, "name: s\nworkloads:\n" + WORKLOAD % "" + "constraints:\n  budget_usd: 1e30\n")
    assert "1e30 is more than this field takes: give a number from 0 to 1000000000000." in text


def test_a_constraint_at_the_top_level_says_it_belongs_under_constraints(tmp_path):
    text = _plan_error(tmp_path, "name: s\nram_vram_min: 2\nworkloads:\n" + WORKLOAD % "")
    assert text.endswith("ram_vram_min: unknown key 'ram_vram_min'. 'ram_vram_min' is a constraint: indent it "
                         "under 'constraints:' (constraints: {ram_vram_min: ...}; see docs/scenarios.md).")


def test_yaml_text_given_to_plan_is_one_line_saying_what_plan_reads():
    from planner import plan

    with pytest.raises(InputError) as err:
        plan("name: x\nworkloads: []")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("scenario: is YAML text, not a file path") and "yaml.safe_load(text)" in text
