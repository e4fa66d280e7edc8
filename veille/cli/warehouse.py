"""`veille` commands over the Parquet warehouse: sql (read-only), runs, trends (+ chart), warehouse upgrade."""

from __future__ import annotations

import itertools
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from veille.cli.chart import TREND_COLUMNS, render_chart, series_key, series_label
from veille.cli.tables import FORMATS, render, write_batches

if TYPE_CHECKING:
    from veille.settings import Settings

__all__ = ["register"]

WarehouseOption = Annotated[
    Path | None,
    typer.Option("--warehouse", help="Warehouse directory."),
]


def _settings(warehouse: Path | None) -> Settings:
    from veille.settings import Settings

    return Settings.from_params(warehouse=warehouse)


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _print(columns: Any, rows: Any, fmt: str = "table", title: str | None = None) -> None:
    typer.echo(render(columns, rows, fmt, title=title), nl=False)


def sql(
    query: Annotated[
        str, typer.Argument(help="One read-only SQL statement (SELECT, DESCRIBE, SHOW, EXPLAIN...).")
    ],
    warehouse: WarehouseOption = None,
    output: Annotated[
        str,
        typer.Option(
            "--format",
            help="auto (a table when it fits the terminal, else vertical) | table | vertical | "
            "markdown | csv | json",
        ),
    ] = "auto",
    max_rows: Annotated[
        int, typer.Option(help="Print at most this many rows (0: all, printed as they come).")
    ] = 200,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Stop the statement after this many seconds (default: setting query_timeout_s, 60).",
        ),
    ] = None,
) -> None:
    """Run one read-only SQL query over the warehouse views (runs, run_attempts, llm_calls, run_trends, ...)."""
    from veille.warehouse import ReadOnlyQueryError, WarehouseError
    from veille.warehouse import query as run_query

    if output not in FORMATS:
        raise _fail(f"--format {output!r}: expected {', '.join(FORMATS)}", 2)
    if timeout is not None and not timeout > 0:
        raise _fail(f"--timeout {timeout:g}: expected a number of seconds above 0", 2)
    from veille.warehouse.limits import Limits

    settings = _settings(warehouse)
    limits = Limits(
        settings.query_memory_limit, settings.query_threads, settings.warehouse_dir / "scratch" / "duckdb"
    )
    timeout_s = timeout if timeout is not None else settings.query_timeout_s
    try:
        if max_rows <= 0:  # every row: printed batch by batch, never held whole
            _stream(settings.parquet_dir, query, output, timeout_s, limits)
            return
        columns, rows = run_query(
            settings.parquet_dir, query, timeout_s=timeout_s, max_rows=max_rows, limits=limits
        )
    except ReadOnlyQueryError as exc:
        raise _fail(str(exc), 2) from None
    except WarehouseError as exc:
        raise _fail(str(exc)) from None
    shown = rows[:max_rows]
    _print(columns, shown, output)
    if len(shown) < len(rows):  # the limit was pushed into the query: more rows exist, not counted
        typer.echo(f"(more rows not shown: the first {max_rows}; use --max-rows 0 for all)", err=True)


def _stream(parquet_dir: Path, query: str, output: str, timeout_s: float, limits: Any) -> None:
    from veille.warehouse.stream import stream_query

    with stream_query(parquet_dir, query, timeout_s=timeout_s, limits=limits) as (columns, batches):
        write_batches(columns, batches, output, lambda text: typer.echo(text, nl=False))


def runs(
    limit: Annotated[int, typer.Option(help="Number of runs to list, most recent first.")] = 20,
    warehouse: WarehouseOption = None,
) -> None:
    """List the most recent runs recorded in the warehouse."""
    from veille.warehouse import WarehouseError, query, read_sql

    if limit < 1:
        raise _fail("--limit must be at least 1", 2)
    try:
        columns, rows = query(
            _settings(warehouse).parquet_dir,
            read_sql("warehouse_recent_runs"),
            {"limit": limit},
            read_only_check=False,
        )
    except WarehouseError as exc:
        raise _fail(str(exc)) from None
    if not rows:
        typer.echo("no run recorded yet")
        return
    _print(
        columns,
        rows,
        title=f"{len(rows)} most recent runs (one per flow run; flow_run_attempt n/m: the last of m)",
    )
    at = {name: i for i, name in enumerate(columns)}
    if "unretried" in at and (late := [r[at["run_id"]] for r in rows if r[at["unretried"]]]):
        typer.echo(
            f"{len(late)} failed night(s) not retried (no later completed run of the corpus): "
            + ", ".join(late)
            + " — Retry from the Prefect UI or rerun with `veille run`"
        )


