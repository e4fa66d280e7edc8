"""The model client: the one place every LLM role call goes through.

For each call: cache lookup → the night's budget admits the request at its most (its output capped
by ``ModelRequest.max_output_tokens``, :mod:`veille.models.outcap`) → ``backend.generate`` (under a
concurrency cap) → the text read leniently and validated item by item with the role's pydantic
schema (:mod:`veille.models.salvage`) → when nothing usable remains, re-ask with the validation
errors fed back (``ModelRequest.feedback``; never the answer), up to ``settings.reask_attempts``
times → :class:`~veille.models.base.SchemaValidationError` at the end; a transport failure is sent again
as :class:`~veille.models.retry.RetryPolicy` decides (the one retry layer: see
:mod:`veille.models.attempts`). Every request is a journal record; cost comes from the price table;
validated answers of paid backends go to the response cache.

Threads. Prefect runs tasks in a thread pool, while an async HTTP client must stay on the loop it
was first used on: the client owns one event-loop thread (started on first use) where the backends
and the semaphore live. A call is prepared in the caller's thread (a cache hit ends there); only its
request loop runs on the loop thread (``call`` blocks for it, ``acall`` awaits it from any loop).

Pickling. A ``ModelClient`` is a live object (a thread, an event loop, connections, an open journal
file): never pickled. Tasks get a plain-data handle (``tasks.clients.RunClient``) instead.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from veille.alerts import Alert, alert
from veille.itempolicy import ItemPolicy
from veille.journal import CallJournal, prefect_run_ids
from veille.models.attempts import GroundingBudgetError, LogicalCall, Recorder, new_call_id
from veille.models.base import Model, ModelRequest, ModelResult
from veille.models.budget import CostBudget
from veille.models.cache import ResponseCache, cache_key
from veille.models.loop import LoopThread
from veille.models.outcap import max_output_tokens
from veille.models.pricing import PriceTable
from veille.models.retry import RetryPolicy
from veille.models.routes import Route

if TYPE_CHECKING:
    from veille.roles.base import Role
    from veille.settings import Settings

__all__ = ["BUDGET_ALERT", "CallSlot", "ModelClient"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

# The global model-call slot (a Prefect concurrency limit), as a function of the settings.
CallSlot = Callable[["Settings"], AbstractAsyncContextManager[Any]]

BUDGET_ALERT = "cost.budget_exceeded"  # the night's cost budget refused at least one call


class ModelClient:
    """Validated, cached, journalled, concurrency-capped calls for one run: to ``model``, and to
    ``role_models[role]`` for a role on a provider of its own (``roles.<role>.provider``)."""

    def __init__(
        self,
        settings: Settings,
        model: Model,
        *,
        run_id: str,
        journal_path: Path | None = None,
        prices: PriceTable | None = None,
        call_slot: CallSlot | None = None,
        role_models: Mapping[str, Model] | None = None,
    ) -> None:
        self.settings = settings
        self.model = model
        # One route per backend (veille/models/routes.py): what a call costs and may take is what
        # its backend declares, never a comparison of names.
        self._routes = {id(model): Route(self, model)}
        self._role_routes: dict[str, Route] = {}
        for role, backend in (role_models or {}).items():
            route = self._routes.setdefault(id(backend), Route(self, backend))
            self._role_routes[role] = route
        self.run_id = run_id
        self.journal_path = journal_path
        self.prices = prices if prices is not None else PriceTable.load(settings.prices_file)
        self._journal = CallJournal(journal_path)
        self._cache = (
            ResponseCache(settings.cache_dir)
            if settings.use_cache and any(r.model.cacheable for r in self._routes.values())
            else None
        )
        self._call_slot = call_slot  # handed in by the flow: the model layer knows nothing of Prefect ops
        self._unknown_models: set[str] = set()
        self._unknown_grounding: set[str] = set()  # grounded models without a grounding price
        self._grounded_calls = 0
        # The night's cost budget: free backends spend nothing (their routes never ask it).
        limit = None if all(r.model.free for r in self._routes.values()) else settings.max_cost_usd
        self._budget = CostBudget(limit, journal_path, self._journal)
        self._lock = threading.Lock()
        self._loop_thread: LoopThread | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._closed = False

    # --- public API -------------------------------------------------------------------------
    @property
    def journal(self) -> CallJournal:
        return self._journal

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy.from_settings(self.settings)

    @property
    def backend(self) -> str:
        """The night's provider (a role may have its own: :meth:`role_backend`)."""
        return self.model.name

    def role_backend(self, role: str) -> Model:
        """The backend that answers ``role``."""
        return self._route(role).model

    def _route(self, role: str) -> Route:
        return self._role_routes.get(role) or self._routes[id(self.model)]

    @property
    def backends(self) -> list[Model]:
        """Every backend of the client, the night's first."""
        return [route.model for route in self._routes.values()]

    @property
    def unknown_models(self) -> list[str]:
        """Models called that are not in the price table (their cost is None)."""
        with self._lock:
            return sorted(self._unknown_models)

    @property
    def budget(self) -> CostBudget:
        return self._budget

    def alerts(self) -> list[Alert]:
        """One alert per model whose calls could not be priced; one when the cost budget refused calls."""
        where = self.prices.path or "the price table"
        return (
            self._budget_alerts()
            + [
                alert(
                    "record",
                    "cost.unknown_model",
                    f"Model {model!r} is not in {where}: its calls are recorded with cost null.",
                    severity="warning",
                    subject=model,
                )
                for model in self.unknown_models
            ]
            + [
                alert(
                    "record",
                    "cost.unknown_grounding",
                    f"Model {model!r} has no Google Search grounding price in {where}: its grounded calls "
                    "are recorded with cost null.",
                    subject=model,
                )
                for model in sorted(self._unknown_grounding)
            ]
        )

    def _budget_alerts(self) -> list[Alert]:
        refused = self._budget.refused()
        if not refused:
            return []
        roles = ", ".join(f"{role} ×{n}" for role, n in sorted(refused.items()))
        return [
            alert(
                "record",
                BUDGET_ALERT,
                f"budget de coût de la nuit atteint : {self._budget.spent():.4f} $ dépensés pour "
                f"max_cost_usd = {self._budget.limit:g} $ ; {sum(refused.values())} appel(s) au modèle "
                f"non envoyé(s) ({roles}), car ce qu'il pouvait coûter au plus (son entrée et sa sortie "
                "maximale, aux prix du modèle) dépassait ce qui restait du budget : la nuit est finie par "
                "le code (plan construit par le code, analyste hors ligne, dossier rendu par le code, "
                "critique et notes sautées)",
                severity="error",
            )
        ]

    def call(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        *,
        input: BaseModel | None = None,
        subtask_id: str | None = None,
        tools: tuple[str, ...] = (),
        language: str = "",
        items: ItemPolicy | None = None,
    ) -> ModelResult[T]:
        """Blocking call, safe from any thread except the client's own loop thread. ``input``: the
        role's typed input the prompt was built from (what a function backend answers from);
        ``language``: the one the answer's prose must be in ("": not checked); ``items``: the
        answer's lists kept item by item (veille.models.salvage)."""
        loop_thread = self._caller_loop()
        ids = prefect_run_ids()  # here, in the caller's thread: the loop thread has no Prefect context
        logical = self._logical(role, system, prompt, schema, input, subtask_id, ids, tools, language, items)
        hit = logical.begin()
        if hit is not None:
            return hit
        return self._submit(loop_thread, logical.run()).result()

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]:
        """Ask ``role`` about ``data``: its instructions, its prompt for the data, its schema for it.
        The call path's first function (docs/architecture.md): prepared here, in the caller's thread
        (a cache hit returns from here), only the request loop (``LogicalCall.run``) hops threads."""
        loop_thread = self._caller_loop()
        logical = self._logical(
            role.name,
            role.instructions,
            role.build_prompt(data),
            role.schema_for(data),
            data,
            subtask_id,
            prefect_run_ids(),
            role.tools,
            role.language_for(data),
            role.items,
        )
        hit = logical.begin()
        if hit is not None:
            return hit
        return self._submit(loop_thread, logical.run()).result()

    async def acall(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        *,
        input: BaseModel | None = None,
        subtask_id: str | None = None,
        tools: tuple[str, ...] = (),
        language: str = "",
        items: ItemPolicy | None = None,
    ) -> ModelResult[T]:
        """Awaitable call, from any event loop."""
        loop_thread = self._ensure_loop()
        ids = prefect_run_ids()
        logical = self._logical(role, system, prompt, schema, input, subtask_id, ids, tools, language, items)
        hit = logical.begin()
        if hit is not None:
            return hit
        if asyncio.get_running_loop() is loop_thread.loop:
            return await logical.run()
        return await asyncio.wrap_future(self._submit(loop_thread, logical.run()))

    def close(self) -> None:
        """Cancel calls still in flight, close the backend's connections, stop the loop thread and
        close the journal file. Idempotent; not callable from the client's own loop."""
        with self._lock:
            loop_thread = self._loop_thread
            if loop_thread is not None and threading.current_thread() is loop_thread.thread:
                raise RuntimeError("ModelClient.close() from the client's own event loop")
            if self._closed:
                return
            self._closed = True
            self._loop_thread = None
        if loop_thread is not None:
            try:
                loop_thread.cancel_pending()
                for backend in self.backends:
                    asyncio.run_coroutine_threadsafe(backend.aclose(), loop_thread.loop).result(timeout=10)
            except Exception as exc:  # closing must not hide the run's real outcome
                logger.warning("closing the %s backend failed: %s", self.backend, type(exc).__name__)
            loop_thread.stop()
        self._journal.close()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ModelClient(backend={self.backend!r}, run_id={self.run_id!r})"

    @property
    def closed(self) -> bool:
        return self._closed

    def __reduce__(self) -> Any:
        raise TypeError(
            "a ModelClient is a live object and is not pickled; hand tasks a tasks.clients.RunClient"
        )

    # --- loop plumbing ----------------------------------------------------------------------
    def _caller_loop(self) -> LoopThread:
        """The loop thread, for a blocking caller other than the loop thread (it would wait on itself)."""
        loop_thread = self._ensure_loop()
        if threading.current_thread() is loop_thread.thread:
            raise RuntimeError("ModelClient.call() from the client's own event loop; use `await acall()`")
        return loop_thread

    def _ensure_loop(self) -> LoopThread:
        with self._lock:
            if self._closed:
                raise RuntimeError("ModelClient is closed")
            if self._loop_thread is None:
                self._loop_thread = LoopThread(f"veille-model-{self.run_id}")
            return self._loop_thread

    @staticmethod
    def _submit(loop_thread: LoopThread, coro: Coroutine[Any, Any, ModelResult[T]]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)

    def slot(self) -> AbstractAsyncContextManager[Any] | None:
        """One slot of the Prefect global limit on model calls (created by ``make deploy``), across
        every process of a deployment; ``None`` without one. Taken by routes whose backend sends
        HTTP requests (:meth:`veille.models.routes.Route.global_slot`)."""
        return None if self._call_slot is None else self._call_slot(self.settings)

    def cap(self) -> asyncio.Semaphore:
        if self._semaphore is None:  # created on the loop thread, used only there
            self._semaphore = asyncio.Semaphore(max(1, self.settings.max_concurrent_calls))
        return self._semaphore

    # --- one logical call (prepared in the caller's thread, its requests sent on the loop thread) --
    def _logical(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        input: BaseModel | None,
        subtask_id: str | None,
        ids: tuple[str | None, str | None],
        tools: tuple[str, ...] = (),
        language: str = "",
        items: ItemPolicy | None = None,
    ) -> LogicalCall[T]:
        try:
            role_model = self.settings.roles[role]
        except KeyError:
            raise ValueError(
                f"unknown role {role!r}: settings.roles defines {sorted(self.settings.roles)}"
            ) from None
        route = self._route(role)
        request = ModelRequest(
            role=role,
            model=role_model.model,
            system=system,
            prompt=prompt,
            output_schema=schema,
            temperature=role_model.temperature,
            thinking=role_model.thinking,
            subtask_id=subtask_id,
            input=input,
            tools=tools,
            language="" if route.model.answers_by_code else language,
            items=items,
            max_output_tokens=max_output_tokens(
                schema, role_model.thinking, self.settings.max_output_tokens, grounded=bool(tools)
            ),
        )
        backend = route.model
        secrets = tuple(backend.secrets)  # masked in every journaled error
        recorder = Recorder(self._journal, self.run_id, backend.name, request, ids, new_call_id(), secrets)
        cache = self._cache if backend.cacheable else None
        key = cache_key(request, backend.name, backend.version) if cache is not None else None
        return LogicalCall(route, request, schema, recorder, cache, key)

    def take_grounded_call(self, request: ModelRequest) -> None:
        """Count one grounded call against ``settings.web_budget`` (per run and per process: the
        flow hands grounded calls to at most that many sub-tasks; this is the seam's own stop, so a
        retry or a stray caller cannot spend more). Raises :class:`GroundingBudgetError` past it."""
        with self._lock:
            if self._grounded_calls >= self.settings.web_budget:
                raise GroundingBudgetError(request.role, self.settings.web_budget)
            self._grounded_calls += 1

    # --- cost -------------------------------------------------------------------------------
    def note_unknown(self, model: str, *, grounding: bool) -> None:
        """A model the price table does not price (``grounding``: prices its tokens but not its
        searches): its cost is recorded as null, logged once and named by :meth:`alerts`."""
        known = self._unknown_grounding if grounding else self._unknown_models
        with self._lock:
            new = model not in known
            known.add(model)
        if new and grounding:
            logger.warning("model %r has no grounding price: grounded cost recorded as null", model)
        elif new:
            logger.warning("model %r is not in the price table: cost recorded as null", model)
