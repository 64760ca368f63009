"""Cloud GPU names -> catalog GPU ids: the table the SkyPilot importer maps accelerators with.

SkyPilot's catalog files (github.com/skypilot-org/skypilot-catalog ``catalogs/v8/<cloud>/vms.csv``)
name an instance's accelerator in ``AcceleratorName`` in each cloud's own spelling, and the
``GpuInfo`` column (a Python-literal dict) gives the board's own name (``'A100 PCIe'``, ``'H100 SXM'``).
:data:`GPU_ALIASES` maps every spelling seen in those files to a ``gpus.yaml`` id; a few names
stand for two boards and are told apart by provider and ``GpuInfo`` (:func:`catalog_gpu_id`).
GCP rows carry no accelerator on the VM row: :data:`GCP_MACHINE_GPUS` gives each accelerator
machine type's (accelerator name, count) as SkyPilot's GCP catalog code has them.

Where each spelling was read (the rows themselves are pinned in tests/test_aliases.py):

- RunPod, ``catalogs/v8/runpod/vms.csv`` @01acdfd419ce5afae1289ff14825b893ced0c196:
  ``A100-80GB`` (GpuInfo ``'A100 PCIe'``), ``A100-80GB-SXM`` (``'A100 SXM'``), ``H100-NVL``
  (``'H100 NVL'``, 94 GB), ``H100-SXM`` (``'H100 SXM'``), ``H200-SXM`` (``'H200 SXM'``),
  ``RTX4090``, ``RTX6000-Ada`` (``'RTX 6000 Ada'``), ``A40``.
- Lambda, AWS, GCP and Azure: the names the shipped cloud.yaml rows were imported from
  (catalog/SOURCES.md SKY-* ids); AWS's ``B300`` (p6-b300.48xlarge); ``MI325X`` as SkyPilot spells
  AMD's cards (``MI300X``).
- GCP ``a3-edgegpu-8g`` (A3 Edge): 8 x H100 80GB, the GPU type GKE attaches to it
  (``nvidia-h100-80gb``, count 8; Google Cloud's GKE custom ComputeClass example) as for
  ``a3-highgpu-8g``.
"""

from __future__ import annotations

from collections.abc import Mapping

import re

from planner.catalog.skypilot_csv import _quoted

#: SkyPilot accelerator name -> catalog GPU id (provider exceptions in :func:`catalog_gpu_id`).
GPU_ALIASES: dict[str, str] = {
    # the names SkyPilot's own accelerator table uses across clouds
    "T4": "t4", "A10G": "a10g", "A10": "a10", "L4": "l4", "L40S": "l40s", "A40": "a40",
    "A6000": "rtx-a6000", "RTXA6000": "rtx-a6000", "RTX4090": "rtx-4090", "RTX3090": "rtx-3090",
    "A100": "a100-40gb-sxm", "A100-80GB": "a100-80gb-sxm", "H100": "h100-sxm", "H100-MEGA": "h100-sxm",
    "H200": "h200-sxm", "B200": "b200", "B300": "b300", "MI300X": "mi300x", "MI325X": "mi325x",
    # RunPod's own spellings (v8 vms.csv)
    "A100-SXM": "a100-80gb-sxm", "A100-80GB-SXM": "a100-80gb-sxm", "H100-SXM": "h100-sxm",
    "H100-NVL": "h100-nvl", "H200-SXM": "h200-sxm", "RTX6000-Ada": "rtx-6000-ada",
    # RunPod display names as SkyPilot's fetcher writes them (fetch_runpod.py ``format_gpu_name``: 'RTX ' -> 'RTX',
    # spaces -> '-'; RunPod's 'RTX 5090', 'RTX A4000', 'RTX A5000', 'H200 NVL'; h40b m7: said "no gpus.yaml entry")
    "RTX5090": "rtx-5090", "RTXA4000": "rtx-a4000", "RTXA5000": "rtx-a5000", "H200-NVL": "h200-nvl",
}

#: GCP accelerator machine type -> (accelerator name, count) (SkyPilot's ``_ACC_INSTANCE_TYPE_DICTS``,
#: REF:SKY-GCP-CODE; a3-edgegpu-8g: see the module docstring).
GCP_MACHINE_GPUS: dict[str, tuple[str, int]] = {
    **{f"a2-highgpu-{n}g": ("A100", n) for n in (1, 2, 4, 8)}, "a2-megagpu-16g": ("A100", 16),
    **{f"a2-ultragpu-{n}g": ("A100-80GB", n) for n in (1, 2, 4, 8)},
    **{f"g2-standard-{n}": ("L4", 1) for n in (4, 8, 12, 16, 32)},
    "g2-standard-24": ("L4", 2), "g2-standard-48": ("L4", 4), "g2-standard-96": ("L4", 8),
    **{f"a3-highgpu-{n}g": ("H100", n) for n in (1, 2, 4, 8)},
    "a3-edgegpu-8g": ("H100", 8),
    "a3-megagpu-8g": ("H100-MEGA", 8), "a3-ultragpu-8g": ("H200", 8), "a4-highgpu-8g": ("B200", 8),
}

