"""What follows (or precedes) a number: multipliers, currencies, percents, points, durations,
measures and counted nouns, read from ``veille/data/numbers.toml`` (see :mod:`veille.numbers`).

The word lists are data, one entry per generic convention of writing a quantity (French and English);
this module only reads them and matches a unit at a position of a text.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from typing import Literal

from veille.resources import data_file

__all__ = [
    "UNIT_KINDS",
    "Tail",
    "Unit",
    "UnitKind",
    "duration_seconds",
    "fold",
    "function_words",
    "read_prefix",
    "read_tail",
    "words",
]

UnitKind = Literal["currency", "percent", "points", "duration", "measure", "count"]
UNIT_KINDS: tuple[UnitKind, ...] = ("currency", "percent", "points", "duration", "measure", "count")


@dataclass(frozen=True)
class Unit:
    """What a number measures: ``kind`` and one canonical ``name`` per unit (``eur``, ``%``, ``pp``,
    ``s`` for every duration, ``byte`` for every size, ``gpu`` for « 12 GPU »), ``/per`` for rates."""

    kind: UnitKind
    name: str


@dataclass(frozen=True)
class Tail:
    """A unit read after a number: its end in the text, the multiplier and the factor to base units."""

    end: int
    multiplier: Decimal
    factor: Decimal
    unit: Unit | None
    minutes: int | None = None  # « 4 h 15 »: the minutes belong to the value


# Remembered per word (a pure function): the number reader folds every word around every figure of
# every passage the writer's verification reads, 47,000 calls in a warm night (issue 40 item 1).
# Bounded: a night's vocabulary fits.
_FOLDED_WORDS = 1 << 16


@lru_cache(maxsize=_FOLDED_WORDS)
def fold(word: str) -> str:
    """Lower case without accents (« Décembre » -> ``decembre``)."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _data() -> dict[str, object]:
    with data_file("numbers.toml").open("rb") as handle:
        return tomllib.load(handle)


def _table(name: str) -> dict[str, object]:
    table = _data()[name]
    if not isinstance(table, dict):
        raise ValueError(f"numbers.toml: [{name}] must be a table")
    return table


@cache
def words(section: str, key: str = "words") -> frozenset[str]:
    """A word list of numbers.toml (folded), e.g. ``words("months")``, ``words("not_counted", "fr")``."""
    values = _table(section).get(key, [])
    if not isinstance(values, list):
        raise ValueError(f"numbers.toml: [{section}] {key} must be a list of words")
    return frozenset(fold(str(v)) for v in values)


@cache
def function_words() -> frozenset[str]:
    """Words after which a number is not counting anything, French and English."""
    return words("not_counted", "fr") | words("not_counted", "en")


@cache
def _multipliers() -> dict[str, Decimal]:
    return {str(k): Decimal(str(v)) for k, v in _table("multipliers").items()}


@cache
def _currencies() -> dict[str, str]:
    return {fold(str(k)): str(v) for k, v in _table("currencies").items()}


@cache
def _durations() -> dict[str, Decimal]:
    return {fold(str(k)): Decimal(str(v)) for k, v in _table("durations").items()}


def duration_seconds(word: str) -> Decimal | None:
    """Seconds in the duration ``word`` names (« s », « seconde », "hour"), None when it names none."""
    return _durations().get(fold(word))


@cache
def _measures() -> dict[str, tuple[str, Decimal]]:
    out: dict[str, tuple[str, Decimal]] = {}
    for key, value in _table("measures").items():
        if not (isinstance(value, list) and len(value) == 2):
            raise ValueError(f"numbers.toml: [measures] {key} must be [base unit, factor]")
        out[fold(str(key))] = (str(value[0]), Decimal(str(value[1])))
    return out


def _phrases(section: str) -> list[str]:
    return sorted(words(section), key=len, reverse=True)  # longest first: « points de pourcentage »


_SP = "[ \u00a0\u202f\u2009]"
_WORD = re.compile(r"(?:[^\W\d_]|[€$£¥%°²³])[\w°²³/€$£¥.-]*", re.UNICODE)
_STOP = ".,;:!?)»]\"'’"
_MINUTES = re.compile(
    rf"{_SP}?(?P<m>[0-5]?\d)(?P<unit>{_SP}?(?:min|mn|minutes?)(?![^\W\d_]))?(?![\d.,]\d|\d)"
)
_ONE = Decimal(1)


def _after_space(text: str, pos: int) -> int:
    """Skip at most one space of any kind (« 12 % », « 12% »)."""
    return pos + 1 if pos < len(text) and re.match(_SP, text[pos]) else pos


def _currency_at(text: str, pos: int) -> tuple[str, int] | None:
    """An ISO code of a currency symbol or word starting at ``pos`` and not glued to a letter."""
    match = _WORD.match(text, pos)
    if match is None:
        return None
    raw = match.group(0)
    for size in range(len(raw), 0, -1):
        code = _currencies().get(fold(raw[:size]))
        end = pos + size
        glued = end < len(text) and (text[end].isalpha() or text[end].isdigit())
        if code and not glued:
            return code, end
    return None


