"""Offline planner: splits the request into sub-tasks over the catalogue, by lexical rules.

Steps (each one deterministic, ties broken by document id):

1. Axes come from the request's wording (:mod:`~veille.offline.axes`: a list, headings or an
   enumeration in a sentence); without any, the relevant documents are clustered and each cluster
   becomes an axis, named by its most specific words (request words first).
2. Relevance (:mod:`~veille.offline.relevance`): request words, aspect families, topic
   feedback from the documents already kept, same-subject pulls.
3. Each kept document goes to its best axis (:mod:`~veille.offline.clusters`); a framing
   document serves every axis it scores on, another document a second axis when both scores are
   close. Same-subject documents at different dates end up in the same sub-task.
4. Caps (:mod:`~veille.offline.capacity`): axes merged down to ``max_subtasks``, an axis over
   ``max_docs`` split in two while ``max_subtasks`` allows, rather than dropping documents.
5. Questions: autonomous, in the request's language, naming the terms compared.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from veille.offline import lexicon
from veille.offline.axes import Axis, parse_axes
from veille.offline.capacity import fit_capacity, merge_axes
from veille.offline.clusters import assign, cluster, same_subject_pairs
from veille.offline.relevance import Context, PlannerTuning, relevant
from veille.offline.text import fold, is_english
from veille.offline.vocab import key, keys
from veille.roles.planner import Plan, PlannerInput, SubTask

__all__ = ["PlannerTuning", "plan"]


def _english(text: str) -> bool:
    """The request is written in English (more English than French function words)."""
    return is_english(text)


def _join(names: Sequence[str], english: bool) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + (" and " if english else " et ") + names[-1]


class _Questions:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.english = _english(f"{ctx.data.request_title} {ctx.data.request}")

    def _context(self) -> str:
        title = self.ctx.data.request_title.strip().rstrip("?!. ").strip()
        if self.english:
            return f"Within « {title} »" if title else "Within this technology watch"
        return f"Dans le cadre de « {title} »" if title else "Dans le cadre de cette veille"

    def _terms_phrase(self, text: str) -> str:
        """' pour A, B et C' unless the question already names every term."""
        terms = self.ctx.terms
        if not terms or all(fold(t) in fold(text) for t in terms):
            return ""
        return f" {'for' if self.english else 'pour'} {_join(terms, self.english)}"

    def question(self, axis: Axis, facets: Sequence[str] | None) -> str:
        label = axis.label[:1].lower() + axis.label[1:] if not axis.label[1:2].isupper() else axis.label
        if facets is None:
            detail = ", ".join(axis.facets) if axis.merged else axis.detail
        else:
            detail = ", ".join(facets)
        detail = detail[:1].lower() + detail[1:] if detail[1:2].islower() else detail
        ask = "what do the documents say about" if self.english else "que disent les documents sur"
        body = f"{ask} {label}" + (f" ({detail})" if detail else "")
        return f"{self._context()}, {body}{self._terms_phrase(body)} ?"


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
                k_ = (
                    key(folded)
                    if len(folded) >= lexicon.weight("plan_planner.label_min_letters")
                    and not folded.isdigit()
                    else ""
                )
                if not k_ or k_ in ctx.term_key_set or k_ in other:
                    continue
                score[k_] = score.get(k_, 0.0) + ctx.idf.get(k_, 0.0)
                surface.setdefault(k_, Counter())[part.lower()] += 1
    ranked = sorted(score, key=lambda s: (s not in request, -score[s], s))[
        : int(lexicon.weight("plan_planner.label_words"))
    ]
    return [sorted(surface[s].items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for s in ranked]


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


def _date_order(ctx: Context, ids: Sequence[str]) -> list[str]:
    return sorted(dict.fromkeys(ids), key=lambda i: (ctx.by_id[i].entry.date, i))


def _axis_sub_tasks(ctx: Context, questions: _Questions, kept: list, pairs: list) -> list[SubTask]:
    members, scores = assign(ctx, kept, pairs)
    tasks = fit_capacity(ctx, merge_axes(ctx, members), pairs, scores)
    parts_of: dict[int, list[list[str]]] = {}
    for axis_index, ids in tasks:
        parts_of.setdefault(axis_index, []).append(ids)
    sub_tasks: list[SubTask] = []
    for axis_index in sorted(parts_of):
        axis = ctx.axes[axis_index]
        parts = parts_of[axis_index]
        facets: list[list[str] | None] = list(part_facets(ctx, axis, parts)) if len(parts) > 1 else [None]
        for ids, these in zip(parts, facets, strict=True):
            sub_tasks.append(
                SubTask(
                    id=f"st-{len(sub_tasks) + 1}",
                    question=questions.question(axis, these),
                    doc_ids=_date_order(ctx, ids),
                )
            )
    return sub_tasks


def _cluster_sub_tasks(ctx: Context, questions: _Questions, kept: list, pairs: list) -> list[SubTask]:
    sub_tasks: list[SubTask] = []
    for ids in cluster(ctx, kept, pairs):
        words = top_words(ctx, ids)
        label = _join(words, questions.english)
        sub_tasks.append(
            SubTask(
                id=f"st-{len(sub_tasks) + 1}",
                question=questions.question(Axis(label=label, facets=[], text=""), None),
                doc_ids=_date_order(ctx, ids),
            )
        )
    return sub_tasks


def plan(
    data: PlannerInput,
    framing_types: frozenset[str] = frozenset(),
    tuning: PlannerTuning | None = None,
    bodies: Mapping[str, str] | None = None,
) -> Plan:
    """The offline plan for ``data`` (see the module docstring for the rules). ``bodies``: the
    documents' text by id, when the caller has it: relevance then reads it (it costs no token)."""
    axes = parse_axes(data.request, data.terms)
    framing = frozenset(fold(t) for t in framing_types)
    ctx = Context(data, axes, framing, tuning or PlannerTuning.from_data(), bodies)
    kept = relevant(ctx)
    kept_ids = {d.id for d in kept}
    excluded = [d.id for d in ctx.docs if d.id not in kept_ids]
    if not kept:
        return Plan(sub_tasks=[], excluded=excluded)
    pairs = same_subject_pairs(ctx, kept)
    questions = _Questions(ctx)
    build = _axis_sub_tasks if ctx.axes else _cluster_sub_tasks
    sub_tasks = build(ctx, questions, kept, pairs)
    # The answer must be valid for the planner's schema (caps included: veille.roles.planner): what
    # could not be fitted is left unmentioned, so the plan step's coverage check places it.
    capped = [st.model_copy(update={"doc_ids": st.doc_ids[: data.max_docs]}) for st in sub_tasks]
    return Plan(sub_tasks=capped[: data.max_subtasks], excluded=excluded)
