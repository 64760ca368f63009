"""Time model, TCO, cloud fit, break-even and the compare command, with hand-computed figures.

Every expected value is worked out in the comment beside it. Money is USD; a month is 730 h.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.model.architecture import from_hf_config
from planner.catalog.cloud import CloudInstance
from planner.catalog.gpus import Gpu
from planner.catalog.loader import Catalog, load_catalog
from planner.catalog.pcie import PcieGen
from planner.cost.cloud import cloud_fits, cloud_table, retarget
from planner.cost.compare import LocalMachine, LocalRun, compare_machine
from planner.cost.comparison_report import comparison_text, comparison_to_dict
from planner.core.errors import ScenarioError
from planner.core.fields import Entry
from planner.memory import estimate
from planner.cost.tco import (
    CostInputs,
    break_even_hours,
    break_even_months,
    cloud_cost_usd,
    energy_usd_per_hour,
    local_tco_usd,
    local_cumulative_usd,
    local_usd_per_busy_hour,
    read_costs,
    usd_per_million_tokens,
)
from planner.speed.timing import (
    compute_seconds,
    decode_step_seconds,
    default_mfu,
    offload_bytes_per_gpu,
    pcie_bytes_per_s,
    prefill_seconds,
    training_flops,
    transfer_seconds,
)
from planner.core.units import GiB
from planner.workload.spec import workload_from_mapping

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
    from planner.workload.inputs import workload_from_options

    w = workload_from_options(dict(model="llama-2-7b", task="train", method="qlora", recipe="pure-bf16",
                                   micro_batch=1, seq_len=512, grad_accum=16, checkpointing="full",
                                   dataset_tokens=100_000_000), catalog)
    return w, estimate(w)


def test_qlora_7b_on_rtx_3060_hand_computed(shipped):
    from planner.cost.compare import pcie_per_lane
    from planner.speed.timing import time_workload

    w, est = qlora_7b_seed(shipped)
    gpu = shipped.gpu("rtx-3060-12gb")
    # mfu= pins the one-factor rule (planner.speed.timing's docstring) this hand arithmetic follows, at
    # its default for QLoRA pure-bf16 on Ampere
    mfu = default_mfu(recipe="pure-bf16", method="qlora", gpu=gpu).value
    assert mfu == pytest.approx(0.308)
    jt = time_workload(workload=w, estimate=est, gpu=gpu, gpu_count=1,
                       pcie_per_lane_bytes_per_s=pcie_per_lane(shipped, 4), mfu=mfu)
    # P = 6,738,415,616; A = 8,388,608 (r=16 on q_proj and v_proj: 32 layers x 2 x 16 x (4096 + 4096)).
    assert est.trainable_parameters == 8_388_608
    # FLOPs per token = 4P + 6A + 2(P + A) = 6P + 8A = 40,430,493,696 + 67,108,864 = 40,497,602,560.
    per_token = 40_497_602_560
    # achieved = 1 x 25.5 TFLOPS x MFU 0.308 (Ampere's 0.44, planner.speed.traffic.ARCH_MFU, x QLoRA's 0.7)
    # = 7.854 TFLOPS -> 7.854e12 / 40,497,602,560 = 193.94 tokens/s
    assert jt.mfu == pytest.approx(0.308)
    assert jt.tokens_per_s == pytest.approx(7.854e12 / per_token)
    assert 193.9 < jt.tokens_per_s < 194.0
    # 1e8 tokens x 40,497,602,560 / 7.854e12 = 515,630.3 s = 143.23 h
    assert jt.seconds_per_job == pytest.approx(1e8 * per_token / 7.854e12)
    assert jt.hours_per_job == pytest.approx(143.23, abs=0.01)
    assert any("4 x P + 6 x A" in line for line in jt.lines)


def test_catalog_mfu_scale_scales_the_default_mfu_not_the_users(shipped):
    # A card whose software stack reaches a smaller share of its datasheet TFLOPS carries
    # mfu_scale in the catalog: the speed model scales its GEMM efficiency (planner.speed.constants.
    # gemm_efficiency), so the GEMM part of the step takes 1 / scale as long and the other parts
    # (attention, memory-bound ops, optimizer) stay; the one-factor rule's default MFU (0.308 for QLoRA
    # pure-bf16 on Ampere, as above) is scaled; a scenario's own costs.mfu is the user's figure and is not.
    import re
    from dataclasses import replace

    from planner.cost.compare import pcie_per_lane
    from planner.speed.timing import time_workload

    w, est = qlora_7b_seed(shipped)
    base = shipped.gpu("rtx-3060-12gb")
    slow = replace(base, mfu_scale=0.5)
    lane = pcie_per_lane(shipped, 4)
    t_base = time_workload(workload=w, estimate=est, gpu=base, gpu_count=1, pcie_per_lane_bytes_per_s=lane)
    t_slow = time_workload(workload=w, estimate=est, gpu=slow, gpu_count=1, pcie_per_lane_bytes_per_s=lane)

    def parts(jt):  # 'name: 1,234.567 ms = formula' -> {name: ms}
        found = (re.match(r"([a-z -]+): ([\d,.]+) ms = ", x) for x in jt.lines)
        return {m[1]: float(m[2].replace(",", "")) for m in found if m}

    pb, ps = parts(t_base), parts(t_slow)
    assert ps["gemm"] == pytest.approx(2 * pb["gemm"], rel=1e-5)
    assert {k: v for k, v in ps.items() if k != "gemm"} == {k: v for k, v in pb.items() if k != "gemm"}
    assert t_base.seconds_per_job < t_slow.seconds_per_job < 2 * t_base.seconds_per_job
    assert default_mfu(recipe="pure-bf16", method="qlora", gpu=slow).value == pytest.approx(0.308 * 0.5)
    assert "mfu_scale" in default_mfu(recipe="pure-bf16", method="qlora", gpu=slow).reason
    user = time_workload(workload=w, estimate=est, gpu=slow, gpu_count=1, pcie_per_lane_bytes_per_s=lane, mfu=0.3)
    assert user.mfu == 0.3
    assert user.seconds_per_job == time_workload(workload=w, estimate=est, gpu=base, gpu_count=1,
                                                 pcie_per_lane_bytes_per_s=lane, mfu=0.3).seconds_per_job


# ----- TCO and break-even (pure functions) ----------------------------------------------------------

# One machine for the hand-computed cases: capex $10,000, residual 20 %, 3 years, no support;
# 1 GPU of 450 W at full power + 300 W platform = 750 W; $0.15/kWh, PUE 1.0:
# e = 0.75 kWh x $0.15 = $0.1125 per busy hour; F = 10,000 x 0.8 = $8,000.
# The $10,000 is paid at month 0; the $2,000 resale is credited only at the sale after 36 months.
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


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_break_even_hours_closed_form():
    # Cloud at $2.00 per local busy hour: H* = F / (c - e) = 8,000 / (2.00 - 0.1125) = 8,000 / 1.8875 = 4,238.41 h.
    be = break_even_hours(energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value == pytest.approx(8_000 / 1.8875, rel=1e-9)
    assert be.value == pytest.approx(4_238.41, abs=0.01)
    assert be.cheaper_before == "cloud" and be.local_wins_at_horizon


def test_cloud_wins_at_low_utilization():
    # 10 % utilization: h = 0.1 x 730 = 73 h/month; the lines cross at M* = capex / (h (c - e))
    # = 10,000 / (73 x 1.8875) = 10,000 / 137.7875 = 72.58 months > 36 months, and at the sale the
    # TCO (below) is above the rent: no break-even in the ownership period.
    be = break_even_months(hours_per_month=73, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value is None and be.cheaper_before == "cloud" and not be.at_sale
    assert not be.local_wins_at_horizon
    assert "cloud is cheaper throughout" in be.text
    assert be.beyond == pytest.approx(10_000 / 137.7875, rel=1e-9)
    # over 36 months: local 8,000 + 0.1125 x 73 x 36 = 8,295.65; cloud 2.00 x 73 x 36 = 5,256.
    assert local_tco_usd(hours=73 * 36, energy_usd_per_hour=e_machine(), **MACHINE) == pytest.approx(8_295.65)
    assert 2.0 * 73 * 36 == pytest.approx(5_256)
    # The hours agree: H* = 8,000 / 1.8875 = 4,238.41 busy hours, more than the 73 x 36 = 2,628 the period holds.
    hours = break_even_hours(hours_per_month=73, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert hours.value is None and hours.horizon == pytest.approx(2_628)
    assert hours.beyond == pytest.approx(8_000 / 1.8875, rel=1e-9)
    assert "cloud is cheaper throughout the 2,628 busy hours" in hours.text


def test_local_wins_within_the_period():
    # 50 % utilization: h = 365; the full $10,000 is paid at month 0, so
    # M* = capex / (h (c - e)) = 10,000 / (365 x 1.8875) = 10,000 / 688.9375 = 14.515 months.
    be = break_even_months(hours_per_month=365, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value == pytest.approx(10_000 / 688.9375, rel=1e-9)
    assert be.value == pytest.approx(14.515, abs=0.001)
    assert be.cheaper_before == "cloud" and not be.at_sale
    # Busy hours over the period, resale included: H* = F / (c - e) = 8,000 / 1.8875 = 4,238.41, within the
    # 365 x 36 = 13,140 busy hours (M* x h = 5,297.9 h is more: the resale is not yet in hand at month 14.5).
    hours = break_even_hours(hours_per_month=365, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0,
                             **MACHINE)
    assert hours.value == pytest.approx(8_000 / 1.8875, rel=1e-9)
    assert hours.horizon == pytest.approx(13_140)


def test_break_even_with_support():
    # $600/yr support: M* = capex / (h (c - e) - S/12) = 10,000 / (688.9375 - 50) = 10,000 / 638.9375 = 15.651
    # months; H* = (F + S x D) / (c - e) = (8,000 + 1,800) / 1.8875 = 5,192.05 h.
    m = {**MACHINE, "support_usd_per_year": 600.0}
    months = break_even_months(hours_per_month=365, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **m)
    hours = break_even_hours(energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **m)
    assert months.value == pytest.approx(10_000 / 638.9375, rel=1e-9)
    assert hours.value == pytest.approx(9_800 / 1.8875, rel=1e-9)


def test_residual_is_credited_at_the_sale():
    # L(0) is the full purchase price, not capex x (1 - residual): $10,000.
    kw = dict(hours_per_month=365, capex_usd=10_000.0, residual_fraction=0.2, support_usd_per_year=0.0,
              energy_usd_per_hour=e_machine())
    assert local_cumulative_usd(months=0, **kw) == pytest.approx(10_000)
    # At month 36 before the sale: 10,000 + 0.1125 x 365 x 36 = 10,000 + 1,478.25 = 11,478.25;
    # sold: less the 2,000 resale = 9,478.25, which is the TCO over the period (8,000 + 1,478.25).
    assert local_cumulative_usd(months=36, **kw) == pytest.approx(11_478.25)
    assert local_cumulative_usd(months=36, sold=True, **kw) == pytest.approx(9_478.25)
    assert local_tco_usd(hours=365 * 36, energy_usd_per_hour=e_machine(), **MACHINE) == pytest.approx(9_478.25)


def test_break_even_only_at_the_sale():
    # h = 146 h/month: the lines cross at M* = 10,000 / (146 x 1.8875) = 10,000 / 275.575 = 36.288 months, just
    # after the period; but at the sale the TCO 8,000 + 0.1125 x 146 x 36 = 8,591.30 is below the rent
    # 2.00 x 146 x 36 = 10,512: local breaks even at month 36, when the machine is sold.
    be = break_even_months(hours_per_month=146, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **MACHINE)
    assert be.value == pytest.approx(36) and be.at_sale and be.cheaper_before == "cloud"
    assert be.beyond == pytest.approx(10_000 / 275.575, rel=1e-9)
    assert "when the machine is sold" in be.text
    # The hours agree: H* = 4,238.41 is within the 146 x 36 = 5,256 busy hours.
    hours = break_even_hours(hours_per_month=146, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0,
                             **MACHINE)
    assert hours.value == pytest.approx(8_000 / 1.8875, rel=1e-9)


@pytest.mark.parametrize("h", [50.0, 73.0, 117.0, 118.0, 146.0, 148.0, 200.0, 365.0, 700.0])
@pytest.mark.parametrize("support", [0.0, 600.0])
def test_break_even_hours_and_months_agree(h, support):
    # Both say whether the TCO at the end of the period (resale credited) is at most the rent:
    # a break-even month exists exactly when H* falls within the h x 36 busy hours. With no support
    # the boundary is h = 4,238.41 / 36 = 117.73 h/month (117 and 118 straddle it); with $600/yr,
    # h = 5,192.05 / 36 = 144.22.
    m = {**MACHINE, "support_usd_per_year": support}
    months = break_even_months(hours_per_month=h, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **m)
    hours = break_even_hours(hours_per_month=h, energy_usd_per_hour=e_machine(), cloud_usd_per_hour=2.0, **m)
    assert (months.value is not None) == (hours.value is not None)
    boundary = (8_000 + 3 * support) / 1.8875 / 36
    assert (months.value is not None) == (h >= boundary)


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
    assert "per GPU" in why["cloud-small-gpu"] and "offers 7.58 GiB (its CUDA total)" in why["cloud-small-gpu"]
    assert "no bf16 support" in why["cloud-no-bf16"]
    assert all(col.endswith(("_bytes", "_usd", "_per_hour", "_id", "_count")) or col in (
        "provider", "instance", "region", "replicas", "feasible", "why_not", "as_of", "source")
        for col in df.columns)
    # training re-targeted to the instance's 2 GPUs (data parallel)
    fits = {f.instance.id: f for f in cloud_fits(w, cat)}
    assert fits["cloud-2x"].workload.train.gpus == 2


def test_retarget_inference_replicas(shipped):
    from planner.workload.inputs import workload_from_options

    w = workload_from_options(dict(model="llama-2-7b", task="infer", tp=2), shipped)
    assert retarget(w, 8)[1] == 4
    assert retarget(w, 1)[0] is None and "tp=2" in retarget(w, 1)[2]


def test_compare_local_wins_within_the_period(tiny):
    cat, w, machine = tiny
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5, mfu=0.40))
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
    # h = 365, the full $5,000 paid at month 0: M* = 5,000 / (365 x (1.00 - 0.065)) = 5,000 / 341.275
    # = 14.651 months, within the 36.
    assert comp.break_even_months.value == pytest.approx(5_000 / 341.275, rel=1e-9)
    assert comp.break_even_months.value < 36 and not comp.break_even_months.at_sale
    # H* = F / (c - e) = 4,000 / 0.935 = 4,278.07 busy hours, within the 365 x 36 = 13,140 of the period.
    assert comp.break_even_hours.value == pytest.approx(4_000 / 0.935, rel=1e-9)
    assert comp.busy_hours == pytest.approx(13_140) and comp.break_even_hours.horizon == pytest.approx(13_140)
    # spot: c = $0.50; M* = 5,000 / (365 x 0.435) = 5,000 / 158.775 = 31.491 months.
    assert comp.spot_break_even_months.value == pytest.approx(5_000 / 158.775, rel=1e-9)
    # local per busy hour = 4,000 / (365 x 36) + 0.065 = 0.304414 + 0.065 = $0.369414;
    # per job x 5.185 h = $1.9154.
    per_hour = 4_000 / 13_140 + 0.065
    assert comp.local_usd_per_hour == pytest.approx(per_hour)
    assert wc.local_cost_per_job_usd == pytest.approx(per_hour * 1e9 * 6 * P_GPT2 / 4e13 / 3600)
    # TCO over 3 years: 4,000 + 0.065 x 365 x 36 = 4,000 + 854.10 = $4,854.10; cloud 1.00 x 13,140 = $13,140.
    assert comp.tco_usd == pytest.approx(4_854.10)
    assert comp.cloud_cost_usd == pytest.approx(13_140)
    text = comparison_text(comp)
    assert "local pays off after 14.7 months" in text
    assert "does not fit: cloud-tiny-ram" in text
    doc = comparison_to_dict(comp)
    json.dumps(doc, allow_nan=False)
    assert doc["break_even"]["on_demand"]["months"]["value"] == pytest.approx(5_000 / 341.275)
    assert doc["costs"]["busy_hours_in_period"] == pytest.approx(13_140)


def test_compare_text_without_a_job_size(tiny):
    """No dataset_tokens: no time or cost per job; the line says so instead of printing '-'."""
    cat, w, machine = tiny
    w = replace(w, train=replace(w.train, dataset_tokens=None))
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5, mfu=0.40))
    lines = comparison_text(comp).splitlines()
    # 4e13 FLOP/s / (6 x 124,439,808 FLOPs per token) = 53,573.4 tokens/s (test_compare_local_wins_within_a_year)
    local = [ln for ln in lines if ln.startswith("  local: per job")]
    assert len(local) == 1
    assert local[0].startswith("  local: per job: n/a (no dataset_tokens), 53,573.4 tokens/s, $")
    assert local[0].endswith(" per M tokens (at 50% utilization)")
    fast = [ln for ln in lines if ln.startswith("    cloud-fast:")]
    assert len(fast) == 1 and "per job" not in fast[0]
    # each price with its region, date and source footnote; the spot price says which figure the catalog keeps
    assert fast[0].startswith("    cloud-fast: 1 x cloud-card, $2/h (r, as of 2026-01) [1], $")
    assert "; spot $1/h (the catalog's one spot figure, no zone range recorded): $" in fast[0]
    assert lines[-2:] == ["Cloud price sources (catalog cloud.yaml; list USD per instance-hour, the region and date "
                          "beside each price):", "  [1] test"]
    assert not any("- per job" in ln or "spot  " in ln for ln in lines)


def test_compare_cloud_wins_at_low_utilization(tiny):
    cat, w, machine = tiny
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.1, mfu=0.40))
    # h = 73: M* = 5,000 / (73 x 0.935) = 5,000 / 68.255 = 73.3 months > 36, and at the sale
    # TCO 4,000 + 0.065 x 73 x 36 = 4,170.82 is above cloud 1.00 x 73 x 36 = 2,628: cloud cheaper throughout.
    assert comp.break_even_months.value is None and comp.break_even_months.cheaper_before == "cloud"
    assert comp.tco_usd == pytest.approx(4_170.82)
    assert comp.cloud_cost_usd == pytest.approx(2_628)
    # The hours agree: owning would need H* = 4,000 / 0.935 = 4,278.07 busy hours, but 3 years at 73 h/month
    # hold only 2,628, so there is no break-even in hours either; the 4,278.07 is kept as 'beyond'.
    assert comp.break_even_hours.value is None
    assert comp.break_even_hours.beyond == pytest.approx(4_000 / 0.935)
    text = comparison_text(comp)
    assert "cloud is cheaper throughout the 36 months" in text
    # 4,278.07 / 36 = 118.8 h/month needed, against the 2,628 busy hours the scenario gives.
    assert "owning would need 4,278 busy hours in 3 years, 119 h/month; the scenario gives 2,628 busy hours" in text
    assert "local breaks even after" not in text


def test_compare_discount_and_hours_sources(tiny):
    cat, w, machine = tiny
    w2 = replace(w, hours_per_month=200.0)
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w2, estimate(w2))], catalog=cat,
                           costs=CostInputs(cloud_discount=0.25, mfu=0.40))
    # h from the workload: 200 h/month; c = 2.00 x 0.75 x 0.5 = $0.75; the lines cross at
    # M* = 5,000 / (200 x (0.75 - 0.065)) = 5,000 / 137 = 36.50 months, after the period; at the sale the TCO
    # 4,000 + 0.065 x 200 x 36 = 4,468 is below the rent 0.75 x 200 x 36 = 5,400: break-even at the sale, month 36.
    assert comp.hours_per_month == 200 and "workloads" in comp.hours_source
    assert comp.cloud_usd_per_local_hour == pytest.approx(0.75)
    assert comp.break_even_months.value == pytest.approx(36) and comp.break_even_months.at_sale
    assert comp.break_even_months.beyond == pytest.approx(5_000 / 137)
    # and in busy hours: H* = 4,000 / 0.685 = 5,839.4, within the 200 x 36 = 7,200.
    assert comp.break_even_hours.value == pytest.approx(4_000 / 0.685)
    assert "local pays off only when the machine is sold" in comparison_text(comp)
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
    from planner.cli.main import main

    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


def closed_form_break_even(doc, c):
    """Break-even month, busy hours and hours beyond the period from the printed figures at cloud rate c,
    by planner.cost.tco's closed forms (the planner itself uses brentq):
    month: M* = capex / (h (c - e) - S/12) when within 12 x D; else 12 x D (the sale) when the TCO
    F + S x D + e x busy is at most the rent c x busy; else none.
    hours: H* = (F + S x D) / (c - e) when c > e; a break-even when H* <= busy = h x 12 x D, else 'beyond'."""
    capex, F = doc["local"]["capex_usd"], doc["local"]["net_capex_usd"]
    e, h = doc["local"]["energy_usd_per_hour"], doc["costs"]["hours_per_month"]
    S, D = doc["costs"]["support_usd_per_year"], doc["costs"]["depreciation_years"]
    busy = h * 12 * D
    margin = h * (c - e) - S / 12
    cross = capex / margin if margin > 0 else float("inf")
    month = cross if cross <= 12 * D else (12 * D if F + S * D + e * busy <= c * busy else None)
    H = (F + S * D) / (c - e) if c > e else None
    return month, (H if H is not None and H <= busy else None), (H if H is not None and H > busy else None)


def test_seed_scenario_compare_json(tmp_path, shipped):
    result = run_compare(str(SEED), "--json", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    wl = doc["workloads"][0]
    fits = {o["instance_id"]: o["feasible"] for o in wl["cloud"]}
    assert set(fits) == {"aws-g5-xlarge", "aws-g6-xlarge", "aws-g5-4xlarge", "aws-g6-4xlarge"}
    # The workload runs on a 12 GB card, so every 24 GB A10G / L4 holds it; host RAM decides: an instance fits
    # when the memory model's host need is at most its RAM (16 GiB xlarge, 64 GiB 4xlarge).
    _, est = qlora_7b_seed(shipped)
    ram = {i.id: i.memory_bytes for i in shipped.instances}
    assert fits == {i: est.host_total_bytes <= ram[i] for i in fits}
    for o in wl["cloud"]:
        assert o["feasible"] or "host RAM" in o["why_not"]
    # the cheapest feasible per local hour is the best on-demand
    feasible = [o for o in wl["cloud"] if o["feasible"]]
    assert wl["best_on_demand"] == min(feasible, key=lambda o: o["usd_per_local_hour"])["instance_id"]
    h = doc["costs"]["hours_per_month"]
    assert h == pytest.approx(365)
    assert doc["costs"]["busy_hours_in_period"] == pytest.approx(365 * 36)
    # The break-even follows from the printed figures (closed_form_break_even), on-demand and spot, and the
    # months and the busy hours agree: both find a break-even or neither does.
    for kind, rate in (("on_demand", doc["cloud"]["usd_per_local_hour"]),
                       ("spot", doc["cloud"]["spot_usd_per_local_hour"])):
        be = doc["break_even"][kind]
        month, hours, beyond = closed_form_break_even(doc, rate)
        for got, want in ((be["months"]["value"], month), (be["hours"]["value"], hours),
                          (be["hours"]["beyond"], beyond)):
            assert (got is None) == (want is None), kind
            if want is not None:
                assert got == pytest.approx(want, rel=1e-9), kind
        assert (be["months"]["value"] is None) == (be["hours"]["value"] is None), kind
        assert be["hours"]["horizon"] == pytest.approx(365 * 36)
    # the written files
    assert (tmp_path / "compare-qlora-7b-12gb-compare.json").exists()
    assert (tmp_path / "compare-qlora-7b-12gb-compare.xlsx").exists()


def test_compare_command_bad_costs(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("  utilization: 0.5", "  utilisation: 0.5"))
    from planner.cli.main import main

    result = CliRunner().invoke(main, ["compare", str(bad)])
    assert result.exit_code == 2
    assert "costs.utilisation: unknown key 'utilisation'. Did you mean 'utilization'?" in result.output


def test_compare_help_has_example():
    from planner.cli.main import main

    result = CliRunner().invoke(main, ["compare", "--help"])
    assert result.exit_code == 0 and "Example:" in result.output


def test_seed_scenario_text():
    result = run_compare(str(SEED), "--verbose")
    assert result.exit_code == 0, result.output
    doc = json.loads(run_compare(str(SEED), "--json").output)
    for o in doc["workloads"][0]["cloud"]:
        assert (f"does not fit: {o['instance_id']} " in result.output) == (not o["feasible"])
    assert "Break-even (on-demand)" in result.output
    assert "credited at the sale after 36 months" in result.output
    # Hours and months never contradict each other in the text: each arithmetic line and each sentence says
    # local breaks even exactly when the JSON has a break-even month.
    lines = result.output.splitlines()
    for kind, key in (("on-demand", "on_demand"), ("spot", "spot")):
        month = doc["break_even"][key]["months"]["value"]
        arithmetic = [ln for ln in lines if ln.startswith(f"  break-even ({kind})")]
        sentence = [ln for ln in lines if ln.startswith(f"Break-even ({kind})")]
        assert len(arithmetic) == 1 and len(sentence) == 1
        assert ("local breaks even" in arithmetic[0]) == (month is not None), kind
        assert ("cloud is cheaper throughout" in sentence[0]) == (month is None), kind


def test_spot_comparison_takes_on_demand_where_cheaper(tiny):
    # A renter who can use spot still takes an on-demand offer that is cheaper than every spot
    # price. Add 'cloud-cheap' (the fast card at $0.80/h on demand, no spot): per local hour
    # 0.80 x 0.5 = $0.40, below cloud-fast's spot 1.00 x 0.5 = $0.50, so the spot c is $0.40.
    from dataclasses import replace as dc_replace

    cat, w, machine = tiny
    cat = dc_replace(cat, instances=cat.instances + (instance("cloud-cheap", "cloud-card", usd=0.8, spot=None,
                                                              ram_gib=64),))
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5, mfu=0.40))
    wc = comp.workloads[0]
    assert wc.best_on_demand == "cloud-cheap" and wc.best_spot == "cloud-fast"
    assert comp.cloud_usd_per_local_hour == pytest.approx(0.40)
    assert comp.spot_usd_per_local_hour == pytest.approx(0.40)
    # both break-evens then agree: M* = 4,000 / (365 x (0.40 - 0.065)) = 32.71 months.
    assert comp.spot_break_even_months.value == pytest.approx(comp.break_even_months.value)


def test_the_catalogs_spot_warnings_for_the_instances_compared_are_printed(tiny):
    # The loader warns about a spot price above on-demand (planner.catalog.schema.CatalogWarning, tested in
    # test_catalog.py); compare says it for the instances it compares, in the text, the JSON and the workbook.
    from dataclasses import replace as dc_replace

    from planner.catalog.schema import CatalogWarning

    cat, w, machine = tiny
    fast = "cloud.yaml:9: instances[0] (cloud-fast).spot_usd_per_hour: spot above on-demand (a test text)"
    big = "cloud.yaml:40: instances[4] (cloud-2x).spot_usd_per_hour: spot above on-demand (a test text)"
    cat = dc_replace(cat, warnings=(CatalogWarning("instances", "cloud-fast", fast),
                                    CatalogWarning("instances", "cloud-2x", big)))
    every = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                            costs=CostInputs(utilization=0.5))
    assert every.warnings == (fast, big)
    assert [x for x in comparison_text(every).splitlines() if x.startswith("Warning: ")] == [
        f"Warning: {fast}", f"Warning: {big}"]
    assert comparison_to_dict(every)["warnings"] == [fast, big]
    # an instance left out of the comparison (costs: instances) is not warned about
    one = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                          costs=CostInputs(utilization=0.5, instances=("cloud-fast",)))
    assert one.warnings == (fast,)
    # and a catalog without warnings gives none
    plain = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=tiny[0],
                            costs=CostInputs(utilization=0.5))
    assert plain.warnings == () and comparison_to_dict(plain)["warnings"] == []
    assert not any(x.startswith("Warning: ") for x in comparison_text(plain).splitlines())


def test_cumulative_starts_at_the_full_price_and_credits_the_resale_at_the_sale(tiny):
    cat, w, machine = tiny
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    rows = comp.cumulative()
    # months 0..36 (37 rows) and the sale at month 36: 38 rows; nothing past the 3-year period.
    assert [r["month"] for r in rows] == [float(m) for m in range(37)] + [36.0]
    assert [r["sold"] for r in rows] == [False] * 37 + [True]
    # month 0: the $5,000 paid, not 5,000 x 0.8; local per month = 0.065 x 365 = $23.725.
    assert rows[0]["local_usd"] == pytest.approx(5_000)
    assert rows[36]["local_usd"] == pytest.approx(5_000 + 23.725 * 36)
    # sold: less the $1,000 resale = 4,000 + 854.10 = the TCO, $4,854.10.
    assert rows[-1]["local_usd"] == pytest.approx(4_854.10) == pytest.approx(comp.tco_usd)
    assert rows[-1]["cloud_usd"] == pytest.approx(comp.cloud_cost_usd)


# ----- pricing: batch work against services (one rule for on-demand and spot) -----------------------------

@pytest.fixture(scope="module")
def serving(shipped):
    """GPT-2 served at concurrency 1 on a local card of 1 TB/s; 'cloud-wide' rents a card with 4 TB/s
    at $2.00/h (spot $1.00/h), 'cloud-twin' the local card's twin at $0.50/h (no spot)."""
    wide = replace(gpu("wide-card", tflops=100, memory_gib=80, tdp=400), memory_bandwidth_bytes_per_s=4e12)
    cat = Catalog(
        schema_version=1,
        gpus=(gpu("local-card", tflops=100, memory_gib=24, tdp=300), wide,
              gpu("twin-card", tflops=100, memory_gib=24, tdp=300)),
        pcie=(PcieGen(id="pcie-gen4", gen=4, per_lane_bytes_per_s=1.969e9, source="t", as_of="2026-01"),),
        instances=(instance("cloud-wide", "wide-card", usd=2.0, spot=1.0, ram_gib=64),
                   instance("cloud-twin", "twin-card", usd=0.5, spot=None, ram_gib=64)),
    )
    arch = from_hf_config(shipped.model("gpt2").config, "gpt2")

    def infer(**extra):
        return workload_from_mapping({"name": "chat", "model": "gpt2", "task": "infer", "context": 1024,
                                      "concurrency": 1, **extra}, lambda name, entry: (name, "test", arch))

    machine = LocalMachine(description="1 x local-card", gpu=cat.gpu("local-card"), gpus_per_node=1, nodes=1,
                           platform_w=200, capex_usd=5_000.0, pcie_per_lane_bytes_per_s=1.969e9, pcie_lanes=16)
    return cat, infer, machine


