"""Issue 28, hostile pass h15b (report /work/wt/reports/h15b.md), findings 1, 2, 3, 4 and 7.

1. A GPU's ``memory``, ``memory_usable`` and ``memory_cuda_total`` (and a cloud row's ``gpu_memory_usable``) in
   decimal units ('12 GB') are refused with the binary spelling, as DIMM, platform and cloud memory are: a
   '24 GB' card carries 24 GiB, and '12 GB' with '12 GB' usable loaded as a card 7 % smaller.
2. API: a key that is not a text (a tuple) in ``costs`` (or its ``mfu`` mapping) is an InputError, not a
   TypeError from the reports' copy of the scenario; the hint names keys of that section, not 'memory'.
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
