"""GPU models (``gpus.yaml`` ``gpus:``): the record, its keys, the rules between them.

A GPU's memory figures describe one card together (``memory`` >= ``memory_usable`` >=
``memory_cuda_total``; an overlay that changes one restates the others), a PCIe card has a
``slot_width`` and a module on a baseboard has none, and a purchase price comes with its
``price_kind``. :func:`cuda_total_from_usable` gives what a card offers to processes.
Importing this module does no work and it keeps no state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.core.fields import Entry
from planner.core.units import GB, MiB, TiB
from planner.catalog.pcie import PCIE_LANE_COUNTS, check_gen, generation_numbers
from planner.catalog.schema import (MAX_SLOT_WIDTH, MIN_MEMORY_BYTES, PRICED, CatalogWarning, Field, Kind, Merged,
                                    Parsed, check_priced, later, price_extra, read_bool, read_choice, read_fraction,
                                    read_int, read_int_choice, read_positive, read_positive_int, read_rate,
                                    read_label, read_size, read_text)
from planner.core.errors import did_you_mean

GPU_VENDORS = ("nvidia", "amd", "intel")
GPU_SEGMENTS = ("consumer", "workstation", "datacenter")
FORM_FACTORS = ("pcie", "sxm", "oam")
#: How a GPU is cooled (``Gpu.cooling``) and which kinds a chassis cools (``Platform.gpu_cooling``):
#: ``open-air`` axial fans that blow into the case (GeForce cards), ``blower`` a radial fan that
#: exhausts through the bracket (workstation cards), ``passive`` a heatsink without a fan that
#: relies on the chassis' front-to-back airflow (data-centre PCIe cards, SXM/OAM modules).
COOLING_KINDS = ("open-air", "blower", "passive")

#: Upper bounds beyond which a value is taken for a typo (a wrong unit, an extra digit).
MAX_GPU_MEMORY_BYTES = 4 * TiB
MAX_GPU_BANDWIDTH = 100_000 * GB  # bytes/s (100 TB/s)
MAX_GPU_INTERCONNECT = 10_000 * GB  # bytes/s, NVLink / fabric per GPU
MAX_TFLOPS = 100_000.0
#: Lower bounds below which a figure is taken for a typo or a wrong unit (1e-300 TFLOPS would print times of
#: 300 digits): round figures below the slowest CUDA device NVIDIA sells, the Jetson Nano (128-core Maxwell
#: GPU: 472 GFLOPS FP16 and 25.6 GB/s LPDDR4, NVIDIA's Jetson Nano Developer Kit page,
#: https://developer.nvidia.com/embedded/jetson-nano-developer-kit); the catalog's smallest figures are far
#: above them (rtx-3060-12gb 25.5 TFLOPS bf16, rtx-4060-ti-16gb 288 GB/s, catalog/gpus.yaml).
MIN_TFLOPS = 0.1
MIN_GPU_BANDWIDTH = 1 * GB  # bytes/s
#: The smallest ``mfu_scale``: a tenth of the NVIDIA stack's MFU. The catalog's smallest is 0.5 (mi300x,
#: mi325x, mi355x: ROCm's measured share, with its source in catalog/gpus.yaml); a stack ten times slower than
#: the reference is a wrong figure, not a software factor.
MIN_MFU_SCALE = 0.1
MAX_TDP_W = 5_000

#: nvidia-smi's total less what CUDA reports as the total (``cudaMemGetInfo``): memory the driver
#: keeps for itself, which no process can allocate. Assumed 430 MiB where the catalog gives no
#: ``memory_cuda_total``: an H100 80GB HBM3 shows 81,559 MiB in nvidia-smi and vLLM logs
#: ``total_gpu_memory 79.22GiB`` (vLLM PR #10511), 0.43 GiB less; a 24 GB A10-class card with ECC
#: shows 23,028 MiB and logs 22.07 GiB (0.42 GiB less); an RTX 3090 (24,576 MiB) logs 23.58 GiB
#: (vLLM PR #14447, 0.42 GiB less).
DRIVER_RESERVED_BYTES = 430 * MiB

#: A CUDA compute capability as NVIDIA writes it, "major.minor": a major of 1 to 19 without a leading zero and a
#: one-digit minor ("7.5", "8.6", "12.0"; NVIDIA, "CUDA GPU Compute Capability",
#: https://developer.nvidia.com/cuda-gpus). "08.6", "8.60" or "8.06" are refused with the canonical form.
_COMPUTE_CAPABILITY = re.compile(r"^(?:[1-9]|1[0-9])\.[0-9]$")
#: The compute capabilities of each NVIDIA architecture the speed model knows (NVIDIA, "CUDA GPU Compute
#: Capability", https://developer.nvidia.com/cuda-gpus, read 2026-12: Turing 7.5 (T4, RTX 20); Ampere 8.0 (A100),
#: 8.6 (A10, A40, RTX 30, RTX A), 8.7 (Jetson Orin); Ada 8.9 (L4, L40S, RTX 40); Hopper 9.0 (H100, H200);
#: Blackwell 10.0 (B200), 10.3 (B300), 11.0 (Jetson Thor), 12.0 (RTX 50, RTX PRO Blackwell), 12.1 (GB10)). A
#: capability of another architecture is refused: a check of what a card runs (FlashAttention-2 needs 8.0 or
#: more) would read it instead of the card's (h14b minor b).
CAPABILITIES_BY_ARCHITECTURE = {"turing": ("7.5",), "ampere": ("8.0", "8.6", "8.7"), "ada": ("8.9",),
                                "hopper": ("9.0",), "blackwell": ("10.0", "10.3", "11.0", "12.0", "12.1")}


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU model (``gpus.yaml``).

    Attributes:
        memory_bytes: memory as marketed, in bytes (a "24 GB" card carries 24 GiB).
        memory_usable_bytes: memory the driver reports, in bytes (<= ``memory_bytes``).
        memory_cuda_total_bytes: total ``cudaMemGetInfo`` reports (nvidia-smi's total less the
            driver's reservation), when published; vLLM's budget is a fraction of it.
        memory_bandwidth_bytes_per_s: memory bandwidth, bytes per second.
        bf16_tflops: dense BF16/FP16 tensor TFLOPS with FP32 accumulate (GeForce: half rate).
        fp16_fp16acc_tflops, fp8_tflops: dense TFLOPS, when published.
        int8_tops: dense INT8 tera-operations per second, when published.
        pcie_gen, pcie_lanes: the host link.
        interconnect_bytes_per_s: NVLink / fabric bandwidth per GPU, bytes/s (0.0 when none,
            None when the catalog does not say).
        tdp_w: board power, watts.
        slot_width: slots a PCIe card occupies; 0 or None for SXM/OAM modules.
        price_usd: one unit, USD: the price a plan pays (:attr:`price`; None when the catalog gives
            no purchase price of a new unit).
        prices: every dated price the catalog gives (planner.catalog.prices; a single ``price_usd``
            is one item); ``price``: the one chosen (the scenario's price mode chooses again).
        vendor_bf16_tflops: the vendor's dense 16-bit tensor figure (datasheet, sparse figures
            halved), which ``bf16_tflops`` may not exceed (``planner catalog check``).
        discontinued: when and by whose word the part went out of production (text, with its
            source), or None while it is made. ``price: street`` does not pay such a part's launch
            list price (planner.catalog.prices.select_price): only a dated new street price, a quote
            or an estimate, else (``used_ok``) a used price.
        mfu_scale: factor on the default MFU for this card's software stack (1.0: the NVIDIA
            CUDA stack the defaults come from; below 1 where published measurements show a
            lower achieved share of the datasheet TFLOPS). Times only; memory is unaffected.
    """

    id: str
    name: str
    vendor: str
    segment: str
    architecture: str
    memory_bytes: int
    memory_usable_bytes: int
    memory_bandwidth_bytes_per_s: float
    bf16_tflops: float
    bf16: bool
    fp8: bool
    int8: bool
    pcie_gen: int
    pcie_lanes: int
    tdp_w: int
    form_factor: str
    source: str
    as_of: str
    compute_capability: str | None = None
    fp16_fp16acc_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tops: float | None = None
    interconnect_bytes_per_s: float | None = None
    slot_width: int | None = None
    price_usd: float | None = None
    price_kind: str | None = None
    mfu_scale: float = 1.0
    memory_cuda_total_bytes: int | None = None
    cooling: str | None = None
    vendor_bf16_tflops: float | None = None
    notes: str | None = None
    verification: str | None = None
    prices: tuple[Any, ...] = ()
    price: Any = None
    discontinued: str | None = None
    mpn: str | None = None
    seller: str | None = None
    lead_time_days: int | None = None
    warranty_months: int | None = None
    quote_valid_until: str | None = None

    @property
    def quoted_link_bytes_per_s(self) -> float:
        """The NVLink / fabric bandwidth a quoted machine of these cards has, bytes/s both directions:
        the catalog's ``interconnect`` for SXM/OAM modules (the baseboard's fabric is part of the
        platform); 0 for PCIe cards, whose NVLink needs a bridge that no catalog platform or quote
        includes (catalog/gpus.yaml notes: "2-way NVLink bridge", "only with NVLink bridges"), so
        the speed model times them over PCIe."""
        if str(self.form_factor).lower() in ("sxm", "oam"):
            return float(self.interconnect_bytes_per_s or 0.0)
        return 0.0

    @property
    def cuda_total_bytes(self) -> int:
        """What one card offers to processes, in bytes: CUDA's total (``cudaMemGetInfo``), the
        catalog's ``memory_cuda_total`` or else ``memory_usable`` less :data:`DRIVER_RESERVED_BYTES`
        (NVIDIA cards; other vendors' ``memory_usable`` is taken as it is)."""
        return cuda_total_from_usable(self.memory_usable_bytes, self)


