"""Activations saved for backward per GPU: the layers' saved tensors (planner.memory.layer and the
framework variants beside it) summed over the layers and the head, with checkpointing and tensor
parallelism."""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.memory.layer import LayerOptions, layer_saved_tensors
from planner.memory.litgpt_adapter import adapter_layer_saved_tensors
from planner.memory.saved import Regime, SavedTensor
from planner.model.architecture import Architecture


def head_saved_tensors(arch: Architecture, regime: Regime, *, full: bool, code: str = "transformers",
                       head_keeps_input: bool = False) -> list[SavedTensor]:
    """Tensors saved outside the layers: the final norm and the output head's input.

    Args:
        code: whose implementation (:func:`layer_saved_tensors`): LitGPT's RMSNorm keeps an fp32
            normalised tensor for its weight gradient.
        head_keeps_input: the head is a bitsandbytes linear that keeps its input on its autograd ctx
            (a quantized head before bitsandbytes 0.43.2, LitGPT's QLoRA): the final norm's output.
    """
    h = arch.hidden_size
    r, c = regime.residual, regime.compute
    out = []
    if arch.embedding_norm and full:
        # BLOOM's word_embeddings_layernorm: a LayerNorm on the embedding output (its input, mean and
        # rstd), in the graph when its weights or the embedding train.
        out.append(SavedTensor("embedding norm input", r * h))
        out.append(SavedTensor("embedding norm mean and rstd", 8))
    if arch.model_type == "cohere":
        # CohereLayerNorm in fp32: the centred input and the rsqrt (and the normalised tensor for the weight).
        out.append(SavedTensor("final norm centred input (fp32)", 4 * h))
        out.append(SavedTensor("final norm rsqrt", 4))
        if full:
            out.append(SavedTensor("final norm normalised (fp32)", 4 * h))
    elif arch.layer_norm:
        out.append(SavedTensor("final norm input", r * h))
    else:
        out.append(SavedTensor("final norm input (fp32)", 4 * h))
        if full:
            out.append(SavedTensor("final norm normalised", (4 if r == 4 or code == "litgpt" else c) * h))
    if full:
        out.append(SavedTensor("output head input", (c if regime.amp else r) * h))
    elif head_keeps_input:
        out.append(SavedTensor("output head input (kept by the 4-bit head's autograd ctx)", c * h,
                               ctx_bytes_per_token=c * h))
    return out


def logits_bytes_per_token(arch: Architecture, regime: Regime) -> tuple[int, str]:
    """Peak bytes per token of the logits and the loss (forward end or start of backward).

    Transformers' causal-LM loss upcasts the logits to fp32 (``logits.float()``) and runs
    cross-entropy, whose log-softmax saves its fp32 output. At the end of forward the logits
    (c bytes), the fp32 copy and the log-softmax output are live: V x (c + 8) B per token (the
    copy is the same tensor when c = 4). At the start of backward the training loop has dropped
    the model output (as ``Trainer.compute_loss`` does), and the saved log-softmax output, its
    gradient and the gradient of the logits are live: V x 12 B. The peak is the larger.

    Source: transformers loss/loss_utils.py ``ForCausalLMLoss``; PyTorch ``nll_loss`` and
    ``_log_softmax_backward_data`` (derivatives.yaml); confirmed by the measured grid
    (tests/data/validation/measured_cpu.json, peak at ``_log_softmax_backward_data``).
    """
    V = arch.vocab_size
    c = regime.compute if not regime.amp else 2
    forward = c + 8 if c != 4 else 8
    if not arch.final_logit_softcapping:
        per = V * max(forward, 12)
        return per, (f"V={V:,} x max(forward: {c} B logits + 4 B fp32 copy + 4 B log-softmax, "
                     f"backward: 4 B log-softmax + 4 B its gradient + 4 B logits gradient)")
    # Gemma 2's final_logit_softcapping (logits / cap -> tanh -> x cap, modeling_gemma2.py): the
    # tanh output (c bytes) is kept for backward through both phases.
    per = V * (max(forward, 12) + c)
    return per, (f"V={V:,} x (max(forward: {c} B logits + 4 B fp32 copy + 4 B log-softmax, "
                 f"backward: 4 B log-softmax + 4 B its gradient + 4 B logits gradient) "
                 f"+ {c} B softcapping tanh output)")


