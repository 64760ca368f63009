"""The training reader: a ``task: train`` workload's options, validated, and their warnings.

:func:`training_warnings` derives a training workload's warnings from its options and model (so a
workload put on another GPU count says its own); the reader refuses what cannot run as written:
the method and its base (LoRA, QLoRA, an LLM.int8 base, LitGPT's adapter), the recipe and the
optimizer, ZeRO and its offloads, tensor parallelism, and each framework's levers and sharding
(planner.workload.frameworks). planner.workload.spec.workload_from_entry calls it.
"""

from __future__ import annotations

from typing import Any

from planner.model.architecture import Architecture
from planner.core.fields import Entry, shown_number
from planner.core.versions import long_release_problem
from planner.workload.frameworks import (
    BNB_FIRST_4BIT,
    CURRENT_BNB_VERSION,
    FRAMEWORK_SPECS,
    FRAMEWORKS,
    release_fsdp_version,
    FSDP_VERSIONS,
    defaults as framework_defaults,
    parse_version,
)
from planner.workload.recipes import OPTIMIZERS, RECIPES
from planner.workload.releases import (FRAMEWORK_RELEASES, TORCHTUNE_FSDP2, TRANSFORMERS_SDPA, framework_has,
                                      read_release)
from planner.workload.options import (
    CHECKPOINTING,
    FSDP_WRAPS,
    MAX_GPUS,
    MAX_MICRO_BATCH,
    MAX_SEQ_LEN,
    METHODS,
    OFFLOAD_OPTIMIZERS,
    Training,
    read_token_count,
)
from planner.workload.checks import (
    _attention,
    _with_hint,
    architecture_warnings,
    check_positions,
    check_tp,
    checkpoint_format,
    eager_only_warning,
)


def default_lora_targets(arch: Architecture, framework: str = "transformers") -> tuple[str, ...]:
    """The LoRA targets ``framework`` adapts by default on ``arch`` (peft's mapping for Transformers,
    torchtune's and LitGPT's recipe defaults; planner.workload.frameworks.default_lora_targets, which
    cites each). Raises planner.workload.frameworks.NoDefaultTargets where the framework has none."""
    from planner.workload.frameworks import default_lora_targets as rule

    return rule(framework, arch.model_type, [m.name for m in arch.linear_modules()])


def zero_one_rank_warning(zero: int, data_parallel: int, offload: bool) -> str | None:
    """The warning for a ZeRO stage that shards over one data-parallel rank (None when there is
    nothing to warn about: no ZeRO, several ranks, or ZeRO-Offload, which needs the stage on one GPU)."""
    if zero > 0 and data_parallel == 1 and not offload:
        return f"ZeRO stage {zero} on one data-parallel rank shards nothing; it saves no GPU memory."
    return None


def training_warnings(arch: Architecture, train: Training) -> tuple[str, ...]:
    """The warnings of a training workload, from its options and model alone.

    In this order: a quantized checkpoint the method loads as a base model; a bitsandbytes base's
    (QLoRA's or 8-bit LoRA's) prepare_model_for_kbit_training without checkpointing; a bitsandbytes
    base on a mixture of experts (its experts stay 16-bit); QLoRA with ZeRO-3; a ZeRO stage over one
    data-parallel rank (:func:`zero_one_rank_warning`, which depends on ``train.gpus``); a recipe
    without fp32 masters under ZeRO (DeepSpeed clones partitions to fp32); a
    ``seq_len`` past ``max_position_embeddings``; a checkpoint wrapper with ``use_cache`` on from
    Transformers 4.36.0 (its backward has been reported to fail). Being derived, they hold for the options as they
    are: the same workload on another GPU count gets that count's warnings.

    Args:
        arch: the model.
        train: the validated options (:func:`workload_from_entry` refuses those that cannot run).

    Returns:
        The warnings as sentences; () when there is nothing to warn about.
    """
    out: list[str] = architecture_warnings(arch)
    _, _, ckpt_words = checkpoint_format(arch)
    if ckpt_words:
        out.append(f"the model's config.json declares a quantized checkpoint ({ckpt_words}); training sizes "
                   f"the base model as method {train.method} loads it, not as that checkpoint")
    if train.quantized_base and train.prepare_kbit_training and train.checkpointing == "none":
        out.append("prepare_model_for_kbit_training turns gradient checkpointing on unless the script passes "
                   "use_gradient_checkpointing=False; if yours does not, set checkpointing: full.")
    if train.quantized_base and arch.is_moe:
        pc = arch.param_counts()
        experts = arch.expert_parameters
        what, bits = ("QLoRA", "4-bit") if train.quantized_base == "nf4" else ("LoRA on an LLM.int8 base", "8-bit")
        out.append(f"{what} on {arch.model_type}: bitsandbytes quantizes nn.Linear modules only, and Transformers 5 "
                   f"keeps the MoE experts and router as parameters of their own, so they stay "
                   f"{'fp32 (prepare_kbit_training)' if train.prepare_kbit_training else '16-bit'} "
                   f"({experts + pc.router:,} of {pc.total:,} parameters): {bits} saves memory on the attention "
                   "projections alone.")
    if train.method == "qlora" and train.zero == 3 and train.framework != "torchtune":
        out.append(f"QLoRA with {'FSDP' if train.fsdp else 'ZeRO-3'} needs bitsandbytes quant-storage support "
                   "(bnb_4bit_quant_storage); the estimate assumes it.")
    one_rank = zero_one_rank_warning(train.zero, train.data_parallel, train.offload_optimizer or train.offload_params)
    if one_rank:
        out.append(one_rank)
    fw = FRAMEWORK_SPECS[train.framework]
    # the release's own FSDP (torchtune before 0.3.0 shards with FSDP1) is no choice the user made
    if fw.fsdp and train.zero < 2 and train.fsdp_version != release_fsdp_version(train.framework,
                                                                                  train.framework_version):
        out.append(f"fsdp_version {train.fsdp_version} shards nothing here (zero {train.zero} on {train.data_parallel} "
                   "data-parallel rank(s)); it applies when FSDP shards over several GPUs (zero 2 or 3).")
    rec = RECIPES[train.recipe]
    if train.zero and train.method == "full" and not rec.master_bytes and not train.offload_optimizer and not train.fsdp:
        # DeepSpeed stage_1_and_2.py / stage3.py clone every partition to fp32
        # (single_partition_of_fp32_groups, fp32_partitioned_groups_flat) and build the optimizer on it.
        if rec.weight_bytes == 4:
            out.append(f"recipe {train.recipe} under ZeRO: DeepSpeed clones each rank's fp32 partition once more for "
                       "its optimizer (+4 B per parameter / data-parallel ranks, not counted here); PyTorch FSDP, "
                       "which this estimate matches, does not.")
        else:
            out.append(f"recipe {train.recipe} keeps no fp32 master copy: under ZeRO that is PyTorch FSDP sharding "
                       f"{rec.dtype} parameters, gradients and optimizer states. DeepSpeed ZeRO clones every partition "
                       f"to fp32 and keeps fp32 optimizer states whatever the model's dtype: for DeepSpeed plan recipe "
                       f"mixed-{rec.dtype}.")
    if train.seq_len > arch.max_position_embeddings:
        out.append(f"seq_len {train.seq_len} exceeds the model's max_position_embeddings "
                   f"({arch.max_position_embeddings}); quality beyond it is not guaranteed.")
    if train.attention == "eager" and not arch.sdpa_supported:
        out.append(eager_only_warning(arch))
    if train.checkpoint_wrapper and train.use_cache and framework_has(train.framework, train.framework_version,
                                                                       TRANSFORMERS_SDPA):
        # huggingface/transformers issue 28056 ("Transformers 4.36 use_cache issue") and 34928 (on 4.51.0):
        # the recompute appends K and V to the same DynamicCache, and the saved and recomputed shapes differ
        out.append("checkpoint_wrapper with use_cache on: from Transformers 4.36.0 the layer's recompute appends to "
                   "the returned DynamicCache and backward has been reported to fail (CheckpointError, "
                   "huggingface/transformers issues 28056 and 34928); set use_cache: false.")
    return tuple(out)


