"""The write step (seed 004): sources numbered by code, the writer's structure, the shipped report.

The writer sees source numbers only; ids and titles stay in state. Whatever the model returns, code
sanitises the structure (:func:`sanitize_dossier`: only valid citations, no uncited key point, one
section per axis, superseded points marked) and renders it; after review the report is assembled by
code (veille.steps.finalize): failed axes named, citations renumbered, ``## Sources`` built from
the registry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from veille.alerts import Alert, Severity, alert
from veille.citations import SourceRegistry, normalize_citations, normalize_lookalikes
from veille.corpus.request import Request
from veille.corpus.terms import derive_terms
from veille.dossier import (
    AxisSection,
    CitedText,
    Dossier,
    KeyPoint,
    LedgerEntry,
    axis_titles,
    render_body,
    supersedes,
)
from veille.grid import Grid
from veille.models.base import ModelError
from veille.plaintext import clean_text
from veille.roles.base import Asker
from veille.roles.planner import CatalogueEntry
from veille.roles.writer import WRITER, NumberedContradiction, NumberedFinding, SourceRef, WriterInput
from veille.steps.analyse import Analysis
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.research import WebResearch
from veille.steps.write_fallback import code_dossier, rendered_by_code_alert
from veille.store.readers import source_metadata

__all__ = [
    "WrittenDraft",
    "number_findings",
    "sanitize_dossier",
    "write_draft",
    "write_sourced_draft",
]


def _numbered_findings(
    ok: Sequence[Analysis],
    catalogue: Mapping[str, Any],
    web_by_subtask: Mapping[str, WebResearch],
    pages: Mapping[str, Any],
    registry: SourceRegistry,
) -> list[NumberedFinding]:
    """Each branch's corpus findings, then its web findings, with their sources' numbers."""
    numbered: list[NumberedFinding] = []
    for analysis in ok:
        cited = [(f.statement, [i for i in f.doc_ids if i in catalogue]) for f in analysis.findings.findings]
        research = web_by_subtask.get(analysis.subtask_id)
        if research is not None:
            cited += [(w.statement, [i for i in w.source_ids if i in pages]) for w in research.findings]
        numbered += [
            NumberedFinding(subtask_id=analysis.subtask_id, statement=text, sources=registry.numbers(ids))
            for text, ids in cited
            if ids
        ]
    return numbered


def _numbered_contradictions(
    ok: Sequence[Analysis], catalogue: Mapping[str, Any], registry: SourceRegistry
) -> list[NumberedContradiction]:
    """The analysts' contradiction notes whose documents are sources, retained side first."""
    out: list[NumberedContradiction] = []
    for analysis in ok:
        for note in analysis.findings.contradictions:
            ids = [i for i in note.doc_ids if i in catalogue]
            if len(ids) < 2 or note.retained not in catalogue:
                continue
            kept = registry.number(note.retained)
            rejected = [n for n in registry.numbers(ids) if n != kept]
            if rejected:
                out.append(
                    NumberedContradiction(
                        subtask_id=analysis.subtask_id, retained=[kept], rejected=rejected, reason=note.reason
                    )
                )
    return out


