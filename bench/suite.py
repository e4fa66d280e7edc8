"""The test suite's CPU (issue 40 item 5: ≤ 600 s of CPU for `make test` and `make test-process` together).

Usage (figures in docs/benchmarks.md, « Test suite »):

    .venv/bin/python bench/suite.py                 # both halves, as .ci/run runs them
    .venv/bin/python bench/suite.py --only test     # one half: test or test-process
    .venv/bin/python bench/suite.py --per-test 15   # also the 15 costliest tests and files of each half

Each half runs as CI runs it (`make test`: lint, mypy, then pytest without the process tests;
`make test-process`), in its own process, one after the other. CPU time is user + system of that
`make` and everything it reaped (``RUSAGE_CHILDREN``: pytest's xdist workers, the Prefect servers
they started and stopped, the `veille` processes of the process tests), printed with the wall time
and the load average before and after: the machine is shared, so wall time follows the load and
CPU time is the figure to compare. mypy's cache is whatever the checkout holds: CI's clean clone has
none (about 29 s of CPU more than a warm cache, docs/benchmarks.md).

``--per-test N`` loads tests/cpu_per_test.py as a pytest plugin (``-p``): each test's CPU, its own
process's and that of the children reaped during it, written to a JSON-lines file, and the N
costliest printed. A session fixture's teardown runs inside a worker's last test, so a server
started for the whole session shows up as that test's children's CPU: read it as the fixture's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HALVES = ("test", "test-process")


def _children_cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def run_half(target: str, per_test: Path | None) -> tuple[float, float, float, int]:
    """Run ``make <target>``; (wall, user, system) seconds and its exit code."""
    env = dict(os.environ, PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    if per_test is not None:
        env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} -p tests.cpu_per_test".strip()
        env["CPU_PER_TEST_FILE"] = str(per_test)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))  # -p tests.…
    user, system = _children_cpu()
    wall = time.perf_counter()
    done = subprocess.run(["make", target], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    user2, system2 = _children_cpu()
    tail = [line for line in done.stdout.splitlines() if " passed" in line or " failed" in line]
    print(f"  pytest: {tail[-1] if tail else '(no summary line)'}")
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
    return wall, user2 - user, system2 - system, done.returncode


def costliest(path: Path, count: int) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows.sort(key=lambda row: -(row["self"] + row["children"]))
    return [
        f"    {row['self'] + row['children']:6.1f} s CPU ({row['children']:.1f} children), "
        f"{row['wall']:.1f} s wall  {row['id']}"
        for row in rows[:count]
    ]


def by_file(path: Path, count: int) -> list[str]:
    """The ``count`` costliest test files: a file's many cheap tests add up where no single one shows."""
    totals: dict[str, list[float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line:
            row = json.loads(line)
            total = totals.setdefault(row["id"].split("::")[0], [0.0, 0.0, 0])
            total[0] += row["self"] + row["children"]
            total[1] += row["wall"]
            total[2] += 1
    ranked = sorted(totals.items(), key=lambda item: -item[1][0])[:count]
    return [
        f"    {cpu:6.1f} s CPU, {wall:6.1f} s wall, {int(n):4d} tests  {name}"
        for name, (cpu, wall, n) in ranked
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=HALVES, action="append")
    parser.add_argument("--per-test", type=int, default=0, metavar="N")
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    total_cpu = total_wall = 0.0
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.only or HALVES:
            per_test = Path(tmp) / f"{target}.jsonl" if args.per_test else None
            load = os.getloadavg()[0]
            print(f"make {target} (load {load:.1f} before)")
            wall, user, system, code = run_half(target, per_test)
            failed |= code != 0
            print(
                f"  {wall:.1f} s wall, {user + system:.1f} s CPU ({user:.1f} user + {system:.1f} system),"
                f" load {os.getloadavg()[0]:.1f} after, exit {code}"
            )
            if per_test is not None and per_test.exists():
                print(
                    f"  the {args.per_test} costliest tests:", *costliest(per_test, args.per_test), sep="\n"
                )
                print(f"  the {args.per_test} costliest files:", *by_file(per_test, args.per_test), sep="\n")
            total_cpu += user + system
            total_wall += wall
    print(f"together: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU (goal: ≤ 600 s of CPU)")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
