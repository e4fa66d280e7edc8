"""Near-duplicate collapsing of the catalogue (catalogue step, above the planner's token budget).

Two catalogue entries are copies when their texts are the same (words compared, layout ignored) or
share most of their paragraphs (a bottom-k sketch of paragraph hashes, estimated Jaccard >= 0.8, at
least three paragraphs: veille.corpus.sections.text_fingerprint), whatever their titles; or
when they have the same normalised summary of eight words or more,
or the same title and summary (a document re-published under another id), or near-identical normalised titles: the same numbers, and one
title's words contained in the other's (« … tarifs 2026 » / « … tarifs 2026 (version corrigée) »,
« X » / « Alerte : X ») or nearly the same words (Jaccard >= 0.8). A title of fewer than three words
(« Fiche produit ») is too generic to say so alone: it needs the same summary too.

Each group becomes one line, shown under its most recent member (a corrected or re-published version
supersedes the older copy, so the analyst reads the newer figure), with the copies' ids on that line.
Matching runs on an inverted index of title words (a title is compared only with titles holding its
rarest word), so 20,000 entries take well under a second.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from veille.corpus.sections import sketch_similarity
from veille.docdates import known_day
from veille.roles.planner import CatalogueEntry

__all__ = ["Collapsed", "collapse_duplicates", "title_words"]

_WORD_RE = re.compile(r"[a-z0-9]+")
# Function words that do not make two titles different (French and English).
_STOP = frozenset(
    [
        "a",
        "au",
        "aux",
        "d",
        "de",
        "des",
        "du",
        "en",
        "et",
        "l",
        "la",
        "le",
        "les",
        "un",
        "une",
        "pour",
        "par",
        "sur",
        "avec",
        "dans",
        "ou",
        "the",
        "of",
        "and",
        "or",
        "to",
        "in",
        "for",
        "on",
        "with",
        "by",
        "an",
        "at",
        "from",
    ]
)
_MIN_TITLE_WORDS = 3
_MIN_SUMMARY_WORDS = 8  # a summary this long, word for word the same, is the same document
_MIN_CONTAINMENT = 0.6
_MIN_JACCARD = 0.8
_MAX_POSTING = 2000  # a rarest word shared by more titles than this says nothing about copies
_MIN_TEXT_SIMILARITY = 0.8  # estimated share of paragraphs in common: the same text, lightly edited
_MIN_SKETCH = 3  # paragraphs of five words or more: a shorter text is too little to call a copy


@dataclass(frozen=True)
class Collapsed:
    """Representatives (catalogue order, ``copies`` filled) and copy id -> representative id."""

    entries: list[CatalogueEntry]
    copy_of: dict[str, str]


def _fold(text: str) -> str:
    # Accents dropped by decomposing then encoding to ASCII (C speed: 20,000 lines in milliseconds).
    return unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()


def title_words(text: str) -> frozenset[str]:
    """Normalised words of a title (folded, function words removed)."""
    return frozenset(w for w in _WORD_RE.findall(_fold(text)) if w not in _STOP)


def _numbers(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in words if not w.isalpha())  # words are [a-z0-9]+: not alpha = has a digit


def _near(a: frozenset[str], b: frozenset[str], numbers: dict[frozenset[str], frozenset[str]]) -> bool:
    """Near-identical titles (``a`` the shorter one; ``numbers``: each title's number words)."""
    if len(a) < _MIN_TITLE_WORDS or len(a) / len(b) < _MIN_CONTAINMENT or numbers[a] != numbers[b]:
        return False
    if a <= b and len(a) / len(b) >= _MIN_CONTAINMENT:
        return True
    return len(a & b) / len(a | b) >= _MIN_JACCARD


class _Groups:
    """Union-find over indices."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _title_groups(titles: Sequence[frozenset[str]], groups: _Groups) -> None:
    """Union entries with near-identical titles, through distinct titles and an inverted index."""
    distinct: dict[frozenset[str], list[int]] = defaultdict(list)
    for i, words in enumerate(titles):
        distinct[words].append(i)
    keys = list(distinct)
    for members in distinct.values():  # the very same title: copies when it is specific enough
        if len(next(iter(titles[m] for m in members))) >= _MIN_TITLE_WORDS:
            for m in members[1:]:
                groups.union(members[0], m)
    numbers = {words: _numbers(words) for words in keys}
    df = Counter(w for words in keys for w in words)
    postings: dict[str, list[int]] = defaultdict(list)
    for k, words in enumerate(keys):
        for w in words:
            postings[w].append(k)
    for k, words in enumerate(keys):
        if len(words) < _MIN_TITLE_WORDS:
            continue
        rarest = min(words, key=lambda w: (df[w], w))
        candidates = postings[rarest]
        if len(candidates) > _MAX_POSTING:
            continue
        for other in candidates:
            longer = keys[other]
            if other != k and len(longer) >= len(words) and _near(words, longer, numbers):
                groups.union(distinct[words][0], distinct[longer][0])


def _text_groups(
    entries: Sequence[CatalogueEntry], fingerprints: Mapping[str, tuple[str, Sequence[int]]], groups: _Groups
) -> None:
    """Union entries with the same text (word hash) or sharing most paragraphs (sketch similarity
    >= _MIN_TEXT_SIMILARITY), through an inverted index of sketch values."""
    by_hash: dict[str, int] = {}
    postings: dict[int, list[int]] = defaultdict(list)
    for i, e in enumerate(entries):
        found = fingerprints.get(e.id)
        if found is None:
            continue
        text_hash, sketch = found
        if text_hash in by_hash:
            groups.union(by_hash[text_hash], i)
        by_hash.setdefault(text_hash, i)
        for value in sketch:
            postings[value].append(i)
    for i, e in enumerate(entries):
        found = fingerprints.get(e.id)
        if found is None or len(found[1]) < _MIN_SKETCH:
            continue
        candidates = {j for v in found[1] if len(postings[v]) <= _MAX_POSTING for j in postings[v] if j > i}
        for j in candidates:
            other = fingerprints[entries[j].id][1]
            if len(other) >= _MIN_SKETCH and sketch_similarity(found[1], other) >= _MIN_TEXT_SIMILARITY:
                groups.union(i, j)


def collapse_duplicates(
    entries: Sequence[CatalogueEntry], fingerprints: Mapping[str, tuple[str, Sequence[int]]] | None = None
) -> Collapsed:
    """One entry per group of copies (see the module docstring); ``fingerprints`` (id -> text hash and
    paragraph sketch, from the corpus database) adds copies found on the text whatever their titles."""
    groups = _Groups(len(entries))
    if fingerprints:
        _text_groups(entries, fingerprints, groups)
    titles = [title_words(e.title) for e in entries]
    exact: dict[object, int] = {}
    for i, e in enumerate(entries):
        summary = _WORD_RE.findall(_fold(e.summary or ""))
        # Same title and summary; or the same summary when it is long enough to be distinctive.
        content: object = (
            " ".join(summary) if len(summary) >= _MIN_SUMMARY_WORDS else (titles[i], tuple(summary))
        )
        if summary and content in exact:
            groups.union(exact[content], i)
        exact.setdefault(content, i)
    _title_groups(titles, groups)
    members: dict[int, list[int]] = defaultdict(list)
    for i in range(len(entries)):
        members[groups.find(i)].append(i)
    chosen: dict[int, list[str]] = {}
    copy_of: dict[str, str] = {}
    for group in members.values():
        # The latest dated copy; an unknown date (« date inconnue ») is never the latest.
        rep = max(
            group, key=lambda i: (known_day(entries[i].date) is not None, entries[i].date, entries[i].id)
        )
        copies = sorted(entries[i].id for i in group if i != rep)
        chosen[rep] = copies
        copy_of.update(dict.fromkeys(copies, entries[rep].id))
    out = [
        entries[i].model_copy(update={"copies": chosen[i]}) if chosen[i] else entries[i]
        for i in range(len(entries))
        if i in chosen
    ]
    return Collapsed(entries=out, copy_of=copy_of)
