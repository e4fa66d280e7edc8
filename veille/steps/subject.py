"""Whether a document carries the request's subject (issue 37: relevance needs the subject too).

An axis's words (« résultats », « abandon », « prix ») are written in documents of every field: a
sheet about military air transport states its results too. A document is read for an axis only
when it also carries the request's *subject*: the request's own content words (title and text)
that are neither an axis's words, nor an option's, nor the words requests use to give orders
(``REQUEST_META``) or to speak of their own work and documents (``[subject_frame]``). Each document's passages are scored with BM25 (``bm25s``, the library of
veille.steps.passages) against those words, over the documents of the corpus, and the score is
divided by the corpus's own reference: the median positive score. A share of at least
``[passages].subject_share`` (veille/data/coverage.toml) carries the subject; so does a document
naming a compared option (the options are the request's subject by definition).

Nothing is measured (every document carries the subject) when the request has no such word in the
corpus, or when fewer than ``subject_min_scored_share`` of the documents naming an option use one
of them: the words then do not describe what the corpus's documents say (a French request over
English documents whose subject is only their product's name). Pure, order-independent.
"""

from __future__ import annotations

import statistics
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import bm25s

from veille.resources import data_file
from veille.steps.coverage import REQUEST_META
from veille.steps.passages import Passage, passage_setting, term_keys
from veille.steps.plan_request import AxisProtocol

__all__ = ["Subject", "inventory_items", "measure_subject", "subject_keys"]


def subject_keys(
    request_title: str, request: str, axes: Sequence[AxisProtocol], options: Sequence[str]
) -> frozenset[str]:
    """The keys of the request's subject: its content words that no axis (title or terms) and no
    option uses, order words left out (veille.steps.passages' ``term_keys``: folded, six letters)."""
    words = term_keys(f"{request_title}\n{request}")
    axis = set().union(*(term_keys(t) for a in axes for t in (a.title, *a.terms)))
    named = set().union(*(term_keys(o) for o in options))
    return frozenset(words - axis - named - _META - _frame())


_META = frozenset(term_keys(REQUEST_META))


class SubjectDataError(ValueError):
    """veille/data/coverage.toml ``[subject_frame]`` is missing its words or their reason."""


@cache
def _frame() -> frozenset[str]:
    """The keys of ``[subject_frame].words`` (veille/data/coverage.toml)."""
    path = data_file("coverage.toml")
    with path.open("rb") as handle:
        table = tomllib.load(handle).get("subject_frame", {})
    found = table.get("words")
    if not isinstance(table.get("why"), str) or not isinstance(found, list) or not found:
        raise SubjectDataError(f'{path}: [subject_frame] needs words = [...] and why = "..."')
    return frozenset().union(*(term_keys(str(w)) for w in found))


@dataclass(frozen=True)
class Subject:
    """Per document, its share of the corpus's typical score on the subject's words."""

    keys: tuple[str, ...] = ()
    shares: dict[str, float] = field(default_factory=dict)  # empty: not measured
    naming: frozenset[str] = frozenset()  # documents naming a compared option

    @property
    def measured(self) -> bool:
        return bool(self.shares)

    def by_words(self) -> frozenset[str]:
        """The documents whose own words carry the subject (naming an option aside)."""
        bar = passage_setting("subject_share")
        return frozenset(i for i, share in self.shares.items() if share >= bar)

    def carries(self, doc_id: str) -> bool:
        """Whether ``doc_id`` carries the subject (always, when nothing was measured)."""
        if not self.measured or doc_id in self.naming:
            return True
        return self.shares.get(doc_id, 0.0) >= passage_setting("subject_share")


def measure_subject(passages: Sequence[Passage], keys: frozenset[str]) -> Subject:
    """The subject's shares over the documents of ``passages`` (veille.steps.passages order)."""
    tokens: dict[str, list[str]] = {}
    naming: set[str] = set()
    for p in passages:
        tokens.setdefault(p.doc_id, []).extend(p.keys)
        if p.options:
            naming.add(p.doc_id)
    ids = sorted(tokens)
    vocabulary = {w for t in tokens.values() for w in t}
    query = sorted(keys & vocabulary)
    if not query:
        return Subject(naming=frozenset(naming))
    retriever = bm25s.BM25()
    retriever.index([tokens[i] or ["\x00"] for i in ids], show_progress=False)
    scores = dict(zip(ids, (float(x) for x in retriever.get_scores(query)), strict=True))
    scored = [i for i in naming if scores[i] > 0]
    if naming and len(scored) < passage_setting("subject_min_scored_share") * len(naming):
        return Subject(tuple(query), naming=frozenset(naming))  # the words say nothing of this corpus
    reference = statistics.median([s for s in scores.values() if s > 0] or [0.0])
    if reference <= 0:
        return Subject(tuple(query), naming=frozenset(naming))
    shares = {i: round(s / reference, 4) for i, s in scores.items()}
    return Subject(tuple(query), shares, frozenset(naming))


def inventory_items(relevant: dict[str, set[str]], carriers: set[str], axes: Sequence[AxisProtocol]) -> None:
    """An inventory asks for one entry per item found: every document carrying the request's
    subject is read, by an axis it has a passage on, else by the first axis no word identifies
    (« ce qu'il fait et pour qui » is answered by the whole sheet), else by the first axis."""
    if not axes:
        return
    home = next((a.key for a in axes if not any(term_keys(t) for t in a.terms)), axes[0].key)
    placed = set().union(*relevant.values())
    for doc_id in sorted(carriers - placed):
        relevant[home].add(doc_id)
