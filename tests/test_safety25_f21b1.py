"""Issue 28, hostile pass 21B: findings of report h21b fixed on branch f21b1.

N3. A ``numpy.timedelta64`` (an integer type to numpy) or ``datetime64`` given for a numeric keyword, a
    scenario's number or a Catalog's number is refused with the error naming the keyword or field ("must be a
    whole number, not timedelta64"), whatever its unit: no bare TypeError (seconds), and 512 ns is no 512
    tokens nor 1000 ns a $1,000 budget.
"""

from __future__ import annotations

import dataclasses

import pytest

from planner import estimate, fit, plan
from planner.catalog.loader import load_catalog
from planner.core.errors import CatalogError, InputError
from planner.core.fields import plain_number

np = pytest.importorskip("numpy")

W = dict(model="llama-2-7b", task="train", method="qlora", micro_batch=1, seq_len=512)


def _scenario(**extra):
    return {"name": "t", "workloads": [{"name": "w", **W}], **extra}


DURATIONS = [np.timedelta64(512, "ns"), np.timedelta64(512, "s"), np.timedelta64(3, "m"), np.datetime64(512, "s")]


@pytest.mark.parametrize("value", DURATIONS, ids=str)
def test_plain_number_leaves_a_duration_as_given(value):
    assert plain_number(value) is value  # not int(value): 512 for ns, a TypeError for seconds
    assert plain_number(np.int64(512)) == 512 and type(plain_number(np.int64(512))) is int  # numbers as before


@pytest.mark.parametrize("value", DURATIONS, ids=str)
@pytest.mark.parametrize("key", ["seq_len", "micro_batch"])
def test_estimate_refuses_a_duration_naming_the_keyword(key, value):
    with pytest.raises(InputError) as got:
        estimate(**{**W, key: value})
    said = str(got.value)
    assert said.startswith(f"{key}: must be a whole number, not {type(value).__name__}"), said


@pytest.mark.parametrize("value", DURATIONS, ids=str)
def test_fit_refuses_a_duration_seq_len(value):
    with pytest.raises(InputError) as got:
        fit(model="llama-2-7b", task="train", method="qlora", gpu="rtx-4090", micro_batch="max", seq_len=value)
    assert str(got.value).startswith("seq_len: must be a whole number"), str(got.value)


def test_headroom_and_top_refuse_a_duration():
    with pytest.raises(InputError) as got:
        estimate(model="llama-2-7b", task="infer", context=512, gpu="rtx-4090", headroom=np.timedelta64(0, "s"))
    assert str(got.value).startswith("headroom: must be a fraction"), str(got.value)
    with pytest.raises(InputError) as got:
        plan(_scenario(), top=np.timedelta64(3, "ns"))
    assert str(got.value).startswith("top: must be a whole number"), str(got.value)


@pytest.mark.parametrize("value", [np.timedelta64(1000, "ns"), np.timedelta64(10, "s")], ids=str)
def test_scenario_numbers_refuse_a_duration(value):
    with pytest.raises(InputError) as got:
        plan(_scenario(constraints={"budget_usd": value}))
    said = str(got.value)
    assert "constraints.budget_usd: must be a number, not timedelta64" in said, said
    extra = {"description": "d", "unit_price_usd": value, "source": "s", "as_of": "2026-01-15"}
    with pytest.raises(InputError) as got:
        plan(_scenario(extras=[extra]))
    said = str(got.value)
    assert "extras[0].unit_price_usd: must be a number, not timedelta64" in said, said


@pytest.mark.parametrize("value", [np.timedelta64(2, "ns"), np.timedelta64(2, "s")], ids=str)
def test_catalog_refuses_a_duration_price(value):
    cat = load_catalog()
    first = cat.instances[0]
    given = dataclasses.replace(cat, instances=(dataclasses.replace(first, usd_per_hour=value),) + cat.instances[1:])
    with pytest.raises(CatalogError) as got:
        plan(_scenario(), catalog=given)
    said = str(got.value)
    assert f"instances[0] ({first.id}).usd_per_hour: must be a number, not timedelta64" in said, said
