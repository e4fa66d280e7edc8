"""Corpus documents: any file under ``docs/`` (Markdown with or without front matter, text, HTML, PDF,
DOCX), its metadata read when given and derived when absent, with where each value came from.

Precedence (docs/corpus-format.md): id = front matter, else a slug of the path under ``docs/``; title =
front matter, first heading, the file's own properties (HTML ``<title>``, PDF/DOCX), file name; date =
front matter (date-times accepted, the author's calendar day), the file's own properties when they are
the document's (:mod:`veille.corpus.dates`), a ``YYYY-MM-DD-`` file-name prefix (Jekyll), the first
publication date its text states, else unknown (``None``) — the file's modification time only when the
user opts in (``file_clock``, setting ``date_from_file_clock``): a fresh clone or a copy gives every
file the day it was made, and dates decide contradictions. source_type = front matter, the first folder
under ``docs/``, the format. A value *given* but invalid is an error naming the field; a value absent
is derived and its origin recorded (``origins``; the date's in :data:`veille.docdates.DATE_ORIGINS`),
never guessed silently.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from veille.corpus.convert import ConversionError, Converted, convert_bytes, plain_title
from veille.corpus.dates import text_date
from veille.corpus.errors import CorpusError, quote
from veille.corpus.frontmatter import read_file
from veille.corpus.metadata import clean_value, parse_date, read_front_matter
from veille.docdates import DateOrigin

__all__ = [
    "DEFAULT_MAX_DOC_BYTES",
    "FIELD_ALIASES",
    "ID_PATTERN",
    "KNOWN_FIELDS",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "SOURCE_TYPE_PATTERN",
    "Document",
    "DocumentFields",
    "derive_fields",
    "parse_document",
    "parse_document_bytes",
    "parse_document_fields",
    "slug",
]

DEFAULT_MAX_DOC_BYTES = 1_048_576
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")
SOURCE_TYPE_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

REQUIRED_FIELDS: tuple[str, ...] = ("id", "date", "source_type", "title")
OPTIONAL_FIELDS: tuple[str, ...] = ("summary", "url", "author")
# Names other generators give the same field (Hugo/Jekyll/Docusaurus/Pelican); the first found wins.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "date": ("date", "published", "publishdate", "pubdate", "created"),
    "summary": ("summary", "description", "excerpt"),
    "author": ("author", "authors"),
}
# ``collected``: the day the collector fetched a web item (veille.collect), provenance, never its date.
KNOWN_FIELDS = frozenset((*REQUIRED_FIELDS, *OPTIONAL_FIELDS, "collected")).union(*FIELD_ALIASES.values())

_ID_EXPECTED = "un identifiant en minuscules de la forme [a-z0-9][a-z0-9-]* (lettres a-z, chiffres, tirets), p. ex. doc-03"
_SOURCE_TYPE_EXPECTED = (
    "un type de source en minuscules reliées par des tirets, p. ex. benchmark-interne ou fiche-fournisseur"
)
_STRING_EXPECTED = (
    "une chaîne non vide (entre guillemets en YAML si elle ressemble à un nombre, une date ou un booléen)"
)
_DAY_PREFIX = re.compile(r"(\d{4}-\d{2}-\d{2})[-_ ]")


class Document(BaseModel):
    """One valid corpus document. ``path`` is relative to the corpus folder when known (``docs/x.md``)."""

    id: str
    date: datetime.date | None  # None: « date inconnue » (origins["date"] == "unknown")
    source_type: str
    title: str
    summary: str | None = None
    url: str | None = None
    author: str | None = None
    body: str
    path: str
    word_count: int
    content_hash: str  # sha256 of the file's raw bytes
    unknown_fields: list[str] = Field(default_factory=list)  # loaded anyway; reported in one info alert
    format: str = "markdown"
    origins: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class DocumentFields(NamedTuple):
    """A validated document without its path (what the batch ingester stores; no pydantic object per
    document). ``origins`` maps id/title/date/source_type to where the value came from; ``notes`` are
    short remarks for the reader (value cleaned, YAML read as plain lines...)."""

    id: str
    date: datetime.date | None  # None: « date inconnue »
    source_type: str
    title: str
    summary: str | None
    url: str | None
    author: str | None
    body: str
    word_count: int
    content_hash: str
    unknown_fields: list[str]
    format: str
    origins: dict[str, str]
    notes: list[str]


def slug(text: str, *, limit: int = 120) -> str:
    """Lowercase ASCII words joined by hyphens (accents folded); stable for a given text."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    out = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
    if len(out) > limit:
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        out = out[: limit - 9].rstrip("-") + "-" + digest
    return out


def _path_id(rel: str) -> str:
    inside = rel[5:] if rel.startswith("docs/") else rel
    return slug(os.path.splitext(inside)[0]) or "doc"


