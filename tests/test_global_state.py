"""No interpreter-wide state changed by a library call (issue 33).

A program that imports the planner keeps its own garbage-collector settings, locale, umask, environment,
import path, warning filters, logging set-up, recursion limit, exception hooks and decimal context, even
while a call runs (another of its threads would see a change; the command line alone installs signal
handlers), and no module keeps a cache at module level (a long-lived caller's memory would grow with
each call, and a test's result would depend on the tests before it). Each check can fail: the recorders
below see every call of the functions that change that state, however briefly, the module scan sees
any ``functools.lru_cache``/``functools.cache`` object bound in a module or a class of it, and the
source scan any function that fills a container bound at module level. The measuring calls
(planner.validate) are checked with torch: they seed it and set its threads, in a worker process.
"""

from __future__ import annotations

import csv
import decimal
import functools
import gc
import importlib
import locale
import logging
import os
import pkgutil
import signal
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner
import planner.api
from planner.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "qlora-7b-12gb.yaml"
#: The functions that change the collector's, the locale's, the file-mode mask's, the environment's, the
#: warning filters', the logging set-up's, the recursion limit's, the csv module's or the decimal
#: context's process-wide state (``os.environ[k] = v`` calls ``os.putenv``), or a signal's handler.
CHANGERS = {gc: ("disable", "enable", "set_threshold", "freeze", "unfreeze"), locale: ("setlocale",),
            os: ("umask", "putenv", "unsetenv", "chdir"), warnings: ("filterwarnings", "simplefilter", "resetwarnings"),
            logging: ("basicConfig", "disable", "captureWarnings"), logging.Logger: ("setLevel",),
            sys: ("setrecursionlimit", "setswitchinterval", "setprofile", "settrace"), csv: ("field_size_limit",),
            decimal: ("setcontext",), signal: ("signal",)}
#: What the command line may change: its entry installs the signal handlers (planner.core.interrupt).
CLI_CHANGES = {"signal.signal"}


class _RecordingPath(list):
    """``sys.path``, recording each change (the import system reads the list object itself)."""

    def __init__(self, items: list[str], seen: list[str]) -> None:
        super().__init__(items)
        self.seen = seen

    def _record(name: str) -> Any:  # noqa: N805 - a method factory run in the class body
        def method(self: _RecordingPath, *args: Any, **kw: Any) -> Any:
            self.seen.append(f"sys.path.{name}")
            return getattr(list, name)(self, *args, **kw)

        return method

    for _name in ("append", "insert", "extend", "remove", "pop", "clear", "__setitem__", "__delitem__", "__iadd__"):
        locals()[_name] = _record(_name)
    del _name


@pytest.fixture
def changes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each call of a state-changing gc or locale function (the call still happens)."""
    seen: list[str] = []
    for module, names in CHANGERS.items():
        for name in names:
            real = getattr(module, name)

            def record(*args: Any, _real: Any = real, _name: str = f"{module.__name__}.{name}", **kw: Any) -> Any:
                # setlocale(category) with no locale, field_size_limit() with no limit only read
                reads = ((_name == "locale.setlocale" and (args[1:] or kw.get("locale")) in ((), (None,), None))
                         or (_name == "csv.field_size_limit" and not args and not kw))
                if not reads:
                    seen.append(_name)
                return _real(*args, **kw)

            monkeypatch.setattr(module, name, record)
    monkeypatch.setattr(sys, "path", _RecordingPath(sys.path, seen))
    return seen


def _state() -> tuple[Any, ...]:
    return (gc.isenabled(), gc.get_threshold(), locale.setlocale(locale.LC_ALL), dict(os.environ), list(sys.path),
            list(warnings.filters), logging.getLogger().level, list(logging.getLogger().handlers),
            sys.getrecursionlimit(), sys.excepthook, threading.excepthook, str(decimal.getcontext()),
            csv.field_size_limit(), [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)])


def _call(call: str, out: Path) -> None:
    if call == "load_catalog":
        planner.api.load_catalog()
    elif call == "estimate":
        planner.api.estimate(model="llama-2-7b", task="train", method="qlora", micro_batch=2, seq_len=1024)
    elif call == "fit":
        planner.api.fit(model="llama-2-7b", gpu="rtx-4090", task="train", method="qlora", micro_batch="max")
    elif call == "compare":
        planner.api.compare(ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml", out=out / "compare")
    elif call == "plan":
        planner.api.plan(SCENARIO, out=out / "plan", format="csv,json,xlsx,md")
    else:  # the command line, run in this process as CliRunner does
        r = CliRunner().invoke(main, ["plan", str(SCENARIO), "--out", str(out / "cli"), "--format", "csv"])
        assert r.exit_code == 0, r.stderr


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("call", ["load_catalog", "estimate", "fit", "compare", "plan", "cli plan"])
def test_a_call_leaves_the_interpreter_alone(call: str, changes: list[str], tmp_path: Path) -> None:
    _call(call, tmp_path / "first")  # the modules a call imports the first time (numpy adds warning filters)
    changes.clear()
    before = _state()
    _call(call, tmp_path)
    assert [c for c in changes if call != "cli plan" or c not in CLI_CHANGES] == []
    assert _state() == before


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_validation_report_leaves_the_import_path_alone(changes: list[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's sections read test files as modules (in ``sys.modules``, their folder on ``sys.path``
    while they run): in a worker process, so neither changes here, even for a moment; no file is loaded
    as a module here (``spec_from_file_location`` is recorded too). One section shows it; full_report
    reads all four through the same worker call (test_validation checks its text)."""
    import importlib.util

    from planner.validate.validation import engine_releases_section

    real = importlib.util.spec_from_file_location
    monkeypatch.setattr(importlib.util, "spec_from_file_location",
                        lambda *a, **k: changes.append("spec_from_file_location") or real(*a, **k))
    changes.clear()  # pytest's own PYTEST_CURRENT_TEST for this test's call
    modules, before = set(sys.modules), _state()
    section = engine_releases_section(ROOT / "tests" / "test_engine_releases.py")
    assert section.startswith("## Engine releases")
    assert changes == []
    assert _state() == before
    assert {m for m in set(sys.modules) - modules if "test" in m or m.startswith("_")} == set()


