"""Planner (seed 001): splits the request into autonomous sub-tasks over the catalogue only."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["CatalogueEntry", "Plan", "PlannerInput", "SubTask"]


class SubTask(BaseModel):
    id: str = Field(description="st-1, st-2, ... (renumbered by code anyway)")
    question: str = Field(description="Autonomous question, understandable without the others")
    doc_ids: list[str] = Field(description="Ids of the documents useful for this sub-task")


class Plan(BaseModel):
    sub_tasks: list[SubTask]
    excluded: list[str] = Field(default_factory=list, description="Ids of documents of other projects")


class CatalogueEntry(BaseModel):
    id: str
    date: str
    source_type: str
    title: str
    summary: str | None = None


class PlannerInput(BaseModel):
    request_title: str
    request: str
    terms: list[str] = Field(default_factory=list)
    catalogue: list[CatalogueEntry]
    max_subtasks: int
    max_docs: int
    with_summaries: bool = True
