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
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.citations import normalize_citations, normalize_lookalikes
from veille.corpus.request import Request
from veille.corpus.request_reading import RequestReading
from veille.corpus.terms import derive_terms
from veille.dossier import AxisSection, CitedText, Dossier, KeyPoint, LedgerEntry, render_body, supersedes
from veille.grid import Grid
from veille.language import request_language
from veille.models.base import ModelError
from veille.plaintext import clean_text
from veille.roles.base import Asker
from veille.roles.limits import Bounds
from veille.roles.writer import WRITER, SourceRef, WriterInput
from veille.steps.analyse import Analysis
from veille.steps.answer_items import dropped_items_alerts
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.bounds import bound_report
from veille.steps.empty_axes import fill_empty_branches
from veille.steps.inventory import (
    Coverage,
    ensure_entries,
    label_points,
    missing_points,
    owed_entries,
)
from veille.steps.ledger_dates import drop_unknown_order
from veille.steps.model_structure import drop_format_characters, strip_structure
from veille.steps.numbering import number_findings
from veille.steps.quotations import mark_dossier_quotations
from veille.steps.research import WebResearch
from veille.steps.sections import (
    SectionCache,
    branch_digests,
    changed_only,
    conclusions_digest,
    merge_sections,
    text_keys,
)
from veille.steps.verify import VerifyContext, read_context
from veille.steps.verify_memo import remembered_verify
from veille.steps.write_fallback import code_dossier, rendered_by_code_alert
from veille.steps.write_tally import MAX_ITEM_WORDS, MAX_POINTS_PER_AXIS, Tally
from veille.store.readers import source_metadata

__all__ = [
    "MAX_ITEM_WORDS",
    "MAX_POINTS_PER_AXIS",
    "WrittenDraft",
    "number_findings",
    "sanitize_dossier",
    "write_draft",
    "write_sourced_draft",
]


# --- sanitising a model's structure --------------------------------------------------------------

_MARKER_RE = re.compile(r"\[(\d+)\]")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s", re.MULTILINE)
_LEAD_RE = re.compile(r"^[\s#>*+\-|]+")  # a text cannot open a heading, a list or a quote of its own
# What marking a quotation adds (« … » (en)): not words of the item, so a second sanitising (the
# review's) bounds the same item alike.
_QUOTE_MARK_RE = re.compile(r"[«»]|(?<=»)\s*\([a-z]{2}\)")


def _clean(text: str, valid: set[int], tally: Tally) -> tuple[str, list[int]]:
    """Text on one line without citation markers, and the valid numbers it carried inline. A text
    that writes a Markdown heading (a section of its own, "## Sources"...) is dropped: sections are
    code's, so their content is too."""
    if _HEADING_RE.search(text := drop_format_characters(text)):  # [\u200b9] is read as [9]
        tally.headings += 1
        return "", []
    text, kinds = strip_structure(text)
    tally.structure += bool(kinds)
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
    if (
        len(_QUOTE_MARK_RE.sub(" ", text).split()) > tally.max_words
    ):  # dropped, not cut: a cut sentence misleads
        tally.too_long += 1
        return "", []
    # Model text is data: no HTML, link or URL in the structure; rendering escapes the rest.
    return clean_text(_LEAD_RE.sub("", text).strip()), [n for n in inline if n in valid]


def _seen(text: str, seen: set[str], tally: Tally) -> bool:
    """Whether ``text`` repeats an item already kept (case and spacing aside); counted if so."""
    key = " ".join(text.casefold().split())
    if key in seen:
        tally.duplicates += 1
        return True
    seen.add(key)
    return False


def _numbers(numbers: Sequence[int], valid: set[int], tally: Tally) -> list[int]:
    tally.orphans.update(n for n in numbers if n not in valid)
    return list(dict.fromkeys(n for n in numbers if n in valid))


def _cited(items: Sequence[CitedText], valid: set[int], tally: Tally) -> list[CitedText]:
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


def _ledger(entries: Sequence[LedgerEntry], valid: set[int], tally: Tally) -> list[LedgerEntry]:
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
    sections: Sequence[AxisSection], axes: Sequence[str], valid: set[int], tally: Tally
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
            elif len(points[section.axis]) >= tally.max_points:
                tally.over_cap += 1
            else:
                points[section.axis].append(
                    KeyPoint(text=text, citations=numbers, superseded=point.superseded)
                )
    return [AxisSection(axis=axis, points=kept) for axis, kept in points.items()]


