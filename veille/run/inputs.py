"""The flow's inputs between steps: settings from the flow's parameters, where task results persist,
the planner's input, and the analyst branches collected in plan order.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veille.corpus.request import Request
from veille.corpus.terms import derive_terms
from veille.roles.planner import CatalogueEntry, PlannerInput, SubTask
from veille.settings import Settings
from veille.steps.analyse import Analysis, failed_analysis

__all__ = [
    "RESULTS_DIRNAME",
    "collect_branches",
    "planner_input",
    "results_dir",
]

# Persisted task results and cache records (retry only the failed branches). `veille clean` deletes it.
RESULTS_DIRNAME = "prefect-results"


def results_dir(settings: Settings) -> Path:
    """A ``pathlib.Path`` on purpose: Prefect reads a *string* result storage as a block name."""
    return settings.warehouse_dir / RESULTS_DIRNAME


def planner_input(request: Request, catalogue: Sequence[CatalogueEntry], settings: Settings) -> PlannerInput:
    return PlannerInput(
        request_title=request.title,
        request=request.text,
        terms=derive_terms(request),
        catalogue=list(catalogue),
        max_subtasks=settings.max_subtasks,
        max_docs=settings.max_docs,
        with_summaries=settings.planner_sees_summaries,
    )


def collect_branches(sub_tasks: Sequence[SubTask], futures: Sequence[Any]) -> list[Analysis]:
    """One Analysis per sub-task, in plan order; a failed branch becomes a ``failed`` record.

    ``futures`` are the mapped analyst runs (same order as ``sub_tasks``); each is awaited, and a
    failure is read from its final state instead of being raised, so the other branches survive.
    """
    out = []
    for sub_task, future in zip(sub_tasks, futures, strict=True):
        future.wait()
        state = future.state
        if state.is_completed():
            out.append(state.result())
            continue
        error = state.result(raise_on_failure=False)
        if not isinstance(error, BaseException):
            error = RuntimeError(state.message or f"branch ended {state.type.value}")
        out.append(failed_analysis(sub_task, error))
    return out
