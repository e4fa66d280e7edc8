"""Task: grade the run's dossier against the corpus reference (when the corpus has ``reference/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from veille.corpus.reference import Reference
from veille.corpus.request import Request
from veille.roles.base import Asker
from veille.steps.grade import grade_run_folder

__all__ = ["grade_run"]


@task(name="grade-run", cache_policy=NO_CACHE)  # writes grades.json; the client is not data
def grade_run(
    run_dir: Path, reference: Reference | None, request: Request, client: Asker | None
) -> list[dict[str, Any]]:
    """Grade ``run_dir`` with the request and reference the flow already holds (not reloaded)."""
    return [g.model_dump() for g in grade_run_folder(run_dir, reference, request, client)]
