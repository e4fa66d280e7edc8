"""Figures of a sentence: extraction with their unit, values, one spelling per unit, rates
(« par site »), dates, counts and years (docs/offline-engine.md, Figures)."""

from __future__ import annotations

import re

from veille.numbers import read_numbers
from veille.offline import lexicon
from veille.offline.text import STOP_WORDS, fold

__all__ = [
    "date_key",
    "extract_dates",
    "extract_figures",
    "figure_unit",
    "figure_value",
    "is_count",
    "is_year",
    "rate_unit",
    "unit_key",
]


# Generic measurement units and multipliers (veille/data/lang): a figure keeps the unit that follows it.
_UNIT_SET = lexicon.words("units")
_NUMBER = r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?!\d)|\d+(?:[.,]\d+)*"
_FIGURE_RE = re.compile(
    rf"(?<![\w.,-])(?P<num>{_NUMBER})(?![\d-])"
    rf"(?P<tail>(?:[ \u00a0\u202f]?[%‰€$])|(?:[ \u00a0\u202f]?[A-Za-zÀ-ÿ°][\w°/²³.-]*(?!['’\w])"
    rf"(?:[ \u00a0\u202f][A-Za-zÀ-ÿ][\w/]*(?!['’\w]))?))?"
)
_YEAR_RE = re.compile(r"^(19|20)\d{2}$")


def _unit_length(tail: str) -> int:
    """Length of the prefix of ``tail`` that is a unit (``tokens/s``, `` M EUR``), else 0; a counted
    noun (``cycles``, ``pannes``) is one too: what a count counts is its unit."""
    end = 0
    for n, match in enumerate(re.finditer(r"\s*(\S+)", tail)):
        if n == 2:
            break
        word = match.group(1)
        clean = word.rstrip(".,;:!?)»")
        key = fold(clean)
        known = clean != "to" and _known_unit(clean)
        if not (known or clean[:1] in {"%", "‰", "€", "$"} or (n == 0 and _counted_noun(clean))):
            break
        end = match.start(1) + len(clean)
        if key not in _MULTIPLIERS:
            break
    return end


# Words that follow a number without being what it counts, and month names (veille/data/lang).
_NOT_COUNTED = lexicon.words("not_counted")
_MONTH_NUMBERS = {
    lexicon.fold_entry(w): int(number)
    for lang in lexicon.LANGS
    for number, names in lexicon.groups("months", lang).items()
    for w in names
}
_MONTH_WORDS = frozenset(_MONTH_NUMBERS)


def _counted_noun(word: str) -> bool:
    """A lower-case word (or a unit-like one such as ``dB``, ``req/s``) that is neither a function
    word, a month nor a capitalised name: ``5 000 cycles``, ``7 pannes``, ``50 000 requests``."""
    key = fold(word)
    if not re.fullmatch(r"[a-z]{2,}(?:/[a-z]+)?", key):
        return False
    if word[:1].isupper() and not word[1:2].isupper():
        return False  # « 3 Atlas »: a name, not a unit (« 38 dB » starts lower-case)
    return key not in STOP_WORDS and key not in _NOT_COUNTED and key not in _MONTH_WORDS


_MULTIPLIERS = frozenset(
    lexicon.fold_entry(w)
    for lang in ("common", *lexicon.LANGS)
    for w in lexicon.groups("units", lang).get("multipliers", ())
)


_MONTHS = "|".join(sorted({re.escape(w) for w in lexicon.entries("months")}))
_DATE_RE = re.compile(
    rf"(?<![\w-])(?:(?:1er|\d{{1,2}}) )?(?:{_MONTHS}) (?:19|20)\d{{2}}(?![\w-])", re.IGNORECASE
)


def extract_dates(text: str) -> list[str]:
    """Dates written out ('30 septembre 2031', 'mars 2030'), verbatim."""
    return list(dict.fromkeys(m.group(0) for m in _DATE_RE.finditer(text)))