def test_the_recorder_sees_a_brief_change(changes: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks above can fail: a pause of the collector, an environment variable, a folder on the
    import path, a warning filter and a logger's level, each undone at once, are recorded."""
    changes.clear()  # pytest's own PYTEST_CURRENT_TEST for this test's call
    was = gc.isenabled()
    gc.disable()
    if was:
        gc.enable()
    monkeypatch.setenv("PLANNER_TEST_GLOBAL_STATE", "1")  # os.environ[...] = ... calls os.putenv
    sys.path.insert(0, "/nonexistent")
    sys.path.remove("/nonexistent")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
    logger = logging.getLogger("planner-test-global-state")
    logger.setLevel(logger.level)
    assert changes == ["gc.disable"] + ["gc.enable"] * was + [
        "os.putenv", "sys.path.insert", "sys.path.remove", "warnings.simplefilter", "Logger.setLevel"]


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
def test_a_measurement_leaves_torch_logging_and_warnings_alone(torch_changes: list[str]) -> None:
    """A grid of measuring runs (a training step and a generation, which seed torch, set its threads and
    quiet the loggers and warnings in their worker process) leaves the caller's settings as they were,
    even while it runs. (measure_train_step and measure_inference take the same path: run_grid calls them.)"""
    import torch

    from planner.validate.measure import run_grid

    torch.rand(1)  # the generator's state is not the one seed 0 gives
    threads = torch.get_num_threads() + 1  # a run on other than this process's thread count
    before = _torch_state()
    torch_changes.clear()  # what reading the state above did (Transformers sets up its logger once)
    runs = [{"id": "train", "model": "tiny", "kind": "train", "config": TINY_LLAMA,
             "settings": {"mode": "pure-bf16", "micro_batch": 1, "seq_len": 8, "attention": "eager",
                          "lora_rank": 4, "seed": 0, "threads": threads}},
            {"id": "inference", "model": "tiny", "kind": "inference", "config": TINY_LLAMA,
             "settings": {"dtype": "bf16", "batch": 1, "prompt_len": 8, "new_tokens": 2, "attention": "sdpa",
                          "seed": 0, "threads": threads}}]
    doc = run_grid(runs)
    assert [r["id"] for r in doc["runs"]] == ["train", "inference"]
    assert all(r["peak_bytes"] > 0 for r in doc["runs"])
    assert doc["versions"]["torch"] == torch.__version__
    assert torch_changes == []
    assert _torch_state() == before


@pytest.mark.torch
def test_the_torch_recorder_sees_a_run_in_this_process(torch_changes: list[str]) -> None:
    """The check above can fail: what a run does first in the worker (planner.validate.runs: seed and
    threads, loggers and warnings: planner.validate.builders), done here, is recorded and changes the
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
            builders._quiet_transformers()
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


#: Methods that change a list, dict or set in place.
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "clear", "remove",
            "discard", "__setitem__"}


def _module_level_stores(source: str) -> list[str]:
    """Where a function of ``source`` changes a container bound at module level (a memo dict, a
    registry filled at run time): an item stored or deleted, a mutating method called, or a
    ``global`` statement; names the function binds itself are its own."""
    import ast

    tree = ast.parse(source)
    module_names = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Name)}
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        own = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
        own |= {t.id for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For))
                for t in ([n.target] if not isinstance(n, ast.Assign) else n.targets) if isinstance(t, ast.Name)}
        for n in ast.walk(fn):
            if isinstance(n, ast.Global):
                found.append(f"{fn.name}: global {', '.join(n.names)}")
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target] if isinstance(
                n, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in module_names - own:
                    found.append(f"{fn.name}: {t.value.id}[...]")
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS
                    and isinstance(n.func.value, ast.Name) and n.func.value.id in module_names - own):
                found.append(f"{fn.name}: {n.func.value.id}.{n.func.attr}()")
    return found


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_no_function_fills_a_module_level_container() -> None:
    """No memo dict or run-time registry at module level: a cache is passed to the function that uses it."""
    found = []
    for path in sorted((ROOT / "planner").rglob("*.py")):
        found += [f"{path.relative_to(ROOT)}: {f}" for f in _module_level_stores(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_container_scan_sees_a_memo() -> None:
    """The scan above can fail: a memo dict filled by a function, and a ``global``, are found."""
    source = ("_MEMO = {}\nCOUNT = 0\n\ndef size(key):\n    global COUNT\n    if key not in _MEMO:\n"
              "        _MEMO[key] = len(key)\n    return _MEMO.get(key)\n\ndef note(x):\n    _MEMO.setdefault(x, 0)\n"
              "\ndef local(x):\n    _MEMO = {}\n    _MEMO[x] = 1\n")
    assert _module_level_stores(source) == ["size: global COUNT", "size: _MEMO[...]", "note: _MEMO.setdefault()"]