def trends(
    days: Annotated[int, typer.Option(help="Runs of the last N days (by run date, UTC); 0: all.")] = 30,
    chart: Annotated[
        Path | None,
        typer.Option(help="Chart file: .png or .html (self-contained). Default: <warehouse>/trends.png"),
    ] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Per flow run cost, tokens, grader scores, alerts and review rounds, per corpus and request,
    printed and charted."""
    from veille.warehouse import WarehouseError, query, read_sql

    parquet_dir = _settings(warehouse).parquet_dir
    since = date(1970, 1, 1) if days <= 0 else date.today() - timedelta(days=days)
    try:
        columns, rows = query(
            parquet_dir, read_sql("warehouse_trends"), {"since": since}, read_only_check=False
        )
    except WarehouseError as exc:
        raise _fail(str(exc)) from None
    if tuple(columns) != TREND_COLUMNS:
        raise _fail(f"warehouse_trends.sql returns {columns}, expected {list(TREND_COLUMNS)}")
    if not rows:
        typer.echo(f"no run since {since.isoformat()}")
        return
    records = [dict(zip(TREND_COLUMNS, r, strict=True)) for r in rows]
    for key, group in itertools.groupby(records, key=series_key):
        series = list(group)
        _print(
            _PRINTED,
            [_printed(r) for r in series],
            title=f"{series_label(key)}: {len(series)} run(s) since {since.isoformat()} "
            "(cost and tokens: every attempt; scores: attempt att.; cost '+': lower bound, a model had no price)",
        )
    target = chart or parquet_dir.parent / "trends.png"
    try:
        render_chart(rows, target)
    except ValueError as exc:
        raise _fail(str(exc), 2) from None
    typer.echo(f"chart: {target}")


_PRINTED = (
    "started (UTC)",
    "run",
    "att.",
    "status",
    "cost $",
    "tokens",
    "judge",
    "rouge_l",
    "numeric",
    "judge+num",
    "alerts",
    "rounds",
    "gain",
)


def _printed(r: dict[str, Any]) -> tuple[Any, ...]:
    def score(name: str) -> str:
        return f"{r[name]:.3f}" if r[name] is not None else ""

    return (
        f"{r['started_at']:%Y-%m-%d %H:%M}" if r["started_at"] else "",
        r["run_id"],
        f"{r['scores_flow_run_attempt']}/{r['flow_run_attempts']}",
        r["status"],
        f"{r['flow_run_cost_usd']:.4f}" + ("" if r["flow_run_cost_complete"] else "+"),
        r["flow_run_total_tokens"],
        *(score(n) for n in ("score_judge", "score_rouge_l", "score_numeric", "score_judge_numbers")),
        f"{r['alerts']} ({r['alerts_error']} err)",
        r["rounds"],
        f"{r['revision_gain']:+.3f}" if r["revision_gain"] is not None else "",
    )


def upgrade(warehouse: WarehouseOption = None) -> None:
    """Rewrite Parquet files of older schema versions with the current schema (idempotent), so
    pandas, DuckDB and Polars read every table folder without losing a column."""
    from veille.warehouse import WarehouseError
    from veille.warehouse.upgrade import upgrade_warehouse

    parquet_dir = _settings(warehouse).parquet_dir
    try:
        result = upgrade_warehouse(parquet_dir)
    except (WarehouseError, OSError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(
        f"{len(result.rewritten)} file(s) rewritten to the current schema, {result.current} already current "
        f"({parquet_dir})"
    )


warehouse_app = typer.Typer(help="Maintenance of the Parquet warehouse.", no_args_is_help=True)
warehouse_app.command("upgrade")(upgrade)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.add_typer(warehouse_app, name="warehouse")
    app.command("sql")(sql)
    app.command("runs")(runs)
    app.command("trends")(trends)
