"""Derived state rebuilds itself (issue 26 item 2): a garbage summary index, a garbage Parquet file of
one run and a dead run's garbage run.json never stop the later nights; nothing is deleted."""

from __future__ import annotations

import errno
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veille.cli import warehouse as cli_warehouse
from veille.run import recovery
from veille.run.folder import mark_failed
from veille.run.recovery import LOCK_FILE, lock_run_folder, recover_dead_runs
from veille.settings import Settings
from veille.warehouse import (
    committed_files,
    query,
    record_run_dir,
    summary_index_path,
    update_summary_index,
)
from veille.warehouse.commit import write_atomic
from veille.warehouse.repair import repair_unreadable_files
from veille.warehouse.synth import write_synthetic_run

GARBAGE = b"PAR1 this is not a Parquet file \x00\xff" * 40


def _warehouse(root: Path, nights: int = 3) -> Settings:
    settings = Settings(warehouse_dir=root / "wh")
    now = datetime.now(UTC).replace(hour=2, minute=0, second=0, microsecond=0)
    for i in range(nights):
        run_dir = write_synthetic_run(settings.runs_dir, now - timedelta(days=nights - i), seed=i)
        record_run_dir(run_dir, settings.parquet_dir)
    return settings


def _cli_runs(settings: Settings) -> tuple[int, str]:
    app = typer.Typer()
    cli_warehouse.register(app)
    result = CliRunner().invoke(app, ["runs", "--warehouse", str(settings.warehouse_dir)])
    return result.exit_code, result.stdout + result.stderr


def _aside(folder: Path, name: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.lstrip(".").startswith(f"{name}.unreadable-"))


def test_a_garbage_summary_index_is_read_around_then_moved_aside_and_rebuilt(
    tmp_path: Path, reliability
) -> None:  # type: ignore[no-untyped-def]
    settings = _warehouse(tmp_path)
    index = summary_index_path(settings.parquet_dir)
    index.write_bytes(GARBAGE)
    # Readers: the per-run files, no traceback (on main: ArrowInvalid from `veille runs`).
    code, out = _cli_runs(settings)
    assert code == 0, out
    run_ids = sorted(p.name for p in settings.runs_dir.iterdir())
    assert all(run_id in out for run_id in run_ids)
    # The next night's commit moves it aside (kept, named in a warning) and rebuilds it.
    night = write_synthetic_run(settings.runs_dir, datetime.now(UTC), seed=7)
    record_run_dir(night, settings.parquet_dir)
    aside = _aside(index.parent, index.name)
    assert len(aside) == 1 and aside[0].read_bytes() == GARBAGE
    rebuilt = pq.read_table(index).column("run_id").to_pylist()
    assert sorted(rebuilt) == sorted([*run_ids, night.name])
    _, rows = query(settings.parquet_dir, "SELECT count(*) FROM runs_summary")
    assert rows == [(4,)]
    reliability.record(
        "garbage summary index (`_index/runs_summary.parquet`)",
        "readers fall back to the per-run files; the next commit moves it aside (warning naming it) and rebuilds it",
        f"`veille runs` exit 0 listing the {len(run_ids)} runs; after the next night: index of {len(rebuilt)} runs, "
        f"garbage kept as {aside[0].name.split('.unreadable-')[0]}.unreadable-<stamp>",
    )