@dataclass(frozen=True)
class ActivationBytes:
    """Activation memory of one micro-batch, per GPU.

    Attributes:
        saved: bytes saved for backward at the start of backward (all layers' saved tensors, or
            with checkpointing each layer's input and what a custom Function keeps on its ctx) plus
            the head's.
        recompute: with checkpointing, one layer's saved tensors while it is recomputed during
            backward (0 without checkpointing).
        saved_formula, recompute_formula: the arithmetic.
        weight_copies: bytes of weight-shaped tensors within ``saved`` + ``recompute`` (DoRA's cast
            copies with lora_dropout), for saying what they cost.
        ctx_kept: bytes within ``saved`` that non-reentrant checkpointing keeps on custom Functions'
            ctx (an 8-bit base's inputs), for saying what they cost.
        head: bytes within ``saved`` of the tensors the final norm and the head keep.
        layer_input: one layer's input (its checkpoint), in the residual dtype.
        one_layer: one layer's saved tensors, the largest kind's (what a layer's backward unpacks at once).
        ctx_all: bytes the layers keep as attributes of a custom Function's ctx (an 8-bit base's
            inputs), which saved-tensor hooks (checkpointing, offloading) never see.
        ctx_in_saved: the part of ``saved`` that is those ctx tensors' own storage (the rest of
            ``ctx_all`` is storage another op saves too).
    """

    saved: int
    recompute: int
    saved_formula: str
    recompute_formula: str
    weight_copies: int = 0
    ctx_kept: int = 0
    head: int = 0
    layer_input: int = 0
    one_layer: int = 0
    ctx_all: int = 0
    ctx_in_saved: int = 0

    @property
    def total(self) -> int:
        return self.saved + self.recompute


