"""Property tests of what code decides each analyst reads (issue 37, items 2 and 3).

Over generated corpora (documents made of passages that name or not a compared option, an axis's
terms, filler words, and same-measure sentences at different dates) and arbitrary planner plans
(any subsets of the ids in any number of sub-tasks, any exclusions), after
:func:`veille.steps.plan_reading.decide_reading`:

- every document with a passage naming an option and an axis term is read by some branch, unless
  the planner explicitly excluded it (a homonym is written with the request's words: a sensible
  plan's exclusion stands; tests/test_plan_reading_gemini.py checks a planner excluding all);
- every generated same-measure pair (same option, same measure word, same unit, other date) sits
  in one branch;
- documents outside the request's period are read by none, excluded with reason ``out_of_period``;
- the caps hold, every id is accounted for once;
- the result does not depend on the order of the files.
"""

from __future__ import annotations

import datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.roles.planner import CatalogueEntry, Plan, SubTask
from veille.steps.plan_reading import InterimAxis, InterimReading, decide_reading
from veille.steps.plan_validate import PlanUnusableError, validate_plan

OPTIONS = ("Zorblax", "Quimby", "Vantel")
AXES = (
    InterimAxis("axe-1", "Latence et débit", ("latence", "débit")),
    InterimAxis("axe-2", "Coût des licences", ("licence", "tarif")),
    InterimAxis("axe-3", "Sécurité et correctifs", ("faille", "correctif")),
)
AXIS_WORDS = [t for a in AXES for t in a.terms]
FILLER = [
    "le",
    "service",
    "reste",
    "disponible",
    "selon",
    "notre",
    "équipe",
    "depuis",
    "mars",
    "les",
    "usagers",
]
OTHER = ["cantine", "menu", "parking", "vélos", "badge", "séminaire", "jardin", "couloir"]
MEASURES = ["poids", "autonomie", "consommation", "encombrement"]  # words no axis uses
MAX_SUBTASKS, MAX_DOCS = 6, 8


def _sentence(words: list[str]) -> str:
    return " ".join(words).capitalize() + "."


# The strategies drawn from in every example, built once: building one (hypothesis validates it and
# computes its recursive properties) cost more CPU than drawing from it, and a strategy is an
# immutable description of values, so the examples are the same.
_OPTION = st.sampled_from(["", *OPTIONS])
_TERM = st.sampled_from(["", *AXIS_WORDS])
_WORDS = st.lists(st.sampled_from(FILLER + OTHER), min_size=4, max_size=12)


@st.composite
def passages(draw: st.DrawFn) -> tuple[str, bool]:
    """One passage's text and whether it names an option and an axis term."""
    option = draw(_OPTION)
    term = draw(_TERM)
    words = draw(_WORDS)
    mixed = [*words[:2], *([option] if option else []), *words[2:5], *([term] if term else []), *words[5:]]
    return _sentence(mixed), bool(option and term)


_PARTS = st.lists(passages(), min_size=1, max_size=3)


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[CatalogueEntry], dict[str, str], set[str], list[tuple[str, str]]]:
    """(catalogue, bodies, ids that must be read, same-measure pairs)."""
    n = draw(st.integers(min_value=2, max_value=10))
    entries: list[CatalogueEntry] = []
    bodies: dict[str, str] = {}
    must: set[str] = set()
    for i in range(1, n + 1):
        doc_id = f"doc-{i:02d}"
        parts = draw(_PARTS)
        bodies[doc_id] = "\n\n".join(f"## Partie {k}\n\n{text}" for k, (text, _) in enumerate(parts, 1))
        if any(named for _, named in parts):
            must.add(doc_id)
        day = draw(st.integers(min_value=1, max_value=28))
        entries.append(CatalogueEntry(id=doc_id, date=f"2025-03-{day:02d}", source_type="note", title="Note"))
    pairs: list[tuple[str, str]] = []
    for k in range(draw(st.integers(min_value=0, max_value=2))):
        option, measure = OPTIONS[k], MEASURES[k]
        ids = []
        for year, value in ((2024, 12), (2025, 18)):
            doc_id = f"doc-{len(entries) + 1:02d}"
            bodies[doc_id] = (
                f"## Mesure\n\nLe {measure} mesuré de {option} atteint {value} kg selon le tarif de la licence."
            )
            entries.append(CatalogueEntry(id=doc_id, date=f"{year}-06-01", source_type="note", title="Fiche"))
            must.add(doc_id)
            ids.append(doc_id)
        pairs.append((ids[0], ids[1]))
    return entries, bodies, must, pairs