@pytest.mark.parametrize("table", ["llm_calls", "runs"])
def test_one_garbage_parquet_file_is_rebuilt_from_its_run_folder(
    tmp_path: Path, table: str, reliability
) -> None:  # type: ignore[no-untyped-def]
    settings = _warehouse(tmp_path)
    _, before = query(settings.parquet_dir, f"SELECT count(*) FROM {table}")
    victim = committed_files(settings.parquet_dir, table)[1]
    good = pq.read_table(victim)
    victim.write_bytes(GARBAGE)
    # On main one such file breaks its table's view for every run.
    with pytest.raises(Exception, match=r"(?i)parquet|magic|invalid"):
        query(settings.parquet_dir, f"SELECT count(*) FROM {table}")
    repairs = repair_unreadable_files(settings.parquet_dir, settings.runs_dir)
    assert list(repairs.rebuilt) == [str(victim)] and not repairs.moved_only
    assert Path(repairs.rebuilt[str(victim)]).read_bytes() == GARBAGE  # kept aside, never deleted
    rebuilt = pq.read_table(victim)
    columns = [c for c in good.column_names if c != "recorded_at"]
    assert rebuilt.select(columns).equals(good.select(columns))
    _, after = query(settings.parquet_dir, f"SELECT count(*) FROM {table}")
    assert after == before
    code, out = _cli_runs(settings)
    assert code == 0, out
    assert repair_unreadable_files(settings.parquet_dir, settings.runs_dir).count == 0  # once
    reliability.record(
        f"one garbage Parquet file of one run (`{table}`)",
        "each night's recording moves it aside (warning naming it) and rewrites it from the run folder's "
        "JSON files; the table's view works again",
        f"view broken before; after: 1 file rebuilt, same rows as the original but recorded_at, {table} count "
        f"{after[0][0]} = before, `veille runs` exit 0, garbage kept aside; a second pass repairs nothing",
    )


def test_a_garbage_file_without_its_run_folder_is_only_moved_aside(tmp_path: Path) -> None:
    settings = _warehouse(tmp_path)
    victim = committed_files(settings.parquet_dir, "alerts")[0]
    victim.write_bytes(GARBAGE)
    (settings.runs_dir / victim.stem / "alerts.json").write_text("{not json", encoding="utf-8")
    repairs = repair_unreadable_files(settings.parquet_dir, settings.runs_dir)
    assert list(repairs.moved_only) == [str(victim)] and not victim.exists()
    query(settings.parquet_dir, "SELECT count(*) FROM alerts")  # the other runs' rows read again


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_a_dead_run_with_a_garbage_run_json_is_recorded_failed_once(
    tmp_path_factory: pytest.TempPathFactory, garbage: bytes
) -> None:
    root = tmp_path_factory.mktemp("dead")
    settings = Settings(warehouse_dir=root / "wh")
    run_dir = write_synthetic_run(settings.runs_dir, datetime.now(UTC), seed=3)
    try:
        if isinstance(json.loads(garbage), dict):
            return  # a JSON object is a run.json, however odd: not this test's case
    except ValueError:
        pass
    (run_dir / "run.json").write_bytes(garbage)
    (run_dir / LOCK_FILE).write_text("1\n")  # died: the lock file is there, nobody holds it
    first = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    assert first.run_ids == [run_dir.name], first.failed
    assert "run.json" in first.recorded[0].missing_files
    assert first.recorded[0].summary["status"] == "failed"
    assert (run_dir / "run.json").read_bytes() == garbage  # nothing stored is changed
    again = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    assert again.run_ids == [] and again.failed == {}  # once: no warning on every later night


def test_the_dead_run_row_for_the_reliability_table(tmp_path: Path, reliability) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(warehouse_dir=tmp_path / "wh")
    run_dir = write_synthetic_run(settings.runs_dir, datetime.now(UTC), seed=3)
    (run_dir / "run.json").write_text('{"run_id": "' + run_dir.name + '", "status": "comp', encoding="utf-8")
    (run_dir / LOCK_FILE).write_text("1\n")
    first = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    again = recover_dead_runs(settings.runs_dir, settings.parquet_dir)
    assert first.run_ids == [run_dir.name] and again.run_ids == [] and not again.failed
    row = first.recorded[0].summary
    assert row["status"] == "failed" and row["calls"] > 0
    reliability.record(
        "dead run (SIGKILL while writing run.json) whose run.json is garbage",
        "recorded by the next run as failed from what is left (run.json counted missing), once",
        f"status {row['status']}, {row['calls']} calls from calls.jsonl, missing_files {row['missing_files']}; "
        "second night: nothing to record, no warning; run.json left as found (25 hypothesis garbage files too)",
    )


