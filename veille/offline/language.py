"""The language of the engine's sentences: identification is :mod:`veille.language` (py3langid,
shared with the model seam's check of answers); here, how the engine marks a sentence in another
language than the request's.

A text too short to tell (``language.min_words``) is left as it is (a label). A longer one is
shown as a sentence of the request's language only when that is the language it most resembles; a
text that most resembles another language is quoted with it, or left out when even that guess is
under ``language.min_guess_confidence``.
"""

from __future__ import annotations

from veille.language import language, likely_language
from veille.offline import lexicon

__all__ = ["is_english", "language", "quote_if_foreign"]


def is_english(text: str) -> bool:
    """``text`` is identified as English."""
    return language(text) == "en"


def quote_if_foreign(sentence: str, request_lang: str) -> str:
    """``sentence`` as a quotation marked with its language (« … » (en)) when it is not written in
    ``request_lang``; unchanged when it is, or when it is too short to tell; ``""`` (leave it out)
    when it resembles another language too faintly to name it. A text not confidently in the
    request's language is never presented as a sentence of it: under ``language.min_confidence``
    the language it most resembles decides."""
    code = language(sentence)
    if not code:
        code, probability = likely_language(sentence)
        if code and code != request_lang and probability < lexicon.weight("language.min_guess_confidence"):
            return ""
    if not code or code == request_lang:
        return sentence
    body = sentence.strip()
    return f"« {body} » ({code})"
