"""The Python API against hostile arguments (issue 28): numbers of any numeric type that hold whole values
are taken where whole numbers belong; every bad argument is an InputError (a wrong ``out=`` type included,
not a raw TypeError); a Catalog object changed in code is checked as the loader checks a file; an absurd
``costs.mfu`` is refused with its range."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from planner import compare, estimate, load_catalog, plan
from planner.core.errors import CatalogError, InputError, ScenarioError
from planner.core.fields import plain_number

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = str(ROOT / "scenarios" / "qlora-7b-12gb.yaml")
COMPARE = str(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml")
QLORA = {"model": "llama-2-7b", "task": "train", "method": "qlora", "micro_batch": 1, "seq_len": 512}


@pytest.mark.parametrize("value, plain", [
    (np.int64(4), 4), (np.int32(4), 4), (np.uint8(4), 4), (Decimal("4"), 4), (Decimal("4.0"), 4),
    (Fraction(8, 2), 4), (np.float64(4.0), 4.0), (np.float32(0.5), 0.5), (Decimal("2.5"), 2.5),
    (Fraction(3, 2), 1.5), (True, True), (np.bool_(True), np.bool_(True)), ("4", "4"), (None, None),
])
def test_plain_number(value, plain) -> None:
    got = plain_number(value)
    assert got == plain and type(got) is type(plain)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("micro_batch", [np.int64(2), Decimal("2"), Fraction(4, 2), np.float32(2.0), 2])
def test_whole_values_of_any_numeric_type_are_taken(micro_batch) -> None:
    # before: numpy and Decimal integers were refused as "not a whole number"
    r = estimate(**{**QLORA, "micro_batch": micro_batch})
    assert r.estimate.per_gpu_total_bytes == estimate(**{**QLORA, "micro_batch": 2}).estimate.per_gpu_total_bytes
    assert r.estimate.per_gpu_total_bytes != estimate(**QLORA).estimate.per_gpu_total_bytes  # micro-batch 1


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_top_and_tokens_per_month_take_any_numeric_type() -> None:
    assert len(plan(SCENARIO, top=np.int64(2)).to_frame("alternatives")) <= 2
    a = compare(COMPARE, tokens_per_month=Decimal("200000000")).to_frame()
    b = compare(COMPARE, tokens_per_month=200_000_000).to_frame()
    assert a.equals(b)


def test_a_fractional_value_of_another_type_is_still_refused() -> None:
    with pytest.raises(InputError) as info:
        estimate(**{**QLORA, "micro_batch": Decimal("2.5")})
    assert str(info.value).startswith("micro_batch: must be a whole number, not 2.5")


@pytest.mark.parametrize("out, problem", [
    (3, "out: must be a directory path (a str or pathlib.Path), not int"),
    (b"reports", "out: must be a directory path (a str or pathlib.Path), not bytes"),
    (["reports"], "out: must be a directory path (a str or pathlib.Path), not list"),
    ("  ", "out: is blank ('  '): a path of spaces alone"),
    ("a\0b", "out: holds a NUL character"),
])
@pytest.mark.parametrize("function, scenario", [(plan, SCENARIO), (compare, COMPARE)])
def test_a_bad_out_is_an_input_error(function, scenario, out, problem) -> None:
    # before: a raw TypeError from pathlib
    with pytest.raises(InputError) as info:
        function(scenario, out=out)
    assert str(info.value).startswith(problem)


def test_a_bad_format_type_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        plan(SCENARIO, out=str(tmp_path), format=3)
    assert str(info.value).startswith("format: must be a text such as 'xlsx,csv' or a list of format names, not int")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("price, problem", [
    # price_usd is what the entry's prices give (the loader builds it from them): a changed one is refused
    (float("nan"), "nan is not what the entry's other fields give (280.0)"),
    (float("inf"), "inf is not what the entry's other fields give (280.0)"),
    (-5.0, "-5.0 is not what the entry's other fields give (280.0)"),
    (0.0, "0.0 is not what the entry's other fields give (280.0)"),
])
def test_a_catalog_changed_in_code_is_checked_as_the_loader_would(price, problem) -> None:
    # before: a NaN or negative price planned without an error
    cat = load_catalog()
    gpu = next(g for g in cat.gpus if g.id == "rtx-3060-12gb")
    changed = dataclasses.replace(cat, gpus=tuple(dataclasses.replace(g, price_usd=price) if g is gpu else g
                                                  for g in cat.gpus))
    with pytest.raises(CatalogError) as info:
        plan(SCENARIO, catalog=changed)
    assert f"(rtx-3060-12gb).price_usd: {problem}" in str(info.value)


def test_a_catalog_with_a_text_where_a_number_belongs_is_refused() -> None:
    cat = load_catalog()
    changed = dataclasses.replace(cat, gpus=(dataclasses.replace(cat.gpus[0], tdp_w="350 W"),) + cat.gpus[1:])
    with pytest.raises(CatalogError) as info:
        estimate(**QLORA, gpu=cat.gpus[0].id, catalog=changed)
    assert "tdp_w: must be a whole number, not '350 W'" in str(info.value)


def test_the_shipped_catalog_object_passes() -> None:
    cat = load_catalog()
    assert plan(SCENARIO, catalog=cat).choice["gpu_id"] == plan(SCENARIO).choice["gpu_id"]


@pytest.mark.parametrize("mfu", [1e-300, 0.0005, {"qlora-7b": 1e-300}])
def test_an_absurd_mfu_is_refused_with_its_range(mfu) -> None:
    # before: costs.mfu 1e-300 printed job times of 300 digits
    import yaml

    doc = yaml.safe_load(Path(COMPARE).read_text())
    doc.setdefault("costs", {})["mfu"] = mfu
    with pytest.raises(ScenarioError) as info:
        compare(doc)
    text = str(info.value)
    assert "must be at least 0.001, not " in text and len(text) < 300
