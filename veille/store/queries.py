"""The SQL of the corpus database: one ``.sql`` file per statement in ``veille/store/sql/`` (package
data), with named parameters (``$name``) bound by the caller."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import resources

__all__ = ["read_sql", "utcnow"]


def read_sql(name: str) -> str:
    """The text of ``veille/store/sql/<name>`` (``name`` includes the ``.sql`` suffix)."""
    return resources.files("veille.store").joinpath("sql", name).read_text(encoding="utf-8")


def utcnow() -> datetime:
    """Now in UTC without time zone: what the TIMESTAMP columns store."""
    return datetime.now(UTC).replace(tzinfo=None)
