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
  coverage both ways. What the planner placed and the text supports stays where it put it.

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
from typing import Any

from veille.alerts import Alert, alert
from veille.corpus.sections import read_within_budget
from veille.roles.planner import CatalogueEntry, ExclusionReason, Plan, PlannerInput, SubTask
from veille.steps.passages import PassageScores, passage_setting, passages_of, score_axes, term_keys
from veille.steps.plan import PlanOutcome
from veille.steps.plan_alerts import LOW_COVERAGE
from veille.steps.plan_assign import Branch, assign_branches
from veille.steps.plan_groups import DocumentFacts, co_read_pairs, same_subject_groups
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
from veille.steps.reading import reading_query
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


def _relevant(scores: PassageScores, has_options: bool) -> dict[str, set[str]]:
    """Per axis key, the documents with a passage about that axis: a share of the corpus reference
    at least the bar (higher for a passage naming no option), and at least ``axis_margin`` of the
    passage's best axis (a passage on prices is not read for security because it says « sûr »)."""
    with_option = passage_setting("relevant_with_option")
    without = passage_setting("relevant_without_option")
    margin = passage_setting("axis_margin")
    out: dict[str, set[str]] = {k: set() for k in scores.shares}
    for n, passage in enumerate(scores.passages):
        bar = with_option if passage.options or not has_options else without
        best = max((s[n] for s in scores.shares.values()), default=0.0)
        for key, shares in scores.shares.items():
            if shares[n] >= bar and shares[n] >= margin * best:
                out[key].add(passage.doc_id)
    return out


def _axis_sections(
    scores: PassageScores, axes: Sequence[AxisProtocol], relevant: Mapping[str, set[str]]
) -> dict[str, dict[str, list[int]]]:
    """Per axis key and document, the numbers of its sections about the axis: those naming an
    option and one of the axis's terms, and the best-scoring section on the axis of each document
    relevant to it (at least one, so a document read for an axis shows what made it relevant)."""
    out: dict[str, dict[str, list[int]]] = {a.key: {} for a in axes}
    for axis in axes:
        keys = [term_keys(t) for t in axis.terms]
        shares = scores.shares[axis.key]
        best: dict[str, tuple[float, int]] = {}
        for n, passage in enumerate(scores.passages):
            if passage.doc_id not in relevant[axis.key]:
                continue
            if passage.options and passage.names_terms(keys):
                out[axis.key].setdefault(passage.doc_id, []).append(passage.n)
            if passage.doc_id not in best or shares[n] > best[passage.doc_id][0]:
                best[passage.doc_id] = (shares[n], passage.n)
        for doc_id, (_, n) in best.items():
            found = out[axis.key].setdefault(doc_id, [])
            if n not in found:
                found.append(n)
    return {k: {d: sorted(ns) for d, ns in v.items()} for k, v in out.items()}


def _passages(
    st: SubTask, axis: str, final: Sequence[SubTask], plan: Plan, sections: Mapping[str, dict[str, list[int]]]
) -> dict[str, list[int]]:
    """The sections ``st`` reads of each document code added to it that a branch the planner chose
    for that document reads whole: each branch reads what answers its axis, nothing is lost."""
    chosen = {d: {p.question for p in plan.sub_tasks if d in p.doc_ids} for d in st.doc_ids}
    out: dict[str, list[int]] = {}
    for doc_id in st.doc_ids:
        if st.question in chosen[doc_id] or doc_id not in sections.get(axis, {}):
            continue  # the planner's own choice, or no section of the axis: read whole
        if any(o is not st and doc_id in o.doc_ids and o.question in chosen[doc_id] for o in final):
            out[doc_id] = sections[axis][doc_id]
    return out


def _must_read(scores: PassageScores, axes: Sequence[AxisProtocol]) -> dict[str, str]:
    """Documents with a passage naming an option and one of an axis's terms -> the axis their best
    such passage scores highest on: read by some branch whatever their score (property-tested)."""
    out: dict[str, tuple[float, str]] = {}
    for n, passage in enumerate(scores.passages):
        if not passage.options:
            continue
        for axis in axes:
            if passage.names_terms([term_keys(t) for t in axis.terms]):
                share = scores.shares[axis.key][n]
                if passage.doc_id not in out or share > out[passage.doc_id][0]:
                    out[passage.doc_id] = (share, axis.key)
    return {d: k for d, (_, k) in out.items()}


