"""The Parquet warehouse: one file per table per run, Hive-partitioned by run date, read with DuckDB.

Layout: ``<parquet_dir>/<table>/run_date=YYYY-MM-DD/<run_id>.parquet``. The run date is the UTC
start date of the run.

Writing (:func:`record_run_dir`) turns a run folder (see docs/warehouse.md) into every table, even
when the run failed or some files are missing (the tables then hold what exists). Each file is
written to a hidden temporary name (``.<run_id>.<random>.tmp``, which the ``*.parquet`` globs of
the views never match) and then renamed, so a crash never leaves a half file under a real name.
The ``runs`` file is written last and with an exclusive link: it is the commit marker. A run id
whose ``runs`` file exists is **refused** (:class:`RunAlreadyRecordedError`), never rewritten; a
recording interrupted before its ``runs`` file can simply be retried (the other tables are
atomically replaced).

Reading (:func:`connect`) opens an in-memory DuckDB with the views of ``warehouse/*.sql``, file
access limited to the Parquet directory and the configuration locked; :func:`query` additionally
refuses anything but a single read-only statement. Never share a connection across threads.

Schema changes bump :data:`SCHEMA_VERSION` and register a :class:`Migration` (ordered); the views
read partitions with ``union_by_name`` so old files stay readable, and :func:`upgrade_table`
brings an old file's table to the current schema in Python.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from veille.killpoints import kill_point
from veille.settings import PROJECT_ROOT

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TABLES",
    "VIEWS_DIR",
    "Migration",
    "ReadOnlyQueryError",
    "RecordResult",
    "RunAlreadyRecordedError",
    "WarehouseError",
    "build_tables",
    "check_read_only",
    "committed_files",
    "committed_runs",
    "connect",
    "file_schema_version",
    "is_recorded",
    "iter_run_dirs",
    "metrics_table",
    "partition_path",
    "query",
    "read_sql",
    "record_run_dir",
    "register_migration",
    "run_date_of",
    "summary_index_path",
    "update_summary_index",
    "upgrade_table",
    "write_run_tables",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
VIEWS_DIR = PROJECT_ROOT / "warehouse"
_PACKAGE_SQL_DIR = Path(__file__).with_name("sql")
_RUN_ID_RE = re.compile(r"^(?P<date>\d{8})T\d{6}Z-[0-9a-f]{6}$")
_SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class WarehouseError(Exception):
    """Bad input or state for the warehouse; the message names the file and what is expected."""

    retryable = False  # the same input would fail the same way


class RunAlreadyRecordedError(WarehouseError):
    """The run id already has a committed ``runs`` file: a run is never written twice."""


class ReadOnlyQueryError(WarehouseError):
    """A query tried to write, attach, copy or read outside the warehouse."""


# --------------------------------------------------------------------------- schemas

_TS = pa.timestamp("us", tz="UTC")
_STR_LIST = pa.list_(pa.string())


def _schema(name: str, fields: Sequence[pa.Field]) -> pa.Schema:
    return pa.schema(fields).with_metadata(
        {"veille.table": name, "veille.schema_version": str(SCHEMA_VERSION)}
    )


def _f(name: str, type_: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable)


TABLES: dict[str, pa.Schema] = {
    "runs": _schema(
        "runs",
        [
            _f("run_id", pa.string(), False),
            _f("flow_run_id", pa.string()),
            _f("deployment", pa.string()),
            _f("status", pa.string(), False),
            _f("started_at", _TS),
            _f("finished_at", _TS),
            _f("duration_s", pa.float64()),
            _f("corpus_dir", pa.string()),
            _f("request_title", pa.string()),
            _f("backend", pa.string()),
            _f("models", pa.map_(pa.string(), pa.string())),
            _f("validated", pa.bool_()),
            _f("rounds", pa.int32()),
            _f("subtasks_total", pa.int32()),
            _f("subtasks_failed", pa.int32()),
            # Per-run summary, so trend queries read one small file per run (see docs/warehouse.md).
            _f("calls", pa.int32(), False),
            _f("attempts", pa.int32(), False),
            _f("failed_calls", pa.int32(), False),
            _f("input_tokens", pa.int64(), False),
            _f("output_tokens", pa.int64(), False),
            _f("reasoning_tokens", pa.int64(), False),
            _f("cache_read_tokens", pa.int64(), False),
            _f("tokens_estimated", pa.bool_(), False),
            _f("cost_usd", pa.float64(), False),
            _f("cost_complete", pa.bool_(), False),
            _f("alerts", pa.int32(), False),
            _f("alerts_error", pa.int32(), False),
            _f("alerts_warning", pa.int32(), False),
            _f("final_scores", pa.map_(pa.string(), pa.float64())),
            _f("revision_gain", pa.float64()),  # judge(final) - judge(round 1), see view revision_gain
            _f("report_words", pa.int32()),
            _f("missing_files", _STR_LIST),
            _f("settings_json", pa.string()),
            _f("schema_version", pa.int32(), False),
            _f("recorded_at", _TS, False),
        ],
    ),
    "llm_calls": _schema(
        "llm_calls",
        [
            _f("run_id", pa.string(), False),
            _f("seq", pa.int32(), False),
            _f("call_id", pa.string(), False),
            _f("attempt", pa.int32(), False),
            _f("flow_run_id", pa.string()),
            _f("task_run_id", pa.string()),
            _f("role", pa.string(), False),
            _f("subtask_id", pa.string()),
            _f("backend", pa.string()),
            _f("model", pa.string()),
            _f("input_tokens", pa.int64(), False),
            _f("output_tokens", pa.int64(), False),
            _f("reasoning_tokens", pa.int64(), False),
            _f("cache_read_tokens", pa.int64(), False),
            _f("estimated", pa.bool_(), False),
            _f("cost_usd", pa.float64()),
            _f("latency_s", pa.float64(), False),
            _f("status", pa.string(), False),
            _f("error_class", pa.string()),
            _f("error_message", pa.string()),
            _f("cache_hit", pa.bool_(), False),
            _f("started_at", _TS),
        ],
    ),
    "plans": _schema(
        "plans",
        [
            _f("run_id", pa.string(), False),
            _f("subtasks", pa.int32(), False),
            _f("documents", pa.int32(), False),
            _f("excluded", _STR_LIST),
            _f("plan_json", pa.string()),
        ],
    ),
    "subtasks": _schema(
        "subtasks",
        [
            _f("run_id", pa.string(), False),
            _f("subtask_id", pa.string(), False),
            _f("question", pa.string()),
            _f("doc_ids", _STR_LIST),
            _f("status", pa.string()),
            _f("error", pa.string()),
            _f("findings", pa.int32()),
            _f("contradictions", pa.int32()),
            _f("open_questions", pa.int32()),
            _f("figures", pa.int32()),
        ],
    ),
    "alerts": _schema(
        "alerts",
        [
            _f("run_id", pa.string(), False),
            _f("seq", pa.int32(), False),
            _f("code", pa.string(), False),
            _f("severity", pa.string(), False),
            _f("stage", pa.string()),
            _f("message", pa.string()),
            _f("subject", pa.string()),
        ],
    ),
    "review_rounds": _schema(
        "review_rounds",
        [
            _f("run_id", pa.string(), False),
            _f("round", pa.int32(), False),
            _f("mean", pa.float64()),
            _f("valid", pa.bool_()),
            _f("scores", pa.map_(pa.string(), pa.int32())),
            _f("instructions", _STR_LIST),
            _f("word_count", pa.int32()),
            _f("draft", pa.string()),
        ],
    ),
    "grader_scores": _schema(
        "grader_scores",
        [
            _f("run_id", pa.string(), False),
            _f("target", pa.string(), False),
            _f("grader", pa.string(), False),
            _f("version", pa.string(), False),
            _f("score", pa.float64()),
            _f("model", pa.string()),
            _f("details_json", pa.string()),
        ],
    ),
    "reports": _schema(
        "reports",
        [
            _f("run_id", pa.string(), False),
            _f("markdown", pa.string()),
            _f("sha256", pa.string()),
            _f("chars", pa.int32(), False),
            _f("words", pa.int32(), False),
            _f("sections", _STR_LIST),
            _f("citations", pa.int32(), False),
            _f("sources", pa.int32(), False),
            _f("invalid_citations", pa.list_(pa.int32())),
        ],
    ),
    "documents": _schema(
        "documents",
        [
            _f("run_id", pa.string(), False),
            _f("doc_id", pa.string(), False),
            _f("content_hash", pa.string()),
        ],
    ),
}

# Written last: its file is the commit marker of a run.
_TABLE_ORDER = [name for name in TABLES if name != "runs"] + ["runs"]


# --------------------------------------------------------------------------- migrations


@dataclass(frozen=True)
class Migration:
    """One schema change. ``upgrade(table_name, table)`` turns a table of ``version - 1`` into ``version``.

    Views read partitions with ``union_by_name`` (columns added later are NULL in old files); a
    migration says what else an old partition needs (a renamed column, a new default) for Python
    readers, and docs/warehouse.md records it.
    """

    version: int
    description: str
    upgrade: Callable[[str, pa.Table], pa.Table] = field(default=lambda _name, table: table)


MIGRATIONS: list[Migration] = []


def register_migration(migration: Migration, registry: list[Migration] | None = None) -> None:
    """Append ``migration``; versions must follow each other (1, 2, 3...) with no gap or repeat."""
    target = MIGRATIONS if registry is None else registry
    expected = (target[-1].version + 1) if target else 1
    if migration.version != expected:
        raise WarehouseError(
            f"migration {migration.version} ({migration.description!r}) registered out of order: "
            f"expected version {expected}"
        )
    target.append(migration)


register_migration(
    Migration(
        1,
        "initial schema: runs, llm_calls, plans, subtasks, alerts, "
        "review_rounds, grader_scores, reports, documents",
    )
)


def file_schema_version(path: Path) -> int:
    """The schema version stored in a Parquet file's metadata (1 when absent)."""
    metadata = pq.read_schema(path).metadata or {}
    return int(metadata.get(b"veille.schema_version", b"1"))


