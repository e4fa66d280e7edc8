"""The language of the engine's sentences: identification is :mod:`veille.language` (py3langid,
shared with the model seam's check of answers); here, how the engine marks a sentence in another
language than the request's.

A text too short to tell (``language.min_words``) or identified with less than
``language.min_confidence`` gets ``""``: it is left as it is, never quoted as foreign.
"""

from __future__ import annotations

from veille.language import language

__all__ = ["is_english", "language", "quote_if_foreign"]


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
