"""The models and optimizers planner.validate.measure runs: small, randomly initialised Hugging Face
models built from configs (nothing is downloaded), their quantized variants, and the optimizers.

Importing this module does not import torch; the builders do.
"""

from __future__ import annotations

import logging
import platform
from typing import Any, Mapping

ATTENTIONS = ("eager", "sdpa")


# --------------------------------------------------------------------------- models


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "peft"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except ImportError:
            out[name] = "not installed"
    # QLoRA runs need bitsandbytes; read its version without importing it
    from importlib import metadata

    try:
        out["bitsandbytes"] = metadata.version("bitsandbytes")
    except metadata.PackageNotFoundError:
        out["bitsandbytes"] = "not installed"
    return out


def _setup(seed: int, threads: int) -> Any:
    """torch, seeded with ``seed`` and set to run on ``threads`` threads: both settings of the whole
    process, so only the measuring worker's runs call it (planner.validate.worker)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    return torch


def _quiet_transformers() -> None:
    """Transformers' logger at ERROR, FutureWarnings and peft's UserWarnings ignored, bitsandbytes'
    logger at ERROR: settings of the whole process, so only the measuring worker's runs call it
    (planner.validate.worker)."""
    import warnings

    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass
    warnings.filterwarnings("ignore", category=FutureWarning)
    # bitsandbytes' CPU backend logs that an optional inference kernel package is missing
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning, module="peft")


def build_model(config: Mapping[str, Any], *, attention: str, dtype: Any) -> Any:
    """``AutoModelForCausalLM.from_config`` on a config mapping with a ``model_type`` key."""
    from transformers import AutoConfig, AutoModelForCausalLM

    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, not {attention!r}")
    cfg = dict(config)
    model_type = cfg.pop("model_type", None)
    if not model_type:
        raise ValueError("config needs a model_type (llama, qwen2, gpt2, ...)")
    hf_config = AutoConfig.for_model(model_type, **cfg)
    return AutoModelForCausalLM.from_config(hf_config, attn_implementation=attention, dtype=dtype)


def build_qlora_model(config: Mapping[str, Any], *, attention: str, double_quant: bool) -> Any:
    """A 4-bit NF4 model as ``from_pretrained(..., quantization_config=BitsAndBytesConfig(...))``
    loads it, on the CPU and without downloads: the bf16 model built from ``config`` is saved to a
    temporary directory and loaded back with bf16 compute (the QLoRA paper's settings)."""
    import torch
    from transformers import BitsAndBytesConfig

    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                               bnb_4bit_compute_dtype=torch.bfloat16,
                               bnb_4bit_use_double_quant=bool(double_quant))
    return _load_quantized(config, attention=attention, quant=quant)


def build_int8_model(config: Mapping[str, Any], *, attention: str) -> Any:
    """An LLM.int8 model as ``from_pretrained(..., quantization_config=BitsAndBytesConfig(
    load_in_8bit=True))`` loads it (outlier threshold 6.0, Transformers' default), with bf16 for
    what stays unquantized; on the CPU and without downloads, as :func:`build_qlora_model`."""
    from transformers import BitsAndBytesConfig

    return _load_quantized(config, attention=attention, quant=BitsAndBytesConfig(load_in_8bit=True))


def _load_quantized(config: Mapping[str, Any], *, attention: str, quant: Any) -> Any:
    """The bf16 model built from ``config``, saved to a temporary directory and loaded back
    through ``quant`` (a ``BitsAndBytesConfig``) on the CPU."""
    import tempfile

    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    model = build_model(config, attention=attention, dtype=torch.bfloat16)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with tempfile.TemporaryDirectory(prefix="planner-qlora-") as tmp:
            model.save_pretrained(tmp)
            del model
            return AutoModelForCausalLM.from_pretrained(tmp, quantization_config=quant, device_map="cpu",
                                                        dtype=torch.bfloat16, attn_implementation=attention)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _quant_state_tensors(model: Any) -> list[Any]:
    """The tensors of the 4-bit weights' quantization states (absmax, NF4 code and, with double
    quantization, the 8-bit absmax's offset, absmax and code): device tensors on CUDA too."""
    out, seen = [], set()
    for module in model.modules():
        qs = getattr(getattr(module, "weight", None), "quant_state", None)
        if qs is None or id(qs) in seen:
            continue
        seen.add(id(qs))
        out += [qs.absmax, qs.code]
        if qs.nested:
            out += [qs.offset, qs.state2.absmax, qs.state2.code]
    return [t for t in out if t is not None]


#: The optimizer each planner name stands for, as Hugging Face's Trainer builds it (``optim``:
#: adamw_torch, sgd, adafactor, adamw_bnb_8bit, lion_32bit), with the class the results record.
OPTIMIZER_CLASSES = {
    "adamw": "AdamW", "sgd": "torch.optim.SGD", "sgd-momentum": "torch.optim.SGD(momentum=0.9)",
    "adafactor": "transformers.optimization.Adafactor",
    "adamw-fused": "torch.optim.AdamW(fused=True)",
    "adamw-8bit": "bitsandbytes.optim.AdamW8bit (nn.Embedding weights 32-bit, as the Trainer registers them)",
    "lion": "bitsandbytes.optim.Lion",
}


def build_optimizer(name: str, params: list[Any], *, model: Any = None, foreach: bool = True) -> Any:
    """The optimizer ``name`` (a key of :data:`OPTIMIZER_CLASSES`) over ``params``, lr 1e-4.

    torch's AdamW and SGD run their foreach implementation (the default on CUDA); Adafactor is
    Transformers' with the Trainer's settings (``scale_parameter=False, relative_step=False``, no
    first moment); AdamW8bit and Lion are bitsandbytes' (8-bit blockwise states; 32-bit Lion). For
    AdamW8bit the ``nn.Embedding`` weights of ``model`` get 32-bit states, as the Trainer registers
    them (transformers/trainer.py ``create_optimizer``: ``register_module_override(module,
    "weight", {"optim_bits": 32})``).

    Raises:
        ValueError: an unknown name.
    """
    import torch

    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, foreach=foreach)
    if name == "adamw-fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if name in ("sgd", "sgd-momentum"):
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9 if name == "sgd-momentum" else 0.0, foreach=foreach)
    if name == "adafactor":
        from transformers.optimization import Adafactor

        return Adafactor(params, lr=1e-4, scale_parameter=False, relative_step=False, warmup_init=False)
    if name == "adamw-8bit":
        import bitsandbytes as bnb

        optimizer = bnb.optim.AdamW8bit(params, lr=1e-4)
        manager = bnb.optim.GlobalOptimManager.get_instance()
        manager.initialize()  # a process-wide singleton: no override of an earlier run's model stays
        for module in (model.modules() if model is not None else ()):
            if isinstance(module, torch.nn.Embedding):
                manager.register_module_override(module, "weight", {"optim_bits": 32})
        return optimizer
    if name == "lion":
        import bitsandbytes as bnb

        return bnb.optim.Lion(params, lr=1e-4)
    raise ValueError(f"optimizer must be one of {sorted(OPTIMIZER_CLASSES)}, not {name!r}")


def _int8_state_tensors(model: Any) -> list[Any]:
    """The fp32 row scales (``SCB``) of the 8-bit layers, which bitsandbytes keeps beside the int8
    weight (on the weight until the first forward, then in the layer's matmul state)."""
    out = []
    for module in model.modules():
        state = getattr(module, "state", None)
        if state is None or not hasattr(state, "SCB"):
            continue
        scb = getattr(module.weight, "SCB", None)
        scb = scb if scb is not None else state.SCB
        if scb is not None:
            out.append(scb)
    return out
