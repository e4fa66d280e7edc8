"""Offline analyst: the sentences of its documents that answer its question, contradictions
between documents, open questions (docs/offline-engine.md, Analyst). Documents are data."""

from __future__ import annotations

import re
from collections.abc import Sequence

from veille.offline.analyst_rules import (
    _COLLECTIVE_RE,
    _HEDGE_RE,
    _INSTRUCTION_RE,
    _PROMO_RE,
    _SETUP_RE,
    AnalystTuning,
    Claim,
    Sentence,
    doc_names,
    facets,
    is_fragment,
    sentence_names,
    subjects,
)
from veille.offline.aspect_cover import facet_cover
from veille.offline.authority import AuthorityRanking
from veille.offline.contradictions import ContradictionFinder
from veille.offline.figures import (
    date_key,
    extract_dates,
    extract_figures,
    figure_unit,
    is_count,
    is_year,
    unit_key,
)
from veille.offline.text import (
    fold,
    heading_items,
    is_english,
    jaccard,
    split_sentences,
    stem,
    stems,
    table_rows,
    table_sentences,
    word_count,
)
from veille.roles.analyst import AnalystInput, DocumentText, Finding, Findings
from veille.roles.analyst_update import AnalystUpdateInput, FindingsUpdate, UpdateNote, read_alone

__all__ = ["AnalystTuning", "analyse", "analyse_update"]


