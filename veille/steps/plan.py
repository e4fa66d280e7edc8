"""The plan step (seed 001): the planner proposes, code decides what reaches the analysts.

:func:`validate_plan` (veille.steps.plan_validate) repairs what can be repaired (ids written with
another case or quotes, unknown ids, duplicates, caps, empty sub-tasks), alerts on each repair,
refuses an empty plan, renumbers sub-tasks ``st-1..st-n`` (a model repeating ``st-2`` would
otherwise overwrite a branch's findings) and gives every catalogue document it did not place a
reason (plan.json ``exclusions``). An unusable answer (blocked, empty, all excluded, no valid id) is
re-asked once with the validator's findings, then replaced by a plan code builds
(veille.steps.plan_fallback, alert ``plan.code_plan``): the night ends with a dossier unless the
corpus gives nothing to read (:class:`PlanUnusableError`).

:func:`make_plan` then makes coverage the code's job (issue 11): documents the planner left out that
concern the request are put back to it once with the validator's findings; those still left out are
placed by code in their closest sub-task (or recorded with reason ``cap``); flagged documents that
share nothing with the request are removed (reason ``injection``); a plan keeping less than half of
the documents naming a request term raises ``plan.low_coverage``. Repeated conditions are one alert
naming every document (``Alert.subjects``). See docs/pipeline.md, "Plan".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from pydantic import BaseModel, Field

from veille.alerts import Alert, alert
from veille.corpus.request_reading import RequestReading
from veille.models.base import SchemaValidationError
from veille.models.budget import BudgetExceededError
from veille.roles.base import Asker
from veille.roles.planner import (
    LINE_TOKEN_BUDGET,
    PLANNER,
    CatalogueEntry,
    Exclusion,
    ExclusionReason,
    Plan,
    PlannerInput,
    summary_budget,
)
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.catalogue import planner_tokens
from veille.steps.coverage import (
    Vocabulary,
    check_flagged,
    cover,
    drop_off_topic,
    mentions_term,
    needs_placement,
)
from veille.steps.plan_alerts import (
    LOW_COVERAGE,
    CoverageReport,
    coverage_report,
    left_out_alert,
    outcome_alerts,
)
from veille.steps.plan_fallback import by_code, propose
from veille.steps.plan_validate import (
    UNASSIGNED,
    PlanUnusableError,
    rebuild_plan,
    unassigned_alerts,
    validate_plan,
)
from veille.steps.text_relevance import TextRelevance

__all__ = [
    "CatalogueLike",
    "CoverageReport",
    "LeftOutLike",
    "PlanOutcome",
    "PlanUnusableError",
    "make_plan",
    "rebuild_plan",
    "suspicious_exclusions",
    "validate_plan",
]


class LeftOutLike(Protocol):
    """A document left out before planning (``veille.steps.catalogue.LeftOut``, or an Exclusion)."""

    @property
    def id(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def detail(self) -> str: ...


class CatalogueLike(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def summary(self) -> str | None: ...


def suspicious_exclusions(
    plan: Plan, catalogue: Mapping[str, CatalogueLike], terms: Iterable[str]
) -> list[str]:
    """Excluded documents whose title or summary mentions a request term (seed 001 exercise)."""
    terms = list(terms)
    out = []
    for doc_id in plan.excluded:
        entry = catalogue.get(doc_id)
        if entry is None:
            continue
        text = f"{entry.title} {entry.summary or ''}"
        if mentions_term(text, terms):
            out.append(doc_id)
    return out


class PlanOutcome(BaseModel):
    """The validated plan, the model's raw proposal (the one adopted), the alerts and the coverage."""

    plan: Plan
    proposed: Plan
    alerts: list[Alert] = Field(default_factory=list)
    coverage: CoverageReport = Field(default_factory=CoverageReport)
    # What the plan answers besides the catalogue (veille.steps.plan_reuse.planner_basis), recorded
    # in plan.json: a later night reuses this plan only for the same basis.
    basis: str = ""
    reading: RequestReading | None = None  # the request read once (veille.steps.request_read)


def _reasons(plan: Plan) -> dict[str, ExclusionReason]:
    return {e.id: e.reason for e in plan.exclusions}


def _questioned(
    plan: Plan, catalogue: Sequence[CatalogueEntry], vocabulary: Vocabulary, never: Collection[str]
) -> list[str]:
    """Documents out of ``plan`` that must be put back (:func:`veille.steps.coverage.needs_placement`),
    but ``never`` (flagged documents off the request's topic)."""
    reasons = _reasons(plan)
    return [
        e.id
        for e in catalogue
        if e.id in reasons and e.id not in never and needs_placement(reasons[e.id], vocabulary.relevance(e))
    ]


