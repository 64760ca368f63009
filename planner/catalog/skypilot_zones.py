"""The zone and region rules of ``planner catalog import-skypilot`` (moved from planner.catalog.skypilot_rows for
room; h39b): which availability zones are a Region's (:func:`_zone_problem`), which Region values
are a zone's name or hold a control character (:func:`region_problem`, :func:`zone_region`), the AWS zone-id
prefixes (:func:`aws_zone_id_prefix`), ASCII-only case folding (:func:`fold`) and how a non-ASCII character is
named (:func:`_first_foreign`). Sources: SkyPilot's fetchers as cited beside each rule."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from planner.catalog.skypilot_csv import _quoted

def fold(text: str) -> str:
    """``text`` in lower case where it is ASCII as written, else as written: a text holding another character is
    never folded into an ASCII one (h38b N1: U+212A KELVIN SIGN lower-cases to 'k', so a zone 'us-east-1\u212a' was
    one with 'us-east-1k', and a GPU or zone compared case-blind matched its lookalike)."""
    return text.lower() if text.isascii() else text



#: The words of an AWS region's name as its zone ids abbreviate them (us-east-1 -> use1, ap-northeast-1 -> apne1,
#: us-gov-west-1 -> usgw1), AWS EC2 User Guide, "AZ IDs"; a word not listed stands for its first letter.
_AWS_ZONE_ID_WORDS = {"central": "c", "east": "e", "west": "w", "north": "n", "south": "s", "northeast": "ne",
                      "northwest": "nw", "southeast": "se", "southwest": "sw", "gov": "g"}


def aws_zone_id_prefix(region: str) -> str:
    """The prefix of an AWS region's zone ids, as SkyPilot's AWS fetcher writes them in ``AvailabilityZone``
    (sky/catalog/data_fetchers/fetch_aws.py joins each zone name with its id: ``use1-az1``, a Local Zone
    ``use1-atl2-az1``): ``us-east-1`` -> ``use1``; a region name of fewer than three parts gives '' (none)."""
    parts = region.lower().split("-")
    if len(parts) < 3:
        return ""
    return parts[0] + "".join(_AWS_ZONE_ID_WORDS.get(w, w[:1]) for w in parts[1:-1]) + parts[-1]


#: AWS zone names (SkyPilot's fetch_aws.py writes the zone id, ``ZoneId`` of EC2 DescribeAvailabilityZones, in
#: AvailabilityZone, and the name in AvailabilityZoneName): a regular zone is the region's name and one letter
#: (``us-east-1a``), a Local Zone the region's name, a city's letters, digits and a letter (``us-east-1-bos-1a``), a
#: Wavelength zone ``us-east-1-wl1-bos-wlz-1``; ids are the region's prefix (:func:`aws_zone_id_prefix`) and
#: ``-az`` digits (``use1-az4``), a Local Zone's ``use1-bos1-az1`` (AWS EC2 User Guide, "Regions and Zones").
_AWS_ZONE_REST = re.compile(r"[a-z]|-[a-z]+-[0-9]+[a-z]|-wl[0-9]+-[a-z]+-wlz-[0-9]+")
_AWS_ZONE_ID_REST = re.compile(r"-(?:[a-z]+[0-9]+-)?az[0-9]+|-wl[0-9]+-[a-z]+-wlz[0-9]+")  # use1-wl1-bos-wlz1
#: RunPod's data centres (AvailabilityZone) by the country (Region) they are in, as SkyPilot's RunPod fetcher lists
#: them (REGION_ZONES, fetch_runpod.py @06f47324759f): 'US-GA-1' and 'CA-MTL-1' name the country first, 'EU-RO-1',
#: 'EUR-IS-1', 'AP-JP-1', 'OC-AU-1' and 'SEA-SG-1' name a continent first, then the country.
_RUNPOD_CONTINENTS = frozenset({"eu", "eur", "ap", "oc", "sea", "sa", "af", "me"})


def _aws_zone_ok(zone: str, region: str) -> bool:
    """Whether ``zone`` (lower case, ASCII) is an AWS zone name or id of ``region`` (:data:`_AWS_ZONE_REST`)."""
    if zone.startswith(region) and _AWS_ZONE_REST.fullmatch(zone[len(region):]):
        return True
    prefix = aws_zone_id_prefix(region)
    return bool(prefix) and zone.startswith(prefix) and bool(_AWS_ZONE_ID_REST.fullmatch(zone[len(prefix):]))


def _runpod_zone_ok(zone: str, region: str) -> bool:
    """Whether a RunPod data centre ``zone`` ('us-ga-1', lower case) is in the country ``region`` ('us')."""
    parts = zone.split("-")
    if len(parts) != 3 or not all(p.isascii() and p.isalnum() for p in parts) or not parts[2].isdigit():
        return False
    return (parts[1] if parts[0] in _RUNPOD_CONTINENTS else parts[0]) == region


def _zone_problem(provider: str, r: Mapping[str, str]) -> str | None:
    """Why a row's ``AvailabilityZone`` cannot place its prices in its ``Region`` (None: it can, or the layout has
    no such column, or the provider has no zones: Azure, Lambda).

    AWS (SkyPilot's fetcher joins every row to a zone of its region, inner: an empty zone is never written;
    github.com/skypilot-org/skypilot sky/catalog/data_fetchers/fetch_aws.py @005261080a6b) writes a zone of
    :data:`_AWS_ZONE_REST` or :data:`_AWS_ZONE_ID_REST` only (h37b N1: 'us-east-1ab', 'us-east-1-x', 'use1-az' were
    taken); GCP's zones are exactly ``REGION-LETTER`` (``us-central1-a``; fetch_gcp.py @21fd55418804
    ``_get_machine_type_for_zone`` writes each name of Compute Engine's zones list and its Region as
    ``zone.rpartition('-')[0]``; h37b N2: 'us-central1-1' was taken); RunPod's are data centres of the Region's
    country (:func:`_runpod_zone_ok`; fetch_runpod.py writes one from REGION_ZONES on every row, so an empty one is
    left out too; h37b m10). A zone holding a character other than ASCII is no zone (the clouds write them in
    ASCII). An empty zone in an AWS or RunPod file that has the column, or a zone of another region, would set that
    region's spot price from another place (h36b N2)."""
    if provider not in ("aws", "gcp", "runpod") or "AvailabilityZone" not in r:
        return None
    written = (r.get("AvailabilityZone") or "").strip()
    zone, region = written.lower(), fold((r.get("Region") or "").strip())
    pattern = {"aws": r"[a-z]+(-[a-z]+)+-\d+", "gcp": r"[a-z]+-[a-z]+\d+", "runpod": r"[a-z]{2}"}[provider]
    if not re.fullmatch(pattern, region):
        # a region that is no region name (a lookalike, 'us--east-1', a zone's name): said as that, later
        return None
    if not zone:
        if provider == "gcp":
            return None
        return (f"no AvailabilityZone (empty): SkyPilot's {'AWS' if provider == 'aws' else 'RunPod'} fetcher "
                "writes a zone on every row, and the zone places the row's spot price")
    if not written.isascii():  # judged as written: U+212A KELVIN SIGN lower-cases to 'k' (h38b N1)
        ok = False
    elif provider == "gcp":
        ok = zone.startswith(region + "-") and bool(re.fullmatch(r"-[a-z]", zone[len(region):]))
    elif provider == "runpod":
        ok = _runpod_zone_ok(zone, region)
    else:
        ok = _aws_zone_ok(zone, region)
    if ok:
        return None
    form = {"gcp": "a GCP zone is REGION-LETTER, us-central1-a",
            "aws": "an AWS zone is the region's name and one letter, us-east-1a, a Local Zone us-east-1-bos-1a, a "
                   "Wavelength zone us-east-1-wl1-bos-wlz-1, or a zone id use1-az4",
            "runpod": "a RunPod zone is a data centre of the Region's country, US-GA-1 under US"}[provider]
    return (f"its AvailabilityZone {_quoted(written)} is not a zone of its Region "
            f"{_quoted((r.get('Region') or '').strip())} ({form}), so it cannot place the row's prices")


