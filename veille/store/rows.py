"""The rows an ingestion writes (Arrow layouts of the tables) and the stored state it compares files to.

Package-private (the names keep their underscore): only veille.store.ingest uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from veille.alerts import Alert
from veille.corpus.document import DocumentFields
from veille.corpus.sections import text_fingerprint
from veille.store.queries import read_sql, utcnow

__all__ = ["IngestReport"]


@dataclass
class IngestReport:
    added: int
    updated: int
    unchanged: int
    removed: int
    skipped: int  # invalid files, not loaded
    documents: int  # valid, non-removed documents in the database after the run
    alerts: list[Alert]
    run_id: str = ""
    corpus_dir: str = ""
    database: str = ""
    duration_s: float = 0.0

    @property
    def ingested(self) -> int:
        """Files whose content was loaded by this run (added + updated)."""
        return self.added + self.updated


class _Stored(NamedTuple):
    path: str
    content_hash: str
    file_size: int | None
    file_mtime_ns: int | None
    unknown_fields: list[str]
    valid: bool
    ingested_at: datetime
    date_origin: str | None = None


# Column order = table order (migration_001): rows are appended with Relation.insert_into, which maps
# columns by position. tests/test_ingest.py checks the two stay in step.
_DOC_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("date", pa.date32()),
        ("source_type", pa.string()),
        ("title", pa.string()),
        ("summary", pa.string()),
        ("url", pa.string()),
        ("author", pa.string()),
        ("body", pa.string()),
        ("word_count", pa.int32()),
        ("content_hash", pa.string()),
        ("path", pa.string()),
        ("file_size", pa.int64()),
        ("file_mtime_ns", pa.int64()),
        ("unknown_fields", pa.list_(pa.string())),
        ("status", pa.string()),
        ("ingested_at", pa.timestamp("us")),
        ("updated_at", pa.timestamp("us")),
        # migration_003 (appended columns)
        ("format", pa.string()),
        ("id_origin", pa.string()),
        ("title_origin", pa.string()),
        ("date_origin", pa.string()),
        ("source_type_origin", pa.string()),
        ("text_hash", pa.string()),
        ("text_sketch", pa.list_(pa.uint64())),
    ]
)
_SECTION_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("n", pa.int32()),
        ("heading", pa.string()),
        ("start", pa.int32()),
        ("length", pa.int32()),
        ("tokens", pa.int32()),
    ]
)
_CONVERSION_SCHEMA = pa.schema(
    [
        ("content_hash", pa.string()),
        ("format", pa.string()),
        ("text", pa.string()),
        ("title", pa.string()),
        ("date", pa.date32()),
        ("author", pa.string()),
        ("origins", pa.string()),
        ("converted_at", pa.timestamp("us")),
    ]
)
_TOUCH_SCHEMA = pa.schema(
    [("id", pa.string()), ("path", pa.string()), ("file_size", pa.int64()), ("file_mtime_ns", pa.int64())]
)
_LOG_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("logged_at", pa.timestamp("us")),
        ("path", pa.string()),
        ("doc_id", pa.string()),
        ("event", pa.string()),
        ("code", pa.string()),
        ("message", pa.string()),
    ]
)


def _columns(schema: pa.Schema) -> dict[str, list[Any]]:
    return {name: [] for name in schema.names}


def _load_state(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, _Stored], dict[str, str]]:
    stored: dict[str, _Stored] = {}
    by_path: dict[str, str] = {}
    cursor = con.execute(read_sql("corpus_state.sql"))
    while rows := cursor.fetchmany(10_000):
        for doc_id, path, content_hash, size, mtime_ns, unknown, status, ingested_at, date_origin in rows:
            valid = status == "valid"
            stored[doc_id] = _Stored(
                path, content_hash, size, mtime_ns, unknown or [], valid, ingested_at, date_origin
            )
            if valid:
                by_path[path] = doc_id
    return stored, by_path


def _record_run(con: duckdb.DuckDBPyConnection, values: dict[str, Any]) -> int:
    """Insert the ingest_runs row (``values``: run_id, corpus_dir, strict, started_at and the counts);
    returns the number of valid documents after this run."""
    row = con.execute(read_sql("count_valid_documents.sql")).fetchone()
    documents = int(row[0]) if row else 0
    con.execute(
        read_sql("insert_ingest_run.sql"), {**values, "finished_at": utcnow(), "documents": documents}
    )
    return documents


def _document_row(
    doc: DocumentFields, rel: str, size: int, mtime_ns: int, first: datetime, now: datetime
) -> tuple[Any, ...]:
    """One ``documents`` row in :data:`_DOC_SCHEMA` order (``first``: its first ingestion)."""
    text_hash, sketch = text_fingerprint(doc.body)
    return (
        *doc[:10],  # id .. content_hash
        rel,
        size,
        mtime_ns,
        doc.unknown_fields,
        "valid",
        first,
        now,
        doc.format,
        *(doc.origins.get(k, "front matter") for k in ("id", "title", "date", "source_type")),
        text_hash,
        sketch,
    )


def _redated(stored: str | None, origin: str) -> bool:
    """Same bytes, yet the date to store differs: the file-clock setting changed (unknown <-> file
    clock), or a file-clock date whose file was touched (its day may have changed)."""
    return stored != origin or origin == "file_clock"