def number_findings(
    analyses: Sequence[Analysis],
    catalogue: Mapping[str, CatalogueEntry] | Mapping[str, Any],
    *,
    request_title: str,
    request: str,
    mandatory_mentions: Sequence[str] = (),
    options: Sequence[str] = (),
    min_words: int = 0,
    max_words: int = 10_000,
    max_sentence_words: int = 25,
    web: Sequence[WebResearch] = (),
) -> tuple[WriterInput, list[SourceRef]]:
    """Writer input with source numbers in order of first citation, stable across branches.

    Branches are read in sub-task order, each branch's corpus findings before its web findings
    (``web``, the ``--web`` research); a document or a web page (one per URI) cited by two branches
    keeps its first number. The writer sees numbers only; ids, titles and URLs stay in the sources.
    """
    pages = {p.id: p for r in web if r.status == "ok" for p in r.sources}
    registry = SourceRegistry({**pages, **catalogue})  # a corpus id never starts with "web-"
    ok = [a for a in analyses if a.status == "ok"]
    # Numbers are given in this order: every branch's findings first, then the contradictions.
    numbered = _numbered_findings(
        ok, catalogue, {r.subtask_id: r for r in web if r.status == "ok"}, pages, registry
    )
    contradictions = _numbered_contradictions(ok, catalogue, registry)
    open_questions = [q for a in ok for q in a.findings.open_questions]
    sources = registry.sources()
    data = WriterInput(
        request_title=request_title,
        request=request,
        questions={a.subtask_id: a.question for a in analyses},
        axes=axis_titles({a.subtask_id: clean_text(a.question) for a in ok}),
        findings=numbered,
        contradictions=contradictions,
        open_questions=list(dict.fromkeys(open_questions)),
        missing_axes=[a.question for a in analyses if a.status == "failed"],
        sources=sources,
        mandatory_mentions=list(mandatory_mentions),
        options=list(options),
        min_words=min_words,
        max_words=max_words,
        max_sentence_words=max_sentence_words,
    )
    return data, sources


# --- sanitising a model's structure --------------------------------------------------------------

_MARKER_RE = re.compile(r"\[(\d+)\]")
# Bounds code holds whatever a model returns (issue 23): a key point or sentence item is one or two
# sentences (the grid's max_sentence_words is 25 by default), an axis a handful of points.
MAX_ITEM_WORDS = 120
MAX_POINTS_PER_AXIS = 12
_HEADING_RE = re.compile(r"^\s*#{1,6}\s", re.MULTILINE)
_LEAD_RE = re.compile(r"^[\s#>*+\-|]+")  # a text cannot open a heading, a list or a quote of its own


@dataclass
class _Tally:
    """What sanitising removed or changed, turned into one alert per kind."""

    orphans: set[int]
    headings: int = 0
    uncited: int = 0
    empty: int = 0
    unknown_axes: int = 0
    invalid_entries: int = 0
    superseded: int = 0
    lookalikes: int = 0  # look-alike citations rewritten as [n]
    lookalikes_removed: int = 0
    too_long: int = 0
    duplicates: int = 0
    over_cap: int = 0

    def alerts(self, stage: str) -> list[Alert]:
        out = []

        def add(code: str, severity: Severity, message: str) -> None:
            out.append(alert(stage, code, message, severity=severity))

        if self.orphans:
            add("report.orphan_citation", "warning",
                f"le modèle cite des numéros sans source {sorted(self.orphans)} : retirés par le code")  # fmt: skip
        if self.headings:
            add("report.model_heading", "warning",
                f"{self.headings} élément(s) contenant un titre Markdown retiré(s) : les sections sont écrites par le code")  # fmt: skip
        if self.uncited:
            add("report.uncited_point", "warning",
                f"{self.uncited} point(s) clé(s) sans citation valide retiré(s) du rapport")  # fmt: skip
        if self.unknown_axes:
            add("report.unknown_axis", "warning",
                f"{self.unknown_axes} section(s) d'un axe inconnu retirée(s)")  # fmt: skip
        if self.invalid_entries:
            add("report.invalid_contradiction", "warning",
                f"{self.invalid_entries} contradiction(s) sans source retenue ou écartée valide retirée(s)")  # fmt: skip
        if self.superseded:
            add("report.superseded_point", "info",
                f"{self.superseded} point(s) clé(s) cité(s) par les seules sources écartées d'une "
                "contradiction sur leur sujet : marqué(s) « remplacé »")  # fmt: skip
        if self.empty:
            add("report.empty_item", "info", f"{self.empty} élément(s) vide(s) ignoré(s)")
        if self.too_long or self.duplicates or self.over_cap:
            add("report.bounded", "warning",
                f"bornes du code : {self.too_long} élément(s) de plus de {MAX_ITEM_WORDS} mots, "
                f"{self.duplicates} doublon(s), {self.over_cap} point(s) au-delà de {MAX_POINTS_PER_AXIS} "
                "par axe retiré(s)")  # fmt: skip
        if self.lookalikes or self.lookalikes_removed:
            add("report.lookalike_citation", "warning",
                f"citations d'une autre forme que [n] ([ 9 ], ［9］, [n°9], (source 9)…) : {self.lookalikes} "
                f"réécrite(s) en [n], {self.lookalikes_removed} retirée(s) (numéro sans source ou ambigu)")  # fmt: skip
        return out


