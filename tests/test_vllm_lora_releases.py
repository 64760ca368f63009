"""vLLM LoRA slots by release (planner.workload.engine_releases vllm_lora_ranks / vllm_lora_extra_vocab,
planner.memory.vllm_lora lora_extra_vocab_bytes): the max_lora_rank values each release accepts and the
extra-vocabulary rows it carries.

Sources, read in each release's own source (the PyPI sdists of vllm):
- vllm/config.py LoRAConfig.__post_init__ at v0.6.0, v0.7.0, v0.7.2, v0.7.3:
  "possible_max_ranks = (8, 16, 32, 64, 128, 256)" and "possible_lora_extra_vocab_size = (0, 256, 512)";
  at v0.8.0: "possible_max_ranks = (8, 16, 32, 64, 128, 256, 320, 512)", "possible_lora_extra_vocab_size =
  (256, 512)"; vllm/config/lora.py at v0.11.0 the same.
- vllm/config/lora.py at v0.11.1: "MaxLoRARanks = Literal[1, 8, 16, 32, 64, 128, 256, 320, 512]" (PR #26461)
  and "`lora_extra_vocab_size` is deprecated and will be removed in v0.12.0"; at v0.12.0 and v0.14.1 the
  same ranks and no lora_extra_vocab_size field (PRs #28382, #28545).
- vllm/model_executor/models/llama.py at v0.6.0-v0.11.1: "lora_vocab = (lora_config.lora_extra_vocab_size *
  (lora_config.max_loras or 1))", "self.vocab_size = config.vocab_size + lora_vocab" (embed_tokens) and
  "self.unpadded_vocab_size += lora_config.lora_extra_vocab_size" with the head padded to
  lora_vocab_padding_size (256); vllm/lora/layers.py at v0.7.3: "self.embeddings_tensors = torch.zeros(
  (max_loras, lora_config.lora_extra_vocab_size, self.base_layer.embedding_dim)" (embedding wrapper) and
  "torch.full((max_loras, lora_config.lora_extra_vocab_size, self.hidden_size)" (logits wrapper).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from planner.core.errors import InputError
from planner.memory import estimate
from planner.memory.vllm import vllm_budget
from planner.memory.vllm_lora import lora_extra_vocab_bytes
from planner.workload.engine_releases import vllm_lora_extra_vocab, vllm_lora_ranks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_engine_releases import _workload  # noqa: E402

EXTRA = "weights: vLLM LoRA extra-vocabulary rows (lora_extra_vocab_size)"
BASE = {"engine": "vllm", "weights": "bf16", "context": 8192, "enable_lora": True}


def test_each_release_accepts_the_ranks_its_lora_config_had():
    old = (8, 16, 32, 64, 128, 256)
    assert vllm_lora_ranks("0.6.0") == vllm_lora_ranks("0.7.3") == old
    assert vllm_lora_ranks("0.8.0") == vllm_lora_ranks("0.11.0") == old + (320, 512)
    assert vllm_lora_ranks("0.11.1") == vllm_lora_ranks("0.12.0") == (1,) + old + (320, 512)
    assert vllm_lora_ranks(None) == (1,) + old + (320, 512)  # the current release, 0.14.1


@pytest.mark.parametrize("release, rank", [("0.6.5", 512), ("0.7.3", 320), ("0.7.3", 1), ("0.11.0", 1)])
def test_a_rank_the_release_did_not_accept_is_refused_naming_the_release(release, rank):
    with pytest.raises(InputError) as err:
        _workload("llama-3.1-8b", **BASE, engine_version=release, max_lora_rank=rank)
    text = str(err.value)
    assert f"vLLM {release} accepts a max_lora_rank of 8, 16" in text and f"not {rank}" in text, text
    assert "or a newer engine_version" in text, text


@pytest.mark.parametrize("release, rank", [("0.6.0", 256), ("0.8.0", 512), ("0.8.0", 320), ("0.11.1", 1)])
def test_a_rank_the_release_accepted_is_accepted(release, rank):
    w = _workload("llama-3.1-8b", **BASE, engine_version=release, max_lora_rank=rank)
    assert w.infer.max_lora_rank == rank


def test_extra_vocabulary_rows_until_0_12():
    assert vllm_lora_extra_vocab("0.6.0") == vllm_lora_extra_vocab("0.11.1") == 256
    assert vllm_lora_extra_vocab("0.12.0") == vllm_lora_extra_vocab(None) == 0
    # Llama-3.1-8B (hidden 4096, vocab 128,256, untied; 128,256 is a multiple of 256, so the head's 256-row
    # padding adds nothing beyond the 64-row one), 4 slots, bf16, tp 1:
    #   embed_tokens 256 x 4 = 1,024 rows, lm_head 256 rows, two wrappers' embeddings_tensors 2 x 4 x 256 = 2,048
    #   = 3,328 rows x 4,096 x 2 B = 27,262,976 B: the model file's 1,280 rows as weights, the wrappers' 2,048
    #   with the slots (rank 16: 4 x 32 layers x 16 x 81,920 values x 2 B)
    assert lora_extra_vocab_bytes(_workload("llama-3.1-8b").architecture, max_loras=4, extra=256, tp=1,
                                  dtype_bytes=2)[0] == 3_328 * 4096 * 2
    w = _workload("llama-3.1-8b", **BASE, engine_version="0.8.0", max_loras=4)
    comps = estimate(w).components
    rows = [c for c in comps if c.name == EXTRA]
    assert len(rows) == 1 and rows[0].bytes == 1_280 * 4096 * 2
    slots = [c for c in comps if c.name == "weights: vLLM LoRA slots (--enable-lora)"]
    assert slots[0].bytes == 4 * 32 * 16 * 81_920 * 2 + 2_048 * 4096 * 2
    assert not [c for c in estimate(_workload("llama-3.1-8b", **BASE, engine_version="0.12.0", max_loras=4)).components
                if c.name == EXTRA]
    assert not [c for c in estimate(_workload("llama-3.1-8b", **BASE, max_loras=4)).components if c.name == EXTRA]


def test_extra_rows_follow_the_model_file_ties_and_tensor_parallelism():
    arch8 = _workload("llama-3.1-8b").architecture
    # tp 2: the embedding's and head's rows split, the wrappers' tensors do not: (1,024 + 256) / 2 + 2,048
    assert lora_extra_vocab_bytes(arch8, max_loras=4, extra=256, tp=2, dtype_bytes=2)[0] == (640 + 2_048) * 4096 * 2
    # a tied head (Llama-3.2-1B, hidden 2048) shares the embedding's rows: 256 + 2 x 256 for one slot
    arch1 = _workload("llama-3.2-1b").architecture
    assert arch1.tie_word_embeddings
    assert lora_extra_vocab_bytes(arch1, max_loras=1, extra=256, tp=1, dtype_bytes=2)[0] == 768 * 2048 * 2
    # Qwen2's vLLM model file reads no lora_extra_vocab_size: no rows
    assert lora_extra_vocab_bytes(_workload("qwen2.5-7b").architecture, max_loras=4, extra=256, tp=1,
                                  dtype_bytes=2) == (0, "")
    with pytest.raises(ValueError):
        lora_extra_vocab_bytes(arch8, max_loras=0, extra=256, tp=1, dtype_bytes=2)


def test_extra_rows_come_out_of_the_kv_budget_as_weights():
    # They are built with the model (embed_tokens, lm_head) or with the LoRA layers, counted as weights
    # like the slots (planner.memory.vllm_lora; from 0.8.0, V1: load_model's DeviceMemoryProfiler wraps both)
    total = int(79.22 * 2**30)
    new = _workload("llama-3.1-8b", **BASE, engine_version="0.12.0", max_loras=4)
    old = _workload("llama-3.1-8b", **BASE, engine_version="0.11.1", max_loras=4)
    b_new = vllm_budget(new, estimate(new), cuda_total=total, gpu_id="h100-sxm")
    b_old = vllm_budget(old, estimate(old), cuda_total=total, gpu_id="h100-sxm")
    assert b_old.weights - b_new.weights == 3_328 * 4096 * 2
    assert b_new.budget - b_old.budget == 3_328 * 4096 * 2


# ----- the KV budget and the slots by release -------------------------------------------------------------
# vllm issue #14450 (chenhongyu2048, 2025-03-07, the V0 engine's determine_num_available_blocks; v0.7.3 was the
# newest release): "In my experiment, using different LoRa Rank and Max LoRas did not affect the number of kv
# cache blocks which is decided in the profiling"; jeejeelee: "This is a bug, V1 of LoRA should not have this
# issue." The issue gives no figures: the check is that the blocks do not move, and why is in the source
# (planner.workload.engine_releases, module docstring: v0.7.0-v0.7.3 build the LoRA layers after the measured
# load and profile with MemorySnapshot, which leaves tensors allocated before the profile out of every term).

def _budget(release, **lora):
    w = _workload("llama-3.1-8b", engine="vllm", weights="bf16", context=8192, engine_version=release, **lora)
    return vllm_budget(w, estimate(w), cuda_total=int(79.22 * 2**30), gpu_id="h100-sxm")


def test_v0_7_kv_blocks_do_not_move_with_lora_rank_or_slots_as_issue_14450_saw():
    from planner.workload.engine_releases import vllm_lora_outside_budget

    assert [vllm_lora_outside_budget(r) for r in ("0.6.6", "0.7.0", "0.7.3", "0.8.0", None)] == [
        False, True, True, False, False]
    plain = _budget("0.7.3")
    for loras, rank in ((1, 8), (4, 64), (8, 256)):
        b = _budget("0.7.3", enable_lora=True, max_loras=loras, max_lora_rank=rank)
        # the model file's own extra-vocabulary rows are built inside the measured load: (256 x loras + 256)
        # rows x 4,096 x 2 B; the slots and their wrappers' rows are outside
        model_rows = (256 * loras + 256) * 4096 * 2
        assert plain.budget - b.budget == model_rows, (loras, rank)
        assert plain.kv_blocks - b.kv_blocks <= model_rows // (16 * 131_072) + 1
        # slots: loras x 32 layers x rank x 81,920 values x 2 B, plus 2 x loras x 256 wrapper rows x 4,096 x 2 B
        assert b.lora_outside == loras * 32 * rank * 81_920 * 2 + 2 * loras * 256 * 4096 * 2


def test_before_0_7_and_from_0_8_the_slots_come_out_of_the_budget():
    # v0.6.0-v0.6.4: the profile's absolute allocated peak; v0.6.5-v0.6.6: non_torch takes everything beyond
    # the weights; v0.8.0 (V1): load_lora_model inside the measured load (engine_releases module docstring)
    for release in ("0.6.0", "0.6.6", "0.8.0"):
        plain = _budget(release)
        b = _budget(release, enable_lora=True, max_loras=4, max_lora_rank=64)
        slots = 4 * 32 * 64 * 81_920 * 2 + 2 * 4 * 256 * 4096 * 2
        assert plain.budget - b.budget == slots + (256 * 4 + 256) * 4096 * 2, release
        assert b.lora_outside == 0


def test_slots_outside_the_budget_must_fit_beside_the_cuda_context():
    # vLLM 0.7.3 allocates util x T to weights, profile and KV cache whatever the slots take: the card needs
    # (1 - util) x T >= CUDA context + slots, so the estimate's need is max((S - L) / util, (context + L) / (1 - util))
    keys = dict(engine="vllm", weights="bf16", context=8192, engine_version="0.7.3", enable_lora=True, max_loras=8,
                max_lora_rank=256, gpu_memory_utilization=0.98)
    est = estimate(_workload("llama-3.1-8b", **keys))
    gpu = est.gpu_components()
    lora = sum(c.bytes for c in gpu if c.name.startswith("vLLM LoRA slots outside"))
    context = sum(c.bytes for c in gpu if c.name.startswith("CUDA context"))
    assert lora == 8 * 32 * 256 * 81_920 * 2 + 2 * 8 * 256 * 4096 * 2
    total = sum(c.bytes for c in gpu)
    assert total == -(-(context + lora) * 50 // 1)  # (context + L) / 0.02, rounded up
    b = vllm_budget(_workload("llama-3.1-8b", **keys), est, cuda_total=int(79.22 * 2**30), gpu_id="h100-sxm")
    problems = b.problems(context=8192, kv_bytes_per_token=131_072)
    assert any("leaves out of its KV budget (vllm#14450)" in p for p in problems), problems
