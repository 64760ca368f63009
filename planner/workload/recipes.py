"""Precision recipes and optimizers: bytes per parameter for each model state.

A *recipe* names which copies of the model a training step keeps and in what dtype. Every
result prints its recipe, because calculators in this field disagree by 2x on the same job
mostly through unstated recipes (8, 16, 18 or 20 bytes per parameter for AdamW).

Sources:
- ZeRO paper (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
  Parameter Models", section 3.1): mixed precision Adam = 2 (16-bit weights) + 2 (16-bit
  gradients) + 4 (fp32 master weights) + 4 + 4 (fp32 momentum and variance) = 16 B/param.
- DeepSpeed / Megatron-LM keep fp32 gradient accumulation buffers (Megatron
  ``--accumulate-allreduce-grads-in-fp32``, DeepSpeed ``bf16.immediate_grad_update`` off):
  2 + 4 + 4 + 8 = 18 B/param.
- PyTorch ``torch.optim.AdamW`` creates ``exp_avg`` and ``exp_avg_sq`` with
  ``torch.zeros_like(p)``: states take the parameter's dtype (pytorch.org/docs, torch.optim.AdamW).
- torch AMP (pytorch.org/docs/stable/amp.html): fp32 weights, gradients and states; autocast
  casts each weight to 16-bit when an op uses it and caches the copy until the autocast region exits.
- FP8 training (Micikevicius et al. 2022, "FP8 Formats for Deep Learning"; NVIDIA Transformer
  Engine ``fp8_autocast``; torchao ``convert_to_float8_training``): the master state is Megatron's
  mixed precision (bf16 weights, fp32 master weights and Adam states, 16 B/param plus fp32
  gradient buffers counted as 2-byte bf16 here) and each linear layer keeps FP8 copies of its
  weight and its transpose while a step runs (2 B/param, ``autocast_copy_bytes``).
- bitsandbytes 8-bit optimizers (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
  Quantization", section 2): one byte per state value plus one fp32 absmax per block of 256
  values (bitsandbytes ``Optimizer8bit.init_state``); tensors under 4096 values stay 32-bit.
- Adafactor (Shazeer and Stern 2018, section 3): the second moment of an n x m matrix is stored
  as a row vector (n) and a column vector (m); Transformers' Adafactor keeps no first moment
  by default (beta1=None).
- Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Algorithm 1): one
  momentum buffer; bitsandbytes' Lion keeps it in fp32 (``Optimizer1State.init_state``, optim_bits 32).
- The implementations are those Hugging Face's Trainer builds for ``optim`` adamw_torch (torch
  AdamW, foreach), sgd, adafactor (Transformers' Adafactor), adamw_bnb_8bit and lion_32bit
  (bitsandbytes); tests/data/validation measures each of them.
- torch AdamW with ``fused=True`` (what torchtune's configs ask for) updates every parameter in
  place in one multi-tensor kernel (``torch._fused_adamw_``): no step temporaries.
- bitsandbytes paged optimizers (``PagedAdamW``, ``PagedAdamW8bit``; the Trainer's
  ``paged_adamw_32bit`` / ``paged_adamw_8bit``): ``Optimizer.get_state_buffer`` allocates the
  ``state1``/``state2`` buffers of every tensor of at least 1e5 values with ``F.get_paged``
  (``cudaMallocManaged``: CUDA unified memory, which PyTorch's caching allocator does not count and
  the driver may evict to host RAM under pressure); smaller tensors' states and the 8-bit absmax
  vectors come from ``torch.zeros`` (bitsandbytes-foundation/bitsandbytes commit 95f9af3
  ``bitsandbytes/optim/optimizer.py``: ``get_state_buffer``, ``Optimizer2State.init_state``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter of each copy a precision recipe keeps.

    Attributes:
        name: the recipe's name as the CLI and scenario files spell it.
        weight_bytes: bytes per parameter of the weights the forward pass reads.
        grad_bytes: bytes per parameter of the gradients.
        master_bytes: bytes per parameter of an fp32 master copy (0 when none).
        state_bytes: bytes per optimizer state value (4 fp32, 2 bf16/fp16).
        compute_bytes: bytes per activation value (the dtype matmuls produce).
        autocast_copy_bytes: bytes per parameter of autocast's cached 16-bit weight copies.
        persistent_grads: gradients are buffers that live through the whole step (DeepSpeed /
            Megatron) rather than tensors created in backward and freed by ``zero_grad``.
        dtype: the 16-bit dtype name ('bf16', 'fp16') or 'fp32'; used for hardware support.
        description: one sentence printed with every result.
    """

    name: str
    weight_bytes: int
    grad_bytes: int
    master_bytes: int
    state_bytes: int
    compute_bytes: int
    autocast_copy_bytes: int
    persistent_grads: bool
    dtype: str
    description: str


