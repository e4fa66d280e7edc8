"""Schema version 10 (issue 40 item 3): ``grader_scores.carried_over``.

On a night after a validated dossier the judge grades only the parts of the report that changed;
a part unchanged since a graded night keeps that night's score (veille.graders.parts), recorded
with ``carried_over`` true so a trend can tell a score the judge gave tonight from one carried
over. Old files get NULL (not recorded then), the column placed after ``details_json``. Registered
on import of the package (veille/warehouse/__init__.py), after version 9.
"""

from __future__ import annotations

import pyarrow as pa

from veille.warehouse import reading_columns  # noqa: F401  # version 9 registered first
from veille.warehouse.schema import Migration, register_migration

__all__ = ["add_carried_over"]


def add_carried_over(name: str, table: pa.Table) -> pa.Table:
    """Version 10: ``grader_scores.carried_over``, NULL in a table of version 9."""
    if name != "grader_scores" or "carried_over" in table.column_names:
        return table
    names = table.column_names
    at = names.index("details_json") + 1 if "details_json" in names else table.num_columns
    return table.add_column(at, pa.field("carried_over", pa.bool_()), pa.nulls(table.num_rows, pa.bool_()))


register_migration(
    Migration(
        10,
        "grader_scores.carried_over: a score carried over from the night that graded an unchanged "
        "part of the report (issue 40)",
        add_carried_over,
    )
)
