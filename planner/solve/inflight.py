"""The sequences a replica holds under an ``slo:`` load, sized on the card that serves them.

Under ``slo: {concurrency: c}`` each of ``r`` replicas holds ceil(c / r) sequences whatever the card.
Under ``slo: {requests_per_s: lambda}`` the sequences in flight depend on how fast the card serves
them: by Little's law (Little 1961, "A Proof for the Queuing Formula: L = lambda W") a replica
receiving lambda / r requests per second, each taking request_s(n) at n sequences, holds
n = lambda / r x request_s(n). :func:`at_load` finds that fixed point on the card
(planner.solve.targets.slo_figures, iterating from one sequence up to :func:`seq_limit`, vLLM's
``max_num_seqs``) and then sizes the memory for those n sequences (the KV cache of each,
planner.memory). A replica whose fixed point needs more sequences than its memory holds (or than
the engine runs at once), or whose arriving prompts' prefill alone fills the GPU, does not keep up: it
is sized for the most it holds (found by bisection on the memory model, which is non-decreasing in the sequence
count), and the SLO check there says it falls behind.

The target ``tpot_s`` therefore bounds nothing but the check: a looser target never needs more
memory on the same card, so it never turns a feasible plan infeasible. (The bound requests_per_s x
(ttft_s + output_tokens x tpot_s), :attr:`planner.solve.slo.Slo.users`, is still the most users a
machine meeting the targets holds: the load's words, and the most replicas tried.)

:func:`largest_rate` finds the largest ``requests_per_s`` one shape of replicas on a card keeps up
with and meets the targets at, each candidate sized and checked by :func:`at_load` as the solver
checks a machine ("What would fit" offers only loads that pass).

Never prints and never reads files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, Callable

from planner.solve.slo import MAX_SLO_USERS
from planner.solve.targets import SloFigures, slo_figures


@dataclass(frozen=True)
class Sized:
    """One replica of a served workload under its SLO's load on one card.

    Attributes:
        workload: the replica's workload at the sequences it holds (``infer.concurrency``).
        estimate: the memory model's result for it.
        figures: what it achieves there (planner.solve.targets.slo_figures).
        fits: its per-GPU need is at most the card's capacity.
    """

    workload: Any
    estimate: Any
    figures: SloFigures
    fits: bool

    def met(self, slo: Any) -> bool:
        """It fits the card's memory and meets every target under the load."""
        return self.fits and self.figures.met(slo)


def with_sequences(workload: Any, n: int) -> Any:
    """``workload`` (one replica) holding ``n`` sequences."""
    i = workload.infer
    return workload if i.concurrency == n else replace(workload, infer=replace(i, concurrency=n))


def at_load(workload: Any, slo: Any, gpu: Any, cap: int, est_of: Callable[[Any], Any], *, per_lane: float = 0.0,
            host_bandwidth: float | None = None) -> Sized:
    """One replica of ``workload`` (its ``tp`` and ``replicas`` set, planner.solve.usages.with_replicas)
    on ``gpu`` under ``slo``'s load, sized as the module docstring says.

    Args:
        workload: the replica's workload; under ``concurrency`` its concurrency is the sequences held,
            under ``requests_per_s`` it is replaced by the fixed point.
        slo: the workload's :class:`planner.solve.slo.Slo`.
        gpu: the card.
        cap: bytes one GPU offers the workload (planner.solve.usages.capacity_for).
        est_of: workload -> memory estimate (the caller memoises it).
        per_lane, host_bandwidth: as for planner.solve.targets.slo_figures.
    """
    def figures(w: Any, e: Any, most: int | None = None) -> SloFigures:
        return slo_figures(SimpleNamespace(workload=w, estimate=e), slo, gpu, per_lane=per_lane,
                           host_bandwidth=host_bandwidth, most=most)

    def sized(w: Any) -> Sized:
        e = est_of(w)
        return Sized(w, e, figures(w, e), e.per_gpu_total_bytes <= cap)

    if slo.requests_per_s is None:
        return sized(workload)
    limit = seq_limit(workload)
    one = with_sequences(workload, 1)
    e1 = est_of(one)
    f = figures(one, e1, limit)
    n = max(1, min(f.in_flight, limit))
    if not math.isfinite(f.tpot_s):
        # the arriving prompts' prefill alone needs all of its time: it keeps up at no sequence count, and
        # is sized, as any replica that falls behind, for the most it holds (where its overload is read)
        if e1.per_gpu_total_bytes > cap:
            return Sized(one, e1, figures(one, e1), False)
        return sized(with_sequences(workload, holds(workload, cap, est_of, limit)))
    if n == 1:  # one sequence is the fixed point
        return sized(one)
    if f.keeps_up:
        s = sized(with_sequences(workload, n))
        if s.fits:
            return s
    # the fixed point needs more sequences than its memory holds (or than the engine runs at once): size
    # it for the most it holds, where the check says it does not keep up
    if e1.per_gpu_total_bytes > cap:
        return Sized(one, e1, figures(one, e1), False)
    if est_of(with_sequences(workload, n)).per_gpu_total_bytes <= cap:
        return sized(with_sequences(workload, n))
    good, bad = 1, n
    while bad - good > 1:
        mid = (good + bad) // 2
        if est_of(with_sequences(workload, mid)).per_gpu_total_bytes <= cap:
            good = mid
        else:
            bad = mid
    return sized(with_sequences(workload, good))