def test_inference_without_a_rate_is_priced_as_a_service_on_demand_and_spot(serving):
    cat, infer, machine = serving
    w = infer()
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    wc = comp.workloads[0]
    # Neither requests_per_hour nor costs.batch_inference: read as a service, and the reading is flagged.
    assert wc.service and wc.pricing_assumed
    # A service keeps its instance up for the local busy hours: k = 1 on every instance, however fast
    # (cloud-wide decodes 4x faster, see the batch test), and the same k for spot.
    assert [o.hours_per_local_hour for o in wc.cloud if o.feasible] == [1.0, 1.0]
    wide = wc.option("cloud-wide")
    assert wide.usd_per_local_hour == pytest.approx(2.0) and wide.spot_usd_per_local_hour == pytest.approx(1.0)
    # cheapest on-demand: cloud-twin $0.50 x 1; spot: cloud-wide's $1.00 x 1 loses to that $0.50 on-demand.
    assert wc.best_on_demand == "cloud-twin" and wc.best_spot == "cloud-wide"
    assert comp.cloud_usd_per_local_hour == pytest.approx(0.5) and comp.spot_usd_per_local_hour == pytest.approx(0.5)
    notes = [n for n in comp.notes if n.startswith("chat (inference) is priced as a service, assumed")]
    assert len(notes) == 1 and "costs.batch_inference" in notes[0]
    assert "Workload chat (infer; priced as service, k = 1, assumed (see the notes))" in comparison_text(comp)
    doc = comparison_to_dict(comp)
    assert doc["workloads"][0]["service"] is True and doc["workloads"][0]["pricing_assumed"] is True