def test_write_errors_name_the_path_and_the_operation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reliability
) -> None:  # type: ignore[no-untyped-def]
    settings = _warehouse(tmp_path, nights=1)
    table = pq.read_table(committed_files(settings.parquet_dir, "alerts")[0])

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    target = settings.parquet_dir / "alerts" / "run_date=2026-01-01" / "x.parquet"
    with pytest.raises(OSError) as caught:
        write_atomic(table, target, exclusive=False)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
    assert "writing a Parquet file" in str(caught.value)
    assert not list(target.parent.iterdir())  # no temporary file left behind
    monkeypatch.undo()
    run_json = next(settings.runs_dir.iterdir()) / "run.json"
    size = run_json.stat().st_size
    import veille.run.folder as folder

    monkeypatch.setattr(folder.os, "replace", lambda *_a: full())
    assert mark_failed(run_json.parent, "recording failed: OSError: [Errno 28] …")
    monkeypatch.undo()
    marked = json.loads(run_json.read_text(encoding="utf-8"))
    assert marked["status"] == "failed" and run_json.stat().st_size == size
    reliability.record(
        "disk full while writing a Parquet file (write raises ENOSPC)",
        "the error names the path and the operation; no temporary file left",
        f"OSError errno 28: {str(caught.value).replace(str(tmp_path), '<tmp>')}; 0 files left in the partition",
    )


def test_a_full_disk_at_the_run_folder_lock_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first write of a night (the run folder's lock) on a full disk: the kernel's ENOSPC (the
    temporary file is /dev/full) names the lock file and the operation, and leaves nothing behind."""
    folder = tmp_path / "runs" / "20260101T020000Z-abcdef"
    folder.mkdir(parents=True)
    temp = folder / f"{LOCK_FILE}.x.tmp"
    monkeypatch.setattr(
        recovery.tempfile, "mkstemp", lambda **_k: (os.open("/dev/full", os.O_WRONLY), str(temp))
    )
    with pytest.raises(OSError) as caught:  # on main: '[Errno 28] No space left on device', no path
        lock_run_folder(folder)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(folder / LOCK_FILE)
    assert "lock file" in str(caught.value)
    assert not list(folder.iterdir())


def test_update_summary_index_survives_an_index_that_is_a_folder(tmp_path: Path) -> None:
    settings = _warehouse(tmp_path, nights=2)
    index = summary_index_path(settings.parquet_dir)
    index.unlink()
    index.mkdir()  # not a file at all: IsADirectoryError on read
    assert update_summary_index(settings.parquet_dir) == index
    assert pq.read_table(index).num_rows == 2


def test_moves_in_task_threads_are_collected_once_per_reason(tmp_path: Path) -> None:
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    from veille.derived import collecting, set_aside, set_aside_alerts

    files = [tmp_path / f"entry-{i}.json" for i in range(3)] + [tmp_path / "veille.duckdb"]
    for path in files:
        path.write_bytes(GARBAGE)
    with collecting() as moved, ThreadPoolExecutor(2) as pool:
        # Prefect's thread runner runs each task in a copy of the flow's context, as here.
        jobs = [
            pool.submit(contextvars.copy_context().run, set_aside, p, "JSONDecodeError", "asked again")
            for p in files[:3]
        ]
        [job.result() for job in jobs]
        set_aside(files[3], "not a DuckDB database file", "rebuilt", announce=False)
    (tmp_path / "late").write_bytes(GARBAGE)
    set_aside(tmp_path / "late", "x", "y")  # outside the block: a log line only
    assert sorted(m.path for m in moved) == sorted(str(p) for p in files[:3])  # not the unannounced one
    (alert,) = set_aside_alerts(moved)
    assert alert.code == "warehouse.file_set_aside" and sorted(alert.subjects) == sorted(map(str, files[:3]))
    for item in moved:
        assert (
            f"{item.path} → {item.moved_to}" in alert.message and Path(item.moved_to).read_bytes() == GARBAGE
        )
    assert "JSONDecodeError" in alert.message and alert.message.endswith("; asked again")
