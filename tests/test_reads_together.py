"""veille.store.connection.reads_together: the reads of a block share one open database and find
what they find alone; the block leaves the file free for this process's next ingestion; a missing
database runs the block without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.flowkit import write_corpus
from veille.store.connection import reads_together
from veille.store.ingest import ingest_corpus
from veille.store.readers import document_snapshot, fetch_documents, read_catalogue


def test_reads_in_a_block_find_what_they_find_alone_and_the_next_ingestion_writes(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    db = tmp_path / "corpus.duckdb"
    ingest_corpus(corpus, db)
    alone = read_catalogue(db), document_snapshot(db)
    ids = [e.id for e in alone[0].entries]
    bodies = [d.body for d in fetch_documents(db, ids)]
    with reads_together(db):
        together = read_catalogue(db), document_snapshot(db)
        assert [d.body for d in fetch_documents(db, ids)] == bodies
    assert together == alone
    # A read-write connection in this process is refused while any read-only one is open.
    (corpus / "docs" / "extra.md").write_text(
        '---\nid: doc-extra\ndate: "2026-11-01"\nsource_type: blog-editeur\ntitle: "Kestrel 2"\n---\n\n'
        "Kestrel 2 annonce un débit de 1 200 requêtes par seconde.\n",
        encoding="utf-8",
    )
    ingest_corpus(corpus, db)
    assert "doc-extra" in {e.id for e in read_catalogue(db).entries}


def test_a_missing_database_runs_the_block_and_each_reader_says_so(tmp_path: Path) -> None:
    db = tmp_path / "absent.duckdb"
    with reads_together(db), pytest.raises(FileNotFoundError):
        read_catalogue(db)
