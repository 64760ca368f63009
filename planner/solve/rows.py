"""Per-row words and figures the candidate table's explanations use: why a GPU and a platform can
never combine (no price, form factor, cooling), what a summary row stands for, and the decode speed
of one row for the speed rule (planner.speed.inference.decode_step).

The candidate set is passed in (duck-typed: its scenario, hardware, usages and ``too_small`` memo),
so this module imports nothing of planner.solve.candidates.
"""

from __future__ import annotations

from typing import Any

from planner.catalog.gpus import Gpu
from planner.catalog.platforms import Platform
from planner.catalog.ram import Dimm
from planner.core.units import GiB
from planner.solve.hardware import SUMMARY_NAMES
from planner.solve.usages import Usage, capacity_bytes, takes_headroom
from planner.speed.constants import gemm_efficiency
from planner.speed.inference import decode_step
from planner.speed.traffic import ram_bandwidth
from planner.workload.spec import Workload

CandidateSet = Any  # planner.solve.candidates.CandidateSet (not imported: it imports this module)


def _gib(n: float) -> str:
    return f"{n / GiB:,.2f} GiB"


def _fp8_compute(w: Workload) -> bool:
    """The workload's matmuls run at the fp8 rate (fp8 weights, or a scheme with fp8 activations), as
    planner.speed.timing takes it."""
    i = w.infer
    return i is not None and (i.weights == "fp8" or (i.scheme is not None and i.scheme.activations == "fp8"))


def _slowest(tps: Any, rows: int) -> Any:
    """Per row, the least decode tokens/s over the workloads (NaN where none is inference)."""
    import numpy as np

    if tps is None or tps.size == 0:
        return np.full(rows, np.nan)
    low = np.where(np.isnan(tps), np.inf, tps).min(axis=1)
    return np.where(np.isinf(low), np.nan, low)


def row_decode_tokens_per_s(u: Usage, gpu: Gpu, platform: Platform, dimm: Dimm | None) -> float | None:
    """Decode tokens/s per sequence of usage ``u`` on ``gpu`` with ``platform``'s RAM channels at
    ``dimm``'s rated speed: the speed rule's figure for one row (None for training)."""
    if u.decode is None:
        return None
    fp8 = _fp8_compute(u.workload)
    fp8 = bool(fp8 and getattr(gpu, "fp8_tflops", None))
    tflops = float(gpu.fp8_tflops) if fp8 else float(gpu.bf16_tflops)
    host_bw = ram_bandwidth(platform.memory_channels, dimm.speed_mts) if dimm is not None else 1.0
    w_s, kv_s, host_s, comp_s, fixed_s, ar_s = decode_step(
        u.decode, u.workload, gpu_bandwidth=gpu.memory_bandwidth_bytes_per_s, host_bandwidth=host_bw,
        peak_flops=tflops * 1e12, gemm_eff=gemm_efficiency(gpu, "fp8" if fp8 else "bf16").value,
        interconnect=float(getattr(gpu, "quoted_link_bytes_per_s", 0) or 0))
    return 1.0 / (max(w_s + kv_s + host_s, comp_s) + fixed_s + ar_s)


def unpriced_reason(gpu: Gpu, used_ok: bool) -> str:
    """Why ``gpu`` (its price chosen by the scenario, planner.catalog.prices) has no price a plan
    pays: a cloud-only part, or a discontinued card whose launch list price ``price: street`` does not
    pay, with what would buy it (``used_ok: true`` and its used price, or an overlaid quote)."""
    from planner.catalog.prices import unbought_new, used_price

    if not gpu.discontinued:
        return f"{gpu.id} has no purchase price in the catalog"
    msrp = unbought_new(gpu.prices)
    used = used_price(gpu.prices)
    head = f"{gpu.id} is out of production (gpus.yaml discontinued)"
    old = (f": price: street does not pay its launch list price (${msrp.usd:,.2f} of {msrp.as_of}), which no seller "
           "asks now, and the catalog has no dated street price of a new unit") if msrp else \
        ": the catalog has no dated street price of a new unit"
    if used is not None and not used_ok:
        tail = f"; set used_ok: true to buy one used ({used.label()}, ${used.usd:,.2f})"
    elif used is None:
        tail = "; nor a used price: overlay a dated quote (--catalog DIR) to buy one"
    else:
        tail = ""
    return head + old + tail


