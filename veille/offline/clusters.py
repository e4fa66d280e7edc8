"""Grouping kept documents into sub-tasks (offline planner): same-subject pairs, axis scores and
assignment, or clusters by vocabulary when the request states no axis (docs/offline-engine.md,
"Planner", 1, 3 and 4)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from veille.offline import lexicon
from veille.offline.relevance import Context, Doc, linked
from veille.offline.text import cosine, weighted_vector
from veille.offline.vocab import aspects, keys

__all__ = ["Pairs", "assign", "axis_scores", "centroid", "cluster", "same_subject_pairs", "units"]

Pairs = Sequence[tuple[float, str, str]]


def vectors(ctx: Context, docs: Sequence[Doc]) -> dict[str, dict[str, float]]:
    return {d.id: weighted_vector(d.keys, ctx.idf) for d in docs}


def centroid(vecs: dict[str, dict[str, float]], ids: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for i in ids:
        for key, value in vecs[i].items():
            out[key] = out.get(key, 0.0) + value
    return out


def same_subject_pairs(ctx: Context, docs: Sequence[Doc]) -> list[tuple[float, str, str]]:
    """Pairs (similarity, id_a, id_b) about the same subject at different dates, closest first."""
    vecs = vectors(ctx, docs)
    pairs: list[tuple[float, str, str]] = []
    for i, a in enumerate(docs):
        for b in docs[i + 1 :]:
            if a.entry.date == b.entry.date or (ctx.term_keys and not set(a.terms) & set(b.terms)):
                continue
            if (
                linked(ctx, a, b)
                and (sim := cosine(vecs[a.id], vecs[b.id])) >= ctx.tuning.same_subject_cosine
            ):
                pairs.append((sim, a.id, b.id))
    return sorted(pairs, key=lambda p: (-p[0], p[1], p[2]))


def axis_scores(ctx: Context, docs: Sequence[Doc]) -> dict[str, list[float]]:
    """Overlap of each document with each axis: keys weighted by how specific they are to one axis
    (more in its label), plus the axis's aspect families, once per word of them the document uses."""
    n = len(ctx.axes)
    axis_keys = [set(keys(a.text)) - ctx.term_key_set for a in ctx.axes]
    label_keys = [set(keys(a.label)) - ctx.term_key_set for a in ctx.axes]
    axis_aspects = [aspects(a.text) for a in ctx.axes]
    df = Counter(k for ks in axis_keys for k in ks)
    df_aspects = Counter(f for fs in axis_aspects for f in fs)
    norm = math.log(1 + n) if n > 1 else 1.0
    boost = lexicon.weight("plan_clusters.label_boost")
    cap = int(lexicon.weight("plan_clusters.aspect_words_cap"))
    digits = int(lexicon.weight("plan_clusters.score_digits"))

    def spec(count: int) -> float:
        return math.log(1 + n / count) / norm if n > 1 else 1.0

    scores: dict[str, list[float]] = {}
    for d in docs:
        row: list[float] = []
        for k, ks in enumerate(axis_keys):
            total = sum(spec(df[s]) * (boost if s in label_keys[k] else 1.0) for s in sorted(d.vocab & ks))
            total += ctx.tuning.aspect_weight * sum(
                spec(df_aspects[f]) * min(d.aspect_counts.get(f, 1), cap)
                for f in sorted(d.aspect_counts.keys() & axis_aspects[k])
            )
            row.append(round(total, digits))
        scores[d.id] = row
    return scores


def _partner(doc_id: str, pairs: Pairs, primary: dict[str, int]) -> str | None:
    others = (b if a == doc_id else a for _, a, b in pairs if doc_id in (a, b))
    return next((o for o in others if o in primary), None)


