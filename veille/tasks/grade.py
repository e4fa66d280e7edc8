"""Task: grade the run's dossier against the corpus reference (when the corpus has ``reference/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.corpus.reference import Reference
from veille.corpus.request import Request
from veille.roles.base import Asker
from veille.settings import Settings
from veille.steps.grade import grade_run_folder
from veille.warehouse.quality import check_quality

__all__ = ["grade_run", "quality_alerts"]


@task(name="grade-run", cache_policy=NO_CACHE)  # writes grades.json; the client is not data
def grade_run(
    run_dir: Path, reference: Reference | None, request: Request, client: Asker | None
) -> list[dict[str, Any]]:
    """Grade ``run_dir`` with the request and reference the flow already holds (not reloaded)."""
    return [g.model_dump() for g in grade_run_folder(run_dir, reference, request, client)]


def quality_alerts(settings: Settings, run_dir: Path, grades: list[dict[str, Any]]) -> list[Alert]:
    """``quality.regression`` when the judge score of this run falls below the trailing median of
    the corpus's previous completed runs by more than ``settings.quality_threshold`` (read-only
    query of the warehouse); [] otherwise, or without enough history. Not a task: a quick read."""
    check = check_quality(
        settings.parquet_dir,
        corpus_dir=str(settings.corpus_dir),
        run_id=Path(run_dir).name,  # the run folder is named after the run id
        grades=grades,
        window=settings.quality_window,
        threshold=settings.quality_threshold,
        min_runs=settings.quality_min_runs,
    )
    return [check.alert()] if check is not None and check.regressed else []
