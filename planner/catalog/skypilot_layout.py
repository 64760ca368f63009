"""The vms.csv layouts ``planner catalog import-skypilot`` reads (moved from planner.catalog.skypilot for room,
which imports the names back; h39b): the providers, each provider's v8 columns and their order as SkyPilot's
catalogs/v8/<cloud>/vms.csv write them (REF:SKY-SCHEMA-v8), which provider a file is for (:func:`detect_provider`,
:func:`header_provider`) and the layouts refused (:func:`_check_layout`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from planner.catalog.skypilot_csv import REQUIRED_COLUMNS, ImportProblem, _quoted

PROVIDERS = ("aws", "gcp", "azure", "lambda", "runpod")

#: Each provider's v8 columns (the module docstring; Azure's file is still of schema v6).
LAYOUTS = {
    "aws": frozenset(REQUIRED_COLUMNS + ("GpuInfo", "AvailabilityZone", "Arch")),
    "gcp": frozenset(REQUIRED_COLUMNS + ("GpuInfo", "AvailabilityZone")),
    "azure": frozenset(REQUIRED_COLUMNS + ("GpuInfo", "Generation")),
    "lambda": frozenset(REQUIRED_COLUMNS + ("GpuInfo",)),
    "runpod": frozenset(REQUIRED_COLUMNS + ("GpuInfo", "AvailabilityZone")),
}
#: Other clouds SkyPilot's catalog has a directory for (catalogs/v8/<cloud>/): files the importer refuses.
OTHER_CLOUDS = ("cudo", "daytona", "do", "fluidstack", "hyperbolic", "hyperstack", "ibm", "jarvislabs", "kubernetes",
                "lium", "mithril", "nebius", "oci", "ovhcloud", "paperspace", "primeintellect", "scaleway", "scp",
                "seeweb", "shadeform", "simplepod", "slurm", "spheron", "vast", "verda", "yotta")


def detect_provider(path: Path, header: Sequence[str]) -> str | None:
    """The provider a file is for: a path component named after it, else its header's layout.

    Raises:
        ImportProblem: the file's directory names a SkyPilot cloud the importer does not read.
    """
    for part in reversed(path.parts[:-1]):
        if part.lower() in PROVIDERS:
            return part.lower()
        if part.lower() in OTHER_CLOUDS:
            raise ImportProblem(f"{path}: cloud {part.lower()!r} (its directory) is not one the importer reads: "
                                f"{', '.join(PROVIDERS)}; its prices cannot be matched to this catalog's instances")
    cols = list(header)
    matches = [p for p, layout in LAYOUTS.items() if frozenset(cols) == layout]
    if len(matches) == 1:
        return matches[0]
    if matches == ["gcp", "runpod"]:  # the same columns: told apart by their order, column for column (an AWS
        by_order = header_provider(cols)  # header without Arch has them too, in neither's order: h34b m13)
        if by_order in matches:
            return by_order
        raise ImportProblem(f"{path}: cannot tell which provider the file is for: its columns are both gcp's and "
                            "runpod's vms.csv columns, in neither's order (an AWS file without its Arch column has "
                            "them too); give --provider, or import it from a folder named after its cloud")
    return None


#: Each provider's v8 header, column for column in its order (the module docstring; SkyPilot's files).
HEADERS = {
    "aws": ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo", "Price",
            "SpotPrice", "Region", "AvailabilityZone", "Arch"),
    "gcp": ("InstanceType", "vCPUs", "MemoryGiB", "AcceleratorName", "AcceleratorCount", "GpuInfo", "Region",
            "AvailabilityZone", "Price", "SpotPrice"),
    "azure": ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo", "Price",
              "SpotPrice", "Region", "Generation"),
    "lambda": ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "Region",
               "GpuInfo", "SpotPrice"),
    "runpod": ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Region", "SpotPrice",
               "Price", "AvailabilityZone", "GpuInfo"),
}


def header_provider(header: Sequence[str]) -> str | None:
    """The provider whose v8 header (:data:`HEADERS`) ``header`` is, column for column in order; None
    when it is no provider's (another schema, a file written by hand)."""
    return next((p for p, cols in HEADERS.items() if tuple(header) == cols), None)


