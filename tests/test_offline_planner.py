"""Offline planner: acceptance on the bundled corpus (read from reference/facts.yaml, not literals)
and behaviour on a synthetic corpus of another topic."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_offline_fixtures import (
    SYNTHETIC_DOCS,
    SYNTHETIC_EXCLUDE,
    SYNTHETIC_GROUPS,
    SYNTHETIC_KEEP,
    SYNTHETIC_REQUEST,
    SYNTHETIC_TERMS,
    SYNTHETIC_TITLE,
    bundled_facts,
    bundled_planner_input,
    synthetic_planner_input,
)
from veille.offline.authority import AuthorityRanking
from veille.offline.planner import plan
from veille.roles.planner import Plan, PlannerInput


def _check_plan_shape(result: Plan, data: PlannerInput) -> None:
    assert 1 <= len(result.sub_tasks) <= data.max_subtasks
    known = {e.id for e in data.catalogue}
    for st in result.sub_tasks:
        assert st.doc_ids, st
        assert len(st.doc_ids) <= data.max_docs, st
        assert len(st.doc_ids) == len(set(st.doc_ids))
        assert set(st.doc_ids) <= known
    planned = {i for st in result.sub_tasks for i in st.doc_ids}
    assert not planned & set(result.excluded)
    assert planned | set(result.excluded) == known  # every document is either planned or excluded


def _together(result: Plan, group: list[str]) -> bool:
    return any(set(group) <= set(st.doc_ids) for st in result.sub_tasks)


# --- bundled corpus ------------------------------------------------------------------------------


@pytest.mark.parametrize("with_summaries", [True, False], ids=["summaries", "titles-only"])
def test_bundled_corpus_plan_meets_the_reference(
    bundled_corpus: Path, authority: AuthorityRanking, with_summaries: bool
) -> None:
    facts = bundled_facts(bundled_corpus)
    data = bundled_planner_input(bundled_corpus, max_subtasks=6, max_docs=8)
    data = data.model_copy(update={"with_summaries": with_summaries})
    result = plan(data, authority.framing())
    _check_plan_shape(result, data)
    planned = {i for st in result.sub_tasks for i in st.doc_ids}
    assert set(facts["keep"]) <= planned, sorted(set(facts["keep"]) - planned)
    assert set(facts["exclude"]) <= set(result.excluded), sorted(set(facts["exclude"]) - set(result.excluded))
    for group in facts["groups"]:
        assert _together(result, group), (group, [st.doc_ids for st in result.sub_tasks])


def test_bundled_corpus_questions_are_autonomous(bundled_corpus: Path, authority: AuthorityRanking) -> None:
    data = bundled_planner_input(bundled_corpus)
    result = plan(data, authority.framing())
    for st in result.sub_tasks:
        # A full question that names what is compared, so an analyst who never sees the request can work.
        assert st.question.endswith("?")
        assert len(st.question.split()) >= 12
        for term in data.terms:
            assert term in st.question, (term, st.question)
    assert len({st.question for st in result.sub_tasks}) == len(result.sub_tasks)


# --- synthetic corpus ----------------------------------------------------------------------------


def test_synthetic_plan_groups_keeps_and_excludes(authority: AuthorityRanking) -> None:
    data = synthetic_planner_input()
    result = plan(data, authority.framing())
    _check_plan_shape(result, data)
    planned = {i for st in result.sub_tasks for i in st.doc_ids}
    assert planned == set(SYNTHETIC_KEEP)
    assert sorted(result.excluded) == sorted(SYNTHETIC_EXCLUDE)
    for group in SYNTHETIC_GROUPS:
        assert _together(result, group), group
    # One sub-task per axis of the request's bullet list.
    assert len(result.sub_tasks) == 4


def test_name_clash_alone_does_not_keep_a_document(authority: AuthorityRanking) -> None:
    result = plan(synthetic_planner_input(), authority.framing())
    # bk-13 and bk-14 name a request term (a fencing-sword part, a meeting room) and nothing else.
    assert {"bk-13", "bk-14"} <= set(result.excluded)


def test_framing_document_serves_both_axes_it_constrains(authority: AuthorityRanking) -> None:
    result = plan(synthetic_planner_input(), authority.framing())
    holding = [st for st in result.sub_tasks if "bk-07" in st.doc_ids]
    assert len(holding) == 2
    # Framing is read from the content (requirements, sizing), not from the source type: with no
    # framing type configured and an English type name, it still serves both axes.
    data = synthetic_planner_input()
    renamed = [
        e.model_copy(update={"source_type": "meeting-minutes"}) if e.id == "bk-07" else e
        for e in data.catalogue
    ]
    result = plan(data.model_copy(update={"catalogue": renamed}), frozenset())
    assert len([st for st in result.sub_tasks if "bk-07" in st.doc_ids]) == 2


@pytest.mark.parametrize("max_docs", [3, 4])
def test_overfull_axis_is_split_not_truncated(authority: AuthorityRanking, max_docs: int) -> None:
    data = synthetic_planner_input(max_docs=max_docs, max_subtasks=6)
    result = plan(data, authority.framing())
    _check_plan_shape(result, data)
    planned = {i for st in result.sub_tasks for i in st.doc_ids}
    assert planned == set(SYNTHETIC_KEEP)  # nothing dropped because of the cap
    for group in SYNTHETIC_GROUPS:
        assert _together(result, group), group


def test_more_axes_than_max_subtasks_are_merged_not_dropped(authority: AuthorityRanking) -> None:
    data = synthetic_planner_input(max_subtasks=2, max_docs=8)
    result = plan(data, authority.framing())
    _check_plan_shape(result, data)
    assert len(result.sub_tasks) == 2
    assert {i for st in result.sub_tasks for i in st.doc_ids} == set(SYNTHETIC_KEEP)
    for group in SYNTHETIC_GROUPS:
        assert _together(result, group), group
    # A merged sub-task's question names the aspects of both axes.
    assert any(" ; " in st.question for st in result.sub_tasks)


def test_split_keeps_same_subject_pairs_together() -> None:
    # Eight documents on one axis, max 4 per sub-task: two sub-tasks, each pair inside one of them.
    topics = [
        ("Sauvia", "bases de données relationnelles"),
        ("Barzo", "postes de travail nomades"),
        ("Quillon", "messagerie et calendriers partagés"),
        ("Sauvia", "machines virtuelles hyperviseur"),
    ]
    docs = []
    for n, (product, topic) in enumerate(topics, start=1):
        docs += [
            {
                "id": f"x-{n}a",
                "date": f"2026-0{n}-01",
                "source_type": "fiche-fournisseur",
                "title": f"{product} : débit de sauvegarde annoncé pour {topic}",
                "summary": f"La fiche annonce le débit de sauvegarde de {product} pour {topic}.",
            },
            {
                "id": f"x-{n}b",
                "date": f"2026-0{n + 4}-01",
                "source_type": "benchmark-interne",
                "title": f"{product} : débit de sauvegarde mesuré pour {topic}",
                "summary": f"Le banc mesure le débit de sauvegarde de {product} pour {topic}.",
            },
        ]
    base = synthetic_planner_input()
    data = base.model_copy(
        update={
            "request": "Comparer :\n\n- Performances : débit de sauvegarde annoncé et mesuré, restauration.\n",
            "catalogue": [type(base.catalogue[0]).model_validate(d) for d in docs],
            "max_docs": 4,
            "max_subtasks": 3,
        }
    )
    result = plan(data, frozenset())
    assert len(result.sub_tasks) == 2
    assert sorted(i for st in result.sub_tasks for i in st.doc_ids) == sorted(d["id"] for d in docs)
    for n in range(1, 5):
        assert _together(result, [f"x-{n}a", f"x-{n}b"]), [st.doc_ids for st in result.sub_tasks]
    # Each part is named by what its documents are about, so the two questions differ.
    assert result.sub_tasks[0].question != result.sub_tasks[1].question


def test_without_bullet_list_the_catalogue_is_clustered(authority: AuthorityRanking) -> None:
    request = SYNTHETIC_REQUEST.split("\n- ")[0]  # the request without its axes
    data = synthetic_planner_input(request=request)
    result = plan(data, authority.framing())
    _check_plan_shape(result, data)
    assert 3 <= len(result.sub_tasks) <= data.max_subtasks
    planned = {i for st in result.sub_tasks for i in st.doc_ids}
    assert planned <= set(SYNTHETIC_KEEP)  # a thin request may keep less, never another project
    assert {"bk-13", "bk-14"} <= set(result.excluded)
    for group in SYNTHETIC_GROUPS:
        assert _together(result, group), group
    for st in result.sub_tasks:
        assert st.question.endswith("?") and SYNTHETIC_TITLE.rstrip(" ?") in st.question


def test_terms_are_derived_when_the_request_gives_none(authority: AuthorityRanking) -> None:
    data = synthetic_planner_input().model_copy(update={"terms": []})
    result = plan(data, authority.framing())
    planned = {i for st in result.sub_tasks for i in st.doc_ids}
    assert set(SYNTHETIC_EXCLUDE) <= set(result.excluded)
    assert {"bk-01", "bk-02", "bk-05", "bk-06"} <= planned
    assert all(t in result.sub_tasks[0].question for t in SYNTHETIC_TERMS)


def test_titles_only_catalogue_still_plans(authority: AuthorityRanking) -> None:
    data = synthetic_planner_input(with_summaries=False)
    result = plan(data, authority.framing())
    _check_plan_shape(result, data)
    assert {"bk-13", "bk-14", "bk-15", "bk-16"} <= set(result.excluded)
    assert _together(result, ["bk-05", "bk-06"])


def test_unrelated_catalogue_gives_an_empty_plan(authority: AuthorityRanking) -> None:
    off_topic = [d for d in SYNTHETIC_DOCS if d["id"] in SYNTHETIC_EXCLUDE]
    base = synthetic_planner_input()
    data = base.model_copy(
        update={"catalogue": [e for e in base.catalogue if e.id in {d["id"] for d in off_topic}]}
    )
    result = plan(data, authority.framing())
    assert result.sub_tasks == []  # the plan validator turns this into a clear, typed error
    assert sorted(result.excluded) == sorted(SYNTHETIC_EXCLUDE)


def test_plan_does_not_depend_on_catalogue_order(authority: AuthorityRanking) -> None:
    data = synthetic_planner_input()
    shuffled = data.model_copy(update={"catalogue": list(reversed(data.catalogue))})
    first, second = plan(data, authority.framing()), plan(shuffled, authority.framing())
    assert sorted(map(sorted, (st.doc_ids for st in first.sub_tasks))) == sorted(
        map(sorted, (st.doc_ids for st in second.sub_tasks))
    )
    assert sorted(first.excluded) == sorted(second.excluded)