def region_problem(provider: str, region: str) -> str | None:
    """Why a Region ``region`` (as the file writes it, blanks around it dropped) is never a region's: it holds a
    control character (an ESC starting a terminal sequence, '\\x1b[31mRED'), or it is an availability zone's name
    ('us-east-1a' of us-east-1, 'us-central1-b' of us-central1), as the Region and AvailabilityZone columns swapped
    would give; None otherwise (a lookalike or a malformed name is judged by planner.catalog.skypilot)."""
    from planner.core.errors import char_name

    ctrl = next((c for c in region if c.isascii() and unicodedata.category(c) == "Cc"), None)
    if ctrl is not None:  # a C1 control (U+009B) is not ASCII: said as such by planner.catalog.skypilot
        return (f"the region {_quoted(region)} holds {char_name(ctrl)}, a control character, which no region name "
                "holds (the clouds write them in letters, digits and '-', e.g. us-east-1)")
    of = zone_region(provider, region)
    if of is None:
        return None
    return (f"the region {_quoted(region)} is an availability zone's name ("
            + (f"a zone of {of}" if of else "a zone id") + "), not a region's: are "
            "the Region and AvailabilityZone columns swapped?")


#: The zone-id abbreviations of :data:`_AWS_ZONE_ID_WORDS` read back, two letters first ('se' is southeast).
_AWS_ZONE_ID_BACK = sorted(((v, k) for k, v in _AWS_ZONE_ID_WORDS.items()), key=lambda kv: -len(kv[0]))


