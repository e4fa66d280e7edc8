"""``sources.toml``: the feeds and pages a corpus watches, and the night's limits."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from veille.corpus.document import SOURCE_TYPE_PATTERN
from veille.tomlconfig import load_toml_model

__all__ = [
    "NIGHT_DEADLINE_MAX_S",
    "SOURCES_FILE",
    "CollectLimits",
    "Source",
    "SourcesConfig",
    "SourcesError",
    "load_sources",
    "sources_file",
]

SOURCES_FILE = "sources.toml"
# A night's collect ends by then whatever the servers do, so a collect waiting for the lock
# (run.COLLECT_WAIT_S, longer) gets it.
NIGHT_DEADLINE_MAX_S = 540.0
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def sources_file(corpus_dir: Path) -> Path:
    """Where a corpus lists the feeds and pages it watches (absent: the night collects nothing)."""
    return corpus_dir / SOURCES_FILE


class SourcesError(ValueError):
    """``sources.toml`` is missing, not TOML, or has an invalid field (the message names both)."""


class CollectLimits(BaseModel):
    """Bounds of one night of collecting (every source together)."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(default=10.0, gt=0, le=120)  # each connect, read or write
    # Total time, whatever the server sends (a byte every few seconds resets no clock here).
    fetch_deadline_s: float = Field(
        default=30.0, gt=0, le=NIGHT_DEADLINE_MAX_S
    )  # one URL, redirects included
    source_deadline_s: float = Field(default=120.0, gt=0, le=NIGHT_DEADLINE_MAX_S)  # a feed and its pages
    night_deadline_s: float = Field(default=NIGHT_DEADLINE_MAX_S, gt=0, le=NIGHT_DEADLINE_MAX_S)
    max_response_bytes: int = Field(default=2_000_000, ge=1_000)  # decompressed, per response
    max_night_bytes: int = Field(default=50_000_000, ge=1_000)  # decompressed, all responses of a night
    max_redirects: int = Field(default=5, ge=0, le=20)
    user_agent: str = "veille-collect/0.1 (+https://github.com/veille)"


class Source(BaseModel):
    """One watched feed (RSS or Atom) or web page."""

    model_config = ConfigDict(extra="forbid")

    name: str
    kind: Literal["feed", "page"]
    url: str
    source_type: str
    keywords: list[str] = Field(default_factory=list)  # keep an item if one occurs (case-insensitive)
    max_items: int = Field(default=20, ge=1, le=1000)  # items taken per night from a feed
    follow_links: bool = False  # feed items: fetch each item's page and extract its main text
    allow_private: bool = False  # the source's own host may be private/loopback (intranet, tests)

    @property
    def private_host(self) -> str | None:
        """The host allowed to resolve to a non-global address: the source's own, with allow_private."""
        return urlsplit(self.url).hostname if self.allow_private else None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value or not set(value) <= _NAME_CHARS:
            raise ValueError("expected a non-empty name of lowercase letters, digits, '-', '_' or '.'")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or " " in value:
            raise ValueError(f"expected an absolute http:// or https:// URL, got {value!r}")
        return value

    @field_validator("source_type")
    @classmethod
    def _source_type(cls, value: str) -> str:
        if not SOURCE_TYPE_PATTERN.fullmatch(value):
            raise ValueError(f"expected a kebab-case source type such as article-presse, got {value!r}")
        return value

    @field_validator("keywords")
    @classmethod
    def _keywords(cls, value: list[str]) -> list[str]:
        if any(not k.strip() for k in value):
            raise ValueError("expected non-empty keywords")
        return value


class SourcesConfig(BaseModel):
    """The whole file: ``[limits]`` and one ``[[source]]`` table per source."""

    model_config = ConfigDict(extra="forbid")

    limits: CollectLimits = Field(default_factory=CollectLimits)
    source: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> SourcesConfig:
        names = [s.name for s in self.source]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"source names must be unique: {', '.join(dupes)} used twice")
        return self


def load_sources(path: Path) -> SourcesConfig:
    """The sources of ``path``; a problem raises :class:`SourcesError` naming the file and the field."""
    return load_toml_model(
        path,
        SourcesConfig,
        error=SourcesError,
        what="sources file",
        expected="a sources.toml beside request.md, see docs/corpus-format.md",
    )
