"""Bibliographic metadata of documents (id, date, source type, title, url) for the Sources section.

The catalogue carries no url, so the report reads it here, with its own read-only connection
(never shared across threads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import duckdb

from veille.dblock import retry_on_lock

__all__ = ["SourceMeta", "source_metadata"]


@dataclass(frozen=True)
class SourceMeta:
    id: str
    date: str
    source_type: str
    title: str
    url: str | None = None


def source_metadata(db_path: Path, ids: Sequence[str]) -> dict[str, SourceMeta]:
    """Metadata of the valid documents among ``ids`` (unknown ids are simply absent)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    if not Path(db_path).is_file():
        raise FileNotFoundError(
            f"no corpus database at {db_path}: run `veille ingest` (or `veille run`) first"
        )
    sql = resources.files("veille").joinpath("sql", "source_metadata.sql").read_text(encoding="utf-8")
    con = retry_on_lock(lambda: duckdb.connect(str(db_path), read_only=True), db_path)  # see veille.dblock
    try:
        rows = con.execute(sql, {"ids": wanted}).fetchall()
    finally:
        con.close()
    return {str(r[0]): SourceMeta(str(r[0]), str(r[1]), str(r[2]), str(r[3]), r[4] or None) for r in rows}
