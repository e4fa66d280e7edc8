"""Types of the model seam (think pydantic-ai's ``Model`` or httpx's transport).

A backend (Gemini, a function backend such as the offline engine, a scripted test model) only
turns a :class:`ModelRequest` into a :class:`RawResponse`. A model reads the prompt; a function
backend (:class:`veille.models.function.FunctionModel`) reads ``ModelRequest.input``, the role's
typed input the prompt was built from. Validation against the output schema, re-asking with the
validation error, caching, cost and the call journal are done once, above the backends,
by :mod:`veille.models.caller`, so every backend gets them for free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

if TYPE_CHECKING:
    from veille.itempolicy import ItemPolicy
    from veille.secrets import SecretValue

__all__ = [
    "Model",
    "ModelDefaults",
    "ModelError",
    "ModelRequest",
    "ModelResult",
    "ProviderError",
    "ProviderTransientError",
    "RawResponse",
    "SchemaValidationError",
    "TransientModelError",
    "Usage",
]

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Usage:
    """Token usage of one call. Names follow the OpenTelemetry GenAI conventions."""

    input_tokens: int = 0  # prompt tokens, cached ones included
    output_tokens: int = 0  # candidate tokens, thinking excluded
    reasoning_tokens: int = 0  # thinking tokens (billed as output)
    cache_read_tokens: int = 0  # part of input_tokens served from the provider's context cache
    estimated: bool = False  # True when counted by our estimator, not reported by the provider


@dataclass(frozen=True)
class ModelRequest:
    """One structured-output request for one role."""

    role: str  # planner | analyst | analyst_update | writer | critic | reviser | judge | researcher
    model: str  # model id, e.g. "gemini-2.5-flash" or "offline"
    system: str  # system instruction
    prompt: str  # user prompt (documents delimited as data)
    output_schema: type[BaseModel]
    temperature: float = 0.2
    thinking: str = "low"  # none | low | medium | high
    subtask_id: str | None = None
    # The role's input (an instance of ``Role.input_type``) the prompt was built from: what a
    # function backend answers from. Not part of the response cache key (the prompt is).
    input: BaseModel | None = None
    # Earlier invalid answers and the validation error for each, for instructor-style re-asks.
    feedback: tuple[tuple[str, str], ...] = ()
    # Built-in tools the request enables ("google_search": Gemini's Google Search grounding). A
    # grounded request is answered in free text plus metadata, which the backend turns into JSON.
    tools: tuple[str, ...] = ()
    # The language the answer's prose must be in (ISO 639-1; "": not checked). Not part of the
    # response cache key: it is read from the prompt's own input.
    language: str = ""
    # The role's lists whose items are kept or dropped one by one (veille.models.salvage); None:
    # the answer validates whole. Not part of the response cache key: a cached answer is read again.
    items: ItemPolicy | None = None
    # The most output tokens (thinking included) the answer may take, sent to the provider and
    # priced before the request leaves (veille.models.outcap, veille.models.budget). None: no cap.
    max_output_tokens: int | None = None


@dataclass(frozen=True)
class RawResponse:
    """What a backend returns: text that should be JSON for ``output_schema``."""

    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None  # e.g. STOP, MAX_TOKENS, SAFETY
    blocked_reason: str | None = None  # prompt blocked by the provider
    # Google Search grounding: the queries the model ran, and whether this answers a request sent
    # with the search tool (Google bills per query on Gemini 3, per grounded request on 2.5:
    # veille/models/pricing.py).
    search_queries: int = 0
    grounded: bool = False
    # HTTP requests the backend sent for this answer: 1 for Gemini (it never retries by itself),
    # 0 for local backends. Journaled as ``http_requests``.
    http_requests: int = 0


@dataclass(frozen=True)
class ModelResult(Generic[T]):
    """A validated result, with everything the journal needs."""

    output: T
    raw_text: str
    usage: Usage
    latency_s: float
    cost_usd: float | None  # None when the model is not in the price table (never a silent 0)
    model: str
    attempts: int
    cache_hit: bool
    # The language the answer's prose was identified as when it is not the request's, after the
    # one re-ask this earns (``""``: the expected language, or too short to tell). Kept, not
    # refused: the step that asked says so in an alert.
    foreign_language: str = ""
    # Invalid items dropped from the answer, (kind "path:error", count) — the step says so in one
    # alert (veille.steps.answer_items); the rest of the answer is kept.
    dropped: tuple[tuple[str, int], ...] = ()


@runtime_checkable
class Model(Protocol):
    """A provider's backend (docs/models.md « Providers »): Gemini, the OpenAI-compatible one, the
    offline engine, test doubles. Everything the client needs to know about a backend is declared
    here, so the client never probes for attributes nor compares names; :class:`ModelDefaults`
    gives the values of a backend that declares nothing more."""

    name: str  # the provider's registry name (veille/providers.py), e.g. "gemini", "openai", "offline"
    # What names the code behind the answers, for cache keys ("": the answers are a provider's and
    # the request, in the key, is what decides them).
    version: str
    free: bool  # costs nothing by construction (code's answers): never priced, never budgeted
    cacheable: bool  # a validated answer is kept in the response cache (paid or slow backends)
    sends_http: bool  # one generate is one HTTP request (journaled as sent even when cancelled)
    answers_by_code: bool  # code answers: the prose's language is not checked (asking again is useless)
    # A model missing from the price table costs 0 rather than null: a server in the building.
    unpriced_is_free: bool
    tools: frozenset[str]  # built-in tools it runs (ModelRequest.tools), e.g. "google_search"

    @property
    def secrets(self) -> tuple[SecretValue, ...]:
        """Masked in every error text the journal records (the backend's key)."""
        ...

    async def generate(self, request: ModelRequest) -> RawResponse:
        """One request: text plus usage and finish reason, or a :class:`ModelError`."""
        ...

    async def aclose(self) -> None:
        """Close connections; awaited once when the client closes."""
        ...


class ModelDefaults:
    """The declared attributes of :class:`Model` for a backend that states nothing more (a
    provider subclasses it and overrides what differs)."""

    version: str = ""
    free: bool = False
    cacheable: bool = False
    sends_http: bool = False
    answers_by_code: bool = False
    unpriced_is_free: bool = False
    tools: frozenset[str] = frozenset()

    @property
    def secrets(self) -> tuple[SecretValue, ...]:
        return ()

    async def aclose(self) -> None:
        return None


class ModelError(Exception):
    """Base class of the typed errors a flow turns into alerts."""

    retryable: bool = False  # the call's retry policy may send the request again
    # HTTP requests the failed attempt sent (0: nothing reached a server, e.g. connection refused);
    # journaled as ``http_requests``.
    http_requests: int = 0
    retry_after_s: float | None = None  # the wait a rate-limited server asked for (Retry-After)


class TransientModelError(ModelError):
    """Rate limit, 5xx, timeout or connection error: the call's retry policy may send again."""

    retryable = True


class ProviderError(ModelError):
    """A provider's non-retryable failure (4xx, unexpected answer); ``error_class`` names the
    cause, as journaled. Each provider subclasses it (GeminiError, OpenAICompatError)."""

    def __init__(self, message: str, *, error_class: str) -> None:
        super().__init__(message)
        self.error_class = error_class


class ProviderTransientError(TransientModelError):
    """A provider's rate limit, 5xx, time-out or connection error; ``error_class`` names it."""

    def __init__(self, message: str, *, error_class: str) -> None:
        super().__init__(message)
        self.error_class = error_class


class SchemaValidationError(ModelError):
    """The model kept answering outside the schema after every re-ask."""

    def __init__(self, role: str, attempts: int, last_error: str) -> None:
        super().__init__(f"{role}: output did not match the schema after {attempts} attempts: {last_error}")
        self.role = role
        self.attempts = attempts
        self.last_error = last_error
