"""Cloud against local: time per job, cost per job and per million tokens, TCO and break-even.

:func:`compare` takes a plan (the local machine the solver chose, with each workload as it runs
there), the scenario (whose workload variants are re-tried on every cloud instance), the catalog
and the cost inputs (:func:`planner.cost.tco.read_costs`), and returns a frozen :class:`Comparison`.
:func:`compare_machine` does the same from a :class:`LocalMachine` and :class:`LocalRun` list, so
the arithmetic can be tested without a solver.

How the pieces fit (every step is shown in the result's ``lines``):

1. Time (planner.speed.timing): each workload's job time and throughput on the local GPUs and on each
   instance that fits it (planner.cost.cloud), with the same time model.
2. Cloud hours per local busy hour, k, by one rule for on-demand and spot (:func:`pricing`):
   batch work (a fixed amount of work that finishes sooner on a faster instance): k = local
   tokens/s / cloud tokens/s (the same work takes k x the local time there). Every training
   workload is batch work, and so is an inference workload listed in ``costs.batch_inference``.
   A service (an inference workload that serves users; it has no fixed amount of work): k = 1,
   the instance is up for the same hours as the local machine whatever its speed. When the
   workload gives ``requests_per_hour`` both sides must keep up with that rate, by one rule
   (:func:`copies_for`): the local side is priced as ceil(rate / one planned machine's
   requests/h) copies of the planned machine, and each instance as ceil(rate / its requests/h)
   copies of it (k = that count), each copy running its own replicas; nothing is dropped for
   being too slow, it is scaled out and the output says by how much. An inference workload
   that gives ``requests_per_hour`` is a service; one that gives neither ``requests_per_hour``
   nor a ``costs.batch_inference`` listing is read as a service too, and the comparison says so
   in a note (the scenario left the reading open). Job times follow the speed model
   (planner.speed: GEMMs, attention, memory-bound kernels, the optimizer step and communication
   over the instance's links; prefill and decode steps), run on every GPU of an instance.
3. For each workload the cheapest instance per local busy hour (price x (1 - discount) x k),
   on-demand and spot; a note flags a cheapest instance with far more GPUs than the workload
   uses locally (its low price per local hour rests on the job scaling over all its GPUs).
4. The mix: the share of busy hours each workload takes (their ``hours_per_month`` when all give
   it, else equal shares); cloud $ per local busy hour c = sum of share x cheapest price x k.
   The local purchase is the most copies any workload needs (one when none gives a rate, or the
   planned machine keeps up); the copies each workload keeps busy while it runs, weighted by the
   shares, scale the energy per busy hour, and the local cost per job and per million tokens is
   at the cost of one copy-hour (cost per busy hour / copies busy on average).
5. Busy hours per month h: when every workload gives ``tokens_per_month`` (or ``planner compare
   --tokens-per-month``), the sum of the hours it takes on the planned machine (tokens / tokens per
   second / 3600, :func:`monthly_volume`; a volume that needs more than the 730 hours of a month is
   warned about and priced at 730); else ``costs.hours_per_month``, else ``costs.utilization`` x
   730, else the sum of the workloads' ``hours_per_month``, else the default utilization (25 %) x
   730, which a note then names as an assumption.
6. planner.cost.tco: energy per hour, net capex, TCO over the ownership period, break-even hours and
   months (on-demand and spot), local cost per busy hour at h. The purchase price is paid at
   month 0 and the resale value credited when the machine is sold at the end of the period; the
   break-even in busy hours is searched over the busy hours the period holds at h, so hours and
   months agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planner.catalog.gpus import Gpu
from planner.catalog.loader import Catalog
from planner.core.units import years_text
from planner.cost.cloud import (
    InstanceFit,
    cloud_fits,
    select_instances,
    spot_basis,
    spot_range,
    stale_instances,
    stale_text,
)
from planner.cost.tco import (
    HOURS_PER_MONTH,
    BreakEven,
    CostInputs,
    break_even_hours,
    break_even_months,
    check_volume_hours,
    cloud_cumulative_usd,
    energy_usd_per_hour,
    local_cumulative_usd,
    local_tco_usd,
    local_usd_per_busy_hour,
    net_capex_usd,
    usd_per_million_tokens,
)
from planner.cost.slo_rent import at_load, slo_service
from planner.cost.comparison_notes import (
    _copies_note,
    _like_for_like_note,
    _k_words,
    _large_instance_note,
    _mix,
    _mix_spot,
    _price_basis,
    _rate_notes,
    _strategy,
    _with_local_costs,
    capex_basis,
    deadline_checked,
    deadline_notes,
    differs_from_local,
)
from planner.speed.timing import DEFAULT_MBU, SECONDS_PER_HOUR, JobTime, time_workload
from planner.memory import Estimate
from planner.speed.traffic import ram_bandwidth
from planner.workload.spec import Workload

# ----- inputs ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LocalMachine:
    """The purchase being compared.

    Attributes:
        description: the configuration in words.
        gpu: the GPU model bought.
        gpus_per_node, nodes: cards per machine and machines.
        platform_w: power of one machine without its GPUs, under load, watts.
        capex_usd: the purchase price, USD (the plan's total).
        pcie_per_lane_bytes_per_s: host link per lane (the slower of card and platform generation).
        pcie_lanes: lanes per card.
        capex_items: the plan's quote line items (planner.solve.quote.LineItem: price, kind, source,
            as_of) that make up ``capex_usd``; empty when the machine was not built from a plan.
        host_bandwidth_bytes_per_s: the machine's RAM peak (channels x the DIMMs' MT/s x 8 B), for
            llama.cpp blocks in host RAM; None: timing's default (dual-channel DDR5-4800).
    """

    description: str
    gpu: Gpu
    gpus_per_node: int
    nodes: int
    platform_w: float
    capex_usd: float
    pcie_per_lane_bytes_per_s: float
    pcie_lanes: int
    capex_items: tuple[Any, ...] = ()
    host_bandwidth_bytes_per_s: float | None = None

    @property
    def gpu_count(self) -> int:
        return self.gpus_per_node * self.nodes


@dataclass(frozen=True)
class LocalRun:
    """One workload as it runs on the local machine, and how to retry it on cloud instances.

    Attributes:
        workload: the workload as the plan runs it locally.
        estimate: its memory estimate there.
        variants: the variants to try on cloud instances, in order of preference (default: the
            workload itself).
        allowed_gpus: the scenario's fixed training GPU counts (None: use every card).
        vram_headroom: fraction of each cloud GPU kept free, as the plan kept on its own cards.
        slo: the workload's service level (planner.solve.scenario.Slo) when it has an ``slo:`` block:
            instances are rented in the count whose replicas meet it under the same load
            (planner.cost.slo_rent).
        deadline_hours: training: the most hours one run may take (the workload's ``deadline_hours``,
            else ``constraints.max_hours_per_job``; None: none): an instance is rented only where one
            run finishes within it, as the solver holds the local machine to it (:func:`deadline_checked`).
    """

    workload: Workload
    estimate: Estimate
    variants: tuple[Workload, ...] = ()
    allowed_gpus: tuple[int, ...] | None = None
    vram_headroom: float = 0.0
    slo: Any = None
    deadline_hours: float | None = None


# ----- results --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CloudOption:
    """One cloud instance for one workload.

    Attributes:
        instance_id, provider, instance, gpu_id, gpu_count, region, as_of, source: from cloud.yaml.
        usd_per_hour, spot_usd_per_hour: list prices, USD per hour (spot None when none).
        spot_range_usd_per_hour: (low, high) spot list price across the region's zones, when the
            catalog records the range (planner.cost.cloud.spot_range); the catalog's spot price is
            normally its low end.
        spot_basis: which spot figure the catalog keeps, in words (planner.cost.cloud.spot_basis).
        feasible, why_not: whether the workload runs there (memory, host RAM, format).
        time: the job time there, one copy of the instance (None when not feasible).
        copies: instances run side by side to keep up with the workload's ``requests_per_hour``
            (ceil(rate / one instance's requests/h)); 1 without a rate.
        hours_per_local_hour: k, cloud instance-hours for the work of one local busy hour (a
            service with a rate: ``copies``).
        usd_per_local_hour, spot_usd_per_local_hour: price x (1 - discount) x k.
        cost_per_job_usd, spot_cost_per_job_usd: price x (1 - discount) x hours per job.
        usd_per_million_tokens, spot_usd_per_million_tokens: price x (1 - discount) /
            (tokens/s x 3600) x 1e6.
        strategy: the variant that fits, in words.
        differs_from_local: '' when the instance runs the local plan's precision (inference: weights
            and KV dtype; training: method and recipe); else the difference in words, e.g.
            'weights int4-awq (local bf16)': the comparison is then not like-for-like.
        hours_over_deadline: the instance holds the workload but one run takes this many hours more
            than its deadline (:func:`deadline_checked`; it is then not feasible, its ``time`` kept);
            None: no deadline, or met.
        slo: a service to an ``slo:``: the instances rented and what they achieve at its load
            (planner.cost.slo_rent.SloRental; ``copies`` is its count, and the USD per million tokens
            are at the tokens that load receives); None otherwise.
    """

    instance_id: str
    provider: str
    instance: str
    gpu_id: str
    gpu_count: int
    region: str
    as_of: str
    source: str
    usd_per_hour: float
    spot_usd_per_hour: float | None
    feasible: bool
    why_not: str
    time: JobTime | None = None
    copies: int = 1
    hours_per_local_hour: float | None = None
    usd_per_local_hour: float | None = None
    spot_usd_per_local_hour: float | None = None
    cost_per_job_usd: float | None = None
    spot_cost_per_job_usd: float | None = None
    usd_per_million_tokens: float | None = None
    spot_usd_per_million_tokens: float | None = None
    strategy: str = ""
    spot_range_usd_per_hour: tuple[float, float] | None = None
    spot_basis: str = ""
    differs_from_local: str = ""
    hours_over_deadline: float | None = None
    slo: Any = None


@dataclass(frozen=True)
class WorkloadComparison:
    """One workload, local against every cloud instance.

    Attributes:
        name, task: the workload.
        local: the job time on the local machine.
        share: share of the local busy hours this workload takes.
        hours_per_month: the workload's own ``hours_per_month`` when given.
        service: priced as a service (the instance up for the local busy hours, k = 1) rather
            than as batch work (k = local tokens/s / cloud tokens/s); see :func:`pricing`.
        requests_per_hour: the rate the workload must keep up with (None: none given).
        copies: copies of the planned machine this workload keeps busy (ceil(rate / one
            machine's requests/h) for a service with a rate; else 1).
        local_cost_per_job_usd, local_usd_per_million_tokens: at the comparison's utilization, at
            the local cost per copy-hour (:attr:`Comparison.local_usd_per_copy_hour`).
        cloud: every instance considered: feasible first, cheapest per local hour first.
        best_on_demand, best_spot: ids of the cheapest feasible instance (None when none).
        notes: capacity and other remarks.
        pricing: the reading in words (service or batch work, and why).
        pricing_assumed: the scenario left the reading open and the comparison chose it.
        strategy: the workload's strategy on the local machine, in words.
        deadline_hours: training: the deadline every instance rented meets (None: none).
        slo_served_tokens_per_s: a service to an ``slo:``: the output tokens per second its load
            receives on the local machine (planner.cost.slo_rent.served_tokens_per_s), the rate both
            sides' USD per million tokens are at; None otherwise.
        slo_basis: that rate's arithmetic in words ('' without an slo:).
    """

    name: str
    task: str
    local: JobTime
    share: float
    hours_per_month: float | None
    service: bool
    local_cost_per_job_usd: float | None
    local_usd_per_million_tokens: float | None
    cloud: tuple[CloudOption, ...]
    best_on_demand: str | None
    best_spot: str | None
    notes: tuple[str, ...] = ()
    pricing: str = ""
    pricing_assumed: bool = False
    requests_per_hour: float | None = None
    copies: int = 1
    strategy: str = ""
    deadline_hours: float | None = None
    slo_served_tokens_per_s: float | None = None
    slo_basis: str = ""

    def option(self, instance_id: str | None) -> CloudOption | None:
        for o in self.cloud:
            if o.instance_id == instance_id:
                return o
        return None


@dataclass(frozen=True)
class Comparison:
    """The whole comparison (see the module docstring).

    Attributes:
        costs: the inputs used.
        machine: the planned machine (one copy).
        copies: copies of it bought: the most any workload needs to keep up with its
            ``requests_per_hour`` (1 when none needs more); see :attr:`capex_usd`.
        copies_busy: copies busy on average while the purchase is busy: sum of share x the
            workload's copies (weights the energy per busy hour).
        hours_per_month: h, busy hours per month; utilization = h / 730.
        hours_source: where h came from.
        energy_usd_per_hour: e, local electricity per busy hour (all copies busy on average).
        net_capex_usd: capex x (1 - residual): owning over the whole period, the resale credited
            at its end (the cumulative cost before the sale starts at the full capex).
        local_usd_per_hour: local cost per busy hour over the ownership period at h.
        tco_usd: local TCO over the ownership period at h.
        cloud_usd_per_local_hour, spot_usd_per_local_hour: c (None when a workload has no
            feasible instance, or no spot price).
        cloud_cost_usd, spot_cost_usd: cloud cost of the same work over the ownership period.
        break_even_hours, break_even_months: on-demand (planner.cost.tco: the hours searched within the
            busy hours of the period at h, so that the two agree; the full price paid at month 0
            and the resale credited at the sale).
        spot_break_even_hours, spot_break_even_months: spot (None when no spot comparison).
        workloads: per workload.
        lines: the arithmetic, one step per line.
        notes: assumptions and caveats.
        warnings: the catalog's warnings about the instances compared (planner.catalog.schema.CatalogWarning:
            a spot price above the on-demand price, probably a typo); :func:`planner.compare` adds an overlay's
            citation problems (planner.catalog.check.overlay_source_warnings).
    """

    costs: CostInputs
    machine: LocalMachine
    hours_per_month: float
    hours_source: str
    energy_usd_per_hour: float
    net_capex_usd: float
    local_usd_per_hour: float
    tco_usd: float
    cloud_usd_per_local_hour: float | None
    spot_usd_per_local_hour: float | None
    cloud_cost_usd: float | None
    spot_cost_usd: float | None
    break_even_hours: BreakEven | None
    break_even_months: BreakEven | None
    spot_break_even_hours: BreakEven | None
    spot_break_even_months: BreakEven | None
    workloads: tuple[WorkloadComparison, ...]
    lines: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    copies: int = 1
    copies_busy: float = 1.0
    warnings: tuple[str, ...] = ()

    @property
    def utilization(self) -> float:
        return self.hours_per_month / HOURS_PER_MONTH

    @property
    def capex_usd(self) -> float:
        """The purchase price of every copy: the plan's capex x :attr:`copies`."""
        return self.machine.capex_usd * self.copies

    @property
    def local_usd_per_copy_hour(self) -> float:
        """Local cost per busy hour of one copy: the cost per busy hour / the copies busy on average."""
        return self.local_usd_per_hour / self.copies_busy

    @property
    def busy_hours(self) -> float:
        """Busy hours in the ownership period: h x 12 x D."""
        return self.hours_per_month * 12.0 * self.costs.depreciation_years

    def cumulative(self) -> list[dict[str, Any]]:
        """Cumulative cost (USD) over the ownership period: local, cloud on-demand, cloud spot.

        One row per whole month from 0 to 12 x D (month 0: the purchase price), then a row at
        12 x D with the machine sold (``sold`` True: its resale value credited to local).
        """
        c = self.costs
        end = 12.0 * c.depreciation_years
        points: list[tuple[float, bool]] = [(float(m), False) for m in range(int(math.floor(end)) + 1)]
        if points[-1][0] < end:
            points.append((end, False))
        points.append((end, True))
        out = []
        for m, sold in points:
            row: dict[str, Any] = {
                "month": m, "sold": sold,
                "local_usd": local_cumulative_usd(months=m, hours_per_month=self.hours_per_month,
                                                  capex_usd=self.capex_usd,
                                                  residual_fraction=c.residual_fraction,
                                                  support_usd_per_year=c.support_usd_per_year,
                                                  energy_usd_per_hour=self.energy_usd_per_hour, sold=sold),
                "cloud_usd": None, "spot_usd": None,
            }
            if self.cloud_usd_per_local_hour is not None:
                row["cloud_usd"] = cloud_cumulative_usd(months=m, hours_per_month=self.hours_per_month,
                                                        cloud_usd_per_hour=self.cloud_usd_per_local_hour)
            if self.spot_usd_per_local_hour is not None:
                row["spot_usd"] = cloud_cumulative_usd(months=m, hours_per_month=self.hours_per_month,
                                                       cloud_usd_per_hour=self.spot_usd_per_local_hour)
            out.append(row)
        return out


# ----- building ------------------------------------------------------------------------------------

def pcie_per_lane(catalog: Catalog, *gens: int) -> float:
    """Per-lane rate of the slowest of the given PCIe generations (card, platform)."""
    return min(catalog.pcie_gen(g).per_lane_bytes_per_s for g in gens)


def pricing(w: Workload, costs: CostInputs) -> tuple[bool, str, bool]:
    """How a workload's cloud hours are counted: (service, the reading in words, assumed).

    Batch work (a fixed amount of work) finishes sooner on a faster instance: cloud hours per
    local busy hour k = local tokens/s / cloud tokens/s. A service serves users and has no fixed
    amount of work: the instance is up for the same hours as the local machine whatever its
    speed, k = 1. Training is always batch work. Inference is batch work when the scenario lists
    it in ``costs.batch_inference``, a service when it gives ``requests_per_hour``, and otherwise
    read as a service with ``assumed`` True (the scenario left the reading open).
    """
    if w.task != "infer":
        return False, "batch work (training: a fixed amount of work; k = local tokens/s / cloud tokens/s)", False
    if w.name in costs.batch_inference:
        return False, ("batch work (listed in costs.batch_inference: a fixed amount of generation; "
                       "k = local tokens/s / cloud tokens/s)"), False
    if w.infer is not None and w.infer.requests_per_hour is not None:
        return True, ("a service (it serves requests_per_hour: the instance is up for the local busy hours and "
                      "must keep up with that rate; k = 1)"), False
    return True, ("a service, assumed: the scenario gives neither requests_per_hour nor a costs.batch_inference "
                  "listing, so it is read as serving users, the instance up for the same hours as the local machine "
                  "whatever its speed (k = 1); list it in costs.batch_inference to price it as batch work that "
                  "finishes sooner on a faster instance"), True


def copies_for(rate: float, capacity: float) -> int:
    """Copies of a machine or instance that serve ``rate`` requests/h when one serves ``capacity``:
    ceil(rate / capacity), at least 1 (copies run side by side, each its own replicas; the time
    model's requests/h of one copy is taken to add up, as replicas do within one machine).

    Raises:
        ValueError: ``rate`` or ``capacity`` not above 0 (a rate of 0 is no service to size for;
            the scenario readers refuse it: planner.cli.compare).
    """
    if capacity <= 0:
        raise ValueError("capacity must be positive")
    if rate <= 0:
        raise ValueError(f"requests_per_hour must be more than 0, not {rate!r}")
    return max(1, math.ceil(rate / capacity - 1e-9))


def _cloud_option(fit: InstanceFit, local: JobTime, w_local: Workload, catalog: Catalog, costs: CostInputs,
                  name: str, service: bool, rental: Any = None, slo: Any = None) -> CloudOption:
    inst = fit.instance
    base = dict(instance_id=inst.id, provider=inst.provider, instance=inst.instance, gpu_id=inst.gpu,
                gpu_count=inst.gpu_count, region=inst.region, as_of=inst.as_of, source=inst.source,
                usd_per_hour=inst.usd_per_hour, spot_usd_per_hour=inst.spot_usd_per_hour,
                spot_range_usd_per_hour=spot_range(inst), spot_basis=spot_basis(inst))
    if not fit.feasible:
        return CloudOption(**base, feasible=False, why_not=fit.why_not)
    w = fit.workload
    assert w is not None and fit.estimate is not None
    gpu = fit.gpu
    count = w.train.gpus if w.train is not None else inst.gpu_count
    jt = time_workload(workload=w, estimate=fit.estimate, gpu=gpu, gpu_count=count,
                       pcie_per_lane_bytes_per_s=pcie_per_lane(catalog, gpu.pcie_gen),
                       mfu=costs.mfu_for(name), mbu=costs.mbu or DEFAULT_MBU)
    copies = 1
    if service:
        # The same rule as the local side (compare_machine): a rate one copy cannot keep up with is
        # met by ceil(rate / capacity) copies, each up for the local busy hours.
        rph = w_local.infer.requests_per_hour if w_local.infer is not None else None
        if rph is not None and jt.requests_per_hour_capacity:
            copies = copies_for(rph, jt.requests_per_hour_capacity)
        copies = max(copies, rental.instances) if rental is not None else copies  # the slo:'s count (slo_rent)
        k = float(copies)
    else:
        k = local.tokens_per_s / jt.tokens_per_s
    disc = 1.0 - costs.cloud_discount
    od = inst.usd_per_hour * disc
    spot = inst.spot_usd_per_hour * disc if (costs.spot and inst.spot_usd_per_hour is not None) else None
    if service and rental is not None and slo is not None and jt.seconds_per_job is not None:
        # a request's instance-hours at the load on the k instances rented (slo_rent.at_load), as the local side
        jt = at_load(jt, slo, rental.request_s, rental.instances)
    hpj = jt.hours_per_job
    # a service to an slo: is priced at the tokens its load receives, on every instance rented (slo_rent)
    per_m, tps = (k, rental.served_tokens_per_s) if (service and rental is not None) else (1.0, jt.tokens_per_s)
    return CloudOption(
        **base, feasible=True, why_not="", time=jt, copies=copies, hours_per_local_hour=k,
        usd_per_local_hour=od * k, spot_usd_per_local_hour=None if spot is None else spot * k,
        cost_per_job_usd=None if hpj is None else od * hpj,
        spot_cost_per_job_usd=None if (hpj is None or spot is None) else spot * hpj,
        usd_per_million_tokens=usd_per_million_tokens(usd_per_hour=od * per_m, tokens_per_s=tps),
        spot_usd_per_million_tokens=None if spot is None else usd_per_million_tokens(usd_per_hour=spot * per_m,
                                                                                     tokens_per_s=tps),
        strategy=_strategy(w), differs_from_local=differs_from_local(w, w_local), slo=rental)


def _sort_key(o: CloudOption) -> tuple:
    # the feasible by price; then the deadline misses (they hold the workload), fewest hours over first
    return (not o.feasible, o.hours_over_deadline is None,
            o.hours_over_deadline or 0.0, o.usd_per_local_hour if o.usd_per_local_hour is not None else math.inf,
            o.usd_per_hour, o.instance_id)


def monthly_volume(runs: Sequence[LocalRun], machine: LocalMachine,
                   costs: CostInputs) -> tuple[list[LocalRun], list[str], list[str]]:
    """The runs with busy hours derived from each workload's ``tokens_per_month``, the arithmetic,
    and warnings.

    A workload with ``tokens_per_month`` T is busy T / (local tokens/s x 3600) hours a month on the
    planned machine (the time model, planner.speed.timing: training's tokens/s, inference's generated
    tokens/s over its replicas); that becomes its ``hours_per_month``, so the share of each workload
    and the month's busy hours h (:func:`_monthly_hours`) follow from the volume instead of the
    default utilization. A workload that needs more hours than a month has (:data:`HOURS_PER_MONTH`)
    cannot keep up on one machine: the warning says how many times its GPUs it needs.
    """
    import dataclasses

    out: list[LocalRun] = []
    lines: list[str] = []
    warnings: list[str] = []
    for run in runs:
        w = run.workload
        volume = getattr(w, "tokens_per_month", None)
        if volume is None:
            out.append(run)
            continue
        local = time_workload(workload=w, estimate=run.estimate, gpu=machine.gpu, gpu_count=w.gpus,
                              pcie_per_lane_bytes_per_s=machine.pcie_per_lane_bytes_per_s,
                              pcie_lanes=machine.pcie_lanes, mfu=costs.mfu_for(w.name), mbu=costs.mbu or DEFAULT_MBU,
                              host_bandwidth_bytes_per_s=machine.host_bandwidth_bytes_per_s)
        tps = local.tokens_per_s
        what = "trained" if w.task == "train" else "generated"
        hours = volume / (tps * SECONDS_PER_HOUR) if tps > 0 else math.inf
        lines.append(f"{w.name}: tokens_per_month {volume:,.0f} ({what}) / ({tps:,.1f} tokens/s x 3600) = {hours:,.2f} "
                     f"busy h a month on the planned machine ({hours / HOURS_PER_MONTH:.1%} of the month)")
        if hours > HOURS_PER_MONTH:
            times = math.ceil(hours / HOURS_PER_MONTH) if math.isfinite(hours) else 0
            kept = tps * SECONDS_PER_HOUR * HOURS_PER_MONTH
            warnings.append(f"{w.name}: {volume:,.0f} tokens a month at {tps:,.1f} tokens/s need {hours:,.0f} busy hours, "
                            f"more than the {HOURS_PER_MONTH:g} a month has: the planned machine cannot keep up (it "
                            f"{'trains' if w.task == 'train' else 'generates'} at most {kept:,.0f} tokens a month, {kept / volume:.0%} of the "
                            f"volume); it needs about {times} times its GPUs (more or faster GPUs, or {times} copies of "
                            "the machine), or a smaller volume")
        out.append(dataclasses.replace(run, workload=dataclasses.replace(w, hours_per_month=hours)))
    return out, lines, warnings


def _monthly_hours(runs: Sequence[LocalRun], costs: CostInputs) -> tuple[float, str]:
    """Busy hours a month h and where they come from: the hours every workload's tokens_per_month
    derives (:func:`monthly_volume`), else costs.hours_per_month, costs.utilization, the sum of the
    workloads' hours_per_month, the default utilization (the module docstring, step 5)."""
    if runs and all(getattr(r.workload, "tokens_per_month", None) is not None for r in runs):
        return float(sum(r.workload.hours_per_month for r in runs)), "the workloads' tokens_per_month"  # type: ignore
    if costs.hours_per_month is not None:
        return costs.hours_per_month, "costs.hours_per_month"
    if costs.utilization is not None:
        return costs.utilization * HOURS_PER_MONTH, f"costs.utilization {costs.utilization:g} x {HOURS_PER_MONTH:g} h"
    given = [r.workload.hours_per_month for r in runs]
    if given and all(g is not None for g in given) and sum(given) > 0:  # type: ignore[arg-type]
        return float(sum(given)), "sum of the workloads' hours_per_month"  # type: ignore[arg-type]
    u = CostInputs.DEFAULT_UTILIZATION
    return u * HOURS_PER_MONTH, f"default utilization {u:g} x {HOURS_PER_MONTH:g} h (assumption)"



#: The time model's scaling assumption, stated in the notes and the workbook.
TIME_MODEL_NOTE = ("Job times come from the speed model (planner.speed, docs/speed-model.md): GEMMs, attention, "
                   "memory-bound kernels, the optimizer step and the communication over the GPUs' links for "
                   "training; prefill and decode steps for serving. A training job runs data-parallel over every "
                   "GPU of an instance or machine at the workload's micro-batch, so a large instance's time "
                   "assumes the job has tokens enough to fill it.")

#: When the resale value is counted (planner.cost.tco), stated in the notes and the workbook.
RESALE_NOTE = ("The purchase price is paid at month 0 and the resale value (capex x residual) is credited only "
               "when the machine is sold at the end of the ownership period: the cumulative local cost starts at "
               "the full price, and the TCO, cost per busy hour and break-even busy hours over the period include "
               "the resale.")



def _workload_comparison(run: LocalRun, share: float, machine: LocalMachine, catalog: Catalog, c: CostInputs,
                         notes: list[str]) -> WorkloadComparison:
    """One workload's comparison: its local time, the copies a request rate needs, every cloud
    instance that runs it (at the scenario's SLO when it has one) ranked, and its notes; notes on
    the whole comparison go to ``notes``."""
    w = run.workload
    service, reading, assumed = pricing(w, c)
    local = time_workload(workload=w, estimate=run.estimate, gpu=machine.gpu, gpu_count=w.gpus,
                          pcie_per_lane_bytes_per_s=machine.pcie_per_lane_bytes_per_s,
                          pcie_lanes=machine.pcie_lanes, mfu=c.mfu_for(w.name), mbu=c.mbu or DEFAULT_MBU,
                          host_bandwidth_bytes_per_s=machine.host_bandwidth_bytes_per_s)
    wnotes = []
    rph = w.infer.requests_per_hour if w.infer is not None else None
    if rph is not None and rph <= 0:
        # never priced as a service at no rate: the scenario readers refuse it (planner.cli.compare)
        raise ValueError(f"workload {w.name!r}: requests_per_hour must be more than 0, not {rph!r}")
    cap = local.requests_per_hour_capacity
    copies = 1
    if service and rph is not None:
        if cap is None:
            wnotes.append(f"requests_per_hour {rph:,.0f} is given without tokens_per_request: there is no request "
                          "to time, so the rate is checked on neither side (give tokens_per_request)")
        else:
            copies = copies_for(rph, cap)
            if copies > 1:
                wnotes.append(f"requests_per_hour {rph:,.0f}: one planned machine serves {cap:,.0f} requests/h, so "
                              f"the local side is priced as {copies} copies of it (ceil({rph:,.0f} / {cap:,.0f}); "
                              f"{copies * cap:,.0f} requests/h), each running its own replicas with no link "
                              "between copies (the solver plans one machine and does not size for "
                              "requests_per_hour)")
    slo_tps, slo_basis = None, ""
    if run.slo is not None and w.infer is not None:  # rent the count that meets the slo: (planner.cost.slo_rent)
        service, reading, assumed, pairs, slo_tps, slo_basis, request_s = slo_service(run, machine, catalog, c,
                                                                                     service, reading, assumed)
        if service and local.seconds_per_job is not None:
            # a request's time and cost at the load, as its tokens are priced (slo_rent.at_load; planner plan alike)
            local = at_load(local, run.slo, request_s)
    else:
        pairs = [(f, None) for f in cloud_fits(run.variants or (w,), catalog, providers=c.providers,
                                               instances=c.instances, regions=c.regions, allowed_gpus=run.allowed_gpus,
                                               headroom=run.vram_headroom, local=w)]
    options = [_cloud_option(f, local, w, catalog, c, w.name, service, r, run.slo) for f, r in pairs]
    limit = run.deadline_hours if w.train is not None else None
    if limit is not None:
        options = [deadline_checked(o, limit) for o in options]
    options.sort(key=_sort_key)
    feas = [o for o in options if o.feasible]
    best = feas[0].instance_id if feas else None
    spots = sorted((o for o in feas if o.spot_usd_per_local_hour is not None),
                   key=lambda o: (o.spot_usd_per_local_hour, o.instance_id))
    best_spot = spots[0].instance_id if spots else None
    late = deadline_notes(options, limit, wnotes)
    if not feas:
        wnotes.append("no cloud instance in the selection runs this workload"
                      + (f" within the {limit:g} h deadline" if late else ""))
    elif service and rph is not None:
        wnotes.extend(_rate_notes(rph, feas, c.cloud_discount))
    elif service and rph is None and slo_tps is None and feas[0].time is not None and \
            feas[0].time.tokens_per_s < local.tokens_per_s:
        wnotes.append(f"the cheapest instance, {feas[0].instance_id}, generates {feas[0].time.tokens_per_s:,.1f} "
                      f"tokens/s against {local.tokens_per_s:,.1f} locally: it serves the same users more slowly "
                      "(give requests_per_hour to require a rate)")
    if assumed:
        notes.append(f"{w.name} (inference) is priced as {reading}.")
    lfl = _like_for_like_note(w.name, w, feas)
    if lfl:
        notes.append(lfl)
    if not service:
        big = _large_instance_note(w, feas, spots)
        if big:
            notes.append(big)
    return WorkloadComparison(name=w.name, task=w.task, local=local, share=share,
                              hours_per_month=w.hours_per_month, service=service,
                              local_cost_per_job_usd=None, local_usd_per_million_tokens=None,
                              cloud=tuple(options), best_on_demand=best, best_spot=best_spot,
                              notes=tuple(wnotes), pricing=reading, pricing_assumed=assumed,
                              requests_per_hour=rph, copies=copies, strategy=_strategy(w), deadline_hours=limit,
                              slo_served_tokens_per_s=slo_tps, slo_basis=slo_basis)


def compare_machine(*, machine: LocalMachine, runs: Sequence[LocalRun], catalog: Catalog,
                    costs: CostInputs, budget_usd: float | None = None) -> Comparison:
    """The comparison for a given local machine and workloads (see the module docstring).

    ``budget_usd``: the scenario's purchase budget, if any; when the copies a request rate needs
    cost more, a note says so (the solver checked the budget against one machine).

    Raises:
        ValueError: no runs; an inference workload whose ``requests_per_hour`` is not above 0, or
            whose ``tokens_per_request`` leaves no prompt token in its context (planner.speed.timing).
            The scenario readers refuse both with the file and line (planner.cli.compare); these
            are guards for callers that build workloads themselves, never a silent clamp.
    """
    if not runs:
        raise ValueError("compare_machine needs at least one workload")
    c = costs
    lines: list[str] = []
    notes: list[str] = []
    runs, volume_lines, volume_warnings = monthly_volume(runs, machine, c)
    lines += volume_lines
    h, h_source = _monthly_hours(runs, c)
    if h_source.startswith("the workloads' tokens"):  # the floor costs.utilization has (one busy hour a year)
        check_volume_hours(h, {r.workload.name: r.workload.tokens_per_month for r in runs})  # type: ignore[misc]
    if volume_lines and not h_source.startswith("the workloads' tokens"):
        notes.append(f"tokens_per_month is given for some workloads only, so the busy hours come from {h_source}: "
                     "give it for every workload to derive them from the volume.")
    elif volume_lines and (c.utilization is not None or c.hours_per_month is not None):
        notes.append("The busy hours come from the workloads' tokens_per_month; the scenario's costs."
                     + ("utilization" if c.utilization is not None else "hours_per_month") + " is not used.")
    if h > HOURS_PER_MONTH and volume_warnings:
        h, h_source = float(HOURS_PER_MONTH), h_source + f", capped at the {HOURS_PER_MONTH:g} hours of a month"
    elif h > HOURS_PER_MONTH:
        volume_warnings.append(f"the workloads together need {h:,.0f} busy hours a month, more than the "
                               f"{HOURS_PER_MONTH:g} a month has: the planned machine cannot keep up; the comparison "
                               f"prices it busy all month ({HOURS_PER_MONTH:g} h) and the cloud for the same work")
        h, h_source = float(HOURS_PER_MONTH), h_source + f", capped at the {HOURS_PER_MONTH:g} hours of a month"
    if h_source.startswith("default"):
        notes.append(f"Utilization is the default {CostInputs.DEFAULT_UTILIZATION:.0%} of the month (an assumption, "
                     "not derived from the work): give each workload's tokens_per_month (e.g. 200M; "
                     "planner compare --tokens-per-month), or costs.utilization / costs.hours_per_month.")
    given = [r.workload.hours_per_month for r in runs]
    if all(g is not None for g in given) and sum(given) > 0:  # type: ignore[arg-type]
        shares = [g / sum(given) for g in given]  # type: ignore[operator, arg-type]
        share_source = "the workloads' hours_per_month"
    else:
        shares = [1.0 / len(runs)] * len(runs)
        share_source = "equal shares"
    wcs = [_workload_comparison(run, share, machine, catalog, c, notes) for run, share in zip(runs, shares)]
    m = machine
    # Copies of the planned machine: the most any workload needs for its request rate; each
    # workload keeps its own number busy while it runs, which weights the energy per busy hour.
    copies = max(wc.copies for wc in wcs)
    # (exactly 1 when no workload needs more than one copy: no rounding noise from the shares)
    copies_busy = sum(wc.share * wc.copies for wc in wcs) if copies > 1 else 1.0
    capex = m.capex_usd * copies
    e_copy = energy_usd_per_hour(gpu_count=m.gpu_count, gpu_tdp_w=m.gpu.tdp_w, platform_w=m.platform_w * m.nodes,
                                 usd_per_kwh=c.usd_per_kwh, pue=c.pue, gpu_power_fraction=c.gpu_power_fraction)
    e = e_copy * copies_busy
    lines.append(f"busy hours per month h = {h:,.2f} ({h_source}); utilization = {h / HOURS_PER_MONTH:.4f}")
    if copies > 1:
        need = "; ".join(f"{wc.name} ceil({wc.requests_per_hour:,.0f} / {wc.local.requests_per_hour_capacity:,.0f} "
                         f"requests/h) = {wc.copies}" for wc in wcs if wc.copies > 1)
        lines.append(f"local copies of the planned machine N = {copies} (the most a workload needs to keep up with its "
                     f"requests_per_hour: {need}); copies busy on average = sum of share x copies = {copies_busy:.4f}")
    per_copy = "" if copies_busy == 1 else f" per copy x {copies_busy:.4g} copies busy on average = ${e:.4f}/h"
    lines.append(f"energy per busy hour e = ({m.gpu_count} x {m.gpu.tdp_w} W x {c.gpu_power_fraction:g} + "
                 f"{m.platform_w * m.nodes:g} W) / 1000 x ${c.usd_per_kwh:g}/kWh x PUE {c.pue:g} = ${e_copy:.4f}/h"
                 + per_copy)
    F = net_capex_usd(capex_usd=capex, residual_fraction=c.residual_fraction)
    D = c.depreciation_years
    times = f" ({copies} x ${m.capex_usd:,.2f})" if copies > 1 else ""
    lines.append(f"capex ${capex:,.2f}{times} paid at month 0; resale ${capex * c.residual_fraction:,.2f} "
                 f"(x {c.residual_fraction:g}) credited at the sale after {12 * D:,.0f} months; net capex F = "
                 f"${capex:,.2f} x (1 - {c.residual_fraction:g}) = ${F:,.2f}")
    if m.capex_items:
        lines.append(f"capex basis (the plan's quote{', per copy' if copies > 1 else ''}): " + capex_basis(m))
    local_h = local_usd_per_busy_hour(hours_per_month=h, capex_usd=capex, residual_fraction=c.residual_fraction,
                                      years=D, support_usd_per_year=c.support_usd_per_year, energy_usd_per_hour=e)
    busy = h * 12 * D
    tco = local_tco_usd(hours=busy, capex_usd=capex, residual_fraction=c.residual_fraction, years=D,
                        support_usd_per_year=c.support_usd_per_year, energy_usd_per_hour=e)
    lines.append(f"local TCO over {years_text(D)} = F + ${c.support_usd_per_year:,.2f}/yr x {D:g} + e x {busy:,.1f} busy h "
                 f"(h x 12 x {D:g}) = ${tco:,.2f}; per busy hour ${local_h:,.4f}"
                 + (f"; per copy-hour ${local_h:,.4f} / {copies_busy:.4g} = ${local_h / copies_busy:,.4f}"
                    if copies_busy != 1 else ""))
    # per-workload local cost per job / per million tokens, at the cost of one copy-hour
    wcs = [_with_local_costs(wc, local_h / copies_busy) for wc in wcs]
    cloud_c = _mix(wcs, "usd_per_local_hour", "best_on_demand")
    spot_c = _mix_spot(wcs) if c.spot else None
    for wc in wcs:
        o = wc.option(wc.best_on_demand)
        if o is not None:
            lines.append(f"{wc.name}: cheapest instance {o.instance_id} ${o.usd_per_hour:g}/h ({_price_basis(o)}) "
                         f"x (1 - {c.cloud_discount:g}) x k {o.hours_per_local_hour:.4f} ({_k_words(wc, o)}) = "
                         f"${o.usd_per_local_hour:.4f} per local hour; share {wc.share:.4f} ({share_source})")
        sp = wc.option(wc.best_spot)
        if c.spot and o is not None and sp is not None and sp.spot_usd_per_local_hour is not None:
            cheaper = ("" if sp.spot_usd_per_local_hour < o.usd_per_local_hour else
                       f"; on-demand {o.instance_id} is cheaper, so the spot comparison takes it")
            if sp.spot_range_usd_per_hour is not None and sp.spot_range_usd_per_hour[1] > sp.spot_usd_per_hour:
                top_rate = sp.spot_range_usd_per_hour[1] * (1.0 - c.cloud_discount) * sp.hours_per_local_hour
                cheaper = (f" (at the top of the zones' range, ${sp.spot_range_usd_per_hour[1]:g}/h: "
                           f"${top_rate:.4f})" + cheaper)
            lines.append(f"{wc.name}: cheapest spot {sp.instance_id} ${sp.spot_usd_per_hour:g}/h ({sp.spot_basis}; "
                         f"{sp.region}, as of {sp.as_of}) x (1 - {c.cloud_discount:g}) x k "
                         f"{sp.hours_per_local_hour:.4f} = ${sp.spot_usd_per_local_hour:.4f} per local hour{cheaper}")
    args = dict(capex_usd=capex, residual_fraction=c.residual_fraction, years=D,
                support_usd_per_year=c.support_usd_per_year, energy_usd_per_hour=e, hours_per_month=h)

    def against(rate: float | None, what: str, kind: str) -> tuple[Any, Any, float | None]:
        """Break-even hours and months and the cloud cost over the period at c = rate."""
        if rate is None:
            return None, None, None
        lines.append(f"cloud per local busy hour c = ${rate:.4f} ({what})")
        hours = break_even_hours(**args, cloud_usd_per_hour=rate)
        months = break_even_months(**args, cloud_usd_per_hour=rate)
        lines.append(f"break-even ({kind}): busy hours: {hours.text}; months at {h:,.1f} h/month: {months.text}")
        return hours, months, rate * busy

    be_h, be_m, cloud_cost = against(cloud_c, "on-demand", "on-demand")
    if cloud_c is None:
        notes.append("No on-demand comparison: some workload has no feasible cloud instance.")
    sbe_h, sbe_m, spot_cost = against(spot_c, "spot, or on-demand where that is cheaper", "spot")
    if spot_c is None and c.spot:
        notes.append("No spot comparison: no feasible instance has a spot price, or some workload has no feasible "
                     "instance.")
    notes.append("Cloud hours: batch work (training; inference listed in costs.batch_inference) takes k = local "
                 "tokens/s / cloud tokens/s cloud hours per local busy hour (instances stopped when idle); a service "
                 "(other inference) keeps its instance up for the same hours as the local machine (k = 1), "
                 "on-demand and spot alike. A service with requests_per_hour is met on both sides by one rule: "
                 "ceil(rate / one copy's requests/h) copies of the planned machine locally, and of each instance in "
                 "the cloud (k = that count); a slower option is scaled out, not dropped.")
    notes.append(TIME_MODEL_NOTE)
    notes.append(RESALE_NOTE)
    notes.append("Local energy counts every card of the machine at the GPU power fraction while busy and nothing "
                 "while idle (machine off or asleep)"
                 + (": with several copies, the copies each workload keeps busy while it runs." if copies > 1 else
                    "."))
    if c.spot and any(o.spot_usd_per_hour is not None for wc in wcs for o in wc.cloud if o.feasible):
        notes += SPOT_NOTES  # only when spot prices are used (costs.spot and some instance that fits has one)
    if copies > 1:
        notes.append(_copies_note(m, copies, capex, budget_usd, c.support_usd_per_year))
    warnings = tuple(volume_warnings) + _instance_warnings(catalog, c, m.gpu.id)
    return Comparison(costs=c, machine=m, hours_per_month=h, hours_source=h_source, energy_usd_per_hour=e,
                      net_capex_usd=F, local_usd_per_hour=local_h, tco_usd=tco, cloud_usd_per_local_hour=cloud_c,
                      spot_usd_per_local_hour=spot_c, cloud_cost_usd=cloud_cost, spot_cost_usd=spot_cost,
                      break_even_hours=be_h, break_even_months=be_m, spot_break_even_hours=sbe_h,
                      spot_break_even_months=sbe_m, workloads=tuple(wcs), lines=tuple(lines), notes=tuple(notes),
                      copies=copies, copies_busy=copies_busy, warnings=warnings)


#: What a comparison that uses spot prices says of them.
SPOT_NOTES = ["Spot instances can be interrupted; spot costs assume no lost work.",
              "Spot prices are the catalog's (cloud.yaml): as a rule the LOW end of the spot prices seen across the "
              "availability zones of the region at the snapshot, not a price every zone offers; each spot price shown "
              "says which figure is kept and gives the range where the catalog records one. A renter in a dearer "
              "zone, or later, pays more."]


def _instance_warnings(catalog: Catalog, c: CostInputs, local_gpu: str) -> tuple[str, ...]:
    """The catalog's warnings about the instances in the selection (a spot price above on-demand) and about
    the GPUs compared, the local one's and the selected instances' (an architecture the speed model has no
    figures for: their times use its assumed ones), and the stale rows among the instances."""
    chosen = select_instances(catalog, providers=c.providers, instances=c.instances, regions=c.regions)
    selected = {i.id for i in chosen}
    gpus = {local_gpu} | {i.gpu for i in chosen}
    warnings = tuple(w.text for w in catalog.warnings
                     if (w.kind == "instances" and w.id in selected) or (w.kind == "gpus" and w.id in gpus))
    stale = stale_text(stale_instances(chosen))
    return warnings + ((stale,) if stale else ())


def compare(plan: Any, scenario: Any, catalog: Catalog, costs: CostInputs, *,
            tokens_per_month: Any = None) -> Comparison:
    """Compare the plan's purchase with renting, per :func:`compare_machine`.

    Args:
        plan: the solver's plan (planner.solve.solver.Plan).
        scenario: the scenario it was planned for (planner.solve.scenario.Scenario); its workload
            variants are re-tried on each cloud instance.
        catalog: the catalog the plan was made with.
        costs: from :func:`planner.cost.tco.read_costs`.
        tokens_per_month: workload name -> tokens a month, replacing the workloads' own
            ``tokens_per_month`` and ``hours_per_month`` (``planner compare --tokens-per-month``);
            None: as the scenario gives them.
    """
    import dataclasses

    machine, runs = local_from_plan(plan, scenario, catalog)
    if tokens_per_month:
        runs = [dataclasses.replace(r, workload=dataclasses.replace(r.workload, hours_per_month=None,
                                                                    tokens_per_month=float(tokens_per_month[r.workload.name])))
                if r.workload.name in tokens_per_month else r for r in runs]
    budget = getattr(getattr(scenario, "constraints", None), "budget_usd", None)
    return compare_machine(machine=machine, runs=runs, catalog=catalog, costs=costs,
                           budget_usd=None if budget is None else float(budget))


def local_from_plan(plan: Any, scenario: Any, catalog: Catalog) -> tuple[LocalMachine, list[LocalRun]]:
    """The local machine and workloads of a plan, read by the plan's documented attributes.

    ``plan.choice`` gives gpu_id, platform_id, cards_per_node and nodes; ``plan.total_usd`` the
    capex and ``plan.items`` its line items (price, kind, source, date); ``plan.workloads`` and
    ``plan.estimates`` each workload as it runs there. The scenario's workload variants (and fixed
    training GPU counts) are what is re-tried on cloud instances.
    """
    ch = plan.choice
    gpu = catalog.gpu(str(ch["gpu_id"]))
    platform = catalog.platform(str(ch["platform_id"]))
    cards = int(ch["cards_per_node"])
    nodes = int(ch["nodes"])
    desc = f"{cards} x {gpu.name} on {platform.name}"
    if ch.get("dimm_id"):
        desc += f", {int(ch['dimm_count'])} x {ch['dimm_id']}"
    if nodes > 1:
        desc = f"{nodes} machines of [{desc}]"
    machine = LocalMachine(description=desc, gpu=gpu, gpus_per_node=cards, nodes=nodes,
                           platform_w=float(platform.platform_w), capex_usd=float(plan.total_usd),
                           pcie_per_lane_bytes_per_s=pcie_per_lane(catalog, gpu.pcie_gen, platform.pcie_gen),
                           pcie_lanes=gpu.pcie_lanes, capex_items=tuple(getattr(plan, "items", ()) or ()),
                           host_bandwidth_bytes_per_s=(ram_bandwidth(platform.memory_channels,
                                                                     catalog.dimm(str(ch["dimm_id"])).speed_mts)
                                                       if ch.get("dimm_id") else None))
    runs = []
    cons = getattr(scenario, "constraints", None)
    headroom = float(getattr(cons, "vram_headroom", 0.0) or 0.0)
    sws = list(getattr(scenario, "workloads", ()) or ())
    for k, (w, est) in enumerate(zip(plan.workloads, plan.estimates)):
        sw = sws[k] if k < len(sws) else None
        variants = tuple(v.workload for v in sw.variants) if sw is not None else (w,)
        allowed = tuple(sw.gpus) if (sw is not None and getattr(sw, "gpus", None)) else None
        deadline = getattr(sw, "deadline_hours", None) if w.train is not None else None
        runs.append(LocalRun(workload=w, estimate=est, variants=variants, allowed_gpus=allowed,
                             vram_headroom=headroom, slo=getattr(sw, "slo", None),
                             deadline_hours=None if deadline is None else float(deadline)))
    return machine, runs
