"""Candidate enumeration and feasibility rules (planner.solve.candidates), one tiny inline catalog per rule.

Each rule is tested at its boundary: exactly at the limit fits, one unit over does not, and the
row's ``binding`` and ``why_not`` say so (texts checked outside ``pytest.raises``). Memory needs
come from the memory model itself (planner.memory.estimate), so the tests do not depend on its
constants.
"""

from __future__ import annotations

import math

import pytest

from planner.solve.candidates import (
    COLUMNS,
    RULES,
    build,
    capacity_bytes,
    precision_needs,
    ram_configs,
    with_gpus,
)
from planner.memory import estimate
from planner.core.units import GiB
from tests.plan_helpers import (
    dimm,
    gpu,
    infer_workload,
    nic,
    platform,
    scen,
    switch,
    tiny_catalog,
    train_workload,
)


def rows(cs, **where):
    t = cs.table.to_frame()
    m = True
    for k, v in where.items():
        m = m & (t[k] == v)
    return t[m]


def one(cs, **where):
    r = rows(cs, **where)
    assert len(r) >= 1, where
    return r.iloc[0]


def need_of(cat, workload, gpus=1):
    s = scen(cat, workload)
    v = s.workloads[0].variants[0]
    return estimate(with_gpus(v.workload, gpus, gpus)).per_gpu_total_bytes


def gib(n):
    return f"{n / GiB:,.2f} GiB"


# ----- capacity ---------------------------------------------------------------------------------

def test_capacity_bytes_is_exact():
    assert capacity_bytes(24 * GiB, 0.0) == 24 * GiB
    assert capacity_bytes(20 * GiB, 0.05) == 19 * GiB  # 0.05 read as 1/20, not as the binary float
    assert capacity_bytes(21, 0.05) == 21 - 2  # ceil(21/20) = 2 bytes kept free


def test_columns_are_declared_and_end_in_units():
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform()])
    cs = build(scen(cat, infer_workload()), cat)
    assert list(cs.table.columns) == list(COLUMNS)
    assert set(cs.table["binding"]) <= set(RULES) | {""}
    assert cs.table["rank"].tolist() == list(range(1, len(cs.table) + 1))


# ----- vram -----------------------------------------------------------------------------------------

# the training workload pins what the solver would otherwise choose (ZeRO, offload, checkpointing: a
# variant with checkpointing fits the short card): the point here is the one-byte boundary
@pytest.mark.parametrize("workload", [infer_workload(), train_workload(zero=0, offload_optimizer=False,
                                                                       checkpointing="none")], ids=["infer", "train"])
def test_exactly_at_capacity_fits_one_byte_over_does_not(workload):
    probe = tiny_catalog(gpus=[gpu()], platforms=[platform()])
    need = need_of(probe, workload)
    cat = tiny_catalog(gpus=[gpu("exact", usable=need), gpu("short", usable=need - 1)],
                       platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, workload, vram_headroom=0), cat)
    exact = one(cs, gpu_id="exact")
    short = one(cs, gpu_id="short")
    assert exact["feasible"] and exact["per_gpu_need_bytes"] == need == exact["gpu_capacity_bytes"]
    assert exact["headroom_bytes"] == 0
    assert not short["feasible"] and short["binding"] == "vram"
    label = cs.usages[0][0].label
    assert short["why_not"] == (f"workload {workload['name']} ({label}) needs {gib(need)} per GPU; short offers "
                                f"{gib(need - 1)} ({gib(need - 1)} CUDA total less 0% headroom), short by 0.00 GiB")


def test_headroom_boundary():
    w = infer_workload()
    need = need_of(tiny_catalog(gpus=[gpu()], platforms=[platform()]), w)
    usable = need * 20 // 19
    while capacity_bytes(usable, 0.05) < need:
        usable += 1
    assert capacity_bytes(usable - 1, 0.05) < need
    cat = tiny_catalog(gpus=[gpu("fits", usable=usable), gpu("over", usable=usable - 1)],
                       platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, w), cat)  # default vram_headroom 0.05
    assert one(cs, gpu_id="fits")["feasible"]
    over = one(cs, gpu_id="over")
    assert (over["feasible"], over["binding"]) == (False, "vram")
    assert "less 5% headroom" in over["why_not"]


# ----- tensor parallelism -------------------------------------------------------------------------

def test_tp_group_must_fit_in_a_node():
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, infer_workload(tp=2)), cat)
    r = one(cs, cards_per_node=1)
    assert (r["feasible"], r["binding"]) == (False, "tp")
    assert r["why_not"] == "workload serve: tp=2 needs 2 GPUs in one node; the node has 1"


def test_tp_auto_only_uses_degrees_that_divide_the_heads():
    # 6 heads: tp 4 is never tried, even on a 4-card machine.
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform(max_gpus=4)])
    cs = build(scen(cat, infer_workload(model="six", tp="auto")), cat)
    assert sorted({u.tp for u in cs.usages[0]}) == [1, 2, 3]
    train = train_workload(model="six", tp="auto")
    del train["gpus"]
    cs2 = build(scen(cat, train), cat)
    assert all(u.gpus % u.tp == 0 and u.tp in (1, 2, 3) for u in cs2.usages[0])
    assert {(u.gpus, u.tp) for u in cs2.usages[0]} >= {(4, 1), (4, 2), (3, 3), (2, 2)}
    assert (4, 4) not in {(u.gpus, u.tp) for u in cs2.usages[0]}


