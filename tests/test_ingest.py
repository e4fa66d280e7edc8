"""Ingestion into DuckDB: incremental behaviour, skipped/strict handling, one transaction, schema."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.fixtures.corpus_factory import copy_mini_corpus, doc_text, write_corpus
from veille.corpus.errors import CorpusError, StrictModeError
from veille.store import ingest as store
from veille.store.ingest import ingest_corpus
from veille.store.migrations import MIGRATIONS, migrate
from veille.store.readers import document_snapshot, fetch_documents, read_catalogue


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return copy_mini_corpus(tmp_path / "corpus")


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    return tmp_path / "wh" / "veille.duckdb"


def rows(db: Path, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything ingestion writes, to compare a database before and after a failed run."""
    return {
        table: rows(db, f"SELECT * FROM {table} ORDER BY ALL")
        for table in ("documents", "ingest_runs", "ingest_log", "schema_migrations")
    }


def codes(report: store.IngestReport) -> list[str]:
    return [a.code for a in report.alerts]


# ------------------------------------------------------------------------------------------- basics
def test_first_ingest_loads_every_document(corpus: Path, db: Path) -> None:
    report = ingest_corpus(corpus, db)
    assert (report.added, report.updated, report.unchanged, report.removed, report.skipped) == (4, 0, 0, 0, 0)
    assert report.documents == 4
    assert report.alerts == []
    stored = rows(
        db, "SELECT id, date::VARCHAR, source_type, path, status, word_count FROM documents ORDER BY id"
    )
    assert stored[1] == ("doc-02", "2026-07-08", "benchmark-interne", "docs/doc-02.md", "valid", 25)
    assert [r[0] for r in stored] == ["doc-01", "doc-02", "doc-03", "doc-04"]
    assert rows(db, "SELECT event, count(*) FROM ingest_log GROUP BY event") == [("added", 4)]
    assert rows(db, "SELECT added, documents, strict FROM ingest_runs") == [(4, 4, False)]


def test_documents_schema_matches_the_insert_layout(corpus: Path, db: Path) -> None:
    # Rows are appended by position (Relation.insert_into): the Arrow schema must follow the table.
    ingest_corpus(corpus, db)
    columns = [r[0] for r in rows(db, "SELECT column_name FROM (DESCRIBE documents)")]
    assert columns == store._DOC_SCHEMA.names
    log_columns = [r[0] for r in rows(db, "SELECT column_name FROM (DESCRIBE ingest_log)")]
    assert log_columns == store._LOG_SCHEMA.names


def test_migrations_are_registered_in_order_and_applied_once(tmp_path: Path) -> None:
    sql_dir = Path(store.__file__).parent / "sql"
    on_disk = sorted(p.name for p in sql_dir.glob("migration_*.sql"))
    assert [name for _, name in MIGRATIONS] == on_disk
    versions = [v for v, _ in MIGRATIONS]
    assert versions == sorted(set(versions))
    for version, name in MIGRATIONS:
        assert re.match(rf"migration_{version:03d}_", name)
    con = duckdb.connect(str(tmp_path / "m.duckdb"))
    try:
        assert migrate(con) == versions
        assert migrate(con) == []
        assert [
            r[0] for r in con.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
        ] == versions
    finally:
        con.close()


# -------------------------------------------------------------------------------------- incremental
@pytest.mark.parametrize("trust_file_stat", [True, False])
def test_reingest_without_change(corpus: Path, db: Path, trust_file_stat: bool) -> None:
    ingest_corpus(corpus, db)
    before = rows(db, "SELECT * FROM documents ORDER BY id")
    report = ingest_corpus(corpus, db, trust_file_stat=trust_file_stat)
    assert (report.added, report.updated, report.unchanged, report.removed) == (0, 0, 4, 0)
    assert rows(db, "SELECT * FROM documents ORDER BY id") == before
    assert len(rows(db, "SELECT * FROM ingest_runs")) == 2


