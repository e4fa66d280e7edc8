"""The plan settled by code, the same for every backend and every caller (the flow's plan task,
the library pipeline of testkit, the corpora tests): the request read once against the documents'
text and the planner's proposal (veille.steps.request_read), then what each analyst reads decided
by the documents' passages per axis of that reading (veille.steps.plan_reading). One function, so a
test cannot measure a plan the flow would not make.
"""

from __future__ import annotations

from collections.abc import Mapping

from veille.roles.planner import PlannerInput
from veille.steps.plan import PlanOutcome
from veille.steps.plan_reading import read_by_text
from veille.steps.request_read import plan_reading

__all__ = ["settle_plan"]


def settle_plan(
    outcome: PlanOutcome, data: PlannerInput, bodies: Mapping[str, str], budget: int | None = None
) -> PlanOutcome:
    """``outcome`` (veille.steps.plan.make_plan's) with ``reading`` (the request read once) and its
    plan settled by the text; ``bodies``: id -> text of the catalogue's documents; ``budget``: the
    analyst's reading budget in tokens, for the forecast of what will not be read whole."""
    reading = plan_reading(data, bodies, outcome.proposed)
    outcome = outcome.model_copy(update={"reading": reading})
    return read_by_text(outcome, data, bodies, reading, budget=budget)
