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
from veille.warehouse.migrations import add_column_after
from veille.warehouse.schema import Migration, register_migration

__all__ = ["add_carried_over"]


# A table of the previous version always has ``details_json``; the column goes right after it.
add_carried_over = add_column_after("grader_scores", "carried_over", pa.bool_(), "details_json")


register_migration(
    Migration(
        10,
        "grader_scores.carried_over: a score carried over from the night that graded an unchanged "
        "part of the report (issue 40)",
        add_carried_over,
    )
)
