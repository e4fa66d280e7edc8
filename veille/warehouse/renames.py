"""Columns a migration renamed: old files read under the new names, by pyarrow and by the views.

A renamed column keeps its type and meaning; only its name was ambiguous. Old Parquet files keep the
old name until `veille warehouse upgrade` rewrites them, so every reader maps it: pyarrow tables
through :func:`rename_columns` (the migration's upgrade, the summary index), the DuckDB views
through :func:`renaming_select`. A table holding both names (rows of old and new files concatenated)
keeps the new one, filled from the old where it is NULL.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["rename_columns", "renaming_select"]


def rename_columns(table: pa.Table, renamed: Mapping[str, str]) -> pa.Table:
    """``table`` with every ``old`` column of ``renamed`` (old -> new) under its new name, in place."""
    for old, new in renamed.items():
        if old not in table.column_names:
            continue
        at = table.column_names.index(old)
        values = table.column(old)
        if new in table.column_names:  # both: the new name wins where it has a value
            values = pc.coalesce(table.column(new), values.cast(table.schema.field(new).type))
            table = table.drop_columns([new])
            at = table.column_names.index(old)
        field = pa.field(new, values.type, nullable=table.schema.field(old).nullable)
        table = table.set_column(at, field, values)
    return table


def renaming_select(source: str, renamed: Mapping[str, str]) -> str:
    """``SELECT`` over ``source`` (a query whose columns include every old and new name, e.g. behind
    a typed empty table) that drops each old name and fills the new one from it."""
    if not renamed:
        return source
    exclude = ", ".join(f'"{old}"' for old in renamed)
    replace = ", ".join(f'coalesce("{new}", "{old}") AS "{new}"' for old, new in renamed.items())
    return f"SELECT * EXCLUDE ({exclude}) REPLACE ({replace}) FROM ({source})"
