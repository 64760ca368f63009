"""Renting a service to its ``slo:``: how many identical instances meet the targets at the load.

A served workload with an ``slo:`` block is sized locally as ``r`` identical replicas of ``tp``
GPUs that share the load, over one machine or several (planner.solve.usages.usages_for,
planner.solve.targets). The cloud side is held to the same rule (:func:`rent_for_slo`): ``k``
identical instances of one type, each holding ``gpu_count // tp`` whole replicas (tensor
parallelism within an instance only), so ``R = k x (gpu_count // tp)`` replicas share the load,
each holding ceil(users / R) sequences (planner.solve.usages.with_replicas; under
``requests_per_s`` each replica receives requests_per_s / R of the arrivals and holds the
sequences really in flight on the instance's card, the Little's-law fixed point of
planner.solve.inflight.at_load, as the local machine is sized). The memory model
checks one replica at that per-replica load on the instance (planner.cost.cloud.check_instance,
the same check as every instance) and the speed model under load checks the TTFT and TPOT
targets (planner.solve.targets.slo_figures, the check the solver holds the local machine to). The
rental is the fewest instances that pass both, over the scenario's variants (tp, precision) in
its order of preference; the fewest is the cheapest, as the price is per instance.

The count is searched by bisection over k = 1 .. ceil(users / replicas per instance) (past that
a replica would hold less than one sequence): it rests on fewer sequences (and fewer arrivals)
per replica never making a replica slower or larger in the memory and speed models, which both
grow with the sequences a replica holds and the rate its prompts arrive at.

Price per million tokens at the load (:func:`served_tokens_per_s`): the tokens the SLO's load
actually receives, not what a saturated machine could generate. Under ``requests_per_s`` that is
requests_per_s x output_tokens; under ``concurrency`` each of the users receives output_tokens per
request time (TTFT + output_tokens x TPOT, as achieved), so by Little's law (Little 1961, L =
lambda x W: throughput = users / request time) users x output_tokens / request_s. The local
machine is priced on the same definition, by ``planner compare`` (planner.cost.compare) and by
``planner plan`` (planner.cost.objective). Cost per request likewise (:func:`at_load`): the cost per
hour of what serves the load over the requests it serves in an hour, requests_per_s x 3600 or
users / request_s x 3600, so cost per request / output_tokens x 1e6 is the same USD per million.

Importing this module does no work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from planner.catalog.loader import Catalog
from planner.cost.cloud import InstanceFit, check_instance, closest_variant, select_instances
from planner.workload.spec import Workload


@dataclass(frozen=True)
class SloRental:
    """What renting ``instances`` copies of one instance type achieves under the SLO's load.

    Attributes:
        instances: k, identical instances rented side by side (no link between them).
        replicas: R, replicas of ``tp`` GPUs over all of them (k x gpu_count // tp).
        tp: tensor-parallel degree of a replica (within one instance).
        sequences_per_replica: ceil(users / R).
        ttft_s, tpot_s: achieved per replica at the load, seconds (planner.solve.targets.SloFigures).
        request_s: one request's time at the load, seconds (TTFT + output_tokens x TPOT).
        served_tokens_per_s: output tokens per second the load receives (:func:`served_tokens_per_s`).
    """

    instances: int
    replicas: int
    tp: int
    sequences_per_replica: int
    ttft_s: float
    tpot_s: float
    request_s: float
    served_tokens_per_s: float

    def text(self, count: bool = True) -> str:
        """'3 instances, 6 replicas of tp 1 at 9 sequences each: TTFT 0.31 s, TPOT 45.2 ms' (without
        the instances when ``count`` is False)."""
        head = f"{self.instances} instance{'s' if self.instances != 1 else ''}, " if count else ""
        return (f"{head}{self.replicas} replica"
                f"{'s' if self.replicas != 1 else ''} of tp {self.tp} at {self.sequences_per_replica:,} sequence"
                f"{'s' if self.sequences_per_replica != 1 else ''} each: TTFT {self.ttft_s:.3g} s, "
                f"TPOT {self.tpot_s * 1e3:.3g} ms")

    def to_dict(self) -> dict[str, Any]:
        return {"instances": self.instances, "replicas": self.replicas, "tp": self.tp,
                "sequences_per_replica": self.sequences_per_replica, "ttft_s": self.ttft_s, "tpot_s": self.tpot_s,
                "request_s": self.request_s, "served_tokens_per_s": self.served_tokens_per_s}


def served_requests_per_s(slo: Any, request_s: float) -> float:
    """Requests per second the SLO's load brings (module docstring): ``requests_per_s``, or
    users / request_s under ``concurrency`` (Little's law: each of the users has one request in
    flight, each lasting ``request_s``, the achieved TTFT + output_tokens x TPOT).

    Raises:
        ValueError: a concurrency load with ``request_s`` not above 0 or not finite.
    """
    if slo.requests_per_s is not None:
        return float(slo.requests_per_s)
    if not (request_s > 0 and math.isfinite(request_s)):
        raise ValueError(f"a request's time must be a positive number of seconds, not {request_s!r}")
    return slo.users / request_s


def served_tokens_per_s(slo: Any, request_s: float) -> float:
    """Output tokens per second the SLO's load receives (module docstring):
    :func:`served_requests_per_s` x output_tokens (requests_per_s x output_tokens, or users x
    output_tokens / request_s under ``concurrency``).

    Raises:
        ValueError: a concurrency load with ``request_s`` not above 0 or not finite.
    """
    return served_requests_per_s(slo, request_s) * slo.output_tokens


def at_load(jt: Any, slo: Any, request_s: float, instances: int = 1) -> Any:
    """``jt`` (planner.speed.timing.JobTime of one request) priced at the SLO's load: one request
    takes ``instances`` / :func:`served_requests_per_s` machine-seconds (the machine, or the
    ``instances`` rented, serve the load's requests and nothing else, so its cost per hour buys
    the requests of one hour at the load: cost per request = cost per hour / requests per hour),
    and its tokens/s is :func:`served_tokens_per_s`. The full-throughput figures stay in the
    arithmetic (``jt.lines``) and ``requests_per_hour_capacity``.

    Raises:
        ValueError: as :func:`served_requests_per_s`.
    """
    rps = served_requests_per_s(slo, request_s)
    served = rps * slo.output_tokens
    seconds = instances / rps
    many = f"{instances:,} instances x " if instances != 1 else ""
    line = (f"at the slo: load ({load_basis_text(slo, served, request_s)}): {rps:,.4g} requests/s served, so "
            f"{many}1 / {rps:,.4g} = {seconds:.4f} machine-s per request (cost per request = cost per hour / "
            f"requests served per hour), not the {jt.seconds_per_job:.4f} s of a saturated machine")
    return replace(jt, job=f"{jt.job} at the slo: load", seconds_per_job=seconds, compute_s=seconds,
                   tokens_per_s=served, lines=(*jt.lines, line))


def load_basis_text(slo: Any, served: float, request_s: float | None) -> str:
    """The load a price per million tokens is at, in words, with its arithmetic."""
    if slo.requests_per_s is not None:
        return (f"{slo.requests_per_s:g} requests/s x {slo.output_tokens:,} output tokens = {served:,.1f} tokens/s "
                "served")
    return (f"{slo.users:,} users x {slo.output_tokens:,} output tokens / {request_s:.3g} s per request (Little's law) "
            f"= {served:,.1f} tokens/s served")


def local_slo_figures(workload: Workload, estimate: Any, slo: Any, gpu: Any, *, per_lane: float,
                      host_bandwidth: float | None) -> Any:
    """The local machine's figures under the SLO's load (planner.solve.targets.slo_figures), with
    the host link and RAM only where llama.cpp keeps blocks in host RAM, as the solver times it
    (planner.solve.achieved)."""
    from planner.solve.targets import slo_figures
    from planner.speed.traffic import decode_reads

    host = bool(decode_reads(workload, estimate).host_blocks)
    return slo_figures(SimpleNamespace(workload=workload, estimate=estimate), slo, gpu,
                       per_lane=per_lane if host else 0.0, host_bandwidth=host_bandwidth if host else None)


def _try(v: Workload, k: int, inst: Any, catalog: Catalog, slo: Any, headroom: float,
         overheads: Any) -> tuple[InstanceFit, Any]:
    """Variant ``v`` on ``k`` instances of ``inst``: the memory check of one replica at its share
    of the load, and its SLO figures (None when it does not fit).

    Under ``concurrency`` a replica holds ceil(users / R) sequences. Under ``requests_per_s`` it
    holds the sequences it really has in flight on this instance's card, the Little's-law fixed
    point at requests_per_s / R arrivals a second (planner.solve.inflight.at_load, the sizing the
    solver gives the local machine), not the bound the targets allow: a looser target never rents
    more."""
    from planner.solve.targets import slo_figures

    i = v.infer
    assert i is not None
    reps = k * (inst.gpu_count // i.tp)
    per = 1 if slo.requests_per_s is not None else -(-slo.users // reps)
    one = replace(v, infer=replace(i, concurrency=per, replicas=1), gpus_per_node=None)
    fit = check_instance(one, inst, catalog, overheads, None, headroom)
    if not fit.feasible or fit.workload is None:
        return fit, None
    wl = replace(fit.workload, infer=replace(fit.workload.infer, replicas=reps))
    if slo.requests_per_s is None:
        return replace(fit, workload=wl), slo_figures(SimpleNamespace(workload=wl, estimate=fit.estimate), slo, fit.gpu)
    from planner.solve.inflight import at_load as sized_at_load, estimate_by_sequences

    est_of = estimate_by_sequences(overheads)

    s = sized_at_load(wl, slo, fit.gpu, fit.capacity_bytes, est_of)
    n = s.workload.infer.concurrency
    # the instance's own check (memory, host RAM, formats) at the sequences the replica holds
    at_n = check_instance(replace(v, infer=replace(i, concurrency=n, replicas=1), gpus_per_node=None), inst, catalog,
                          overheads, None, headroom)
    if not at_n.feasible or at_n.workload is None:
        return at_n, None
    wl = replace(at_n.workload, infer=replace(at_n.workload.infer, replicas=reps))
    return replace(at_n, workload=wl), s.figures


def rent_for_slo(variants: Sequence[Workload], inst: Any, catalog: Catalog, slo: Any, *, headroom: float = 0.0,
                 local: Workload | None = None, overheads: Any = None) -> tuple[InstanceFit, SloRental | None]:
    """The fewest instances of ``inst`` that serve the SLO (module docstring) and the fit of one of
    them (its workload: one instance's replicas at their share of the load, ``infer.replicas`` the
    total R); the rental is None when no count meets the targets, the fit then saying why
    (memory, or the figures at the most instances that help)."""
    best: tuple[int, int, InstanceFit, Any] | None = None  # (k, variant index, fit, figures)
    ties: list[tuple[int, InstanceFit, Any]] = []  # the variants that take best's count
    misses: list[tuple[int, InstanceFit, Any]] = []  # (variant index, fit at the most instances, figures)
    for vi, v in enumerate(variants):
        i = v.infer
        if i is None or inst.gpu_count < i.tp or inst.gpu_count % i.tp:
            continue
        top = max(1, -(-slo.users // (inst.gpu_count // i.tp)))
        if best is not None:
            top = min(top, best[0])  # a later variant must take no more instances to be chosen

        fit, f = _try(v, top, inst, catalog, slo, headroom, overheads)
        if f is None or not f.met(slo):
            misses.append((vi, fit, f))
            continue
        lo, hi, hit = 1, top, (fit, f)  # the least k in [lo, hi] that meets: hi meets
        while lo < hi:
            mid = (lo + hi) // 2
            fm, m = _try(v, mid, inst, catalog, slo, headroom, overheads)
            if m is not None and m.met(slo):
                hi, hit = mid, (fm, m)
            else:
                lo = mid + 1
        if best is None or hi < best[0]:
            best, ties = (hi, vi, hit[0], hit[1]), []
        ties.append((vi, hit[0], hit[1]))
    if best is not None:
        k = best[0]
        # at the same count (the same price) the variant closest to the local plan's strategy
        j = closest_variant([variants[vi] for vi, _, _ in ties], local) if local is not None else 0
        _, fit, f = ties[j]
        i = fit.workload.infer
        return fit, SloRental(instances=k, replicas=i.replicas, tp=i.tp, sequences_per_replica=i.concurrency,
                              ttft_s=f.ttft_s, tpot_s=f.tpot_s, request_s=f.request_s,
                              served_tokens_per_s=served_tokens_per_s(slo, f.request_s))
    return _why_not(variants, inst, catalog, slo, misses, headroom, local, overheads), None


def _why_not(variants: Sequence[Workload], inst: Any, catalog: Catalog, slo: Any, misses: list, headroom: float,
             local: Workload | None, overheads: Any) -> InstanceFit:
    """The fit that says why no count of ``inst`` serves the SLO: the closest miss of the targets
    among the variants that fit in memory, else the memory reason of the variant closest to the
    local one (as planner.cost.cloud.check_instance gives it)."""
    from planner.solve.targets import figures_text

    timed = [(vi, fit, f) for vi, fit, f in misses if f is not None]
    if timed:
        vi, fit, f = min(timed, key=lambda m: (m[2].excess(slo), m[0]))
        i = fit.workload.infer
        k = i.replicas // (inst.gpu_count // i.tp)
        return replace(fit, feasible=False, why_not=(
            f"misses the slo: for {slo.load_text()} even at {k:,} instance{'s' if k != 1 else ''} ({i.replicas:,} "
            f"replica(s) of tp {i.tp}, more would leave a replica under one sequence): "
            + figures_text(f, slo, i.concurrency)))
    if misses:
        fits = [fit for _, fit, _ in misses]
        j = closest_variant([variants[vi] for vi, _, _ in misses], local) if local is not None else 0
        return fits[j]
    return check_instance(list(variants), inst, catalog, overheads, None, headroom, local)


def slo_service(run: Any, machine: Any, catalog: Catalog, costs: Any, service: bool, reading: str,
                assumed: bool) -> tuple[bool, str, bool, list, float, str, float]:
    """A workload with an ``slo:`` on both sides (planner.cost.compare): (service, the reading in
    words, assumed, the (fit, rental) of every selected instance, the output tokens/s its load
    receives on the local machine, that rate's arithmetic, the local request time at the load in
    seconds: TTFT + output_tokens x TPOT as achieved). An ``slo:`` states the load, so the
    workload is read as a service without assuming it (unless ``costs.batch_inference`` lists it).

    Raises:
        ValueError: the local machine's request time is not a positive number (:func:`served_tokens_per_s`).
    """
    w, slo = run.workload, run.slo
    f = local_slo_figures(w, run.estimate, slo, machine.gpu, per_lane=machine.pcie_per_lane_bytes_per_s,
                          host_bandwidth=machine.host_bandwidth_bytes_per_s)
    served = served_tokens_per_s(slo, f.request_s)
    basis = load_basis_text(slo, served, f.request_s)
    if service:
        service, assumed = True, False
        reading = (f"a service to its slo: (the load, {slo.load_text()}, is served on both sides: k = the instances "
                   "that meet the targets at it; USD per million tokens at the tokens that load receives)")
    pairs = slo_fits(run.variants or (w,), catalog, slo, providers=costs.providers, instances=costs.instances,
                     regions=costs.regions, headroom=run.vram_headroom, local=w)
    return service, reading, assumed, pairs, served, basis, f.request_s


def slo_fits(variants: Sequence[Workload], catalog: Catalog, slo: Any, *, providers: tuple[str, ...] = (),
             instances: tuple[str, ...] = (), regions: tuple[str, ...] = (), headroom: float = 0.0,
             local: Workload | None = None) -> list[tuple[InstanceFit, SloRental | None]]:
    """:func:`rent_for_slo` for every selected instance, in catalog order (as planner.cost.cloud.cloud_fits)."""
    return [rent_for_slo(variants, inst, catalog, slo, headroom=headroom, local=local)
            for inst in select_instances(catalog, providers=providers, instances=instances, regions=regions)]


__all__ = ["SloRental", "at_load", "load_basis_text", "local_slo_figures", "rent_for_slo", "served_requests_per_s",
           "served_tokens_per_s", "slo_fits", "slo_service"]
