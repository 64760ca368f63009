"""The names NVIDIA's driver gives the catalog's GPUs (what nvidia-smi and ``torch.cuda.get_device_name()``
print), mapped to catalog ids: a calibration applies by them (planner.validate.calibrate), and an unknown GPU id
given as such a name gets its id as the hint (``--gpu 'NVIDIA H100 80GB HBM3'``: 'h100-sxm').

A table and pure functions: nothing is computed at import.
"""

from __future__ import annotations

import re
from typing import Any


#: The names ``torch.cuda.get_device_name()`` reports (the CUDA driver's product names, cudaDeviceProp.name)
#: for the catalog's NVIDIA GPUs, to their catalog ids. A calibration applies to the exact model only:
#: 'NVIDIA A10' is not 'NVIDIA A100-SXM4-80GB'. Source: the product-name table of the NVIDIA open GPU
#: kernel modules README, driver 595.45.04 (github.com/NVIDIA/open-gpu-kernel-modules, commit
#: df1c9a3de2be4b130f4fc7680f7198193d8ac6ad), which lists each product name with its PCI device id.
#: The 8 GB RTX 3060 and RTX 4060 Ti report the same names as the 12 GB and 16 GB cards the catalog holds.
#: Drivers before R470 reported GeForce and Tesla names without 'NVIDIA ' (device_key ignores it).
TORCH_DEVICE_NAMES: dict[str, str] = {
    "NVIDIA GeForce RTX 3060": "rtx-3060-12gb",            # 2487, 2503, 2504, 2544, 24C7
    "NVIDIA GeForce RTX 3090": "rtx-3090",                 # 2204
    "NVIDIA GeForce RTX 4060 Ti": "rtx-4060-ti-16gb",      # 2803, 2805
    "NVIDIA GeForce RTX 4070 Ti SUPER": "rtx-4070-ti-super",  # 2705
    "NVIDIA GeForce RTX 4080": "rtx-4080",                 # 2704
    "NVIDIA GeForce RTX 4090": "rtx-4090",                 # 2684
    "NVIDIA GeForce RTX 5090": "rtx-5090",                 # 2B85
    "NVIDIA RTX A4000": "rtx-a4000",                       # 24B0
    "NVIDIA RTX A5000": "rtx-a5000",                       # 2231
    "NVIDIA RTX A6000": "rtx-a6000",                       # 2230
    "NVIDIA RTX 6000 Ada Generation": "rtx-6000-ada",      # 26B1
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "rtx-pro-6000-blackwell",  # 2BB1
    "Tesla T4": "t4",                                      # 1EB8
    "NVIDIA L4": "l4",                                     # 27B8
    "NVIDIA A10": "a10",                                   # 2236
    "NVIDIA A10G": "a10g",                                 # 2237
    "NVIDIA A40": "a40",                                   # 2235
    "NVIDIA L40S": "l40s",                                 # 26B9
    "NVIDIA A100-PCIE-40GB": "a100-40gb-pcie",             # 20F1
    "NVIDIA A100 80GB PCIe": "a100-80gb-pcie",             # 20B5
    "NVIDIA A100-SXM4-40GB": "a100-40gb-sxm",              # 20B0
    "NVIDIA A100-SXM4-80GB": "a100-80gb-sxm",              # 20B2
    "NVIDIA H100 PCIe": "h100-pcie",                       # 2331
    "NVIDIA H100 80GB HBM3": "h100-sxm",                   # 2330 (SXM5)
    "NVIDIA H100 NVL": "h100-nvl",                         # 2321
    "NVIDIA H200": "h200-sxm",                             # 2335 (SXM; the H200 NVL reports 'NVIDIA H200 NVL')
    "NVIDIA B200": "b200",                                 # 2901
}


def device_key(name: str) -> str:
    """A GPU model's name for exact comparison: case and runs of spaces ignored, and a leading
    'NVIDIA ' (which drivers before R470 left out of GeForce and Tesla names)."""
    key = " ".join(str(name).split()).casefold()
    return key[len("nvidia "):] if key.startswith("nvidia ") else key


def catalog_id_for_device(device_name: str) -> str | None:
    """The catalog GPU id of a name ``torch.cuda.get_device_name()`` reports, or None when the
    table (:data:`TORCH_DEVICE_NAMES`) does not list it."""
    key = device_key(device_name)
    return next((gpu for name, gpu in TORCH_DEVICE_NAMES.items() if device_key(name) == key), None)


#: Words a driver name may begin with that no catalog id holds (drivers before R470 left 'NVIDIA' out).
_MAKER_WORDS = frozenset({"nvidia", "geforce", "tesla"})


def _name_words(name: str) -> list[str]:
    """A driver name's words in lower case, split at blanks and '-', without 'NVIDIA', 'GeForce', 'Tesla'."""
    return [w for w in re.split(r"[\s-]+", str(name).casefold()) if w and w not in _MAKER_WORDS]


def device_name_hint(name: str, ids: Any) -> str | None:
    """A "Did you mean" hint for a GPU id given as the name nvidia-smi and ``torch.cuda.get_device_name()``
    print ('NVIDIA H100 80GB HBM3' -> 'h100-sxm'), from :data:`TORCH_DEVICE_NAMES`, for a name of two words
    or more (one word, 'L4', is left to the usual close matches). A name that begins such names ('H100 80GB',
    'NVIDIA A100') gets their ids, up to four, in table order. Only ids in ``ids`` (the catalog's GPU ids) are
    offered. None when nothing matches (h26b M2).
    """
    known = set(ids)
    if len(str(name).split()) < 2:  # 'L4', 'A10', 'B200': an id in another case; the usual close matches say so
        return None
    exact = catalog_id_for_device(name)
    if exact is not None:
        found = [exact] if exact in known else []
        which = "That is planner's id for the GPU nvidia-smi and torch call by that name."
    else:
        words = _name_words(name)
        if not any(ch.isdigit() for ch in "".join(words)):
            return None
        found = list(dict.fromkeys(g for device, g in TORCH_DEVICE_NAMES.items()
                                   if _name_words(device)[:len(words)] == words and g in known))[:4]
        which = ("That is planner's id for the GPU whose nvidia-smi and torch name begins with it." if len(found) == 1
                 else "Those are planner's ids for the GPUs whose nvidia-smi and torch names begin with it.")
    if not found:
        return None
    return "Did you mean " + " or ".join(repr(g) for g in found) + "? " + which