def _training(entry: Entry, arch: Architecture, warnings: list[str]) -> Training:
    fw_name = entry.str("framework", "transformers", choices=FRAMEWORKS)
    method = entry.str("method", "full", choices=METHODS)
    micro_batch, seq_len, grad_accum, tp, gpus = _batch_and_parallelism(entry, arch)
    load_in_4bit = entry.bool("load_in_4bit", False)
    if load_in_4bit and method != "adapter":
        raise entry.error(f"load_in_4bit is set but method is {method}", "load_in_4bit",
                          "For LoRA on an NF4 base set method: qlora; load_in_4bit is for method: adapter (LitGPT's "
                          "--quantize bnb.nf4).")
    if method == "adapter":
        _check_adapter(entry, arch, fw_name, gpus // tp)
    release = _framework_version(entry, fw_name)
    # the framework's recipes decide what a key left out means (planner.workload.frameworks.defaults)
    d = framework_defaults(fw_name, method=method, data_parallel=gpus // tp, seq_len=seq_len,
                           quantized=load_in_4bit, release=release)
    recipe = entry.str("recipe", d.recipe, choices=RECIPES)
    optimizer = entry.str("optimizer", d.optimizer, choices=OPTIMIZERS)
    zero = entry.int("zero", d.zero, min=0, max=3, what="the ZeRO stage")
    offload_optimizer = entry.bool("offload_optimizer", False)
    offload_params = entry.bool("offload_params", False)
    checkpointing, use_reentrant = _checkpointing(entry, method, d.checkpointing)
    attention = _release_attention(entry, arch, fw_name, release)
    lora_rank = entry.int("lora_rank", d.lora_rank, min=1, max=65_536)
    targets = _comma_split(entry, entry.str_list("lora_targets", None), warnings)
    double_quant = entry.bool("double_quant", True)
    prepare_kbit = entry.bool("prepare_kbit_training", False)
    rec0 = RECIPES[recipe]
    adapter_default = d.adapter_dtype or ("fp32" if rec0.weight_bytes == 4 and rec0.compute_bytes == 4 else rec0.dtype)
    adapter_dtype = entry.str("adapter_dtype", adapter_default, choices=("fp32", "bf16", "fp16"))
    lora_dropout = entry.number("lora_dropout", d.lora_dropout, min=0, max=1, min_exclusive=False)
    use_dora = entry.bool("use_dora", False)
    dataset_tokens = _dataset_tokens(entry)
    document_tokens = entry.int("document_tokens", None, min=1)
    if document_tokens is not None and document_tokens > seq_len:
        raise entry.error(f"a document of {document_tokens:,} tokens is longer than a sequence (seq_len {seq_len:,})",
                          "document_tokens", "Give the mean tokens of one document packed into a sequence, at most "
                          "seq_len; leave it out when each sequence is one document.")
    epochs = _epochs(entry, dataset_tokens, micro_batch * grad_accum * seq_len)
    load_in_8bit = entry.bool("load_in_8bit", False)
    _check_method_settings(entry, method, recipe, load_in_8bit=load_in_8bit, load_in_4bit=load_in_4bit)
    targets = _lora_targets(entry, arch, fw_name, method, targets)
    _check_offload(entry, fw_name, method=method, recipe=recipe, optimizer=optimizer, zero=zero,
                   offload_optimizer=offload_optimizer, offload_params=offload_params)
    _check_quantized_parallelism(entry, method, tp=tp, zero=zero, use_dora=use_dora, load_in_8bit=load_in_8bit)
    # past a learned position table: refused; past a rotary model's maximum: warned (training_warnings)
    check_positions(arch, seq_len, entry, "seq_len")
    levers = _framework_levers(entry, fw_name, d, method=method, zero=zero, tp=tp, gpus=gpus, seq_len=seq_len,
                               grad_accum=grad_accum, checkpointing=checkpointing, optimizer=optimizer,
                               offload_optimizer=offload_optimizer, load_in_8bit=load_in_8bit,
                               load_in_4bit=load_in_4bit, release=release)
    train = Training(method, recipe, optimizer, micro_batch, seq_len, grad_accum, gpus, tp, zero, offload_optimizer,
                     offload_params, checkpointing, attention, lora_rank, tuple(targets or ()), double_quant,
                     adapter_dtype, dataset_tokens, epochs, prepare_kbit, lora_dropout, use_dora, load_in_8bit,
                     use_reentrant, load_in_4bit=load_in_4bit, document_tokens=document_tokens, **levers,
                     **_cache_keys(entry, fw_name, checkpointing=checkpointing))
    base = "fp32" if RECIPES[recipe].weight_bytes == 4 else RECIPES[recipe].dtype
    if (train.fsdp == 1 and train.fsdp_wrap == "blocks" and method in ("lora", "qlora")
            and not train.quantized_base and adapter_dtype != base):
        # torch/distributed/fsdp/_flat_param.py _validate_tensors_to_flatten
        raise entry.error(f"FSDP1 flattens each unit into one FlatParameter of one dtype ('Must flatten tensors with "
                          f"uniform dtype'): {adapter_dtype} adapters cannot share a block's unit with the "
                          f"{base} base", "fsdp_wrap" if "fsdp_wrap" in entry.data else "adapter_dtype",
                          f"Set adapter_dtype: {base} (the base's), or fsdp_wrap: separate.")
    return train


#: The frameworks that run Transformers' model code, whose forward can return the KV cache (use_cache).
HF_MODEL_FRAMEWORKS = ("transformers", "deepspeed", "fsdp")


def _release_attention(entry: Entry, arch: Architecture, fw_name: str, release: str | None) -> str:
    """``attention`` (planner.workload.checks._attention) for the Transformers release: before 4.36.0
    (planner.workload.releases.TRANSFORMERS_SDPA) Llama has no SDPA attention, so left out it is eager
    and ``sdpa`` is refused."""
    if fw_name not in HF_MODEL_FRAMEWORKS or framework_has(fw_name, release, TRANSFORMERS_SDPA):
        return _attention(entry, arch)
    if "attention" not in entry.data:
        return "eager"
    attention = _attention(entry, arch)
    if attention == "sdpa":
        raise entry.error(f"Transformers {release} has no SDPA attention (LlamaSdpaAttention came with "
                          f"{TRANSFORMERS_SDPA.release})", "attention",
                          f"Use attention: eager (its default) or flash, or framework_version: "
                          f"'{TRANSFORMERS_SDPA.release}' or later.")
    return attention


def _cache_keys(entry: Entry, fw_name: str, *, checkpointing: str) -> dict[str, bool]:
    """``use_cache`` and ``checkpoint_wrapper`` (planner.workload.options.Training; planner.memory.train_cache).

    ``use_cache`` left out is the model config's default, True (``LlamaConfig(use_cache=True)``,
    configuration_llama.py), for the frameworks that run Transformers' model code; the others' models
    return no cache (False, and refused when set true).
    """
    hf = fw_name in HF_MODEL_FRAMEWORKS
    use_cache = entry.bool("use_cache", hf)
    if use_cache and not hf:
        raise entry.error(f"use_cache is set but framework {fw_name}'s model returns no KV cache in training",
                          "use_cache", "Remove use_cache, or set framework: transformers, deepspeed or fsdp.")
    wrapper = entry.bool("checkpoint_wrapper", False)
    if wrapper and checkpointing != "full":
        raise entry.error(f"checkpoint_wrapper is set but checkpointing is {checkpointing}", "checkpoint_wrapper",
                          "Set checkpointing: full, or remove checkpoint_wrapper.")
    if wrapper and not hf:
        raise entry.error(f"checkpoint_wrapper is set but framework {fw_name} checkpoints its own layers",
                          "checkpoint_wrapper", "Remove checkpoint_wrapper, or set framework: transformers, "
                          "deepspeed or fsdp.")
    return dict(use_cache=use_cache, checkpoint_wrapper=wrapper)


def _framework_version(entry: Entry, fw_name: str) -> str | None:
    """The framework release given as ``framework_version`` (None when left out: the current one modelled),
    refused when it is a number, not release text, older than the oldest release modelled or past any release
    of the project (planner.workload.releases.read_release, FRAMEWORK_RELEASES). With deepspeed and fsdp the
    key names the Transformers release, and a refusal says so."""
    whose = (f"with framework {fw_name}, framework_version names the Transformers release (its model code, loss "
             "and Trainer are Transformers')" if fw_name in ("deepspeed", "fsdp") else "")
    return read_release(entry, "framework_version", FRAMEWORK_RELEASES[fw_name], lines=FRAMEWORK_RELEASES,
                        key_name="framework", whose=whose)


def _batch_and_parallelism(entry: Entry, arch: Architecture) -> tuple[int, int, int, int, int]:
    """micro_batch, seq_len, grad_accum, tp and gpus, read and checked (gpus a multiple of tp, tp dividing
    the heads)."""
    micro_batch = entry.int("micro_batch", 1, min=1, max=MAX_MICRO_BATCH)
    seq_len = entry.int("seq_len", min(2048, arch.max_position_embeddings), min=1, max=MAX_SEQ_LEN)
    grad_accum = entry.int("grad_accum", 1, min=1, max=1_000_000)
    tp = entry.int("tp", 1, min=1, max=1024)
    gpus = _with_hint(lambda: entry.int("gpus", tp, min=1, max=MAX_GPUS), entry, "gpus",
                      f"Give a count from 1 to {MAX_GPUS}: every GPU the job runs on (data-parallel ranks x "
                      "tensor-parallel degree).")
    if gpus % tp:
        raise entry.error(f"gpus ({gpus}) is not a multiple of tp ({tp})", "gpus",
                          "gpus counts every GPU: data-parallel ranks x tensor-parallel degree.")
    check_tp(arch, tp, entry)
    return micro_batch, seq_len, grad_accum, tp, gpus


def _checkpointing(entry: Entry, method: str, default: str) -> tuple[str, bool]:
    """checkpointing (``default``: the framework's) and use_reentrant, read and checked against each other
    and the method."""
    checkpointing = entry.str("checkpointing", default, choices=CHECKPOINTING)
    use_reentrant = entry.bool("use_reentrant", False)
    if method == "adapter" and checkpointing == "full":
        raise entry.error("LitGPT's adapter fine-tune on one GPU does not checkpoint activations (it does only under "
                          "FSDP, activation_checkpointing_policy)", "checkpointing", "Set checkpointing: none.")
    if "use_reentrant" in entry.data and checkpointing != "full":
        raise entry.error(f"use_reentrant is set but checkpointing is {checkpointing}", "use_reentrant",
                          "Set checkpointing: full, or remove use_reentrant.")
    return checkpointing, use_reentrant


def _check_method_settings(entry: Entry, method: str, recipe: str, *, load_in_8bit: bool,
                           load_in_4bit: bool) -> None:
    """Refuse a quantized base the method does not take, LoRA settings given to a method without them, and a
    bitsandbytes base under a recipe that keeps fp32 weights."""
    rec = RECIPES[recipe]
    if load_in_8bit and method != "lora":
        raise entry.error(f"load_in_8bit is set but method is {method}", "load_in_8bit",
                          "QLoRA's base is 4-bit NF4; for LoRA on an LLM.int8 base set method: lora, or remove "
                          "load_in_8bit." if method == "qlora" else
                          "int8 weights cannot train: set method: lora for LoRA on an LLM.int8 base, or remove "
                          "load_in_8bit.")
    # A bitsandbytes base: QLoRA's NF4, LoRA's LLM.int8, or an adapter's NF4.
    kbit = method == "qlora" or load_in_8bit or load_in_4bit
    for key in ("lora_rank", "adapter_dtype", "lora_dropout", "use_dora", "double_quant", "prepare_kbit_training"):
        if key not in entry.data:
            continue
        if key == "double_quant" and method == "adapter" and load_in_4bit:
            continue
        if key == "double_quant" and method != "qlora":
            raise entry.error(f"{key} is set but method is {method}", key,
                              "Set load_in_4bit: true (an NF4 base), or remove double_quant." if method == "adapter"
                              else f"Set method: qlora, or remove {key}.")
        if method == "adapter":
            raise entry.error(f"{key} is set but method is adapter (LitGPT's LLaMA-Adapter has no LoRA settings"
                              + (", and LitGPT does not call peft's prepare_model_for_kbit_training"
                                 if key == "prepare_kbit_training" else "") + ")", key,
                              f"Remove {key}, or set method: lora or qlora.")
        if key == "prepare_kbit_training" and not kbit:
            hint = (f"Set method: qlora, or load_in_8bit: true, or remove {key}." if method == "lora" else
                    f"Set method: qlora, or remove {key}.")
            raise entry.error(f"{key} is set but method is {method}" + (" without load_in_8bit" if method == "lora"
                                                                         else ""), key, hint)
        if method == "full":
            raise entry.error(f"{key} is set but method is {method}", key, f"Set method: lora or qlora, or remove {key}.")
    if kbit and rec.weight_bytes == 4:
        what = ("QLoRA" if method == "qlora" else "An adapter on an NF4 base" if load_in_4bit else
                "LoRA on an LLM.int8 base")
        raise entry.error(f"{what} computes with a 16-bit base, but recipe {recipe!r} keeps fp32 weights", "recipe",
                          "Use recipe pure-bf16 (or pure-fp16 on GPUs without bf16).")


def _lora_targets(entry: Entry, arch: Architecture, fw_name: str, method: str,
                  targets: list[str] | None) -> list[str] | None:
    """The modules LoRA and QLoRA adapt: ``targets`` as given (all-linear expanded), else the framework's
    default for the model; refused where the model has no such linear module, or the method adapts none."""
    if method in ("lora", "qlora"):
        valid = sorted({m.name for m in arch.linear_modules()})
        if targets is not None and not targets:
            # peft's LoraConfig(target_modules=[]) adapts nothing: nothing would train
            raise entry.error("lists no module: LoRA with no target module has nothing to train", "lora_targets",
                              "Name the modules to adapt, e.g. q_proj and v_proj, or all-linear; or remove "
                              "lora_targets for the default of this model type.")
        if arch.is_moe:
            # Transformers 5 keeps the experts and the router as parameters, not nn.Linear modules:
            # peft adapts them, if at all, with adapters of its own (target_parameters, fused
            # gate_up), which the memory model does not size. Shared experts and dense layers'
            # MLPs (DeepSeek, Qwen2-MoE) are nn.Linear modules and can be adapted.
            linear = {m.name for m in arch.linear_modules() if m.part in ("attention", "mlp")}
            moe = sorted({m.name for m in arch.linear_modules()} - linear)
            attn_modules = sorted(linear)
            asked = targets or []
            if asked == ["all-linear"] or any(t in moe for t in asked):
                shown = "all-linear" if asked == ["all-linear"] else ", ".join(t for t in asked if t in moe)
                raise entry.error(f"LoRA on {arch.model_type}'s experts or router ({shown}) is not modelled: "
                                  "Transformers 5 keeps them as fused parameters, not nn.Linear modules, and peft "
                                  "adapts them with adapters of its own", "lora_targets",
                                  ("Target the attention projections: " if all(
                                      m.part != "mlp" for m in arch.linear_modules()) else
                                   "Target the nn.Linear modules (attention, and the shared experts' and dense "
                                   "layers' MLPs): ") + f"{', '.join(attn_modules)}.")
            valid = attn_modules
        if targets is None:
            from planner.workload.frameworks import NoDefaultTargets

            try:
                targets = list(default_lora_targets(arch, fw_name))
            except NoDefaultTargets as exc:
                raise entry.error(str(exc), "lora_targets",
                                  ("Set lora_targets: " if arch.is_moe else "Set lora_targets: all-linear, or ")
                                  + f"some of {', '.join(valid)}."
                                  ) from None
        if targets == ["all-linear"]:
            targets = valid
        elif "all-linear" in targets:
            raise entry.error("all-linear is given beside other LoRA targets", "lora_targets",
                              "all-linear stands alone (it adapts every linear module): give it alone, "
                              "or list the modules without it.")
        for t in targets:
            if t not in valid:
                from planner.core.errors import did_you_mean
                from planner.core.list_hints import bracket_hint
                commas = bool(getattr(entry.error_cls, "options", False))  # --lora-targets takes a,b
                problem, hint = _unknown_target(t, valid, arch.model_type, commas)
                raise entry.error(problem, "lora_targets", bracket_hint("lora_targets", t, valid, commas=commas)
                                  or hint or did_you_mean(t, valid + ["all-linear"]))
        if len(set(targets)) != len(targets):  # peft matches each module by name once: a repeat adapts nothing more
            dup = next(t for t in targets if targets.count(t) > 1)
            raise entry.error(f"lists {dup!r} twice", "lora_targets", "Give each module once.")
    elif targets is not None:
        raise entry.error(f"lora_targets is set but method is {method}", "lora_targets",
                          "Set method: lora or qlora, or remove lora_targets.")
    return targets


def _check_offload(entry: Entry, fw_name: str, *, method: str, recipe: str, optimizer: str, zero: int,
                   offload_optimizer: bool, offload_params: bool) -> None:
    """Refuse an optimizer or parameter offload the sharding, the framework, the optimizer or the recipe
    cannot run (ZeRO-Offload, ZeRO-Infinity, FSDP's CPUOffload)."""
    fw = FRAMEWORK_SPECS[fw_name]
    rec = RECIPES[recipe]
    if offload_optimizer and zero == 0:
        raise entry.error("offload_optimizer needs ZeRO stage 1, 2 or 3 (ZeRO-Offload)", "offload_optimizer",
                          "Set zero: 1 or higher.")
    if offload_params and zero != 3:
        if fw.fsdp:
            raise entry.error("offload_params needs FSDP's FULL_SHARD (zero 3): FSDP's CPUOffload(offload_params=True) "
                              "keeps each rank's parameter and gradient shards in host RAM", "offload_params",
                              "Set zero: 3.")
        raise entry.error("offload_params needs ZeRO stage 3 (ZeRO-Infinity)", "offload_params", "Set zero: 3.")
    if offload_optimizer and fw.fsdp and zero >= 2:
        # FSDP has one CPU offload, CPUOffload(offload_params=True), which moves the parameter and gradient
        # shards to host RAM and so steps the optimizer there (torch.distributed.fsdp.CPUOffload docs).
        raise entry.error(f"offload_optimizer is DeepSpeed's ZeRO-Offload; framework {fw_name} shards with PyTorch FSDP, "
                          "whose CPU offload moves parameters, gradients and the optimizer step to the host together",
                          "offload_optimizer", "Set offload_params: true (FSDP CPUOffload), or framework: deepspeed.")
    if offload_optimizer and optimizer not in OFFLOAD_OPTIMIZERS:
        # DeepSpeed runs an offloaded optimizer on the CPU with its own kernels; a client optimizer
        # (bitsandbytes', Transformers' Adafactor, torch's SGD) is refused unless the config sets
        # zero_force_ds_cpu_optimizer: false, and then steps CUDA-only code on CPU tensors.
        raise entry.error(f"ZeRO-Offload steps the optimizer on the CPU with DeepSpeed's own optimizers "
                          f"(DeepSpeedCPUAdam, DeepSpeedCPULion), and {optimizer} is not one of them (DeepSpeed "
                          "refuses a client optimizer with offload_optimizer)", "optimizer",
                          f"Use optimizer: {' or '.join(OFFLOAD_OPTIMIZERS)} with offload_optimizer, or leave "
                          "offload_optimizer out.")
    if offload_optimizer and method == "full" and rec.weight_bytes == 2 and not rec.master_bytes:
        # DeepSpeed's CPU optimizer always updates an fp32 partition with fp32 states
        # (stage_1_and_2.py single_partition_of_fp32_groups; stage3.py _create_fp32_partitions);
        # its only 16-bit variant, fp16_master_weights_and_gradients, still keeps fp32 states.
        raise entry.error(f"recipe {recipe} keeps no fp32 master copy, but ZeRO-Offload has no pure 16-bit mode: "
                          "DeepSpeed's CPU optimizer updates an fp32 copy of the parameters with fp32 states",
                          "recipe", f"Use recipe: mixed-{rec.dtype} (what DeepSpeed runs with {rec.dtype} enabled: "
                          "the same GPU side, fp32 master weights and states in host RAM), or leave "
                          "offload_optimizer out.")


def _check_quantized_parallelism(entry: Entry, method: str, *, tp: int, zero: int, use_dora: bool,
                                 load_in_8bit: bool) -> None:
    """Refuse tensor parallelism for DoRA and bitsandbytes bases, and ZeRO-3 for an LLM.int8 base."""
    if use_dora and tp > 1:
        raise entry.error(f"DoRA does not run tensor parallel (tp {tp}): peft's tensor-parallel LoRA layer refuses "
                          "use_dora (peft tuners/lora/tp_layer.py)", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N) or sharded (zero: 3), or leave DoRA "
                          "out (plain LoRA runs tensor parallel).")
    if method == "qlora" and tp > 1:
        raise entry.error(f"QLoRA does not run tensor parallel (tp {tp}): Transformers and peft training do not shard "
                          "bitsandbytes 4-bit layers across GPUs", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N) or sharded (zero: 3 with "
                          "bnb_4bit_quant_storage, as FSDP-QLoRA does).")
    if load_in_8bit and tp > 1:
        raise entry.error(f"LoRA on an LLM.int8 base does not run tensor parallel (tp {tp}): Transformers and peft "
                          "training do not shard bitsandbytes 8-bit layers across GPUs", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N).")
    if load_in_8bit and zero == 3:
        # ZeRO-3 and FSDP partition parameters as flat float buffers; bitsandbytes' 8-bit layers keep
        # their int8 weight and fp32 row scales (Int8Params.SCB) outside any such storage, and
        # bnb_4bit_quant_storage, the hook FSDP-QLoRA uses, exists for 4-bit layers only (FSDP on an
        # 8-bit model: "Must flatten tensors with uniform dtype but got torch.float16 and torch.int8",
        # bitsandbytes issue 1709; LLaMA-Factory issue 3543: FSDP+QLoRA supports 4-bit only).
        raise entry.error("LoRA on an LLM.int8 base cannot shard its parameters (zero 3): bitsandbytes' 8-bit layers "
                          "have no quant-storage option for ZeRO-3 or FSDP (bnb_4bit_quant_storage is 4-bit only)",
                          "zero", "Use zero: 0, 1 or 2 (only the adapters' states are sharded), or method: qlora "
                          "with zero: 3.")


