"""Catalog loader: the shipped catalog loads; bad input gives one exact, located message.

Bad snippets are made by replacing one piece of text in a copy of tests/data/catalog_tiny,
so every expected message names a line of that fixture. Messages are checked outside the
``pytest.raises`` block, on ``str(excinfo.value)``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from planner.model.architecture import from_hf_config
from planner.catalog.loader import CATALOG_FILES, Catalog, default_catalog_dir, load_catalog
from planner.catalog.platforms import SlotGroup, max_cards
from planner.catalog.schema import CatalogWarning
from planner.core.errors import CatalogError
from planner.core.units import GB, GiB

TINY = Path(__file__).parent / "data" / "catalog_tiny"
SHIPPED = default_catalog_dir()


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A writable copy of the tiny catalog."""
    target = tmp_path / "catalog"
    shutil.copytree(TINY, target)
    return target


def edit(directory: Path, name: str, old: str, new: str) -> Path:
    """Replace the one occurrence of ``old`` in ``directory/name`` by ``new``."""
    path = directory / name
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {name}"
    path.write_text(text.replace(old, new))
    return path


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


# ----- the shipped catalog ------------------------------------------------------------------

def test_shipped_catalog_dir_is_next_to_the_package() -> None:
    assert SHIPPED == Path(__file__).resolve().parent.parent / "catalog"
    assert (SHIPPED / "README.md").is_file()


def test_shipped_catalog_loads() -> None:
    missing = [name for name in ("gpus.yaml", "cloud.yaml") if not (SHIPPED / name).exists()]
    if missing:
        pytest.skip(f"not written yet: {', '.join(missing)}")
    cat = load_catalog()
    assert cat.schema_version == 1
    for name, lists in CATALOG_FILES.items():
        if (SHIPPED / name).exists():
            assert any(getattr(cat, _attr(kind)) for kind in lists), name
    ids = [(s.file, s.id) for s in cat.sources]
    assert len(ids) == len(set(ids))
    assert all(s.source and s.as_of for s in cat.sources)
    # Every platform's fixed GPU and every instance's GPU resolve.
    for p in cat.platforms:
        if p.fixed_gpu:
            assert cat.gpu(p.fixed_gpu).form_factor in p.form_factors
    for inst in cat.instances:
        cat.gpu(inst.gpu)


def test_shipped_models_parse() -> None:
    if not (SHIPPED / "models.yaml").exists():
        pytest.skip("models.yaml not written yet")
    if not (SHIPPED / "gpus.yaml").exists():
        pytest.skip("gpus.yaml not written yet (its references are checked on load)")
    cat = load_catalog()
    for m in cat.models:
        assert from_hf_config(m.config, m.where).parameters > 0
        assert m.file.endswith("models.yaml")


def _attr(kind: str) -> str:
    return {"generations": "pcie", "instances": "instances"}.get(kind, kind)


@pytest.fixture
def hardware(tmp_path: Path) -> Catalog:
    """The shipped pcie/ram/platforms/network files with the tiny fixture's GPUs (h100-sxm) plus copies of it
    under the ids of the modules the shipped baseboard servers carry (h200-sxm, b200, the A100 SXM4 modules,
    and OAM modules for mi300x, gaudi-3 and gaudi-2)."""
    d = tmp_path / "catalog"
    d.mkdir()
    for name in ("pcie.yaml", "ram.yaml", "platforms.yaml", "network.yaml"):
        shutil.copy(SHIPPED / name, d / name)
    gpus = (TINY / "gpus.yaml").read_text()
    h100 = gpus[gpus.index("  - id: h100-sxm"):]
    gpus += h100.replace("id: h100-sxm", "id: h200-sxm").replace("80 GiB", "141 GiB").replace("81559 MiB", "143771 MiB")
    fixed = {p["fixed_gpu"] for p in yaml.safe_load((SHIPPED / "platforms.yaml").read_text())["platforms"]
             if p.get("fixed_gpu")}
    for gpu_id in sorted(fixed - {"h100-sxm", "h200-sxm"}):
        module = h100.replace("id: h100-sxm", f"id: {gpu_id}")
        if gpu_id in ("mi300x", "gaudi-3", "gaudi-2"):
            module = module.replace("form_factor: sxm", "form_factor: oam")
        gpus += module
    (d / "gpus.yaml").write_text(gpus)
    return load_catalog(base=d)


def test_shipped_pcie_rates(hardware: Catalog) -> None:
    rates = {g.gen: g.per_lane_bytes_per_s for g in hardware.pcie}
    assert rates == {3: 0.985 * GB, 4: 1.969 * GB, 5: 3.938 * GB, 6: 7.56 * GB}
    assert hardware.pcie_gen(4).per_lane_bytes_per_s * 16 == pytest.approx(31.5 * GB, rel=1e-3)


