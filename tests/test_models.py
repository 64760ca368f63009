"""--model resolution (planner.model.models): catalog ids, config.json paths, the local Hugging Face cache.

The catalog is passed as a plain mapping (read here with yaml.safe_load), so these tests do not
depend on the catalog loader. The Hugging Face cache is built in tmp_path; the network is blocked.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from planner.core.errors import ModelConfigError
from planner.model.models import (
    ACCEPTED_FORMS,
    ResolvedModel,
    cached_config_path,
    hf_cache_dir,
    resolve_model,
)
from tests.catalog_yaml import catalog_models

MODELS_YAML = Path(__file__).resolve().parents[1] / "catalog" / "models.yaml"

# A small Llama: h 64, 2 layers, 8 heads, 2 KV heads, f 160, V 100, untied -> 95,040 parameters
# (see tests/test_architecture.py::test_gqa_llama_counts for the arithmetic).
TINY = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
        "num_key_value_heads": 2, "intermediate_size": 160, "vocab_size": 100, "tie_word_embeddings": False}
TINY_PARAMS = 95_040
# The same with tied embeddings: 95,040 - 100 x 64 = 88,640.
TINY_TIED = {**TINY, "tie_word_embeddings": True}
TINY_TIED_PARAMS = 88_640

HINT = (
    "--model takes a catalog id (see 'planner catalog models'), a path to a config.json or to a directory holding one, "
    "or a Hugging Face id org/name whose config.json is already in the local Hugging Face cache."
)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("planner.model.models must not use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def catalog() -> dict:
    return catalog_models()


@pytest.fixture
def small_catalog() -> dict:
    return {
        "tiny-llama": {"config": TINY, "hf_id": "acme/Tiny-Llama", "source": "https://example.invalid/config.json"},
        "tiny-tied": {"config": TINY_TIED, "hf_id": None, "source": "test"},
    }


def _error(*args, **kwargs) -> str:
    with pytest.raises(ModelConfigError) as info:
        resolve_model(*args, **kwargs)
    return str(info.value)


def test_accepted_forms_hint_text():
    assert ACCEPTED_FORMS == HINT


# ----- catalog ids ----------------------------------------------------------------------

def test_catalog_id(catalog):
    model = resolve_model("llama-2-7b", catalog)
    assert model == ResolvedModel(
        id="llama-2-7b", architecture=model.architecture, source="catalog: catalog/models.yaml",
        hf_id="meta-llama/Llama-2-7b-hf",
    )
    assert model.architecture.parameters == 6_738_415_616


def test_catalog_id_ignores_case(catalog):
    assert resolve_model("Llama-3.1-8B", catalog).id == "llama-3.1-8b"


def test_catalog_hub_id_resolves_to_the_catalog_entry(catalog, tmp_path):
    model = resolve_model("meta-llama/Llama-2-7b-hf", catalog, hf_cache=tmp_path / "empty-cache")
    assert (model.id, model.source, model.hf_id) == ("llama-2-7b", "catalog: catalog/models.yaml",
                                                     "meta-llama/Llama-2-7b-hf")


def test_catalog_hub_id_match_ignores_case(small_catalog, tmp_path):
    assert resolve_model("acme/tiny-llama", small_catalog, hf_cache=tmp_path).id == "tiny-llama"


def test_catalog_entry_as_an_object_with_its_file(tmp_path):
    entry = SimpleNamespace(config=TINY, hf_id="acme/tiny", source="test", file="my/models.yaml")
    model = resolve_model("tiny", {"tiny": entry})
    assert (model.id, model.source, model.hf_id) == ("tiny", "catalog: my/models.yaml", "acme/tiny")
    assert model.architecture.parameters == TINY_PARAMS


def test_catalog_entry_where_locates_config_errors():
    entry = SimpleNamespace(config={**TINY, "num_hidden_layers": 0}, hf_id="acme/tiny", file="my/models.yaml",
                            where="my/models.yaml:12")
    assert _error("tiny", {"tiny": entry}) == (
        "my/models.yaml:12: num_hidden_layers: num_hidden_layers must be at least 1, not 0."
    )


def test_catalog_entry_without_hf_id(small_catalog):
    model = resolve_model("tiny-tied", small_catalog)
    assert model.hf_id is None and model.architecture.parameters == TINY_TIED_PARAMS


def test_catalog_entry_with_a_bad_config():
    bad = {"tiny": {"config": {**TINY, "num_key_value_heads": 3}}}
    assert _error("tiny", bad) == (
        "catalog/models.yaml: tiny: config: num_key_value_heads: num_key_value_heads (3) must divide "
        "num_attention_heads (8). Grouped-query attention shares each KV head among num_attention_heads / "
        "num_key_value_heads query heads; the nearest that divide 8: 2 or 4. Check the model's published config.json."
    )


def test_catalog_entry_without_config():
    assert _error("tiny", {"tiny": {"hf_id": "acme/tiny"}}) == (
        "catalog/models.yaml: tiny: config: the catalog entry has no config mapping."
    )


def test_resolved_model_is_frozen(small_catalog):
    model = resolve_model("tiny-llama", small_catalog)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.id = "other"  # type: ignore[misc]


# ----- paths ----------------------------------------------------------------------------

def _write(path: Path, config) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def test_path_to_config_json(tmp_path):
    config = _write(tmp_path / "tiny" / "config.json", TINY)
    model = resolve_model(str(config))
    assert (model.id, model.source, model.hf_id) == ("tiny", str(config), None)
    assert model.architecture.parameters == TINY_PARAMS


def test_path_to_a_directory(tmp_path):
    _write(tmp_path / "tiny" / "config.json", TINY_TIED)
    model = resolve_model(str(tmp_path / "tiny"))
    assert (model.id, model.source) == ("tiny", str(tmp_path / "tiny" / "config.json"))
    assert model.architecture.parameters == TINY_TIED_PARAMS


def test_path_object_is_accepted(tmp_path):
    config = _write(tmp_path / "tiny" / "config.json", TINY)
    assert resolve_model(config).source == str(config)  # type: ignore[arg-type]


def test_path_to_a_json_file_with_another_name(tmp_path):
    config = _write(tmp_path / "my-model.json", TINY)
    assert resolve_model(str(config)).id == "my-model"


def test_relative_path_that_exists_wins_over_a_hub_id(tmp_path, monkeypatch):
    _write(tmp_path / "acme" / "tiny" / "config.json", TINY)
    cache = tmp_path / "hub"
    _snapshot(cache, "acme/tiny", "a" * 40, TINY_TIED)
    monkeypatch.chdir(tmp_path)
    model = resolve_model("acme/tiny", hf_cache=cache)
    assert model.source == os.path.join("acme/tiny", "config.json")
    assert model.architecture.parameters == TINY_PARAMS


def test_catalog_id_wins_over_a_directory_of_the_same_name(tmp_path, monkeypatch, small_catalog):
    _write(tmp_path / "tiny-llama" / "config.json", TINY_TIED)
    monkeypatch.chdir(tmp_path)
    assert resolve_model("tiny-llama", small_catalog).source == "catalog: catalog/models.yaml"


def test_missing_file(tmp_path):
    assert _error("./nope.json") == f"./nope.json: no such file or directory. {HINT}"
    assert _error("a/b/c") == f"a/b/c: no such file or directory. {HINT}"


def test_directory_without_config_json(tmp_path):
    (tmp_path / "empty").mkdir()
    name = str(tmp_path / "empty")
    assert _error(name) == f"{name}: the directory holds no config.json. {HINT}"


def test_invalid_json_reports_file_and_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",\n  "hidden_size": 64,,\n}', encoding="utf-8")
    assert _error(str(path)) == (
        f"{path}:2: invalid JSON: Expecting property name enclosed in double quotes at line 2 column 21. "
        "Keys are in double quotes, and the last value has no ',' after it."
    )


def test_json_root_that_is_not_an_object(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("[1, 2]", encoding="utf-8")
    assert _error(str(path)) == (f"{path}:1: the top level is not a JSON object. "
                                 'A config.json is one object of keys and values: {"model_type": "llama", ...}.')


def test_json_nan_is_refused(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "rope_theta": NaN}', encoding="utf-8")
    assert _error(str(path)) == (f"{path}:1: invalid JSON: NaN is not a number a config may hold. "
                                 "Write a number, or null where the value is unknown.")


def test_empty_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("", encoding="utf-8")
    assert _error(str(path)) == (f"{path}: is empty. "
                                 'A config.json is one object of keys and values: {"model_type": "llama", ...}.')


def test_unsupported_architecture_in_a_file(tmp_path, monkeypatch):
    from planner.model import generic

    monkeypatch.setattr(generic, "knows", lambda model_type: False)  # as without the hf extra
    path = _write(tmp_path / "rwkv" / "config.json", {"model_type": "rwkv", "hidden_size": 768})
    assert _error(str(path)) == (
        f"{path}:2: model_type: model_type 'rwkv' is not supported. Supported model_type values: "
        "bloom, cohere, deepseek_v2, deepseek_v3, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_bigcode, "
        "gpt_neox, gpt_oss, gptj, granite, llama, mistral, mixtral, olmo2, phi, phi3, qwen2, qwen2_moe, qwen3, "
        "qwen3_moe, starcoder2. Any other architecture is read through Transformers, built on the meta device, when "
        "Transformers knows it (pip install 'planner[hf]')."
    )


def test_real_catalog_config_written_as_json_counts_the_same(tmp_path, catalog):
    entry = catalog["qwen3-4b"]
    path = _write(tmp_path / "Qwen3-4B" / "config.json", entry["config"])
    model = resolve_model(str(path.parent))
    assert model.id == "Qwen3-4B"
    assert model.architecture.parameters == entry["published_parameters"]


# ----- the local Hugging Face cache -----------------------------------------------------

def _snapshot(cache: Path, hub_id: str, revision: str, config, mtime: float | None = None) -> Path:
    repo = cache / ("models--" + hub_id.replace("/", "--"))
    path = _write(repo / "snapshots" / revision / "config.json", config)
    if mtime is not None:
        os.utime(path.parent, (mtime, mtime))
    return path


def _ref(cache: Path, hub_id: str, revision: str) -> None:
    refs = cache / ("models--" + hub_id.replace("/", "--")) / "refs"
    refs.mkdir(parents=True, exist_ok=True)
    (refs / "main").write_text(revision, encoding="utf-8")  # huggingface_hub writes no newline


def test_hub_id_from_the_cache(tmp_path):
    cache = tmp_path / "hub"
    path = _snapshot(cache, "acme/tiny", "a" * 40, TINY)
    model = resolve_model("acme/tiny", hf_cache=cache)
    assert model == ResolvedModel(id="acme/tiny", architecture=model.architecture, source=f"hf-cache: {path}",
                                  hf_id="acme/tiny")
    assert model.architecture.parameters == TINY_PARAMS


def test_refs_main_names_the_snapshot(tmp_path):
    cache = tmp_path / "hub"
    main = _snapshot(cache, "acme/tiny", "a" * 40, TINY, mtime=1_000_000)
    _snapshot(cache, "acme/tiny", "b" * 40, TINY_TIED, mtime=2_000_000)  # newer, but not main
    _ref(cache, "acme/tiny", "a" * 40 + "\n")
    assert cached_config_path("acme/tiny", cache) == main
    assert resolve_model("acme/tiny", hf_cache=cache).architecture.parameters == TINY_PARAMS


def test_without_refs_the_newest_snapshot_is_used(tmp_path):
    cache = tmp_path / "hub"
    _snapshot(cache, "acme/tiny", "a" * 40, TINY, mtime=2_000_000)
    _snapshot(cache, "acme/tiny", "b" * 40, TINY_TIED, mtime=1_000_000)
    model = resolve_model("acme/tiny", hf_cache=cache)
    assert model.source.endswith(os.path.join("a" * 40, "config.json"))
    assert model.architecture.parameters == TINY_PARAMS


def test_refs_main_without_config_is_refused_not_another_snapshot(tmp_path):
    # Transformers loads refs/main's revision offline; another snapshot would size another model, unsaid
    cache = tmp_path / "hub"
    _snapshot(cache, "acme/tiny", "b" * 40, TINY_TIED, mtime=2_000_000)
    _snapshot(cache, "acme/tiny", "c" * 40, TINY, mtime=1_000_000)
    (cache / "models--acme--tiny" / "snapshots" / ("a" * 40)).mkdir()  # main's snapshot lacks config.json
    _ref(cache, "acme/tiny", "a" * 40)
    raised = None
    try:
        cached_config_path("acme/tiny", cache)
    except ModelConfigError as exc:
        raised = str(exc)
    assert raised is not None and f"refs/main names the revision '{'a' * 40}', which the cache holds no" in raised


def test_cache_repo_without_any_config(tmp_path):
    cache = tmp_path / "hub"
    (cache / "models--acme--tiny" / "snapshots" / ("a" * 40)).mkdir(parents=True)
    assert cached_config_path("acme/tiny", cache) is None
    assert _error("acme/tiny", hf_cache=cache) == (
        f"'acme/tiny' is not in the catalog and its config.json is not in the local Hugging Face cache {cache}. "
        f"Fetch it once with 'huggingface-cli download acme/tiny config.json' where the hub is reachable. {HINT}"
    )


def test_legacy_single_name_repo_in_the_cache(tmp_path):
    cache = tmp_path / "hub"
    _snapshot(cache, "tiny", "a" * 40, TINY)
    model = resolve_model("tiny", hf_cache=cache)
    assert (model.id, model.hf_id) == ("tiny", "tiny")


def test_catalog_hf_id_is_preferred_over_the_cache(tmp_path, small_catalog):
    cache = tmp_path / "hub"
    _snapshot(cache, "acme/Tiny-Llama", "a" * 40, TINY_TIED)
    model = resolve_model("acme/Tiny-Llama", small_catalog, hf_cache=cache)
    assert model.source == "catalog: catalog/models.yaml"
    assert model.architecture.parameters == TINY_PARAMS


def test_invalid_json_in_the_cache(tmp_path):
    cache = tmp_path / "hub"
    path = cache / "models--acme--tiny" / "snapshots" / ("a" * 40) / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text('{\n"model_type": "llama"\n"hidden_size": 64}', encoding="utf-8")
    assert _error("acme/tiny", hf_cache=cache) == (
        f"{path}:3: invalid JSON: Expecting ',' delimiter at line 3 column 1. "
        "Put a ',' after each value but the last (one is missing before this point)."
    )


def test_cache_directory_from_the_environment(tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    path = _snapshot(tmp_path / "hf-home" / "hub", "acme/tiny", "a" * 40, TINY)
    assert resolve_model("acme/tiny").source == f"hf-cache: {path}"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert _error("acme/tiny").startswith(
        f"'acme/tiny' is not in the catalog and its config.json is not in the local Hugging Face cache "
        f"{tmp_path / 'elsewhere'}."
    )


def test_hf_cache_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert hf_cache_dir({}) == tmp_path / "home" / ".cache" / "huggingface" / "hub"
    assert hf_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/huggingface/hub")
    assert hf_cache_dir({"XDG_CACHE_HOME": "/x", "HF_HOME": "/h"}) == Path("/h/hub")
    assert hf_cache_dir({"HF_HOME": "/h", "HUGGINGFACE_HUB_CACHE": "/old"}) == Path("/old")
    assert hf_cache_dir({"HF_HOME": "/h", "HUGGINGFACE_HUB_CACHE": "/old", "HF_HUB_CACHE": "/new"}) == Path("/new")
    assert hf_cache_dir({"HF_HUB_CACHE": "", "HF_HOME": "/h"}) == Path("/h/hub")  # empty means unset


# ----- names that match nothing ---------------------------------------------------------

def test_unknown_name_suggests_catalog_ids(catalog, tmp_path):
    assert _error("lama-2-7b", catalog, hf_cache=tmp_path) == (
        f"unknown model 'lama-2-7b'. Did you mean 'llama-2-7b' or 'llama-2-70b' or 'llama-2-13b'? {HINT}"
    )
    # the prefix match first, then the rest of the family (the first '-' part, qwen3)
    assert _error("qwen3-4", catalog, hf_cache=tmp_path) == (
        f"unknown model 'qwen3-4'. Did you mean 'qwen3-4b' or 'qwen3-30b-a3b' or 'qwen3-235b-a22b'? {HINT}")


def test_unknown_name_in_a_small_catalog_lists_the_ids(small_catalog, tmp_path):
    assert _error("zzz", small_catalog, hf_cache=tmp_path) == (
        f"unknown model 'zzz'. Valid: tiny-llama, tiny-tied. {HINT}"
    )


def test_unknown_name_without_a_catalog(tmp_path):
    assert _error("zzz", hf_cache=tmp_path) == f"unknown model 'zzz'. {HINT}"


def test_unknown_hub_id_not_cached(catalog, tmp_path):
    cache = tmp_path / "hub"
    assert _error("meta-llama/Llama-2-7b", catalog, hf_cache=cache) == (
        f"'meta-llama/Llama-2-7b' is not in the catalog and its config.json is not in the local Hugging Face "
        f"cache {cache}. Did you mean 'meta-llama/Llama-2-7b-hf' or 'meta-llama/Llama-2-70b-hf' or "
        f"'meta-llama/Llama-2-13b-hf'? Fetch it once with 'huggingface-cli download meta-llama/Llama-2-7b "
        f"config.json' where the hub is reachable. {HINT}"
    )


def test_empty_name(catalog):
    assert _error("  ", catalog) == f"the model name is empty. {HINT}"
