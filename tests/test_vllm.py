"""vLLM's KV budget (planner.memory.vllm): each term of the engine's start-up arithmetic, by hand."""

from __future__ import annotations


import pytest

from planner.catalog.gpus import DRIVER_RESERVED_BYTES
from planner.memory import estimate
from planner.memory.overheads import RuntimeOverheads
from planner.memory.vllm import (
    cuda_total_bytes,
    engine_defaults,
    rope_cache_bytes,
    sampler_peak_bytes,
    vllm_budget,
)
from planner.core.units import GiB, MiB
from plan_helpers import gpu
from test_memory import catalog_arch, workload


def test_cuda_total_is_the_catalog_value_or_nvidia_smi_less_the_driver_reservation():
    # The default reservation, 430 MiB, sits between the H100's 442 MiB (81,559 MiB nvidia-smi vs
    # 81,117 MiB CUDA) and an A10-class card's 0.42 GiB (23,028 MiB vs 22.07 GiB).
    assert DRIVER_RESERVED_BYTES == 430 * MiB
    card = gpu("a10-like", usable=23_028 * MiB, cuda_total=None)
    assert cuda_total_bytes(card) == card.cuda_total_bytes == (23_028 - 430) * MiB
    given = gpu("h100-like", usable=81_559 * MiB, cuda_total=81_117 * MiB)
    assert cuda_total_bytes(given) == 81_117 * MiB
    # No published reservation for other vendors: their driver total is taken as it is.
    assert gpu("mi-like", usable=196_592 * MiB, cuda_total=None, vendor="amd").cuda_total_bytes == 196_592 * MiB


def test_engine_defaults_follow_vllm_serve():
    # vllm/engine/arg_utils.py: >= 70 GiB and not an A100 -> 8192 tokens / 1024 sequences, else 2048 / 256.
    assert engine_defaults(79 * GiB, "h100-sxm") == (8192, 1024)
    assert engine_defaults(79 * GiB, "a100-80gb-sxm") == (2048, 256)
    assert engine_defaults(22 * GiB, "l4") == (2048, 256)


def test_rope_cache():
    # Llama-3.1-8B: 131,072 positions x 128 x 2 B = 33,554,432 B (the 0.03 GiB between 14.96 and
    # the logged 14.99 GiB of weights); GPT-2 has no rotary cache; Pythia rotates a quarter of
    # each 128-wide head: 2,048 x 32 x 2 B = 131,072 B.
    assert rope_cache_bytes(catalog_arch("llama-3.1-8b")) == 131_072 * 128 * 2
    assert rope_cache_bytes(catalog_arch("gpt2")) == 0
    assert rope_cache_bytes(catalog_arch("pythia-1.4b")) == 2048 * 32 * 2


def test_sampler_peak():
    # 256 rows x V=128,256 x (2 B bf16 logits + 3 x 4 B: fp32 copy, probabilities, noise) = 459,669,504 B.
    assert sampler_peak_bytes(catalog_arch("llama-3.1-8b"), requests=256) == 256 * 128_256 * 14 == 459_669_504


def test_budget_term_by_term_and_context_outside_it():
    # Llama-3.1-8B bf16 on a 22.07 GiB CUDA total at 0.9, 2048 tokens, 256 sequences:
    # usable = int(0.9 x 22.07 GiB); weights 16,060,522,496 + 33,554,432 B (rotary cache);
    # profile peak = max(forward of 2048 tokens, 2048 x 4096 x 2 B hidden + 459,669,504 B sampler)
    # = 16,777,216 + 459,669,504 = 476,446,720 B; non-torch = 32 MiB cuBLAS workspaces.
    arch = catalog_arch("llama-3.1-8b")
    w = workload(arch, task="infer", weights="bf16", context=131072, engine="vllm", max_num_batched_tokens=2048)
    est = estimate(w)
    total = int(22.07 * GiB)
    b = vllm_budget(w, est, cuda_total=total, gpu_id="a10")
    assert (b.max_num_batched_tokens, b.max_num_seqs) == (2048, 256)
    assert b.usable == int(total * 0.9)
    assert b.weights == 16_060_522_496 + 33_554_432
    assert b.profile_peak == 2048 * 4096 * 2 + 459_669_504
    assert b.non_torch == 32 * MiB
    assert b.budget == b.usable - b.weights - b.profile_peak - b.non_torch
    assert b.kv_blocks == b.budget // (131_072 * 16) and b.kv_tokens == 16 * b.kv_blocks
    # The CUDA context exists before vLLM's start-up snapshot: a larger one changes nothing here.
    big = estimate(w, RuntimeOverheads(cuda_context_bytes=2 * GiB))
    assert vllm_budget(w, big, cuda_total=total, gpu_id="a10").budget == b.budget
    assert b.context_outside == 768 * MiB
    # Fewer sequences: a smaller sampler, a larger budget; the forward pass then sets the peak.
    one = vllm_budget(w, est, cuda_total=total, gpu_id="a10", max_num_seqs=1)
    assert one.budget > b.budget and one.profile_peak < b.profile_peak


