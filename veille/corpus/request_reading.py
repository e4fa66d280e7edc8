"""The request read once into a structure every backend uses (issue 37, item 1): its axes, the
options it compares, its period, its language and what it asks for.

Code reads the request's text; a model planner may propose axes, options, search terms and a period
(:class:`RequestProposal`), and each proposal is kept only where the request's text supports it
(an option must also occur in the corpus). ``origin`` says where each field came from.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Axis",
    "ProposedAxis",
    "RequestKind",
    "RequestProposal",
    "RequestReading",
    "read_request",
]

# What the request asks for: a choice gets a recommendation; an inventory one entry per item
# found; an evolution what changed when; a survey (none of these) the state of the art.
RequestKind = Literal["choice", "inventory", "evolution", "survey"]


@dataclass(frozen=True)
class Axis:
    key: str  # stable anchor id, e.g. "axe-1" (never shown as text in headings)
    title: str  # a whole phrase of the request (never cut), shown as the heading
    terms: tuple[str, ...]  # words/phrases that identify passages about this axis


@dataclass(frozen=True)
class RequestReading:
    axes: tuple[Axis, ...]
    options: tuple[str, ...]  # products/services compared, as written in the corpus (any case)
    period_start: datetime.date | None
    period_end: datetime.date | None
    language: str  # ISO 639-1 of the request, e.g. "fr"
    kind: RequestKind
    origin: Mapping[str, str]  # per field: "request" | "planner" | "corpus"


@dataclass(frozen=True)
class ProposedAxis:
    """An axis a model planner proposes: a title and its search terms."""

    title: str
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestProposal:
    """What a model planner proposes about the request; checked by :func:`read_request`."""

    axes: tuple[ProposedAxis, ...] = ()
    options: tuple[str, ...] = ()
    search_terms: tuple[str, ...] = ()  # in the corpus's languages (a French request, English documents)
    period_start: datetime.date | None = None
    period_end: datetime.date | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


def read_request(
    request_text: str, corpus_texts: Sequence[str], proposal: RequestProposal | None = None
) -> RequestReading:
    """The request's reading (implementation follows on this branch)."""
    raise NotImplementedError
