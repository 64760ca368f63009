"""Published GPU-memory measurements as golden tests.

Every entry of shared/reference/published-measurements.yaml is either a case in :data:`CASES`
(written out by hand below: configuration, what was measured, its unit, the tolerance and why)
or in :data:`NOT_EXPRESSIBLE` with the reason the memory model cannot express it.

Each case compares the measurement with the quantity that measures the same thing:

- 'reserved' (``torch.cuda.memory_reserved``): tensors plus the caching allocator's pool, i.e.
  ``per_gpu_total_bytes`` less the runtime components (CUDA context, workspaces, NCCL), which
  PyTorch's allocator never sees.
- 'vllm budget' ('available KV cache memory' in vLLM's log): ``vllm_budget(...).budget`` on the
  CUDA total the log prints (else the catalog card's) at the run's ``gpu_memory_utilization``.
- 'kv cache' (llama.cpp 'KV self size'): the KV cache component, exactly: bytes are bytes.
- 'weights' (llama.cpp 'model buffer size'): the weights component.
- 'fits' (a run that ran or raised OOM on a card): ``per_gpu_total_bytes`` against the card's
  CUDA total (``Gpu.cuda_total_bytes``, what a process can allocate); the published outcome is the
  expected side.

Tolerances come from the measurement (print rounding, what the tool counts that we do not,
configuration the publication leaves open), never from our error. Where the model misses an
entry beyond its tolerance the case is ``xfail(strict=True)`` with the numbers in the reason;
the tolerance is not widened. Units: GB = 10**9 B, GiB = 2**30 B, MiB = 2**20 B; an entry's
unit is taken as the entry states it (llama.cpp prints 'MB' for MiB and the entry says so).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.model.architecture import from_hf_config
from planner.catalog.loader import load_catalog
from planner.memory import cuda_total_bytes, estimate, vllm_budget
from planner.memory.inference import VLLM_BLOCK_TOKENS
from planner.core.units import GB, GiB, MiB
from planner.workload.spec import workload_from_mapping

ROOT = Path(__file__).resolve().parent.parent
CATALOG_MODELS = ROOT / "catalog" / "models.yaml"
#: The reference file lives in shared/ beside the repository (also in CI); the cross-check of
#: the hand-written table against it is skipped where it is absent.
PUBLISHED = ROOT.parent / "shared" / "reference" / "published-measurements.yaml"

#: Bytes per unit, keyed by the unit string exactly as the entry writes it.
UNIT_BYTES = {"GB (decimal)": GB, "GiB": GiB, "MiB": MiB, "MB (MiB)": MiB}


# ----- tolerances -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Abs:
    """|predicted - measured| <= bytes."""

    bytes: float


@dataclass(frozen=True)
class Between:
    """A setting of the run that the publication leaves open (``key``, a workload key, or
    'cuda_total' in GiB for a vLLM budget) is only known to lie in [lo, hi]: the measurement must
    lie between the predictions at lo and at hi (the prediction is monotone in the setting)."""

    key: str
    lo: float
    hi: float


def SeqRange(lo: int, hi: int) -> Between:
    """The run's sequence length is only known to lie in [lo, hi] tokens."""
    return Between("seq_len", lo, hi)


@dataclass(frozen=True)
class Outcome:
    """The run fitted (True) or raised OOM (False) on the case's card."""

    fits: bool


EXACT = Abs(0)


@dataclass(frozen=True)
class Case:
    """One published measurement and how to predict it.

    model: a catalog model id, or a config.json mapping built from the entry's arch fields.
    workload: workload keys (planner.workload.spec names) without 'model'.
    quantity: 'reserved', 'vllm budget', 'kv cache', 'weights' or 'fits'.
    value, unit: the measurement as the entry gives it (unit string as in the entry).
    tolerance: Abs, Between (SeqRange) or Outcome.
    reason: why that tolerance (what the measurement includes or leaves open).
    gpu: catalog GPU id (vllm budget and fits).
    cuda_total_gib: the CUDA total a vLLM log prints ("total_gpu_memory"), used instead of the
        catalog's when the log gives it.
    xfail: set when the model misses beyond the tolerance: the numbers and the term that is off.
    """

    id: str
    source: str
    model: str | dict[str, Any]
    workload: dict[str, Any]
    quantity: str
    value: float | str
    unit: str
    tolerance: Abs | Between | Outcome
    reason: str
    gpu: str | None = None
    xfail: str | None = None
    cuda_total_gib: float | None = None
    kv_tokens: int | None = None  # quantity 'vllm kv tokens': the tokens the log printed for the value

    @property
    def measured_bytes(self) -> float:
        """The measured quantity: bytes, or for 'vllm kv tokens' the token count the log printed."""
        assert isinstance(self.value, (int, float))
        if self.quantity == "vllm kv tokens":
            assert self.kv_tokens is not None
            return self.kv_tokens
        return self.value * UNIT_BYTES[self.unit]


# ----- architectures not in the catalog, from the entries' arch fields -------------------------

#: LLaMA-1 7B (llamacpp-llama7b-*, bnbblog-llama7b-*): the entries' arch fields. Same tensors as
#: Llama-2-7B (6,738,415,616 parameters); max_position_embeddings 2048 as in LLaMA-1.
LLAMA1_7B = {
    "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
}
#: LLaMA-1 13B (bnbblog-llama13b-*): the entries' arch fields (13,015,864,320 parameters).
LLAMA1_13B = {
    "model_type": "llama", "hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 40,
    "num_key_value_heads": 40, "intermediate_size": 13824, "vocab_size": 32000, "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
}
#: bigcode/octocoder (hfdocs-octocoder-*): the entries' arch fields, StarCoder's GPTBigCode config
#: (n_embd 6144, 40 layers, 48 heads sharing one K/V head, n_inner 24576, 8,192 positions, 49,152
#: tokens, tied head): 15,517,456,384 parameters, the entries' 15.5B.
OCTOCODER = {
    "model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48, "n_inner": 24576,
    "vocab_size": 49152, "n_positions": 8192, "multi_query": True, "tie_word_embeddings": True,
}
#: Command-R v01 (llamacpp-command-r-ctx4096-2gpu): model_type 'cohere' is not supported, but only
#: the KV cache is compared and it depends on layers, KV heads and head_dim alone (40 x 64 x 128
#: from the entry's arch fields), so a llama config with those fields stands in. intermediate_size
#: is not in the entry (22528 is Command-R v01's config value); it does not enter the KV cache.
COMMAND_R_AS_LLAMA = {
    "model_type": "llama", "hidden_size": 8192, "num_hidden_layers": 40, "num_attention_heads": 64,
    "num_key_value_heads": 64, "intermediate_size": 22528, "vocab_size": 256000,
    "max_position_embeddings": 131072, "tie_word_embeddings": True,
}
#: Qwen3-Coder-30B-A3B (model_type qwen3_moe) from the entry's arch fields: q/k/v/o with head_dim
#: 128, q/k RMSNorms, a router and 128 SwiGLU experts of width 768 (moe_intermediate_size), top-8,
#: untied head. intermediate_size (6144, Qwen3-30B-A3B's config value) sizes only dense-MLP layers,
#: of which the model has none.
QWEN3_CODER_30B_A3B = {
    "model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
    "vocab_size": 151936, "num_experts": 128, "num_experts_per_tok": 8, "tie_word_embeddings": False,
    "max_position_embeddings": 262144,
}
#: Qwen3-235B-A22B (qwen3_moe), likewise: 94 layers, 64 heads, 4 KV heads of 128, 128 experts of
#: width 1536, top-8. max_position_embeddings 40960 is vLLM's default max_model_len.
QWEN3_235B_A22B = {
    "model_type": "qwen3_moe", "hidden_size": 4096, "num_hidden_layers": 94, "num_attention_heads": 64,
    "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 12288, "moe_intermediate_size": 1536,
    "vocab_size": 151936, "num_experts": 128, "num_experts_per_tok": 8, "tie_word_embeddings": False,
    "max_position_embeddings": 40960,
}


# ----- the table --------------------------------------------------------------------------------

_PEFT_SRC = "github.com/huggingface/peft method_comparison/MetaMathQA/results/{} (reserved99, L40S)"
#: PEFT MetaMathQA runs: Llama-3.2-3B in pure bf16 (no AMP), torch AdamW (foreach), batch 4, no
#: checkpointing, SDPA, LoRA adapters in fp32 (autocast_adapter_dtype=True, lora_dropout 0).
_PEFT = {"task": "train", "recipe": "pure-bf16", "optimizer": "adamw", "micro_batch": 4, "grad_accum": 1,
         "checkpointing": "none", "attention": "sdpa"}
_PEFT_SEQ = SeqRange(384, 768)
_PEFT_REASON = (
    "reserved99 is the 99th percentile of memory_reserved() after each of 5000 steps (empty_cache every 10), "
    "so it includes the allocator cache; the padded length of the batches behind that percentile is not "
    "published. Upper bound 768: the tokenizer truncates at max_seq_length. Lower bound 384: batches are "
    "length-bucketed and the longest 1% of samples sit near the 1300-character filter (which keeps 93.8% of "
    "MetaMathQA), i.e. >= ~1200 characters at <= ~3 characters per Llama-3 token for math text, plus the "
    "~12-token prompt template."
)

#: vLLM prints its terms to 0.01 GiB: +-0.005 GiB.
_VLLM_PRINT = Abs(0.005 * GiB)

#: The bitsandbytes blog runs (May 2023, transformers 4.30): Llama had no SDPA path before
#: transformers 4.36, so attention is eager; TRL SFTTrainer + peft LoRA, batch 1, accumulation 4,
#: AdamW. TRL's SFTTrainer of mid-2023 ran peft's k-bit preparation on 4-bit models; whether that
#: peft version cast the non-quantized weights to fp32 is not certain, so the cases use
#: prepare_kbit_training (the heavier reading); every outcome below is the same without it
#: (13B GC 1024 then predicts 9.31 GiB). LoRA rank and targets are not published (the benchmark
#: gist is not archived here): planner defaults, r=16 on q_proj/v_proj, adapters in fp32. That
#: choice matters: r=64 on all linear layers (the QLoRA paper's setting) adds ~4 GiB to the 13B
#: runs (adapters, their gradients and AdamW states at 16 B each).
_BNB = {"task": "train", "method": "qlora", "optimizer": "adamw", "micro_batch": 1, "grad_accum": 4,
        "attention": "eager", "prepare_kbit_training": True}
_OCTO_SRC = "huggingface/transformers docs/source/en/llm_tutorial_optimization.md (A100 40GB)"
_BNB_SRC = "huggingface/blog 4bit-transformers-bitsandbytes.md (benchmark table)"
_BNB_REASON = ("outcome on a 16 GB T4 (nvidia-smi total 15,360 MiB with ECC on; CUDA total 15,835,398,144 B = "
               "14.75 GiB, what a process can allocate): the run either trained or raised OOM; the prediction "
               "must fall on the same side of the card's CUDA total")