# Azure VM size names are case-blind in Azure, and the importer keeps them as written: matched case-blind (h36b N7:
# 'standard_nc24ads_a100_v4' became an SXM card)
_AZURE_A100_PCIE = re.compile(r"^Standard_NC\d+ads_A100_v4$", re.IGNORECASE)
# NCCads H100 v5 (Standard_NCC40ads_H100_v5) is the confidential-computing twin of NCads H100 v5: one H100 NVL
# (94 GB) per VM (learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/nccadsh100v5-series, as
# public notes quote it: "Microsoft identifies the GPU variant as H100 NVL"; h37b N5: it was written as SXM)
_AZURE_H100_NVL = re.compile(r"^Standard_NCC?\d+adi?s_H100_v5$", re.IGNORECASE)
# Azure's ND sizes carry SXM boards: ND A100 v4 (Standard_ND96asr_v4, A100 40GB), NDm A100 v4
# (Standard_ND96amsr_A100_v4, A100 80GB), ND H100 v5 (Standard_ND96isr_H100_v5), ND H200 v5 (Standard_ND96isr_H200_v5)
# (Azure's ND-family size pages; Hugging Face's Azure hardware table lists ND96asr_v4 as A100 40GB x8)
_AZURE_SXM = re.compile(r"^Standard_ND\d+a?m?i?s?r?(_A100|_H100|_H200)?_v[45]$", re.IGNORECASE)
# Lambda names a board's form in its instance types (gpu_1x_h100_pcie, gpu_8x_h100_sxm5, gpu_1x_a100_sxm4)
# Lambda's gpu_1x_a100, gpu_2x_a100 and gpu_4x_a100 are "A100 (40 GB PCIe)"; gpu_1x_a100_sxm4 and gpu_8x_a100 are
# SXM4 (Lambda Cloud API /instance-types descriptions, as recorded from the live API on 2026-03-10 in public
# repositories' notes; h36b note)
_LAMBDA_A100_PCIE = re.compile(r"^gpu_[124]x_a100$", re.IGNORECASE)
_LAMBDA_A100_SXM = re.compile(r"^gpu_8x_a100$", re.IGNORECASE)

#: The AcceleratorNames that stand for two or more boards of the catalog (A100: 40GB SXM or PCIe; H100: SXM, PCIe
#: or NVL; H200: SXM or NVL): on Azure and Lambda the instance type tells which (:func:`form_factor_unknown`).
TWO_BOARD_NAMES = frozenset({"a100", "a100-80gb", "h100", "h200"})

#: SkyPilot's RunPod fetcher renames RunPod's display names so (GPU_NAME_OVERRIDES,
#: github.com/skypilot-org/skypilot sky/catalog/data_fetchers/fetch_runpod.py @8c488dc59618): a bare 'A100-80GB'
#: or 'H100' in a RunPod file is the PCIe card, the SXM ones carry '-SXM'.
RUNPOD_NAME_OVERRIDES = {"A100-PCIe": "A100-80GB", "A100-SXM": "A100-80GB-SXM", "H100-PCIe": "H100"}


def runpod_name(display: str) -> str:
    """The AcceleratorName SkyPilot's RunPod fetcher writes for a GPU of RunPod display name ``display`` (the
    ``Name`` in its GpuInfo): 'RTX PRO ' -> 'RTXPRO', 'RTX ' -> 'RTX', spaces -> '-', then
    :data:`RUNPOD_NAME_OVERRIDES` (fetch_runpod.py ``format_gpu_name``): 'A100 PCIe' -> 'A100-80GB'. Read
    case-blind, as an AcceleratorName is matched (h36b N7: 'a100 pcie' read as another GPU): 'a100 pcie' ->
    'A100-80GB'."""
    base = re.sub("RTX ", "RTX", re.sub("RTX PRO ", "RTXPRO", display.strip(), flags=re.IGNORECASE),
                  flags=re.IGNORECASE).replace(" ", "-")
    return next((v for k, v in RUNPOD_NAME_OVERRIDES.items() if k.lower() == base.lower()), base)


def aliases_by_lower() -> dict[str, tuple[str, ...]]:
    """:data:`GPU_ALIASES`' names by their lower case, for :func:`catalog_gpu_id`'s ``by_lower``: an import builds
    it once and passes it (h33b N5: comparing each row's accelerator with every name took a third of an import of
    300,000 rows of unknown GPUs); no module keeps it (issue 33: no module-level cache)."""
    out: dict[str, tuple[str, ...]] = {}
    for k in GPU_ALIASES:
        out[k.lower()] = out.get(k.lower(), ()) + (k,)
    return out


