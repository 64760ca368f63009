"""Assemble the memory model: one :class:`Estimate` per workload.

Training peak per GPU = always-live states + max(forward-backward, optimizer step), where the
forward-backward phase holds the activations, the logits and loss, and buffers in flight,
and the optimizer step holds the gradients (when they are not persistent) and the step's
temporaries. Inference peak = weights + KV cache + the prefill working set.
"""

from __future__ import annotations


import math
from dataclasses import replace
from fractions import Fraction

from planner.model.architecture import Architecture
from planner.memory.activations import ActivationBytes, activation_parts
from planner.memory.compiled import compile_not_modelled
from planner.memory.dora import DORA_SRC, dora_temporaries
from planner.memory.saved import KORTHIKANTI, Regime, regime_for
from planner.memory.unsloth import UNSLOTH_BACKWARD_SRC, unsloth_backward_working_set, unsloth_kernels_apply
from planner.memory.breakdown import GPU, HOST, Component, Estimate, phase_total
from planner.memory.fragmentation import largest_transient
from planner.memory.host import SHARD_BYTES, checkpoint_dtype, host_components
from planner.memory.loss import (ACCELERATE_FP32_SRC, HEAD_BACKWARD_SRC, RETURNED_LOGITS_NAME, LossSpec,
                                 head_backward_bytes, loss_bytes, loss_spec, returned_logits_copy)
from planner.memory.inference import (
    KV_SRC,
    kv_bytes_per_token,
    kv_cache_bytes,
    logits_inference_bytes,
    prefill_peak_bytes,
)
from planner.memory.overheads import RuntimeOverheads, allocator_component, runtime_components
from planner.memory.quant import int8_training_buffer_bytes, weight_bytes
from planner.workload.frameworks import FRAMEWORK_SPECS, TORCHTUNE_OFFLOAD_STASH, Framework, release_what
from planner.workload.recipes import OPTIMIZERS, RECIPES, Recipe
from planner.workload.releases import release_text
from planner.memory.load_peaks import load_peak_components, load_pool, load_pool_component, unsloth_rope_components
from planner.memory.train_cache import NAME as CACHE_NAME, cache_extra, training_cache_component
from planner.workload.inference import ENGINE_DEFAULT_NOTE
from planner.core.units import GiB
from planner.memory.states import (
    BACKWARD,
    HEAD_BACKWARD,
    adapter_parameters,
    lora_parameters,
    model_state_components,
)
from planner.workload.options import Inference, Training
from planner.workload.spec import Workload

GRAD_ACCUM_NOTE = ("Gradient accumulation adds no activation memory, only micro-batches per optimizer step; the "
                   "gradients stay allocated from one micro-batch to the next (counted as always live).")
GRAD_ACCUM_OFFLOAD_NOTE = ("Gradient accumulation adds no activation memory, only micro-batches per optimizer step; "
                           "with ZeRO-Offload DeepSpeed also keeps gradient accumulation buffers in host RAM "
                           "(see the host components).")
QUANT_SRC = {
    "nf4": "QLoRA, Dettmers et al. 2023, sec. 3",
    "int8": "LLM.int8(), Dettmers et al. 2022, sec. 3",
    "int4-gptq": "GPTQ, Frantar et al. 2023; AutoGPTQ packing",
    "int4-awq": "AWQ, Lin et al. 2024; AutoAWQ packing",
    "fp8": "vLLM docs, FP8 W8A8",
    "mxfp4": "OCP Microscaling Formats (MX) v1.0, sec. 5.3 (MXFP4); gpt-oss model card",
    "compressed-tensors": "compressed-tensors format (llm-compressor); vLLM compressed_tensors schemes (W8A8 FP8 / "
                          "INT8, WNA16)",
}


def estimate(workload: Workload, overheads: RuntimeOverheads | None = None, *, device: str = "cuda") -> Estimate:
    """The memory need of ``workload`` per GPU and per machine's host RAM.

    Args:
        workload: a validated workload (see planner.workload.spec).
        overheads: runtime assumptions (default: :class:`RuntimeOverheads`), or a calibration.
        device: 'cuda' (what the planner sizes), or 'cpu' to predict the validation harness's CPU
            measurements, whose dropout keeps its mask in the masked tensor's dtype.

    Returns:
        An :class:`Estimate` with every component, its formula and source.
    """
    overheads = overheads or RuntimeOverheads()
    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda' or 'cpu', not {device!r}")
    if workload.task == "train":
        return _train(workload, overheads, cpu=device == "cpu")
    est = _infer(workload, overheads, cpu=device == "cpu")
    if workload.infer is not None and workload.infer.engine_defaulted:
        est = replace(est, notes=est.notes + (ENGINE_DEFAULT_NOTE,))
    if workload.infer is not None:
        est = _with_engine_version(est, workload.infer)
    return est


def _with_engine_version(est: Estimate, i) -> Estimate:
    """``est`` with the engine release modelled stated: a note and :attr:`Estimate.engine_version`
    (planner.workload.engine_releases)."""
    from planner.workload.engine_releases import engine_line, version_note

    line = engine_line(i.engine)
    note = version_note(i.engine, i.engine_version, i.engine_version is not None)
    if line is None or note is None:
        return est
    return replace(est, notes=est.notes + (note,), engine_version=i.engine_version or line.current,
                   engine_release=note)


#: vLLM's MXFP4 MoE kernels pad and re-lay the experts out when they load them (Marlin on GPUs
#: without FP4, its Triton backend on Hopper). gpt-oss-120b on one H100 logs "Model loading took
#: 65.9651 GiB" (vLLM 0.10.1, Marlin; vllm-project/vllm#23278) and 64.38 GiB (0.14.1, Triton;
#: #33155) against 60.77 GiB of checkpoint weights: +9.16 % and +6.4 % of the 56.73 GiB of experts.
#: The larger is assumed.
VLLM_MXFP4_RELAYOUT_FRACTION = 0.0916

#: What vLLM's start-up logs of gpt-oss-120b on one H100 leave below the budget this model computes
#: once the re-layout is counted: 4.69 GiB (vllm#23278, KV -2.14 GiB at utilization 0.9) and
#: 4.84 GiB (#27508, KV 1.71 GiB at 0.95 with max_num_batched_tokens 1024). The cause (the MXFP4
#: MoE kernels' profiling workspace, compilation) is not attributed; the larger is kept as a term.
VLLM_GPT_OSS_UNEXPLAINED_BYTES = int(4.84 * GiB)


def _vllm_mxfp4_relayout(wb) -> Component:
    """The extra bytes vLLM's MXFP4 expert kernels hold beyond the checkpoint's experts (measured)."""
    experts = wb.packed + wb.constants
    extra = int(round(experts * VLLM_MXFP4_RELAYOUT_FRACTION))
    return Component("weights: vLLM MXFP4 expert re-layout", GPU, extra,
                     f"{VLLM_MXFP4_RELAYOUT_FRACTION:.2%} x {experts:,} B of MXFP4 experts",
                     "measured: gpt-oss-120b on an H100 loads 65.97 GiB (vLLM 0.10.1, vllm#23278) and 64.38 GiB "
                     "(0.14.1, #33155) for 60.77 GiB of checkpoint weights")


