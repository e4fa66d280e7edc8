"""Reading the corpus database: the catalogue, document texts, the snapshot, source metadata.

Each reader opens its own read-only connection per call (veille.store.connection): never share a
DuckDB connection across threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from veille.roles.analyst import DocumentText
from veille.roles.planner import CatalogueEntry
from veille.store.connection import missing_database, read_only
from veille.store.lock import retry_on_lock
from veille.store.queries import read_sql
from veille.tokens import estimate_tokens

__all__ = [
    "Catalogue",
    "SourceMeta",
    "document_snapshot",
    "fetch_documents",
    "read_catalogue",
    "section_digests",
    "source_metadata",
]


@dataclass
class Catalogue:
    entries: list[CatalogueEntry]
    text: str  # one line per document, ordered by id
    token_estimate: int  # veille.tokens.estimate_tokens(text)
    with_summaries: bool = False
    # id -> (hash of the text's words, paragraph sketch): copies found on the text (veille.steps.duplicates)
    fingerprints: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@dataclass(frozen=True)
class SourceMeta:
    """Bibliographic metadata of a document for the Sources section (the catalogue carries no url)."""

    id: str
    date: str
    source_type: str
    title: str
    url: str | None = None
    date_origin: str | None = None  # veille.docdates.DATE_ORIGINS; date is « date inconnue » when unknown
    title_origin: str | None = None  # « front matter », « file name »… (veille.corpus.document)


def read_catalogue(db_path: Path, *, with_summaries: bool = False) -> Catalogue:
    """The catalogue: one line per valid document, ordered by id (``id | date | source_type | title``,
    plus `` — summary`` when ``with_summaries`` and the document has one)."""
    with read_only(db_path) as con:
        rows = con.execute(read_sql("catalogue.sql")).fetchall()
    entries: list[CatalogueEntry] = []
    lines: list[str] = []
    fingerprints: dict[str, tuple[str, tuple[int, ...]]] = {}
    for doc_id, date, source_type, title, summary, line, text_hash, sketch in rows:
        if text_hash is not None:
            fingerprints[doc_id] = (text_hash, tuple(sketch or ()))
        entries.append(
            CatalogueEntry(id=doc_id, date=date, source_type=source_type, title=title, summary=summary)
        )
        lines.append(f"{line} — {summary}" if with_summaries and summary else line)
    text = "\n".join(lines)
    return Catalogue(
        entries=entries,
        text=text,
        token_estimate=estimate_tokens(text),
        with_summaries=with_summaries,
        fingerprints=fingerprints,
    )


def fetch_documents(db_path: Path, ids: Sequence[str]) -> list[DocumentText]:
    """Full text of the given documents, in the order asked (duplicates collapsed). Unknown or removed
    ids raise KeyError naming them. Opens its own read-only connection: safe to call from threads."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    with read_only(db_path) as con:
        rows = con.execute(read_sql("fetch_documents.sql"), {"ids": wanted}).fetchall()
    found = {
        row[0]: DocumentText(id=row[0], date=row[1], source_type=row[2], title=row[3], body=row[4])
        for row in rows
    }
    missing = [i for i in wanted if i not in found]
    if missing:
        raise KeyError(f"unknown or removed document id(s): {', '.join(missing)}")
    return [found[i] for i in wanted]


def section_digests(db_path: Path, versions: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """The section digests of each (document id, content hash) version ingested since the database
    kept them (veille/store/section_rows.py); a version not found is absent (read whole, as before)."""
    wanted = list(dict.fromkeys(versions))
    if not wanted:
        return {}
    params = {"ids": [i for i, _ in wanted], "hashes": [h for _, h in wanted]}
    with read_only(db_path) as con:
        try:
            rows = con.execute(read_sql("fetch_section_digests.sql"), params).fetchall()
        except duckdb.CatalogException:  # a database not yet migrated to version 6
            return {}
    return {(str(a), str(b)): [str(x) for x in c] for a, b, c in rows}


def document_snapshot(db_path: Path) -> list[tuple[str, str]]:
    """(id, content_hash) of every valid, non-removed document, ordered by id."""
    with read_only(db_path) as con:
        return [(str(a), str(b)) for a, b in con.execute(read_sql("document_snapshot.sql")).fetchall()]


def source_metadata(db_path: Path, ids: Sequence[str]) -> dict[str, SourceMeta]:
    """Metadata of the valid documents among ``ids`` (unknown ids are simply absent)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    if not Path(db_path).is_file():
        raise missing_database(db_path)
    sql = read_sql("source_metadata.sql")
    # No schema-version check here (unlike read_only): the report only needs the documents table.
    con = retry_on_lock(
        lambda: duckdb.connect(str(db_path), read_only=True), db_path
    )  # see veille.store.lock
    try:
        rows = con.execute(sql, {"ids": wanted}).fetchall()
    finally:
        con.close()
    return {
        str(r[0]): SourceMeta(
            str(r[0]), str(r[1]), str(r[2]), str(r[3]), r[4] or None, r[5] or None, r[6] or None
        )
        for r in rows
    }
