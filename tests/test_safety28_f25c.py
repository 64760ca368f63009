"""Issue 28, hostile pass 25: the API reads what a caller's container holds and checks every number.

Covers h25b N3 (estimate(prompt_tokens=, output_tokens=) refuse numpy.ma.masked, numpy.timedelta64,
numpy.datetime64 and numpy.bool_ by their type, as the other numeric keywords do, never numpy's MaskError or
a count of 512 or 1), N1 (the scenario caps on workloads, extras and choice lists, and the catalog-list cap,
counted on the items a list or tuple holds, not on what a subclass's ``__len__`` says), N2 (a mapping read by
``dict.items`` of its base class, so a key a subclass's ``keys()``/``__iter__`` hide is still refused as
unknown) and M7 (a path keyword given a folder names the keyword and says what file to give).
"""
from __future__ import annotations

import numpy as np
import pytest

from planner import estimate
from planner.core.errors import InputError

BASE = dict(model="llama-2-7b", task="infer", weights="fp16", context=2048, gpu="rtx-4090")


@pytest.mark.parametrize("keyword", ["prompt_tokens", "output_tokens"])
@pytest.mark.parametrize("value, shown", [(np.ma.masked, "MaskedConstant"), (np.timedelta64(512, "ns"), "timedelta64"),
                                          (np.True_, "bool"), (np.datetime64(512, "s"), "datetime64")])
def test_token_counts_refuse_numpy_non_numbers(keyword, value, shown):
    with pytest.raises(InputError) as caught:
        estimate(**BASE, **{keyword: value})
    message = str(caught.value)
    assert message.startswith(f"{keyword}: ")
    assert f"must be a whole number of tokens from 1 to 16,777,216, not {shown}." in message


@pytest.mark.parametrize("keyword", ["prompt_tokens", "output_tokens"])
def test_token_counts_still_take_numpy_integers(keyword):
    result = estimate(**BASE, **{keyword: np.int64(300)})
    assert getattr(result.speed, keyword) == 300


class ShortList(list):
    """A list that says it holds one item, whatever it stores."""

    def __len__(self):
        return 1


class ShortTuple(tuple):
    """A tuple that says it holds one item, whatever it stores."""

    def __len__(self):
        return 1


class HidingDict(dict):
    """A dict whose keys(), items(), __iter__ and __len__ leave out the key 'bogus'."""

    def keys(self):
        return [k for k in dict.keys(self) if k != "bogus"]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())


def _workload(i: int = 0) -> dict:
    return {"name": f"w{i}", "model": "llama-2-7b", "task": "infer", "weights": "fp16", "context": 2048,
            "concurrency": 1}


ONE_CARD = {"allowed_gpus": ["rtx-4090"], "max_cards": 1}


def _scenario_error(call) -> str:
    from planner.core.errors import ScenarioError

    with pytest.raises(ScenarioError) as caught:
        call()
    return str(caught.value)


def test_workload_cap_counts_what_the_list_holds():
    from planner import plan

    workloads = ShortList(_workload(i) for i in range(60))  # 60 stored, over the cap of 50
    message = _scenario_error(lambda: plan({"name": "x", "workloads": workloads}))
    assert "workloads: lists 60 entries, more than the 50 a scenario may hold" in message


def test_extras_cap_counts_what_the_list_holds():
    from planner import plan

    extras = ShortList({"description": f"disk {i}", "unit_price_usd": 1, "source": "q", "as_of": "2026-01-15"}
                       for i in range(201))  # one over the cap of 200
    message = _scenario_error(lambda: plan({"name": "x", "workloads": [_workload()], "extras": extras,
                                            "constraints": ONE_CARD}))
    assert "extras: lists 201 entries, more than the 200 a scenario may hold" in message


def test_choice_list_cap_counts_what_the_list_holds():
    from planner import plan

    qlora = {"name": "q", "model": "llama-2-7b", "task": "train", "method": "qlora", "dataset_tokens": "1M",
             "seq_len": ShortList(range(1100, 1000, -1))}  # 100 values, over the cap of 64
    message = _scenario_error(lambda: plan({"name": "x", "workloads": [qlora], "constraints": ONE_CARD}))
    assert "workloads[0].seq_len: lists 100 values, more than the 64 a choice list may hold" in message


