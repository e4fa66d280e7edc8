"""The period a request follows, read from its text: « depuis la version 34 (janvier 2024) » starts
on 2024-01-01; « en 2025 » is 2025-01-01..2025-12-31; « entre 2023 et 2025 » (\"between 2023 and
2025\") is 2023-01-01..2025-12-31. Month names come from the shared word lists (veille/data/lang),
the cue words from veille/data/request.toml.

Precision before recall: a period excludes documents, so a year is read as one only when the
request says so. « depuis » / \"since\" always looks back. « en 2027 » may say when a project lands
(« remplace en 2027 les chaudières ») rather than which documents count: a year after a
« during » word is a period only when the corpus's newest document is dated past that year (the
year is over for the corpus's authors), never a year the corpus has not yet left, and never
without dated documents.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Sequence
from functools import cache

from veille.corpus.request_words import fold, pairs, words
from veille.offline import lexicon

__all__ = ["latest_year", "read_period"]

Period = tuple[datetime.date | None, datetime.date | None]
_YEAR = r"(?:19|20)\d{2}"


@cache
def _months() -> dict[str, int]:
    """Folded month name -> number, French and English (veille/data/lang months.NN)."""
    out: dict[str, int] = {}
    for lang in lexicon.LANGS:
        for group, names in lexicon.groups("months", lang).items():
            for name in names:
                out[lexicon.fold_entry(name)] = int(group)
    return out


@cache
def _date_re() -> str:
    """A date as a request writes it: ISO, « 15 janvier 2024 », \"January 15, 2024\", « janvier
    2024 », a year. Named groups give its precision."""
    month = "|".join(sorted(_months(), key=lambda m: (-len(m), m)))
    return (
        rf"(?:(?P<iy>{_YEAR})-(?P<im>\d{{2}})(?:-(?P<id>\d{{2}}))?"
        rf"|(?:(?P<d1>\d{{1,2}})(?:er)?\s+)?(?P<m1>{month})\s+(?:(?P<d2>\d{{1,2}}),?\s+)?(?P<y1>{_YEAR})"
        rf"|(?P<y>{_YEAR}))(?![\w-])"
    )


def _bounds(match: re.Match[str], prefix: str = "") -> tuple[datetime.date, datetime.date] | None:
    """First and last day of the date matched (groups named ``prefix + name``)."""
    g = {k[len(prefix) :]: v for k, v in match.groupdict().items() if k.startswith(prefix) and v}
    try:
        if "iy" in g:
            year, month = int(g["iy"]), int(g["im"])
            if "id" in g:
                day = datetime.date(year, month, int(g["id"]))
                return day, day
            return datetime.date(year, month, 1), datetime.date(
                year, month, calendar.monthrange(year, month)[1]
            )
        if "y1" in g:
            year, month = int(g["y1"]), _months()[g["m1"]]
            if day_text := g.get("d1") or g.get("d2"):
                day = datetime.date(year, month, int(day_text))
                return day, day
            return datetime.date(year, month, 1), datetime.date(
                year, month, calendar.monthrange(year, month)[1]
            )
        if "y" in g:
            year = int(g["y"])
            return datetime.date(year, 1, 1), datetime.date(year, 12, 31)
    except ValueError:  # « 31 février 2024 »: no such day, no period
        return None
    return None


def _cue(entries: Sequence[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(entries, key=lambda w: (-len(w), w)))


def _prefixed(prefix: str) -> str:
    return re.sub(r"\(\?P<(\w+)>", rf"(?P<{prefix}\1>", _date_re())


def _between(text: str) -> Period | None:
    for opening, closing in pairs("period", "between"):
        pattern = (
            rf"(?<![\w-]){re.escape(opening)}\s+(?:l'annee\s+|les\s+annees\s+|the\s+years\s+)?"
            rf"{_prefixed('a')}\s+{re.escape(closing)}\s+{_prefixed('b')}"
        )
        for match in re.finditer(pattern, text):
            first, last = _bounds(match, "a"), _bounds(match, "b")
            if first and last and first[0] <= last[1]:
                return first[0], last[1]
    return None


def _since(text: str) -> Period | None:
    # The date may follow its cue in the same clause: « depuis la version 34 (janvier 2024) ».
    pattern = rf"(?<![\w-])(?:{_cue(words('period', 'since'))})(?![\w-])[^.;!?\n]{{0,80}}?{_date_re()}"
    for match in re.finditer(pattern, text):
        if found := _bounds(match):
            return found[0], None
    return None


def _during(text: str, dates: Sequence[str]) -> Period | None:
    pattern = rf"(?<![\w-])(?:{_cue(words('period', 'during'))})\s+{_date_re()}"
    latest = latest_year(dates)
    for match in re.finditer(pattern, text):
        found = _bounds(match)
        if found and latest is not None and found[1].year < latest:
            return found
    return None


def latest_year(dates: Sequence[str]) -> int | None:
    """The year of the corpus's newest document (its dates, « 2026-03-01 »): how far its authors
    have got. Dates written inside the texts do not count: a support end (« jusqu'au 2029-06-30 »)
    is a commitment, not where the corpus stands. None without a dated document."""
    years = [int(m.group(1)) for d in dates if (m := re.match(rf"({_YEAR})(?!\d)", d.strip()))]
    return max(years) if years else None


def read_period(request_text: str, dates: Sequence[str] = ()) -> Period:
    """(start, end) of the period the request follows; (None, None) when it states none. A range
    first, then a start (« depuis »), then a year or month of the past (« en 2025 »)."""
    text = fold(request_text)
    for found in (_between(text), _since(text), _during(text, dates)):
        if found is not None:
            return found
    return None, None
