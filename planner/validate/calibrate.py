"""Calibration on the user's own NVIDIA GPU: measured CUDA context and allocator overhead.

``planner calibrate`` runs a few real steps of a workload on the local GPU with a randomly
initialised model (no downloads), records ``torch.cuda.max_memory_allocated``,
``torch.cuda.max_memory_reserved`` and the device's used memory (``torch.cuda.mem_get_info``),
prints them against the estimate, and saves a calibration: the CUDA context size (device
memory in use before the first tensor) and the reserved/allocated ratio, per GPU model. Later
``planner estimate --gpu ID`` runs on that GPU model use it and say so.

Sources: PyTorch docs, "CUDA semantics - memory management" (allocated vs reserved) and
``torch.cuda.mem_get_info`` (cudaMemGetInfo).
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.core.errors import InputError, PlannerError
from planner.memory.overheads import RuntimeOverheads


class CalibrationUnavailable(PlannerError):
    """Calibration cannot run here (no torch, no CUDA GPU, or an unsupported workload)."""


@dataclass(frozen=True)
class Calibration:
    """Measured runtime overheads of one GPU model.

    Attributes:
        gpu_name: as ``torch.cuda.get_device_name`` reports it.
        cuda_context_bytes: device memory in use before the first tensor (context, kernels).
        allocator_fraction: max_memory_reserved / max_memory_allocated - 1 over the run.
        measured_on: ISO date.
        versions: torch and CUDA versions.
    """

    gpu_name: str
    cuda_context_bytes: int
    allocator_fraction: float
    measured_on: str
    versions: dict[str, str]

    def overheads(self, path: Path) -> RuntimeOverheads:
        """Runtime overheads for the memory model, citing this calibration."""
        base = RuntimeOverheads()
        return RuntimeOverheads(cuda_context_bytes=self.cuda_context_bytes, workspace_bytes=base.workspace_bytes,
                                nccl_bytes=base.nccl_bytes, allocator_fraction=max(0.0, self.allocator_fraction),
                                source=f"calibration {path} ({self.gpu_name}, {self.measured_on})")


def default_path(env: dict[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/planner/calibration.yaml`` (default ``~/.config/planner/calibration.yaml``)."""
    env = dict(os.environ if env is None else env)
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "planner" / "calibration.yaml"


def normalise(name: str) -> str:
    """A GPU name reduced to lower-case letters and digits, for matching catalog names."""
    return "".join(ch for ch in name.lower() if ch.isalnum()).replace("nvidia", "").replace("geforce", "")


def load_calibrations(path: Path) -> dict[str, Calibration]:
    """Calibrations by normalised GPU name; an absent file gives none.

    Raises:
        InputError: the file exists but is not a calibration written by ``planner calibrate``.
    """
    from planner.core.fields import Entry
    from planner.core.yamlio import YamlProblem, load_mapping

    if not path.exists():
        return {}
    try:
        data = load_mapping(path)
    except YamlProblem as exc:
        raise InputError(exc.problem, file=str(path), line=exc.line, entry=exc.path, hint=exc.hint) from None
    root = Entry(data, file=str(path))
    root.check_keys(["schema_version", "gpus"], required=["gpus"])
    out = {}
    for e in root.children("gpus"):
        e.check_keys(["gpu_name", "cuda_context", "allocator_fraction", "measured_on", "versions"],
                     required=["gpu_name", "cuda_context", "allocator_fraction", "measured_on"])
        cal = Calibration(e.str("gpu_name"), e.size("cuda_context", max=2**36),
                          e.number("allocator_fraction", min=0, max=10), e.date("measured_on"),
                          dict(e.raw("versions", {}) or {}))
        out[normalise(cal.gpu_name)] = cal
    return out


def overheads_for_gpu(gpu_name: str, path: Path) -> RuntimeOverheads | None:
    """The calibrated overheads for a catalog GPU name, or None when it was not calibrated."""
    cals = load_calibrations(path)
    key = normalise(gpu_name)
    for name, cal in cals.items():
        if name and (name == key or name in key or key in name):
            return cal.overheads(path)
    return None


