"""``planner.fit``: the largest micro-batch, sequence length, context or concurrency that fits a GPU
(``planner fit``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from planner.api.inputs import (
    card_speed,
    catalog_of,
    check_keywords,
    check_positional,
    gib_text,
    given_options,
    gpu_of,
    read_workload,
    vllm_context_note,
    vllm_headroom,
    workload_keys,
    workload_source,
)
from planner.core.errors import InfeasibleError

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from planner.memory import Estimate
    from planner.workload.spec import Workload

#: The quantities fit can maximise: option -> (workload section, field).
FIT_TARGETS = {"micro_batch": ("train", "micro_batch"), "seq_len": ("train", "seq_len"),
               "context": ("infer", "context"), "concurrency": ("infer", "concurrency"),
               "gpu_layers": ("infer", "gpu_layers")}


@dataclass(frozen=True)
class FitResult:
    """The largest value of one quantity that fits a GPU, and what it needs.

    Attributes:
        gpu: the catalog GPU id; gpus: every GPU the workload uses (all replicas).
        tp: the tensor-parallel degree; replicas: for inference, copies of the model (gpus / tp;
            None for training).
        target: 'micro_batch', 'seq_len', 'context', 'concurrency' or 'gpu_layers'.
        max_value: the answer (None when even 1 does not fit; :class:`NoFit` carries that result).
        need_bytes: the per-GPU need at the answer (at 1 when nothing fits), bytes.
        capacity_bytes: the card's CUDA total less the headroom, bytes; cuda_total_bytes: the CUDA
            total; headroom: the fraction kept free (0 for engine vllm).
        next_need_bytes: the per-GPU need at the answer + 1 (None when the answer is the limit).
        limit: the largest value searched; limited_by: what set it ('memory' when the answer is below it).
        notes, warnings: what 'planner estimate' says of the workload at the answer.
        concurrency_per_replica, concurrency_total: for inference, the sequences served at once
            per replica and on all replicas.
        workload: the workload at the answer (planner.workload.spec.Workload); estimate: its
            memory estimate (planner.memory.Estimate).
        takes_headroom: whether the capacity is the CUDA total less a headroom (False for engine
            vllm, whose gpu_memory_utilization is the margin).
        suggestions: when nothing fits, the settings that would (:func:`what_would_fit`), each
            checked with the memory model; () otherwise.
        speed: the speed model at the answer on the card (planner.speed.result.TrainingSpeed or
            InferenceSpeed, as ``planner estimate --gpu`` gives it), or None when nothing fits.
    """

    gpu: str
    gpus: int
    tp: int
    replicas: int | None
    target: str
    max_value: int | None
    need_bytes: int | None
    capacity_bytes: int
    cuda_total_bytes: int
    headroom: float
    next_need_bytes: int | None
    limit: int
    limited_by: str | None
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    concurrency_per_replica: int | None
    concurrency_total: int | None
    workload: Workload
    estimate: Estimate
    takes_headroom: bool = True
    suggestions: tuple[str, ...] = ()
    speed: Any = None

    @property
    def fits(self) -> bool:
        """Whether some value fits (False: even 1 does not)."""
        return self.max_value is not None

    @property
    def layout(self) -> str:
        """How the GPUs are used, in words ('2 replicas at tp 4', 'tp 2 x 4 data-parallel ranks'; '' for one GPU)."""
        if self.replicas is not None:
            w = self.workload.infer
            if w is not None and w.engine == "llama.cpp":  # tp is the GPUs of one replica's layer split
                return f"one replica, its layers split over {self.tp} GPUs" if self.tp > 1 else ""
            return (f"{self.replicas} replicas at tp {self.tp}" if self.replicas > 1 else
                    f"one replica at tp {self.tp}" if self.tp > 1 else "")
        if self.tp > 1:
            ranks = self.gpus // self.tp
            return f"tp {self.tp} x {ranks} data-parallel rank{'' if ranks == 1 else 's'}"
        return ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the document ``planner fit --json`` prints (sizes in bytes); when nothing
        fits, the shorter document it prints then (``max_value`` None, ``fits`` False)."""
        layout: dict[str, Any] = {"tp": self.tp}
        if self.replicas is not None:
            layout["replicas"] = self.replicas
        head = {"gpu": self.gpu, "gpus": self.gpus, **layout, "target": self.target, "max_value": self.max_value,
                **_release_keys(self.workload, self.estimate)}
        if not self.fits:
            return {**head, "fits": False, "need_bytes": self.need_bytes, "capacity_bytes": self.capacity_bytes,
                    "cuda_total_bytes": self.cuda_total_bytes, "headroom": self.headroom,
                    "notes": list(self.notes), "warnings": list(self.warnings),
                    "suggestions": list(self.suggestions)}
        out = {**head, "need_bytes": self.need_bytes, "capacity_bytes": self.capacity_bytes,
               "cuda_total_bytes": self.cuda_total_bytes, "headroom": self.headroom,
               "next_need_bytes": self.next_need_bytes, "limit": self.limit, "limited_by": self.limited_by,
               "notes": list(self.notes), "warnings": list(self.warnings)}
        if self.concurrency_per_replica is not None:
            out.update(concurrency_per_replica=self.concurrency_per_replica, concurrency_total=self.concurrency_total)
        if self.target == "gpu_layers":
            # the layers left on the CPU live in host RAM: what the machine needs, as estimate counts it
            out["host_need_bytes"] = self.estimate.host_total_bytes
        if self.speed is not None:
            out["speed"] = self.speed.to_dict()
        return out

    def to_frame(self) -> pandas.DataFrame:
        """One row: gpu, gpus, tp, replicas, target, max_value, need_bytes, capacity_bytes,
        next_need_bytes, limit, limited_by (sizes in bytes)."""
        import pandas as pd

        keys = ("gpu", "gpus", "tp", "replicas", "target", "max_value", "need_bytes", "capacity_bytes",
                "next_need_bytes", "limit", "limited_by")
        return pd.DataFrame([{k: getattr(self, k) for k in keys}], columns=list(keys))


