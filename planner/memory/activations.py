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

from planner.model.architecture import Architecture
from planner.memory.quant import bnb_linear_modules

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


def layer_saved_tensors(arch: Architecture, regime: Regime, *, attention: str, full: bool,
                        lora_targets: tuple[str, ...] = (), lora_rank: int = 0, training: bool = True,
                        adapter_bytes: int = 4, lora_dropout: float = 0.0,
                        cpu_dropout: bool = False, use_dora: bool = False, weight_cast: bool = True,
                        input_requires_grad: bool = True, base_keeps_inputs: bool = False,
                        cpu_kernels: bool = False, code: str = "transformers",
                        compiled: bool = False, mlp_marker: bool = False) -> list[SavedTensor]:
    """Tensors one transformer layer saves for backward, per token.

    Args:
        arch: the model.
        regime: activation dtypes.
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
        use_dora: the adapters are peft's DoRA (see :func:`dora_saved_tensors`).
        cpu_kernels: the kernels the CPU runs: SDPA with a value head_dim other than the query's
            (MLA) has no fused CPU kernel and takes the math path (for the validation's CPU runs; on
            CUDA the memory-efficient kernel runs it and keeps O(s) statistics).
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

        code: whose implementation: 'transformers', 'torchtune', 'litgpt' or 'unsloth' (module
            docstring); the others' model code applies to Llama-style layers only (the caller keeps
            the others on 'transformers').
        compiled: the layer runs under ``torch.compile`` (:func:`compiled_layer_saved_tensors`; the
            caller checks :func:`compile_not_modelled` first).
        mlp_marker: put a 0-byte entry named :data:`MLP_MARKER` where what follows the attention
            output begins (:func:`adapter_layer_saved_tensors` splits there).

    Returns:
        The saved tensors; sum their bytes for the layer.
    """
    if compiled:
        return compiled_layer_saved_tensors(arch, regime, attention=attention, full=full, lora_targets=lora_targets,
                                            lora_rank=lora_rank, lora_dropout=lora_dropout, cpu_dropout=cpu_dropout)
    if code == "unsloth" and unsloth_kernels_apply(arch, full=full, lora_targets=lora_targets,
                                                   lora_dropout=lora_dropout, attention=attention):
        return unsloth_layer_saved_tensors(arch, regime, lora_rank=lora_rank)
    h, q, k, f = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size
    a = arch.num_attention_heads
    c, r = regime.compute, regime.residual
    out: list[SavedTensor] = []
    mods = {m.name: m for m in arch.linear_modules()}
    gpt = arch.layer_norm  # LayerNorm layouts (GPT-2, GPT-NeoX, GPTBigCode, phi, Falcon, GPT-J, BLOOM, StarCoder2)
    # Cohere's LayerNorm is Python arithmetic in fp32 (modeling_cohere.py CohereLayerNorm), not nn.LayerNorm.
    norm_kind = "cohere" if arch.model_type == "cohere" else "layer" if gpt else "rms"
    mt = arch.model_type
    litgpt = code == "litgpt"
    gqa = arch.num_key_value_heads < a

    def trains(name: str) -> bool:
        return full or False

    shared_inputs: set[str] = set()

    # Whether the input of the module being adapted requires grad (DoRA's recomputed base linear
    # keeps its weight copy only then): the layer's input may not (the first layer's, below a
    # frozen embedding); every tensor after an adapted module does.
    grad_flows = input_requires_grad

    def litgpt_qkv_lora(names: list[str], in_features: int, source: str) -> None:
        """LitGPT's LoRAQKVLinear: the adapted parts of the fused q/k/v projection share one dropout and
        one ``lora_A`` (r values per enabled part); ``zero_pad`` keeps the adapter output of the
        enabled parts (its ``index_copy_`` source) unless all three are adapted."""
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

    def lora(name: str, in_features: int, source: str, saved_elsewhere: bool = False) -> None:
        """LoRA on ``name``, whose input is the tensor ``source`` (modules fed by one tensor share it)."""
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
                                          weight_cast=weight_cast, input_requires_grad=grad_flows))

    bnb_names = {m.name for m in bnb_linear_modules(arch)}

    def base_input(names: list[str], width: int, source: str, saved_elsewhere: bool = False) -> None:
        """An 8-bit frozen base keeps the input ``source`` of the modules ``names`` (once) on its ctx;
        ``saved_elsewhere``: another op saves the same storage (counted there, unless checkpointing
        drops that op's copy)."""
        if not base_keeps_inputs or not grad_flows or source in shared_inputs:
            return
        if not any(n in bnb_names for n in names):
            return  # a mixture of experts' experts and router: parameters bitsandbytes leaves 16-bit
        shared_inputs.add(source)
        out.append(SavedTensor(f"8-bit linear input: {source} (kept by {'/'.join(names)})",
                               0 if saved_elsewhere else c * width, ctx_bytes_per_token=c * width))

    def adapted_before(names: list[str]) -> None:
        """The modules ``names`` have run: past an adapted one, every tensor requires grad."""
        nonlocal grad_flows
        if any(n in lora_targets for n in names):
            grad_flows = True

    # Gemma's RMSNorm multiplies the fp32 normalised tensor by (1 + weight) in fp32 and casts the
    # product back (modeling_gemma.py GemmaRMSNorm): the tensor kept for the weight gradient is
    # fp32 whatever the activations' dtype. Llama's casts first and keeps it in the input dtype.
    gemma_norm = arch.fp32_norm_product or litgpt  # LitGPT's RMSNorm multiplies in fp32 as well

    def rms(label: str, width: int = h, stored: int | None = None) -> None:
        """An RMSNorm over ``width`` values: its fp32 input (``stored`` values when the saved fp32
        input is a view of a wider tensor, as MLA's latent in fp32), the rsqrt, and the normalised
        tensor for the weight gradient."""
        out.append(SavedTensor(f"{label} input (fp32)", 4 * (stored or width)))
        out.append(SavedTensor(f"{label} rsqrt", 4))
        if full:
            out.append(SavedTensor(f"{label} normalised (for the weight gradient)",
                                   (4 if r == 4 or gemma_norm else c) * width))

    def norm(label: str, consumers: list[str], input_saved: bool = False) -> None:
        """The norm before ``consumers``; ``input_saved``: its input is saved already (Falcon's
        second parallel LayerNorm reads the same layer input as the first)."""
        any_train = any(trains(n) for n in consumers)
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
            rms(label)
        if any_train:
            if regime.amp:
                out.append(SavedTensor(f"{label} output, {c}-byte copy per consumer x{len(consumers)}",
                                       c * h * len(consumers)))
            else:
                out.append(SavedTensor(f"{label} output (input of {'/'.join(consumers)})", r * h))

    def residual_input(label: str, consumers: list[str]) -> None:
        """OLMo 2 has no norm before its sublayers: the linears read the residual stream itself."""
        if any(trains(n) for n in consumers):
            if regime.amp:
                out.append(SavedTensor(f"{label}, {c}-byte copy per consumer x{len(consumers)}",
                                       c * h * len(consumers)))
            else:
                out.append(SavedTensor(f"{label} (input of {'/'.join(consumers)})", r * h))

    dropout_attn = float(arch.extra.get("attn_pdrop", arch.extra.get("attention_dropout", 0.0)) or 0.0)
    dropout_resid = float(arch.extra.get("resid_pdrop", arch.extra.get("hidden_dropout", 0.0)) or 0.0)
    if not training or litgpt:
        # LitGPT's GPT has no dropout module (litgpt/model.py at 00af8b0d: SDPA with dropout_p=0.0, no
        # residual dropout), whatever the Hugging Face config's resid_pdrop / attention_dropout say.
        dropout_attn = dropout_resid = 0.0

    # ---- the MLP's first modules (a parallel block's single norm also feeds them) -------------
    if arch.is_moe and "gate_up_proj" in mods:
        up_names = ["gate_up_proj"]
    elif arch.is_moe and "experts.gate_up_proj" in mods:
        up_names = [n for n in ("gate", "experts.gate_up_proj", "gate_proj", "up_proj", "shared_expert_gate")
                    if n in mods]
    elif arch.is_moe:
        up_names = ["w1", "w3"] if "w1" in mods else ["gate_proj", "up_proj"]
    elif arch.fused_gate_up:
        up_names = ["gate_up_proj"]
    elif arch.gated_mlp:
        up_names = ["gate_proj", "up_proj"]
    else:
        up_names = [n for n in ("c_fc", "dense_h_to_4h", "up_proj", "fc1", "fc_in") if n in mods]

    # ---- attention block --------------------------------------------------------------------
    if arch.is_mla:
        qkv_names = [n for n in ("q_a_proj", "q_proj", "kv_a_proj_with_mqa") if n in mods]
    else:
        qkv_names = [n for n in ("c_attn", "query_key_value", "qkv_proj", "q_proj", "k_proj", "v_proj")
                     if n in mods]
    parallel_one_norm = arch.parallel_block and arch.norms_per_layer == 1
    if arch.post_norm:
        residual_input("layer input", qkv_names)
    elif parallel_one_norm:
        norm("layer norm", qkv_names + up_names)
    else:
        norm("attention norm", qkv_names)
    base_input(qkv_names, h, "attention norm output")
    if litgpt:
        litgpt_qkv_lora(qkv_names, h, "attention norm output")
    else:
        for n in qkv_names:
            lora(n, mods[n].in_features, "attention norm output")
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
    v_width = arch.v_dim
    # SDPA's math path (no fused kernel takes the shapes): Falcon's multi-query layout passes one
    # key/value head for all query heads without enable_gqa, which every fused kernel refuses (CPU
    # and CUDA); MLA's value head_dim differs from the query's, which only CUDA's memory-efficient
    # kernel takes (the CPU has none). The math path (ATen _scaled_dot_product_attention_math)
    # computes in fp32 and keeps the scaled query, the key and the value expanded to every head, and
    # the probabilities, fp32 each, and no output.
    # (LitGPT's own attention expands K and V to every head before SDPA, litgpt/model.py
    # CausalSelfAttention.forward at 00af8b0d: a fused kernel takes them.)
    falcon_mq = mt == "falcon" and arch.num_key_value_heads < a and not arch.hf_kv_heads and not litgpt
    math_sdpa = attention == "sdpa" and (falcon_mq or (arch.is_mla and cpu_kernels))
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
            rms("q_a_layernorm", arch.q_lora_rank)
            if trains("q_b_proj"):
                out.append(SavedTensor("q_b_proj input (normalised query latent)", c * arch.q_lora_rank))
            lora("q_b_proj", arch.q_lora_rank, "q_a_layernorm output")
        rms("kv_a_layernorm", kvr, stored=(kvr + rope) if c == 4 and not regime.amp else None)
        if trains("kv_b_proj"):
            out.append(SavedTensor("kv_b_proj input (normalised KV latent)", c * kvr))
        lora("kv_b_proj", kvr, "kv_a_layernorm output")
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
    elif litgpt:
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
        if code == "torchtune" and gqa:
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
    o_name = next(n for n in ("o_proj", "out_proj", "c_proj", "dense") if n in mods)
    o_width = arch.o_dim
    if trains(o_name) and not (litgpt and attention != "eager"):
        # (LitGPT reshapes SDPA's output, a view in the flash kernel's layout, into the proj input)
        out.append(SavedTensor(f"{o_name} input", c * o_width))
    # SDPA's output is the o_proj input (its kernels return it in that layout) and is saved already.
    adapted_before(qkv_names)
    fused = attention != "eager" and not math_sdpa  # a fused kernel keeps its output, o_proj's input
    base_input([o_name], o_width, "attention output", saved_elsewhere=fused)
    lora(o_name, o_width, "attention output", saved_elsewhere=fused)
    adapted_before([o_name])
    if mlp_marker:
        out.append(SavedTensor(MLP_MARKER, 0))
    if dropout_resid > 0:
        out.append(SavedTensor("residual dropout mask (attention)", (c if cpu_dropout else 1) * h))
    if arch.norms_per_layer == 4:
        # Gemma 2: the attention output is normalised before the residual add (post_attention_layernorm).
        rms("post-attention norm")
    if arch.post_norm:
        rms("post-attention norm (on the attention output)")
    # ---- MLP block --------------------------------------------------------------------------
    if arch.post_norm:
        residual_input("MLP input (the residual stream)", up_names)
    elif arch.parallel_block and arch.norms_per_layer == 2:
        norm("MLP layer norm (ln_mlp, on the layer input)", up_names, input_saved=True)
    elif not parallel_one_norm:
        norm("MLP norm", up_names)
    base_input(up_names, h, "MLP norm output")
    for n in up_names:
        lora(n, h, "MLP norm output")
    # Tokens reaching each expert: top-k routing sends num_experts_per_tok copies of each token.
    fk = f * (arch.num_experts_per_tok if arch.is_moe else 1)
    act_saves = ACTIVATION_SAVES.get(arch.hidden_act, 1)
    if litgpt:
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
    if trains(down):
        out.append(SavedTensor(f"{down} input", c * fk))
    adapted_before(up_names)
    base_input([down], fk, "MLP product (down_proj input)")
    lora(down, f, "MLP product (down_proj input)")
    if arch.is_moe and arch.shared_expert_intermediate_size:
        # A shared expert every token runs (DeepSeek's shared_experts, Qwen2-MoE's shared_expert): a
        # gated MLP of its own width on the same normalised input, its down_proj keeping its input.
        sf = arch.shared_expert_intermediate_size
        out.append(SavedTensor(f"shared expert gate output ({arch.hidden_act} input)", c * sf * act_saves))
        out.append(SavedTensor("shared expert activation output and up projection", 2 * c * sf))
        if full:
            out.append(SavedTensor("shared expert down_proj input", c * sf))
        lora("down_proj", sf, "shared expert product (its down_proj input)")
    if arch.shared_expert_gate:
        # Qwen2-MoE: sigmoid(shared_expert_gate(x)) x shared output keeps both factors.
        out.append(SavedTensor("shared expert gate sigmoid and the shared output it scales", c * (1 + h)))
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
        rms("post-feedforward norm")  # Gemma 2: post_feedforward_layernorm on the MLP output
    if arch.post_norm:
        rms("post-feedforward norm (on the MLP output)")
    return out


