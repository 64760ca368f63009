"""Issue 28, hostile pass 10 (report h10b #1, #3, #6-#10, #15, #16 and its minor list).

1. A release number of thousands of digits (bnb_version, engine_version, framework_version, a llama.cpp build)
   is one line naming the field with the release hint, never Python's own int() limit text; the API raises
   InputError.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner import estimate
from planner.cli.main import main
from planner.core.errors import InputError

N5000 = "9" * 5000


def _cli_error(*args: str) -> str:
    """The stderr of ``planner *args``: exit 2 required."""
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2, r.output
    return r.stderr


# -- 1. release numbers of thousands of digits ----------------------------------------------------------------

def test_a_bnb_version_of_thousands_of_digits_is_one_line_naming_the_option() -> None:
    err = _cli_error("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "qlora",
                     "--bnb-version", "0.43." + N5000)
    assert err == ("Error: --bnb-version: the release '0.43.999999999999999...' (5,003 digits) is too long to read: "
                   "no release planner reads has more than 40 digits. Write it as X.Y.Z, e.g. --bnb-version "
                   "'0.42.0'.\n"), err


@pytest.mark.parametrize("line, shown, hint", [
    ("{model: llama-2-7b, task: train, method: qlora, bnb_version: '0.43.%s'}", "bnb_version: the release "
     "'0.43.999999999999999...' (5,003 digits)", "Write it as X.Y.Z, e.g. bnb_version: '0.42.0'."),
    ("{model: llama-2-7b, task: train, method: lora, framework: torchtune, framework_version: '0.%s.0'}",
     "framework_version: the release '0.999999999999999999...' (5,002 digits)",
     "Write it as torchtune writes it, e.g. '0.5.0'."),
    ("{model: llama-2-7b, task: infer, engine: llama.cpp, weights: q4_k_m, engine_version: 'b%s'}",
     "engine_version: the release 'b9999999999999999999...' (5,000 digits)",
     "Give a llama.cpp release from b1022 to b11312 (the default)."),
    ("{model: llama-2-7b, task: infer, engine: vllm, engine_version: '0.10.%s'}",
     "engine_version: the release '0.10.999999999999999...' (5,003 digits)",
     "Give a vllm release from 0.6.0 to 0.14.1 (the default)."),
])
def test_a_release_of_thousands_of_digits_in_a_workload_file_is_one_line(tmp_path: Path, line: str, shown: str,
                                                                         hint: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(line % N5000 + "\n", encoding="utf-8")
    err = _cli_error("estimate", "--workload", str(path))
    assert err == (f"Error: {path}:1: {shown} is too long to read: no release planner reads has more than 40 "
                   f"digits. {hint}\n"), err


@pytest.mark.parametrize("kw", [{"task": "train", "method": "qlora", "bnb_version": "0.43." + N5000},
                                {"task": "infer", "engine": "vllm", "engine_version": "0." + N5000 + ".0"}])
def test_the_api_raises_input_error_for_a_release_of_thousands_of_digits(kw: dict) -> None:
    with pytest.raises(InputError) as caught:
        estimate(model="llama-2-7b", **kw)
    text = str(caught.value)
    assert "is too long to read: no release planner reads has more than 40 digits" in text, text
    assert "set_int_max_str_digits" not in text and "4300" not in text, text
