"""Schema version 11 (issue 40 item 4): ``runs.reused_from``.

A night whose inputs all equal the last completed night's reuses that night's dossier instead of
running its steps (veille.run.nightskip): run.json's ``reused_from`` names the night whose steps
produced the dossier, recorded here so a trend can tell a night that ran its steps (NULL) from one
that reused a dossier (zero calls, its grades carried over). Old files get NULL (not recorded then),
the column placed after ``grade_status``. Registered on import of the package
(veille/warehouse/__init__.py), after version 10.
"""

from __future__ import annotations

import pyarrow as pa

from veille.warehouse import grade_columns  # noqa: F401  # version 10 registered first
from veille.warehouse.migrations import add_column_after
from veille.warehouse.schema import Migration, register_migration

__all__ = ["add_reused_from"]


# A table of the previous version always has ``grade_status``; the column goes right after it.
add_reused_from = add_column_after("runs", "reused_from", pa.string(), "grade_status")


register_migration(
    Migration(
        11,
        "runs.reused_from: the night whose dossier an unchanged night reused instead of running its "
        "steps (issue 40)",
        add_reused_from,
    )
)
