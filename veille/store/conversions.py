"""The conversion cache: converted text of non-Markdown files by content hash, in the corpus database.

An unchanged PDF (same bytes, even renamed or touched) is never converted again: its text and
metadata come from the ``conversions`` table. Rows are buffered and written with the ingestion's
batches, inside its transaction; conversions no valid document holds any more are pruned at the end.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import duckdb

from veille.arrowrows import table_from_columns
from veille.corpus.convert import Converted, convert_bytes
from veille.store.queries import read_sql
from veille.store.rows import _CONVERSION_SCHEMA, _columns

__all__ = ["ConversionCache"]


class ConversionCache:
    """Look-ups and buffered inserts on one open connection (inside the caller's transaction)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, now: datetime.datetime) -> None:
        self.con = con
        self.now = now
        self.known = {row[0] for row in con.execute(read_sql("known_conversions.sql")).fetchall()}
        self.pending = _columns(_CONVERSION_SCHEMA)
        self.recent: dict[str, Converted] = {}  # converted in the batch not yet written
        self.hits = 0
        self.converted = 0

    def convert(self, data: bytes, *, name: str, content_hash: str) -> Converted:
        """The cached conversion of these bytes, else convert them (ConversionError on bad content)."""
        if content_hash in self.recent:
            self.hits += 1
            return self.recent[content_hash]
        if content_hash in self.known:
            rows = self.con.execute(read_sql("fetch_conversion.sql"), {"hash": content_hash}).fetchall()
            if rows:
                row = rows[0]
                self.hits += 1
                fmt, text, title, date, author, origins = row
                return Converted(text, fmt, title, date, author, json.loads(origins))
        converted = convert_bytes(data, name=name)
        self.converted += 1
        self.known.add(content_hash)
        self.recent[content_hash] = converted
        date = converted.date
        day = date.date() if isinstance(date, datetime.datetime) else date
        values: tuple[Any, ...] = (
            content_hash,
            converted.format,
            converted.text,
            converted.title,
            day,
            converted.author,
            json.dumps(converted.origins, sort_keys=True),
            self.now,
        )
        for key, value in zip(_CONVERSION_SCHEMA.names, values, strict=True):
            self.pending[key].append(value)
        return converted

    def flush(self) -> None:
        if self.pending["content_hash"]:
            self.con.from_arrow(table_from_columns(self.pending, _CONVERSION_SCHEMA)).insert_into(
                "conversions"
            )
            self.pending = _columns(_CONVERSION_SCHEMA)
        self.recent = {}

    def prune(self) -> None:
        self.con.execute(read_sql("prune_conversions.sql"))
