"""A document's date comes from the document, never from the file clock unless the user opts in
(issue 36, item 3): front matter, the format's own metadata when it is the document's (not a
template's or a capture tool's), a Jekyll file-name prefix, the first publication date its text
states, else « date inconnue ». Documents are built in code as a team's folder holds them."""

from __future__ import annotations

import datetime
import io
import os
from pathlib import Path

import docx
import duckdb
import pypdf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.corpus_factory import REQUEST
from veille.corpus.convert import convert_bytes
from veille.corpus.dates import text_date
from veille.corpus.document import parse_document, parse_document_fields
from veille.corpus.formats import convert_pdf
from veille.docdates import UNKNOWN_DATE
from veille.store.ingest import ingest_corpus
from veille.store.readers import fetch_documents, read_catalogue, source_metadata

MTIME = 1_760_000_000  # 2025-10-09 UTC
MTIME_DAY = datetime.date(2025, 10, 9)


# ------------------------------------------------------------------------------------ text dates
@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("# Aides à l'embauche\n\nPublié le 5 février 2026\n\nLes aides…", datetime.date(2026, 2, 5)),
        ("Notes d'équipe\n\nMis à jour le mardi 1er mars 2025 par l'équipe data.", datetime.date(2025, 3, 1)),
        (
            "Fiche pratique\n\nVérifié le 01 janvier 2026 - Direction de l'information légale",
            datetime.date(2026, 1, 1),
        ),
        ("# Vector search in production\n\nPublished March 3, 2025 · 6 min read", datetime.date(2025, 3, 3)),
        ("Release notes\n\nLast updated: 2024-05-06\n\nQdrant 1.9 adds…", datetime.date(2024, 5, 6)),
        ("# Compte rendu — 2025-11-04\n\nPrésents : l'équipe plateforme.", datetime.date(2025, 11, 4)),
        # The first cue in reading order: the page's own date before a date it reports.
        (
            "Publié le 12 mars 2025.\n\nLa version 2.0, publiée le 3 janvier 2024, …",
            datetime.date(2025, 3, 12),
        ),
    ],
)
def test_the_first_publication_date_in_the_text_is_read(text: str, day: datetime.date) -> None:
    assert text_date(text) == day


@pytest.mark.parametrize(
    "text",
    [
        "La réunion du 3 mars 2025 a validé le choix de Qdrant.",  # an event, not the document's date
        "Published in 2023, the study measured p95 latency.",  # no day
        "Article publié hier sur le blog de l'équipe.",  # relative: the run's clock
        "Publié le 31 février 2026.",  # no such day
        "Publié le 03/04/2025.",  # day and month order depend on who wrote it
        "Texte\n\nsuite\n\nencore\n\net encore\n\nune ligne\n\nRelevé du 2025-11-04 : 35 ms.",  # deep, not a header
        "Le contrat signé le 2025-11-04 entre la société et le fournisseur prévoit un préavis de trois mois.",
        "Publié le 4 juillet 1776.",  # before the digital era a watch reads: a history being told
    ],
)
def test_dates_that_are_not_the_documents_are_not_read(text: str) -> None:
    assert text_date(text) is None


def test_the_opening_and_closing_lines_say_when_a_long_document_was_written() -> None:
    filler = "La passerelle tient la charge de référence sans erreur.\n\n" * 400  # ~22,000 characters
    footer = f"# Fiche pratique\n\n{filler}Vérifié le 01 janvier 2026 - Direction de l'information légale\n"
    assert text_date(footer) == datetime.date(2026, 1, 1)
    quoted = f"# Manuel\n\n{filler}La note publiée le 3 janvier 2024 le confirmait.\n\n{filler}"
    assert text_date(quoted) is None  # deep inside: about another document it quotes


def _write(tmp: Path, text: str, name: str = "note.md") -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    os.utime(path, (MTIME, MTIME))
    return path


def test_a_note_saying_when_it_was_published_is_dated_by_its_text_not_its_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "# Aides à l'embauche\n\nPublié le 5 février 2026\n\nL'aide couvre 4 000 EUR.\n")
    for clock in (False, True):  # its own date wins over the opt-in file clock too
        doc = parse_document(path, file_clock=clock)
        assert (doc.date, doc.origins["date"]) == (datetime.date(2026, 2, 5), "text")


