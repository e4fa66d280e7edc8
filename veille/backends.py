"""The backends of the model seam, and the run's client built from settings (never at import time).

This module sits above both the seam (:mod:`veille.models`) and the offline engine
(:mod:`veille.offline`), which never import each other: here the engine's pure role functions
become a :class:`~veille.models.function.FunctionModel`, the adapter that makes it a backend.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veille.models.base import Model
from veille.models.caller import CallSlot, ModelClient
from veille.models.function import FunctionModel, RoleFunction
from veille.providers import build_provider, provider_version
from veille.settings import Settings

if TYPE_CHECKING:
    from veille.offline import RoleFunctions

__all__ = [
    "backend_version",
    "build_backend",
    "build_client",
    "offline_backend",
    "offline_version",
    "role_backends",
]


def offline_backend(settings: Settings) -> FunctionModel:
    """The offline engine as a backend: one function per role, versioned by the engine's digest.
    The engine's rules are loaded on the first answer, not here: a night that asks no role (an
    unchanged night, veille.run.nightskip) opens its client without them."""
    # Imported here: the engine is heavy on rules and not needed for Gemini.
    from veille.offline import ENGINE_NAME, ROLE_INPUTS, engine_version, role_functions

    engine = cache(partial(role_functions, settings.authority_file))
    functions = {
        role: RoleFunction(input_type, partial(_answer, engine, role))
        for role, input_type in ROLE_INPUTS.items()
    }
    return FunctionModel(ENGINE_NAME, functions, version=engine_version(settings.authority_file))


def _answer(engine: Callable[[], RoleFunctions], role: str, data: Any) -> Any:
    """``role``'s engine function on ``data``, the engine built on the first answer."""
    return engine()[role][1](data)


def offline_version(settings: Settings) -> str:
    """The offline engine's version (its code and data digest) without building it (registry)."""
    from veille.offline import engine_version

    return engine_version(settings.authority_file)


def backend_version(settings: Settings, role: str | None = None) -> str:
    """What names the code behind a backend's answers, for cache keys: the version the registry
    gives for ``role``'s provider (the night's when no role): the offline engine's digest, "" for a
    provider whose answers are its own."""
    name = settings.role_provider(role) if role is not None else settings.resolved_backend()
    return provider_version(name, settings)


def build_backend(settings: Settings) -> Model:
    """The backend of the night's provider (``settings.resolved_backend()``, veille/providers.py)."""
    return build_provider(settings.resolved_backend(), settings)


def role_backends(settings: Settings, night: Model) -> dict[str, Model]:
    """The backends of the roles on a provider other than the night's, one per provider. By
    provider name, not by ``night.name``: the night's backend may be any object standing for its
    provider (a test double)."""
    night_provider = settings.resolved_backend()
    built: dict[str, Model] = {night_provider: night}
    chosen: dict[str, Model] = {}
    for role in settings.roles:
        name = settings.role_provider(role)
        if name != night_provider:
            if name not in built:
                built[name] = build_provider(name, settings)
            chosen[role] = built[name]
    return chosen


def build_client(
    settings: Settings,
    *,
    run_id: str,
    journal_path: Path | None = None,
    model: Model | None = None,
    call_slot: CallSlot | None = None,
) -> ModelClient:
    """One :class:`ModelClient` per run; ``model`` overrides the backend of every role (tests:
    ScriptedModel); without it, each role gets its provider's (``roles.<role>.provider``).

    ``journal_path`` is the run's calls.jsonl; ``None`` keeps the journal in memory only.
    ``call_slot`` is the global model-call slot taken around each HTTP request (the flow hands
    in Prefect's; ``None`` takes none).
    """
    if model is not None:
        return ModelClient(settings, model, run_id=run_id, journal_path=journal_path, call_slot=call_slot)
    night = build_backend(settings)
    return ModelClient(
        settings,
        night,
        run_id=run_id,
        journal_path=journal_path,
        call_slot=call_slot,
        role_models=role_backends(settings, night),
    )
