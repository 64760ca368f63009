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
