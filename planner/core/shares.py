"""Keys and options whose value is a share (a fraction of at most 1), with the range each takes, for hints.

A share written with '_' or a leading zero (``lora_dropout: 0_1``, ``--headroom 01``) is refused (YAML 1.1 reads
``0_1`` as the octal 1, planner.core.yamlrules.refuse_other_bases; the command line refuses what files refuse,
planner.cli.options.refuse_foreign_digits). The hint for another number ('write it without the leading zero: 1')
would lead to a dropout of 1.0, or to a headroom the next check refuses: for a share, :func:`share_hint` gives
the reading most likely meant (``0_1`` and ``01`` as 0.1), and only a value inside the key's range.

:data:`SHARES` holds each share's range as the reader checks it (docs/scenarios.md gives the same ranges):
planner.workload.training (lora_dropout), planner.workload.inference (gpu_memory_utilization, at least
planner.workload.options.MIN_GPU_MEMORY_UTILIZATION = 1e-9), planner.solve.scenario (vram_headroom),
planner.api.inputs.MAX_HEADROOM (--headroom), planner.cost.tco (utilization, gpu_power_fraction,
residual_fraction, cloud_discount; mfu and mbu at least planner.cost.tco.MIN_UTILIZATION = 0.001),
planner.validate.calibrate (a calibration file's allocator_fraction, 0 to 1). A test
(tests/test_safety18c.py) checks the readers refuse a value just outside each range.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

#: key -> (lowest, lowest excluded, highest, highest excluded), as the reader of each key checks it.
SHARES: dict[str, tuple[float, bool, float, bool]] = {
    "lora_dropout": (0, False, 1, False),
    "gpu_memory_utilization": (1e-9, False, 1, True),
    "vram_headroom": (0, False, 0.95, False),
    "headroom": (0, False, 0.95, False),  # the --headroom option, as vram_headroom
    "utilization": (0, True, 1, False),
    "gpu_power_fraction": (0, True, 1, False),
    "residual_fraction": (0, False, 0.99, False),
    "cloud_discount": (0, False, 0.99, False),
    "mfu": (0.001, False, 1, False),
    "mbu": (0.001, False, 1, False),
    # a calibration file's allocator overhead: planner.validate.calibrate reads 0 to _MAX_ALLOCATOR_FRACTION = 1
    "allocator_fraction": (0, False, 1, False),
}


def share_key(name: str) -> str | None:
    """The :data:`SHARES` key of a file key or an option ('lora_dropout', '--lora-dropout'); None for another."""
    key = name.lstrip("-").replace("-", "_")
    return key if key in SHARES else None


def in_range(key: str, value: Decimal) -> bool:
    """Whether ``value`` lies in the range of the share ``key`` (:data:`SHARES`)."""
    lo, lo_open, hi, hi_open = SHARES[key]
    low, high = Decimal(str(lo)), Decimal(str(hi))
    return (value > low if lo_open else value >= low) and (value < high if hi_open else value <= high)


def share_reading(key: str, text: str) -> str | None:
    """The number the share ``key`` most likely means by ``text``, a number written with '_' or a leading zero,
    when it lies in the key's range: the digits after a leading zero as a fraction ('01', '0_1', '0_05' ->
    '0.1', '0.05': the point left out), else the number without '_' ('0.1_5' -> '0.15'); None when neither
    lies in the range ('1_0', '05' for mfu is fine but '099' for vram_headroom is not)."""
    body = text.strip().replace("_", "")
    candidates = []
    if re.fullmatch(r"0[0-9]+", body):
        candidates.append(f"0.{body[1:]}")
    if re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", body):
        candidates.append(body)
    for reading in candidates:
        try:
            value = Decimal(reading)
        except InvalidOperation:
            continue
        if value.is_finite() and in_range(key, value):
            return f"{value.normalize():f}" if "." in reading else reading.lstrip("0") or "0"
    return None


def share_hint(key: str, text: str, spell: Callable[[str], str]) -> str:
    """The hint for ``text``, a number written with '_' or a leading zero for the share ``key``: the reading most
    likely meant (:func:`share_reading`), written as ``spell`` writes a value ('--headroom 0.1', 'lora_dropout:
    0.1'); else a fraction in the key's range."""
    lo, lo_open, hi, hi_open = SHARES[key]
    span = (f"{'more than' if lo_open else 'from'} {lo:g} {'to below' if hi_open else 'to'} {hi:g}").replace("e-0", "e-")
    reading = share_reading(key, text)
    if reading is not None:
        return f"{key} is a fraction ({span}), and {text.strip()} most likely means {reading}: write {spell(reading)}."
    return f"{key} is a fraction ({span}): write it with a decimal point, e.g. {spell('0.1')}."
