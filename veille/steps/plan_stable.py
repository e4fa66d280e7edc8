"""Tonight's plan kept stable against last night's settled one (issue 40, item 2).

Code settles the plan from the documents' text (veille.steps.plan_reading): BM25 relative to the
corpus, documents placed in id order up to ``max_docs`` per sub-task. Settled afresh, one added
document can shift others — a term's weight moves, or it takes the place a later id had in a
full sub-task — and every sub-task whose documents move is analysed again. So when last night's
plan is reused, the settled plan is that night's, amended:

- a document last night's plan read stays in its sub-task (same id, question, passages read) as long as
  it is still in the catalogue and tonight's settling does not refuse it outright (suspected
  injection, duplicate, outside the request's period: reasons no text score can overrule);
- a document new or changed tonight that tonight's settling reads, and that no sub-task read last
  night, goes to a sub-task of the axis tonight's settling gave it — the first with room (fewer
  than ``max_docs`` documents read whole) in plan order, else one more sub-task of that axis with tonight's question (the axis is split),
  else it is left out with reason ``cap`` (named in an error alert, never dropped silently).

A document neither new nor changed that tonight's fresh settling would read or drop only because
another document arrived (the corpus-relative measure moved) keeps last night's status: what the
watch reads moves with what changed, not with the measure's drift. By construction no previously
read document changes sub-task, and only the sub-tasks that receive a newcomer differ (property-tested in tests/test_plan_stable_properties.py). Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from veille.alerts import Alert
from veille.roles.planner import Exclusion, ExclusionReason, Plan, SubTask
from veille.steps.plan_reading_alerts import reading_alerts
from veille.steps.plan_validate import rebuild_plan

__all__ = ["HARD_REASONS", "READING_CODES", "Previous", "stable_alerts", "stable_plan"]

# Reasons tonight's settling refuses a document that no previous placement overrules: what the
# screen, the duplicate check or the request's period say does not depend on the other documents.
HARD_REASONS: frozenset[str] = frozenset({"injection", "duplicate", "out_of_period", "shortlist"})


@dataclass(frozen=True)
class Previous:
    """Last night's settled plan: its sub-tasks and the axis each served (plan.json ``reading``)."""

    sub_tasks: Sequence[SubTask]
    axes: Mapping[str, str] = field(default_factory=dict)
    exclusions: Sequence[Exclusion] = ()


def _axis(st: SubTask, axes: Mapping[str, str]) -> str:
    """The axis a sub-task serves; its question when the plan recorded none (an unmeasured plan)."""
    return axes.get(st.id) or f"question:{st.question.strip()}"


def _whole(st: SubTask) -> list[str]:
    """The documents ``st`` reads whole: what ``max_docs`` bounds. A document it reads in part (a
    few sections of one another sub-task reads whole, veille.steps.plan_reading) costs its reader
    a few passages, not a document: counted, it filled sub-tasks code had only topped up with
    others' passages, and a new document found no room on the next night."""
    return [i for i in st.doc_ids if i not in st.passages]


def _next_id(sub_tasks: Sequence[SubTask]) -> str:
    """``st-N`` after the highest number in use: a new sub-task never takes a kept one's id."""
    numbers = [int(st.id[3:]) for st in sub_tasks if st.id.startswith("st-") and st.id[3:].isdigit()]
    return f"st-{max(numbers, default=0) + 1}"


