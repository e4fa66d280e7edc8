"""Code decides what each analyst reads, from the documents' text, per axis (issue 37, items 2-3).

The planner's plan is a proposal. After :func:`veille.steps.plan.make_plan` (validation, coverage),
for every backend, :func:`decide_reading` reads the documents' passages against each axis of the
request (veille.steps.passages: BM25 relative to the corpus, the planner's search terms added to
the axis of their sub-task) and settles the plan:

- a document dated outside the request's period is read by no branch (reason ``out_of_period``);
- a document with a passage relevant to an axis is read by a branch of that axis (a branch is added
  when the axis's are full: the axis is split, never a document dropped); a passage naming a
  compared option and one of the axis's terms is always relevant;
- documents stating the same measure of the same option (veille.steps.plan_groups) share a branch;
- a document is relevant to an axis only when it also carries the request's subject
  (veille.steps.subject: the request's own words that are not an axis's, relative to the corpus;
  naming a compared option carries it): axis words alone (« résultats », « abandon ») are written
  in documents of every field. An inventory reads every document carrying the subject (one entry
  per item found);
- a placed document none of whose passages concerns an axis is removed (``no_relevant_passage``):
  coverage both ways. What the planner placed and the text supports stays where it put it;
- a document the planner excluded is read when its text supports it (veille.steps.plan_honour: it
  carries the subject and has a passage relevant to an axis), unless it names an option only as a
  homonym (veille.steps.option_sense) or the injection screen flagged it; said in
  ``reading.overruled``. A homonym's words never spare it from code's own screen either.

The result depends on the text, not on the planner's choice of documents: a planner excluding
everything, placing everything, inventing ids or proposing one sub-task gets the same documents
read as a sensible one (tests/test_plan_reading_gemini.py). Nothing is changed when no passage of
the corpus is relevant to any axis (the measure says nothing then; the planner's plan stands).

The request's reading is the shared interface :class:`RequestReadingLike` (branch ``request``'s
``veille.corpus.request_reading.RequestReading``); until it is merged, :func:`interim_reading`
builds one from today's request terms and offline axes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from veille.alerts import Alert, alert
from veille.roles.planner import CatalogueEntry, ExclusionReason, Plan, PlannerInput, SubTask
from veille.steps.option_sense import measure_option_sense
from veille.steps.passages import passages_of, score_axes
from veille.steps.plan import PlanOutcome
from veille.steps.plan_alerts import LOW_COVERAGE
from veille.steps.plan_assign import Branch, assign_branches
from veille.steps.plan_axes import (
    axis_of_sub_task,
    axis_question,
    axis_sections,
    branch_passages,
    must_read,
    relevant_documents,
)
from veille.steps.plan_forecast import reading_forecast
from veille.steps.plan_groups import DocumentFacts, co_read_pairs, same_subject_groups
from veille.steps.plan_honour import overruled_exclusions
from veille.steps.plan_reading_alerts import reading_alerts
from veille.steps.plan_request import (
    AxisProtocol,
    InterimAxis,
    InterimReading,
    RequestReadingLike,
    interim_reading,
    is_dated,
    out_of_period,
)
from veille.steps.plan_screen import CodeProposal, Screen, code_proposal, withheld
from veille.steps.plan_validate import PlanUnusableError, rebuild_plan
from veille.steps.subject import inventory_items, measure_subject, subject_keys
from veille.steps.text_relevance import setting

__all__ = [
    "AxisProtocol",
    "InterimAxis",
    "InterimReading",
    "RequestReadingLike",
    "decide_reading",
    "interim_reading",
    "out_of_period",
    "read_by_text",
    "reading_forecast",
]


@dataclass(frozen=True)
class Decision:
    plan: Plan
    alerts: list[Alert]


def decide_reading(
    plan: Plan,
    catalogue: Sequence[CatalogueEntry],
    bodies: Mapping[str, str],
    reading: RequestReadingLike,
    *,
    request_title: str,
    max_subtasks: int,
    max_docs: int,
    request: str = "",
    proposed: Plan | None = None,
    screen: CodeProposal | None = None,
) -> Decision:
    """The plan settled by the documents' text (module docstring); ``plan.reading`` says what each
    axis reads and why documents were added, removed or left out. ``request``: the request's text,
    whose subject a document must carry to be read for an axis (with ``request_title``);
    ``proposed``: the planner's answer (default ``plan``); ``screen``: code's own proposal."""
    entries = {e.id: e for e in catalogue}
    ids = sorted(entries)
    options = list(reading.options)
    axes = list(reading.axes)
    reasons: dict[str, ExclusionReason] = {e.id: e.reason for e in plan.exclusions}
    details = {e.id: e.detail for e in plan.exclusions}
    dated_out = [i for i in ids if out_of_period(entries[i].date, reading.period_start, reading.period_end)]
    ignored: list[Alert] = []
    if dated_out and len(dated_out) == sum(is_dated(entries[i].date) for i in ids):
        # Not one dated document falls in the period: the year says when the project lands
        # (« la mise en production de 2027 »), not which documents count — reading nothing is
        # never what a request asks. The period is set aside, said in an alert, never guessed.
        ignored.append(
            alert(
                "plan",
                "plan.period_ignored",
                "période de la demande non appliquée : aucun document daté n'y tombe "
                f"({len(dated_out)} document(s) daté(s), tous hors période) ; tous sont lus",
                severity="info",
            )
        )
        dated_out = []
    heads = {i: f"{entries[i].title}\n{entries[i].summary or ''}" for i in ids if i not in dated_out}
    passages = passages_of({i: bodies.get(i, "") for i in heads}, heads, options)
    scores = score_axes(passages, {a.key: list(a.terms) for a in axes}, options)
    relevant = relevant_documents(scores, bool(options))
    # An axis's words are written in documents of every field: a document is read for an axis only
    # when it carries the request's subject too (veille.steps.subject; naming an option does).
    subject = measure_subject(passages, subject_keys(request_title, request, axes, options))
    relevant = {k: {i for i in docs if subject.carries(i)} for k, docs in relevant.items()}
    # A homonym names an option and nothing else of the comparison (veille.steps.option_sense): its
    # words do not spare it from code's screen, nor overrule a planner's exclusion of it.
    doubtful = measure_option_sense(passages, options).doubtful()
    spared = (
        set().union(*relevant.values()) | subject.by_words()
    ) - doubtful  # their words carry the subject
    # Text support against a planner's exclusion: a passage scoring as relevant to an axis. Naming an
    # option beside one of an axis's words is too little to overrule a judgement (an old announcement
    # names the product and « version »); it still gets such a document read when nothing excluded it.
    supported = set().union(*relevant.values()) - doubtful
    for doc_id, axis_key in must_read(scores, axes).items():
        if not any(doc_id in docs for docs in relevant.values()):
            relevant[axis_key].add(doc_id)
    items: set[str] = set()
    if getattr(reading, "kind", None) == "inventory" and subject.measured:
        items = {i for i in heads if subject.carries(i)}
        inventory_items(relevant, items, axes)
    never = {i for i, r in reasons.items() if r in ("injection", "shortlist", "duplicate")}
    never |= set(dated_out)
    wanted = set().union(*relevant.values()) - never
    placed = {i for st in plan.sub_tasks for i in st.doc_ids}
    measured = bool(wanted)
    # A plan reading most of what the text asks for: its exclusions stand (homonyms are written with the
    # request's words); a broken plan's give way to code's own (plan_screen), never on ``spared``.
    out = withheld(reasons, placed, wanted, Screen.of(proposed or plan, ids), screen, spared)
    # The planner's exclusion stands only where the text does not support reading the document: one
    # carrying the subject with a passage relevant to an axis is read (the injection screen aside).
    overruled = overruled_exclusions(out.wanted & supported, reasons, relevant, axes, screen)
    wanted -= out.wanted - set(overruled)
    if measured and len(placed & wanted) >= LOW_COVERAGE * len(wanted):
        # An inventory asks for every item: a document carrying the subject is read whatever the
        # planner judged (the subject's measure is the guard against another field's sheets).
        wanted |= items - never
    # Removal both ways, conservatively (precision): a placed document goes only when no passage
    # names a compared option and none scores as relevant to an axis (a framing document dense in
    # the request's words scores; a canteen menu sharing « prix » with an axis does not), and its
    # text is long enough for the absence of the axes' words to mean something (« La plateforme
    # aura 12 GPU en 2027. » is a sizing note the planner placed: text_relevance's same bar).
    words: dict[str, int] = {}
    for p in passages:
        words[p.doc_id] = words.get(p.doc_id, 0) + len(p.keys)
    short = {i for i in placed if words.get(i, 0) < setting("min_words_to_judge")}
    linked = wanted | short | {p.doc_id for p in passages if p.options}
    # A placed document of another field (long enough to judge, not carrying the request's subject)
    # is removed whatever the axes measured: precision before recall.
    elsewhere = {i for i in placed if not subject.carries(i) and i not in short}
    kept = (placed & linked if measured else placed) - never - elsewhere - (out.placed - short)
    if axes and not wanted | kept:
        # Only documents of another field were placed and no passage answers an axis: the documents
        # carrying the subject are read by the first axis (reading nothing answers no request).
        wanted = {i for i in heads if subject.carries(i)} - never
        relevant[axes[0].key] |= wanted
        measured = bool(wanted)
    base = wanted | kept
    facts = {
        i: DocumentFacts(entries[i].date, entries[i].source_type, tuple(p for p in passages if p.doc_id == i))
        for i in sorted(base)
    }
    groups = same_subject_groups(facts, options, max_docs)
    read = base
    branches = [
        Branch(
            axis_of_sub_task(st, axes, relevant),
            st.question,
            [d for d in st.doc_ids if d in read],
            st.search_terms,
        )
        for st in plan.sub_tasks
    ]
    needed = {a.key: sorted(relevant[a.key] & read) for a in axes} if measured else {}
    questions = {a.key: axis_question(request_title, a) for a in axes}
    sub_tasks, unplaced, apart, axis_of = assign_branches(
        branches, needed, groups, read, questions, max_subtasks=max_subtasks, max_docs=max_docs
    )
    # Each branch ranks its passages by its axis: the planner's search terms and the axis's terms.
    terms = {a.key: list(a.terms) for a in axes}
    sections = axis_sections(scores, axes, relevant)
    sub_tasks = [
        st.model_copy(
            update={
                "flags": _flags(plan, st),
                "search_terms": list(dict.fromkeys([*st.search_terms, *terms[axis_of[st.id]]])),
                "passages": branch_passages(st, axis_of[st.id], sub_tasks, plan, sections),
            }
        )
        for st in sub_tasks
    ]
    sub_tasks, apart = co_read_pairs(sub_tasks, facts, options, apart, max_docs)  # no pair read apart
    placed_before = {i for st in plan.sub_tasks for i in st.doc_ids}
    placed_now = {i for st in sub_tasks for i in st.doc_ids}
    removed = sorted(placed_before - placed_now - set(dated_out))
    added = sorted(placed_now - placed_before)
    for i in dated_out:
        reasons[i], details[i] = "out_of_period", f"daté {entries[i].date}, hors de la période de la demande"
    for i in removed:
        reasons[i], details[i] = "no_relevant_passage", "aucun passage ne concerne un axe de la demande"
    for i in unplaced:
        reasons[i], details[i] = "cap", "passage pertinent, mais toutes les sous-tâches sont pleines"
    if not sub_tasks:  # every document the plan could read is outside the period
        raise PlanUnusableError(
            "plan inutilisable : aucun document à lire dans la période de la demande "
            f"({len(dated_out)} document(s) hors période)"
        )
    settled = rebuild_plan(sub_tasks, [e.id for e in catalogue], reasons, details)
    report = {
        "measured": measured,
        "axes": [
            {
                "key": a.key,
                "title": a.title,
                "terms": list(a.terms),
                "documents": sorted(relevant[a.key] & read),
            }
            for a in axes
        ],
        "subject": {
            "keys": list(subject.keys),
            "measured": subject.measured,
            "without_subject": sorted(i for i in heads if not subject.carries(i)),
        },
        "groups": groups,
        "screen": {"by_code": out.by_code, "spared": sorted(out.spared)},
        "overruled": {i: why for i, why in overruled.items() if i in placed_now},
        "added": added,
        "removed": removed,
        "out_of_period": dated_out,
        "unplaced": unplaced,
        "groups_apart": apart,
        "sub_task_axes": {st.id: axis_of[st.id] for st in settled.sub_tasks} if axes else {},
    }
    settled = settled.model_copy(update={"reading": report})
    return Decision(
        settled,
        [
            *ignored,
            *reading_alerts(
                added, removed, dated_out, unplaced, groups, apart, sorted(set(overruled) & placed_now)
            ),
        ],
    )


def _flags(plan: Plan, st: SubTask) -> dict[str, str]:
    flags = {k: v for s in plan.sub_tasks for k, v in s.flags.items()}
    return {i: flags[i] for i in st.doc_ids if i in flags}


def read_by_text(
    outcome: PlanOutcome,
    data: PlannerInput,
    bodies: Mapping[str, str],
    reading: RequestReadingLike | None = None,
    budget: int | None = None,
    screen: CodeProposal | None = None,
) -> PlanOutcome:
    """``outcome`` (veille.steps.plan.make_plan's) settled by :func:`decide_reading`, for every
    backend. ``reading``: the request read once (branch ``request``); by default
    :func:`interim_reading` over the request terms and the planner's search terms. ``screen``:
    code's own proposal (veille.steps.plan_screen), by default the deterministic engine's."""
    if screen is None:
        screen = code_proposal(data, bodies, proposed=outcome.proposed)
    interim = interim_reading(data.request_title, data.request, data.terms, outcome.proposed.sub_tasks)
    if reading is None:
        reading = interim
    elif not reading.axes:  # a reading without an axis reads the request whole (the interim's axes)
        reading = InterimReading(
            interim.axes, tuple(reading.options), reading.period_start, reading.period_end
        )
    decision = decide_reading(
        outcome.plan,
        data.catalogue,
        bodies,
        reading,
        request_title=data.request_title,
        request=data.request,
        max_subtasks=data.max_subtasks,
        max_docs=data.max_docs,
        proposed=outcome.proposed,
        screen=screen,
    )
    plan = decision.plan
    # The plan as validated, before code settled what is read: a later night reuses it (issue 13),
    # so one new document is placed in the planner's plan and settled again, not squeezed into
    # branches code filled up to their caps (which re-planned the whole night).
    validated = outcome.plan.model_dump(include={"sub_tasks", "excluded", "exclusions"})
    plan = plan.model_copy(update={"reading": {**plan.reading, "validated": validated}})
    if budget is not None and plan.reading:
        plan = plan.model_copy(update={"reading": {**plan.reading, **reading_forecast(plan, bodies, budget)}})
    return outcome.model_copy(update={"plan": plan, "alerts": [*outcome.alerts, *decision.alerts]})