def test_front_matter_dates_are_unchanged_and_win_over_the_text(tmp_path: Path) -> None:
    text = (
        "---\nid: doc-01\ndate: 2024-07-08\nsource_type: note\ntitle: T\n---\n\nPublié le 5 février 2026.\n"
    )
    doc = parse_document(_write(tmp_path, text), file_clock=True)
    assert (doc.date, doc.origins["date"]) == (datetime.date(2024, 7, 8), "front_matter")


# --------------------------------------------------------------------------------- format metadata
def _docx(
    text: str, *, created: datetime.datetime | None, modified: datetime.datetime | None, revision: int
) -> bytes:
    document = docx.Document()  # python-docx's default template: created = modified = 2013-12-23
    document.add_paragraph(text)
    props = document.core_properties
    if created is not None:
        props.created = created
    if modified is not None:
        props.modified = modified
    props.revision = revision
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_docx_carrying_its_templates_date_is_not_dated_by_it(tmp_path: Path) -> None:
    data = _docx("Qdrant tient 35 ms au p95 sur notre charge.", created=None, modified=None, revision=1)
    assert convert_bytes(data, name="x.docx").date is None
    (tmp_path / "bench.docx").write_bytes(data)
    doc = parse_document(tmp_path / "bench.docx")
    assert (doc.date, doc.origins["date"]) == (None, "unknown")
    assert any("2013-12-23" in note and "modèle" in note for note in doc.notes)


def test_a_docx_stamped_in_one_write_by_a_generator_is_not_dated_by_it(tmp_path: Path) -> None:
    stamp = datetime.datetime(2026, 12, 6, 3, 0, 0)
    data = _docx("Export nocturne.\n\nPublié le 2 décembre 2026", created=stamp, modified=stamp, revision=1)
    (tmp_path / "export.docx").write_bytes(data)
    doc = parse_document(tmp_path / "export.docx")
    assert (doc.date, doc.origins["date"]) == (datetime.date(2026, 12, 2), "text")  # its text says when


def test_a_docx_its_author_revised_keeps_its_creation_date(tmp_path: Path) -> None:
    created, modified = datetime.datetime(2025, 6, 7, 17, 38), datetime.datetime(2025, 6, 8, 17, 54)
    (tmp_path / "cr.docx").write_bytes(_docx("Compte rendu.", created=created, modified=modified, revision=7))
    doc = parse_document(tmp_path / "cr.docx")
    assert (doc.date, doc.origins["date"]) == (datetime.date(2025, 6, 7), "format_metadata")
    assert doc.notes == []


