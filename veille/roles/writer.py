"""Writer (seed 004): turns numbered findings into the report; writes source numbers only."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["Draft", "NumberedFinding", "SourceRef", "WriterInput"]


class Draft(BaseModel):
    markdown: str = Field(
        description="Markdown with exactly '## Synthèse', '## Points clés', '## Ce qui reste incertain'; "
        "no Sources section (code adds it)"
    )


class SourceRef(BaseModel):
    number: int
    id: str
    title: str
    date: str
    source_type: str
    url: str | None = None


class NumberedFinding(BaseModel):
    subtask_id: str
    statement: str
    sources: list[int]  # source numbers, never document ids


class WriterInput(BaseModel):
    request_title: str
    request: str
    questions: dict[str, str]  # sub-task id -> question
    findings: list[NumberedFinding]
    contradictions: list[str] = Field(default_factory=list)  # already phrased with source numbers
    open_questions: list[str] = Field(default_factory=list)
    missing_axes: list[str] = Field(default_factory=list)  # questions of failed branches
    sources: list[SourceRef]
    mandatory_mentions: list[str] = Field(default_factory=list)
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