def test_shipped_dimms(hardware: Catalog) -> None:
    sizes = {kind: [d.size_bytes // GiB for d in hardware.dimms_of_kind(kind)]
             for kind in ("ddr4-udimm", "ddr5-udimm", "ddr5-rdimm")}
    assert sizes == {"ddr4-udimm": [16, 32], "ddr5-udimm": [16, 32, 48, 64], "ddr5-rdimm": [16, 32, 64, 96, 128]}
    # A "32 GB" module holds 32 GiB.
    assert hardware.dimm("ddr5-udimm-32g").size_bytes == 32 * 2**30
    for d in hardware.dimms:
        assert d.as_of >= "2025-12", f"{d.id}: use the newest (late 2025 / 2026) DRAM prices"
        assert d.verification in ("D", "U") and d.notes


def test_shipped_platforms(hardware: Catalog) -> None:
    ids = [p.id for p in hardware.platforms]
    assert ids == ["am5-desktop", "threadripper-7000", "threadripper-pro-7000wx", "xeon-w2400", "xeon-w3400",
                   "epyc-9004-2p-8gpu", "hgx-h100-8gpu", "hgx-h200-8gpu", "hgx-b200-8gpu", "oam-mi300x-8gpu",
                   "gaudi3-8gpu", "hgx-a100-40gb-8gpu", "hgx-a100-80gb-8gpu", "gaudi2-8gpu"]
    # ASUS Pro WS W790E-SAGE SE: 8 DIMM slots, one per channel, up to 2 TB (REF:ASUS-W790E-SAGE)
    w3400 = hardware.platform("xeon-w3400")
    assert (w3400.dimm_slots, w3400.memory_channels, w3400.max_memory_bytes) == (8, 8, 2048 * GiB)
    wrx90 = hardware.platform("threadripper-pro-7000wx")
    assert (max_cards(wrx90, 1), max_cards(wrx90, 2), max_cards(wrx90, 3), max_cards(wrx90, 4)) == (7, 4, 2, 0)
    am5 = hardware.platform("am5-desktop")
    assert (max_cards(am5, 2), max_cards(am5, 3)) == (1, 1)
    assert hardware.platform("epyc-9004-2p-8gpu").max_gpus == 8
    hgx = hardware.platform("hgx-h200-8gpu")
    assert (hgx.fixed_gpu, hgx.fixed_gpu_count, hgx.gpu_slots, max_cards(hgx, 1)) == ("h200-sxm", 8, (), 0)
    for p in hardware.platforms:
        assert p.price_kind == "estimate" and p.notes and "$" in p.notes


def test_shipped_network(hardware: Catalog) -> None:
    assert hardware.nic("connectx-7-ndr").rate_bytes_per_s == 50 * GB
    assert hardware.switch("quantum-2-qm9700").ports == 64
    assert hardware.switch("quantum-qm8700").rate_bytes_per_s == 25 * GB
    assert {n.kind for n in hardware.nics} == {"infiniband", "roce"}
    assert all(n.cable_price_usd > 0 for n in hardware.nics)


# ----- the tiny catalog ---------------------------------------------------------------------

def test_tiny_catalog_loads() -> None:
    cat = load_catalog(base=TINY)
    gpu = cat.gpu("rtx-4090")
    assert gpu.memory_bytes == 24 * GiB
    assert gpu.memory_usable_bytes == 24564 * 2**20
    assert gpu.memory_bandwidth_bytes_per_s == 1008 * GB
    assert gpu.interconnect_bytes_per_s == 0.0
    assert cat.gpu("h100-sxm").slot_width is None
    assert cat.nic("ib-ndr").rate_bytes_per_s == 400e9 / 8
    assert cat.instance("test-8x-h100").memory_bytes == 2048 * GiB
    assert cat.platform("ws").gpu_slots == (SlotGroup(2, 4), SlotGroup(1, 7))
    assert [g.gen for g in cat.pcie] == [4, 5]
    assert len(cat.sources) == 13 and cat.sources[0].id == "pcie-gen4"
    assert cat.files[0].endswith("pcie.yaml")


def test_model_config_is_read_only() -> None:
    model = load_catalog(base=TINY).model("tiny-llama")
    assert model.config["hidden_size"] == 64
    assert model.config["architectures"] == ("LlamaForCausalLM",)
    with pytest.raises(TypeError):
        model.config["hidden_size"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        model.config["rope_scaling"]["factor"] = 1  # type: ignore[index]
    assert model.where == f"{TINY / 'models.yaml'}:6"
    assert from_hf_config(model.config).parameters > 0


@pytest.mark.parametrize(
    ("slots", "max_gpus", "width", "expected"),
    [
        ([(2, 4), (1, 7)], 7, 1, 7),  # single-width: the width-1 alternative
        ([(2, 4), (1, 7)], 7, 2, 4),  # double-width: only the width-2 alternative fits
        ([(2, 4), (1, 7)], 7, 3, 0),  # nothing takes a triple-width card
        ([(3, 2), (2, 4)], 7, 1, 4),  # a narrow card fits wherever a wider one does
        ([(2, 8)], 6, 2, 6),  # capped by max_gpus
        ([], 8, 1, 0),  # baseboard with its own GPUs
    ],
)
def test_max_cards(slots: list[tuple[int, int]], max_gpus: int, width: int, expected: int) -> None:
    base = load_catalog(base=TINY).platform("ws")
    platform = type(base)(**{**_fields(base), "gpu_slots": tuple(SlotGroup(w, c) for w, c in slots),
                             "max_gpus": max_gpus})
    assert max_cards(platform, width) == expected


def _fields(obj: object) -> dict:
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}  # type: ignore[attr-defined]


def test_max_cards_refuses_a_zero_width() -> None:
    with pytest.raises(ValueError):
        max_cards(load_catalog(base=TINY).platform("ws"), 0)


def test_lookup_unknown_id_has_did_you_mean() -> None:
    cat = load_catalog(base=TINY)
    with pytest.raises(CatalogError) as excinfo:
        cat.gpu("rtx-4900")
    assert str(excinfo.value) == "unknown GPU 'rtx-4900'. Did you mean 'rtx-4090'?"
    with pytest.raises(CatalogError) as excinfo:
        cat.pcie_gen(7)
    assert str(excinfo.value) == "unknown PCIe generation 7. Valid: 4, 5."


# ----- bad snippets: one exact message each -------------------------------------------------

BAD = [
    # (file, old text, new text, expected message after "<dir>/")
    ("gpus.yaml", "    memory: 24 GiB\n", "    memroy: 24 GiB\n",
     "gpus.yaml:10: gpus[0] (rtx-4090).memroy: unknown key 'memroy'. Did you mean 'memory'?"),
    ("gpus.yaml", "    memory: 24 GiB\n", "    memory: 24\n",
     "gpus.yaml:10: gpus[0] (rtx-4090).memory: the size 24 has no unit; write it with the unit it counts, e.g. '24 GiB', '24 MiB' or '24 GB'."),
    ("gpus.yaml", "    memory: 24 GiB\n", "    memory: 24 Gib\n",
     "gpus.yaml:10: gpus[0] (rtx-4090).memory: unknown size unit 'Gib' in '24 Gib' (did you mean GiB?); "
     "use B, KiB, MiB, GiB, TiB, kB, MB, GB or TB."),
    ("gpus.yaml", "    memory: 24 GiB\n", "    memory: 0 GiB\n",
     "gpus.yaml:10: gpus[0] (rtx-4090).memory: must be more than 0 bytes, not '0 GiB'."),
    ("gpus.yaml", "    memory: 24 GiB\n", "    memory: 8 TiB\n",
     "gpus.yaml:10: gpus[0] (rtx-4090).memory: '8 TiB' is more than any real GPU memory (4.00 TiB). "
     "Check for an extra digit or a wrong unit (MB, GB, TB, GiB...)."),
    ("gpus.yaml", "    memory_usable: 24564 MiB\n", "    memory_usable: 25 GiB\n",
     "gpus.yaml:11: gpus[0] (rtx-4090).memory_usable: memory_usable is more than memory. "
     "memory_usable is what the driver reports, at most the marketed memory."),
    ("gpus.yaml", "    memory_bandwidth: 1008 GB/s\n", "    memory_bandwidth: 1008\n",
     "gpus.yaml:12: gpus[0] (rtx-4090).memory_bandwidth: the rate 1008 has no unit; write e.g. '900 GB/s' or '400 "
     "Gb/s'."),
    ("gpus.yaml", "    bf16_tflops: 165\n", "    bf16_tflops: .nan\n",
     "gpus.yaml:13: gpus[0] (rtx-4090).bf16_tflops: must be a finite number, not nan."),
    ("gpus.yaml", "    price_usd: 1599\n", "    price_usd: .inf\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).price_usd: must be a finite number, not inf."),
    ("gpus.yaml", "    price_usd: 1599\n", "    price_usd: -5\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).price_usd: must be more than 0, not -5."),
    ("gpus.yaml", "    price_usd: 1599\n", "    price_usd: 0\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).price_usd: must be more than 0, not 0. A catalog price is what a plan pays for "
     "one unit; there is no price for hardware already owned. To see what GPUs you own can run, use 'planner estimate "
     "--gpu ID --gpus N' or 'planner fit', which need no price; to plan a purchase, give the unit's price (a "
     "quote, street price or estimate)."),
    ("gpus.yaml", "    price_usd: 1599\n", "    price_usd: 20000000\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).price_usd: 20000000 USD is more than any real price (10,000,000 USD). "
     "Check for an extra digit or a wrong unit."),
    ("gpus.yaml", "    price_usd: 1599\n    price_kind: msrp\n", "    price_usd: 1599\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).price_usd: price_usd needs price_kind. "
     "Give both, or neither when there is no purchase price."),
    ("gpus.yaml", "    tdp_w: 450\n", "    tdp_w: 6000\n",
     "gpus.yaml:20: gpus[0] (rtx-4090).tdp_w: 6000 W is more than any real GPU board power (5,000 W). "
     "Check for an extra digit or a wrong unit."),
    ("gpus.yaml", "    tdp_w: 450\n", "    tdp_w: 450W\n",
     "gpus.yaml:20: gpus[0] (rtx-4090).tdp_w: must be a whole number, not '450W'. Write the number alone, without 'W': tdp_w: 450."),
    ("gpus.yaml", "    tdp_w: 450\n", "    tdp_w: 0\n",
     "gpus.yaml:20: gpus[0] (rtx-4090).tdp_w: must be more than 0, not 0."),
    ("gpus.yaml", '    compute_capability: "8.9"\n', "    compute_capability: 8.9\n",
     'gpus.yaml:9: gpus[0] (rtx-4090).compute_capability: must be a quoted text such as "8.9", not 8.9. '
     "Quote it: YAML reads 8.10 as the number 8.1."),
    ("gpus.yaml", "    slot_width: 3\n", "",
     "gpus.yaml:21: gpus[0] (rtx-4090).form_factor: a PCIe card needs a slot_width of 1 or more (slots it occupies)."),
    ("gpus.yaml", "    name: Test card 24G\n    vendor: nvidia\n", "    name: Test card 24G\n    vendor: nvdia\n",
     "gpus.yaml:6: gpus[0] (rtx-4090).vendor: 'nvdia' is not one of the choices. Did you mean 'nvidia'?"),
    ("gpus.yaml", "    name: Test card 24G\n    vendor: nvidia\n", "    name: Test card 24G\n    vendor: NVIDIA\n",
     "gpus.yaml:6: gpus[0] (rtx-4090).vendor: 'NVIDIA' is not one of the choices. Write it in lower case: 'nvidia'."),
    ("gpus.yaml", "  - id: h100-sxm\n", "  - id: rtx-4090\n",
     "gpus.yaml:27: gpus[1] (rtx-4090).id: duplicate id 'rtx-4090' (first on line 4). "
     "Ids are unique within a file; rename or remove one."),
    ("gpus.yaml", "  - id: h100-sxm\n", "  - id: H100_SXM\n",
     "gpus.yaml:27: gpus[1].id: id 'H100_SXM' must be lower-case letters and digits joined by '.' or '-'. For example 'h100-sxm'."),
    ("gpus.yaml", "    source: test fixture\n    as_of: 2026-01-01\n  - id: h100-sxm\n",
     "    as_of: 2026-01-01\n  - id: h100-sxm\n",
     "gpus.yaml:4: gpus[0] (rtx-4090): missing required key 'source'."),
    ("gpus.yaml", "    source: test fixture\n    as_of: 2026-01-01\n  - id: h100-sxm\n",
     "    source: test fixture\n  - id: h100-sxm\n",
     "gpus.yaml:4: gpus[0] (rtx-4090): missing required key 'as_of'."),
    ("gpus.yaml", "    as_of: 2026-01-01\n  - id: h100-sxm\n", "    as_of: last week\n  - id: h100-sxm\n",
     "gpus.yaml:26: gpus[0] (rtx-4090).as_of: must be a date written YYYY-MM-DD or YYYY-MM, not 'last week'."),
    ("gpus.yaml", "schema_version: 1\n", "",
     "gpus.yaml:2: missing required key 'schema_version'. Add 'schema_version: 1' at the top of the file."),
    ("gpus.yaml", "schema_version: 1\n", "schema_version: 2\n",
     "gpus.yaml:2: schema_version: version 2 is not supported. "
     "This planner reads schema_version 1 (catalog/README.md)."),
    ("gpus.yaml", "gpus:\n", "gpu:\n",
     "gpus.yaml:3: gpu: unknown key 'gpu'. Did you mean 'gpus'?"),
    ("gpus.yaml", "    tdp_w: 450\n", "    tdp_w: [450\n",
     "gpus.yaml:21: YAML syntax error: expected ',' or ']', but got ':' at line 21 column 15. "
     "Close the '[' opened at line 20 column 12 with ']'."),
    ("gpus.yaml", "    pcie_gen: 4\n", "    pcie_gen: 3\n",
     "gpus.yaml:17: gpus[0] (rtx-4090).pcie_gen: PCIe generation 3 is not in pcie.yaml. Valid: 4, 5."),
    ("gpus.yaml", "    form_factor: sxm\n", "    form_factor: sxm\n    slot_width: 2\n",
     "gpus.yaml:44: gpus[1] (h100-sxm).slot_width: an sxm module sits on its baseboard, not in slots. "
     "Write slot_width: 0 or leave it out."),
    ("ram.yaml", "    size: 32 GiB\n", "    size: 32\n",
     "ram.yaml:6: dimms[0] (ddr5-udimm-32g).size: the size 32 has no unit; write it with the unit it counts, e.g. '32 GiB', '32 MiB' or '32 GB'."),
    # Memory sizes of DIMMs, platforms and instances are binary: '32 GB' would be read as 32 x 10^9 bytes
    # (29.80 GiB = 32e9 / 2^30; 32768e6 / 2^30 = 30.52 GiB), so a decimal unit is refused with the binary spelling.
    ("ram.yaml", "    size: 32 GiB\n", "    size: 32 GB\n",
     "ram.yaml:6: dimms[0] (ddr5-udimm-32g).size: '32 GB' is 29.80 GiB (GB = 10^9 bytes), but memory sizes are binary. "
     "A module sold as '32 GB' holds 32 GiB (DRAM chips come in powers of two): write '32 GiB'."),
    ("ram.yaml", "    size: 32 GiB\n", "    size: 32768MB\n",
     "ram.yaml:6: dimms[0] (ddr5-udimm-32g).size: '32768MB' is 30.52 GiB (MB = 10^6 bytes), but memory sizes are "
     "binary. A module sold as '32768 MB' holds 32768 MiB (DRAM chips come in powers of two): write '32768 MiB'."),
    ("ram.yaml", "    price_usd: 355\n", "    price_usd: 0\n",
     "ram.yaml:8: dimms[0] (ddr5-udimm-32g).price_usd: must be more than 0, not 0. A catalog price is what a plan pays "
     "for one unit; there is no price for hardware already owned. To see what GPUs you own can run, use 'planner "
     "estimate --gpu ID --gpus N' or 'planner fit', which need no price; to plan a purchase, give the unit's price (a "
     "quote, street price or estimate)."),
    ("ram.yaml", "    speed_mts: 5600\n", "    speed_mts: 5600.5\n",
     "ram.yaml:7: dimms[0] (ddr5-udimm-32g).speed_mts: must be a whole number, not 5600.5. Write a whole number: "
     "speed_mts: 5601 (rounded up) or speed_mts: 5600."),
    ("cloud.yaml", "    gpu: h100-sxm\n", "    gpu: h100-sxn\n",
     "cloud.yaml:7: instances[0] (test-8x-h100).gpu: unknown GPU 'h100-sxn'. Did you mean 'h100-sxm'?"),
    ("cloud.yaml", "    memory: 2048 GiB\n", "    memory: 2048\n",
     "cloud.yaml:11: instances[0] (test-8x-h100).memory: the size 2048 has no unit; write it with the unit it "
     "counts, e.g. '2048 GiB', '2048 MiB' or '2048 GB'."),
    # 2048e9 / 2^40 = 1.86 TiB; Google Cloud's pricing page defines its 'GB' of machine memory as 2^30 bytes
    ("cloud.yaml", "    memory: 2048 GiB\n", "    memory: 2048 GB\n",
     "cloud.yaml:11: instances[0] (test-8x-h100).memory: '2048 GB' is 1.86 TiB (GB = 10^9 bytes), but memory sizes are "
     "binary. AWS and Azure list instance memory in GiB, and Google Cloud's 'GB' is 2^30 bytes, so '2048 GB' there is "
     "2048 GiB: write '2048 GiB'."),
    ("platforms.yaml", "    memory_kind: ddr5-udimm\n", "    memory_kind: ddr5-udim\n",
     "platforms.yaml:9: platforms[0] (desk).memory_kind: 'ddr5-udim' is not one of the choices. "
     "Did you mean 'ddr5-udimm' or 'ddr5-rdimm' or 'ddr4-udimm'?"),
    ("platforms.yaml", "    memory_kind: ddr5-udimm\n", "    memory_kind: ddr4-udimm\n",
     "platforms.yaml:9: platforms[0] (desk).memory_kind: no DIMM of kind 'ddr4-udimm' in ram.yaml. "
     "Did you mean 'ddr5-udimm' or 'ddr5-rdimm'?"),
    ("platforms.yaml", "    fixed_gpu: h100-sxm\n", "    fixed_gpu: h100-sxn\n",
     "platforms.yaml:59: platforms[2] (hgx).fixed_gpu: unknown GPU 'h100-sxn'. Did you mean 'h100-sxm'?"),
    ("platforms.yaml", "    fixed_gpu: h100-sxm\n", "    fixed_gpu: rtx-4090\n",
     "platforms.yaml:58: platforms[2] (hgx).form_factors: the fixed GPU 'rtx-4090' has form_factor 'pcie', "
     "which form_factors ['sxm'] does not list."),
    ("platforms.yaml", "    fixed_gpu_count: 8\n", "",
     "platforms.yaml:59: platforms[2] (hgx).fixed_gpu: fixed_gpu needs fixed_gpu_count."),
    ("gpus.yaml", "    form_factor: pcie\n", "    form_factor: pcie\n    cooling: fanless\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).cooling: 'fanless' is not one of the choices. Valid: blower, open-air, "
     "passive."),
    ("gpus.yaml", "    form_factor: pcie\n", "    form_factor: pcie\n    cooling: open air\n",
     "gpus.yaml:23: gpus[0] (rtx-4090).cooling: 'open air' is not one of the choices. Did you mean 'open-air'?"),
    ("platforms.yaml", "    form_factors: [sxm]\n", "    form_factors: [sxm]\n    gpu_cooling: [pasive]\n",
     "platforms.yaml:59: platforms[2] (hgx).gpu_cooling: 'pasive' is not one of the choices. Did you mean 'passive'?"),
    ("platforms.yaml", "    form_factors: [sxm]\n", "    form_factors: [sxm]\n    gpu_cooling: []\n",
     "platforms.yaml:59: platforms[2] (hgx).gpu_cooling: must name at least one cooling kind. "
     "Valid: open-air, blower, passive."),
    ("platforms.yaml", "    max_memory: 192 GiB\n", "    max_memory: 192\n",
     "platforms.yaml:12: platforms[0] (desk).max_memory: the size 192 has no unit; write it with the unit it counts, e.g. '192 GiB', '192 MiB' or '192 GB'."),
    ("platforms.yaml", "    psu_w: 1000\n", "",
     "platforms.yaml:4: platforms[0] (desk): missing required key 'psu_w'."),
    # AMD's "192 GB" for AM5 is 4 x 48 GiB modules; 192e9 bytes = 178.81 GiB would make 4 x 48 GiB not fit
    ("platforms.yaml", "    max_memory: 192 GiB\n", "    max_memory: 192 GB\n",
     "platforms.yaml:12: platforms[0] (desk).max_memory: '192 GB' is 178.81 GiB (GB = 10^9 bytes), but memory sizes "
     "are binary. A vendor's '192 GB' memory limit is 192 GiB (whole DIMMs of binary size): write '192 GiB'."),
    ("platforms.yaml", "    max_memory: 2048 GiB\n", "    max_memory: 2 TB\n",
     "platforms.yaml:31: platforms[1] (ws).max_memory: '2 TB' is 1.82 TiB (TB = 10^12 bytes), but memory sizes are "
     "binary. A vendor's '2 TB' memory limit is 2 TiB (whole DIMMs of binary size): write '2 TiB'."),
    ("platforms.yaml", "    base_price_usd: 1500\n", "    base_price_usd: 0\n",
     "platforms.yaml:7: platforms[0] (desk).base_price_usd: must be more than 0, not 0. A catalog price is what a plan "
     "pays for one unit; there is no price for hardware already owned. To see what GPUs you own can run, use "
     "'planner estimate --gpu ID --gpus N' or 'planner fit', which need no price; to plan a purchase, give the "
     "unit's price (a quote, street price or estimate)."),
    # fields that together leave a platform unbuildable
    ("platforms.yaml", "    psu_w: 1000\n", "    psu_w: 250\n",
     "platforms.yaml:18: platforms[0] (desk).psu_w: psu_w 250 W is less than platform_w 300 W: no power is left for "
     "GPUs. psu_w is the supply the machine can use (for redundant supplies, the non-redundant share), platform_w what "
     "everything but the GPUs draws under load (CPU, RAM, drives, fans); psu_w must exceed it by the GPUs' power. "
     "Check for swapped values or a missing digit."),
    ("platforms.yaml", "    psu_w: 1000\n", "    psu_w: 300\n",
     "platforms.yaml:18: platforms[0] (desk).psu_w: psu_w 300 W is no more than platform_w 300 W: no power is left for "
     "GPUs. psu_w is the supply the machine can use (for redundant supplies, the non-redundant share), platform_w "
     "what everything but the GPUs draws under load (CPU, RAM, drives, fans); psu_w must exceed it by the GPUs' "
     "power. Check for swapped values or a missing digit."),
    ("platforms.yaml", "    dimm_slots: 4\n", "    dimm_slots: 1\n",
     "platforms.yaml:11: platforms[0] (desk).dimm_slots: dimm_slots 1 is fewer than memory_channels 2: no RAM "
     "configuration puts a DIMM in every channel. dimm_slots counts every DIMM slot of the machine (4 on a "
     "2-channel desktop board: 2 per channel), memory_channels the memory channels of all its CPUs together."),
    # the fixture's smallest ddr5-udimm is 32 GiB: 2 channels x 32 GiB = 64 GiB > 48 GiB
    ("platforms.yaml", "    max_memory: 192 GiB\n", "    max_memory: 48 GiB\n",
     "platforms.yaml:12: platforms[0] (desk).max_memory: max_memory 48.00 GiB is less than one ddr5-udimm-32g module "
     "(32.00 GiB, the smallest ddr5-udimm in ram.yaml) in each of its 2 channels (64.00 GiB): no RAM configuration "
     "fits. Check for a missing digit or a wrong unit (a platform's maximum is the vendor's figure, hundreds of GiB "
     "or a few TiB), or list a smaller module of that kind in ram.yaml."),
    # the fixture's baseboard carries 8 x h100-sxm at 700 W: 8 x 700 + 3000 = 8600 W
    ("platforms.yaml", "    psu_w: 9000\n", "    psu_w: 8000\n",
     "platforms.yaml:56: platforms[2] (hgx).psu_w: 8 x 700 W (h100-sxm tdp_w) + platform_w 3,000 W = 8,600 W is more "
     "than psu_w 8,000 W: the baseboard cannot power the GPUs it carries. Check for a missing digit; psu_w is the "
     "supply the machine can use (for redundant supplies, the non-redundant share)."),
    ("platforms.yaml", "      - {width: 1, count: 7}\n", "      - {width: 2, count: 7}\n",
     "platforms.yaml:36: platforms[1] (ws).gpu_slots[1].width: width 2 is listed twice. "
     "Give one {width, count} per card width; the entries are alternatives."),
    ("platforms.yaml", "      - {width: 1, count: 7}\n", "      - {width: 1, cnt: 7}\n",
     "platforms.yaml:36: platforms[1] (ws).gpu_slots[1].cnt: unknown key 'cnt'. Did you mean 'count'?"),
    ("platforms.yaml", "      - {width: 1, count: 7}\n", "      - {width: 1, count: 7, lanes: x8}\n",
     "platforms.yaml:36: platforms[1] (ws).gpu_slots[1].lanes: must be a whole number, not 'x8'. Write 8 (the lane "
     "count)."),
    ("platforms.yaml", "      - {width: 1, count: 7}\n", "      - {width: 1, count: 7, lanes: 12}\n",
     "platforms.yaml:36: platforms[1] (ws).gpu_slots[1].lanes: must be one of 1, 2, 4, 8, 16, not 12."),
    ("platforms.yaml", "    gpu_slots:\n      - {width: 3, count: 1}\n", "    gpu_slots: []\n",
     "platforms.yaml:15: platforms[0] (desk).gpu_slots: a platform that takes PCIe cards needs gpu_slots. "
     "For example [{width: 2, count: 4}]: up to 4 double-width cards."),
    ("network.yaml", "    rate: 400 Gb/s\n    price_usd: 2200\n", "    rate: 4000 GB/s\n    price_usd: 2200\n",
     "network.yaml:6: nics[0] (ib-ndr).rate: '4000 GB/s' is more than any real network port rate (1,250 GB/s). "
     "Check the unit: GB/s is bytes, Gb/s is bits (8 Gb/s = 1 GB/s)."),
    ("network.yaml", "    cable_price_usd: 810\n", "",
     "network.yaml:4: nics[0] (ib-ndr): missing required key 'cable_price_usd'."),
    ("network.yaml", "  - id: ib-ndr-64\n", "  - id: ib-ndr\n",
     "network.yaml:13: switches[0] (ib-ndr).id: duplicate id 'ib-ndr' (first on line 4). "
     "Ids are unique within a file; rename or remove one."),
    ("models.yaml", "    hf_id: test/tiny-llama\n", "    hf_id: test/tiny-llama\n    remove: true\n",
     "models.yaml:6: models[0] (tiny-llama).remove: unknown key 'remove'. Valid keys: as_of, config, hf_id, id, notes, "
     "parameters_source, published_parameters, source, verification."),
]


@pytest.mark.parametrize(("name", "old", "new", "expected"), BAD, ids=[f"{b[0]}:{b[2].strip()[:30]}" for b in BAD])
def test_bad_snippet(tiny: Path, name: str, old: str, new: str, expected: str) -> None:
    edit(tiny, name, old, new)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == f"{tiny}/{expected}"


def test_baseboard_must_cool_its_fixed_gpu(tiny: Path) -> None:
    edit(tiny, "gpus.yaml", "    form_factor: sxm\n", "    form_factor: sxm\n    cooling: passive\n")
    edit(tiny, "platforms.yaml", "    form_factors: [sxm]\n", "    form_factors: [sxm]\n    gpu_cooling: [blower]\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == (
        f"{tiny}/platforms.yaml:59: platforms[2] (hgx).gpu_cooling: the fixed GPU 'h100-sxm' has cooling 'passive', "
        f"which gpu_cooling ['blower'] does not list. The GPU's cooling is set at {tiny}/gpus.yaml:44; give both the "
        "same kind.")


def test_overlay_changing_a_baseboard_gpus_cooling_names_the_overlay(tmp_path: Path) -> None:
    # The shipped HGX server cools its H100 passively; an overlay calling the GPU open-air is the later
    # setting, so the error points at the overlay's line and names the platform's.
    overlay = tmp_path / "mine"
    write(overlay, "gpus.yaml", "schema_version: 1\ngpus:\n  - id: h100-sxm\n    cooling: open-air\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay)
    text = str(excinfo.value)
    assert text.startswith(f"{overlay}/gpus.yaml:4: gpus[0] (h100-sxm).cooling: 'open-air' is not a kind platform "
                           "'hgx-h100-8gpu' cools: it carries this GPU as fixed_gpu with gpu_cooling ['passive'] (")
    assert "catalog/platforms.yaml:" in text
    assert text.endswith("Give the baseboard's kind, or overlay the platform's gpu_cooling too.")


def test_shipped_catalog_states_cooling_for_every_gpu_and_platform() -> None:
    """The cooling rule is checked only where both sides state it, so the shipped catalog states it
    everywhere: data-centre cards and modules are passive (their datasheets list 'passive' thermal
    solutions), towers cool only cards with fans, GPU servers cool passive cards."""
    cat = load_catalog()
    for g in cat.gpus:
        assert g.cooling is not None, g.id
        if g.segment == "datacenter" or g.form_factor != "pcie":
            assert g.cooling == "passive", g.id
        if g.segment == "consumer":
            assert g.cooling == "open-air", g.id
    for p in cat.platforms:
        assert p.gpu_cooling is not None, p.id
        server = p.fixed_gpu is not None or p.max_gpus >= 8
        assert ("passive" in p.gpu_cooling) == server, p.id
        assert ("open-air" in p.gpu_cooling) == (not server), p.id
        if p.fixed_gpu:
            assert cat.gpu(p.fixed_gpu).cooling in p.gpu_cooling


def test_units_trap_bare_number_memory_is_refused(tiny: Path) -> None:
    """A GPU 'memory: 80' could mean 80 GB or 80 GiB (a 7 % difference): it is refused."""
    edit(tiny, "gpus.yaml", "    memory: 80 GiB\n", "    memory: 80\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == (
        f"{tiny}/gpus.yaml:32: gpus[1] (h100-sxm).memory: the size 80 has no unit; write it with the unit it counts, e.g. '80 GiB', '80 MiB' or '80 GB'."
    )


def test_units_trap_gb_and_gib_differ(tiny: Path) -> None:
    edit(tiny, "gpus.yaml", "    memory: 80 GiB\n    memory_usable: 81559 MiB\n",
         "    memory: 80 GB\n    memory_usable: 74 GiB\n")
    # the cloud row's provider figure (81,559 MiB) is above 80 GB (76,294 MiB): refused since h11b #3, so it follows
    edit(tiny, "cloud.yaml", "    gpu_memory_usable: 81559 MiB\n", "    gpu_memory_usable: 74 GiB\n")
    # '80 GB' was read as 80 * 10^9 bytes, a card 7 % smaller than the 80 GiB one: refused since h15b #1 (GPU memory
    # is binary-sized, as DIMM and cloud memory are)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == (
        f"{tiny}/gpus.yaml:32: gpus[1] (h100-sxm).memory: '80 GB' is 74.51 GiB (GB = 10^9 bytes), but memory sizes "
        "are binary. GPU memory is binary-sized (a '24 GB' card carries 24 GiB; nvidia-smi reports MiB): write "
        "'80 GiB'.")
    assert load_catalog(base=TINY).gpu("h100-sxm").memory_bytes == 80 * 2**30


def test_model_config_must_be_a_mapping(tiny: Path) -> None:
    path = tiny / "models.yaml"
    text = path.read_text()
    head = text[: text.index("    config:")]
    path.write_text(head + "    config: llama\n    source: fixture\n    as_of: 2026-01-01\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == (
        f"{tiny}/models.yaml:6: models[0] (tiny-llama).config: must be a mapping of keys to values, not 'llama'."
    )


# ----- directories and files ----------------------------------------------------------------

def test_missing_base_directory_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tmp_path / "nowhere")
    assert str(excinfo.value) == (
        f"{tmp_path / 'nowhere'}: no such catalog directory (base=). base= is a catalog directory holding the "
        "catalog files (gpus.yaml, platforms.yaml, ...; catalog/README.md); leave it out for the shipped catalog."
    )