def _question(request_title: str, axis: AxisProtocol) -> str:
    title = request_title.strip().rstrip("?!. ")
    context = f"Dans le cadre de « {title} », q" if title else "Q"
    return f"{context}ue disent les documents sur : {axis.title.strip().rstrip('.?')} ?"


def _axis_of(st: SubTask, axes: Sequence[AxisProtocol], relevant: Mapping[str, set[str]]) -> str:
    """The axis a planner's sub-task serves: the share of the axis's words its question and search
    terms use (the planner's framing is honoured), then how many of its documents are relevant to
    the axis, then request order."""
    words = set().union(*(term_keys(t) for t in (st.question, *st.search_terms)))

    def rank(k: int) -> tuple[float, int, int]:
        axis = axes[k]
        own = set().union(*(term_keys(t) for t in axis.terms))
        overlap = len(words & own) / len(own) if own else 0.0
        return (overlap, len(set(st.doc_ids) & relevant[axis.key]), -k)

    return axes[max(range(len(axes)), key=rank)].key


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
    relevant = _relevant(scores, bool(options))
    # An axis's words are written in documents of every field: a document is read for an axis only
    # when it carries the request's subject too (veille.steps.subject; naming an option does).
    subject = measure_subject(passages, subject_keys(request_title, request, axes, options))
    relevant = {k: {i for i in docs if subject.carries(i)} for k, docs in relevant.items()}
    spared = set().union(*relevant.values()) | subject.by_words()  # their own words carry the subject
    for doc_id, axis_key in _must_read(scores, axes).items():
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
    wanted -= out.wanted
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
            _axis_of(st, axes, relevant), st.question, [d for d in st.doc_ids if d in read], st.search_terms
        )
        for st in plan.sub_tasks
    ]
    needed = {a.key: sorted(relevant[a.key] & read) for a in axes} if measured else {}
    questions = {a.key: _question(request_title, a) for a in axes}
    sub_tasks, unplaced, apart, axis_of = assign_branches(
        branches, needed, groups, read, questions, max_subtasks=max_subtasks, max_docs=max_docs
    )
    # Each branch ranks its passages by its axis: the planner's search terms and the axis's terms.
    terms = {a.key: list(a.terms) for a in axes}
    sections = _axis_sections(scores, axes, relevant)
    sub_tasks = [
        st.model_copy(
            update={
                "flags": _flags(plan, st),
                "search_terms": list(dict.fromkeys([*st.search_terms, *terms[axis_of[st.id]]])),
                "passages": _passages(st, axis_of[st.id], sub_tasks, plan, sections),
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
        "added": added,
        "removed": removed,
        "out_of_period": dated_out,
        "unplaced": unplaced,
        "groups_apart": apart,
        "sub_task_axes": {st.id: axis_of[st.id] for st in settled.sub_tasks} if axes else {},
    }
    settled = settled.model_copy(update={"reading": report})
    return Decision(settled, [*ignored, *reading_alerts(added, removed, dated_out, unplaced, groups, apart)])


def _flags(plan: Plan, st: SubTask) -> dict[str, str]:
    flags = {k: v for s in plan.sub_tasks for k, v in s.flags.items()}
    return {i: flags[i] for i in st.doc_ids if i in flags}


def reading_forecast(plan: Plan, bodies: Mapping[str, str], budget: int) -> dict[str, Any]:
    """What each branch's analyst will not read whole within ``budget`` tokens (the same function
    the analyst uses, veille.steps.reading): ``{"budget": N, "not_read": {st: {doc: {...}}}}``."""
    not_read: dict[str, dict[str, dict[str, int]]] = {}
    for st in plan.sub_tasks:
        readings = read_within_budget({i: bodies.get(i, "") for i in st.doc_ids}, reading_query(st), budget)
        parts = {
            i: {"tokens_read": r.tokens_read, "tokens_total": r.tokens_total}
            for i, r in sorted(readings.items())
            if not r.whole
        }
        if parts:
            not_read[st.id] = parts
    return {"budget": budget, "not_read": not_read}


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
