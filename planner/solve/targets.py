"""Targets a machine must meet beyond memory: a training deadline and a serving level (SLO).

**Deadline** (a training workload's ``deadline_hours``, or ``constraints.max_hours_per_job``): one
run, ``dataset_tokens`` x ``epochs`` tokens, on the row's cards takes at most that many hours by
the time model (planner.speed.timing.time_workload: the speed model's step time, or the one-factor
rule when the scenario pins ``costs.mfu`` / ``costs.mbu``), with the same inputs the cost stage
times the chosen machine with (the slower PCIe generation of card and platform, the card's lanes),
so the hours the plan reports are the hours checked.

**Service level** (an inference workload's ``slo:``): ``r`` identical replicas of ``tp`` GPUs share
the load (planner.solve.usages.with_replicas). Under a ``concurrency`` load each replica holds
c = ceil(users / r) sequences and the speed model (planner.speed.inference.inference_speed) gives
its time to first token (the prompt's prefill plus one decode step of the batch it joins) and
time per output token: one decode step at c sequences (KV at the prompt plus half the output),
stretched by the share of time the OTHER requests' prompts take on the same GPUs while a sequence
decodes (:func:`loaded`, planner.speed.inference.under_arrivals, which cites how vLLM's scheduler and
llama.cpp's server put prompts into the decode batches: rho = the others' arrivals/s x one prompt's
prefill, the c - 1 other users each arriving once per request time; TPOT / (1 - rho); one user alone
is never slowed by their own prompt; a replica with rho >= 1 cannot keep up). Its TTFT adds the
mean wait of a prompt for the prompts queued ahead of it (planner.speed.inference.prompt_wait: the
M/D/1 / Pollaczek-Khinchine mean wait rho S / (2 (1 - rho)), S the stretched prefill; an upper-bound
approximation for a finite user population), and the request time includes it. ``planner
estimate`` shows the same figures as ``steady_tpot_s`` and ``steady_ttft_s``.
Under ``requests_per_s`` the sequences in flight per replica follow Little's law (Little 1961,
"A Proof for the Queuing Formula: L = lambda W"): n = (requests_per_s / r) x request_s(n), found by
iterating n <- ceil(lambda_r x request_s(n)) from n = 1 (request time grows with n, so the
iteration rises to the least fixed point); the replica keeps up when that n is at most the c it
was sized for, and the targets are checked at n. The solver sizes c on each card as that fixed
point, or the most its memory holds (planner.solve.inflight.at_load), not from the targets. The
model is a steady state: it leaves out queueing delay from bursts (an M/M/c queue adds waiting
time as utilisation nears 1), so a target met with little margin may be missed at peaks.

Importing this module does no work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from planner.speed.inference import inference_speed, under_arrivals
from planner.speed.timing import DEFAULT_MBU, time_workload

#: Most rounds of the Little's-law iteration (it rises by at least one sequence a round, and stops
#: past the replica's sequences).
MAX_LITTLE_ROUNDS = 64


def pinned_rates(scenario: Any, workload_name: str) -> tuple[float | None, float]:
    """(mfu, mbu) the scenario's ``costs:`` pins for ``workload_name`` (None, DEFAULT_MBU when it
    pins none), read as planner.cost.tco.read_costs reads them (a number, or per workload name)."""
    costs = getattr(scenario, "costs", None)
    data = getattr(costs, "data", None) or {}

    def unit(x: Any) -> float | None:
        return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x <= 1 else None

    raw = data.get("mfu")
    from planner.core.names import value_for_name  # an NFD spelling of the name names it (read_costs)

    mfu = unit(value_for_name(raw, workload_name)) if isinstance(raw, dict) else unit(raw)
    mbu = unit(data.get("mbu"))
    return mfu, (mbu if mbu is not None else DEFAULT_MBU)


def run_hours(u: Any, gpu: Any, per_lane: float, pins: tuple[float | None, float]) -> float:
    """Hours one run of training usage ``u`` takes on ``u.gpus`` cards of ``gpu``: the time model
    with the cost stage's inputs (module docstring). NaN when the workload gives no size."""
    wl = u.workload
    jt = time_workload(workload=wl, estimate=u.estimate, gpu=gpu, gpu_count=wl.gpus,
                       pcie_per_lane_bytes_per_s=per_lane, pcie_lanes=gpu.pcie_lanes, mfu=pins[0], mbu=pins[1])
    return math.nan if jt.hours_per_job is None else float(jt.hours_per_job)


