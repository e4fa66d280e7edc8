"""The sections of the documents an ingestion writes, buffered per batch: their offsets (table
``sections``, what reading by sections uses) and the digest of each section of this version (table
``section_digests``, kept across versions: what an edit changed, veille/steps/edited_sections.py —
since issue 40 item 3 one digest per paragraph, ``veille.corpus.sections.change_digests``)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from veille.arrowrows import table_from_columns
from veille.corpus.sections import paragraphs, section_digest, split_sections
from veille.store.queries import read_sql
from veille.store.rows import _SECTION_SCHEMA, _columns

__all__ = ["SectionRows"]

_DIGEST_SCHEMA = pa.schema(
    [("doc_id", pa.string()), ("content_hash", pa.string()), ("digests", pa.list_(pa.string()))]
)


class SectionRows:
    """Rows of one batch: :meth:`add` per document written, :meth:`flush` with the batch."""

    def __init__(self) -> None:
        self.sections = _columns(_SECTION_SCHEMA)
        self.digests = _columns(_DIGEST_SCHEMA)

    def add(self, doc_id: str, content_hash: str, body: str) -> None:
        sections = split_sections(body)
        for section in sections:
            values: tuple[object, ...] = (
                doc_id,
                section.n,
                section.heading,
                section.start,
                section.length,
                section.tokens,
            )
            for key, value in zip(_SECTION_SCHEMA.names, values, strict=True):
                self.sections[key].append(value)
        # One digest per paragraph (change_digests, the sections split once): an edit is found in
        # the paragraphs it touched, not in its whole section.
        digests = [section_digest(p.text(body)) for _, p in paragraphs(body, sections)]
        row: tuple[object, ...] = (doc_id, content_hash, digests)
        for key, cell in zip(_DIGEST_SCHEMA.names, row, strict=True):
            self.digests[key].append(cell)

    def flush(self, con: duckdb.DuckDBPyConnection, replaced: Sequence[str]) -> None:
        """Replace the sections of ``replaced`` documents, add this batch's; keep every version's
        digests (one row per document and content hash)."""
        if replaced:
            con.execute(read_sql("delete_sections.sql"), {"ids": list(replaced)})
        if self.sections["doc_id"]:
            con.from_arrow(table_from_columns(self.sections, _SECTION_SCHEMA)).insert_into("sections")
        if self.digests["doc_id"]:
            con.register("digest_batch", table_from_columns(self.digests, _DIGEST_SCHEMA))
            try:
                con.execute(read_sql("insert_section_digests.sql"))
            finally:
                con.unregister("digest_batch")
        self.sections, self.digests = _columns(_SECTION_SCHEMA), _columns(_DIGEST_SCHEMA)