def seq_limit(workload: Any) -> int:
    """The most sequences one replica runs at once: vLLM's ``max_num_seqs`` (its scheduler batches at
    most that many per step; vLLM engine arguments, ``--max-num-seqs``) when set, else
    :data:`MAX_SLO_USERS`."""
    i = workload.infer
    n = getattr(i, "max_num_seqs", None) if i.engine == "vllm" else None
    return min(int(n), MAX_SLO_USERS) if n else MAX_SLO_USERS


def holds(workload: Any, cap: int, est_of: Callable[[Any], Any], top: int | None = None) -> int:
    """The most sequences (at most ``top``, default :func:`seq_limit`) one replica of ``workload``
    holds within ``cap`` bytes per GPU (0 when not one): exponential then binary search on the memory
    model."""
    top = seq_limit(workload) if top is None else top
    def ok(n: int) -> bool:
        return est_of(with_sequences(workload, n)).per_gpu_total_bytes <= cap

    if not ok(1):
        return 0
    good, step = 1, 1
    while good < top:
        x = min(good + step, top)
        if not ok(x):
            bad = x
            break
        good, step = x, step * 2
    else:
        return good
    while bad - good > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if ok(mid) else (good, mid)
    return good


def round_down(x: float, digits: int = 3) -> float:
    """``x`` rounded down to ``digits`` significant figures (a rate offered stays one that passes)."""
    if x <= 0:
        return 0.0
    k = digits - 1 - math.floor(math.log10(x))
    return math.floor(x * 10 ** k) / 10 ** k


def round_up(x: float, digits: int = 3) -> float:
    """``x`` rounded up to ``digits`` significant figures (a target loosened to it is met)."""
    if x <= 0 or not math.isfinite(x):
        return x
    k = digits - 1 - math.floor(math.log10(x))
    return math.ceil(x * 10 ** k - 1e-9) / 10 ** k


#: Bisection rounds of :func:`largest_rate` (a factor 10^6 of rates closed to 1e-6 of its width).
RATE_ROUNDS = 40


def largest_rate(workload: Any, slo: Any, gpu: Any, cap: int, est_of: Callable[[Any], Any]) -> tuple[float, Sized] | None:
    """The largest ``requests_per_s`` (three significant figures, rounded down, below the SLO's) that
    the replicas of ``workload`` on ``gpu`` keep up with and meet ``slo``'s targets at, and what one
    replica achieves there (:func:`at_load`); None when even a millionth of the rate misses. The
    figures fall with the rate (fewer sequences in flight, fewer prompts between the decode steps), so
    a bisection on the rate finds it; the rate returned is checked again."""
    rate = float(slo.requests_per_s)

    def check(r: float) -> Sized | None:
        s2 = replace(slo, requests_per_s=r)
        s = at_load(workload, s2, gpu, cap, est_of)
        return s if s.met(s2) else None

    lo, hi = rate * 1e-6, rate
    if check(lo) is None:
        return None
    for _ in range(RATE_ROUNDS):
        mid = math.sqrt(lo * hi)
        if check(mid) is not None:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-4:
            break
    r = round_down(lo)
    s = check(r) if r > 0 else None
    return None if s is None else (r, s)


def estimate_by_sequences(overheads: Any) -> Callable[[Any], Any]:
    """A memory estimate of one replica (planner.memory.estimate with ``overheads``) memoised on its
    sequence count, the ``est_of`` of :func:`at_load`, :func:`holds` and :func:`largest_rate`: the
    caller passes workloads that differ in ``infer.concurrency`` only. The memo lives in the returned
    function; nothing is kept at module level."""
    from planner.memory import estimate

    memo: dict[int, Any] = {}

    def est_of(w: Any) -> Any:
        n = w.infer.concurrency
        if n not in memo:
            memo[n] = estimate(w, overheads)
        return memo[n]

    return est_of


__all__ = ["RATE_ROUNDS", "Sized", "at_load", "estimate_by_sequences", "holds", "largest_rate", "round_down", "round_up", "seq_limit",
           "with_sequences"]