@dataclass(frozen=True)
class SloFigures:
    """What one replica achieves under the SLO's load on one GPU model.

    Attributes:
        ttft_s, tpot_s: time to first token (the stretched prefill plus the wait for the prompts queued
            ahead, planner.speed.inference.prompt_wait) and per output token at ``in_flight``
            sequences, seconds.
        in_flight: sequences each replica holds (concurrency load: the sequences it was sized for;
            requests_per_s: Little's law).
        keeps_up: requests_per_s: the replica's steady state fits the sequences it was sized for
            (always True under a concurrency load).
        request_s: one request's time, ttft_s + output_tokens x tpot_s (the wait included).
        step_s: one decode step at ``in_flight`` sequences with nothing else on the GPUs (``planner
            estimate``'s ``tpot_s``); ``tpot_s`` is it stretched by the other requests' prefills.
        prefill_share: the other requests' prompts' share of the replica's time (rho).
        wait_s: the part of ``ttft_s`` spent waiting for the prompts queued ahead, seconds.
        overload: requests_per_s, a replica that does not keep up: the share of its GPU time its
            arrivals ask for, lam x (one prompt's prefill + output_tokens x the decode step at the
            most sequences it holds / those sequences): each request's prefill and its share of
            full-batch decode steps (about the load over the most rate it keeps up with); 0 when it
            keeps up. It grades the misses (:meth:`excess`): of two machine splits that both fall
            behind, the less overloaded is the closer.
    """

    ttft_s: float
    tpot_s: float
    in_flight: int
    keeps_up: bool
    request_s: float
    step_s: float = math.nan
    prefill_share: float = 0.0
    wait_s: float = 0.0
    overload: float = 0.0

    def met(self, slo: Any) -> bool:
        return (self.keeps_up and (slo.ttft_s is None or self.ttft_s <= slo.ttft_s * (1 + 1e-9))
                and (slo.tpot_s is None or self.tpot_s <= slo.tpot_s * (1 + 1e-9)))

    def excess(self, slo: Any) -> float:
        """How far over its targets, as the largest finite ratio achieved / target less 1 (0 when
        met), plus, when it does not keep up with requests_per_s, its :attr:`overload` (at least 1):
        a replica that falls behind is further off than any that keeps up, and one twice overloaded
        further than one 1.5 times (an infinite TPOT, the prefill alone filling the GPU, is graded
        by that share instead)."""
        worst = 0.0
        for got, target in ((self.ttft_s, slo.ttft_s), (self.tpot_s, slo.tpot_s)):
            if target is not None and math.isfinite(got):
                worst = max(worst, got / target - 1)
        return worst + (0.0 if self.keeps_up else max(1.0, self.overload))


def slo_figures(u: Any, slo: Any, gpu: Any, *, per_lane: float = 0.0, host_bandwidth: float | None = None,
                most: int | None = None) -> SloFigures:
    """TTFT and TPOT of inference usage ``u`` (one of ``u.workload.infer.replicas`` replicas) on
    ``gpu`` under the SLO's load (module docstring). ``most``: under ``requests_per_s``, the most
    sequences in flight the Little's-law iteration may reach (default: the workload's
    ``concurrency``, the sequences the replica was sized for; planner.solve.inflight passes a
    larger bound to find the fixed point before it sizes the memory)."""
    wl = u.workload
    i = wl.infer
    sized = max(i.concurrency, 1) if most is None or slo.requests_per_s is None else max(most, 1)

    def at(n: int) -> Any:
        w = wl if n == i.concurrency else replace(wl, infer=replace(i, concurrency=n))
        return inference_speed(w, u.estimate, gpu, prompt_tokens=slo.prompt_tokens, output_tokens=slo.output_tokens,
                               per_lane=per_lane, lanes=gpu.pcie_lanes, host_bandwidth=host_bandwidth)

    if slo.requests_per_s is None:
        sp = at(sized)
        tpot, request, ok, wait = loaded(sp, sized, slo.output_tokens)
        return SloFigures(sp.ttft_s + wait, tpot, sized, ok, request, sp.tpot_s, wait_s=wait)
    lam = slo.requests_per_s / max(i.replicas, 1)

    def overload() -> float:
        # the GPU time the arrivals ask of a replica at the most sequences it was sized for: each request's
        # prefill plus its output tokens' share of the decode steps of a full batch, lam x (prefill +
        # output_tokens x step(sized) / sized); a replica that keeps up asks less than all of it
        full = at(sized)
        return lam * (full.prompt_tokens / full.prefill_tokens_per_s + slo.output_tokens * full.tpot_s / sized)

    n = 1
    sp = at(n)
    tpot, request, ok, wait = loaded(sp, n, slo.output_tokens, lam)
    for _ in range(MAX_LITTLE_ROUNDS):
        if not ok:  # the arriving prompts' prefill alone takes lam x prefill >= 1 of the replica's time
            # (the wait is infinite there; the TTFT shown is the prefill alone, the text says it cannot keep up)
            return SloFigures(sp.ttft_s, tpot, n, False, request, sp.tpot_s,
                              lam * sp.prompt_tokens / sp.prefill_tokens_per_s, overload=overload())
        need = math.ceil(lam * request - 1e-9)
        if need <= n:
            break
        if need > sized:
            return SloFigures(sp.ttft_s + wait, tpot, need, False, request, sp.tpot_s, overload=overload())
        n = need
        sp = at(n)
        tpot, request, ok, wait = loaded(sp, n, slo.output_tokens, lam)
    up = ok and math.ceil(lam * request - 1e-9) <= n
    return SloFigures(sp.ttft_s + wait, tpot, n, up, request, sp.tpot_s, wait_s=wait,
                      overload=0.0 if up else overload())


