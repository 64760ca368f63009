"""Which rentable cloud instances can run a workload, by the same memory model as a purchase.

For each instance of ``cloud.yaml`` the workload is re-estimated on the instance's own GPUs:

- training runs data-parallel on all ``gpu_count`` cards (its tensor-parallel degree kept,
  so ``gpu_count`` must be a multiple of it); ZeRO shards over the new data-parallel degree;
- inference runs ``gpu_count // tp`` independent replicas of the workload's tp cards each.

An instance fits when the per-GPU need is at most what its GPU offers to processes less the
scenario's ``vram_headroom``, as for a purchase (CUDA's total: the instance's ``gpu_memory_usable``
when the catalog gives it, else the GPU's ``memory_usable``, less the driver's reservation; see
:func:`planner.catalog.gpus.cuda_total_from_usable`), the host need is at most the instance's RAM, and
the GPU runs the workload's 16-bit or 8-bit format (bf16 needs ``bf16: true``, fp8 weights need
``fp8: true``).

A scenario workload may come as several variants (strategy choices): the first that fits an
instance is used; when none fits, the reason shown is that of the variant closest to the one
the local plan runs (:func:`closest_variant`), not merely the first variant's.

:func:`cloud_fits` returns one :class:`InstanceFit` per instance (with the re-estimated
workload and estimate, for the time model); :func:`cloud_table` the same as a pandas
DataFrame whose columns (:data:`COLUMNS`) end in their unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from planner.solve.usages import capacity_bytes, capacity_for
from planner.catalog.cloud import CloudInstance
from planner.catalog.gpus import Gpu, cuda_total_from_usable
from planner.catalog.loader import Catalog
from planner.memory import Estimate, estimate
from planner.memory.vllm import for_gpu
from planner.core.units import GiB
from planner.workload.spec import Workload
from planner.workload.checks import flash_attention_2_gap, uses_flash_attention_2
from planner.core.clock import utc_today

#: DataFrame columns of :func:`cloud_table`: name -> unit and meaning.
COLUMNS: dict[str, str] = {
    "instance_id": "cloud.yaml id",
    "provider": "provider name",
    "instance": "provider's instance name",
    "region": "region of the price",
    "gpu_id": "gpus.yaml id",
    "gpu_count": "GPUs in the instance",
    "replicas": "independent copies of the workload the instance runs (inference); 1 for training",
    "gpu_memory_usable_bytes": "memory per GPU as the driver reports it (nvidia-smi total), bytes",
    "gpu_capacity_bytes": "what the workload may use per GPU: CUDA's total less vram_headroom, bytes",
    "per_gpu_need_bytes": "memory need per GPU on this instance, bytes",
    "host_memory_bytes": "instance RAM, bytes",
    "host_need_bytes": "host RAM need on this instance, bytes",
    "usd_per_hour": "on-demand price of the instance, USD per hour (list)",
    "spot_usd_per_hour": "spot price, USD per hour (list), NaN when none",
    "feasible": "bool: the workload runs on this instance",
    "why_not": "reason it does not ('' when feasible)",
    "as_of": "date of the price",
    "source": "where the price comes from",
}


@dataclass(frozen=True)
class InstanceFit:
    """One instance checked against one workload.

    Attributes:
        instance, gpu: the catalog records.
        workload: the workload as it runs on this instance (None when it cannot be re-targeted).
        estimate: its memory estimate on these GPUs (None when not computed).
        replicas: inference copies (gpu_count // tp); 1 for training.
        usable_bytes: memory per GPU as the driver reports it (nvidia-smi total).
        capacity_bytes: what the workload may use per GPU: CUDA's total less the headroom.
        host_need_bytes: host RAM need on this instance.
        feasible, why_not: the verdict and the reason when it does not fit.
    """

    instance: CloudInstance
    gpu: Gpu
    workload: Workload | None
    estimate: Estimate | None
    replicas: int
    usable_bytes: int
    host_need_bytes: int | None
    feasible: bool
    why_not: str
    capacity_bytes: int = 0


def retarget(workload: Workload, gpu_count: int,
             allowed_gpus: tuple[int, ...] | None = None) -> tuple[Workload | None, int, str]:
    """The workload as it runs on a machine of ``gpu_count`` GPUs.

    Training uses every card (``gpus = gpu_count``) unless ``allowed_gpus`` (the scenario's fixed
    counts, in order of preference) says otherwise: then the first allowed count that fits in the
    machine, the other cards idle. Inference runs ``gpu_count // tp`` replicas.

    Returns:
        (workload or None, replicas, reason when None).
    """
    if workload.task == "train":
        t = workload.train
        assert t is not None
        if allowed_gpus:
            usable = [g for g in allowed_gpus if g <= gpu_count and g % t.tp == 0]
            if not usable:
                return None, 0, f"the scenario's gpus {list(allowed_gpus)} do not fit {gpu_count} GPU(s)"
            n = usable[0]
        else:
            n = gpu_count
        if n % t.tp:
            return None, 0, f"{gpu_count} GPU(s) is not a multiple of tp={t.tp}"
        return replace(workload, train=replace(t, gpus=n), gpus_per_node=n), 1, ""
    i = workload.infer
    assert i is not None
    if gpu_count < i.tp or gpu_count % i.tp:
        return None, 0, f"{gpu_count} GPU(s) cannot hold replicas of tp={i.tp}"
    return workload, gpu_count // i.tp, ""


def format_supported(workload: Workload, gpu: Gpu) -> str:
    """'' when the GPU computes in the workload's format, else the reason."""
    if workload.task == "train":
        from planner.workload.recipes import RECIPES

        dtype = RECIPES[workload.train.recipe].dtype  # type: ignore[union-attr]
    else:
        w = workload.infer.weights  # type: ignore[union-attr]
        dtype = "fp8" if w == "fp8" else ("bf16" if w in ("bf16", "nf4", "int8", "int4-gptq", "int4-awq", "mxfp4")
                                          else w)
        if w == "fp8" and workload.infer.engine == "vllm" and not gpu.fp8:  # type: ignore[union-attr]
            dtype = "bf16"  # vLLM's weight-only FP8 (Marlin W8A16) on 16-bit GPUs
        if w in ("nf4", "int8", "int4-gptq", "int4-awq"):
            # quantized weights are dequantized to the model's 16-bit compute dtype; bf16 if the card has it
            dtype = "bf16" if gpu.bf16 else "fp16"
    attention = workload.train.attention if workload.train is not None else workload.infer.attention  # type: ignore[union-attr]
    engine = None if workload.train is not None else workload.infer.engine  # type: ignore[union-attr]
    gap = flash_attention_2_gap(gpu) if uses_flash_attention_2(attention, engine) else None
    if gap:
        return f"attention: flash (FlashAttention-2) cannot run on {gap}; use attention: sdpa"
    if dtype == "bf16" and not gpu.bf16:
        return f"{gpu.id} has no bf16 support (use an fp16 recipe)"
    if dtype == "fp8" and not gpu.fp8:
        return f"{gpu.id} has no fp8 support"
    return ""


def host_need_for_replicas(est: Estimate, replicas: int) -> int:
    """Host RAM for ``replicas`` copies: the OS baseline once, everything else per copy."""
    total = est.host_total_bytes
    if replicas <= 1:
        return total
    os_bytes = sum(c.bytes for c in est.host_components() if c.name == "OS baseline" and not c.phase)
    return os_bytes + replicas * (total - os_bytes)


def check_instance(workload: Workload | Sequence[Workload], instance: CloudInstance, catalog: Catalog,
                   overheads: Any = None, allowed_gpus: tuple[int, ...] | None = None,
                   headroom: float = 0.0, local: Workload | None = None) -> InstanceFit:
    """Re-estimate the workload on ``instance`` and say whether it fits (see the module docstring).

    ``workload`` may be a list of variants of one workload in order of preference (a scenario's
    strategy choices): the first that fits is used. When none fits, the reason given is that of
    the variant closest to ``local`` (the workload as the local plan runs it; default: the first
    variant) among those the instance's GPU count can hold (:func:`closest_variant`), so that a
    1-GPU instance is not dismissed for a tp=32 variant the plan never used. ``headroom`` is the
    fraction of each GPU kept free (the scenario's ``vram_headroom``).
    """
    variants = [workload] if isinstance(workload, Workload) else list(workload)
    misses: list[InstanceFit] = []
    for w in variants:
        fit = _check_one(w, instance, catalog, overheads, allowed_gpus, headroom)
        if fit.feasible:
            return fit
        misses.append(fit)
    assert misses
    if local is None or len(misses) == 1:
        return misses[0]
    k = closest_variant(variants, local, placeable=[f.workload is not None for f in misses])
    return misses[k]


#: Strategy fields compared by :func:`closest_variant` (a training variant's ``gpus`` is set
#: per machine, so it is left out).
_TRAIN_FIELDS = ("method", "recipe", "optimizer", "micro_batch", "seq_len", "tp", "zero", "offload_optimizer",
                 "offload_params", "checkpointing", "attention", "lora_rank")
_INFER_FIELDS = ("weights", "kv_dtype", "context", "concurrency", "tp", "engine", "gpu_memory_utilization",
                 "max_num_batched_tokens", "max_num_seqs", "attention")


def closest_variant(variants: Sequence[Workload], local: Workload, placeable: Sequence[bool] | None = None) -> int:
    """Index of the variant whose strategy differs from ``local``'s in the fewest fields
    (:data:`_TRAIN_FIELDS` or :data:`_INFER_FIELDS`); ties go to the earlier variant. Variants
    marked placeable (the instance's GPU count holds them) come before the others."""
    def distance(w: Workload) -> int:
        if w.task != local.task:
            return 1_000
        a, b = (w.train, local.train) if w.task == "train" else (w.infer, local.infer)
        names = _TRAIN_FIELDS if w.task == "train" else _INFER_FIELDS
        return sum(getattr(a, n) != getattr(b, n) for n in names)

    flags = list(placeable) if placeable is not None else [True] * len(variants)
    return min(range(len(variants)), key=lambda i: (not flags[i], distance(variants[i]), i))


def _check_one(workload: Workload, instance: CloudInstance, catalog: Catalog, overheads: Any,
               allowed_gpus: tuple[int, ...] | None, headroom: float) -> InstanceFit:
    gpu = catalog.gpu(instance.gpu)
    usable = instance.gpu_memory_usable_bytes or gpu.memory_usable_bytes
    cuda_total = cuda_total_from_usable(usable, gpu)
    cap = capacity_bytes(cuda_total, headroom)
    w2, replicas, why = retarget(workload, instance.gpu_count, allowed_gpus)
    if w2 is None:
        return InstanceFit(instance, gpu, None, None, 0, usable, None, False, why, cap)
    w2 = for_gpu(w2, gpu)  # vllm serve's defaults for this card, when the workload leaves them open
    cap = capacity_for(w2, cuda_total, headroom)  # vLLM workloads: gpu_memory_utilization is the margin
    est = estimate(w2, overheads)
    host = host_need_for_replicas(est, replicas)
    reasons = []
    fmt = format_supported(w2, gpu)
    if fmt:
        reasons.append(fmt)
    need = est.per_gpu_total_bytes
    if need > cap:
        margin = (f"{cuda_total / GiB:,.2f} GiB CUDA total less {headroom:.0%} headroom" if cap < cuda_total
                  else "its CUDA total")
        reasons.append(f"needs {need / GiB:,.2f} GiB per GPU, {gpu.id} offers {cap / GiB:,.2f} GiB ({margin})")
    if host > instance.memory_bytes:
        reasons.append(f"needs {host / GiB:,.2f} GiB host RAM, the instance has {instance.memory_bytes / GiB:,.2f} GiB")
    return InstanceFit(instance, gpu, w2, est, replicas, usable, host, not reasons, "; ".join(reasons), cap)


def spot_range(instance: CloudInstance) -> tuple[float, float] | None:
    """The spot price range across the region's availability zones, (low, high) USD per hour, as
    the instance's cloud.yaml ``spot_usd_per_hour_range`` gives it; None when it gives none.
    Raises nothing (the catalog loader validated the range)."""
    return instance.spot_usd_per_hour_range


def spot_basis(instance: CloudInstance) -> str:
    """Which spot figure the catalog keeps, in words ('' when the instance has no spot price).

    cloud.yaml keeps the LOW end of the spot prices seen across the zones of the region (its
    header), so a renter in another zone pays up to the top of the range. Where the entry gives the
    range (``spot_usd_per_hour_range``) it is stated, and a kept price at the range's upper end is
    said to be that; without a range nothing is claimed about which zone the figure is (a user's
    overlay may keep any).
    """
    spot = instance.spot_usd_per_hour
    if spot is None:
        return ""
    rng = spot_range(instance)
    if rng is None:
        return "the catalog's one spot figure, no zone range recorded"
    lo, hi = rng
    if math.isclose(spot, lo, rel_tol=1e-9) and lo < hi:
        return f"the lowest zone's, of ${lo:g}-{hi:g}/h across the region's zones"
    if math.isclose(spot, hi, rel_tol=1e-9) and lo < hi:
        return f"the upper end of ${lo:g}-{hi:g}/h across zones, not the lowest zone's"
    return f"${spot:g}/h, within ${lo:g}-{hi:g}/h across the region's zones"


def select_instances(catalog: Catalog, *, providers: tuple[str, ...] = (),
                     instances: tuple[str, ...] = (), regions: tuple[str, ...] = ()) -> list[CloudInstance]:
    """The catalog's instances, kept to ``providers``, ``instances`` and ``regions`` when given
    (catalog order)."""
    out = list(catalog.instances)
    if providers:
        out = [i for i in out if i.provider in providers]
    if instances:
        out = [i for i in out if i.id in instances]
    if regions:
        out = [i for i in out if i.region in regions]
    return out


#: A cloud row dated more than this many months before today is flagged (its prices may have changed).
STALE_CLOUD_MONTHS = 12


def stale_as_of(as_of: str, today: Any = None) -> bool:
    """Whether a cloud price dated ``as_of`` (YYYY-MM[-DD]) lies more than :data:`STALE_CLOUD_MONTHS`
    months before ``today`` (a date; default the machine's clock); False for an unreadable date."""
    import datetime as dt

    d = today or utc_today()
    try:
        y, m = (int(x) for x in as_of.split("-")[:2])
    except ValueError:
        return False
    return d.year * 12 + d.month - (y * 12 + m) > STALE_CLOUD_MONTHS


def stale_instances(instances: Sequence[CloudInstance], today: Any = None) -> list[CloudInstance]:
    """The instances whose ``as_of`` lies more than :data:`STALE_CLOUD_MONTHS` months before ``today``."""
    return [i for i in instances if stale_as_of(i.as_of, today)]


def stale_text(instances: Sequence[CloudInstance]) -> str:
    """One sentence naming stale rows by provider and date ('' when none)."""
    if not instances:
        return ""
    groups: dict[tuple[str, str], list[str]] = {}
    for i in instances:
        groups.setdefault((i.provider, i.as_of), []).append(i.id)
    parts = [f"{len(ids)} {prov} row(s) of {as_of} ({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})"
             for (prov, as_of), ids in groups.items()]
    return (f"cloud prices dated more than {STALE_CLOUD_MONTHS} months ago: " + "; ".join(parts)
            + "; they may have changed: re-import the provider's current SkyPilot file (planner catalog "
              "import-skypilot FILE --out DIR) and pass --catalog DIR")


def cloud_fits(workload: Workload | Sequence[Workload], catalog: Catalog, *, providers: tuple[str, ...] = (),
               instances: tuple[str, ...] = (), regions: tuple[str, ...] = (), overheads: Any = None,
               allowed_gpus: tuple[int, ...] | None = None, headroom: float = 0.0,
               local: Workload | None = None) -> list[InstanceFit]:
    """Every selected instance checked against ``workload`` (or its variants), in catalog order;
    ``headroom`` is the fraction of each GPU kept free (the scenario's ``vram_headroom``);
    ``local``: the workload as the local plan runs it, whose closest variant's reason is given
    when none fits (:func:`check_instance`)."""
    return [check_instance(workload, inst, catalog, overheads, allowed_gpus, headroom, local)
            for inst in select_instances(catalog, providers=providers, instances=instances, regions=regions)]


def fits_to_frame(fits: list[InstanceFit]):
    """A DataFrame with :data:`COLUMNS`, feasible rows first, then by on-demand price and id."""
    import pandas as pd

    rows = []
    for f in fits:
        i = f.instance
        rows.append({
            "instance_id": i.id, "provider": i.provider, "instance": i.instance, "region": i.region,
            "gpu_id": i.gpu, "gpu_count": i.gpu_count, "replicas": f.replicas,
            "gpu_memory_usable_bytes": f.usable_bytes,
            "gpu_capacity_bytes": f.capacity_bytes,
            "per_gpu_need_bytes": f.estimate.per_gpu_total_bytes if f.estimate else None,
            "host_memory_bytes": i.memory_bytes, "host_need_bytes": f.host_need_bytes,
            "usd_per_hour": i.usd_per_hour,
            "spot_usd_per_hour": i.spot_usd_per_hour if i.spot_usd_per_hour is not None else float("nan"),
            "feasible": f.feasible, "why_not": f.why_not, "as_of": i.as_of, "source": i.source,
        })
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    if not df.empty:
        df = df.sort_values(["feasible", "usd_per_hour", "instance_id"], ascending=[False, True, True],
                            kind="mergesort").reset_index(drop=True)
    return df


def cloud_table(workload: Workload | Sequence[Workload], catalog: Catalog, *, providers: tuple[str, ...] = (),
                instances: tuple[str, ...] = (), overheads: Any = None, allowed_gpus: tuple[int, ...] | None = None,
                headroom: float = 0.0):
    """:func:`cloud_fits` as a DataFrame (:data:`COLUMNS`)."""
    return fits_to_frame(cloud_fits(workload, catalog, providers=providers, instances=instances,
                                    overheads=overheads, allowed_gpus=allowed_gpus, headroom=headroom))
