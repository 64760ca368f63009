"""The notes a rent-or-buy comparison prints beside its figures: how a cloud price was taken, what k
means, the request rate's notes, the local copies' cost, a much larger cheapest instance, and the
workloads' mix (planner.cost.compare builds the comparison with them).

The comparison's records are passed in (duck-typed), so this module imports nothing of
planner.cost.compare. Importing it does no work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.cost.tco import usd_per_million_tokens
from planner.workload.spec import Workload

#: A cheapest instance with at least this many times the GPUs the workload uses locally is
#: flagged in a note: its price per local hour rests on the job scaling over all its GPUs.
LARGE_INSTANCE_FACTOR = 4

def _price_basis(o: Any) -> str:
    """'list, us-east-1, as of 2026-08': where and when the on-demand price holds (its source: o.source)."""
    return f"list, {o.region}, as of {o.as_of}"


def _k_words(wc: Any, o: Any) -> str:
    if not wc.service:
        return "batch work"
    if getattr(o, "slo", None) is not None:
        return (f"service: {o.copies} instance{'s' if o.copies != 1 else ''} whose replicas meet the slo: at its "
                f"load ({o.slo.text()})")
    if wc.requests_per_hour is not None and o.time is not None and o.time.requests_per_hour_capacity:
        return (f"service: {o.copies} cop{'y' if o.copies == 1 else 'ies'} for {wc.requests_per_hour:,.0f} "
                f"requests/h, ceil({wc.requests_per_hour:,.0f} / {o.time.requests_per_hour_capacity:,.0f})")
    return "service"


def _short(description: str) -> str:
    """A quote line's description without the parts its price is made of."""
    from planner.solve.quote import PARTS_SEPARATOR

    return description.split(PARTS_SEPARATOR)[0]


def capex_basis(m: Any) -> str:
    """The plan's quote lines in one sentence: quantity, item, unit price, price kind and date."""
    return "; ".join(f"{i.quantity} x {_short(i.description)} at ${i.unit_price_usd:,.2f} ({i.price_kind}, as of "
                     f"{i.as_of})" for i in m.capex_items)


def _rate_notes(rph: float, feas: Sequence[Any], discount: float) -> list[str]:
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


def _copies_note(m: Any, copies: int, capex: float, budget_usd: float | None, support: float) -> str:
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


def _large_instance_note(w: Workload, feas: Sequence[Any], spots: Sequence[Any]) -> str:
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


def _with_local_costs(wc: Any, local_usd_per_hour: float) -> Any:
    """Local cost per job and per million tokens at ``local_usd_per_hour``, the cost of one copy of
    the planned machine per busy hour (the job time is one copy's). A service to an ``slo:`` is
    priced per million tokens at the tokens its load receives (``wc.slo_served_tokens_per_s``,
    planner.cost.slo_rent), as its instances are."""
    from dataclasses import replace

    hpj = wc.local.hours_per_job
    per_job = None if hpj is None else local_usd_per_hour * hpj
    tps = wc.slo_served_tokens_per_s if wc.slo_served_tokens_per_s is not None else wc.local.tokens_per_s
    per_m = usd_per_million_tokens(usd_per_hour=local_usd_per_hour, tokens_per_s=tps)
    return replace(wc, local_cost_per_job_usd=per_job, local_usd_per_million_tokens=per_m)


def _mix_spot(wcs: Sequence[Any]) -> float | None:
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


def _mix(wcs: Sequence[Any], attr: str, best_attr: str) -> float | None:
    total = 0.0
    for wc in wcs:
        o = wc.option(getattr(wc, best_attr))
        if o is None or getattr(o, attr) is None:
            return None
        total += wc.share * getattr(o, attr)
    return total


# ----- from a plan ------------------------------------------------------------------------------------


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


def _like_for_like_note(name: str, local: Workload, feas: Sequence[Any]) -> str:
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


def deadline_checked(o: Any, limit_hours: float) -> Any:
    """``o`` held to the training deadline the local machine was planned to (planner.solve.targets):
    an instance on which one run (its ``time.hours_per_job``, the same time model as the local
    side) takes more than ``limit_hours`` is not rented; it keeps its time, and says by how many
    hours it misses."""
    if not o.feasible or o.time is None or o.time.hours_per_job is None:
        return o
    h = float(o.time.hours_per_job)
    if h <= limit_hours * (1 + 1e-9):
        return o
    from dataclasses import replace

    return replace(o, feasible=False, hours_over_deadline=h - limit_hours,
                   why_not=f"misses the deadline: {h:,.2f} h per run, {h - limit_hours:,.2f} h over the "
                           f"{limit_hours:g} h deadline",
                   usd_per_local_hour=None, spot_usd_per_local_hour=None, cost_per_job_usd=None,
                   spot_cost_per_job_usd=None, usd_per_million_tokens=None, spot_usd_per_million_tokens=None)


def deadline_notes(options: Sequence[Any], limit: float | None, notes: list[str]) -> bool:
    """Append to ``notes`` how many instances that hold the workload miss its deadline ``limit`` and
    the closest; True when some do."""
    late = [o for o in options if o.hours_over_deadline is not None]
    if late and limit is not None:
        notes.append(f"{len(late)} instance(s) that hold it miss the {limit:g} h deadline and are not rented "
                     f"(the closest, {late[0].instance_id}, takes {late[0].time.hours_per_job:,.2f} h per run, "
                     f"{late[0].hours_over_deadline:,.2f} h over)")
    return bool(late)
