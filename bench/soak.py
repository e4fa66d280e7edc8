"""Soak: many consecutive offline runs on the bundled corpus against one Prefect server on loopback.

Usage (figures recorded in docs/benchmarks.md, section "Soak"):

    .venv/bin/python bench/soak.py                     # 50 runs
    .venv/bin/python bench/soak.py --runs 10 --json /tmp/soak.json
    .venv/bin/python bench/soak.py --runs 5 --history 300   # warehouse already holding 300 runs

It starts `prefect server start --host 127.0.0.1 --port <free>` with a temporary PREFECT_HOME and
analytics off, then runs `veille run --backend offline` N times in a row, each in a fresh process
(as a nightly deployment would), on one warehouse and one corpus copy. Per run it records the wall
time and the peak RSS of the run process (``ru_maxrss`` from ``wait4``), and the RSS of the server's
process tree after the run. At the end it checks that the warehouse's ``runs`` table holds exactly
one committed row per run, all ``completed``, and reports the least-squares slope of duration and
memory against the run number (a leak or a growing cost shows as a positive slope that is large
next to the run-to-run noise). The server is stopped by PID (its process group too) in all cases.

Runs 2..N reuse the task cache (plan and branches persisted by run 1), like nightly runs on an
unchanged corpus; ``--no-cache`` makes every run recompute everything. ``--history N`` first records
N synthetic runs (veille/warehouse/synth.py, one per day) in the warehouse, to see what a long
history costs each run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT_ROOT))

from veille.ops.server import (  # noqa: E402
    LOOPBACK,
    api_url,
    free_port,
    server_env,
    start_prefect_process,
    stop_process,
    wait_healthy,
)
from veille.warehouse import query  # noqa: E402

PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def _tree_rss_mib(root_pid: int) -> float:
    """RSS of ``root_pid`` and all its descendants (Linux /proc), MiB."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            statm = (entry / "statm").read_text().split()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        parents[int(entry.name)] = int(fields[1])
        rss[int(entry.name)] = int(statm[1]) * PAGE_KIB
    tree, frontier = {root_pid}, [root_pid]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(rss.get(pid, 0) for pid in tree) / 1024


def _slope(values: list[float]) -> tuple[float, float]:
    """Least-squares slope of values against 1..n (units per run) and its standard error."""
    n = len(values)
    xs = range(1, n + 1)
    mx, my = (n + 1) / 2, statistics.fmean(values)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, values, strict=True)) / sxx
    residuals = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, values, strict=True))
    return slope, (residuals / (n - 2) / sxx) ** 0.5 if n > 2 else float("nan")


def _trend(values: list[float], scale: float, unit: str) -> str:
    """``slope ± 2 SE unit/run (drift over the runs: x % of the median)``."""
    slope, se = _slope(values)
    drift = slope * len(values) / statistics.median(values) * 100
    return f"slope {slope * scale:+.1f} ± {2 * se * scale:.1f} {unit}/run (over {len(values)} runs: {drift:+.1f} % of the median)"


