"""The corpus's files as an ingestion finds them, before it opens the database: ``request.md`` checked,
the document files anywhere under ``docs/`` listed, ``reference/`` loaded.

Corpus files are files inside the corpus folder: a symbolic link whose target lies outside it is
refused (alert ``ingest.symlink_outside`` naming the link; an error in strict mode), so a link cannot
pull ``/etc/…`` or a neighbour's files into a dossier. Links that stay inside the folder are kept.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from veille.alerts import Alert, alert
from veille.corpus.convert import FORMATS, detect_format
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


def _skipped_silently(name: str) -> bool:
    """Hidden files (editor swap files, .DS_Store, LibreOffice .~lock.*#), Office owner files ``~$…``,
    backups ``…~`` and temporary files: never documents, never worth an alert."""
    lowered = name.lower()
    return (
        name.startswith((".", "~$", "~"))
        or name.endswith(("~", "#"))
        or lowered.endswith((".tmp", ".temp", ".swp", ".lock", ".part", ".crdownload"))
    )


def _walk(docs_dir: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(path relative to docs/, entry) of every file below ``docs_dir``, hidden folders skipped; links
    to folders are not followed (no cycles), links to files are yielded."""
    stack = [("", str(docs_dir))]
    while stack:
        prefix, folder = stack.pop()
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            if _skipped_silently(entry.name):
                continue
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append((rel + "/", entry.path))
            else:
                yield rel, entry


def list_document_files(
    docs_dir: Path, alerts: list[Alert], refused: list[CorpusError] | None = None
) -> list[str]:
    """Paths (relative to ``docs/``, sorted) of the document files anywhere below ``docs_dir``: the
    formats of veille.corpus.convert, any case. Hidden, temporary and lock files are skipped silently;
    other files are counted in one info alert (``ingest.ignored_files``); links leaving the corpus folder
    are refused with an error alert each and appended to ``refused``."""
    if not docs_dir.is_dir():
        raise CorpusError(
            docs_dir, None, "a docs/ folder holding one file per document", "docs folder not found"
        )
    names: list[str] = []
    ignored: Counter[str] = Counter()
    examples: list[str] = []
    root = os.path.realpath(docs_dir.parent)
    for rel, entry in _walk(docs_dir):
        # is_symlink() comes from the directory entry (no extra system call for plain files).
        if entry.is_symlink() and escapes(entry.path, root):
            error = _outside_link(docs_dir, rel, root)
            alerts.append(
                alert("ingest", "ingest.symlink_outside", str(error), severity="error", subject=f"docs/{rel}")
            )
            if refused is not None:
                refused.append(error)
            continue
        if detect_format(rel) is not None:
            names.append(rel)  # directories behind links or FIFOs named *.md are rejected when parsed
        else:
            ignored[os.path.splitext(rel)[1].lower() or "(none)"] += 1
            if len(examples) < 3:
                examples.append(f"docs/{rel}")
    if ignored:
        kinds = ", ".join(f"{ext} ({n})" for ext, n in ignored.most_common(8))
        alerts.append(
            alert(
                "ingest",
                "ingest.ignored_files",
                f"{docs_dir}: {sum(ignored.values())} file(s) not read, format not supported: {kinds} "
                f"(e.g. {', '.join(examples)}); expected {', '.join(sorted(FORMATS))}",
                severity="info",
                subject=examples[0],
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
        raise CorpusError(
            docs_dir,
            None,
            f"at least one document file under docs/ ({', '.join(sorted(FORMATS))})",
            "no document found",
        )
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
