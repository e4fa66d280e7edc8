"""The write step (seed 004): sources numbered by code, the writer's structure, the shipped report.

The writer sees source numbers only; ids and titles stay in state. Whatever the model returns, code
sanitises the structure (:func:`sanitize_dossier`, veille.steps.sanitize: only valid citations, no
uncited key point, one section per axis, superseded points marked) and renders it; after review the report is assembled by
code (veille.steps.finalize): failed axes named, citations renumbered, ``## Sources`` built from
the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from veille.alerts import Alert
from veille.corpus.request import Request
from veille.corpus.request_reading import RequestReading
from veille.corpus.terms import derive_terms
from veille.dossier import AxisSection, Dossier, render_body
from veille.grid import Grid
from veille.language import request_language
from veille.models.base import ModelError
from veille.roles.base import Asker
from veille.roles.limits import Bounds
from veille.roles.writer import WRITER, SourceRef, WriterInput
from veille.steps.analyse import Analysis
from veille.steps.answer_items import dropped_items_alerts
from veille.steps.answer_language import foreign_answer_alerts
from veille.steps.empty_axes import fill_empty_branches
from veille.steps.numbering import number_findings
from veille.steps.research import WebResearch
from veille.steps.sanitize import MAX_ITEM_WORDS, MAX_POINTS_PER_AXIS, sanitize_dossier
from veille.steps.sections import SectionCache, branch_digests, conclusions_digest
from veille.steps.verify import VerifyContext, read_context
from veille.steps.write_fallback import code_dossier, rendered_by_code_alert
from veille.store.readers import source_metadata

__all__ = [
    "MAX_ITEM_WORDS",
    "MAX_POINTS_PER_AXIS",
    "WrittenDraft",
    "merge_sections",
    "number_findings",
    "sanitize_dossier",
    "write_draft",
    "write_sourced_draft",
]


def write_draft(
    client: Asker, data: WriterInput, kept: Mapping[str, AxisSection] | None = None,
    context: VerifyContext | None = None,
) -> tuple[Dossier, list[Alert]]:  # fmt: skip
    """The writer's structure, sanitised by code, and the alerts of what code removed; when the
    writer fails every attempt, the findings rendered by code (veille.steps.write_fallback).

    ``kept``: sections kept from a validated night (veille.steps.sections), in tonight's numbers;
    the writer is asked for the other axes only (``data.previous``: the conclusions to update), code
    merges, and sanitising (and verifying, given ``context``) runs over every axis and source."""
    asked = _changed_only(data, kept) if kept else data
    try:
        result = client.ask(WRITER, asked)
    except ModelError as exc:  # cut, blocked or outside the schema on every attempt: code renders
        rendered = code_dossier(data)  # the kept sections stand here too (validated on their night)
        rendered = merge_sections(rendered, kept, data.axes) if kept else rendered
        dossier, alerts = sanitize_dossier(rendered, data.sources, list(data.axes), **_limits(data, context))
        return dossier, [rendered_by_code_alert(exc), *alerts]
    dossier = Dossier.model_validate(result.output.model_dump())
    dossier.recommendation = dossier.recommendation if data.kind == "choice" else None  # none asked
    if kept:
        dossier = merge_sections(dossier, kept, data.axes)
    clean, alerts = sanitize_dossier(dossier, data.sources, list(data.axes), **_limits(data, context))
    language = foreign_answer_alerts("write", result, "rédacteur")
    return clean, [*language, *dropped_items_alerts("write", result, "rédacteur"), *alerts]


def _changed_only(data: WriterInput, kept: Mapping[str, AxisSection]) -> WriterInput:
    """The writer's input for the axes not in ``kept``: their findings and notes, the kept titles."""
    changed = {axis: title for axis, title in data.axes.items() if axis not in kept}
    return data.model_copy(
        update={
            "axes": changed,
            "findings": [f for f in data.findings if f.subtask_id in changed],
            "contradictions": [c for c in data.contradictions if c.subtask_id in changed],
            "kept_axes": {axis: title for axis, title in data.axes.items() if axis in kept},
        }
    )


def merge_sections(dossier: Dossier, kept: Mapping[str, AxisSection], axes: Iterable[str]) -> Dossier:
    """``dossier``'s sections for the axes not in ``kept``, the kept ones for the others, in the
    axes' order (a section the model wrote for a kept axis is dropped: the kept one stands)."""
    written = {s.axis: s for s in dossier.sections if s.axis not in kept}
    sections = [kept.get(axis) or written.get(axis) or AxisSection(axis=axis) for axis in axes]
    return dossier.model_copy(update={"sections": [s.model_copy(deep=True) for s in sections]})


def _limits(data: WriterInput, context: VerifyContext | None) -> dict[str, Any]:
    return {
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
    kept_axes: list[str] = Field(default_factory=list)  # sections kept from a validated night
    digests: dict[str, str] = Field(default_factory=dict)  # axis -> digest of its inputs (sections cache)
    conclusions_key: str = ""
    verify: VerifyContext | None = None  # the cited documents' texts: the review verifies each revision


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
) -> WrittenDraft:
    """Number the cited sources (code, in order of first citation across branches), then have the
    writer turn the numbered findings into the structure: the model sees numbers, never document ids
    nor URLs. ``web``: the sub-tasks' web research (``--web``), numbered with the documents;
    ``sections``: the sections kept across nights (``writer_key``: the writer's model key), None to
    write every axis."""
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
    context = read_context(db_path, sources, data.options, request.text)
    dossier, alerts = write_draft(client, data, kept, context)
    alerts = [*filled, *alerts]
    draft = render_body(dossier, data.axes)
    return WrittenDraft(
        dossier=dossier, draft=draft, sources=sources, writer_input=data, alerts=alerts,
        kept_axes=list(kept), digests=digests, conclusions_key=key, verify=context,
    )  # fmt: skip