def _clean(text: str, valid: set[int], tally: _Tally) -> tuple[str, list[int]]:
    """Text on one line without citation markers, and the valid numbers it carried inline. A text
    that writes a Markdown heading (a section of its own, "## Sources"...) is dropped: sections are
    code's, so their content is too."""
    if _HEADING_RE.search(text):
        tally.headings += 1
        return "", []
    text, rewritten, removed = normalize_lookalikes(" ".join(text.split()), valid)
    tally.lookalikes += rewritten
    tally.lookalikes_removed += removed
    text = normalize_citations(text)
    inline = [int(n) for n in _MARKER_RE.findall(text)]
    tally.orphans.update(n for n in inline if n not in valid)
    text = _MARKER_RE.sub("", text)
    text = re.sub(r"[ \t]+([.,])", r"\1", " ".join(text.split()))  # French keeps its space before : ; ! ?
    if not any(c.isalnum() for c in text):  # "", ".", "—": blank, dropped (counted by the caller)
        return "", []
    if len(text.split()) > MAX_ITEM_WORDS:  # dropped, not cut: a cut sentence misleads
        tally.too_long += 1
        return "", []
    # Model text is data: no HTML, link or URL in the structure; rendering escapes the rest.
    return clean_text(_LEAD_RE.sub("", text).strip()), [n for n in inline if n in valid]


def _seen(text: str, seen: set[str], tally: _Tally) -> bool:
    """Whether ``text`` repeats an item already kept (case and spacing aside); counted if so."""
    key = " ".join(text.casefold().split())
    if key in seen:
        tally.duplicates += 1
        return True
    seen.add(key)
    return False


def _numbers(numbers: Sequence[int], valid: set[int], tally: _Tally) -> list[int]:
    tally.orphans.update(n for n in numbers if n not in valid)
    return list(dict.fromkeys(n for n in numbers if n in valid))


def _cited(items: Sequence[CitedText], valid: set[int], tally: _Tally) -> list[CitedText]:
    out: list[CitedText] = []
    seen: set[str] = set()
    for item in items:
        text, inline = _clean(item.text, valid, tally)
        if not text:
            tally.empty += 1
            continue
        if _seen(text, seen, tally):
            continue
        out.append(CitedText(text=text, citations=_numbers([*item.citations, *inline], valid, tally)))
    return out


def _ledger(entries: Sequence[LedgerEntry], valid: set[int], tally: _Tally) -> list[LedgerEntry]:
    out = []
    for entry in entries:
        subject, inline_s = _clean(entry.subject, valid, tally)
        reason, inline_r = _clean(entry.reason, valid, tally)
        retained = _numbers(entry.retained, valid, tally)
        rejected = [n for n in _numbers(entry.rejected, valid, tally) if n not in retained]
        del inline_s, inline_r  # a number written in the text says nothing of its side
        if not retained or not rejected:
            tally.invalid_entries += 1
            continue
        out.append(
            LedgerEntry(subject=subject or "Divergence entre sources", retained=retained, rejected=rejected,
                        reason=reason)
        )  # fmt: skip
    return out


def _sections(
    sections: Sequence[AxisSection], axes: Sequence[str], valid: set[int], tally: _Tally
) -> list[AxisSection]:
    """One section per axis, in the axes' order; points without a valid citation dropped."""
    points: dict[str, list[KeyPoint]] = {axis: [] for axis in axes}
    seen: dict[str, set[str]] = {axis: set() for axis in axes}
    for section in sections:
        if section.axis not in points:
            tally.unknown_axes += 1
            continue
        for point in section.points:
            text, inline = _clean(point.text, valid, tally)
            numbers = _numbers([*point.citations, *inline], valid, tally)
            if not text:
                tally.empty += 1
            elif not numbers:
                tally.uncited += 1  # still checked here although the schema forbids it
            elif _seen(text, seen[section.axis], tally):
                continue
            elif len(points[section.axis]) >= MAX_POINTS_PER_AXIS:
                tally.over_cap += 1
            else:
                points[section.axis].append(
                    KeyPoint(text=text, citations=numbers, superseded=point.superseded)
                )
    return [AxisSection(axis=axis, points=kept) for axis, kept in points.items()]


