"""The measuring runs of planner.validate.measure, as they run in the measuring worker
(planner.validate.worker): each seeds torch's generator, sets its thread count and quiets Transformers'
and bitsandbytes' loggers and Python's warnings, which is why they run in the worker's process and
never in a caller's (issue 33).

What each run measures and how: the public functions of planner.validate.measure, whose arguments
these take.

Importing this module does not import torch; the runs do.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from typing import Any, Iterable, Iterator, Mapping

from planner.validate.builders import (
    OPTIMIZER_CLASSES,
    _int8_state_tensors,
    _quant_state_tensors,
    _quiet_transformers,
    _setup,
    build_int8_model,
    build_model,
    build_optimizer,
    build_qlora_model,
)
from planner.validate.tracker import Window, make_tracker

TRAIN_MODES = ("fp32", "pure-bf16", "amp-bf16")
TRAIN_METHODS = ("full", "lora", "qlora")
INFERENCE_DTYPES = ("fp32", "bf16")
PHASES = ("forward", "backward", "optimizer", "prefill", "decode")


def _train_method(mode: str, optimizer: str, method: str | None, lora_rank: int | None, use_dora: bool,
                  load_in_8bit: bool, steps: int) -> str:
    """:func:`train_step`'s method ('full' unless a LoRA rank is given), its arguments checked.

    Raises:
        ValueError: an unknown mode, optimizer or method, or arguments that do not go together.
    """
    if mode not in TRAIN_MODES:
        raise ValueError(f"mode must be one of {TRAIN_MODES}, not {mode!r}")
    if optimizer not in OPTIMIZER_CLASSES:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZER_CLASSES)}, not {optimizer!r}")
    method = method or ("lora" if lora_rank else "full")
    if method not in TRAIN_METHODS:
        raise ValueError(f"method must be one of {TRAIN_METHODS}, not {method!r}")
    if use_dora and not lora_rank:
        raise ValueError("use_dora needs a lora_rank (DoRA is a LoRA variant)")
    if (method != "full") != bool(lora_rank):
        raise ValueError(f"method {method} needs a lora_rank" if method != "full"
                         else "method full trains every weight: drop lora_rank")
    if method == "qlora" and mode != "pure-bf16":
        raise ValueError("method qlora computes in bf16: use mode pure-bf16")
    if load_in_8bit and (method != "lora" or mode != "pure-bf16"):
        raise ValueError("load_in_8bit is LoRA on an 8-bit base: use method lora and mode pure-bf16")
    if steps < 1:
        raise ValueError("steps must be >= 1")
    return method


def _inference_checks(dtype: str, new_tokens: int) -> None:
    """:func:`inference`'s arguments checked.

    Raises:
        ValueError: an unknown dtype, or fewer than one new token.
    """
    if dtype not in INFERENCE_DTYPES:
        raise ValueError(f"dtype must be one of {INFERENCE_DTYPES}, not {dtype!r}")
    if new_tokens < 1:
        raise ValueError("new_tokens must be >= 1")


def _vocab(model: Any) -> int:
    return int(model.config.vocab_size)


def _dtype_bytes(tensors: Iterable[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tensors:
        key = str(t.dtype).replace("torch.", "")
        out[key] = out.get(key, 0) + t.numel() * t.element_size()
    return out


def _attention_kernels(tracker: Any) -> list[str]:
    names = [n for n in tracker.ops_seen if "attention" in n or "attn" in n]
    return sorted(names)


def _cpu_cuda_notes(tracker: Any, attention: str, dtype_name: str) -> dict[str, Any]:
    """What ran on the CPU that would run differently on a GPU, read from the operators seen."""
    ops = tracker.ops_seen
    notes = []
    backend = None
    if attention == "sdpa":
        fused = [n for n in ops if "scaled_dot_product" in n and "backward" not in n]
        backend = fused[0].split(".")[1] if fused else "math"
        if not fused:
            notes.append("SDPA ran the math path on the CPU (it stores the attention probabilities); "
                         "on CUDA a fused kernel (flash or memory-efficient, both support dropout) "
                         "would store O(s) statistics instead.")
    if "aten.bernoulli_.float" in ops:
        notes.append("Dropout on the CPU keeps a mask in the dtype of the tensor it masks "
                     f"(here {dtype_name} or lower under autocast); CUDA's fused dropout keeps a "
                     "1-byte bool mask.")
    if "bitsandbytes.gemm_4bit.default" in ops:
        notes.append("bitsandbytes' CPU gemm_4bit dequantizes the whole 4-bit weight (bf16) inside the "
                     "operator, unseen by the tracker (cpu_allocator_crosscheck sees it); on CUDA the "
                     "forward runs a fused 4-bit kernel (no buffer) or the same dequantize-then-linear, "
                     "whose buffer max_memory_allocated would count. The backward's dequantization is the "
                     "same Python code on both and is counted.")
    return {"sdpa_backend": backend, "cpu_cuda_differences": notes}


def _breakdown(window: Window, groups: Mapping[str, set[int]]) -> dict[str, int]:
    """Split the live bytes at the window's peak by storage group, the rest by creating phase."""
    snap = window.snapshot or {}
    out = {name: 0 for name in groups}
    for key, (nbytes, phase, _op) in snap.items():
        for name, keys in groups.items():
            if key in keys:
                out[name] += nbytes
                break
        else:
            label = f"other_from_{phase}" if phase else "other"
            out[label] = out.get(label, 0) + nbytes
    out["total"] = sum(nb for nb, _, _ in snap.values())
    return out


