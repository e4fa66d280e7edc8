"""Graders (seed 002): versioned, pure scoring functions; the judge goes through the model layer."""

from veille.graders.base import Grader, GraderResult, Sample
from veille.graders.combos import JudgeNumbers, JudgeSimilarity
from veille.graders.exact import Contains, ExactMatch, JsonFormat, LabelCheck
from veille.graders.numeric import NumericGrader
from veille.graders.rouge import RougeL

__all__ = [
    "Contains",
    "ExactMatch",
    "Grader",
    "GraderResult",
    "JsonFormat",
    "JudgeNumbers",
    "JudgeSimilarity",
    "LabelCheck",
    "NumericGrader",
    "RougeL",
    "Sample",
]
