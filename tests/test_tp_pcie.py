"""Tensor-parallel all-reduces over PCIe (planner.speed.collectives), each figure derived beside its test.

Llama 3.1 8B: hidden 4096, 32 layers, so 2 x 32 = 64 all-reduces per forward; a prompt of P tokens
all-reduces P x 4096 x 2 B (bf16 activations) each time. PCIe per-lane rates, one direction (PCI-SIG):
Gen4 1.969 GB/s, Gen5 3.938 GB/s; x16: 31.504 and 63.008 GB/s. Bus-bandwidth shares (nccl-tests busbw
over one direction of the link): P2P 0.65 (8 x RTX PRO 6000 Blackwell, 41.1 / 63.0), host memory 0.556 up
to 4 GPUs (4 x RTX 5090, 35 / 63.0) and 0.444 above (8 x RTX 5090, 28 / 63.0). One all-reduce of M bytes
among n GPUs = latency + 2 (n - 1) / n x M / busbw.
"""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

import pytest

PROMPT = 3584
MSG = PROMPT * 4096 * 2  # 29,360,128 B per prefill all-reduce
GEN4_X16 = 16 * 1.969e9
GEN5_X16 = 16 * 3.938e9


@cache
def _cat():
    from planner import load_catalog

    return load_catalog()


def _speed(gpu, tp, concurrency=1, engine="vllm"):
    from planner import estimate

    return estimate(catalog=_cat(), gpu=gpu, model="llama-3.1-8b", task="infer", engine=engine, weights="bf16",
                    context=4096, concurrency=concurrency, tp=tp, gpus=tp, prompt_tokens=PROMPT,
                    output_tokens=512).speed


def _part(speed, name):
    return next((p for p in speed.parts if p.name == name), None)


def test_a_datacenter_gen5_pair_all_reduces_its_prompt_over_p2p_at_the_link_rate():
    # H100 NVL (PCIe 5.0 x16, P2P): busbw 63.008 x 0.65 = 40.955 GB/s; a 2-GPU prompt all-reduce over NCCL
    # (29.4 MB > vLLM's 8 MiB custom limit): 12 us + 1 x 29,360,128 / 40.955e9 = 728.9 us; x 64 = 46.65 ms
    # (the former 12 GB/s for every PCIe card gave 157.4 ms)
    s = _speed("h100-nvl", 2)
    p = _part(s, "prefill: tensor-parallel all-reduces")
    assert p.seconds == pytest.approx(64 * (12e-6 + MSG / (GEN5_X16 * 0.65)), rel=1e-9)
    assert p.seconds == pytest.approx(0.04665, rel=1e-3)
    assert "PCIe P2P" in p.formula and "(NCCL)" in p.formula


def test_tp_2_no_longer_slows_the_first_token_on_a_gen5_datacenter_pair():
    # the trial's repro (t29 item 8): tp 1 TTFT 0.115 s; tp 2 was 0.215 s with 157.4 ms of all-reduces. Each
    # card now does half the prompt's GEMMs (97 ms -> 49 ms) and pays 46.6 ms of all-reduces: 0.105 s < 0.115 s
    one, two = _speed("h100-nvl", 1), _speed("h100-nvl", 2)
    assert two.ttft_s < one.ttft_s
    assert two.tpot_s < one.tpot_s


def test_a_geforce_pair_goes_through_host_memory():
    # RTX 4090 (PCIe 4.0 x16, no P2P): busbw 31.504 x 0.556 = 17.516 GB/s; 12 us + 29,360,128 / 17.516e9 =
    # 1,688 us; x 64 = 108.0 ms
    p = _part(_speed("rtx-4090", 2), "prefill: tensor-parallel all-reduces")
    assert p.seconds == pytest.approx(64 * (12e-6 + MSG / (GEN4_X16 * 0.556)), rel=1e-9)
    assert p.seconds == pytest.approx(0.1080, rel=1e-3)
    assert "host memory" in p.formula


def test_four_geforce_cards_pay_the_ring_factor_and_nccls_latency():
    # 4 x RTX 4090: 2 (4 - 1) / 4 = 1.5 x 29,360,128 / 17.516e9 = 2,514 us + 40 us (8 x 4090 NCCL) = 2,554 us;
    # x 64 = 163.5 ms
    p = _part(_speed("rtx-4090", 4), "prefill: tensor-parallel all-reduces")
    assert p.seconds == pytest.approx(64 * (40e-6 + 1.5 * MSG / (GEN4_X16 * 0.556)), rel=1e-9)


def test_the_pcie_generation_sets_the_rate():
    # A100 80GB PCIe (Gen4, P2P) vs H100 PCIe (Gen5, P2P): the same share of a link twice as fast
    a100 = _part(_speed("a100-80gb-pcie", 2), "prefill: tensor-parallel all-reduces").seconds
    h100 = _part(_speed("h100-pcie", 2), "prefill: tensor-parallel all-reduces").seconds
    assert a100 - 64 * 12e-6 == pytest.approx(2 * (h100 - 64 * 12e-6), rel=1e-3)  # 1.969 x 2 = 3.938 per lane


