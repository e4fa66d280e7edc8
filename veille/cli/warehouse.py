"""`veille` commands over the Parquet warehouse: sql (read-only), runs, trends (+ chart)."""

from __future__ import annotations

import csv
import html
import io
import json
import sys
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["TREND_COLUMNS", "register", "render_chart"]

# Columns of veille/warehouse/sql/warehouse_trends.sql, in order.
TREND_COLUMNS = (
    "run_date",
    "run_id",
    "status",
    "cost_usd",
    "cost_complete",
    "total_tokens",
    "calls",
    "score_judge",
    "score_rouge_l",
    "score_numeric",
    "score_judge_numbers",
    "alerts",
    "alerts_error",
    "rounds",
    "revision_gain",
)

WarehouseOption = Annotated[
    Path | None,
    typer.Option("--warehouse", help="Warehouse directory (default: settings.warehouse_dir)."),
]


def _parquet_dir(warehouse: Path | None) -> Path:
    from veille.settings import Settings

    settings = Settings.from_params(warehouse=warehouse)
    return settings.parquet_dir


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float | Decimal):
        return f"{float(value):.6g}"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value)


def _print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, no_wrap=True)
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    console = Console()
    if not console.is_terminal:
        # Piped or captured: print rows whole, at their natural width, rather than folded at 80 columns.
        console = Console(width=1000)
    console.print(table)


def sql(
    query: Annotated[
        str, typer.Argument(help="One read-only SQL statement (SELECT, DESCRIBE, SHOW, EXPLAIN...).")
    ],
    warehouse: WarehouseOption = None,
    output: Annotated[str, typer.Option("--format", help="table | csv | json")] = "table",
    max_rows: Annotated[int, typer.Option(help="Print at most this many rows (0: all).")] = 200,
) -> None:
    """Run one read-only SQL query over the warehouse views (runs, llm_calls, run_trends, ...)."""
    from veille.warehouse import ReadOnlyQueryError, WarehouseError
    from veille.warehouse import query as run_query

    if output not in ("table", "csv", "json"):
        raise _fail(f"--format {output!r}: expected table, csv or json", 2)
    try:
        columns, rows = run_query(_parquet_dir(warehouse), query)
    except ReadOnlyQueryError as exc:
        raise _fail(str(exc), 2) from None
    except WarehouseError as exc:
        raise _fail(str(exc)) from None
    shown = rows if max_rows <= 0 else rows[:max_rows]
    if output == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in shown])
    elif output == "json":
        records = [dict(zip(columns, row, strict=True)) for row in shown]
        typer.echo(json.dumps(records, ensure_ascii=False, indent=2, default=_json_default))
    else:
        _print_table(columns, shown)
    if len(shown) < len(rows):
        typer.echo(f"({len(rows) - len(shown)} more rows not shown; use --max-rows 0)", err=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


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
            _parquet_dir(warehouse),
            read_sql("warehouse_recent_runs"),
            {"limit": limit},
            read_only_check=False,
        )
    except WarehouseError as exc:
        raise _fail(str(exc)) from None
    if not rows:
        typer.echo("no run recorded yet")
        return
    _print_table(columns, rows, title=f"{len(rows)} most recent runs")


def trends(
    days: Annotated[int, typer.Option(help="Runs of the last N days (by run date, UTC); 0: all.")] = 30,
    chart: Annotated[
        Path | None,
        typer.Option(help="Chart file: .png or .html (self-contained). Default: <warehouse>/trends.png"),
    ] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Per-run cost, tokens, grader scores, alerts and review rounds, printed and charted."""
    from veille.warehouse import WarehouseError, query, read_sql

    parquet_dir = _parquet_dir(warehouse)
    since = date(1970, 1, 1) if days <= 0 else date.today() - timedelta(days=days)
    try:
        columns, rows = query(
            parquet_dir, read_sql("warehouse_trends"), {"since": since}, read_only_check=False
        )
    except WarehouseError as exc:
        raise _fail(str(exc)) from None
    if tuple(columns) != TREND_COLUMNS:
        raise _fail(
            f"veille/warehouse/sql/warehouse_trends.sql returns {columns}, expected {list(TREND_COLUMNS)}"
        )
    if not rows:
        typer.echo(f"no run since {since.isoformat()}")
        return
    printed = [
        (
            r[0],
            r[1],
            r[2],
            f"{r[3]:.4f}" + ("" if r[4] else "+"),
            r[5],
            *(f"{v:.3f}" if v is not None else "" for v in r[7:11]),
            f"{r[11]} ({r[12]} err)",
            r[13],
            f"{r[14]:+.3f}" if r[14] is not None else "",
        )
        for r in rows
    ]
    _print_table(
        [
            "date",
            "run",
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
        ],
        printed,
        title=f"{len(rows)} runs since {since.isoformat()} (cost '+': lower bound, a model had no price)",
    )
    target = chart or parquet_dir.parent / "trends.png"
    try:
        render_chart(rows, target)
    except ValueError as exc:
        raise _fail(str(exc), 2) from None
    typer.echo(f"chart: {target}")


def render_chart(rows: Sequence[Sequence[Any]], path: Path) -> Path:
    """Draw cost, tokens, scores and alerts/rounds per run (rows as in TREND_COLUMNS) to PNG or HTML."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    suffix = path.suffix.lower()
    if suffix not in (".png", ".html"):
        raise ValueError(f"chart {path}: expected a .png or .html file name")
    index = {name: i for i, name in enumerate(TREND_COLUMNS)}

    def series(name: str) -> list[float]:
        return [float("nan") if r[index[name]] is None else float(r[index[name]]) for r in rows]

    x = list(range(len(rows)))
    labels = [str(r[index["run_date"]]) for r in rows]
    figure = Figure(figsize=(11, 9), layout="constrained")
    cost, tokens, scores, events = figure.subplots(4, 1, sharex=True)
    cost.plot(x, series("cost_usd"), marker="o", color="tab:red")
    cost.set_ylabel("cost (USD)")
    tokens.bar(x, series("total_tokens"), color="tab:blue")
    tokens.set_ylabel("tokens")
    for name in ("score_judge", "score_rouge_l", "score_numeric", "score_judge_numbers"):
        scores.plot(x, series(name), marker=".", label=name.removeprefix("score_"))
    scores.set_ylim(0, 1.05)
    scores.set_ylabel("score")
    scores.legend(loc="lower left", fontsize="small", ncols=4)
    events.bar([i - 0.2 for i in x], series("alerts"), width=0.4, label="alerts", color="tab:orange")
    events.bar([i + 0.2 for i in x], series("rounds"), width=0.4, label="review rounds", color="tab:green")
    events.set_ylabel("count")
    events.legend(loc="upper left", fontsize="small")
    step = max(1, len(x) // 20)
    events.set_xticks(x[::step], labels[::step], rotation=45, ha="right")
    figure.suptitle(f"veille: {len(rows)} runs, {labels[0]} → {labels[-1]}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".png":
        figure.savefig(path, dpi=110)
        return path
    svg = io.StringIO()
    figure.savefig(svg, format="svg")
    body = "\n".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in r) + "</tr>" for r in rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in TREND_COLUMNS)
    path.write_text(
        "<!doctype html><html lang='fr'><head><meta charset='utf-8'><title>veille trends</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>"
        f"<h1>veille trends</h1>{svg.getvalue()}<table><tr>{head}</tr>{body}</table></body></html>",
        encoding="utf-8",
    )
    return path


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("sql")(sql)
    app.command("runs")(runs)
    app.command("trends")(trends)
