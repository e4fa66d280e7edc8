"""The offline reviser shortens a sentence only between clauses (a semicolon), never at a comma,
a conjunction or between words: a piece of a source's sentence is a misquote (issue 28, precision
before recall)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.offline.reviser import _fit

_WORD = st.sampled_from(
    [
        "le",
        "débit",
        "atteint",
        "2,6",
        "Go/s",
        "mais",
        "impossible",
        "de",
        "superviser",
        "et",
        "les",
        "appels",
        "fonctionnaient",
        "selon",
        "l'audit",
        "du",
        "pilote",
        "with",
        "latency",
        "of",
        "12",
        "ms",
    ]
)
_PIECE = st.lists(_WORD, min_size=3, max_size=14).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=5), st.integers(4, 12))
def test_a_sentence_without_semicolon_is_kept_whole_whatever_its_length(
    pieces: list[str], limit: int
) -> None:
    sentence = ", ".join(pieces).capitalize() + "."
    assert _fit(sentence, limit) == sentence


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, min_size=2, max_size=5), st.integers(4, 12))
def test_a_cut_falls_only_at_a_semicolon_and_keeps_every_word(pieces: list[str], limit: int) -> None:
    sentence = " ; ".join(pieces).capitalize() + "."
    out = _fit(sentence, limit)
    assert (
        out.lower().replace(".", "").replace(";", "").split()
        == sentence.lower().replace(".", "").replace(";", "").split()
    )
    # every part is a whole clause of the sentence
    clauses = {c.strip(" .").lower() for c in sentence.split(";")}
    for part in out.split(". "):
        assert all(c.strip(" .").lower() in clauses for c in part.split(";")), (part, clauses)