@st.composite
def proposals(draw: st.DrawFn, ids: list[str]) -> Plan:
    """Any planner answer over ``ids`` (validated as the plan step does), or a one-sub-task plan."""
    count = draw(st.integers(min_value=1, max_value=MAX_SUBTASKS))
    sub_tasks = [
        SubTask(
            id=f"st-{k}",
            question=f"Question {k} ?",
            doc_ids=draw(st.lists(st.sampled_from(ids), max_size=10)),
        )
        for k in range(1, count + 1)
    ]
    excluded = draw(st.lists(st.sampled_from(ids), max_size=3, unique=True))
    try:
        plan, _ = validate_plan(
            Plan(sub_tasks=sub_tasks, excluded=excluded), ids, max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS
        )
    except PlanUnusableError:  # the plan step's code plan then: one sub-task with the first id
        plan, _ = validate_plan(
            Plan(sub_tasks=[SubTask(id="st-1", question="Q ?", doc_ids=ids[:1])]),
            ids,
            max_subtasks=MAX_SUBTASKS,
            max_docs=MAX_DOCS,
        )
    return plan


def _decide(
    plan: Plan, entries: list[CatalogueEntry], bodies: dict[str, str], reading: InterimReading
) -> Plan:
    return decide_reading(
        plan, entries, bodies, reading, request_title="Zorblax, Quimby ou Vantel ?",
        max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS,
    ).plan  # fmt: skip


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_what_names_an_option_and_an_axis_is_read_and_pairs_sit_together(data: st.DataObject) -> None:
    entries, bodies, must, pairs = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    plan = _decide(proposal, entries, bodies, InterimReading(AXES, OPTIONS))
    used = {i for s in plan.sub_tasks for i in s.doc_ids}
    assert used | set(plan.excluded) == set(ids) and not used & set(plan.excluded)
    assert len(plan.sub_tasks) <= MAX_SUBTASKS
    for s in plan.sub_tasks:  # max_docs bounds whole reads; a part read is a document another branch reads
        assert len([i for i in s.doc_ids if i not in s.passages]) <= MAX_DOCS, s
        assert all(any(i in o.doc_ids for o in plan.sub_tasks if o is not s) for i in s.passages), s
    assert [s.id for s in plan.sub_tasks] == [f"st-{k}" for k in range(1, len(plan.sub_tasks) + 1)]
    explicitly_out = set(proposal.excluded) - {i for s in proposal.sub_tasks for i in s.doc_ids}
    for doc_id in must - explicitly_out:
        assert doc_id in used, (doc_id, bodies[doc_id], plan)
    for a, b in pairs:
        if a in used and b in used:
            assert any({a, b} <= set(s.doc_ids) for s in plan.sub_tasks), (a, b, plan.sub_tasks)
        else:  # only an explicit exclusion keeps a side out
            assert {a, b} - used <= explicitly_out


@_SETTINGS
@given(st.data())
def test_documents_outside_the_period_are_excluded_with_their_reason(data: st.DataObject) -> None:
    entries, bodies, _, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    start = datetime.date(2025, 3, data.draw(st.integers(min_value=1, max_value=28)))
    try:
        plan = _decide(proposal, entries, bodies, InterimReading(AXES, OPTIONS, period_start=start))
    except PlanUnusableError:  # refused only when everything the plan could read is out of period
        placed = {i for s in proposal.sub_tasks for i in s.doc_ids}
        dates = {e.id: datetime.date.fromisoformat(e.date) for e in entries}
        assert all(dates[i] < start for i in placed), (placed, start)
        return
    used = {i for s in plan.sub_tasks for i in s.doc_ids}
    reasons = {e.id: e.reason for e in plan.exclusions}
    # Not one dated document inside the period: it is set aside (plan.period_ignored), none excluded.
    set_aside = all(datetime.date.fromisoformat(e.date) < start for e in entries)
    for e in entries:
        if datetime.date.fromisoformat(e.date) < start and not set_aside:
            assert e.id not in used and reasons[e.id] == "out_of_period", (e, plan)
        else:
            assert reasons.get(e.id) != "out_of_period"


@_SETTINGS
@given(st.data())
def test_the_result_does_not_depend_on_the_order_of_the_files(data: st.DataObject) -> None:
    entries, bodies, _, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    shuffled = data.draw(st.permutations(entries))
    reversed_bodies = dict(reversed(list(bodies.items())))
    reading = InterimReading(AXES, OPTIONS)
    one = _decide(proposal, entries, bodies, reading)
    two = _decide(proposal, list(shuffled), reversed_bodies, reading)
    assert [(s.question, s.doc_ids) for s in one.sub_tasks] == [
        (s.question, s.doc_ids) for s in two.sub_tasks
    ]
    assert {e.id: e.reason for e in one.exclusions} == {e.id: e.reason for e in two.exclusions}
    assert one.reading == two.reading
