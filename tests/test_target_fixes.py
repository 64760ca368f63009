"""New-user findings on deadline and SLO planning (issue 29, items 3 and 4): `compare` rents only
instances that meet the training deadline; "What would fit" offers `used_ok: true` only as the
solver checks it, keeps its levers for used-only cards, names pinned keys it changes, counts GPUs
the solver can build, offers the serving levers; `estimate --gpu-layers max` with `--gpu`.

Expected values are the tool's own models read back (the time model's hours per run, the memory
model's need) or derivations written beside each assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from planner import load_catalog, plan
from planner.solve.solver import NoFeasiblePlan

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _mapping(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / name).read_text())


def _d23() -> dict:
    """The shipped 72 h fine-tune at a 2.3 h deadline and at most 2 nodes (the new user's d23.yaml)."""
    data = _mapping("finetune-72h-deadline.yaml")
    data["name"] = "d23"
    data["workloads"][0]["deadline_hours"] = 2.3
    data["constraints"]["max_nodes"] = 2
    return data


def test_compare_rents_only_instances_that_meet_the_deadline(catalog, tmp_path):
    import openpyxl

    from planner import compare

    r = compare(_d23(), catalog=catalog, out=tmp_path)
    wc = r.comparison.workloads[0]
    assert wc.deadline_hours == 2.3
    # the local machine meets it (the solver keeps only such machines)
    assert wc.local.hours_per_job <= 2.3
    rented = [o for o in wc.cloud if o.feasible]
    assert all(o.time.hours_per_job <= 2.3 for o in rented)
    late = [o for o in wc.cloud if o.hours_over_deadline is not None]
    assert late and all(not o.feasible for o in late)
    for o in late:
        # hours over = the instance's hours per run (same time model) - 2.3
        assert o.hours_over_deadline == pytest.approx(o.time.hours_per_job - 2.3)
        assert o.why_not == (f"misses the deadline: {o.time.hours_per_job:,.2f} h per run, "
                             f"{o.hours_over_deadline:,.2f} h over the 2.3 h deadline")
    # the verdict no longer rests on lambda 8 x B200 at 2.35 h, nor on A100 / spot p4d runs of 18-98 h
    b200 = wc.option("lambda-gpu-8x-b200-sxm6")
    assert not b200.feasible and b200.time.hours_per_job > 2.3
    for iid in ("runpod-1x-a100-80gb-secure", "aws-p4d-24xlarge"):
        o = wc.option(iid)
        assert o is not None and not o.feasible, iid
    assert wc.best_on_demand is None or wc.option(wc.best_on_demand).time.hours_per_job <= 2.3
    assert wc.best_spot is None or wc.option(wc.best_spot).time.hours_per_job <= 2.3
    # the deadline misses come first among the misses, closest first
    misses = [o for o in wc.cloud if not o.feasible]
    assert misses[:len(late)] == late
    assert [o.hours_over_deadline for o in late] == sorted(o.hours_over_deadline for o in late)
    # JSON, the frame (CSV) and the workbook's Cloud vs Local sheet say it too
    doc = r.to_dict()
    row = next(o for o in doc["workloads"][0]["cloud"] if o["instance_id"] == "lambda-gpu-8x-b200-sxm6")
    assert row["feasible"] is False and row["hours_over_deadline"] == pytest.approx(b200.hours_over_deadline)
    assert doc["workloads"][0]["deadline_hours"] == 2.3
    df = r.to_frame()
    assert df.set_index("instance_id").loc["lambda-gpu-8x-b200-sxm6", "hours_over_deadline"] == \
        pytest.approx(b200.hours_over_deadline)
    wb = openpyxl.load_workbook(next(p for p in r.outputs.values() if str(p).endswith(".xlsx")))
    text = "\n".join(str(c.value) for row in wb["Cloud vs Local"].iter_rows() for c in row if c.value is not None)
    assert "misses the deadline" in text


def test_compare_text_flags_the_deadline_misses(catalog, tmp_path):
    from click.testing import CliRunner

    from planner.cli.main import main

    f = tmp_path / "d23.yaml"
    f.write_text(yaml.safe_dump(_d23()))
    res = CliRunner().invoke(main, ["compare", str(f)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "deadline: one run within 2.3 h (the scenario's), which the local machine meets" in res.output
    assert ("does not fit: lambda-gpu-8x-b200-sxm6 (8 x b200, $53.52/h (us-east-1, as of 2026-08)): misses the "
            "deadline: 2.35 h per run, 0.05 h over the 2.3 h deadline") in res.output
    assert "no cloud instance in the selection runs this workload within the 2.3 h deadline" in res.output