CASES: list[Case] = [
    # ---- PEFT MetaMathQA benchmark, reserved, 99th percentile over training steps ----------
    Case("peft-metamath-llama32-3b-full-ft", _PEFT_SRC.format("full-finetuning--llama-3.2-3B-lr_0.00001.json"),
         "llama-3.2-3b", {**_PEFT, "method": "full"},
         "reserved", 37.345, "GB (decimal)", _PEFT_SEQ, _PEFT_REASON),
    Case("peft-metamath-llama32-3b-lora-r32", _PEFT_SRC.format("lora--llama-3.2-3B-rank32.json"),
         "llama-3.2-3b", {**_PEFT, "method": "lora", "lora_rank": 32, "lora_targets": ["q_proj", "v_proj"]},
         "reserved", 20.12, "GB (decimal)", _PEFT_SEQ, _PEFT_REASON),
    Case("peft-metamath-llama32-3b-lora-r64", _PEFT_SRC.format("lora--llama-3.2-3B-rank64.json"),
         "llama-3.2-3b", {**_PEFT, "method": "lora", "lora_rank": 64, "lora_targets": ["q_proj", "v_proj"]},
         "reserved", 20.37, "GB (decimal)", _PEFT_SEQ, _PEFT_REASON),
    Case("peft-metamath-llama32-3b-dora-r32", _PEFT_SRC.format("lora--llama-3.2-3B-rank32-dora.json"),
         "llama-3.2-3b",
         {**_PEFT, "method": "lora", "lora_rank": 32, "lora_targets": ["q_proj", "v_proj"], "use_dora": True},
         "reserved", 22.179, "GB (decimal)", _PEFT_SEQ, _PEFT_REASON),
    Case("peft-metamath-llama32-3b-lora-r10-mlp", _PEFT_SRC.format("lora--llama-3.2-3B-rank10-target-mlp.json"),
         "llama-3.2-3b",
         {**_PEFT, "method": "lora", "lora_rank": 10, "lora_targets": ["gate_proj", "up_proj", "down_proj"]},
         "reserved", 22.064, "GB (decimal)", _PEFT_SEQ, _PEFT_REASON),

    # ---- vLLM start-up memory profile: available KV cache memory ----------------------------
    # V0 log (early 2025 wording, non-torch measured against reserved memory); max_model_len 131072
    # > 32K turns chunked prefill on: 2048 tokens per chunk, vLLM's default for an API server on a
    # < 70 GiB card. The log prints the CUDA total (22.07 GiB: a 24 GB card with ECC; A10, A10G and
    # L4 show 23,028-23,034 MiB in nvidia-smi). max_num_seqs is not published: vLLM's default is
    # 256 and a deployment may lower it; the logged activation peak (0.22 GiB, the size of the
    # 2048-token forward pass alone) suggests few sequences.
    Case("vllm-llama31-8b-a10-kv-capacity",
         "github.com/oracle-samples/oci-data-science-ai-samples ai-quick-actions/troubleshooting-tips.md (vLLM log)",
         "llama-3.1-8b",
         {"task": "infer", "weights": "bf16", "kv_dtype": "bf16", "context": 131072, "engine": "vllm",
          "gpu_memory_utilization": 0.9, "max_num_batched_tokens": 2048},
         "vllm budget", 4.6, "GiB", Between("max_num_seqs", 1, 256),
         "max_num_seqs is not published (1 to vLLM's default 256); the budget falls as the profile's sampler "
         "grows with it. Printed 4.6(0) GiB; 2356 blocks x 16 tokens x 131,072 B = 4.602 GiB",
         gpu="a10", cuda_total_gib=22.07),
    # V1 (Aug 2025), `vllm serve` on 24 GB cards: chunked prefill with 2048 tokens and max_num_seqs
    # 256 (arg_utils defaults for an API server on a < 70 GiB card). The log gives nvidia-smi's
    # 24,564 MiB, not CUDA's total: vLLM logs on 24 GB GeForce/RTX cards print 23.53-23.67 GiB
    # (e.g. 23.58 GiB, vllm PR #14447; 23.55 and 23.65 GiB in vLLM LoRA logs).
    Case("vllm-qwen3-coder-30b-a3b-tp8-kv", "github.com/vllm-project/vllm/issues/22177",
         QWEN3_CODER_30B_A3B,
         {"task": "infer", "weights": "bf16", "kv_dtype": "bf16", "context": 262144, "tp": 8, "engine": "vllm",
          "gpu_memory_utilization": 0.85, "max_num_batched_tokens": 2048},
         "vllm budget", 12.22, "GiB", Between("cuda_total", 23.53, 23.67),
         "the CUDA total of the 24,564 MiB cards is not printed (23.53-23.67 GiB on such cards); printed to "
         "0.01 GiB; utilization 0.85 and TP 8 given",
         gpu="rtx-4090",
         xfail=("predicted 11.99-12.11 GiB vs 12.22 GiB measured (-0.11 GiB, -0.9 %, at the top of the CUDA-total "
                "range). The terms: 0.85 x 23.67 = 20.12 GiB usable, weights 7.15 (each rank keeps one of the 4 KV "
                "heads whole and the routers whole) + rotary cache 0.06 GiB "
                "(262,144 x 128 x 2 B), profile peak 0.52 GiB (256 rows x 151,936 x 14 B of sampler tensors), "
                "non-torch 0.28 GiB, of which the 256 MiB NCCL allowance is an assumption: NCCL's buffers for "
                "8 PCIe ranks without custom all-reduce are likely smaller, but the log does not print the "
                "term, so it stays. Other vLLM logs of multi-GPU PCIe machines (same profiling arithmetic since "
                "vLLM PR #11809) print non_torch_memory 0.20 GiB (TP 4 on 22 GB cards, v0.8.5; 16 x RTX 3090, "
                "vLLM PR #14447) and 0.24 GiB (16 x 4090 48G over two nodes): with 0.20 GiB in place of the NCCL "
                "allowance the prediction would be 12.04-12.16 GiB, still short.")),

    # The entry names neither the GPU nor the parallelism, so no budget can be formed; what it
    # checks is how vLLM turns KV memory into tokens: every one of the 36 layers' pages, the 18
    # sliding-window layers included (hf-mem counted 18 layers and doubled the capacity).
    Case("vllm-gpt-oss-120b-kv", "github.com/alvarobartt/hf-mem/issues/60 (quoting vLLM logs)", "gpt-oss-120b",
         {"task": "infer", "weights": "mxfp4", "kv_dtype": "bf16", "context": 8192, "engine": "vllm"},
         "vllm kv tokens", 5.38, "GiB", Between("kv_memory_gib", 5.375, 5.385),
         "the KV memory is printed to 0.01 GiB; vLLM fits whole blocks of 16 tokens of 36 x 2 x 8 x 64 x 2 = "
         "73,728 B per token", kv_tokens=78384),

    # ---- Transformers docs, 'Optimizing LLMs for Speed and Memory': max_memory_allocated ------
    # A pipeline on one A100 40GB, a prompt of ~20 tokens and 60 new ones: the weights dominate.
    # Printed to 0.01 GiB; nothing else is stated, so the tolerance is the print's.
    Case("hfdocs-octocoder-bf16-short", _OCTO_SRC, OCTOCODER,
         {"task": "infer", "weights": "bf16", "kv_dtype": "bf16", "context": 80, "attention": "eager"},
         "allocated", 29.03, "GiB", Abs(0.005 * GiB),
         "max_memory_allocated after flush/reset, printed to 0.01 GiB",
         xfail=("predicted 28.98 GiB vs 29.03 GiB (-0.05 GiB, -0.17 %): weights 15,517,456,384 x 2 B = 28.90 GiB, "
                "GPTBigCode's 8,192^2 bool causal-mask buffer 0.06 GiB, KV cache, one prefill layer and the logits "
                "0.02 GiB. The remaining ~50 MiB is an allocation of the 2023 stack (transformers 4.3x, torch "
                "2.0/2.1) that the docs do not break down; the int8 run misses by about as much")),
    Case("hfdocs-octocoder-int8-short", _OCTO_SRC, OCTOCODER,
         {"task": "infer", "weights": "int8", "kv_dtype": "fp16", "context": 80, "attention": "eager"},
         "allocated", 15.22, "GiB", Abs(0.005 * GiB),
         "max_memory_allocated after flush/reset, printed to 0.01 GiB",
         xfail=("predicted 15.15 GiB vs 15.22 GiB (-0.07 GiB, -0.5 %): int8 linear weights 14.12 GiB with fp32 "
                "row scales, 16-bit embeddings, norms and biases 0.66 GiB, the causal-mask buffer 0.06 GiB, one "
                "dequantized c_fc 0.28 GiB. The bf16 run misses by -0.05 GiB too, so most of the gap is the "
                "2023 stack's, not the int8 format's")),

    # ---- llama.cpp: KV cache and weight buffers are exact byte counts --------------------------
    Case("llamacpp-llama7b-q4_0-ctx512-kv", "github.com/ggml-org/llama.cpp/issues/1003 (log)",
         LLAMA1_7B, {"task": "infer", "weights": "fp16", "kv_dtype": "fp16", "context": 512},
         "kv cache", 256.0, "MB (MiB)", EXACT,
         "llama.cpp allocates exactly 2 x L x n_ctx x n_embd_kv x 2 B; 'MB' there is MiB (weights do not "
         "enter the KV figure: Q4_0 is written as fp16)"),
    Case("llamacpp-llama7b-f16-ctx8192-kv", "github.com/abetlen/llama-cpp-python/issues/331 (log)",
         LLAMA1_7B, {"task": "infer", "weights": "fp16", "kv_dtype": "fp16", "context": 8192},
         "kv cache", 4096.0, "MB (MiB)", EXACT, "exact allocation; 'MB' there is MiB"),
    Case("llamacpp-command-r-ctx4096-2gpu", "github.com/ggml-org/llama.cpp/pull/6122 (comment log)",
         COMMAND_R_AS_LLAMA, {"task": "infer", "weights": "fp16", "kv_dtype": "fp16", "context": 4096},
         "kv cache", 5120.0, "MiB", EXACT,
         "exact allocation; the total of K 2560 + V 2560 MiB over both GPUs (layer split 1536 + 3584 MiB)"),
    Case("llamacpp-llama31-8b-f16-model-buffer", "github.com/ollama/ollama/issues/8361 (log)",
         "llama-3.1-8b", {"task": "infer", "weights": "fp16", "kv_dtype": "fp16", "context": 2048},
         "weights", 15317.02, "MiB", Abs(0.55 * MiB),
         "a GGUF 'F16' file keeps 1-D tensors in F32: the 65 RMSNorm weights of 4096 add 65 x 4096 x 2 B = "
         "0.508 MiB over 2 B/param, plus rope_freqs (256 B), 32-byte alignment of 292 tensors (<= 9 KiB) and "
         "printing to 0.01 MiB"),

    # ---- bitsandbytes blog: fits or OOM on a 16 GB T4 --------------------------------------------
    # FP4 stores like NF4 (4-bit codes, one fp32 absmax per 64); without nested quantization unless
    # the row says 'nested'.
    Case("bnbblog-llama7b-t4-nf4-nogc-512", _BNB_SRC, LLAMA1_7B,
         {**_BNB, "recipe": "pure-bf16", "double_quant": False, "seq_len": 512, "checkpointing": "none"},
         "fits", "No OOM", "fit outcome", Outcome(True), _BNB_REASON, gpu="t4"),
    Case("bnbblog-llama7b-t4-nf4-nogc-1024", _BNB_SRC, LLAMA1_7B,
         {**_BNB, "recipe": "pure-bf16", "double_quant": False, "seq_len": 1024, "checkpointing": "none"},
         "fits", "OOM", "fit outcome", Outcome(False), _BNB_REASON, gpu="t4"),
    Case("bnbblog-llama7b-t4-nf4-gc-1024", _BNB_SRC, LLAMA1_7B,
         {**_BNB, "recipe": "pure-bf16", "double_quant": False, "seq_len": 1024, "checkpointing": "full"},
         "fits", "No OOM", "fit outcome", Outcome(True), _BNB_REASON, gpu="t4"),
    Case("bnbblog-llama13b-t4-nf4-fp16-gc-512", _BNB_SRC, LLAMA1_13B,
         {**_BNB, "recipe": "pure-fp16", "double_quant": False, "seq_len": 512, "checkpointing": "full"},
         "fits", "No OOM", "fit outcome", Outcome(True), _BNB_REASON, gpu="t4"),
    Case("bnbblog-llama13b-t4-nf4-fp16-gc-1024", _BNB_SRC, LLAMA1_13B,
         {**_BNB, "recipe": "pure-fp16", "double_quant": False, "seq_len": 1024, "checkpointing": "full"},
         "fits", "OOM", "fit outcome", Outcome(False), _BNB_REASON, gpu="t4",
         xfail=("published OOM, predicted 10.37 GiB on the T4's 14.75 GiB CUDA total (4.4 GiB to spare). The "
                "same run with nested quantization fits (bnbblog-llama13b-t4-nf4-gc-nq-1024), and nesting "
                "saves only 12.7e9 x (0.5 - 0.127) / 8 = 0.59 GB, so the real peak was within ~0.6 GB of the "
                "card. From 512 (fits) to 1024 (OOM) we add 0.72 GiB (fp32 checkpoints, one recomputed layer "
                "with eager fp32 scores, logits). The LoRA setting is not published; the heaviest plausible "
                "one, r=64 on all linear layers (the QLoRA paper's), gives 13.78 (512, fits), 14.36 (1024) "
                "and 13.81 GiB (1024 nested, fits) with llama7b-nogc-512 at 14.36 GiB (fits): every row "
                "but this one, which it still puts 0.39 GiB under the card. No setting of r in {8..64} x "
                "{q/v, attention, all linear} x lora_dropout {0, 0.05} x prepare_kbit_training reproduces "
                "all seven rows.")),
    # LoRA on an LLM.int8 base: TRL SFTTrainer with peft's prepare_model_for_int8_training of 2023
    # (fp32 non-int8 weights and fp32 logits, as prepare_kbit_training; it turned on Transformers 4.30's
    # checkpointing, which was torch's reentrant one), fp16 on the T4.
    Case("bnbblog-llama7b-t4-int8-gc-1024", _BNB_SRC, LLAMA1_7B,
         {**_BNB, "method": "lora", "load_in_8bit": True, "recipe": "pure-fp16", "seq_len": 1024,
          "checkpointing": "full", "use_reentrant": True},
         "fits", "OOM (512 = No OOM)", "fit outcome", Outcome(False), _BNB_REASON, gpu="t4",
         xfail=("published OOM (and 'No OOM' at 512), predicted 9.14 GiB on the T4's 14.75 GiB CUDA total (8.60 GiB "
                "at 512): int8 weights with fp32 embeddings, head and norms 7.01 GiB, layer checkpoints 0.52, one "
                "recomputed layer 0.42, logits 0.37 (with non-reentrant checkpointing, whose autograd graph keeps "
                "the 8-bit inputs, 12.27 GiB: still fits). The model follows bitsandbytes 0.50; the 2023 run had "
                "bitsandbytes 0.39, whose Turing path converted every int8 input, weight and result to the "
                "col32/col_turing layouts through extra copies. The blog prints no memory figure to locate the "
                "5.6 GiB; the 13B NF4 row at 1024 misses the same way (bnbblog-llama13b-t4-nf4-fp16-gc-1024)")),
    Case("bnbblog-llama13b-t4-nf4-gc-nq-1024", _BNB_SRC, LLAMA1_13B,
         {**_BNB, "recipe": "pure-fp16", "double_quant": True, "seq_len": 1024, "checkpointing": "full"},
         "fits", "No OOM", "fit outcome", Outcome(True), _BNB_REASON, gpu="t4"),
    Case("bnbblog-llama13b-t4-fp4-nogc-512", _BNB_SRC, LLAMA1_13B,
         {**_BNB, "recipe": "pure-fp16", "double_quant": False, "seq_len": 512, "checkpointing": "none"},
         "fits", "OOM", "fit outcome", Outcome(False), _BNB_REASON, gpu="t4"),
]

