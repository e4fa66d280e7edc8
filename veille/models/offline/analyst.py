"""Offline analyst: extracts the sentences of its documents that answer its question, with their
figures, detects contradictions between documents and lists what the documents leave open.

Documents are data: sentences that read like instructions to a model are never quoted, and the
only ids ever cited are those of the documents given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from veille.models.offline.authority import AuthorityRanking
from veille.models.offline.text import (
    date_key,
    extract_dates,
    extract_figures,
    figure_unit,
    figure_value,
    fold,
    is_year,
    jaccard,
    split_sentences,
    stem,
    stems,
    word_count,
)
from veille.roles.analyst import AnalystInput, ContradictionNote, DocumentText, Finding, Findings

__all__ = ["AnalystTuning", "analyse"]


@dataclass(frozen=True)
class AnalystTuning:
    per_doc: int = 4  # findings kept per document at most
    per_doc_budget: int = 3  # findings per document on average (the sub-task's total)
    max_findings: int = 12
    min_words: int = 5  # shorter sentences are labels, not findings
    max_words: int = 60  # longer ones are usually run-on list items
    duplicate_jaccard: float = 0.6
    claim_overlap: int = 2  # shared context stems for two figures to be about the same thing
    same_subject_jaccard: float = 0.12
    same_subject_shared: int = 5  # shared words in title + opening text
    max_claims: int = 400  # figures per document compared for contradictions (bounds the cost)
    max_open_questions: int = 5


# Sentences addressed to a model (prompt injection inside a document): never quoted.
_INSTRUCTION_RE = re.compile(
    r"\b(ignore[zr]?|oublie[zr]?|disregard)\b.{0,40}\b(instructions?|consignes?|pr[ée]c[ée]dent)"
    r"|\b(assistant|mod[èe]le de langage|language model|system prompt|prompt syst[èe]me)\b"
    r"|\b(r[ée]ponds|r[ée]pondez|cite[zr]?|[ée]cri[st]|[ée]crivez)\b.{0,30}\b(uniquement|seulement|toujours)\b",
    re.IGNORECASE,
)
# Generic French hedges: what a document presents as unverified or not settled (open questions).
_HEDGE_RE = re.compile(
    r"\b(rumeurs?|non confirm[ée]e?s?|à vérifier|à confirmer|sans source|sans proposition écrite|"
    r"oralement|serait|seraient|aucun correctif|sans correctif|pas encore|hypoth[èe]se)\b",
    re.IGNORECASE,
)
# The strong subset: a later, more authoritative document on the same subject settles these.
_DOUBT_RE = re.compile(
    r"\b(rumeurs?|non confirm[ée]e?s?|à vérifier|sans source|serait|seraient|aucun correctif|sans correctif)\b",
    re.IGNORECASE,
)
# A figure after one of these is a bound or a target, not a measurement to compare.
_BOUND_RE = re.compile(
    r"\b(objectif|cible|au moins|au plus|moins de|plus de|sous|inférieure?s?|supérieure?s?|jusqu'à|"
    r"maximum|minimum|max|min|seuil|limite)\W*(?:\w+\W+){0,3}$",
    re.IGNORECASE,
)
# A sentence that describes the set-up of a document (its context, protocol, scope) rather than a
# finding: "Contexte : …", "Version testée : …", "Objet : …".
_SETUP_RE = re.compile(
    r"^(contexte|protocole|objectif|objet|périmètre|méthode|méthodologie|conditions de mesure|matériel|"
    r"versions? testées?|présents|destinataires|date de publication|période|on teste|nous testons)\b"
    # an objective in the infinitive: "Mesurer le débit…", "Évaluer l'exploitation…"
    r"|^[A-ZÉÈ][a-zéèêîô]+(?:er|ir)\s+(?:l'|le |la |les |un |une |des |si |que |notre |nos )",
    re.IGNORECASE,
)
# A sentence about several subjects at once ("les trois moteurs"): no single-subject prefix.
_COLLECTIVE_RE = re.compile(
    r"\b(deux|trois|quatre|cinq|chaque|chacun|tous les|toutes les|les \w+s candidats)\b", re.IGNORECASE
)
# Marketing superlatives lower a sentence's score (the report's tone must stay neutral).
_PROMO_RE = re.compile(
    r"\b(parmi les (plus|meilleur)|le plus rapide|les plus rapides|leader|révolutionnaire|incroyable|"
    r"inégalé|exceptionnel|incontournable|meilleur du marché)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Claim:
    sentence: _Sentence
    figure: str
    unit: str
    value: float
    window: frozenset[str]


@dataclass
class _Sentence:
    doc: DocumentText
    index: int
    text: str
    stems: list[str]
    figures: list[str]
    unit_figures: list[str]
    names: tuple[str, ...]
    score: float = 0.0
    doc_ids: list[str] = field(default_factory=list)


_NAME = r"[A-ZÀ-Ý][\wÀ-ÿ-]*(?: [A-ZÀ-Ý0-9][\wÀ-ÿ.-]*)?"
_ENUM_RE = re.compile(rf"{_NAME}(?:, {_NAME})*,? (?:et|ou|and|or) {_NAME}")


def _names(text: str) -> list[str]:
    """Capitalised words that do not start a sentence: the subjects a question or title names."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?:;«(»)])\s*|\n", text):
        tokens = re.findall(r"[A-Za-zÀ-ÿ][\wÀ-ÿ-]*", sentence)
        for token in tokens[1:]:
            if len(token) >= 3 and token[0].isupper() and not token.isupper() and token not in found:
                found.append(token)
    return found


