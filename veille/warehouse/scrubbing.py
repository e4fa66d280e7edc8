"""The Parquet side of veille.secrets.scrub_text: every string cell of a table about to be written.

Cheap when nothing matches (the usual case): one vectorised substring test per secret and string
column; only a column that holds a secret is rebuilt, cell by cell.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from veille.arrowrows import column as build
from veille.secrets import configured_secrets, scrub_text

__all__ = ["scrub_table"]


def _holds_secret(column: pa.ChunkedArray, secrets: tuple[str, ...]) -> bool:
    return any(pc.any(pc.match_substring(column, s)).as_py() for s in secrets)


def scrub_table(table: pa.Table) -> pa.Table:
    """``table`` with every configured secret masked in its string columns (lists of strings too)."""
    secrets = configured_secrets()
    if not secrets:
        return table
    for i, field in enumerate(table.schema):
        column = table.column(i)
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            if not _holds_secret(column, secrets):
                continue
            cleaned = build([None if v is None else scrub_text(v) for v in column.to_pylist()], field.type)
        elif pa.types.is_list(field.type) and pa.types.is_string(field.type.value_type):
            flat = pc.list_flatten(column)
            if len(flat) == 0 or not _holds_secret(pa.chunked_array([flat]), secrets):
                continue
            rows = column.to_pylist()
            cleaned = build(
                [None if r is None else [None if v is None else scrub_text(v) for v in r] for r in rows],
                field.type,
            )
        else:
            continue
        table = table.set_column(i, field, cleaned)
    return table
