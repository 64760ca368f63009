"""Rentable cloud instances (``cloud.yaml`` ``instances:``): the record, its keys, its checks and warnings.

An instance's ``gpu`` is a GPU id of ``gpus.yaml``; its ``memory`` is binary (the providers' GiB); a
``spot_usd_per_hour_range`` holds its ``spot_usd_per_hour``; a spot price above on-demand loads with
a :class:`~planner.catalog.schema.CatalogWarning`. Importing this module does no work and it keeps
no state.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from planner.core.fields import Entry, _kind
from planner.core.names import clip_text
from planner.catalog.gpus import GPU_BINARY, MAX_GPU_MEMORY_BYTES
from planner.catalog.schema import (MAX_HOST_MEMORY_BYTES, MIN_MEMORY_BYTES, CatalogWarning, Field, Kind, Merged,
                                    Parsed, later, read_ascii_text, read_int, read_positive, read_size,
                                    read_label, read_text)

#: Upper bound beyond which an hourly price is taken for a typo (a wrong unit, an extra digit).
MAX_USD_PER_HOUR = 10_000
#: Lower bound below which an hourly price is taken for a typo or a wrong unit (a price per second, or 1e-300,
#: which printed percentages of 300 digits): a tenth of a cent per instance-hour, 200 times below the cheapest
#: GPU instance-hour in the catalog (aws-g4dn-xlarge spot, $0.20/h, catalog/cloud.yaml with its source) and
#: below any GPU rental we know of; a per-second price of that instance ($0.526/h is $0.000146/s) is below it.
MIN_USD_PER_HOUR = 0.001


@dataclass(frozen=True, slots=True)
class CloudInstance:
    """A rentable cloud instance (``cloud.yaml`` ``instances:``).

    Attributes:
        gpu: a :class:`~planner.catalog.gpus.Gpu` id.
        gpu_memory_usable_bytes: per GPU, as the provider reports it, bytes (None if not given).
        memory_bytes: host RAM, bytes.
        usd_per_hour: on-demand price of the whole instance, USD per hour.
        spot_usd_per_hour: spot price, USD per hour, when given.
        spot_usd_per_hour_range: (low, high) spot price across the region's availability zones, USD
            per hour, when given; ``spot_usd_per_hour`` lies within it (checked on load).
    """

    id: str
    provider: str
    instance: str
    gpu: str
    gpu_count: int
    vcpus: int
    memory_bytes: int
    usd_per_hour: float
    region: str
    source: str
    as_of: str
    gpu_memory_usable_bytes: int | None = None
    spot_usd_per_hour: float | None = None
    spot_usd_per_hour_range: tuple[float, float] | None = None
    notes: str | None = None
    verification: str | None = None


#: The hint of a malformed ``spot_usd_per_hour_range``.
_SPOT_RANGE_HINT = ("Write the lowest and highest zone's spot price in the region, USD per instance-hour, e.g. "
                    "spot_usd_per_hour_range: [0.2, 0.216].")


def _spot_range(e: Entry, k: str) -> tuple[float, float]:
    """[low, high]: two plain numbers, MIN_USD_PER_HOUR <= low <= high <= MAX_USD_PER_HOUR (USD per hour)."""
    value = e.raw(k)
    if not isinstance(value, (list, tuple)):
        raise e.error(f"must be a list of two prices [low, high], not {_kind(value)}", k, _SPOT_RANGE_HINT)
    if len(value) != 2:
        raise e.error(f"must hold two prices [low, high], not {len(value)}", k, _SPOT_RANGE_HINT)
    for x in value:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise e.error(f"must hold two numbers, not {_kind(x)}", k, _SPOT_RANGE_HINT)
    low, high = float(value[0]), float(value[1])
    if low <= 0:
        raise e.error(f"low must be more than 0, not {value[0]!r}", k, _SPOT_RANGE_HINT)
    if low < MIN_USD_PER_HOUR:
        raise e.error(f"low {value[0]!r} USD/h is less than any real hourly price (at least {MIN_USD_PER_HOUR:g} "
                      "USD/h)", k, "Check for a missing digit or a wrong unit.")
    if low > high:
        raise e.error(f"low {value[0]!r} is more than high {value[1]!r}", k,
                      f"Write the lowest zone's price first: [{value[1]!r}, {value[0]!r}].")
    if high > MAX_USD_PER_HOUR:
        raise e.error(f"{value[1]!r} USD/h is more than any real hourly price ({MAX_USD_PER_HOUR:,} USD/h)", k,
                      "Check for an extra digit or a wrong unit.")
    return low, high


#: The hint for a ``memory`` written in decimal units (:func:`~planner.catalog.schema.read_size`'s
#: ``binary``): virtual machines' RAM is whole GiB, whatever the label says.
_CLOUD_BINARY = ("AWS and Azure list instance memory in GiB, and Google Cloud's 'GB' is 2^30 bytes, so "
                 "'{number} {unit}' there is {number} {binary_unit}")


#: The clouds whose region names are all lower case, as their APIs take them: AWS 'us-east-1' (AWS General
#: Reference, "AWS service endpoints", Regions table), Google Cloud 'us-central1' (Compute Engine
#: documentation, "Regions and zones"), Azure 'eastus' (``az account list-locations``, its "name" field),
#: Lambda 'us-east-1' (Lambda Cloud API, ``/instance-types`` "regions_with_capacity_available"). RunPod's are
#: country codes in upper case ('US'), as SkyPilot's catalog writes them.
LOWER_CASE_REGIONS = ("aws", "gcp", "azure", "lambda")
#: The clouds whose regions are upper-case country codes ('US', 'CA'; SkyPilot's catalogs/v8/runpod/vms.csv
#: Region column, as RunPod's API names a data centre's country): a hand-written 'us' would not be selected by
#: ``costs.regions: [US]``.
UPPER_CASE_REGIONS = ("runpod",)
#: A region of each cloud in :data:`LOWER_CASE_REGIONS` and :data:`UPPER_CASE_REGIONS`, as they name them (the sources
#: given there).
_REGION_EXAMPLES = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus", "lambda": "us-east-1", "runpod": "US"}


def region_case(provider: str, region: str) -> str:
    """``region`` in the case ``provider`` names its regions: lower case for :data:`LOWER_CASE_REGIONS`, upper
    case for :data:`UPPER_CASE_REGIONS`, as written otherwise (and for a region not in ASCII, a lookalike left
    as it is for the importer's own reason)."""
    if not region.isascii():
        return region
    if provider in LOWER_CASE_REGIONS:
        return region.lower()
    return region.upper() if provider in UPPER_CASE_REGIONS else region


#: The providers the shipped catalog and ``import-skypilot`` name (planner.catalog.skypilot_layout.PROVIDERS):
#: a hand-written provider that differs from one of them only in case, blanks, width or a lookalike letter is
#: refused with a hint naming it (``costs.providers: [aws]`` would silently leave such a row out).
KNOWN_PROVIDERS = ("aws", "gcp", "azure", "lambda", "runpod")


def _known_provider(value: str) -> str | None:
    """The known provider ``value`` stands for in another case, width (NFKC: full-width 'ａｗｓ') or with blanks
    around it, or with a lookalike letter in place of an ASCII one (Cyrillic 'а' in 'аws': each non-ASCII
    letter may stand for any one letter, and one known provider must match), else None."""
    import re
    import unicodedata

    folded = unicodedata.normalize("NFKC", value).strip().lower()
    if folded in KNOWN_PROVIDERS:
        return folded
    pattern = "".join(re.escape(c) if c.isascii() else "[a-z]" for c in folded)
    matches = [p for p in KNOWN_PROVIDERS if re.fullmatch(pattern, p)]
    return matches[0] if len(matches) == 1 else None


def _provider(e: Entry, k: str) -> str:
    """A provider as ``costs.providers`` names it: lower-case ASCII letters, digits, '-', '_' and '.', a letter or
    digit first (``coreweave``, ``lambda``); one
    of :data:`KNOWN_PROVIDERS` in another form gets it as the hint."""
    value = read_text(e, k)
    bad = next((ch for ch in value if not (ch.isascii() and ch.isprintable())), None)
    if bad is not None:
        from planner.core.names import char_name

        problem = f"{value!a} holds {char_name(bad)}, not a printable ASCII character"
    elif value != value.strip():
        problem = f"{value!r} has a blank at its {'start' if value[0].isspace() else 'end'}"
    elif value != value.lower():
        problem = f"{value!r} has upper-case letters"
    elif (odd := next((ch for ch in value if not (ch.isalnum() or ch in "-_.")), None)) is not None or \
            not value[:1].isalnum():
        # '=1+1' (h35b): no provider is named so, and a leading '=', '+', '-' or '@' is a spreadsheet formula
        problem = (f"{value!r} holds {odd!r}, not a letter, digit, '-', '_' or '.'" if odd else
                   f"{value!r} starts with {value[:1]!r}, not a letter or digit")
    else:
        return value
    known = _known_provider(value)
    hint = (f"Write provider: {known!r}." if known else
            "Write it in lower-case ASCII letters and digits, as costs.providers names it, e.g. 'aws'.")
    raise e.error(f"{problem}; a provider is written in lower-case ASCII (costs.providers would not select this "
                  "row)", k, hint)


#: An instance type as the clouds name them: ASCII letters, digits, '-', '_' and '.' (AWS 'g6.xlarge', Google Cloud
#: 'a2-highgpu-1g', Azure 'Standard_NC24ads_A100_v4', Lambda 'gpu_1x_a10', RunPod '1x_A100-80GB_SECURE', and in
#: SkyPilot's other v8 files OCI 'BM.GPU.H100.8', Shadeform 'massedcompute_A6000x8', Vast '1x-RTX_4090-32-65536';
#: every row of the shipped catalog/cloud.yaml): '=1+1' or '[r](http://e)' names no instance (h16b 13d).
_INSTANCE_TEXT = re.compile(r"[A-Za-z0-9._-]+")
#: A region as the clouds name them: the same characters ('us-east-1', 'us-central1', 'eastus', 'US'; every row of the
#: shipped catalog/cloud.yaml, and SkyPilot's v8 Shadeform file, 'kansascity-usa-1'), with words separated by one
#: blank or ', ' only as SkyPilot's v8 Vast file writes a host's geolocation ('Texas, US, NA', 'British Columbia, CA,
#: NA'); no '=', '+', brackets, ':' or '/' (h16b 13d: '=1+1' and '[r](http://e)' loaded and were printed).
_REGION_TEXT = re.compile(r"[A-Za-z0-9._-]+(?:,? [A-Za-z0-9._-]+)*")
_IDENT_CHARS = "letters, digits, '-', '_' and '.'"


def _first_odd(value: str, allowed: str) -> str | None:
    """The first character of ``value`` (ASCII) that is not a letter, a digit or in ``allowed``, quoted; None when
    there is none."""
    bad = next((c for c in value if not (c.isalnum() or c in allowed)), None)
    return None if bad is None else repr(bad)


def _instance(e: Entry, k: str) -> str:
    """An instance type (:data:`_INSTANCE_TEXT`), after :func:`~planner.catalog.schema.read_ascii_text`.

    Raises:
        CatalogError: naming the first character out of place."""
    value = read_ascii_text(e, k)
    if _INSTANCE_TEXT.fullmatch(value):
        return value
    raise e.error(f"{value!r} holds {_first_odd(value, '._-')}; an "
                  f"instance type is {_IDENT_CHARS}, as the clouds name them (g6.xlarge, a2-highgpu-1g, "
                  "Standard_NC24ads_A100_v4)", k,
                  "Write it as the provider's pricing page or SkyPilot's vms.csv does (e.g. instance: g6.xlarge).")


def _region(e: Entry, k: str) -> str:
    """A region (:data:`_REGION_TEXT`), after :func:`~planner.catalog.schema.read_ascii_text`.

    Raises:
        CatalogError: naming the first character out of place."""
    value = read_ascii_text(e, k)
    if _REGION_TEXT.fullmatch(value):
        return value
    odd = _first_odd(value, "._-, ") or "blanks or commas out of place"
    raise e.error(f"{value!r} holds {odd}; a region is {_IDENT_CHARS}, as the clouds name them "
                  "(us-east-1, us-central1, eastus, US), its words separated by one blank or ', ' only in a "
                  "geolocation such as SkyPilot's Vast file writes ('Texas, US, NA')", k,
                  "Write it as the provider names it (e.g. region: us-east-1).")


#: ``cloud.yaml`` keys besides the common ones.
INSTANCE_FIELDS: dict[str, Field] = {
    "provider": Field(_provider),
    "instance": Field(_instance),
    "gpu": Field(read_label),
    "gpu_count": Field(read_int(1, 64)),
    "gpu_memory_usable": Field(read_size(MAX_GPU_MEMORY_BYTES, "GPU memory", lo=MIN_MEMORY_BYTES, binary=GPU_BINARY),
                               required=False,
                               attr="gpu_memory_usable_bytes"),
    "vcpus": Field(read_int(1, 4096)),
    "memory": Field(read_size(MAX_HOST_MEMORY_BYTES, "host memory", lo=MIN_MEMORY_BYTES, binary=_CLOUD_BINARY),
                    attr="memory_bytes"),
    "usd_per_hour": Field(read_positive(MAX_USD_PER_HOUR, "USD/h", "hourly price", lo=MIN_USD_PER_HOUR)),
    "spot_usd_per_hour": Field(read_positive(MAX_USD_PER_HOUR, "USD/h", "hourly price", lo=MIN_USD_PER_HOUR),
                               required=False),
    "spot_usd_per_hour_range": Field(_spot_range, required=False),
    "region": Field(_region),
}


def _check_instance(p: Parsed) -> None:
    """A spot price range holds the instance's spot price (after the overlay is merged); a region of a cloud in
    :data:`LOWER_CASE_REGIONS` is written in lower case (``costs.regions: [us-east-1]`` would not select a row
    in 'US-EAST-1'), one of :data:`UPPER_CASE_REGIONS` in upper case."""
    v = p.values
    region = v["region"]
    if v["provider"] in LOWER_CASE_REGIONS + UPPER_CASE_REGIONS and re.search("[ ,]", region):
        fixed = region_case(v["provider"], re.sub("[ ,]+", "-", region))
        example = _REGION_EXAMPLES[v["provider"]]
        raise p.err(f"region {region!r} holds {'a comma' if ',' in region else 'blanks'}, and {v['provider']} names "
                    f"its regions without ({example})", later(p, "region", "provider"),
                    f"Did you mean region: {fixed!r}?")
    if v["provider"] in LOWER_CASE_REGIONS and region != region.lower():
        raise p.err(f"region {region!r} has upper-case letters, and {v['provider']} names its regions in lower case",
                    later(p, "region", "provider"), f"Write region: {region.lower()!r}.")
    if v["provider"] in UPPER_CASE_REGIONS and region != region.upper():
        raise p.err(f"region {region!r} has lower-case letters, and {v['provider']} names its regions as upper-case "
                    "country codes", later(p, "region", "provider"), f"Write region: {region.upper()!r}.")
    if "spot_usd_per_hour_range" not in v:
        return
    low, high = v["spot_usd_per_hour_range"]
    spot = v.get("spot_usd_per_hour")
    if spot is None and "spot_usd_per_hour" in p.entry.data:  # 'spot_usd_per_hour: null' (an overlay's)
        raise p.entry.error("spot_usd_per_hour_range needs spot_usd_per_hour", "spot_usd_per_hour",
                            "Clear the range too: 'spot_usd_per_hour_range: null'.")
    if spot is None:
        raise p.err("spot_usd_per_hour_range needs spot_usd_per_hour", "spot_usd_per_hour_range",
                    "Give spot_usd_per_hour too (the figure the catalog keeps: as a rule the range's low end), "
                    "or leave the range out.")
    if not low <= spot <= high:
        raise p.err(f"spot_usd_per_hour {spot:g} is outside spot_usd_per_hour_range [{low:g}, {high:g}]",
                    later(p, "spot_usd_per_hour_range", "spot_usd_per_hour"),
                    "The range is the lowest and highest zone's spot price in the region, and the catalog "
                    "keeps a price within it (as a rule the low end): check for a typo or a stale range.")


def _check_instance_refs(m: Merged) -> None:
    """Every instance's ``gpu`` is a GPU id, and its ``gpu_memory_usable`` (the provider's figure per GPU) is at most
    that GPU's ``memory`` (gpus.yaml, overlays merged): a provider reports what the card holds, never more, and a
    figure above it would let the instance "fit" a workload its GPU cannot hold."""
    for p in m.entries["instances"].values():
        gpu = p.values["gpu"]
        if gpu not in m.entries["gpus"]:
            raise p.err(f"unknown GPU {clip_text(gpu)!r}", "gpu", m.gpu_ref_hint(gpu))
        usable, memory = p.values.get("gpu_memory_usable"), m.entries["gpus"][gpu].values.get("memory")
        if usable is not None and memory is not None and usable > memory:
            raise p.err(f"gpu_memory_usable {usable / 2**30:,.2f} GiB is more than GPU {gpu!r} holds: its memory is "
                        f"{memory / 2**30:,.2f} GiB ({memory // 2**20:,} MiB, gpus.yaml)",
                        later(p, "gpu_memory_usable", "gpu"),
                        f"Give the figure the provider reports per GPU (at most {memory // 2**20:,} MiB for {gpu!r}), "
                        "or check the instance's gpu.")


def _spot_warnings(p: Parsed) -> list[CatalogWarning]:
    """A cloud instance whose spot price (``spot_usd_per_hour``, or the high end of
    ``spot_usd_per_hour_range``) is above its on-demand ``usd_per_hour``: it happens (a zone short of
    capacity), but rarely, and is more often a typo (a digit, or the two prices swapped)."""
    v = p.values
    od = v["usd_per_hour"]
    spot = v.get("spot_usd_per_hour")
    high = v["spot_usd_per_hour_range"][1] if "spot_usd_per_hour_range" in v else None
    if spot is not None and spot > od:
        key, what = "spot_usd_per_hour", f"spot_usd_per_hour {spot:g} USD/h"
    elif high is not None and high > od:
        key, what = "spot_usd_per_hour_range", f"the high end of spot_usd_per_hour_range, {high:g} USD/h,"
    else:
        return []
    key = later(p, key, "usd_per_hour")  # where the later of the two prices was written (an overlay's)
    at = p.origin.get(key, p.entry)
    where = f"{at.file}:{at.line_of(key)}" if at.line_of(key) else (at.file or "")
    text = (f"{where}: {at.key_path(key)}: {what} is above the on-demand usd_per_hour {od:g} USD/h of "
            f"instance {p.id!r}; spot above on-demand is rare and more often a typo: check both prices against the "
            "source")
    return [CatalogWarning("instances", p.id, text)]


INSTANCES = Kind("instances", CloudInstance, INSTANCE_FIELDS, check=_check_instance, check_merged=_check_instance_refs,
                 warnings=_spot_warnings)
