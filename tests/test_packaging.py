"""A regular (non-editable) install holds every module: pyproject.toml lists each package under planner/
(setuptools installs only the packages listed, [tool.setuptools] packages; a folder left out is missing
from the wheel, and every command that imports it fails). .ci/run plans a shipped scenario from such an
install."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_under_planner_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "planner").rglob("__init__.py")}
    assert found - listed == set(), "packages a regular install would leave out"
    assert listed - found == {"planner.catalog_data"}  # catalog/, mapped by package-dir
