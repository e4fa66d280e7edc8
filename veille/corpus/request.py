"""The corpus request: ``<corpus>/request.md`` (front matter with ``title``, optional ``terms`` and
``mandatory_mentions``, then the request text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from veille.corpus.document import DEFAULT_MAX_DOC_BYTES
from veille.corpus.errors import CorpusError
from veille.corpus.frontmatter import (
    _front_matter_mapping,
    _read_text,
    _split_front_matter,
    _text,
    _yaml_type,
)

__all__ = ["Request", "load_request", "parse_request", "request_path"]


class Request(BaseModel):
    title: str
    terms: list[str] = Field(default_factory=list)
    mandatory_mentions: list[str] = Field(default_factory=list)
    text: str


def _string_list(data: dict[Any, Any], name: str, path: Path) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    expected = "a YAML list of non-empty strings, e.g. [Kestrel, Tamaris]"
    if not isinstance(value, list):
        raise CorpusError(path, name, expected, f"got a YAML {_yaml_type(value)}")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise CorpusError(path, f"{name}[{i}]", expected, f"got {item!r}")
        out.append(item.strip())
    return out


_REQUEST_FIELDS = frozenset({"title", "terms", "mandatory_mentions"})


def parse_request(path: Path) -> tuple[Request, list[str]]:
    """Parse a request file; returns the request and the names of unknown front-matter fields."""
    _, text = _read_text(path, max_bytes=DEFAULT_MAX_DOC_BYTES)
    front, body, _ = _split_front_matter(text, path)
    data = _front_matter_mapping(front, path)
    title = _text(data, "title", path, required=True, collapse=True)
    assert title is not None
    terms = _string_list(data, "terms", path)
    mentions = _string_list(data, "mandatory_mentions", path)
    body = body.strip()
    if not body:
        raise CorpusError(
            path, "body", "the request text after the closing '---' line", "request text is empty"
        )
    unknown = sorted(str(k) for k in data if k not in _REQUEST_FIELDS)
    return Request(title=title, terms=terms, mandatory_mentions=mentions, text=body), unknown


def load_request(corpus_dir: Path) -> Request:
    """The corpus request (``<corpus>/request.md``); CorpusError if the corpus or the file is missing/invalid."""
    return parse_request(request_path(corpus_dir))[0]


def request_path(corpus_dir: Path) -> Path:
    """``<corpus>/request.md``, after checking that the corpus folder and the file exist."""
    _check_corpus_dir(corpus_dir)
    path = corpus_dir / "request.md"
    if not path.is_file():
        raise CorpusError(
            path,
            None,
            "a request.md file at the corpus root (front matter with 'title', then the request text)",
            "request file not found",
        )
    return path


def _check_corpus_dir(corpus_dir: Path) -> None:
    if not corpus_dir.is_dir():
        raise CorpusError(
            corpus_dir,
            None,
            "a corpus folder containing request.md and docs/*.md",
            "corpus folder not found" if not corpus_dir.exists() else "not a folder",
        )
