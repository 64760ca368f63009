"""Issue 28, hostile pass 26B N1: an int or float subclass whose own __int__, __index__ or __float__ raises escaped
from the API as that exception (RuntimeError), not InputError. planner.api.inputs.plain_texts now reads such a
number as the plain number it stores (int.__index__ / float.__float__ of the base class), as it reads str, dict and
list subclasses by what they store (h21b, h25b).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from planner import estimate, plan

ROOT = Path(__file__).resolve().parents[1]


class _Int(int):
    def __int__(self) -> int:
        raise RuntimeError("the caller's own conversion")

    __index__ = __int__

    def __float__(self) -> float:
        raise RuntimeError("the caller's own conversion")


class _Float(float):
    def __float__(self) -> float:
        raise RuntimeError("the caller's own conversion")


def test_a_keyword_number_is_read_as_the_number_it_stores() -> None:
    a = estimate(model="llama-2-7b", task="train", seq_len=_Int(512), micro_batch=_Int(1))
    b = estimate(model="llama-2-7b", task="train", seq_len=512, micro_batch=1)
    assert a.to_dict() == b.to_dict()


def test_numbers_in_a_scenario_mapping_are_read_as_they_store() -> None:
    data = yaml.safe_load((ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_text())
    data["constraints"] = {**data.get("constraints", {}), "budget_usd": 5000.0}
    plain = plan(data).choice
    pick = ("gpu_id", "cards_total", "capex_usd")  # the choice's NaN cells (no run hours here) equal nothing
    data["workloads"][0]["seq_len"] = _Int(data["workloads"][0]["seq_len"])  # 512 in the shipped file
    data["constraints"]["budget_usd"] = _Float(5000.0)
    got = plan(data).choice
    assert [got[k] for k in pick] == [plain[k] for k in pick]
