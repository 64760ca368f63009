"""Host platforms (``platforms.yaml`` ``platforms:``): the record, its keys and checks, and how cards fit.

:func:`max_cards`, :func:`slots_at`, :func:`slot_link`, :func:`card_lanes` and :func:`cools` read a
platform's slots, lanes and cooling for a GPU. The checks refuse a platform that could never be built:
a supply no larger than ``platform_w`` (or than its fixed GPUs' power plus ``platform_w``),
fewer ``dimm_slots`` than ``memory_channels``, a ``max_memory`` below one of the smallest modules of
its ``memory_kind`` per channel, a ``memory_kind`` no DIMM has, a ``fixed_gpu`` that is not a GPU id
or whose form factor or cooling the platform does not take. Importing this module does no work and it
keeps no state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.core.errors import did_you_mean
from planner.core.names import clip_text
from planner.core.fields import Entry
from planner.core.units import format_size
from planner.catalog.gpus import COOLING_KINDS, FORM_FACTORS, Gpu
from planner.catalog.pcie import PCIE_LANE_COUNTS, check_gen, generation_numbers
from planner.catalog.ram import DIMM_KINDS
from planner.catalog.texts import free_text
from planner.catalog.prices import PRICE_KINDS
from planner.catalog.schema import (MAX_HOST_MEMORY_BYTES, MAX_SLOT_WIDTH, MIN_MEMORY_BYTES, Field, Kind, Merged,
                                    Parsed, check_priced, later, price_extra, priced_fields, read_choice,
                                    read_choice_list, read_date, read_int, read_int_choice, read_mpn,
                                    read_label, read_positive_int, read_price, read_size,
                                    read_text)


@dataclass(frozen=True, slots=True)
class SlotGroup:
    """``count`` cards, each at most ``width`` slots wide, fit in a platform at the same time, each on
    a link of ``lanes`` PCIe lanes (None: the card's full link, as wide as it is)."""

    width: int
    count: int
    lanes: int | None = None


#: The categories of a platform's parts (``parts:`` items), as the quote's lines name them.
PART_CATEGORIES = ("cpu", "motherboard", "chassis", "psu", "cooler", "storage")
#: Keys of one ``parts:`` item of a platform (docs/catalog.md).
PART_KEYS = ("category", "name", "quantity", "mpn", "usd", "kind", "as_of", "source", "notes")


@dataclass(frozen=True, slots=True)
class PlatformPart:
    """One part a platform is built from (a ``parts:`` item): what a purchasing office orders.

    Attributes:
        category: :data:`PART_CATEGORIES`.
        name: what it is ('AMD Ryzen 9 9950X', 'X870E ATX motherboard').
        quantity: units per machine (2 for a two-socket server's CPUs).
        mpn: the manufacturer part number, None where the catalog names no specific product.
        usd, kind, as_of, source: the price of one unit with its kind (planner.catalog.prices
            ``PRICE_KINDS``), date and source; all None where the part has no price of its own.
            A platform's lines are its parts' only when every part is priced and their sum is the
            price the plan pays for the platform (planner.solve.solver.line_items); else the
            platform is one priced line and its parts unpriced lines beside it.
    """

    category: str
    name: str
    quantity: int = 1
    mpn: str | None = None
    usd: float | None = None
    kind: str | None = None
    as_of: str | None = None
    source: str | None = None
    notes: str | None = None


@dataclass(frozen=True, slots=True)
class Platform:
    """A host: CPU, board, case, PSU and boot storage, without GPUs and RAM (``platforms.yaml``).

    Attributes:
        base_price_usd: the host without GPUs and without DIMMs, USD (the chosen one of ``prices``,
            ``price``: as :class:`planner.catalog.gpus.Gpu`).
        memory_kind: the DIMM kind it takes (a ``Dimm.kind``).
        max_memory_bytes: most host memory the platform supports, bytes.
        gpu_lanes: CPU PCIe lanes available to GPUs.
        gpu_slots: alternatives, widest first; read them with :func:`max_cards`.
        max_gpus: most GPUs the platform takes, whatever their width.
        psu_w: power supply capacity usable by the machine, watts.
        platform_w: power of everything but the GPUs under load, watts.
        form_factors: GPU form factors it takes (``pcie``, ``sxm``, ``oam``).
        fixed_gpu, fixed_gpu_count: for a baseboard that carries exactly its GPUs (HGX): the
            GPU id and how many; the planner adds ``fixed_gpu_count`` x the GPU's price.
        nic_slots: PCIe slots for network adapters besides the GPU slots, with lanes of their own
            (a GPU server's NIC slots behind its PCIe switches); NICs beyond them take a GPU slot
            and ``pcie_lanes`` of ``gpu_lanes`` each. 0: none (a tower's NICs share the GPU slots).
        gpu_cooling: the GPU cooling kinds (:data:`COOLING_KINDS`) the chassis keeps within their
            temperature limits: a desktop tower cools cards that bring their own fans, a GPU
            server's fan wall cools passive cards. None: not stated, not checked.
        parts: what it is built from (:class:`PlatformPart`), for the quote's lines; () where the
            catalog does not list them.
        mpn, seller, lead_time_days, warranty_months, quote_valid_until: the ordering keys of the
            whole machine (planner.catalog.schema.ORDER_FIELDS; a server sold as one SKU), None
            where not known.
    """

    id: str
    name: str
    cpu: str
    base_price_usd: float
    price_kind: str
    memory_kind: str
    memory_channels: int
    dimm_slots: int
    max_memory_bytes: int
    pcie_gen: int
    gpu_lanes: int
    gpu_slots: tuple[SlotGroup, ...]
    max_gpus: int
    psu_w: int
    platform_w: int
    form_factors: tuple[str, ...]
    source: str
    as_of: str
    fixed_gpu: str | None = None
    fixed_gpu_count: int | None = None
    nic_slots: int = 0
    gpu_cooling: tuple[str, ...] | None = None
    notes: str | None = None
    verification: str | None = None
    prices: tuple[Any, ...] = ()
    price: Any = None
    parts: tuple[PlatformPart, ...] = ()
    mpn: str | None = None
    seller: str | None = None
    lead_time_days: int | None = None
    warranty_months: int | None = None
    quote_valid_until: str | None = None

    @property
    def parts_usd(self) -> float | None:
        """The sum of the parts' prices x quantities, USD; None unless every part has a price."""
        if not self.parts or any(x.usd is None for x in self.parts):
            return None
        return float(sum(float(x.usd) * x.quantity for x in self.parts))  # type: ignore[arg-type]


def max_cards(platform: Platform, slot_width: int) -> int:
    """How many cards ``slot_width`` slots wide fit in ``platform`` at once.

    ``platform.gpu_slots`` lists alternatives: ``{width: w, count: n}`` says n cards of width
    at most w fit together. The answer is the largest ``count`` among entries whose ``width``
    is at least ``slot_width`` (0 when none is), capped by ``platform.max_gpus``. So
    ``[{width: 2, count: 4}, {width: 1, count: 7}]`` gives 4 for a double-width card, 7 for a
    single-width one and 0 for a triple-width one. Baseboards that carry their own GPUs
    (``fixed_gpu``) list no slots and take no PCIe cards: 0.

    Args:
        platform: the host platform.
        slot_width: slots one card occupies (``Gpu.slot_width``), >= 1.

    Raises:
        ValueError: ``slot_width`` is not a whole number >= 1 (a programming error).
    """
    if isinstance(slot_width, bool) or not isinstance(slot_width, int) or slot_width < 1:
        raise ValueError(f"slot_width must be a whole number >= 1, not {slot_width!r}")
    fits = [g.count for g in platform.gpu_slots if g.width >= slot_width]
    return min(max(fits), platform.max_gpus) if fits else 0


def slot_link(platform: Platform, slot_width: int, slots: int) -> int | None:
    """The link of each slot when ``slots`` cards at most ``slot_width`` wide fill the platform's
    slots: of the ``gpu_slots`` arrangements that hold them, the widest links; None when one of those
    arrangements wires its slots at full width (no ``lanes``) or none holds them."""
    links = [g.lanes for g in platform.gpu_slots if g.width >= max(slot_width, 1) and g.count >= slots]
    if not links or None in links:
        return None
    return max(x for x in links if x is not None)


def card_lanes(platform: Platform, gpu: Gpu, cards: int, slots: int | None = None) -> int:
    """PCIe lanes one of ``cards`` cards of model ``gpu`` takes from ``platform.gpu_lanes``: the card's
    ``pcie_lanes``, or less where the slot arrangement that holds ``slots`` cards (default ``cards``;
    more when NICs take GPU slots too) wires each slot narrower (a ``gpu_slots`` entry's ``lanes``:
    e.g. an x16 slot split x8/x8 for two cards). Of the arrangements that hold them, the one with the
    widest links is taken. Modules on a baseboard (no slots) and arrangements without ``lanes`` give
    the card's full link."""
    if gpu.form_factor != "pcie":
        return gpu.pcie_lanes
    link = slot_link(platform, gpu.slot_width or 1, cards if slots is None else slots)
    return gpu.pcie_lanes if link is None else min(gpu.pcie_lanes, link)


def slots_at(platform: Platform, slot_width: int) -> int:
    """How many cards at most ``slot_width`` slots wide the platform's slots hold at once, whatever
    they are (GPUs, or GPUs and NICs together): :func:`max_cards` without the ``max_gpus`` cap."""
    fits = [g.count for g in platform.gpu_slots if g.width >= max(slot_width, 1)]
    return max(fits) if fits else 0


def cools(platform: Platform, gpu: Gpu) -> bool:
    """Whether ``platform``'s chassis cools ``gpu``: its ``gpu_cooling`` lists the card's
    ``cooling`` (True when either is not stated: nothing to check).

    A passive card (no fan) depends on a server's front-to-back fan wall; in a desktop tower it
    overheats and throttles (NVIDIA sells its passive data-centre boards for qualified servers
    only, NVIDIA-Certified Systems). Open-air cards blow their heat into the case and are not
    built for a server's ducted airflow.
    """
    return gpu.cooling is None or platform.gpu_cooling is None or gpu.cooling in platform.gpu_cooling


#: Keys of one ``gpu_slots`` item of a platform (docs/catalog.md).
GPU_SLOT_KEYS = ("width", "count", "lanes")

_form_factors = read_choice_list(FORM_FACTORS, "form factor")
_cooling_kinds = read_choice_list(COOLING_KINDS, "cooling kind")


def _parts(e: Entry, k: str) -> tuple[PlatformPart, ...]:
    """A platform's ``parts:`` list (:data:`PART_KEYS`); a priced part gives usd, kind, as_of and source."""
    out = []
    for item in e.children(k):
        item.check_keys(PART_KEYS, required=("category", "name"))
        category = read_choice(PART_CATEGORIES)(item, "category")
        quantity = read_int(1, 64)(item, "quantity") if "quantity" in item.data else 1
        mpn = read_mpn(item, "mpn") if "mpn" in item.data else None
        priced = [x for x in ("usd", "kind", "as_of", "source") if x in item.data]
        if priced and len(priced) < 4:
            absent = [x for x in ("usd", "kind", "as_of", "source") if x not in priced]
            raise item.error(f"{priced[0]} needs {', '.join(absent)}", priced[0],
                             "A part's price gives usd, kind, as_of and source together, or none of them (the "
                             "platform's price then stands for the part).")
        out.append(PlatformPart(
            category=category, name=read_label(item, "name"), quantity=quantity, mpn=mpn,
            usd=read_price(item, "usd") if priced else None,
            kind=read_choice(PRICE_KINDS)(item, "kind") if priced else None,
            as_of=read_date(item, "as_of") if priced else None,
            source=read_text(item, "source") if priced else None,
            notes=free_text(item, "notes", item.str("notes", multiline=True)) if "notes" in item.data else None))
    return tuple(out)


def _gpu_slots(e: Entry, k: str) -> tuple[SlotGroup, ...]:
    groups: dict[int, SlotGroup] = {}
    for item in e.children(k):
        item.check_keys(GPU_SLOT_KEYS, required=("width", "count"))
        width = read_int(1, MAX_SLOT_WIDTH)(item, "width")
        count = read_int(1, 64)(item, "count")
        lanes = read_int_choice(PCIE_LANE_COUNTS)(item, "lanes") if "lanes" in item.data else None
        if width in groups:
            raise item.error(f"width {width} is listed twice", "width",
                             "Give one {width, count} per card width; the entries are alternatives.")
        groups[width] = SlotGroup(width=width, count=count, lanes=lanes)
    return tuple(groups[w] for w in sorted(groups, reverse=True))


#: The hint for a ``max_memory`` written in decimal units (:func:`~planner.catalog.schema.read_size`'s
#: ``binary``): a platform's limit is built from DIMMs, whose sizes are binary.
_PLATFORM_BINARY = "A vendor's '{number} {unit}' memory limit is {number} {binary_unit} (whole DIMMs of binary size)"


#: ``platforms.yaml`` keys besides the common ones.
PLATFORM_FIELDS: dict[str, Field] = {
    "name": Field(read_label),
    "cpu": Field(read_label),
    **priced_fields("base_price_usd"),
    "memory_kind": Field(read_choice(DIMM_KINDS)),
    "memory_channels": Field(read_int(1, 64)),
    "dimm_slots": Field(read_int(1, 256)),
    "max_memory": Field(read_size(MAX_HOST_MEMORY_BYTES, "host memory", lo=MIN_MEMORY_BYTES,
                                  binary=_PLATFORM_BINARY), attr="max_memory_bytes"),
    "pcie_gen": Field(read_int(1, 10)),
    "gpu_lanes": Field(read_int(1, 1024)),
    "gpu_slots": Field(_gpu_slots),
    "max_gpus": Field(read_int(1, 64)),
    "psu_w": Field(read_positive_int(100_000, "W", "power supply")),
    "platform_w": Field(read_positive_int(50_000, "W", "host power")),
    "form_factors": Field(_form_factors),
    "fixed_gpu": Field(read_label, required=False),
    "fixed_gpu_count": Field(read_int(1, 64), required=False),
    "nic_slots": Field(read_int(0, 64), required=False),
    "gpu_cooling": Field(_cooling_kinds, required=False),
    "parts": Field(_parts, required=False),
}


def _check_platform(p: Parsed) -> None:
    """Rules between the keys of one platform (after the overlay is merged)."""
    v = p.values
    check_priced(p, "base_price_usd")
    _check_parts_sum(p)
    if ("fixed_gpu" in v) != ("fixed_gpu_count" in v):
        given, absent = ("fixed_gpu", "fixed_gpu_count") if "fixed_gpu" in v else ("fixed_gpu_count", "fixed_gpu")
        raise p.err(f"{given} needs {absent}", given)
    if "fixed_gpu_count" in v and v["fixed_gpu_count"] > v["max_gpus"]:
        raise p.err(f"fixed_gpu_count {v['fixed_gpu_count']} is more than max_gpus {v['max_gpus']}",
                    "fixed_gpu_count")
    if "pcie" in v["form_factors"] and not v["gpu_slots"]:
        raise p.err("a platform that takes PCIe cards needs gpu_slots", "gpu_slots",
                    "For example [{width: 2, count: 4}]: up to 4 double-width cards.")
    if v["psu_w"] <= v["platform_w"]:
        key = later(p, "psu_w", "platform_w")
        relation = "less than" if v["psu_w"] < v["platform_w"] else "no more than"
        raise p.err(f"psu_w {v['psu_w']:,} W is {relation} platform_w {v['platform_w']:,} W: no power is left "
                    "for GPUs", key,
                    "psu_w is the supply the machine can use (for redundant supplies, the non-redundant share), "
                    "platform_w what everything but the GPUs draws under load (CPU, RAM, drives, fans); psu_w "
                    "must exceed it by the GPUs' power. Check for swapped values or a missing digit.")
    if v["dimm_slots"] < v["memory_channels"]:
        key = later(p, "dimm_slots", "memory_channels")
        raise p.err(f"dimm_slots {v['dimm_slots']} is fewer than memory_channels {v['memory_channels']}: "
                    "no RAM configuration puts a DIMM in every channel", key,
                    "dimm_slots counts every DIMM slot of the machine (4 on a 2-channel desktop board: 2 per "
                    "channel), memory_channels the memory channels of all its CPUs together.")


def _check_parts_sum(p: Parsed) -> None:
    """Parts that are every one priced sum to one of the platform's prices (to the cent): a quote split
    into lines must add up to what the plan pays for the machine."""
    parts = p.values.get("parts") or ()
    if not parts or any(x.usd is None for x in parts):
        return
    total = sum(float(x.usd) * x.quantity for x in parts)
    v = p.values
    prices = [float(x.usd) for x in v.get("prices") or ()] + ([float(v["base_price_usd"])]
                                                             if "base_price_usd" in v else [])
    if any(abs(total - x) < 0.005 for x in prices):
        return
    shown = ", ".join(f"${x:,.2f}" for x in prices) or "none"
    raise p.err(f"the parts' prices sum to ${total:,.2f}, which is none of the platform's prices ({shown})",
                "parts", f"Give the platform a price of ${total:,.2f} (prices: [{{usd: {total:g}, kind: quote, ...}}]) "
                "or correct a part's usd or quantity; leave the parts' prices out to keep the platform's.")


def _check_platform_refs(m: Merged) -> None:
    """A platform's ``pcie_gen``, ``memory_kind``, ``max_memory`` and fixed GPU against the other lists."""
    e = m.entries
    gens = generation_numbers(m)
    dimm_kinds = sorted({p.values["kind"] for p in e["dimms"].values()})
    for p in e["platforms"].values():
        check_gen(p, gens)
        kind = p.values["memory_kind"]
        if kind not in dimm_kinds:
            raise p.err(f"no DIMM of kind {kind!r} in ram.yaml", "memory_kind",
                        did_you_mean(kind, dimm_kinds) or "ram.yaml lists no DIMMs.")
        _check_max_memory(p, e["dimms"])
        if p.values.get("fixed_gpu") is not None:
            _check_fixed_gpu(p, m)


def _check_fixed_gpu(p: Parsed, m: Merged) -> None:
    """A baseboard's ``fixed_gpu`` is a GPU id whose form factor, power and cooling the platform takes."""
    gpus = m.entries["gpus"]
    fixed = p.values["fixed_gpu"]
    if fixed not in gpus:
        raise p.err(f"unknown GPU {clip_text(fixed)!r}", "fixed_gpu", m.gpu_ref_hint(fixed))
    ff = gpus[fixed].values["form_factor"]
    if ff not in p.values["form_factors"]:
        raise p.err(f"the fixed GPU {fixed!r} has form_factor {ff!r}, which form_factors "
                    f"{list(p.values['form_factors'])} does not list", "form_factors")
    g = gpus[fixed]
    _check_fixed_power(p, g, m)
    cooling = g.values.get("cooling")
    kinds = p.values.get("gpu_cooling")
    if cooling is not None and kinds is not None and cooling not in kinds:
        # blame the later of the two settings (an overlay's), naming the other
        g_at, p_at = g.origin.get("cooling", g.entry), p.origin.get("gpu_cooling", p.entry)
        if m.file_rank(g_at.file) > m.file_rank(p_at.file):
            raise g.err(f"{cooling!r} is not a kind platform {p.id!r} cools: it carries this GPU as "
                        f"fixed_gpu with gpu_cooling {list(kinds)} ({p_at.file}:"
                        f"{p_at.line_of('gpu_cooling') or p_at.line})", "cooling",
                        "Give the baseboard's kind, or overlay the platform's gpu_cooling too.")
        raise p.err(f"the fixed GPU {fixed!r} has cooling {cooling!r}, which gpu_cooling "
                    f"{list(kinds)} does not list", "gpu_cooling",
                    f"The GPU's cooling is set at {g_at.file}:{g_at.line_of('cooling') or g_at.line}; "
                    "give both the same kind.")


def _check_max_memory(p: Parsed, dimms: Mapping[str, Parsed]) -> None:
    """A platform's max_memory holds at least one module of its kind in every channel (the
    planner fills every channel with equal DIMMs): else no RAM configuration is ever built."""
    v = p.values
    modules = sorted((d for d in dimms.values() if d.values["kind"] == v["memory_kind"]),
                     key=lambda d: (d.values["size"], d.id))
    smallest = modules[0]
    need = v["memory_channels"] * smallest.values["size"]
    if v["max_memory"] < need:
        key = later(p, "max_memory", "memory_channels")
        raise p.err(f"max_memory {format_size(v['max_memory'])} is less than one {smallest.id} module "
                    f"({format_size(smallest.values['size'])}, the smallest {v['memory_kind']} in ram.yaml) in "
                    f"each of its {v['memory_channels']} channels ({format_size(need)}): no RAM configuration "
                    "fits", key,
                    "Check for a missing digit or a wrong unit (a platform's maximum is the vendor's figure, "
                    "hundreds of GiB or a few TiB), or list a smaller module of that kind in ram.yaml.")


def _check_fixed_power(p: Parsed, g: Parsed, m: Merged) -> None:
    """A baseboard's supply powers the GPUs it carries: else it is never buildable."""
    v = p.values
    draw = v["fixed_gpu_count"] * g.values["tdp_w"] + v["platform_w"]
    if draw <= v["psu_w"]:
        return
    g_at = g.origin.get("tdp_w", g.entry)
    p_key = later(p, "psu_w", "platform_w")
    p_at = p.origin.get(p_key, p.entry)
    text = (f"{v['fixed_gpu_count']} x {g.values['tdp_w']:,} W ({g.id} tdp_w) + platform_w {v['platform_w']:,} W "
            f"= {draw:,} W is more than psu_w {v['psu_w']:,} W: the baseboard cannot power the GPUs it carries")
    hint = "Check for a missing digit; psu_w is the supply the machine can use (for redundant supplies, " \
           "the non-redundant share)."
    if m.file_rank(g_at.file) > m.file_rank(p_at.file):
        raise g.err(f"{text} (platform {p.id!r}, {p_at.file}:{p_at.line_of(p_key) or p_at.line})", "tdp_w",
                    "Overlay the platform's psu_w too if its supply is larger.")
    raise p.err(text, p_key, hint)


PLATFORMS = Kind("platforms", Platform, PLATFORM_FIELDS, check=_check_platform, check_merged=_check_platform_refs,
                 extra=price_extra("base_price_usd"))
