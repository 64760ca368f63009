"""Issue 28, hostile pass 19X: findings of h19b fixed on branch f19b2.

Covers: M1 (a count written with an exponent beyond any float, '1e999999', a hexadecimal float '0x1p10',
'inf' and 'nan', on the command line and in a file, get planner's own line with a hint).
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from planner.cli.main import main


def _run(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(main, args)
    return res.exit_code, res.output


_TRAIN = ["estimate", "--model", "llama-2-7b", "--task", "train"]


def test_a_count_beyond_any_float_gets_planners_line_with_a_hint() -> None:
    # M1: float('1e999999') is inf, so no digits can be hinted; the line is planner's own, naming the option
    for value in ("1e999999", "9e9999999999", "-1e999", "1e20"):
        code, out = _run(_TRAIN + ["--seq-len", value])
        assert code == 2, value
        assert f"Error: --seq-len: '{value}' is not a whole number. It is far beyond any count planner reads" in out
        assert "not a valid integer" not in out


def test_every_integer_option_gets_the_hint() -> None:
    # M1: a plain INT option (--grad-accum) and a range one (--fsdp-version) alike
    for opt in ("--grad-accum", "--fsdp-version", "--micro-batch"):
        code, out = _run(_TRAIN + ["--seq-len", "512", opt, "1e999"])
        assert code == 2, opt
        assert f"{opt}: '1e999' is not a whole number. It is far beyond any count" in out


def test_a_hexadecimal_float_gets_its_decimal_value() -> None:
    # M1: 0x1p10 is 1 x 2^10 = 1024 (float.fromhex)
    code, out = _run(_TRAIN + ["--seq-len", "0x1p10"])
    assert code == 2
    assert "Write the whole number in digits: --seq-len 1024." in out


def test_inf_and_nan_get_a_hint() -> None:
    for value in ("inf", "-inf", "nan"):
        code, out = _run(_TRAIN + ["--seq-len", value])
        assert code == 2, value
        assert "there is no infinite or not-a-number count" in out
        assert "not a valid integer" not in out


def test_a_count_beyond_any_float_in_a_file_gets_the_hint(tmp_path: Path) -> None:
    # M1: the same hint in a scenario, for '1e999999' (a text to YAML 1.1: no dot) and '.inf' (a float)
    for value in ("1e999999", ".inf"):
        f = tmp_path / "s.yaml"
        f.write_text(f"name: x\nworkloads:\n  - {{model: llama-2-7b, task: train, seq_len: {value}}}\n",
                     encoding="utf-8")
        code, out = _run(["plan", str(f)])
        assert code == 2, value
        assert "workloads[0].seq_len: must be a whole number" in out
        assert ("far beyond any count" if value[0] == "1" else "no infinite or not-a-number count") in out
