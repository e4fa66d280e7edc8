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
that would outgrow the bound is skipped, so a group is never split by the caps.

A bounded group can still leave a pair apart: a measure stated by five documents, a group no
branch has room for, a planner's honoured plan that splits the two sides. So once the branches are
settled, :func:`co_read_pairs` checks every pair whose two documents are read: when no branch
shows both (each whole, or through sections stating a shared measure), the branch holding one side
(one holding both first, then one with room under ``max_docs``, then the one reading fewest
documents, then plan order) co-reads the other — the sections of it stating the shared measures
(``SubTask.passages``), as a branch reads a document another branch reads whole. A co-read costs its
reader a few passages, not a document (``max_docs`` bounds whole reads, as veille.steps.plan_stable
counts them): no pair of read documents is left apart for lack of room.

Pure and independent of the order of the files (everything is keyed and sorted by id).
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from veille.numbers import Reading, read_numbers
from veille.offline.text import STOP_WORDS
from veille.roles.planner import SubTask
from veille.steps.passages import Passage, names, passage_setting, term_keys
from veille.steps.text_relevance import fold_ascii, keys

__all__ = [
    "DocumentFacts",
    "Measure",
    "co_read_pairs",
    "measure_sections",
    "measures_of",
    "same_measure_pairs",
    "same_subject_groups",
]

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


def measure_sections(passages: Sequence[Passage], options: Sequence[str]) -> dict[Measure, list[int]]:
    """Per (option, unit family, measure word) triple one document's passages state, the numbers of
    the sections stating it (veille.corpus.sections numbering): what a co-reader of the document
    reads of it (:func:`co_read_pairs`)."""
    return {m: list(ns) for m, ns in _measure_sections(tuple(passages), tuple(options)).items()}


@lru_cache(maxsize=4096)
def _measure_sections(
    passages: tuple[Passage, ...], options: tuple[str, ...]
) -> dict[Measure, tuple[int, ...]]:
    """Cached: grouping and co-reading read the same documents' numbers once (the figures of every
    sentence, the costliest part at a few thousand documents)."""
    window = int(passage_setting("measure_window_words"))
    option_keys = set().union(*(term_keys(o) for o in options)) if options else set()
    document_options = {o for p in passages for o in p.options}
    alone = next(iter(document_options)) if len(document_options) == 1 else None
    out: dict[Measure, set[int]] = defaultdict(set)
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
                for measure in ((o, family, w) for o in named for w in words):
                    out[measure].add(passage.n)
    return {m: tuple(sorted(ns)) for m, ns in out.items()}


def measures_of(passages: Sequence[Passage], options: Sequence[str]) -> set[Measure]:
    """The (option, unit family, measure word) triples one document's passages state."""
    return set(_measure_sections(tuple(passages), tuple(options)))


def same_measure_pairs(
    documents: Mapping[str, DocumentFacts], options: Sequence[str]
) -> dict[tuple[str, str], set[Measure]]:
    """Every two documents (ids sorted) stating a same measure of a same option at different dates
    or from different kinds of source -> the measures they share. Pure, keyed by ids only."""
    if not options:
        return {}
    stated = {d: measures_of(f.passages, options) for d, f in sorted(documents.items())}
    by_measure: dict[Measure, list[str]] = defaultdict(list)
    for doc_id, found in stated.items():
        for m in found:
            by_measure[m].append(doc_id)
    shared: dict[tuple[str, str], set[Measure]] = defaultdict(set)
    for m, ids in by_measure.items():
        for a, b in itertools.combinations(sorted(ids), 2):
            fa, fb = documents[a], documents[b]
            if fa.date != fb.date or fa.source_type != fb.source_type:
                shared[(a, b)].add(m)
    return dict(shared)


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
    stated = sorted(documents)
    shared = {pair: len(found) for pair, found in same_measure_pairs(documents, options).items()}
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


def _host(sub_tasks: Sequence[SubTask], a: str, b: str, max_docs: int) -> int:
    """The branch that takes the missing side of ``(a, b)`` (one side is read): one holding both
    first, then one holding a side, with room first, then the fewest documents, then plan order."""
    holding = [k for k, st in enumerate(sub_tasks) if a in st.doc_ids or b in st.doc_ids]
    return min(
        holding,
        key=lambda k: (
            not {a, b} <= set(sub_tasks[k].doc_ids),
            len(sub_tasks[k].doc_ids) >= max_docs,
            len(sub_tasks[k].doc_ids),
            k,
        ),
    )


def co_read_pairs(
    sub_tasks: Sequence[SubTask],
    documents: Mapping[str, DocumentFacts],
    options: Sequence[str],
    apart: Sequence[Sequence[str]],
    max_docs: int,
) -> tuple[list[SubTask], list[list[str]]]:
    """(``sub_tasks`` with every same-measure pair of read documents shown together, the groups of
    ``apart`` that still have a pair read apart). ``documents``: the facts of the documents that
    may be read. A pair is shown together by a branch that reads both, each whole or through
    sections stating a shared measure; else the host branch (:func:`_host`) co-reads the missing
    side, or the measure's sections of a side it reads only in part. A pair one side of which no
    branch reads is left as it is (its reason is the plan's: excluded, or no room at all)."""
    out = [
        st.model_copy(update={"doc_ids": list(st.doc_ids), "passages": dict(st.passages)}) for st in sub_tasks
    ]
    read_now = {i for st in sub_tasks for i in st.doc_ids}
    pairs = same_measure_pairs({d: f for d, f in documents.items() if d in read_now}, options)
    sections: dict[str, dict[Measure, list[int]]] = {}

    def stating(doc_id: str, shared: set[Measure]) -> set[int]:
        if doc_id not in sections:
            sections[doc_id] = measure_sections(documents[doc_id].passages, options)
        return {n for m in shared for n in sections[doc_id].get(m, [])}

    def shows(st: SubTask, doc_id: str, shared: set[Measure]) -> bool:
        return doc_id in st.doc_ids and (
            doc_id not in st.passages or bool(set(st.passages[doc_id]) & stating(doc_id, shared))
        )

    # Strongest first (most measures in common), then ids: the order never depends on the files.
    for (a, b), shared in sorted(pairs.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if any(shows(st, a, shared) and shows(st, b, shared) for st in out):
            continue
        host = out[_host(out, a, b, max_docs)]
        for doc_id in (a, b):
            if not shows(host, doc_id, shared):
                if doc_id not in host.doc_ids:
                    host.doc_ids.append(doc_id)
                host.passages[doc_id] = sorted(set(host.passages.get(doc_id, [])) | stating(doc_id, shared))
    # A group stays named apart while a pair of it is: one side read by no branch (no room at all).
    together = [set(st.doc_ids) for st in out]
    members = {d for g in apart for d in g if d in documents}
    every = same_measure_pairs({d: documents[d] for d in members}, options)
    still = [
        sorted(g)
        for g in apart
        if any({a, b} <= set(g) and not any({a, b} <= t for t in together) for a, b in every)
    ]
    return out, still
