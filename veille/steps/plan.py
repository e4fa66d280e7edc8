"""The plan step (seed 001): the planner proposes, code decides what reaches the analysts.

Repairs what can be repaired (unknown ids, duplicates, caps, empty sub-tasks), alerts on each
repair, refuses an empty plan with :class:`PlanUnusableError`, and renumbers sub-tasks
``st-1..st-n`` (a model repeating ``st-2`` would otherwise overwrite a branch's findings).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from typing import Protocol

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.roles.base import Asker
from veille.roles.planner import LINE_TOKEN_BUDGET, PLANNER, Plan, PlannerInput, SubTask, summary_budget

__all__ = [
    "CatalogueLike",
    "PlanOutcome",
    "PlanUnusableError",
    "make_plan",
    "mentions_term",
    "suspicious_exclusions",
    "validate_plan",
]


class PlanUnusableError(ValueError):
    """No sub-task with valid sources is left: the run cannot go on (not retryable)."""

    retryable = False
    expected_failure = True  # logged as one line, without a traceback (veille/ops/logfilter.py)


class CatalogueLike(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def summary(self) -> str | None: ...


def _alert(code: str, message: str, subject: str | None = None, severity: str = "warning") -> Alert:
    return Alert(code=code, severity=severity, stage="plan", message=message, subject=subject)  # type: ignore[arg-type]


def validate_plan(
    plan: Plan, known_ids: Collection[str], *, max_subtasks: int, max_docs: int
) -> tuple[Plan, list[Alert]]:
    """Repair ``plan`` against the catalogue; return the valid plan and one alert per repair.

    ``excluded`` of the result lists every catalogue document used by no sub-task (the model's
    exclusions plus anything it left unassigned or the caps dropped), so the list of excluded
    documents is a complete quality signal.
    """
    known = set(known_ids)
    alerts: list[Alert] = []
    kept: list[SubTask] = []
    truncated: list[str] = []
    for st in plan.sub_tasks:
        label = st.id or "?"
        unknown = list(dict.fromkeys(i for i in st.doc_ids if i not in known))
        if unknown:
            alerts.append(
                _alert("plan.unknown_ids", f"{label} : identifiants inconnus retirés {unknown}", label)
            )
        ids = list(dict.fromkeys(i for i in st.doc_ids if i in known))  # de-dup, order kept
        if len(ids) > max_docs:
            alerts.append(
                _alert(
                    "plan.truncated_docs",
                    f"{label} : périmètre tronqué de {len(ids)} à {max_docs} documents, "
                    f"retirés {ids[max_docs:]} (préférer une sous-tâche de plus)",
                    label,
                )
            )
            truncated.extend(ids[max_docs:])
            ids = ids[:max_docs]
        if not st.question.strip():
            alerts.append(
                _alert("plan.empty_subtask", f"{label} : question vide, sous-tâche supprimée", label)
            )
        elif ids:
            kept.append(SubTask(id=label, question=st.question.strip(), doc_ids=ids))
        else:
            alerts.append(
                _alert("plan.empty_subtask", f"{label} : aucune source valide, sous-tâche supprimée", label)
            )
    if len(kept) > max_subtasks:
        alerts.append(
            _alert(
                "plan.truncated_subtasks",
                f"plan tronqué de {len(kept)} à {max_subtasks} sous-tâches",
            )
        )
        kept = kept[:max_subtasks]
    if not kept:
        raise PlanUnusableError(
            "plan inutilisable : aucune sous-tâche avec des sources valides "
            f"({len(plan.sub_tasks)} sous-tâche(s) proposée(s) par le planificateur)"
        )
    renumbered = [st.model_copy(update={"id": f"st-{i}"}) for i, st in enumerate(kept, 1)]

    used = {i for st in renumbered for i in st.doc_ids}
    dropped = [i for i in dict.fromkeys(truncated) if i not in used]
    if dropped:
        alerts.append(
            _alert(
                "plan.dropped_documents",
                f"documents retirés par le plafond de {max_docs} et lus par aucune sous-tâche : {dropped}",
            )
        )
    model_excluded = list(dict.fromkeys(i for i in plan.excluded if i in known and i not in used))
    unassigned = [i for i in sorted(known) if i not in used and i not in model_excluded and i not in dropped]
    if unassigned:
        alerts.append(
            _alert(
                "plan.unassigned_documents",
                f"documents ni attribués ni écartés par le planificateur, considérés écartés : {unassigned}",
                severity="info",
            )
        )
    excluded = [*model_excluded, *dropped, *unassigned]
    return Plan(sub_tasks=renumbered, excluded=excluded), alerts


def _fold(text: str) -> str:
    # Case- and accent-insensitive comparison ("Orvet" matches "ORVET", "sécurité" matches "securite").
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def mentions_term(text: str, terms: Iterable[str]) -> list[str]:
    """The terms that ``text`` mentions as whole words (case- and accent-insensitive)."""
    folded = _fold(text)
    return [t for t in terms if t.strip() and re.search(rf"(?<!\w){re.escape(_fold(t))}(?!\w)", folded)]


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
    """The validated plan, the model's raw proposal and the alerts of validation."""

    plan: Plan
    proposed: Plan
    alerts: list[Alert] = Field(default_factory=list)


def make_plan(client: Asker, data: PlannerInput) -> PlanOutcome:
    """Ask the planner (catalogue only), validate, flag suspicious exclusions.

    Raises :class:`PlanUnusableError` when nothing usable is left.
    """
    result = client.ask(PLANNER, data)
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
    if data.with_summaries and any(e.summary for e in data.catalogue) and summary_budget(data) is None:
        alerts.append(
            Alert(
                code="plan.summaries_omitted",
                severity="info",
                stage="plan",
                message=f"résumés non montrés au planificateur : le catalogue seul atteint le budget de "
                f"{LINE_TOKEN_BUDGET} tokens par ligne",
            )
        )
    return PlanOutcome(plan=plan, proposed=proposed, alerts=alerts)
