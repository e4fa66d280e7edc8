"""Property test of the stable plan (issue 40 item 2, veille.steps.plan_stable).

Whatever tonight's fresh settling does with the corpus plus one new document — move old documents
between sub-tasks, drop some, read the new one for one axis or several, reorder sub-tasks — the plan
a later night keeps: every document last night's plan read stays in the same sub-task (same id,
same question), only the sub-tasks that receive the new document differ (each by that document
alone; a new sub-task only when its axis's are full), the caps hold, every catalogue id is read or
excluded exactly once, and a new document tonight's settling reads is read, or excluded with
reason ``cap`` only when there was no room at all. No Prefect, no model.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.roles.planner import Exclusion, Plan, SubTask
from veille.steps.plan_stable import Previous, stable_plan
from veille.steps.plan_validate import rebuild_plan

AXES = ("a1", "a2", "a3")


@st.composite
def nights(draw: st.DrawFn) -> tuple[Previous, Plan, list[str], str, int, int]:
    max_docs = draw(st.integers(1, 4))
    max_subtasks = draw(st.integers(1, 5))
    n_old = draw(st.integers(1, 14))
    old = [f"doc-{i:02d}" for i in range(1, n_old + 1)]
    # Last night's settled plan: sub-tasks within the caps, each serving an axis.
    n_sub = draw(st.integers(1, max_subtasks))
    axes_then = [draw(st.sampled_from(AXES)) for _ in range(n_sub)]
    slots: list[list[str]] = [[] for _ in range(n_sub)]
    for doc in old:
        where = draw(st.integers(-1, n_sub - 1))  # -1: left out last night
        if where >= 0 and len(slots[where]) < max_docs:
            slots[where].append(doc)
    if not any(slots):
        slots[0].append(old[0])
    subs = [
        SubTask(id="", question=f"Question {axis} ?", doc_ids=docs, passages={d: [1] for d in docs[:1]})
        for axis, docs in zip(axes_then, slots, strict=True)
    ]
    placed = {d for s in slots for d in s}
    before = rebuild_plan(subs, old, {d: "no_relevant_passage" for d in old if d not in placed})
    kept_axes = [a for a, s in zip(axes_then, slots, strict=True) if s]
    previous = Previous(
        before.sub_tasks,
        {s.id: a for s, a in zip(before.sub_tasks, kept_axes, strict=True)},
        before.exclusions,
    )
    # Tonight: the new document (its id anywhere in the order) and any fresh settling at all.
    new = draw(st.sampled_from(["doc-00", "doc-50", "doc-99"]))
    catalogue = sorted([*old, new])
    n_tonight = draw(st.integers(1, max_subtasks))
    axes_now = [draw(st.sampled_from(AXES)) for _ in range(n_tonight)]
    fresh: list[list[str]] = [[] for _ in range(n_tonight)]
    for doc in draw(st.permutations(catalogue)):
        for k in draw(st.sets(st.integers(0, n_tonight - 1), max_size=2)):
            if len(fresh[k]) < max_docs:
                fresh[k].append(doc)
    refused = draw(st.sets(st.sampled_from(old), max_size=2))
    fresh = [[d for d in docs if d not in refused] for docs in fresh]
    tonight_subs = [
        SubTask(id="", question=f"Question {a} ?", doc_ids=docs, flags={d: "x" for d in docs if d == new})
        for a, docs in zip(axes_now, fresh, strict=True)
    ]
    reasons = {d: "duplicate" for d in refused}
    settled = rebuild_plan(tonight_subs, catalogue, reasons)
    now_axes = [a for a, docs in zip(axes_now, fresh, strict=True) if docs]
    settled = settled.model_copy(
        update={
            "reading": {"sub_task_axes": {s.id: a for s, a in zip(settled.sub_tasks, now_axes, strict=True)}}
        }
    )
    return previous, settled, catalogue, new, max_subtasks, max_docs


@settings(max_examples=400, deadline=None)
@given(nights())
def test_one_new_document_moves_no_previously_read_document(
    night: tuple[Previous, Plan, list[str], str, int, int],
) -> None:
    previous, settled, catalogue, new, max_subtasks, max_docs = night
    plan, unplaced = stable_plan(
        previous, settled, catalogue, [new], max_subtasks=max_subtasks, max_docs=max_docs
    )
    refused = {e.id for e in settled.exclusions if e.reason == "duplicate"}
    then = {s.id: s for s in previous.sub_tasks}
    now = {s.id: s for s in plan.sub_tasks}

    # No previously read document changes sub-task (unless refused outright tonight).
    for sid, sub in then.items():
        kept = [d for d in sub.doc_ids if d not in refused]
        if kept:
            assert now[sid].question == sub.question
            assert [d for d in now[sid].doc_ids if d != new] == kept, (sid, sub, now[sid])
    # Only the sub-tasks that receive the new document differ, by that document alone.
    changed = [
        sid
        for sid, s in now.items()
        if sid not in then or s.doc_ids != [d for d in then[sid].doc_ids if d not in refused]
    ]
    assert all(new in now[sid].doc_ids for sid in changed), (changed, plan)
    assert all(
        set(now[sid].doc_ids) - set(then.get(sid, SubTask(id="", question="", doc_ids=[])).doc_ids) == {new}
        for sid in changed
    )
    wanted_axes = {settled.reading["sub_task_axes"][s.id] for s in settled.sub_tasks if new in s.doc_ids}
    assert len(changed) <= len(wanted_axes)
    # Each axis that reads it reads it once; a new sub-task only when that axis's were full.
    for sid in changed:
        axis = plan.reading["sub_task_axes"][sid]
        assert axis in wanted_axes
        if sid not in then:
            full = [o for o in then if o in now and previous.axes[o] == axis]
            assert all(len([d for d in now[o].doc_ids if d not in now[o].passages]) >= max_docs for o in full)
    # Caps, and every catalogue id read or excluded, exactly once.
    assert len(plan.sub_tasks) <= max(max_subtasks, len(previous.sub_tasks))
    assert all(len([d for d in s.doc_ids if d not in s.passages]) <= max_docs for s in plan.sub_tasks)
    used = {d for s in plan.sub_tasks for d in s.doc_ids}
    assert used | set(plan.excluded) == set(catalogue) and not used & set(plan.excluded)
    assert len(plan.exclusions) == len(set(plan.excluded)) == len(plan.excluded)
    # The new document: read when tonight's settling reads it, else ``cap`` only for lack of room.
    if wanted_axes and new not in used:
        assert unplaced == [new]
        assert {e.reason for e in plan.exclusions if e.id == new} == {"cap"}
        assert len(plan.sub_tasks) >= max_subtasks
    if not wanted_axes:
        assert new not in used and not unplaced
    # Flags are tonight's, passages of kept documents last night's.
    assert all(s.flags == {new: "x"} for s in plan.sub_tasks if new in s.doc_ids)
    for sid, sub in then.items():
        if sid in now:
            assert {d: p for d, p in sub.passages.items() if d in now[sid].doc_ids} == {
                d: p for d, p in now[sid].passages.items() if d != new
            }


def test_an_untouched_document_keeps_last_nights_exclusion() -> None:
    """A document neither new nor changed that tonight's fresh settling reads only because the
    corpus-relative measure moved is not read: it keeps last night's reason."""
    previous = Previous(
        [SubTask(id="st-1", question="Q ?", doc_ids=["doc-01"])],
        {"st-1": "a1"},
        [Exclusion(id="doc-02", reason="no_relevant_passage", detail="aucun passage")],
    )
    settled = Plan(
        sub_tasks=[SubTask(id="st-1", question="Q ?", doc_ids=["doc-01", "doc-02", "doc-03"])],
        reading={"sub_task_axes": {"st-1": "a1"}},
    )
    plan, unplaced = stable_plan(
        previous, settled, ["doc-01", "doc-02", "doc-03"], ["doc-03"], max_subtasks=2, max_docs=5
    )
    assert [s.doc_ids for s in plan.sub_tasks] == [["doc-01", "doc-03"]] and unplaced == []
    assert [(e.id, e.reason) for e in plan.exclusions] == [("doc-02", "no_relevant_passage")]


