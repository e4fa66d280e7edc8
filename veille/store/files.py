"""The corpus's files as an ingestion finds them, before it opens the database: the request checked,
the document files anywhere under ``docs/`` (or at the folder's root, veille/corpus/layout.py) listed,
``reference/`` loaded.

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
from veille.corpus.layout import DOCS_DIRNAME, DocumentsPlace, documents_place, skipped_silently
from veille.corpus.reference import Reference, load_reference
from veille.corpus.request import read_request_source

__all__ = ["check_corpus", "check_runnable", "escapes", "list_document_files"]


def escapes(path: str | Path, root: str) -> bool:
    """True when ``path`` resolves (links followed) outside the resolved folder ``root``."""
    target = os.path.realpath(path)
    return os.path.commonpath([target, root]) != root


def _outside_link(docs_dir: Path, name: str, root: str) -> CorpusError:
    link = docs_dir / name
    return CorpusError(
        link,
        None,
        "un fichier dans le dossier du corpus (copiez-y le fichier, ou liez à l'intérieur du corpus)",
        f"lien symbolique vers {os.path.realpath(link)}, hors du dossier du corpus {root} : refusé",
    )


def _walk(docs_dir: Path, left_out: frozenset[str] = frozenset()) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(path relative to ``docs_dir``, entry) of every file below it, hidden folders and the relative
    paths ``left_out`` skipped; links to folders are not followed (no cycles), links to files are yielded."""
    stack = [("", str(docs_dir))]
    while stack:
        prefix, folder = stack.pop()
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            if skipped_silently(entry.name) or prefix + entry.name in left_out:
                continue
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append((rel + "/", entry.path))
            else:
                yield rel, entry


def list_document_files(
    place: DocumentsPlace, root: str, alerts: list[Alert], refused: list[CorpusError] | None = None
) -> list[str]:
    """Paths (relative to the place's folder, sorted) of the document files anywhere below it: the
    formats of veille.corpus.convert, any case. Hidden, temporary and lock files and the corpus format's
    own files are skipped silently; other files are counted in one info alert (``ingest.ignored_files``);
    links leaving the corpus folder ``root`` (resolved) are refused with an error alert each and appended
    to ``refused``."""
    docs_dir, shown = place.folder, place.prefix
    names: list[str] = []
    ignored: Counter[str] = Counter()
    examples: list[str] = []
    for rel, entry in _walk(docs_dir, place.left_out):
        # is_symlink() comes from the directory entry (no extra system call for plain files).
        if entry.is_symlink() and escapes(entry.path, root):
            error = _outside_link(docs_dir, rel, root)
            alerts.append(
                alert(
                    "ingest", "ingest.symlink_outside", str(error), severity="error", subject=f"{shown}{rel}"
                )
            )
            if refused is not None:
                refused.append(error)
            continue
        if detect_format(rel) is not None:
            names.append(rel)  # directories behind links or FIFOs named *.md are rejected when parsed
        else:
            ignored[os.path.splitext(rel)[1].lower() or "(none)"] += 1
            if len(examples) < 3:
                examples.append(f"{shown}{rel}")
    if ignored:
        kinds = ", ".join(f"{ext} ({n})" for ext, n in ignored.most_common(8))
        alerts.append(
            alert(
                "ingest",
                "ingest.ignored_files",
                f"{docs_dir} : {sum(ignored.values())} fichier(s) non lu(s), format non pris en charge : {kinds} "
                f"(p. ex. {', '.join(examples)}) ; attendu : {', '.join(sorted(FORMATS))}",
                severity="info",
                subject=examples[0],
            )
        )
    names.sort()
    return names


def check_corpus(
    corpus_dir: Path,
    strict: bool,
    alerts: list[Alert],
    refused: list[CorpusError] | None = None,
    request: str | None = None,
    warehouse: Path | None = None,
) -> tuple[list[str], Reference | None, DocumentsPlace]:
    """Corpus-level checks, before the database is opened: a missing request or documents folder is never
    a per-document skip. ``request``: the one given (a file or its text), else the file at the root;
    ``warehouse``: never read as documents.
    Returns the document file names (relative to the place's folder), the reference (None if absent or
    invalid) and where the documents are; links leaving the corpus are appended to ``refused`` (the ingestion
    counts them as invalid files)."""
    _, request_unknown, source = read_request_source(corpus_dir, request)
    if request_unknown:
        alerts.append(
            alert(
                "ingest",
                "ingest.unknown_field",
                f"{source} : champ(s) de front matter inconnu(s) {request_unknown}, ignoré(s) ; "
                "attendu : seulement title, terms, mandatory_mentions",
                severity="warning",
                subject=source.name,
            )
        )
    place = documents_place(corpus_dir, warehouse, source if source.is_file() else None)
    root = os.path.realpath(corpus_dir)
    if escapes(place.folder, root):
        raise CorpusError(
            place.folder,
            None,
            "un dossier docs/ à l'intérieur du dossier du corpus",
            "docs/ mène hors du dossier du corpus",
        )
    names = list_document_files(place, root, alerts, refused)
    if not names:
        raise _no_document(place)
    return names, _check_reference(corpus_dir, strict, alerts), place


def check_runnable(corpus_dir: Path, request: str | None = None, warehouse: Path | None = None) -> None:
    """The corpus-level errors of :func:`check_corpus` — the request, no document file — cheaply (the
    walk stops at the first document): ``veille run`` calls it before any flow run, so a folder that
    cannot run is one line, not a failed night (``veille check`` lists every problem)."""
    _, _, source = read_request_source(corpus_dir, request)
    place = documents_place(corpus_dir, warehouse, source if source.is_file() else None)
    if escapes(place.folder, os.path.realpath(corpus_dir)):
        return  # check_corpus says why, in the run
    if not any(detect_format(rel) is not None for rel, _ in _walk(place.folder, place.left_out)):
        raise _no_document(place)


def _no_document(place: DocumentsPlace) -> CorpusError:
    return CorpusError(
        place.folder if not place.at_root else place.corpus / DOCS_DIRNAME,
        None,
        f"au moins un fichier de document dans docs/ ou, à défaut, à la racine du dossier "
        f"({', '.join(sorted(FORMATS))})",
        "aucun document trouvé",
    )


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
