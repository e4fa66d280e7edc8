"""Planning and analysis steps over a model client: planner call + validation, one analyst per sub-task.

These functions take a client (anything with the model layer's ``call``) and plain data, so tests
drive them with a scripted model; the Prefect tasks in ``tasks/`` are thin wrappers around them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.citations import SourceRegistry
from veille.models.base import ModelResult
from veille.plan import suspicious_exclusions, validate_plan
from veille.roles import analyst as analyst_role
from veille.roles import planner as planner_role
from veille.roles.analyst import AnalystInput, DocumentText, Findings
from veille.roles.planner import CatalogueEntry, Plan, PlannerInput, SubTask
from veille.roles.writer import NumberedFinding, SourceRef, WriterInput

__all__ = [
    "Analysis",
    "ModelClientLike",
    "PlanOutcome",
    "analyse_subtask",
    "failed_analysis",
    "make_plan",
    "number_findings",
    "restrict_citations",
]

T = TypeVar("T", bound=BaseModel)


class ModelClientLike(Protocol):
    """The model layer's client, as this module uses it."""

    def call(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        *,
        payload: BaseModel | Mapping[str, Any] | None = None,
        subtask_id: str | None = None,
    ) -> ModelResult[T]: ...


class PlanOutcome(BaseModel):
    """The validated plan, the model's raw proposal and the alerts of validation."""

    plan: Plan
    proposed: Plan
    alerts: list[Alert] = Field(default_factory=list)


def make_plan(client: ModelClientLike, data: PlannerInput) -> PlanOutcome:
    """Ask the planner (catalogue only), validate, flag suspicious exclusions.

    Raises :class:`veille.plan.PlanUnusableError` when nothing usable is left.
    """
    result = client.call(
        "planner",
        planner_role.INSTRUCTIONS,
        planner_role.build_prompt(data),
        Plan,
        payload=data,
    )
    proposed = result.output
    plan, alerts = validate_plan(
        proposed,
        [e.id for e in data.catalogue],
        max_subtasks=data.max_subtasks,
        max_docs=data.max_docs,
    )
    catalogue = {e.id: e for e in data.catalogue}
    for doc_id in suspicious_exclusions(plan, catalogue, data.terms):
        entry = catalogue[doc_id]
        alerts.append(
            Alert(
                code="plan.suspicious_exclusion",
                severity="warning",
                stage="plan",
                message=f"{doc_id} écarté alors que son titre ou son résumé cite un terme de la demande : "
                f"« {entry.title} »",
                subject=doc_id,
            )
        )
    if (
        data.with_summaries
        and any(e.summary for e in data.catalogue)
        and planner_role.summary_budget(data) is None
    ):
        alerts.append(
            Alert(
                code="plan.summaries_omitted",
                severity="info",
                stage="plan",
                message=f"résumés non montrés au planificateur : le catalogue seul atteint le budget de "
                f"{planner_role.LINE_TOKEN_BUDGET} tokens par ligne",
            )
        )
    return PlanOutcome(plan=plan, proposed=proposed, alerts=alerts)


class Analysis(BaseModel):
    """One branch's result (findings.json entry). ``status`` is ``failed`` when the branch raised."""

    subtask_id: str
    question: str
    doc_ids: list[str]
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    findings: Findings = Field(default_factory=lambda: Findings(findings=[]))
    alerts: list[Alert] = Field(default_factory=list)


def failed_analysis(sub_task: SubTask, error: BaseException) -> Analysis:
    """The record of a branch that failed after its retries (no secrets: type and message only)."""
    return Analysis(
        subtask_id=sub_task.id,
        question=sub_task.question,
        doc_ids=list(sub_task.doc_ids),
        status="failed",
        error=f"{type(error).__name__}: {error}"[:500],
        alerts=[
            Alert(
                code="analyse.branch_failed",
                severity="error",
                stage="analyse",
                message=f"{sub_task.id} en échec ({type(error).__name__}) : axe absent du rapport — "
                f"{sub_task.question}",
                subject=sub_task.id,
            )
        ],
    )


