"""Opening the corpus database at the schema this code needs.

Readers open their own read-only connection per call: never share a DuckDB connection across
threads. Within one process, do not read while an ingestion is writing (DuckDB refuses a read-only
and a read-write connection to the same file in one process).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from veille.derived import set_aside
from veille.store.lock import retry_on_lock
from veille.store.migrations import latest_version, migrate, schema_version
from veille.store.queries import read_sql

__all__ = [
    "INGEST_MEMORY_LIMIT",
    "missing_database",
    "read_only",
    "read_write",
    "reads_together",
    "set_aside_unreadable",
]

INGEST_MEMORY_LIMIT = "192MB"  # DuckDB's share of an ingestion's memory (the rest: Python, pyarrow)

# A DuckDB file starts with an 8-byte checksum then the magic bytes "DUCK" (DuckDB's storage format).
_MAGIC, _MAGIC_AT = b"DUCK", 8


def set_aside_unreadable(db_path: Path) -> Path | None:
    """The corpus database is a cache of the corpus files: when the file is not a DuckDB database
    (no magic bytes: garbage, truncated to nothing), move it aside (``veille.derived.set_aside``; its WAL
    with it) so the ingestion rebuilds it from the corpus files. Returns where it went (None: absent or a
    database). The header is read, not opened with DuckDB: a second connection to the file in this
    process would clash with the ingestion's own."""
    db_path = Path(db_path)
    if not db_path.is_file():
        return None
    with db_path.open("rb") as handle:
        header = handle.read(_MAGIC_AT + len(_MAGIC))
    if header[_MAGIC_AT:] == _MAGIC:
        return None
    wal = db_path.with_name(db_path.name + ".wal")
    moved = set_aside(
        db_path,
        "not a DuckDB database file",
        "rebuilt from the corpus files by this ingestion",
        announce=False,  # the ingestion's own ingest.database_rebuilt alert names it
    )
    if wal.is_file():
        set_aside(wal, "write-ahead log of an unreadable database", "not replayed")
    return moved


def missing_database(db_path: Path | str) -> FileNotFoundError:
    return FileNotFoundError(f"no corpus database at {db_path}: run `veille ingest` (or `veille run`) first")


@contextmanager
def read_only(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection; refuses a missing database or one at an older schema version."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise missing_database(db_path)
    # Another process ingesting holds the file: wait for it (veille.store.lock) instead of failing.
    con = retry_on_lock(lambda: duckdb.connect(str(db_path), read_only=True), db_path)
    try:
        version, latest = schema_version(con), latest_version()
        if version < latest:
            raise RuntimeError(
                f"corpus database {db_path} has schema version {version}, this code needs {latest}: "
                "run `veille ingest` to migrate it"
            )
        yield con
    finally:
        con.close()


@contextmanager
def reads_together(db_path: Path) -> Iterator[None]:
    """The reads of ``db_path`` in this block (this process, any thread) share one open database.

    DuckDB keeps a file's database while a connection to it is open, and a reader's own connection
    (:func:`read_only`, the same options) then joins it instead of opening the file again: measured
    0.5 ms of CPU against 11.6 ms for the bundled corpus's database. Held around a stretch of reads
    with no model call between them (the flow's, from the catalogue to the planner's input): another
    process's ingestion waits for the whole block as it waits for one read (veille.store.lock), and
    no ingestion of this process may run inside it. A missing database: the block runs without one
    (each reader says so)."""
    db_path = Path(db_path)
    if not db_path.is_file():
        yield
        return
    con = retry_on_lock(lambda: duckdb.connect(str(db_path), read_only=True), db_path)
    try:
        yield
    finally:
        con.close()


@contextmanager
def read_write(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection (the database attached as ``corpus``), migrated to the latest schema."""
    con = duckdb.connect()
    try:
        # One writing process per file, and no reader meanwhile: wait for the other run (veille.store.lock).
        retry_on_lock(lambda: con.execute(read_sql("attach_database.sql"), {"path": str(db_path)}), db_path)
        con.execute("USE corpus")
        # An ingestion is one transaction, and DuckDB keeps a transaction's appended rows in memory
        # until a row group fills: at 20,000 documents of 20 KB that is ~1 GiB. A memory limit makes it
        # write them out (measured: 1,060 -> 392 MiB for 400 MB of text, docs/benchmarks.md); temporary
        # files go beside the database, not into the working directory.
        con.execute(f"SET memory_limit = '{INGEST_MEMORY_LIMIT}'")
        con.execute("SET temp_directory = ?", [str(Path(db_path).with_suffix(".tmp"))])
        migrate(con)
        yield con
    finally:
        con.close()
