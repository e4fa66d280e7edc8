"""Text utilities of the offline engine: folding, stop words, light stemming, a Markdown
document's sentences and table rows, word counts (word lists: :mod:`.lexicon`)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from veille.language import language, likely_language
from veille.marks import without_marks
from veille.offline import lexicon
from veille.offline.reading import UNREADABLE, Table, parse
from veille.offline.sentences import is_whole, split_plain

__all__ = [
    "STOP_WORDS",
    "SUPERLATIVE_RE",
    "cosine",
    "fold",
    "heading_items",
    "is_english",
    "jaccard",
    "language",
    "quote_if_foreign",
    "split_sentences",
    "stem",
    "stems",
    "table_rows",
    "table_sentences",
    "weighted_vector",
    "word_count",
]

STOP_WORDS: frozenset[str] = lexicon.words("stop")
# Light French stemming: suffixes removed once, longest first (after the plural was removed).
_SUFFIXES: tuple[str, ...] = tuple(sorted(lexicon.entries("suffixes", "fr"), key=lambda s: (-len(s), s)))
_WORD_RE = re.compile(r"[a-z0-9]+")
_COUNT_RE = re.compile(r"\w+")
_SHORT, _PLURAL_AFTER, _MIN_STEM, _UNDOUBLE_AFTER = (
    int(lexicon.weight(f"read_stem.{k}"))
    for k in ("short_word", "plural_after", "min_stem", "undouble_after")
)


_FOLD_KEPT_CHARS = int(lexicon.weight("read_cache.fold_chars"))


def fold(text: str) -> str:
    """Lower-case, strip accents, normalise apostrophes and spaces (so 'Écart' == 'ecart')."""
    return _fold(text) if len(text) > _FOLD_KEPT_CHARS else _remembered_fold(text)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = without_marks(text)
    text = text.replace("œ", "oe").replace("Œ", "OE").replace("æ", "ae").replace("Æ", "AE")
    return text.replace("\u2019", "'").replace("\u00a0", " ").replace("\u202f", " ").lower()


# Remembered per text (a pure function of it): the same sentences and titles are folded by every role
# and pass that reads them (35,130 folds of 1,764 texts in an offline night of the bundled corpus).
_remembered_fold = lru_cache(maxsize=int(lexicon.weight("read_cache.folds")))(_fold)


# Remembered per word: a pure function of the word (its lists and lengths are read once, at import),
# called for every word of every document by several roles.
@lru_cache(maxsize=int(lexicon.weight("read_cache.words")))
def stem(word: str) -> str:
    """A small suffix-stripping stemmer for folded French words (enough for lexical overlap)."""
    if len(word) <= _SHORT or word.isdigit():
        return word
    if word.endswith("aux") and len(word) > _PLURAL_AFTER:
        word = word.removesuffix("aux") + "al"
    elif word.endswith(("s", "x")) and len(word) > _PLURAL_AFTER:
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            word = word[: -len(suffix)]
            break
    # "abandonn(é)" / "abandon", "personnell(e)" / "personnel": undouble a final consonant.
    if len(word) > _UNDOUBLE_AFTER and word[-1] == word[-2] and word[-1] in "lnmt":
        word = word[:-1]
    return word


def stems(text: str) -> list[str]:
    """Stems of the folded words, in order (duplicates kept); stop words, one-letter words and bare
    numbers left out (apostrophes and punctuation split words)."""
    return [
        stem(w)
        for w in _WORD_RE.findall(fold(text))
        if len(w) > 1 and w not in STOP_WORDS and not w.isdigit()
    ]


def word_count(text: str) -> int:
    """Words as the arbiter counts them (``re.findall(r"\\w+")``), so limits agree with it."""
    return len(_COUNT_RE.findall(text))


def is_english(text: str) -> bool:
    return language(text) == "en"


def quote_if_foreign(sentence: str, request_lang: str) -> str:
    """``sentence`` quoted with its language (« … » (en)) when not in ``request_lang``; unchanged
    when it is or is too short to tell; "" when it resembles another language too faintly to name."""
    code = language(sentence)
    if not code:
        code, probability = likely_language(sentence)
        if code and code != request_lang and probability < lexicon.weight("language.min_guess_confidence"):
            return ""
    if not code or code == request_lang:
        return sentence
    return f"« {sentence.strip()} » ({code})"


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Cosine similarity of two sparse vectors (sorted keys: the sum is order-independent)."""
    if not a or not b:
        return 0.0
    dot = sum(a[k] * b[k] for k in sorted(a.keys() & b.keys()))
    if dot == 0:
        return 0.0
    na = math.sqrt(sum(v * v for _, v in sorted(a.items())))
    nb = math.sqrt(sum(v * v for _, v in sorted(b.items())))
    return dot / (na * nb)


