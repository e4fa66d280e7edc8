"""One number reader for French and English text, shared by the graders and the offline engine.

:func:`read_numbers` returns every number of a text as a typed :class:`Reading` with its span, its
value in base units (multiplier and unit factor applied: « 3,2 M€ » reads 3 200 000 EUR, « 2 h »
7 200 s; a percentage stays in points), its :class:`~veille.numberunits.Unit` and its role. Only
``role == "figure"`` is a quantity: years, dates and times, versions (« Orvet 2.6 », v1.2.3), ids
(« ticket 4521 », « COVID-19 », « #12 »), ordinals, list numbering and citation markers are read
and labelled, never figures.

Separators, settled in this order:

1. Unambiguous forms: spaces of any kind (space, U+00A0, U+202F, U+2009) or an apostrophe between
   groups of three digits group thousands (« 1 705,5 »); several commas (``1,705,000``) or several
   dots (``1.705.000``) group; with both a comma and a dot the last one is the decimal separator
   (``1,705.5``, ``1.705,5``); a single separator followed by other than exactly three digits, or
   after a leading zero, is a decimal separator (``9,91``, ``0,705``, ``1.5``).
2. ``d,ddd`` (a comma then exactly three digits) is **ambiguous**: grouping in English style
   (``1,705`` = 1705), a decimal in French style (``1,705`` = 1.705). It is grouping after a currency
   written first (« $1,705M », « £12,500 »: the English order); else the text's own style decides —
   a text whose other numbers only show decimal dots is English style, one whose other numbers only
   show decimal commas is French style; when the text shows both or neither, its language does
   (French function words outnumbering English ones, else ``default_lang``). ``d.ddd`` is a decimal
   unless the text shows continental grouping (``1.705.000`` or ``1.705,5``) and no decimal dot.
   The other reading is kept in :attr:`Reading.alternative`.

Ranges « 8 500-11 000 EUR », « 8500-11000 EUR », « 10-15 % », « 8 à 12 M€ » are one reading with
``value`` the low end and ``high`` the high end; the unit and multiplier written once apply to both.
A dash or minus sign before a number that does not end a range is a minus sign (« –3,2 M€ » is
−3 200 000 EUR); a hyphen glued to a letter is part of an id.

Why hand-written: Babel's ``parse_decimal`` (already a dependency) converts one token once its
locale is known and refuses ordinary spaces as French grouping; price-parser reads one price per
string with an English bias; quantulum3 is English-only (no « 1 705,5 », « M€ », « Md ») and ships a
classifier. None finds numbers in running French text nor settles ``1,705`` from context. Babel
formats the property tests' inputs in CLDR styles (tests/test_numbers.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from veille.numberunits import Tail, Unit, fold, function_words, read_prefix, read_tail, words

__all__ = ["Reading", "Role", "Unit", "compatible", "key_figures", "read_numbers", "text_style"]

Role = Literal["figure", "year", "date", "version", "id", "ordinal", "list", "citation"]

_SP = "[ \u00a0\u202f\u2009]"
_GROUP = "[ \u00a0\u202f\u2009'’]"
_CORE = re.compile(
    rf"(?<![\w.,'’/])(?:\d{{1,3}}(?:{_GROUP}\d{{3}})+(?:[.,]\d+)?"
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?"
    r"|\d{1,3}(?:\.\d{3})+(?:,\d+)?"
    r"|\d+(?:[.,]\d+)?)(?!\d|[.,]\d)"
)
_DASHES = "-\u2212\u2013\u2014\u2010\u2011"
_RANGE = re.compile(rf"{_SP}?[{_DASHES}]{_SP}?(?=\d)|{_SP}(?:à|a|to){_SP}(?=\d)")
_ORDINAL = re.compile(r"(?:er|re|ère|ere|e|ème|eme|nd|nde|rd|st|th)(?![^\W\d_])")
_MASKS: tuple[tuple[Role, re.Pattern[str]], ...] = (
    ("citation", re.compile(r"\[\d+(?:\s*[,;–-]\s*\d+)*\]")),
    ("list", re.compile(r"^[ \t]*(?:[-*•][ \t]+)?\d+[.)](?=[ \t])", re.MULTILINE)),
    ("date", re.compile(r"(?<![\w.])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?(?![\w])")),
    ("date", re.compile(r"(?<![\w.,])\d{1,2}[/.]\d{1,2}[/.]\d{2,4}(?![\w.,]?\d)")),
    ("date", re.compile(r"(?<![\w.,:])\d{1,2}:\d{2}(?::\d{2})?(?![\w:])")),
    ("version", re.compile(r"(?<![\w.])[vV]\d+(?:\.\d+)*(?![\w]|\.\d)")),
    ("version", re.compile(r"(?<![\w.,])(?!\d{1,3}(?:\.\d{3})+(?![\d.]))\d+(?:\.\d+){2,}(?![\w]|\.\d)")),
)
_MONTH_WORD = re.compile(r"(?<![\w])[^\W\d_]{3,}\.?")
_DAY_BEFORE = re.compile(rf"(?:1er|\d{{1,2}}){_SP}$")
_AFTER_MONTH = re.compile(rf"{_SP}(?:\d{{1,2}}(?:,{_SP}?\d{{4}})?|\d{{4}})(?!\d)")
# A name before a number, dotted parts included (« Node.js 21 », « ASP.NET 8 »): the number is
# the name's version, not a count of what follows it (« Node.js 21 release »).
_NAME_BEFORE = re.compile(rf"([^\W\d_][\w-]*(?:\.[^\W\d_][\w-]*)*){_SP}$")


@dataclass(frozen=True)
class Reading:
    """A number of a text: ``text[start:end]``, its value in base units (the low end of a range,
    ``high`` its high end), unit, role, and how it was written."""

    text: str
    start: int
    end: int
    value: float
    unit: Unit | None
    role: Role
    high: float | None = None
    decimal: bool = False  # written with a decimal part
    grouped: bool = False  # written with thousands separators
    multiplier: float = 1.0
    alternative: float | None = None  # the other reading of an ambiguous « 1,705 » / « 1.705 »

    @property
    def values(self) -> tuple[float, ...]:
        """The value, or both ends of a range."""
        return (self.value,) if self.high is None else (self.value, self.high)

    @property
    def is_key(self) -> bool:
        """A key figure in the seed's sense: a decimal, a percentage or points, or an amount (a
        currency, a multiplier or thousands grouping); never a year, date, version or id."""
        if self.role != "figure":
            return False
        kind = self.unit.kind if self.unit else None
        return (
            self.decimal or self.grouped or self.multiplier != 1 or kind in {"currency", "percent", "points"}
        )


def compatible(expected: Unit | None, found: Unit | None) -> bool:
    """Can ``found`` be the figure ``expected``? Same unit (one name per unit: « 2 h » and « 120 min »
    are both seconds), or a bare number for an amount, a duration, a measure or a count (« 1 700 M »
    for « 1 705 M$ », as the seed accepts). A percentage is never bare, nor points a percentage."""
    if expected is None or found is None:
        other = found if expected is None else expected
        return other is None or other.kind not in {"percent", "points"}
    return expected == found


@dataclass(frozen=True)
class _Style:
    comma_groups: bool  # « 1,705 » is 1705
    dot_groups: bool  # « 1.705 » is 1705


_COMMA_DECIMAL = re.compile(r"(?<![\d,.])\d+,(?:\d{1,2}|\d{4,})(?![\d,.])|\d\.\d{3},\d")
_DOT_DECIMAL = re.compile(r"(?<![\d,.])\d+\.(?:\d{1,2}|\d{4,})(?![\d,.])|\d,\d{3}\.\d|\d,\d{3},\d{3}")
_CONTINENTAL = re.compile(r"\d\.\d{3}\.\d{3}|\d\.\d{3},\d")


def _language(text: str, default_lang: str) -> str:
    tokens = [fold(t) for t in re.findall(r"[^\W\d_]+", text[:20000])]
    french = sum(t in words("language", "fr") for t in tokens)
    english = sum(t in words("language", "en") for t in tokens)
    return "fr" if french > english else "en" if english > french else default_lang


def text_style(text: str, default_lang: str = "fr") -> _Style:
    """How ambiguous separators read in ``text`` (see the module docstring, step 2)."""
    comma_decimal = _COMMA_DECIMAL.search(text) is not None
    dot_decimal = _DOT_DECIMAL.search(text) is not None
    # The text's other numbers first; its language only when they show both styles or neither.
    comma_groups = dot_decimal if dot_decimal != comma_decimal else _language(text, default_lang) == "en"
    return _Style(comma_groups=comma_groups, dot_groups=bool(_CONTINENTAL.search(text)) and not dot_decimal)


def _parse(token: str, style: _Style, english_first: bool) -> tuple[Decimal, bool, bool, Decimal | None]:
    """(value, decimal part?, grouped?, other reading) of one number token."""
    compact = re.sub(_GROUP, "", token)
    grouped = compact != token
    commas, dots = compact.count(","), compact.count(".")
    if commas and dots:
        last = "," if compact.rfind(",") > compact.rfind(".") else "."
        other = "." if last == "," else ","
        return Decimal(compact.replace(other, "").replace(last, ".")), True, True, None
    if commas > 1 or dots > 1:
        return Decimal(compact.replace(",", "").replace(".", "")), False, True, None
    if grouped:
        return Decimal(compact.replace(",", ".")), bool(commas or dots), True, None
    sep = "," if commas else "." if dots else ""
    if not sep:
        return Decimal(compact), False, False, None
    head, tail = compact.split(sep)
    as_decimal = Decimal(f"{head}.{tail}")
    if len(tail) != 3 or head.startswith("0"):
        return as_decimal, True, False, None
    as_group = Decimal(head + tail)
    groups = style.comma_groups or english_first if sep == "," else style.dot_groups
    if groups:
        return as_group, False, True, as_decimal
    return as_decimal, True, False, as_group


def _masks(text: str) -> Iterator[tuple[Role, int, int]]:
    for role, pattern in _MASKS:
        for match in pattern.finditer(text):
            yield role, match.start(), match.end()
    for match in _MONTH_WORD.finditer(text):
        key = fold(match.group(0).rstrip("."))
        if key not in words("months"):
            continue
        day = _DAY_BEFORE.search(text, 0, match.start())
        after = _AFTER_MONTH.match(text, match.end())
        if after or (day and key not in {"may", "mars"}):
            yield "date", day.start() if day else match.start(), after.end() if after else match.end()


def _role_before(text: str, start: int) -> Role | None:
    """« ticket 4521 », « version 2.6 », « #12 », « COVID-19 »: the words before make it a name."""
    before = text[max(0, start - 40) : start]
    if before.rstrip(" \u00a0\u202f").endswith(("#", "№", "n°", "N°")) or re.search(
        rf"\b[nN]o\.?{_SP}?$", before
    ):
        return "id"
    if before and before[-1] in _DASHES and len(before) > 1 and (before[-2].isalpha() or before[-2] == "_"):
        return "id"
    name = _NAME_BEFORE.search(before)
    if name and fold(name.group(1)) in words("naming"):
        return "version" if fold(name.group(1)) in {"version", "v", "release"} else "id"
    return None