def assign(ctx: Context, docs: Sequence[Doc], pairs: Pairs) -> tuple[list[list[str]], dict[str, list[float]]]:
    """Axis index -> document ids (a document may serve several axes), and the axis scores."""
    t = ctx.tuning
    n = len(ctx.axes)
    scores = axis_scores(ctx, docs)
    members: list[list[str]] = [[] for _ in range(n)]
    primary: dict[str, int] = {}
    unplaced: list[Doc] = []
    for d in docs:
        row = scores[d.id]
        ranked = sorted(range(n), key=lambda k: (-row[k], k))
        if row[ranked[0]] <= 0:
            unplaced.append(d)
            continue
        primary[d.id] = ranked[0]
        members[ranked[0]].append(d.id)
        ratio = t.framing_ratio if d.framing else t.framing_ratio_other
        for second in ranked[1:]:
            if row[second] < max(t.framing_min_score, ratio * row[ranked[0]]):
                break
            members[second].append(d.id)
            if not d.framing:
                break  # another document serves two axes at most
    # Documents sharing no axis word follow their same-subject partner, else the axis whose
    # documents they resemble most, else the smallest axis.
    progressed = True
    while unplaced and progressed:
        progressed = False
        for d in list(unplaced):
            partner = _partner(d.id, pairs, primary)
            if partner is not None:
                primary[d.id] = primary[partner]
                members[primary[d.id]].append(d.id)
                unplaced.remove(d)
                progressed = True
    vecs = vectors(ctx, docs)
    for d in unplaced:
        sims = [cosine(vecs[d.id], centroid(vecs, m)) for m in members]
        if max(sims, default=0.0) > 0:
            k = min(range(n), key=lambda i: (-sims[i], i))
        else:
            k = min(range(n), key=lambda i: (len(members[i]), i))
        primary[d.id] = k
        members[k].append(d.id)
    # An axis of the request that got no document is still asked: it reads the document that
    # scores best on it (as a further axis of that document, not moved).
    for k in range(n):
        top = None if members[k] else max(docs, key=lambda d: (scores[d.id][k], d.id), default=None)
        if top is not None and scores[top.id][k] > 0:
            members[k].append(top.id)

    def loss(doc_id: str, target: int) -> float:
        best = max(scores[doc_id])
        return 0.0 if best <= 0 else 1.0 - scores[doc_id][target] / best

    # Same subject, different dates: a pair split across axes gets its weaker-fitting member added
    # to the partner's axis (adding, not moving: the other axis may need it too).
    for _, a, b in pairs:
        if not any(a in m and b in m for m in members):
            _, doc_id, target = min((loss(i, primary[j]), i, primary[j]) for i, j in ((a, b), (b, a)))
            members[target].append(doc_id)
    return members, scores


def units(ids: Sequence[str], pairs: Pairs, cap: int) -> list[list[str]]:
    """Groups of same-subject documents among ``ids`` (strongest pairs first, capped)."""
    group = {i: [i] for i in ids}
    for _, a, b in pairs:
        if a in group and b in group and group[a] is not group[b] and len(group[a]) + len(group[b]) <= cap:
            merged = group[a] + group[b]
            for i in merged:
                group[i] = merged
    order = {i: k for k, i in enumerate(ids)}
    distinct = {id(group[i]): group[i] for i in ids}.values()  # first-seen order
    return [sorted(g, key=lambda i: order[i]) for g in distinct]


def cluster(ctx: Context, docs: Sequence[Doc], pairs: Pairs) -> list[list[str]]:
    """No axis in the request: same-subject units merged by similarity into 3..max_subtasks groups."""
    cap, budget = ctx.data.max_docs, ctx.data.max_subtasks
    ids = [d.id for d in docs]
    fewest = int(lexicon.weight("plan_clusters.min_clusters"))
    target = min(budget, max(min(fewest, len(ids)), math.ceil(len(ids) / cap)))
    clusters = units(ids, pairs, cap)
    vecs = vectors(ctx, docs)
    while len(clusters) > target:
        cents = [centroid(vecs, c) for c in clusters]
        candidates = sorted(
            (-cosine(cents[i], cents[j]), i, j)
            for i in range(len(clusters))
            for j in range(i + 1, len(clusters))
            if len(clusters[i]) + len(clusters[j]) <= cap or len(clusters) > budget
        )
        if not candidates:
            break
        _, i, j = candidates[0]
        clusters[i] = clusters[i] + clusters[j]
        del clusters[j]
    position = {i: n for n, i in enumerate(ids)}
    return [sorted(c, key=lambda i: position[i]) for c in clusters]