#: Entries the memory model cannot express, with the reason.
NOT_EXPRESSIBLE: dict[str, str] = {
    "peft-t0_3b-lora-zero3-offload":
        "T0_3B is a T5 encoder-decoder; the memory model reads decoder-only model types only",
    "peft-metamath-llama32-3b-ln-tuning":
        "training only the norm weights (LN tuning) is not a method of the memory model (full, lora, qlora)",
    "hfdocs-bert-large-bs4-fp32-adamw": "BERT is an encoder (sequence classification); not a supported model_type",
    "hfdocs-bert-large-bs1-ga4": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs1-ga4-gc": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs4-fp16": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs1-ga4-gc-fp16": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs4-adafactor": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs1-ga4-gc-fp16-adafactor": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs4-adam8bit": "BERT is an encoder; not a supported model_type",
    "hfdocs-bert-large-bs1-ga4-gc-fp16-adam8bit": "BERT is an encoder; not a supported model_type",
    "accelerate-doc-bert-base-cased-load": "BERT is an encoder; not a supported model_type",
    "hfdocs-octocoder-4bit-short":
        "load_in_4bit with bitsandbytes' 2023 defaults: FP4 without double quantization and fp32 compute "
        "(bnb_4bit_compute_dtype float32); the planner's nf4 inference has double quantization and 16-bit "
        "compute and no key to say otherwise",
    "hfdocs-octocoder-bf16-long-eager":
        "the prompt length is not published ('system prompt x 10'), and the 2023 generate() computed the "
        "logits of every prompt token (49,152 x 2 B each; Transformers 5, which the planner follows, "
        "computes the last token's only)",
    "vllm-llama3-8b-80gb-tp1-profile":
        "a vLLM build of December 2024 (PR #10511) counted the caching allocator's cached blocks as "
        "non_torch_memory (1.79 GiB at TP 1, exactly doubled at TP 2), measuring torch's allocated rather "
        "than reserved bytes; PR #11809 (January 2025) fixed it and the same H100 then logged 0.16 GiB "
        "(PR #12126). The budget of that build is not a memory quantity of the workload; its weights term "
        "is tested in test_vllm_weights_term_includes_the_rotary_cache, and its V0 profiling-run peak with "
        "engine_version 0.6.5 in tests/test_engine_releases.py",
    "vllm-qwen3-235b-a22b-fp8-tp4-kv":
        "launched with the LMCache KV connector (LMCacheConnectorV1), whose GPU buffers and profiling order "
        "(vLLM PR #19312, per the issue's reply) the memory model has no term for: vLLM kept 8.11 GiB where "
        "SGLang on the same cards kept 16.46 GB at 0.93",
    "deepspeed-doc-estimator-t5-3b-8gpu":
        "T5 encoder-decoder, and the figures are DeepSpeed's estimator output, not a measurement",
    "zero-paper-fig1-7.5b-analytic":
        "analytic model-state arithmetic of a generic 7.5B model, not a measurement; the same figures are "
        "checked in tests/test_memory.py::test_zero_paper_model_states_table",
}


# ----- helpers ----------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _catalog():
    return load_catalog()


@lru_cache(maxsize=None)
def _catalog_model_configs() -> dict[str, dict[str, Any]]:
    """catalog/models.yaml's config per model id, read once per test process."""
    return {m["id"]: m["config"] for m in yaml.safe_load(CATALOG_MODELS.read_text())["models"]}


def _architecture(model: str | dict[str, Any]):
    if isinstance(model, str):
        return from_hf_config(copy.deepcopy(_catalog_model_configs()[model]), model)
    return from_hf_config(model, "published-measurements.yaml arch fields")


def _workload(case: Case, **overrides: Any):
    arch = _architecture(case.model)
    data = {"model": case.model if isinstance(case.model, str) else case.id, **case.workload, **overrides}
    return workload_from_mapping(data, lambda name, entry: (name, "test", arch))


def _component(est, prefix: str) -> int:
    found = [c.bytes for c in est.components if c.where == "gpu" and c.name.startswith(prefix)]
    assert len(found) == 1, f"expected one GPU component named {prefix!r}"
    return found[0]


def predicted_bytes(case: Case, **overrides: Any) -> int:
    """The model's figure for the quantity the case measured."""
    cuda_total_gib = overrides.pop("cuda_total", case.cuda_total_gib)
    kv_memory_gib = overrides.pop("kv_memory_gib", None)
    w = _workload(case, **overrides)
    est = estimate(w)
    if case.quantity == "reserved":
        # Tensors plus allocator headroom: everything but the runtime components PyTorch's
        # allocator does not own (CUDA context, library workspaces, NCCL buffers).
        runtime = sum(c.bytes for c in est.gpu_components() if c.kind == "runtime")
        return est.per_gpu_total_bytes - runtime
    if case.quantity == "allocated":
        return est.per_gpu_allocated_bytes
    if case.quantity in ("nvidia-smi", "fits"):
        return est.per_gpu_total_bytes
    if case.quantity == "vllm budget":
        gpu = _catalog().gpu(case.gpu)
        total = int(cuda_total_gib * GiB) if cuda_total_gib is not None else cuda_total_bytes(gpu)
        return vllm_budget(w, est, cuda_total=total, gpu_id=gpu.id).budget
    if case.quantity == "vllm kv tokens":
        # Tokens vLLM fits in the KV memory it printed (whole blocks of 16 over every layer's page):
        # the 'kv_memory_gib' setting is the printed value's rounding interval.
        memory = int((kv_memory_gib if kv_memory_gib is not None else case.value) * GiB)
        per_block = est.extra["kv_bytes_per_token"] * VLLM_BLOCK_TOKENS
        return memory // per_block * VLLM_BLOCK_TOKENS
    if case.quantity == "kv cache":
        return _component(est, "KV cache")
    if case.quantity == "weights":
        return _component(est, "weights")
    raise AssertionError(f"unknown quantity {case.quantity!r}")


