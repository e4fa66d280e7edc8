"""The `veille trends` chart: one series per corpus and request, failed runs drawn apart, x in run time."""

from __future__ import annotations

import html
import io
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from veille.cli.tables import cell

__all__ = ["TREND_COLUMNS", "render_chart", "series_key", "series_label"]

# Columns of veille/warehouse/sql/warehouse_trends.sql, in order.
TREND_COLUMNS = (
    "run_date",
    "started_at",
    "run_id",
    "run_key",
    "scores_flow_run_attempt",
    "flow_run_attempts",
    "corpus_dir",
    "request_title",
    "status",
    "flow_run_cost_usd",
    "flow_run_cost_complete",
    "flow_run_total_tokens",
    "flow_run_calls",
    "score_judge",
    "score_rouge_l",
    "score_numeric",
    "score_judge_numbers",
    "alerts",
    "alerts_error",
    "rounds",
    "revision_gain",
)
_SCORES = ("score_judge", "score_rouge_l", "score_numeric", "score_judge_numbers")

Row = Mapping[str, Any]


def series_key(row: Row) -> tuple[str, str]:
    """Runs of one corpus and one request form a series."""
    return (str(row["corpus_dir"] or "?"), str(row["request_title"] or "?"))


def series_label(key: tuple[str, str]) -> str:
    corpus, request = key
    title = request if len(request) <= 40 else request[:39] + "…"
    return f"{Path(corpus).name or corpus} — {title}"


def _value(row: Row, name: str) -> float:
    return float("nan") if row[name] is None else float(row[name])


def _groups(rows: Sequence[Row]) -> dict[tuple[str, str], list[Row]]:
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault(series_key(row), []).append(row)
    return groups


def _draw(
    axes: Any, groups: Mapping[tuple[str, str], list[Row]], name: str, colors: Mapping[Any, str]
) -> None:
    """One line per series over its completed runs; its failed runs as red crosses, not on the line."""
    for key, group in groups.items():
        done = [r for r in group if r["status"] != "failed"]
        failed = [r for r in group if r["status"] == "failed"]
        axes.plot(
            [r["started_at"] for r in done],
            [_value(r, name) for r in done],
            marker="o",
            ms=3,
            color=colors[key],
        )
        if failed:
            axes.scatter(
                [r["started_at"] for r in failed],
                [_value(r, name) for r in failed],
                marker="x",
                color="tab:red",
                zorder=3,
            )


def render_chart(rows: Sequence[Sequence[Any]], path: Path) -> Path:
    """Cost, tokens, judge score and alerts per run (rows as in TREND_COLUMNS) to PNG or HTML."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
    from matplotlib.lines import Line2D

    suffix = path.suffix.lower()
    if suffix not in (".png", ".html"):
        raise ValueError(f"chart {path}: expected a .png or .html file name")
    records = [dict(zip(TREND_COLUMNS, r, strict=True)) for r in rows if r[1] is not None]
    groups = _groups(records)
    palette = ["tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:cyan", "tab:olive"]
    colors = {key: palette[i % len(palette)] for i, key in enumerate(groups)}
    figure = Figure(figsize=(11, 9), layout="constrained")
    panels = figure.subplots(4, 1, sharex=True)
    for axes, name, label in zip(
        panels,
        ("flow_run_cost_usd", "flow_run_total_tokens", "score_judge", "alerts"),
        ("cost, all attempts (USD)", "tokens, all attempts", "judge score", "alerts"),
        strict=True,
    ):
        _draw(axes, groups, name, colors)
        axes.set_ylabel(label)
    panels[2].set_ylim(0, 1.05)
    handles = [Line2D([], [], color=colors[k], marker="o", label=series_label(k)) for k in groups]
    handles.append(Line2D([], [], color="tab:red", marker="x", linestyle="", label="failed run"))
    panels[0].legend(handles=handles, loc="upper left", fontsize="small")
    panels[3].tick_params(axis="x", labelrotation=30)
    times: list[datetime] = [r["started_at"] for r in records]
    span = f"{min(times):%Y-%m-%d %H:%M} → {max(times):%Y-%m-%d %H:%M} UTC" if times else "no run"
    figure.suptitle(f"veille: {len(records)} runs, {len(groups)} series, {span}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".png":
        figure.savefig(path, dpi=110)
        return path
    svg = io.StringIO()
    figure.savefig(svg, format="svg")
    body = "\n".join("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in r) + "</tr>" for r in rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in TREND_COLUMNS)
    path.write_text(
        "<!doctype html><html lang='fr'><head><meta charset='utf-8'><title>veille trends</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;font-size:12px}"
        "td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>"
        f"<h1>veille trends</h1>{svg.getvalue()}<table><tr>{head}</tr>{body}</table></body></html>",
        encoding="utf-8",
    )
    return path