def date_key(date: str) -> str:
    """'30 septembre 2031' -> '2031-09' (comparable with ISO dates' first 7 characters); '' if unknown."""
    folded = fold(date)
    year = re.search(r"(19|20)\d{2}", folded)
    month = next((_MONTH_NUMBERS[w] for w in re.findall(r"[a-z]+", folded) if w in _MONTH_NUMBERS), None)
    if not year or month is None:
        return ""
    return f"{year.group(0)}-{month:02d}"


def _known_unit(unit: str) -> bool:
    key = fold(unit.strip()).split()[0] if unit.strip() else ""
    return key in _UNIT_SET or key.split("/")[0] in _UNIT_SET


# Roles of the shared number reader (veille/numbers.py) that are never figures: « v1.2.3 »,
# « Python 3.12 », « ticket 4521 », list numbering, citation markers, numeric dates and times,
# ordinals (« 1er », « 95e »).
_NOT_FIGURES = frozenset({"version", "id", "list", "citation", "date", "ordinal"})
_PREFIX_RE = re.compile(r"^[-−–—$€£¥]+")  # a minus sign or a currency written first
_DASH_RANGE_RE = re.compile(r"\d[   ]?[-−–—][   ]?\d")


def extract_figures(text: str) -> list[str]:
    """Figures of a sentence, verbatim with their unit when one follows ('4 800 req/s', '$1,705M',
    '3 200-4 100 EUR', 'septembre 2031'); the number reader decides what is not a figure."""
    out: list[str] = extract_dates(text)
    covered = [(m.start(), m.end()) for m in _DATE_RE.finditer(text)]
    readings = read_numbers(text)
    for r in readings:
        if r.role == "figure" and r.high is not None and _DASH_RANGE_RE.search(r.text):
            covered.append((r.start, r.end))
            out.append(r.text)
    for match in _FIGURE_RE.finditer(text):
        start = match.start("num")
        if any(a <= start < b for a, b in covered):
            continue
        reading = next((r for r in readings if r.start <= start < r.end), None)
        if reading is not None and reading.role in _NOT_FIGURES:
            continue
        tail = match.group("tail") or ""
        unit_length = _unit_length(tail)
        if unit_length and is_year(match.group("num")) and not _known_unit(tail[:unit_length]):
            unit_length = 0  # « 2026 grid »: a year, not a count of grids
        end = match.end("num") + unit_length
        # « 4 h 15 », « 3 hours 20 minutes »: the reader reads the minutes into the duration.
        kind = reading.unit.kind if reading is not None and reading.unit is not None else ""
        duration = reading.end if kind == "duration" and reading is not None and reading.end > end else None
        if (
            reading is not None
            and reading.start < start
            and _PREFIX_RE.fullmatch(text[reading.start : start])
        ):
            start = reading.start  # « –7 °C », « $1,705M »: the sign and the currency belong to it
        figure = text[start : duration or end]
        if duration:
            covered.append((start, duration))  # its minutes are not another figure
        if figure not in out:
            out.append(figure)
    return out


def _number(figure: str) -> tuple[str, re.Match[str] | None]:
    """(sign or currency written first, the number's match after it)."""
    prefix = _PREFIX_RE.match(figure)
    head = prefix.group(0) if prefix else ""
    return head, re.compile(_NUMBER).match(figure, len(head))


# « 1,420 » alone: English grouping or a French decimal. Only a currency written first settles it.
_AMBIGUOUS_RE = re.compile(r"^[-−–—]?\d{1,3},\d{3}(?![\d,.])")


def figure_value(figure: str, text: str = "") -> float | None:
    """Value of a figure in base units as the number reader reads it ('5 h 30' -> 19 800 s); a year
    is its number; None for a range, or for « 1,420 » unless ``text``, its sentence, settles it."""
    if is_year(figure):
        return float(figure)
    if _AMBIGUOUS_RE.match(figure):
        if not text:
            return None
        figure_start = text.find(figure)
        readings = [r for r in read_numbers(text) if r.start <= figure_start < r.end]
    else:
        readings = read_numbers(figure)
    readings = [r for r in readings if r.role == "figure"]
    if not readings or readings[0].high is not None:
        return None
    return readings[0].value


