"""The documents' passages measured against each axis of the request (issue 37, item 2).

A passage is one section of a document (:func:`veille.corpus.sections.split_sections`: Markdown
headings, long parts cut at paragraphs). Each passage is scored per axis with BM25 (``bm25s``, the
library of the catalogue shortlist and of veille.steps.text_relevance) against the axis's terms,
over the passages of the whole corpus, and the score is divided by a reference taken from the
corpus itself: the median positive score of the passages naming a compared option (of every
passage when none does). No threshold is a constant of one corpus; the shares are compared with
``[passages]`` of ``veille/data/coverage.toml``, each with its reason.

Words are folded and cut to six letters (:func:`veille.steps.text_relevance.keys`), so « latence »
and « latency » meet and the planner's search terms in the corpus's language find its documents.
Pure: no I/O but the data file.
"""

from __future__ import annotations

import re
import statistics
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import bm25s

from veille.corpus.sections import split_sections
from veille.offline.text import STOP_WORDS
from veille.resources import data_file
from veille.steps.coverage import REQUEST_META
from veille.steps.text_relevance import fold_ascii, keys

__all__ = ["Passage", "PassageScores", "names", "passage_setting", "passages_of", "score_axes", "term_keys"]


class PassageDataError(ValueError):
    """veille/data/coverage.toml ``[passages]`` is missing a value or its reason."""


@cache
def passage_setting(key: str) -> float:
    """``[passages].<key>`` of veille/data/coverage.toml (``{ value = …, why = "…" }``)."""
    path = data_file("coverage.toml")
    with path.open("rb") as handle:
        item = tomllib.load(handle).get("passages", {}).get(key)
    if not isinstance(item, dict) or not isinstance(item.get("why"), str) or not item["why"].strip():
        raise PassageDataError(f'{path}: [passages].{key} missing (expected {{ value = …, why = "…" }})')
    value = item.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise PassageDataError(f"{path}: [passages].{key}.value must be a non-negative number")
    return float(value)


_META = frozenset(keys(fold_ascii(REQUEST_META), STOP_WORDS))


def term_keys(term: str) -> frozenset[str]:
    """The six-letter keys of a term's content words (« temps de réponse » → temps, repons)."""
    return frozenset(keys(fold_ascii(term), STOP_WORDS))


def names(folded: str, phrases: Sequence[str]) -> tuple[str, ...]:
    """The ``phrases`` that ``folded`` (:func:`fold_ascii`) names as whole words, in any case."""
    return tuple(
        p
        for p in phrases
        if (k := fold_ascii(p).strip()) and re.search(rf"(?<![a-z0-9]){re.escape(k)}(?![a-z0-9])", folded)
    )


@dataclass(frozen=True)
class Passage:
    """One section of one document: its text, its keys, the options it (or its document's title) names."""

    doc_id: str
    n: int
    text: str
    keys: tuple[str, ...]
    options: tuple[str, ...]

    def names_terms(self, terms: Sequence[frozenset[str]]) -> bool:
        """Whether the passage names one of ``terms`` (all of one term's keys in it)."""
        have = set(self.keys)
        return any(t and t <= have for t in terms)


def passages_of(
    bodies: Mapping[str, str], titles: Mapping[str, str], options: Sequence[str]
) -> list[Passage]:
    """The scored passages of every document, in id order (the result does not depend on the order
    of the files). The title is read with the first passage, and the options it names count for
    every passage of its document (a sheet titled « Aérolis » speaks of Aérolis throughout)."""
    least = passage_setting("min_passage_words")
    most = int(passage_setting("max_passages_per_document"))
    out: list[Passage] = []
    for doc_id in sorted(set(bodies) | set(titles)):
        title, body = titles.get(doc_id, ""), bodies.get(doc_id, "")
        in_title = names(fold_ascii(title), options)
        sections = [s.text(body) for s in split_sections(body)][:most] or [""]
        sections[0] = f"{title}\n{sections[0]}"
        for n, text in enumerate(sections):
            folded = fold_ascii(text)
            words = tuple(keys(folded, STOP_WORDS))
            if len(words) < least:
                continue
            named = tuple(dict.fromkeys((*in_title, *names(folded, options))))
            out.append(Passage(doc_id, n, text, words, named))
    return out


@dataclass(frozen=True)
class PassageScores:
    """Per axis key, each passage's share of the corpus reference (passages in :func:`passages_of` order)."""

    passages: tuple[Passage, ...]
    shares: Mapping[str, tuple[float, ...]]


def score_axes(
    passages: Sequence[Passage], axis_terms: Mapping[str, Sequence[str]], options: Sequence[str]
) -> PassageScores:
    """BM25 of every passage against every axis's terms (options and the words requests use to give
    orders left out: they say which product, not which axis), as a share of the corpus reference."""
    if not passages:
        return PassageScores((), {k: () for k in axis_terms})
    vocabulary = {w for p in passages for w in p.keys}
    skip = set(_META).union(*(term_keys(o) for o in options))
    retriever = bm25s.BM25()
    retriever.index([list(p.keys) or ["\x00"] for p in passages], show_progress=False)
    shares: dict[str, tuple[float, ...]] = {}
    for axis_key, terms in sorted(axis_terms.items()):
        query = sorted(({w for t in terms for w in term_keys(t)} - skip) & vocabulary)
        if not query:
            shares[axis_key] = tuple(0.0 for _ in passages)
            continue
        scores = [float(x) for x in retriever.get_scores(query)]
        with_option = [s for s, p in zip(scores, passages, strict=True) if p.options and s > 0]
        positive = with_option or [s for s in scores if s > 0]
        reference = statistics.median(positive) if positive else 0.0
        shares[axis_key] = tuple(round(s / reference, 4) if reference > 0 else 0.0 for s in scores)
    return PassageScores(tuple(passages), shares)
