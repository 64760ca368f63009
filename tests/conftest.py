"""Shared test settings.

The CLI wraps its text to the terminal's width (COLUMNS, else 100; planner.core.textfit). Tests
that check what a line says run at a width no line reaches, so that a sentence is one line;
tests of the layout itself (tests/test_terminal_width.py) set COLUMNS themselves.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _wide_terminal():
    # session scope: module-scoped fixtures that run the CLI come after it
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "10000")
        yield