def test_changed_document_is_updated(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    (first_ingested,) = rows(db, "SELECT ingested_at FROM documents WHERE id = 'doc-03'")[0]
    path = corpus / "docs" / "doc-03.md"
    path.write_text(path.read_text(encoding="utf-8").replace("12 GPU", "16 GPU"), encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 3)
    body, ingested_at, updated_at = rows(
        db, "SELECT body, ingested_at, updated_at FROM documents WHERE id = 'doc-03'"
    )[0]
    assert "16 GPU" in body
    assert ingested_at == first_ingested
    assert updated_at > ingested_at
    assert fetch_documents(db, ["doc-03"])[0].body == body
    assert rows(db, "SELECT doc_id FROM ingest_log WHERE event = 'updated'") == [("doc-03",)]


def test_deleted_document_is_marked_removed_then_restored(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    saved = (corpus / "docs" / "doc-02.md").read_bytes()
    (corpus / "docs" / "doc-02.md").unlink()
    report = ingest_corpus(corpus, db)
    assert (report.removed, report.unchanged, report.documents) == (1, 3, 3)
    assert rows(db, "SELECT status FROM documents WHERE id = 'doc-02'") == [("removed",)]
    assert [e.id for e in read_catalogue(db).entries] == ["doc-01", "doc-03", "doc-04"]
    with pytest.raises(KeyError, match="doc-02"):
        fetch_documents(db, ["doc-02"])

    (corpus / "docs" / "doc-02.md").write_bytes(saved)
    report = ingest_corpus(corpus, db)
    assert (report.added, report.removed, report.documents) == (1, 0, 4)
    assert rows(db, "SELECT status FROM documents WHERE id = 'doc-02'") == [("valid",)]


def test_renamed_file_keeps_its_document(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    os.rename(corpus / "docs" / "doc-04.md", corpus / "docs" / "zz-renamed.md")
    report = ingest_corpus(corpus, db)
    assert (report.added, report.updated, report.unchanged, report.removed) == (0, 0, 4, 0)
    assert rows(db, "SELECT path FROM documents WHERE id = 'doc-04'") == [("docs/zz-renamed.md",)]


def test_stat_shortcut_and_full_hash_check(corpus: Path, db: Path) -> None:
    """Documented trade-off: an edit that keeps size and mtime is only seen with trust_file_stat=False."""
    ingest_corpus(corpus, db)
    path = corpus / "docs" / "doc-01.md"
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("2 650", "2 651"), encoding="utf-8")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert ingest_corpus(corpus, db).updated == 0
    report = ingest_corpus(corpus, db, trust_file_stat=False)
    assert (report.updated, report.unchanged) == (1, 3)
    assert "2 651" in fetch_documents(db, ["doc-01"])[0].body


def test_touched_file_is_rehashed_not_updated(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    path = corpus / "docs" / "doc-01.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10_000_000_000))
    report = ingest_corpus(corpus, db)
    assert (report.updated, report.unchanged) == (0, 4)
    stored = rows(db, "SELECT file_mtime_ns FROM documents WHERE id = 'doc-01'")[0][0]
    assert stored == path.stat().st_mtime_ns  # refreshed, so the next run takes the shortcut


def test_another_corpus_folder_is_hashed_not_trusted(tmp_path: Path, db: Path) -> None:
    first = copy_mini_corpus(tmp_path / "a")
    second = copy_mini_corpus(tmp_path / "b")
    ingest_corpus(first, db)
    path = second / "docs" / "doc-01.md"
    text = path.read_text(encoding="utf-8").replace("2 650", "2 651")
    path.write_text(text, encoding="utf-8")
    src = (first / "docs" / "doc-01.md").stat()
    os.utime(path, ns=(src.st_atime_ns, src.st_mtime_ns))  # same relative path, size and mtime
    assert ingest_corpus(second, db).updated == 1


def test_batches_give_the_same_result(corpus: Path, tmp_path: Path) -> None:
    one = tmp_path / "one.duckdb"
    many = tmp_path / "many.duckdb"
    ingest_corpus(corpus, one)
    ingest_corpus(corpus, many, batch_size=1)
    (corpus / "docs" / "doc-02.md").write_text(doc_text("doc-02", body="Nouveau corps."), encoding="utf-8")
    (corpus / "docs" / "doc-03.md").unlink()
    ingest_corpus(corpus, one)
    ingest_corpus(corpus, many, batch_size=1)
    query = "SELECT id, body, status, content_hash FROM documents ORDER BY id"
    assert rows(one, query) == rows(many, query)


# --------------------------------------------------------------------------------- invalid documents
def test_invalid_document_is_skipped_with_an_alert(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", date='"2026-02-30"'), encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert (report.added, report.skipped, report.documents) == (4, 1, 4)
    (alert,) = report.alerts
    assert (alert.code, alert.severity, alert.stage, alert.subject) == (
        "ingest.invalid_document",
        "error",
        "ingest",
        "docs/doc-05.md",
    )
    assert "doc-05.md : champ 'date' : date impossible" in alert.message
    assert rows(db, "SELECT count(*) FROM documents WHERE id = 'doc-05'") == [(0,)]
    assert rows(db, "SELECT path, event, code FROM ingest_log WHERE event = 'skipped'") == [
        ("docs/doc-05.md", "skipped", "ingest.invalid_document")
    ]


def test_document_that_becomes_invalid_leaves_the_catalogue(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    (corpus / "docs" / "doc-04.md").write_text("---\nid: Doc 04\n---\n\nCorps.\n", encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert (report.skipped, report.removed, report.documents) == (1, 1, 3)
    assert "doc-04" not in [e.id for e in read_catalogue(db).entries]


def test_duplicate_id_names_both_files(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "zz-copy.md").write_text(doc_text("doc-02", body="Copie."), encoding="utf-8")
    report = ingest_corpus(corpus, db)
    (alert,) = report.alerts
    assert alert.code == "ingest.duplicate_id"
    assert alert.subject == "docs/zz-copy.md"
    assert str(corpus / "docs" / "zz-copy.md") in alert.message
    assert str(corpus / "docs" / "doc-02.md") in alert.message
    assert "champ 'id' : identifiant en double 'doc-02'" in alert.message
    # The first file in path order keeps the id.
    assert fetch_documents(db, ["doc-02"])[0].body.startswith("Débit mesuré pour Tamaris")


def test_duplicate_id_against_an_unchanged_stored_file(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    (corpus / "docs" / "aa-first.md").write_text(doc_text("doc-03", body="Arrivé avant."), encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert codes(report) == ["ingest.duplicate_id"]
    assert report.alerts[0].subject == "docs/doc-03.md"
    assert fetch_documents(db, ["doc-03"])[0].body == "Arrivé avant."


def test_unknown_fields_warn_but_load(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", extra="tags: [x]\n"), encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert (report.added, report.skipped) == (5, 0)
    (alert,) = report.alerts
    assert (alert.code, alert.severity, alert.subject) == ("ingest.unknown_fields", "info", "docs/doc-05.md")
    assert "1 document(s)" in alert.message and "tags (1)" in alert.message
    # Still reported while the file is unchanged (the shortcut does not re-read it).
    assert codes(ingest_corpus(corpus, db)) == ["ingest.unknown_fields"]


def test_ids_differing_only_by_case(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("DOC-01"), encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert codes(report) == ["ingest.invalid_document"]
    assert "écrivez 'doc-01'" in report.alerts[0].message


def test_other_files_and_hidden_files(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "photo.png").write_bytes(b"\x89PNG")
    (corpus / "docs" / "sub").mkdir()
    (corpus / "docs" / "sub" / "table.xlsx").write_bytes(b"PK")
    (corpus / "docs" / ".doc-01.md.swp").write_bytes(b"\x00swap")  # hidden, temporary, lock, owner files:
    (corpus / "docs" / "~$rapport.docx").write_bytes(b"\x00owner")  # skipped without a word
    (corpus / "docs" / ".~lock.rapport.docx#").write_bytes(b"lock")
    (corpus / "docs" / "brouillon.md~").write_bytes(b"backup")
    report = ingest_corpus(corpus, db)
    assert codes(report) == ["ingest.ignored_files"]  # ONE alert for every file not read
    assert report.alerts[0].severity == "info"
    assert "2 fichier(s) non lu(s)" in report.alerts[0].message and ".png (1)" in report.alerts[0].message


def test_symlinks(corpus: Path, db: Path, tmp_path: Path) -> None:
    (corpus / "extra").mkdir()
    inside = corpus / "extra" / "doc-05.md"
    inside.write_text(doc_text("doc-05"), encoding="utf-8")
    os.symlink(inside, corpus / "docs" / "doc-05.md")  # a link staying in the corpus is a document
    os.symlink(corpus / "docs" / "loop.md", corpus / "docs" / "loop.md")
    report = ingest_corpus(corpus, db)
    assert (report.added, report.skipped) == (5, 1)
    assert "loop.md : fichier illisible (boucle de liens symboliques)" in report.alerts[0].message


def test_symlink_leaving_the_corpus_is_refused_and_named(corpus: Path, db: Path, tmp_path: Path) -> None:
    ingest_corpus(corpus, db)
    secret = tmp_path / "secret.md"
    secret.write_text(doc_text("doc-66", body="Ne doit pas entrer."), encoding="utf-8")
    link = corpus / "docs" / "doc-66.md"
    os.symlink(secret, link)
    dangling = corpus / "docs" / "doc-67.md"
    os.symlink(tmp_path / "missing.md", dangling)  # dangling, and outside: refused the same way
    os.rename(corpus / "docs" / "doc-02.md", tmp_path / "doc-02.md")
    os.symlink(tmp_path / "doc-02.md", corpus / "docs" / "doc-02.md")  # a stored document turned link
    before = dump(db)

    with pytest.raises(StrictModeError) as info:
        ingest_corpus(corpus, db, strict=True)
    assert info.value.path == corpus / "docs" / "doc-02.md"
    assert len(info.value.errors) == 3 and "hors du dossier du corpus" in str(info.value)
    assert dump(db) == before  # strict: nothing committed, nothing stored lost

    report = ingest_corpus(corpus, db)
    refused = [a for a in report.alerts if a.code == "ingest.symlink_outside"]
    assert sorted(a.subject or "" for a in refused) == ["docs/doc-02.md", "docs/doc-66.md", "docs/doc-67.md"]
    assert all(a.severity == "error" and str(secret.parent) in a.message for a in refused)
    assert f"{link} : lien symbolique vers {secret}" in next(
        a.message for a in refused if a.subject == "docs/doc-66.md"
    )
    assert report.skipped == 3
    assert rows(db, "SELECT count(*) FROM documents WHERE id = 'doc-66'") == [(0,)]
    # doc-02 leaves the catalogue like any file that became invalid; its row and text are kept.
    assert rows(db, "SELECT status, length(body) > 0 FROM documents WHERE id = 'doc-02'") == [
        ("removed", True)
    ]
    logged = rows(db, "SELECT path FROM ingest_log WHERE code = 'ingest.symlink_outside' ORDER BY path")
    assert logged == [("docs/doc-02.md",), ("docs/doc-66.md",), ("docs/doc-67.md",)]


def test_docs_folder_linked_outside_the_corpus_is_an_error(corpus: Path, db: Path, tmp_path: Path) -> None:
    os.rename(corpus / "docs", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", corpus / "docs")
    with pytest.raises(CorpusError, match="docs/ mène hors du dossier du corpus"):
        ingest_corpus(corpus, db)


def test_oversized_document_is_never_partially_loaded(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", body="x " * 3000), encoding="utf-8")
    report = ingest_corpus(corpus, db, max_doc_bytes=4096)
    assert report.skipped == 1
    assert "au-delà de la limite ; attendu : un fichier d'au plus 4096 octets" in report.alerts[0].message
    assert rows(db, "SELECT count(*) FROM documents WHERE id = 'doc-05'") == [(0,)]


# ----------------------------------------------------------------------------- strict / transaction
def test_strict_mode_fails_and_writes_nothing(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    before = dump(db)
    (corpus / "docs" / "doc-02.md").write_text(doc_text("doc-02", body="Changé."), encoding="utf-8")
    (corpus / "docs" / "doc-05.md").write_text(doc_text("doc-05", body=""), encoding="utf-8")
    (corpus / "docs" / "doc-06.md").write_text(doc_text("doc_06"), encoding="utf-8")
    with pytest.raises(StrictModeError) as info:
        ingest_corpus(corpus, db, strict=True)
    err = info.value
    assert err.path == corpus / "docs" / "doc-05.md"
    assert err.field == "body"
    assert len(err.errors) == 2
    assert "1 autre(s) fichier(s) invalide(s)" in str(err) and "doc-06.md" in str(err)
    assert dump(db) == before  # doc-02's change was not committed either


def test_strict_mode_on_a_new_database(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "doc-05.md").write_text("---\nid: doc-05\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="front matter non fermé"):
        ingest_corpus(corpus, db, strict=True)
    assert rows(db, "SELECT count(*) FROM documents") == [(0,)]


def test_failure_mid_ingestion_rolls_back(corpus: Path, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest_corpus(corpus, db)
    before = dump(db)
    for name in ("doc-01.md", "doc-02.md"):
        path = corpus / "docs" / name
        path.write_text(path.read_text(encoding="utf-8") + "\nAjout.\n", encoding="utf-8")
    (corpus / "docs" / "doc-04.md").unlink()

    def boom(self: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store._Ingestion, "write_log", boom)  # after every batch was written
    with pytest.raises(OSError, match="disk full"):
        ingest_corpus(corpus, db, batch_size=1)
    assert dump(db) == before


def test_all_documents_invalid_is_an_error(tmp_path: Path, db: Path) -> None:
    corpus = write_corpus(tmp_path / "c", {"a.md": "---\nid: [\n---\nx\n", "b.md": b"\xff\xfe"})
    with pytest.raises(CorpusError) as info:
        ingest_corpus(corpus, db)
    message = str(info.value)
    assert "aucun des 2 fichier(s) de document n'est valide" in message
    assert "a.md" in message and "attendu : au moins un document valide" in message


def test_empty_corpus_is_an_error(tmp_path: Path, db: Path) -> None:
    corpus = write_corpus(tmp_path / "c", {})
    with pytest.raises(
        CorpusError, match=r"docs : aucun document trouvé ; attendu : au moins un fichier de document"
    ):
        ingest_corpus(corpus, db)
    assert not db.exists()


def test_no_docs_folder_and_nothing_at_the_root(tmp_path: Path, db: Path) -> None:
    # Without docs/ the documents are read at the root (issue 39); the request and a README are not
    # documents, so nothing is left: one error naming both places.
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "request.md").write_text("---\ntitle: T\n---\n\nX.\n", encoding="utf-8")
    (corpus / "README.md").write_text("# Ce dossier\n\nNotes.\n", encoding="utf-8")
    with pytest.raises(
        CorpusError, match=r"aucun document trouvé ; attendu : .* dans docs/ ou, à défaut, à la racine"
    ):
        ingest_corpus(corpus, db)
    assert not db.exists()


def test_missing_request_is_an_error(tmp_path: Path, db: Path) -> None:
    corpus = write_corpus(tmp_path / "c", {"doc-01.md": doc_text()}, request=None)
    with pytest.raises(CorpusError, match=r"request\.md : fichier de demande introuvable"):
        ingest_corpus(corpus, db)


# --------------------------------------------------------------------------------------- reference
def test_reference_naming_unknown_documents_warns(corpus: Path, db: Path) -> None:
    (corpus / "docs" / "doc-04.md").unlink()
    report = ingest_corpus(corpus, db)
    assert codes(report) == ["ingest.reference_unknown_ids"]
    assert "doc-04" in report.alerts[0].message


def test_invalid_reference(corpus: Path, db: Path) -> None:
    (corpus / "reference" / "facts.yaml").write_text("exlude: [doc-04]\n", encoding="utf-8")
    report = ingest_corpus(corpus, db)
    assert codes(report) == ["ingest.invalid_reference"]
    assert report.documents == 4
    with pytest.raises(CorpusError, match="exlude"):
        ingest_corpus(corpus, db, strict=True)


def test_request_unknown_field_warns(corpus: Path, db: Path) -> None:
    path = corpus / "request.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("terms:", "audience: x\nterms:"), encoding="utf-8"
    )
    report = ingest_corpus(corpus, db)
    assert codes(report) == ["ingest.unknown_field"]
    assert report.alerts[0].subject == "request.md"


def test_snapshot_follows_ingestion(corpus: Path, db: Path) -> None:
    ingest_corpus(corpus, db)
    first = document_snapshot(db)
    assert [i for i, _ in first] == ["doc-01", "doc-02", "doc-03", "doc-04"]
    path = corpus / "docs" / "doc-01.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nAjout.\n", encoding="utf-8")
    ingest_corpus(corpus, db)
    second = document_snapshot(db)
    assert [h for i, h in second if i == "doc-01"] != [h for i, h in first if i == "doc-01"]
    assert [p for p in second if p[0] != "doc-01"] == [p for p in first if p[0] != "doc-01"]
