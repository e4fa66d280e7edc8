"""A warm `make run` (issue 40 item 1): wall and CPU time, and where the CPU goes.

Usage (figures in docs/benchmarks.md, « A warm run »):

    .venv/bin/python bench/warm_run.py                    # 3 warm runs of `veille run`, then a profile
    .venv/bin/python bench/warm_run.py --repeat 5 --top 20

What `make run` runs, `veille run` on the bundled corpus with this checkout's warehouse, after one
run that warms everything (bytecode, the shared Prefect API, the task and model caches, the tree
caches of veille/tree_cache.py). Each run is its own process; CPU time is user + system of it and
its children (``RUSAGE_CHILDREN``: the detached shared Prefect API is not counted), with the load
average before it. Then one more run under cProfile: its ``--top`` heaviest functions by cumulative
time and by own time, and the share of the run spent importing modules (the top-level ``import`` statements' time).
"""

from __future__ import annotations

import argparse
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
VEILLE = str(ROOT / ".venv" / "bin" / "veille")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(*prefix: str) -> tuple[float, float, float]:
    load = os.getloadavg()[0]
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run([PYTHON, *prefix, VEILLE, "run"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"veille run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return time.perf_counter() - wall, _children_cpu() - cpu, load


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    run()  # warms bytecode, the shared API and every cache
    for n in range(args.repeat):
        wall, cpu, load = run()
        print(f"warm run {n + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU (user + system), load {load:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "warm.prof"
        wall, _, load = run("-m", "cProfile", "-o", str(out))
        stats = pstats.Stats(str(out))
        total = stats.total_tt  # type: ignore[attr-defined]
        imports = max(
            (v[3] for k, v in stats.stats.items() if k[2] == "_find_and_load"),  # type: ignore[attr-defined]
            default=0.0,
        )
        print(
            f"profiled run: {wall:.2f} s wall (cProfile slows it), load {load:.1f}; profiled time "
            f"{total:.2f} s, of which imports {imports:.2f} s ({100 * imports / total:.0f} %)"
        )
        stats.sort_stats("cumulative").print_stats(args.top)
        print(f"the same run, top {args.top} by own time (where the CPU goes, callers aside):")
        stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
