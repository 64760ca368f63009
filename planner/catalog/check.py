"""``planner catalog check``: what a catalog's figures need before a plan can rest on them.

Checks (each finding names the file, the entry and what to do):

``stale``     a price a plan may pay is old: a ``street``, ``used``, ``quote`` or ``estimate`` price
              dated more than :data:`STALE_MONTHS` months, an ``msrp`` more than
              :data:`STALE_MSRP_MONTHS` months, before the reference date. The prices checked
              are the ones :func:`planner.catalog.prices.select_price` would pay (``price:
              street``, ``price: msrp`` and ``used_ok: true``), not every historical figure kept.
``range``     an ``estimate`` without ``low_usd`` / ``high_usd``: a figure inferred from others
              should say how far off it may be.
``location``  a ``REF:`` id that the catalog's SOURCES.md does not define, defines without saying
              where the document is (a URL, or repository, path and commit), or whose location is
              a path outside the repository (``../shared/...``).
``tflops``    a GPU's ``bf16_tflops`` above its ``vendor_bf16_tflops`` (the vendor's dense figure):
              the time model would run faster than the datasheet allows.

A price item may state why its figure stands despite a check (``exempt: {stale: "reason"}``,
planner.catalog.prices): the finding is then listed as an exception with its reason and does not
fail the check. Notes that do not fail it: cloud rows older than 12 months (their prices may have
changed; the shipped Azure rows come from an older SkyPilot schema) and GPUs without a vendor
figure to check against.

Ages are counted from today's date (:func:`today_date`, the machine's clock), or from ``today``
when given (``--today``): a price is as old as a buyer finds it, so a catalog left alone goes stale
as the months pass, and the check says so. Tests pin ``today=`` so that their answers do not
change with the day they run. (:func:`reference_date`, the newest ``as_of`` of the catalog's
purchase prices, is the catalog's own date; the solver's stale warning counts from it.)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from planner.catalog.prices import Price, legacy_price, select_price
from planner.catalog.sources import SourceIndex, ref_ids, sources_for_catalog
from planner.core.clock import utc_today

#: Street, used, quote and estimate prices older than this (months) are stale.
STALE_MONTHS = 12
#: List prices (msrp) older than this (months) are stale.
STALE_MSRP_MONTHS = 24
#: Cloud rows older than this (months) are noted.
STALE_CLOUD_MONTHS = 12

CHECKS = ("stale", "range", "location", "tflops")

#: Catalog list -> (file, the attribute of its one price).
_PRICED = {"gpus": ("gpus.yaml", "price_usd"), "dimms": ("ram.yaml", "price_usd"),
           "platforms": ("platforms.yaml", "base_price_usd"), "nics": ("network.yaml", "price_usd"),
           "switches": ("network.yaml", "price_usd")}
_OUTSIDE = re.compile(r"(^|[\s(`'\"])\.\./|/work/|(^|[\s(`'\"])~/")


@dataclass(frozen=True)
class Finding:
    """One problem: ``check`` (:data:`CHECKS`, or ``note``), where, what; ``exempt``: the catalog's
    stated reason when the figure stands anyway (the finding does not fail the check)."""

    check: str
    file: str
    id: str
    text: str
    exempt: str = ""

    @property
    def fails(self) -> bool:
        return self.check != "note" and not self.exempt

    def line(self) -> str:
        head = "NOTE" if self.check == "note" else ("EXEMPT" if self.exempt else "FAIL")
        tail = f" -- stated exception: {self.exempt}" if self.exempt else ""
        label = "" if self.check == "note" else f" [{self.check}]"
        where = f"{self.file} {self.id}" if self.id else self.file
        return f"{head}{label} {where}: {self.text}{tail}"


def months(as_of: str) -> int:
    y, m = (int(x) for x in as_of.split("-")[:2])
    return y * 12 + m


def prices_of(record: Any, attr: str) -> tuple[Price, ...]:
    """A record's prices: its ``prices`` list, or its one legacy price."""
    prices = getattr(record, "prices", None)
    if prices:
        return tuple(prices)
    return legacy_price(getattr(record, attr, None), getattr(record, "price_kind", None), as_of=record.as_of,
                        source=record.source)


def reference_date(catalog: Any) -> str:
    """The newest ``as_of`` among the catalog's purchase prices (YYYY-MM)."""
    newest = 0
    for name, (_, attr) in _PRICED.items():
        for r in getattr(catalog, name, ()):
            for p in prices_of(r, attr):
                newest = max(newest, months(p.as_of))
    if not newest:
        d = utc_today()
        return f"{d.year:04d}-{d.month:02d}"
    return f"{(newest - 1) // 12:04d}-{(newest - 1) % 12 + 1:02d}"