def catalog_gpu_id(provider: str, instance: str, accelerator: str, gpu_info: str = "",
                   by_lower: Mapping[str, tuple[str, ...]] | None = None) -> str | None:
    """The ``gpus.yaml`` id of an instance's accelerator, or None when the table has none.

    Args:
        provider: ``aws``, ``gcp``, ``azure``, ``lambda`` or ``runpod``.
        instance: the row's ``InstanceType``.
        accelerator: its ``AcceleratorName`` (for GCP: :data:`GCP_MACHINE_GPUS`' name).
        gpu_info: its ``GpuInfo`` text ('' when the file has none).
        by_lower: :func:`aliases_by_lower`, built once by a caller that asks for many rows; None: built here.

    Rules beyond :data:`GPU_ALIASES` (the board a shared name stands for): Lambda's ``H100`` on a
    ``*pcie*`` instance is the PCIe card, and its ``A100`` on gpu_1x/2x/4x_a100 the A100 40GB PCIe; RunPod's
    ``A100-80GB`` and ``H100`` are the PCIe cards, whatever GpuInfo says (:data:`RUNPOD_NAME_OVERRIDES`; a
    GpuInfo naming another GPU is checked by the importer); Azure's NC A100 v4 (any case) carries the A100
    80GB PCIe, its NC H100 v5 the H100 NVL.
    """
    name = accelerator.strip()
    if name not in GPU_ALIASES:
        # SkyPilot matches an accelerator name case-blind ('a10g' is A10G): sky/utils/accelerator_registry.py,
        # canonicalize_accelerator_name, "searched in the catalog with its case being ignored" (h18b #9)
        same = (by_lower if by_lower is not None else aliases_by_lower()).get(name.lower(), ())
        name = same[0] if len(same) == 1 else name
    if form_factor_unknown(provider, instance, name):  # h37b N5/m2: such a size was given the SXM board
        return None
    if provider == "lambda" and name.lower() in TWO_BOARD_NAMES and _lambda_boards(instance) == {"PCIe"}:
        return {"a100": "a100-40gb-pcie", "a100-80gb": "a100-80gb-pcie", "h100": "h100-pcie"}.get(name.lower())
    if provider == "lambda" and name.lower() in TWO_BOARD_NAMES and _lambda_boards(instance) == {"NVL"}:
        return {"h100": "h100-nvl", "h200": "h200-nvl"}.get(name.lower())
    if provider == "lambda" and name == "A100" and _LAMBDA_A100_PCIE.match(instance.strip()):
        return "a100-40gb-pcie"
    if provider == "runpod" and name in ("A100-80GB", "H100"):  # SkyPilot's names of the PCIe cards (h36b N7:
        return "a100-80gb-pcie" if name == "A100-80GB" else "h100-pcie"  # an empty GpuInfo gave the SXM one)
    if provider == "azure":  # the board the instance type carries, where the row names that GPU (h35b N2: a row
        instance = _azure_base(instance)
        if _AZURE_A100_PCIE.match(instance) and name.lower().startswith("a100"):  # naming T4 or H100 was written
            return "a100-80gb-pcie"  # as the A100 all the same)
        if _AZURE_H100_NVL.match(instance) and name.lower().startswith("h100"):
            return "h100-nvl"
    return GPU_ALIASES.get(name)


def _azure_base(instance: str) -> str:
    """An Azure size's name without a '_Promo' suffix (any case): Azure's promotional sizes carry the same hardware
    as the size without it (h41b m1: 'Standard_NC24ads_A100_v4_Promo' named 'A100-80GB' was left out)."""
    return re.sub(r"_promo$", "", instance.strip(), flags=re.IGNORECASE)


def form_factor_unknown(provider: str, instance: str, accelerator: str) -> bool:
    """Whether an Azure or Lambda row's ``accelerator`` stands for two boards (:data:`TWO_BOARD_NAMES`, by SkyPilot's
    name, case-blind) and its ``instance`` type is of no family whose board is known, so which board it carries
    cannot be told (h37b N5, m2: 'Standard_NC40ads_H100_v5x' and Lambda 'gpu_3x_a100' were given the SXM board).
    Known: Azure NC A100 v4 (PCIe), NC/NCC H100 v5 (NVL), ND sizes (SXM); Lambda names holding 'pcie' or 'sxm',
    and gpu_1x/2x/4x_a100 (PCIe) and gpu_8x_a100 (SXM4). Other clouds: False (their names are SkyPilot's own)."""
    name, inst = accelerator.strip().lower(), instance.strip()
    if name not in TWO_BOARD_NAMES or provider not in ("azure", "lambda"):
        return False
    if provider == "azure":
        inst = _azure_base(inst)
        return not (_AZURE_A100_PCIE.match(inst) or _AZURE_H100_NVL.match(inst) or _AZURE_SXM.match(inst))
    boards = _lambda_boards(inst)
    if len(boards) > 1:  # a name of two forms tells neither (h38b m5: 'gpu_1x_h100_pcie_sxm' was PCIe)
        return True
    return not (boards or _LAMBDA_A100_PCIE.match(inst) or _LAMBDA_A100_SXM.match(inst))