def activation_parts(arch: Architecture, regime: Regime, *, micro_batch: int, seq_len: int, attention: str,
                     full: bool, checkpointing: str, lora_targets: tuple[str, ...] = (), lora_rank: int = 0,
                     tp: int = 1, adapter_bytes: int = 4, lora_dropout: float = 0.0,
                     cpu_dropout: bool = False, use_dora: bool = False,
                     weight_cast: bool = True, base_keeps_inputs: bool = False,
                     reentrant: bool = False, code: str = "transformers",
                     head_keeps_input: bool = False, compiled: bool = False,
                     adapter: bool = False) -> ActivationBytes:
    """Activations saved for backward, per GPU, split into what is saved and what is recomputed.

    Without checkpointing: all L layers' saved tensors plus the head's. With full
    checkpointing: each layer's input (residual dtype) plus the head's are saved; during the
    backward of one layer its saved tensors exist again (recomputed), after the loss's
    gradients are gone.

    With tensor parallelism t and sequence parallelism every per-token term is divided by t
    (Korthikanti et al. 2022, section 4.2.2).

    ``base_keeps_inputs``: the frozen base is bitsandbytes 8-bit (:func:`layer_saved_tensors`); its
    linears keep their inputs on their autograd ctx, which non-reentrant checkpointing keeps in
    every layer beside the layer's input (``saved``). ``reentrant``: checkpointing runs torch's
    reentrant variant, whose forward builds no graph, so nothing stays on a ctx.
    ``code``, ``compiled`` and ``head_keeps_input``: as for :func:`layer_saved_tensors` and
    :func:`head_saved_tensors`. ``adapter``: LitGPT's LLaMA-Adapter over a frozen base
    (:func:`adapter_activation_parts`; no checkpointing, one GPU).
    """
    if adapter:
        return adapter_activation_parts(arch, regime, micro_batch=micro_batch, seq_len=seq_len, attention=attention,
                                        base_keeps_inputs=base_keeps_inputs, cpu_kernels=cpu_dropout)
    if arch.generic:
        from planner.model.generic import decoder_proxy

        arch = decoder_proxy(arch)  # the generic decoder rule on the model's widths
    b, s, L = micro_batch, seq_len, arch.num_hidden_layers
    tokens = b * s
    options = LayerOptions(attention=attention, full=full, lora_targets=lora_targets, lora_rank=lora_rank,
                           adapter_bytes=adapter_bytes, lora_dropout=lora_dropout, cpu_dropout=cpu_dropout,
                           use_dora=use_dora, weight_cast=weight_cast, base_keeps_inputs=base_keeps_inputs,
                           cpu_kernels=cpu_dropout, code=code, compiled=compiled)

    def layer_bytes(g: Architecture, input_requires_grad: bool) -> tuple[int, int, int, int, int]:
        """Per-token linear and quadratic bytes, the per-layer (weight-shaped) bytes, the layer's
        total, and the per-token bytes of ctx attributes (which checkpointing cannot drop)."""
        saved = layer_saved_tensors(g, regime, replace(options, input_requires_grad=input_requires_grad))
        lin = sum(t.bytes_per_token for t in saved if not t.quadratic and not t.per_layer)
        quad = sum(t.bytes_per_token for t in saved if t.quadratic)
        per_layer = sum(t.bytes_per_token for t in saved if t.per_layer)
        ctx = sum(t.ctx_bytes_per_token for t in saved)
        return lin, quad, per_layer, tokens * lin + tokens * s * quad + per_layer, ctx

    # Layers of one kind at a time (a mixture of experts with dense layers has two kinds); the
    # first group holds the first layer.
    groups = arch.layer_groups()
    parts = [(n, g, layer_bytes(g, True)) for n, g in groups]
    # Tensors kept only when the layer's input requires grad (DoRA's weight copies, an 8-bit base's
    # inputs): without checkpointing the first layer's input, below a frozen embedding, does not;
    # peft makes it require grad when checkpointing is on (enable_input_require_grads).
    _, g0, (_, _, fixed0, one0, _) = parts[0]
    first_fixed, first_layer = fixed0, one0
    if (fixed0 or base_keeps_inputs) and checkpointing != "full" and not full:
        _, _, first_fixed, first_layer, _ = layer_bytes(g0, False)
    head = sum(t.bytes_per_token for t in head_saved_tensors(arch, regime, full=full, code=code,
                                                             head_keeps_input=head_keeps_input)) * tokens

    def ctx_own(g: Architecture) -> int:
        """Per-token bytes of the ctx tensors' own storage in a layer of ``g`` (within its saved bytes)."""
        return sum(t.bytes_per_token for t in layer_saved_tensors(g, regime, options) if t.ctx_bytes_per_token)
    tp_txt = f"; / t={tp} (sequence parallel)" if tp > 1 else ""

    def layer_text(lin: int, quad: int, fixed: int) -> tuple[str, str]:
        quad_txt = f" + {quad:,} B x s" if quad else ""
        fixed_txt = f" + {fixed:,} B of weight copies per layer" if fixed else ""
        return quad_txt, fixed_txt

    if checkpointing == "full":
        ckpt = tokens * regime.residual * arch.hidden_size * L
        # Non-reentrant checkpointing keeps each layer's autograd graph; what a custom Function
        # stores on its ctx (an 8-bit base's inputs) stays with it in every layer.
        kept = 0 if reentrant else sum(tokens * ctx * n for n, _, (_, _, _, _, ctx) in parts)
        saved = ckpt + kept + head
        n_big, _, (lin, quad, fixed, one_layer, ctx) = max(parts, key=lambda p: p[2][3])
        recompute = one_layer
        copies = fixed
        kept_txt = (f" + inputs the 8-bit linears keep on their autograd ctx, which checkpointing does not drop: "
                    f"{tokens:,} tokens x {ctx:,} B x L={L}" if kept else "")
        saved_text = (f"layer inputs: b*s={tokens:,} tokens x {regime.residual} B x h={arch.hidden_size:,} x L={L}"
                      f"{kept_txt} + head {head:,} B{tp_txt}")
        quad_txt, fixed_txt = layer_text(lin, quad, fixed)
        which = "" if len(parts) == 1 else " (the largest kind)"
        recompute_text = f"one layer{which}: {tokens:,} tokens x ({lin:,} B{quad_txt}){fixed_txt}{tp_txt}"
    else:
        saved = sum(one * n for n, _, (_, _, _, one, _) in parts) - (one0 - first_layer) + head
        recompute = 0
        copies = sum(fixed * n for n, _, (_, _, fixed, _, _) in parts) - (fixed0 - first_fixed)
        texts = []
        for n, _, (lin, quad, fixed, _, _) in parts:
            quad_txt, fixed_txt = layer_text(lin, quad, fixed)
            t = f"b*s={tokens:,} tokens x ({lin:,} B{quad_txt}) per token"
            if fixed:
                t = f"({t}{fixed_txt})"
            texts.append((n, t))
        if first_layer != one0:
            n, t = texts[0]
            texts[0] = (n, t + f" - {one0 - first_layer:,} B (the first layer's input needs no gradient)")
        if len(texts) == 1:
            saved_text = f"L={L} x {texts[0][1]} + head {head:,} B{tp_txt}"
        else:
            kinds = " + ".join(f"{n} {'dense' if not g.is_moe else 'MoE'} layers x {t}"
                               for (n, t), (_, g, _) in zip(texts, parts))
            saved_text = f"{kinds} + head {head:,} B{tp_txt}"
        recompute_text = ""
        kept = 0
    layer_input = tokens * regime.residual * arch.hidden_size
    biggest = max(one for _, _, (_, _, _, one, _) in parts)
    if checkpointing == "full":
        ctx_all = ctx_in_saved = kept
    else:
        ctx_all = sum(tokens * ctx * n for n, _, (_, _, _, _, ctx) in parts)
        ctx_in_saved = sum(tokens * ctx_own(g) * n for n, g, _ in parts) if ctx_all else 0
    if tp > 1:
        saved, recompute, copies, kept = -(-saved // tp), -(-recompute // tp), -(-copies // tp), -(-kept // tp)
        head, layer_input, biggest = -(-head // tp), -(-layer_input // tp), -(-biggest // tp)
        ctx_all, ctx_in_saved = -(-ctx_all // tp), -(-ctx_in_saved // tp)
    return ActivationBytes(saved, recompute, saved_text, recompute_text, copies, kept, head=head,
                           layer_input=layer_input, one_layer=biggest, ctx_all=ctx_all, ctx_in_saved=ctx_in_saved)


def adapter_activation_parts(arch: Architecture, regime: Regime, *, micro_batch: int, seq_len: int, attention: str,
                             base_keeps_inputs: bool = False, cpu_kernels: bool = False) -> ActivationBytes:
    """Activations of LitGPT's LLaMA-Adapter (:func:`adapter_layer_saved_tensors`): nothing in the
    layers before ``adapter_start_layer``, the first adapted layer's share, every later layer's, and
    the final norm's (the head is frozen)."""
    from planner.workload.frameworks import LITGPT_ADAPTER_START_LAYER

    tokens, L = micro_batch * seq_len, arch.num_hidden_layers
    n_later = L - LITGPT_ADAPTER_START_LAYER - 1

    def sizes(ts: list[SavedTensor]) -> tuple[int, int, int, int]:
        lin = sum(t.bytes_per_token for t in ts if not t.quadratic and not t.per_layer)
        quad = sum(t.bytes_per_token for t in ts if t.quadratic)
        fixed = sum(t.bytes_per_token for t in ts if t.per_layer)
        return lin, quad, fixed, tokens * lin + tokens * seq_len * quad + fixed

    kw = dict(attention=attention, base_keeps_inputs=base_keeps_inputs, cpu_kernels=cpu_kernels)
    first = adapter_layer_saved_tensors(arch, regime, first=True, **kw)
    later = adapter_layer_saved_tensors(arch, regime, first=False, **kw)
    f_lin, f_quad, f_fixed, f_total = sizes(first)
    l_lin, l_quad, l_fixed, l_total = sizes(later)
    head_ts = head_saved_tensors(arch, regime, full=False, code="litgpt")
    head = sum(t.bytes_per_token for t in head_ts) * tokens
    saved = f_total + n_later * l_total + head

    def text(lin: int, quad: int, fixed: int) -> str:
        return (f"{tokens:,} tokens x ({lin:,} B" + (f" + {quad:,} B x s" if quad else "") + ")"
                + (f" + {fixed:,} B cached prefix keys and values" if fixed else ""))

    saved_text = (f"layers 0-{LITGPT_ADAPTER_START_LAYER - 1}: nothing (below every trainable parameter); first "
                  f"adapted layer {text(f_lin, f_quad, f_fixed)}; {n_later} later layers x {text(l_lin, l_quad, l_fixed)}"
                  f"; head {head:,} B")
    ctx = tokens * (sum(t.ctx_bytes_per_token for t in first) + n_later * sum(t.ctx_bytes_per_token for t in later))
    own = tokens * (sum(t.bytes_per_token for t in first if t.ctx_bytes_per_token)
                    + n_later * sum(t.bytes_per_token for t in later if t.ctx_bytes_per_token))
    return ActivationBytes(saved, 0, saved_text, "", 0, 0, head=head,
                           layer_input=tokens * regime.residual * arch.hidden_size, one_layer=max(f_total, l_total),
                           ctx_all=ctx, ctx_in_saved=own)


def activation_bytes(arch: Architecture, regime: Regime, *, micro_batch: int, seq_len: int, attention: str,
                     full: bool, checkpointing: str, lora_targets: tuple[str, ...] = (), lora_rank: int = 0,
                     tp: int = 1, adapter_bytes: int = 4, lora_dropout: float = 0.0) -> tuple[int, str]:
    """Total activation bytes (saved + recomputed layer), per GPU, with the formula text."""
    parts = activation_parts(arch, regime, micro_batch=micro_batch, seq_len=seq_len, attention=attention,
                             full=full, checkpointing=checkpointing, lora_targets=lora_targets,
                             lora_rank=lora_rank, tp=tp, adapter_bytes=adapter_bytes,
                             lora_dropout=lora_dropout)
    text = parts.saved_formula + (f"; + {parts.recompute_formula}" if parts.recompute_formula else "")
    return parts.total, text
