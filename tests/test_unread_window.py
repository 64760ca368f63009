"""A ``sliding_window`` key in the config.json of a Llama or Gemma (v1) model is read as Transformers reads
it: not at all (LlamaConfig and GemmaConfig define no such key; LlamaAttention passes no window to the
attention function and its mask is ``create_causal_mask``), with a warning that says so (h29b M1: it was
taken as a window on every layer, 1 GiB less prefill at 32k context than the model needs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.model.architecture import from_hf_config
from planner.workload.checks import architecture_warnings

_MODELS = {m["id"]: m for m in yaml.safe_load((Path(__file__).parents[1] / "catalog" / "models.yaml").read_text())["models"]}
_LLAMA = _MODELS["llama-3.1-8b"]["config"]


@pytest.mark.parametrize("model_type", ["llama", "gemma"])
def test_a_window_key_nothing_reads_changes_nothing_and_is_said(model_type):
    plain = from_hf_config({**_LLAMA, "model_type": model_type})
    keyed = from_hf_config({**_LLAMA, "model_type": model_type, "sliding_window": 16})
    assert (keyed.sliding_window, keyed.sliding_window_layers) == (None, 0) == (plain.sliding_window,
                                                                                plain.sliding_window_layers)
    assert keyed.param_counts() == plain.param_counts()
    said = [w for w in architecture_warnings(keyed) if "sliding_window" in w]
    assert said == [f"config.json's sliding_window 16 is not read for model_type {model_type}: its attention in "
                    "Transformers (and llama.cpp) has no sliding window, so every layer is sized attending to the "
                    "whole context"]
    assert not [w for w in architecture_warnings(plain) if "sliding_window" in w]


def test_no_window_is_no_warning():
    arch = from_hf_config({**_LLAMA, "sliding_window": None})
    assert not [w for w in architecture_warnings(arch) if "sliding_window" in w]


def test_the_unread_key_is_still_checked_as_a_number():
    # checked as for a model that reads it (a window of 0 tokens is refused), before it is set aside
    from planner.core.errors import ModelConfigError

    with pytest.raises(ModelConfigError) as info:
        from_hf_config({**_LLAMA, "sliding_window": 0})
    assert "sliding_window" in str(info.value)


def test_mistral_still_windows_every_layer():
    # MistralAttention passes config.sliding_window to the attention function on every layer
    arch = from_hf_config({**_LLAMA, "model_type": "mistral", "sliding_window": 16})
    assert (arch.sliding_window, arch.sliding_window_layers) == (16, arch.num_hidden_layers)
    assert not [w for w in architecture_warnings(arch) if "sliding_window" in w]