#: The board words a Lambda instance type may carry (gpu_1x_h100_pcie, gpu_8x_h100_sxm5, gpu_1x_a100_sxm4) -> the
#: board; 'nvl' too, as SkyPilot names NVIDIA's NVL cards (H100-NVL), though Lambda sells none today (h40b m3).
_LAMBDA_BOARD_WORDS = {"pcie": "PCIe", "sxm": "SXM", "nvl": "NVL"}
_LAMBDA_BOARD = re.compile(r"(pcie|sxm|nvl)\d*$")


def _lambda_boards(instance: str) -> set[str]:
    """The boards (PCIe, SXM, NVL) a Lambda instance type names: a word of its own between '_' ('pcie', 'pcie5',
    'sxm4', 'nvl'; h38b m5: 'nosxm' is none), or the end of its GPU word, the third '_' word, glued or after '-'
    ('h100-pcie', 'h100pcie'; h40b m3: they were not read). Several: the name tells none."""
    words = instance.strip().lower().split("_")
    found = {_LAMBDA_BOARD_WORDS[m.group(1)] for w in words[3:] if (m := _LAMBDA_BOARD.fullmatch(w))}
    if len(words) > 2 and (m := re.search(r"[a-z0-9]-?(pcie|sxm|nvl)\d*$", words[2])):
        found.add(_LAMBDA_BOARD_WORDS[m.group(1)])
    return found


def _base_gpu(name: str) -> str:
    """A GPU word without its memory and board words, lower case: 'A100-80GB-SXM' -> 'a100', 'h100pcie' -> 'h100',
    'a100-80gb' -> 'a100'; 'RTXA6000' -> 'a6000' (SkyPilot writes both for the RTX A6000)."""
    low = name.strip().lower()
    for _ in range(3):
        low = re.sub(r"-?(\d+gb?|pcie\d*|sxm\d*|nvl|mega)$", "", low) or low
    return {"rtxa6000": "a6000"}.get(low, low)


def _lambda_word_problem(instance: str, accelerator: str) -> str | None:
    """Why a Lambda instance type's GPU word contradicts the row's ``accelerator`` (None: it agrees, or the name has
    none). SkyPilot's Lambda fetcher writes the AcceleratorName from the name itself, its third '_' word upper-cased
    (fetch_lambda_cloud.py ``name_to_gpu_and_cnt``: ``name.split('_')[2].upper()``, 'gpu_8x_a100_80gb_sxm4' ->
    'A100-80GB'; skypilot-org/skypilot @115eca47b739), so a row naming another GPU is not its file (h40b N1:
    'gpu_8x_h100_sxm5' named 'B200' was written as 8 B200s). Compared without memory and board words."""
    words = instance.strip().lower().split("_")
    if len(words) < 3 or words[0] != "gpu" or not re.fullmatch(r"\d+x", words[1]) or words[2] == "general" \
            or re.fullmatch(r"\d+x", words[2]):
        return None
    word = _base_gpu(words[2])
    if not word or word == _base_gpu(accelerator):
        return None
    return (f"the instance type {_quoted(instance.strip())} carries {word.upper()} GPUs, but AcceleratorName gives "
            f"{_quoted(accelerator.strip())}: the row names two GPUs")


def instance_family_problem(provider: str, instance: str, accelerator: str) -> str | None:
    """Why the GPU an instance type's name carries is another than the row's ``accelerator`` (None: the same, or the
    name carries none): Lambda's GPU word (:func:`_lambda_word_problem`), Azure's family (:func:`_azure_family`).
    Said before any other reason of the GPU (h40b m2: 'Standard_ND40rs_v2' named 'A100' was "form factor not
    told", though the size carries V100s)."""
    if provider == "lambda":
        return _lambda_word_problem(instance, accelerator)
    if provider == "azure":
        return _azure_family_problem(instance, accelerator)
    return None