#: The entry :func:`layer_saved_tensors` puts after the attention output when asked (``mlp_marker``).
MLP_MARKER = "-- after the attention output --"

ADAPTER_ACT_SRC = ("LitGPT litgpt/adapter.py CausalSelfAttention.scaled_dot_product_attention (commit 05401183; "
                   "lit_gpt 0f021f3a alike): ay = SDPA(q, ak, av, amask); y + gating_factor * ay")


def adapter_layer_saved_tensors(arch: Architecture, regime: Regime, *, attention: str, first: bool,
                                base_keeps_inputs: bool = False, cpu_kernels: bool = False) -> list[SavedTensor]:
    """What one layer of LitGPT's LLaMA-Adapter saves for backward, per token (litgpt/adapter.py).

    Over a frozen LitGPT layer (:func:`layer_saved_tensors` with ``code='litgpt'``, no adapters), each
    adapted layer attends from its queries to the prefix's cached keys and values (``ak``, ``av``:
    ``adapter_prompt_length`` tokens, made once under ``no_grad``, so they carry no graph;
    planner.memory.states.adapter_parameters) through SDPA with a boolean mask, and adds the output
    scaled by a per-head gate: ``y + gating_factor * ay``. With a mask SDPA runs the memory-efficient
    kernel, which saves its output and an fp32 log-sum-exp per head and the mask converted to an
    additive bias in the query dtype (``convert_boolean_attn_mask``), its last dimension padded to a
    multiple of 8 (aten/src/ATen/native/transformers/attention.cpp ``preprocess_mask``,
    ``mem_eff_alignment = 8``: 10 columns become 16; one mask for the micro-batch, counted per token,
    exact for micro-batch 1); the query it saves is the base attention's. The
    gate's product keeps ``ay`` (the same storage). The cached keys and values (prefix x q each) stay
    on the layer for the whole run.

    The first adapted layer (``first``) is different: below it nothing requires grad (the embedding
    and the earlier layers are frozen, and the prefix has no graph), so its attention saves nothing
    but the gate's operand ``ay``; what follows the attention output does require grad and saves what
    a frozen layer saves there (``MLP_MARKER``), except in a parallel block, whose MLP reads the layer
    input. Layers before ``adapter_start_layer`` save nothing at all (the caller).

    ``base_keeps_inputs``: an NF4 base on bitsandbytes before 0.43.2: the output projection's input,
    the reshaped sum (a new tensor, not SDPA's output), stays on its ctx.
    """
    from planner.workload.frameworks import LITGPT_ADAPTER_PROMPT_LENGTH

    aT = LITGPT_ADAPTER_PROMPT_LENGTH
    c = regime.compute
    q, a, o = arch.q_dim, arch.num_attention_heads, arch.o_dim
    frozen = layer_saved_tensors(arch, regime, attention=attention, full=False, base_keeps_inputs=base_keeps_inputs,
                                 cpu_kernels=cpu_kernels, code="litgpt", mlp_marker=True)
    cut = next(i for i, t in enumerate(frozen) if t.name == MLP_MARKER)
    cache = SavedTensor(f"adapter prefix keys and values (cached: {aT} tokens x q x 2)", 2 * aT * q * c, per_layer=True)
    kept_proj = ([SavedTensor("proj input: the sum with the gated adapter output (kept by the 4-bit linear's ctx)",
                              c * o, ctx_bytes_per_token=c * o)] if base_keeps_inputs else [])
    if first:
        tail = [] if arch.parallel_block else [t for t in frozen[cut + 1:]]
        return [SavedTensor("adapter attention output (kept by the gate's product)", c * q), cache] + kept_proj + tail
    width = -(-aT // 8) * 8
    body = [t for t in frozen if t.name != MLP_MARKER and not t.name.startswith("8-bit linear input: attention output")]
    return body + [
        SavedTensor("adapter SDPA output (also the gate product's operand)", c * q),
        SavedTensor("adapter SDPA log-sum-exp (fp32)", 4 * a),
        SavedTensor(f"adapter mask as an additive bias ({aT} prefix columns padded to {width})", c * width),
        cache] + kept_proj


COMPILE_SRC = ("torch/_functorch/partitioners.py min_cut_rematerialization_partition (AOTAutograd's default, "
               "inductor's partition_fn); saved set read off its partition of a Llama decoder layer (torch 2.13), "
               "tests/data/validation (compiled runs)")


def compile_not_modelled(arch: Architecture, *, use_dora: bool, base_keeps_inputs: bool) -> str | None:
    """Why :func:`compiled_layer_saved_tensors` does not describe this layer under ``torch.compile``
    (the eager set is used then, an upper bound), or None when it does."""
    if arch.is_moe:
        return "a mixture of experts' routing (data-dependent shapes break the graph)"
    if use_dora:
        return "peft's DoRA (its identity-matrix weight norms)"
    if base_keeps_inputs:
        return "bitsandbytes' custom autograd Functions (a graph break at each quantized linear)"
    if arch.attention_sinks or arch.clamped_swiglu:
        return f"{arch.model_type}'s attention sinks and clamped SwiGLU"
    if arch.generic or arch.is_mla or arch.post_norm or arch.parallel_block or arch.model_type == "cohere":
        return f"{arch.model_type}'s layer layout (the compiled set is read off a Llama-style layer)"
    if arch.qk_norm and arch.qk_norm_kind != "head":
        return f"{arch.model_type}'s query/key norm layout"
    return None


def compiled_layer_saved_tensors(arch: Architecture, regime: Regime, *, attention: str, full: bool,
                                 lora_targets: tuple[str, ...] = (), lora_rank: int = 0, lora_dropout: float = 0.0,
                                 cpu_dropout: bool = False) -> list[SavedTensor]:
    """What one decoder layer saves for backward under ``torch.compile``, per token.

    AOTAutograd traces forward and backward into one joint graph, and its default partitioner
    (``min_cut_rematerialization_partition``, the one inductor uses) picks the cheapest set of forward
    values to save, in bytes, from which backward can recompute the rest: pointwise ops (casts, the
    norm's normalisation, RoPE, the activation function, the gated product) may be recomputed, matmuls
    and attention kernels not. Run on a Llama decoder layer (Transformers' and torchtune's layout alike;
    bf16, full fine-tune and frozen base, MHA and GQA; torch 2.13, identity compilers on the CPU), it
    saves, per token:

    - the layer input (to recompute the first norm) and each norm's rstd (fp32; LayerNorm: mean and
      rstd); a norm's output too when a matmul it feeds trains (full fine-tune, or LoRA's ``lora_A``);
    - the rotated query and key, the value, SDPA's output and its fp32 log-sum-exp (eager attention:
      the probabilities as well, heads x s per token, in the compute dtype);
    - the attention projection's output (with the layer input it recomputes the second norm's input);
    - the MLP's gate and up projection outputs (a plain MLP: its first projection's output), and their
      product when the down projection trains;
    - LoRA: each adapter's ``lora_A`` output (r values) and dropout's 1-byte mask (the dropped-out
      input is recomputed from it).

    Unlike eager code it keeps no fp32 copy of a norm's input, no activation output and no product
    whose weight is frozen. Everything in the compute dtype c, the residual stream in r.
    """
    h, q, k, f = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size
    a = arch.num_attention_heads
    c, r = regime.compute, regime.residual
    mods = {m.name: m for m in arch.linear_modules()}
    stats = 8 if arch.layer_norm else 4
    out = [SavedTensor("layer input (to recompute the norms)", r * h)]
    qkv = [n for n in ("c_attn", "query_key_value", "qkv_proj", "q_proj", "k_proj", "v_proj") if n in mods]
    o_name = next(n for n in ("o_proj", "out_proj", "c_proj", "dense") if n in mods)
    if arch.fused_gate_up or (arch.gated_mlp and "gate_up_proj" in mods):
        up = ["gate_up_proj"]
    elif arch.gated_mlp:
        up = ["gate_proj", "up_proj"]
    else:
        up = [n for n in ("c_fc", "dense_h_to_4h", "up_proj") if n in mods]
    down = next(n for n in ("down_proj", "w2", "c_proj", "dense_4h_to_h") if n in mods and (n != "c_proj" or arch.layer_norm))

    def norm(label: str, consumers: list[str]) -> None:
        out.append(SavedTensor(f"{label} statistics (fp32)", stats))
        if full or any(n in lora_targets for n in consumers):
            out.append(SavedTensor(f"{label} output (a trainable matmul's input)", c * h))

    def lora(names: list[str], width: int) -> None:
        for n in names:
            if n not in lora_targets:
                continue
            out.append(SavedTensor(f"LoRA {n} A output", c * lora_rank))
            if lora_dropout > 0:
                mb = c if cpu_dropout else 1
                out.append(SavedTensor(f"LoRA {n} dropout mask ({mb} B)", mb * width))

    norm("attention norm", qkv)
    lora(qkv, h)
    if arch.qk_norm:
        out.append(SavedTensor("query and key norm statistics (fp32, per head)", 4 * (a + arch.num_key_value_heads)))
    out.append(SavedTensor("query and key after RoPE, value", c * (q + 2 * k)))
    if attention == "eager":
        out.append(SavedTensor(f"attention probabilities ({c} B)", c * a, quadratic=True))
    else:
        out.append(SavedTensor("SDPA log-sum-exp (fp32)", 4 * a))
    out.append(SavedTensor("attention output (SDPA's, the projection's input)", c * q))
    lora([o_name], q)
    out.append(SavedTensor(f"{o_name} output (recomputes the MLP norm's input)", r * h))
    if arch.norms_per_layer == 4:
        out.append(SavedTensor("post-attention norm statistics (fp32)", stats))
    norm("MLP norm", up)
    lora(up, h)
    width = f * (2 if up == ["gate_up_proj"] else 1)
    if arch.gated_mlp:
        out.append(SavedTensor("MLP gate and up outputs", c * 2 * f if up != ["gate_up_proj"] else c * width))
    else:
        out.append(SavedTensor(f"MLP {up[0] if up else 'up'} output (the activation's input)", c * f))
    if full or down in lora_targets:
        out.append(SavedTensor(f"{down} input (the MLP product)", c * f))
    lora([down], f)
    if arch.norms_per_layer == 4:
        out.append(SavedTensor("post-feedforward norm statistics (fp32)", stats))
    return out


UNSLOTH_KERNEL_SRC = ("Unsloth unsloth/kernels/fast_lora.py LoRA_QKV, LoRA_W, LoRA_MLP; rms_layernorm.py "
                      "Fast_RMS_Layernorm; rope_embedding.py (commit e3162dc5)")


def unsloth_kernels_apply(arch: Architecture, *, full: bool, lora_targets: tuple[str, ...], lora_dropout: float,
                          attention: str) -> bool:
    """Whether Unsloth's fused LoRA kernels run the layer: LoRA (dropout 0) on every projection of a
    Llama-style layer (separate q/k/v and gate/up/down, RMSNorm), SDPA or flash attention (Unsloth
    patches only then: unsloth/models/llama.py ``patch_peft_model``)."""
    needed = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    names = {m.name for m in arch.linear_modules()}
    return (not full and lora_dropout == 0 and needed <= names and needed <= set(lora_targets) and not arch.is_moe
            and not arch.layer_norm and attention != "eager" and arch.gated_mlp)


def unsloth_layer_saved_tensors(arch: Architecture, regime: Regime, *, lora_rank: int) -> list[SavedTensor]:
    """What one Llama-style layer saves for backward under Unsloth's kernels, per token.

    ``Fast_RMS_Layernorm`` saves its input and an fp32 inverse RMS per row; ``LoRA_QKV`` saves its input
    (the norm's output) and recomputes the adapters' products in backward; RoPE is applied in place
    and saves only cos and sin; SDPA saves q, k, v, its output and log-sum-exp; ``LoRA_W`` (the output
    projection) saves its input, SDPA's output; ``LoRA_MLP`` saves its input and the gate and up
    outputs (``ctx.save_for_backward(..., X, e, g)``) and recomputes the activation in backward.

    Attention runs through xformers unless flash-attn is installed (``LlamaAttention_fast_forward``,
    unsloth/models/llama.py at e3162dc5: ``if not HAS_FLASH_ATTENTION``; Unsloth's install extras pull
    xformers, flash-attn is optional): with fewer KV heads than query heads and ``hidden_states``
    requiring grad, K and V are expanded and ``reshape``d to every head (a copy each), and those copies
    are what ``memory_efficient_attention`` keeps.
    """
    h, q, k, f = arch.hidden_size, arch.q_dim, arch.kv_dim, arch.intermediate_size
    c = regime.compute
    a = arch.num_attention_heads
    gqa = arch.num_key_value_heads < a
    return [
        SavedTensor("attention norm input and fp32 inverse RMS (Fast_RMS_Layernorm)", c * h + 4),
        SavedTensor("LoRA_QKV input (the norm's output)", c * h),
        SavedTensor("LoRA q/k/v A outputs are recomputed (only the input is kept)", 0),
        SavedTensor("query, and key and value expanded to every head (xformers inputs)", c * 3 * q) if gqa else
        SavedTensor("query, key, value (xformers inputs)", c * (q + 2 * k)),
        SavedTensor("SDPA output (also LoRA_W's input)", c * q),
        SavedTensor("SDPA log-sum-exp (fp32)", 4 * a),
        SavedTensor("MLP norm input and fp32 inverse RMS", c * h + 4),
        SavedTensor("LoRA_MLP input (the norm's output)", c * h),
        SavedTensor("LoRA_MLP gate and up outputs (e, g)", 2 * c * f),
    ]


DORA_SRC = ("Liu et al. 2024, DoRA, sec. 4 (magnitude x direction, the norm detached); peft "
            "tuners/lora/dora.py DoraLinearLayer.forward")


UNSLOTH_BACKWARD_SRC = ("unsloth/kernels/fast_lora.py LoRA_MLP.backward at e3162dc5 (DW = matmul_lora(dY, downW.t(), "
                        "...): a new tokens x f tensor; dX written into X); unsloth_zoo gradient_checkpointing.py "
                        "Unsloth_Offloaded_Gradient_Checkpointer.backward ((output,) = forward_function(hidden_states); "
                        "torch.autograd.backward(output, dY))")


def unsloth_backward_working_set(arch: Architecture, regime: Regime) -> tuple[int, str]:
    """Bytes per token that one layer's backward adds, under Unsloth's checkpointer and kernels, to the
    layer's saved tensors at its peak, the start of ``LoRA_MLP.backward`` (every saved tensor is still
    alive): the down projection's input gradient ``DW`` (tokens x f, c bytes; SwiGLU's backward then
    overwrites DW, e and g in place), the layer output's gradient ``dY`` and the recomputed ``output``,
    which the checkpointer holds through ``torch.autograd.backward(output, dY)`` (tokens x h each).
    The attention's backward comes later, after the MLP's saved tensors (X, e, g: h + 2f) are freed,
    and needs less. Returns (bytes per token, the formula in words)."""
    h, f, c = arch.hidden_size, arch.intermediate_size, regime.compute
    return c * (f + 2 * h), f"DW (f={f:,}) + dY and the recomputed layer output (2 x h={h:,}), x {c} B"


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

    def layer_bytes(g: Architecture, input_requires_grad: bool) -> tuple[int, int, int, int, int]:
        """Per-token linear and quadratic bytes, the per-layer (weight-shaped) bytes, the layer's
        total, and the per-token bytes of ctx attributes (which checkpointing cannot drop)."""
        saved = layer_saved_tensors(g, regime, attention=attention, full=full, lora_targets=lora_targets,
                                    lora_rank=lora_rank, adapter_bytes=adapter_bytes, lora_dropout=lora_dropout,
                                    cpu_dropout=cpu_dropout, use_dora=use_dora, weight_cast=weight_cast,
                                    input_requires_grad=input_requires_grad, base_keeps_inputs=base_keeps_inputs,
                                    cpu_kernels=cpu_dropout, code=code, compiled=compiled)
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
        return sum(t.bytes_per_token for t in layer_saved_tensors(
            g, regime, attention=attention, full=full, lora_targets=lora_targets, lora_rank=lora_rank,
            adapter_bytes=adapter_bytes, lora_dropout=lora_dropout, cpu_dropout=cpu_dropout, use_dora=use_dora,
            weight_cast=weight_cast, base_keeps_inputs=base_keeps_inputs, cpu_kernels=cpu_dropout, code=code,
            compiled=compiled) if t.ctx_bytes_per_token)
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
