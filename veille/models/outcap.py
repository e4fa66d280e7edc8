"""The most output a request may take (issue 38 item 4): what makes the night's budget a hard cap.

Every request carries ``max_output_tokens`` (``ModelRequest``), sent to the provider (Gemini:
``GenerateContentConfig.max_output_tokens``) and priced before the request leaves
(:mod:`veille.models.budget`). It is derived from the role's output schema, the one the model is
sent (:func:`veille.models.wire.wire_schema`): every string's ``maxLength``, every list's
``maxItems`` (veille.roles.limits sets them on every role), summed in tokens — a valid answer
cannot be longer — plus the thinking the request's level may spend (Gemini counts thoughts within
``max_output_tokens``: googleapis/python-genai#2062), and bounded by ``settings.max_output_tokens``.

Tokens from characters: :data:`CHARS_PER_TOKEN` is below the ~4 characters per token of French
prose on Gemini's tokenizer (veille.tokens), so a valid answer at every ceiling still fits; a
model that writes more than a valid answer can hold is cut (``MAX_TOKENS``), and only then.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel

from veille.models.wire import wire_schema

__all__ = [
    "CHARS_PER_TOKEN",
    "MIN_OUTPUT_TOKENS",
    "THINKING_TOKENS",
    "max_output_tokens",
    "schema_tokens",
]

CHARS_PER_TOKEN = 3  # below prose's ~4 (veille.tokens): figures and ids cut into more tokens
# What a string or a list without a ceiling may hold: the largest string ceiling of veille.roles.limits
# (TEXT_CHARS) and its list ceiling (ITEMS). Only the planner's free ids and questions have none.
UNBOUNDED_CHARS = 2_000
UNBOUNDED_ITEMS = 30
_SCALAR_TOKENS = {"integer": 8, "number": 12, "boolean": 2, "null": 2}
_PUNCTUATION = 2  # quotes, comma, colon or brackets around a value
# The thinking a level may spend before the answer, counted within max_output_tokens. 2.5's
# budgets (veille.models.gemini) with room; Gemini 3's levels name no figure, so the high ones
# are generous: a request cut while thinking costs what it thought and is asked again.
THINKING_TOKENS = {"none": 0, "low": 4_096, "medium": 16_384, "high": 32_768}
MIN_OUTPUT_TOKENS = 1_024  # room for the smallest answer, whatever its schema


def max_output_tokens(schema: type[BaseModel], thinking: str, bound: int, *, grounded: bool = False) -> int:
    """The ceiling of one request: ``schema``'s longest valid answer and ``thinking``'s allowance,
    within ``bound``. A grounded request answers in free text (the backend builds the JSON from
    the grounding metadata): its schema says nothing of its length, so it gets ``bound``."""
    if grounded:
        return bound
    wanted = schema_tokens(schema) + THINKING_TOKENS.get(thinking, max(THINKING_TOKENS.values()))
    return max(min(MIN_OUTPUT_TOKENS, bound), min(wanted, bound))


def schema_tokens(schema: type[BaseModel]) -> int:
    """Tokens the longest answer valid for ``schema``'s wire schema takes (an upper bound)."""
    return _tokens(wire_schema(schema))


def _tokens(node: Any) -> int:
    if not isinstance(node, dict):
        return _PUNCTUATION
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        return max(_tokens(option) for option in options)
    if "enum" in node:
        longest = max((len(json.dumps(v, ensure_ascii=False)) for v in node["enum"]), default=0)
        return math.ceil(longest / CHARS_PER_TOKEN) + _PUNCTUATION
    kinds = node.get("type")
    if isinstance(kinds, list):
        return max((_tokens({**node, "type": kind}) for kind in kinds), default=_PUNCTUATION)
    if kinds == "string":
        chars = node.get("maxLength", UNBOUNDED_CHARS)
        return math.ceil(chars / CHARS_PER_TOKEN) + _PUNCTUATION
    if kinds == "array":
        items = node.get("maxItems", UNBOUNDED_ITEMS)
        return _PUNCTUATION + items * (_tokens(node.get("items", {})) + 1)
    if kinds == "object" or "properties" in node:
        total = _PUNCTUATION
        for name, value in node.get("properties", {}).items():
            total += math.ceil(len(name) / CHARS_PER_TOKEN) + _PUNCTUATION + _tokens(value)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):  # a mapping: keys as long as a short string, values as given
            total += UNBOUNDED_ITEMS * (_tokens({"type": "string", "maxLength": 200}) + _tokens(extra))
        return total
    if kinds in _SCALAR_TOKENS:
        return _SCALAR_TOKENS[kinds]
    return math.ceil(UNBOUNDED_CHARS / CHARS_PER_TOKEN) + _PUNCTUATION  # untyped: a long string
