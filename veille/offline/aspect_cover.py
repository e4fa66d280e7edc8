"""Offline analyst, coverage: after the ranking, the sentences a question's aspects still need.

An aspect the question lists that no chosen sentence covers gets the best sentence that does.
Candidates come scored (:attr:`Sentence.score`) and already cleared of superseded statements.
"""

from __future__ import annotations

from collections.abc import Sequence

from veille.offline.analyst_rules import Sentence, facets
from veille.offline.text import stems

__all__ = ["facet_cover"]


def _rank(s: Sentence) -> tuple[float, int, str]:
    return (s.score, -s.index, s.doc.id)


def facet_cover(
    chosen: Sequence[Sentence], prose: Sequence[Sentence], question: str, subject_stems: set[str]
) -> list[Sentence]:
    """For each aspect ``question`` lists that no chosen sentence covers, the best sentence of
    ``prose`` that shares half its words."""
    extra: list[Sentence] = []
    for facet in facets(question):
        fs = set(stems(facet)) - subject_stems
        if not fs or any(fs & set(s.stems) for s in [*chosen, *extra]):
            continue
        pool = [s for s in prose if len(fs & set(s.stems)) * 2 >= len(fs)]
        if pool:
            extra.append(max(pool, key=_rank))
    return extra