def test_vllm_takes_its_custom_all_reduce_for_a_decode_step_on_a_p2p_pair():
    # vLLM custom_all_reduce.py: 2 PCIe GPUs that pass the P2P check, message < 8192 x 1024 B. One sequence:
    # 4096 x 2 = 8,192 B: 7.5 us + 8,192 / 40.955e9 = 7.70 us; x 64 = 0.4928 ms
    p = _part(_speed("h100-nvl", 2), "decode: tensor-parallel all-reduces")
    assert p.seconds == pytest.approx(64 * (7.5e-6 + 8192 / (GEN5_X16 * 0.65)), rel=1e-9)
    assert "vLLM custom all-reduce" in p.formula
    assert p.assumed  # no measurement of vLLM's own kernel on 2 PCIe GPUs was found


def test_custom_all_reduce_is_off_for_geforce_for_more_than_two_and_for_large_messages():
    from planner.speed.collectives import VLLM_CUSTOM_AR_MAX_BYTES, tp_link

    gpus = {g.id: g for g in _cat().gpus}
    assert tp_link(gpus["h100-nvl"], 2, "vllm").custom_latency_s == 7.5e-6
    assert tp_link(gpus["rtx-4090"], 2, "vllm").custom_latency_s is None  # _can_p2p fails on GeForce
    assert tp_link(gpus["h100-nvl"], 4, "vllm").custom_latency_s is None  # "more than two PCIe-only GPUs"
    assert tp_link(gpus["h100-nvl"], 2, "hf").custom_latency_s is None  # Transformers runs NCCL
    link = tp_link(gpus["h100-nvl"], 2, "vllm")
    assert not link.custom(VLLM_CUSTOM_AR_MAX_BYTES)  # should_custom_ar: inp_size < max_size
    # 8 MiB exactly: NCCL's 12 us + 8,388,608 / 40.955e9 = 216.8 us
    assert link.allreduce_s(VLLM_CUSTOM_AR_MAX_BYTES, 2) == pytest.approx(12e-6 + 8388608 / (GEN5_X16 * 0.65))


def test_more_than_two_p2p_cards_run_nccl_at_its_measured_latency():
    # 4 x L40S (Gen4, P2P): NCCL 24 us (8 x RTX PRO 6000, 256 B-8 KB); decode 8,192 B: 24 us + 1.5 x 8,192 /
    # (31.504e9 x 0.65) = 24.60 us; x 64 = 1.574 ms
    p = _part(_speed("l40s", 4), "decode: tensor-parallel all-reduces")
    assert p.seconds == pytest.approx(64 * (24e-6 + 1.5 * 8192 / (GEN4_X16 * 0.65)), rel=1e-9)


def test_a_slower_host_link_is_used_when_the_caller_gives_it():
    # a Gen5 card in a Gen4 host: 1.969 GB/s x 16 lanes x 0.65 = 20.48 GB/s
    from planner.speed.collectives import tp_link

    gpus = {g.id: g for g in _cat().gpus}
    link = tp_link(gpus["h100-nvl"], 2, "vllm", per_lane=1.969e9, lanes=16)
    assert link.busbw == pytest.approx(1.969e9 * 16 * 0.65)
    assert tp_link(gpus["h100-nvl"], 2, "vllm").busbw == pytest.approx(GEN5_X16 * 0.65)


def test_nvlink_modules_keep_the_nvlink_figures():
    # H100 SXM: 900 GB/s both directions -> 450 x 0.75 = 337.5 GB/s; 8 us + 29,360,128 / 337.5e9 = 95.0 us; x 64
    p = _part(_speed("h100-sxm", 2), "prefill: tensor-parallel all-reduces")
    assert p.seconds == pytest.approx(64 * (8e-6 + MSG / (450e9 * 0.75)), rel=1e-9)


def test_a_pcie_cards_nvlink_bridge_is_not_used_because_no_quote_includes_it():
    # gpus.yaml gives the H100 NVL 600 GB/s "only with NVLink bridges"; platform parts have no bridge category
    gpus = {g.id: g for g in _cat().gpus}
    assert gpus["h100-nvl"].interconnect_bytes_per_s == 600e9
    assert gpus["h100-nvl"].quoted_link_bytes_per_s == 0.0


def test_rows_without_a_link_are_timed_as_a_gen4_card_through_host_memory():
    # the solver's per-row decode rate passes only NVLink figures (interconnect 0 for PCIe rows): those rows
    # take PCIe 4.0 x16 through host memory, 12 us + 8,192 / 17.516e9 per 2-GPU all-reduce, never faster than
    # a P2P card's own link
    import numpy as np

    from planner.speed.inference import decode_step

    arch = SimpleNamespace(hidden_size=4096, num_hidden_layers=32, num_experts_per_tok=None, num_local_experts=None,
                           is_moe=False)
    w = SimpleNamespace(infer=SimpleNamespace(engine="vllm", tp=2, concurrency=1, weights="bf16"), architecture=arch,
                        gpus_per_node=None)
    dr = SimpleNamespace(weights_read=1e9, kv_per_token=0.0, mean_kv=0.0, host_blocks=0, params=1e9)
    out = decode_step(dr, w, gpu_bandwidth=np.array([1e12, 1e12]), host_bandwidth=1e11,
                      peak_flops=np.array([1e15, 1e15]), gemm_eff=0.8, interconnect=np.array([0.0, 900e9]))
    ar = out[-1]
    assert ar[0] == pytest.approx(64 * (12e-6 + 8192 / (GEN4_X16 * 0.556)))
    assert ar[1] == pytest.approx(64 * (8e-6 + 8192 / (450e9 * 0.75)))