def test_inference_listed_as_batch_work_scales_with_speed(serving):
    cat, infer, machine = serving
    w = infer()
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5, batch_inference=("chat",), mfu=0.40))
    wc = comp.workloads[0]
    assert not wc.service and not wc.pricing_assumed
    assert not any("assumed" in n for n in comp.notes)
    # Decode is memory bound on both cards (GPT-2's 2 x P = 2.5e8 FLOPs per token take 6.2 us at 100 TFLOPS x 0.4,
    # against ~0.1-0.4 ms to read its ~0.27 GB of weights and KV), so tokens/s scale with bandwidth:
    # k = 1 TB/s / 4 TB/s = 0.25; on-demand 2.00 x 0.25 = $0.50, spot 1.00 x 0.25 = $0.25 per local hour.
    wide = wc.option("cloud-wide")
    assert wide.hours_per_local_hour == pytest.approx(0.25)
    assert wide.usd_per_local_hour == pytest.approx(0.5) and wide.spot_usd_per_local_hour == pytest.approx(0.25)
    assert wc.option("cloud-twin").hours_per_local_hour == pytest.approx(1.0)
    assert comp.spot_usd_per_local_hour == pytest.approx(0.25)


def test_inference_with_a_request_rate_is_a_service_without_a_note(serving):
    cat, infer, machine = serving
    w = infer(tokens_per_request=128, requests_per_hour=10)
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    wc = comp.workloads[0]
    assert wc.service and not wc.pricing_assumed and "requests_per_hour" in wc.pricing
    assert all(o.hours_per_local_hour == 1.0 for o in wc.cloud if o.feasible)
    assert not any("assumed" in n for n in comp.notes)


