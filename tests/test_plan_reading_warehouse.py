"""Schema version 9 (issue 37 item 4): the reading budget and what was not read reach the Parquet
tables, from plan.json ``reading`` and findings.json ``read``; a version-7 table gets NULLs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

import veille.warehouse as wh
from veille.warehouse.reading_columns import add_reading_columns
from veille.warehouse.synth import write_synthetic_run


def test_reading_columns_come_from_plan_and_findings(tmp_path: Path) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", datetime(2026, 12, 1, 2, 0, tzinfo=UTC))
    plan = json.loads((run_dir / "plan.json").read_text(encoding="utf-8"))
    findings = json.loads((run_dir / "findings.json").read_text(encoding="utf-8"))
    first, second = plan["sub_tasks"][0]["id"], plan["sub_tasks"][1]["id"]
    plan["reading"] = {
        "budget": 2000,
        "unplaced": ["doc-99"],
        "not_read": {second: {"doc-07": {"tokens_read": 10, "tokens_total": 900}}},
    }
    findings[first]["read"] = {"doc-03": {"tokens_read": 400, "tokens_total": 5000}}
    findings.pop(second, None)  # a branch that did not run: the plan's forecast stands
    (run_dir / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    (run_dir / "findings.json").write_text(json.dumps(findings), encoding="utf-8")
    tables = wh.build_tables(run_dir)
    assert tables["plans"].column("relevant_not_read").to_pylist() == [["doc-99"]]
    rows = {r["subtask_id"]: r for r in tables["subtasks"].to_pylist()}
    assert rows[first]["reading_budget"] == 2000 and rows[first]["docs_read_in_part"] == ["doc-03"]
    assert rows[second]["docs_read_in_part"] == ["doc-07"]


def test_a_version_7_table_gets_null_reading_columns() -> None:
    old = pa.table({"run_id": ["r"], "subtask_id": ["st-1"], "figures": pa.array([3], pa.int32())})
    new = add_reading_columns("subtasks", old)
    assert new.column_names == ["run_id", "subtask_id", "figures", "reading_budget", "docs_read_in_part"]
    assert new.column("reading_budget").to_pylist() == [None]
    assert add_reading_columns("alerts", old) is old
