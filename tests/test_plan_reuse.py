"""The nightly plan reuse (issue 13, veille/steps/plan_reuse.py): last night's plan, when its basis is
tonight's and few documents are new, goes through validation and coverage without a planner call,
and whatever that plan and tonight's catalogue are, the result is a valid plan."""

from __future__ import annotations

from datetime import date
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plankit import entry, planner_input
from veille.roles.planner import Plan, SubTask
from veille.steps.news import Changes, PreviousDossier, compare_snapshots
from veille.steps.plan import make_plan
from veille.steps.plan_reuse import crowded_out, planner_basis, reusable_plan

TITLES = [
    "Zorblax : débit mesuré sur la flotte",
    "Quimby : coût des licences 2030",
    "Zorblax : correctif de sécurité",
    "Quimby : latence et maintenance",
    "Cantine : menus de la semaine",
    "Zorblax et Quimby : exploitation",
]


class NoPlanner:
    """An Asker that fails the test if the planner is asked."""

    def ask(self, role: Any, data: Any, *, subtask_id: str | None = None) -> Any:
        raise AssertionError(f"{role.name} asked although the plan was reused")


def _catalogue(ids: list[str]) -> list[Any]:
    return [entry(i, TITLES[int(i.split("-")[1]) % len(TITLES)]) for i in ids]


def _changes(previous_ids: list[str], now_ids: list[str], plan: dict[str, Any] | None) -> Changes:
    previous = PreviousDossier("r1", date(2026, 12, 1), dict.fromkeys(previous_ids, "h"), plan=plan)
    return compare_snapshots(previous, [(i, "h") for i in now_ids])


def _recorded(plan: Plan, basis: str) -> dict[str, Any]:
    """plan.json as the run folder writes it (veille.run.folder.RunFolder.write_plan)."""
    return {
        "sub_tasks": [{"id": s.id, "question": s.question, "doc_ids": s.doc_ids} for s in plan.sub_tasks],
        "excluded": list(plan.excluded),
        "exclusions": [e.model_dump() for e in plan.exclusions],
        "basis": basis,
    }


IDS = [f"doc-{i:02d}" for i in range(1, 25)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    before=st.lists(st.sampled_from(IDS), min_size=1, max_size=14, unique=True),
    max_docs=st.integers(min_value=1, max_value=5),
    max_subtasks=st.integers(min_value=1, max_value=4),
)
def test_any_previous_plan_and_catalogue_give_a_valid_plan_without_the_planner(
    data: st.DataObject, before: list[str], max_docs: int, max_subtasks: int
) -> None:
    # Last night's plan: any sub-tasks over its documents (even over caps: validation repairs them).
    groups = data.draw(
        st.lists(st.lists(st.sampled_from(before), min_size=1, max_size=6), min_size=1, max_size=5)
    )
    previous = Plan(
        sub_tasks=[
            SubTask(id=f"st-{n}", question=f"Question {n} sur Zorblax ?", doc_ids=g)
            for n, g in enumerate(groups, 1)
        ],
        excluded=data.draw(st.lists(st.sampled_from(before), max_size=3)),
    )
    kept = data.draw(st.lists(st.sampled_from(before), min_size=1, unique=True))  # some removed
    new = data.draw(
        st.lists(st.sampled_from([i for i in IDS if i not in before] or IDS), max_size=3, unique=True)
    )
    now = sorted(set(kept) | set(new))
    tonight = planner_input(_catalogue(now), max_docs=max_docs, max_subtasks=max_subtasks)
    basis = planner_basis(tonight, "offline")
    changes = _changes(before, now, _recorded(previous, basis))

    proposal, why = reusable_plan(changes, basis, now, max_new=5)
    if proposal is None:  # only when none of the previous plan's documents is left
        assert not {i for st_ in previous.sub_tasks for i in st_.doc_ids} & set(now), why
        return
    assert {i for s in proposal.sub_tasks for i in s.doc_ids} <= set(kept)
    assert not set(changes.new) & {i for s in proposal.sub_tasks for i in s.doc_ids}  # code places them
    outcome = make_plan(NoPlanner(), tonight, previous=proposal, reused_note="repris")
    plan = outcome.plan
    used = [i for s in plan.sub_tasks for i in s.doc_ids]
    assert set(used) <= set(now) and len(plan.sub_tasks) <= max_subtasks
    assert all(1 <= len(s.doc_ids) <= max_docs for s in plan.sub_tasks)
    assert [s.id for s in plan.sub_tasks] == [f"st-{n}" for n in range(1, len(plan.sub_tasks) + 1)]
    assert set(used) | set(plan.excluded) == set(now)  # every document placed or excluded…
    assert not set(used) & set(plan.excluded) and {e.id for e in plan.exclusions} == set(plan.excluded)
    assert "plan.reused" in [a.code for a in outcome.alerts]


