"""Rows from a run folder: one small reader per warehouse table, and :func:`build_tables` over them.

The run folder is the contract of docs/warehouse.md. Reading is pure (nothing is written) and
tolerant of a failed run: a missing file gives an empty table and is listed in
``runs.missing_files``; a malformed file raises :class:`WarehouseError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from veille.alerts import Alert
from veille.gradestatus import GRADE_FAILED, failure_alerts, grade_status
from veille.journal import CallRecord
from veille.warehouse.errors import WarehouseError
from veille.warehouse.schema import SAFE_NAME_RE, SCHEMA_VERSION, TABLES
from veille.warehouse.summary import alert_counts, call_totals, revision_gain

__all__ = ["build_tables", "iter_run_dirs", "run_date_of"]

_RUN_ID_RE = re.compile(r"^(?P<date>\d{8})T\d{6}Z-[0-9a-f]{6}$")

Row = dict[str, Any]


def _read_json(path: Path, missing: list[str], expected: type) -> Any:
    if not path.exists():
        missing.append(path.name)
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WarehouseError(f"{path}: not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(value, expected):
        raise WarehouseError(f"{path}: expected a JSON {expected.__name__}, got {type(value).__name__}")
    return value


def _ts(value: Any, where: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise WarehouseError(f"{where}: {value!r} is not an ISO 8601 timestamp") from exc
    # Naive timestamps in the run folder are UTC by contract.
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


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


def _as_str_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count_words(text: str) -> int:
    return len(re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", text))


def _run_id(run_dir: Path, run: dict[str, Any]) -> str:
    run_id = str(run.get("run_id") or run_dir.name)
    if run_id != run_dir.name:
        raise WarehouseError(
            f"{run_dir / 'run.json'}: run_id {run_id!r} does not match folder {run_dir.name!r}"
        )
    if not SAFE_NAME_RE.match(run_id):
        raise WarehouseError(f"{run_dir}: run id {run_id!r} is not a safe file name")
    return run_id


# --------------------------------------------------------------------------- one reader per table


def _call_rows(run_dir: Path, run_id: str, missing: list[str]) -> tuple[list[Row], list[Row]]:
    """``llm_calls`` rows, and a ``record.bad_journal_line`` alert per line that does not parse."""
    calls: list[Row] = []
    bad_lines: list[Row] = []
    journal = run_dir / "calls.jsonl"
    if not journal.exists():
        missing.append(journal.name)
        return calls, bad_lines
    for lineno, line in enumerate(journal.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = CallRecord.model_validate_json(line)
        except ValueError as exc:  # a crash mid-append: skip the line, say so
            bad_lines.append(
                Alert(
                    code="record.bad_journal_line",
                    severity="warning",
                    stage="record",
                    message=f"calls.jsonl line {lineno} skipped: {str(exc).splitlines()[0]}",
                    subject=f"calls.jsonl:{lineno}",
                ).model_dump()
            )
            continue
        row = record.model_dump()
        row["run_id"] = run_id  # the folder is the truth; a journal copied elsewhere stays attached
        row["seq"] = len(calls) + 1
        row["started_at"] = _ts(row["started_at"], f"{journal}:{lineno}: started_at")
        calls.append(row)
    return calls, bad_lines


def _plan_rows(run_dir: Path, run_id: str, missing: list[str]) -> tuple[list[Row], list[Row]]:
    """The ``plans`` row (when plan.json exists) and one ``subtasks`` row per planned or run sub-task."""
    plan = _read_json(run_dir / "plan.json", missing, dict)
    findings = _read_json(run_dir / "findings.json", missing, dict) or {}
    plans: list[Row] = []
    planned: dict[str, dict[str, Any]] = {}
    if plan is not None:
        for raw_sub in plan.get("sub_tasks") or []:
            if isinstance(raw_sub, dict) and raw_sub.get("id"):
                planned[str(raw_sub["id"])] = raw_sub
        planned_docs = {d for p in planned.values() for d in _as_str_list(p.get("doc_ids"))}
        plans.append(
            {
                "run_id": run_id,
                "subtasks": len(planned),
                "documents": len(planned_docs),
                "excluded": _as_str_list(plan.get("excluded")),
                "plan_json": json.dumps(plan, ensure_ascii=False, sort_keys=True),
            }
        )
    subtasks = [
        _subtask_row(run_id, sub_id, planned.get(sub_id, {}), findings.get(sub_id))
        for sub_id in list(planned) + [k for k in findings if k not in planned]
    ]
    return plans, subtasks


def _subtask_row(run_id: str, sub_id: str, sub: dict[str, Any], raw_found: Any) -> Row:
    found: dict[str, Any] = raw_found if isinstance(raw_found, dict) else {}
    items = found.get("findings") or []
    return {
        "run_id": run_id,
        "subtask_id": sub_id,
        "question": sub.get("question") or found.get("question"),
        "doc_ids": _as_str_list(sub.get("doc_ids")),
        "status": found.get("status") if found else "not_run",
        "error": found.get("error"),
        "findings": len(items),
        "contradictions": len(found.get("contradictions") or []),
        "open_questions": len(found.get("open_questions") or []),
        "figures": sum(len(i.get("figures") or []) for i in items if isinstance(i, dict)),
    }


def _alert_rows(run_dir: Path, run_id: str, missing: list[str], extra: list[Row]) -> list[Row]:
    """alerts.json, then the alerts the recording itself raised (``extra``), numbered from 1."""
    rows: list[Row] = []
    raw_alerts = _read_json(run_dir / "alerts.json", missing, list) or []
    for index, raw in enumerate([*raw_alerts, *extra], start=1):
        try:
            alert = Alert.model_validate(raw)
        except ValueError as exc:
            raise WarehouseError(
                f"{run_dir / 'alerts.json'}: alert #{index} is not an Alert ({exc})"
            ) from exc
        rows.append({"run_id": run_id, "seq": index, **alert.model_dump()})
    return rows


def _review_rows(run_dir: Path, run_id: str, missing: list[str]) -> list[Row]:
    review = _read_json(run_dir / "review.json", missing, dict) or {}
    rounds: list[Row] = []
    for position, raw_round in enumerate(review.get("rounds") or [], start=1):
        if not isinstance(raw_round, dict):
            raise WarehouseError(f"{run_dir / 'review.json'}: round #{position} is not an object")
        scores: dict[str, Any] = raw_round.get("scores") or {}
        rounds.append(
            {
                "run_id": run_id,
                "round": _int(raw_round.get("round")) or position,
                "mean": float(raw_round["mean"]) if raw_round.get("mean") is not None else None,
                "valid": raw_round.get("valid"),
                "scores": [(str(k), int(v)) for k, v in scores.items()],
                "instructions": _as_str_list(raw_round.get("instructions")),
                "word_count": _int(raw_round.get("word_count")),
                "draft": raw_round.get("draft"),
            }
        )
    return rounds


def _grade_rows(run_dir: Path, run_id: str) -> list[Row]:
    grades_path = run_dir / "grades.json"
    raw_grades = _read_json(grades_path, [], list) or []  # optional: no reference, no grades
    rows: list[Row] = []
    for index, raw in enumerate(raw_grades, start=1):
        if not isinstance(raw, dict) or not raw.get("grader"):
            raise WarehouseError(f"{grades_path}: entry #{index} needs at least 'grader'")
        score = raw.get("score")
        rows.append(
            {
                "run_id": run_id,
                "target": str(raw.get("target") or "final"),
                "grader": str(raw["grader"]),
                "version": str(raw.get("version") or ""),
                "score": float(score) if score is not None else None,
                "model": raw.get("model"),
                "details_json": json.dumps(raw.get("details") or {}, ensure_ascii=False, sort_keys=True),
            }
        )
    return rows


def _as_grades(rows: list[Row]) -> list[Row]:
    """grader_scores rows as grades.json entries (details parsed), for veille.gradestatus."""
    return [{**g, "details": json.loads(g["details_json"])} for g in rows]


def _grade_failure_alerts(run_id: str, grades: list[Row], alerts: list[Row]) -> None:
    """Append a ``grade.failed`` alert for each grader of the final report that gave no score,
    unless alerts.json has it already (the flow writes them since schema version 2)."""
    alerted = {a["subject"] for a in alerts if a["code"] == GRADE_FAILED}
    for alert in failure_alerts(_as_grades(grades)):
        if alert.subject not in alerted:
            alerts.append({"run_id": run_id, "seq": len(alerts) + 1, **alert.model_dump()})


@dataclass(frozen=True)
class _Numbered:
    number: int


def _report_row(run_id: str, markdown: str, sources: list[Any]) -> Row:
    from veille.citations import cited_numbers, invalid_citations

    cited = cited_numbers(markdown)
    numbered = [s for s in sources if isinstance(s, dict)]
    valid = {int(s["number"]) for s in numbered if isinstance(s.get("number"), int)}
    if not valid:
        valid = set(range(1, len(sources) + 1))
    return {
        "run_id": run_id,
        "markdown": markdown,
        "sha256": hashlib.sha256(markdown.encode("utf-8")).hexdigest(),
        "chars": len(markdown),
        "words": _count_words(markdown),
        "sections": re.findall(r"^##\s+(.+?)\s*$", markdown, flags=re.MULTILINE),
        "citations": len(cited),
        "sources": len(sources),
        "invalid_citations": invalid_citations(markdown, [_Numbered(n) for n in sorted(valid)]),
    }


def _report_rows(run_dir: Path, run_id: str, missing: list[str]) -> list[Row]:
    report_path = run_dir / "report.md"
    sources = _read_json(run_dir / "sources.json", missing, list) or []
    if not report_path.exists():
        missing.append(report_path.name)
        return []
    return [_report_row(run_id, report_path.read_text(encoding="utf-8"), sources)]


def _document_rows(run_dir: Path, run_id: str, missing: list[str]) -> list[Row]:
    return [
        {"run_id": run_id, "doc_id": str(d.get("id")), "content_hash": d.get("content_hash")}
        for d in (_read_json(run_dir / "documents.json", missing, list) or [])
        if isinstance(d, dict) and d.get("id")
    ]


# --------------------------------------------------------------------------- the runs row (summary)


def _run_times(run_dir: Path, run: dict[str, Any]) -> tuple[datetime | None, datetime | None]:
    """(started_at, finished_at) of run.json, in UTC."""
    where = run_dir / "run.json"
    return _ts(run.get("started_at"), f"{where}: started_at"), _ts(
        run.get("finished_at"), f"{where}: finished_at"
    )


def _runs_row(
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
        "flow_run_id": run.get("flow_run_id"),
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
        "rounds": _int(run.get("rounds")) if run.get("rounds") is not None else reviewed or None,
        "subtasks_total": _int(run.get("subtasks_total")),
        "subtasks_failed": _int(run.get("subtasks_failed")),
        **call_totals(rows["llm_calls"]),
        **alert_counts(rows["alerts"]),
        "final_scores": [
            (g["grader"], g["score"]) for g in grades if g["target"] == "final" and g["score"] is not None
        ],
        "revision_gain": revision_gain(grades),
        "grade_status": grade_status(_as_grades(grades), rows["alerts"]),
        "report_words": reports[0]["words"] if reports else None,
        "missing_files": sorted(missing),
        "settings_json": json.dumps(
            run.get("settings") or {}, ensure_ascii=False, sort_keys=True, default=str
        ),
        "schema_version": SCHEMA_VERSION,
    }


# --------------------------------------------------------------------------- the whole folder


def build_tables(run_dir: Path, *, recorded_at: datetime | None = None) -> dict[str, pa.Table]:
    """Read a run folder and return one Arrow table per warehouse table (pure: writes nothing).

    Missing files give empty tables (a failed run records what exists) and are listed in
    ``runs.missing_files``; a malformed file raises :class:`WarehouseError` naming it. Journal
    lines that cannot be parsed (a crash mid-append) are skipped and reported as a
    ``record.bad_journal_line`` alert.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise WarehouseError(f"{run_dir}: run folder not found")
    missing: list[str] = []
    run = _read_json(run_dir / "run.json", missing, dict) or {}
    run_id = _run_id(run_dir, run)
    times = _run_times(run_dir, run)  # a bad timestamp fails before any other file is read
    # The readers run in this order so that, of several malformed files, the same one is reported.
    calls, bad_lines = _call_rows(run_dir, run_id, missing)
    plans, subtasks = _plan_rows(run_dir, run_id, missing)
    alerts = _alert_rows(run_dir, run_id, missing, bad_lines)
    rounds = _review_rows(run_dir, run_id, missing)
    grades = _grade_rows(run_dir, run_id)
    _grade_failure_alerts(run_id, grades, alerts)
    reports = _report_rows(run_dir, run_id, missing)
    rows: dict[str, list[Row]] = {
        "llm_calls": calls,
        "plans": plans,
        "subtasks": subtasks,
        "alerts": alerts,
        "review_rounds": rounds,
        "grader_scores": grades,
        "reports": reports,
        "documents": _document_rows(run_dir, run_id, missing),
    }
    runs_row = _runs_row(run, run_id, times, rows, missing)
    rows["runs"] = [{**runs_row, "recorded_at": recorded_at or datetime.now(UTC)}]
    tables: dict[str, pa.Table] = {}
    for name, schema in TABLES.items():
        try:
            tables[name] = pa.Table.from_pylist(rows[name], schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise WarehouseError(f"{run_dir}: cannot build table {name!r}: {exc}") from exc
    return tables


def iter_run_dirs(runs_dir: Path) -> Iterable[Path]:
    """Run folders under ``runs_dir`` (those with a run.json), oldest first."""
    return sorted(p for p in Path(runs_dir).iterdir() if p.is_dir() and (p / "run.json").exists())
