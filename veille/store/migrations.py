"""The corpus database's schema: ONE ordered registry of migrations, applied in order.

Each migration is a SQL file ``veille/store/sql/migration_NNN_<what>.sql`` registered below with
:func:`register` (the version comes from the file name and must follow the previous one). A
migration is applied once, in its own transaction, and recorded in ``schema_migrations``. Never
edit an applied migration: register the next one.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import duckdb

from veille.store.queries import read_sql, utcnow

__all__ = ["MIGRATIONS", "Migration", "latest_version", "migrate", "register", "schema_version"]

_NAME = re.compile(r"migration_(\d{3})_[a-z0-9_]+\.sql")


class Migration(NamedTuple):
    version: int
    name: str  # the SQL file, recorded as is in schema_migrations


MIGRATIONS: list[Migration] = []


def register(name: str) -> Migration:
    """Append the migration in file ``name``; its version must be the next one (1, 2, 3...)."""
    match = _NAME.fullmatch(name)
    if match is None:
        raise ValueError(f"migration file {name!r}: expected a name like migration_003_what.sql")
    version, expected = int(match.group(1)), len(MIGRATIONS) + 1
    if version != expected:
        raise ValueError(f"migration {name!r} registered out of order: expected version {expected}")
    migration = Migration(version, name)
    MIGRATIONS.append(migration)
    return migration


register("migration_001_corpus_schema.sql")
register("migration_002_catalogue_view.sql")
register("migration_003_formats_origins_sections.sql")
register("migration_004_unknown_dates.sql")
register("migration_005_bad_input.sql")
register("migration_006_section_digests.sql")


def latest_version() -> int:
    """The schema version this code needs (the last registered migration)."""
    return MIGRATIONS[-1].version


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply pending migrations on a read-write connection; returns the versions applied now."""
    con.execute(read_sql("schema_migrations.sql"))
    applied = {row[0] for row in con.execute(read_sql("applied_migrations.sql")).fetchall()}
    done: list[int] = []
    for version, name in MIGRATIONS:
        if version in applied:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(read_sql(name))
            con.execute(
                read_sql("record_migration.sql"), {"version": version, "name": name, "applied_at": utcnow()}
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        done.append(version)
    return done


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The latest migration applied to the database (0 when none)."""
    try:
        row = con.execute(read_sql("schema_version.sql")).fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row and row[0] is not None else 0
