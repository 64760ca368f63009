"""Issue 28, hostile pass 31: h31b N3 (a ``str`` subclass whose own methods raise, ``__iter__`` above all, given to the
Python API as a text is read through ``str.__str__`` before anything else reads it: each text keyword of estimate(),
fit(), plan() and compare(), a value and a key in a workload and a scenario mapping, tokens_per_month's keys and
values, a keyword's own name, format= and its items, the text fields of a Catalog changed in code (its id shown in
the entry's name); a valid text is taken as the plain str, a bad one refused as the plain str is, never the
subclass's exception; a lone surrogate in such a text is still refused).

A subclass whose ``__hash__`` raises cannot be a mapping's key (the caller's own dict raises), so keys are given as
a subclass raising in every other method. The result of each run is compared, by ``to_dict()``, with the result of the
same run given plain str: a subclass left in the result would raise in that comparison.
"""

from __future__ import annotations

from typing import Any

import pytest

import planner
from planner.core.errors import InputError, UnknownKeywordError
from planner.workload.inputs import OptionError

#: The str methods the tests override to raise (h31b tried 18; these are the brief's).
METHODS = ("__iter__", "__len__", "__getitem__", "__hash__", "__eq__", "__contains__", "strip", "lower", "split",
           "encode", "__format__", "__repr__", "__str__")
#: Every further method a reader might call on a text, overridden as well in the class that overrides all.
MORE = ("__ne__", "__add__", "__mod__", "__lt__", "__bool__", "startswith", "endswith", "replace", "upper", "casefold",
        "rstrip", "lstrip", "isdigit", "isidentifier", "partition", "find", "count", "join", "isspace", "isprintable",
        "format", "index", "splitlines", "isascii", "rsplit", "removeprefix", "removesuffix", "translate", "__mul__")


def _boom(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"boom {name}")
    return method


def _raising(*names: str) -> type:
    """A str subclass each of whose methods ``names`` raises RuntimeError."""
    return type("Hostile", (str,), {n: _boom(n) for n in names})


#: Raises in every method (a text value); and in every method but those a dict key needs (a mapping's key).
ALL = _raising(*METHODS, *MORE)
KEY = _raising(*(n for n in METHODS + MORE if n not in ("__hash__", "__eq__", "__ne__")))

INFER = dict(model="llama-2-7b", task="infer", weights="bf16", context=4096, concurrency=1)


def _scenario(**workload: Any) -> dict[str, Any]:
    return {"name": "x", "workloads": [{**INFER, "name": "w", **workload}]}


@pytest.mark.parametrize("method", [*METHODS, "all"])
def test_estimate_reads_each_text_keyword_through_str(method: str) -> None:
    hostile = ALL if method == "all" else _raising(method)
    texts = dict(model="llama-2-7b", task="infer", weights="bf16", engine="hf", kv_dtype="bf16", gpu="rtx-4090")
    expected = planner.estimate(context=4096, concurrency=1, **texts).to_dict()
    got = planner.estimate(context=4096, concurrency=1, **{k: hostile(v) for k, v in texts.items()}).to_dict()
    assert got == expected


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("method", [*METHODS, "all"])
def test_a_bad_text_is_refused_as_the_plain_str_is(method: str) -> None:
    hostile = ALL if method == "all" else _raising(method)
    with pytest.raises(OptionError) as plain:
        planner.estimate(**dict(INFER, task="trian"))
    with pytest.raises(OptionError) as given:
        planner.estimate(**dict(INFER, task=hostile("trian")))
    assert str(given.value) == str(plain.value)
    assert "task" in str(given.value) and "'trian'" in str(given.value)


@pytest.mark.parametrize("keyword, value", [("headroom", "0.1"), ("prompt_tokens", "100"), ("catalog", "no-such-dir"),
                                            ("calibration", "no-such.yaml"), ("workload", "no-such.yaml")])
def test_estimate_refuses_other_text_keywords_as_plain_str(keyword: str, value: str) -> None:
    base = {} if keyword == "workload" else dict(INFER, gpu="rtx-4090")
    with pytest.raises(InputError) as plain:
        planner.estimate(**base, **{keyword: value})
    with pytest.raises(InputError) as given:
        planner.estimate(**base, **{keyword: ALL(value)})
    assert (type(given.value), str(given.value)) == (type(plain.value), str(plain.value))


def test_estimate_reads_a_workload_mapping_value_and_key_through_str() -> None:
    expected = planner.estimate(workload=INFER).to_dict()
    given = {KEY("model"): ALL("llama-2-7b"), "task": ALL("infer"), KEY("weights"): ALL("bf16"), "context": 4096,
             "concurrency": 1}
    assert planner.estimate(workload=given).to_dict() == expected


