"""The corpus's files as an ingestion finds them, before it opens the database: ``request.md`` checked,
the ``docs/*.md`` entries listed, ``reference/`` loaded."""

from __future__ import annotations

import os
from pathlib import Path

from veille.alerts import Alert
from veille.corpus.errors import CorpusError
from veille.corpus.reference import Reference, load_reference
from veille.corpus.request import parse_request, request_path

__all__ = ["check_corpus", "list_document_files"]


def list_document_files(docs_dir: Path, alerts: list[Alert]) -> list[str]:
    """Names of ``docs/*.md`` entries, sorted. Hidden files are ignored silently, others with an info alert."""
    if not docs_dir.is_dir():
        raise CorpusError(
            docs_dir, None, "a docs/ folder holding one Markdown file per document", "docs folder not found"
        )
    names: list[str] = []
    with os.scandir(docs_dir) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue  # editor swap files, .DS_Store, .gitkeep
            if entry.name.endswith(".md"):
                names.append(entry.name)  # directories/FIFOs named *.md are rejected when parsed
            else:
                alerts.append(
                    Alert(
                        code="ingest.ignored_file",
                        severity="info",
                        stage="ingest",
                        message=f"{docs_dir / entry.name}: ignored (only docs/*.md files are documents)",
                        subject=f"docs/{entry.name}",
                    )
                )
    names.sort()
    return names


def check_corpus(corpus_dir: Path, strict: bool, alerts: list[Alert]) -> tuple[list[str], Reference | None]:
    """Corpus-level checks, before the database is opened: a missing request or docs folder is never a
    per-document skip. Returns the document file names and the reference (None if absent or invalid)."""
    _, request_unknown = parse_request(request_path(corpus_dir))
    if request_unknown:
        alerts.append(
            Alert(
                code="ingest.unknown_field",
                severity="warning",
                stage="ingest",
                message=(
                    f"{corpus_dir / 'request.md'}: unknown front-matter field(s) {request_unknown} ignored; "
                    "expected only title, terms, mandatory_mentions"
                ),
                subject="request.md",
            )
        )
    docs_dir = corpus_dir / "docs"
    names = list_document_files(docs_dir, alerts)
    if not names:
        raise CorpusError(docs_dir, None, "at least one document file docs/*.md", "no document found")
    return names, _check_reference(corpus_dir, strict, alerts)


def _check_reference(corpus_dir: Path, strict: bool, alerts: list[Alert]) -> Reference | None:
    try:
        return load_reference(corpus_dir)
    except CorpusError as exc:
        if strict:
            raise
        alerts.append(
            Alert(
                code="ingest.invalid_reference",
                severity="error",
                stage="ingest",
                message=str(exc),
                subject=exc.path.name,
            )
        )
        return None
