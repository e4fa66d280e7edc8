"""Property tests of the planner's proposal honoured where the text supports it, both ways (issue 37,
item 2; veille.steps.plan_honour, veille.steps.option_sense).

Over generated corpora (documents on the request's subject whose axis passage names a compared
option, documents of another field, and homonyms: another field's sheets sharing an option's name)
and generated planner answers (any placement, any explicit exclusions), after
:func:`veille.steps.plan_reading.decide_reading`:

- a document the planner explicitly excluded whose text carries the request's subject and has a
  passage relevant to an axis is still read, and ``reading.overruled`` says why;
- a document carrying neither the subject nor an axis passage that the planner placed is removed;
- a homonym the planner excluded stays out (its shared name is no text support);
- the result does not depend on the order of the files.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_plan_reading_subject import (
    AXES,
    FILLER,
    MAX_DOCS,
    MAX_SUBTASKS,
    OTHER_FIELD,
    REQUEST,
    SUBJECT,
    TITLE,
    Reading,
    proposals,
)
from veille.roles.planner import CatalogueEntry, Plan, SubTask
from veille.run.summary import format_summary
from veille.steps.option_sense import measure_option_sense
from veille.steps.passages import passages_of
from veille.steps.plan_reading import decide_reading
from veille.steps.plan_validate import validate_plan

OPTIONS = ("Zorblax", "Quimby")
# The field's vocabulary, shared in part by the sheets on the subject (as a corpus's documents share
# their field's words beyond the request's).
HIVE = ["miel", "reine", "colonie", "cadre", "hausse", "nectar", "pollen", "abeille", "varroa", "enfumoir"]
# A homonym's field: none of the subject's words, none of the filler's.
HOMONYM_FIELD = ["voilier", "drisse", "régate", "marina", "spinnaker", "quille", "écoute", "winch"]


def _sentence(words: list[str]) -> str:
    return " ".join(words).capitalize() + "."


# The strategies drawn from in every example, built once: building one (hypothesis validates it and
# computes its recursive properties) cost more CPU than drawing from it, and a strategy is an
# immutable description of values, so the examples are the same.
_FILL = st.lists(st.sampled_from(FILLER), min_size=3, max_size=5)
_FIELD = st.lists(st.sampled_from(HIVE), min_size=3, max_size=6, unique=True)


@st.composite
def on_subject(draw: st.DrawFn, option: str) -> str:
    """A sheet on the subject: a passage on it (filler varying), one stating the option's measured
    yield and abandon — every such sheet's axis passage alike, so each scores as relevant to both
    axes (the corpus's typical option-naming passage on them)."""
    fill = draw(_FILL)
    field = draw(_FIELD)
    first = _sentence([*fill[:2], *SUBJECT, *field, *fill[2:]])
    return (
        f"## Présentation\n\n{first}\n\n## Bilan\n\n{_sentence([option, 'rendement', 'mesuré', 'abandon'])}"
    )


def _neither() -> str:
    """A sheet of another field, long enough to judge, without an axis's word or an option."""
    return "## Note\n\n" + " ".join(_sentence([*OTHER_FIELD, *FILLER]) for _ in range(4))


def _homonym(option: str) -> str:
    """Another field's sheet named like an option, whose section on that field uses an axis word
    (in a longer passage than a sheet on the subject's: it scores lower on the axis)."""
    sail = " ".join(_sentence([option, *HOMONYM_FIELD]) for _ in range(3))
    return f"## {option}\n\n{sail}\n\n## Bilan\n\n{_sentence([option, *HOMONYM_FIELD, 'rendement'])}"


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[CatalogueEntry], dict[str, str], set[str], set[str], set[str]]:
    """(catalogue, bodies, on the subject, neither, homonyms): at least two documents on the subject,
    each naming an option in its axis passage."""
    n_on = draw(st.integers(2, 6))
    # Homonyms are fewer than the sheets on the subject: the name's sense is the corpus's majority one.
    kinds = draw(
        st.permutations(
            ["on"] * n_on
            + ["neither"] * draw(st.integers(1, 3))
            + ["homonym"] * draw(st.integers(0, min(2, n_on - 1)))
        )
    )
    entries, bodies = [], {}
    groups: dict[str, set[str]] = {"on": set(), "neither": set(), "homonym": set()}
    for i, kind in enumerate(kinds, 1):
        doc_id = f"doc-{i:02d}"
        option = draw(st.sampled_from(OPTIONS))
        if kind == "on":
            bodies[doc_id] = draw(on_subject(option))
        elif kind == "neither":
            bodies[doc_id] = _neither()
        else:
            bodies[doc_id] = _homonym(option)
        groups[kind].add(doc_id)
        entries.append(CatalogueEntry(id=doc_id, date="date inconnue", source_type="note", title="Fiche"))
    return entries, bodies, groups["on"], groups["neither"], groups["homonym"]


