"""Key terms of a request (the planner's vocabulary): ``terms`` from request.md, or derived from its text.

Note: the offline planner (veille/models/offline/planner.py, ``_derive_terms``) has its own, simpler
fallback; it only runs when the terms handed to it are empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from veille.corpus.request import Request

__all__ = ["derive_terms"]

# Words that start sentences or headings in French requests and are not subject terms.
_STOPWORDS = frozenset(
    [
        "a",
        "au",
        "aux",
        "avec",
        "ce",
        "ces",
        "cette",
        "comment",
        "dans",
        "de",
        "des",
        "du",
        "elle",
        "en",
        "est",
        "et",
        "il",
        "ils",
        "la",
        "le",
        "les",
        "leur",
        "leurs",
        "mais",
        "nous",
        "on",
        "ou",
        "où",
        "par",
        "pas",
        "pour",
        "qu",
        "que",
        "quel",
        "quelle",
        "quelles",
        "quels",
        "qui",
        "sa",
        "se",
        "ses",
        "son",
        "sur",
        "un",
        "une",
        "vous",
        "notre",
        "nos",
        "votre",
        "vos",
        "tout",
        "tous",
        "toutes",
        "plus",
        "moins",
        "entre",
        "sans",
        "sous",
        "vers",
        "chez",
        "dont",
        "ainsi",
        "alors",
        "aussi",
        "the",
        "and",
        "for",
        "with",
        "from",
        "what",
        "which",
        "how",
        "our",
        "this",
        "that",
        "demande",
        "veille",
        "dossier",
        "question",
        "objectif",
        "contexte",
        "merci",
    ]
)
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")


def derive_terms(request: Request) -> list[str]:
    """Key terms of the request: ``request.terms`` when given; otherwise the proper nouns and acronyms of
    the title and text (capitalised words not at a sentence start, or seen capitalised mid-sentence,
    plus all-caps words such as RGPD), de-duplicated case-insensitively in order of appearance."""
    if request.terms:
        return list(dict.fromkeys(request.terms))
    found: dict[str, str] = {}
    for chunk in _sentences([request.title, request.text]):
        for position, match in enumerate(_WORD.finditer(chunk)):
            word = match.group().strip("'’-")
            word = re.split(r"['’]", word)[-1] if "'" in word or "’" in word else word  # l'Orvet -> Orvet
            if len(word) < 3 or word.lower() in _STOPWORDS:
                continue
            is_acronym = word.isupper() and any(c.isalpha() for c in word)
            if is_acronym or (word[0].isupper() and position > 0):
                found.setdefault(word.lower(), word)
    # A capitalised word at a sentence start counts only if it also appears mid-sentence (handled above).
    return list(found.values())


def _sentences(texts: Iterable[str]) -> list[str]:
    chunks: list[str] = []
    for text in texts:
        for line in text.splitlines():
            # Markdown markers would otherwise make the first word look mid-sentence.
            line = re.sub(r"^\s*(?:#+|[-*+]|\d+[.)])\s*", "", line)
            chunks.extend(part for part in re.split(r"(?<=[.!?])\s+", line) if part.strip())
    return chunks