def too_small_text(cs: CandidateSet, gpu: Gpu) -> str:
    """'' when ``gpu`` could hold every workload of ``cs`` on some card count, else '; even bought
    it would not hold <workload>: ...' with that workload's least need per GPU (over the usages
    evaluated, the vLLM ones of this card's class) and the card's capacity (CUDA total less the
    scenario's headroom where it applies, :func:`planner.solve.usages.capacity_for`)."""
    from planner.memory.vllm import is_large_card

    card = "large" if is_large_card(gpu) else "small"
    h = cs.hardware.headroom
    # capacity_for has two answers for one card, with the headroom and without (takes_headroom)
    caps = {True: capacity_bytes(gpu.cuda_total_bytes, h), False: capacity_bytes(gpu.cuda_total_bytes, 0.0)}
    for sw, usages in zip(cs.scenario.workloads, cs.usages):
        mine = [u for u in usages if u.vllm_card in (None, card)]
        if not mine:
            continue
        short = [(u.need_bytes - caps[takes_headroom(u.workload)], u) for u in mine]
        gap, u = min(short, key=lambda x: x[0])
        if gap > 0:
            cap = caps[takes_headroom(u.workload)]
            return (f"; even bought it would not hold {sw.name}: at least {_gib(u.need_bytes)} per GPU "
                    f"({u.gpus} GPU{'s' if u.gpus > 1 else ''}), {gpu.id} offers {_gib(cap)}")
    return ""


def _never_reason(cs: CandidateSet, b: str, gpu: Gpu, plat: Platform) -> str:
    """Why ``gpu`` and ``plat`` can never combine (binding price, form_factor or cooling)."""
    hw = cs.hardware
    if b == "price":
        # bought new or used, it must still hold the workloads: a card too small for them says so, and
        # ``used_ok: true`` (or a quote) is then no way to a plan
        small = cs.too_small.get(gpu.id)
        if small is None:
            small = cs.too_small[gpu.id] = too_small_text(cs, gpu)
        return unpriced_reason(gpu, cs.scenario.constraints.used_ok) + small
    if b == "form_factor":
        if plat.fixed_gpu is not None and gpu.form_factor in plat.form_factors:
            return (f"{plat.id} is a baseboard that carries exactly {plat.fixed_gpu_count} x {plat.fixed_gpu}, "
                    f"not {gpu.id}")
        part = "a PCIe card" if gpu.form_factor == "pcie" else f"an {gpu.form_factor.upper()} module"
        if not hw.form_factor_carried[gpu.id]:
            others = hw.carriers.get(gpu.id, ())
            if others:
                return (f"{gpu.id} is {part} and none of the allowed platforms (constraints.allowed_platforms) "
                        f"carries it; allow one that does: {', '.join(others)}")
            return (f"{gpu.id} is {part} and no platform in the catalog carries it; add one (e.g. its "
                    "baseboard server, with price and source) in a catalog overlay, --catalog DIR "
                    "(catalog/README.md)")
        return (f"{gpu.id} is {part}; {plat.id} takes "
                + (f"only its {plat.fixed_gpu_count} x {plat.fixed_gpu}" if plat.fixed_gpu else
                   " and ".join(plat.form_factors) + " GPUs"))
    # cooling
    kind = {"passive": "passively cooled (no fan: it needs a server's front-to-back airflow)",
            "open-air": "an open-air card (its fans blow into the case)",
            "blower": "a blower card"}.get(gpu.cooling or "", f"cooled {gpu.cooling}")
    others = hw.allowed_coolers[gpu.id]
    elsewhere = [x for x in hw.coolers.get(gpu.id, ()) if x not in others]
    if others:
        tail = f"; platforms that cool it: {', '.join(others)}"
    elif elsewhere:
        tail = (f"; none of the allowed platforms (constraints.allowed_platforms) cools it; allow one that does: "
                f"{', '.join(elsewhere)}")
    else:
        tail = ("; no platform in the catalog cools it (overlay gpu_cooling or the card's cooling if yours "
                "differs, --catalog DIR)")
    return (f"{gpu.id} is {kind}; {plat.id} cools only {' and '.join(plat.gpu_cooling or ())} cards" + tail)


