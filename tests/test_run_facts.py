"""What a run records about itself for the warehouse: start.json when it starts (so a run that dies
keeps its flow run id and start time once recovered), and runs.models from the calls made."""

from __future__ import annotations

import json
from pathlib import Path

from veille.journal import CallRecord
from veille.run.recovery import LOCK_FILE, recover_dead_runs
from veille.run.runlog import RunLog
from veille.settings import Settings
from veille.warehouse import query
from veille.warehouse.runrow import START_FILE


def _record(role: str, model: str, run_id: str = "r") -> CallRecord:
    return CallRecord(
        run_id=run_id,
        call_id=f"{role}-1",
        attempt=1,
        flow_run_id="7d3e0b9a-1111-4222-8333-444455556666",
        role=role,
        backend="offline",
        model=model,
        status="ok",
        started_at="2026-03-30T02:00:01+00:00",
    )


def test_models_are_those_of_the_calls_made(tmp_path: Path) -> None:
    run = RunLog.start(Settings.from_params(warehouse=str(tmp_path), backend="offline"))
    info = run.info("offline", [_record("planner", "offline"), _record("analyst", "offline")])
    # No writer/critic/reviser/judge call: no model listed for them (the defaults name Gemini models).
    assert info.models == {"planner": "offline", "analyst": "offline"}
    assert run.info("offline", []).models == {}


def test_a_dead_run_is_recovered_with_its_start_time_and_flow_run_id(tmp_path: Path) -> None:
    settings = Settings.from_params(warehouse=str(tmp_path), backend="offline")
    run = RunLog.start(settings)
    start = json.loads((run.folder.path / START_FILE).read_text(encoding="utf-8"))
    assert start["run_id"] == run.folder.run_id and start["started_at"] == run.started.isoformat()
    assert start["flow_run_id"] is None and start["attempt"] is None  # not inside a flow run
    # The flow run id reaches start.json inside a flow; here, as a dead run would have it:
    start["flow_run_id"], start["attempt"] = "7d3e0b9a-1111-4222-8333-444455556666", 2
    (run.folder.path / START_FILE).write_text(json.dumps(start), encoding="utf-8")
    # Killed after one call: a journal, an unlocked .running, no run.json.
    (run.folder.path / "calls.jsonl").write_text(
        _record("planner", "offline", run.folder.run_id).model_dump_json() + "\n", encoding="utf-8"
    )
    (run.folder.path / LOCK_FILE).write_text("12345\n", encoding="utf-8")

    recovery = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    assert recovery.run_ids == [run.folder.run_id]
    _, rows = query(
        settings.parquet_dir,
        "SELECT run_id, flow_run_id, flow_run_attempt, status, started_at IS NOT NULL, corpus_dir, missing_files "
        "FROM run_attempts",
    )
    assert rows == [
        (
            run.folder.run_id,
            "7d3e0b9a-1111-4222-8333-444455556666",
            2,
            "failed",
            True,
            str(settings.corpus_dir),
            sorted(
                [
                    "run.json",
                    "plan.json",
                    "findings.json",
                    "alerts.json",
                    "review.json",
                    "sources.json",
                    "report.md",
                    "documents.json",
                ]
            ),
        )
    ]
