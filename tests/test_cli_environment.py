"""No command ends in a raw traceback for an error of the machine (issue 26 item 4): a file where a
folder should be, a full disk, a read-only file system — one `error:` line naming the path, exit 1."""

from __future__ import annotations

import errno
import logging
import sys
import traceback
from pathlib import Path

import duckdb
import pytest

from tests.fixtures.corpus_factory import copy_mini_corpus, doc_text
from veille.checkpoints import observe
from veille.cli import _environment_error, main
from veille.ops.logfilter import ExpectedFailureFilter
from veille.store.ingest import ingest_corpus
from veille.store.readers import read_catalogue
from veille.warehouse.synth import demo_warehouse


def _veille(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["veille", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    code = caught.value.code
    return (code if isinstance(code, int) else 1), captured.out + captured.err


@pytest.fixture()
def blocker(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a folder\n", encoding="utf-8")
    return path


def _one_error_line(out: str) -> str:
    assert "Traceback" not in out
    lines = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, out[-2000:]
    return lines[0]


def test_a_chart_under_a_file_is_one_line(
    tmp_path: Path,
    blocker: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability,
) -> None:  # type: ignore[no-untyped-def]
    demo_warehouse(tmp_path / "wh", nights=2)
    code, out = _veille(
        monkeypatch,
        capsys,
        "trends",
        "--days",
        "0",
        "--warehouse",
        str(tmp_path / "wh"),
        "--chart",
        str(blocker / "t.png"),
    )
    line = _one_error_line(out)  # on main: FileExistsError traceback
    assert code == 1 and str(blocker) in line
    reliability.record(
        "`veille trends --chart` under a path that is a file (a file where a folder should be)",
        "one `error:` line naming the path, exit 1, no traceback",
        f"exit {code}: {line.replace(str(tmp_path), '<tmp>')}",
    )


def test_disk_full_while_writing_the_chart_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], reliability
) -> None:  # type: ignore[no-untyped-def]
    demo_warehouse(tmp_path / "wh", nights=2)
    chart = tmp_path / "charts" / "t.png"

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(chart))

    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "savefig", full)
    code, out = _veille(
        monkeypatch,
        capsys,
        "trends",
        "--days",
        "0",
        "--warehouse",
        str(tmp_path / "wh"),
        "--chart",
        str(chart),
    )
    line = _one_error_line(out)
    assert code == 1 and "No space left on device" in line and str(chart) in line
    reliability.record(
        "disk full while `veille trends` writes its chart (savefig raises ENOSPC)",
        "one `error:` line naming the path, exit 1, no traceback",
        f"exit {code}: {line.replace(str(tmp_path), '<tmp>')}",
    )


def test_ingest_into_a_warehouse_under_a_file_is_one_line(
    blocker: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _veille(monkeypatch, capsys, "ingest", "--warehouse", str(blocker / "wh"))
    assert code == 1 and str(blocker) in _one_error_line(out)


def test_disk_full_at_the_ingestion_commit_names_the_wal_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], reliability
) -> None:  # type: ignore[no-untyped-def]
    """Issue 26 item 4: the kernel's ENOSPC at COMMIT (the WAL is /dev/full), not DuckDB's follow-up
    'cannot rollback - no transaction is active', reaches the user; the last commit stays readable."""
    corpus, warehouse = copy_mini_corpus(tmp_path / "corpus"), tmp_path / "wh"
    code, out = _veille(monkeypatch, capsys, "ingest", "--corpus", str(corpus), "--warehouse", str(warehouse))
    assert code == 0, out
    database = warehouse / "veille.duckdb"
    wal = database.with_name(database.name + ".wal")
    before = read_catalogue(database).entries
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05"), encoding="utf-8")

    def full_disk(stage: str) -> None:
        if stage == "ingest":  # rows written, COMMIT next: DuckDB opens its WAL there
            assert not wal.exists()  # else DuckDB would keep writing to the file it holds open
            wal.symlink_to("/dev/full")  # every write fails with ENOSPC

    remove = observe(full_disk)
    try:
        code, out = _veille(
            monkeypatch, capsys, "ingest", "--corpus", str(corpus), "--warehouse", str(warehouse)
        )
    finally:
        remove()
    line = _one_error_line(out)  # on b0ec926: cannot rollback - no transaction is active
    assert code == 1 and "No space left on device" in line and str(wal) in line, line
    assert "rollback" not in line
    wal.unlink()
    assert read_catalogue(database).entries == before  # the previous commit, intact
    code, out = _veille(monkeypatch, capsys, "ingest", "--corpus", str(corpus), "--warehouse", str(warehouse))
    assert code == 0 and len(read_catalogue(database).entries) == len(before) + 1, out
    reliability.record(
        "disk full at the ingestion's COMMIT (`veille ingest`; the WAL file is /dev/full: the kernel's ENOSPC)",
        "one `error:` line naming the WAL file and the cause, exit 1, no traceback; the previous commit intact",
        f"exit 1: {line.replace(str(tmp_path), '<tmp>')}; catalogue of {len(before)} documents unchanged; "
        "the next ingestion adds the new document",
    )


