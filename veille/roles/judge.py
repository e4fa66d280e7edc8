"""LLM judge (seed 002): sees the reference and all N responses together, scores each 1–5 per criterion."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["JUDGE_CRITERIA", "JudgeInput", "JudgeScore", "JudgeVerdict"]

JUDGE_CRITERIA = ("accuracy", "usefulness", "tone", "format")


class JudgeScore(BaseModel):
    response_index: int = Field(ge=0, description="0-based index of the response")
    accuracy: int = Field(ge=1, le=5)
    usefulness: int = Field(ge=1, le=5)
    tone: int = Field(ge=1, le=5)
    format: int = Field(ge=1, le=5)
    justification: str


class JudgeVerdict(BaseModel):
    scores: list[JudgeScore]


class JudgeInput(BaseModel):
    prompt: str
    reference: str
    responses: list[str]
