"""Task: grade the run's dossier against the corpus reference (when the corpus has ``reference/``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from veille.corpus.reference import load_reference
from veille.corpus.request import load_request
from veille.graders.dossier import grade_dossier, write_grades
from veille.roles.base import Asker
from veille.settings import Settings

__all__ = ["grade_run"]


@task(name="grade-run", cache_policy=NO_CACHE)  # writes grades.json; the client is not data
def grade_run(settings: Settings, run_dir: Path, client: Asker | None = None) -> list[dict[str, Any]]:
    """Grade ``run_dir`` (report, review rounds, plan) and write its grades.json; [] without reference.

    ``client`` is the run's model client (its judge calls land in the run's journal); without one,
    a client is opened for the run, appending to the run's calls.jsonl, and closed afterwards.
    """
    reference = load_reference(settings.corpus_dir)
    if reference is None:
        return []
    request = load_request(settings.corpus_dir)
    prompt = f"{request.title}\n\n{request.text}"
    run_dir = Path(run_dir)
    if client is not None:
        grades = grade_dossier(run_dir, reference, request=prompt, client=client)
    else:
        from tasks.clients import open_client

        run_id = _run_id(run_dir)
        with open_client(settings, run_id, run_dir / "calls.jsonl") as own:
            grades = grade_dossier(run_dir, reference, request=prompt, client=own)
    write_grades(run_dir, grades)
    return [g.model_dump() for g in grades]


def _run_id(run_dir: Path) -> str:
    run_json = run_dir / "run.json"
    if run_json.exists():
        run_id = json.loads(run_json.read_text(encoding="utf-8")).get("run_id")
        if run_id:
            return str(run_id)
    return run_dir.name
