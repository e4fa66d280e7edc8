"""Where a corpus folder keeps its request and its documents (docs/corpus-format.md, « A user's folder »).

A user guesses: the request may be ``request.md`` or ``demande.md`` (or ``.txt``), with or without
front matter, or be given on the command line (a file or the request's own text); the documents may
sit in ``docs/`` or at the folder's root. One rule, whatever the folder holds:

- the request is the one given (``--request``), else the single request file at the root; two request
  files are an error (which one is meant is not guessed);
- the documents are under ``docs/`` when it holds at least one document file, else at the folder's
  root, sub-folders included, minus what the corpus format itself uses there: the request files,
  ``reference/``, ``docs/``, the corpus's TOML files, a ``README`` (the folder's own description) and
  the warehouse when it lies inside the folder (its reports are not documents).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from veille.corpus.convert import detect_format
from veille.corpus.errors import CorpusError

__all__ = [
    "DOCS_DIRNAME",
    "REQUEST_NAMES",
    "DocumentsPlace",
    "check_corpus_dir",
    "documents_place",
    "find_request_files",
    "given_request",
    "root_documents",
    "skipped_silently",
]

DOCS_DIRNAME = "docs"
# In order of preference for messages; any one of them is the request (two at once are an error).
REQUEST_NAMES = ("request.md", "demande.md", "request.txt", "demande.txt")
# The corpus format's own files and folders at the root: never documents.
_FORMAT_FILES = frozenset({"delivery.toml", "sources.toml", "grid.toml", "veille.toml"})
_FORMAT_FOLDERS = frozenset({"reference", DOCS_DIRNAME})


def skipped_silently(name: str) -> bool:
    """Hidden files (editor swap files, .DS_Store, LibreOffice .~lock.*#), Office owner files ``~$…``,
    backups ``…~`` and temporary files: never documents, never worth an alert."""
    lowered = name.lower()
    return (
        name.startswith((".", "~$", "~"))
        or name.endswith(("~", "#"))
        or lowered.endswith((".tmp", ".temp", ".swp", ".lock", ".part", ".crdownload"))
    )


def check_corpus_dir(corpus_dir: Path) -> None:
    """CorpusError unless ``corpus_dir`` is an existing folder."""
    if not corpus_dir.is_dir():
        raise CorpusError(
            corpus_dir,
            None,
            "un dossier de corpus contenant request.md et docs/*.md",
            "dossier de corpus introuvable" if not corpus_dir.exists() else "pas un dossier",
        )


def find_request_files(corpus_dir: Path) -> list[Path]:
    """The request files at the folder's root (any of REQUEST_NAMES, any case), in REQUEST_NAMES order."""
    try:
        present = {entry.name.lower(): entry.name for entry in os.scandir(corpus_dir) if entry.is_file()}
    except OSError:
        return []
    return [corpus_dir / present[name] for name in REQUEST_NAMES if name in present]


def given_request(value: str) -> Path | str:
    """What ``--request VALUE`` names: an existing file (absolute path), else the request's own text
    when it holds several words; a single word naming no file is a missing file, not a request."""
    path = Path(value).expanduser()
    if path.is_file():
        return path.resolve()
    if len(value.split()) > 1:
        return value
    raise CorpusError(
        path,
        None,
        "--request FICHIER nommant un fichier existant, ou le texte de la demande entre guillemets (plusieurs mots)",
        "fichier de demande introuvable",
    )


@dataclass(frozen=True)
class DocumentsPlace:
    """Where the documents of the folder ``corpus`` are read: ``folder`` (``docs/`` or the corpus
    root), the prefix of their paths as recorded (``docs/`` or nothing) and the root-level names left out."""

    corpus: Path
    folder: Path
    prefix: str
    left_out: frozenset[str]

    @property
    def at_root(self) -> bool:
        return self.prefix == ""


def _left_out_at_root(corpus_dir: Path, warehouse: Path | None = None) -> frozenset[str]:
    names = set(_FORMAT_FILES | _FORMAT_FOLDERS)
    if warehouse is not None:  # a warehouse inside the folder: its reports are not documents
        with contextlib.suppress(ValueError, IndexError):  # outside the folder: nothing to leave out
            names.add(warehouse.resolve().relative_to(corpus_dir.resolve()).parts[0])
    try:
        for entry in os.scandir(corpus_dir):
            lowered = entry.name.lower()
            if lowered in REQUEST_NAMES or lowered in _FORMAT_FILES or lowered.startswith("readme"):
                names.add(entry.name)
    except OSError:
        pass
    return frozenset(names)


def _holds_a_document(folder: Path) -> bool:
    """True as soon as one document file is found below ``folder`` (stops at the first)."""
    stack = [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if skipped_silently(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif detect_format(entry.name) is not None:
                return True
    return False


def documents_place(
    corpus_dir: Path, warehouse: Path | None = None, request: Path | None = None
) -> DocumentsPlace:
    """``docs/`` when it holds a document file, else the folder's root (see the module's docstring);
    ``warehouse``: the run's warehouse folder, left out when it lies inside the corpus folder;
    ``request``: a request file given (``--request``), never a document wherever it lies."""
    docs = corpus_dir / DOCS_DIRNAME
    if docs.is_dir() and _holds_a_document(docs):
        place = DocumentsPlace(corpus_dir, docs, DOCS_DIRNAME + "/", frozenset())
    else:
        place = DocumentsPlace(corpus_dir, corpus_dir, "", _left_out_at_root(corpus_dir, warehouse))
    if request is None:
        return place
    try:
        inside = request.resolve().relative_to(place.folder.resolve()).as_posix()
    except ValueError:  # elsewhere: nothing to leave out
        return place
    return DocumentsPlace(corpus_dir, place.folder, place.prefix, place.left_out | {inside})


def root_documents(corpus_dir: Path) -> Iterator[str]:
    """Document files directly at the root (not left out): what ``docs/`` hides when it is used."""
    left_out = _left_out_at_root(corpus_dir)
    try:
        entries = sorted(os.scandir(corpus_dir), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in left_out or skipped_silently(entry.name) or not entry.is_file():
            continue
        if detect_format(entry.name) is not None:
            yield entry.name
