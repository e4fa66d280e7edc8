"""Which catalogue documents concern the request (offline planner): the rules are in
docs/offline-engine.md ("Planner", 2 and 7), their thresholds in :class:`PlannerTuning`."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, fields
from statistics import median

import bm25s

from veille.offline import lexicon
from veille.offline.axes import Axis
from veille.offline.text import fold, is_english
from veille.offline.vocab import aspect_words, aspects, framing_words, keys
from veille.roles.planner import CatalogueEntry, PlannerInput

__all__ = ["Context", "Doc", "PlannerTuning", "linked", "relevant"]


@dataclass(frozen=True)
class PlannerTuning:
    """Thresholds of the rules: values and why in weights.toml [plan_relevance]."""

    strong_with_term: float
    strong_without_term: float
    title_only_with_term: float
    title_only_without_term: float
    aspect_weight: float
    weak_with_term: float
    aspect_words_min: float
    topic_with_term: float
    topic_without_term: float
    link_min_shared: float
    link_min_weight: float
    same_subject_cosine: float
    framing_ratio: float
    framing_ratio_other: float
    framing_min_score: float
    framing_min_words: float
    other_language_link: float
    outlier_share: float

    @classmethod
    def from_data(cls) -> PlannerTuning:
        return cls(**{f.name: lexicon.weight(f"plan_relevance.{f.name}") for f in fields(cls)})


@dataclass
class Doc:
    entry: CatalogueEntry
    keys: list[str]
    terms: tuple[str, ...]  # request terms it names (sorted)
    vocab: frozenset[str]  # non-term keys
    aspect_counts: dict[str, int]  # family -> distinct words
    framing: bool  # frames the project (requirements, sizing): may serve several axes

    @property
    def id(self) -> str:
        return self.entry.id


def _derive_terms(request_title: str, request: str) -> list[str]:
    """Fallback when the input gives no ``terms``: capitalised words that do not start a sentence."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?:])\s+|\n", f"{request_title}\n{request}"):
        for token in re.findall(r"[\wÀ-ÿ'-]+", sentence)[1:]:
            long = len(token) >= lexicon.weight("plan_relevance.term_min_letters")
            if long and token[0].isupper() and token[1:].islower():
                found.append(token)
    return list(dict.fromkeys(found))


class Context:
    """The request, its terms and axes, and the catalogue as :class:`Doc` records."""

    def __init__(
        self,
        data: PlannerInput,
        axes: list[Axis],
        framing_types: frozenset[str],
        tuning: PlannerTuning,
        bodies: Mapping[str, str] | None = None,
    ) -> None:
        self.data = data
        self.bodies = dict(bodies or {})
        self.tuning = tuning
        self.terms = list(data.terms) or _derive_terms(data.request_title, data.request)
        # Request term -> the keys that must all appear for a document to name it.
        self.term_keys = {t: ks for t in self.terms if (ks := tuple(dict.fromkeys(keys(t))))}
        self.term_key_set = frozenset(k for ks in self.term_keys.values() for k in ks)
        self.axes = axes
        self.framing_types = framing_types
        self.docs = [self._doc(e) for e in data.catalogue]
        self.by_id = {d.id: d for d in self.docs}
        df = Counter(k for d in self.docs for k in set(d.keys))
        smoothing = lexicon.weight("plan_relevance.idf_smoothing")
        self.idf = {k: math.log((len(self.docs) + 1) / (df[k] + smoothing)) for k in sorted(df)}
        self.request_english = is_english(f"{data.request_title} {data.request}")

    def text(self, entry: CatalogueEntry) -> str:
        with_summary = self.data.with_summaries and entry.summary
        return f"{entry.title} {entry.summary}" if with_summary else entry.title

    def _doc(self, entry: CatalogueEntry) -> Doc:
        text = self.text(entry)
        found = keys(text)
        present = set(found)
        named = tuple(sorted(t for t, ks in self.term_keys.items() if all(k in present for k in ks)))
        framing = fold(entry.source_type) in self.framing_types or framing_words(text) >= (
            self.tuning.framing_min_words if named else 1
        )
        counts = aspect_words(text)
        vocab = frozenset(present - self.term_key_set)
        return Doc(entry, found, named, vocab, counts, framing)

    def foreign(self, d: Doc) -> bool:
        """``d``'s title and summary are not in the request's language (English against French)."""
        return is_english(self.text(d.entry)) != self.request_english

    def request_weights(self) -> dict[str, float]:
        """Request vocabulary: axis and title words weigh 1, the rest of the request less."""
        weights = dict.fromkeys(keys(self.data.request), lexicon.weight("plan_relevance.request_word"))
        axes_text = " ".join(a.text for a in self.axes)
        weights.update(dict.fromkeys(keys(f"{self.data.request_title} {axes_text}"), 1.0))
        return {k: w for k, w in sorted(weights.items()) if k not in self.term_key_set}

    def request_aspects(self) -> frozenset[str]:
        axes_text = " ".join(a.text for a in self.axes)
        return aspects(f"{self.data.request_title} {axes_text or self.data.request}")


