"""French-aware text utilities of the offline engine: folding, stop words, light stemming,
sentence and table splitting, word counts, language (figures are in :mod:`.figures`).

Everything here is pure and deterministic. Nothing is specific to a corpus: the word lists are
generic French function words, hedges and measurement units.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "STOP_WORDS",
    "SUPERLATIVE_RE",
    "content_words",
    "cosine",
    "fold",
    "heading_items",
    "is_english",
    "jaccard",
    "split_sentences",
    "stem",
    "stems",
    "table_rows",
    "table_sentences",
    "weighted_vector",
    "word_count",
    "words",
]


def _wordlist(text: str) -> list[str]:
    """Whitespace-separated words (word lists read better as text)."""
    return text.split()


# Generic French function words and meta words of a request ("dossier", "document"...), folded.
_STOP = """
a à afin ai aie ainsi alors apres après au aucun aucune aupres auquel aussi autre autres aux avant avec avoir
ayant c ça car ce ceci cela celle celles celui cependant certain certaine certaines certains ces cet cette ceux
chaque chez ci comme comment contre d dans de des depuis deja déjà donc dont du elle elles en encore entre est
et etaient etait etant ete été etre être eu eux fait faire fois font hors il ils j je jusqu jusque l la laquelle
le lequel les lesquels leur leurs lors lorsque lui m ma mais me meme même mes moi moins mon n ne ni non nos notre
nous on ont or ou où par parce parmi pas pendant peu peut peuvent plus plusieurs pour pourquoi pourra pourrait
puis qu quand que quel quelle quelles quels qui quoi s sa sans se selon ses si sien soi soit son sont sous
suis sur t ta tandis tant te tel telle telles tels tes toi ton tous tout toute toutes tres très tu un une unes
uns vers via voici voila vos votre vous y deux trois quatre cinq six dix
nouveau nouvelle nouveaux nouvelles nouvel
doit doivent faut avoir sera seront serait seraient etc cas ceux aujourd hui
dossier document documents veille demande question questions rapport note notes point points
the of and or to in for on with by is are be an as at from that this it
"""
STOP_WORDS: frozenset[str] = frozenset(
    unicodedata.normalize("NFKD", w).encode("ascii", "ignore").decode() for w in _wordlist(_STOP)
)

# Light French stemming: suffixes removed once, longest first (after the plural was removed).
_SUFFIXES: tuple[str, ...] = tuple(
    sorted(
        _wordlist(
            "issement ement ication ation ateur atrice ance ence ite able ible ique isme iste euse eux "
            "ment aire ive if ee ante ant er e"
        ),
        key=lambda s: (-len(s), s),
    )
)

_WORD_RE = re.compile(r"[a-z0-9]+")
_COUNT_RE = re.compile(r"\w+")


def fold(text: str) -> str:
    """Lower-case, strip accents, normalise apostrophes and spaces (so 'Écart' == 'ecart')."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("œ", "oe").replace("Œ", "OE").replace("æ", "ae").replace("Æ", "AE")
    return text.replace("\u2019", "'").replace("\u00a0", " ").replace("\u202f", " ").lower()


def stem(word: str) -> str:
    """A small suffix-stripping stemmer for folded French words (enough for lexical overlap)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("aux") and len(word) > 4:
        word = word[:-3] + "al"
    elif word.endswith(("s", "x")) and len(word) > 4:
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    # "abandonn(é)" / "abandon", "personnell(e)" / "personnel": undouble a final consonant.
    if len(word) > 4 and word[-1] == word[-2] and word[-1] in "lnmt":
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Folded alphanumeric tokens, in order (apostrophes and punctuation split words)."""
    return _WORD_RE.findall(fold(text))


def content_words(text: str) -> list[str]:
    """Folded words minus stop words, one-letter words and bare numbers, in order."""
    return [w for w in words(text) if len(w) > 1 and w not in STOP_WORDS and not w.isdigit()]


def stems(text: str) -> list[str]:
    """Stems of the content words, in order (duplicates kept)."""
    return [stem(w) for w in content_words(text)]


def word_count(text: str) -> int:
    """Words as the arbiter counts them (``re.findall(r"\\w+")``), so limits agree with it."""
    return len(_COUNT_RE.findall(text))


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
    out: dict[str, float] = {}
    for token in sorted(counts):
        w = 1.0 if weights is None else weights.get(token, 1.0)
        out[token] = (1.0 + math.log(counts[token])) * w
    return out


# --- sentences -------------------------------------------------------------------------------

# Not after an initial ("J. Martin") nor a common abbreviation (« 25 °C. » ends a sentence).
_SENTENCE_END_RE = re.compile(
    r"(?<=[.!?…])(?<!(?<!°)\b[A-Z]\.)(?<!\bM\.)(?<!\bex\.)\s+(?=[«\"(\[A-ZÀ-ÖØ-Þ0-9*_-])"
)
_MD_PREFIX_RE = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)")
_MD_EMPHASIS_RE = re.compile(r"(\*\*|__|\*|`)")


