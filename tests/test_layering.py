"""The package's stages import one way: each stage only its own modules and the stages before it.

Read from the source with ``ast`` (no module is imported), counting imports inside functions too:
a lazy import is still a dependency. The order is the data flow of docs/commands.md's Layout section.
``model`` comes before ``catalog`` because the catalog's model entries are Hugging Face configs that
``planner.model.architecture`` parses (it checks each entry's ``published_parameters``); the model
stage itself reads no catalog.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "planner"

#: The stages in import order; a module may import its own stage and any stage listed before it.
STAGES = ["core", "model", "catalog", "workload", "memory", "speed", "solve", "cost", "report", "validate", "api", "cli"]
#: Top-level modules of the package that are not stages: (module, what it may import).
TOP = {"__init__": {"api"}, "__main__": {"cli"}}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every planner module this file imports, at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: set[str] = set()
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "planner")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")
                base = ".".join(up[: len(up) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "planner":
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if _exists(candidate) else base)
    return out


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def _stage(module: str) -> str:
    """'planner.solve.solver' -> 'solve'; 'planner.api' -> 'api'."""
    return module.split(".")[1]


def _files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "catalog_data" not in p.parts)


def test_every_module_is_in_a_stage():
    stray = [str(p.relative_to(PACKAGE)) for p in _files()
             if p.parent == PACKAGE and p.stem not in TOP and p.stem not in STAGES]
    stray += [str(p.relative_to(PACKAGE)) for p in _files()
              if p.parent != PACKAGE and p.relative_to(PACKAGE).parts[0] not in STAGES]
    assert stray == []


def test_every_stage_package_says_what_it_owns():
    missing = [s for s in STAGES if (PACKAGE / s / "__init__.py").is_file()
               and not (ast.get_docstring(ast.parse((PACKAGE / s / "__init__.py").read_text())) or "").strip()]
    assert missing == []


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_one_way(path: Path):
    me = _module_name(path)
    bad = []
    for target in sorted(_imports(path)):
        top = "__init__" if me == "planner" else me.split(".")[1] if me.count(".") == 1 else None
        if top in TOP:
            allowed = TOP[top]
            if _stage(target) not in allowed and target != "planner":
                bad.append(target)
            continue
        if target == "planner":  # the package root holds __version__ only
            continue
        mine, theirs = STAGES.index(_stage(me)), STAGES.index(_stage(target))
        if theirs > mine:
            bad.append(f"{target} (stage {_stage(target)!r} comes after {_stage(me)!r})")
    assert bad == []


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_no_import_cycles():
    """No module reaches itself through imports (lazy ones included)."""
    graph = {_module_name(p): {t for t in _imports(p) if t != "planner"} for p in _files()}
    # A package's __init__ importing its own submodules is not a cycle back to the package.
    for name, targets in graph.items():
        graph[name] = {t for t in targets if not name.startswith(t + ".") and t != name}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt in graph and state.get(nxt) is None:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [])
    assert cycles == []
