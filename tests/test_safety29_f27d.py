"""Issue 28, hostile pass 27: findings of report h27b fixed on branch f27d.

N2. A non-whole fractions.Fraction too large for a float (Fraction(10**400, 3)) and a finite numpy.longdouble
    beyond a float ('1.5e400') are refused by every numeric reader of the API with an InputError naming the
    keyword and its range (never a bare OverflowError, never called "inf"); the one reader is
    planner.core.fieldhints.plain_number, which makes them a planner.core.units.BeyondFloat.
N3. A decimal.Decimal with a huge exponent (Decimal('1E+999999999')) is judged by its exponent before any integer
    of its digits is built: an immediate InputError, shown as given; a Fraction with parts past Python's 4,300-digit
    limit for an int's text is shown by the size of its parts, never a ValueError.
N1. A mapping given to the API (scenario, workload, tokens_per_month, at any depth) holding one key twice once its
    keys are made plain (a str and a str subclass whose __hash__/__eq__ differ) is refused as the YAML reader refuses
    a key written twice, naming the mapping's entry; such a subclass as a keyword name (estimate(**{H('context'):
    1})) is said to be one, not "Did you mean 'context'?".
M2. Range limits are judged on the number as given (a Decimal, a Fraction, a file's or the command line's text),
    not on the float it rounds to: 0.95000000000000000001 is above vram_headroom's / --headroom's 0.95; the refusal
    shows the value with the digits that set it apart from the limit (never 'not 0.95'); 0.95 itself is taken.
M3. A set or frozenset is refused alike by constraints.allowed_gpus and format= (a set has no order), with the list
    to give as the hint, never a close-match sentence about no name.
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal as D
from fractions import Fraction as F
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner import estimate, plan
from planner.cli.main import main
from planner.core.errors import InputError
from planner.core.fields import plain_number, shown_number
from planner.core.units import BeyondFloat, NotWhole, beyond_float, exact_text, outside_exactly

_ROOT = Path(__file__).resolve().parents[1]
_WL = {"name": "w", "model": "llama-2-7b", "task": "infer", "context": 2048}


def _scenario(**extra: object) -> dict:
    return {"name": "s", "workloads": [dict(_WL)], **extra}


def _message(fn) -> tuple[type, str]:
    """The type and text of the error ``fn()`` raises (checked outside any pytest.raises block)."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


# ----- N2 / N3: the one reader, plain_number ------------------------------------------------------------------


def test_beyond_float_judges_decimal_by_exponent_and_fraction_by_bits() -> None:
    # the largest float is (2 - 2**-52) * 2**1023, about 1.7976931348623157e308: just below it is no BeyondFloat
    assert beyond_float(D("1.7976931348623157E+308")) is None
    assert beyond_float(D("1E+308")) is None
    assert beyond_float(F(2**1024 - 2**971)) is None
    just_over = beyond_float(F(2**1024 - 2**971 + 1, 1))
    assert isinstance(just_over, BeyondFloat) and just_over == float("inf")
    assert repr(beyond_float(D("1.8E+308"))) == "1.8E+308"
    neg = beyond_float(D("-1E+999999999"))
    assert neg < 0 and str(neg) == "-1E+999999999"
    # 10**400 / 3 has 400 digits before the point; 400 * log2(10) = 1328.8 bits, * log10(2) again is 400
    assert repr(beyond_float(F(10**400, 3))) == "a number of about 400 digits"
    assert beyond_float(D("NaN")) is None and beyond_float(D("Infinity")) is None and beyond_float(1e308) is None


