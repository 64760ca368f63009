"""Network adapters and switches (``network.yaml`` ``nics:`` and ``switches:``): records and keys.

Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.core.units import GB
from planner.catalog.pcie import PCIE_LANE_COUNTS
from planner.catalog.schema import (PRICED, Field, Kind, check_priced, price_extra, read_choice, read_int,
                                    read_int_choice, read_positive_int, read_price, read_rate)

NETWORK_KINDS = ("infiniband", "roce")

#: A NIC entry without ``pcie_lanes`` / ``tdp_w`` is taken as a PCIe x16 card drawing 25 W (a
#: single-port 200-400 Gb/s ConnectX-6/7 class adapter; an assumption, catalog/README.md).
NIC_DEFAULT_LANES = 16
NIC_DEFAULT_TDP_W = 25

#: Upper bound beyond which a port rate is taken for a typo (a wrong unit, an extra digit).
MAX_LINK_BYTES_PER_S = 1_250 * GB  # bytes/s (10 Tb/s), NIC and switch ports
#: Lower bound of a NIC or switch port: 1 Gb/s, Gigabit Ethernet (IEEE 802.3ab-1999, 1000BASE-T), the slowest
#: port a cluster network lists (the catalog's slowest is 200 Gb/s; InfiniBand's slowest, SDR, signals
#: 2.5 Gb/s per lane). A lower rate is a wrong unit ('400 Mb/s' for '400 Gb/s').
MIN_LINK_BYTES_PER_S = 1e9 / 8  # bytes/s (1 Gb/s)


@dataclass(frozen=True, slots=True)
class Nic:
    """A network adapter (``network.yaml`` ``nics:``).

    Attributes:
        rate_bytes_per_s: per port, one direction, bytes/s (400 Gb/s = 50e9).
        cable_price_usd: one node-to-switch cable (or optics) per NIC, USD.
        pcie_lanes: the card's host link width (a slot and these lanes where no NIC slot is free).
        tdp_w: the card's power under load, watts (with passive copper cables).
    """

    id: str
    kind: str
    rate_bytes_per_s: float
    price_usd: float
    price_kind: str
    cable_price_usd: float
    source: str
    as_of: str
    pcie_lanes: int = NIC_DEFAULT_LANES
    tdp_w: int = NIC_DEFAULT_TDP_W
    notes: str | None = None
    verification: str | None = None
    prices: tuple[Any, ...] = ()
    price: Any = None
    mpn: str | None = None
    seller: str | None = None
    lead_time_days: int | None = None
    warranty_months: int | None = None
    quote_valid_until: str | None = None


@dataclass(frozen=True, slots=True)
class Switch:
    """A network switch (``network.yaml`` ``switches:``); ``rate_bytes_per_s`` is per port."""

    id: str
    kind: str
    rate_bytes_per_s: float
    ports: int
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


#: ``network.yaml`` ``nics:`` keys besides the common ones.
NIC_FIELDS: dict[str, Field] = {
    "kind": Field(read_choice(NETWORK_KINDS)),
    "rate": Field(read_rate(MAX_LINK_BYTES_PER_S, "network port rate", lo=MIN_LINK_BYTES_PER_S, bits=True),
                  attr="rate_bytes_per_s"),
    **PRICED,
    "cable_price_usd": Field(read_price),
    "pcie_lanes": Field(read_int_choice(PCIE_LANE_COUNTS), required=False),
    "tdp_w": Field(read_positive_int(1000, "W", "NIC power"), required=False),
}

#: ``network.yaml`` ``switches:`` keys besides the common ones.
SWITCH_FIELDS: dict[str, Field] = {
    "kind": Field(read_choice(NETWORK_KINDS)),
    "rate": Field(read_rate(MAX_LINK_BYTES_PER_S, "network port rate", lo=MIN_LINK_BYTES_PER_S, bits=True),
                  attr="rate_bytes_per_s"),
    "ports": Field(read_int(1, 4096)),
    **PRICED,
}

NICS = Kind("nics", Nic, NIC_FIELDS, check=check_priced, extra=price_extra())
SWITCHES = Kind("switches", Switch, SWITCH_FIELDS, check=check_priced, extra=price_extra())