def test_the_source_checkout_catalog_is_the_default():
    # In a checkout (and an editable install) catalog/ beside planner/ is read; only a regular install, which has
    # no such folder, reads the copy pyproject.toml packages as planner/catalog_data.
    from planner.catalog.loader import default_catalog_dir
    assert default_catalog_dir() == Path(__file__).resolve().parent.parent / "catalog"


def test_base_without_catalog_files(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("not a catalog file\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tmp_path)
    assert str(excinfo.value).startswith(f"{tmp_path}: holds no catalog files. Valid names: pcie.yaml, gpus.yaml")


def test_non_yaml_files_are_not_read(tiny: Path) -> None:
    (tiny / "README.md").write_text("notes\n")
    assert load_catalog(base=tiny).gpu("rtx-4090")


def test_empty_file(tiny: Path) -> None:
    (tiny / "ram.yaml").write_text("# nothing\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == (f"{tiny}/ram.yaml: is empty. A ram.yaml is a mapping with 'schema_version: 1' "
                                  "and a 'dimms:' list (catalog/README.md).")


def test_file_without_its_list(tiny: Path) -> None:
    (tiny / "network.yaml").write_text("schema_version: 1\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == (
        f"{tiny}/network.yaml:1: has no 'nics' or 'switches' list. "
        "A network.yaml holds its entries under 'nics': and 'switches':."
    )


# ----- overlays -----------------------------------------------------------------------------

def test_overlay_replaces_only_the_keys_it_gives(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "gpus.yaml", """\
schema_version: 1
gpus:
  - id: rtx-4090
    price_usd: 1800
    price_kind: quote
    source: my vendor quote 123
    as_of: 2026-11-01
""")
    base = load_catalog(base=TINY)
    cat = load_catalog(overlay, base=TINY)
    gpu = cat.gpu("rtx-4090")
    assert (gpu.price_usd, gpu.price_kind) == (1800.0, "quote")
    assert (gpu.source, gpu.as_of) == ("my vendor quote 123", "2026-11-01")
    assert gpu.memory_bytes == base.gpu("rtx-4090").memory_bytes
    assert gpu.name == base.gpu("rtx-4090").name
    assert [g.id for g in cat.gpus] == [g.id for g in base.gpus]
    assert ("gpus.yaml" in cat.files[-1]) and str(overlay) in cat.files[-1]
    src = next(s for s in cat.sources if s.id == "rtx-4090")
    assert src == (str(overlay / "gpus.yaml"), "rtx-4090", "my vendor quote 123", "2026-11-01")


def test_overlay_adds_a_new_entry(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "ram.yaml", """\
schema_version: 1
dimms:
  - id: ddr5-rdimm-96g
    kind: ddr5-rdimm
    size: 96 GiB
    speed_mts: 5600
    price_usd: 1200
    price_kind: quote
    source: my vendor quote 124
    as_of: 2026-11-02
""")
    cat = load_catalog(overlay, base=TINY)
    assert [d.id for d in cat.dimms] == ["ddr5-udimm-32g", "ddr5-rdimm-64g", "ddr5-rdimm-96g"]
    assert cat.dimm("ddr5-rdimm-96g").size_bytes == 96 * GiB


def test_overlay_removes_an_entry(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "network.yaml", """\
schema_version: 1
switches:
  - id: ib-ndr-64
    remove: true
""")
    cat = load_catalog(overlay, base=TINY)
    assert cat.switches == ()
    assert [n.id for n in cat.nics] == ["ib-ndr"]
    assert "ib-ndr-64" not in [s.id for s in cat.sources]


def test_overlay_null_clears_an_optional_key(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n  - id: test-8x-h100\n    spot_usd_per_hour: null\n")
    assert load_catalog(overlay, base=TINY).instance("test-8x-h100").spot_usd_per_hour is None


OVERLAY_BAD = [
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    price_usd: 1800\n",
     "gpus.yaml:4: gpus[0] (rtx-4090).price_usd: a changed price needs its own source and as_of. "
     "Add 'source:' (where the price came from) and 'as_of:' (its date) to this overlay entry."),
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4900\n    price_usd: 1800\n",
     "gpus.yaml:3: gpus[0] (rtx-4900): missing required key 'name'. No shipped gpus entry has id 'rtx-4900'; an "
     "overlay entry with a new id must give every required key. Did you mean 'rtx-4090'?"),
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4900\n    remove: true\n",
     "gpus.yaml:3: gpus[0] (rtx-4900).id: there is no gpus entry 'rtx-4900' to remove. Did you mean 'rtx-4090'?"),
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    remove: true\n    tdp_w: 300\n",
     "gpus.yaml:5: gpus[0] (rtx-4090).tdp_w: an entry with 'remove: true' takes only 'id', not 'tdp_w'."),
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    memory: 24\n",
     "gpus.yaml:4: gpus[0] (rtx-4090).memory: the size 24 has no unit; write it with the unit it counts, e.g. '24 GiB', '24 MiB' or '24 GB'."),
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    memory_usable: 30 GiB\n",
     "gpus.yaml:4: gpus[0] (rtx-4090).memory_usable: memory_usable is more than memory. "
     "memory_usable is what the driver reports, at most the marketed memory."),
    # one source and date per entry, printed for its price: re-dating a spec change would re-date the price
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    tdp_w: 400\n    source: my card\n"
                  "    as_of: 2026-11-01\n",
     "gpus.yaml:5: gpus[0] (rtx-4090).source: changes source and as_of but not the price: the quote would show them "
     "for the shipped price (price_usd 1,599.00 of 2026-01-01). Restate the price with your source and date "
     "(price_usd, price_kind), or drop source/as_of from this overlay entry and say where your change comes from in "
     "'notes:'."),
    # a new kind on the shipped price would relabel a 2022 launch price as a vendor's quote
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    price_kind: quote\n",
     "gpus.yaml:4: gpus[0] (rtx-4090).price_kind: changes price_kind but not the price it describes. Restate the price "
     "with it (price_usd, source, as_of), or leave price_kind out."),
    # a NIC has a card price and a cable price under one source: re-pricing one re-dates both
    ("network.yaml", "schema_version: 1\nnics:\n  - id: ib-ndr\n    cable_price_usd: 100\n    price_kind: quote\n"
                     "    source: cable quote\n    as_of: 2026-11-01\n",
     "network.yaml:4: nics[0] (ib-ndr).cable_price_usd: changes cable_price_usd but not price_usd: the entry has one "
     "source, date and price_kind for all its prices. Restate price_usd with this source too (the shipped value if it "
     "still holds)."),
    # a 48 GiB card keeps the 24 GiB card's nvidia-smi total unless the overlay gives its own
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    memory: 48 GiB\n",
     "gpus.yaml:4: gpus[0] (rtx-4090).memory: changes memory but not memory_usable (the nvidia-smi total of the "
     "shipped card). Give memory_usable for this card too (nvidia-smi's total)."),
    # the new-user review's overlay: AMD's "192 GB" limit read as 192 x 10^9 bytes left the 4 x 48 GiB
    # configuration out, and a pricier machine won without a word
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: desk, max_memory: 192 GB}\n",
     "platforms.yaml:3: platforms[0] (desk).max_memory: '192 GB' is 178.81 GiB (GB = 10^9 bytes), but memory sizes are "
     "binary. A vendor's '192 GB' memory limit is 192 GiB (whole DIMMs of binary size): write '192 GiB'."),
    ("ram.yaml", "schema_version: 1\ndimms:\n  - id: ddr5-rdimm-64g\n    size: 64 GB\n    notes: my module\n",
     "ram.yaml:4: dimms[0] (ddr5-rdimm-64g).size: '64 GB' is 59.60 GiB (GB = 10^9 bytes), but memory sizes are binary. "
     "A module sold as '64 GB' holds 64 GiB (DRAM chips come in powers of two): write '64 GiB'."),
    # the overlay sets platform_w only: the error names it, not the shipped psu_w (1000 W)
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - id: desk\n    platform_w: 1200\n",
     "platforms.yaml:4: platforms[0] (desk).platform_w: psu_w 1,000 W is less than platform_w 1,200 W: no power is "
     "left for GPUs. psu_w is the supply the machine can use (for redundant supplies, the non-redundant share), "
     "platform_w what everything but the GPUs draws under load (CPU, RAM, drives, fans); psu_w must exceed it by "
     "the GPUs' power. Check for swapped values or a missing digit."),
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - id: ws\n    memory_channels: 12\n",
     "platforms.yaml:4: platforms[0] (ws).memory_channels: dimm_slots 8 is fewer than memory_channels 12: no RAM "
     "configuration puts a DIMM in every channel. dimm_slots counts every DIMM slot of the machine (4 on a "
     "2-channel desktop board: 2 per channel), memory_channels the memory channels of all its CPUs together."),
    # a GPU overlay that raises the baseboard's GPUs' power past its supply (8 x 1200 + 3000 = 12,600 W > 9,000 W)
    # is the later setting: the error names it and where the platform's supply is
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - id: h100-sxm\n    tdp_w: 1200\n",
     "gpus.yaml:4: gpus[0] (h100-sxm).tdp_w: 8 x 1,200 W (h100-sxm tdp_w) + platform_w 3,000 W = 12,600 W is more than "
     f"psu_w 9,000 W: the baseboard cannot power the GPUs it carries (platform 'hgx', {TINY}/platforms.yaml:56). "
     "Overlay the platform's psu_w too if its supply is larger."),
    ("gpus.yaml", "gpus:\n  - id: rtx-4090\n    tdp_w: 400\n",
     "gpus.yaml:1: missing required key 'schema_version'. Add 'schema_version: 1' at the top of the file."),
    ("gpu.yaml", "schema_version: 1\ngpus: []\n",
     "gpu.yaml: 'gpu.yaml' is not a catalog file name. Did you mean 'gpus.yaml'? An overlay directory holds "
     "only pcie.yaml, gpus.yaml, ram.yaml, platforms.yaml, network.yaml, cloud.yaml, models.yaml."),
    ("gpus.yml", "schema_version: 1\ngpus: []\n",
     "gpus.yml: 'gpus.yml' is not a catalog file name. Did you mean 'gpus.yaml'? An overlay directory holds "
     "only pcie.yaml, gpus.yaml, ram.yaml, platforms.yaml, network.yaml, cloud.yaml, models.yaml."),
]


