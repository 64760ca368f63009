"""How `planner plan` grows with the catalog: time and peak memory from 1x to 64x the GPUs.

For each factor (default 1, 4, 16, 64) the script writes bench_catalog's overlay (every shipped GPU
and ``factor - 1`` copies, baseboards and cloud rows copied with their GPU) and the QLoRA scenario
(scenarios/qlora-7b-12gb.yaml) with ``allowed_gpus`` left out, so that every GPU and every copy is a
candidate (issue 33's worst case: GPU x platform pairs that can never combine, such as a PCIe card
and another card's baseboard, grow with the square of the factor). It runs ``python -m planner
plan SCENARIO --catalog OVERLAY --out DIR --format csv,json`` as fresh processes of this Python from
this checkout, ``--repeats`` times each, and prints per factor the median wall time, the peak
resident memory of the process (``ru_maxrss``), the candidate rows and the CSV's size.

A slope is the exponent of the growth between two factors, log(t(b) / t(a)) / log(b / a), for
time and for peak memory (1: linear in the catalog; 2: quadratic). Fixed costs (starting Python,
importing, the shipped catalog) keep the slope from 1x to 64x below 1 even for quadratic work, so
the target is checked on every step between the factors given (1x-4x, 4x-16x, 16x-64x): issue 33,
each <= 1.1. The script prints whether it is met; it never fails on time (timings are no test).

Usage:
    python benchmarks/bench_scaling.py [--factors 1 4 16 64] [--repeats 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_catalog  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Issue 33: plan time and peak memory grow with slope <= 1.1 from 1x to 64x the catalog.
SLOPE_TARGET = 1.1


def write_scenario(folder: Path) -> Path:
    """scenarios/qlora-7b-12gb.yaml without ``allowed_gpus``: every GPU of the catalog a candidate."""
    import yaml

    data = yaml.safe_load(bench_catalog.SCENARIO.read_text(encoding="utf-8"))
    (data.get("constraints") or {}).pop("allowed_gpus", None)
    path = folder / f"{bench_catalog.SCENARIO.stem}-all-gpus.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak resident bytes of one run of ``cmd`` (which must succeed)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):  # 1: nothing fits, still a plan with its reports
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}")
    return seconds, usage.ru_maxrss * 1024  # ru_maxrss is in KiB on Linux


def slope(a: float, b: float, fa: int, fb: int) -> float:
    """The exponent k of b / a = (fb / fa) ** k."""
    return math.log(b / a) / math.log(fb / fa)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 4, 16, 64], help="GPUs per shipped GPU")
    parser.add_argument("--repeats", type=int, default=3, help="runs per factor; the median counts (default 3)")
    parser.add_argument("--keep", type=Path, default=None, help="write the overlays and reports here, and keep them")
    args = parser.parse_args(argv)
    if min(args.factors) < 1 or args.repeats < 1 or len(args.factors) < 2:
        parser.error("give two or more --factors, each at least 1, and --repeats at least 1")
    factors = sorted(set(args.factors))
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        env = bench_catalog.bench_env(Path(tmp))
        scenario = write_scenario(folder)
        for f in factors:
            overlay = bench_catalog.write_overlay(folder, f)
            out = folder / f"reports-{f}x"
            cmd = [sys.executable, "-m", "planner", "plan", str(scenario), "--catalog", str(overlay), "--out", str(out),
                   "--format", "csv,json"]
            run(cmd, env)  # warm the file and bytecode caches
            runs = [run(cmd, env) for _ in range(args.repeats)]
            table = next(out.glob("*.csv"))
            with table.open(encoding="utf-8", newline="") as fh:
                rows = sum(1 for _ in csv.reader(fh)) - 1
            results[f] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), rows,
                          table.stat().st_size)
            t, m, rows, size = results[f]
            print(f"{f:>3}x: {t:6.2f} s wall, {m / 2**20:7.1f} MiB peak, {rows:>9,} rows, {size / 1e6:8.1f} MB csv",
                  flush=True)
    lo, hi = factors[0], factors[-1]
    ok = True  # printed, not the exit status: timings are no test
    for name, i in (("time", 0), ("peak memory", 1)):
        k = slope(results[lo][i], results[hi][i], lo, hi)
        steps = [slope(results[a][i], results[b][i], a, b) for a, b in zip(factors, factors[1:])]
        shown = ", ".join(f"{a}x-{b}x {x:.2f}" for (a, b), x in zip(zip(factors, factors[1:]), steps))
        met = max(steps) <= SLOPE_TARGET
        ok &= met
        print(f"{name}: slope {lo}x-{hi}x {k:.2f}; steps {shown}; every step <= {SLOPE_TARGET}: "
              f"{'met' if met else 'NOT met'}")
    print("all within target" if ok else "over target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