def _recipes() -> dict[str, Recipe]:
    out = {}
    out["fp32"] = Recipe("fp32", 4, 4, 0, 4, 4, 0, False, "fp32",
                         "fp32 weights, gradients, optimizer states and activations.")
    for d in ("bf16", "fp16"):
        out[f"amp-{d}"] = Recipe(
            f"amp-{d}", 4, 4, 0, 4, 2, 2, False, d,
            f"torch AMP: fp32 weights, gradients and optimizer states; autocast runs matmuls in {d} "
            f"and caches a {d} copy of each weight during forward and backward.")
        out[f"mixed-{d}"] = Recipe(
            f"mixed-{d}", 2, 2, 4, 4, 2, 0, True, d,
            f"Mixed precision as in the ZeRO paper: {d} weights and gradients, fp32 master weights "
            f"and fp32 optimizer states (16 B/param with AdamW).")
        out[f"mixed-{d}-fp32-grads"] = Recipe(
            f"mixed-{d}-fp32-grads", 2, 4, 4, 4, 2, 0, True, d,
            f"Mixed precision with fp32 gradient buffers (DeepSpeed/Megatron): {d} weights, fp32 "
            f"gradients, fp32 master weights and optimizer states (18 B/param with AdamW).")
        out[f"pure-{d}"] = Recipe(
            f"pure-{d}", 2, 2, 0, 2, 2, 0, False, d,
            f"Pure {d}: weights, gradients and optimizer states all in {d} (torch optimizers keep "
            f"states in the parameter dtype); no master copy (8 B/param with AdamW).")
    out["fp8"] = Recipe(
        "fp8", 2, 2, 4, 4, 2, 2, True, "fp8",
        "FP8 training (Transformer Engine / torchao float8): bf16 weights and gradients, fp32 master weights and "
        "optimizer states; each linear layer casts its weight (and a transposed copy for backward) and its input "
        "to FP8 and multiplies at the FP8 rate.")
    return out


RECIPES: dict[str, Recipe] = _recipes()


@dataclass(frozen=True)
class Optimizer:
    """An optimizer's state per trainable parameter.

    Attributes:
        name: as the CLI spells it.
        states: state values per parameter (AdamW 2), in the recipe's state dtype unless
            ``state_value_bytes`` fixes it; for an 8-bit optimizer, the fp32 states a tensor under
            ``min_8bit_size`` keeps instead.
        fixed_state_bytes: bytes per parameter independent of the recipe (8-bit optimizers).
        factored: second moment factored into row + column vectors (Adafactor).
        step_temp_values: values per parameter the step allocates temporarily, in the state
            dtype (AdamW foreach: ``torch._foreach_sqrt(exp_avg_sq)`` makes one full copy).
        source: where the state layout is documented.
        state_value_bytes: bytes per state value when the implementation fixes them whatever the
            parameter dtype (0: the recipe's state dtype): 4 for bitsandbytes' 32-bit Lion and for
            Transformers' Adafactor, which build their states in fp32.
        largest_tensor_fp32_copies: fp32 tensors of the largest trainable tensor's size the step
            holds at once while it updates one parameter at a time (Transformers' Adafactor), for
            16-bit and for fp32 parameters.
        min_8bit_size: tensors with fewer elements keep 32-bit states (bitsandbytes'
            ``min_8bit_size``, 4096): ``states`` fp32 values each instead of ``fixed_state_bytes``.
        paged: bitsandbytes paged optimizer: the states of tensors of at least
            :data:`PAGED_MIN_ELEMENTS` values live in CUDA unified memory.
        bitsandbytes: the implementation is bitsandbytes' (its version matters to no optimizer term).
    """

    name: str
    states: int
    fixed_state_bytes: float
    factored: bool
    step_temp_values: int
    source: str
    state_value_bytes: int = 0
    largest_tensor_fp32_copies: tuple[int, int] = (0, 0)
    min_8bit_size: int = 0
    paged: bool = False
    bitsandbytes: bool = False