def test_plain_number_never_expands_a_huge_decimal() -> None:
    # int(Decimal('1E+999999999')) would build a billion-digit integer (hours); a child process proves it returns
    code = ("from decimal import Decimal as D; from planner.core.fields import plain_number; "
            "v = plain_number(D('1E+999999999')); print(type(v).__name__, repr(v))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=_ROOT)
    assert done.stdout.strip() == "BeyondFloat 1E+999999999", done.stderr


def test_plain_number_of_huge_and_tiny_rationals() -> None:
    # a non-whole Fraction beyond a float: float() of it raises OverflowError; now a BeyondFloat
    v = plain_number(F(10**400, 3))
    assert isinstance(v, BeyondFloat) and v > 0
    # a whole Decimal up to 4,300 digits is still the int it holds (shown '1000...000 (401 digits)')
    assert plain_number(D("1E+400")) == 10**400
    # beyond that, never expanded: shown by its digits (1E+5000 has 5001)
    many = plain_number(D("1" + "0" * 30 + "E+5000"))
    assert isinstance(many, BeyondFloat) and repr(many) == "a number of about 5031 digits"
    # Fraction(1, 10**5000): its text would pass Python's 4,300-digit limit (ValueError before the fix)
    tiny = plain_number(F(1, 10**5000))
    assert isinstance(tiny, NotWhole) and tiny == 0
    # 10**5000 has 5001 digits, 16610 bits; 16610 * log10(2) = 5000.1, so 'about 5001'
    assert tiny.text == "1 over a number of about 5001 digits"
    assert shown_number(plain_number(F(1, 10**400))) == "1/1000...000 (401 digits)"


# ----- N2 / N3: through the API keywords and the scenario mapping ---------------------------------------------


@pytest.mark.parametrize("value, shown", [
    (F(10**400, 3), "a number of about 400 digits"),
    (D("1E+999999999"), "1E+999999999"),
])
def test_api_keywords_refuse_numbers_beyond_a_float(value: object, shown: str) -> None:
    kind, text = _message(lambda: estimate(model="llama-2-7b", task="infer", context=value))
    assert issubclass(kind, InputError)
    assert text == f"context: must be at most 16777216, not {shown}."
    kind, text = _message(lambda: estimate(model="llama-2-7b", task="infer", gpu="rtx-4090", headroom=value))
    assert issubclass(kind, InputError)
    assert text.startswith(f"headroom: must be a fraction from 0 to 0.95, not {shown}.")


@pytest.mark.parametrize("value, shown", [
    (F(10**400, 3), "a number of about 400 digits"),
    (D("1E+999999999"), "1E+999999999"),
])
def test_scenario_values_refuse_numbers_beyond_a_float(value: object, shown: str) -> None:
    kind, text = _message(lambda: plan(_scenario(costs={"pue": value})))
    assert issubclass(kind, InputError)
    assert text == f"costs.pue: must be at most 3, not {shown}."
    kind, text = _message(lambda: plan(_scenario(constraints={"budget_usd": value})))
    assert issubclass(kind, InputError)
    assert text == f"constraints.budget_usd: must be at most 1000000000000, not {shown}."  # its ceiling (h28b N4)


def test_api_longdouble_beyond_a_float_is_not_called_inf() -> None:
    np = pytest.importorskip("numpy")
    big = np.longdouble("1.5e400")
    if not np.isfinite(big):  # a platform whose longdouble is a float64 holds no such number
        pytest.skip("longdouble is a float64 here")
    kind, text = _message(lambda: plan(_scenario(constraints={"budget_usd": big})))
    assert issubclass(kind, InputError)
    assert text == "constraints.budget_usd: must be at most 1000000000000, not 1.5e+400."  # its ceiling (h28b N4)
    assert "inf" not in text


def test_api_negative_beyond_a_float_names_the_lower_bound() -> None:
    kind, text = _message(lambda: plan(_scenario(workloads=[{**_WL, "context": D("-1E+999999999")}])))
    assert issubclass(kind, InputError)
    assert text == "workloads[0].context: must be at least 1, not -1E+999999999."


# ----- N1: a key given twice through a str subclass --------------------------------------------------------------


class _Apart(str):
    """A text equal only to itself, with one hash for all: a dict keeps it beside the plain str of its text."""

    def __hash__(self) -> int:
        return 12345

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


_TWICE = ("(two keys hold it, one of a subclass whose __eq__ or __hash__ keeps them apart). Remove one of them; a "
          "repeated key would silently replace the first.")


def test_scenario_mapping_with_a_key_twice_is_refused_at_its_entry() -> None:
    wl = dict(_WL)
    wl[_Apart("context")] = 131072
    assert len(wl) == 5  # the dict holds 'context' twice: 2048, then 131072
    kind, text = _message(lambda: plan({"name": "s", "workloads": [wl]}))
    assert issubclass(kind, InputError)
    assert text == f"scenario.workloads[0]: duplicate key 'context' {_TWICE}"
    top = _scenario()
    top[_Apart("name")] = "other"
    kind, text = _message(lambda: plan(top))
    assert issubclass(kind, InputError)
    assert text == f"scenario: duplicate key 'name' {_TWICE}"


def test_workload_mapping_with_a_key_twice_is_refused() -> None:
    wl = {"model": "llama-2-7b", "task": "infer", "context": 2048, _Apart("context"): 5}
    kind, text = _message(lambda: estimate(workload=wl))
    assert issubclass(kind, InputError)
    assert text == f"workload: duplicate key 'context' {_TWICE}"


def test_keyword_name_of_a_str_subclass_is_said_to_be_one() -> None:
    given = {"model": "llama-2-7b", "task": "infer", "context": 2048, _Apart("context"): 131072}
    kind, text = _message(lambda: estimate(**given))
    assert issubclass(kind, InputError)
    assert text.startswith("estimate() got keyword argument 'context' as a str subclass (_Apart) that Python does "
                           "not match to the keyword")
    assert "Did you mean" not in text


def test_plain_keys_and_a_subclass_key_alone_are_taken() -> None:
    # a str subclass that matches its own text (the usual kind) is one key, read as its text
    class Named(str):
        pass

    wl = {Named("model"): "llama-2-7b", "task": "infer", "context": 2048}
    result = estimate(workload=wl)
    assert result.to_dict()["model"] == "llama-2-7b"


# ----- M2: limits judged on the number as given -----------------------------------------------------------------

_ABOVE = "0.95000000000000000001"  # its float is 0.95 (a float holds 15 to 17 significant digits)


def test_outside_exactly_reads_bounds_as_written_and_values_as_given() -> None:
    assert float(_ABOVE) == 0.95
    assert outside_exactly(D(_ABOVE), 0, 0.95) == "above"
    assert outside_exactly(_ABOVE, 0, 0.95) == "above"
    assert outside_exactly(F(95 * 10**28 + 1, 10**30), 0, 0.95) == "above"
    # the bound is the decimal 0.95, not the float 0.9499999999999999555910790149937...: 0.95 itself is inside
    assert outside_exactly(D("0.95"), 0, 0.95) is None and outside_exactly(F(19, 20), 0, 0.95) is None
    assert outside_exactly(D("-0.00000000000000000001"), 0, 0.95) == "below"
    assert outside_exactly(0.96, 0, 0.95) is None  # a float is judged by the range checks themselves
    # shown with the digits that set it apart from the limit: 17 significant digits would read 0.95
    assert exact_text(F(95 * 10**28 + 1, 10**30), 0.95) == "0.950000000000000000000000000001"
    assert exact_text(F(29, 30)) == "0.96666666666666667"


def test_api_headroom_above_the_ceiling_by_less_than_a_float_holds() -> None:
    for given, shown in ((D(_ABOVE), _ABOVE), (F(95 * 10**28 + 1, 10**30), "0.950000000000000000000000000001")):
        kind, text = _message(lambda: estimate(model="llama-2-7b", task="infer", gpu="rtx-4090", headroom=given))
        assert issubclass(kind, InputError)
        assert text.startswith(f"headroom: must be a fraction from 0 to 0.95, not {shown}.")
    # a Fraction below the smallest float: its 401-digit denominator cut, not echoed
    kind, text = _message(lambda: estimate(model="llama-2-7b", task="infer", gpu="rtx-4090", headroom=F(1, 10**400)))
    assert text.startswith("headroom: 1/1000...000 (401 digits) is below the smallest number a float holds")
    assert len(text) < 200


def test_scenario_share_above_its_ceiling_as_given() -> None:
    kind, text = _message(lambda: plan(_scenario(costs={"residual_fraction": D("1.00000000000000001")})))
    assert issubclass(kind, InputError)
    assert text == "costs.residual_fraction: must be at most 0.99, not 1.00000000000000001."


def test_file_share_above_its_ceiling_as_written(tmp_path: Path) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("name: y\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: infer\n    context: 2048\n"
                    f"constraints:\n  vram_headroom: {_ABOVE}\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["plan", str(path), "--out", str(tmp_path / "o"), "--format", "json"])
    assert res.exit_code == 2
    assert res.output.strip() == f"Error: {path}:8: constraints.vram_headroom: must be at most 0.95, not {_ABOVE}."


@pytest.mark.parametrize("written", [_ABOVE, "0.9500000000000001"])
def test_cli_headroom_above_the_ceiling_is_shown_as_written(written: str) -> None:
    res = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "rtx-4090",
                                    "--headroom", written])
    assert res.exit_code == 2
    assert res.output.strip() == (f"Error: --headroom: must be a fraction from 0 to 0.95, not {written}. Write the "
                                  "share as a fraction, e.g. --headroom 0.05.")


def test_cli_headroom_at_the_ceiling_is_taken() -> None:
    res = CliRunner().invoke(main, ["estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "rtx-4090",
                                    "--headroom", "0.95"])
    assert res.exit_code == 0, res.output
    assert "after 95% headroom" in res.output


# ----- M3: a set is no list, for every keyword alike ------------------------------------------------------------


def test_allowed_gpus_set_is_refused_with_the_list_to_give() -> None:
    kind, text = _message(lambda: plan(_scenario(constraints={"allowed_gpus": {"rtx-4090", "l40s"}})))
    assert issubclass(kind, InputError)
    assert text == ("constraints.allowed_gpus: must be a name (text) or a list of names, not a set (a set has no "
                    "order; planner reads lists). Give a list, e.g. ['l40s', 'rtx-4090'].")
    assert "close" not in text


def test_format_set_is_refused_as_allowed_gpus_is(tmp_path: Path) -> None:
    kind, text = _message(lambda: plan(_scenario(), out=str(tmp_path / "o"), format={"md"}))
    assert issubclass(kind, InputError)
    assert text == ("format: must be a text such as 'xlsx,csv' or a list of format names, not a set (a set has no "
                    "order; planner reads lists). Write format='md'.")
    assert not (tmp_path / "o").exists()
