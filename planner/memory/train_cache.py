"""The KV cache a Transformers training forward returns (``use_cache``), and when it is memory of its own.

A Transformers causal LM whose ``use_cache`` is on (``use_cache = use_cache if use_cache is not None else
self.config.use_cache``; ``LlamaConfig(use_cache=True)`` is the default, configuration_llama.py L118 at
v4.31.0) returns every layer's keys and values from its forward, in training as in generation, unless
Transformers' own gradient checkpointing is on, which turns it off (``if self.gradient_checkpointing and
self.training: ... use_cache = False``). Sources, huggingface/transformers
src/transformers/models/llama/modeling_llama.py:

- v4.31.0 L615 (the config's default), L658 (off under gradient checkpointing), L324
  (``past_key_value = (key_states, value_states) if use_cache else None``: K after the rotary embedding
  and V, before ``repeat_kv`` at L327); v4.35.2 the same at L853, L893-898, L385 (eager) and L486 (flash
  attention 2), gathered per layer at L933-934 and returned at L945.
- v4.36.0 L982, L1034-1039, L708 (``past_key_value.update(key_states, value_states, ...)`` in
  ``LlamaSdpaAttention``, a ``DynamicCache``), then ``repeat_kv`` at L710-711 and
  ``scaled_dot_product_attention`` at L719.

The cache is alive at the end of the forward, while the loss is computed (inside the model's forward),
and is freed with the model's output before backward (``loss = model(**batch).loss``; ``Trainer.compute_loss``
returns the loss only). It costs memory only where autograd does not already keep the same storage
for backward. Measured with the probe tests/data/validation/kv_cache_training_probe.py (CPU, torch 2.13,
a 4-layer Llama; planner.workload.releases, the transformers entry, quotes the results):

- eager attention (every release; the only Llama attention before 4.36.0 but flash attention 2):
  ``torch.matmul`` saves reshaped copies of the transposed K and of V (or of ``repeat_kv``'s copies):
  the whole cache is extra before 4.36.0 (measured on 4.35.2) and for grouped K/V heads in every
  release; from 4.36.0 full multi-head attention saves the cache's own K and V (measured on 5.17.0:
  nothing extra; 4.36-5.16 are read as 5.17.0);
- SDPA (4.36.0 on, planner.workload.releases.TRANSFORMERS_SDPA): full multi-head attention saves the
  cache's own K and V: nothing extra; grouped K/V heads save ``repeat_kv``'s copies: the whole cache
  is extra, until SDPA broadcasts the groups itself (``enable_gqa``, TRANSFORMERS_SDPA_GQA, 4.54.0:
  when there is no attention mask, which planner assumes for a training batch; 5.17.0 measured);
- flash attention 2: without padding, flash-attn saves the transposed views of the same K and V (the
  source, not probed; a padded batch's unpadded copies are not modelled): nothing extra;
- under a checkpoint wrapper around each decoder layer (``checkpoint_wrapper``: torch's
  ``checkpoint_wrapper``, e.g. FSDP's ``apply_activation_checkpointing`` as llama-recipes ran it), which
  the model does not see (``use_cache`` stays on), only the layers' inputs are saved: the whole cache
  is extra in every release (measured on 4.35.2, 4.36.0 and 5.17.0).

Size: 2 (K and V) x layers x micro_batch x seq_len x K/V heads (per tensor-parallel rank) x head_dim x
the compute dtype's bytes. llama-recipes PR 165 (commit 486b8809, 2023-09-06) saw it as "~4 GB in
activation memory" on LLaMA-7B (tests/test_framework_releases.py).

The loss before Transformers 4.46.0 (PR 34191, planner.workload.releases.TRANSFORMERS_LOSS_UTILS) is
computed in ``LlamaForCausalLM.forward`` (v4.35.2 L1053-1066: ``logits = logits.float()``,
``shift_logits = logits[..., :-1, :].contiguous()``, ``CrossEntropyLoss()``). Per token and vocabulary
entry, at the end of that forward: the fp32 logits (4 B; the c-byte head output is freed by the cast,
which keeps nothing for backward), their shifted contiguous copy (4 B) and the log-softmax output (4 B):
12 B; at the start of backward the log-softmax output, its gradient and the input gradient: 12 B
(the slice's backward then makes one more 4 B full-size gradient while 4 B of its input remain: 8 B).
``ForCausalLMLoss`` from 4.46.0 (the shift moved to the labels) holds ``c + 8`` B in the forward and the
same 12 B in backward; planner.memory.activations.logits_bytes_per_token counts ``max(c + 8, 12)`` =
12 B for c of 2 or 4, so the old loss has the same peak and is not modelled apart.
"""