def _aws_id_region(prefix: str) -> str:
    """The AWS region whose zone ids start ``prefix`` ('use1' -> 'us-east-1', 'apse1' -> 'ap-southeast-1'), read
    back by :data:`_AWS_ZONE_ID_WORDS`; '' where it cannot be read back."""
    m = re.fullmatch(r"([a-z]{2})([a-z]+)([0-9]+)", prefix)
    if not m:
        return ""
    words, rest = [], m.group(2)
    while rest:
        hit = next(((a, w) for a, w in _AWS_ZONE_ID_BACK if rest.startswith(a)), None)
        if hit is None:
            return ""
        words.append(hit[1])
        rest = rest[len(hit[0]):]
    return "-".join([m.group(1), *words, m.group(3)])


def zone_region(provider: str, text: str) -> str | None:
    """The region of which ``text`` (a Region column's value or a ``--region``, as written) is an availability
    zone's name, '' for a zone whose region cannot be read back, None where it is no zone's name (h38b N6: only
    'us-east-1a' was told; a Local Zone, Wavelength zone, zone id or RunPod data centre passed as a region):

    - AWS: ``us-east-1a``, a Local Zone ``us-east-1-bos-1a``, a Wavelength zone ``us-east-1-wl1-bos-wlz-1``
      (-> us-east-1), a zone id ``use1-az4``, ``use1-bos1-az1``, ``use1-wl1-bos-wlz1`` (-> the region its prefix
      reads back to, :func:`aws_zone_id_prefix`); GCP: ``us-central1-b``; RunPod: a data centre ``US-GA-1`` (-> US,
      ``EU-RO-1`` -> RO; :func:`_runpod_zone_ok`). Judged in ASCII only: a text holding another character is no
      zone's name here (it is said as not ASCII)."""
    if not text.isascii():
        return None
    low = text.strip().lower()
    if provider == "aws":
        region = r"([a-z]+(?:-[a-z]+)+-[0-9]+)"
        m = re.fullmatch(region + r"(?:[a-z]|-[a-z]+-[0-9]+[a-z]|-wl[0-9]+-[a-z]+-wlz-[0-9]+)", low)
        if m:
            return m.group(1)
        m = re.fullmatch(r"([a-z]+[0-9]+)(?:-(?:[a-z]+[0-9]+-)?az[0-9]+|-wl[0-9]+-[a-z]+-wlz[0-9]+)", low)
        return None if m is None else _aws_id_region(m.group(1))
    if provider == "gcp":
        m = re.fullmatch(r"([a-z]+-[a-z]+[0-9]+)-[a-z]", low)
        return m.group(1) if m else None  # us-central1-b: a zone of us-central1, not 'us-central1-' (h37b m5)
    if provider == "runpod":
        m = re.fullmatch(r"([a-z]+)-([a-z]+)-[0-9]+", low)
        if m:
            return (m.group(2) if m.group(1) in _RUNPOD_CONTINENTS else m.group(1)).upper()
    return None


def _region_problem(provider: str, r: Mapping[str, str]) -> str | None:
    """:func:`region_problem` of a row's Region."""
    return region_problem(provider, (r.get("Region") or "").strip())


#: What a character without a Unicode name is, by its general category (unicodedata.name knows none of these).
_UNNAMED = {"Cc": "a control character", "Cn": "an unassigned code point", "Co": "a private-use character",
            "Cs": "a lone surrogate"}


