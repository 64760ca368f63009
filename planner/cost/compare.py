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
from dataclasses import dataclass, field, replace
from typing import Any

from planner.catalog.gpus import Gpu
from planner.catalog.loader import Catalog
from planner.core.units import years_text
from planner.cost.flip import comparison_flips
from planner.cost.cloud import (
    STALE_CLOUD_MONTHS,
    InstanceFit,
    cloud_fits,
    select_instances,
    spot_basis,
    spot_range,
    stale_as_of,
    stale_instances,
    stale_text,
)
from planner.cost.tco import (
    HOURS_PER_MONTH,
    BreakEven,
    CostInputs,
    break_even_hours,
    break_even_months,
    cloud_cumulative_usd,
    energy_usd_per_hour,
    local_cumulative_usd,
    local_tco_usd,
    local_usd_per_busy_hour,
    net_capex_usd,
    usd_per_million_tokens,
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
            an instance is rented only where its replicas meet it under the same load
            (:func:`slo_checked`).
    """

    workload: Workload
    estimate: Estimate
    variants: tuple[Workload, ...] = ()
    allowed_gpus: tuple[int, ...] | None = None
    vram_headroom: float = 0.0
    slo: Any = None


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
            a spot price above the on-demand price, probably a typo).
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


def _strategy(w: Workload) -> str:
    if w.train is not None:
        t = w.train
        parts = [f"{t.method_label} {t.recipe}", f"{t.gpus} GPU(s)"]
        if t.zero:
            parts.append(f"ZeRO-{t.zero}")
        if t.offload_optimizer:
            parts.append("offload optimizer")
        if t.checkpointing != "none":
            parts.append(f"checkpointing {t.checkpointing}")
        return ", ".join(parts)
    i = w.infer
    return f"weights {i.weights}, KV {i.kv_dtype}, tp {i.tp}, concurrency {i.concurrency}"


def differs_from_local(w: Workload, local: Workload) -> str:
    """'' when ``w`` (the variant an instance runs) keeps the local plan's precision: inference
    weights and KV dtype, training method and recipe (GPU count, tp and the like follow the
    instance and are left out); else the difference in words, e.g. 'weights int4-awq (local bf16)'."""
    if w.task != local.task:
        return f"task {w.task} (local {local.task})"
    if w.train is not None and local.train is not None:
        a, b, fields = w.train, local.train, (("method", "method"), ("recipe", "recipe"))
    elif w.infer is not None and local.infer is not None:
        a, b, fields = w.infer, local.infer, (("weights", "weights"), ("KV", "kv_dtype"))
    else:
        return ""
    return ", ".join(f"{label} {getattr(a, f)} (local {getattr(b, f)})" for label, f in fields
                     if getattr(a, f) != getattr(b, f))


def _like_for_like_note(name: str, local: Workload, feas: Sequence[CloudOption]) -> str:
    """A note when instances that fit run another precision than the local plan ('' otherwise)."""
    other = [o for o in feas if o.differs_from_local]
    if not other:
        return ""
    best = feas[0]
    head = (f"the cheapest, {best.instance_id}, runs {best.differs_from_local}" if best.differs_from_local
            else f"e.g. {other[0].instance_id} runs {other[0].differs_from_local}")
    same = [o for o in feas if not o.differs_from_local]
    tail = (f" The cheapest that runs the local precision is {same[0].instance_id} at "
            f"${same[0].usd_per_local_hour:.4f} per local hour." if same else
            " No instance that fits runs the local precision.")
    return (f"{name}: not like-for-like: the local plan runs {_strategy(local)}, but {len(other)} of the {len(feas)} "
            f"instances that fit run a different precision ({head}), so they price different model output "
            "(quantized weights or KV change quality as well as memory and speed); the cheapest instance is "
            "taken whatever its strategy." + tail)


def _cloud_option(fit: InstanceFit, local: JobTime, w_local: Workload, catalog: Catalog, costs: CostInputs,
                  name: str, service: bool) -> CloudOption:
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
        k = float(copies)
    else:
        k = local.tokens_per_s / jt.tokens_per_s
    disc = 1.0 - costs.cloud_discount
    od = inst.usd_per_hour * disc
    spot = inst.spot_usd_per_hour * disc if (costs.spot and inst.spot_usd_per_hour is not None) else None
    hpj = jt.hours_per_job
    return CloudOption(
        **base, feasible=True, why_not="", time=jt, copies=copies, hours_per_local_hour=k,
        usd_per_local_hour=od * k, spot_usd_per_local_hour=None if spot is None else spot * k,
        cost_per_job_usd=None if hpj is None else od * hpj,
        spot_cost_per_job_usd=None if (hpj is None or spot is None) else spot * hpj,
        usd_per_million_tokens=usd_per_million_tokens(usd_per_hour=od, tokens_per_s=jt.tokens_per_s),
        spot_usd_per_million_tokens=None if spot is None else usd_per_million_tokens(usd_per_hour=spot,
                                                                                     tokens_per_s=jt.tokens_per_s),
        strategy=_strategy(w), differs_from_local=differs_from_local(w, w_local))


def slo_checked(fit: InstanceFit, slo: Any) -> InstanceFit:
    """``fit`` held to the service level the local machine was sized to: the instance's replicas
    (gpu_count // tp) share the SLO's users, each holding ceil(users / replicas) sequences, and
    must meet its TTFT and TPOT there by the speed model (planner.solve.targets.slo_figures, as the
    solver checks the local machine); an instance that misses is not rented, and says by how much."""
    if not fit.feasible or fit.workload is None or fit.workload.infer is None or fit.estimate is None:
        return fit
    from types import SimpleNamespace

    from planner.solve.targets import slo_figures
    from planner.solve.usages import with_replicas

    i = fit.workload.infer
    reps = max(fit.replicas, 1)
    wl = with_replicas(replace(fit.workload, infer=replace(i, concurrency=slo.users, replicas=1)), i.tp, reps,
                       fit.instance.gpu_count)
    f = slo_figures(SimpleNamespace(workload=wl, estimate=fit.estimate), slo, fit.gpu)
    if f.met(slo):
        return replace(fit, workload=wl)
    got = []
    if slo.ttft_s is not None:
        got.append(f"TTFT {f.ttft_s:.3g} s (target {slo.ttft_s:g} s)")
    if slo.tpot_s is not None:
        got.append(f"TPOT {f.tpot_s * 1e3:.3g} ms (target {slo.tpot_s * 1e3:.4g} ms)")
    return replace(fit, feasible=False, why_not=(f"misses the slo: for {slo.load_text()}, {reps} replica(s) of tp "
                                                 f"{i.tp}: " + ", ".join(got)
                                                 + ("" if f.keeps_up else "; does not keep up with the rate")))


def _sort_key(o: CloudOption) -> tuple:
    return (not o.feasible, o.usd_per_local_hour if o.usd_per_local_hour is not None else math.inf,
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


#: A cheapest instance with at least this many times the GPUs the workload uses locally is
#: flagged in a note: its price per local hour rests on the job scaling over all its GPUs.
LARGE_INSTANCE_FACTOR = 4

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
    wcs: list[WorkloadComparison] = []
    for run, share in zip(runs, shares):
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
        fits = cloud_fits(run.variants or (w,), catalog, providers=c.providers, instances=c.instances,
                          regions=c.regions, allowed_gpus=run.allowed_gpus, headroom=run.vram_headroom, local=w)
        if run.slo is not None:
            fits = [slo_checked(f, run.slo) for f in fits]
        options = sorted((_cloud_option(f, local, w, catalog, c, w.name, service) for f in fits), key=_sort_key)
        feas = [o for o in options if o.feasible]
        best = feas[0].instance_id if feas else None
        spots = sorted((o for o in feas if o.spot_usd_per_local_hour is not None),
                       key=lambda o: (o.spot_usd_per_local_hour, o.instance_id))
        best_spot = spots[0].instance_id if spots else None
        if not feas:
            wnotes.append("no cloud instance in the selection runs this workload")
        elif service and rph is not None:
            wnotes.extend(_rate_notes(rph, feas, c.cloud_discount))
        elif service and rph is None and feas[0].time is not None and feas[0].time.tokens_per_s < local.tokens_per_s:
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
        wcs.append(WorkloadComparison(name=w.name, task=w.task, local=local, share=share,
                                      hours_per_month=w.hours_per_month, service=service,
                                      local_cost_per_job_usd=None, local_usd_per_million_tokens=None,
                                      cloud=tuple(options), best_on_demand=best, best_spot=best_spot,
                                      notes=tuple(wnotes), pricing=reading, pricing_assumed=assumed,
                                      requests_per_hour=rph, copies=copies, strategy=_strategy(w)))
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
        # only when spot prices are used (costs.spot and some instance that fits has one)
        notes.append("Spot instances can be interrupted; spot costs assume no lost work.")
        notes.append("Spot prices are the catalog's (cloud.yaml): as a rule the LOW end of the spot prices seen "
                     "across the availability zones of the region at the snapshot, not a price every zone offers; "
                     "each spot price shown says which figure is kept and gives the range where the catalog records "
                     "one. A renter in a dearer zone, or later, pays more.")
    if copies > 1:
        notes.append(_copies_note(m, copies, capex, budget_usd, c.support_usd_per_year))
    # the catalog's warnings about the instances in the selection (a spot price above on-demand)
    chosen = select_instances(catalog, providers=c.providers, instances=c.instances, regions=c.regions)
    selected = {i.id for i in chosen}
    warnings = tuple(volume_warnings) + tuple(w.text for w in catalog.warnings
                                              if w.kind == "instances" and w.id in selected)
    stale = stale_text(stale_instances(chosen))
    if stale:
        warnings += (stale,)
    return Comparison(costs=c, machine=m, hours_per_month=h, hours_source=h_source, energy_usd_per_hour=e,
                      net_capex_usd=F, local_usd_per_hour=local_h, tco_usd=tco, cloud_usd_per_local_hour=cloud_c,
                      spot_usd_per_local_hour=spot_c, cloud_cost_usd=cloud_cost, spot_cost_usd=spot_cost,
                      break_even_hours=be_h, break_even_months=be_m, spot_break_even_hours=sbe_h,
                      spot_break_even_months=sbe_m, workloads=tuple(wcs), lines=tuple(lines), notes=tuple(notes),
                      copies=copies, copies_busy=copies_busy, warnings=warnings)


def _price_basis(o: CloudOption) -> str:
    """'list, us-east-1, as of 2026-08': where and when the on-demand price holds (its source: o.source)."""
    return f"list, {o.region}, as of {o.as_of}"


def _k_words(wc: WorkloadComparison, o: CloudOption) -> str:
    if not wc.service:
        return "batch work"
    if wc.requests_per_hour is not None and o.time is not None and o.time.requests_per_hour_capacity:
        return (f"service: {o.copies} cop{'y' if o.copies == 1 else 'ies'} for {wc.requests_per_hour:,.0f} "
                f"requests/h, ceil({wc.requests_per_hour:,.0f} / {o.time.requests_per_hour_capacity:,.0f})")
    return "service"


def _short(description: str) -> str:
    """A quote line's description without the parts its price is made of."""
    from planner.solve.quote import PARTS_SEPARATOR

    return description.split(PARTS_SEPARATOR)[0]


def capex_basis(m: LocalMachine) -> str:
    """The plan's quote lines in one sentence: quantity, item, unit price, price kind and date."""
    return "; ".join(f"{i.quantity} x {_short(i.description)} at ${i.unit_price_usd:,.2f} ({i.price_kind}, as of "
                     f"{i.as_of})" for i in m.capex_items)


def _rate_notes(rph: float, feas: Sequence[CloudOption], discount: float) -> list[str]:
    """What a request rate did to the cloud side: the instances it scaled out (ceil(rate / one
    instance's requests/h) copies each) and, when that changed the cheapest, the one it displaced."""
    scaled = [o for o in feas if o.copies > 1]
    if not scaled:
        return []
    shown = ", ".join(f"{o.instance_id} {o.copies} x "
                      f"{o.time.requests_per_hour_capacity:,.0f}"  # type: ignore[union-attr]
                      for o in scaled[:6])
    more = f" and {len(scaled) - 6} more" if len(scaled) > 6 else ""
    out = [f"requests_per_hour {rph:,.0f}: every instance is priced by the local side's rule, as the copies that keep "
           f"up (ceil(rate / its requests/h), k = copies); none is dropped for being too slow. {len(scaled)} of the "
           f"{len(feas)} that fit need more than one: {shown}{more} requests/h"]
    best = feas[0]
    one = min(feas, key=lambda o: (o.usd_per_hour, o.instance_id))
    if one.instance_id != best.instance_id and one.time is not None:
        d = 1.0 - discount
        out.append(f"without the rate the cheapest would be {one.instance_id} at ${one.usd_per_hour * d:.4f} per local "
                   f"hour (one copy); it serves {one.time.requests_per_hour_capacity:,.0f} requests/h, so it takes "
                   f"{one.copies} copies, ${one.usd_per_local_hour:.4f}; the cheapest that keeps up is "
                   f"{best.instance_id}, {best.copies} x ${best.usd_per_hour * d:.4f} = ${best.usd_per_local_hour:.4f}")
    return out


def _copies_note(m: LocalMachine, copies: int, capex: float, budget_usd: float | None, support: float) -> str:
    """The note on a local side scaled out to several copies of the planned machine."""
    text = (f"Local purchase: {copies} copies of the planned machine ({m.description}) at the plan's quote, "
            f"{copies} x ${m.capex_usd:,.2f} = ${capex:,.2f} (no volume discount), so that the local side keeps up "
            "with the requests_per_hour asked, as every cloud instance must: the solver plans one machine and does "
            "not size for requests_per_hour. The copies serve independent replicas (no network between them is "
            "priced).")
    if budget_usd is not None and capex > budget_usd:
        text += (f" They cost more than the scenario's budget_usd ${budget_usd:,.2f}, which the solver checked against "
                 "one machine.")
    if support:
        text += " costs.support_usd_per_year is counted once for the whole purchase, as given, not per copy."
    return text


def _large_instance_note(w: Workload, feas: Sequence[CloudOption], spots: Sequence[CloudOption]) -> str:
    """A note when the cheapest instance (on-demand or spot) of batch work has at least
    LARGE_INSTANCE_FACTOR x the GPUs the workload uses locally ('' otherwise)."""
    local_gpus = max(1, int(w.gpus))
    limit = LARGE_INSTANCE_FACTOR * local_gpus
    parts = []
    for kind, opts, attr in (("on-demand", feas, "usd_per_local_hour"), ("spot", spots, "spot_usd_per_local_hour")):
        if not opts or opts[0].gpu_count < limit:
            continue
        o = opts[0]
        small = [x for x in opts if x.gpu_count <= local_gpus]
        alt = (f"; the cheapest with at most {local_gpus} GPU(s) is {small[0].instance_id} at "
               f"${getattr(small[0], attr):.4f}" if small else "")
        parts.append(f"{kind} {o.instance_id} ({o.gpu_count} x {o.gpu_id}, k {o.hours_per_local_hour:.4g}, "
                     f"${getattr(o, attr):.4f} per local hour{alt})")
    if not parts:
        return ""
    return (f"{w.name}: the cheapest instance is much larger than the {local_gpus} GPU(s) the work uses locally: "
            + "; ".join(parts) + ". Its price rests on the job running data-parallel over all its GPUs (the speed "
            "model counts their communication); a small job may not fill them.")


def _with_local_costs(wc: WorkloadComparison, local_usd_per_hour: float) -> WorkloadComparison:
    """Local cost per job and per million tokens at ``local_usd_per_hour``, the cost of one copy of
    the planned machine per busy hour (the job time is one copy's)."""
    from dataclasses import replace

    hpj = wc.local.hours_per_job
    per_job = None if hpj is None else local_usd_per_hour * hpj
    per_m = usd_per_million_tokens(usd_per_hour=local_usd_per_hour, tokens_per_s=wc.local.tokens_per_s)
    return replace(wc, local_cost_per_job_usd=per_job, local_usd_per_million_tokens=per_m)


def _mix_spot(wcs: Sequence[WorkloadComparison]) -> float | None:
    """c for a renter who can use spot: per workload the cheaper of its best spot price and its
    best on-demand price (an instance without spot may still be the cheapest); None when no
    workload has any spot price, or one has no feasible instance."""
    total, any_spot = 0.0, False
    for wc in wcs:
        od = wc.option(wc.best_on_demand)
        sp = wc.option(wc.best_spot)
        if od is None:
            return None
        rate = od.usd_per_local_hour
        if sp is not None and sp.spot_usd_per_local_hour is not None:
            any_spot = True
            rate = min(rate, sp.spot_usd_per_local_hour)
        total += wc.share * rate
    return total if any_spot else None


def _mix(wcs: Sequence[WorkloadComparison], attr: str, best_attr: str) -> float | None:
    total = 0.0
    for wc in wcs:
        o = wc.option(getattr(wc, best_attr))
        if o is None or getattr(o, attr) is None:
            return None
        total += wc.share * getattr(o, attr)
    return total


# ----- from a plan ------------------------------------------------------------------------------------

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
        runs.append(LocalRun(workload=w, estimate=est, variants=variants, allowed_gpus=allowed,
                             vram_headroom=headroom, slo=getattr(sw, "slo", None)))
    return machine, runs


# ----- output ------------------------------------------------------------------------------------------

def _be_dict(be: BreakEven | None) -> dict[str, Any] | None:
    if be is None:
        return None
    return {"value": be.value, "unit": be.unit, "horizon": be.horizon, "cheaper_before": be.cheaper_before,
            "beyond": be.beyond, "at_sale": be.at_sale, "text": be.text}


def _time_dict(t: JobTime | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"job": t.job, "job_tokens": t.job_tokens, "seconds_per_job": t.seconds_per_job,
            "hours_per_job": t.hours_per_job, "tokens_per_s": t.tokens_per_s, "mfu": t.mfu,
            "mfu_reason": t.mfu_reason, "requests_per_hour_capacity": t.requests_per_hour_capacity,
            "lines": list(t.lines)}


def comparison_to_dict(comp: Comparison) -> dict[str, Any]:
    """A JSON-ready dict: money in USD, time in hours / months / seconds as the keys say."""
    c = comp.costs
    m = comp.machine
    return {
        "costs": {
            "usd_per_kwh": c.usd_per_kwh, "pue": c.pue, "utilization": comp.utilization,
            "hours_per_month": comp.hours_per_month, "hours_source": comp.hours_source,
            "gpu_power_fraction": c.gpu_power_fraction, "depreciation_years": c.depreciation_years,
            "residual_fraction": c.residual_fraction, "support_usd_per_year": c.support_usd_per_year,
            "cloud_discount": c.cloud_discount, "providers": list(c.providers), "instances": list(c.instances),
            "regions": list(c.regions),
            "spot": c.spot, "batch_inference": list(c.batch_inference),
            "busy_hours_in_period": comp.busy_hours,
            "resale": "capex x residual_fraction, credited at the end of the ownership period (the sale)",
            "sources": {k: c.source_of(k) for k in ("usd_per_kwh", "pue", "gpu_power_fraction", "depreciation_years",
                                                    "residual_fraction", "support_usd_per_year", "cloud_discount",
                                                    "batch_inference")},
        },
        "local": {
            "description": m.description, "gpu": m.gpu.id, "gpus_per_node": m.gpus_per_node, "nodes": m.nodes,
            "gpu_tdp_w": m.gpu.tdp_w, "platform_w": m.platform_w, "copies": comp.copies,
            "copies_busy_on_average": comp.copies_busy, "capex_usd_per_copy": m.capex_usd,
            "capex_usd": comp.capex_usd,
            "capex_items": [{"description": i.description, "category": i.category, "catalog_id": i.catalog_id,
                             "quantity": i.quantity, "unit_price_usd": i.unit_price_usd, "price_kind": i.price_kind,
                             "as_of": i.as_of, "source": i.source} for i in m.capex_items],
            "usd_per_copy_hour": comp.local_usd_per_copy_hour,
            "net_capex_usd": comp.net_capex_usd, "energy_usd_per_hour": comp.energy_usd_per_hour,
            "usd_per_busy_hour": comp.local_usd_per_hour, "tco_usd": comp.tco_usd,
        },
        "cloud": {
            "usd_per_local_hour": comp.cloud_usd_per_local_hour, "spot_usd_per_local_hour": comp.spot_usd_per_local_hour,
            "cost_over_period_usd": comp.cloud_cost_usd, "spot_cost_over_period_usd": comp.spot_cost_usd,
        },
        "break_even": {
            "on_demand": {"hours": _be_dict(comp.break_even_hours), "months": _be_dict(comp.break_even_months)},
            "spot": {"hours": _be_dict(comp.spot_break_even_hours), "months": _be_dict(comp.spot_break_even_months)},
        },
        "workloads": [
            {
                "name": wc.name, "task": wc.task, "share": wc.share, "service": wc.service,
                "pricing": wc.pricing, "pricing_assumed": wc.pricing_assumed,
                "local": _time_dict(wc.local), "local_cost_per_job_usd": wc.local_cost_per_job_usd,
                "local_usd_per_million_tokens": wc.local_usd_per_million_tokens,
                "requests_per_hour": wc.requests_per_hour, "local_copies": wc.copies,
                "best_on_demand": wc.best_on_demand, "best_spot": wc.best_spot, "notes": list(wc.notes),
                "strategy": wc.strategy,
                "cloud": [
                    {"instance_id": o.instance_id, "provider": o.provider, "instance": o.instance, "gpu": o.gpu_id,
                     "gpu_count": o.gpu_count, "region": o.region, "as_of": o.as_of, "source": o.source,
                     "usd_per_hour": o.usd_per_hour, "spot_usd_per_hour": o.spot_usd_per_hour,
                     "spot_range_usd_per_hour": (None if o.spot_range_usd_per_hour is None
                                                 else list(o.spot_range_usd_per_hour)),
                     "spot_basis": o.spot_basis, "feasible": o.feasible, "why_not": o.why_not,
                     "strategy": o.strategy, "differs_from_local": o.differs_from_local,
                     "time": _time_dict(o.time), "copies": o.copies,
                     "hours_per_local_hour": o.hours_per_local_hour, "usd_per_local_hour": o.usd_per_local_hour,
                     "spot_usd_per_local_hour": o.spot_usd_per_local_hour, "cost_per_job_usd": o.cost_per_job_usd,
                     "spot_cost_per_job_usd": o.spot_cost_per_job_usd,
                     "usd_per_million_tokens": o.usd_per_million_tokens,
                     "spot_usd_per_million_tokens": o.spot_usd_per_million_tokens}
                    for o in wc.cloud
                ],
            }
            for wc in comp.workloads
        ],
        "rent_or_buy_flip": [x.to_dict() for x in comparison_flips(comp)],
        "lines": list(comp.lines),
        "notes": list(comp.notes),
        "warnings": list(comp.warnings),
    }


def _usd(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    if 0 < abs(x) < 0.01:
        return f"${x:.3g}"
    return f"${x:,.2f}"


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.3g} s"
    return f"{seconds / SECONDS_PER_HOUR:,.2f} h"


def _dates(items: Sequence[Any]) -> str:
    """'2025-01-30 to 2026-11': the span of the quote lines' price dates (one date when all agree)."""
    ds = sorted({str(i.as_of) for i in items})
    return ds[0] if len(ds) == 1 else f"{ds[0]} to {ds[-1]}"


def comparison_text(comp: Comparison, top: int = 5, verbose: bool = True) -> str:
    """The comparison for the terminal: per workload the local line and the cheapest instances,
    then the cost model's arithmetic and the break-even. Each cloud price carries its region and
    date and a footnote number for its source (listed at the end); spot prices say which of the
    zones' prices the catalog keeps.

    ``verbose`` False (``planner compare`` without --verbose) leaves out the long formulas (the
    local time's arithmetic, the cost model's) and the source footnotes, saying where they are;
    the lines are as long as their text (the CLI wraps them to the terminal).
    """
    out: list[str] = []
    m = comp.machine
    refs: dict[str, int] = {}

    def price(o: CloudOption) -> str:
        # a row ranked here whose price is over a year old says so where it is ranked
        old = f", STALE: over {STALE_CLOUD_MONTHS} months old" if stale_as_of(o.as_of) else ""
        if not verbose:
            return f"${o.usd_per_hour:g}/h ({o.region}, as of {o.as_of}{old})"
        n = refs.setdefault(o.source, len(refs) + 1)
        return f"${o.usd_per_hour:g}/h ({o.region}, as of {o.as_of}{old}) [{n}]"

    basis = (f"the plan's quote, prices dated {_dates(m.capex_items)}; line items under 'Cost model'"
             + ("" if verbose else " (--verbose)")
             if m.capex_items else "as given, no quote line items")
    if comp.copies > 1:
        out.append(f"Local: {comp.copies} copies of [{m.description}] to keep up with requests_per_hour (capex "
                   f"{comp.copies} x {_usd(m.capex_usd)} = {_usd(comp.capex_usd)}; {basis})")
    else:
        out.append(f"Local: {m.description} (capex {_usd(m.capex_usd)}; {basis})")
    for wc in comp.workloads:
        out.append("")
        priced = "service, k = 1" if wc.service else "batch work, k = local / cloud tokens/s"
        if wc.service and wc.requests_per_hour is not None and wc.local.requests_per_hour_capacity is not None:
            priced = (f"service at {wc.requests_per_hour:,.0f} requests/h, k = the instance copies that keep up; "
                      f"local: {wc.copies} cop{'y' if wc.copies == 1 else 'ies'}")
        if wc.pricing_assumed:
            priced += ", assumed (see the notes)"
        out.append(f"Workload {wc.name} ({wc.task}; priced as {priced}): {wc.local.job}")
        if wc.strategy:
            out.append(f"  local: runs {wc.strategy}")
        for line in (wc.local.lines if verbose else ()):
            out.append(f"  local: {line}")
        # Without a job size (no dataset_tokens / tokens_per_request) there is no time or cost per job.
        has_job = wc.local.seconds_per_job is not None
        per_job = (f"{_hours(wc.local.seconds_per_job)} per job, " if has_job else
                   f"per job: n/a (no {'dataset_tokens' if wc.task == 'train' else 'tokens_per_request'}), ")
        cost_per_job = f"{_usd(wc.local_cost_per_job_usd)} per job, " if has_job else ""
        per_copy = " per copy" if comp.copies > 1 else ""
        if getattr(wc.local, "assumed", False):
            per_copy += " (assumed: the speed rests on a rate with no published measurement for this card)"
        out.append(f"  local: {per_job}{wc.local.tokens_per_s:,.1f} tokens/s{per_copy}, {cost_per_job}"
                   f"{_usd(wc.local_usd_per_million_tokens)} per M tokens (at {comp.utilization:.0%} utilization)")
        rated = wc.service and wc.requests_per_hour is not None
        feas = [o for o in wc.cloud if o.feasible]
        if feas:
            out.append(f"  cloud (cheapest {min(top, len(feas))} of {len(feas)} that fit; {len(wc.cloud) - len(feas)} "
                       "do not):")
            shown = feas[:top]
            sp = wc.option(wc.best_spot)
            if sp is not None and sp not in shown:
                shown = shown + [sp]
            for o in shown:
                parts = [f"{o.gpu_count} x {o.gpu_id}", price(o)]
                cap = o.time.requests_per_hour_capacity if o.time is not None else None
                if rated and cap is not None:
                    parts.append(f"serves {cap:,.0f} requests/h" + (
                        f", {o.copies} copies for {wc.requests_per_hour:,.0f}: ${o.copies * o.usd_per_hour:,.4g}/h"
                        if o.copies > 1 else ""))
                if has_job:
                    assumed = " (assumed speed)" if o.time is not None and o.time.assumed else ""
                    parts += [f"{_hours(o.time.seconds_per_job if o.time else None)} per job{assumed}",
                              f"{_usd(o.cost_per_job_usd)} per job"]
                parts.append(f"{_usd(o.usd_per_million_tokens)}/M tokens")
                if o.strategy:
                    parts.append(f"runs {o.strategy}" + (f" (NOT like-for-like: {o.differs_from_local})"
                                                         if o.differs_from_local else ""))
                if o.time is not None and "mfu_scale" in (o.time.mfu_reason or ""):
                    parts.append(f"MFU {o.time.mfu:.3g} (x catalog mfu_scale for its software stack)")
                spot = ""
                if o.spot_usd_per_local_hour is not None:
                    spot = (f"; spot ${o.spot_usd_per_hour:g}/h ({o.spot_basis}): "
                            + ", ".join(([f"{_usd(o.spot_cost_per_job_usd)} per job"]
                                         if o.spot_cost_per_job_usd is not None else [])
                                        + [f"{_usd(o.spot_usd_per_million_tokens)}/M tokens"]))
                tag = " (cheapest spot)" if o is sp and o not in feas[:top] else ""
                out.append(f"    {o.instance_id}{tag}: {', '.join(parts)}{spot}")
        misses = [o for o in wc.cloud if not o.feasible]
        for o in misses[:2 * top]:
            out.append(f"    does not fit: {o.instance_id} ({o.gpu_count} x {o.gpu_id}, {price(o)}): {o.why_not}")
        if len(misses) > 2 * top:
            out.append(f"    ... and {len(misses) - 2 * top} more that do not fit (--json lists them all)")
        for n in wc.notes:
            out.append(f"  note: {n}")
    out.append("")
    if verbose:
        out.append("Cost model:")
        out.extend(f"  {line}" for line in comp.lines)
    else:
        out.append("The time and cost model's arithmetic and each price's source: --verbose (or --json, --out).")
    out.append("")
    if comp.break_even_months is not None:
        out.append(f"Break-even (on-demand): {_be_sentence(comp.break_even_hours, comp.break_even_months, comp)}")
    if comp.spot_break_even_months is not None:
        out.append(f"Break-even (spot): {_be_sentence(comp.spot_break_even_hours, comp.spot_break_even_months, comp)}")
    for x in comparison_flips(comp):
        out.append(f"Rent-or-buy flip, {x.sentence()}")
    for n in comp.notes:
        out.append(f"Note: {n}")
    for w in comp.warnings:
        out.append(f"Warning: {w}")
    if refs:
        out.append("")
        out.append("Cloud price sources (catalog cloud.yaml; list USD per instance-hour, the region and date beside "
                   "each price):")
        out.extend(f"  [{n}] {src}" for src, n in refs.items())
    return "\n".join(out)


def _be_sentence(h: BreakEven | None, mo: BreakEven | None, comp: Comparison) -> str:
    """Months and busy hours in one sentence; they agree (planner.cost.tco), so both are said together."""
    assert h is not None and mo is not None
    D = comp.costs.depreciation_years
    busy = f"{comp.busy_hours:,.0f} busy hours in {years_text(D)} at {comp.hours_per_month:,.1f} h/month"
    need = h.value if h.value is not None else h.beyond
    needs = (f"over the whole period, resale included, owning pays off beyond {need:,.0f} busy hours"
             if need is not None else "")
    if mo.value is not None and mo.at_sale:
        return (f"local pays off only when the machine is sold for its residual value at the end of the "
                f"{mo.value:,.0f} months ({needs}; the scenario gives {busy})")
    if mo.value is not None and mo.cheaper_before == "cloud":
        return (f"local pays off after {mo.value:,.1f} months at {comp.hours_per_month:,.0f} busy h/month, the full "
                f"price paid at month 0 and the resale credited at the end" + (f"; {needs}" if needs else ""))
    if mo.cheaper_before == "cloud":
        if need is None:
            return (f"cloud is cheaper throughout the {mo.horizon:g} months at any utilization (it costs less per busy "
                    "hour than the local energy)")
        if need > HOURS_PER_MONTH * 12 * D:
            return (f"cloud is cheaper throughout the {mo.horizon:g} months: owning would need {need:,.0f} busy hours, "
                    f"more than the {HOURS_PER_MONTH * 12 * D:,.0f} hours in {years_text(D)}")
        return (f"cloud is cheaper throughout the {mo.horizon:g} months at this utilization (owning would need "
                f"{need:,.0f} busy hours in {years_text(D)}, {need / (12 * D):,.0f} h/month; the scenario gives {busy})")
    return mo.text