def _text(data: dict[str, Any], name: str, path: Path | str, notes: list[str]) -> str | None:
    """A string field: None when absent or null; an error when given as another type or empty."""
    value = None
    for key in FIELD_ALIASES.get(name, (name,)):
        value = data.get(key)
        if value is not None:
            break
    if value is None:
        return None
    if name == "author" and isinstance(value, list):  # author lists (Docusaurus, Hugo)
        value = ", ".join(str(v.get("name", "")) if isinstance(v, dict) else str(v) for v in value[:20])
    if not isinstance(value, str):
        kind = {bool: "booléen", int: "entier", float: "nombre", list: "liste", dict: "dictionnaire"}
        raise CorpusError(
            path, name, _STRING_EXPECTED, f"reçu : {kind.get(type(value), 'valeur')} YAML ({quote(value)})"
        )
    cleaned, changed = clean_value(value, name)
    if changed and cleaned:
        notes.append(f"champ '{name}' : caractères invisibles retirés ou valeur coupée")
    if not cleaned:
        if value.strip():
            notes.append(f"champ '{name}' : seulement des caractères invisibles, ignoré")
            return None
        raise CorpusError(path, name, _STRING_EXPECTED, "valeur vide")
    return cleaned


def _property(value: str | None, name: str) -> str | None:
    """A value from the file's own properties (PDF, DOCX, HTML), cleaned like a front-matter one."""
    return (clean_value(value, name)[0] or None) if value else None


def _check_id(value: str, path: Path | str) -> str:
    if ID_PATTERN.fullmatch(value) is None:
        hint = ""
        if ID_PATTERN.fullmatch(value.lower()) is not None:
            hint = f" (identifiants en minuscules : écrivez {quote(value.lower())})"
        raise CorpusError(path, "id", _ID_EXPECTED, f"reçu : {quote(value)}{hint}")
    return value


def _file_name_title(rel: str) -> str:
    stem = os.path.splitext(os.path.basename(rel))[0]
    stem = _DAY_PREFIX.sub("", stem, count=1) if _DAY_PREFIX.match(stem) else stem
    return " ".join(re.sub(r"[-_]+", " ", stem).split()) or stem


def _file_name_day(rel: str) -> datetime.date | None:
    match = _DAY_PREFIX.match(os.path.basename(rel))
    try:
        return datetime.date.fromisoformat(match.group(1)) if match else None
    except ValueError:
        return None


def _folder_type(rel: str) -> str | None:
    parts = rel.split("/")
    if parts and parts[0] == "docs":
        parts = parts[1:]
    return (slug(parts[0], limit=60) or None) if len(parts) > 1 else None


def _draft_marker(data: dict[str, Any]) -> str | None:
    """How a front matter says "draft": ``draft: true`` (Hugo, Jekyll, Docusaurus), ``published:
    false`` (Jekyll), ``status: draft`` (Pelican); None otherwise."""

    def said(key: str) -> str:
        return str(data.get(key)).strip().lower()

    if said("draft") in ("true", "yes"):
        return "draft: true"
    if said("published") in ("false", "no"):
        return "published: false"
    if said("status") == "draft":
        return "status: draft"
    return None


def _date(
    data: dict[str, Any], converted: Converted, path: Path | str, rel: str, mtime: float | None
) -> tuple[datetime.date | None, DateOrigin]:
    """The document's date and its origin (module docstring); ``mtime`` only when the user opted in."""
    if any(data.get(k) is not None for k in FIELD_ALIASES["date"]):
        raw = next(data[k] for k in FIELD_ALIASES["date"] if data.get(k) is not None)
        return parse_date(raw, path), "front_matter"
    if converted.date is not None:  # only when it is the document's (veille.corpus.dates)
        value = converted.date
        return (value.date() if isinstance(value, datetime.datetime) else value), "format_metadata"
    if (day := _file_name_day(rel)) is not None:
        return day, "file_name"
    if (day := text_date(converted.text)) is not None:
        return day, "text"
    if mtime is not None:
        return datetime.datetime.fromtimestamp(mtime, datetime.UTC).date(), "file_clock"
    return None, "unknown"