def _params(cases: list[Case]):
    out = []
    for c in cases:
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


def _fmt(b: float) -> str:
    return f"{b / GiB:,.3f} GiB ({b:,.0f} B)"


# ----- tests ------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", _params([c for c in CASES if isinstance(c.tolerance, Abs)]))
def test_published_measurement_within_tolerance(case: Case):
    measured = case.measured_bytes
    predicted = predicted_bytes(case)
    tol = case.tolerance.bytes
    assert abs(predicted - measured) <= tol, (
        f"{case.id} ({case.source}): {case.quantity} measured {case.value} {case.unit} = {_fmt(measured)}, "
        f"predicted {_fmt(predicted)}, error {predicted - measured:+,.0f} B ({predicted / measured - 1:+.2%}); "
        f"tolerance +-{tol:,.0f} B: {case.reason}")


@pytest.mark.parametrize("case", _params([c for c in CASES if isinstance(c.tolerance, Between)]))
def test_published_measurement_within_unpublished_setting_range(case: Case):
    measured = case.measured_bytes
    rng = case.tolerance
    at_lo = predicted_bytes(case, **{rng.key: rng.lo})
    at_hi = predicted_bytes(case, **{rng.key: rng.hi})
    low, high = min(at_lo, at_hi), max(at_lo, at_hi)
    assert low <= measured <= high, (
        f"{case.id} ({case.source}): {case.quantity} measured {case.value} {case.unit} = {_fmt(measured)}; "
        f"predicted {_fmt(at_lo)} at {rng.key} {rng.lo:g} and {_fmt(at_hi)} at {rng.key} {rng.hi:g}: "
        f"{case.reason}")


@pytest.mark.parametrize("case", _params([c for c in CASES if isinstance(c.tolerance, Outcome)]))
def test_published_fit_outcome(case: Case):
    # A process can allocate up to the CUDA total (nvidia-smi's total less the driver's reservation).
    total = _catalog().gpu(case.gpu).cuda_total_bytes
    need = predicted_bytes(case)
    fits = need <= total
    assert fits == case.tolerance.fits, (
        f"{case.id} ({case.source}): published {case.value!r}, predicted {_fmt(need)} on {case.gpu} "
        f"({_fmt(total)} CUDA total): {'fits' if fits else 'does not fit'}")


@pytest.mark.parametrize("entry_id, reason", sorted(NOT_EXPRESSIBLE.items()))
def test_published_entries_the_model_cannot_express(entry_id, reason):
    pytest.skip(f"{entry_id}: {reason}")


def test_table_covers_every_published_entry_with_its_value_and_unit():
    # Guards the hand-written table against transcription slips: every entry is a case or has a
    # reason, and each case's value and unit are the entry's.
    if not PUBLISHED.is_file():
        pytest.skip(f"{PUBLISHED} not present (shared/ is beside the repository)")
    entries = {e["id"]: e for e in yaml.safe_load(PUBLISHED.read_text())}
    case_ids = [c.id for c in CASES]
    assert len(case_ids) == len(set(case_ids))
    assert not set(case_ids) & set(NOT_EXPRESSIBLE)
    assert set(case_ids) | set(NOT_EXPRESSIBLE) == set(entries)
    for c in CASES:
        m = entries[c.id]["measured"]
        assert m["unit"] == c.unit, c.id
        assert m["value"] == c.value, c.id
        if isinstance(c.tolerance, Outcome):
            assert str(m["value"]).startswith("OOM") == (not c.tolerance.fits), c.id
        else:
            assert c.unit in UNIT_BYTES, c.id


def test_seq_range_cases_are_monotone_in_sequence_length():
    # The range test relies on the prediction growing with seq_len between the bounds.
    for c in CASES:
        if isinstance(c.tolerance, Between) and c.tolerance.key == "seq_len":
            values = [predicted_bytes(c, seq_len=s) for s in range(c.tolerance.lo, c.tolerance.hi + 1, 64)]
            assert values == sorted(values), c.id


def test_dora_increment_over_lora_in_the_paired_peft_runs():
    # The PEFT benchmark's LoRA r=32 and DoRA r=32 runs (q_proj/v_proj) share the model, data
    # order and settings, so their reserved99 comes from batches of the same padded length. At
    # the sequence length where the LoRA run's prediction meets its 20.12 GB, the DoRA run's
    # prediction must exceed it by the measured 22.179 - 20.12 = 2.059 GB. Tolerance 10 % of
    # that increment: it is almost all activations (the base and adapter outputs DoRA keeps,
    # 6 B x 4,096 values per token per layer), and reserved memory holds them with the caching
    # allocator's headroom, which the model takes as a flat 10 % of the non-weight peak.
    cases = {c.id: c for c in CASES}
    lora, dora = cases["peft-metamath-llama32-3b-lora-r32"], cases["peft-metamath-llama32-3b-dora-r32"]
    lo, hi = lora.tolerance.lo, lora.tolerance.hi
    while hi - lo > 1:  # the prediction grows with seq_len (test above)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if predicted_bytes(lora, seq_len=mid) < lora.measured_bytes else (lo, mid)
    measured = dora.measured_bytes - lora.measured_bytes
    predicted = predicted_bytes(dora, seq_len=hi) - predicted_bytes(lora, seq_len=hi)
    assert abs(predicted - measured) <= 0.10 * measured, (
        f"DoRA - LoRA at seq_len {hi}: predicted {predicted / 1e9:.3f} GB, measured {measured / 1e9:.3f} GB")


#: vLLM's "model weights take" term: (entry id, component key in the entry, model, printed GiB).
#: Meta-Llama-3-8B is Llama-3.1-8B's tensors with max_position_embeddings 8192 and no rope scaling.
VLLM_WEIGHTS = [
    ("vllm-llama3-8b-80gb-tp1-profile", "model weights", {"max_position_embeddings": 8192}, 14.96),
    ("vllm-llama31-8b-a10-kv-capacity", "weights", {}, 14.99),
]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("entry_id, key, config_overrides, printed", VLLM_WEIGHTS,
                         ids=[v[0] for v in VLLM_WEIGHTS])
def test_vllm_weights_term_includes_the_rotary_cache(entry_id, key, config_overrides, printed):
    # 8,030,261,248 parameters x 2 B = 14.957 GiB, plus vLLM's cos/sin cache of
    # max_position x 128 x 2 B: 2 MiB at 8,192 positions (14.959 -> "14.96"), 32 MiB at 131,072
    # (14.989 -> "14.99"). Printed to 0.01 GiB.
    from planner.memory.vllm import rope_cache_bytes

    entries = {m["id"]: m for m in yaml.safe_load(CATALOG_MODELS.read_text())["models"]}
    config = {**entries["llama-3.1-8b"]["config"], **config_overrides}
    if config_overrides:
        config.pop("rope_scaling", None)
    arch = from_hf_config(config, entry_id)
    w = workload_from_mapping({"model": entry_id, "task": "infer", "weights": "bf16", "engine": "vllm"},
                              lambda name, entry: (name, "test", arch))
    est = estimate(w)
    predicted = _component(est, "weights") + rope_cache_bytes(arch, 2)
    assert abs(predicted - printed * GiB) <= _VLLM_PRINT.bytes, (
        f"{entry_id}: vLLM printed {printed} GiB, predicted {_fmt(predicted)}")
    if PUBLISHED.is_file():
        entry = {e["id"]: e for e in yaml.safe_load(PUBLISHED.read_text())}[entry_id]
        assert entry["measured"]["components"][key] == f"{printed:.2f} GiB"


def test_expressed_configs_reproduce_the_entries_parameter_counts():
    # The configs built from arch fields stand for the entries' models: their counts match the
    # published totals (LLaMA-1 = Llama-2 tensors). Qwen3 MoE model cards: "30.5B in total and
    # 3.3B activated", "235B in total and 22B activated" (printed to 0.1B and 1B; the activated
    # count 3,353,032,704, embeddings and head included, is cut to 3.3B, not rounded).
    assert from_hf_config(LLAMA1_7B).parameters == 6_738_415_616
    assert from_hf_config(LLAMA1_13B).parameters == 13_015_864_320
    coder = from_hf_config(QWEN3_CODER_30B_A3B)
    assert coder.parameters == pytest.approx(30.5e9, abs=0.05e9)
    assert 3.3e9 <= coder.active_parameters < 3.4e9
    big = from_hf_config(QWEN3_235B_A22B)
    assert big.parameters == pytest.approx(235e9, abs=0.5e9)
    assert big.active_parameters == pytest.approx(22e9, abs=0.5e9)



# ----- llama.cpp engine logs (engine: llama.cpp): not entries of the shared reference file ------------------

#: Buffers llama.cpp prints at start-up, predicted by the engine: llama.cpp model. Sources: an Ollama 0.5.4
#: server log (llama.cpp of December 2024) loading Meta-Llama-3.1-8B-Instruct Q4_K_M on an RTX 4090 with
#: --ctx-size 8192 --batch-size 512 --parallel 4 --n-gpu-layers 33, flash attention off (public log found
#: with the code search, stored file 48629668660); a llama-cpp-python log of a Llama-3-8B Q4_K_M GGUF
#: (mradermacher) at n_ctx 512, n_ubatch 512, flash attention off, 33/33 layers (stored file 47209433997).
#: That build kept one KV stream of n_ctx cells for all slots, so the 4-slot run is sized as one
#: 8,192-token sequence (the same KV bytes and attention scores; the current build splits it per slot).
#: Tolerance: weights and KV are exact byte counts, printed to 0.01 MiB; compute buffers 1 % (the
#: rule's row counts are measured on llama.cpp 0c1e5709, tests/test_llamacpp.py; the 2024 build's graph
#: kept 4 MiB less at n_ctx 8192). Llama-3-8B has Llama-3.1-8B's tensors but no rope_freqs (256 B, under the
#: print rounding).
LLAMACPP_LOGS = [
    ("ollama-0.5.4-llama31-8b-q4km", {"context": 8192, "flash_attention": False},
     {"weights (GGUF Q4_K_M, GPU layers)": 4403.49, "weights (GGUF Q4_K_M, host layers)": 281.81,
      "KV cache (GPU layers)": 1024.00, "compute buffer (llama.cpp graph)": 560.00, "compute buffer (host)": 24.01}),
    ("llama-cpp-python-llama3-8b-q4km-ctx512", {"context": 512, "flash_attention": False},
     {"weights (GGUF Q4_K_M, GPU layers)": 4403.49, "weights (GGUF Q4_K_M, host layers)": 281.81,
      "KV cache (GPU layers)": 64.00, "compute buffer (llama.cpp graph)": 258.50, "compute buffer (host)": 9.01}),
]