def test_a_new_document_goes_to_its_closest_sub_task_and_the_rest_stays() -> None:
    catalogue = [
        entry("doc-01", "Zorblax : débit mesuré sur la flotte"),
        entry("doc-02", "Quimby : coût des licences 2030"),
        entry("doc-03", "Zorblax : latence au banc d'essai"),
        entry("doc-07", "Quimby : nouvelle grille de prix des licences"),  # tonight's
    ]
    now = [e.id for e in catalogue]
    previous = Plan(
        sub_tasks=[
            SubTask(id="st-1", question="Quel débit Zorblax atteint-il ?", doc_ids=["doc-01", "doc-03"]),
            SubTask(id="st-2", question="Combien coûtent les licences Quimby ?", doc_ids=["doc-02"]),
        ]
    )
    tonight = planner_input(catalogue)
    basis = planner_basis(tonight, "offline")
    proposal, _ = reusable_plan(_changes(now[:3], now, _recorded(previous, basis)), basis, now, max_new=5)
    assert proposal is not None
    outcome = make_plan(NoPlanner(), tonight, previous=proposal)
    assert [s.doc_ids for s in outcome.plan.sub_tasks] == [["doc-01", "doc-03"], ["doc-02", "doc-07"]]
    assert [s.question for s in outcome.plan.sub_tasks] == [s.question for s in previous.sub_tasks]


def test_no_reuse_when_the_basis_changed_or_too_much_is_new() -> None:
    now = ["doc-01", "doc-02", "doc-03"]
    previous = Plan(sub_tasks=[SubTask(id="st-1", question="Q ?", doc_ids=["doc-01"])])
    tonight = planner_input(_catalogue(now))
    basis = planner_basis(tonight, "offline")
    recorded = _recorded(previous, basis)
    assert reusable_plan(_changes(["doc-01"], now, recorded), basis, now, max_new=5)[0] is not None
    other = planner_basis(planner_input(_catalogue(now), max_docs=3), "offline")
    assert other != basis and planner_basis(tonight, "gemini-3") != basis
    assert reusable_plan(_changes(["doc-01"], now, recorded), other, now, max_new=5)[0] is None
    assert reusable_plan(_changes(["doc-01"], now, recorded), basis, now, max_new=1)[0] is None  # 2 new
    assert reusable_plan(_changes(["doc-01"], now, recorded), basis, now, max_new=0)[0] is None
    assert reusable_plan(_changes(["doc-01"], now, None), basis, now, max_new=5)[0] is None
    assert reusable_plan(compare_snapshots(None, [(i, "h") for i in now]), basis, now, max_new=5)[0] is None
    garbled = {**recorded, "sub_tasks": [{"id": 3}]}
    assert reusable_plan(_changes(["doc-01"], now, garbled), basis, now, max_new=5)[0] is None


def test_a_full_reused_plan_names_the_new_documents_it_has_no_room_for() -> None:
    catalogue = [
        entry("doc-01", "Zorblax : débit mesuré sur la flotte"),
        entry("doc-02", "Zorblax : débit mesuré en décembre"),  # tonight's, on topic, no room
    ]
    previous = Plan(
        sub_tasks=[SubTask(id="st-1", question="Quel débit Zorblax atteint-il ?", doc_ids=["doc-01"])]
    )
    tonight = planner_input(catalogue, max_docs=1, max_subtasks=1)
    basis = planner_basis(tonight, "offline")
    changes = _changes(["doc-01"], ["doc-01", "doc-02"], _recorded(previous, basis))
    proposal, _ = reusable_plan(changes, basis, ["doc-01", "doc-02"], max_new=5)
    outcome = make_plan(NoPlanner(), tonight, previous=proposal)
    assert crowded_out(outcome, changes) == ["doc-02"]  # tasks/plan.py then asks the planner
    roomy = make_plan(NoPlanner(), planner_input(catalogue, max_docs=2), previous=proposal)
    assert crowded_out(roomy, changes) == []