# Spellings of one unit (« 3 heures » and « 4 h 20 » measure the same thing), French and English.
_SAME_UNIT = {
    lexicon.fold_entry(w): canonical
    for lang in ("common", *lexicon.LANGS)
    for canonical, spellings in lexicon.groups("unit_spellings", lang).items()
    for w in spellings
}


_PLURAL_AFTER = int(lexicon.weight("read_figures.plural_after"))


def unit_key(word: str) -> str:
    """One spelling per unit word, French and English, singular: ``heures``/``hours`` -> ``h``,
    ``jours``/``days`` -> ``jour``, ``cycles`` -> ``cycle``, ``€`` -> ``eur``."""
    word = fold(word)
    if word in _SAME_UNIT:
        return _SAME_UNIT[word]
    if len(word) > _PLURAL_AFTER and word.endswith("s") and not word.endswith("ss") and "/" not in word:
        singular = word[:-1]
        return _SAME_UNIT.get(singular, singular)
    return word


def figure_unit(figure: str) -> str:
    """Folded unit of a figure ('' when bare), one spelling per unit (:func:`unit_key`); the
    minutes of a duration (« 4 h 15 ») are part of its value, not of its unit."""
    currency, match = _number(figure)
    rest = figure[match.end() :] if match else figure
    rest = fold(
        re.sub(rf"^[ \u00a0\u202f]?[-\u2212\u2013\u2014][ \u00a0\u202f]?(?:{_NUMBER})", "", rest).strip()
    )
    if currency.strip("-−–—"):
        rest = f"{rest} {unit_key(currency.strip('-−–—'))}".strip()  # « $1,705M » -> ``m usd``
    head, _, tail = rest.partition(" ")
    head = unit_key(head) if head else head
    if head == "h" and re.fullmatch(r"\d{1,2}(?: (?:min|mn|minutes?))?", tail):
        tail = ""
    return f"{head} {tail}".strip()


# « par site », "per GB", « /mois » right after a figure: what the figure is counted per.
def _alternation(name: str, group: str) -> str:
    entries = {e for lang in lexicon.LANGS for e in lexicon.groups(name, lang).get(group, ())}
    return "|".join(re.escape(e) for e in sorted(entries, key=lambda e: (-len(e), e)))


_TAX = _alternation("tax_mentions", "vat")
_PER = _alternation("rate_words", "per")
_PER_ARTICLE = _alternation("rate_words", "articles")
_PER_RE = re.compile(
    rf"(?:[ \u00a0\u202f]+(?:{_TAX}))?"  # a tax mention before the « par »
    rf"[ \u00a0\u202f]*(?:/|(?:{_PER})[ \u00a0\u202f]+)(?:(?:{_PER_ARTICLE})[ \u00a0\u202f]+)?"
    r"([A-Za-zÀ-ÿ][\wÀ-ÿ-]*)"
)
_TAX_TAIL_RE = re.compile(rf" (?:{_TAX})$", re.IGNORECASE)


def rate_unit(text: str, figure: str) -> str:
    """The unit of ``figure`` in ``text`` with what it is counted per (« 9 jours par site », "3 days
    per site" -> ``jour/site``); the plain :func:`figure_unit` when nothing follows."""
    # A tax mention does not change what is counted (« 1 250 EUR HT par GPU », « 2 750 EUR par GPU »).
    unit = _TAX_TAIL_RE.sub("", figure_unit(figure))
    if not unit or "/" in unit:
        head, _, per = unit.partition("/")
        return f"{head}/{unit_key(per)}" if per else unit
    pos = text.find(figure)
    match = _PER_RE.match(text, pos + len(figure)) if pos >= 0 else None
    return f"{unit}/{unit_key(match.group(1))}" if match else unit


def is_count(figure: str) -> bool:
    """The figure's unit is a counted noun (« 7 pannes », « 5 000 cycles »), not a measurement unit."""
    _, match = _number(figure)
    rest = (figure[match.end() :] if match else figure).strip()
    return bool(rest) and not _known_unit(rest) and rest[:1] not in {"%", "‰", "€", "$"}


def is_year(figure: str) -> bool:
    return bool(_YEAR_RE.match(figure.strip()))
