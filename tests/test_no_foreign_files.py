"""A file planner did not write is never touched (issue 28).

Report sets are known by what planner wrote (the manifest OUT/.planner-reports.json: each report's name,
SHA-256 and set), not by their names: a hand-written README.md beside a scenario README.yaml, another
command's report of the same name, the scenario file itself or a model's config.json are never removed or
replaced; the shipped catalog and the package are never output folders; a replaced report keeps its mode.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from planner.cli.main import main
from planner.core.atomic import write_text
from planner.core.errors import OutputError
from planner.core.reportset import MANIFEST, STAGING_PREFIX, ReportSet, read_manifest

ROOT = Path(__file__).resolve().parents[1]
QLORA = (ROOT / "scenarios" / "qlora-7b-12gb.yaml").read_text()
# a tiny Llama config.json (the llama entry of tests/model_configs.py): plans on any card
TINY_LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 100}


def _plan(*args: str):
    return CliRunner().invoke(main, ["plan", *args])


def _scenario(path: Path, name: str | None) -> Path:
    doc = yaml.safe_load(QLORA)
    if name is None:
        doc.pop("name")
    else:
        doc["name"] = name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _bytes(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_hand_written_readme_beside_a_scenario_readme_is_kept(tmp_path: Path, monkeypatch) -> None:
    # hostile trial: README.yaml planned with --out . removed README.md and README.csv as stale reports
    monkeypatch.chdir(tmp_path)
    _scenario(tmp_path / "README.yaml", None)
    Path("README.md").write_text("# my project\n")
    Path("README.csv").write_text("my,data\n")
    before = _bytes(tmp_path)
    r = _plan("README.yaml", "--out", ".")  # writes xlsx, csv, json: README.csv is in the way
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err.startswith("Error: README.csv: is not a file planner wrote there") and err.count("\n") == 0
    assert err.endswith("Move it away or give another --out.")
    assert _bytes(tmp_path) == before
    # with formats that do not replace it, the plan is written and README.md (a stale name) stays
    r = _plan("README.yaml", "--out", ".", "--format", "json,xlsx")
    assert r.exit_code == 0, r.output
    assert Path("README.md").read_text() == "# my project\n" and Path("README.csv").read_text() == "my,data\n"
    assert set(read_manifest(tmp_path)) == {"README.json", "README.xlsx"}


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_a_scenario_named_like_another_commands_report_does_not_replace_it(tmp_path: Path) -> None:
    # plan of scenario 'lab-compare' removed lab-compare.xlsx/.json that compare wrote for scenario 'lab'
    from planner import compare

    out = tmp_path / "o"
    lab = _scenario(tmp_path / "lab.yaml", "lab")
    compare(str(lab), out=str(out))
    before = _bytes(out)
    r = _plan(str(_scenario(tmp_path / "lc.yaml", "lab-compare")), "--out", str(out))
    assert r.exit_code == 2, r.output
    assert "lab-compare.xlsx: is a report of 'compare lab', and 'plan lab-compare' would write a file of the " \
           "same name" in r.stderr
    assert _bytes(out) == before
    # with --format csv too: the set's other names (lab-compare.xlsx, .json) are another set's reports, and a
    # folder holding one set's csv beside another's workbook of one name would be read as one plan (issue 28)
    r = _plan(str(tmp_path / "lc.yaml"), "--out", str(out), "--format", "csv")
    assert r.exit_code == 2 and "is a report of 'compare lab'" in r.stderr
    assert _bytes(out) == before


def test_a_scenario_in_json_syntax_is_never_its_own_report(tmp_path: Path) -> None:
    scen = tmp_path / "scen.json"
    doc = yaml.safe_load(QLORA)
    doc.pop("name")
    scen.write_text(json.dumps(doc))  # JSON is YAML: a valid scenario, whose report would be scen.json
    before = scen.read_bytes()
    r = _plan(str(scen), "--out", str(tmp_path))
    assert r.exit_code == 2, r.output
    assert f"{scen}: is an input of this run, and a report never replaces its input." in r.stderr
    assert scen.read_bytes() == before


def test_a_models_config_json_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(TINY_LLAMA))
    before = (tmp_path / "config.json").read_bytes()
    doc = yaml.safe_load(QLORA)
    doc["name"] = "config"
    doc["workloads"][0]["model"] = "./config.json"
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    r = _plan(str(tmp_path / "s.yaml"), "--out", str(tmp_path), "--format", "json")
    assert r.exit_code == 2, r.output
    assert "config.json: is an input of this run" in r.stderr
    assert (tmp_path / "config.json").read_bytes() == before


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_a_report_changed_since_planner_wrote_it_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "o"
    s = _scenario(tmp_path / "s.yaml", "s")
    assert _plan(str(s), "--out", str(out), "--format", "csv,md").exit_code == 0
    (out / "s.md").write_text("my notes on the plan\n")  # the user edited the report
    r = _plan(str(s), "--out", str(out), "--format", "md")
    assert r.exit_code == 2 and "s.md: is changed since planner wrote it" in r.stderr, r.output
    assert (out / "s.md").read_text() == "my notes on the plan\n"
    # as a stale report of the set it is not removed either; the unchanged csv is
    r = _plan(str(s), "--out", str(out), "--format", "json")
    assert r.exit_code == 0, r.output
    assert (out / "s.md").read_text() == "my notes on the plan\n" and not (out / "s.csv").exists()


def test_a_replaced_report_keeps_its_permissions(tmp_path: Path) -> None:
    out = tmp_path / "o"
    s = _scenario(tmp_path / "s.yaml", "s")
    assert _plan(str(s), "--out", str(out), "--format", "json").exit_code == 0
    os.chmod(out / "s.json", 0o600)  # made private
    assert _plan(str(s), "--out", str(out), "--format", "json").exit_code == 0
    assert stat.S_IMODE(os.stat(out / "s.json").st_mode) == 0o600


@pytest.mark.parametrize("where", ["catalog", "planner", "planner/report"])
def test_the_shipped_catalog_and_the_package_are_never_an_output_folder(tmp_path: Path, where: str) -> None:
    s = _scenario(tmp_path / "s.yaml", "cloud")  # its json would be catalog/cloud.json, its name beside cloud.yaml
    target = ROOT / where
    before = sorted(os.listdir(target))
    r = _plan(str(s), "--out", str(target))
    assert r.exit_code == 2, r.output
    assert f"Error: {target}: is planner's own" in r.stderr and "Give another --out" in r.stderr
    assert sorted(os.listdir(target)) == before


def test_a_manifest_planner_did_not_write_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / MANIFEST).write_text('{"files": {}}')
    with pytest.raises(OutputError) as info:
        with ReportSet(out) as rs:
            write_text(rs.path("s.csv"), "x")
            rs.commit()
    assert "is not a report manifest planner wrote" in str(info.value)
    assert sorted(os.listdir(out)) == [MANIFEST]


def test_a_users_folder_named_like_a_staging_folder_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "o"
    mine = out / f"{STAGING_PREFIX}mine1234"
    mine.mkdir(parents=True)
    (mine / "keep.txt").write_text("mine")
    with ReportSet(out) as rs:
        write_text(rs.path("s.csv"), "x")
        rs.commit()
    assert (mine / "keep.txt").read_text() == "mine"


def test_the_manifest_names_each_report_its_digest_and_set(tmp_path: Path) -> None:
    import hashlib

    out = tmp_path / "o"
    s = _scenario(tmp_path / "s.yaml", "s")
    assert _plan(str(s), "--out", str(out), "--format", "csv,json").exit_code == 0
    doc = json.loads((out / MANIFEST).read_text())
    assert doc["format"] == "planner report manifest 1"
    # each entry: the report's SHA-256 and its size in bytes (as os.stat gives it), its set and the scenario file
    # it was planned from
    assert doc["files"] == {n: {"sha256": [hashlib.sha256((out / n).read_bytes()).hexdigest()], "set": "plan s",
                                "from": str(s), "bytes": [(out / n).stat().st_size]} for n in ("s.csv", "s.json")}


def test_a_calibration_is_never_saved_into_the_shipped_catalog(tmp_path: Path) -> None:
    from planner.validate.calibrate import Calibration, save_calibration

    target = ROOT / "catalog" / "calibration.yaml"
    assert not target.exists()
    cal = Calibration(gpu_name="NVIDIA Test", cuda_context_bytes=500 * 2**20, allocator_fraction=0.02,
                      measured_on="2026-01-01", versions={})
    with pytest.raises(OutputError) as info:
        save_calibration(cal, target)
    # the file is named, and a file outside hinted (planner.core.protected: the refusal of a file option)
    assert f"{target}: is inside planner's own catalog folder" in str(info.value) and not target.exists()
    assert "a file outside it, e.g. --out " in info.value.cli_line()  # 'planner calibrate' reaches it (h19a M1)
