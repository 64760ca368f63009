"""The records the activation model is written in: a saved tensor, a precision regime."""

from __future__ import annotations

from dataclasses import dataclass



#: Tensors saved by the activation function, in units of the MLP width, excluding the
#: multiplication of a gated MLP. gelu_new/gelu_fast are Python formulas in Transformers
#: (activations.py) that keep several intermediates.
ACTIVATION_SAVES: dict[str, int] = {
    "silu": 1, "swish": 1, "gelu": 1, "gelu_pytorch_tanh": 1, "relu": 1, "gelu_new": 4, "gelu_fast": 3,
    "quick_gelu": 2, "bloom_gelu": 1,  # BLOOM's GeLUFunction, a custom Function keeping its input
}


KORTHIKANTI = "Korthikanti et al. 2022, sec. 4 (derived per saved tensor)"


@dataclass(frozen=True)
class SavedTensor:
    """One tensor autograd keeps, per token of one layer (or of the model's head).

    Attributes:
        name: what it is, e.g. 'MLP gate output'.
        bytes_per_token: bytes per token of the micro-batch (before tensor parallelism).
        quadratic: True when the size also scales with the sequence length (attention scores):
            then the bytes are ``bytes_per_token x seq_len``.
        per_layer: True when the size does not scale with the tokens at all (a weight-shaped
            tensor a layer keeps, e.g. DoRA's cast copy of a frozen weight): ``bytes_per_token`` is
            then the layer's bytes.
        ctx_bytes_per_token: bytes per token of it held as an attribute of an
            ``autograd.Function``'s ctx rather than through ``ctx.save_for_backward`` (bitsandbytes'
            8-bit matmul): non-reentrant checkpointing, which drops saved tensors through
            ``saved_tensors_hooks``, cannot drop them, so every checkpointed layer keeps them until its
            backward (PyTorch docs, torch.utils.checkpoint and autograd saved-tensor hooks). Can exceed
            ``bytes_per_token`` where another op saves the same storage (SDPA's output, o_proj's
            input): without checkpointing it is counted once, with it the ctx still holds it.
    """

    name: str
    bytes_per_token: int
    quadratic: bool = False
    per_layer: bool = False
    ctx_bytes_per_token: int = 0


@dataclass(frozen=True)
class Regime:
    """Dtypes of the activations in one precision recipe.

    compute: bytes of matmul outputs (2 for 16-bit, 4 for fp32).
    residual: bytes of the residual stream (4 under AMP and fp32, 2 in pure 16-bit).
    amp: True under torch autocast (each op casts its fp32 inputs: one 16-bit copy per consumer).
    """

    compute: int
    residual: int
    amp: bool


def regime_for(recipe_name: str) -> Regime:
    """The activation dtypes of a recipe name (see planner.workload.recipes)."""
    if recipe_name == "fp32":
        return Regime(4, 4, False)
    if recipe_name.startswith("amp"):
        return Regime(2, 4, True)
    return Regime(2, 2, False)
