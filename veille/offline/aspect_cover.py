"""Offline analyst, coverage: an aspect the question lists that no chosen sentence covers gets the
best sentence that does (candidates come scored and cleared of superseded statements)."""

from __future__ import annotations

from collections.abc import Sequence

from veille.offline.analyst_rules import Sentence, facets
from veille.offline.text import stems

__all__ = ["facet_cover"]


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
            extra.append(max(pool, key=lambda s: (s.score, -s.index, s.doc.id)))
    return extra
