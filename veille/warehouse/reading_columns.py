"""Schema version 9 (issue 37 item 4): what the analysts could not read, in the Parquet tables.

``plans.relevant_not_read``: documents with a relevant passage that no branch reads (plan.json
``reading.unplaced``: every sub-task full). ``subtasks.reading_budget``: the analyst's reading budget
in tokens (plan.json ``reading.budget``); ``subtasks.docs_read_in_part``: its documents read in part
or not at all within that budget (findings.json ``read``, else plan.json's forecast
``reading.not_read``). Old files get NULL (not recorded then), columns placed after ``plan_json``
and ``figures``. Registered on import of the package (veille/warehouse/__init__.py), after the
migrations of veille.warehouse.schema.
"""

from __future__ import annotations

import pyarrow as pa

from veille.warehouse.schema import Migration, register_migration

__all__ = ["add_reading_columns"]

_ADDED: dict[str, list[tuple[str, str, pa.DataType]]] = {
    "plans": [("relevant_not_read", "plan_json", pa.list_(pa.string()))],
    "subtasks": [
        ("reading_budget", "figures", pa.int32()),
        ("docs_read_in_part", "reading_budget", pa.list_(pa.string())),
    ],
}


def add_reading_columns(name: str, table: pa.Table) -> pa.Table:
    """Version 9: the reading columns, NULL in a table of version 8."""
    for column, after, type_ in _ADDED.get(name, []):
        if column not in table.column_names:
            at = table.column_names.index(after) + 1 if after in table.column_names else table.num_columns
            table = table.add_column(at, pa.field(column, type_), pa.nulls(table.num_rows, type_))
    return table


register_migration(
    Migration(
        9,
        "plans.relevant_not_read, subtasks.reading_budget and docs_read_in_part: what the analysts "
        "could not read (issue 37)",
        add_reading_columns,
    )
)