def linked(ctx: Context, a: Doc, b: Doc, share: float = 1.0) -> bool:
    """Same subject: enough shared rare words (``share`` of their weight for another language)."""
    shared = sorted(a.vocab & b.vocab)
    weight = sum(ctx.idf.get(s, 0.0) for s in shared)
    return len(shared) >= ctx.tuning.link_min_shared and weight >= ctx.tuning.link_min_weight * share


def _thresholds(ctx: Context, d: Doc) -> float:
    t = ctx.tuning
    names_term = bool(d.terms or not ctx.term_keys)
    if ctx.data.with_summaries and d.entry.summary:
        return t.strong_with_term if names_term else t.strong_without_term
    return t.title_only_with_term if names_term else t.title_only_without_term


def _topic_pull(ctx: Context, kept: set[str], own: dict[str, float]) -> None:
    """Topic feedback: the keys used by at least two kept documents, each weighted by the share of
    them using it."""
    t = ctx.tuning
    for _ in range(int(lexicon.weight("plan_relevance.topic_rounds"))):
        counts = Counter(k for i in kept for k in ctx.by_id[i].vocab)
        topic = {k: c / max(1, len(kept)) for k, c in sorted(counts.items()) if c >= 2}
        added = []
        for d in ctx.docs:
            if d.id in kept:
                continue
            overlap = sum(topic.get(k, 0.0) for k in d.vocab)
            if d.terms or not ctx.term_keys:
                if overlap >= t.topic_with_term:
                    added.append(d.id)
            elif overlap >= t.topic_without_term and own[d.id] >= _thresholds(ctx, d) / 2:
                added.append(d.id)
        if not added:
            return
        kept.update(added)


def _community(ctx: Context, kept: set[str]) -> None:
    """A document naming a request term that shares rare words with another one naming a term is
    about the same field (different products' price lists, say), even when the request words it in
    other terms. A name clash (the term used in another sense) shares none."""
    named = [d for d in ctx.docs if d.terms]
    kept.update(d.id for d in named if any(o is not d and linked(ctx, d, o) for o in named))


def _same_subject_pull(ctx: Context, kept: set[str], own: dict[str, float]) -> None:
    """A weakly relevant document joins when it shares a term and rare words with a kept one (a
    follow-up, a denial, a fix). Repeated until nothing changes."""
    changed = True
    while changed:
        changed = False
        for d in ctx.docs:
            if d.id in kept or (own[d.id] <= 0 and not d.terms):
                continue
            # A document in another language than the request shares few words with anything
            # kept: names and model numbers (« Studio », « Cloud ») are most of what it can share.
            share = ctx.tuning.other_language_link if ctx.foreign(d) else 1.0
            for other in [ctx.by_id[i] for i in sorted(kept)]:
                if (not d.terms or set(d.terms) & set(other.terms)) and linked(ctx, d, other, share):
                    kept.add(d.id)
                    changed = True
                    break


