"""The data dictionary, generated from the table schemas: the ``dictionary`` view.

One row per column of every table (:data:`~veille.warehouse.schema.TABLES`): its table, position,
Arrow type, nullability, the schema version and, for a column a migration renamed, the name older
files still carry (``formerly``: they read under the new name everywhere); the meaning of each column is in docs/warehouse.md,
whose column lists a test keeps equal to these schemas. ``veille sql "SELECT * FROM dictionary"``
answers "what columns exist and of what type" from the installed code, not from a copy.
"""

from __future__ import annotations

import pyarrow as pa

from veille.arrowrows import table_from_rows
from veille.warehouse.schema import SCHEMA_VERSION, TABLES, renamed_columns

__all__ = ["DICTIONARY_VIEW", "dictionary_table"]

DICTIONARY_VIEW = "dictionary"

_SCHEMA = pa.schema(
    [
        pa.field("table_name", pa.string(), nullable=False),
        pa.field("position", pa.int32(), nullable=False),
        pa.field("column_name", pa.string(), nullable=False),
        pa.field("data_type", pa.string(), nullable=False),
        pa.field("nullable", pa.bool_(), nullable=False),
        pa.field("schema_version", pa.int32(), nullable=False),
        pa.field("formerly", pa.string(), nullable=True),
        pa.field("documented_in", pa.string(), nullable=False),
    ]
)


def dictionary_table() -> pa.Table:
    """Every column of every warehouse table (plus the ``run_date`` partition column of each view)."""
    formerly = {name: {new: old for old, new in renamed_columns(name).items()} for name in TABLES}
    rows = [
        {
            "table_name": name,
            "position": position,
            "column_name": field.name,
            "data_type": str(field.type),
            "nullable": field.nullable,
            "schema_version": SCHEMA_VERSION,
            "formerly": formerly[name].get(field.name),
            "documented_in": f"docs/warehouse.md, table `{name}`",
        }
        for name, schema in TABLES.items()
        for position, field in enumerate(
            [*schema, pa.field("run_date", pa.date32(), nullable=False)], start=1
        )
    ]
    return table_from_rows(rows, _SCHEMA)
