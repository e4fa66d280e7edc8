"""Alerts: what a run flags for a human. Written to alerts.json and the ``alerts`` table."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

__all__ = ["Alert", "Severity"]

Severity = Literal["info", "warning", "error"]


class Alert(BaseModel):
    """One alert. ``code`` is stable (queried with SQL); ``message`` is for people (French or English)."""

    code: str  # e.g. plan.unknown_ids, plan.truncated_docs, analyst.foreign_citation, report.orphan_citation
    severity: Severity = "warning"
    stage: str  # ingest | plan | analyse | report | review | grade | record
    message: str
    subject: str | None = None  # document id, sub-task id, file path…
