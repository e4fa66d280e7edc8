"""Content-addressed cache of validated model responses (``<warehouse>/cache``), and the one
fingerprint function of the answer cache (:func:`fingerprint`).

The answer cache has two layers keyed by that one function (docs/architecture.md « One answer
cache »): this file's layer, around each model request, and the Prefect task layer around the steps
that call the model (``veille.tasks.answer_key``), whose key is the fingerprint of the task's inputs.

The key here is the fingerprint of everything that determines the answer: backend and its version (the
code behind a function backend's answers), model id, role, system instruction, prompt, output JSON
schema, temperature, thinking level and tools: all computed from the request, nothing to bump when
a prompt or a schema changes. Only responses that passed
schema validation are stored, one small JSON file each, written atomically (temporary file +
rename) so a crash or a concurrent writer never leaves a half-written entry. A rerun with the same
inputs is served from here and makes no API call.

The cache is derived state: an unreadable entry (or a file standing where the cache folder should be)
is moved aside (``veille.derived.set_aside``: a warning names it) and the response is asked again and
stored anew; a failed write (disk full) is a warning naming the path, never a failed run (the answer
is in hand and in the call journal).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from veille.derived import set_aside
from veille.models.base import ModelRequest, Usage
from veille.oserrors import writing
from veille.secrets import scrub_text

__all__ = ["CACHE_FORMAT", "CachedResponse", "ResponseCache", "cache_key", "fingerprint"]

logger = logging.getLogger(__name__)

CACHE_FORMAT = 1  # the layout of an entry file (not of the answers: the key holds what decides them)


@lru_cache(maxsize=512)
def _schema_json(schema: type[BaseModel]) -> Any:
    # Building a JSON Schema is the costliest part of the key; classes are immutable enough to memoise.
    return schema.model_json_schema()


def _canonical(value: Any) -> Any:
    """``value`` as plain JSON data, the same for equal values whatever their construction order:
    models as their fields, mappings with string keys (``json.dumps`` sorts them), sets sorted (their
    iteration order differs between processes), other leaves as pydantic serialises them."""
    if isinstance(value, BaseModel):
        return _canonical(value.model_dump())
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [_canonical(v) for v in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, ensure_ascii=False))
    if value is None or isinstance(value, str | int | float):
        return value
    return _canonical(to_jsonable_python(value))


def fingerprint(material: Mapping[str, Any]) -> str:
    """The answer cache's one key function: hex SHA-256 over a canonical JSON of ``material``
    (:func:`_canonical`). Both layers compute their keys with it, so neither has a version to bump."""
    canonical = json.dumps(_canonical(material), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cache_key(request: ModelRequest, backend: str, version: str = "") -> str:
    """The :func:`fingerprint` of the inputs that determine the answer; ``version``: the backend's
    (``Model.version`` when it has one)."""
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
    return fingerprint(material)


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
        except NotADirectoryError:
            return None  # the cache folder is a file: put() sets it aside
        except (OSError, ValueError, KeyError, TypeError) as exc:
            try:
                set_aside(path, type(exc).__name__, "the response is asked again and stored anew")
            except OSError as moved:  # a read-only cache: a miss each time, said each time
                logger.warning("ignoring unreadable cache entry %s (%s; %s)", path, type(exc).__name__, moved)
            return None

    def put(self, key: str, text: str, model: str, usage: Usage) -> None:
        """Store one validated response; a write that fails is a warning naming the path."""
        try:
            self._put(key, scrub_text(text), model, usage)  # a cached answer is written like any output
        except OSError as exc:
            logger.warning("could not store the model response in the cache: %s", exc)

    def _put(self, key: str, text: str, model: str, usage: Usage) -> None:
        path = self._path(key)
        for folder in (self.directory, path.parent):
            if folder.exists() and not folder.is_dir():  # a file where the cache's folder should be
                set_aside(folder, "not a folder", "the cache folder is created again")
        with writing(path.parent, "creating a model response cache folder"):
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
        with writing(path, "writing a model response cache entry"):
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(entry, handle, ensure_ascii=False)
                os.replace(tmp, path)  # atomic on POSIX and Windows
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
