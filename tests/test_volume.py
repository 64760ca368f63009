"""tokens_per_month (planner compare's monthly volume) and the time model's MFU per GPU architecture.

Expected values are derived in the comments beside them. A month is 730 h (planner.cost.tco).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.catalog.loader import load_catalog
from planner.core.errors import InputError
from planner.speed.timing import default_mfu
from planner.speed.traffic import ARCH_MFU, arch_mfu
from planner.workload.spec import parse_token_count

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "scenarios" / "compare-qlora-7b-12gb.yaml"


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


@pytest.mark.parametrize("text, count", [("200M", 2e8), ("1.5B", 1.5e9), ("50k", 5e4), (2e8, 2e8),
                                         ("200M tokens", 2e8), ("2T", 2e12)])
def test_token_counts(text, count):
    assert parse_token_count(text) == count


@pytest.mark.parametrize("text", ["1,000,000", "1,5M", "200_000_000"])
def test_token_counts_with_separators_are_no_counts(text):
    # a ',' may be a decimal comma ('1,5M' is 1.5M, not 15M): read_token_count refuses it with the readings
    # as the hint (test_safety10a); '_' is refused as YAML 1.1's 1_000 is
    assert parse_token_count(text) is None


def test_token_count_refused_with_the_key_and_a_hint():
    from planner.workload.inputs import make_resolver
    from planner.workload.spec import workload_from_mapping

    base = {"model": "llama-2-7b", "task": "train", "method": "qlora"}
    with pytest.raises(InputError) as bad:
        workload_from_mapping({**base, "tokens_per_month": "lots"}, make_resolver(load_catalog()))
    assert bad.value.entry.endswith("tokens_per_month") and "200M" in (bad.value.hint or "")
    with pytest.raises(InputError) as both:
        workload_from_mapping({**base, "tokens_per_month": "200M", "hours_per_month": 100},
                              make_resolver(load_catalog()))
    assert "not both" in both.value.problem


def _seed(**workload_keys):
    data = yaml.safe_load(SEED.read_text())
    data["workloads"][0].update(workload_keys)
    data["costs"].pop("utilization", None)
    return data


def test_busy_hours_come_from_tokens_per_month(shipped):
    from planner import compare

    r = compare(_seed(tokens_per_month="200M"), catalog=shipped)
    c = r.comparison
    tps = c.workloads[0].local.tokens_per_s
    # h = 2e8 tokens / (tps x 3600 s); utilization = h / 730
    assert c.hours_per_month == pytest.approx(2e8 / (tps * 3600))
    assert c.hours_source == "the workloads' tokens_per_month"
    assert not c.warnings or not any("keep up" in w for w in c.warnings)
    assert not any("default" in n and "Utilization" in n for n in c.notes)


def test_a_volume_beyond_the_month_is_warned_and_priced_at_the_month(shipped):
    from planner import compare

    r = compare(_seed(), catalog=shipped, tokens_per_month="2B")
    c = r.comparison
    tps = c.workloads[0].local.tokens_per_s
    need = 2e9 / (tps * 3600)
    assert need > 730
    assert c.hours_per_month == 730
    text = next(w for w in c.warnings if "cannot keep up" in w)
    # about ceil(need / 730) times the GPUs
    assert f"about {-(-need // 730):.0f} times its GPUs" in text


def test_the_default_utilization_is_named_as_an_assumption(shipped):
    from planner import compare

    c = compare(_seed(), catalog=shipped).comparison
    assert c.hours_source.startswith("default utilization")
    assert any("tokens_per_month" in n and "assumption" in n for n in c.notes)


def test_volume_overrides_need_a_known_workload_name():
    from planner.api.comparisons import volume_overrides

    assert volume_overrides("200M", ["a"]) == {"a": 2e8}
    assert volume_overrides(["a=1B", "b=2M"], ["a", "b"]) == {"a": 1e9, "b": 2e6}
    with pytest.raises(InputError) as bare:
        volume_overrides("200M", ["a", "b"])
    assert "ambiguous" in bare.value.problem
    with pytest.raises(InputError) as unknown:
        volume_overrides(["qlora-7=200M"], ["qlora-7b"])
    assert "qlora-7b" in (unknown.value.hint or "")


# ----- MFU per architecture -----------------------------------------------------------------------

def test_every_catalog_architecture_has_an_mfu_with_its_source(shipped):
    archs = {g.architecture for g in shipped.gpus}
    assert archs <= set(ARCH_MFU)
    for name, figure in ARCH_MFU.items():
        assert 0 < figure.value < 1 and figure.source, name
        # a figure is either cited (a paper, README or blog named) or marked as an assumption
        assert "assumption" in figure.source or any(w in figure.source for w in ("README", "arXiv", "Databricks",
                                                                                   "SemiAnalysis")), name


def test_default_mfu_follows_the_architecture(shipped):
    a100, h100 = shipped.gpu("a100-80gb-sxm"), shipped.gpu("h100-sxm")
    # Megatron-LM README: 138 / 312 TFLOPS = 0.44; Llama 3 paper: 400 / 989 TFLOPS = 0.41
    assert default_mfu(recipe="mixed-bf16", gpu=a100).value == pytest.approx(0.44)
    assert default_mfu(recipe="mixed-bf16", gpu=h100).value == pytest.approx(0.41)
    # recipes keep their ratio to 16-bit training: fp32 0.20 / 0.40 = x 0.5; QLoRA's factor x 0.7
    assert default_mfu(recipe="fp32", gpu=h100).value == pytest.approx(0.205)
    assert default_mfu(recipe="pure-bf16", method="qlora", gpu=a100).value == pytest.approx(0.308)
    # the catalog's mfu_scale (MI300X's ROCm stack, 0.5) multiplies its architecture's figure
    mi = shipped.gpu("mi300x")
    assert arch_mfu(mi).value == pytest.approx(ARCH_MFU["cdna3"].value * mi.mfu_scale)