def _lambda_memories(low: str) -> list[str]:
    """The GPU memories (GB, as written) a Lambda instance type ``low`` (lower case) names, in order, each once: a word
    ``_80gb`` or ``_80g`` between '_', and a ``-80gb``/``-80g`` end of its GPU word, the third '_' word, which
    SkyPilot's Lambda fetcher reads as the AcceleratorName (fetch_lambda_cloud.py ``name_to_gpu_and_cnt``:
    ``name.split('_')[2].upper()``, so 'gpu_1x_a100-80gb_sxm4' is its 'A100-80GB'; skypilot-org/skypilot
    @115eca47b739). h39b 17: '-80gb' and '_80g' were not read, and two memories were said as one."""
    words = low.split("_")
    found = [w[:-2] if w.endswith("gb") else w[:-1] for w in words if re.fullmatch(r"\d+gb?", w)]
    end = re.search(r"-(\d+)gb?$", words[2]) if len(words) > 2 else None
    found += [end.group(1)] if end else []
    return list(dict.fromkeys(str(int(m)) for m in found))


def lambda_count(instance: str) -> int | None:
    """The GPU count a Lambda instance type names (``gpu_8x_a100`` -> 8), None where it names none."""
    m = re.match(r"gpu_(\d+)x_", instance.strip(), re.IGNORECASE)
    return int(m.group(1)) if m else None


# Azure GPU sizes name the GPU they carry, as a word before the version (Standard_NC24ads_A100_v4,
# Standard_NC40ads_H100_v5, Standard_ND96isr_H200_v5, Standard_NC4as_T4_v3, Standard_NV36ads_A10_v5,
# Standard_ND96isr_MI300X_v5); the word is held to the row's GPU where it is one of GPU_ALIASES' names (h39b N5:
# 'Standard_NC4as_T4_v3' named 'A10' was written as an A10). Sizes naming none: ND A100 v4 (Standard_ND96asr_v4)
# carries A100s (see _AZURE_SXM), NCv3 (Standard_NC6s_v3 .. NC24rs_v3) and NDv2 (Standard_ND40rs_v2) V100s
# (Azure's ncv3-series and ndv2-series size pages: "NVIDIA Tesla V100")
# A size's GPU word is any '_' word after its family and vCPUs (Standard_ND128isr_NDR_GB200_v6 carries GB200: h40b
# N3, it was written as B200), whatever its version or a '_Promo' suffix (h40b m8; Azure's promotional sizes carry
# the same hardware as the size without it); GPUs the table lacks are known by these words too (Azure's size
# pages: NDv2/NCv3 V100, NCv2 P100, ND P40, NV M60, NC K80, ND GB200 v6 and ND GB300 v6 GB200/GB300)
_AZURE_SIZE = re.compile(r"^standard_(n[cdv]c?)\d+[a-z]*((?:_[a-z0-9]+)*?)(?:_v\d+)?(?:_promo)?$")
_AZURE_OTHER_GPUS = ("gb200", "gb300", "v100", "p100", "p40", "m60", "k80")
_AZURE_ND_A100 = re.compile(r"^Standard_ND\d+asr_v4$", re.IGNORECASE)
_AZURE_V100 = re.compile(r"^Standard_(NC\d+r?s_v3|ND\d+rs_v2)$", re.IGNORECASE)
# NDm A100 v4 (Standard_ND96amsr_A100_v4) carries the A100 80GB, ND A100 v4 (Standard_ND96asr_v4) the 40GB (their
# Azure size pages; see _AZURE_SXM): SkyPilot's 'A100' is the 40 GB card, 'A100-80GB' the 80 GB one
_AZURE_A100_80 = re.compile(r"^Standard_ND\d+amsr_A100_v4$", re.IGNORECASE)
#: GPUs per VM of the Azure GPU sizes whose count is fixed (h39b m12: NC40ads H100 v5 x8 was written), by lower
#: case. SkyPilot's Azure fetcher takes the count from the SKU list's `GPUs` capability (fetch_azure.py
#: ``parse_capabilities``, skypilot-org/skypilot @0089fca0c9a4), so these are checked against that list as
#: Microsoft's .NET Aspire publishes it per family (aspire.dev reference, Aspire.Hosting.Azure.Kubernetes
#: AksNodeVmSizes.cs, "Standard_NC24ads_A100_v4 -- 24 vCPUs -- 220 GB RAM -- 1 GPU(s)"; read 2026-12-08 for every
#: size below: NCADSA100v4 1/2/4, NCadsH100v5 1/2, NCCads2023 1, NDASv4_A100 8, NDAMSv4_A100 8, NDSH100v5 8,
#: NDISRH200V5 8, NDISv5MI300X ND96isr 8, NDSv2 8, NCASv3_T4 1/1/1/4, NCSv3 1/2/4/4, NCADSA10v4 1/1/2), and with
#: Azure's size pages (nd-mi300x-v5-series.md: "Standard_ND96isr_MI300X_v5 ... 8 MI300X"). Standard_ND96is_MI300X_v5
#: has no `GPUs` capability in that list; SkyPilot's fetcher gives it 8 (AZURE_MISSING_GPU_COUNT, "from the Azure
#: size documentation"). NVads A10 v5 sizes carry fractions of a GPU (the fetcher's
#: AZURE_FRACTIONAL_A10_INS_TYPE_TO_NUM_GPUS): not here.
#: The Azure sizes that carry a fraction of one GPU (a GPU partition), as Azure's NVadsA10 v5 page gives them
#: (MicrosoftDocs/azure-docs articles/virtual-machines/nva10v5-series.md, "GPU partition": NV6ads 1/6, NV12ads 1/3,
#: NV18ads 1/2; NV36ads, NV36adms 1 and NV72ads 2 whole A10s, in _AZURE_COUNTS); planner holds whole GPUs only (h40b
#: N2: NV6ads named x1 was written as a whole 24 GB A10).
_AZURE_FRACTIONS = {"standard_nv6ads_a10_v5": "1/6", "standard_nv12ads_a10_v5": "1/3", "standard_nv18ads_a10_v5": "1/2"}
#: GPUs per VM of an ND size carrying these GPUs, whatever its version or suffix (h40b m8: ND = 8; ND A100 v4,
#: NDm A100 v4, ND H100 v5, ND H200 v5, ND MI300X v5 all 8, as _AZURE_COUNTS gives them).
_AZURE_ND_EIGHT = ("a100", "h100", "h200", "mi300x", "v100")
_AZURE_COUNTS = {
    "standard_nc24ads_a100_v4": 1, "standard_nc48ads_a100_v4": 2, "standard_nc96ads_a100_v4": 4,
    "standard_nc40ads_h100_v5": 1, "standard_nc80adis_h100_v5": 2, "standard_ncc40ads_h100_v5": 1,
    "standard_nd96asr_v4": 8, "standard_nd96amsr_a100_v4": 8, "standard_nd96isr_h100_v5": 8,
    "standard_nd96isr_h200_v5": 8, "standard_nd96isr_mi300x_v5": 8, "standard_nd40rs_v2": 8,
    "standard_nc4as_t4_v3": 1, "standard_nc8as_t4_v3": 1, "standard_nc16as_t4_v3": 1, "standard_nc64as_t4_v3": 4,
    "standard_nc6s_v3": 1, "standard_nc12s_v3": 2, "standard_nc24s_v3": 4, "standard_nc24rs_v3": 4,
    "standard_nd96is_mi300x_v5": 8,
    "standard_nc8ads_a10_v4": 1, "standard_nc16ads_a10_v4": 1, "standard_nc32ads_a10_v4": 2,
    "standard_nv36ads_a10_v5": 1, "standard_nv36adms_a10_v5": 1, "standard_nv72ads_a10_v5": 2,
}
#: The AcceleratorNames that name one board (form factor) of their GPU, by lower case (RunPod's spellings, and
#: H100-MEGA, GCP's A3 Mega SXM).
_NAMED_BOARD = {"a100-sxm": "SXM", "a100-80gb-sxm": "SXM", "h100-sxm": "SXM", "h100-mega": "SXM",
                "h200-sxm": "SXM", "h100-nvl": "NVL"}
