"""Corpus documents: ``docs/*.md``, one per file, YAML front matter then a non-empty Markdown body."""

from __future__ import annotations

import datetime
import hashlib
import re
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from veille.corpus.errors import CorpusError
from veille.corpus.frontmatter import (
    _decode,
    _front_matter_mapping,
    _split_front_matter,
    _text,
    _yaml_type,
    read_file,
)

__all__ = [
    "DEFAULT_MAX_DOC_BYTES",
    "ID_PATTERN",
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "SOURCE_TYPE_PATTERN",
    "Document",
    "DocumentFields",
    "parse_document",
    "parse_document_bytes",
    "parse_document_fields",
]

DEFAULT_MAX_DOC_BYTES = 1_048_576
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")
SOURCE_TYPE_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")

REQUIRED_FIELDS: tuple[str, ...] = ("id", "date", "source_type", "title")
OPTIONAL_FIELDS: tuple[str, ...] = ("summary", "url", "author")
KNOWN_FIELDS = frozenset(REQUIRED_FIELDS + OPTIONAL_FIELDS)

_ID_EXPECTED = "a lowercase id matching [a-z0-9][a-z0-9-]* (letters a-z, digits, hyphens), e.g. doc-03"
_DATE_EXPECTED = "an ISO date YYYY-MM-DD that exists in the calendar, e.g. 2026-07-08"
_SOURCE_TYPE_EXPECTED = "a kebab-case source type, e.g. benchmark-interne or fiche-fournisseur"


class Document(BaseModel):
    """One valid corpus document. ``path`` is relative to the corpus folder when known (``docs/x.md``)."""

    id: str
    date: datetime.date
    source_type: str
    title: str
    summary: str | None = None
    url: str | None = None
    author: str | None = None
    body: str
    path: str
    word_count: int
    content_hash: str  # sha256 of the file's raw bytes
    unknown_fields: list[str] = Field(default_factory=list)  # loaded anyway; reported as a warning


def _check_id(data: dict[Any, Any], path: Path | str) -> str:
    value = _text(data, "id", path, required=True, collapse=False)
    assert value is not None
    if ID_PATTERN.fullmatch(value) is None:
        hint = ""
        if ID_PATTERN.fullmatch(value.lower()) is not None:
            hint = f" (ids are lowercase: write {value.lower()!r})"
        raise CorpusError(path, "id", _ID_EXPECTED, f"got {value!r}{hint}")
    return value


def _check_date(data: dict[Any, Any], path: Path | str) -> datetime.date:
    value = data.get("date")
    if value is None:
        raise CorpusError(
            path, "date", _DATE_EXPECTED, "is null" if "date" in data else "missing required field"
        )
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if not isinstance(value, str):
        raise CorpusError(path, "date", _DATE_EXPECTED, f"got a YAML {_yaml_type(value)} ({value!r})")
    text = value.strip()
    if _DATE_PATTERN.fullmatch(text) is None:
        raise CorpusError(path, "date", _DATE_EXPECTED, f"got {value!r}, not in YYYY-MM-DD form")
    try:
        return datetime.date.fromisoformat(text)
    except ValueError as exc:
        raise CorpusError(path, "date", _DATE_EXPECTED, f"impossible date {value!r} ({exc})") from None


def _check_source_type(data: dict[Any, Any], path: Path | str) -> str:
    value = _text(data, "source_type", path, required=True, collapse=False)
    assert value is not None
    if SOURCE_TYPE_PATTERN.fullmatch(value) is None:
        raise CorpusError(path, "source_type", _SOURCE_TYPE_EXPECTED, f"got {value!r}")
    return value


def _check_url(data: dict[Any, Any], path: Path | str) -> str | None:
    value = _text(data, "url", path, required=False, collapse=False)
    if value is None:
        return None
    if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise CorpusError(path, "url", "an absolute http(s) URL without spaces", f"got {value!r}")
    return value


# ------------------------------------------------------------------------------------------ documents
def parse_document(
    path: Path, *, max_bytes: int = DEFAULT_MAX_DOC_BYTES, relative_to: Path | None = None
) -> Document:
    """Read and validate one document file. ``Document.path`` is relative to ``relative_to`` if given."""
    raw = read_file(path, max_bytes=max_bytes)
    rel = path.relative_to(relative_to).as_posix() if relative_to is not None else path.as_posix()
    return parse_document_bytes(raw, path, rel=rel)


def parse_document_bytes(raw: bytes, path: Path, *, rel: str | None = None) -> Document:
    """Validate a document already read from ``path``; ``rel`` becomes ``Document.path`` (default: path)."""
    fields = parse_document_fields(raw, path)
    # model_construct: every field was validated by parse_document_fields.
    return Document.model_construct(
        **fields._asdict(), path=rel if rel is not None else Path(path).as_posix()
    )


class DocumentFields(NamedTuple):
    """A validated document without its path: what the batch ingester stores (no pydantic object per
    document: at 100k documents that alone costs seconds)."""

    id: str
    date: datetime.date
    source_type: str
    title: str
    summary: str | None
    url: str | None
    author: str | None
    body: str
    word_count: int
    content_hash: str
    unknown_fields: list[str]


def parse_document_fields(raw: bytes, path: Path | str) -> DocumentFields:
    """Decode and validate a document's raw bytes; ``path`` only serves error messages."""
    text = _decode(raw, path)
    front, body, _ = _split_front_matter(text, path)
    data = _front_matter_mapping(front, path)
    doc_id = _check_id(data, path)
    date = _check_date(data, path)
    source_type = _check_source_type(data, path)
    title = _text(data, "title", path, required=True, collapse=True)
    assert title is not None  # required=True never returns None
    summary = _text(data, "summary", path, required=False, collapse=True)
    url = _check_url(data, path)
    author = _text(data, "author", path, required=False, collapse=True)
    body = body.strip()
    if not body:
        raise CorpusError(
            path, "body", "non-empty Markdown text after the closing '---' line", "document body is empty"
        )
    unknown = [str(k) for k in data if k not in KNOWN_FIELDS]
    if unknown:
        unknown.sort()
    return DocumentFields(
        doc_id,
        date,
        source_type,
        title,
        summary,
        url,
        author,
        body,
        len(body.split()),
        hashlib.sha256(raw).hexdigest(),
        unknown,
    )
