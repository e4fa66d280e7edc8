"""Combining marks removed from text (the accents of an NFKD-decomposed « é » and the like).

``without_marks(text)`` is ``"".join(c for c in text if not unicodedata.combining(c))``, the
definition every accent-insensitive comparison of veille used inline. That loop calls Python code
for every character of every document and finding the offline engine, the coverage step and the
update's statement keys fold (a few percent of a night's and of the property tests' CPU). Here the
characters are read in C: ASCII text has no mark; otherwise each distinct mark present is deleted
with ``str.replace``. With many distinct marks (hostile text) the passes would add up, so past a
few the per-character loop is used. The result is the same string for any text
(``tests/test_marks.py`` checks it against the loop, over every code point too).
"""

from __future__ import annotations

import unicodedata

__all__ = ["without_marks"]

# Distinct marks deleted one ``str.replace`` pass each: French text has at most five or so (acute,
# grave, circumflex, diaeresis, cedilla); more and the one-pass loop below is cheaper.
_MOST_PASSES = 8


def without_marks(text: str) -> str:
    """``text`` without its combining characters (``unicodedata.combining(c) != 0``)."""
    if text.isascii():
        return text
    marks = [c for c in set(text) if unicodedata.combining(c)]
    if len(marks) > _MOST_PASSES:
        return "".join(c for c in text if not unicodedata.combining(c))
    for mark in marks:
        text = text.replace(mark, "")
    return text