def test_read_costs_checks_batch_inference_names(serving, tiny):
    _, infer, _ = serving
    _, train, _ = tiny
    chat, rated = infer(), infer(tokens_per_request=128, requests_per_hour=10)
    train = replace(train, name="ft")
    assert read_costs(costs_entry({"batch_inference": ["chat"]}), workloads=[chat, train]).batch_inference == ("chat",)
    problems = []
    for names, workloads in ((["chatt"], [chat, train]), (["ft"], [chat, train]), (["chat"], [rated])):
        with pytest.raises(ScenarioError) as info:
            read_costs(costs_entry({"batch_inference": names}), workloads=workloads)
        problems.append(str(info.value))
    assert "no workload 'chatt' in the scenario" in problems[0] and "Did you mean 'chat'?" in problems[0]
    assert "workload 'ft' is training, which is always priced as batch work" in problems[1]
    assert "workload 'chat' gives requests_per_hour, so it is a service, not batch work" in problems[2]


def test_read_costs_checks_per_workload_mfu_names(tiny):
    # hostile pass 5B item 9: an mfu: entry naming no workload was ignored without a word (the speed
    # model's MFU used instead), where batch_inference names are checked
    _, train, _ = tiny
    train = replace(train, name="ft")
    assert read_costs(costs_entry({"mfu": {"ft": 0.3}}), workloads=[train]).mfu == {"ft": 0.3}
    with pytest.raises(ScenarioError) as info:
        read_costs(costs_entry({"mfu": {"fft": 0.3}}), workloads=[train])
    msg = str(info.value)
    assert "mfu: no workload 'fft' in the scenario" in msg and "Did you mean 'ft'?" in msg, msg