def upgrade_table(
    name: str, table: pa.Table, from_version: int, migrations: Sequence[Migration] | None = None
) -> pa.Table:
    """Apply, in order, every migration after ``from_version`` to one table read from an old file."""
    for migration in migrations if migrations is not None else MIGRATIONS:
        if migration.version > from_version:
            table = migration.upgrade(name, table)
    return table


# --------------------------------------------------------------------------- run folder → tables


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


def _report_row(run_id: str, markdown: str, sources: list[Any]) -> dict[str, Any]:
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


@dataclass(frozen=True)
class _Numbered:
    number: int


def _revision_gain(grades: list[dict[str, Any]]) -> float | None:
    judged = {g["target"]: g["score"] for g in grades if g["grader"] == "judge" and g["score"] is not None}
    rounds = sorted(
        (int(t.removeprefix("round-")), score)
        for t, score in judged.items()
        if t.startswith("round-") and t.removeprefix("round-").isdigit()
    )
    if "final" not in judged or not rounds:
        return None
    return round(judged["final"] - rounds[0][1], 6)


def build_tables(run_dir: Path, *, recorded_at: datetime | None = None) -> dict[str, pa.Table]:
    """Read a run folder and return one Arrow table per warehouse table (pure: writes nothing).

    Missing files give empty tables (a failed run records what exists) and are listed in
    ``runs.missing_files``; a malformed file raises :class:`WarehouseError` naming it. Journal
    lines that cannot be parsed (a crash mid-append) are skipped and reported as a
    ``record.bad_journal_line`` alert.
    """
    from veille.alerts import Alert
    from veille.models.base import CallRecord

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise WarehouseError(f"{run_dir}: run folder not found")
    missing: list[str] = []
    run = _read_json(run_dir / "run.json", missing, dict) or {}
    run_id = str(run.get("run_id") or run_dir.name)
    if run_id != run_dir.name:
        raise WarehouseError(
            f"{run_dir / 'run.json'}: run_id {run_id!r} does not match folder {run_dir.name!r}"
        )
    if not _SAFE_NAME_RE.match(run_id):
        raise WarehouseError(f"{run_dir}: run id {run_id!r} is not a safe file name")
    started_at = _ts(run.get("started_at"), f"{run_dir / 'run.json'}: started_at")
    finished_at = _ts(run.get("finished_at"), f"{run_dir / 'run.json'}: finished_at")

    extra_alerts: list[dict[str, Any]] = []

    # --- llm_calls
    calls: list[dict[str, Any]] = []
    journal = run_dir / "calls.jsonl"
    if journal.exists():
        for lineno, line in enumerate(journal.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = CallRecord.model_validate_json(line)
            except ValueError as exc:
                extra_alerts.append(
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
    else:
        missing.append(journal.name)

    # --- plans / subtasks
    plan = _read_json(run_dir / "plan.json", missing, dict)
    findings = _read_json(run_dir / "findings.json", missing, dict) or {}
    plans: list[dict[str, Any]] = []
    subtasks: list[dict[str, Any]] = []
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
    for sub_id in list(planned) + [k for k in findings if k not in planned]:
        sub: dict[str, Any] = planned.get(sub_id, {})
        raw_found = findings.get(sub_id)
        found: dict[str, Any] = raw_found if isinstance(raw_found, dict) else {}
        items = found.get("findings") or []
        subtasks.append(
            {
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
        )

    # --- alerts
    alert_rows: list[dict[str, Any]] = []
    raw_alerts = _read_json(run_dir / "alerts.json", missing, list) or []
    for index, raw in enumerate([*raw_alerts, *extra_alerts], start=1):
        try:
            alert = Alert.model_validate(raw)
        except ValueError as exc:
            raise WarehouseError(
                f"{run_dir / 'alerts.json'}: alert #{index} is not an Alert ({exc})"
            ) from exc
        alert_rows.append({"run_id": run_id, "seq": index, **alert.model_dump()})

    # --- review rounds
    review = _read_json(run_dir / "review.json", missing, dict) or {}
    rounds: list[dict[str, Any]] = []
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

    # --- grades
    grades_path = run_dir / "grades.json"
    raw_grades = _read_json(grades_path, [], list) or []  # optional: no reference, no grades
    grade_rows: list[dict[str, Any]] = []
    for index, raw in enumerate(raw_grades, start=1):
        if not isinstance(raw, dict) or not raw.get("grader"):
            raise WarehouseError(f"{grades_path}: entry #{index} needs at least 'grader'")
        score = raw.get("score")
        grade_rows.append(
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

    for g in grade_rows:
        error = json.loads(g["details_json"]).get("error")
        if error and g["target"] == "final":
            extra_alert = Alert(
                code="grade.failed",
                severity="warning",
                stage="grade",
                message=f"grader {g['grader']} gave no score: {error}",
                subject=g["grader"],
            )
            alert_rows.append({"run_id": run_id, "seq": len(alert_rows) + 1, **extra_alert.model_dump()})

    # --- report / documents
    report_path = run_dir / "report.md"
    sources = _read_json(run_dir / "sources.json", missing, list) or []
    reports: list[dict[str, Any]] = []
    if report_path.exists():
        reports.append(_report_row(run_id, report_path.read_text(encoding="utf-8"), sources))
    else:
        missing.append(report_path.name)
    documents: list[dict[str, Any]] = [
        {"run_id": run_id, "doc_id": str(d.get("id")), "content_hash": d.get("content_hash")}
        for d in (_read_json(run_dir / "documents.json", missing, list) or [])
        if isinstance(d, dict) and d.get("id")
    ]

    # --- runs (summary)
    costs = [c["cost_usd"] for c in calls]
    final_scores = [
        (g["grader"], g["score"]) for g in grade_rows if g["target"] == "final" and g["score"] is not None
    ]
    raw_models = run.get("models")
    models: dict[str, Any] = raw_models if isinstance(raw_models, dict) else {}
    status = str(run.get("status") or ("completed" if finished_at else "failed"))
    runs_row = {
        "run_id": run_id,
        "flow_run_id": run.get("flow_run_id"),
        "deployment": run.get("deployment"),
        "status": status,
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": (finished_at - started_at).total_seconds() if started_at and finished_at else None,
        "corpus_dir": run.get("corpus_dir"),
        "request_title": run.get("request_title"),
        "backend": run.get("backend"),
        "models": [(str(k), str(v)) for k, v in models.items()],
        "validated": run.get("validated"),
        "rounds": _int(run.get("rounds")) if run.get("rounds") is not None else len(rounds) or None,
        "subtasks_total": _int(run.get("subtasks_total")),
        "subtasks_failed": _int(run.get("subtasks_failed")),
        "calls": len({c["call_id"] for c in calls}),
        "attempts": len(calls),
        "failed_calls": len(
            {c["call_id"] for c in calls} - {c["call_id"] for c in calls if c["status"] == "ok"}
        ),
        "input_tokens": sum(c["input_tokens"] for c in calls),
        "output_tokens": sum(c["output_tokens"] for c in calls),
        "reasoning_tokens": sum(c["reasoning_tokens"] for c in calls),
        "cache_read_tokens": sum(c["cache_read_tokens"] for c in calls),
        "tokens_estimated": any(c["estimated"] for c in calls),
        "cost_usd": float(sum(c for c in costs if c is not None)),
        # A call with an unknown price makes the total a lower bound, never a silent 0.
        "cost_complete": all(c is not None for c in costs),
        "alerts": len(alert_rows),
        "alerts_error": sum(1 for a in alert_rows if a["severity"] == "error"),
        "alerts_warning": sum(1 for a in alert_rows if a["severity"] == "warning"),
        "final_scores": final_scores,
        "revision_gain": _revision_gain(grade_rows),
        "report_words": reports[0]["words"] if reports else None,
        "missing_files": sorted(missing),
        "settings_json": json.dumps(
            run.get("settings") or {}, ensure_ascii=False, sort_keys=True, default=str
        ),
        "schema_version": SCHEMA_VERSION,
        "recorded_at": recorded_at or datetime.now(UTC),
    }

    rows: dict[str, list[dict[str, Any]]] = {
        "runs": [runs_row],
        "llm_calls": calls,
        "plans": plans,
        "subtasks": subtasks,
        "alerts": alert_rows,
        "review_rounds": rounds,
        "grader_scores": grade_rows,
        "reports": reports,
        "documents": documents,
    }
    tables: dict[str, pa.Table] = {}
    for name, schema in TABLES.items():
        try:
            tables[name] = pa.Table.from_pylist(rows[name], schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise WarehouseError(f"{run_dir}: cannot build table {name!r}: {exc}") from exc
    return tables


# --------------------------------------------------------------------------- writing


def partition_path(parquet_dir: Path, table: str, run_date: date, run_id: str) -> Path:
    """``<parquet_dir>/<table>/run_date=YYYY-MM-DD/<run_id>.parquet``."""
    return Path(parquet_dir) / table / f"run_date={run_date.isoformat()}" / f"{run_id}.parquet"


def is_recorded(parquet_dir: Path, run_id: str, run_date: date) -> bool:
    """True when the run's commit marker (its ``runs`` file) exists."""
    return partition_path(parquet_dir, "runs", run_date, run_id).exists()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be opened
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_atomic(table: pa.Table, final: Path, *, exclusive: bool) -> None:
    """Write to a hidden temporary name in the same directory, fsync, then rename into place.

    ``exclusive`` links instead of replacing, so two writers of the same run cannot both commit.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = final.with_name(f".{final.stem}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with temp.open("wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            try:
                os.link(temp, final)
            except FileExistsError as exc:
                raise RunAlreadyRecordedError(f"{final}: run already recorded") from exc
        else:
            os.replace(temp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    _fsync_dir(final.parent)


def write_run_tables(
    parquet_dir: Path, tables: Mapping[str, pa.Table], *, run_id: str, run_date: date
) -> dict[str, Path]:
    """Write one file per table for one run; ``runs`` last, as the commit marker.

    Refuses (:class:`RunAlreadyRecordedError`) when the run is already committed. Every table of
    :data:`TABLES` must be given, with its exact schema.
    """
    if not _SAFE_NAME_RE.match(run_id):
        raise WarehouseError(f"run id {run_id!r} is not a safe file name")
    if set(tables) != set(TABLES):
        raise WarehouseError(f"tables for run {run_id}: expected {sorted(TABLES)}, got {sorted(tables)}")
    for name, table in tables.items():
        if not table.schema.equals(TABLES[name]):
            raise WarehouseError(f"table {name!r} of run {run_id}: schema differs from TABLES[{name!r}]")
    if is_recorded(parquet_dir, run_id, run_date):
        raise RunAlreadyRecordedError(
            f"run {run_id} is already in the warehouse ({partition_path(parquet_dir, 'runs', run_date, run_id)}); "
            "a run id is never written twice"
        )
    written: dict[str, Path] = {}
    for name in _TABLE_ORDER:
        final = partition_path(parquet_dir, name, run_date, run_id)
        _write_atomic(tables[name], final, exclusive=name == "runs")
        written[name] = final
        kill_point("record")  # crash tests: the n-th table file is in place
    try:
        update_summary_index(parquet_dir)
    except Exception as exc:  # the run is committed; readers fall back to the per-run files
        logger.warning("run %s recorded, but the summary index was not updated: %s", run_id, exc)
    return written


# --------------------------------------------------------------------------- summary index
#
# Trend queries read one ``runs`` row per run. With one file per run, a year of nights is 365 file
# opens (~0.3-1 ms each), too slow for an interactive ``veille trends``. So every commit also
# refreshes ``<parquet_dir>/_index/runs_summary.parquet``: the ``runs`` rows of every committed
# run plus their ``run_date``, in one small file. It is derived data: the per-run files stay the
# truth, readers check the index against them (a directory listing) and read the per-run files of
# any run the index misses, and the next commit repairs it.

INDEX_DIR = "_index"
INDEX_FILE = "runs_summary.parquet"


def summary_index_path(parquet_dir: Path) -> Path:
    """``<parquet_dir>/_index/runs_summary.parquet`` (outside every table's glob)."""
    return Path(parquet_dir) / INDEX_DIR / INDEX_FILE


def committed_runs(parquet_dir: Path) -> dict[str, Path]:
    """Run id → its committed ``runs`` file (a directory listing, no file opened)."""
    found: dict[str, Path] = {}
    root = Path(parquet_dir) / "runs"
    if not root.is_dir():
        return found
    with os.scandir(root) as partitions:
        for partition in partitions:
            if not (partition.is_dir() and partition.name.startswith("run_date=")):
                continue
            with os.scandir(partition.path) as files:
                for entry in files:
                    if entry.name.endswith(".parquet") and not entry.name.startswith("."):
                        found[entry.name.removesuffix(".parquet")] = Path(entry.path)
    return found


def _read_runs_file(path: Path) -> pa.Table:
    table = pq.read_table(path)
    run_date = date.fromisoformat(path.parent.name.removeprefix("run_date="))
    return table.append_column(
        pa.field("run_date", pa.date32()), pa.array([run_date] * table.num_rows, pa.date32())
    )


@contextlib.contextmanager
def _index_lock(parquet_dir: Path) -> Iterator[None]:
    # Two runs recording at once must not lose each other's row (read-modify-write of the index).
    folder = Path(parquet_dir) / INDEX_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock; readers still check the index against the files
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def update_summary_index(parquet_dir: Path) -> Path | None:
    """Bring the summary index in line with the committed runs; returns its path (None: no run)."""
    with _index_lock(parquet_dir):
        committed = committed_runs(parquet_dir)
        path = summary_index_path(parquet_dir)
        if not committed:
            path.unlink(missing_ok=True)
            return None
        index = pq.read_table(path) if path.exists() else None
        indexed = set(index.column("run_id").to_pylist()) if index is not None else set()
        if indexed == set(committed):
            return path
        parts: list[pa.Table] = []
        if index is not None and indexed:
            keep = pa.array([run_id in committed for run_id in index.column("run_id").to_pylist()])
            parts.append(index.filter(keep))
        parts += [_read_runs_file(committed[run_id]) for run_id in sorted(set(committed) - indexed)]
        # promote: partitions of an older schema version get NULL for columns added since.
        merged = pa.concat_tables(parts, promote_options="default")
        merged = merged.sort_by([("run_date", "ascending"), ("run_id", "ascending")])
        _write_atomic(merged, path, exclusive=False)
        return path


@dataclass(frozen=True)
class RecordResult:
    """What :func:`record_run_dir` wrote."""

    run_id: str
    run_date: date
    files: dict[str, Path]
    rows: dict[str, int]
    missing_files: list[str]
    summary: dict[str, Any]  # the ``runs`` row


def metrics_table(summary: Mapping[str, Any]) -> list[dict[str, str]]:
    """The run's headline metrics as (metric, value) rows, for a Prefect table artifact."""
    scores = dict(summary.get("final_scores") or [])
    cost = summary.get("cost_usd") or 0.0
    rows: list[tuple[str, Any]] = [
        ("run_id", summary["run_id"]),
        ("status", summary["status"]),
        ("backend", summary.get("backend")),
        ("duration_s", None if summary.get("duration_s") is None else round(summary["duration_s"], 1)),
        ("calls", summary["calls"]),
        ("failed_calls", summary["failed_calls"]),
        ("input_tokens", summary["input_tokens"]),
        ("output_tokens", summary["output_tokens"] + summary["reasoning_tokens"]),
        ("cost_usd", f"{cost:.4f}" + ("" if summary["cost_complete"] else " (lower bound: unpriced model)")),
        ("rounds", summary.get("rounds")),
        ("validated", summary.get("validated")),
        (
            "alerts",
            f"{summary['alerts']} ({summary['alerts_error']} error, {summary['alerts_warning']} warning)",
        ),
        ("report_words", summary.get("report_words")),
    ]
    rows += [(f"score.{name}", f"{value:.3f}") for name, value in sorted(scores.items())]
    if summary.get("revision_gain") is not None:
        rows.append(("revision_gain", f"{summary['revision_gain']:+.3f}"))
    if summary.get("missing_files"):
        rows.append(("missing_files", ", ".join(summary["missing_files"])))
    return [{"metric": name, "value": "" if value is None else str(value)} for name, value in rows]


def record_run_dir(run_dir: Path, parquet_dir: Path) -> RecordResult:
    """Turn one run folder into its Parquet files (see :func:`build_tables`, :func:`write_run_tables`)."""
    tables = build_tables(run_dir)
    runs_row = tables["runs"].to_pylist()[0]
    run_id = runs_row["run_id"]
    run_date = run_date_of(run_id, runs_row["started_at"])
    files = write_run_tables(parquet_dir, tables, run_id=run_id, run_date=run_date)
    return RecordResult(
        run_id=run_id,
        run_date=run_date,
        files=files,
        rows={name: t.num_rows for name, t in tables.items()},
        missing_files=list(runs_row["missing_files"]),
        summary=runs_row,
    )


# --------------------------------------------------------------------------- reading


def committed_files(parquet_dir: Path, table: str) -> list[Path]:
    """The table's files the views read (temporary names excluded)."""
    return sorted(
        p for p in (Path(parquet_dir) / table).glob("run_date=*/*.parquet") if not p.name.startswith(".")
    )


def read_sql(name: str) -> str:
    """A query file of the package (``veille/sql/<name>.sql``)."""
    path = _PACKAGE_SQL_DIR / f"{name}.sql"
    return path.read_text(encoding="utf-8")


_VIEW_NAME_RE = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+\"?(\w+)\"?", re.IGNORECASE)
SUMMARY_VIEW = "runs_summary"  # built in Python (see _create_summary_view), trend views read it


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)


_REFERENCE_RE = re.compile(r"\b(?:FROM|JOIN|DESCRIBE|SUMMARIZE)\s+\"?(\w+)", re.IGNORECASE)


def _references(sql: str) -> set[str]:
    """Relation names a statement reads (after FROM, JOIN, DESCRIBE, SUMMARIZE), lower-cased.

    A cheap lexical scan, not a parser: it may miss a name (``FROM a, b`` sees ``a`` only), which
    :func:`query` handles by retrying with every view; it never needs to bind anything.
    """
    return {name.lower() for name in _REFERENCE_RE.findall(_strip_comments(sql))}


@dataclass(frozen=True)
class _View:
    name: str
    sql: str  # empty for the Python-built summary view
    table: str | None  # the warehouse table it reads, for table views


def _view_catalogue(views_dir: Path) -> dict[str, _View]:
    files = sorted(views_dir.glob("*.sql"))
    if not files:
        raise WarehouseError(f"{views_dir}: no view definitions (*.sql) found")
    views = {SUMMARY_VIEW: _View(SUMMARY_VIEW, "", None)}
    for path in files:
        sql = path.read_text(encoding="utf-8")
        match = _VIEW_NAME_RE.search(_strip_comments(sql))
        if match is None:
            raise WarehouseError(f"{path}: expected a CREATE [OR REPLACE] VIEW <name> AS ... statement")
        table = path.stem.removeprefix("table_") if path.stem.startswith("table_") else None
        if table is not None and table != match.group(1):
            raise WarehouseError(f"{path}: a table view file must create the view {table!r}")
        views[match.group(1)] = _View(match.group(1), sql, table)
    return views


def _needed_views(views: Mapping[str, _View], queries: Iterable[str] | None) -> list[str]:
    """Views the queries mention, with what those views read, in dependency order.

    Creating a view binds it (every file of its table is opened), so only what a query needs is
    created. A query reading no known view (``SHOW TABLES``, ``SELECT 1``) gets them all.
    """
    referenced = set().union(*(_references(q) for q in queries)) if queries is not None else set()
    wanted = [name for name in views if name.lower() in referenced] or list(views)
    ordered: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in ordered:
            return
        if name in path:
            raise WarehouseError(f"views depend on each other in a cycle: {' -> '.join((*path, name))}")
        body = _references(views[name].sql)
        for other in views:
            if other != name and other.lower() in body:
                visit(other, (*path, name))
        ordered.append(name)

    for name in wanted:
        visit(name, ())
    return ordered


def connect(
    parquet_dir: Path, *, views_dir: Path | None = None, queries: Iterable[str] | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the warehouse views; file access limited to ``parquet_dir``, config locked.

    ``queries``: the SQL about to run; only the views it mentions (and what they read) are created
    (all of them when None). View files named ``table_<name>.sql`` define the view of one table;
    when that table has no file yet, an empty view with the table's schema replaces it so every
    query still binds. ``runs_summary`` is built here from the summary index. One connection per
    thread.
    """
    root = Path(parquet_dir).resolve()
    if not root.is_dir():
        raise WarehouseError(f"{root}: no warehouse here yet (no run recorded); run the flow first")
    views = _view_catalogue(views_dir or VIEWS_DIR)
    con = duckdb.connect(":memory:")
    try:
        # Before locking: the only directory DuckDB may touch is the Parquet tree.
        con.execute("SET allowed_directories = ?", [[str(root) + os.sep]])
        con.execute("SET enable_external_access = false")
        con.execute("SET autoinstall_known_extensions = false")
        con.execute("SET parquet_metadata_cache = true")
        con.execute("SET TimeZone = 'UTC'")  # timestamps print in UTC, as stored
        con.execute("SET VARIABLE parquet_dir = ?", [str(root)])
        for name in _needed_views(views, queries):
            view = views[name]
            if name == SUMMARY_VIEW:
                _create_summary_view(con, root)
            elif view.table in TABLES and not committed_files(root, view.table):
                _create_empty_view(con, view.table)
            else:
                con.execute(view.sql)
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise WarehouseError(f"cannot open the warehouse views over {root}: {exc}") from exc
    return con


def _create_summary_view(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """``runs_summary``: the ``runs`` rows, from the index when it covers every committed run."""
    committed = committed_runs(root)
    index = summary_index_path(root)
    if not committed:
        _create_empty_view(con, "runs", name=SUMMARY_VIEW)
        return
    indexed: set[str] = set()
    if index.exists():
        indexed = set(pq.read_table(index, columns=["run_id"]).column("run_id").to_pylist())
    per_run = "hive_partitioning = true, hive_types = {'run_date': DATE}, union_by_name = true"
    if indexed and indexed <= set(committed):
        missing = sorted(str(committed[r]) for r in set(committed) - indexed)
        con.execute("SET VARIABLE runs_index = ?", [str(index)])
        source = "SELECT * FROM read_parquet(getvariable('runs_index'))"
        if missing:  # committed after the last index update (or the update failed)
            con.execute("SET VARIABLE runs_unindexed = ?", [missing])
            source += (
                f" UNION ALL BY NAME SELECT * FROM read_parquet(getvariable('runs_unindexed'), {per_run})"
            )
    else:  # no index, or it lists runs whose files are gone: read every run's file
        source = f"SELECT * FROM read_parquet(getvariable('parquet_dir') || '/runs/run_date=*/*.parquet', {per_run})"
    con.execute(f"CREATE VIEW {SUMMARY_VIEW} AS {source}")


def _create_empty_view(con: duckdb.DuckDBPyConnection, table: str, *, name: str | None = None) -> None:
    # A zero-row relation with the exact schema (plus the partition column), so views bind.
    view = name or table
    empty = TABLES[table].empty_table().append_column("run_date", pa.array([], pa.date32()))
    con.register(f"_empty_{view}", empty)
    con.execute(f'CREATE VIEW "{view}" AS SELECT * FROM "_empty_{view}"')


_READ_ONLY_TYPES = {"SELECT"}


def _statement_type(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, str]:
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise WarehouseError(f"SQL syntax error: {exc}") from exc
    if len(statements) != 1:
        raise ReadOnlyQueryError(f"give exactly one SQL statement (got {len(statements)})")
    statement = statements[0]
    return statement.type.name, statement.query


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse anything but one SELECT (DESCRIBE, SHOW, SUMMARIZE and FROM-first count) or EXPLAIN of one."""
    kind, text = _statement_type(con, sql)
    if kind == "EXPLAIN":
        inner = re.sub(r"^\s*explain(\s+analy[sz]e)?\s+", "", text, flags=re.IGNORECASE)
        kind, _ = _statement_type(con, inner)
    if kind not in _READ_ONLY_TYPES:
        raise ReadOnlyQueryError(
            f"the warehouse is read-only: {kind} statements are refused "
            "(only SELECT, WITH … SELECT, DESCRIBE, SHOW, SUMMARIZE and EXPLAIN run here)"
        )


def query(
    parquet_dir: Path,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    views_dir: Path | None = None,
    read_only_check: bool = True,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one read-only query against the views; return (column names, rows).

    A write, ATTACH, COPY, SET… raises :class:`ReadOnlyQueryError`; so does reading a file outside
    the warehouse (DuckDB refuses it: external access is off, only the Parquet directory is allowed).
    """
    con = connect(parquet_dir, views_dir=views_dir, queries=[sql])
    try:
        if read_only_check:
            check_read_only(con, sql)
        try:
            return _fetch(con, sql, params)
        except duckdb.CatalogException:
            # The lexical scan missed a view the query reads: retry once with every view.
            con.close()
            con = connect(parquet_dir, views_dir=views_dir)
            return _fetch(con, sql, params)
    except duckdb.PermissionException as exc:
        raise ReadOnlyQueryError(
            f"the warehouse query may only read the warehouse ({Path(parquet_dir).resolve()}): {exc}"
        ) from exc
    except duckdb.Error as exc:
        raise WarehouseError(f"query failed: {exc}") from exc
    finally:
        con.close()


def _fetch(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | Mapping[str, Any] | None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    relation = con.execute(sql, params) if params is not None else con.execute(sql)
    return [d[0] for d in relation.description or []], relation.fetchall()


def iter_run_dirs(runs_dir: Path) -> Iterable[Path]:
    """Run folders under ``runs_dir`` (those with a run.json), oldest first."""
    return sorted(p for p in Path(runs_dir).iterdir() if p.is_dir() and (p / "run.json").exists())
