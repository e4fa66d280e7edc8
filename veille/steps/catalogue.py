"""The catalogue step: what the planner sees, within a token budget (issue 11, item 4).

Under ``Settings.planner_token_budget`` (instructions + prompt, :func:`planner_tokens`) the planner
sees the whole catalogue, exactly as before. Above it:

1. near-duplicates are collapsed (:mod:`veille.steps.duplicates`): one line per group, under its most
   recent member, with the copies' ids on the line (``doc-05 (+doc-04)``);
2. if that is still too much, a shortlist by relevance to the request: BM25 (``bm25s``) of each line's
   title and summary against the request's title, text and terms, a document naming more request
   terms first on ties; lines whose titles differ only by the product named or a number are damped (diversity);
   as many lines as the budget holds (shown in catalogue order).

Everything left out before planning is returned with its reason (``duplicate``: a copy of a line
shown or left out; ``shortlist``: not in the shortlist) so plan.json records it.

Why bm25s: pure Python over numpy (no index on disk, unlike tantivy; maintained and fast at 20,000
lines, unlike rank-bm25), and BM25 is the usual lexical relevance a planner's shortlist needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import bm25s
from pydantic import BaseModel, Field

from veille.corpus.request import Request
from veille.corpus.terms import derive_terms
from veille.models.base import Model
from veille.roles.planner import INSTRUCTIONS, CatalogueEntry, PlannerInput, build_prompt, catalogue_line
from veille.settings import Settings
from veille.steps.text_relevance import TextRelevance, fold_ascii, keys, measure
from veille.steps.unchanged import remembered_collapse
from veille.store.readers import fetch_documents
from veille.tokens import estimate_tokens

__all__ = [
    "LeftOut",
    "PlannerCatalogue",
    "planner_catalogue",
    "planner_input",
    "planner_reads_texts",
    "planner_tokens",
    "rank_entries",
    "text_relevance",
    "with_texts",
]

_TERM_WEIGHT = 3
_REPEAT_DAMPING = 0.5  # score factor of each further line repeating a title but for the product  # request terms repeated in the BM25 query: the products compared matter most


class LeftOut(BaseModel):
    """A catalogue document the planner did not see, and why (same fields as the plan's exclusions)."""

    id: str
    reason: Literal["shortlist", "duplicate"]
    detail: str = ""


class PlannerCatalogue(BaseModel):
    """The planner input and what was left out before planning."""

    data: PlannerInput
    left_out: list[LeftOut] = Field(default_factory=list)
    documents: int  # catalogue documents before collapsing and shortlisting
    tokens: int  # planner input tokens (estimate) of ``data``
    budget: int

    @property
    def note(self) -> str:
        """One line for the run log."""
        dupes = sum(1 for o in self.left_out if o.reason == "duplicate")
        short = sum(1 for o in self.left_out if o.reason == "shortlist")
        return (
            f"{len(self.data.catalogue)}/{self.documents} documents shown to the planner, ~{self.tokens} "
            f"tokens (budget {self.budget}); {dupes} duplicate(s) collapsed, {short} left out by the shortlist"
        )


def planner_input(request: Request, catalogue: Sequence[CatalogueEntry], settings: Settings) -> PlannerInput:
    """The whole catalogue as the planner's input (no budget applied)."""
    return PlannerInput(
        request_title=request.title,
        request=request.text,
        terms=derive_terms(request),
        catalogue=list(catalogue),
        max_subtasks=settings.max_subtasks,
        max_docs=settings.max_docs,
        with_summaries=settings.planner_sees_summaries,
    )


def planner_tokens(data: PlannerInput) -> int:
    """Estimated tokens of the planner input: instructions + prompt."""
    return estimate_tokens(INSTRUCTIONS) + estimate_tokens(build_prompt(data))


def _tokens(text: str) -> list[str]:
    return keys(fold_ascii(text))


def _named(words: set[str], term_tokens: Sequence[list[str]]) -> int:
    return sum(1 for tokens in term_tokens if tokens and set(tokens) <= words)


def rank_entries(data: PlannerInput, entries: Sequence[CatalogueEntry]) -> list[CatalogueEntry]:
    """``entries`` by relevance to the request, best first (BM25, then terms named, then id), a line
    repeating another's title but for the product named or a number damped by half at each repeat."""
    if not entries:
        return []
    titles = [_tokens(e.title) for e in entries]
    texts = [t + _tokens(e.summary or "") for t, e in zip(titles, entries, strict=True)]
    retriever = bm25s.BM25()
    retriever.index(texts if data.with_summaries else titles, show_progress=False)
    query = _tokens(f"{data.request_title} {data.request}") + _tokens(" ".join(data.terms)) * _TERM_WEIGHT
    scores = [round(float(x), 6) for x in retriever.get_scores(query)]
    term_tokens = [_tokens(t) for t in data.terms]
    named = [_named(set(t), term_tokens) for t in texts]
    order = sorted(range(len(entries)), key=lambda i: (-scores[i], -named[i], entries[i].id))
    # Diversity: lines whose title says the same once the request terms and numbers are removed
    # ("A : prix", "B : prix", "A : prix n° 12") have their score halved at each repeat, so one
    # subject said per product does not crowd out a unique one.
    term_words = {w for tokens in term_tokens for w in tokens}
    seen: dict[tuple[str, ...], int] = {}
    damped: dict[int, float] = {}
    for i in order:
        signature = tuple(sorted({w for w in titles[i] if w not in term_words and not _has_digit(w)}))
        turn = seen.get(signature, 0)
        seen[signature] = turn + 1
        damped[i] = scores[i] * _REPEAT_DAMPING**turn
    position = {i: n for n, i in enumerate(order)}
    return [entries[i] for i in sorted(order, key=lambda i: (-round(damped[i], 6), position[i]))]


def _has_digit(word: str) -> bool:
    return not word.isalpha()  # tokens are [a-z0-9]+


def _fit(data: PlannerInput, ranked: Sequence[CatalogueEntry], budget: int) -> int:
    """The most lines of ``ranked`` (best first) whose planner input stays within ``budget``."""
    position = {e.id: n for n, e in enumerate(data.catalogue)}

    def tokens(n: int) -> int:
        shown = sorted(ranked[:n], key=lambda e: position[e.id])
        return planner_tokens(data.model_copy(update={"catalogue": shown}))

    # Upper bound: the title-only lines alone (summaries only add) must fit, so the search stays
    # within a few hundred lines even over 20,000.
    room, high = budget - planner_tokens(data.model_copy(update={"catalogue": []})), 0
    while high < len(ranked) and room >= 0:
        room -= estimate_tokens(catalogue_line(ranked[high])) + 1
        high += 1
    low = 1  # at least one line, even if the request alone fills the budget
    while low < high:
        mid = (low + high + 1) // 2
        if tokens(mid) <= budget:
            low = mid
        else:
            high = mid - 1
    return low


def _over(data: PlannerInput, budget: int) -> bool:
    """Whether the planner input exceeds ``budget``; a lower bound (title-only lines) first, so a
    20,000-line catalogue is not rendered to learn that it does not fit."""
    lines = sum(estimate_tokens(catalogue_line(e)) for e in data.catalogue)
    return lines > budget or planner_tokens(data) > budget


def planner_catalogue(
    request: Request,
    catalogue: Sequence[CatalogueEntry],
    settings: Settings,
    fingerprints: Mapping[str, tuple[str, Sequence[int]]] | None = None,
) -> PlannerCatalogue:
    """The planner's input within ``settings.planner_token_budget`` (see the module docstring);
    ``fingerprints`` (Catalogue.fingerprints) lets copies be found on their text."""
    budget = settings.planner_token_budget
    data = planner_input(request, catalogue, settings)
    if not catalogue or not _over(data, budget):
        return PlannerCatalogue(
            data=data, documents=len(catalogue), tokens=planner_tokens(data), budget=budget
        )
    # Kept for the same catalogue and texts: an unchanged night does not compare every pair again.
    memo = settings.cache_dir if settings.use_cache else None
    collapsed = remembered_collapse(data.catalogue, fingerprints, memo)
    left_out = [
        LeftOut.model_construct(
            id=copy, reason="duplicate", detail=f"copie de {rep}"
        )  # 20,000: no re-validation
        for copy, rep in sorted(collapsed.copy_of.items())
    ]
    data = data.model_copy(update={"catalogue": collapsed.entries})
    if _over(data, budget):
        ranked = rank_entries(data, collapsed.entries)
        n = _fit(data, ranked, budget)
        shown = {e.id for e in ranked[:n]}
        left_out += [
            LeftOut.model_construct(
                id=e.id, reason="shortlist", detail=f"rang {rank + 1} sur {len(ranked)} (pertinence BM25)"
            )
            for rank, e in enumerate(ranked)
            if e.id not in shown
        ]
        data = data.model_copy(update={"catalogue": [e for e in collapsed.entries if e.id in shown]})
    order = {e.id: n for n, e in enumerate(catalogue)}
    left_out.sort(key=lambda o: order.get(o.id, len(order)))
    return PlannerCatalogue(
        data=data, left_out=left_out, documents=len(catalogue), tokens=planner_tokens(data), budget=budget
    )


def planner_reads_texts(backend: Model) -> bool:
    """Whether the planner's backend is given the documents' text: only one that pays no token
    (``Model.free``: the offline engine reads them with BM25); a model plans on the catalogue alone
    (a paid one pays for every token, a local one spends its context on them)."""
    return backend.free


def with_texts(shown: PlannerCatalogue, database: Path) -> PlannerCatalogue:
    """``shown`` with the text of each document it shows (``PlannerInput.texts``), read from the
    store; the prompt never renders them, and the token estimate stays the catalogue's."""
    bodies = {d.id: d.body for d in fetch_documents(database, [e.id for e in shown.data.catalogue])}
    return shown.model_copy(update={"data": shown.data.model_copy(update={"texts": bodies})})


def text_relevance(shown: PlannerCatalogue, database: Path) -> TextRelevance:
    """The text of every document the planner sees, measured against the request (coverage by code,
    veille.steps.text_relevance): the bodies ``with_texts`` attached, else read from the store."""
    data = shown.data
    bodies = data.texts or {d.id: d.body for d in fetch_documents(database, [e.id for e in data.catalogue])}
    return measure(data.request_title, data.request, data.terms, data.catalogue, bodies)
