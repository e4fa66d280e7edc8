"""`veille sql --max-rows 0` in bounded memory (issue 39 item 6): peak RSS of the console script
printing every row of a large result, per format.

Usage (figures in docs/warehouse.md, « Limits of veille sql »):

    .venv/bin/python bench/sql_stream.py --rows 10000000 --formats csv json

Each run is the installed ``veille`` console script on a fresh synthetic warehouse, its output sent
to /dev/null; the peak is what ``os.wait4`` reports of that child alone (a child started from this
process would otherwise count this process's own peak). Before the stream (the whole result fetched,
then rendered), 10M rows cost 2.8 GB as CSV and 6.5 GB as JSON.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from veille.settings import Settings
from veille.warehouse import record_run_dir
from veille.warehouse.synth import write_synthetic_run


def _warehouse(root: Path) -> Path:
    settings = Settings(warehouse_dir=root / "wh")
    record_run_dir(write_synthetic_run(settings.runs_dir, datetime.now(UTC), seed=1), settings.parquet_dir)
    return settings.warehouse_dir


def _peak(args: list[str]) -> tuple[int, float, float]:
    """(exit code, peak RSS in MB, wall seconds) of one console-script run."""
    started = time.monotonic()
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(args, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--formats", nargs="+", default=["csv", "json"])
    opts = parser.parse_args()
    exe = str(Path(sys.executable).with_name("veille"))
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = _warehouse(Path(tmp))
        statement = f"SELECT * FROM range({opts.rows})"
        for fmt in opts.formats:
            args = [exe, "sql", statement, "--warehouse", str(warehouse), "--format", fmt, "--max-rows", "0"]
            args += ["--timeout", "3600"]
            code, peak_mb, wall = _peak(args)
            print(f"{opts.rows} rows as {fmt}: exit {code}, peak RSS {peak_mb:.0f} MB, {wall:.0f} s")


if __name__ == "__main__":
    main()
