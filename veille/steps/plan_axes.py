"""The per-axis measures of the documents' passages that settle what each analyst reads (issue 37,
item 2; veille.steps.plan_reading): which documents have a passage relevant to an axis, which must
be read whatever their score, which sections of a document answer an axis, and which axis a
planner's sub-task serves. Pure, order-independent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from veille.roles.planner import Plan, SubTask
from veille.steps.passages import PassageScores, passage_setting, term_keys
from veille.steps.plan_request import AxisProtocol

__all__ = [
    "axis_of_sub_task",
    "axis_question",
    "axis_sections",
    "branch_passages",
    "must_read",
    "relevant_documents",
]


def relevant_documents(scores: PassageScores, has_options: bool) -> dict[str, set[str]]:
    """Per axis key, the documents with a passage about that axis: a share of the corpus reference
    at least the bar (higher for a passage naming no option), and at least ``axis_margin`` of the
    passage's best axis (a passage on prices is not read for security because it says « sûr »)."""
    with_option = passage_setting("relevant_with_option")
    without = passage_setting("relevant_without_option")
    margin = passage_setting("axis_margin")
    out: dict[str, set[str]] = {k: set() for k in scores.shares}
    for n, passage in enumerate(scores.passages):
        bar = with_option if passage.options or not has_options else without
        best = max((s[n] for s in scores.shares.values()), default=0.0)
        for key, shares in scores.shares.items():
            if shares[n] >= bar and shares[n] >= margin * best:
                out[key].add(passage.doc_id)
    return out


def axis_sections(
    scores: PassageScores, axes: Sequence[AxisProtocol], relevant: Mapping[str, set[str]]
) -> dict[str, dict[str, list[int]]]:
    """Per axis key and document, the numbers of its sections about the axis: those naming an
    option and one of the axis's terms, and the best-scoring section on the axis of each document
    relevant to it (at least one, so a document read for an axis shows what made it relevant)."""
    out: dict[str, dict[str, list[int]]] = {a.key: {} for a in axes}
    for axis in axes:
        keys = [term_keys(t) for t in axis.terms]
        shares = scores.shares[axis.key]
        best: dict[str, tuple[float, int]] = {}
        for n, passage in enumerate(scores.passages):
            if passage.doc_id not in relevant[axis.key]:
                continue
            if passage.options and passage.names_terms(keys):
                out[axis.key].setdefault(passage.doc_id, []).append(passage.n)
            if passage.doc_id not in best or shares[n] > best[passage.doc_id][0]:
                best[passage.doc_id] = (shares[n], passage.n)
        for doc_id, (_, n) in best.items():
            found = out[axis.key].setdefault(doc_id, [])
            if n not in found:
                found.append(n)
    return {k: {d: sorted(ns) for d, ns in v.items()} for k, v in out.items()}


def branch_passages(
    st: SubTask, axis: str, final: Sequence[SubTask], plan: Plan, sections: Mapping[str, dict[str, list[int]]]
) -> dict[str, list[int]]:
    """The sections ``st`` reads of each document code added to it that a branch the planner chose
    for that document reads whole: each branch reads what answers its axis, nothing is lost."""
    chosen = {d: {p.question for p in plan.sub_tasks if d in p.doc_ids} for d in st.doc_ids}
    out: dict[str, list[int]] = {}
    for doc_id in st.doc_ids:
        if st.question in chosen[doc_id] or doc_id not in sections.get(axis, {}):
            continue  # the planner's own choice, or no section of the axis: read whole
        if any(o is not st and doc_id in o.doc_ids and o.question in chosen[doc_id] for o in final):
            out[doc_id] = sections[axis][doc_id]
    return out


def must_read(scores: PassageScores, axes: Sequence[AxisProtocol]) -> dict[str, str]:
    """Documents with a passage naming an option and one of an axis's terms -> the axis their best
    such passage scores highest on: read by some branch whatever their score (property-tested)."""
    out: dict[str, tuple[float, str]] = {}
    for n, passage in enumerate(scores.passages):
        if not passage.options:
            continue
        for axis in axes:
            if passage.names_terms([term_keys(t) for t in axis.terms]):
                share = scores.shares[axis.key][n]
                if passage.doc_id not in out or share > out[passage.doc_id][0]:
                    out[passage.doc_id] = (share, axis.key)
    return {d: k for d, (_, k) in out.items()}


def axis_question(request_title: str, axis: AxisProtocol) -> str:
    title = request_title.strip().rstrip("?!. ")
    context = f"Dans le cadre de « {title} », q" if title else "Q"
    return f"{context}ue disent les documents sur : {axis.title.strip().rstrip('.?')} ?"


def axis_of_sub_task(st: SubTask, axes: Sequence[AxisProtocol], relevant: Mapping[str, set[str]]) -> str:
    """The axis a planner's sub-task serves: the share of the axis's words its question and search
    terms use (the planner's framing is honoured), then how many of its documents are relevant to
    the axis, then request order."""
    words = set().union(*(term_keys(t) for t in (st.question, *st.search_terms)))

    def rank(k: int) -> tuple[float, int, int]:
        axis = axes[k]
        own = set().union(*(term_keys(t) for t in axis.terms))
        overlap = len(words & own) / len(own) if own else 0.0
        return (overlap, len(set(st.doc_ids) & relevant[axis.key]), -k)

    return axes[max(range(len(axes)), key=rank)].key
