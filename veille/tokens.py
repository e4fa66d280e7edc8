"""Token estimates for text we have not sent to a provider (offline engine, catalogue size).

Method: ``ceil(characters / 4)``, the usual rule of thumb for Gemini-family tokenizers on
European languages (Google documents "about 4 characters per token"). Every figure produced
this way is flagged ``estimated`` wherever it is stored.
"""

from __future__ import annotations

import math

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens"]

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0
