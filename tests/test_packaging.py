"""A regular (non-editable) install holds every module: pyproject.toml lists each package under planner/
(setuptools installs only the packages listed, [tool.setuptools] packages; a folder left out is missing
from the wheel, and every command that imports it fails). .ci/run plans a shipped scenario from such an
install."""

from __future__ import annotations

import pytest

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_every_package_under_planner_is_listed_in_pyproject() -> None:
    # [tool.setuptools] packages = [...] read by pattern: tomllib is Python 3.11+, and the project runs on 3.10
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^\[tool\.setuptools\]\n(?:.*\n)*?packages = \[(.*?)\]", text, re.M | re.S)
    assert block is not None, "no [tool.setuptools] packages list"
    listed = set(re.findall(r'"([a-z_.]+)"', block.group(1)))
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "planner").rglob("__init__.py")}
    assert found - listed == set(), "packages a regular install would leave out"
    assert listed - found == {"planner.catalog_data"}  # catalog/, mapped by package-dir
