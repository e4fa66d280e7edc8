"""Partitions written under every schema version, 1 … current, read back with pandas and DuckDB
without losing a column once `veille warehouse upgrade` has rewritten them (issue 25).

The files of version k are built from a current run by undoing each later migration, newest first:
its renamed columns get their old names back (``Migration.renamed``) and what it adds is removed
(found by running the migration on the table without that column), so a migration registered
later is covered without touching this test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from veille import warehouse as wh
from veille.cli import warehouse as cli_warehouse
from veille.warehouse.schema import MIGRATIONS, SCHEMA_VERSION, TABLES
from veille.warehouse.synth import write_synthetic_run
from veille.warehouse.upgrade import conform, upgrade_warehouse

T0 = datetime(2026, 1, 5, 2, 0, tzinfo=UTC)


def _added_by(version: int, name: str, table: pa.Table) -> list[str]:
    """The columns migration ``version`` adds to table ``name`` (of that version: it puts them back
    when missing)."""
    migration = next(m for m in MIGRATIONS if m.version == version)
    return [
        c for c in table.column_names if c in migration.upgrade(name, table.drop_columns([c])).column_names
    ]


def _undo(version: int, name: str, table: pa.Table) -> pa.Table:
    """``table`` (of ``version``) as version ``version - 1`` wrote it."""
    migration = next(m for m in MIGRATIONS if m.version == version)
    back = {new: old for old, new in migration.renamed.get(name, {}).items()}
    table = table.drop_columns(_added_by(version, name, table))
    return table.rename_columns([back.get(c, c) for c in table.column_names])


def _as_of(version: int, name: str, table: pa.Table) -> pa.Table:
    for later in range(SCHEMA_VERSION, version, -1):
        table = _undo(later, name, table)
    return table


def _downgrade(path: Path, name: str, version: int) -> None:
    table = _as_of(version, name, pq.ParquetFile(path).read())
    pq.write_table(table.replace_schema_metadata({b"veille.schema_version": str(version).encode()}), path)


@pytest.fixture()
def mixed(tmp_path: Path) -> tuple[Path, dict[int, wh.RecordResult]]:
    """One run per schema version, each on its own night, its files rewritten as that version wrote them."""
    parquet = tmp_path / "parquet"
    runs: dict[int, wh.RecordResult] = {}
    for version in range(1, SCHEMA_VERSION + 1):
        folder = write_synthetic_run(tmp_path / "runs", T0 + timedelta(days=version), seed=version)
        runs[version] = wh.record_run_dir(folder, parquet)
        for name, path in runs[version].files.items():
            _downgrade(path, name, version)
    wh.summary_index_path(parquet).unlink()
    return parquet, runs


def test_every_migration_adds_or_renames_what_its_description_names() -> None:
    # The discovery above must see something for every migration after the first, or the
    # version-k files would be identical to current ones and the test would prove nothing.
    run = {name: pa.Table.from_pylist([], schema=schema) for name, schema in TABLES.items()}
    for migration in MIGRATIONS[1:]:
        at = {name: _as_of(migration.version, name, table) for name, table in run.items()}
        added = [c for name, table in at.items() for c in _added_by(migration.version, name, table)]
        renamed = [f"{n}.{old}" for n, pairs in migration.renamed.items() for old in pairs]
        assert added or renamed, migration.description
        for name, table in at.items():  # undone then redone: the same columns again
            redone = migration.upgrade(name, _undo(migration.version, name, table))
            assert sorted(redone.column_names) == sorted(table.column_names), (migration.description, name)


def test_old_partitions_lose_columns_before_the_upgrade(
    mixed: tuple[Path, dict[int, wh.RecordResult]],
) -> None:
    parquet, _runs = mixed
    lost = {
        name
        for name in TABLES
        if (parquet / name).exists()
        and set(TABLES[name].names) - set(pd.read_parquet(parquet / name).columns)
    }
    # What the issue saw: pandas takes one file's schema. At least one table shows it here.
    assert lost


def test_after_the_upgrade_pandas_and_duckdb_read_every_column_of_every_table(
    mixed: tuple[Path, dict[int, wh.RecordResult]],
) -> None:
    parquet, runs = mixed
    result = upgrade_warehouse(parquet)
    assert result.rewritten and all(wh.file_schema_version(p) == SCHEMA_VERSION for p in result.rewritten)
    for name, schema in TABLES.items():
        files = wh.committed_files(parquet, name)
        if not files:
            continue
        expected_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files)
        frame = pd.read_parquet(parquet / name)
        assert set(schema.names) <= set(frame.columns), name
        assert len(frame) == expected_rows, name
        glob = str(parquet / name / "run_date=*" / "*.parquet")
        relation = duckdb.sql(f"SELECT * FROM read_parquet('{glob}', hive_partitioning = false)")
        assert relation.columns == schema.names, name  # every file alike: no union_by_name needed
        assert len(relation.fetchall()) == expected_rows, name
    # A migration's default reaches every reader: version-1 alerts list their one subject.
    alerts = pd.read_parquet(parquet / "alerts")
    first = alerts[alerts["run_id"] == runs[1].run_id]
    assert len(first) and all(
        list(s) == ([subject] if subject else [])
        for s, subject in zip(first["subjects"], first["subject"], strict=True)
    )
    # The views agree: every run is there, once.
    _, rows = wh.query(parquet, "SELECT count(*) FROM runs")
    assert rows == [(SCHEMA_VERSION,)]


def test_the_upgrade_is_idempotent_and_the_cli_says_what_it_did(
    mixed: tuple[Path, dict[int, wh.RecordResult]], tmp_path: Path
) -> None:
    parquet, _runs = mixed
    app = typer.Typer()
    cli_warehouse.register(app)
    first = CliRunner().invoke(app, ["warehouse", "upgrade", "--warehouse", str(tmp_path)])
    assert first.exit_code == 0, first.stderr
    rewritten = int(first.stdout.split()[0])
    assert rewritten > 0
    before = {p: p.stat().st_mtime_ns for p in parquet.rglob("*.parquet")}
    again = CliRunner().invoke(app, ["warehouse", "upgrade", "--warehouse", str(tmp_path)])
    assert again.exit_code == 0 and again.stdout.startswith("0 file(s) rewritten")
    assert {p: p.stat().st_mtime_ns for p in parquet.rglob("*.parquet")} == before


def test_a_column_the_schema_does_not_know_is_never_dropped(tmp_path: Path) -> None:
    table = pa.Table.from_pylist([], schema=TABLES["alerts"]).append_column(
        "mystery", pa.array([], pa.string())
    )
    with pytest.raises(wh.WarehouseError, match=r"\['mystery'\].*left as is"):
        conform("alerts", table, tmp_path / "x.parquet")


def test_the_dictionary_view_lists_every_column_of_every_table(
    mixed: tuple[Path, dict[int, wh.RecordResult]],
) -> None:
    parquet, _runs = mixed
    _, rows = wh.query(parquet, "SELECT table_name, column_name, data_type, nullable FROM dictionary")
    listed = {(t, c): (d, n) for t, c, d, n in rows}
    for name, schema in TABLES.items():
        for f in schema:
            assert listed.pop((name, f.name)) == (str(f.type), f.nullable)
        assert listed.pop((name, "run_date"))[0] == "date32[day]"
    assert listed == {}


def test_a_run_killed_between_files_is_invisible_in_every_view(tmp_path: Path, reliability) -> None:  # type: ignore[no-untyped-def]
    """Issue 26 item 3: every table but `runs` written, then the process died before the marker."""
    parquet = tmp_path / "parquet"
    kept = wh.record_run_dir(write_synthetic_run(tmp_path / "runs", T0, seed=1), parquet)
    torn = wh.record_run_dir(write_synthetic_run(tmp_path / "runs", T0 + timedelta(hours=1), seed=2), parquet)
    torn.files["runs"].unlink()  # the commit marker never landed
    wh.summary_index_path(parquet).unlink()
    assert any(p.exists() for name, p in torn.files.items() if name != "runs")  # its other files are there
    con = wh.connect(parquet)
    try:
        views = [
            r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
        ]
        checked = 0
        for view in views:
            columns = [c[0] for c in con.execute(f'DESCRIBE "{view}"').fetchall()]
            if "run_id" not in columns:
                continue
            run_ids = {r[0] for r in con.execute(f'SELECT DISTINCT run_id FROM "{view}"').fetchall()}
            assert torn.run_id not in run_ids, view
            checked += 1
    finally:
        con.close()
    assert checked >= len(TABLES)  # every table view, and the trend views with a run_id
    _, rows = wh.query(parquet, "SELECT count(*) FROM llm_calls WHERE run_id = ?", [kept.run_id])
    assert rows[0][0] > 0  # the committed run is still there
    reliability.record(
        "a run's recording killed between table files (every table file written but the `runs` commit marker)",
        "the run's rows are visible in no view (one filter on the commit marker in the view layer); "
        "committed runs unchanged",
        f"{checked} views with a run_id read: 0 rows of the uncommitted run; the committed run's "
        f"{rows[0][0]} llm_calls rows still there",
    )


def test_a_run_without_calls_does_not_list_the_journal_as_missing(tmp_path: Path) -> None:
    folder = write_synthetic_run(tmp_path / "runs", T0, seed=1)
    (folder / "calls.jsonl").unlink()  # an unchanged rerun asks no model: its journal never exists
    result = wh.record_run_dir(folder, tmp_path / "parquet")
    assert "calls.jsonl" not in result.missing_files
    assert result.rows["llm_calls"] == 0 and result.summary["calls"] == 0