def split_sentences(text: str) -> list[str]:
    """Sentences of a Markdown body: headings are skipped, list items and paragraphs are split at
    sentence ends, and each table cell reads as a sentence labelled by its row and column
    (« Produit A : latence 12 ms. »), so a figure in a table keeps what it measures. Markdown emphasis is removed."""
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            joined = " ".join(paragraph)
            out.extend(s.strip() for s in _SENTENCE_END_RE.split(joined) if s.strip())
            paragraph.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "|", "```", "---")):
            flush()
            continue
        is_item = bool(re.match(r"^([-*+]|\d+[.)])\s+", line))
        line = _MD_EMPHASIS_RE.sub("", _MD_PREFIX_RE.sub("", line)).strip()
        if not line:
            continue
        if is_item:
            flush()
            paragraph.append(line)
            flush()
        else:
            paragraph.append(line)
    flush()
    return out


def heading_items(text: str, max_words: int) -> list[str]:
    """List items shorter than ``max_words`` words that hold a figure, each led by the heading above
    it (« Charge à froid — Produit A : 38 minutes. »). Under a heading, such a list reads like a
    two-column table whose column is the heading: the item alone does not say what it measures."""
    out: list[str] = []
    heading = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            heading = _MD_EMPHASIS_RE.sub("", line.lstrip("#")).strip()
            continue
        item = re.match(r"^(?:[-*+]|\d+[.)])\s+(.*)$", line)
        if item is None or not heading:
            continue
        body = _MD_EMPHASIS_RE.sub("", item.group(1)).strip().rstrip(".")
        if re.search(r"\d", body) and word_count(body) < max_words:
            out.append(f"{heading} — {body}.")
    return out


def table_sentences(text: str) -> list[str]:
    """Each filled cell of the Markdown tables of ``text`` as a sentence labelled by its row and
    column (« Produit A : latence 12 ms. »): a figure in a table keeps what it measures, so it can
    be compared with the same measure stated in prose elsewhere."""
    return [cell for header, cells in _table_data_rows(text) for cell in _table_row(header, cells)]


def table_rows(text: str) -> list[tuple[str, list[int]]]:
    """Each row of the Markdown tables of ``text`` as one sentence (« Produit A : latence 12 ms ;
    prix 900 EUR. ») with the positions, in :func:`table_sentences`, of the cells it joins: a row
    of a benchmark or a price grid is a finding in itself."""
    out: list[tuple[str, list[int]]] = []
    position = 0
    for header, cells in _table_data_rows(text):
        row = _table_row(header, cells)
        if row:
            parts = [
                f"{name} {value}".strip() for name, value in zip(header[1:], cells[1:], strict=False) if value
            ]
            sentence = f"{cells[0]} : {' ; '.join(parts)}.".replace("  ", " ")
            out.append((sentence, list(range(position, position + len(row)))))
        position += len(row)
    return out


def _table_data_rows(text: str) -> Iterator[tuple[list[str], list[str]]]:
    """(header cells, row cells) of each data row of the Markdown tables of ``text``."""
    header: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("|"):
            header = None
            continue
        cells = _table_cells(line)
        if header is None:
            header = cells
        elif not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            yield header, cells


def _table_cells(line: str) -> list[str]:
    inner = line.strip().strip("|")
    return [_MD_EMPHASIS_RE.sub("", c).strip() for c in inner.split("|")]


def _table_row(header: list[str], cells: list[str]) -> list[str]:
    """One sentence per filled cell, ``row label : column value.``: a row holds several measures,
    and each figure must keep the one column it belongs to."""
    if not cells or not cells[0]:
        return []
    return [
        f"{cells[0]} : {name} {value}.".replace("  ", " ") if name else f"{cells[0]} : {value}."
        for name, value in zip(header[1:], cells[1:], strict=False)
        if value
    ]


# French superlatives: "la plus faible", "les moins chers", "le meilleur", "la pire".
SUPERLATIVE_RE = re.compile(
    r"\b(?:le|la|les|l')\s*(?:plus|moins)\s+(?!de\b|d'|que\b|tôt\b|tard\b)\w+|\b(?:meilleure?s?|pires?)\b",
    re.IGNORECASE,
)


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


_EN_MARKERS = frozenset(
    ["the", "and", "of", "to", "for", "with", "on", "is", "are", "our", "please", "which", "that", "this"]
)
_FR_MARKERS = frozenset(
    [
        "le",
        "la",
        "les",
        "et",
        "des",
        "du",
        "pour",
        "avec",
        "sur",
        "est",
        "sont",
        "notre",
        "qui",
        "que",
        "une",
        "un",
    ]
)


def is_english(text: str) -> bool:
    """``text`` is written in English: more English than French function words."""
    tokens = re.findall(r"[a-z]+", fold(text))
    return sum(t in _EN_MARKERS for t in tokens) > sum(t in _FR_MARKERS for t in tokens)