def test_max_num_seqs_needs_the_vllm_engine():
    arch = catalog_arch("gpt2")
    with pytest.raises(Exception) as err:
        workload(arch, task="infer", max_num_seqs=8)
    assert "max_num_seqs is a vLLM setting" in str(err.value)


def test_fewer_batched_tokens_than_sequences_is_refused_as_vllm_refuses_it():
    # vllm/config/scheduler.py SchedulerConfig._verify_args: "max_num_batched_tokens (64) must be
    # greater than or equal to max_num_seqs (256)": vllm serve does not start, so nothing is sized
    from planner.core.errors import InputError

    arch = catalog_arch("llama-3.1-8b")
    with pytest.raises(InputError) as err:
        workload(arch, task="infer", engine="vllm", max_num_batched_tokens=64, max_num_seqs=256)
    text = str(err.value)
    assert "max_num_batched_tokens 64 is below max_num_seqs 256: vllm serve refuses to start" in text
    assert "Give max_num_batched_tokens: 256 or more, or max_num_seqs: 64 or fewer." in text
    # equal is what vLLM accepts
    assert workload(arch, task="infer", engine="vllm", max_num_batched_tokens=256, max_num_seqs=256).infer is not None


def test_estimate_cli_prints_the_budget_terms():
    # planner estimate --engine vllm --gpu h100-sxm: the catalog's CUDA total for the H100
    # (81,117 MiB, from vLLM's own log) and vllm serve's large-card defaults (8192 tokens, 1024
    # sequences); the JSON terms add up to the budget.
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    result = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                                       "--gpu", "h100-sxm", "--json"])
    assert result.exit_code == 0, result.output
    v = json.loads(result.output)["gpu"]["vllm"]
    assert v["cuda_total_bytes"] == 81_117 * MiB
    assert (v["max_num_batched_tokens"], v["max_num_seqs"]) == (8192, 1024)
    assert v["usable_bytes"] == int(81_117 * MiB * 0.9)
    assert v["budget_bytes"] == v["usable_bytes"] - v["weights_bytes"] - v["profile_peak_bytes"] - v["non_torch_bytes"]
    text = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm",
                                     "--gpu", "h100-sxm"]).output
    assert "vLLM: 0.9 x CUDA total 79.22 GiB = 71.29 GiB" in text  # as vLLM logs it (PR #10511)


