"""Issue 28, hostile pass 31: config.json's module patterns, one budget for the whole file, no warnings.

Covers h31b N1 (the pass-30 cap of 100,000 pieces was per list: a compressed-tensors config with 40
``config_groups`` of 99 ``m.{0,990}Z`` targets kept estimate busy 90 s, an AWQ list of 99 such entries on
10,000 layers 22 s; now one budget of 10,000 pieces for all lists and groups together, at most 64
``config_groups``, and RE2 reads no ``targets`` list and no ``ignore`` of a scheme the memory model does not
size) and N2 (``[[a]``, ``[a&&b]``, ``[a||b]``, ``[a~~b]``, ``[a--b]`` made Python's ``re`` print raw
FutureWarning lines, and under ``PYTHONWARNINGS=error`` the run ended "internal error": now refused at the
entry in one line before Python compiles the pattern, with no warning, whatever the warning filters).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from planner.core.errors import InputError, ModelConfigError
from planner.memory.quant import kept_linear
from planner.model.architecture import from_hf_config
from planner.model.linearre import MAX_PIECES, pieces, set_operation
from planner.model.quant_checks import MAX_GROUPS
from planner.model.quantization import KeptModules, kept_modules
from tests.test_safety31_f29a import _LLAMA, AWQ, _deep

ROOT = Path(__file__).resolve().parents[1]

_W8 = {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "channel", "dynamic": False}
_A8 = {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "token", "dynamic": True}


def _ct(ignore: list, extra: dict | None = None) -> dict:
    """A compressed-tensors FP8 W8A8 config (sized by the memory model when ``extra`` adds no group)."""
    groups = {"group_0": {"targets": ["Linear"], "weights": _W8, "input_activations": _A8}, **(extra or {})}
    return {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": groups,
            "ignore": ignore}


def _refusal(q: dict, cfg: dict = _LLAMA) -> str:
    with pytest.raises(ModelConfigError) as got:
        from_hf_config(dict(cfg, quantization_config=q), "m/config.json")
    assert isinstance(got.value, InputError)
    return str(got.value)


def _cli(tmp_path: Path, q: dict, warn: str = "error") -> subprocess.CompletedProcess:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "config.json").write_text(json.dumps(dict(_LLAMA, quantization_config=q)))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": warn}
    return subprocess.run([sys.executable, "-m", "planner", "estimate", "--model", "./m", "--task", "infer",
                           "--context", "1024", "--gpu", "h100-sxm"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


# ----- N2: what Python's re warns about inside a class: refused before Python compiles it ----------------------------

SET_OPS = [("[[a]", "a '[' first inside a class (a nested set)"),
           ("model.layers.0.[[m]lp", "a '[' first inside a class (a nested set)"),
           ("[a&&b]", "'&&' inside a class (a set intersection)"), ("[a||b]", "'||' inside a class (a set union)"),
           ("[a~~b]", "'~~' inside a class (a symmetric difference)"),
           ("[a--b]", "'--' inside a class (a set difference)"), (r"[\d--]", "'--' inside a class (a set difference)")]


@pytest.mark.parametrize("entry, words", SET_OPS)
def test_a_set_operation_is_refused_at_its_entry_without_a_warning(entry: str, words: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning planner lets Python give fails the test
        said = _refusal(dict(AWQ, modules_to_not_convert=["lm_head", entry]))
    assert f"quantization_config.modules_to_not_convert[1]: {json.dumps(entry)} writes {words}" in said, said
    assert "warns it will read differently in future releases" in said and "\n" not in said, said


@pytest.mark.parametrize("pattern", [
    "[[a]", "x[[m]lp", "[a&&b]", "[a||b]", "[a~~b]", "[a--b]", r"[\d--]", r"[\]&&]", "[x-y--]",
    "[^[a]", "[&&a]", "[a-]", "(?#[[)x", r"[\[a]", r"[a\&&b]", "[]&&]", "[a-&&]", "mlp", "[a-z]+", "[-a]",
])
def test_set_operation_agrees_with_pythons_warnings(pattern: str) -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            re.compile(pattern)
        except re.error:
            pass
    warned = any(issubclass(w.category, FutureWarning) for w in seen)
    assert (set_operation(pattern) is not None) == warned, (pattern, [str(w.message) for w in seen])


def test_the_matcher_itself_gives_no_warning_for_such_an_entry() -> None:
    """An API caller that builds the list itself (no config.json check): the entry is left out, quietly."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keeps = KeptModules("modules_to_not_convert", ("[[m]lp", "x[a&&b]")).matcher()
        assert keeps("model.layers.0.mlp.up_proj") is False


@pytest.mark.parametrize("q, field", [
    (dict(AWQ, modules_to_not_convert=["model.layers.0.[[m]lp"]), "modules_to_not_convert[0]"),
    (_ct(["lm_head", "re:.*[[m]lp.*"]), "ignore[1]"),
    (dict(AWQ, modules_to_not_convert=["[a--b]"]), "modules_to_not_convert[0]"),
], ids=["awq", "compressed_tensors", "difference"])
@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_cli_says_one_line_under_warnings_as_errors(tmp_path: Path, q: dict, field: str) -> None:
    got = _cli(tmp_path, q)
    assert got.returncode == 2, got.stderr
    assert got.stderr.startswith(f"Error: m/config.json:1: quantization_config: quantization_config.{field}: "), \
        got.stderr
    assert got.stderr.count("\n") == 1, got.stderr  # no FutureWarning line, no second Error line
    assert "internal error" not in got.stderr and "Warning" not in got.stderr


# ----- N1: one budget for the whole config.json --------------------------------------------------------------------

def test_the_budget_is_the_whole_files() -> None:
    ignore = ["re:" + f"m.{{0,990}}Z{i}" for i in range(6)]  # 'm', 990, 'Z', a digit: 993 each, 5,958: under the cap
    more = [f"m.{{0,990}}T{i}" for i in range(6)]  # the same again, in a second list RE2 reads
    assert sum(pieces(e[3:]) for e in ignore) < MAX_PIECES and sum(pieces(e) for e in more) < MAX_PIECES
    start = time.perf_counter()
    said = _refusal(dict(_ct(ignore), modules_to_not_convert=more))
    took = time.perf_counter() - start
    assert pieces("m.{0,990}Z0") == 993
    # modules_to_not_convert: 5,958 (checked first, with the keys of every method; the compressed-tensors lists
    # after); ignore[0..3]: 993 each -> 9,930; ignore[4] brings 10,923 > 10,000
    assert 'ignore[4]: "re:m.{0,990}Z4" brings the quantization_config\'s patterns (all lists ' \
           "and config_groups together) to 10,923 pieces" in said, said
    assert MAX_PIECES == 10_000 and "more than the 10,000" in said
    assert took < 5, took


def test_targets_are_not_counted_in_the_budget() -> None:
    """A config_groups ``targets`` list is never read by RE2 (the memory model matches none), so its pieces do not
    count (h33b m8: a checkpoint with long per-layer targets was refused)."""
    targets = [f"re:m.{{0,990}}T{i}" for i in range(12)]  # 11,916 pieces: over the cap if they counted
    assert sum(pieces(t[3:]) for t in targets) > MAX_PIECES
    arch = from_hf_config(dict(_LLAMA, quantization_config=_ct(["lm_head"], {"g1": {"targets": targets,
                                                                                   "weights": _W8}})), "m")
    assert arch.extra["quantization_config"]["config_groups"]["g1"]["targets"] == targets


def test_more_than_64_config_groups_are_refused() -> None:
    groups = {f"g{i}": {"targets": [f"re:m{i}.*"], "weights": _W8} for i in range(MAX_GROUPS)}  # + group_0: 65
    said = _refusal(_ct(["lm_head"], groups))
    assert MAX_GROUPS == 64
    assert "quantization_config.config_groups holds 65 groups, more than the 64 read" in said, said
    from_hf_config(dict(_LLAMA, quantization_config=_ct(["lm_head"], dict(list(groups.items())[:63]))), "m")  # 64


def test_targets_and_an_unsized_schemes_ignore_are_not_read_by_re2() -> None:
    """A look-ahead, which RE2 cannot read: refused in a sized scheme's ignore, taken where planner matches
    nothing (targets; the ignore of a scheme it sizes as bf16 with a warning)."""
    assert "uses a look-ahead" in _refusal(_ct(["re:(?=x).*"]))
    two = {"g1": {"targets": ["re:(?=x).*attn"], "weights": _W8}}  # two groups: not sized
    arch = from_hf_config(dict(_LLAMA, quantization_config=_ct(["re:(?=x).*"], two)), "m/config.json")
    assert arch.extra["quantization_config"]["config_groups"]["g1"]["targets"] == ["re:(?=x).*attn"]
    # Python's checks still hold there: no regular expression, or a set operation
    assert "is not a regular expression" in _refusal(_ct(["lm_head"], {"g1": {"targets": ["re:(x"], "weights": _W8}}))
    assert "(a set intersection)" in _refusal(_ct(["lm_head"], {"g1": {"targets": ["re:[a&&b]"], "weights": _W8}}))


def test_the_report_cases_are_refused_or_read_at_once() -> None:
    groups = {f"g{g}": {"targets": [f"re:m.{{0,990}}Z{g}_{i}" for i in range(99)], "weights": _W8}
              for g in range(40)}
    awq = dict(AWQ, modules_to_not_convert=[f"m.{{0,990}}Z{i}" for i in range(99)])
    start = time.perf_counter()
    said = _refusal(awq, _deep(10_000))
    took = time.perf_counter() - start
    assert "more than the 10,000 planner's linear-time matcher (RE2) takes" in said, said
    assert took < 5, took  # 22 s for the estimate before
    # 40 groups of 99 targets each: never read by RE2 (targets are not matched; 40 groups are not a scheme the
    # memory model sizes), so read, not refused, and at once (90 s for the estimate before pass 31)
    start = time.perf_counter()
    from_hf_config(dict(_deep(10_000), quantization_config=_ct(["lm_head"], groups)), "m")
    assert time.perf_counter() - start < 5


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_the_worst_accepted_list_on_10000_layers_takes_seconds() -> None:
    names = [f"m.{{0,990}}Z{i}" for i in range(10)]  # 9,930 pieces: the costliest shape measured under the cap
    assert sum(pieces(n) for n in names) <= MAX_PIECES
    start = time.perf_counter()
    arch = from_hf_config(dict(_deep(10_000), quantization_config=dict(AWQ, modules_to_not_convert=names)), "m")
    kept = kept_linear(arch, kept_modules(arch.extra["quantization_config"]), 1, ("attention", "mlp"))
    took = time.perf_counter() - start
    assert kept.tensors == 0  # no path starts with 'm' and holds a 'Z'
    assert took < 15, took  # about 2 s on 2 loaded cores; 20 such entries took 7.5 s, 195 x .{0,99} 81 s
