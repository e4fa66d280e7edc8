"""The corpus request: ``<corpus>/request.md`` or ``demande.md`` (optional front matter with ``title``,
``terms`` and ``mandatory_mentions``, then the request text), or a file or text given with ``--request``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from veille.corpus.convert import strip_comment_blocks
from veille.corpus.document import DEFAULT_MAX_DOC_BYTES
from veille.corpus.errors import CorpusError, quote
from veille.corpus.frontmatter import (
    _front_matter_mapping,
    _read_text,
    _split_front_matter,
    _text,
    _yaml_type,
)
from veille.corpus.layout import check_corpus_dir, find_request_files, given_request

__all__ = [
    "Request",
    "load_request",
    "parse_request",
    "parse_request_text",
    "read_request_source",
    "request_path",
]


class Request(BaseModel):
    title: str
    terms: list[str] = Field(default_factory=list)
    mandatory_mentions: list[str] = Field(default_factory=list)
    text: str


def _string_list(data: dict[Any, Any], name: str, path: Path) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    expected = "une liste YAML de chaînes non vides, p. ex. [Kestrel, Tamaris]"
    if not isinstance(value, list):
        raise CorpusError(path, name, expected, f"reçu : {_yaml_type(value)} YAML")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise CorpusError(path, f"{name}[{i}]", expected, f"reçu : {quote(item)}")
        out.append(item.strip())
    return out


_REQUEST_FIELDS = frozenset({"title", "terms", "mandatory_mentions"})
_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<text>.+?)[ \t]*#*[ \t]*$")
_TITLE_CHARS = 300  # like a document's title (docs/corpus-format.md)


def parse_request(path: Path) -> tuple[Request, list[str]]:
    """Parse a request file; returns the request and the names of unknown front-matter fields."""
    _, text = _read_text(path, max_bytes=DEFAULT_MAX_DOC_BYTES)
    return parse_request_text(text, path)


def parse_request_text(text: str, path: Path) -> tuple[Request, list[str]]:
    """A request's text, with front matter (``---`` first line: title required) or without (plain
    text or Markdown: the title is its first heading, else its first line). ``path`` names it in
    errors. Comment blocks never reach the request (a template's explanations stay out of it)."""
    if not text.lstrip("\ufeff").startswith("---"):
        return _plain_request(text, path), []
    front, body, _ = _split_front_matter(text, path)
    data = _front_matter_mapping(front, path)
    title = _text(data, "title", path, required=True, collapse=True)
    assert title is not None
    terms = _string_list(data, "terms", path)
    mentions = _string_list(data, "mandatory_mentions", path)
    body = _body(strip_comment_blocks(body), path)
    unknown = sorted(str(k) for k in data if k not in _REQUEST_FIELDS)
    return Request(title=title, terms=terms, mandatory_mentions=mentions, text=body), unknown


def _body(body: str, path: Path) -> str:
    body = body.strip()
    if not body:
        raise CorpusError(
            path,
            "body",
            "le texte de la demande (après la ligne '---' qui ferme le front matter, s'il y en a un)",
            "le texte de la demande est vide",
        )
    return body


def _plain_request(text: str, path: Path) -> Request:
    """No front matter: a first-line heading is the title (and leaves the text); else the first line,
    cut at a word when long, is the title and stays in the text."""
    lines = strip_comment_blocks(text).strip().splitlines()
    if not lines:
        _body("", path)
    heading = _HEADING.match(lines[0].strip())
    if heading is not None:
        return Request(title=" ".join(heading.group("text").split()), text=_body("\n".join(lines[1:]), path))
    first = " ".join(lines[0].split())
    if len(first) > _TITLE_CHARS:
        first = first[: _TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return Request(title=first, text=_body("\n".join(lines), path))


def load_request(corpus_dir: Path, given: str | None = None) -> Request:
    """The corpus request (``given``: a file or the request's text, see
    :func:`veille.corpus.layout.given_request`; else the request file at the corpus root);
    CorpusError if the corpus or the request is missing/invalid."""
    return read_request_source(corpus_dir, given)[0]


def read_request_source(corpus_dir: Path, given: str | None = None) -> tuple[Request, list[str], Path]:
    """(request, unknown front-matter fields, where it was read: a file, or ``--request`` for a text)."""
    if given is not None:
        source = given_request(given)
        if isinstance(source, str):
            label = Path("--request")
            return (*parse_request_text(source, label), label)
        return (*parse_request(source), source)
    path = request_path(corpus_dir)
    return (*parse_request(path), path)


def request_path(corpus_dir: Path) -> Path:
    """The request file at the corpus root (request.md, demande.md, .txt), after checking that the
    corpus folder exists and that exactly one request file is there."""
    check_corpus_dir(corpus_dir)
    found = find_request_files(corpus_dir)
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise CorpusError(
            corpus_dir,
            None,
            "un seul fichier de demande à la racine du corpus (gardez-en un, ou nommez-le avec --request FICHIER)",
            f"plusieurs fichiers de demande : {names}",
        )
    if not found:
        raise CorpusError(
            corpus_dir / "request.md",
            None,
            "un fichier request.md à la racine du corpus (ou demande.md ; texte brut ou Markdown, front "
            "matter facultatif), ou --request FICHIER ou TEXTE",
            "fichier de demande introuvable",
        )
    return found[0]
