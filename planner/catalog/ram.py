"""Memory modules (``ram.yaml`` ``dimms:``): the record and its keys.

A module's ``size`` is binary (a '64 GB' DIMM holds 64 GiB; a decimal unit is refused). Platforms
name a DIMM kind (:data:`DIMM_KINDS`) that some module here has. Importing this module does no work
and it keeps no state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.core.units import TiB
from planner.catalog.schema import (MIN_MEMORY_BYTES, PRICED, Field, Kind, check_priced, price_extra, read_choice,
                                    read_int, read_size)

DIMM_KINDS = ("ddr4-udimm", "ddr4-rdimm", "ddr5-udimm", "ddr5-rdimm")

MAX_DIMM_BYTES = 2 * TiB


@dataclass(frozen=True, slots=True)
class Dimm:
    """One memory module (``ram.yaml``); ``size_bytes`` and ``price_usd`` are per module (``prices``,
    ``price``: as :class:`planner.catalog.gpus.Gpu`)."""

    id: str
    kind: str
    size_bytes: int
    speed_mts: int
    price_usd: float
    price_kind: str
    source: str
    as_of: str
    notes: str | None = None
    verification: str | None = None
    prices: tuple[Any, ...] = ()
    price: Any = None
    mpn: str | None = None
    seller: str | None = None
    lead_time_days: int | None = None
    warranty_months: int | None = None
    quote_valid_until: str | None = None


#: The hint for a ``size`` written in decimal units (:func:`~planner.catalog.schema.read_size`'s ``binary``).
_DIMM_BINARY = "A module sold as '{number} {unit}' holds {number} {binary_unit} (DRAM chips come in powers of two)"


#: ``ram.yaml`` keys besides the common ones.
DIMM_FIELDS: dict[str, Field] = {
    "kind": Field(read_choice(DIMM_KINDS)),
    "size": Field(read_size(MAX_DIMM_BYTES, "memory module", lo=MIN_MEMORY_BYTES, binary=_DIMM_BINARY),
                  attr="size_bytes"),
    "speed_mts": Field(read_int(800, 20_000)),
    **PRICED,
}

DIMMS = Kind("dimms", Dimm, DIMM_FIELDS, check=check_priced, extra=price_extra())
