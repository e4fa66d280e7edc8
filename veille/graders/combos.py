"""Combinations of a judge with a rule-based grader (seed 002).

- judge + similarity: ``0.7 * judge + 0.3 * rouge_l`` — the judge decides what is correct, the
  similarity pulls towards the reference's wording.
- judge + numbers: ``0.5 * judge + 0.5 * numeric`` — reasoning and figures both count; when the
  reference has no key figure (numeric score None) the judge's score is used alone.

If the judge has no score the combination has none either (a rule-based score alone would silently
change what the number means).
"""

from __future__ import annotations

from collections.abc import Sequence

from veille.graders.base import Grader, GraderResult, Sample
from veille.graders.numeric import NumericGrader
from veille.graders.rouge import RougeL

__all__ = [
    "JUDGE_NUMBERS_WEIGHTS",
    "JUDGE_SIMILARITY_WEIGHTS",
    "JudgeNumbers",
    "JudgeSimilarity",
    "combine",
]

JUDGE_SIMILARITY_WEIGHTS = (0.7, 0.3)
JUDGE_NUMBERS_WEIGHTS = (0.5, 0.5)


def combine(
    name: str,
    version: str,
    judge: GraderResult,
    other: GraderResult,
    weights: tuple[float, float],
    *,
    judge_alone_when_missing: bool,
) -> GraderResult:
    """Weighted mean of a judge result and a rule-based result, with both parts in the details."""
    details: dict[str, object] = {
        judge.grader: judge.score,
        other.grader: other.score,
        "weights": {judge.grader: weights[0], other.grader: weights[1]},
    }
    if judge.score is None:
        details["reason"] = "no judge score"
        score = None
    elif other.score is None:
        if judge_alone_when_missing:
            details["weights"] = {judge.grader: 1.0, other.grader: 0.0}
            details["reason"] = f"no {other.grader} score: judge alone"
            score = judge.score
        else:
            details["reason"] = f"no {other.grader} score"
            score = None
    else:
        score = weights[0] * judge.score + weights[1] * other.score
    result_score = None if score is None else min(1.0, max(0.0, round(score, 12)))
    return GraderResult(grader=name, version=version, score=result_score, model=judge.model, details=details)


class _Combination(Grader):
    other: Grader
    weights: tuple[float, float]
    judge_alone_when_missing: bool

    def __init__(self, judge: Grader) -> None:
        self.judge = judge

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_group(sample.prompt, sample.reference, [sample.response])[0]

    def grade_group(self, prompt: str, reference: str, responses: Sequence[str]) -> list[GraderResult]:
        judged = self.judge.grade_group(prompt, reference, responses)
        others = self.other.grade_group(prompt, reference, responses)
        return self.combine_results(judged, others)

    def combine_results(
        self, judged: Sequence[GraderResult], others: Sequence[GraderResult]
    ) -> list[GraderResult]:
        """Combine results already computed (lets a caller pay for one judge call per group only)."""
        if len(judged) != len(others):
            raise ValueError(f"{self.name}: {len(judged)} judge results for {len(others)} responses")
        return [
            combine(
                self.name,
                self.version,
                j,
                o,
                self.weights,
                judge_alone_when_missing=self.judge_alone_when_missing,
            )
            for j, o in zip(judged, others, strict=True)
        ]


class JudgeSimilarity(_Combination):
    """70 % judge, 30 % ROUGE-L."""

    name = "judge+similarity"
    version = "2"  # 2: the judge score is gated by accuracy
    weights = JUDGE_SIMILARITY_WEIGHTS
    judge_alone_when_missing = False

    def __init__(self, judge: Grader, similarity: Grader | None = None) -> None:
        super().__init__(judge)
        self.other = similarity or RougeL()


class JudgeNumbers(_Combination):
    """50 % judge, 50 % numeric; judge alone when the reference has no key figure."""

    name = "judge+numbers"
    version = "2"  # 2: the judge score is gated by accuracy
    weights = JUDGE_NUMBERS_WEIGHTS
    judge_alone_when_missing = True

    def __init__(self, judge: Grader, numbers: Grader | None = None) -> None:
        super().__init__(judge)
        self.other = numbers or NumericGrader()
