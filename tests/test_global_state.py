"""No interpreter-wide state changed by a library call (issue 33).

A program that imports the planner keeps its own garbage-collector settings, locale and umask, even
while a call runs (another of its threads would see a change), and no module keeps a cache at
module level (a long-lived caller's memory would grow with each call, and a test's result would
depend on the tests before it). Each check can fail: the recorders below see every call of the
functions that change that state, however briefly, and the module scan sees any
``functools.lru_cache``/``functools.cache`` object bound in a module or a class of it.
"""

from __future__ import annotations

import functools
import gc
import importlib
import locale
import os
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner
import planner.api
from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
#: The functions that change the collector's, the locale's or the file-mode mask's process-wide state.
CHANGERS = {gc: ("disable", "enable", "set_threshold", "freeze", "unfreeze"), locale: ("setlocale",), os: ("umask",)}


@pytest.fixture
def changes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each call of a state-changing gc or locale function (the call still happens)."""
    seen: list[str] = []
    for module, names in CHANGERS.items():
        for name in names:
            real = getattr(module, name)

            def record(*args: Any, _real: Any = real, _name: str = f"{module.__name__}.{name}", **kw: Any) -> Any:
                if _name != "locale.setlocale" or (args[1:] or kw.get("locale")) not in ((), (None,), None):
                    seen.append(_name)  # setlocale(category) with no locale only reads it
                return _real(*args, **kw)

            monkeypatch.setattr(module, name, record)
    return seen


def _state() -> tuple[Any, ...]:
    return gc.isenabled(), gc.get_threshold(), locale.setlocale(locale.LC_ALL)


@pytest.mark.parametrize("call", ["load_catalog", "estimate", "plan", "cli plan"])
def test_a_call_leaves_the_collector_and_locale_alone(call: str, changes: list[str], tmp_path: Path) -> None:
    before = _state()
    if call == "load_catalog":
        planner.api.load_catalog()
    elif call == "estimate":
        planner.api.estimate(model="llama-2-7b", task="train", method="qlora", micro_batch=2, seq_len=1024)
    elif call == "plan":
        planner.api.plan(SCENARIO, out=tmp_path, format="csv,json")
    else:  # the command line, run in this process as CliRunner does
        r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(tmp_path), "--format", "csv"])
        assert r.exit_code == 0, r.stderr
    assert changes == []
    assert _state() == before


def test_the_recorder_sees_a_brief_change(changes: list[str]) -> None:
    """The check above can fail: a pause of the collector, undone at once, is recorded."""
    was = gc.isenabled()
    gc.disable()
    if was:
        gc.enable()
    assert changes[0] == "gc.disable"


def _module_caches() -> list[str]:
    found = []
    for info in pkgutil.walk_packages(planner.__path__, "planner."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            holders = [(name, value)]
            if isinstance(value, type) and value.__module__ == module.__name__:
                holders += [(f"{name}.{k}", getattr(v, "__func__", v)) for k, v in vars(value).items()]
            found += [f"{info.name}.{n}" for n, v in holders if isinstance(v, functools._lru_cache_wrapper)]
    return found


def test_no_module_keeps_a_functools_cache() -> None:
    assert _module_caches() == []


def test_the_cache_scan_sees_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan above can fail: an lru_cache bound in a planner module is found."""
    import planner.core.units as units

    monkeypatch.setattr(units, "_cached_for_the_test", functools.lru_cache(maxsize=1)(len), raising=False)
    assert _module_caches() == ["planner.core.units._cached_for_the_test"]


# --------------------------------------------------------------------------- the measuring functions

#: What planner.validate's measuring runs set for the whole interpreter (torch's generator and thread
#: count, Transformers' and bitsandbytes' loggers, Python's warnings); the runs do it in the measuring
#: worker, a child process (planner.validate.worker), never in the caller's.
TORCH_CHANGERS = ("manual_seed", "seed", "set_rng_state", "set_num_threads", "set_num_interop_threads",
                  "use_deterministic_algorithms", "set_default_dtype", "set_default_device")
WARNING_CHANGERS = ("filterwarnings", "simplefilter", "resetwarnings")
LOGGERS = ("transformers", "bitsandbytes", "peft", "torch", "")
TINY_LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256}


