"""Why veille.store loads documents the way it does: DuckDB insert strategies inside one transaction.

Usage (figures recorded in docs/benchmarks.md, section Ingestion):

    .venv/bin/python bench/ingest_duckdb_variants.py --rows 100000

Each variant runs in a fresh subprocess: create the ``documents`` table (primary key on id), then
in ONE transaction append N rows of ~2 KB text in batches of 2 000 from Arrow tables, and COMMIT.
Reported: wall time and peak RSS (``ru_maxrss``) of that process. Variants:

- ``relation``: ``con.from_arrow(batch).insert_into(table)`` (what veille.store does);
- ``register``: ``con.register('batch', ...)`` + ``INSERT INTO ... SELECT * FROM batch``;
- ``upsert``: rows already committed, then every row replaced with ``INSERT ... ON CONFLICT DO UPDATE``
  through a registered view (a full "every document changed" re-ingest);
- ``delete-insert``: the same replacement as ``DELETE`` of the batch ids + ``relation`` insert
  (what veille.store does for changed documents);

each with the database attached with a given ``ROW_GROUP_SIZE`` (DuckDB's default is 122 880).
No document parsing here: this isolates the database side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BATCH = 2_000
VARIANTS = [
    ("relation", 122_880),
    ("relation", 32_768),
    ("relation", 8_192),
    ("register", 8_192),
    ("upsert", 8_192),
    ("delete-insert", 8_192),
]


def child(mode: str, row_group_size: int, rows: int, db: Path) -> dict[str, float]:
    import duckdb
    import pyarrow as pa

    rng = random.Random(1)
    words = [
        "débit",
        "latence",
        "moteur",
        "inférence",
        "plateforme",
        "coût",
        "licence",
        "sécurité",
        "correctif",
        "version",
    ]
    pool = [" ".join(rng.choice(words) for _ in range(260)) for _ in range(500)]

    def batches(tag: str):  # type: ignore[no-untyped-def]
        for start in range(0, rows, BATCH):
            ids = [f"doc-{i:07d}" for i in range(start, min(start + BATCH, rows))]
            bodies = [pool[i % 500] + tag + str(i) for i in range(len(ids))]
            yield pa.table({"id": ids, "body": bodies, "n": list(range(len(ids)))})

    con = duckdb.connect()
    con.execute(f"ATTACH $path AS c (ROW_GROUP_SIZE {int(row_group_size)})", {"path": str(db)})
    con.execute("USE c")
    con.execute("CREATE TABLE d (id VARCHAR PRIMARY KEY, body VARCHAR, n INTEGER)")
    if mode in ("upsert", "delete-insert"):  # the rows to replace, committed beforehand
        con.execute("BEGIN TRANSACTION")
        for batch in batches("a"):
            con.from_arrow(batch).insert_into("d")
        con.execute("COMMIT")
    t = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    for batch in batches("b"):
        if mode == "relation":
            con.from_arrow(batch).insert_into("d")
        elif mode == "register":
            con.register("batch", batch)
            con.execute("INSERT INTO d SELECT * FROM batch")
            con.unregister("batch")
        elif mode == "upsert":
            con.register("batch", batch)
            con.execute(
                "INSERT INTO d SELECT * FROM batch ON CONFLICT (id) DO UPDATE SET body = excluded.body"
            )
            con.unregister("batch")
        elif mode == "delete-insert":
            con.execute(
                "DELETE FROM d WHERE id IN (SELECT unnest($ids))", {"ids": batch.column("id").to_pylist()}
            )
            con.from_arrow(batch).insert_into("d")
        else:
            raise SystemExit(f"unknown mode {mode}")
    con.execute("COMMIT")
    seconds = time.perf_counter() - t
    count = con.execute("SELECT count(*) FROM d").fetchone()
    con.close()
    assert count is not None and count[0] == rows
    return {"seconds": seconds, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.rows, args.db)))
        return
    print(f"# load average before: {os.getloadavg()}; cpus: {os.cpu_count()}; rows: {args.rows}")
    print("| variant | ROW_GROUP_SIZE | wall | peak RSS |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="veille-duckdb-") as tmp:
        for i, (mode, rgs) in enumerate(VARIANTS):
            db = Path(tmp) / f"v{i}.duckdb"
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--rows",
                    str(args.rows),
                    "--child",
                    mode,
                    str(rgs),
                    "--db",
                    str(db),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            print(
                f"| {mode} | {rgs} | {result['seconds']:.2f} s | {result['peak_rss_mib']:.0f} MiB |",
                flush=True,
            )


if __name__ == "__main__":
    main()
