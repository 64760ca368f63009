"""What a SkyPilot import left out or read otherwise, said in a few lines (planner catalog import-skypilot):
counts by reason with the first rows (:func:`left_out_lines`), and the rows whose figures were read as no spot
offer or whose region was written in lower case (:func:`noted_lines`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

#: A reason that names the CSV line it was found on: 'line 12, column Price: ...' or 'line 12: ...'.
_LINE_REASON = re.compile(r"line ([0-9]+)(?:, |: )(.*)", re.S)


def left_out_lines(skipped: Mapping[str, str], *, reasons: int = 6, names: int = 3) -> list[str]:
    """What an import left out, in at most ``reasons`` + 1 lines: per reason (most instance types first)
    the count and the first ``names`` instance types; the rest in one line. A reason found on a line of
    the file ('line 12, column Price: ...') is counted without its line number (2,000 rows priced '$1.29'
    are one reason), its first rows shown by line, in the file's order ('line 2: g6.xlarge').

    A provider's file lists hundreds of instance types without a GPU the catalog knows; one line
    each (~1,800 for AWS) would bury the rows that were read.
    """
    by_reason: dict[str, list[tuple[int, str]]] = {}
    for inst, why in skipped.items():
        m = _LINE_REASON.fullmatch(why)
        line = int(m.group(1)) if m else -1
        by_reason.setdefault(m.group(2) if m else why, []).append((line, inst))
    order = sorted(by_reason, key=lambda why: (-len(by_reason[why]), why))
    lines = []

    def item(line: int, inst: str) -> str:
        if line < 0:
            return inst
        return f"line {line}" + ("" if inst.startswith("the row on line ") else f": {inst}")

    for why in order[:reasons]:
        insts = sorted(by_reason[why])
        shown = ", ".join(item(*x) for x in insts[:names]) + (", ..." if len(insts) > names else "")
        lines.append(f"left out {len(insts)}: {why} ({shown})")
    rest = order[reasons:]
    if rest:
        count = sum(len(by_reason[why]) for why in rest)
        lines.append(f"left out {count} more for {len(rest)} other reason(s) (e.g. "
                     f"{item(*sorted(by_reason[rest[0]])[0])}: {rest[0]})")
    return lines


def noted_lines(counted: Sequence[tuple[Sequence[str], str]], *, shown: int = 5) -> list[str]:
    """One line per kind of row an import read otherwise than written, as (the rows' CSV line numbers, what was
    done): 'spot price 0 read as no spot offer: 3 row(s) (line 4, 9, 12)', the first ``shown`` lines named."""
    out = []
    for lines, what in counted:
        if lines:
            first = ", ".join(lines[:shown]) + (", ..." if len(lines) > shown else "")
            out.append(f"{what}: {len(lines)} row(s) (line {first})")
    return out