def test_fixed_gpus_need_that_many_cards():
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, train_workload(gpus=2)), cat)
    r = one(cs, cards_per_node=1)
    assert (r["feasible"], r["binding"]) == (False, "cards")
    assert r["why_not"] == "workload train runs on 2 GPUs (fixed by the scenario); the machine has 1"


# ----- slots, lanes, power -------------------------------------------------------------------------

def test_slots():
    p = platform(slots=((3, 1), (2, 2)), max_gpus=2)
    cat = tiny_catalog(gpus=[gpu("wide", slot_width=3), gpu("narrow", slot_width=2)], platforms=[p])
    cs = build(scen(cat, train_workload(gpus=2)), cat)
    wide = one(cs, gpu_id="wide", cards_per_node=2)
    assert (wide["feasible"], wide["binding"], wide["cards_fit_count"]) == (False, "slots", 1)
    assert wide["why_not"] == "2 x wide do not fit: box takes at most 1 3-slot card"
    assert one(cs, gpu_id="narrow", cards_per_node=2)["feasible"]


def test_lanes():
    p = platform(gpu_lanes=24)
    cat = tiny_catalog(gpus=[gpu("x16", pcie_lanes=16), gpu("x8", pcie_lanes=8)], platforms=[p])
    cs = build(scen(cat, train_workload(gpus=2)), cat)
    r = one(cs, gpu_id="x16", cards_per_node=2)
    assert (r["feasible"], r["binding"], r["pcie_lanes_needed"]) == (False, "lanes", 32)
    assert r["why_not"] == "2 x x16 need 2 x 16 = 32 PCIe lanes; box has 24 for GPUs"
    assert one(cs, gpu_id="x8", cards_per_node=2)["feasible"]
    at = one(cs, gpu_id="x8", cards_per_node=3)  # 3 x 8 = 24 lanes: exactly at the limit fits
    assert at["feasible"] and at["pcie_lanes_needed"] == 24
    assert one(cs, gpu_id="x8", cards_per_node=4)["binding"] == "lanes"


def test_lanes_of_slots_split_for_more_cards():
    # An AM5-style board: one x16 slot for a triple-slot card, or two dual-slot cards at x8/x8.
    # Two 16-lane cards on the x8/x8 arrangement take 2 x 8 = 16 of the 16 CPU lanes: they fit; on
    # a board without the split they would take 32.
    split = platform("split", slots=((3, 1), (2, 2, 8)), max_gpus=2, gpu_lanes=16)
    whole = platform("whole", slots=((3, 1), (2, 2)), max_gpus=2, gpu_lanes=16)
    cat = tiny_catalog(gpus=[gpu(slot_width=2)], platforms=[split, whole])
    cs = build(scen(cat, train_workload(gpus=2, zero=3)), cat)
    ok = one(cs, platform_id="split", cards_per_node=2)
    assert ok["feasible"] and int(ok["pcie_lanes_needed"]) == 16
    r = one(cs, platform_id="whole", cards_per_node=2)
    assert (r["binding"], r["why_not"]) == ("lanes", "2 x card need 2 x 16 = 32 PCIe lanes; whole has 16 for GPUs")
    # one card keeps its full link
    assert int(one(cs, platform_id="split", cards_per_node=1)["pcie_lanes_needed"]) == 16
    # two nodes of one card each: the NIC takes the second split slot, card and NIC at x8 each = 16 lanes
    cat3 = tiny_catalog(gpus=[gpu(slot_width=2)], platforms=[split], nics=[nic()], switches=[switch()])
    r3 = one(build(scen(cat3, train_workload(gpus=2, zero=3), max_nodes=2, max_cards=1), cat3), nodes=2)
    assert r3["feasible"] and int(r3["pcie_lanes_needed"]) == 16
    # an x8 split that still exceeds the lanes says so
    tight = platform("tight", slots=((2, 2, 8),), max_gpus=2, gpu_lanes=15)
    cat2 = tiny_catalog(gpus=[gpu(slot_width=2)], platforms=[tight])
    r2 = one(build(scen(cat2, train_workload(gpus=2, zero=3)), cat2), cards_per_node=2)
    assert r2["why_not"] == "2 x card need 2 x 8 (x8 slots) = 16 PCIe lanes; tight has 15 for GPUs"


def test_power_exactly_at_the_supply_fits():
    p = platform(psu_w=1000, platform_w=300)
    cat = tiny_catalog(gpus=[gpu("at", tdp_w=350), gpu("over", tdp_w=351)], platforms=[p])
    cs = build(scen(cat, train_workload(gpus=2)), cat)
    at = one(cs, gpu_id="at", cards_per_node=2)
    assert at["feasible"] and at["power_w"] == 1000
    over = one(cs, gpu_id="over", cards_per_node=2)
    assert (over["feasible"], over["binding"]) == (False, "power")
    assert over["why_not"] == "2 x 351 W + 300 W platform = 1,002 W exceeds the 1,000 W supply of box"


# ----- RAM ----------------------------------------------------------------------------------------