#: Lambda's memory sizes by SkyPilot's name where the name carries none ('A100' is the 40 GB card).
_NAMED_MEMORY = {"a100": 40}
#: SkyPilot's RunPod instance types: ``<count>x_<AcceleratorName>_<SECURE|COMMUNITY>`` (fetch_runpod.py writes
#: ``f'{count}x_{gpu_name}_{SECURE|COMMUNITY}'``; catalogs/v8/runpod/vms.csv: '2x_A100-80GB_SECURE', count 2.0).
_RUNPOD_TYPE = re.compile(r"^(\d+)x_(.+)_(SECURE|COMMUNITY)$", re.IGNORECASE)


def _gpus(count: int) -> str:
    return f"{count} GPU{'s' if count != 1 else ''}"


def instance_gpu_problem(provider: str, instance: str, accelerator: str, count: int) -> str | None:
    """Why the GPU or count an instance type's name carries contradicts the row's ``accelerator`` x ``count`` (None:
    it agrees, or the name carries none), so the row is left out rather than written with either:

    - Lambda: ``gpu_8x_`` names the count (h37b m2), a second ``Nx_`` another (h38b m5), ``_pcie``/``_sxm`` the board
      (h39b 14: against an AcceleratorName that names one), ``_40gb``/``_80gb`` the memory (h38b N2: 'gpu_1x_a100_40gb_sxm4' named 'A100-80GB' was written as the 80 GB card; 'A100' is the 40 GB
      card, 'A100-80GB' the 80 GB one, SkyPilot's names).
    - RunPod: ``8x_A100-80GB_SECURE`` names the count and AcceleratorName (:data:`_RUNPOD_TYPE`; h38b N7).
    - Azure: an NC/NCC/ND/NV size names its GPU family (``_A100_``, ``_T4_``, ...; ND96asr_v4 the A100, NCv3 and
      NDv2 the V100); an AcceleratorName of another GPU is not read as that GPU (h38b N3, h39b N5), nor one of
      another board or A100 memory than the size's (h39b N11, m6): :func:`_azure_problem`; a size of a fixed count
      (:data:`_AZURE_COUNTS`) with another AcceleratorCount (h39b m12).
    """
    inst, name = instance.strip(), accelerator.strip()
    low, acc = inst.lower(), name.lower()
    if provider == "lambda":
        counts = re.findall(r"(?:^|_)(\d+)x(?=_|$)", low)
        if len(counts) > 1:
            return (f"the instance type {_quoted(instance)} names {len(counts)} GPU counts ({', '.join(counts)}x), so how "
                    "many GPUs it has cannot be told")
        word = _lambda_word_problem(inst, name)
        if word is not None:
            return word
        named = lambda_count(inst)
        if named is not None and named != count:
            return f"the instance type {_quoted(instance)} names {_gpus(named)}, but AcceleratorCount gives {_quoted(name)} x{count}"
        said_mem = _lambda_memories(low)
        sxm40 = _LAMBDA_A100_SXM.match(inst) is not None  # gpu_8x_a100: Lambda's "8x A100 (40 GB SXM4)"
        mem = said_mem or (["40"] if _LAMBDA_A100_PCIE.match(inst) or sxm40 else [])
        if len(set(mem)) > 1:  # 'gpu_1x_a100_40gb_80gb_sxm4' (h39b 17): said so, not as one of them
            return (f"the instance type {_quoted(instance)} names two memories ({' and '.join(f'{m} GB' for m in mem)}), "
                    "so which card it has cannot be told")
        has = re.search(r"-(\d+)gb(?:-|$)", acc)  # 'A100-80GB-SXM' too (h40b N5)
        own = int(has.group(1)) if has else _NAMED_MEMORY.get(acc)
        if mem and own is not None and any(int(m) != own for m in mem):
            told = (f"names {mem[0]} GB" if said_mem else "is Lambda's A100 40 GB SXM4" if sxm40
                    else "is Lambda's A100 40 GB PCIe")
            return (f"the instance type {_quoted(instance)} {told}, but AcceleratorName gives {_quoted(name)}, "
                    f"the {own} GB card")
        # gpu_1x/2x/4x_a100 are Lambda's A100 40 GB PCIe (h40b N5: 'A100-80GB' on them was the SXM card)
        boards = _lambda_boards(inst) or ({"PCIe"} if _LAMBDA_A100_PCIE.match(inst) else set())
        board = _NAMED_BOARD.get(acc) or ("PCIe" if "pcie" in acc else None)
        if board is not None and len(boards) == 1 and board not in boards:
            # 'gpu_1x_h100_pcie' named 'H100-SXM' (h39b 14): the name's board and AcceleratorName's disagree
            return (f"the instance type {_quoted(instance)} names the {next(iter(boards))} board, but "
                    f"AcceleratorName gives {_quoted(name)}, the {board} one")
    elif provider == "runpod":
        m = _RUNPOD_TYPE.match(inst)
        if m and int(m.group(1)) != count:
            return (f"the instance type {_quoted(instance)} names {_gpus(int(m.group(1)))}, but AcceleratorCount gives "
                    f"{_quoted(name)} x{count}")
        if m and m.group(2).lower() != acc:
            return f"the instance type {_quoted(instance)} names {_quoted(m.group(2))}, but AcceleratorName gives {_quoted(name)}"
    elif provider == "azure":
        extra = re.search(r"_v\d+_(\w+)$", low)
        if extra and extra.group(1) != "promo":  # h41b m1: 'Standard_NC8as_T4_v3_Promo2' was read as its base size
            return (f"the instance type {_quoted(instance)} ends in {_quoted(inst[extra.start(1) - 1:])}, a suffix "
                    "Azure's sizes do not carry ('_Promo' is the one known), so which size it is cannot be told")
        why = _azure_problem(instance, name)
        size = re.sub(r"_promo$", "", low)
        if why is None and size in _AZURE_FRACTIONS:
            return (f"the instance type {_quoted(instance)} carries {_AZURE_FRACTIONS[size]} of one A10 (a GPU "
                    f"partition), but AcceleratorCount gives {_quoted(name)} x{count}; planner holds whole GPUs only")
        fixed = _AZURE_COUNTS.get(size)
        family = _azure_family(inst)
        if fixed is None and size.startswith("standard_nd") and family in _AZURE_ND_EIGHT:
            fixed = 8
        if why is None and fixed is not None and fixed != count:
            return f"the instance type {_quoted(instance)} carries {_gpus(fixed)}, but AcceleratorCount gives {_quoted(name)} x{count}"
        return why
    return None


