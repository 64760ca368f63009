"""The four speed ratios of issue 21 (item 4), each against ``python -c "import pandas"`` in the same run,
and issue 20's 500-workload plan against its absolute target.

Times as fresh processes of this Python, from this checkout (``python -m planner``), with HOME in
a temporary folder (no calibration file) and bytecode cached there (as for an installed package,
also where PYTHONDONTWRITEBYTECODE is set), interleaved round by round so that a busy machine
slows every command alike:

- ``import pandas``: the yardstick;
- plan: ``planner plan scenarios/qlora-7b-12gb.yaml`` with its default reports (xlsx, csv, json)
  (benchmarks/bench_cli.py), target <= 1.5x;
- estimate: ``planner estimate`` with text output, the README's QLoRA 7B example
  (benchmarks/bench_cli.py), target <= 1.1x;
- workbook-100: ``planner plan`` of a 100-workload scenario with ``--format xlsx``
  (benchmarks/bench_workbook.py), target <= 4x;
- catalog-16x: ``planner plan`` of the QLoRA scenario on a catalog with 16x the GPUs, the copies
  of its card allowed (benchmarks/bench_catalog.py), target <= 3x;
- workbook-500 (issue 20): ``planner plan`` of a 500-workload scenario (the same generator as
  workbook-100, benchmarks/bench_workbook.py) with ``--format xlsx``, target under 10 s wall on
  2 cores: an absolute time, printed with its ratio but checked on the seconds.

Each ratio is the median wall time of the command over ``--rounds`` rounds divided by the median
of ``import pandas``; the CPU-time ratio (user + system of the child) is printed beside it. A
shared machine makes single times noisy; the ratios cancel much of that (the absolute 10 s does
not: on a busy machine read workbook-500's CPU time too). The exit status is 1 when a benchmark
misses its target (``--no-check``: always 0).

Usage:
    python benchmarks/run_all.py [--rounds 7] [--no-check]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_catalog  # noqa: E402
import bench_cli  # noqa: E402
import bench_workbook  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: name -> (what, target ratio to ``import pandas``), in the order printed.
TARGETS = {
    "plan": ("plan scenarios/qlora-7b-12gb.yaml, xlsx+csv+json", 1.5),
    "estimate": ("estimate, text output", 1.1),
    "workbook-100": ("plan, 100 workloads, with workbook", bench_workbook.RATIO_TARGET[100]),
    "catalog-16x": ("plan on a catalog with 16x the GPUs", bench_catalog.RATIO_TARGET),
}
#: name -> (what, target in seconds of wall time), printed after the ratios (issue 20).
SECONDS_TARGETS = {
    "workbook-500": ("plan, 500 workloads, with workbook", bench_workbook.SECONDS_TARGET[500]),
}


def workbook_command(tmp: Path, workloads: int) -> list[str]:
    """``planner plan`` of a ``workloads``-workload scenario (bench_workbook.write_scenario, written
    into ``tmp``) with its workbook only."""
    scenario = bench_workbook.write_scenario(tmp, workloads)
    return [sys.executable, "-m", "planner", "plan", str(scenario), "--out", str(tmp / f"reports-{workloads}"),
            "--format", "xlsx"]


def commands(tmp: Path, workloads: int = 100, factor: int = 16, big_workloads: int = 500) -> dict[str, list[str]]:
    """The timed commands (name -> argv), their inputs written into ``tmp``; ``workloads``,
    ``factor`` and ``big_workloads`` other than 100, 16 and 500 only to try the script quickly (the
    targets are for those)."""
    py = sys.executable
    overlay = bench_catalog.write_overlay(tmp, factor)
    catalog_scenario = bench_catalog.write_scenario(tmp, factor)
    return {
        "import pandas": [py, "-c", "import pandas"],
        "plan": [py, "-m", "planner", "plan", bench_cli.SCENARIO, "--out", str(tmp / "reports-plan")],
        "estimate": [py, "-m", "planner", *bench_cli.ESTIMATE],
        "workbook-100": workbook_command(tmp, workloads),
        "catalog-16x": bench_catalog.plan_command(catalog_scenario, overlay, tmp / "reports-16x"),
        "workbook-500": workbook_command(tmp, big_workloads),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="runs of each command; the median counts (default 7)")
    ap.add_argument("--no-check", action="store_true", help="print only; exit 0 whatever the ratios")
    ap.add_argument("--workloads", type=int, default=100, help=argparse.SUPPRESS)  # quick tries (tests) only
    ap.add_argument("--factor", type=int, default=16, help=argparse.SUPPRESS)
    ap.add_argument("--big-workloads", type=int, default=500, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if min(args.rounds, args.workloads, args.factor, args.big_workloads) < 1:
        ap.error("--rounds must be at least 1")
    if args.big_workloads == args.workloads:
        ap.error("--big-workloads must differ from --workloads")
    with tempfile.TemporaryDirectory(prefix="bench-all-") as tmp_name:
        tmp = Path(tmp_name)
        env = bench_catalog.bench_env(tmp)
        cmds = commands(tmp, args.workloads, args.factor, args.big_workloads)
        for cmd in cmds.values():  # warm the file cache and write the bytecode
            bench_cli.timed(cmd, env)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
        for _ in range(args.rounds):
            for name, cmd in cmds.items():
                runs[name].append(bench_cli.timed(cmd, env))
    base_wall = statistics.median(w for w, _ in runs["import pandas"])
    base_cpu = statistics.median(c for _, c in runs["import pandas"])
    print(f'yardstick: python -c "import pandas": {base_wall:.3f} s wall, {base_cpu:.3f} s CPU '
          f"(medians of {args.rounds} rounds)")
    print(f"{'benchmark':<13} {'what':<49} {'wall':>7} {'ratio':>6} {'CPU ratio':>9} {'target':>7}  result")
    failed = []
    for name, (what, target) in TARGETS.items():
        wall = statistics.median(w for w, _ in runs[name])
        cpu = statistics.median(c for _, c in runs[name])
        ratio = wall / base_wall
        ok = ratio <= target
        if not ok:
            failed.append(name)
        print(f"{name:<13} {what:<49} {wall:>6.3f}s {ratio:>5.2f}x {cpu / base_cpu:>8.2f}x {target:>6.1f}x  "
              f"{'PASS' if ok else 'FAIL'}")
    for name, (what, seconds) in SECONDS_TARGETS.items():
        wall = statistics.median(w for w, _ in runs[name])
        cpu = statistics.median(c for _, c in runs[name])
        ok = wall < seconds
        if not ok:
            failed.append(name)
        print(f"{name:<13} {what:<49} {wall:>6.3f}s {wall / base_wall:>5.2f}x {cpu / base_cpu:>8.2f}x "
              f"{f'{seconds:.1f}s':>7}  {'PASS' if ok else 'FAIL'} (CPU {cpu:.3f} s)")
    total = len(TARGETS) + len(SECONDS_TARGETS)
    print(f"{total - len(failed)} of {total} within target" + (f"; over: {', '.join(failed)}" if failed else ""))
    return 1 if failed and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
