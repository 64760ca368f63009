"""The benchmark scripts run (their timings are no test: speed targets live in benchmarks/)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


def test_bench_cli_runs_once_each():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cli.py"), "--rounds", "1", "--no-check"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["command", "wall", "best"]
    assert [line.split()[0] for line in lines[1:4]] == ["import", "estimate", "plan"]
    assert lines[2].endswith("1.1x") and lines[3].endswith("1.5x")  # the targets, beside the ratios
