"""Total cost of ownership of a local machine against renting, and where they break even.

Money is USD, time is hours (``_h``) or months (``_months``); a month is 730 hours (8,760 / 12).

The cost model (every line is linear in the hours of use between the purchase and the sale, so
the spreadsheet can solve the break-even in closed form; this module solves it with
:func:`scipy.optimize.brentq`, which the tests check against the closed form):

- busy hours per month  h = utilization x 730 (or ``hours_per_month`` given directly);
- energy per busy hour  e = (GPUs x TDP x gpu_power_fraction + platform watts) / 1000 x $/kWh x PUE;
- the purchase price (capex) is paid at month 0; the machine is sold at the end of the ownership
  (depreciation) period of D years for capex x residual_fraction, which is credited then and
  only then (convention);
- net capital cost      F = capex x (1 - residual_fraction): what owning costs over the whole
  period beyond what the machine sells for at its end;
- local, cumulative after m months (0 <= m <= 12 x D): L(m) = capex + (support/12 + e x h) x m
  while the machine is owned, and L(12 x D) - capex x residual once it is sold;
- cloud, cumulative after m months:   R(m) = c x h x m, with c the cloud price per local busy
  hour after the discount (instance $/h x (1 - discount) x cloud hours per local hour);
- local TCO over the ownership period for H busy hours:  F + support x D + e x H;
  cloud cost of the same work:                            c x H.

Break-even months M*: the first month at which L(M*) <= R(M*): the crossing of the two lines
before the sale, M* = capex / (h x (c - e) - support / 12), when it falls within 12 x D;
else the end of the period (the sale) when the TCO there is no more than the rent; else none.
Break-even busy hours H*: F + support x D + e x H* = c x H* (the TCO over the period, resale
included, equals the rent for the same work), H* = (F + support x D) / (c - e), searched over
the busy hours the period holds at the scenario's utilization (h x 12 x D; every hour of the
period, 8,760 x D, when no h is given). The two agree: a break-even month exists within the
period exactly when H* is within its busy hours (both say the TCO at the end of the period is no
more than the rent). When there is no crossing in the horizon, the result says which side is
cheaper everywhere in it, and where the lines would cross beyond it (``beyond``).

Defaults (:class:`CostInputs`) each carry their source or say they are assumptions
(:data:`DEFAULT_SOURCES`). The scenario's ``costs:`` mapping is read by :func:`read_costs`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from planner.core.errors import InputError
from planner.core.fields import Entry
from planner.workload.spec import (BUSY_HOURS_FLOOR_HINT, HOURS_FLOOR_TEXT, MIN_BUSY_HOURS_PER_YEAR, MIN_HOURS_PER_MONTH,
                                   written_floor)

HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730

#: Keys of the scenario's ``costs:`` mapping.
#: The least ``mfu`` or ``mbu`` override taken: 0.1% of the peak rate. A sanity bound, not a measurement
#: (measured LLM training MFU is tens of percent, e.g. 46.2% for PaLM 540B, Chowdhery et al. 2022, Table 3):
#: below it a typo (1e-300) would price jobs at 10^300 hours rather than be refused.
MIN_UTILIZATION = 0.001
#: The fewest busy hours a year ``utilization`` / ``hours_per_month`` may give (a workload's own
#: ``hours_per_month`` too: planner.workload.spec, where it is defined), and the shortest ownership
#: period (years): not published figures but the bounds of the quantities' meaning (a machine used for less
#: than an hour a year, or owned for less than a billing month, is a typo: 1.0e-300 printed 300-digit costs).
MIN_OWNERSHIP_YEARS = written_floor(1 / 12)  # a month, 1/12 to three digits as a file can write it: 0.0833
#: The least ``utilization``: one busy hour a year, 1/8760, to three digits: 0.000114.
MIN_BUSY_SHARE = written_floor(MIN_BUSY_HOURS_PER_YEAR / 8760.0)
COST_KEYS = (
    "usd_per_kwh", "pue", "utilization", "hours_per_month", "gpu_power_fraction", "depreciation_years",
    "residual_fraction", "support_usd_per_year", "cloud_discount", "providers", "instances", "regions", "spot", "mfu", "mbu",
    "batch_inference",
)

#: Where each default comes from (shown in reports next to the value).
DEFAULT_SOURCES: dict[str, str] = {
    "usd_per_kwh": "US commercial average ~13 c/kWh, 2024-2025 (EIA Electric Power Monthly table 5.6.A, inferred "
                   "from the state values; the national row was not read, so uncertain)",
    "pue": "assumption: 1.0 for an office workstation (no cooling overhead billed); datacentres ~1.2-1.6 "
           "(also an assumption, not a sourced figure)",
    "utilization": "assumption: 25 % of calendar hours busy (about 6 h a day)",
    "gpu_power_fraction": "assumption: cards under sustained training or batched serving run at their power "
                          "limit (1.0 x TDP)",
    "depreciation_years": "assumption: 3-year ownership period (GPUs lose value fast; US tax rules (MACRS) class "
                          "computers as 5-year property)",
    "residual_fraction": "assumption: 20 % resale value after the ownership period; conservative next to "
                         "used-card prices (RTX 3090: $500-800 used in 2026 per local-llm.net 'RTX 3090 in 2026', a "
                         "low-reliability page, vs $1,499 MSRP in 2020)",
    "support_usd_per_year": "assumption: no support contract",
    "cloud_discount": "assumption: list (on-demand and spot) prices, no committed-use discount",
    "spot": "compare spot prices too, where the catalog has them",
    "regions": "every region the catalog lists (its rows: each provider's cheapest US region)",
    "mbu": "planner.speed.timing.DEFAULT_MBU (assumption)",
    "mfu": "planner.speed.timing.MFU_DEFAULTS per recipe (assumptions)",
    "batch_inference": "none: every inference workload is priced as a service (the instance up for the local "
                       "busy hours, k = 1)",
}


@dataclass(frozen=True)
class CostInputs:
    """The inputs of the cost comparison (scenario ``costs:``), validated.

    Attributes:
        usd_per_kwh: electricity price, USD per kWh.
        pue: power usage effectiveness (facility power / IT power), >= 1.
        utilization: share of calendar hours the local machine is busy, 0-1; None when
            ``hours_per_month`` is given or neither (then the workloads' hours or the default).
        hours_per_month: busy hours per month given directly (0-744).
        gpu_power_fraction: mean GPU board power while busy, as a share of TDP.
        depreciation_years: ownership period D, years.
        residual_fraction: resale value at the end of D, as a share of capex.
        support_usd_per_year: support / maintenance per year, USD.
        cloud_discount: discount on cloud list prices (0.3 = 30 % off), applied to on-demand and spot.
        providers: compare only these cloud providers (empty: all).
        instances: compare only these cloud.yaml ids (empty: all).
        regions: compare only instances in these regions (empty: all; the shipped rows are each
            provider's cheapest US region, other regions come from ``planner catalog
            import-skypilot --region R``).
        spot: also compare spot prices.
        mfu: MFU override for every workload (float), per workload name (mapping), or None.
        mbu: decode memory-bandwidth utilization override, or None.
        batch_inference: names of inference workloads to price as batch work (a fixed amount of
            generation that finishes sooner on a faster instance: cloud hours = local hours x
            local tokens/s / cloud tokens/s) rather than as a service (the instance up for the
            local busy hours whatever its speed). See :mod:`planner.cost.compare`.
        given: the keys the scenario gave (the rest are defaults).
    """

    usd_per_kwh: float = 0.13
    pue: float = 1.0
    utilization: float | None = None
    hours_per_month: float | None = None
    gpu_power_fraction: float = 1.0
    depreciation_years: float = 3.0
    residual_fraction: float = 0.20
    support_usd_per_year: float = 0.0
    cloud_discount: float = 0.0
    providers: tuple[str, ...] = ()
    instances: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    spot: bool = True
    mfu: float | Mapping[str, float] | None = field(default=None, hash=False)
    mbu: float | None = None
    batch_inference: tuple[str, ...] = ()
    given: tuple[str, ...] = ()

    #: Utilization used when nothing says how busy the machine is (assumption).
    DEFAULT_UTILIZATION = 0.25

    def mfu_for(self, workload_name: str) -> float | None:
        """The MFU override for one workload, or None (use the default)."""
        if self.mfu is None or isinstance(self.mfu, float):
            return self.mfu
        from planner.core.names import value_for_name  # an NFD spelling names the workload too

        return value_for_name(self.mfu, workload_name)

    def source_of(self, key: str) -> str:
        """'given in the scenario' or the default's source."""
        return "given in the scenario (costs)" if key in self.given else DEFAULT_SOURCES.get(key, "default")


def _at_least(entry: Any, key: str, value: float | None, lo: float, shown: str, hint: str) -> None:
    """Refuse ``value`` (read, None when not given) below ``lo``: one line naming ``key``, ``shown`` the bound."""
    if value is not None and value < lo:
        raise entry.error(f"must be at least {shown}, not {value!r}", key, hint)


def read_costs(entry: Entry | None, catalog: Any = None, workloads: Any = None) -> CostInputs:
    """Read and validate the scenario's ``costs:`` mapping.

    Every key is optional (see :data:`COST_KEYS`, :class:`CostInputs` and DEFAULT_SOURCES).
    ``utilization`` and ``hours_per_month`` are two ways to say the same thing: give at most one.

    Args:
        entry: the ``costs`` mapping as an Entry (None: all defaults).
        catalog: when given, ``providers`` and ``instances`` are checked against cloud.yaml
            (with a did-you-mean).
        workloads: when given, the scenario's workloads (:class:`planner.solve.scenario.ScenarioWorkload`
            or :class:`planner.workload.spec.Workload`: ``name``, ``task``, and ``infer`` or
            ``variants``): ``batch_inference`` must name inference workloads among them that do
            not give ``requests_per_hour`` (a request rate makes a workload a service).

    Raises:
        InputError (of the entry's kind): unknown keys, wrong types, values out of range.
    """
    if entry is None:
        return CostInputs()
    entry.check_keys(COST_KEYS)
    if entry.has("utilization") and entry.has("hours_per_month"):
        raise entry.error("give utilization or hours_per_month, not both", "hours_per_month",
                          f"utilization is busy hours / {HOURS_PER_MONTH:g} hours per month.")
    kw: dict[str, Any] = {}
    kw["usd_per_kwh"] = entry.number("usd_per_kwh", 0.13, min=0, max=5)
    kw["pue"] = entry.number("pue", 1.0, min=1.0, max=3.0)
    kw["utilization"] = entry.number("utilization", None, min=0, max=1, min_exclusive=True)
    kw["hours_per_month"] = entry.number("hours_per_month", None, min=0, max=744, min_exclusive=True)
    _at_least(entry, "utilization", kw["utilization"], MIN_BUSY_SHARE,
              f"{MIN_BUSY_SHARE:f}".rstrip("0") + f" (1/{HOURS_PER_YEAR:g} to three digits: one busy hour a year)",
              "utilization is the share of calendar hours the machine is busy (0.25: about 6 h a day); below one "
              "hour a year the cost per busy hour runs to absurd sums.")
    _at_least(entry, "hours_per_month", kw["hours_per_month"], MIN_HOURS_PER_MONTH, HOURS_FLOOR_TEXT,
              BUSY_HOURS_FLOOR_HINT)
    kw["gpu_power_fraction"] = entry.number("gpu_power_fraction", 1.0, min=0, max=1, min_exclusive=True)
    kw["depreciation_years"] = entry.number("depreciation_years", 3.0, min=0, max=20, min_exclusive=True)
    _at_least(entry, "depreciation_years", kw["depreciation_years"], MIN_OWNERSHIP_YEARS,
              f"{MIN_OWNERSHIP_YEARS:g} (1/12 to three digits: one month)",
              "It is the ownership period over which the capex is spread; under a month the cost per month runs "
              "to absurd sums.")
    kw["residual_fraction"] = entry.number("residual_fraction", 0.20, min=0, max=0.99)
    kw["support_usd_per_year"] = entry.number("support_usd_per_year", 0.0, min=0, max=10_000_000)
    kw["cloud_discount"] = entry.number("cloud_discount", 0.0, min=0, max=0.99)
    kw["spot"] = entry.bool("spot", True)
    kw["mbu"] = entry.number("mbu", None, min=MIN_UTILIZATION, max=1)
    kw["providers"] = _cloud_filter(entry, "providers", "provider")
    kw["instances"] = _cloud_filter(entry, "instances", "instance")
    kw["regions"] = _cloud_filter(entry, "regions", "region")
    kw["batch_inference"] = tuple(entry.str_list("batch_inference", []))
    raw = entry.raw("mfu", None, "a number 0.001-1, or a mapping of workload names to numbers")
    if raw is not None:  # empty: refused above in a scenario file (Entry.refuse_null)
        if isinstance(raw, Mapping) and not raw:  # as an empty providers: [] is: it reads as no mfu, without a word
            raise entry.error("an empty mapping pins no workload's MFU", "mfu",
                              "Give mfu: 0.3 for every workload, or mfu: {NAME: 0.3}, or leave mfu out to use the "
                              "speed model's.")
        if isinstance(raw, Mapping):
            sub = entry.child("mfu")
            odd = next((k for k in raw if not isinstance(k, str)), None)
            if odd is not None:
                names = [w.name for w in workloads] if workloads is not None else []
                raise sub.error(f"key {odd!r} is not a name", None, "Keys are workload names"
                                + (f", such as {names[0]!r}." if names else ", e.g. mfu: {NAME: 0.3}."))
            kw["mfu"] = {str(k): sub.number(str(k), min=MIN_UTILIZATION, max=1) for k in raw}
        else:
            kw["mfu"] = entry.number("mfu", min=MIN_UTILIZATION, max=1)
    if catalog is not None:
        _check_cloud_names(entry, catalog, kw["providers"], kw["instances"], kw["regions"])
    if workloads is not None:
        kw["batch_inference"] = _check_batch_names(entry, workloads, kw["batch_inference"])
        if isinstance(kw.get("mfu"), Mapping):
            kw["mfu"] = _check_mfu_names(entry, workloads, kw["mfu"])
    kw["given"] = tuple(k for k in COST_KEYS if entry.has(k))
    return CostInputs(**kw)


def _cloud_filter(entry: Entry, key: str, what: str) -> tuple[str, ...]:
    """The names of ``costs.<key>`` (providers, instances, regions): () when the key is absent (no filter). An
    empty list is refused, as the scenario's ``allowed_gpus: []`` is (it allows nothing, yet would read as no
    filter: every cloud row compared), and so is a name listed twice.

    Raises:
        InputError (of the entry's kind): as above, or a value that is not a list of names.
    """
    values = tuple(entry.str_list(key, []))
    if key in entry.data and not values:
        raise entry.error(f"an empty list allows no {what}", key,
                          f"List at least one {what}, or leave {key} out to compare every {what}.")
    if len(set(values)) != len(values):
        dup = next(v for v in values if values.count(v) > 1)
        raise entry.error(f"lists {dup!r} twice", key, f"Give each {what} once.")
    return values


def _check_cloud_names(entry: Entry, catalog: Any, providers: tuple[str, ...], instances: tuple[str, ...],
                       regions: tuple[str, ...] = ()) -> None:
    from planner.core.errors import did_you_mean

    known_p = sorted({i.provider for i in catalog.instances})
    for p in providers:
        if p not in known_p:
            raise entry.error(f"no cloud provider {p!r} in cloud.yaml", "providers", did_you_mean(p, known_p))
    known_i = [i.id for i in catalog.instances]
    for i in instances:
        if i not in known_i:
            raise entry.error(f"no cloud instance {i!r} in cloud.yaml", "instances", did_you_mean(i, known_i))
    known_r = sorted({i.region for i in catalog.instances})
    for r in regions:
        if r not in known_r:
            raise entry.error(f"no cloud instance in region {r!r} in cloud.yaml", "regions",
                              "The shipped rows are each provider's cheapest US region (" + ", ".join(known_r)
                              + f"); import another with planner catalog import-skypilot FILE --region {r} --out DIR "
                              "and pass --catalog DIR.")


def _check_mfu_names(entry: Entry, workloads: Any, mfu: Mapping[str, float]) -> dict[str, float]:
    """Each key of a per-workload ``mfu:`` mapping names a workload of the scenario (an entry naming none
    would be ignored without a word, as ``batch_inference`` is checked), as written or in another Unicode
    spelling (NFKC, planner.core.names.resolve_name); the mapping keyed by the workloads' own names."""
    from planner.core.errors import did_you_mean
    from planner.core.names import resolve_name

    names = [w.name for w in workloads]
    out: dict[str, float] = {}
    for n, value in mfu.items():
        name = resolve_name(n, names)
        if name is None:
            raise entry.error(f"no workload {n!r} in the scenario", "mfu", did_you_mean(n, names))
        if name in out:
            raise entry.error(f"names workload {name!r} twice (as {ascii(n)} too)", "mfu", "Give each workload once.")
        out[name] = value
    return out


def _check_batch_names(entry: Entry, workloads: Any, names: tuple[str, ...]) -> tuple[str, ...]:
    """``batch_inference``'s names as the workloads' own (an NFKC-equal spelling resolved): inference
    workloads without requests_per_hour."""
    from planner.core.errors import did_you_mean
    from planner.core.names import resolve_name

    by_name = {w.name: w for w in workloads}
    out = []
    for given in names:
        n = resolve_name(given, by_name) or given
        w = by_name.get(n)
        if w is None:
            raise entry.error(f"no workload {n!r} in the scenario", "batch_inference", did_you_mean(n, list(by_name)))
        out.append(n)
        if w.task != "infer":
            raise entry.error(f"workload {n!r} is training, which is always priced as batch work", "batch_inference",
                              "List only inference workloads here.")
        infer = getattr(w, "infer", None)
        if infer is None and getattr(w, "variants", None):  # a scenario workload: its variants share the rate
            infer = w.variants[0].workload.infer
        if infer is not None and infer.requests_per_hour is not None:
            raise entry.error(f"workload {n!r} gives requests_per_hour, so it is a service, not batch work",
                              "batch_inference", f"Remove {n!r} from batch_inference or requests_per_hour from "
                                                 "the workload.")
    return tuple(out)


# ----- the cost lines ------------------------------------------------------------------------------

def energy_usd_per_hour(*, gpu_count: int, gpu_tdp_w: float, platform_w: float, usd_per_kwh: float, pue: float,
                        gpu_power_fraction: float = 1.0) -> float:
    """Electricity per busy hour: (GPUs x TDP x power fraction + platform W) / 1000 x $/kWh x PUE."""
    return (gpu_count * gpu_tdp_w * gpu_power_fraction + platform_w) / 1000.0 * usd_per_kwh * pue


def net_capex_usd(*, capex_usd: float, residual_fraction: float) -> float:
    """Capex minus resale value at the end of the ownership period: capex x (1 - residual)."""
    return capex_usd * (1.0 - residual_fraction)


def local_tco_usd(*, hours: float, capex_usd: float, residual_fraction: float, years: float,
                  support_usd_per_year: float, energy_usd_per_hour: float) -> float:
    """Local cost of ``hours`` busy hours within a ``years``-long ownership period.

    capex x (1 - residual) + support x years + energy per hour x hours.
    """
    return (net_capex_usd(capex_usd=capex_usd, residual_fraction=residual_fraction)
            + support_usd_per_year * years + energy_usd_per_hour * hours)


def cloud_cost_usd(*, hours: float, usd_per_hour: float, discount: float = 0.0) -> float:
    """Rent for ``hours``: hours x $/h x (1 - discount)."""
    return hours * usd_per_hour * (1.0 - discount)


def local_cumulative_usd(*, months: float, hours_per_month: float, capex_usd: float, residual_fraction: float,
                         support_usd_per_year: float, energy_usd_per_hour: float, sold: bool = False) -> float:
    """L(m): the local cumulative cost after ``months`` months of the ownership period, USD.

    capex + (support / 12 + energy per hour x h) x m: the purchase price is paid at month 0. With
    ``sold`` (the machine sold at the end of the ownership period, m = 12 x D) the resale value
    capex x residual is credited: capex x (1 - residual) + (support / 12 + e x h) x m.
    """
    upfront = net_capex_usd(capex_usd=capex_usd, residual_fraction=residual_fraction) if sold else capex_usd
    return upfront + (support_usd_per_year / 12.0 + energy_usd_per_hour * hours_per_month) * months


def cloud_cumulative_usd(*, months: float, hours_per_month: float, cloud_usd_per_hour: float) -> float:
    """R(m) = cloud $ per local busy hour x h x m (the discount already applied)."""
    return cloud_usd_per_hour * hours_per_month * months


@dataclass(frozen=True)
class BreakEven:
    """Where two cost lines cross within a horizon.

    Attributes:
        value: the crossing (hours or months), or None when they do not cross in the horizon.
        unit: 'hours' (busy hours) or 'months'.
        horizon: the end of the search interval, same unit.
        cheaper_before: who is cheaper below the crossing ('cloud' or 'local'); when there is
            no crossing, who is cheaper everywhere in the horizon ('cloud', 'local' or 'equal').
        text: one sentence for reports.
        beyond: where the lines would cross beyond the horizon (closed form; the crossing before
            the sale for months), or None when they never do or ``value`` is set.
        at_sale: months only: local breaks even only when the machine is sold at the end of the
            period (``value`` is then the horizon, 12 x D).
    """

    value: float | None
    unit: str
    horizon: float
    cheaper_before: str
    text: str
    beyond: float | None = None
    at_sale: bool = False

    @property
    def local_wins_at_horizon(self) -> bool:
        """Whether owning is cheaper at the end of the horizon."""
        if self.value is None:
            return self.cheaper_before == "local"
        return self.cheaper_before == "cloud"


def find_break_even(diff: Callable[[float], float], *, horizon: float, unit: str) -> BreakEven:
    """The root of ``diff(x) = local(x) - cloud(x)`` in [0, horizon], by scipy's brentq.

    No sign change: whichever side is cheaper at both ends is cheaper everywhere (the lines
    are straight), and ``value`` is None.
    """
    from scipy.optimize import brentq

    lo, hi = diff(0.0), diff(horizon)
    tol = 1e-9 * max(1.0, abs(lo), abs(hi))
    if abs(lo) <= tol and abs(hi) <= tol:
        return BreakEven(None, unit, horizon, "equal", "local and cloud cost the same throughout")
    if lo <= 0 and hi <= 0:
        return BreakEven(0.0 if abs(lo) <= tol else None, unit, horizon, "local",
                         f"local is cheaper from the start, for all of the {horizon:,.0f} {unit}")
    if lo > 0 and hi > 0:
        return BreakEven(None, unit, horizon, "cloud",
                         f"cloud is cheaper throughout the {horizon:,.0f} {unit}; local never breaks even")
    if lo > 0 >= hi:
        x = float(brentq(diff, 0.0, horizon, xtol=1e-9, rtol=1e-12, maxiter=200))
        return BreakEven(x, unit, horizon, "cloud", f"local breaks even after {x:,.1f} {unit}")
    x = float(brentq(diff, 0.0, horizon, xtol=1e-9, rtol=1e-12, maxiter=200))
    return BreakEven(x, unit, horizon, "local", f"cloud becomes cheaper after {x:,.1f} {unit}")


def break_even_hours(*, capex_usd: float, residual_fraction: float, years: float, support_usd_per_year: float,
                     energy_usd_per_hour: float, cloud_usd_per_hour: float,
                     hours_per_month: float | None = None) -> BreakEven:
    """Busy hours over the ownership period at which the local TCO (resale included) equals rent.

    Solves F + support x D + e x H = c x H on [0, busy hours in the period]: h x 12 x D at
    ``hours_per_month`` h, or every hour of the period (8,760 x D) when h is not given. Closed
    form H* = (F + support x D) / (c - e) when c > e; a crossing past the period's busy hours is
    reported in ``beyond`` (the machine would have to be busier), not as a break-even.
    """
    def diff(h: float) -> float:
        return (local_tco_usd(hours=h, capex_usd=capex_usd, residual_fraction=residual_fraction, years=years,
                              support_usd_per_year=support_usd_per_year, energy_usd_per_hour=energy_usd_per_hour)
                - h * cloud_usd_per_hour)

    busy = HOURS_PER_YEAR * years if hours_per_month is None else hours_per_month * 12.0 * years
    where = (f"the {busy:,.0f} hours of the {years:g}-year period" if hours_per_month is None else
             f"the {busy:,.0f} busy hours of the {years:g}-year period at {hours_per_month:,.1f} h/month")
    be = find_break_even(diff, horizon=busy, unit="hours")
    fixed = net_capex_usd(capex_usd=capex_usd, residual_fraction=residual_fraction) + support_usd_per_year * years
    margin = cloud_usd_per_hour - energy_usd_per_hour
    beyond = fixed / margin if (be.value is None and be.cheaper_before == "cloud" and margin > 0) else None
    if be.value is not None and be.cheaper_before == "cloud":
        text = f"local breaks even after {be.value:,.1f} busy hours, within {where}"
    elif be.value is None and be.cheaper_before == "cloud":
        text = f"cloud is cheaper throughout {where}; local never breaks even"
        if beyond is not None:
            text += f" (it would need {beyond:,.1f} busy hours)"
    else:
        text = be.text
    return replace(be, text=text, beyond=beyond)


def break_even_months(*, hours_per_month: float, capex_usd: float, residual_fraction: float, years: float,
                      support_usd_per_year: float, energy_usd_per_hour: float,
                      cloud_usd_per_hour: float) -> BreakEven:
    """The first month at ``hours_per_month`` busy hours when owning has cost no more than renting.

    The purchase price is paid at month 0 and the resale value credited at the end of the
    ownership period (see the module docstring). Solves capex + (support / 12 + e x h) x m =
    c x h x m on [0, 12 x D] (closed form M* = capex / (h x (c - e) - support / 12)); when the
    lines do not cross before the sale but the TCO at the end (resale credited) is no more than
    the rent, local breaks even at the sale: ``value`` = 12 x D and ``at_sale``. A crossing of the
    lines past the period is reported in ``beyond``, not as a break-even.
    """
    def diff(m: float) -> float:
        return (local_cumulative_usd(months=m, hours_per_month=hours_per_month, capex_usd=capex_usd,
                                     residual_fraction=residual_fraction, support_usd_per_year=support_usd_per_year,
                                     energy_usd_per_hour=energy_usd_per_hour)
                - cloud_cumulative_usd(months=m, hours_per_month=hours_per_month,
                                       cloud_usd_per_hour=cloud_usd_per_hour))

    end = 12.0 * years
    be = find_break_even(diff, horizon=end, unit="months")
    margin = hours_per_month * (cloud_usd_per_hour - energy_usd_per_hour) - support_usd_per_year / 12.0
    beyond = capex_usd / margin if margin > 0 else None
    if be.value is not None or be.cheaper_before != "cloud":
        return be
    after_sale = (local_cumulative_usd(months=end, hours_per_month=hours_per_month, capex_usd=capex_usd,
                                       residual_fraction=residual_fraction, support_usd_per_year=support_usd_per_year,
                                       energy_usd_per_hour=energy_usd_per_hour, sold=True)
                  - cloud_cumulative_usd(months=end, hours_per_month=hours_per_month,
                                         cloud_usd_per_hour=cloud_usd_per_hour))
    if after_sale <= 0:
        return BreakEven(end, "months", end, "cloud",
                         f"local breaks even only at the end of the {end:,.0f} months, when the machine is sold for "
                         "its residual value", beyond=beyond, at_sale=True)
    return replace(be, beyond=beyond)


def local_usd_per_busy_hour(*, hours_per_month: float, capex_usd: float, residual_fraction: float, years: float,
                            support_usd_per_year: float, energy_usd_per_hour: float) -> float:
    """Local cost per busy hour over the ownership period at ``hours_per_month``.

    (capex x (1 - residual) + support x D) / (h x 12 x D) + energy per hour; infinite at h = 0.
    """
    busy = hours_per_month * 12.0 * years
    fixed = net_capex_usd(capex_usd=capex_usd, residual_fraction=residual_fraction) + support_usd_per_year * years
    if busy <= 0:
        return float("inf")
    return fixed / busy + energy_usd_per_hour


def usd_per_million_tokens(*, usd_per_hour: float, tokens_per_s: float) -> float:
    """$/h / (tokens/s x 3600) x 1e6."""
    if tokens_per_s <= 0:
        return float("inf")
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6


def check_request_inputs(root: Any, workloads: Any) -> None:
    """Refuse the request inputs plan and compare cannot time or price, at the key's line of the scenario file.

    planner.workload.spec reads ``tokens_per_request`` (1 to the longest sequence) and
    ``requests_per_hour`` (0 or more) without relating them to anything; compare times them
    (planner.speed.timing), so it checks here, before any pricing:

    - ``requests_per_hour`` must be above 0: a service at 0 requests/h has no rate to keep up
      with (leave the key out for a service with no rate).
    - ``tokens_per_request`` (the tokens generated per request) must be below the context: the
      time model takes the prompt as the rest of the context (context - tokens_per_request, an
      assumption stated in the output), and a request needs at least one prompt token (vLLM
      refuses an empty prompt). The context is the workload's, given or its default.

    Args:
        root: the scenario's top-level mapping as a planner.core.fields.Entry (file and lines).
        workloads: the validated scenario's workloads (planner.solve.scenario.ScenarioWorkload), in the
            order of the file's ``workloads:`` list.

    Raises:
        ScenarioError: either input out of range, at its key.
    """
    entries = root.children("workloads", None)
    for e, sw in zip(entries, workloads):
        for v in getattr(sw, "variants", ()):
            i = v.workload.infer
            if i is None:
                continue
            rph = i.requests_per_hour
            if rph is not None and rph <= 0:
                raise e.error(f"must be more than 0, not {e.raw('requests_per_hour', rph)!r}", "requests_per_hour",
                              "It is the requests the service must keep up with, per hour; give the rate (e.g. "
                              "requests_per_hour: 500), or leave the key out for a service with no rate to check.")
            n, ctx = i.tokens_per_request, i.context
            if n is not None and n >= ctx:
                given = "context" in e.data
                where = f"the context, {ctx:,} tokens" + ("" if given else " (the default; context is not given)")
                how = "is more than" if n > ctx else "equals"
                longest = v.workload.architecture.max_position_embeddings
                raise e.error(f"{n:,} {how} {where}, which holds a request's prompt and its generated tokens",
                              "tokens_per_request",
                              "tokens_per_request is the tokens generated per request, and planner takes the prompt "
                              "as the rest of the context (context - tokens_per_request, at least 1 token): give "
                              f"tokens_per_request: {ctx - 1} or less"
                              + (f", or context: {n + 1} or more." if n + 1 <= longest else
                                 f" (the model's longest sequence is {longest:,} tokens)."))


class BusyHoursError(InputError):
    """The workloads' ``tokens_per_month`` give less than one busy hour a year (:func:`check_volume_hours`);
    planner.api.comparisons names ``--tokens-per-month`` / ``tokens_per_month=`` instead when the counts came from
    the option or keyword (h28b M8)."""


def _count_text(tokens: float) -> str:
    """A token count as a message shows it, never in exponent form: 200,000,000; 1.5; 0.0000001 (h28b M8)."""
    from decimal import Decimal

    if tokens >= 1e15 or tokens != tokens:
        return f"{tokens:,.4g}"
    if float(tokens).is_integer():
        return f"{int(tokens):,}"
    text = format(Decimal(repr(float(tokens))), ",f")
    return text if len(text) <= 40 else f"{tokens:,.4g}"


def check_volume_hours(hours: float, volumes: dict[str, float]) -> None:
    """Refuse busy hours a month derived from the workloads' ``tokens_per_month`` (``volumes``: workload
    name -> tokens a month) below one busy hour a year, the floor ``costs.utilization`` and
    ``hours_per_month`` have (:data:`MIN_BUSY_HOURS_PER_YEAR`): below it the cost per busy hour and per
    job run to absurd sums (0.1 tokens a month priced a job at $48 billion).

    Raises:
        BusyHoursError: naming ``tokens_per_month``, with the volumes (a count below 1 said to be a fraction of one
            token) and the hours they give.
    """
    floor = MIN_BUSY_HOURS_PER_YEAR / 12  # derived, not written: the floor itself (5 min a month)
    if hours >= floor:
        return
    given = ", ".join(f"{name} {_count_text(tokens)}" for name, tokens in volumes.items())
    parts = [f"{name}'s {_count_text(tokens)}" for name, tokens in volumes.items() if tokens < 1]
    fraction = f", and {' and '.join(parts)} {'is' if len(parts) == 1 else 'are'} less than one token" if parts else ""
    raise BusyHoursError(f"the tokens a month given ({given}) keep the machine busy {hours * 3600:.3g} s a month, less "
                     f"than one busy hour a year ({floor * 60:g} min a month){fraction}", entry="tokens_per_month",
                     hint="Below one busy hour a year the cost per busy hour runs to absurd sums: give the tokens the "
                          "workloads process a month (e.g. 200M), or costs.utilization.")

