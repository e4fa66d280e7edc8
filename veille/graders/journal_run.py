"""`veille grade`'s judge calls recorded in the warehouse like a run's.

A grade run with judge graders is a run folder ``<runs_dir>/<run id>/`` holding the call journal
(calls.jsonl, one record per attempt) and a run.json (``request_title`` names the input file), recorded
by :func:`veille.warehouse.record_run_dir`: its calls appear in ``llm_calls``, its cost and tokens in
``runs``, ``run_trends`` and ``cost_by_role`` like a night's.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["write_run_json"]


def write_run_json(run_dir: Path, run_id: str, started_at: datetime, *, status: str, **facts: Any) -> Path:
    """The run's facts (atomic write), the shape the warehouse's ``runs`` row reads."""
    run = {
        "run_id": run_id,
        "status": status,
        "started_at": started_at.astimezone(UTC).isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        **facts,
    }
    path = run_dir / "run.json"
    temp = run_dir / ".run.json.tmp"
    temp.write_text(json.dumps(run, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    os.replace(temp, path)
    return path
