"""A new-user review's catalog findings, end to end through the CLI.

Each overlay below used to load and change a plan without a word (or, for a price of 0, to be refused
without saying what to do). Now each is bad input: exit 2, one line naming the file, the entry and the
field with a hint, no traceback, and no report written. The messages' figures are worked out in
tests/test_catalog.py, which checks the same rules on the loader.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "ft-7b-workstation.yaml"

CASES = [
    # 1. AMD's "192 GB" for AM5 is 192 GiB; read as 192 x 10^9 bytes (178.81 GiB) it dropped the 4 x 48 GiB
    # configuration and the plan moved to a pricier machine.
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: am5-desktop, max_memory: 192 GB}\n",
     "platforms.yaml:3: platforms[0] (am5-desktop).max_memory: '192 GB' is 178.81 GiB (GB = 10^9 bytes), but memory "
     "sizes are binary. A vendor's '192 GB' memory limit is 192 GiB (whole DIMMs of binary size): write '192 GiB'."),
    # 1. a module sold as "64 GB" holds 64 GiB; 64e9 bytes = 59.60 GiB
    ("ram.yaml", "schema_version: 1\ndimms:\n  - {id: ddr5-udimm-64g, size: 64 GB}\n",
     "ram.yaml:3: dimms[0] (ddr5-udimm-64g).size: '64 GB' is 59.60 GiB (GB = 10^9 bytes), but memory sizes are binary. "
     "A module sold as '64 GB' holds 64 GiB (DRAM chips come in powers of two): write '64 GiB'."),
    # 3. the shipped am5-desktop's platform_w is 300 W
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: am5-desktop, psu_w: 200}\n",
     "platforms.yaml:3: platforms[0] (am5-desktop).psu_w: psu_w 200 W is less than platform_w 300 W: no power is left "
     "for GPUs. psu_w is the supply the machine can use (for redundant supplies, the non-redundant share), platform_w "
     "what everything but the GPUs draws under load (CPU, RAM, drives, fans); psu_w must exceed it by the GPUs' power. "
     "Check for swapped values or a missing digit."),
    # 3. the shipped am5-desktop has 2 channels
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: am5-desktop, dimm_slots: 1}\n",
     "platforms.yaml:3: platforms[0] (am5-desktop).dimm_slots: dimm_slots 1 is fewer than memory_channels 2: no RAM "
     "configuration puts a DIMM in every channel. dimm_slots counts every DIMM slot of the machine (4 on a "
     "2-channel desktop board: 2 per channel), memory_channels the memory channels of all its CPUs together."),
    # 3. the shipped catalog's smallest ddr5-udimm is ddr5-udimm-16g (16 GiB): 2 x 16 GiB = 32 GiB
    ("platforms.yaml", "schema_version: 1\nplatforms:\n  - {id: am5-desktop, max_memory: 1 GiB}\n",
     "platforms.yaml:3: platforms[0] (am5-desktop).max_memory: max_memory 1.00 GiB is less than one ddr5-udimm-16g "
     "module (16.00 GiB, the smallest ddr5-udimm in ram.yaml) in each of its 2 channels (32.00 GiB): no RAM "
     "configuration fits. Check for a missing digit or a wrong unit (a platform's maximum is the vendor's figure, "
     "hundreds of GiB or a few TiB), or list a smaller module of that kind in ram.yaml."),
    # 4. a price of 0 for a GPU already owned
    ("gpus.yaml", "schema_version: 1\ngpus:\n  - {id: rtx-3090, price_usd: 0, price_kind: quote, source: mine, "
                  "as_of: 2026-01-01}\n",
     "gpus.yaml:3: gpus[0] (rtx-3090).price_usd: must be more than 0, not 0. A catalog price is what a plan pays for "
     "one unit; there is no price for hardware already owned. To see what GPUs you own can run, use 'planner estimate "
     "--gpu ID --gpus N' or 'planner fit', which need no price; to plan a purchase, give the unit's price (a "
     "quote, street price or estimate)."),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[f"{c[0]}:{i}" for i, c in enumerate(CASES)])
def test_review_overlay_is_bad_input(tmp_path: Path, name: str, text: str, expected: str) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["plan", str(SCENARIO), "--catalog", str(overlay), "--out", str(out)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.stderr.splitlines() == [f"Error: {overlay}/{expected}"]
    assert not out.exists()  # no report, not even a partial one


def test_model_typo_against_its_published_total_is_bad_input(tmp_path: Path) -> None:
    """2. Qwen2.5-14B with intermediate_size 1382 for 13824: 5,596,795,904 parameters counted against the
    published 14,770,033,664 (tests/test_catalog.py works the figures out)."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "models.yaml").write_text(
        "schema_version: 1\nmodels:\n  - id: qwen2.5-14b\n    hf_id: Qwen/Qwen2.5-14B\n"
        "    source: https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json\n    as_of: 2026-11-01\n"
        "    published_parameters: 14770033664\n    config: {model_type: qwen2, hidden_size: 5120, "
        "intermediate_size: 1382, num_attention_heads: 40, num_key_value_heads: 8, num_hidden_layers: 48, "
        "vocab_size: 152064, tie_word_embeddings: false}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["catalog", "models", "--catalog", str(overlay)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.stderr.splitlines() == [
        f"Error: {overlay}/models.yaml:7: models[0] (qwen2.5-14b).published_parameters: published_parameters "
        "14,770,033,664 is not the count from config, 5,596,795,904 parameters (-9,173,237,760). The two must be "
        "equal: check config against the model's config.json (a mistyped size such as intermediate_size or "
        "num_hidden_layers changes the count), or drop published_parameters if only a rounded total (such as '14.8B') "
        "is known."]
