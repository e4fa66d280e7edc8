"""Benchmark: a year of nightly runs in the Parquet warehouse.

Simulates ``--runs`` nightly run folders (default 365, ~60 journal rows each, synthetic but with
every table filled), records each one, then times:

- one run's Parquet write (``write_run_tables``: 9 files, temp name + fsync + rename; target ≤ 200 ms),
  and the whole ``record_run_dir`` (reading the run folder + writing);
- the trend query (``SELECT * FROM run_trends`` over all runs, from a fresh connection each time,
  as ``veille trends`` does; target ≤ 200 ms), plus, for information, the ``veille trends`` query file
  and the per-role cost query, which reads every night's call journal.

Wall-clock figures (median, p95, max) and, because the benchmark machine is shared, the CPU time of
this process (all its threads) as a load-independent figure.

Usage: ``.venv/bin/python bench/warehouse_trends.py [--runs 365] [--calls 60] [--repeat 15] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow

from veille import warehouse as wh
from veille.warehouse.synth import write_synthetic_run

TARGET_MS = 200.0


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median_ms": _ms(statistics.median(ordered)),
        "p95_ms": _ms(p95),
        "max_ms": _ms(ordered[-1]),
    }


def _time_query(
    parquet: Path, sql: str, params: dict[str, object] | None, repeat: int
) -> tuple[dict[str, float], int]:
    samples, cpu, rows = [], [], 0
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        _, result = wh.query(parquet, sql, params, read_only_check=params is None)
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        rows = len(result)
    return {**_stats(samples), "cpu_median_ms": _ms(statistics.median(cpu))}, rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=365)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="veille-bench-") as tmp:
        root = args.dir or Path(tmp)
        runs_dir, parquet = root / "runs", root / "parquet"
        first = datetime(2025, 1, 1, 2, 0, tzinfo=UTC)

        folders = [
            write_synthetic_run(runs_dir, first + timedelta(days=i), seed=i, calls=args.calls)
            for i in range(args.runs)
        ]

        build_s, write_s, record_s, write_cpu = [], [], [], []
        for folder in folders:
            start = time.perf_counter()
            tables = wh.build_tables(folder)
            built, built_cpu = time.perf_counter(), time.process_time()
            summary = tables["runs"].to_pylist()[0]
            wh.write_run_tables(
                parquet,
                tables,
                run_id=summary["run_id"],
                run_date=wh.run_date_of(summary["run_id"], summary["started_at"]),
            )
            done = time.perf_counter()
            write_cpu.append(time.process_time() - built_cpu)
            build_s.append(built - start)
            write_s.append(done - built)
            record_s.append(done - start)
        call_files = len(wh.committed_files(parquet, "llm_calls"))

        trend, trend_rows = _time_query(
            parquet, "SELECT * FROM run_trends ORDER BY started_at", None, args.repeat
        )
        cli_trend, _ = _time_query(
            parquet, wh.read_sql("warehouse_trends"), {"since": date(1970, 1, 1)}, args.repeat
        )
        by_role, _ = _time_query(
            parquet,
            "SELECT run_date, role, sum(cost_usd) FROM llm_calls GROUP BY ALL ORDER BY 1, 2",
            None,
            max(3, args.repeat // 3),
        )
        _, journal_rows = wh.query(parquet, "SELECT count(*) FROM llm_calls")

    print(
        f"# warehouse_trends: {args.runs} runs × {args.calls} calls ({journal_rows[0][0]} journal rows in {call_files} files)"
    )
    print(
        f"python {platform.python_version()}, duckdb {duckdb.__version__}, pyarrow {pyarrow.__version__}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"one run's Parquet write (9 files)   : {_stats(write_s)}  cpu median: "
        f"{_ms(statistics.median(write_cpu))} ms  first: {_ms(write_s[0])} ms"
    )
    print(f"one run's build_tables (read folder): {_stats(build_s)}")
    print(f"one run's record_run_dir (both)     : {_stats(record_s)}")
    print(f"trend query, run_trends ({trend_rows} rows)  : {trend}")
    print(f"veille trends query (all runs)      : {cli_trend}")
    print(f"cost per role per night (llm_calls) : {by_role}  (information; reads {args.runs} journal files)")
    ok = _stats(write_s)["median_ms"] <= TARGET_MS and trend["median_ms"] <= TARGET_MS
    print(f"targets (median ≤ {TARGET_MS:.0f} ms for write and trend query): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