@contextlib.contextmanager
def _cpu_allocator_probe(out: dict[str, Any]) -> Iterator[None]:
    """Run the block under torch.profiler with memory profiling and put into ``out`` the peak of
    the CPU allocator's running total above its value at the start. That total sees every
    allocation, including those made and freed inside one kernel, which the dispatch mode cannot
    see. Uses the profiler's event tree (a private API): on failure ``out`` says so."""
    from torch.profiler import ProfilerActivity, profile

    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    prof.__enter__()
    try:
        yield
    finally:
        prof.__exit__(None, None, None)
        try:
            from torch._C._profiler import _EventType

            events = []
            stack = list(prof.profiler.kineto_results.experimental_event_tree())
            while stack:
                node = stack.pop()
                if node.tag == _EventType.Allocation and node.extra_fields.device.type == "cpu":
                    f = node.extra_fields
                    events.append((node.start_time_ns, int(f.total_allocated), int(f.alloc_size)))
                stack.extend(node.children)
            events.sort()
            # the running total carries over from earlier profiling sessions: take it relative
            # to its value just before the first event
            base = events[0][1] - events[0][2] if events else 0
            out["allocator_peak_above_start"] = max((t for _, t, _ in events), default=base) - base
        except Exception as exc:  # noqa: BLE001 - private API; report, do not fail the run
            out["allocator_peak_above_start"] = None
            out["error"] = f"{type(exc).__name__}: {exc}"


def _crosscheck_summary(window: Window, probe: dict[str, Any]) -> dict[str, Any]:
    tracked = window.raw_peak - window.raw_start
    alloc = probe.get("allocator_peak_above_start")
    out = {"tracker_unrounded_peak_above_start": tracked, **probe}
    if alloc is not None:
        out["unseen_by_tracker_bytes"] = alloc - tracked
    return out


def _window_summary(window: Window) -> dict[str, Any]:
    return {
        "start_bytes": window.start,
        "peak_bytes": window.peak,
        "peak_phase": window.peak_phase,
        "peak_op": window.peak_op,
        "end_bytes": window.end,
        "external_bytes": window.external_bytes,
        "phases": window.phase_dict(),
    }