def test_the_reading_alerts_are_those_of_the_stable_plan() -> None:
    """Tonight's fresh settling removed doc-02 and read doc-04 by text; the stable plan kept doc-02
    where it was and had no room for doc-04: no alert about doc-02, doc-04 named as left out."""
    from veille.alerts import alert
    from veille.steps.plan_stable import stable_alerts

    previous = Previous([SubTask(id="st-1", question="Q ?", doc_ids=["doc-01", "doc-02"])], {"st-1": "a1"})
    settled = Plan(
        sub_tasks=[SubTask(id="st-1", question="Q ?", doc_ids=["doc-01", "doc-04"])],
        reading={
            "sub_task_axes": {"st-1": "a1"},
            "validated": {"sub_tasks": [{"id": "st-1", "question": "Q ?", "doc_ids": ["doc-01", "doc-02"]}]},
        },
    )
    fresh = [
        alert("plan", "plan.no_relevant_passage", "doc-02 retiré", subject="doc-02"),
        alert("plan", "plan.read_by_text", "doc-04 ajouté", subject="doc-04"),
        alert("plan", "plan.reused", "plan repris", severity="info"),
    ]
    catalogue = ["doc-01", "doc-02", "doc-03", "doc-04"]
    plan, unplaced = stable_plan(previous, settled, catalogue, ["doc-04"], max_subtasks=1, max_docs=2)
    assert [s.doc_ids for s in plan.sub_tasks] == [["doc-01", "doc-02"]] and unplaced == ["doc-04"]
    plan, alerts = stable_alerts(plan, fresh)
    codes = [a.code for a in alerts]
    assert codes == ["plan.reused", "plan.reading_cap"], codes
    assert "doc-04" in alerts[-1].message and not any("doc-02" in a.message for a in alerts)
    assert (
        plan.reading["added"] == []
        and plan.reading["removed"] == []
        and plan.reading["unplaced"] == ["doc-04"]
    )