def _azure_problem(instance: str, accelerator: str) -> str | None:
    """Why an Azure size contradicts the row's ``accelerator`` (None: it agrees, or the size is of no known family):
    the size's GPU family is another (h38b N3, h39b N5: 'A10' on Standard_NC4as_T4_v3, 'A100' on an '_A10_' size), it
    carries another board of that GPU than the AcceleratorName names (h39b N11: 'H100-NVL' on the SXM
    Standard_ND96isr_H100_v5, 'A100-80GB-SXM' on the PCIe NC A100 v4), or another A100 memory (h39b m6: 'A100', the
    40 GB card, on the 80 GB Standard_ND96amsr_A100_v4; 'A100-80GB' on the 40 GB Standard_ND96asr_v4)."""
    inst, name = _azure_base(instance), accelerator.strip()
    acc = name.lower()
    family = _azure_family_problem(instance, accelerator)
    if family is not None:
        return family
    form = "PCIe" if _AZURE_A100_PCIE.match(inst) else "NVL" if _AZURE_H100_NVL.match(inst) else \
        "SXM" if _AZURE_SXM.match(inst) else None
    named = _NAMED_BOARD.get(acc)
    if form is not None and named is not None and named != form:
        return (f"the instance type {_quoted(instance)} carries the {form} board, but AcceleratorName gives "
                f"{_quoted(name)}, the {named} one: the row names two boards")
    # NC A100 v4 carries the A100 80GB PCIe too (h40b m1: 'A100' and 'A100-40GB' on it were written as the 80 GB card)
    size = 80 if _AZURE_A100_80.match(inst) or _AZURE_A100_PCIE.match(inst) else 40 if _AZURE_ND_A100.match(inst) \
        else None
    own = 40 if acc in ("a100", "a100-40gb") else 80 if acc in ("a100-80gb", "a100-sxm", "a100-80gb-sxm") else None
    if size is not None and own is not None and own != size:
        return (f"the instance type {_quoted(instance)} carries the A100 {size}GB, but AcceleratorName gives "
                f"{_quoted(name)}, the {own} GB card")
    if _AZURE_H100_NVL.match(inst) and acc.startswith("h100") and acc not in ("h100", "h100-nvl"):
        # SkyPilot's 'H100' or the board's own 'H100-NVL' (94 GB); 'H100-80GB' or 'H100-PCIE' name another card
        # (h40b m1: they were written as the NVL)
        return (f"the instance type {_quoted(instance)} carries the H100 NVL (94 GB), but AcceleratorName gives "
                f"{_quoted(name)}: the row names two cards")
    return None


