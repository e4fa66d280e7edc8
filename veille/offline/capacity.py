"""Fitting sub-tasks within the caps (offline planner): axes merged down to ``max_subtasks``, an
axis over ``max_docs`` split in two while ``max_subtasks`` allows, rather than dropping documents
(docs/offline-engine.md, "Planner", 5)."""

from __future__ import annotations

from collections.abc import Sequence

from veille.offline import lexicon
from veille.offline.axes import Axis
from veille.offline.clusters import Pairs, centroid, units, vectors
from veille.offline.relevance import Context
from veille.offline.text import cosine, weighted_vector

__all__ = ["fit_capacity", "merge_axes", "split"]

Tasks = list[tuple[int, list[str]]]  # (axis index, document ids) per sub-task


def split(ctx: Context, ids: Sequence[str], pairs: Pairs) -> tuple[list[str], list[str]]:
    """Two parts of ``ids``, same-subject groups kept together, most dissimilar groups apart."""
    cap = ctx.data.max_docs
    groups = units(ids, pairs, cap)
    if len(groups) == 1:
        half = (len(ids) + 1) // 2
        return list(ids[:half]), list(ids[half:])
    vecs = vectors(ctx, [ctx.by_id[i] for i in ids])
    unit_vecs = [centroid(vecs, u) for u in groups]
    _, i0, j0 = min(
        (cosine(unit_vecs[i], unit_vecs[j]), i, j)
        for i in range(len(groups))
        for j in range(i + 1, len(groups))
    )
    parts: list[list[str]] = [list(groups[i0]), list(groups[j0])]
    rest = [k for k in range(len(groups)) if k not in (i0, j0)]
    # Most decided units first: their place is clearest.
    rest.sort(
        key=lambda k: (-abs(cosine(unit_vecs[k], unit_vecs[i0]) - cosine(unit_vecs[k], unit_vecs[j0])), k)
    )
    for k in rest:
        sims = [cosine(unit_vecs[k], centroid(vecs, p)) for p in parts]
        order = sorted(range(2), key=lambda p: (-sims[p], len(parts[p]), p))
        fitting = [p for p in order if len(parts[p]) + len(groups[k]) <= cap]
        target = fitting[0] if fitting else min(range(2), key=lambda p: (len(parts[p]), p))
        parts[target].extend(groups[k])
    position = {i: n for n, i in enumerate(ids)}
    return sorted(parts[0], key=position.__getitem__), sorted(parts[1], key=position.__getitem__)


def merge_axes(ctx: Context, members: list[list[str]]) -> list[list[str]]:
    """More axes holding documents than ``max_subtasks``: the smallest axis joins the axis whose
    documents are most like its own (its label and facets join too), until they fit."""
    vecs = vectors(ctx, ctx.docs)
    while sum(1 for m in members if m) > ctx.data.max_subtasks:
        live = [k for k, m in enumerate(members) if m]
        small = min(live, key=lambda k: (len(members[k]), -k))
        others = [k for k in live if k != small]
        target = max(
            others, key=lambda k: (cosine(centroid(vecs, members[small]), centroid(vecs, members[k])), -k)
        )
        a, b = ctx.axes[target], ctx.axes[small]
        ctx.axes[target] = Axis(
            label=f"{a.label} ; {b.label[:1].lower() + b.label[1:]}",
            facets=[*a.facets, *b.facets],
            text=f"{a.text} ; {b.text}",
            merged=True,
        )
        members[target] = list(dict.fromkeys([*members[target], *members[small]]))
        members[small] = []
    return members


def _partners(doc_id: str, pairs: Pairs) -> set[str]:
    return {b if a == doc_id else a for _, a, b in pairs if doc_id in (a, b)}


def _elsewhere(tasks: Tasks, n: int) -> set[str]:
    """The documents of every sub-task but the ``n``-th."""
    return {i for m, (_, other) in enumerate(tasks) if m != n for i in other}


def _hard_overflow(tasks: Tasks, n: int, cap: int) -> int:
    elsewhere = _elsewhere(tasks, n)
    return max(0, sum(i not in elsewhere for i in tasks[n][1]) - cap)


