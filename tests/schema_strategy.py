"""Hypothesis strategies for the instances of a wire JSON schema (the subset Gemini accepts).

Written here rather than taken from hypothesis-jsonschema (0.23.1 does not run with the pinned
hypothesis 6.170: it uses private internals that changed). Built from the schema alone, not from
the pydantic model or veille.models.wire, so "every instance validates with pydantic" is a real
check. An unknown keyword raises: a new kind of constraint must be taught here, not ignored.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["from_wire_schema"]

_ANNOTATIONS = {
    "description",
    "title",
    "format",
    "propertyOrdering",
    "default",
}  # default: a value, no constraint
_HANDLED = {
    "type",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "maxLength",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
}
_MAX_ITEMS = 4  # arrays without maxItems: long enough to repeat and mix items
_EXTRA_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=5), inner, max_size=2),
    max_leaves=4,
)


# Strategies built per schema text and ``strings`` strategy, reused: a property that derives its schema
# from each example (the planner's depends on the catalogue and caps) met the same few schemas again
# and again, and building a strategy tree (filters, builds signatures, hypothesis's recursive
# properties) cost more CPU than drawing from it. A strategy is an immutable description of values, so
# reusing it draws exactly what a fresh one would.
_BUILT: dict[tuple[str, st.SearchStrategy[str] | None], st.SearchStrategy[Any]] = {}


def from_wire_schema(
    schema: dict[str, Any], strings: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Any]:
    """Any JSON value valid for ``schema`` (extra object keys included where they are allowed).
    ``strings``: what fills every free string (not an enum), cut to its maxLength; default: any text."""
    key = (json.dumps(schema), strings)  # key order kept: it is the order answers are built in
    built = _BUILT.get(key)
    if built is None:
        built = _BUILT[key] = _build(schema, strings)
    return built


def _build(schema: dict[str, Any], strings: st.SearchStrategy[str] | None) -> st.SearchStrategy[Any]:
    unknown = set(schema) - _HANDLED - _ANNOTATIONS
    if unknown:
        raise ValueError(f"schema keyword(s) not handled by the test strategy: {sorted(unknown)}")
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        return st.one_of([_build({**rest, **branch}, strings) for branch in branches])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_build({**schema, "type": k}, strings) for k in kind])
    if kind == "object" or "properties" in schema:
        return _object(schema, strings)
    if kind == "array":
        return _array(schema, strings)
    if kind == "string":
        if strings is not None:
            return strings.map(lambda text: text[: schema.get("maxLength", len(text))])
        if "maxLength" not in schema:
            return st.text(max_size=40)
        most = int(schema["maxLength"])
        # Short strings, and strings exactly at the ceiling (one character repeated: cheap to draw).
        return st.text(max_size=min(40, most)) | st.characters(exclude_categories=("Cs",)).map(
            lambda c: c * most
        )
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    if kind == "number":
        return st.floats(
            min_value=schema.get("minimum"),
            max_value=schema.get("maximum"),
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind is None:
        return _ANY_JSON
    raise ValueError(f"unknown type {kind!r} in {json.dumps(schema)[:200]}")


def _object(
    schema: dict[str, Any], strings: st.SearchStrategy[str] | None
) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fixed = {name: _build(sub, strings) for name, sub in properties.items() if name in required}
    optional = {name: _build(sub, strings) for name, sub in properties.items() if name not in required}
    # One fixed_dictionaries for required and optional keys, and no wrapper when no extra key is
    # allowed: each strategy layer is a span per object drawn, and hypothesis's bookkeeping of spans
    # (recorded, then walked to pick mutations) cost more than the values themselves.
    known = st.fixed_dictionaries(fixed, optional=optional)
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return known
    values = _ANY_JSON if extra is True else _build(extra, strings)
    keys = _EXTRA_KEYS.filter(lambda k: k not in properties)
    return st.tuples(known, st.dictionaries(keys, values, max_size=2)).map(lambda t: {**t[1], **t[0]})


def _array(schema: dict[str, Any], strings: st.SearchStrategy[str] | None) -> st.SearchStrategy[list[Any]]:
    low = int(schema.get("minItems", 0))
    high = int(schema.get("maxItems", max(low, _MAX_ITEMS)))
    prefix = [_build(sub, strings) for sub in schema.get("prefixItems") or []]
    items = _build(schema["items"], strings) if isinstance(schema.get("items"), dict) else _ANY_JSON
    if not prefix:
        return st.lists(items, min_size=low, max_size=high)
    head = st.tuples(*prefix).map(list)
    return st.builds(
        lambda h, t: (h + t)[: max(high, len(h))],
        head,
        st.lists(items, min_size=max(0, low - len(prefix)), max_size=max(0, high - len(prefix))),
    )
