"""Word keys and aspect families of the offline planner, French and English
(docs/offline-engine.md, Planner, Words)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from veille.offline import lexicon
from veille.offline.text import fold, stem

__all__ = ["ASPECTS", "FRAMING", "aspect_words", "aspects", "framing_words", "key", "keys"]

_STOP = lexicon.words("stop")
_WORD_RE = re.compile(r"[a-z0-9]+")
KEY_LENGTH = int(lexicon.weight("reading.key_length"))


# English endings removed before the (French) stemmer, so "security" meets « sécurité » ("secur") and
# "latency" meets « latence ». Longest first.
_EN_MIN_STEM = int(lexicon.weight("read_vocab.min_stem"))
_EN_SUFFIXES = tuple(sorted(lexicon.entries("suffixes", "en"), key=lambda s: (-len(s), s)))


# Remembered per word, as the stem (a pure function of the word and of lists read at import).
@lru_cache(maxsize=int(lexicon.weight("read_cache.words")))
def key(word: str) -> str:
    """The key of one folded word ('' for a stop word, a bare number or a single letter)."""
    if len(word) < 2 or word in _STOP or word.isdigit():
        return ""
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _EN_MIN_STEM:
            word = word[: -len(suffix)]
            break
    return stem(word)[:KEY_LENGTH]


def keys(text: str) -> list[str]:
    """Keys of the content words of ``text``, in order (duplicates kept)."""
    return [k for k in (key(w) for w in _WORD_RE.findall(fold(text))) if k]


def _families(name: str) -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """Family -> (exact words, prefixes), both languages joined: ``=word`` matches that folded word
    exactly, any other entry is a prefix of folded words."""
    tables = [lexicon.groups(name, lang) for lang in lexicon.LANGS]
    out = {}
    for family in dict.fromkeys(g for table in tables for g in table):
        found = [lexicon.fold_entry(w) for table in tables for w in table.get(family, ())]
        exact = frozenset(w[1:] for w in found if w.startswith("="))
        out[family] = (exact, tuple(w for w in found if not w.startswith("=")))
    return out


# The aspect families (cost, performance, security…) and the framing words (requirements, sizing…).
ASPECTS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = _families("aspects")
FRAMING = _families("framing")["requirements"]


def _matches(words: Iterable[str], family: tuple[frozenset[str], tuple[str, ...]]) -> set[str]:
    exact, prefixes = family
    return {w for w in words if w in exact or any(w.startswith(p) for p in prefixes)}


@lru_cache(maxsize=int(lexicon.weight("read_cache.words")))
def _word_aspects(word: str) -> tuple[str, ...]:
    # The families one folded word belongs to, in ASPECTS' order: each word is tested against the
    # families' prefixes once per run, not once per text that holds it.
    return tuple(name for name, family in ASPECTS.items() if _matches((word,), family))


def aspects(text: str) -> frozenset[str]:
    """The aspect families ``text`` speaks of."""
    return frozenset(aspect_words(text))


def aspect_words(text: str) -> dict[str, int]:
    """Aspect family -> how many distinct words of ``text`` belong to it (families it uses only)."""
    counts = dict.fromkeys(ASPECTS, 0)
    for word in set(_WORD_RE.findall(fold(text))):
        for name in _word_aspects(word):
            counts[name] += 1
    return {name: n for name, n in counts.items() if n}


def framing_words(text: str) -> int:
    """How many distinct framing words ``text`` uses (requirements, sizing, method...)."""
    return len(_matches(set(_WORD_RE.findall(fold(text))), FRAMING))
