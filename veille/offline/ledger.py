"""Offline writer, the contradictions: the ledger from the analysts' notes, and which findings it
supersedes (docs/offline-engine.md, Writer)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from veille.dossier import KeyPoint, LedgerEntry, supersedes
from veille.offline import lexicon
from veille.offline.figures import extract_figures, figure_unit, is_year
from veille.offline.markdown import fit_clauses
from veille.offline.text import fold, stems
from veille.roles.writer import NumberedContradiction, SourceRef

__all__ = ["SAME_MEASURE", "Statement", "ledger", "mentioned", "rejected_units", "superseded", "window"]

_VERSUS_RE = re.compile(r"retenue?s?\s+contre\s+([^;.]+)", re.IGNORECASE)
SAME_MEASURE = 2  # stems two same-unit figures share around them to measure the same thing
# The analyst's window of what a figure measures (weights.toml [read_analyst]).
_BEFORE, _AFTER = (int(lexicon.weight(f"read_analyst.window_{k}")) for k in ("before", "after"))


@dataclass(frozen=True)
class Statement:
    """A finding as the writer keeps it: its axis, text (no citation markers) and source numbers."""

    axis: str
    text: str
    numbers: tuple[int, ...]


def mentioned(text: str, options: Sequence[str]) -> list[str]:
    """The options named in ``text`` (whole words, accents and case folded)."""
    folded = fold(text)
    return [o for o in options if o.strip() and re.search(rf"\b{re.escape(fold(o))}\b", folded)]


def window(text: str, figure: str, options: Sequence[str]) -> set[str]:
    """Stems around ``figure`` in ``text`` (what it measures), option names and its unit left out."""
    pos = text.find(figure)
    if pos < 0:
        return set()
    before = text[:pos].split()[-_BEFORE:]
    after = text[pos + len(figure) :].split()[:_AFTER]
    ignored = set(stems(" ".join(options))) | set(stems(figure_unit(figure)))
    return set(stems(" ".join(before + after))) - ignored


def _unit_figures(text: str) -> list[str]:
    return [f for f in extract_figures(text) if figure_unit(f) and not is_year(f)]


def _rejected_figures(reason: str) -> set[str]:
    return {f for clause in _VERSUS_RE.findall(reason) for f in extract_figures(clause)}


def rejected_units(entries: Sequence[LedgerEntry]) -> dict[int, set[str] | None]:
    """Source number -> the units its rejected figures are in (« 8 m retenu contre 5 m »: ``m``),
    or None when an entry rejects it without a figure (a rumour, an outdated page): what the
    source lost on. A source some entry retains lost nothing."""
    out: dict[int, set[str] | None] = {}
    for entry in entries:
        units = {figure_unit(f).split()[0] for f in _rejected_figures(entry.reason) if figure_unit(f)}
        for n in entry.rejected:
            if not units:
                out[n] = None
            elif n not in out or out[n] is not None:
                out[n] = (out.get(n) or set()) | units
    retained = {n for e in entries for n in e.retained}
    return {n: units for n, units in out.items() if n not in retained}


def _same_measure(point: Statement, other: Statement, options: Sequence[str]) -> bool:
    names = set(mentioned(point.text, options))
    if names and not names & set(mentioned(other.text, options)):
        return False
    for figure in _unit_figures(point.text):
        around = window(point.text, figure, options)
        for theirs in _unit_figures(other.text):
            if figure_unit(theirs) != figure_unit(figure):
                continue
            if len(around & window(other.text, theirs, options)) >= SAME_MEASURE:
                return True
    return False


def superseded(
    statements: Sequence[Statement],
    notes: Sequence[NumberedContradiction],
    entries: Sequence[LedgerEntry],
    options: Sequence[str],
) -> set[int]:
    """Indexes of the statements a contradiction of their axis supersedes (docs/offline-engine.md,
    Ledger), and of those the generic rule of :func:`veille.dossier.supersedes` would mark."""
    out: set[int] = set()
    for index, point in enumerate(statements):
        as_point = KeyPoint(text=point.text, citations=list(point.numbers))
        if any(supersedes(entry, as_point) for entry in entries):
            out.add(index)
            continue
        for note in notes:
            if note.subtask_id != point.axis or not set(point.numbers) <= set(note.rejected):
                continue
            # It quotes a figure the note rejects, or measures what a retained source's finding does.
            retained = [s for s in statements if s.axis == point.axis and set(s.numbers) & set(note.retained)]
            quoted = set(extract_figures(point.text)) & _rejected_figures(note.reason)
            if quoted or any(_same_measure(point, other, options) for other in retained):
                out.add(index)
                break
    return out


def _subject(
    note: NumberedContradiction,
    sources: Mapping[int, SourceRef],
    statements: Sequence[Statement],
    options: Sequence[str],
) -> str:
    """The options every source title of the note names (else any of them; else those every
    finding of its axis from the rejected sources names), and the axis id."""
    titles = [sources[n].title for n in (*note.retained, *note.rejected) if n in sources]
    named = [mentioned(t, options) for t in titles]
    common = [o for o in options if named and all(o in n for n in named)]
    names = common or list(dict.fromkeys(o for n in named for o in n))
    if not names:
        own = set(note.rejected)
        found = [
            mentioned(s.text, options)
            for s in statements
            if s.axis == note.subtask_id and set(s.numbers) & own
        ]
        names = [o for o in options if found and all(o in n for n in found)]
    where = f"axe {note.subtask_id}"
    return f"{' et '.join(names)}, {where}" if names else where[:1].upper() + where[1:]


def ledger(
    notes: Sequence[NumberedContradiction],
    sources: Sequence[SourceRef],
    statements: Sequence[Statement],
    options: Sequence[str],
    max_words: int,
) -> list[LedgerEntry]:
    """One entry per note (two notes rejecting the same source on one subject merged): subject,
    retained and rejected numbers, the reason in whole sentences within ``max_words``."""
    by_number = {s.number: s for s in sources}
    valid = set(by_number)
    out: list[LedgerEntry] = []
    for note in notes:
        retained = [n for n in note.retained if n in valid]
        rejected = [n for n in note.rejected if n in valid and n not in retained]
        if not retained or not rejected:
            continue
        # Each clause whole or cut between clauses only; one that cannot be is left out (a piece of
        # a sentence is never written).
        parts = [
            p.rstrip(" .") + "."
            for c in note.reason.split(" ; ")
            for p in fit_clauses(c.strip(), max_words) or []
        ]
        reason = " ".join(p[:1].upper() + p[1:] for p in parts if p.strip(" ."))
        subject = _subject(note, by_number, statements, options)
        twin = next((e for e in out if e.subject == subject and set(e.rejected) & set(rejected)), None)
        if twin is None:
            out.append(LedgerEntry(subject=subject, retained=retained, rejected=rejected, reason=reason))
            continue
        # Two notes settling the same rejected source on one subject: one entry, both reasons.
        twin.retained = list(dict.fromkeys([*twin.retained, *retained]))
        twin.rejected = [n for n in dict.fromkeys([*twin.rejected, *rejected]) if n not in twin.retained]
        twin.reason = f"{twin.reason} {reason}" if reason not in twin.reason else twin.reason
    return out
