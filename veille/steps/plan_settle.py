"""The plan settled by code, the same for every backend and every caller (the flow's plan task,
the library pipeline of testkit, the corpora tests): the request read once against the documents'
text and the planner's proposal (veille.steps.request_read), then what each analyst reads decided
by the documents' passages per axis of that reading (veille.steps.plan_reading). One function, so a
test cannot measure a plan the flow would not make.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from veille.roles.planner import PlannerInput
from veille.steps.plan import LeftOutLike, PlanOutcome
from veille.steps.plan_reading import read_by_text
from veille.steps.plan_screen import code_proposal
from veille.steps.request_read import plan_reading

if TYPE_CHECKING:
    from veille.steps.text_relevance import TextRelevance

__all__ = ["settle_plan"]


def settle_plan(
    outcome: PlanOutcome,
    data: PlannerInput,
    bodies: Mapping[str, str],
    budget: int | None = None,
    authority_file: Path | None = None,
    *,
    flagged: Mapping[str, str] | None = None,
    left_out: Sequence[LeftOutLike] = (),
    text: TextRelevance | None = None,
) -> PlanOutcome:
    """``outcome`` (veille.steps.plan.make_plan's) with ``reading`` (the request read once) and its
    plan settled by the text; ``bodies``: id -> text of the catalogue's documents; ``budget``: the
    analyst's reading budget in tokens, for the forecast of what will not be read whole;
    ``authority_file``: the framing types of code's own proposal (veille.steps.plan_screen), as the
    offline backend reads them; ``flagged``, ``left_out``, ``text``: make_plan's, so code's proposal
    goes through the checks the planner's went through."""
    reading = plan_reading(data, bodies, outcome.proposed)
    outcome = outcome.model_copy(update={"reading": reading})
    screen = code_proposal(
        data,
        bodies,
        authority_file,
        flagged=flagged,
        left_out=left_out,
        text=text,
        proposed=outcome.proposed,
    )
    return read_by_text(outcome, data, bodies, reading, budget=budget, screen=screen)
