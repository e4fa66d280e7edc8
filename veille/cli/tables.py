"""Printing query results: a table when it fits the terminal, else one record per block (vertical);
Markdown, CSV and JSON on request (``veille sql --format``). :func:`write_batches` prints a result
batch by batch (``veille sql --max-rows 0``): CSV, JSON, Markdown and vertical as one document, a table
as one table per batch — never the whole result in memory."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

__all__ = ["FORMATS", "cell", "render", "table_width", "write_batches"]

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


def _vertical(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None, first: int = 1
) -> str:
    label = max((len(c) for c in columns), default=0)
    out = [title] if title else []
    for number, row in enumerate(rows, start=first):
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


def _json_records(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """Each row as the indented object ``render(..., "json")`` prints inside its list."""
    return [
        "  "
        + json.dumps(
            dict(zip(columns, row, strict=True)), ensure_ascii=False, indent=2, default=_json_default
        ).replace("\n", "\n  ")
        for row in rows
    ]


def write_batches(
    columns: Sequence[str],
    batches: Iterable[Sequence[Sequence[Any]]],
    fmt: str,
    write: Callable[[str], object],
    *,
    width: int | None = None,
) -> int:
    """Print ``batches`` of rows as they come (``write`` each piece); the number of rows printed.
    CSV, JSON, Markdown and vertical read as :func:`render` of all the rows would; ``table`` is one
    table per batch; ``auto`` chooses table or vertical on the first batch and keeps it."""
    count = 0
    for batch in batches:
        if fmt == "auto":
            limit = width or shutil.get_terminal_size().columns
            fmt = "table" if table_width(columns, batch) <= limit else "vertical"
        if fmt == "table":
            write(_table(columns, batch, None))
        elif fmt == "vertical":
            write(_vertical(columns, batch, None, first=count + 1))
        elif fmt == "markdown":
            text = _markdown(columns, batch, None)
            write(text if count == 0 else text.split("\n", 2)[2])  # the header once
        elif fmt == "csv":
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            if count == 0:
                writer.writerow(columns)
            writer.writerows([[cell(v) for v in row] for row in batch])
            write(buffer.getvalue())
        elif fmt == "json":
            write(("[\n" if count == 0 else ",\n") + ",\n".join(_json_records(columns, batch)))
        else:
            raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
        count += len(batch)
    if count == 0:
        write(render(columns, [], fmt))
    elif fmt == "json":
        write("\n]\n")
    return count
