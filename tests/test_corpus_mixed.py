"""A folder a team already has: sub-folders, Markdown with and without front matter (Jekyll, Docusaurus,
Hugo TOML, Pelican), HTML, PDF, DOCX, one broken PDF and one off-topic post — ingested, then run end
to end offline. Real documents come from tests/fixtures/real (SOURCES.md)."""

from __future__ import annotations

import datetime
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.fixtures.corpus_factory import REQUEST
from veille.store import conversions
from veille.store.ingest import ingest_corpus
from veille.store.readers import read_catalogue

REAL = Path(__file__).parent / "fixtures" / "real"

HUGO = """+++
title = "Kestrel 2.0 : notes de version"
date = 2025-03-04T09:30:00+01:00
draft = false
tags = ["kestrel", "moteur"]
+++

Kestrel 2.0 sert 1 180 tokens par seconde sur le banc de référence.
"""
PELICAN = """Title: Tamaris: retour d'expérience
Date: 2024-11-02 14:05
Category: retours
Tags: tamaris, inference
Slug: tamaris-retour

Tamaris tient la charge à 800 requêtes par minute. Voir {filename}./2024-10-01-tamaris-part-1.md.
"""
NO_FRONT = "# Compte rendu de réunion\n\nOrvet reste en évaluation jusqu'en juin.\n"
OFF_TOPIC = (
    "---\ntitle: Recette du gâteau au yaourt\ndate: 2023-05-01\n---\n\nMélanger le yaourt et la farine.\n"
)


def mixed_corpus(root: Path) -> Path:
    docs = root / "docs"
    for folder in ("fournisseurs", "notes", "pages", "blog", "blog/hugo", "wiki"):
        (docs / folder).mkdir(parents=True)
    (root / "request.md").write_text(REQUEST, encoding="utf-8")
    shutil.copy(REAL / "pdflatex-outline.pdf", docs / "fournisseurs" / "outline.pdf")
    shutil.copy(REAL / "par-known-styles.docx", docs / "notes" / "styles.docx")
    shutil.copy(REAL / "The-Basics.html", docs / "pages" / "The-Basics.html")
    shutil.copy(REAL / "Closure-Example.html", docs / "pages" / "Closure-Example.HTM")
    shutil.copy(REAL / "2022-10-20-welcome-to-jekyll.markdown", docs / "blog")
    shutil.copy(REAL / "2019-05-29-long-blog-post.md", docs / "blog" / "2019-05-29-long-blog-post.MD")
    (docs / "blog" / "hugo" / "kestrel-2.md").write_text(HUGO, encoding="utf-8")
    (docs / "blog" / "2024-11-02-tamaris.md").write_text(PELICAN, encoding="utf-8")
    (docs / "wiki" / "reunion.md").write_text(NO_FRONT, encoding="utf-8")
    (docs / "wiki" / "reunion.txt").write_text("Orvet : prix en baisse de 12 %.\n", encoding="utf-8")
    (docs / "gateau.md").write_text(OFF_TOPIC, encoding="utf-8")
    (docs / "fournisseurs" / "broken.pdf").write_bytes((REAL / "pdflatex-outline.pdf").read_bytes()[:700])
    (docs / "notes" / "~$styles.docx").write_bytes(b"owner file")  # Word's lock file: skipped silently
    return root


READABLE = 11  # every file above but the broken PDF and the Word lock file


