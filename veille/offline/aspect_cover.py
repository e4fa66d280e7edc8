"""Offline analyst, coverage: after the ranking, the sentences a question's aspects still need.

An aspect the question lists that no chosen sentence covers gets the best sentence that does; and
when the sub-task compares options, each option gets its best sentence on each aspect (a
comparison needs each option's price, not one option's price three times). Candidates come
scored (:attr:`Sentence.score`) and already cleared of superseded statements.
"""

from __future__ import annotations

from collections.abc import Sequence

from veille.offline.analyst_rules import Sentence, doc_names, facets, sentence_names
from veille.offline.figures import asked_quantity, quantity_unit
from veille.offline.text import stems

__all__ = ["facet_cover", "option_cover"]


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


def option_cover(
    chosen: Sequence[Sentence],
    candidates: Sequence[Sentence],
    question: str,
    subjects: Sequence[str],
    subject_stems: set[str],
) -> list[Sentence]:
    """For each option compared and each aspect ``question`` lists, the option's best candidate on
    that aspect when no chosen sentence gives it. An aspect naming a quantity (« prix par pack »)
    is answered only by a figure of that quantity (an amount in a currency, per pack)."""
    if len(subjects) < 2:
        return []
    asked = [(set(stems(f)) - subject_stems, *asked_quantity(f)) for f in facets(question)]
    asked = [a for a in asked if a[0]]
    if len(asked) < 2:
        return []  # a single aspect: the ranking already answers it
    any_quantity = any(units for _, units, _ in asked)

    def aspect(s: Sentence) -> int | None:
        """The one aspect the sentence is about: the most of its words, a quantity it asks for
        given; None when two aspects tie (« garantie étendue : 900 EUR par pack » is about neither
        the price nor the warranty alone)."""
        own = set(s.stems)
        stated = [quantity_unit(s.text, f) for f in s.unit_figures] if any_quantity else []
        matched: dict[int, tuple[int, bool]] = {}  # aspect -> (its words, enough)
        for n, (aspect_stems, units, per) in enumerate(asked):
            literal = len(aspect_stems & own)
            answers = bool(units) and any(u in units and (not per or p == per) for u, p in stated)
            if units and not answers:
                continue
            matched[n] = (literal, literal + answers >= min(2, len(aspect_stems) + answers))
        top = max((literal for literal, _ in matched.values()), default=0)
        best = [n for n, (literal, _) in matched.items() if literal == top]
        return best[0] if len(best) == 1 and matched[best[0]][1] else None

    def names(s: Sentence) -> tuple[str, ...]:
        """The options the sentence names, else its document's when it is about one alone."""
        own = sentence_names(s.text, subjects)
        if own:
            return own
        title = doc_names(s.doc, subjects)
        return title if len(title) == 1 else ()

    covered = {(o, aspect(s)) for s in chosen for o in names(s)}
    # Each candidate's aspect and options once: the candidates are every sentence of the sub-task.
    taken = {id(s) for s in chosen}
    fits: dict[tuple[str, int], list[Sentence]] = {}
    for s in candidates:
        if id(s) in taken:
            continue
        n = aspect(s)
        if n is not None:
            for option in names(s):
                if (option, n) not in covered:
                    fits.setdefault((option, n), []).append(s)
    extra: list[Sentence] = []
    for n in range(len(asked)):
        for option in subjects:
            left = [s for s in fits.get((option, n), []) if id(s) not in taken]
            if (option, n) in covered or not left:
                continue
            best = max(left, key=_rank)
            extra.append(best)
            taken.add(id(best))
            covered.update((o, n) for o in names(best))
    return extra