def _comma_split(entry: Entry, targets: list[str] | None, warnings: list[str]) -> list[str] | None:
    """``lora_targets: q_proj,v_proj`` (one text) as the list it means, as ``--lora-targets`` reads it,
    with a warning that says so (nothing the user wrote is changed without a word)."""
    raw = entry.data.get("lora_targets")
    if not isinstance(raw, str) or "," not in raw or targets is None:
        return targets
    parts = [p.strip() for p in raw.split(",")]
    if not all(parts):  # 'q_proj,,v_proj': an item left out, which would be dropped without a word
        shown = ", ".join(p for p in parts if p)
        raise entry.error(f"{raw!r} has an empty item (two commas together, or one at an end)", "lora_targets",
                          f"Write lora_targets: [{shown}].")
    warnings.append(f"lora_targets {raw!r} is one text: read as the list [{', '.join(parts)}], as --lora-targets "
                    f"reads it (write lora_targets: [{', '.join(parts)}] to say so)")
    return parts


def _check_adapter(entry: Entry, arch: Architecture, fw_name: str, data_parallel: int) -> None:
    """Refuse an adapter workload the model does not describe: LitGPT's LLaMA-Adapter on its own model
    code, one GPU, a model with layers past the adapter's start layer."""
    from planner.workload.frameworks import LITGPT_ADAPTER_START_LAYER

    if fw_name != "litgpt":
        raise entry.error(f"method adapter is LitGPT's LLaMA-Adapter (litgpt/adapter.py), not a {fw_name} method",
                          "method", "Set framework: litgpt, or method: lora.")
    if arch.generic or arch.is_mla or arch.is_moe:
        raise entry.error(f"LitGPT's adapter is modelled on LitGPT's fused-projection attention; {arch.model_type}'s "
                          "attention is not that", "method", "Use method: lora.")
    if arch.num_hidden_layers <= LITGPT_ADAPTER_START_LAYER:
        raise entry.error(f"{arch.model_type} has {arch.num_hidden_layers} layers; LitGPT's adapter starts at layer "
                          f"{LITGPT_ADAPTER_START_LAYER} (adapter_start_layer), so nothing would train", "method",
                          "Use method: lora.")
    if data_parallel > 1:
        raise entry.error(f"LitGPT's adapter on {data_parallel} GPUs (FSDP) is not modelled", "gpus",
                          "Use gpus: 1, or method: lora.")


