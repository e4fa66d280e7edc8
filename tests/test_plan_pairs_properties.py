"""Property tests: both sides of a same-measure pair in one branch, whatever the plan (issue 37, item 3).

Over generated corpora (documents naming a compared option and an axis term, filler notes, and
families of two to six documents stating one measure of one option, each at its own date and from
one of two kinds of source) and generated planner plans — a sensible one (ids in order, sub-tasks
filled up to the cap), one sub-task, one that splits every family across sub-tasks on purpose, one
of invented ids (unusable: the plan step's code plan) — after
:func:`veille.steps.plan_reading.decide_reading`:

- every two documents of one family (the same measure of the same option, found by code from the
  text) are read by one branch; the planners here exclude nothing, so every family member is read;
- that branch reads each side whole or through sections stating the measure, and no branch reads
  more than ``max_docs`` documents whole (a co-read shows a few sections of a document another
  branch reads: veille.steps.plan_groups.co_read_pairs);
- the result does not depend on the order of the files.

On main before this test, a family of five or more documents (bounded groups, ``max_group_docs``)
or a group no branch had room for was read apart.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.corpus.sections import split_sections
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
FILLER = ["le", "service", "reste", "disponible", "selon", "notre", "équipe", "depuis", "les", "usagers"]
MEASURES = ["poids", "autonomie", "consommation", "encombrement"]  # words no axis uses
UNITS = ["kg", "h", "W", "m"]
KINDS = ["note", "article"]
MAX_SUBTASKS, MAX_DOCS = 6, 8
READING = InterimReading(AXES, OPTIONS)


# The strategies drawn from in every example, built once: building one (hypothesis validates it and
# computes its recursive properties) cost more CPU than drawing from it, and a strategy is an
# immutable description of values, so the examples are the same.
_TERM = st.sampled_from(AXIS_WORDS)
_OPTION = st.sampled_from(OPTIONS)
_KIND = st.sampled_from(KINDS)
_FAMILY_WORDS = st.lists(st.sampled_from(FILLER), min_size=3, max_size=8)
_NOTE_WORDS = st.lists(st.sampled_from(FILLER), min_size=4, max_size=10)
_PROPOSAL_KIND = st.sampled_from(["sensible", "one sub-task", "splits pairs", "invented ids"])


@st.composite
def corpora(
    draw: st.DrawFn,
) -> tuple[list[CatalogueEntry], dict[str, str], list[list[str]]]:
    """(catalogue, bodies, families: ids stating one measure of one option)."""
    entries: list[CatalogueEntry] = []
    bodies: dict[str, str] = {}

    def add(body: str, date: str, kind: str) -> str:
        doc_id = f"doc-{len(entries) + 1:02d}"
        bodies[doc_id] = body
        entries.append(CatalogueEntry(id=doc_id, date=date, source_type=kind, title="Fiche"))
        return doc_id

    families: list[list[str]] = []
    count = draw(st.integers(min_value=1, max_value=3))
    for k in range(count):
        option, measure, unit = OPTIONS[k], MEASURES[k], UNITS[k]
        size = draw(st.integers(min_value=2, max_value=6))
        family = []
        for n in range(size):
            term = draw(_TERM)
            words = draw(_FAMILY_WORDS)
            body = (
                f"## Contexte\n\n{' '.join(words).capitalize()} {option} et la {term}.\n\n"
                f"## Mesure\n\nLe {measure} mesuré de {option} atteint {10 + n} {unit} selon la {term}."
            )
            family.append(add(body, f"{2020 + n}-0{k + 1}-15", draw(_KIND)))
        families.append(family)
    for _ in range(draw(st.integers(min_value=0, max_value=8))):  # notes naming an option, no measure
        option, term = draw(_OPTION), draw(_TERM)
        words = draw(_NOTE_WORDS)
        add(f"## Note\n\n{' '.join(words).capitalize()} {option} pour la {term}.", "2025-05-01", "note")
    order = draw(st.permutations(range(len(entries))))  # families and notes interleaved in id order
    renamed = {entries[i].id: f"doc-{n + 1:02d}" for n, i in enumerate(order)}
    entries = [e.model_copy(update={"id": renamed[e.id]}) for e in entries]
    bodies = {renamed[i]: b for i, b in bodies.items()}
    return entries, bodies, [sorted(renamed[i] for i in f) for f in families]


@st.composite
def proposals(draw: st.DrawFn, ids: list[str], families: list[list[str]]) -> Plan:
    """A planner's answer over ``ids`` (validated as the plan step does)."""
    kind = draw(_PROPOSAL_KIND)
    ordered = sorted(ids)
    if kind == "sensible":
        chunks = [ordered[k : k + MAX_DOCS] for k in range(0, len(ordered), MAX_DOCS)][:MAX_SUBTASKS]
    elif kind == "one sub-task":
        chunks = [ordered[:MAX_DOCS]]
    elif kind == "splits pairs":  # the n-th member of every family in sub-task n: every pair split
        chunks = [[f[n] for f in families if n < len(f)] for n in range(MAX_SUBTASKS)]
        chunks = [c for c in chunks if c]
    else:
        chunks = [["doc-404", "note-x"]]
    sub_tasks = [
        SubTask(id=f"st-{k}", question=f"Question {k} ?", doc_ids=c) for k, c in enumerate(chunks, 1)
    ]
    try:
        plan, _ = validate_plan(Plan(sub_tasks=sub_tasks), ids, max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS)
    except PlanUnusableError:  # the plan step's code plan then: one sub-task with the first id
        code = [SubTask(id="st-1", question="Q ?", doc_ids=ordered[:1])]
        plan, _ = validate_plan(Plan(sub_tasks=code), ids, max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS)
    return plan