def _tokens(ctx: Context, d: Doc, *, with_body: bool) -> list[str]:
    """BM25 tokens of ``d``: its keys (text included when asked and given) and one per aspect
    family word."""
    body = ctx.bodies.get(d.id, "") if with_body else ""
    text = f"{ctx.text(d.entry)} {body}"
    found = keys(body) + d.keys if body else list(d.keys)
    return found + [f"@{f}" for f, n in sorted(aspect_words(text).items()) for _ in range(n)]


def _scores(retriever: bm25s.BM25, query: dict[str, float], n: int) -> list[float]:
    total = [0.0] * n
    for token, weight in sorted(query.items()):
        for i, value in enumerate(retriever.get_scores([token])):
            total[i] += weight * float(value)
    return total


def _bm25_kept(ctx: Context) -> set[str]:
    """Rule 7: term-naming documents scoring at least ``outlier_share`` of their median, on their
    catalogue lines; with the documents' text, also those that pass on it and use a word of the
    request's title there (a name clash shares a body's worth of ordinary words with a request,
    not its field). The text only adds documents."""
    kept = _bm25_pass(ctx, [_tokens(ctx, d, with_body=False) for d in ctx.docs])
    if ctx.bodies:
        corpus = [_tokens(ctx, d, with_body=True) for d in ctx.docs]
        field = set(keys(ctx.data.request_title)) - ctx.term_key_set
        passed = _bm25_pass(ctx, corpus)
        kept |= {d.id for k, d in enumerate(ctx.docs) if d.id in passed and not field.isdisjoint(corpus[k])}
    return kept


def _bm25_pass(ctx: Context, corpus: list[list[str]]) -> set[str]:
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    n = len(ctx.docs)
    query = dict(ctx.request_weights())
    query.update({f"@{f}": ctx.tuning.aspect_weight for f in sorted(ctx.request_aspects())})
    score = _scores(retriever, query, n)
    core = [k for k, d in enumerate(ctx.docs) if len(d.terms) >= 2]
    shared = Counter(w for k in core for w in set(corpus[k]) if w not in ctx.term_key_set)
    topic = {w: c / len(core) for w, c in sorted(shared.items()) if c >= 2}
    if topic:
        score = [a + b for a, b in zip(score, _scores(retriever, topic, n), strict=True)]
    named = [score[k] for k, d in enumerate(ctx.docs) if d.terms]
    reference = median(named) if named else 0.0
    floor = ctx.tuning.outlier_share * reference
    return {d.id for k, d in enumerate(ctx.docs) if d.terms and reference > 0 and score[k] >= floor}


def relevant(ctx: Context) -> list[Doc]:
    """The documents that concern the request (docs/offline-engine.md), in catalogue order."""
    weights = ctx.request_weights()
    wanted = ctx.request_aspects()
    t = ctx.tuning
    own = {
        d.id: sum(weights.get(k, 0.0) for k in d.vocab)
        + t.aspect_weight * len(d.aspect_counts.keys() & wanted)
        for d in ctx.docs
    }
    kept = {d.id for d in ctx.docs if len(d.terms) >= 2 or own[d.id] >= _thresholds(ctx, d)}
    # A document naming a term and speaking of the request's aspects in several words (a post-mortem
    # of one product, an advisory) is kept on less overlap; a name clash rarely has either.
    for d in ctx.docs:
        aspect_count = sum(n for f, n in d.aspect_counts.items() if f in wanted)
        if d.terms and aspect_count >= t.aspect_words_min and own[d.id] >= t.weak_with_term:
            kept.add(d.id)
    _community(ctx, kept)
    if ctx.docs:
        kept |= _bm25_kept(ctx)
    if kept:
        _topic_pull(ctx, kept, own)
    _same_subject_pull(ctx, kept, own)
    return [d for d in ctx.docs if d.id in kept]
