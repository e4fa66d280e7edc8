"""Build the run's model client from settings (never at import time)."""

from __future__ import annotations

from pathlib import Path

from veille.models.base import Model
from veille.models.caller import CallSlot, ModelClient
from veille.settings import Settings

__all__ = ["build_backend", "build_client"]


def build_backend(settings: Settings) -> Model:
    """The backend ``settings.resolved_backend()`` names: Gemini (key required) or the offline engine."""
    if settings.resolved_backend() == "gemini":
        from veille.models.gemini import GeminiModel

        return GeminiModel(settings)
    # Imported lazily: the offline engine is a separate package, heavy on rules, not needed for Gemini.
    from veille.offline import OfflineModel  # type: ignore[attr-defined]

    backend: Model = OfflineModel(settings)
    return backend


def build_client(
    settings: Settings,
    *,
    run_id: str,
    journal_path: Path | None = None,
    model: Model | None = None,
    call_slot: CallSlot | None = None,
) -> ModelClient:
    """One :class:`ModelClient` per run; ``model`` overrides the backend (tests: ScriptedModel).

    ``journal_path`` is the run's calls.jsonl; ``None`` keeps the journal in memory only.
    ``call_slot`` is the global model-call slot taken around each Gemini request (the flow hands
    in Prefect's; ``None`` takes none).
    """
    if model is not None:
        return ModelClient(
            settings, model, run_id=run_id, journal_path=journal_path, rebuildable=False, call_slot=call_slot
        )
    return ModelClient(
        settings,
        build_backend(settings),
        run_id=run_id,
        journal_path=journal_path,
        rebuildable=True,
        call_slot=call_slot,
    )