def cuda_total_from_usable(usable_bytes: int, gpu: Gpu) -> int:
    """What a card of model ``gpu`` whose driver reports ``usable_bytes`` offers to processes, in bytes.

    The catalog's ``memory_cuda_total`` when given and ``usable_bytes`` is the GPU's own
    ``memory_usable``; else, for NVIDIA cards, ``usable_bytes`` less :data:`DRIVER_RESERVED_BYTES`
    (a cloud instance that reports its own per-GPU figure gets the assumption too); other vendors'
    figures are taken as they are (no published reservation to subtract).
    """
    if gpu.memory_cuda_total_bytes and usable_bytes == gpu.memory_usable_bytes:
        return int(gpu.memory_cuda_total_bytes)
    if gpu.vendor != "nvidia":
        return int(usable_bytes)
    return max(int(usable_bytes) - DRIVER_RESERVED_BYTES, 0)


def _compute_capability(e: Entry, k: str) -> str:
    value = e.raw(k)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise e.error(f"must be a quoted text such as \"8.9\", not {value!r}", k,
                      "Quote it: YAML reads 8.10 as the number 8.1.")
    value = e.str(k)
    if not _COMPUTE_CAPABILITY.match(value):
        loose = re.fullmatch(r"\s*0*([0-9]{1,2})\.([0-9])0*\s*", value)
        hint = (f"Write it as NVIDIA does, major.minor without leading or trailing zeros: {k}: \"{loose[1]}.{loose[2]}\"."
                if loose and loose[1] != "0" else "Write it as NVIDIA does, major.minor (developer.nvidia.com/cuda-gpus).")
        raise e.error(f"{value!r} is not a compute capability such as \"8.9\"", k, hint)
    return value


