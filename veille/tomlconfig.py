"""Loading a TOML config file into a pydantic model, with errors that name the file and the field."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["load_toml_model"]

M = TypeVar("M", bound=BaseModel)


def load_toml_model(path: Path, model: type[M], *, error: type[Exception], what: str, expected: str) -> M:
    """``model`` validated from the TOML file ``path``; any problem raises ``error`` with a message that
    names the file, what it should be (``expected``) or the offending fields (``what``: e.g. "grid")."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise error(f"{path}: {what} file not found (expected {expected})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise error(f"{path}: invalid {what}: {problems}") from exc