def test_problems_that_stop_vllm_at_start_up():
    # Llama-3.1-8B bf16 on a 15.58 GiB CUDA total at 0.9: 14.02 GiB usable, less than the 14.99 GiB
    # of weights: no KV block, with the shortfall; on 22.07 GiB, 131,072 tokens of context do not
    # fit; at 0.99 the 768 MiB CUDA context does not fit in the 1 % left.
    arch = catalog_arch("llama-3.1-8b")
    w = workload(arch, task="infer", weights="bf16", context=131072, engine="vllm")
    est = estimate(w)
    kv = 131_072
    small = vllm_budget(w, est, cuda_total=int(15.58 * GiB), gpu_id="rtx-4060-ti-16gb")
    assert small.budget == 0 and small.kv_blocks == 0
    assert small.shortfall == small.weights + small.profile_peak + small.non_torch - small.usable > GiB
    (msg,) = small.problems(context=4096, kv_bytes_per_token=kv)
    assert msg.startswith("no KV block fits") and "'No available memory for the cache blocks'" in msg
    l4 = vllm_budget(w, est, cuda_total=int(22.07 * GiB), gpu_id="l4")
    (msg2,) = l4.problems(context=131_072, kv_bytes_per_token=kv)
    assert msg2 == (f"max_model_len 131,072 is more than the {l4.kv_tokens:,} KV tokens that fit; vLLM refuses to "
                    f"start unless --max-model-len is at most {l4.kv_tokens:,}")
    assert l4.problems(context=4096, kv_bytes_per_token=kv) == []
    full = vllm_budget(w, est, cuda_total=int(22.07 * GiB), gpu_id="l4", gpu_memory_utilization=0.99)
    assert any(p.startswith("the CUDA context (0.75 GiB) does not fit") for p in full.problems(context=4096,
                                                                                           kv_bytes_per_token=kv))


