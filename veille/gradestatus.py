"""How a run's grading went, read from its grades (grades.json entries) and alerts.

Shared by the flow (its log line and the ``grade.failed`` alerts of alerts.json), the run summary
and the warehouse (``runs.grade_status``), so that all three say the same thing. A grade *failed*
when its details carry an ``error`` (the judge call raised); a *null* grade has no score, failed or
not applicable (a structural check without facts, a combination without a judge score).

Status: ``none`` (nothing graded: no reference), ``ok`` (no failed grade), ``partial`` (some
grades failed, others scored), ``failed`` (grading raised before writing grades, or no grade
scored while some failed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from veille.alerts import Alert, alert

__all__ = [
    "GRADES_FILE",
    "GRADE_FAILED",
    "GradeCounts",
    "GradeStatus",
    "failure_alerts",
    "grade_counts",
    "grade_status",
]

GRADES_FILE = "grades.json"  # in the run folder, written by veille.graders.dossier.write_grades
GRADE_FAILED = "grade.failed"
GradeStatus = Literal["ok", "partial", "failed", "none"]


@dataclass(frozen=True)
class GradeCounts:
    total: int
    scored: int
    failed: int  # null because the grader raised (details.error)

    @property
    def null(self) -> int:
        return self.total - self.scored

    def note(self) -> str:
        """``13 grade(s): 7 scored, 6 null (3 failed)`` — the flow's log line."""
        failed = f" ({self.failed} failed)" if self.failed else ""
        return f"{self.total} grade(s): {self.scored} scored, {self.null} null{failed}"


def _error(grade: Mapping[str, Any]) -> str | None:
    details = grade.get("details")
    error = details.get("error") if isinstance(details, Mapping) else None
    return str(error) if error else None


def grade_counts(grades: Sequence[Mapping[str, Any]]) -> GradeCounts:
    """Grades in all, scored, and failed (an ``error`` in their details)."""
    return GradeCounts(
        total=len(grades),
        scored=sum(1 for g in grades if g.get("score") is not None),
        failed=sum(1 for g in grades if _error(g)),
    )


def grade_status(
    grades: Sequence[Mapping[str, Any]], alerts: Iterable[Mapping[str, Any]] = ()
) -> GradeStatus:
    """ok / partial / failed / none (see the module docstring); ``alerts`` are the run's, as dicts."""
    if not grades:
        return "failed" if any(a.get("code") == GRADE_FAILED for a in alerts) else "none"
    counts = grade_counts(grades)
    if not counts.failed:
        return "ok"
    return "partial" if counts.scored else "failed"


def failure_alerts(grades: Sequence[Mapping[str, Any]]) -> list[Alert]:
    """One ``grade.failed`` alert per grader that gave no score on the final report because it raised."""
    out: list[Alert] = []
    seen: set[str] = set()
    for g in grades:
        error = _error(g)
        grader = str(g.get("grader"))
        if error and str(g.get("target") or "final") == "final" and grader not in seen:
            seen.add(grader)
            out.append(
                alert(
                    "grade",
                    GRADE_FAILED,
                    f"grader {grader} gave no score: {error}",
                    severity="warning",
                    subject=grader,
                )
            )
    return out