def _after_name(text: str, start: int) -> bool:
    """The number follows a capitalised word that is not a function word: a name (« Orvet 2.6 »)."""
    name = _NAME_BEFORE.search(text[max(0, start - 40) : start])
    if not name or not name.group(1)[:1].isupper():
        return False
    key = fold(name.group(1))
    return key not in function_words() and key not in words("language", "fr") | words("language", "en")


class _Reader:
    def __init__(self, text: str, default_lang: str) -> None:
        self.text = text
        self.style = text_style(text, default_lang)

    def number(self, match: re.Match[str]) -> tuple[Decimal, bool, bool, Decimal | None, int]:
        """The token's value and form, with the sign before it applied; and the reading's start."""
        text, start = self.text, match.start()
        prefix = read_prefix(text, start)
        value, decimal, grouped, other = _parse(match.group(0), self.style, prefix is not None)
        sign_at = prefix[1] if prefix else start
        if sign_at > 0 and text[sign_at - 1] in _DASHES + "+":
            left = text[sign_at - 2] if sign_at > 1 else " "
            if not left.isalnum():
                if text[sign_at - 1] != "+":
                    value, other = -value, (-other if other is not None else None)
                sign_at -= 1
        return value, decimal, grouped, other, min(sign_at, prefix[1] if prefix else start)

    def reading(self, match: re.Match[str]) -> tuple[Reading, int]:
        text = self.text
        value, decimal, grouped, other, start = self.number(match)
        role: Role | None = _role_before(text, start)
        if role is None and _ORDINAL.match(text, match.end()):
            role = "ordinal"
        # « Orvet 2.6 » is a version, « CVSS 8,1 » a score: versions are written with dots.
        named = role is None and "," not in match.group(0) and _after_name(text, start)
        tail = read_tail(text, match.end())
        noun = tail.unit is not None and tail.unit.kind == "count" and "/" not in tail.unit.name
        if noun and (named or decimal):
            # « Produit 6 restaure », « CVSS 8,1 reste »: a verb, not what is counted (one counts
            # in whole numbers); a rate keeps its unit (« Débit 1180 tokens/s », « 2,5 req/s »).
            tail = Tail(match.end(), tail.multiplier, tail.factor, None)
        high: Decimal | None = None
        end = tail.end
        upper = self.upper(tail, value, decimal or grouped) if role is None else None
        if upper is not None:
            tail, high, h_decimal, h_grouped = upper
            end = tail.end
            decimal, grouped = decimal or h_decimal, grouped or h_grouped
        unit = tail.unit
        prefix = read_prefix(text, match.start())
        if prefix and unit is None:
            unit = Unit("currency", prefix[0])
        if role is None:
            role = self.role(value, decimal, grouped, tail, unit, named, start)
        scale = tail.multiplier * tail.factor

        def based(v: Decimal, minutes: int | None) -> float:
            return float(v * scale + (Decimal(minutes * 60) if minutes else 0))

        reading = Reading(
            text=text[start:end],
            start=start,
            end=end,
            value=based(value, tail.minutes if high is None else None),
            unit=unit,
            role=role,
            high=based(high, tail.minutes) if high is not None else None,
            decimal=decimal,
            grouped=grouped,
            multiplier=float(tail.multiplier),
            alternative=float(other * scale) if other is not None else None,
        )
        return reading, end

    def upper(self, tail: Tail, low: Decimal, formatted: bool) -> tuple[Tail, Decimal, bool, bool] | None:
        """The high end of a range starting with ``low`` (« 8 500-11 000 EUR », « 8 à 12 M€ »): its
        tail (shared by both ends), value and form; None when what follows is no range."""
        joined = _RANGE.match(self.text, tail.end)
        nxt = _CORE.match(self.text, joined.end()) if joined else None
        if nxt is None:
            return None
        value, decimal, grouped, _, _ = self.number(nxt)
        h_tail = read_tail(self.text, nxt.end())
        own = tail.unit is not None or tail.multiplier != 1
        if own and (tail.unit, tail.multiplier) != (h_tail.unit, h_tail.multiplier):
            return None  # « 12 % - 3 GPU »: two figures
        if abs(low) > abs(value) or _yearish(low, formatted, False) != _yearish(value, decimal, grouped):
            return None  # « en 2024 à 150 sites »: no range goes down, nor from a year to a count
        return h_tail, value, decimal, grouped

    def role(
        self,
        value: Decimal,
        decimal: bool,
        grouped: bool,
        tail: Tail,
        unit: Unit | None,
        named: bool,
        start: int,
    ) -> Role:
        measured = (unit is not None and (unit.kind != "count" or "/" in unit.name)) or tail.multiplier != 1
        if named and not measured and not grouped:
            return "version" if decimal else "id"
        if _yearish(value, decimal, grouped) and not measured and self.text[start] != "-":
            plural = unit is not None and self.text[: tail.end].rstrip(".,;:!?").endswith(("s", "x"))
            if not plural:
                return "year"
        return "figure"


