"""Whether a document naming a compared option uses the name in the comparison's sense (issue 37,
item 2: homonyms).

A homonym shares an option's name and nothing else: the name of a compared database may also be a
company crèche's in a newsletter, a gateway's a sailing line's. Naming an option carries the
request's subject (veille.steps.subject), and the crèche's « Tarifs » section
scores on the cost axis, so neither the subject measure nor the axes' can tell it apart. What does
is the rest of its words: a document speaking of the compared product shares vocabulary with the
corpus's other documents naming an option (versions, measures, the field's terms), a homonym shares
almost none.

A document naming an option uses it in the comparison's sense (``confirmed``) when it names two or
more of the compared options (a homonym shares one name by chance, not two), or when its closeness
to the other documents naming an option is at least ``[passages].option_sense_share`` of the
corpus's typical closeness (the median over the documents naming an option). Closeness is the
cosine of the document's TF-IDF vector with the sum of the others' (their centroid: two homonyms of
one sense do not vouch for each other, as a nearest neighbour would), over their passages' keys
(veille.steps.passages), the options' own keys left out (the shared name is what is in question),
the IDF taken over the corpus's documents: relative to the corpus, like every text measure of the
plan. Nothing is
measured (every document is confirmed) when fewer than two documents name an option.

This measure never removes a document on its own: code honours it only where it agrees with
another signal against the document (veille.steps.plan_reading: a planner's exclusion stands, code's
own screen's exclusion is not spared). Pure, order-independent.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from veille.steps.passages import Passage, passage_setting, term_keys

__all__ = ["OptionSense", "measure_option_sense"]


@dataclass(frozen=True)
class OptionSense:
    """Per document naming an option, its closeness to the others naming one and the corpus's
    typical closeness (``reference``; 0 when nothing was measured)."""

    naming: frozenset[str] = frozenset()
    closeness: dict[str, float] | None = None
    reference: float = 0.0
    several: frozenset[str] = frozenset()  # documents naming two or more compared options

    def confirmed(self, doc_id: str) -> bool:
        """Whether ``doc_id`` names an option in the comparison's sense (always, when it names
        none or nothing was measured)."""
        if doc_id not in self.naming or doc_id in self.several or not self.closeness or self.reference <= 0:
            return True
        bar = passage_setting("option_sense_share") * self.reference
        return self.closeness.get(doc_id, 0.0) >= bar

    def doubtful(self) -> frozenset[str]:
        """The documents naming an option whose other words are not the comparison's."""
        return frozenset(i for i in self.naming if not self.confirmed(i))


def _vectors(passages: Sequence[Passage], skip: frozenset[str]) -> dict[str, dict[str, float]]:
    """Per document, its unit TF-IDF vector over the keys of its passages, ``skip`` left out:
    sublinear term frequency and scikit-learn's smoothed IDF (1 + ln((1 + N) / (1 + df))), so a
    word shared by most documents still counts and one rare word does not outweigh the rest in a
    small corpus."""
    counts: dict[str, dict[str, int]] = {}
    for p in passages:
        bag = counts.setdefault(p.doc_id, {})
        for key in p.keys:
            if key not in skip:
                bag[key] = bag.get(key, 0) + 1
    total = len(counts)
    frequency: dict[str, int] = {}
    for bag in counts.values():
        for key in bag:
            frequency[key] = frequency.get(key, 0) + 1
    out: dict[str, dict[str, float]] = {}
    for doc_id in sorted(counts):
        weights = {
            key: (1 + math.log(n)) * (1 + math.log((total + 1) / (frequency[key] + 1)))
            for key, n in sorted(counts[doc_id].items())
        }
        weights = {k: w for k, w in weights.items() if w > 0}
        norm = math.sqrt(math.fsum(w * w for w in weights.values()))
        out[doc_id] = {k: w / norm for k, w in weights.items()} if norm > 0 else {}
    return out


def measure_option_sense(passages: Sequence[Passage], options: Sequence[str]) -> OptionSense:
    """The option sense of the documents of ``passages`` (veille.steps.passages order)."""
    named: dict[str, set[str]] = {}
    for p in passages:
        if p.options:
            named.setdefault(p.doc_id, set()).update(p.options)
    naming = frozenset(named)
    several = frozenset(i for i, found in named.items() if len(found) >= 2)
    if len(naming) < 2:
        return OptionSense(naming, None, 0.0, several)
    skip = frozenset().union(*(term_keys(o) for o in options))
    vectors = _vectors(passages, skip)
    # Each document against the sum of the others (leave one out): the total less its own vector.
    total: dict[str, float] = {}
    for doc_id in sorted(naming):
        for key, weight in vectors.get(doc_id, {}).items():
            total[key] = total.get(key, 0.0) + weight
    total_sq = math.fsum(w * w for w in total.values())
    closeness: dict[str, float] = {}
    for doc_id in sorted(naming):
        own = vectors.get(doc_id, {})
        dot = math.fsum(w * total[k] for k, w in own.items())
        self_sq = math.fsum(w * w for w in own.values())
        rest_sq = total_sq - 2 * dot + self_sq
        closeness[doc_id] = round((dot - self_sq) / math.sqrt(rest_sq), 4) if rest_sq > 1e-12 else 0.0
    reference = statistics.median(closeness.values())
    return OptionSense(naming, closeness, reference, several)