def _vllm_mla_absorbed(arch, tp: int, dtype_bytes: int) -> Component:
    """vLLM's MLA attention keeps 16-bit copies of each layer's kv_b_proj split into W_UK_T and W_UV
    (made contiguous, dequantized from an fp8 or int8 kv_b_proj) for its decode path, beside
    kv_b_proj itself, which its prefill path still uses (vLLM MLACommonImpl.process_weights_after_loading,
    vllm/v1/attention/backends/mla/common.py: "we just store fp16/bf16 copies and perform the bmm's
    in 16-bit")."""
    heads = -(-arch.num_attention_heads // tp)
    per_layer = heads * arch.kv_lora_rank * (arch.qk_nope_head_dim + arch.v_head_dim)
    n = per_layer * arch.num_hidden_layers * dtype_bytes
    return Component("weights: vLLM MLA W_UK_T and W_UV (16-bit copies of kv_b_proj)", GPU, n,
                     f"L={arch.num_hidden_layers} x {heads} heads x kv_lora_rank {arch.kv_lora_rank} x "
                     f"(qk_nope {arch.qk_nope_head_dim} + v_head_dim {arch.v_head_dim}) x {dtype_bytes} B"
                     + (f" (per GPU, t={tp})" if tp > 1 else ""),
                     "vLLM vllm/v1/attention/backends/mla/common.py MLACommonImpl.process_weights_after_loading")


def mtp_note(arch) -> str | None:
    """What a DeepSeek-V3 checkpoint's multi-token-prediction modules are and why they are not counted."""
    if not arch.mtp_layers:
        return None
    return (f"The checkpoint also ships {arch.mtp_layers} multi-token-prediction module(s) (num_nextn_predict_layers): "
            f"{arch.mtp_parameters:,} parameters, plus copies of the embedding and head "
            f"({arch.mtp_checkpoint_copies:,}), in its files but not in the model: Transformers' DeepseekV3ForCausalLM "
            "and vLLM's main model skip them; they load only for MTP speculative decoding (Transformers "
            "generate(use_mtp=True), vLLM's deepseek_mtp speculative config), which is not sized here.")


def _infer_vllm(w: Workload, comps: list[Component], later: list[Component], overheads: RuntimeOverheads) -> Estimate:
    """An inference workload served by vLLM: what the card must hold for vLLM to keep its KV cache.

    vLLM sizes everything from ``gpu_memory_utilization`` (planner.memory.vllm): the weights (with
    the rotary cache), the KV cache, its profiling run's peak and the non-PyTorch memory must fit in
    ``util`` x the CUDA total, and the CUDA context in the rest (vLLM refuses to start when the free
    memory after the context is below ``util`` x total). So the card needs a CUDA total of
    max(S / util, context / (1 - util)) with S the first four; plan, fit and compare hold it against the
    card's CUDA total (:attr:`planner.catalog.gpus.Gpu.cuda_total_bytes`), as they do every need. Settings not given take ``vllm serve``'s defaults for cards below 70 GiB (2,048 batched
    tokens, 256 sequences); larger non-A100 cards default to 8,192 and 1,024, which a workload
    should then state.

    ``comps`` are the components before the KV cache (weights, MXFP4 re-layout), ``later`` those
    after it (gpt-oss's measured start-up term); the KV cache is sized here, once.
    """
    from planner.memory.vllm import default_settings, rope_cache_bytes, sampler_bytes_per_entry, v0_engine, vllm_budget

    arch, i = w.architecture, w.infer
    assert i is not None
    c = 4 if i.weights == "fp32" else 2
    rope = rope_cache_bytes(arch, c)
    runtime = runtime_components(overheads, gpus=w.group_gpus)
    probe = Estimate(workload_name=w.name, model_id=w.model_id, task=w.task, parameters=arch.parameters,
                     trainable_parameters=0, recipe=i.weights, recipe_description="",
                     components=tuple(comps + later + runtime), gpus=w.gpus, gpus_per_node=w.node_gpus,
                     extra={"kv_bytes_per_token": kv_bytes_per_token(arch, i.kv_dtype, i.tp, "vllm")})
    tokens, seqs = default_settings(w, large_card=False)
    b = vllm_budget(w, probe, cuda_total=0, gpu_id="", max_num_batched_tokens=i.max_num_batched_tokens or tokens,
                    max_num_seqs=i.max_num_seqs or seqs)
    # The KV cache as vLLM allocates it: whole 16-token blocks per layer, and for sliding-window
    # layers the window plus one chunk of batched tokens (planner.memory.vllm.SequenceKv), so the
    # sequences `estimate --gpu` says fit and the concurrency `fit` finds are the same figure.
    seq = b.sequence
    assert seq is not None
    comps = comps + [Component(
        "KV cache", GPU, i.concurrency * seq.bytes(i.context),
        f"{i.concurrency} seq x {seq.bytes(i.context):,} B per sequence = {seq.formula(i.context)}"
        + (f" (per GPU, t={i.tp})" if i.tp > 1 else ""),
        KV_SRC + "; vLLM vllm/v1/kv_cache_interface.py (FullAttentionSpec, SlidingWindowSpec.max_memory_usage_bytes)")
    ] + later
    if rope:
        comps.append(Component("rotary cos/sin cache (vLLM)", GPU, rope,
                               f"max_position_embeddings {arch.max_position_embeddings:,} x rotary dim x {c} B",
                               "vLLM rotary_embedding.py (cos_sin_cache in the model dtype)"))
    comps.append(Component("profiling-run peak (vLLM)", GPU, b.profile_peak,
                           f"max(forward of {b.max_num_batched_tokens:,} tokens, hidden states + sampler over "
                           f"{b.max_num_seqs:,} rows of V={arch.vocab_size:,} x "
                           f"{sampler_bytes_per_entry(v0_engine(w), c)} B)",
                           "vLLM V0 worker/model_runner.py profile_run, sampler sort (planner.memory.vllm)"
                           if v0_engine(w) else "vLLM V1 gpu_model_runner.py profile_run / _dummy_sampler_run",
                           phase="prefill"))
    extra = {"kv_bytes_per_token": kv_bytes_per_token(arch, i.kv_dtype, i.tp, "vllm")}
    allocated, _ = phase_total(comps, GPU, kinds=("allocated",))
    s = allocated + b.non_torch
    context = sum(x.bytes for x in runtime if x.name.startswith("CUDA context"))
    util = i.gpu_memory_utilization
    # vLLM needs util x T >= S (its budget) and, at start-up, free memory T - context >= util x T
    # (vllm/v1/worker/gpu_worker.py init_device), i.e. T >= context / (1 - util). LoRA slots that vLLM 0.7.x
    # leaves out of its budget (b.lora_outside, planner.memory.vllm_lora) must fit beside the context there.
    # exact in rationals (Fraction of the float): no rounding of the utilization to a millionth, which
    # made 0 < util < 5e-7 and 1 - 5e-7 < util < 1 divide by zero
    u = Fraction(util)
    need = max(math.ceil((s - b.lora_outside) / u), math.ceil((context + b.lora_outside) / (1 - u)))
    reserve = need - s - context
    comps = comps + runtime + [
        Component("vLLM reserve (1 - gpu_memory_utilization)", GPU, reserve,
                  f"max(S / {util:g}, context / (1 - {util:g})) - S - context, S = {s:,} B (weights, KV, profile "
                  "peak, non-torch); CUDA graphs also live here",
                  "vLLM docs, engine arguments (gpu_memory_utilization); gpu_worker.py start-up check", kind="headroom"),
    ]
    comps += _infer_host(w)
    if i.enable_lora:
        from planner.memory.vllm_lora import lora_host_bytes

        n, text = lora_host_bytes(arch, adapters=i.max_cpu_loras or i.max_loras, rank=i.max_lora_rank, dtype_bytes=c)
        comps.append(Component("vLLM LoRA adapters cached in host RAM", HOST, n * w.node_gpus,
                               text + f" per GPU worker (each keeps its own cache), {w.node_gpus} on this machine",
                               "vLLM vllm/lora/worker_manager.py LRUCacheWorkerLoRAManager (max_cpu_loras)"))
    desc = (f"vLLM serving with {i.weights} weights and a {i.kv_dtype} KV cache at gpu_memory_utilization "
            f"{util:g} (max_num_batched_tokens {b.max_num_batched_tokens:,}, max_num_seqs {b.max_num_seqs:,}).")
    note = mtp_note(arch)
    return Estimate(workload_name=w.name, model_id=w.model_id, task=w.task, parameters=arch.parameters,
                    components=tuple(comps), gpus=w.gpus, gpus_per_node=w.node_gpus, warnings=w.warnings,
                    trainable_parameters=0, recipe=i.weights, recipe_description=desc, extra=extra,
                    notes=(note,) if note else ())


def _litgpt_head_note(w: Workload) -> str | None:
    """The note of an inference workload whose quantized head is LitGPT's own (planner.workload.spec)."""
    if not w.head_untied:
        return None
    return ("quantize_head on a checkpoint with tied embeddings: sized as LitGPT holds it, a head of its own "
            f"({w.architecture.vocab_size * w.architecture.hidden_size:,} parameters, quantized by Lightning's "
            "bitsandbytes plugin) beside the 16-bit embedding.")


def _infer_host(w: Workload) -> list[Component]:
    """Host RAM of one machine serving ``w``: every replica on it, one process per GPU.

    The machine holds ``node_gpus / tp`` replicas (the workload reader makes ``gpus_per_node`` a
    multiple of tp); each of its GPU processes loads its 1/tp share of the checkpoint, straight onto
    the GPU (planner.memory.host).
    """
    i = w.infer
    assert i is not None
    node = w.node_gpus
    per_node = node // i.tp
    who = (f"{per_node} replicas x tp {i.tp} on this machine" if per_node > 1 else
           f"one replica at tp {i.tp}" if i.tp > 1 else "")
    return host_components(w.architecture, processes=node, loading_processes=node, load_fraction=1 / i.tp,
                           ckpt_dtype=checkpoint_dtype(w.architecture, w.host.checkpoint_dtype),
                           low_cpu_mem_usage=w.host.low_cpu_mem_usage, dataloader_workers=0, dataset_size=0,
                           dataset_format="arrow", pin_memory=False, batch_tokens=0, save_bytes=0, to_gpu=True,
                           processes_text=who, load_dtype=w.host.load_dtype)


def _finish(workload: Workload, comps: list[Component], overheads: RuntimeOverheads, load_pool=None,
            **kw) -> Estimate:
    comps = comps + runtime_components(overheads, gpus=workload.group_gpus)
    allocated, _ = phase_total(comps, GPU, kinds=("allocated",))
    # Weights, and ZeRO-3's gathered layers (the same parameter-sized blocks every layer, reused
    # from the allocator's cache), leave no fragments; see allocator_component.
    held = [c for c in comps if c.where == GPU and c.kind == "allocated"
            and c.name.startswith(("weights", "gathered parameters"))]
    what = "weights and gathered parameters" if any(c.name.startswith("gathered") for c in held) else "weights"
    comps.append(allocator_component(overheads, allocated, sum(c.bytes for c in held), what=what))
    # the pool a replayed load leaves (torchtune 0.1 QLoRA, Unsloth 2024.8-2024.10.0 QLoRA) stays reserved
    comps += load_pool_component(load_pool, allocated, comps[-1].bytes)
    return Estimate(workload_name=workload.name, model_id=workload.model_id, task=workload.task,
                    parameters=workload.architecture.parameters, components=tuple(comps), gpus=workload.gpus,
                    gpus_per_node=workload.node_gpus, warnings=workload.warnings, **kw)


def _train(w: Workload, overheads: RuntimeOverheads, *, cpu: bool = False) -> Estimate:
    arch, t = w.architecture, w.train
    assert t is not None
    recipe = RECIPES[t.recipe]
    regime = regime_for(t.recipe)
    if t.quantized_base and t.prepare_kbit_training and not regime.amp:
        # fp32 embeddings and norms make the residual stream fp32, and bitsandbytes casts each
        # 4-bit or 8-bit linear's output back to its input dtype: the activations are fp32.
        regime = regime_for("fp32")
    full = t.method == "full"
    comps: list[Component] = []
    node = w.node_gpus
    # Phases: without checkpointing one forward-backward peak (at the loss, start of backward);
    # with checkpointing the loss moment and the recomputation of a layer are separate.
    fwd = "loss, recompute" if t.checkpointing == "full" else "forward-backward"
    loss = "loss" if t.checkpointing == "full" else "forward-backward"
    for c in model_state_components(arch, t, fwd_phase=fwd):
        if c.where == HOST:
            c = replace(c, bytes=c.bytes * node, formula=f"({c.formula}) x {node} GPU(s) per machine", phase="run")
        comps.append(c)
    if arch.buffer_bytes:
        comps.append(_buffer_component(arch, t.tp))
    if t.framework == "torchtune" and not arch.layer_norm:
        # torchtune's RotaryPositionalEmbeddings (one module the layers share) registers its cos/sin
        # cache for max_seq_len positions: [max_seq_len, head_dim // 2, 2] in fp32 (built from .float()).
        n = arch.max_position_embeddings
        comps.append(Component("model buffers (RoPE cache, torchtune)", GPU, n * arch.head_dim * 4,
                               f"{n:,} positions x head_dim {arch.head_dim} x 4 B (cos and sin of head_dim/2 "
                               "frequencies, fp32)", "torchtune modules/position_embeddings.py "
                               "RotaryPositionalEmbeddings.build_rope_cache (register_buffer 'cache')"))
    comps += unsloth_rope_components(arch, t)  # Unsloth 2024.8-2024.10.0: a cache pair per layer (load_peaks)
    comps += _autocast_copies(arch, t, recipe, full=full, fwd=fwd)
    adapter_bytes = 4 if t.adapter_dtype == "fp32" else 2
    # DoRA casts the frozen weight to the adapters' dtype (W.to(x.dtype)): a new tensor unless the
    # recipe's weights already have that dtype; a 4-bit or 8-bit base is dequantized into a new one anyway.
    base_dtype = "fp32" if recipe.weight_bytes == 4 else recipe.dtype
    weight_cast = bool(t.quantized_base) or base_dtype != t.adapter_dtype
    fw = FRAMEWORK_SPECS[t.framework]
    keeps_inputs = t.quantized_base == "int8" or t.bnb_keeps_4bit_inputs
    not_compiled = compile_not_modelled(arch, use_dora=t.use_dora, base_keeps_inputs=keeps_inputs) if t.compile else None
    compiled = t.compile and not_compiled is None
    act = activation_parts(arch, regime, micro_batch=t.micro_batch, seq_len=t.seq_len, attention=t.attention,
                           full=full, checkpointing=t.checkpointing, lora_targets=t.lora_targets,
                           lora_rank=t.lora_rank, tp=t.tp, adapter_bytes=adapter_bytes,
                           lora_dropout=t.lora_dropout, cpu_dropout=cpu, use_dora=t.use_dora,
                           weight_cast=weight_cast, base_keeps_inputs=keeps_inputs,
                           reentrant=t.use_reentrant, code=fw.model_code,
                           head_keeps_input=fw.quantizes_head and keeps_inputs, compiled=compiled,
                           adapter=t.method == "adapter")
    comps += _activation_components(w, act, fwd=fwd)
    tokens = t.micro_batch * t.seq_len
    spec = loss_spec(t)
    logits, logit_text, logit_src = loss_bytes(arch, regime, spec, tokens=tokens, tp=t.tp, full=full,
                                               compiled=t.compile and t.framework != "litgpt")
    comps.append(Component("logits and loss", GPU, logits, logit_text, logit_src, phase=loss))
    if (copy := returned_logits_copy(arch, spec, tokens=tokens, tp=t.tp)) is not None:
        comps.append(Component(RETURNED_LOGITS_NAME, GPU, copy[0], copy[1], ACCELERATE_FP32_SRC, phase=loss))
    cache = training_cache_component(arch, t, regime, phase=loss)  # use_cache (planner.memory.train_cache)
    if cache is not None:
        comps.append(cache)
    head_bwd = (head_backward_bytes(arch, regime, spec, tokens=tokens, tp=t.tp, grad_bytes=recipe.grad_bytes)
                if full else None)
    if head_bwd is not None and not t.fsdp and t.zero == 0:
        # The moment a trainable head's weight gradient forms (planner.memory.loss module docstring):
        # every activation is still saved; under ZeRO or FSDP the sharded gradient paths model it.
        held, copies, held_text = head_bwd
        vh = -(-arch.vocab_size // t.tp) * arch.hidden_size
        gb = recipe.grad_bytes
        comps.append(Component("logits and loss at the head's backward", GPU, held, held_text,
                               HEAD_BACKWARD_SRC, phase=HEAD_BACKWARD))
        comps.append(Component("head weight gradient forming", GPU, copies * vh * gb,
                               f"{copies} x V*h = {copies} x {vh:,} x {gb} B"
                               + (" (the running sum of the chunks' contributions and the next one)" if copies == 2
                                  else " (before it is stepped or accumulated into .grad)"),
                               HEAD_BACKWARD_SRC, phase=HEAD_BACKWARD))
    comps += _base_buffers(arch, t, regime, fw, fwd=fwd, cpu=cpu)
    if t.use_dora:
        dora, dora_text = dora_temporaries(arch, regime, t.lora_targets, lora_rank=t.lora_rank,
                                           adapter_bytes=adapter_bytes, weight_cast=weight_cast,
                                           lora_dropout=t.lora_dropout)
        # They exist inside one layer's forward (and its recomputation): with checkpointing in the
        # recompute phase; without, in the forward, before the logits exist, next to everything
        # else the forward holds.
        if t.checkpointing == "full":
            dora_phase = "recompute"
        else:
            dora_phase = "forward"
            # (a 4-bit or 8-bit base's buffers are freed before DoRA's step and are inside its figure)
            comps = [replace(c, phase=f"{c.phase}, forward") if c.where == GPU and c.phase == fwd
                     and c.name not in ("logits and loss", "dequantized weight buffer", "8-bit matmul buffers",
                                        CACHE_NAME)
                     else c for c in comps]
        comps.append(Component("DoRA weight-norm temporaries", GPU, dora, dora_text, DORA_SRC, phase=dora_phase))
    comps = _add_backward_phase(comps, fwd)
    comps += load_peak_components(arch, t)  # release-dependent, while the model loads (planner.memory.load_peaks)
    notes = _train_notes(w, act, regime, comps, spec, adapter_bytes=adapter_bytes)
    comps += _train_host(w, full=full, tokens=tokens)
    trainable = (arch.parameters if full else adapter_parameters(arch)[0] if t.method == "adapter" else
                 lora_parameters(arch, t.lora_rank, t.lora_targets, use_dora=t.use_dora,
                                    code=FRAMEWORK_SPECS[t.framework].model_code))
    desc = _train_description(t, recipe)
    logits_tokens = (0 if spec.impl in ("fused-linear", "cut") else
                     -(-tokens // spec.chunks) if spec.impl in ("chunked", "litgpt") else tokens)
    transient, _ = largest_transient(arch, tokens=tokens, sequences=t.micro_batch, keys=t.seq_len,
                                     compute_bytes=regime.compute, attention=t.attention, logits_tokens=logits_tokens,
                                     tp=t.tp)
    return _finish(w, comps, overheads, load_pool=load_pool(arch, t), trainable_parameters=trainable,
                   recipe=t.recipe, recipe_description=desc,
                   notes=tuple(notes), offload=t.offload_optimizer or t.offload_params or t.offload_activations,
                   stack=_stack(w, spec), extra={"largest_transient_bytes": transient})


def _autocast_copies(arch: Architecture, t: Training, recipe: Recipe, *, full: bool, fwd: str) -> list[Component]:
    """The 16-bit weight copies torch autocast keeps under an AMP recipe (none otherwise)."""
    comps: list[Component] = []
    # AMP keeps a 16-bit copy of every weight a matmul uses while autograd needs it (frozen
    # weights too: the copy is saved to compute the input gradient).
    if recipe.autocast_copy_bytes:
        pc = arch.param_counts()
        head = pc.lm_head or pc.embedding
        if full or t.checkpointing != "full":
            n = -(-(pc.linear + head) // t.tp)
            comps.append(Component("autocast weight copies", GPU, n * recipe.autocast_copy_bytes,
                                   f"{n:,} matmul weights x {recipe.autocast_copy_bytes} B",
                                   "PyTorch AMP docs (autocast weight cache)", phase=fwd))
        else:
            # Frozen weights (LoRA's base) are not cached by autocast (it caches casts of leaf
            # tensors that require grad); their copies live only as tensors saved for backward,
            # which checkpointing drops: the output head's copy stays, a layer's comes back while
            # the layer is recomputed.
            n_head = -(-head // t.tp)
            n_layer = -(-(pc.linear // arch.num_hidden_layers) // t.tp)
            b = recipe.autocast_copy_bytes
            comps.append(Component("autocast weight copies (output head)", GPU, n_head * b,
                                   f"{n_head:,} output-head weights x {b} B (kept for its input gradient)",
                                   "PyTorch AMP docs (autocast caches only weights that require grad)", phase=fwd))
            comps.append(Component("autocast weight copies (layer being recomputed)", GPU, n_layer * b,
                                   f"{n_layer:,} frozen matmul weights of one layer x {b} B",
                                   "PyTorch AMP docs; torch.utils.checkpoint", phase="recompute"))
    return comps


def _base_buffers(arch: Architecture, t: Training, regime: Regime, fw: Framework, *, fwd: str, cpu: bool) -> list[Component]:
    """The buffers a quantized frozen base makes while it runs: NF4's dequantized weight, LLM.int8's
    matmul buffers (none for a 16-bit base)."""
    recipe = RECIPES[t.recipe]
    comps: list[Component] = []
    if t.quantized_base == "nf4":
        largest = max(m.in_features * m.out_features for m in arch.linear_modules())
        head = arch.vocab_size * arch.hidden_size if fw.quantizes_head else 0
        what = "output head" if head > largest else "largest linear"
        largest = max(largest, head)
        # Lightning's BitsandbytesPrecision quantizes each weight from fp16 (_Linear4bit._quantize_weight:
        # weight.to(dtype=torch.half)), so dequantize_4bit returns fp16 and MatMul4Bit casts it to bf16:
        # two copies of the weight at once.
        copies = 2 if t.framework == "litgpt" and recipe.dtype == "bf16" else 1
        comps.append(Component("dequantized weight buffer", GPU, largest * 2 * copies,
                               f"{what} {largest:,} params x 2 B" + (" x 2 (the fp16 dequantized weight and its bf16 "
                                                                    "cast)" if copies == 2 else "") + ", one at a time",
                               "torchao NF4 linear_nf4 (weight.to(input dtype))" if t.framework == "torchtune" else
                               "bitsandbytes matmul_4bit (dequantize then matmul)"
                               + ("; Lightning fabric/plugins/precision/bitsandbytes.py _Linear4bit._quantize_weight "
                                  "(quantized from fp16)" if copies == 2 else ""), phase=fwd))
    elif t.quantized_base == "int8":
        buf, buf_text = int8_training_buffer_bytes(arch, tokens=t.micro_batch * t.seq_len, act_bytes=regime.compute,
                                                   act_fp16=regime.compute == 2 and recipe.dtype == "fp16", cpu=cpu)
        comps.append(Component("8-bit matmul buffers", GPU, buf, buf_text + ", one module at a time",
                               "bitsandbytes MatMul8bitLt (LLM.int8(), Dettmers et al. 2022, sec. 3)", phase=fwd))
    return comps


def _train_notes(w: Workload, act: ActivationBytes, regime: Regime, comps: list[Component], spec: LossSpec, *,
                 adapter_bytes: int) -> list[str]:
    """The notes of a training estimate: gradient accumulation, the quantized base, what
    checkpointing keeps, DoRA's weight copies, multi-token prediction, the framework's levers."""
    arch, t = w.architecture, w.train
    assert t is not None
    notes = [GRAD_ACCUM_OFFLOAD_NOTE if t.offload_optimizer else GRAD_ACCUM_NOTE] if t.grad_accum > 1 else []
    if t.quantized_base:
        what = ("QLoRA: the NF4 base is dequantized one layer at a time" if t.method == "qlora" else
                "LLaMA-Adapter on an NF4 base: the base is dequantized one layer at a time" if t.load_in_4bit else
                "LoRA on an LLM.int8 base: each 8-bit linear keeps its input for backward (a 16-bit frozen linear "
                "keeps none) and dequantizes its weight for the input gradient")
        notes.append(what + "; embeddings, output head and norms "
                     + ("are fp32 after peft's prepare_model_for_kbit_training, and so are the activations."
                        if t.prepare_kbit_training else "stay 16-bit (prepare_kbit_training: false)."))
    if act.ctx_kept:
        notes.append(f"Non-reentrant checkpointing (Transformers' default) cannot drop the inputs the 8-bit linears keep on "
                     f"their autograd ctx: {act.ctx_kept / GiB:,.2f} GiB of the layer checkpoints here."
                     + (" peft's prepare_model_for_kbit_training, called without gradient_checkpointing_kwargs, has "
                        "torch run reentrant checkpointing, which keeps none: if that is how your script turns "
                        "checkpointing on, set use_reentrant: true." if t.prepare_kbit_training else ""))
    if act.weight_copies:
        ab = regime.compute if regime.amp else adapter_bytes  # autocast copies, else the adapter dtype
        notes.append(f"DoRA with lora_dropout {t.lora_dropout:g}: peft recomputes each adapted module's base output "
                     f"on the dropped-out input and keeps a {ab}-byte copy of the module's weight for backward, "
                     f"{act.weight_copies / GiB:,.2f} GiB of the activations here; with lora_dropout 0 it reuses the "
                     "base output and keeps none.")
    if t.checkpointing == "full":
        notes.append("Full gradient checkpointing: about one extra forward pass of compute (~8 x P x tokens FLOPs).")
    if mtp_note(arch):
        notes.append(mtp_note(arch))
    notes += _lever_notes(w, comps, spec)
    return notes


def _train_host(w: Workload, *, full: bool, tokens: int) -> list[Component]:
    """Host RAM of one training machine: loading, the processes, the data loader, saving (adapters
    only for LoRA and LLaMA-Adapter)."""
    arch, t = w.architecture, w.train
    assert t is not None
    node = w.node_gpus
    comps: list[Component] = []
    # ---- host ----------------------------------------------------------------------------
    ck = checkpoint_dtype(arch, w.host.checkpoint_dtype)
    zero3 = t.zero == 3 and t.data_parallel > 1
    save = min(SHARD_BYTES, arch.parameters * 2)
    save_text, save_src = None, "Transformers docs, sharded checkpoints (one shard of <= 5 GB at a time)"
    if t.method == "adapter":
        # LitGPT's save_adapter_checkpoint writes the adapter's parameters only (adapter_filter).
        n_adapter = adapter_parameters(arch)[0]
        ab = 4 if t.adapter_dtype == "fp32" else 2
        save = n_adapter * ab
        save_text = f"adapter weights only (LitGPT save_adapter_checkpoint): {n_adapter:,} params x {ab} B = {save:,} B"
        save_src = "LitGPT litgpt/finetune/adapter.py save_adapter_checkpoint (adapter_filter)"
    elif not full:
        # peft's save_pretrained writes the adapter weights only.
        n_adapter = lora_parameters(arch, t.lora_rank, t.lora_targets, use_dora=t.use_dora,
                                    code=FRAMEWORK_SPECS[t.framework].model_code)
        ab = 4 if t.adapter_dtype == "fp32" else 2
        save = n_adapter * ab
        save_text = f"adapter weights only (peft save_pretrained): {n_adapter:,} params x {ab} B = {save:,} B"
        save_src = "peft save_pretrained (adapters only)"
    comps += host_components(
        arch, processes=node, loading_processes=node, load_fraction=(1 / t.tp) * (1 / t.data_parallel if zero3 else 1),
        ckpt_dtype=ck, low_cpu_mem_usage=w.host.low_cpu_mem_usage, dataloader_workers=w.host.dataloader_workers,
        dataset_size=w.host.dataset_size, dataset_format=w.host.dataset_format, pin_memory=w.host.pin_memory,
        batch_tokens=tokens, save_bytes=save, save_formula=save_text, save_source=save_src,
        to_gpu=bool(t.quantized_base),  # bitsandbytes quantizes while moving weights onto the card
        load_dtype=w.host.load_dtype)
    return comps


def _train_description(t: Training, recipe: Recipe) -> str:
    """The training recipe in words: the method, the base's format, where adapters and states live."""
    desc = recipe.description
    dora = (" with DoRA (magnitude vectors, weight norms recomputed every forward"
            + (f"; lora_dropout {t.lora_dropout:g}" if t.lora_dropout > 0 else "") + ")") if t.use_dora else ""
    if t.method == "lora" and t.load_in_8bit:
        desc = (f"LoRA r={t.lora_rank}{dora} on a frozen LLM.int8 base (bitsandbytes load_in_8bit: int8 weights with "
                f"fp32 row scales), {recipe.dtype} compute; adapters, their gradients and optimizer states in "
                f"{t.adapter_dtype}"
                + ("; embeddings, head, norms and activations in fp32 (peft prepare_model_for_kbit_training)."
                   if t.prepare_kbit_training else "."))
    elif t.method == "lora":
        desc = (f"LoRA r={t.lora_rank}{dora} on a frozen {recipe.dtype} base ({recipe.weight_bytes} B/param); adapters, "
                f"their gradients and optimizer states in {t.adapter_dtype}; activations in {recipe.dtype}.")
    elif t.method == "adapter":
        base = (f"a frozen NF4 base ({'double' if t.double_quant else 'single'} quantization)" if t.load_in_4bit else
                f"a frozen {recipe.dtype} base ({recipe.weight_bytes} B/param)")
        desc = (f"LLaMA-Adapter (LitGPT: a 10-token prefix and a gate per head in every layer from the third) on {base}, "
                f"{recipe.dtype} compute; the adapter in {t.adapter_dtype}, gradients and optimizer states for its "
                "gates only (the prefix's keys and values are cached without a graph).")
    elif t.method == "qlora":
        desc = (f"QLoRA r={t.lora_rank}{dora}: frozen NF4 base ({'double' if t.double_quant else 'single'} "
                f"quantization), {recipe.dtype} compute; adapters, their gradients and optimizer states in "
                f"{t.adapter_dtype}"
                + ("; embeddings, head, norms and activations in fp32 (peft prepare_model_for_kbit_training)."
                   if t.prepare_kbit_training else "."))
    return desc


COMPILE_NOTE = ("torch.compile: AOTAutograd's partitioner (min_cut_rematerialization_partition) chooses what the "
                "compiled graphs save for backward: the cheapest set it can recompute the rest from, which keeps no "
                "fp32 norm inputs and no activation outputs; the layers' activations and the loss here are that set "
                "as it partitions a Llama decoder layer. Eager code saves more (the eager estimate is an upper "
                "bound); the model states are the same.")
COMPILE_EAGER_NOTE = ("torch.compile: the compiled saved set is not modelled for {why}; the activations are eager code's, "
                      "an upper bound of what the compiled graphs save (AOTAutograd's min-cut partitioner saves at most "
                      "as much as eager code, whose saved set is one it may choose).")


def _lever_notes(w: Workload, comps: list[Component], spec) -> list[str]:
    """Notes that say what the framework's levers change (the settings themselves are in the stack)."""
    t = w.train
    assert t is not None
    out: list[str] = []
    unified = sum(c.bytes for c in comps if c.where == GPU and c.kind == "unified")
    if unified:
        out.append(f"Paged optimizer ({t.optimizer}): {unified / GiB:,.2f} GiB of optimizer states per GPU are in CUDA "
                   "unified memory, outside the GPU total (what PyTorch allocates): the driver keeps those pages on "
                   "the GPU while it has room and evicts them to host RAM otherwise (slower steps), so host RAM is "
                   "sized to hold them.")
    if t.optimizer_in_backward:
        out.append("Optimizer step in backward: each parameter is stepped and its gradient freed as soon as the gradient "
                   "is complete; no full set of gradients exists, and gradient accumulation and gradient clipping are "
                   "not possible.")
    if t.offload_activations:
        host = sum(c.bytes for c in comps if c.where == HOST and c.name.startswith("offloaded activations"))
        out.append(f"Activation offloading: {host / GiB:,.2f} GiB of saved activations per machine sit in pinned host "
                   "RAM during each step and cross PCIe twice (to the host in forward, back in backward).")
    if t.compile:
        why = compile_not_modelled(w.architecture, use_dora=t.use_dora,
                                   base_keeps_inputs=t.quantized_base == "int8" or t.bnb_keeps_4bit_inputs)
        out.append(COMPILE_NOTE if why is None else COMPILE_EAGER_NOTE.format(why=why))
    fw = FRAMEWORK_SPECS[t.framework]
    if w.head_untied:
        out.append("LitGPT keeps the output head as a parameter of its own: the checkpoint's tied embedding is copied "
                   f"into it ({w.architecture.vocab_size * w.architecture.hidden_size:,} more parameters than the "
                   "checkpoint's).")
    if t.fsdp and fw.no_sync_accumulation and t.grad_accum > 1 and not t.optimizer_in_backward:
        out.append(f"FSDP under no_sync ({t.framework}'s gradient accumulation) accumulates unsharded gradients over "
                   f"the {t.grad_accum} micro-batches; syncing every micro-batch would keep only the 1/"
                   f"{t.data_parallel} shards.")
    return out


OFFLOAD_SRC_TORCHTUNE = ("torchtune training/_activation_offloading.py OffloadActivations (pinned host copies on a "
                         "side stream; max_fwd_stash_size 5)")
OFFLOAD_SRC_TORCH = "PyTorch torch.autograd.graph.save_on_cpu (saved tensors copied to pinned host memory)"
OFFLOAD_SRC_UNSLOTH = "Unsloth offloaded gradient checkpointing (use_gradient_checkpointing='unsloth')"


def _activation_components(w: Workload, act, *, fwd: str) -> list[Component]:
    """The activations as GPU (and, when offloaded, host) components.

    With ``offload_activations`` the tensors saved for backward go to pinned host RAM through
    saved-tensor hooks: with checkpointing, the layer checkpoints (the saved tensors of the
    checkpointed regions are their inputs); without it, every saved tensor. What stays on the GPU:
    the head's saved tensors (torchtune wraps the output layer in a NoOpManager; they are needed
    first in backward), what custom autograd Functions keep on their ctx (no hook sees it: an 8-bit
    base's inputs), and the tensors in flight: torchtune keeps the last ``max_fwd_stash_size`` (5)
    offloaded tensors until their copy completes and, in backward, the checkpoint being recomputed
    beside the previous one; ``save_on_cpu`` copies synchronously and brings back one checkpoint (or,
    without checkpointing, one layer's saved tensors) at a time. Host RAM grows by what moves, per
    GPU process.
    """
    t = w.train
    assert t is not None
    ckpt = t.checkpointing == "full"
    if not t.offload_activations:
        if ckpt:
            return [Component("activations (layer checkpoints)", GPU, act.saved, act.saved_formula, KORTHIKANTI,
                              phase=fwd),
                    Component("activations (layer being recomputed)", GPU, act.recompute, act.recompute_formula,
                              KORTHIKANTI + "; torch.utils.checkpoint", phase="recompute")]
        return [Component("activations", GPU, act.saved, act.saved_formula, KORTHIKANTI, phase=fwd)]
    src = {"torchtune": OFFLOAD_SRC_TORCHTUNE, "unsloth": OFFLOAD_SRC_UNSLOTH}.get(t.framework, OFFLOAD_SRC_TORCH)
    # torchtune keeps the output layer out of its offloading context (a NoOpManager); save_on_cpu and
    # Unsloth's checkpointer move the final norm's tensors too
    head = act.head if t.framework == "torchtune" or ckpt else 0
    moved = max(act.saved - head - act.ctx_in_saved, 0)
    L = w.architecture.num_hidden_layers
    out = []
    if head or act.ctx_all:
        out.append(Component("activations kept on the GPU (" + ", ".join(
            x for x, n in (("head", head), ("ctx-held inputs", act.ctx_all)) if n) + ")", GPU, head + act.ctx_all,
            f"the final norm's and the head's saved tensors {head:,} B"
            + (f" + {act.ctx_all:,} B a custom autograd Function keeps on its ctx (no saved-tensor hook sees it)"
               if act.ctx_all else ""), KORTHIKANTI + "; " + src, phase=fwd))
    if ckpt:
        stash = min(L, TORCHTUNE_OFFLOAD_STASH) if t.framework == "torchtune" else 0
        back = 2 if t.framework == "torchtune" else 1
        if stash:
            out.append(Component("offloaded activations in flight (forward stash)", GPU, stash * act.layer_input,
                                 f"{stash} layer checkpoints x {act.layer_input:,} B (kept until their copy to host "
                                 "completes)", src, phase="loss"))
        out.append(Component("offloaded activations brought back", GPU, back * act.layer_input,
                             f"{back} layer checkpoint(s) x {act.layer_input:,} B (the layer being recomputed"
                             + (" and the previous one" if back == 2 else "") + ")", src, phase="recompute"))
        out.append(Component("activations (layer being recomputed)", GPU, act.recompute, act.recompute_formula,
                             KORTHIKANTI + "; torch.utils.checkpoint", phase="recompute"))
        arch = w.architecture
        if t.framework == "unsloth" and unsloth_kernels_apply(arch, full=t.method == "full",
                                                              lora_targets=t.lora_targets, lora_dropout=t.lora_dropout,
                                                              attention=t.attention):
            per, words = unsloth_backward_working_set(arch, regime_for(t.recipe))
            tokens = t.micro_batch * t.seq_len
            out.append(Component("layer backward working set (Unsloth LoRA_MLP)", GPU, -(-per * tokens // t.tp),
                                 f"b*s={tokens:,} tokens x ({words})", UNSLOTH_BACKWARD_SRC, phase="recompute"))
        what = f"the layer checkpoints: {act.saved_formula}"
    else:
        out.append(Component("offloaded activations brought back", GPU, max(act.one_layer, act.head),
                             f"one layer's saved tensors {act.one_layer:,} B (or the head's, {act.head:,} B), unpacked "
                             "for its backward", src, phase=BACKWARD))
        what = f"every layer's saved tensors: {act.saved_formula}"
    node = w.node_gpus
    out.append(Component("offloaded activations (pinned host RAM)", HOST, moved * node,
                         f"{moved:,} B per GPU process x {node} GPU(s) per machine ({what}"
                         + (", less the head" if head else "") + (" and the ctx-held inputs" if act.ctx_in_saved else "")
                         + ")", src, phase="run"))
    return out


def _add_backward_phase(comps: list[Component], fwd: str) -> list[Component]:
    """Phases inside backward, after the loss's own peak: 'head backward' (a trainable head's weight
    gradient forming) and 'backward' (a gradient stepped in backward, offloaded tensors brought
    back). The activations and the other buffers of the forward-backward phase are still live then
    and get those phases too; the logits and the loss (the head's moment has its own remainder of
    them) and the offloading's forward stash do not. A layer being recomputed (checkpointing) is
    recomputed inside backward: it gets 'backward', not 'head backward' (no layer is recomputed
    before the head's backward)."""
    used = {p for c in comps if c.where == GPU for p in c.phase.split(", ")} & {BACKWARD, HEAD_BACKWARD}
    if not used:
        return comps
    first = fwd.split(", ")[0]  # 'forward-backward', or 'loss' with checkpointing
    out = []
    for c in comps:
        names = c.phase.split(", ") if c.phase else []
        if c.where == GPU and c.name not in ("logits and loss", "offloaded activations in flight (forward stash)",
                                             CACHE_NAME):
            add = [p for p in (HEAD_BACKWARD, BACKWARD) if p in used and p not in names
                   and (first in names or (p == BACKWARD and "recompute" in names))]
            if add:
                c = replace(c, phase=", ".join(names + add))
        out.append(c)
    return out


def _stack(w: Workload, spec) -> tuple[tuple[str, str], ...]:
    """The framework and every lever setting the estimate assumed, in words."""
    t = w.train
    assert t is not None
    opt = OPTIMIZERS[t.optimizer]
    if t.fsdp:
        shard = (f"PyTorch FSDP{t.fsdp} {'FULL_SHARD' if t.zero == 3 else 'SHARD_GRAD_OP'} over {t.data_parallel} GPUs"
                 + (", parameters and gradients in host RAM (CPUOffload)" if t.offload_params else ""))
    elif t.zero:
        shard = f"DeepSpeed ZeRO-{t.zero} over {t.data_parallel} GPU(s)"
    else:
        shard = "none" + (f" (DDP over {t.data_parallel} GPUs)" if t.data_parallel > 1 else "")
    out = [("framework", f"{t.framework} ({release_what(t.framework, t.framework_version)})"),
           ("framework release", release_text(t.framework, t.framework_version)),
           ("sharding", shard), ("loss", spec.describe()),
           ("activation checkpointing", t.checkpointing + (" (reentrant)" if t.use_reentrant else "")
            + (" (checkpoint wrapper around each layer)" if t.checkpoint_wrapper else "")),
           ("activation offloading", "on" if t.offload_activations else "off"),
           ("optimizer step", "in backward (each parameter as its gradient completes)" if t.optimizer_in_backward
            else "after backward"),
           ("optimizer", t.optimizer + (" (paged: states in CUDA unified memory)" if opt.paged else ""))]
    if not t.method == "full":
        out.append(("frozen base", _base_sharding(t)))
    if t.quantized_base or opt.bitsandbytes:
        out.append(("bitsandbytes", t.bnb_version + (" (4-bit linears keep their inputs: before 0.43.2)"
                                                     if t.bnb_keeps_4bit_inputs else "")))
    out.append(("torch.compile", "on (the activations are an upper bound)" if t.compile else "off"))
    if t.framework in ("transformers", "deepspeed", "fsdp"):
        extra, why = cache_extra(w.architecture, t)
        out.append(("use_cache (KV cache returned by forward)", f"on, counted: {why}" if extra else why))
    return tuple(out)


def _base_sharding(t) -> str:
    """How the frozen base of LoRA / QLoRA is sharded, in words."""
    what = {"nf4": "NF4", "int8": "LLM.int8"}.get(t.quantized_base, "16-bit")
    if t.fsdp and t.zero == 3:
        how = f"sharded by FSDP{t.fsdp} over {t.data_parallel} GPUs"
        if t.fsdp == 1 and t.fsdp_wrap == "blocks":
            how += " (its blocks mix base and adapters, so FSDP1 also keeps a gradient for the whole base)"
    elif t.fsdp:
        how = "whole on every GPU from forward to backward (SHARD_GRAD_OP)"
    elif t.zero == 3:
        how = f"sharded by DeepSpeed ZeRO-3 over {t.data_parallel} GPUs" + (
            ", in host RAM (offload_param)" if t.offload_params else "")
    elif t.zero:
        how = f"whole on every GPU (ZeRO-{t.zero} shards only the adapters' states" + (
            " and gradients)" if t.zero == 2 else ")")
    else:
        how = "whole on every GPU"
    return f"{what}, {how}"


def _buffer_component(arch, tp: int) -> Component:
    """The model's non-parameter buffers (GPTBigCode's causal mask), whole on every GPU."""
    n = arch.max_position_embeddings
    return Component("model buffers (causal mask)", GPU, arch.buffer_bytes,
                     f"{n:,} x {n:,} positions x 1 B (bool)" + (f", whole on each of t={tp} GPUs" if tp > 1 else ""),
                     "Transformers modeling_gpt_bigcode.py (GPTBigCodeModel.bias buffer)")


def _infer_dequant_buffer(arch: Architecture, i: Inference) -> Component:
    """The prefill's dequantized weight (engine hf, weights nf4 or int8): the largest linear's (the head's
    with ``quantize_head``) weight in 16 bits, one module at a time (bitsandbytes MatMul4Bit: dequantize,
    then matmul; decode steps of one token use gemv_4bit and dequantize nothing).

    With ``quantize_head`` (LitGPT generate: Lightning's BitsandbytesPrecision) and nf4, Lightning
    quantizes every weight from fp16 (_Linear4bit._quantize_weight: ``weight.to(dtype=torch.half)``
    before ``quantize_4bit``, Lightning 71aed751 and every release since), so the quant state records
    fp16: ``dequantize_4bit`` returns fp16 and MatMul4Bit's ``.to(A.dtype)`` makes a second copy in the
    compute dtype (bitsandbytes 0.41.1 autograd/_functions.py L516, functional.py L898-908), both alive at
    once. LitGPT's ``--precision`` sets the compute dtype and the KV cache's (created under
    ``fabric.init_tensor()``), so ``kv_dtype`` is that dtype: bf16-true (LitGPT's default on a bf16 card)
    or 32-true add the copy, 16-true does not. The training path counts the same pair (_base_buffers).
    Returns bytes: largest x 2 (x (2 + compute bytes) / 2 with the cast)."""
    largest = max([m.in_features * m.out_features for m in arch.linear_modules()]
                  + ([arch.param_counts().lm_head] if i.quantize_head else []))
    what = "output head" if i.quantize_head and arch.param_counts().lm_head == largest else "largest linear"
    cast = {"bf16": 2, "fp32": 4}.get(i.kv_dtype, 0) if i.quantize_head and i.weights == "nf4" else 0
    if not cast:
        return Component("dequantized weight buffer", GPU, largest * 2, f"{what} {largest:,} params x 2 B",
                         "bitsandbytes dequantize", phase="prefill")
    return Component("dequantized weight buffer", GPU, largest * (2 + cast),
                     f"{what} {largest:,} params x (2 B fp16 dequantized + {cast} B {i.kv_dtype} cast), one at a time",
                     "bitsandbytes MatMul4Bit (dequantize_4bit(...).to(A.dtype)); Lightning "
                     "fabric/plugins/precision/bitsandbytes.py _Linear4bit._quantize_weight (quantized from fp16)",
                     phase="prefill")


def _infer(w: Workload, overheads: RuntimeOverheads, *, cpu: bool = False) -> Estimate:
    arch, i = w.architecture, w.infer
    assert i is not None
    if i.engine == "llama.cpp":
        from planner.memory.llamacpp import estimate_llamacpp

        return estimate_llamacpp(w, overheads)
    wb = weight_bytes(arch, i.weights, group_size=i.group_size, tp=i.tp, engine=i.engine, scheme=i.scheme,
                      double_quant=i.double_quant, quantize_head=i.quantize_head, keep=i.keep)
    src = QUANT_SRC.get(i.weights, "IEEE 754 / bfloat16 formats: bytes per value")
    if i.scheme is not None and i.weights == "fp8":
        src = "DeepSeek-V3 fp8 checkpoints (weight_scale_inv per 128 x 128 block); vLLM Fp8LinearMethod"
    comps = [Component(f"weights ({i.weights})", GPU, wb.total, wb.formula, src)]
    if arch.is_mla and i.engine == "vllm":
        comps.append(_vllm_mla_absorbed(arch, i.tp, 4 if i.weights == "fp32" else 2))
    if arch.buffer_bytes and i.engine != "vllm":
        comps.append(_buffer_component(arch, i.tp))
    prompt_tokens = i.context * i.concurrency
    # Transformers prefills in chunks of GenerationConfig.prefill_chunk_size tokens per sequence, all
    # sequences of the batch at once: max_num_batched_tokens is split evenly over the sequences
    # (at least one token each), so a forward pass holds per-sequence chunk x concurrency tokens.
    seq_chunk = min(max((i.max_num_batched_tokens or prompt_tokens) // i.concurrency, 1), i.context)
    if i.engine == "vllm":
        # vLLM's KV cache is its block pool's share per sequence (planner.memory.vllm), sized there.
        if i.weights == "mxfp4":
            comps.append(_vllm_mxfp4_relayout(wb))
        if i.enable_lora:
            from planner.memory.vllm_lora import lora_gpu_components

            comps += lora_gpu_components(arch, max_loras=i.max_loras, rank=i.max_lora_rank, tp=i.tp,
                                         dtype_bytes=4 if i.weights == "fp32" else 2, release=i.engine_version)
        later = []
        if arch.model_type == "gpt_oss":
            later.append(Component("vLLM start-up memory beyond these terms (gpt-oss, measured)", GPU,
                                   VLLM_GPT_OSS_UNEXPLAINED_BYTES, f"{VLLM_GPT_OSS_UNEXPLAINED_BYTES / GiB:.2f} GiB",
                                   "measured: vllm#23278 (-2.14 GiB of KV at gpu_memory_utilization 0.9) and #27508 "
                                   "(1.71 GiB at 0.95, max_num_batched_tokens 1024) on one H100 against these terms; "
                                   "taken for every gpt-oss model", kind="runtime"))
        return _infer_vllm(w, comps, later, overheads)
    kv, kv_text = kv_cache_bytes(arch, kv_dtype=i.kv_dtype, context=i.context, concurrency=i.concurrency, tp=i.tp,
                                 sliding_window=i.sliding_window, chunk=seq_chunk, engine="hf")
    comps.append(Component("KV cache", GPU, kv, kv_text, KV_SRC))
    tokens = seq_chunk * i.concurrency
    # A chunk's queries attend to the sequence so far: up to the whole context (the prompt is
    # taken as the full context, the conservative case).
    act, act_text = prefill_peak_bytes(arch, tokens=tokens, sequences=i.concurrency, keys=i.context,
                                       attention=i.attention,
                                       compute_bytes=2 if i.weights != "fp32" else 4, tp=i.tp, cpu_kernels=cpu)
    comps.append(Component("prefill activations", GPU, act, act_text,
                           "derived: one layer's working set (no tensors saved for backward)", phase="prefill"))
    comps.append(Component("logits (last token, fp32)", GPU, logits_inference_bytes(arch, sequences=i.concurrency),
                           f"{i.concurrency} seq x V={arch.vocab_size:,} x 4 B", "transformers generate (last position)",
                           phase="prefill"))
    if i.weights in ("nf4", "int8"):
        comps.append(_infer_dequant_buffer(arch, i))
    comps += _infer_host(w)
    kv_tok = kv_bytes_per_token(arch, i.kv_dtype, i.tp)
    transient, _ = largest_transient(arch, tokens=tokens, sequences=i.concurrency, keys=i.context,
                                     compute_bytes=2 if i.weights != "fp32" else 4, attention=i.attention,
                                     logits_tokens=0, tp=i.tp,
                                     kv_layer_bytes=kv_tok * i.context * i.concurrency // max(2 * arch.kv_cache_layers, 1))
    extra = {"kv_bytes_per_token": kv_tok, "largest_transient_bytes": transient}
    desc = f"Inference with {i.weights} weights and a {i.kv_dtype} KV cache"
    if tokens < prompt_tokens:
        desc += (f"; chunked prefill of {tokens:,} tokens per forward pass (Transformers: GenerationConfig("
                 f"prefill_chunk_size={seq_chunk:,}) for {i.concurrency} sequence(s))")
    notes = tuple(n for n in (mtp_note(arch), _litgpt_head_note(w)) if n)
    est = _finish(w, comps, overheads, trainable_parameters=0, recipe=i.weights, recipe_description=desc + ".",
                  extra=extra, notes=notes)
    total = est.per_gpu_total_bytes
    # Prefill activations above 25 % of the per-GPU need: a planning threshold (not a measured
    # quantity) for a batch whose prompts are all prefilled at once, which an engine bounds.
    if act * 4 > total:
        how = ("every prompt token of the batch is prefilled in one forward pass" if tokens == prompt_tokens else
               f"max_num_batched_tokens {i.max_num_batched_tokens:,} still prefills {seq_chunk:,} tokens per sequence")
        warning = (f"prefill activations are {act / 2**30:,.2f} GiB, {act / total:.0%} of the {total / 2**30:,.2f} GiB "
                   f"per GPU: {how} ({tokens:,} tokens = {i.concurrency:,} sequence(s) x {seq_chunk:,}); a smaller "
                   "max_num_batched_tokens (chunked prefill, Transformers GenerationConfig(prefill_chunk_size=...)) "
                   "or engine: vllm (which prefills at most max_num_batched_tokens per step) bounds it")
        est = replace(est, warnings=est.warnings + (warning,))
    return est
