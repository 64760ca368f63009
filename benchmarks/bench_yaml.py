"""Benchmark YAML reading: the shipped catalog through libyaml's C parser and through PyYAML's pure one.

planner.core.yamlio composes documents with libyaml's C parser (PyYAML's CSafeLoader) when PyYAML
has it, and builds values (line-marked mappings and lists, duplicate keys refused) with the same
Python constructors either way; a document the C parser refuses is read again by the pure-Python
parser, whose message is given. This prints the time of each over the catalog's files and the
ratio (issue 21, item 4: about 7x on the composer), and checks that both give the same values and
line numbers.

Usage:
    python benchmarks/bench_yaml.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.catalog.loader import default_catalog_dir  # noqa: E402
from planner.core import yamlio  # noqa: E402


def _same(a, b) -> bool:
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, dict):
        return (a.line, a.lines) == (b.line, b.lines) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return (a.line, a.lines) == (b.line, b.lines) and all(_same(x, y) for x, y in zip(a, b))
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    texts = [p.read_text(encoding="utf-8") for p in sorted(Path(default_catalog_dir()).glob("*.yaml"))]
    size = sum(len(t.encode()) for t in texts)
    times = {}
    for name, parse in (("C (libyaml)", yamlio.parse_yaml), ("pure Python", yamlio._parse_pure)):
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            for text in texts:
                parse(text)
            best = min(best, time.perf_counter() - t)
        times[name] = best
        print(f"{name:12s} {best * 1000:8.1f} ms for {len(texts)} files, {size / 1e6:.2f} MB")
    print(f"ratio pure / C: {times['pure Python'] / times['C (libyaml)']:.1f}x "
          f"(libyaml {'present' if yamlio._CLoader is not None else 'absent: both are the pure parser'})")
    same = all(_same(yamlio.parse_yaml(t), yamlio._parse_pure(t)) for t in texts)
    print(f"same values and line numbers: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