class _Analyst(ContradictionFinder):
    def __init__(self, data: AnalystInput, authority: AuthorityRanking, tuning: AnalystTuning) -> None:
        self.data = data
        self.authority = authority
        self.tuning = tuning
        self.q_stems = set(stems(data.question))
        # Subjects: names in the question that some document title also names (product, vendor...).
        self.subjects = subjects(data.question, data.documents)
        self.subject_stems = {stem(w) for n in self.subjects for w in re.findall(r"[a-z0-9]+", fold(n))}
        self.detail_stems = set(stems(" ".join(facets(data.question)))) - self.subject_stems
        question_words = re.findall(r"[a-z0-9/]+", fold(data.question))
        self.unit_words = {*question_words, *(unit_key(w) for w in question_words)}
        self.docs = {d.id: d for d in data.documents}
        self._kind_cache: dict[str, dict[str, list[Sentence]]] = {}
        self._row_cells: dict[tuple[str, int], set[int]] = {}  # (doc, row index) -> its cells' indices
        self._claim_cache: dict[str, list[Claim]] = {}
        self.noted_docs: set[str] = set()

    # --- sentences -------------------------------------------------------------------------

    def _kinds(self, doc: DocumentText) -> dict[str, list[Sentence]]:
        """The document's prose sentences; its table cells as labelled sentences (compared as
        claims, never findings: a cell alone is a figure); its table rows (findings, never compared:
        their cells are) and its short list items led by their heading (findings, never compared).
        Numbered in that order, so a superseded mark never lands on another kind."""
        cached = self._kind_cache.get(doc.id)
        if cached is None:
            prose, cells, rows = split_sentences(doc.body), table_sentences(doc.body), table_rows(doc.body)
            first = len(prose) + len(cells)
            for n, (_, row_cells) in enumerate(rows):
                self._row_cells[(doc.id, first + n)] = {len(prose) + c for c in row_cells}
            items = heading_items(doc.body, self.tuning.min_words)
            cached = self._kind_cache[doc.id] = {
                "prose": self._read(doc, prose, first=0),
                "cells": self._read(doc, cells, first=len(prose)),
                "rows": self._read(doc, [text for text, _ in rows], first=first),
                "items": self._read(doc, items, first=first + len(rows)),
            }
        return cached

    def sentences(self, doc: DocumentText) -> list[Sentence]:
        return self._kinds(doc)["prose"]

    def table_cells(self, doc: DocumentText) -> list[Sentence]:
        return self._kinds(doc)["cells"]

    def _read(self, doc: DocumentText, texts: list[str], *, first: int) -> list[Sentence]:
        out: list[Sentence] = []
        title_names = doc_names(doc, self.subjects)
        for index, text in enumerate(texts, start=first):
            n_words = word_count(text)
            if n_words < self.tuning.min_words or n_words > self.tuning.max_words:
                continue
            if is_fragment(text):
                continue  # a fragment of a list, meaningless alone
            if _INSTRUCTION_RE.search(text) or "http" in text or "@" in text:
                continue
            figures = extract_figures(text)
            units = [f for f in figures if figure_unit(f) and not is_year(f)]
            names = sentence_names(text, self.subjects) or title_names
            out.append(Sentence(doc, index, text.strip(), stems(text), figures, units, names, 0.0, [doc.id]))
        return out

    def score(self, s: Sentence) -> float:
        """Question overlap (aspects the question lists count double) + figures with a unit (more
        when the question names the unit) - marketing tone."""
        t = self.tuning
        own = set(s.stems)
        score = t.question_weight * min(len(own & self.q_stems), t.question_cap)
        score += min(len(own & self.detail_stems), t.detail_cap)
        dates = set(extract_dates(s.text))
        weights = []
        for f in s.unit_figures:
            unit = figure_unit(f).split()[-1] if figure_unit(f) else ""
            if f in dates:
                # A date after the document's own is a commitment (support until, price from);
                # one before it is history.
                weights.append(t.future_date if date_key(f) > s.doc.date[: len(date_key(f))] else t.past_date)
            elif unit in self.unit_words:
                weights.append(t.named_unit)
            else:
                # A count the question does not name (« 5 ingénieurs ») says less than a measure.
                weights.append(t.count if is_count(f) else t.measure)
        weights.sort(reverse=True)
        score += sum(weights[: t.scored_figures])
        score += t.figure_bonus if weights and weights[0] >= min(t.measure, t.future_date) else 0.0
        if len(s.figures) > len(s.unit_figures):
            score += t.bare_figure
        if s.names:
            score += t.name_weight * min(len(sentence_names(s.text, self.subjects)), t.name_cap)
        if _PROMO_RE.search(s.text):
            score -= t.promotional
        if _SETUP_RE.search(s.text):
            score -= t.setup
        return score

    # --- findings --------------------------------------------------------------------------

    def findings(self, superseded: set[tuple[str, int]]) -> list[Finding]:
        t = self.tuning
        per_doc: dict[str, list[Sentence]] = {}
        pools = {doc.id: self._pool(doc, superseded) for doc in self.data.documents}
        for doc in self.data.documents:
            candidates = []
            for s in pools[doc.id]:
                s.score = self.score(s)
                if s.score >= t.min_score and (s.unit_figures or len(set(s.stems) & self.q_stems) >= 2):
                    candidates.append(s)
            candidates.sort(key=lambda s: (-s.score, s.index))
            kept: list[Sentence] = []
            for s in candidates:
                if not any(self._duplicate(s, k) for k in kept):
                    kept.append(s)
            per_doc[doc.id] = kept
        # Every document read whole gets its best sentence, then the best remaining ones overall.
        # A document shown through some of its sections only (read whole by another branch, or
        # co-read for a measure it shares with one of this branch's) competes on score: its best
        # sentence is the other branch's to give, and guaranteeing it a slot would push this
        # branch's own documents out of the budget. The analyst cannot tell those from a document
        # of its own that the reading budget cut (read_percent is set for both), so that one
        # competes on score too: a recall cost on over-budget branches, never a precision one.
        budget = min(t.max_findings, t.per_doc_budget * max(1, len(self.data.documents)))
        whole = {d.id for d in self.data.documents if d.read_percent is None}
        chosen = [ranked[0] for doc_id, ranked in per_doc.items() if ranked and doc_id in whole]
        rest = sorted(
            (s for doc_id, ranked in per_doc.items() for s in ranked[int(doc_id in whole) : t.per_doc]),
            key=lambda s: (-s.score, s.doc.id, s.index),
        )
        chosen += rest[: max(0, budget - len(chosen))]
        prose = [
            s for d in self.data.documents for s in self.sentences(d) if (d.id, s.index) not in superseded
        ]
        chosen += facet_cover(chosen, prose, self.data.question, self.subject_stems)
        order = {d.id: n for n, d in enumerate(self.data.documents)}
        chosen.sort(key=lambda s: (order[s.doc.id], s.index))
        # The same fact in several documents: one finding citing all of them.
        merged: list[Sentence] = []
        for s in chosen:
            twin = next((m for m in merged if self._duplicate(s, m)), None)
            if twin is None:
                merged.append(s)
            elif s.doc.id not in twin.doc_ids:
                twin.doc_ids.append(s.doc.id)
        return [
            Finding(statement=self.statement(s), doc_ids=list(s.doc_ids), figures=list(s.figures))
            for s in merged
        ]

    def _pool(self, doc: DocumentText, superseded: set[tuple[str, int]]) -> list[Sentence]:
        """The document's sentences, table rows and headed list items that may become findings:
        not superseded, nor a row with a superseded cell, nor an item repeating a superseded figure."""
        lost = {index for d, index in superseded if d == doc.id}
        rejected = {
            f for s in self.sentences(doc) + self.table_cells(doc) if s.index in lost for f in s.unit_figures
        }
        return [
            *(s for s in self.sentences(doc) if s.index not in lost),
            *(s for s in self._kinds(doc)["rows"] if not lost & self._row_cells[(doc.id, s.index)]),
            *(s for s in self._kinds(doc)["items"] if not rejected & set(s.unit_figures)),
        ]

    def _duplicate(self, a: Sentence, b: Sentence) -> bool:
        """Same wording and same figures (same wording, other figures: two facts)."""
        same_figures = set(a.unit_figures) == set(b.unit_figures)
        return same_figures and jaccard(a.stems, b.stems) >= self.tuning.duplicate_jaccard

    def statement(self, s: Sentence) -> str:
        """The sentence verbatim; prefixed with its subject when the sentence does not name it and
        the document is about a single subject."""
        text = s.text if s.text.endswith((".", "!", "?", "…")) else s.text + "."
        if not sentence_names(s.text, self.subjects):
            names = doc_names(s.doc, self.subjects)
            if len(names) == 1 and not _COLLECTIVE_RE.search(s.text):
                return f"{names[0]} — {text}"
        return text

    # --- open questions ----------------------------------------------------------------------

    def open_questions(self, findings: Sequence[Finding]) -> list[str]:
        out: list[str] = list(getattr(self, "unordered", ()))  # figures nothing could order
        found_stems = set(stems(" ".join(f.statement for f in findings)))
        all_stems = set(stems(" ".join(f"{d.title} {d.body}" for d in self.data.documents)))
        aspects = facets(self.data.question)
        # Words are matched, not meanings: a question in another language than most documents
        # (« journaux » against "logs") cannot tell what they leave out.
        english = sum(is_english(d.body) for d in self.data.documents) * 2 > len(self.data.documents)
        same_language = is_english(" ".join(aspects)) == english
        for facet in aspects:
            fs = set(stems(facet)) - self.subject_stems
            # One aspect is the axis itself: its findings are its facts, whatever their words.
            if not fs or not same_language or (len(aspects) == 1 and findings):
                continue
            if not fs & all_stems:
                out.append(f"Les documents fournis ne traitent pas de « {facet} ».")
            elif not fs & found_stems:
                out.append(f"Les documents abordent « {facet} » sans fait précis exploitable.")
        for doc in self.data.documents:
            if doc.id in self.noted_docs:
                continue  # its doubts are resolved by a contradiction note
            for s in self.sentences(doc):
                if _HEDGE_RE.search(s.text) and word_count(s.text) <= self.tuning.max_hedge_words:
                    statement = f"À confirmer : {self.statement(s).rstrip('.')}."
                    if statement not in out:
                        out.append(statement)
                    break  # one per document
        return out[: self.tuning.max_open_questions]