def _run_once(argv: list[str], env: dict[str, str], log: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS MiB) of one `veille run` process."""
    with log.open("w") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, env=env, cwd=PROJECT_ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen from waiting again
    return proc.returncode, elapsed, usage.ru_maxrss / 1024


def _fill_history(warehouse: Path, count: int) -> None:
    from datetime import UTC, datetime, timedelta

    from veille.warehouse import record_run_dir
    from veille.warehouse.synth import write_synthetic_run

    folders = warehouse.parent / "synthetic-runs"  # not under runs/: only the Parquet side is history
    start = datetime(2025, 1, 1, 2, tzinfo=UTC)
    for day in range(count):
        record_run_dir(
            write_synthetic_run(folders, start + timedelta(days=day), seed=day), warehouse / "parquet"
        )


def soak(runs: int, no_cache: bool, keep: Path | None, history: int = 0) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="veille-soak-")) if keep is None else keep
    base.mkdir(parents=True, exist_ok=True)
    corpus, warehouse = base / "corpus", base / "warehouse"
    if not corpus.exists():
        shutil.copytree(PROJECT_ROOT / "corpus", corpus)
    if history:
        _fill_history(warehouse, history)
    home = base / "prefect-home"
    home.mkdir(exist_ok=True)
    port = free_port()
    env = server_env(port=port, home=home)
    env = {k: v for k, v in env.items() if not k.startswith("VEILLE_")}
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        env.pop(key, None)
    server = start_prefect_process(
        ["server", "start", "--host", LOOPBACK, "--port", str(port), "--analytics-off"],
        env=env,
        log_path=base / "server.log",
    )
    rows: list[dict[str, Any]] = []
    try:
        waited = wait_healthy(api_url(port), timeout_s=240, proc=server)
        print(f"server {api_url(port)} (pid {server.pid}) healthy after {waited:.1f} s", flush=True)
        argv = [str(Path(sys.executable).with_name("veille")), "run", "--corpus", str(corpus)]
        argv += ["--warehouse", str(warehouse), "--backend", "offline"] + (["--no-cache"] if no_cache else [])
        logs = base / "logs"
        logs.mkdir(exist_ok=True)
        for number in range(1, runs + 1):
            code, seconds, rss = _run_once(argv, env, logs / f"run-{number:03d}.log")
            server_rss = _tree_rss_mib(server.pid)
            rows.append(
                {
                    "run": number,
                    "exit": code,
                    "seconds": seconds,
                    "rss_mib": rss,
                    "server_rss_mib": server_rss,
                }
            )
            print(
                f"run {number:3d}: exit {code}, {seconds:5.2f} s, peak RSS {rss:6.1f} MiB, "
                f"server tree RSS {server_rss:6.1f} MiB",
                flush=True,
            )
            if code != 0:
                print((logs / f"run-{number:03d}.log").read_text(errors="replace")[-3000:], flush=True)
    finally:
        stop_process(server, grace_s=30)
    columns, recorded = query(
        warehouse / "parquet",
        "SELECT status, count(*) AS runs, count(DISTINCT run_id) FROM runs GROUP BY status",
    )
    del columns
    return {
        "base": str(base),
        "runs": rows,
        "recorded": [list(r) for r in recorded],
        "server_pid": server.pid,
    }


def summarize(result: dict[str, Any]) -> str:
    rows = result["runs"]
    seconds = [r["seconds"] for r in rows]
    rss = [r["rss_mib"] for r in rows]
    server = [r["server_rss_mib"] for r in rows]
    n = len(rows)
    tail = seconds[1:]  # run 1 fills the task cache: its cost is not the steady state
    lines = [
        f"runs: {n}, exit codes: {sorted({r['exit'] for r in rows})}",
        f"warehouse runs table (status, rows, distinct run ids): {result['recorded']}",
        f"duration: run 1 {seconds[0]:.2f} s; runs 2..{n} median {statistics.median(tail):.2f} s, "
        f"min {min(tail):.2f}, max {max(tail):.2f}, stdev {statistics.stdev(tail):.2f}; "
        f"{_trend(tail, 1000, 'ms')}",
        f"run process peak RSS: median {statistics.median(rss):.1f} MiB, min {min(rss):.1f}, max {max(rss):.1f}; "
        f"{_trend(rss[1:], 1024, 'KiB')}",
        f"server process tree RSS after each run: first {server[0]:.1f} MiB, last {server[-1]:.1f} MiB, "
        f"max {max(server):.1f}; {_trend(server, 1024, 'KiB')}",
        f"first 10 vs last 10 runs: duration {statistics.fmean(seconds[1:11]):.2f} → "
        f"{statistics.fmean(seconds[-10:]):.2f} s, peak RSS {statistics.fmean(rss[1:11]):.1f} → "
        f"{statistics.fmean(rss[-10:]):.1f} MiB, server {statistics.fmean(server[:10]):.1f} → "
        f"{statistics.fmean(server[-10:]):.1f} MiB",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--no-cache", action="store_true", help="every run recomputes every step")
    parser.add_argument("--keep", type=Path, help="work folder to use and keep (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="write the per-run figures here")
    parser.add_argument("--history", type=int, default=0, help="synthetic runs recorded before the soak")
    args = parser.parse_args()
    if args.runs < 3:
        parser.error("--runs: at least 3 (a slope needs points)")
    started = time.perf_counter()
    result = soak(args.runs, args.no_cache, args.keep, args.history)
    result["total_s"] = time.perf_counter() - started
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(summarize(result))
    print(f"total {result['total_s']:.0f} s; work folder {result['base']}")
    if args.keep is None:
        shutil.rmtree(result["base"], ignore_errors=True)
    statuses = {status: (count, distinct) for status, count, distinct in result["recorded"]}
    expected = args.runs + args.history
    ok = statuses == {"completed": (expected, expected)} and all(r["exit"] == 0 for r in result["runs"])
    if not ok:
        print("FAILED: every run must exit 0 and be recorded once as completed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