def save_calibration(cal: Calibration, path: Path) -> None:
    """Add or replace this GPU's entry in the calibration file (written atomically)."""
    import yaml

    from planner.core.atomic import write_text

    existing = {}
    if path.exists():
        existing = {k: v for k, v in load_calibrations(path).items()}
    existing[normalise(cal.gpu_name)] = cal
    doc = {"schema_version": 1, "gpus": [
        {"gpu_name": c.gpu_name, "cuda_context": f"{c.cuda_context_bytes} B",
         "allocator_fraction": round(c.allocator_fraction, 4), "measured_on": c.measured_on,
         "versions": c.versions}
        for c in existing.values()]}
    write_text(path, yaml.safe_dump(doc, sort_keys=False))


def _plain(value: Any) -> Any:
    """A config value as plain dicts and lists (the catalog freezes nested mappings, which
    Transformers' config cannot deep-copy)."""
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


#: Recipes the calibration runs with plain torch (no fp32 master copy beside 16-bit weights).
TORCH_RECIPES = ("fp32", "amp-bf16", "amp-fp16", "pure-bf16", "pure-fp16")


def unsupported(workload: Any) -> tuple[str, str, str] | None:
    """The first setting of ``workload`` the calibration run cannot reproduce, or None.

    The run is one process on one GPU: Transformers with a random model, torch AdamW for training
    (full or LoRA, the torch recipes, no ZeRO), ``generate`` for inference (16/32-bit weights, the
    KV cache in the model dtype). Anything else would be measured as something it is not.

    Returns:
        (workload key, problem, hint) for the first setting it cannot run.
    """
    if workload.tp != 1:
        return ("tp", f"planner calibrate runs on one GPU, not tensor parallel over {workload.tp}",
                "Give tp: 1 (the overheads it measures are per GPU and apply to every tp).")
    if workload.gpus != 1:
        return ("gpus", f"planner calibrate runs on one GPU, not {workload.gpus}",
                "Give gpus: 1 (the overheads it measures are per GPU and apply to any count).")
    t, i = workload.train, workload.infer
    if t is not None:
        if t.method == "qlora":
            return ("method", "planner calibrate runs full or LoRA training, not QLoRA (bitsandbytes)",
                    "Give method: full or lora; the CUDA context and allocator overhead it measures apply to QLoRA "
                    "estimates on that GPU too.")
        if t.load_in_8bit:
            return ("load_in_8bit", "planner calibrate runs LoRA on a 16-bit base, not an LLM.int8 one (bitsandbytes)",
                    "Leave load_in_8bit out; the CUDA context and allocator overhead it measures apply to 8-bit "
                    "estimates on that GPU too.")
        if t.zero:
            return ("zero", f"planner calibrate runs one process without DeepSpeed, not ZeRO stage {t.zero}",
                    "Give zero: 0.")
        if t.recipe not in TORCH_RECIPES:
            return ("recipe", f"recipe {t.recipe} keeps fp32 master weights beside 16-bit ones, which the calibration "
                    "run does not", f"Use recipe: {', '.join(TORCH_RECIPES[:-1])} or {TORCH_RECIPES[-1]}.")
        if t.optimizer != "adamw":
            return ("optimizer", f"the calibration run steps torch.optim.AdamW, not {t.optimizer}",
                    "Give optimizer: adamw (the runtime overheads it measures apply to every optimizer).")
        if t.method == "lora" and t.adapter_dtype != "fp32":
            return ("adapter_dtype", f"the calibration run keeps peft's fp32 adapters, not {t.adapter_dtype}",
                    "Give adapter_dtype: fp32 (peft's default).")
        attention = t.attention
    else:
        assert i is not None
        if i.engine != "hf":
            return ("engine", f"planner calibrate runs Transformers generate, not {i.engine}",
                    "Give engine: hf; vLLM's budget is its own start-up arithmetic ('planner estimate --engine vllm "
                    "--gpu ID').")
        if i.weights not in ("fp32", "fp16", "bf16"):
            return ("weights", f"planner calibrate runs inference with fp32, fp16 or bf16 weights, not {i.weights}",
                    "Give weights: bf16, fp16 or fp32.")
        if i.kv_dtype != i.weights:
            return ("kv_dtype", f"Transformers generate keeps the KV cache in the model dtype ({i.weights}), not "
                    f"{i.kv_dtype}", f"Give kv_dtype: {i.weights}, or leave it out.")
        if i.max_num_batched_tokens is not None:
            return ("max_num_batched_tokens", "the calibration run prefills each prompt whole, not in chunks",
                    "Leave max_num_batched_tokens out.")
        attention = i.attention
    if attention == "flash":
        return ("attention", "the calibration run uses Transformers' sdpa or eager kernel, not flash "
                "(flash_attention_2 needs the flash-attn package)",
                ("Give attention: sdpa; the memory model sizes sdpa and flash alike (neither stores the scores)."
                 if workload.architecture.sdpa_supported else
                 f"Give attention: eager ({workload.architecture.model_type} has no sdpa in Transformers); "
                 "eager keeps the score matrices, which flash would not."))
    return None