def analyse(data: AnalystInput, authority: AuthorityRanking, tuning: AnalystTuning | None = None) -> Findings:
    analyst = _Analyst(data, authority, tuning or AnalystTuning.from_data())
    notes, superseded = analyst.contradictions()
    findings = analyst.findings(superseded)
    allowed = {d.id for d in data.documents}
    findings = [f for f in findings if set(f.doc_ids) <= allowed]
    return Findings(findings=findings, contradictions=notes, open_questions=analyst.open_questions(findings))


def analyse_update(
    data: AnalystUpdateInput, authority: AuthorityRanking, tuning: AnalystTuning | None = None
) -> FindingsUpdate:
    """The incremental analyst offline (docs/offline-engine.md, Incremental analyst): the new
    documents' findings and doubts, their contradictions with any document (those already read seen
    through their previous findings)."""
    tuning = tuning or AnalystTuning.from_data()
    new_ids = {d.id for d in data.documents}
    # Each document already read, as the sentences of the previous findings that cite it alone: what
    # the prompt shows in full (read_alone), the rest being ids and figures only.
    alone = read_alone(data)
    seen = [
        DocumentText(
            id=k.id,
            date=k.date,
            source_type=k.source_type,
            title=k.title,
            body=" ".join(f.statement for f in alone if set(f.doc_ids) == {k.id}),
        )
        for k in data.known_documents
        if k.id not in new_ids
    ]

    def reading(documents: list[DocumentText]) -> _Analyst:
        given = AnalystInput(subtask_id=data.subtask_id, question=data.question, documents=documents)
        return _Analyst(given, authority, tuning)

    both = reading([*data.documents, *seen])
    notes, superseded = both.contradictions()
    only_new = reading(data.documents)
    only_new.noted_docs = both.noted_docs & new_ids
    findings = [
        f
        for f in only_new.findings({(d, i) for d, i in superseded if d in new_ids})
        if set(f.doc_ids) <= new_ids
    ]
    updates = []
    for note in notes:
        ids = list(dict.fromkeys(note.doc_ids))
        first = next((i for i in ids if i in new_ids), None)
        if first is None:
            continue  # between documents already read: the previous analysis has it
        updates.append(
            UpdateNote(
                new_doc_id=first,
                other_doc_ids=[i for i in ids if i != first],
                retained=note.retained,
                reason=note.reason,
            )
        )
    # Only the new documents' doubts: what the question's facets lack was said the night before.
    questions = [q for q in only_new.open_questions(findings) if q.startswith("À confirmer")]
    return FindingsUpdate(findings=findings, contradictions=updates, open_questions=questions)