def test_a_full_disk_at_the_commit_keeps_no_frame_holding_the_connection(tmp_path: Path) -> None:
    """Prefect keeps a failed task's exception until the process ends: with the ingestion's frames it
    kept the DuckDB connection alive, and the interpreter's exit printed ~45 lines of nanobind leaks
    after the run's error line."""
    corpus, database = copy_mini_corpus(tmp_path / "corpus"), tmp_path / "wh" / "veille.duckdb"
    ingest_corpus(corpus, database)
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05"), encoding="utf-8")
    wal = database.with_name(database.name + ".wal")
    remove = observe(lambda stage: wal.symlink_to("/dev/full") if stage == "ingest" else None)
    try:
        with pytest.raises(duckdb.Error) as caught:
            ingest_corpus(corpus, database)
    finally:
        remove()
    assert str(wal) in str(caught.value) and "No space left on device" in str(caught.value)
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-1] == "ingest_corpus" and "_ingest_corpus" not in frames, frames


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device (writing a Parquet file)", "/w/x.parquet"),
            "/w/x.parquet",
        ),
        (OSError(errno.EROFS, "Read-only file system", "/w"), "Read-only file system: /w"),
        (PermissionError(errno.EACCES, "Permission denied", "/w/runs"), "/w/runs"),
    ],
)
def test_environment_errors_are_found_in_the_chain(error: OSError, expected: str) -> None:
    try:
        try:
            raise error
        except OSError as inner:
            raise RuntimeError("cannot rollback - no transaction is active") from inner
    except RuntimeError as outer:
        message = _environment_error(outer)
    assert message is not None and expected in message


def test_a_bug_keeps_its_traceback() -> None:
    assert _environment_error(ValueError("a bug")) is None
    assert _environment_error(OSError(errno.ECONNREFUSED, "Connection refused")) is None


def test_the_run_logs_drop_the_frames_of_an_environment_error() -> None:
    error = OSError(errno.ENOSPC, "No space left on device", "/w/runs/x/run.json")
    record = logging.LogRecord(
        "prefect.flow_runs", logging.ERROR, __file__, 1, "failed", None, (OSError, error, None)
    )
    assert ExpectedFailureFilter().filter(record) and record.exc_info is None
    # DuckDB says it in its own exception type (the ingest task of a `veille run` on a full disk).
    wal = duckdb.TransactionException(
        'TransactionContext Error: Failed to commit: Could not write file "/w/veille.duckdb.wal": '
        "No space left on device"
    )
    record = logging.LogRecord(
        "prefect.task_runs", logging.ERROR, __file__, 1, "failed", None, (type(wal), wal, None)
    )
    assert ExpectedFailureFilter().filter(record) and record.exc_info is None
    assert "veille.duckdb.wal" in record.getMessage()
    bug = ValueError("bug")
    record = logging.LogRecord(
        "prefect.flow_runs", logging.ERROR, __file__, 1, "failed", None, (ValueError, bug, None)
    )
    assert ExpectedFailureFilter().filter(record) and record.exc_info is not None
