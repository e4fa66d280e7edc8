"""SQL that puts a table's current schema in front of its files, for the views of ``queries``.

Old files miss the columns migrations added since, and carry the old names of renamed ones. A view
reads ``<zero rows of the current schema> UNION ALL BY NAME <the files>`` so that every current
column binds (NULL in old files), then maps each renamed column's old name onto the new one
(:func:`veille.warehouse.renames.renaming_select`), so no view shows an old name.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from veille.arrowrows import empty_table
from veille.warehouse.renames import renaming_select
from veille.warehouse.schema import TABLES, renamed_columns

__all__ = ["create_empty_view", "current_schema_select"]


def _typed_nulls(con: duckdb.DuckDBPyConnection, table: str, legacy: dict[str, str]) -> str:
    """``SELECT CAST(NULL AS <type>) AS <column>, … WHERE false``: zero rows of ``table``'s current
    schema (and ``run_date``), plus each renamed column's old name typed as the new one, as SQL, so
    no helper relation is left in the connection."""
    empty = empty_table(TABLES[table]).append_column("run_date", pa.nulls(0, pa.date32()))
    relation = con.from_arrow(empty)
    types = dict(zip(relation.columns, relation.types, strict=True))
    columns = [f'CAST(NULL AS {type_}) AS "{name}"' for name, type_ in types.items()]
    columns += [f'CAST(NULL AS {types[new]}) AS "{old}"' for old, new in legacy.items()]
    return f"SELECT {', '.join(columns)} WHERE false"


def current_schema_select(con: duckdb.DuckDBPyConnection, table: str, files: str) -> str:
    """``files`` (a SELECT over the table's Parquet files) read with ``table``'s current schema."""
    legacy = renamed_columns(table)
    return renaming_select(f"{_typed_nulls(con, table, legacy)} UNION ALL BY NAME {files}", legacy)


def create_empty_view(con: duckdb.DuckDBPyConnection, table: str, *, name: str | None = None) -> None:
    """A zero-row relation with the exact schema (plus the partition column), so views bind."""
    view = name or table
    empty = empty_table(TABLES[table]).append_column("run_date", pa.nulls(0, pa.date32()))
    con.register(f"_empty_{view}", empty)
    con.execute(f'CREATE VIEW "{view}" AS SELECT * FROM "_empty_{view}"')