def _rate(text: str, end: int, name: str) -> tuple[str, int]:
    """``/mois`` right after a unit: « 4 500 EUR/mois » -> ``eur/mois``."""
    match = re.match(r"/([^\W\d_][\w]*)", text[end:])
    if match is None:
        return name, end
    per = fold(match.group(1))
    per = next((k for k, v in _durations().items() if k == per and v), per)
    return f"{name}/{per}", end + match.end()


def _count_noun(raw: str) -> str | None:
    """A counted noun (« 7 pannes », « 12 GPU », "requests") in one singular folded spelling."""
    word = raw.rstrip(_STOP)
    if re.fullmatch(r"[a-zà-ÿ]{2,}(?:/[a-zà-ÿ]+)?", word):
        key = fold(word)
        if key in function_words() or key in words("months"):
            return None
    elif not re.fullmatch(r"[a-z]?[A-Z]{2,6}s?", word):
        return None  # a capitalised word is a name (« 3 Atlas »), not what is counted
    head, slash, per = fold(word).partition("/")
    if len(head) > 3 and head.endswith("s") and not head.endswith("ss"):
        head = head[:-1]
    return f"{head}{slash}{per}"


def read_tail(text: str, pos: int) -> Tail:
    """The multiplier and unit written after the number that ends at ``pos`` (both optional)."""
    end, multiplier = pos, _ONE
    start = _after_space(text, pos)
    for name in sorted(_multipliers(), key=len, reverse=True):
        stop = start + len(name)
        if text.startswith(name, start) and (
            stop >= len(text) or not text[stop].isalnum() or _currency_at(text, stop) is not None
        ):
            end, multiplier = stop, _multipliers()[name]
            break
    at = _after_space(text, end) if end == pos else end
    if end != pos and at < len(text) and _currency_at(text, at) is None:
        at = _after_space(text, end)  # « 1 705 M $ »
    folded = fold(text[at : at + 30])
    for phrase, kind in [(p, "percent") for p in _phrases("percent")] + [
        (p, "points") for p in _phrases("points")
    ]:
        stop = at + len(phrase)
        if folded.startswith(phrase) and (stop >= len(text) or not text[stop].isalnum()):
            unit = Unit(kind, "%" if kind == "percent" else "pp")  # type: ignore[arg-type]
            return Tail(stop, multiplier, _ONE, unit)
    currency = _currency_at(text, at)
    if currency is not None:
        name, stop = _rate(text, currency[1], currency[0])
        return Tail(stop, multiplier, _ONE, Unit("currency", name))
    match = _WORD.match(text, at)
    if match is None:
        return Tail(end, multiplier, _ONE, None)
    raw = match.group(0).rstrip(_STOP)
    key, stop = fold(raw), at + len(raw)
    head, _, per = key.partition("/")
    if key in _durations() or (per and head in _durations()):
        factor = _durations()[head]
        minutes = _MINUTES.match(text, stop) if factor == 3600 and not per else None
        after = read_tail(text, minutes.end()).unit if minutes and not minutes["unit"] else None
        if after is not None and after.kind != "count":
            minutes = None  # « 2 h 20 To »: 20 is a size, not minutes (« 5 h 10 retenu »: minutes)
        if minutes:
            return Tail(minutes.end(), multiplier, factor, Unit("duration", "s"), int(minutes["m"]))
        return Tail(stop, multiplier, factor, Unit("duration", f"s/{per}" if per else "s"))
    if (key in _measures() or head in _measures()) and not (raw.islower() and key in function_words()):
        # « 8 To » is a size, "8 to 12" a range: a unit spelt like a function word needs its capital.
        base, factor = _measures()[key] if key in _measures() else _measures()[head]
        if "/" in base or not per:
            return Tail(stop, multiplier, factor, Unit("measure", base))
        return Tail(stop, multiplier, factor, Unit("measure", f"{base}/{per}"))
    noun = _count_noun(raw) if at > pos else None  # « 12 GPU »; glued letters are an id (« 12GPU »)
    if noun is not None:
        return Tail(stop, multiplier, _ONE, Unit("count", noun))
    return Tail(end, multiplier, _ONE, None)


def read_prefix(text: str, pos: int) -> tuple[str, int] | None:
    """A currency written before the number at ``pos`` (« $1,705M », « € 12 », « USD 40 »): its
    code and where it starts."""
    before = text[max(0, pos - 5) : pos]
    match = re.search(rf"(?:US)?([$€£¥]){_SP}?$|\b(USD|EUR|GBP|CHF){_SP}$", before)
    if match is None:
        return None
    code = _currencies().get(fold(match.group(1) or match.group(2) or ""))
    return (code, pos - len(before) + match.start()) if code else None
