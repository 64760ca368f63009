"""The one-line errors and value renderings the config.json checks share (planner.model.config_keys,
planner.model.quant_checks): a ModelConfigError at a key with its line, a value as the file writes it, and the
hint for a boolean written otherwise. A module of its own so that both checkers import it and not each other.

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from planner.core.errors import ModelConfigError


def _error(cfg: Mapping[str, Any], where: str | None, problem: str, key: str | None = None,
           hint: str | None = None) -> ModelConfigError:
    """A ModelConfigError at ``key``, with the key's line when ``cfg`` knows it (a config.json file)."""
    lines = getattr(cfg, "lines", None) or {}
    return ModelConfigError(problem, file=where, line=lines.get(key) if key else None, entry=key, hint=hint)


def _shown(value: Any, limit: int = 60) -> str:
    """``value`` as the config file writes it (JSON syntax, which YAML also reads: ``true``, ``null``,
    ``[1, 2]``), not as Python prints it (``True``, ``None``), cut to ``limit`` characters (h18b minor a)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_json(where: str | None) -> bool:
    """Whether the config was read from a JSON file (a config.json: ``where`` names it), so that a hint gives
    JSON syntax; a catalog entry (models.yaml ``config:``, ``where`` None or its entry) gets YAML syntax."""
    return isinstance(where, str) and where.split(" (")[0].endswith(".json")


def _bool_hint(key: str, value: Any, json: bool = True) -> str:
    """The hint for a config boolean written otherwise: the boolean it may mean ("false" -> false), in JSON
    syntax for a config.json and YAML syntax for a models.yaml ``config:``."""
    word = str(value).strip().lower() if isinstance(value, (str, int, float)) else ""
    meant = {"true": "true", "1": "true", "yes": "true", "false": "false", "0": "false", "no": "false"}.get(word)
    kind, shown = ("a JSON boolean", f'"{key}": {meant}') if json else ("a YAML boolean", f"{key}: {meant}")
    return (f"Write {kind} (true or false, no quotes): {shown}." if meant else
            f"Write {kind}: true or false, no quotes.")