@pytest.fixture
def torch_changes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each call of a function that sets torch's generator or threads, Python's warning filters,
    a logger's level or Transformers' verbosity and progress bars (the call still happens)."""
    import logging
    import warnings

    torch = pytest.importorskip("torch")
    hf_logging = pytest.importorskip("transformers.utils.logging")
    seen: list[str] = []
    targets = [(torch, n) for n in TORCH_CHANGERS] + [(warnings, n) for n in WARNING_CHANGERS]
    targets += [(logging.Logger, "setLevel"), (logging, "disable"), (logging, "basicConfig")]
    targets += [(hf_logging, n) for n in ("set_verbosity", "set_verbosity_error", "disable_progress_bar",
                                          "enable_progress_bar")]
    for owner, name in targets:
        real = getattr(owner, name)

        def record(*args: Any, _real: Any = real, _name: str = f"{owner.__name__}.{name}", **kw: Any) -> Any:
            seen.append(_name)
            return _real(*args, **kw)

        monkeypatch.setattr(owner, name, record)
    return seen


def _torch_state() -> tuple[Any, ...]:
    import logging
    import warnings

    import torch
    from transformers.utils import logging as hf_logging

    return (torch.get_num_threads(), torch.get_rng_state().tolist(), list(warnings.filters),
            [logging.getLogger(n).level for n in LOGGERS], hf_logging.get_verbosity(),
            hf_logging.is_progress_bar_enabled())


@pytest.mark.torch
@pytest.mark.parametrize("call", ["measure_train_step", "run_grid"])
def test_a_measurement_leaves_torch_logging_and_warnings_alone(call: str, torch_changes: list[str]) -> None:
    """A measuring call seeds torch, sets its threads and quiets the loggers and warnings in its worker
    process: the caller's settings stay as they were, even while the call runs."""
    import torch

    from planner.validate.measure import measure_train_step, run_grid

    torch.rand(1)  # the generator's state is not the one seed 0 gives
    threads = torch.get_num_threads() + 1  # a run on other than this process's thread count
    before = _torch_state()
    torch_changes.clear()  # what reading the state above did (Transformers sets up its logger once)
    if call == "measure_train_step":
        res = measure_train_step(TINY_LLAMA, mode="fp32", micro_batch=1, seq_len=8, attention="sdpa",
                                 seed=0, threads=threads)
        assert res["peak_bytes"] > 0
    else:
        runs = [{"id": "train", "model": "tiny", "kind": "train", "config": TINY_LLAMA,
                 "settings": {"mode": "pure-bf16", "micro_batch": 1, "seq_len": 8, "attention": "eager",
                              "lora_rank": 4, "threads": threads}},
                {"id": "inference", "model": "tiny", "kind": "inference", "config": TINY_LLAMA,
                 "settings": {"dtype": "bf16", "batch": 1, "prompt_len": 8, "new_tokens": 2, "attention": "sdpa",
                              "threads": threads}}]
        doc = run_grid(runs)
        assert [r["id"] for r in doc["runs"]] == ["train", "inference"]
        assert doc["versions"]["torch"] == torch.__version__
    assert torch_changes == []
    assert _torch_state() == before


@pytest.mark.torch
def test_the_torch_recorder_sees_a_run_in_this_process(torch_changes: list[str]) -> None:
    """The check above can fail: what a run does first in the worker (planner.validate.runs: seed and
    threads; planner.validate.worker: loggers and warnings), done here, is recorded and changes the
    state; the test puts it back."""
    import logging
    import warnings

    import torch
    from transformers.utils import logging as hf_logging

    from planner.validate import builders, worker

    torch.rand(1)
    rng, threads, verbosity = torch.get_rng_state(), torch.get_num_threads(), hf_logging.get_verbosity()
    levels = {n: logging.getLogger(n).level for n in LOGGERS}
    before = _torch_state()
    torch_changes.clear()
    with warnings.catch_warnings():
        try:
            builders._setup(0, threads + 1)
            worker._quiet()
            assert _torch_state() != before
        finally:
            torch.set_rng_state(rng)
            torch.set_num_threads(threads)
            hf_logging.set_verbosity(verbosity)
            for n, level in levels.items():
                logging.getLogger(n).setLevel(level)
    assert {"torch.manual_seed", "torch.set_num_threads", "warnings.filterwarnings", "Logger.setLevel"} <= set(
        torch_changes)
    assert _torch_state() == before
