"""Offline planner: splits the request into sub-tasks over the catalogue, by lexical rules
(axes, relevance, assignment, caps, questions: docs/offline-engine.md, "Planner")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from veille.offline import lexicon
from veille.offline.axes import Axis, parse_axes
from veille.offline.capacity import fit_capacity, merge_axes
from veille.offline.clusters import Pairs, assign, cluster, same_subject_pairs
from veille.offline.relevance import Context, Doc, PlannerTuning, relevant
from veille.offline.text import fold
from veille.offline.vocab import key, keys
from veille.roles.planner import Plan, PlannerInput, SubTask

__all__ = ["PlannerTuning", "plan"]


def _join(names: Sequence[str], english: bool) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + (" and " if english else " et ") + names[-1]


def _question(ctx: Context, label: str, detail: str) -> str:
    """An autonomous question in the request's language: its title as context, the axis, the terms."""
    english = ctx.request_english
    title = ctx.data.request_title.strip().rstrip("?!. ").strip()
    if english:
        context = f"Within « {title} »" if title else "Within this technology watch"
    else:
        context = f"Dans le cadre de « {title} »" if title else "Dans le cadre de cette veille"
    label = label[:1].lower() + label[1:] if not label[1:2].isupper() else label
    detail = detail[:1].lower() + detail[1:] if detail[1:2].islower() else detail
    ask = "what do the documents say about" if english else "que disent les documents sur"
    body = f"{ask} {label}" + (f" ({detail})" if detail else "")
    # « pour A, B et C » unless the question already names every term.
    terms = ctx.terms
    if terms and not all(fold(t) in fold(body) for t in terms):
        body += f" {'for' if english else 'pour'} {_join(terms, english)}"
    return f"{context}, {body} ?"


def top_words(ctx: Context, ids: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """The most specific words of a group of documents, in their most frequent surface form;
    words of the request first (a label must come from the request, not from a stray word)."""
    other = set().union(*(ctx.by_id[i].vocab for i in exclude)) if exclude else set()
    request = set(ctx.request_weights())
    score: dict[str, float] = {}
    surface: dict[str, Counter[str]] = {}
    for i in ids:
        for token in re.findall(r"[A-Za-zÀ-ÿ0-9'-]+", ctx.text(ctx.by_id[i].entry)):
            for part in token.split("'"):
                folded = fold(part)
                long = len(folded) >= lexicon.weight("plan_planner.label_min_letters")
                k = key(folded) if long and not folded.isdigit() else ""
                if not k or k in ctx.term_key_set or k in other:
                    continue
                score[k] = score.get(k, 0.0) + ctx.idf.get(k, 0.0)
                surface.setdefault(k, Counter())[part.lower()] += 1
    ranked = sorted(score, key=lambda s: (s not in request, -score[s], s))
    top = ranked[: int(lexicon.weight("plan_planner.label_words"))]
    return [sorted(surface[s].items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for s in top]


def part_facets(ctx: Context, axis: Axis, parts: Sequence[Sequence[str]]) -> list[list[str]]:
    """Facets of a split axis, each given to the part whose documents it matches best."""
    out: list[list[str]] = [[] for _ in parts]
    vocab = [set().union(*(ctx.by_id[i].vocab for i in p)) if p else set() for p in parts]
    for facet in axis.facets:
        fs = set(keys(facet)) - ctx.term_key_set
        aff = [sum(ctx.idf.get(s, 0.0) for s in sorted(fs & v)) for v in vocab]
        best = sorted(range(len(parts)), key=lambda k: (-aff[k], k))[0]
        if aff[best] > 0:
            out[best].append(facet)
    for k, p in enumerate(parts):
        if not out[k]:
            out[k] = top_words(ctx, p, exclude=[w for m, q in enumerate(parts) if m != k for w in q])
    return out


def _axis_tasks(ctx: Context, kept: list[Doc], pairs: Pairs) -> list[tuple[str, list[str]]]:
    members, scores = assign(ctx, kept, pairs)
    parts_of: dict[int, list[list[str]]] = {}
    for axis_index, ids in fit_capacity(ctx, merge_axes(ctx, members), pairs, scores):
        parts_of.setdefault(axis_index, []).append(ids)
    out: list[tuple[str, list[str]]] = []
    for axis_index in sorted(parts_of):
        axis, parts = ctx.axes[axis_index], parts_of[axis_index]
        if len(parts) > 1:
            details = [", ".join(facets) for facets in part_facets(ctx, axis, parts)]
        else:
            details = [", ".join(axis.facets) if axis.merged else axis.detail]
        out += [(_question(ctx, axis.label, detail), ids) for ids, detail in zip(parts, details, strict=True)]
    return out


def _cluster_tasks(ctx: Context, kept: list[Doc], pairs: Pairs) -> list[tuple[str, list[str]]]:
    out = []
    for ids in cluster(ctx, kept, pairs):
        label = _join(top_words(ctx, ids), ctx.request_english)
        out.append((_question(ctx, label, ""), ids))
    return out


def plan(
    data: PlannerInput,
    framing_types: frozenset[str] = frozenset(),
    tuning: PlannerTuning | None = None,
    bodies: Mapping[str, str] | None = None,
) -> Plan:
    """The offline plan for ``data``. ``bodies``: the documents' text by id, when the caller has
    it: relevance then reads it (it costs no token)."""
    axes = parse_axes(data.request, data.terms)
    framing = frozenset(fold(t) for t in framing_types)
    ctx = Context(data, axes, framing, tuning or PlannerTuning.from_data(), bodies)
    kept = relevant(ctx)
    kept_ids = {d.id for d in kept}
    excluded = [d.id for d in ctx.docs if d.id not in kept_ids]
    if not kept:
        return Plan(sub_tasks=[], excluded=excluded)
    pairs = same_subject_pairs(ctx, kept)
    tasks = (_axis_tasks if ctx.axes else _cluster_tasks)(ctx, kept, pairs)
    # The answer must be valid for the planner's schema (caps included: veille.roles.planner): what
    # could not be fitted is left unmentioned, so the plan step's coverage check places it. Each
    # sub-task reads its documents in date order.
    sub_tasks = [
        SubTask(
            id=f"st-{n}",
            question=question,
            doc_ids=sorted(dict.fromkeys(ids), key=lambda i: (ctx.by_id[i].entry.date, i))[: data.max_docs],
        )
        for n, (question, ids) in enumerate(tasks, 1)
    ]
    return Plan(sub_tasks=sub_tasks[: data.max_subtasks], excluded=excluded)
