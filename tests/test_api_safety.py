"""The API refuses every hostile argument with one InputError line, never another exception (issue 28, second
hostile pass): numbers past Python's int-to-text limit, signalling NaNs, paths no file system can encode, a
non-path catalog, and a Catalog changed in code with a 0 divisor or text the loader refuses."""

from __future__ import annotations

import dataclasses as dc
import decimal
import fractions
from pathlib import Path

import pytest

import planner
from planner.core.errors import InputError

BASE = str(Path(__file__).resolve().parent.parent / "scenarios" / "qlora-7b-12gb.yaml")
KW = dict(model="llama-2-7b", task="train", method="qlora", seq_len=512)


def _line(call) -> str:
    with pytest.raises(InputError) as e:
        call()
    return e.value.one_line()


@pytest.mark.parametrize("value", [10**5000, fractions.Fraction(10**5000, 1), decimal.Decimal(10) ** 5000],
                         ids=["int", "Fraction", "Decimal"])
def test_a_number_past_the_int_text_limit_is_refused(value) -> None:
    line = _line(lambda: planner.estimate(**KW, micro_batch=value))
    # 10**5000 has 5001 digits: bit_length 16610 x log10(2) = 5000.1 -> "about 5001"
    assert line.startswith("micro_batch: must be at most 65536, not a number of about 5001 digits")


def test_a_signalling_nan_is_refused() -> None:
    line = _line(lambda: planner.estimate(**KW, micro_batch=decimal.Decimal("sNaN")))
    assert line.startswith("micro_batch: must be a whole number, not nan")
    line = _line(lambda: planner.estimate(workload={"model": "llama-2-7b", "task": "infer",
                                                    "context": decimal.Decimal("sNaN")}))
    assert "context: must be a whole number, not nan" in line


def test_a_path_no_file_name_can_hold_is_refused() -> None:
    line = _line(lambda: planner.plan(BASE, out="o\ud800"))
    assert line.startswith("out: holds '\\ud800', a character no file name can hold")
    line = _line(lambda: planner.plan("x\ud800.yaml"))
    assert "its name holds '\\ud800', a character no file name can hold" in line and "NUL" not in line


def test_load_catalog_of_a_number_is_refused() -> None:
    line = _line(lambda: planner.load_catalog(1))
    assert line.startswith("overlay: must be a directory path (a str or pathlib.Path), not int")


@pytest.fixture(scope="module")
def catalog():
    return planner.load_catalog()


def _with_gpu0(c, **changes):
    return dc.replace(c, gpus=(dc.replace(c.gpus[0], **changes),) + c.gpus[1:])


def test_a_zero_divisor_in_a_catalog_object_is_refused(catalog) -> None:
    line = _line(lambda: planner.plan(BASE, catalog=_with_gpu0(catalog, bf16_tflops=0.0)))
    assert ".bf16_tflops: must be more than 0, not 0.0" in line


@pytest.mark.parametrize("changes, message", [
    (dict(id="=cmd"), "id: id '=cmd' must be lower-case letters and digits joined by '.' or '-'"),
    (dict(id="x\x1b"), "id: holds the control character U+001B (ESCAPE)"),
    (dict(name="n\x1b]0;PWN\x07"), "name: holds the control character U+001B (ESCAPE)"),
    (dict(source="s\u202e"), "source: holds U+202E (RIGHT-TO-LEFT OVERRIDE), a bidirectional control"),
])
def test_catalog_object_text_is_checked_as_the_loader_checks_a_file(catalog, changes, message) -> None:
    line = _line(lambda: planner.plan(BASE, catalog=_with_gpu0(catalog, **changes)))
    assert line.startswith("the Catalog given: gpus[0]") and message in line
    assert "\x1b" not in line and "\u202e" not in line