def test_compare_command_refuses_batch_inference_of_a_training_workload(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("  spot: true\n", "  spot: true\n  batch_inference: [qlora-7b]\n"))
    from planner.cli.main import main

    result = CliRunner().invoke(main, ["compare", str(bad)])
    assert result.exit_code == 2
    assert "costs.batch_inference: workload 'qlora-7b' is training, which is always priced as batch work" \
        in result.output


# ----- why an instance does not fit: the local plan's variant, not the first -------------------------------

def test_why_not_is_the_reason_of_the_local_variant(tiny, shipped):
    from planner.cost.cloud import check_instance

    cat, _, _ = tiny
    # Llama-3.2-1B: Transformers runs it tensor parallel (GPT-2 has no tp_plan).
    arch = from_hf_config(shipped.model("llama-3.2-1b").config, "llama-3.2-1b")

    def infer(tp):
        return workload_from_mapping({"name": "chat", "model": "llama-3.2-1b", "task": "infer", "tp": tp,
                                      "context": 1024},
                                     lambda name, entry: (name, "test", arch))

    tp2, tp1, tp4 = infer(2), infer(1), infer(4)
    inst = next(i for i in cat.instances if i.id == "cloud-no-bf16")  # 1 x old-card, no bf16
    # Without the local workload the first variant's reason stands (the old behaviour) ...
    assert check_instance([tp2, tp1], inst, cat).why_not == "1 GPU(s) cannot hold replicas of tp=2"
    # ... with it, the reason of the variant the plan runs (tp 1), which the instance can hold.
    assert check_instance([tp2, tp1], inst, cat, local=tp1).why_not == \
        "old-card has no bf16 support (use an fp16 recipe)"
    # A local tp 4 is as far from tp 2 as from tp 1 (one field), and only tp 1 fits on one GPU: its reason.
    assert "no bf16 support" in check_instance([tp2, tp1], inst, cat, local=tp4).why_not
    # compare passes the local workload through.
    _, _, machine = tiny
    comp = compare_machine(machine=machine, runs=[LocalRun(tp1, estimate(tp1), variants=(tp2, tp1))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    assert "no bf16 support" in comp.workloads[0].option("cloud-no-bf16").why_not


# ----- a much larger cheapest instance is flagged ------------------------------------------------------

def test_much_larger_cheapest_instance_is_flagged(tiny):
    from dataclasses import replace as dc_replace

    from planner.cost.compare import TIME_MODEL_NOTE

    cat, w, machine = tiny
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    plain = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                            costs=CostInputs(utilization=0.5, mfu=0.40))
    assert TIME_MODEL_NOTE in plain.notes
    assert not any("much larger" in n for n in plain.notes)  # cheapest is the 1-GPU cloud-fast
    # 'cloud-8x': 8 x cloud-card at $14/h; with perfect scaling k = 0.5 / 8 = 0.0625 -> 14 x 0.0625 = $0.875 per
    # local hour, below cloud-fast's 2.00 x 0.5 = $1.00: the cheapest, with 8 GPUs for 1-GPU work.
    cat = dc_replace(cat, instances=cat.instances + (instance("cloud-8x", "cloud-card", usd=14.0, spot=None,
                                                              ram_gib=512, count=8),))
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic here uses
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5, mfu=0.40))
    assert comp.workloads[0].best_on_demand == "cloud-8x"
    flagged = [n for n in comp.notes if "much larger" in n]
    assert len(flagged) == 1
    assert "on-demand cloud-8x (8 x cloud-card, k 0.0625, $0.8750 per local hour; the cheapest with at most " \
           "1 GPU(s) is cloud-fast at $1.0000)" in flagged[0]
    # spot's cheapest is cloud-fast (1 GPU, 1.00 x 0.5 = $0.50 per local hour): not flagged.
    assert comp.workloads[0].best_spot == "cloud-fast" and "spot" not in flagged[0]


def test_compare_command_refuses_batch_inference_of_a_service(tmp_path):
    # requests_per_hour makes the workload a service; listing it as batch work contradicts that.
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bi\nworkloads:\n  - name: chat\n    model: llama-3.1-8b\n    task: infer\n"
                   "    context: 2048\n    concurrency: 4\n    tokens_per_request: 256\n    requests_per_hour: 100\n"
                   "costs:\n  batch_inference: [chat]\n")
    from planner.cli.main import main

    result = CliRunner().invoke(main, ["compare", str(bad)])
    assert result.exit_code == 2
    assert "bad.yaml:11: costs.batch_inference: workload 'chat' gives requests_per_hour, so it is a service" \
        in result.output


