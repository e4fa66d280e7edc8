"""Rewrite partitions of older schema versions with the current schema (`veille warehouse upgrade`).

The views read old files with ``union_by_name``, but other readers do not: ``pd.read_parquet`` on a
table folder takes the first file's schema and silently drops newer columns, DuckDB without
``union_by_name`` fails, and a migration's defaults (``alerts.subjects = [subject]``) only exist in
:func:`~veille.warehouse.schema.upgrade_table`. This module applies the registered migrations to
every file older than :data:`~veille.warehouse.schema.SCHEMA_VERSION` and rewrites it (atomically, in
place) with the table's full current schema, so every file of a table has the same columns in the
same order. Idempotent: a file at the current version is left alone. A column the current schema
does not know is never dropped: the file is left as it is and named in the error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from veille.warehouse.commit import committed_files, summary_index_path, update_summary_index, write_atomic
from veille.warehouse.errors import WarehouseError
from veille.warehouse.schema import SCHEMA_VERSION, TABLES, file_schema_version, upgrade_table

__all__ = ["UpgradeResult", "conform", "upgrade_warehouse"]


@dataclass
class UpgradeResult:
    rewritten: list[Path] = field(default_factory=list)
    current: int = 0  # files already at the current version


def conform(name: str, table: pa.Table, path: Path | str = "") -> pa.Table:
    """``table`` with exactly the current schema of ``name``: columns in order, types cast, columns
    added since as NULL; a column the schema does not know is an error (nothing is dropped)."""
    schema = TABLES[name]
    unknown = sorted(set(table.column_names) - set(schema.names))
    if unknown:
        raise WarehouseError(f"{path}: columns {unknown} are not in the current {name!r} schema; left as is")
    columns = [
        table.column(f.name).cast(f.type)
        if f.name in table.column_names
        else pa.nulls(table.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def upgrade_warehouse(parquet_dir: Path) -> UpgradeResult:
    """Bring every committed file to the current schema; rebuild the summary index when runs changed."""
    result = UpgradeResult()
    for name in TABLES:
        for path in committed_files(parquet_dir, name):
            version = file_schema_version(path)
            if version >= SCHEMA_VERSION:
                result.current += 1
                continue
            try:
                table = pq.ParquetFile(path).read()  # the file alone: no partition column from its path
            except Exception as exc:
                raise WarehouseError(
                    f"{path}: unreadable Parquet file ({type(exc).__name__}: {exc})"
                ) from exc
            write_atomic(conform(name, upgrade_table(name, table, version), path), path, exclusive=False)
            result.rewritten.append(path)
    if any(p.parent.parent.name == "runs" for p in result.rewritten):
        summary_index_path(parquet_dir).unlink(missing_ok=True)  # derived: rebuilt from the runs files
        update_summary_index(parquet_dir)
    return result
