"""Property tests of the request's subject in what code reads (issue 37: relevance needs the subject).

Over generated corpora (documents on the request's subject or on another field, each with a passage
naming an axis's term or not, lengths varying) and arbitrary planner plans, after
:func:`veille.steps.plan_reading.decide_reading`:

- a document with an axis's words but none of the request's subject words is never read, whatever
  the planner placed (it is long enough for the absence to mean something);
- in an inventory, every document carrying the subject is read (one entry per item found), whatever
  the planner placed or excluded;
- for any kind of request, a document on the subject whose axis passage names a compared option is
  read, unless the planner explicitly excluded it;
- the result does not depend on the order of the files.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veille.roles.planner import CatalogueEntry, Plan, SubTask
from veille.steps.plan_reading import InterimAxis, decide_reading
from veille.steps.plan_validate import PlanUnusableError, validate_plan

TITLE = "Apiculture urbaine : inventaire des ruchers"
REQUEST = (
    "Recense les ruchers d'apiculture urbaine et leurs essaims : leurs rendements mesurés et leurs abandons."
)
AXES = (
    InterimAxis("axe-1", "Rendements mesurés", ("rendement", "mesuré")),
    InterimAxis("axe-2", "Abandons", ("abandon",)),
)
SUBJECT = ["ruchers", "apiculture", "urbaine", "essaims"]
OTHER_FIELD = ["cantine", "parking", "vélos", "badge", "séminaire", "jardin", "couloir", "menu"]
FILLER = ["le", "service", "reste", "disponible", "selon", "depuis", "mars", "les", "usagers", "quartier"]
AXIS_WORDS = ["rendement", "mesuré", "abandon"]
MAX_SUBTASKS, MAX_DOCS = 6, 8


@dataclass(frozen=True)
class Reading:
    """A request reading as veille.corpus.request_reading gives it (no option, no period)."""

    axes: tuple[InterimAxis, ...]
    options: tuple[str, ...] = ()
    period_start: datetime.date | None = None
    period_end: datetime.date | None = None
    kind: str = "survey"


def _sentence(words: list[str]) -> str:
    return " ".join(words).capitalize() + "."


# The strategies drawn from in every example, built once: building one (hypothesis validates it and
# computes its recursive properties) cost more CPU than drawing from it, and a strategy is an
# immutable description of values, so the examples are the same.
_FILL = st.lists(st.sampled_from(FILLER), min_size=3, max_size=5)
_TERM = st.sampled_from(AXIS_WORDS)


@st.composite
def documents(draw: st.DrawFn, on_subject: bool, option: str = "") -> str:
    """A sheet: a passage on its field (the subject's words or another field's), one on an axis
    (naming ``option`` when given)."""
    field = SUBJECT if on_subject else OTHER_FIELD[:4]
    fill = draw(_FILL)
    first = _sentence([*fill[:2], *field, *fill[2:]])
    term = draw(_TERM)
    named = [option] if option else []
    second = _sentence([*draw(_FILL), *named, term])
    # Another field's sheet is long: the absence of the subject's words then means something.
    extra = "" if on_subject else "\n\n" + " ".join(_sentence([*OTHER_FIELD, *FILLER]) for _ in range(3))
    return f"## Présentation\n\n{first}\n\n## Bilan\n\n{second}{extra}"


@st.composite
def corpora(
    draw: st.DrawFn, option: str = ""
) -> tuple[list[CatalogueEntry], dict[str, str], set[str], set[str]]:
    """(catalogue, bodies, documents on the subject, documents of another field); the documents on
    the subject name ``option`` in their axis passage when given."""
    n_on = draw(st.integers(min_value=1, max_value=7))
    n_off = draw(st.integers(min_value=1, max_value=4))
    kinds = draw(st.permutations([True] * n_on + [False] * n_off))
    entries, bodies, on, off = [], {}, set(), set()
    for i, on_subject in enumerate(kinds, 1):
        doc_id = f"doc-{i:02d}"
        bodies[doc_id] = draw(documents(on_subject, option if on_subject else ""))
        (on if on_subject else off).add(doc_id)
        entries.append(CatalogueEntry(id=doc_id, date="date inconnue", source_type="note", title="Fiche"))
    return entries, bodies, on, off


@st.composite
def proposals(draw: st.DrawFn, ids: list[str]) -> Plan:
    """Any planner answer over ``ids`` (validated as the plan step does)."""
    sub_tasks = [
        SubTask(
            id=f"st-{k}", question=f"Question {k} ?", doc_ids=draw(st.lists(st.sampled_from(ids), max_size=8))
        )
        for k in range(1, draw(st.integers(min_value=1, max_value=MAX_SUBTASKS)) + 1)
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
    plan: Plan,
    entries: list[CatalogueEntry],
    bodies: dict[str, str],
    kind: str,
    options: tuple[str, ...] = (),
) -> Plan:
    return decide_reading(
        plan, entries, bodies, Reading(AXES, options, kind=kind), request_title=TITLE, request=REQUEST,
        max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS,
    ).plan  # fmt: skip


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_axis_words_without_the_subject_are_never_read(data: st.DataObject) -> None:
    entries, bodies, _, off = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    kind = data.draw(st.sampled_from(["survey", "inventory"]))
    plan = _decide(proposal, entries, bodies, kind)
    used = {i for s in plan.sub_tasks for i in s.doc_ids}
    assert used | set(plan.excluded) == set(ids) and not used & set(plan.excluded)
    assert not used & off, (sorted(used & off), plan.reading.get("subject"), plan)


@_SETTINGS
@given(st.data())
def test_an_inventory_reads_every_document_carrying_the_subject(data: st.DataObject) -> None:
    entries, bodies, on, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    plan = _decide(proposal, entries, bodies, "inventory")
    used = {i for s in plan.sub_tasks for i in s.doc_ids}
    assert on <= used, (sorted(on - used), plan)  # whatever the planner placed or excluded
    assert len(plan.sub_tasks) <= MAX_SUBTASKS
    for s in plan.sub_tasks:  # max_docs bounds whole reads; a part read is a document another branch reads
        assert len([i for i in s.doc_ids if i not in s.passages]) <= MAX_DOCS, s
        assert all(any(i in o.doc_ids for o in plan.sub_tasks if o is not s) for i in s.passages), s


@_SETTINGS
@given(st.data())
def test_a_document_on_the_subject_with_an_axis_passage_naming_an_option_is_read(data: st.DataObject) -> None:
    """Any kind of request: a sheet on the subject whose axis passage names a compared option is read
    by some branch (unless the planner explicitly excluded it), the other field's sheets never."""
    entries, bodies, on, off = data.draw(corpora("Zorblax"))
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    kind = data.draw(st.sampled_from(["survey", "choice", "inventory"]))
    plan = _decide(proposal, entries, bodies, kind, ("Zorblax",))
    used = {i for s in plan.sub_tasks for i in s.doc_ids}
    explicitly_out = set(proposal.excluded) - {i for s in proposal.sub_tasks for i in s.doc_ids}
    assert on - explicitly_out <= used, (sorted(on - used), plan)
    assert not used & off, (sorted(used & off), plan)


@_SETTINGS
@given(st.data())
def test_the_subject_does_not_depend_on_the_order_of_the_files(data: st.DataObject) -> None:
    entries, bodies, _, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    kind = data.draw(st.sampled_from(["survey", "inventory"]))
    shuffled = data.draw(st.permutations(entries))
    one = _decide(proposal, entries, bodies, kind)
    two = _decide(proposal, list(shuffled), dict(reversed(list(bodies.items()))), kind)
    assert [(s.question, s.doc_ids) for s in one.sub_tasks] == [
        (s.question, s.doc_ids) for s in two.sub_tasks
    ]
    assert {e.id: e.reason for e in one.exclusions} == {e.id: e.reason for e in two.exclusions}
    assert one.reading == two.reading