def _summary_tail(cs: CandidateSet, b: str, gpu: Gpu, plat: Platform, count: int) -> str:
    """What a summary row adds to its sentence: the other GPUs (form_factor, cooling) it stands for,
    the first :data:`planner.solve.hardware.SUMMARY_NAMES` in the catalog's order and the
    rest counted; '' for a row that stands for one pair, and for a GPU without a price (whose
    sentence names no platform: it holds for all of them)."""
    if count <= 1 or b == "price":  # a price says nothing of the platform: the row holds on every one
        return ""
    names = cs.hardware.summarised.get((b, plat.id), ())[1:SUMMARY_NAMES + 1]
    more = count - 1 - len(names)
    listed = ", ".join(names) + (f" and {more:,} more" if more > 0 else "")
    return f" (the same for {count - 1:,} other GPU{'s' if count > 2 else ''} on {plat.id}: {listed})"


def rows_decode_tokens_per_s(u: Usage, a: dict[str, Any], idx: Any) -> Any:
    """Decode tokens/s per sequence of usage ``u`` on the hardware rows ``idx`` (numpy, from the rows'
    bandwidths, peak rates and GEMM efficiencies in ``a``: planner.solve.hardware's arrays); NaN for
    training. The same step as :func:`row_decode_tokens_per_s` (planner.speed.inference.decode_step)."""
    import numpy as np

    if u.decode is None:
        return np.full(len(idx), np.nan)
    fp8 = _fp8_compute(u.workload)
    w_s, kv_s, host_s, comp_s, fixed_s, ar_s = decode_step(
        u.decode, u.workload, gpu_bandwidth=a["gpu_bw"][idx], host_bandwidth=np.maximum(a["host_bw"][idx], 1.0),
        peak_flops=a["fp8_tflops" if fp8 else "bf16_tflops"][idx] * 1e12, gemm_eff=a["gemm_eff_fp8" if fp8 else "gemm_eff"][idx],
        interconnect=a["interconnect"][idx])
    return 1.0 / (np.maximum(w_s + kv_s + host_s, comp_s) + fixed_s + ar_s)
def _target_columns(scenario: Any, ck: Any, rows: int) -> dict[str, Any]:
    """The deadline and SLO columns: the training workload with a deadline that comes closest to it
    (or furthest past it), and the first inference workload with an slo:, per row."""
    import numpy as np

    out = {k: np.full(rows, np.nan) for k in ("deadline_hours", "run_hours", "target_ttft_s", "ttft_s",
                                              "target_tpot_s", "tpot_s")}
    limits = np.array([sw.deadline_hours if sw.task == "train" and sw.deadline_hours is not None else np.nan
                       for sw in scenario.workloads], dtype=float)
    if rows and np.isfinite(limits).any():
        share = np.where(np.isfinite(limits), ck.hours / np.where(np.isfinite(limits), limits, 1.0), -np.inf)
        share = np.where(np.isnan(share), -np.inf, share)
        d0 = int(np.nonzero(np.isfinite(limits))[0][0])
        w = np.where(np.isinf(share).all(axis=1), d0, share.argmax(axis=1))
        out["deadline_hours"] = limits[w]
        out["run_hours"] = ck.hours[np.arange(rows), w]
    first = next((i for i, sw in enumerate(scenario.workloads) if sw.task == "infer" and sw.slo is not None), None)
    if rows and first is not None:
        slo = scenario.workloads[first].slo
        out["target_ttft_s"] = np.full(rows, np.nan if slo.ttft_s is None else slo.ttft_s)
        out["target_tpot_s"] = np.full(rows, np.nan if slo.tpot_s is None else slo.tpot_s)
        tpot = ck.tpot[:, first]  # a replica that cannot keep up: blank, never inf
        out["ttft_s"], out["tpot_s"] = ck.ttft[:, first].copy(), np.where(np.isinf(tpot), np.nan, tpot)
    return out


def _hw_row(cs: Any, r: Any) -> int:
    """The hardware row (index into ``cs.hardware.arrays``) of a table row: the row with its GPU,
    platform, cards, nodes and RAM configuration."""
    import numpy as np

    a, hw = cs.hardware.arrays, cs.hardware
    gi = [g.id for g in hw.gpus].index(r["gpu_id"])
    pi = [p.id for p in hw.platforms].index(r["platform_id"])
    hit = np.nonzero((a["gpu_i"] == gi) & (a["plat_i"] == pi) & (a["cards"] == int(r["cards_per_node"]))
                     & (a["nodes"] == int(r["nodes"])))[0]
    ram_ids = np.array([x.dimm.id for x in hw.ram] + [""], dtype=object)[a["ram_i"][hit]]
    same = hit[(ram_ids == r["dimm_id"]) & (a["dimm_count"][hit] == int(r["dimm_count"]))]
    return int(same[0] if same.size else hit[0])