from __future__ import annotations

from planner.memory.breakdown import GPU, Component
from planner.memory.saved import Regime
from planner.model.architecture import Architecture
from planner.workload.options import Training
from planner.workload.releases import TRANSFORMERS_SDPA, TRANSFORMERS_SDPA_GQA, framework_has

#: The component's name (planner.memory.estimate keeps it out of the backward phases: it is freed with the
#: model's output before backward).
NAME = "KV cache returned by forward (use_cache)"
SRC = ("huggingface/transformers src/transformers/models/llama/modeling_llama.py v4.35.2 L385, L853, L893-898, "
       "L933-945; v4.36.0 L708-719, L982, L1034-1039; the probe tests/data/validation/kv_cache_training_probe.py")


def cache_extra(arch: Architecture, train: Training) -> tuple[bool, str]:
    """Whether the returned cache is memory autograd does not already hold (module docstring), and why.

    Returns:
        (extra, reason in words). ``extra`` is False where the cache is off (``use_cache`` False, or
        Transformers' own gradient checkpointing) or autograd saves the same storage.
    """
    if not train.use_cache:
        return False, "off (use_cache false)"
    if train.checkpointing == "full" and not train.checkpoint_wrapper:
        return False, "off: Transformers' gradient checkpointing sets use_cache=False"
    if train.checkpoint_wrapper:
        return True, "kept by the model under a checkpoint wrapper, which saves only the layers' inputs"
    grouped = arch.num_key_value_heads < arch.num_attention_heads
    if train.attention == "eager" and (grouped or not framework_has(train.framework, train.framework_version,
                                                                    TRANSFORMERS_SDPA)):
        # measured: 4.35.2 the whole cache is extra; 5.17.0 none for full multi-head attention, all of it for
        # grouped heads (repeat_kv's copies are what matmul saves); 4.36-5.16 multi-head read as 5.17.0
        return True, "eager attention saves reshaped copies of K and V, not the cache's tensors"
    if train.attention == "sdpa" and grouped and not framework_has(train.framework, train.framework_version,
                                                                  TRANSFORMERS_SDPA_GQA):
        return True, f"SDPA saves repeat_kv's copies of the grouped K and V (before {TRANSFORMERS_SDPA_GQA.release})"
    return False, f"returned, but {train.attention} attention saves the same K and V for backward (nothing extra)"


def training_cache_component(arch: Architecture, train: Training, regime: Regime, *, phase: str) -> Component | None:
    """The KV cache a training forward returns, as a GPU component in ``phase`` (the loss moment), or None
    where it costs nothing (:func:`cache_extra`).

    Bytes: 2 x L x b x s x ceil(kv_heads / t) x head_dim x c (c: 2 under autocast or 16-bit, else 4).
    """
    extra, why = cache_extra(arch, train)
    if not extra:
        return None
    c = regime.compute if not regime.amp else 2
    kv = -(-arch.num_key_value_heads // train.tp)
    L, b, s, d = arch.num_hidden_layers, train.micro_batch, train.seq_len, arch.head_dim
    n = 2 * L * b * s * kv * d * c
    return Component(NAME, GPU, n, f"2 (K, V) x L={L} x b={b} x s={s:,} x kv heads {kv} x head_dim {d} x {c} B "
                     f"({why}; alive at the end of forward, freed with the output before backward)", SRC, phase=phase)