def _pdf(creator: str) -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    writer.add_metadata({"/Creator": creator, "/Producer": creator, "/CreationDate": "D:20261206080000Z"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_pdf_printed_by_a_browser_is_not_dated_by_the_print() -> None:
    # The converter's parts (a blank page has no text for a whole document, its metadata is the point).
    printed = convert_pdf(_pdf("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/131.0 Skia/PDF m131"))
    assert printed.date is None and "capture" in printed.origins["date_ignored"]
    written = convert_pdf(_pdf("LibreOffice 24.2 Writer"))
    assert written.date == datetime.datetime(2026, 12, 6, 8, 0, tzinfo=datetime.UTC)
    assert written.origins["date"] == "pdf properties" and "date_ignored" not in written.origins


# ------------------------------------------------------------------------- never the file clock
bodies = st.lists(
    st.sampled_from(
        [
            "Qdrant tient 35 ms au p95.",
            "La réunion du 3 mars 2025 a validé le choix.",
            "Publié le 5 février 2026.",
            "Published March 3, 2025.",
            "Mis à jour le 12 octobre 2025.",
            "pgvector reste à 48 ms.",
            "Relevé du 2025-10-09 : 40 ms.",
            "Texte libre sans date.",
        ]
    ),
    min_size=1,
    max_size=6,
).map(lambda lines: "\n\n".join(lines))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies, mtime=st.integers(0, 4_000_000_000), heading=st.booleans())
def test_without_a_date_field_the_date_never_comes_from_the_file_clock(
    body: str, mtime: int, heading: bool
) -> None:
    """Whatever its mtime, a document without a date field is dated by its bytes alone (its text,
    else unknown); the file clock dates it only when the setting is on and nothing else does."""
    raw = (("# Note d'équipe\n\n" if heading else "") + body).encode()
    doc = parse_document_fields(raw, "docs/note.md", rel="docs/note.md", mtime=float(mtime))
    again = parse_document_fields(raw, "docs/note.md", rel="docs/note.md", mtime=float(mtime + 86_400 * 400))
    assert (doc.date, doc.origins["date"]) == (again.date, again.origins["date"])
    assert doc.origins["date"] in ("text", "unknown")
    assert doc.date == text_date(doc.body)
    clocked = parse_document_fields(
        raw, "docs/note.md", rel="docs/note.md", mtime=float(mtime), file_clock=True
    )
    if doc.date is None:
        day = datetime.datetime.fromtimestamp(mtime, datetime.UTC).date()
        assert (clocked.date, clocked.origins["date"]) == (day, "file_clock")
    else:
        assert (clocked.date, clocked.origins["date"]) == (doc.date, "text")


# -------------------------------------------------------------------------------------- ingestion
def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    (root / "request.md").write_text(REQUEST, encoding="utf-8")
    _write(docs, "# Fiche : aides\n\nL'aide couvre 4 000 EUR.\n", "fiche.md")
    _write(docs, "# Billet\n\nPublié le 5 février 2026\n\nQdrant tient 35 ms.\n", "billet.md")
    return root


def test_ingestion_says_where_each_date_came_from_and_follows_the_setting(tmp_path: Path) -> None:
    corpus, db = _corpus(tmp_path / "corpus"), tmp_path / "veille.duckdb"
    report = ingest_corpus(corpus, db)
    lines = {line.split(" | ")[0]: line for line in read_catalogue(db).lines}
    assert lines["fiche"].startswith(f"fiche | {UNKNOWN_DATE} | ")
    assert lines["billet"].startswith("billet | 2026-02-05 (date lue dans le texte) | ")
    codes = {a.code: a for a in report.alerts}
    assert "fiche.md" in codes["ingest.unknown_date"].message and "ingest.file_date" not in codes
    assert "billet.md" in codes["ingest.text_date"].message
    assert [d.date for d in fetch_documents(db, ["fiche", "billet"])] == [UNKNOWN_DATE, "2026-02-05"]
    meta = source_metadata(db, ["fiche", "billet"])
    assert (meta["fiche"].date, meta["fiche"].date_origin) == (UNKNOWN_DATE, "unknown")
    assert (meta["billet"].date, meta["billet"].date_origin) == ("2026-02-05", "text")

    # The user opts in: the unchanged undated file is dated by its clock at the next ingestion…
    clocked = ingest_corpus(corpus, db, file_clock=True)
    assert (clocked.updated, clocked.unchanged) == (1, 1)
    assert "ingest.file_date" in {a.code for a in clocked.alerts}
    meta = source_metadata(db, ["fiche", "billet"])
    assert (meta["fiche"].date, meta["fiche"].date_origin) == (MTIME_DAY.isoformat(), "file_clock")
    assert meta["billet"].date_origin == "text"
    assert "(date du fichier)" in next(x for x in read_catalogue(db).lines if x.startswith("fiche |"))
    # …and back to unknown when the setting is off again.
    ingest_corpus(corpus, db)
    assert source_metadata(db, ["fiche"])["fiche"].date_origin == "unknown"


def test_a_database_of_the_previous_schema_is_dated_again(tmp_path: Path) -> None:
    """Migration 004: origins renamed, file-clock dates derived again by the next ingestion."""
    corpus, db = _corpus(tmp_path / "corpus"), tmp_path / "veille.duckdb"
    ingest_corpus(corpus, db)
    with duckdb.connect(str(db)) as con:  # as the previous code left it: dated by the file clock
        con.execute(
            "UPDATE documents SET date = DATE '2025-10-09', date_origin = 'file date' WHERE id = 'fiche'"
        )
        con.execute("UPDATE documents SET date_origin = 'front matter' WHERE id = 'billet'")
        con.execute("DELETE FROM schema_migrations WHERE version = 4")
        con.execute("ALTER TABLE documents ALTER COLUMN date SET NOT NULL")
    report = ingest_corpus(corpus, db)
    assert (report.updated, report.unchanged) == (1, 1)
    meta = source_metadata(db, ["fiche", "billet"])
    assert (meta["fiche"].date, meta["fiche"].date_origin) == (UNKNOWN_DATE, "unknown")
    assert (meta["billet"].date, meta["billet"].date_origin) == ("2026-02-05", "front_matter")  # renamed
