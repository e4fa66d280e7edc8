"""Plan validation (seed 001): what code repairs in a planner's proposal, and the plan rebuilt.

:func:`validate_plan` repairs what can be repaired (ids written with another case or quotes,
unknown ids, duplicates, caps, empty sub-tasks), alerts on each repair, refuses an empty plan with
:class:`PlanUnusableError` (carrying the repairs' alerts, the re-ask's findings), renumbers
sub-tasks ``st-1..st-n`` and gives every catalogue document it did not place a reason.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping, Sequence

from veille.alerts import Alert, Severity, alert, grouped_alert
from veille.roles.limits import TITLE_CHARS
from veille.roles.planner import Exclusion, ExclusionReason, Plan, SubTask

__all__ = [
    "UNASSIGNED",
    "PlanUnusableError",
    "id_key",
    "rebuild_plan",
    "repair_ids",
    "unassigned_alerts",
    "validate_plan",
]

UNASSIGNED = "plan.unassigned_documents"

_QUOTES = "\"'`«»“”‘’„‹›"


def id_key(value: str) -> str:
    """What an id is once case, width, whitespace and quotes are set aside."""
    text = unicodedata.normalize("NFKC", value)
    return "".join(text.split()).strip(_QUOTES).casefold()


def repair_ids(ids: Sequence[str], known: Collection[str]) -> tuple[list[str], dict[str, str]]:
    """``ids`` with each unknown id replaced by the one known id sharing its :func:`id_key`
    (ambiguous or unmatched ids are left as they are); returns the ids and ``{written: repaired}``."""
    by_key: dict[str, list[str]] = {}
    for doc_id in known:
        by_key.setdefault(id_key(doc_id), []).append(doc_id)
    out: list[str] = []
    repaired: dict[str, str] = {}
    for doc_id in ids:
        match = by_key.get(id_key(doc_id), []) if doc_id not in known else []
        if len(match) == 1:
            repaired[doc_id] = match[0]
            out.append(match[0])
        else:
            out.append(doc_id)
    return out, repaired


class PlanUnusableError(ValueError):
    """No sub-task with valid sources is left: the run cannot go on (not retryable)."""

    retryable = False
    expected_failure = True  # logged as one line, without a traceback (veille/ops/logfilter.py)

    def __init__(self, message: str, alerts: Sequence[Alert] = ()) -> None:
        super().__init__(message)
        self.alerts = list(alerts)  # the repairs that left nothing: the re-ask's findings


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
    if len(st.question) > TITLE_CHARS:  # the schema's ceiling: dropped whole, never cut
        message = f"{label} : question de {len(st.question)} caractères (plus de {TITLE_CHARS}), sous-tâche supprimée"
        alerts.append(_alert("plan.empty_subtask", message, label))
        return None, cut + ids, alerts
    if not ids:
        alerts.append(
            _alert("plan.empty_subtask", f"{label} : aucune source valide, sous-tâche supprimée", label)
        )
        return None, cut, alerts
    terms = [t.strip() for t in st.search_terms if t.strip()]
    return SubTask(id=label, question=st.question.strip(), doc_ids=ids, search_terms=terms), cut, alerts


def _repair_ids(plan: Plan, known: set[str]) -> tuple[Plan, list[Alert]]:
    """Ids written with another case, width, spaces or quotes mapped back where unambiguous."""
    repaired: dict[str, str] = {}
    sub_tasks = []
    for st in plan.sub_tasks:
        ids, done = repair_ids(st.doc_ids, known)
        repaired.update(done)
        sub_tasks.append(st.model_copy(update={"doc_ids": ids}))
    excluded, done = repair_ids(plan.excluded, known)
    repaired.update(done)
    if not repaired:
        return plan, []
    pairs = ", ".join(f"{written!r} → {doc_id}" for written, doc_id in repaired.items())
    message = f"identifiants réparés (casse, espaces ou guillemets) : {pairs}"
    repair = alert("plan", "plan.repaired_ids", message, severity="warning")
    return plan.model_copy(update={"sub_tasks": sub_tasks, "excluded": excluded}), [repair]


def validate_plan(
    plan: Plan, known_ids: Collection[str], *, max_subtasks: int, max_docs: int
) -> tuple[Plan, list[Alert]]:
    """Repair ``plan`` against the catalogue; return the valid plan and one alert per repair.

    ``excluded`` of the result lists every catalogue document used by no sub-task, and
    ``exclusions`` gives each its reason: ``cap`` (proposed in a sub-task, cut by a cap),
    ``planner_excluded`` (in the model's ``excluded``) or ``unassigned`` (neither).
    """
    known = set(known_ids)
    plan, alerts = _repair_ids(plan, known)
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
            f"({len(plan.sub_tasks)} sous-tâche(s) proposée(s) par le planificateur)",
            alerts,
        )
    used = {i for st in kept for i in st.doc_ids}
    dropped = [i for i in dict.fromkeys(truncated) if i not in used]
    if dropped:
        alerts.append(
            _alert(  # a record of what validation did to this answer (no subjects: the final
                # plan's alerts name each document under the reason it finally has)
                "plan.dropped_documents",
                f"documents retirés par les plafonds ({max_docs} documents, {max_subtasks} sous-tâches) "
                f"et lus par aucune sous-tâche : {', '.join(dropped)}",
            )
        )
    reasons: dict[str, ExclusionReason] = dict.fromkeys(dropped, "cap")
    for doc_id in plan.excluded:
        if doc_id in known and doc_id not in used:
            reasons.setdefault(doc_id, "planner_excluded")
    unassigned = [i for i in _ordered(known_ids) if i not in used and i not in reasons]
    reasons.update(dict.fromkeys(unassigned, "unassigned"))
    valid = rebuild_plan(kept, _ordered(known_ids), reasons)
    return valid, alerts + unassigned_alerts(valid)


def unassigned_alerts(plan: Plan) -> list[Alert]:
    """One info alert naming the documents ``plan`` leaves out for no reason but the planner's silence.
    Made from a plan's exclusions, so a caller that changes the plan afterwards (code places a
    document, excludes a flagged one) makes it again from its final plan: each document counted once,
    under the reason it finally has."""
    unassigned = [e.id for e in plan.exclusions if e.reason == "unassigned"]
    if not unassigned:
        return []
    return [
        grouped_alert(
            UNASSIGNED,
            stage="plan",
            head="documents ni attribués ni écartés par le planificateur, considérés écartés",
            subjects=unassigned,
            severity="info",
        )
    ]


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