@pytest.mark.parametrize("case_id, keys, printed", LLAMACPP_LOGS, ids=[c[0] for c in LLAMACPP_LOGS])
def test_llamacpp_logged_buffers(case_id, keys, printed):
    arch = _architecture("llama-3.1-8b")
    w = workload_from_mapping({"model": case_id, "task": "infer", "engine": "llama.cpp", "weights": "Q4_K_M",
                               "kv_dtype": "f16", "gpu_layers": 33, **keys}, lambda name, entry: (name, "test", arch))
    est = estimate(w)
    got = {c.name: c.bytes for c in est.components}
    for name, mib in printed.items():
        tol = 0.01 * mib * MiB if name.startswith("compute buffer") else 0.005 * MiB
        assert abs(got[name] - mib * MiB) <= tol, f"{case_id}: {name} printed {mib} MiB, predicted {got[name] / MiB:.2f}"


# ===== Training stacks other than Transformers: torchtune, LitGPT, Unsloth ========================
#
# Each run below is a published peak of one training run on a stack the planner emulates from its
# source (planner/workload/frameworks.py), with the settings its config or command gives. The
# quantity is allocated memory: LitGPT prints torch.cuda.max_memory_allocated() / 1e9 ("Memory used:
# X GB", litgpt/finetune/lora.py, full.py); torchtune logs torch.cuda.memory_stats()'s peak active bytes
# and max_memory_allocated (training/memory.py get_memory_stats, GiB) - both count the tensors PyTorch's
# caching allocator hands out, which is per_gpu_allocated_bytes.
#
# Tolerance: a run is held to 10 % (the bound past which a miss must be explained, issue 16's Done-when)
# and each framework's runs to a median absolute error of 5 %. The model is not fitted to these runs; a
# run past 10 % is a strict xfail whose reason gives the numbers and what the model leaves out, and
# reports/validation.md lists them. Settings a publication leaves open are stated in the run's reason.

LITGPT_HUB = ("github.com/Lightning-AI/litgpt config_hub/finetune/README.md at 00af8b0d (2024-09-27), config "
              "config_hub/finetune/{}.yaml; 1xA10G, Alpaca2k, max_seq_length 512")
LITGPT_RT = ("github.com/Lightning-AI/litgpt tutorials/resource-tables.md (2023-10-20, lit-gpt 8641822, 1x or Nx "
             "A100-SXM4-40GB, PyTorch 2.1.0, bitsandbytes 0.41.1); finetune/lora.py defaults r 8, alpha 16, "
             "dropout 0.05 on query and value, batch 128")
TORCHTUNE_FLAGS = ("github.com/pytorch/torchtune README.md 'Optimization flags' at 1814feb17 (2024-11-18, PR 2003): "
                   "Llama 3.2 3B, full_finetune_single_device, batch 2, packed to 4096, bf16, A100, peak memory "
                   "active (GiB); each row adds a technique to the previous one")
TORCHTUNE_TABLE = ("github.com/pytorch/torchtune README.md 'Memory and training speed' at 30b8519e8 (2024-09-24, "
                   "PR 1664): batch 2, packed to 2048, torch compile; configs recipes/configs/llama3_1/{}.yaml")
UNSLOTH_TABLE = ("github.com/unslothai/unsloth README.md 'Context length benchmarks' at e3162dc5 (2025-01-14): "
                 "Llama 3.1 8B Instruct, 4-bit QLoRA on q/k/v/o/gate/up/down, r 32, batch 1, padded to the context")

#: The Alpaca2k samples of the config hub runs are assumed to reach the 512-token cut (each run trains its
#: longest samples; litgpt pads a micro-batch to its longest sample and truncates at max_seq_length).
_HUB_REASON = ("max_memory_allocated printed to 0.01 GB; every micro-batch shape up to max_seq_length 512 occurs "
               "(Alpaca2k has samples past 512 tokens); grad accumulation = global_batch_size / micro_batch_size")
_HUB_QLORA = ("bnb.nf4 is single quantization (Lightning's _NF4Linear: compress_statistics=False) and LitGPT pins "
              "bitsandbytes 0.42.0 (pyproject.toml), whose 4-bit linears keep their inputs; the optimizer is "
              "LitGPT's bnb.optim.PagedAdamW")
_HUB_QLORA_MISS = ("predicted {pred:.2f} GB vs {meas:.2f} GB ({err:+.1%}): LitGPT's 2024 QLoRA runs hold {gap:.2f} GB "
                   "more than the model explains ({per:.0f} KB per token and "
                   "layer, about {tensors:.1f} bf16 tensors of the MLP width {f:,}): the same LitGPT code's LoRA runs agree within "
                   "2 % (llama-2-7b, llama-3.1-8b, mistral-7b) and its 2023 QLoRA runs within 3 % (resource tables), "
                   "so the excess comes with the bitsandbytes 0.42 / Lightning 2.3-2.4 4-bit path and is not "
                   "attributed; the 4-bit weights, the inputs each 4-bit linear keeps and the fp16-to-bf16 "
                   "dequantized copies are counted")