def test_catalog_list_cap_counts_what_the_tuple_holds():
    import dataclasses

    from planner import load_catalog
    from planner.core.errors import CatalogError

    cat = load_catalog()
    extra = 501 - len(cat.gpus)  # 501 GPUs stored, one over the cap of 500
    gpus = ShortTuple((*cat.gpus, *(dataclasses.replace(cat.gpus[0], id=f"x-{i}") for i in range(extra))))
    with pytest.raises(CatalogError) as caught:
        estimate(model="llama-2-7b", task="infer", gpu="x-0", catalog=dataclasses.replace(cat, gpus=gpus))
    assert "the Catalog given: gpus: lists 501 entries, more than the 500 a catalog list may hold" in str(caught.value)


def test_catalog_tuple_subclass_under_the_cap_is_read_as_a_plain_tuple():
    import dataclasses

    from planner import load_catalog

    cat = load_catalog()
    result = estimate(model="llama-2-7b", task="infer", gpu="rtx-4090",
                      catalog=dataclasses.replace(cat, gpus=ShortTuple(cat.gpus)))
    assert result.fits is True


@pytest.mark.parametrize("where", ["workload", "top"])
def test_plan_refuses_a_key_the_mapping_hides(where):
    from planner import plan

    if where == "workload":
        scenario = {"name": "x", "workloads": [HidingDict({**_workload(), "bogus": 1})]}
        expected = "workloads[0].bogus: unknown key 'bogus'."
    else:
        scenario = HidingDict({"name": "x", "bogus": 5, "workloads": [_workload()]})
        expected = "bogus: unknown key 'bogus'."
    message = _scenario_error(lambda: plan(scenario))
    assert expected in message


@pytest.mark.parametrize("function", ["estimate", "fit"])
def test_workload_keyword_refuses_a_key_the_mapping_hides(function):
    from planner import fit

    call = {"estimate": lambda: estimate(workload=HidingDict({**_workload(), "bogus": 1}), gpu="rtx-4090"),
            "fit": lambda: fit(workload=HidingDict({**_workload(), "bogus": 1}), gpu="rtx-4090", context="max")}
    message = _scenario_error(call[function])
    assert "bogus: unknown key 'bogus'." in message


def test_plain_texts_makes_plain_containers_and_keeps_plain_ones():
    from collections import OrderedDict

    from planner.api.inputs import plain_texts

    given = HidingDict({"a": ShortList([1, 2, 3]), "bogus": ShortTuple((4, 5))})
    plain = plain_texts(given)
    assert type(plain) is dict and plain == {"a": [1, 2, 3], "bogus": (4, 5)}
    assert type(plain["a"]) is list and type(plain["bogus"]) is tuple
    same = {"a": [1], "b": (2,)}
    assert plain_texts(same) is same
    ordered = OrderedDict([("b", 1), ("a", 2)])
    assert list(plain_texts(ordered)) == ["b", "a"]


@pytest.mark.parametrize("function", ["calibration", "estimate-workload", "fit-workload", "plan", "compare"])
def test_a_folder_given_for_a_file_names_the_keyword(function, tmp_path):
    from planner import compare, fit, plan

    folder = str(tmp_path)
    calls = {
        "calibration": lambda: estimate(model="llama-2-7b", task="infer", gpu="rtx-4090", calibration=folder),
        "estimate-workload": lambda: estimate(workload=folder, gpu="rtx-4090"),
        "fit-workload": lambda: fit(workload=folder, gpu="rtx-4090"),
        "plan": lambda: plan(folder),
        "compare": lambda: compare(folder),
    }
    keyword = {"calibration": "calibration", "plan": "scenario", "compare": "scenario"}.get(function, "workload")
    hint = {"calibration": "Give the calibration file 'planner calibrate' wrote, e.g. calibration='calibration.yaml'.",
            "scenario": "Give a scenario file in it, e.g. 'scenarios/qlora-7b-12gb.yaml', or a mapping of scenario keys.",
            "workload": "Give a workload file in it, e.g. workload='scenarios/workloads/qlora-7b.yaml', or a mapping of "
                        "workload keys."}[keyword]
    with pytest.raises(InputError) as caught:
        calls[function]()
    assert str(caught.value) == f"{keyword}: {folder!r} is a directory, not a file. {hint}"