@pytest.mark.parametrize(("name", "text", "expected"), OVERLAY_BAD,
                         ids=[f"{b[0]}:{i}" for i, b in enumerate(OVERLAY_BAD)])
def test_bad_overlay(tmp_path: Path, name: str, text: str, expected: str) -> None:
    overlay = tmp_path / "mine"
    write(overlay, name, text)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay, base=TINY)
    assert str(excinfo.value) == f"{overlay}/{expected}"


def test_legitimate_platform_combinations_load(tmp_path: Path) -> None:
    """Combinations that look odd but describe real machines are not refused."""
    overlay = tmp_path / "mine"
    # 3 slots on 2 channels: boards with some channels at 2 DIMMs and others at 1 exist (e.g. 6-channel Xeon
    # boards with 8 slots); the planner then fills one DIMM per channel. psu_w 1 W above platform_w is
    # unusual but possible. 7 single-width slots with max_gpus 4: max_gpus is a separate limit (power, lanes,
    # the vendor's support) and the slots beyond it can hold NICs.
    write(overlay, "platforms.yaml", "schema_version: 1\nplatforms:\n"
                                     "  - {id: desk, dimm_slots: 3, psu_w: 301}\n"
                                     "  - {id: ws, max_gpus: 4}\n")
    cat = load_catalog(overlay, base=TINY)
    assert (cat.platform("desk").dimm_slots, cat.platform("desk").psu_w) == (3, 301)
    assert max_cards(cat.platform("ws"), 1) == 4  # min(7 slots, max_gpus 4)
    # exactly one module per channel at the limit: 2 x 32 GiB = 64 GiB
    write(overlay, "platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: desk, max_memory: 64 GiB}\n")
    assert load_catalog(overlay, base=TINY).platform("desk").max_memory_bytes == 64 * GiB
    # a size in bytes is exact, whatever the field
    write(overlay, "platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: desk, max_memory: 206158430208 B}\n")
    assert load_catalog(overlay, base=TINY).platform("desk").max_memory_bytes == 192 * GiB


