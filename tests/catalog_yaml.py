"""The shipped catalog's YAML files as plain data, parsed once per test process.

Tests that look at catalog/*.yaml directly (not through planner's loader, so that they do not depend on it) used
to parse the 65 KB models.yaml with PyYAML's pure-Python ``safe_load`` in every test: about a third of the default
suite's time went there. The files are read once here, with PyYAML's C loader where it has one (libyaml reads the
shipped files to the same values), and every call returns a deep copy, so a test may change what it is given.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

CATALOG = Path(__file__).resolve().parents[1] / "catalog"


@functools.lru_cache(maxsize=None)
def _parsed(name: str) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if yaml.__with_libyaml__ else yaml.SafeLoader
    return yaml.load((CATALOG / name).read_text(encoding="utf-8"), Loader=loader)


def catalog_doc(name: str) -> Any:
    """The whole document of ``catalog/<name>`` (e.g. 'models.yaml'), a fresh copy."""
    return copy.deepcopy(_parsed(name))


def catalog_models() -> dict[str, dict]:
    """catalog/models.yaml's entries by id, fresh copies."""
    return {m["id"]: m for m in catalog_doc("models.yaml")["models"]}


def catalog_model(model_id: str) -> dict:
    """The entry of ``model_id`` in catalog/models.yaml, a fresh copy (KeyError for an id it does not hold)."""
    entries = {m["id"]: m for m in _parsed("models.yaml")["models"]}
    return copy.deepcopy(entries[model_id])
