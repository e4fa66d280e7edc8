"""Which branch reads what, once the text has said what each axis needs (issue 37, items 2 and 3).

Input: the planner's sub-tasks (validated), each mapped to one axis; per axis the documents with a
relevant passage; the same-subject groups. Output: sub-tasks such that, within the caps
(``max_docs`` per sub-task, ``max_subtasks`` in all):

- every document relevant to an axis is read by a sub-task of that axis (one more sub-task with
  the axis's question when its sub-tasks are full: the axis is split, no document dropped);
- every group sits whole in one sub-task (a group is a unit: when its sub-task has no room, the
  group moves whole to a continuation; groups never exceed ``max_docs``, veille.steps.plan_groups);
- what the planner placed and the text supports stays where the planner put it.

What cannot fit once ``max_subtasks`` sub-tasks are full is returned (reason ``cap``, an error
alert): never silently dropped. Pure; the result depends only on ids, never on the files' order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from veille.roles.planner import SubTask

__all__ = ["Branch", "assign_branches"]


@dataclass
class Branch:
    """One sub-task being filled: its axis, question, documents, search terms."""

    axis: str
    question: str
    doc_ids: list[str]
    search_terms: list[str] = field(default_factory=list)


def _place(
    unit: tuple[str, ...],
    axis: str,
    branches: list[Branch],
    questions: Mapping[str, str],
    max_subtasks: int,
    max_docs: int,
    candidates: Sequence[Branch] | None = None,
) -> bool:
    """Put ``unit`` whole in one branch of ``axis`` (or of ``candidates``): already there, else the
    branch holding most of it with room for the rest, else a new branch of the axis; False when no
    room is left."""
    mine = [b for b in branches if b.axis == axis]
    pool = list(candidates) if candidates is not None else mine
    if any(set(unit) <= set(b.doc_ids) for b in pool):
        return True
    ranked = sorted(pool, key=lambda b: -len(set(unit) & set(b.doc_ids)))  # stable: plan order on ties
    for branch in ranked:
        missing = [d for d in unit if d not in branch.doc_ids]
        if len(branch.doc_ids) + len(missing) <= max_docs:
            branch.doc_ids.extend(missing)
            return True
    if len(branches) >= max_subtasks or len(unit) > max_docs:
        return False
    question = mine[0].question if mine else questions[axis]
    terms = list(mine[0].search_terms) if mine else []
    branches.append(Branch(axis, question, list(unit), terms))
    return True


def assign_branches(
    branches: Sequence[Branch],
    needed: Mapping[str, Sequence[str]],
    groups: Sequence[Sequence[str]],
    read: set[str],
    questions: Mapping[str, str],
    *,
    max_subtasks: int,
    max_docs: int,
) -> tuple[list[SubTask], list[str], list[list[str]], dict[str, str]]:
    """(sub-tasks, documents that could not be placed, groups read apart for lack of room, sub-task
    id -> its axis). ``branches``: the planner's sub-tasks mapped
    to axes, their documents already restricted to ``read``; ``needed``: axis key -> documents that
    axis must read (in axis order); ``questions``: the question of a new branch of an axis. The axis
    is returned, not re-derived from the question: a continuation keeps its axis's first question,
    which may be the planner's and name no axis (« Que disent les documents ? »)."""
    out = [Branch(b.axis, b.question, list(b.doc_ids), list(b.search_terms)) for b in branches]
    unplaced: list[str] = []
    apart: list[list[str]] = []  # groups no branch could take whole (every sub-task full)
    for axis, docs in needed.items():
        for doc_id in sorted(set(docs) & read):
            if not _place((doc_id,), axis, out, questions, max_subtasks, max_docs):
                unplaced += [] if any(doc_id in b.doc_ids for b in out) else [doc_id]
    # Each group whole in one branch: the one holding most of it (any axis) when it has room, else
    # a new branch of that axis with the whole group (the axis split by groups).
    for group in sorted(tuple(sorted(d for d in g if d in read)) for g in groups):
        if len(group) < 2 or any(set(group) <= set(b.doc_ids) for b in out):
            continue
        holders = sorted(out, key=lambda b: -len(set(group) & set(b.doc_ids)))
        axis = holders[0].axis if holders else next(iter(needed), "")
        if not _place(group, axis, out, questions, max_subtasks, max_docs, holders):
            unplaced += [d for d in group if not any(d in b.doc_ids for b in out)]
            apart.append(list(group))
    filled = [b for b in out if b.doc_ids]
    sub_tasks = [
        SubTask(id=f"st-{n}", question=b.question, doc_ids=b.doc_ids, search_terms=b.search_terms)
        for n, b in enumerate(filled, 1)
    ]
    return (
        sub_tasks,
        sorted(set(unplaced)),
        apart,
        {st.id: b.axis for st, b in zip(sub_tasks, filled, strict=True)},
    )
