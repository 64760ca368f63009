"""Rooms a reader can hold (issue 33): no module over 900 lines, no function over 150.

Read with ``ast`` (nothing imported); every module of the package is checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "planner"
MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 150
#: Modules left out (none).
EXCEPT: tuple[str, ...] = ()


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "catalog_data" not in p.parts
                  and not str(p.relative_to(PACKAGE)).startswith(EXCEPT))


def _long_functions(path: Path, limit: int, root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [f"{path.relative_to(root)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > limit]


def test_no_module_over_900_lines():
    long = [f"{p.relative_to(PACKAGE)} ({n} lines)" for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert long == []


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_no_function_over_150_lines():
    assert [x for p in _modules() for x in _long_functions(p, MAX_FUNCTION_LINES)] == []


def test_the_function_check_sees_a_long_one(tmp_path):
    """The check above can fail: a function of 151 lines (its def and 150 statements) is found."""
    body = "\n".join(f"    x{i} = {i}" for i in range(150))
    (tmp_path / "m.py").write_text(f"def big():\n{body}\n\n\ndef small():\n    return 1\n", encoding="utf-8")
    assert _long_functions(tmp_path / "m.py", MAX_FUNCTION_LINES, root=tmp_path) == ["m.py:1 big (151 lines)"]
