"""Issue 28, hostile pass h14b (report /work/wt/reports/h14b.md), findings 1-6.

1. ``attention: flash`` (FlashAttention-2) on a card it cannot run on: an NVIDIA GPU below compute capability 8.0
   (flash-attn's csrc/flash_attn/flash_api.cpp at 0251105a: ``cc_major >= 8``, "FlashAttention only supports
   Ampere GPUs or newer."; README: "Ampere, Ada, or Hopper GPUs ... For Turing GPUs (T4, RTX 2080), see the
   separate flash-attention-turing repo"), or one of neither NVIDIA nor AMD (no flash-attn build for Intel
   Gaudi). estimate refuses it at --attention with the hint --attention sdpa; plan drops the card with the reason
   (binding 'precision'); compare's cloud rows say it. llama.cpp's own flash attention is not affected.
2. A key given with no value (YAML's null) where null means nothing documented is refused ("must be ..., not
   empty"), instead of reading as the key left out (allowed_gpus: with its items commented out allowed every GPU).
3. ``constraints.price: list`` (any case) is refused: the list price is the msrp, and 'list' was street's old name.
4. pcie.yaml ``per_lane`` under 0.25 GB/s (PCIe 1.0) and network.yaml NIC/switch ``rate`` under 1 Gb/s are
   refused, with the hint of the same number in GB/s (Gb/s).
5. --lora-targets 'q_proj v_proj' gets the comma hint that works (q_proj,v_proj); an empty item is refused.
6. API ``model=pathlib.Path(...)`` is always a path, never the catalog id of the same text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import ROOT, _cli
from planner.catalog.loader import load_catalog
from planner.core.errors import CatalogError, InputError, ScenarioError
from planner.core.yamlio import parse_yaml
from planner.solve.scenario import scenario_from_mapping

QLORA = "{name: qlora-7b, model: llama-2-7b, task: train, method: qlora, micro_batch: 1, seq_len: 512}"


@pytest.fixture(scope="module")
def cat():
    return load_catalog(None)


def _refusal(call) -> InputError:
    try:
        call()
    except InputError as exc:
        return exc
    raise AssertionError("accepted")


def _scenario_text(cat, text: str, file: str = "s.yaml"):
    return scenario_from_mapping(parse_yaml(text), cat, file=file)


# -- 1. FlashAttention-2 on cards it does not run on ---------------------------------------------------------------

def test_flash_gap_rule(cat):
    from planner.workload.checks import flash_attention_2_gap

    # compute capability from catalog/gpus.yaml: t4 7.5 (Turing); a100 8.0, rtx-3090 8.6, l4 8.9, h100 9.0,
    # b200 10.0, rtx-5090 12.0 all run it; AMD (ROCm build) runs it; Intel Gaudi has no flash-attn build
    runs = ["a100-80gb-sxm", "rtx-3090", "l4", "h100-sxm", "b200", "rtx-5090", "mi300x", "mi355x"]
    assert [g for g in runs if flash_attention_2_gap(cat.gpu(g)) is not None] == []
    t4 = flash_attention_2_gap(cat.gpu("t4"))
    gaudi = flash_attention_2_gap(cat.gpu("gaudi-3"))
    assert t4 == ("t4 (turing, compute capability 7.5): flash-attn needs compute capability 8.0 or more (Ampere or "
                  "newer)")
    assert gaudi == "gaudi-3 (intel gaudi3): flash-attn builds for NVIDIA (CUDA) and AMD (ROCm) GPUs only"
    # an NVIDIA card that gives no compute_capability: its architecture says it
    from types import SimpleNamespace

    old = SimpleNamespace(id="x", vendor="nvidia", architecture="turing", compute_capability=None)
    new = SimpleNamespace(id="y", vendor="nvidia", architecture="ada", compute_capability=None)
    assert flash_attention_2_gap(old) is not None and flash_attention_2_gap(new) is None


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_estimate_refuses_flash_on_t4_and_gaudi():
    r = _cli("estimate", "--model", "qwen2.5-0.5b", "--task", "infer", "--weights", "fp16", "--gpu", "t4",
             "--attention", "flash")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        "Error: --attention: flash (FlashAttention-2, flash_attention_2) cannot run on t4 (turing, compute capability "
        "7.5): flash-attn needs compute capability 8.0 or more (Ampere or newer). Use --attention sdpa, or an NVIDIA "
        "GPU of compute capability 8.0 or more or an AMD one ('planner catalog gpus' lists them).")
    g = _cli("estimate", "--model", "qwen2.5-0.5b", "--task", "infer", "--gpu", "gaudi-3", "--attention", "flash")
    assert g.returncode == 2
    assert "cannot run on gaudi-3 (intel gaudi3): flash-attn builds for NVIDIA (CUDA) and AMD (ROCm)" in g.stderr
    assert "Use --attention sdpa" in g.stderr


def test_flash_training_refused_and_sdpa_fine():
    from planner import estimate

    exc = _refusal(lambda: estimate(model="llama-2-7b", task="train", method="qlora", recipe="pure-fp16", gpu="t4",
                                    attention="flash"))
    assert "cannot run on t4 (turing, compute capability 7.5)" in str(exc) and exc.hint.startswith(
        "Use attention=sdpa")  # the API's keyword (the command line says --attention sdpa)
    ok = estimate(model="llama-2-7b", task="train", method="qlora", recipe="pure-fp16", gpu="t4", attention="sdpa")
    assert ok.gpu.unsupported_precision == ()
    on_4090 = estimate(model="qwen2.5-0.5b", task="infer", gpu="rtx-4090", attention="flash")
    assert on_4090.gpu.unsupported_precision == ()


def test_llamacpp_flash_attention_not_affected():
    # llama.cpp's flash attention is ggml's kernel (CUDA on a T4 too): the workload's attention reads 'flash'
    # internally, and the FlashAttention-2 rule does not apply to it
    from planner import estimate
    from planner.solve.usages import precision_needs

    r = estimate(model="qwen2.5-0.5b", task="infer", engine="llama.cpp", gpu="t4")
    assert r.workload.infer.attention == "flash" and r.gpu.fits
    assert "flash_attention_2" not in precision_needs(r.workload)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_plan_drops_t4_for_flash(cat, tmp_path):
    text = ("name: flash-t4\nconstraints: {allowed_gpus: [t4, l4]}\nworkloads:\n"
            "  - {name: chat, model: qwen2.5-0.5b, task: infer, weights: fp16, attention: flash}\n")
    from planner.solve.candidates import build

    sc = _scenario_text(cat, text)
    cs = build(sc, cat)
    rows = list(zip(cs.table["gpu_id"].tolist(), cs.table["binding"].tolist()))
    # every t4 machine is refused (by precision where no fit rule refuses it first: form factor, cooling);
    # every l4 one (Ada, 8.9) is feasible (binding '')
    assert {b for g, b in rows if g == "t4"} == {"precision", "form_factor", "cooling"}
    assert {b for g, b in rows if g == "l4"} == {""}
    only = tmp_path / "s.yaml"
    only.write_text(text.replace("[t4, l4]", "[t4]"))
    r = _cli("plan", str(only), "--format", "json", "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr  # nothing fits (exit 1), not an input error (2)
    said = " ".join((r.stdout + r.stderr).split())  # lines joined where the terminal width wrapped them
    assert "uses attention: flash (FlashAttention-2), which cannot run on t4 (turing, compute capability 7.5)" in said
    assert "on GPUs without flash_attention_2 (t4), use attention: sdpa" in said


def test_compare_cloud_row_says_flash(cat):
    from planner.cost.cloud import format_supported
    from planner import estimate

    w = estimate(model="qwen2.5-0.5b", task="infer", weights="fp16", attention="flash").workload
    assert format_supported(w, cat.gpu("t4")) == (
        "attention: flash (FlashAttention-2) cannot run on t4 (turing, compute capability 7.5): flash-attn needs "
        "compute capability 8.0 or more (Ampere or newer); use attention: sdpa")
    assert format_supported(w, cat.gpu("a10g")) == ""


# -- 2. an empty value is refused ----------------------------------------------------------------------------------

def test_allowed_gpus_with_items_commented_out(cat):
    text = (f"name: only-the-4090\nworkloads:\n  - {QLORA}\nconstraints:\n  allowed_gpus:\n"
            "    # - rtx-4090        (commented out while testing)\n  budget_usd: 3000\n")
    exc = _refusal(lambda: _scenario_text(cat, text, "allowed.yaml"))
    assert str(exc) == (
        "allowed.yaml:5: constraints.allowed_gpus: must be a name or a list of names, not empty. Write a name or a "
        "list of names after 'allowed_gpus:' (nothing there, or ~, is YAML's null), or remove the key for its "
        "default.")


@pytest.mark.parametrize("key,what", [
    ("allowed_gpus", "a name or a list of names"), ("vendors", "a name or a list of names"),
    ("allowed_platforms", "a name or a list of names"), ("max_cards", "a whole number"),
    ("budget_usd", "a number"), ("max_hours_per_job", "a number"), ("min_decode_tokens_per_s", "a number"),
    ("network", "a mapping of keys to values")])
def test_empty_constraint_refused(cat, key, what):
    exc = _refusal(lambda: _scenario_text(cat, f"name: n\nworkloads:\n  - {QLORA}\nconstraints:\n  {key}:\n"))
    assert exc.problem == f"must be {what}, not empty" and exc.entry == f"constraints.{key}"
    assert exc.hint == (f"Write {what} after '{key}:' (nothing there, or ~, is YAML's null), or remove the key for "
                        "its default.")


def test_empty_network_nic_and_min_rate(cat):
    base = f"name: n\nworkloads:\n  - {QLORA}\nconstraints:\n  max_nodes: 2\n  network: {{%s}}\n"
    nic = _refusal(lambda: _scenario_text(cat, base % "nic: ~"))
    assert nic.entry == "constraints.network.nic" and nic.problem == "must be a text, not empty"
    rate = _refusal(lambda: _scenario_text(cat, base % "min_rate: ~"))
    # never Python's None ('the rate None has no unit')
    assert str(rate) == ("s.yaml:6: constraints.network.min_rate: must be a rate such as '400 Gb/s', not empty. "
                         "Write a rate such as '400 Gb/s' after 'min_rate:' (nothing there, or ~, is YAML's null), "
                         "or remove the key for its default.")


@pytest.mark.parametrize("key", ["lora_targets", "dataset_tokens", "tokens_per_month", "framework_version",
                                 "torch_dtype", "dataset_size"])
def test_empty_training_key_refused(cat, key):
    text = f"name: n\nworkloads:\n  - name: w\n    model: llama-2-7b\n    task: train\n    method: qlora\n    {key}:\n"
    exc = _refusal(lambda: _scenario_text(cat, text))
    assert exc.entry == f"workloads[0].{key}" and exc.problem.endswith(", not empty"), str(exc)
    assert "None" not in str(exc)


@pytest.mark.parametrize("extra", ["tokens_per_request: ", "engine: llama.cpp, gpu_layers: ",
                                   "engine: vllm, engine_version: "])
def test_empty_inference_key_refused(cat, extra):
    text = f"name: n\nworkloads:\n  - {{name: w, model: llama-2-7b, task: infer, {extra}}}\n"
    exc = _refusal(lambda: _scenario_text(cat, text))
    assert exc.problem.endswith(", not empty") and "None" not in str(exc) and "NoneType" not in str(exc), str(exc)


def test_empty_slo_key_blamed_on_itself(cat):
    text = "name: n\nworkloads:\n  - name: chat\n    model: llama-2-7b\n    task: infer\n    slo: {ttft_s: 1, tpot_s: }\n"
    exc = _refusal(lambda: _scenario_text(cat, text))
    assert exc.entry == "workloads[0].slo.tpot_s" and exc.problem == "must be a number, not empty"


def test_empty_costs_keys_refused(cat):
    from planner.core.fields import Entry
    from planner.cost.tco import read_costs

    for key in ("mfu", "mbu"):
        data = parse_yaml(f"name: n\nworkloads:\n  - {QLORA}\ncosts:\n  {key}:\n")
        sc = scenario_from_mapping(data, cat, file="c.yaml")
        root = Entry(data, file="c.yaml", error=ScenarioError)
        exc = _refusal(lambda: read_costs(root.child("costs", None), cat, sc.workloads))
        assert exc.entry == f"costs.{key}" and exc.problem.endswith(", not empty"), str(exc)


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_empty_key_in_a_workload_file(tmp_path):
    w = tmp_path / "w.yaml"
    w.write_text("model: llama-2-7b\ntask: train\nmethod: qlora\ndataset_tokens:\n")
    r = _cli("estimate", "--workload", str(w))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "dataset_tokens: must be a token count, not empty." in r.stderr


def test_none_in_a_scenario_mapping_is_refused(cat):
    # a script's mapping: None is no value either (the message says so without YAML)
    exc = _refusal(lambda: scenario_from_mapping(
        {"workloads": [parse_yaml(QLORA)], "constraints": {"budget_usd": None}}, cat))
    assert str(exc) == ("constraints.budget_usd: must be a number, not empty. None is no value: give a number, or "
                        "leave 'budget_usd' out for its default.")


def test_catalog_null_keeps_its_meaning(tmp_path):
    # docs/catalog.md: an overlay's mpn: null drops the shipped part number (catalog entries do not refuse null)
    ov = tmp_path / "ov"
    ov.mkdir()
    (ov / "gpus.yaml").write_text("schema_version: 1\ngpus:\n  - id: rtx-4090\n    mpn: null\n")
    assert load_catalog(ov).gpu("rtx-4090").mpn is None


# -- 3. price: list ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["list", "List", "LIST"])
def test_price_list_refused(cat, value):
    exc = _refusal(lambda: _scenario_text(cat, f"name: n\nworkloads:\n  - {QLORA}\nconstraints: {{price: {value}}}\n"))
    assert str(exc) == (
        f"s.yaml:4: constraints.price: '{value}' is not one of the choices: the list price is the msrp here, and "
        "'list' was once the name of street. Write price: msrp for the vendor's list price, or price: street (the "
        "default) for the newest dated street (retail) price.")


def test_price_msrp_and_street_still_read(cat):
    def price(value):
        return _scenario_text(cat, f"name: n\nworkloads:\n  - {QLORA}\nconstraints: {{price: {value}}}\n"
                              ).constraints.price
    assert (price("msrp"), price("street")) == ("msrp", "street")


def test_docs_no_longer_read_list_as_street():
    text = (ROOT / "docs" / "scenarios.md").read_text()
    assert "(`list` reads as `street`)" not in text and "`list` is refused (the list price is `msrp`" in text


# -- 4. floors of PCIe lane and network port rates -----------------------------------------------------------------

def _overlay(tmp_path: Path, name: str, text: str) -> Path:
    ov = tmp_path / "ov"
    ov.mkdir(exist_ok=True)
    (ov / name).write_text(text)
    return ov


def test_pcie_per_lane_floor(tmp_path):
    from planner.catalog.pcie import MIN_PCIE_LANE_BYTES_PER_S

    # PCIe 1.0: 2.5 GT/s x 8/10 (8b/10b) / 8 bits = 0.25 GB/s per lane (PCI-SIG Base Specification 1.0a)
    assert MIN_PCIE_LANE_BYTES_PER_S == 2.5e9 * 8 / 10 / 8
    ov = _overlay(tmp_path, "pcie.yaml", "schema_version: 1\ngenerations:\n  - id: pcie-gen4\n    per_lane: 2 MB/s\n")
    exc = _refusal(lambda: load_catalog(ov))
    assert isinstance(exc, CatalogError)
    assert exc.problem == "'2 MB/s' is less than any real PCIe lane rate (at least 0.25 GB/s)"
    assert exc.hint == "Did you mean '2 GB/s'? Check the unit: GB/s is bytes, Gb/s is bits (8 Gb/s = 1 GB/s)."
    # PCIe 1.0's own rate loads
    ok = _overlay(tmp_path, "pcie.yaml", "schema_version: 1\ngenerations:\n  - id: pcie-gen4\n    per_lane: 250 MB/s\n")
    assert load_catalog(ok).pcie_gen(4).per_lane_bytes_per_s == 0.25e9


def test_network_rate_floor(tmp_path):
    from planner.catalog.network import MIN_LINK_BYTES_PER_S

    assert MIN_LINK_BYTES_PER_S * 8 == 1e9  # 1 Gb/s, Gigabit Ethernet (IEEE 802.3ab)
    ov = _overlay(tmp_path, "network.yaml", "schema_version: 1\nnics:\n  - id: connectx-7-ndr\n    rate: 400 Mb/s\n")
    exc = _refusal(lambda: load_catalog(ov))
    assert exc.problem == "'400 Mb/s' is less than any real network port rate (at least 1 Gb/s)"
    assert exc.hint.startswith("Did you mean '400 Gb/s'? ")
    sw = _overlay(tmp_path, "network.yaml",
                  "schema_version: 1\nswitches:\n  - id: quantum-2-qm9700\n    rate: 0.0001 Gb/s\n")
    exc = _refusal(lambda: load_catalog(sw))
    assert exc.problem == "'0.0001 Gb/s' is less than any real network port rate (at least 1 Gb/s)"
    assert not exc.hint.startswith("Did you mean")  # 0.0001 Gb/s has no smaller prefix to correct


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_catalog_check_refuses_slow_rates(tmp_path):
    ov = _overlay(tmp_path, "network.yaml", "schema_version: 1\nnics:\n  - id: connectx-7-ndr\n    rate: 400 Mb/s\n")
    r = _cli("catalog", "check", "--today", "2026-12-02", "--catalog", str(ov))
    assert r.returncode == 2 and "is less than any real network port rate (at least 1 Gb/s)" in r.stderr


# -- 5. --lora-targets ---------------------------------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_lora_targets_blank_separated_hint_works():
    r = _cli("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "lora",
             "--lora-targets", "q_proj v_proj")
    assert r.returncode == 2
    assert r.stderr.strip() == ("Error: --lora-targets: LoRA target 'q_proj v_proj' is not a linear module of llama. "
                                "That is 2 names in one text: separate them with commas, --lora-targets "
                                "q_proj,v_proj.")
    followed = _cli("estimate", "--model", "llama-2-7b", "--task", "train", "--method", "lora",
                    "--lora-targets", "q_proj,v_proj")
    assert followed.returncode == 0, followed.stderr


@pytest.mark.parametrize("text", ["q_proj,,v_proj", "q_proj,", ",q_proj", "q_proj, ,v_proj"])
def test_lora_targets_empty_item_refused(text):
    from planner import estimate

    exc = _refusal(lambda: estimate(model="llama-2-7b", task="train", method="lora", lora_targets=text))
    assert exc.entry == "lora_targets"  # the API's keyword; the command line says --lora-targets
    assert exc.problem == f"{text!r} has an empty item (two commas together, or one at an end)"
    shown = ",".join(p.strip() for p in text.split(",") if p.strip())
    assert exc.hint == f"Separate the module names with single commas: lora_targets={shown}."
    assert exc.cli_line().endswith(f"Separate the module names with single commas: --lora-targets {shown}.")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_lora_targets_empty_item_in_a_file(tmp_path):
    w = tmp_path / "w.yaml"
    w.write_text("model: llama-2-7b\ntask: train\nmethod: lora\nlora_targets: q_proj,,v_proj\n")
    r = _cli("estimate", "--workload", str(w))
    assert r.returncode == 2
    assert r.stderr.strip().endswith("lora_targets: 'q_proj,,v_proj' has an empty item (two commas together, or one "
                                     "at an end). Write lora_targets: [q_proj, v_proj].")


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_lora_targets_file_hint_keeps_brackets(tmp_path):
    w = tmp_path / "w.yaml"
    w.write_text("model: llama-2-7b\ntask: train\nmethod: lora\nlora_targets: q_proj v_proj\n")
    r = _cli("estimate", "--workload", str(w))
    assert r.returncode == 2 and "write the list in brackets, lora_targets: [q_proj, v_proj]." in r.stderr


# -- 6. model=pathlib.Path ------------------------------------------------------------------------------------------

@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_path_model_is_a_path(tmp_path, monkeypatch):
    from planner import estimate
    from model_configs import TINY

    folder = tmp_path / "llama-2-7b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(TINY["llama"]))  # a tiny model in a folder named as the catalog id
    monkeypatch.chdir(tmp_path)
    catalog_bytes = estimate(model="llama-2-7b", task="infer").per_gpu_total_bytes
    folder_bytes = estimate(model="./llama-2-7b", task="infer").per_gpu_total_bytes
    assert folder_bytes < catalog_bytes / 10  # hidden 64 and 2 layers, not the catalog's 4096 and 32
    for m in (Path("./llama-2-7b"), Path("llama-2-7b"), folder):
        assert estimate(model=m, task="infer").per_gpu_total_bytes == folder_bytes, m


def test_path_model_missing_is_not_a_hub_id(tmp_path, monkeypatch):
    from planner import estimate

    monkeypatch.chdir(tmp_path)
    for m, shown in ((Path("llama-2-7b"), "./llama-2-7b"), (Path("org/model"), "./org/model")):
        exc = _refusal(lambda: estimate(model=m, task="infer"))
        assert exc.problem == f"no such file or directory: {shown!r}", str(exc)
