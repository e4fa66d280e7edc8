"""Google Search grounding (seed 004): what a grounded answer comes back as, read from the SDK.

A request with the ``google_search`` tool cannot ask for JSON on many Gemini models, so the model
answers in free text and the sources come in ``candidate.grounding_metadata``: ``grounding_chunks``
(one web page each: uri, title, domain), ``grounding_supports`` (a segment of the answer and the
indices of the chunks behind it) and ``web_search_queries``. The backend turns all of it into one
:class:`GroundedAnswer`, serialised as the response text, so the client validates, caches and
journals a grounded call like any other. Nothing here reads or fetches a URL: they are text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "GOOGLE_SEARCH",
    "GroundedAnswer",
    "WebChunk",
    "WebSupport",
    "grounded_answer",
    "search_tools",
]

GOOGLE_SEARCH = "google_search"  # the tool name in ModelRequest.tools / Role.tools


class WebChunk(BaseModel):
    """One ``grounding_chunks`` entry, at its index in that response (supports point to it)."""

    index: int
    uri: str | None = None
    title: str | None = None
    domain: str | None = None  # not sent by the Gemini Developer API (Vertex AI only)


class WebSupport(BaseModel):
    """One ``grounding_supports`` entry: a segment of the answer and the chunks that support it."""

    text: str
    chunk_indices: list[int] = Field(default_factory=list)


class GroundedAnswer(BaseModel):
    """The researcher's answer: free text, the searches it ran and what supports each segment."""

    text: str
    queries: list[str] = Field(default_factory=list)
    chunks: list[WebChunk] = Field(default_factory=list)
    supports: list[WebSupport] = Field(default_factory=list)
    retrieved_at: str = ""  # UTC time the answer arrived (a cached answer keeps its own)


def search_tools() -> list[types.Tool]:
    """``tools=[Tool(google_search=GoogleSearch())]`` for ``GenerateContentConfig``."""
    from google.genai import types

    return [types.Tool(google_search=types.GoogleSearch())]


def _segment_text(segment: Any, parts: list[str]) -> str:
    """The segment's own text, else its byte range in its part (indices are UTF-8 bytes)."""
    if segment is None:
        return ""
    if segment.text:
        return str(segment.text)
    index = segment.part_index or 0
    if not 0 <= index < len(parts) or segment.end_index is None:
        return ""
    data = parts[index].encode("utf-8")
    return data[segment.start_index or 0 : segment.end_index].decode("utf-8", errors="ignore")


def grounded_answer(candidate: Any, parts: list[str]) -> GroundedAnswer:
    """Read a candidate's grounding metadata; ``parts`` are its non-thought text parts in order.

    Missing metadata (the model did not search) gives an answer with no chunk: code then has no
    source for it and keeps none of its claims.
    """
    meta = getattr(candidate, "grounding_metadata", None) if candidate is not None else None
    chunks: list[WebChunk] = []
    supports: list[WebSupport] = []
    queries: list[str] = []
    if meta is not None:
        for i, chunk in enumerate(meta.grounding_chunks or []):
            web = chunk.web
            chunks.append(
                WebChunk(
                    index=i,
                    uri=(web.uri or None) if web else None,
                    title=(web.title or None) if web else None,
                    domain=(web.domain or None) if web else None,
                )
            )
        for support in meta.grounding_supports or []:
            text = _segment_text(support.segment, parts).strip()
            if text:
                supports.append(
                    WebSupport(text=text, chunk_indices=list(support.grounding_chunk_indices or []))
                )
        queries = [q for q in (meta.web_search_queries or []) if q]
    return GroundedAnswer(
        text="".join(parts),
        queries=queries,
        chunks=chunks,
        supports=supports,
        retrieved_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
    )
