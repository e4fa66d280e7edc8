"""The request as the plan's reading needs it (issue 37): axes with their terms, options, period.

:class:`RequestReadingLike` is the interface shared with branch ``request``
(``veille.corpus.request_reading.RequestReading``: the same attribute names). Until that reading is
merged, :func:`interim_reading` builds one from today's pieces: the axes the offline engine parses
from the request's wording (veille.offline.axes: list items, headings, enumerations; the whole
request when it states none), the request terms as options, and the planner's search terms added
to the axis of their sub-task. :func:`out_of_period` reads a catalogue date against a period.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from veille.offline.axes import parse_axes
from veille.roles.planner import SubTask
from veille.steps.coverage import REQUEST_META
from veille.steps.passages import term_keys

__all__ = [
    "AxisProtocol",
    "InterimAxis",
    "InterimReading",
    "RequestReadingLike",
    "interim_reading",
    "is_dated",
    "out_of_period",
]


class AxisProtocol(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def terms(self) -> Sequence[str]: ...


class RequestReadingLike(Protocol):
    """What this module reads of the request (branch ``request``'s ``RequestReading``)."""

    @property
    def axes(self) -> Sequence[AxisProtocol]: ...
    @property
    def options(self) -> Sequence[str]: ...
    @property
    def period_start(self) -> datetime.date | None: ...
    @property
    def period_end(self) -> datetime.date | None: ...


@dataclass(frozen=True)
class InterimAxis:
    key: str
    title: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class InterimReading:
    """A :class:`RequestReadingLike` built from today's request terms and offline axes."""

    axes: tuple[InterimAxis, ...]
    options: tuple[str, ...]
    period_start: datetime.date | None = None
    period_end: datetime.date | None = None


_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_META = frozenset(term_keys(REQUEST_META))


def _content_words(text: str, options: Sequence[str]) -> tuple[str, ...]:
    """The words of ``text`` that can identify passages: not options, orders or function words."""
    skip = set(_META).union(*(term_keys(o) for o in options))
    out: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group().strip("'’-").split("'")[-1].split("’")[-1]
        found = term_keys(word)
        if found and not found <= skip:
            out[word.lower()] = None
    return tuple(out)


def _search_terms_by_axis(
    axes: Sequence[InterimAxis], sub_tasks: Sequence[SubTask], options: Sequence[str]
) -> dict[str, list[str]]:
    """The planner's search terms, each sub-task's given to the axis its question and terms match best."""
    out: dict[str, list[str]] = {a.key: [] for a in axes}
    axis_keys = [set().union(*(term_keys(t) for t in a.terms)) for a in axes]
    for st in sub_tasks:
        if not st.search_terms or not axes:
            continue
        mine = set().union(*(term_keys(t) for t in (st.question, *st.search_terms)))
        best = max(range(len(axes)), key=lambda k: (len(mine & axis_keys[k]), -k))
        out[axes[best].key] += [t for t in st.search_terms if t not in out[axes[best].key]]
    return out


def interim_reading(
    request_title: str, request: str, terms: Sequence[str], sub_tasks: Sequence[SubTask] = ()
) -> InterimReading:
    """The request's axes (veille.offline.axes: list items, headings, enumerations; the whole
    request when it states none), its options (the request terms) and the planner's search terms
    added to the axis of their sub-task. No period: branch ``request`` reads it."""
    options = tuple(t for t in terms if t.strip())
    parsed = parse_axes(request, list(options))
    axes = tuple(
        InterimAxis(f"axe-{n}", a.text, _content_words(a.text, options)) for n, a in enumerate(parsed, 1)
    ) or (InterimAxis("axe-1", request_title, _content_words(f"{request_title}\n{request}", options)),)
    extra = _search_terms_by_axis(axes, sub_tasks, options)
    axes = tuple(InterimAxis(a.key, a.title, (*a.terms, *extra.get(a.key, []))) for a in axes)
    return InterimReading(axes=axes, options=options)


def _date(text: str) -> tuple[datetime.date, datetime.date] | None:
    """The first and last day a catalogue date (« 2024-03-05 », « 2024-03 », « 2024 ») may mean."""
    match = re.match(r"\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?", text or "")
    if match is None:
        return None
    try:
        year = int(match[1])
        if match[3]:
            day = datetime.date(year, int(match[2]), int(match[3]))
            return day, day
        if match[2]:
            first = datetime.date(year, int(match[2]), 1)
            following = datetime.date(year + (first.month == 12), first.month % 12 + 1, 1)
            return first, following - datetime.timedelta(days=1)
        return datetime.date(year, 1, 1), datetime.date(year, 12, 31)
    except ValueError:
        return None


def is_dated(date: str) -> bool:
    """Whether a catalogue date says when the document was written (« date inconnue »: no)."""
    return _date(date) is not None


def out_of_period(date: str, start: datetime.date | None, end: datetime.date | None) -> bool:
    """Whether a document dated ``date`` is certainly outside [start, end]; undated: never."""
    span = _date(date)
    if span is None:
        return False
    return (start is not None and span[1] < start) or (end is not None and span[0] > end)