def sanitize_dossier(
    dossier: Dossier,
    sources: Sequence[SourceRef],
    axes: Sequence[str],
    *,
    stage: str = "report",
    bounds: Bounds | None = None,
    max_words: int | None = None,
    language: str = "",
    context: VerifyContext | None = None,
    coverage: Coverage | None = None,
) -> tuple[Dossier, list[Alert]]:
    """What code guarantees whatever the model wrote: citations among ``sources`` only (markers in
    the text moved to the lists, orphans removed), no key point without a citation, one section per
    axis, ledger entries with both sides, and a key point citing only the rejected side of a
    contradiction on its subject marked superseded; within ``bounds`` (items' words, points per axis
    and, given the grid's ``max_words``, the whole report's: veille.steps.bounds). ``language``: the
    request's; each sentence in another language than it and the dossier's own is then marked as a
    quotation, « … » (en) (:func:`veille.language.mark_quotations`), whichever backend wrote it.
    ``context``: the cited documents' texts; then every figure is checked against them and each
    key point and ledger entry gets its evidence (veille.steps.verify). ``coverage``: what the
    dossier owes an entry (veille.steps.inventory: an inventory's items, every axis that read
    documents), filled before verification and ensured after the bound. One alert per kind of change."""
    valid = {s.number for s in sources}
    bounds = bounds or Bounds()
    tally = Tally(orphans=set(), max_words=bounds.max_item_words, max_points=bounds.max_points_per_axis)
    # "Later wins" never orders a source of unknown date (veille.steps.ledger_dates).
    ledger, unordered = drop_unknown_order(_ledger(dossier.contradictions, valid, tally), sources, stage)
    sections = _sections(dossier.sections, axes, valid, tally)
    filled = 0
    if coverage is not None:  # owed entries, cleaned like the writer's; the per-axis cap is not theirs
        label_points(sections, coverage)  # an inventory's entry names its item
        room = replace(tally, orphans=set(), max_points=tally.max_points + len(coverage.items))
        for extra in _sections(missing_points(sections, coverage), axes, valid, room):
            next(s for s in sections if s.axis == extra.axis).points += extra.points
            filled += len(extra.points)
        label_points(sections, coverage)
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
        recommendation=dossier.recommendation and _cited(dossier.recommendation, valid, tally),  # None stays
    )
    if language:
        clean = mark_dossier_quotations(clean, language)
    # Verified before the report's bound: what it cuts is then what the sources support.
    clean, verified = remembered_verify(clean, context, stage) if context is not None else (clean, [])
    checked, cut = clean, list[Alert]()
    if max_words is not None:
        clean, cut = bound_report(clean, bounds.report_words(max_words), stage)
    if coverage is not None:
        clean, owed = ensure_entries(clean, checked, coverage, stage, filled)
        cut += owed
    return clean, tally.alerts(stage) + unordered + verified + cut


def write_draft(
    client: Asker, data: WriterInput, kept: Mapping[str, AxisSection] | None = None,
    context: VerifyContext | None = None, coverage: Coverage | None = None,
) -> tuple[Dossier, list[Alert]]:  # fmt: skip
    """The writer's structure, sanitised by code, and the alerts of what code removed; when the
    writer fails every attempt, the findings rendered by code (veille.steps.write_fallback).

    ``kept``: sections kept from a validated night (veille.steps.sections), in tonight's numbers;
    the writer is asked for the other axes only (``data.previous``: the conclusions to update), code
    merges, and sanitising (and verifying, given ``context``) runs over every axis and source."""
    asked = changed_only(data, kept) if kept else data
    try:
        result = client.ask(WRITER, asked)
    except ModelError as exc:  # cut, blocked or outside the schema on every attempt: code renders
        rendered = code_dossier(data)  # the kept sections stand here too (validated on their night)
        rendered = merge_sections(rendered, kept, data.axes) if kept else rendered
        dossier, alerts = sanitize_dossier(
            rendered, data.sources, list(data.axes), **_limits(data, context, coverage)
        )
        return dossier, [rendered_by_code_alert(exc), *alerts]
    dossier = Dossier.model_validate(result.output.model_dump())
    dossier.recommendation = dossier.recommendation if data.kind == "choice" else None  # none asked
    if kept:
        dossier = merge_sections(dossier, kept, data.axes)
    clean, alerts = sanitize_dossier(
        dossier, data.sources, list(data.axes), **_limits(data, context, coverage)
    )
    language = foreign_answer_alerts("write", result, "rédacteur")
    return clean, [*language, *dropped_items_alerts("write", result, "rédacteur"), *alerts]


