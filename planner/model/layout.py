"""What a model is made of: its layers' linear modules, its parameter counts and its Architecture.

:class:`Architecture` is the planner's record of a decoder-only transformer, read from a Hugging
Face ``config.json`` by :func:`planner.model.architecture.from_hf_config` (and the readers of
planner.model.families and planner.model.generic). Its methods count parameters exactly as PyTorch
counts ``sum(p.numel() for p in model.parameters())`` for the Transformers implementation, list
the ``nn.Linear`` modules of each kind of layer, and say what each layer caches.

Kept apart from the readers so that the readers of each family can build it without importing
one another (tests/test_layering.py refuses import cycles).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any


#: The fused query-key-value projections, by the names the Transformers code gives them (GPT-2 and
#: GPTBigCode ``c_attn``, Phi-3 ``qkv_proj``, Falcon, BLOOM and GPT-NeoX ``query_key_value``): the query
#: part has ``q_dim`` outputs, the key and value parts ``kv_dim`` each.
FUSED_QKV_MODULES = ("query_key_value", "qkv_proj", "c_attn")


@dataclass(frozen=True)
class LinearModule:
    """One kind of ``nn.Linear`` in a transformer layer, named as in the Transformers code.

    ``count`` is how many of them one layer holds (MoE experts hold ``num_local_experts``).
    ``in_features`` x ``out_features`` is the weight shape; ``bias`` whether it has a bias.
    ``part`` says what it is: 'attention', 'mlp' (a dense MLP or a shared expert: ``nn.Linear``
    modules), 'expert' (a mixture of experts' routed experts, which Transformers 5 stores as 3-D
    parameters, not modules) or 'router'. ``layers`` is how many of the model's layers hold it
    (:meth:`Architecture.linear_modules` sets it: every layer, or the dense or MoE layers of a
    model that mixes them).
    """

    name: str
    in_features: int
    out_features: int
    count: int = 1
    bias: bool = False
    part: str = "attention"  # "attention" | "mlp" | "expert" | "router"
    layers: int = 1

    @property
    def weight_params(self) -> int:
        """Weights of this module in one layer."""
        return self.in_features * self.out_features * self.count

    @property
    def bias_params(self) -> int:
        """Bias values of this module in one layer."""
        return self.out_features * self.count if self.bias else 0

    @property
    def total_weight_params(self) -> int:
        """Weights of this module over all the layers that hold it."""
        return self.weight_params * self.layers

    @property
    def total_bias_params(self) -> int:
        """Bias values of this module over all the layers that hold it."""
        return self.bias_params * self.layers


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts of a model, split the way memory accounting needs them.

    ``linear`` holds the weights of every ``nn.Linear`` inside the transformer layers (what
    weight-only quantization such as NF4, GPTQ or AWQ packs); ``embedding``, ``position_embedding``,
    ``lm_head``, ``norms`` and ``biases`` stay in 16-bit under those schemes. ``vision`` is a
    multimodal checkpoint's image encoder and projector, counted as 16-bit too.
    """

    embedding: int
    position_embedding: int
    lm_head: int
    linear: int
    biases: int
    norms: int
    router: int = 0
    vision: int = 0  # a multimodal checkpoint's vision tower and projector (Gemma 3), kept in 16-bit

    @property
    def total(self) -> int:
        return (self.embedding + self.position_embedding + self.lm_head + self.linear
                + self.biases + self.norms + self.router + self.vision)

    @property
    def not_quantized(self) -> int:
        """Parameters kept in 16-bit by weight-only quantization (embeddings, head, norms, biases)."""
        return self.total - self.linear


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer, in the terms of its Hugging Face config.

    Attributes use config.json names where one exists: ``hidden_size`` (h),
    ``num_hidden_layers`` (L), ``num_attention_heads`` (a), ``num_key_value_heads`` (kv),
    ``head_dim`` (d), ``intermediate_size`` (f, per expert for MoE), ``vocab_size`` (V).

    Layouts beyond the Llama one are flags: ``parallel_block`` (attention and MLP read the same
    normalised input and add into one residual: phi, GPT-J, Falcon, Cohere), ``post_norm`` (OLMo 2
    normalises each sublayer's output), ``norm_bias`` (whether a LayerNorm has a bias), the query
    and key norms ``qk_norm`` of kind ``qk_norm_kind``, multi-head latent attention (``kv_lora_rank``
    > 0: DeepSeek-V2/V3), shared experts and dense layers of a mixture of experts.
    """

    model_type: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    hidden_act: str = "silu"
    gated_mlp: bool = True
    norm: str = "rms"  # "rms" (weight only) or "layer" (mean and variance; bias unless norm_bias is False)
    norms_per_layer: int = 2
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    num_local_experts: int = 1
    num_experts_per_tok: int = 1
    sliding_window: int | None = None
    sliding_window_layers: int = 0  # how many of the L layers use the window
    learned_positions: int = 0  # rows of a learned position embedding (GPT-2 wpe)
    fused_qkv: bool = False
    fused_gate_up: bool = False
    vision_parameters: int = 0  # Gemma 3 (model_type gemma3): SigLIP vision tower and projector
    attention_sinks: bool = False  # GPT-OSS: one learned sink logit per head and layer
    attn_logit_softcapping: float | None = None  # Gemma 2: tanh cap on attention scores
    final_logit_softcapping: float | None = None  # Gemma 2: tanh cap on the output logits
    torch_dtype: str | None = None
    # ----- other layouts (planner.model.families) -----
    parallel_block: bool = False  # attention and MLP on one normalised input (phi, gptj, falcon, cohere)
    post_norm: bool = False  # OLMo 2: post_attention / post_feedforward norms on the sublayer outputs
    norm_bias: bool | None = None  # None: LayerNorm has a bias, RMSNorm none; Cohere's LayerNorm has none
    #: with qk_norm: 'head' (RMSNorm over head_dim, Qwen3 / Gemma 3), 'full' (RMSNorm over all heads'
    #: a x d and kv x d, OLMo 2), 'head_layer' (one LayerNorm over head_dim with bias, phi),
    #: 'per_head' (a LayerNorm weight per head, no bias, Cohere)
    qk_norm_kind: str = "head"
    lm_head_bias: bool = False  # phi, GPT-J
    embedding_norm: bool = False  # BLOOM: word_embeddings_layernorm after the embedding
    alibi: bool = False  # BLOOM: ALiBi position biases, no rotary embedding
    rotary_dim: int | None = None  # rotated dims of each head when fewer than head_dim (partial rotary)
    # multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank > 0
    q_lora_rank: int | None = None
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # mixtures of experts beyond the routed experts
    shared_expert_intermediate_size: int = 0  # width of the shared expert MLP (0: none)
    shared_expert_gate: bool = False  # Qwen2-MoE: sigmoid gate of the shared expert (h -> 1)
    dense_layers: int = 0  # layers of an MoE model with a dense MLP instead (DeepSeek first_k_dense_replace)
    dense_intermediate_size: int = 0  # their MLP width
    router_fp32: bool = False  # DeepSeek: gate.weight stays fp32 (_keep_in_fp32_modules_strict)
    router_bias_buffer: bool = False  # DeepSeek-V3: e_score_correction_bias, an fp32 buffer per MoE layer
    mtp_layers: int = 0  # DeepSeek-V3 checkpoints: num_nextn_predict_layers multi-token-prediction modules
    hf_kv_heads: int | None = None  # KV heads Transformers caches when not num_key_value_heads (Falcon-40B)
    logits_scale: float | None = None  # Granite (1 / logits_scaling), Cohere (logit_scale): logits multiplied
    residual_multiplier: float | None = None  # Granite: each sublayer output scaled before the residual add
    embedding_multiplier: float | None = None  # Granite: the embeddings scaled
    generic: bool = False  # read through Transformers on the meta device (planner.model.generic)
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # ----- derived sizes --------------------------------------------------------------
    @property
    def q_dim(self) -> int:
        """a * d: width of the query projection output (MLA: a x (qk_nope + qk_rope))."""
        return self.num_attention_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """kv * d: width of each of the key and value projection outputs (MLA: the key after kv_b_proj)."""
        return self.num_key_value_heads * self.head_dim

    @property
    def v_dim(self) -> int:
        """Width of the attention's value and output (a x v_head_dim for MLA, else kv_dim)."""
        return self.num_attention_heads * self.v_head_dim if self.is_mla else self.kv_dim

    @property
    def o_dim(self) -> int:
        """Input width of the attention output projection (a x v_head_dim for MLA, else a x d)."""
        return self.num_attention_heads * self.v_head_dim if self.is_mla else self.q_dim

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2 / V3): keys and values from a compressed latent."""
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.num_local_experts > 1

    @property
    def has_layer_norm_bias(self) -> bool:
        """Whether each norm has a bias (LayerNorm unless ``norm_bias`` is False)."""
        return self.norm == "layer" if self.norm_bias is None else self.norm_bias

    @property
    def hard_position_limit(self) -> bool:
        """True when no position at or past ``max_position_embeddings`` exists.

        A learned absolute position embedding (GPT-2's and GPTBigCode's ``wpe``, ``n_positions`` rows) has no row
        for position ``n_positions`` or later: Transformers indexes past the table (IndexError on
        the CPU, a device-side assert on CUDA). Rotary models (llama, mistral, mixtral, qwen2,
        qwen3, qwen3_moe, gemma, gemma2, phi3 and gpt_neox, whose ``rotary_pct`` rotates part of each head)
        and ALiBi (BLOOM) compute any position; past their maximum only the quality is not guaranteed.
        Source: Transformers ``modeling_gpt2.py`` (``self.wpe = nn.Embedding(config.max_position_embeddings,
        ...)``, ``position_embeds = self.wpe(position_ids)``).
        """
        return self.learned_positions > 0

    @property
    def sdpa_supported(self) -> bool:
        """Whether Transformers runs the model with ``attn_implementation="sdpa"``. Gemma 2 (its
        score softcapping), GPT-OSS (its attention sinks) and BLOOM (its ALiBi attention, written out
        in BloomAttention) declare no SDPA (modeling_gemma2.py, modeling_gpt_oss.py,
        modeling_bloom.py): they run eager, or flash_attention_2 / kernels."""
        return self.model_type not in ("gemma2", "gpt_oss", "bloom")

    @property
    def flash_supported(self) -> bool:
        """Whether Transformers runs the model with flash_attention_2: the multimodal Gemma 3 class
        (``Gemma3ForConditionalGeneration``) and BLOOM declare no flash attention."""
        return self.model_type not in ("gemma3", "bloom")

    @property
    def transformers_tp_plan(self) -> bool:
        """Whether Transformers can run the model tensor parallel (``tp_plan="auto"``): its config
        class declares a ``base_model_tp_plan``; GPT-2's, GPTBigCode's, GPT-J's, BLOOM's and Falcon's
        do not (Transformers 5.24)."""
        if self.generic:
            return bool(self.extra.get("_base_model_tp_plan"))
        return self.model_type not in ("gpt2", "gpt_bigcode", "gptj", "bloom", "falcon")

    @property
    def layer_norm(self) -> bool:
        """LayerNorm (saves its input, mean and rstd) rather than RMSNorm."""
        return self.norm == "layer"

    @property
    def softmax_in_score_dtype(self) -> bool:
        """Eager attention's softmax runs in the scores' dtype (GPT-2's ``eager_attention_forward``
        calls softmax without a dtype; Falcon's rotary path passes the hidden states' dtype); the
        others upcast to fp32 and cast the result back."""
        return self.model_type in ("gpt2", "falcon")

    @property
    def fp32_norm_product(self) -> bool:
        """Gemma's RMSNorm multiplies the fp32 normalised tensor by (1 + weight) in fp32
        (modeling_gemma.py GemmaRMSNorm); Llama's casts to the input dtype first."""
        return self.model_type.startswith("gemma")

    @property
    def clamped_swiglu(self) -> bool:
        """GPT-OSS's experts: gate and up interleaved in one projection, clamped, a sigmoid gate with
        alpha and up + 1 (modeling_gpt_oss.py GptOssExperts._apply_gate)."""
        return self.model_type == "gpt_oss"

    @property
    def position_encoding(self) -> str:
        """The position encoding in words: 'learned absolute', 'ALiBi' or 'rotary'."""
        return "learned absolute" if self.learned_positions else "ALiBi" if self.alibi else "rotary"

    # ----- layers and their modules -------------------------------------------------------
    def layer_groups(self) -> list[tuple[int, "Architecture"]]:
        """The model's layers as groups of identical layers: (how many, a uniform architecture of them).

        A model whose layers all have the same modules is one group, itself. A mixture of experts
        with dense layers (DeepSeek's first ``first_k_dense_replace`` layers, Qwen2-MoE's
        ``mlp_only_layers``) is two: the dense layers (a dense MLP of ``dense_intermediate_size``)
        and the MoE layers. Per-layer terms (saved activations, a layer's working set) are computed
        on each group's architecture.
        """
        cached = self.__dict__.get("_layer_groups")
        if cached is None:
            if not self.dense_layers or not self.is_moe:
                cached = ((self.num_hidden_layers, self),)
            else:
                moe_layers = self.num_hidden_layers - self.dense_layers
                dense = replace(self, num_hidden_layers=self.dense_layers, dense_layers=0, num_local_experts=1,
                                num_experts_per_tok=1, intermediate_size=self.dense_intermediate_size,
                                shared_expert_intermediate_size=0, shared_expert_gate=False,
                                router_bias_buffer=False, router_fp32=False)
                groups = [(self.dense_layers, dense)]
                if moe_layers:
                    groups.append((moe_layers, replace(self, num_hidden_layers=moe_layers, dense_layers=0)))
                cached = tuple(groups)
            object.__setattr__(self, "_layer_groups", cached)
        return list(cached)

    def linear_modules(self) -> list[LinearModule]:
        """The ``nn.Linear`` modules (and MoE expert tensors) of the model's layers, with their shapes
        and ``layers``, the number of layers holding each (a new list each call).

        For a model with dense and MoE layers the attention modules are listed once (all layers)
        and each group's MLP modules with that group's layer count."""
        cached = self.__dict__.get("_linear_modules")
        if cached is None:
            # The record is frozen and these depend only on its fields: keep them on the instance
            # (the memory model asks for them many times per estimate).
            groups = self.layer_groups()
            if self.generic:
                cached = tuple(self._layer_modules())
            elif len(groups) == 1:
                cached = tuple(replace(m, layers=self.num_hidden_layers) for m in self._layer_modules())
            else:
                mods = [replace(m, layers=self.num_hidden_layers) for m in groups[0][1]._layer_modules()
                        if m.part == "attention"]
                for n, g in groups:
                    mods += [replace(m, layers=n) for m in g._layer_modules() if m.part != "attention"]
                cached = tuple(mods)
            object.__setattr__(self, "_linear_modules", cached)
        return list(cached)

    def modules_of_layer(self, index: int) -> list[LinearModule]:
        """The modules of layer ``index`` (0-based), each once (``layers`` left at 1): a model with dense
        and MoE layers has its dense layers first (DeepSeek's first_k_dense_replace; Qwen2-MoE's
        dense layers are placed there too, which changes no count). A generic model's modules are
        those of its layer kinds in order (each kind's ``layers`` consecutive layers)."""
        if self.generic:
            out, by_kind = [], {}
            for m in self.linear_modules():
                by_kind.setdefault(m.layers, []).append(replace(m, layers=1))
            at = 0
            for n, mods in by_kind.items():
                if at <= index < at + n:
                    out = mods
                at += n
            return out or [replace(m, layers=1) for m in self.linear_modules()]
        at = 0
        for n, g in self.layer_groups():
            if at <= index < at + n:
                return g._layer_modules()
            at += n
        raise IndexError(f"layer {index} of {self.num_hidden_layers}")

    def _layer_modules(self) -> list[LinearModule]:
        """The modules of one layer of a uniform architecture (``layers`` left at 1)."""
        if self.generic:  # the modules planner.model.generic read from the model on the meta device
            return list(self.extra["_generic_modules"])
        h, f, e = self.hidden_size, self.intermediate_size, self.num_local_experts
        mods: list[LinearModule] = []
        mt = self.model_type
        if mt in ("gpt2", "gpt_bigcode"):
            # GPT-2's Conv1D and GPTBigCode's nn.Linear hold the same weights; GPTBigCode's c_attn
            # projects to the query and one shared key and value head (multi-query attention).
            mods += [
                LinearModule("c_attn", h, self.q_dim + 2 * self.kv_dim, bias=True),
                LinearModule("c_proj", h, h, bias=True),
                LinearModule("c_fc", h, f, bias=True, part="mlp"),
                LinearModule("c_proj", f, h, bias=True, part="mlp"),
            ]
            return mods
        if mt in ("gpt_neox", "bloom", "falcon"):
            # One fused query_key_value projection (Falcon's: the query heads and kv key and value
            # heads), dense, and a 4h MLP dense_h_to_4h / dense_4h_to_h (Falcon's ffn_hidden_size).
            b = self.qkv_bias
            mods += [
                LinearModule("query_key_value", h, self.q_dim + 2 * self.kv_dim, bias=b),
                LinearModule("dense", self.q_dim, h, bias=self.o_bias),
                LinearModule("dense_h_to_4h", h, f, bias=self.mlp_bias, part="mlp"),
                LinearModule("dense_4h_to_h", f, h, bias=self.mlp_bias, part="mlp"),
            ]
            return mods
        if self.is_mla:
            # DeepSeek's multi-head latent attention (modeling_deepseek_v2.py / _v3.py, DeepseekV3Attention):
            # the query through a low-rank pair with an RMSNorm between (or one q_proj when
            # q_lora_rank is null), the compressed KV latent plus the shared rotary key from
            # kv_a_proj_with_mqa, the per-head no-rope keys and values from kv_b_proj.
            a, nope, rope, v = self.num_attention_heads, self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim
            if self.q_lora_rank:
                mods += [LinearModule("q_a_proj", h, self.q_lora_rank, bias=self.qkv_bias),
                         LinearModule("q_b_proj", self.q_lora_rank, a * (nope + rope))]
            else:
                mods.append(LinearModule("q_proj", h, a * (nope + rope)))
            mods += [LinearModule("kv_a_proj_with_mqa", h, self.kv_lora_rank + rope, bias=self.qkv_bias),
                     LinearModule("kv_b_proj", self.kv_lora_rank, a * (nope + v)),
                     LinearModule("o_proj", a * v, h, bias=self.o_bias)]
        elif self.fused_qkv:
            mods.append(LinearModule("qkv_proj", h, self.q_dim + 2 * self.kv_dim, bias=self.qkv_bias))
        else:
            mods += [
                LinearModule("q_proj", h, self.q_dim, bias=self.qkv_bias),
                LinearModule("k_proj", h, self.kv_dim, bias=self.qkv_bias),
                LinearModule("v_proj", h, self.kv_dim, bias=self.qkv_bias),
            ]
        if not self.is_mla:
            mods.append(LinearModule("out_proj" if mt == "gptj" else "dense" if mt == "phi" else "o_proj",
                                     self.q_dim, h, bias=self.o_bias))
        if self.is_moe and mt == "gpt_oss":
            # GPT-OSS: a biased router and experts with biases, gate and up interleaved in one
            # projection (modeling_gpt_oss.py GptOssTopKRouter, GptOssExperts).
            mods += [
                LinearModule("router", h, e, bias=True, part="router"),
                LinearModule("gate_up_proj", h, 2 * f, count=e, bias=True, part="expert"),
                LinearModule("down_proj", f, h, count=e, bias=True, part="expert"),
            ]
        elif self.is_moe and (self.shared_expert_intermediate_size or mt in ("deepseek_v2", "deepseek_v3",
                                                                            "qwen2_moe")):
            # DeepSeek and Qwen2-MoE: the router ``gate`` (a parameter of E x h), the routed experts as
            # Transformers 5 stores them (experts.gate_up_proj E x 2f x h, experts.down_proj E x h x f:
            # DeepseekV3Experts, Qwen2MoeExperts) and a shared expert that every token runs, an
            # nn.Linear MLP (DeepSeek's shared_experts, moe_intermediate_size x n_shared_experts wide;
            # Qwen2-MoE's shared_expert with its sigmoid shared_expert_gate, h -> 1).
            mods += [
                LinearModule("gate", h, e, part="router"),
                LinearModule("experts.gate_up_proj", h, 2 * f, count=e, part="expert"),
                LinearModule("experts.down_proj", f, h, count=e, part="expert"),
            ]
            sf = self.shared_expert_intermediate_size
            if sf:
                mods += [
                    LinearModule("gate_proj", h, sf, bias=self.mlp_bias, part="mlp"),
                    LinearModule("up_proj", h, sf, bias=self.mlp_bias, part="mlp"),
                    LinearModule("down_proj", sf, h, bias=self.mlp_bias, part="mlp"),
                ]
            if self.shared_expert_gate:
                mods.append(LinearModule("shared_expert_gate", h, 1, part="mlp"))
        elif self.is_moe:
            # Each expert is a gated MLP; the router is ``gate``. Mixtral names the expert
            # projections w1 (gate), w3 (up) and w2 (down), Qwen3-MoE gate_proj, up_proj and
            # down_proj (Transformers 4.x module names, which peft's target_modules use).
            gate, up, down = ("w1", "w3", "w2") if mt == "mixtral" else ("gate_proj", "up_proj", "down_proj")
            mods += [
                LinearModule("gate", h, e, part="router"),
                LinearModule(gate, h, f, count=e, part="expert"),
                LinearModule(down, f, h, count=e, part="expert"),
                LinearModule(up, h, f, count=e, part="expert"),
            ]
        elif mt in ("phi", "gptj"):
            first, second = ("fc1", "fc2") if mt == "phi" else ("fc_in", "fc_out")
            mods += [
                LinearModule(first, h, f, bias=self.mlp_bias, part="mlp"),
                LinearModule(second, f, h, bias=self.mlp_bias, part="mlp"),
            ]
        elif mt == "starcoder2":
            mods += [
                LinearModule("c_fc", h, f, bias=self.mlp_bias, part="mlp"),
                LinearModule("c_proj", f, h, bias=self.mlp_bias, part="mlp"),
            ]
        elif self.fused_gate_up:
            mods += [
                LinearModule("gate_up_proj", h, 2 * f, bias=self.mlp_bias, part="mlp"),
                LinearModule("down_proj", f, h, bias=self.mlp_bias, part="mlp"),
            ]
        elif self.gated_mlp:
            mods += [
                LinearModule("gate_proj", h, f, bias=self.mlp_bias, part="mlp"),
                LinearModule("up_proj", h, f, bias=self.mlp_bias, part="mlp"),
                LinearModule("down_proj", f, h, bias=self.mlp_bias, part="mlp"),
            ]
        else:
            mods += [
                LinearModule("up_proj", h, f, bias=self.mlp_bias, part="mlp"),
                LinearModule("down_proj", f, h, bias=self.mlp_bias, part="mlp"),
            ]
        return mods

    def norm_tensors(self) -> list[tuple[int, int]]:
        """The model's norm parameters as (values per tensor, how many tensors): the layer norms,
        the final norm, BLOOM's embedding norm, the query and key norms and MLA's latent norms; a
        LayerNorm's weight and bias are two tensors. GPT-OSS's attention sinks (one vector per layer)
        are counted here too."""
        if self.generic:
            return list(self.extra["_generic_norm_tensors"])
        h, L = self.hidden_size, self.num_hidden_layers
        per = 2 if self.has_layer_norm_bias else 1
        out = [(h, (self.norms_per_layer * L + 1 + (1 if self.embedding_norm else 0)) * per)]
        if self.qk_norm:
            a, kv, d = self.num_attention_heads, self.num_key_value_heads, self.head_dim
            if self.qk_norm_kind == "full":
                out += [(a * d, L), (kv * d, L)]
            elif self.qk_norm_kind == "per_head":
                out += [(a * d, L), (kv * d, L)]
            elif self.qk_norm_kind == "head_layer":
                out.append((d, 4 * L))  # q_layernorm and k_layernorm, weight and bias each
            else:
                out.append((d, 2 * L))
        if self.is_mla:
            if self.q_lora_rank:
                out.append((self.q_lora_rank, L))
            out.append((self.kv_lora_rank, L))
        if self.attention_sinks:
            out.append((self.num_attention_heads, L))
        return out

    def param_counts(self) -> ParamCounts:
        """Exact parameter counts as PyTorch's ``model.parameters()`` would give them."""
        cached = self.__dict__.get("_param_counts")
        if cached is None:
            cached = self._param_counts()
            object.__setattr__(self, "_param_counts", cached)
        return cached

    def _param_counts(self) -> ParamCounts:
        if self.generic:  # the split planner.model.generic read from the model on the meta device
            return self.extra["_generic_counts"]
        h = self.hidden_size
        mods = self.linear_modules()
        linear = sum(m.total_weight_params for m in mods if m.part != "router")
        router = sum(m.total_weight_params for m in mods if m.part == "router")
        biases = sum(m.total_bias_params for m in mods) + (self.vocab_size if self.lm_head_bias else 0)
        norms = sum(size * n for size, n in self.norm_tensors())
        embedding = self.vocab_size * h
        lm_head = 0 if self.tie_word_embeddings else self.vocab_size * h
        return ParamCounts(
            embedding=embedding,
            position_embedding=self.learned_positions * h,
            lm_head=lm_head,
            linear=linear,
            biases=biases,
            norms=norms,
            router=router,
            vision=self.vision_parameters,
        )

    @property
    def parameters(self) -> int:
        """Total parameter count (tied embeddings counted once)."""
        return self.param_counts().total

    def layer_parameters(self) -> int:
        """Parameters of one layer of a uniform architecture: its modules with their biases, its norms
        (``norms_per_layer``, the query and key norms, MLA's latent norms) and GPT-OSS's sinks."""
        if self.generic:
            return int(self.extra["_generic_largest_layer"])
        mods = self._layer_modules()
        n = sum(m.weight_params + m.bias_params for m in mods)
        h, L = self.hidden_size, self.num_hidden_layers
        per_norm = 2 * h if self.has_layer_norm_bias else h
        norms = sum(size * count for size, count in self.norm_tensors())
        # norm_tensors counts the final (and BLOOM's embedding) norm once for the model: not a layer's
        outside = (1 + (1 if self.embedding_norm else 0)) * per_norm
        return n + (norms - outside) // L

    @property
    def largest_layer_parameters(self) -> int:
        """Parameters of the largest transformer layer (its modules, biases and norms)."""
        return max(g.layer_parameters() for _, g in self.layer_groups())

    @property
    def buffer_bytes(self) -> int:
        """Bytes of non-parameter buffers Transformers keeps on the GPU beside the weights.

        GPTBigCode registers a ``max_position_embeddings``-square causal mask of bools
        (modeling_gpt_bigcode.py ``self.bias = nn.Buffer(torch.tril(torch.ones((n, n), dtype=torch.bool)))``):
        64 MiB for StarCoder's 8,192 positions. DeepSeek-V3's router keeps ``e_score_correction_bias``,
        an fp32 buffer of one value per routed expert in every MoE layer (modeling_deepseek_v3.py
        DeepseekV3TopkRouter; kept fp32 by ``_keep_in_fp32_modules_strict``). Other models' buffers
        (rotary inverse frequencies) are a few KB and not counted. vLLM's implementations keep no such mask.
        """
        if self.model_type == "gpt_bigcode":
            return self.max_position_embeddings ** 2
        if self.router_bias_buffer:
            return 4 * self.num_local_experts * (self.num_hidden_layers - self.dense_layers)
        return 0

    @property
    def expert_parameters(self) -> int:
        """Weights of the MoE routed experts, all layers (0 for a dense model); biases not included."""
        if not self.is_moe:
            return 0
        return sum(m.total_weight_params for m in self.linear_modules() if m.part == "expert")

    @property
    def active_parameters(self) -> int:
        """Parameters used per token: MoE layers run ``num_experts_per_tok`` of their routed experts
        (shared experts and dense layers always run)."""
        if not self.is_moe:
            return self.parameters
        pc = self.param_counts()
        expert = self.expert_parameters
        inactive = expert * (self.num_local_experts - self.num_experts_per_tok) // self.num_local_experts
        return pc.total - inactive

    @property
    def mtp_parameters(self) -> int:
        """Parameters of the multi-token-prediction modules a DeepSeek-V3 checkpoint ships
        (``num_nextn_predict_layers``, the checkpoint's ``model.layers.61`` for V3), which are not
        part of :attr:`parameters`: Transformers' DeepseekV3ForCausalLM ignores them on load
        (``_keys_to_ignore_on_load_unexpected``) and builds them only for ``generate(use_mtp=True)``
        (modeling_layers.py MtpLayer: enorm, hnorm, eh_proj 2h -> h, one MoE decoder layer and a
        post norm; the embedding and head are the main model's), and vLLM's main model skips them
        (they load only as the ``deepseek_mtp`` speculative decoder). The checkpoint files also hold
        a copy of the embedding and the head per module (:attr:`mtp_checkpoint_copies`).
        """
        if not self.mtp_layers:
            return 0
        h = self.hidden_size
        moe = self.layer_groups()[-1][1]
        return self.mtp_layers * (moe.layer_parameters() + 3 * h + 2 * h * h)

    @property
    def mtp_checkpoint_copies(self) -> int:
        """Values of the embedding and head copies the checkpoint stores with its MTP modules
        (``model.layers.61.embed_tokens`` and ``shared_head.head`` in DeepSeek-V3's files)."""
        return self.mtp_layers * 2 * self.vocab_size * self.hidden_size

    # ----- the KV cache -----------------------------------------------------------------
    @property
    def kv_cache_layers(self) -> int:
        """Layers that keep keys and values (all of them, but for a generic model with layers of
        another kind, such as state-space layers: the cache layers Transformers creates)."""
        if self.generic:
            return int(self.extra.get("_kv_layers", self.num_hidden_layers))
        return self.num_hidden_layers

    def kv_values_per_token_layer(self, engine: str = "hf", tp: int = 1) -> int:
        """Values one layer caches per token on one GPU: K and V of the KV heads on this GPU.

        MLA caches the latent instead, ``kv_lora_rank + qk_rope_head_dim`` values, replicated on every
        tensor-parallel rank: vLLM and SGLang do (vLLM MLA attention, ``MLACommonImpl``; DeepSeek-V3 in
        bf16: 61 x 576 x 2 B = 70,272 B per token), and so does Transformers 5 (DeepseekV3Attention
        updates the cache with the normalised ``kv_nope`` latent and the rotated ``k_rot``, each one
        head wide, before ``expand_kv``). Transformers' Falcon with the new decoder architecture
        (Falcon-40B/180B) broadcasts its kv heads to every query head before caching
        (modeling_falcon.py ``_split_heads``, ``num_kv_heads = self.num_heads``), so under engine 'hf'
        it caches a heads; vLLM caches the kv heads.
        """
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        if self.generic:
            kv = self.num_key_value_heads
            return int(self.extra["_kv_values"]) * max(1, kv // tp) // kv
        kvh = self.num_key_value_heads
        if engine == "hf" and self.hf_kv_heads:
            kvh = self.hf_kv_heads
        return 2 * max(1, kvh // tp) * self.head_dim