def test_lora_targets_keyword_is_read_through_str() -> None:
    train = dict(model="llama-2-7b", task="train", method="lora", seq_len=512)
    expected = planner.estimate(**train, lora_targets="q_proj,v_proj").to_dict()
    assert planner.estimate(**train, lora_targets=ALL("q_proj,v_proj")).to_dict() == expected


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_fit_reads_each_text_keyword_through_str() -> None:
    texts = dict(gpu="rtx-4090", model="llama-2-7b", task="infer", context="max", weights="bf16")
    expected = planner.fit(**texts).to_dict()
    assert planner.fit(**{k: ALL(v) for k, v in texts.items()}).to_dict() == expected
    with pytest.raises(InputError) as plain:
        planner.fit(**texts, headroom="0.1")
    with pytest.raises(InputError) as given:
        planner.fit(**texts, headroom=ALL("0.1"))
    assert str(given.value) == str(plain.value)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_reads_scenario_and_workload_texts_and_keys_through_str() -> None:
    expected = planner.plan(_scenario()).to_dict()
    workload = {KEY("name"): ALL("w"), KEY("task"): ALL("infer"), "model": ALL("llama-2-7b"), "weights": ALL("bf16"),
                "context": 4096, "concurrency": 1}
    got = planner.plan({KEY("name"): ALL("x"), "workloads": [workload]}).to_dict()
    assert got == expected


def test_plan_and_compare_refuse_a_text_top_as_a_plain_str() -> None:
    for function in (planner.plan, planner.compare):
        with pytest.raises(OptionError) as plain:
            function(_scenario(), top="3")
        with pytest.raises(OptionError) as given:
            function(_scenario(), top=ALL("3"))
        assert str(given.value) == str(plain.value)
        assert str(given.value).startswith("top: must be a whole number")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_reads_format_and_out_through_str(tmp_path: Any) -> None:
    with pytest.raises(InputError) as plain:
        planner.plan(_scenario(), format="json")
    with pytest.raises(InputError) as given:
        planner.plan(_scenario(), format=ALL("json"))
    assert str(given.value) == str(plain.value)
    planner.plan(_scenario(), out=str(tmp_path / "plain"), format=["json"])
    planner.plan(_scenario(), out=ALL(str(tmp_path / "given")), format=[ALL("json")])
    written = sorted(p.name for p in (tmp_path / "given").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "plain").iterdir())
    assert {name.rsplit(".", 1)[-1] for name in written} == {"json"}


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_compare_reads_workload_texts_and_tokens_per_month_through_str() -> None:
    expected = planner.compare(_scenario(), tokens_per_month={"w": "200M"}).to_dict()
    got = planner.compare(_scenario(name=ALL("w"), task=ALL("infer")), tokens_per_month={KEY("w"): ALL("200M")})
    assert got.to_dict() == expected
    assert planner.compare(_scenario(), tokens_per_month=ALL("200M")).to_dict() == expected


def test_an_unknown_keyword_name_of_a_subclass_is_named_by_its_text() -> None:
    with pytest.raises(UnknownKeywordError) as plain:
        planner.estimate(**{"tsak": "infer", "model": "llama-2-7b"})
    with pytest.raises(UnknownKeywordError) as given:
        planner.estimate(**{KEY("tsak"): "infer", "model": "llama-2-7b"})
    assert str(given.value) == str(plain.value)
    assert "'tsak'" in str(given.value) and "Did you mean 'task'" in str(given.value)


def test_a_lone_surrogate_in_a_subclass_text_is_still_refused() -> None:
    # the surrogate check reads the subclass's characters through str, not its own (raising) __iter__
    with pytest.raises(InputError) as given:
        planner.estimate(**dict(INFER, task=ALL("in\ud800fer")))
    with pytest.raises(InputError) as plain:
        planner.estimate(**dict(INFER, task="in\ud800fer"))
    assert str(given.value) == str(plain.value)
    assert "lone surrogate" in str(given.value)
    with pytest.raises(InputError) as in_scenario:
        planner.plan(_scenario(task=ALL("in\ud800fer")))
    assert "scenario.workloads[0].task" in str(in_scenario.value)
    assert "lone surrogate" in str(in_scenario.value)


def test_a_catalog_entry_s_text_fields_are_read_through_str() -> None:
    # a Catalog changed in code (dataclasses.replace) with str-subclass texts is checked as the plain texts are; the
    # id, shown in the entry's name, was the one read through its own repr
    import dataclasses

    from planner.api.inputs import catalog_of

    catalog = planner.load_catalog()
    gpu = catalog.gpus[0]
    texts = {f.name: getattr(gpu, f.name) for f in dataclasses.fields(gpu)
             if type(getattr(gpu, f.name)) is str and f.name not in ("file", "where")}
    assert "id" in texts and "name" in texts
    changed = dataclasses.replace(catalog, gpus=(dataclasses.replace(gpu, **{k: ALL(v) for k, v in texts.items()}),
                                                 *catalog.gpus[1:]))
    checked = catalog_of(changed)
    assert {k: getattr(checked.gpus[0], k) for k in texts} == texts
    assert all(type(getattr(checked.gpus[0], k)) is str for k in texts)