def _check_framework_sharding(entry: Entry, fw_name: str, *, zero: int, dp: int, fsdp_version: int,
                              release: str | None = None) -> None:
    """Refuse sharding settings a framework's own scripts cannot run (one line, naming the framework).

    - torchtune (recipes at 1814feb17): one GPU runs a ``*_single_device`` recipe (no sharding);
      several run a ``*_distributed`` recipe, which always wraps the model with FSDP2 ``fully_shard``
      (``fsdp_reshard_after_forward`` True: zero 3, False: zero 2); no DDP, no FSDP1. Before 0.3.0
      (``framework_version``, planner.workload.releases.TORCHTUNE_FSDP2) the distributed recipes wrap it
      with FSDP1 ``FullyShardedDataParallel(sharding_strategy=FULL_SHARD)`` instead (recipes/*_distributed.py
      at v0.2.1): FSDP1 and zero 3 only.
    - litgpt (litgpt/finetune/lora.py, full.py, adapter.py ``setup`` at 00af8b0d): ``devices > 1``
      builds ``FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block},
      cpu_offload=False)`` (FSDP1, FULL_SHARD: zero 3, no CPU offload); one device runs no strategy.
    - unsloth is not refused here: its documentation runs several GPUs through accelerate (DDP) or
      DeepSpeed (unsloth.ai docs, "Multi-GPU Fine-tuning with Unsloth").
    """
    given = entry.data
    if fw_name == "torchtune" and not framework_has(fw_name, release, TORCHTUNE_FSDP2):
        if dp > 1 and zero != 3:
            raise entry.error(f"torchtune {release}'s distributed recipes shard with FSDP1 FULL_SHARD, so {dp} GPUs "
                              f"cannot run zero {zero}", "zero", "Use zero: 3 (or leave zero out), or gpus: 1.")
        if "fsdp_version" in given and fsdp_version != 1:
            raise entry.error(f"torchtune {release}'s distributed recipes shard with FSDP1 (FullyShardedDataParallel); "
                              f"FSDP2 (fully_shard) came with {TORCHTUNE_FSDP2.release}", "fsdp_version",
                              f"Use fsdp_version: 1, or framework_version: '{TORCHTUNE_FSDP2.release}' or later.")
    elif fw_name == "torchtune":
        if dp > 1 and zero < 2:
            raise entry.error(f"torchtune's distributed recipes always shard with FSDP2 fully_shard, so {dp} GPUs "
                              f"cannot run zero {zero}", "zero",
                              "Use zero: 3 (fsdp_reshard_after_forward: True) or zero: 2 (False), or gpus: 1.")
        if "fsdp_version" in given and fsdp_version != 2:
            raise entry.error("torchtune shards with FSDP2 (fully_shard) only, not FSDP1, from release "
                              f"{TORCHTUNE_FSDP2.release} on", "fsdp_version",
                              "Use fsdp_version: 2, framework_version: '0.2.1' (FSDP1), or framework: fsdp.")
    elif fw_name == "litgpt":
        if dp > 1 and zero != 3:
            raise entry.error(f"LitGPT runs {dp} GPUs with Lightning's FSDPStrategy (FULL_SHARD), not zero {zero}",
                              "zero", "Use zero: 3 (or leave zero out), or framework: fsdp / deepspeed.")
        if dp == 1 and zero > 0 and "zero" in given:
            raise entry.error(f"LitGPT on one GPU runs no sharding strategy (zero {zero} shards nothing there)",
                              "zero", "Use zero: 0 (or leave zero out), or gpus: 2 or more.")
        if "fsdp_version" in given and fsdp_version != 1:
            raise entry.error("LitGPT's finetune scripts shard with Lightning's FSDPStrategy, which is FSDP1",
                              "fsdp_version", "Use fsdp_version: 1, or framework: torchtune / fsdp for FSDP2.")
        if given.get("offload_params"):
            raise entry.error("LitGPT's finetune scripts build FSDPStrategy(cpu_offload=False): no parameter offload",
                              "offload_params", "Remove offload_params, or use framework: fsdp / deepspeed.")
        for key in ("offload_activations", "optimizer_in_backward"):
            if given.get(key) is True:
                raise entry.error(f"LitGPT's finetune scripts have no {key.replace('_', ' ')} (a torchtune lever)",
                                  key, f"Remove {key}, or use framework: torchtune.")