def test_ram_configs_fill_every_channel_within_slots_and_max():
    p = platform(channels=2, dimm_slots=4, max_memory_gib=48)
    cat = tiny_catalog(gpus=[gpu()], platforms=[p], dimms=[dimm("d8", size_gib=8, price_usd=50),
                                                           dimm("d16", size_gib=16, price_usd=90),
                                                           dimm("d32", size_gib=32, price_usd=200),
                                                           dimm("other", size_gib=8, kind="ddr4-udimm")])
    got = [(r.dimm.id, r.per_channel, r.count, r.bytes // GiB, r.price_usd) for r in ram_configs(p, cat)]
    # 2 x 32 = 64 GiB and 4 x 16 = 64 GiB exceed max_memory 48 GiB; 4 x 32 too; ddr4 is the wrong kind
    assert got == [("d8", 1, 2, 16, 100.0), ("d16", 1, 2, 32, 180.0), ("d8", 2, 4, 32, 200.0)]
    assert ram_configs(platform(channels=4, dimm_slots=2), cat) == []


def test_ram_exactly_twice_the_vram_fits_one_byte_more_does_not():
    p = platform(channels=2, dimm_slots=2, max_gpus=1, slots=((3, 1),))
    d = dimm("d8", size_gib=8)
    exact = tiny_catalog(gpus=[gpu("g8", memory_bytes=8 * GiB)], platforms=[p], dimms=[d])
    cs = build(scen(exact, infer_workload()), exact)
    r = one(cs, gpu_id="g8")
    assert r["feasible"] and r["ram_bytes"] == 16 * GiB == r["ram_required_bytes"]
    over = tiny_catalog(gpus=[gpu("g8p", memory_bytes=8 * GiB + 1, usable=8 * GiB)], platforms=[p], dimms=[d])
    cs2 = build(scen(over, infer_workload()), over)
    r2 = one(cs2, gpu_id="g8p")
    assert (r2["feasible"], r2["binding"]) == (False, "ram")
    label = cs2.usages[0][0].label
    assert r2["why_not"] == (f"workload serve ({label}) needs {gib(16 * GiB + 2)} of RAM per node (2x the "
                             f"{gib(8 * GiB + 1)} of installed VRAM); this configuration has 16.00 GiB; the largest "
                             "equal-DIMM configuration of box has 16.00 GiB (max_memory 1,024.00 GiB)")


def test_ram_above_the_platform_max():
    p = platform(channels=2, dimm_slots=4, max_memory_gib=8, max_gpus=1, slots=((3, 1),))
    cat = tiny_catalog(gpus=[gpu("g8", memory_gib=8)], platforms=[p], dimms=[dimm("d4", size_gib=4)])
    assert [r.count for r in ram_configs(p, cat)] == [2]  # 4 x 4 GiB = 16 GiB > 8 GiB is not built
    cs = build(scen(cat, infer_workload()), cat)
    r = one(cs, gpu_id="g8")
    assert (r["feasible"], r["binding"]) == (False, "ram")
    assert r["why_not"].endswith("this configuration has 8.00 GiB; box takes at most 8.00 GiB")


def test_ram_rule_is_the_scenarios_to_set():
    # 4 GiB card, one per node: the default rule wants 2 x 4 = 8 GiB of RAM; ram_vram_min 0 leaves
    # the memory model's host peak (a few GiB for the tiny model's process) as the only floor.
    cat = tiny_catalog(gpus=[gpu(memory_gib=4)], platforms=[platform(channels=1, dimm_slots=2)],
                       dimms=[dimm("d4", size_gib=4), dimm("d8", size_gib=8)])
    w = infer_workload()
    default = build(scen(cat, w), cat)
    assert not one(default, dimm_id="d4", dimms_per_channel=1)["feasible"]
    assert one(default, dimm_id="d8", dimms_per_channel=1)["feasible"]
    host = int(one(default, dimm_id="d8")["host_need_bytes"])
    relaxed = build(scen(cat, w, ram_vram_min=0), cat)
    r = one(relaxed, dimm_id="d4", dimms_per_channel=1)
    assert r["feasible"] == (host <= 4 * GiB)
    assert int(r["ram_required_bytes"]) == host


def test_ram_offload_needs_six_times_the_vram():
    p = platform(channels=2, dimm_slots=4, max_gpus=2, slots=((3, 2),))
    d8, d32 = dimm("d8", size_gib=8, price_usd=10), dimm("d32", size_gib=32, price_usd=1000)
    w = train_workload(gpus=2, zero=1, offload_optimizer=True)
    small = tiny_catalog(gpus=[gpu("g4", memory_gib=4)], platforms=[p], dimms=[d8])
    cs = build(scen(small, w), small)
    r = one(cs, cards_per_node=2)
    # 6 x (2 x 4 GiB) = 48 GiB; the platform's DIMMs give at most 4 x 8 = 32 GiB
    assert (r["binding"], r["ram_required_bytes"]) == ("ram", 48 * GiB)
    assert "(6x the 8.00 GiB of installed VRAM with offload)" in r["why_not"]
    big = tiny_catalog(gpus=[gpu("g4", memory_gib=4)], platforms=[p], dimms=[d8, d32])
    cs2 = build(scen(big, w), big)
    ok = rows(cs2, cards_per_node=2)
    ok = ok[ok["feasible"]]
    assert ok.iloc[0]["dimm_id"] == "d32" and ok.iloc[0]["ram_bytes"] == 64 * GiB and bool(ok.iloc[0]["offload"])


def test_ram_host_need_can_dominate():
    p = platform(channels=1, dimm_slots=2, max_gpus=1, slots=((3, 1),))
    cat = tiny_catalog(gpus=[gpu("g1", memory_gib=1)], platforms=[p], dimms=[dimm("d2", size_gib=2)])
    cs = build(scen(cat, infer_workload()), cat)
    r = one(cs, gpu_id="g1")
    host = cs.usages[0][0].host_bytes
    assert host > 2 * GiB and r["ram_required_bytes"] == host and r["binding"] == "ram"
    assert "(the memory model's host peak)" in r["why_not"]


# ----- form factor, precision, price, budget --------------------------------------------------------

def test_form_factor_and_baseboards():
    sxm = gpu("sxm-card", form_factor="sxm", price_usd=5000)
    other = gpu("other-sxm", form_factor="sxm")
    pcie = gpu("card")
    hgx = platform("hgx", form_factors=("sxm",), slots=(), fixed_gpu="sxm-card", fixed_gpu_count=4, max_gpus=4)
    cat = tiny_catalog(gpus=[sxm, other, pcie], platforms=[platform("box"), hgx])
    cs = build(scen(cat, infer_workload()), cat)
    # pairs that can never combine are summarised, one row per platform and rule (issue 33): the
    # row names its first GPU (catalog order) and counts the pairs it stands for
    box = one(cs, binding="form_factor", platform_id="box")
    assert (box["gpu_id"], box["represents_count"]) == ("sxm-card", 2)
    assert box["why_not"] == "sxm-card is an SXM module; box takes pcie GPUs (the same for 1 other GPU on box: other-sxm)"
    never_hgx = one(cs, binding="form_factor", platform_id="hgx")
    assert (never_hgx["gpu_id"], never_hgx["represents_count"]) == ("other-sxm", 2)
    assert never_hgx["why_not"] == ("hgx is a baseboard that carries exactly 4 x sxm-card, not other-sxm "
                                    "(the same for 1 other GPU on hgx: card)")
    assert len(rows(cs, binding="form_factor")) == 2
    # with the PCIe card first in the catalog, it is the one the hgx row names
    cat_pcie_first = tiny_catalog(gpus=[pcie, sxm], platforms=[platform("box"), hgx])
    cs_pcie_first = build(scen(cat_pcie_first, infer_workload()), cat_pcie_first)
    assert one(cs_pcie_first, binding="form_factor", platform_id="hgx")["why_not"] == \
        "card is a PCIe card; hgx takes only its 4 x sxm-card"
    on_hgx = rows(cs, gpu_id="sxm-card", platform_id="hgx")
    assert set(on_hgx["cards_per_node"]) == {4} and on_hgx["feasible"].all()
    assert on_hgx.iloc[0]["gpus_usd"] == 4 * 5000
    # a scenario max_cards below the baseboard's count binds
    cs2 = build(scen(cat, infer_workload(), max_cards=2), cat)
    r = one(cs2, gpu_id="sxm-card", platform_id="hgx")
    assert (r["binding"], r["why_not"]) == ("max_cards", "hgx carries 4 GPUs; the scenario allows at most 2 per node")


def test_gpu_no_catalog_platform_carries_says_to_add_one():
    # An OAM module with no OAM platform anywhere in the catalog: the miss is the catalog's, and the
    # message says how to fix it rather than naming one PCIe platform.
    oam = gpu("oam-card", form_factor="oam")
    cat = tiny_catalog(gpus=[oam, gpu("card")], platforms=[platform("box")])
    cs = build(scen(cat, infer_workload()), cat)
    why = one(cs, gpu_id="oam-card", platform_id="box")["why_not"]
    assert why.startswith("oam-card is an OAM module and no platform in the catalog carries it; add one")
    assert "--catalog DIR" in why
    # When the scenario's allowed_platforms excludes the catalog's platforms that would carry the
    # card, the constraint is named, not the catalog.
    cat2 = tiny_catalog(gpus=[oam, gpu("card")], platforms=[platform("box"),
                                                             platform("oam-box", form_factors=("oam",))])
    cs2 = build(scen(cat2, infer_workload(), allowed_platforms=["box"]), cat2)
    why2 = one(cs2, gpu_id="oam-card", platform_id="box")["why_not"]
    assert why2 == ("oam-card is an OAM module and none of the allowed platforms (constraints.allowed_platforms) "
                    "carries it; allow one that does: oam-box")
    # When no catalog platform carries it at all, allowing more platforms cannot help: the catalog is named.
    cs3 = build(scen(cat, infer_workload(), allowed_platforms=["box"]), cat)
    assert one(cs3, gpu_id="oam-card", platform_id="box")["why_not"].startswith(
        "oam-card is an OAM module and no platform in the catalog carries it; add one")


def test_cooling_passive_cards_only_in_a_chassis_that_cools_them():
    passive = gpu("dc-card", cooling="passive")
    blower = gpu("ws-card", cooling="blower")
    tower = platform("tower", gpu_cooling=("open-air", "blower"))
    server = platform("server", gpu_cooling=("passive", "blower"))
    cat = tiny_catalog(gpus=[passive, blower], platforms=[tower, server])
    cs = build(scen(cat, infer_workload()), cat)
    r = one(cs, gpu_id="dc-card", platform_id="tower")
    assert r["binding"] == "cooling" and not r["feasible"]
    assert r["why_not"] == ("dc-card is passively cooled (no fan: it needs a server's front-to-back airflow); "
                            "tower cools only open-air and blower cards; platforms that cool it: server")
    # listed once (a hardware rule), not per card count or RAM configuration
    assert len(rows(cs, gpu_id="dc-card", platform_id="tower")) == 1
    assert rows(cs, gpu_id="dc-card", platform_id="server")["feasible"].any()
    assert rows(cs, gpu_id="ws-card", platform_id="tower")["feasible"].any()
    assert rows(cs, gpu_id="ws-card", platform_id="server")["feasible"].any()
    # the rule sits between form factor and slots
    assert RULES.index("form_factor") < RULES.index("cooling") < RULES.index("slots")


def test_cooling_when_no_allowed_platform_cools_the_card():
    cat = tiny_catalog(gpus=[gpu("dc-card", cooling="passive"), gpu("ws-card", cooling="open-air")],
                       platforms=[platform("tower", gpu_cooling=("open-air", "blower")),
                                  platform("server", gpu_cooling=("passive",))])
    cs = build(scen(cat, infer_workload(), allowed_platforms=["tower"]), cat)
    assert one(cs, gpu_id="dc-card", platform_id="tower")["why_not"] == (
        "dc-card is passively cooled (no fan: it needs a server's front-to-back airflow); tower cools only "
        "open-air and blower cards; none of the allowed platforms (constraints.allowed_platforms) cools it; allow "
        "one that does: server")
    # when no platform of the catalog cools it, the catalog is named
    bare = tiny_catalog(gpus=[gpu("dc-card", cooling="passive")],
                        platforms=[platform("tower", gpu_cooling=("open-air", "blower"))])
    assert one(build(scen(bare, infer_workload()), bare), gpu_id="dc-card")["why_not"].endswith(
        "no platform in the catalog cools it (overlay gpu_cooling or the card's cooling if yours differs, "
        "--catalog DIR)")
    # an open-air card is kept out of a server that cools only passive cards
    cs2 = build(scen(cat, infer_workload()), cat)
    assert one(cs2, gpu_id="ws-card", platform_id="server")["why_not"] == (
        "ws-card is an open-air card (its fans blow into the case); server cools only passive cards; "
        "platforms that cool it: tower")


def test_cooling_is_not_checked_where_either_side_is_unstated():
    cat = tiny_catalog(gpus=[gpu("dc-card", cooling="passive"), gpu("plain")],
                       platforms=[platform("tower", gpu_cooling=("open-air",)), platform("box")])
    cs = build(scen(cat, infer_workload()), cat)
    assert "cooling" not in set(cs.table["binding"][cs.table["platform_id"] == "box"])
    assert rows(cs, gpu_id="plain", platform_id="tower")["feasible"].any()
    assert one(cs, gpu_id="dc-card", platform_id="tower")["binding"] == "cooling"


def test_precision():
    cat = tiny_catalog(gpus=[gpu("no-bf16", bf16=False), gpu("no-fp8", fp8=False)],
                       platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, train_workload(recipe="mixed-bf16")), cat)
    r = one(cs, gpu_id="no-bf16")
    assert (r["feasible"], r["binding"]) == (False, "precision")
    assert r["why_not"] == (f"workload train ({cs.usages[0][0].label}) needs bf16 support; no-bf16 (test) has none")
    assert one(cs, gpu_id="no-fp8")["feasible"]
    assert one(build(scen(cat, train_workload()), cat), gpu_id="no-bf16")["feasible"]  # mixed-fp16
    cs3 = build(scen(cat, infer_workload(weights="fp8", kv_dtype="fp16")), cat)
    assert one(cs3, gpu_id="no-fp8")["binding"] == "precision"
    assert not one(cs3, gpu_id="no-bf16")["feasible"]  # has fp8? the helper default is fp8=False


def test_precision_of_8bit_lora_needs_int8():
    # bitsandbytes' int8 matmul: a card without int8 is out for LoRA on an LLM.int8 base, and only for it
    cat = tiny_catalog(gpus=[gpu("no-int8", int8=False), gpu("int8")], platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, train_workload(method="lora", load_in_8bit=True, recipe="pure-bf16")), cat)
    r = one(cs, gpu_id="no-int8")
    assert (r["feasible"], r["binding"]) == (False, "precision")
    assert "needs int8 support" in r["why_not"]
    assert one(cs, gpu_id="int8")["feasible"]
    assert one(build(scen(cat, train_workload(method="lora", recipe="pure-bf16")), cat), gpu_id="no-int8")["feasible"]