def train_step(
    config: Mapping[str, Any],
    *,
    mode: str,
    micro_batch: int,
    seq_len: int,
    attention: str,
    checkpointing: bool = False,
    lora_rank: int | None = None,
    lora_targets: list[str] | tuple[str, ...] | None = None,
    method: str | None = None,
    double_quant: bool = True,
    prepare_kbit_training: bool = False,
    lora_dropout: float = 0.0,
    use_dora: bool = False,
    load_in_8bit: bool = False,
    optimizer: str = "adamw",
    use_reentrant: bool = False,
    steps: int = 2,
    use_cache: bool = False,
    foreach: bool = True,
    seed: int = 0,
    threads: int = 2,
    crosscheck: bool = False,
    loss_chunks: int = 0,
    optimizer_in_backward: bool = False,
    offload_activations: bool = False,
    compile: bool = False,
) -> dict[str, Any]:
    """:func:`planner.validate.measure.measure_train_step`, run in this process."""
    method = _train_method(mode, optimizer, method, lora_rank, use_dora, load_in_8bit, steps)
    kbit = method == "qlora" or load_in_8bit
    t0 = time.perf_counter()
    torch = _setup(seed, threads)
    _quiet_transformers()
    model, lora_info = _train_model(config, torch, mode=mode, method=method, attention=attention,
                                    checkpointing=checkpointing, use_reentrant=use_reentrant,
                                    double_quant=double_quant, prepare_kbit_training=prepare_kbit_training,
                                    load_in_8bit=load_in_8bit, lora_rank=lora_rank, lora_targets=lora_targets,
                                    lora_dropout=lora_dropout, use_dora=use_dora)
    # 4-bit weights keep their quantization constants outside the parameters
    quant_tensors = (_quant_state_tensors(model) if method == "qlora" else
                     _int8_state_tensors(model) if load_in_8bit else [])
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    optimizer_name = optimizer
    hooks, optimizers = _train_optimizers(model, trainable, optimizer_name, optimizer_in_backward, foreach)
    if compile:
        _compile_layers(model)
    vocab = _vocab(model)
    autocast = (
        functools.partial(torch.autocast, "cpu", dtype=torch.bfloat16)
        if mode == "amp-bf16" else contextlib.nullcontext
    )

    if compile:
        # trace and partition every layer once, before anything is counted
        with autocast():
            warm = _forward_loss(model, torch.randint(0, vocab, (micro_batch, seq_len)),
                                 torch.randint(0, vocab, (micro_batch, seq_len)), use_cache=use_cache,
                                 loss_chunks=loss_chunks, offload=None)
        warm.backward()
        del warm
        for p in trainable:
            p.grad = None
    tracker = make_tracker()
    if compile:
        model._tracker_holder["tracker"] = tracker
    gc.collect()
    step_results = []
    with tracker:
        tracker.track_existing(params, "<parameters>")
        tracker.track_existing(model.buffers(), "<buffers>")
        tracker.track_existing(quant_tensors, "<quant_state>")
        param_keys = (tracker.keys_of(params) | tracker.keys_of(model.buffers())
                      | tracker.keys_of(quant_tensors))
        for step in range(steps):
            step_results.append(_train_step(
                torch, tracker, model, trainable, optimizers, param_keys, autocast=autocast, vocab=vocab,
                micro_batch=micro_batch, seq_len=seq_len, use_cache=use_cache, loss_chunks=loss_chunks,
                offload_activations=offload_activations, optimizer_in_backward=optimizer_in_backward,
                crosscheck=crosscheck and step == steps - 1))
    for hook in hooks:
        hook.remove()

    workload = {
        "mode": mode, "micro_batch": micro_batch, "seq_len": seq_len, "attention": attention,
        "checkpointing": bool(checkpointing), "lora": lora_info, "steps": steps,
        "use_cache": use_cache, "optimizer": OPTIMIZER_CLASSES[optimizer_name], "foreach": foreach,
        **({"use_reentrant": True} if use_reentrant else {}),
        "method": method,
        **({"double_quant": bool(double_quant)} if method == "qlora" else {}),
        **({"load_in_8bit": True} if load_in_8bit else {}),
        **({"prepare_kbit_training": bool(prepare_kbit_training)} if kbit else {}),
        **({"loss_chunks": int(loss_chunks)} if loss_chunks > 1 else {}),
        **({"optimizer_in_backward": True} if optimizer_in_backward else {}),
        **({"offload_activations": True} if offload_activations else {}),
        **({"compile": "aot min_cut_rematerialization_partition per decoder layer"} if compile else {}),
    }
    return _train_result(workload, model, params, trainable, quant_tensors, tracker, step_results, kbit=kbit,
                         attention=attention, mode=mode, crosscheck=crosscheck, t0=t0)