def _subjects(question: str, documents: Sequence[DocumentText]) -> list[str]:
    """What the question compares: the names of its longest enumeration ("A, B et C") when it has
    one, else its capitalised words; kept only when a document title names them."""
    enumerations = [m.group(0) for m in _ENUM_RE.finditer(question)]
    pool: list[str] = []
    if enumerations:
        longest = max(len(re.split(r",\s*|\s+(?:et|ou|and|or)\s+", e)) for e in enumerations)
        for e in enumerations:
            items = re.split(r",\s*|\s+(?:et|ou|and|or)\s+", e)
            if len(items) == longest:
                for item in items:
                    word = item.split()[0] if item.split() else ""
                    if len(word) >= 3 and not word.isupper() and word not in pool:
                        pool.append(word)
    if not pool:
        pool = _names(question)
    return [n for n in pool if any(_doc_names(d, [n]) for d in documents)]


def _doc_names(doc: DocumentText, subjects: Sequence[str]) -> tuple[str, ...]:
    title = fold(doc.title)
    return tuple(s for s in subjects if re.search(rf"\b{re.escape(fold(s))}\b", title))


def _sentence_names(text: str, subjects: Sequence[str]) -> tuple[str, ...]:
    folded = fold(text)
    return tuple(s for s in subjects if re.search(rf"\b{re.escape(fold(s))}\b", folded))