def test_cloud_check_sizes_a_vllm_workload_with_the_instance_cards_serve_defaults():
    # An engine-vllm workload that leaves max_num_batched_tokens / max_num_seqs open runs with
    # vllm serve's defaults for the instance's card: 8,192 / 1,024 on an H100 (>= 70 GiB, not an
    # A100), 2,048 / 256 on an L4.
    from planner.catalog.loader import load_catalog
    from planner.cost.cloud import cloud_fits

    cat = load_catalog()
    arch = from_hf_config(cat.model("llama-3.1-8b").config, "llama-3.1-8b")
    w = workload_from_mapping({"model": "llama-3.1-8b", "task": "infer", "engine": "vllm", "context": 4096},
                              lambda name, entry: (name, "test", arch))
    seen = {}
    for f in cloud_fits(w, cat):
        if f.workload is not None:
            seen[f.gpu.id] = (f.workload.infer.max_num_batched_tokens, f.workload.infer.max_num_seqs)
    assert seen["h100-sxm"] == (8192, 1024)
    assert seen["l4"] == (2048, 256)


# ----- a request rate: one rule for both sides (scale out, never drop) ------------------------------------

# GPT-2 served at concurrency 1, 1,024-token context, 128 generated tokens per request (the serving fixture):
# prompt 1,024 - 128 = 896 tokens; prefill 2 x 124,439,808 x 896 / (100 TFLOPS x 0.4) = 5.575 ms on every card
# here. Each decode step reads the weights, 248,879,616 B, and the KV cache, 36,864 B/token x (896 + 128 / 2)
# = 960 tokens = 35,389,440 B: 284,269,056 B at 1 TB/s x MBU 0.7 = 0.4061 ms on the local card and its twin,
# at 4 TB/s x 0.7 = 0.1015 ms on cloud-wide (memory bound: the 2 x P FLOPs take 6.2 us).
PREFILL_S = 2 * P_GPT2 * 896 / 4e13
STEP_BYTES = 248_879_616 + 36_864 * 960
LOCAL_RPH = 3600 / (PREFILL_S + 128 * STEP_BYTES / 0.7e12)  # 62,548.3 requests/h
WIDE_RPH = 3600 / (PREFILL_S + 128 * STEP_BYTES / 2.8e12)  # 193,860.4 requests/h


def rated_comparison(serving, rph, *, twin_usd=0.8, budget_usd=None, extra_runs=()):
    from dataclasses import replace as dc_replace

    cat, infer, machine = serving
    # cloud-twin (the local card's twin) at $0.80/h instead of $0.50: the cheapest single instance, but slow.
    cat = dc_replace(cat, instances=tuple(dc_replace(i, usd_per_hour=twin_usd) if i.id == "cloud-twin" else i
                                          for i in cat.instances))
    w = infer(tokens_per_request=128, requests_per_hour=rph)
    runs = [LocalRun(w, estimate(w)), *extra_runs]
    # costs.mfu 0.40 pins the one-factor time rule (planner.speed.timing) the arithmetic above uses
    return compare_machine(machine=machine, runs=runs, catalog=cat, costs=CostInputs(utilization=0.5, mfu=0.40),
                           budget_usd=budget_usd)


def test_a_request_rate_scales_out_local_and_cloud_by_one_rule(serving):
    comp = rated_comparison(serving, 150_000, budget_usd=10_000)
    wc = comp.workloads[0]
    assert wc.local.requests_per_hour_capacity == pytest.approx(LOCAL_RPH)
    assert LOCAL_RPH == pytest.approx(62_548.3, abs=0.1)
    # Local: one machine serves 62,548 requests/h < 150,000 -> ceil(2.398) = 3 copies; all 3 busy while it runs.
    assert wc.copies == comp.copies == 3 and comp.copies_busy == pytest.approx(3)
    # The same rule for every instance, nothing dropped for speed: cloud-twin (62,548/h) 3 copies, k = 3,
    # 3 x $0.80 = $2.40 per local hour; cloud-wide (193,860/h) 1 copy, $2.00 (spot $1.00).
    assert all(o.feasible for o in wc.cloud)
    twin, wide = wc.option("cloud-twin"), wc.option("cloud-wide")
    assert wide.time.requests_per_hour_capacity == pytest.approx(WIDE_RPH)
    assert (twin.copies, twin.hours_per_local_hour, twin.usd_per_local_hour) == (3, 3.0, pytest.approx(2.40))
    assert (wide.copies, wide.hours_per_local_hour, wide.usd_per_local_hour) == (1, 1.0, pytest.approx(2.00))
    assert wc.best_on_demand == "cloud-wide" and comp.cloud_usd_per_local_hour == pytest.approx(2.00)
    # The local side: capex 3 x $5,000 = $15,000; e = 3 copies x $0.065 = $0.195 per busy hour;
    # per busy hour 15,000 x 0.8 / 13,140 + 0.195 = $1.10824; one copy-hour a third of it, $0.36941
    # (= one machine's 4,000 / 13,140 + 0.065, as without the rate).
    assert comp.capex_usd == pytest.approx(15_000) and comp.net_capex_usd == pytest.approx(12_000)
    assert comp.energy_usd_per_hour == pytest.approx(0.195)
    assert comp.local_usd_per_hour == pytest.approx(12_000 / 13_140 + 0.195)
    assert comp.local_usd_per_copy_hour == pytest.approx(4_000 / 13_140 + 0.065)
    assert wc.local_cost_per_job_usd == pytest.approx((4_000 / 13_140 + 0.065) * 3600 / LOCAL_RPH / 3600)
    # Break-even: M* = 15,000 / (365 x (2.00 - 0.195)) = 15,000 / 658.825 = 22.77 months, within the 36.
    assert comp.break_even_months.value == pytest.approx(15_000 / 658.825, rel=1e-9)
    assert comp.cumulative()[0]["local_usd"] == pytest.approx(15_000)
    # Said, with what the rate changed: without it cloud-twin ($0.80, one copy) would be the cheapest.
    assert any("priced as 3 copies of it (ceil(150,000 / 62,548)" in n for n in wc.notes)
    assert any("none is dropped for being too slow. 1 of the 2 that fit need more than one: cloud-twin 3 x 62,548 "
               "requests/h" in n for n in wc.notes)
    assert ("without the rate the cheapest would be cloud-twin at $0.8000 per local hour (one copy); it serves "
            "62,548 requests/h, so it takes 3 copies, $2.4000; the cheapest that keeps up is cloud-wide, 1 x $2.0000 "
            "= $2.0000") in wc.notes
    copies_note = [n for n in comp.notes if n.startswith("Local purchase: 3 copies")]
    assert len(copies_note) == 1 and "3 x $5,000.00 = $15,000.00" in copies_note[0]
    assert "more than the scenario's budget_usd $10,000.00" in copies_note[0]
    text = comparison_text(comp)
    assert text.startswith("Local: 3 copies of [1 x local-card] to keep up with requests_per_hour (capex 3 x $5,000.00 "
                           "= $15,000.00; as given, no quote line items)")
    assert "    cloud-twin: 1 x twin-card, $0.8/h (r, as of 2026-01) [1], serves 62,548 requests/h, 3 copies for " \
           "150,000: $2.4/h" in text
    assert "local copies of the planned machine N = 3" in text
    doc = comparison_to_dict(comp)
    assert doc["local"]["copies"] == 3 and doc["local"]["capex_usd"] == pytest.approx(15_000)
    assert doc["local"]["capex_usd_per_copy"] == pytest.approx(5_000)
    assert {o["instance_id"]: o["copies"] for o in doc["workloads"][0]["cloud"]} == {"cloud-twin": 3, "cloud-wide": 1}


def test_a_rate_one_copy_keeps_up_with_changes_nothing(serving):
    # 50,000 requests/h: the local machine (62,548/h) and both instances keep up with one copy: the comparison is
    # the rate-less one (k = 1 everywhere, capex $5,000), and no scale-out note appears.
    comp = rated_comparison(serving, 50_000)
    wc = comp.workloads[0]
    assert comp.copies == 1 and comp.capex_usd == pytest.approx(5_000)
    assert [o.copies for o in wc.cloud] == [1, 1] and wc.best_on_demand == "cloud-twin"
    assert comp.cloud_usd_per_local_hour == pytest.approx(0.80)
    assert not any("copies" in n for n in wc.notes) and not any(n.startswith("Local purchase") for n in comp.notes)