def _check_capability(p: Parsed) -> None:
    """A GPU's ``compute_capability`` is one of its architecture's (:data:`CAPABILITIES_BY_ARCHITECTURE`), where the
    catalog knows them; said at the key the entry's latest file set."""
    v = p.values
    cc, arch = v.get("compute_capability"), str(v.get("architecture", "")).lower()
    known = CAPABILITIES_BY_ARCHITECTURE.get(arch)
    if cc is None or known is None or cc in known:
        return
    other = next((a for a, ccs in CAPABILITIES_BY_ARCHITECTURE.items() if cc in ccs), None)
    key = later(p, "compute_capability", "architecture")
    raise p.err(f"compute_capability {cc!r} is not one of {arch}'s ({', '.join(known)})"
                + (f"; it is {other}'s" if other else ""), key,
                "Write the card's compute capability as NVIDIA lists it (developer.nvidia.com/cuda-gpus), or correct "
                "the architecture.")


_TFLOPS = read_positive(MAX_TFLOPS, "TFLOPS", "GPU", lo=MIN_TFLOPS)


def _mfu_scale(e: Entry, k: str) -> float:
    """A factor more than 0 and at most 1, and at least :data:`MIN_MFU_SCALE`."""
    value = read_fraction(e, k)
    if value < MIN_MFU_SCALE:
        raise e.error(f"{e.raw(k)!r} is less than any real stack's share of the default MFU (at least "
                      f"{MIN_MFU_SCALE:g})", k, "Check for a missing digit: the catalog's AMD cards use 0.5.")
    return value