def _framework_levers(entry: Entry, fw_name: str, d: Any, *, method: str, zero: int, tp: int, gpus: int, seq_len: int,
                      grad_accum: int, checkpointing: str, optimizer: str, offload_optimizer: bool,
                      load_in_8bit: bool, load_in_4bit: bool = False,
                      release: str | None = None) -> dict[str, Any]:
    """Read and check the framework and its levers (planner.workload.frameworks); the keyword arguments
    are the options read before them. Returns the :class:`Training` fields they set."""
    fw = FRAMEWORK_SPECS[fw_name]
    fsdp_version = _fsdp_version(entry, fw_name, d, zero)
    if fw.fsdp and zero == 1:
        raise entry.error(f"framework {fw_name} shards with PyTorch FSDP, which has no stage that shards the optimizer "
                          "states alone (ZeRO-1)", "zero",
                          "Use zero: 2 (SHARD_GRAD_OP), 3 (FULL_SHARD) or 0 (no sharding), or framework: deepspeed.")
    _check_framework_sharding(entry, fw_name, zero=zero, dp=gpus // tp, fsdp_version=fsdp_version,
                              release=release)
    if fw_name in ("litgpt", "unsloth") and tp > 1:
        raise entry.error(f"framework {fw_name} has no tensor parallelism for fine-tuning (tp {tp})", "tp",
                          "Use tp: 1 and spread the work data-parallel (gpus: N).")
    if fw_name == "litgpt" and (method == "qlora" or load_in_8bit) and gpus > 1:
        raise entry.error(f"LitGPT refuses a quantized base on {gpus} GPUs ('Quantization is currently not supported "
                          "for multi-GPU training', litgpt/finetune/lora.py)", "gpus",
                          "Use gpus: 1, or method: lora (a 16-bit base, sharded by FSDP).")
    if fw_name == "torchtune" and load_in_8bit:
        raise entry.error("torchtune has no LLM.int8 base (its QLoRA base is torchao's NF4)", "load_in_8bit",
                          "Use method: qlora, or framework: transformers.")
    loss_chunks = entry.int("loss_chunks", d.loss_chunks, min=0, max=MAX_SEQ_LEN)
    if loss_chunks > seq_len:
        raise entry.error(f"{loss_chunks:,} loss chunks are more than the {seq_len:,} tokens of a sequence (chunks "
                          "split the sequence)", "loss_chunks", f"Use loss_chunks: {min(8, seq_len)} or another "
                          f"count up to {seq_len:,}.")
    fused = entry.bool("fused_linear_loss", False)
    if fused and loss_chunks > 1 and "loss_chunks" in entry.data:
        raise entry.error("fused_linear_loss chunks the head and the loss itself; loss_chunks is a different loss",
                          "loss_chunks", "Remove loss_chunks, or set fused_linear_loss: false.")
    if fused:
        loss_chunks = 0
    offload = entry.bool("offload_activations", d.offload_activations)
    if offload and fw_name == "torchtune" and checkpointing != "full":
        raise entry.error("torchtune offloads activations only with activation checkpointing "
                          "('enable_activation_offloading should only be True when enable_activation_checkpointing "
                          "is True', recipes/*_single_device.py)", "offload_activations",
                          "Set checkpointing: full, or offload_activations: false.")
    in_bwd = entry.bool("optimizer_in_backward", d.optimizer_in_backward)
    if in_bwd:
        _check_optimizer_in_backward(entry, fw_name, zero=zero, tp=tp, gpus=gpus, grad_accum=grad_accum,
                                     offload_optimizer=offload_optimizer)
    bnb_version = _bnb_version(entry, fw_name, method=method, optimizer=optimizer, load_in_8bit=load_in_8bit,
                               load_in_4bit=load_in_4bit)
    compile_ = entry.bool("compile", False)
    if "fsdp_wrap" in entry.data and not fw.fsdp:
        fsdp_names = ", ".join(n for n in FRAMEWORKS if FRAMEWORK_SPECS[n].fsdp)
        raise entry.error(f"fsdp_wrap is set but framework {fw_name} does not shard with PyTorch FSDP", "fsdp_wrap",
                          f"Set framework: to one of {fsdp_names}, or remove fsdp_wrap.")
    wrap = entry.str("fsdp_wrap", "blocks" if fw_name == "litgpt" else "separate", choices=FSDP_WRAPS)
    return dict(framework=fw_name, fsdp_version=fsdp_version, loss_chunks=loss_chunks,
                fused_linear_loss=fused, offload_activations=offload, optimizer_in_backward=in_bwd,
                bnb_version=bnb_version, compile=compile_, fsdp_wrap=wrap, framework_version=release)


