"""Committing a run to the Parquet warehouse: atomic files, the commit marker, the summary index.

Layout: ``<parquet_dir>/<table>/run_date=YYYY-MM-DD/<run_id>.parquet``. The run date is the UTC
start date of the run.

:func:`record_run_dir` turns a run folder (see docs/warehouse.md) into every table, even when the
run failed or some files are missing (the tables then hold what exists). Each file is written to a
hidden temporary name (``.<run_id>.<random>.tmp``, which the ``*.parquet`` globs of the views never
match) and then renamed, so a crash never leaves a half file under a real name. The ``runs`` file is
written last and with an exclusive link: it is the commit marker. A run id whose ``runs`` file
exists is **refused** (:class:`RunAlreadyRecordedError`), never rewritten; a recording interrupted
before its ``runs`` file can simply be retried (the other tables are atomically replaced).
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from veille.arrowrows import column, table_rows
from veille.checkpoints import checkpoint
from veille.derived import set_aside
from veille.oserrors import writing
from veille.warehouse.errors import RunAlreadyRecordedError, WarehouseError
from veille.warehouse.renames import rename_columns
from veille.warehouse.rows import build_tables, run_date_of
from veille.warehouse.schema import SAFE_NAME_RE, TABLE_ORDER, TABLES, renamed_columns
from veille.warehouse.scrubbing import scrub_table

__all__ = [
    "INDEX_DIR",
    "INDEX_FILE",
    "RecordResult",
    "committed_files",
    "committed_runs",
    "is_recorded",
    "partition_path",
    "read_summary_index",
    "record_run_dir",
    "summary_index_path",
    "update_summary_index",
    "write_atomic",
    "write_run_tables",
]

logger = logging.getLogger(__name__)


def partition_path(parquet_dir: Path, table: str, run_date: date, run_id: str) -> Path:
    """``<parquet_dir>/<table>/run_date=YYYY-MM-DD/<run_id>.parquet``."""
    return Path(parquet_dir) / table / f"run_date={run_date.isoformat()}" / f"{run_id}.parquet"


def is_recorded(parquet_dir: Path, run_id: str, run_date: date) -> bool:
    """True when the run's commit marker (its ``runs`` file) exists."""
    return partition_path(parquet_dir, "runs", run_date, run_id).exists()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be opened
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(table: pa.Table, final: Path, *, exclusive: bool) -> None:
    """Write to a hidden temporary name in the same directory, fsync, then rename into place.

    ``exclusive`` links instead of replacing, so two writers of the same run cannot both commit.
    """
    with writing(final.parent, "creating a warehouse folder"):
        final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.with_name(f".{final.stem}.{uuid.uuid4().hex[:8]}.tmp")
    table = scrub_table(table)  # every Parquet file: one scrubbing step
    try:
        with writing(final, "writing a Parquet file"), temp.open("wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            try:
                os.link(temp, final)
            except FileExistsError as exc:
                raise RunAlreadyRecordedError(f"{final}: run already recorded") from exc
        else:
            os.replace(temp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    _fsync_dir(final.parent)


def write_run_tables(
    parquet_dir: Path, tables: Mapping[str, pa.Table], *, run_id: str, run_date: date
) -> dict[str, Path]:
    """Write one file per table for one run; ``runs`` last, as the commit marker.

    Refuses (:class:`RunAlreadyRecordedError`) when the run is already committed. Every table of
    :data:`TABLES` must be given, with its exact schema.
    """
    if not SAFE_NAME_RE.match(run_id):
        raise WarehouseError(f"run id {run_id!r} is not a safe file name")
    if set(tables) != set(TABLES):
        raise WarehouseError(f"tables for run {run_id}: expected {sorted(TABLES)}, got {sorted(tables)}")
    for name, table in tables.items():
        if not table.schema.equals(TABLES[name]):
            raise WarehouseError(f"table {name!r} of run {run_id}: schema differs from TABLES[{name!r}]")
    if is_recorded(parquet_dir, run_id, run_date):
        raise RunAlreadyRecordedError(
            f"run {run_id} is already in the warehouse ({partition_path(parquet_dir, 'runs', run_date, run_id)}); "
            "a run id is never written twice"
        )
    written: dict[str, Path] = {}
    for name in TABLE_ORDER:
        final = partition_path(parquet_dir, name, run_date, run_id)
        write_atomic(tables[name], final, exclusive=name == "runs")
        written[name] = final
        checkpoint("record")  # observers (crash tests): the n-th table file is in place
    try:
        update_summary_index(parquet_dir)
    except Exception as exc:  # the run is committed; readers fall back to the per-run files
        logger.warning("run %s recorded, but the summary index was not updated: %s", run_id, exc)
    return written


# --------------------------------------------------------------------------- summary index
#
# Trend queries read one ``runs`` row per run. With one file per run, a year of nights is 365 file
# opens (~0.3-1 ms each), too slow for an interactive ``veille trends``. So every commit also
# refreshes ``<parquet_dir>/_index/runs_summary.parquet``: the ``runs`` rows of every committed
# run plus their ``run_date``, in one small file. It is derived data: the per-run files stay the
# truth, readers check the index against them (a directory listing) and read the per-run files of
# any run the index misses, and the next commit repairs it.

INDEX_DIR = "_index"
INDEX_FILE = "runs_summary.parquet"


def summary_index_path(parquet_dir: Path) -> Path:
    """``<parquet_dir>/_index/runs_summary.parquet`` (outside every table's glob)."""
    return Path(parquet_dir) / INDEX_DIR / INDEX_FILE


def committed_runs(parquet_dir: Path) -> dict[str, Path]:
    """Run id → its committed ``runs`` file (a directory listing, no file opened)."""
    found: dict[str, Path] = {}
    root = Path(parquet_dir) / "runs"
    if not root.is_dir():
        return found
    with os.scandir(root) as partitions:
        for partition in partitions:
            if not (partition.is_dir() and partition.name.startswith("run_date=")):
                continue
            with os.scandir(partition.path) as files:
                for entry in files:
                    if entry.name.endswith(".parquet") and not entry.name.startswith("."):
                        found[entry.name.removesuffix(".parquet")] = Path(entry.path)
    return found


def _read_parquet_file(path: Path) -> pa.Table:
    """One Parquet file read alone. Not ``pq.read_table``: that goes through ``pyarrow.dataset``,
    whose import pulls in pandas (~0.3 s of CPU per process, a warm night's largest single import
    left) for the same table; and a lone file has no partition column from its path either way."""
    with pq.ParquetFile(path) as parquet:
        return parquet.read()


def _read_runs_file(path: Path) -> pa.Table:
    table = _read_parquet_file(path)
    run_date = date.fromisoformat(path.parent.name.removeprefix("run_date="))
    return table.append_column(
        pa.field("run_date", pa.date32()), column([run_date] * table.num_rows, pa.date32())
    )


@contextlib.contextmanager
def _index_lock(parquet_dir: Path) -> Iterator[None]:
    # Two runs recording at once must not lose each other's row (read-modify-write of the index).
    folder = Path(parquet_dir) / INDEX_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock; readers still check the index against the files
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_summary_index(path: Path, *, set_aside_unreadable: bool = False) -> pa.Table | None:
    """The index (None when absent or unreadable: readers then read the per-run files). A writer
    (``set_aside_unreadable``) moves an unreadable index aside, so it is rebuilt from the runs files."""
    try:
        if not path.is_file():  # absent, or a folder (pyarrow would read a folder as a dataset)
            raise FileNotFoundError(path) if not path.exists() else IsADirectoryError(str(path))
        table = _read_parquet_file(path)
        if "run_id" not in table.column_names:
            raise ValueError("no run_id column")
        return table
    except FileNotFoundError:
        return None
    except (OSError, ValueError, pa.ArrowException) as exc:
        if set_aside_unreadable:
            set_aside(path, f"{type(exc).__name__}: {exc}", "rebuilt from the committed runs files")
        else:
            logger.warning("summary index %s is unreadable (%s): reading the runs files", path, exc)
        return None


def update_summary_index(parquet_dir: Path) -> Path | None:
    """Bring the summary index in line with the committed runs; returns its path (None: no run)."""
    with _index_lock(parquet_dir):
        committed = committed_runs(parquet_dir)
        path = summary_index_path(parquet_dir)
        if not committed:
            path.unlink(missing_ok=True)
            return None
        index = read_summary_index(path, set_aside_unreadable=True)
        indexed = set(index.column("run_id").to_pylist()) if index is not None else set()
        if indexed == set(committed):
            return path
        parts: list[pa.Table] = []
        if index is not None and indexed:
            keep = column([run_id in committed for run_id in index.column("run_id").to_pylist()], pa.bool_())
            parts.append(index.filter(keep))
        parts += [_read_runs_file(committed[run_id]) for run_id in sorted(set(committed) - indexed)]
        # promote: partitions of an older schema version get NULL for columns added since, and
        # renamed columns are read under their current names (an index written before stays readable).
        renamed = renamed_columns("runs")
        merged = pa.concat_tables([rename_columns(p, renamed) for p in parts], promote_options="default")
        merged = merged.sort_by([("run_date", "ascending"), ("run_id", "ascending")])
        write_atomic(merged, path, exclusive=False)
        return path


# --------------------------------------------------------------------------- a whole run folder


@dataclass(frozen=True)
class RecordResult:
    """What :func:`record_run_dir` wrote."""

    run_id: str
    run_date: date
    files: dict[str, Path]
    rows: dict[str, int]
    missing_files: list[str]
    summary: dict[str, Any]  # the ``runs`` row


def record_run_dir(run_dir: Path, parquet_dir: Path) -> RecordResult:
    """Turn one run folder into its Parquet files (see :func:`build_tables`, :func:`write_run_tables`)."""
    tables = build_tables(run_dir)
    runs_row = table_rows(tables["runs"])[0]
    run_id = runs_row["run_id"]
    run_date = run_date_of(run_id, runs_row["started_at"])
    files = write_run_tables(parquet_dir, tables, run_id=run_id, run_date=run_date)
    return RecordResult(
        run_id=run_id,
        run_date=run_date,
        files=files,
        rows={name: t.num_rows for name, t in tables.items()},
        missing_files=list(runs_row["missing_files"]),
        summary=runs_row,
    )


def committed_files(parquet_dir: Path, table: str) -> list[Path]:
    """The table's files the views read (temporary names excluded)."""
    return sorted(
        p for p in (Path(parquet_dir) / table).glob("run_date=*/*.parquet") if not p.name.startswith(".")
    )
