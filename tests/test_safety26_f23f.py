"""Issue 28, hostile pass 23B: findings of report h23b fixed on branch f23f.

N1. A Catalog that ``load_catalog()`` returned and that was then changed in place (``object.__setattr__`` on a
    record or on the Catalog, past the frozen dataclass; a FrozenMap's dict changed) is checked as the loader
    checks a file, as a ``dataclasses.replace`` copy is: the API trusts the fingerprint of the content the loader
    checked (planner.catalog.fingerprint), not the object. A negative price or memory and a control character in
    a name are one CatalogError naming the entry and field; a catalog left as read (or pickled, deep-copied) is
    not checked again.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

import planner.api.inputs as api_inputs
from planner import estimate, plan
from planner.catalog.fingerprint import content_fingerprint, still_checked
from planner.catalog.loader import load_catalog
from planner.core.errors import CatalogError

INFER = dict(model="llama-2-7b", task="infer", weights="bf16", context=1024)


def _scenario():
    return {"name": "mut", "workloads": [{"name": "w", **INFER}], "constraints": {"allowed_gpus": ["rtx-4090"]}}


def _card(cat):
    i, gpu = next((i, g) for i, g in enumerate(cat.gpus) if g.id == "rtx-4090")
    return i, gpu


# ----- N1: a loaded Catalog changed in place is checked ------------------------------------------------------------

def test_a_price_set_in_place_is_refused_by_plan():
    cat = load_catalog()
    i, gpu = _card(cat)
    shipped = gpu.price_usd
    object.__setattr__(gpu, "price_usd", -100.0)
    with pytest.raises(CatalogError) as got:
        plan(_scenario(), catalog=cat)
    said = str(got.value)
    # the loader builds price_usd from the entry's prices: the shipped one, not the -100 set in place
    assert said.startswith(f"the Catalog given: gpus[{i}] (rtx-4090).price_usd: -100.0 is not what the entry's other "
                           f"fields give ({shipped!r})"), said


def test_a_memory_set_in_place_is_refused_by_estimate():
    cat = load_catalog()
    i, gpu = _card(cat)
    object.__setattr__(gpu, "memory_usable_bytes", -5)
    with pytest.raises(CatalogError) as got:
        estimate(**INFER, gpu="rtx-4090", catalog=cat)
    said = str(got.value)
    assert said.startswith(f"the Catalog given: gpus[{i}] (rtx-4090).memory_usable: '-5 B' is not a size"), said


def test_a_control_character_set_in_place_in_a_name_is_refused():
    cat = load_catalog()
    i, gpu = _card(cat)
    object.__setattr__(gpu, "name", "x\x1b]8;;http://e.vil\x07X\x1b]8;;\x07")
    with pytest.raises(CatalogError) as got:
        estimate(**INFER, gpu="rtx-4090", catalog=cat)
    said = str(got.value)
    assert said.startswith(f"the Catalog given: gpus[{i}] (rtx-4090).name: holds the control character U+001B"), said


def test_a_list_swapped_on_the_catalog_before_first_use_is_refused():
    cat = load_catalog()
    i, gpu = _card(cat)
    bad = dataclasses.replace(gpu, price_usd=-100.0)
    object.__setattr__(cat, "gpus", tuple(bad if g is gpu else g for g in cat.gpus))
    with pytest.raises(CatalogError) as got:
        plan(_scenario(), catalog=cat)
    assert f"gpus[{i}] (rtx-4090).price_usd: -100.0" in str(got.value), str(got.value)


def test_a_frozen_map_changed_in_place_changes_the_fingerprint():
    cat = load_catalog()
    assert still_checked(cat)
    cat.models[0].config._data["hidden_size"] = -1  # the FrozenMap's own dict, reached past its read-only face
    assert not still_checked(cat)


def test_a_catalog_left_as_read_is_not_checked_again(monkeypatch):
    calls = []
    real = api_inputs.check_catalog_object
    monkeypatch.setattr(api_inputs, "check_catalog_object", lambda c: calls.append(c) or real(c))
    cat = load_catalog()
    for given in (cat, pickle.loads(pickle.dumps(cat)), copy.deepcopy(cat)):
        estimate(**INFER, gpu="rtx-4090", catalog=given)
    assert calls == []  # each gives the loader's fingerprint: trusted
    _, gpu = _card(cat)
    object.__setattr__(gpu, "tdp_w", gpu.tdp_w)  # the same value again: the content is unchanged
    estimate(**INFER, gpu="rtx-4090", catalog=cat)
    assert calls == []
    object.__setattr__(gpu, "tdp_w", gpu.tdp_w + 1)  # a value a file may give: checked, then taken
    estimate(**INFER, gpu="rtx-4090", catalog=cat)
    assert calls == [cat]


def test_the_fingerprint_is_of_the_content_and_unpicklable_content_is_never_trusted():
    cat = load_catalog()
    assert cat.checked == content_fingerprint(cat) and len(cat.checked) == 64
    assert content_fingerprint(dataclasses.replace(cat)) == cat.checked  # same content, another object
    object.__setattr__(cat, "sha256", lambda: None)  # no plain value: cannot be pickled
    assert content_fingerprint(cat) == "" and not still_checked(cat)
    assert dataclasses.replace(load_catalog()).checked == ""  # a copy made in code starts unchecked
