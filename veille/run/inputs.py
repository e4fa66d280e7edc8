"""The flow's inputs between steps: where task results persist and the analyst branches collected in
plan order (the planner's input is the catalogue step's: veille/steps/catalogue.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from veille.corpus.reference import Reference, reference_if_valid
from veille.corpus.request import Request, load_request
from veille.grid import Grid, load_grid
from veille.roles.planner import SubTask
from veille.settings import Settings
from veille.store.readers import document_snapshot

if TYPE_CHECKING:  # an unchanged night never imports the analyst step (veille.run.nightskip)
    from veille.steps.analyse import Analysis

__all__ = [
    "RESULTS_DIRNAME",
    "CorpusInputs",
    "collect_branches",
    "collect_mapped",
    "corpus_inputs",
    "results_dir",
]

T = TypeVar("T")

# Persisted task results and cache records (retry only the failed branches). `veille clean` deletes it.
RESULTS_DIRNAME = "prefect-results"


class CorpusInputs(NamedTuple):
    request: Request
    reference: Reference | None  # None when absent or invalid (ingestion alerted)
    grid: Grid  # the writing grid, with the request's mandatory mentions
    snapshot: list[tuple[str, str]]  # (document id, content hash) after ingestion


def corpus_inputs(settings: Settings) -> CorpusInputs:
    """Read once per run, after ingestion, and handed to the steps that need them."""
    request = load_request(settings.corpus_dir, settings.request)
    grid = load_grid(settings.grid_file, extra_mentions=request.mandatory_mentions)
    snapshot = document_snapshot(settings.database)
    return CorpusInputs(request, reference_if_valid(settings.corpus_dir), grid, snapshot)


def results_dir(settings: Settings) -> Path:
    """A ``pathlib.Path`` on purpose: Prefect reads a *string* result storage as a block name."""
    return settings.warehouse_dir / RESULTS_DIRNAME


def collect_mapped(
    sub_tasks: Sequence[SubTask],
    futures: Sequence[Any],
    failed: Callable[[SubTask, BaseException], T],
    what: str = "branch",
) -> list[T]:
    """The result of each mapped run, in plan order; a run that failed becomes ``failed(sub_task,
    error)`` instead of being raised, so the other runs survive. Each future is awaited."""
    out: list[T] = []
    for sub_task, future in zip(sub_tasks, futures, strict=True):
        future.wait()
        state = future.state
        if state.is_completed():
            out.append(state.result())
            continue
        error = state.result(raise_on_failure=False)
        if not isinstance(error, BaseException):
            error = RuntimeError(state.message or f"{what} ended {state.type.value}")
        out.append(failed(sub_task, error))
    return out


def collect_branches(sub_tasks: Sequence[SubTask], futures: Sequence[Any]) -> list[Analysis]:
    """One Analysis per sub-task (the mapped analyst runs, same order); a failed branch becomes a
    ``failed`` record."""
    from veille.steps.analyse import failed_analysis  # only a night that analyses imports it

    return collect_mapped(sub_tasks, futures, failed_analysis)
