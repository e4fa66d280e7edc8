"""The grader contract: a versioned grader turns (prompt, response, reference) into a score in [0, 1].

Every result carries the grader's name and version (a change of method bumps the version, so scores
stored in the warehouse stay comparable only within one version), the judge's model id when a model
was used, and the details a human needs to check the score (matched figures, LCS length...).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Grader", "GraderResult", "Sample"]


class GraderResult(BaseModel):
    """One score. ``score`` is None when the grader has nothing to measure (never a silent 0)."""

    model_config = ConfigDict(frozen=True)

    grader: str
    version: str
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    model: str | None = None  # judge model id, when a model produced (part of) the score
    details: dict[str, Any] = Field(default_factory=dict)


class Sample(BaseModel):
    """One response to grade, with its prompt and the reference answer."""

    model_config = ConfigDict(frozen=True)

    prompt: str = ""
    response: str
    reference: str


class Grader(ABC):
    """Base class of every grader. Subclasses set ``name`` and ``version`` and implement ``grade``.

    ``grade_group`` grades the N responses to one prompt; rule-based graders grade them one by one,
    the judge overrides it to see them all in one call (seed 002: consistent relative scores).
    """

    name: ClassVar[str]
    version: ClassVar[str]

    @abstractmethod
    def grade(self, sample: Sample) -> GraderResult:
        """Score one response against its reference."""

    def grade_group(self, prompt: str, reference: str, responses: Sequence[str]) -> list[GraderResult]:
        return [self.grade(Sample(prompt=prompt, response=r, reference=reference)) for r in responses]

    def result(
        self, score: float | None, details: Mapping[str, Any] | None = None, *, model: str | None = None
    ) -> GraderResult:
        """Build a result stamped with this grader's name and version."""
        if score is not None:
            # Clamp float noise (e.g. 1.0000000000000002) without hiding real range errors upstream.
            score = min(1.0, max(0.0, round(score, 12)))
        return GraderResult(
            grader=self.name, version=self.version, score=score, model=model, details=dict(details or {})
        )
