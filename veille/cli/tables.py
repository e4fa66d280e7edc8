"""Printing query results: a table when it fits the terminal, else one record per block (vertical);
Markdown, CSV and JSON on request (``veille sql --format``)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

__all__ = ["FORMATS", "cell", "render", "table_width"]

FORMATS = ("auto", "table", "vertical", "markdown", "csv", "json")


def cell(value: Any) -> str:
    """One value as printed: floats with 6 significant digits, timestamps to the second."""
    if value is None:
        return ""
    if isinstance(value, float | Decimal):
        return f"{float(value):.6g}"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value)


def table_width(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
    """Width of the boxed table at natural column widths (borders and one space of padding)."""
    widths = [max([len(c), *(len(cell(r[i])) for r in rows)]) for i, c in enumerate(columns)]
    return sum(widths) + 3 * len(widths) + 1


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, no_wrap=True)
    for row in rows:
        table.add_row(*(cell(v) for v in row))
    # Rows whole, at their natural width, rather than folded at the terminal's width.
    console = Console(file=io.StringIO(), width=max(80, table_width(columns, rows)), color_system=None)
    console.print(table)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _vertical(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None) -> str:
    label = max((len(c) for c in columns), default=0)
    out = [title] if title else []
    for number, row in enumerate(rows, start=1):
        out.append(f"-[ row {number} ]" + "-" * max(0, label - 8))
        out += [f"{c.ljust(label)} | {cell(v)}" for c, v in zip(columns, row, strict=True)]
    return "\n".join(out) + "\n"


def _markdown(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = [f"**{title}**", ""] if title else []
    out.append("| " + " | ".join(esc(c) for c in columns) + " |")
    out.append("|" + "---|" * len(columns))
    out += ["| " + " | ".join(esc(cell(v)) for v in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


def render(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str = "auto",
    *,
    title: str | None = None,
    width: int | None = None,
) -> str:
    """The rows in ``fmt`` (one of :data:`FORMATS`). ``auto``: a table when it fits ``width``
    (default: the terminal's, ``COLUMNS``, else 80), else vertical, one block per row."""
    if fmt == "auto":
        limit = width or shutil.get_terminal_size().columns
        fmt = "table" if table_width(columns, rows) <= limit else "vertical"
    if fmt == "table":
        return _table(columns, rows, title)
    if fmt == "vertical":
        return _vertical(columns, rows, title)
    if fmt == "markdown":
        return _markdown(columns, rows, title)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[cell(v) for v in row] for row in rows])
        return buffer.getvalue()
    if fmt == "json":
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        return json.dumps(records, ensure_ascii=False, indent=2, default=_json_default) + "\n"
    raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
