"""Numeric grader (seed 002): are the reference's key figures in the response?

Numbers are read by :mod:`veille.numbers` (French and English writing, ranges, signs, multipliers,
units; years, dates, versions, ids and numbering are never figures). Each key figure of the
reference (a decimal, a percentage or points, an amount: see :attr:`veille.numbers.Reading.is_key`)
is matched to the closest figure of the response **of a compatible unit**
(:func:`veille.numbers.compatible`: « 12 % » never matches « 12 GPU », points never percents, a bare
« 1 700 M » may stand for « 1 705 M$ » as the seed shows); a range contributes both ends. Relative
gap < 1 % → 1 point, < 5 % → 0.5, else 0; the score is the mean. A reference without key figures gets
no score (None, never 0); a response without a compatible figure gets 0 for that figure.

When the figures are given explicitly (``facts.yaml`` ``figures`` in the flow), a string that is one
figure is that quantity whatever its form (``12 GPU``); other strings (a version ``3.4.2``, a date
``décembre 2029``) are checked verbatim, since a relative gap is meaningless for them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from veille.graders.base import Grader, GraderResult, Sample
from veille.numbers import Reading, Unit, compatible, read_numbers

__all__ = [
    "FULL_GAP",
    "HALF_GAP",
    "Expected",
    "NumericGrader",
    "contains_verbatim",
    "expected_figures",
    "extract_numbers",
    "figures_from_strings",
    "key_figures",
    "score_figures",
]

FULL_GAP = 0.01  # relative gap below which a figure earns the full point
HALF_GAP = 0.05  # relative gap below which it earns half a point


@dataclass(frozen=True)
class Expected:
    """One value the response must contain: a key figure, or one end of a key range."""

    text: str
    value: float
    unit: Unit | None


def extract_numbers(text: str) -> list[Reading]:
    """The figures of ``text`` (quantities only: no year, date, version, id or numbering)."""
    return [r for r in read_numbers(text) if r.role == "figure"]


def key_figures(reference: str) -> list[Reading]:
    """The key figures of a reference text: decimals, percentages, points and amounts."""
    return [r for r in extract_numbers(reference) if r.is_key]


def expected_figures(figures: Sequence[Reading]) -> list[Expected]:
    """Each figure's value, or both ends of a range (« 8 500-11 000 EUR » asks for 8 500 and 11 000)."""
    return [Expected(f.text, v, f.unit) for f in figures for v in f.values]


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


def _unit_name(unit: Unit | None) -> str | None:
    return f"{unit.kind}:{unit.name}" if unit else None


def _match(figure: Expected, found: Sequence[Reading]) -> tuple[dict[str, object], float]:
    candidates = [(r, v) for r in found if compatible(figure.unit, r.unit) for v in r.values]
    best = min(candidates, key=lambda c: _gap(figure.value, c[1]), default=None)
    gap = _gap(figure.value, best[1]) if best else math.inf
    match: dict[str, object] = {
        "expected": figure.text,
        "mode": "numeric",
        "expected_value": figure.value,
        "unit": _unit_name(figure.unit),
        "matched": best[0].text if best else None,
        "matched_value": best[1] if best else None,
        "relative_gap": round(gap, 6) if math.isfinite(gap) else None,
        "points": _points(gap),
    }
    if best is None:
        match["reason"] = "no figure of a compatible unit in the response"
    return match, _points(gap)


def score_figures(
    expected: Sequence[Expected | str], response: str
) -> tuple[float | None, list[dict[str, object]]]:
    """Mean points of ``expected`` figures against ``response`` (None if nothing is expected).

    An :class:`Expected` is matched numerically to the closest figure of a compatible unit; a
    string (a figure that is not a single quantity, e.g. a version ``3.4.2`` or a date ``décembre
    2029``) earns the point when it appears verbatim (see :func:`contains_verbatim`).
    """
    if not expected:
        return None, []
    found = extract_numbers(response)
    matches: list[dict[str, object]] = []
    total = 0.0
    for figure in expected:
        if isinstance(figure, str):
            points = 1.0 if contains_verbatim(response, figure) else 0.0
            matches.append({"expected": figure, "mode": "verbatim", "points": points})
        else:
            match, points = _match(figure, found)
            matches.append(match)
        total += points
    return total / len(matches), matches


_DIGIT_GAP = re.compile(r"(?<=\d)[ \u00a0\u202f\u2009](?=\d)")


def _verbatim_form(text: str) -> str:
    text = unicodedata.normalize("NFC", text).replace("’", "'")
    text = _DIGIT_GAP.sub("", text)  # "1 180" and "1180" (any space kind) are the same figure
    return re.sub(r"\s+", " ", text).strip().casefold()


def contains_verbatim(text: str, needle: str) -> bool:
    """``needle`` in ``text`` up to case, Unicode form, whitespace kind and digit-group spaces."""
    return _verbatim_form(needle) in _verbatim_form(text)


def figures_from_strings(figures: Sequence[str]) -> list[Expected | str]:
    """Explicit key figures (e.g. ``facts.yaml``).

    A string that is one figure (``1 420 tokens/s``, ``66 000 EUR``, ``8,1``, ``12 GPU``,
    ``8 500-11 000 EUR``) is that quantity (both ends for a range), whatever its form; anything else
    (``3.4.2``, ``décembre 2029``) is kept as text and checked verbatim, because a relative gap
    means nothing for versions or dates.
    """
    out: list[Expected | str] = []
    for text in figures:
        if not text.strip():
            raise ValueError("empty figure: expected a quantity such as '1 420 tokens/s'")
        readings = read_numbers(text.strip())
        if len(readings) == 1 and readings[0].role == "figure" and readings[0].start == 0:
            out += expected_figures(readings)
        else:
            out.append(text.strip())
    return out


class NumericGrader(Grader):
    """Checks the reference's key figures, not the reasoning around them (seed 002)."""

    name = "numeric"
    version = "2"  # 2: shared number reader (English grouping, ranges, units must be compatible)

    def __init__(self, figures: Sequence[str] | None = None) -> None:
        # Explicit figures replace extraction from the reference text (the flow passes facts.yaml's).
        self._explicit = figures_from_strings(figures) if figures is not None else None

    def grade(self, sample: Sample) -> GraderResult:
        expected: Sequence[Expected | str] = (
            self._explicit if self._explicit is not None else expected_figures(key_figures(sample.reference))
        )
        score, matches = score_figures(expected, sample.response)
        details: dict[str, object] = {"figures": len(expected), "matches": matches}
        if score is None:
            details["reason"] = "no key figure in the reference"
        return self.result(score, details)
