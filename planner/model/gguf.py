"""GGUF weights: ggml's storage types and the per-tensor mixes of llama.cpp's quantization presets.

llama.cpp (and Ollama, which runs it) loads a model from one GGUF file whose tensors each have a
ggml type. A type stores blocks of ``block`` consecutive values of a row in ``type_size`` bytes,
so a row of ``n`` values takes ``n / block x type_size`` bytes and ``n`` must be a multiple of the
block. The table :data:`GGML_TYPES` is ggml's ``type_traits`` (``blck_size``, ``type_size`` =
``sizeof(block_...)``), ggml/src/ggml.c and the block structs of ggml/src/ggml-common.h, read at
ggml-org/llama.cpp commit 00bdaa10 (ggml.c) and 01243c58 (ggml-common.h); the same in the llama.cpp
vendored by llama-cpp-python 0.3.36 (commit 0c1e5709).

A *preset* (``llama-quantize model.gguf out.gguf Q4_K_M``) is not one type: llama.cpp's
``llama_tensor_get_type`` (src/llama-quant.cpp, ggml-org/llama.cpp commit 007dbbf3, same rules at
0c1e5709) picks a type per tensor from the preset's default type, the tensor's role and layer:

- only tensors of 2 or more dimensions whose name ends in ``weight`` are quantized, and not the
  norms (``*_norm.weight``), the MoE router (``ffn_gate_inp``) or learned position embeddings; those
  keep the type the converter wrote: F32 for every 1-D tensor (norms, biases), the router and
  position embeddings (convert_hf_to_gguf.py, ``prepare_tensors``), the float type (F16 by
  default) for the rest.
- ``output.weight`` (or the token embeddings of a model with tied embeddings) gets Q6_K under
  every K-quant and most IQ presets (Q5_K under the 1- and 2-bit IQ presets, Q8_0 under Q8_0 and
  MXFP4_MOE, or when its rows are not a multiple of the default type's block).
- ``attn_v`` (and fused ``attn_qkv``) and ``ffn_down`` get more bits in some layers:
  Q4_K_M and Q5_K_M give Q6_K to layer i of n when ``use_more_bits(i, n)``: i < n/8, i >= 7n/8,
  or (i - n/8) mod 3 == 2; Q3_K_M, Q3_K_L, Q4_K_S, Q2_K and the IQ presets have their own rules,
  some depending on grouped-query attention (n_head / n_head_kv >= 4), 8-expert models
  (Mixtral) and Llama 70B (80 layers with GQA).
- a tensor whose rows are not a multiple of 256 cannot take a 256-block type and falls back
  (``tensor_type_fallback``): IQ types to IQ4_NL, Q2_K/Q3_K/TQ to Q4_0, Q4_K to Q5_0, Q5_K to Q5_1,
  Q6_K to Q8_0, and to F16 when the row is not a multiple of 32 either.

:func:`gguf_tensors` lays an :class:`~planner.model.architecture.Architecture` out as the GGUF
converter names its tensors, and :func:`tensor_types` applies a preset to it. The size llama.cpp
prints as "model size" (``llm_load_print_meta`` / ``print_info: file size``) is the sum of the
tensors' bytes; the file adds its metadata and 32-byte alignment of each tensor. A multimodal
checkpoint's vision tower is not in the model GGUF (llama.cpp keeps it in a separate mmproj file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from planner.model.architecture import Architecture


@dataclass(frozen=True)
class GgmlType:
    """One ggml storage type: ``block`` values of a row are stored in ``type_size`` bytes."""

    name: str
    block: int
    type_size: int

    @property
    def bits_per_weight(self) -> float:
        """8 x type_size / block (Q4_K: 8 x 144 / 256 = 4.5)."""
        return 8 * self.type_size / self.block

    def row_bytes(self, n: int) -> int:
        """Bytes of a row of ``n`` values (``ggml_row_size``).

        Raises:
            ValueError: ``n`` is not a multiple of the block.
        """
        if n % self.block:
            raise ValueError(f"a row of {n} values is not a multiple of {self.name}'s block of {self.block}")
        return n // self.block * self.type_size


def _t(name: str, block: int, size: int) -> tuple[str, GgmlType]:
    return name, GgmlType(name, block, size)


#: ggml's type table (ggml.c ``type_traits``; sizes are the ggml-common.h block structs, where
#: ggml_half is 2 B): name -> type. QK_K = 256.
GGML_TYPES: dict[str, GgmlType] = dict([
    _t("F32", 1, 4), _t("F16", 1, 2), _t("BF16", 1, 2),
    _t("Q4_0", 32, 18),     # d + 16 B of nibbles
    _t("Q4_1", 32, 20),     # d, m + 16 B
    _t("Q5_0", 32, 22),     # d + 4 B high bits + 16 B
    _t("Q5_1", 32, 24),     # d, m + 4 B + 16 B
    _t("Q8_0", 32, 34),     # d + 32 int8
    _t("Q8_1", 32, 36),     # d, s + 32 int8 (activations only)
    _t("MXFP4", 32, 17),    # E8M0 scale + 16 B of FP4 pairs
    _t("Q2_K", 256, 84),    # 16 B scales + 64 B quants + d, dmin
    _t("Q3_K", 256, 110),   # 32 B hmask + 64 B quants + 12 B scales + d
    _t("Q4_K", 256, 144),   # d, dmin + 12 B scales + 128 B quants
    _t("Q5_K", 256, 176),   # d, dmin + 12 B scales + 32 B high bits + 128 B
    _t("Q6_K", 256, 210),   # 128 B low + 64 B high + 16 B scales + d
    _t("Q8_K", 256, 292),   # fp32 d + 256 int8 + 16 int16 sums (dot products only)
    _t("IQ1_S", 256, 50),   # d + 32 B qs + 16 B qh
    _t("IQ1_M", 256, 56),   # 32 B qs + 16 B qh + 8 B scales
    _t("IQ2_XXS", 256, 66),  # d + 64 B
    _t("IQ2_XS", 256, 74),  # d + 64 B + 8 B scales
    _t("IQ2_S", 256, 82),   # d + 64 B qs + 8 B qh + 8 B scales
    _t("IQ3_XXS", 256, 98),  # d + 96 B
    _t("IQ3_S", 256, 110),  # d + 64 B qs + 8 B qh + 32 B signs + 4 B scales
    _t("IQ4_NL", 32, 18),   # d + 16 B
    _t("IQ4_XS", 256, 136),  # d + 2 B scales_h + 4 B scales_l + 128 B
    _t("TQ1_0", 256, 54),   # 48 B base-3 + 4 B + d
    _t("TQ2_0", 256, 66),   # 64 B + d
])


#: llama-quantize presets (``llama_ftype``) and their default tensor type
#: (src/llama-quant.cpp ``llama_ftype_get_default_type``). F32, F16 and BF16 are what
#: convert_hf_to_gguf.py writes (``--outtype``); every other preset is llama-quantize's.
PRESETS: dict[str, str] = {
    "F32": "F32", "F16": "F16", "BF16": "BF16",
    "Q8_0": "Q8_0", "Q4_0": "Q4_0", "Q4_1": "Q4_1", "Q5_0": "Q5_0", "Q5_1": "Q5_1",
    "Q2_K": "Q2_K", "Q2_K_S": "Q2_K",
    "Q3_K_S": "Q3_K", "Q3_K_M": "Q3_K", "Q3_K_L": "Q3_K",
    "Q4_K_S": "Q4_K", "Q4_K_M": "Q4_K",
    "Q5_K_S": "Q5_K", "Q5_K_M": "Q5_K",
    "Q6_K": "Q6_K",
    "IQ1_S": "IQ1_S", "IQ1_M": "IQ1_M",
    "IQ2_XXS": "IQ2_XXS", "IQ2_XS": "IQ2_XS", "IQ2_S": "IQ2_XS", "IQ2_M": "IQ2_S",
    "IQ3_XXS": "IQ3_XXS", "IQ3_XS": "IQ3_S", "IQ3_S": "IQ3_S", "IQ3_M": "IQ3_S",
    "IQ4_NL": "IQ4_NL", "IQ4_XS": "IQ4_XS",
    "TQ1_0": "TQ1_0", "TQ2_0": "TQ2_0",
    "MXFP4_MOE": "MXFP4",
}

#: ggml types llama-quantize writes only with an importance matrix (src/llama-quant.cpp
#: ``tensor_requires_imatrix``, ggml-org/llama.cpp commit 007dbbf3): without one it stops with "this
#: quantization requires an importance matrix!" naming the first such tensor. Q2_K needs one only in
#: a Q2_K_S file; ``token_embd.weight`` and ``output.weight`` never do.
IMATRIX_TYPES = frozenset({"IQ3_XXS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_M", "IQ1_S"})

#: Presets whose tensors include :data:`IMATRIX_TYPES` (or Q2_K under Q2_K_S) on a model with rows of a
#: multiple of 256: IQ1_S/M, IQ2_XXS/XS/S/M, IQ3_XXS and IQ3_XS (its attn_q/attn_k and middle
#: ffn_gate/ffn_up are IQ3_XXS), Q2_K_S. Sized as made with one unless told otherwise;
#: :func:`imatrix_required` says, per model, whether one is needed.
IMATRIX_REQUIRED = frozenset({"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS",
                              "Q2_K_S"})

#: The 1- and 2-bit IQ presets that share one branch of llama_tensor_get_type.
_LOW_IQ = frozenset({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})

#: Fallbacks for a row that is not a multiple of the type's block (``tensor_type_fallback``).
_FALLBACK = {
    **{t: "IQ4_NL" for t in ("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS")},
    **{t: "Q4_0" for t in ("Q2_K", "Q3_K", "TQ1_0", "TQ2_0")},
    "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0",
}

#: Tensor roles llama-quantize tells apart (``tensor_category``).
TOKEN_EMBD, OUTPUT, ATTN_Q, ATTN_K, ATTN_V, ATTN_QKV, ATTN_KV_B, ATTN_OUTPUT = (
    "token_embd", "output", "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_kv_b", "attn_output")
FFN_GATE, FFN_UP, FFN_DOWN, OTHER = "ffn_gate", "ffn_up", "ffn_down", "other"
_ATTN_V_LIKE = (ATTN_V, ATTN_QKV, ATTN_KV_B)


def preset_name(value: str) -> str | None:
    """The preset ``value`` names, case-insensitive ('q4_k_m' -> 'Q4_K_M'); None when it names none."""
    v = value.strip().upper()
    return v if v in PRESETS else None


@dataclass(frozen=True)
class GgufTensor:
    """One tensor of a GGUF file, as llama-quantize sees it.

    Attributes:
        name: GGUF name ('blk.3.attn_v.weight', 'output.weight').
        role: the llama-quantize category (:data:`ATTN_V`, :data:`FFN_DOWN`, ...; 'norm', 'bias',
            'router', 'position' and 'rope' for tensors it never quantizes).
        layer: the block index, -1 for tensors outside the blocks.
        ne0: values per row (the input features of a linear layer).
        rows: rows per matrix (output features; 1 for a 1-D tensor).
        experts: matrices stacked in the tensor (MoE expert tensors; 1 otherwise).
        quantizable: llama-quantize may change its type (2-D or more, a weight, not a norm, router
            or position embedding).
        source: the type the converter wrote: 'F32', 'float' (the file's float type) or 'MXFP4' (the
            experts of an MXFP4 checkpoint, written as they are).
    """

    name: str
    role: str
    layer: int
    ne0: int
    rows: int = 1
    experts: int = 1
    quantizable: bool = True
    source: str = "float"

    @property
    def values(self) -> int:
        return self.ne0 * self.rows * self.experts

    def bytes_as(self, type_name: str) -> int:
        """Bytes of the tensor stored as ``type_name`` (rows x experts x row bytes)."""
        return self.rows * self.experts * GGML_TYPES[type_name].row_bytes(self.ne0)


#: Transformers module names -> GGUF tensor roles (convert_hf_to_gguf.py / gguf-py tensor_mapping.py).
_ROLE = {
    "q_proj": ATTN_Q, "k_proj": ATTN_K, "v_proj": ATTN_V, "o_proj": ATTN_OUTPUT, "qkv_proj": ATTN_QKV,
    "query_key_value": ATTN_QKV, "c_attn": ATTN_QKV, "dense": ATTN_OUTPUT,
    "kv_b_proj": ATTN_KV_B,
    "gate_proj": FFN_GATE, "up_proj": FFN_UP, "down_proj": FFN_DOWN, "gate_up_proj": FFN_UP,
    "w1": FFN_GATE, "w3": FFN_UP, "w2": FFN_DOWN, "c_fc": FFN_UP,
    "dense_h_to_4h": FFN_UP, "dense_4h_to_h": FFN_DOWN,
    "out_proj": ATTN_OUTPUT, "fc1": FFN_UP, "fc2": FFN_DOWN, "fc_in": FFN_UP, "fc_out": FFN_DOWN,
    "experts.gate_up_proj": FFN_UP, "experts.down_proj": FFN_DOWN,
}


def _role(module: Any) -> str:
    if module.name == "c_proj":  # GPT-2: the attention's output projection and the MLP's down projection
        return FFN_DOWN if module.part == "mlp" else ATTN_OUTPUT
    return _ROLE.get(module.name, OTHER)


def _rope_factor_values(arch: Architecture) -> int:
    """F32 values of the rotary frequency factors the converter writes: Llama 3's ``rope_freqs``
    (head_dim / 2, rope_type llama3) and Phi-3's LongRoPE ``rope_factors_long``/``_short``."""
    rs = arch.extra.get("rope_scaling") or {}
    kind = str(rs.get("rope_type", rs.get("type", ""))).lower() if isinstance(rs, Mapping) else ""
    if kind == "llama3":
        return arch.head_dim // 2
    if kind in ("longrope", "su"):
        return 2 * (arch.head_dim // 2)
    return 0


def mxfp4_checkpoint(arch: Architecture) -> bool:
    """The checkpoint stores its MoE experts in MXFP4 (``quantization_config.quant_method: mxfp4``,
    as gpt-oss ships): convert_hf_to_gguf.py writes those expert tensors to the GGUF in MXFP4 as they
    are, whatever ``--outtype``, and only the other tensors in the float type (a bf16 conversion of
    gpt-oss-20b is 13.8 GB, not the 41.8 GB of an all-16-bit file: danbev/learning-ai
    notes/llama.cpp/gpt-oss.md, "n_tensors = 459, total_size = 13.8G")."""
    q = arch.extra.get("quantization_config")
    return arch.is_moe and isinstance(q, Mapping) and str(q.get("quant_method", "")).lower() == "mxfp4"


def gguf_tensors(arch: Architecture) -> list[GgufTensor]:
    """The tensors of ``arch``'s GGUF file, in llama-quantize's order (outside the blocks first, then
    block by block).

    Linear weights are 2-D [in_features, out_features] (MoE experts 3-D, one tensor per projection
    and layer; GPT-OSS's interleaved gate_up is split into gate and up, as the converter does);
    norms (counted from :meth:`Architecture.param_counts`), biases, the router and rotary factors
    are F32. Module names the table does not know are kept, as role 'other' (quantized with the
    preset's default type). The experts of an MXFP4 checkpoint (:func:`mxfp4_checkpoint`) have
    source 'MXFP4'.
    """
    expert_source = "MXFP4" if mxfp4_checkpoint(arch) else "float"
    h, L = arch.hidden_size, arch.num_hidden_layers
    out: list[GgufTensor] = [GgufTensor("token_embd.weight", TOKEN_EMBD, -1, h, arch.vocab_size)]
    if arch.learned_positions:
        out.append(GgufTensor("position_embd.weight", "position", -1, h, arch.learned_positions,
                              quantizable=False, source="F32"))
    rope = _rope_factor_values(arch)
    if rope:
        out.append(GgufTensor("rope_freqs.weight", "rope", -1, rope, quantizable=False, source="F32"))
    pc = arch.param_counts()
    norm_parts = ("weight", "bias") if arch.layer_norm else ("weight",)
    for part in norm_parts:
        out.append(GgufTensor(f"output_norm.{part}", "norm", -1, h, quantizable=False, source="F32"))
    if not arch.tie_word_embeddings:
        out.append(GgufTensor("output.weight", OUTPUT, -1, h, arch.vocab_size))
    # per block: the layer norms (weight, and bias for LayerNorm), q/k norms, GPT-OSS's sinks; any
    # other norm values the parameter count has go into one F32 tensor, so the bytes stay exact
    layer_norms = [(f"norm{k}.{part}", h) for k in range(arch.norms_per_layer) for part in norm_parts]
    if arch.qk_norm:
        layer_norms += [("attn_q_norm.weight", arch.head_dim), ("attn_k_norm.weight", arch.head_dim)]
    if arch.attention_sinks:
        layer_norms.append(("attn_sinks.weight", arch.num_attention_heads))
    rest = (pc.norms - h * len(norm_parts)) // L - sum(n for _, n in layer_norms)
    if rest > 0:
        layer_norms.append(("norm_other.weight", rest))
    for i in range(L):
        p = f"blk.{i}."
        for name, n in layer_norms:
            out.append(GgufTensor(p + name, "norm", i, n, quantizable=False, source="F32"))
        for m in arch.modules_of_layer(i):
            if m.part == "router":
                out.append(GgufTensor(p + "ffn_gate_inp.weight", "router", i, m.in_features, m.out_features,
                                      quantizable=False, source="F32"))
                if m.bias:
                    out.append(GgufTensor(p + "ffn_gate_inp.bias", "bias", i, m.out_features,
                                          quantizable=False, source="F32"))
                continue
            role = _role(m)
            stem = role if role != OTHER else m.name
            experts = m.count if m.count > 1 else 1
            suffix = "_exps" if experts > 1 else ""
            parts = [(role, m.out_features)]
            if (arch.clamped_swiglu and m.name == "gate_up_proj") or m.name == "experts.gate_up_proj":
                # GPT-OSS's interleaved gate and up, and the fused expert tensors of DeepSeek and
                # Qwen2-MoE: the converter writes ffn_gate_exps and ffn_up_exps
                parts = [(FFN_GATE, m.out_features // 2), (FFN_UP, m.out_features // 2)]
            for r, rows in parts:
                name = p + (r if role != OTHER else stem) + suffix
                out.append(GgufTensor(name + ".weight", r, i, m.in_features, rows, experts,
                                      source=expert_source if experts > 1 else "float"))
                if m.bias:
                    out.append(GgufTensor(name + ".bias", "bias", i, rows * experts, quantizable=False, source="F32"))
    return out


@dataclass(frozen=True)
class ModelFacts:
    """What llama_tensor_get_type reads of the model besides a tensor (``hparams``, ``model.type``)."""

    n_layer: int
    n_gqa: int  # n_head / n_head_kv (integer), 0 without KV heads
    n_expert: int  # 0 for a dense model
    is_70b: bool  # LLM_TYPE_70B: arch llama, 80 layers, n_head != n_head_kv
    falcon: bool
    tied: bool  # no output.weight: the token embeddings double as the output layer

    @staticmethod
    def of(arch: Architecture) -> "ModelFacts":
        kv = arch.num_key_value_heads
        llama_arch = arch.model_type in ("llama", "mistral", "mixtral")  # convert writes these as arch 'llama'
        return ModelFacts(
            n_layer=arch.num_hidden_layers,
            n_gqa=arch.num_attention_heads // kv if kv else 0,
            n_expert=arch.num_local_experts if arch.is_moe else 0,
            is_70b=llama_arch and arch.num_hidden_layers == 80 and arch.num_attention_heads != kv,
            falcon=arch.model_type == "falcon",
            tied=arch.tie_word_embeddings)


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama-quant.cpp's ``use_more_bits``: the first and last eighth of the layers and every third between."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


class _Counters:
    """The running indices llama-quantize keeps while it walks the tensors (``quantize_state_impl``)."""

    def __init__(self) -> None:
        self.attention_wv = 0
        self.ffn_down = 0
        self.ffn_gate = 0
        self.ffn_up = 0


#: The Q2_K mix of llama.cpp PR #2707 (commit bac66994, 2023-08-22), which builds up to b1792 wrote:
#: "mostly Q3_K except for tok_embeddings, attention.wq, attention.wk, which are Q2_K" (the commit
#: message), output.weight Q6_K. The ggml-org/ci logs list it tensor by tensor (build 1022,
#: open_llama_7b_v2: q2_K token_embd, attn_q, attn_k; q3_K attn_v, attn_output, ffn_gate, ffn_down,
#: ffn_up; q6_K output; build 1792, open_llama_3b_v2: 53 q2_K + 130 q3_K tensors).
LEGACY_Q2K_Q3K_ROLES = frozenset({ATTN_V, ATTN_QKV, ATTN_KV_B, ATTN_OUTPUT, FFN_GATE, FFN_UP, FFN_DOWN})


def _choose(preset: str, t: GgufTensor, facts: ModelFacts, n_attention_wv: int, c: _Counters,
            imatrix: bool, legacy_q2k: bool = False) -> str:
    """The type of one quantizable tensor before the row-length fallback (``llama_tensor_get_type_impl``);
    ``legacy_q2k``: Q2_K as builds before b1828 wrote it (:data:`LEGACY_Q2K_Q3K_ROLES`)."""
    new = PRESETS[preset]
    cat = t.role
    n_layer = facts.n_layer
    gqa4 = facts.n_gqa >= 4
    if legacy_q2k and preset == "Q2_K" and cat != OUTPUT and not (facts.tied and cat == TOKEN_EMBD):
        return "Q3_K" if cat in LEGACY_Q2K_Q3K_ROLES else new
    # MoE tensors carry their layer in their name; dense ones use the running counter (the same
    # number here, since tensors are visited block by block)
    def layer(counter: int) -> int:
        return t.layer if facts.n_expert > 1 else counter

    if cat == OUTPUT or (facts.tied and cat == TOKEN_EMBD):
        if preset == "MXFP4_MOE" or facts.falcon or t.ne0 % GGML_TYPES[new].block:
            return "Q8_0"
        if preset in ("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"):
            return "Q5_K"
        return new if new == "Q8_0" else "Q6_K"
    if preset == "MXFP4_MOE":
        return "MXFP4" if t.experts > 1 else "Q8_0"
    if cat == TOKEN_EMBD:
        if preset in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
            return "Q2_K"
        if preset in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
            return "IQ3_S"
        if preset in ("TQ1_0", "TQ2_0"):
            return "Q4_K"
        return new
    if preset in _LOW_IQ:
        if cat in _ATTN_V_LIKE:
            new = "Q4_K" if (gqa4 or facts.n_expert >= 4) else ("IQ3_S" if preset in ("IQ2_S", "IQ2_M") else "Q2_K")
            c.attention_wv += 1
        elif facts.n_expert == 8 and cat == ATTN_K:
            new = "Q4_K"
        elif cat == FFN_DOWN:
            if c.ffn_down < n_layer // 8:
                new = "IQ3_S" if preset in ("IQ2_S", "IQ2_M") else "Q2_K"
            c.ffn_down += 1
        elif cat == ATTN_OUTPUT:
            if facts.n_expert == 8:
                new = "Q5_K"
            elif preset in ("IQ1_S", "IQ1_M"):
                new = "IQ2_XXS"
            elif preset in ("IQ2_S", "IQ2_M"):
                new = "IQ3_S"
        return new
    if cat in _ATTN_V_LIKE:
        i, n = c.attention_wv, n_attention_wv
        if preset == "Q2_K":
            new = "Q4_K" if gqa4 else "Q3_K"
        elif preset == "Q2_K_S" and gqa4:
            new = "Q4_K"
        elif preset == "IQ3_XXS":
            new = "Q4_K" if gqa4 else ("IQ3_XXS" if imatrix else "IQ3_S")
        elif preset in ("IQ3_XS", "IQ3_S") and gqa4:
            new = "Q4_K"
        elif preset == "IQ3_M":
            new = "Q4_K"
        elif preset == "Q3_K_M":
            new = "Q5_K" if i < 2 else "Q4_K"
        elif preset == "Q3_K_L":
            new = "Q5_K"
        elif preset in ("IQ4_NL", "IQ4_XS") and gqa4:
            new = "Q5_K"
        elif preset in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
            new = "Q6_K"
        elif preset == "Q4_K_S" and i < 4:
            new = "Q5_K"
        if facts.is_70b and new in ("Q3_K", "Q4_K"):
            new = "Q5_K"
        if facts.n_expert == 8:
            new = "Q8_0"
        c.attention_wv += 1
        return new
    if cat == ATTN_K:
        if facts.n_expert == 8:
            return "Q8_0"
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(preset, new)
    if cat == ATTN_Q:
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(preset, new)
    if cat == FFN_DOWN:
        i, n = layer(c.ffn_down), n_layer
        more = use_more_bits(i, n)
        if preset == "Q2_K":
            new = "Q3_K"
        elif preset == "Q2_K_S":
            if i < n // 8:
                new = "Q4_K"
        elif preset == "IQ3_XXS" and not imatrix:
            new = "Q4_K" if i < n // 8 else "Q3_K"
        elif preset == "Q3_K_M":
            new = "Q5_K" if i < n // 16 else ("Q4_K" if (not facts.falcon or more) else "Q3_K")
        elif preset == "IQ3_M" and (i < n // 8 or (facts.n_expert == 8 and more)):
            new = "Q4_K"
        elif preset == "Q3_K_L":
            new = "Q4_K" if facts.falcon else "Q5_K"
        elif preset == "Q4_K_M":
            if facts.falcon:
                new = "Q6_K" if i < n // 16 else ("Q5_K" if more else "Q4_K")
            elif more:
                new = "Q6_K"
        elif i < n // 8 and preset in ("IQ4_NL", "IQ4_XS") and not imatrix:
            new = "Q5_K"
        elif preset == "Q5_K_M" and more:
            new = "Q6_K"
        elif preset == "Q4_K_S" and not facts.falcon and i < n // 8:
            new = "Q5_K"
        elif preset in ("Q4_0", "Q5_0") and imatrix and i < n // 8:
            new = "Q4_1" if preset == "Q4_0" else "Q5_1"
        c.ffn_down += 1
        return new
    if cat == ATTN_OUTPUT:
        if not facts.falcon:
            if facts.n_expert == 8:
                if preset in ("Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M",
                              "IQ3_S", "IQ3_M", "IQ4_XS"):
                    new = "Q5_K"
            else:
                new = {"Q2_K": "Q3_K", "IQ3_XXS": "IQ3_S", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K",
                       "IQ3_M": "Q4_K"}.get(preset, new)
        elif preset == "Q3_K_L":
            new = "Q4_K"
        return new
    if cat in (FFN_GATE, FFN_UP):
        i = layer(c.ffn_gate if cat == FFN_GATE else c.ffn_up)
        if preset == "IQ3_XS" and n_layer // 8 <= i < 7 * n_layer // 8:
            new = "IQ3_XXS"
        if cat == FFN_GATE:
            c.ffn_gate += 1
        else:
            c.ffn_up += 1
        return new
    return new


def _fallback(type_name: str, ne0: int, tensor: str) -> str:
    """``tensor_type_fallback``: a type whose block divides the row, else F16.

    Raises:
        ValueError: the type has no fallback (llama-quantize stops: 'no tensor type fallback').
    """
    if ne0 % GGML_TYPES[type_name].block == 0:
        return type_name
    if type_name not in _FALLBACK:
        raise ValueError(f"{tensor}: rows of {ne0} values are not a multiple of {type_name}'s block of "
                         f"{GGML_TYPES[type_name].block}, and llama-quantize has no fallback for {type_name}")
    fb = _FALLBACK[type_name]
    return fb if ne0 % GGML_TYPES[fb].block == 0 else "F16"


def tensor_types(arch: Architecture, preset: str, *, imatrix: bool | None = None,
                 float_type: str = "F16", legacy_q2k: bool = False) -> list[tuple[GgufTensor, str]]:
    """Each GGUF tensor of ``arch`` with the type the preset gives it.

    Args:
        preset: a key of :data:`PRESETS`.
        legacy_q2k: Q2_K as llama.cpp builds before b1828 quantized it (:data:`LEGACY_Q2K_Q3K_ROLES`;
            planner.workload.engine_releases). Other presets are unchanged.
        imatrix: the file was made with an importance matrix (``llama-quantize --imatrix``); None:
            with one for the presets that require it (:data:`IMATRIX_REQUIRED`), without for the rest.
            It changes the mix of IQ3_XXS, IQ4_NL, IQ4_XS, Q4_0 and Q5_0.
        float_type: the converted file's float type, kept by 2-D tensors llama-quantize does not touch.

    Expert tensors that the converter wrote in MXFP4 (an MXFP4 checkpoint such as gpt-oss) stay
    MXFP4 under every preset. llama-quantize would give them the preset's type, but an MXFP4 source
    is already quantized and it stops with "requantizing from type mxfp4 is disabled" unless
    ``--allow-requantize`` (src/llama-quant.cpp ``llama_model_quantize_impl``, commit 007dbbf3);
    under MXFP4_MOE the target is MXFP4 and nothing is requantized. The gpt-oss GGUFs people run
    keep the experts in MXFP4 (ggml-org's MXFP4_MOE, 12.1 GB for 20b; unsloth's F16 13.8 GB and
    Q4_K_M 11.6 GB, made with per-tensor type overrides), so the preset applies to the other tensors.

    Raises:
        KeyError: unknown preset.
        ValueError: a tensor whose rows no type of the preset can store (no fallback).
    """
    default = PRESETS[preset]
    facts = ModelFacts.of(arch)
    tensors = gguf_tensors(arch)
    imatrix = preset in IMATRIX_REQUIRED if imatrix is None else imatrix
    n_wv = sum(1 for t in tensors if t.role in _ATTN_V_LIKE)
    counters = _Counters()
    out: list[tuple[GgufTensor, str]] = []
    quantized_default = GGML_TYPES[default].block > 1
    for t in tensors:
        if not t.quantizable:
            out.append((t, "F32" if t.source == "F32" else float_type))
            continue
        if not quantized_default:
            out.append((t, "MXFP4" if t.source == "MXFP4" else default))
            continue
        chosen = _choose(preset, t, facts, n_wv, counters, imatrix, legacy_q2k)
        # an MXFP4 source tensor stays MXFP4 (see the docstring); the counters still advance
        out.append((t, "MXFP4" if t.source == "MXFP4" else _fallback(chosen, t.ne0, t.name)))
    return out


@dataclass(frozen=True)
class BlockBytes:
    """One block's GGUF tensors, in bytes.

    Attributes:
        total: every tensor of the block.
        sizes: each tensor's bytes, in file order (a GPU buffer pads each to its alignment).
        largest_attn, largest_other: the largest quantizable attention ('attn_*') tensor and the largest
            other quantizable tensor (0 if none).
        experts: the routed-expert tensors (``ffn_*_exps``).
    """

    total: int
    sizes: tuple[int, ...]
    largest_attn: int
    largest_other: int
    experts: int


@dataclass(frozen=True)
class GgufWeights:
    """A model's GGUF weights under one preset, in bytes.

    Attributes:
        preset: the llama-quantize preset.
        tensors: (tensor, type, bytes) for every tensor.
    """

    preset: str
    tensors: tuple[tuple[GgufTensor, str, int], ...]

    @cached_property
    def total(self) -> int:
        """Bytes of every tensor: llama.cpp's printed 'model size' / 'file size'."""
        return sum(b for _, _, b in self.tensors)

    @cached_property
    def values(self) -> int:
        """Values stored (llama.cpp's 'model params')."""
        return sum(t.values for t, _, _ in self.tensors)

    @property
    def bits_per_weight(self) -> float:
        """8 x bytes / values (llama.cpp's 'BPW')."""
        return 8 * self.total / self.values

    @cached_property
    def _bytes_by_layer(self) -> dict[int, int]:
        """Bytes of each block's tensors by layer index (-1: the tensors outside the blocks)."""
        out: dict[int, int] = {}
        for t, _, b in self.tensors:
            out[t.layer] = out.get(t.layer, 0) + b
        return out

    @cached_property
    def _outside_bytes_by_role(self) -> dict[str, int]:
        """Bytes of the tensors outside the blocks by role."""
        out: dict[str, int] = {}
        for t, _, b in self.tensors:
            if t.layer < 0:
                out[t.role] = out.get(t.role, 0) + b
        return out

    @cached_property
    def blocks(self) -> dict[int, "BlockBytes"]:
        """Per block (by layer index): what llama.cpp's placement, compute buffers and decode reads need of
        its tensors, summed once (:class:`BlockBytes`)."""
        out: dict[int, BlockBytes] = {}
        for t, _, b in self.tensors:
            if t.layer < 0:
                continue
            cur = out.get(t.layer) or BlockBytes(0, (), 0, 0, 0)
            attn = t.quantizable and t.role.startswith("attn")
            other = t.quantizable and not t.role.startswith("attn")
            out[t.layer] = BlockBytes(cur.total + b, cur.sizes + (b,), max(cur.largest_attn, b if attn else 0),
                                      max(cur.largest_other, b if other else 0),
                                      cur.experts + (b if t.experts > 1 else 0))
        return out

    def layer_bytes(self, layer: int) -> int:
        """Bytes of block ``layer``'s tensors."""
        return self._bytes_by_layer.get(layer, 0) if layer >= 0 else 0

    def role_bytes(self, role: str) -> int:
        """Bytes of the tensors of one role outside the blocks ('token_embd', 'output', 'norm', ...)."""
        return self._outside_bytes_by_role.get(role, 0)

    def type_counts(self) -> dict[str, int]:
        """How many tensors of each type, as llama.cpp's loader lists them ('type q4_K: 193 tensors');
        a block's norms are counted as the separate tensors they are."""
        out: dict[str, int] = {}
        for t, ty, _ in self.tensors:
            out[ty] = out.get(ty, 0) + 1
        return out

    def mix_text(self) -> str:
        """The bytes by type, largest first ('Q4_K 3.91 GiB, Q6_K 0.67 GiB, F32 0.00 GiB')."""
        return self._mix_text

    @cached_property
    def _mix_text(self) -> str:
        by: dict[str, int] = {}
        for _, ty, b in self.tensors:
            by[ty] = by.get(ty, 0) + b
        return ", ".join(f"{ty} {b / 2**30:,.2f} GiB" for ty, b in sorted(by.items(), key=lambda x: -x[1]))


def gguf_weights(arch: Architecture, preset: str, *, imatrix: bool | None = None,
                 legacy_q2k: bool = False) -> GgufWeights:
    """:func:`tensor_types` with each tensor's bytes (``legacy_q2k``: see there).

    Kept on ``arch`` by (preset, imatrix, legacy_q2k), as :meth:`Architecture.param_counts` keeps its
    counts: the result depends on nothing else, and the solver sizes one model under many placements
    (``gpu_layers: max`` on 1-8 GPUs is hundreds of variants of one file: 20-25 ms each for an
    80-layer model, most of a plan's time before).
    """
    memo = arch.__dict__.get("_gguf_weights")
    if memo is None:
        memo = {}
        object.__setattr__(arch, "_gguf_weights", memo)  # a frozen dataclass refuses setattr
    key = (preset, imatrix, legacy_q2k)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = GgufWeights(preset, tuple(
            (t, ty, t.bytes_as(ty)) for t, ty in tensor_types(arch, preset, imatrix=imatrix, legacy_q2k=legacy_q2k)))
    return hit


def imatrix_required(arch: Architecture, preset: str) -> tuple[str, str] | None:
    """The first tensor llama-quantize would refuse to write for ``preset`` without an importance
    matrix, as (tensor name, type), or None when the preset needs none on this model.

    The rule is llama-quant.cpp's ``tensor_requires_imatrix`` (commit 007dbbf3), applied to the
    types :func:`tensor_types` gives without an imatrix: a quantized tensor of a type in
    :data:`IMATRIX_TYPES`, or a Q2_K tensor of a Q2_K_S file, other than ``token_embd.weight`` and
    ``output.weight``. (``llama-quantize --dry-run`` only warns; a real run stops.)

    Raises:
        KeyError: unknown preset.
    """
    for t, ty in tensor_types(arch, preset, imatrix=False):
        if not t.quantizable or t.name in ("token_embd.weight", "output.weight"):
            continue
        if ty in IMATRIX_TYPES or (ty == "Q2_K" and preset == "Q2_K_S"):
            return t.name, ty
    return None
