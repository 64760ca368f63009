"""Scenario files (planner.solve.scenario): keys, strategy choices and their variants, constraints, errors.

Catalogs are tiny inline ones (tests/plan_helpers.py); scenario YAML is written into tmp_path.
Error texts are asserted outside the ``pytest.raises`` blocks.
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

from planner.core.errors import ScenarioError
from planner.solve.choices import AUTO_VALUES, valid_tp_degrees
from planner.solve.scenario import load_scenario, scenario_from_mapping
from tests.plan_helpers import gpu, infer_workload, nic, platform, tiny_catalog, train_workload


@pytest.fixture
def cat():
    return tiny_catalog(gpus=[gpu("card-a"), gpu("card-b", vendor="amd")], platforms=[platform("box")],
                        nics=[nic("nic-a")])


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_load_minimal_file_defaults(tmp_path, cat):
    p = write(tmp_path, """\
        workloads:
          - model: tiny
            task: infer
            weights: fp16
            kv_dtype: fp16
    """, "my-scenario.yaml")
    s = load_scenario(p, cat)
    assert s.name == "my-scenario"
    assert s.file == str(p)
    assert s.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert s.objective == "capex"
    c = s.constraints
    assert (c.max_nodes, c.vram_headroom, c.price, c.used_ok, c.budget_usd, c.max_cards) == (
        1, 0.05, "street", False, None, None)
    (w,) = s.workloads
    # inference tp left out = auto: every degree that splits 8 heads / 2 KV heads, largest first
    assert [v.tp for v in w.variants] == [8, 4, 2, 1]
    assert w.gpus is None


def test_unknown_top_level_key_did_you_mean(tmp_path, cat):
    p = write(tmp_path, """\
        workloads:
          - {model: tiny, task: infer}
        constrains: {}
    """)
    with pytest.raises(ScenarioError) as e:
        load_scenario(p, cat)
    assert str(e.value) == f"{p}:3: constrains: unknown key 'constrains'. Did you mean 'constraints' or 'costs'?"


def test_unknown_gpu_in_constraints_did_you_mean(tmp_path, cat):
    p = write(tmp_path, """\
        workloads:
          - {model: tiny, task: infer}
        constraints:
          allowed_gpus: [card-c]
    """)
    with pytest.raises(ScenarioError) as e:
        load_scenario(p, cat)
    assert str(e.value) == (f"{p}:4: constraints.allowed_gpus: unknown GPU 'card-c'. "
                            "Did you mean 'card-b' or 'card-a'?")


def test_unknown_platform_did_you_mean(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"allowed_platforms": ["bx"]}}, cat)
    assert str(e.value) == "constraints.allowed_platforms: unknown platform 'bx'. Did you mean 'box'?"


def test_unknown_constraint_key(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"max_card": 2}}, cat)
    assert str(e.value) == "constraints.max_card: unknown key 'max_card'. Did you mean 'max_cards'?"


def test_filters_that_leave_no_gpu_are_an_error(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()],
                               "constraints": {"allowed_gpus": ["card-a"], "vendors": ["amd"]}}, cat)
    assert str(e.value) == ("constraints.allowed_gpus: allowed_gpus, excluded_gpus and vendors together leave no "
                            "GPU with a purchase price. Loosen one of them.")


def test_price_modes(cat):
    # street (the default) and msrp choose among a part's dated prices
    def mode(value):
        return scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"price": value}}, cat).constraints
    assert mode("street").price == "street" and mode("msrp").price == "msrp"  # list: tests/test_safety19b.py
    with pytest.raises(ScenarioError) as e:
        mode("cheapest")
    assert str(e.value).startswith("constraints.price: 'cheapest' is not one of the choices")
    used = scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"used_ok": True}}, cat)
    assert used.constraints.used_ok is True


def test_objectives(cat):
    # capex, tco and the two timed objectives; cost_per_job and time_to_result need a job size
    for name in ("capex", "tco"):
        assert scenario_from_mapping({"workloads": [infer_workload()], "objective": name}, cat).objective == name
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "objective": "cost_per_job"}, cat)
    assert "objective cost_per_job times one request of every inference workload" in str(e.value)
    assert "gives no tokens_per_request" in str(e.value)
    timed = scenario_from_mapping({"workloads": [infer_workload(tokens_per_request=64)],
                                   "objective": "time_to_result"}, cat)
    assert timed.objective == "time_to_result"
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "objective": "fastest"}, cat)
    assert str(e.value).startswith("objective: 'fastest' is not one of the choices")


def test_constraints_are_read(cat):
    s = scenario_from_mapping({"workloads": [infer_workload()], "constraints": {
        "allowed_gpus": ["card-a"], "excluded_gpus": ["card-b"], "vendors": ["nvidia"], "allowed_platforms": ["box"],
        "max_cards": 3, "max_nodes": 2, "budget_usd": 12345.5, "vram_headroom": 0.1,
        "network": {"kind": "infiniband", "nics_per_node": 2, "nic": "nic-a", "min_rate": "200 Gb/s"}}}, cat)
    c = s.constraints
    assert c.allowed_gpus == ("card-a",) and c.excluded_gpus == ("card-b",) and c.vendors == ("nvidia",)
    assert (c.allowed_platforms, c.max_cards, c.max_nodes, c.budget_usd, c.vram_headroom) == (("box",), 3, 2,
                                                                                            12345.5, 0.1)
    assert (c.network.kind, c.network.nics_per_node, c.network.nic) == ("infiniband", 2, "nic-a")
    assert c.network.min_rate_bytes_per_s == 25e9


@pytest.mark.parametrize("network, message", [
    ({"kind": "roce", "nic": "nic-a"},
     "constraints.network.nic: NIC 'nic-a' is infiniband, not roce. Name a roce NIC (none in the catalog) or leave "
     "kind out."),
    ({"min_rate": "800 Gb/s"},
     "constraints.network.min_rate: no NIC runs at 800 Gb/s or more. The fastest is nic-a at 400 Gb/s; lower min_rate "
     "or add a faster NIC in a catalog overlay (--catalog DIR)."),
    ({"min_rate": "400 GB/s"},
     "constraints.network.min_rate: no NIC runs at 3200 Gb/s or more. '400 GB/s' is bytes per second (3200 Gb/s); "
     "network rates are usually written in bits: Gb/s. The fastest is nic-a at 400 Gb/s; lower min_rate or add a "
     "faster NIC in a catalog overlay (--catalog DIR)."),
    ({"nics_per_node": "per-node"},
     "constraints.network.nics_per_node: 'per-node' is not a NIC count. Write per-gpu (one NIC per GPU, the default) "
     "or a whole number such as 1 or 2."),
    ({"switch": "never"},
     "constraints.network.switch: 'never' is not one of the choices. Valid: always, auto."),
])
def test_network_contradictions_are_input_errors(cat, network, message):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"max_nodes": 2, "network": network}},
                              cat)
    assert str(e.value) == message


def test_gpu_filters_that_leave_only_unpriced_gpus_are_input_errors():
    # A catalog whose only GPU left has no price (a cloud-only part) leaves nothing to buy, unless
    # allowed_gpus names it (the solver then says why it is not bought).
    unpriced = tiny_catalog(gpus=[gpu("cloud-only", price_usd=None)], platforms=[platform("box")])
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"max_cards": 1}}, unpriced)
    assert str(e.value) == ("constraints.excluded_gpus: allowed_gpus, excluded_gpus and vendors together leave no GPU "
                            "with a purchase price. Loosen one of them.")
    named = scenario_from_mapping({"workloads": [infer_workload()], "constraints": {"allowed_gpus": ["cloud-only"]}},
                                  unpriced)
    assert named.constraints.allowed_gpus == ("cloud-only",)


def test_extras(cat):
    s = scenario_from_mapping({"workloads": [infer_workload()], "extras": [
        {"description": "SSD", "unit_price_usd": 300, "quantity": 2, "source": "quote 42", "as_of": "2026-01-02"}]},
        cat)
    (x,) = s.extras
    assert (x.description, x.unit_price_usd, x.quantity, x.source, x.as_of, x.category) == (
        "SSD", 300.0, 2, "quote 42", "2026-01-02", "extra")
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "extras": [{"description": "SSD"}]}, cat)
    assert str(e.value) == ("extras[0]: missing required key 'unit_price_usd'. "
                            "Add unit_price_usd: the price of one unit in US dollars, e.g. 450.")


def test_no_workloads(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": []}, cat)
    assert str(e.value) == "workloads: lists no workloads. Give at least one workload (model, task, ...)."


def test_duplicate_workload_names(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload(), infer_workload()]}, cat)
    assert str(e.value) == "workloads[1].name: duplicate workload name 'serve' (also workloads[0]). Give each " \
                           "workload its own name."


# ----- strategy choices --------------------------------------------------------------------------

def test_lists_expand_in_key_order(cat):
    # offload_optimizer pinned: left out, the solver would choose it too (UNPINNED_AUTO_KEYS)
    s = scenario_from_mapping({"workloads": [train_workload(zero=[0, 1], checkpointing="auto", gpus=2,
                                                            offload_optimizer=False)]}, cat)
    (w,) = s.workloads
    got = [(v.workload.train.checkpointing, v.workload.train.zero) for v in w.variants]
    # checkpointing varies slower than zero (key order: offload, checkpointing, zero, tp)
    assert got == [("none", 0), ("none", 1), ("full", 0), ("full", 1)]
    assert w.gpus == (2,)


def test_auto_values(cat):
    # checkpointing pinned: left out, the solver would choose it too (UNPINNED_AUTO_KEYS)
    s = scenario_from_mapping({"workloads": [train_workload(zero="auto", offload_optimizer="auto", gpus=2,
                                                            checkpointing="none")]}, cat)
    (w,) = s.workloads
    combos = [(v.workload.train.offload_optimizer, v.workload.train.zero) for v in w.variants]
    # offload with ZeRO-0 is a contradiction: that combination is simply not generated
    assert combos == [(False, 0), (False, 1), (False, 2), (False, 3), (True, 1), (True, 2), (True, 3)]
    assert AUTO_VALUES["zero"] == (0, 1, 2, 3)


def test_gpus_free_when_left_out(cat):
    data = train_workload()
    del data["gpus"]
    s = scenario_from_mapping({"workloads": [data]}, cat)
    assert s.workloads[0].gpus is None
    s = scenario_from_mapping({"workloads": [train_workload(gpus="auto")]}, cat)
    assert s.workloads[0].gpus is None
    # the solver's own keys pinned (UNPINNED_AUTO_KEYS): the only choice left is the GPU count
    s = scenario_from_mapping({"workloads": [train_workload(gpus=[4, 2], zero=0, offload_optimizer=False,
                                                            checkpointing="none")]}, cat)
    assert s.workloads[0].gpus == (4, 2)
    assert len(s.workloads[0].variants) == 1  # the listed counts are one strategy


def test_written_value_that_never_works_is_an_error(cat):
    # offload_optimizer: true is fixed, so zero 0 is never valid: the user wrote it, so say so.
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [train_workload(zero=[0, 1], offload_optimizer=True, gpus=2)]}, cat)
    assert str(e.value) == ("workloads[0].offload_optimizer: offload_optimizer needs ZeRO stage 1, 2 or 3 "
                            "(ZeRO-Offload) (with zero: 0). Set zero: 1 or higher. Remove 0 from the zero list.")


def test_fixed_invalid_workload_is_an_error(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [train_workload(zero=0, offload_optimizer=True)]}, cat)
    assert str(e.value) == ("workloads[0].offload_optimizer: offload_optimizer needs ZeRO stage 1, 2 or 3 "
                            "(ZeRO-Offload). Set zero: 1 or higher.")


def test_tp_that_does_not_divide_heads_is_an_error(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload(model="six", tp=4)]}, cat)
    assert str(e.value) == "workloads[0].tp: tp=4 does not divide the 6 attention heads. Use one of 1, 2, 3, 6."
    with pytest.raises(ScenarioError) as e2:
        scenario_from_mapping({"workloads": [infer_workload(model="six", tp=[3, 4])]}, cat)
    assert str(e2.value) == ("workloads[0].tp: tp=4 does not divide the 6 attention heads (with tp: 4). "
                             "Use one of 1, 2, 3, 6. Remove 4 from the tp list.")


def test_tp_auto_uses_check_tp(cat):
    from planner.model.architecture import from_hf_config
    from tests.plan_helpers import SIX_HEADS_CONFIG, TINY_CONFIG

    assert valid_tp_degrees(from_hf_config(SIX_HEADS_CONFIG), 8) == (1, 2, 3, 6)
    # 8 heads, 2 KV heads: 1 and 2 divide the KV heads; 4 and 8 are multiples of them
    assert valid_tp_degrees(from_hf_config(TINY_CONFIG), 16) == (1, 2, 4, 8)
    s = scenario_from_mapping({"workloads": [infer_workload(model="six", tp="auto")]}, cat)
    assert [v.tp for v in s.workloads[0].variants] == [6, 3, 2, 1]


def test_tp_auto_for_qlora_training_is_one(cat):
    # Transformers/peft training does not shard bitsandbytes 4-bit layers: tp: auto gives QLoRA
    # tp 1 only (full fine-tunes get every valid degree), and an explicit tp > 1 is refused.
    q = scenario_from_mapping({"workloads": [train_workload(method="qlora", recipe="pure-bf16", tp="auto",
                                                            gpus="auto")]}, cat)
    assert {v.tp for v in q.workloads[0].variants} == {1}
    full = scenario_from_mapping({"workloads": [train_workload(tp="auto", gpus="auto")]}, cat)
    assert {v.tp for v in full.workloads[0].variants} == {1, 2, 4, 8}
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [train_workload(method="qlora", recipe="pure-bf16", tp=2, gpus=2)]}, cat)
    assert str(e.value) == (
        "workloads[0].tp: QLoRA does not run tensor parallel (tp 2): Transformers and peft training do not shard "
        "bitsandbytes 4-bit layers across GPUs. Use tp: 1 and spread the work data-parallel (gpus: N) or sharded "
        "(zero: 3 with bnb_4bit_quant_storage, as FSDP-QLoRA does).")


def test_extra_price_kind_and_dates(cat):
    # An extra's price_kind (default estimate: an unlabelled price is not a vendor's quote) reaches the
    # quote line; an as_of after today is refused.
    import datetime as dt

    from planner.core.errors import ScenarioError as SE

    line = {"description": "NVMe 4 TB", "unit_price_usd": 350, "source": "vendor page", "as_of": "2026-01-05"}
    s = scenario_from_mapping({"workloads": [infer_workload()], "extras": [{**line, "price_kind": "estimate"}]}, cat)
    assert s.extras[0].price_kind == "estimate"
    assert scenario_from_mapping({"workloads": [infer_workload()], "extras": [line]}, cat).extras[0].price_kind == \
        "estimate"
    quoted = scenario_from_mapping({"workloads": [infer_workload()], "extras": [{**line, "price_kind": "quote"}]}, cat)
    assert quoted.extras[0].price_kind == "quote"
    future = (dt.date.today() + dt.timedelta(days=40)).isoformat()
    with pytest.raises(SE) as e:
        scenario_from_mapping({"workloads": [infer_workload()], "extras": [{**line, "as_of": future}]}, cat)
    msg = str(e.value)
    assert msg.startswith(f"extras[0].as_of: {future} is after today")
    assert "a price or a measurement cannot be dated in the future" in msg


def test_duplicate_and_empty_lists(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [train_workload(zero=[1, 1])]}, cat)
    assert str(e.value) == "workloads[0].zero: lists 1 twice. Give each value once."
    with pytest.raises(ScenarioError) as e2:
        scenario_from_mapping({"workloads": [train_workload(zero=[])]}, cat)
    assert str(e2.value) == "workloads[0].zero: an empty list allows nothing. List at least one value, or write " \
                            "zero: auto."


def test_workload_errors_keep_file_and_line(tmp_path, cat):
    p = write(tmp_path, """\
        workloads:
          - model: tiny
            task: infer
            weights: fp17
    """)
    with pytest.raises(ScenarioError) as e:
        load_scenario(p, cat)
    assert str(e.value) == (f"{p}:4: workloads[0].weights: 'fp17' is not one of the choices. "
                            "Did you mean 'fp16'?")


def test_unknown_model(cat):
    with pytest.raises(ScenarioError) as e:
        scenario_from_mapping({"workloads": [infer_workload(model="tinny")]}, cat)
    assert str(e.value).startswith("workloads[0].model: ")
    assert "'tiny'" in str(e.value)


def test_variant_labels(cat):
    s = scenario_from_mapping({"workloads": [infer_workload(), train_workload(name="t", zero=2, gpus=2,
                                                                             checkpointing="full")]}, cat)
    assert s.workloads[0].variants[0].label() == "weights fp16, KV fp16, tp 1, 1 x 256 tokens"
    assert s.workloads[1].variants[0].label() == ("full mixed-fp16 adamw, ZeRO-2, checkpointing full, tp 1, "
                                                  "micro-batch 1 x 128 tokens")


# ----- relative model paths: read from the scenario file's directory -----------------------------------

def model_dir(root: Path, rel: str) -> Path:
    """A directory holding the tiny model's config.json (the catalog's, so only the path differs)."""
    import json

    from tests.plan_helpers import TINY_CONFIG

    d = root / rel
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(TINY_CONFIG))
    return d


def path_scenario(tmp_path: Path, model: str) -> Path:
    """tmp_path/sc/s.yaml, one inference workload on ``model``; the caller runs from tmp_path/elsewhere."""
    (tmp_path / "sc").mkdir(exist_ok=True)
    return write(tmp_path / "sc", f"""\
        workloads:
          - model: {model}
            task: infer
            weights: fp16
            kv_dtype: fp16
            tp: 1
    """)


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    d = tmp_path / "elsewhere"
    d.mkdir()
    monkeypatch.chdir(d)
    return d


def test_relative_model_path_is_read_from_the_scenario_directory(tmp_path, cat, elsewhere):
    # sc/models/llama holds config.json; run from tmp_path/elsewhere, where models/llama does not exist.
    model_dir(tmp_path / "sc", "models/llama")
    for written in ("models/llama", "./models/llama", "models/llama/config.json"):
        p = path_scenario(tmp_path, written)
        (w,) = load_scenario(p, cat).workloads
        v = w.variants[0].workload
        # the model is named after its directory, and its source is the config.json beside the scenario
        assert v.model_id == "llama", written
        assert Path(v.model_source).resolve() == (tmp_path / "sc" / "models" / "llama" / "config.json").resolve()
    # an absolute path is taken as written
    p = path_scenario(tmp_path, str(tmp_path / "sc" / "models" / "llama"))
    assert load_scenario(p, cat).workloads[0].model_id == "llama"


def test_scenario_directory_wins_and_catalog_ids_come_first(tmp_path, cat, elsewhere):
    # the same relative path under the scenario's directory and the current one: the scenario's is read
    model_dir(tmp_path / "sc", "models/llama")
    model_dir(elsewhere, "models/llama")
    p = path_scenario(tmp_path, "models/llama")
    src = Path(load_scenario(p, cat).workloads[0].variants[0].workload.model_source).resolve()
    assert src == (tmp_path / "sc" / "models" / "llama" / "config.json").resolve()
    # a directory next to the scenario named like a catalog id does not shadow the catalog entry
    model_dir(tmp_path / "sc", "tiny")
    p = path_scenario(tmp_path, "tiny")
    assert load_scenario(p, cat).workloads[0].variants[0].workload.model_source.startswith("catalog: ")


def test_missing_relative_model_path_says_where_it_looked(tmp_path, cat, elsewhere):
    looked = tmp_path / "sc" / "models" / "nothere"
    p = path_scenario(tmp_path, "./models/nothere")
    with pytest.raises(ScenarioError) as e:
        load_scenario(p, cat)
    msg = str(e.value)
    assert msg.startswith(f"{p}:2: workloads[0].model: no such file or directory: './models/nothere' "
                          f"(looked for {looked}, relative to the scenario file's directory). ")
    # org/name could be a hub id: the hub's message stays, and the hint says where the path would have been
    p = path_scenario(tmp_path, "models/nothere")
    with pytest.raises(ScenarioError) as e2:
        load_scenario(p, cat)
    msg2 = str(e2.value)
    assert msg2.startswith(f"{p}:2: workloads[0].model: 'models/nothere' is not in the catalog")
    assert f"As a path it would be {looked} (relative to the scenario file's directory), which does not exist." in msg2


def test_model_path_found_only_in_the_current_directory_is_refused_with_the_path_to_write(tmp_path, cat,
                                                                                          elsewhere):
    # elsewhere/models/llama exists, sc/models/llama does not: from sc/ it is ../elsewhere/models/llama
    model_dir(elsewhere, "models/llama")
    p = path_scenario(tmp_path, "models/llama")
    with pytest.raises(ScenarioError) as e:
        load_scenario(p, cat)
    msg = str(e.value)
    assert msg == (f"{p}:2: workloads[0].model: no such file or directory: 'models/llama' (looked for "
                   f"{tmp_path / 'sc' / 'models' / 'llama'}, relative to the scenario file's directory). A relative "
                   "model path in a scenario is read from the scenario file's directory, not the current one; for the "
                   "one found here write model: ../elsewhere/models/llama, or an absolute path.")


def test_scenario_from_mapping_without_a_file_reads_the_current_directory(tmp_path, cat, elsewhere):
    model_dir(elsewhere, "models/llama")
    s = scenario_from_mapping({"workloads": [infer_workload(model="models/llama")]}, cat)
    assert s.workloads[0].model_id == "llama"
    # with base_dir, from there
    model_dir(tmp_path, "base/models/other")
    s = scenario_from_mapping({"workloads": [infer_workload(model="models/other")]}, cat, base_dir=tmp_path / "base")
    assert s.workloads[0].model_id == "other"


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
@pytest.mark.parametrize("command", ["plan", "compare"])
def test_cli_reads_relative_model_paths_from_the_scenario_directory(tmp_path, elsewhere, command):
    # The shipped catalog's Llama 3.1 8B config written to sc/models/llama31-8b; planner runs from elsewhere/.
    import json

    from click.testing import CliRunner

    from planner.catalog.loader import load_catalog
    from planner.cli.main import main

    d = tmp_path / "sc" / "models" / "llama31-8b"
    d.mkdir(parents=True)
    config = load_catalog().model("llama-3.1-8b").config
    plain = lambda v: ({k: plain(x) for k, x in v.items()} if hasattr(v, "items")  # noqa: E731
                       else [plain(x) for x in v] if isinstance(v, (list, tuple)) else v)
    (d / "config.json").write_text(json.dumps(plain(config)))
    p = write(tmp_path / "sc", """\
        workloads:
          - name: chat
            model: models/llama31-8b
            task: infer
            context: 4096
            concurrency: 2
        constraints:
          max_cards: 1
          price: msrp  # the A6000 is discontinued: price: street pays no new one
          allowed_gpus: [rtx-a6000]
    """)
    result = CliRunner().invoke(main, [command, str(p), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # a missing path: one line naming file, line, entry and where it looked; exit code 2, no traceback
    p2 = write(tmp_path / "sc", p.read_text().replace("models/llama31-8b", "./models/llama-31-8b"), "bad.yaml")
    bad = CliRunner().invoke(main, [command, str(p2)])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    looked = tmp_path / "sc" / "models" / "llama-31-8b"
    assert bad.output.startswith(f"Error: {p2}:3: workloads[0].model: no such file or directory: "
                                 f"'./models/llama-31-8b' (looked for {looked}, relative to the scenario file's "
                                 "directory). ")
    assert bad.output.count("\n") == 1


def test_mistyped_catalog_id_gets_no_path_hint(tmp_path, cat, elsewhere):
    # 'tinny' has no '/': a catalog id typo, so the message is the plain did-you-mean, as without a file
    p = path_scenario(tmp_path, "tinny")
    with pytest.raises(ScenarioError) as e:
        load_scenario(p, cat)
    msg = str(e.value)
    assert "'tiny'" in msg and "looked for" not in msg and "As a path" not in msg
