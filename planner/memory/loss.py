"""The logits and the cross-entropy loss at their peak, for each loss implementation.

The output head turns ``T`` tokens of hidden states into ``T x V`` logits. What the loss then keeps
for backward, and for how long the logits live, differs between implementations; per token, with
logits in ``c`` bytes (2 for 16-bit), ``q = 1 / chunks`` (chunks along the sequence):

- ``transformers`` (``ForCausalLMLoss``, transformers loss/loss_utils.py): ``logits.float()`` then
  ``cross_entropy``: ``V x max(c + 8, 12)`` bytes (planner.memory.activations.logits_bytes_per_token).
- ``chunked`` (torchtune ``CEWithChunkedOutputLoss``, torchtune/modules/loss/ce_chunked_output_loss.py
  at commit 1814feb17; the model returns ``[output(chunk) for chunk in h.tensor_split(N, dim=1)]``):
  each chunk is upcast to fp32 and its ``log_softmax`` output (fp32) is saved for backward, so at
  the end of the loss the c-byte logits of every chunk, the fp32 log-softmax of every chunk and the
  last chunk's fp32 copy are live: ``V x (c + 4 + 4q)``. The recipe then deletes the logits
  (``del logits``: "free logits otherwise it peaks backward memory", recipes/*_finetune_*.py); the
  backward of the first chunk holds every saved log-softmax, its output gradient and its input
  gradient: ``V x (4 + 8q)``. The peak is the larger.
- ``litgpt`` (litgpt/finetune/lora.py and litgpt/utils.py ``chunked_cross_entropy``, commit
  00af8b0d): the head runs on 128-token chunks (``lm_head_chunk_size=128``) and cross-entropy on each
  chunk in the logits' own dtype (no upcast: ``log_softmax`` saves a c-byte output); the training
  loop keeps the list of logits alive through backward, and autograd runs every chunk's
  cross-entropy backward before any chunk's head backward (its ready queue takes the node created
  last first), so the chunks' logit gradients (c bytes) pile up while the saved log-softmax outputs
  are freed: ``V x 2c x (1 + q)``. A full fine-tune computes the head whole and splits the logits
  for the loss; the split's backward concatenates the chunk gradients: ``V x 3c``.
- ``unsloth`` (unsloth/kernels/cross_entropy_loss.py ``Fast_CrossEntropyLoss``, commit 015bdef):
  one Triton kernel over the c-byte logits saves them with an fp32 log-sum-exp per token, and its
  backward writes the gradient into the logits' own storage: ``V x c + 8``.
- ``cut`` (Unsloth from January 2025, commit e3162dc5, ``unsloth/models/llama.py``: above 1,024 tokens a
  micro-batch's loss is ``fused_linear_cross_entropy`` from the ``cut_cross_entropy`` package; Wijmans et
  al. 2024, "Cut Your Losses in Large-Vocabulary Language Models", sec. 4): the logits are computed
  block by block in on-chip memory and never stored; what stays is a per-token fp32 log-sum-exp and,
  in backward, the hidden states' gradient (``T x h x c``). Up to 1,024 tokens Unsloth returns the
  logits and runs ``Fast_CrossEntropyLoss`` (``unsloth`` above). By release (``framework_version``,
  planner.workload.releases): before 2024.11.8 every micro-batch keeps its logits (``unsloth``); from
  2024.11.8 to 2024.12.3 every micro-batch runs cut cross-entropy; from 2024.12.4 the 1,024-token rule.
- ``fused-linear`` (Liger ``fused_linear_cross_entropy_forward``,
  src/liger_kernel/ops/fused_linear_cross_entropy.py at commit ead96b6): the head and the loss run
  together over chunks of ``next_pow2(ceil(T / ceil(V / h)))`` tokens; each chunk's logits (c bytes)
  take the gradient in place, and the input gradient (``T x h x c``) and, when the head trains, its
  weight gradient (``V x h``) are computed in the forward and kept for backward, with an fp32 loss
  per token. The full logits never exist.

Accelerate's fp32 copy of returned logits (:func:`returned_logits_copy`). The Transformers Trainer
prepares the model with Accelerate (``self.accelerator.prepare(self.model)``, transformers 4.41.2
trainer.py L2027-2042), and under native mixed precision (the Trainer's ``fp16`` or ``bf16`` flag)
Accelerate wraps the forward in ``convert_outputs_to_fp32`` (accelerate v0.30.1
src/accelerate/accelerator.py ``prepare_model`` L1356-1365; still there at v1.2.0 and at 16cb6eb8):
every fp16 or bf16 tensor the model returns is replaced by ``tensor.float()``
(src/accelerate/utils/operations.py ``convert_to_fp32``). Unsloth's ``CausalLM_fast_forward``
returns the whole 16-bit logits whenever it computes them (every micro-batch before 2024.11.8 and
up to 1,024 tokens from 2024.12.4), while ``Fast_CrossEntropyLoss`` keeps them for its backward
(``ctx.save_for_backward(logits, logsumexp, labels)``, unsloth/kernels/cross_entropy_loss.py at
dff5c4271b, release 2024.5, and at e3162dc5), so at the end of the forward the fp32 copy (4 B per
token and vocabulary entry) sits beside them until ``Trainer.compute_loss`` returns the loss alone
and drops the outputs (transformers 4.41.2 trainer.py L3254-3289). Unsloth's notebooks set the flag
on every card (``fp16 = not is_bfloat16_supported(), bf16 = is_bfloat16_supported()``,
github.com/unslothai/notebooks), and neither unsloth nor unsloth_zoo unwraps the forward (no
``_original_forward`` or ``convert_outputs_to_fp32`` in either, checked at e3162dc5 and 36ff5fc3).
Cut cross-entropy returns ``EMPTY_LOGITS``: nothing to copy. Measured on CPU (torch 2.14.1, accelerate
0.30.1; tests/data/validation/accelerate_logits_probe.py): a model returning 512 x 32,768 bf16 logits that
its loss keeps peaks 66,034,176 B higher once prepared by Accelerate with bf16 mixed precision, the
fp32 copy (67,108,864 B) less a transient of the unprepared run. Ruled out on the way: the
``logits.to(self.config.torch_dtype)`` cast in the same forward is a no-op, as ``from_pretrained``'s
``torch_dtype`` argument is set on the config (transformers 4.41.2 configuration_utils.py
``from_dict`` L784-792, reached through auto_factory.py L523-531), the lm_head of tied embeddings is
the embedding's own tensor (``post_patch``: ``lm_head.weight = model.get_output_embeddings().weight``),
and ``extra_ignored_labels`` is ``max_seq_length x 1`` int64.

Logit softcapping (Gemma 2: ``tanh(logits / cap) * cap``) keeps its c-byte tanh output through
backward in every implementation that materialises the logits.

Under ``torch.compile`` the cross-entropy is one fused graph: inductor decomposes ``log_softmax``
(``select_decomp_table``) and AOTAutograd's partitioner then saves its input and two fp32 values per
token (the row maximum and the log of the sum), recomputes the softmax in backward, and returns the
gradient in the input's dtype (the upcast happens inside the kernels). Then, per token:
Transformers' loss inside the compiled model ``V x 2c`` (the logits and their gradient); torchtune's
unchunked loss, whose model upcasts its output outside the compiled layers (``output(h).float()``),
``V x (8 + c)`` (the fp32 logits saved, their gradient, its cast back); torchtune's chunked loss,
each chunk compiled on its own (``CEWithChunkedOutputLoss.apply_compile_strategy`` compiles
``compute_cross_entropy``), ``V x c x (1 + q)``: every chunk's logits saved (they are the compiled
function's inputs) or, chunk by chunk in backward, replaced by their gradients.

The head's backward (:func:`head_backward_bytes`). When the output head trains, its weight gradient
(``V x h``) forms at the start of backward, while every activation is still saved. Autograd's ready
queue takes the node created last first (torch/csrc/autograd/engine.cpp, ReadyQueue ordered by
sequence number), and the loss's nodes were created after the head's, so every chunk's cross-entropy
backward runs before the head's: what the loss still holds then is the logits' gradient of every
chunk (``V x c`` per token; Transformers' and torchtune's unchunked losses cast their fp32 gradient
back to the logits' dtype first). A head applied chunk by chunk (torchtune's ``chunked_output``)
contributes one weight gradient per chunk, summed in the input buffer of the weight's
``AccumulateGrad`` node (torch/csrc/autograd/input_buffer.cpp): from the second chunk on, the running
sum and the new contribution exist together (two ``V x h`` tensors) while ``(n - 1) / n`` of the
chunks' logit gradients remain. LitGPT's full fine-tune holds its logits through backward, and its
split's backward concatenates the chunk gradients (``2c`` per token); Unsloth's kernel writes the
gradient into the logits (``c``); cut cross-entropy accumulates the weight gradient inside its own
backward (the hidden states' gradient, ``h x c``, with it); Liger's fused loss made the weight gradient
in the forward (counted in :func:`loss_bytes`), so its head has no backward moment of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.model.architecture import Architecture
from planner.memory.activations import logits_bytes_per_token
from planner.memory.saved import Regime
from planner.workload.frameworks import FRAMEWORK_SPECS
from planner.workload.options import Training
from planner.workload.releases import UNSLOTH_CUT_CE, UNSLOTH_SHORT_LOGITS, framework_has

TRANSFORMERS_SRC = "transformers ForCausalLMLoss (fp32 upcast); PyTorch log_softmax backward"
CHUNKED_SRC = ("torchtune CEWithChunkedOutputLoss (torchtune/modules/loss/ce_chunked_output_loss.py); recipes' "
               "'del logits' before backward")
LITGPT_SRC = ("LitGPT litgpt/finetune/lora.py (lm_head_chunk_size=128), litgpt/utils.py chunked_cross_entropy "
              "(no upcast); autograd's ready queue (last-created node first)")
UNSLOTH_SRC = "Unsloth unsloth/kernels/cross_entropy_loss.py Fast_CrossEntropyLoss (logits + fp32 logsumexp saved)"
CUT_SRC = ("Unsloth unsloth/models/llama.py (more than 1,024 tokens: cut_cross_entropy fused_linear_cross_entropy); "
           "Wijmans et al. 2024, Cut Your Losses in Large-Vocabulary Language Models, sec. 4")
#: Unsloth returns the logits (and runs its own cross-entropy kernel) for at most this many tokens per
#: micro-batch, else Apple's cut cross-entropy (unsloth/models/llama.py: ``if bsz*q_len <= 1024``).
UNSLOTH_LOGITS_TOKENS = 1024
LIGER_SRC = "Liger-Kernel src/liger_kernel/ops/fused_linear_cross_entropy.py (chunked head + loss, in-place gradient)"
COMPILE_LOSS_SRC = ("torch.compile: AOTAutograd min_cut_rematerialization_partition (the loss input and its "
                    "log-sum-exp saved); torchtune training.compile_loss")


def _next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


@dataclass(frozen=True)
class LossSpec:
    """Which loss implementation a training workload runs, and in how many chunks.

    Attributes:
        impl: 'transformers', 'chunked', 'litgpt', 'unsloth' or 'fused-linear'.
        chunks: chunks along the sequence (1 = whole).
    """

    impl: str
    chunks: int

    def describe(self) -> str:
        """The loss in words, for the stack settings."""
        if self.impl == "fused-linear":
            return "fused linear cross-entropy (Liger: head and loss per token chunk, no full logits)"
        if self.impl == "chunked":
            return f"cross-entropy in {self.chunks} chunks, each upcast to fp32 (torchtune CEWithChunkedOutputLoss)"
        if self.impl == "litgpt":
            return (f"head and cross-entropy in {self.chunks} chunks in the compute dtype (LitGPT)"
                    if self.chunks > 1 else "cross-entropy in the compute dtype (LitGPT)")
        if self.impl == "unsloth":
            return "Unsloth's fused cross-entropy kernel (logits kept, gradient written in place)"
        if self.impl == "cut":
            return "cut cross-entropy (Unsloth: no logits stored)"
        if self.impl == "model-upcast":
            return "whole logits upcast to fp32 by the model (torchtune output(h).float())"
        return "whole logits upcast to fp32 (Transformers ForCausalLMLoss)"


def loss_spec(train: Training) -> LossSpec:
    """The loss implementation of ``train``: fused-linear when asked, else the framework's, chunked
    whenever ``loss_chunks`` is above 1 (a framework whose own loss does not chunk then runs
    torchtune's mechanism)."""
    if train.fused_linear_loss:
        return LossSpec("fused-linear", 1)
    impl = FRAMEWORK_SPECS[train.framework].loss
    if impl == "unsloth" and train.loss_chunks <= 1 and _unsloth_cuts(train):
        return LossSpec("cut", 1)
    chunks = max(train.loss_chunks, 1)
    if impl == "litgpt":
        return LossSpec("litgpt", chunks)
    if chunks > 1:
        return LossSpec("chunked", chunks)
    if impl == "torchtune":
        # torchtune's model upcasts its whole output (TransformerDecoder: output(h).float()) for an
        # unchunked nn.CrossEntropyLoss: eager, the same terms as Transformers' upcast.
        return LossSpec("model-upcast", 1)
    return LossSpec(impl, 1)


def _unsloth_cuts(train: Training) -> bool:
    """Whether Unsloth's release runs cut cross-entropy for this micro-batch (planner.workload.releases):
    never before 2024.11.8 (the whole logits and ``Fast_CrossEntropyLoss``), always from 2024.11.8, and
    from 2024.12.4 only above :data:`UNSLOTH_LOGITS_TOKENS` tokens."""
    release = train.framework_version
    if not framework_has("unsloth", release, UNSLOTH_CUT_CE):
        return False
    if not framework_has("unsloth", release, UNSLOTH_SHORT_LOGITS):
        return True
    return train.micro_batch * train.seq_len > UNSLOTH_LOGITS_TOKENS


def loss_bytes(arch: Architecture, regime: Regime, spec: LossSpec, *, tokens: int, tp: int = 1,
               full: bool = False, compiled: bool = False) -> tuple[int, str, str]:
    """Peak bytes per GPU of the logits and the loss for ``tokens`` tokens of one micro-batch.

    Args:
        arch: the model (vocabulary V, hidden size h, logit softcapping).
        regime: the activations' dtypes (the logits take the compute dtype; 2 bytes under autocast).
        spec: the implementation (:func:`loss_spec`).
        tokens: T, tokens of the micro-batch on this GPU (micro_batch x sequence length).
        tp: tensor-parallel degree (the vocabulary is split t ways).
        full: the head trains (a full fine-tune): Liger computes its weight gradient in the forward.
        compiled: the loss runs under ``torch.compile`` (module docstring; the fused kernels of
            LitGPT-less, Unsloth and Liger losses are the same either way).

    Returns:
        (bytes, formula, source).
    """
    V, h = arch.vocab_size, arch.hidden_size
    c = regime.compute if not regime.amp else 2
    soft = arch.final_logit_softcapping
    tp_txt0 = f" / t={tp}" if tp > 1 else ""
    if compiled and spec.impl in ("transformers", "model-upcast", "chunked"):
        n = spec.chunks
        if spec.impl == "transformers":
            per_n, what = 2 * c * n, f"{c} B logits saved + {c} B their gradient (fused, compiled)"
        elif spec.impl == "model-upcast":
            per_n, what = (8 + c) * n, (f"4 B fp32 logits saved + 4 B their gradient + {c} B its cast back (the model "
                                        "upcasts outside the compiled layers)")
        else:
            per_n, what = c * (n + 1), (f"{c} B logits of every chunk saved, or their gradients + {c} B / {n} for "
                                        "the chunk in backward (each chunk's loss compiled)")
        b = -(-V * tokens * per_n // (n * tp)) + tokens * 8
        return b, (f"b*s={tokens:,} tokens x (V={V:,} x ({what}) + 8 B fp32 row max and log-sum){tp_txt0}"), (
            COMPILE_LOSS_SRC + "; " + (CHUNKED_SRC if spec.impl == "chunked" else TRANSFORMERS_SRC))
    if spec.impl in ("transformers", "model-upcast"):
        per, text = logits_bytes_per_token(arch, regime)
        b = -(-per * tokens // tp)
        return b, f"b*s={tokens:,} tokens x {text}" + (f" / t={tp}" if tp > 1 else ""), TRANSFORMERS_SRC
    n = spec.chunks
    tp_txt = f" / t={tp}" if tp > 1 else ""
    soft_txt = f" + {c} B softcapping tanh output" if soft else ""
    soft_b = c if soft else 0
    if spec.impl == "chunked":
        fwd = (c + 4) * n + 4  # per token, times n: V x (c + 4 + 4/n)
        bwd = 4 * n + 8
        per_n = max(fwd, bwd) + soft_b * n
        b = -(-V * tokens * per_n // (n * tp))
        text = (f"b*s={tokens:,} tokens x V={V:,} x (max(loss end: {c} B logits + 4 B fp32 log-softmax of every "
                f"chunk + 4 B / {n} for one chunk's fp32 copy, first chunk's backward: 4 B log-softmax + 8 B / {n} "
                f"of its gradients){soft_txt}){tp_txt}")
        return b, text, CHUNKED_SRC
    if spec.impl == "litgpt":
        if full:
            per_n = (3 * c + soft_b) * n
            text = (f"b*s={tokens:,} tokens x V={V:,} x ({c} B logits held through backward + {c} B log-softmax (or "
                    f"its gradients) + {c} B of concatenated chunk gradients{soft_txt}){tp_txt}")
        else:
            # chunks of 128 tokens of every sequence (micro_batch x 128 tokens each): q = 1 / chunks
            per_n = 2 * c * (n + 1) + soft_b * n
            text = (f"b*s={tokens:,} tokens x V={V:,} x ({c} B logits held through backward + {c} B log-softmax or "
                    f"logit gradient + 2 x {c} B / {n} for one chunk's gradients{soft_txt}){tp_txt}")
        b = -(-V * tokens * per_n // (n * tp))
        return b, text, LITGPT_SRC
    if spec.impl == "unsloth":
        per = V * (c + soft_b) + 8
        b = -(-per * tokens // tp)
        return b, (f"b*s={tokens:,} tokens x (V={V:,} x {c} B logits (the gradient is written into them) + 4 B fp32 "
                   f"log-sum-exp + 4 B fp32 loss{soft_txt}){tp_txt}"), UNSLOTH_SRC
    if spec.impl == "cut":
        per = h * c + 8
        b = -(-per * tokens // tp)
        return b, (f"b*s={tokens:,} tokens x (h={h:,} x {c} B hidden-state gradient + 4 B fp32 log-sum-exp + 4 B fp32 "
                   f"loss); no logits stored{tp_txt}"), CUT_SRC
    if spec.impl == "fused-linear":
        inc = -(-V // h)
        rows = min(tokens, _next_pow2(-(-tokens // inc)))
        v_rank = -(-V // tp)
        chunk = rows * v_rank * c
        grad_in = tokens * h * c
        grad_w = v_rank * h * c if full else 0
        b = chunk + grad_in + tokens * 4 + grad_w
        text = (f"one chunk of {rows:,} tokens x V={v_rank:,} x {c} B logits (chunk = next_pow2(ceil(T / ceil(V / h)))) "
                f"+ input gradient T={tokens:,} x h={h:,} x {c} B + T x 4 B fp32 loss"
                + (f" + the head's weight gradient V x h x {c} B, made in the forward" if full else ""))
        return b, text, LIGER_SRC
    raise ValueError(f"unknown loss implementation {spec.impl!r}")  # pragma: no cover


#: The component's name in an estimate.
RETURNED_LOGITS_NAME = "fp32 copy of the returned logits (Accelerate)"
ACCELERATE_FP32_SRC = ("accelerate v0.30.1 src/accelerate/accelerator.py prepare_model L1356-1365 "
                       "(convert_outputs_to_fp32 under native AMP), utils/operations.py convert_to_fp32 "
                       "(tensor.float()); transformers 4.41.2 trainer.py compute_loss; unsloth/models/llama.py "
                       "CausalLM_fast_forward (logits returned) and kernels/cross_entropy_loss.py "
                       "Fast_CrossEntropyLoss (logits saved), dff5c4271b (2024.5) to e3162dc5")


def returned_logits_copy(arch: Architecture, spec: LossSpec, *, tokens: int, tp: int = 1) -> tuple[int, str] | None:
    """The fp32 copy Accelerate makes of the 16-bit logits a model returns under the Trainer's mixed
    precision (module docstring), for the loss implementations that return whole logits through it:
    Unsloth's own kernel (``unsloth``), whose forward returns them while the kernel keeps them.

    Args:
        tokens: T, tokens of the micro-batch on this GPU.
        tp: tensor-parallel degree (the vocabulary is split t ways).

    Returns:
        (bytes: T x ceil(V / t) x 4, formula), or None for an implementation that returns no whole
        16-bit logits through Accelerate (the others keep fp32 logits, chunk them, or run outside the
        Transformers Trainer).
    """
    if spec.impl != "unsloth":
        return None
    v = -(-arch.vocab_size // tp)
    return tokens * v * 4, (f"b*s={tokens:,} tokens x V={v:,} x 4 B: Accelerate's convert_outputs_to_fp32 "
                            "copies the returned 16-bit logits while the loss keeps them (until "
                            "Trainer.compute_loss returns)")


HEAD_BACKWARD_SRC = ("PyTorch autograd: ReadyQueue by sequence number (torch/csrc/autograd/engine.cpp), contributions "
                     "summed in the AccumulateGrad input buffer (torch/csrc/autograd/input_buffer.cpp)")


def head_backward_bytes(arch: Architecture, regime: Regime, spec: LossSpec, *, tokens: int, tp: int = 1,
                        grad_bytes: int = 2) -> tuple[int, int, str] | None:
    """What the loss holds when a trainable output head's weight gradient forms (module docstring),
    at the worse of the head's first chunk and its later ones (``grad_bytes`` per gradient value
    weighs the two).

    Returns:
        (bytes the loss still holds, copies of the ``V x h`` weight gradient live at that moment,
        formula); None when the head has no backward moment of its own (Liger's fused loss).
    """
    V, h = arch.vocab_size, arch.hidden_size
    c = regime.compute if not regime.amp else 2
    v = -(-V // tp)
    tp_txt = f" / t={tp}" if tp > 1 else ""
    if spec.impl == "fused-linear":
        return None
    if spec.impl == "chunked":
        n = spec.chunks
        first = v * tokens * c, 1
        later = -(-v * tokens * c * (n - 1) // n), 2
        b, copies = max((first, later), key=lambda x: x[0] + x[1] * v * h * grad_bytes)
        what = (f"{c} B logit gradients of every chunk, and the head's first weight gradient" if copies == 1 else
                f"{c} B logit gradients of {n - 1} of {n} chunks, and the head's running weight-gradient sum with "
                "the next chunk's contribution")
        return b, copies, f"b*s={tokens:,} tokens x V={V:,} x {what}{tp_txt}"
    if spec.impl == "litgpt":
        return v * tokens * 2 * c, 1, (f"b*s={tokens:,} tokens x V={V:,} x ({c} B logits held through backward + {c} B "
                                       f"concatenated chunk gradients){tp_txt}")
    if spec.impl == "cut":
        return tokens * (h * c + 8), 1, (f"b*s={tokens:,} tokens x (h={h:,} x {c} B hidden-state gradient + 8 B fp32 "
                                         "log-sum-exp and loss); the weight gradient accumulates in the kernel")
    what = ("logits holding their gradient" if spec.impl == "unsloth" else
            "logit gradients (cast back from fp32)" if c == 2 else "logit gradients")
    return v * tokens * c, 1, f"b*s={tokens:,} tokens x V={V:,} x {c} B {what}{tp_txt}"
