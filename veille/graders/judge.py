"""LLM judge (seed 002): one call per prompt, seeing the reference and all N responses together.

The judge returns, per response, an integer 1–5 for each criterion (accuracy, usefulness, tone,
format) and a short justification; the prompt and instructions are :mod:`veille.roles.judge`'s.
Seeing the N responses side by side makes the scores consistent relative to each other, which is
what GRPO uses.

**Correctness gates the score**: ``score = min((accuracy − 1) / 4, (mean of the four criteria − 1) / 4)``.
With four equal criteria a wrong answer in a good tone and format kept 3/4 of the weight (« Je ne
sais pas. » scored 0.5, the seed's wrong-recipient answer as much as the right one); the seed makes
the judge the authority on what is correct (« le juge détermine ce qui est correct »), and MT-Bench
(Zheng et al., 2023) shows judges favour length and style (verbosity bias). Under the gate, style
can lower a correct answer's score but never lift a wrong one above its accuracy.

**Position**: the responses are shown in a shuffled order (MT-Bench's position bias: a judge favours
one slot; drafts always came before the final report, so a revision gain could be a position
effect). The permutation is drawn from a hash of the group's texts, so a rerun shows the same order
(reproducible, cacheable) while over many groups every response is as likely to be in any slot. The
order travels in the call's payload (``JudgeInput.order``) and in each result's details
(``shown_order``, ``shown_position``).

**Criteria**: ``generic`` (any ``veille grade`` row) or ``dossier`` (veille's reports: sources,
contradictions), shown with the request.

The call goes through the model client (any backend: Gemini, offline engine, scripted). The output
schema is built per group (:func:`~veille.roles.judge.verdict_schema`): one required property per
response, ``r0`` … ``r{N-1}``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from statistics import fmean

from veille.graders.base import Grader, GraderResult, Sample
from veille.roles.base import Asker
from veille.roles.judge import JUDGE, JUDGE_CRITERIA, CriteriaKind, JudgeInput, JudgeScore

__all__ = ["FORMULA", "JudgeGrader", "normalise_scores", "presentation_order"]

FORMULA = "min((accuracy - 1) / 4, (mean(criteria) - 1) / 4)"


def normalise_scores(score: JudgeScore) -> float:
    """1–5 criteria to 0–1, gated by accuracy (see the module docstring)."""
    mean = (fmean(getattr(score, c) for c in JUDGE_CRITERIA) - 1) / 4
    return min((score.accuracy - 1) / 4, mean)


def presentation_order(prompt: str, reference: str, responses: Sequence[str]) -> list[int]:
    """The order the responses are shown in: original indices, shuffled by a hash of the group."""
    digest = hashlib.sha256("\x00".join([prompt, reference, *responses]).encode("utf-8")).digest()
    order = list(range(len(responses)))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)  # an order, not a secret
    return order


class JudgeGrader(Grader):
    """Scores every response of a group in one judge call; ``model`` is the judge model id."""

    name = "judge"
    version = "2"  # 2: accuracy gates the score, shuffled order, generic or dossier criteria

    def __init__(self, client: Asker, criteria: CriteriaKind = "generic") -> None:
        self.client = client
        self.criteria: CriteriaKind = criteria

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_group(sample.prompt, sample.reference, [sample.response])[0]

    def grade_group(self, prompt: str, reference: str, responses: Sequence[str]) -> list[GraderResult]:
        """One call for the whole group. Model errors propagate (the caller decides what a failure means)."""
        if not responses:
            return []
        order = presentation_order(prompt, reference, responses)
        payload = JudgeInput(
            prompt=prompt,
            reference=reference,
            responses=[responses[i] for i in order],
            criteria=self.criteria,
            order=order,
        )
        result = self.client.ask(JUDGE, payload)
        shown = result.output.by_response()
        position = {original: slot for slot, original in enumerate(order)}
        out = []
        for index in range(len(responses)):
            score = shown[position[index]]
            out.append(
                self.result(
                    normalise_scores(score),
                    {
                        "criteria": {c: getattr(score, c) for c in JUDGE_CRITERIA},
                        "justification": score.justification,
                        "response_index": index,
                        "shown_position": position[index],
                        "shown_order": order,
                        "criteria_kind": self.criteria,
                        "group_size": len(responses),
                        "formula": FORMULA,
                    },
                    model=result.model,
                )
            )
        return out
