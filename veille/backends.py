"""The backends of the model seam, and the run's client built from settings (never at import time).

This module sits above both the seam (:mod:`veille.models`) and the offline engine
(:mod:`veille.offline`), which never import each other: here the engine's pure role functions
become a :class:`~veille.models.function.FunctionModel`, the adapter that makes it a backend.
"""

from __future__ import annotations

from pathlib import Path

from veille.models.base import Model
from veille.models.caller import CallSlot, ModelClient
from veille.models.function import FunctionModel, RoleFunction
from veille.settings import Settings

__all__ = ["backend_version", "build_backend", "build_client", "offline_backend"]


def offline_backend(settings: Settings) -> FunctionModel:
    """The offline engine as a backend: one function per role, versioned by the engine's digest."""
    # Imported here: the engine is heavy on rules and not needed for Gemini.
    from veille.offline import ENGINE_NAME, engine_version, role_functions

    functions = {
        role: RoleFunction(input_type, function)
        for role, (input_type, function) in role_functions(settings.authority_file).items()
    }
    return FunctionModel(ENGINE_NAME, functions, version=engine_version(settings.authority_file))


def backend_version(settings: Settings, model: Model | None = None) -> str:
    """What names the code behind a backend's answers, for cache keys: the offline engine's digest
    (:func:`veille.offline.engine_version`); a given ``model``'s ``version`` attribute; "" for
    Gemini (its answers are the provider's: the request, in the key, is what decides them)."""
    if model is not None:
        return str(getattr(model, "version", ""))
    if settings.resolved_backend() == "gemini":
        return ""
    from veille.offline import engine_version

    return engine_version(settings.authority_file)


def build_backend(settings: Settings) -> Model:
    """The backend ``settings.resolved_backend()`` names: Gemini (key required) or the offline engine."""
    if settings.resolved_backend() == "gemini":
        from veille.models.gemini import GeminiModel

        return GeminiModel(settings)
    return offline_backend(settings)


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
    backend = model if model is not None else build_backend(settings)
    return ModelClient(settings, backend, run_id=run_id, journal_path=journal_path, call_slot=call_slot)
