"""LLM judge (seed 002): one call per prompt, seeing the reference and all N responses together.

The judge returns, per response, an integer 1–5 for each criterion (accuracy, usefulness, tone,
format) and a short justification; the prompt and instructions are :mod:`veille.roles.judge`'s.
Seeing the N responses side by side makes the scores consistent relative to each other, which is
what GRPO uses.

Normalisation to 0–1: ``score = (mean of the four criteria − 1) / 4``, so all 1s → 0.0, all 5s →
1.0, and each criterion point is worth 1/16.

The call goes through the model client (any backend: Gemini, offline engine, scripted). The output
schema is built per group (:func:`~veille.roles.judge.verdict_schema`): one required property per
response, ``r0`` … ``r{N-1}``, so the JSON schema the model follows already says "one score per
response" and a schema-following judge cannot fail validation.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from veille.graders.base import Grader, GraderResult, Sample
from veille.roles.base import Asker
from veille.roles.judge import JUDGE, JUDGE_CRITERIA, JudgeInput, JudgeScore

__all__ = ["JudgeGrader", "normalise_scores"]


def normalise_scores(score: JudgeScore) -> float:
    """``(mean of the criteria − 1) / 4``: 1–5 scale to 0–1."""
    return (fmean(getattr(score, c) for c in JUDGE_CRITERIA) - 1) / 4


class JudgeGrader(Grader):
    """Scores every response of a group in one judge call; ``model`` is the judge model id."""

    name = "judge"
    version = "1"

    def __init__(self, client: Asker) -> None:
        self.client = client

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_group(sample.prompt, sample.reference, [sample.response])[0]

    def grade_group(self, prompt: str, reference: str, responses: Sequence[str]) -> list[GraderResult]:
        """One call for the whole group. Model errors propagate (the caller decides what a failure means)."""
        if not responses:
            return []
        payload = JudgeInput(prompt=prompt, reference=reference, responses=list(responses))
        result = self.client.ask(JUDGE, payload)
        out = []
        for index, score in enumerate(result.output.by_response()):
            out.append(
                self.result(
                    normalise_scores(score),
                    {
                        "criteria": {c: getattr(score, c) for c in JUDGE_CRITERIA},
                        "justification": score.justification,
                        "response_index": index,
                        "group_size": len(responses),
                        "formula": "(mean(criteria) - 1) / 4",
                    },
                    model=result.model,
                )
            )
        return out
