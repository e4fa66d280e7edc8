"""Task: grade the run's dossier against the corpus reference (when the corpus has ``reference/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect.cache_policies import NO_CACHE

from veille.alerts import Alert
from veille.corpus.reference import Reference
from veille.corpus.request import Request
from veille.graders.parts import JUDGED_FILE, JudgedParts, PartJudging
from veille.roles.base import Asker
from veille.settings import Settings
from veille.steps.grade import grade_run_folder
from veille.tasks.datatask import task
from veille.warehouse.quality import check_quality

__all__ = ["grade_run", "quality_alerts"]


@task(name="grade-run", cache_policy=NO_CACHE)  # writes grades.json; the client is not data
def grade_run(
    run_dir: Path,
    reference: Reference | None,
    request: Request,
    client: Asker | None,
    sections_path: Path | None = None,
    judge_key: str = "",
) -> list[dict[str, Any]]:
    """Grade ``run_dir`` with the request and reference the flow already holds (not reloaded).
    ``sections_path``: where the night's sections are kept (tasks.write.sections_path); with it,
    the judge grades the report by parts and carries over the unchanged ones, kept beside it
    (veille.graders.parts); None: the whole report. ``judge_key``: tasks.clients.model_key's."""
    parts = None
    if sections_path is not None:
        judged = JudgedParts(sections_path.with_name(JUDGED_FILE))
        parts = PartJudging(judged, judge_key, Path(run_dir).name)
    return [g.model_dump() for g in grade_run_folder(run_dir, reference, request, client, parts)]


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
