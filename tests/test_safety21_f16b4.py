"""Hostile pass 16B (reports/h16b.md), findings fixed on branch f16b4.

9.  A key merged with ``<<: *anchor`` that is wrong for the merging entry names the ``<<`` line too, and hints at
    overriding it there or not merging (YAML cannot unset a merged key); a list merged by mistake names the ``<<``.
11. A scenario-level constraint no workload is subject to (min_decode_tokens_per_s with training only,
    max_hours_per_job with inference only) gets a warning, as an unused constraints.network does.
13e. ``catalog check --today`` before the newest price is refused, with a month that works as the hint.
13f. fit(prompt_tokens=...) says fit takes no request to time, instead of "Did you mean 'document_tokens'?".
13i. An extras category that is another word for planner's own memory or network line ('ram', 'DIMMs', 'nic') is
     refused as 'memories' is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


def _scenario(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# 13i. the memory line buys the host's RAM as DIMMs and the network line its NICs (planner.solve.extras
# _OWN_SYNONYMS): those words are refused with the message 'memories' gets; 'storage' is still an extras word
@pytest.mark.parametrize("category, own", [
    ("ram", "memory"), ("RAM", "memory"), ("DIMMs", "memory"), ("rdimm", "memory"), ("'\uff52\uff41\uff4d'", "memory"),
    ("memories", "memory"), ("nic", "network"), ("NICs", "network"), ("gpus", "gpu"),
])
def test_an_extras_category_naming_the_memory_or_network_line_is_refused(tmp_path: Path, category: str,
                                                                         own: str) -> None:
    text = (f"name: x\nextras:\n  - description: 2 more DIMMs\n    unit_price_usd: 300\n    source: q\n"
            f"    as_of: 2026-01-15\n    category: {category}\nworkloads:\n"
            "  - {name: w, model: llama-2-7b, task: infer}\n")
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    shown = category.strip("'")
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (f"Error: {tmp_path}/s.yaml:7: extras[0].category: category {shown!r} is one of "
                                f"planner's own quote lines ({own!r}; they are gpu, platform, memory, network), each "
                                "priced from the catalog. Use another word for what this line buys, e.g. category: "
                                "storage; a GPU, platform, memory or NIC to plan with belongs in a catalog overlay.")


def test_an_extras_category_of_another_word_is_still_taken(tmp_path: Path) -> None:
    text = ("name: x\nextras:\n  - description: NVMe SSD 4 TB\n    unit_price_usd: 300\n    source: q\n"
            "    as_of: 2026-01-15\n    category: storage\nworkloads:\n  - {name: w, model: llama-2-7b, task: infer}\n")
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output


# 13f. fit() times the request at its answer (planner.api.inputs.card_speed): a request-timing keyword gets why
# not and what to do (planner.api.inputs.NOT_TAKEN), not the close match 'document_tokens'
_FIT_TIMES = ("fit() takes no request to time: it times one at its answer (inference), of tokens_per_request output "
              "tokens (else 256, at most half the context) after a prompt of the rest of the context. Shape that "
              "request with context= and tokens_per_request=, or time a request of your own with "
              "planner.estimate(gpu=..., task='infer', prompt_tokens=..., output_tokens=...).")


@pytest.mark.parametrize("keyword", ["prompt_tokens", "output_tokens", "input_tokens"])
def test_fit_refuses_a_request_to_time_saying_what_it_times(keyword: str) -> None:
    from planner import fit
    from planner.core.errors import UnknownKeywordError

    with pytest.raises(UnknownKeywordError) as info:
        fit(model="llama-2-7b", gpu="l4", task="infer", concurrency="max", **{keyword: 5})
    assert str(info.value) == f"fit() got an unexpected keyword argument {keyword!r}: {_FIT_TIMES}"
    assert "document_tokens" not in str(info.value)


@pytest.mark.parametrize("function", ["fit", "estimate"])
@pytest.mark.parametrize("keyword", ["ttft_s", "tpot_s", "slo"])
def test_a_latency_target_given_to_fit_or_estimate_names_the_slo_block(function: str, keyword: str) -> None:
    import planner
    from planner.core.errors import UnknownKeywordError

    extra = {"concurrency": "max"} if function == "fit" else {}
    with pytest.raises(UnknownKeywordError) as info:
        getattr(planner, function)(model="llama-2-7b", gpu="l4", task="infer", **extra, **{keyword: 1})
    assert str(info.value) == (
        f"{function}() got an unexpected keyword argument {keyword!r}: a latency target belongs to a scenario "
        f"workload's slo: block, which planner.plan() meets by choosing the hardware; {function}() times a request "
        "on one card (with gpu=) and returns its ttft_s and tpot_s. Read result.speed.ttft_s and "
        "result.speed.tpot_s, or write slo: {ttft_s: ..., tpot_s: ...} in a scenario's workload and plan it.")


@pytest.mark.parametrize("option", ["--prompt-tokens", "--output-tokens"])
def test_planner_fit_refuses_prompt_tokens_saying_what_it_times(option: str) -> None:
    r = _run(["fit", "--model", "llama-2-7b", "--gpu", "l4", "--task", "infer", "--concurrency", "max", option, "5"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (
        f"Error: {option}: 'planner fit' takes no {option}: it times no request of your choosing but one at its "
        "answer (inference): tokens_per_request output tokens (else 256, at most half the context) after a prompt "
        "of the rest of the context. Shape that request with --context (and tokens_per_request in a --workload "
        "file), or time a request of your own with 'planner estimate --gpu ID --prompt-tokens N --output-tokens N'.")


def test_estimate_still_takes_prompt_tokens() -> None:
    from planner import estimate

    r = estimate(model="llama-2-7b", gpu="l4", task="infer", context=2048, prompt_tokens=1000, output_tokens=100)
    # the timed request is the one given: 1,000 prompt tokens
    assert r.speed.prompt_tokens == 1000


# 11. a scenario-level constraint no workload is subject to is warned about, in the words of the unused
# constraints.network warning (planner.solve.warnings.unused_constraints)
_TRAIN = ("  - name: {name}\n    model: llama-2-7b\n    task: train\n    method: qlora\n    micro_batch: 1\n"
          "    seq_len: 512\n    dataset_tokens: 1000000\n{extra}")
_INFER = "  - name: {name}\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"


def _plan_warnings(tmp_path: Path, workloads: str, constraints: str) -> list[str]:
    from planner import plan

    path = _scenario(tmp_path, f"name: vac\nworkloads:\n{workloads}constraints:\n{constraints}")
    return list(plan(path).warnings)


def test_a_decode_floor_with_training_workloads_only_is_warned_unused(tmp_path: Path) -> None:
    warnings = _plan_warnings(tmp_path, _TRAIN.format(name="w", extra=""), "  min_decode_tokens_per_s: 10\n")
    assert ("constraints.min_decode_tokens_per_s is not used: no workload serves (it would cover the inference "
            "workloads; w trains, and a training workload's time is deadline_hours or "
            "constraints.max_hours_per_job)") in warnings


def test_a_job_deadline_with_inference_workloads_only_is_warned_unused(tmp_path: Path) -> None:
    warnings = _plan_warnings(tmp_path, _INFER.format(name="a") + _INFER.format(name="b"), "  max_hours_per_job: 10\n")
    assert ("constraints.max_hours_per_job is not used: no workload trains (it would cover the training workloads; "
            "a, b serve, and a serving workload's speed is its slo: or constraints.min_decode_tokens_per_s)") in warnings


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_job_deadline_every_training_workload_overrides_is_warned_unused(tmp_path: Path) -> None:
    workloads = (_TRAIN.format(name="w", extra="    deadline_hours: 5\n")
                 + _TRAIN.format(name="v", extra="    deadline_hours: 6\n"))
    warnings = _plan_warnings(tmp_path, workloads, "  max_hours_per_job: 10\n")
    assert ("constraints.max_hours_per_job is not used: each training workload (w, v) gives deadline_hours of its "
            "own (it would cover the training workloads without one)") in warnings


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_constraints_some_workload_is_subject_to_get_no_such_warning(tmp_path: Path) -> None:
    # w trains without a deadline of its own (max_hours_per_job covers it), s serves (the decode floor covers it)
    workloads = _TRAIN.format(name="w", extra="") + _INFER.format(name="s")
    warnings = _plan_warnings(tmp_path, workloads, "  max_hours_per_job: 1000\n  min_decode_tokens_per_s: 1\n")
    assert not [w for w in warnings if "is not used" in w], warnings


# 13e. catalog check --today before the month of the newest price or cloud row is refused
# (planner.catalog.check.reference_date_problem): a price dated after it would be counted fresh
@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_catalog_check_refuses_a_today_before_the_newest_price_with_a_month_that_works() -> None:
    import planner
    from planner.catalog.check import months, newest_date, today_date

    cat = planner.load_catalog()
    newest, where = newest_date(cat)
    assert newest[:7] == "2026-11"  # the shipped catalog's newest figure (reference_date: 2026-11 too)
    r = _run(["catalog", "check", "--today", "2020-09"])
    assert r.exit_code == 2, r.output
    # 2020-09 is the month of the oldest price (gpus.yaml rtx-3090, 2020-09-24): every other figure is later
    head, _, tail = r.stderr.strip().partition(" dated prices and cloud rows are dated after it")
    assert head.startswith(f"Error: --today: 2020-09 is before the month of the catalog's newest "
                           f"date, {newest} ({where}): ")
    later, _, total = head.rsplit(": ", 1)[1].partition(" of its ")
    assert int(later.replace(",", "")) == int(total.replace(",", "")) - 1  # all but rtx-3090's own
    assert tail == (f", which the check cannot age (it would count them fresh). Give a date from {newest[:7]} on, "
                    f"e.g. today's, {today_date()}, the default.")
    # the hint works: its month is taken, and a day in that month too (ages are whole months)
    for ok in (newest[:7], newest[:7] + "-01"):
        r = _run(["catalog", "check", "--today", ok])
        assert r.exit_code in (0, 1) and r.stdout.splitlines()[-1].endswith("note(s)."), r.output
    # the month before is refused (months(): y * 12 + m)
    year, month = divmod(months(newest) - 2, 12)
    assert _run(["catalog", "check", "--today", f"{year:04d}-{month + 1:02d}"]).exit_code == 2


# 9. a merged key (<<: *anchor) wrong for the merging entry is located at that entry's '<<' line and names the
# anchor's line; the hint is not "Remove it" (that would change the entry that wrote it: YAML cannot unset a
# merged key) but overriding it beside '<<' or merging a mapping without it (planner.core.fields.Entry.error)
def _plan_error(tmp_path: Path, text: str) -> tuple[int, str, Path]:
    path = _scenario(tmp_path, text)
    r = _run(["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    return r.exit_code, r.stderr.strip(), path


def test_a_merged_option_of_the_other_task_names_the_merge_line(tmp_path: Path) -> None:
    # lines: 3 '- &b', 7 'method: lora' (workloads[0], a train workload), 11 '- <<: *b' (workloads[1], infer)
    text = ("name: m1\nworkloads:\n  - &b\n    name: a\n    model: llama-2-7b\n    task: train\n    method: lora\n"
            "    lora_rank: 16\n    micro_batch: 1\n    seq_len: 512\n  - <<: *b\n    name: b\n    task: infer\n"
            "    context: 2048\n")
    code, err, path = _plan_error(tmp_path, text)
    assert code == 2
    assert err == (f"Error: {path}:11: workloads[1].method: 'method' is an option of task train, not infer "
                   "(workloads[1] does not write 'method': '<<' on line 11 merges it from line 7). YAML cannot unset "
                   "a merged key, and no value of it fits here: merge a mapping without it, or do not merge; or set "
                   "task: train.")
    assert "Remove it" not in err


def test_a_list_merged_by_mistake_names_the_merge_line_and_the_list(tmp_path: Path) -> None:
    # lines: 2 'workloads: &wl' (the list), 3 '- name: a' (its item), 8 '<<: *wl' in constraints
    text = ("name: m2\nworkloads: &wl\n  - name: a\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"
            "constraints:\n  <<: *wl\n  max_cards: 2\n")
    code, err, path = _plan_error(tmp_path, text)
    assert code == 2
    assert err.startswith(
        f"Error: {path}:8: constraints.name: unknown key 'name' (constraints does not write 'name': '<<' on line 8 "
        "merges it from line 3, an item of the list on line 2 that '<<' names). YAML cannot unset a merged key, and "
        "no value of it fits here: merge a mapping without it, or do not merge; '<<' merges every mapping of a list "
        "it names, so name one mapping (an &anchor on it). Valid keys: allowed_gpus, "), err


def test_a_value_inside_a_merged_key_names_the_merge_line(tmp_path: Path) -> None:
    # workloads[0]'s slo (line 8) fits its context 2048; workloads[1] merges it (line 9) with context 512, where a
    # request of 1,500 + 200 tokens does not fit: overriding slo beside '<<' (whole) fixes it
    text = ("name: m5\nworkloads:\n  - &b\n    name: a\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"
            "    slo: {ttft_s: 1, concurrency: 4, prompt_tokens: 1500, output_tokens: 200}\n  - <<: *b\n    name: b\n"
            "    context: 512\n")
    code, err, path = _plan_error(tmp_path, text)
    assert code == 2
    assert err == (f"Error: {path}:9: workloads[1].slo.prompt_tokens: a request of 1,500 prompt + 200 output tokens "
                   "does not fit the workload's context of 512 tokens (workloads[1] does not write 'slo': '<<' on line 9 "
                   "merges it from line 8; this value is on line 8). YAML cannot unset a merged key: write slo: beside "
                   "'<<' on line 9, whole, to override it, or merge a mapping without it (or do not merge). Raise the "
                   "workload's context, or shorten the request.")


def test_a_merged_key_overridden_beside_the_merge_is_no_longer_merged() -> None:
    from planner.core.yamlio import parse_yaml

    doc = parse_yaml("a: &a {x: 1, y: 1}\nb: &b {z: 3}\nc:\n  <<: [*a, *b]\n  x: 3\n")
    # x is written beside '<<' (line 5): not merged; y and z come through the '<<' on line 4, from an inline list
    assert doc["c"].merged == {"y": (4, None), "z": (4, None)}
    assert doc["c"].lines == {"x": 5, "y": 1, "z": 2}