def test_precision_needs():
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform()])

    def needs(w):
        return precision_needs(scen(cat, w).workloads[0].variants[0].workload)

    assert needs(train_workload(recipe="mixed-bf16")) == ("bf16",)
    assert needs(train_workload(recipe="mixed-fp16")) == ()
    assert needs(infer_workload(weights="fp8", kv_dtype="fp8")) == ("fp8",)
    assert needs(infer_workload(weights="int8", kv_dtype="bf16")) == ("bf16", "int8")
    assert needs(infer_workload(weights="int4-awq", kv_dtype="fp16", group_size=64)) == ()
    # vLLM runs fp8 weights (Marlin W8A16) and an fp8 KV cache on 16-bit GPUs: it needs bf16 (Ampere or newer).
    assert needs(infer_workload(weights="fp8", kv_dtype="fp8", engine="vllm")) == ("bf16",)


def test_gpu_without_price():
    # An unpriced GPU (a cloud-only part) is left out of the candidates; named in allowed_gpus, it is
    # listed with the price rule saying why it is not bought.
    cat = tiny_catalog(gpus=[gpu("free", price_usd=None), gpu("card")], platforms=[platform()])
    assert "free" not in set(build(scen(cat, infer_workload()), cat).table["gpu_id"])
    cs = build(scen(cat, infer_workload(), allowed_gpus=["free", "card"]), cat)
    r = one(cs, gpu_id="free")
    assert (r["binding"], r["why_not"]) == ("price", "free has no purchase price in the catalog")