def _findings(
    plan: Plan,
    questioned: Sequence[str],
    catalogue: Mapping[str, CatalogueEntry],
    vocabulary: Vocabulary,
    max_docs: int,
) -> list[str]:
    """The validator's findings on ``plan``, in French, for the re-ask."""
    reasons = _reasons(plan)
    lines = [f"ta proposition : {st.id} « {st.question} » : {', '.join(st.doc_ids)}" for st in plan.sub_tasks]
    wording = {
        "cap": f"retiré par le plafond de {max_docs} documents (crée plutôt une sous-tâche de plus)",
        "planner_excluded": "écarté alors qu'il semble concerner la demande",
        "unassigned": "ni placé ni écarté alors qu'il semble concerner la demande",
    }
    for doc_id in questioned:
        entry = catalogue[doc_id]
        why = wording.get(reasons.get(doc_id, "unassigned"), "non placé")
        lines.append(f"{doc_id} « {entry.title} » : {why} ({vocabulary.relevance(entry).describe()})")
    return lines


def _reask(
    client: Asker,
    data: PlannerInput,
    plan: Plan,
    questioned: Sequence[str],
    vocabulary: Vocabulary,
    token_budget: int | None = None,
) -> tuple[Plan, Plan, list[Alert]] | None:
    """Ask the planner once more with the findings; ``None`` if its answer is unusable (the first
    plan is kept then). ``token_budget``: the re-ask's input stays within it (the questioned
    documents past it are not listed; code's coverage step places them as for any left-out one)."""
    catalogue = {e.id: e for e in data.catalogue}
    lines = _findings(plan, questioned, catalogue, vocabulary, data.max_docs)
    follow_up = data.model_copy(update={"findings": lines})
    if token_budget is not None:  # the re-ask within the planner's budget: code places the rest
        keep = len(lines) - len(questioned)  # the proposal's lines, then the questioned documents
        while len(lines) > keep + 1 and planner_tokens(follow_up) > token_budget:
            lines = lines[:-1]
            follow_up = data.model_copy(update={"findings": lines})
    try:
        answer = client.ask(PLANNER, follow_up)
        proposed = answer.output
        revised, alerts = validate_plan(
            proposed, [e.id for e in data.catalogue], max_subtasks=data.max_subtasks, max_docs=data.max_docs
        )
    except (PlanUnusableError, SchemaValidationError, BudgetExceededError):
        return None
    return revised, proposed, [*foreign_answer_alerts("plan", answer, "planificateur (relance)"), *alerts]


def _overruling(vocabulary: Vocabulary, plan: Plan, text: TextRelevance | None) -> Vocabulary:
    """``vocabulary`` whose read-worthy texts overrule the planner's exclusions when ``plan`` reads
    less than :data:`LOW_COVERAGE` of the documents whose text names a request term (a broken
    plan); otherwise each exclusion stands (a homonym shares the request's words by design)."""
    naming = text.naming() if text else []
    if not naming:
        return vocabulary
    used = {i for st in plan.sub_tasks for i in st.doc_ids}
    if sum(1 for i in naming if i in used) >= LOW_COVERAGE * len(naming):
        return vocabulary
    return replace(vocabulary, overrule=True, _cache={})


def _first_answer(alert: Alert) -> Alert:
    return alert.model_copy(update={"message": f"{alert.message} (première réponse, avant la relance)"})


def _settle(
    data: PlannerInput,
    plan: Plan,
    vocabulary: Vocabulary,
    flagged: Mapping[str, str],
    never: Collection[str],
    left_out: Sequence[Exclusion],
) -> tuple[Plan, dict[str, list[str]]]:
    """Code's part after the planner's last word: placement, the flagged-document check, reasons.
    Returns the final plan and what was done (off-topic removed, placed by code, injection-excluded,
    flagged kept)."""
    sub_tasks, reasons, off_topic = drop_off_topic(plan.sub_tasks, _reasons(plan), data.catalogue, vocabulary)
    sub_tasks, reasons, placed = cover(
        sub_tasks,
        reasons,
        data.catalogue,
        vocabulary,
        max_subtasks=data.max_subtasks,
        max_docs=data.max_docs,
        never=never,
    )
    sub_tasks, reasons, removed, kept = check_flagged(sub_tasks, reasons, data.catalogue, flagged, vocabulary)
    if not any(st.doc_ids for st in sub_tasks):
        raise PlanUnusableError(
            "plan inutilisable : plus aucune sous-tâche après l'exclusion des documents signalés comme injection"
        )
    details = {e.id: vocabulary.relevance(e).describe() for e in data.catalogue if e.id in reasons}
    final = rebuild_plan(sub_tasks, [e.id for e in data.catalogue], reasons, details, left_out)
    return final, {
        "off_topic_removed": off_topic,
        "placed_by_code": placed,
        "injection_excluded": removed,
        "flagged_kept": kept,
    }


