"""Tiny synthetic catalogs for the scenario, candidate and solver tests (values are placeholders).

Every builder returns the frozen catalog records directly (no YAML), so a test states exactly
the numbers it depends on. ``tiny_catalog`` assembles a :class:`planner.catalog.loader.Catalog`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from planner.catalog.gpus import Gpu
from planner.catalog.loader import Catalog, SourceRef
from planner.catalog.models import ModelEntry
from planner.catalog.network import Nic, Switch
from planner.catalog.platforms import Platform, SlotGroup
from planner.catalog.ram import Dimm
from planner.core.units import GiB

#: A small Llama: h 64, 2 layers, 8 heads, 2 KV heads, f 160, V 100 (95,040 parameters).
TINY_CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
               "num_key_value_heads": 2, "intermediate_size": 160, "vocab_size": 100,
               "tie_word_embeddings": False, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
#: The same shape with 6 attention heads and 6 KV heads (tensor parallel 1, 2, 3, 6 only).
SIX_HEADS_CONFIG = {**TINY_CONFIG, "hidden_size": 48, "num_attention_heads": 6, "num_key_value_heads": 6}


def gpu(id: str = "card", *, memory_gib: float = 4, usable: int | None = None, tdp_w: int = 300, slot_width: int = 2,
        form_factor: str = "pcie", price_usd: float | None = 1000.0, bf16: bool = True, fp8: bool = False,
        int8: bool = True, pcie_lanes: int = 16, vendor: str = "nvidia", memory_bytes: int | None = None,
        cuda_total: int | None | str = "usable", cooling: str | None = None) -> Gpu:
    """A test card. Its CUDA total (what the solver holds needs against) is ``usable`` unless
    ``cuda_total`` says otherwise (None: derived from ``usable`` as for a catalog card without
    ``memory_cuda_total``), so capacity arithmetic in tests reads off ``usable`` directly."""
    mem = memory_bytes if memory_bytes is not None else int(memory_gib * GiB)
    usable_bytes = usable if usable is not None else mem
    return Gpu(id=id, name=f"Test {id}", vendor=vendor, segment="datacenter", architecture="test",
               memory_cuda_total_bytes=usable_bytes if cuda_total == "usable" else cuda_total,
               memory_bytes=mem, memory_usable_bytes=usable_bytes,
               memory_bandwidth_bytes_per_s=1e12, bf16_tflops=100.0, bf16=bf16, fp8=fp8, int8=int8, pcie_gen=4,
               pcie_lanes=pcie_lanes, tdp_w=tdp_w, form_factor=form_factor, source="test", as_of="2026-01-01",
               slot_width=slot_width if form_factor == "pcie" else 0, price_usd=price_usd,
               price_kind="estimate" if price_usd is not None else None, cooling=cooling)


def platform(id: str = "box", *, base_price_usd: float = 2000.0, memory_kind: str = "ddr5-rdimm", channels: int = 2,
             dimm_slots: int = 4, max_memory_gib: float = 1024, gpu_lanes: int = 128,
             slots: tuple[tuple[int, ...], ...] = ((3, 4),), max_gpus: int = 4, psu_w: int = 5000,
             platform_w: int = 300, form_factors: tuple[str, ...] = ("pcie",), fixed_gpu: str | None = None,
             fixed_gpu_count: int | None = None, gpu_cooling: tuple[str, ...] | None = None,
             nic_slots: int = 0) -> Platform:
    return Platform(id=id, name=f"Test {id}", cpu="test", base_price_usd=base_price_usd, price_kind="estimate",
                    memory_kind=memory_kind, memory_channels=channels, dimm_slots=dimm_slots,
                    max_memory_bytes=int(max_memory_gib * GiB), pcie_gen=4, gpu_lanes=gpu_lanes,
                    gpu_slots=tuple(SlotGroup(*g) for g in slots), max_gpus=max_gpus, psu_w=psu_w,
                    platform_w=platform_w, form_factors=form_factors, source="test", as_of="2026-01-01",
                    fixed_gpu=fixed_gpu, fixed_gpu_count=fixed_gpu_count, gpu_cooling=gpu_cooling,
                    nic_slots=nic_slots)


def dimm(id: str = "dimm-16g", *, size_gib: float = 16, price_usd: float = 100.0, kind: str = "ddr5-rdimm") -> Dimm:
    return Dimm(id=id, kind=kind, size_bytes=int(size_gib * GiB), speed_mts=4800, price_usd=price_usd,
                price_kind="estimate", source="test", as_of="2026-01-01")


def nic(id: str = "nic", *, kind: str = "infiniband", gbps: float = 400, price_usd: float = 1000.0,
        cable_price_usd: float = 100.0, pcie_lanes: int = 16, tdp_w: int = 25) -> Nic:
    return Nic(id=id, kind=kind, rate_bytes_per_s=gbps * 1e9 / 8, price_usd=price_usd, price_kind="estimate",
               cable_price_usd=cable_price_usd, source="test", as_of="2026-01-01", pcie_lanes=pcie_lanes,
               tdp_w=tdp_w)


def switch(id: str = "switch", *, kind: str = "infiniband", gbps: float = 400, ports: int = 32,
           price_usd: float = 10000.0) -> Switch:
    return Switch(id=id, kind=kind, rate_bytes_per_s=gbps * 1e9 / 8, ports=ports, price_usd=price_usd,
                  price_kind="estimate", source="test", as_of="2026-01-01")


def model(id: str = "tiny", config: dict[str, Any] | None = None) -> ModelEntry:
    return ModelEntry(id=id, hf_id=f"test/{id}", config=dict(config or TINY_CONFIG), source="test",
                      as_of="2026-01-01")


def tiny_catalog(*, gpus=(), platforms=(), dimms=None, nics=(), switches=(), models=None) -> Catalog:
    dimms = (dimm(),) if dimms is None else tuple(dimms)
    models = (model(), model("six", SIX_HEADS_CONFIG)) if models is None else tuple(models)
    entries = [*gpus, *dimms, *platforms, *nics, *switches, *models]
    sources = tuple(SourceRef("test.yaml", e.id, e.source, e.as_of) for e in entries)
    return Catalog(schema_version=1, gpus=tuple(gpus), dimms=dimms, platforms=tuple(platforms), nics=tuple(nics),
                   switches=tuple(switches), models=models, sources=sources, files=("test.yaml",))


def infer_workload(**kw: Any) -> dict[str, Any]:
    """A small inference workload mapping (tiny model, fp16, 256 tokens, 1 user, tp 1)."""
    return {"name": "serve", "model": "tiny", "task": "infer", "weights": "fp16", "kv_dtype": "fp16",
            "context": 256, "concurrency": 1, "tp": 1, **kw}


def train_workload(**kw: Any) -> dict[str, Any]:
    """A small training workload mapping (tiny model, full fine-tune, mixed-fp16, 1 GPU)."""
    return {"name": "train", "model": "tiny", "task": "train", "method": "full", "recipe": "mixed-fp16",
            "micro_batch": 1, "seq_len": 128, "gpus": 1, **kw}


def scen(cat, *workloads, extras=(), **constraints):
    """A scenario over the tiny catalog ``cat``: workloads, constraints as keyword arguments, extras."""
    from planner.solve.scenario import scenario_from_mapping

    return scenario_from_mapping({"workloads": list(workloads), "constraints": constraints,
                                  "extras": list(extras)}, cat)


#: The shipped scenarios folder.
SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def shipped_scenario(name: str) -> dict:
    """The shipped scenario file ``name`` (under scenarios/) as the mapping YAML reads."""
    return yaml.safe_load((SCENARIOS / name).read_text())
