"""The model client: the one place every LLM role call goes through.

For each call: cache lookup → ``backend.generate`` (under a concurrency cap) → validation of the
*text* with the role's pydantic schema → on failure, re-ask with the invalid answer and the
validation error fed back (``ModelRequest.feedback``), up to ``settings.reask_attempts`` times →
:class:`~veille.models.base.SchemaValidationError` at the end. Every attempt is a journal record;
cost comes from the price table; validated answers of paid backends go to the response cache.

Threads. Prefect runs mapped tasks in a thread pool, each thread possibly with its own event loop,
while an async HTTP client must stay on the loop it was first used on. So the client owns one
event-loop thread (started on first use) where the backend, its SDK client and the semaphore live;
``call`` (any thread) and ``acall`` (any loop) submit coroutines to it.

Pickling. ``ModelClient`` pickles by reconstruction: unpickled in the same process it is the same
live object (same journal, same loop); in another process (a Dask worker) it is rebuilt with
:func:`veille.models.factory.build_client` from (settings, run_id, journal_path) and appends to the
same calls.jsonl. A client built around an explicit ``model=`` object (tests) cannot be rebuilt in
another process: unpickling it there raises a clear error.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Coroutine, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from veille.alerts import Alert
from veille.models.base import (
    CallRecord,
    Model,
    ModelError,
    ModelRequest,
    ModelResult,
    RawResponse,
    SchemaValidationError,
    Usage,
)
from veille.models.cache import ResponseCache, cache_key
from veille.models.journal import CallJournal, prefect_run_ids
from veille.models.pricing import PriceTable
from veille.secrets import scrub

if TYPE_CHECKING:
    from veille.roles.base import Role
    from veille.settings import Settings

__all__ = ["FREE_BACKENDS", "BlockedPromptError", "ModelClient"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

# Backends that cost nothing: their calls are journalled with cost 0, never "unknown".
FREE_BACKENDS = frozenset({"offline", "scripted"})
_MAX_ERROR_CHARS = 2000

# Live clients of this process, for in-process unpickling (see module docstring).
_LIVE_CLIENTS: weakref.WeakValueDictionary[str, ModelClient] = weakref.WeakValueDictionary()


class BlockedPromptError(ModelError):
    """The provider refused the prompt (``promptFeedback.blockReason``); re-asking would not help."""

    def __init__(self, role: str, reason: str) -> None:
        super().__init__(f"{role}: prompt blocked by the provider ({reason})")
        self.role = role
        self.reason = reason


class _LoopThread:
    """One daemon thread running one event loop until ``stop``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def cancel_pending(self, timeout: float = 10) -> None:
        """Cancel every task still running on the loop, so no caller waits forever on a closed client."""

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(cancel_all(), self.loop).result(timeout=timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


class ModelClient:
    """Validated, cached, journalled, concurrency-capped calls to one backend for one run."""

    def __init__(
        self,
        settings: Settings,
        model: Model,
        *,
        run_id: str,
        journal_path: Path | None = None,
        prices: PriceTable | None = None,
        rebuildable: bool = False,
    ) -> None:
        self.settings = settings
        self.model = model
        self.run_id = run_id
        self.journal_path = journal_path
        self.prices = prices if prices is not None else PriceTable.load(settings.prices_file)
        self._journal = CallJournal(journal_path)
        self._cache = (
            ResponseCache(settings.cache_dir)
            if settings.use_cache and getattr(model, "cacheable", False)
            else None
        )
        self._rebuildable = rebuildable  # True when build_client made the backend from settings
        self._unknown_models: set[str] = set()
        self._lock = threading.Lock()
        self._loop_thread: _LoopThread | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._closed = False
        self._token = uuid.uuid4().hex
        _LIVE_CLIENTS[self._token] = self

    # --- public API -------------------------------------------------------------------------
    @property
    def journal(self) -> CallJournal:
        return self._journal

    @property
    def backend(self) -> str:
        return self.model.name

    @property
    def unknown_models(self) -> list[str]:
        """Models called that are not in the price table (their cost is None)."""
        with self._lock:
            return sorted(self._unknown_models)

    def alerts(self) -> list[Alert]:
        """One alert per model whose calls could not be priced."""
        where = self.prices.path or "the price table"
        return [
            Alert(
                code="cost.unknown_model",
                severity="warning",
                stage="record",
                message=f"Model {model!r} is not in {where}: its calls are recorded with cost null.",
                subject=model,
            )
            for model in self.unknown_models
        ]

    def call(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        *,
        payload: BaseModel | Mapping[str, Any] | None = None,
        subtask_id: str | None = None,
    ) -> ModelResult[T]:
        """Blocking call, safe from any thread except the client's own loop thread."""
        loop_thread = self._ensure_loop()
        if threading.current_thread() is loop_thread.thread:
            raise RuntimeError("ModelClient.call() from the client's own event loop; use `await acall()`")
        ids = prefect_run_ids()  # here, in the caller's thread: the loop thread has no Prefect context
        coro = self._call(role, system, prompt, schema, payload, subtask_id, ids)
        return self._submit(loop_thread, coro).result()

    def ask(self, role: Role[In, Out], data: In, *, subtask_id: str | None = None) -> ModelResult[Out]:
        """Ask ``role`` about ``data``: its instructions, its prompt for the data, its schema for it."""
        return self.call(
            role.name,
            role.instructions,
            role.build_prompt(data),
            role.schema_for(data),
            payload=data,
            subtask_id=subtask_id,
        )

    async def acall(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        *,
        payload: BaseModel | Mapping[str, Any] | None = None,
        subtask_id: str | None = None,
    ) -> ModelResult[T]:
        """Awaitable call, from any event loop."""
        loop_thread = self._ensure_loop()
        ids = prefect_run_ids()
        coro = self._call(role, system, prompt, schema, payload, subtask_id, ids)
        if asyncio.get_running_loop() is loop_thread.loop:
            return await coro
        return await asyncio.wrap_future(self._submit(loop_thread, coro))

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
                aclose = getattr(self.model, "aclose", None)
                if aclose is not None:
                    asyncio.run_coroutine_threadsafe(aclose(), loop_thread.loop).result(timeout=10)
            except Exception as exc:  # closing must not hide the run's real outcome
                logger.warning("closing the %s backend failed: %s", self.backend, type(exc).__name__)
            loop_thread.stop()
        self._journal.close()
        _LIVE_CLIENTS.pop(self._token, None)

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ModelClient(backend={self.backend!r}, run_id={self.run_id!r})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (
            _restore_client,
            (self._token, os.getpid(), self.settings, self.run_id, self.journal_path, self._rebuildable),
        )

    # --- loop plumbing ----------------------------------------------------------------------
    def _ensure_loop(self) -> _LoopThread:
        with self._lock:
            if self._closed:
                raise RuntimeError("ModelClient is closed")
            if self._loop_thread is None:
                self._loop_thread = _LoopThread(f"veille-model-{self.run_id}")
            return self._loop_thread

    @staticmethod
    def _submit(loop_thread: _LoopThread, coro: Coroutine[Any, Any, ModelResult[T]]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop_thread.loop)

    def _global_slot(self) -> AbstractAsyncContextManager[None]:
        """One slot of the Prefect global limit on model calls (created by ``make deploy``), across
        every process of a deployment; a no-op without a server or limit, and for local backends."""
        if self.model.name != "gemini":
            return nullcontext()
        from veille.ops import amodel_call_slot

        return amodel_call_slot(self.settings)

    def _cap(self) -> asyncio.Semaphore:
        if self._semaphore is None:  # created on the loop thread, used only there
            self._semaphore = asyncio.Semaphore(max(1, self.settings.max_concurrent_calls))
        return self._semaphore

    # --- one logical call (runs on the loop thread) -------------------------------------------
    async def _call(
        self,
        role: str,
        system: str,
        prompt: str,
        schema: type[T],
        payload: BaseModel | Mapping[str, Any] | None,
        subtask_id: str | None,
        ids: tuple[str | None, str | None],
    ) -> ModelResult[T]:
        started = time.perf_counter()
        try:
            role_model = self.settings.roles[role]
        except KeyError:
            raise ValueError(
                f"unknown role {role!r}: settings.roles defines {sorted(self.settings.roles)}"
            ) from None
        request = ModelRequest(
            role=role,
            model=role_model.model,
            system=system,
            prompt=prompt,
            output_schema=schema,
            temperature=role_model.temperature,
            thinking=role_model.thinking,
            subtask_id=subtask_id,
            payload=_payload_dict(payload),
        )
        call_id = uuid.uuid4().hex
        key = cache_key(request, self.backend) if self._cache is not None else None

        if key is not None and self._cache is not None:
            hit = self._cache.get(key)
            if hit is not None:
                try:
                    output = schema.model_validate_json(hit.text)
                except ValidationError:
                    logger.warning("cache entry %s no longer matches the %s schema: ignored", key, role)
                else:
                    latency = time.perf_counter() - started
                    self._record(
                        request,
                        call_id,
                        1,
                        ids,
                        model=hit.model,
                        usage=Usage(),
                        cost=0.0,
                        latency=latency,
                        status="ok",
                        cache_hit=True,
                    )
                    return ModelResult(
                        output=output,
                        raw_text=hit.text,
                        usage=Usage(),
                        latency_s=latency,
                        cost_usd=0.0,
                        model=hit.model,
                        attempts=1,
                        cache_hit=True,
                    )

        total_usage = Usage()
        total_cost: float | None = 0.0
        feedback: tuple[tuple[str, str], ...] = ()
        max_attempts = 1 + max(0, self.settings.reask_attempts)
        last_error = ""
        for attempt in range(1, max_attempts + 1):
            attempt_request = replace(request, feedback=feedback) if feedback else request
            attempt_started = _utc_now()
            async with self._cap(), self._global_slot():
                t0 = time.perf_counter()
                try:
                    raw = await self.model.generate(attempt_request)
                except Exception as exc:
                    latency = time.perf_counter() - t0
                    status = "transient_error" if getattr(exc, "retryable", False) else "error"
                    # No usage comes back from a failed request: nothing is known to be billed.
                    self._record(
                        request,
                        call_id,
                        attempt,
                        ids,
                        model=request.model,
                        usage=Usage(),
                        cost=0.0,
                        latency=latency,
                        status=status,
                        error=exc,
                        started_at=attempt_started,
                    )
                    raise
                latency = time.perf_counter() - t0
            cost = self._cost(raw)
            total_usage = _add_usage(total_usage, raw.usage)
            total_cost = None if cost is None or total_cost is None else total_cost + cost

            if raw.blocked_reason:
                error = BlockedPromptError(role, raw.blocked_reason)
                self._record(
                    request,
                    call_id,
                    attempt,
                    ids,
                    model=raw.model,
                    usage=raw.usage,
                    cost=cost,
                    latency=latency,
                    status="error",
                    error=error,
                    started_at=attempt_started,
                )
                raise error
            try:
                output = schema.model_validate_json(raw.text)
            except ValidationError as exc:
                last_error = _describe_invalid(exc, raw.finish_reason)
                error_class = "MaxTokens" if raw.finish_reason == "MAX_TOKENS" else "ValidationError"
                self._record(
                    request,
                    call_id,
                    attempt,
                    ids,
                    model=raw.model,
                    usage=raw.usage,
                    cost=cost,
                    latency=latency,
                    status="schema_error",
                    error_class=error_class,
                    error_message=last_error,
                    started_at=attempt_started,
                )
                feedback = (*feedback, (raw.text, last_error))
                continue
            self._record(
                request,
                call_id,
                attempt,
                ids,
                model=raw.model,
                usage=raw.usage,
                cost=cost,
                latency=latency,
                status="ok",
                started_at=attempt_started,
            )
            if key is not None and self._cache is not None:
                try:
                    self._cache.put(key, raw.text, raw.model, raw.usage)
                except OSError as exc:  # a full disk must not fail a paid, validated call
                    logger.warning("could not write cache entry %s: %s", key, type(exc).__name__)
            return ModelResult(
                output=output,
                raw_text=raw.text,
                usage=total_usage,
                latency_s=time.perf_counter() - started,
                cost_usd=total_cost,
                model=raw.model,
                attempts=attempt,
                cache_hit=False,
            )
        raise SchemaValidationError(role, max_attempts, last_error)

    # --- cost and journal -------------------------------------------------------------------
    def _cost(self, raw: RawResponse) -> float | None:
        if self.backend in FREE_BACKENDS:
            return 0.0
        cost = self.prices.cost(raw.model, raw.usage)
        if cost is None:
            with self._lock:
                new = raw.model not in self._unknown_models
                self._unknown_models.add(raw.model)
            if new:
                logger.warning("model %r is not in the price table: cost recorded as null", raw.model)
        return cost

    def _record(
        self,
        request: ModelRequest,
        call_id: str,
        attempt: int,
        ids: tuple[str | None, str | None],
        *,
        model: str,
        usage: Usage,
        cost: float | None,
        latency: float,
        status: str,
        error: BaseException | None = None,
        error_class: str | None = None,
        error_message: str | None = None,
        cache_hit: bool = False,
        started_at: str | None = None,
    ) -> None:
        if error is not None:
            error_class = error_class or getattr(error, "error_class", None) or type(error).__name__
            error_message = error_message or str(error)
        if error_message is not None:
            error_message = scrub(error_message)[:_MAX_ERROR_CHARS]
        self._journal.append(
            CallRecord(
                run_id=self.run_id,
                call_id=call_id,
                attempt=attempt,
                flow_run_id=ids[0],
                task_run_id=ids[1],
                role=request.role,
                subtask_id=request.subtask_id,
                backend=self.backend,
                model=model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                estimated=usage.estimated,
                cost_usd=cost,
                latency_s=latency,
                status=status,
                error_class=error_class,
                error_message=error_message,
                cache_hit=cache_hit,
                started_at=started_at or _utc_now(),
            )
        )


def _restore_client(
    token: str, pid: int, settings: Settings, run_id: str, journal_path: Path | None, rebuildable: bool
) -> ModelClient:
    if pid == os.getpid():
        live = _LIVE_CLIENTS.get(token)
        if live is not None and not live._closed:
            return live
    if not rebuildable:
        raise RuntimeError(
            "this ModelClient was built around an explicit in-process model object and cannot be "
            "rebuilt here; call veille.models.factory.build_client(settings, run_id=...) instead"
        )
    from veille.models.factory import build_client

    return build_client(settings, run_id=run_id, journal_path=journal_path)


def _payload_dict(payload: BaseModel | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if payload is None:
        return {}
    if isinstance(payload, BaseModel):
        return payload.model_dump()
    return dict(payload)


def _add_usage(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
        cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens,
        estimated=a.estimated or b.estimated,
    )


def _describe_invalid(exc: ValidationError, finish_reason: str | None) -> str:
    """A short, model-readable account of what was wrong (fed back on the re-ask)."""
    problems: list[str] = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(part) for part in error["loc"]) or "(document)"
        message = str(error["msg"])
        value = error.get("input")
        if error["type"] != "json_invalid" and isinstance(value, str | int | float | bool):
            shown = repr(value) if not isinstance(value, str) or len(value) <= 60 else repr(value[:60] + "…")
            message += f" (got {shown})"
        problems.append(f"{location}: {message}")
    text = "; ".join(problems)
    if finish_reason == "MAX_TOKENS":
        text = "output truncated at the token limit (finish_reason=MAX_TOKENS), be more concise; " + text
    elif finish_reason not in (None, "STOP"):
        text = f"generation stopped early (finish_reason={finish_reason}); " + text
    return text[:_MAX_ERROR_CHARS]


def _utc_now() -> str:
    return datetime.now(UTC).isoformat()
