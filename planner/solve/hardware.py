"""The hardware rows of a scenario: every GPU x platform x cards per node x nodes x RAM
configuration the constraints allow, with the checks that need no workload (the build rules of
:data:`NODE_RULES` and :data:`BUILD_RULES`, and the RAM configuration) and their per-row arrays.

The rules, in the order they are checked, are :data:`RULES` (planner.solve.candidates' module
docstring says each one); this module evaluates the hardware ones, planner.solve.candidates the
workloads on the rows (their need against each row's capacity, RAM, speed and budget) and ranks
them. GPU x platform pairs that can never combine (price, form factor, cooling) are summarised, one
row per GPU without a price and one per platform and rule for the rest (``arrays["represents"]``
counts the pairs a row stands for).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from planner.catalog.gpus import Gpu
from planner.catalog.loader import Catalog, purchasable_gpus
from planner.catalog.network import Nic, Switch
from planner.catalog.platforms import Platform, card_lanes, cools, max_cards, slot_link, slots_at
from planner.catalog.ram import Dimm
from planner.catalog.prices import priced_catalog
from planner.speed.constants import gemm_efficiency
from planner.speed.traffic import ram_bandwidth
from planner.memory.vllm import is_large_card
from planner.solve.scenario import Constraints
from planner.solve.usages import FLASH_FEATURE, LLAMACPP_FEATURE, capacity_bytes, has_feature

#: Rules in the order they are checked (the first failing one binds).
RULES = ("price", "form_factor", "cooling", "max_cards", "slots", "lanes", "power", "network", "ram", "cards",
         "tp", "precision", "vram", "speed", "deadline", "slo", "budget")
#: Rules of one node's build: a row failing one cannot be assembled, whatever the workloads.
NODE_RULES = ("price", "form_factor", "cooling", "max_cards", "slots", "lanes", "power")
#: Rules of the whole machine's build (the node rules and the network between nodes).
BUILD_RULES = NODE_RULES + ("network",)
_HW_RULES = BUILD_RULES + ("ram",)
_HW_CODE = {name: i + 1 for i, name in enumerate(_HW_RULES)}
#: How many of the GPUs or platforms a summary row stands for its why_not names (the rest are counted).
SUMMARY_NAMES = 3


# ----- hardware rows ---------------------------------------------------------------------------

@dataclass(frozen=True)
class RamConfig:
    """Equal DIMMs in every channel: ``count`` x ``dimm`` (``per_channel`` per channel)."""

    dimm: Dimm
    per_channel: int
    count: int

    @property
    def bytes(self) -> int:
        return self.count * self.dimm.size_bytes

    @property
    def price_usd(self) -> float:
        return self.count * self.dimm.price_usd


def ram_configs(platform: Platform, catalog: Catalog) -> list[RamConfig]:
    """RAM configurations of a platform: equal DIMMs of its kind, 1 or 2 per channel, within its
    slots and max memory; cheapest first (ties: smaller, then DIMM id)."""
    out = []
    for d in catalog.dimms_of_kind(platform.memory_kind):
        for per in (1, 2):
            count = platform.memory_channels * per
            if count > platform.dimm_slots or count * d.size_bytes > platform.max_memory_bytes:
                continue
            out.append(RamConfig(d, per, count))
    return sorted(out, key=lambda r: (r.price_usd, r.bytes, r.dimm.id, r.per_channel))


@dataclass(frozen=True)
class NetworkChoice:
    """The scale-out network of a multi-node candidate (None fields: none fits)."""

    nic: Nic | None
    switch: Switch | None
    nic_count: int
    switch_count: int
    price_usd: float
    problem: str = ""
    pair: bool = False  # chosen for exactly two nodes

    @property
    def cables(self) -> int:
        """Cables bought: one per NIC to the switch, or one per NIC pair back-to-back."""
        return self.nic_count // 2 if self.direct else self.nic_count

    @property
    def direct(self) -> bool:
        """Two nodes cabled back-to-back, no switch."""
        return self.nic is not None and self.switch is None


def network_choice(catalog: Catalog, constraints: Constraints, *, nics: int, nodes: int = 0) -> NetworkChoice:
    """The cheapest NIC + switch pair (ties by ids) connecting ``nics`` NICs to one switch; for two
    nodes (``nodes`` 2) and ``network.switch: auto``, the cheapest NIC cabled back-to-back instead.

    A pair matches when the kinds agree (and the scenario's ``network.kind`` if given) and the
    switch's port rate is at least the NIC's. Cost: nics x (NIC + one cable) + one switch. Two
    nodes need no switch: NIC i of one node is cabled to NIC i of the other (as in a two-node
    DGX or workstation pair; an InfiniBand pair runs a subnet manager, opensm, on one host), so
    the cost is nics x NIC + nics / 2 cables.
    """
    net = constraints.network
    kind = net.kind
    if nodes == 2 and net.switch == "auto":
        cards = [n for n in catalog.nics if (kind is None or n.kind == kind) and (net.nic is None or n.id == net.nic)
                 and n.rate_bytes_per_s >= net.min_rate_bytes_per_s]
        if cards:
            n = min(cards, key=lambda x: (nics * x.price_usd + nics // 2 * x.cable_price_usd, x.id))
            return NetworkChoice(n, None, nics, 0, nics * n.price_usd + nics // 2 * n.cable_price_usd, pair=True)
    pairs = [(n, s) for n in catalog.nics for s in catalog.switches
             if n.kind == s.kind and (kind is None or n.kind == kind) and s.rate_bytes_per_s >= n.rate_bytes_per_s
             and (net.nic is None or n.id == net.nic) and n.rate_bytes_per_s >= net.min_rate_bytes_per_s]
    if not pairs:
        what = " ".join(x for x in (f"of kind {kind}" if kind else "", f"({net.nic})" if net.nic else "",
                                     f"of at least {net.min_rate_bytes_per_s * 8 / 1e9:g} Gb/s"
                                     if net.min_rate_bytes_per_s else "") if x)
        return NetworkChoice(None, None, nics, 0, 0.0,
                             f"the catalog has no NIC and switch {what + ' ' if what else ''}that match "
                             "(same kind, switch rate >= NIC rate)", pair=nodes == 2)
    fitting = [(n, s) for n, s in pairs if s.ports >= nics]
    if not fitting:
        most = max(s.ports for _, s in pairs)
        return NetworkChoice(None, None, nics, 0, 0.0,
                             f"{nics} NICs need {nics} switch ports; the largest matching switch has {most} "
                             "(multi-switch fabrics are not modelled)", pair=nodes == 2)
    best = min(fitting, key=lambda p: (nics * (p[0].price_usd + p[0].cable_price_usd) + p[1].price_usd,
                                       p[0].id, p[1].id))
    n, s = best
    return NetworkChoice(n, s, nics, 1, nics * (n.price_usd + n.cable_price_usd) + s.price_usd, pair=nodes == 2)


@dataclass(frozen=True)
class Hardware:
    """Workload-independent candidate rows (numpy arrays, one entry per row) and their parts.

    Build it once per (catalog, constraints) with :func:`hardware`; :func:`evaluate` reuses it
    for any scenario with those constraints.
    """

    gpus: tuple[Gpu, ...]
    platforms: tuple[Platform, ...]
    ram: tuple[RamConfig, ...]
    networks: tuple[NetworkChoice, ...]
    headroom: float
    max_cards_per_node: int
    arrays: dict[str, Any] = field(repr=False)
    ram_of: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False)
    #: GPU id -> the catalog's platforms (allowed or not) that can carry it, for explanations.
    carriers: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: GPU id -> the catalog's platforms (allowed or not) that carry it and cool it, for explanations.
    coolers: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: (form_factor or cooling, platform id) -> the first ids (at most SUMMARY_NAMES + 1) of the GPUs
    #: its summary row stands for, the row's own first; ``arrays["represents"]`` counts every row's
    #: pairs (a price row's too: one GPU on every platform).
    summarised: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: Whether several-node rows carry a scale-out fabric (NICs, cables, a switch): False when no
    #: workload of the scenario spans nodes (planner.solve.fabric.needs_fabric), whose nodes then talk
    #: over their onboard Ethernet only.
    fabric: bool = True

    @property
    def rows(self) -> int:
        return len(self.arrays["gpu_i"])

    @cached_property
    def gpu_by_id(self) -> dict[str, Gpu]:
        """The rows' GPUs by catalog id (built once: explaining a row looks its GPU up)."""
        return {g.id: g for g in self.gpus}

    @cached_property
    def platform_by_id(self) -> dict[str, Platform]:
        """The rows' platforms by catalog id."""
        return {p.id: p for p in self.platforms}

    @cached_property
    def network_by_shape(self) -> dict[tuple[int, bool], NetworkChoice]:
        """The first network choice for each (NIC count, two nodes back to back or not)."""
        out: dict[tuple[int, bool], NetworkChoice] = {}
        for x in self.networks:
            out.setdefault((x.nic_count, x.pair), x)
        return out

    @cached_property
    def form_factor_carried(self) -> dict[str, bool]:
        """GPU id -> whether an allowed platform takes its form factor (and, for a baseboard, it)."""
        return {g.id: any(g.form_factor in p.form_factors and p.fixed_gpu in (None, g.id) for p in self.platforms)
                for g in self.gpus}

    @cached_property
    def allowed_coolers(self) -> dict[str, list[str]]:
        """GPU id -> the allowed platforms that take it and cool it, in catalog order."""
        return {g.id: [p.id for p in self.platforms if cools(p, g) and g.form_factor in p.form_factors
                       and p.fixed_gpu in (None, g.id)] for g in self.gpus}

    @cached_property
    def largest_ram_bytes(self) -> dict[str, int]:
        """Platform id -> its largest RAM configuration, bytes (0 when it has none)."""
        return {p.id: max((self.ram[i].bytes for i in self.ram_of.get(p.id, ())), default=0) for p in self.platforms}

    def node_shapes(self) -> list[tuple[int, int]]:
        """The distinct (cards per node, nodes) pairs among rows that pass the hardware rules."""
        import numpy as np

        a = self.arrays
        ok = a["hw_code"] == 0
        pairs = np.unique(np.stack([a["cards"][ok], a["nodes"][ok]], axis=1), axis=0) if ok.any() else []
        return [(int(c), int(n)) for c, n in pairs]


def allowed_gpus(catalog: Catalog, constraints: Constraints) -> list[Gpu]:
    """The catalog's GPUs after allowed_gpus, excluded_gpus and vendors. A GPU without a purchase
    price (a cloud-only part such as the A10G) is left out unless allowed_gpus names it, where the
    'price' rule then says why it is not bought."""
    c = constraints
    return purchasable_gpus(catalog, c.allowed_gpus, c.excluded_gpus, c.vendors)


def allowed_platforms(catalog: Catalog, constraints: Constraints) -> list[Platform]:
    """The catalog's platforms after allowed_platforms."""
    c = constraints
    return [p for p in catalog.platforms if c.allowed_platforms is None or p.id in c.allowed_platforms]


def hardware(catalog: Catalog, constraints: Constraints, *, fabric: bool = True) -> Hardware:
    """Enumerate the hardware rows: GPU x platform x cards x nodes x RAM configuration.

    See the module docstring for the rules checked here (price, form factor, max cards, slots,
    lanes, power, network, RAM configuration) and which rows are listed once. ``fabric``: several
    nodes get the scale-out network of ``constraints.network`` (NICs, cables, a switch, and the
    slots, lanes and power the NICs take); False when no workload spans nodes
    (planner.solve.fabric.needs_fabric): the nodes then need nothing beyond the onboard Ethernet every
    platform has, and the network rule never binds.
    """
    import numpy as np

    # one price per part: the scenario's price mode chooses among a part's dated prices
    catalog = priced_catalog(catalog, constraints.price, constraints.used_ok)
    gpus = allowed_gpus(catalog, constraints)
    platforms = allowed_platforms(catalog, constraints)
    # card counts per node are enumerated up to max_cards, and never past what the largest allowed
    # platform carries: a count no platform holds is no candidate (max_cards: 65536 listed 65,536
    # counts per GPU and platform, millions of rows that all failed the slots rule)
    most = max([p.max_gpus for p in platforms] + [1])
    cmax = min(constraints.max_cards, most) if constraints.max_cards else most
    cmax_any = max([cmax] + [p.fixed_gpu_count or 0 for p in platforms])
    ram_list: list[RamConfig] = []
    ram_of: dict[str, list[int]] = {}
    for p in platforms:
        idx = []
        for r in ram_configs(p, catalog):
            idx.append(len(ram_list))
            ram_list.append(r)
        ram_of[p.id] = idx
    nets: list[NetworkChoice] = []
    net_of: dict[tuple[int, int], int] = {}

    def net_index(c: int, n: int) -> int:
        if n == 1 or not fabric:
            return -1
        nics = (constraints.network.nics_per_node or c) * n
        key = (nics, 2 if n == 2 else 0)  # two nodes may go without a switch
        if key not in net_of:
            net_of[key] = len(nets)
            nets.append(network_choice(catalog, constraints, nics=nics, nodes=key[1]))
        return net_of[key]

    cols: dict[str, list[int]] = {k: [] for k in ("gpu_i", "plat_i", "cards", "nodes", "ram_i", "net_i", "hw_code",
                                                  "fit", "represents")}

    def add(gi: int, pi: int, c: int, n: int, ri: int, ni: int, code: int, fit: int) -> None:
        cols["gpu_i"].append(gi)
        cols["plat_i"].append(pi)
        cols["cards"].append(c)
        cols["nodes"].append(n)
        cols["ram_i"].append(ri)
        cols["net_i"].append(ni)
        cols["hw_code"].append(code)
        cols["fit"].append(fit)
        cols["represents"].append(1)

    # GPU x platform pairs that can never combine (price, form factor, cooling) are summarised, one
    # row per GPU without a price (for all the platforms) and one per platform and rule for the rest
    # (for all the GPUs it refuses so): the table grows with the catalog, not with its square
    never: dict[tuple[str, int], int] = {}  # (rule, GPU or platform index) -> its row
    members: dict[tuple[str, str], list[str]] = {}  # (rule, platform id) -> the GPU ids it stands for

    def summarise(rule: str, gi: int, pi: int, c: int, cheapest: int, fit: int) -> None:
        key = (rule, gi if rule == "price" else pi)
        row = never.get(key)
        if row is None:
            never[key] = len(cols["gpu_i"])
            add(gi, pi, c, 1, cheapest, -1, _HW_CODE[rule], fit)
        else:
            cols["represents"][row] += 1
        if rule != "price":  # a price row's sentence holds on every platform: it names none
            names = members.setdefault((rule, platforms[pi].id), [])
            if len(names) < SUMMARY_NAMES + 1:
                names.append(gpus[gi].id)

    for gi, g in enumerate(gpus):
        for pi, p in enumerate(platforms):
            rams = ram_of[p.id]
            cheapest = rams[0] if rams else -1
            fixed = p.fixed_gpu is not None
            if g.form_factor != "pcie":
                fit = p.max_gpus
            elif p.gpu_slots:
                fit = max_cards(p, g.slot_width or 1)
            else:
                fit = 0
            if g.price_usd is None:
                summarise("price", gi, pi, p.fixed_gpu_count or 1, cheapest, fit)
                continue
            if g.form_factor not in p.form_factors or (fixed and p.fixed_gpu != g.id):
                summarise("form_factor", gi, pi, p.fixed_gpu_count or 1, cheapest, fit)
                continue
            if not cools(p, g):
                summarise("cooling", gi, pi, p.fixed_gpu_count or 1, cheapest, fit)
                continue
            counts = [p.fixed_gpu_count] if fixed else list(range(1, cmax + 1))
            for c in counts:
                assert c is not None
                code = 0
                if fixed and constraints.max_cards is not None and c > constraints.max_cards:
                    code = _HW_CODE["max_cards"]
                elif not fixed and c > fit:
                    code = _HW_CODE["slots"]
                elif c * card_lanes(p, g, c) > p.gpu_lanes:
                    code = _HW_CODE["lanes"]
                elif c * g.tdp_w + p.platform_w > p.psu_w:
                    code = _HW_CODE["power"]
                if code:
                    add(gi, pi, c, 1, cheapest, -1, code, fit)
                    continue
                for n in range(1, constraints.max_nodes + 1):
                    ni = net_index(c, n)
                    if ni >= 0 and nets[ni].nic is None:
                        add(gi, pi, c, n, cheapest, ni, _HW_CODE["network"], fit)
                        continue
                    if ni >= 0:
                        code = _nic_code(g, p, c, nets[ni], n)
                        if code:
                            add(gi, pi, c, n, cheapest, ni, code, fit)
                            continue
                    if not rams:
                        add(gi, pi, c, n, -1, ni, _HW_CODE["ram"], fit)
                        continue
                    for ri in rams:
                        add(gi, pi, c, n, ri, ni, 0, fit)
    arrays = {k: np.asarray(v, dtype=np.int64) for k, v in cols.items()}
    arrays.update(_static_arrays(arrays, gpus, platforms, ram_list, nets, constraints.vram_headroom))
    # the host link's per-lane rate: the slower PCIe generation of card and platform (as the cost stage
    # times the chosen machine, planner.cost.objective), for the deadline rule (planner.solve.targets)
    gens = {x.gen: x.per_lane_bytes_per_s for x in catalog.pcie}
    g_lane = np.array([gens.get(g.pcie_gen, 0.0) for g in gpus] + [0.0], dtype=float)
    p_lane = np.array([gens.get(p.pcie_gen, 0.0) for p in platforms] + [0.0], dtype=float)
    arrays["per_lane"] = np.minimum(g_lane[arrays["gpu_i"]], p_lane[arrays["plat_i"]])
    carriers = {g.id: tuple(p.id for p in catalog.platforms
                            if g.form_factor in p.form_factors and p.fixed_gpu in (None, g.id)) for g in gpus}
    coolers = {g.id: tuple(p.id for p in catalog.platforms if p.id in carriers[g.id] and cools(p, g)) for g in gpus}
    return Hardware(tuple(gpus), tuple(platforms), tuple(ram_list), tuple(nets), constraints.vram_headroom,
                    cmax_any, arrays, {k: tuple(v) for k, v in ram_of.items()}, carriers, coolers,
                    {key: tuple(ids) for key, ids in members.items()}, fabric)


def nic_load(gpu: Gpu, platform: Platform, cards: int, net: NetworkChoice, nodes: int) -> tuple[int, int, int, int]:
    """What a node's NICs add to its build: (NICs per node, NICs outside the platform's NIC slots,
    PCIe lanes they take from ``gpu_lanes``, watts). NICs beyond ``nic_slots`` sit in GPU slots."""
    if nodes <= 1 or net.nic is None:
        return 0, 0, 0, 0
    per_node = net.nic_count // nodes
    extra = max(per_node - platform.nic_slots, 0)
    return per_node, extra, extra * nic_lanes(platform, gpu, cards + extra, net.nic), per_node * net.nic.tdp_w


def nic_lanes(platform: Platform, gpu: Gpu, slots: int, nic: Nic) -> int:
    """Lanes a NIC in a GPU slot takes when ``slots`` cards (GPUs and NICs) fill the slots: its
    ``pcie_lanes``, or the slot's narrower link (:func:`planner.catalog.platforms.slot_link`)."""
    link = slot_link(platform, gpu.slot_width or 1, slots) if gpu.form_factor == "pcie" else None
    return nic.pcie_lanes if link is None else min(nic.pcie_lanes, link)


def _nic_code(g: Gpu, p: Platform, c: int, net: NetworkChoice, n: int) -> int:
    """The hardware rule a node's NICs break, together with its ``c`` GPUs (0: none)."""
    per_node, extra, lanes, watts = nic_load(g, p, c, net, n)
    if extra:
        if g.form_factor != "pcie" or c + extra > slots_at(p, g.slot_width or 1):
            return _HW_CODE["slots"]
        if c * card_lanes(p, g, c, c + extra) + lanes > p.gpu_lanes:
            return _HW_CODE["lanes"]
    if c * g.tdp_w + p.platform_w + watts > p.psu_w:
        return _HW_CODE["power"]
    return 0


def _static_arrays(hw_rows: dict[str, Any], gpus: Sequence[Gpu], platforms: Sequence[Platform],
                   ram: Sequence[RamConfig], nets: Sequence[NetworkChoice], headroom: float) -> dict[str, Any]:
    """Per-row arrays that do not depend on the workloads (computed once per Hardware)."""
    import numpy as np

    gi, pi, ri, ni = hw_rows["gpu_i"], hw_rows["plat_i"], hw_rows["ram_i"], hw_rows["net_i"]
    cards, nodes = hw_rows["cards"], hw_rows["nodes"]
    out: dict[str, Any] = {}
    g_cap = np.array([capacity_bytes(x.cuda_total_bytes, headroom) for x in gpus], dtype=np.int64)
    g_mem = np.array([x.memory_bytes for x in gpus], dtype=np.int64)
    out["cap"] = g_cap[gi] if len(gpus) else np.zeros(0, dtype=np.int64)
    out["mem"] = g_mem[gi] if len(gpus) else np.zeros(0, dtype=np.int64)
    out["cuda_total"] = np.array([x.cuda_total_bytes for x in gpus], dtype=np.int64)[gi] if len(gpus) else out["mem"]
    out["vllm_large"] = (np.array([is_large_card(x) for x in gpus], dtype=bool)[gi] if len(gpus)
                         else np.zeros(0, dtype=bool))
    for feat in ("bf16", "fp8", "int8", LLAMACPP_FEATURE, FLASH_FEATURE):
        out[feat] = (np.array([has_feature(x, feat) for x in gpus], dtype=bool)[gi] if len(gpus)
                     else np.zeros(0, bool))
    def per_gpu(values: list[float]) -> Any:
        return np.array(values, dtype=float)[gi] if len(gpus) else np.zeros(0)

    out["gpu_bw"] = per_gpu([x.memory_bandwidth_bytes_per_s for x in gpus])
    out["bf16_tflops"] = per_gpu([float(x.bf16_tflops) for x in gpus])
    out["fp8_tflops"] = per_gpu([float(getattr(x, "fp8_tflops", None) or x.bf16_tflops) for x in gpus])
    out["gemm_eff"] = per_gpu([gemm_efficiency(x).value for x in gpus])  # the speed model's (planner.speed)
    out["gemm_eff_fp8"] = per_gpu([gemm_efficiency(x, "fp8" if getattr(x, "fp8_tflops", None) else "bf16").value
                                   for x in gpus])  # the FP8 rate's (the 16-bit one where the card has none)
    out["interconnect"] = per_gpu([float(getattr(x, "quoted_link_bytes_per_s", 0) or 0) for x in gpus])
    # the platform's RAM peak: its channels x the DIMMs' rated MT/s x 8 B (0 without RAM)
    chan = np.array([p.memory_channels for p in platforms] + [0], dtype=float)[pi]
    mts = np.array([r.dimm.speed_mts for r in ram] + [0], dtype=float)[ri]
    out["host_bw"] = ram_bandwidth(1, 1) * chan * mts
    price = np.array([x.price_usd if x.price_usd is not None else np.nan for x in gpus], dtype=float)
    out["gpu_price"] = price[gi] if len(gpus) else np.zeros(0)
    out["tdp"] = np.array([x.tdp_w for x in gpus], dtype=np.int64)[gi] if len(gpus) else np.zeros(0, np.int64)
    # a node's NICs (several nodes only, nic_load): those outside the NIC slots take GPU slots and
    # lanes, and every NIC draws power; with the lanes one card gets (its link, or the narrower slot
    # link of the arrangement holding the cards and those NICs). Once per distinct build.
    per_build: dict[tuple[int, int, int, int, int], tuple[int, int, int]] = {}
    keys = list(zip(gi.tolist(), pi.tolist(), cards.tolist(), nodes.tolist(), ni.tolist()))
    for key in keys:
        if key not in per_build:
            g_, p_, c_, n_, net_ = key
            _, extra, nic_lane_total, watts = (nic_load(gpus[g_], platforms[p_], c_, nets[net_], n_) if net_ >= 0
                                               else (0, 0, 0, 0))
            per_build[key] = (card_lanes(platforms[p_], gpus[g_], c_, c_ + extra), nic_lane_total, watts)
    out["lanes"] = np.array([per_build[k][0] for k in keys], dtype=np.int64)
    out["nic_lanes"] = np.array([per_build[k][1] for k in keys], dtype=np.int64)
    out["nic_w"] = np.array([per_build[k][2] for k in keys], dtype=np.int64)
    out["width"] = np.array([x.slot_width or 0 for x in gpus], dtype=np.int64)[gi] if len(gpus) else out["tdp"]
    out["has_ram"] = ri >= 0
    out["ram_bytes"] = np.array([r.bytes for r in ram] + [0], dtype=np.int64)[ri]
    out["dimm_price"] = np.array([r.price_usd for r in ram] + [0.0], dtype=float)[ri]
    out["dimm_count"] = np.array([r.count for r in ram] + [0], dtype=np.int64)[ri]
    out["vram_node"] = cards * out["mem"]
    out["gpus_usd"] = np.nan_to_num(out["gpu_price"]) * cards * nodes
    out["platform_usd"] = np.array([p.base_price_usd for p in platforms] + [0.0], dtype=float)[pi] * nodes
    out["ram_usd"] = out["dimm_price"] * nodes * out["has_ram"]
    out["network_usd"] = np.array([n.price_usd for n in nets] + [0.0], dtype=float)[ni]
    out["hw_usd"] = out["gpus_usd"] + out["platform_usd"] + out["ram_usd"] + out["network_usd"]
    # integer ranks of the ids, for a total, deterministic order without string sorts
    def id_rank(ids: Sequence[str]) -> Any:
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        rank = np.empty(len(ids) + 1, dtype=np.int64)
        rank[order] = np.arange(len(ids))
        rank[len(ids)] = -1  # '' sorts first
        return rank

    out["gpu_rank"] = id_rank([x.id for x in gpus])[gi]
    out["plat_rank"] = id_rank([x.id for x in platforms])[pi]
    out["dimm_rank"] = id_rank([r.dimm.id for r in ram])[ri]
    out["single_rows"] = {g: np.nonzero(cards >= g)[0] for g in range(1, int(cards.max(initial=0)) + 1)}
    out["shape_rows"] = {}
    return out
