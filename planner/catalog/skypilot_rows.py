"""Reading the rows of a SkyPilot ``vms.csv`` as ``planner catalog import-skypilot`` does
(planner.catalog.skypilot, whose module docstring gives the rules): an instance type's spelling as the overlay
writes it (:func:`instance_key`), the check that two rows of one instance type and zone agree
(:func:`_check_duplicates`, h19b N4, h20b N1, M1), and each instance type's zones with the rows that price
nothing told by reason (:func:`_zones`; moved here from planner.catalog.skypilot, which re-exports the names)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from planner.catalog.aliases import (GCP_MACHINE_GPUS, aliases_by_lower, catalog_gpu_id, form_factor_unknown,
                                     instance_family_problem,
                                     instance_gpu_problem)
from planner.catalog.cloud import MIN_USD_PER_HOUR, region_case
from planner.catalog.skypilot_csv import NUMERIC_COLUMNS, ImportProblem, _quoted, is_whole
from planner.catalog.skypilot_result import ImportResult
from planner.catalog.skypilot_zones import (_first_foreign, _malformed_region, _region_problem, _zone_problem, fold,
                                           foreign_problem)

#: The clouds whose instance types are all lower case: AWS ('g5.2xlarge', its EC2 API takes no other spelling) and
#: Google Cloud ('a2-highgpu-1g'), as every row of SkyPilot's catalogs/v8 aws and gcp vms.csv writes them. Azure
#: ('Standard_NC24ads_A100_v4') and RunPod ('1x_A100-80GB_SECURE') mix cases, so theirs are kept as written.
LOWER_CASE_INSTANCES = frozenset({"aws", "gcp"})


def instance_key(provider: str, instance: str) -> str:
    """``instance`` as the overlay writes it: in lower case for a cloud of :data:`LOWER_CASE_INSTANCES` (h18b #9:
    'G5.2XLARGE' was written as is), as written otherwise. The rows of one instance type are grouped by it; a
    message about an instance type left out quotes it as the file writes it (h19b M5)."""
    return fold(instance) if provider in LOWER_CASE_INSTANCES else instance



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
                "AcceleratorName": fold(got["AcceleratorName"]),  # ASCII only folded (h38b N1)
                "Region": region_case(provider, got["Region"]), "AvailabilityZone": fold(got["AvailabilityZone"])})
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
        what = key[0] or f"the {_quoted(acc)} x{(first.get('AcceleratorCount') or '').strip()} GPU row"  # h37b m6
        zone = f" zone {key[2]}" if key[2] else ""
        raise ImportProblem(f"{path}: lines {first['_line']} and {r['_line']}, column {diff}: two rows for {what} in "
                            f"{key[1]}{zone} give {_quoted(first.get(diff) or '')} and {_quoted(r.get(diff) or '')}; a "
                            "vms.csv lists one row per instance type and zone, so neither can be trusted",
                            hint="Re-download the file (catalogs/v8/<provider>/vms.csv), then import it again.")
    return out


@dataclass(frozen=True)
class _Zone:
    region: str
    zone: str
    price: float
    spot: float | None
    parts: str = ""  # GCP: 'VM a + GPU b'
    spot_parts: str = ""
    line: str = ""  # the CSV line of the row it is read from (a reason about it names the line, h22b M1)
    price_text: str = ""  # the price and spot price as written (GCP: the sum of the two rows' digits), by whose
    spot_text: str = ""   # digits the catalog's floor and cap are judged (h25b M2; planner.catalog.skypilot._pick)
    offer: bool | None = None  # whether the spot price is an offer (:func:`spot_below`), judged once; None: not yet
    region_text: str = ""  # the Region as the file writes it (``region`` is as the overlay would: h36b m9)



#: A number whose digits are not all 0 ('1e-400', which Python's float() reads as 0.0).
_NONZERO = re.compile(r"[+]?[0-9]*\.?[0-9]*[1-9]")


def _sum_text(a: str, b: str) -> str:
    """The exact sum of two prices as written (GCP's VM and GPU rows), as text; '' when either has no digits
    Decimal reads (none written, or an exponent beyond Decimal's: then the float is judged)."""
    from planner.core.units import written_decimal

    x, y = written_decimal(a), written_decimal(b)
    return "" if x is None or y is None else str(x + y)


def _below_floor(price: float | None, text: str, cell: str) -> bool:
    """Whether an on-demand ``price`` is not 0 yet below the catalog's floor (MIN_USD_PER_HOUR), judged by the
    digits written (``text``, h25b M2: '0.00099999999999999999', whose float is 0.001, is below), or by the float
    where Decimal does not read them; a ``cell`` of digits not all 0 ('1e-400', read as 0.0) is not 0."""
    from decimal import Decimal

    from planner.core.units import written_decimal

    if price is not None and price >= 2 * MIN_USD_PER_HOUR:  # far above the floor (GCP's sum is rounded to 1e-6):
        return False                                        # its digits cannot be below it (h33b N5: cost)
    exact = written_decimal(text)
    if exact is not None and price is not None:
        return 0 < exact < Decimal(str(MIN_USD_PER_HOUR))
    return price is not None and price < MIN_USD_PER_HOUR and (price > 0 or bool(_NONZERO.match(cell.strip())))


def _count_said(said: str) -> str:
    """A count as written, for a message: '2' and '1.0' as 2 and 1 (h38b m7: 'L4' x1.0), '1.5' as 1.5, a text
    that reads as no number quoted ('x')."""
    x = _num(said)
    if x is None:
        return _quoted(said)
    return str(int(x)) if x.is_integer() else f"{x:g}"  # inf: not is_integer


def _num(value: str | None) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        x = float(value)
    except ValueError:
        return None
    return x if x == x else None  # NaN -> None



def gpu_id(provider: str, instance: str, accelerator: str, gpu_info: str,
           by_lower: Mapping[str, tuple[str, ...]] | None = None) -> str | None:
    """The catalog GPU id of an instance's accelerator (None: not in the catalog); the alias table's
    :func:`planner.catalog.aliases.catalog_gpu_id` (``by_lower``: its names by lower case, built once by the caller)."""
    return catalog_gpu_id(provider, instance, accelerator, gpu_info, by_lower)


@dataclass(frozen=True)
class OverlayGpuNames:
    """An overlay's own GPUs (``--catalog OV``; ids the shipped catalog lacks) as an AcceleratorName may name them
    (planner.catalog.skypilot.overlay_gpu_names builds it): by exact id, by exact ``name``, and by either in lower
    case, each -> the ids it fits. :meth:`match` gives the GPUs a name fits, best first (h34b N4: a name fitting
    several, one GPU's name being another's id or two names differing only in case, went to the last listed)."""

    ids: Mapping[str, str]
    names: Mapping[str, tuple[str, ...]]
    lower: Mapping[str, tuple[str, ...]]

    def values(self) -> list[str]:
        """The overlay GPUs' ids (as a dict of names -> ids gives them)."""
        return list(self.ids.values())

    def __bool__(self) -> bool:
        return bool(self.ids)

    def match(self, acc: str) -> tuple[str, ...]:
        """The ids ``acc`` (an AcceleratorName, blanks around it dropped) fits: the GPU whose id it is exactly,
        else those whose name it is exactly, else those whose id or name it is in lower case; () for none. More
        than one: it names none of them surely (the caller leaves its row out, naming them)."""
        text = acc.strip()
        if text in self.ids:
            return (self.ids[text],)
        # case-blind only for ASCII: 'Z\u212a9' (KELVIN SIGN) lower-cases to 'zk9' (h39b 18)
        return self.names.get(text) or (self.lower.get(text.lower(), ()) if text.isascii() else ())


def _row_gpu(provider: str, inst: str, acc: str, info: str, known: set[str] | None,
             names: OverlayGpuNames | None, by_lower: Mapping[str, tuple[str, ...]] | None = None) -> str | None:
    """A row's catalog GPU id, or None: the alias table's (:func:`gpu_id`; ``by_lower`` its names by lower case,
    planner.catalog.aliases.aliases_by_lower, built once per import), else the one overlay GPU that ``names``
    gives for ``acc`` (:meth:`OverlayGpuNames.match`; None where it fits several); one outside ``known`` is None."""
    gid = gpu_id(provider, inst, acc, info, by_lower)
    if gid is None and names:
        fits = names.match(acc)
        gid = fits[0] if len(fits) == 1 else None
    return None if gid is None or (known is not None and gid not in known) else gid


def _several_gpus(acc: str, names: OverlayGpuNames | None) -> str | None:
    """Why a row's AcceleratorName names no GPU surely: it fits several of the overlay's GPUs (h34b N4); None
    when it fits one or none (or the alias table knows it, which the caller checks first)."""
    fits = names.match(acc) if names else ()
    if len(fits) < 2:
        return None
    return (f"GPU {_quoted(acc.strip())} fits several of the --catalog overlay's GPUs ({', '.join(sorted(fits))}) "
            "by id or name, case-blind, and none exactly, so which one it is cannot be told; give those GPUs "
            "names that differ in more than case")



def _zones(path: Path, provider: str, rows: Sequence[Mapping[str, str]], result: ImportResult,
           gpu_ids: Iterable[str] | None, spelled: dict[str, str], dropped: dict[str, list[tuple[str, str]]] | None = None,
           cells: dict[str, dict[str, str]] | None = None, names: OverlayGpuNames | None = None,
           gpu_memory: Mapping[str, float] | None = None
           ) -> tuple[dict[str, list[_Zone]], dict[str, tuple[str, int, int, float]], dict[str, str]]:
    """Each instance type's zones (:class:`_Zone`), its (GPU id, count, vCPUs, memory) and first CSV line, keyed by
    :func:`instance_key`; a row that prices nothing is told in ``result.skipped`` under the instance type as the
    file first writes it (``spelled``, filled here), and kept in ``dropped`` (instance key -> its (line, reason)
    rows), so that one left out beside a row of its instance type that is kept is still counted (h20b N2). ``cells``
    gets each instance type's AcceleratorCount, vCPUs and MemoryGiB as the row its figures are read from writes
    them (:func:`_imported_problem`'s ``written``). ``gpu_memory``: each catalog GPU's memory in GiB, which a
    RunPod GpuInfo's memory is checked against (:func:`_gpu_info_problem`; None: not checked).

    Raises:
        ImportProblem: two priced rows of one instance type, in any zones or regions, give it different hardware
            (:func:`_same_hardware`, h34b N5).
    """
    known = set(gpu_ids) if gpu_ids is not None else None
    drops: dict[str, list[tuple[str, str]]] = {} if dropped is None else dropped
    by_lower = aliases_by_lower()  # once per import, not per row

    def leave(inst: str, shown: str, line: str, why: str, every: bool = False) -> None:
        # every: said of each row that gives it, not only of its instance type's first row (h39b 2: a Region that
        # is a zone's, a character outside ASCII)
        if every and shown in result.skipped and result.skipped[shown] != why:
            result.skipped[f"the row on line {line} of {shown}"] = why
        else:
            result.skipped.setdefault(shown, why)
        drops.setdefault(inst, []).append((line, why))

    zones: dict[str, list[_Zone]] = {}
    meta: dict[str, tuple[str, int, int, float]] = {}
    lines: dict[str, str] = {}  # an instance type's first row
    gpu_rows = _gcp_gpu_rows(rows, result) if provider == "gcp" else {}
    unpriced: dict[str, tuple[str, str, str, str]] = {}  # GCP: a machine type's first row whose zone has no GPU row
    first_rows: dict[str, Mapping[str, str]] = {}  # an instance type's first priced row, whose hardware the rest match
    for r in rows:
        raw = (r.get("InstanceType") or "").strip()
        named = (r.get("AcceleratorName") or "").strip()
        foreign = foreign_problem(r, _nfkc_gpu(provider, raw, named, r.get("GpuInfo") or "", known))
        if not raw:  # GCP's GPU rows (an accelerator, no machine type) price the GPUs above; any other: said
            if provider != "gcp" or not named:
                result.skipped.setdefault(f"the row on line {r['_line']}",
                                          f"line {r['_line']}: no InstanceType (empty), so no instance to name")
            elif foreign is not None:  # left out of _gcp_gpu_rows: said, not only its VM row's missing GPU row
                result.skipped.setdefault(f"the row on line {r['_line']}", f"line {r['_line']}: the GPU row: {foreign}")
            elif (why := _region_problem(provider, r) or _zone_problem(provider, r) or (
                    _malformed_region(r["Region"].strip()) if re.search(r"[^A-Za-z0-9-]", r["Region"].strip())
                    else None)) is not None:
                # a zone's name as its Region, a zone of no form: it prices no VM row, said (h41b 22)
                result.skipped.setdefault(f"the row on line {r['_line']}", f"line {r['_line']}: the GPU row: {why}")
            continue
        inst = instance_key(provider, raw)
        shown = spelled.setdefault(inst, raw)
        if foreign is not None:  # the first reason, whatever else fails (h39b 8-10)
            leave(inst, shown, r["_line"], f"line {r['_line']}: {foreign}", every=True)
            continue
        gpus = _row_gpus(provider, inst, raw, r)
        if isinstance(gpus, str):
            leave(inst, shown, r["_line"], f"line {r['_line']}: {gpus}")
            continue
        acc, count = gpus
        gid = _row_gpu(provider, inst, acc, r.get("GpuInfo") or "", known, names, by_lower)
        if gid is None:
            leave(inst, shown, r["_line"], f"line {r['_line']}: " + _no_gpu_why(provider, inst, raw, acc, r.get(
                "GpuInfo") or "", known, names, by_lower))
            continue
        if not (r.get("Region") or "").strip():  # no place to list it in: said, as a row of no GPU is (h23b M2)
            leave(inst, shown, r["_line"],
                  f"line {r['_line']}: no Region ({'empty' if not r.get('Region') else 'blank'})")
            continue
        why = _region_problem(provider, r)  # a zone's name or a control character: said of every row (h39b 2)
        if why is not None:
            leave(inst, shown, r["_line"], f"line {r['_line']}: {why}", every=True)
            continue
        why = _row_problem(provider, r, raw, acc, count, gid, gpu_memory)
        if why is not None:
            leave(inst, shown, r["_line"], f"line {r['_line']}: {why}")
            continue
        price, spot = _num(r["Price"]), _spot(r, result)
        price_text, spot_text = r["Price"].strip(), (r["SpotPrice"] or "").strip() if spot is not None else ""
        zone = (r.get("AvailabilityZone") or "").strip()
        parts = spot_parts = ""
        if provider == "gcp":
            # case-blind, as the rows are compared (h34b N3: 'a100', 'US-CENTRAL1' found no GPU row)
            g_row = gpu_rows.get((acc.lower(), count, fold(r["Region"].strip()), fold(zone)))
            if g_row is None:  # the GPU is not offered in this zone: said if no zone of it is (h22b M3), else
                unpriced.setdefault(inst, (r["_line"], f"{_quoted(acc)} x{count}", zone or r["Region"],  # counted
                                           r["Region"].strip()))
                result.no_gpu_row_lines.append(str(r["_line"]))
                continue
            g_price, g_spot, g_texts, g_line = g_row
            why = _gcp_unpriced(f"{_quoted(acc)} x{count}", g_price, g_texts[0], g_line, price, price_text, r["Price"])
            if why is not None:
                leave(inst, shown, r["_line"], f"line {r['_line']}: {why}")
                continue
            parts = f"VM {_digits(price, price_text)} + {acc}x{count} {_digits(g_price, g_texts[0])}" \
                if price is not None else ""
            # a GPU spot price below the floor is no spot offer for the GPUs (h35b N3), read so by _spot, counted
            if price is not None and spot is not None and g_spot is not None:
                spot_parts = f"{_digits(spot, spot_text)} + {_digits(g_spot, g_texts[1])}"
                spot = round(spot + g_spot, 6)
            else:
                spot = None
            price = round(price + g_price, 6) if price else None
            price_text = _sum_text(price_text, g_texts[0])
            spot_text = _sum_text(spot_text, g_texts[1]) if spot is not None else ""
        if _below_floor(price, price_text, r["Price"]):
            # '4.9e-324', or '1e-400', which float() reads as 0: a price below any real one, said as written
            said = _quoted(price_text or r["Price"].strip()) + (
                f" (VM row {r['Price'].strip()} + {_quoted(acc)} x{count} row {g_texts[0]})" if parts and price_text else "")
            leave(inst, shown, r["_line"], f"line {r['_line']}: an on-demand price of {said} "
                                           "USD/h, less than any real hourly price (at least "
                                           f"{MIN_USD_PER_HOUR:g} USD/h)")
            continue
        if not price:
            leave(inst, shown, r["_line"], f"line {r['_line']}: no on-demand price (0 or empty)")
            continue
        hardware = (gid, count, int(_num(r["vCPUs"]) or 0), float(_num(r["MemoryGiB"]) or 0.0))
        _same_hardware(path, provider, inst, r, hardware, meta.get(inst), first_rows)
        meta[inst] = hardware
        first_rows.setdefault(inst, r)
        if cells is not None:
            cells[inst] = {"vcpus": (r.get("vCPUs") or "").strip(), "memory": (r.get("MemoryGiB") or "").strip(),
                           **({} if provider == "gcp" else {"gpu_count": (r.get("AcceleratorCount") or "").strip()})}
        lines.setdefault(inst, r["_line"])
        offer = spot_below(spot, spot_text, price, price_text)
        zones.setdefault(inst, []).append(_Zone(_noted(provider, r, price, spot, result, (price_text, spot_text)),
                                                zone, price, spot, parts,
                                                spot_parts, str(r["_line"]), price_text, spot_text, offer,
                                                r["Region"].strip()))
    for inst, (line, gpus, zone, region) in unpriced.items():
        if inst not in zones and spelled[inst] not in result.skipped and region.isascii() \
                and re.search(r"[^A-Za-z0-9-]", region):  # h41b m7: 'us central1' was said to lack its GPU row
            result.skipped[spelled[inst]] = f"line {line}: " + _malformed_region(region)
        elif inst not in zones and spelled[inst] not in result.skipped:
            result.skipped[spelled[inst]] = (f"line {line}: no {gpus} GPU row in its zone ({_quoted(zone)}), nor in "
                                             "its other rows' zones, to add to the VM row's price")
    return zones, meta, lines


def _row_gpus(provider: str, inst: str, raw: str, r: Mapping[str, str]) -> tuple[str, int] | str:
    """A row's (AcceleratorName, whole GPU count), or why it has none to read: GCP's from its machine type
    (GCP_MACHINE_GPUS), a row naming others left out (h35b N1; the count as a number where it reads as one, 'A100'
    x2, h36b m10; '1.0' as x1, h38b m7), an unknown machine type said so (h35b); another cloud's from the row, a
    fraction by its digits (h21b N2), or none ("no GPU")."""
    named = (r.get("AcceleratorName") or "").strip()
    said = (r.get("AcceleratorCount") or "").strip()
    if provider == "gcp":
        if inst not in GCP_MACHINE_GPUS:
            return (f"the row names {_quoted(named)} GPUs, but machine type {raw} is not one planner knows the GPUs "
                    "of (its table of GCP accelerator machine types), so it is not imported" if named else
                    "no GPU (not a GCP accelerator machine type)")
        acc, count = GCP_MACHINE_GPUS[inst]
        if (named and fold(named) != acc.lower()) or (said and _num(said) != count):
            return (f"the row names {_quoted(named or acc)} x{_count_said(said) if said else count}, but machine "
                    f"type {raw} carries {_quoted(acc)} x{count}")
        return acc, count
    given = _num(said) or 0.0
    if named and given > 0 and (given != int(given) or not is_whole(said)):
        # as written where the short form would read whole or another number (h40b m9: '0.9999999999999999' was
        # shown as 1), and as written wherever the short form is not the file's text (h41b m3: '2.0e-1', '0.5000',
        # '.5', '+1.5' were shown as 0.2, 0.5, 1.5, not findable with grep); above one it is no fraction of one GPU
        short = f"{given:g}"
        fraction = short if said == short else _quoted(said)
        from planner.core.units import written_decimal

        exact = written_decimal(said)
        if (exact if exact is not None else given) > 1:
            return f"a count ({fraction}) of {named} GPUs that is not a whole number"
        return f"a fraction ({fraction}) of one {named}, not a whole GPU"
    if not named or int(given) <= 0:
        return "no GPU"
    return named, int(given)


def _no_gpu_why(provider: str, inst: str, raw: str, acc: str, info: str, known: set[str] | None,
                names: OverlayGpuNames | None, by_lower: Mapping[str, tuple[str, ...]]) -> str:
    """Why a row's accelerator ``acc`` gives no catalog GPU: it stands for several boards and the instance type
    ``raw`` does not tell which (h37b N5, m2: given the SXM board before), it fits several overlay GPUs, or it has
    no gpus.yaml entry (:func:`_unknown_gpu`). The GPU the instance type's name carries, where another, is said
    first (planner.catalog.aliases.instance_family_problem; h40b m2, N1)."""
    family = instance_family_problem(provider, raw, acc)
    if family is not None:
        return family
    if form_factor_unknown(provider, raw, acc):
        return (f"{_quoted(acc)} stands for more than one board (PCIe, SXM or NVL), and the instance type "
                f"{_quoted(raw)} is of no family whose board planner knows: form factor not told by the instance type")
    several = None if gpu_id(provider, inst, acc, info, by_lower) else _several_gpus(acc, names)
    return several or _unknown_gpu(provider, inst, acc, info, known)


def _row_problem(provider: str, r: Mapping[str, str], raw: str, acc: str, count: int, gid: str,
                 gpu_memory: Mapping[str, float] | None) -> str | None:
    """Why a row of a known GPU prices nothing, None where it may: its Region is never a region's
    (:func:`_region_problem`; h37b m3/m5: said of every row that writes it), its GpuInfo contradicts it
    (:func:`_gpu_info_problem`; h36b N7), its zone is not of its Region (:func:`_zone_problem`; h36b N2), or a
    instance type's name carries another GPU or count than the row (planner.catalog.aliases.instance_gpu_problem:
    Lambda's ``gpu_8x_a100`` with 1, h37b m2; its memory, RunPod's ``8x_A100-80GB_SECURE``, Azure's family: h38b)."""
    return _region_problem(provider, r) or _gpu_info_problem(
        provider, acc, count, r.get("GpuInfo") or "", gid, gpu_memory, raw) or _zone_problem(provider, r) or \
        instance_gpu_problem(provider, raw, acc, count)


def _same_hardware(path: Path, provider: str, inst: str, r: Mapping[str, str], hardware: tuple[str, int, int, float],
                   first: tuple[str, int, int, float] | None, first_rows: Mapping[str, Mapping[str, str]]) -> None:
    """Refuse the file where row ``r`` of instance type ``inst`` gives it other hardware (GPU, GPU count, vCPUs,
    memory; the counts and memory by value as written, '16' and '16.0' one) than its first priced row, in whatever
    zone or region: an instance type is one machine, so one of the two rows is wrong, and the overlay would write
    one row's hardware with another's price (h34b N5: an H100 x8 written at an A10G zone's $1/h).

    Raises:
        ImportProblem: naming both lines, the column and the two values as written; hint: re-download the file.
    """
    if first is None:
        return
    other = first_rows[inst]
    diff = None
    if hardware[0] != first[0]:
        diff = "AcceleratorName"
    elif hardware[1] != first[1]:
        diff = "AcceleratorCount"
    else:
        texts = [tuple((x.get(c) or "").strip() for c in ("vCPUs", "MemoryGiB")) for x in (r, other)]
        if texts[0] == texts[1]:  # the same digits: the same figures (most rows; no number read again)
            return
        diff = next((c for c in ("vCPUs", "MemoryGiB")
                     if _as_read(provider, r).get(c, "") != _as_read(provider, other).get(c, "")), None)
    if diff is None:
        return
    shown = (other.get("InstanceType") or "").strip()
    where = [f"{(x.get('Region') or '').strip()} {(x.get('AvailabilityZone') or '').strip()}".strip()
             for x in (other, r)]
    if diff in ("AcceleratorName", "AcceleratorCount"):
        # one form for a GPU and its count in every message (h37b m6): 'A10G' x1, the name quoted, the count not
        values = [f"{_quoted((x.get('AcceleratorName') or '').strip())} x{(x.get('AcceleratorCount') or '').strip()}"
                  for x in (other, r)]
    else:
        values = [_quoted((x.get(diff) or "").strip()) for x in (other, r)]
    raise ImportProblem(f"{path}: lines {other['_line']} and {r['_line']}, column {diff}: two rows of {shown} "
                        f"({where[0]}; {where[1]}) give {values[0]} and {values[1]}; an instance "
                        "type is one machine in every zone and region, so neither row can be trusted",
                        hint="Re-download the file (catalogs/v8/<provider>/vms.csv), then import it again.")


def _unknown_gpu(provider: str, inst: str, acc: str, info: str, known: set[str] | None) -> str:
    """Why a row's accelerator ``acc`` is left out: no gpus.yaml entry; where its NFKC form (full-width 'ａ10g' ->
    'a10g') is one, that is said as a hint, not taken (h20b M2: a row of such letters is not SkyPilot's)."""
    nfkc = _nfkc_gpu(provider, inst, acc, info, known)
    if nfkc is not None:
        return nfkc
    # gpus.yaml may hold it under another spelling ('H100-PCIE' and h100-pcie): then it is planner's table of
    # SkyPilot's names that lacks the spelling, not gpus.yaml the GPU (h40b m7: a user told so would add a twin)
    compact = re.sub(r"[^a-z0-9]", "", acc.lower())
    same = sorted(g for g in (known or ()) if re.sub(r"[^a-z0-9]", "", g.lower()) == compact)
    if compact and same:
        return (f"{_quoted(acc)} is not a SkyPilot GPU name planner knows (its table of SkyPilot's names, "
                f"planner/catalog/aliases.py), though gpus.yaml has {', '.join(same)}; write the row's AcceleratorName "
                "as SkyPilot's catalog spells that GPU")
    return f"GPU {_quoted(acc)} has no gpus.yaml entry"


def _nfkc_gpu(provider: str, inst: str, acc: str, info: str, known: set[str] | None) -> str | None:
    """Why an accelerator ``acc`` whose NFKC form is a catalog GPU (full-width 'ａ10g' -> a10g) is not taken, naming
    its first character outside ASCII and the GPU it would be; None where it has none or its form is no GPU."""
    folded = unicodedata.normalize("NFKC", acc)
    if folded == acc or acc.isascii():
        return None
    gid = gpu_id(provider, instance_key(provider, inst), folded, info)
    if gid is None or (known is not None and gid not in known):
        return None
    return (f"GPU {_quoted(acc)} has no gpus.yaml entry; it holds {_first_foreign(acc)}: written {_quoted(folded)}, "
            f"it would be GPU {gid}")


#: The AWS instance types whose AcceleratorName or count SkyPilot's fetcher writes otherwise than their GpuInfo
#: (fetch_aws.py @005261080a6b ``get_additional_columns``): p3dn.24xlarge 'V100' -> 'V100-32GB', p4de.24xlarge
#: 'A100' -> 'A100-80GB' (count 8), p5en.48xlarge 'NVIDIA' (the API's name) -> 'H200' (count 8). Each is exempt only
#: from that rename (h38b N5: a GpuInfo naming H100 or another count passed): the GpuInfo names the row's GPU or the
#: one name the fetcher renames, and its counts add up to AcceleratorCount as any row's.
_AWS_NAME_OVERRIDES = {"p3dn.24xlarge": "V100", "p4de.24xlarge": "A100", "p5en.48xlarge": "NVIDIA"}
#: The fetcher writes p5.4xlarge's count as 1 and g6f/gr6f's as a fraction from the GPU memory, whatever the
#: API's Count: their count is not held to the GpuInfo's (nor the total memory, "unreliable here" for g6f).
_AWS_COUNT_OVERRIDES = ("p5.4xlarge", "g6f", "gr6f")


def _info_number(value: object, whole: bool) -> bool:
    """Whether a GpuInfo figure is a real number (not a bool, text or None), finite and not negative; ``whole``:
    a whole number as well (an int, or a float such as 1.0 with no fraction: h38b m3, 1.0 was "not whole")."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if whole:
        return value >= 0 and (isinstance(value, int) or (value == value and value != float("inf")
                                                          and float(value).is_integer()))
    return value == value and value not in (float("inf"),) and value > 0


def _repeated_key(info: str) -> str | None:
    """Why a GpuInfo text repeats a key in one dict, at any depth (None: it does not, or it is no Python literal):
    the same key twice (``'Name': 'H100', 'Name': 'A10G'``), which Python's dict literal reads as its last value
    only, so the verdict would hang on which comes last (h40b N4), or two keys that differ only in blanks or in
    characters NFKC folds (``'Gpus '``, fullwidth ``'\uff27pus'`` beside ``'Gpus'``: a second GPU list), format
    characters or confusables (:func:`_key_fold`); or a key outside ASCII that is a lookalike of one SkyPilot writes
    (:data:`_INFO_KEYS`: Cyrillic ``'N\u0430me'``). The EC2
    API's GpuInfo, which SkyPilot writes as it is (fetch_aws.py ``get_acc_info``), never repeats a key. Keys
    differing only in case are :func:`_info_gpus`' (its own wording)."""
    import ast

    try:
        tree = ast.parse(info.strip(), mode="eval")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        for i, key in enumerate(keys):
            if key in keys[:i]:
                return (f"names the key {_quoted(key)} twice in one dict, of which Python keeps the last value only: "
                        "the GpuInfo contradicts itself")
            fold_ = _key_fold(key)
            twin = next((k for k in keys[:i] if _key_fold(k) == fold_ and k.lower() != key.lower()), None)
            if twin is not None:
                return (f"names the key {_quoted(twin)} twice in one dict, once as {_quoted(key)}"
                        f"{' (' + _first_foreign(key) + ')' if not key.isascii() else ''}: the GpuInfo contradicts "
                        "itself")
            own = next((k for k in _INFO_KEYS if _key_fold(k) == fold_), None)
            if own is not None and not key.isascii():  # h41b m5: 'N\u0430me' alone, a lookalike of 'Name'
                return (f"names the key {_quoted(key)} ({_first_foreign(key)}), a lookalike of SkyPilot's key "
                        f"{_quoted(own)}: write {_quoted(own)} in plain ASCII")
    return None


def _count_written_not_whole(info: str) -> str | None:
    """Why a GpuInfo's ``Count`` is not a whole number as written (``3.9999999999999999``, which Python reads as the
    float 4.0), judged by its digits as an AcceleratorCount is (:func:`planner.catalog.skypilot_csv.is_whole`; h41b
    m9: the two readers of one number disagreed); None: every Count is whole as written, or the text is no Python
    literal."""
    import ast

    text = info.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and key.value == "Count" and isinstance(value, ast.Constant)
                    and isinstance(value.value, float) and value.value.is_integer()):  # 1.5: said by the reader
                continue
            raw = ast.get_source_segment(text, value) or ""
            if raw and not is_whole(raw):
                return (f"gives Count {_quoted(raw)}, not a whole number as written (Python reads it as "
                        f"{value.value!r}): a GPU count is whole")
    return None


#: The keys of the GpuInfo SkyPilot writes (the EC2 API's GpuInfo, fetch_aws.py ``get_acc_info``; the other
#: fetchers write the same shape).
_INFO_KEYS = ("Gpus", "Name", "Manufacturer", "Count", "MemoryInfo", "SizeInMiB", "TotalGpuMemoryInMiB")


def _key_fold(key: str) -> str:
    """A GpuInfo key as compared for twins: NFKC, its format characters (zero width space and other Cf) and blanks
    dropped, each confusable character as its ASCII prototype (UTS #39 skeleton, :func:`planner.core.lookalike.
    skeleton`), lower case (h41b m5: 'Na\u200bme' and Cyrillic 'N\u0430me' beside 'Name' were not twins)."""
    from planner.core.lookalike import skeleton

    kept = "".join(c for c in unicodedata.normalize("NFKC", key) if unicodedata.category(c) != "Cf" and not c.isspace())
    return unicodedata.normalize("NFC", skeleton(kept)).lower()


def _info_gpus(info: str) -> tuple[list[tuple[str, object, object]], object] | str:
    """A GpuInfo's GPUs as (Name, Count, SizeInMiB) and its TotalGpuMemoryInMiB, or why it cannot be read: not the
    dict SkyPilot writes, or a dict (the GpuInfo itself, a GPU's, its MemoryInfo: h38b m2) with two keys differing
    only in case ('Name' and 'name', 'Gpus' and 'gpus': two GPUs), or a GPU without a MemoryInfo's SizeInMiB, or a
    TotalGpuMemoryInMiB of None (the EC2 API writes both: h38b m2)."""
    import ast

    def twins(d: object) -> str | None:
        if not isinstance(d, dict):
            return None
        lower = [str(k).lower() for k in d]
        if len(set(lower)) == len(lower):
            return None
        return "names a key twice in different case (" + ", ".join(
            _quoted(str(k)) for k in d if lower.count(str(k).lower()) > 1) + "): the row names two GPUs"

    repeated = _repeated_key(info) or _count_written_not_whole(info)  # before literal_eval, which keeps a
    if repeated is not None:  # repeated key's last value only (h40b N4) and reads 3.9999999999999999 as 4.0
        return repeated
    try:
        data = ast.literal_eval(info.strip())
        twin = twins(data)
        if twin is not None:
            return twin
        if "TotalGpuMemoryInMiB" in data and data["TotalGpuMemoryInMiB"] is None:
            return "gives TotalGpuMemoryInMiB None, not a positive number: unreadable"
        gpus = data["Gpus"]
        if not isinstance(gpus, list) or not gpus:
            raise ValueError
        out = []
        for board in gpus:
            memory = board.get("MemoryInfo")
            twin = twins(board) or twins(memory)
            if twin is not None:
                return twin
            if not isinstance(memory, dict) or memory.get("SizeInMiB") is None:
                said = "SizeInMiB None" if isinstance(memory, dict) and "SizeInMiB" in memory else \
                    "no MemoryInfo SizeInMiB"
                return f"gives {said} for {_quoted(str(board['Name']))}, not a positive number: unreadable"
            out.append((board["Name"], board.get("Count"), memory.get("SizeInMiB") if isinstance(memory, dict)
                        else None))
        return out, data.get("TotalGpuMemoryInMiB")
    except (ValueError, SyntaxError, TypeError, KeyError, IndexError, AttributeError, MemoryError, RecursionError):
        return "is not the dict SkyPilot writes ({'Gpus': [{'Name': ...}]})"


def _gpu_info_problem(provider: str, acc: str, count: int, info: str, gid: str,
                      gpu_memory: Mapping[str, float] | None, instance: str = "") -> str | None:
    """Why a RunPod, AWS or Lambda row's ``GpuInfo`` contradicts its ``AcceleratorName``, ``AcceleratorCount`` or GPU
    (None: it agrees, or the provider is another, or an AWS or Lambda GpuInfo is empty, ``{}`` or a bare name; a list
    such as ``[]`` is not the dict SkyPilot writes: left out).

    RunPod: SkyPilot's fetcher derives the AcceleratorName from the GpuInfo's ``Name`` (planner.catalog.aliases.
    runpod_name) and writes the count there and the GPU's memory in ``SizeInMiB`` (fetch_runpod.py ``get_gpu_info``:
    ``memoryInGb``, or ``memoryInGb * 1024`` since 2026; a value of 1024 or more is read as MiB), and writes a
    GpuInfo on every GPU row (a row without one is skipped there), so an empty one is left out. AWS: the fetcher
    takes AcceleratorName and AcceleratorCount from the EC2 API's GpuInfo, the same dict (its ``Name`` as written,
    ``SizeInMiB`` in MiB; fetch_aws.py ``get_acc_info``), but for :data:`_AWS_NAME_OVERRIDES` and
    :data:`_AWS_COUNT_OVERRIDES` (h37b m11). Every GPU of ``Gpus`` is read (h37b N3): each must name the row's GPU,
    the counts (whole numbers, not bools or texts) add up to AcceleratorCount, each SizeInMiB is a real positive
    number (h37b N4) within 10 % of the catalog GPU's memory (``gpu_memory`` GiB), and a TotalGpuMemoryInMiB, where
    given, is the GPUs' memory summed (within 10 %). Lambda (h39b N1: its GpuInfo was not read): SkyPilot's fetcher
    writes ``{'Gpus': [{'Name': <AcceleratorName>, 'Count': <AcceleratorCount>, 'MemoryInfo': {'SizeInMiB': ...}}],
    'TotalGpuMemoryInMiB': <one GPU's SizeInMiB>}`` (fetch_lambda_cloud.py ``create_catalog``, skypilot-org/skypilot
    @115eca47b739), so it is checked as AWS's is, its total read as one GPU's memory or the sum."""
    from planner.catalog.aliases import runpod_name

    if provider not in ("runpod", "aws", "lambda"):
        return None
    if not info.strip():
        return None if provider != "runpod" else ("no GpuInfo (empty): SkyPilot's RunPod fetcher writes one on every "
                                                  "GPU row, so the row is not one of its files")
    inst = instance.strip().lower()
    if provider != "runpod" and (not info.strip().startswith(("{", "[", "(")) or info.strip().replace(" ", "") == "{}"):
        # not the EC2 API's dict (a bare name, as hand-made files write it; 'None'): not SkyPilot's v8, not read; a
        # list or tuple ('[]') is read, and said not to be the dict SkyPilot writes (h39b 15: taken as empty)
        return None
    read = _info_gpus(info)
    if isinstance(read, str):
        # a GpuInfo holding ' is quoted with " (cut after 40 characters, as _quoted does), so the summary's grouping
        # (planner.catalog.import_summary) reads it as one value, not as fragments (h38b m4: "': [{'")
        text = info.strip()
        shown = _quoted(text) if "'" not in text or '"' in text else _quoted(text, quote='"')  # cut with its count
        return f"its GpuInfo {shown} {read}"
    gpus, total = read
    own = (lambda n: runpod_name(n)) if provider == "runpod" else (lambda n: n.strip())
    summed, sizes = 0, []
    for name, said, size in gpus:
        if not isinstance(name, str):
            return f"its GpuInfo names {name!r}, not a GPU's name: unreadable"
        renamed = provider == "aws" and name.strip().lower() == _AWS_NAME_OVERRIDES.get(inst, "").lower()
        if own(name).lower() != acc.lower() and not renamed:
            shown = f", which SkyPilot writes as {_quoted(own(name))}," if own(name) != name else ""
            return (f"its GpuInfo names {_quoted(name)}{shown} but AcceleratorName is {_quoted(acc)}: the row names "
                    "two GPUs")
        if not _info_number(said, whole=True):
            return f"its GpuInfo's Count {said!r} for {_quoted(name)} is not a whole number of GPUs: unreadable"
        if size is not None and not _info_number(size, whole=False):
            return f"its GpuInfo's SizeInMiB {size!r} for {_quoted(name)} is not a positive number: unreadable"
        summed += int(said)  # type: ignore[arg-type]
        sizes.append((said, size))
    if summed != count and not (provider == "aws" and inst.startswith(_AWS_COUNT_OVERRIDES)):
        return f"its GpuInfo gives {_quoted(acc)} x{summed}, but AcceleratorCount is {count}"
    want = (gpu_memory or {}).get(gid)
    for said, size in sizes:
        if want and size is not None:
            gib = size / 1024 if size >= 1024 or provider == "aws" else size  # type: ignore[operator]
            if abs(gib - want) > 0.1 * want:
                return (f"its GpuInfo gives {gib:g} GiB per GPU ({_quoted(str(size))} in SizeInMiB), but {acc} is "
                        f"{gid}, {want:g} GiB")
    if total is not None and not (provider == "aws" and inst.startswith(_AWS_COUNT_OVERRIDES)):
        known = [s * n for n, s in sizes if s is not None]  # type: ignore[operator]
        # SkyPilot's Lambda fetcher writes one GPU's memory as the total (fetch_lambda_cloud.py: 'TotalGpuMemoryInMiB':
        # GPU_TO_MEMORY[gpu]; v8 gpu_4x_a6000: 49152), so a Lambda total may be that or the sum
        one = [s for _, s in sizes if s is not None] if provider == "lambda" and len(sizes) == 1 else []
        if not _info_number(total, whole=False) or (known and len(known) == len(sizes)
                                                    and abs(total - sum(known)) > 0.1 * sum(known)  # type: ignore
                                                    and not (one and abs(total - one[0]) <= 0.1 * one[0])):  # type: ignore
            return (f"its GpuInfo's TotalGpuMemoryInMiB {total!r} is not its GPUs' SizeInMiB summed "
                    f"({sum(known):g}): the GpuInfo contradicts itself")
    return None


def _gcp_unpriced(gpus: str, g_price: float | None, g_text: str, g_line: str, price: float | None,
                  price_text: str, cell: str) -> str | None:
    """Why a GCP machine type's row of a zone prices nothing (None: it prices it): its GPU row has no on-demand price
    (0, empty or below the catalog's floor: h34b N2, added as 0 before), or its VM row's is below the floor (h36b m1:
    summed, pricing the host at about 0); ``gpus`` as 'A100 x1', ``cell`` the VM row's Price as written."""
    if not g_price or _below_floor(g_price, g_text, g_text):
        said = _quoted(g_text) if g_text else "empty"
        return (f"its {gpus} GPU row (line {g_line}) has no on-demand price ({said}: 0, empty or below the catalog's "
                f"floor, {MIN_USD_PER_HOUR:g} USD/h), so the GPUs would be priced at 0")
    if price is not None and _below_floor(price, price_text, cell):
        return (f"its VM row's on-demand price {_quoted(price_text)} is below the catalog's floor "
                f"({MIN_USD_PER_HOUR:g} USD/h), so the host would be priced at 0")
    return None


def _gcp_gpu_rows(rows: Sequence[Mapping[str, str]], result: ImportResult
                  ) -> dict[tuple[str, int, str, str], tuple[float | None, float | None, tuple[str, str], str]]:
    """GCP's GPU rows (an accelerator, no machine type): (accelerator, count, region, zone), the texts in lower
    case (h34b N3) -> (on-demand, spot) price of the GPUs, which a machine type's row of that zone adds to its VM
    price (module docstring), the two as written, and the row's line."""
    gpu_rows: dict[tuple[str, int, str, str], tuple[float | None, float | None, tuple[str, str], str]] = {}
    for r in rows:
        if not (r.get("InstanceType") or "").strip() and (r.get("AcceleratorName") or "").strip() \
                and foreign_problem(r) is None:  # one not ASCII is left out, said by _zones (h39b 10)
            count = int(_num(r["AcceleratorCount"]) or 0)
            spot = _spot(r, result)
            key = (fold(r["AcceleratorName"].strip()), count, fold(r["Region"].strip()),
                   fold((r.get("AvailabilityZone") or "").strip()))  # case-blind (h34b N3), ASCII only (h38b N1)
            gpu_rows[key] = (_num(r["Price"]), spot,
                             (r["Price"].strip(), r["SpotPrice"].strip() if spot is not None else ""), str(r["_line"]))
    return gpu_rows


def _digits(x: float, text: str) -> str:
    """A price for a note: ``x`` as '%g' writes it where that is the figure ``text`` writes without an exponent
    ('1', '3.673'), else ``text`` as written (h34b N2: '0.0000001' was shown as '1e-07')."""
    from planner.core.units import written_decimal

    short = f"{x:g}"
    exact = written_decimal(text)
    return short if "e" not in short and (exact is None or written_decimal(short) == exact) else text.strip()


def spot_below(spot: float | None, spot_text: str, price: float, price_text: str) -> bool:
    """Whether a spot price is below its on-demand price, so a spot offer (the module's spot rule): below by the
    digits written (``spot_text``, ``price_text``; GCP: the sums of the two rows' digits) where Decimal reads both,
    as the catalog's floor and cap are (h33b m7: '1.00000000000000000001' is not below '1.0', though both read as
    the float 1.0), and below by the floats written, so that the overlay writes it below (h34b m1:
    '0.99999999999999999999' and '1.0' would both be written 1.0: no offer)."""
    from planner.core.units import written_decimal

    if spot is None:
        return False
    # floats read from digits are within a part in 10^15 of them, GCP's sums within 1e-6 (rounded): a gap wider than
    # that is told by the floats, without reading the digits again (h33b N5: cost)
    margin = 1e-6 + 1e-9 * abs(price)
    if spot < price - margin or spot > price + margin:
        return spot < price
    exact_spot, exact_price = written_decimal(spot_text), written_decimal(price_text)
    if exact_spot is not None and exact_price is not None and not exact_spot < exact_price:
        return False
    # below by its digits yet equal as floats ('0.99999999999999999999' and '1.0'): it would be written equal to
    # on-demand, so no discount worth writing (h34b m1)
    return spot < price


def _noted(provider: str, r: Mapping[str, str], price: float, spot: float | None, result: ImportResult,
           texts: tuple[str, str] = ("", "")) -> str:
    """The row's region as the overlay writes it (planner.catalog.cloud.region_case), its line kept in ``result``
    where that changed it, and where its spot price is no offer (at or above on-demand by the digits ``texts``, the
    price and spot price as written: the module's spot rule, :func:`spot_below`)."""
    if spot is not None and not spot_below(spot, texts[1], price, texts[0]):
        result.spot_above_lines.append(str(r["_line"]))
    region, cased = r["Region"].strip(), region_case(provider, r["Region"].strip())
    if cased != region:
        (result.region_case_lines if cased == region.lower() else result.region_upper_lines).append(str(r["_line"]))
    return cased


def _spot(r: Mapping[str, str], result: ImportResult) -> float | None:
    """A row's spot price; 0 (SkyPilot's files write 0 where a cloud has no spot offer, and a value such
    as 1e-400 reads as 0) is no spot offer: None, its line kept in ``result.no_spot_lines``; so is one below the
    catalog's floor (MIN_USD_PER_HOUR, by its digits), its line kept in ``result.spot_floor_lines``."""
    spot = _num(r["SpotPrice"])
    if spot is not None and spot == 0 and _NONZERO.match((r["SpotPrice"] or "").strip()):
        # '1e-400' reads as 0 but is written below the floor, not 0: counted so (h37b m7)
        result.spot_floor_lines.append(str(r["_line"]))
        return None
    if spot is not None and spot <= 0:
        result.no_spot_lines.append(str(r["_line"]))
        return None
    if spot is not None and _below_floor(spot, (r["SpotPrice"] or "").strip(), r["SpotPrice"] or ""):
        # below the catalog's floor (by its digits): no spot offer, on any row of any cloud, counted (h36b m1: an AWS
        # row lost its on-demand offer over it, a GCP VM row's was summed)
        result.spot_floor_lines.append(str(r["_line"]))
        return None
    return spot


