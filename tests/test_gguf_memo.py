"""GGUF weights are worked out once per model and preset, and the per-block sums the llama.cpp memory
model reads (planner.model.gguf.GgufWeights.blocks) equal the sums over the tensors they replace.

Why: a plan of llama-3.1-70b Q4_K_M with ``gpu_layers: max`` on two GPU types sizes 656 placements
of one file; working out the file's tensor types for each took 27 s of the plan's 28 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.memory.llamacpp import CUDA_ALIGNMENT, _pad, placement, weight_split
from planner.model.architecture import from_hf_config
from planner.model.gguf import gguf_weights

_MODELS = {m["id"]: m for m in yaml.safe_load((Path(__file__).parents[1] / "catalog" / "models.yaml").read_text())["models"]}


def _arch(mid):
    return from_hf_config(_MODELS[mid]["config"])


@pytest.mark.parametrize("mid", ["llama-3.1-70b", "mixtral-8x7b"])
def test_the_weights_of_one_model_and_preset_are_worked_out_once(mid):
    arch = _arch(mid)
    first = gguf_weights(arch, "Q4_K_M")
    assert gguf_weights(arch, "Q4_K_M") is first
    assert gguf_weights(arch, "Q4_K_M", imatrix=True) is not first  # another key: another mix
    assert gguf_weights(arch, "Q8_0") is not first
    # a fresh Architecture equal to the first gets the same bytes (the memo is kept on the object)
    assert gguf_weights(_arch(mid), "Q4_K_M") == first


@pytest.mark.parametrize("mid", ["llama-3.1-70b", "mixtral-8x7b"])
def test_block_sums_equal_the_sums_over_the_tensors(mid):
    w = gguf_weights(_arch(mid), "Q4_K_M")
    layers = sorted({t.layer for t, _, _ in w.tensors if t.layer >= 0})
    assert sorted(w.blocks) == layers
    for i in layers:
        mine = [(t, b) for t, _, b in w.tensors if t.layer == i]
        blk = w.blocks[i]
        assert blk.total == sum(b for _, b in mine) == w.layer_bytes(i)
        assert blk.sizes == tuple(b for _, b in mine)
        assert blk.largest_attn == max((b for t, b in mine if t.quantizable and t.role.startswith("attn")), default=0)
        assert blk.largest_other == max((b for t, b in mine if t.quantizable and not t.role.startswith("attn")),
                                        default=0)
        assert blk.experts == sum(b for t, b in mine if t.experts > 1)
    assert (sum(b.experts for b in w.blocks.values()) > 0) == (mid == "mixtral-8x7b")
    for role in ("token_embd", "output", "norm"):
        assert w.role_bytes(role) == sum(b for t, _, b in w.tensors if t.layer < 0 and t.role == role)
    assert w.layer_bytes(-1) == 0


@pytest.mark.parametrize("gpu_layers", [0, 40, 81])
def test_weight_split_equals_placing_each_tensor(gpu_layers):
    # the reference: every tensor placed on its own, as weight_split did before it summed by block
    arch = _arch("llama-3.1-70b")
    place = placement(arch, gpu_layers, 2)
    split = weight_split(arch, "Q4_K_M", place)
    host, dev = 0, [0] * place.devices
    holders = {place.device_of(i) for i in range(place.n_layer)}
    for t, _, b in split.weights.tensors:
        if t.role == "rope":
            for d in holders:  # one copy in each buffer that holds a block
                if d is None:
                    host += b
                else:
                    dev[d] += _pad(b, CUDA_ALIGNMENT)
            continue
        d = place.device_of(t.layer) if t.layer >= 0 else (place.output_device if t.role in ("output", "norm")
                                                           else None)
        if d is None:
            host += b
        else:
            dev[d] += _pad(b, CUDA_ALIGNMENT)
    assert (split.gpu, split.host, split.per_device) == (sum(dev), host, tuple(dev))
