"""What a crash, concurrency or bad-corpus test reads back after a run: the Parquet warehouse, the
DuckDB corpus database, Prefect's persisted task results, the run's journal and folder (split from
tests/crashkit.py, which starts and forks the runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DatabaseState",
    "WarehouseState",
    "assert_warehouse_consistent",
    "corpus_hashes",
    "database_state",
    "journal",
    "persisted_results",
    "run_folder_from_output",
    "warehouse_state",
]


# A crash test inspects the same warehouse and result files after every trial (20 trials, two
# inspections each, ~400 files by the end): what a file held is kept while the file is the same
# one (inode, size, modification and change times; a rewrite or a rename-into-place changes them).
# Only files that read back are kept: an unreadable one is read again each time.
_FileKey = tuple[str, int, int, int, int]
_PARQUET_READS: dict[_FileKey, tuple[frozenset[str], int, str | None]] = {}
_RESULT_LABELS: dict[_FileKey, str] = {}


def _file_key(path: Path) -> _FileKey:
    st = path.stat()
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_parquet(path: Path, with_status: bool) -> tuple[frozenset[str], int, str | None] | None:
    """(run ids of its rows, row count, first row's status or None) of a Parquet file; None when it
    does not read back."""
    import pyarrow.parquet as pq

    key = _file_key(path)
    known = _PARQUET_READS.get(key)  # a path is one table's: with_status is the same each time
    if known is not None:
        return known
    try:
        data = pq.read_table(path)
        read = (
            frozenset(data.column("run_id").to_pylist()),
            data.num_rows,
            str(data.column("status")[0]) if with_status else None,
        )
    except Exception:
        return None
    if _file_key(path) == key:  # unchanged while it was read
        _PARQUET_READS[key] = read
    return read


@dataclass
class WarehouseState:
    """What a reader of ``<warehouse>/parquet`` and ``<warehouse>/runs`` would find."""

    committed: set[str]  # run ids with a runs commit marker
    runs_rows: dict[str, int]  # run id -> rows in its runs file (must be 1)
    statuses: dict[str, str]  # run id -> runs.status
    orphans: dict[str, set[str]]  # table -> run ids with a file but no commit marker
    unreadable: list[str]  # visible *.parquet files that do not read back
    hidden_temporaries: int  # .<run_id>.<random>.tmp left by a killed writer (never read by views)
    index_ids: list[str] | None  # run ids in _index/runs_summary.parquet (None: no index)
    folders: set[str]  # run folders under <warehouse>/runs
    unrecorded_folders: dict[str, list[str]]  # folder -> its files, for folders not committed
    lock_files: set[str]  # folders still holding a .running file


def warehouse_state(warehouse: Path) -> WarehouseState:
    import pyarrow.parquet as pq

    from veille.run.recovery import LOCK_FILE
    from veille.warehouse import TABLES, committed_files, committed_runs, summary_index_path

    parquet = warehouse / "parquet"
    committed = set(committed_runs(parquet))
    runs_rows: dict[str, int] = {}
    statuses: dict[str, str] = {}
    orphans: dict[str, set[str]] = {}
    unreadable: list[str] = []
    for table in TABLES:
        for path in committed_files(parquet, table):
            run_id = path.stem
            read = _read_parquet(path, table == "runs")
            if read is None:
                unreadable.append(str(path))
                continue
            run_ids, rows, status = read
            if run_ids - {run_id}:
                unreadable.append(f"{path}: rows of another run")
            if table == "runs":
                runs_rows[run_id] = rows
                statuses[run_id] = str(status)
            elif run_id not in committed:
                orphans.setdefault(table, set()).add(run_id)
    index = summary_index_path(parquet)
    index_ids = pq.read_table(index).column("run_id").to_pylist() if index.exists() else None
    runs_dir = warehouse / "runs"
    folders = {p.name for p in runs_dir.iterdir() if p.is_dir()} if runs_dir.is_dir() else set()
    return WarehouseState(
        committed=committed,
        runs_rows=runs_rows,
        statuses=statuses,
        orphans=orphans,
        unreadable=unreadable,
        hidden_temporaries=sum(1 for _ in parquet.rglob(".*.tmp")) if parquet.is_dir() else 0,
        index_ids=index_ids,
        folders=folders,
        unrecorded_folders={
            name: sorted(p.name for p in (runs_dir / name).iterdir()) for name in folders - committed
        },
        lock_files={name for name in folders if (runs_dir / name / LOCK_FILE).exists()},
    )


def assert_warehouse_consistent(state: WarehouseState) -> None:
    """No partial file, no partial recording, no duplicate run row, index in line with the files,
    and every run folder that holds anything recorded (killed runs by the next run's recovery)."""
    assert not state.unreadable, state.unreadable
    assert not state.orphans, f"table files of runs without a commit marker: {state.orphans}"
    assert all(n == 1 for n in state.runs_rows.values()), state.runs_rows
    assert set(state.runs_rows) == state.committed
    assert state.index_ids is not None and sorted(state.index_ids) == sorted(state.committed), (
        "summary index out of line with the committed runs"
    )
    assert len(state.index_ids) == len(set(state.index_ids)), "duplicate run rows in the summary index"
    assert not state.lock_files, f"run folders still marked running: {state.lock_files}"
    # A folder can stay unrecorded only if the run died before writing anything in it.
    leftovers = {k: v for k, v in state.unrecorded_folders.items() if any(not f.startswith(".") for f in v)}
    assert not leftovers, f"run folders with content but no record: {leftovers}"
    assert state.committed <= state.folders


@dataclass
class DatabaseState:
    schema_version: int
    ingest_runs: int
    documents: dict[str, str]  # id -> content hash of valid documents


def database_state(db_path: Path) -> DatabaseState:
    """Open the corpus database read-only (after a crash: replays its WAL) and read what a run reads."""
    import duckdb

    from veille.store.migrations import schema_version
    from veille.store.readers import document_snapshot

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        version = schema_version(con)
        ingest_runs = len(con.cursor().table("ingest_runs").fetchall())
    finally:
        con.close()
    return DatabaseState(version, ingest_runs, dict(document_snapshot(db_path)))


def corpus_hashes(corpus: Path) -> set[str]:
    """sha256 of every docs/*.md file of a corpus (what the database must hold after an ingestion)."""
    import hashlib

    return {hashlib.sha256(p.read_bytes()).hexdigest() for p in (corpus / "docs").glob("*.md")}


def persisted_results(results_dir: Path) -> dict[str, str | None]:
    """Prefect's persisted task results: file name -> ``plan``, ``analyse:<subtask id>``, or None when
    the file does not deserialize (a write cut short by a crash)."""
    from prefect.results import ResultRecord

    from veille.steps.analyse import Analysis
    from veille.steps.plan import PlanOutcome

    found: dict[str, str | None] = {}
    if not results_dir.is_dir():
        return found
    for path in results_dir.iterdir():
        if not path.is_file():
            continue
        key = _file_key(path)
        if key in _RESULT_LABELS:
            found[path.name] = _RESULT_LABELS[key]
            continue
        try:
            value: object = ResultRecord.deserialize(path.read_bytes()).result
        except Exception:
            found[path.name] = None
            continue
        if isinstance(value, Analysis):
            label = f"analyse:{value.subtask_id}"
        elif isinstance(value, PlanOutcome):
            label = "plan"
        else:
            label = type(value).__name__
        found[path.name] = label
        if _file_key(path) == key:  # unchanged while it was read
            _RESULT_LABELS[key] = label
    return found


def journal(run_dir: Path) -> list[Any]:
    from veille.journal import read_journal

    return read_journal(run_dir / "calls.jsonl")


def run_folder_from_output(out: str) -> Path:
    """The run folder printed by `veille run` (last "Dossier du run : <path>" line)."""
    for line in reversed(out.splitlines()):
        if line.startswith("Dossier du run : "):
            return Path(line.removeprefix("Dossier du run : ").strip())
    raise AssertionError(f"no run folder in the output:\n{out[-2000:]}")
