"""A document's date from what the document itself says (docs/corpus-format.md, « Dates »).

Two readers, each under the rules and word lists of ``veille/data/dates.toml`` (each with its reason):

- :func:`text_date`: the first publication or update date the text states after a cue (« Publié le
  5 février 2026 », « Mis à jour le … », "Published March 3, 2025") in its opening or closing
  characters, or an ISO date in a header line.
  The date phrase is read by ``dateparser`` (BSD, maintained by Scrapinghub; already in the tree
  through trafilatura's htmldate): it knows French and English month names, ordinals (« 1er »,
  "3rd") and abbreviations (« févr. », "Feb."), which a hand-written reader would get wrong. Only a
  phrase naming day, month and year is read (relative dates such as « hier » would be the run's
  clock), and numeric forms such as 03/04/2025 are not (day and month order depend on who wrote it).
- :func:`docx_date_kept`, :func:`pdf_date_kept`: whether a format's own date is the document's. A
  DOCX whose created and modified stamps are equal and never revised was stamped in one write by a
  template or a generator (python-docx's default template carries 2013-12-23 whatever the day it is
  used): its date is when the file was made, not written, like a file clock. A PDF printed or
  rendered by a capture tool (a browser's print to PDF, an HTML printer) is dated by the capture.
"""

from __future__ import annotations

import datetime
import functools
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from typing import Any

from veille.resources import data_file

__all__ = ["DateRules", "docx_date_kept", "pdf_date_kept", "text_date"]

_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_NUMERIC_DAY = re.compile(r"\d{1,2}\s*[/.-]\s*\d{1,2}\s*[/.-]\s*\d{2,4}")
_PARSER_SETTINGS = {
    "REQUIRE_PARTS": ["day", "month", "year"],
    "STRICT_PARSING": True,
    "RETURN_AS_TIMEZONE_AWARE": False,
    "PARSERS": ["absolute-time"],  # never « hier », "2 days ago": those are the run's clock
}


@dataclass(frozen=True)
class DateRules:
    cues: tuple[str, ...]
    cue_reach: int
    head_chars: int
    tail_chars: int
    head_lines: int
    head_line_words: int
    min_year: int
    template_stamps: frozenset[str]
    capture_tools: tuple[str, ...]

    @classmethod
    @functools.cache
    def from_data(cls) -> DateRules:
        """``veille/data/dates.toml``; every entry carries its reason (``why``)."""
        raw = tomllib.loads(data_file("dates.toml").read_text(encoding="utf-8"))

        def value(section: str, key: str) -> Any:
            entry = raw[section][key]
            if not str(entry.get("why", "")).strip():
                raise ValueError(f"veille/data/dates.toml: [{section}].{key} has no reason ('why')")
            return entry["value"]

        return cls(
            cues=tuple(_fold(c) for c in value("text", "cues")),
            cue_reach=int(value("text", "cue_reach")),
            head_chars=int(value("text", "head_chars")),
            tail_chars=int(value("text", "tail_chars")),
            head_lines=int(value("text", "head_lines")),
            head_line_words=int(value("text", "head_line_words")),
            min_year=int(value("text", "min_year")),
            template_stamps=frozenset(value("format_metadata", "template_stamps")),
            capture_tools=tuple(t.lower() for t in value("format_metadata", "capture_tools")),
        )


