"""Fixes from a second new user's audit of deadline/SLO planning (branch slofix2).

Expected values are derived beside each assertion from the memory model's own components or from
the formula the docstrings give."""

from __future__ import annotations

import re

import pytest

from planner import estimate, load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _bytes(text: str, pattern: str) -> int:
    m = re.search(pattern, text)
    assert m, text
    return int(m.group(1).replace(",", ""))


# ----- 2. QLoRA + FSDP + offload_params moves the packed NF4 storage ------------------------------------

def test_qlora_fsdp_offload_times_the_bytes_the_memory_model_stores(catalog):
    e = estimate(model="llama-2-70b", task="train", method="qlora", recipe="pure-bf16", optimizer="adamw",
                 framework="fsdp", lora_rank=8, micro_batch=1, seq_len=2048, grad_accum=8, gpus=2, zero=3,
                 offload_params=True, checkpointing="full", gpu="rtx-3090", catalog=catalog)
    est = e.estimate
    # the memory model's frozen NF4 base in host RAM (both ranks' shards: the whole model)
    base = next(c.bytes for c in est.components if c.name == "weights (frozen NF4 base)")
    assert base < 0.6 * est.parameters  # about 0.53 B per parameter, not 2 B
    stored = base + est.trainable_parameters * 2  # + the bf16 adapters gathered beside it
    parts = {p.name: p for p in e.speed.parts}
    off = parts["offload transfers"]
    text = off.formula() if callable(off.formula) else off.formula
    # full checkpointing: 3 passes (forward, recomputed forward, backward) x 8 micro-batches per step
    assert _bytes(text, r"([\d,]+) B per step") == pytest.approx(3 * 8 * stored, abs=8)
    dp = parts["data-parallel communication"]
    text = dp.formula() if callable(dp.formula) else dp.formula
    assert _bytes(text, r"2 all-gathers of ([\d,]+) B") == pytest.approx(stored, abs=1)
