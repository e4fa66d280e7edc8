"""The run's model client and the retry rule shared by tasks.

The flow opens one live client per run (``open_client``) and hands the tasks a :class:`RunClient`:
plain data (run id, settings, journal path), never the live object. In the flow's process it reaches
the run's live client through a registry keyed by run id; in another process (a Dask worker) it
builds one for the run there, appending to the same calls.jsonl. The tasks' cache policies exclude
it from their keys.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect.tasks import exponential_backoff

from veille.backends import backend_version, build_client
from veille.fingerprint import code_digest, text_digest
from veille.models.base import ModelError
from veille.models.caller import ModelClient
from veille.ops.limits import amodel_call_slot
from veille.providers import provider
from veille.resources import data_dir
from veille.settings import Settings

if TYPE_CHECKING:
    from veille.alerts import Alert
    from veille.journal import CallJournal
    from veille.models.base import Model
    from veille.roles.base import AskMethod

__all__ = [
    "MODEL_TASK_RETRIES",
    "RunClient",
    "backend_label",
    "is_retryable",
    "model_key",
    "offline_client",
    "open_client",
    "retry_transient",
    "role_keys",
]


def backend_label(settings: Settings) -> str:
    """The night's provider (veille/providers.py): run.json's ``backend``."""
    return settings.resolved_backend()


# The live clients of this process, by run id (RunClient.client). A table, not a field of the
# handle: a handle copied by pickling in the flow's own process must reach the same live client
# (one journal, one loop), and only the run id survives pickling. Written by open_client alone.
_RUN_CLIENTS: dict[str, ModelClient] = {}
_RUN_LOCK = threading.Lock()


@dataclass(frozen=True)
class RunClient:
    """What tasks get instead of the live client: an :class:`~veille.roles.base.Asker` made of data.

    ``client()`` is the run's live client in this process (registered by :func:`open_client`), or
    one built for the run here from the settings (a Dask worker: a fresh backend and key lookup,
    appending to the same ``journal_path``). A run whose backend is an object of the flow's process
    (a provider registered at run time, ``veille.providers.registered``: tests) cannot be rebuilt in
    another process: that raises a clear error.
    """

    run_id: str
    settings: Settings
    journal_path: Path
    rebuildable: bool = True

    @property
    def backend(self) -> str:
        """The night's provider name (the live client's)."""
        return self.client().backend

    def role_backend(self, role: str) -> Model:
        """The backend that answers ``role`` (what it declares: free, tools, answers by code)."""
        return self.client().role_backend(role)

    def client(self) -> ModelClient:
        with _RUN_LOCK:
            live = _RUN_CLIENTS.get(self.run_id)
            if live is not None and not live.closed:
                return live
            if not self.rebuildable:
                raise RuntimeError(
                    f"run {self.run_id}: its backend is an explicit model object (a provider registered "
                    "at run time) of another process; it cannot be rebuilt here"
                )
            built = build_client(
                self.settings, run_id=self.run_id, journal_path=self.journal_path, call_slot=amodel_call_slot
            )
            _RUN_CLIENTS[self.run_id] = built
            return built

    @property
    def ask(self) -> AskMethod:
        """The live client's own ``ask`` (``handle.ask(ROLE, data)`` calls it directly): the handle
        resolves the client and steps aside, so it adds no function to the call path."""
        return self.client().ask

    @property
    def journal(self) -> CallJournal:
        return self.client().journal

    def budget_spent(self) -> bool:
        """Whether the night's cost budget refuses model requests now (veille/models/budget.py)."""
        return self.client().budget.exhausted()

    def alerts(self) -> list[Alert]:
        return self.client().alerts()


