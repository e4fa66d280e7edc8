"""Gemini backend (google-genai async client).

One ``genai.Client`` per backend object, created lazily on the first call — i.e. on the model
client's event-loop thread, where it lives for the whole run (kept referenced: a client that is
garbage-collected closes its connection mid-call). Requests ask for JSON with the role's schema as
``response_json_schema`` (:func:`veille.models.wire.wire_schema`: JSON Schema carries constraints
the OpenAPI-style ``response_schema`` cannot, and what we build is exactly what goes on the wire).
The text is *not* trusted here (the SDK's ``.parsed`` is silently ``None`` on a schema violation, a
``MAX_TOKENS`` truncation or a blocked prompt): the caller validates it.

Retries. This backend sends exactly one HTTP request per ``generate`` and retries nothing: the
SDK's own retries are turned off (``HttpRetryOptions(attempts=1)``: tenacity stops after the first
try, and an explicit ``retry_options`` also disables the SDK's implicit resend of aiohttp connection
errors). Every failure becomes a typed error carrying what the one retry layer needs
(:mod:`veille.models.retry`): ``retryable`` (429, 408, 5xx, time-outs, hang-ups, connection errors),
``retry_after_s`` (a 429's ``RetryInfo.retryDelay`` or ``Retry-After``) and ``http_requests`` (0
when no connection was opened, so nothing reached the server), with the API key scrubbed from its
message. Why not the SDK's retries: its backoff ignores the delay a 429 asks for, and requests it
resends are invisible to the call journal.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from veille.models.base import (
    ModelDefaults,
    ModelError,
    ModelRequest,
    ProviderError,
    ProviderTransientError,
    RawResponse,
    Usage,
)
from veille.models.grounding import GOOGLE_SEARCH, grounded_answer, search_tools
from veille.models.wire import wire_schema
from veille.secrets import MissingApiKeyError, ScrubFilter, SecretValue, resolve_api_key, scrub, scrub_text

if TYPE_CHECKING:
    from google import genai
    from google.genai import types

    from veille.settings import Settings

__all__ = [
    "REASK_TEMPLATE",
    "GeminiConnectionError",
    "GeminiError",
    "GeminiModel",
    "GeminiTransientError",
    "thinking_config",
]

logger = logging.getLogger(__name__)

TRANSIENT_STATUS_CODES = {408, 429, 500, 502, 503, 504}

# Loggers that may print request/response details: the key is masked in their records.
_SDK_LOGGERS = ("google_genai", "google_genai._api_client", "google_genai.models", "httpx", "httpx2")

# The re-ask turn (French, like every prompt of the pipeline).
REASK_TEMPLATE = (
    "Ta réponse précédente est refusée : {error}\n"
    "Réponds de nouveau, uniquement avec un objet JSON conforme au schéma, sans texte autour."
)

# Thinking budgets for Gemini 2.5 (tokens). 2.5 Pro cannot switch thinking off: 128 is its minimum.
_BUDGETS = {"none": 0, "low": 1024, "medium": 8192, "high": 24576}
_PRO_MIN_BUDGET = 128


class GeminiError(ProviderError):
    """A non-retryable Gemini failure (4xx, unexpected answer); ``error_class`` names the cause."""


class GeminiTransientError(ProviderTransientError):
    """Rate limit, 5xx, timeout or connection error left after every retry."""


class GeminiConnectionError(GeminiTransientError):
    """Nothing answers at the API address (no request reached a server). Resent within the call's
    budget like any transport failure, then one clear error naming the address: a wrong
    ``gemini_base_url`` (a closed port) is far likelier than an outage that ends within seconds."""

    expected_failure = True  # one log line naming the address, no traceback (veille/ops/logfilter.py)


def thinking_config(model: str, level: str) -> types.ThinkingConfig | None:
    """Map our level (none|low|medium|high) to the model family's thinking knob.

    Gemini 3.x takes a ``thinking_level``; 2.5 takes a token ``thinking_budget``; older families
    have no thinking and get no config.
    """
    from google.genai import types

    name = model.rsplit("/", 1)[-1].lower()
    if name.startswith(("gemini-1", "gemini-2.0")):
        return None
    if name.startswith("gemini-2.5"):
        budget = _BUDGETS[level]
        if "pro" in name:
            budget = max(budget, _PRO_MIN_BUDGET)
        return types.ThinkingConfig(thinking_budget=budget)
    # Gemini 3 and later: levels. Only Flash models accept MINIMAL; Pro's lowest is LOW.
    levels = {
        "none": types.ThinkingLevel.MINIMAL if "flash" in name else types.ThinkingLevel.LOW,
        "low": types.ThinkingLevel.LOW,
        "medium": types.ThinkingLevel.MEDIUM,
        "high": types.ThinkingLevel.HIGH,
    }
    return types.ThinkingConfig(thinking_level=levels[level])


class GeminiModel(ModelDefaults):
    """The Gemini backend. ``generate`` must always run on the same event loop (the client's thread)."""

    name = "gemini"
    tools = frozenset({GOOGLE_SEARCH})  # Google Search grounding (the researcher, --web)
    cacheable = True  # paid backend: serve reruns from the response cache
    sends_http = True  # a request cancelled in flight is journaled as sent (it may be billed)

    def __init__(self, settings: Settings, *, api_key: SecretValue | None = None) -> None:
        self._settings = settings
        self._key = api_key if api_key is not None else resolve_api_key(settings)
        if self._key is None and not settings.vertexai:
            raise MissingApiKeyError(
                "Gemini backend selected but no API key: set GOOGLE_API_KEY or GEMINI_API_KEY, "
                "or settings.api_key_secret_block (a Prefect Secret block), or use backend = 'offline'"
            )
        self._client: genai.Client | None = None
        self._log_filter: ScrubFilter | None = None

    def __repr__(self) -> str:
        return f"GeminiModel(vertexai={self._settings.vertexai}, base_url={self._settings.gemini_base_url!r})"

    def __reduce__(self) -> Any:
        raise TypeError("GeminiModel is not picklable; pickle the ModelClient (it rebuilds its backend)")

    @property
    def secrets(self) -> tuple[SecretValue, ...]:
        """What the call journal masks in every error text it records."""
        return () if self._key is None else (self._key,)

    # --- SDK client -------------------------------------------------------------------------
    def _sdk(self) -> genai.Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            settings = self._settings
            http_options = types.HttpOptions(
                base_url=settings.gemini_base_url,
                api_version=settings.gemini_api_version,
                timeout=settings.request_timeout_ms,
                # One try, no SDK retry of any kind: veille.models.retry decides (module docstring).
                retry_options=types.HttpRetryOptions(attempts=1),
            )
            key = self._key.get() if self._key is not None else None
            if self._key is not None and self._log_filter is None:
                self._log_filter = ScrubFilter(self._key)
                for name in _SDK_LOGGERS:
                    logging.getLogger(name).addFilter(self._log_filter)
            if settings.vertexai:
                if settings.gcp_project:
                    self._client = genai.Client(
                        vertexai=True,
                        project=settings.gcp_project,
                        location=settings.gcp_location,
                        http_options=http_options,
                    )
                else:  # Vertex AI express mode: an API key, no project
                    self._client = genai.Client(vertexai=True, api_key=key, http_options=http_options)
            else:
                self._client = genai.Client(api_key=key, http_options=http_options)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aio.aclose()
            client.close()
        if self._log_filter is not None:
            for name in _SDK_LOGGERS:
                logging.getLogger(name).removeFilter(self._log_filter)
            self._log_filter = None

    # --- one request ------------------------------------------------------------------------
    def _config(self, request: ModelRequest) -> types.GenerateContentConfig:
        from google.genai import types

        if GOOGLE_SEARCH in request.tools:  # grounded: free text plus metadata, no JSON mode
            return types.GenerateContentConfig(
                system_instruction=request.system,
                temperature=request.temperature,
                tools=search_tools(),
                thinking_config=thinking_config(request.model, request.thinking),
                max_output_tokens=request.max_output_tokens,  # thoughts included (veille.models.outcap)
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            )
        return types.GenerateContentConfig(
            system_instruction=request.system,
            temperature=request.temperature,
            response_mime_type="application/json",
            response_json_schema=wire_schema(request.output_schema),
            thinking_config=thinking_config(request.model, request.thinking),
            max_output_tokens=request.max_output_tokens,  # thoughts included (veille.models.outcap)
            # No tools are declared; turning AFC off also silences its per-call INFO log line.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    @staticmethod
    def _contents(request: ModelRequest) -> list[types.Content]:
        """The prompt, then for each earlier invalid answer: the answer (model turn) and the error."""
        from google.genai import types

        turns: list[tuple[str, str]] = [("user", request.prompt)]
        for invalid, error in request.feedback:
            if invalid.strip():
                turns.append(("model", invalid))
            turns.append(("user", REASK_TEMPLATE.format(error=error)))
        contents: list[types.Content] = []
        for role, text in turns:  # merge consecutive turns of one role (an empty answer has no turn)
            if contents and contents[-1].role == role and contents[-1].parts is not None:
                contents[-1].parts.append(types.Part(text=text))
            else:
                contents.append(types.Content(role=role, parts=[types.Part(text=text)]))
        return contents

    async def generate(self, request: ModelRequest) -> RawResponse:
        """One HTTP request (never resent here); a failure is a typed, scrubbed :class:`ModelError`."""
        from google.genai import errors

        client = self._sdk()
        config = self._config(request)
        contents = self._contents(request)
        try:
            response = await client.aio.models.generate_content(
                model=request.model, contents=contents, config=config
            )
        except errors.APIError as exc:
            raise self._api_error(exc) from None
        except Exception as exc:
            raise self._other_error(exc, _transport_kind(exc)) from None
        return self._raw(response, request)

    # --- helpers ----------------------------------------------------------------------------
    def _api_error(self, exc: Any) -> ModelError:
        code = int(exc.code) if exc.code is not None else 0
        message = self._scrub(f"Gemini API error {code} {exc.status or ''}: {exc.message or ''}".strip())
        error_class = "RateLimited" if code == 429 else f"HTTP{code}"
        error: ModelError
        if code in TRANSIENT_STATUS_CODES:
            error = GeminiTransientError(message, error_class=error_class)
            error.retry_after_s = _retry_delay_s(exc) if code == 429 else None
        else:
            error = GeminiError(message, error_class=error_class)
        error.http_requests = 1  # the server answered it
        return error

    def _other_error(self, exc: Exception, kind: str | None) -> ModelError:
        error = self._wrap_other(exc, kind)
        # A connection that never opened sent nothing; a time-out or a hang-up did reach the server.
        error.http_requests = 0 if kind == "connect" or _never_sent(exc) else 1
        return error

    def _wrap_other(self, exc: Exception, kind: str | None) -> ModelError:
        name = type(exc).__name__
        detail = self._scrub(str(exc))[:500]
        if kind == "connect":
            where = self._settings.gemini_base_url or (
                "Vertex AI" if self._settings.vertexai else "https://generativelanguage.googleapis.com"
            )
            return GeminiConnectionError(
                f"cannot connect to the Gemini API at {where} ({name}): {detail}; "
                "check VEILLE_GEMINI_BASE_URL / gemini_base_url",
                error_class=name,
            )
        if kind is not None:
            return GeminiTransientError(f"Gemini request failed ({name}): {detail}", error_class=name)
        if isinstance(exc, json.JSONDecodeError) or name == "UnknownApiResponseError":
            # A 200 whose body is not JSON: a proxy or gateway glitch, not a property of the request.
            return GeminiTransientError(
                f"Gemini answered a body that is not JSON: {detail}", error_class=name
            )
        return GeminiError(f"Gemini request failed ({name}): {detail}", error_class=name)

    def _scrub(self, text: str) -> str:
        return scrub_text(scrub(text, self._key))

    @staticmethod
    def _raw(response: Any, request: ModelRequest) -> RawResponse:
        candidate = response.candidates[0] if response.candidates else None
        texts: list[str] = []  # one per part ("" for thoughts): grounding segments index parts
        finish_reason: str | None = None
        if candidate is not None:
            parts = candidate.content.parts if candidate.content and candidate.content.parts else []
            texts = [p.text if p.text and not p.thought else "" for p in parts]
            if candidate.finish_reason is not None:
                finish_reason = getattr(candidate.finish_reason, "value", str(candidate.finish_reason))
        blocked: str | None = None
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            blocked = getattr(feedback.block_reason, "value", str(feedback.block_reason))
        meta = response.usage_metadata
        usage = Usage(
            input_tokens=(meta.prompt_token_count or 0) if meta else 0,
            output_tokens=(meta.candidates_token_count or 0) if meta else 0,
            reasoning_tokens=(meta.thoughts_token_count or 0) if meta else 0,
            cache_read_tokens=(meta.cached_content_token_count or 0) if meta else 0,
        )
        text, queries, grounded = "".join(texts), 0, GOOGLE_SEARCH in request.tools
        if grounded:  # code writes the JSON: the answer's text with its sources from the metadata
            answer = grounded_answer(candidate, texts)
            text, queries = answer.model_dump_json(), len(answer.queries)
        return RawResponse(
            text=text,
            usage=usage,
            model=request.model,
            finish_reason=finish_reason,
            blocked_reason=blocked,
            search_queries=queries,
            grounded=grounded,
            http_requests=1,
        )


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s?\s*$")


def _retry_delay_s(exc: Any) -> float | None:
    """The delay a 429 asks for: ``RetryInfo.retryDelay`` in the body, else a ``Retry-After`` header."""
    details = exc.details if isinstance(exc.details, dict) else {}
    error = details.get("error", details)
    for item in error.get("details", []) if isinstance(error, dict) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        value = headers.get("retry-after")
        if value is not None:
            match = _DURATION.match(str(value))
            if match:
                return float(match.group(1))
    return None


def _never_sent(exc: Exception) -> bool:
    """A time-out waiting for a connection (from the pool or the server): no request went out."""
    return bool({cls.__name__ for cls in type(exc).__mro__} & {"ConnectTimeout", "PoolTimeout"})


def _transport_kind(exc: Exception) -> str | None:
    """'timeout' | 'connect' | 'disconnect' | 'transport' for httpx/httpx2 errors, else None.

    The SDK uses httpx2 when installed, httpx otherwise; both have the same hierarchy, so we match
    by class name along the MRO instead of importing either.
    """
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__.split(".", 1)[0]
    if module not in {"httpx", "httpx2", "httpcore", "httpcore2"} and "TransportError" not in names:
        return None
    if "TimeoutException" in names:
        return "timeout"
    if "ConnectError" in names:
        return "connect"
    if names & {"RemoteProtocolError", "ReadError", "WriteError"}:
        return "disconnect"
    if "TransportError" in names:
        return "transport"
    return None
