"""What a document's date is once read: an ISO day, or « date inconnue », and where it came from.

Shared by the store (catalogue, sources), the steps (ledger sanitising) and the offline engine
(contradictions): a date string that is not an ISO day is unknown, and an unknown date never
orders two documents (docs/corpus-format.md, « Dates »).
"""

from __future__ import annotations

import datetime
from typing import Final, Literal, get_args

__all__ = [
    "DATE_ORIGINS",
    "UNKNOWN_DATE",
    "DateOrigin",
    "date_text",
    "known_day",
    "later",
    "origin_label",
]

DateOrigin = Literal["front_matter", "format_metadata", "file_name", "text", "file_clock", "unknown"]
DATE_ORIGINS: Final[tuple[str, ...]] = get_args(DateOrigin)
UNKNOWN_DATE: Final = "date inconnue"

# How the catalogue, the Sources section and alerts say where a date came from (French, reader-facing).
_LABELS: Final[dict[str, str]] = {
    "front_matter": "date de l'auteur",
    "format_metadata": "propriétés du fichier",
    "file_name": "date du nom de fichier",
    "text": "date lue dans le texte",
    "file_clock": "date du fichier",
    "unknown": UNKNOWN_DATE,
}


def known_day(value: object) -> datetime.date | None:
    """The day ``value`` names (a date, or a ``YYYY-MM-DD`` string); None for anything else, such as
    « date inconnue »: a date that cannot be read is unknown, never compared."""
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if not isinstance(value, str) or len(value) != len("2026-01-31"):
        return None
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        return None


def date_text(day: datetime.date | None) -> str:
    """A stored date as every reader shows it: ``YYYY-MM-DD`` or « date inconnue »."""
    return day.isoformat() if day is not None else UNKNOWN_DATE


def later(a: object, b: object) -> bool | None:
    """Whether date ``a`` is after date ``b``; None when either is unknown (the order is unknown)."""
    day_a, day_b = known_day(a), known_day(b)
    if day_a is None or day_b is None:
        return None
    return day_a > day_b


def origin_label(origin: str | None) -> str:
    """The French words for a date's origin (« date lue dans le texte »…); an unrecorded origin is
    the author's (rows written before origins were recorded came from front matter)."""
    return _LABELS.get(origin or "front_matter", _LABELS["front_matter"])
