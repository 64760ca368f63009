"""What peft's DoRA adapters save for backward and make inside one forward."""

from __future__ import annotations

from planner.memory.saved import Regime, SavedTensor
from planner.model.architecture import Architecture


DORA_SRC = ("Liu et al. 2024, DoRA, sec. 4 (magnitude x direction, the norm detached); peft "
            "tuners/lora/dora.py DoraLinearLayer.forward")


def dora_saved_tensors(name: str, in_features: int, out_features: int, regime: Regime, *,
                       adapter_bytes: int, lora_dropout: float, weight_cast: bool,
                       input_requires_grad: bool = True) -> list[SavedTensor]:
    """What one DoRA-adapted linear keeps for backward beyond its LoRA adapter, per token.

    peft's DoRA output is ``(m / ||W + sBA||_c - 1) * base + (m / ||W + sBA||_c) * lora`` with the
    norm detached (Liu et al. 2024, sec. 4.3; peft tuners/lora/dora.py ``DoraLinearLayer.forward``).
    The magnitude ``m`` trains, so both products keep their other operand: the base layer's
    output (``out_features`` values in the compute dtype) and the adapter's output (in the
    adapter dtype, or the compute dtype under autocast).

    With ``lora_dropout`` above 0 peft cannot reuse the base output (it was computed without
    dropout): it runs ``F.linear(dropout(x), W.to(x.dtype))`` again on the input cast to the
    adapter dtype, and that linear keeps the weight it used for the input gradient: a new tensor
    of ``in x out`` values per module whenever the cast copies (a 4-bit base is always dequantized
    into a new tensor). Under autocast the linear keeps 16-bit copies of its input and weight.

    Args:
        name: the module name (for the labels).
        in_features, out_features: the module's weight shape (per tensor-parallel rank).
        regime: activation dtypes.
        adapter_bytes: bytes per adapter value.
        lora_dropout: peft's lora_dropout.
        weight_cast: ``W.to(adapter dtype)`` makes a new tensor: the frozen weight's dtype is not the
            adapters' (bf16 base and fp32 or fp16 adapters), or the base is 4-bit.
        input_requires_grad: the module's input requires grad; if not (the first layer's first
            modules under a frozen embedding), the recomputed linear keeps no weight.

    Returns:
        The saved tensors (per token, and ``per_layer`` weight copies with dropout).
    """
    c = regime.compute
    ab = c if regime.amp else adapter_bytes
    out = []
    if lora_dropout > 0 and regime.amp:
        out.append(SavedTensor(f"DoRA {name} base output recomputed under autocast ({c} B)", c * out_features))
        out.append(SavedTensor(f"DoRA {name} dropped-out input, autocast {c}-byte copy", c * in_features))
        if input_requires_grad:
            out.append(SavedTensor(f"DoRA {name} weight, autocast {c}-byte copy (kept by the recomputed base "
                                   "linear)", c * in_features * out_features, per_layer=True))
    elif lora_dropout > 0:
        out.append(SavedTensor(f"DoRA {name} base output recomputed on the dropped-out input ({ab} B)",
                               ab * out_features))
        if input_requires_grad and weight_cast:
            out.append(SavedTensor(f"DoRA {name} weight as {ab} B (kept by the recomputed base linear)",
                                   ab * in_features * out_features, per_layer=True))
    else:
        out.append(SavedTensor(f"DoRA {name} base output ({c} B)", c * out_features))
    out.append(SavedTensor(f"DoRA {name} adapter output ({ab} B)", ab * out_features))
    return out


def dora_temporaries(arch: Architecture, regime: Regime, targets: tuple[str, ...], *, lora_rank: int,
                     adapter_bytes: int, weight_cast: bool, lora_dropout: float = 0.0) -> tuple[int, str]:
    """Peak bytes of the tensors peft's DoRA creates and frees inside one adapted module's forward.

    Every forward, peft computes the adapter's weight ``BA`` by running the adapters on an
    identity matrix (``lora_B(lora_A(eye(in)))``, dora.py ``get_lora_weight``) and then the column
    norms of ``W + s BA`` (``get_weight_norm``), in the adapter dtype ``a`` (peft casts the input,
    and so the weight, to it). Live at the sum: the identity (in^2 x a), ``lora_A``'s output
    (in x r x a), ``BA``, the frozen weight cast to ``a`` (a new tensor when its dtype differs, and
    always for a dequantized 4-bit base), ``s BA`` and the sum (in x out x a each). Under autocast
    the identity is cast to 16 bits for the matmuls (in^2 x 2 B more) and ``BA`` comes out 16-bit;
    then the fp32 identity and the 16-bit ``BA`` are freed (the 16-bit identity stays, kept by the
    adapters' autograd graph) while ``BA`` in fp32, ``s BA`` and the sum are written. One module's
    temporaries exist at a time; the module with the largest sets the peak. With ``lora_dropout``
    above 0 the cast weight outlives the step (the recomputed base linear keeps it,
    :func:`dora_saved_tensors`) and is counted with the saved tensors instead.

    Source: peft tuners/lora/dora.py; the sequence was traced op by op (tests/test_dora.py).
    DoRA runs on whole weights: the workload reader refuses it with tensor parallelism.

    Returns:
        (bytes per GPU, formula text naming the module).
    """
    c = regime.compute
    a = adapter_bytes
    best, text = 0, ""
    for m in arch.linear_modules():
        if m.name not in targets:
            continue
        i, o, r = m.in_features, m.out_features, lora_rank
        if regime.amp:
            first = i * i * (a + c) + i * r * c + i * o * c
            second = i * i * c + i * r * c + 3 * i * o * a
            n = max(first, second)
            formula = (f"{m.name}: max(in^2 x ({a} + {c}) B + in x out x {c} B, in^2 x {c} B + 3 x in x out x "
                       f"{a} B) + in x r x {c} B, in={i:,}, out={o:,}, r={r}")
            if lora_dropout > 0:
                # The saved tensors count this module's autocast weight copy for the recomputed base
                # linear, which only runs after these temporaries are freed.
                n -= i * o * c
                formula += f" - in x out x {c} B (the weight copy kept later, counted with the saved tensors)"
        else:
            copies = 4 if weight_cast and not lora_dropout > 0 else 3
            n = i * i * a + i * r * a + copies * i * o * a
            formula = (f"{m.name}: in^2 x {a} B + in x r x {a} B + {copies} x in x out x {a} B, "
                       f"in={i:,}, out={o:,}, r={r}")
        if n > best:
            best, text = n, formula
    return best, text