@st.composite
def excluding(draw: st.DrawFn, ids: list[str], out: set[str]) -> Plan:
    """A planner answer over ``ids`` that explicitly excludes ``out`` (and places none of it)."""
    plan = draw(proposals(ids))
    sub_tasks = [
        s.model_copy(update={"doc_ids": [d for d in s.doc_ids if d not in out]}) for s in plan.sub_tasks
    ]
    sub_tasks = [s for s in sub_tasks if s.doc_ids] or [
        plan.sub_tasks[0].model_copy(update={"doc_ids": [next(i for i in ids if i not in out)]})
    ]
    validated, _ = validate_plan(
        Plan(sub_tasks=sub_tasks, excluded=sorted(out)), ids, max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS
    )
    return validated


def _decide(plan: Plan, entries: list[CatalogueEntry], bodies: dict[str, str], kind: str) -> Plan:
    return decide_reading(
        plan, entries, bodies, Reading(AXES, OPTIONS, kind=kind), request_title=TITLE, request=REQUEST,
        max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS,
    ).plan  # fmt: skip


def _used(plan: Plan) -> set[str]:
    return {i for s in plan.sub_tasks for i in s.doc_ids}


_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KINDS = st.sampled_from(["survey", "choice", "inventory"])


@_SETTINGS
@given(st.data())
def test_a_planner_excluding_a_document_the_text_supports_does_not_keep_it_out(data: st.DataObject) -> None:
    entries, bodies, on, _, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    out = data.draw(st.sets(st.sampled_from(sorted(on)), min_size=1, max_size=len(on) - 1))
    proposal = data.draw(excluding(ids, out))
    plan = _decide(proposal, entries, bodies, data.draw(KINDS))
    used = _used(plan)
    assert on <= used, (sorted(on - used), sorted(out), plan)
    overruled = plan.reading["overruled"]
    # Only the planner's own exclusions are said overruled (a plan reading less than half of what the
    # text asks for has nothing honoured, so nothing to overrule); each with its reason.
    assert set(overruled) <= out, (overruled, sorted(out))
    assert all("planificateur" in why for why in overruled.values())


@_SETTINGS
@given(st.data())
def test_a_placed_document_with_neither_subject_nor_axis_passage_is_removed(data: st.DataObject) -> None:
    entries, bodies, on, neither, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    proposal = data.draw(proposals(ids))
    plan = _decide(proposal, entries, bodies, data.draw(KINDS))
    used = _used(plan)
    assert not used & neither, (sorted(used & neither), plan)
    placed = {i for s in proposal.sub_tasks for i in s.doc_ids}
    reasons = {e.id: e.reason for e in plan.exclusions}
    assert all(reasons[i] == "no_relevant_passage" for i in placed & neither), reasons
    assert not set(plan.reading["overruled"]) - on