def test_budget_exactly_at_capex_fits():
    cat = tiny_catalog(gpus=[gpu(price_usd=1000)], platforms=[platform(base_price_usd=2000, max_gpus=1,
                                                                         slots=((3, 1),))],
                       dimms=[dimm(price_usd=100)])
    capex = 1000 + 2000 + 2 * 100
    cs = build(scen(cat, infer_workload(), budget_usd=capex), cat)
    assert cs.table.row(0)["feasible"] and cs.table.row(0)["capex_usd"] == capex
    cs2 = build(scen(cat, infer_workload(), budget_usd=capex - 0.01), cat)
    r = cs2.table.row(0)
    assert (r["feasible"], r["binding"]) == (False, "budget")
    assert r["why_not"] == "costs $3,200.00, $0.01 over the $3,199.99 budget"


# ----- several workloads, several nodes -----------------------------------------------------------

def test_every_workload_must_fit_the_same_machine():
    small = infer_workload(name="small")
    big = infer_workload(name="big", concurrency=64, context=2048)
    probe = tiny_catalog(gpus=[gpu()], platforms=[platform()])
    n_small, n_big = need_of(probe, small), need_of(probe, big)
    assert n_big > n_small
    cat = tiny_catalog(gpus=[gpu("mid", usable=(n_small + n_big) // 2, price_usd=10),
                             gpu("large", usable=n_big, price_usd=20)],
                       platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, small, big, vram_headroom=0), cat)
    mid = one(cs, gpu_id="mid")
    assert (mid["feasible"], mid["binding"], mid["binding_workload"]) == (False, "vram", "big")
    large = one(cs, gpu_id="large")
    assert large["feasible"] and large["per_gpu_need_bytes"] == n_big
    assert large["strategy"].startswith("small: weights fp16") and "; big: weights fp16" in large["strategy"]


