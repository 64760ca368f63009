"""Cloud instance rows from SkyPilot's public catalog files (``planner catalog import-skypilot``).

SkyPilot publishes one ``vms.csv`` per provider (github.com/skypilot-org/skypilot-catalog,
``catalogs/v8/<provider>/vms.csv``; schema in that repository's ``README.md``, REF:SKY-SCHEMA-v8).
Each provider's file names its columns in its own order, so they are read by name:

=========  =========================================================================================
aws        InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price,
           SpotPrice, Region, AvailabilityZone, Arch
gcp        InstanceType, vCPUs, MemoryGiB, AcceleratorName, AcceleratorCount, GpuInfo, Region,
           AvailabilityZone, Price, SpotPrice: a VM row (InstanceType given) prices the host (CPU
           and RAM) and a GPU row (InstanceType empty, AcceleratorName and AcceleratorCount given)
           the GPUs of the same zone; an instance costs its VM row plus the GPU row of its
           accelerator and count, joined case-blind (h34b N3); a GPU row without an on-demand price (0,
  empty or below the catalog's floor by its digits) prices nothing, h34b N2 (which machine type carries which is SkyPilot's
           ``_ACC_INSTANCE_TYPE_DICTS`` in ``sky/catalog/gcp_catalog.py``, REF:SKY-GCP-CODE)
azure      InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price,
           SpotPrice, Region, Generation (v6 also; no zone column)
lambda     InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, Region, GpuInfo,
           SpotPrice
runpod     InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Region (a country code),
           SpotPrice, Price, AvailabilityZone (a data centre), GpuInfo
=========  =========================================================================================

Rules (the shipped ``catalog/cloud.yaml`` rows of GCP, Lambda and RunPod are what they give):

* one row per instance type with a GPU the catalog knows (:data:`GPU_NAMES`, per provider
  :func:`gpu_id`); rows without a GPU, with a fraction of one (AWS ``g6f``: ``AcceleratorCount``
  0.25), with an unknown GPU or without an on-demand price (0 or empty; GCP: no GPU row in any of the
  machine type's zones), or with one below the catalog's
  floor (planner.catalog.cloud.MIN_USD_PER_HOUR; '1e-400' too, which reads as 0), are skipped, each with its
  reason and the line of its first row (h22b M1);
* several rows describe one instance type: one per region and zone. The region is the cheapest
  US region by on-demand price, unless ``region`` names one; a zone's price is its on-demand
  price (GCP: VM + GPU row of that zone), and a region's its cheapest zone's (zones that differ are
  said in the entry's notes, h34b N5). Every row priced of one instance type, in any zone or region,
  gives it the same GPU, GPU count, vCPUs and memory, or the file is refused naming both lines (an
  instance type is one machine; h34b N5: one zone's hardware was written with another's price). Ties between regions at one on-demand price (AWS
  g6.xlarge: $0.8048 in us-east-1, us-east-2 and us-west-2) go to the region with the lowest
  spot price of its regular zones (us-east-2, $0.2599: the same on-demand bill, cheaper spot
  capacity), then the first by name (deterministic, whatever the file's row order). Rows that
  repeat one instance, region and zone with the same figures count once (compared as read: a region, zone
  or accelerator that differs only in case is the same one, h19b N4, and a number is compared by value,
  '1.006' and '1.0060', h20b M1); with different figures, the accelerator and its count among them (h20b N1),
  the file is refused (a vms.csv lists one row per instance type and zone, so a conflict means a
  damaged or hand-edited file, and neither figure can be trusted);
* spot: zones whose spot price is below on-demand, by its digits and by the float written (a spot
  price no lower than on-demand is no spot capacity, nor one below it only past the float's precision,
  which would be written equal to it, h34b m1); ``spot_usd_per_hour`` is the lowest of the region's regular zones (AWS local
  zones such as ``use1-atl2-az1`` are left out of it) and ``spot_usd_per_hour_range`` the lowest
  and highest of all its zones, written only when they differ;
* ids are ``<provider>-<instance type>`` in lower case with ``_`` and ``.`` turned into ``-``;
  memory is written in GiB (``MemoryGiB``), vCPUs as whole numbers;
* verification ``V`` (the row as the file gives it), ``D`` for GCP (a sum of two rows);
* an instance whose cheapest and dearest US region differ by more than
  :data:`MAX_US_REGION_RATIO` in on-demand price is skipped when no ``region`` is named: GCP's
  list prices for one machine type differ by region by 10-20 % (a3-highgpu-8g: $88.49 in
  us-central1, $99.58 in us-east5, Cyclenerd/google-cloud-pricing-cost-calculator `pricing.yml`
  @dac31281, 2026-08-20), so a 2-2.6x gap (the v8 snapshot's H100 / H200 GPU rows: $33.61 in
  us-central1, $78.37 in us-east4) means some rows are not on-demand list prices, and the
  cheapest would be the wrong one to ship.

A row it cannot read is left out with its line and column, and every row of its instance type with it
(never priced from the rows that remain), counted by reason in the summary: a row with more or fewer
fields than the header, a value that is not a plain number in a numeric column (``AcceleratorCount``,
``vCPUs``, ``MemoryGiB``, ``Price``, ``SpotPrice``; empty is allowed and means none; ``1_0``, ``inf``,
``nan`` are refused though Python's ``float()`` reads them; so is a number beside anything but ordinary spaces,
the character named: a tab, U+001C-U+001F, U+0085, which ``str.strip()`` reads past, h25b N4), a negative value,
a fraction of a vCPU (a count is whole by its digits, :func:`planner.catalog.skypilot_csv.is_whole`:
'3.9999999999999999999' is not), a control, bidirectional or invisible character in ``AvailabilityZone`` (h22b M9),
and a row the catalog loader would refuse (:func:`_imported_problem`: a control, bidirectional or line-break
character in the instance type or region, either not ASCII (a lookalike region 'us-\u0435ast-1' never competes
with the instance's other regions), 0 or more than 64 GPUs, memory or an hourly price outside the loader's
bounds). Numbers are written so the loader reads them back (:func:`yaml_float`). A whole file is refused with one
line naming the file (and the line and column where it applies, :class:`ImportProblem`): a file over
:data:`MAX_CSV_BYTES` (read once, :func:`planner.core.infile.read_input`; a UTF-8 byte order mark allowed) or
not UTF-8 (a UTF-16 or UTF-32 byte order mark named), more rows of one instance type, instance types or unreadable
rows than :mod:`planner.catalog.skypilot_csv` takes, or more than :data:`MAX_GPU_INSTANCE_TYPES` instance types with
a GPU the catalog knows (each counted as read, h33b N5, N6), a device, named pipe or socket (refused unread), a lone
carriage return inside a line, two rows of one instance and zone with different figures, the v7 RunPod layout
(GpuInfo a bare name before ``Region``, ``MemoryGiB`` the GPU's memory), and a file of a cloud the importer
does not read (its directory names another SkyPilot cloud, or its header matches no provider's layout).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from planner.catalog.aliases import GCP_MACHINE_GPUS, GPU_ALIASES, aliases_by_lower
from planner.catalog.cloud import region_case
from planner.catalog.import_summary import foreign_region_note, left_out_lines, region_note
from planner.catalog.skypilot_csv import (MAX_COLUMNS, MAX_CSV_BYTES, NUMERIC_COLUMNS, REQUIRED_COLUMNS, ImportProblem,
                                         _quoted, is_whole, read_rows)
from planner.catalog.skypilot_rows import (LOWER_CASE_INSTANCES, OverlayGpuNames, _check_duplicates, _num, _row_gpu,
                                          _Zone, _zones, gpu_id, instance_key, spot_below)
from planner.catalog.skypilot_zones import _first_foreign, _malformed_region, region_problem, zone_region
from planner.catalog.skypilot_layout import (LAYOUTS, PROVIDERS, _check_columns, _check_layout, detect_provider,
                                            header_provider, unread_columns_note)
from planner.catalog.skypilot_result import Imported, ImportResult
from planner.core.names import unsafe_problem

#: The most instance types with a GPU the catalog knows that one file may give (h33b N5), counted while it is read:
#: 4 times the 500 instances a cloud.yaml may list (planner.catalog.schema.MAX_CATALOG_ENTRIES), so a file whose
#: overlay could list 500 is read, while 40,000 (8 MB; each kept one is priced, checked by the loader and given its
#: source, about 2 ms, so 75 s) are refused at the 2,001st. SkyPilot's v8 files give a few hundred at most.
MAX_GPU_INSTANCE_TYPES = 2000

#: Largest ratio of the dearest to the cheapest US region's on-demand price of one instance type
#: that the import takes as list prices (module docstring; GCP's regional spread is 10-20 %).
MAX_US_REGION_RATIO = 1.5

#: SkyPilot accelerator name -> catalog GPU id, and GCP machine type -> (accelerator, count): the
#: alias table of planner.catalog.aliases (kept here under their old names).
GPU_NAMES = GPU_ALIASES
GCP_MACHINES = GCP_MACHINE_GPUS

#: A region name as the clouds write them: letters, digits, '-' and '_' (us-east-1, us-central1, eastus, CA-MTL-1).
_REGION_NAME = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")  # one separator at a time: not us--east-1
_AZURE_US = re.compile(r"^(east|west|central|northcentral|southcentral|westcentral)us\d?$")
#: A US region of AWS, GCP or Lambda: 'us-', words of letters joined by '-', and the region's number (us-east-1,
#: us-central1, us-midwest-1); 'us--east-1' or 'us-east-1.' is none (h32b M5: both were taken as US regions).
_US_REGION = re.compile(r"us(?:-[a-z]+)+-?[0-9]+")
#: A US availability zone's name: a US region's and a letter (us-east-1a, us-central1-c).
_US_ZONE = re.compile(r"us(?:-[a-z]+)+-?[0-9]+-?[a-z]")
_AWS_LOCAL_ZONE = re.compile(r"^[a-z]+\d-[a-z]+\d+-az\d+$")  # use1-atl2-az1: a local zone, not a regular AZ


def is_us(provider: str, region: str) -> bool:
    if provider == "azure":
        return bool(_AZURE_US.match(region.lower()))
    if provider == "runpod":
        return region.upper() == "US"
    # GovCloud and the isolated regions (us-iso-east-1, us-isob-east-1, us-isof-south-1) sell to cleared accounts
    # only, not at list prices anyone can rent (h34b m8)
    return bool(_US_REGION.fullmatch(region.lower())) and not re.search(r"(?:^|-)(?:gov|iso[a-z]?)(?:-|$)",
                                                                         region.lower())


def overlay_gpu_names(gpus: Iterable[Any], shipped: Iterable[str]) -> OverlayGpuNames:
    """The GPUs of ``gpus`` whose ids ``shipped`` lacks (an overlay's own), by exact id, exact name and both in lower
    case (:class:`planner.catalog.skypilot_rows.OverlayGpuNames`), for :func:`import_file`'s ``gpu_names``: a row
    whose AcceleratorName is one of them names that GPU (h21a m5): its exact id first, then its exact name, then
    either case-blind only where one GPU fits; a name fitting several is left out naming them (h34b N4)."""
    old = set(shipped)
    own = [g for g in gpus if g.id not in old]
    names: dict[str, tuple[str, ...]] = {}
    lower: dict[str, tuple[str, ...]] = {}
    for g in own:
        names[g.name.strip()] = names.get(g.name.strip(), ()) + (g.id,)
        for key in {g.name.strip().lower(), g.id.lower()}:
            if g.id not in lower.get(key, ()):
                lower[key] = lower.get(key, ()) + (g.id,)
    return OverlayGpuNames(ids={g.id: g.id for g in own}, names=names, lower=lower)


def _case_lines(provider: str, rows: Iterable[Mapping[str, str]], kept: set[str]) -> list[str]:
    """The CSV lines of ``rows`` whose instance type, one of ``kept`` (as :func:`instance_key` gives it), the
    overlay writes in lower case though the file has upper-case letters in it (a row left out is not counted)."""
    out = []
    for r in rows:
        inst = (r.get("InstanceType") or "").strip()
        key = instance_key(provider, inst)
        if key != inst and key in kept:
            out.append(str(r["_line"]))
    return out


def _keep_region_lines(provider: str, rows: Iterable[Mapping[str, str]], result: ImportResult) -> None:
    """Keep in ``result.region_case_lines``, ``result.region_upper_lines`` and ``result.spot_above_lines`` only the
    rows whose region the overlay writes: a row of an instance type kept, in the region kept for it (h21b M1: a row left out was counted, as the
    instance-type line once did, h19b M5)."""
    kept = {r.instance: r.region for r in result.rows}
    written = {str(r["_line"]) for r in rows
               if kept.get(instance_key(provider, (r.get("InstanceType") or "").strip()), None)
               == region_case(provider, (r.get("Region") or "").strip())}
    result.region_case_lines = [line for line in result.region_case_lines if line in written]
    # the instance-type and spot-floor lines count the same rows as the region lines (h37b m8)
    result.instance_case_lines = [line for line in result.instance_case_lines if line in written]
    gpu_rows = {str(r["_line"]) for r in rows if not (r.get("InstanceType") or "").strip()}  # GCP's GPU rows
    result.spot_floor_lines = [line for line in result.spot_floor_lines if line in written or line in gpu_rows]
    result.region_upper_lines = [line for line in result.region_upper_lines if line in written]
    # so are the rows whose spot price was read as no offer: a row left out for another reason is not (h33b m7)
    result.spot_above_lines = [line for line in result.spot_above_lines if line in written]
    # a VM row of a zone without its GPU's row, of a machine type imported from other zones (one not imported at
    # all is said as left out, with why)
    imported = {str(r["_line"]) for r in rows if instance_key(provider, (r.get("InstanceType") or "").strip()) in kept}
    result.no_gpu_row_lines = [line for line in result.no_gpu_row_lines if line in imported]


def slug(provider: str, instance: str) -> str:
    return f"{provider}-" + re.sub(r"[^a-z0-9]+", "-", instance.lower()).strip("-")


def _cap_watch(path: Path, provider: str | None, gpu_ids: Iterable[str] | None, cap: int, source: str,
               as_of: str, names: OverlayGpuNames | None = None) -> Callable[[dict[str, str], int], None] | None:
    """The size cap counted while a file is read: each instance type with a GPU the catalog knows adds the
    least bytes its overlay entry can take (:func:`least_entry_bytes`), once; the reading stops with
    ImportProblem at the row where their sum passes ``cap``, rather than once every row has been priced.
    None for a provider the importer does not read (refused after the reading)."""
    if provider not in PROVIDERS:
        return None
    known = set(gpu_ids) if gpu_ids is not None else None
    whole = _loader_cap()
    limit = (f"{cap:,} bytes ({cap / 2**20:g} MiB, the most the catalog loader reads in one file" if cap >= whole
             else f"{cap:,} bytes (what is left of the {whole / 2**20:g} MiB the catalog loader reads in one file "
             "after the files imported before it")
    counted: set[str] = set()
    total = 0
    by_lower = aliases_by_lower()  # once per import, not per row

    def seen(r: dict[str, str], line: int) -> None:
        nonlocal total
        inst = instance_key(provider, (r.get("InstanceType") or "").strip())
        if not inst or inst in counted:
            return
        if provider == "gcp":
            if inst not in GCP_MACHINES:
                return
            acc, count = GCP_MACHINES[inst]
        else:
            acc = (r.get("AcceleratorName") or "").strip()
            given = _num(r.get("AcceleratorCount")) or 0.0
            count = int(given)
            if not acc or given != count or count <= 0 or not is_whole((r.get("AcceleratorCount") or "").strip()):
                return
        gid = _row_gpu(provider, inst, acc, r.get("GpuInfo") or "", known, names, by_lower)
        if gid is None:
            return
        counted.add(inst)
        if len(counted) > MAX_GPU_INSTANCE_TYPES:  # h33b N5: each kept one costs ~2 ms after the reading
            from planner.catalog.schema import MAX_CATALOG_ENTRIES

            raise ImportProblem(
                f"{path}: line {line}: more than {MAX_GPU_INSTANCE_TYPES:,} instance types with a GPU the catalog "
                f"knows (a cloud.yaml lists at most {MAX_CATALOG_ENTRIES} instances; a SkyPilot vms.csv gives a few "
                "hundred at most), so check that this is one, or split it")
        total += least_entry_bytes(provider, inst, gid, source=source, as_of=as_of)
        if total > cap:
            raise ImportProblem(
                f"{path}: the overlay would be over {limit}) already with the {len(counted):,} instance types with a "
                f"GPU the catalog knows up to line {line} (at least {total:,} bytes, were each kept); a SkyPilot "
                "vms.csv gives a few hundred GPU instance types, so check that this is one, or split it")

    return seen


def _loader_cap() -> int:
    from planner.core.infile import MAX_FILE_BYTES

    return MAX_FILE_BYTES


def import_file(path: Path, *, provider: str | None = None, region: str | None = None,
                gpu_ids: Iterable[str] | None = None, gpu_names: OverlayGpuNames | None = None,
                max_bytes: int | None = None, source: str = "",
                as_of: str = "", check_rows: bool = True,
                gpu_memory: Mapping[str, float] | None = None) -> ImportResult:
    """The instance rows of one SkyPilot ``vms.csv`` (see the module docstring).

    Args:
        provider: one of :data:`PROVIDERS` (default: :func:`detect_provider`).
        region: take this region rather than the cheapest US one.
        gpu_ids: the catalog's GPU ids (a GPU outside them is skipped; None: no check).
        gpu_names: an overlay's own GPUs by id and name (:func:`overlay_gpu_names`), matched when the alias
            table knows no GPU of that name.
        max_bytes: the most bytes the overlay's entries of this file may take (default: the catalog
            loader's cap on one file, :data:`planner.core.infile.MAX_FILE_BYTES`, 20 MiB): once the
            rows kept are sure to take more, the file is refused at once rather than after checking
            every row.
        source, as_of: the source text and date the overlay will give its rows (for their size; left
            empty, the size counted is a lower bound).
        check_rows: run the catalog loader's checks on each row (:func:`_loader_problem`), leaving out one
            it refuses; False for a caller that loads the whole overlay with the loader anyway and imports
            again with the check only when that load fails (planner catalog import-skypilot: each
            entry is then read once, not twice).
        gpu_memory: catalog GPU id -> its memory in GiB, which a RunPod GpuInfo's memory must match (within 10 %);
            None: not checked.

    Raises:
        ImportProblem: the file cannot be read (the module docstring), or its overlay would be over
            ``max_bytes``.
    """
    from planner.core.infile import MAX_FILE_BYTES

    cap = MAX_FILE_BYTES if max_bytes is None else max_bytes
    gpu_ids = list(gpu_ids) if gpu_ids is not None else None  # read twice: while reading, and after
    no_gpu: dict[str, list[str]] = {}  # instance type as written -> the lines of its rows without a GPU
    # rows without an accelerator only say "no GPU" (except GCP's VM rows): dropped as read, to keep memory low
    header, rows = read_rows(path, no_gpu=no_gpu,
                             drop_no_gpu=lambda head: (provider or detect_provider(path, head)) not in (None, "gcp"),
                             watch=lambda head: _cap_watch(path, provider or detect_provider(path, head), gpu_ids,
                                                           cap, source, as_of, gpu_names))
    given = provider
    provider = provider or detect_provider(path, header)
    if provider not in PROVIDERS:
        raise ImportProblem(f"{path}: cannot tell which provider the file is for (its header matches no layout of "
                            f"{', '.join(PROVIDERS)}); give --provider, or import only those clouds' vms.csv")
    by_header = header_provider(header)
    if by_header is not None and by_header != provider:  # rows would be labelled with the wrong cloud and id
        said = "--provider" if given else "its directory's name"
        raise ImportProblem(f"{path}: its header is {by_header}'s vms.csv layout ({','.join(header)}), but "
                            f"{said} says {provider}; the rows would be labelled {provider} with {by_header}'s "
                            f"prices. Import it as {by_header} (--provider {by_header}, or from a folder named "
                            f"{by_header}), or give {provider}'s own vms.csv")
    _check_columns(path, provider, header, "--provider" if given else "its directory's name")
    # rows that cannot be read: left out, with every row of their instance type (refused rather than priced
    # from the rows that remain)
    rows_read = len(rows) + sum(len(lines) for lines in no_gpu.values())  # those dropped as read too
    bad: dict[str, str] = {}
    spelled: dict[str, str] = {}  # instance_key -> the instance type as the file first writes it (h19b M5)
    for r in rows:
        if "_bad" in r:
            inst = (r.get("InstanceType") or "").strip()
            key = spelled.setdefault(instance_key(provider, inst), inst) if inst and not unsafe_problem(inst) \
                else f"the row on line {r['_line']}"
            bad.setdefault(key, r["_bad"])
    rows = [r for r in rows if "_bad" not in r]
    _check_layout(path, provider, header, rows)
    rows = _check_duplicates(path, provider, rows)
    result = ImportResult(rows_read=rows_read, unread_note=unread_columns_note(provider, header, rows))
    dropped: dict[str, list[tuple[str, str]]] = {}
    cells: dict[str, dict[str, str]] = {}  # instance key -> its counts and memory as written (h21b M4)
    zones, meta, lines = _zones(path, provider, rows, result, gpu_ids, spelled, dropped, cells, gpu_names,
                                gpu_memory)
    for inst in sorted(no_gpu):
        key = instance_key(provider, inst)
        result.skipped.setdefault(spelled.setdefault(key, inst), f"line {no_gpu[inst][0]}: no GPU")  # h22b M1
        dropped.setdefault(key, []).extend((line, "no GPU") for line in no_gpu[inst])
    for key, zs in zones.items():
        shown = spelled[key]
        result.skipped.pop(shown, None)
        for line, why in dropped.get(key, ()):  # a row left out beside rows that price it: counted (h20b N2)
            result.skipped[f"the row on line {line} of {shown}"] = why if why.startswith("line ") else \
                f"line {line}: {why}"
        if shown in bad:
            continue
        row = _pick(provider, key, zs, meta[key], region)
        if isinstance(row, str):
            result.skipped[shown] = row
            continue
        why = _row_refused(row, shown, check_rows, cells.get(key))
        if why is not None:
            result.skipped[shown] = f"line {lines[key]}: {why}"
            continue
        result.rows.append(row)
        result.entry_bytes += entry_bytes(row, source=source, as_of=as_of)
        if result.entry_bytes > cap:
            raise ImportProblem(
                f"{path}: the overlay would be over {cap:,} bytes ({cap / 2**20:g} MiB, the most the catalog "
                f"loader reads in one file) already with the {len(result.rows):,} instance types kept up to line "
                f"{lines[key]}; a SkyPilot vms.csv gives a few hundred GPU instance "
                "types, so check that this is one, or split it")
    result.skipped.update(bad)
    result.rows.sort(key=lambda x: x.id)
    left = {line for rows_of in dropped.values() for line, _ in rows_of}  # rows left out beside kept ones (h36b m10)
    result.instance_case_lines = [line for line in _case_lines(provider, rows, {r.instance for r in result.rows})
                                  if line not in left]
    _keep_region_lines(provider, rows, result)
    if region is not None:
        result.region_note = _region_option_note(provider, region, rows)
    _check_ids(path, result.rows, lines, spelled)
    return result


def _row_refused(row: Imported, shown: str, check_rows: bool, cells: Mapping[str, str] | None = None) -> str | None:
    """Why ``row`` is left out (:func:`_imported_problem`, and with ``check_rows`` :func:`_loader_problem`), or
    None; said of the instance type as the file writes it (``shown``: '=HYPERLINK("X")', not the lower-case
    '=hyperlink("x")' the overlay would have written, h19b M5), and of its counts and memory as written (``cells``,
    :func:`_imported_problem`'s ``written``; h21b M4)."""
    why = _imported_problem(row, cells) or (_loader_problem(row) if check_rows else None)
    if why is None or shown == row.instance:
        return why
    written = replace(row, instance=shown)
    return _imported_problem(written, cells) or (_loader_problem(written) if check_rows else None) or why


def _region_option_note(provider: str, region: str, rows: Sequence[Mapping[str, str]]) -> str | None:
    """Why ``--region`` names no region of the file, with what to give (import_summary.region_note), or None. A
    ``--region`` that is a zone's name of any form (skypilot_zones.zone_region: a Local Zone, a zone id, a RunPod
    data centre) is answered with the region it belongs to (h38b N6: 'us-east-1-bos-1a' was written as a region).
    The file's regions are those the import could write: a Region that is not ASCII (a lookalike), holds a
    control character or is a zone's name is never one, so never offered nor taken for the one asked (h38b m1: a
    lookalike 'KЅ' beside 'KR' in one zone hid KR, and 'uKwest' with U+212A was suggested)."""
    from planner.core.names import clip_text

    given = region.strip()
    if not given.isascii():  # a lookalike: the ASCII form hinted only where the file holds it (h40a N6)
        held_regions = sorted({region_case(provider, r["Region"].strip()) for r in rows
                               if r["Region"].strip().isascii() and region_problem(provider, r["Region"].strip()) is None})
        return foreign_region_note(given, provider, held_regions)
    of = zone_region(provider, given)
    if of is not None:
        what = f"an availability zone of region {of}" if of else "an availability zone's id"
        give = f"give --region {of}" if of else "give the region it is a zone of"
        return (f"--region {clip_text(given)!r} is no region of the file: it is {what}, and --region takes a region; "
                f"{give}.")
    held = [((r.get("AvailabilityZone") or "").strip(), region_case(provider, r["Region"].strip())) for r in rows
            if r["Region"].strip().isascii() and region_problem(provider, r["Region"].strip()) is None]
    return region_note(given, region_case(provider, given), held)


def _check_ids(path: Path, rows: Sequence[Imported], lines: Mapping[str, str], spelled: Mapping[str, str]) -> None:
    """Refuse two instance types kept that give one catalog id ('gpu_1x_h100_pcie' and 'GPU_1X_H100_PCIE' of a
    cloud whose instance types mix cases): neither can be chosen."""
    first: dict[str, Imported] = {}
    for row in rows:
        other = first.setdefault(row.id, row)
        if other is not row:
            a, b = sorted((other, row), key=lambda x: int(lines[x.instance]))
            at = f"{lines[a.instance]} and {lines[b.instance]}"
            raise ImportProblem(f"{path}: lines {at}: the instance types {_quoted(spelled[a.instance])} and "
                                f"{_quoted(spelled[b.instance])} both give the catalog id {row.id} (lower case, each "
                                "run of other characters than a-z and 0-9 as '-'), so one would replace the other",
                                hint=f"Remove or rename one of the two rows (lines {at}), then import the file again.")


def entry_bytes(row: Imported, *, source: str = "", as_of: str = "") -> int:
    """The UTF-8 bytes ``row``'s entry takes in an overlay (:func:`overlay_yaml`) with this source text and
    date (left empty: at the least, as any real one only adds bytes): its lines and their line feeds (the
    blank line between two entries not counted)."""
    return len("\n".join(_entry_lines(row, source, as_of)).encode("utf-8")) + 1


def least_entry_bytes(provider: str, instance: str, gpu: str, *, source: str = "", as_of: str = "") -> int:
    """The fewest bytes an entry of ``instance`` (with ``gpu``) can take in an overlay, whatever its figures
    (:func:`entry_bytes` of the entry with each of them at its shortest: 1 GPU, 1 vCPU, '1 GiB', prices of 3
    characters ('1.0': the shortest a float is written, :func:`yaml_float`), a spot price rather than 'null',
    no spot range, an empty region, no notes): what an instance type adds to the overlay at the least, known
    from one row, before its regions are compared."""
    least = Imported(id=slug(provider, instance), provider=provider, instance=instance, gpu=gpu, gpu_count=1, vcpus=1,
                     memory_gib=1.0, usd_per_hour=1.0, region="", spot_usd_per_hour=1.0)
    return entry_bytes(least, source=source, as_of=as_of)


def _loader_problem(row: Imported) -> str | None:
    """Why the catalog loader's own checks of a cloud.yaml entry
    (planner.catalog.loader.check_entry) refuse ``row`` as :func:`overlay_yaml` writes it, or None. The
    entry is the mapping a parse of its text gives (:func:`_entry_mapping`; a YAML parse of each entry took
    most of an import's time); the written overlay is loaded whole before it is written
    (planner.cli.catalog.check_overlay)."""
    from planner.catalog.loader import check_entry
    from planner.core.errors import CatalogError
    from planner.core.names import clip_text

    try:
        check_entry("instances", _entry_mapping(row, "SkyPilot catalog", "2000-01"))
    except CatalogError as exc:
        entry = (exc.entry or "").strip()
        own = f"({row.id})"
        if entry == own or entry.startswith(own + "."):  # the row is named beside the reason: its field, not its id,
            field = entry[len(own) + 1:]  # so that rows refused alike are one kind of reason (h32b M1, M5)
            said = f"its {field}" if field else "it"
            hint = f" {exc.hint}" if exc.hint else ""
            text = f"{exc.problem}.{hint}".replace("\r", "\\r").replace("\n", "\\n")
            return f"the catalog would refuse {said}: {text}"
        # another entry's id, as the entry's name, clipped as the reason clips it (h29b M2)
        return f"the catalog would refuse it: {exc.one_line().replace(own, f'({clip_text(row.id, 40)})', 1)}"
    return None


def source_problem(source: str) -> tuple[str, str | None] | None:
    """Why the catalog loader would refuse ``source`` as the ``source`` of an imported row, as (problem, the
    loader's hint or None); None when it reads it: the loader's own check of an entry holding it
    (planner.catalog.loader.check_entry: a control, bidirectional, invisible or private-use character, a lone
    surrogate, ...), after its length (at most :data:`planner.catalog.texts.MAX_FREE_TEXT_CHARS` characters,
    counted in NFC as the loader counts; checked first, as the loader's cap on any text, 32,000 characters, would
    otherwise answer a longer one with a hint about files). Used for ``--source`` and the default source, so that
    neither makes an overlay its own loader refuses (h16b #1, 13l, 13m)."""
    from planner.catalog.loader import check_entry
    from planner.catalog.texts import MAX_FREE_TEXT_CHARS
    from planner.core.errors import CatalogError
    from planner.core.names import composed_length

    count = composed_length(source, MAX_FREE_TEXT_CHARS)
    if count > MAX_FREE_TEXT_CHARS:
        return (f"is {count:,} characters long; a catalog row's source is at most {MAX_FREE_TEXT_CHARS:,} characters "
                "(the catalog loader's cap)", None)
    row = Imported(id="aws-g6-xlarge", provider="aws", instance="g6.xlarge", gpu="l4", gpu_count=1, vcpus=4,
                   memory_gib=16.0, usd_per_hour=1.0, region="us-east-1")
    try:
        check_entry("instances", _entry_mapping(row, source, "2000-01"))
    except CatalogError as exc:
        return exc.problem, exc.hint
    return None


def _imported_problem(row: Imported, written: Mapping[str, str] | None = None) -> str | None:
    """Why the catalog loader would refuse ``row`` (planner.catalog.cloud.INSTANCE_FIELDS, the shared
    checks of planner.catalog.schema), or None: a text with a control, bidirectional or line-break
    character, an id that is not one, a count, size or price outside the loader's bounds. ``written``: the
    row's AcceleratorCount, vCPUs and MemoryGiB cells as the file writes them (keys 'gpu_count', 'vcpus',
    'memory'), which a message quotes (h21b M4: '99999999999999999999', not '1e+20'), an empty one said as
    empty rather than as 0."""
    from planner.catalog.cloud import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
    from planner.catalog.schema import ID_PATTERN, MAX_HOST_MEMORY_BYTES, MIN_MEMORY_BYTES

    for what, text in (("instance type", row.instance), ("region", row.region)):
        why = unsafe_problem(text)
        if why:
            return f"the {what} {why}"
    foreign = _first_foreign(row.instance)
    if foreign is not None:  # the id keeps only a-z, 0-9 and '-': 'gpu_1x_a10\uff21' would be named gpu-1x-a10
        return (f"the instance type holds {foreign}, not ASCII as the clouds' instance types are, and the catalog "
                "id would drop it")
    if not row.region.isascii():
        return _foreign_region(row.region)
    if not ID_PATTERN.match(row.id):
        return f"the instance type gives no catalog id ({_quoted(row.id)})"
    said = dict(written or {})
    empty = [col for key, col in (("vcpus", "vCPUs"), ("memory", "MemoryGiB")) if said.get(key, "0") == ""]
    if empty:  # read as 0 otherwise (h21b M4)
        return (f"column {empty[0]} is empty" if len(empty) == 1 else "columns vCPUs and MemoryGiB are empty") + \
            " (the catalog needs an instance's vCPUs and memory)"
    if not 1 <= row.gpu_count <= 64:
        return f"{said.get('gpu_count') or row.gpu_count} GPUs, outside the catalog's 1 to 64"
    if not 1 <= row.vcpus <= 4096:
        return f"{said.get('vcpus') or row.vcpus} vCPUs, outside the catalog's 1 to 4096"
    if not MIN_MEMORY_BYTES <= row.memory_gib * 2**30 <= MAX_HOST_MEMORY_BYTES or \
            _memory_beyond(said.get("memory", ""), MIN_MEMORY_BYTES, MAX_HOST_MEMORY_BYTES):
        return (f"memory {said.get('memory') or _memory_text(row.memory_gib)} GiB, outside the catalog's "
                f"{MIN_MEMORY_BYTES / 2**30:g} to {MAX_HOST_MEMORY_BYTES / 2**30:g} GiB")
    prices = [row.usd_per_hour, row.spot_usd_per_hour, *(row.spot_usd_per_hour_range or ())]
    if any(p is not None and p > MAX_USD_PER_HOUR for p in prices):
        return f"an hourly price above the catalog's largest, {MAX_USD_PER_HOUR:,} USD/h"
    low = min((p for p in prices if p is not None), default=MIN_USD_PER_HOUR)
    if low < MIN_USD_PER_HOUR:
        return f"an hourly price of {low:g} USD/h, less than any real one (at least {MIN_USD_PER_HOUR:g} USD/h)"
    return None


def _memory_beyond(text: str, low: int, high: int) -> bool:
    """Whether a MemoryGiB cell's digits (``text``) are outside ``low`` to ``high`` bytes, whatever float they round
    to (h34b N1: '0.24999999999999999999' read as 0.25 GiB and '65536.0000000000001' as 65536 were written as the
    bounds); False for no digits Decimal reads (the float is judged)."""
    from decimal import Decimal

    from planner.core.units import written_decimal

    exact = written_decimal(text)
    return exact is not None and not Decimal(low) / 2**30 <= exact <= Decimal(high) / 2**30


def _spot_zones(zs: Sequence[_Zone]) -> tuple[list[_Zone], list[_Zone]]:
    """(zones with spot capacity: a spot price below on-demand; the regular ones among them, AWS
    local zones left out unless there are only those), as the module docstring's spot rule reads them."""
    spots = [z for z in zs if (z.offer if z.offer is not None else  # by the digits (h33b m7)
                               spot_below(z.spot, z.spot_text, z.price, z.price_text))]
    return spots, [z for z in spots if not _AWS_LOCAL_ZONE.match(z.zone)] or spots


def _regular_spot(zs: Sequence[_Zone]) -> float:
    """The lowest spot price of a region's regular zones (inf when none): the tie-break between
    regions at one on-demand price."""
    return min((float(z.spot) for z in _spot_zones(zs)[1]), default=float("inf"))  # type: ignore[arg-type]


def _foreign_region(region: str) -> str:
    """Why a region holding a character other than ASCII is not imported: the clouds name regions in ASCII
    (us-east-1, us-central1, eastus), so 'us-\u0435ast-1' (Cyrillic 'е') is a lookalike, which would pass as
    a US region and be listed under a name no cloud has; a control character (C1's U+009B) is said as one
    (planner.core.names.unsafe_problem), not as a lookalike (h19b M6)."""
    why = unsafe_problem(region)
    if why:
        return f"the region {_quoted(region)} {why}"
    return (f"the region {_quoted(region)} holds {_first_foreign(region)}, not ASCII as the clouds' regions are (a "
            "lookalike of another region)")


def _pick(provider: str, inst: str, zs: list[_Zone], meta: tuple[str, int, int, float],
          region: str | None) -> Imported | str:
    ascii_zones = [z for z in zs if z.region.isascii()]  # a lookalike region never competes (_foreign_region)
    if not ascii_zones:  # said with the line of the first row (h22b M1)
        return (f"line {zs[0].line}: " if zs[0].line else "") + _foreign_region(zs[0].region)
    at = f"line {zs[0].line}: " if zs[0].line else ""  # the instance's first row, as every reason names (h31b M2)
    zs = ascii_zones
    if region is not None:
        cands = [z for z in zs if z.region == region_case(provider, region.strip())]  # as _noted writes them
        if not cands:
            return f"{at}not offered in region {_quoted(region)}"
    else:
        cands = [z for z in zs if is_us(provider, z.region)]
        if not cands:
            odd = next((z for z in zs if not _REGION_NAME.fullmatch(z.region)), None)
            if odd is not None:  # 'us east 4' is no region of any cloud, not one outside the US (h31b M2)
                return (f"line {odd.line}: " if odd.line else at) + _malformed_region(odd.region_text or odd.region)
            zoned = next((z for z in zs if _US_ZONE.fullmatch(z.region.lower())), None)
            if zoned is not None:  # 'us-east-1a' in the Region column (h34b m8): a zone's name, said so
                of = re.sub(r"-?[a-z]$", "", zoned.region.lower())  # us-central1-b: of us-central1 (h37b m5)
                return ((f"line {zoned.line}: " if zoned.line else at) + f"the region {_quoted(zoned.region)} is an "
                        f"availability zone's name (a zone of {of}), not a region's: are the Region "
                        "and AvailabilityZone columns swapped?")
            return f"{at}not offered in a US region"
    by_region: dict[str, list[_Zone]] = {}
    for z in cands:
        by_region.setdefault(z.region, []).append(z)
    if region is None:
        floor = {reg: min(z.price for z in zs) for reg, zs in by_region.items()}
        lo_reg, hi_reg = min(floor, key=floor.__getitem__), max(floor, key=floor.__getitem__)
        if floor[hi_reg] > MAX_US_REGION_RATIO * floor[lo_reg]:
            return (f"{at}US regions' on-demand prices disagree ({floor[hi_reg] / floor[lo_reg]:.1f}x: ${floor[lo_reg]:g} "
                    f"in {lo_reg}, ${floor[hi_reg]:g} in {hi_reg}): not list prices; check the provider's pricing "
                    "page, or give --region")
    best = min(by_region, key=lambda reg: (min(z.price for z in by_region[reg]), _regular_spot(by_region[reg]), reg))
    rz = by_region[best]
    price = min(z.price for z in rz)
    cheapest_text = next(z.price_text for z in rz if z.price == price)
    spots, regular = _spot_zones(rz)
    # a zone's spot below its own on-demand price but not below the region's, which is written (h35b: $5 spot
    # beside $1 on-demand): no discount on the written price, so no offer there
    dear = sorted({z.zone or z.region for z in spots
                   if not spot_below(z.spot, z.spot_text, price, cheapest_text)})
    if dear:
        spots = [z for z in spots if spot_below(z.spot, z.spot_text, price, cheapest_text)]
        regular = [z for z in regular if z in spots] or [z for z in spots if not _AWS_LOCAL_ZONE.match(z.zone)] \
            or spots
    spot = min((z.spot for z in regular), default=None)  # type: ignore[type-var]
    lo = min((z.spot for z in spots), default=None)  # type: ignore[type-var]
    hi = max((z.spot for z in spots), default=None)  # type: ignore[type-var]
    rng = (lo, hi) if lo is not None and hi is not None and lo < hi else None
    beyond = next(filter(None, [*(_written_bound(z.price_text, z.line) for z in rz if z.price == price),
                                *(_written_bound(z.spot_text, z.line) for z in spots)]), None)
    if beyond is not None:  # by the digits written: '10000.000000000000001' is above the cap, its float not (h25b M2)
        return beyond
    gid, count, vcpus, mem = meta
    notes = []
    if provider == "gcp":
        cheapest = min(rz, key=lambda z: z.price)
        text = f"Cheapest US region in the file. Derived: {cheapest.parts}" if region is None else \
            f"Region {region}. Derived: {cheapest.parts}"
        spot_zone = min(regular, key=lambda z: z.spot) if regular else None  # type: ignore[arg-type, return-value]
        notes.append(text + (f"; spot {spot_zone.spot_parts}." if spot_zone is not None else "; no spot price."))
    dearest = max(z.price for z in rz)
    if dearest > price:  # the region's price is its cheapest zone's (module docstring), said (h34b N5)
        notes.append(f"Zones of {best} differ in on-demand price (${price:g} to ${dearest:g}); the lowest is "
                     "written.")
    if dear:
        notes.append(f"Spot prices not below the written on-demand ${price:g} left out (zone "
                     f"{', '.join(_quoted(z) for z in dear[:3])}{', ...' if len(dear) > 3 else ''}).")
    local = [z.zone for z in spots if _AWS_LOCAL_ZONE.match(z.zone)]
    if local and rng is not None and lo is not None and lo < (spot or lo):
        notes.append(f"The low end of the spot range is from local zone {', '.join(sorted(set(local)))}, not a "
                     "regular availability zone; spot_usd_per_hour is the regular zones' lowest.")
    return Imported(id=slug(provider, inst), provider=provider, instance=inst, gpu=gid, gpu_count=count, vcpus=vcpus,
                    memory_gib=mem, usd_per_hour=price, region=best, spot_usd_per_hour=spot,
                    spot_usd_per_hour_range=rng, verification="D" if provider == "gcp" else "V",
                    notes=" ".join(notes))


def _written_bound(text: str, line: str) -> str | None:
    """Why an hourly price written ``text`` (on CSV line ``line``) is outside the catalog's bounds
    (planner.catalog.cloud.MIN_USD_PER_HOUR to MAX_USD_PER_HOUR), judged by its digits, not the float they round
    to (h25b M2: '0.00099999999999999999' reads as 0.001, '10000.000000000000001' as 10000.0), or None: within
    them, 0, or not read by Decimal (an exponent beyond Decimal's: its float is judged, :func:`_imported_problem`)."""
    from decimal import Decimal

    from planner.catalog.cloud import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
    from planner.core.units import written_decimal

    from planner.core.names import clip_text

    try:
        rough = float(text)
    except ValueError:
        rough = None
    if rough is not None and 2 * MIN_USD_PER_HOUR <= rough <= MAX_USD_PER_HOUR / 2:
        return None  # well inside the bounds: its digits cannot be outside them (h33b N5: cost)
    exact = written_decimal(text)
    where = f"line {line}: " if line else ""
    shown = clip_text(text, 40)  # as written, cut after 40 characters with its length (h33b m5: 300 digits echoed)
    if exact is not None and exact > MAX_USD_PER_HOUR:
        return f"{where}an hourly price of {shown} USD/h, above the catalog's largest, {MAX_USD_PER_HOUR:,} USD/h"
    if exact is not None and 0 < exact < Decimal(str(MIN_USD_PER_HOUR)):
        return f"{where}an hourly price of {shown} USD/h, less than any real one (at least {MIN_USD_PER_HOUR:g} USD/h)"
    return None


def _memory_text(gib: float) -> str:
    """A memory size in GiB as written: '16' or '0.5' where that is the number, else its full repr."""
    short = f"{gib:g}"
    return short if float(short) == gib else repr(float(gib))


def yaml_float(x: float) -> str:
    """``x`` as a YAML float the catalog loader reads back as the same number: Python's shortest repr, with
    a '.0' added to a bare mantissa ('1e-10' -> '1.0e-10'; YAML 1.1, which PyYAML reads, takes
    '[-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?' for a float and '1e-10' for text)."""
    text = repr(float(x))
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


#: A character beyond U+FFFF (an emoji, CJK Extension B): JSON writes it as a surrogate pair ('\ud83d\ude00'),
#: which YAML reads as two lone surrogates (PyYAML decodes each '\u' escape alone).
_ASTRAL = re.compile("([\U00010000-\U0010ffff])")


def yaml_text(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that the catalog loader reads back as ``text``: JSON's escapes
    (ASCII only; a character of the Basic Multilingual Plane as '\\u4e2d'), and a character beyond U+FFFF as
    its 32-bit escape '\\U0001f600' (the YAML 1.1 and 1.2 specifications, "Escape Sequences", production
    ns-esc-32-bit: ``\\U`` and 8 hexadecimal digits), never as the surrogate pair JSON writes (h16b #1: an emoji
    in ``--source`` or in the file's path made an overlay that its own loader refused)."""
    parts = _ASTRAL.split(text)
    return '"' + "".join(f"\\U{ord(p):08x}" if i % 2 else json.dumps(p)[1:-1] for i, p in enumerate(parts)) + '"'


def stale_keys(rows: Iterable[Imported], shipped: Iterable[Any]) -> dict[str, tuple[str, ...]]:
    """The keys each imported row must clear (``key: null``) in its overlay entry: an overlay entry replaces the
    shipped entry of its id key by key (docs/catalog.md, "Overlays"), so a shipped key the import does not write
    would survive onto the imported machine (h36b N8: an A10G's ``gpu_memory_usable``, 22,888 MiB, on an H100).

    Args:
        rows: the imported rows.
        shipped: the shipped catalog's :class:`planner.catalog.cloud.CloudInstance` records.

    Returns:
        id -> keys to write as null. The import writes every key but ``gpu_memory_usable`` (``notes`` is dropped by
        the price rule when not written), so that is the one: cleared unless the shipped entry has the same GPU and
        count, whose driver-reported memory is still true.
    """
    by_id = {s.id: s for s in shipped}
    out: dict[str, tuple[str, ...]] = {}
    for r in rows:
        s = by_id.get(r.id)
        if s is not None and s.gpu_memory_usable_bytes is not None and (s.gpu, s.gpu_count) != (r.gpu, r.gpu_count):
            out[r.id] = ("gpu_memory_usable",)
    return out


def _entry_lines(r: Imported, source: str, as_of: str, cleared: Sequence[str] = ()) -> list[str]:
    """The lines of ``r``'s entry in an overlay (:func:`overlay_yaml`), with this source text and date, and the
    keys ``cleared`` written as null (:func:`stale_keys`)."""
    q = yaml_text
    out = [f"  - id: {r.id}", f"    provider: {r.provider}", f"    instance: {q(r.instance)}",
           f"    gpu: {r.gpu}", f"    gpu_count: {r.gpu_count}", f"    vcpus: {r.vcpus}",
           f"    memory: {_memory_text(r.memory_gib)} GiB", f"    usd_per_hour: {yaml_float(r.usd_per_hour)}",
           "    spot_usd_per_hour: " + ('null' if r.spot_usd_per_hour is None else yaml_float(r.spot_usd_per_hour)),
           "    spot_usd_per_hour_range: " + ("null" if r.spot_usd_per_hour_range is None else
                                              f"[{yaml_float(r.spot_usd_per_hour_range[0])}, "
                                              f"{yaml_float(r.spot_usd_per_hour_range[1])}]"),
           f"    region: {q(r.region)}", f"    source: {q(source)}", f"    as_of: {q(as_of)}",
           f"    verification: {r.verification}"]
    if r.notes:
        out.append(f"    notes: {q(r.notes)}")
    out += [f"    {k}: null" for k in cleared]
    return out


def _entry_mapping(r: Imported, source: str, as_of: str) -> dict[str, object]:
    """``r``'s entry as the catalog loader gets it from :func:`overlay_yaml`'s text (what a YAML safe load of
    :func:`_entry_lines` gives: each float written by :func:`yaml_float` reads back as itself, each quoted
    text as itself, the memory as its text with its unit), built without a parse; tests/test_safety7c.py
    compares the two on every shipped test file's rows."""
    entry: dict[str, object] = {
        "id": r.id, "provider": r.provider, "instance": r.instance, "gpu": r.gpu, "gpu_count": r.gpu_count,
        "vcpus": r.vcpus, "memory": f"{_memory_text(r.memory_gib)} GiB", "usd_per_hour": float(r.usd_per_hour),
        "spot_usd_per_hour": None if r.spot_usd_per_hour is None else float(r.spot_usd_per_hour),
        "spot_usd_per_hour_range": None if r.spot_usd_per_hour_range is None else
        [float(r.spot_usd_per_hour_range[0]), float(r.spot_usd_per_hour_range[1])],
        "region": r.region, "source": source, "as_of": as_of, "verification": r.verification}
    if r.notes:
        entry["notes"] = r.notes
    return entry


def overlay_yaml(rows: Sequence[Imported], *, source: Mapping[str, str], as_of: str, generated: str,
                 cleared: Mapping[str, Sequence[str]] | None = None) -> str:
    """A ``cloud.yaml`` overlay holding ``rows`` (source: provider -> the source text of its rows; ``cleared``: id ->
    the shipped keys its entry writes as null, :func:`stale_keys`)."""
    out = [f"# Cloud instances imported by `planner catalog import-skypilot` ({generated}).",
           "# Schema: catalog/README.md (cloud.yaml); an entry whose id is a shipped one replaces it key by key.",
           "schema_version: 1", "instances:"]
    for r in rows:
        out += _entry_lines(r, source[r.provider], as_of, (cleared or {}).get(r.id, ()))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


__all__ = ["GCP_MACHINES", "GPU_NAMES", "ImportProblem", "ImportResult", "Imported", "LAYOUTS", "LOWER_CASE_INSTANCES",
           "MAX_COLUMNS", "MAX_CSV_BYTES", "NUMERIC_COLUMNS", "PROVIDERS", "REQUIRED_COLUMNS", "detect_provider",
           "gpu_id", "import_file", "instance_key", "is_us", "left_out_lines", "overlay_yaml", "read_rows", "slug",
           "source_problem", "stale_keys", "yaml_text"]
