"""One logical call, on the client's loop thread: cache lookup, then one loop over backend requests.

That loop is the only place a model request is sent again. Each request (an *attempt*) is one
``backend.generate`` under the concurrency cap and the global slot, and one journal record written
by :class:`Recorder`. A transport failure (429, 5xx, time-out, hang-up) is resent after the delay
:class:`~veille.models.retry.RetryPolicy` decides (a 429's Retry-After honoured, outside the cap
and the slot). An answer is read leniently and kept item by item (:mod:`veille.models.salvage`):
only an answer with nothing usable left is asked again, with its validation errors fed back — never
the answer itself (:mod:`veille.models.feedback`). The policy bounds the requests of one call (its
``max_requests``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from veille.journal import CallJournal, CallRecord
from veille.language import prose_language, prose_strings
from veille.models.base import (
    Model,
    ModelError,
    ModelRequest,
    ModelResult,
    RawResponse,
    SchemaValidationError,
    Usage,
)
from veille.models.cache import ResponseCache
from veille.models.feedback import LANGUAGE_NOTE, MAX_ERROR_CHARS, describe_unusable
from veille.models.retry import RetryPolicy
from veille.models.salvage import Kept, Unusable, keep_items
from veille.secrets import SecretValue, scrub, scrub_text

__all__ = [
    "BlockedPromptError",
    "CallOwner",
    "GroundingBudgetError",
    "LogicalCall",
    "Recorder",
]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_MAX_ERROR_CHARS = MAX_ERROR_CHARS


class BlockedPromptError(ModelError):
    """The provider refused the prompt (``promptFeedback.blockReason``); re-asking would not help."""

    def __init__(self, role: str, reason: str) -> None:
        super().__init__(f"{role}: prompt blocked by the provider ({reason})")
        self.role = role
        self.reason = reason


class GroundingBudgetError(ModelError):
    """The run's budget of grounded calls (``settings.web_budget``) is spent: no request is made."""

    def __init__(self, role: str, budget: int) -> None:
        super().__init__(f"{role}: budget of grounded calls spent ({budget} per run, web_budget)")
        self.role = role
        self.budget = budget


class CallOwner(Protocol):
    """What a logical call needs from its client."""

    model: Model

    @property
    def retry_policy(self) -> RetryPolicy: ...

    def cap(self) -> AbstractAsyncContextManager[Any]: ...
    def global_slot(self) -> AbstractAsyncContextManager[Any]: ...
    def cost(self, raw: RawResponse) -> float | None: ...
    def grounding_cost(self, raw: RawResponse) -> float | None: ...
    def take_grounded_call(self, request: ModelRequest) -> None: ...
    async def admit(self, request: ModelRequest, key: str = "") -> None: ...
    def release(self, call_id: str) -> None: ...


@dataclass(frozen=True)
class Answered:
    """What the backend reported for an attempt that got an answer."""

    model: str
    usage: Usage
    cost: float | None
    latency: float
    started_at: str
    search_queries: int = 0  # Google Search grounding: queries run, and what they cost
    grounding_cost: float | None = 0.0
    http_requests: int = 0


@dataclass(frozen=True)
class Recorder:
    """Writes the journal record of each attempt of one logical call (the one place records are made)."""

    journal: CallJournal
    run_id: str
    backend: str
    request: ModelRequest
    ids: tuple[str | None, str | None]  # Prefect flow run and task run, read in the caller's thread
    call_id: str
    secrets: tuple[SecretValue, ...] = ()  # masked in every error text journaled (the API key)

    def scrub(self, text: str) -> str:
        return scrub_text(scrub(text, *self.secrets))[:_MAX_ERROR_CHARS]

    def record(
        self,
        attempt: int,
        status: str,
        *,
        model: str | None = None,
        usage: Usage | None = None,
        cost: float | None = 0.0,
        latency: float = 0.0,
        error: BaseException | None = None,
        error_class: str | None = None,
        error_message: str | None = None,
        cache_hit: bool = False,
        started_at: str | None = None,
        answered: Answered | None = None,
        http_requests: int = 0,
    ) -> None:
        search_queries, grounding_cost = 0, 0.0 if answered is None else answered.grounding_cost
        if answered is not None:
            model, usage, cost = answered.model, answered.usage, answered.cost
            latency, started_at = answered.latency, answered.started_at
            search_queries, http_requests = answered.search_queries, answered.http_requests
        usage = usage or Usage()
        if error is not None:
            error_class = error_class or getattr(error, "error_class", None) or type(error).__name__
            error_message = error_message or str(error)
        if error_message is not None:
            error_message = self.scrub(error_message)
        self.journal.append(
            CallRecord(
                run_id=self.run_id,
                call_id=self.call_id,
                attempt=attempt,
                flow_run_id=self.ids[0],
                task_run_id=self.ids[1],
                role=self.request.role,
                subtask_id=self.request.subtask_id,
                backend=self.backend,
                model=model or self.request.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                estimated=usage.estimated,
                cost_usd=cost,
                search_queries=search_queries,
                grounding_cost_usd=grounding_cost,
                latency_s=latency,
                status=status,
                error_class=error_class,
                error_message=error_message,
                cache_hit=cache_hit,
                http_requests=http_requests,
                started_at=started_at or utc_now(),
            )
        )


