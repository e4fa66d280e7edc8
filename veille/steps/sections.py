"""Sections kept across nights (issue 27 item 4): the writer writes only the axes whose inputs changed.

After a validated review, each axis's final section is stored in *id space* (citations as document
ids, never numbers) under the digest of what produced it: the writer's model key, the request and
the grid's rules, the axis title and question, the branch's findings as (statement, document ids)
and its contradiction notes. The run's conclusions (synthesis, ledger, uncertainties,
recommendation) are stored the same way under the digest of the request and rules. A later night
whose branch has the same digest gets the section back, its ids mapped to tonight's numbers by
code (numbering stays code's); the writer is asked for the changed axes only and code merges.

The cache is derived state in ``<warehouse>/cache/sections.sqlite``: unreadable, it is moved aside
and the night writes from scratch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing, suppress
from pathlib import Path

from veille.dossier import SUPERSEDED_MARK, AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry
from veille.fingerprint import text_digest
from veille.roles.writer import SourceRef, WriterInput
from veille.textstats import count_words

__all__ = [
    "SECTIONS_FILE",
    "SectionCache",
    "branch_digests",
    "changed_only",
    "conclusions_digest",
    "from_ids",
    "merge_sections",
    "text_keys",
    "to_ids",
]

SECTIONS_FILE = "sections.sqlite"
_SQL = Path(__file__).resolve().parent / "sql"


def _sql(name: str) -> str:
    return (_SQL / f"{name}.sql").read_text(encoding="utf-8")


def _rules(writer_key: str, data: WriterInput) -> list[str]:
    """What every part of the dossier depends on besides its findings: model, request, grid rules."""
    return [
        writer_key,
        data.request_title,
        data.request,
        json.dumps(
            [data.mandatory_mentions, data.options, data.min_words, data.max_words, data.max_sentence_words],
            ensure_ascii=False,
        ),
        data.bounds.model_dump_json(),
    ]


def branch_digests(writer_key: str, data: WriterInput) -> dict[str, str]:
    """Per axis of ``data``: the digest of its section's inputs, findings and notes in id space."""
    ids = {s.number: s.id for s in data.sources}
    out: dict[str, str] = {}
    for axis, title in data.axes.items():
        findings = [[f.statement, [ids[n] for n in f.sources]] for f in data.findings if f.subtask_id == axis]
        notes = [
            [[ids[n] for n in c.retained], [ids[n] for n in c.rejected], c.reason]
            for c in data.contradictions
            if c.subtask_id == axis
        ]
        body = json.dumps([findings, notes], ensure_ascii=False)
        out[axis] = text_digest(*_rules(writer_key, data), axis, title, data.questions.get(axis, ""), body)
    return out


def conclusions_digest(writer_key: str, data: WriterInput) -> str:
    """The key of the conclusions: the request and its rules (they are rewritten, not reused as is)."""
    return text_digest("conclusions", *_rules(writer_key, data))


def text_keys(
    dossier: Dossier, sources: Sequence[SourceRef], axes: Mapping[str, str], rules_key: str
) -> dict[str, str]:
    """Per section of ``dossier`` on ``axes`` (id -> title): the key of its text in id space under
    the rules ``rules_key`` (:func:`conclusions_digest`'s: model, request, grid). A section whose key
    a validated night stored has the very words, citations and title the critic passed then: review
    and grading follow the change, not the findings a rewrite was asked from (issue 40 item 3)."""
    return {
        s.axis: text_digest("validated-section", rules_key, s.axis, axes[s.axis], _section_ids(s, sources))
        for s in dossier.sections
        if s.axis in axes
    }


# --- id space ------------------------------------------------------------------------------------


def to_ids(numbers: Iterable[int], sources: Sequence[SourceRef]) -> list[str]:
    ids = {s.number: s.id for s in sources}
    return [ids[n] for n in numbers if n in ids]


def from_ids(ids: Iterable[str], sources: Sequence[SourceRef]) -> list[int] | None:
    """Tonight's numbers of ``ids``; None when one of them is not a source tonight."""
    numbers = {s.id: s.number for s in sources}
    if any(i not in numbers for i in ids):
        return None
    return [numbers[i] for i in ids]


def _section_ids(section: AxisSection, sources: Sequence[SourceRef]) -> str:
    points = [[p.text, to_ids(p.citations, sources), p.superseded] for p in section.points]
    return json.dumps(points, ensure_ascii=False)


def _section_numbers(axis: str, text: str, sources: Sequence[SourceRef]) -> AxisSection | None:
    points = []
    for point_text, ids, superseded in json.loads(text):
        numbers = from_ids(ids, sources)
        if numbers is None:
            return None  # a source of this section is not numbered tonight: written again
        points.append(KeyPoint(text=str(point_text), citations=numbers, superseded=bool(superseded)))
    return AxisSection(axis=axis, points=points)


def _conclusions_ids(dossier: Dossier, sources: Sequence[SourceRef]) -> str:
    def cited(items: Sequence[CitedText]) -> list[list[object]]:
        return [[c.text, to_ids(c.citations, sources)] for c in items]

    ledger = [
        [e.subject, to_ids(e.retained, sources), to_ids(e.rejected, sources), e.reason]
        for e in dossier.contradictions
    ]
    return json.dumps(
        {
            "synthesis": cited(dossier.synthesis),
            "contradictions": ledger,
            "uncertainties": cited(dossier.uncertainties),
            "recommendation": None if dossier.recommendation is None else cited(dossier.recommendation),
        },
        ensure_ascii=False,
    )