#: bitsandbytes pages the states of tensors of at least this many values (``get_state_buffer``:
#: ``if not self.is_paged or p.numel() < 1e5: torch.zeros_like(...)``).
PAGED_MIN_ELEMENTS = 100_000


OPTIMIZERS: dict[str, Optimizer] = {
    "adamw": Optimizer("adamw", 2, 0, False, 1,
                       "torch.optim.AdamW: exp_avg and exp_avg_sq in the parameter dtype; the foreach step "
                       "allocates sqrt(exp_avg_sq) for all parameters at once (torch/optim/adamw.py)"),
    "adamw-8bit": Optimizer("adamw-8bit", 2, 2 + 2 * 4 / 256, False, 0,
                            "bitsandbytes AdamW8bit: two 1-byte states plus an fp32 absmax per block of 256 "
                            "(Dettmers et al. 2022, section 2); tensors under 4,096 values keep two fp32 states "
                            "(min_8bit_size); the update is one fused kernel (optimizer_update_8bit_blockwise)",
                            min_8bit_size=4096, bitsandbytes=True),
    "adamw-fused": Optimizer("adamw-fused", 2, 0, False, 0,
                             "torch.optim.AdamW(fused=True): exp_avg and exp_avg_sq in the parameter dtype, "
                             "updated in place by one multi-tensor kernel (torch._fused_adamw_), no temporaries "
                             "(torchtune's configs: fused: True)"),
    "paged-adamw": Optimizer("paged-adamw", 2, 0, False, 0,
                             "bitsandbytes PagedAdamW (32-bit): exp_avg and exp_avg_sq in fp32, in CUDA unified "
                             "memory for tensors of at least 1e5 values (Optimizer.get_state_buffer, F.get_paged); "
                             "one fused update kernel (optimizer_update_32bit)",
                             state_value_bytes=4, paged=True, bitsandbytes=True),
    "paged-adamw-8bit": Optimizer("paged-adamw-8bit", 2, 2 + 2 * 4 / 256, False, 0,
                                  "bitsandbytes PagedAdamW8bit: two 1-byte states in CUDA unified memory for tensors "
                                  "of at least 1e5 values, an fp32 absmax per block of 256 from torch.zeros; tensors "
                                  "under 4,096 values keep two fp32 states (min_8bit_size); one fused kernel "
                                  "(optimizer_update_8bit_blockwise)",
                                  min_8bit_size=4096, paged=True, bitsandbytes=True),
    "sgd": Optimizer("sgd", 0, 0, False, 0, "torch.optim.SGD without momentum keeps no state"),
    "sgd-momentum": Optimizer("sgd-momentum", 1, 0, False, 0,
                              "torch.optim.SGD with momentum: one momentum_buffer per parameter"),
    "adafactor": Optimizer("adafactor", 0, 0, True, 0,
                           "Adafactor (Shazeer and Stern 2018, section 3): factored second moment, rows + "
                           "columns per matrix, full for vectors; no first moment (beta1=None). Transformers' "
                           "Adafactor (transformers/optimization.py, what the Trainer's optim adafactor builds) "
                           "casts each gradient and 16-bit parameter to fp32, keeps its states and a 0-dim RMS per "
                           "tensor in fp32, and steps one parameter at a time",
                           state_value_bytes=4, largest_tensor_fp32_copies=(4, 2)),
    "lion": Optimizer("lion", 1, 0, False, 0,
                      "Lion (Chen et al. 2023, Algorithm 1): one momentum buffer. bitsandbytes' Lion (the "
                      "Trainer's optim lion_32bit) keeps it in fp32 whatever the parameter dtype and updates in "
                      "one fused kernel (optimizer_update_32bit)", state_value_bytes=4,
                      bitsandbytes=True),
}