def test_a_negative_price_keeps_its_short_message(tiny: Path) -> None:
    # the owned-hardware hint is for 0, not for a sign error
    edit(tiny, "gpus.yaml", "    price_usd: 1599\n", "    price_usd: -1\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == f"{tiny}/gpus.yaml:23: gpus[0] (rtx-4090).price_usd: must be more than 0, not -1."


# ----- cloud instances: spot_usd_per_hour_range ----------------------------------------------------

# The tiny fixture's instance gives spot_usd_per_hour 20.5 on line 13; each case adds a range after it
# (line 14) or replaces it.
SPOT = "    spot_usd_per_hour: 20.5\n"
HINT = ("Write the lowest and highest zone's spot price in the region, USD per instance-hour, e.g. "
        "spot_usd_per_hour_range: [0.2, 0.216].")
SPOT_RANGE_BAD = [
    ("scalar", SPOT + "    spot_usd_per_hour_range: 20.5\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must be a list of two prices [low, high], "
     "not 20.5. "
     + HINT),
    ("text", SPOT + "    spot_usd_per_hour_range: 20.5-24\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must be a list of two prices [low, high], "
     "not '20.5-24'. "
     + HINT),
    ("mapping", SPOT + "    spot_usd_per_hour_range: {low: 20.5, high: 24}\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must be a list of two prices [low, high], "
     "not a mapping. "
     + HINT),
    ("one", SPOT + "    spot_usd_per_hour_range: [20.5]\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must hold two prices [low, high], not 1. "
     f"{HINT}"),
    ("three", SPOT + "    spot_usd_per_hour_range: [20.5, 22, 24]\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must hold two prices [low, high], not 3. "
     f"{HINT}"),
    ("quoted", SPOT + "    spot_usd_per_hour_range: [20.5, '24']\n",
     f"cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must hold two numbers, not '24'. {HINT}"),
    ("bool", SPOT + "    spot_usd_per_hour_range: [20.5, true]\n",
     f"cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must hold two numbers, not true. {HINT}"),
    ("inf", SPOT + "    spot_usd_per_hour_range: [20.5, .inf]\n",
     f"cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: must hold two numbers, not inf. {HINT}"),
    ("zero", SPOT + "    spot_usd_per_hour_range: [0, 24]\n",
     f"cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: low must be more than 0, not 0. {HINT}"),
    ("negative", SPOT + "    spot_usd_per_hour_range: [-1, 24]\n",
     f"cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: low must be more than 0, not -1. {HINT}"),
    ("swapped", SPOT + "    spot_usd_per_hour_range: [24, 20.5]\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: low 24 is more than high 20.5. "
     "Write the lowest zone's price first: [20.5, 24]."),
    ("absurd", SPOT + "    spot_usd_per_hour_range: [20.5, 24000]\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: 24000 USD/h is more than any real hourly "
     "price (10,000 USD/h). Check for an extra digit or a wrong unit."),
    ("spot-below", SPOT + "    spot_usd_per_hour_range: [21, 24]\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: spot_usd_per_hour 20.5 is outside "
     "spot_usd_per_hour_range [21, 24]. The range is the lowest and highest zone's spot price in the region, and the "
     "catalog keeps a price within it (as a rule the low end): check for a typo or a stale range."),
    ("spot-above", SPOT + "    spot_usd_per_hour_range: [18, 20.4]\n",
     "cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: spot_usd_per_hour 20.5 is outside "
     "spot_usd_per_hour_range [18, 20.4]. The range is the lowest and highest zone's spot price in the region, and the "
     "catalog keeps a price within it (as a rule the low end): check for a typo or a stale range."),
    ("no-spot", "    spot_usd_per_hour_range: [20.5, 24]\n",
     "cloud.yaml:13: instances[0] (test-8x-h100).spot_usd_per_hour_range: spot_usd_per_hour_range needs "
     "spot_usd_per_hour. Give spot_usd_per_hour too (the figure the catalog keeps: as a rule the range's low end), or "
     "leave the range out."),
]


@pytest.mark.parametrize(("new", "expected"), [c[1:] for c in SPOT_RANGE_BAD], ids=[c[0] for c in SPOT_RANGE_BAD])
def test_bad_spot_range(tiny: Path, new: str, expected: str) -> None:
    edit(tiny, "cloud.yaml", SPOT, new)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(base=tiny)
    assert str(excinfo.value) == f"{tiny}/{expected}"


def test_spot_range_is_read(tiny: Path) -> None:
    from planner.cost.cloud import spot_basis, spot_range

    edit(tiny, "cloud.yaml", SPOT, SPOT + "    spot_usd_per_hour_range: [20.5, 24]\n")
    inst = load_catalog(base=tiny).instance("test-8x-h100")
    assert inst.spot_usd_per_hour_range == (20.5, 24.0)
    assert spot_range(inst) == (20.5, 24.0)
    assert spot_basis(inst) == "the lowest zone's, of $20.5-24/h across the region's zones"
    # without the field there is no range, whatever the notes say (they are text, never read)
    edit(tiny, "cloud.yaml", "    spot_usd_per_hour_range: [20.5, 24]\n", "    notes: Spot 20.5-24 across AZs.\n")
    inst = load_catalog(base=tiny).instance("test-8x-h100")
    assert inst.spot_usd_per_hour_range is None and spot_range(inst) is None
    assert spot_basis(inst).startswith("the catalog's one spot figure, no zone range recorded")


def test_overlay_spot_range_is_honoured(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    # the shipped instance re-priced with a range, and a new instance that keeps the range's upper end
    write(overlay, "cloud.yaml", """\
schema_version: 1
instances:
  - id: test-8x-h100
    usd_per_hour: 50
    spot_usd_per_hour: 18
    spot_usd_per_hour_range: [18, 22.25]
    source: my quote
    as_of: 2026-02-01
  - id: my-box
    provider: mycloud
    instance: box8
    gpu: h100-sxm
    gpu_count: 8
    vcpus: 192
    memory: 2048 GiB
    usd_per_hour: 40
    spot_usd_per_hour: 16
    spot_usd_per_hour_range: [12, 16]
    region: eu-west-1
    source: my cloud's price page
    as_of: 2026-02-01
""")
    from planner.cost.cloud import spot_basis

    cat = load_catalog(overlay, base=TINY)
    shipped, mine = cat.instance("test-8x-h100"), cat.instance("my-box")
    assert (shipped.spot_usd_per_hour, shipped.spot_usd_per_hour_range) == (18.0, (18.0, 22.25))
    assert spot_basis(shipped) == "the lowest zone's, of $18-22.25/h across the region's zones"
    assert mine.spot_usd_per_hour_range == (12.0, 16.0)
    assert spot_basis(mine).startswith("the upper end of $12-16/h across zones")


SPOT_RANGE_OVERLAY_BAD = [
    # the range is a price of the entry: it needs its own source and date, like the spot price
    ("no-source", "  - id: test-8x-h100\n    spot_usd_per_hour_range: [20.5, 24]\n",
     "cloud.yaml:4: instances[0] (test-8x-h100).spot_usd_per_hour_range: a changed price needs its own source and "
     "as_of. Add 'source:' (where the price came from) and 'as_of:' (its date) to this overlay entry."),
    # ... and one source and date hold for every price of the entry
    ("alone", "  - id: test-8x-h100\n    spot_usd_per_hour_range: [20.5, 24]\n    source: my quote\n"
              "    as_of: 2026-02-01\n",
     "cloud.yaml:4: instances[0] (test-8x-h100).spot_usd_per_hour_range: changes spot_usd_per_hour_range but not "
     "usd_per_hour: the entry has one source and date for all its prices. Restate usd_per_hour with this source too "
     "(the shipped value if it still holds)."),
    # an overlay range that leaves out the shipped spot price: the range names itself
    ("outside", "  - id: test-8x-h100\n    usd_per_hour: 55.04\n    spot_usd_per_hour: 20.5\n"
                "    spot_usd_per_hour_range: [10, 12]\n    source: my quote\n    as_of: 2026-02-01\n",
     "cloud.yaml:6: instances[0] (test-8x-h100).spot_usd_per_hour_range: spot_usd_per_hour 20.5 is outside "
     "spot_usd_per_hour_range [10, 12]. The range is the lowest and highest zone's spot price in the region, and the "
     "catalog keeps a price within it (as a rule the low end): check for a typo or a stale range."),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in SPOT_RANGE_OVERLAY_BAD],
                         ids=[c[0] for c in SPOT_RANGE_OVERLAY_BAD])
def test_bad_spot_range_overlay(tmp_path: Path, text: str, expected: str) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n" + text)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay, base=TINY)
    assert str(excinfo.value) == f"{overlay}/{expected}"


def test_overlay_clearing_the_spot_price_of_a_range_names_the_overlay(tmp_path: Path) -> None:
    base = tmp_path / "catalog"
    shutil.copytree(TINY, base)
    edit(base, "cloud.yaml", SPOT, SPOT + "    spot_usd_per_hour_range: [20.5, 24]\n")
    overlay = tmp_path / "mine"
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n  - id: test-8x-h100\n    spot_usd_per_hour: null\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay, base=base)
    assert str(excinfo.value) == (f"{overlay}/cloud.yaml:4: instances[0] (test-8x-h100).spot_usd_per_hour: "
                                  "spot_usd_per_hour_range needs spot_usd_per_hour. Clear the range too: "
                                  "'spot_usd_per_hour_range: null'.")
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n  - id: test-8x-h100\n    spot_usd_per_hour: null\n"
                                 "    spot_usd_per_hour_range: null\n")
    inst = load_catalog(overlay, base=base).instance("test-8x-h100")
    assert inst.spot_usd_per_hour is None and inst.spot_usd_per_hour_range is None


