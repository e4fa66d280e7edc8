"""The grade step (seed 002): the run's dossier against the corpus reference the flow loaded."""

from __future__ import annotations

from pathlib import Path

from veille.corpus.reference import Reference
from veille.corpus.request import Request
from veille.graders.dossier import TargetedGrade, grade_dossier, write_grades
from veille.graders.parts import PartJudging
from veille.roles.base import Asker

__all__ = ["grade_run_folder"]


def grade_run_folder(
    run_dir: Path,
    reference: Reference | None,
    request: Request,
    client: Asker | None,
    parts: PartJudging | None = None,
) -> list[TargetedGrade]:
    """Grade ``run_dir`` (report, review rounds, plan) and write its grades.json; [] without a
    reference. The judge's calls go through ``client`` (the run's: they land in its journal);
    ``parts``: the final report judged by parts, unchanged ones carried over (veille.graders.parts)."""
    if reference is None:
        return []
    grades = grade_dossier(
        Path(run_dir), reference, request=f"{request.title}\n\n{request.text}", client=client, parts=parts
    )
    write_grades(Path(run_dir), grades)
    return grades