class NoFit(InfeasibleError):
    """Even 1 of the target does not fit the GPU. ``result`` is the :class:`FitResult` (max_value None);
    the message says what the workload needs at 1, what the card offers and, for engine vllm, what
    gpu_memory_utilization would fit, with the notes and warnings estimate gives at 1."""

    def __init__(self, message: str, result: FitResult) -> None:
        super().__init__(message)
        self.result = result


def _range_hint(key: str, value: str) -> str | None:
    """For a count written in another spelling ('1e9') whose number lies outside what the workload readers take for
    ``key`` (1 to planner.workload.options MAX_SEQ_LEN or MAX_MICRO_BATCH): the range, not digits the reader then
    refuses; None otherwise (planner.cli.options.refuse_outside_range words the same for the other commands)."""
    import math
    import re

    from planner.workload.options import MAX_MICRO_BATCH, MAX_SEQ_LEN

    most = {"micro_batch": MAX_MICRO_BATCH, "concurrency": MAX_MICRO_BATCH, "seq_len": MAX_SEQ_LEN,
            "context": MAX_SEQ_LEN}.get(key)
    if most is None or not re.fullmatch(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*", value):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(number) or 1 <= number <= most or (number == 0 and re.search(r"[1-9]", value)):
        return None
    side = "more" if number > most else "less"
    return f"{value.strip()} is {side} than --{key.replace('_', '-')} takes: give a whole number from 1 to {most}."


def _is_max(value: Any) -> bool:
    """Whether ``value`` is the text 'max'. Only a text is compared: numpy's ``==`` of an array gives an array,
    whose truth is ambiguous (a ValueError), and a caller's object may make ``__eq__`` raise (h24b N1); a
    str subclass is already the plain str it holds (:func:`planner.api.inputs.plain_texts`)."""
    return isinstance(value, str) and value == "max"


def _targets(given: dict[str, Any]) -> list[str]:
    """The targets given 'max'; every other target value checked and made an int.

    Raises:
        OptionError: a target that is neither a whole number nor 'max' (an array, a list, bytes, another
            object: named with its type, whatever it holds); with no target 'max', one below the least the
            key takes (0, -1) or a fraction, named at its keyword.
        UsageError: not exactly one target is 'max'.
    """
    import numbers

    from planner.core.errors import UsageError, close_matches
    from planner.core.fieldhints import _kind
    from planner.core.fields import whole_number_hint
    from planner.workload.inputs import OptionError

    for k in FIT_TARGETS:
        v = given.get(k)
        if isinstance(v, bool) or (type(v).__module__ == "numpy" and type(v).__name__ in ("bool_", "bool")):
            # True is no count, and no 'max' either: refused as a whole number is, before the one-'max' rule (h17b #5d)
            raise OptionError(f"must be a whole number or 'max', not {str(bool(v)).lower()}", entry=k,
                              hint=f"Give {k}='max' for the largest that fits, or a whole number.")
        if v is not None and not isinstance(v, (str, numbers.Number)):
            # an array (np.array(['max']) too), a list, bytes, an object: refused by its type, never compared with
            # 'max' (h24b N1, M2)
            raise OptionError(f"must be a whole number or 'max', not {_kind(v)}", entry=k,
                              hint=f"Give {k}='max' (a str) for the largest that fits, or a whole number (an int).")
        if isinstance(v, str) and v != "max" and not v.strip().isdigit() and not (k == "gpu_layers" and v == "all"):
            flag = "--" + k.replace("_", "-")
            raise OptionError(f"must be a whole number or 'max', not {v!r}", entry=k,
                              hint="Did you mean 'max'?" if close_matches(v.strip().lower(), ["max"]) else
                              _range_hint(k, v) or whole_number_hint(v, lambda n: f"{flag} {n}"))
    targets = [k for k in FIT_TARGETS if _is_max(given.get(k))]
    if not targets:
        _no_target_given(given)
    if len(targets) != 1:
        raise UsageError("fit() needs exactly one of micro_batch, seq_len, context, concurrency, gpu_layers set to "
                         "'max'", usage="give exactly one of --micro-batch, --seq-len, --context, --concurrency, "
                                        "--gpu-layers the value 'max'")
    for k in FIT_TARGETS:
        if isinstance(given.get(k), str) and k != targets[0] and not (k == "gpu_layers" and given[k] == "all"):
            given[k] = int(given[k])
    return targets


def _no_target_given(given: dict[str, Any]) -> None:
    """With no target 'max': refuse, at its keyword, a target number that is no count fit takes (0 or -1 where
    the least is 1, a fraction), which may have been meant as 'max' (h24b M2); the one-'max' rule follows.
    A text is a digit string here (:func:`_targets` refused the others); the CLI passes its options as texts,
    so a text's hint names the option (``--context max``), a number's the keyword (``context='max'``).

    Raises:
        OptionError: naming the keyword, with the least value and 'max' as hint.
    """
    import math

    from planner.core.fieldhints import plain_number
    from planner.core.fields import whole_number_hint
    from planner.workload.inputs import OptionError

    for k in FIT_TARGETS:
        v = plain_number(given.get(k), entry=k)
        text = isinstance(v, str)
        spell = (lambda n, k=k: f"--{k.replace('_', '-')} {n}") if text else (lambda n, k=k: f"{k}={n}")
        if text and v.strip().isdigit():
            v = int(v.strip())
        if isinstance(v, float) and math.isfinite(v) and not v.is_integer():
            raise OptionError(f"must be a whole number or 'max', not {v!r}", entry=k,
                              hint=f"Give {spell(repr('max') if not text else 'max')} for the largest that fits. "
                                   + (whole_number_hint(v, spell) or ""))
        least = 0 if k == "gpu_layers" else 1
        if isinstance(v, int) and not isinstance(v, bool) and v < least:
            raise OptionError(f"must be at least {least} or 'max', not {v}", entry=k,
                              hint=f"Give {spell(repr('max') if not text else 'max')} for the largest that fits, "
                                   f"or a whole number from {least}.")


def _no_max_written(source: tuple[Any, str | None, str], given: dict[str, Any]) -> Any:
    """The keys ``source`` (:func:`workload_source`) writes, after refusing 'max' written in them: fit
    searches the one value the command line (or keyword) gives 'max', so the file holds numbers only
    (h18b #10).

    Raises:
        ScenarioError: named at the file, line and key, with the option that searches it as hint.
    """
    from planner.core.errors import ScenarioError

    written, file = source[0], source[1]
    for k in FIT_TARGETS:
        v = written.get(k)
        if not (isinstance(v, str) and v.strip().lower() == "max") or k in given:
            continue  # an option given for k replaces the file's value
        flag = "--" + k.replace("_", "-")
        others = [o for o in FIT_TARGETS if _is_max(given.get(o))]
        if file is None:  # a workload mapping: only the API gives one, and there 'max' is a keyword (h37a 4)
            hint = (f"fit searches exactly one value, here {others[0]}='max': give {k} a whole number in the "
                    f"workload mapping, or leave {k} out of it." if others else
                    f"Give it as a keyword: fit(..., {k}='max') (fit searches exactly one value), and give {k} a "
                    f"whole number in the workload mapping or leave {k} out of it.")
            raise ScenarioError("'max' is a value of fit()'s keyword, not of a workload mapping", entry=k, hint=hint)
        if others:
            oflag = "--" + others[0].replace("_", "-")
            hint = (f"fit searches exactly one value, here {oflag} max: write {k}: N (a whole number) in the file, "
                    f"or remove {k} from it.")
        else:
            hint = (f"Give it on the command line: {flag} max (fit searches exactly one value), and write {k}: N "
                    f"(a whole number) in the file or remove {k} from it.")
        raise ScenarioError("'max' is a value of planner fit's command line, not of a workload file", file=file,
                            line=(getattr(written, "lines", None) or {}).get(k), entry=k, hint=hint)
    return written


def fit(*extra: Any, gpu: str | None = None, workload: Any = None, catalog: Any = None, headroom: float | None = None,
        **options: Any) -> FitResult:
    """Find the largest micro-batch, sequence length, context, concurrency or llama.cpp GPU layer
    count that fits a GPU.

    The Python form of ``planner fit``: give exactly one of ``micro_batch``, ``seq_len``,
    ``context``, ``concurrency``, ``gpu_layers`` the value ``'max'``; the other keywords are those of
    :func:`planner.estimate`. ``gpus`` N runs the workload on N such GPUs (training: data parallel
    x tp; inference: N / tp replicas, the answer's concurrency per replica). The search is an
    exponential search for a bracket, then bisection (planner.solve.suggest.largest_fitting), exact
    because memory never decreases as these grow; sequence length and context stop at the
    model's max_position_embeddings, concurrency at vLLM's max_num_seqs or Transformers'
    max_num_batched_tokens. llama.cpp's ``gpu_layers`` (n_gpu_layers, 0 to the layers + 1 for the
    output layer) is scanned from the top (planner.solve.suggest.largest_gpu_layers): moving a layer to
    the GPU also shrinks the compute buffer's host copy, so its need is not assumed monotone.

    Args:
        gpu: a catalog GPU id (``--gpu``; required).
        workload, catalog: as for :func:`planner.estimate`.
        headroom: fraction of the card's CUDA total kept free (default 0.05; not for engine vllm).
        **options: workload keys, as for :func:`planner.estimate`; the target 'max'.

    Returns :class:`FitResult`.

    Raises:
        NoFit: even 1 does not fit (an InfeasibleError; ``.result`` holds the need at 1).
        InfeasibleError: the card lacks a dtype the workload needs by default.
        UnknownKeywordError, UsageError, OptionError, ScenarioError, CatalogError: as for
            :func:`planner.estimate`; UsageError also for not exactly one 'max'.

    Example:
        >>> from planner import fit
        >>> r = fit(model="llama-2-7b", gpu="rtx-4090", task="train", method="qlora", seq_len=1024,
        ...         micro_batch="max")
        >>> r.max_value, r.limited_by
        (2, 'memory')
    """
    check_positional("fit", extra, "none", "fit(gpu='rtx-4090', model='llama-2-7b', task='infer', context='max')")
    from planner.core.errors import UsageError
    from planner.memory import estimate as run_estimate
    from planner.memory.vllm import cuda_total_bytes, for_gpu, vllm_budget
    from planner.solve.usages import capacity_bytes, has_feature, precision_needs, takes_headroom
    from planner.solve.suggest import largest_fitting, largest_gpu_layers
    from planner.workload.inputs import OptionError
    from planner.workload.options import MAX_MICRO_BATCH

    check_keywords("fit", options, workload_keys())
    if gpu is None:
        raise UsageError("fit() needs gpu= (a catalog GPU id)", usage="Missing option '--gpu'")
    cat = catalog_of(catalog)
    card = gpu_of(cat, gpu)
    given = given_options(options)
    if "model" not in given and workload is None:
        raise UsageError("fit() needs model= or workload= (a workload file or mapping)",
                         usage="give --model (or --workload FILE)")
    written = _no_max_written(source := workload_source(workload), given)
    target = _targets(given)[0]
    section, attr = FIT_TARGETS[target]
    given[target] = 1
    task = given.get("task", written.get("task"))
    if task is None:
        task = given["task"] = section
    if isinstance(task, str) and task != section:  # another type: the workload reader refuses it (h24b N1)
        raise OptionError(f"is an option of task {section}, not {task}", entry=target,
                          hint=f"Give --task {section}, or another target for task {task}.")
    # vllm serve's card defaults; the workload reader reads gpus (training: data parallel x tp; inference:
    # N / tp replicas)
    from planner.workload.inference import HF_ONLY_KEYS

    # concurrency max serves many sequences: with no engine named, vLLM, as for a workload of concurrency > 1
    # (planner.workload.inference.default_engine)
    engine_default = (target == "concurrency" and given.get("engine") is None and written.get("engine") is None
                      and not any(k in given or k in written for k in HF_ONLY_KEYS))
    if engine_default:
        given["engine"] = "vllm"
    base = for_gpu(read_workload(cat, workload, given, gpu=card, function="fit", source=source)[0], card)
    if engine_default:
        base = dataclasses.replace(base, infer=dataclasses.replace(base.infer, engine_defaulted=True))
    copies = base.infer.replicas if base.infer is not None else 1
    n = base.gpus  # every GPU the answer uses (all replicas)
    headroom = vllm_headroom(base, headroom)
    missing = [f for f in precision_needs(base) if not has_feature(card, f)]
    if missing:
        # only defaults reach here: a dtype the options or the file chose is refused at its key above
        raise InfeasibleError(f"{card.id} ({card.architecture}) has no {' or '.join(missing)} support, which this "
                              "workload's precision needs by default; use fp16 (recipe mixed-fp16 or pure-fp16; "
                              "weights and kv-dtype fp16) or another GPU.")
    cap = capacity_bytes(card.cuda_total_bytes, headroom)
    arch = base.architecture
    hi = arch.max_position_embeddings if attr in ("seq_len", "context") else MAX_MICRO_BATCH
    seqs_cap = (base.infer.max_num_seqs if attr == "concurrency" and base.infer is not None
                and base.infer.engine == "vllm" and base.infer.max_num_seqs else None)
    if seqs_cap:
        hi = min(hi, seqs_cap)  # vLLM runs at most max_num_seqs sequences at once
    # Transformers prefills at least one token of every sequence per pass: max_num_batched_tokens bounds
    # the concurrency (the workload reader refuses more)
    tokens_cap = (base.infer.max_num_batched_tokens if attr == "concurrency" and base.infer is not None
                  and base.infer.engine == "hf" and base.infer.max_num_batched_tokens else None)
    if tokens_cap:
        hi = min(hi, tokens_cap)

    def make(x: int) -> Workload:
        if section == "train":
            return dataclasses.replace(base, train=dataclasses.replace(base.train, **{attr: x}))
        return dataclasses.replace(base, infer=dataclasses.replace(base.infer, **{attr: x}))

    if attr == "gpu_layers":
        # llama.cpp: n_gpu_layers from 0 (nothing on the GPU but the compute buffer) to n_layer + 1;
        # scanned from the top, so the answer is exact whatever the shape of the need
        hi = arch.num_hidden_layers + 1
        best, need, next_need = largest_gpu_layers(make, cap, hi)
    else:
        best, need, next_need = largest_fitting(make, cap, 1, hi)
    # the estimate of the answer (or, when nothing fits, of the smallest value tried), as 'planner estimate'
    # would make it: its warnings are the answer's (the workload's warnings follow from its options,
    # Workload.warnings; the search stops below those the reader would refuse or warn about,
    # max_position_embeddings and max_num_seqs)
    answer = make(1 if best is None else best)
    answer_est = run_estimate(answer)
    warnings = list(answer_est.warnings)
    note = vllm_context_note(answer, "context" in given or "context" in written)
    common = dict(gpu=card.id, gpus=n, tp=base.tp, replicas=copies if base.infer is not None else None,
                  target=target, capacity_bytes=cap, cuda_total_bytes=card.cuda_total_bytes, headroom=headroom,
                  workload=answer, estimate=answer_est, takes_headroom=takes_headroom(base))
    if best is None:
        _no_fit(cat, card, base, make, answer_est, note, warnings, common, workload=workload, given=given,
                source=source, target=target, attr=attr, cap=cap, headroom=headroom, need=need, hi=hi, n=n)
    longest = arch.max_position_embeddings
    if target == "context" and answer.infer is not None and answer.infer.engine == "vllm" and best < longest:
        # the answer is the context: vllm serve must be told it, or it takes the model's maximum
        most = vllm_budget(answer, answer_est, cuda_total=cuda_total_bytes(card),
                           gpu_id=card.id).longest_model_len(longest)
        note = (f"vLLM: start vllm serve with --max-model-len {best} (the answer): it defaults to the model's "
                f"maximum, {longest:,} tokens"
                + (f", and refuses to start when one sequence that long does not fit the KV cache (at most "
                   f"{most:,} tokens here)" if most < longest else "") + ".")
    limited_by = ((f"vLLM's max_num_seqs ({seqs_cap:,})" if seqs_cap and hi == seqs_cap else
                   f"max_num_batched_tokens ({tokens_cap:,}): Transformers prefills at least one token "
                   "of every sequence per pass" if tokens_cap and hi == tokens_cap else
                   "the model's max_position_embeddings" if attr in ("seq_len", "context") else
                   "the model's layers, all on the GPU" if attr == "gpu_layers"
                   else "the planner's largest batch") if best == hi else "memory")
    per_replica = answer.infer.concurrency if answer.infer is not None else None
    warnings += _fragmentation(need, cap, answer_est)
    speed = card_speed(answer, answer_est, card, cat, None, None)  # the speed model at the answer (planner.speed)
    return FitResult(**common, max_value=best, need_bytes=need, next_need_bytes=next_need, limit=hi,
                     limited_by=limited_by, notes=_answer_notes(answer_est, note),
                     warnings=tuple(warnings), concurrency_per_replica=per_replica,
                     concurrency_total=None if per_replica is None else per_replica * copies, speed=speed)


def _answer_notes(est: Any, note: str | None) -> tuple[str, ...]:
    """The notes fit prints for the answer: first the training framework's release the estimate modelled (its
    stack's 'framework release': planner.workload.releases.release_text; for inference the estimate's own
    notes state the engine's release, planner.workload.engine_releases.version_note), then the estimate's
    notes, then fit's own ``note`` (None: none)."""
    release = dict(est.stack).get("framework release")
    return tuple(([f"Framework release: {release}."] if release else []) + list(est.notes) + ([note] if note else []))


def _release_keys(workload: Any, est: Any) -> dict[str, str]:
    """``framework_version`` (training: the release modelled, given or the default) or ``engine_version``
    (inference with an engine that has releases) for the JSON document; {} otherwise."""
    if workload.train is not None:
        from planner.workload.releases import FRAMEWORK_RELEASES

        t = workload.train
        return {"framework_version": t.framework_version or FRAMEWORK_RELEASES[t.framework].current}
    return {"engine_version": est.engine_version} if est.engine_version else {}


def _fragmentation(need: int, cap: int, est: Any) -> list[str]:
    """The answer fills the card by construction: the warning when what is left cannot hold the
    step's largest transient tensor (planner.memory.fragmentation), else none."""
    from planner.memory.fragmentation import fragmentation_risk

    risk = fragmentation_risk(need=need, spare=cap - need, transient=est.extra.get("largest_transient_bytes", 0))
    return [risk] if risk else []


#: Training changes :func:`what_would_fit` tries on the same GPUs, in order: the first that fits is named.
TRAIN_SAME_GPUS = ({"checkpointing": "full"}, {"zero": 3}, {"zero": 3, "checkpointing": "full"},
                   {"zero": 2, "offload_optimizer": True, "checkpointing": "full"},
                   {"zero": 3, "offload_optimizer": True, "checkpointing": "full"})
#: Training changes tried on more GPUs of the card (ZeRO-3 shards the parameters too).
TRAIN_MORE_GPUS = ({"zero": 3}, {"zero": 3, "checkpointing": "full"},
                   {"zero": 3, "offload_optimizer": True, "checkpointing": "full"})
#: GPU counts tried for more GPUs: one HGX/DGX node at most (planner plan sizes clusters).
MORE_GPU_COUNTS = (2, 4, 8)
#: Inference changes tried on the same GPUs, in order of the quality they keep.
INFER_SAME_GPUS = ({"engine": "vllm"}, {"kv_dtype": "fp8"}, {"weights": "fp8"}, {"weights": "fp8", "kv_dtype": "fp8"},
                   {"weights": "int4-awq"}, {"weights": "int4-awq", "kv_dtype": "fp8"})


def _no_fit(cat: Any, card: Any, base: Workload, make: Any, answer_est: Any, note: str | None, warnings: list[str],
            common: dict[str, Any], *, workload: Any, given: dict[str, Any], source: Any, target: str, attr: str,
            cap: int, headroom: float, need: int | None, hi: int, n: int) -> None:
    """:func:`fit` when even the smallest value does not fit: the need there, the card's capacity, a
    hint (vLLM's gpu_memory_utilization, llama.cpp's GPU layers), what would fit, and the notes and
    warnings estimate gives at that value.

    Raises:
        NoFit: always (its ``.result`` holds the need at the smallest value).
    """
    from planner.memory import estimate as run_estimate
    from planner.memory.vllm import cuda_total_bytes, vllm_budget

    notes = list(_answer_notes(answer_est, note))
    vllm = base.infer is not None and base.infer.engine == "vllm"
    margin = ("its CUDA total; vLLM's gpu_memory_utilization is the margin" if vllm else
              f"{gib_text(card.cuda_total_bytes)} CUDA total less {headroom:.0%} headroom")
    hint = ""
    if vllm:  # set too high or too low, gpu_memory_utilization alone can be what misses
        from planner.solve.suggest import utilization_that_fits

        one = make(1)
        hit = utilization_that_fits(
            lambda u: dataclasses.replace(one, infer=dataclasses.replace(one.infer, gpu_memory_utilization=u)),
            base.infer.gpu_memory_utilization, cap, gpu=card)
        if hit:
            hint = (f" At --gpu-memory-utilization {hit[0]:g} it needs {gib_text(hit[1])} and fits: vLLM keeps "
                    f"1 - gpu_memory_utilization of the card for the CUDA context and graphs.")
        else:
            hint = " No --gpu-memory-utilization makes it fit."
        # why vllm serve would refuse to start at 1, as 'planner estimate --gpu' says it
        one_est = run_estimate(one)
        budget = vllm_budget(one, one_est, cuda_total=cuda_total_bytes(card), gpu_id=card.id)
        warnings += [w for w in budget.problems(context=one.infer.context,
                                                kv_bytes_per_token=one_est.extra.get("kv_bytes_per_token", 0))
                     if w not in warnings]
    result = FitResult(**common, max_value=None, need_bytes=need, next_need_bytes=None, limit=hi,
                       limited_by=None, notes=tuple(notes), warnings=tuple(warnings),
                       concurrency_per_replica=None, concurrency_total=None)
    count = f"{n} x {card.id}"
    laid_out = f"{count} ({result.layout})" if result.layout else count
    # what estimate says of the workload at 1, as the answer's notes and warnings are printed when it fits
    said = "".join(f"\nNote: {x}" for x in notes) + "".join(f"\nWarning: {w}" for w in warnings)
    lowest = 0 if attr == "gpu_layers" else 1
    if (base.infer is not None and base.infer.engine == "llama.cpp" and attr != "gpu_layers"
            and base.infer.gpu_layers is None):
        hint += (" With every layer on the GPU it does not fit; --gpu-layers max finds how many layers fit "
                 "with the rest in host RAM (at a lower context or concurrency, give it a number).")
    would = what_would_fit(cat, workload, given, source, card, headroom_given=headroom)
    result = dataclasses.replace(result, suggestions=tuple(would))
    fix = ("\nWhat would fit (each checked with the memory model):" + "".join(f"\n  - {x}" for x in would)
           if would else
           "\nNothing simple would fit this card (tried ZeRO-3, checkpointing, offload, more GPUs, QLoRA, smaller "
           "weights and KV cache); see 'planner plan' for a machine.")
    raise NoFit(f"Nothing fits: at {target}={lowest} the workload needs {gib_text(need or 0)} per GPU; "
                f"{laid_out} offers {gib_text(cap)} per GPU ({margin}).{hint}{fix}{said}", result)


def _words(updates: dict[str, Any]) -> str:
    """{'zero': 3, 'offload_optimizer': True} -> 'zero: 3 and offload_optimizer: true'."""
    items = [f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in updates.items()]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def what_would_fit(catalog: Any, workload: Any, given: dict[str, Any], source: Any, card: Any, *,
                   headroom_given: float | None = None) -> list[str]:
    """Settings under which a workload that does not fit ``card`` would, each found by building the
    workload with them and running the memory model (planner.solve.suggest.fits), never by a rule of thumb.

    Tried, and the first hit of each group named: training, on the same GPUs, checkpointing, ZeRO-3
    and ZeRO with the optimizer offloaded (:data:`TRAIN_SAME_GPUS`); on more GPUs of the card
    (:data:`MORE_GPU_COUNTS`, :data:`TRAIN_MORE_GPUS`); LoRA then QLoRA on one GPU (for a full
    fine-tune), with and without checkpointing. Inference: engine vllm, an fp8 KV cache, fp8 and
    int4-awq weights (:data:`INFER_SAME_GPUS`, skipping those the card lacks); a replica over more GPUs
    (tp). Last, for both, the cheapest catalog card that holds the workload as written.

    Args:
        catalog: the loaded catalog; workload, source: as fit read them; given: fit's options with
            the target at 1; card: the GPU; headroom_given: the ``headroom`` fit was given (None: 0.05).

    Returns:
        Sentences such as 'zero: 3 and checkpointing: full on 4 x a100-80gb-sxm: 61.20 GiB per GPU'.
    """
    from planner.core.errors import InputError
    from planner.memory.vllm import for_gpu
    from planner.solve.usages import capacity_for
    from planner.solve.suggest import fits as fits_on

    headroom = 0.05 if headroom_given is None else headroom_given

    def try_on(updates: dict[str, Any], gpu: Any = card) -> tuple[bool, int, Any] | None:
        opts = {**given, **updates}
        if opts.get("engine") == "vllm":
            opts.pop("attention", None)
        try:
            w = for_gpu(read_workload(catalog, workload, opts, gpu=gpu, function="fit", source=source)[0], gpu)
        except InputError:
            return None  # a combination the reader refuses (e.g. ZeRO with QLoRA's adapters)
        ok, need = fits_on(w, capacity_for(w, gpu.cuda_total_bytes, headroom), gpu=gpu)
        return ok, need, w

    def keep(updates: dict[str, Any]) -> dict[str, Any]:
        # only what changes: a key already at that value is no news
        written = source[0] if source else {}
        return {k: v for k, v in updates.items() if given.get(k, written.get(k)) != v}

    out: list[str] = []
    task = given.get("task", (source[0] if source else {}).get("task"))
    base = try_on({})
    if base is None:
        return out
    w0 = base[2]
    n = w0.gpus
    if task == "train":
        t = w0.train
        for u in TRAIN_SAME_GPUS:
            u = keep(u)
            if not u or (u.get("zero") and n == 1 and not u.get("offload_optimizer")):
                continue  # ZeRO shards nothing on one GPU
            hit = try_on(u)
            if hit and hit[0]:
                out.append(f"{_words(u)} on {n} x {card.id}: {gib_text(hit[1])} per GPU")
                break
        done = False
        for count in (c for c in MORE_GPU_COUNTS if c > n and c % t.tp == 0):
            for u in TRAIN_MORE_GPUS:
                u = keep(u)
                hit = try_on({**u, "gpus": count})
                if hit and hit[0]:
                    out.append(f"{_words(u) + ' ' if u else ''}on {count} x {card.id} (gpus: {count}): "
                               f"{gib_text(hit[1])} per GPU")
                    done = True
                    break
            if done:
                break
        methods = {"full": ("lora", "qlora"), "lora": ("qlora",)}.get(t.method, ())
        for method in methods:
            found = False
            for ckpt in dict.fromkeys((t.checkpointing, "full")):
                u = {"method": method, "gpus": 1, "zero": 0, "offload_optimizer": False, "checkpointing": ckpt}
                hit = try_on(u)
                if hit and hit[0]:
                    shown = keep({"method": method, "checkpointing": ckpt})
                    out.append(f"{_words(shown)} on 1 x {card.id}: {gib_text(hit[1])} per GPU (trains adapters, "
                               "not every weight)")
                    found = True
                    break
            if found:
                break
    else:
        i = w0.infer
        if i.engine != "llama.cpp":
            for u in INFER_SAME_GPUS:
                u = keep(u)
                if not u or ("fp8" in u.values() and not card.fp8 and u.get("engine") != "vllm"
                             and i.engine != "vllm"):
                    continue
                hit = try_on(u)
                if hit and hit[0]:
                    out.append(f"{_words(u)} on {n} x {card.id}: {gib_text(hit[1])} per GPU")
                    break
            from planner.solve.choices import valid_tp_degrees

            for tp in (x for x in valid_tp_degrees(w0.architecture, 8) if x > i.tp):
                hit = try_on({"tp": tp, "gpus": tp * i.replicas})
                if hit and hit[0]:
                    out.append(f"tp: {tp} (one replica on {tp} x {card.id}): {gib_text(hit[1])} per GPU")
                    break
    # the cheapest card of the catalog that holds it as written
    best = None
    for g in catalog.gpus:
        if g.price_usd is None or g.id == card.id or g.cuda_total_bytes <= card.cuda_total_bytes:
            continue
        if best is not None and g.price_usd >= best[0].price_usd:
            continue
        hit = try_on({}, gpu=g)
        if hit and hit[0]:
            best = (g, hit[1])
    if best is not None:
        g, need = best
        out.append(f"as written on {n} x {g.id} (the cheapest larger card that holds it, ${g.price_usd:,.0f} each): "
                   f"{gib_text(need)} per GPU")
    return out
