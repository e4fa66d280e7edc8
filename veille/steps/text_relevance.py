"""How much each document's text concerns the request, relative to the corpus (issue 23, item 2).

The plan's coverage is decided by code both ways, for every backend, on the same measure: the
BM25 score (``bm25s``, the library the catalogue shortlist uses) of each document's title, summary
and the opening of its text against the request's topic words (its content words, the compared
terms and the words every request uses to give orders left out), divided by a reference taken from
the corpus itself: the median score of the documents whose text names a request term, or of every
document scoring above zero when none does. No threshold is a constant of one corpus: a share of
the corpus's own typical score is compared with the shares in ``veille/data/coverage.toml``.

- *off topic*: a share under ``off_topic_share`` (a canteen menu, another project's minutes: at
  most a passing word of the request's field), or under ``off_topic_share_with_term`` for a
  document naming a compared product (a homonym that shares no word of the field) — not read even
  when the planner placed it, not put back when a cap cut it. The bars are low on purpose: a short
  fix release note uses few of the field's words, and removing it would hide the fix (precision);
- *relevant*: a share of at least ``relevant_with_term`` for a document whose text names a request
  term, of ``relevant_without_term`` for one naming none. A relevant document the planner did not
  mention is placed; one it excluded is placed only when the plan reads less than half of the
  documents naming a term (veille.steps.plan): homonyms are written with the request's words, so
  one exclusion is a judgment a lexical measure cannot overrule, many are a broken plan.

Nothing is measured, and the planner's choices stand (the title-level checks of
veille.steps.coverage remain), when no word of the request or the field occurs in the corpus, or
when fewer than ``min_scored_share`` of the documents naming a term score at all: the words then do
not describe what those documents say (short notes, another vocabulary), and a share of a
reference taken from the few that do would call the others off topic.
"""

from __future__ import annotations

import math
import re
import statistics
import tomllib
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache

import bm25s
from pydantic import BaseModel, Field

from veille.offline.text import STOP_WORDS
from veille.resources import data_file
from veille.roles.planner import CatalogueEntry
from veille.steps.coverage import REQUEST_META

__all__ = ["TextRelevance", "fold_ascii", "keys", "measure", "setting"]

_KEY = 6  # words cut to six letters: a cheap stem that also matches French and English forms
_WORD_RE = re.compile(r"[a-z0-9]+")


class CoverageDataError(ValueError):
    """veille/data/coverage.toml is missing a value or its reason."""


@cache
def setting(key: str) -> float:
    """``[text].<key>`` of veille/data/coverage.toml (``{ value = …, why = "…" }``)."""
    path = data_file("coverage.toml")
    with path.open("rb") as handle:
        item = tomllib.load(handle).get("text", {}).get(key)
    if not isinstance(item, dict) or not isinstance(item.get("why"), str) or not item["why"].strip():
        raise CoverageDataError(f'{path}: [text].{key} missing (expected {{ value = …, why = "…" }})')
    value = item.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise CoverageDataError(f"{path}: [text].{key}.value must be a non-negative number")
    return float(value)


class TextRelevance(BaseModel):
    """Per document id: its score as a share of the corpus reference, and the terms its text names.
    Empty when nothing could be measured (code then leaves the planner's choices as they are). The
    thresholds travel with the measure, so a changed data file changes the plan task's cache key."""

    shares: dict[str, float] = Field(default_factory=dict)
    terms: dict[str, list[str]] = Field(default_factory=dict)
    words: dict[str, int] = Field(default_factory=dict)  # content words measured per document
    min_words_to_judge: float = Field(default_factory=lambda: setting("min_words_to_judge"))
    off_topic_share: float = Field(default_factory=lambda: setting("off_topic_share"))
    off_topic_share_with_term: float = Field(default_factory=lambda: setting("off_topic_share_with_term"))
    relevant_with_term: float = Field(default_factory=lambda: setting("relevant_with_term"))
    relevant_without_term: float = Field(default_factory=lambda: setting("relevant_without_term"))

    def off_topic(self, doc_id: str) -> bool:
        # Absence of the field's words counts only in a text with room for them: a one-line note
        # (« Tamaris 2.1 est sortie. ») is never called off topic.
        if doc_id not in self.shares or self.words.get(doc_id, 0) < self.min_words_to_judge:
            return False
        floor = self.off_topic_share_with_term if self.terms.get(doc_id) else self.off_topic_share
        return self.shares[doc_id] < floor

    def naming(self) -> list[str]:
        """The documents whose text names a request term."""
        return list(self.terms)

    def relevant(self, doc_id: str) -> bool:
        if doc_id not in self.shares:
            return False
        floor = self.relevant_with_term if self.terms.get(doc_id) else self.relevant_without_term
        return self.shares[doc_id] >= floor

    def describe(self, doc_id: str) -> str:
        """French, for alerts: « texte : 0,04 du score typique du corpus »."""
        if doc_id not in self.shares:
            return ""
        share = f"{self.shares[doc_id]:.2f}".replace(".", ",")
        return f"texte : {share} du score typique du corpus"


