"""File names made from names users give (scenario names), safe to write under an output folder."""

from __future__ import annotations

import re

from planner.core.errors import OutputError


def safe_stem(name: str) -> str:
    """A file name stem from a scenario name: no path separators, no '..', no leading dots.

    Characters other than letters and digits (any script), '.', '_' and '-' become '-'.

    Raises:
        OutputError: nothing usable is left (e.g. '..', '/', '').
    """
    text = str(name).replace("\\", "/")
    parts = [p for p in text.split("/") if p not in ("", ".", "..")]
    stem = "-".join(parts)
    stem = re.sub(r"[^\w.-]+", "-", stem)
    stem = re.sub(r"\.{2,}", ".", stem).strip(".-")
    if not stem:
        raise OutputError(f"scenario name {name!r} gives no usable file name. Give the scenario a name such as "
                          "'ft-7b-workstation'.")
    return stem[:120]
