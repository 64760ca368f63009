"""``planner.estimate``: GPU memory per card and host RAM for one workload (``planner estimate``)."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.api.inputs import (
    card_speed,
    catalog_of,
    check_keywords,
    file_path_of,
    given_options,
    gpu_of,
    read_workload,
    vllm_context_note,
    vllm_headroom,
    workload_keys,
    workload_paths,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from planner.memory import Estimate
    from planner.workload.spec import Workload


@dataclass(frozen=True)
class GpuCheck:
    """Whether a workload's per-GPU need fits one catalog GPU (``planner estimate --gpu``).

    Attributes:
        id: the catalog GPU id.
        memory_usable_bytes: the card's memory as the driver reports it (catalog), bytes.
        cuda_total_bytes: what CUDA reports as the card's total (planner.memory.vllm.cuda_total_bytes), bytes.
        headroom_fraction: share of the CUDA total kept free (0 for engine vllm, whose
            gpu_memory_utilization is the margin).
        capacity_bytes: CUDA total less the headroom (planner.solve.candidates.capacity_bytes), bytes.
        fits: the need fits the capacity and the card supports the workload's dtypes.
        unsupported_precision: the dtypes the workload needs that the card lacks ('bf16', 'fp8', ...).
        headroom_bytes: capacity less the per-GPU need, bytes (negative: short by that much).
        vllm: for inference (but engine llama.cpp), vLLM's KV-cache budget on the card
            (:meth:`planner.memory.vllm.VllmBudget.as_dict`, sizes in bytes) with
            ``longest_max_model_len``, ``problems`` (why vllm serve would refuse to start) and
            ``max_concurrency_at_context``; None for training and llama.cpp.
        fragmentation_risk: the warning when the card fits with less spare than the workload's largest
            transient allocation (planner.memory.fragmentation), with the ``expandable_segments`` hint;
            None otherwise, and for llama.cpp and vLLM (no caching-allocator churn at the margin).
    """

    id: str
    memory_usable_bytes: int
    cuda_total_bytes: int
    headroom_fraction: float
    capacity_bytes: int
    fits: bool
    unsupported_precision: tuple[str, ...]
    headroom_bytes: int
    vllm: dict[str, Any] | None = None
    fragmentation_risk: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``gpu`` object of ``planner estimate --gpu ID --json``."""
        out = {"id": self.id, "memory_usable_bytes": self.memory_usable_bytes,
               "cuda_total_bytes": self.cuda_total_bytes, "headroom_fraction": self.headroom_fraction,
               "capacity_bytes": self.capacity_bytes, "fits": self.fits,
               "unsupported_precision": list(self.unsupported_precision), "headroom_bytes": self.headroom_bytes,
               "fragmentation_risk": self.fragmentation_risk}
        if self.vllm is not None:
            out["vllm"] = copy.deepcopy(self.vllm)
        return out


