"""Key terms of a request (the planner's vocabulary): ``terms`` from request.md, or derived from its text.

Note: the offline planner (veille/offline/relevance.py, ``_derive_terms``) has its own, simpler
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


# Language names: "in English", « en français » say how to write, not what to compare.
_LANGUAGES = frozenset(
    [
        "english",
        "french",
        "german",
        "spanish",
        "italian",
        "anglais",
        "francais",
        "allemand",
        "espagnol",
        "italien",
    ]
)


def _proper_nouns(texts: Iterable[str]) -> dict[str, str]:
    """Capitalised words not at a sentence start, and acronyms, of ``texts`` (folded key -> word)."""
    found: dict[str, str] = {}
    for chunk in _sentences(texts):
        for position, match in enumerate(_WORD.finditer(chunk)):
            word = match.group().strip("'’-")
            word = re.split(r"['’]", word)[-1] if "'" in word or "’" in word else word  # l'Orvet -> Orvet
            if len(word) < 3 or word.lower() in _STOPWORDS:
                continue
            is_acronym = word.isupper() and any(c.isalpha() for c in word)
            if is_acronym or (word[0].isupper() and position > 0):
                found.setdefault(word.lower(), word)
    return found


def _plain_words(text: str) -> set[str]:
    """Words of ``text`` written in lower case (common nouns, whatever their case elsewhere)."""
    return {m.group().lower() for m in _WORD.finditer(text) if m.group()[:1].islower()}


def derive_terms(request: Request) -> list[str]:
    """Key terms of the request: ``request.terms`` when given; otherwise its proper nouns.

    The title's proper nouns when it has any (a request's title names what is compared: « … : A, B
    ou C ? »); else those of the title and text (capitalised words not at a sentence start, plus
    acronyms such as RGPD). Language names ("in English") and words the request also writes in lower
    case (« le service Données » / « base de données ») are not terms. De-duplicated
    case-insensitively, in order of appearance.
    """
    if request.terms:
        return list(dict.fromkeys(request.terms))
    plain = _plain_words(f"{request.title}\n{request.text}")

    def keep(found: dict[str, str]) -> list[str]:
        return [w for k, w in found.items() if k not in _LANGUAGES and (w.isupper() or k not in plain)]

    in_title = [w for w in keep(_proper_nouns([request.title])) if not w.isupper()]
    return in_title or keep(_proper_nouns([request.title, request.text]))


def _sentences(texts: Iterable[str]) -> list[str]:
    chunks: list[str] = []
    for text in texts:
        for line in text.splitlines():
            # Markdown markers would otherwise make the first word look mid-sentence.
            line = re.sub(r"^\s*(?:#+|[-*+]|\d+[.)])\s*", "", line)
            chunks.extend(part for part in re.split(r"(?<=[.!?])\s+", line) if part.strip())
    return chunks