def weighted_vector(tokens: Iterable[str], weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Term-frequency vector (sub-linear tf) scaled by optional per-term weights."""
    counts = Counter(tokens)
    scale = weights or {}
    return {token: (1.0 + math.log(counts[token])) * scale.get(token, 1.0) for token in sorted(counts)}


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


# --- a Markdown document's sentences and tables ------------------------------------------------


def split_sentences(text: str) -> list[str]:
    """Sentences of a Markdown document's prose (:mod:`.reading`), a list item a unit of its own,
    a piece of a sentence its source interrupted left out (:func:`.sentences.is_whole`)."""
    return [
        s
        for block in parse(text).blocks
        if block.kind != "heading"
        for s in split_plain(block.text)
        if is_whole(s, block.kind == "item")
    ]


def heading_items(text: str, max_words: int) -> list[str]:
    """List items under ``max_words`` words holding a figure, led by their heading (« Charge à
    froid — A : 38 minutes. »): like a table's column, the heading says what the item measures."""
    out: list[str] = []
    for block in parse(text).blocks:
        body = block.text.rstrip(".")
        readable = UNREADABLE not in body and re.search(r"\d", body) and word_count(body) < max_words
        if block.kind == "item" and block.heading and readable:
            out.append(f"{block.heading} — {body}.")
    return out


def _rows(table: Table) -> list[tuple[str, list[tuple[str, str]]]]:
    """(row label, [(column name, value)…] of its filled cells) of each labelled row."""
    return [
        (cells[0], [(name, value) for name, value in zip(table.header[1:], cells[1:], strict=False) if value])
        for cells in table.rows
        if cells and cells[0]
    ]


def table_sentences(text: str) -> list[str]:
    """Each filled cell of the document's tables as a sentence labelled by its row and column
    (« A : latence 12 ms. »), so it compares with the same measure stated in prose."""
    return [
        f"{label} : {name} {value}." if name else f"{label} : {value}."
        for table in parse(text).tables
        for label, filled in _rows(table)
        for name, value in filled
    ]


def table_rows(text: str) -> list[tuple[str, list[int]]]:
    """Each row of the document's tables as one sentence (« A : latence 12 ms ; prix 900 EUR. »), a
    finding in itself, with the positions in :func:`table_sentences` of the cells it joins."""
    out: list[tuple[str, list[int]]] = []
    position = 0
    for table in parse(text).tables:
        for label, filled in _rows(table):
            if filled:
                parts = [f"{name} {value}".strip() for name, value in filled]
                out.append((f"{label} : {' ; '.join(parts)}.", list(range(position, position + len(filled)))))
            position += len(filled)
    return out


def _superlative_re() -> re.Pattern[str]:
    """Relative and absolute superlatives of each language (« la plus faible », "the most
    reliable", « le meilleur »): a ranking claim, never a neutral report's own words."""
    alternatives = []
    for lang in lexicon.LANGS:
        group = lexicon.groups("superlative", lang)
        arts = "|".join(re.escape(a) for a in group.get("articles", ()))
        degree = "|".join(re.escape(d) for d in group.get("degree", ()))
        not_after = "|".join(
            rf"{re.escape(w)}\b" if w[-1].isalnum() else re.escape(w) for w in group.get("not_after", ())
        )
        absolute = "|".join(re.escape(w) for w in group.get("absolute", ()))
        alternatives.append(rf"\b(?:{arts})\s*(?:{degree})\s+(?!{not_after})\w+")
        alternatives.append(rf"\b(?:{absolute})\b")
    return re.compile("|".join(alternatives), re.IGNORECASE)


SUPERLATIVE_RE = _superlative_re()