class LogicalCall(Generic[T]):
    """Cache → (request → resend after a transport failure | validation → re-ask with feedback)*
    → validated result or error."""

    def __init__(
        self,
        owner: CallOwner,
        request: ModelRequest,
        schema: type[T],
        recorder: Recorder,
        cache: ResponseCache | None,
        key: str | None,
    ) -> None:
        self.owner, self.request, self.schema, self.recorder = owner, request, schema, recorder
        self.cache, self.key = cache, key
        self.started = time.perf_counter()

    def begin(self) -> ModelResult[T] | None:
        """In the caller's thread, before anything is sent: the response cache's answer (then the
        call is over, no loop needed), else ``None`` once a grounded call is counted (billed by
        Google: counted before it is made; :class:`GroundingBudgetError` past the run's budget).
        :meth:`run` follows a ``None``."""
        hit = self._from_cache()
        if hit is None and self.request.tools:
            self.owner.take_grounded_call(self.request)
        return hit

    def _from_cache(self) -> ModelResult[T] | None:
        if self.key is None or self.cache is None:
            return None
        hit = self.cache.get(self.key)
        if hit is None:
            return None
        kept = keep_items(self.schema, hit.text, self.request.items)  # its drops named again
        if isinstance(kept, Unusable):
            logger.warning(
                "cache entry %s no longer matches the %s schema: ignored", self.key, self.request.role
            )
            return None
        output = kept.output
        latency = time.perf_counter() - self.started
        self.recorder.record(1, "ok", model=hit.model, latency=latency, cache_hit=True)
        return ModelResult(
            output=output,
            raw_text=hit.text,
            usage=Usage(),
            latency_s=latency,
            cost_usd=0.0,
            model=hit.model,
            attempts=1,
            cache_hit=True,
            foreign_language=self._foreign(output),  # a kept answer is named again on every hit
            dropped=kept.dropped,
        )

    def _foreign(self, output: BaseModel) -> str:
        """The language of the answer's prose when it is not the request's (``""``: it is, or
        cannot be told, or the role's language is not checked)."""
        if not self.request.language:
            return ""
        return prose_language(prose_strings(output), self.request.language)

    async def _send(self, attempt: int, request: ModelRequest) -> tuple[RawResponse, float, str]:
        """One backend request under the concurrency cap and the global slot; a failed one is recorded
        (a client-side time-out or a cancellation included: the request may have been billed)."""
        started_at = utc_now()
        async with self.owner.cap(), self.owner.global_slot():
            try:  # the cost budget, checked once the request holds its slot (veille.models.budget)
                await self.owner.admit(request, f"{self.recorder.call_id}:{attempt}")
            except ModelError as exc:
                self.recorder.record(attempt, "error", error=exc, started_at=started_at)
                raise
            t0 = time.perf_counter()
            try:
                raw = await self.owner.model.generate(request)
            except (Exception, asyncio.CancelledError) as exc:
                if isinstance(exc, ModelError):
                    status, sent = ("transient_error" if exc.retryable else "error"), exc.http_requests
                else:  # a backend bug, or cancelled in flight: count what an HTTP backend had sent
                    status, sent = "error", int(self.owner.model.sends_http)
                # No usage comes back from a failed request: nothing is known to be billed.
                self.recorder.record(
                    attempt,
                    status,
                    latency=time.perf_counter() - t0,
                    error=exc,
                    started_at=started_at,
                    http_requests=sent,
                )
                raise
            return raw, time.perf_counter() - t0, started_at

    async def run(self) -> ModelResult[T]:
        """The request loop (after :meth:`begin`): the only place a request is sent again."""
        try:
            policy = self.owner.retry_policy
            max_answers = policy.answers(grounded=bool(self.request.tools))
            total_usage, total_cost = Usage(), 0.0
            costs_known = True
            feedback: tuple[tuple[str, str], ...] = ()
            attempt = answers = failures = 0
            # The prose's language earns one re-ask, within the same bound; the answer it replaced is
            # kept (and returned) should every later one be unusable: a valid answer is never lost to it.
            foreign_answer: tuple[Kept[T], RawResponse] | None = None
            while True:
                attempt += 1
                request = replace(self.request, feedback=feedback) if feedback else self.request
                try:
                    raw, latency, started_at = await self._send(attempt, request)
                except ModelError as exc:
                    failures += 1
                    delay = policy.delay_before_resend(exc, failures)
                    if delay is None:
                        raise
                    logger.info(
                        "%s: %s, request %d; sending again in %.3f s",
                        self.request.role,
                        getattr(exc, "error_class", None) or type(exc).__name__,
                        attempt,
                        delay,
                    )
                    await asyncio.sleep(delay)
                    continue
                answers += 1
                # An answer echoing a secret (the key in a field) is masked before anything reads it:
                # validation errors, the re-ask's feedback, the cache, every file built from the output.
                raw = replace(raw, text=scrub_text(scrub(raw.text, *self.recorder.secrets)))
                cost = self.owner.cost(raw)
                total_usage = add_usage(total_usage, raw.usage)
                costs_known = costs_known and cost is not None
                total_cost += cost or 0.0
                grounding = self.owner.grounding_cost(raw)
                answered = Answered(
                    raw.model, raw.usage, cost, latency, started_at, raw.search_queries, grounding,
                    raw.http_requests,
                )  # fmt: skip
                if raw.blocked_reason:
                    error = BlockedPromptError(self.request.role, raw.blocked_reason)
                    self.recorder.record(attempt, "error", error=error, answered=answered)
                    raise error
                kept = keep_items(self.schema, raw.text, self.request.items)
                if isinstance(kept, Unusable):  # nothing usable left: asked again with the errors only
                    last_error = self.recorder.scrub(describe_unusable(kept, raw.finish_reason))
                    error_class = "MaxTokens" if raw.finish_reason == "MAX_TOKENS" else "ValidationError"
                    self.recorder.record(
                        attempt,
                        "schema_error",
                        error_class=error_class,
                        error_message=last_error,
                        answered=answered,
                    )
                    if answers >= max_answers and foreign_answer is not None:
                        kept, raw = foreign_answer
                        return self._result(
                            kept, raw, total_usage, total_cost if costs_known else None, answers
                        )
                    if answers >= max_answers:
                        raise SchemaValidationError(self.request.role, answers, last_error) from None
                    # The errors, not the answer: echoing a runaway answer would bill it again as input.
                    feedback = (*feedback, ("", last_error))
                    continue
                foreign = self._foreign(kept.output)
                if foreign and foreign_answer is None and answers < max_answers:
                    foreign_answer = (kept, raw)
                    note = LANGUAGE_NOTE.format(found=foreign, expected=self.request.language)
                    self.recorder.record(
                        attempt, "schema_error", error_class="Language", error_message=note, answered=answered
                    )
                    feedback = (*feedback, ("", note))
                    continue
                self.recorder.record(attempt, "ok", answered=answered)
                return self._result(kept, raw, total_usage, total_cost if costs_known else None, answers)
        finally:  # every attempt is journaled by now; a bug that skipped one must not hold budget
            self.owner.release(self.recorder.call_id)

    def _result(
        self, kept: Kept[T], raw: RawResponse, usage: Usage, cost: float | None, answers: int
    ) -> ModelResult[T]:
        """The validated answer returned (and cached), with every attempt's usage and cost."""
        output = kept.output
        self._store(raw)
        return ModelResult(
            output=output,
            raw_text=raw.text,
            usage=usage,
            latency_s=time.perf_counter() - self.started,
            cost_usd=cost,
            model=raw.model,
            attempts=answers,
            cache_hit=False,
            foreign_language=self._foreign(output),
            dropped=kept.dropped,
        )

    def _store(self, raw: RawResponse) -> None:
        if self.key is None or self.cache is None:
            return
        try:
            self.cache.put(self.key, raw.text, raw.model, raw.usage)
        except OSError as exc:  # a full disk must not fail a paid, validated call
            logger.warning("could not write cache entry %s: %s", self.key, type(exc).__name__)


def new_call_id() -> str:
    return uuid.uuid4().hex


def add_usage(a: Usage, b: Usage) -> Usage:
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        reasoning_tokens=a.reasoning_tokens + b.reasoning_tokens,
        cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens,
        estimated=a.estimated or b.estimated,
    )


def utc_now() -> str:
    return datetime.now(UTC).isoformat()
