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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from veille.alerts import Alert, alert
from veille.arrowrows import table_from_rows
from veille.gradestatus import GRADE_FAILED, failure_alerts
from veille.journal import CallRecord
from veille.warehouse.errors import WarehouseError
from veille.warehouse.folderio import as_int, as_str_list, parse_ts, read_json
from veille.warehouse.runrow import as_grades, read_run_facts, run_date_of, run_id_of, run_times, runs_row
from veille.warehouse.schema import TABLES

__all__ = ["JOURNAL_COLUMNS", "build_tables", "iter_run_dirs", "run_date_of"]

Row = dict[str, Any]


def _count_words(text: str) -> int:
    return len(re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", text))


# --------------------------------------------------------------------------- one reader per table


# Journal fields stored under another column name: the journal's ``attempt`` is one request of a
# call; in the warehouse ``attempt`` alone would also read as the Prefect retry of the night (runs).
JOURNAL_COLUMNS = {"attempt": "call_attempt"}


def _call_rows(run_dir: Path, run_id: str) -> tuple[list[Row], list[Row]]:
    """``llm_calls`` rows, and a ``record.bad_journal_line`` alert per line that does not parse."""
    calls: list[Row] = []
    bad_lines: list[Row] = []
    journal = run_dir / "calls.jsonl"
    if not journal.exists():
        # The journal is created by the first call: no file is no call (an unchanged rerun, a run
        # that died before asking anything), not a lost file.
        return calls, bad_lines
    for lineno, line in enumerate(journal.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = CallRecord.model_validate_json(line)
        except ValueError as exc:  # a crash mid-append: skip the line, say so
            bad_lines.append(
                alert(
                    "record",
                    "record.bad_journal_line",
                    f"calls.jsonl line {lineno} skipped: {str(exc).splitlines()[0]}",
                    severity="warning",
                    subject=f"calls.jsonl:{lineno}",
                ).model_dump()
            )
            continue
        row = record.model_dump()
        for journal_name, column in JOURNAL_COLUMNS.items():
            row[column] = row.pop(journal_name)
        row["run_id"] = run_id  # the folder is the truth; a journal copied elsewhere stays attached
        row["seq"] = len(calls) + 1
        row["started_at"] = parse_ts(row["started_at"], f"{journal}:{lineno}: started_at")
        calls.append(row)
    return calls, bad_lines


def _plan_rows(run_dir: Path, run_id: str, missing: list[str]) -> tuple[list[Row], list[Row]]:
    """The ``plans`` row (when plan.json exists) and one ``subtasks`` row per planned or run sub-task."""
    plan = read_json(run_dir / "plan.json", missing, dict)
    findings = read_json(run_dir / "findings.json", missing, dict) or {}
    plans: list[Row] = []
    planned: dict[str, dict[str, Any]] = {}
    if plan is not None:
        for raw_sub in plan.get("sub_tasks") or []:
            if isinstance(raw_sub, dict) and raw_sub.get("id"):
                planned[str(raw_sub["id"])] = raw_sub
        planned_docs = {d for p in planned.values() for d in as_str_list(p.get("doc_ids"))}
        plans.append(
            {
                "run_id": run_id,
                "subtasks": len(planned),
                "documents": len(planned_docs),
                "excluded": as_str_list(plan.get("excluded")),
                "plan_json": json.dumps(plan, ensure_ascii=False, sort_keys=True),
                "relevant_not_read": as_str_list(_reading(plan).get("unplaced")),
            }
        )
    reading = _reading(plan or {})
    raw_forecast = reading.get("not_read")
    forecast: dict[str, Any] = raw_forecast if isinstance(raw_forecast, dict) else {}
    subtasks = [
        _subtask_row(run_id, sub_id, planned.get(sub_id, {}), findings.get(sub_id))
        | _reading_row(reading.get("budget"), findings.get(sub_id), forecast.get(sub_id))
        for sub_id in list(planned) + [k for k in findings if k not in planned]
    ]
    return plans, subtasks


def _reading(plan: dict[str, Any]) -> dict[str, Any]:
    reading = plan.get("reading")
    return reading if isinstance(reading, dict) else {}


def _reading_row(budget: Any, raw_found: Any, forecast: Any) -> Row:
    """Schema version 8: the analyst's reading budget and the documents it read in part (what it
    recorded in findings.json ``read``; the plan's forecast for a branch that did not run)."""
    found = raw_found if isinstance(raw_found, dict) else {}
    read = found.get("read") if isinstance(found.get("read"), dict) else None
    partial = read if read is not None else (forecast if isinstance(forecast, dict) else {})
    return {
        "reading_budget": budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
        "docs_read_in_part": sorted(str(i) for i in partial),
    }


def _subtask_row(run_id: str, sub_id: str, sub: dict[str, Any], raw_found: Any) -> Row:
    found: dict[str, Any] = raw_found if isinstance(raw_found, dict) else {}
    items = found.get("findings") or []
    return {
        "run_id": run_id,
        "subtask_id": sub_id,
        "question": sub.get("question") or found.get("question"),
        "doc_ids": as_str_list(sub.get("doc_ids")),
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
    raw_alerts = read_json(run_dir / "alerts.json", missing, list) or []
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
    review = read_json(run_dir / "review.json", missing, dict) or {}
    rounds: list[Row] = []
    for position, raw_round in enumerate(review.get("rounds") or [], start=1):
        if not isinstance(raw_round, dict):
            raise WarehouseError(f"{run_dir / 'review.json'}: round #{position} is not an object")
        scores: dict[str, Any] = raw_round.get("scores") or {}
        rounds.append(
            {
                "run_id": run_id,
                "round": as_int(raw_round.get("round")) or position,
                "mean": float(raw_round["mean"]) if raw_round.get("mean") is not None else None,
                "valid": raw_round.get("valid"),
                "scores": [(str(k), int(v)) for k, v in scores.items()],
                "instructions": as_str_list(raw_round.get("instructions")),
                "word_count": as_int(raw_round.get("word_count")),
                "draft": raw_round.get("draft"),
            }
        )
    return rounds


def _grade_rows(run_dir: Path, run_id: str) -> list[Row]:
    grades_path = run_dir / "grades.json"
    raw_grades = read_json(grades_path, [], list) or []  # optional: no reference, no grades
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
                "carried_over": bool(raw.get("carried_over")),  # v10 (veille.graders.parts)
            }
        )
    return rows


def _grade_failure_alerts(run_id: str, grades: list[Row], alerts: list[Row]) -> None:
    """Append a ``grade.failed`` alert for each grader of the final report that gave no score,
    unless alerts.json has it already (the flow writes them since schema version 2)."""
    alerted = {a["subject"] for a in alerts if a["code"] == GRADE_FAILED}
    for failed in failure_alerts(as_grades(grades)):
        if failed.subject not in alerted:
            alerts.append({"run_id": run_id, "seq": len(alerts) + 1, **failed.model_dump()})


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
    sources = read_json(run_dir / "sources.json", missing, list) or []
    if not report_path.exists():
        missing.append(report_path.name)
        return []
    return [_report_row(run_id, report_path.read_text(encoding="utf-8"), sources)]


def _source_rows(run_dir: Path, run_id: str) -> list[Row]:
    """sources.json, one row per numbered source; entries written before ``kind`` are corpus ones."""
    path = run_dir / "sources.json"
    rows = []
    for s in read_json(path, [], list) or []:  # its absence is listed once, by the reports reader
        if not isinstance(s, dict) or not isinstance(s.get("number"), int) or not s.get("id"):
            continue
        retrieved = s.get("retrieved_at")
        rows.append(
            {
                "run_id": run_id,
                "number": s["number"],
                "source_id": str(s["id"]),
                "kind": str(s.get("kind") or "corpus"),
                "title": s.get("title"),
                "date": None if s.get("date") is None else str(s.get("date")),
                "date_origin": s.get("date_origin"),
                "source_type": s.get("source_type"),
                "url": s.get("url"),
                "domain": s.get("domain"),
                "retrieved_at": parse_ts(retrieved, f"{path}: retrieved_at") if retrieved else None,
                "flag": s.get("flag"),
            }
        )
    return rows


def _document_rows(run_dir: Path, run_id: str, missing: list[str]) -> list[Row]:
    return [
        {"run_id": run_id, "doc_id": str(d.get("id")), "content_hash": d.get("content_hash")}
        for d in (read_json(run_dir / "documents.json", missing, list) or [])
        if isinstance(d, dict) and d.get("id")
    ]


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
    run = read_run_facts(run_dir, missing)
    run_id = run_id_of(run_dir, run)
    times = run_times(run_dir, run, run_id)  # a bad timestamp fails before any other file is read
    # The readers run in this order so that, of several malformed files, the same one is reported.
    calls, bad_lines = _call_rows(run_dir, run_id)
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
        "sources": _source_rows(run_dir, run_id),
        "documents": _document_rows(run_dir, run_id, missing),
    }
    summary = runs_row(run, run_id, times, rows, missing)
    rows["runs"] = [{**summary, "recorded_at": recorded_at or datetime.now(UTC)}]
    tables: dict[str, pa.Table] = {}
    for name, schema in TABLES.items():
        try:
            tables[name] = table_from_rows(rows[name], schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise WarehouseError(f"{run_dir}: cannot build table {name!r}: {exc}") from exc
    return tables


def iter_run_dirs(runs_dir: Path) -> Iterable[Path]:
    """Run folders under ``runs_dir`` (those with a run.json), oldest first."""
    return sorted(p for p in Path(runs_dir).iterdir() if p.is_dir() and (p / "run.json").exists())