def test_training_uses_every_card_of_a_machine_first():
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform(max_gpus=3, slots=((3, 3),))])
    w = train_workload(zero=3, offload_optimizer=False, checkpointing="none")  # one strategy, named in full
    del w["gpus"]
    cs = build(scen(cat, w), cat)
    for c in (1, 2, 3):
        r = one(cs, cards_per_node=c)
        assert r["feasible"] and r["strategy"].endswith(f"{c} GPU" + ("s" if c > 1 else ""))


def test_several_nodes_add_nics_cables_and_a_switch():
    p = platform(max_gpus=1, slots=((3, 1),), base_price_usd=100, nic_slots=1)
    w = train_workload(gpus=2, zero=3)
    always = {"switch": "always"}  # two nodes would otherwise be cabled back-to-back (next test)
    few_ports = tiny_catalog(gpus=[gpu(price_usd=10)], platforms=[p], dimms=[dimm(price_usd=1)],
                             nics=[nic(price_usd=1000, cable_price_usd=100)], switches=[switch(ports=1)])
    cs = build(scen(few_ports, w, max_nodes=2, network=always), few_ports)
    r = one(cs, nodes=2)
    assert (r["feasible"], r["binding"]) == (False, "network")
    assert r["why_not"] == ("2 nodes: 2 NICs need 2 switch ports; the largest matching switch has 1 (multi-switch "
                            "fabrics are not modelled)")
    ok = tiny_catalog(gpus=[gpu(price_usd=10)], platforms=[p], dimms=[dimm(price_usd=1)],
                      nics=[nic(price_usd=1000, cable_price_usd=100)], switches=[switch(ports=2, price_usd=5000)])
    cs2 = build(scen(ok, w, max_nodes=2, network=always), ok)
    r2 = cs2.table.row(0)
    assert r2["feasible"] and (r2["nodes"], r2["cards_per_node"], r2["nic_count"], r2["switch_count"]) == (2, 1, 2, 1)
    assert r2["network_usd"] == 2 * (1000 + 100) + 5000
    assert r2["capex_usd"] == 2 * (10 + 100 + 2 * 1) + 2 * 1100 + 5000
    assert "2 GPUs (1 per node)" in r2["strategy"]


