"""Sections follow the request (issue 37, item 5): code knows what the dossier owes an entry to, and
the rendered structure has it whatever the model wrote.

- An **inventory** owes one entry per item found: the documents the analysts read (a document the
  screen flagged aside), one item per title — two sheets of one service are one item. An item no key
  point cites gets one: its first finding (the analyst's, cited; verified like any point), else
  « <item> : non renseigné dans les sources » citing its documents — never a figure code made up.
- **Every axis** whose branch read documents owes a section that says something: a section the
  writer left empty gets its branch's findings back (verified like any point), else one line saying
  that the documents read for it give nothing verifiable on its question, those documents cited.

Two passes, both in :func:`veille.steps.write.sanitize_dossier` (the writer's and every reviser's
structure): :func:`missing_points` before verification (what is filled is verified), and
:func:`ensure_entries` after the report's word bound (an entry the bound or the verifier removed is
put back: the one checked before the bound, else the line above). Code's, for every backend.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from veille.alerts import Alert, alert
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint
from veille.language import REPORT_LANGUAGE, language, quote_foreign, request_language
from veille.plaintext import clean_text
from veille.roles.writer import SourceRef, WriterInput
from veille.steps.analyse import Analysis
from veille.store.readers import source_metadata

__all__ = [
    "NOTHING_USABLE",
    "NOT_STATED",
    "Coverage",
    "Entry",
    "coverage_of",
    "ensure_entries",
    "label_points",
    "missing_points",
    "needed_documents",
    "numbered",
    "owed_entries",
]

NOT_STATED = "non renseigné dans les sources"
NOTHING_USABLE = (
    "Les documents lus pour cet axe ne donnent aucun constat vérifiable sur sa question ; "
    "leurs passages n'ont pas été retenus"
)
_LEAD_WORDS = 4  # « Subject — sentence »: the analyst's label of what its sentence is about
_MARKS_RE = re.compile(r"[\[\]#*_`<>|]")  # a title is data: no citation, heading or markup of its own


class Entry(BaseModel):
    """Something the dossier owes an entry: an inventory's item (``name``), or an axis (no name)."""

    name: str = ""
    axis: str
    sources: list[int] = Field(default_factory=list)  # its documents' numbers
    findings: list[CitedText] = Field(default_factory=list)  # what its analysts stated, cited


class Coverage(BaseModel):
    items: list[Entry] = Field(default_factory=list)  # an inventory's items (none for other requests)
    axes: list[Entry] = Field(default_factory=list)  # every branch that read documents


def _read(analysis: Analysis) -> list[str]:
    """The documents a branch read that code may cite (a flagged document is never quoted by code)."""
    return [i for i in analysis.doc_ids if i not in analysis.flags] if analysis.status == "ok" else []


def needed_documents(
    analyses: Sequence[Analysis], sources: Sequence[SourceRef], inventory: bool, unnamed: Collection[str] = ()
) -> list[str]:
    """Read documents no finding cites that an entry will cite: those of branches without findings,
    and for an inventory every item's (``unnamed``: documents naming no item)."""
    cited = {s.id for s in sources}
    out = [
        i
        for a in analyses
        for i in _read(a)
        if i not in cited and (not a.findings.findings or (inventory and i not in unnamed))
    ]
    return list(dict.fromkeys(out))


def numbered(
    sources: Sequence[SourceRef], metadata: Mapping[str, object], ids: Sequence[str]
) -> list[SourceRef]:
    """``sources`` and, numbered after them in ``ids``' order, the documents ``ids`` (their metadata)."""
    out = list(sources)
    for doc_id in ids:
        if doc_id not in metadata or any(s.id == doc_id for s in out):
            continue
        doc = metadata[doc_id]
        out.append(
            SourceRef(
                number=max((s.number for s in out), default=0) + 1,
                id=doc_id,
                title=str(getattr(doc, "title", "") or doc_id),
                date=str(getattr(doc, "date", "")),
                source_type=str(getattr(doc, "source_type", "")),
                url=getattr(doc, "url", None) or None,
                date_origin=getattr(doc, "date_origin", None) or None,
            )
        )
    return out