@contextmanager
def open_client(settings: Settings, run_id: str, journal_path: Path) -> Iterator[RunClient]:
    """The run's client, appending every call to ``journal_path`` (calls.jsonl), registered for the
    run's tasks and closed at the end. Each Gemini request holds one slot of the Prefect global limit
    on model calls (a no-op without a server or limit). The backends are the settings' providers,
    nothing else: a test hands its double in by registering it as a provider and naming it."""
    live = build_client(settings, run_id=run_id, journal_path=journal_path, call_slot=amodel_call_slot)
    with _RUN_LOCK:
        _RUN_CLIENTS[run_id] = live
    rebuildable = not any(provider(settings.role_provider(role)).in_process for role in settings.roles)
    try:
        yield RunClient(run_id, settings, journal_path, rebuildable=rebuildable)
    finally:
        with _RUN_LOCK:
            if _RUN_CLIENTS.get(run_id) is live:
                del _RUN_CLIENTS[run_id]
        live.close()


@contextmanager
def offline_client(settings: Settings, run_id: str, journal_path: Path) -> Iterator[ModelClient]:
    """The offline engine as a client of the run, journaled (cost 0) in the run's calls.jsonl: what
    finishes the work the night's cost budget refused to the model (veille/models/budget.py)."""
    # Every role on the engine, a role's own provider included (the budget refused them all).
    roles = {name: spec.model_copy(update={"provider": None}) for name, spec in settings.roles.items()}
    engine = settings.model_copy(update={"backend": "offline", "roles": roles})
    client = build_client(engine, run_id=run_id, journal_path=journal_path)
    try:
        yield client
    finally:
        client.close()


# The modules whose code turns a role's input into the cached result, besides the role's own module
# (instructions, prompt builder, output schema): the step that validates and repairs the answer.
# Their whole ``veille`` import closure enters the key (veille.fingerprint.code_digest).
_STEP_MODULES: dict[str, tuple[str, ...]] = {
    "planner": ("veille.steps.plan", "veille.steps.plan_reuse"),
    "analyst": ("veille.steps.analyse",),
    "analyst_update": ("veille.steps.analyse_update",),
    "writer": ("veille.steps.write",),
    "critic": ("veille.steps.review",),
    "reviser": ("veille.steps.review",),
    "judge": ("veille.graders.judge",),
}


def model_key(settings: Settings, role: str) -> str:
    """What determines a role's cached result, computed, never bumped by hand: the backend and
    the role's model settings, plus a digest of the code behind it: the role's module (its
    instructions, prompt and output schema), the step that handles its answer, each with what it
    imports, and the backend's own version (the offline engine's code and data digest). The
    bundled data files count for every provider: the steps read word lists and thresholds from
    them (dates, request, numbers, coverage), so an edit there must not serve a stale plan or
    analysis on a model backend either. Which file a role reads is not traced: all of them count."""
    spec = settings.role(role)
    modules = (f"veille.roles.{role}", *_STEP_MODULES.get(role, ()))
    bundled = tuple(sorted(p for p in data_dir().rglob("*") if p.is_file()))
    code = text_digest(code_digest(modules, bundled), backend_version(settings, role=role))
    label = settings.role_provider(role)
    return f"{label}|{spec.model}|{spec.thinking}|{spec.temperature}|{code}"


def role_keys(settings: Settings) -> dict[str, str]:
    """:func:`model_key` of every role, by role name."""
    return {role: model_key(settings, role) for role in settings.roles}


def is_retryable(exc: BaseException) -> bool:
    """I/O errors are worth a task retry. A model error never is: the client's retry policy
    (veille/models/retry.py) already spent the call's request budget, and a task retry would
    multiply it. Schema exhaustion, a bad plan or a bad corpus would fail the same way."""
    if isinstance(exc, ModelError):
        return False
    if getattr(exc, "retryable", None) is not None:
        return bool(exc.retryable)  # type: ignore[attr-defined]
    return isinstance(exc, OSError)


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry only what :func:`is_retryable` accepts."""
    data = getattr(state, "data", None)
    return isinstance(data, BaseException) and is_retryable(data)


# The retry rule of every task that calls the model: twice more, backing off, I/O errors only.
MODEL_TASK_RETRIES: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": exponential_backoff(backoff_factor=2),
    "retry_condition_fn": retry_transient,
}
