"""The warehouse's ordered schema migrations (split from :mod:`veille.warehouse.schema`, which
re-exports them): each :class:`Migration` turns a table of ``version - 1`` into ``version`` for
Python readers; docs/warehouse.md lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from veille.arrowrows import column as build_column
from veille.warehouse.errors import WarehouseError
from veille.warehouse.renames import rename_columns

__all__ = [
    "MIGRATIONS",
    "Migration",
    "add_column_after",
    "file_schema_version",
    "register_migration",
    "renamed_columns",
    "upgrade_table",
]


_STR_LIST = pa.list_(pa.string())


def _f(name: str, type_: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable)


# --------------------------------------------------------------------------- migrations


@dataclass(frozen=True)
class Migration:
    """One schema change. ``upgrade(table_name, table)`` turns a table of ``version - 1`` into ``version``.

    Views read partitions with ``union_by_name`` (columns added later are NULL in old files); a
    migration says what else an old partition needs (a renamed column, a new default) for Python
    readers, and docs/warehouse.md records it.
    """

    version: int
    description: str
    upgrade: Callable[[str, pa.Table], pa.Table] = field(default=lambda _name, table: table)
    renamed: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # table -> {old: new}


MIGRATIONS: list[Migration] = []


def register_migration(migration: Migration, registry: list[Migration] | None = None) -> None:
    """Append ``migration``; versions must follow each other (1, 2, 3...) with no gap or repeat."""
    target = MIGRATIONS if registry is None else registry
    expected = (target[-1].version + 1) if target else 1
    if migration.version != expected:
        raise WarehouseError(
            f"migration {migration.version} ({migration.description!r}) registered out of order: "
            f"expected version {expected}"
        )
    target.append(migration)


register_migration(
    Migration(
        1,
        "initial schema: runs, llm_calls, plans, subtasks, alerts, "
        "review_rounds, grader_scores, reports, documents",
    )
)


def _add_grade_status(name: str, table: pa.Table) -> pa.Table:
    # Runs recorded before version 2: their grading status was not recorded (NULL, not "none").
    if name != "runs" or "grade_status" in table.column_names:
        return table
    return table.append_column(pa.field("grade_status", pa.string()), pa.nulls(table.num_rows, pa.string()))


register_migration(Migration(2, "runs.grade_status: ok / partial / failed / none", _add_grade_status))


def _add_attempt(name: str, table: pa.Table) -> pa.Table:
    """Version 3: ``runs.attempt``. Old rows get NULL; the views number them by start time."""
    if name != "runs" or "attempt" in table.column_names:
        return table
    position = table.column_names.index("flow_run_id") + 1 if "flow_run_id" in table.column_names else 1
    return table.add_column(position, _f("attempt", pa.int32()), pa.nulls(table.num_rows, pa.int32()))


register_migration(
    Migration(
        3,
        "runs.attempt: the attempt of the flow run (a Retry is one flow run with two attempts)",
        _add_attempt,
    )
)


def _add_alert_subjects(name: str, table: pa.Table) -> pa.Table:
    """Version 4: ``alerts.subjects``. Old alerts named one subject at most: their list is that one."""
    if name != "alerts" or "subjects" in table.column_names:
        return table
    subjects = [[s] if s else [] for s in table.column("subject").to_pylist()]
    return table.append_column(_f("subjects", _STR_LIST), build_column(subjects, _STR_LIST))


register_migration(
    Migration(
        4, "alerts.subjects: every subject of a grouped alert (one alert, N documents)", _add_alert_subjects
    )
)


def _add_grounding(name: str, table: pa.Table) -> pa.Table:
    """Version 5: ``llm_calls.search_queries`` and ``grounding_cost_usd`` (NULL: not recorded then),
    placed after ``cost_usd``; the ``sources`` table is new (old runs simply have no partition)."""
    if name != "llm_calls":
        return table
    for column, type_ in (("grounding_cost_usd", pa.float64()), ("search_queries", pa.int32())):
        if column not in table.column_names:
            at = table.column_names.index("cost_usd") + 1 if "cost_usd" in table.column_names else 0
            table = table.add_column(at, _f(column, type_), pa.nulls(table.num_rows, type_))
    return table


register_migration(
    Migration(
        5,
        "llm_calls.search_queries and grounding_cost_usd (Google Search grounding); table sources "
        "(numbered sources, kind corpus | web)",
        _add_grounding,
    )
)


def add_column_after(
    of: str, column: str, type_: pa.DataType, after: str
) -> Callable[[str, pa.Table], pa.Table]:
    """An upgrade adding ``column`` (NULL: not recorded then) to table ``of``, placed after ``after``."""

    def upgrade(name: str, table: pa.Table) -> pa.Table:
        if name != of or column in table.column_names:
            return table
        at = table.column_names.index(after) + 1 if after in table.column_names else 0
        return table.add_column(at, _f(column, type_), pa.nulls(table.num_rows, type_))

    return upgrade


# Version 6: llm_calls.http_requests after cache_hit; version 8: sources.date_origin after date.
_add_http_requests = add_column_after("llm_calls", "http_requests", pa.int32(), "cache_hit")


register_migration(
    Migration(
        6,
        "llm_calls.http_requests: HTTP requests each attempt sent (429s, 5xx and client time-outs included)",
        _add_http_requests,
    )
)


# Version 7: `attempt` meant a request within a model call (llm_calls) and a Prefect retry of the
# night (runs); `runs.attempts` counted the former. Each meaning gets its own name.
_V7_RENAMED = {
    "llm_calls": {"attempt": "call_attempt"},
    "runs": {"attempt": "flow_run_attempt", "attempts": "call_attempts"},
}
register_migration(
    Migration(
        7,
        "llm_calls.attempt -> call_attempt; runs.attempt -> flow_run_attempt, runs.attempts -> call_attempts",
        lambda name, table: rename_columns(table, _V7_RENAMED.get(name, {})),
        renamed=_V7_RENAMED,
    )
)


def renamed_columns(name: str) -> dict[str, str]:
    """Old name -> current name of every column of table ``name`` a migration renamed."""
    return {old: new for m in MIGRATIONS for old, new in m.renamed.get(name, {}).items()}


def file_schema_version(path: Path) -> int:
    """The schema version stored in a Parquet file's metadata (1 when absent)."""
    metadata = pq.read_schema(path).metadata or {}
    return int(metadata.get(b"veille.schema_version", b"1"))


def upgrade_table(
    name: str, table: pa.Table, from_version: int, migrations: Sequence[Migration] | None = None
) -> pa.Table:
    """Apply, in order, every migration after ``from_version`` to one table read from an old file."""
    for migration in migrations if migrations is not None else MIGRATIONS:
        if migration.version > from_version:
            table = migration.upgrade(name, table)
    return table


register_migration(
    Migration(
        8,
        "sources.date_origin: where a corpus document's date came from (front_matter, format_metadata, "
        "file_name, text, file_clock, unknown)",
        add_column_after("sources", "date_origin", pa.string(), "date"),
    )
)
