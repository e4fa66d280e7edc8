"""The flow's inputs between steps: where task results persist and the analyst branches collected in
plan order (the planner's input is the catalogue step's: veille/steps/catalogue.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from veille.corpus.reference import Reference, reference_if_valid
from veille.corpus.request import Request, load_request
from veille.grid import Grid, load_grid
from veille.roles.planner import SubTask
from veille.settings import Settings
from veille.steps.analyse import Analysis, failed_analysis
from veille.store.readers import document_snapshot

__all__ = [
    "RESULTS_DIRNAME",
    "CorpusInputs",
    "collect_branches",
    "corpus_inputs",
    "results_dir",
]

# Persisted task results and cache records (retry only the failed branches). `veille clean` deletes it.
RESULTS_DIRNAME = "prefect-results"


class CorpusInputs(NamedTuple):
    request: Request
    reference: Reference | None  # None when absent or invalid (ingestion alerted)
    grid: Grid  # the writing grid, with the request's mandatory mentions
    snapshot: list[tuple[str, str]]  # (document id, content hash) after ingestion


def corpus_inputs(settings: Settings) -> CorpusInputs:
    """Read once per run, after ingestion, and handed to the steps that need them."""
    request = load_request(settings.corpus_dir)
    grid = load_grid(settings.grid_file, extra_mentions=request.mandatory_mentions)
    snapshot = document_snapshot(settings.database)
    return CorpusInputs(request, reference_if_valid(settings.corpus_dir), grid, snapshot)


def results_dir(settings: Settings) -> Path:
    """A ``pathlib.Path`` on purpose: Prefect reads a *string* result storage as a block name."""
    return settings.warehouse_dir / RESULTS_DIRNAME


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
