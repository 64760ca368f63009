"""planner fit: the GPUs an answer uses, replicas for inference, and the answer's warnings.

An inference replica runs tensor parallel on --tp GPUs; --gpus N holds N / tp replicas, each
serving the concurrency fit finds. `planner estimate` reads --gpus the same way. Each test
checks the exact lines a user reads.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner.cli.main import main

# engine hf pinned: without an engine, concurrency max is sized for vLLM (planner.workload.spec.default_engine),
# whose margin is gpu_memory_utilization; these tests are about replicas and the 5% headroom's numbers
LLAMA_8B_4090 = ("fit", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--task", "infer", "--context", "8192",
                 "--concurrency", "max", "--engine", "hf")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_tp_alone_is_one_replica_on_tp_cards():
    # --tp 2 without --gpus: the answer uses 2 cards, not 1
    r = run(*LLAMA_8B_4090, "--tp", 2)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == ("Largest concurrency that fits 2 x rtx-4090 (one replica at tp 2; 22.39 GiB per "
                                        "GPU after 5% headroom): 12 (needs 21.92 GiB per GPU)")
    d = json.loads(run(*LLAMA_8B_4090, "--tp", 2, "--json").output)
    assert (d["gpus"], d["tp"], d["replicas"], d["max_value"]) == (2, 2, 1, 12)
    assert (d["concurrency_per_replica"], d["concurrency_total"]) == (12, 12)


def test_gpus_a_multiple_of_tp_are_replicas_and_concurrency_is_per_replica_and_in_total():
    r = run(*LLAMA_8B_4090, "--tp", 2, "--gpus", 4)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == ("Largest concurrency that fits 4 x rtx-4090 (2 replicas at tp 2; 22.39 GiB per GPU after 5% "
                        "headroom): 12 per replica, 24 in total (needs 21.92 GiB per GPU)")
    assert lines[1] == "At 13 per replica it needs 23.04 GiB per GPU, 0.65 GiB more."
    d = json.loads(run(*LLAMA_8B_4090, "--tp", 2, "--gpus", 4, "--json").output)
    assert (d["gpus"], d["tp"], d["replicas"], d["max_value"]) == (4, 2, 2, 12)
    assert (d["concurrency_per_replica"], d["concurrency_total"]) == (12, 24)


def test_more_replicas_serve_more_in_total_not_per_replica():
    # 70B at tp 2 on H100s: 2 GPUs are one replica, 4 GPUs two; the per-replica answer is the same
    common = ("fit", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--task", "infer", "--concurrency", "max",
              "--engine", "hf", "--json")
    two = json.loads(run(*common, "--gpus", 2).output)
    four = json.loads(run(*common, "--gpus", 4, "--tp", 2).output)
    assert (two["gpus"], two["tp"], two["replicas"], two["concurrency_total"]) == (2, 2, 1, 6)
    assert (four["gpus"], four["tp"], four["replicas"], four["concurrency_total"]) == (4, 2, 2, 12)
    assert two["max_value"] == four["max_value"] == 6 and two["need_bytes"] == four["need_bytes"]


def test_gpus_not_a_multiple_of_tp_is_refused():
    r = run(*LLAMA_8B_4090, "--tp", 2, "--gpus", 3)
    assert r.exit_code == 2
    assert r.output == ("Error: --gpus: 3 GPUs do not hold whole replicas of tp 2. An inference replica runs on --tp 2 "
                        "GPUs: give --gpus 2, 4, 6 or another multiple of 2, or leave it out for one replica.\n")


def test_context_target_names_the_concurrency_of_every_replica():
    r = run("fit", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", 8, "--tp", 4, "--task", "infer",
            "--concurrency", 16, "--context", "max", "--engine", "hf")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("Largest context that fits 8 x h100-sxm (2 replicas at tp 4; 75.26 GiB per GPU after "
                               "5% headroom): ")
    assert "Each of the 2 replicas serves --concurrency 16 (32 sequences in total)." in lines


def test_training_names_tp_and_data_parallel_ranks():
    r = run("fit", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--task", "train", "--tp", 2, "--micro-batch", "max")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith(
        "Largest micro batch that fits 2 x h100-sxm (tp 2 x 1 data-parallel rank; 75.26 GiB per GPU after 5% headroom)")
    d = json.loads(run("fit", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--task", "train", "--tp", 2,
                       "--micro-batch", "max", "--json").output)
    assert (d["gpus"], d["tp"]) == (2, 2) and "replicas" not in d


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_estimate_reads_gpus_for_inference_as_fit_does():
    # the answer of fit, estimated: the same need per GPU, and the replicas said
    d = json.loads(run(*LLAMA_8B_4090, "--tp", 2, "--gpus", 4, "--json").output)
    common = ("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--context", 8192, "--concurrency",
              d["max_value"], "--tp", 2, "--gpus", 4, "--engine", "hf")
    e = json.loads(run(*common, "--json").output)
    assert e["per_gpu_total_bytes"] == d["need_bytes"]
    assert (e["gpus"], e["replicas"], e["gpus_total"], e["concurrency_total"]) == (2, 2, 4, 24)
    text = run(*common)
    assert text.exit_code == 0, text.output
    assert ("Replicas: --gpus 4 at --tp 2 hold 2 replicas; the need is per GPU of each, and each serves --concurrency "
            "12 (24 sequences in total).") in text.output.splitlines()
    bad = run("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--tp", 2, "--gpus", 3)
    assert bad.exit_code == 2
    assert bad.output == ("Error: --gpus: 3 GPUs do not hold whole replicas of tp 2. An inference replica runs on "
                          "--tp 2 GPUs: give --gpus 2, 4, 6 or another multiple of 2, or leave it out for one "
                          "replica.\n")
    # without --tp, --gpus N is one replica at tp N, in both commands
    alone = json.loads(run("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--gpus", 2, "--json").output)
    assert (alone["gpus"], alone["replicas"], alone["gpus_total"]) == (2, 1, 2)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_fit_prints_the_warnings_estimate_gives_for_the_answer():
    # ZeRO-3 on one GPU shards nothing: estimate warns, and so does fit for its answer
    args = ("--model", "gpt2", "--task", "train", "--zero", 3)
    r = run("fit", "--gpu", "h100-sxm", *args, "--micro-batch", "max")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    best = int(lines[0].split(": ")[1].split(" ")[0])
    e = json.loads(run("estimate", *args, "--micro-batch", best, "--json").output)
    assert e["warnings"] == ["ZeRO stage 3 on one data-parallel rank shards nothing; it saves no GPU memory."]
    # the answer fills the card: less spare than its largest transient (the fp32 logits), so fit also gives
    # the fragmentation risk 'estimate --gpu' gives for it (planner.memory.fragmentation)
    risk = json.loads(run("estimate", *args, "--micro-batch", best, "--gpu", "h100-sxm", "--json").output)["gpu"]
    assert risk["fragmentation_risk"].startswith("fragmentation risk: ")
    expected = e["warnings"] + [risk["fragmentation_risk"]]
    assert [x[len("Warning: "):] for x in lines if x.startswith("Warning: ")] == expected
    d = json.loads(run("fit", "--gpu", "h100-sxm", *args, "--micro-batch", "max", "--json").output)
    assert d["warnings"] == expected


def test_fit_gives_the_answers_warnings_in_the_order_estimate_gives_them():
    # pythia-1.4b (rotary) runs past its 2,048 positions with a warning; ZeRO-1 on one GPU shards nothing.
    # The answer's warnings follow from its options, as estimate reads them, in estimate's order.
    args = ("--model", "pythia-1.4b", "--task", "train", "--zero", 1, "--seq-len", 4096, "--checkpointing", "full")
    d = json.loads(run("fit", "--gpu", "h100-sxm", *args, "--micro-batch", "max", "--json").output)
    e = json.loads(run("estimate", *args, "--micro-batch", d["max_value"], "--json").output)
    assert e["warnings"] == [
        "ZeRO stage 1 on one data-parallel rank shards nothing; it saves no GPU memory.",
        "seq_len 4096 exceeds the model's max_position_embeddings (2048); quality beyond it is not guaranteed."]
    # then the card-specific one, as 'estimate --gpu' gives it: the answer leaves less spare than its logits
    g = json.loads(run("estimate", *args, "--micro-batch", d["max_value"], "--gpu", "h100-sxm", "--json").output)["gpu"]
    assert d["warnings"] == e["warnings"] + [g["fragmentation_risk"]]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_fit_that_finds_nothing_still_gives_the_notes_and_warnings_estimate_gives_at_one():
    # QLoRA of Llama-2-70B at ZeRO-3 on one RTX 4090: even micro-batch 1 needs far more than the card's
    # 22.39 GiB. estimate at micro-batch 1 gives one note (the NF4 base) and two warnings (quant storage for
    # ZeRO-3, ZeRO-3 on one rank); fit, finding nothing, gives the same ones under its 'Nothing fits' line
    # and the settings that would fit (each one the JSON's suggestions lists; tests/test_defaults.py checks them).
    args = ("--model", "llama-2-70b", "--task", "train", "--method", "qlora", "--zero", 3)
    e = json.loads(run("estimate", *args, "--micro-batch", 1, "--json").output)
    assert len(e["notes"]) == 1 and len(e["warnings"]) == 2
    r = run("fit", "--gpu", "rtx-4090", *args, "--micro-batch", "max")
    assert r.exit_code == 1
    lines = r.output.splitlines()
    d = json.loads(run("fit", "--gpu", "rtx-4090", *args, "--micro-batch", "max", "--json").stdout)
    # fit states the framework release first (estimate states it in its stack)
    release = [f"Framework release: {e['stack']['framework release']}."]
    assert d["fits"] is False and d["notes"] == release + e["notes"] and d["warnings"] == e["warnings"]
    assert lines[0].startswith("Nothing fits: at micro_batch=1 the workload needs ")
    k = 2 + len(d["suggestions"])
    assert d["suggestions"] and lines[1] == "What would fit (each checked with the memory model):"
    assert lines[2:k] == [f"  - {x}" for x in d["suggestions"]]
    assert lines[k:] == [f"Note: {n}" for n in release + e["notes"]] + [f"Warning: {w}" for w in e["warnings"]]
    # vLLM's --max-model-len note for the default context is estimate's too (Llama-3.1-70B does not fit a 4090),
    # and so is why vllm serve would not start on the card ('estimate --gpu': no KV block fits)
    v = ("--model", "llama-3.1-70b", "--task", "infer", "--engine", "vllm")
    ev = json.loads(run("estimate", *v, "--concurrency", 1, "--json").output)
    fv = run("fit", "--gpu", "rtx-4090", *v, "--concurrency", "max")
    assert fv.exit_code == 1 and ev["notes"] and ev["notes"][-1].startswith("vLLM: the plan assumes context 4,096")
    on_card = json.loads(run("estimate", *v, "--concurrency", 1, "--gpu", "rtx-4090", "--json").output)
    problems = on_card["gpu"]["vllm"]["problems"]
    assert problems and problems[0].startswith("no KV block fits")
    fd = json.loads(run("fit", "--gpu", "rtx-4090", *v, "--concurrency", "max", "--json").stdout)
    k = 2 + len(fd["suggestions"])
    assert fv.output.splitlines()[1:k] == ["What would fit (each checked with the memory model):"] + [
        f"  - {x}" for x in fd["suggestions"]]
    assert fv.output.splitlines()[k:] == ([f"Note: {n}" for n in ev["notes"]] + [f"Warning: {w}" for w in ev["warnings"]]
                                          + [f"Warning: {p}" for p in problems])
    assert fv.output.splitlines()[0].endswith("No --gpu-memory-utilization makes it fit.")


def test_fit_with_vllm_and_the_default_context_names_max_model_len():
    r = run("fit", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--task", "infer", "--engine", "vllm",
            "--concurrency", "max")
    assert r.exit_code == 0, r.output
    assert ("Note: vLLM: the plan assumes context 4,096 (the default); start vllm serve with --max-model-len 4096: it "
            "defaults to the model's maximum, 131,072 tokens.") in r.output.splitlines()
    given = run("fit", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--task", "infer", "--engine", "vllm",
                "--concurrency", "max", "--context", 4096)
    assert "--max-model-len" not in given.output


def test_fit_refuses_gpus_below_one_with_a_hint():
    r = run(*LLAMA_8B_4090, "--gpus", 0)
    assert r.exit_code == 2
    assert r.output == ("Error: --gpus: must be at least 1, not 0. Give a count from 1 to 65536: the GPUs the inference "
                        "replicas run on, --tp N each (without --tp N, one replica on all of them).\n")
    t = run("fit", "--model", "gpt2", "--gpu", "h100-sxm", "--task", "train", "--micro-batch", "max", "--gpus", 0)
    assert t.exit_code == 2
    assert t.output == ("Error: --gpus: must be at least 1, not 0. Give a count from 1 to 65536: every GPU the job runs "
                        "on (data-parallel ranks x tensor-parallel degree).\n")


def test_estimate_on_a_card_does_not_call_vllms_share_spare():
    # vLLM takes gpu_memory_utilization of the card whatever the need and fills it with KV cache, so
    # the margin above the need is not free memory; an HF workload's margin is.
    r = run("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--engine", "vllm", "--gpu", "h100-sxm")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("On h100-sxm"))
    assert "spare" not in line and "which vLLM does not leave free" in line
    hf = run("estimate", "--model", "llama-3.1-8b", "--task", "infer", "--gpu", "h100-sxm")
    assert "spare" in next(x for x in hf.output.splitlines() if x.startswith("On h100-sxm"))


def test_fit_names_a_vllm_utilization_that_fits_when_nothing_does():
    # At 0.99 vLLM needs its CUDA context in 1 % of the card: 0.75 GiB / 0.01 = 75 GiB per GPU; at the
    # default 0.9 the context needs 7.5 GiB of room and the card's 23.57 GiB holds the rest.
    r = run("fit", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--task", "infer", "--engine", "vllm",
            "--context", 8192, "--concurrency", "max", "--gpu-memory-utilization", 0.99)
    assert r.exit_code == 1
    assert r.output.startswith("Nothing fits: at concurrency=1 the workload needs 75.00 GiB per GPU; 1 x rtx-4090 "
                               "offers 23.57 GiB per GPU (its CUDA total; vLLM's gpu_memory_utilization is the margin). "
                               "At --gpu-memory-utilization 0.9 it needs ")
    assert "0% headroom" not in r.output