def test_vllm_workload_need_is_what_vllm_keeps():
    # With engine vllm the per-GPU need is the CUDA total vLLM needs to hold the KV cache,
    # max(S / util, S + context) with S = weights + rotary cache + KV + profile peak + non-torch,
    # held against the card's CUDA total; no allocator headroom (it lives inside util).
    arch = catalog_arch("llama-3.1-8b")
    w = workload(arch, task="infer", weights="bf16", context=4096, concurrency=8, engine="vllm")
    est = estimate(w)
    comps = {c.name: c.bytes for c in est.components if c.where == "gpu"}
    assert "allocator headroom (fragmentation)" not in comps
    s = (comps["weights (bf16)"] + comps["rotary cos/sin cache (vLLM)"] + comps["KV cache"]
         + comps["profiling-run peak (vLLM)"] + comps["library workspaces (cuBLAS/cuDNN)"])
    assert comps["KV cache"] == 8 * 4096 * 131_072
    assert comps["rotary cos/sin cache (vLLM)"] == 131_072 * 128 * 2
    # vLLM's budget util x T must hold S, and the free memory at start-up, T - context, must be at
    # least util x T: T >= max(S / 0.9, 768 MiB / 0.1)
    need = max(-(-s * 1_000_000 // 900_000), -(-768 * MiB * 1_000_000 // 100_000))
    assert est.per_gpu_total_bytes == need
    # Half the card for vLLM: the need doubles (S / 0.5).
    half = estimate(workload(arch, task="infer", weights="bf16", context=4096, concurrency=8, engine="vllm",
                             gpu_memory_utilization=0.5))
    assert half.per_gpu_total_bytes == 2 * s


def test_vllm_that_would_not_start_does_not_fit():
    # vLLM starts only when the memory free after the CUDA context (768 MiB assumed) is at least
    # util x the card: at util 0.995 that needs 768 MiB / 0.005 = 150 GiB of card, so no card fits,
    # as vLLM's start-up check would refuse on any of them.
    arch = catalog_arch("llama-3.1-8b")
    est = estimate(workload(arch, task="infer", weights="bf16", context=4096, engine="vllm",
                            gpu_memory_utilization=0.995))
    assert est.per_gpu_total_bytes >= 768 * MiB * 200
    from planner.core.errors import ScenarioError

    with pytest.raises(ScenarioError) as err:
        workload(arch, task="infer", engine="vllm", gpu_memory_utilization=1.0)
    assert "must be below 1: vLLM starts only when the memory free after the CUDA context" in str(err.value)


# ----- sliding-window models: KV per request as vLLM V1 allocates it ------------------------------

def test_sliding_window_request_takes_the_window_plus_one_chunk():
    # vllm/v1/kv_cache_interface.py: a full-attention layer takes cdiv(context, 16) blocks of 16
    # tokens, a sliding-window layer (cdiv(min(window - 1 + max_num_batched_tokens, context), 16) + 1).
    from planner.memory.vllm import sequence_kv

    # Mistral-7B-v0.1: 32 layers, all with a 4,096 window; 2 x 8 KV heads x 128 x 2 B = 4,096 B per
    # layer and token. Context 16,384, 8,192 batched tokens: min(4,095 + 8,192, 16,384) = 12,287 ->
    # cdiv 768 + 1 = 769 blocks = 12,304 tokens; 32 x 12,304 x 4,096 B = 1,612,709,888 B per request.
    mistral = sequence_kv(catalog_arch("mistral-7b-v0.1"), kv_dtype="bf16", tp=1, max_num_batched_tokens=8192)
    assert (mistral.full_layers, mistral.window_layers, mistral.layer_token_bytes) == (0, 32, 4096)
    assert mistral.window_tokens(16_384) == 12_304
    assert mistral.bytes(16_384) == 32 * 12_304 * 4096 == 1_612_709_888
    # Gemma-2-9B: 21 window layers and 21 full ones, 2 x 8 x 256 x 2 B = 8,192 B per layer and token.
    # Context 8,192, 2,048 batched tokens: full 8,192 tokens; window min(6,143, 8,192) -> 384 + 1 blocks
    # = 6,160 tokens; 8,192 B x 21 x (8,192 + 6,160) = 2,469,003,264 B.
    gemma = sequence_kv(catalog_arch("gemma-2-9b"), kv_dtype="bf16", tp=1, max_num_batched_tokens=2048)
    assert gemma.bytes(8192) == 8192 * 21 * (8192 + 6160) == 2_469_003_264
    # Without the window (sliding_window: false) every layer keeps the context: 8,192 x 42 x 8,192 B.
    assert sequence_kv(catalog_arch("gemma-2-9b"), kv_dtype="bf16", tp=1, max_num_batched_tokens=2048,
                       sliding_window=False).bytes(8192) == 8192 * 42 * 8192
    # A full-attention model at a context that is not a multiple of 16 rounds up to whole blocks.
    llama = sequence_kv(catalog_arch("llama-3.1-8b"), kv_dtype="bf16", tp=1, max_num_batched_tokens=2048)
    assert llama.bytes(4100) == 131_072 * 4112


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_sliding_window_estimate_and_fit_agree_on_the_sequences_that_fit():
    # Mistral-7B-v0.1 on an H100 (vllm serve's 8,192 batched tokens), 16,384-token requests: the KV
    # budget over 1,612,709,888 B per request is what estimate prints and the concurrency fit finds.
    # (Before: estimate said kv_tokens // 16,384 = 28 while the KV component counted the 4,096-token
    # window, so fit found 113.)
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    common = ["--model", "mistral-7b-v0.1", "--task", "infer", "--engine", "vllm", "--context", "16384",
              "--gpu", "h100-sxm"]
    runner = CliRunner()
    r = runner.invoke(main, ["fit", *common, "--concurrency", "max", "--json"])
    assert r.exit_code == 0, r.output
    best = json.loads(r.output)["max_value"]
    e = runner.invoke(main, ["estimate", *common, "--concurrency", str(best), "--json"])
    assert e.exit_code == 0, e.output
    doc = json.loads(e.output)
    v = doc["gpu"]["vllm"]
    assert v["kv_bytes_per_sequence"] == 1_612_709_888
    assert v["kv_window_tokens_per_sequence"] == 12_304
    assert best == v["sequences_at_context"] == v["budget_bytes"] // 1_612_709_888
    kv = next(c for c in doc["components"] if c["name"] == "KV cache")
    assert kv["bytes"] == best * 1_612_709_888
    assert doc["gpu"]["fits"] is True
    over = runner.invoke(main, ["estimate", *common, "--concurrency", str(best + 1), "--json"])
    assert json.loads(over.output)["gpu"]["fits"] is False
    text = runner.invoke(main, ["estimate", *common, "--concurrency", str(best)]).output
    assert (f"{best} sequences of 16,384 tokens (1.50 GiB of KV each, sliding-window layers holding 12,304 "
            "tokens)") in text


def test_sliding_window_context_check_is_by_bytes_per_request():
    # vLLM's start-up check compares one max_model_len request's KV bytes with the budget. Mistral-7B
    # at 32,768 tokens with 2,048 batched tokens needs 32 x (cdiv(6,143, 16) + 1) x 16 x 4,096 B =
    # 807,403,520 B, far less than 32,768 tokens x 131,072 B = 4 GiB: a 2 GiB budget holds it.
    arch = catalog_arch("mistral-7b-v0.1")
    w = workload(arch, task="infer", weights="bf16", context=32768, engine="vllm", max_num_batched_tokens=2048,
                 max_num_seqs=16)
    est = estimate(w)
    probe = vllm_budget(w, est, cuda_total=80 * GiB)
    fixed = probe.weights + probe.profile_peak + probe.non_torch

    def with_budget(target):
        return vllm_budget(w, est, cuda_total=int((fixed + target) / 0.9) + 1)

    two = with_budget(2 * GiB)
    assert two.kv_tokens < 32768  # the token count alone would refuse it
    assert two.kv_bytes_per_sequence() == 807_403_520
    assert two.problems(context=32768, kv_bytes_per_token=131_072) == []
    assert two.sequences == two.budget // 807_403_520
    # Half a GiB does not hold it; the longest context that fits is the largest c with
    # (cdiv(c, 16) + 1) x 16 x 131,072 B <= budget, i.e. c = (budget // (131,072 x 16) - 1) x 16.
    half = with_budget(GiB // 2)
    longest = (half.budget // (131_072 * 16) - 1) * 16
    (msg,) = half.problems(context=32768, kv_bytes_per_token=131_072)
    assert msg == (f"max_model_len 32,768 needs 0.75 GiB of KV cache per request, more than the "
                   f"{half.budget / GiB:,.2f} GiB that fit; vLLM refuses to start unless --max-model-len is at "
                   f"most {longest:,}")


def test_fit_for_the_largest_context_names_the_max_model_len_to_start_with():
    # planner fit --context max answers a context; vllm serve defaults max_model_len to the model's maximum
    # (131,072 for Llama 3.1) and refuses to start when one sequence that long does not fit its KV cache.
    # On an L4 the answer is the longest sequence whose KV fits, so vLLM needs --max-model-len <answer>.
    import json

    from click.testing import CliRunner

    from planner.cli.main import main

    args = ["fit", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--gpu", "l4", "--context", "max"]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    best = doc["max_value"]
    assert best < 131_072
    # the KV tokens vLLM gets at the answer, as 'planner estimate --gpu l4' reports them
    e = json.loads(CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine",
                                             "vllm", "--gpu", "l4", "--context", str(best), "--json"]).output)
    kv = e["gpu"]["vllm"]["kv_tokens"]
    assert best <= kv < 131_072
    # Llama has no sliding window: the longest max_model_len vLLM starts with is the KV tokens that fit.
    assert e["gpu"]["vllm"]["longest_max_model_len"] == kv
    note = (f"vLLM: start vllm serve with --max-model-len {best} (the answer): it defaults to the model's maximum, "
            f"131,072 tokens, and refuses to start when one sequence that long does not fit the KV cache (at most "
            f"{kv:,} tokens here).")
    # the first note states the vLLM release modelled (planner.workload.engine_releases)
    from planner.workload.engine_releases import version_note

    assert doc["notes"] == [version_note("vllm", None, False), note]
    text = CliRunner().invoke(main, args).output
    assert f"Note: {note}" in text.splitlines()


def test_hybrid_kv_groups_pad_to_whole_groups():
    # vLLM groups full and sliding-window layers in groups of the smaller count (or the larger when below 1.5x
    # the smaller) and pads each kind to whole groups: Gemma 3 27B's 10 full and 52 window layers take 10 + 60
    # layer slots; gpt-oss's 18 and 18, and Gemma 2's 21 and 21, none; a single kind is left alone.
    from planner.memory.vllm import hybrid_group_layers

    assert hybrid_group_layers(10, 52) == (10, 60)
    assert hybrid_group_layers(18, 18) == (18, 18)
    assert hybrid_group_layers(12, 16) == (16, 16)  # 16 < 1.5 x 12: groups of 16, the full layers padded
    assert hybrid_group_layers(32, 0) == (32, 0)
