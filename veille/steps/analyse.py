"""The analyse step: one analyst per validated sub-task, reading only its documents.

These functions take a client (anything with ``ask``) and plain data, so tests drive them with a
scripted model; the Prefect task in ``tasks/analyse.py`` is a thin wrapper around them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from veille.alerts import Alert, alert
from veille.roles.analyst import ANALYST, AnalystInput, ContradictionNote, DocumentText, Finding, Findings
from veille.roles.base import Asker
from veille.roles.limits import Bounds
from veille.roles.planner import SubTask
from veille.steps.answer_items import dropped_items_alerts
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.bounds import bound_findings
from veille.steps.reading import PartRead, axis_passages, read_documents, reading_alert, reading_query

__all__ = [
    "Analysis",
    "analyse_subtask",
    "branch_analysis",
    "failed_analysis",
    "missing_documents",
    "restrict_citations",
]


class Analysis(BaseModel):
    """One branch's result (findings.json entry). ``status`` is ``failed`` when the branch raised."""

    subtask_id: str
    question: str
    doc_ids: list[str]
    flags: dict[str, str] = Field(default_factory=dict)  # flagged documents kept by the plan
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    findings: Findings = Field(default_factory=lambda: Findings(findings=[]))
    alerts: list[Alert] = Field(default_factory=list)
    # Documents this branch's analyst read in part (input budget): tokens read / total each.
    read: dict[str, PartRead] = Field(default_factory=dict)


def failed_analysis(sub_task: SubTask, error: BaseException) -> Analysis:
    """The record of a branch that failed after its retries (no secrets: type and message only)."""
    return Analysis(
        subtask_id=sub_task.id,
        question=sub_task.question,
        doc_ids=list(sub_task.doc_ids),
        status="failed",
        error=f"{type(error).__name__}: {error}"[:500],
        alerts=[
            alert(
                "analyse",
                "analyse.branch_failed",
                f"{sub_task.id} en échec ({type(error).__name__}) : axe absent du rapport — "
                f"{sub_task.question}",
                severity="error",
                subject=sub_task.id,
            )
        ],
    )


def restrict_citations(
    findings: Findings, allowed: Sequence[str], subtask_id: str
) -> tuple[Findings, list[Alert]]:
    """Remove citations of documents outside the sub-task's set (the analyst saw only those).

    The analyst's schema already restricts ids to that set; this also repairs what a schema cannot
    say (a contradiction citing one document twice) and answers of schema-less models, each repair
    with an alert. The result is plain :class:`Findings` (not the per-sub-task schema's subclasses).
    """
    allowed_set = set(allowed)
    foreign: list[str] = []
    kept = []
    for finding in findings.findings:
        ids = list(dict.fromkeys(finding.doc_ids))
        foreign += [i for i in ids if i not in allowed_set]
        ids = [i for i in ids if i in allowed_set]
        if ids:
            kept.append(Finding(statement=finding.statement, doc_ids=ids, figures=list(finding.figures)))
    contradictions = []
    single = 0  # notes left with fewer than two distinct documents, none of them foreign
    for note in findings.contradictions:
        ids = list(dict.fromkeys(note.doc_ids))
        outside = [i for i in [*ids, note.retained] if i not in allowed_set]
        foreign += outside
        ids = [i for i in ids if i in allowed_set]
        if len(ids) >= 2 and note.retained in allowed_set:
            contradictions.append(ContradictionNote(doc_ids=ids, retained=note.retained, reason=note.reason))
        elif not outside:
            single += 1
    alerts = []
    foreign = list(dict.fromkeys(foreign))
    if foreign:
        dropped = len(findings.findings) - len(kept)
        alerts.append(
            alert(
                "analyse",
                "analyse.foreign_citation",
                f"{subtask_id} : citations hors périmètre retirées {foreign}"
                + (f" ; {dropped} constat(s) sans source restante supprimé(s)" if dropped else ""),
                severity="warning",
                subject=subtask_id,
            )
        )
    if single:
        alerts.append(
            alert(
                "analyse",
                "analyse.contradiction_dropped",
                f"{subtask_id} : {single} contradiction(s) citant moins de deux documents "
                "distincts supprimée(s)",
                severity="warning",
                subject=subtask_id,
            )
        )
    cleaned = Findings(
        findings=kept, contradictions=contradictions, open_questions=list(findings.open_questions)
    )
    return cleaned, alerts


def analyse_subtask(
    client: Asker,
    sub_task: SubTask,
    documents: Sequence[DocumentText],
    budget: int | None = None,
    bounds: Bounds | None = None,
) -> Analysis:
    """One analyst: the autonomous question and its documents, nothing else — whole while they fit
    ``budget`` tokens (None: no budget), else their sections most relevant to the question; its
    findings within ``bounds`` (veille.steps.bounds: whole findings dropped, with an alert)."""
    bounds = bounds or Bounds()
    # A document the screen flagged and the plan kept carries its flag to the analyst.
    shown = [d.model_copy(update={"flag": sub_task.flags.get(d.id, d.flag)}) for d in documents]
    shown = axis_passages(shown, sub_task.passages)  # a document read whole by another branch
    parts: dict[str, PartRead] = {}
    if budget is not None:
        shown, parts = read_documents(shown, reading_query(sub_task), budget)
    data = AnalystInput(
        subtask_id=sub_task.id,
        question=sub_task.question,
        documents=shown,
        max_findings=bounds.max_findings,
        max_words=bounds.max_item_words,
    )
    result = client.ask(ANALYST, data, subtask_id=sub_task.id)
    findings, alerts = restrict_citations(result.output, [d.id for d in documents], sub_task.id)
    kept, bounded = bound_findings(findings.findings, bounds, sub_task.id)
    findings, alerts = findings.model_copy(update={"findings": kept}), alerts + bounded
    alerts += missing_documents(sub_task, documents)
    alerts += foreign_answer_alerts("analyse", result, f"analyste de {sub_task.id}", sub_task.id)
    alerts += dropped_items_alerts("analyse", result, f"analyste de {sub_task.id}", sub_task.id)
    if budget is not None:
        alerts += reading_alert(sub_task.id, parts, budget)
    return branch_analysis(sub_task, findings, alerts, parts)


def missing_documents(sub_task: SubTask, documents: Sequence[DocumentText]) -> list[Alert]:
    """One alert naming the sub-task's documents the database no longer has (none: no alert)."""
    missing = [i for i in sub_task.doc_ids if i not in {d.id for d in documents}]
    if not missing:
        return []
    return [
        alert(
            "analyse",
            "analyse.missing_documents",
            f"{sub_task.id} : documents introuvables dans la base {missing}",
            severity="warning",
            subject=sub_task.id,
        )
    ]


def branch_analysis(
    sub_task: SubTask, findings: Findings, alerts: list[Alert], read: dict[str, PartRead] | None = None
) -> Analysis:
    """A successful branch's record: the sub-task, its findings, its alerts and what it read in part."""
    return Analysis(
        subtask_id=sub_task.id,
        question=sub_task.question,
        doc_ids=list(sub_task.doc_ids),
        flags=dict(sub_task.flags),
        findings=findings,
        alerts=alerts,
        read=dict(read or {}),
    )
