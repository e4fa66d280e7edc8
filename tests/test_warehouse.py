"""The Parquet warehouse: schemas, atomic writes, one write per run id, migrations, views."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from veille import warehouse as wh
from veille.alerts import Alert
from veille.journal import CallRecord
from veille.warehouse import commit, queries
from veille.warehouse.synth import write_synthetic_run

T0 = datetime(2026, 3, 30, 2, 0, tzinfo=UTC)


def _record(tmp_path: Path, started_at: datetime = T0, **kwargs: object) -> wh.RecordResult:
    run_dir = write_synthetic_run(tmp_path / "runs", started_at, **kwargs)  # type: ignore[arg-type]
    return wh.record_run_dir(run_dir, tmp_path / "parquet")


# --- schemas -------------------------------------------------------------------------------------


def test_every_table_is_written_with_its_declared_schema(tmp_path: Path) -> None:
    result = _record(tmp_path)
    assert set(result.files) == set(wh.TABLES)
    for name, path in result.files.items():
        assert path == tmp_path / "parquet" / name / "run_date=2026-03-30" / f"{result.run_id}.parquet"
        schema = pq.read_schema(path)
        assert schema.equals(wh.TABLES[name]), name
        assert schema.metadata[b"veille.schema_version"] == str(wh.SCHEMA_VERSION).encode()
        assert pq.read_table(path).num_rows == result.rows[name]
    assert result.rows["llm_calls"] == 60 and result.rows["runs"] == 1


def test_llm_calls_and_alerts_keep_every_field_of_their_models() -> None:
    calls = set(wh.TABLES["llm_calls"].names)
    from veille.warehouse.rows import JOURNAL_COLUMNS

    assert {JOURNAL_COLUMNS.get(f, f) for f in CallRecord.model_fields} <= calls
    assert set(Alert.model_fields) <= set(wh.TABLES["alerts"].names)


def test_run_summary_matches_the_journal(tmp_path: Path) -> None:
    result = _record(tmp_path, unpriced_model=True)
    calls = pq.read_table(result.files["llm_calls"]).to_pylist()
    summary = result.summary
    assert summary["calls"] == len({c["call_id"] for c in calls})
    assert summary["input_tokens"] == sum(c["input_tokens"] for c in calls)
    assert summary["cost_usd"] == pytest.approx(sum(c["cost_usd"] or 0 for c in calls))
    assert summary["cost_complete"] is False  # one call had no price: the total is a lower bound
    assert dict(summary["final_scores"]).keys() == {"rouge_l", "numeric", "judge", "judge+numbers"}
    assert summary["revision_gain"] == pytest.approx(0.05)
    assert calls[0]["started_at"].tzinfo is not None


# --- atomic writes, one write per run id ---------------------------------------------------------


def test_crash_mid_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", T0)
    real_write = pq.write_table
    written: list[str] = []

    def crash_on_alerts(table: pa.Table, where: object, **kwargs: object) -> None:
        if table.schema.metadata[b"veille.table"] == b"alerts":
            where.write(b"PAR1 half a file")  # type: ignore[attr-defined]
            raise OSError("disk full")
        written.append(table.schema.metadata[b"veille.table"].decode())
        real_write(table, where, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(commit.pq, "write_table", crash_on_alerts)
    with pytest.raises(OSError, match="disk full"):
        wh.record_run_dir(run_dir, tmp_path / "parquet")
    alerts_dir = tmp_path / "parquet" / "alerts" / "run_date=2026-03-30"
    assert list(alerts_dir.iterdir()) == []  # neither the half file nor its temporary name
    assert "runs" not in written  # the commit marker was never written
    assert not (tmp_path / "parquet" / "runs").exists()

    # The interrupted recording is retried and completes.
    monkeypatch.setattr(commit.pq, "write_table", real_write)
    result = wh.record_run_dir(run_dir, tmp_path / "parquet")
    assert all(p.exists() for p in result.files.values())


def test_leftover_temporary_files_are_ignored_by_readers(tmp_path: Path) -> None:
    result = _record(tmp_path)
    partition = result.files["llm_calls"].parent
    (partition / f".{result.run_id}.deadbeef.tmp").write_bytes(b"PAR1 torn")  # a killed writer's leftover
    _columns, rows = wh.query(tmp_path / "parquet", "SELECT count(*) FROM llm_calls")
    assert rows == [(60,)]
    assert [p.name for p in wh.committed_files(tmp_path / "parquet", "llm_calls")] == [
        f"{result.run_id}.parquet"
    ]


def test_a_run_id_is_never_written_twice(tmp_path: Path) -> None:
    result = _record(tmp_path)
    before = {name: path.read_bytes() for name, path in result.files.items()}
    run_dir = tmp_path / "runs" / result.run_id
    (run_dir / "report.md").write_text("# rewritten\n", encoding="utf-8")
    with pytest.raises(wh.RunAlreadyRecordedError, match="never written twice"):
        wh.record_run_dir(run_dir, tmp_path / "parquet")
    assert {name: path.read_bytes() for name, path in result.files.items()} == before


def test_concurrent_commit_of_the_same_run_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", T0)
    tables = wh.build_tables(run_dir)
    # Another writer commits between our existence check and our commit.
    monkeypatch.setattr(commit, "is_recorded", lambda *a: False)
    wh.write_run_tables(tmp_path / "parquet", tables, run_id=run_dir.name, run_date=T0.date())
    with pytest.raises(wh.RunAlreadyRecordedError):
        wh.write_run_tables(tmp_path / "parquet", tables, run_id=run_dir.name, run_date=T0.date())
    runs_dir = tmp_path / "parquet" / "runs" / "run_date=2026-03-30"
    assert [p.name for p in runs_dir.iterdir()] == [f"{run_dir.name}.parquet"]


def test_tables_with_a_wrong_schema_are_refused(tmp_path: Path) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", T0)
    tables = wh.build_tables(run_dir)
    tables["alerts"] = tables["alerts"].drop_columns(["subject"])
    with pytest.raises(wh.WarehouseError, match="alerts"):
        wh.write_run_tables(tmp_path / "parquet", tables, run_id=run_dir.name, run_date=T0.date())


# --- failed and partial runs ---------------------------------------------------------------------


def test_failed_run_records_what_exists(tmp_path: Path) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", T0, status="failed", with_grades=False)
    for name in ("report.md", "review.json", "sources.json", "findings.json"):
        (run_dir / name).unlink()
    with (run_dir / "calls.jsonl").open("a", encoding="utf-8") as journal:
        journal.write('{"run_id": "x", "call_id": "trunc')  # crash mid-append
    result = wh.record_run_dir(run_dir, tmp_path / "parquet")
    assert result.summary["status"] == "failed"
    assert result.missing_files == ["findings.json", "report.md", "review.json", "sources.json"]
    assert result.rows["reports"] == 0 and result.rows["review_rounds"] == 0
    assert result.rows["llm_calls"] == 60
    alerts = pq.read_table(result.files["alerts"]).to_pylist()
    assert any(a["code"] == "record.bad_journal_line" and a["subject"] == "calls.jsonl:61" for a in alerts)
    assert all(r["status"] == "not_run" for r in pq.read_table(result.files["subtasks"]).to_pylist())


def test_malformed_run_file_is_named(tmp_path: Path) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", T0)
    (run_dir / "alerts.json").write_text('{"code": "x"}', encoding="utf-8")
    with pytest.raises(wh.WarehouseError, match=r"alerts\.json: expected a JSON list"):
        wh.build_tables(run_dir)
    (run_dir / "alerts.json").write_text('[{"code": "x"}]', encoding="utf-8")
    with pytest.raises(wh.WarehouseError, match=r"alerts\.json: alert #1"):
        wh.build_tables(run_dir)


def test_grader_failure_becomes_an_alert(tmp_path: Path) -> None:
    run_dir = write_synthetic_run(tmp_path / "runs", T0)
    grades = json.loads((run_dir / "grades.json").read_text())
    grades.append(
        {
            "grader": "judge+numbers",
            "version": "1",
            "target": "final",
            "score": None,
            "model": None,
            "details": {"error": "TransientModelError: 503"},
        }
    )
    (run_dir / "grades.json").write_text(json.dumps(grades))
    result = wh.record_run_dir(run_dir, tmp_path / "parquet")
    codes = [a["code"] for a in pq.read_table(result.files["alerts"]).to_pylist()]
    assert "grade.failed" in codes


def test_run_date_is_the_utc_start_date(tmp_path: Path) -> None:
    # 23:30 in Paris on the 29th is 21:30 UTC on the 29th; 01:30 Paris on the 31st is the 30th UTC.
    late = datetime(2026, 3, 31, 1, 30, tzinfo=UTC) - timedelta(hours=2)
    result = _record(tmp_path, late)
    assert result.run_date == date(2026, 3, 30)
    assert wh.run_date_of("20260330T233000Z-abcdef") == date(2026, 3, 30)
    with pytest.raises(wh.WarehouseError, match="run date"):
        wh.run_date_of("not-a-run-id")


# --- migrations ----------------------------------------------------------------------------------


def test_migrations_are_registered_in_order() -> None:
    assert [m.version for m in wh.MIGRATIONS] == list(range(1, wh.SCHEMA_VERSION + 1))
    registry: list[wh.Migration] = []
    wh.register_migration(wh.Migration(1, "initial"), registry)
    with pytest.raises(wh.WarehouseError, match="out of order"):
        wh.register_migration(wh.Migration(3, "skips 2"), registry)
    with pytest.raises(wh.WarehouseError, match="out of order"):
        wh.register_migration(wh.Migration(1, "again"), registry)


def test_old_partitions_stay_readable_after_a_schema_change(tmp_path: Path) -> None:
    new = _record(tmp_path, T0)
    # An "older" partition written before a hypothetical column existed (schema version 0 → 1).
    old_run = write_synthetic_run(tmp_path / "runs", T0 - timedelta(days=1), seed=7)
    tables = wh.build_tables(old_run)
    parquet = tmp_path / "parquet"
    for name, table in tables.items():
        old = table.drop_columns(["revision_gain", "missing_files"]) if name == "runs" else table
        path = wh.partition_path(parquet, name, (T0 - timedelta(days=1)).date(), old_run.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(old.replace_schema_metadata({b"veille.schema_version": b"0"}), path)
    _, rows = wh.query(parquet, "SELECT run_id, revision_gain FROM runs ORDER BY run_date")
    assert rows[0] == (old_run.name, None) and rows[1][0] == new.run_id

    # A migration brings an old file's table to the current schema for Python readers.
    def add_columns(name: str, table: pa.Table) -> pa.Table:
        if name != "runs":
            return table
        table = table.append_column(
            pa.field("revision_gain", pa.float64()), pa.nulls(table.num_rows, pa.float64())
        )
        return table.append_column(
            pa.field("missing_files", pa.list_(pa.string())), pa.array([[]], pa.list_(pa.string()))
        )

    path = wh.partition_path(parquet, "runs", (T0 - timedelta(days=1)).date(), old_run.name)
    assert wh.file_schema_version(path) == 0
    upgraded = wh.upgrade_table("runs", pq.read_table(path), 0, [wh.Migration(1, "add columns", add_columns)])
    assert set(upgraded.column_names) == set(wh.TABLES["runs"].names)


# --- views ---------------------------------------------------------------------------------------


def test_views_span_several_runs_on_several_dates(tmp_path: Path) -> None:
    dates = [T0, T0 + timedelta(days=1), T0 + timedelta(days=1, hours=12), T0 + timedelta(days=7)]
    results = [_record(tmp_path, d, seed=i) for i, d in enumerate(dates)]
    parquet = tmp_path / "parquet"
    _, rows = wh.query(parquet, "SELECT run_date, count(*) FROM runs GROUP BY 1 ORDER BY 1")
    assert rows == [(date(2026, 3, 30), 1), (date(2026, 3, 31), 2), (date(2026, 4, 6), 1)]
    _, rows = wh.query(parquet, "SELECT count(*), count(DISTINCT run_id) FROM llm_calls")
    assert rows == [(240, 4)]
    _, trend = wh.query(
        parquet, "SELECT run_id, flow_run_cost_usd, score_judge FROM run_trends ORDER BY started_at"
    )
    assert [r[0] for r in trend] == [r.run_id for r in results]
    assert [r[1] for r in trend] == pytest.approx([r.summary["cost_usd"] for r in results])
    _, by_role = wh.query(
        parquet,
        "SELECT role, sum(calls) FROM cost_by_role WHERE run_date = DATE '2026-03-31' GROUP BY 1 ORDER BY 1",
    )
    assert dict(by_role)["planner"] == 2  # two runs that night, one planner call each
    _, gain = wh.query(parquet, "SELECT count(*), bool_and(improved) FROM revision_gain")
    assert gain == [(4, True)]
    _, scores = wh.query(parquet, "SELECT DISTINCT grader FROM score_trend ORDER BY 1")
    assert [s[0] for s in scores] == ["judge", "judge+numbers", "numeric", "rouge_l"]
    _, alerts = wh.query(parquet, "SELECT sum(alerts) FROM alerts_by_code")
    assert alerts[0][0] == sum(r.rows["alerts"] for r in results)


def test_tables_without_files_are_empty_views(tmp_path: Path) -> None:
    _record(tmp_path)
    for path in (tmp_path / "parquet" / "grader_scores").rglob("*.parquet"):
        path.unlink()
    columns, rows = wh.query(tmp_path / "parquet", "SELECT * FROM grader_scores")
    assert rows == [] and columns == [*wh.TABLES["grader_scores"].names, "run_date"]


def test_no_warehouse_yet_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(wh.WarehouseError, match="no warehouse here yet"):
        wh.query(tmp_path / "nothing", "SELECT 1")


# --- summary index and lazy views ----------------------------------------------------------------


def _trend_ids(parquet: Path) -> list[str]:
    _, rows = wh.query(parquet, "SELECT run_id FROM run_trends ORDER BY run_id")
    return [r[0] for r in rows]


def test_summary_index_lists_every_committed_run(tmp_path: Path) -> None:
    results = [_record(tmp_path, T0 + timedelta(days=i), seed=i) for i in range(3)]
    index = pq.read_table(wh.summary_index_path(tmp_path / "parquet"))
    assert sorted(index.column("run_id").to_pylist()) == sorted(r.run_id for r in results)
    assert index.column("run_date").to_pylist() == [(T0 + timedelta(days=i)).date() for i in range(3)]
    _, from_index = wh.query(
        tmp_path / "parquet", "SELECT run_id, flow_run_cost_usd FROM run_trends ORDER BY run_id"
    )
    _, from_files = wh.query(tmp_path / "parquet", "SELECT run_id, cost_usd FROM runs ORDER BY run_id")
    assert from_index == from_files


def test_trends_stay_right_when_the_index_lags_or_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parquet = tmp_path / "parquet"
    first = _record(tmp_path, T0, seed=1)
    real_update = wh.update_summary_index

    def broken(_: Path) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(commit, "update_summary_index", broken)
    second = _record(tmp_path, T0 + timedelta(days=1), seed=2)  # committed, index not updated
    assert pq.read_table(wh.summary_index_path(parquet)).column("run_id").to_pylist() == [first.run_id]
    assert _trend_ids(parquet) == sorted([first.run_id, second.run_id])  # the unindexed run is read too

    monkeypatch.setattr(commit, "update_summary_index", real_update)
    third = _record(tmp_path, T0 + timedelta(days=2), seed=3)  # the next commit repairs the index
    assert len(pq.read_table(wh.summary_index_path(parquet))) == 3

    wh.summary_index_path(parquet).unlink()
    assert _trend_ids(parquet) == sorted(r.run_id for r in (first, second, third))

    wh.update_summary_index(parquet)
    for path in parquet.rglob(f"{second.run_id}.parquet"):  # an operator removes a run
        path.unlink()
    assert _trend_ids(parquet) == sorted([first.run_id, third.run_id])  # index lists a gone run: ignored


def test_concurrent_recordings_keep_every_run_in_the_index(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    folders = [write_synthetic_run(tmp_path / "runs", T0 + timedelta(hours=i), seed=i) for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda folder: wh.record_run_dir(folder, tmp_path / "parquet"), folders))
    index = pq.read_table(wh.summary_index_path(tmp_path / "parquet"))
    assert sorted(index.column("run_id").to_pylist()) == sorted(f.name for f in folders)


def test_only_the_views_a_query_reads_are_created(tmp_path: Path) -> None:
    _record(tmp_path)
    con = wh.connect(tmp_path / "parquet", queries=["SELECT * FROM run_trends"])
    try:
        views = {
            r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
        }
    finally:
        con.close()
    assert views == {"run_trends", "runs_summary"}  # not the nine table views
    # A reference the lexical scan misses ("FROM a, b") is retried with every view.
    _, rows = wh.query(tmp_path / "parquet", "SELECT count(*) FROM runs, alerts_by_code")
    assert rows[0][0] >= 0


def test_schema_and_views_are_documented() -> None:
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "warehouse.md").read_text(encoding="utf-8")
    assert f"**Schema version: {wh.SCHEMA_VERSION}.**" in doc
    for migration in wh.MIGRATIONS:
        assert re.search(rf"^\| {migration.version} \|", doc, flags=re.MULTILINE), migration
    for name, schema in wh.TABLES.items():
        section = doc.split(f"### `{name}`", 1)[1].split("\n#", 1)[0]
        documented = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
        assert documented == schema.names, name
    for view in queries._view_catalogue(wh.VIEWS_DIR):
        assert f"`{view}`" in doc, view
