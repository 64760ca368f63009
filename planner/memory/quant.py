"""Bytes of weights stored in a given format, quantization constants included.

Weight-only quantization packs the ``nn.Linear`` weights of the transformer layers; the
embeddings, the output head, norms and biases stay in 16-bit (bitsandbytes and the
GPTQ/AWQ integrations in Transformers skip ``lm_head`` and do not touch embeddings).

Sources:
- NF4 (QLoRA paper, Dettmers et al. 2023, section 3 "Double Quantization"): blocks of 64
  values, one fp32 absmax per block = 32/64 = 0.5 extra bits per parameter; with double
  quantization the absmax values are quantized to 8 bits in blocks of 256 with one fp32
  constant each: 8/64 + 32/(64*256) = 0.127 extra bits per parameter.
- GPTQ (Frantar et al. 2023) / AWQ (Lin et al. 2024) as packed by AutoGPTQ/AutoAWQ: 4-bit
  values packed in int32, per group of ``group_size`` input values and per output column one
  fp16 scale (16 bits) and one packed 4-bit zero point; GPTQ adds ``g_idx`` (one int32 per
  input feature).
- LLM.int8() (Dettmers et al. 2022, section 3): int8 weights plus one fp32 scale per output
  row (bitsandbytes ``SCB``).
- FP8 weights (vLLM ``quantization="fp8"``): one byte per value plus an fp32 scale per tensor.
- MXFP4 (OCP Microscaling Formats (MX) Specification v1.0, section 5.3): blocks of 32 FP4 (E2M1)
  values sharing one 8-bit E8M0 scale, 4.25 bits per value. gpt-oss checkpoints quantize only the
  MoE experts' weights this way; attention, router, embeddings and head stay bf16 (its config's
  ``quantization_config.modules_to_not_convert``; OpenAI's gpt-oss model card: 12.8 GiB and 60.8 GiB).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.model.architecture import Architecture, LinearModule
from planner.model.layout import FUSED_QKV_MODULES
from planner.model.quantization import KeptModules, WeightScheme


@dataclass(frozen=True)
class WeightBytes:
    """Weight storage of a model in one format.

    Attributes:
        packed: bytes of the quantized (or plain) linear weights.
        constants: bytes of scales, zero points, absmax and index tensors.
        unquantized: bytes of embeddings, output head, norms and biases (16-bit, or fp32 for fp32).
        formula: the arithmetic, for the breakdown.
    """

    packed: int
    constants: int
    unquantized: int
    formula: str

    @property
    def total(self) -> int:
        return self.packed + self.constants + self.unquantized


def nf4_constant_bits(double_quant: bool) -> float:
    """Extra bits per parameter for NF4 constants (QLoRA paper, section 3)."""
    return 8 / 64 + 32 / (64 * 256) if double_quant else 32 / 64


#: Projections whose input dimension is split under tensor parallelism (row-parallel): their bias
#: is kept whole on every rank (Megatron-LM RowParallelLinear; vLLM adds it on rank 0 only).
ROW_PARALLEL = frozenset({"o_proj", "c_proj", "dense", "down_proj", "dense_4h_to_h", "w2", "out_proj", "fc2", "fc_out",
                          "experts.down_proj"})
#: Projections every tensor-parallel rank keeps whole: MLA's down-projections to the latents
#: (vLLM ReplicatedLinear q_a_proj and kv_a_proj_with_mqa, vllm/model_executor/models/deepseek_v2.py)
#: and Qwen2-MoE's shared-expert gate (h -> 1).
REPLICATED = frozenset({"q_a_proj", "kv_a_proj_with_mqa", "shared_expert_gate"})
#: Fused query-key-value projections: the query part splits by heads, the key/value part by KV heads.
FUSED_QKV = frozenset(FUSED_QKV_MODULES)


def rank_shape(arch: Architecture, m: LinearModule, tp: int) -> tuple[int, int, int]:
    """(in_features, out_features, bias values) of one instance of module ``m`` on one
    tensor-parallel rank (rules of :func:`tp_linear_split`)."""
    from planner.memory.inference import kv_heads_per_gpu

    if tp == 1 or m.part == "router" or m.name in REPLICATED:
        return m.in_features, m.out_features, m.out_features if m.bias else 0
    if m.name in ROW_PARALLEL:
        return -(-m.in_features // tp), m.out_features, m.out_features if m.bias else 0
    kv_w = kv_heads_per_gpu(arch, tp) * arch.head_dim
    if m.name in ("k_proj", "v_proj") and not arch.is_mla:
        out = kv_w
    elif m.name in FUSED_QKV:
        out = -(-arch.q_dim // tp) + 2 * kv_w
    else:
        out = -(-m.out_features // tp)
    return m.in_features, out, out if m.bias else 0


def tp_linear_split(arch: Architecture, tp: int) -> tuple[int, int, int]:
    """Per tensor-parallel rank: (linear weights, router weights, biases), all layers.

    Column-parallel projections split their outputs t ways and row-parallel ones (``ROW_PARALLEL``)
    their inputs (Megatron-LM, Shoeybi et al. 2019, section 3); the key and value projections hold
    ``max(1, kv / t)`` KV heads, so with more ranks than KV heads each rank keeps a whole head
    (vLLM's QKVParallelLinear replicates them; GQA and multi-query models such as GPTBigCode);
    row-parallel biases, MoE routers and MLA's latent down-projections (vLLM ``ReplicatedLinear``)
    are whole on every rank.
    """
    pc = arch.param_counts()
    if tp == 1:
        return pc.linear, pc.router, pc.biases
    weights = router = biases = 0
    for m in arch.linear_modules():
        i, o, b = rank_shape(arch, m, tp)
        if m.part == "router":
            router += i * o * m.count * m.layers
        else:
            weights += i * o * m.count * m.layers
        biases += b * m.count * m.layers
    if arch.lm_head_bias:
        biases += -(-arch.vocab_size // tp)
    return weights, router, biases


def _module_paths(arch: Architecture, m: LinearModule, layer_index: int) -> str:
    """The module path of ``m`` in layer ``layer_index`` as Transformers checkpoints name it, for a
    scheme's ignore list (an expert is named by expert 0)."""
    base = f"model.layers.{layer_index}"
    if m.part == "attention":
        return f"{base}.self_attn.{m.name}"
    if m.part == "router":
        return f"{base}.mlp.{m.name}"
    if m.part == "expert":
        proj = m.name.rpartition(".")[2]
        return f"{base}.mlp.experts.0.{proj}"
    if arch.shared_expert_intermediate_size and arch.is_moe and m.name != "shared_expert_gate":
        return f"{base}.mlp.{'shared_expert' if arch.model_type == 'qwen2_moe' else 'shared_experts'}.{m.name}"
    return f"{base}.mlp.{m.name}"


def _placed(arch: Architecture) -> list[tuple[LinearModule, range]]:
    """(module, the layer indices holding it): attention in every layer, each group's MLP in its
    layers (DeepSeek's dense layers come first; a generic model's modules by their layer counts)."""
    placed: list[tuple[LinearModule, range]] = []
    if arch.generic or len(arch.layer_groups()) == 1:
        return [(m, range(m.layers)) for m in arch.linear_modules()]
    at = 0
    for k, (n, g) in enumerate(arch.layer_groups()):
        for m in g._layer_modules():
            if m.part == "attention":
                if k == 0:
                    placed.append((m, range(arch.num_hidden_layers)))
            else:
                placed.append((m, range(at, at + n)))
        at += n
    return placed


@dataclass(frozen=True)
class Kept:
    """The linear modules a checkpoint's list leaves 16-bit (:func:`kept_linear`).

    Attributes:
        values: their weight values per tensor-parallel rank.
        rows: their output rows, all ranks (per-row scales).
        inputs: their input features, all ranks (GPTQ's g_idx).
        tensors: how many weight tensors they are.
    """

    values: int = 0
    rows: int = 0
    inputs: int = 0
    tensors: int = 0


def kept_linear(arch: Architecture, keep: KeptModules | None, tp: int, parts: tuple[str, ...]) -> Kept:
    """The modules of ``parts`` ('attention', 'mlp', 'expert', 'param') that ``keep`` leaves unquantized,
    each named as Transformers checkpoints name it (``model.layers.3.mlp.up_proj``; an expert by expert 0;
    routers are never quantized and never counted). Kept modules load in the checkpoint's 16-bit dtype
    (Transformers skips their replacement: quantizers_utils ``should_convert_module``; optimum's GPTQ
    ``modules_in_block_to_quantize``)."""
    if keep is None:
        return Kept()
    values = rows = inputs = tensors = 0
    keeps = keep.matcher()
    for m, indices in _placed(arch):
        if m.part not in parts:
            continue
        n = sum(keeps(_module_paths(arch, m, k)) for k in indices) * m.count
        i, o, _ = rank_shape(arch, m, tp)
        values += i * o * n
        rows += m.out_features * n
        inputs += m.in_features * n
        tensors += n
    return Kept(values, rows, inputs, tensors)


def scheme_weight_bytes(arch: Architecture, scheme: WeightScheme, *, tp: int = 1, engine: str = "hf") -> WeightBytes:
    """Bytes of the weights per GPU of a checkpoint stored in ``scheme`` (planner.model.quantization).

    Every ``nn.Linear`` of the layers (MoE experts included) that the scheme's ``ignore`` list does
    not name stores ``bits`` per value (int32-packed for WNA16), plus its scales: one per tensor,
    per output row (channel), per group of ``group_size`` inputs in each row, or per
    ``block`` of rows x columns; plus zero points packed like the weights for an asymmetric scheme,
    one fp32 input scale for a static activation scheme, and WNA16's 2-value int64 ``weight_shape``.
    Routers stay 16-bit (vLLM builds them unquantized), as do ignored modules, embeddings, the head
    (vLLM quantizes only LinearBase layers; the head is an embedding), norms and biases. Under
    tensor parallelism each rank stores its slice and the scales of it.

    Sources: vLLM compressed_tensors schemes (module docstring of planner.model.quantization);
    DeepSeek-V3's fp8 checkpoints: ``weight_scale_inv`` per 128 x 128 block (its config's
    ``weight_block_size``; vLLM Fp8LinearMethod ``BlockQuantScaleParameter``).
    """
    pc = arch.param_counts()
    bits = scheme.bits
    packed = scheme_bytes = zero_bytes = extra_bytes = 0
    kept = 0  # 16-bit linear values (ignored modules, routers)
    biases = 0
    ignores = scheme.ignorer()
    for m, indices in _placed(arch):
        i, o, b = rank_shape(arch, m, tp)
        biases += b * m.count * len(indices)
        if m.part == "router":
            kept += i * o * m.count * len(indices)
            continue
        ignored = sum(ignores(_module_paths(arch, m, k)) for k in indices)
        quantized = (len(indices) - ignored) * m.count
        kept += i * o * m.count * ignored
        if not quantized:
            continue
        if scheme.packed:
            packed += quantized * o * -(-i * bits // 32) * 4
            extra_bytes += quantized * 16  # weight_shape: two int64
        else:
            packed += quantized * i * o * bits // 8
        if scheme.strategy == "tensor":
            scales = 1
        elif scheme.strategy == "channel":
            scales = o
        elif scheme.strategy == "group":
            scales = o * -(-i // scheme.group_size)
        else:
            b0, b1 = scheme.block
            scales = -(-o // b0) * -(-i // b1)
        scheme_bytes += quantized * scales * scheme.scale_bytes
        if not scheme.symmetric:
            zero_bytes += quantized * -(-scales * bits // 8)
        if scheme.static_input_scale:
            extra_bytes += quantized * 4
    if arch.lm_head_bias:
        biases += -(-arch.vocab_size // tp)
    big_rest = -(-(pc.embedding + pc.lm_head + pc.vision) // tp) + pc.position_embedding
    router_extra = sum(m.total_weight_params for m in arch.linear_modules() if m.part == "router") * 2 \
        if arch.router_fp32 and engine == "hf" else 0
    rest = big_rest + pc.norms + biases + kept
    per = f"per tensor-parallel rank (t={tp}): " if tp > 1 else ""
    consts = scheme_bytes + zero_bytes + extra_bytes
    what = "int32-packed " if scheme.packed else ""
    formula = (f"{per}{packed:,} B of {what}{bits}-bit linear weights + {scheme_bytes:,} B of "
               f"{scheme.scale_bytes}-byte scales ({scheme.strategy}"
               + (f" {scheme.group_size}" if scheme.strategy == "group" else "")
               + (f" {scheme.block[0]}x{scheme.block[1]}" if scheme.strategy == "block" and scheme.block else "")
               + ")" + (f" + {zero_bytes:,} B of zero points" if zero_bytes else "")
               + (f" + {extra_bytes:,} B of input scales and weight shapes" if extra_bytes else "")
               + f" + {rest:,} other params x 2 B" + (f" (incl. {kept:,} unquantized linear values)" if kept else "")
               + (f" + {router_extra:,} B (router kept fp32 by Transformers)" if router_extra else ""))
    return WeightBytes(packed, consts, rest * 2 + router_extra, f"{scheme.describe()}: {formula}")


def weight_bytes(arch: Architecture, fmt: str, *, group_size: int = 128, double_quant: bool = True,
                 tp: int = 1, unquantized_bytes: int = 2, engine: str = "hf",
                 scheme: WeightScheme | None = None, quantize_head: bool = False,
                 keep: KeptModules | None = None) -> WeightBytes:
    """Bytes of the model's weights per GPU in format ``fmt``.

    Args:
        arch: the model.
        fmt: 'fp32', 'fp16', 'bf16', 'fp8', 'int8', 'int4-gptq', 'int4-awq', 'nf4' or 'mxfp4'
            (MoE experts only).
        group_size: values per scale for GPTQ/AWQ (-1: one scale per output column).
        double_quant: NF4 double quantization.
        tp: tensor-parallel degree; linear weights, embeddings and head are split t ways, norms,
            a learned position table, row-parallel biases and MoE routers are replicated, and the
            key/value projections keep whole KV heads (:func:`tp_linear_split`).
        unquantized_bytes: bytes per parameter of what bitsandbytes (nf4, int8) leaves unquantized
            (embeddings, head, norms, biases): 2, or 4 after peft's ``prepare_model_for_kbit_training``.
        scheme: the checkpoint's storage scheme (planner.model.quantization): needed for
            'compressed-tensors', and for 'fp8' it replaces the per-tensor default with the
            checkpoint's scales (DeepSeek's 128 x 128 blocks, compressed-tensors' rows).
        engine: 'hf' keeps DeepSeek's router weights fp32 (``_keep_in_fp32_modules_strict =
            ["gate.weight", ...]``, modeling_deepseek_v3.py); vLLM's ``GateLinear`` keeps them in the
            model dtype.
        quantize_head: bitsandbytes (nf4, int8) quantizes the output head too (Lightning's
            ``BitsandbytesPrecision`` converts every ``nn.Linear``, as LitGPT uses it).
        keep: the modules the checkpoint's ``quantization_config`` leaves 16-bit (AWQ, FP8 and MXFP4
            ``modules_to_not_convert``, bitsandbytes ``llm_int8_skip_modules``, GPTQ
            ``modules_in_block_to_quantize``: planner.model.quantization.kept_modules), for
            'int4-gptq', 'int4-awq', 'nf4', 'int8', 'fp8' and 'mxfp4': their weights count as 16-bit
            values (:func:`kept_linear`).

    Raises:
        ValueError: unknown format (callers validate names first).
    """
    if fmt == "compressed-tensors" or (fmt == "fp8" and scheme is not None):
        if scheme is None:
            raise ValueError("compressed-tensors weights need the checkpoint's scheme")
        return scheme_weight_bytes(arch, scheme, tp=tp, engine=engine)
    pc = arch.param_counts()
    # Every count below is already per tensor-parallel rank; the formula says so instead of
    # dividing again (its numbers multiply and add up to the bytes).
    rank = f" per tensor-parallel rank (t={tp})" if tp > 1 else ""
    per = f"per tensor-parallel rank (t={tp}): " if tp > 1 else ""
    lin_w, router, biases = tp_linear_split(arch, tp)
    lin = lin_w + router
    # A multimodal checkpoint's vision tower (Gemma 3) loads with the model and stays 16-bit.
    # A learned position table is replicated on every rank (vLLM gpt2.py / gpt_bigcode.py: nn.Embedding).
    big_rest = -(-(pc.embedding + pc.lm_head + pc.vision) // tp) + pc.position_embedding
    small = pc.norms + biases
    rest = big_rest + small
    mods = arch.linear_modules()
    # DeepSeek's router stays fp32 in Transformers whatever the model's dtype.
    router_extra = router * 2 if arch.router_fp32 and engine == "hf" else 0
    router_text = (f" + {router:,} router params x 2 B more (gate.weight kept fp32 by Transformers)"
                   if router_extra else "")
    if fmt in ("fp32", "fp16", "bf16"):
        b = 4 if fmt == "fp32" else 2
        total_params = lin + rest
        extra = router_extra if b == 2 else 0
        return WeightBytes(lin * b, 0, rest * b + extra, f"{total_params:,} params{rank} x {b} B ({fmt})"
                           + (router_text if extra else ""))
    kept = kept_linear(arch, keep if fmt in ("int4-gptq", "int4-awq", "fp8") else None, tp,
                       ("attention", "mlp", "expert", "param"))
    kept_text = (f" (incl. {kept.values:,} linear values left 16-bit by quantization_config.{keep.key})"
                 if keep is not None and kept.values else "")
    if fmt == "fp8":
        n_tensors = sum(m.count * m.layers for m in mods) - kept.tensors
        consts = n_tensors * 4
        return WeightBytes(lin - kept.values, consts, (rest + kept.values) * 2 + router_extra,
                           f"{per}{lin - kept.values:,} linear params x 1 B + {n_tensors:,} fp32 scales x 4 B + "
                           f"{rest + kept.values:,} other params x 2 B" + kept_text + router_text)
    # bitsandbytes (int8, nf4) replaces nn.Linear modules only. Transformers 5 keeps a mixture of
    # experts' weights and its router as parameters of their own (MixtralExperts/TopKRouter,
    # Qwen3MoeExperts/TopKRouter, GptOssExperts/TopKRouter), so they load in 16-bit: only the
    # attention projections are quantized.
    other_params = sum(m.total_weight_params for m in mods if m.part == "param")  # a generic model's
    experts = -(-(arch.expert_parameters + other_params) // tp) + (router if arch.is_moe else 0)
    bnb_lin, bnb_rest = lin - experts, rest + experts
    if quantize_head and fmt in ("nf4", "int8") and pc.lm_head:
        head = -(-pc.lm_head // tp)
        bnb_lin, bnb_rest = bnb_lin + head, bnb_rest - head
    if fmt in ("nf4", "int8"):
        kept = kept_linear(arch, keep, tp, ("attention", "mlp"))
        kept_text = (f" (incl. {kept.values:,} linear values left 16-bit by quantization_config.{keep.key})"
                     if keep is not None and kept.values else "")
        bnb_lin, bnb_rest = bnb_lin - kept.values, bnb_rest + kept.values
    bnb_mods = bnb_linear_modules(arch)
    bnb_note = (f" (the {experts:,} MoE expert and router params are not quantized: parameters, not nn.Linear)"
                if experts else "")
    if fmt == "int8":
        rows = (sum(m.out_features * m.count * m.layers for m in bnb_mods) - kept.rows) // tp
        if quantize_head and pc.lm_head:
            rows += -(-arch.vocab_size // tp)
        u = unquantized_bytes
        extra = router_extra if u == 2 else 0
        return WeightBytes(bnb_lin, rows * 4, bnb_rest * u + extra,
                           f"{per}{bnb_lin:,} linear params x 1 B + {rows:,} fp32 row scales x 4 B + {bnb_rest:,} "
                           f"other params x {u} B" + (" (fp32 after prepare_model_for_kbit_training)" if u == 4 else "")
                           + kept_text + bnb_note + (router_text if extra else ""))
    if fmt in ("int4-gptq", "int4-awq"):
        # group_size -1 (GPTQ's "no grouping"): one scale and zero per output column
        lin -= kept.values
        rest += kept.values
        groups = ((sum(m.out_features * m.count * m.layers for m in mods) - kept.rows) // tp if group_size == -1
                  else -(-lin // group_size))
        consts = groups * 2 + -(-groups // 2)  # fp16 scale + packed 4-bit zero per group and column
        g_idx = 0
        if fmt == "int4-gptq":
            g_idx = (sum(m.in_features * m.count * m.layers for m in mods) - kept.inputs) * 4
            consts += g_idx
        return WeightBytes(
            -(-lin // 2), consts, rest * 2 + router_extra,
            f"{per}{lin:,} linear params x 0.5 B + {groups:,} "
            + (f"groups of {group_size}" if group_size != -1 else "output columns (group_size -1)")
            + " x (2 B scale + 0.5 B zero)"
            + (f" + g_idx {g_idx:,} B" if g_idx else "") + f" + {rest:,} other params x 2 B" + kept_text
            + router_text)
    if fmt == "nf4":
        bits = nf4_constant_bits(double_quant)
        consts = int(round(bnb_lin * bits / 8))
        u = unquantized_bytes
        extra = router_extra if u == 2 else 0
        return WeightBytes(
            -(-bnb_lin // 2), consts, bnb_rest * u + extra,
            f"{per}{bnb_lin:,} linear params" + (" (output head included)" if quantize_head and pc.lm_head else "")
            + f" x 0.5 B + {consts:,} B of constants ({bits:.3f} bits/param,"
            f" {'double' if double_quant else 'single'} quantization) + {bnb_rest:,} other params x {u} B"
            + (" (fp32 after prepare_model_for_kbit_training)" if u == 4 else "") + kept_text + bnb_note
            + (router_text if extra else ""))
    if fmt == "mxfp4":
        experts = arch.expert_parameters
        if not experts:
            raise ValueError("mxfp4 quantizes MoE experts; the model has none")
        kept = kept_linear(arch, keep, tp, ("expert",))
        experts = -(-experts // tp) - kept.values
        other = lin - experts + rest
        kept_text = (f" (incl. {kept.values:,} expert values left bf16 by quantization_config.{keep.key})"
                     if keep is not None and kept.values else "")
        scales = -(-experts // 32)
        return WeightBytes(
            -(-experts // 2), scales, other * 2,
            f"{per}{experts:,} expert params x 0.5 B (FP4) + {scales:,} E8M0 scales x 1 B (one per 32) + "
            f"{other:,} other params x 2 B (bf16)" + kept_text)
    raise ValueError(f"unknown weight format {fmt!r}")


def bnb_linear_modules(arch: Architecture) -> list:
    """The linear modules bitsandbytes quantizes: every ``nn.Linear`` (and GPT-2's ``Conv1D``) of
    the layers, shared experts included; a mixture of experts' routed experts and router are
    parameters in Transformers 5, not modules, and stay 16-bit (see :func:`weight_bytes`), as do a
    generic model's other parameters (part 'param')."""
    return [m for m in arch.linear_modules() if m.part in ("attention", "mlp")]


def int8_training_buffer_bytes(arch: Architecture, *, tokens: int, act_bytes: int, act_fp16: bool,
                               cpu: bool = False) -> tuple[int, str]:
    """The largest working set one bitsandbytes 8-bit linear makes while training through it, in bytes.

    The base of LoRA with ``load_in_8bit`` is frozen, so each 8-bit linear computes its output
    and, in backward, its input gradient. Per module of ``in`` x ``out`` features over ``T``
    tokens, with activations of ``a`` bytes (bitsandbytes autograd/_functions.py and
    backends/cuda/ops.py, 0.50):

    - CUDA forward (``MatMul8bitLt``), quantizing the input (``int8_vectorwise_quant`` with the
      outlier threshold 6.0, LLM.int8(), Dettmers et al. 2022, sec. 3.2): an fp16 copy of the
      input unless it is fp16 (2 T x in), the int8 rows (T x in), the ``|A|`` temporary (2 T x in)
      and the outlier mask (T x in), and T fp32 row scales; then the int8 matmul's int32
      accumulators (4 T x out) beside the int8 rows, dequantized into an fp16 tensor (2 T x out)
      that is cast to the activations' dtype unless they are fp16 (the cast is the output itself).
    - backward, both devices: the weight dequantized into a new tensor,
      ``CB.to(A.dtype).mul_(SCB / 127)`` (a x out x in).
    - the CPU (``MatMul8bitFp``, the training path there) dequantizes the weight the same way in
      the forward too, and quantizes nothing.

    Args:
        arch: the model.
        tokens: T, tokens of one micro-batch on this GPU.
        act_bytes: a, bytes per activation value (2, or 4 after prepare_model_for_kbit_training).
        act_fp16: the activations are fp16 already (no cast copy before quantizing).
        cpu: size the CPU path (for the validation harness) instead of CUDA's.

    Returns:
        (bytes, formula): the largest of those moments over the 8-bit modules.
    """
    mods = bnb_linear_modules(arch)
    weight_m = max(mods, key=lambda m: m.in_features * m.out_features)
    dequant = weight_m.in_features * weight_m.out_features * act_bytes
    dequant_text = f"{weight_m.name} dequantized: {weight_m.out_features:,} x {weight_m.in_features:,} x {act_bytes} B"
    if cpu:
        return dequant, dequant_text + " (bitsandbytes MatMul8bitFp, forward and backward)"
    copy = 0 if act_fp16 else 2
    widest_in = max(m.in_features for m in mods)
    quant = tokens * widest_in * (copy + 1 + 2 + 1) + tokens * 4
    matmul_m = max(mods, key=lambda m: m.in_features + (4 + copy) * m.out_features)
    matmul = tokens * (matmul_m.in_features + (4 + copy) * matmul_m.out_features) + tokens * 4
    best = max(dequant, quant, matmul)
    if best == dequant:
        return dequant, dequant_text + " (MatMul8bitLt backward)"
    if best == quant:
        return quant, (f"quantizing the input: T={tokens:,} tokens x in={widest_in:,} x ({copy} B fp16 copy + 1 B int8 "
                       f"+ 2 B |A| + 1 B outlier mask) + T x 4 B row scales (MatMul8bitLt forward)")
    return matmul, (f"{matmul_m.name} int8 matmul: T={tokens:,} tokens x ({matmul_m.in_features:,} x 1 B int8 input + "
                    f"{matmul_m.out_features:,} x ({4 + copy} B: int32 accumulators"
                    + (", fp16 result before the cast" if copy else "") + ")) + T x 4 B row scales (MatMul8bitLt forward)")


def frozen_base_weights(arch: Architecture, train, *, tp: int | None = None) -> WeightBytes:
    """The frozen quantized base of a QLoRA / LLM.int8 fine-tune as the memory model stores it
    (planner.memory.states: the weights component), per tensor-parallel rank (``tp``, default the
    workload's): :func:`weight_bytes` for ``train.quantized_base`` with its double quantization,
    the fp32 (peft prepare_model_for_kbit_training) or 16-bit unquantized rest, and the head
    quantized where the framework does. The speed model times FSDP / ZeRO-3 gathers and
    offload_params transfers of these bytes: bitsandbytes' Params4bit with ``bnb_4bit_quant_storage``
    are sharded and gathered as the packed storage (QLoRA + FSDP, Answer.AI fsdp_qlora).

    Raises:
        ValueError: the workload has no quantized base.
    """
    from planner.workload.frameworks import FRAMEWORK_SPECS

    if not train.quantized_base:
        raise ValueError("frozen_base_weights: the workload has no quantized base")
    return weight_bytes(arch, train.quantized_base, double_quant=train.double_quant,
                        tp=train.tp if tp is None else tp, unquantized_bytes=4 if train.prepare_kbit_training else 2,
                        quantize_head=FRAMEWORK_SPECS[train.framework].quantizes_head)