def _fsdp_version(entry: Entry, fw_name: str, d: Any, zero: int) -> int:
    """The FSDP version of a framework that shards with PyTorch FSDP (0 for the others), checked against the
    framework and the ZeRO stage."""
    fw = FRAMEWORK_SPECS[fw_name]
    fsdp_names = ", ".join(n for n in FRAMEWORKS if FRAMEWORK_SPECS[n].fsdp)
    fsdp_version = entry.int("fsdp_version", d.fsdp_version or 1, min=1, max=2) if fw.fsdp else 0
    if "fsdp_version" in entry.data:
        if not fw.fsdp:
            raise entry.error(f"fsdp_version is set but framework {fw_name} does not shard with PyTorch FSDP "
                              f"({'DeepSpeed ZeRO shards its parameters' if fw_name != 'unsloth' else 'it runs without FSDP'})",
                              "fsdp_version", f"Set framework: to one of {fsdp_names}, or remove fsdp_version.")
        if fsdp_version not in FSDP_VERSIONS:  # pragma: no cover - min/max above
            raise entry.error(f"must be 1 or 2, not {fsdp_version}", "fsdp_version")
        if zero < 2 and "zero" in entry.data:
            # (with zero left out, one data-parallel rank defaults to 0: the version applies once the job runs
            # on more GPUs, as a scenario's may; training_warnings says it shards nothing meanwhile)
            raise entry.error(f"fsdp_version is set but zero is {zero}: FSDP shards with zero 2 (SHARD_GRAD_OP) or "
                              "3 (FULL_SHARD)", "fsdp_version", "Set zero: 3 (or 2), or remove fsdp_version.")
    return fsdp_version


