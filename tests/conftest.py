"""Shared test settings.

The CLI wraps its text to the terminal's width (COLUMNS, else 100; planner.core.textfit). Tests
that check what a line says run at a width no line reaches, so that a sentence is one line;
tests of the layout itself (tests/test_terminal_width.py) set COLUMNS themselves.

Many tests run ``python -m planner`` in a child process. Where PYTHONDONTWRITEBYTECODE is set (as on
the machines CI runs on), each child would compile the whole package from source again (about
0.8 s of a 2-3 s run); :func:`pytest_configure` compiles it once, so the children read the bytecode.

A catalog load parses and checks about 250 KB of YAML (0.2 s), and the tests load it about 1,900 times: the
session's in-process loads go through :func:`planner.catalog.memo.remembered` with one memo for the session
(:func:`_catalog_memo`), which gives the Catalog already checked from the same files, bytes and date, as long as
it is unchanged. The package itself keeps no cache (issue 33); child processes load the catalog as a user's run does.

Tests marked ``longest`` (minutes each: the validation re-measurement, the solver against brute force)
are collected first: pytest-xdist hands out modules in collection order, so a worker starts each at
once instead of running it alone at the end while the other cores wait.
"""

from __future__ import annotations

import compileall
from pathlib import Path

import pytest


def pytest_configure(config):
    # planner/__pycache__ (ignored by git), written once before the first test; a read-only tree
    # is left as it is (the children then compile from source, as before)
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "planner", quiet=2)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker("longest") is None)  # stable: the rest keep their order


@pytest.fixture(autouse=True, scope="session")
def _wide_terminal():
    # session scope: module-scoped fixtures that run the CLI come after it
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "10000")
        yield


@pytest.fixture(autouse=True, scope="session")
def _catalog_memo():
    # one memo for the session's in-process catalog loads (module docstring); planner.catalog.memo checks each hit
    from planner.catalog import loader
    from planner.catalog.memo import remembered

    kept: dict = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loader, "_checked_catalog", lambda files: remembered(files, loader._read_all, kept))
        yield
