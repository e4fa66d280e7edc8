"""Helpers of the plan-step tests: a scripted planner client (no Prefect, no model layer) and a
synthetic catalogue vocabulary (invented words: no rule may be tuned to a real corpus)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from veille.models.base import ModelResult, Usage
from veille.roles.base import In, Out, Role
from veille.roles.planner import CatalogueEntry, PlannerInput

__all__ = ["REQUEST", "TERMS", "PlannerScript", "entry", "planner_input"]

TERMS = ["Zorblax", "Quimby"]
REQUEST = (
    "Comparer Zorblax et Quimby pour la flotte de 2030 : débit mesuré et latence, coût des licences, "
    "sécurité des correctifs, exploitation et maintenance."
)


def entry(doc_id: str, title: str, summary: str | None = None) -> CatalogueEntry:
    return CatalogueEntry(id=doc_id, date="2026-01-01", source_type="note", title=title, summary=summary)


def planner_input(
    catalogue: Sequence[CatalogueEntry],
    *,
    max_subtasks: int = 6,
    max_docs: int = 8,
    terms: Sequence[str] = TERMS,
) -> PlannerInput:
    return PlannerInput(
        request_title="Zorblax ou Quimby ?",
        request=REQUEST,
        terms=list(terms),
        catalogue=list(catalogue),
        max_subtasks=max_subtasks,
        max_docs=max_docs,
        with_summaries=False,
    )


Answer = dict[str, Any] | Callable[[PlannerInput], dict[str, Any]]


class PlannerScript:
    """An ``Asker`` answering the planner from a list of JSON answers (the last one repeats).

    Each answer is parsed with the role's per-input schema, as the model client does.
    """

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.inputs: list[PlannerInput] = []

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]:
        assert isinstance(data, PlannerInput) and role.name == "planner"
        self.inputs.append(data)
        answer = self.answers[min(len(self.inputs), len(self.answers)) - 1]
        raw = answer(data) if callable(answer) else answer
        output = role.schema_for(data).model_validate(raw)
        return ModelResult(
            output=output,
            raw_text=output.model_dump_json() if isinstance(output, BaseModel) else "",
            usage=Usage(input_tokens=0, output_tokens=0),
            latency_s=0.0,
            cost_usd=0.0,
            model="script",
            attempts=1,
            cache_hit=False,
        )