def _fold(text: str) -> str:
    """Lowercase without accents (the cues as written in dates.toml)."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))


# Each unaccented letter of a cue matches its accented forms: the text is searched as written (no
# folded copy of a long document, offsets stay the text's own).
_ACCENTED = {"a": "aàâä", "c": "cç", "e": "eéèêë", "i": "iîï", "o": "oôö", "u": "uùûü"}


@functools.cache
def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    def one(cue: str) -> str:
        parts = []
        for char in cue:
            if char == " ":
                parts.append(r"\s+")
            elif char in _ACCENTED:
                parts.append(f"[{_ACCENTED[char]}]")
            else:
                parts.append(re.escape(char))
        return "".join(parts)

    alternatives = "|".join(one(c) for c in sorted(cues, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})", re.IGNORECASE)


def _parse_phrase(phrase: str, rules: DateRules) -> datetime.date | None:
    """The day a phrase ending with its year names (``dateparser``, French then English)."""
    if _NUMERIC_DAY.search(phrase):
        return None  # 03/04/2025: day and month order depend on who wrote it
    import dateparser  # ~0.3 s: paid only by a corpus whose texts carry a dated cue

    found = dateparser.parse(phrase, languages=["fr", "en"], settings=_PARSER_SETTINGS)  # type: ignore[arg-type]
    if found is None:
        return None
    day = found.date()
    years = {int(y) for y in _YEAR.findall(phrase)}
    return day if day.year in years and day.year >= rules.min_year else None


def _after_cue(text: str, end: int, rules: DateRules) -> datetime.date | None:
    """The full date within ``cue_reach`` characters after a cue: the shortest phrase ending with a
    year that names a day (« le mardi 5 février 2026 », "March 3, 2025"), or an ISO date."""
    reach = text[end : end + rules.cue_reach + len("2026")].split("\n", 1)[0]
    iso = _ISO.search(reach)
    for year in _YEAR.finditer(reach):
        if iso is not None and iso.start() <= year.start() < iso.end():
            return _iso_day(iso, rules)
        phrase = reach[: year.end()].strip(" :–—-,.\t")
        if phrase and (day := _parse_phrase(phrase, rules)) is not None:
            return day
    return None


def _iso_day(match: re.Match[str], rules: DateRules) -> datetime.date | None:
    try:
        day = datetime.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
    return day if day.year >= rules.min_year else None


def _header_day(text: str, rules: DateRules) -> datetime.date | None:
    """An ISO date alone in one of the first short lines (a note's or minutes' date line)."""
    lines = [line for line in text[: rules.head_chars].splitlines() if line.strip()][: rules.head_lines]
    for line in lines:
        found = _ISO.findall(line)
        if len(found) == 1 and len(line.split()) <= rules.head_line_words:
            match = _ISO.search(line)
            if match is not None and (day := _iso_day(match, rules)) is not None:
                return day
    return None


def text_date(text: str, rules: DateRules | None = None) -> datetime.date | None:
    """The first publication or update date ``text`` states after a cue, else an ISO date in a
    header line, else None (module docstring)."""
    rules = rules or DateRules.from_data()
    pattern = _cue_pattern(rules.cues)
    # The opening, then the closing lines (dates.toml: where documents say when they were written).
    tail_start = max(rules.head_chars, len(text) - rules.tail_chars)
    for part in (text[: rules.head_chars], text[tail_start:]):
        for match in pattern.finditer(part):
            if (day := _after_cue(part, match.end(), rules)) is not None:
                return day
    return _header_day(text, rules)


def _stamp(value: datetime.datetime) -> str:
    utc = value.astimezone(datetime.UTC) if value.tzinfo is not None else value
    return utc.replace(tzinfo=None, microsecond=0).isoformat()


def docx_date_kept(
    created: datetime.datetime | None, modified: datetime.datetime | None, revision: int | None
) -> str | None:
    """None when the core properties' creation date is the author's; else why it is not (French,
    for the reader's note)."""
    if created is None:
        return None
    rules = DateRules.from_data()
    if _stamp(created) in rules.template_stamps:
        return f"date {created.date().isoformat()} d'un modèle de document connu"
    if modified is not None and _stamp(created) == _stamp(modified) and (revision or 0) <= 1:
        return (
            f"création et modification à la même seconde ({created.date().isoformat()}) sans révision : "
            "date posée par un modèle ou un générateur"
        )
    return None


def pdf_date_kept(creator: str | None, producer: str | None) -> str | None:
    """None when the PDF's creation date is the author's; else why it is not (French)."""
    tools = DateRules.from_data().capture_tools
    for name in (creator, producer):
        folded = (name or "").lower()
        if any(tool in folded for tool in tools):
            return f"PDF produit par un outil de capture ({' '.join(str(name).split())[:60]}) : date de la capture"
    return None