def _check_optimizer_in_backward(entry: Entry, fw_name: str, *, zero: int, tp: int, gpus: int, grad_accum: int,
                                 offload_optimizer: bool) -> None:
    """Refuse optimizer_in_backward where gradients must outlive their parameter's step (accumulation,
    ZeRO-Offload, DeepSpeed ZeRO, DDP over several ranks)."""
    fw = FRAMEWORK_SPECS[fw_name]
    fsdp_names = ", ".join(n for n in FRAMEWORKS if FRAMEWORK_SPECS[n].fsdp)
    if grad_accum > 1:
        raise entry.error(f"optimizer_in_backward steps each parameter as its gradient completes, so there are no "
                          f"gradients to accumulate over {grad_accum} micro-batches (torchtune: 'Gradient "
                          "accumulation is not supported with optimizer in bwd')", "optimizer_in_backward",
                          "Set grad_accum: 1, or optimizer_in_backward: false.")
    if offload_optimizer:
        raise entry.error("optimizer_in_backward cannot run with ZeRO-Offload, which steps DeepSpeed's CPU "
                          "optimizer after backward", "optimizer_in_backward",
                          "Set offload_optimizer: false, or optimizer_in_backward: false.")
    if zero >= 1 and not fw.fsdp:
        raise entry.error(f"optimizer_in_backward is not a DeepSpeed ZeRO mode (zero {zero}): DeepSpeed steps its "
                          "optimizer on the flat partitions after backward", "optimizer_in_backward",
                          f"Set zero: 0, or framework: to one of {fsdp_names} (FSDP steps per parameter).")
    if zero < 2 and gpus // tp > 1:
        raise entry.error(f"optimizer_in_backward over {gpus // tp} data-parallel ranks without FSDP: DDP all-reduces "
                          "gradients in buckets after they complete, so a parameter cannot be stepped as its own "
                          "gradient completes", "optimizer_in_backward",
                          f"Set zero: 3 with framework: one of {fsdp_names}, or gpus: {tp}.")


def _bnb_version(entry: Entry, fw_name: str, *, method: str, optimizer: str, load_in_8bit: bool,
                 load_in_4bit: bool) -> str:
    """The bitsandbytes release, refused when it is not a release number or nothing in the workload runs
    bitsandbytes."""
    bnb_version = entry.str("bnb_version", CURRENT_BNB_VERSION)
    if (long := long_release_problem(bnb_version)) is not None:  # before int(): Python refuses 4,300+ digits
        raise entry.error(long, "bnb_version", "Write it as X.Y.Z, e.g. bnb_version: '0.42.0'.")
    if parse_version(bnb_version) is None:
        raise entry.error(f"{bnb_version!r} is not a bitsandbytes release number", "bnb_version",
                          "Write it as X.Y.Z, e.g. bnb_version: '0.42.0'.")
    if "bnb_version" in entry.data:
        uses_bnb = ((method == "qlora" and fw_name != "torchtune") or load_in_8bit or load_in_4bit
                    or OPTIMIZERS[optimizer].bitsandbytes)
        four_bit = (method == "qlora" and fw_name != "torchtune") or load_in_4bit
        if four_bit and parse_version(bnb_version) < BNB_FIRST_4BIT:
            raise entry.error(f"bitsandbytes {bnb_version} has no 4-bit (NF4) layers, which this workload's base "
                              f"needs: they came in {'.'.join(map(str, BNB_FIRST_4BIT))}", "bnb_version",
                              f"Give the release the run uses, {'.'.join(map(str, BNB_FIRST_4BIT))} or later.")
        if not uses_bnb:
            raise entry.error("bnb_version is set but nothing in this workload runs bitsandbytes (no bitsandbytes "
                              "base, no bitsandbytes optimizer" + ("; torchtune's QLoRA base is torchao's NF4"
                                                                  if fw_name == "torchtune" else "") + ")",
                              "bnb_version", "Remove bnb_version.")
    return bnb_version