def stable_plan(
    previous: Previous,
    settled: Plan,
    known_ids: Sequence[str],
    touched: Collection[str],
    *,
    max_subtasks: int,
    max_docs: int,
) -> tuple[Plan, list[str]]:
    """(tonight's plan, the newcomers left out for lack of room). ``settled``: tonight's plan as
    code settled it afresh (its ``reading`` carries ``sub_task_axes``); ``known_ids``: tonight's
    catalogue, in catalogue order; ``touched``: the documents new or changed since last night."""
    known = set(known_ids)
    reasons: dict[str, ExclusionReason] = {e.id: e.reason for e in settled.exclusions}
    details = {e.id: e.detail for e in settled.exclusions}
    refused = {i for i, r in reasons.items() if r in HARD_REASONS}
    flags = {k: v for st in settled.sub_tasks for k, v in st.flags.items()}
    tonight_axes: Mapping[str, str] = (settled.reading or {}).get("sub_task_axes") or {}

    out: list[SubTask] = []
    axis_of: list[str] = []
    for st in previous.sub_tasks:
        docs = [i for i in st.doc_ids if i in known and i not in refused]
        out.append(
            st.model_copy(
                update={
                    "doc_ids": docs,
                    "passages": {i: p for i, p in st.passages.items() if i in docs},
                }
            )
        )
        axis_of.append(_axis(st, previous.axes))
    placed = {i for st in out for i in st.doc_ids}
    moving = set(touched)

    unplaced: list[str] = []
    # Newcomers in id order, each with the axes tonight's settling read it for (in its plan order).
    wanted: dict[str, list[SubTask]] = {}
    for st in settled.sub_tasks:
        for doc_id in st.doc_ids:
            if doc_id not in placed and doc_id in moving:
                wanted.setdefault(doc_id, []).append(st)
    for doc_id in sorted(wanted):
        for source in wanted[doc_id]:
            axis = _axis(source, tonight_axes)
            mine = [n for n, a in enumerate(axis_of) if a == axis]
            if any(doc_id in out[n].doc_ids for n in mine):
                continue
            room = [n for n in mine if out[n].doc_ids and len(_whole(out[n])) < max_docs]  # emptied: gone
            passages = {doc_id: source.passages[doc_id]} if doc_id in source.passages else {}
            if room:
                st = out[room[0]]
                out[room[0]] = st.model_copy(
                    update={"doc_ids": [*st.doc_ids, doc_id], "passages": {**st.passages, **passages}}
                )
            elif sum(1 for st in out if st.doc_ids) < max_subtasks:
                out.append(
                    SubTask(
                        id=_next_id(out),
                        question=source.question,
                        doc_ids=[doc_id],
                        search_terms=list(source.search_terms),
                        passages=passages,
                    )
                )
                axis_of.append(axis)
            elif not any(doc_id in st.doc_ids for st in out):
                unplaced.append(doc_id)
    unplaced = sorted(set(unplaced) - {i for st in out for i in st.doc_ids})
    used = {i for st in out for i in st.doc_ids}
    for e in previous.exclusions:  # an untouched document left out last night keeps its reason
        if e.id not in used and e.id not in moving and e.id not in refused:
            reasons[e.id], details[e.id] = e.reason, e.detail
    for doc_id in unplaced:
        reasons[doc_id] = "cap"
        details[doc_id] = "passage pertinent, mais toutes les sous-tâches sont pleines"
    with_flags = [
        st.model_copy(update={"flags": {i: flags[i] for i in st.doc_ids if i in flags}}) for st in out
    ]
    rebuilt = rebuild_plan(with_flags, known_ids, reasons, details)
    # Sub-tasks keep last night's ids even when one before them emptied (rebuild_plan would
    # renumber them st-1..st-n, and a branch's identity — its previous findings — is its id).
    kept = [(st, a) for st, a in zip(with_flags, axis_of, strict=True) if st.doc_ids]
    plan = rebuilt.model_copy(update={"sub_tasks": [st for st, _ in kept]})
    reading = dict(settled.reading or {})
    if reading:
        reading["sub_task_axes"] = {st.id: a for st, a in kept if not a.startswith("question:")}
        reading["unplaced"] = sorted(set(reading.get("unplaced") or []) | set(unplaced))
        reading["stable"] = {"kept_from_previous": len(previous.sub_tasks)}
    return plan.model_copy(update={"reading": reading}), unplaced


# The alerts of code's reading of the plan (veille.steps.plan_reading_alerts): tonight's fresh
# settling raised them about its own plan; the stable plan's are raised again from it.
READING_CODES: frozenset[str] = frozenset(
    {
        "plan.read_by_text",
        "plan.no_relevant_passage",
        "plan.out_of_period",
        "plan.reading_cap",
        "plan.group_apart",
        "plan.same_subject",
    }
)


def stable_alerts(plan: Plan, alerts: Sequence[Alert]) -> tuple[Plan, list[Alert]]:
    """``alerts`` (tonight's fresh settling's) with the reading's alerts said of the stable
    ``plan`` instead: documents code added to, or removed from, the planner's validated plan
    (``reading.validated``, the one reused),
    and those left out for lack of room — never an alert about a move the stable plan did not make.
    The plan's ``reading`` report says the same (``added``, ``removed``)."""
    reading = dict(plan.reading or {})
    placed = {i for st in plan.sub_tasks for i in st.doc_ids}
    validated = reading.get("validated") or {}
    asked = {str(i) for st in validated.get("sub_tasks") or [] for i in st.get("doc_ids") or []}
    reasons = {e.id: e.reason for e in plan.exclusions}
    added = sorted(placed - asked)
    removed = sorted(i for i in asked - placed if reasons.get(i) == "no_relevant_passage")
    unplaced = sorted(i for i in reading.get("unplaced") or [] if reasons.get(i) == "cap")
    reading.update({"added": added, "removed": removed, "unplaced": unplaced})
    fresh = reading_alerts(
        added,
        removed,
        list(reading.get("out_of_period") or []),
        unplaced,
        list(reading.get("groups") or []),
        list(reading.get("groups_apart") or []),
    )
    kept = [a for a in alerts if a.code not in READING_CODES]
    return plan.model_copy(update={"reading": reading}), [*kept, *fresh]