def _dated(catalog: Any) -> list[tuple[str, str]]:
    """Every ``as_of`` :func:`check_catalog` ages (the purchase prices and the cloud rows), each with the file and
    entry that give it (``('2021-02-25', 'gpus.yaml rtx-3060-12gb')``)."""
    dated = [(p.as_of, f"{file} {r.id}") for name, (file, attr) in _PRICED.items() for r in getattr(catalog, name, ())
             for p in prices_of(r, attr)]
    return dated + [(i.as_of, f"cloud.yaml {i.id}") for i in getattr(catalog, "instances", ())]


def oldest_date(catalog: Any) -> tuple[str, str] | None:
    """The oldest ``as_of`` among the catalog's purchase prices and cloud rows (what :func:`check_catalog` ages),
    with the file and entry that give it (``('2021-02-25', 'gpus.yaml rtx-3060-12gb')``); None for none."""
    dated = _dated(catalog)
    return min(dated, key=lambda d: (months(d[0]), d[0])) if dated else None


def newest_date(catalog: Any) -> tuple[str, str] | None:
    """The newest ``as_of`` among the catalog's purchase prices and cloud rows, with the file and entry that give
    it (``('2026-11-01', 'ram.yaml ddr5-udimm-16g')``); None for none. Unlike :func:`reference_date` it counts the
    cloud rows too, since the check ages them."""
    dated = _dated(catalog)
    return max(dated, key=lambda d: (months(d[0]), d[0])) if dated else None


def reference_date_problem(catalog: Any, today: str) -> str | None:
    """Why ``today`` (YYYY-MM[-DD], a valid date) cannot be the check's reference date, or None when it can.

    Refused: a date before :data:`planner.core.fields.EARLIEST_DATE` (2000-01-01, the floor of every date
    planner reads), and a month before the month of the catalog's newest price or cloud row
    (:func:`newest_date`): a price dated after the reference date has a negative age, so it would be counted
    fresh and the check would report 0 failed for a catalog it never aged (h16b minor e: ``--today 2020-09``,
    the month of the oldest price, passed with nearly every price dated after it). Ages are whole months
    (:func:`months`), so the newest price's own month is taken: the hint names it, and following it works.
    """
    from planner.core.fields import EARLIEST_DATE

    floor = EARLIEST_DATE.isoformat()
    if today < floor[: len(today)]:
        return (f"{today} is before {floor}; no price or measurement planner reads is that old. Give the date to "
                f"count ages from (YYYY-MM-DD or YYYY-MM), e.g. today's, {today_date()}, the default.")
    newest = newest_date(catalog)
    if newest is not None and months(today) < months(newest[0]):
        later = sum(1 for as_of, _ in _dated(catalog) if months(as_of) > months(today))
        return (f"{today} is before the month of the catalog's newest date, {newest[0]} ({newest[1]}): {later:,} "
                f"of its {len(_dated(catalog)):,} dated prices and cloud rows are dated after it, which the check "
                f"cannot age (it would count them fresh). Give a date from {newest[0][:7]} on, e.g. today's, "
                f"{today_date()}, the default.")
    return None


def today_date() -> str:
    """Today's date in UTC, YYYY-MM-DD (:func:`planner.core.clock.utc_today`): the check's default reference date."""
    return utc_today().isoformat()


def check_catalog(catalog: Any, *, today: str | None = None,
                  sources: SourceIndex | None = None) -> tuple[list[Finding], str]:
    """Every finding (see the module docstring) and the reference date used.

    Args:
        today: the reference date (YYYY-MM[-DD]); default :func:`today_date`. Ages are whole
            months between the two dates' months (a price of 2025-12 is 12 months old on 2026-12-31).
        sources: the catalog's REF ids (default: the SOURCES.md beside its files).
    """
    ref = today or today_date()
    now = months(ref)
    out: list[Finding] = []
    for name, (file, attr) in _PRICED.items():
        for r in getattr(catalog, name, ()):
            out += _price_findings(file, r.id, prices_of(r, attr), now)
    for g in getattr(catalog, "gpus", ()):
        vendor = getattr(g, "vendor_bf16_tflops", None)
        if vendor is None:
            out.append(Finding("note", "gpus.yaml", g.id, "no vendor_bf16_tflops: bf16_tflops "
                               f"{g.bf16_tflops:g} is not checked against a datasheet figure"))
        elif g.bf16_tflops > vendor * 1.005:
            out.append(Finding("tflops", "gpus.yaml", g.id, f"bf16_tflops {g.bf16_tflops:g} is above the vendor's "
                               f"dense figure {vendor:g} (vendor_bf16_tflops): check for a sparse figure or FP16 "
                               "accumulate"))
    stale_cloud: dict[str, list[str]] = {}
    for i in getattr(catalog, "instances", ()):
        if now - months(i.as_of) > STALE_CLOUD_MONTHS:
            stale_cloud.setdefault(f"{i.provider} rows of {i.as_of}", []).append(i.id)
    for what, ids in stale_cloud.items():
        out.append(Finding("note", "cloud.yaml", ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else ""),
                           f"{len(ids)} {what}: more than {STALE_CLOUD_MONTHS} months old; re-import them "
                           "(planner catalog import-skypilot)"))
    if sources is None:
        sources = sources_for_catalog(getattr(catalog, "files", ()))
    out += _source_findings(catalog, sources)
    return out, ref


