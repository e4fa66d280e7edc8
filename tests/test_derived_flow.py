"""The night survives broken derived state and a full disk at recording (issue 26 items 2 and 4):
a garbage corpus database is moved aside and rebuilt; a recording that fails marks the run failed.

Each full offline night of the bundled corpus costs CPU, so one run is checked for several
properties: the garbage database is met by the first night of the derived-files test."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from veille.cli import warehouse as cli_warehouse

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]

GARBAGE = b"not a duckdb file \x00\x01" * 300


def _runs(warehouse: Path) -> tuple[int, str]:
    app = typer.Typer()
    cli_warehouse.register(app)
    result = CliRunner().invoke(app, ["runs", "--warehouse", str(warehouse)])
    return result.exit_code, result.stdout + result.stderr


def _newest(warehouse: Path) -> Path:
    return sorted((warehouse / "runs").iterdir(), key=lambda p: p.name)[-1]


def _database_moved_aside_and_rebuilt(folder: Path, database: Path, reliability) -> None:  # type: ignore[no-untyped-def]
    """A night that found ``database`` full of garbage: it moved it aside, said so, and rebuilt it.
    (Was its own test, test_a_garbage_corpus_database_is_moved_aside_and_rebuilt, one more full
    night; now checked on the first night of test_derived_files_moved_aside_are_alerts_of_the_night.)"""
    from veille.store.readers import document_snapshot

    warehouse = database.parent
    alerts = json.loads((folder / "alerts.json").read_text(encoding="utf-8"))
    rebuilt = [a for a in alerts if a["code"] == "ingest.database_rebuilt"]
    assert len(rebuilt) == 1 and str(database) in rebuilt[0]["message"]
    aside = [p for p in warehouse.iterdir() if p.name.startswith("veille.duckdb.unreadable-")]
    assert len(aside) == 1 and aside[0].read_bytes() == GARBAGE and aside[0].name in rebuilt[0]["message"]
    documents = len(document_snapshot(database))
    assert documents > 0
    code, out = _runs(warehouse)
    assert code == 0 and folder.name in out
    reliability.record(
        "garbage corpus database (`veille.duckdb` overwritten with bytes that are not a database)",
        "moved aside (warning alert naming it) and rebuilt from the corpus files; the night completes",
        f"run Completed, 1 ingest.database_rebuilt alert naming {aside[0].name.split('.unreadable-')[0]}"
        f".unreadable-<stamp>, {documents} documents ingested again, garbage kept; `veille runs` exit 0",
    )


def test_disk_full_at_recording_marks_the_run_failed_and_the_next_night_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundled_corpus: Path, reliability
) -> None:  # type: ignore[no-untyped-def]
    from veille.flows.veille import veille_flow

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(pq, "write_table", full)  # every Parquet write of the recording step
        state = veille_flow(corpus=str(bundled_corpus), backend="offline", return_state=True)
    assert state.is_failed()
    folder = _newest(warehouse)
    assert (folder / "report.md").exists()  # failed after the report
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "failed"  # on main: "completed" though the process fails
    assert "No space left on device" in run["error"] and "writing a Parquet file" in run["error"]
    assert str(warehouse / "parquet") in run["error"]  # the path is named
    state = veille_flow(corpus=str(bundled_corpus), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    code, out = _runs(warehouse)
    assert code == 0
    line = next(line for line in out.splitlines() if folder.name in line)
    assert "failed" in line
    reliability.record(
        "disk full at the recording step (every Parquet write raises ENOSPC), after the report",
        "the run's final status is failed (run.json, then `veille runs`); the error names the path and the "
        "operation; the next night records the run",
        "flow Failed; run.json status failed, error 'recording failed: OSError: [Errno 28] No space left on "
        "device (writing a Parquet file): <warehouse>/parquet/…'; next night Completed and `veille runs` lists "
        "the first run as failed",
    )


def test_derived_files_moved_aside_are_alerts_of_the_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundled_corpus: Path, reliability
) -> None:  # type: ignore[no-untyped-def]
    from veille.flows.veille import veille_flow
    from veille.run.summary import format_summary
    from veille.warehouse import committed_files, query, summary_index_path

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(warehouse))
    database = warehouse / "veille.duckdb"
    database.write_bytes(GARBAGE)  # the first night also meets a garbage corpus database
    first = veille_flow(corpus=str(bundled_corpus), backend="offline", return_state=True)
    assert first.is_completed(), first.message  # on main: every night fails until deleted by hand
    _database_moved_aside_and_rebuilt(Path(first.result()), database, reliability)
    parquet = warehouse / "parquet"
    victim = committed_files(parquet, "subtasks")[0]
    index = summary_index_path(parquet)
    for path in (victim, index):
        path.write_bytes(GARBAGE)

    second = veille_flow(corpus=str(bundled_corpus), backend="offline", return_state=True)
    assert second.is_completed(), second.message
    folder = Path(second.result())
    alerts = [
        a
        for a in json.loads((folder / "alerts.json").read_text("utf-8"))
        if a["code"] == "warehouse.file_set_aside"
    ]
    named = {subject: a for a in alerts for subject in a["subjects"]}
    assert set(named) == {str(victim), str(index)}  # each file named, none twice
    for path in (victim, index):
        (moved,) = [
            p for p in path.parent.iterdir() if p.name.lstrip(".").startswith(f"{path.name}.unreadable-")
        ]
        message = named[str(path)]["message"]
        assert f"{path} → {moved}" in message and moved.read_bytes() == GARBAGE  # where it went, kept
    assert "unreadable Parquet" in named[str(victim)]["message"]  # why
    assert f"rebuilt from {warehouse / 'runs' / victim.stem}" in named[str(victim)]["message"]
    assert pq.read_table(victim).num_rows > 0 and pq.read_table(index).num_rows == 2  # both rebuilt
    _, rows = query(
        parquet,
        "SELECT subjects FROM alerts WHERE run_id = ? AND code = 'warehouse.file_set_aside'",
        [folder.name],
    )
    assert sorted(s for (subjects,) in rows for s in subjects) == sorted([str(victim), str(index)])
    assert "warehouse.file_set_aside" in format_summary(folder)  # the run's summary shows it
    third = veille_flow(corpus=str(bundled_corpus), backend="offline", return_state=True)
    again = json.loads((Path(third.result()) / "alerts.json").read_text("utf-8"))
    assert not [a for a in again if a["code"] == "warehouse.file_set_aside"]  # once, not every night
    reliability.record(
        "a garbage Parquet file of an earlier run and a garbage summary index, found by the next night",
        "moved aside and rebuilt, each named in a warehouse.file_set_aside alert (file, where it went, why) "
        "in alerts.json, the alerts table and the run summary; no alert the night after",
        f"{len(alerts)} alert(s) naming both files and their .unreadable-<stamp> copies; subtasks file and "
        "index rebuilt; 0 such alerts on the third night",
    )
