"""Alerts: what a run flags for a human. Written to alerts.json and the ``alerts`` table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["GROUP_SHOWN", "Alert", "Severity", "alert", "grouped_alert"]

Severity = Literal["info", "warning", "error"]

# Items a grouped alert's message names before "… et N autre(s)" (the full list is ``subjects``).
GROUP_SHOWN = 12


class Alert(BaseModel):
    """One alert. ``code`` is stable (queried with SQL); ``message`` is for people (French or English).

    A repeated condition is ONE alert naming every case in ``subjects`` (e.g. one
    ``plan.suspicious_exclusion`` for N documents); ``subject`` is then set only when there is one.
    """

    code: str  # e.g. plan.unknown_ids, plan.truncated_docs, analyst.foreign_citation, report.orphan_citation
    severity: Severity = "warning"
    stage: str  # collect | ingest | news | plan | analyse | report | review | grade | record
    message: str
    subject: str | None = None  # document id, sub-task id, file path…
    subjects: list[str] = Field(default_factory=list)  # every subject of a grouped alert


def alert(
    stage: str,
    code: str,
    message: str,
    *,
    severity: Severity = "warning",
    subject: str | None = None,
) -> Alert:
    """One alert of ``stage`` (the one constructor the steps use; ``grouped_alert`` for N subjects)."""
    subjects = [subject] if subject else []
    return Alert(
        code=code, severity=severity, stage=stage, message=message, subject=subject, subjects=subjects
    )


def grouped_alert(
    code: str,
    *,
    stage: str,
    head: str,
    subjects: Sequence[str],
    items: Sequence[str] | None = None,
    severity: Severity = "warning",
    tail: str = "",
) -> Alert:
    """One alert for a condition met by several subjects: ``head (N) : item, item … et K autre(s)``.

    ``items`` are the subjects as the message shows them (default: the subjects themselves); the
    message names the first :data:`GROUP_SHOWN`, ``subjects`` keeps them all.
    """
    shown = list(items if items is not None else subjects)
    rest = len(shown) - GROUP_SHOWN
    listed = ", ".join(shown[:GROUP_SHOWN]) + (f" … et {rest} autre(s)" if rest > 0 else "")
    return Alert(
        code=code,
        severity=severity,
        stage=stage,
        message=f"{head} ({len(subjects)}) : {listed}{tail}",
        subject=subjects[0] if len(subjects) == 1 else None,
        subjects=list(subjects),
    )
