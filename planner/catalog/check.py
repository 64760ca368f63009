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
from pathlib import Path
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


#: The most undefined REF ids one warning of :func:`source_warnings` names (the rest are counted), and the most
#: entries named as citing each one.
_IDS_SHOWN = 10
_CITERS_SHOWN = 3


def source_warnings(catalog: Any, sources: SourceIndex, *, show: Any = str) -> tuple[str, ...]:
    """What ``planner plan``, ``compare`` and ``estimate`` warn of about the catalog's citations, one line per
    problem, each starting 'catalog sources: ' (``planner catalog check`` FAILs the same):
    :func:`source_problem_warnings`, then :func:`undefined_ref_warning`.

    Args:
        catalog: the catalog (its ``files`` name the folders; its entries are read by attribute).
        sources: its REF ids (:func:`planner.catalog.sources.sources_for_catalog`).
        show: gives a path the name the output prints (default: as built).
    """
    undefined = undefined_ref_warning(catalog, sources, show=show)
    return source_problem_warnings(sources) + ((undefined,) if undefined else ())


def overlay_source_warnings(catalog: Any) -> tuple[str, ...]:
    """:func:`source_warnings` of ``catalog`` (paths as :func:`planner.catalog.sources.shown_catalog_path` shows
    them), read from the ``SOURCES.md`` beside its files, when an overlay is in use (its files in a second
    folder: ``--catalog DIR``); () for the shipped catalog alone (its tests keep it whole) or one built in code
    without files. ``planner compare`` and ``planner estimate`` add these to their warnings.
    """
    from planner.catalog.sources import catalog_folders, shown_catalog_path

    files = getattr(catalog, "files", ()) or ()
    if len(catalog_folders(files)) < 2:
        return ()
    return source_warnings(catalog, sources_for_catalog(files, show=shown_catalog_path), show=shown_catalog_path)


def source_problem_warnings(sources: SourceIndex) -> tuple[str, ...]:
    """One 'catalog sources: ' line per problem reading a ``SOURCES.md`` of ``sources``: one that cannot be read
    at all, is not UTF-8, or holds a row without a usable id (an overlay without one is no problem). Texts from
    files are escaped (:func:`planner.core.names.escape_unsafe`)."""
    from planner.core.names import escape_unsafe

    return tuple(escape_unsafe(f"catalog sources: {p}") for p in sources.problems if ": no such file" not in p)


def undefined_ref_warning(catalog: Any, sources: SourceIndex, *, told: Iterable[str] = (),
                          show: Any = str) -> str | None:
    """The 'catalog sources: ' line naming the ``REF:`` ids the catalog's entries cite (their sources, notes and
    price sources) that no ``SOURCES.md`` of ``sources`` defines, with the entries citing each and the file to
    define them in (the last catalog folder's ``SOURCES.md``: the overlay's); None when there are none. At most
    :data:`_IDS_SHOWN` ids are named (the rest counted), escaped (:func:`planner.core.names.escape_unsafe`).

    Args:
        told: ids another warning of the run names already (a plan's quote lines): not named again.
        show: gives a path the name the output prints (default: as built).
    """
    from planner.catalog.sources import SOURCES_FILE, catalog_folders
    from planner.core.names import escape_unsafe

    told = set(told)
    undefined = {ref: where for ref, where in _cited(catalog).items() if ref not in sources and ref not in told}
    if not undefined:
        return None
    folders = catalog_folders(getattr(catalog, "files", ()) or ())
    target = show(str(folders[-1] / SOURCES_FILE)) if folders else "the catalog's SOURCES.md"
    # 'cloud.yaml my-g5' as the file the entry was read from names it (catalog.sources: an overlay's path)
    paths = {f"{Path(r.file).name} {r.id}": f"{show(r.file)} {r.id}" for r in getattr(catalog, "sources", ()) or ()
             if getattr(r, "file", "")}
    shown = []
    for ref, where in list(undefined.items())[:_IDS_SHOWN]:
        citers = list(dict.fromkeys(paths.get(w, w) for w in where))
        shown.append(f"REF:{ref} ({', '.join(citers[:_CITERS_SHOWN])}{', ...' if len(citers) > _CITERS_SHOWN else ''})")
    more = f" and {len(undefined) - _IDS_SHOWN} more" if len(undefined) > _IDS_SHOWN else ""
    they = "them" if len(undefined) > 1 else "it"
    return escape_unsafe(f"catalog sources: {'; '.join(shown)}{more} cited in the catalog but defined in no "
                         f"SOURCES.md read; add {they} to {target} so what cites {they} can be traced ('planner "
                         "catalog check' lists each)")


def failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.fails]


__all__ = ["CHECKS", "Finding", "STALE_MONTHS", "STALE_MSRP_MONTHS", "check_catalog", "failures", "prices_of",
           "newest_date", "oldest_date", "overlay_source_warnings", "reference_date", "reference_date_problem",
           "source_problem_warnings", "source_warnings", "today_date", "undefined_ref_warning"]