def _first_foreign(text: str) -> str | None:
    """The first character of ``text`` outside ASCII, as 'U+FF21 FULLWIDTH LATIN CAPITAL LETTER A', or for one
    without a name as 'U+009B (a C1 control character)'; None when there is none."""
    c = next((c for c in text if not c.isascii()), None)
    if c is None:
        return None
    name = unicodedata.name(c, "")
    if name:
        return f"U+{ord(c):04X} {name}"
    kind = "a C1 control character" if 0x80 <= ord(c) <= 0x9F else \
        _UNNAMED.get(unicodedata.category(c), "a character without a Unicode name")
    return f"U+{ord(c):04X} ({kind})"


#: The columns that place a row and match it to its GPU (h39b 8-10): a character outside ASCII in any of them is
#: the first reason a row is left out for, before any check that reads the column (SkyPilot's files write them
#: all in ASCII, the clouds' names; a lookalike, U+212A KELVIN SIGN drawn as 'K', would otherwise be blamed on
#: another check, or joined case-blind to the real name).
COMPARED_COLUMNS = ("InstanceType", "AcceleratorName", "Region", "AvailabilityZone")


def foreign_problem(r: Mapping[str, str], gpu_hint: str | None = None) -> str | None:
    """Why row ``r`` is left out for a character outside ASCII in a column of :data:`COMPARED_COLUMNS` (the first
    such column, the first such character named, ``planner.core.names.unsafe_problem``'s words for a control,
    bidirectional or invisible one in the instance type or region); None where all are ASCII. ``gpu_hint``: the
    reason to give for a non-ASCII AcceleratorName whose NFKC form is a catalog GPU (the caller's, naming it)."""
    from planner.core.names import unsafe_problem

    for col in COMPARED_COLUMNS:
        text = (r.get(col) or "").strip()
        foreign = _first_foreign(text)
        if foreign is None:
            continue
        what = {"InstanceType": "instance type", "Region": "region"}.get(col)
        why = unsafe_problem(text) if what else None
        if col == "InstanceType":
            return f"the instance type {why}" if why else (
                f"the instance type holds {foreign}, not ASCII as the clouds' instance types are, and the catalog id "
                "would drop it")
        if col == "Region":
            return f"the region {_quoted(text)} {why}" if why else (
                f"the region {_quoted(text)} holds {foreign}, not ASCII as the clouds' regions are (a lookalike of "
                "another region)")
        if col == "AcceleratorName" and gpu_hint:
            return gpu_hint
        if col == "AcceleratorName":  # said as a GPU without an entry is, with its character (h39b: 'mı300x')
            return f"GPU {_quoted(text)} has no gpus.yaml entry; it holds {foreign}, not ASCII as SkyPilot's GPU names are"
        return (f"its AvailabilityZone {_quoted(text)} holds {foreign}, not ASCII as the clouds' zones are, so it is not "
                f"a zone of its Region {_quoted((r.get('Region') or '').strip())}")
    return None


def _malformed_region(region: str) -> str:
    """Why a region that is no region name (white space or punctuation in it: 'us east 4') is not imported, with
    the name it may mean ('us-east-4'): the clouds name regions in letters, digits and '-' (us-east-1,
    us-central1, eastus). One holding a control character (an ESC starting a terminal sequence, '\x1b[31mRED') is
    said to hold it, the value as the file writes it, with no guess (h36b m9: '31mred' was offered); one that does
    not start with a letter ('=1+1') gets no guess either (h41b m8)."""
    import unicodedata

    from planner.core.errors import char_name

    ctrl = next((c for c in region if unicodedata.category(c) == "Cc"), None)
    if ctrl is not None:
        return (f"the region {_quoted(region)} holds {char_name(ctrl)}, a control character, which no region name "
                "holds (the clouds write them in letters, digits and '-', e.g. us-east-1)")
    guess = "-".join(p for p in re.split(r"[^A-Za-z0-9]+", region) if p)
    # a guess only for a region that starts as one does, with a letter (h41b m8: '=1+1', a spreadsheet formula,
    # was offered '1-1')
    hint = f"; did the file mean {guess!r}?" if guess and region.strip()[:1].isalpha() else ""
    return (f"the region {_quoted(region)} is no region name (the clouds write them in letters, digits and '-', "
            f"e.g. us-east-1){hint}")
