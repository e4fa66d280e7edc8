"""The ``runs`` row of a run folder: the run's facts (run.json, else what the run left) and totals.

A run that died before writing run.json (recovered by the next run, veille/run/recovery.py)
still has a start time (its run id is its UTC start), and usually a flow run id: from
``start.json`` (written when the run starts) or from its call journal.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from veille.gradestatus import grade_status
from veille.warehouse.errors import WarehouseError
from veille.warehouse.folderio import as_int, parse_ts, read_json
from veille.warehouse.schema import SAFE_NAME_RE, SCHEMA_VERSION
from veille.warehouse.summary import alert_counts, call_totals, revision_gain

__all__ = ["START_FILE", "as_grades", "read_run_facts", "run_date_of", "run_id_of", "run_times", "runs_row"]

START_FILE = "start.json"  # run id, flow run id, attempt, start time: written when the run starts
_RUN_ID_RE = re.compile(r"^(?P<stamp>(?P<date>\d{8})T\d{6}Z)-[0-9a-f]{6}$")

Row = dict[str, Any]


def run_date_of(run_id: str, started_at: datetime | None = None) -> date:
    """The Hive partition date of a run: its UTC start date (from run.json, else from the run id)."""
    if started_at is not None:
        return started_at.astimezone(UTC).date()
    match = _RUN_ID_RE.match(run_id)
    if not match:
        raise WarehouseError(
            f"run id {run_id!r}: cannot tell the run date (expected YYYYMMDDTHHMMSSZ-xxxxxx or a "
            "started_at in run.json)"
        )
    return datetime.strptime(match["date"], "%Y%m%d").date()


def _started_from_run_id(run_id: str) -> datetime | None:
    match = _RUN_ID_RE.match(run_id)
    return datetime.strptime(match["stamp"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC) if match else None


def read_run_facts(run_dir: Path, missing: list[str]) -> dict[str, Any]:
    """run.json; the fields it lacks (all of them when the run died) from start.json."""
    run = read_json(run_dir / "run.json", missing, dict) or {}
    started = read_json(run_dir / START_FILE, [], dict) or {}  # optional: older runs have none
    return {**started, **{k: v for k, v in run.items() if v is not None}}


def run_id_of(run_dir: Path, run: dict[str, Any]) -> str:
    """The run id (the folder's name, which run.json must agree with)."""
    run_id = str(run.get("run_id") or run_dir.name)
    if run_id != run_dir.name:
        raise WarehouseError(
            f"{run_dir / 'run.json'}: run_id {run_id!r} does not match folder {run_dir.name!r}"
        )
    if not SAFE_NAME_RE.match(run_id):
        raise WarehouseError(f"{run_dir}: run id {run_id!r} is not a safe file name")
    return run_id


def run_times(run_dir: Path, run: dict[str, Any], run_id: str) -> tuple[datetime | None, datetime | None]:
    """(started_at, finished_at) in UTC; a run that died has its start from its run id."""
    where = run_dir / "run.json"
    started = parse_ts(run.get("started_at"), f"{where}: started_at") or _started_from_run_id(run_id)
    return started, parse_ts(run.get("finished_at"), f"{where}: finished_at")


def as_grades(rows: list[Row]) -> list[Row]:
    """grader_scores rows as grades.json entries (details parsed), for veille.gradestatus."""
    return [{**g, "details": json.loads(g["details_json"])} for g in rows]


def _flow_run_id(run: dict[str, Any], calls: list[Row]) -> str | None:
    if run.get("flow_run_id"):
        return str(run["flow_run_id"])
    # A run that died before run.json: its journal's records carry the flow run id.
    return next((str(c["flow_run_id"]) for c in calls if c.get("flow_run_id")), None)


def runs_row(
    run: dict[str, Any],
    run_id: str,
    times: tuple[datetime | None, datetime | None],
    rows: dict[str, list[Row]],
    missing: list[str],
) -> Row:
    """The run's summary row, except ``recorded_at`` (the caller stamps it)."""
    started_at, finished_at = times
    grades, reports = rows["grader_scores"], rows["reports"]
    raw_models = run.get("models")
    models: dict[str, Any] = raw_models if isinstance(raw_models, dict) else {}
    reviewed = len(rows["review_rounds"])
    return {
        "run_id": run_id,
        "flow_run_id": _flow_run_id(run, rows["llm_calls"]),
        "flow_run_attempt": as_int(run.get("attempt")),  # run.json's name (Prefect's run count)
        "deployment": run.get("deployment"),
        "status": str(run.get("status") or ("completed" if finished_at else "failed")),
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": (finished_at - started_at).total_seconds() if started_at and finished_at else None,
        "corpus_dir": run.get("corpus_dir"),
        "request_title": run.get("request_title"),
        "backend": run.get("backend"),
        "models": [(str(k), str(v)) for k, v in models.items()],
        "validated": run.get("validated"),
        "rounds": as_int(run.get("rounds")) if run.get("rounds") is not None else reviewed or None,
        "subtasks_total": as_int(run.get("subtasks_total")),
        "subtasks_failed": as_int(run.get("subtasks_failed")),
        **call_totals(rows["llm_calls"]),
        **alert_counts(rows["alerts"]),
        "final_scores": [
            (g["grader"], g["score"]) for g in grades if g["target"] == "final" and g["score"] is not None
        ],
        "revision_gain": revision_gain(grades),
        "grade_status": grade_status(as_grades(grades), rows["alerts"]),
        "reused_from": run.get("reused_from"),  # v11: an unchanged night's kept dossier (nightskip)
        "report_words": reports[0]["words"] if reports else None,
        "missing_files": sorted(missing),
        "settings_json": json.dumps(
            run.get("settings") or {}, ensure_ascii=False, sort_keys=True, default=str
        ),
        "schema_version": SCHEMA_VERSION,
    }
