"""A run is the flow run: attempts of one flow run (a Retry) are one row of `runs` and `run_trends`,
numbered in `run_attempts`; runs that died keep their start time and flow run id; the query timeout
and the refused INSTALL say what happened."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from veille import warehouse as wh
from veille.warehouse.runrow import START_FILE
from veille.warehouse.schema import MIGRATIONS
from veille.warehouse.synth import write_synthetic_run

T0 = datetime(2026, 3, 30, 2, 0, tzinfo=UTC)
FLOW_RUN = "6f1c0a52-0000-4000-8000-00000000abcd"


def _record(tmp_path: Path, started_at: datetime, seed: int, **kwargs: object) -> wh.RecordResult:
    run_dir = write_synthetic_run(tmp_path / "runs", started_at, seed=seed, **kwargs)  # type: ignore[arg-type]
    return wh.record_run_dir(run_dir, tmp_path / "parquet")


def _retried(tmp_path: Path, *, with_attempt: bool = True) -> tuple[wh.RecordResult, wh.RecordResult]:
    """One flow run, two attempts: the first failed, the Retry completed 20 minutes later."""
    first = _record(
        tmp_path,
        T0,
        1,
        status="failed",
        with_grades=False,
        run_fields={"flow_run_id": FLOW_RUN, **({"attempt": 1} if with_attempt else {})},
    )
    second = _record(
        tmp_path,
        T0 + timedelta(minutes=20),
        2,
        run_fields={"flow_run_id": FLOW_RUN, **({"attempt": 2} if with_attempt else {})},
    )
    return first, second


@pytest.mark.parametrize("with_attempt", [True, False], ids=["run.json attempt", "numbered by start"])
def test_a_retried_flow_run_is_one_run_with_two_attempts(tmp_path: Path, with_attempt: bool) -> None:
    first, second = _retried(tmp_path, with_attempt=with_attempt)
    other = _record(tmp_path, T0 + timedelta(days=1), 3)
    parquet = tmp_path / "parquet"

    _, runs = wh.query(
        parquet,
        "SELECT run_id, run_key, flow_run_attempt, flow_run_attempts, status FROM runs ORDER BY started_at",
    )
    assert runs == [
        (second.run_id, FLOW_RUN, 2, 2, "completed"),
        (other.run_id, other.summary["flow_run_id"], 1, 1, "completed"),
    ]
    _, attempts = wh.query(
        parquet,
        "SELECT run_id, flow_run_attempt, last_flow_run_attempt FROM run_attempts WHERE run_key = ? "
        "ORDER BY flow_run_attempt",
        [FLOW_RUN],
    )
    assert attempts == [(first.run_id, 1, False), (second.run_id, 2, True)]

    _, trends = wh.query(
        parquet,
        "SELECT run_id, scores_flow_run_attempt, flow_run_attempts, flow_run_cost_usd, flow_run_calls, "
        "flow_run_total_tokens FROM run_trends ORDER BY started_at",
    )
    assert [r[:3] for r in trends] == [(second.run_id, 2, 2), (other.run_id, 1, 1)]
    # The night's spend is every attempt's: the failed attempt's cost, calls and tokens stay in it.
    both = first.summary["cost_usd"] + second.summary["cost_usd"]
    assert first.summary["cost_usd"] > 0
    assert trends[0][3] == pytest.approx(both)
    assert trends[0][4] == first.summary["calls"] + second.summary["calls"]
    assert trends[0][5] == sum(
        r.summary[k] for r in (first, second) for k in ("input_tokens", "output_tokens", "reasoning_tokens")
    )
    _, by_role = wh.query(
        parquet, "SELECT sum(cost_usd), sum(calls) FROM cost_by_role WHERE run_date = ?", [T0.date()]
    )
    assert by_role[0][0] == pytest.approx(both, abs=1e-5)  # cost_by_role rounds to 6 decimals
    assert by_role[0][1] == first.summary["calls"] + second.summary["calls"]


def test_a_run_without_a_flow_run_is_its_own_run(tmp_path: Path) -> None:
    a = _record(tmp_path, T0, 1, run_fields={"flow_run_id": None})
    b = _record(tmp_path, T0 + timedelta(hours=1), 2, run_fields={"flow_run_id": None})
    _, rows = wh.query(
        tmp_path / "parquet", "SELECT run_id, run_key, flow_run_attempt FROM runs ORDER BY started_at"
    )
    assert rows == [(a.run_id, a.run_id, 1), (b.run_id, b.run_id, 1)]


def test_partitions_without_the_attempt_column_are_numbered(tmp_path: Path) -> None:
    """Schema version 2 files (no ``attempt``, v7's ``flow_run_attempt``) only: the views still bind and
    number the attempts."""
    first, second = _retried(tmp_path)
    parquet = tmp_path / "parquet"
    for result in (first, second):
        path = result.files["runs"]
        table = pq.read_table(path).drop_columns(["flow_run_attempt"])
        pq.write_table(table.replace_schema_metadata({b"veille.schema_version": b"2"}), path)
    index = wh.summary_index_path(parquet)
    pq.write_table(pq.read_table(index).drop_columns(["flow_run_attempt"]), index)
    for view, attempt in (("runs", "flow_run_attempt"), ("run_trends", "scores_flow_run_attempt")):
        _, rows = wh.query(parquet, f"SELECT run_id, {attempt}, flow_run_attempts FROM {view}")
        assert rows == [(second.run_id, 2, 2)], view
    # For Python readers, migration 3 adds the column (NULL), which migration 7 renames.
    table = pq.read_table(first.files["runs"])  # as version 2 wrote it: `attempts`, no attempt
    table = table.rename_columns(["attempts" if c == "call_attempts" else c for c in table.column_names])
    upgraded = wh.upgrade_table("runs", table, 2)
    assert upgraded.schema.field("flow_run_attempt").type == pa.int32()
    assert upgraded.column("flow_run_attempt").to_pylist() == [None]
    assert "attempt" not in upgraded.column_names and "attempts" not in upgraded.column_names
    assert [m.version for m in MIGRATIONS][2] == 3 <= wh.SCHEMA_VERSION


def test_a_run_that_died_keeps_its_start_time_and_flow_run_id(tmp_path: Path) -> None:
    """No run.json (killed): started_at from the run id, flow_run_id from start.json or the journal."""
    parquet = tmp_path / "parquet"
    from_start = write_synthetic_run(tmp_path / "runs", T0, seed=1)
    (from_start / "run.json").unlink()
    (from_start / START_FILE).write_text(
        json.dumps({"run_id": from_start.name, "flow_run_id": FLOW_RUN, "attempt": 1, "corpus_dir": "corpus"})
    )
    from_journal = write_synthetic_run(tmp_path / "runs", T0 + timedelta(hours=1), seed=2)
    (from_journal / "run.json").unlink()
    lines = (from_journal / "calls.jsonl").read_text().splitlines()
    (from_journal / "calls.jsonl").write_text(
        "\n".join(json.dumps({**json.loads(line), "flow_run_id": "journal-flow-run"}) for line in lines)
        + "\n"
    )
    for folder in (from_start, from_journal):
        wh.record_run_dir(folder, parquet)
    _, rows = wh.query(
        parquet,
        "SELECT run_id, flow_run_id, status, strftime(started_at, '%Y-%m-%d %H:%M:%S'), missing_files "
        "FROM runs ORDER BY started_at",
    )
    assert rows == [
        (from_start.name, FLOW_RUN, "failed", "2026-03-30 02:00:00", ["run.json"]),
        (from_journal.name, "journal-flow-run", "failed", "2026-03-30 03:00:00", ["run.json"]),
    ]


def test_a_query_over_the_timeout_is_interrupted(tmp_path: Path) -> None:
    _record(tmp_path, T0, 1)
    started = time.monotonic()
    with pytest.raises(
        wh.QueryTimeoutError, match=r"longer than the 1 s query timeout \(--timeout, setting query_timeout_s"
    ):
        # range(1e11) does not bind in DuckDB 2 (DOUBLE): the same 10^11 rows as a BIGINT.
        wh.query(tmp_path / "parquet", "SELECT count(*) FROM range(100000000000)", timeout_s=1)
    assert time.monotonic() - started < 1 + 8  # the connection (views) + the interrupt, under load


def test_install_is_refused_by_its_name(tmp_path: Path) -> None:
    _record(tmp_path, T0, 1)
    for statement, kind in [("INSTALL httpfs", "INSTALL"), ("LOAD httpfs", "LOAD")]:
        with pytest.raises(wh.ReadOnlyQueryError, match=f"read-only: {kind} statements are refused"):
            wh.query(tmp_path / "parquet", statement)


def test_alerts_of_files_before_version_4_get_their_subject_as_subjects(tmp_path: Path) -> None:
    """Schema version 3 alerts (no ``subjects``): the view still binds, migration 4 lists the subject."""
    result = _record(tmp_path, T0, 1)
    path = result.files["alerts"]
    table = pq.read_table(path)
    assert table.num_rows > 0 and "subjects" in table.column_names
    old = table.drop_columns(["subjects"]).replace_schema_metadata({b"veille.schema_version": b"3"})
    pq.write_table(old, path)
    _, rows = wh.query(tmp_path / "parquet", "SELECT subject, subjects FROM alerts ORDER BY seq")
    assert len(rows) == table.num_rows and all(subjects is None for _, subjects in rows)
    upgraded = wh.upgrade_table("alerts", pq.read_table(path), 3)
    expected = [[s] if s else [] for s in table.column("subject").to_pylist()]
    assert upgraded.column("subjects").to_pylist() == expected
