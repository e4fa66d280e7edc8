"""`veille sql` under its limits (issue 39 item 6): it spills to its own temp directory (whose parent
was never created: « IO Error: Failed to create directory »), ``--max-rows 0`` prints the result
batch by batch instead of holding it whole (2.8 GB for 10M rows as CSV), and a statement stops after
``--timeout`` seconds (default the setting query_timeout_s, 60 s) with one clear line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from veille.cli import warehouse as cli_warehouse
from veille.settings import Settings
from veille.warehouse import record_run_dir
from veille.warehouse import stream as stream_module
from veille.warehouse.errors import QueryTimeoutError
from veille.warehouse.stream import stream_query
from veille.warehouse.synth import write_synthetic_run


@pytest.fixture()
def app() -> typer.Typer:
    app = typer.Typer()
    cli_warehouse.register(app)
    return app


@pytest.fixture()
def warehouse(tmp_path: Path) -> Path:
    settings = Settings(warehouse_dir=tmp_path / "wh")
    record_run_dir(write_synthetic_run(settings.runs_dir, datetime.now(UTC), seed=5), settings.parquet_dir)
    return settings.warehouse_dir


def run(app: typer.Typer, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_query_past_the_memory_limit_spills_to_a_scratch_directory_it_creates(
    app: typer.Typer, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VEILLE_QUERY_MEMORY_LIMIT", "30MB")
    monkeypatch.setenv("VEILLE_QUERY_THREADS", "1")
    assert not (warehouse / "scratch").exists()  # a fresh warehouse: nothing has spilled yet
    statement = (
        "SELECT count(*) AS n FROM (SELECT range % 3000000 AS k, count(*) FROM range(6000000) GROUP BY k)"
    )
    code, out, err = run(app, "sql", statement, "--warehouse", str(warehouse), "--format", "csv")
    assert code == 0, err
    assert out == "n\n3000000\n"
    assert (warehouse / "scratch" / "duckdb").is_dir()


def test_every_row_comes_in_batches_from_a_result_too_large_to_hold(warehouse: Path) -> None:
    # 10^12 rows cannot be materialised before the timeout: the batches must come from a stream.
    parquet = Settings(warehouse_dir=warehouse).parquet_dir
    with stream_query(parquet, "SELECT * FROM range(1000000000000)", timeout_s=60, batch_rows=5_000) as (
        columns,
        batches,
    ):
        first = [next(batches) for _ in range(3)]
    assert columns == ["range"]
    assert [len(b) for b in first] == [5_000] * 3
    assert [row[0] for batch in first for row in batch] == list(range(15_000))


@pytest.mark.parametrize("output", ["csv", "json", "markdown", "vertical"])
def test_max_rows_0_prints_every_row_batch_by_batch_as_the_whole_result_would_read(
    app: typer.Typer, warehouse: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    monkeypatch.setattr(stream_module, "BATCH_ROWS", 1_000)
    seen: list[int] = []
    real = cli_warehouse.write_batches

    def spy(columns: Any, batches: Any, fmt: str, write: Any, **kwargs: Any) -> int:
        def counted() -> Any:
            for batch in batches:
                seen.append(len(batch))
                yield batch

        return real(columns, counted(), fmt, write, **kwargs)

    monkeypatch.setattr(cli_warehouse, "write_batches", spy)
    statement = "SELECT range AS n, 'ligne ' || range AS label FROM range(25000)"
    base = ("sql", statement, "--warehouse", str(warehouse), "--format", output)
    code, streamed, err = run(app, *base, "--max-rows", "0")
    assert code == 0, err
    assert seen == [1_000] * 25  # the rows came in batches, none held as a whole result
    code, whole, _ = run(app, *base, "--max-rows", "30000")
    assert code == 0 and streamed == whole  # the same document, printed as it came


def test_max_rows_0_prints_tables_of_one_batch_each_and_an_empty_result_once(
    app: typer.Typer, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_module, "BATCH_ROWS", 10)
    code, out, _ = run(
        app,
        "sql",
        "SELECT range AS n FROM range(25)",
        "--warehouse",
        str(warehouse),
        "--max-rows",
        "0",
        "--format",
        "table",
    )
    assert code == 0 and out.count("┃ n ") == 3 and "│ 24 │" in out
    code, out, _ = run(
        app,
        "sql",
        "SELECT 1 AS n WHERE false",
        "--warehouse",
        str(warehouse),
        "--max-rows",
        "0",
        "--format",
        "csv",
    )
    assert code == 0 and out == "n\n"


@pytest.mark.parametrize("max_rows", ["200", "0"])
def test_the_timeout_flag_stops_a_statement_with_one_clear_line(
    app: typer.Typer, warehouse: Path, max_rows: str
) -> None:
    code, out, err = run(
        app,
        "sql",
        "SELECT count(*) FROM range(100000000000)",
        "--warehouse",
        str(warehouse),
        "--timeout",
        "0.25",  # the statement runs for hours: any timeout stops it (DuckDB burns CPU until then)
        "--max-rows",
        max_rows,
    )
    assert code == 1 and out == ""
    assert err.startswith("error: query stopped after ") and "0.25 s query timeout (--timeout" in err
    assert len(err.strip().splitlines()) == 1


def test_a_stream_past_its_timeout_raises_after_the_rows_it_gave(warehouse: Path) -> None:
    parquet = Settings(warehouse_dir=warehouse).parquet_dir
    given = 0
    with (
        # Rows stream from the first milliseconds; the test reads them until the timeout, so the
        # timeout is what this test costs in CPU.
        pytest.raises(QueryTimeoutError, match="1 s query timeout"),
        stream_query(parquet, "SELECT * FROM range(1000000000000)", timeout_s=1) as (_, batches),
    ):
        for batch in batches:
            given += len(batch)
    assert given > 0


def test_a_timeout_that_is_not_a_positive_number_is_refused(app: typer.Typer, warehouse: Path) -> None:
    code, _, err = run(app, "sql", "SELECT 1", "--warehouse", str(warehouse), "--timeout", "0")
    assert code == 2 and "--timeout 0: expected a number of seconds above 0" in err
