"""Rent or buy: the cloud price at which the verdict flips.

Over the ownership period at h busy hours a month (planner.cost.compare) the local machine
costs its TCO and renting costs ``c x busy hours``, with c the cloud dollars per local busy hour
(the mix of each workload's cheapest instance: share x price x (1 - discount) x k). Both are over
the same busy hours, so owning is the cheaper verdict exactly when::

    c > local cost per busy hour L = TCO / busy hours   (planner.cost.tco.local_usd_per_busy_hour)

c is linear in the instance prices, and scaling every cloud price by one factor f keeps each
workload's cheapest instance the cheapest, so the verdict flips at ``f = L / c``: the break-even
cloud price per local busy hour is L, and each workload's cheapest instance breaks even at its
price x f (USD per instance-hour). A single instance's price moved alone can stop it being the
cheapest before the verdict flips, so the per-instance figures are stated for all prices moving
together (the factor), which is exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class VerdictFlip:
    """Where rent-or-buy turns, for on-demand or spot prices.

    Attributes:
        basis: ``on-demand`` or ``spot``.
        cloud_usd_per_local_hour: c today, USD per local busy hour.
        flip_usd_per_local_hour: L, the local cost per busy hour: c at which the verdict flips.
        factor: L / c, the factor on every cloud price that flips the verdict (> 1: cloud is
            cheaper today and must get dearer by that much for owning to win; < 1 the reverse).
        verdict: ``local`` or ``cloud``: the cheaper over the period today (``equal`` on a tie).
        instances: per workload (name, instance id, its price today, its break-even price), USD/h.
    """

    basis: str
    cloud_usd_per_local_hour: float
    flip_usd_per_local_hour: float
    factor: float
    verdict: str
    instances: tuple[tuple[str, str, float, float], ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["instances"] = [{"workload": w, "instance_id": i, "usd_per_hour": p, "flip_usd_per_hour": f}
                          for w, i, p, f in self.instances]
        return d

    def sentence(self) -> str:
        """'on-demand: owning wins while the cloud costs more than $4.21 per local busy hour (now $6.10: ...)'."""
        now = {"local": "owning is cheaper", "cloud": "renting is cheaper", "equal": "a tie"}[self.verdict]
        pct = (self.factor - 1.0) * 100.0
        move = f"{'up' if pct >= 0 else 'down'} {abs(pct):,.1f} %"
        each = "; ".join(f"{w}: {i} ${p:,.4g}/h -> ${f:,.4g}/h" for w, i, p, f in self.instances)
        return (f"{self.basis}: the verdict flips at ${self.flip_usd_per_local_hour:,.4f} per local busy hour (now "
                f"${self.cloud_usd_per_local_hour:,.4f}: {now}), i.e. every cloud price x {self.factor:,.4f} "
                f"({move})" + (f"; {each}" if each else ""))


def verdict_flip(*, basis: str, local_usd_per_busy_hour: float, cloud_usd_per_local_hour: float | None,
                 cheapest: list[tuple[str, str, float]]) -> VerdictFlip | None:
    """The rent-or-buy flip (module docstring).

    Args:
        basis: ``on-demand`` or ``spot``.
        local_usd_per_busy_hour: L, USD (finite, >= 0).
        cloud_usd_per_local_hour: c, USD; None (no comparison) or <= 0 gives None.
        cheapest: per workload (name, its cheapest instance's id, that instance's price USD/h).

    Returns:
        A :class:`VerdictFlip`, or None when there is no cloud price to compare.
    """
    c = cloud_usd_per_local_hour
    if c is None or not c > 0 or local_usd_per_busy_hour != local_usd_per_busy_hour:
        return None
    L = float(local_usd_per_busy_hour)
    f = L / c
    verdict = "equal" if abs(L - c) <= 1e-9 * max(L, c) else ("local" if c > L else "cloud")
    return VerdictFlip(basis, float(c), L, f, verdict, tuple((w, i, float(p), float(p) * f) for w, i, p in cheapest))


def comparison_flips(comp: Any) -> list[VerdictFlip]:
    """The on-demand and spot flips of a :class:`planner.cost.compare.Comparison` (those it compares)."""
    out = []
    od = [(wc.name, o.instance_id, o.usd_per_hour) for wc in comp.workloads
          for o in [wc.option(wc.best_on_demand)] if o is not None]
    x = verdict_flip(basis="on-demand", local_usd_per_busy_hour=comp.local_usd_per_hour,
                     cloud_usd_per_local_hour=comp.cloud_usd_per_local_hour, cheapest=od)
    if x is not None:
        out.append(x)
    sp = []
    for wc in comp.workloads:
        o, s = wc.option(wc.best_on_demand), wc.option(wc.best_spot)
        # the spot mix takes on-demand where that is cheaper per local hour (planner.cost.compare._mix_spot)
        if s is not None and s.spot_usd_per_local_hour is not None and (
                o is None or s.spot_usd_per_local_hour < o.usd_per_local_hour):
            sp.append((wc.name, s.instance_id + " (spot)", s.spot_usd_per_hour))
        elif o is not None:
            sp.append((wc.name, o.instance_id, o.usd_per_hour))
    x = verdict_flip(basis="spot", local_usd_per_busy_hour=comp.local_usd_per_hour,
                     cloud_usd_per_local_hour=comp.spot_usd_per_local_hour, cheapest=sp)
    if x is not None:
        out.append(x)
    return out


__all__ = ["VerdictFlip", "comparison_flips", "verdict_flip"]
