"""Same-subject documents found from their text (issue 37, item 3): one analyst reads them together.

Two documents state *the same measure of the same option* when a figure of each (read by
:func:`veille.numbers.read_numbers`, the one number reader) has the same unit family, sits in a
sentence naming the same option (or in a document naming that option alone), and is preceded,
within ``measure_window_words`` content words of its sentence, by a common measure word (« écart
moyen de 85 ppm » / « écart de mesure ± 30 ppm »). Dated differently, or from different kinds of
source, they are the two sides of a possible contradiction: they go in one group (union-find), so
they land in one branch. Titles are never read for this: only what the texts state.

A group never exceeds ``max_group_docs`` (veille/data/coverage.toml) nor ``max_docs`` (one
sub-task's cap): pairs are joined strongest first (most measures in common, then ids) and a join
that would outgrow the bound is skipped, so a group is never split by the caps. Pure and independent of the order of the files (everything is sorted by id).
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from veille.numbers import Reading, read_numbers
from veille.offline.text import STOP_WORDS
from veille.steps.passages import Passage, names, passage_setting, term_keys
from veille.steps.text_relevance import fold_ascii, keys

__all__ = ["DocumentFacts", "Measure", "measures_of", "same_subject_groups"]

Measure = tuple[str, str, str]  # (option, unit family, measure word key)

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n")


@dataclass(frozen=True)
class DocumentFacts:
    """What grouping needs of one document: its date, kind of source and passages."""

    date: str
    source_type: str
    passages: tuple[Passage, ...]


def _family(reading: Reading) -> str | None:
    """The unit family of a figure: the same for « 12 EUR » and « 15 USD », « 2 h » and « 90 min »
    (veille.numbers names one unit per family), ``None`` for a bare number."""
    unit = reading.unit
    if reading.role != "figure" or unit is None:
        return None
    if unit.kind == "currency":
        return "currency/" + unit.name.partition("/")[2]
    return f"{unit.kind}:{unit.name}"


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def measures_of(passages: Sequence[Passage], options: Sequence[str]) -> set[Measure]:
    """The (option, unit family, measure word) triples one document's passages state."""
    window = int(passage_setting("measure_window_words"))
    option_keys = set().union(*(term_keys(o) for o in options)) if options else set()
    document_options = {o for p in passages for o in p.options}
    alone = next(iter(document_options)) if len(document_options) == 1 else None
    out: set[Measure] = set()
    for passage in passages:
        for sentence in _sentences(passage.text):
            named = names(fold_ascii(sentence), options) or ((alone,) if alone else ())
            if not named:
                continue
            for reading in read_numbers(sentence):
                family = _family(reading)
                if family is None:
                    continue
                before = keys(fold_ascii(sentence[: reading.start]), STOP_WORDS)
                words = [w for w in before if w not in option_keys][-window:]
                out.update((o, family, w) for o in named for w in words)
    return out


def _find(parent: dict[str, str], x: str) -> str:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def same_subject_groups(
    documents: Mapping[str, DocumentFacts], options: Sequence[str], max_docs: int
) -> list[list[str]]:
    """Groups (two documents or more, ids sorted; groups sorted) of documents stating the same
    measure of the same option at different dates or from different kinds of source."""
    if not options:
        return []
    stated = {d: measures_of(f.passages, options) for d, f in sorted(documents.items())}
    by_measure: dict[Measure, list[str]] = defaultdict(list)
    for doc_id, found in stated.items():
        for m in found:
            by_measure[m].append(doc_id)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for ids in by_measure.values():
        for a, b in itertools.combinations(sorted(ids), 2):
            fa, fb = documents[a], documents[b]
            if fa.date != fb.date or fa.source_type != fb.source_type:
                shared[(a, b)] += 1
    largest = min(max_docs, int(passage_setting("max_group_docs")))
    parent = {d: d for d in stated}
    size = dict.fromkeys(stated, 1)
    for (a, b), _ in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0])):
        ra, rb = _find(parent, a), _find(parent, b)
        if ra == rb or size[ra] + size[rb] > largest:
            continue  # a group outgrowing one sub-task would be split by the caps: not joined
        low, high = sorted((ra, rb))
        parent[high] = low
        size[low] += size[high]
    groups: dict[str, list[str]] = defaultdict(list)
    for d in stated:
        groups[_find(parent, d)].append(d)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)