def test_nics_take_gpu_slots_lanes_and_power_beyond_the_nic_slots():
    # One 3-slot card per node on a board with two 3-slot positions and no NIC slots: the NIC
    # takes the second position (fits); with one position it does not.
    w = train_workload(gpus=2, zero=3)
    sw = [switch(ports=8, price_usd=1000)]
    two = platform("two", max_gpus=1, slots=((3, 2),), gpu_lanes=32, psu_w=5000)
    one_ = platform("one", max_gpus=1, slots=((3, 1),), gpu_lanes=32, psu_w=5000)
    cat = tiny_catalog(gpus=[gpu(slot_width=3)], platforms=[two, one_], nics=[nic(tdp_w=25)], switches=sw)
    cs = build(scen(cat, w, max_nodes=2), cat)
    assert rows(cs, platform_id="two", nodes=2)["feasible"].any()
    r = one(cs, platform_id="one", nodes=2)
    assert r["binding"] == "slots"
    assert r["why_not"] == ("1 x card and 1 x nic NIC per node do not fit: one has no slots for NICs besides the "
                            "GPU slots, so 1 NIC takes a GPU slot, and its slots take at most 1 3-slot card in all")
    # one node needs no NIC: the same platform fits a single-node machine's card
    assert one(cs, platform_id="one", nodes=1)["binding"] != "slots"
    # the NIC's lanes: 1 x 16 (card) + 1 x 16 (NIC) = 32 lanes; 31 do not do
    lanes = platform("lanes", max_gpus=1, slots=((3, 2),), gpu_lanes=31, psu_w=5000)
    cat2 = tiny_catalog(gpus=[gpu(slot_width=3)], platforms=[lanes], nics=[nic()], switches=sw)
    r2 = one(build(scen(cat2, w, max_nodes=2), cat2), nodes=2)
    assert (r2["binding"], int(r2["pcie_lanes_needed"])) == ("lanes", 32)
    assert r2["why_not"] == ("1 x card need 1 x 16 PCIe lanes and the 1 NIC outside NIC slots 1 x 16 (nic): "
                             "32 lanes; lanes has 31 for GPUs")
    # power: 300 W card + 300 W platform + 25 W NIC = 625 W; a 624 W supply is short, 625 W is enough
    for psu, fits in ((624, False), (625, True)):
        pw = platform("pw", max_gpus=1, slots=((3, 1),), nic_slots=1, psu_w=psu)
        cat3 = tiny_catalog(gpus=[gpu(slot_width=3, tdp_w=300)], platforms=[pw], nics=[nic(tdp_w=25)], switches=sw)
        r3 = one(build(scen(cat3, w, max_nodes=2), cat3), nodes=2)
        assert int(r3["power_w"]) == 625
        assert (r3["binding"] != "power") == fits
        if not fits:
            assert r3["why_not"] == "1 x 300 W + 300 W platform + 1 x 25 W NICs = 625 W exceeds the 624 W supply of pw"
    # a NIC slot of its own takes neither a GPU slot nor GPU lanes
    own = platform("own", max_gpus=1, slots=((3, 1),), gpu_lanes=16, nic_slots=1, psu_w=5000)
    cat4 = tiny_catalog(gpus=[gpu(slot_width=3)], platforms=[own], nics=[nic()], switches=sw)
    r4 = one(build(scen(cat4, w, max_nodes=2), cat4), nodes=2)
    assert r4["feasible"] and int(r4["pcie_lanes_needed"]) == 16


def test_two_nodes_are_cabled_back_to_back_without_a_switch():
    # 2 nodes x 1 card, one NIC each: 2 NICs ($1,000) + 1 cable between them ($100), no switch.
    p = platform(max_gpus=1, slots=((3, 1),), base_price_usd=100, nic_slots=1)
    cat = tiny_catalog(gpus=[gpu(price_usd=10)], platforms=[p], dimms=[dimm(price_usd=1)],
                       nics=[nic(price_usd=1000, cable_price_usd=100)], switches=[switch(ports=8, price_usd=5000)])
    w = train_workload(gpus=2, zero=3)
    r = one(build(scen(cat, w, max_nodes=2), cat), nodes=2)
    assert r["feasible"] and (r["nic_count"], r["cable_count"], r["switch_count"], r["switch_id"]) == (2, 1, 0, "")
    assert r["network_usd"] == 2 * 1000 + 1 * 100
    # three nodes need the switch: 3 NICs, 3 cables, 1 switch
    w3 = train_workload(gpus=3, zero=3)
    r3 = one(build(scen(cat, w3, max_nodes=3), cat), nodes=3)
    assert (r3["nic_count"], r3["cable_count"], r3["switch_count"]) == (3, 3, 1)
    assert r3["network_usd"] == 3 * 1100 + 5000
    # network.switch: always prices one for two nodes too
    r2 = one(build(scen(cat, w, max_nodes=2, network={"switch": "always"}), cat), nodes=2)
    assert (r2["cable_count"], r2["switch_count"], r2["network_usd"]) == (2, 1, 2 * 1100 + 5000)


def test_network_kind_must_match():
    p = platform(max_gpus=1, slots=((3, 1),))
    cat = tiny_catalog(gpus=[gpu()], platforms=[p], nics=[nic(kind="roce")], switches=[switch(kind="infiniband")])
    cs = build(scen(cat, train_workload(gpus=3), max_nodes=3), cat)
    assert one(cs, nodes=3)["why_not"] == ("3 nodes: the catalog has no NIC and switch that match (same kind, switch "
                                           "rate >= NIC rate)")


def test_hardware_failures_are_listed_once():
    # A row that cannot be built is listed once (cheapest RAM), not once per RAM configuration.
    p = platform(slots=((3, 1),), max_gpus=2)
    cat = tiny_catalog(gpus=[gpu()], platforms=[p], dimms=[dimm("a", size_gib=16), dimm("b", size_gib=32)])
    cs = build(scen(cat, train_workload(gpus=2)), cat)
    assert len(rows(cs, cards_per_node=2)) == 1
    assert len(rows(cs, cards_per_node=1)) == 4  # 2 DIMM sizes x 1 or 2 per channel


def test_rank_order_is_deterministic():
    cat = tiny_catalog(gpus=[gpu("b", price_usd=100), gpu("a", price_usd=100)], platforms=[platform()])
    t1 = build(scen(cat, infer_workload()), cat).table
    t2 = build(scen(cat, infer_workload()), cat).table
    assert t1.equals(t2)
    t1 = t1.to_frame()
    f = t1[t1["feasible"]]
    assert f["capex_usd"].is_monotonic_increasing
    assert list(f["gpu_id"].iloc[:2]) == ["a", "b"]  # same price, cards and headroom: by id
    assert math.isfinite(float(f["capex_usd"].iloc[0]))


