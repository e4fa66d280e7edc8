"""The language of a sentence or a document, with py3langid (a character n-gram naive Bayes model,
BSD; 4.5 MB with numpy, microseconds per sentence).

Chosen over lingua-language-detector (``bench/language_id.py``): on the 1,035 sentences of the
test corpora's documents, each labelled with its document's language, restricted to the same seven
languages, py3langid misread 10 in 0.14 s CPU (+ 1.2 s to load its model) and lingua 24 in 0.58 s
CPU (+ 2.9 s to load), for a 96 MB wheel against 4.5 MB. The identifier is restricted to the
languages of ``identified_languages`` (veille/data/lang/common.toml): a wider set makes short
sentences misread.

A text too short to tell (``language.min_words``) or identified with less than
``language.min_confidence`` gets ``""``: it is left as it is, never quoted as foreign.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from veille.offline import lexicon

__all__ = ["is_english", "language", "quote_if_foreign"]

_LETTER_WORD_RE = re.compile(r"[^\W\d_]{2,}")


@cache
def _identifier() -> Any:
    # Imported here: the model loads in ~0.2 s, paid only by runs that read languages.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(lexicon.entries("identified_languages")))
    return identifier


@lru_cache(maxsize=8192)
def language(text: str) -> str:
    """ISO 639-1 code of the language ``text`` is written in, or ``""`` when it cannot be told."""
    if len(_LETTER_WORD_RE.findall(text)) < lexicon.weight("language.min_words"):
        return ""
    code, probability = _identifier().classify(text)
    return str(code) if probability >= lexicon.weight("language.min_confidence") else ""


def is_english(text: str) -> bool:
    """``text`` is identified as English."""
    return language(text) == "en"


def quote_if_foreign(sentence: str, request_lang: str) -> str:
    """``sentence`` as a quotation marked with its language (« … » (en)) when it is identified as
    written in another language than ``request_lang``; unchanged otherwise. A quoted sentence is
    never presented as a sentence of the report's language."""
    code = language(sentence)
    if not code or code == request_lang:
        return sentence
    body = sentence.strip()
    return f"« {body} » ({code})"
