"""Quality regression: a run whose judge score falls below the trailing median of its corpus.

Computed once the run is graded (its judge score is known) and before it is recorded, from the
warehouse's previous completed runs of the same corpus (a read-only query): the judge score of
the final report against the median of the last ``window`` ones. A drop of more than
``threshold`` raises a ``quality.regression`` warning (alerts.json, the run summary, the
Prefect metrics artifact). Too few previous runs (``min_runs``), no judge score, or no warehouse
yet: no verdict, no alert.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veille.alerts import Alert, alert
from veille.warehouse.errors import WarehouseError
from veille.warehouse.queries import query, read_sql

__all__ = [
    "REGRESSION_CODE",
    "QualityCheck",
    "check_quality",
    "final_judge_score",
    "final_judge_version",
    "previous_scores",
]

logger = logging.getLogger(__name__)

REGRESSION_CODE = "quality.regression"


@dataclass(frozen=True)
class QualityCheck:
    """The judge score of a run against the trailing median of its corpus."""

    score: float
    median: float
    previous: int  # completed runs the median is over
    threshold: float

    @property
    def drop(self) -> float:
        return self.median - self.score

    @property
    def regressed(self) -> bool:
        return self.drop > self.threshold

    def alert(self) -> Alert:
        return alert(
            "grade",
            REGRESSION_CODE,
            f"score du juge {self.score:.3f} sous la médiane {self.median:.3f} des "
            f"{self.previous} exécution(s) terminée(s) précédente(s) du même corpus : "
            f"écart {self.drop:.3f} > seuil {self.threshold:.3f}",
            severity="warning",
            subject="judge",
        )


def final_judge_score(grades: Iterable[Mapping[str, Any]]) -> float | None:
    """The ``judge`` score of the final report in grades.json entries (None when not scored)."""
    for grade in grades:
        if grade.get("grader") == "judge" and grade.get("target", "final") == "final":
            score = grade.get("score")
            return float(score) if score is not None else None
    return None


def final_judge_version(grades: Iterable[Mapping[str, Any]]) -> str | None:
    """The judge version of the final report's grade (« 2+parts » when judged by parts), or None."""
    for grade in grades:
        if grade.get("grader") == "judge" and grade.get("target", "final") == "final":
            version = grade.get("version")
            return str(version) if version is not None else None
    return None


def previous_scores(
    parquet_dir: Path, corpus_dir: str, run_id: str, window: int, version: str | None = None
) -> list[float]:
    """Judge scores of the last ``window`` completed runs of ``corpus_dir`` (not ``run_id``), newest
    first; with ``version``, only runs whose final report the judge of that version scored."""
    if not Path(parquet_dir).is_dir():
        return []  # no run recorded yet
    _, rows = query(
        parquet_dir,
        read_sql("quality_previous_scores"),
        {"corpus": corpus_dir, "run_id": run_id, "window": window, "version": version},
        read_only_check=False,
    )
    return [float(score) for _, score in rows]


def check_quality(
    parquet_dir: Path,
    *,
    corpus_dir: str,
    run_id: str,
    grades: Iterable[Mapping[str, Any]],
    window: int,
    threshold: float,
    min_runs: int,
) -> QualityCheck | None:
    """The run's :class:`QualityCheck`, or None (no judge score, fewer than ``min_runs`` previous runs).

    A warehouse that cannot be read is logged and gives None: the check informs, it never fails a run.
    """
    grades = list(grades)
    score = final_judge_score(grades)
    if score is None:
        return None
    try:
        previous = previous_scores(parquet_dir, corpus_dir, run_id, window, final_judge_version(grades))
    except WarehouseError as exc:
        logger.warning("quality check skipped: the warehouse could not be read (%s)", exc)
        return None
    if len(previous) < max(1, min_runs):
        return None
    return QualityCheck(score, statistics.median(previous), len(previous), threshold)