def _limits(data: WriterInput, context: VerifyContext | None, coverage: Coverage | None) -> dict[str, Any]:
    return {
        "coverage": coverage,
        "bounds": data.bounds,
        "max_words": data.max_words,
        "language": request_language(data.request_title, data.request),
        "context": context,
    }


class WrittenDraft(BaseModel):
    dossier: Dossier
    draft: str  # the structure rendered (what the critic and the arbiter read)
    sources: list[SourceRef]
    writer_input: WriterInput
    alerts: list[Alert] = Field(default_factory=list)
    # Sections kept from a validated night, and rewritten ones in the words a validated night passed
    # (sections.text_keys): the critic and reviser do not see them again.
    kept_axes: list[str] = Field(default_factory=list)
    digests: dict[str, str] = Field(default_factory=dict)  # axis -> digest of its inputs (sections cache)
    conclusions_key: str = ""
    verify: VerifyContext | None = None  # the cited documents' texts: the review verifies each revision
    coverage: Coverage | None = None  # what the dossier owes an entry (veille.steps.inventory)


def write_sourced_draft(
    client: Asker,
    analyses: Sequence[Analysis],
    request: Request,
    grid: Grid,
    db_path: Path,
    web: Sequence[WebResearch] = (),
    bounds: Bounds | None = None,
    sections: SectionCache | None = None,
    writer_key: str = "",
    *,
    reading: RequestReading | None = None,
    memo: Path | None = None,
) -> WrittenDraft:
    """Number the cited sources (code, in order of first citation across branches), then have the
    writer turn the numbered findings into the structure: the model sees numbers, never document ids
    nor URLs. ``web``: the sub-tasks' web research (``--web``), numbered with the documents;
    ``sections``: the sections kept across nights (``writer_key``: the writer's model key), None to
    write every axis; ``memo``: where the verifier's results are kept across nights (None: not kept)."""
    analyses, filled = fill_empty_branches(analyses, db_path)  # no axis empty while its documents speak
    cited = [i for a in analyses for f in a.findings.findings for i in f.doc_ids]
    cited += [i for a in analyses for c in a.findings.contradictions for i in (*c.doc_ids, c.retained)]
    metadata = source_metadata(db_path, cited)
    data, sources = number_findings(
        analyses,
        metadata,
        request_title=request.title,
        request=request.text,
        mandatory_mentions=grid.mandatory_mentions,
        options=list(reading.options) if reading and reading.options else derive_terms(request),
        min_words=grid.min_words,
        max_words=grid.max_words,
        max_sentence_words=grid.max_sentence_words,
        web=web,
        bounds=bounds,
    )
    data = data.model_copy(update={"kind": reading.kind}) if reading else data  # the sections asked
    data, coverage = owed_entries(analyses, data, db_path)  # items and axes the dossier owes an entry
    sources = data.sources
    flags = {i: label for a in analyses for i, label in a.flags.items()}
    if flags:  # flagged documents kept by the plan are marked in the sources list
        sources = [s.model_copy(update={"flag": flags.get(s.id, s.flag)}) for s in sources]
        data = data.model_copy(update={"sources": sources})
    digests = branch_digests(writer_key, data) if sections is not None else {}
    key = conclusions_digest(writer_key, data) if sections is not None else ""
    kept: dict[str, AxisSection] = {}
    if sections is not None and not web:
        kept = sections.sections(digests, sources)
        previous = sections.conclusions(key, sources) if kept else None
        if previous is None or len(kept) == len(data.axes):  # nothing changed: the response cache
            kept = {}
        else:
            data = data.model_copy(update={"previous": previous})
    context = read_context(db_path, sources, data.options, request.text, memo)
    dossier, alerts = write_draft(client, data, kept, context, coverage)
    held = list(kept)
    # A rewritten section in words a validated night passed is held as a kept one. Only on a night
    # that keeps some: with none kept every input is the night before's (the response cache answers).
    if sections is not None and kept:
        rewritten = {axis: title for axis, title in data.axes.items() if axis not in kept}
        held += [a for a in rewritten if a in sections.validated(text_keys(dossier, sources, rewritten, key))]
    alerts = [*filled, *alerts]
    draft = render_body(dossier, data.axes)
    return WrittenDraft(
        dossier=dossier, draft=draft, sources=sources, writer_input=data, alerts=alerts,
        kept_axes=held, digests=digests, conclusions_key=key, verify=context, coverage=coverage,
    )  # fmt: skip
