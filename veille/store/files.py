"""The corpus's files as an ingestion finds them, before it opens the database: ``request.md`` checked,
the ``docs/*.md`` entries listed, ``reference/`` loaded.

Corpus files are files inside the corpus folder: a symbolic link whose target lies outside it is
refused (alert ``ingest.symlink_outside`` naming the link; an error in strict mode), so a link cannot
pull ``/etc/…`` or a neighbour's files into a dossier. Links that stay inside the folder are kept.
"""

from __future__ import annotations

import os
from pathlib import Path

from veille.alerts import Alert, alert
from veille.corpus.errors import CorpusError
from veille.corpus.reference import Reference, load_reference
from veille.corpus.request import parse_request, request_path

__all__ = ["check_corpus", "escapes", "list_document_files"]


def escapes(path: str | Path, root: str) -> bool:
    """True when ``path`` resolves (links followed) outside the resolved folder ``root``."""
    target = os.path.realpath(path)
    return os.path.commonpath([target, root]) != root


def _outside_link(docs_dir: Path, name: str, root: str) -> CorpusError:
    link = docs_dir / name
    return CorpusError(
        link,
        None,
        "a file inside the corpus folder (copy the file in, or link within the corpus)",
        f"symbolic link to {os.path.realpath(link)}, outside the corpus folder {root}: refused",
    )


def list_document_files(
    docs_dir: Path, alerts: list[Alert], refused: list[CorpusError] | None = None
) -> list[str]:
    """Names of ``docs/*.md`` entries, sorted. Hidden files are ignored silently, others with an info
    alert; links leaving the corpus folder (``docs_dir``'s parent) are refused with an error alert and
    appended to ``refused``."""
    if not docs_dir.is_dir():
        raise CorpusError(
            docs_dir, None, "a docs/ folder holding one Markdown file per document", "docs folder not found"
        )
    names: list[str] = []
    root = os.path.realpath(docs_dir.parent)
    with os.scandir(docs_dir) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue  # editor swap files, .DS_Store, .gitkeep
            # is_symlink() comes from the directory entry (no extra system call for plain files).
            if entry.is_symlink() and escapes(entry.path, root):
                error = _outside_link(docs_dir, entry.name, root)
                alerts.append(
                    alert(
                        "ingest",
                        "ingest.symlink_outside",
                        str(error),
                        severity="error",
                        subject=f"docs/{entry.name}",
                    )
                )
                if refused is not None:
                    refused.append(error)
                continue
            if entry.name.endswith(".md"):
                names.append(entry.name)  # directories/FIFOs named *.md are rejected when parsed
            else:
                alerts.append(
                    alert(
                        "ingest",
                        "ingest.ignored_file",
                        f"{docs_dir / entry.name}: ignored (only docs/*.md files are documents)",
                        severity="info",
                        subject=f"docs/{entry.name}",
                    )
                )
    names.sort()
    return names


def check_corpus(
    corpus_dir: Path, strict: bool, alerts: list[Alert], refused: list[CorpusError] | None = None
) -> tuple[list[str], Reference | None]:
    """Corpus-level checks, before the database is opened: a missing request or docs folder is never a
    per-document skip. Returns the document file names and the reference (None if absent or invalid);
    links leaving the corpus are appended to ``refused`` (the ingestion counts them as invalid files)."""
    _, request_unknown = parse_request(request_path(corpus_dir))
    if request_unknown:
        alerts.append(
            alert(
                "ingest",
                "ingest.unknown_field",
                f"{corpus_dir / 'request.md'}: unknown front-matter field(s) {request_unknown} ignored; "
                "expected only title, terms, mandatory_mentions",
                severity="warning",
                subject="request.md",
            )
        )
    docs_dir = corpus_dir / "docs"
    if escapes(docs_dir, os.path.realpath(corpus_dir)):
        raise CorpusError(
            docs_dir, None, "a docs/ folder inside the corpus folder", "docs/ leads outside the corpus folder"
        )
    names = list_document_files(docs_dir, alerts, refused)
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
            alert("ingest", "ingest.invalid_reference", str(exc), severity="error", subject=exc.path.name)
        )
        return None
