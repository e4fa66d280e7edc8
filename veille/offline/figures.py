"""Figures of a sentence for the offline engine: extraction with their unit, values, units in one
spelling (French and English), rates (« par site »), dates, counts and years.

Pure and deterministic; the unit lists are generic measurement units, no corpus facts.
"""

from __future__ import annotations

import re

from veille.offline import lexicon
from veille.offline.text import STOP_WORDS, fold

__all__ = [
    "asked_quantity",
    "date_key",
    "extract_dates",
    "extract_figures",
    "figure_unit",
    "figure_value",
    "is_count",
    "is_year",
    "quantity_unit",
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
_ORDINAL_RE = re.compile(r"^(er|re|e|eme|ème|ère|nd|nde)\b", re.IGNORECASE)
_YEAR_RE = re.compile(r"^(19|20)\d{2}$")


def _unit_length(tail: str, *, model: bool = False) -> int:
    """Length of the prefix of ``tail`` that is a unit (``tokens/s``, `` M EUR``, ``GPU``...), else 0.
    A word that is not a known unit is still one when it reads as a counted noun (``cycles``,
    ``pannes``, ``requests``): what a count counts is its unit. Not after a ``model`` number
    (« Model 150 delivers », « Produit 6 restaure »): the word after it is a verb, not a unit."""
    end = 0
    for n, match in enumerate(re.finditer(r"\s*(\S+)", tail)):
        if n == 2:
            break
        word = match.group(1)
        clean = word.rstrip(".,;:!?)»")
        key = fold(clean)
        known = clean != "to" and (key in _UNIT_SET or key.split("/")[0] in _UNIT_SET)
        if not (
            known or clean[:1] in {"%", "‰", "€", "$"} or (n == 0 and not model and _counted_noun(clean))
        ):
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


def _after_name(text: str, start: int) -> bool:
    """The number at ``start`` follows a capitalised word: a model or version (« Server 7 »)."""
    before = text[:start].rstrip(" \u00a0\u202f")
    if len(before) == len(text[:start]):
        return False
    word = re.search(r"([A-Za-zÀ-ÿ][\wÀ-ÿ-]*)$", before)
    return bool(word and word.group(1)[:1].isupper())


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


_MONTHS = "|".join(
    sorted(
        {
            re.escape(w)
            for lang in lexicon.LANGS
            for names in lexicon.groups("months", lang).values()
            for w in names
        }
    )
)
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


_MINUTES_RE = re.compile(
    r"[ \u00a0\u202f](?P<min>[0-5]?\d)(?P<unit>[ \u00a0\u202f](?:min|mn|minutes?)\b)?(?![\d.,]\d|\d)"
)


def _duration_tail(text: str, end: int, unit: str) -> int | None:
    """End of the minutes after an hour figure (« 4 h 15 », « 3 hours 20 minutes »), else None.
    After ``h`` the minutes may stand alone unless a unit follows them (« 2 h 20 To » is not a
    duration); after a spelt-out hour they need their unit."""
    word = fold(unit.strip())
    if _SAME_UNIT.get(word, word) != "h":
        return None
    match = _MINUTES_RE.match(text, end)
    if not match:
        return None
    if match.group("unit"):
        return match.end()
    if word != "h":
        return None
    following = re.match(r"[ \u00a0\u202f]*([^\s.,;:!?)»]+)", text[match.end() :])
    if following and (_known_unit(following.group(1)) or fold(following.group(1)) in _UNIT_SET):
        return None
    return match.end()


def extract_figures(text: str) -> list[str]:
    """Figures of a sentence, verbatim with their unit when one follows: '4 800 req/s', '18 %',
    '2027'; written-out dates ('septembre 2031') come whole."""
    out: list[str] = extract_dates(text)
    covered = [(m.start(), m.end()) for m in _DATE_RE.finditer(text)]
    for match in _FIGURE_RE.finditer(text):
        if any(a <= match.start() < b for a, b in covered):
            continue
        tail = match.group("tail") or ""
        if tail and not tail[0].isspace() and _ORDINAL_RE.match(tail):
            continue  # "1er", "95e": ordinals are not measurements
        unit_length = _unit_length(tail, model=_after_name(text, match.start("num")))
        if unit_length and is_year(match.group("num")) and not _known_unit(tail[:unit_length]):
            unit_length = 0  # « 2026 grid »: a year, not a count of grids
        end = match.end("num") + unit_length
        duration = _duration_tail(text, end, tail[:unit_length])
        figure = text[match.start("num") : duration or end]  # « 4 h 15 », « 3 hours 20 minutes »
        if duration:
            covered.append((match.start("num"), duration))  # its minutes are not another figure
        if figure not in out:
            out.append(figure)
    return out


def figure_value(figure: str) -> float | None:
    """Numeric value of a figure ('4 800 req/s' -> 4800.0, '1,5 Go' -> 1.5, '5 h 30' -> 5.5);
    None for versions."""
    match = re.match(_NUMBER, figure)
    if not match:
        return None
    minutes = _HOURS_MINUTES_RE.match(figure[match.end() :])
    if minutes and "." not in match.group(0) and "," not in match.group(0):
        return float(re.sub(r"[ \u00a0\u202f]", "", match.group(0))) + int(minutes.group(1)) / 60
    num = re.sub(r"[ \u00a0\u202f]", "", match.group(0))
    if num.count(".") + num.count(",") > 1:
        return None  # a version such as 2.7.1
    try:
        return float(num.replace(",", "."))
    except ValueError:
        return None


_HOURS_MINUTES_RE = re.compile(
    r"\s*(?:h|heures?|hours?|hrs?)\s+(\d{1,2})(?:\s*(?:min|mn|minutes?))?$", re.IGNORECASE
)

# Spellings of one unit (« 3 heures » and « 4 h 20 » measure the same thing), French and English.
_SAME_UNIT = {
    lexicon.fold_entry(w): canonical
    for lang in ("common", *lexicon.LANGS)
    for canonical, spellings in lexicon.groups("unit_spellings", lang).items()
    for w in spellings
}


def unit_key(word: str) -> str:
    """One spelling per unit word, French and English, singular: ``heures``/``hours`` -> ``h``,
    ``jours``/``days`` -> ``jour``, ``cycles`` -> ``cycle``, ``€`` -> ``eur``."""
    word = fold(word)
    if word in _SAME_UNIT:
        return _SAME_UNIT[word]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and "/" not in word:
        singular = word[:-1]
        return _SAME_UNIT.get(singular, singular)
    return word


def figure_unit(figure: str) -> str:
    """Folded unit of a figure ('' when bare), one spelling per unit (:func:`unit_key`); the
    minutes of a duration (« 4 h 15 ») are part of its value, not of its unit."""
    match = re.match(_NUMBER, figure)
    rest = fold((figure[match.end() :] if match else figure).strip())
    head, _, tail = rest.partition(" ")
    head = unit_key(head) if head else head
    if head == "h" and re.fullmatch(r"\d{1,2}(?: (?:min|mn|minutes?))?", tail):
        tail = ""
    return f"{head} {tail}".strip()


# « par site », "per GB", « /mois » right after a figure: what the figure is counted per.
_PER_RE = re.compile(
    r"(?:[ \u00a0\u202f]+(?:HT|TTC|hors taxes?|excl\.? VAT))?"  # a tax mention before the « par »
    r"[ \u00a0\u202f]*(?:/|(?:per|par)[ \u00a0\u202f]+)(?:an?[ \u00a0\u202f]+|une?[ \u00a0\u202f]+)?"
    r"([A-Za-zÀ-ÿ][\wÀ-ÿ-]*)"
)


def rate_unit(text: str, figure: str) -> str:
    """The unit of ``figure`` as stated in ``text``, with what it is counted per: « 9 jours par
    site » and "3 days per site" -> ``jour/site``, « 4 500 EUR/mois » and « 4 500 EUR par mois »
    -> ``eur/mois``; the plain :func:`figure_unit` when nothing follows."""
    # A tax mention does not change what is counted (« 1 250 EUR HT par GPU », « 2 750 EUR par GPU »).
    unit = re.sub(r" (?:ht|hors taxes?)$", "", figure_unit(figure))
    if not unit or "/" in unit:
        head, _, per = unit.partition("/")
        return f"{head}/{unit_key(per)}" if per else unit
    pos = text.find(figure)
    match = _PER_RE.match(text, pos + len(figure)) if pos >= 0 else None
    return f"{unit}/{unit_key(match.group(1))}" if match else unit


def is_count(figure: str) -> bool:
    """The figure's unit is a counted noun (« 7 pannes », « 5 000 cycles »), not a measurement unit."""
    match = re.match(_NUMBER, figure)
    rest = (figure[match.end() :] if match else figure).strip()
    return bool(rest) and not _known_unit(rest) and rest[:1] not in {"%", "‰", "€", "$"}


def is_year(figure: str) -> bool:
    return bool(_YEAR_RE.match(figure.strip()))


# What a question calls a quantity, and the units that measure it (veille/data/lang): « prix »
# is answered by an amount in a currency, « temps » by a duration.
_QUANTITY_WORDS: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (
        frozenset(
            lexicon.fold_entry(w)
            for lang in lexicon.LANGS
            for w in lexicon.groups("quantities", lang).get(q, ())
        ),
        frozenset(lexicon.groups("quantity_units", "common")[q]),
    )
    for q in lexicon.groups("quantity_units", "common")
)
_ASKED_PER_RE = re.compile(r"^(?:par|per)\s+(?:an?\s+|une?\s+)?([a-z][\w-]*)")


def asked_quantity(aspect: str) -> tuple[frozenset[str], str]:
    """The units that answer an aspect a question lists, and what they are counted per: « prix par
    pack » -> ({eur, usd, …}, ``pack``), « temps de charge » -> (durations, ''), « garantie » ->
    (∅, ''). A price is answered by a price, whatever words the answering sentence uses."""
    words = re.findall(r"[a-z0-9'-]+", fold(aspect))
    for n, word in enumerate(words):
        for names, units in _QUANTITY_WORDS:
            if word in names:
                per = _ASKED_PER_RE.match(" ".join(words[n + 1 :]))
                return units, unit_key(per.group(1)) if per else ""
    return frozenset(), ""


def quantity_unit(text: str, figure: str) -> tuple[str, str]:
    """(unit, counted per) of ``figure`` in ``text``: « 9 EUR par pack » -> (``eur``, ``pack``)."""
    head, _, per = rate_unit(text, figure).partition("/")
    return head.split()[0] if head else "", per