def figures_text(f: SloFigures, slo: Any, sized: int) -> str:
    """What one replica achieves under the SLO's load, in words, for a closest miss: 'TTFT 0.2 s
    (target 1 s), TPOT 46 ms (target 50 ms) at 50 sequence(s) per replica'; a replica whose arriving
    prompts' prefill alone needs all of its time says so with the share ('cannot keep up with 40
    requests/s: prefill alone needs 160% of the GPU time'), never an infinite TPOT; one that needs
    more sequences in flight than the ``sized`` it holds (Little's law) says that."""
    got = []
    if slo.ttft_s is not None:
        got.append(f"TTFT {f.ttft_s:.3g} s (target {slo.ttft_s:g} s)")
    if not math.isfinite(f.tpot_s):
        rate = f" with {slo.requests_per_s:g} requests/s" if slo.requests_per_s is not None else ""
        return (", ".join(got) + ("; " if got else "") + f"it cannot keep up{rate} (prefill alone needs "
                f"{f.prefill_share:.0%} of the GPU time)")
    if slo.tpot_s is not None:
        got.append(f"TPOT {f.tpot_s * 1e3:.3g} ms (target {slo.tpot_s * 1e3:.4g} ms)")
    load = (f"{f.in_flight:,} sequence(s) per replica" if f.keeps_up else
            f"{f.in_flight:,} sequences per replica: it does not keep up" if slo.requests_per_s is None else
            f"{f.in_flight:,} sequences in flight per replica by Little's law, more than the {sized:,} it holds: "
            f"it does not keep up with {slo.requests_per_s:g} requests/s")
    return f"{', '.join(got)} at {load}"


def loaded(sp: Any, in_flight: int, output_tokens: int,
           arrivals_per_s: float | None = None) -> tuple[float, float, bool, float]:
    """(TPOT, request seconds, keeps up, prompt wait seconds) of a replica whose ``in_flight`` sequences are replaced as
    they finish: the other requests' prompts are prefilled on the same GPUs between (vLLM: inside)
    a sequence's decode steps (planner.speed.inference.under_arrivals, with one prompt's prefill
    ``sp.prompt_tokens / sp.prefill_tokens_per_s``). ``arrivals_per_s``: an open load's arrivals at
    this replica; None: a closed load of ``in_flight`` users."""
    tpot, request, _, ok, wait = under_arrivals(tpot_s=sp.tpot_s, ttft_s=sp.ttft_s,
                                          prefill_s=sp.prompt_tokens / sp.prefill_tokens_per_s,
                                          output_tokens=output_tokens, in_flight=in_flight,
                                          arrivals_per_s=arrivals_per_s)
    return tpot, request, ok, wait


__all__ = ["MAX_LITTLE_ROUNDS", "SloFigures", "figures_text", "loaded", "pinned_rates", "run_hours", "slo_figures"]


# ----- the figures of many hardware rows (planner.solve.candidates.check) ------------------------

def timing_memo(timing: dict | None, u: Any, deadline: Any, slo: Any, pins: Any) -> dict[tuple, Any]:
    """The memo of usage ``u``'s deadline or SLO figures in ``timing`` (a new one when None or not
    yet there). Keyed by the usage's identity and the workload's targets: the figures depend on
    those, the GPU and its links alone, never on the constraints a check applies (RAM rule, speed
    floor, budget). The entry holds the usage itself, so an identity is never reused."""
    if timing is None:
        return {}
    key = (id(u), deadline, slo, pins)
    held = timing.get(key)
    if held is None or held[0] is not u:
        held = timing[key] = (u, {})
    return held[1]


def slo_rows(u: Any, slo: Any, hw: Any, rows: Any, memo: dict[tuple, Any]) -> list[Any]:
    """The SLO figures of usage ``u`` on each hardware row of ``rows`` (an int array;
    planner.solve.targets.slo_figures), memoised in ``memo`` by GPU (and, for llama.cpp layers in
    host RAM, the host link and RAM): one call per distinct key, whatever the rows."""
    a = hw.arrays
    gis = a["gpu_i"][rows].tolist()
    if u.decode is not None and u.decode.host_blocks > 0:
        keys = zip(gis, a["per_lane"][rows].tolist(), a["host_bw"][rows].tolist())
    else:
        keys = ((g, 0.0, None) for g in gis)
    out = []
    for key in keys:
        f = memo.get(key)
        if f is None:
            f = memo[key] = slo_figures(u, slo, hw.gpus[key[0]], per_lane=key[1], host_bandwidth=key[2] or None)
        out.append(f)
    return out


def deadline_rows(u: Any, hw: Any, rows: Any, pins: Any, memo: dict[tuple, Any]) -> Any:
    """Hours of one run of training usage ``u`` on each hardware row of ``rows`` (a float array;
    planner.solve.targets.run_hours), memoised in ``memo`` by GPU and PCIe per-lane rate."""
    import numpy as np

    a = hw.arrays
    out = []
    for key in zip(a["gpu_i"][rows].tolist(), a["per_lane"][rows].tolist()):
        h = memo.get(key)
        if h is None:
            h = memo[key] = run_hours(u, hw.gpus[key[0]], key[1], pins)
        out.append(h)
    return np.array(out, dtype=float)