@dataclass(frozen=True)
class EstimateResult:
    """The memory estimate of one workload, and on a GPU whether it fits.

    Attributes:
        estimate: the memory model's result (planner.memory.Estimate): every component with its
            bytes, formula and source; per-GPU and host totals.
        workload: the workload as estimated (planner.workload.spec.Workload; with ``gpu``, with
            vllm serve's defaults for that card).
        gpu: the fit check on the card ``gpu=`` named, else None.
        notes_for_compare: the workload keys given that feed ``planner compare`` (time and cost),
            not the memory estimate.
        context_note: for engine vllm with the context left at its default, the --max-model-len
            vllm serve needs (None otherwise).
        speed: with ``gpu``, the speed model's result on that card
            (planner.speed.result.TrainingSpeed or InferenceSpeed), else None.
        layers_note: llama.cpp with ``gpu_layers='max'`` and ``gpu``: how many layers the search
            put on the card (planner.api.fits.fit), else None.
    """

    estimate: Estimate
    workload: Workload
    gpu: GpuCheck | None = None
    notes_for_compare: tuple[str, ...] = ()
    context_note: str | None = None
    speed: Any = None
    layers_note: str | None = None

    @property
    def takes_headroom(self) -> bool:
        """Whether a fit check keeps a headroom free (False for engine vllm, whose
        gpu_memory_utilization is the margin; planner.solve.candidates.takes_headroom)."""
        from planner.solve.usages import takes_headroom

        return takes_headroom(self.workload)

    @property
    def per_gpu_total_bytes(self) -> int:
        """The per-GPU need (allocated tensors and runtime overheads at the peak), bytes."""
        return self.estimate.per_gpu_total_bytes

    @property
    def host_total_bytes(self) -> int:
        """Host RAM at its peak, per machine, bytes."""
        return self.estimate.host_total_bytes

    @property
    def fits(self) -> bool | None:
        """Whether the need fits the card ``gpu=`` named (None without one)."""
        return None if self.gpu is None else self.gpu.fits

    @property
    def replicas(self) -> int:
        """Copies of the model an inference workload runs (``gpus`` / ``tp``); 1 for training."""
        return self.workload.infer.replicas if self.workload.infer is not None else 1

    @property
    def notes(self) -> tuple[str, ...]:
        """The estimate's notes, then the vLLM --max-model-len note and the GPU-layers note when there are."""
        return (tuple(self.estimate.notes) + ((self.context_note,) if self.context_note else ())
                + ((self.layers_note,) if self.layers_note else ()))

    @property
    def warnings(self) -> tuple[str, ...]:
        """Things to check: the memory model's warnings, then with an overlay (``catalog=DIR``) one per problem
        with its citations (a SOURCES.md that cannot be read, REF ids defined nowhere:
        planner.catalog.check.overlay_source_warnings)."""
        return tuple(self.estimate.warnings)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the document ``planner estimate --json`` prints: sizes in integer bytes,
        every component with its formula and source (planner.report.render.estimate_to_dict), and
        with ``gpu`` the fit check."""
        from planner.report.render import estimate_to_dict

        result = estimate_to_dict(self.estimate)
        if self.gpu is not None:
            result["gpu"] = self.gpu.to_dict()
        if self.notes_for_compare:
            result["notes_for_compare"] = list(self.notes_for_compare)
        w = self.workload
        if w.infer is not None:
            # the per-GPU need is one replica's (tp GPUs: 'gpus'); host RAM counts every replica on a
            # machine ('gpus_per_node' is the machine's GPUs)
            result.update(gpus=w.infer.tp, replicas=self.replicas, gpus_total=w.infer.tp * self.replicas,
                          concurrency_total=w.infer.concurrency * self.replicas)
        if self.context_note:
            result["notes"].append(self.context_note)
        if self.layers_note:
            result["notes"].append(self.layers_note)
        if self.speed is not None:
            result["speed"] = self.speed.to_dict()
        return result

    def to_frame(self) -> pandas.DataFrame:
        """The memory breakdown, one row per component: component, where ('gpu': per GPU; 'host':
        host RAM per machine), when (the phase it is live in, or 'always'), kind ('allocated',
        'runtime', 'headroom'), bytes, GiB (2^30, rounded to 3 decimals), formula, source."""
        import pandas as pd

        return pd.DataFrame([{"component": c.name, "where": c.where, "when": c.phase or "always", "kind": c.kind,
                              "bytes": c.bytes, "GiB": round(c.bytes / 2**30, 3), "formula": c.formula,
                              "source": c.source} for c in self.estimate.components],
                            columns=["component", "where", "when", "kind", "bytes", "GiB", "formula", "source"])


def estimate(*extra: Any, workload: Any = None, catalog: Any = None, gpu: str | None = None, calibration: Any = None,
             headroom: float | None = None, prompt_tokens: Any = None, output_tokens: Any = None,
             **options: Any) -> EstimateResult:
    """Estimate GPU memory per card and host RAM for one workload, component by component.

    The Python form of ``planner estimate``: the same options as keyword arguments, with
    underscores (``--micro-batch`` is ``micro_batch=``), read and checked by the same readers
    (planner.workload.inputs, planner.workload.spec). None means "not given".

    Args:
        workload: a workload file (path) or a mapping of workload keys (``--workload``); the
            keyword options replace its keys.
        catalog: a :class:`planner.catalog.loader.Catalog` (``planner.load_catalog()``), an overlay
            directory (``--catalog``), or None for the shipped catalog.
        gpu: a catalog GPU id (``--gpu``): also check whether the need fits it (and vLLM's KV
            budget on it).
        calibration: with ``gpu``, a calibration file from ``planner calibrate`` (``--calibration``;
            default ``$XDG_CONFIG_HOME/planner/calibration.yaml``, else ``~/.config/planner/calibration.yaml``;
            none without either), used when it holds that exact GPU model.
        headroom: with ``gpu``, the fraction of the card's CUDA total kept free (default 0.05; not
            for engine vllm).
        prompt_tokens, output_tokens: inference with ``gpu``: the request the speed model times
            (``--prompt-tokens``, ``--output-tokens``); their sum must fit the context, which defaults
            to it when only they are given. Defaults: 256 output tokens (at most half the context)
            and the rest of the context as the prompt.
        **options: workload keys: model, task, method, recipe, optimizer, micro_batch, seq_len,
            grad_accum, gpus, gpus_per_node, tp, zero, offload_optimizer, offload_params,
            checkpointing, attention, lora_rank, lora_targets (a list or 'q_proj,v_proj'), weights,
            kv_dtype, context, concurrency, engine, ... (``planner estimate --help``).

    Returns:
        :class:`EstimateResult` (sizes in integer bytes).

    Raises:
        UnknownKeywordError: a keyword that is no option (with close matches; also a TypeError).
        UsageError: neither ``model`` nor ``workload``.
        OptionError: an option's value is invalid (named by its keyword, e.g. ``micro_batch``; the command
            line prints it as the option, ``--micro-batch``); ``headroom`` or ``calibration`` without ``gpu``.
        ScenarioError: a workload file that cannot be read, or an invalid key in it.
        CatalogError: the catalog overlay is invalid.

    Example:
        >>> from planner import estimate
        >>> r = estimate(model="llama-2-7b", task="train", method="qlora", micro_batch=2, seq_len=1024)
        >>> round(r.per_gpu_total_bytes / 2**30, 2)  # GiB per GPU
        16.47
        >>> r.to_frame()[["component", "where", "GiB"]].head(2)
                           component where    GiB
        0  weights (frozen NF4 base)   gpu  3.600
        1       LoRA adapter weights   gpu  0.031
    """
    from planner.api.inputs import check_positional

    check_positional("estimate", extra, "none", "estimate(model='llama-2-7b', task='infer')")
    from planner.memory import estimate as run_estimate
    from planner.memory.vllm import cuda_total_bytes, for_gpu, vllm_budget
    from planner.workload.inputs import OptionError

    check_keywords("estimate", options, workload_keys())
    workload, options = workload_paths(workload, options)  # read once: a gpu_layers='max' fit reads them too
    prompt_tokens = _token_count("--prompt-tokens", prompt_tokens)
    output_tokens = _token_count("--output-tokens", output_tokens)
    # a prompt length given without a context sets it (the request fills it); an output length alone
    # leaves the workload's context, and the prompt is its rest (a 1-token prompt would time no prefill)
    if prompt_tokens and options.get("context") is None and workload is None and options.get("task") == "infer":
        options = {**options, "context": prompt_tokens + (output_tokens or 256)}
    if gpu is None:
        for flag, value in (("--headroom", headroom), ("--calibration", calibration)):
            if value is not None:
                raise OptionError(f"{flag} applies to the fit check on a card: give --gpu ID with it", entry=flag,
                                  hint=f"For example --gpu h100-sxm ('planner catalog gpus' lists the ids), or leave "
                                       f"{flag} out.")
    if calibration is not None:
        calibration = file_path_of(calibration, "calibration", "Give the calibration file 'planner calibrate' "
                                   "wrote, e.g. calibration='calibration.yaml'")
    cat = catalog_of(catalog)
    card = gpu_of(cat, gpu) if gpu is not None else None
    options, layers_note = _most_gpu_layers(options, workload, cat, gpu, headroom)
    given = given_options(options)
    wl, written = read_workload(cat, workload, given, gpu=card, function="estimate")
    node_note = None
    if card is not None and wl.gpus_per_node is None and wl.gpus > 1:
        wl, node_note = _default_node(cat, card, wl)
    overheads = None
    if card is not None:
        from planner.validate.calibrate import default_path, overheads_for_gpu, refuse_relative_xdg

        # vllm serve's defaults for max_num_batched_tokens / max_num_seqs depend on the card
        wl = for_gpu(wl, card)
        headroom = vllm_headroom(wl, headroom)
        # the calibration of this exact GPU model, if any (none is read when no config directory is known)
        if calibration is None:
            refuse_relative_xdg()  # passed over by the XDG spec: said, not read under ~/.config unsaid (h38a 13)
        overheads = overheads_for_gpu(card, calibration or default_path(), given=calibration is not None)
        if overheads is None and calibration is not None:
            node_note = _join(node_note, _uncalibrated_note(calibration, card))
    est = run_estimate(wl, overheads)
    check = None
    if card is not None:
        from planner.solve.usages import capacity_bytes, has_feature, precision_needs

        need = est.per_gpu_total_bytes
        capacity = capacity_bytes(card.cuda_total_bytes, headroom)
        missing = tuple(f for f in precision_needs(wl) if not has_feature(card, f))
        vllm = None
        if wl.infer is not None and wl.infer.engine != "llama.cpp":  # vLLM's budget has no llama.cpp meaning
            vb = vllm_budget(wl, est, cuda_total=cuda_total_bytes(card), gpu_id=card.id)
            vllm = vb.as_dict()
            vllm["longest_max_model_len"] = vb.longest_model_len(wl.architecture.max_position_embeddings)
            vllm["problems"] = vb.problems(context=wl.infer.context,
                                           kv_bytes_per_token=est.extra.get("kv_bytes_per_token", 0))
            # sequences of the full context the KV budget holds, by vLLM's per-request KV (sliding-window
            # layers keep a window, not the context: planner.memory.vllm.sequence_kv)
            vllm["max_concurrency_at_context"] = vllm["sequences_at_context"]
        from planner.memory.fragmentation import fragmentation_risk

        risk = fragmentation_risk(need=need, spare=capacity - need,
                                  transient=est.extra.get("largest_transient_bytes", 0)) if not missing else None
        check = GpuCheck(id=card.id, memory_usable_bytes=card.memory_usable_bytes,
                         cuda_total_bytes=card.cuda_total_bytes, headroom_fraction=headroom,
                         capacity_bytes=capacity, fits=need <= capacity and not missing,
                         unsupported_precision=missing, headroom_bytes=capacity - need, vllm=vllm,
                         fragmentation_risk=risk)
    # keys that feed `planner compare` (time and cost), not the memory estimate: said, not dropped
    timing = tuple(k for k, v in (("dataset_tokens", wl.train and wl.train.dataset_tokens),
                                  ("epochs", wl.train and wl.train.epochs != 1.0),
                                  ("hours_per_month", wl.hours_per_month),
                                  ("tokens_per_month", wl.tokens_per_month),
                                  ("tokens_per_request", wl.infer and wl.infer.tokens_per_request),
                                  ("requests_per_hour", wl.infer and wl.infer.requests_per_hour is not None))
                   if v)
    longest = check.vllm.get("longest_max_model_len") if check is not None and check.vllm else None
    note = vllm_context_note(wl, "context" in given or "context" in written, longest)
    speed = None
    if card is not None:
        speed = card_speed(wl, est, card, cat, prompt_tokens, output_tokens)
    elif prompt_tokens or output_tokens:
        raise OptionError("--prompt-tokens and --output-tokens time a request on a card: give --gpu ID with them",
                          entry="--prompt-tokens" if prompt_tokens else "--output-tokens",
                          hint="For example --gpu h100-sxm ('planner catalog gpus' lists the ids).")
    note = _join(note, node_note)
    from planner.catalog.check import overlay_source_warnings

    # an overlay's SOURCES.md that cannot be read, REF ids it cites defined nowhere: with the estimate's warnings
    told = overlay_source_warnings(cat)
    if told:
        est = dataclasses.replace(est, warnings=tuple(est.warnings) + told)
    return EstimateResult(estimate=est, workload=wl, gpu=check, notes_for_compare=timing, context_note=note,
                          speed=speed, layers_note=layers_note)


def _join(a: str | None, b: str | None) -> str | None:
    """Two notes as one text (either may be None)."""
    return f"{a} {b}" if a and b else a or b


def _uncalibrated_note(path: Path, card: Any) -> str:
    """The note of a calibration file the user named that holds no entry for ``card``: the GPU names it holds
    (planner.validate.calibrate.calibration_applies found none of them for this card), and what is used instead."""
    from planner.validate.calibrate import load_calibrations

    held = [c.gpu_name for c in load_calibrations(path, given=True).values()]
    holds = ", ".join(repr(n) for n in held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
    return (f"--calibration {path} has no entry for GPU {card.id} ({card.name}): it holds {holds or 'none'}; the "
            "default CUDA context and allocator reserve are used. Run 'planner calibrate' on that GPU, or give the "
            "file that has it.")


def _most_gpu_layers(options: dict[str, Any], workload: Any, cat: Any, gpu: str | None,
                     headroom: float | None) -> tuple[dict[str, Any], str | None]:
    """``options`` with a llama.cpp ``gpu_layers`` of 'max' (or 'auto') replaced by the most layers
    that fit card ``gpu`` (:func:`planner.api.fits.fit`'s exact scan; 0 when not even the compute
    buffer fits), and the note saying so; unchanged without a card (the reader then explains)."""
    layers = options.get("gpu_layers")
    if gpu is None or not (isinstance(layers, str) and layers.strip().lower() in ("max", "auto")):
        return options, None
    from planner.api.fits import NoFit, fit

    rest = {k: v for k, v in options.items() if k != "gpu_layers"}
    try:
        r = fit(gpu=gpu, workload=workload, catalog=cat, headroom=headroom, gpu_layers="max", **rest)
        n = int(r.max_value)
        top = r.limit
    except NoFit as e:
        n, top = 0, e.result.limit
    whole = ", all of them" if n >= top else ""
    return ({**options, "gpu_layers": n},
            f"--gpu-layers {layers.strip().lower()}: {n} of {top} layers (counting the output layer{whole}) fit "
            f"{gpu}, the most that fit (as 'planner fit --gpu {gpu} --gpu-layers max' finds)")


def node_size(cat: Any, card: Any) -> tuple[int, str]:
    """GPUs of ``card`` one machine of the catalog carries at most, and which platform: a baseboard
    module (SXM/OAM) the largest ``fixed_gpu_count`` of a platform built on it (HGX: 8), a PCIe card
    the most of its ``slot_width`` any platform's slots take (planner.catalog.platforms.max_cards).
    (1, '') when no platform carries it."""
    from planner.catalog.platforms import max_cards

    best, where = 1, ""
    for p in cat.platforms:
        if p.fixed_gpu is not None:
            n = int(p.fixed_gpu_count or 0) if p.fixed_gpu == card.id else 0
        else:
            n = max_cards(p, int(card.slot_width)) if card.slot_width else 0
        if n > best:
            best, where = n, p.id
    return best, where


def _default_node(cat: Any, card: Any, wl: Any) -> tuple[Any, str | None]:
    """``wl`` split over machines of :func:`node_size` cards when its GPUs exceed one (the largest
    divisor of its GPU count within it), and a sentence saying so; (wl, None) when one machine holds it.
    Tensor parallelism past a machine is warned about, not refused (vLLM runs it over Ray across
    machines): vLLM's guide (docs.vllm.ai, "Distributed Inference and Serving", "How to decide the
    distributed inference strategy", v0.5.5 on) sets the tensor-parallel size to the GPUs in each node
    and the pipeline-parallel size to the nodes; pipeline parallelism is not modelled here."""
    from dataclasses import replace

    from planner.speed.constants import DEFAULT_NODE_LINK_BYTES_PER_S

    node, where = node_size(cat, card)
    n = wl.gpus
    if n <= node or not where:  # one machine holds them, or no catalog platform carries the card
        return wl, None
    per = max(d for d in range(1, node + 1) if n % d == 0)
    text = (f"--gpus {n:,} of {card.id} span {n // per:,} machines of {per} (the most {card.id} one catalog "
            f"platform carries: {node} on {where}; --gpus-per-node sets it); between machines "
            f"the speed model uses {DEFAULT_NODE_LINK_BYTES_PER_S.value / 1e9:,.0f} GB/s per GPU (assumed: one "
            "400 Gb/s NIC per GPU).")
    if wl.tp > per:
        text += (f" Warning: tensor parallel {wl.tp} spans {-(-wl.tp // per)} machines: vLLM and Megatron-LM run "
                 "tensor parallelism inside a machine and pipeline parallelism across machines (not modelled "
                 "here), so these figures are not what such a run achieves.")
    return replace(wl, gpus_per_node=per), text


#: Most tokens a timed request may have (prompt or output): the workload readers' largest context.
MAX_REQUEST_TOKENS = 16_777_216


def _token_count(flag: str, value: Any) -> int | None:
    """A whole, positive token count (any numeric type holding a whole value), or None. Read as the other
    numeric keywords are (planner.core.fields.plain_number): a numpy integer or a Decimal as the int it holds;
    a bool (numpy's too), a ``numpy.timedelta64`` or ``datetime64``, ``numpy.ma.masked`` or a text is no count
    and is refused by its type's name (h25b N3), never converted.

    Raises:
        OptionError: naming ``flag``, for a value that is not a whole number from 1 to MAX_REQUEST_TOKENS.
    """
    from planner.workload.inputs import OptionError

    from planner.core.fields import plain_number, shown_number

    if value is None:
        return None
    from planner.core.fieldhints import UnreadableNumber

    try:
        value = plain_number(value)  # a numpy or Decimal count reads as the int it holds
    except UnreadableNumber as exc:  # its own __int__ raised (h28b N1)
        raise OptionError(exc.problem, entry=flag, hint=exc.hint) from None
    whole = None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ok = False  # numpy.True_, timedelta64, masked: no count, and int() of them is 1, 512 or MaskError
    else:
        try:
            whole = int(value)
            ok = whole == value and 1 <= whole <= MAX_REQUEST_TOKENS
        except (ValueError, OverflowError):  # nan, inf
            ok = False
    if not ok:
        # 10**5000 has no repr (Python's 4,300-digit limit); a value of another type by its type's name
        shown = shown_number(value) if isinstance(value, (int, float, str)) else type(value).__name__
        shown = shown if len(shown) <= 30 or not isinstance(value, str) else f"a text of {len(value):,} characters"
        raise OptionError(f"{flag} must be a whole number of tokens from 1 to {MAX_REQUEST_TOKENS:,}, not {shown}", entry=flag,
                          hint=f"For example {flag} 512.")
    return whole