_TG = ["q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

#: Architectures of runs whose models are not in the catalog, from their Hugging Face config.json.
GEMMA_2B = {"model_type": "gemma", "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 18,
            "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 256000,
            "max_position_embeddings": 8192, "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True}
GEMMA2_2B = {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
             "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000,
             "max_position_embeddings": 8192, "hidden_activation": "gelu_pytorch_tanh", "attn_logit_softcapping": 50.0,
             "final_logit_softcapping": 30.0, "query_pre_attn_scalar": 256, "sliding_window": 4096,
             "tie_word_embeddings": True}
TINYLLAMA = {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
             "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048,
             "tie_word_embeddings": False}
STABLELM_3B = {"model_type": "gpt_neox", "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 16,
               "num_attention_heads": 32, "rotary_pct": 0.25, "vocab_size": 50688, "max_position_embeddings": 4096,
               "use_parallel_residual": True, "tie_word_embeddings": False, "hidden_act": "gelu"}

#: microsoft/phi-1_5 config.json (PhiForCausalLM): 24 layers of 2048, 32 heads, half of each head rotated,
#: MLP 8192, 51,200 rows, no dropout. LitGPT's phi-1_5 config (lit_gpt/config.py at 8641822) builds the same
#: tensors: n_embd 2048, n_layer 24, padded_vocab_size 51200, rotary_percentage 0.5, shared_attention_norm
#: (one LayerNorm feeding attention and MLP), bias everywhere, lm_head_bias, gelu_approximate 'tanh'.
PHI_1_5 = {"model_type": "phi", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
           "num_attention_heads": 32, "num_key_value_heads": 32, "partial_rotary_factor": 0.5, "vocab_size": 51200,
           "max_position_embeddings": 2048, "hidden_act": "gelu_new", "resid_pdrop": 0.0, "embd_pdrop": 0.0,
           "attention_dropout": 0.0, "tie_word_embeddings": False}
#: phi-2's hub LoRA configs (config_hub/finetune/phi-2/lora.yaml, qlora.yaml): lora_query, lora_key, lora_value,
#: lora_projection and lora_mlp all true, in the Transformers names of phi's modules.
_PHI_ALL = ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"]


@dataclass(frozen=True)
class FrameworkRun:
    """One published training run on another stack.

    quantity: 'allocated' (the peak of allocated memory), 'init' (the memory after model init: weights,
    adapters and buffers) or 'fits' (the run trained, or ran out of memory, on ``gpu``).
    """

    id: str
    framework: str
    source: str
    model: str | dict[str, Any]
    workload: dict[str, Any]
    value: float | str
    unit: str
    reason: str
    quantity: str = "allocated"
    gpu: str | None = None
    xfail: str | None = None

    @property
    def measured_bytes(self) -> float:
        return self.value * {"GB": GB, "GiB": GiB}[self.unit]


def _hub(name, model, value, method, reason=_HUB_REASON, **kw):
    cfg = name.split(" ")[0]
    return FrameworkRun(f"litgpt-hub-{name.replace('/', '-').replace(' ', '-')}", "litgpt", LITGPT_HUB.format(cfg),
                        model, {"method": method, "seq_len": 512, **kw}, value, "GB", reason)


def _rt(name, model, value, method, seq_len, **kw):
    return FrameworkRun(f"litgpt-rt-{name}", "litgpt", LITGPT_RT, model,
                        {"method": method, "seq_len": seq_len, "lora_rank": 8, **kw}, value, "GB",
                        f"the first batch holds the longest Alpaca sample ({seq_len} tokens with the model's "
                        "tokenizer), padded; max_memory_allocated printed to 0.01 GB; gradient accumulation 128 / "
                        "micro-batch (FSDP: under no_backward_sync)")


LITGPT_RT_ADAPTER = ("github.com/Lightning-AI/litgpt tutorials/resource-tables.md 'Finetuning with Adapter on 1 GPU', "
                     "added by PR 694 (commit 0f021f3a, 2024-01-18: finetune/adapter.py with --quantize, "
                     "bnb.optim.PagedAdamW over a quantized base); 1x A100-SXM4-40GB, bitsandbytes 0.41.1 as the page "
                     "states, batch 128")


def _rt_adapter(name, model, value, seq_len, quantize=None):
    keys = {"method": "adapter", "seq_len": seq_len, "micro_batch": 1, "grad_accum": 128}
    if quantize:
        keys.update(load_in_4bit=True, double_quant=quantize == "nf4-dq", bnb_version="0.41.1")
    return FrameworkRun(f"litgpt-rt-{name}", "litgpt", LITGPT_RT_ADAPTER, model, keys, value, "GB",
                        f"litgpt finetune_adapter, micro-batch 1{', --quantize bnb.' + quantize if quantize else ''}; "
                        f"the first batch holds the longest Alpaca sample ({seq_len} tokens), padded; "
                        "max_memory_allocated printed to 0.01 GB")


_Q = dict(lora_rank=32, double_quant=False, bnb_version="0.42.0")
_FLAGS = dict(framework="torchtune", micro_batch=2, seq_len=4096)
_FLAGS_FULL = dict(method="full", optimizer="adamw-fused", **_FLAGS)
_TT = dict(micro_batch=2, seq_len=2048, compile=True)

FRAMEWORK_RUNS: list[FrameworkRun] = [
    # ---- LitGPT config hub (2024) --------------------------------------------------------------------
    _hub("gemma-2b/full 4xA10G", GEMMA_2B, 17.43, "full", micro_batch=1, gpus=4, grad_accum=4),
    FrameworkRun("litgpt-hub-gemma-2b-lora", "litgpt", LITGPT_HUB.format("gemma-2b/lora"), GEMMA_2B,
                 {"method": "lora", "seq_len": 512, "lora_rank": 8, "lora_dropout": 0.1, "lora_targets": _ALL,
                  "micro_batch": 2, "grad_accum": 3}, 12.62, "GB",
                 _HUB_REASON + "; its lora_head (an adapter on the output head) is not modelled",
                 xfail=("predicted 11.24 GB vs 12.62 GB (-11.0 %): the config also adapts the output head "
                        "(lora_head: true), which the model cannot express (adapter targets are the layers' "
                        "linears); its adapter weights are small (r x (h + V) = 2.1 M), the dropout output and mask "
                        "of the head's input and the head adapter's V-wide output per chunk are not counted")),
    _hub("gemma-2b/qlora", GEMMA_2B, 11.58, "qlora", _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
         lora_rank=16, lora_dropout=0.1, lora_targets=_ALL, micro_batch=2, grad_accum=3, double_quant=False,
         bnb_version="0.42.0"),
    _hub("gemma-7b/qlora", "gemma-7b", 17.18, "qlora", _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
         lora_rank=16, lora_dropout=0.1, lora_targets=_ALL, micro_batch=1, grad_accum=6, double_quant=False,
         bnb_version="0.42.0"),
    _hub("gemma2-2b/lora", GEMMA2_2B, 14.31, "lora", _HUB_REASON + "; lora_head not modelled", lora_rank=8,
         lora_dropout=0.1, lora_targets=_ALL, micro_batch=2, grad_accum=3),
    _hub("gemma2-2b/qlora", GEMMA2_2B, 13.52, "qlora", _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
         lora_rank=16, lora_dropout=0.1, lora_targets=_ALL, micro_batch=2, grad_accum=3, double_quant=False,
         bnb_version="0.42.0"),
    _hub("gemma2-9b/qlora", "gemma-2-9b", 20.92, "qlora", _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
         lora_rank=16, lora_dropout=0.1, lora_targets=_ALL, micro_batch=1, grad_accum=6, double_quant=False,
         bnb_version="0.42.0"),
    _hub("llama-2-7b/lora", "llama-2-7b", 19.77, "lora", lora_rank=32, micro_batch=2, grad_accum=4),
    _hub("llama-3-8b/lora", "llama-3.1-8b", 19.73, "lora", _HUB_REASON + "; Llama-3-8B has Llama-3.1-8B's tensors",
         lora_rank=32, micro_batch=1, grad_accum=8),
    _hub("llama-3.1-8b/lora", "llama-3.1-8b", 19.73, "lora", lora_rank=32, micro_batch=1, grad_accum=8),
    _hub("llama-3.2-1B/lora", "llama-3.2-1b", 4.49, "lora", lora_rank=32, micro_batch=1, grad_accum=8),
    _hub("llama-3.2-3B/lora", "llama-3.2-3b", 9.67, "lora", lora_rank=32, micro_batch=1, grad_accum=8),
    _hub("mistral-7b/lora", "mistral-7b-v0.1", 20.66, "lora", lora_rank=32, micro_batch=2, grad_accum=4),
    _hub("mistral-7b-v0.2/lora", "mistral-7b-v0.1", 20.66, "lora",
         _HUB_REASON + "; v0.2 has v0.1's tensors (no sliding window, which 512 tokens do not reach)",
         lora_rank=32, micro_batch=2, grad_accum=4),
    _hub("phi-3/lora", "phi-3-mini", 19.75, "lora", _HUB_REASON + "; lora_head not modelled", lora_rank=8,
         lora_targets=["qkv_proj", "o_proj", "gate_up_proj", "down_proj"], micro_batch=4, grad_accum=2),
    _hub("tiny-llama/full", TINYLLAMA, 14.10, "full", micro_batch=4, grad_accum=8),
    _hub("tiny-llama/lora", TINYLLAMA, 13.50, "lora", _HUB_REASON + "; lora_head not modelled", lora_rank=32,
         lora_targets=_ALL, micro_batch=8),
    _hub("stablelm-base-alpha-3b/full 2xA10G", STABLELM_3B, 21.23, "full",
         _HUB_REASON + "; the config runs devices: 2 (FSDP)", micro_batch=1, gpus=2, grad_accum=4),
    _hub("stablelm-base-alpha-3b/lora", STABLELM_3B, 8.58, "lora", lora_rank=32, micro_batch=1, grad_accum=8),
    _hub("stablelm-base-alpha-3b/qlora", STABLELM_3B, 5.24, "qlora", _HUB_REASON + "; " + _HUB_QLORA, micro_batch=1,
         grad_accum=8, **_Q),
]
#: (config, model, published GB, predicted GB, layers): the gap per token and layer is over 2 x 512 tokens
for _name, _model, _value, _pred, _layers, _f in (
        ("llama-2-7b/qlora", "llama-2-7b", 13.68, 11.81, 32, 11008),
        ("llama-3-8b/qlora", "llama-3.1-8b", 17.41, 15.30, 32, 14336),
        ("llama-3.1-8b/qlora", "llama-3.1-8b", 17.41, 15.30, 32, 14336),
        ("llama-3.2-1B/qlora", "llama-3.2-1b", 5.53, 4.91, 16, 8192),
        ("llama-3.2-3B/qlora", "llama-3.2-3b", 10.30, 9.10, 28, 8192),
        ("mistral-7b/qlora", "mistral-7b-v0.1", 14.29, 12.22, 32, 14336),
        ("mistral-7b-v0.2/qlora", "mistral-7b-v0.1", 14.29, 12.22, 32, 14336)):
    FRAMEWORK_RUNS.append(FrameworkRun(
        f"litgpt-hub-{_name.replace('/', '-')}", "litgpt", LITGPT_HUB.format(_name), _model,
        {"method": "qlora", "seq_len": 512, "micro_batch": 2, "grad_accum": 4, **_Q}, _value, "GB",
        _HUB_REASON + "; " + _HUB_QLORA,
        xfail=_HUB_QLORA_MISS.format(pred=_pred, meas=_value, err=_pred / _value - 1, gap=_value - _pred,
                                     per=(_value - _pred) * 1e9 / (1024 * _layers) / 1e3,
                                     tensors=(_value - _pred) * 1e9 / (1024 * _layers) / (2 * _f), f=_f)))
FRAMEWORK_RUNS += [
    FrameworkRun("litgpt-hub-phi-3-qlora", "litgpt", LITGPT_HUB.format("phi-3/qlora"), "phi-3-mini",
                 {"method": "qlora", "seq_len": 512, "lora_rank": 8, "micro_batch": 4, "grad_accum": 2,
                  "lora_targets": ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"], "double_quant": False,
                  "bnb_version": "0.42.0"}, 19.13, "GB", _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
                 xfail=_HUB_QLORA_MISS.format(pred=16.53, meas=19.13, err=16.53 / 19.13 - 1, gap=19.13 - 16.53,
                                              per=(19.13 - 16.53) * 1e9 / (2048 * 32) / 1e3,
                                              tensors=(19.13 - 16.53) * 1e9 / (2048 * 32) / (2 * 8192), f=8192)),
    FrameworkRun("litgpt-hub-tiny-llama-qlora", "litgpt", LITGPT_HUB.format("tiny-llama/qlora"), TINYLLAMA,
                 {"method": "qlora", "seq_len": 512, "lora_rank": 32, "micro_batch": 8, "lora_targets": _ALL,
                  "double_quant": False, "bnb_version": "0.42.0"}, 16.24, "GB",
                 _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
                 xfail=_HUB_QLORA_MISS.format(pred=13.36, meas=16.24, err=13.36 / 16.24 - 1, gap=16.24 - 13.36,
                                              per=(16.24 - 13.36) * 1e9 / (4096 * 22) / 1e3,
                                              tensors=(16.24 - 13.36) * 1e9 / (4096 * 22) / (2 * 5632), f=5632)),
    # ---- LitGPT config hub: Falcon-7B and phi-2 (LitGPT's own GPT: litgpt/config.py falcon-7b: 71 heads, one
    # query group, no biases, shared_attention_norm, parallel residual; phi-2: rotary_percentage 0.4, biases,
    # lm_head_bias, GeLU tanh; the head untied in both) -----------------------------------------------------
    _hub("falcon-7b/lora", "falcon-7b", 16.69, "lora",
         _HUB_REASON + "; lora_query and lora_value on the fused attn (LoRAQKVLinear), r 32; the 4xA10G row is the "
         "same config (devices: 1) and prints the same peak", lora_rank=32, micro_batch=1, grad_accum=8),
    _hub("falcon-7b/qlora", "falcon-7b", 9.44, "qlora", _HUB_REASON + "; " + _HUB_QLORA + "; r 32 on query and value",
         micro_batch=1, grad_accum=8, **_Q),
    _hub("phi-2/full", "phi-2", 14.44, "full",
         _HUB_REASON + "; the config runs devices: 2 (FSDP, global batch 8 = 4 x 2 x 1) on the table's 4xA10G "
         "machine: the LoRA rows show that a config's devices, not the machine's GPUs, ran (1xA10G and 4xA10G print "
         "the same peak for devices: 1)", micro_batch=4, gpus=2, grad_accum=1),
    _hub("phi-2/lora", "phi-2", 13.98, "lora", _HUB_REASON + "; lora_head not modelled", lora_rank=8,
         lora_targets=_PHI_ALL, micro_batch=4, grad_accum=2),
    FrameworkRun("litgpt-hub-phi-2-qlora", "litgpt", LITGPT_HUB.format("phi-2/qlora"), "phi-2",
                 {"method": "qlora", "seq_len": 512, "lora_rank": 8, "micro_batch": 4, "grad_accum": 2,
                  "lora_targets": _PHI_ALL, "double_quant": False, "bnb_version": "0.42.0"}, 14.27, "GB",
                 _HUB_REASON + "; " + _HUB_QLORA + "; lora_head not modelled",
                 xfail=_HUB_QLORA_MISS.format(pred=12.20, meas=14.27, err=12.20 / 14.27 - 1, gap=14.27 - 12.20,
                                              per=(14.27 - 12.20) * 1e9 / (2048 * 32) / 1e3,
                                              tensors=(14.27 - 12.20) * 1e9 / (2048 * 32) / (2 * 10240), f=10240)
                 + "; the same config's LoRA run (13.98 GB, a 16-bit base) is within 4 %, yet the published QLoRA "
                   "peak is above it"),
    # ---- LitGPT resource tables (2023) -----------------------------------------------------------------
    _rt("phi-1.5-lora-mb1", PHI_1_5, 4.82, "lora", 1044, micro_batch=1, grad_accum=128),
    _rt("phi-1.5-nf4", PHI_1_5, 3.78, "qlora", 1044, micro_batch=1, grad_accum=128, double_quant=False,
        bnb_version="0.41.1"),
    _rt("phi-1.5-nf4-dq", PHI_1_5, 3.72, "qlora", 1044, micro_batch=1, grad_accum=128, double_quant=True,
        bnb_version="0.41.1"),
    _rt("phi-1.5-lora-mb2", PHI_1_5, 6.76, "lora", 1044, micro_batch=2, grad_accum=64),
    _rt("phi-1.5-lora-mb4", PHI_1_5, 10.68, "lora", 1044, micro_batch=4, grad_accum=32),
    _rt("phi-1.5-lora-2gpu-mb1", PHI_1_5, 4.86, "lora", 1044, micro_batch=1, gpus=2, grad_accum=128),
    _rt("phi-1.5-lora-2gpu-mb2", PHI_1_5, 5.05, "lora", 1044, micro_batch=2, gpus=2, grad_accum=64),
    _rt("phi-1.5-lora-2gpu-mb4", PHI_1_5, 5.88, "lora", 1044, micro_batch=4, gpus=2, grad_accum=32),
    _rt("llama-2-7b-lora-mb1", "llama-2-7b", 21.30, "lora", 1304, micro_batch=1, grad_accum=128),
    _rt("llama-2-7b-lora-mb2", "llama-2-7b", 29.07, "lora", 1304, micro_batch=2, grad_accum=64),
    _rt("llama-2-7b-nf4", "llama-2-7b", 14.14, "qlora", 1304, micro_batch=1, grad_accum=128, double_quant=False,
        bnb_version="0.41.1"),
    _rt("llama-2-7b-nf4-dq", "llama-2-7b", 13.84, "qlora", 1304, micro_batch=1, grad_accum=128, double_quant=True,
        bnb_version="0.41.1"),
    _rt("llama-2-13b-lora", "llama-2-13b", 38.12, "lora", 1304, micro_batch=1, grad_accum=128),
    _rt("llama-2-13b-nf4", "llama-2-13b", 23.14, "qlora", 1304, micro_batch=1, grad_accum=128, double_quant=False,
        bnb_version="0.41.1"),
    _rt("llama-2-13b-nf4-dq", "llama-2-13b", 22.55, "qlora", 1304, micro_batch=1, grad_accum=128, double_quant=True,
        bnb_version="0.41.1"),
    _rt("stablelm-3b-lora-mb1", STABLELM_3B, 9.69, "lora", 1034, micro_batch=1, grad_accum=128),
    _rt("stablelm-3b-lora-mb2", STABLELM_3B, 12.10, "lora", 1034, micro_batch=2, grad_accum=64),
    _rt("stablelm-3b-lora-mb4", STABLELM_3B, 16.92, "lora", 1034, micro_batch=4, grad_accum=32),
    _rt("stablelm-3b-nf4", STABLELM_3B, 6.35, "qlora", 1034, micro_batch=1, grad_accum=128, double_quant=False,
        bnb_version="0.41.1"),
    _rt("stablelm-3b-nf4-dq", STABLELM_3B, 6.19, "qlora", 1034, micro_batch=1, grad_accum=128, double_quant=True,
        bnb_version="0.41.1"),
    _rt("stablelm-3b-lora-2gpu-mb1", STABLELM_3B, 12.75, "lora", 1034, micro_batch=1, gpus=2, grad_accum=128),
    _rt("stablelm-3b-lora-2gpu-mb2", STABLELM_3B, 12.94, "lora", 1034, micro_batch=2, gpus=2, grad_accum=64),
    _rt("stablelm-3b-lora-2gpu-mb4", STABLELM_3B, 13.45, "lora", 1034, micro_batch=4, gpus=2, grad_accum=32),
    _rt("llama-2-7b-lora-2gpu-mb1", "llama-2-7b", 22.18, "lora", 1304, micro_batch=1, gpus=2, grad_accum=128),
    _rt("llama-2-7b-lora-2gpu-mb2", "llama-2-7b", 22.47, "lora", 1304, micro_batch=2, gpus=2, grad_accum=64),
    _rt("llama-2-7b-lora-2gpu-mb4", "llama-2-7b", 23.39, "lora", 1304, micro_batch=4, gpus=2, grad_accum=32),
    _rt("llama-2-13b-lora-4gpu", "llama-2-13b", 35.57, "lora", 1304, micro_batch=1, gpus=4, grad_accum=128),
    _rt_adapter("stablelm-3b-adapter", STABLELM_3B, 9.10, 1034),
    _rt_adapter("stablelm-3b-adapter-nf4", STABLELM_3B, 5.65, 1034, "nf4"),
    _rt_adapter("stablelm-3b-adapter-nf4-dq", STABLELM_3B, 5.48, 1034, "nf4-dq"),
    _rt_adapter("llama-2-7b-adapter", "llama-2-7b", 19.98, 1304),
    _rt_adapter("llama-2-7b-adapter-nf4", "llama-2-7b", 12.68, 1304, "nf4"),
    _rt_adapter("llama-2-7b-adapter-nf4-dq", "llama-2-7b", 12.38, 1304, "nf4-dq"),
    # ---- torchtune README, optimization flags (Llama 3.2 3B, 8,192 tokens) ------------------------------
    FrameworkRun("torchtune-flags-packed", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS_FULL, "optimizer_in_backward": False, "checkpointing": "none", "loss_chunks": 0}, 60.0, "GiB",
                 "baseline + packing: nn.CrossEntropyLoss on the model's fp32 output, no checkpointing, no compile; the "
                 "AdamW variant does not move this peak (forward-backward)"),
    FrameworkRun("torchtune-flags-compile", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS_FULL, "optimizer_in_backward": False, "checkpointing": "none", "loss_chunks": 0,
                  "compile": True}, 51.0, "GiB", "as above, layers and loss compiled (torchtune compile_model, "
                 "compile_loss)"),
    FrameworkRun("torchtune-flags-chunked-ce", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS_FULL, "optimizer_in_backward": False, "checkpointing": "none", "compile": True}, 42.9, "GiB",
                 "as above with CEWithChunkedOutputLoss (8 chunks, each compiled)"),
    FrameworkRun("torchtune-flags-checkpointing", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS_FULL, "optimizer_in_backward": False, "compile": True}, 24.9, "GiB",
                 "as above with activation checkpointing; the AdamW is taken fused: weights, gradients and bf16 "
                 "AdamW states alone are 23.9 GiB, so foreach AdamW's sqrt copy of the states (6.0 GiB more, 29.9 "
                 "GiB) cannot have been allocated"),
    FrameworkRun("torchtune-flags-optimizer-in-bwd", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS_FULL, "optimizer_in_backward": True, "compile": True}, 23.1, "GiB",
                 "as above with optimizer_in_bwd (fused AdamW, as the row before)"),
    FrameworkRun("torchtune-flags-offloading", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS_FULL, "optimizer_in_backward": True, "offload_activations": True, "compile": True}, 21.8,
                 "GiB", "as above with enable_activation_offloading"),
    FrameworkRun("torchtune-flags-8bit-adamw", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS, "method": "full", "optimizer": "paged-adamw-8bit", "optimizer_in_backward": True,
                  "offload_activations": True, "compile": True}, 17.6, "GiB",
                 "as above with an 8-bit AdamW; the config's is bitsandbytes.optim.PagedAdamW8bit",
                 xfail=("predicted 9.51 GiB with PagedAdamW8bit (its 8-bit states in CUDA unified memory, outside "
                        "the allocated figure) and 15.49 GiB with bitsandbytes' unpaged AdamW8bit, vs 17.6 GiB: the row "
                        "does not say which 8-bit AdamW ran, and neither explains it; torchao's AdamW8bit, which "
                        "dequantizes a parameter's states to fp32 in its step, would allocate more")),
    FrameworkRun("torchtune-flags-lora", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS, "method": "lora", "lora_rank": 64, "lora_targets": _TG, "offload_activations": True,
                  "compile": True}, 8.5, "GiB",
                 "lora_finetune_single_device, llama3_2/3B_lora_single_device (r 64 on q/v/output_proj and the MLP, "
                 "fused AdamW) with packing, compile, chunked CE, checkpointing and offloading"),
    FrameworkRun("torchtune-flags-qlora", "torchtune", TORCHTUNE_FLAGS, "llama-3.2-3b",
                 {**_FLAGS, "method": "qlora", "lora_rank": 64, "lora_targets": _TG, "offload_activations": True,
                  "compile": True}, 4.6, "GiB", "the README's command for the final row (3B_qlora_single_device)",
                 xfail=("predicted 5.23 GiB vs 4.6 GiB (+13.7 %): the published peak is barely above the NF4 base, "
                        "the adapters, their AdamW states and the RoPE cache (2.65 GiB) with the bf16 logits of one "
                        "micro-batch (8,192 x 128,256 x 2 B = 1.96 GiB), which the compiled chunked loss keeps until its "
                        "backward, and leaves 0.01 GiB for the recomputed layer, the offloading stash and the head; "
                        "a figure logged before the optimizer's states exist (the first step) would be 0.33 GiB lower")),
    FrameworkRun("torchtune-e2e-llama32-3b-lora-init", "torchtune",
                 "github.com/pytorch/torchtune docs/source/tutorials/e2e_flow.rst (log: 'Memory stats after model "
                 "init: GPU peak memory allocation: 6.21 GiB')", "llama-3.2-3b",
                 {"framework": "torchtune", "method": "lora", "lora_rank": 64, "lora_targets": _TG}, 6.21, "GiB",
                 "weights, adapters and buffers after model init (3B_lora_single_device), printed to 0.01 GiB",
                 quantity="init"),
    # ---- torchtune README table (Llama 3.1, 4,096 tokens, compile) ---------------------------------------
    FrameworkRun("torchtune-readme-8b-full-4090", "torchtune", TORCHTUNE_TABLE.format("8B_full_single_device"),
                 "llama-3.1-8b", {"framework": "torchtune", "method": "full", **_TT}, 18.9, "GiB",
                 "PagedAdamW8bit with optimizer_in_bwd, checkpointing, chunked CE (the config's)"),
    FrameworkRun("torchtune-readme-8b-lora-4090", "torchtune", TORCHTUNE_TABLE.format("8B_lora_single_device"),
                 "llama-3.1-8b", {"framework": "torchtune", "method": "lora", "lora_rank": 8, "lora_targets": _TG, **_TT},
                 16.2, "GiB", "r 8 on q/v/output_proj and the MLP, fused AdamW, checkpointing, chunked CE"),
    FrameworkRun("torchtune-readme-8b-qlora-4090", "torchtune", TORCHTUNE_TABLE.format("8B_qlora_single_device"),
                 "llama-3.1-8b", {"framework": "torchtune", "method": "qlora", "lora_rank": 8, "lora_targets": _TG, **_TT},
                 7.4, "GiB", "as the LoRA row, torchao NF4 base"),
    FrameworkRun("torchtune-readme-70b-full-8xa100", "torchtune", TORCHTUNE_TABLE.format("70B_full"), "llama-3.1-70b",
                 {"framework": "torchtune", "method": "full", "gpus": 8, "offload_params": True, **_TT}, 13.9, "GiB",
                 "FSDP2 over 8 GPUs with fsdp_cpu_offload (parameters, gradients and the fused AdamW step in host "
                 "RAM), tok_embeddings and output sharded as units of their own (custom_sharded_layers)"),
    FrameworkRun("torchtune-readme-70b-lora-8xa100", "torchtune", TORCHTUNE_TABLE.format("70B_lora"), "llama-3.1-70b",
                 {"framework": "torchtune", "method": "lora", "gpus": 8, "lora_rank": 16, "lora_targets": _TG, **_TT},
                 27.6, "GiB", "FSDP2 over 8 GPUs, r 16 on q/v/output_proj and the MLP"),
    FrameworkRun("torchtune-readme-405b-qlora-8xa100", "torchtune", TORCHTUNE_TABLE.format("405B_qlora"),
                 "llama-3.1-405b", {"framework": "torchtune", "method": "qlora", "gpus": 8, "micro_batch": 1,
                                    "seq_len": 2048, "compile": True, "loss_chunks": 0, "grad_accum": 8,
                                    "lora_rank": 16, "lora_targets": _TG}, 44.8, "GB",
                 "FSDP2 over 8 GPUs of the NF4 base, batch 1 (the config's), nn.CrossEntropyLoss (the config's loss); "
                 "the table writes GB for this row only and GiB for the others; taken as GB"),
]
#: Published outcomes (the run trained, or ran out of memory) on a card, with the same settings.
FRAMEWORK_FITS: list[FrameworkRun] = [
    FrameworkRun("litgpt-hub-gemma-7b-lora-oom", "litgpt", LITGPT_HUB.format("gemma-7b/lora"), "gemma-7b",
                 {"method": "lora", "seq_len": 512, "lora_rank": 16, "lora_dropout": 0.1, "lora_targets": _ALL,
                  "micro_batch": 1, "grad_accum": 6}, "OOM", "fit outcome", "OOM on a 1xA10G (and on 4xA10G, devices: 1)",
                 quantity="fits", gpu="a10g"),
    FrameworkRun("litgpt-hub-gemma2-9b-lora-oom", "litgpt", LITGPT_HUB.format("gemma2-9b/lora"), "gemma-2-9b",
                 {"method": "lora", "seq_len": 512, "lora_rank": 16, "lora_dropout": 0.1, "lora_targets": _ALL,
                  "micro_batch": 1, "grad_accum": 6}, "OOM", "fit outcome", "OOM on a 1xA10G", quantity="fits",
                 gpu="a10g"),
    FrameworkRun("litgpt-hub-llama-2-7b-full-4xa10g-oom", "litgpt", LITGPT_HUB.format("llama-2-7b/full"), "llama-2-7b",
                 {"method": "full", "seq_len": 512, "micro_batch": 4, "gpus": 4, "grad_accum": 4}, "OOM", "fit outcome",
                 "OOM on 4xA10G with FSDP (devices: 4)", quantity="fits", gpu="a10g"),
    FrameworkRun("litgpt-hub-llama-3-8b-full-4xa10g-oom", "litgpt", LITGPT_HUB.format("llama-3-8b/full"), "llama-3.1-8b",
                 {"method": "full", "seq_len": 512, "micro_batch": 4, "gpus": 4, "grad_accum": 4}, "OOM", "fit outcome",
                 "OOM on 4xA10G with FSDP (devices: 4)", quantity="fits", gpu="a10g"),
    FrameworkRun("litgpt-rt-llama-2-7b-lora-mb4-oom", "litgpt", LITGPT_RT, "llama-2-7b",
                 {"method": "lora", "seq_len": 1304, "lora_rank": 8, "micro_batch": 4, "grad_accum": 32}, "OOM",
                 "fit outcome", "OOM on an A100 40GB", quantity="fits", gpu="a100-40gb-sxm"),
    FrameworkRun("litgpt-rt-llama-2-13b-lora-mb2-oom", "litgpt", LITGPT_RT, "llama-2-13b",
                 {"method": "lora", "seq_len": 1304, "lora_rank": 8, "micro_batch": 2, "grad_accum": 64}, "OOM",
                 "fit outcome", "OOM on an A100 40GB", quantity="fits", gpu="a100-40gb-sxm"),
    FrameworkRun("litgpt-rt-llama-2-13b-lora-2gpu-oom", "litgpt", LITGPT_RT, "llama-2-13b",
                 {"method": "lora", "seq_len": 1304, "lora_rank": 8, "micro_batch": 1, "gpus": 2, "grad_accum": 128},
                 "OOM", "fit outcome", "OOM on 2 x A100 40GB with FSDP", quantity="fits", gpu="a100-40gb-sxm"),
] + [
    # Falcon-40B on A100 40GB (Alpaca's longest sample is 1,079 Falcon tokens): OOM with a bf16, NF4 and NF4-DQ
    # base on one GPU and with a bf16 base over 4 GPUs (FSDP).
    FrameworkRun(f"litgpt-rt-falcon-40b-{name}-oom", "litgpt", LITGPT_RT, "falcon-40b",
                 {"method": "lora", "seq_len": 1079, "lora_rank": 8, "micro_batch": 1, "grad_accum": 128, **keys},
                 "OOM", "fit outcome", f"OOM on {where}", quantity="fits", gpu="a100-40gb-sxm")
    for name, keys, where in (
        ("lora", {}, "an A100 40GB"),
        ("nf4", {"method": "qlora", "double_quant": False, "bnb_version": "0.41.1"}, "an A100 40GB"),
        ("nf4-dq", {"method": "qlora", "double_quant": True, "bnb_version": "0.41.1"}, "an A100 40GB"),
        ("lora-4gpu", {"gpus": 4}, "4 x A100 40GB with FSDP"))
] + [
    FrameworkRun(f"unsloth-llama31-8b-qlora-{ctx}-{gpu}", "unsloth", UNSLOTH_TABLE, "llama-3.1-8b",
                 {"method": "qlora", "lora_rank": 32, "micro_batch": 1, "seq_len": ctx}, "fits", "fit outcome",
                 f"the largest context that trained on a {label} card", quantity="fits", gpu=gpu,
                 xfail=miss)
    for ctx, gpu, label, miss in (
        (78475, "rtx-4090", "24 GB", None), (153977, "a100-40gb-sxm", "40 GB", None),
        (191728, "l40s", "48 GB", "predicted largest context 191,713 tokens vs 191,728 published (-0.01 %): the "
         "estimate sits on the card's CUDA total (44.57 GiB) within 15 tokens; the other three cards' predicted "
         "largest contexts are 7.7-8.6 % above the published ones"),
        (342733, "a100-80gb-sxm", "80 GB", None))
]
#: Published framework runs the model cannot express, with the reason.
FRAMEWORK_NOT_EXPRESSIBLE: dict[str, str] = {
    "litgpt-hub-llama-3.2-1B-full / -3B-full / phi-3-full (1xA10G)":
        "8.70, 16.51 and 17.01 GB for bf16 full fine-tunes with torch AdamW (the configs') are below what the "
        "weights, gradients and AdamW states alone take (LitGPT's untied 1.50 B, 3.61 B and 3.82 B parameters x 8 B "
        "= 12.0, 28.9 and 30.6 GB; the last two exceed the A10G): the rows do not describe these configs",
    "litgpt-rt-phi-1.5-nf4*-2gpu, llama-2-13b-nf4*-2gpu": "published as N/A: LitGPT refuses a quantized base on "
                                                        "several GPUs (litgpt/finetune/lora.py), as the planner does",
    "litgpt-rt-*-adapter-v2": "LitGPT's LLaMA-Adapter v2 (adapter_v2: a bias and scale on every linear, trainable "
                              "norms) is not modelled; the v1 adapter rows are",
    "torchtune-flags-baseline": "the baseline is unpacked Alpaca: its batches' padded lengths are not published",
    "torchtune-readme-8b-*-a6000": "the A6000 rows double the 4090 rows' memory for the same configs; the settings "
                                   "that differ are not published",
    "torchtune-readme-2024-05 (Llama2-7B, PR 955) and docs tutorials (qlora_finetune, lora_finetune, llama3)":
        "unpacked Alpaca batches, whose padded lengths are not published",
}