def test_copies_busy_weights_the_energy_of_a_mix(serving, tiny):
    # The rated service (3 copies at 150,000/h) and GPT-2 training (batch work, one copy) in equal shares: the
    # purchase is 3 copies, busy on average 0.5 x 3 + 0.5 x 1 = 2 copies: e = 2 x $0.065 = $0.13.
    _, train, _ = tiny
    comp = rated_comparison(serving, 150_000, extra_runs=[LocalRun(train, estimate(train))])
    assert comp.copies == 3 and comp.copies_busy == pytest.approx(2.0)
    assert [wc.copies for wc in comp.workloads] == [3, 1]
    assert comp.energy_usd_per_hour == pytest.approx(0.13)
    # local per busy hour 12,000 / 13,140 + 0.13; per copy-hour half of it.
    assert comp.local_usd_per_copy_hour == pytest.approx((12_000 / 13_140 + 0.13) / 2)


def test_a_rate_without_a_request_size_is_said_not_dropped(serving):
    cat, infer, machine = serving
    w = infer(requests_per_hour=1_000_000)  # no tokens_per_request: no request to time
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    wc = comp.workloads[0]
    assert comp.copies == 1 and all(o.copies == 1 for o in wc.cloud)
    assert any("requests_per_hour 1,000,000 is given without tokens_per_request" in n and "checked on neither side"
               in n for n in wc.notes)


def test_copies_for():
    from planner.cost.compare import copies_for

    # ceil(rate / capacity), at least one; an exact multiple is not rounded up by float noise.
    assert copies_for(150_000, 62_548.3) == 3
    assert copies_for(1, 10) == 1
    assert copies_for(3 * 0.1, 0.1) == 3
    # A rate of 0 (or less) is no service to size for: refused, never shown as one copy.
    for rate in (0, 0.0, -5):
        with pytest.raises(ValueError, match="requests_per_hour must be more than 0"):
            copies_for(rate, 10)


# ----- request inputs compare cannot price: refused, never clamped ------------------------------------------

def rated_scenario(tmp_path, body):
    """A one-workload scenario (llama-3.1-8b served) whose workload keys are ``body`` (indented lines)."""
    path = tmp_path / "rated.yaml"
    path.write_text("name: rated\nworkloads:\n  - name: chat\n    model: llama-3.1-8b\n    task: infer\n" + body)
    return path


@pytest.mark.parametrize("engine", ["vllm", "hf"])
@pytest.mark.parametrize("tokens, how", [(5000, "is more than"), (4096, "equals")])
def test_compare_refuses_tokens_per_request_not_below_the_context(tmp_path, engine, tokens, how):
    # Before: 5,000 (or 4,096) generated tokens in a 4,096 context ran as "one request (0 prompt + 4,096
    # generated tokens)", exit 0. A request is its prompt (at least one token) plus its generated tokens,
    # both in the context: refused at the key's line (line 9), with the largest value that fits.
    path = rated_scenario(tmp_path, f"    engine: {engine}\n    context: 4096\n    concurrency: 4\n"
                                    f"    tokens_per_request: {tokens}\n    requests_per_hour: 100\n")
    result = run_compare(str(path), "--json")
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {path}:9: workloads[0].tokens_per_request: {tokens:,} {how} the "
                                    "context, 4,096 tokens, which holds a request's prompt and its generated tokens. ")
    assert "give tokens_per_request: 4095 or less, or context: " + f"{tokens + 1} or more." in result.output
    assert "Traceback" not in result.output and "job_tokens" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_compare_refuses_tokens_per_request_beyond_the_default_context(tmp_path):
    # No context key: the default, 4,096 for llama-3.1-8b, is what the request must fit, and the message says so.
    path = rated_scenario(tmp_path, "    tokens_per_request: 4097\n")
    result = run_compare(str(path))
    assert result.exit_code == 2
    assert (f"Error: {path}:6: workloads[0].tokens_per_request: 4,097 is more than the context, 4,096 tokens "
            "(the default; context is not given)") in result.output
    # Beyond the model's longest sequence (131,072 tokens) a larger context is no way out: only the cap is hinted.
    path = rated_scenario(tmp_path, "    context: 4096\n    tokens_per_request: 131072\n")
    result = run_compare(str(path))
    assert result.exit_code == 2
    assert result.output.strip().endswith("give tokens_per_request: 4095 or less (the model's longest sequence is "
                                          "131,072 tokens).")


@pytest.mark.parametrize("value", ["0", "0.0"])
def test_compare_refuses_a_request_rate_of_zero(tmp_path, value):
    # Before: priced as "a service at 0 requests/h" with ceil(0 / 933) shown as 1 copy, exit 0.
    path = rated_scenario(tmp_path, "    context: 4096\n    tokens_per_request: 256\n"
                                    f"    requests_per_hour: {value}\n")
    result = run_compare(str(path))
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {path}:8: workloads[0].requests_per_hour: must be more than 0, not "
                                    f"{value}. ")
    assert "leave the key out for a service with no rate to check" in result.output
    # Without tokens_per_request too: a rate of 0 is refused, not noted as unchecked.
    path = rated_scenario(tmp_path, f"    requests_per_hour: {value}\n")
    result = run_compare(str(path))
    assert result.exit_code == 2 and f"{path}:6: workloads[0].requests_per_hour: must be more than 0" in result.output


def test_compare_refuses_a_negative_request_rate(tmp_path):
    # Refused by the workload reader (planner.workload.spec) before compare looks at it.
    path = rated_scenario(tmp_path, "    tokens_per_request: 256\n    requests_per_hour: -1\n")
    result = run_compare(str(path))
    assert result.exit_code == 2
    assert f"Error: {path}:7: workloads[0].requests_per_hour: must be " in result.output


def test_the_request_split_is_stated_and_the_longest_request_times(serving, shipped):
    # GPT-2 at context 1,024: 1,023 generated tokens leave a 1-token prompt; the split and its assumption
    # are the first line of the arithmetic.
    from planner.speed.timing import time_workload

    cat, infer, machine = serving
    w = infer(tokens_per_request=1023)
    jt = time_workload(workload=w, estimate=estimate(w), gpu=machine.gpu, gpu_count=1,
                       pcie_per_lane_bytes_per_s=1.969e9)
    assert jt.job == "one request (1 prompt + 1,023 generated tokens)" and jt.job_tokens == 1023
    assert jt.lines[0] == ("request = context 1,024 tokens = 1,023 generated (tokens_per_request) + 1 prompt "
                           "(assumed: the rest of the context; the workload gives no prompt length)")


@pytest.mark.parametrize("tokens", [1024, 5000])
def test_time_model_refuses_a_request_that_leaves_no_prompt(serving, tokens):
    # The readers refuse it with a line; the time model itself never shortens the request to the context.
    from planner.speed.timing import time_workload

    cat, infer, machine = serving
    w = infer(tokens_per_request=tokens)
    with pytest.raises(ValueError, match=f"tokens_per_request {tokens} leaves no prompt token in the context of 1024"):
        time_workload(workload=w, estimate=estimate(w), gpu=machine.gpu, gpu_count=1,
                      pcie_per_lane_bytes_per_s=1.969e9)
    with pytest.raises(ValueError, match="leaves no prompt token"):
        compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                        costs=CostInputs(utilization=0.5))


@pytest.mark.parametrize("extra", [{"tokens_per_request": 128}, {}])
def test_compare_machine_refuses_a_request_rate_of_zero(serving, extra):
    cat, infer, machine = serving
    w = infer(requests_per_hour=0, **extra)
    with pytest.raises(ValueError, match="workload 'chat': requests_per_hour must be more than 0, not 0"):
        compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                        costs=CostInputs(utilization=0.5))


# ----- price dates and sources ----------------------------------------------------------------------------