def restrict_citations(
    findings: Findings, allowed: Sequence[str], subtask_id: str
) -> tuple[Findings, list[Alert]]:
    """Remove citations of documents outside the sub-task's set (the analyst saw only those)."""
    allowed_set = set(allowed)
    foreign: list[str] = []
    kept = []
    for finding in findings.findings:
        ids = list(dict.fromkeys(finding.doc_ids))
        foreign += [i for i in ids if i not in allowed_set]
        ids = [i for i in ids if i in allowed_set]
        if ids:
            kept.append(finding.model_copy(update={"doc_ids": ids}))
    contradictions = []
    for note in findings.contradictions:
        ids = list(dict.fromkeys(note.doc_ids))
        foreign += [i for i in ids if i not in allowed_set]
        if note.retained not in allowed_set:
            foreign.append(note.retained)
        ids = [i for i in ids if i in allowed_set]
        if len(ids) >= 2 and note.retained in allowed_set:
            contradictions.append(note.model_copy(update={"doc_ids": ids}))
    alerts = []
    foreign = list(dict.fromkeys(foreign))
    if foreign:
        dropped = len(findings.findings) - len(kept)
        alerts.append(
            Alert(
                code="analyse.foreign_citation",
                severity="warning",
                stage="analyse",
                message=f"{subtask_id} : citations hors périmètre retirées {foreign}"
                + (f" ; {dropped} constat(s) sans source restante supprimé(s)" if dropped else ""),
                subject=subtask_id,
            )
        )
    cleaned = Findings(findings=kept, contradictions=contradictions, open_questions=findings.open_questions)
    return cleaned, alerts


def analyse_subtask(
    client: ModelClientLike, sub_task: SubTask, documents: Sequence[DocumentText]
) -> Analysis:
    """One analyst: the autonomous question and the full text of its documents, nothing else."""
    data = AnalystInput(subtask_id=sub_task.id, question=sub_task.question, documents=list(documents))
    result = client.call(
        "analyst",
        analyst_role.INSTRUCTIONS,
        analyst_role.build_prompt(data),
        Findings,
        payload=data,
        subtask_id=sub_task.id,
    )
    findings, alerts = restrict_citations(result.output, [d.id for d in documents], sub_task.id)
    missing = [i for i in sub_task.doc_ids if i not in {d.id for d in documents}]
    if missing:
        alerts.append(
            Alert(
                code="analyse.missing_documents",
                severity="warning",
                stage="analyse",
                message=f"{sub_task.id} : documents introuvables dans la base {missing}",
                subject=sub_task.id,
            )
        )
    return Analysis(
        subtask_id=sub_task.id,
        question=sub_task.question,
        doc_ids=list(sub_task.doc_ids),
        findings=findings,
        alerts=alerts,
    )


def number_findings(
    analyses: Sequence[Analysis],
    catalogue: Mapping[str, CatalogueEntry] | Mapping[str, Any],
    *,
    request_title: str,
    request: str,
    mandatory_mentions: Sequence[str] = (),
    min_words: int = 0,
    max_words: int = 10_000,
    max_sentence_words: int = 25,
) -> tuple[WriterInput, list[SourceRef]]:
    """Writer input with source numbers in order of first citation, stable across branches.

    Branches are read in sub-task order; a document cited by two branches keeps its first number.
    The writer sees numbers only; ids and titles stay in the returned sources.
    """
    registry = SourceRegistry(catalogue)
    numbered: list[NumberedFinding] = []
    contradictions: list[str] = []
    open_questions: list[str] = []
    ok = [a for a in analyses if a.status == "ok"]
    for analysis in ok:
        for f in analysis.findings.findings:
            ids = [i for i in f.doc_ids if i in catalogue]
            if not ids:
                continue
            numbered.append(
                NumberedFinding(
                    subtask_id=analysis.subtask_id, statement=f.statement, sources=registry.numbers(ids)
                )
            )
    for analysis in ok:
        for note in analysis.findings.contradictions:
            ids = [i for i in note.doc_ids if i in catalogue]
            if len(ids) < 2 or note.retained not in catalogue:
                continue
            cited = "".join(f"[{n}]" for n in registry.numbers(ids))
            kept = registry.number(note.retained)
            contradictions.append(
                f"Les sources {cited} divergent ; source retenue : [{kept}] ({note.reason})."
            )
        open_questions += analysis.findings.open_questions
    sources = registry.sources()
    data = WriterInput(
        request_title=request_title,
        request=request,
        questions={a.subtask_id: a.question for a in analyses},
        findings=numbered,
        contradictions=contradictions,
        open_questions=list(dict.fromkeys(open_questions)),
        missing_axes=[a.question for a in analyses if a.status == "failed"],
        sources=sources,
        mandatory_mentions=list(mandatory_mentions),
        min_words=min_words,
        max_words=max_words,
        max_sentence_words=max_sentence_words,
    )
    return data, sources