def _name(title: str, doc_id: str) -> str:
    name = " ".join(_MARKS_RE.sub(" ", clean_text(title)).split()).strip(" .:;,")
    return name or doc_id


def _key(name: str) -> str:
    return " ".join(re.sub(r"\W+", " ", name.casefold()).split())


def _prefixed(name: str, text: str) -> str:
    """The finding as the item's entry: its name first unless the statement already says it."""
    return text if _key(name) in _key(text) else f"{name} : {text}"


def owed_entries(
    analyses: Sequence[Analysis], data: WriterInput, db_path: Path
) -> tuple[WriterInput, Coverage]:
    """``data`` with the read documents an owed entry cites among its sources, and what it owes."""
    inventory = data.kind == "inventory"
    read = [i for a in analyses for i in _read(a)] if inventory else []
    metadata = dict(source_metadata(db_path, read)) if read else {}
    unnamed = {i for i, m in metadata.items() if m.title_origin == "file name"}
    needed = needed_documents(analyses, data.sources, inventory, unnamed)
    if rest := [i for i in needed if i not in metadata]:
        metadata |= source_metadata(db_path, rest)
    data = data.model_copy(update={"sources": numbered(data.sources, metadata, needed)})
    return data, coverage_of(analyses, data, inventory, unnamed)


def _quoted(text: str, request: str) -> str:
    code = language(text)  # a whole statement is told more surely than its pieces (« Nov. 2023) and … »)
    if code and code not in {request, REPORT_LANGUAGE}:
        return f"« {text.strip().rstrip('.').rstrip()} » ({code})"
    return quote_foreign(text, request)


def _shown(text: str, request: str) -> str:
    """A finding as code shows it: in another language than the request's (and French, code's own)
    as a quotation « … » (en) — a document's words, never the dossier's —, an analyst's short
    « Subject — » lead left outside it."""
    head, sep, rest = text.partition(" — ")
    if sep and len(head.split()) <= _LEAD_WORDS:
        return f"{head}{sep}{_quoted(rest, request)}"
    return _quoted(text, request)


def coverage_of(
    analyses: Sequence[Analysis], data: WriterInput, inventory: bool, unnamed: Collection[str] = ()
) -> Coverage:
    """What ``data`` (numbered, sources final) owes an entry to. ``unnamed``: read documents whose
    title is their file name's: they name no item (a team's note, a framing text)."""
    number = {s.id: s.number for s in data.sources if s.kind == "corpus"}
    request = request_language(data.request_title, data.request)
    title = {s.id: s.title for s in data.sources}
    axes: list[Entry] = []
    items: dict[str, Entry] = {}
    for analysis in analyses:
        if analysis.subtask_id not in data.axes or not (read := _read(analysis)):
            continue
        own = [f for f in data.findings if f.subtask_id == analysis.subtask_id]
        cited = [n for f in own for n in f.sources] or [number[i] for i in read if i in number]
        findings = [CitedText(text=_shown(f.statement, request), citations=list(f.sources)) for f in own]
        axes.append(Entry(axis=analysis.subtask_id, sources=list(dict.fromkeys(cited)), findings=findings))
        for doc_id in read if inventory else ():
            if doc_id not in number or doc_id in unnamed:
                continue
            name = _name(title.get(doc_id, ""), doc_id)
            item = items.setdefault(_key(name), Entry(name=name, axis=analysis.subtask_id))
            if number[doc_id] not in item.sources:
                item.sources.append(number[doc_id])
    for item in items.values():  # its findings, from any branch, in the branches' order
        item.findings = [
            CitedText(text=_prefixed(item.name, _shown(f.statement, request)), citations=list(f.sources))
            for f in data.findings
            if set(f.sources) & set(item.sources)
        ]
    return Coverage(items=list(items.values()), axes=[a for a in axes if a.sources])


