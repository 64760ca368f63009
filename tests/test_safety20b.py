"""Issue 28, hostile pass h15b (report /work/wt/reports/h15b.md), findings 1, 2, 3, 4 and 7.

1. A GPU's ``memory``, ``memory_usable`` and ``memory_cuda_total`` (and a cloud row's ``gpu_memory_usable``) in
   decimal units ('12 GB') are refused with the binary spelling, as DIMM, platform and cloud memory are: a
   '24 GB' card carries 24 GiB, and '12 GB' with '12 GB' usable loaded as a card 7 % smaller.
2. API: a key that is not a text (a tuple) in ``costs`` (or its ``mfu`` mapping) is an InputError, not a
   TypeError from the reports' copy of the scenario; the hint names keys of that section, not 'memory'.
3. A token count (``--tokens-per-month``, ``tokens_per_month``, ``dataset_tokens``) is read only as docs/scenarios.md
   writes it: digits, then k, M, B or T right after them; '200m', '2b tokens', '1t', '5K', '2G', '200 M', a blank at
   an end, and 'qlora-7b =200M' are refused with the plain spelling as the hint (as '10 gib' is for a size).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import ROOT, _cli
from planner.catalog.loader import load_catalog
from planner.core.errors import CatalogError, InputError


@pytest.fixture(scope="module")
def cat():
    return load_catalog(None)


def _refusal(call, kind=InputError) -> InputError:
    try:
        call()
    except kind as exc:
        return exc
    raise AssertionError("accepted")


# -- 1. GPU memory in decimal units ------------------------------------------------------------------------------

def _gpu_overlay(tmp_path: Path, memory: str, usable: str) -> Path:
    """The shipped rtx-3060-12gb entry as 'my-card', its memory lines replaced (catalog/gpus.yaml)."""
    text = (ROOT / "catalog" / "gpus.yaml").read_text()
    start = text.index("  - id: rtx-3060-12gb\n")
    entry = text[start:text.index("\n\n", start) + 1]
    entry = (entry.replace("id: rtx-3060-12gb", "id: my-card").replace("name: GeForce RTX 3060 12GB", "name: My Card")
             .replace("memory: 12 GiB", f"memory: {memory}").replace("memory_usable: 12288 MiB",
                                                                      f"memory_usable: {usable}"))
    (tmp_path / "gpus.yaml").write_text("schema_version: 1\ngpus:\n" + entry)
    return tmp_path


@pytest.mark.parametrize("memory, usable, key, shown, size, meant", [
    ("12 GB", "12 GB", "memory", "12 GB", "11.18 GiB (GB = 10^9", "12 GiB"),   # 12e9 B / 2^30 = 11.18 GiB
    ("12 GB", "11000 MiB", "memory", "12 GB", "11.18 GiB (GB = 10^9", "12 GiB"),
    ("12GB", "12288 MiB", "memory", "12GB", "11.18 GiB (GB = 10^9", "12 GiB"),   # refused before (usable > memory)
    ("12 GiB", "12000 MB", "memory_usable", "12000 MB", "11.18 GiB (MB = 10^6", "12000 MiB"),  # 12e9 B again
])
def test_gpu_memory_in_decimal_units_is_refused(tmp_path: Path, memory: str, usable: str, key: str, shown: str,
                                                size: str, meant: str) -> None:
    base = _gpu_overlay(tmp_path, memory, usable)
    exc = _refusal(lambda: load_catalog(base), CatalogError)
    line = 9 if key == "memory" else 10
    assert str(exc) == (f"{base}/gpus.yaml:{line}: gpus[0] (my-card).{key}: {shown!r} is {size} bytes), but memory sizes are "
                        "binary. GPU memory is binary-sized (a '24 GB' card carries 24 GiB; nvidia-smi reports MiB): "
                        f"write {meant!r}."), str(exc)


def test_gpu_memory_in_decimal_units_cli(tmp_path: Path) -> None:
    base = _gpu_overlay(tmp_path, "12 GB", "12 GB")
    r = _cli("estimate", "--model", "llama-2-7b", "--task", "infer", "--gpu", "my-card", "--catalog", str(base))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("Error: ") and "write '12 GiB'" in r.stderr, r.stderr


def test_shipped_gpu_memory_loads_binary(cat) -> None:
    # every shipped figure is in binary units: the 3060 is 12 GiB, 12,288 MiB usable (catalog/gpus.yaml)
    assert cat.gpu("rtx-3060-12gb").memory_bytes == 12 * 2**30
    assert cat.gpu("rtx-3060-12gb").memory_usable_bytes == 12288 * 2**20


# -- 2. API: a key that is not a text in costs ---------------------------------------------------------------------

_W = [{"name": "chat", "model": "llama-2-7b", "task": "infer"}]


@pytest.mark.parametrize("call", ["plan", "compare"])
def test_tuple_key_in_costs_is_an_input_error(cat, call: str) -> None:
    import planner

    fn = getattr(planner, call)
    exc = _refusal(lambda: fn({"name": "x", "workloads": _W, "costs": {("a",): 1, "utilization": 0.5}}, catalog=cat))
    # COST_KEYS (planner.cost.tco) begins usd_per_kwh, pue: keys valid in costs
    assert str(exc) == "costs: key ('a',) is not a name. Keys are names such as 'usd_per_kwh' or 'pue'.", str(exc)


def test_tuple_key_in_costs_mfu_is_an_input_error(cat) -> None:
    from planner import plan

    exc = _refusal(lambda: plan({"name": "x", "workloads": _W, "costs": {"mfu": {("a",): 0.3}}}, catalog=cat))
    assert str(exc) == "costs.mfu: key ('a',) is not a name. Keys are workload names, such as 'chat'.", str(exc)


def test_tuple_key_hint_names_a_key_of_the_section(cat) -> None:
    from planner import plan

    exc = _refusal(lambda: plan({"name": "x", "workloads": [{**_W[0], ("a",): 1}]}, catalog=cat))
    msg = str(exc)
    assert msg.startswith("workloads[0]: key ('a',) is not a name. Keys are names such as 'name' or "), msg
    assert "'memory'" not in msg
    exc = _refusal(lambda: plan({"name": "x", "workloads": _W, ("a",): 1}, catalog=cat))
    assert str(exc) == ("key ('a',) is not a name. Keys are names: 'name', 'description', 'notes', 'workloads', "
                        "'constraints', 'extras', 'objective', 'costs'."), str(exc)


# -- 3. token counts written as the docs write them -------------------------------------------------------------

COMPARE = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


@pytest.mark.parametrize("value, problem, fixed", [
    ("qlora-7b =200M", "'qlora-7b =200M' has a blank before the '='", "Write it without blanks: "),
    (" qlora-7b=200M", "' qlora-7b=200M' has a blank before the workload name", "Write it without blanks: "),
    ("qlora-7b=200 M", "'200 M' has a blank between the number and 'M'", "Write the suffix right after the digits: "),
    ("qlora-7b=200m", "'200m' writes the suffix 'm', not 'M' (m is milli in SI)", "Token counts write k, M, B or T: "),
    ("qlora-7b=200M ", "'200M ' has a blank at its end", "Write the count without blanks: "),
])
def test_tokens_per_month_option_spellings_are_refused(cat, value: str, problem: str, fixed: str) -> None:
    from planner import compare

    exc = _refusal(lambda: compare(COMPARE, catalog=cat, tokens_per_month=value))
    tail = " (k, M, B, T)." if "right after" in fixed else "."
    assert str(exc) == f"tokens_per_month: {problem}. {fixed}--tokens-per-month qlora-7b=200M{tail}", str(exc)


@pytest.mark.parametrize("value, fixed", [("200b", "200B"), ("1t", "1T"), ("2m", "2M"), ("5K", "5k"), ("2G", "2B")])
def test_token_suffix_in_another_case_is_refused(value: str, fixed: str) -> None:
    from planner.workload.options import parse_token_count, token_text_problem

    assert parse_token_count(value) is None
    problem, hint = token_text_problem(value, lambda t: f"dataset_tokens: {t}")
    assert problem.startswith(f"{value!r} writes the suffix {value[-1]!r}, not {fixed[-1]!r}"), problem
    assert hint == f"Token counts write k, M, B or T: dataset_tokens: {fixed}.", hint


def test_canonical_token_counts_still_read() -> None:
    from planner.workload.options import parse_token_count

    # k 1e3, M 1e6, B 1e9, T 1e12 (SI, docs/scenarios.md); ' tokens' may follow
    for text, count in (("200M", 2e8), ("50k", 5e4), ("1.5B", 1.5e9), ("2T", 2e12), ("2B tokens", 2e9),
                        ("200M tokens a month", 2e8), ("100000000", 1e8)):
        assert parse_token_count(text) == count, text


def test_dataset_tokens_in_a_file_follows_the_same_rule(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text("name: w\nmodel: llama-2-7b\ntask: train\nmethod: qlora\ndataset_tokens: 2b tokens\n")
    r = _cli("estimate", "--workload", str(tmp_path / "w.yaml"), "--gpu", "rtx-4090")
    assert r.returncode == 2, r.stdout
    assert r.stderr == (f"Error: {tmp_path / 'w.yaml'}:5: dataset_tokens: '2b tokens' writes the suffix 'b', not 'B'. "
                        "Token counts write k, M, B or T: dataset_tokens: 2B.\n"), r.stderr