def _framework_estimate(run: FrameworkRun):
    arch = _architecture(run.model) if isinstance(run.model, str) else from_hf_config(run.model, run.id)
    data = {"model": run.model if isinstance(run.model, str) else run.id, "task": "train",
            "framework": run.framework, **run.workload}
    return estimate(workload_from_mapping(data, lambda name, entry: (name, "test", arch)))


def framework_predicted_bytes(run: FrameworkRun) -> int:
    est = _framework_estimate(run)
    if run.quantity == "init":
        return sum(c.bytes for c in est.gpu_components() if not c.phase and c.kind == "allocated"
                   and c.name.startswith(("weights", "LoRA adapter weights", "model buffers")))
    return est.per_gpu_allocated_bytes


FRAMEWORK_TOLERANCE = 0.10


def _fw_params(runs):
    return [pytest.param(r, id=r.id, marks=[pytest.mark.xfail(strict=True, reason=r.xfail)] if r.xfail else [])
            for r in runs]


@pytest.mark.parametrize("run", _fw_params(FRAMEWORK_RUNS))
def test_framework_run_within_ten_percent(run: FrameworkRun):
    measured, predicted = run.measured_bytes, framework_predicted_bytes(run)
    err = predicted / measured - 1
    assert abs(err) <= FRAMEWORK_TOLERANCE, (
        f"{run.id} ({run.source}): measured {run.value} {run.unit}, predicted {_fmt(predicted)} ({err:+.1%}): "
        f"{run.reason}")


