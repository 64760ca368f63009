"""PCI Express generations (``pcie.yaml`` ``generations:``) and the lane counts of a PCIe link.

Every ``pcie_gen`` of a GPU or platform must be a generation listed here (:func:`check_gen`); a
generation appears once. Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.core.units import GB
from planner.catalog.schema import Field, Kind, Merged, Parsed, read_int, read_rate

PCIE_LANE_COUNTS = (1, 2, 4, 8, 16)
MAX_PCIE_LANE_BYTES_PER_S = 100 * GB  # bytes/s per lane
#: The slowest PCIe lane: PCIe 1.0 (PCI-SIG PCI Express Base Specification 1.0a, 2003), 2.5 GT/s with 8b/10b
#: encoding: 2.5e9 x 8/10 / 8 = 0.25 GB/s per lane, one direction (as catalog/pcie.yaml derives the later
#: generations). A lower ``per_lane`` is a wrong unit ('2 MB/s' for '2 GB/s'), which would multiply every
#: offload and host-link time by up to a thousand.
MIN_PCIE_LANE_BYTES_PER_S = 0.25 * GB  # bytes/s per lane


@dataclass(frozen=True, slots=True)
class PcieGen:
    """One PCI Express generation (``pcie.yaml``).

    Attributes:
        per_lane_bytes_per_s: one direction, per lane, after line encoding, bytes/s.
    """

    id: str
    gen: int
    per_lane_bytes_per_s: float
    source: str
    as_of: str
    notes: str | None = None
    verification: str | None = None


#: ``pcie.yaml`` ``generations:`` keys besides the common ones.
PCIE_FIELDS: dict[str, Field] = {
    "gen": Field(read_int(1, 10)),
    "per_lane": Field(read_rate(MAX_PCIE_LANE_BYTES_PER_S, "PCIe lane rate", lo=MIN_PCIE_LANE_BYTES_PER_S),
                      attr="per_lane_bytes_per_s"),
}


def generation_numbers(m: Merged) -> list[int]:
    """The PCIe generations the merged catalog lists (``gen``), in increasing order."""
    return sorted(p.values["gen"] for p in m.entries["generations"].values())


def check_gen(p: Parsed, gens: list[int]) -> None:
    """The entry's ``pcie_gen`` is one of ``gens`` (:func:`generation_numbers`); raises CatalogError."""
    g = p.values["pcie_gen"]
    if g not in gens:
        hint = ("Valid: " + ", ".join(map(str, gens)) + ".") if gens else "pcie.yaml lists no generations."
        raise p.err(f"PCIe generation {g} is not in pcie.yaml", "pcie_gen", hint)


def _check_generations(m: Merged) -> None:
    """Each generation once."""
    seen_gens: dict[int, Parsed] = {}
    for p in m.entries["generations"].values():
        g = p.values["gen"]
        if g in seen_gens:
            raise p.err(f"PCIe generation {g} is also entry {seen_gens[g].id!r}", "gen")
        seen_gens[g] = p


GENERATIONS = Kind("generations", PcieGen, PCIE_FIELDS, check_merged=_check_generations)