class _Analyst:
    def __init__(self, data: AnalystInput, authority: AuthorityRanking, tuning: AnalystTuning) -> None:
        self.data = data
        self.authority = authority
        self.tuning = tuning
        self.q_stems = set(stems(data.question))
        # Subjects: names in the question that some document title also names (product, vendor...).
        self.subjects = _subjects(data.question, data.documents)
        self.subject_stems = {stem(w) for n in self.subjects for w in re.findall(r"[a-z0-9]+", fold(n))}
        self.detail_stems = set(stems(" ".join(_facets(data.question)))) - self.subject_stems
        self.unit_words = {w for w in re.findall(r"[a-z0-9/]+", fold(data.question))}
        self.docs = {d.id: d for d in data.documents}
        self._sentences: dict[str, list[_Sentence]] = {}
        self._claim_cache: dict[str, list[_Claim]] = {}
        self.noted_docs: set[str] = set()

    # --- sentences -------------------------------------------------------------------------

    def sentences(self, doc: DocumentText) -> list[_Sentence]:
        cached = self._sentences.get(doc.id)
        if cached is not None:
            return cached
        out: list[_Sentence] = []
        title_names = _doc_names(doc, self.subjects)
        for index, text in enumerate(split_sentences(doc.body)):
            n_words = word_count(text)
            if n_words < self.tuning.min_words or n_words > self.tuning.max_words:
                continue
            if text[:1].islower() or text.rstrip().endswith((":", ";", ",")):
                continue  # a fragment of a list, meaningless alone
            if _INSTRUCTION_RE.search(text) or "http" in text or "@" in text:
                continue
            figures = extract_figures(text)
            unit_figures = [f for f in figures if figure_unit(f) and not is_year(f)]
            names = _sentence_names(text, self.subjects) or title_names
            out.append(
                _Sentence(
                    doc=doc,
                    index=index,
                    text=text.strip(),
                    stems=stems(text),
                    figures=figures,
                    unit_figures=unit_figures,
                    names=names,
                    doc_ids=[doc.id],
                )
            )
        self._sentences[doc.id] = out
        return out

    def score(self, s: _Sentence) -> float:
        """Question overlap (aspects the question lists count double) + figures with a unit (more
        when the question names the unit) - marketing tone."""
        own = set(s.stems)
        score = 0.75 * min(len(own & self.q_stems), 4) + min(len(own & self.detail_stems), 3)
        dates = set(extract_dates(s.text))
        weights = []
        for f in s.unit_figures:
            unit = figure_unit(f).split()[-1] if figure_unit(f) else ""
            if f in dates:
                # A date after the document's own is a commitment (support until, price from);
                # one before it is history.
                weights.append(2.5 if date_key(f) > s.doc.date[:7] else 0.5)
            else:
                weights.append(3.5 if unit in self.unit_words else 2.5)
        weights.sort(reverse=True)
        score += sum(weights[:3]) + (2.0 if weights and weights[0] >= 2.5 else 0.0)
        if len(s.figures) > len(s.unit_figures):
            score += 0.5
        if s.names:
            score += 0.5 * min(len(_sentence_names(s.text, self.subjects)), 3)
        if _PROMO_RE.search(s.text):
            score -= 3
        if _SETUP_RE.search(s.text):
            score -= 2.5
        return score

    # --- findings --------------------------------------------------------------------------

    def findings(self, superseded: set[tuple[str, int]]) -> list[Finding]:
        t = self.tuning
        per_doc: dict[str, list[_Sentence]] = {}
        for doc in self.data.documents:
            candidates = []
            for s in self.sentences(doc):
                if (doc.id, s.index) in superseded:
                    continue
                s.score = self.score(s)
                if s.score >= 3 and (s.unit_figures or len(set(s.stems) & self.q_stems) >= 2):
                    candidates.append(s)
            candidates.sort(key=lambda s: (-s.score, s.index))
            kept: list[_Sentence] = []
            for s in candidates:
                if not any(self._duplicate(s, k) for k in kept):
                    kept.append(s)
            per_doc[doc.id] = kept
        # Every document gets its best sentence, then the best remaining ones overall.
        budget = min(t.max_findings, t.per_doc_budget * max(1, len(self.data.documents)))
        chosen = [ranked[0] for ranked in per_doc.values() if ranked]
        rest = sorted(
            (s for ranked in per_doc.values() for s in ranked[1 : t.per_doc]),
            key=lambda s: (-s.score, s.doc.id, s.index),
        )
        chosen += rest[: max(0, budget - len(chosen))]
        chosen += self._facet_cover(chosen, superseded)
        order = {d.id: n for n, d in enumerate(self.data.documents)}
        chosen.sort(key=lambda s: (order[s.doc.id], s.index))
        # The same fact in several documents: one finding citing all of them.
        merged: list[_Sentence] = []
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

    def _duplicate(self, a: _Sentence, b: _Sentence) -> bool:
        """Same wording and same figures (same wording, other figures: two facts)."""
        return jaccard(a.stems, b.stems) >= self.tuning.duplicate_jaccard and set(a.unit_figures) == set(
            b.unit_figures
        )

    def _facet_cover(self, chosen: Sequence[_Sentence], superseded: set[tuple[str, int]]) -> list[_Sentence]:
        """For each aspect the question lists that no chosen sentence covers, the best sentence that does."""
        extra: list[_Sentence] = []
        for facet in _facets(self.data.question):
            fs = set(stems(facet)) - self.subject_stems
            if not fs or any(fs & set(s.stems) for s in [*chosen, *extra]):
                continue
            pool = [
                s
                for d in self.data.documents
                for s in self.sentences(d)
                if (d.id, s.index) not in superseded and len(fs & set(s.stems)) * 2 >= len(fs)
            ]
            if pool:
                extra.append(max(pool, key=lambda s: (self.score(s), -s.index, s.doc.id)))
        return extra

    def statement(self, s: _Sentence) -> str:
        """The sentence verbatim; prefixed with its subject when the sentence does not name it and
        the document is about a single subject."""
        text = s.text if s.text.endswith((".", "!", "?", "…")) else s.text + "."
        if not _sentence_names(s.text, self.subjects):
            names = _doc_names(s.doc, self.subjects)
            if len(names) == 1 and not _COLLECTIVE_RE.search(s.text):
                return f"{names[0]} — {text}"
        return text

    # --- contradictions --------------------------------------------------------------------

    def _window(self, s: _Sentence, figure: str) -> set[str]:
        """Stems around a figure (what it measures), names and units left out."""
        pos = s.text.find(figure)
        if _BOUND_RE.search(s.text[:pos]):
            return set()  # a target or a bound, not a measured value
        before = s.text[:pos].split()[-6:]
        after = s.text[pos + len(figure) :].split()[:4]
        unit = set(stems(figure_unit(figure)))
        return (set(stems(" ".join(before + after))) - self.subject_stems) - unit

    def _claims(self, doc: DocumentText) -> list[_Claim]:
        """Measured figures of single-subject sentences, with what they measure (cached, capped)."""
        cached = self._claim_cache.get(doc.id)
        if cached is not None:
            return cached
        out: list[_Claim] = []
        for s in self.sentences(doc):
            if not s.unit_figures or len(s.names) > 1:
                continue  # a comparison sentence: its figures belong to several subjects
            for f in s.unit_figures:
                value = figure_value(f)
                window = self._window(s, f)
                if value is not None and len(window) >= self.tuning.claim_overlap:
                    out.append(_Claim(s, f, figure_unit(f), value, frozenset(window)))
            if len(out) >= self.tuning.max_claims:
                break
        self._claim_cache[doc.id] = out
        return out

    def _figure_conflicts(
        self, a: DocumentText, b: DocumentText
    ) -> list[tuple[_Sentence, _Sentence, str, str]]:
        """Same unit, different values (over 1 %), at least ``claim_overlap`` context words in common.
        An inverted index on (unit, context word) keeps this linear in practice."""
        index: dict[tuple[str, str], list[int]] = {}
        claims_b = self._claims(b)
        for n, claim in enumerate(claims_b):
            for word in sorted(claim.window):
                index.setdefault((claim.unit, word), []).append(n)
        out: list[tuple[_Sentence, _Sentence, str, str]] = []
        for ca in self._claims(a):
            shared: dict[int, int] = {}
            for word in sorted(ca.window):
                for n in index.get((ca.unit, word), ()):
                    shared[n] = shared.get(n, 0) + 1
            for n in sorted(shared):
                cb = claims_b[n]
                if shared[n] < self.tuning.claim_overlap:
                    continue
                if (
                    ca.sentence.names
                    and cb.sentence.names
                    and not set(ca.sentence.names) & set(cb.sentence.names)
                ):
                    continue
                if ca.figure in cb.sentence.figures or cb.figure in ca.sentence.figures:
                    continue  # each sentence already quotes the other figure
                if abs(ca.value - cb.value) <= 0.01 * max(abs(ca.value), abs(cb.value)):
                    continue
                out.append((ca.sentence, cb.sentence, ca.figure, cb.figure))
        return out

    def _same_subject(self, a: DocumentText, b: DocumentText) -> bool:
        """Both titles name a common subject, and the documents share wording: two title words,
        or enough of their opening text."""
        na, nb = set(_doc_names(a, self.subjects)), set(_doc_names(b, self.subjects))
        if self.subjects and not na & nb:
            return False
        title_shared = (set(stems(a.title)) & set(stems(b.title))) - self.subject_stems
        if len(title_shared) >= 2:
            return True
        ta, tb = set(stems(f"{a.title} {a.body[:800]}")), set(stems(f"{b.title} {b.body[:800]}"))
        shared = (ta & tb) - self.subject_stems
        return (
            len(shared) >= self.tuning.same_subject_shared
            or jaccard(sorted(ta), sorted(tb)) >= self.tuning.same_subject_jaccard
        )

    def contradictions(self) -> tuple[list[ContradictionNote], set[tuple[str, int]]]:
        docs = self.data.documents
        pairs: list[tuple[str, str, str, str]] = []  # (id_a, id_b, retained, detail)
        superseded: set[tuple[str, int]] = set()
        for i, a in enumerate(docs):
            for b in docs[i + 1 :]:
                if a.date == b.date or not self._same_subject(a, b):
                    continue
                keep = self._retain([a, b])
                other = b if keep is a else a
                conflicts = self._figure_conflicts(a, b)
                if conflicts:
                    sa, _, fa, fb = conflicts[0]
                    kept_fig, other_fig = (fa, fb) if sa.doc is keep else (fb, fa)
                    detail = f"{kept_fig} retenu contre {other_fig}"
                    for x, y, _, _ in conflicts:
                        lost = x if x.doc is other else y
                        superseded.add((lost.doc.id, lost.index))
                elif self._settled(keep, other):
                    detail = ""
                    # What the settled document hedged (a rumour, "no fix yet") is not a finding.
                    superseded.update(
                        (other.id, s.index) for s in self.sentences(other) if _DOUBT_RE.search(s.text)
                    )
                else:
                    continue
                pairs.append((a.id, b.id, keep.id, detail))
        # Pairs that retain the same document on the same subject become one note.
        groups: list[tuple[list[str], str, list[str]]] = []
        for a_id, b_id, keep_id, detail in pairs:
            key = set(_doc_names(self.docs[a_id], self.subjects)) & set(
                _doc_names(self.docs[b_id], self.subjects)
            )
            for members, retained, details in groups:
                gkey = set.intersection(*(set(_doc_names(self.docs[m], self.subjects)) for m in members))
                if retained == keep_id and (key & gkey or not self.subjects):
                    members.extend(x for x in (a_id, b_id) if x not in members)
                    if detail and detail not in details:
                        details.append(detail)
                    break
            else:
                groups.append(([a_id, b_id], keep_id, [detail] if detail else []))
        # A note whose documents all belong to a larger note is part of it (a rumour, the note
        # that reports it, the announcement that denies it: one contradiction, not two).
        groups = [g for g in groups if not any(h is not g and set(g[0]) < set(h[0]) for h in groups)]
        order = {d.id: n for n, d in enumerate(docs)}
        notes = []
        for members, retained, details in groups:
            members.sort(key=lambda m: order[m])
            keep = self.docs[retained]
            notes.append(
                ContradictionNote(
                    doc_ids=members, retained=keep.id, reason=self._reason(keep, members, details)
                )
            )
        self.noted_docs = {m for members, _, _ in groups for m in members}
        return notes, superseded

    def _settled(self, keep: DocumentText, other: DocumentText) -> bool:
        """No figure differs, but one document settles the other: a fix after a bulletin, an
        official announcement after a rumour (config ``supersedes``), or a later and more
        authoritative document after one that hedges (rumour, unconfirmed, no fix yet)."""
        if keep.date <= other.date:
            return False
        if self.authority.settles(keep.source_type, other.source_type):
            return True
        hedged = any(_DOUBT_RE.search(s.text) for s in self.sentences(other))
        return hedged and self.authority.rank(keep.source_type) > self.authority.rank(other.source_type)

    def _retain(self, docs: Sequence[DocumentText]) -> DocumentText:
        return min(docs, key=lambda d: self.authority.sort_key(d.source_type, d.date, d.id))

    def _reason(self, keep: DocumentText, members: Sequence[str], details: Sequence[str]) -> str:
        """A short French reason without document ids (the report may quote it as is), e.g.
        "la mesure interne du 2026-06-10 prime sur la fiche fournisseur du 2026-02-01 : source plus
        fiable et plus récente ; 2,1 Go/s retenu contre 4,0 Go/s"."""
        others = [self.docs[m] for m in members if m != keep.id]
        why = [self._why(keep, o) for o in others]
        label = self.authority.label
        if len(set(why)) == 1:
            targets = " et sur ".join(f"{label(o.source_type)} du {o.date}" for o in others)
            text = f"{label(keep.source_type)} du {keep.date} prime sur {targets} : {why[0]}"
        else:
            targets = ", et sur ".join(
                f"{label(o.source_type)} du {o.date}, {w}" for o, w in zip(others, why, strict=True)
            )
            text = f"{label(keep.source_type)} du {keep.date} prime sur {targets}"
        if details:
            text += " ; " + " ; ".join(details)
        return text

    def _why(self, keep: DocumentText, other: DocumentText) -> str:
        more_reliable = self.authority.rank(keep.source_type) > self.authority.rank(other.source_type)
        if more_reliable and keep.date > other.date:
            return "source plus fiable et plus récente"
        if more_reliable:
            return "source plus fiable, bien que plus ancienne"
        if keep.date > other.date:
            return "source plus récente"
        return "source retenue à fiabilité et date égales"

    # --- open questions ----------------------------------------------------------------------

    def open_questions(self, findings: Sequence[Finding]) -> list[str]:
        out: list[str] = []
        found_stems = set(stems(" ".join(f.statement for f in findings)))
        all_stems = set(stems(" ".join(f"{d.title} {d.body}" for d in self.data.documents)))
        for facet in _facets(self.data.question):
            fs = set(stems(facet)) - self.subject_stems
            if not fs:
                continue
            if not fs & all_stems:
                out.append(f"Les documents fournis ne traitent pas de « {facet} ».")
            elif not fs & found_stems:
                out.append(f"Les documents abordent « {facet} » sans fait précis exploitable.")
        for doc in self.data.documents:
            if doc.id in self.noted_docs:
                continue  # its doubts are resolved by a contradiction note
            for s in self.sentences(doc):
                if _HEDGE_RE.search(s.text) and word_count(s.text) <= 35:
                    statement = f"À confirmer : {self.statement(s).rstrip('.')}."
                    if statement not in out:
                        out.append(statement)
                    break  # one per document
        return out[: self.tuning.max_open_questions]


