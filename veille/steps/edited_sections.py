"""An edited document read again by its changed paragraphs only (issue 40, items 2–3).

The night after an edit, a branch that read the document knows the digest of each paragraph of the
version it read (kept at ingest, ``veille/store/section_rows.py``; one per section before issue 40
item 3, still understood) and tonight's text. Below, a "section" is such a piece: a paragraph of a
section (``veille.corpus.sections.paragraphs``), so a sentence appended to a long section shows the
update that sentence, not the section it joined. Pure code, the same for every backend:

- :func:`edit_of`: tonight's paragraphs the previous version did not have (changed or added: a digest
  matched at most once, so a duplicated paragraph counts), those it had (unchanged, wherever they
  moved), and how many of the previous ones are gone;
- :func:`supported`: whether a previous finding still has its support in the unchanged sections —
  each of its figures in a passage (a sentence, a line) that shares the statement's content words,
  or, without a figure, such a passage — read with the one number reader (``veille.numbers``
  through ``verify_passages.figures``); the bar is verify.toml's ``[evidence] min_shared_words``;
- :func:`review`: the previous findings that stand (the others dropped: precision before recall),
  and the sections the update must read — the changed ones, plus the unchanged ones where an
  unconfirmed finding's figures or words still appear (its support may be there, worded
  differently: re-derived from the text, never kept blindly);
- :func:`excerpt`: those sections with their heading path, the text shown to the update.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from veille.corpus.sections import Section, heading_paths, paragraphs, section_digest, split_sections
from veille.numberunits import fold
from veille.roles.analyst import ContradictionNote, DocumentText, Finding, Findings
from veille.roles.planner import SubTask
from veille.steps.verify_passages import figures, same_figure, settings_value

__all__ = [
    "DocumentEdit",
    "Review",
    "edit_of",
    "excerpt",
    "in_previous_order",
    "read_edits",
    "review",
    "supported",
]

_GAP = "\n\n[…]\n\n"  # as budgeted reading joins passages (veille.steps.reading)
_WORD = re.compile(r"[^\W\d_]{5,}")  # content words, as the verifier's evidence (verify.py)
_PASSAGE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


@dataclass(frozen=True)
class DocumentEdit:
    """One edited document as a branch reads it tonight, cut into its paragraphs (pieces numbered
    in reading order, :func:`veille.corpus.sections.paragraphs`): an edit is found in the
    paragraphs it touched, not in the whole section it joined."""

    doc: DocumentText
    sections: tuple[Section, ...]  # tonight's pieces (paragraphs), each under its section's heading
    changed: tuple[int, ...]  # pieces the previous version did not have, among those read
    unchanged: tuple[int, ...]  # pieces found in the previous version, among those read
    removed: int  # pieces of the previous version found nowhere tonight

    def text(self, numbers: Collection[int]) -> str:
        return "\n\n".join(s.text(self.doc.body) for s in self.sections if s.n in numbers)


def edit_of(doc: DocumentText, previous: Sequence[str], read: Collection[int] = ()) -> DocumentEdit:
    """Tonight's ``doc`` against the digests of the version read before (``previous``: one per
    paragraph, :func:`~veille.corpus.sections.change_digests`); ``read``: the sections this branch
    reads (its passages), empty for all of them. A version whose digests were kept per section
    (before paragraphs) still matches its sections kept whole: a digest is the text's, whatever cut
    it came from, so a match is always the same words."""
    sections = split_sections(doc.body)
    pieces = paragraphs(doc.body, sections)
    left = Counter(previous)
    changed: list[int] = []
    unchanged: list[int] = []

    def take(text: str) -> bool:
        digest = section_digest(text)
        if left[digest] > 0:
            left[digest] -= 1
            return True
        return False

    for s in sections:
        own = [p for n, p in pieces if n == s.n]
        whole = len(own) > 1 and take(s.text(doc.body))  # a section digest of an older ingest
        for p in own:
            found = whole or take(p.text(doc.body))
            if not read or s.n in read:
                (unchanged if found else changed).append(p.n)
    return DocumentEdit(
        doc, tuple(p for _, p in pieces), tuple(changed), tuple(unchanged), sum(left.values())
    )


def _words(text: str) -> set[str]:
    return {fold(w) for w in _WORD.findall(text)}


def _passages(text: str) -> list[str]:
    return [p for p in _PASSAGE_END.split(text) if p.strip()]


def _need(words: set[str]) -> int:
    return min(int(settings_value("evidence", "min_shared_words")), len(words))


def _claimed(finding: Finding) -> tuple[list[object], list[str]]:
    """The finding's figures as readings (its statement's and its ``figures``'), and the figures
    no reading understands, to be found verbatim (spaces normalised)."""
    readings: list[object] = list(figures(finding.statement))
    verbatim = []
    for figure in finding.figures:
        read = figures(figure)
        if read:
            readings += read
        elif figure.strip():
            verbatim.append(" ".join(figure.split()))
    return readings, verbatim


def supported(finding: Finding, text: str, context: str = "") -> bool:
    """Does ``text`` still support ``finding``? Every figure it states is in a passage of ``text``
    sharing its content words (at least ``min_shared_words``, or all it has when fewer); a finding
    without figures needs one such passage. Nothing to match (no figure, no content word): no.
    ``context``: what every passage is read under (its document's title): its words count with the
    passage's own, which must share one word at least — a list item « Remise de 5 % » of the
    document « Orvet : grille tarifaire » supports « Orvet — Remise de 5 % »."""
    words = _words(finding.statement)
    need = _need(words)
    around = _words(context)
    near = [p for p in _passages(text) if (own := words & _words(p)) and len(words & (own | around)) >= need]
    readings, verbatim = _claimed(finding)
    if not readings and not verbatim:
        return bool(words) and bool(near)
    found = [r for p in near for r in figures(p)]
    spaced = [" ".join(p.split()) for p in near]
    return all(any(same_figure(c, f) for f in found) for c in readings) and all(  # type: ignore[arg-type]
        any(v in p for p in spaced) for v in verbatim
    )


def _mentions(finding: Finding, text: str) -> bool:
    """Loosely: ``text`` holds one of the finding's figures, or shares its content words."""
    readings, verbatim = _claimed(finding)
    found = figures(text)
    if any(same_figure(c, f) for c in readings for f in found):  # type: ignore[arg-type]
        return True
    if any(v in " ".join(text.split()) for v in verbatim):
        return True
    words = _words(finding.statement)
    return bool(words) and len(words & _words(text)) >= _need(words)


def _may_support(finding: Finding, text: str) -> bool:
    """Whether an unchanged passage is worth re-reading for a finding code could not confirm: one
    holding one of its figures, when it states some (a passage without them cannot support it,
    and re-read it would compete with the changed ones for the update's attention); else one
    sharing its content words (:func:`_mentions`)."""
    readings, verbatim = _claimed(finding)
    if not readings and not verbatim:
        return _mentions(finding, text)
    found = figures(text)
    return any(same_figure(c, f) for c in readings for f in found) or any(  # type: ignore[arg-type]
        v in " ".join(text.split()) for v in verbatim
    )


@dataclass(frozen=True)
class Review:
    """What stands of the previous analysis, and what the update reads of each edited document."""

    kept: Findings
    shown: dict[str, tuple[int, ...]]  # edited document -> sections to read (changed, then re-read)
    dropped: int  # previous findings citing an edited document whose support was not confirmed


def review(previous: Findings, edits: Mapping[str, DocumentEdit], others: Mapping[str, str]) -> Review:
    """The previous findings against tonight's text. A finding citing an edited document stays when
    every edited document it cites still supports it in its unchanged sections, and the text of its
    other cited documents (``others``: id -> text, unchanged since) holds its figures too (the union
    of those texts and the edited ones' unchanged sections :func:`supported` it). A contradiction
    naming an edited document stays only while that document's unchanged sections still hold a figure
    of its reason (:func:`_note_stands`).
    Open questions stay (they cite nothing)."""
    unchanged = {i: e.text(e.unchanged) for i, e in edits.items()}
    shown = {i: set(e.changed) for i, e in edits.items()}
    kept: list[Finding] = []
    dropped = 0
    for finding in previous.findings:
        cited = [i for i in dict.fromkeys(finding.doc_ids) if i in edits]
        if not cited:
            kept.append(finding)
            continue
        union = "\n\n".join([*(unchanged[i] for i in cited), *(others.get(i, "") for i in finding.doc_ids)])
        titles = " ".join(edits[i].doc.title for i in cited)
        # Its figures and words in the texts it cites, and each edited one it cites still saying
        # it (alone: supported there; with others: at least one of its figures or its words).
        alone = len(set(finding.doc_ids)) == 1
        if supported(finding, union, titles) and all(
            supported(finding, unchanged[i], edits[i].doc.title)
            if alone
            else _mentions(finding, unchanged[i])
            for i in cited
        ):
            kept.append(finding)
            continue
        dropped += 1
        for i in cited:  # its support may still be there, worded so code cannot confirm it: re-read
            e = edits[i]
            shown[i] |= {n for n in e.unchanged if _may_support(finding, e.text((n,)))}
    contradictions = [c for c in previous.contradictions if _note_stands(c, unchanged)]
    return Review(
        kept=previous.model_copy(update={"findings": kept, "contradictions": contradictions}),
        shown={i: tuple(sorted(s)) for i, s in shown.items()},
        dropped=dropped,
    )


def _note_stands(note: ContradictionNote, unchanged: Mapping[str, str]) -> bool:
    """A contradiction naming no edited document stands; one naming some stands when its reason
    states figures and each edited document it names still holds one of them in its unchanged
    sections (its claim is still there, word for word); else it goes (the update reads the changed
    sections and finds it again if it still holds)."""
    named = [i for i in dict.fromkeys(note.doc_ids) if i in unchanged]
    if not named:
        return True
    claimed = figures(note.reason)
    return bool(claimed) and all(
        any(same_figure(c, f) for c in claimed for f in figures(unchanged[i])) for i in named
    )


def excerpt(edit: DocumentEdit, numbers: Collection[int]) -> DocumentText | None:
    """The document as the update reads it: the given paragraphs, each run of consecutive ones
    under its heading path (the enclosing headings it does not open itself), runs joined like
    budgeted reading; None when there is nothing to read."""
    chosen = [s for s in edit.sections if s.n in numbers and s.text(edit.doc.body).strip()]
    if not chosen:
        return None
    if len(chosen) == len(edit.sections):
        return edit.doc
    paths = dict(zip((s.n for s in edit.sections), heading_paths(edit.doc.body, edit.sections), strict=True))
    runs: list[list[Section]] = []
    for s in chosen:
        if runs and runs[-1][-1].n == s.n - 1:
            runs[-1].append(s)  # the next paragraph: same place in the document, no gap
        else:
            runs.append([s])
    parts = [
        "\n".join([*paths[run[0].n], "\n\n".join(s.text(edit.doc.body).strip() for s in run)]) for run in runs
    ]
    text = _GAP.join(parts)
    # A part of the document, as any document read through some of its sections: its share is
    # stated, and the offline analyst lets it compete on score (veille/offline/analyst.py).
    percent = max(1, min(99, len(text) * 100 // max(1, len(edit.doc.body))))
    return edit.doc.model_copy(update={"body": text, "read_percent": percent})


def read_edits(
    sub_task: SubTask,
    documents: Sequence[DocumentText],
    sections: Mapping[str, Sequence[str]],
    new_ids: Collection[str],
    previous: Findings,
) -> tuple[Findings, dict[str, DocumentText | None], int]:
    """The edited documents known by their previous sections: the previous findings that stand,
    what the update reads of each (None: nothing changed that it must read), findings dropped."""
    edits = {
        d.id: edit_of(d, sections[d.id], sub_task.passages.get(d.id, ()))
        for d in documents
        if d.id in sections
    }
    if not edits:
        return previous, {}, 0
    new = set(new_ids)
    others = {d.id: d.body for d in documents if d.id not in new}  # unchanged since they were read
    checked = review(previous, edits, others)
    return checked.kept, {i: excerpt(e, checked.shown[i]) for i, e in edits.items()}, checked.dropped


def in_previous_order(before: Findings, merged: Findings) -> Findings:
    """``merged`` with what it shares with ``before`` in ``before``'s order, the rest after: a
    finding or contradiction re-derived word for word from a changed section stands where it stood,
    so an axis whose findings did not change is seen unchanged by the steps after (kept sections)."""
    rank = {_finding_key(f): k for k, f in enumerate(before.findings)}
    notes = {_note_key(n): k for k, n in enumerate(before.contradictions)}
    far = len(rank) + len(notes)
    findings = sorted(enumerate(merged.findings), key=lambda p: (rank.get(_finding_key(p[1]), far), p[0]))
    contradictions = sorted(
        enumerate(merged.contradictions), key=lambda p: (notes.get(_note_key(p[1]), far), p[0])
    )
    unique = list(dict.fromkeys(_finding_key(f) for _, f in findings))
    seen: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Finding] = {}
    for _, f in findings:
        seen.setdefault(_finding_key(f), f)
    return merged.model_copy(
        update={"findings": [seen[k] for k in unique], "contradictions": [n for _, n in contradictions]}
    )


def _finding_key(f: Finding) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return f.statement, tuple(dict.fromkeys(f.doc_ids)), tuple(f.figures)


def _note_key(note: ContradictionNote) -> tuple[tuple[str, ...], str]:
    return tuple(sorted(set(note.doc_ids))), note.retained
