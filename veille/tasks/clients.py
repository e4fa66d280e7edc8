"""The run's model client, the test seam to swap its backend, and the retry rule shared by tasks.

The flow builds one client per run (``open_client``) and passes it to the tasks; the tasks' cache
policies exclude it from their keys. The client pickles by reconstruction (see
``veille.models.caller``), so a Dask worker rebuilds it from (settings, run_id, journal path).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from prefect.tasks import exponential_backoff

from veille.models.base import Model
from veille.models.caller import ModelClient
from veille.models.factory import build_client
from veille.ops.limits import amodel_call_slot
from veille.settings import Settings

__all__ = [
    "MODEL_TASK_RETRIES",
    "backend_label",
    "is_retryable",
    "model_key",
    "model_override",
    "open_client",
    "retry_transient",
    "role_keys",
]

# Tests run the real flow with a ScriptedModel: set here, read when the flow builds its client.
# A context variable (not a module global) so parallel tests in one process do not see each other's.
_MODEL_OVERRIDE: ContextVar[Model | None] = ContextVar("veille_model_override", default=None)


@contextmanager
def model_override(model: Model) -> Iterator[Model]:
    """Within this block, flows run in this context use ``model`` as their backend."""
    token = _MODEL_OVERRIDE.set(model)
    try:
        yield model
    finally:
        _MODEL_OVERRIDE.reset(token)


def backend_label(settings: Settings) -> str:
    """gemini | offline | scripted (run.json's ``backend``)."""
    override = _MODEL_OVERRIDE.get()
    return override.name if override is not None else settings.resolved_backend()


def open_client(settings: Settings, run_id: str, journal_path: Path) -> ModelClient:
    """The run's client, appending every call to ``journal_path`` (calls.jsonl). Each Gemini request
    holds one slot of the Prefect global limit on model calls (a no-op without a server or limit)."""
    return build_client(
        settings,
        run_id=run_id,
        journal_path=journal_path,
        model=_MODEL_OVERRIDE.get(),
        call_slot=amodel_call_slot,
    )


def model_key(settings: Settings, role: str) -> str:
    """What of the settings determines a role's answer: part of the task cache keys."""
    spec = settings.role(role)
    return f"{backend_label(settings)}|{spec.model}|{spec.thinking}|{spec.temperature}"


def role_keys(settings: Settings) -> dict[str, str]:
    """:func:`model_key` of every role, by role name."""
    return {role: model_key(settings, role) for role in settings.roles}


def is_retryable(exc: BaseException) -> bool:
    """Transient model errors and I/O errors are worth a retry; schema exhaustion, a bad plan or a
    bad corpus are not (they would fail the same way)."""
    if getattr(exc, "retryable", None) is not None:
        return bool(exc.retryable)  # type: ignore[attr-defined]
    return isinstance(exc, OSError)


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry only what :func:`is_retryable` accepts."""
    data = getattr(state, "data", None)
    return isinstance(data, BaseException) and is_retryable(data)


# The retry rule of every task that calls the model: twice more, backing off, transient errors only.
MODEL_TASK_RETRIES: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": exponential_backoff(backoff_factor=2),
    "retry_condition_fn": retry_transient,
}
