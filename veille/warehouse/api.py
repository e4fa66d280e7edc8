"""The warehouse for notebooks: read-only queries returning pandas DataFrames.

Same sandbox as ``veille sql`` (one read-only statement, file access limited to the Parquet
directory, the query timeout), over the same views::

    from veille.warehouse import api
    api.runs("warehouse/data")                # one row per flow run (its last attempt)
    api.trends("warehouse/data", corpus="corpus")
    api.cost_by_role("warehouse/data")
    api.query("SELECT role, sum(cost_usd) FROM llm_calls GROUP BY role", warehouse_dir="warehouse/data")

``warehouse_dir`` is the folder given to ``--warehouse`` (default: the settings' warehouse_dir).
Timestamps are timezone-aware (UTC); map columns (``models``, ``final_scores``) are lists of
(key, value) pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veille.warehouse.queries import query_arrow, read_sql

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["cost_by_role", "query", "runs", "trends"]


def _settings(warehouse_dir: Path | str | None) -> tuple[Path, float]:
    from veille.settings import Settings

    settings = Settings() if warehouse_dir is None else Settings(warehouse_dir=Path(warehouse_dir))
    return settings.parquet_dir, settings.query_timeout_s


def query(
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    warehouse_dir: Path | str | None = None,
    timeout_s: float | None = None,
) -> pd.DataFrame:
    """One read-only SQL statement over the warehouse views, as a DataFrame (``?`` or ``$name`` params).

    ``timeout_s``: default the setting ``query_timeout_s`` (60 s). Raises
    :class:`~veille.warehouse.ReadOnlyQueryError` for anything but a read, and
    :class:`~veille.warehouse.QueryTimeoutError` past the timeout.
    """
    parquet_dir, default_timeout = _settings(warehouse_dir)
    table = query_arrow(parquet_dir, sql, params, timeout_s=timeout_s or default_timeout)
    return table.to_pandas()


def runs(
    warehouse_dir: Path | str | None = None, *, attempts: bool = False, limit: int | None = None
) -> pd.DataFrame:
    """Runs, most recent first: one row per flow run (its last attempt), or every attempt."""
    view = "run_attempts" if attempts else "runs"
    sql = f"SELECT * EXCLUDE (settings_json) FROM {view} ORDER BY started_at DESC NULLS LAST, run_id DESC"
    if limit is not None:
        return query(f"{sql} LIMIT ?", [int(limit)], warehouse_dir=warehouse_dir)
    return query(sql, warehouse_dir=warehouse_dir)


def trends(
    warehouse_dir: Path | str | None = None,
    *,
    corpus: str | None = None,
    since: date | None = None,
) -> pd.DataFrame:
    """``run_trends`` (one row per flow run: cost, tokens, scores, alerts), oldest first.

    ``corpus``: only the runs of that corpus folder (as recorded in ``corpus_dir``); ``since``:
    runs started on or after that date (UTC).
    """
    return query(
        read_sql("api_trends"),
        {"corpus": corpus, "since": since or date(1970, 1, 1)},
        warehouse_dir=warehouse_dir,
    )


def cost_by_role(warehouse_dir: Path | str | None = None, *, since: date | None = None) -> pd.DataFrame:
    """The ``cost_by_role`` view (per night, corpus and role: calls, attempts, tokens, cost), oldest first."""
    return query(
        "SELECT * FROM cost_by_role WHERE run_date >= $since ORDER BY run_date, cost_usd DESC, role",
        {"since": since or date(1970, 1, 1)},
        warehouse_dir=warehouse_dir,
    )