#: The most tokens a dataset may give (10^16: beyond any corpus trained on; the bound the key always had).
MAX_DATASET_TOKENS = 10**16


def _epochs(entry: Entry, dataset_tokens: int | None, step_tokens: int) -> float:
    """The ``epochs`` key (default 1): above 0, at most 10,000, and a fraction of an epoch large enough for one
    optimizer step of one data-parallel rank, ``step_tokens`` (micro_batch x grad_accum x seq_len) tokens, of the
    ``dataset_tokens`` given, or of the largest dataset read (:data:`MAX_DATASET_TOKENS`) when none is: a job of
    1e-300 epochs is 0 tokens and a cost of $6e-293, a typo (h23b M5). From 1 epoch up a job is the whole dataset.

    Raises:
        InputError: at ``epochs``, naming the tokens it gives, the step and the least epochs that holds one.
    """
    epochs = entry.number("epochs", 1.0, min=0, max=10_000, min_exclusive=True)
    if epochs >= 1:
        return epochs
    tokens = dataset_tokens if dataset_tokens is not None else MAX_DATASET_TOKENS
    if epochs * tokens >= step_tokens:
        return epochs
    least = float(f"{step_tokens / tokens:.3g}")  # the hint's value, 3 digits, rounded up where .3g rounds down
    if least * tokens < step_tokens:
        least = float(f"{least * 1.01:.3g}")
    least = min(least, 1.0)  # from 1 epoch up a job is the whole dataset, however small
    of = (f"dataset_tokens {dataset_tokens:,}" if dataset_tokens is not None else
          f"even the largest dataset_tokens ({MAX_DATASET_TOKENS:.0e})")
    given = shown_number(entry.data.get("epochs", epochs))
    job = epochs * tokens
    raise entry.error(f"{given} epochs of {of} is {f'{job:,.0f}' if job >= 1 else f'{job:.3g}'} tokens, less than one optimizer step "
                      f"({step_tokens:,} tokens: micro_batch x grad_accum x seq_len)", "epochs",
                      f"Give the passes over the dataset a run makes, at least {least:.3g} (one step), e.g. epochs: 1.")


def _dataset_tokens(entry: Entry) -> int | None:
    """The ``dataset_tokens`` key as a whole number of tokens, written as a number (2000000000) or
    with an SI suffix as ``tokens_per_month`` takes it ('2B', '500M', '1.5B tokens';
    :func:`planner.workload.options.parse_token_count`); None when absent.

    Raises:
        InputError: not a token count, not a whole number, or outside 1 .. :data:`MAX_DATASET_TOKENS`.
    """
    raw = entry.raw("dataset_tokens", None, "a token count")  # refused when empty (Entry.refuse_null)
    if raw is None:
        return None
    count = read_token_count(entry, "dataset_tokens", "2B (or 2000000000")
    if not 1 <= count <= MAX_DATASET_TOKENS:  # first: inf (.inf, 1e400, 10**309) has no whole value
        raise entry.error(f"must be at least 1 and at most {MAX_DATASET_TOKENS:.0e}, not {shown_number(raw)}",
                          "dataset_tokens", "The tokens one epoch reads (tokens seen = dataset_tokens x epochs).")
    if count != int(count):
        raise entry.error(f"{raw!r} is not a whole number of tokens ({count:,})", "dataset_tokens",
                          f"Write dataset_tokens: {int(round(count)):,}".replace(",", "") + ".")
    return int(count)


#: Module names of the output layer and the embeddings across Transformers' causal LMs (Llama's lm_head and
#: embed_tokens, GPT-2's wte/wpe, GPT-NeoX's embed_out/embed_in, BLOOM's word_embeddings).
_OUTPUT_LAYERS = frozenset({"lm_head", "embed_out", "output", "output_layer"})
_EMBEDDINGS = frozenset({"embed_tokens", "wte", "wpe", "embed_in", "word_embeddings", "tok_embeddings"})


def _unknown_target(t: str, valid: list[str], model_type: str, commas: bool) -> tuple[str, str | None]:
    """The problem and hint for a LoRA target that is none of ``valid``: the output layer or an embedding
    (modules planner does not put adapters on: peft's all-linear leaves the output layer out, peft/tuners/
    tuners_utils.py ``_maybe_include_all_linear_layers``), a fused module of another model (phi3's qkv_proj,
    gate_up_proj) whose parts this model has apart, or (hint None) a name for close matches (h18b minor e)."""
    sep = "," if commas else ", "
    listed = sep.join(valid)
    if t in _OUTPUT_LAYERS or t in _EMBEDDINGS:
        what = "the output layer" if t in _OUTPUT_LAYERS else "an embedding"
        return (f"LoRA target {t!r} is {what}, which planner does not size adapters on (peft's all-linear leaves the "
                "output layer out; embeddings take peft's Embedding adapters)",
                f"Target the decoder layers' linear modules of {model_type}: {listed}, or all-linear.")
    split = _split_fused(t[:-5], [p[:-5] for p in valid if p.endswith("_proj")]) if t.endswith("_proj") else []
    parts = [f"{p}_proj" for p in split]
    if len(parts) > 1 and len(set(parts)) == len(parts):
        return (f"LoRA target {t!r} names a fused module (as phi3's qkv_proj and gate_up_proj are); {model_type} "
                f"has {', '.join(parts[:-1])} and {parts[-1]} as separate modules", f"Give them all: {sep.join(parts)}.")
    return f"LoRA target {t!r} is not a linear module of {model_type}", None


def _split_fused(stem: str, names: list[str]) -> list[str]:
    """``stem`` ('qkv', 'gate_up') as the concatenation of some of ``names`` ('q', 'k', 'v'; 'gate', 'up'),
    an optional '_' between them; [] when it is not one."""
    if not stem:
        return []
    for n in sorted(names, key=len, reverse=True):
        if stem.startswith(n):
            rest = stem[len(n):].lstrip("_")
            tail = _split_fused(rest, names) if rest else []
            if not rest or tail:
                return [n] + tail
    return []