#: The hint for a GPU memory figure written in decimal units (:func:`~planner.catalog.schema.read_size`'s
#: ``binary``), refused: a '24 GB' card carries 24 GiB (GDDR/HBM devices are binary-sized), and nvidia-smi and
#: torch.cuda.mem_get_info report MiB and bytes. A '12 GB' memory with '12 GB' usable would load as a card 7 %
#: smaller (h15b finding 1), so every figure is refused, not only one that makes usable exceed memory.
GPU_BINARY = "GPU memory is binary-sized (a '24 GB' card carries 24 GiB; nvidia-smi reports MiB)"

#: ``gpus.yaml`` keys besides the common ones.
GPU_FIELDS: dict[str, Field] = {
    "name": Field(read_label),
    "vendor": Field(read_choice(GPU_VENDORS)),
    "segment": Field(read_choice(GPU_SEGMENTS)),
    "architecture": Field(lambda e, k: read_architecture(e, k)),
    "compute_capability": Field(_compute_capability, required=False),
    "memory": Field(read_size(MAX_GPU_MEMORY_BYTES, "GPU memory", lo=MIN_MEMORY_BYTES, binary=GPU_BINARY),
                    attr="memory_bytes"),
    "memory_usable": Field(read_size(MAX_GPU_MEMORY_BYTES, "GPU memory", lo=MIN_MEMORY_BYTES, binary=GPU_BINARY),
                           attr="memory_usable_bytes"),
    "memory_bandwidth": Field(read_rate(MAX_GPU_BANDWIDTH, "GPU memory bandwidth", lo=MIN_GPU_BANDWIDTH),
                              attr="memory_bandwidth_bytes_per_s"),
    "bf16_tflops": Field(_TFLOPS),
    "fp16_fp16acc_tflops": Field(_TFLOPS, required=False),
    "fp8_tflops": Field(_TFLOPS, required=False),
    "int8_tops": Field(read_positive(MAX_TFLOPS, "TOPS", "GPU", lo=MIN_TFLOPS), required=False),
    "bf16": Field(read_bool),
    "fp8": Field(read_bool),
    "int8": Field(read_bool),
    "pcie_gen": Field(read_int(1, 10)),
    "pcie_lanes": Field(read_int_choice(PCIE_LANE_COUNTS)),
    "interconnect": Field(read_rate(MAX_GPU_INTERCONNECT, "GPU interconnect", allow_zero=True), required=False,
                          attr="interconnect_bytes_per_s"),
    "tdp_w": Field(read_positive_int(MAX_TDP_W, "W", "GPU board power")),
    "slot_width": Field(read_int(0, MAX_SLOT_WIDTH), required=False),
    "form_factor": Field(read_choice(FORM_FACTORS)),
    **PRICED,
    "vendor_bf16_tflops": Field(_TFLOPS, required=False),
    "mfu_scale": Field(_mfu_scale, required=False),
    "memory_cuda_total": Field(read_size(MAX_GPU_MEMORY_BYTES, "GPU memory", lo=MIN_MEMORY_BYTES,
                                         binary=GPU_BINARY), required=False, attr="memory_cuda_total_bytes"),
    "cooling": Field(read_choice(COOLING_KINDS), required=False),
    "discontinued": Field(read_text, required=False),
}


def _check_gpu(p: Parsed) -> None:
    """Rules between the keys of one GPU (after the overlay is merged)."""
    v = p.values
    check_priced(p, required=False)
    _check_capability(p)
    if v["memory_usable"] > v["memory"]:
        raise p.err("memory_usable is more than memory", "memory_usable",
                    "memory_usable is what the driver reports, at most the marketed memory.")
    if v.get("memory_cuda_total", 0) > v["memory_usable"]:
        raise p.err("memory_cuda_total is more than memory_usable", "memory_cuda_total",
                    "memory_cuda_total is what CUDA reports (torch.cuda.mem_get_info()[1]), less than the "
                    "nvidia-smi total by the driver's reservation.")
    if v["form_factor"] == "pcie" and not v.get("slot_width"):
        key = "slot_width" if "slot_width" in v else "form_factor"
        raise p.err("a PCIe card needs a slot_width of 1 or more (slots it occupies)", key)
    if v["form_factor"] != "pcie" and v.get("slot_width"):
        raise p.err(f"an {v['form_factor']} module sits on its baseboard, not in slots", "slot_width",
                    "Write slot_width: 0 or leave it out.")


