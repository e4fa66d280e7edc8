"""Corpus errors: every validation failure raises :class:`CorpusError`.

``str(e)`` names the file, the field (when there is one), the problem and what was expected; the
messages are listed in docs/corpus-format.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["CorpusError", "StrictModeError"]


class CorpusError(ValueError):
    """Invalid corpus input. ``str(e)`` reads ``<file>: field '<field>': <problem>; expected <expectation>``."""

    expected_failure = True  # bad input, not a bug: logged without a traceback (veille/ops/logfilter.py)

    def __init__(self, path: Path | str, field: str | None, expected: str, problem: str) -> None:
        self.path = Path(path)
        self.field = field
        self.expected = expected
        self.problem = problem
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"field '{self.field}': " if self.field else ""
        return f"{self.path}: {where}{self.problem}; expected {self.expected}"

    # Prefect (and multiprocessing) pickle exceptions; the default reduce would call __init__(message).
    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.field, self.expected, self.problem))


class StrictModeError(CorpusError):
    """Strict ingestion found invalid documents. Attributes describe the first one (in path order);
    ``errors`` holds all of them and the message names how many others there are."""

    def __init__(self, errors: list[CorpusError]) -> None:
        if not errors:
            raise ValueError("StrictModeError needs at least one error")
        self.errors = list(errors)
        first = errors[0]
        problem = first.problem
        if len(errors) > 1:
            others = ", ".join(str(e.path) for e in errors[1:4]) + (", …" if len(errors) > 4 else "")
            problem = f"{problem} (strict mode; {len(errors) - 1} more invalid file(s): {others})"
        super().__init__(first.path, first.field, first.expected, problem)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.errors,))
