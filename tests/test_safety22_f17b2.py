"""Hostile pass h17b, findings fixed on branch f17b2.

- 2: a calibration file's allocator_fraction (0 to 1) written with a leading zero or '_' gets the fraction hint
  the scenario's shares get (planner.core.shares: '05' -> 0.5, '01' and '0_1' -> 0.1), not a plain number.
- 3: a number that is not 0 but below the smallest float ('1.0e-400', '--headroom 1e-400', Decimal('1e-400'), a
  config.json's 1e-400) reads as 0.0: refused as the large end is (planner.core.units.underflow_problem), never
  hinted as another spelling, in files, options and the API.
- 4: a number with one to three digits, a dot and three digits ('100.000', '8.000', '1.500') where a whole number or
  a purchase price in USD belongs may use the dot to separate thousands: refused with both readings
  (planner.core.units.dotted_thousands); the comma hint of a count no longer offers the dotted form.
- 5a: a llama.cpp KV cache type in another case ('Q8_0', 'F16') is refused with "Did you mean 'q8_0'?", as llama.cpp
  refuses it (planner.workload.inference._kv_type), not lower-cased without a word.
- 5b: a date and time ('as_of: 2026-11-01T00:00:00') is quoted as the file writes it (planner.core.yamlio keeps its
  text), and a two-digit year ('26-11-01') gets the YYYY-MM-DD hint (planner.core.fieldhints._date_hint).
- 5d: fit(micro_batch=True) is refused as no whole number (planner.api.fits._targets), not "needs exactly one ...".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

EST_INFER = ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "l4"]


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _calibration(tmp_path: Path, fraction: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text("schema_version: 1\ngpus:\n  - gpu_name: NVIDIA L4\n    measured_on: 2026-11-01\n"
                 f"    cuda_context: 500 MiB\n    allocator_fraction: {fraction}\n")
    return p


# -- #2: allocator_fraction is a share ---------------------------------------------------------------------------

@pytest.mark.parametrize("written, meant", [
    # the digits after the leading zero as a fraction (planner.core.shares.share_reading): '05' -> 0.5,
    # '01' and '0_1' -> 0.1; each lies in allocator_fraction's range, 0 to 1 (planner.validate.calibrate)
    ("05", "0.5"), ("01", "0.1"), ("0_1", "0.1"),
])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_leading_zero_allocator_fraction_gets_the_fraction_hint(tmp_path: Path, written: str, meant: str) -> None:
    code, err = _run(*EST_INFER, "--calibration", str(_calibration(tmp_path, written)))
    assert code == 2
    assert (f"allocator_fraction is a fraction (from 0 to 1), and {written} most likely means {meant}: "
            f"write allocator_fraction: {meant}.") in err, err
    # the hint, followed, is read
    code, out = _run(*EST_INFER, "--calibration", str(_calibration(tmp_path, meant)))
    assert code == 0, out


# -- #5a: llama.cpp KV cache types in another case -----------------------------------------------------------------

LLAMACPP = ["estimate", "--model", "llama-2-7b", "--task", "infer", "--engine", "llama.cpp", "--weights", "Q4_K_M"]


@pytest.mark.parametrize("option, written, meant", [
    # llama.cpp's kv_cache_type_from_str (common/arg.cpp) compares ggml_type_name() exactly: 'Q8_0' is refused there
    ("--kv-dtype", "Q8_0", "q8_0"), ("--kv-dtype", "F16", "f16"), ("--kv-dtype-v", "Q4_0", "q4_0"),
    ("--kv-dtype", "FP16", "f16"),  # fp16 is read as f16; in upper case it is refused as the others are
])
def test_a_kv_type_in_upper_case_is_refused(option: str, written: str, meant: str) -> None:
    code, err = _run(*LLAMACPP, option, written)
    assert code == 2
    assert f"{option}: '{written}' is not a llama.cpp KV cache type. Did you mean '{meant}'?" in err, err
    assert "written in lower case" in err


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_kv_type_in_upper_case_in_a_workload_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "w.yaml"
    p.write_text("model: llama-2-7b\ntask: infer\nengine: llama.cpp\nweights: Q4_K_M\nkv_dtype: Q8_0\n")
    code, err = _run("estimate", "--workload", str(p))
    assert code == 2
    assert "w.yaml:5: kv_dtype: 'Q8_0' is not a llama.cpp KV cache type. Did you mean 'q8_0'?" in err, err


@pytest.mark.parametrize("written", ["q8_0", "fp16", "f16"])
def test_a_kv_type_in_lower_case_is_read(written: str) -> None:
    code, out = _run(*LLAMACPP, "--kv-dtype", written)
    assert code == 0, out


# -- #5d: fit() with a target set to True --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, key", [
    (dict(model="llama-2-7b", task="train", method="qlora", seq_len=1024, micro_batch=True), "micro_batch"),
    (dict(model="llama-3.1-8b", task="infer", concurrency=True), "concurrency"),
    (dict(model="llama-3.1-8b", task="infer", context="max", concurrency=True), "concurrency"),
])
def test_fit_refuses_a_bool_target_as_no_whole_number(kwargs: dict, key: str) -> None:
    import numpy as np

    from planner import fit
    from planner.core.errors import InputError

    for flag in (True, np.True_):
        told = None
        try:
            fit(gpu="l4", **{**kwargs, key: flag})
        except InputError as exc:
            told = str(exc)
        # True is neither a count nor 'max': said so before "needs exactly one ... set to 'max'"
        assert told is not None and told.startswith(f"{key}: must be a whole number or 'max', not true."), told
        assert "exactly one" not in told


# -- #5b: a date and time quoted as written; a two-digit year gets the YYYY-MM-DD hint -------------------------------

def _extras(tmp_path: Path, as_of: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text("name: t\nworkloads:\n  - {name: a, model: llama-2-7b, task: train, method: qlora, micro_batch: 1, "
                 "seq_len: 512, gpus: 1}\nextras:\n  - {description: NVMe SSD 4 TB, unit_price_usd: 300, "
                 f"source: quote ACME-1, as_of: {as_of}, category: storage}}\n")
    return p


@pytest.mark.parametrize("written", ["2026-11-01T00:00:00", "2026-11-01 10:00:00+05:00", "2026-11-01t00:00:00Z"])
def test_a_date_and_time_is_quoted_as_the_file_writes_it(tmp_path: Path, written: str) -> None:
    code, err = _run("plan", str(_extras(tmp_path, written)), "--out", str(tmp_path / "o"))
    assert code == 2
    # YAML reads each as a datetime, which str() shows as '2026-11-01 00:00:00': the message quotes the file's text
    assert f"as_of: must be a date written YYYY-MM-DD or YYYY-MM, not '{written}' (a date and time)." in err, err
    assert "Write the date alone, e.g. 2026-11-01." in err


@pytest.mark.parametrize("written, hint", [
    # 26-11-01: year first (ISO 8601's order) 2026-11-01; day first (dd-MM-yy) 2001-11-26; month 26 is none
    ("26-11-01", "as_of: 2026-11-01 if the year comes first, as_of: 2001-11-26 if the day comes first."),
    # 12-05-12: year first and day first both give 2012-05-12; month first (MM-dd-yy) 2012-12-05
    ("12-05-12", "as_of: 2012-05-12 if the year or day comes first, as_of: 2012-12-05 if the month comes first."),
    # 11-30-26: only month first is a date (no month 30): 2026-11-30
    ("11-30-26", "Write it as YYYY-MM-DD: as_of: 2026-11-30."),
])
def test_a_two_digit_year_gets_the_four_digit_hint(tmp_path: Path, written: str, hint: str) -> None:
    code, err = _run("plan", str(_extras(tmp_path, written)), "--out", str(tmp_path / "o"))
    assert code == 2
    assert f"as_of: must be a date written YYYY-MM-DD or YYYY-MM, not '{written}'." in err, err
    assert hint in err, err


# -- #3: a number below the smallest float -------------------------------------------------------------------------

#: 1e-400 is below 2**-1074 (about 4.9e-324, IEEE 754 binary64's least subnormal): float('1e-400') is 0.0
BELOW = "is below the smallest number a float holds (about 4.9e-324), so it would read as 0"
WL = "  - {name: a, model: llama-2-7b, task: train, method: qlora, micro_batch: 1, seq_len: 512, gpus: 1}\n"


@pytest.mark.parametrize("key", ["utilization", "pue", "residual_fraction"])
@pytest.mark.parametrize("written", ["1e-400", "1.0e-400"])
def test_a_cost_below_the_smallest_float_is_refused(tmp_path: Path, key: str, written: str) -> None:
    # '1e-400' is text to YAML 1.1 (no dot, no exponent sign), '1.0e-400' a float 0.0: both said alike, and no
    # other spelling is hinted (each reads as 0); residual_fraction takes 0, which was not written
    p = tmp_path / "s.yaml"
    p.write_text(f"name: t\nworkloads:\n{WL}costs:\n  {key}: {written}\n")
    code, err = _run("plan", str(p), "--out", str(tmp_path / "o"), "--format", "json")
    assert code == 2
    assert f"s.yaml:5: costs.{key}: " in err and f"{written} {BELOW}" in err, err
    assert "1.0e-400." not in err.replace(f"{written} {BELOW}", "")  # the spelling is never offered
    assert not (tmp_path / "o").exists()


def test_an_allocator_fraction_below_the_smallest_float_is_refused(tmp_path: Path) -> None:
    code, err = _run(*EST_INFER, "--calibration", str(_calibration(tmp_path, "1.0e-400")))
    assert code == 2
    assert f"gpus[0].allocator_fraction: 1.0e-400 {BELOW}. Give the real value." in err, err


@pytest.mark.parametrize("option", ["--headroom", "--lora-dropout", "--micro-batch"])
@pytest.mark.parametrize("written", ["1e-400", "1.0e-400", "-2.5e-999"])
def test_an_option_below_the_smallest_float_is_refused(option: str, written: str) -> None:
    args = EST_INFER if option == "--headroom" else ["estimate", "--model", "llama-2-7b", "--task", "train",
                                                     "--method", "lora"]
    code, err = _run(*args, option, written)
    assert code == 2
    # never a hint of 0 ('--micro-batch 0') or of another spelling: each reads as 0
    assert f"Error: {option}: {written} {BELOW}. Give the real value.\n" == err, err


@pytest.mark.parametrize("written", ["0", "0.0", "0e-5", "1e-300"])
def test_zero_and_small_numbers_are_still_read(written: str) -> None:
    # 0 written as 0 is 0; 1e-300 is above 4.9e-324 (a float holds it)
    code, out = _run(*EST_INFER, "--headroom", written)
    assert code == 0, out


def test_the_api_refuses_a_decimal_below_the_smallest_float() -> None:
    from decimal import Decimal
    from fractions import Fraction

    from planner import estimate
    from planner.core.errors import InputError

    for kwargs, key in ((dict(headroom=Decimal("1e-400"), gpu="l4", task="infer"), "headroom"),
                        (dict(headroom=Fraction(1, 10**400), gpu="l4", task="infer"), "headroom"),
                        (dict(task="train", method="lora", lora_dropout=Decimal("1e-400")), "lora_dropout")):
        told = None
        try:
            estimate(model="llama-2-7b", **kwargs)
        except InputError as exc:
            told = str(exc)
        assert told is not None and told.startswith(f"{key}: ") and BELOW in told, told


def test_a_config_json_number_below_the_smallest_float_is_refused(tmp_path: Path) -> None:
    from planner.core.errors import InputError
    from planner.model.models import resolve_model

    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",\n "rms_norm_eps": 1e-400}', encoding="utf-8")
    told = None
    try:
        resolve_model(str(path))
    except InputError as exc:
        told = str(exc)
    assert told == (f"{path}:2: invalid JSON: 1e-400 is below the smallest number a float holds (about 4.9e-324; it "
                    "reads as 0). Write the value as the model publishes it."), told


# -- #4: a dot separating thousands -----------------------------------------------------------------------------

def _scenario(tmp_path: Path, tokens: str = "100000", price: str = "300", budget: str = "") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text("name: dotk\nworkloads:\n  - name: a\n    model: llama-2-7b\n    task: train\n    method: qlora\n"
                 f"    micro_batch: 1\n    seq_len: 512\n    gpus: 1\n    dataset_tokens: {tokens}\nextras:\n"
                 f"  - {{description: NVMe SSD 4 TB, unit_price_usd: {price}, source: quote ACME-1, as_of: 2026-11-01, "
                 "category: storage}\n" + (f"constraints: {{budget_usd: {budget}}}\n" if budget else ""))
    return p


@pytest.mark.parametrize("kwargs, where, hint", [
    # 100.000 is a hundred thousand where a dot groups thousands (CLDR: de, es, it, nl, pt, tr, id), else 100
    (dict(tokens="100.000"), "workloads[0].dataset_tokens: 100.000 may be 100000 with a dot separating thousands",
     "Write dataset_tokens: 100000 if the dot separates thousands, or dataset_tokens: 100 if it is a decimal point."),
    # a count is whole: 100.500 is 100500 only (100.5 tokens is no count)
    (dict(tokens="100.500"), "dataset_tokens: 100.500 may be 100500",
     "Write dataset_tokens: 100500 if the dot separates thousands."),
    # $1.50 or $1,500 (whole cents either way)
    (dict(price="1.500"), "extras[0].unit_price_usd: 1.500 may be 1500 with a dot separating thousands (as in much "
                          "of Europe) or 1.5 with a decimal point, 1,000 times less",
     "Write unit_price_usd: 1500 if the dot separates thousands, or unit_price_usd: 1.5 if it is a decimal point."),
    (dict(budget="5.000"), "constraints.budget_usd: 5.000 may be 5000",
     "Write budget_usd: 5000 if the dot separates thousands, or budget_usd: 5 if it is a decimal point."),
])
def test_a_dot_that_may_separate_thousands_is_refused(tmp_path: Path, kwargs: dict, where: str, hint: str) -> None:
    code, err = _run("plan", str(_scenario(tmp_path, **kwargs)), "--out", str(tmp_path / "o"), "--format", "json")
    assert code == 2
    assert where in err and hint in err, err


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_each_reading_of_the_dotted_number_is_read(tmp_path: Path) -> None:
    # the hints, followed, are taken: 100000 tokens and $1.5 (1.5 has one decimal, 1500 none)
    for kwargs in (dict(tokens="100000", price="1.5"), dict(tokens="100", price="1500", budget="5000")):
        code, out = _run("plan", str(_scenario(tmp_path, **kwargs)), "--out", str(tmp_path / "o"), "--format", "json")
        assert code == 0, out


@pytest.mark.parametrize("line, hint", [
    ("seq_len: 8.000", "Write seq_len: 8000 if the dot separates thousands, or seq_len: 8 if it is a decimal point."),
    # not whole: refused as before, the thousands reading its hint (tests/test_safety12.py)
    ("seq_len: 2.048", "If the '.' separates thousands, write the number without it: seq_len: 2048"),
])
def test_a_dotted_whole_number_in_a_workload_file(tmp_path: Path, line: str, hint: str) -> None:
    p = tmp_path / "w.yaml"
    p.write_text(f"model: llama-2-7b\ntask: train\nmethod: qlora\n{line}\n")
    code, err = _run("estimate", "--workload", str(p))
    assert code == 2
    assert hint in err, err


@pytest.mark.parametrize("line", ["seq_len: 8.0", "seq_len: 8", "seq_len: 2048"])
def test_other_whole_spellings_are_still_read(tmp_path: Path, line: str) -> None:
    p = tmp_path / "w.yaml"
    p.write_text(f"model: llama-2-7b\ntask: train\nmethod: qlora\n{line}\n")
    assert _run("estimate", "--workload", str(p))[0] == 0


def test_a_dotted_whole_option_is_refused() -> None:
    code, err = _run("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora", "--seq-len", "8.000")
    assert code == 2
    assert ("--seq-len: 8.000 may be 8000 with a dot separating thousands (as in much of Europe) or 8 with a decimal "
            "point, 1,000 times less. Write --seq-len 8000 if the dot separates thousands, or --seq-len 8 if it is a "
            "decimal point.") in err, err


def test_the_comma_hint_of_a_count_offers_no_dotted_form(tmp_path: Path) -> None:
    # '100,000': a decimal comma gives 100, a thousands separator 100000; '100.000' would be refused in turn
    code, err = _run("plan", str(_scenario(tmp_path, tokens="100,000")), "--out", str(tmp_path / "o"))
    assert code == 2
    assert ("Write dataset_tokens: 100 if the comma is a decimal comma, or dataset_tokens: 100000 if it separates "
            "thousands.") in err, err
    assert "100.000" not in err



def test_a_dotted_token_count_option_is_refused() -> None:
    compare = str(Path(__file__).resolve().parent.parent / "scenarios" / "compare-qlora-7b-12gb.yaml")
    code, err = _run("compare", compare, "--tokens-per-month", "100.000")
    assert code == 2
    assert ("Write --tokens-per-month 100000 if the dot separates thousands, or --tokens-per-month 100 if it is a "
            "decimal point.") in err, err
