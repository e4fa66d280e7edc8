"""The plan step's reading of the request (veille.corpus.request_reading), the same for every
backend: code reads the request and the text of the documents the planner saw; a model planner's
proposal (its ``axes``, ``options``, ``period_start``/``period_end``) is kept where the request's
text and the corpus support it. Recorded in plan.json (``request``) and the run summary."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veille.corpus.request_reading import (
    ProposedAxis,
    RequestProposal,
    RequestReading,
    read_request,
)
from veille.roles.planner import Plan, PlannerInput
from veille.store.readers import fetch_documents

__all__ = ["document_texts", "plan_reading", "proposal_of", "reading_record"]


def _date(text: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(text.strip()) if text.strip() else None
    except ValueError:  # not AAAA-MM-JJ: no date proposed
        return None


def proposal_of(plan: Plan | None) -> RequestProposal | None:
    """The planner's reading of the request, None when it proposed nothing."""
    if plan is None:
        return None
    proposal = RequestProposal(
        axes=tuple(
            ProposedAxis(title=a.title.strip(), terms=tuple(t.strip() for t in a.search_terms if t.strip()))
            for a in plan.axes
            if a.title.strip()
        ),
        options=tuple(o.strip() for o in plan.options if o.strip()),
        period_start=_date(plan.period_start),
        period_end=_date(plan.period_end),
    )
    return proposal if proposal != RequestProposal() else None


def document_texts(database: Path, ids: Sequence[str]) -> dict[str, str]:
    """The text of the documents ``ids``, read from the store (id -> body)."""
    return {d.id: d.body for d in fetch_documents(database, list(ids))}


def plan_reading(
    data: PlannerInput, bodies: Mapping[str, str], proposed: Plan | None = None
) -> RequestReading:
    """The request of the planner's input read against the documents' text (``bodies``, id ->
    text; any order) and the planner's proposal, if any."""
    texts = [bodies[doc_id] for doc_id in sorted(bodies)]
    dates = [e.date for e in data.catalogue]  # where the corpus stands (« en 2025 » a past year or not)
    return read_request(
        data.request, texts, proposal_of(proposed), title=data.request_title, terms=data.terms, dates=dates
    )


def reading_record(reading: RequestReading) -> dict[str, Any]:
    """The reading as plan.json records it (``request``)."""
    return {
        "kind": reading.kind,
        "language": reading.language,
        "axes": [{"key": a.key, "title": a.title, "terms": list(a.terms)} for a in reading.axes],
        "options": list(reading.options),
        "period_start": reading.period_start.isoformat() if reading.period_start else None,
        "period_end": reading.period_end.isoformat() if reading.period_end else None,
        "origin": dict(reading.origin),
    }
