"""Small readers of run-folder files shared by the table readers (rows, runrow)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veille.warehouse.errors import WarehouseError

__all__ = ["as_int", "as_str_list", "parse_ts", "read_json", "salvaging"]

# Recording a dead run whose files are garbage (veille.run.recovery): what cannot be read counts as missing.
_SALVAGE: ContextVar[list[str] | None] = ContextVar("_SALVAGE", default=None)


@contextlib.contextmanager
def salvaging() -> Iterator[list[str]]:
    """Within the block, a malformed run-folder file or timestamp is treated as absent instead of raising;
    the yielded list collects the problems (one line each, naming the file)."""
    problems: list[str] = []
    token = _SALVAGE.set(problems)
    try:
        yield problems
    finally:
        _SALVAGE.reset(token)


def _salvaged(error: WarehouseError) -> bool:
    problems = _SALVAGE.get()
    if problems is None:
        return False
    problems.append(str(error)[:300])
    return True


def read_json(path: Path, missing: list[str], expected: type) -> Any:
    """The file's JSON value (of type ``expected``); None, and its name in ``missing``, when absent."""
    if not path.exists():
        missing.append(path.name)
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        error = WarehouseError(f"{path}: not valid UTF-8 JSON ({exc})")
        if _salvaged(error):
            missing.append(path.name)
            return None
        raise error from exc
    if not isinstance(value, expected):
        error = WarehouseError(f"{path}: expected a JSON {expected.__name__}, got {type(value).__name__}")
        if _salvaged(error):
            missing.append(path.name)
            return None
        raise error
    return value


def parse_ts(value: Any, where: str) -> datetime | None:
    """An ISO 8601 timestamp in UTC (None for null or empty)."""
    if value in (None, ""):
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        error = WarehouseError(f"{where}: {str(value)[:100]!r} is not an ISO 8601 timestamp")
        if _salvaged(error):
            return None
        raise error from exc
    # Naive timestamps in the run folder are UTC by contract.
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def as_str_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