def _yearish(value: Decimal, decimal: bool, grouped: bool) -> bool:
    return not decimal and not grouped and 1800 <= value <= 2199 and value == value.to_integral_value()


def read_numbers(text: str, default_lang: str = "fr") -> list[Reading]:
    """Every number of ``text``, in order, each with its role (see the module docstring)."""
    reader = _Reader(text, default_lang)
    masked = sorted(_masks(text), key=lambda m: (m[1], -m[2]))
    out: list[Reading] = []
    covered_until = -1
    for role, start, end in masked:
        if start >= covered_until:
            first = re.search(r"\d+", text[start:end])
            value = float(first.group(0)) if first else 0.0
            out.append(Reading(text[start:end], start, end, value, None, role))
            covered_until = end
    spans = [(r.start, r.end) for r in out]
    pos = 0
    while (match := _CORE.search(text, pos)) is not None:
        if any(a <= match.start() < b for a, b in spans):
            pos = match.end()
            continue
        reading, pos = reader.reading(match)
        out.append(reading)
    return sorted(out, key=lambda r: r.start)


def key_figures(text: str, default_lang: str = "fr") -> list[Reading]:
    """The key figures of a reference text: decimals, percentages, points and amounts."""
    return [r for r in read_numbers(text, default_lang) if r.is_key]
