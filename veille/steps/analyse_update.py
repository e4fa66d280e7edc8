"""The incremental analyst (issue 13, item 4): a branch that only gained documents since the
previous completed run reads only them, against its previous findings.

Pure functions over plain data (the Prefect task in ``tasks/analyse.py`` reads the previous run's
findings.json and plan, and fetches the documents):

- :func:`previous_branches`: the previous run's branches as recorded (question, documents and
  their content hashes, flags, status, findings, the analyst basis they were written under);
- :func:`decide`: for one of tonight's sub-tasks, ``full`` (with the reason), ``carry`` (nothing
  changed: the previous findings are this sub-task's analysis, no model call) or ``update``
  (documents were added or edited: ask :data:`~veille.roles.analyst_update.ANALYST_UPDATE` with
  them alone; an edited document's previous findings and contradictions are dropped first, issue 40);
- :func:`merge_update`: the previous findings kept, the new ones appended, contradictions merged
  without duplicates, every citation restricted to the sub-task's documents;
- :func:`update_subtask` / :func:`carried_analysis`: the branch's :class:`Analysis`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from veille.alerts import Alert, alert
from veille.roles.analyst import ContradictionNote, DocumentText, Findings
from veille.roles.analyst_update import ANALYST_UPDATE, AnalystUpdateInput, FindingsUpdate, KnownDocument
from veille.roles.base import Asker
from veille.roles.limits import Bounds
from veille.roles.planner import SubTask
from veille.steps.analyse import Analysis, branch_analysis, missing_documents, restrict_citations
from veille.steps.answer_items import dropped_items_alerts
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.bounds import bound_findings
from veille.steps.edited_sections import in_previous_order, read_edits
from veille.steps.reading import PartRead, axis_passages, read_documents, reading_alert, reading_query
from veille.steps.update_context import shown_previous, without_repeats

__all__ = [
    "Decision",
    "PreviousBranch",
    "UpdateJob",
    "carried_analysis",
    "decide",
    "merge_update",
    "previous_branches",
    "update_subtask",
    "without_documents",
]


class UpdateJob(BaseModel):
    """What the incremental branch is given besides its sub-task: the previous findings and which
    of its documents are new. Part of its cache key (with the documents' content hashes)."""

    new_ids: list[str]
    previous: Findings
    previous_read: dict[str, PartRead] = {}  # documents read in part then (input budget)
    # Edited documents whose previous version is known by its section digests (ingest): read by
    # their changed sections only; ``previous`` keeps their findings until code checks each one's
    # support in the unchanged sections (veille.steps.edited_sections). The others are read whole,
    # their findings already dropped.
    edited_sections: dict[str, list[str]] = {}


@dataclass(frozen=True)
class PreviousBranch:
    """One branch of the previous completed run, as its run folder recorded it."""

    subtask_id: str
    question: str
    doc_ids: tuple[str, ...]
    doc_hashes: Mapping[str, str]  # content hash of each of its documents then
    flags: Mapping[str, str]
    status: str
    basis: str  # the analyst model key and version its findings were written under ("" unknown)
    findings: Findings | None  # None: the entry could not be read
    problem: str = ""  # why ``findings`` is None
    read: Mapping[str, PartRead] = field(default_factory=dict)  # documents read in part then


def without_documents(findings: Findings, ids: Collection[str]) -> Findings:
    """The previous findings that still stand when ``ids`` were edited: none citing an edited
    document, no contradiction naming one (what it said may no longer hold: precision before
    recall; the update reads it again). Open questions cite nothing and stay."""
    gone = set(ids)
    return findings.model_copy(
        update={
            "findings": [f for f in findings.findings if not gone & set(f.doc_ids)],
            "contradictions": [c for c in findings.contradictions if not gone & set(c.doc_ids)],
        }
    )


@dataclass(frozen=True)
class Decision:
    kind: Literal["full", "carry", "update"]
    reason: str
    new_ids: tuple[str, ...] = ()  # read by the update: documents added, then edited
    previous: PreviousBranch | None = None
    previous_run: str = ""
    edited: tuple[str, ...] = ()  # among ``new_ids``, documents read then and edited since

    @property
    def update(self) -> UpdateJob | None:
        return self.update_with({})

    def update_with(self, sections: Mapping[str, Sequence[str]]) -> UpdateJob | None:
        """The update's job; ``sections``: the previous version's section digests of edited
        documents (by id), which are then read by their changed sections only."""
        if self.kind != "update" or self.previous is None or self.previous.findings is None:
            return None
        whole = [i for i in self.edited if i not in sections]
        return UpdateJob(
            new_ids=list(self.new_ids),
            previous=without_documents(self.previous.findings, whole),
            previous_read={i: p for i, p in self.previous.read.items() if i not in set(self.edited)},
            edited_sections={i: list(sections[i]) for i in self.edited if i in sections},
        )

    @property
    def carry(self) -> Findings | None:
        if self.kind != "carry" or self.previous is None:
            return None
        return self.previous.findings


def _read_of(entry: Mapping[str, Any]) -> dict[str, PartRead]:
    raw = entry.get("read")
    try:
        return (
            {str(k): PartRead.model_validate(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
        )
    except ValidationError:
        return {}  # another layout: the findings still hold, only the note of a partial read is lost


def _findings_of(entry: Mapping[str, Any]) -> tuple[Findings | None, str]:
    try:
        return Findings.model_validate(
            {k: entry.get(k) or [] for k in ("findings", "contradictions", "open_questions")}
        ), ""
    except (ValidationError, TypeError, ValueError) as exc:
        return None, f"findings not readable ({type(exc).__name__})"


def previous_branches(
    findings_json: Any, plan_json: Mapping[str, Any] | None, documents: Mapping[str, str]
) -> dict[str, PreviousBranch]:
    """The previous run's branches by sub-task id: findings.json entries joined with plan.json's
    sub-tasks (documents, flags) and the run's document snapshot (``documents``: id -> hash)."""
    if not isinstance(findings_json, Mapping):
        return {}
    planned: dict[str, Mapping[str, Any]] = {}
    for raw in (plan_json or {}).get("sub_tasks") or []:
        if isinstance(raw, Mapping) and raw.get("id"):
            planned[str(raw["id"])] = raw
    out: dict[str, PreviousBranch] = {}
    for sub_id, entry in findings_json.items():
        if not isinstance(entry, Mapping) or str(sub_id) not in planned:
            continue
        sub = planned[str(sub_id)]
        doc_ids = tuple(str(i) for i in sub.get("doc_ids") or [])
        findings, problem = _findings_of(entry)
        flags = sub.get("flags") if isinstance(sub.get("flags"), Mapping) else {}
        out[str(sub_id)] = PreviousBranch(
            subtask_id=str(sub_id),
            question=str(sub.get("question") or entry.get("question") or ""),
            doc_ids=doc_ids,
            doc_hashes={i: documents.get(i, "") for i in doc_ids},
            flags={str(k): str(v) for k, v in (flags or {}).items()},
            status=str(entry.get("status") or ""),
            basis=str(entry.get("analyst_basis") or ""),
            findings=findings,
            problem=problem,
            read=_read_of(entry),
        )
    return out


def decide(
    sub_task: SubTask,
    doc_hashes: Mapping[str, str],
    basis: str,
    previous: PreviousBranch | None,
    *,
    previous_run: str = "",
    why_none: str = "no previous completed run",
) -> Decision:
    """Full analysis, carry-over or incremental update for one of tonight's sub-tasks.

    Incremental when the sub-task differs from the previous run's by added or edited documents:
    same question, same analyst basis (model key and version), every document read then still in
    the sub-task with the same flag, the previous branch ok and its findings read.
    """

    def full(reason: str) -> Decision:
        return Decision("full", reason, previous=previous, previous_run=previous_run)

    if previous is None:
        return full(why_none)
    if previous.status != "ok":
        return full(f"the branch failed in {previous_run or 'the previous run'}")
    if previous.findings is None:
        return full(f"previous findings unreadable: {previous.problem}")
    if previous.question.strip() != sub_task.question.strip():
        return full("the question changed")
    if not previous.basis or previous.basis != basis:
        return full("the analyst model or its version changed")
    now = set(sub_task.doc_ids)
    removed = [i for i in previous.doc_ids if i not in now]
    if removed:
        return full(f"document(s) no longer in the sub-task: {', '.join(removed)}")
    reflagged = [i for i in previous.doc_ids if previous.flags.get(i) != sub_task.flags.get(i)]
    if reflagged:
        return full(f"flag changed on: {', '.join(reflagged)}")
    if any(not previous.doc_hashes.get(i) for i in previous.doc_ids):
        return full("a document's content hash was not recorded then")
    edited = tuple(i for i in previous.doc_ids if previous.doc_hashes[i] != doc_hashes.get(i))
    added = tuple(i for i in dict.fromkeys(sub_task.doc_ids) if i not in set(previous.doc_ids))
    if not added and not edited:
        return Decision("carry", "unchanged", previous=previous, previous_run=previous_run)
    # An edited document is read again alone, like a new one, its previous findings dropped
    # (without_documents): the findings of the documents that did not change still hold.
    reason = ", ".join(
        [
            *([f"{len(added)} new document(s)"] if added else []),
            *([f"edited: {', '.join(edited)}"] if edited else []),
        ]
    )
    return Decision(
        "update", reason, new_ids=added + edited, previous=previous, previous_run=previous_run, edited=edited
    )


def note_key(note: ContradictionNote) -> tuple[tuple[str, ...], str]:
    return tuple(sorted(set(note.doc_ids))), note.retained


def merge_update(
    sub_task: SubTask, previous: Findings, update: FindingsUpdate, new_ids: Sequence[str]
) -> tuple[Findings, list[Alert]]:
    """The sub-task's findings after the update: the previous ones (they cite only documents read
    then, unchanged since), then the new ones (restricted to the new documents), contradictions
    merged (one per set of documents and retained one) and open questions deduplicated. Every
    citation outside the sub-task is removed (:func:`restrict_citations`, with its alerts)."""
    new = [i for i in dict.fromkeys(new_ids) if i in set(sub_task.doc_ids)]
    # The previous findings cite documents read then (an edited one among them when its unchanged
    # sections still support them: veille.steps.edited_sections).
    kept, alerts = restrict_citations(previous, sub_task.doc_ids, sub_task.id)
    # A finding the update states again (one it was not shown: veille.steps.update_context) is kept once.
    unseen = without_repeats(kept.findings, update.findings)
    added, more = restrict_citations(Findings(findings=unseen), new, sub_task.id)
    alerts += more
    notes = [
        ContradictionNote(doc_ids=[n.new_doc_id, *n.other_doc_ids], retained=n.retained, reason=n.reason)
        for n in update.contradictions
    ]
    cleaned, more = restrict_citations(
        Findings(findings=[], contradictions=notes), sub_task.doc_ids, sub_task.id
    )
    alerts += more
    fresh = [n for n in cleaned.contradictions if set(n.doc_ids) & set(new)]
    if len(fresh) < len(cleaned.contradictions):
        alerts.append(
            alert(
                "analyse",
                "analyse.contradiction_dropped",
                f"{sub_task.id} : {len(cleaned.contradictions) - len(fresh)} contradiction(s) de la mise à "
                "jour sans nouveau document supprimée(s)",
                severity="warning",
                subject=sub_task.id,
            )
        )
    contradictions: dict[tuple[tuple[str, ...], str], ContradictionNote] = {}
    for note in [*kept.contradictions, *fresh]:
        contradictions.setdefault(note_key(note), note)
    merged = Findings(
        findings=[*kept.findings, *added.findings],
        contradictions=list(contradictions.values()),
        open_questions=list(dict.fromkeys([*kept.open_questions, *update.open_questions])),
    )
    return merged, alerts


def update_subtask(
    client: Asker,
    sub_task: SubTask,
    documents: Sequence[DocumentText],
    job: UpdateJob,
    budget: int | None = None,
    bounds: Bounds | None = None,
) -> Analysis:
    """Ask the incremental analyst with the new documents (whole while they fit ``budget`` tokens,
    else their most relevant sections) and the changed sections of the edited ones, the documents
    already read (metadata only) and the previous findings that stand, then merge
    (:func:`merge_update`). Nothing to read (an edit that only moved sections, whose findings
    all stand): no model call."""
    bounds = bounds or Bounds()  # the new findings within code's bounds (veille.steps.bounds)
    new_set = set(job.new_ids)
    full = {d.id: d.body for d in documents}
    previous, excerpts, dropped = read_edits(
        sub_task, documents, job.edited_sections, job.new_ids, job.previous
    )
    whole = [
        d.model_copy(update={"flag": sub_task.flags.get(d.id, d.flag)})
        for d in documents
        if d.id in new_set and d.id not in excerpts
    ]
    whole = axis_passages(whole, sub_task.passages)  # a document read whole by another branch
    by_id = {d.id: d for d in whole} | {
        i: d.model_copy(update={"flag": sub_task.flags.get(i, d.flag)})
        for i, d in excerpts.items()
        if d is not None
    }
    shown = [by_id[d.id] for d in documents if d.id in by_id]  # the sub-task's order
    parts: dict[str, PartRead] = {}
    if budget is not None:  # changed sections too are read within the branch's input budget
        shown, parts = read_documents(shown, reading_query(sub_task), budget)
    alerts: list[Alert] = []
    if dropped:
        alerts.append(
            alert(
                "analyse",
                "analyse.edited_support_gone",
                f"{sub_task.id} : {dropped} constat(s) d'un document modifié retiré(s) : leur appui n'est "
                "plus confirmé dans ses sections inchangées (relu dans les sections modifiées)",
                severity="info",
                subject=sub_task.id,
            )
        )
    if not shown:  # every edit only moved sections and every finding stands: nothing to read
        kept, more = restrict_citations(previous, sub_task.doc_ids, sub_task.id)
        known_read = {i: p for i, p in job.previous_read.items() if i in set(sub_task.doc_ids)}
        return branch_analysis(
            sub_task, kept, alerts + more + missing_documents(sub_task, documents), known_read
        )
    known = [
        KnownDocument(id=d.id, date=d.date, source_type=d.source_type, title=d.title)
        for d in documents
        if d.id not in by_id
    ]
    data = AnalystUpdateInput(
        subtask_id=sub_task.id,
        question=sub_task.question,
        documents=shown,
        known_documents=known,
        previous=shown_previous(previous, [k.id for k in known], shown),  # merged below with all of it
        max_findings=bounds.max_findings,
        max_words=bounds.max_item_words,
        excerpts=sorted(i for i, d in excerpts.items() if d is not None and d.body != full[i]),
    )
    result = client.ask(ANALYST_UPDATE, data, subtask_id=sub_task.id)
    fresh, bounded = bound_findings(result.output.findings, bounds, sub_task.id)  # the new ones only
    update = result.output.model_copy(update={"findings": fresh})
    merged, more = merge_update(sub_task, previous, update, [d.id for d in shown])
    merged = in_previous_order(job.previous, merged)
    alerts += more + bounded
    alerts += missing_documents(sub_task, documents)
    alerts += foreign_answer_alerts("analyse", result, f"analyste de {sub_task.id}", sub_task.id)
    alerts += dropped_items_alerts("analyse", result, f"analyste de {sub_task.id}", sub_task.id)
    if budget is not None:
        alerts += reading_alert(sub_task.id, parts, budget)
    known_read = {i: p for i, p in job.previous_read.items() if i in set(sub_task.doc_ids) and i not in by_id}
    return branch_analysis(sub_task, merged, alerts, known_read | parts)


def carried_analysis(
    sub_task: SubTask, previous: Findings, read: Mapping[str, PartRead] | None = None
) -> Analysis:
    """An unchanged sub-task: its previous findings, no model call (citations still restricted),
    and what those findings were read from in part (``read``: the previous run's record)."""
    findings, alerts = restrict_citations(previous, sub_task.doc_ids, sub_task.id)
    kept = {i: p for i, p in (read or {}).items() if i in set(sub_task.doc_ids)}
    return branch_analysis(sub_task, findings, alerts, kept)
