"""Activations saved for backward, derived from the tensors each layer actually keeps.

Instead of a fitted constant, this module lists the tensors autograd saves in one
transformer layer of the Transformers implementation, per token, and sums them. The list
depends on the architecture (gated MLP, GQA, RMSNorm or LayerNorm, dropout), the precision
regime (fp32, pure 16-bit, torch AMP), the attention kernel (eager stores the score
matrices; SDPA/flash keep only an fp32 log-sum-exp per head), which weights are trainable
(a frozen ``nn.Linear`` does not save its input) and LoRA adapters.

Rules used (PyTorch autograd formulas, tools/autograd/derivatives.yaml):
- ``linear(x, W)`` saves ``x`` only when ``W`` requires grad; it always keeps ``W`` (no new memory).
- ``a * b`` saves each operand whose partner requires grad; multiplying by a constant saves nothing.
- ``softmax`` and ``tanh`` save their output; ``silu``, ``gelu`` and ``pow`` save their input.
- casts (``.to``), views, ``cat``, additions and residual adds save nothing.
- SDPA (flash / memory-efficient kernels) saves q, k, v, the output and the fp32 log-sum-exp
  (Dao et al. 2022, FlashAttention, section 3.1); eager attention keeps the fp32 softmax output
  and its 16-bit copy (b x heads x s x s each).
- Transformers' RMSNorm computes in fp32: it saves an fp32 copy of its input and the
  ``rsqrt`` statistics, and (when its weight trains) the normalised 16-bit tensor.
- Gradient checkpointing (non-reentrant, ``torch.utils.checkpoint``) keeps only each layer's
  input and recomputes one layer at a time during backward (Chen et al. 2016, section 3;
  Korthikanti et al. 2022, section 4).

The structure follows Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models", section 4), whose 34sbh + 5as^2b per layer is the special case of a GeLU
4h MLP with dropout in 16-bit.

Other frameworks run their own implementation of the same architectures (``code``):

- torchtune (torchtune/modules/attention.py ``MultiHeadAttention.forward``, commit 1814feb17): with
  fewer KV heads than query heads, K and V are expanded to every head before SDPA
  (``k.unsqueeze(2).expand(...).flatten(1, 2)``: a copy each), and SDPA saves those copies; its
  RMSNorm (torchtune/modules/rms_norm.py) keeps what Transformers' keeps; LoRA adapters
  (torchtune/modules/peft/lora.py) are in the model dtype and read the layer's input directly when
  ``lora_dropout`` is 0.
- LitGPT (litgpt/model.py, litgpt/lora.py, commit 00af8b0d): one fused ``attn`` linear makes q, k
  and v; q and k are rotated and concatenated into new tensors at every head (K expanded for GQA),
  and V is a view of the fused output for multi-head attention (SDPA's saved V keeps the whole
  fused output alive) or an expanded copy otherwise. Its RMSNorm computes ``(x_normed *
  weight.float()).to(dtype)`` in fp32, so a trainable norm keeps an fp32 normalised tensor. LoRA on
  the fused projection (``LoRAQKVLinear``) runs one dropout for q, k and v and scatters the adapter
  output into the fused width (``zero_pad``: ``index_copy_``, whose backward formula keeps its
  source, the adapter output of the enabled parts, derivatives.yaml). The head is a separate
  parameter even for checkpoints with tied embeddings (LitGPT's conversion copies the weight; only
  pretraining ties them, litgpt/pretrain.py). Its GPT has no dropout module (whatever the Hugging
  Face config's ``resid_pdrop`` says), its MLPs call one ATen GeLU or SiLU op (phi's ``gelu_new`` is
  ``gelu(approximate="tanh")`` there, one saved input), and with fewer KV heads than query heads it
  expands K and V before SDPA (Falcon-7B's multi-query layout takes a fused kernel, not the math path).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.memory.compiled import compiled_layer_saved_tensors
from planner.memory.dora import dora_saved_tensors
from planner.memory.quant import bnb_linear_modules
from planner.memory.saved import ACTIVATION_SAVES, Regime, SavedTensor
from planner.memory.unsloth import unsloth_kernels_apply, unsloth_layer_saved_tensors
from planner.model.architecture import Architecture


@dataclass(frozen=True)
class LayerOptions:
    """What, besides the model and the precision regime, decides the tensors a layer saves.

    Attributes:
        attention: 'eager', 'sdpa' or 'flash'.
        full: all weights train (full fine-tune) rather than a frozen base.
        lora_targets: module names with LoRA adapters (frozen base).
        lora_rank: r.
        training: dropout is active (for models whose config sets dropout).
        adapter_bytes: bytes per value of the LoRA adapters (4 for peft's default fp32).
        lora_dropout: peft's ``lora_dropout``; above 0 every adapted module keeps its own dropout
            output and mask.
        cpu_dropout: dropout as the CPU runs it (``bernoulli_`` noise in the masked tensor's dtype)
            instead of CUDA's fused ``native_dropout`` (a 1-byte bool mask): for comparing with
            measurements taken on the CPU (planner.validate.validation).
        use_dora: the adapters are peft's DoRA (see :func:`planner.memory.dora.dora_saved_tensors`).
        weight_cast: DoRA only: peft's ``W.to(adapter dtype)`` makes a new tensor (the frozen weight's
            dtype differs from the adapters', or the base is 4-bit and dequantized on every use).
        input_requires_grad: the layer's input requires grad (False for the first layer under a
            frozen embedding without checkpointing).
        base_keeps_inputs: the frozen linears are bitsandbytes 8-bit layers (LoRA with
            ``load_in_8bit``): ``MatMul8bitLt`` (``MatMul8bitFp`` on the CPU) keeps its input ``A``
            for backward whenever that input requires grad, although only the input gradient is
            computed (bitsandbytes autograd/_functions.py, ``ctx.tensors = (CAt, subA, A)``). The
            modules fed by one tensor (q/k/v, gate/up) keep the same storage. Not counted, and not
            measured (the CPU path keeps none): the outlier columns ``subA`` ``MatMul8bitLt`` also
            keeps on CUDA, every input column where any token of the micro-batch reaches the
            threshold 6.0 (tokens x those columns x 2 B); LLM.int8() (Dettmers et al. 2022, sec. 4)
            finds a handful of such hidden-state features in large models and gives no bound for the
            MLP's inner activations (down_proj's input). 4-bit layers (``MatMul4Bit``) keep no input,
            like ``nn.Linear``, from bitsandbytes 0.43.2 on; before it (PR 1270) they kept it on the ctx
            as the 8-bit ones do, and the caller passes True for them too.
        cpu_kernels: the kernels the CPU runs: SDPA with a value head_dim other than the query's
            (MLA) has no fused CPU kernel and takes the math path (for the validation's CPU runs; on
            CUDA the memory-efficient kernel runs it and keeps O(s) statistics).
        code: whose implementation: a key of :data:`LAYER_CODES` ('transformers', 'torchtune',
            'litgpt' or 'unsloth'; module docstring); the others' model code applies to Llama-style
            layers only (the caller keeps the others on 'transformers').
        compiled: the layer runs under ``torch.compile``
            (:func:`planner.memory.compiled.compiled_layer_saved_tensors`; the caller checks
            :func:`planner.memory.compiled.compile_not_modelled` first).
        mlp_marker: put a 0-byte entry named :data:`MLP_MARKER` where what follows the attention
            output begins (:func:`planner.memory.litgpt_adapter.adapter_layer_saved_tensors` splits
            there).
    """

    attention: str
    full: bool
    lora_targets: tuple[str, ...] = ()
    lora_rank: int = 0
    training: bool = True
    adapter_bytes: int = 4
    lora_dropout: float = 0.0
    cpu_dropout: bool = False
    use_dora: bool = False
    weight_cast: bool = True
    input_requires_grad: bool = True
    base_keeps_inputs: bool = False
    cpu_kernels: bool = False
    code: str = "transformers"
    compiled: bool = False
    mlp_marker: bool = False


@dataclass(frozen=True)
class LayerCode:
    """Where one framework's layer code saves other tensors than Transformers' (module docstring).

    Attributes:
        fused_qkv_lora: LoRA on the fused q/k/v projection with one dropout and one ``lora_A``
            (LitGPT's ``LoRAQKVLinear``, litgpt/lora.py).
        dropout: the model has the dropout modules its Hugging Face config asks for (LitGPT's GPT
            has none: litgpt/model.py at 00af8b0d, SDPA with ``dropout_p=0.0``).
        fp32_norm_product: its RMSNorm multiplies the normalised tensor by the weight in fp32
            (LitGPT's ``(x_normed * weight.float()).to(dtype)``), keeping an fp32 tensor.
        sdpa_inputs: what SDPA saves of q, k and v: 'separate' (Transformers: the projections'
            outputs, GQA passed to the kernel), 'expanded' (torchtune: K and V copied to every query
            head under GQA, torchtune/modules/attention.py at 1814feb17) or 'rotated' (LitGPT: q and k
            rotated and concatenated at every head, V a view of the fused output or expanded; the
            attention projection reads SDPA's output without a copy of its own).
        aten_activation: the MLP's activation is one ATen op that saves its input (LitGPT's
            ``gelu``/``silu``; Transformers' ``gelu_new``/``gelu_fast`` are Python formulas keeping
            several intermediates, :data:`planner.memory.saved.ACTIVATION_SAVES`).
    """

    fused_qkv_lora: bool = False
    dropout: bool = True
    fp32_norm_product: bool = False
    sdpa_inputs: str = "separate"
    aten_activation: bool = False


#: Each framework's layer code (planner.workload.frameworks FrameworkSpec.model_code). Unsloth runs
#: Transformers' layers where its fused kernels do not apply (planner.memory.unsloth).
LAYER_CODES: dict[str, LayerCode] = {
    "transformers": LayerCode(),
    "torchtune": LayerCode(sdpa_inputs="expanded"),
    "litgpt": LayerCode(fused_qkv_lora=True, dropout=False, fp32_norm_product=True, sdpa_inputs="rotated",
                        aten_activation=True),
    "unsloth": LayerCode(),
}


def layer_saved_tensors(arch: Architecture, regime: Regime, options: LayerOptions) -> list[SavedTensor]:
    """Tensors one transformer layer saves for backward, per token.

    Args:
        arch: the model.
        regime: activation dtypes.
        options: the attention kernel, what trains, the adapters and whose code (:class:`LayerOptions`).

    Returns:
        The saved tensors; sum their bytes for the layer.

    Raises:
        KeyError: ``options.code`` not in :data:`LAYER_CODES`.
    """
    o = options
    if o.compiled:
        return compiled_layer_saved_tensors(arch, regime, attention=o.attention, full=o.full,
                                            lora_targets=o.lora_targets, lora_rank=o.lora_rank,
                                            lora_dropout=o.lora_dropout, cpu_dropout=o.cpu_dropout)
    if o.code == "unsloth" and unsloth_kernels_apply(arch, full=o.full, lora_targets=o.lora_targets,
                                                     lora_dropout=o.lora_dropout, attention=o.attention):
        return unsloth_layer_saved_tensors(arch, regime, lora_rank=o.lora_rank)
    layer = _Layer(arch, regime, o)
    layer.attention_input()
    layer.attention_core()
    layer.attention_output()
    layer.mlp()
    layer.router_and_output()
    return layer.out


class _Layer:
    """One walk through a layer (:func:`layer_saved_tensors`): the tensors saved so far, the inputs
    already kept (modules fed by one tensor share it), and whether the tensor at hand requires grad."""

    def __init__(self, arch: Architecture, regime: Regime, o: LayerOptions) -> None:
        self.arch, self.regime, self.o, self.code = arch, regime, o, LAYER_CODES[o.code]
        self.h, self.q, self.k, self.f = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size
        self.a = a = arch.num_attention_heads
        self.c, self.r = regime.compute, regime.residual
        self.out: list[SavedTensor] = []
        self.mods = mods = {m.name: m for m in arch.linear_modules()}
        # LayerNorm layouts (GPT-2, GPT-NeoX, GPTBigCode, phi, Falcon, GPT-J, BLOOM, StarCoder2)
        self.gpt = arch.layer_norm
        # Cohere's LayerNorm is Python arithmetic in fp32 (modeling_cohere.py CohereLayerNorm), not nn.LayerNorm.
        self.norm_kind = "cohere" if arch.model_type == "cohere" else "layer" if self.gpt else "rms"
        self.mt = arch.model_type
        self.gqa = arch.num_key_value_heads < a
        self.shared_inputs: set[str] = set()
        # Whether the input of the module being adapted requires grad (DoRA's recomputed base linear
        # keeps its weight copy only then): the layer's input may not (the first layer's, below a
        # frozen embedding); every tensor after an adapted module does.
        self.grad_flows = o.input_requires_grad
        self.bnb_names = {m.name for m in bnb_linear_modules(arch)}
        # Gemma's RMSNorm multiplies the fp32 normalised tensor by (1 + weight) in fp32 and casts the
        # product back (modeling_gemma.py GemmaRMSNorm): the tensor kept for the weight gradient is
        # fp32 whatever the activations' dtype. Llama's casts first and keeps it in the input dtype.
        self.gemma_norm = arch.fp32_norm_product or self.code.fp32_norm_product  # LitGPT's RMSNorm too
        self.dropout_attn = float(arch.extra.get("attn_pdrop", arch.extra.get("attention_dropout", 0.0)) or 0.0)
        self.dropout_resid = float(arch.extra.get("resid_pdrop", arch.extra.get("hidden_dropout", 0.0)) or 0.0)
        if not o.training or not self.code.dropout:
            # LitGPT's GPT has no dropout module (litgpt/model.py at 00af8b0d: SDPA with dropout_p=0.0, no
            # residual dropout), whatever the Hugging Face config's resid_pdrop / attention_dropout say.
            self.dropout_attn = self.dropout_resid = 0.0
        # the MLP's first modules (a parallel block's single norm also feeds them)
        if arch.is_moe and "gate_up_proj" in mods:
            self.up_names = ["gate_up_proj"]
        elif arch.is_moe and "experts.gate_up_proj" in mods:
            self.up_names = [n for n in ("gate", "experts.gate_up_proj", "gate_proj", "up_proj", "shared_expert_gate")
                             if n in mods]
        elif arch.is_moe:
            self.up_names = ["w1", "w3"] if "w1" in mods else ["gate_proj", "up_proj"]
        elif arch.fused_gate_up:
            self.up_names = ["gate_up_proj"]
        elif arch.gated_mlp:
            self.up_names = ["gate_proj", "up_proj"]
        else:
            self.up_names = [n for n in ("c_fc", "dense_h_to_4h", "up_proj", "fc1", "fc_in") if n in mods]
        if arch.is_mla:
            self.qkv_names = [n for n in ("q_a_proj", "q_proj", "kv_a_proj_with_mqa") if n in mods]
        else:
            self.qkv_names = [n for n in ("c_attn", "query_key_value", "qkv_proj", "q_proj", "k_proj", "v_proj")
                              if n in mods]
        self.parallel_one_norm = arch.parallel_block and arch.norms_per_layer == 1
        self.math_sdpa = False  # set by attention_core

    def trains(self, name: str) -> bool:
        full = self.o.full
        return full or False

    def litgpt_qkv_lora(self, names: list[str], in_features: int, source: str) -> None:
        """LitGPT's LoRAQKVLinear: the adapted parts of the fused q/k/v projection share one dropout and
        one ``lora_A`` (r values per enabled part); ``zero_pad`` keeps the adapter output of the
        enabled parts (its ``index_copy_`` source) unless all three are adapted."""
        out, mods, shared_inputs, q, c = self.out, self.mods, self.shared_inputs, self.q, self.c
        lora_targets, lora_rank, adapter_bytes = self.o.lora_targets, self.o.lora_rank, self.o.adapter_bytes
        lora_dropout, cpu_dropout = self.o.lora_dropout, self.o.cpu_dropout
        enabled = [n for n in names if n in lora_targets]
        if not enabled:
            return
        ab = adapter_bytes
        if lora_dropout > 0:
            mb = ab if cpu_dropout else 1
            out.append(SavedTensor(f"LoRA q/k/v dropout output ({ab} B, one for the fused projection)", ab * in_features))
            out.append(SavedTensor(f"LoRA q/k/v dropout mask ({mb} B)", mb * in_features))
        elif ab != c:
            out.append(SavedTensor(f"LoRA q/k/v input ({ab}-byte copy)", ab * in_features))
        elif source not in shared_inputs:
            shared_inputs.add(source)
            out.append(SavedTensor(f"LoRA input: {source} (shared, no copy)", c * in_features))
        parts = len(enabled) if len(names) > 1 else 2  # a fused module name: LitGPT's default query and value
        out.append(SavedTensor(f"LoRA q/k/v A output ({parts} x r)", ab * lora_rank * parts))
        widths = {n: mods[n].out_features for n in names}
        if len(names) > 1 and len(enabled) < 3:
            out.append(SavedTensor(f"LoRA zero_pad source ({'/'.join(enabled)} adapter outputs, kept by index_copy_)",
                                   ab * sum(widths[n] for n in enabled)))
        elif len(names) == 1:
            fused = mods[names[0]].out_features
            out.append(SavedTensor("LoRA zero_pad source (query and value adapter outputs, kept by index_copy_)",
                                   ab * (q + (fused - q) // 2)))

    def lora(self, name: str, in_features: int, source: str, saved_elsewhere: bool = False) -> None:
        """LoRA on ``name``, whose input is the tensor ``source`` (modules fed by one tensor share it)."""
        regime, out, mods, shared_inputs, c = self.regime, self.out, self.mods, self.shared_inputs, self.c
        lora_targets, lora_rank, adapter_bytes = self.o.lora_targets, self.o.lora_rank, self.o.adapter_bytes
        lora_dropout, cpu_dropout, use_dora = self.o.lora_dropout, self.o.cpu_dropout, self.o.use_dora
        weight_cast = self.o.weight_cast
        if name not in lora_targets:
            return
        # peft (tuners/lora/layer.py, bnb.py): lora_A(dropout(x.to(adapter dtype))) * scaling.
        # lora_A keeps its input and lora_B keeps lora_A's output (r values). Under autocast
        # lora_A casts its input to the compute dtype and keeps that copy.
        ab = c if regime.amp else adapter_bytes
        if lora_dropout > 0:
            mb = ab if cpu_dropout else 1
            out.append(SavedTensor(f"LoRA {name} dropout output ({ab} B)", ab * in_features))
            out.append(SavedTensor(f"LoRA {name} dropout mask ({mb} B)", mb * in_features))
        elif regime.amp or ab != c:
            out.append(SavedTensor(f"LoRA {name} input ({ab}-byte copy)", ab * in_features))
        elif not saved_elsewhere and source not in shared_inputs:
            # The cast is a no-op when the input already has the adapter dtype: lora_A keeps the
            # very tensor, shared by every module it feeds, once.
            shared_inputs.add(source)
            out.append(SavedTensor(f"LoRA input: {source} (shared, no copy)", c * in_features))
        out.append(SavedTensor(f"LoRA {name} A output", ab * lora_rank))
        if use_dora:
            out.extend(dora_saved_tensors(name, mods[name].in_features, mods[name].out_features, regime,
                                          adapter_bytes=adapter_bytes, lora_dropout=lora_dropout,
                                          weight_cast=weight_cast, input_requires_grad=self.grad_flows))

    def base_input(self, names: list[str], width: int, source: str, saved_elsewhere: bool = False) -> None:
        """An 8-bit frozen base keeps the input ``source`` of the modules ``names`` (once) on its ctx;
        ``saved_elsewhere``: another op saves the same storage (counted there, unless checkpointing
        drops that op's copy)."""
        out, shared_inputs, bnb_names, c = self.out, self.shared_inputs, self.bnb_names, self.c
        base_keeps_inputs = self.o.base_keeps_inputs
        if not base_keeps_inputs or not self.grad_flows or source in shared_inputs:
            return
        if not any(n in bnb_names for n in names):
            return  # a mixture of experts' experts and router: parameters bitsandbytes leaves 16-bit
        shared_inputs.add(source)
        out.append(SavedTensor(f"8-bit linear input: {source} (kept by {'/'.join(names)})",
                               0 if saved_elsewhere else c * width, ctx_bytes_per_token=c * width))

    def adapted_before(self, names: list[str]) -> None:
        """The modules ``names`` have run: past an adapted one, every tensor requires grad."""
        lora_targets = self.o.lora_targets
        if any(n in lora_targets for n in names):
            self.grad_flows = True

    def rms(self, label: str, width: int | None = None, stored: int | None = None) -> None:
        """An RMSNorm over ``width`` values: its fp32 input (``stored`` values when the saved fp32
        input is a view of a wider tensor, as MLA's latent in fp32), the rsqrt, and the normalised
        tensor for the weight gradient; ``width`` h when not given."""
        out, gemma_norm, c, r = self.out, self.gemma_norm, self.c, self.r
        full = self.o.full
        width = self.h if width is None else width
        out.append(SavedTensor(f"{label} input (fp32)", 4 * (stored or width)))
        out.append(SavedTensor(f"{label} rsqrt", 4))
        if full:
            out.append(SavedTensor(f"{label} normalised (for the weight gradient)",
                                   (4 if r == 4 or gemma_norm else c) * width))

    def norm(self, label: str, consumers: list[str], input_saved: bool = False) -> None:
        """The norm before ``consumers``; ``input_saved``: its input is saved already (Falcon's
        second parallel LayerNorm reads the same layer input as the first)."""
        regime, out, norm_kind, h, c, r = self.regime, self.out, self.norm_kind, self.h, self.c, self.r
        full = self.o.full
        any_train = any(self.trains(n) for n in consumers)
        if norm_kind == "layer":
            # LayerNorm saves its input and fp32 mean and rstd.
            if not input_saved:
                out.append(SavedTensor(f"{label} input", r * h))
            out.append(SavedTensor(f"{label} mean and rstd", 8))
        elif norm_kind == "cohere":
            # to(fp32), x - mean (kept by pow and by the product with rsqrt), rsqrt, and the fp32
            # normalised tensor the weight product keeps.
            out.append(SavedTensor(f"{label} centred input (fp32)", 4 * h))
            out.append(SavedTensor(f"{label} rsqrt", 4))
            if full:
                out.append(SavedTensor(f"{label} normalised (fp32, for the weight gradient)", 4 * h))
        else:
            self.rms(label)
        if any_train:
            if regime.amp:
                out.append(SavedTensor(f"{label} output, {c}-byte copy per consumer x{len(consumers)}",
                                       c * h * len(consumers)))
            else:
                out.append(SavedTensor(f"{label} output (input of {'/'.join(consumers)})", r * h))

    def residual_input(self, label: str, consumers: list[str]) -> None:
        """OLMo 2 has no norm before its sublayers: the linears read the residual stream itself."""
        regime, out, h, c, r = self.regime, self.out, self.h, self.c, self.r
        if any(self.trains(n) for n in consumers):
            if regime.amp:
                out.append(SavedTensor(f"{label}, {c}-byte copy per consumer x{len(consumers)}",
                                       c * h * len(consumers)))
            else:
                out.append(SavedTensor(f"{label} (input of {'/'.join(consumers)})", r * h))

    def attention_input(self) -> None:
        """The norm before the attention, the adapters on its projections, the query/key norms."""
        arch, out, mods, gemma_norm, h, q, k = self.arch, self.out, self.mods, self.gemma_norm, self.h, self.q, self.k
        a, c, up_names, qkv_names = self.a, self.c, self.up_names, self.qkv_names
        parallel_one_norm = self.parallel_one_norm
        full = self.o.full
        if arch.post_norm:
            self.residual_input("layer input", qkv_names)
        elif parallel_one_norm:
            self.norm("layer norm", qkv_names + up_names)
        else:
            self.norm("attention norm", qkv_names)
        self.base_input(qkv_names, h, "attention norm output")
        if self.code.fused_qkv_lora:
            self.litgpt_qkv_lora(qkv_names, h, "attention norm output")
        else:
            for n in qkv_names:
                self.lora(n, mods[n].in_features, "attention norm output")
        if arch.qk_norm and arch.qk_norm_kind in ("head", "full"):
            # Qwen3's and Gemma 3's q_norm and k_norm (an RMSNorm over each head's head_dim,
            # modeling_qwen3.py, modeling_gemma3.py), OLMo 2's over the whole projection output
            # (modeling_olmo2.py: one rsqrt per token): like the layer norms, the fp32 copy of the
            # projection output and the rsqrt, and the normalised output for the weight gradient (in
            # the projection's dtype; fp32 for Gemma's norm).
            per_head = arch.qk_norm_kind == "head"
            for label, width, heads in (("query", q, a), ("key", k, arch.num_key_value_heads)):
                out.append(SavedTensor(f"{label} norm input (fp32)", 4 * width))
                out.append(SavedTensor(f"{label} norm rsqrt" + (" (per head)" if per_head else ""),
                                       4 * (heads if per_head else 1)))
                if full:
                    out.append(SavedTensor(f"{label} norm normalised (for the weight gradient)",
                                           (4 if gemma_norm else c) * width))
        elif arch.qk_norm and arch.qk_norm_kind == "per_head":
            # Cohere's use_qk_norm: CohereLayerNorm over head_dim with a weight per head, in fp32.
            for label, width, heads in (("query", q, a), ("key", k, arch.num_key_value_heads)):
                out.append(SavedTensor(f"{label} norm centred input (fp32)", 4 * width))
                out.append(SavedTensor(f"{label} norm rsqrt (per head)", 4 * heads))
                if full:
                    out.append(SavedTensor(f"{label} norm normalised (fp32, for the weight gradient)", 4 * width))
        elif arch.qk_norm and arch.qk_norm_kind == "head_layer":
            # phi's qk_layernorm: nn.LayerNorm over head_dim of the (b, heads, s, d) view: a contiguous
            # copy of its input, and fp32 mean and rstd per head.
            for label, width, heads in (("query", q, a), ("key", k, arch.num_key_value_heads)):
                out.append(SavedTensor(f"{label} layernorm input (contiguous copy)", c * width))
                out.append(SavedTensor(f"{label} layernorm mean and rstd (per head)", 8 * heads))

    def attention_core(self) -> None:
        """The attention kernel's saved tensors (SDPA's or eager scores), by the layout of q, k and v."""
        arch, regime, code, out, q, k, a = self.arch, self.regime, self.code, self.out, self.q, self.k, self.a
        c, mt, gqa, dropout_attn = self.c, self.mt, self.gqa, self.dropout_attn
        attention, cpu_dropout, cpu_kernels = self.o.attention, self.o.cpu_dropout, self.o.cpu_kernels
        v_width = arch.v_dim
        # SDPA's math path (no fused kernel takes the shapes): Falcon's multi-query layout passes one
        # key/value head for all query heads without enable_gqa, which every fused kernel refuses (CPU
        # and CUDA); MLA's value head_dim differs from the query's, which only CUDA's memory-efficient
        # kernel takes (the CPU has none). The math path (ATen _scaled_dot_product_attention_math)
        # computes in fp32 and keeps the scaled query, the key and the value expanded to every head, and
        # the probabilities, fp32 each, and no output.
        # (LitGPT's own attention expands K and V to every head before SDPA, litgpt/model.py
        # CausalSelfAttention.forward at 00af8b0d: a fused kernel takes them.)
        falcon_mq = (mt == "falcon" and arch.num_key_value_heads < a and not arch.hf_kv_heads
                     and code.sdpa_inputs != "rotated")
        self.math_sdpa = math_sdpa = attention == "sdpa" and (falcon_mq or (arch.is_mla and cpu_kernels))
        if arch.is_mla:
            # DeepseekV3Attention: the latent kv_nope goes through kv_a_layernorm (its fp32 input: in
            # fp32 the split view keeps the whole kv_a_proj_with_mqa output), the query's low-rank pair
            # through q_a_layernorm; kv_b_proj keeps the normalised latent, q_b_proj the normalised
            # query latent. The query (cat of the no-rope part and the rotated part) and the key
            # (new_empty, filled with k_nope and the shared rotated key) are new tensors of a x
            # (qk_nope + qk_rope); the value is a view of kv_b_proj's output, which it keeps whole
            # (a x (qk_nope + v_head_dim)).
            kvr, rope, nope = arch.kv_lora_rank, arch.qk_rope_head_dim, arch.qk_nope_head_dim
            if arch.q_lora_rank:
                self.rms("q_a_layernorm", arch.q_lora_rank)
                if self.trains("q_b_proj"):
                    out.append(SavedTensor("q_b_proj input (normalised query latent)", c * arch.q_lora_rank))
                self.lora("q_b_proj", arch.q_lora_rank, "q_a_layernorm output")
            self.rms("kv_a_layernorm", kvr, stored=(kvr + rope) if c == 4 and not regime.amp else None)
            if self.trains("kv_b_proj"):
                out.append(SavedTensor("kv_b_proj input (normalised KV latent)", c * kvr))
            self.lora("kv_b_proj", kvr, "kv_a_layernorm output")
            kv_b = a * (nope + arch.v_head_dim)
            if attention == "eager":
                out.append(SavedTensor("query and key (a x (qk_nope + qk_rope) each)", 2 * c * q))
                out.append(SavedTensor("kv_b_proj output (kept by the value view)", c * kv_b))
            elif math_sdpa:
                out.append(SavedTensor("SDPA math path (CPU): scaled query and key in fp32", 4 * 2 * q))
                out.append(SavedTensor("SDPA math path (CPU): value in fp32" if c != 4 else
                                       "SDPA math path (CPU): kv_b_proj output (kept by the value view)",
                                       4 * v_width if c != 4 else c * kv_b))
                out.append(SavedTensor("SDPA math path (CPU): probabilities (fp32)", 4 * a, quadratic=True))
            else:
                out.append(SavedTensor("query, key (SDPA inputs)", 2 * c * q))
                out.append(SavedTensor("kv_b_proj output (the SDPA value is a view of it)", c * kv_b))
                out.append(SavedTensor("SDPA output", c * v_width))
                out.append(SavedTensor("SDPA log-sum-exp (fp32)", 4 * a))
        elif math_sdpa:
            out.append(SavedTensor("SDPA math path: scaled query, key and value expanded to every head (fp32)",
                                   4 * 3 * q))
            out.append(SavedTensor("SDPA math path: probabilities (fp32)", 4 * a, quadratic=True))
        elif attention == "eager":
            # repeat_kv materialises K and V for every query head; scores are b x a x s x s. (GPT-2's
            # and GPTBigCode's query, a transposed view of c_attn's output, is copied by the matmul
            # instead; GPT-2's key and value likewise: the same c x q bytes each.)
            out.append(SavedTensor("query (after RoPE, or the matmul's contiguous copy)", c * q))
            out.append(SavedTensor("key and value repeated to all heads", 2 * c * q))
        elif code.sdpa_inputs == "rotated":
            # q and k rotated and concatenated (new tensors, K at every head); V a view of the fused output
            # (multi-head: SDPA's saved V keeps all of it) or an expanded copy (GQA/MQA)
            out.append(SavedTensor("query and key after RoPE and cat (K at every head)", 2 * c * q))
            if gqa:
                out.append(SavedTensor("value expanded to every head", c * q))
            else:
                out.append(SavedTensor("fused q/k/v output (kept by SDPA's value view)", c * (q + 2 * k)))
            out.append(SavedTensor("SDPA output", c * q))
            out.append(SavedTensor("SDPA log-sum-exp (fp32)", 4 * a))
        else:
            kv_saved = q if arch.hf_kv_heads else k  # Falcon-40B: K and V broadcast to every query head
            if code.sdpa_inputs == "expanded" and gqa:
                # torchtune's MultiHeadAttention expands K and V to every head before SDPA (a copy each)
                out.append(SavedTensor("query, and key and value expanded to every head (SDPA inputs)", c * 3 * q))
            else:
                out.append(SavedTensor("query, key, value (SDPA inputs)", c * (q + 2 * kv_saved)))
            out.append(SavedTensor("SDPA output", c * q))
            out.append(SavedTensor("SDPA log-sum-exp (fp32)", 4 * a))
        if attention == "eager":
            if arch.attn_logit_softcapping:
                # scores / cap -> tanh -> x cap (Gemma 2's eager_attention_forward): tanh keeps its output.
                out.append(SavedTensor(f"score softcapping tanh output ({c} B)", c * a, quadratic=True))
            if arch.attention_sinks:
                # GPT-OSS (modeling_gpt_oss.py eager_attention_forward): the sink logit is appended to
                # each row and the softmax runs in the scores' dtype; its output (one column wider,
                # the sink dropped by a view) is what the value matmul keeps.
                out.append(SavedTensor(f"softmax output with the sink column ({c} B)", c * a, quadratic=True))
            elif arch.softmax_in_score_dtype and not regime.amp:
                # GPT-2's eager_attention_forward (modeling_gpt2.py) and Falcon's attention run the
                # softmax in the scores' dtype: one tensor of c bytes, kept for both backward uses.
                out.append(SavedTensor(f"softmax output ({c} B)", c * a, quadratic=True))
            else:
                out.append(SavedTensor("softmax output (fp32)", 4 * a, quadratic=True))
                if c != 4:
                    out.append(SavedTensor(f"attention probabilities ({c}-byte copy)", c * a, quadratic=True))
            if dropout_attn > 0:
                out.append(SavedTensor("attention dropout mask", (c if cpu_dropout else 1) * a, quadratic=True))

    def attention_output(self) -> None:
        """The attention projection, its adapters, and what follows it before the MLP."""
        arch, out, mods, h, c, dropout_resid = self.arch, self.out, self.mods, self.h, self.c, self.dropout_resid
        qkv_names, math_sdpa = self.qkv_names, self.math_sdpa
        attention, cpu_dropout, mlp_marker = self.o.attention, self.o.cpu_dropout, self.o.mlp_marker
        o_name = next(n for n in ("o_proj", "out_proj", "c_proj", "dense") if n in mods)
        o_width = arch.o_dim
        if self.trains(o_name) and not (self.code.sdpa_inputs == "rotated" and attention != "eager"):
            # (LitGPT reshapes SDPA's output, a view in the flash kernel's layout, into the proj input)
            out.append(SavedTensor(f"{o_name} input", c * o_width))
        # SDPA's output is the o_proj input (its kernels return it in that layout) and is saved already.
        self.adapted_before(qkv_names)
        fused = attention != "eager" and not math_sdpa  # a fused kernel keeps its output, o_proj's input
        self.base_input([o_name], o_width, "attention output", saved_elsewhere=fused)
        self.lora(o_name, o_width, "attention output", saved_elsewhere=fused)
        self.adapted_before([o_name])
        if mlp_marker:
            out.append(SavedTensor(MLP_MARKER, 0))
        if dropout_resid > 0:
            out.append(SavedTensor("residual dropout mask (attention)", (c if cpu_dropout else 1) * h))
        if arch.norms_per_layer == 4:
            # Gemma 2: the attention output is normalised before the residual add (post_attention_layernorm).
            self.rms("post-attention norm")
        if arch.post_norm:
            self.rms("post-attention norm (on the attention output)")

    def mlp(self) -> None:
        """The MLP block: its norm, its projections and adapters, the activation, a shared expert."""
        arch, out, mods, h, f, c, gpt = self.arch, self.out, self.mods, self.h, self.f, self.c, self.gpt
        up_names, parallel_one_norm = self.up_names, self.parallel_one_norm
        full = self.o.full
        # ---- MLP block --------------------------------------------------------------------------
        if arch.post_norm:
            self.residual_input("MLP input (the residual stream)", up_names)
        elif arch.parallel_block and arch.norms_per_layer == 2:
            self.norm("MLP layer norm (ln_mlp, on the layer input)", up_names, input_saved=True)
        elif not parallel_one_norm:
            self.norm("MLP norm", up_names)
        self.base_input(up_names, h, "MLP norm output")
        for n in up_names:
            self.lora(n, h, "MLP norm output")
        # Tokens reaching each expert: top-k routing sends num_experts_per_tok copies of each token.
        fk = f * (arch.num_experts_per_tok if arch.is_moe else 1)
        act_saves = ACTIVATION_SAVES.get(arch.hidden_act, 1)
        if self.code.aten_activation:
            # LitGPT's MLPs call torch.nn.functional.gelu(x, approximate=config.gelu_approximate) or silu
            # (litgpt/model.py GptNeoxMLP, LLaMAMLP at 00af8b0d; lit_gpt/model.py at 8641822 alike): one
            # ATen op that saves its input, where Transformers' gelu_new / gelu_fast are Python formulas
            # keeping several intermediates (phi's hidden_act gelu_new is LitGPT's gelu_approximate="tanh").
            act_saves = 1
        if arch.clamped_swiglu:
            # GptOssExperts._apply_gate: gate and up interleaved in one output (kept whole by the
            # views), gate clamped, sigmoid(alpha x gate), their product, up clamped plus one: the
            # clamped gate, the sigmoid, the product and up + 1 are kept for backward.
            out.append(SavedTensor("expert gate_up output (gate and up interleaved)", 2 * c * fk))
            out.append(SavedTensor("clamped gate, its sigmoid, their product and up + 1", 4 * c * fk))
        elif arch.gated_mlp:
            out.append(SavedTensor(f"MLP gate output ({arch.hidden_act} input)", c * fk * act_saves))
            out.append(SavedTensor("MLP activation output and up projection", 2 * c * fk))
        else:
            out.append(SavedTensor(f"MLP {arch.hidden_act} intermediates", c * fk * act_saves))
        down = "experts.down_proj" if "experts.down_proj" in mods else next(
            n for n in ("down_proj", "w2", "c_proj", "dense_4h_to_h", "fc2", "fc_out") if n in mods and (n != "c_proj" or gpt))
        if self.trains(down):
            out.append(SavedTensor(f"{down} input", c * fk))
        self.adapted_before(up_names)
        self.base_input([down], fk, "MLP product (down_proj input)")
        self.lora(down, f, "MLP product (down_proj input)")
        if arch.is_moe and arch.shared_expert_intermediate_size:
            # A shared expert every token runs (DeepSeek's shared_experts, Qwen2-MoE's shared_expert): a
            # gated MLP of its own width on the same normalised input, its down_proj keeping its input.
            sf = arch.shared_expert_intermediate_size
            out.append(SavedTensor(f"shared expert gate output ({arch.hidden_act} input)", c * sf * act_saves))
            out.append(SavedTensor("shared expert activation output and up projection", 2 * c * sf))
            if full:
                out.append(SavedTensor("shared expert down_proj input", c * sf))
            self.lora("down_proj", sf, "shared expert product (its down_proj input)")
        if arch.shared_expert_gate:
            # Qwen2-MoE: sigmoid(shared_expert_gate(x)) x shared output keeps both factors.
            out.append(SavedTensor("shared expert gate sigmoid and the shared output it scales", c * (1 + h)))

    def router_and_output(self) -> None:
        """A mixture of experts' router and expert outputs; the residual dropout and post-norms."""
        arch, regime, out, h, c, dropout_resid = self.arch, self.regime, self.out, self.h, self.c, self.dropout_resid
        full, lora_targets, cpu_dropout = self.o.full, self.o.lora_targets, self.o.cpu_dropout
        if arch.is_moe:
            if arch.router_fp32:
                # DeepSeek's router (DeepseekV3TopkRouter): F.linear(x.float(), weight.float()) keeps the
                # fp32 copy of the normalised input when the router trains; the sigmoid (V3) or
                # softmax (V2) keeps its fp32 output; the top-k weights and their normalisation.
                if full and c != 4 and not regime.amp:
                    out.append(SavedTensor("router input (fp32 copy)", 4 * h))
                out.append(SavedTensor("router scores (fp32)", 4 * arch.num_local_experts))
                out.append(SavedTensor("top-k indices (int64) and weights", 12 * arch.num_experts_per_tok))
            else:
                out.append(SavedTensor("router logits and top-k weights (fp32)", 4 * 2 * arch.num_local_experts))
            # Transformers 5 runs the experts as grouped matmuls (integrations/moe.py,
            # grouped_mm_experts_forward): the normalised tokens are gathered into k rows per token,
            # sorted by expert, and that copy is the up projection's saved input; each expert's
            # output row is kept by the product with its routing weight (whose gradient trains the
            # router). PyTorch saves a matmul's input only when the weight trains.
            k_tok = arch.num_experts_per_tok
            if full:
                out.append(SavedTensor(f"expert inputs: normalised tokens gathered k={k_tok} times", c * h * k_tok))
            if full or lora_targets:
                # The routing weights need a gradient whenever the layer's input does (a LoRA adapter in
                # this or an earlier layer), so the product keeps the expert outputs then too.
                out.append(SavedTensor(f"expert outputs kept for the routing-weight product (k={k_tok})", c * h * k_tok))
        if dropout_resid > 0:
            out.append(SavedTensor("residual dropout mask (MLP)", (c if cpu_dropout else 1) * h))
        if arch.norms_per_layer == 4:
            self.rms("post-feedforward norm")  # Gemma 2: post_feedforward_layernorm on the MLP output
        if arch.post_norm:
            self.rms("post-feedforward norm (on the MLP output)")


#: The entry :func:`layer_saved_tensors` puts after the attention output when asked (``mlp_marker``).
MLP_MARKER = "-- after the attention output --"