def sanitize_dossier(
    dossier: Dossier, sources: Sequence[SourceRef], axes: Sequence[str], *, stage: str = "report"
) -> tuple[Dossier, list[Alert]]:
    """What code guarantees whatever the model wrote: citations among ``sources`` only (markers in
    the text moved to the lists, orphans removed), no key point without a citation, one section per
    axis, ledger entries with both sides, and a key point citing only the rejected side of a
    contradiction on its subject marked superseded. One alert per kind of change."""
    valid = {s.number for s in sources}
    tally = _Tally(orphans=set())
    ledger = _ledger(dossier.contradictions, valid, tally)
    sections = _sections(dossier.sections, axes, valid, tally)
    for section in sections:
        for point in section.points:
            if not point.superseded and any(supersedes(entry, point) for entry in ledger):
                point.superseded = True
                tally.superseded += 1
    clean = Dossier(
        synthesis=_cited(dossier.synthesis, valid, tally),
        sections=sections,
        contradictions=ledger,
        uncertainties=_cited(dossier.uncertainties, valid, tally),
        recommendation=_cited(dossier.recommendation, valid, tally),
    )
    return clean, tally.alerts(stage)


def write_draft(client: Asker, data: WriterInput) -> tuple[Dossier, list[Alert]]:
    """The writer's structure, sanitised by code, and the alerts of what code removed; when the
    writer fails every attempt, the findings rendered by code (veille.steps.write_fallback)."""
    try:
        result = client.ask(WRITER, data)
    except ModelError as exc:  # cut, blocked or outside the schema on every attempt: code renders
        dossier, alerts = sanitize_dossier(code_dossier(data), data.sources, list(data.axes))
        return dossier, [rendered_by_code_alert(exc), *alerts]
    dossier = Dossier.model_validate(result.output.model_dump())
    clean, alerts = sanitize_dossier(dossier, data.sources, list(data.axes))
    return clean, [*foreign_answer_alerts("write", result, "rédacteur"), *alerts]


class WrittenDraft(BaseModel):
    dossier: Dossier
    draft: str  # the structure rendered (what the critic and the arbiter read)
    sources: list[SourceRef]
    writer_input: WriterInput
    alerts: list[Alert] = Field(default_factory=list)


def write_sourced_draft(
    client: Asker,
    analyses: Sequence[Analysis],
    request: Request,
    grid: Grid,
    db_path: Path,
    web: Sequence[WebResearch] = (),
) -> WrittenDraft:
    """Number the cited sources (code, in order of first citation across branches), then have the
    writer turn the numbered findings into the structure: the model sees numbers, never document ids
    nor URLs. ``web``: the sub-tasks' web research (``--web``), numbered with the documents."""
    cited = [i for a in analyses for f in a.findings.findings for i in f.doc_ids]
    cited += [i for a in analyses for c in a.findings.contradictions for i in (*c.doc_ids, c.retained)]
    metadata = source_metadata(db_path, cited)
    data, sources = number_findings(
        analyses,
        metadata,
        request_title=request.title,
        request=request.text,
        mandatory_mentions=grid.mandatory_mentions,
        options=derive_terms(request),
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
        web=web,
    )
    flags = {i: label for a in analyses for i, label in a.flags.items()}
    if flags:  # flagged documents kept by the plan are marked in the sources list
        sources = [s.model_copy(update={"flag": flags.get(s.id, s.flag)}) for s in sources]
        data = data.model_copy(update={"sources": sources})
    dossier, alerts = write_draft(client, data)
    draft = render_body(dossier, data.axes)
    return WrittenDraft(dossier=dossier, draft=draft, sources=sources, writer_input=data, alerts=alerts)