def _rows(db: Path) -> dict[str, tuple[object, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT path, id, title, date, source_type, format, title_origin, date_origin, source_type_origin "
            "FROM documents WHERE status = 'valid'"
        ).fetchall()
    return {row[0]: row[1:] for row in rows}


def test_every_readable_file_is_ingested_with_derived_metadata(tmp_path: Path) -> None:
    corpus = mixed_corpus(tmp_path / "corpus")
    os.utime(corpus / "docs" / "wiki" / "reunion.md", (1_760_000_000, 1_760_000_000))
    db = tmp_path / "veille.duckdb"
    report = ingest_corpus(corpus, db)
    assert (report.added, report.skipped, report.documents) == (READABLE, 1, READABLE)
    errors = [a for a in report.alerts if a.severity == "error"]
    assert [(a.code, a.subject) for a in errors] == [
        ("ingest.invalid_document", "docs/fournisseurs/broken.pdf")
    ]
    assert "fichier PDF illisible" in errors[0].message
    rows = _rows(db)
    jekyll = rows["docs/blog/2022-10-20-welcome-to-jekyll.markdown"]
    assert jekyll[:4] == (
        "blog-2022-10-20-welcome-to-jekyll",
        "Welcome to Jekyll!",
        datetime.date(2022, 10, 20),
        "blog",
    )
    hugo = rows["docs/blog/hugo/kestrel-2.md"]
    assert hugo[1:3] == ("Kestrel 2.0 : notes de version", datetime.date(2025, 3, 4))
    pelican = rows["docs/blog/2024-11-02-tamaris.md"]
    assert pelican[1:3] == ("Tamaris: retour d'expérience", datetime.date(2024, 11, 2))
    meeting = rows["docs/wiki/reunion.md"]
    assert meeting[1:] == (  # no date of its own: unknown, never its file's clock (issue 36)
        "Compte rendu de réunion",
        None,
        "wiki",
        "markdown",
        "first heading",
        "unknown",
        "folder",
    )
    # Ids stay unique and readable: reunion.md and reunion.txt share a path slug.
    assert (meeting[0], rows["docs/wiki/reunion.txt"][0]) == ("wiki-reunion", "wiki-reunion-text")
    pdf = rows["docs/fournisseurs/outline.pdf"]
    assert (pdf[4], pdf[6]) == ("pdf", "format_metadata")  # pdfTeX: the author's own tool
    html = rows["docs/pages/Closure-Example.HTM"]
    assert (html[4], html[5]) == ("html", "html <title>")
    docx = rows["docs/notes/styles.docx"]
    assert (docx[1], docx[4], docx[6]) == ("Heading 1", "docx", "format_metadata")  # revised in Word
    assert rows["docs/gateau.md"][3] == "markdown"  # the format when there is no folder
    # Extra fields: one aggregated info alert naming them; the undated documents: one more.
    codes = sorted(a.code for a in report.alerts if a.severity == "info")
    assert codes.count("ingest.unknown_fields") == 1 and codes.count("ingest.unknown_date") == 1
    assert "ingest.file_date" not in codes
    fields = next(a for a in report.alerts if a.code == "ingest.unknown_fields").message
    assert all(name in fields for name in ("layout", "categories", "tags", "draft", "slug"))
    line = next(e for e in read_catalogue(db).lines if e.startswith("wiki-reunion |"))
    assert line.startswith("wiki-reunion | date inconnue | wiki |")


def test_an_unchanged_pdf_is_not_converted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = mixed_corpus(tmp_path / "corpus")
    db = tmp_path / "veille.duckdb"
    ingest_corpus(corpus, db)
    calls: list[str] = []
    real = conversions.convert_bytes

    def counting(data: bytes, *, name: str) -> object:
        calls.append(name)
        return real(data, name=name)

    monkeypatch.setattr(conversions, "convert_bytes", counting)
    # Every file re-read (no stat shortcut), a PDF moved: nothing converted again but the broken one.
    (corpus / "docs" / "fournisseurs" / "outline.pdf").rename(corpus / "docs" / "pages" / "outline.pdf")
    report = ingest_corpus(corpus, db, trust_file_stat=False)
    assert [Path(c).name for c in calls] == ["broken.pdf"]
    assert report.skipped == 1 and report.documents == READABLE


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_mixed_folder_runs_end_to_end_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from veille.flows.veille import veille_flow

    corpus = mixed_corpus(tmp_path / "corpus")
    # The team's own notes on the subject (the mini corpus, with its request) sit beside the rest.
    mini = Path(__file__).parent / "fixtures" / "mini_corpus"
    shutil.copytree(mini / "docs", corpus / "docs" / "veille")
    shutil.copy(mini / "request.md", corpus / "request.md")
    monkeypatch.setenv("VEILLE_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    state = veille_flow(corpus=str(corpus), backend="offline", return_state=True)
    assert state.is_completed(), state.message
    run_dir = Path(state.result())
    alerts = json.loads((run_dir / "alerts.json").read_text(encoding="utf-8"))
    errors = [a for a in alerts if a["severity"] == "error" and a["code"].startswith("ingest.")]
    assert [(a["code"], a["subject"]) for a in errors] == [
        ("ingest.invalid_document", "docs/fournisseurs/broken.pdf")
    ]
    # A link to a sibling post is not an injection attempt.
    assert not [a for a in alerts if a["code"] == "injection.suspected"], alerts
    listing = read_catalogue(tmp_path / "warehouse" / "veille.duckdb")
    assert len(listing.entries) == READABLE + 4
    assert (run_dir / "report.md").is_file()