def fold_ascii(text: str) -> str:
    """Case and accents off, in one pass over the whole text: thousands of documents stay a matter
    of seconds (the catalogue shortlist folds its lines the same way)."""
    return unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()


def _names(folded: str, terms: Sequence[str]) -> list[str]:
    """The request terms ``folded`` names as whole words."""
    return [
        t
        for t in terms
        if (k := fold_ascii(t).strip()) and re.search(rf"(?<!\w){re.escape(k)}(?!\w)", folded)
    ]


def keys(folded: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """Words of ``folded`` (:func:`fold_ascii`) cut to six letters, but short ones, numbers and
    ``stop``: « latence » and « latency », « vidéo » and « video » meet, so a French request
    measures English documents too (the catalogue shortlist ranks on the same keys)."""
    return [w[:_KEY] for w in _WORD_RE.findall(folded) if len(w) > 2 and w not in stop and not w.isdigit()]


def _tokens(text: str) -> list[str]:
    return keys(fold_ascii(text), STOP_WORDS)


def _feedback(tokens: Sequence[list[str]], named: Sequence[list[str]], skip: set[str]) -> list[str]:
    """Pseudo-relevance feedback: the words the documents comparing request terms share (those
    naming two terms or more, else one), specific to them in the corpus — the field's vocabulary,
    in whatever language those documents are written. A homonym names a term, not this field."""
    for least in (2, 1):
        pool = [set(t) for t, n in zip(tokens, named, strict=True) if len(n) >= least]
        if len(pool) >= 2:
            break
    else:
        return []
    total = len(tokens)
    corpus_df = Counter(w for t in tokens for w in set(t))
    pool_df = Counter(w for t in pool for w in t)
    max_df = setting("feedback_max_df")
    ranked = sorted(
        (
            (-n * math.log(total / corpus_df[w]), w)
            for w, n in pool_df.items()
            if n >= 2 and w not in skip and corpus_df[w] <= max_df * total
        ),
    )
    return [w for _, w in ranked[: int(setting("feedback_words"))]]


def measure(
    request_title: str,
    request: str,
    terms: Sequence[str],
    catalogue: Sequence[CatalogueEntry],
    bodies: Mapping[str, str],
) -> TextRelevance:
    """The measure over ``catalogue`` (the documents the planner sees), ``bodies`` by id."""
    if not catalogue:
        return TextRelevance()
    limit = int(setting("max_text_chars"))
    texts = [fold_ascii(f"{e.title}\n{e.summary or ''}\n{bodies.get(e.id, '')[:limit]}") for e in catalogue]
    tokens = [keys(t, STOP_WORDS) for t in texts]
    named = [_names(t, terms) for t in texts]
    skip = set(_tokens(" ".join(terms))) | set(_tokens(REQUEST_META))
    topic = {w for w in _tokens(f"{request_title}\n{request}") if w not in skip}
    query = sorted(topic | set(_feedback(tokens, named, skip)))
    vocabulary = {w for t in tokens for w in t}
    query = [w for w in query if w in vocabulary]
    if not query:
        return TextRelevance()
    retriever = bm25s.BM25()
    retriever.index([t or ["\x00"] for t in tokens], show_progress=False)  # bm25s refuses an empty one
    scores = [float(x) for x in retriever.get_scores(query)]
    naming = [s for s, n in zip(scores, named, strict=True) if n]
    if naming and sum(1 for s in naming if s > 0) < setting("min_scored_share") * len(naming):
        return TextRelevance()  # the words do not describe what the term-naming documents say
    positive = [s for s in naming if s > 0] or [s for s in scores if s > 0]
    reference = statistics.median(positive or [0.0])
    if reference <= 0:
        return TextRelevance()
    return TextRelevance(
        shares={e.id: round(s / reference, 4) for e, s in zip(catalogue, scores, strict=True)},
        terms={e.id: n for e, n in zip(catalogue, named, strict=True) if n},
        words={e.id: len(t) for e, t in zip(catalogue, tokens, strict=True)},
    )
