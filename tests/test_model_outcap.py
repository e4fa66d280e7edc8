"""The output cap of every request (issue 38 item 4, veille.models.outcap): derived from the role's
schema ceilings, it holds the longest valid answer, so only an answer past every ceiling is cut."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import BaseModel

from tests.role_inputs import role_cases
from veille.models.outcap import (
    CHARS_PER_TOKEN,
    MIN_OUTPUT_TOKENS,
    THINKING_TOKENS,
    max_output_tokens,
    schema_tokens,
)
from veille.models.wire import wire_schema
from veille.roles.base import Role
from veille.tokens import CHARS_PER_TOKEN as PROSE_CHARS_PER_TOKEN

CASES = role_cases()


def _longest(node: dict[str, Any]) -> Any:
    """The longest instance of a wire schema: strings at maxLength, lists at maxItems, longest enums."""
    if "anyOf" in node:
        return max((_longest(o) for o in node["anyOf"]), key=lambda v: len(json.dumps(v, ensure_ascii=False)))
    if "enum" in node:
        return max(node["enum"], key=lambda v: len(json.dumps(v, ensure_ascii=False)))
    kind = node.get("type")
    if kind == "object":
        return {k: _longest(v) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        return [_longest(node.get("items", {})) for _ in range(node.get("maxItems", 30))]
    if kind == "string":
        return "é" * node.get("maxLength", 2_000)
    if kind == "integer":
        return node.get("maximum", 10**6)
    if kind == "number":
        return 1.0e15
    return True


@pytest.mark.parametrize(("case", "role", "data"), CASES, ids=[c[0] for c in CASES])
def test_the_longest_valid_answer_fits_its_schema_tokens(
    case: str, role: Role[BaseModel, BaseModel], data: BaseModel
) -> None:
    schema = role.schema_for(data)
    answer = json.dumps(_longest(wire_schema(schema)), ensure_ascii=False)
    # Written at 3 characters a token, denser than prose's 4 (veille.tokens): it still fits.
    assert CHARS_PER_TOKEN < PROSE_CHARS_PER_TOKEN
    assert math.ceil(len(answer) / CHARS_PER_TOKEN) <= schema_tokens(schema), case


@pytest.mark.parametrize(("case", "role", "data"), CASES, ids=[c[0] for c in CASES])
def test_every_cap_is_within_the_bound_and_leaves_room_for_thinking(
    case: str, role: Role[BaseModel, BaseModel], data: BaseModel
) -> None:
    schema = role.schema_for(data)
    for thinking, allowance in THINKING_TOKENS.items():
        for bound in (256, 4_096, 32_768, 10**6):
            cap = max_output_tokens(schema, thinking, bound)
            assert min(bound, MIN_OUTPUT_TOKENS) <= cap <= bound
            if bound >= schema_tokens(schema) + allowance:  # room: the schema and the thinking
                assert cap == max(schema_tokens(schema) + allowance, MIN_OUTPUT_TOKENS), case
    assert max_output_tokens(schema, "low", 5_000, grounded=True) == 5_000
