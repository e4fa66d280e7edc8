"""The catalogue (format, order, view, summaries, token estimate) and document fetches."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from tests.fixtures.corpus_factory import doc_text, write_corpus
from veille.roles.planner import CatalogueEntry
from veille.store.ingest import ingest_corpus
from veille.store.migrations import latest_version
from veille.store.readers import document_snapshot, fetch_documents, read_catalogue
from veille.tokens import estimate_tokens

SPEC_LINE = "doc-03 | 2026-07-08 | benchmark-interne | Banc d'essai de juillet : Kestrel, Tamaris, Orvet"


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    # File names deliberately not in id order: the catalogue is ordered by id, not by file.
    corpus = write_corpus(
        tmp_path / "corpus",
        {
            "a-bench.md": doc_text(
                "doc-03",
                date="2026-07-08",
                source_type="benchmark-interne",
                title='"Banc d\'essai de juillet : Kestrel, Tamaris, Orvet"',
                extra='summary: "Le banc mesure 1 180 tokens/s pour Tamaris."\n',
                body="Débit mesuré pour Tamaris : 1 180 tokens/s.",
            ),
            "b-sheet.md": doc_text(
                "doc-02", date='"2026-02-12"', source_type="fiche-fournisseur", title='"Tamaris 5 : fiche"'
            ),
            "c-minutes.md": doc_text(
                "doc-13", date='"2026-06-11"', source_type="compte-rendu", title='"Dimensionnement 2027"'
            ),
        },
    )
    path = tmp_path / "wh" / "veille.duckdb"
    ingest_corpus(corpus, path)
    return path


def test_catalogue_lines_follow_the_spec(db: Path) -> None:
    catalogue = read_catalogue(db)
    assert catalogue.text.splitlines() == [
        "doc-02 | 2026-02-12 | fiche-fournisseur | Tamaris 5 : fiche",
        SPEC_LINE,
        "doc-13 | 2026-06-11 | compte-rendu | Dimensionnement 2027",
    ]
    assert catalogue.lines == catalogue.text.splitlines()
    assert catalogue.token_estimate == estimate_tokens(catalogue.text) > 0
    assert catalogue.entries[1] == CatalogueEntry(
        id="doc-03",
        date="2026-07-08",
        source_type="benchmark-interne",
        title="Banc d'essai de juillet : Kestrel, Tamaris, Orvet",
        summary="Le banc mesure 1 180 tokens/s pour Tamaris.",
    )


def test_catalogue_with_summaries(db: Path) -> None:
    catalogue = read_catalogue(db, with_summaries=True)
    assert catalogue.with_summaries
    lines = catalogue.text.splitlines()
    assert lines[1] == SPEC_LINE + " — Le banc mesure 1 180 tokens/s pour Tamaris."
    assert lines[0] == "doc-02 | 2026-02-12 | fiche-fournisseur | Tamaris 5 : fiche"  # no summary, no dash
    assert catalogue.token_estimate > read_catalogue(db).token_estimate


def test_catalogue_is_a_duckdb_view(db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    try:
        lines = [r[0] for r in con.execute("SELECT line FROM catalogue ORDER BY id").fetchall()]
    finally:
        con.close()
    assert lines == read_catalogue(db).lines


def test_catalogue_without_database(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run `veille ingest`"):
        read_catalogue(tmp_path / "missing.duckdb")


def test_fetch_documents_in_the_order_asked(db: Path) -> None:
    docs = fetch_documents(db, ["doc-13", "doc-03", "doc-13"])
    assert [d.id for d in docs] == ["doc-13", "doc-03"]
    assert docs[1].date == "2026-07-08"
    assert docs[1].source_type == "benchmark-interne"
    assert docs[1].body == "Débit mesuré pour Tamaris : 1 180 tokens/s."
    assert fetch_documents(db, []) == []


def test_fetch_unknown_ids_names_them_all(db: Path) -> None:
    with pytest.raises(KeyError) as info:
        fetch_documents(db, ["doc-03", "doc-41", "doc-99"])
    assert "doc-41, doc-99" in str(info.value)


def test_fetch_from_many_threads(db: Path) -> None:
    # Each call opens its own read-only connection: no connection is shared across threads.
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: fetch_documents(db, ["doc-02", "doc-03"]), range(32)))
    assert all([d.id for d in r] == ["doc-02", "doc-03"] for r in results)


def test_document_snapshot(db: Path) -> None:
    snapshot = document_snapshot(db)
    assert [i for i, _ in snapshot] == ["doc-02", "doc-03", "doc-13"]
    assert all(len(h) == 64 for _, h in snapshot)


def test_outdated_schema_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE schema_migrations (version INTEGER, name VARCHAR, applied_at TIMESTAMP)")
        con.execute("INSERT INTO schema_migrations VALUES (1, 'migration_001_corpus_schema.sql', now())")
    finally:
        con.close()
    needs = f"schema version 1, this code needs {latest_version()}: run `veille ingest`"
    with pytest.raises(RuntimeError, match=needs):
        read_catalogue(path)
