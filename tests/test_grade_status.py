"""Grading failures are visible (issue 12, item 4): alerts.json, the run summary, ``runs.grade_status``
(and ``veille runs``), the flow's log line, and billed attempts per role."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import typer
from typer.testing import CliRunner

from veille import warehouse as wh
from veille.cli import warehouse as cli_warehouse
from veille.gradestatus import failure_alerts, grade_counts, grade_status
from veille.journal import CallRecord
from veille.run.runlog import RunLog
from veille.run.summary import format_summary, role_usage
from veille.settings import Settings
from veille.warehouse.synth import write_synthetic_run

T0 = datetime(2026, 3, 30, 2, 0, tzinfo=UTC)
ERROR = {"error": "SchemaValidationError: judge: output did not match the schema after 3 attempts"}


def _grade(grader: str, score: float | None, target: str = "final", **details: Any) -> dict[str, Any]:
    return {
        "grader": grader,
        "version": "1",
        "target": target,
        "score": score,
        "model": None,
        "details": details,
    }


def _judge_failed() -> list[dict[str, Any]]:
    return [
        _grade("rouge_l", 0.4),
        _grade("numeric", 0.5),
        _grade("judge", None, "round-1", **ERROR),
        _grade("judge", None, **ERROR),
        _grade("judge+similarity", None, reason="no judge score"),
        _grade("structure.groups", None, reason="no groups in facts.yaml"),
    ]


def test_status_counts_and_alerts() -> None:
    grades = _judge_failed()
    counts = grade_counts(grades)
    assert (counts.total, counts.scored, counts.null, counts.failed) == (6, 2, 4, 2)
    assert counts.note() == "6 grade(s): 2 scored, 4 null (2 failed)"
    assert grade_status(grades) == "partial"
    assert grade_status([_grade("rouge_l", 0.4), _grade("structure.groups", None, reason="n/a")]) == "ok"
    assert grade_status([_grade("judge", None, **ERROR)]) == "failed"
    assert grade_status([]) == "none"
    assert grade_status([], [{"code": "grade.failed", "subject": None}]) == "failed"
    [alert] = failure_alerts(grades)  # the final report's judge only, once
    assert (alert.code, alert.subject, alert.stage) == ("grade.failed", "judge", "grade")
    assert "SchemaValidationError" in alert.message


def test_the_flow_writes_grade_failures_into_alerts_json(tmp_path: Path) -> None:
    run = RunLog.start(Settings.from_params(warehouse=str(tmp_path), backend="offline"))
    run.folder.write_alerts(run.alerts)  # write_outputs ran before grading
    note = run.keep_grades(_judge_failed())
    assert note == "6 grade(s): 2 scored, 4 null (2 failed)"
    alerts = json.loads((run.folder.path / "alerts.json").read_text(encoding="utf-8"))
    assert [(a["code"], a["subject"]) for a in alerts] == [("grade.failed", "judge")]


def _run_with_grades(tmp_path: Path, grades: list[dict[str, Any]] | None, seed: int = 0) -> Path:
    run_dir = write_synthetic_run(tmp_path / "runs", T0 + timedelta(hours=seed), seed=seed)
    if grades is None:
        (run_dir / "grades.json").unlink()
    else:
        (run_dir / "grades.json").write_text(json.dumps(grades), encoding="utf-8")
    return run_dir


def test_summary_shows_the_grade_status_and_billed_attempts(tmp_path: Path) -> None:
    run_dir = _run_with_grades(tmp_path, _judge_failed())
    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    alerts += [a.model_dump() for a in failure_alerts(_judge_failed())]
    (run_dir / "alerts.json").write_text(json.dumps(alerts), encoding="utf-8")
    base = {
        "run_id": "r",
        "role": "judge",
        "backend": "gemini",
        "model": "m",
        "started_at": "2026-03-30T02:00:00Z",
    }
    with (run_dir / "calls.jsonl").open("w", encoding="utf-8") as out:
        for attempt, status in enumerate(["schema_error", "schema_error", "schema_error"], 1):
            record = CallRecord(
                **base, call_id="j", attempt=attempt, status=status, input_tokens=900, http_requests=1
            )
            out.write(record.model_dump_json() + "\n")
        out.write(
            CallRecord(
                **base, call_id="k", attempt=1, status="transient_error", http_requests=1
            ).model_dump_json()
            + "\n"
        )
    [judge] = role_usage(run_dir / "calls.jsonl")
    assert (judge.calls, judge.attempts, judge.billed_attempts) == (2, 4, 3)
    text = format_summary(run_dir)
    assert "Notation : partial — 6 note(s) : 2 chiffrée(s), 4 nulle(s) dont 2 en échec" in text
    assert "grade.failed : grader judge gave no score" in text
    # Four requests reached the server (the 503 included), three of them answered.
    assert "judge      2 appel(s),   4 requête(s) HTTP (3 répondue(s))" in text


def test_runs_grade_status_column_and_no_duplicate_alert(tmp_path: Path) -> None:
    parquet = tmp_path / "parquet"
    partial = _run_with_grades(tmp_path, _judge_failed(), seed=0)
    alerts = json.loads((partial / "alerts.json").read_text(encoding="utf-8"))
    alerts += [a.model_dump() for a in failure_alerts(_judge_failed())]  # as the flow writes it
    (partial / "alerts.json").write_text(json.dumps(alerts), encoding="utf-8")
    results = [
        wh.record_run_dir(partial, parquet),
        wh.record_run_dir(_run_with_grades(tmp_path, [_grade("rouge_l", 0.5)], seed=1), parquet),
        wh.record_run_dir(_run_with_grades(tmp_path, None, seed=2), parquet),
    ]
    assert [r.summary["grade_status"] for r in results] == ["partial", "ok", "none"]
    codes = [a["code"] for a in pq.read_table(results[0].files["alerts"]).to_pylist()]
    assert codes.count("grade.failed") == 1  # alerts.json had it: recording does not add another
    _, rows = wh.query(parquet, "SELECT grade_status FROM run_trends ORDER BY started_at")
    assert [r[0] for r in rows] == ["partial", "ok", "none"]

    app = typer.Typer()
    cli_warehouse.register(app)
    result = CliRunner().invoke(app, ["runs", "--warehouse", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "grades" in result.output and "partial" in result.output


def test_runs_recorded_before_the_column_still_list(tmp_path: Path) -> None:
    # Every run predates schema version 2: run_trends (and `veille runs`) still bind, NULL status.
    parquet = tmp_path / "parquet"
    result = wh.record_run_dir(_run_with_grades(tmp_path, [_grade("rouge_l", 0.5)]), parquet)
    for path in [*parquet.rglob("*.parquet")]:
        table = pq.read_table(path)
        if "grade_status" in table.column_names:
            table = table.drop_columns(["grade_status"])
        pq.write_table(table.replace_schema_metadata({b"veille.schema_version": b"1"}), path)
    _, rows = wh.query(parquet, "SELECT run_id, grade_status FROM run_trends")
    assert rows == [(result.run_id, None)]
    upgraded = wh.upgrade_table("runs", pq.read_table(result.files["runs"]), 1)
    assert upgraded.column("grade_status").to_pylist() == [None]