def derive_fields(
    converted: Converted,
    *,
    path: Path | str,
    rel: str,
    content_hash: str,
    mtime: float | None,
    file_clock: bool = False,
) -> DocumentFields:
    """Metadata of a converted file: read from its front matter, else derived (module docstring).
    ``mtime`` dates the document only with ``file_clock`` (the user's opt-in)."""
    if converted.front_matter_kind == "unclosed":
        raise CorpusError(path, None, "une ligne '---' qui ferme le front matter", "front matter non fermé")
    data, notes = read_front_matter(converted.front_matter, converted.front_matter_kind, path)
    if (marker := _draft_marker(data)) is not None:
        # A site generator's publishing switch, not a validity test: a team's draft is still its
        # knowledge, so it is read, and the reader is told its figures may not be final.
        notes.append(
            f"marqué comme brouillon ({marker}) : lu comme tout autre document, ses chiffres peuvent ne pas être définitifs"
        )
    origins: dict[str, str] = {}
    given_id = _text(data, "id", path, notes)
    if given_id is not None:
        doc_id, origins["id"] = _check_id(given_id, path), "front matter"
    else:
        doc_id, origins["id"] = _path_id(rel), "path"

    title = _text(data, "title", path, notes)
    if title is not None:
        origins["title"] = "front matter"
    elif converted.title:  # first heading, else the file's own properties (convert's precedence)
        title, origins["title"] = converted.title, converted.origins.get("title", "document properties")
    # Every title, wherever it came from (a heading, a PDF's properties, the file name), is cleaned:
    # no control, bidi, zero-width or tag character reaches the catalogue (veille.corpus.invisible).
    title = plain_title(clean_value(title, "title")[0]) if title else None
    title = title or plain_title(clean_value(_file_name_title(rel), "title")[0]) or doc_id
    origins.setdefault("title", "file name")

    date, origins["date"] = _date(data, converted, path, rel, mtime if file_clock else None)
    if origins["date"] != "front_matter" and (ignored := converted.origins.get("date_ignored")):
        notes.append(f"date des propriétés du fichier ignorée : {ignored}")

    source_type = _text(data, "source_type", path, notes)
    if source_type is not None:
        if SOURCE_TYPE_PATTERN.fullmatch(source_type) is None:
            raise CorpusError(path, "source_type", _SOURCE_TYPE_EXPECTED, f"reçu : {quote(source_type)}")
        origins["source_type"] = "front matter"
    elif (folder := _folder_type(rel)) is not None:
        source_type, origins["source_type"] = folder, "folder"
    else:
        source_type, origins["source_type"] = converted.format, "format"

    url = _text(data, "url", path, notes)
    if url is not None and (not url.startswith(("http://", "https://")) or " " in url):
        if not url.startswith("/"):
            raise CorpusError(path, "url", "une URL http(s) absolue sans espace", f"reçu : {quote(url)}")
        notes.append(f"champ 'url' : chemin de site {quote(url)}, pas une URL http(s) absolue, ignoré")
        url = None
    body = converted.text.strip()
    if not body:
        raise CorpusError(
            path, "body", "du texte Markdown non vide après le front matter", "le corps du document est vide"
        )
    unknown = sorted(k for k in data if k not in KNOWN_FIELDS)
    return DocumentFields(
        doc_id,
        date,
        source_type,
        title,
        _text(data, "summary", path, notes),
        url,
        _text(data, "author", path, notes) or _property(converted.author, "author"),
        body,
        len(body.split()),
        content_hash,
        unknown,
        converted.format,
        origins,
        notes,
    )


# ------------------------------------------------------------------------------------------ documents
def parse_document(
    path: Path,
    *,
    max_bytes: int = DEFAULT_MAX_DOC_BYTES,
    relative_to: Path | None = None,
    file_clock: bool = False,
) -> Document:
    """Read and validate one document file. ``Document.path`` is relative to ``relative_to`` if given."""
    raw = read_file(path, max_bytes=max_bytes)
    rel = path.relative_to(relative_to).as_posix() if relative_to is not None else None
    return parse_document_bytes(raw, path, rel=rel, file_clock=file_clock)


def parse_document_bytes(
    raw: bytes, path: Path, *, rel: str | None = None, file_clock: bool = False
) -> Document:
    """Validate a document already read from ``path``; ``rel`` becomes ``Document.path`` (default: path)."""
    fields = parse_document_fields(raw, path, rel=rel, file_clock=file_clock)
    return Document.model_construct(
        **fields._asdict(), path=rel if rel is not None else Path(path).as_posix()
    )


def _mtime(path: Path | str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def parse_document_fields(
    raw: bytes,
    path: Path | str,
    *,
    rel: str | None = None,
    mtime: float | None = None,
    file_clock: bool = False,
) -> DocumentFields:
    """Convert and validate a document's raw bytes; ``path`` names it in errors and gives its format,
    ``rel`` (default: the file name) its derived id, ``mtime`` (default: the file's) its last-resort
    date when ``file_clock`` (the user's opt-in), never otherwise."""
    try:
        converted = convert_bytes(raw, name=str(path))
    except ConversionError as exc:
        raise CorpusError(path, None, exc.expected, exc.problem) from None
    return derive_fields(
        converted,
        path=path,
        rel=rel if rel is not None else os.path.basename(str(path)),
        content_hash=hashlib.sha256(raw).hexdigest(),
        mtime=(mtime if mtime is not None else _mtime(path)) if file_clock else None,
        file_clock=file_clock,
    )
