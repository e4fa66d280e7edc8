"""The previous completed run of a corpus, read back from the warehouse (issue 13).

What the nightly comparison needs: its document snapshot (id -> content hash), its report's
Markdown and numbered sources, and its plan (plan.json as recorded). One read-only connection for
the four queries; no warehouse yet, or no completed run of this corpus: None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from veille.warehouse.errors import WarehouseError
from veille.warehouse.queries import connect, read_sql

__all__ = ["PreviousRun", "previous_run"]

_QUERIES = ("previous_run", "previous_documents", "previous_report", "previous_sources")


@dataclass(frozen=True)
class PreviousRun:
    run_id: str
    started_at: datetime
    documents: dict[str, str]  # doc id -> content hash
    markdown: str | None
    plan: dict[str, Any] | None  # plan.json of that run
    sources: list[tuple[int, str, str, str | None]] = field(default_factory=list)  # number, id, kind, title


def previous_run(parquet_dir: Path, corpus_dir: str, run_id: str) -> PreviousRun | None:
    """The last completed run of ``corpus_dir`` other than ``run_id``, or None; a warehouse that
    cannot be read raises :class:`WarehouseError`."""
    if not Path(parquet_dir).is_dir():
        return None  # nothing recorded yet
    try:
        return _read(Path(parquet_dir), corpus_dir, run_id)
    except (duckdb.Error, ValueError, TypeError) as exc:  # a damaged file: say which run, not a traceback
        raise WarehouseError(f"{parquet_dir}: cannot read the previous run of {corpus_dir}: {exc}") from exc


def _read(parquet_dir: Path, corpus_dir: str, run_id: str) -> PreviousRun | None:
    sql = {name: read_sql(name) for name in _QUERIES}
    con = connect(parquet_dir, queries=sql.values())
    try:
        row = con.execute(sql["previous_run"], {"corpus": corpus_dir, "run_id": run_id}).fetchone()
        if row is None:
            return None
        previous = {"run_id": str(row[0])}
        documents = {
            str(doc): str(content)
            for doc, content in con.execute(sql["previous_documents"], previous).fetchall()
        }
        report = con.execute(sql["previous_report"], previous).fetchone()
        sources = [
            (int(n), str(i), str(k), t)
            for n, i, k, t in con.execute(sql["previous_sources"], previous).fetchall()
        ]
    finally:
        con.close()
    markdown, plan_json = report if report is not None else (None, None)
    started = (
        row[1] if isinstance(row[1], datetime) else datetime.strptime(str(row[0])[:16], "%Y%m%dT%H%M%SZ")
    )
    return PreviousRun(
        run_id=str(row[0]),
        started_at=started,
        documents=documents,
        markdown=markdown,
        plan=json.loads(plan_json) if plan_json else None,
        sources=sources,
    )
