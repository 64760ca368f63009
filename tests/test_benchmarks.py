"""The benchmark scripts run (their timings are no test: speed targets live in benchmarks/)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # over 2 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_bench_workbook_runs_on_three_workloads(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_workbook.py"), "--workloads", "3",
                             "--repeats", "1", "--keep", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith('python -c "import pandas": ')
    assert lines[1].startswith("N=   3 workloads, plan with workbook: ") and "x import pandas" in lines[1]
    # the generated scenario has three workloads, each named once, and the plan wrote its workbook
    import yaml

    scenario = yaml.safe_load((tmp_path / "bench-workbook-3.yaml").read_text())
    assert [w["name"] for w in scenario["workloads"]] == ["qlora-13b-0000", "chat-8b-0001", "ft-1b-0002"]
    assert (tmp_path / "reports-3" / "bench-workbook-3.xlsx").is_file()


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_bench_cli_runs_once_each():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cli.py"), "--rounds", "1", "--no-check"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["command", "wall", "best"]
    assert [line.split()[0] for line in lines[1:5]] == ["import", "estimate", "plan", "help"]
    # the targets, beside the ratios
    assert lines[2].endswith("1.1x") and lines[3].endswith("1.5x") and lines[4].endswith("0.5x")


@pytest.mark.slow  # over 1.2 s on a loaded 2-core machine: CI's second step runs it (pyproject addopts)
def test_bench_catalog_overlay_holds_16_copies_of_every_gpu():
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_catalog
    finally:
        _sys.path.remove(str(ROOT / "benchmarks"))
    from planner.catalog.loader import load_catalog

    shipped = load_catalog()
    files = bench_catalog.overlay_mappings(16)
    gpu_ids = [g["id"] for g in files["gpus.yaml"]["gpus"]]
    assert len(gpu_ids) == len(set(gpu_ids)) == 16 * len(shipped.gpus)
    # each fixed-GPU baseboard is copied once per copy of its GPU, pointing at that copy
    fixed = [p for p in shipped.platforms if p.fixed_gpu]
    copies = files["platforms.yaml"]["platforms"]
    assert len(copies) == 15 * len(fixed)
    assert {(p["id"], p["fixed_gpu"]) for p in copies} >= {("hgx-h100-8gpu-x03", "h100-sxm-x03")}


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_run_all_prints_the_four_ratios_and_the_500_workload_time_with_targets():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--rounds", "1", "--no-check",
                             "--workloads", "3", "--factor", "2", "--big-workloads", "4"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith('yardstick: python -c "import pandas": ')
    rows = [line.split() for line in lines[2:6]]
    assert [r[0] for r in rows] == ["plan", "estimate", "workbook-100", "catalog-16x"]
    assert [r[-2] for r in rows] == ["1.5x", "1.1x", "4.0x", "3.0x"]  # the targets (issue 21, item 4)
    assert all(r[-1] in ("PASS", "FAIL") for r in rows)
    big = lines[6].split()
    # issue 20: 500 workloads with the workbook in under 10 s, an absolute target (then the CPU time)
    assert big[0] == "workbook-500" and big[-5] == "10.0s" and big[-4] in ("PASS", "FAIL") and big[-3] == "(CPU"
    assert lines[7].split()[1:4] == ["of", "5", "within"]


@pytest.mark.slow  # over 10 s on 2 cores: CI's second step runs it (pyproject addopts)
def test_bench_scaling_prints_rows_and_slopes(tmp_path):
    """bench_scaling on 1x and 2x the GPUs: one line per factor, then the two slopes. Rows grow with
    the catalog, not its square (issue 33): 2x the GPUs (each copy with its baseboards) at most
    doubles the candidate rows (1,209 to 2,406), where listing every GPU x platform pair gave 2.3x
    (1,537 to 3,538)."""
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_scaling.py"), "--factors", "1", "2",
                             "--repeats", "1", "--keep", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0].strip() for line in lines[:2]] == ["1x", "2x"]
    assert lines[2].startswith("time: slope 1x-2x ") and lines[3].startswith("peak memory: slope 1x-2x ")
    rows = [int(line.split("MiB peak,")[1].split("rows")[0].replace(",", "")) for line in lines[:2]]
    assert rows[1] <= 2 * rows[0]
