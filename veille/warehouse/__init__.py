"""The Parquet warehouse: one file per table per run, Hive-partitioned by run date, read with DuckDB.

- :mod:`~veille.warehouse.schema`: table schemas and the ordered migrations registry;
- :mod:`~veille.warehouse.rows`: rows from a run folder (one reader per table);
- :mod:`~veille.warehouse.summary`: the totals of the ``runs`` row, headline metrics of a run;
- :mod:`~veille.warehouse.commit`: atomic Parquet commit, the ``runs`` commit marker, summary index;
- :mod:`~veille.warehouse.queries`: the views of ``views/*.sql``, read-only connection, :func:`query`
  (the module is not named ``query``: the re-exported function would hide it);
- :mod:`~veille.warehouse.synth`: synthetic run folders for tests, benchmarks and docs (not re-exported).

The warehouse reads the call journal's records (:mod:`veille.journal`), never the model layer.
"""

# Schema versions 9, 10 and 11 register themselves after the migrations of veille.warehouse.schema.
from veille.warehouse import (
    grade_columns,  # noqa: F401  # version 10 (it imports version 9 first)
    reading_columns,  # noqa: F401
    reuse_columns,  # noqa: F401  # version 11 (it imports version 10 first)
)
from veille.warehouse.commit import (
    RecordResult,
    committed_files,
    committed_runs,
    is_recorded,
    partition_path,
    record_run_dir,
    summary_index_path,
    update_summary_index,
    write_run_tables,
)
from veille.warehouse.errors import (
    QueryTimeoutError,
    ReadOnlyQueryError,
    RunAlreadyRecordedError,
    WarehouseError,
)
from veille.warehouse.queries import VIEWS_DIR, check_read_only, connect, query, read_sql
from veille.warehouse.rows import build_tables, iter_run_dirs, run_date_of
from veille.warehouse.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    TABLES,
    Migration,
    file_schema_version,
    register_migration,
    upgrade_table,
)
from veille.warehouse.summary import metrics_table

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TABLES",
    "VIEWS_DIR",
    "Migration",
    "QueryTimeoutError",
    "ReadOnlyQueryError",
    "RecordResult",
    "RunAlreadyRecordedError",
    "WarehouseError",
    "build_tables",
    "check_read_only",
    "committed_files",
    "committed_runs",
    "connect",
    "file_schema_version",
    "is_recorded",
    "iter_run_dirs",
    "metrics_table",
    "partition_path",
    "query",
    "read_sql",
    "record_run_dir",
    "register_migration",
    "run_date_of",
    "summary_index_path",
    "update_summary_index",
    "upgrade_table",
    "write_run_tables",
]
