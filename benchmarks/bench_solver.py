"""Benchmark the solver: sweep the whole shipped catalog for generated workloads.

For each of N generated single-workload scenarios (default 1,000: a catalog model, training or
inference, random but valid options, strategies left to the solver where the scenario format
allows it: training ``gpus`` free, inference ``tp`` auto), the sweep enumerates every candidate
machine of the catalog (GPU x cards x platform x RAM configuration), runs the memory model once
per (variant, GPU count), checks every rule and picks the cheapest feasible machine
(planner.solve.candidates.cheapest: the solver's choice without building the report table).

The hardware rows do not depend on the workload, so they are built once. Scenario parsing is
timed separately ("setup"). The sweep runs in one process and in --procs processes (fork, one
slice of the workloads each). ``--full`` also times planner.solve.solver.plan for every workload
(ranked DataFrame, alternatives, line items; explanations and suggestions when nothing fits).

Target (issue 3): the sweep of 1,000 workloads in under 1 s on 2 cores.

Usage:
    python benchmarks/bench_solver.py [--workloads 1000] [--procs 2] [--seed 0] [--full]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.solve.candidates import cheapest, hardware, usages_for  # noqa: E402
from planner.catalog.loader import load_catalog  # noqa: E402
from planner.core.errors import InfeasibleError  # noqa: E402
from planner.solve.scenario import Constraints, scenario_from_mapping  # noqa: E402

_STATE: dict = {}  # the benchmark's shared inputs, set before forking


def generate(catalog, n: int, seed: int) -> list[dict]:
    """N valid single-workload scenario mappings, reproducible from ``seed``."""
    from planner.model.architecture import from_hf_config

    rng = random.Random(seed)
    models = [(m.id, from_hf_config(m.config)) for m in catalog.models]
    out = []
    while len(out) < n:
        mid, arch = rng.choice(models)
        maxpos = arch.max_position_embeddings
        if rng.random() < 0.5:
            method = rng.choice(["full", "full", "lora", "qlora"])
            w = {"name": f"w{len(out)}", "model": mid, "task": "train", "method": method,
                 "recipe": "mixed-bf16" if method == "full" else "pure-bf16",
                 "optimizer": rng.choice(["adamw", "adamw", "adamw-8bit"]),
                 "micro_batch": rng.choice([1, 2, 4, 8]),
                 "seq_len": min(maxpos, rng.choice([512, 1024, 2048, 4096])),
                 "checkpointing": rng.choice(["none", "full"])}
            if method == "full":
                w["zero"] = rng.choice([0, 1, 2, 3])
        else:
            w = {"name": f"w{len(out)}", "model": mid, "task": "infer",
                 "weights": rng.choice(["bf16", "bf16", "fp8", "int8", "nf4"]),
                 "kv_dtype": rng.choice(["bf16", "fp8"]),
                 "context": min(maxpos, rng.choice([1024, 2048, 4096, 8192, 32768])),
                 "concurrency": rng.choice([1, 4, 16, 64])}
        out.append({"name": w["name"], "workloads": [w]})
    return out


def _sweep(indices: list[int]) -> tuple[int, int, int, float, float]:
    """Plan the scenarios ``indices``; returns (feasible, usages, row checks, wall s, CPU s)."""
    hw, scenarios = _STATE["hw"], _STATE["scenarios"]
    shapes = hw.node_shapes()
    feasible = usages = checks = 0
    t = time.perf_counter()
    c = time.process_time()
    for i in indices:
        sc = scenarios[i]
        us = [usages_for(sw, k, node_shapes=shapes, max_cards_per_node=hw.max_cards_per_node)
              for k, sw in enumerate(sc.workloads)]
        row, _ = cheapest(sc, hw, us)
        feasible += row is not None
        usages += sum(len(u) for u in us)
        checks += hw.rows * sum(len(u) for u in us)
    return feasible, usages, checks, time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--full", action="store_true", help="also time planner.solve.solver.plan for every workload")
    args = ap.parse_args()

    t0 = time.perf_counter()
    catalog = load_catalog()
    hw = hardware(catalog, Constraints())
    t_hw = time.perf_counter() - t0
    t1 = time.perf_counter()
    scenarios = [scenario_from_mapping(d, catalog) for d in generate(catalog, args.workloads, args.seed)]
    t_setup = time.perf_counter() - t1
    _STATE.update(hw=hw, scenarios=scenarios)
    n = len(scenarios)
    print(f"catalog: {len(catalog.gpus)} GPUs, {len(catalog.platforms)} platforms, {len(catalog.dimms)} DIMMs -> "
          f"{hw.rows:,} candidate machines (built once in {t_hw:.3f} s incl. catalog load)")
    print(f"workloads: {n:,} generated scenarios parsed and validated in {t_setup:.3f} s")
    print(f"cpus available: {os.cpu_count()}")

    # warm-up (imports, caches) outside the timings
    _sweep(list(range(min(5, n))))

    t = time.perf_counter()
    feasible, usages, checks, _, cpu1 = _sweep(list(range(n)))
    wall1 = time.perf_counter() - t
    cands = hw.rows * n
    print(f"sweep, 1 process:  {wall1:.3f} s wall, {cpu1:.3f} s CPU; {n / wall1:,.0f} workloads/s; "
          f"{cands / wall1:,.0f} candidates/s ({cands:,} machine x workload candidates, "
          f"{checks:,} machine x variant checks, {usages:,} memory-model runs); {feasible:,} of {n:,} feasible")

    if args.procs > 1:
        ctx = multiprocessing.get_context("fork")
        slices = [list(range(i, n, args.procs)) for i in range(args.procs)]
        t = time.perf_counter()
        with ctx.Pool(args.procs) as pool:
            results = pool.map(_sweep, slices)
        wallp = time.perf_counter() - t
        feas = sum(r[0] for r in results)
        print(f"sweep, {args.procs} processes: {wallp:.3f} s wall (pool start included; slowest worker "
              f"{max(r[3] for r in results):.3f} s wall, {max(r[4] for r in results):.3f} s CPU); "
              f"{cands / wallp:,.0f} candidates/s; {feas:,} feasible")
        target = wallp
    else:
        target = wall1
    print(f"target: under 1 s on 2 cores -> {'met' if target < 1.0 else 'NOT met'} ({target:.3f} s wall; "
          f"load average {os.getloadavg()[0]:.2f}: other processes on the machine slow the wall time)")

    if args.full:
        from planner.solve.solver import plan

        t = time.perf_counter()
        ok = 0
        for sc in scenarios:
            try:
                plan(sc, catalog, hardware=hw)
                ok += 1
            except InfeasibleError:
                pass
        wallf = time.perf_counter() - t
        print(f"full plan() per workload (table, alternatives, why_not for every row, suggestions when "
              f"nothing fits), 1 process: {wallf:.3f} s; {wallf / n * 1000:.1f} ms per workload; {ok:,} feasible")


if __name__ == "__main__":
    main()
