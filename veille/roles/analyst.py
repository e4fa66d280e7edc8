"""Analyst: one per sub-task; reads only its documents and writes findings that cite document ids."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["AnalystInput", "ContradictionNote", "DocumentText", "Finding", "Findings"]


class Finding(BaseModel):
    statement: str = Field(description="One factual statement; figures verbatim with their unit")
    doc_ids: list[str] = Field(min_length=1, description="Ids of the documents that support it")
    figures: list[str] = Field(
        default_factory=list, description="Figures quoted verbatim, e.g. '1 180 tokens/s'"
    )


class ContradictionNote(BaseModel):
    doc_ids: list[str] = Field(min_length=2, description="Documents that disagree")
    retained: str = Field(description="Id of the document whose claim is retained")
    reason: str = Field(description="Why: later date, more authoritative source, fix supersedes bulletin...")


class Findings(BaseModel):
    findings: list[Finding]
    contradictions: list[ContradictionNote] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)


class DocumentText(BaseModel):
    id: str
    date: str
    source_type: str
    title: str
    body: str


class AnalystInput(BaseModel):
    subtask_id: str
    question: str
    documents: list[DocumentText]