def test_spot_above_on_demand_loads_with_a_warning_naming_file_instance_and_prices(tmp_path: Path) -> None:
    # The tiny catalog's test-8x-h100 costs 55.04 USD/h on demand and 20.5 spot: no warning.
    assert load_catalog(base=TINY).warnings == ()
    base = tmp_path / "catalog"
    shutil.copytree(TINY, base)
    # 60 > 55.04: a spot price above on-demand (line 13 of cloud.yaml) loads, with a warning
    edit(base, "cloud.yaml", SPOT, "    spot_usd_per_hour: 60\n")
    cat = load_catalog(base=base)
    assert cat.instance("test-8x-h100").spot_usd_per_hour == 60
    assert cat.warnings == (CatalogWarning("instances", "test-8x-h100", (
        f"{base}/cloud.yaml:13: instances[0] (test-8x-h100).spot_usd_per_hour: spot_usd_per_hour 60 USD/h is above "
        "the on-demand usd_per_hour 55.04 USD/h of instance 'test-8x-h100'; spot above on-demand is rare and more "
        "often a typo: check both prices against the source")),)
    # a range whose high end (58) is above on-demand, the kept price (20.5) below it: the range's line, 14
    shutil.rmtree(base)
    shutil.copytree(TINY, base)
    edit(base, "cloud.yaml", SPOT, SPOT + "    spot_usd_per_hour_range: [20.5, 58]\n")
    (w,) = load_catalog(base=base).warnings
    assert w.text == (f"{base}/cloud.yaml:14: instances[0] (test-8x-h100).spot_usd_per_hour_range: the high end of "
                      "spot_usd_per_hour_range, 58 USD/h, is above the on-demand usd_per_hour 55.04 USD/h of instance "
                      "'test-8x-h100'; spot above on-demand is rare and more often a typo: check both prices against "
                      "the source")
    # an overlay that restates the prices with on-demand below spot: the overlay's file, at the spot price's line
    # (5; the overlay sets both prices, usd_per_hour on line 4)
    overlay = tmp_path / "mine"
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n  - id: test-8x-h100\n    usd_per_hour: 10\n"
                                 "    spot_usd_per_hour: 20.5\n    spot_usd_per_hour_range: null\n"
                                 "    source: my quote\n    as_of: 2026-02-01\n")
    (w,) = load_catalog(overlay, base=TINY).warnings
    assert w.text.startswith(f"{overlay}/cloud.yaml:5: instances[0] (test-8x-h100).spot_usd_per_hour: "
                             "spot_usd_per_hour 20.5 USD/h is above the on-demand usd_per_hour 10 USD/h")
    # equal prices are no warning
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n  - id: test-8x-h100\n    usd_per_hour: 20.5\n"
                                 "    spot_usd_per_hour: 20.5\n    source: my quote\n    as_of: 2026-02-01\n")
    assert load_catalog(overlay, base=TINY).warnings == ()


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_an_overlay_price_without_notes_drops_the_shipped_notes(tmp_path: Path) -> None:
    # The shipped notes describe the shipped price: am5-desktop's list the parts that add up to its $1,499 (the
    # quote line repeats them), the others say where each price came from. An overlay that sets a price of any
    # catalog kind that has prices (GPU, DIMM, platform, NIC, switch, cloud instance) and gives no notes keeps
    # none of them; one that gives notes keeps its own; one that changes no price keeps the shipped notes.
    from planner.solve.solver import _parts

    shipped = load_catalog()
    platform = shipped.platform("am5-desktop")
    assert platform.notes.startswith("Parts: Ryzen 9 9950X $649") and _parts(platform)
    quote = "    price_kind: quote\n    source: my quote\n    as_of: 2026-02-01\n"
    overlay = tmp_path / "mine"
    write(overlay, "platforms.yaml", "schema_version: 1\nplatforms:\n  - id: am5-desktop\n    base_price_usd: 1299\n"
          + quote)
    write(overlay, "gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-3090\n    price_usd: 900\n" + quote
          + "  - id: rtx-3060-12gb\n    tdp_w: 180\n")
    write(overlay, "ram.yaml", "schema_version: 1\ndimms:\n  - id: ddr4-udimm-16g\n    price_usd: 40\n" + quote)
    write(overlay, "network.yaml", "schema_version: 1\nnics:\n  - id: connectx-7-ndr\n    price_usd: 1500\n"
          "    cable_price_usd: 200\n" + quote + "switches:\n  - id: quantum-2-qm9700\n    price_usd: 20000\n"
          + quote)
    write(overlay, "cloud.yaml", "schema_version: 1\ninstances:\n  - id: aws-g5-xlarge\n    usd_per_hour: 0.9\n"
          "    spot_usd_per_hour: 0.4246\n    spot_usd_per_hour_range: [0.4246, 0.4507]\n    source: my quote\n"
          "    as_of: 2026-02-01\n")
    mine = load_catalog(overlay)
    for entry in (mine.platform("am5-desktop"), mine.gpu("rtx-3090"), mine.dimm("ddr4-udimm-16g"),
                  mine.nic("connectx-7-ndr"), mine.switch("quantum-2-qm9700"), mine.instance("aws-g5-xlarge")):
        assert entry.notes is None, entry.id
    assert _parts(mine.platform("am5-desktop")) == ""  # no shipped parts list on a $1,299 quote line
    # a spec change (rtx-3060-12gb's tdp_w) keeps the shipped notes, which describe no price of the overlay's
    assert mine.gpu("rtx-3060-12gb").notes == shipped.gpu("rtx-3060-12gb").notes is not None
    # an overlay's own notes are kept with its price
    write(overlay, "platforms.yaml", "schema_version: 1\nplatforms:\n  - id: am5-desktop\n    base_price_usd: 1299\n"
          + quote + "    notes: 'Parts: vendor bundle $1,299 = $1,299'\n")
    assert load_catalog(overlay).platform("am5-desktop").notes == "Parts: vendor bundle $1,299 = $1,299"


