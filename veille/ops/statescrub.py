"""Prefect's state messages scrubbed of the configured secrets.

A task or flow run that raises gets a Failed (or Crashed) state whose message is the exception's
text (``prefect.states.format_exception``), sent to the Prefect server and shown in the UI; that
path is not logging, so the record factory of ``veille.secrets`` never sees it. Prefect 3.9 offers
no hook for it: the module function every such message goes through is wrapped once.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from veille.secrets import scrub_text

__all__ = ["install_state_scrubbing"]


def install_state_scrubbing() -> None:
    """Wrap ``prefect.states.format_exception`` with :func:`veille.secrets.scrub_text` (idempotent)."""
    import prefect.states as states

    original: Any = states.format_exception
    if getattr(original, "veille_scrubs", False):
        return

    def format_exception(exc: BaseException, tb: TracebackType | None = None) -> str:
        return scrub_text(original(exc, tb))

    format_exception.veille_scrubs = True  # type: ignore[attr-defined]
    states.format_exception = format_exception