def _conclusions_numbers(text: str, sources: Sequence[SourceRef]) -> Dossier:
    """The stored conclusions in tonight's numbers; a citation of a document no longer cited is
    dropped (the writer rewrites these conclusions, and sanitising checks every citation anyway)."""
    numbers = {s.id: s.number for s in sources}
    data = json.loads(text)

    def nums(ids: Iterable[str]) -> list[int]:
        return [numbers[i] for i in ids if i in numbers]

    return Dossier(
        synthesis=[CitedText(text=t, citations=nums(c)) for t, c in data["synthesis"]],
        contradictions=[
            LedgerEntry(subject=s, retained=nums(r), rejected=nums(j), reason=why)
            for s, r, j, why in data["contradictions"]
        ],
        uncertainties=[CitedText(text=t, citations=nums(c)) for t, c in data["uncertainties"]],
        recommendation=None
        if data["recommendation"] is None
        else [CitedText(text=t, citations=nums(c)) for t, c in data["recommendation"]],
    )


# --- the SQLite file -----------------------------------------------------------------------------


class SectionCache:
    """Sections and conclusions by digest in one SQLite file; opened per use (tasks may run on
    other threads). Every failure to read or write degrades to "nothing kept": the night writes
    from scratch."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path)
        con.executescript(_sql("sections_schema"))
        return con

    def _read(self, query: str, params: Sequence[str]) -> list[tuple[str, ...]]:
        try:
            with closing(self._connect()) as con:
                return [tuple(row) for row in con.execute(query, params)]
        except (sqlite3.DatabaseError, OSError):
            self._set_aside()
            return []

    def _set_aside(self) -> None:
        if self.path.is_file():
            with suppress(OSError):
                self.path.replace(self.path.with_name(self.path.name + ".corrupt"))

    def sections(self, digests: Mapping[str, str], sources: Sequence[SourceRef]) -> dict[str, AxisSection]:
        """Axis -> stored section in tonight's numbers, for the digests found (and fully numbered)."""
        if not digests:
            return {}
        keys = list(digests.values())
        query = _sql("sections_get").format(marks=",".join("?" * len(keys)))
        rows = {str(row[0]): str(row[1]) for row in self._read(query, keys)}
        out: dict[str, AxisSection] = {}
        for axis, key in digests.items():
            if key in rows:
                try:
                    section = _section_numbers(axis, rows[key], sources)
                except (ValueError, TypeError):
                    continue  # a bad row: the axis is written again, and its row overwritten
                if section is not None:
                    out[axis] = section
        return out

    def validated(self, keys: Mapping[str, str]) -> set[str]:
        """The axes of ``keys`` (axis -> :func:`text_keys`) whose text a validated night stored."""
        if not keys:
            return set()
        query = _sql("sections_get").format(marks=",".join("?" * len(keys)))
        found = {str(row[0]) for row in self._read(query, list(keys.values()))}
        return {axis for axis, key in keys.items() if key in found}

    def conclusions(self, key: str, sources: Sequence[SourceRef]) -> Dossier | None:
        rows = self._read(_sql("conclusions_get"), [key])
        if not rows:
            return None
        try:
            return _conclusions_numbers(rows[0][0], sources)
        except (ValueError, TypeError, KeyError):
            return None

    def store(
        self,
        dossier: Dossier,
        sources: Sequence[SourceRef],
        digests: Mapping[str, str],
        conclusions_key: str,
        axes: Mapping[str, str] | None = None,
    ) -> None:
        """A validated dossier's sections (by their digests) and conclusions, in id space; with
        ``axes`` (id -> title), each section's :func:`text_keys` too (no text: a mark)."""
        rows = [(digests[s.axis], _section_ids(s, sources)) for s in dossier.sections if s.axis in digests]
        rows += [(k, "") for k in text_keys(dossier, sources, axes or {}, conclusions_key).values()]
        try:
            with closing(self._connect()) as con, con:
                con.executemany(_sql("sections_put"), rows)
                con.execute(_sql("conclusions_put"), (conclusions_key, _conclusions_ids(dossier, sources)))
        except (sqlite3.DatabaseError, OSError):
            self._set_aside()


# --- a night that keeps some sections ----------------------------------------------------------


def changed_only(data: WriterInput, kept: Mapping[str, AxisSection]) -> WriterInput:
    """The writer's input for the axes not in ``kept``: their findings and notes, the kept titles."""
    changed = {axis: title for axis, title in data.axes.items() if axis not in kept}
    return data.model_copy(
        update={
            "axes": changed,
            "findings": [f for f in data.findings if f.subtask_id in changed],
            "contradictions": [c for c in data.contradictions if c.subtask_id in changed],
            "kept_axes": {axis: title for axis, title in data.axes.items() if axis in kept},
            "kept_words": sum(
                count_words(f"{p.text} {SUPERSEDED_MARK if p.superseded else ''}")
                for axis, section in kept.items()
                if axis in data.axes
                for p in section.points
            ),
        }
    )


def merge_sections(dossier: Dossier, kept: Mapping[str, AxisSection], axes: Iterable[str]) -> Dossier:
    """``dossier``'s sections for the axes not in ``kept``, the kept ones for the others, in the
    axes' order (a section the model wrote for a kept axis is dropped: the kept one stands)."""
    written = {s.axis: s for s in dossier.sections if s.axis not in kept}
    sections = [kept.get(axis) or written.get(axis) or AxisSection(axis=axis) for axis in axes]
    return dossier.model_copy(update={"sections": [s.model_copy(deep=True) for s in sections]})