#: The zone ranges the shipped cloud.yaml notes gave as "Spot <low>-<high> across AZs" (aws-p6-b200-48xlarge:
#: "Spot 13.0338-21.0148; the low spot value is from local zone use1-atl2-az1 ...") before the range became the
#: field spot_usd_per_hour_range: every row that had one, and the figure each row keeps.
SHIPPED_SPOT_RANGES = {
    "aws-g4dn-xlarge": (0.2, 0.216), "aws-g5-xlarge": (0.4246, 0.4507), "aws-g5-4xlarge": (0.642, 0.7068),
    "aws-g5-12xlarge": (2.0796, 2.7804), "aws-g5-16xlarge": (1.141, 1.3117), "aws-g5-48xlarge": (4.5408, 7.0077),
    "aws-g6-xlarge": (0.2599, 0.2756), "aws-g6-4xlarge": (0.6637, 0.6933), "aws-g6-8xlarge": (0.9393, 0.9995),
    "aws-g6-12xlarge": (1.7552, 2.0968), "aws-g6-16xlarge": (1.0717, 1.2391), "aws-g6-48xlarge": (3.7289, 6.2789),
    "aws-g6e-xlarge": (0.9154, 1.1975), "aws-g6e-4xlarge": (1.032, 1.1536), "aws-g6e-8xlarge": (1.2495, 1.4119),
    "aws-g6e-12xlarge": (3.7887, 6.015), "aws-g6e-16xlarge": (1.4678, 1.8831),
    "aws-g6e-48xlarge": (11.6207, 19.9005), "aws-p4d-24xlarge": (2.4655, 8.1915),
    "aws-p4de-24xlarge": (8.6505, 9.9734), "aws-p5-48xlarge": (17.6289, 25.7522),
    "aws-p5en-48xlarge": (16.5551, 18.2492), "aws-p6-b200-48xlarge": (13.0338, 21.0148),
}


