"""Cloud rows: the scenario's costs.regions, and rows older than 12 months flagged."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog.loader import load_catalog
from planner.cli.main import main
from planner.core.errors import ScenarioError
from planner.core.fields import Entry
from planner.cost.cloud import select_instances, stale_instances, stale_text
from planner.cost.tco import read_costs

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def _costs(data, catalog):
    return read_costs(Entry(data, file="s.yaml", path="costs", error=ScenarioError), catalog)


def test_regions_keep_the_rows_of_those_regions():
    cat = load_catalog()
    costs = _costs({"regions": ["us-east4"]}, cat)
    rows = select_instances(cat, regions=costs.regions)
    assert rows and {i.region for i in rows} == {"us-east4"}
    assert {i.provider for i in rows} == {"gcp"}  # the shipped GCP L4 rows are in their cheapest US region
    with pytest.raises(ScenarioError) as e:
        _costs({"regions": ["europe-west4"]}, cat)
    assert "no cloud instance in region 'europe-west4'" in str(e.value)
    assert "import-skypilot FILE --region europe-west4" in str(e.value)


def _redated(tmp_path, ids, as_of="2024-01"):
    """An overlay that dates the shipped rows ``ids`` ``as_of`` (the shipped catalog has no row
    older than 12 months since the Azure rows of 2024-01 were retired)."""
    d = tmp_path / "old"
    d.mkdir()
    cat = load_catalog()
    rows = ""
    for i in ids:
        inst = cat.instance(i)
        rows += f"  - id: {i}\n    usd_per_hour: {inst.usd_per_hour}\n"
        if inst.spot_usd_per_hour is not None:
            rows += f"    spot_usd_per_hour: {inst.spot_usd_per_hour}\n"
        if inst.spot_usd_per_hour_range is not None:
            rows += f"    spot_usd_per_hour_range: {list(inst.spot_usd_per_hour_range)}\n"
        rows += f"    as_of: \"{as_of}\"\n    source: \"test fixture: the shipped row re-dated\"\n"
    (d / "cloud.yaml").write_text(f"schema_version: 1\ninstances:\n{rows}")
    return d


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_rows_older_than_12_months_are_flagged(tmp_path):
    cat = load_catalog()
    assert not stale_instances(cat.instances, today=dt.date(2026, 12, 2))  # no shipped row is a year old
    old_cat = load_catalog(_redated(tmp_path, ["aws-g5-xlarge", "lambda-gpu-1x-a10"]))
    old = stale_instances(old_cat.instances, today=dt.date(2026, 12, 2))
    assert {i.id for i in old} == {"aws-g5-xlarge", "lambda-gpu-1x-a10"}
    assert stale_text(old).startswith("cloud prices dated more than 12 months ago: 1 aws row(s) of 2024-01")
    # the v8 rows of 2026-08 are not stale in December 2026, and are in August 2027
    assert not [i for i in stale_instances(cat.instances, today=dt.date(2027, 8, 31)) if i.provider == "aws"]
    assert [i for i in stale_instances(cat.instances, today=dt.date(2027, 9, 1)) if i.provider == "aws"]


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_compare_warns_about_old_rows_and_catalog_cloud_marks_them(tmp_path):
    text = (SCENARIOS / "compare-qlora-7b-12gb.yaml").read_text()
    text = text.replace("  instances: [aws-g5-xlarge, aws-g5-4xlarge, aws-g6-xlarge, aws-g6-4xlarge]",
                        "  instances: [aws-g5-xlarge, aws-g4dn-xlarge]")
    path = tmp_path / "cmp.yaml"
    path.write_text(text)
    old = _redated(tmp_path, ["aws-g4dn-xlarge"])
    r = CliRunner().invoke(main, ["compare", str(path), "--json", "--catalog", str(old)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert any(w.startswith("cloud prices dated more than 12 months ago: 1 aws row(s) of 2024-01")
               for w in doc["warnings"])
    listing = CliRunner().invoke(main, ["catalog", "cloud", "--json", "--catalog", str(old)])
    rows = {x["id"]: x for x in json.loads(listing.output)}
    assert rows["aws-g4dn-xlarge"]["older_than_12_months"] is True
    assert rows["gcp-g2-standard-4"]["older_than_12_months"] is False