@_SETTINGS
@given(st.data())
def test_a_homonym_the_planner_excluded_stays_out(data: st.DataObject) -> None:
    """A sensible planner (it places the sheets on the subject, in any order and grouping) excluding
    the homonyms: they stay out, though they name an option beside an axis's word."""
    entries, bodies, on, neither, homonyms = data.draw(corpora())
    ids = [e.id for e in entries]
    order = data.draw(st.permutations(sorted(on)))
    size = data.draw(st.integers(1, MAX_DOCS))
    sub_tasks = [
        SubTask(
            id=f"st-{k + 1}", question=f"Question {k + 1} ?", doc_ids=list(order[k * size : (k + 1) * size])
        )
        for k in range((len(order) + size - 1) // size)
    ]
    out = homonyms | data.draw(st.sets(st.sampled_from(sorted(neither))))
    proposal, _ = validate_plan(
        Plan(sub_tasks=sub_tasks, excluded=sorted(out)), ids, max_subtasks=MAX_SUBTASKS, max_docs=MAX_DOCS
    )
    # An inventory reads every document carrying the subject, which naming an option does: not here.
    plan = _decide(proposal, entries, bodies, data.draw(st.sampled_from(["survey", "choice"])))
    used = _used(plan)
    assert not used & homonyms, (sorted(used & homonyms), plan.reading)
    assert on <= used, (sorted(on - used), plan.reading)
    assert not set(plan.reading["overruled"]) & homonyms


@_SETTINGS
@given(st.data())
def test_honouring_does_not_depend_on_the_order_of_the_files(data: st.DataObject) -> None:
    entries, bodies, on, _, _ = data.draw(corpora())
    ids = [e.id for e in entries]
    out = data.draw(st.sets(st.sampled_from(sorted(on)), min_size=1, max_size=len(on) - 1))
    proposal = data.draw(excluding(ids, out))
    kind = data.draw(KINDS)
    one = _decide(proposal, entries, bodies, kind)
    two = _decide(
        proposal, list(data.draw(st.permutations(entries))), dict(reversed(list(bodies.items()))), kind
    )
    assert [(s.question, s.doc_ids) for s in one.sub_tasks] == [
        (s.question, s.doc_ids) for s in two.sub_tasks
    ]
    assert {e.id: e.reason for e in one.exclusions} == {e.id: e.reason for e in two.exclusions}
    assert one.reading == two.reading


@_SETTINGS
@given(st.data())
def test_option_sense_doubts_the_homonyms_only_and_never_a_document_naming_two_options(
    data: st.DataObject,
) -> None:
    """A lone homonym among sheets on the subject is doubtful, they are not (two homonyms of one sense
    vouch for each other in part: the measure assumes the name's sense is the corpus's majority one)."""
    entries, bodies, _, neither, homonyms = data.draw(corpora())
    for doc_id in sorted(homonyms)[1:]:
        del bodies[doc_id]
    entries = [e for e in entries if e.id in bodies]
    heads = {e.id: e.title for e in entries}
    passages = passages_of(bodies, heads, OPTIONS)
    doubtful = measure_option_sense(passages, OPTIONS).doubtful()
    assert doubtful == set(sorted(homonyms)[:1]), (sorted(doubtful), sorted(homonyms))
    shuffled = list(data.draw(st.permutations(passages)))
    assert measure_option_sense(shuffled, OPTIONS).doubtful() == doubtful
    # A homonym's words naming both compared options: a homonym shares one name by chance, not two.
    two = "doc-99"
    bodies[two] = _homonym(OPTIONS[0]) + f" {OPTIONS[1]}."
    passages = passages_of(bodies, heads | {two: "Fiche"}, OPTIONS)
    assert two not in measure_option_sense(passages, OPTIONS).doubtful()
    assert not neither & measure_option_sense(passages, OPTIONS).doubtful()


def test_an_overruled_exclusion_is_said_with_its_reason_and_a_homonyms_stands() -> None:
    """A sensible plan (it reads every other sheet on the subject) excluding one sheet on the subject
    and one homonym: the sheet is read and said overruled, the homonym stays out as excluded."""
    ids = [f"doc-{n:02d}" for n in range(1, 7)]
    bodies = {
        i: f"## Présentation\n\n{_sentence(['le', 'service', *SUBJECT, 'depuis', 'mars'])}\n\n"
        f"## Bilan\n\n{_sentence([OPTIONS[n % 2], 'rendement', 'mesuré', 'abandon'])}"
        for n, i in enumerate(ids[:5])
    }
    bodies["doc-06"] = _homonym(OPTIONS[0])
    entries = [CatalogueEntry(id=i, date="date inconnue", source_type="note", title="Fiche") for i in ids]
    proposal, _ = validate_plan(
        Plan(
            sub_tasks=[SubTask(id="st-1", question="Rendements ?", doc_ids=ids[1:5])],
            excluded=["doc-01", "doc-06"],
        ),
        ids,
        max_subtasks=MAX_SUBTASKS,
        max_docs=MAX_DOCS,
    )
    plan = _decide(proposal, entries, bodies, "choice")
    assert _used(plan) == set(ids[:5])
    assert list(plan.reading["overruled"]) == ["doc-01"]
    assert "sujet de la demande" in plan.reading["overruled"]["doc-01"]
    assert {e.id: e.reason for e in plan.exclusions} == {"doc-06": "planner_excluded"}


def test_the_summary_names_the_overruled_exclusions(tmp_path: Path) -> None:
    """The run summary says which planner exclusions the text overruled (plan.json ``reading``)."""
    why = "exclu par le planificateur, lu quand même : son texte porte le sujet de la demande"
    plan = {"sub_tasks": [], "excluded": [], "reading": {"overruled": {"doc-07": why, "doc-03": why}}}
    (tmp_path / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    lines = [line for line in format_summary(tmp_path).splitlines() if "exclusion du planificateur" in line]
    assert len(lines) == 1 and lines[0].endswith(": doc-03, doc-07"), lines
