"""`veille sql` (read-only), `veille runs` and `veille trends` over a synthetic warehouse."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from veille.cli import warehouse as cli_warehouse
from veille.settings import Settings
from veille.warehouse import record_run_dir
from veille.warehouse.synth import write_synthetic_run


@pytest.fixture()
def app() -> typer.Typer:
    app = typer.Typer()
    cli_warehouse.register(app)
    return app


@pytest.fixture()
def warehouse(tmp_path: Path) -> Path:
    settings = Settings(warehouse_dir=tmp_path / "wh")
    now = datetime.now(UTC).replace(hour=2, minute=0, second=0, microsecond=0)
    for i in range(3):
        run_dir = write_synthetic_run(settings.runs_dir, now - timedelta(days=3 - i), seed=i)
        record_run_dir(run_dir, settings.parquet_dir)
    # An old run, outside the default 30-day trend window.
    old = write_synthetic_run(settings.runs_dir, now - timedelta(days=90), seed=9)
    record_run_dir(old, settings.parquet_dir)
    return settings.warehouse_dir


def run(app: typer.Typer, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_sql_select_in_csv_and_json(app: typer.Typer, warehouse: Path) -> None:
    code, out, _ = run(
        app,
        "sql",
        "SELECT role, count(*) AS n FROM llm_calls GROUP BY 1 ORDER BY 1",
        "--warehouse",
        str(warehouse),
        "--format",
        "csv",
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0].keys() == {"role", "n"}
    assert sum(int(r["n"]) for r in rows) == 4 * 60
    code, out, _ = run(
        app, "sql", "SELECT count(*) AS runs FROM runs", "--warehouse", str(warehouse), "--format", "json"
    )
    assert code == 0 and json.loads(out) == [{"runs": 4}]


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("CREATE TABLE t AS SELECT 1", "CREATE"),
        ("INSERT INTO runs SELECT * FROM runs", "INSERT"),
        ("DROP VIEW runs", "DROP"),
        ("COPY runs TO 'stolen.csv'", "COPY"),
        ("ATTACH 'other.duckdb'", "ATTACH"),
        ("SET enable_external_access = true", "SET"),
        ("EXPLAIN ANALYZE COPY runs TO 'x.csv'", "COPY"),
    ],
)
def test_sql_refuses_writes_clearly(app: typer.Typer, warehouse: Path, statement: str, kind: str) -> None:
    code, out, err = run(app, "sql", statement, "--warehouse", str(warehouse))
    assert code == 2
    assert f"the warehouse is read-only: {kind} statements are refused" in err
    assert out == ""


def test_sql_cannot_read_files_outside_the_warehouse(
    app: typer.Typer, warehouse: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    for statement in (
        f"SELECT * FROM read_csv('{secret}')",
        f"SELECT * FROM read_text('{secret}')",
        f"SELECT * FROM read_parquet('{warehouse}/parquet/../../secret.csv')",
    ):
        code, out, err = run(app, "sql", statement, "--warehouse", str(warehouse))
        assert code == 2, statement
        assert "may only read the warehouse" in err and "hunter2" not in out + err


def test_sql_rejects_several_statements_and_reports_errors(app: typer.Typer, warehouse: Path) -> None:
    code, _, err = run(app, "sql", "SELECT 1; DROP VIEW runs", "--warehouse", str(warehouse))
    assert code == 2 and "exactly one SQL statement" in err
    code, _, err = run(app, "sql", "SELECT * FROM no_such_table", "--warehouse", str(warehouse))
    assert code == 1 and "no_such_table" in err


def test_sql_allows_describe_show_and_explain(app: typer.Typer, warehouse: Path) -> None:
    for statement in ("DESCRIBE llm_calls", "SHOW TABLES", "EXPLAIN SELECT * FROM runs", "SUMMARIZE alerts"):
        code, _, err = run(app, "sql", statement, "--warehouse", str(warehouse), "--format", "csv")
        assert code == 0, (statement, err)


def test_runs_lists_most_recent_first(app: typer.Typer, warehouse: Path) -> None:
    code, out, _ = run(app, "runs", "--warehouse", str(warehouse), "--limit", "2")
    assert code == 0
    run_ids = sorted(p.name for p in (warehouse / "runs").iterdir())
    assert run_ids[-1] in out and run_ids[-2] in out and run_ids[0] not in out


def test_trends_prints_runs_and_writes_png_and_html(
    app: typer.Typer, warehouse: Path, tmp_path: Path
) -> None:
    code, out, _ = run(app, "trends", "--warehouse", str(warehouse))
    assert code == 0
    assert "3 run(s) since" in out  # the 90-day-old run is outside the default window
    png = warehouse / "trends.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html_path = tmp_path / "trends.html"
    code, out, _ = run(app, "trends", "--warehouse", str(warehouse), "--days", "0", "--chart", str(html_path))
    assert code == 0 and "4 run(s) since" in out
    page = html_path.read_text(encoding="utf-8")
    assert "<svg" in page and "src=" not in page  # self-contained: inline SVG, no external resource
    code, _, err = run(app, "trends", "--warehouse", str(warehouse), "--chart", str(tmp_path / "x.pdf"))
    assert code == 2 and ".png or .html" in err


def test_empty_warehouse_is_a_clear_error(app: typer.Typer, tmp_path: Path) -> None:
    code, _, err = run(app, "runs", "--warehouse", str(tmp_path / "empty"))
    assert code == 1 and "no warehouse here yet" in err


def test_sql_prints_wide_rows_vertically_unless_asked(
    app: typer.Typer, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(app, "sql", "SELECT * FROM runs ORDER BY started_at", "--warehouse", str(warehouse))
    assert code == 0
    assert out.count("-[ row ") == 4 and "\nrun_id                | " in out  # one block per row
    code, out, _ = run(app, "sql", "SELECT run_id, status FROM runs", "--warehouse", str(warehouse))
    assert code == 0 and "┃ run_id" in out and "-[ row" not in out  # narrow: a table
    code, out, _ = run(
        app,
        "sql",
        "SELECT run_id, status FROM runs ORDER BY run_id",
        "--warehouse",
        str(warehouse),
        "--format",
        "markdown",
    )
    lines = out.splitlines()
    assert lines[:2] == ["| run_id | status |", "|---|---|"] and len(lines) == 6
    code, out, _ = run(app, "sql", "SELECT * FROM runs", "--warehouse", str(warehouse), "--format", "table")
    assert code == 0 and "┃ run_id" in out and "settings_json" in out  # whole, however wide
    code, _, err = run(app, "sql", "SELECT 1", "--warehouse", str(warehouse), "--format", "xml")
    assert code == 2 and "expected auto, table, vertical, markdown, csv, json" in err


def test_sql_stops_at_the_query_timeout_with_one_line(
    app: typer.Typer, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The statement runs for hours: any timeout stops it (DuckDB burns CPU until then).
    monkeypatch.setenv("VEILLE_QUERY_TIMEOUT_S", "0.25")
    code, out, err = run(
        app, "sql", "SELECT count(*) FROM range(100000000000)", "--warehouse", str(warehouse)
    )
    assert code == 1 and out == ""
    assert err.startswith("error: query stopped after ") and "0.25 s query timeout" in err
    assert len(err.strip().splitlines()) == 1


def test_runs_and_trends_show_one_line_per_flow_run_per_corpus(app: typer.Typer, tmp_path: Path) -> None:
    settings = Settings(warehouse_dir=tmp_path / "wh")
    day = datetime.now(UTC).replace(hour=2, minute=0, second=0, microsecond=0) - timedelta(days=1)
    retried = {"flow_run_id": "abcdef12-0000-4000-8000-000000000000", "corpus_dir": "/srv/corpus-a"}
    first = write_synthetic_run(
        settings.runs_dir,
        day,
        seed=1,
        status="failed",
        with_grades=False,
        run_fields={**retried, "attempt": 1},
    )
    second = write_synthetic_run(
        settings.runs_dir, day + timedelta(minutes=15), seed=2, run_fields={**retried, "attempt": 2}
    )
    other = write_synthetic_run(
        settings.runs_dir, day + timedelta(minutes=5), seed=3, run_fields={"corpus_dir": "/srv/corpus-b"}
    )
    for folder in (first, second, other):
        record_run_dir(folder, settings.parquet_dir)
    code, out, _ = run(app, "runs", "--warehouse", str(settings.warehouse_dir))
    assert code == 0 and first.name not in out
    line = next(x for x in out.splitlines() if second.name in x)
    assert "│ 2/2 " in line and "abcdef12" in line and "corpus-a" in line
    code, out, _ = run(
        app, "trends", "--warehouse", str(settings.warehouse_dir), "--chart", str(tmp_path / "t.png")
    )
    assert code == 0 and first.name not in out
    titles = [x.strip() for x in out.splitlines() if "run(s) since" in x]
    request = "Veille : inférence LLM en production"
    assert [t.split(" since")[0] for t in titles] == [
        f"corpus-a — {request}: 1 run(s)",
        f"corpus-b — {request}: 1 run(s)",
    ]  # two series, each its own table

    # The retried night's cost is both attempts' (issue 24 item 6): in `veille runs` and `veille trends`.
    def cost(folder: Path) -> float:
        return sum(json.loads(x)["cost_usd"] for x in (folder / "calls.jsonl").read_text().splitlines())

    both, last = cost(first) + cost(second), cost(second)
    assert f"{both:.4f}" != f"{last:.4f}"
    line = next(x for x in out.splitlines() if second.name in x)
    assert f"{both:.4f}" in line
    code, out, _ = run(app, "runs", "--warehouse", str(settings.warehouse_dir))
    assert f"{round(both, 4)}" in next(x for x in out.splitlines() if second.name in x)


def test_runs_flags_failed_nights_nobody_retried(app: typer.Typer, tmp_path: Path) -> None:
    settings = Settings(warehouse_dir=tmp_path / "wh")
    day = datetime.now(UTC).replace(hour=2, minute=0, second=0, microsecond=0) - timedelta(days=2)
    kw = {"with_grades": False}
    a_failed = write_synthetic_run(
        settings.runs_dir, day, seed=1, status="failed", run_fields={"corpus_dir": "/srv/a"}, **kw
    )
    a_rerun = write_synthetic_run(
        settings.runs_dir, day + timedelta(hours=5), seed=2, run_fields={"corpus_dir": "/srv/a"}, **kw
    )
    b_failed = write_synthetic_run(
        settings.runs_dir,
        day + timedelta(hours=1),
        seed=3,
        status="failed",
        run_fields={"corpus_dir": "/srv/b"},
        **kw,
    )
    for folder in (a_failed, a_rerun, b_failed):
        record_run_dir(folder, settings.parquet_dir)
    code, out, _ = run(app, "runs", "--warehouse", str(settings.warehouse_dir))
    assert code == 0
    (flag,) = [x for x in out.splitlines() if "not retried" in x]
    assert (
        flag.startswith("1 failed night(s) not retried")
        and b_failed.name in flag
        and a_failed.name not in flag
    )
