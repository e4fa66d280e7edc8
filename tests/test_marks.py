"""``veille.marks.without_marks`` is the per-character definition it replaced, for any text."""

from __future__ import annotations

import sys
import unicodedata
from itertools import compress

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.marks import without_marks

# Bases and marks mixed (accents on letters, several on one, a mark first): the cases the few-marks
# path meets; st.text alone rarely draws more than a couple of marks in one string.
MARKS = [chr(c) for c in range(0x300, 0x370)] + ["\u0483", "\u05b0", "\u0e48", "\u20d7", "\ufe20"]
MIXED = st.lists(
    st.one_of(st.sampled_from(MARKS), st.sampled_from("aeÉç éœ'’ 9"), st.characters()), max_size=40
)


def definition(text: str) -> str:
    return "".join(c for c in text if not unicodedata.combining(c))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), MIXED.map("".join)))
def test_any_text_loses_exactly_its_combining_characters(text: str) -> None:
    assert without_marks(text) == definition(text)
    decomposed = unicodedata.normalize("NFKD", text)
    assert without_marks(decomposed) == definition(decomposed)


def test_every_mark_goes_and_every_other_character_stays() -> None:
    every = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    classes = list(map(unicodedata.combining, every))
    marks = list(compress(every, classes))
    others = list(compress(every, [not c for c in classes]))
    for mark in marks:  # each mark among letters (a precomposed « é » is no mark): one replace pass
        assert without_marks(f"{mark}e{mark}é") == "eé", hex(ord(mark))
    # Every other character of the planes the marks live in (the BMP and the SMP) kept, two marks gone
    # (the whole of Unicode would cost 0.5 s: a million distinct characters looked up).
    kept = "".join(c for c in others if c < "\U00020000")
    assert max(marks) < "\U00020000"
    assert without_marks(kept + "\u0301\u0327") == kept
    assert without_marks("".join(marks) + "e") == "e"  # hundreds of distinct marks: the loop