def _summaries_alert(data: PlannerInput) -> list[Alert]:
    if data.with_summaries and any(e.summary for e in data.catalogue) and summary_budget(data) is None:
        message = (
            "résumés non montrés au planificateur : le catalogue seul atteint le budget de "
            f"{LINE_TOKEN_BUDGET} tokens par ligne"
        )
        return [alert("plan", "plan.summaries_omitted", message, severity="info")]
    return []


def make_plan(
    client: Asker,
    data: PlannerInput,
    *,
    left_out: Sequence[LeftOutLike] = (),
    flagged: Mapping[str, str] | None = None,
    reask: bool = True,
    previous: Plan | None = None,
    reused_note: str = "",
    token_budget: int | None = None,
    text: TextRelevance | None = None,
) -> PlanOutcome:
    """Ask the planner (catalogue only), validate, then make coverage the code's job.

    ``left_out``: documents left out of ``data.catalogue`` before planning, with their reason
    (shortlist, duplicates), recorded in the plan's exclusions. ``flagged``: documents the screen
    flagged (id -> label). ``reask``: put the left-out documents that concern the request back to the
    planner once, within ``token_budget`` tokens of input. ``previous``: last night's plan (veille.steps.plan_reuse), validated and covered
    like a planner's answer without asking it. ``text``: the documents' text measured against the
    request (veille.steps.text_relevance): code removes the off-topic ones the plan reads and puts
    back the relevant ones it left out. Raises :class:`PlanUnusableError` when nothing
    usable is left.
    """
    left = [Exclusion.model_validate({"id": o.id, "reason": o.reason, "detail": o.detail}) for o in left_out]
    vocabulary = Vocabulary.of(data.request_title, data.request, data.terms, text)
    flagged = flagged or {}
    # Flagged and off the request's topic: excluded by code whatever the planner says, never put back.
    never = {
        e.id for e in data.catalogue if e.id in flagged and not vocabulary.relevance(e).shares_vocabulary
    }
    first = propose(client, data, previous=previous, reask=reask, never=never)
    plan, proposed, alerts = first.plan, first.proposed, list(first.alerts)
    vocabulary = _overruling(vocabulary, plan, text)
    # A reused plan is code's (the planner is not asked at all); one re-ask per night at most.
    reask = reask and previous is None and not first.reasked and not first.by_code
    questioned = _questioned(plan, data.catalogue, vocabulary, never)
    reasked = bool(questioned and reask)
    if reasked:
        revised = _reask(client, data, plan, questioned, vocabulary, token_budget)
        if revised is not None:  # the first answer's repairs stay on record (hallucinated ids…)
            plan, proposed = revised[0], revised[1]
            alerts = [_first_answer(a) for a in alerts] + revised[2]
    placed_by_planner = [i for i in questioned if i not in plan.excluded]
    questioned += [i for i in _questioned(plan, data.catalogue, vocabulary, never) if i not in questioned]
    try:
        plan, done = _settle(data, plan, vocabulary, flagged, never, left)
    except PlanUnusableError:  # nothing left once flagged documents are out: code plans
        if first.by_code:
            raise
        first = by_code(
            data, ["plus aucune sous-tâche après l'exclusion des documents signalés"], never, reasked=reasked
        )
        alerts += first.alerts
        # The code plan (its own error alert) placed these: no longer questions about the planner's.
        placed = {d for st in first.plan.sub_tasks for d in st.doc_ids}
        questioned = [i for i in questioned if i not in placed]
        placed_by_planner = [i for i in placed_by_planner if i not in placed]
        plan, done = _settle(data, first.plan, vocabulary, flagged, never, left)
    report = coverage_report(
        plan,
        data.catalogue,
        vocabulary,
        questioned=questioned,
        reasked=reasked,
        placed_by_planner=placed_by_planner,
        **done,
    )
    # The planner's answer left some documents unassigned; code then placed or excluded some: the
    # alert names those still unassigned in the final plan (doc-38, excluded as injection, was twice).
    alerts = [a for a in alerts if a.code != UNASSIGNED] + unassigned_alerts(plan)
    alerts += outcome_alerts(plan, report, data.catalogue, vocabulary)
    alerts += [left_out_alert(left)] if left else []
    alerts += _summaries_alert(data)
    if previous is not None:
        alerts.append(
            alert("plan", "plan.reused", reused_note or "plan du dossier précédent repris", severity="info")
        )
    return PlanOutcome(plan=plan, proposed=proposed, alerts=alerts, coverage=report)
