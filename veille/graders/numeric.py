"""Numeric grader (seed 002): are the reference's key figures in the response?

Each key figure of the reference is matched to the closest number of the response (after unit
harmonisation); relative gap < 1 % → 1 point, < 5 % → 0.5, else 0; the score is the mean. A
reference without key figures gets no score (None, never 0); a response without numbers gets 0.

Number reading, French and English:

- Thousands groups separated by a space, a non-breaking space (U+00A0), a narrow no-break space
  (U+202F) or a thin space (U+2009): ``1 705`` = 1705. Only groups of exactly three digits after a
  1–3 digit head are joined, so ``en 2024 150 sites`` stays 2024 and 150.
- A single comma or a single dot is a decimal separator (``9,91`` = ``9.91``; ``1,705 B`` = 1.705
  billion, as the seed requires). Repeated commas or dots are thousands separators
  (``1,705,000``, ``1.705.000``); with both, the last one is the decimal separator (``1,705.5``,
  ``1.705,5``).
- Multipliers: k/K = 10³; M, Mn, million(s) = 10⁶; Md, Mds, Mrd, milliard(s), B, Bn, bn,
  billion(s) = 10⁹ (``billion`` read the English way). So ``1 705 M`` and ``1,705 B`` are equal.
- ``%`` (or ``pour cent``/``percent``) marks a percentage; the value stays in points (9.91).
- Currency ($, €, £, USD, EUR, dollars, euros), before or after, is recorded in the details but not
  used for matching ("kept aside").
- Ignored: citation markers ``[3]``, list numbering (``1.`` / ``2)`` at the start of a line),
  numbers glued to letters or hyphens (``v2``, ``gemini-2.5``), and dates (``2024-03-15``, ``15/03/2024``).

Key figures of a reference text are decimals, percentages and amounts (a multiplier, a currency or
thousands grouping); plain integers such as years or counts are not key figures. When the
figures are given explicitly (``facts.yaml`` ``figures`` in the flow), a string that starts with a
single number is that quantity whatever its form (``12 GPU``); other strings (a version ``3.4.2``, a
date ``décembre 2029``) are checked verbatim, since a relative gap is meaningless for them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from veille.graders.base import Grader, GraderResult, Sample

__all__ = [
    "FULL_GAP",
    "HALF_GAP",
    "Figure",
    "NumericGrader",
    "contains_verbatim",
    "extract_numbers",
    "figures_from_strings",
    "key_figures",
    "score_figures",
]

FULL_GAP = 0.01  # relative gap below which a figure earns the full point
HALF_GAP = 0.05  # relative gap below which it earns half a point

_SPACE = "[ \u00a0\u202f\u2009]"
_NUMBER = (
    rf"\d{{1,3}}(?:{_SPACE}\d{{3}})+(?:[.,]\d+)?"  # 1 705 / 1 705,5
    r"|\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?"  # 1,705,000(.5)
    r"|\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?"  # 1.705.000(,5)
    r"|\d{1,3}(?:,\d{3})+\.\d+"  # 1,705.5
    r"|\d{1,3}(?:\.\d{3})+,\d+"  # 1.705,5
    r"|\d+(?:[.,]\d+)?"  # 1705 / 9,91 / 9.91
)
_CURRENCY = r"\$|€|£|USD|EUR|GBP|dollars?|euros?"
_MULTIPLIERS: dict[str, float] = {
    "k": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "md": 1e9,
    "mds": 1e9,
    "mrd": 1e9,
    "mrds": 1e9,
    "milliard": 1e9,
    "milliards": 1e9,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "billions": 1e9,
}
_NOT_LETTER = r"(?![^\W\d_])"
_FIGURE = re.compile(
    rf"(?:(?P<cur_before>{_CURRENCY})\s?)?"
    r"(?<![\w.,\-/])"  # not glued to a word, a hyphen or another number
    r"(?P<sign>[-−](?=\d))?"
    rf"(?P<num>{_NUMBER})(?![\d])(?![.,]\d)"
    rf"(?:{_SPACE}?(?P<mult>milliards?|millions?|billions?|Mrds?|Mds?|Mn|bn|Bn|[kKMB]){_NOT_LETTER})?"
    rf"(?:{_SPACE}?(?P<cur_after>{_CURRENCY}){_NOT_LETTER})?"
    rf"(?:{_SPACE}?(?P<pct>%|pour{_SPACE}cent\b|percent\b))?"
)
_IGNORED = re.compile(
    r"\[\d+(?:\s*[,;]\s*\d+)*\]"  # citation markers [3], [1, 2]
    r"|^\s*\d+[.)](?=\s)"  # list numbering at the start of a line
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",  # dates
    re.MULTILINE,
)


@dataclass(frozen=True)
class Figure:
    """A number read from text, in base units (a percentage stays in points)."""

    text: str
    value: float
    percent: bool
    currency: str | None
    is_key: bool  # decimal, percentage or amount (see module docstring)


def _parse_number(raw: str) -> tuple[float, bool]:
    """Return the value of a matched number and whether it has a decimal part or separators."""
    compact = re.sub(_SPACE, "", raw)
    grouped = compact != raw
    commas, dots = compact.count(","), compact.count(".")
    if commas and dots:
        decimal = "," if compact.rfind(",") > compact.rfind(".") else "."
        thousands = "." if decimal == "," else ","
        compact = compact.replace(thousands, "").replace(decimal, ".")
        return float(compact), True
    if commas > 1 or dots > 1:
        return float(compact.replace(",", "").replace(".", "")), True
    if commas == 1 or dots == 1:
        return float(compact.replace(",", ".")), True
    return float(compact), grouped


def extract_numbers(text: str) -> list[Figure]:
    """Every number of ``text`` except citation markers, list numbering, dates and glued digits."""
    cleaned = _IGNORED.sub(" ", text)
    figures: list[Figure] = []
    for match in _FIGURE.finditer(cleaned):
        value, formatted = _parse_number(match["num"])
        mult = match["mult"]
        if mult:
            value *= _MULTIPLIERS[mult.lower()]
        if match["sign"]:
            value = -value
        currency = match["cur_before"] or match["cur_after"]
        percent = match["pct"] is not None
        figures.append(
            Figure(
                text=match.group(0).strip(),
                value=value,
                percent=percent,
                currency=currency,
                is_key=formatted or percent or bool(mult) or bool(currency),
            )
        )
    return figures


def key_figures(reference: str) -> list[Figure]:
    """The key figures of a reference text: decimals, percentages and amounts."""
    return [f for f in extract_numbers(reference) if f.is_key]


def _gap(expected: float, got: float) -> float:
    if expected == 0:
        return 0.0 if got == 0 else math.inf
    return abs(got - expected) / abs(expected)


def _points(gap: float) -> float:
    if gap < FULL_GAP:
        return 1.0
    if gap < HALF_GAP:
        return 0.5
    return 0.0


def score_figures(
    expected: Sequence[Figure | str], response: str
) -> tuple[float | None, list[dict[str, object]]]:
    """Mean points of ``expected`` figures against ``response`` (None if nothing is expected).

    A :class:`Figure` is matched numerically to the closest number; a string (a figure that is
    not a single quantity, e.g. a version ``3.4.2`` or a date ``décembre 2029``) earns the point
    when it appears verbatim (see :func:`contains_verbatim`).
    """
    if not expected:
        return None, []
    found = extract_numbers(response)
    matches: list[dict[str, object]] = []
    total = 0.0
    for figure in expected:
        if isinstance(figure, str):
            present = contains_verbatim(response, figure)
            total += 1.0 if present else 0.0
            matches.append({"expected": figure, "mode": "verbatim", "points": 1.0 if present else 0.0})
            continue
        best = min(found, key=lambda f: _gap(figure.value, f.value), default=None)
        gap = _gap(figure.value, best.value) if best else math.inf
        total += _points(gap)
        matches.append(
            {
                "expected": figure.text,
                "mode": "numeric",
                "expected_value": figure.value,
                "matched": best.text if best else None,
                "matched_value": best.value if best else None,
                "relative_gap": round(gap, 6) if math.isfinite(gap) else None,
                "points": _points(gap),
            }
        )
    return total / len(matches), matches


_DIGIT_GAP = re.compile(rf"(?<=\d){_SPACE}(?=\d)")


def _verbatim_form(text: str) -> str:
    text = unicodedata.normalize("NFC", text).replace("’", "'")
    text = _DIGIT_GAP.sub("", text)  # "1 180" and "1180" (any space kind) are the same figure
    return re.sub(r"\s+", " ", text).strip().casefold()


def contains_verbatim(text: str, needle: str) -> bool:
    """``needle`` in ``text`` up to case, Unicode form, whitespace kind and digit-group spaces."""
    return _verbatim_form(needle) in _verbatim_form(text)


def figures_from_strings(figures: Sequence[str]) -> list[Figure | str]:
    """Explicit key figures (e.g. ``facts.yaml``).

    A string that starts with one number (``1 420 tokens/s``, ``66 000 EUR``, ``8,1``, ``12 GPU``)
    is that quantity, whatever its form; anything else (``3.4.2``, ``décembre 2029``) is kept as
    text and checked verbatim, because a relative gap means nothing for versions or dates.
    """
    out: list[Figure | str] = []
    for text in figures:
        if not text.strip():
            raise ValueError("empty figure: expected a quantity such as '1 420 tokens/s'")
        numbers = extract_numbers(text)
        head = numbers[0] if numbers else None
        if head is not None and len(numbers) == 1 and text.strip().startswith(head.text):
            out.append(head)
        else:
            out.append(text.strip())
    return out


class NumericGrader(Grader):
    """Checks the reference's key figures, not the reasoning around them (seed 002)."""

    name = "numeric"
    version = "1"

    def __init__(self, figures: Sequence[str] | None = None) -> None:
        # Explicit figures replace extraction from the reference text (the flow passes facts.yaml's).
        self._explicit = figures_from_strings(figures) if figures is not None else None

    def grade(self, sample: Sample) -> GraderResult:
        expected: Sequence[Figure | str] = (
            self._explicit if self._explicit is not None else key_figures(sample.reference)
        )
        score, matches = score_figures(expected, sample.response)
        details: dict[str, object] = {"figures": len(expected), "matches": matches}
        if score is None:
            details["reason"] = "no key figure in the reference"
        return self.result(score, details)