@pytest.mark.parametrize("framework", ["litgpt", "torchtune"])
def test_framework_runs_median_error_at_most_five_percent(framework):
    # issue 16's Done-when: over every run sourced for the framework (the xfails included)
    errors = sorted(abs(framework_predicted_bytes(r) / r.measured_bytes - 1) for r in FRAMEWORK_RUNS
                    if r.framework == framework)
    n = len(errors)
    median = (errors[n // 2] + errors[(n - 1) // 2]) / 2
    assert n >= 10
    assert median <= 0.05, f"{framework}: median absolute error {median:.1%} over {n} runs"


@pytest.mark.parametrize("run", _fw_params(FRAMEWORK_FITS))
def test_framework_fit_outcome(run: FrameworkRun):
    total = _catalog().gpu(run.gpu).cuda_total_bytes
    need = _framework_estimate(run).per_gpu_total_bytes
    assert (need <= total) == (run.value != "OOM"), (
        f"{run.id}: published {run.value!r}, predicted {_fmt(need)} on {run.gpu} ({_fmt(total)} CUDA total)")


@pytest.mark.parametrize("entry, reason", sorted(FRAMEWORK_NOT_EXPRESSIBLE.items()))
def test_framework_entries_the_model_cannot_express(entry, reason):
    pytest.skip(f"{entry}: {reason}")


def test_framework_xfail_reasons_give_the_current_numbers():
    # a strict xfail's reason quotes the prediction; keep it true (the test fails when the number moves)
    for run in FRAMEWORK_RUNS:
        if run.xfail and run.xfail.startswith("predicted"):
            got = framework_predicted_bytes(run) / {"GB": GB, "GiB": GiB}[run.unit]
            assert f"{got:.2f}" in run.xfail, f"{run.id}: reason quotes another prediction than {got:.2f}"