def _split_overfull(ctx: Context, tasks: Tasks, pairs: Pairs) -> None:
    cap, budget = ctx.data.max_docs, ctx.data.max_subtasks
    unsplittable: set[tuple[str, ...]] = set()
    while len(tasks) < budget:
        # Overflow of documents found in no other sub-task first: those would be lost.
        over = [
            (_hard_overflow(tasks, n, cap), len(ids) - cap, -n)
            for n, (_, ids) in enumerate(tasks)
            if len(ids) > cap and tuple(ids) not in unsplittable
        ]
        if not over:
            return
        n = -max(over)[2]
        axis, ids = tasks[n]
        first, second = split(ctx, ids, pairs)
        elsewhere = _elsewhere(tasks, n)
        if elsewhere.issuperset(first) or elsewhere.issuperset(second):
            # A part made only of documents another sub-task already has: not worth an analyst.
            unsplittable.add(tuple(ids))
            continue
        tasks[n : n + 1] = [(axis, first), (axis, second)]


def fit_capacity(
    ctx: Context, members: list[list[str]], pairs: Pairs, scores: dict[str, list[float]]
) -> Tasks:
    """(axis index, ids) sub-tasks within max_docs: split, drop what another sub-task covers, move
    to a sub-task with room, then trim; what still overflows is left to the plan validator."""
    cap = ctx.data.max_docs
    tasks: Tasks = [(k, ids) for k, ids in enumerate(members) if ids]
    _split_overfull(ctx, tasks, pairs)

    def fit(doc_id: str, axis: int) -> float:
        row = scores.get(doc_id)
        return row[axis] if row else 0.0

    for n, (axis, ids) in enumerate(tasks):
        for doc_id in sorted(ids, key=lambda i: (fit(i, axis), i)):
            if len(ids) <= cap:
                break
            partners = _partners(doc_id, pairs) & set(ids)
            # Covered by another sub-task, with its same-subject partners here (a pair stays whole).
            if any(
                doc_id in other and partners <= set(other) for m, (_, other) in enumerate(tasks) if m != n
            ):
                ids.remove(doc_id)
        for doc_id in sorted(ids, key=lambda i: (fit(i, axis), i)):
            if len(ids) <= cap:
                break
            if _partners(doc_id, pairs) & set(ids):
                continue  # moving it alone would split a same-subject pair
            room = [
                (-fit(doc_id, a), m)
                for m, (a, other) in enumerate(tasks)
                if m != n and len(other) < cap and fit(doc_id, a) > 0
            ]
            if room:
                tasks[min(room)[1]][1].append(doc_id)
                ids.remove(doc_id)
    paired = {i for _, a, b in pairs for i in (a, b)}
    for _, ids in tasks:
        _trim(ctx, ids, paired)
    return tasks


def _trim(ctx: Context, ids: list[str], paired: set[str]) -> None:
    """A sub-task still over ``max_docs`` (more relevant documents than the caps hold) leaves out its
    most redundant documents (closest to another one of it), never a framing document, so what is
    unique (a benchmark, an advisory) is read. The plan step records them as unplaced."""
    if len(ids) <= ctx.data.max_docs:
        return
    # Request terms left out: two documents on one product are not redundant for naming it.
    vecs = {i: weighted_vector(sorted(ctx.by_id[i].vocab), ctx.idf) for i in ids}
    # Each document's neighbours, closest first, computed once (the sub-task may hold hundreds).
    neighbours = {
        i: sorted(((cosine(vecs[i], vecs[j]), j) for j in ids if j != i), reverse=True) for i in ids
    }
    removed: set[str] = set()
    bonus = lexicon.weight("plan_capacity.pair_bonus")

    def redundancy(i: str) -> float:
        # A same-subject pair's member counts as less redundant: a near-copy still goes long
        # before a contradiction's member, whose partner differs more.
        closest = next((sim for sim, j in neighbours[i] if j not in removed), 0.0)
        return closest - (bonus if i in paired else 0.0)

    while len(ids) > ctx.data.max_docs:
        candidates = [i for i in ids if not ctx.by_id[i].framing]
        if not candidates:
            return  # left for the plan validator (it truncates with an alert)
        drop = max(candidates, key=lambda i: (redundancy(i), i))
        ids.remove(drop)
        removed.add(drop)
