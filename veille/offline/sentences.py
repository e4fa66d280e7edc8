"""Plain text into sentences, and a long sentence into whole clauses, never inside a figure, an
abbreviation, a version, an address or a file name (rules: docs/offline-engine.md, Sentences)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from veille.offline import lexicon
from veille.offline.reading import UNREADABLE

__all__ = ["fit_clauses", "is_whole", "sentence_ends", "split_plain"]

_END_RE = re.compile(r"[.!?…]+[\"'»”’)\]]*(?=\s)")
_STARTS_RE = re.compile(r"\s+[«\"“‘(\[¿¡*_A-ZÀ-ÖØ-Þ0-9]")
_INITIAL_RE = re.compile(r"(?:^|[\s(«\"])[A-ZÀ-ÖØ-Þ]\.$")
_URL_RE = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_LETTER_WORD_RE = re.compile(r"[^\W\d_]{2,}")
_WORD_COUNT_RE = re.compile(r"\w+(?:['’\-]\w+)*")
_ABBREVIATION_WINDOW = int(lexicon.weight("read_sentences.abbreviation_window"))


@cache
def _abbreviations() -> tuple[frozenset[str], frozenset[str]]:
    """(matched with their case, matched in any case): a lower-case entry (``e.g.``, « cf. ») is
    one in any case, a capitalised one (« M. ») only so (« 5 m. » ends a sentence)."""
    entries = lexicon.entries("abbreviations")
    return frozenset(entries), frozenset(e for e in entries if e == e.lower())


def _ends_with_abbreviation(before: str) -> bool:
    exact, any_case = _abbreviations()
    lowered = before.lower()
    for entry in exact:
        if before.endswith(entry) or (entry in any_case and lowered.endswith(entry)):
            start = len(before) - len(entry)
            if start == 0 or not before[start - 1].isalnum():
                return True
    return bool(_INITIAL_RE.search(before))


def split_plain(text: str) -> list[str]:
    """Sentences of one block of plain text; a sentence holding unreadable markup is dropped."""
    text = re.sub(r"\s+", " ", text).strip()
    out: list[str] = []
    start = 0
    for match in _END_RE.finditer(text):
        if not _STARTS_RE.match(text, match.end()):
            continue
        if match.group(0) == "." and _ends_with_abbreviation(text[start : match.end()]):
            continue
        out.append(text[start : match.end()].strip())
        start = match.end()
    out.append(text[start:].strip())
    return [s for s in out if s and UNREADABLE not in s]


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence end of ``text`` as it is, by :func:`split_plain`'s rules;
    an abbreviation starting the window checked before a period counts (a missed end, not a false cut)."""
    ends: list[int] = []
    for match in _END_RE.finditer(text):
        if not _STARTS_RE.match(text, match.end()):
            continue
        window = text[max(0, match.end() - _ABBREVIATION_WINDOW) : match.end()]
        if match.group(0) == "." and _ends_with_abbreviation(window):
            continue
        ends.append(match.end())
    return ends


def is_whole(sentence: str, item: bool = False) -> bool:
    """``sentence`` is not a piece its source interrupted: it neither starts in lower case with a
    function word (a list ``item`` may) nor ends with one or with an announcing abbreviation."""
    tokens = sentence.split()
    if len(_LETTER_WORD_RE.findall(_URL_RE.sub(" ", sentence))) < 2:
        return False  # an address or a label alone is not a sentence
    stop = lexicon.words("stop")
    first, last = tokens[0], tokens[-1]
    if not item and first[:1].islower() and lexicon.fold_entry(first.strip(",;:")) in stop:
        return False
    if lexicon.fold_entry(last.rstrip(",;:")) in stop and not last.endswith((".", "!", "?", "…")):
        return False
    closing = {
        *lexicon.groups("abbreviations", "en").get("closing", ()),
        *lexicon.groups("abbreviations", "fr").get("closing", ()),
    }
    return not (
        sentence.endswith(".") and not sentence.endswith(tuple(closing)) and _ends_with_abbreviation(sentence)
    )


def sentence_words(sentence: str) -> int:
    return len(_WORD_COUNT_RE.findall(sentence))


@cache
def _clause_marks() -> tuple[str, ...]:
    """The marks that join two independent clauses (the ``strong`` sentence cuts: « ; »)."""
    langs = ("common", *lexicon.LANGS)
    return tuple(f"{e} " for lang in langs for e in lexicon.groups("sentence_cuts", lang).get("strong", ()))


def _clause_cuts(text: str) -> list[tuple[int, int]]:
    """(start, end) of the clause marks of ``text`` outside brackets and quotes. A comma before a
    conjunction is no cut: it may open a verbless phrase (« …, mais impossible de … »)."""
    out = []
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([«":
            depth += 1
        elif ch in ")]»":
            depth = max(0, depth - 1)
        if depth:
            continue
        for sep in _clause_marks():
            # "such as e.g.; …": the left part would end on an abbreviation.
            if text.startswith(sep, i) and not _ends_with_abbreviation(text[:i].rstrip(",")):
                out.append((i, i + len(sep)))
    return out


def fit_clauses(
    sentence: str, max_words: int, count: Callable[[str], int] = sentence_words
) -> list[str] | None:
    """``sentence`` as sentences of at most ``max_words`` words cut only between clauses; None when
    it cannot be: the caller leaves it out rather than quote a piece of it."""
    text = sentence.strip()
    if count(text) <= max_words:
        return [text]
    end = text[-1] if text[-1] in ".!?…" else "."
    body = text.rstrip(".!?… ")
    min_part = int(lexicon.weight("reading.min_part_words"))
    options = [
        (abs(count(body[:a]) - count(body) / 2), a, b)
        for a, b in _clause_cuts(body)
        if count(body[:a]) >= min_part and count(body[b:]) >= min_part
    ]
    if not options:
        return None
    _, start, stop = min(options)
    left = fit_clauses(body[:start].rstrip(" ,;") + ".", max_words, count)
    right = fit_clauses(_capitalise(body[stop:].strip()) + end, max_words, count)
    return None if left is None or right is None else [*left, *right]


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
