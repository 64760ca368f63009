"""Issue 28, hostile pass 23B: findings of report h23b fixed on branch f23f.

N1. A Catalog that ``load_catalog()`` returned and that was then changed in place (``object.__setattr__`` on a
    record or on the Catalog, past the frozen dataclass; a FrozenMap's dict changed) is checked as the loader
    checks a file, as a ``dataclasses.replace`` copy is: the API trusts the fingerprint of the content the loader
    checked (planner.catalog.fingerprint), not the object. A negative price or memory and a control character in
    a name are one CatalogError naming the entry and field; a catalog left as read (or pickled, deep-copied) is
    not checked again.
N2. A scenario's lists are bounded by the work they ask for, each refused in one line at its key with the count
    and the ceiling before any work: at most 50 workloads (5,000 planned for 3 minutes in 1 GB), 200 extras, 64
    values in a choice list, and 100,000 strategy combinations over the whole scenario; a catalog list (an
    overlay file's, or a Catalog built in code) holds at most 500 entries (5,000 GPUs took a minute and 1.1 GB).
M4. An unknown choice (``optimizer:``, ``--weights``) or model name of thousands of characters is echoed as its
    first 80 and its length, not whole; a hub id past Hugging Face's 96 characters gets no download command.
M5. ``epochs`` below 1 must leave one optimizer step (micro_batch x grad_accum x seq_len tokens) of the dataset:
    ``epochs: 1.0e-300`` is refused with the least epochs that holds one.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

import planner.api.inputs as api_inputs
from planner import estimate, plan
from planner.catalog.fingerprint import content_fingerprint, still_checked
from planner.catalog.loader import load_catalog
from planner.core.errors import CatalogError

INFER = dict(model="llama-2-7b", task="infer", weights="bf16", context=1024)


def _scenario():
    return {"name": "mut", "workloads": [{"name": "w", **INFER}], "constraints": {"allowed_gpus": ["rtx-4090"]}}


def _card(cat):
    i, gpu = next((i, g) for i, g in enumerate(cat.gpus) if g.id == "rtx-4090")
    return i, gpu


# ----- N1: a loaded Catalog changed in place is checked ------------------------------------------------------------

@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_price_set_in_place_is_refused_by_plan():
    cat = load_catalog()
    i, gpu = _card(cat)
    shipped = gpu.price_usd
    object.__setattr__(gpu, "price_usd", -100.0)
    with pytest.raises(CatalogError) as got:
        plan(_scenario(), catalog=cat)
    said = str(got.value)
    # the loader builds price_usd from the entry's prices: the shipped one, not the -100 set in place
    assert said.startswith(f"the Catalog given: gpus[{i}] (rtx-4090).price_usd: -100.0 is not what the entry's other "
                           f"fields give ({shipped!r})"), said


def test_a_memory_set_in_place_is_refused_by_estimate():
    cat = load_catalog()
    i, gpu = _card(cat)
    object.__setattr__(gpu, "memory_usable_bytes", -5)
    with pytest.raises(CatalogError) as got:
        estimate(**INFER, gpu="rtx-4090", catalog=cat)
    said = str(got.value)
    assert said.startswith(f"the Catalog given: gpus[{i}] (rtx-4090).memory_usable: '-5 B' is not a size"), said


def test_a_control_character_set_in_place_in_a_name_is_refused():
    cat = load_catalog()
    i, gpu = _card(cat)
    object.__setattr__(gpu, "name", "x\x1b]8;;http://e.vil\x07X\x1b]8;;\x07")
    with pytest.raises(CatalogError) as got:
        estimate(**INFER, gpu="rtx-4090", catalog=cat)
    said = str(got.value)
    assert said.startswith(f"the Catalog given: gpus[{i}] (rtx-4090).name: holds the control character U+001B"), said


def test_a_list_swapped_on_the_catalog_before_first_use_is_refused():
    cat = load_catalog()
    i, gpu = _card(cat)
    bad = dataclasses.replace(gpu, price_usd=-100.0)
    object.__setattr__(cat, "gpus", tuple(bad if g is gpu else g for g in cat.gpus))
    with pytest.raises(CatalogError) as got:
        plan(_scenario(), catalog=cat)
    assert f"gpus[{i}] (rtx-4090).price_usd: -100.0" in str(got.value), str(got.value)


def test_a_frozen_map_changed_in_place_changes_the_fingerprint():
    cat = load_catalog()
    assert still_checked(cat)
    cat.models[0].config._data["hidden_size"] = -1  # the FrozenMap's own dict, reached past its read-only face
    assert not still_checked(cat)


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_catalog_left_as_read_is_not_checked_again(monkeypatch):
    calls = []
    real = api_inputs.check_catalog_object
    monkeypatch.setattr(api_inputs, "check_catalog_object", lambda c: calls.append(c) or real(c))
    cat = load_catalog()
    for given in (cat, pickle.loads(pickle.dumps(cat)), copy.deepcopy(cat)):
        estimate(**INFER, gpu="rtx-4090", catalog=given)
    assert calls == []  # each gives the loader's fingerprint: trusted
    _, gpu = _card(cat)
    object.__setattr__(gpu, "tdp_w", gpu.tdp_w)  # the same value again: the content is unchanged
    estimate(**INFER, gpu="rtx-4090", catalog=cat)
    assert calls == []
    object.__setattr__(gpu, "tdp_w", gpu.tdp_w + 1)  # a value a file may give: checked, then taken
    estimate(**INFER, gpu="rtx-4090", catalog=cat)
    assert calls == [cat]


def test_the_fingerprint_is_of_the_content_and_unpicklable_content_is_never_trusted():
    cat = load_catalog()
    assert cat.checked == content_fingerprint(cat) and len(cat.checked) == 64
    assert content_fingerprint(dataclasses.replace(cat)) == cat.checked  # same content, another object
    object.__setattr__(cat, "sha256", lambda: None)  # no plain value: cannot be pickled
    assert content_fingerprint(cat) == "" and not still_checked(cat)
    assert dataclasses.replace(load_catalog()).checked == ""  # a copy made in code starts unchecked


# ----- N2: a scenario's lists are bounded by the work they ask for ---------------------------------------------------

from planner.solve.choices import MAX_CHOICE_VALUES  # noqa: E402
from planner.solve.scenario import MAX_COMBINATIONS, MAX_EXTRAS, MAX_WORKLOADS  # noqa: E402
from planner.core.errors import ScenarioError  # noqa: E402

TRAIN_AUTO = ("framework offload_optimizer offload_params offload_activations checkpointing optimizer_in_backward "
              "loss_chunks fused_linear_loss fsdp_version zero tp").split()


def _workloads(n):
    return [{"name": f"w{i}", **INFER, "context": 1024 + i} for i in range(n)]


def _plan_error(scenario, tmp_path):
    with pytest.raises(ScenarioError) as got:
        plan(scenario, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()  # refused before any work or report
    return str(got.value)


def test_the_ceilings_are_what_the_docs_say():
    assert (MAX_WORKLOADS, MAX_EXTRAS, MAX_CHOICE_VALUES, MAX_COMBINATIONS) == (50, 200, 64, 100_000)


def test_a_file_of_too_many_workloads_is_one_line_naming_file_key_and_count(tmp_path):
    n = 5_000  # the report's 400 KB file: 3 minutes and 1 GB before
    text = "name: many\nworkloads:\n" + "".join(
        f"  - {{name: w{i}, model: llama-2-7b, task: infer, weights: bf16, context: {1024 + i}}}\n" for i in range(n))
    path = tmp_path / "many.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as got:
        plan(str(path), out=tmp_path / "o")
    said = str(got.value)
    assert said.startswith(f"{path}:2: workloads: lists 5,000 entries, more than the {MAX_WORKLOADS} a scenario "
                           "may hold. Split them into scenarios"), said
    assert "\n" not in said


@pytest.mark.parametrize(("n", "refused"), [(MAX_WORKLOADS, False), (MAX_WORKLOADS + 1, True)])
def test_the_workloads_ceiling_is_at_fifty(n, refused, monkeypatch):
    # the ceiling alone: the work after it is stopped at its first step, so the test stays fast
    import planner.solve.scenario as scenario_module

    reached = []

    def stop(*args, **kwargs):
        reached.append(True)
        raise ScenarioError("stopped after the ceiling")

    monkeypatch.setattr(scenario_module, "make_resolver", stop)
    with pytest.raises(ScenarioError) as got:
        plan({"name": "t", "workloads": tuple(_workloads(n))})  # a tuple counts as the list does
    assert reached == ([] if refused else [True]), str(got.value)
    if refused:
        assert str(got.value).startswith(f"workloads: lists {n} entries, more than the 50"), str(got.value)


def test_too_many_extras_are_refused_with_the_count(tmp_path):
    extra = {"description": "disk", "unit_price_usd": 10, "source": "me", "as_of": "2025-01-01"}
    said = _plan_error({"name": "t", "workloads": _workloads(1), "extras": [extra] * (MAX_EXTRAS + 1)}, tmp_path)
    assert said.startswith("extras: lists 201 entries, more than the 200 a scenario may hold. Give the lines"), said


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_long_choice_list_is_refused_at_its_key(tmp_path):
    lengths = list(range(4096, 4096 - 500, -1))  # longest first, every one valid: 500 x 16 variants before
    w = {"name": "w", "model": "llama-2-7b", "task": "train", "method": "lora", "micro_batch": 1, "seq_len": lengths}
    said = _plan_error({"name": "t", "workloads": [w]}, tmp_path)
    assert said.startswith("workloads[0].seq_len: lists 500 values, more than the 64 a choice list may hold. "
                           "List the values you would accept, at most 64, longest first."), said
    w = {"name": "w", **INFER, "weights": ["bf16"] * 65}
    said = _plan_error({"name": "t", "workloads": [w]}, tmp_path)
    assert said.startswith("workloads[0].weights: lists 65 values, more than the 64"), said
    assert said.endswith("or write weights: auto."), said


def test_too_many_strategy_combinations_are_refused_before_any_is_validated(tmp_path):
    # every training key auto is 6 frameworks x 6 tp degrees (llama-2-7b's heads: 1, 2, 4, 8, 16, 32) x 4 zero
    # stages x 2^8 for the eight on/off keys = 36,864; three seq_len values make it 110,592
    assert 6 * 6 * 4 * 2 ** 8 * 3 == 110_592 > MAX_COMBINATIONS
    w = {"name": "w", "model": "llama-2-7b", "task": "train", "method": "full", "micro_batch": 1,
         "seq_len": [1024, 512, 256], **{k: "auto" for k in TRAIN_AUTO}}
    said = _plan_error({"name": "t", "workloads": [w]}, tmp_path)
    assert said.startswith("workloads[0]: its strategy choices give 110,592 combinations (framework 6 x tp 6 x zero 4 "
                           "x seq_len 3, ...), more than the 100,000 a scenario may try. Pin some keys"), said


def test_the_combinations_are_counted_over_the_whole_scenario(tmp_path, monkeypatch):
    import planner.solve.scenario as scenario_module

    # weights auto (7) x kv_dtype auto (3) x tp auto (llama-2-7b: 6 degrees) = 126 a workload; a ceiling of 200
    # takes the first and refuses the second, which would bring the total to 252
    monkeypatch.setattr(scenario_module, "MAX_COMBINATIONS", 200)
    w = {"model": "llama-2-7b", "task": "infer", "context": 1024, "weights": "auto", "kv_dtype": "auto", "tp": "auto"}
    said = _plan_error({"name": "t", "workloads": [{"name": "a", **w}, {"name": "b", **w}]}, tmp_path)
    assert said.startswith("workloads[1]: its strategy choices give 126 combinations (weights 7 x tp 6 x kv_dtype 3) "
                           "(with the 126 of the workloads before it), more than the 200 a scenario may try"), said


# ----- M4: an unknown choice or model is echoed as its first 80 characters and its length ---------------------------

from planner.cli.main import main as cli_main  # noqa: E402
from planner.core.errors import InputError  # noqa: E402
from planner.core.names import MAX_ECHO_CHARS  # noqa: E402
from planner.model.models import MAX_HUB_ID_CHARS  # noqa: E402


def _clipped(text):
    return f"'{text[:MAX_ECHO_CHARS]}... ({len(text):,} characters)'"


def test_a_long_unknown_choice_in_a_scenario_is_clipped(tmp_path):
    value = "adamw" * 6000
    w = {"name": "w", "model": "llama-2-7b", "task": "train", "method": "lora", "micro_batch": 1, "optimizer": value}
    with pytest.raises(InputError) as got:
        plan({"name": "t", "workloads": [w]})
    said = str(got.value)
    assert said.startswith(f"workloads[0].optimizer: {_clipped(value)} is not one of the choices. "), said
    assert len(said) < 600, len(said)  # was 30 KB


def test_a_long_unknown_model_is_clipped(tmp_path):
    name = "llama-2-7b" * 3000
    with pytest.raises(InputError) as got:
        estimate(model=name, task="infer")
    said = str(got.value)
    assert said.startswith(f"model: unknown model {_clipped(name)}. "), said
    assert len(said) < 600, len(said)


def test_a_long_hub_id_is_clipped_and_gets_no_download_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-cache"))
    name = "org/" + "llama" * 5000
    with pytest.raises(InputError) as got:
        estimate(model=name, task="infer")
    said = str(got.value)
    assert said.startswith(f"model: {_clipped(name)} is not in the catalog"), said
    assert f"A Hugging Face id is at most {MAX_HUB_ID_CHARS} characters" in said and "huggingface-cli" not in said, said
    assert len(said) < 800, len(said)
    short = "org/llama-9z"  # a real-length id keeps the command that fetches it
    with pytest.raises(InputError) as got:
        estimate(model=short, task="infer")
    assert f"'huggingface-cli download {short} config.json'" in str(got.value), str(got.value)


def test_a_long_option_choice_is_clipped_by_the_cli(capsys):
    value = "bf16" * 5000
    with pytest.raises(SystemExit) as got:
        cli_main(["estimate", "--model", "llama-2-7b", "--task", "infer", "--weights", value])
    err = capsys.readouterr().err
    assert got.value.code == 2
    assert err.startswith(f"Error: --weights: {_clipped(value)} is not one of the choices. "), err[:300]
    assert err.count("\n") == 1 and len(err) < 600, len(err)


# ----- M5: epochs has a floor: one optimizer step ------------------------------------------------------------------

TRAIN = {"name": "w", "model": "llama-2-7b", "task": "train", "method": "qlora", "micro_batch": 1, "seq_len": 512}


def _train_error(**keys):
    with pytest.raises(InputError) as got:
        plan({"name": "ep", "workloads": [{**TRAIN, **keys}], "objective": "cost_per_job"})
    return str(got.value)


def test_a_denormal_epochs_is_refused_with_the_least_one():
    said = _train_error(dataset_tokens="999T", epochs=1.0e-300)
    # one step: micro_batch 1 x grad_accum 1 x seq_len 512 = 512 tokens; 512 / 999e12 = 5.125e-13, shown 5.13e-13
    assert said.startswith("workloads[0].epochs: 1e-300 epochs of dataset_tokens 999,000,000,000,000 is 9.99e-286 "
                           "tokens, less than one optimizer step (512 tokens: micro_batch x grad_accum x seq_len). "
                           "Give the passes over the dataset a run makes, at least 5.13e-13 (one step)"), said


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_the_floor_is_one_step_of_the_workload():
    # micro_batch 2 x grad_accum 4 x seq_len 512 = 4,096 tokens a step; 0.5 epochs of 4,000 tokens is 2,000
    said = _train_error(dataset_tokens=4000, epochs=0.5, micro_batch=2, grad_accum=4)
    assert said.startswith("workloads[0].epochs: 0.5 epochs of dataset_tokens 4,000 is 2,000 tokens, less than one "
                           "optimizer step (4,096 tokens"), said
    # 4096 / 4000 = 1.024 epochs; from 1 epoch up the job is the whole dataset, which is taken however small
    assert "at least 1 (one step)" in said, said
    said = _train_error(dataset_tokens=3000, epochs=0.1)  # 512 / 3000 = 0.1707: 0.171 holds the step, 0.170 not
    assert "at least 0.171 (one step)" in said, said
    # with no dataset_tokens, even the largest dataset (1e16 tokens) must hold one step: 512 / 1e16 = 5.12e-14
    said = _train_error(epochs=5.0e-324)
    assert said.startswith("workloads[0].epochs: 5e-324 epochs of even the largest dataset_tokens (1e+16) is "), said
    assert "at least 5.12e-14 (one step)" in said, said


@pytest.mark.parametrize(("dataset", "epochs"), [(1000, 0.512), (999 * 10**12, 5.13e-13), (7, 1.0)])
def test_the_least_epochs_hinted_is_taken(dataset, epochs, tmp_path):
    # one step is 512 tokens: 0.512 x 1,000 and 5.13e-13 x 999T hold it; from 1 epoch up the job is the whole
    # dataset, however small (7 tokens)
    p = plan({"name": "ep", "workloads": [{**TRAIN, "dataset_tokens": dataset, "epochs": epochs}]})
    assert p.total_usd > 0


# ----- N2: a catalog list is bounded too ---------------------------------------------------------------------------

from planner.catalog.schema import MAX_CATALOG_ENTRIES  # noqa: E402


def test_an_overlay_list_of_too_many_entries_is_refused_before_any_is_read(tmp_path):
    assert MAX_CATALOG_ENTRIES == 500
    overlay = tmp_path / "ov"
    overlay.mkdir()
    # 501 empty entries: were they read, the first would be refused for its missing id; the count comes first
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n" + "  - {}\n" * 501)
    with pytest.raises(CatalogError) as got:
        load_catalog(overlay)
    said = str(got.value)
    assert said.startswith(f"{overlay / 'gpus.yaml'}:2: gpus: lists 501 entries, more than the 500 a catalog list "
                           "may hold. Keep the entries a plan may choose from"), said
    (overlay / "gpus.yaml").write_text("schema_version: 1\ngpus:\n" + "  - {}\n" * 500)  # at the ceiling: read
    with pytest.raises(CatalogError) as got:
        load_catalog(overlay)
    assert "gpus[0]" in str(got.value) and "501" not in str(got.value), str(got.value)


def test_a_catalog_given_in_code_with_too_many_entries_is_refused():
    cat = load_catalog()
    big = dataclasses.replace(cat, instances=cat.instances * (MAX_CATALOG_ENTRIES // len(cat.instances) + 1))
    n = len(big.instances)
    with pytest.raises(CatalogError) as got:
        estimate(**INFER, gpu="rtx-4090", catalog=big)
    said = str(got.value)
    assert said.startswith(f"the Catalog given: instances: lists {n:,} entries, more than the 500"), said


def test_the_fingerprint_tells_apart_records_that_differ_in_one_field():
    # the fingerprint pickles a record as its type and its fields' values (planner.catalog.fingerprint._FieldPickler):
    # one changed field changes it; a record of a type pickle cannot name gives '' (always checked)
    import dataclasses

    from planner.catalog.fingerprint import content_fingerprint
    from planner.catalog.loader import load_catalog

    cat = load_catalog()
    base = content_fingerprint(cat)
    assert len(base) == 64 and base == content_fingerprint(load_catalog())  # the same content, the same print
    g = cat.gpus[0]
    one = dataclasses.replace(cat, gpus=(dataclasses.replace(g, tdp_w=g.tdp_w + 1),) + tuple(cat.gpus[1:]))
    assert content_fingerprint(one) not in ("", base)

    @dataclasses.dataclass(frozen=True)
    class Other:  # a local class cannot be pickled by reference: such a catalog is always checked ('')
        x: float

    assert content_fingerprint(dataclasses.replace(cat, gpus=(Other(0.0),))) == ""
