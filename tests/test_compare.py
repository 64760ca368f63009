"""Time model, TCO, cloud fit, break-even and the compare command, with hand-computed figures.

Every expected value is worked out in the comment beside it. Money is USD; a month is 730 h.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.architecture import from_hf_config
from planner.catalog import Catalog, CloudInstance, Gpu, PcieGen, load_catalog
from planner.cloud import cloud_fits, cloud_table, retarget
from planner.compare import LocalMachine, LocalRun, compare_machine, comparison_text, comparison_to_dict
from planner.errors import ScenarioError
from planner.fields import Entry
from planner.memory import estimate
from planner.tco import (
    CostInputs,
    break_even_hours,
    break_even_months,
    cloud_cost_usd,
    energy_usd_per_hour,
    local_tco_usd,
    local_usd_per_busy_hour,
    read_costs,
    usd_per_million_tokens,
)
from planner.timing import (
    compute_seconds,
    decode_step_seconds,
    default_mfu,
    offload_bytes_per_gpu,
    pcie_bytes_per_s,
    prefill_seconds,
    training_flops,
    transfer_seconds,
)
from planner.units import GiB
from planner.workload import workload_from_mapping

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


# ----- time model ---------------------------------------------------------------------------------

def test_training_flops_full_and_recomputation():
    # Kaplan et al. 2020: 6 x P x T. P = 7e9, T = 1e9: 6 x 7e9 x 1e9 = 4.2e19.
    assert training_flops(params=7e9, tokens=1e9) == pytest.approx(4.2e19)
    # Full recomputation adds a forward pass: 8 x 7e9 x 1e9 = 5.6e19.
    assert training_flops(params=7e9, tokens=1e9, checkpointing="full") == pytest.approx(5.6e19)


def test_training_flops_lora():
    # Frozen base: forward 2PT + input gradients 2PT; adapters 6AT.
    # P = 7e9, A = 1e7, T = 1e8: 4 x 7e9 x 1e8 + 6 x 1e7 x 1e8 = 2.8e18 + 6e15 = 2.806e18.
    assert training_flops(params=7e9, tokens=1e8, method="lora", adapter_params=1e7) == pytest.approx(2.806e18)
    # + recomputed forward 2 x (P + A) x T = 2 x 7.01e9 x 1e8 = 1.402e18 -> 4.208e18.
    assert training_flops(params=7e9, tokens=1e8, method="qlora", adapter_params=1e7,
                          checkpointing="full") == pytest.approx(4.208e18)


def test_compute_seconds_for_a_flop_count():
    # 6e18 FLOPs on 2 cards of 100 TFLOPS at MFU 0.5: 6e18 / (2 x 100e12 x 0.5) = 6e18 / 1e14 = 60,000 s.
    assert compute_seconds(flops=6e18, gpus=2, tflops_per_gpu=100, mfu=0.5) == pytest.approx(60_000)
    with pytest.raises(ValueError):
        compute_seconds(flops=1, gpus=0, tflops_per_gpu=100, mfu=0.5)


def test_default_mfu_per_recipe_and_method():
    assert default_mfu(recipe="mixed-bf16").value == 0.40
    assert default_mfu(recipe="fp32").value == 0.20
    # QLoRA: 0.40 x 0.7 = 0.28; LoRA 0.40 x 0.9 = 0.36.
    assert default_mfu(recipe="pure-bf16", method="qlora").value == pytest.approx(0.28)
    assert default_mfu(recipe="pure-bf16", method="lora").value == pytest.approx(0.36)
    assert "assumption" in default_mfu(recipe="pure-bf16", method="qlora").reason


def test_offload_over_pcie():
    # ZeRO-Offload, 1 rank, 7e9 trainable params, 10 optimizer steps: each step 2 B gradients down
    # + 2 B parameters up per param: 4 x 7e9 x 10 = 2.8e11 B.
    moved = offload_bytes_per_gpu(params=7e9, trainable_params=7e9, data_parallel=1, micro_batches=160,
                                  optimizer_steps=10, offload_optimizer=True, offload_params=False)
    assert moved == pytest.approx(2.8e11)
    # PCIe gen4 x16: 1.969 GB/s x 16 lanes x 0.85 = 26.7784 GB/s; 2.8e11 / 26.7784e9 = 10.456 s.
    bw = pcie_bytes_per_s(per_lane_bytes_per_s=1.969e9, lanes=16)
    assert bw == pytest.approx(26.7784e9)
    assert transfer_seconds(bytes_moved=moved, bytes_per_s=bw) == pytest.approx(2.8e11 / 26.7784e9)
    assert 10.45 < transfer_seconds(bytes_moved=moved, bytes_per_s=bw) < 10.46
    # ZeRO-Infinity parameter offload, with recomputation: 3 passes x 2 B x 7e9 per micro-batch, 4 micro-batches
    # = 1.68e11 B.
    assert offload_bytes_per_gpu(params=7e9, trainable_params=7e9, data_parallel=1, micro_batches=4,
                                 optimizer_steps=1, offload_optimizer=False, offload_params=True,
                                 checkpointing="full") == pytest.approx(1.68e11)


def test_decode_is_memory_bound_at_batch_1():
    # 7B bf16 weights 14e9 B + 1 seq x 524,288 B/token (Llama-2-7B KV, 2x32x32x128x2) x 1,000 tokens
    # = 14.524288e9 B per step; at 1 TB/s x MBU 0.7: 14.524288e9 / 0.7e12 = 20.749 ms.
    mem, comp = decode_step_seconds(weight_bytes=14e9, kv_bytes_per_token=524_288, kv_tokens=1000, concurrency=1,
                                    bandwidth_bytes_per_s=1e12, mbu=0.7, params=7e9, tflops=100, mfu=0.4)
    assert mem == pytest.approx(14.524288e9 / 0.7e12)
    # compute: 2 x 7e9 x 1 / (100e12 x 0.4) = 1.4e10 / 4e13 = 0.35 ms.
    assert comp == pytest.approx(0.35e-3)
    # prefill of 2,000 tokens: 2 x 7e9 x 2,000 / (100e12 x 0.4) = 2.8e13 / 4e13 = 0.7 s.
    assert prefill_seconds(params=7e9, tokens=2000, tflops=100, mfu=0.4) == pytest.approx(0.7)


def qlora_7b_seed(catalog):
    """The seed QLoRA-7B workload (scenarios/compare-qlora-7b-12gb.yaml) and its estimate."""
    from planner.inputs import workload_from_options

    w = workload_from_options(dict(model="llama-2-7b", task="train", method="qlora", recipe="pure-bf16",
                                   micro_batch=1, seq_len=512, grad_accum=16, checkpointing="full",
                                   dataset_tokens=100_000_000), catalog)
    return w, estimate(w)


def test_qlora_7b_on_rtx_3060_hand_computed(shipped):
    from planner.compare import pcie_per_lane
    from planner.timing import time_workload

    w, est = qlora_7b_seed(shipped)
    gpu = shipped.gpu("rtx-3060-12gb")
    jt = time_workload(workload=w, estimate=est, gpu=gpu, gpu_count=1,
                       pcie_per_lane_bytes_per_s=pcie_per_lane(shipped, 4))
    # P = 6,738,415,616; A = 8,388,608 (r=16 on q_proj and v_proj: 32 layers x 2 x 16 x (4096 + 4096)).
    assert est.trainable_parameters == 8_388_608
    # FLOPs per token = 4P + 6A + 2(P + A) = 6P + 8A = 40,430,493,696 + 67,108,864 = 40,497,602,560.
    per_token = 40_497_602_560
    # achieved = 1 x 25.5 TFLOPS x MFU 0.28 (0.40 x 0.7) = 7.14 TFLOPS -> 7.14e12 / 40,497,602,560 = 176.31 tokens/s
    assert jt.mfu == pytest.approx(0.28)
    assert jt.tokens_per_s == pytest.approx(7.14e12 / per_token)
    assert 176.3 < jt.tokens_per_s < 176.4
    # 1e8 tokens x 40,497,602,560 / 7.14e12 = 567,193.3 s = 157.55 h
    assert jt.seconds_per_job == pytest.approx(1e8 * per_token / 7.14e12)
    assert jt.hours_per_job == pytest.approx(157.55, abs=0.01)
    assert any("4 x P + 6 x A" in line for line in jt.lines)


def test_catalog_mfu_scale_scales_the_default_mfu_not_the_users(shipped):
    # A card whose software stack reaches a smaller share of its datasheet TFLOPS carries
    # mfu_scale in the catalog: the default MFU (0.28 for QLoRA pure-bf16, as above) is scaled,
    # so the time grows by 1 / scale; a scenario's own costs.mfu is the user's figure and is not.
    from dataclasses import replace

    from planner.compare import pcie_per_lane
    from planner.timing import time_workload

    w, est = qlora_7b_seed(shipped)
    base = shipped.gpu("rtx-3060-12gb")
    slow = replace(base, mfu_scale=0.5)
    lane = pcie_per_lane(shipped, 4)
    t_base = time_workload(workload=w, estimate=est, gpu=base, gpu_count=1, pcie_per_lane_bytes_per_s=lane)
    t_slow = time_workload(workload=w, estimate=est, gpu=slow, gpu_count=1, pcie_per_lane_bytes_per_s=lane)
    assert t_slow.mfu == pytest.approx(0.28 * 0.5)
    assert t_slow.seconds_per_job == pytest.approx(2 * t_base.seconds_per_job)
    assert "mfu_scale" in t_slow.mfu_reason
    user = time_workload(workload=w, estimate=est, gpu=slow, gpu_count=1, pcie_per_lane_bytes_per_s=lane, mfu=0.3)
    assert user.mfu == 0.3


# ----- TCO and break-even (pure functions) ----------------------------------------------------------

# One machine for the hand-computed cases: capex $10,000, residual 20 %, 3 years, no support;
# 1 GPU of 450 W at full power + 300 W platform = 750 W; $0.15/kWh, PUE 1.0:
# e = 0.75 kWh x $0.15 = $0.1125 per busy hour; F = 10,000 x 0.8 = $8,000.
MACHINE = dict(capex_usd=10_000.0, residual_fraction=0.2, years=3.0, support_usd_per_year=0.0)


def e_machine() -> float:
    return energy_usd_per_hour(gpu_count=1, gpu_tdp_w=450, platform_w=300, usd_per_kwh=0.15, pue=1.0)


def test_energy_and_local_tco():
    assert e_machine() == pytest.approx(0.1125)
    # PUE 1.4 and 80 % GPU power: (450 x 0.8 + 300) / 1000 x 0.15 x 1.4 = 0.66 x 0.21 = $0.1386/h.
    assert energy_usd_per_hour(gpu_count=1, gpu_tdp_w=450, platform_w=300, usd_per_kwh=0.15, pue=1.4,
                               gpu_power_fraction=0.8) == pytest.approx(0.1386)
    # TCO for 10,000 busy hours: 8,000 + 0 + 0.1125 x 10,000 = $9,125.
    assert local_tco_usd(hours=10_000, energy_usd_per_hour=e_machine(), **MACHINE) == pytest.approx(9_125)
    # with $600/yr support: 9,125 + 1,800 = $10,925.
    assert local_tco_usd(hours=10_000, energy_usd_per_hour=e_machine(),
                         **{**MACHINE, "support_usd_per_year": 600}) == pytest.approx(10_925)
    # cloud: 1,000 h at $2.50/h with 20 % off = $2,000.
    assert cloud_cost_usd(hours=1000, usd_per_hour=2.5, discount=0.2) == pytest.approx(2000)


def test_break_even_hours_closed_form():
    # Cloud at $2.00 per local busy hour: H* = F / (c - e) = 8,000 / (2.00 - 0.1125) = 8,000 / 1.8875 = 4,238.41 h.
    be = break_even_hours(energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value == pytest.approx(8_000 / 1.8875, rel=1e-9)
    assert be.value == pytest.approx(4_238.41, abs=0.01)
    assert be.cheaper_before == "cloud" and be.local_wins_at_horizon


def test_cloud_wins_at_low_utilization():
    # 10 % utilization: h = 0.1 x 730 = 73 h/month; M* = F / (h (c - e)) = 8,000 / (73 x 1.8875)
    # = 8,000 / 137.7875 = 58.06 months > 36 months: no crossing in the ownership period.
    be = break_even_months(hours_per_month=73, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value is None and be.cheaper_before == "cloud"
    assert not be.local_wins_at_horizon
    assert "cloud is cheaper throughout" in be.text
    # over 36 months: local 8,000 + 0.1125 x 73 x 36 = 8,295.65; cloud 2.00 x 73 x 36 = 5,256.
    assert local_tco_usd(hours=73 * 36, energy_usd_per_hour=e_machine(), **MACHINE) == pytest.approx(8_295.65)
    assert 2.0 * 73 * 36 == pytest.approx(5_256)


def test_local_wins_within_a_year():
    # 50 % utilization: h = 365; M* = 8,000 / (365 x 1.8875) = 8,000 / 688.9375 = 11.612 months.
    be = break_even_months(hours_per_month=365, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value == pytest.approx(8_000 / 688.9375, rel=1e-9)
    assert be.value == pytest.approx(11.612, abs=0.001)
    assert be.value < 12
    # and M* x h equals H* when there is no support cost: 11.612 x 365 = 4,238.41.
    assert be.value * 365 == pytest.approx(8_000 / 1.8875, rel=1e-9)


def test_break_even_with_support():
    # $600/yr support: M* = F / (h (c - e) - S/12) = 8,000 / (688.9375 - 50) = 8,000 / 638.9375 = 12.521 months;
    # H* = (F + S x D) / (c - e) = (8,000 + 1,800) / 1.8875 = 5,192.05 h.
    m = {**MACHINE, "support_usd_per_year": 600.0}
    months = break_even_months(hours_per_month=365, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **m)
    hours = break_even_hours(energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **m)
    assert months.value == pytest.approx(8_000 / 638.9375, rel=1e-9)
    assert hours.value == pytest.approx(9_800 / 1.8875, rel=1e-9)


def test_cloud_cheaper_than_electricity_never_breaks_even():
    # Cloud at $0.10 per local hour is below e = $0.1125: local loses every hour; no crossing at all.
    be = break_even_hours(energy_usd_per_hour=e_machine(), cloud_usd_per_hour=0.10, **MACHINE)
    assert be.value is None and be.cheaper_before == "cloud"


def test_cost_per_busy_hour_and_per_million_tokens():
    # (F + S x D) / (h x 12 x D) + e = 8,000 / (365 x 36) + 0.1125 = 0.608828 + 0.1125 = $0.721328/h
    x = local_usd_per_busy_hour(hours_per_month=365, energy_usd_per_hour=e_machine(), **MACHINE)
    assert x == pytest.approx(8_000 / 13_140 + 0.1125)
    # $3.60/h at 1,000 tokens/s: 3.60 / 3.6e6 tokens x 1e6 = $1.00 per million tokens.
    assert usd_per_million_tokens(usd_per_hour=3.6, tokens_per_s=1000) == pytest.approx(1.0)


# ----- reading costs: ----------------------------------------------------------------------------------

def costs_entry(data):
    return Entry(data, file="s.yaml", path="costs", error=ScenarioError)


def test_read_costs_defaults_and_given():
    c = read_costs(None)
    assert (c.usd_per_kwh, c.pue, c.depreciation_years, c.residual_fraction, c.support_usd_per_year) == \
        (0.13, 1.0, 3.0, 0.2, 0.0)
    assert "EIA" in c.source_of("usd_per_kwh") and "assumption" in c.source_of("residual_fraction")
    c = read_costs(costs_entry({"utilization": 0.5, "usd_per_kwh": 0.2, "pue": 1.4, "mfu": {"a": 0.3},
                                "providers": ["aws"], "spot": False}))
    assert c.utilization == 0.5 and c.pue == 1.4 and c.mfu_for("a") == 0.3 and c.mfu_for("b") is None
    assert c.providers == ("aws",) and c.spot is False
    assert c.source_of("pue") == "given in the scenario (costs)"


@pytest.mark.parametrize("data, message", [
    ({"utilisation": 0.5}, "unknown key 'utilisation'. Did you mean 'utilization'?"),
    ({"utilization": 0.5, "hours_per_month": 100}, "give utilization or hours_per_month, not both"),
    ({"utilization": 1.5}, "must be at most 1"),
    ({"pue": 0.9}, "must be at least 1"),
    ({"usd_per_kwh": "13 cents"}, "must be a number"),
    ({"cloud_discount": 1.0}, "must be at most 0.99"),
    ({"depreciation_years": 0}, "must be more than 0"),
])
def test_read_costs_errors(data, message):
    with pytest.raises(ScenarioError) as info:
        read_costs(costs_entry(data))
    assert message in str(info.value)
    assert str(info.value).startswith("s.yaml")


def test_read_costs_checks_cloud_names(shipped):
    with pytest.raises(ScenarioError) as info:
        read_costs(costs_entry({"providers": ["amazon"]}), shipped)
    assert "no cloud provider 'amazon'" in str(info.value)
    with pytest.raises(ScenarioError) as info:
        read_costs(costs_entry({"instances": ["aws-g5-xlarg"]}), shipped)
    assert "Did you mean 'aws-g5-xlarge'" in str(info.value)


# ----- a tiny synthetic catalog for the whole comparison ------------------------------------------------

def gpu(gid: str, *, tflops: float, memory_gib: int, tdp: int, bf16: bool = True) -> Gpu:
    return Gpu(id=gid, name=gid, vendor="nvidia", segment="datacenter", architecture="test",
               memory_bytes=memory_gib * GiB, memory_usable_bytes=memory_gib * GiB,
               memory_bandwidth_bytes_per_s=1e12, bf16_tflops=tflops, bf16=bf16, fp8=False, int8=True, pcie_gen=4,
               pcie_lanes=16, tdp_w=tdp, form_factor="pcie", slot_width=2, price_usd=1000.0, price_kind="msrp",
               source="test", as_of="2026-01")


def instance(iid: str, gpu_id: str, *, usd: float, spot: float | None, ram_gib: int, count: int = 1) -> CloudInstance:
    return CloudInstance(id=iid, provider="testcloud", instance=iid, gpu=gpu_id, gpu_count=count, vcpus=8,
                         memory_bytes=ram_gib * GiB, usd_per_hour=usd, region="r", source="test", as_of="2026-01",
                         spot_usd_per_hour=spot)


@pytest.fixture(scope="module")
def tiny(shipped):
    cat = Catalog(
        schema_version=1,
        gpus=(gpu("local-card", tflops=100, memory_gib=24, tdp=300), gpu("cloud-card", tflops=200, memory_gib=80,
                                                                         tdp=400),
              gpu("small-card", tflops=50, memory_gib=8, tdp=100), gpu("old-card", tflops=50, memory_gib=80, tdp=100,
                                                                        bf16=False)),
        pcie=(PcieGen(id="pcie-gen4", gen=4, per_lane_bytes_per_s=1.969e9, source="t", as_of="2026-01"),),
        instances=(instance("cloud-fast", "cloud-card", usd=2.0, spot=1.0, ram_gib=64),
                   instance("cloud-tiny-ram", "cloud-card", usd=0.5, spot=None, ram_gib=4),
                   instance("cloud-small-gpu", "small-card", usd=0.1, spot=None, ram_gib=64),
                   instance("cloud-no-bf16", "old-card", usd=0.2, spot=None, ram_gib=64),
                   instance("cloud-2x", "cloud-card", usd=4.4, spot=None, ram_gib=128, count=2)),
    )
    arch = from_hf_config(shipped.model("gpt2").config, "gpt2")
    w = workload_from_mapping({"model": "gpt2", "task": "train", "method": "full", "recipe": "mixed-bf16",
                               "micro_batch": 8, "seq_len": 1024, "dataset_tokens": 1_000_000_000},
                              lambda name, entry: (name, "test", arch))
    machine = LocalMachine(description="1 x local-card", gpu=cat.gpu("local-card"), gpus_per_node=1, nodes=1,
                           platform_w=200, capex_usd=5_000.0, pcie_per_lane_bytes_per_s=1.969e9, pcie_lanes=16)
    return cat, w, machine


P_GPT2 = 124_439_808  # GPT-2 small, tied embeddings


def test_cloud_fit_reasons(tiny):
    cat, w, _ = tiny
    df = cloud_table(w, cat)
    assert list(df["instance_id"][df["feasible"]]) == ["cloud-fast", "cloud-2x"]
    why = dict(zip(df["instance_id"], df["why_not"]))
    assert "host RAM" in why["cloud-tiny-ram"] and "4.00 GiB" in why["cloud-tiny-ram"]
    # small-card: 8 GiB in nvidia-smi less the 430 MiB driver reservation = 7.58 GiB CUDA total
    assert "per GPU" in why["cloud-small-gpu"] and "7.58 GiB CUDA total" in why["cloud-small-gpu"]
    assert "no bf16 support" in why["cloud-no-bf16"]
    assert all(col.endswith(("_bytes", "_usd", "_per_hour", "_id", "_count")) or col in (
        "provider", "instance", "region", "replicas", "feasible", "why_not", "as_of", "source")
        for col in df.columns)
    # training re-targeted to the instance's 2 GPUs (data parallel)
    fits = {f.instance.id: f for f in cloud_fits(w, cat)}
    assert fits["cloud-2x"].workload.train.gpus == 2


def test_retarget_inference_replicas(shipped):
    from planner.inputs import workload_from_options

    w = workload_from_options(dict(model="llama-2-7b", task="infer", tp=2), shipped)
    assert retarget(w, 8)[1] == 4
    assert retarget(w, 1)[0] is None and "tp=2" in retarget(w, 1)[2]


def test_compare_local_wins_within_a_year(tiny):
    cat, w, machine = tiny
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    wc = comp.workloads[0]
    # FLOPs per token 6 x 124,439,808 = 746,638,848; local 100 TFLOPS x 0.40 = 4e13 FLOP/s
    # -> 4e13 / 746,638,848 = 53,573.4 tokens/s; 1e9 tokens -> 18,665.97 s = 5.185 h.
    assert wc.local.tokens_per_s == pytest.approx(4e13 / (6 * P_GPT2))
    assert wc.local.seconds_per_job == pytest.approx(1e9 * 6 * P_GPT2 / 4e13)
    fast = wc.option("cloud-fast")
    # cloud card is twice as fast: k = 0.5, 2.5925 h per job, $2.00 x 2.5925 = $5.185 per job, spot $2.5925.
    assert fast.hours_per_local_hour == pytest.approx(0.5)
    assert fast.cost_per_job_usd == pytest.approx(2.0 * 1e9 * 6 * P_GPT2 / 8e13 / 3600)
    assert fast.spot_cost_per_job_usd == pytest.approx(1.0 * 1e9 * 6 * P_GPT2 / 8e13 / 3600)
    # cloud-2x: 2 cards at $4.40: same k per card, $4.40 x 0.25 = $1.10 per local hour -> loses to cloud-fast ($1.00).
    assert wc.option("cloud-2x").usd_per_local_hour == pytest.approx(1.10)
    assert wc.best_on_demand == "cloud-fast" and wc.best_spot == "cloud-fast"
    # e = (300 W + 200 W) / 1000 x $0.13 x 1.0 = $0.065/h; F = 5,000 x 0.8 = $4,000; c = $2.00 x 0.5 = $1.00
    assert comp.energy_usd_per_hour == pytest.approx(0.065)
    assert comp.net_capex_usd == pytest.approx(4_000)
    assert comp.cloud_usd_per_local_hour == pytest.approx(1.0)
    # h = 365: M* = 4,000 / (365 x (1.00 - 0.065)) = 4,000 / 341.275 = 11.721 months: local wins within a year.
    assert comp.break_even_months.value == pytest.approx(4_000 / 341.275, rel=1e-9)
    assert comp.break_even_months.value < 12
    # H* = 4,000 / 0.935 = 4,278.07 h.
    assert comp.break_even_hours.value == pytest.approx(4_000 / 0.935, rel=1e-9)
    # spot: c = $0.50; M* = 4,000 / (365 x 0.435) = 4,000 / 158.775 = 25.193 months.
    assert comp.spot_break_even_months.value == pytest.approx(4_000 / 158.775, rel=1e-9)
    # local per busy hour = 4,000 / (365 x 36) + 0.065 = 0.304414 + 0.065 = $0.369414;
    # per job x 5.185 h = $1.9154.
    per_hour = 4_000 / 13_140 + 0.065
    assert comp.local_usd_per_hour == pytest.approx(per_hour)
    assert wc.local_cost_per_job_usd == pytest.approx(per_hour * 1e9 * 6 * P_GPT2 / 4e13 / 3600)
    # TCO over 3 years: 4,000 + 0.065 x 365 x 36 = 4,000 + 854.10 = $4,854.10; cloud 1.00 x 13,140 = $13,140.
    assert comp.tco_usd == pytest.approx(4_854.10)
    assert comp.cloud_cost_usd == pytest.approx(13_140)
    text = comparison_text(comp)
    assert "local pays off after 11.7 months" in text
    assert "does not fit: cloud-tiny-ram" in text
    doc = comparison_to_dict(comp)
    json.dumps(doc, allow_nan=False)
    assert doc["break_even"]["on_demand"]["months"]["value"] == pytest.approx(4_000 / 341.275)


def test_compare_text_without_a_job_size(tiny):
    """No dataset_tokens: no time or cost per job; the line says so instead of printing '-'."""
    cat, w, machine = tiny
    w = replace(w, train=replace(w.train, dataset_tokens=None))
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    lines = comparison_text(comp).splitlines()
    # 4e13 FLOP/s / (6 x 124,439,808 FLOPs per token) = 53,573.4 tokens/s (test_compare_local_wins_within_a_year)
    local = [ln for ln in lines if ln.startswith("  local: per job")]
    assert len(local) == 1
    assert local[0].startswith("  local: per job: n/a (no dataset_tokens), 53,573.4 tokens/s, $")
    assert local[0].endswith(" per M tokens (at 50% utilization)")
    fast = [ln for ln in lines if ln.startswith("    cloud-fast:")]
    assert len(fast) == 1 and "per job" not in fast[0]
    assert fast[0].startswith("    cloud-fast: 1 x cloud-card, $2/h, $") and "; spot $" in fast[0]
    assert not any("- per job" in ln or "spot  " in ln for ln in lines)


def test_compare_cloud_wins_at_low_utilization(tiny):
    cat, w, machine = tiny
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.1))
    # h = 73: M* = 4,000 / (73 x 0.935) = 4,000 / 68.255 = 58.6 months > 36: cloud cheaper throughout.
    assert comp.break_even_months.value is None and comp.break_even_months.cheaper_before == "cloud"
    # TCO 4,000 + 0.065 x 73 x 36 = 4,170.82 against cloud 1.00 x 73 x 36 = 2,628.
    assert comp.tco_usd == pytest.approx(4_170.82)
    assert comp.cloud_cost_usd == pytest.approx(2_628)
    # the break-even in hours does not depend on utilization: still 4,278.07 h, but 3 years hold only 2,628 busy h.
    assert comp.break_even_hours.value == pytest.approx(4_000 / 0.935)
    assert "cloud is cheaper throughout the 36 months" in comparison_text(comp)


def test_compare_discount_and_hours_sources(tiny):
    cat, w, machine = tiny
    w2 = replace(w, hours_per_month=200.0)
    comp = compare_machine(machine=machine, runs=[LocalRun(w2, estimate(w2))], catalog=cat,
                           costs=CostInputs(cloud_discount=0.25))
    # h from the workload: 200 h/month; c = 2.00 x 0.75 x 0.5 = $0.75;
    # M* = 4,000 / (200 x (0.75 - 0.065)) = 4,000 / 137 = 29.197 months.
    assert comp.hours_per_month == 200 and "workloads" in comp.hours_source
    assert comp.cloud_usd_per_local_hour == pytest.approx(0.75)
    assert comp.break_even_months.value == pytest.approx(4_000 / 137)
    # nothing given: the default 25 % utilization (182.5 h).
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat, costs=CostInputs())
    assert comp.hours_per_month == pytest.approx(182.5) and "assumption" in comp.hours_source


def test_compare_without_feasible_cloud(tiny):
    cat, w, machine = tiny
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(instances=("cloud-tiny-ram",)))
    assert comp.cloud_usd_per_local_hour is None and comp.break_even_months is None
    assert any("no feasible cloud instance" in n for n in comp.notes)


# ----- the command and the seed scenario --------------------------------------------------------------

def run_compare(*args):
    from planner.cli import main

    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


def test_seed_scenario_compare_json(tmp_path):
    result = run_compare(str(SEED), "--json", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    wl = doc["workloads"][0]
    fits = {o["instance_id"]: o["feasible"] for o in wl["cloud"]}
    # the 16 GiB xlarge sizes cannot hold the 19.6 GiB host-RAM peak; the 64 GiB 4xlarge sizes can
    assert fits == {"aws-g5-xlarge": False, "aws-g6-xlarge": False, "aws-g5-4xlarge": True, "aws-g6-4xlarge": True}
    assert wl["best_on_demand"] == "aws-g6-4xlarge"
    # the break-even follows from the printed figures: M* = F / (h (c - e))
    F = doc["local"]["net_capex_usd"]
    e = doc["local"]["energy_usd_per_hour"]
    c = doc["cloud"]["usd_per_local_hour"]
    h = doc["costs"]["hours_per_month"]
    assert h == pytest.approx(365)
    months = doc["break_even"]["on_demand"]["months"]["value"]
    assert months == pytest.approx(F / (h * (c - e)), rel=1e-9)
    # the written files
    assert (tmp_path / "compare-qlora-7b-12gb-compare.json").exists()
    assert (tmp_path / "compare-qlora-7b-12gb-compare.xlsx").exists()


def test_compare_command_bad_costs(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("  utilization: 0.5", "  utilisation: 0.5"))
    from planner.cli import main

    result = CliRunner().invoke(main, ["compare", str(bad)])
    assert result.exit_code == 2
    assert "costs.utilisation: unknown key 'utilisation'. Did you mean 'utilization'?" in result.output


def test_compare_help_has_example():
    from planner.cli import main

    result = CliRunner().invoke(main, ["compare", "--help"])
    assert result.exit_code == 0 and "Example:" in result.output


def test_seed_scenario_text():
    result = run_compare(str(SEED))
    assert result.exit_code == 0, result.output
    assert "does not fit: aws-g5-xlarge" in result.output
    assert "Break-even (on-demand)" in result.output


def test_spot_comparison_takes_on_demand_where_cheaper(tiny):
    # A renter who can use spot still takes an on-demand offer that is cheaper than every spot
    # price. Add 'cloud-cheap' (the fast card at $0.80/h on demand, no spot): per local hour
    # 0.80 x 0.5 = $0.40, below cloud-fast's spot 1.00 x 0.5 = $0.50, so the spot c is $0.40.
    from dataclasses import replace as dc_replace

    cat, w, machine = tiny
    cat = dc_replace(cat, instances=cat.instances + (instance("cloud-cheap", "cloud-card", usd=0.8, spot=None,
                                                              ram_gib=64),))
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    wc = comp.workloads[0]
    assert wc.best_on_demand == "cloud-cheap" and wc.best_spot == "cloud-fast"
    assert comp.cloud_usd_per_local_hour == pytest.approx(0.40)
    assert comp.spot_usd_per_local_hour == pytest.approx(0.40)
    # both break-evens then agree: M* = 4,000 / (365 x (0.40 - 0.065)) = 32.71 months.
    assert comp.spot_break_even_months.value == pytest.approx(comp.break_even_months.value)