def test_with_gpus_warns_as_the_workload_read_at_the_new_count():
    # The one-rank ZeRO warning follows the GPU count (Workload.warnings derives it from the options):
    # the workload moved to another count warns exactly as one read at that count, in the reader's
    # order (before the warning about a sequence past the tiny model's 4,096 positions).
    cat = tiny_catalog(gpus=[gpu()], platforms=[platform()])

    def read(n):
        return scen(cat, train_workload(gpus=n, zero=2, seq_len=8192)).workloads[0].variants[0].workload

    one_gpu, two_gpus = read(1), read(2)
    assert one_gpu.warnings == (
        "ZeRO stage 2 on one data-parallel rank shards nothing; it saves no GPU memory.",
        "seq_len 8192 exceeds the model's max_position_embeddings (4096); quality beyond it is not guaranteed.")
    assert two_gpus.warnings == one_gpu.warnings[1:]
    assert with_gpus(one_gpu, 2, 2).warnings == two_gpus.warnings
    assert with_gpus(two_gpus, 1, 1).warnings == one_gpu.warnings
    assert estimate(with_gpus(two_gpus, 1, 1)).warnings[:2] == one_gpu.warnings


def test_vllm_workload_is_sized_with_each_cards_serve_defaults():
    # vllm serve defaults max_num_batched_tokens / max_num_seqs by card: 8,192 / 1,024 on cards of
    # >= 70 GiB that are not A100s, 2,048 / 256 elsewhere (vllm/engine/arg_utils.py). A workload that
    # leaves them open is sized for each card with that card's defaults, so the plan agrees with
    # `estimate --gpu` and `fit` on the same card.
    from planner.memory.vllm import with_serve_defaults

    cat = tiny_catalog(gpus=[gpu("big", memory_gib=80), gpu("small", memory_gib=24)],
                       platforms=[platform(max_gpus=1, slots=((3, 1),))])
    s = scen(cat, infer_workload(engine="vllm"), vram_headroom=0)
    cs = build(s, cat)
    base = with_gpus(s.workloads[0].variants[0].workload, 1, 1)
    e_large = estimate(with_serve_defaults(base, large_card=True))
    e_small = estimate(with_serve_defaults(base, large_card=False))
    large, small = e_large.per_gpu_total_bytes, e_small.per_gpu_total_bytes
    # the 8,192-token profiling forward pass and 1,024 sampler rows peak higher than 2,048 / 256
    peak = lambda e: next(c.bytes for c in e.components if c.name == "profiling-run peak (vLLM)")  # noqa: E731
    assert peak(e_large) > peak(e_small)
    assert one(cs, gpu_id="big")["per_gpu_need_bytes"] == large
    assert one(cs, gpu_id="small")["per_gpu_need_bytes"] == small
    assert "8,192 batched tokens, 1,024 sequences" in one(cs, gpu_id="big")["strategy"]
    # settings the workload states are kept on every card: one usage, the same need everywhere
    s2 = scen(cat, infer_workload(engine="vllm", max_num_batched_tokens=512, max_num_seqs=4), vram_headroom=0)
    cs2 = build(s2, cat)
    assert len(cs2.usages[0]) == 1
    assert one(cs2, gpu_id="big")["per_gpu_need_bytes"] == one(cs2, gpu_id="small")["per_gpu_need_bytes"]


def test_vllm_workload_takes_no_planning_headroom():
    # vLLM keeps 1 - gpu_memory_utilization of the card free itself; the scenario's vram_headroom
    # (5 % by default) is not stacked on top: a card whose CUDA total equals the need fits.
    from planner.memory.vllm import with_serve_defaults

    w = infer_workload(engine="vllm")
    probe = tiny_catalog(gpus=[gpu()], platforms=[platform()])
    base = with_gpus(scen(probe, w).workloads[0].variants[0].workload, 1, 1)
    need = estimate(with_serve_defaults(base, large_card=False)).per_gpu_total_bytes
    cat = tiny_catalog(gpus=[gpu("exact", usable=need), gpu("short", usable=need - 1)],
                       platforms=[platform(max_gpus=1, slots=((3, 1),))])
    cs = build(scen(cat, w), cat)  # default vram_headroom 0.05
    exact, short = one(cs, gpu_id="exact"), one(cs, gpu_id="short")
    assert exact["feasible"] and exact["headroom_bytes"] == 0
    assert not short["feasible"] and short["binding"] == "vram"
    assert "(its CUDA total; vLLM's gpu_memory_utilization is the margin), short by 0.00 GiB" in short["why_not"]
    # the same need served by Transformers keeps the 5 % headroom
    hf = build(scen(cat, infer_workload()), cat)
    assert one(hf, gpu_id="exact")["gpu_capacity_bytes"] == capacity_bytes(need, 0.05)


def test_table_reports_the_tightest_workloads_need_and_capacity():
    # A row's capacity, need and headroom are those of its tightest workload, each held against
    # its own capacity: the vLLM workload against the whole CUDA total, the other less 5 %.
    cat = tiny_catalog(gpus=[gpu("card", memory_gib=24)], platforms=[platform(max_gpus=1, slots=((3, 1),))])
    s = scen(cat, infer_workload(name="v", engine="vllm"), train_workload())
    cs = build(s, cat)
    r = one(cs, gpu_id="card")
    total = int(r["gpu_cuda_total_bytes"])
    caps = {"v": total, "train": capacity_bytes(total, 0.05)}
    needs = {u.workload.name: u.need_bytes for us in cs.usages for u in us[:1]}
    spare = {k: caps[k] - needs[k] for k in caps}
    tight = min(spare, key=spare.get)
    assert (r["gpu_capacity_bytes"], r["per_gpu_need_bytes"]) == (caps[tight], needs[tight])
    assert r["headroom_bytes"] == r["gpu_capacity_bytes"] - r["per_gpu_need_bytes"] == spare[tight]