def test_spot_range_and_basis_from_the_catalog(shipped):
    from planner.cost.cloud import spot_basis, spot_range

    inst = {i.id: i for i in shipped.instances}
    # cloud.yaml aws-p4d-24xlarge: spot_usd_per_hour 2.4655, spot_usd_per_hour_range [2.4655, 8.1915]: the low end.
    assert spot_range(inst["aws-p4d-24xlarge"]) == (2.4655, 8.1915)
    assert spot_basis(inst["aws-p4d-24xlarge"]) == "the lowest zone's, of $2.4655-8.1915/h across the region's zones"
    # aws-p6-b200-48xlarge: range [13.0338, 21.0148]; its note says the low end is a local zone's, so the spot
    # price kept is the upper end, 21.0148.
    assert spot_range(inst["aws-p6-b200-48xlarge"]) == (13.0338, 21.0148)
    assert spot_basis(inst["aws-p6-b200-48xlarge"]).startswith("the upper end of $13.0338-21.0148/h")
    # GCP rows derive spot from VM + GPU parts, no range; an instance without spot has no basis.
    assert spot_range(inst["gcp-g2-standard-4"]) is None
    assert spot_basis(inst["gcp-g2-standard-4"]).startswith("the catalog's one spot figure, no zone range")
    assert spot_basis(inst["aws-p5-4xlarge"]) == ""


def test_compare_shows_the_catalogs_spot_range(tiny):
    """An instance's spot_usd_per_hour_range (as a user's catalog gives it) is stated with its spot price."""
    cat, w, machine = tiny
    fast = replace(cat.instance("cloud-fast"), spot_usd_per_hour_range=(1.0, 1.5))
    cat = replace(cat, instances=(fast, *[i for i in cat.instances if i.id != "cloud-fast"]))
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    line = [ln for ln in comparison_text(comp).splitlines() if ln.startswith("    cloud-fast:")]
    assert len(line) == 1
    assert "; spot $1/h (the lowest zone's, of $1-1.5/h across the region's zones): $" in line[0]
    row = [o for o in comparison_to_dict(comp)["workloads"][0]["cloud"] if o["instance_id"] == "cloud-fast"]
    assert row[0]["spot_range_usd_per_hour"] == [1.0, 1.5]


def test_seed_scenario_prices_carry_dates_and_sources(shipped):
    doc = json.loads(run_compare(str(SEED), "--json").output)
    inst = {i.id: i for i in shipped.instances}
    for o in doc["workloads"][0]["cloud"]:
        i = inst[o["instance_id"]]
        assert (o["as_of"], o["source"], o["region"]) == (i.as_of, i.source, i.region)
    # the local capex: the plan's quote lines, each with its price kind, date and source, adding up to the capex
    items = doc["local"]["capex_items"]
    assert items and all(it["as_of"] and it["source"] and it["price_kind"] for it in items)
    assert sum(it["unit_price_usd"] * it["quantity"] for it in items) == pytest.approx(doc["local"]["capex_usd"])
    text = run_compare(str(SEED), "--verbose").output
    first = text.splitlines()[0]
    dates = sorted({it["as_of"] for it in items})
    assert f"the plan's quote, prices dated {dates[0]}" in first
    basis = [ln for ln in text.splitlines() if ln.startswith("  capex basis (the plan's quote): ")]
    assert len(basis) == 1 and all(f"({it['price_kind']}, as of {it['as_of']})" in basis[0] for it in items)
    # every cloud price line names its region and date and a source footnote that is listed at the end
    g6 = [ln for ln in text.splitlines() if ln.startswith("    aws-g6-xlarge: ")]
    assert len(g6) == 1 and f"${inst['aws-g6-xlarge'].usd_per_hour:g}/h (us-east-2, as of 2026-08) [1]" in g6[0]
    assert f"  [1] {inst['aws-g6-xlarge'].source}" in text.splitlines()
    # spot is used: its basis and range are given, and the notes say the catalog keeps the low end
    assert "spot $0.2599/h (the lowest zone's, of $0.2599-0.2756/h across the region's zones)" in g6[0]
    assert "Note: Spot prices are the catalog's (cloud.yaml): as a rule the LOW end" in text


# ----- like-for-like: the strategy each instance runs, and the spot note ---------------------------------

def mixed_precision_comparison(serving, **costs):
    """GPT-2 served in bf16 locally; the variants prefer fp8 weights. Only 'twin-card' computes in
    fp8 here, so the cheapest, cloud-twin ($0.50/h), runs fp8 weights while cloud-wide ($2.00/h)
    runs the local bf16: the comparison at the cheapest is not like-for-like."""
    from planner.catalog.loader import Catalog as Cat

    cat, infer, machine = serving
    gpus = tuple(replace(g, fp8=True) if g.id == "twin-card" else g for g in cat.gpus)
    cat = Cat(schema_version=1, gpus=gpus, pcie=cat.pcie, instances=cat.instances)
    local, fp8 = infer(), infer(weights="fp8")
    run = LocalRun(local, estimate(local), variants=(fp8, local))
    return compare_machine(machine=machine, runs=[run], catalog=cat, costs=CostInputs(utilization=0.5, **costs))


def test_an_instance_on_another_precision_is_shown_and_flagged(serving):
    comp = mixed_precision_comparison(serving)
    wc = comp.workloads[0]
    assert wc.strategy == "weights bf16, KV bf16, tp 1, concurrency 1"
    twin, wide = wc.option("cloud-twin"), wc.option("cloud-wide")
    assert wc.best_on_demand == "cloud-twin"
    assert twin.strategy.startswith("weights fp8, KV bf16") and twin.differs_from_local == "weights fp8 (local bf16)"
    assert wide.strategy.startswith("weights bf16, KV bf16") and wide.differs_from_local == ""
    notes = [n for n in comp.notes if n.startswith("chat: not like-for-like")]
    assert len(notes) == 1
    assert "1 of the 2 instances that fit run a different precision" in notes[0]
    assert "the cheapest, cloud-twin, runs weights fp8 (local bf16)" in notes[0]
    assert "The cheapest that runs the local precision is cloud-wide at $2.0000 per local hour." in notes[0]
    text = comparison_text(comp)
    assert "  local: runs weights bf16, KV bf16, tp 1, concurrency 1" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("    cloud-twin: "))
    assert "runs weights fp8, KV bf16" in row and "(NOT like-for-like: weights fp8 (local bf16))" in row
    row = next(ln for ln in text.splitlines() if ln.startswith("    cloud-wide: "))
    assert "runs weights bf16, KV bf16" in row and "NOT like-for-like" not in row
    assert "Note: chat: not like-for-like" in text
    doc = comparison_to_dict(comp)
    assert doc["workloads"][0]["strategy"] == wc.strategy
    by_id = {o["instance_id"]: o for o in doc["workloads"][0]["cloud"]}
    assert by_id["cloud-twin"]["differs_from_local"] == "weights fp8 (local bf16)"
    assert by_id["cloud-wide"]["differs_from_local"] == ""


def test_same_precision_everywhere_has_no_like_for_like_note(serving):
    cat, infer, machine = serving
    w = infer()
    comp = compare_machine(machine=machine, runs=[LocalRun(w, estimate(w))], catalog=cat,
                           costs=CostInputs(utilization=0.5))
    assert all(o.differs_from_local == "" for o in comp.workloads[0].cloud)
    assert not any("like-for-like" in n for n in comp.notes)
    assert "NOT like-for-like" not in comparison_text(comp)


def test_differs_from_local_for_training(tiny):
    from planner.cost.comparison_notes import differs_from_local

    _, w, _ = tiny
    assert differs_from_local(w, w) == ""
    other = replace(w, train=replace(w.train, recipe="fp16-amp", gpus=2))  # the GPU count is not compared
    assert differs_from_local(other, w) == "recipe fp16-amp (local mixed-bf16)"


def test_spot_interruption_note_only_when_spot_prices_are_used(serving):
    spot_note = "Spot instances can be interrupted; spot costs assume no lost work."
    with_spot = mixed_precision_comparison(serving)
    assert spot_note in with_spot.notes
    without = mixed_precision_comparison(serving, spot=False)
    assert without.spot_usd_per_local_hour is None
    assert spot_note not in without.notes and spot_note not in comparison_text(without)
    assert not any("Spot prices are the catalog's" in n for n in without.notes)