def _train_model(config: Mapping[str, Any], torch: Any, *, mode: str, method: str, attention: str,
                 checkpointing: bool, use_reentrant: bool, double_quant: bool, prepare_kbit_training: bool,
                 load_in_8bit: bool, lora_rank: int | None, lora_targets: list[str] | tuple[str, ...] | None,
                 lora_dropout: float, use_dora: bool) -> tuple[Any, dict[str, Any] | None]:
    """The model :func:`measure_train_step` trains, in train mode, with its LoRA adapters (peft)
    when ``lora_rank`` is given; and the adapters' description (None without)."""
    kbit = method == "qlora" or load_in_8bit
    param_dtype = torch.bfloat16 if mode == "pure-bf16" else torch.float32
    if kbit:
        model = (build_qlora_model(config, attention=attention, double_quant=double_quant) if method == "qlora"
                 else build_int8_model(config, attention=attention))
        if prepare_kbit_training:
            from peft import prepare_model_for_kbit_training

            model = prepare_model_for_kbit_training(
                model, use_gradient_checkpointing=bool(checkpointing),
                gradient_checkpointing_kwargs={"use_reentrant": bool(use_reentrant)})
        elif checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": bool(use_reentrant)})
    else:
        model = build_model(config, attention=attention, dtype=param_dtype)
        if checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": bool(use_reentrant)})
    model.train()
    lora_info = None
    if lora_rank:
        from peft import LoraConfig, get_peft_model

        targets = list(lora_targets) if lora_targets else _default_lora_targets(config)
        fan_in_fan_out = str(config.get("model_type")) == "gpt2"
        lcfg = LoraConfig(r=int(lora_rank), lora_alpha=2 * int(lora_rank), target_modules=targets,
                          lora_dropout=float(lora_dropout), bias="none", task_type="CAUSAL_LM",
                          fan_in_fan_out=fan_in_fan_out, use_dora=bool(use_dora))
        model = get_peft_model(model, lcfg)
        model.train()
        lora_info = {"rank": int(lora_rank), "targets": targets, "dropout": float(lora_dropout),
                     **({"use_dora": True} if use_dora else {})}
    return model, lora_info


def _train_optimizers(model: Any, trainable: list[Any], optimizer_name: str, optimizer_in_backward: bool,
                      foreach: bool) -> tuple[list[Any], list[Any]]:
    """The optimizers of :func:`measure_train_step` and the gradient hooks that step them: one
    optimizer for every trainable parameter and no hooks, or with ``optimizer_in_backward`` one per
    parameter, stepped (and its gradient freed) by a post-accumulate-grad hook."""
    if optimizer_in_backward:
        # torchtune training/memory.py: {p: optimizer([p])} and a post-accumulate-grad hook per parameter
        per_param = {p: build_optimizer(optimizer_name, [p], model=model, foreach=foreach) for p in trainable}

        def _step_in_backward(p: Any) -> None:
            per_param[p].step()
            per_param[p].zero_grad(set_to_none=True)

        hooks = [p.register_post_accumulate_grad_hook(_step_in_backward) for p in trainable]
        optimizers = list(per_param.values())
    else:
        hooks = []
        optimizers = [build_optimizer(optimizer_name, trainable, model=model, foreach=foreach)]
    return hooks, optimizers


def _train_step(torch: Any, tracker: Any, model: Any, trainable: list[Any], optimizers: list[Any],
                param_keys: set[int], *, autocast: Any, vocab: int, micro_batch: int, seq_len: int,
                use_cache: bool, loss_chunks: int, offload_activations: bool, optimizer_in_backward: bool,
                crosscheck: bool) -> dict[str, Any]:
    """One training step of :func:`measure_train_step` in one tracker window (forward, backward and
    optimizer phases); its window summary with the loss, the breakdown at the peak, the gradient and
    optimizer-state bytes (and the CPU allocator's count with ``crosscheck``)."""
    gc.collect()
    probe: dict[str, Any] = {}
    probing = _cpu_allocator_probe(probe) if crosscheck else contextlib.nullcontext()
    probing.__enter__()
    window = tracker.begin_window()
    with tracker.phase("forward"):
        input_ids = torch.randint(0, vocab, (micro_batch, seq_len))
        labels = input_ids.clone()
        with autocast():
            loss = _forward_loss(model, input_ids, labels, use_cache=use_cache, loss_chunks=loss_chunks,
                                 offload=(_offload_hooks(tracker, param_keys) if offload_activations
                                          else None))
    with tracker.phase("backward"):
        loss.backward()
        loss_value = float(loss.detach())
        del loss, input_ids, labels
    with tracker.phase("optimizer"):
        grads = [p.grad for p in trainable if p.grad is not None]
        grad_keys = tracker.keys_of(grads)
        grad_bytes = tracker.bytes_of(grads)
        del grads
        if not optimizer_in_backward:
            optimizers[0].step()
        state_tensors = [v for opt_ in optimizers for st in opt_.state.values()
                         for k, v in st.items() if torch.is_tensor(v) and k != "step"]
        step_tensors = [st["step"] for opt_ in optimizers for st in opt_.state.values()
                        if torch.is_tensor(st.get("step"))]
        # 'step' counters are CPU scalars even when training on CUDA: not device memory
        tracker.exclude(step_tensors)
        state_keys = tracker.keys_of(state_tensors)
        state_bytes = tracker.bytes_of(state_tensors)
        if not optimizer_in_backward:
            optimizers[0].zero_grad(set_to_none=True)
    window = tracker.end_window()
    probing.__exit__(None, None, None)
    summary = _window_summary(window)
    if crosscheck:
        summary["cpu_allocator_crosscheck"] = _crosscheck_summary(window, probe)
    summary["loss"] = loss_value
    summary["breakdown_at_peak"] = _breakdown(window, {
        "parameters": param_keys,
        "gradients": grad_keys,
        "optimizer_state": state_keys,
    })
    summary["gradient_bytes"] = grad_bytes
    summary["optimizer_state_bytes"] = state_bytes
    opt = window.phases["optimizer"]
    summary["optimizer_step_extra_bytes"] = opt.peak - opt.start
    del state_tensors, step_tensors
    return summary