def _check_columns(path: Path, provider: str, header: Sequence[str], said: str) -> None:
    """Refuse a header holding a column of another provider's v8 layout (:data:`HEADERS`) that ``provider``'s lacks,
    in whatever order (h39b 19: AWS's columns reordered, saved under ``lambda/``, were imported as Lambda machines,
    AWS's spot prices and all; columns are read by name, so the "column for column" check missed them). ``said``
    names what gave ``provider`` ('--provider' or 'its directory's name').

    Raises:
        ImportProblem: naming the columns and the provider(s) whose layout holds them all (exact set first).
    """
    known = {c for cols in HEADERS.values() for c in cols}
    extra = [c for c in header if c in known and c not in HEADERS[provider]]
    if not extra:
        return
    cols = {c for c in header if c in known}
    fits = [p for p, layout in HEADERS.items() if set(layout) == cols] or \
        [p for p, layout in HEADERS.items() if cols <= set(layout)] or \
        [p for p, layout in HEADERS.items() if set(extra) <= set(layout)]
    whose = (f"its columns are {' or '.join(fits)}'s vms.csv layout" + ("" if header_provider(header) else
             ", in another order") if fits else "no provider's layout holds them all")
    raise ImportProblem(f"{path}: line 1: its header has {', '.join(extra)}, which {provider}'s vms.csv layout lacks "
                        f"({','.join(HEADERS[provider])}): {whose}, but {said} says {provider}, so the rows would "
                        f"be labelled {provider} with another cloud's prices",
                        hint=(f"Import it as {fits[0]} (--provider {fits[0]}, or from a folder named {fits[0]}), or "
                              if fits else "Remove those columns, or ") + f"give {provider}'s own vms.csv.")


def _check_layout(path: Path, provider: str, header: Sequence[str], rows: Sequence[Mapping[str, str]]) -> None:
    """Refuse a layout the importer would misread: SkyPilot's v7 RunPod file (GpuInfo a bare name
    before Region; MemoryGiB there is the GPU memory, not the host's RAM)."""
    if provider != "runpod" or "GpuInfo" not in header:
        return
    for r in rows:
        info = (r.get("GpuInfo") or "").strip()
        if info and not info.startswith("{"):
            raise ImportProblem(f"{path}: line {r['_line']}, column GpuInfo: {_quoted(info)} is SkyPilot's v7 RunPod "
                                "layout (GpuInfo a bare name, MemoryGiB the GPU memory rather than the host's RAM); "
                                "import catalogs/v8/runpod/vms.csv instead")


#: The columns SkyPilot writes that planner reads for nothing, with the values its fetchers write there: AWS's Arch is
#: the first of the EC2 API's ProcessorInfo SupportedArchitectures (fetch_aws.py @005261080a6b ``get_arch``; the
#: API's ArchitectureType values i386, x86_64, arm64, x86_64_mac, arm64_mac; empty where it gives none), Azure's
#: Generation the HyperVGenerations capability (fetch_azure.py ``parse_capabilities``: V1, V2, 'V1,V2').
_UNUSED_VALUES = {"Arch": frozenset({"", "i386", "x86_64", "arm64", "x86_64_mac", "arm64_mac"}),
                  "Generation": frozenset({"", "V1", "V2", "V1,V2"})}


def unread_columns_note(provider: str, header: Sequence[str], rows: Sequence[Mapping[str, str]]) -> str | None:
    """One line naming the columns the import reads nothing from that a user may think it does (h39b 7: 'Discount'
    and an Arch of '=1+1' loaded without a word), or None: a column no provider's v8 layout (:data:`HEADERS`) has,
    and a column of :data:`_UNUSED_VALUES` where a row (of ``rows``, those read) gives a value SkyPilot's fetcher
    never writes there (its first rows' values and lines said). A column of SkyPilot's own with its values is not
    named: the file is as SkyPilot writes it."""
    known = {c for cols in HEADERS.values() for c in cols}
    parts = []
    alien = [c for c in header if c not in known]
    if alien:
        parts.append(f"column{'s' if len(alien) > 1 else ''} {', '.join(_quoted(c) for c in alien)} read for nothing "
                     "(no SkyPilot vms.csv has such a column; planner does not apply it)")
    for col, written in _UNUSED_VALUES.items():
        if col not in header or col not in HEADERS[provider]:
            continue
        odd = [(r.get("_line"), v) for r in rows if (v := (r.get(col) or "").strip()) not in written]
        if odd:
            shown = ", ".join(f"{_quoted(v)} on line {line}" for line, v in odd[:3]) + (", ..." if len(odd) > 3 else "")
            parts.append(f"column {col} read for nothing, and {len(odd)} row(s) give a value SkyPilot never writes "
                         f"there ({shown}; it writes {', '.join(sorted(v for v in written if v))})")
    return "; ".join(parts) or None
