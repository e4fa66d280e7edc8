"""A plan built by code when the planner gave none usable (issue 23): the request's axes × the
documents' relevance, so a night ends with a dossier unless the corpus itself is unusable.

- ids the model wrote with another case, spaces or quotes (``DOC-03``, `` "doc-03" ``) are mapped
  back to the catalogue's when exactly one id matches (:func:`repair_ids`);
- :func:`code_plan`: one sub-task per axis the request states (``veille.offline.axes.parse_axes``,
  generic wording rules), or one over the whole request when it states none; the documents that
  share the request's vocabulary (``veille.steps.coverage.Vocabulary``), best first by BM25
  (``veille.steps.catalogue.rank_entries``), each placed in its closest axis within the caps
  (``veille.steps.coverage.place_documents``). A corpus where no document shares a word with the
  request (or only flagged ones) is unusable: no plan is invented from unrelated documents.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from veille.alerts import Alert, alert
from veille.models.attempts import BlockedPromptError
from veille.models.base import ModelError, SchemaValidationError
from veille.models.budget import BudgetExceededError
from veille.offline.axes import parse_axes
from veille.roles.base import Asker
from veille.roles.planner import PLANNER, Plan, PlannerInput, SubTask
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.catalogue import rank_entries
from veille.steps.coverage import Vocabulary, place_documents
from veille.steps.plan_validate import PlanUnusableError, validate_plan

__all__ = ["CODE_PLAN", "Proposal", "by_code", "code_plan", "propose"]

CODE_PLAN = "plan.code_plan"  # the alert heading the summary when code built the plan
_MAX_FINDINGS_CHARS = 400


def _questions(data: PlannerInput) -> list[str]:
    title = " ".join(data.request_title.split()).rstrip(" ?.")
    labels = [a.label for a in parse_axes(data.request, data.terms) if a.label.strip()]
    if not labels:
        return [f"Que disent les documents pour répondre à la demande « {title} » ?"]
    limit = max(1, data.max_subtasks)
    if len(labels) > limit:  # the last sub-task carries the axes beyond the cap
        labels = [*labels[: limit - 1], ", ".join(labels[limit - 1 :])]
    return [f"{title} : que disent les documents sur « {label} » ?" for label in labels]


def code_plan(data: PlannerInput, never: Collection[str] = ()) -> Plan:
    """The plan code builds from ``data`` alone (no sub-task when no document but ``never`` shares
    the request's vocabulary). Documents beyond the caps are left out (the validation that
    follows gives them their reason)."""
    vocabulary = Vocabulary.of(data.request_title, data.request, data.terms)
    ranked = [e for e in rank_entries(data, data.catalogue) if e.id not in never]
    chosen = [e.id for e in ranked if vocabulary.relevance(e).shares_vocabulary]
    axes = [SubTask(id=f"st-{i}", question=q, doc_ids=[]) for i, q in enumerate(_questions(data), 1)]
    placement = place_documents(
        axes, chosen, data.catalogue, max_subtasks=data.max_subtasks, max_docs=max(1, data.max_docs)
    )
    sub_tasks = [st for st in placement.sub_tasks if st.doc_ids]
    return Plan(sub_tasks=sub_tasks, excluded=[])


@dataclass
class Proposal:
    """A validated plan, the proposal it came from, the validation's alerts, and how it was got."""

    plan: Plan
    proposed: Plan
    alerts: list[Alert]
    reasked: bool = False  # the first answer was unusable: the planner was asked once more
    by_code: bool = False  # built by :func:`code_plan`


_BUDGET = "budget de coût de la nuit atteint (max_cost_usd) : planificateur non appelé"


def _failure(exc: ModelError) -> str:
    if isinstance(exc, BudgetExceededError):
        return _BUDGET
    if isinstance(exc, BlockedPromptError):
        return f"ta réponse a été bloquée par le fournisseur ({exc.reason})"
    return f"ta réponse était inutilisable ({type(exc).__name__})"


def _attempt(client: Asker, data: PlannerInput, previous: Plan | None) -> Proposal | list[str]:
    """A validated proposal, or the findings that say why there is none (for the re-ask)."""
    language: list[Alert] = []
    try:
        if previous is not None:
            proposed = previous
        else:
            answer = client.ask(PLANNER, data)
            proposed, language = answer.output, foreign_answer_alerts("plan", answer, "planificateur")
    except (BlockedPromptError, SchemaValidationError, BudgetExceededError) as exc:
        return [_failure(exc)]  # blocked, cut, outside the schema, or the night's budget spent
    # Any other model error (quota, provider down, rejected key) is not about the answer: code's plan
    # would only send the analysts to the same dead end, so the night stops naming the cause.
    known = [e.id for e in data.catalogue]
    try:
        plan, alerts = validate_plan(proposed, known, max_subtasks=data.max_subtasks, max_docs=data.max_docs)
    except PlanUnusableError as exc:
        return [str(exc), *(a.message for a in exc.alerts)]
    return Proposal(plan=plan, proposed=proposed, alerts=[*language, *alerts])


def by_code(data: PlannerInput, findings: list[str], never: Collection[str], *, reasked: bool) -> Proposal:
    """:func:`code_plan` validated, with the error alert naming why the planner's was not used.
    Raises :class:`PlanUnusableError` when the corpus itself gives nothing to read."""
    plan = code_plan(data, never)
    if not plan.sub_tasks:
        raise PlanUnusableError(
            "plan inutilisable : aucun document du corpus ne partage le vocabulaire de la demande "
            "(hors documents signalés comme injection)"
        )
    known = [e.id for e in data.catalogue]
    valid, alerts = validate_plan(plan, known, max_subtasks=data.max_subtasks, max_docs=data.max_docs)
    why = " ; ".join(findings)
    why = why if len(why) <= _MAX_FINDINGS_CHARS else why[:_MAX_FINDINGS_CHARS].rsplit(" ", 1)[0] + "…"
    message = (
        "plan construit par le code (axes de la demande × pertinence des documents) : pas de plan "
        f"utilisable du planificateur{' après une relance' if reasked else ''} ({why})"
    )
    head = alert("plan", CODE_PLAN, message, severity="error")
    return Proposal(plan=valid, proposed=plan, alerts=[head, *alerts], reasked=reasked, by_code=True)


def propose(
    client: Asker, data: PlannerInput, *, previous: Plan | None, reask: bool, never: Collection[str]
) -> Proposal:
    """The planner's plan (or ``previous``) validated; an unusable one is re-asked once with the
    validator's findings (when ``reask``), then replaced by :func:`by_code`."""
    first = _attempt(client, data, previous)
    if isinstance(first, Proposal):
        return first
    findings = first
    asked = reask and previous is None and _BUDGET not in findings  # a spent budget refuses it too
    if asked:
        second = _attempt(client, data.model_copy(update={"findings": findings}), None)
        if isinstance(second, Proposal):
            note = f"première réponse du planificateur inutilisable, relancé une fois : {findings[0]}"
            second.alerts.insert(0, alert("plan", "plan.reasked_unusable", note, severity="warning"))
            second.reasked = True
            return second
        findings = [*findings, *second]
    return by_code(data, findings, never, reasked=asked)