def test_shipped_spot_ranges_are_the_ones_the_notes_gave() -> None:
    cat = load_catalog()
    ranges = {i.id: i.spot_usd_per_hour_range for i in cat.instances if i.spot_usd_per_hour_range is not None}
    assert ranges == SHIPPED_SPOT_RANGES
    # every row keeps the low end, but aws-p6-b200-48xlarge, whose low end is a local zone's (its note says so)
    upper = {i.id for i in cat.instances if i.id in ranges and i.spot_usd_per_hour == ranges[i.id][1]}
    low = {i.id for i in cat.instances if i.id in ranges and i.spot_usd_per_hour == ranges[i.id][0]}
    assert upper == {"aws-p6-b200-48xlarge"} and low == set(ranges) - upper
    # no note still carries a range as text
    assert not [i.id for i in cat.instances if re.search(r"[Ss]pot \d+(\.\d+)?\s*-\s*\d", i.notes or "")]


# ----- published_parameters: the count from config must equal it ---------------------------------

#: Qwen/Qwen2.5-14B's config.json keys (the Hub file); 14,770,033,664 is the total its model card and the
#: Hub's safetensors metadata publish, which the planner's count reproduces exactly with intermediate_size 13824.
QWEN_14B = """schema_version: 1
models:
  - id: qwen2.5-14b
    hf_id: Qwen/Qwen2.5-14B
    source: https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json
    as_of: 2026-11-01
    published_parameters: 14770033664
    parameters_source: Hub safetensors total
    config:
      architectures: [Qwen2ForCausalLM]
      model_type: qwen2
      hidden_size: 5120
      intermediate_size: 13824
      num_attention_heads: 40
      num_key_value_heads: 8
      num_hidden_layers: 48
      vocab_size: 152064
      tie_word_embeddings: false
      hidden_act: silu
      max_position_embeddings: 131072
      rms_norm_eps: 1.0e-06
      rope_theta: 1000000.0
"""


def test_shipped_models_equal_their_published_parameters() -> None:
    # the catalog loads, so each count equals its published total; stated here for the reader
    models = [m for m in load_catalog().models if m.published_parameters is not None]
    assert len(models) >= 18  # tests/test_architecture.py lists the reference set
    for m in models:
        assert from_hf_config(m.config, m.id).parameters == m.published_parameters, m.id


def test_model_with_its_published_total_loads(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "models.yaml", QWEN_14B)
    assert load_catalog(overlay, base=TINY).model("qwen2.5-14b").published_parameters == 14_770_033_664


def test_model_config_typo_against_its_published_total(tmp_path: Path) -> None:
    """The review's typo: intermediate_size 1382 for 13824 counts 5,596,795,904 parameters (48 layers x 3 x
    5120 x 1382 in the MLPs instead of x 13824; the count is from planner.model.architecture), 9,173,237,760 fewer."""
    overlay = tmp_path / "mine"
    write(overlay, "models.yaml", QWEN_14B.replace("intermediate_size: 13824", "intermediate_size: 1382"))
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay, base=TINY)
    assert 48 * 3 * 5120 * (13824 - 1382) == 9_173_237_760
    assert str(excinfo.value) == (
        f"{overlay}/models.yaml:7: models[0] (qwen2.5-14b).published_parameters: published_parameters 14,770,033,664 "
        "is not the count from config, 5,596,795,904 parameters (-9,173,237,760). The two must be equal: check config "
        "against the model's config.json (a mistyped size such as intermediate_size or num_hidden_layers changes the "
        "count), or drop published_parameters if only a rounded total (such as '14.8B') is known.")


def test_overlay_config_that_changes_a_shipped_models_count(tmp_path: Path) -> None:
    """An overlay replacing llama-2-7b's config with 16 layers: 3,500,281,856 parameters (32000 x 4096 x 2
    embeddings + 16 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 4096) against the shipped 6,738,415,616."""
    overlay = tmp_path / "mine"
    config = ("    config: {model_type: llama, hidden_size: 4096, intermediate_size: 11008, num_attention_heads: 32, "
              "num_hidden_layers: 16, vocab_size: 32000}\n")
    write(overlay, "models.yaml", "schema_version: 1\nmodels:\n  - id: llama-2-7b\n" + config)
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay)
    assert 32000 * 4096 * 2 + 16 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 4096 == 3_500_281_856
    text = str(excinfo.value)
    assert text.startswith(f"{overlay}/models.yaml:4: models[0] (llama-2-7b).config: config counts 3,500,281,856 "
                           "parameters, but published_parameters (")
    assert f"{SHIPPED}/models.yaml:" in text  # the line of the shipped published_parameters
    assert text.endswith(") is 6,738,415,616 (-3,238,133,760). An overlay's config that "
                         "changes the count describes another model: give it an id of its own, or write "
                         "'published_parameters: null' in the overlay; if it is meant to be the same model, check "
                         "it against the model's config.json.")
    # clearing the published total lets the variant load
    write(overlay, "models.yaml", "schema_version: 1\nmodels:\n  - id: llama-2-7b\n" + config
          + "    published_parameters: null\n")
    cat = load_catalog(overlay)
    assert cat.model("llama-2-7b").published_parameters is None
    assert from_hf_config(cat.model("llama-2-7b").config).parameters == 3_500_281_856


def test_overlay_removing_a_referenced_gpu_names_the_removal(tmp_path: Path) -> None:
    overlay = tmp_path / "mine"
    write(overlay, "gpus.yaml", "schema_version: 1\ngpus:\n  - id: h100-sxm\n    remove: true\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(overlay, base=TINY)
    assert str(excinfo.value) == (
        f"{TINY}/platforms.yaml:59: platforms[2] (hgx).fixed_gpu: unknown GPU 'h100-sxm'. The overlay removes GPU "
        f"'h100-sxm' ({overlay}/gpus.yaml:4); 2 entries name it (platforms.yaml hgx, cloud.yaml test-8x-h100): "
        "remove them as well, or keep the GPU and leave it out of a plan with the scenario's "
        "constraints.excluded_gpus."
    )


def test_scenario_naming_a_gpu_the_overlay_removed_says_so(tmp_path: Path) -> None:
    from planner.core.errors import ScenarioError
    from planner.solve.scenario import scenario_from_mapping

    overlay = tmp_path / "mine"
    write(overlay, "gpus.yaml", "schema_version: 1\ngpus:\n  - id: rtx-4090\n    remove: true\n")
    cat = load_catalog(overlay, base=TINY)
    assert cat.removed == {"rtx-4090": f"{overlay}/gpus.yaml:4"}
    data = {"workloads": [{"name": "w", "model": "tiny-llama", "task": "infer"}],
            "constraints": {"allowed_gpus": ["rtx-4090"]}}
    with pytest.raises(ScenarioError) as excinfo:
        scenario_from_mapping(data, cat, file="s.yaml")
    msg = str(excinfo.value)
    assert msg.endswith(f"constraints.allowed_gpus: unknown GPU 'rtx-4090'. The catalog overlay removes it "
                        f"({overlay}/gpus.yaml:4): drop the removal there, or the id here.")


def test_overlay_directory_missing(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(tmp_path / "nope", base=TINY)
    assert str(excinfo.value) == (f"{tmp_path / 'nope'}: no such catalog directory. The catalog overlay (--catalog "
                                  "DIR; catalog= in Python) is a directory holding overlay files such as gpus.yaml "
                                  "(catalog/README.md).")


def test_overlay_is_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, "gpus.yaml", "schema_version: 1\ngpus: []\n")
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(path, base=TINY)
    assert str(excinfo.value) == (
        f"{path}: is a file, not a directory. The catalog overlay (--catalog DIR; catalog= in Python) is a directory "
        "holding overlay files such as gpus.yaml (catalog/README.md)."
    )


def test_catalog_is_frozen() -> None:
    cat = load_catalog(base=TINY)
    with pytest.raises(AttributeError):
        cat.gpus = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        cat.gpus[0].price_usd = 1.0  # type: ignore[misc]