def _train_result(workload: dict[str, Any], model: Any, params: list[Any], trainable: list[Any],
                  quant_tensors: list[Any], tracker: Any, step_results: list[dict[str, Any]], *, kbit: bool,
                  attention: str, mode: str, crosscheck: bool, t0: float) -> dict[str, Any]:
    """:func:`measure_train_step`'s report: the workload, the model's counts, the last step's peak and
    breakdown, the first step's, the losses and the notes."""
    last = step_results[-1]
    result = {
        "kind": "train",
        "workload": workload,
        "model": {
            "class": type(model).__name__,
            "parameters": sum(p.numel() for p in params),
            "trainable_parameters": sum(p.numel() for p in trainable),
            "parameter_bytes_by_dtype": _dtype_bytes(params),
            "trainable_bytes_by_dtype": _dtype_bytes(trainable),
            "parameter_bytes_counted": tracker.bytes_of(params),
            "buffer_bytes_counted": tracker.bytes_of(model.buffers()),
            **({"quant_state_bytes_counted": tracker.bytes_of(quant_tensors),
                "quant_state_tensors": len(quant_tensors)} if kbit else {}),
        },
        "peak_bytes": last["peak_bytes"],
        "peak_phase": last["peak_phase"],
        "peak_op": last["peak_op"],
        "start_bytes": last["start_bytes"],
        "phases": last["phases"],
        "breakdown_at_peak": last["breakdown_at_peak"],
        "gradient_bytes": last["gradient_bytes"],
        "optimizer_state_bytes": last["optimizer_state_bytes"],
        "optimizer_step_extra_bytes": last["optimizer_step_extra_bytes"],
        "external_bytes": last["external_bytes"],
        "first_step": {k: step_results[0][k] for k in (
            "peak_bytes", "peak_phase", "peak_op", "start_bytes", "end_bytes",
            "optimizer_step_extra_bytes", "phases")},
        "losses": [s["loss"] for s in step_results],
        "attention_ops": _attention_kernels(tracker),
        **_cpu_cuda_notes(tracker, attention, "float32" if mode != "pure-bf16" else "bfloat16"),
        **({"cpu_allocator_crosscheck": last["cpu_allocator_crosscheck"]} if crosscheck else {}),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    return result


def _forward_loss(model: Any, input_ids: Any, labels: Any, *, use_cache: bool, loss_chunks: int,
                  offload: Any) -> Any:
    """The training loss of one micro-batch: Transformers' own (``labels=``), or the logits outside the
    offloading hooks and Transformers' loss on them, or torchtune's chunked cross-entropy; with the
    layers compiled (``_compiled_loss`` set by :func:`_compile_layers`), Transformers' loss compiled as
    one function of the logits, as it is inside a compiled model."""
    import torch

    compiled_loss = getattr(model, "_compiled_loss", None)
    if compiled_loss is not None and loss_chunks <= 1:
        ctx = offload if offload is not None else contextlib.nullcontext()
        with ctx:
            logits = model(input_ids=input_ids, use_cache=use_cache).logits
        return compiled_loss(logits, labels)
    if loss_chunks <= 1 and offload is None:
        return model(input_ids=input_ids, labels=labels, use_cache=use_cache).loss
    ctx = offload if offload is not None else contextlib.nullcontext()
    if loss_chunks <= 1:
        with ctx:
            logits = model(input_ids=input_ids, use_cache=use_cache).logits
        loss = model.loss_function(logits, labels, vocab_size=logits.shape[-1])
        del logits
        return loss
    with ctx:
        hidden = model.get_decoder()(input_ids=input_ids, use_cache=use_cache).last_hidden_state
        head = model.get_output_embeddings()
        chunks = [head(c) for c in hidden.tensor_split(loss_chunks, dim=1)]
        del hidden
    # torchtune: labels shifted by appending ignore_index, summed per chunk over the fp32 upcast
    shifted = torch.hstack((labels[..., 1:], torch.full_like(labels[..., :1], -100)))
    label_chunks = [lc.reshape(-1) for lc in shifted.tensor_split(loss_chunks, dim=1)]
    total = (shifted != -100).sum()
    loss = 0.0
    for ch, lc in zip(chunks, label_chunks):
        loss = loss + torch.nn.functional.cross_entropy(ch.reshape(-1, ch.shape[-1]).float(), lc, ignore_index=-100,
                                                        reduction="sum")
    del chunks  # torchtune's 'del logits': free logits otherwise it peaks backward memory
    return loss / total


def _offload_hooks(tracker: Any, param_keys: set[int]) -> Any:
    """Saved-tensor hooks that behave like ``torch.autograd.graph.save_on_cpu`` on a GPU, for the CPU
    tracker: each saved tensor other than a parameter or buffer is copied (outside the tracker) into a
    host tensor the tracker never counts, and copied back, counted, when backward unpacks it."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    def pack(t: Any) -> Any:
        st = t.untyped_storage()
        entry = tracker._live.get(st._cdata)
        if entry is not None and entry.uid in param_keys:
            return t
        with _disable_current_modes():
            host = t.detach().clone()
        tracker.exclude([host])
        return ("host", host, t.requires_grad)

    def unpack(packed: Any) -> Any:
        if isinstance(packed, tuple) and len(packed) == 3 and packed[0] == "host":
            return packed[1].clone()
        return packed

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def _compile_layers(model: Any) -> None:
    """Replace every decoder layer by its AOTAutograd compilation: the joint graph traced at the first
    call (functorch ``aot_module``, no dynamo), partitioned by the min-cut partitioner, run by identity
    compilers (the traced graphs as they are). The caller runs one warm-up step outside the tracker, so
    the tracing is not counted."""
    from functorch.compile import aot_function, aot_module, make_boxed_func
    from torch._functorch.partitioners import min_cut_rematerialization_partition
    from torch._inductor.decomposition import select_decomp_table
    from torch.utils._python_dispatch import _disable_current_modes

    # inductor partitions the graph after its own decompositions (compile_fx: select_decomp_table()), which
    # break log_softmax into the reductions and pointwise ops the partitioner may recompute
    kw = dict(fw_compiler=lambda g, _: make_boxed_func(g), bw_compiler=lambda g, _: make_boxed_func(g),
              partition_fn=min_cut_rematerialization_partition, decompositions=select_decomp_table())
    layers = model.get_decoder().layers
    for i, layer in enumerate(layers):
        layers[i] = aot_module(layer, **kw)
    holder: dict[str, Any] = {"tracker": None}
    object.__setattr__(model, "_tracker_holder", holder)

    def fused(gm: Any, _inputs: Any) -> Any:
        # the loss as inductor runs it on a GPU: a few fused kernels whose intermediates never become
        # tensors; only what a graph returns is allocated (registered with the tracker as it appears)
        def run(args: Any) -> Any:
            with _disable_current_modes():
                out = gm(*args)
            if holder["tracker"] is not None:
                holder["tracker"].track_existing([o for o in out if hasattr(o, "untyped_storage")], "<fused loss>")
            return out
        run._boxed_call = True
        return run

    loss_kw = {**kw, "fw_compiler": fused, "bw_compiler": fused}
    vocab = model.get_output_embeddings().weight.shape[0]
    loss_fn = model.loss_function
    object.__setattr__(model, "_compiled_loss",
                       aot_function(lambda lg, lb: loss_fn(lg, lb, vocab_size=vocab), **loss_kw))


def _default_lora_targets(config: Mapping[str, Any]) -> list[str]:
    """peft's default targets for the config's model type: the planner's one rule
    (planner.workload.training.default_lora_targets, framework transformers)."""
    from planner.model.architecture import from_hf_config
    from planner.workload.training import default_lora_targets

    return list(default_lora_targets(from_hf_config(config), "transformers"))


def inference(
    config: Mapping[str, Any],
    *,
    dtype: str,
    batch: int,
    prompt_len: int,
    new_tokens: int,
    attention: str,
    seed: int = 0,
    threads: int = 2,
    crosscheck: bool = False,
) -> dict[str, Any]:
    """:func:`planner.validate.measure.measure_inference`, run in this process."""
    _inference_checks(dtype, new_tokens)
    t0 = time.perf_counter()
    torch = _setup(seed, threads)
    _quiet_transformers()
    from transformers import DynamicCache

    tdtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    model = build_model(config, attention=attention, dtype=tdtype)
    model.eval()
    params = list(model.parameters())
    vocab = _vocab(model)
    tracker = make_tracker()
    gc.collect()
    with tracker, torch.no_grad():
        tracker.track_existing(params, "<parameters>")
        tracker.track_existing(model.buffers(), "<buffers>")
        param_keys = tracker.keys_of(params) | tracker.keys_of(model.buffers())
        probe: dict[str, Any] = {}
        probing = _cpu_allocator_probe(probe) if crosscheck else contextlib.nullcontext()
        probing.__enter__()
        window = tracker.begin_window()
        with tracker.phase("prefill"):
            prompt = torch.randint(0, vocab, (batch, prompt_len))
            cache = DynamicCache(config=model.config)
            out = model(input_ids=prompt, cache=cache, use_cache=True, logits_to_keep=1)
            next_ids = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
            del out, prompt
        cache_after_prefill = _cache_tensors(cache)
        prefill_cache_bytes = tracker.bytes_of(cache_after_prefill)
        cache_keys = tracker.keys_of(cache_after_prefill)
        del cache_after_prefill
        with tracker.phase("decode"):
            for _ in range(new_tokens - 1):
                out = model(input_ids=next_ids, cache=cache, use_cache=True)
                next_ids = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
                del out
        cache_tensors = _cache_tensors(cache)
        cache_keys |= tracker.keys_of(cache_tensors)
        cache_bytes = tracker.bytes_of(cache_tensors)
        cache_tokens = int(cache.get_seq_length())
        del cache_tensors
        window = tracker.end_window()
        probing.__exit__(None, None, None)
        del cache, next_ids
    summary = _window_summary(window)
    return {
        "kind": "inference",
        "workload": {"dtype": dtype, "batch": batch, "prompt_len": prompt_len,
                     "new_tokens": new_tokens, "attention": attention},
        "model": {
            "class": type(model).__name__,
            "parameters": sum(p.numel() for p in params),
            "parameter_bytes_by_dtype": _dtype_bytes(params),
            "parameter_bytes_counted": tracker.bytes_of(params),
            "buffer_bytes_counted": tracker.bytes_of(model.buffers()),
        },
        "peak_bytes": summary["peak_bytes"],
        "peak_phase": summary["peak_phase"],
        "peak_op": summary["peak_op"],
        "start_bytes": summary["start_bytes"],
        "phases": summary["phases"],
        "breakdown_at_peak": _breakdown(window, {"parameters": param_keys, "kv_cache": cache_keys}),
        "kv_cache_bytes_after_prefill": prefill_cache_bytes,
        "kv_cache_bytes_final": cache_bytes,
        "kv_cache_tokens_final": cache_tokens,
        "external_bytes": summary["external_bytes"],
        "attention_ops": _attention_kernels(tracker),
        **_cpu_cuda_notes(tracker, attention, str(tdtype).replace("torch.", "")),
        **({"cpu_allocator_crosscheck": _crosscheck_summary(window, probe)} if crosscheck else {}),
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _cache_tensors(cache: Any) -> list[Any]:
    out = []
    for layer in getattr(cache, "layers", []):
        for name in ("keys", "values"):
            t = getattr(layer, name, None)
            if t is not None and hasattr(t, "untyped_storage"):
                out.append(t)
    return out
