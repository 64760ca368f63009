"""Comparing the rows of a SkyPilot ``vms.csv`` as ``planner catalog import-skypilot`` reads them
(planner.catalog.skypilot): an instance type's spelling as the overlay writes it (:func:`instance_key`), and the
check that two rows of one instance type and zone agree (:func:`_check_duplicates`, h19b N4, h20b N1, M1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from planner.catalog.cloud import region_case
from planner.catalog.skypilot_csv import NUMERIC_COLUMNS, ImportProblem, _quoted

#: The clouds whose instance types are all lower case: AWS ('g5.2xlarge', its EC2 API takes no other spelling) and
#: Google Cloud ('a2-highgpu-1g'), as every row of SkyPilot's catalogs/v8 aws and gcp vms.csv writes them. Azure
#: ('Standard_NC24ads_A100_v4') and RunPod ('1x_A100-80GB_SECURE') mix cases, so theirs are kept as written.
LOWER_CASE_INSTANCES = frozenset({"aws", "gcp"})


def instance_key(provider: str, instance: str) -> str:
    """``instance`` as the overlay writes it: in lower case for a cloud of :data:`LOWER_CASE_INSTANCES` (h18b #9:
    'G5.2XLARGE' was written as is), as written otherwise. The rows of one instance type are grouped by it; a
    message about an instance type left out quotes it as the file writes it (h19b M5)."""
    return instance.lower() if provider in LOWER_CASE_INSTANCES else instance


#: The columns that name a row's place: an instance type in a region and zone. A row without an instance type
#: (GCP's GPU rows) is named by its accelerator and count too (:data:`_GPU_ROW_COLUMNS`).
_KEY_COLUMNS = ("InstanceType", "Region", "AvailabilityZone")
_GPU_ROW_COLUMNS = ("AcceleratorName", "AcceleratorCount")


def _as_read(provider: str, r: Mapping[str, str]) -> dict[str, object]:
    """A row's values as the import reads them, to compare two rows (h19b N4, h20b M1): the instance type as
    :func:`instance_key` groups it, the accelerator case-blind (as :func:`gpu_id` matches it), the region in the
    cloud's case (planner.catalog.cloud.region_case), the zone in lower case, a number in a numeric column by its
    value (``Decimal``: '1.006' and '1.0060', '1' and '1.0' are one figure; the rows here are checked numbers,
    planner.catalog.skypilot_csv; one beyond Decimal's exponents as written); other columns as written."""
    from decimal import Decimal, InvalidOperation

    out: dict[str, object] = {k: v for k, v in r.items() if k != "_line"}
    got = {c: (r.get(c) or "").strip() for c in (*_KEY_COLUMNS, "AcceleratorName")}
    out.update({"InstanceType": instance_key(provider, got["InstanceType"]),
                "AcceleratorName": got["AcceleratorName"].lower(),
                "Region": region_case(provider, got["Region"]), "AvailabilityZone": got["AvailabilityZone"].lower()})
    for col in NUMERIC_COLUMNS:
        raw = (r.get(col) or "").strip()
        if raw:
            try:
                out[col] = Decimal(raw)
            except InvalidOperation:  # an exponent beyond Decimal's (1e-99999999999999999999): compared as written
                out[col] = raw.lower()
    return out


def _check_duplicates(path: Path, provider: str, rows: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    """The rows with repeats of one (instance, region, zone) with the same figures dropped; refuses two rows of one
    place with different figures (the module docstring), the accelerator and its count among them (h20b N1: an
    A10G row and an H100 row of one g5.xlarge zone were both read, the later one written). A row without an
    instance type (GCP's GPU rows) is placed by its accelerator and count too. Rows are compared as the import
    reads them (:func:`_as_read`): 'US-EAST-1' and 'us-east-1', 'A10G' and 'a10g' are one region, one GPU, and
    '1.006' and '1.0060' one price.

    Raises:
        ImportProblem: naming both lines, the column and the two values as written; hint: re-download the file.
    """
    seen: dict[tuple[object, ...], tuple[Mapping[str, str], dict[str, object]]] = {}
    out = []
    for r in rows:
        figures = _as_read(provider, r)
        key = tuple(figures.get(c, "") for c in _KEY_COLUMNS)
        if not key[0]:
            key += tuple(figures.get(c, "") for c in _GPU_ROW_COLUMNS)
        if key not in seen:
            seen[key] = (r, figures)
            out.append(r)
            continue
        first, first_figures = seen[key]
        if first_figures == figures:
            continue  # the same row twice: one row
        diff = next(k for k in figures if first_figures.get(k, "") != figures.get(k, ""))
        acc = (first.get("AcceleratorName") or "").strip()
        what = key[0] or f"the {acc} x{(first.get('AcceleratorCount') or '').strip()} GPU row"
        zone = f" zone {key[2]}" if key[2] else ""
        raise ImportProblem(f"{path}: lines {first['_line']} and {r['_line']}, column {diff}: two rows for {what} in "
                            f"{key[1]}{zone} give {_quoted(first.get(diff) or '')} and {_quoted(r.get(diff) or '')}; a "
                            "vms.csv lists one row per instance type and zone, so neither can be trusted",
                            hint="Re-download the file (catalogs/v8/<provider>/vms.csv), then import it again.")
    return out