def _check_gpu_overlay(e: Entry, shipped: Mapping[str, Any]) -> None:
    """An overlay entry that changes a shipped GPU: the memory figures describe one card together (a
    figure restated as shipped changes nothing and needs no other)."""
    changed = {k for k in ("memory", "memory_usable") if k in e.data and e.size(k) != shipped.get(k)}
    if "memory" in changed and "memory_usable" not in e.data:
        raise e.error("changes memory but not memory_usable (the nvidia-smi total of the shipped card)",
                      "memory", "Give memory_usable for this card too (nvidia-smi's total).")
    if changed and "memory_cuda_total" not in e.data and shipped.get("memory_cuda_total") is not None:
        key = "memory_usable" if "memory_usable" in changed else "memory"
        raise e.error(f"changes {key} but not memory_cuda_total (the shipped card's CUDA total)", key,
                      "Give memory_cuda_total for this card too, or write 'memory_cuda_total: null' to "
                      "derive it (memory_usable less 430 MiB).")


def _check_gpu_refs(m: Merged) -> None:
    """Every GPU's ``pcie_gen`` is in pcie.yaml."""
    gens = generation_numbers(m)
    for p in m.entries["gpus"].values():
        check_gen(p, gens)


#: The GPU architectures the speed model has published figures for (planner.speed.constants GEMM_EFFICIENCY
#: and ATTENTION_EFFICIENCY are keyed by these; tests/test_safety11.py checks the two agree). Another name
#: loads (a new generation an overlay adds), timed with the speed model's figures for an unknown one, and said.
KNOWN_ARCHITECTURES = ("turing", "ampere", "ada", "hopper", "blackwell", "cdna3", "cdna4", "gaudi2", "gaudi3")


def read_architecture(e: Entry, k: str) -> str:
    """A GPU's ``architecture``: a text, compared with :data:`KNOWN_ARCHITECTURES` regardless of case ('CDNA3').
    One that is a known name written another way, with a blank, '-', '_' or '.' or in full-width letters ('cdna3 ',
    'CDNA 3', 'cdna-3'), is refused with the name meant: the speed model would time the card as an unknown
    architecture without a word. Another text (a new generation) loads, with a warning
    (:func:`_architecture_warnings`); one with blanks at its ends is refused.

    Raises:
        CatalogError: naming the entry and key, with the spelling to write."""
    import unicodedata

    value = read_label(e, k, edges=False)  # blanks at an end: refused below with the name meant
    if value.lower() in KNOWN_ARCHITECTURES:
        return value
    plain = re.sub(r"[\s\-_.]", "", unicodedata.normalize("NFKC", value)).lower()
    if plain in KNOWN_ARCHITECTURES:
        raise e.error(f"architecture {value!r} is {plain!r} written another way, which the speed model would not "
                      "recognise: it would time the GPU with the figures for an unknown architecture", k,
                      f"Did you mean {plain!r}? Write architecture: {plain}.")
    if value != value.strip():
        raise e.error(f"architecture {value!r} begins or ends with a blank", k,
                      f"Write architecture: {value.strip()!r} (the known ones: {', '.join(KNOWN_ARCHITECTURES)}).")
    return value


def _architecture_warnings(p: Parsed) -> list[CatalogWarning]:
    """A GPU whose ``architecture`` is none of :data:`KNOWN_ARCHITECTURES` ('banana', 'ada-lovelace'): it loads,
    but its compute is timed with the speed model's figures for an unknown architecture, which may be a typo."""
    arch = str(p.values.get("architecture", ""))
    if arch.lower() in KNOWN_ARCHITECTURES:
        return []
    at = p.origin.get("architecture", p.entry)
    line = at.line_of("architecture")
    where = f"{at.file}:{line}" if line else (at.file or "")
    close = did_you_mean(arch.lower(), KNOWN_ARCHITECTURES)
    text = (f"{where}: {at.key_path('architecture')}: architecture {arch!r} is none the speed model has figures for "
            f"({', '.join(KNOWN_ARCHITECTURES)}), so GPU {p.id!r} is timed with those for an unknown architecture"
            + (f"; {close}" if close and close.startswith("Did") else ""))
    return [CatalogWarning("gpus", p.id, text)]


GPUS = Kind("gpus", Gpu, GPU_FIELDS, check=_check_gpu, check_overlay=_check_gpu_overlay,
            check_merged=_check_gpu_refs, extra=price_extra(), warnings=_architecture_warnings)