def _price_findings(file: str, entry_id: str, prices: Sequence[Price], now: int) -> list[Finding]:
    out: list[Finding] = []
    used = {id(p): p for p in (select_price(prices, "street"), select_price(prices, "msrp"),
                               select_price(prices, "street", used_ok=True),
                               select_price([p for p in prices if p.used], "street", used_ok=True)) if p}
    for p in used.values():
        limit = STALE_MSRP_MONTHS if p.kind == "msrp" else STALE_MONTHS
        age = now - months(p.as_of)
        if age > limit:
            out.append(Finding("stale", file, entry_id, f"{p.kind} ${p.usd:,.2f} ({p.condition}) of {p.as_of} is "
                               f"{age} months old (a {p.kind} price: at most {limit}); give a newer dated price",
                               p.exemption("stale")))
    for p in prices:
        if p.kind == "estimate" and (p.low_usd is None or p.high_usd is None):
            out.append(Finding("range", file, entry_id, f"estimate ${p.usd:,.2f} of {p.as_of} has no range: give "
                               "low_usd and high_usd (what the figures it rests on span)", p.exemption("range")))
    return out


def _cited(catalog: Any) -> dict[str, list[str]]:
    """REF id -> 'file id' of the entries citing it (entry sources, notes and price sources)."""
    out: dict[str, list[str]] = {}
    files = {"gpus": "gpus.yaml", "dimms": "ram.yaml", "platforms": "platforms.yaml", "nics": "network.yaml",
             "switches": "network.yaml", "instances": "cloud.yaml", "models": "models.yaml", "pcie": "pcie.yaml"}
    for name, file in files.items():
        for r in getattr(catalog, name, ()):
            texts = [getattr(r, "source", ""), getattr(r, "notes", "") or ""]
            texts += [p.source for p in getattr(r, "prices", ()) or ()]
            for t in texts:
                for ref in ref_ids(t):
                    out.setdefault(ref, []).append(f"{file} {getattr(r, 'id', getattr(r, 'gen', ''))}")
    return out


def _source_findings(catalog: Any, sources: SourceIndex) -> list[Finding]:
    out: list[Finding] = []
    shown = sources.files[-1] if sources.files else "SOURCES.md"
    for ref, where in sorted(_cited(catalog).items()):
        if ref not in sources:
            out.append(Finding("location", shown, f"REF:{ref}", f"cited by {', '.join(dict.fromkeys(where))} but "
                               "defined in no SOURCES.md: add a row saying what and where the document is"))
    for ref, doc in sources.docs.items():
        if not doc.urls:
            out.append(Finding("location", doc.file, f"REF:{ref}", "says what the document is but not where: give a "
                               "URL, or a repository, path and commit (github.com/OWNER/REPO `PATH` @COMMIT)"))
        if _OUTSIDE.search(doc.where) or _OUTSIDE.search(doc.text):
            out.append(Finding("location", doc.file, f"REF:{ref}", "points outside the repository ('../', '/work/' "
                               "or '~/'): cite the document itself (its URL or repository), not a local copy"))
    for p in sources.problems:  # each names its own file (an overlay's SOURCES.md, or the shipped one) and line
        file, _, line_and_text = next(((f, "", p[len(f) + 1:]) for f in sources.files if p.startswith(f"{f}:")),
                                      (shown, "", p))
        line, sep, text = line_and_text.partition(": ")
        if sep and line.isdigit():
            out.append(Finding("location", f"{file}:{line}", "", text))
        else:
            out.append(Finding("location", file, "", line_and_text))
    return out


def failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.fails]


__all__ = ["CHECKS", "Finding", "STALE_MONTHS", "STALE_MSRP_MONTHS", "check_catalog", "failures", "prices_of",
           "newest_date", "oldest_date", "reference_date", "reference_date_problem", "today_date"]
