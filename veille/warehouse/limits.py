"""Resource bounds of an interactive warehouse query (`veille sql`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

__all__ = ["Limits", "fetch_limited"]


@dataclass(frozen=True)
class Limits:
    """Memory and threads of one DuckDB connection (settings ``query_memory_limit``,
    ``query_threads``), and its spill directory (default ``<warehouse>/scratch/duckdb``, never the
    working directory: DuckDB allows reading its temp directory)."""

    memory_limit: str = "1GB"
    threads: int = 2
    scratch_dir: Path | None = None


def fetch_limited(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | Mapping[str, Any] | None, limit: int
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(columns, at most ``limit`` rows): the limit is part of the plan, so DuckDB stops producing
    rows there instead of materialising the whole result (``range(10000000)``: 200 rows, not 10⁷)."""
    relation = con.sql(sql, params=params)
    if relation is None:
        return [], []
    return list(relation.columns), relation.limit(limit).fetchall()
