"""The plan step (seed 001): the planner proposes, code decides what reaches the analysts.

:func:`validate_plan` repairs what can be repaired (unknown ids, duplicates, caps, empty sub-tasks),
alerts on each repair, refuses an empty plan with :class:`PlanUnusableError`, renumbers sub-tasks
``st-1..st-n`` (a model repeating ``st-2`` would otherwise overwrite a branch's findings) and gives
every catalogue document it did not place a reason (plan.json ``exclusions``).

:func:`make_plan` then makes coverage the code's job (issue 11): documents the planner left out that
concern the request are put back to it once with the validator's findings; those still left out are
placed by code in their closest sub-task (or recorded with reason ``cap``); flagged documents that
share nothing with the request are removed (reason ``injection``); a plan keeping less than half of
the documents naming a request term raises ``plan.low_coverage``. Repeated conditions are one alert
naming every document (``Alert.subjects``). See docs/pipeline.md, "Plan".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from veille.alerts import Alert, Severity, alert
from veille.models.base import SchemaValidationError
from veille.roles.base import Asker
from veille.roles.planner import (
    LINE_TOKEN_BUDGET,
    PLANNER,
    CatalogueEntry,
    Exclusion,
    ExclusionReason,
    Plan,
    PlannerInput,
    SubTask,
    summary_budget,
)
from veille.steps.catalogue import planner_tokens
from veille.steps.coverage import Vocabulary, check_flagged, cover, mentions_term, needs_placement
from veille.steps.plan_alerts import CoverageReport, coverage_report, left_out_alert, outcome_alerts

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


class PlanUnusableError(ValueError):
    """No sub-task with valid sources is left: the run cannot go on (not retryable)."""

    retryable = False
    expected_failure = True  # logged as one line, without a traceback (veille/ops/logfilter.py)


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


def _alert(code: str, message: str, subject: str | None = None, severity: Severity = "warning") -> Alert:
    return alert("plan", code, message, severity=severity, subject=subject)


def _ordered(known_ids: Collection[str]) -> list[str]:
    # Catalogue order when given a sequence; sorted otherwise (a set has no order to keep).
    return list(dict.fromkeys(known_ids)) if isinstance(known_ids, Sequence) else sorted(known_ids)


def _repair_sub_task(
    st: SubTask, known: set[str], max_docs: int
) -> tuple[SubTask | None, list[str], list[Alert]]:
    """One proposed sub-task repaired: (kept sub-task or None, ids cut by the cap, alerts)."""
    label = st.id or "?"
    alerts: list[Alert] = []
    unknown = list(dict.fromkeys(i for i in st.doc_ids if i not in known))
    if unknown:
        alerts.append(_alert("plan.unknown_ids", f"{label} : identifiants inconnus retirés {unknown}", label))
    ids = list(dict.fromkeys(i for i in st.doc_ids if i in known))  # de-dup, order kept
    cut: list[str] = []
    if len(ids) > max_docs:
        alerts.append(
            _alert(
                "plan.truncated_docs",
                f"{label} : périmètre tronqué de {len(ids)} à {max_docs} documents, "
                f"retirés {ids[max_docs:]} (préférer une sous-tâche de plus)",
                label,
            )
        )
        ids, cut = ids[:max_docs], ids[max_docs:]
    if not st.question.strip():
        alerts.append(_alert("plan.empty_subtask", f"{label} : question vide, sous-tâche supprimée", label))
        return None, cut + ids, alerts
    if not ids:
        alerts.append(
            _alert("plan.empty_subtask", f"{label} : aucune source valide, sous-tâche supprimée", label)
        )
        return None, cut, alerts
    return SubTask(id=label, question=st.question.strip(), doc_ids=ids), cut, alerts


def validate_plan(
    plan: Plan, known_ids: Collection[str], *, max_subtasks: int, max_docs: int
) -> tuple[Plan, list[Alert]]:
    """Repair ``plan`` against the catalogue; return the valid plan and one alert per repair.

    ``excluded`` of the result lists every catalogue document used by no sub-task, and
    ``exclusions`` gives each its reason: ``cap`` (proposed in a sub-task, cut by a cap),
    ``planner_excluded`` (in the model's ``excluded``) or ``unassigned`` (neither).
    """
    known = set(known_ids)
    alerts: list[Alert] = []
    kept: list[SubTask] = []
    truncated: list[str] = []
    for st in plan.sub_tasks:
        repaired, cut, repair_alerts = _repair_sub_task(st, known, max_docs)
        alerts += repair_alerts
        truncated += cut
        if repaired is not None:
            kept.append(repaired)
    if len(kept) > max_subtasks:
        alerts.append(
            _alert("plan.truncated_subtasks", f"plan tronqué de {len(kept)} à {max_subtasks} sous-tâches")
        )
        truncated += [i for st in kept[max_subtasks:] for i in st.doc_ids]
        kept = kept[:max_subtasks]
    if not kept:
        raise PlanUnusableError(
            "plan inutilisable : aucune sous-tâche avec des sources valides "
            f"({len(plan.sub_tasks)} sous-tâche(s) proposée(s) par le planificateur)"
        )
    used = {i for st in kept for i in st.doc_ids}
    dropped = [i for i in dict.fromkeys(truncated) if i not in used]
    if dropped:
        alerts.append(
            _alert(
                "plan.dropped_documents",
                f"documents retirés par les plafonds ({max_docs} documents, {max_subtasks} sous-tâches) "
                f"et lus par aucune sous-tâche : {dropped}",
            )
        )
    reasons: dict[str, ExclusionReason] = dict.fromkeys(dropped, "cap")
    for doc_id in plan.excluded:
        if doc_id in known and doc_id not in used:
            reasons.setdefault(doc_id, "planner_excluded")
    unassigned = [i for i in _ordered(known_ids) if i not in used and i not in reasons]
    if unassigned:
        alerts.append(
            _alert(
                "plan.unassigned_documents",
                f"documents ni attribués ni écartés par le planificateur, considérés écartés : {unassigned}",
                severity="info",
            )
        )
    reasons.update(dict.fromkeys(unassigned, "unassigned"))
    return rebuild_plan(kept, _ordered(known_ids), reasons), alerts


def rebuild_plan(
    sub_tasks: Sequence[SubTask],
    known_ids: Sequence[str],
    reasons: Mapping[str, ExclusionReason],
    details: Mapping[str, str] | None = None,
    extra: Sequence[Exclusion] = (),
) -> Plan:
    """Sub-tasks with documents renumbered ``st-1..st-n``; every known id in no sub-task excluded,
    in catalogue order, with its reason (``unassigned`` if none given); ``extra`` appended."""
    kept = [st for st in sub_tasks if st.doc_ids]
    renumbered = [st.model_copy(update={"id": f"st-{i}"}) for i, st in enumerate(kept, 1)]
    used = {i for st in renumbered for i in st.doc_ids}
    details = details or {}
    exclusions = [
        Exclusion(id=i, reason=reasons.get(i, "unassigned"), detail=details.get(i, ""))
        for i in known_ids
        if i not in used
    ]
    shown = set(known_ids)
    exclusions += [e for e in extra if e.id not in shown and e.id not in used]
    return Plan(sub_tasks=renumbered, excluded=[e.id for e in exclusions], exclusions=exclusions)


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
        proposed = client.ask(PLANNER, follow_up).output
        revised, alerts = validate_plan(
            proposed, [e.id for e in data.catalogue], max_subtasks=data.max_subtasks, max_docs=data.max_docs
        )
    except (PlanUnusableError, SchemaValidationError):
        return None
    return revised, proposed, alerts


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
    Returns the final plan and what was done (placed by code, injection-excluded, flagged kept)."""
    sub_tasks, reasons, placed = cover(
        plan.sub_tasks,
        _reasons(plan),
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
    return final, {"placed_by_code": placed, "injection_excluded": removed, "flagged_kept": kept}


def _summaries_alert(data: PlannerInput) -> list[Alert]:
    if data.with_summaries and any(e.summary for e in data.catalogue) and summary_budget(data) is None:
        message = (
            "résumés non montrés au planificateur : le catalogue seul atteint le budget de "
            f"{LINE_TOKEN_BUDGET} tokens par ligne"
        )
        return [_alert("plan.summaries_omitted", message, severity="info")]
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
) -> PlanOutcome:
    """Ask the planner (catalogue only), validate, then make coverage the code's job.

    ``left_out``: documents left out of ``data.catalogue`` before planning, with their reason
    (shortlist, duplicates), recorded in the plan's exclusions. ``flagged``: documents the screen
    flagged (id -> label). ``reask``: put the left-out documents that concern the request back to the
    planner once, within ``token_budget`` tokens of input. ``previous``: last night's plan (veille.steps.plan_reuse), validated and covered
    like a planner's answer without asking it. Raises :class:`PlanUnusableError` when nothing
    usable is left.
    """
    known = [e.id for e in data.catalogue]
    left = [Exclusion.model_validate({"id": o.id, "reason": o.reason, "detail": o.detail}) for o in left_out]
    vocabulary = Vocabulary.of(data.request_title, data.request, data.terms)
    proposed = previous if previous is not None else client.ask(PLANNER, data).output
    reask = reask and previous is None  # a reused plan is code's: the planner is not asked at all
    plan, alerts = validate_plan(proposed, known, max_subtasks=data.max_subtasks, max_docs=data.max_docs)
    flagged = flagged or {}
    # Flagged and off the request's topic: excluded by code whatever the planner says, never put back.
    never = {
        e.id for e in data.catalogue if e.id in flagged and not vocabulary.relevance(e).shares_vocabulary
    }
    questioned = _questioned(plan, data.catalogue, vocabulary, never)
    reasked = bool(questioned and reask)
    if reasked:
        revised = _reask(client, data, plan, questioned, vocabulary, token_budget)
        if revised is not None:  # the first answer's repairs stay on record (hallucinated ids…)
            plan, proposed = revised[0], revised[1]
            alerts = [_first_answer(a) for a in alerts] + revised[2]
    placed_by_planner = [i for i in questioned if i not in plan.excluded]
    questioned += [i for i in _questioned(plan, data.catalogue, vocabulary, never) if i not in questioned]
    plan, done = _settle(data, plan, vocabulary, flagged, never, left)
    report = coverage_report(
        plan,
        data.catalogue,
        vocabulary,
        questioned=questioned,
        reasked=reasked,
        placed_by_planner=placed_by_planner,
        **done,
    )
    alerts += outcome_alerts(plan, report, data.catalogue, vocabulary)
    alerts += [left_out_alert(left)] if left else []
    alerts += _summaries_alert(data)
    if previous is not None:
        alerts.append(
            _alert("plan.reused", reused_note or "plan du dossier précédent repris", severity="info")
        )
    return PlanOutcome(plan=plan, proposed=proposed, alerts=alerts, coverage=report)
