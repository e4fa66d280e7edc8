"""Contradictions between the documents of one sub-task (offline analyst): figures about the same
thing that disagree, settled by date and source authority.

A date is the document's or unknown (« date inconnue », :mod:`veille.docdates`): when either date of a
pair is unknown, "later wins" never applies. Figures that disagree are then settled by authority
alone, the reason saying « ordre inconnu », or, at equal authority, left open: an open question says
the order is unknown and neither source is retained."""

from __future__ import annotations

import re
from collections.abc import Sequence

from veille.docdates import known_day, later
from veille.offline.analyst_rules import (
    _DOUBT_RE,
    _REQUIREMENT_RE,
    AnalystTuning,
    Claim,
    Sentence,
    bound_of,
    doc_names,
    markup,
    outside,
    own_clause,
    releases,
    replaces,
)
from veille.offline.authority import AuthorityRanking
from veille.offline.figures import extract_dates, figure_unit, figure_value, rate_unit
from veille.offline.text import jaccard, stems
from veille.roles.analyst import AnalystInput, ContradictionNote, DocumentText

__all__ = ["ContradictionFinder"]


class ContradictionFinder:
    """Mixin of the offline analyst: needs its documents, sentences, tuning and authority ranking."""

    data: AnalystInput
    authority: AuthorityRanking
    tuning: AnalystTuning
    docs: dict[str, DocumentText]
    noted_docs: set[str]
    subjects: list[str]
    subject_stems: set[str]
    unordered: list[str]  # open questions: figures that disagree between documents of unknown order
    _claim_cache: dict[str, list[Claim]]

    def sentences(self, doc: DocumentText) -> list[Sentence]:
        raise NotImplementedError

    def table_cells(self, doc: DocumentText) -> list[Sentence]:
        raise NotImplementedError

    def _claims(self, doc: DocumentText) -> list[Claim]:
        """Measured figures of sentences about one subject, with what they measure (cached, capped).
        A sentence comparing several subjects, or still carrying markup, states no claim."""
        cached = self._claim_cache.get(doc.id)
        if cached is not None:
            return cached
        out: list[Claim] = []
        doc_releases: dict[str, frozenset[str]] = {}  # per subject: reading the document once
        for s in [*self.sentences(doc), *self.table_cells(doc)]:
            if not s.unit_figures or len(s.names) != 1 or markup(s.text):
                continue
            subject = s.names[0]
            if subject not in doc_releases:
                doc_releases[subject] = self._doc_releases(doc, subject)
            own_versions = releases(s.text) or doc_releases[subject]
            dates = set(extract_dates(s.text))  # a date is when, not how much
            for f in dict.fromkeys(f for f in s.unit_figures if f not in dates):
                claim = self._claim(s, f, own_versions)
                if claim is not None:
                    out.append(claim)
            if len(out) >= self.tuning.max_claims:
                break
        self._claim_cache[doc.id] = out
        return out

    def _claim(self, s: Sentence, f: str, versions: frozenset[str]) -> Claim | None:
        """``f`` as a claim where ``s`` first states it as one (« ne tient l'exigence que jusqu'à
        5 m : une portée utile de 5 m »: the first may be a target)."""
        value = figure_value(f)
        for pos in _occurrences(s.text, f):
            bound, window = self._window(s, f, pos)
            if bound is not None and value is not None and window:
                near, rate = self._near(s.text, f, pos), rate_unit(s.text, f)
                return Claim(s, f, figure_unit(f), value, window, bound, rate, near, s.names[0], versions)
        return None

    def _window(self, s: Sentence, figure: str, pos: int) -> tuple[str | None, frozenset[str]]:
        """How the figure is stated (:func:`bound_of`) and the stems around it (what it measures),
        names and unit left out; the sentence's figures in other units count as context too
        (« 20 To » in « restaure 20 To en moins de 2 heures »)."""
        bound = bound_of(s.text[:pos])
        if bound is None:
            return None, frozenset()  # a target or a threshold, not a claim
        if bound and (not s.names or _REQUIREMENT_RE.search(s.text)):
            return None, frozenset()  # a bound about no subject, or in a requirement, is a requirement
        before = s.text[:pos].split()[-self.tuning.window_before :]
        after = s.text[pos + len(figure) :].split()[: self.tuning.window_after]
        # « per » / « par » belongs to a rate's unit (rate_unit), not to what it measures.
        unit = {*stems(figure_unit(figure)), "per", "par"}
        window = (set(stems(" ".join(before + after))) - self.subject_stems) - unit
        own_unit = figure_unit(figure)
        for other in s.unit_figures:
            # A figure of another unit qualifies this one; one of the same unit is another value
            # of the same quantity (« 4 × 1 500 EUR = 6 000 EUR »), not a condition.
            value = figure_value(other)
            if value is not None and figure_unit(other) != own_unit and other not in figure:
                window.add(f"#{value:g} {figure_unit(other)}")
        return bound, frozenset(window)

    def _doc_releases(self, doc: DocumentText, subject: str) -> frozenset[str]:
        """The releases of ``subject`` a sentence naming none speaks of: its title's (any release when
        the title is about ``subject`` alone), else every one the document names; several leave the
        release open (:meth:`Claim.same_quantity` then compares the claim with nothing)."""
        alone = doc_names(doc, self.subjects) == (subject,)
        return releases(doc.title, "" if alone else subject) or releases(f"{doc.title}\n{doc.body}", subject)

    def _near(self, text: str, figure: str, pos: int) -> frozenset[str]:
        """What the figure measures, from its own clause (:func:`own_clause`), subjects left out."""
        return own_clause(text, figure, pos, self.subject_stems)

    def _figure_conflicts(
        self, a: DocumentText, b: DocumentText
    ) -> list[tuple[Sentence, Sentence, str, str]]:
        """Claims on the same subject, quantity and unit (:meth:`Claim.same_quantity`) with values
        apart, or a measure outside a bound the other states; indexed by (subject, unit)."""
        index: dict[tuple[str, str], list[Claim]] = {}
        for claim in self._claims(b):
            index.setdefault((claim.subject, claim.unit), []).append(claim)
        out: list[tuple[Sentence, Sentence, str, str]] = []
        tolerance = self.tuning.value_tolerance
        for ca in self._claims(a):
            for cb in index.get((ca.subject, ca.unit), ()):
                if not ca.same_quantity(cb, self.tuning.claim_overlap):
                    continue
                if (ca.figure in cb.sentence.figures and not replaces(cb.sentence.text, ca.figure)) or (
                    cb.figure in ca.sentence.figures and not replaces(ca.sentence.text, cb.figure)
                ):
                    continue  # one sentence states both figures (a range, a comparison), not as a change
                if ca.bound and cb.bound:
                    continue  # two bounds: neither is a measure
                if ca.bound or cb.bound:
                    bound, measure = (ca, cb) if ca.bound else (cb, ca)
                    if not outside(bound, measure, tolerance):
                        continue  # within the bound they agree
                elif abs(ca.value - cb.value) <= tolerance * max(abs(ca.value), abs(cb.value)):
                    continue
                out.append((ca.sentence, cb.sentence, _stated(ca), _stated(cb)))
        return out

    def _same_subject(self, a: DocumentText, b: DocumentText) -> bool:
        """Both titles name a common subject, and the documents share wording: two title words,
        or enough of their opening text."""
        na, nb = set(doc_names(a, self.subjects)), set(doc_names(b, self.subjects))
        if self.subjects and not na & nb:
            return False
        title_shared = (set(stems(a.title)) & set(stems(b.title))) - self.subject_stems
        if len(title_shared) >= 2:
            return True
        chars = self.tuning.same_subject_chars
        ta, tb = set(stems(f"{a.title} {a.body[:chars]}")), set(stems(f"{b.title} {b.body[:chars]}"))
        shared = (ta & tb) - self.subject_stems
        return (
            len(shared) >= self.tuning.same_subject_shared
            or jaccard(sorted(ta), sorted(tb)) >= self.tuning.same_subject_jaccard
        )

    def contradictions(self) -> tuple[list[ContradictionNote], set[tuple[str, int]]]:
        docs = self.data.documents
        pairs: list[tuple[str, str, str, str]] = []  # (id_a, id_b, retained, detail)
        superseded: set[tuple[str, int]] = set()
        self.unordered = []
        for i, a in enumerate(docs):
            for b in docs[i + 1 :]:
                ordered = later(a.date, b.date) is not None
                if (ordered and a.date == b.date) or not self._same_subject(a, b):
                    continue
                conflicts = self._figure_conflicts(a, b)
                reliable = None if ordered or not conflicts else self._more_reliable(a, b)
                if not ordered and reliable is None:
                    if conflicts:  # nothing but the dates could order them, and one is unknown
                        _, _, first, second = conflicts[0]
                        self.unordered.append(self._unordered(a, b, first, second))
                    continue
                keep = reliable or self._retain([a, b])
                other = b if keep is a else a
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
        names = {d.id: set(doc_names(d, self.subjects)) for d in docs}
        for a_id, b_id, keep_id, detail in pairs:
            key = names[a_id] & names[b_id]
            for members, retained, details in groups:
                gkey = set.intersection(*(names[m] for m in members))
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
        for members, _, _ in groups:
            members.sort(key=lambda m: order[m])
        notes = [
            ContradictionNote(
                doc_ids=members, retained=kept, reason=self._reason(self.docs[kept], members, details)
            )
            for members, kept, details in groups
        ]
        self.noted_docs = {m for members, _, _ in groups for m in members}
        return notes, superseded

    def _settled(self, keep: DocumentText, other: DocumentText) -> bool:
        """No figure differs, but a later document settles what the other hedges (a rumour, « aucun
        correctif »): by config ``supersedes`` (a fix after a bulletin), or by being more
        authoritative and about the same release line."""
        if later(keep.date, other.date) is not True:
            return False  # settling is by recency: never when the order is unknown
        if not any(_DOUBT_RE.search(s.text) for s in self.sentences(other)):
            # Nothing unverified or unfixed to settle: two sources that merely both exist on one
            # subject do not contradict each other (precision before recall).
            return False
        if self.authority.settles(keep.source_type, other.source_type):
            return True
        return self.authority.rank(keep.source_type) > self.authority.rank(
            other.source_type
        ) and not self._other_releases(keep, other)

    def _other_releases(self, keep: DocumentText, other: DocumentText) -> bool:
        """Both documents speak of releases of their common subjects, and never of the same line
        (« 2.5 » and « 2.5.1 » are one line): what a document says of release 2.7 does not settle a
        doubt about release 2.5, so no figure-less settling between them (precision before recall)."""
        common = set(doc_names(keep, self.subjects)) & set(doc_names(other, self.subjects))
        if not common:
            return False
        for subject in common:
            ours, theirs = self._doc_releases(keep, subject), self._doc_releases(other, subject)
            if not ours or not theirs or any(_one_line(a, b) for a in ours for b in theirs):
                return False
        return True

    def _more_reliable(self, a: DocumentText, b: DocumentText) -> DocumentText | None:
        """The more authoritative of two documents whose order is unknown; None at equal authority."""
        rank_a, rank_b = self.authority.rank(a.source_type), self.authority.rank(b.source_type)
        return None if rank_a == rank_b else (a if rank_a > rank_b else b)

    def _unordered(self, a: DocumentText, b: DocumentText, fa: str, fb: str) -> str:
        """The open question of two documents that disagree and that nothing orders (French)."""
        return (
            f"Ordre inconnu : {fa} selon « {a.title} » ({_when(a)}) contre {fb} selon « {b.title} » "
            f"({_when(b)}) ; l'une des dates est inconnue et la fiabilité est égale, aucune source n'est retenue."
        )

    def _retain(self, docs: Sequence[DocumentText]) -> DocumentText:
        return min(docs, key=lambda d: self.authority.sort_key(d.source_type, d.date, d.id))

    def _reason(self, keep: DocumentText, members: Sequence[str], details: Sequence[str]) -> str:
        """A short French reason without ids (the report may quote it): one clause per rejected
        source, apart at « ; » (two sources in one clause make a ledger sentence too long to write)."""
        label = self.authority.label
        clauses = [
            f"{label(keep.source_type)} du {keep.date} prime sur {label(o.source_type)} du {o.date} : "
            f"{self._why(keep, o)}"
            if later(keep.date, o.date) is not None
            else f"ordre inconnu : {label(keep.source_type)} ({_when(keep)}) prime sur "
            f"{label(o.source_type)} ({_when(o)}) comme source plus fiable"
            for o in (self.docs[m] for m in members if m != keep.id)
        ]
        return " ; ".join([*clauses, *details])

    def _why(self, keep: DocumentText, other: DocumentText) -> str:
        more_reliable = self.authority.rank(keep.source_type) > self.authority.rank(other.source_type)
        if more_reliable and keep.date > other.date:
            return "source plus fiable et plus récente"
        if more_reliable:
            return "source plus fiable, bien que plus ancienne"
        if keep.date > other.date:
            return "source plus récente"
        return "source retenue à fiabilité et date égales"


def _one_line(a: str, b: str) -> bool:
    """Two releases of one line: equal, or one the other's dotted prefix (« 2.5 », « 2.5.1 »)."""
    short, long_ = sorted((a, b), key=len)
    return long_ == short or long_.startswith(short + ".")


def _when(doc: DocumentText) -> str:
    """« du 2026-02-05 », or the unknown date as every reader shows it."""
    return f"du {doc.date}" if known_day(doc.date) is not None else doc.date


def _stated(claim: Claim) -> str:
    """The figure as the ledger says it: a bound keeps its side (« moins de 3 days »)."""
    return {"<": "moins de ", ">": "plus de "}.get(claim.bound, "") + claim.figure


def _occurrences(text: str, figure: str) -> list[int]:
    """Where ``figure`` stands in ``text`` as a whole figure (« 5 m », not the end of « 15 m »)."""
    found = [m.start() for m in re.finditer(rf"(?<![\w.,]){re.escape(figure)}(?!\w)", text)]
    return found or [text.find(figure)]
