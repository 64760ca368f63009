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
