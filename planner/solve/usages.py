"""Usages: the ways a workload of a scenario runs, each a variant on a given number of GPUs.

:func:`usages_for` lists them in the scenario's order of preference and runs the memory model once
per (variant, GPU count), because memory depends on the strategy and the number of GPUs, not on the
GPU model or platform; each :class:`Usage` carries the estimate, the hardware features its
precision needs (:func:`precision_needs`, :func:`has_feature`) and what a decode step reads. Also
here: the capacity a workload is held against on one card (:func:`capacity_bytes`,
:func:`capacity_for`, :func:`takes_headroom`). planner.solve.candidates checks the usages against the
hardware rows.

Importing this module does no work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from fractions import Fraction

from planner.catalog.gpus import Gpu
from planner.memory import Estimate, estimate
from planner.memory.overheads import RuntimeOverheads
from planner.speed.traffic import DecodeReads, decode_reads
from planner.memory.vllm import needs_serve_defaults, with_serve_defaults
from planner.solve.scenario import ScenarioWorkload
from planner.workload.inference import llamacpp_backend
from planner.workload.checks import flash_attention_2_gap, uses_flash_attention_2
from planner.workload.spec import Workload


def takes_headroom(workload: Workload) -> bool:
    """Whether the planning headroom (``vram_headroom``) applies to ``workload``: to every workload
    but an ``engine: vllm`` one, whose ``gpu_memory_utilization`` already keeps its share of the card
    free (vLLM pre-allocates its KV cache to that fraction and sizes nothing beyond it)."""
    i = workload.infer
    return not (i is not None and i.engine == "vllm")


def capacity_for(workload: Workload, cuda_total_bytes: int, headroom: float) -> int:
    """:func:`capacity_bytes` with the headroom where it applies (:func:`takes_headroom`)."""
    return capacity_bytes(cuda_total_bytes, headroom if takes_headroom(workload) else 0.0)


def capacity_bytes(cuda_total_bytes: int, headroom: float) -> int:
    """What a workload may use on one GPU, in bytes: ``total - ceil(total x headroom)``.

    ``cuda_total_bytes`` is what the card offers to processes (CUDA's total,
    :attr:`planner.catalog.gpus.Gpu.cuda_total_bytes`): nvidia-smi's total less the driver's reservation,
    which no process can allocate. The headroom is read as the decimal the user wrote (0.05 is
    exactly 1/20), so the result is exact and a need equal to it fits.
    """
    h = Fraction(Decimal(repr(float(headroom))))
    return cuda_total_bytes - math.ceil(cuda_total_bytes * h)


# ----- usages: a workload variant on a given number of GPUs -----------------------------------

#: The largest byte count the candidate table holds (int64 columns): 2^62 B, 4 EiB, past every card and
#: machine; a need beyond it (an extreme micro-batch, a tiny gpu_memory_utilization) is held as this bound.
TABLE_MAX_BYTES = 2**62

@dataclass(frozen=True)
class Usage:
    """One way a workload runs: a variant on ``gpus`` GPUs, ``gpus_per_node`` of them per node.

    Attributes:
        workload_index, variant_index: positions in the scenario.
        gpus: total GPUs; gpus_per_node: GPUs per node (== gpus on one node).
        tp: tensor-parallel degree (inside one node).
        workload: the variant with this card count.
        estimate: the memory model's result for it.
        need_bytes: per-GPU peak (``estimate.per_gpu_total_bytes``).
        host_bytes: host RAM peak per node (``estimate.host_total_bytes``).
        offload: states or parameters in host RAM.
        needs: hardware features the precision needs ('bf16', 'fp8', 'int8').
        label: the strategy in words, with the GPU count.
        vllm_card: for an ``engine: vllm`` workload that leaves max_num_batched_tokens or
            max_num_seqs to ``vllm serve``: 'large' (the usage applies to cards that get the
            large-card defaults) or 'small' (all other cards); None when the card does not matter.
        decode: inference: what a decode step reads and computes (for the speed rule).
        key: :func:`usages_for`'s memo key of this usage (the variant as written less its name, the
            card counts, the vLLM card class): two usages of one run with the same key differ only
            in the workload's name (None for a usage made elsewhere).
        gpu_ids: under an ``slo: {requests_per_s}`` load, the GPUs on which a replica holds this
            usage's sequences (planner.solve.inflight.at_load: the Little's-law fixed point on the
            card, or the most its memory holds); the usage applies to their rows only. None: every GPU.
        exact: the usage applies only to machines of exactly ``gpus_per_node`` cards x ``gpus /
            gpus_per_node`` nodes (a served workload with an ``slo:``, whose replicas fill the machine:
            :func:`fill`); False: one node's usage applies to every row of at least ``gpus`` cards.
    """

    workload_index: int
    variant_index: int
    gpus: int
    gpus_per_node: int
    tp: int
    workload: Workload = field(compare=False, repr=False)
    estimate: Estimate = field(compare=False, repr=False)
    need_bytes: int = 0
    host_bytes: int = 0
    offload: bool = False
    needs: tuple[str, ...] = ()
    label: str = ""
    vllm_card: str | None = None
    decode: DecodeReads | None = field(default=None, compare=False, repr=False)
    key: tuple | None = field(default=None, compare=False, repr=False)
    gpu_ids: frozenset[str] | None = None
    exact: bool = False


def fill(cards: int, nodes: int, tp: int, users: int) -> tuple[int, int]:
    """(replicas, GPUs they use per node) of a served workload on a machine of ``nodes`` nodes of
    ``cards`` cards: replicas of ``tp`` GPUs fill every node, floor(cards / tp) on each, so no card
    bought sits idle that a replica could use (a replica stays in one node); at most ``users``
    replicas (a replica holds at least one user). The cards left, ``cards x nodes - tp x replicas``,
    are idle, and the plan says so. (0, 0) when ``tp`` > ``cards``."""
    per = cards // tp
    reps = min(per * nodes, max(users, 1))
    return reps, min(per, reps) * tp


#: The feature an ``engine: llama.cpp`` workload needs: a GPU llama.cpp has a ggml backend for
#: (planner.workload.inference.llamacpp_backend; not Intel Gaudi).
LLAMACPP_FEATURE = "llamacpp"


#: The feature an ``attention: flash`` workload needs (training, or engine hf): a GPU flash-attn runs on
#: (planner.workload.checks.flash_attention_2_gap: NVIDIA compute capability 8.0 or more, or AMD ROCm).
FLASH_FEATURE = "flash_attention_2"


def has_feature(gpu: Gpu, feature: str) -> bool:
    """Whether ``gpu`` has a feature of :func:`precision_needs` ('bf16', 'fp8', 'int8', 'llamacpp',
    'flash_attention_2')."""
    if feature == LLAMACPP_FEATURE:
        return llamacpp_backend(gpu) is not None
    if feature == FLASH_FEATURE:
        return flash_attention_2_gap(gpu) is None
    return bool(getattr(gpu, feature))


def precision_needs(workload: Workload) -> tuple[str, ...]:
    """Hardware features a workload's dtypes need: 'bf16', 'fp8', 'int8' (fp16/fp32 need none), and
    'llamacpp' (a ggml backend for the GPU) for an ``engine: llama.cpp`` workload, 'flash_attention_2' for
    ``attention: flash`` (training, or engine hf: :data:`FLASH_FEATURE`)."""
    from planner.workload.recipes import RECIPES

    needs: set[str] = set()
    if workload.train is not None:
        dtype = RECIPES[workload.train.recipe].dtype
        if dtype in ("bf16", "fp8"):
            needs.add("bf16")
        if dtype == "fp8":
            needs.add("fp8")  # FP8 tensor cores (Hopper, Ada, Blackwell): Transformer Engine / torchao float8
        if workload.train.load_in_8bit:
            needs.add("int8")  # bitsandbytes' int8 matmul (LLM.int8)
        if uses_flash_attention_2(workload.train.attention, None):
            needs.add(FLASH_FEATURE)
    else:
        i = workload.infer
        assert i is not None
        from planner.workload.inference import dtype_feature, weights_feature_dtype

        for d in (weights_feature_dtype(i), i.kv_dtype):
            feature = dtype_feature(d, i.engine)  # vLLM runs fp8 on 16-bit GPUs too (Marlin W8A16)
            if feature:
                needs.add(feature)
        if i.engine == "llama.cpp":
            needs.add(LLAMACPP_FEATURE)
        if uses_flash_attention_2(i.attention, i.engine):
            needs.add(FLASH_FEATURE)
    return tuple(sorted(needs))


def with_gpus(workload: Workload, gpus: int, gpus_per_node: int) -> Workload:
    """The workload on ``gpus`` GPUs, ``gpus_per_node`` per node (training), or at tp=gpus (inference).

    Its warnings are those of the new count (:attr:`planner.workload.spec.Workload.warnings` derives
    the GPU-count ones, e.g. ZeRO over one data-parallel rank, from the options).
    """
    if workload.train is not None:
        return replace(workload, train=replace(workload.train, gpus=gpus),
                       gpus_per_node=gpus_per_node if gpus_per_node < gpus else None)
    assert workload.infer is not None
    return replace(workload, infer=replace(workload.infer, tp=gpus), gpus_per_node=None)


def with_replicas(workload: Workload, tp: int, replicas: int, gpus_per_node: int) -> Workload:
    """An inference workload served by ``replicas`` identical replicas of ``tp`` GPUs that share its
    users: each replica holds ceil(concurrency / replicas) sequences (``concurrency`` is then per
    replica, as the memory and speed models read it); ``gpus_per_node`` GPUs per machine."""
    i = workload.infer
    assert i is not None
    per = -(-i.concurrency // replicas)
    gpus = tp * replicas
    return replace(workload, infer=replace(i, tp=tp, replicas=replicas, concurrency=per),
                   gpus_per_node=gpus_per_node if gpus_per_node < gpus else None)


def _renamed(obj: object, name_field: str, name: str, plain: dict[type, bool]):
    """``dataclasses.replace(obj, **{name_field: name})``, without calling the class's ``__init__``
    again: a copy of ``obj``'s attributes with the one field set. The same object as replace makes
    for a frozen dataclass whose ``__init__`` only stores its arguments (no ``__post_init__``, every
    field ``init=True``, a ``__dict__``), as :class:`planner.workload.spec.Workload` and
    :class:`planner.memory.Estimate` are; any other class goes through ``replace``. ``plain``: the
    caller's memo of that test by class (a dict it keeps for one call). About 1 us instead of 10:
    :func:`usages_for` renames every usage of a workload repeated under other names."""
    cls = type(obj)
    ok = plain.get(cls)
    if ok is None:
        ok = plain[cls] = (not hasattr(cls, "__post_init__") and hasattr(obj, "__dict__")
                           and all(f.init for f in fields(obj)))  # type: ignore[arg-type]
    if not ok:
        return replace(obj, **{name_field: name})  # type: ignore[type-var]
    new = object.__new__(cls)
    new.__dict__.update(obj.__dict__)
    object.__setattr__(new, name_field, name)  # a frozen dataclass refuses setattr
    return new


def usages_for(sw: ScenarioWorkload, index: int, *, node_shapes: Sequence[tuple[int, int]], max_cards_per_node: int,
               overheads: RuntimeOverheads | None = None, cache: dict | None = None, gpus: Sequence[Gpu] = (),
               headroom: float = 0.0) -> list[Usage]:
    """Every way workload ``sw`` can run on the machines enumerated, in order of preference.

    Args:
        sw: the scenario workload.
        index: its position in the scenario.
        node_shapes: the (cards per node, nodes) pairs of the candidate rows.
        max_cards_per_node: the most cards any node has.
        overheads: runtime overheads for the memory model (default assumptions when None).
        cache: optional dict memoising, within one run, the memory model's result by (variant as
            written less its name, gpus, gpus_per_node, vLLM card class): workloads that differ
            only in their names (a scenario that repeats a workload under other names) are
            estimated once; the estimate depends on the name only through ``workload_name``,
            which a hit replaces. The same dict keeps each usage's strategy label under
            ``("label", key, solver_keys)`` (the label depends on the variant as written and on
            which keys the solver chose, not on the name) and the variant ids under
            ``"variant ids"``.
        gpus, headroom: the GPUs of the candidate rows and the scenario's ``vram_headroom``: under an
            ``slo: {requests_per_s}`` load each replica shape gets one usage per sequence count the
            GPUs hold (planner.solve.inflight.at_load; :attr:`Usage.gpu_ids` says on which).

    Returns:
        Usages, variant by variant in the scenario's order; within a variant, training uses the
        most GPUs first (single node before several nodes at the same count); inference runs a
        replica of ``tp`` GPUs on one node; with an ``slo:``, one usage per machine shape (cards per
        node, nodes), its replicas filling it (:func:`fill`) and applying to that shape only
        (:attr:`Usage.exact`).
    """
    cache = {} if cache is None else cache
    variant_ids = cache.setdefault("variant ids", {})  # nameless workload -> int, hashed once per variant
    plain: dict[type, bool] = {}  # _renamed's test by class
    out: list[Usage] = []
    multi = sorted({(c, n) for c, n in node_shapes if n > 1}, key=lambda cn: (-cn[0] * cn[1], -cn[0]))
    for vi, v in enumerate(sw.variants):
        tp = v.tp
        name = v.workload.name
        vid = variant_ids.setdefault(replace(v.workload, name=""), len(variant_ids))
        shapes: list[tuple[int, int]] = []  # (gpus, gpus_per_node)
        # serving to an slo: (machine gpus, gpus per node) -> (replicas of tp, GPUs they use per node)
        replicas: dict[tuple[int, int], tuple[int, int]] = {}
        if sw.task == "train":
            single = [(g, g) for g in range(max_cards_per_node, 0, -1) if g % tp == 0]
            multi_gp = [(c * n, c) for c, n in multi if c % tp == 0]
            if sw.gpus_per_node is not None:
                single = [s for s in single if s[1] == sw.gpus_per_node]
                multi_gp = [s for s in multi_gp if s[1] == sw.gpus_per_node]
            if sw.gpus is None:
                shapes = sorted(single + multi_gp, key=lambda s: (-s[0], -(s[0] == s[1]), -s[1]))
            else:
                for g in sw.gpus:
                    shapes += [s for s in single if s[0] == g]
                    shapes += [s for s in multi_gp if s[0] == g]
        elif sw.slo is not None:
            # serving to a service level: identical replicas of tp GPUs fill each machine (fill: floor(cards
            # / tp) per node, at most one per user) and share the users (each holds ceil(users / r)
            # sequences; under requests_per_s the sequences in flight follow the card); one usage per
            # machine shape, one node first, then several nodes
            users = sw.slo.users if sw.slo.requests_per_s is None else 2**62
            for c, n in [(c, 1) for c in range(tp, max_cards_per_node + 1)] + [(c, n) for c, n in multi if c >= tp]:
                shapes.append((c * n, c))
                replicas[(c * n, c)] = fill(c, n, tp, users)
        else:
            if tp <= max_cards_per_node:
                shapes = [(tp, tp)]
        # vllm serve's defaults depend on the card: one usage per card class when the workload
        # leaves them open (planner.memory.vllm.engine_defaults)
        classes: tuple[str | None, ...] = ("small", "large") if needs_serve_defaults(v.workload) else (None,)
        rated = sw.slo is not None and sw.slo.requests_per_s is not None and bool(gpus)
        for g, gpn, card, rep, n, ids in _expanded(shapes, classes, replicas, rated, sw, v, tp, gpus, headroom,
                                                  overheads, cache, vid):
            reps, used = rep if rep is not None else (None, 0)
            key = (vid, g, gpn, card) if reps is None else (vid, g, gpn, card, "slo", reps) + (
                () if n is None else ("n", n))
            hit = cache.get(key)
            if hit is None:
                # the same replicas on another machine shape (idle cards aside) share one estimate
                wkey = key if reps is None else (vid, card, "slo", tp, reps, used, n)
                hit = cache.get(wkey)
                if hit is None:
                    w = with_gpus(v.workload, g, gpn) if reps is None else with_replicas(v.workload, tp, reps, used)
                    if card is not None:
                        w = with_serve_defaults(w, large_card=card == "large")
                    if n is not None:
                        w = replace(w, infer=replace(w.infer, concurrency=n))
                    est = estimate(w, overheads)
                    hit = (w, est, precision_needs(w), decode_reads(w, est) if w.infer is not None else None,
                           est.per_gpu_total_bytes, est.host_total_bytes)
                    cache[wkey] = hit
                cache[key] = hit
            w, est, needs, decode, need_bytes, host_bytes = hit
            if w.name != name:  # the same workload under another name
                w, est = _renamed(w, "name", name, plain), _renamed(est, "workload_name", name, plain)
            # the label depends on the variant as written (and which keys the solver chose), not its name
            label_key = ("label", key, v.solver_keys)
            label = cache.get(label_key)
            if label is None:
                label = (replace(v, workload=w).label() if reps is not None else v.label()) + (
                    f", {g} GPU{'s' if g > 1 else ''}" if sw.task == "train" else "")
                if reps is not None:
                    label += replicas_words(reps, tp, g, gpn, used)
                if sw.task == "train" and gpn < g:
                    label += f" ({gpn} per node)"
                label += v.solver_note()
                if card is not None:
                    label += (f", vllm serve defaults for {'>= 70 GiB non-A100' if card == 'large' else 'this'} "
                              f"card ({w.infer.max_num_batched_tokens:,} batched tokens, "
                              f"{w.infer.max_num_seqs:,} sequences)")
                cache[label_key] = label
            out.append(Usage(index, vi, g, gpn, tp, w, est, need_bytes, host_bytes, est.offload, needs, label,
                             card, decode, key, ids, reps is not None))
    return out


def replicas_words(reps: int, tp: int, gpus: int, gpus_per_node: int, used_per_node: int) -> str:
    """', 2 replicas (4 GPUs, 2 per node)' and, when the machine of ``gpus`` cards
    (``gpus_per_node`` per node) has cards no replica uses, ', 3 of 8 GPUs idle'."""
    used = reps * tp
    text = (f", {reps} replica{'s' if reps > 1 else ''} ({used} GPU{'s' if used > 1 else ''}"
            + (f", {used_per_node} per node" if gpus_per_node < gpus else "") + ")")
    return text + (f", {gpus - used} of {gpus} GPUs idle" if used < gpus else "")


def _expanded(shapes: Sequence[tuple[int, int]], classes: tuple[str | None, ...], replicas: dict[tuple[int, int], int],
              rated: bool, sw: ScenarioWorkload, v: object, tp: int, gpus: Sequence[Gpu], headroom: float,
              overheads: RuntimeOverheads | None, cache: dict, vid: int) -> list[tuple]:
    """(gpus, gpus per node, vLLM card class, replicas, sequences per replica, GPU ids) of each usage
    :func:`usages_for` makes. Under an ``slo: {requests_per_s}`` load (``rated``) a replica shape gives
    one usage per sequence count that the GPUs of its card class hold at the load
    (planner.solve.inflight.at_load, timed on each GPU), restricted to those GPUs; otherwise one usage
    per shape and class for every GPU (sequences and GPU ids None)."""
    out: list[tuple] = []
    for g, gpn in shapes:
        for card in classes:
            rep = replicas.get((g, gpn))
            if not rated or rep is None:
                out.append((g, gpn, card, rep, None, None))
                continue
            from planner.memory.vllm import is_large_card
            from planner.solve.inflight import at_load

            reps, used = rep
            by_n = cache.get((vid, card, "slo", tp, reps, used, "by_n"))  # the same replicas on another shape
            if by_n is None:
                base = with_replicas(v.workload, tp, reps, used)  # type: ignore[attr-defined]
                if card is not None:
                    base = with_serve_defaults(base, large_card=card == "large")

                def est_of(w: Workload, card: str | None = card, reps: int = reps, used: int = used) -> Estimate:
                    k = (vid, card, "slo", tp, reps, used, "est", w.infer.concurrency)
                    if k not in cache:
                        cache[k] = estimate(w, overheads)
                    return cache[k]

                by_n = {}
                for gpu in gpus:
                    if card is not None and is_large_card(gpu) != (card == "large"):
                        continue
                    s = at_load(base, sw.slo, gpu, capacity_for(base, gpu.cuda_total_bytes, headroom), est_of)
                    by_n.setdefault(s.workload.infer.concurrency, []).append(gpu.id)
                cache[(vid, card, "slo", tp, reps, used, "by_n")] = by_n
            out += [(g, gpn, card, rep, n, frozenset(ids)) for n, ids in sorted(by_n.items())]
    return out


__all__ = ["FLASH_FEATURE", "LLAMACPP_FEATURE", "TABLE_MAX_BYTES", "Usage", "capacity_bytes", "capacity_for", "fill", "has_feature",
           "precision_needs", "replicas_words", "takes_headroom", "usages_for", "with_gpus", "with_replicas"]
