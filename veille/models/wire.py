"""The JSON schema a role's output model is sent as (Gemini's ``response_json_schema``).

Gemini accepts a subset of JSON Schema (google-genai 3.3.0, ``GenerateContentConfig.response_json_schema``):
``$id $defs $ref $anchor type format title description enum items prefixItems minItems maxItems
minimum maximum anyOf oneOf properties additionalProperties required`` (+ ``propertyOrdering``), and
a sub-schema with ``$ref`` may carry nothing else. ``maxLength`` is carried too (issue 23): the
SDK's ``JSONSchema`` type has ``max_length`` and Gemini's OpenAPI ``Schema`` has ``maxLength``,
while the JSON-schema guide lists only ``enum``/``format`` for strings — so a model may not honour
it, and the output models validate it on arrival whatever the model did (veille.roles.limits).
Pydantic's schema is turned into that subset:

- ``$ref`` is inlined (our output models are not recursive), its sibling ``description`` kept;
- ``const`` (a one-value ``Literal``) becomes a one-value ``enum``;
- ``title`` and ``default`` are dropped (annotations, not constraints), and every property becomes required,
  so a schema-following model always writes every field (stricter than pydantic, never looser);
- any other keyword is dropped and reported by :func:`unsupported_keywords`: a constraint the
  wire cannot carry is one a schema-following model may break, so tests require the list empty.

The guarantee this module exists for: an instance of :func:`wire_schema` validates with the model.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

__all__ = ["SUPPORTED_KEYWORDS", "UnsupportedSchemaError", "unsupported_keywords", "wire_schema"]

SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "description",
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
        "additionalProperties",
        "required",
        "propertyOrdering",
    }
)
# Keywords with no effect on which instances are valid: dropped silently.
_ANNOTATIONS = frozenset({"title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"})
# Keywords whose value maps names to sub-schemas, or lists sub-schemas.
_SCHEMA_MAPS = frozenset({"properties"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "prefixItems"})


class UnsupportedSchemaError(ValueError):
    """The model's JSON schema cannot be inlined (a recursive ``$ref``)."""


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The wire JSON schema of ``model`` (a fresh dict: callers may mutate it)."""
    return _convert(model)[0]


def unsupported_keywords(model: type[BaseModel]) -> list[str]:
    """JSON-schema keywords of ``model`` that the wire cannot carry (``path: keyword``), dropped."""
    return list(_convert(model)[1])


@lru_cache(maxsize=512)
def _convert_cached(model: type[BaseModel]) -> tuple[Any, tuple[str, ...]]:
    source = model.model_json_schema()
    defs = source.pop("$defs", {})
    dropped: list[str] = []
    return _node(source, defs, "", dropped, ()), tuple(dropped)


def _convert(model: type[BaseModel]) -> tuple[dict[str, Any], tuple[str, ...]]:
    schema, dropped = _convert_cached(model)
    return copy.deepcopy(schema), dropped


def _node(
    node: dict[str, Any], defs: dict[str, Any], path: str, dropped: list[str], seen: tuple[str, ...]
) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise UnsupportedSchemaError(f"{path or '/'}: recursive $ref {name!r} cannot be inlined")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _node(merged, defs, path, dropped, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        where = f"{path}/{key}"
        if key == "const":
            out["enum"] = [value]
        elif key in _SCHEMA_MAPS:
            out[key] = {k: _node(v, defs, f"{where}/{k}", dropped, seen) for k, v in value.items()}
        elif key in _SCHEMA_LISTS:
            out[key] = [_node(v, defs, f"{where}/{i}", dropped, seen) for i, v in enumerate(value)]
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _node(value, defs, where, dropped, seen)
        elif key in SUPPORTED_KEYWORDS:
            out[key] = value
        elif key not in _ANNOTATIONS:
            dropped.append(f"{path or '/'}: {key}")
    if "properties" in out:
        out["required"] = list(out["properties"])
    return out
