"""Corpus errors: every validation failure raises :class:`CorpusError`.

``str(e)`` names the file, the field (when there is one), the problem and what was expected, in French:
the message is read by the dossier's users (run summary, CLI error line). The structured attributes
(path, field, problem, expected) are what code reads; nothing parses the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["MAX_QUOTE", "CorpusError", "DuplicateIdError", "StrictModeError", "quote"]

MAX_QUOTE = 100  # characters of a document's value quoted in a message
_MAX_PART = 400  # a problem or expectation longer than this is cut (messages stay one short line)


def quote(value: object) -> str:
    """``repr(value)`` cut to about MAX_QUOTE characters (a hostile value never fills a log)."""
    if isinstance(value, str):
        text = repr(value[: MAX_QUOTE + 1])
    elif isinstance(value, (list, tuple, dict, set)):  # never repr a container: aliases can make it huge
        return f"<{type(value).__name__} de {len(value)} élément(s)>"
    else:
        text = repr(value)[: MAX_QUOTE + 1]
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_PART else text[: _MAX_PART - 1] + "…"


class CorpusError(ValueError):
    """Invalid corpus input. ``str(e)`` reads ``<fichier> : champ '<field>' : <problème> ; attendu : <attente>``."""

    expected_failure = True  # bad input, not a bug: logged without a traceback (veille/ops/logfilter.py)

    def __init__(self, path: Path | str, field: str | None, expected: str, problem: str) -> None:
        self.path = Path(path)
        self.field = field if field is None or len(field) <= MAX_QUOTE else field[:MAX_QUOTE] + "…"
        self.expected = _cut(expected)
        self.problem = _cut(problem)
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"champ '{self.field}' : " if self.field else ""
        return f"{self.path} : {where}{self.problem} ; attendu : {self.expected}"

    # Prefect (and multiprocessing) pickle exceptions; the default reduce would call __init__(message).
    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.field, self.expected, self.problem))


class DuplicateIdError(CorpusError):
    """Two files claim the same front-matter id: its own alert code (``ingest.duplicate_id``), told
    apart by type rather than by reading the (French) message."""


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
            problem = (
                f"{problem} (mode strict ; {len(errors) - 1} autre(s) fichier(s) invalide(s) : {others})"
            )
        super().__init__(first.path, first.field, first.expected, problem)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.errors,))
