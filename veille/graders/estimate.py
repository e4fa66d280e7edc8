"""What a ``veille grade`` run will cost before it starts: judge calls, tokens, dollars.

One judge call per prompt group (:mod:`veille.graders.batch`). Input tokens are the judge's
prompt as it will be built (instructions, request, reference, every response; ``ceil(chars/4)``,
:mod:`veille.tokens`); output tokens are a budget per response (four integers and a one- or
two-sentence justification). Priced with the judge model's entry of the price table; an unpriced
model gives ``cost_usd`` None (unknown, never 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from veille.models.base import Usage
from veille.models.pricing import PriceTable
from veille.roles.judge import INSTRUCTIONS, JudgeInput, build_prompt
from veille.tokens import estimate_tokens

__all__ = ["OUTPUT_TOKENS_PER_RESPONSE", "GradeEstimate", "estimate_judge"]

OUTPUT_TOKENS_PER_RESPONSE = 120  # four integers, a justification of one or two sentences, JSON keys


@dataclass(frozen=True)
class GradeEstimate:
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    model: str


def estimate_judge(
    groups: Sequence[tuple[str, str, Sequence[str]]], model: str, prices: PriceTable
) -> GradeEstimate:
    """The judge's calls, tokens and cost for ``groups`` of (prompt, reference, responses)."""
    input_tokens = output_tokens = 0
    cost: float | None = 0.0
    for prompt, reference, responses in groups:
        text = build_prompt(JudgeInput(prompt=prompt, reference=reference, responses=list(responses)))
        usage = Usage(
            input_tokens=estimate_tokens(INSTRUCTIONS) + estimate_tokens(text),
            output_tokens=OUTPUT_TOKENS_PER_RESPONSE * len(responses),
            estimated=True,
        )
        input_tokens += usage.input_tokens
        output_tokens += usage.output_tokens
        one = prices.cost(model, usage)
        cost = None if one is None or cost is None else cost + one
    return GradeEstimate(len(groups), input_tokens, output_tokens, cost, model)
