"""Critic (seed 000): scores the draft on the grid; integer scores 1–5, schema-validated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, create_model

__all__ = ["CriticInput", "evaluation_schema"]


def evaluation_schema(criteria: Mapping[str, str]) -> type[BaseModel]:
    """Build the critic's output schema from the grid: one ``int`` in [1, 5] per criterion + remarks."""
    fields: dict[str, Any] = {
        name: (int, Field(ge=1, le=5, description=definition)) for name, definition in criteria.items()
    }
    fields["remarks"] = (
        list[str],
        Field(default_factory=list, description="Precise, actionable corrections, one per problem"),
    )
    return create_model("Evaluation", **fields)


class CriticInput(BaseModel):
    draft: str
    criteria: dict[str, str]  # name -> definition, from the grid
    request: str
    source_count: int
    # The grid's measurable rules, so a rule-based critic can score with proxies.
    min_words: int = 0
    max_words: int = 10_000
    max_sentence_words: int = 25
    forbidden_words: list[str] = Field(default_factory=list)
    mandatory_mentions: list[str] = Field(default_factory=list)
