"""Content-addressed cache of validated model responses (``<warehouse>/cache``).

The key is the SHA-256 of everything that determines the answer: backend and its version (the
code behind a function backend's answers), model id, role, system instruction, prompt, output JSON
schema, temperature, thinking level and tools: all computed from the request, nothing to bump when
a prompt or a schema changes. Only responses that passed
schema validation are stored, one small JSON file each, written atomically (temporary file +
rename) so a crash or a concurrent writer never leaves a half-written entry. A rerun with the same
inputs is served from here and makes no API call.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from veille.models.base import ModelRequest, Usage

__all__ = ["CACHE_FORMAT", "CachedResponse", "ResponseCache", "cache_key"]

logger = logging.getLogger(__name__)

CACHE_FORMAT = 1  # the layout of an entry file (not of the answers: the key holds what decides them)


@lru_cache(maxsize=512)
def _schema_json(schema: type[BaseModel]) -> Any:
    # Building a JSON Schema is the costliest part of the key; classes are immutable enough to memoise.
    return schema.model_json_schema()


def cache_key(request: ModelRequest, backend: str, version: str = "") -> str:
    """Hex SHA-256 over a canonical JSON of the inputs that determine the answer; ``version``: the
    backend's (``Model.version`` when it has one)."""
    material = {
        "format": CACHE_FORMAT,
        "backend": backend,
        "model": request.model,
        "role": request.role,
        "system": request.system,
        "prompt": request.prompt,
        "schema": _schema_json(request.output_schema),
        "temperature": request.temperature,
        "thinking": request.thinking,
    }
    if version:  # only then: the keys of unversioned backends (Gemini) stay what they were
        material["version"] = version
    if request.tools:  # only then: the keys of tool-less requests stay what they were
        material["tools"] = list(request.tools)
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    text: str
    model: str
    usage: Usage  # what the original call consumed (informational: a hit itself costs nothing)
    created_at: str


class ResponseCache:
    """``<directory>/<key[:2]>/<key>.json``; unreadable entries count as misses."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return CachedResponse(
                text=data["text"],
                model=data["model"],
                usage=Usage(**data.get("usage", {})),
                created_at=data["created_at"],
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("ignoring unreadable cache entry %s (%s)", path, type(exc).__name__)
            return None

    def put(self, key: str, text: str, model: str, usage: Usage) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": CACHE_FORMAT,
            "text": text,
            "model": model,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "estimated": usage.estimated,
            },
            "created_at": datetime.now(UTC).isoformat(),
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, ensure_ascii=False)
            os.replace(tmp, path)  # atomic on POSIX and Windows
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