def run_calibration(workload: Any, *, steps: int = 3) -> dict[str, Any]:
    """Run ``steps`` steps of ``workload`` on the local CUDA GPU and measure its memory.

    Supported: training with method full or lora, the torch recipes (fp32, amp-*, pure-*) and
    AdamW, and inference with Transformers generate and fp32/fp16/bf16 weights (:func:`unsupported`).

    Raises:
        CalibrationUnavailable: the workload needs something the calibration does not run
            (:func:`unsupported`), or torch or a CUDA GPU is missing.
    """
    why = unsupported(workload)
    if why is not None:
        key, problem, hint = why
        raise CalibrationUnavailable(f"{key}: {problem}. {hint}")
    try:
        import torch
    except ImportError:
        raise CalibrationUnavailable(
            "planner calibrate needs PyTorch with CUDA; install it with: pip install '.[validate]'") from None
    if not torch.cuda.is_available():
        raise CalibrationUnavailable("planner calibrate needs an NVIDIA GPU, and PyTorch sees none "
                                     f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
    t = workload.train
    from transformers import AutoConfig, AutoModelForCausalLM

    arch = workload.architecture
    cfg = AutoConfig.for_model(**_plain(arch.extra))
    dev = torch.device("cuda")
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    context = total - free0
    torch.cuda.reset_peak_memory_stats()
    if t is not None:
        half = {"bf16": torch.bfloat16, "fp16": torch.float16}
        dtype = half.get(t.recipe.split("-")[-1], torch.float32) if t.recipe.startswith("pure") else torch.float32
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype,
                                                 attn_implementation="eager" if t.attention == "eager" else "sdpa")
        model.to(dev).train()
        if t.checkpointing == "full":
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if t.method == "lora":
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(model, LoraConfig(r=t.lora_rank, target_modules=list(t.lora_targets),
                                                     lora_dropout=t.lora_dropout, use_dora=t.use_dora))
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        amp = t.recipe.startswith("amp")
        amp_dtype = torch.bfloat16 if t.recipe.endswith("bf16") else torch.float16
        for _ in range(steps):
            ids = torch.randint(0, arch.vocab_size, (t.micro_batch, t.seq_len), device=dev)
            with torch.autocast("cuda", dtype=amp_dtype, enabled=amp):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del loss, ids
    else:
        i = workload.infer
        dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[i.weights]
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, attn_implementation=i.attention)
        model.to(dev).eval()
        with torch.no_grad():
            ids = torch.randint(0, arch.vocab_size, (i.concurrency, max(1, i.context - 8)), device=dev)
            model.generate(input_ids=ids, max_new_tokens=8, min_new_tokens=8, do_sample=False)
    torch.cuda.synchronize()
    allocated = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    free1, _ = torch.cuda.mem_get_info()
    return {
        "gpu_name": torch.cuda.get_device_name(),
        "device_total_bytes": total,
        "cuda_context_bytes": context,
        "max_memory_allocated_bytes": allocated,
        "max_memory_reserved_bytes": reserved,
        "device_used_bytes": total - free1,
        "allocator_fraction": (reserved / allocated - 1) if allocated else 0.0,
        "versions": {"torch": torch.__version__, "cuda": str(torch.version.cuda)},
        "measured_on": _dt.date.today().isoformat(),
    }
