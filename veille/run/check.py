"""``veille check``: every problem of a corpus folder at once, each with its fix, before any night.

A run stops at the first corpus-level problem (a missing request, no document); a user fixing a folder
that way needs one failed night per problem. Here each part of the folder is read on its own — the
request, the documents one by one, ``reference/``, ``delivery.toml``, ``sources.toml``, the settings and
the warehouse's place — and every problem is listed. Nothing is written: no Prefect run, no database, no
warehouse folder (the warehouse is only looked at). An ``error`` is what would make ``veille run`` fail;
a ``warning`` is what the run would skip or alert about.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from veille.alerts import Alert
from veille.corpus.document import DocumentFields, parse_document_fields
from veille.corpus.errors import CorpusError
from veille.corpus.frontmatter import read_file
from veille.corpus.layout import check_corpus_dir, documents_place, find_request_files, root_documents
from veille.corpus.request import Request, read_request_source
from veille.store.files import escapes, list_document_files

__all__ = ["FolderCheck", "Problem", "check_folder"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    severity: Severity
    where: str  # the file or folder concerned
    problem: str
    fix: str


@dataclass
class FolderCheck:
    """What ``veille check`` found: the problems, the request (when readable), the valid documents."""

    corpus_dir: Path
    problems: list[Problem] = field(default_factory=list)
    request: Request | None = None
    request_source: Path | None = None
    documents: list[tuple[str, DocumentFields]] = field(default_factory=list)  # (path, fields)
    notes: list[str] = field(default_factory=list)  # what was read where, for the reader

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def add(self, severity: Severity, where: Path | str, problem: str, fix: str) -> None:
        self.problems.append(Problem(severity, str(where), problem, fix))

    def add_corpus_error(self, severity: Severity, exc: CorpusError) -> None:
        where = f"{exc.path}" + (f", champ '{exc.field}'" if exc.field else "")  # French, like CorpusError
        self.add(severity, where, exc.problem, f"attendu : {exc.expected}")


def check_folder(
    corpus_dir: Path,
    *,
    request: str | None = None,
    strict: bool = False,
    max_doc_bytes: int = 1_048_576,
    warehouse_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> FolderCheck:
    """Every problem of ``corpus_dir`` (module docstring); ``request``: the one given to ``veille run
    --request``, if any; ``warehouse_dir``: also say whether a run could write there."""
    found = FolderCheck(corpus_dir)
    try:
        check_corpus_dir(corpus_dir)
    except CorpusError as exc:  # nothing else can be read
        found.add("error", exc.path, exc.problem, "give an existing folder: veille init DIR creates one")
        return found
    _check_request(found, request)
    _check_documents(found, strict, max_doc_bytes, warehouse_dir)
    _check_reference(found, strict)
    _check_delivery(found, os.environ if environ is None else environ)
    _check_sources(found)
    if warehouse_dir is not None:
        _check_warehouse(found, warehouse_dir)
    return found


def _check_request(found: FolderCheck, given: str | None) -> None:
    if given is None:
        present = [p.name for p in find_request_files(found.corpus_dir)]
        if not present:
            found.add(
                "error",
                found.corpus_dir,
                "no request file",
                "write the request in demande.md (or request.md) at the folder's root, plain text is "
                "enough (veille init DIR writes a template), or give it with --request FILE or TEXT",
            )
            return
        if len(present) > 1:
            found.add(
                "error",
                found.corpus_dir,
                f"several request files: {', '.join(present)}",
                "keep one of them (the other is neither a request nor a document), or name the one "
                "meant with --request FILE",
            )
            return
    try:
        found.request, unknown, found.request_source = read_request_source(found.corpus_dir, given)
    except CorpusError as exc:
        found.add_corpus_error("error", exc)
        return
    if unknown:
        found.add(
            "warning",
            found.request_source,
            f"unknown front-matter field(s) {', '.join(unknown)} (ignored)",
            "keep only title, terms and mandatory_mentions, or remove the front matter",
        )


def _check_documents(found: FolderCheck, strict: bool, max_doc_bytes: int, warehouse: Path | None) -> None:
    corpus_dir = found.corpus_dir
    given = found.request_source if found.request_source and found.request_source.is_file() else None
    place = documents_place(corpus_dir, warehouse, given)
    root = os.path.realpath(corpus_dir)
    if escapes(place.folder, root):
        found.add("error", place.folder, "docs/ leads outside the corpus folder", "make docs/ a real folder")
        return
    alerts: list[Alert] = []
    refused: list[CorpusError] = []
    try:
        names = list_document_files(place, root, alerts, refused)
    except OSError as exc:
        found.add("error", place.folder, exc.strerror or str(exc), "make the folder readable")
        return
    for a in alerts:
        if a.code == "ingest.ignored_files":
            found.add(
                "warning",
                place.folder,
                a.message.split(": ", 1)[-1],
                "convert them to a format read, or leave them",
            )
    for link in refused:
        found.add_corpus_error("error" if strict else "warning", link)
    where = "docs/" if not place.at_root else "the folder's root"
    found.notes.append(f"documents read in {where}: {len(names)} file(s)")
    if not place.at_root:
        hidden = list(root_documents(corpus_dir))
        if hidden:
            shown = ", ".join(hidden[:3]) + (", …" if len(hidden) > 3 else "")
            found.add(
                "warning",
                corpus_dir,
                f"{len(hidden)} document file(s) at the folder's root are not read ({shown}): docs/ holds "
                "the documents",
                "move them into docs/",
            )
    if place.at_root and (corpus_dir / "sources.toml").exists():
        found.add(
            "warning",
            corpus_dir / "sources.toml",
            "collected pages are written in docs/; once docs/ holds a document, the files at the "
            "folder's root are no longer read",
            "move your documents into docs/",
        )
    if not names:
        found.add(
            "error",
            place.folder,
            "no document found",
            "put the documents (.md, .txt, .html, .pdf, .docx) in docs/ or at the folder's root",
        )
        return
    claimed: dict[str, str] = {}
    for name in names:
        _check_document(found, place.folder / name, place.prefix + name, claimed, strict, max_doc_bytes)
    if not found.documents:
        found.add(
            "error",
            place.folder,
            f"none of the {len(names)} document file(s) is valid",
            "fix the documents named above",
        )


def _check_document(
    found: FolderCheck, path: Path, rel: str, claimed: dict[str, str], strict: bool, max_doc_bytes: int
) -> None:
    severity: Severity = "error" if strict else "warning"
    try:
        doc = parse_document_fields(read_file(path, max_bytes=max_doc_bytes), path, rel=rel)
    except CorpusError as exc:
        found.add_corpus_error(severity, exc)
        return
    except (OSError, RecursionError) as exc:
        found.add(
            severity, path, f"unreadable ({type(exc).__name__})", "replace the file with a readable copy"
        )
        return
    if doc.id in claimed and doc.origins.get("id") != "path":  # derived ids are made unique by ingestion
        found.add(
            severity,
            path,
            f"duplicate id {doc.id!r}: {claimed[doc.id]} already uses it",
            "give one of them another id",
        )
        return
    claimed.setdefault(doc.id, rel)
    found.documents.append((rel, doc))


def _check_reference(found: FolderCheck, strict: bool) -> None:
    from veille.corpus.reference import load_reference

    try:
        load_reference(found.corpus_dir)
    except CorpusError as exc:
        found.add_corpus_error("error" if strict else "warning", exc)


def _check_delivery(found: FolderCheck, environ: Mapping[str, str]) -> None:
    from veille.delivery.config import DELIVERY_FILE, DeliveryError, load_delivery

    path = found.corpus_dir / DELIVERY_FILE
    try:
        config = load_delivery(found.corpus_dir)
    except DeliveryError as exc:
        found.add(
            "warning", path, str(exc), "fix the field named (docs/operations.md, « Delivering the dossier »)"
        )
        return
    if config is None:
        return
    variables = [config.email.server_env] if config.email is not None else []
    variables += [c.url_env for c in config.chat]
    if config.operators is not None:
        variables += [config.operators.server_env, *(c.url_env for c in config.operators.chat)]
    for name in dict.fromkeys(variables):  # one line per variable, however many channels name it
        if not environ.get(name, "").strip():
            found.add(
                "warning",
                path,
                f"environment variable {name} is not set: the channels that name it receive nothing",
                f"set {name} to the channel's Apprise URL in the environment of veille run",
            )


def _check_sources(found: FolderCheck) -> None:
    from veille.collect.run import sources_file
    from veille.collect.sources import SourcesError, load_sources

    path = sources_file(found.corpus_dir)
    if not path.exists():
        return
    try:
        load_sources(path)
    except SourcesError as exc:
        found.add(
            "warning", path, str(exc), "fix the field named (docs/corpus-format.md, « Sources to watch »)"
        )


def _check_warehouse(found: FolderCheck, warehouse_dir: Path) -> None:
    """Whether a run could write its warehouse there, without creating anything."""
    fix = "give --warehouse a folder you can write in (or a path where one can be created)"
    if warehouse_dir.exists() and not warehouse_dir.is_dir():
        found.add("error", warehouse_dir, "the warehouse is a file", fix)
        return
    above = warehouse_dir
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir() or not os.access(above, os.W_OK | os.X_OK):
        found.add("error", warehouse_dir, f"cannot be written: {above} is not a writable folder", fix)