def _facets(question: str) -> list[str]:
    """Aspects a question asks about: the comma-separated items of its longest parenthesis, else
    of the clause after ' sur '."""
    groups = re.findall(r"\(([^()]+)\)", question)
    detail = max(groups, key=len) if groups else question.partition(" sur ")[2]
    detail = detail.rstrip(" ?.")
    out = []
    for raw in re.split(r",|;| et (?=l[ae's]|les |son |sa |ses |chaque )", detail):
        facet = re.sub(
            r"^(?:et |ou )?(?:l'|le |la |les |un |une |des |du |de |son |sa |ses |leurs? |chaque )",
            "",
            raw.strip(),
        )
        if len(facet) <= 2 or re.match(r"(au|aux|pour|dans|sur|en|avec|selon|par|à)\b", facet):
            continue  # a qualifier of the question ("au regard de…", "pour 40 serveurs…"), not an aspect
        out.append(facet)
    return out


def analyse(data: AnalystInput, authority: AuthorityRanking, tuning: AnalystTuning | None = None) -> Findings:
    analyst = _Analyst(data, authority, tuning or AnalystTuning())
    notes, superseded = analyst.contradictions()
    findings = analyst.findings(superseded)
    allowed = {d.id for d in data.documents}
    findings = [f for f in findings if set(f.doc_ids) <= allowed]
    return Findings(findings=findings, contradictions=notes, open_questions=analyst.open_questions(findings))
