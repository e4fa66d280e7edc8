"""Grouping kept documents into sub-tasks (offline planner): same-subject pairs, axis scores and
assignment, or clusters by vocabulary when the request states no axis.

- Same subject: two documents at different dates that share a term and rare words, and whose
  title+summary vectors are close, are a pair; a pair always ends in one sub-task.
- Axis score: overlap of a document's keys with an axis's, each key weighted by how specific it is
  to one axis (x1.5 in the axis label), plus the axis's aspect families it shares (a bridge for short
  axes and other-language sources).
- A framing document (requirements, sizing: by its words or a configured type) serves every axis
  it scores on; another document serves a second axis only when both scores are close. An axis left
  without documents reads the one that scores best on it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from veille.offline import lexicon
from veille.offline.relevance import Context, Doc, link
from veille.offline.text import cosine, weighted_vector
from veille.offline.vocab import aspects, keys

__all__ = ["Pairs", "assign", "axis_scores", "centroid", "cluster", "same_subject_pairs", "units"]

Pairs = Sequence[tuple[float, str, str]]
_ASPECT_WORDS_CAP = int(lexicon.weight("plan_clusters.aspect_words_cap"))


def vectors(ctx: Context, docs: Sequence[Doc]) -> dict[str, dict[str, float]]:
    return {d.id: weighted_vector(d.keys, ctx.idf) for d in docs}


def centroid(vecs: dict[str, dict[str, float]], ids: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for i in ids:
        for key, value in vecs[i].items():
            out[key] = out.get(key, 0.0) + value
    return out


def same_subject_pairs(ctx: Context, docs: Sequence[Doc]) -> list[tuple[float, str, str]]:
    """Pairs (similarity, id_a, id_b) about the same subject at different dates."""
    vecs = vectors(ctx, docs)
    t = ctx.tuning
    pairs: list[tuple[float, str, str]] = []
    for i, a in enumerate(docs):
        for b in docs[i + 1 :]:
            if a.entry.date == b.entry.date:
                continue
            if ctx.term_keys and not set(a.terms) & set(b.terms):
                continue
            n_shared, weight = link(a, b, ctx.idf)
            if n_shared < t.link_min_shared or weight < t.link_min_weight:
                continue
            sim = cosine(vecs[a.id], vecs[b.id])
            if sim >= t.same_subject_cosine:
                pairs.append((sim, a.id, b.id))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    return pairs


def axis_scores(ctx: Context, docs: Sequence[Doc]) -> dict[str, list[float]]:
    """Overlap of each document with each axis (see the module docstring)."""
    n = len(ctx.axes)
    axis_keys = [set(keys(a.text)) - ctx.term_key_set for a in ctx.axes]
    label_keys = [set(keys(a.label)) - ctx.term_key_set for a in ctx.axes]
    axis_aspects = [aspects(a.text) for a in ctx.axes]
    df = Counter(k for ks in axis_keys for k in ks)
    df_aspects = Counter(f for fs in axis_aspects for f in fs)
    norm = math.log(1 + n) if n > 1 else 1.0

    def spec(count: int) -> float:
        return math.log(1 + n / count) / norm if n > 1 else 1.0

    scores: dict[str, list[float]] = {}
    for d in docs:
        row: list[float] = []
        for k, ks in enumerate(axis_keys):
            total = sum(
                spec(df[s]) * (lexicon.weight("plan_clusters.label_boost") if s in label_keys[k] else 1.0)
                for s in sorted(d.vocab & ks)
            )
            total += ctx.tuning.aspect_weight * sum(
                spec(df_aspects[f]) * min(d.aspect_counts.get(f, 1), _ASPECT_WORDS_CAP)
                for f in sorted(d.aspects & axis_aspects[k])
            )
            row.append(round(total, int(lexicon.weight("plan_clusters.score_digits"))))
        scores[d.id] = row
    return scores


def _partner(doc_id: str, pairs: Pairs, primary: dict[str, int]) -> str | None:
    for _, a, b in pairs:
        if doc_id in (a, b):
            other = b if a == doc_id else a
            if other in primary:
                return other
    return None


def _place_unscored(
    ctx: Context,
    docs: Sequence[Doc],
    unplaced: list[Doc],
    pairs: Pairs,
    members: list[list[str]],
    primary: dict[str, int],
) -> None:
    """Documents sharing no axis word follow their same-subject partner, else the axis whose
    documents they resemble most, else the smallest axis."""
    n = len(members)
    vecs = vectors(ctx, docs)
    pending = list(unplaced)
    progressed = True
    while pending and progressed:
        progressed = False
        for d in list(pending):
            partner = _partner(d.id, pairs, primary)
            if partner is not None:
                primary[d.id] = primary[partner]
                members[primary[d.id]].append(d.id)
                pending.remove(d)
                progressed = True
    for d in pending:
        sims = [cosine(vecs[d.id], centroid(vecs, members[k])) for k in range(n)]
        if max(sims, default=0.0) > 0:
            k = sorted(range(n), key=lambda i: (-sims[i], i))[0]
        else:
            k = sorted(range(n), key=lambda i: (len(members[i]), i))[0]
        primary[d.id] = k
        members[k].append(d.id)


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
        for second in ranked[1:]:
            ratio = t.framing_ratio if d.framing else t.framing_ratio_other
            if row[second] < max(t.framing_min_score, ratio * row[ranked[0]]):
                break
            members[second].append(d.id)
            if not d.framing:
                break  # another document serves two axes at most
    _place_unscored(ctx, docs, unplaced, pairs, members, primary)
    # An axis of the request that got no document is still asked: it reads the document that
    # scores best on it (as a further axis of that document, not moved).
    for k in range(n):
        if not members[k]:
            top = max(docs, key=lambda d: (scores[d.id][k], d.id), default=None)
            if top is not None and scores[top.id][k] > 0:
                members[k].append(top.id)
    # Same subject, different dates: a pair split across axes gets its weaker-fitting member added
    # to the partner's axis (adding, not moving: the other axis may need it too).
    for _, a, b in pairs:
        axes_a = {k for k in range(n) if a in members[k]}
        axes_b = {k for k in range(n) if b in members[k]}
        if axes_a & axes_b:
            continue
        options = []
        for doc_id, target in ((a, primary[b]), (b, primary[a])):
            row = scores[doc_id]
            best = max(row)
            loss = 0.0 if best <= 0 else 1.0 - row[target] / best
            options.append((loss, doc_id, target))
        _, doc_id, target = min(options)
        members[target].append(doc_id)
    return members, scores


def units(ids: Sequence[str], pairs: Pairs, cap: int) -> list[list[str]]:
    """Groups of same-subject documents among ``ids`` (strongest pairs first, capped)."""
    group = {i: [i] for i in ids}
    for _, a, b in pairs:
        if a not in group or b not in group or group[a] is group[b]:
            continue
        if len(group[a]) + len(group[b]) > cap:
            continue
        merged = group[a] + group[b]
        for i in merged:
            group[i] = merged
    order = {i: k for k, i in enumerate(ids)}
    seen: list[list[str]] = []
    for i in ids:
        g = group[i]
        if not any(g is s for s in seen):
            seen.append(g)
    return [sorted(g, key=lambda i: order[i]) for g in seen]


def cluster(ctx: Context, docs: Sequence[Doc], pairs: Pairs) -> list[list[str]]:
    """No axis in the request: same-subject units merged by similarity into 3..max_subtasks groups."""
    cap, budget = ctx.data.max_docs, ctx.data.max_subtasks
    ids = [d.id for d in docs]
    target = min(
        budget,
        max(min(int(lexicon.weight("plan_clusters.min_clusters")), len(ids)), math.ceil(len(ids) / cap)),
    )
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
