"""Hostile pass 16B (reports/h16b.md), findings fixed on branch f16b4.

9.  A key merged with ``<<: *anchor`` that is wrong for the merging entry names the ``<<`` line too, and hints at
    overriding it there or not merging (YAML cannot unset a merged key); a list merged by mistake names the ``<<``.
11. A scenario-level constraint no workload is subject to (min_decode_tokens_per_s with training only,
    max_hours_per_job with inference only) gets a warning, as an unused constraints.network does.
13e. ``catalog check --today`` before the newest price is refused, with a month that works as the hint.
13f. fit(prompt_tokens=...) says fit takes no request to time, instead of "Did you mean 'document_tokens'?".
13i. An extras category that is another word for planner's own memory or network line ('ram', 'DIMMs', 'nic') is
     refused as 'memories' is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import main


def _run(args: list[str]):
    return CliRunner().invoke(main, args)


def _scenario(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# 13i. the memory line buys the host's RAM as DIMMs and the network line its NICs (planner.solve.extras
# _OWN_SYNONYMS): those words are refused with the message 'memories' gets; 'storage' is still an extras word
@pytest.mark.parametrize("category, own", [
    ("ram", "memory"), ("RAM", "memory"), ("DIMMs", "memory"), ("rdimm", "memory"), ("'\uff52\uff41\uff4d'", "memory"),
    ("memories", "memory"), ("nic", "network"), ("NICs", "network"), ("gpus", "gpu"),
])
def test_an_extras_category_naming_the_memory_or_network_line_is_refused(tmp_path: Path, category: str,
                                                                         own: str) -> None:
    text = (f"name: x\nextras:\n  - description: 2 more DIMMs\n    unit_price_usd: 300\n    source: q\n"
            f"    as_of: 2026-01-15\n    category: {category}\nworkloads:\n"
            "  - {name: w, model: llama-2-7b, task: infer}\n")
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    shown = category.strip("'")
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (f"Error: {tmp_path}/s.yaml:7: extras[0].category: category {shown!r} is one of "
                                f"planner's own quote lines ({own!r}; they are gpu, platform, memory, network), each "
                                "priced from the catalog. Use another word for what this line buys, e.g. category: "
                                "storage; a GPU, platform, memory or NIC to plan with belongs in a catalog overlay.")


def test_an_extras_category_of_another_word_is_still_taken(tmp_path: Path) -> None:
    text = ("name: x\nextras:\n  - description: NVMe SSD 4 TB\n    unit_price_usd: 300\n    source: q\n"
            "    as_of: 2026-01-15\n    category: storage\nworkloads:\n  - {name: w, model: llama-2-7b, task: infer}\n")
    r = _run(["plan", str(_scenario(tmp_path, text)), "--out", str(tmp_path / "o"), "--format", "json"])
    assert r.exit_code == 0, r.output
