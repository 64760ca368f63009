"""What a SkyPilot import left out or read otherwise, said in a few lines (planner catalog import-skypilot):
counts by kind of reason with the first rows (:func:`left_out_lines`), and the rows whose figures were read as no spot
offer or whose region was written in lower case (:func:`noted_lines`), and a ``--region`` that names none of
the file's regions (:func:`region_note`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

#: A reason that names the CSV line it was found on: 'line 12, column Price: ...' or 'line 12: ...'.
_LINE_REASON = re.compile(r"line ([0-9]+)(?:, |: )(.*)", re.S)


#: What a reason says of the row's own values, left out to find its kind: a quoted text (as repr writes it) with
#: the count of characters a long one is given ("'11e999' (6 characters)"), or a number with its sign and exponent
#: and not inside a name ('-8.0', '1e+20'; not the 1 of us-east-1) ('$0.5' and '$1.5' are one kind of "column
#: Price: ... is not a number"; 1.5 and 2.5 one "a fraction"). Each is shown whole, as the row gives it (h31b M2:
#: '-8.0' was shown as '8.0', and a count of characters as a stray ', 6'). An apostrophe after a letter ("GpuInfo's",
#: "GPUs'") opens no quoted value, and a complex number as repr writes it ('(1+0j)') is one value (h38b m4: the
#: values shown were fragments of the sentence, "'s Count (1+0j) for '").
#: A GPU count after ' x' ("'A10G' x2") is a value too (h39b 16: rows differing only in it were a kind each).
_VALUE = re.compile(r"(?<![A-Za-z])(?:'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")(?: \([0-9,]+ characters\))?"
                    r"|\(-?[0-9.eE+-]+[-+][0-9.eE]*j\)"
                    r"|(?:(?<![\w.-])|(?<= x))-?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?")


def left_out_lines(skipped: Mapping[str, str], *, reasons: int = 6, names: int = 3, kinds: int = 24) -> list[str]:
    """What an import left out, one line per kind of reason (most rows first, then the file's order): its count
    and its first ``names`` rows in the file's order, past the first ``reasons`` kinds only its first one, so
    that every kind and its first row are said, in a line each (h24b M1: a line for "N more for M other
    reasons" hid all but one of them). A reason found on a line of the file ('line 12, column Price: ...') is
    counted without its line number (2,000 rows priced '$1.29' are one reason), its first rows shown by line
    ('line 2: g6.xlarge'). Reasons that differ only in the row's own values (quoted texts, numbers: :data:`_VALUE`)
    are one kind (h30b N6: 5,000 rows priced '$0.5', '$1.5', ... gave 5,000 lines): its line gives the first
    row's reason whole, how many rows give it with other values, and those rows' values beside their lines
    (each clipped at 40 characters). Past ``kinds`` kinds (more than the reasons the import gives: only names
    the file writes outside quotes, a GPU's, can make more), one last line counts the rest and names the first
    row of each of the next few, so the summary is at most ``kinds`` + 1 lines whatever the file.

    A provider's file lists hundreds of instance types without a GPU the catalog knows; one line
    each (~1,800 for AWS) would bury the rows that were read.
    """
    from planner.core.names import clip_text

    by_kind: dict[str, list[tuple[int, str, str]]] = {}
    for inst, why in skipped.items():
        m = _LINE_REASON.fullmatch(why)
        line = int(m.group(1)) if m else -1
        text = m.group(2) if m else why
        # '1 GPU' and '4 GPUs' are one kind (h41b 16: the plural split rows that differ only in the count)
        by_kind.setdefault(re.sub(r"\x00 GPUs\b", "\x00 GPU", _VALUE.sub("\x00", text)), []).append((line, inst, text))
    for rows in by_kind.values():
        rows.sort()
    order = sorted(by_kind, key=lambda k: (-len(by_kind[k]), by_kind[k][0][:2]))

    def item(line: int, inst: str) -> str:  # an instance type clipped at 40 characters, as reasons clip ids (h29b M2)
        if line < 0:
            return clip_text(inst, 40)
        row = f"the row on line {line}"  # a row of no instance type, or one left out of an instance kept: 'of X'
        if inst.startswith(row + " of "):
            return f"line {line} of {clip_text(inst[len(row) + 4:], 40)}"
        return f"line {line}" + ("" if inst == row else f": {clip_text(inst, 40)}")

    def values(text: str, why: str, inst: str) -> str:  # the row's own values where they differ from the first row's
        said = _VALUE.findall(why)
        named = {repr(inst), repr(clip_text(inst, 40)),  # the row's instance type, named beside it already,
                 f"'{inst[:40]}...' ({len(inst):,} characters)"}  # and as skypilot_csv._quoted cuts it
        return ", ".join(_clipped(v) for i, v in enumerate(_VALUE.findall(text))
                         if (i >= len(said) or v != said[i]) and v not in named)

    lines = []
    for n, kind in enumerate(order[:kinds]):
        rows = by_kind[kind]
        why = rows[0][2]
        other = sum(text != why for _, _, text in rows)
        first = names if n < reasons else 1  # the examples are clipped, never a reason
        shown = ", ".join(item(line, inst) + (f" {v}" if text != why and (v := values(text, why, inst)) else "")
                          for line, inst, text in rows[:first]) + (", ..." if len(rows) > first else "")
        also = f"the same reason with other values in {other:,} row{'s' if other != 1 else ''}" if other else ""
        if also:  # a sentence of its own after a reason that ends one, never glued to its full stop (h40b m5)
            also = f" {also[0].upper()}{also[1:]}" if why.endswith((".", "?", "!")) else f", and {also}"
        lines.append(f"left out {len(rows)}: {why}{also} ({shown})")
    rest = order[kinds:]
    if rest:
        named = "; ".join(f"{by_kind[k][0][2]} ({item(*by_kind[k][0][:2])})" for k in rest[:3])
        more = f"; and {len(rest) - 3:,} more" if len(rest) > 3 else ""
        lines.append(f"left out {sum(len(by_kind[k]) for k in rest):,} more rows for {len(rest):,} other kinds of "
                     f"reason, the first row of each: {named}{more}")
    return lines


def _clipped(value: str, limit: int = 40) -> str:
    """A row's value (:data:`_VALUE`) as the summary shows it beside the row's line: whole up to ``limit``
    characters; a quoted text cut inside its quotes with the count of characters it has (its repr's, as the
    reason quotes it), as planner.catalog.skypilot_csv._quoted cuts a value; a value the reason cut already, with
    its count or not, as the reason gives it, never given the count of the cut text (h40b m12: a cut value's count
    was that of the cut text, 45, on every row)."""
    from planner.core.names import clip_text

    if len(value) <= limit or value.endswith((" characters)", "...'", '..."')):
        return value  # whole, or cut by the reason already (with its count, or without where the reason says it)
    if value[0] in "'\"" and value[-1] == value[0]:
        inner = value[1:-1]
        return f"{value[0]}{inner[:limit]}...{value[0]} ({len(inner):,} characters)"
    return clip_text(value, limit)


def noted_lines(counted: Sequence[tuple[Sequence[str], str]], *, shown: int = 5) -> list[str]:
    """One line per kind of row an import read otherwise than written, as (the rows' CSV line numbers, what was
    done): 'spot price 0 read as no spot offer: 3 row(s) (line 4, 9, 12)', the first ``shown`` lines named."""
    out = []
    for lines, what in counted:
        if lines:
            first = ", ".join(lines[:shown]) + (", ..." if len(lines) > shown else "")
            out.append(f"{what}: {len(lines)} row(s) (line {first})")
    return out


def region_note(given: str, cased: str, zones: Mapping[str, str] | Iterable[tuple[str, str]]) -> str | None:
    """Why ``--region`` (``given``; ``cased``, as the rows are written) names no region of a file whose rows give
    ``zones`` (zone, or '' for a file without zones -> its region, each as written to the overlay), with what to
    give instead; None when it is one of them (h19b M4). Told for an availability zone ('us-east-1a', of region
    us-east-1), a list ('us-east-1,us-west-2': --region takes one region), and otherwise with the file's regions
    closest to it (planner.core.errors.close_matches) or, where none is close, the first few of them. A long
    ``given`` is clipped (planner.core.names.clip_text: its first 80 characters and its length). ``zones`` may be
    (zone, region) pairs, one a row, so that two rows of one zone in two regions both count (h38b m1: a dict kept
    only the last, 'KЅ', and said the file's 'KR' was none of its regions)."""
    from planner.core.errors import close_matches
    from planner.core.names import clip_text

    pairs = list(zones.items()) if isinstance(zones, Mapping) else list(zones)
    regions = sorted({r for _, r in pairs})
    if not regions or cased in regions:
        return None
    said = f"--region {clip_text(given)!r} is no region of the file"  # 5,000 characters echoed as 80 (h20b M6)
    zone = next((r for z, r in pairs if z and z.lower() == cased.lower()), None)
    if zone is not None:
        return (f"{said}: it is an availability zone of region {zone}, and --region takes a region; give "
                f"--region {zone}.")
    parts = [p for p in re.split(r"[\s,;]+", cased) if p]
    if len(parts) > 1:
        held = [p for p in parts if p in regions]
        which = f"e.g. --region {held[0]}" if held else f"the file's regions: {_listed(regions)}"
        return f"{said}: --region takes one region, not a list; import once per region ({which})."
    close = close_matches(cased, regions)
    if close:
        more = f" (or {', '.join(close[1:])})" if close[1:] else ""
        return f"{said}; did you mean --region {close[0]}{more}?"
    return f"{said} (its regions: {_listed(regions)})."


def foreign_region_note(given: str, provider: str, regions: Sequence[str]) -> str:
    """Why a ``--region`` holding a character other than ASCII names no region of a file of ``provider`` whose
    regions are ``regions`` (as written to the overlay): the clouds name regions in ASCII, so it is a lookalike
    (U+2010 HYPHEN for '-'), never taken for the region it looks like. The hint is the region with each lookalike
    as its ASCII prototype (UTS #39 confusables.txt, planner.core.lookalike.PROTOTYPES; an availability zone's name
    as its region: planner.catalog.skypilot_zones.zone_region, h39b 3) only where the file holds that region (h40a
    N6: 'ｘｘ' was hinted as --region xx, which the file does not hold) and it is a plain name (h39b 20: nothing
    else of the value is echoed into a hint to paste); else the file's regions."""
    import unicodedata

    from planner.catalog.cloud import region_case
    from planner.catalog.skypilot_zones import zone_region
    from planner.core.lookalike import PROTOTYPES
    from planner.core.names import char_name, clip_text, escape_unsafe

    odd = next(c for c in given if not c.isascii())
    fixed = "".join(c if c.isascii() else PROTOTYPES.get(c, c) for c in unicodedata.normalize("NFKC", given))
    if fixed.isascii():
        fixed = region_case(provider, zone_region(provider, fixed) or fixed)
    said = (f"--region {escape_unsafe(clip_text(given))!r} holds {char_name(odd)}, not ASCII as the clouds' regions "
            "are, so no row would match it (a lookalike of a region is never taken for it)")
    if re.fullmatch(r"[A-Za-z0-9._-]+", fixed) and fixed in regions:
        return f"{said}; did you mean --region {fixed}?"
    if regions:
        return f"{said}; type the region in ASCII (the file's regions: {_listed(list(regions))})."
    return f"{said}; type the region in ASCII, as the file writes it."


def _listed(names: Sequence[str], most: int = 8) -> str:
    """The first ``most`` of ``names``, joined by ', ', with how many more there are."""
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")