def _decide(plan: Plan, entries: list[CatalogueEntry], bodies: dict[str, str]) -> Plan:
    return decide_reading(
        plan, entries, bodies, READING, request_title="Zorblax, Quimby ou Vantel ?",
        max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS,
    ).plan  # fmt: skip


_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_every_same_measure_pair_is_read_by_one_branch(data: st.DataObject) -> None:
    entries, bodies, families = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids, families))
    plan = _decide(proposal, entries, bodies)
    used = {i for s in plan.sub_tasks for i in s.doc_ids}
    assert used | set(plan.excluded) == set(ids) and not used & set(plan.excluded)
    assert len(plan.sub_tasks) <= MAX_SUBTASKS
    for s in plan.sub_tasks:  # co-reads are sections of documents another branch reads
        assert len([i for i in s.doc_ids if i not in s.passages]) <= MAX_DOCS, s
        assert set(s.passages) <= set(s.doc_ids)
        for doc_id in s.passages:
            assert any(doc_id in o.doc_ids and o is not s for o in plan.sub_tasks), (doc_id, plan.sub_tasks)
    for family in families:
        assert set(family) <= used, (family, plan)
        for a, b in itertools.combinations(family, 2):
            assert any({a, b} <= set(s.doc_ids) for s in plan.sub_tasks), (a, b, plan.sub_tasks)
    assert not plan.reading["groups_apart"], plan.reading


def _shows_measure(s: SubTask, doc_id: str, body: str) -> bool:
    """Whether branch ``s`` reads ``doc_id`` whole, or through sections holding its measure."""
    if doc_id not in s.doc_ids:
        return False
    if doc_id not in s.passages:
        return True
    return any("mesuré de" in x.text(body) for x in split_sections(body) if x.n in s.passages[doc_id])


@_SETTINGS
@given(st.data())
def test_one_branch_reads_both_sides_on_their_measure(data: st.DataObject) -> None:
    """Together means reading both statements: a side shown to the branch only through sections
    of its axis (veille.steps.plan_reading) must include the sections stating the measure."""
    entries, bodies, families = data.draw(corpora())
    ids = [e.id for e in entries]
    plan = _decide(data.draw(proposals(ids, families)), entries, bodies)
    for family in families:
        for a, b in itertools.combinations(family, 2):
            assert any(
                _shows_measure(s, a, bodies[a]) and _shows_measure(s, b, bodies[b]) for s in plan.sub_tasks
            ), (a, b, plan.sub_tasks)


@_SETTINGS
@given(st.data())
def test_pairs_do_not_depend_on_the_order_of_the_files(data: st.DataObject) -> None:
    entries, bodies, families = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids, families))
    shuffled = data.draw(st.permutations(entries))
    one = _decide(proposal, entries, bodies)
    two = _decide(proposal, list(shuffled), dict(reversed(list(bodies.items()))))
    assert [(s.question, s.doc_ids, s.passages) for s in one.sub_tasks] == [
        (s.question, s.doc_ids, s.passages) for s in two.sub_tasks
    ]
    assert one.reading == two.reading