def _azure_family(instance: str) -> str | None:
    """The GPU (lower case) an Azure N-series size's name carries: its GPU word (:data:`_AZURE_SIZE`; one of
    :data:`GPU_ALIASES`' names or :data:`_AZURE_OTHER_GPUS`), else A100 for ND A100 v4 and V100 for NCv3 and NDv2;
    None for a size of no known family."""
    low = instance.strip().lower()
    m = _AZURE_SIZE.match(low)
    if m is None:
        return None
    known = aliases_by_lower()
    words = [w for w in m.group(2).split("_") if w and (w in known or w in _AZURE_OTHER_GPUS)]
    if words:
        return words[0]
    size = re.sub(r"_promo$", "", low)
    return "a100" if _AZURE_ND_A100.match(size) else "v100" if _AZURE_V100.match(size) else None


def _azure_family_problem(instance: str, accelerator: str) -> str | None:
    """Why an Azure size's GPU (:func:`_azure_family`) is another than ``accelerator`` names (h38b N3, h39b N5,
    h40b N3: a GB200 size named 'B200'); None: the same GPU (any board or memory of it), or no family known."""
    family, acc = _azure_family(instance), accelerator.strip().lower()
    if family is None or acc == family or acc.startswith(family + "-"):
        return None
    return (f"the instance type {_quoted(instance.strip())} carries {family.upper()} GPUs, but AcceleratorName gives "
            f"{_quoted(accelerator.strip())}: the row names two GPUs")


__all__ = ["GCP_MACHINE_GPUS", "GPU_ALIASES", "RUNPOD_NAME_OVERRIDES", "catalog_gpu_id", "form_factor_unknown",
           "instance_family_problem", "instance_gpu_problem", "lambda_count", "runpod_name"]