def _names(point: KeyPoint, item: Entry) -> bool:
    return bool(set(point.citations) & set(item.sources)) and _key(item.name) in _key(point.text)


def _covered(sections: Sequence[AxisSection], item: Entry) -> bool:
    """An item has its entry when a point cites one of its documents and names it."""
    return any(_names(p, item) for s in sections for p in s.points)


def label_points(sections: Sequence[AxisSection], coverage: Coverage) -> None:
    """A point citing one item's documents only and not naming it gets the item's name first: an
    inventory's entry says which item it is about (a point citing several items is left as is)."""
    owner = {n: item for item in coverage.items for n in item.sources}
    for section in sections:
        for point in section.points:
            items = {id(owner[n]): owner[n] for n in point.citations if n in owner}
            if len(items) == 1 and not set(point.citations) - set(owner):
                (item,) = items.values()
                point.text = _prefixed(item.name, point.text)


def _empty(sections: Sequence[AxisSection], axis: str) -> bool:
    return not any(s.points for s in sections if s.axis == axis)


def missing_points(sections: Sequence[AxisSection], coverage: Coverage) -> list[AxisSection]:
    """Points for what ``sections`` owe and lack, from the analysts' findings (before verification):
    an empty axis its branch's findings, an item no point cites its first finding."""
    added: dict[str, list[KeyPoint]] = {}
    for entry in coverage.axes:
        if _empty(sections, entry.axis) and entry.findings:
            added[entry.axis] = [KeyPoint(text=f.text, citations=f.citations) for f in entry.findings]
    filled = [*sections, *(AxisSection(axis=a, points=p) for a, p in added.items())]
    for item in coverage.items:
        if not _covered(filled, item) and item.findings:
            first = item.findings[0]
            point = KeyPoint(text=first.text, citations=first.citations)
            added.setdefault(item.axis, []).append(point)
            filled.append(AxisSection(axis=item.axis, points=[point]))
    return [AxisSection(axis=a, points=p) for a, p in added.items()]


def ensure_entries(
    dossier: Dossier, checked: Dossier, coverage: Coverage, stage: str, filled: int = 0
) -> tuple[Dossier, list[Alert]]:
    """``dossier`` (bounded) with every entry it owes: the point ``checked`` (verified, before the
    bound) had for it, else code's line (« non renseigné », nothing usable), its documents cited.
    ``filled``: the points :func:`missing_points` added (counted in the one alert)."""
    sections = [s.model_copy(deep=True) for s in dossier.sections]
    by_axis = {s.axis: s for s in sections}
    restored = lines = 0

    def add(axis: str, point: KeyPoint) -> None:
        section = by_axis.get(axis) or (sections[0] if sections else None)
        if section is not None:
            section.points.append(point)

    for entry in coverage.axes:
        if entry.axis in by_axis and _empty(sections, entry.axis):
            before = [p for s in checked.sections if s.axis == entry.axis for p in s.points]
            by_axis[entry.axis].points = [p.model_copy(deep=True) for p in before] or [
                KeyPoint(text=NOTHING_USABLE, citations=entry.sources)
            ]
            restored, lines = restored + bool(before), lines + (not before)
    for item in coverage.items:
        if _covered(sections, item):
            continue
        before = [p for s in checked.sections for p in s.points if _names(p, item)]
        add(item.axis, before[0].model_copy(deep=True) if before else
            KeyPoint(text=f"{item.name} : {NOT_STATED}", citations=item.sources))  # fmt: skip
        restored, lines = restored + bool(before), lines + (not before)
    if not filled + restored + lines:
        return dossier, []
    message = (
        f"entrées dues par la demande ajoutées par le code : {filled} constat(s) d'analyste repris, "
        f"{restored} point(s) vérifié(s) remis, "
        f"{lines} ligne(s) « {NOT_STATED} » ou « aucun constat vérifiable » (documents cités)"
    )
    return dossier.model_copy(update={"sections": sections}), [
        alert(stage, "report.owed_entries", message, severity="info")
    ]
