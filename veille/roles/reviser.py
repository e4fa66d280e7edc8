"""Reviser (seed 000): rewrites the draft following the arbiter's instructions."""

from __future__ import annotations

from pydantic import BaseModel, Field

from veille.roles.writer import SourceRef

__all__ = ["ReviserInput"]


class ReviserInput(BaseModel):
    draft: str
    instructions: list[str]
    sources: list[SourceRef]
    mandatory_mentions: list[str] = Field(default_factory=list)
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
    forbidden_words: list[str] = Field(default_factory=list)
    invalid_citations: list[int] = Field(default_factory=list)  # orphan numbers to remove
